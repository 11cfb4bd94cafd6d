/* wal_batch - the writer's batches, from filling to durable: their
 * buffers, the chain each is committed with (wal.c's opening draws it),
 * the interval policy's fdatasync and timer, the completions that move
 * the durable LSN, and the poisoning that follows any failure.
 *
 * A batch is submitted to io_uring as one O_DIRECT write of whole blocks
 * with RWF_DSYNC (WAL_COMMIT_DIRECT, the server's default: stage() lays
 * it out; or the same write linked to an fdatasync: direct_fsync_op, and
 * direct_adapt for small batches, sync_op), or as a
 * page-cache write and an fdatasync (WAL_COMMIT_RING), and finished by
 * wal_on_done when wal_reap reaps it; or committed inline (WAL_COMMIT_INLINE:
 * the chain runs here with plain system calls, iochain_run). One batch is
 * in flight, or up to cfg.inflight of them (wal.h) when each starts on a
 * block boundary of the segment of those in flight: wal_pump submits the
 * oldest sealed one when it may go, and the completions retire the
 * batches in the order they were written, whatever order the disk
 * finishes them in: the durable LSN is the last record of the longest
 * run of written batches from the oldest. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log/durable.h"
#include "log/iochain.h"
#include "log/seg.h"
#include "log/wal.h"
#include "log/wal_int.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/fsutil.h"
#include "util/log.h"

/* ---------------------------------------------------------------------
 * Batches
 * ------------------------------------------------------------------- */

struct wal_batch *
wal_batch_new(struct wal *w, struct wal_seg *seg, uint64_t off)
{
	struct wal_batch *b = w->idle;

	if (b != NULL) {
		w->idle = b->next;
		w->nidle--;
	} else {
		b = calloc(1, sizeof(*b));
		if (b == NULL)
			return NULL;
		buf_init(&b->data);
	}
	b->req.kind = REQ_BATCH;
	b->seg = wal_seg_ref(seg);
	b->prev = NULL;
	b->off = off;
	b->first_lsn = w->next_lsn;
	b->last_lsn = w->next_lsn - 1;
	b->nrec = 0;
	b->opens = false;
	b->next = NULL;
	buf_reset(&b->data);
	return b;
}

void
wal_batch_free(struct wal *w, struct wal_batch *b)
{
	wal_seg_unref(b->seg);
	wal_seg_unref(b->prev);
	b->seg = b->prev = NULL;
	if (w->nidle < BATCH_KEEP && b->data.cap <= BATCH_BUF_KEEP &&
	    !buf_failed(&b->data)) {
		b->next = w->idle;
		w->idle = b;
		w->nidle++;
		return;
	}
	buf_fini(&b->data);
	free(b->dio);
	free(b);
}

static void
queue_push(struct wal *w, struct wal_batch *b)
{
	b->next = NULL;
	if (w->q_tail != NULL)
		w->q_tail->next = b;
	else
		w->q = b;
	w->q_tail = b;
}

/* Seals the filling batch. One that holds nothing (wal_prepare made it
 * for a record that then went to the next segment) is dropped: there is
 * nothing to write, and at a block boundary its write would be of no
 * bytes, which fails. */
void
wal_seal_fill(struct wal *w)
{
	if (w->fill == NULL)
		return;
	if (w->fill->nrec == 0 && !w->fill->opens)
		wal_batch_free(w, w->fill);
	else
		queue_push(w, w->fill);
	w->fill = NULL;
}

/* ---------------------------------------------------------------------
 * Failure
 * ------------------------------------------------------------------- */

void
wal_poison(struct wal *w, const char *what, const char *path, uint64_t off,
    uint64_t first_lsn, uint64_t last_lsn, int err)
{
	if (!w->poisoned)
		log_err("wal",
		    "log I/O failed; nothing more is acknowledged and writes "
		    "are refused; restart the node (recovery keeps the durable "
		    "prefix, `sluice-log verify` checks it) op=\"%s\" path=%s "
		    "offset=%" PRIu64 " from_lsn=%" PRIu64 " to_lsn=%" PRIu64
		    " error=\"%s\"",
		    what, path, off, first_lsn, last_lsn, sluice_strerror(err));
	w->poisoned = true;
	w->st.poisoned = true;
}

static const char *
op_name(enum iochain_kind k)
{
	switch (k) {
	case IOCHAIN_WRITE:
		return "write of";
	case IOCHAIN_FDATASYNC:
		return "fdatasync of";
	case IOCHAIN_FSYNC:
		return "fsync of the directory of";
	case IOCHAIN_RENAME:
		return "rename to";
	case IOCHAIN_TIMEOUT:
		return "timer for";
	}
	return "operation on";
}

/* ---------------------------------------------------------------------
 * Submitting
 * ------------------------------------------------------------------- */

static void
hist_add(struct wal *w, int64_t ns)
{
	int64_t us = ns / 1000;
	int i = 0;

	while (i < WAL_HIST_BUCKETS - 1 && us >= ((int64_t)16 << i))
		i++;
	w->st.commit_hist[i]++;
	w->st.commit_us_sum += (uint64_t)(us > 0 ? us : 0);
}

/* Group-commit batch sizes: bucket i counts batches of at most 2^i
 * records; the last one every larger batch. */
static void
batch_hist_add(struct wal *w, uint64_t nrec)
{
	int i = 0;

	while (i < WAL_HIST_BUCKETS - 1 && nrec > ((uint64_t)1 << i))
		i++;
	w->st.batch_hist[i]++;
	w->st.batch_records += nrec;
}

static void batch_done(struct wal *w, struct wal_batch *b);

static void
batch_started(struct wal *w, struct wal_batch *b)
{
	b->done = false;
	b->next = NULL;
	if (w->fly_tail != NULL)
		w->fly_tail->next = b;
	else
		w->fly = b;
	w->fly_tail = b;
	if (++w->nfly > 1)
		w->st.fly_beside++;
	if (w->nfly > w->st.fly_max_seen)
		w->st.fly_max_seen = w->nfly;
	w->st.batches++;
	if (b->nrec > w->st.batch_max)
		w->st.batch_max = b->nrec;
	batch_hist_add(w, b->nrec);
}

/* WAL_COMMIT_DIRECT: lays the batch into whole blocks, b->dio: the bytes
 * of the block where it starts that records fill already (from the last
 * batch's write, or read back after a start), its own bytes, zeros to the
 * end of its last block; and keeps its last block's records for the next
 * batch. *start and *len get what to write. Returns 0 or -errno. */
static int
stage(struct wal *w, struct wal_batch *b, uint64_t *start, size_t *len)
{
	size_t head = (size_t)(b->off % WAL_BLOCK), total, wlen;

	total = head + b->data.len;
	wlen = (total + WAL_BLOCK - 1) / WAL_BLOCK * WAL_BLOCK;
	if (b->dio_cap < wlen) {
		void *p;

		if (posix_memalign(&p, WAL_BLOCK, wlen) != 0)
			return -ENOMEM;
		free(b->dio);
		b->dio = p;
		b->dio_cap = wlen;
	}
	*start = b->off - head;
	if (head > 0 && w->tail_seg == b->seg && w->tail_off == *start &&
	    w->tail_len == head) {
		memcpy(b->dio, w->tail, head);
	} else if (head > 0) {
		int rc =
		    fs_pread_all(b->seg->fd, b->dio, head, (int64_t)*start);

		if (rc != 0)
			return rc;
	}
	memcpy(b->dio + head, b->data.data, b->data.len);
	memset(b->dio + total, 0, wlen - total);
	if (w->tail_seg != b->seg) {
		wal_seg_unref(w->tail_seg);
		w->tail_seg = wal_seg_ref(b->seg);
	}
	w->tail_len = total % WAL_BLOCK;
	w->tail_off = *start + wlen - (w->tail_len > 0 ? WAL_BLOCK : 0);
	memcpy(w->tail, b->dio + (w->tail_off - *start), w->tail_len);
	*len = wlen;
	return 0;
}

/* WAL_COMMIT_DIRECT under `always`: whether batch b is made durable by
 * a linked fdatasync op (io_uring's worker thread runs it) rather than
 * RWF_DSYNC (on a disk without FUA, a kernel worker bound to the CPU of
 * the interrupt finishes it). direct_adapt: the op while batches have
 * been small lately (a moving average of their records, weight 1/8, in
 * sixteenths), where the latency of one commit is all a client waits for
 * and the CPU the worker's hand-off costs is idle anyway. Not by b's own
 * size: under many clients the first batch after a commit is often
 * small (the first replies' clients are back), and the op's longer way
 * (the loop woken for the write, the worker for the flush) held up the
 * whole cohort behind it (0.65x the puts at 32 clients). */
static bool
sync_op(struct wal *w, const struct wal_batch *b)
{
	uint32_t *avg = &w->adapt_avg;
	uint64_t n = b->nrec < 1u << 20 ? b->nrec : 1u << 20;

	if (!w->cfg.direct_adapt)
		return w->cfg.direct_fsync_op;
	*avg = *avg - *avg / 8 + (uint32_t)(n * 16 / 8);
	return *avg <= WAL_ADAPT_SMALL * 16;
}

static int
submit_batch(struct wal *w, struct wal_batch *b)
{
	struct iochain *c = &b->req.chain;
	struct iochain_op *op;
	int rc;

	iochain_init(c);
	if (b->opens) {
		if (b->prev != NULL) {
			op = iochain_add(c, IOCHAIN_FDATASYNC, b->prev->fd);
			op->fault = FAULT_WAL_FSYNC;
		}
		op = iochain_add(c, IOCHAIN_RENAME, -1);
		op->from = b->seg->spare_path;
		op->to = b->seg->path;
		op->fault = FAULT_WAL_RENAME;
		op = iochain_add(c, IOCHAIN_FSYNC, w->dirfd);
		op->fault = FAULT_WAL_FSYNC;
	}
	if (w->direct) {
		/* One write of whole blocks, durable by itself: no
		 * fdatasync op, which io_uring would hand to a worker. */
		uint64_t start;
		size_t len;
		bool fsync_op;

		rc = b->seg->dfd < 0 ? -EBADF : stage(w, b, &start, &len);
		if (rc != 0) {
			wal_poison(w, "laying out the write of", b->seg->path,
			    b->off, b->first_lsn, b->last_lsn, rc);
			wal_batch_free(w, b);
			return SLUICE_ELOG;
		}
		op = iochain_add(c, IOCHAIN_WRITE, b->seg->dfd);
		op->buf = b->dio;
		op->len = len;
		op->off = start;
		op->align = w->dio_align;
		fsync_op = w->cfg.fsync == WAL_FSYNC_ALWAYS && sync_op(w, b);
		op->dsync = w->cfg.fsync == WAL_FSYNC_ALWAYS && !fsync_op;
		op->fault = FAULT_WAL_WRITE;
		if (fsync_op) {
			op = iochain_add(c, IOCHAIN_FDATASYNC, b->seg->fd);
			op->fault = FAULT_WAL_FSYNC;
			w->st.fsync_op_commits++;
		}
	} else {
		op = iochain_add(c, IOCHAIN_WRITE, b->seg->fd);
		op->buf = b->data.data;
		op->len = b->data.len;
		op->off = b->off;
		op->fault = FAULT_WAL_WRITE;
		if (w->cfg.fsync == WAL_FSYNC_ALWAYS) {
			op = iochain_add(c, IOCHAIN_FDATASYNC, b->seg->fd);
			op->fault = FAULT_WAL_FSYNC;
		}
	}
	if (w->cfg.commit == WAL_COMMIT_INLINE || (w->cached && !b->opens)) {
		/* On this thread: the disk's own latency, no hand-off to
		 * the kernel's io workers and back (see wal.h); cached, a
		 * copy into the page cache (wal_int.h). */
		iochain_run(c);
		batch_started(w, b);
		batch_done(w, b);
		return w->poisoned ? SLUICE_ELOG : 0;
	}
	rc = iochain_submit(&w->ring, c);
	if (rc != 0) {
		wal_poison(w, "submitting the write of", b->seg->path, b->off,
		    b->first_lsn, b->last_lsn, rc);
		return SLUICE_ELOG;
	}
	batch_started(w, b);
	return 0;
}

/* How many batches may be in flight at once: cfg.inflight for the direct
 * commit under `always` with RWF_DSYNC, one otherwise. */
unsigned
wal_fly_max(const struct wal *w)
{
	if (!w->direct || w->cfg.commit != WAL_COMMIT_DIRECT ||
	    w->cfg.fsync != WAL_FSYNC_ALWAYS || w->cfg.direct_fsync_op ||
	    w->cfg.direct_adapt)
		return 1;
	return w->cfg.inflight;
}

/* Whether batch b may be submitted now: nothing is in flight; or fewer
 * than wal_fly_max, and b shares no block with them (it starts on a block
 * boundary of their segment, and opens no segment: a new segment's
 * rename follows the old one's last write). */
static bool
may_fly(const struct wal *w, const struct wal_batch *b)
{
	if (w->nfly == 0)
		return true;
	return w->nfly < wal_fly_max(w) && !b->opens &&
	    b->seg == w->fly_tail->seg && b->off % WAL_BLOCK == 0;
}

/* Submits the oldest sealed batches while they may go (may_fly), and then
 * (with `take_fill`) seals and submits the filling one, ended first by a
 * REC_PAD where its successor should be free to go beside it
 * (wal_pad_fill). While the batches in flight are as many as may be, the
 * filling batch keeps growing: that is the group commit.
 *
 * A completion submits only sealed batches, never the filling one: the
 * clients whose records just became durable send their next requests in
 * the same event-loop turn, and the wal_submit at its end must find them
 * in the same batch as the records that waited. Submitting the waiting
 * ones alone would split the clients into two cohorts that take turns at
 * the disk, each fdatasync carrying half of them, for good. */
int
wal_pump(struct wal *w, bool take_fill)
{
	for (;;) {
		struct wal_batch *b;
		int rc;

		if (w->poisoned)
			return SLUICE_ELOG;
		if (take_fill && w->q == NULL && w->fill != NULL &&
		    (w->fill->nrec > 0 || w->fill->opens)) {
			if (!may_fly(w, w->fill)) {
				w->waited = true;
				return 0;
			}
			wal_pad_fill(w);
			wal_seal_fill(w);
			w->waited = false;
		}
		if (w->q == NULL || !may_fly(w, w->q))
			return 0;
		b = w->q;
		w->q = b->next;
		if (w->q == NULL)
			w->q_tail = NULL;
		b->next = NULL;
		rc = submit_batch(w, b);
		if (rc != 0)
			return rc;
	}
}

void
wal_submit_sync(struct wal *w)
{
	struct iochain *c = &w->sync.req.chain;
	struct iochain_op *op;
	int rc;

	if (w->sync.busy || w->wseg == NULL || w->poisoned ||
	    w->synced_lsn >= w->written_lsn)
		return;
	iochain_init(c);
	op = iochain_add(c, IOCHAIN_FDATASYNC, w->wseg->fd);
	op->fault = FAULT_WAL_FSYNC;
	rc = iochain_submit(&w->ring, c);
	if (rc != 0) {
		wal_poison(w, "submitting the fdatasync of", w->wseg->path, 0,
		    w->synced_lsn + 1, w->written_lsn, rc);
		return;
	}
	w->sync.seg = wal_seg_ref(w->wseg);
	w->sync.lsn = w->written_lsn;
	w->sync.busy = true;
}

static void
arm_timer(struct wal *w)
{
	struct iochain *c = &w->timer.req.chain;
	struct iochain_op *op;
	uint64_t ms = w->cfg.interval_ms;

	if (w->timer.armed || w->sync.busy || w->poisoned ||
	    w->synced_lsn >= w->written_lsn)
		return;
	iochain_init(c);
	op = iochain_add(c, IOCHAIN_TIMEOUT, -1);
	op->ts.tv_sec = (long long)(ms / 1000);
	op->ts.tv_nsec = (long long)(ms % 1000) * 1000000;
	if (iochain_submit(&w->ring, c) != 0) {
		/* No timer: sync now rather than leave data at risk. */
		wal_submit_sync(w);
		return;
	}
	w->timer.armed = true;
}

/* ---------------------------------------------------------------------
 * Completions
 * ------------------------------------------------------------------- */

/* Writes the synced LSN to DURABLE when it moved. A failed write is
 * logged once and costs only knowledge (durable.h). */
void
wal_mark(struct wal *w)
{
	int rc;

	w->mark_due = false;
	if (w->poisoned || w->synced_lsn <= w->mark.lsn || w->mark.fd < 0)
		return;
	rc = durable_note(&w->mark, w->synced_lsn, false, false);
	if (rc != 0 && !w->mark.failed) {
		w->mark.failed = true;
		log_warn("wal",
		    "cannot write the durable mark dir=%s error=\"%s\"; a "
		    "start after a crash knows less of what was synced",
		    w->dir, sluice_strerror(rc));
	}
}

/* After a completion that moved the synced LSN: the mark now, or, when
 * late, once the loop's replies are sent (wal_mark_late). */
static void
mark_synced(struct wal *w)
{
	if (w->mark_late)
		w->mark_due = true;
	else
		wal_mark(w);
}

void
wal_mark_late(struct wal *w, bool late)
{
	w->mark_late = late;
	if (!late && w->mark_due)
		wal_mark(w);
}

/* A batch written: the durable LSN moves over it once every batch
 * written before it is too. */
static void
retire(struct wal *w, struct wal_batch *b)
{
	if (b->opens && w->synced_lsn < b->first_lsn - 1)
		w->synced_lsn = b->first_lsn - 1; /* the old one was synced */
	if (b->nrec > 0)
		w->written_lsn = b->last_lsn;
	if (w->cfg.fsync == WAL_FSYNC_ALWAYS)
		w->synced_lsn = w->written_lsn;
	w->durable_lsn = w->written_lsn;
	if (w->wseg != b->seg) {
		wal_seg_unref(w->wseg);
		w->wseg = wal_seg_ref(b->seg);
	}
}

static void
batch_done(struct wal *w, struct wal_batch *b)
{
	struct iochain *c = &b->req.chain;
	bool moved = false;

	b->done = true;
	if (c->err != 0) {
		const struct iochain_op *op = &c->op[c->err_op];

		wal_poison(w, op_name(op->kind),
		    op->kind == IOCHAIN_FDATASYNC && b->prev != NULL &&
		            op->fd == b->prev->fd
		        ? b->prev->path
		        : b->seg->path,
		    op->kind == IOCHAIN_WRITE ? op->off + op->done : b->off,
		    b->first_lsn, b->last_lsn, c->err);
	} else if (!w->poisoned) {
		w->commit_ns = clock_mono_ns() - c->start_ns;
		hist_add(w, w->commit_ns);
		w->st.bytes += b->data.len;
		for (unsigned i = 0; i < c->nop; i++)
			if (c->op[i].kind == IOCHAIN_FDATASYNC ||
			    c->op[i].dsync)
				w->st.fsyncs++;
	}
	/* In the order written: a batch the disk finished first waits for
	 * those before it. After a failure nothing moves again. */
	while (w->fly != NULL && w->fly->done) {
		struct wal_batch *d = w->fly;

		w->fly = d->next;
		if (w->fly == NULL)
			w->fly_tail = NULL;
		w->nfly--;
		if (!w->poisoned) {
			retire(w, d);
			moved = true;
		}
		wal_batch_free(w, d);
	}
	if (w->poisoned)
		return;
	if (moved)
		mark_synced(w);
	if (w->cfg.fsync == WAL_FSYNC_INTERVAL)
		arm_timer(w);
	wal_pump(w, false);
}

static void
sync_done(struct wal *w)
{
	struct iochain *c = &w->sync.req.chain;

	w->sync.busy = false;
	if (c->err != 0) {
		wal_poison(w, "fdatasync of", w->sync.seg->path, 0,
		    w->synced_lsn + 1, w->sync.lsn, c->err);
	} else if (!w->poisoned) {
		w->st.fsyncs++;
		hist_add(w, clock_mono_ns() - c->start_ns);
		if (w->sync.lsn > w->synced_lsn)
			w->synced_lsn = w->sync.lsn;
		mark_synced(w);
		if (w->cfg.fsync == WAL_FSYNC_INTERVAL)
			arm_timer(w);
	}
	wal_seg_unref(w->sync.seg);
	w->sync.seg = NULL;
}

void
wal_on_done(struct iochain *c, void *arg)
{
	struct wal *w = arg;
	struct wal_req *r = (struct wal_req *)c;

	switch (r->kind) {
	case REQ_BATCH:
		batch_done(w, (struct wal_batch *)r);
		break;
	case REQ_SYNC:
		sync_done(w);
		break;
	case REQ_TIMER:
		w->timer.armed = false;
		wal_submit_sync(w);
		break;
	}
}
