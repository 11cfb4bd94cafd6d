/* wal - the log writer: group commit on io_uring, rotation into
 * preallocated segments, the fsync policies, space reservation.
 *
 * Threads. Everything here runs on the caller's thread (the server's
 * queue thread) except the preallocator, a background thread that makes
 * spare segment files ("NNNNNN.spare": allocated, zero-filled, synced) so
 * that rotation never waits for the disk. The two share only the spare
 * list, under `alloc.mu`, and the eventfd the preallocator signals.
 *
 * Batches. Appended records are copied into the filling batch, a
 * contiguous buffer destined for one file offset of one segment. At most
 * one batch is in flight; wal_submit seals the filling batch and, when
 * nothing is in flight, submits the oldest sealed batch as one chain:
 *
 *	[fdatasync old] [rename spare -> name] [fsync dir]   first batch
 *	                                                     of a segment
 *	write(batch)                                         always
 *	[fdatasync]                                          policy always
 *
 * How a batch is committed (cfg.commit). Inline, the default: the chain
 * runs on the caller's thread with plain system calls (ring_run), so
 * wal_submit returns with the batch durable (wal_fd is not signalled:
 * the caller looks at wal_durable_lsn); the caller's loop waits for the
 * disk meanwhile, and what arrives then is
 * the next batch. Through the ring: the chain is submitted to io_uring and
 * wal_reap finishes it; the loop goes on while the disk works, but an
 * fdatasync from io_uring runs on a kernel worker thread, and the
 * hand-off there and back costs more than the overlap gains on a small
 * machine (docs/benchmarks.md, log_bench --commit).
 *
 * A record never spans segments: when it does not fit, the filling batch
 * is sealed and a new one starts in the next segment with the segment's
 * header as its first 64 bytes. Batch states:
 *
 *	filling --wal_submit / rotation--> sealed --nothing in flight-->
 *	in flight --completion--> done (durable LSN moves) | failed (poison)
 *
 * Durability. Under `always` the durable LSN is the last record of the
 * last batch whose write and fdatasync completed. Under `interval` and
 * `never` it is the last record written; `interval` arms a timer (an
 * io_uring timeout) when a write leaves unsynced data and fdatasyncs when
 * it fires, so at most interval_ms of writes are at risk. The segment
 * being left is always fdatasynced, and the new name synced into the
 * directory, before the first write to a new segment: whatever the
 * policy, a segment that exists by name follows a complete one.
 *
 * The durable mark (durable.h). After each completion that moved the
 * synced LSN, it is written to the file DURABLE (a 64-byte pwrite, no
 * fsync: it names only what is synced already), and at a clean close,
 * with the CLEAN flag, synced. A start reads it to tell a torn write of
 * unacknowledged records from damage to acknowledged ones.
 *
 * Failure. Any failed write, fdatasync, rename or directory fsync poisons
 * the writer: logged once with path, offset and LSNs; the durable LSN
 * never moves again; appends fail with SLUICE_ELOG. An fdatasync is never
 * retried: the kernel may have dropped the pages it failed to write, so a
 * retry could report success for data that is gone.
 *
 * Space. `avail` is the room left in the current segment plus that of
 * the spares ready (each counted at its size less the header and
 * SPARE_SLACK, for the record that may not fit at a segment's end). The
 * reservation has two levels (wal_set_reserved): an append marked
 * WAL_NEW_WORK is refused with SLUICE_ENOSPC when it would leave avail
 * below floor + margin, one marked WAL_RETRY when it would leave it below
 * the floor; others may use all of it. The preallocator is asked for
 * enough spares to cover floor + margin, plus cfg->prealloc ahead. With
 * cfg->max_bytes, the segment and spare files together stay within it:
 * a spare that would pass it fails with -ENOSPC, as on a full disk. */
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
#include "log/ring.h"
#include "log/seg.h"
#include "log/wal.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/fsutil.h"
#include "util/log.h"

enum {
	RING_ENTRIES = 32,
	SPARE_SLACK = 64 << 10, /* room a segment's end may waste (at
	                         * most an eighth of a segment) */
	ALLOC_RETRY_MS = 1000,  /* after a failed preallocation; and new work
	                         * allocates nothing itself for as long */
	ALLOC_INLINE_MAX = 64,  /* spares one append may allocate itself */
	CLOSE_TIMEOUT_MS = 30000,
	BATCH_KEEP = 4,           /* idle batch buffers kept */
	BATCH_BUF_KEEP = 4 << 20, /* larger buffers are freed when idle */
};

/* ---------------------------------------------------------------------
 * Segments
 * ------------------------------------------------------------------- */

/* An open segment file: the one being written, one being left, or a
 * spare. Referenced by the writer and by the batches that write to it. */
struct wal_seg {
	int fd;
	int refs;
	uint64_t first_lsn; /* 0 while a spare */
	uint64_t size;
	char path[LOGDIR_PATH_MAX];       /* its name in the log */
	char spare_path[LOGDIR_PATH_MAX]; /* its name while a spare */
	struct wal_seg *next;             /* spare list */
};

static struct wal_seg *
seg_ref(struct wal_seg *s)
{
	if (s != NULL)
		s->refs++;
	return s;
}

static void
seg_unref(struct wal_seg *s)
{
	if (s == NULL || --s->refs > 0)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

/* ---------------------------------------------------------------------
 * Requests on the ring
 * ------------------------------------------------------------------- */

enum wal_req_kind { REQ_BATCH, REQ_SYNC, REQ_TIMER };

struct wal_req {
	struct ring_chain chain; /* first: the ring hands it back */
	enum wal_req_kind kind;
};

struct wal_batch {
	struct wal_req req;
	struct buf data;
	struct wal_seg *seg;  /* written to */
	struct wal_seg *prev; /* the segment it closes, when it opens one */
	uint64_t off;         /* file offset of data[0] */
	uint64_t first_lsn;   /* of its first record */
	uint64_t last_lsn;    /* of its last record */
	uint64_t nrec;
	bool opens; /* starts with the segment header */
	struct wal_batch *next;
};

struct wal_sync {
	struct wal_req req;
	struct wal_seg *seg;
	uint64_t lsn; /* synced when it completes */
	bool busy;
};

struct wal_timer {
	struct wal_req req;
	bool armed;
};

/* ---------------------------------------------------------------------
 * The writer
 * ------------------------------------------------------------------- */

struct wal_alloc {
	pthread_t thr;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;   /* wakes the thread */
	pthread_cond_t done; /* wakes wal_prealloc_wait */
	/* Under mu: */
	unsigned want; /* spares wanted ready */
	struct wal_seg *ready;
	struct wal_seg *ready_tail;
	bool busy;
	bool stop;
	int err; /* the last attempt's error, 0 */
	int64_t retry_at;
	unsigned seq;
	uint64_t failures;
	uint64_t bytes;     /* segment and spare files in the directory */
	bool capped;        /* the last failure was cfg.max_bytes's */
	atomic_uint nready; /* read without the lock by the writer */
};

struct wal {
	struct wal_config cfg;
	char dir[LOGDIR_PATH_MAX];
	int dirfd;
	struct ring ring;

	struct wal_seg *cur; /* the segment records go into */
	uint64_t fill_off;   /* where the next record goes in it */
	uint64_t next_lsn;
	uint64_t epoch;
	uint64_t floor;  /* wal_set_reserved: WAL_RETRY leaves this much */
	uint64_t margin; /* and WAL_NEW_WORK this much more */
	bool refusing;   /* wal_refusing */
	uint64_t refused_size; /* the new record first refused: until it
	                        * would fit, new work waits */
	unsigned want;         /* the spares last asked of the preallocator */
	int64_t inline_failed_ms; /* mono ms of the last failed alloc_inline */

	struct wal_batch *fill; /* the batch being filled, or NULL */
	struct wal_batch *q;    /* sealed, oldest first */
	struct wal_batch *q_tail;
	struct wal_batch *inflight;
	struct wal_batch *idle; /* recycled */
	unsigned nidle;

	struct wal_seg *wseg; /* segment of the last completed write */
	struct wal_sync sync;
	struct wal_timer timer;

	uint64_t written_lsn;
	uint64_t synced_lsn;
	uint64_t durable_lsn;
	struct durable mark; /* DURABLE: the synced LSN, for a later start */
	bool poisoned;
	bool retry_logged; /* a refused WAL_RETRY was logged */

	struct wal_alloc alloc;
	struct wal_stats st;
};

/* ---------------------------------------------------------------------
 * Preallocator thread
 * ------------------------------------------------------------------- */

static void
signal_efd(int efd)
{
	uint64_t one = 1;

	if (write(efd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow in practice; a failed
		 * wake-up only delays taking the spare up. */
	}
}

/* Counts `size` more bytes of files in the directory, or refuses them
 * (-ENOSPC) when cfg.max_bytes would be passed. Called without the lock. */
static int
files_add(struct wal *w, uint64_t size)
{
	struct wal_alloc *a = &w->alloc;
	int rc = 0;

	pthread_mutex_lock(&a->mu);
	if (w->cfg.max_bytes != 0 &&
	    (a->bytes > w->cfg.max_bytes || size > w->cfg.max_bytes - a->bytes))
		rc = -ENOSPC;
	else
		a->bytes += size;
	a->capped = rc != 0;
	pthread_mutex_unlock(&a->mu);
	return rc;
}

static void
files_sub(struct wal *w, uint64_t size)
{
	struct wal_alloc *a = &w->alloc;

	pthread_mutex_lock(&a->mu);
	a->bytes -= size < a->bytes ? size : a->bytes;
	pthread_mutex_unlock(&a->mu);
}

/* Makes one spare. Called without the lock. */
static int
make_spare(struct wal *w, unsigned seq, bool zero_fill, struct wal_seg **out)
{
	struct wal_seg *s;
	char name[32];
	int rc;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->fd = -1;
	s->refs = 1;
	s->size = w->cfg.seg_size;
	snprintf(name, sizeof(name), "%06u.spare", seq);
	rc = fs_join(s->spare_path, sizeof(s->spare_path), w->dir, name);
	if (rc == 0)
		rc = files_add(w, s->size);
	if (rc != 0) {
		free(s);
		return rc;
	}
	rc = seg_prealloc(s->spare_path, s->size, zero_fill, &s->fd);
	if (rc != 0) {
		files_sub(w, s->size);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

static void *
alloc_main(void *arg)
{
	struct wal *w = arg;
	struct wal_alloc *a = &w->alloc;

	pthread_mutex_lock(&a->mu);
	while (!a->stop) {
		int64_t now = clock_now_ms();
		struct wal_seg *s = NULL;
		unsigned seq;
		int rc;

		if (atomic_load(&a->nready) >= a->want) {
			a->err = 0; /* it has what it wants: not short */
			pthread_cond_wait(&a->cv, &a->mu);
			continue;
		}
		if (a->err != 0 && now < a->retry_at) {
			struct timespec ts = {
				.tv_sec = a->retry_at / 1000,
				.tv_nsec = (a->retry_at % 1000) * 1000000,
			};

			pthread_cond_timedwait(&a->cv, &a->mu, &ts);
			continue;
		}
		a->busy = true;
		seq = a->seq++;
		pthread_mutex_unlock(&a->mu);
		rc = make_spare(w, seq, !w->cfg.no_zero_fill, &s);
		pthread_mutex_lock(&a->mu);
		a->busy = false;
		if (rc == 0) {
			if (a->ready_tail != NULL)
				a->ready_tail->next = s;
			else
				a->ready = s;
			a->ready_tail = s;
			atomic_fetch_add(&a->nready, 1);
			if (a->err != 0)
				log_info("wal",
				    "preallocation works again dir=%s", w->dir);
			a->err = 0;
		} else {
			if (a->err == 0 && a->capped)
				log_warn("wal",
				    "cannot preallocate a segment within "
				    "--max-log-bytes; new work will be refused "
				    "when the reserve runs low dir=%s "
				    "bytes=%" PRIu64 " max_bytes=%" PRIu64,
				    w->dir, w->cfg.seg_size, w->cfg.max_bytes);
			else if (a->err == 0)
				log_warn("wal",
				    "cannot preallocate a segment; new work "
				    "will be refused when the reserve runs low "
				    "dir=%s bytes=%" PRIu64 " error=\"%s\"",
				    w->dir, w->cfg.seg_size,
				    sluice_strerror(rc));
			a->err = rc;
			a->failures++;
			a->retry_at = clock_now_ms() + ALLOC_RETRY_MS;
		}
		pthread_cond_broadcast(&a->done);
		signal_efd(ring_fd(&w->ring));
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* Room counted for a spare: what it holds, less the end a record too
 * large for the rest may leave unused. */
static uint64_t
spare_cap(const struct wal *w)
{
	uint64_t slack = w->cfg.seg_size / 8;

	if (slack > SPARE_SLACK)
		slack = SPARE_SLACK;
	return w->cfg.seg_size - SEG_HDR_SIZE - slack;
}

/* Spares wanted: the configured lead, plus enough to hold the
 * reservation beyond what the current segment has left. */
static void
alloc_update_want(struct wal *w)
{
	uint64_t cap = spare_cap(w);
	uint64_t left = w->cur->size - w->fill_off;
	uint64_t reserved = w->floor + w->margin;
	uint64_t need = 0;

	if (reserved > left)
		need = (reserved - left + cap - 1) / cap;
	if (need > 1u << 16)
		need = 1u << 16;
	if (w->want == w->cfg.prealloc + need)
		return; /* as asked already: no lock */
	w->want = w->cfg.prealloc + (unsigned)need;
	pthread_mutex_lock(&w->alloc.mu);
	w->alloc.want = w->want;
	pthread_cond_signal(&w->alloc.cv);
	pthread_mutex_unlock(&w->alloc.mu);
}

static struct wal_seg *
alloc_take(struct wal *w)
{
	struct wal_alloc *a = &w->alloc;
	struct wal_seg *s;

	pthread_mutex_lock(&a->mu);
	s = a->ready;
	if (s != NULL) {
		a->ready = s->next;
		if (a->ready == NULL)
			a->ready_tail = NULL;
		s->next = NULL;
		atomic_fetch_sub(&a->nready, 1);
		pthread_cond_signal(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	return s;
}

/* Makes a spare on the writer's thread when the preallocator is behind:
 * fallocate only, no zero fill, so it costs an extent allocation rather
 * than a write of the whole segment (its first fdatasyncs are slower,
 * docs/benchmarks.md). An append that the disk has room for never fails
 * because the background thread was slow. Returns 0 or the error. */
static int
alloc_inline(struct wal *w)
{
	struct wal_alloc *a = &w->alloc;
	struct wal_seg *s;
	unsigned seq;
	int rc;

	pthread_mutex_lock(&a->mu);
	seq = a->seq++;
	pthread_mutex_unlock(&a->mu);
	rc = make_spare(w, seq, false, &s);
	if (rc != 0) {
		w->inline_failed_ms = clock_mono_ns() / 1000000;
		return rc;
	}
	pthread_mutex_lock(&a->mu);
	if (a->ready_tail != NULL)
		a->ready_tail->next = s;
	else
		a->ready = s;
	a->ready_tail = s;
	atomic_fetch_add(&a->nready, 1);
	pthread_mutex_unlock(&a->mu);
	w->st.inline_allocs++;
	return 0;
}

static void
alloc_stop(struct wal *w)
{
	struct wal_alloc *a = &w->alloc;
	struct wal_seg *s;

	if (!a->started)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thr, NULL);
	a->started = false;
	/* Spares not used are removed: the next open makes fresh ones. */
	while ((s = a->ready) != NULL) {
		a->ready = s->next;
		if (unlink(s->spare_path) == 0)
			a->bytes -= s->size < a->bytes ? s->size : a->bytes;
		seg_unref(s);
	}
	a->ready_tail = NULL;
	atomic_store(&a->nready, 0);
}

/* ---------------------------------------------------------------------
 * Batches
 * ------------------------------------------------------------------- */

static struct wal_batch *
batch_new(struct wal *w, struct wal_seg *seg, uint64_t off)
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
	b->seg = seg_ref(seg);
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

static void
batch_free(struct wal *w, struct wal_batch *b)
{
	seg_unref(b->seg);
	seg_unref(b->prev);
	b->seg = b->prev = NULL;
	if (w->nidle < BATCH_KEEP && b->data.cap <= BATCH_BUF_KEEP &&
	    !buf_failed(&b->data)) {
		b->next = w->idle;
		w->idle = b;
		w->nidle++;
		return;
	}
	buf_free(&b->data);
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

static void
seal_fill(struct wal *w)
{
	if (w->fill == NULL)
		return;
	queue_push(w, w->fill);
	w->fill = NULL;
}

/* ---------------------------------------------------------------------
 * Failure
 * ------------------------------------------------------------------- */

static void
poison(struct wal *w, const char *what, const char *path, uint64_t off,
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
op_name(enum ring_kind k)
{
	switch (k) {
	case RING_WRITE:
		return "write of";
	case RING_FDATASYNC:
		return "fdatasync of";
	case RING_FSYNC:
		return "fsync of the directory of";
	case RING_RENAME:
		return "rename to";
	case RING_TIMEOUT:
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
	w->inflight = b;
	w->st.batches++;
	if (b->nrec > w->st.batch_max)
		w->st.batch_max = b->nrec;
	batch_hist_add(w, b->nrec);
}

static int
submit_batch(struct wal *w, struct wal_batch *b)
{
	struct ring_chain *c = &b->req.chain;
	struct ring_op *op;
	int rc;

	ring_chain_init(c);
	if (b->opens) {
		if (b->prev != NULL) {
			op = ring_chain_add(c, RING_FDATASYNC, b->prev->fd);
			op->fault = FAULT_WAL_FSYNC;
		}
		op = ring_chain_add(c, RING_RENAME, -1);
		op->from = b->seg->spare_path;
		op->to = b->seg->path;
		op->fault = FAULT_WAL_RENAME;
		op = ring_chain_add(c, RING_FSYNC, w->dirfd);
		op->fault = FAULT_WAL_FSYNC;
	}
	op = ring_chain_add(c, RING_WRITE, b->seg->fd);
	op->buf = b->data.data;
	op->len = b->data.len;
	op->off = b->off;
	op->fault = FAULT_WAL_WRITE;
	if (w->cfg.fsync == WAL_FSYNC_ALWAYS) {
		op = ring_chain_add(c, RING_FDATASYNC, b->seg->fd);
		op->fault = FAULT_WAL_FSYNC;
	}
	if (w->cfg.commit != WAL_COMMIT_RING) {
		/* On this thread: the disk's own latency, no hand-off to
		 * the kernel's io workers and back (see wal.h). */
		ring_run(c);
		batch_started(w, b);
		batch_done(w, b);
		return w->poisoned ? SLUICE_ELOG : 0;
	}
	rc = ring_submit(&w->ring, c);
	if (rc != 0) {
		poison(w, "submitting the write of", b->seg->path, b->off,
		    b->first_lsn, b->last_lsn, rc);
		return SLUICE_ELOG;
	}
	batch_started(w, b);
	return 0;
}

/* When nothing is in flight, submits the oldest sealed batch, or else
 * (with `take_fill`) seals and submits the filling one. While a batch is
 * in flight the filling batch keeps growing: that is the group commit.
 *
 * A completion submits only sealed batches, never the filling one: the
 * clients whose records just became durable send their next requests in
 * the same event-loop turn, and the wal_submit at its end must find them
 * in the same batch as the records that waited. Submitting the waiting
 * ones alone would split the clients into two cohorts that take turns at
 * the disk, each fdatasync carrying half of them, for good. */
static int
pump(struct wal *w, bool take_fill)
{
	struct wal_batch *b;

	if (w->poisoned)
		return SLUICE_ELOG;
	if (w->inflight != NULL)
		return 0;
	if (take_fill && w->q == NULL && w->fill != NULL &&
	    (w->fill->nrec > 0 || w->fill->opens))
		seal_fill(w);
	if (w->q == NULL)
		return 0;
	b = w->q;
	w->q = b->next;
	if (w->q == NULL)
		w->q_tail = NULL;
	b->next = NULL;
	return submit_batch(w, b);
}

static void
submit_sync(struct wal *w)
{
	struct ring_chain *c = &w->sync.req.chain;
	struct ring_op *op;
	int rc;

	if (w->sync.busy || w->wseg == NULL || w->poisoned ||
	    w->synced_lsn >= w->written_lsn)
		return;
	ring_chain_init(c);
	op = ring_chain_add(c, RING_FDATASYNC, w->wseg->fd);
	op->fault = FAULT_WAL_FSYNC;
	rc = ring_submit(&w->ring, c);
	if (rc != 0) {
		poison(w, "submitting the fdatasync of", w->wseg->path, 0,
		    w->synced_lsn + 1, w->written_lsn, rc);
		return;
	}
	w->sync.seg = seg_ref(w->wseg);
	w->sync.lsn = w->written_lsn;
	w->sync.busy = true;
}

static void
arm_timer(struct wal *w)
{
	struct ring_chain *c = &w->timer.req.chain;
	struct ring_op *op;
	uint64_t ms = w->cfg.interval_ms;

	if (w->timer.armed || w->sync.busy || w->poisoned ||
	    w->synced_lsn >= w->written_lsn)
		return;
	ring_chain_init(c);
	op = ring_chain_add(c, RING_TIMEOUT, -1);
	op->ts.tv_sec = (long long)(ms / 1000);
	op->ts.tv_nsec = (long long)(ms % 1000) * 1000000;
	if (ring_submit(&w->ring, c) != 0) {
		/* No timer: sync now rather than leave data at risk. */
		submit_sync(w);
		return;
	}
	w->timer.armed = true;
}

/* ---------------------------------------------------------------------
 * Completions
 * ------------------------------------------------------------------- */

/* Writes the synced LSN to DURABLE when it moved. A failed write is
 * logged once and costs only knowledge (durable.h). */
static void
mark_synced(struct wal *w)
{
	int rc;

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

static void
batch_done(struct wal *w, struct wal_batch *b)
{
	struct ring_chain *c = &b->req.chain;

	w->inflight = NULL;
	if (c->err != 0) {
		const struct ring_op *op = &c->op[c->err_op];

		poison(w, op_name(op->kind),
		    op->kind == RING_FDATASYNC && b->prev != NULL &&
		            op->fd == b->prev->fd
		        ? b->prev->path
		        : b->seg->path,
		    op->kind == RING_WRITE ? b->off + op->done : b->off,
		    b->first_lsn, b->last_lsn, c->err);
		batch_free(w, b);
		return;
	}
	if (w->poisoned) {
		batch_free(w, b);
		return;
	}
	hist_add(w, clock_mono_ns() - c->start_ns);
	w->st.bytes += b->data.len;
	for (unsigned i = 0; i < c->nop; i++)
		if (c->op[i].kind == RING_FDATASYNC)
			w->st.fsyncs++;
	if (b->opens && w->synced_lsn < b->first_lsn - 1)
		w->synced_lsn = b->first_lsn - 1; /* the old one was synced */
	if (b->nrec > 0)
		w->written_lsn = b->last_lsn;
	if (w->cfg.fsync == WAL_FSYNC_ALWAYS)
		w->synced_lsn = w->written_lsn;
	w->durable_lsn = w->written_lsn;
	mark_synced(w);
	if (w->wseg != b->seg) {
		seg_unref(w->wseg);
		w->wseg = seg_ref(b->seg);
	}
	batch_free(w, b);
	if (w->cfg.fsync == WAL_FSYNC_INTERVAL)
		arm_timer(w);
	pump(w, false);
}

static void
sync_done(struct wal *w)
{
	struct ring_chain *c = &w->sync.req.chain;

	w->sync.busy = false;
	if (c->err != 0) {
		poison(w, "fdatasync of", w->sync.seg->path, 0,
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
	seg_unref(w->sync.seg);
	w->sync.seg = NULL;
}

static void
on_done(struct ring_chain *c, void *arg)
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
		submit_sync(w);
		break;
	}
}

/* ---------------------------------------------------------------------
 * Opening
 * ------------------------------------------------------------------- */

/* Removes spares an earlier run left: they may hold data of a rename
 * that never reached the disk. */
static int
remove_stale_spares(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		char path[LOGDIR_PATH_MAX];

		if (n < 7 || strcmp(e->d_name + n - 6, ".spare") != 0)
			continue;
		if (fs_join(path, sizeof(path), dir, e->d_name) == 0)
			unlink(path);
	}
	closedir(d);
	return 0;
}

/* The bytes the segments listed in `ld` take (their sizes; a file that
 * cannot be read counts as one default segment). */
static uint64_t
segments_bytes(const char *dir, const struct logdir *ld)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < ld->n; i++) {
		char path[LOGDIR_PATH_MAX];
		struct stat st;

		if (seg_path(path, sizeof(path), dir, ld->first[i]) == 0 &&
		    stat(path, &st) == 0)
			sum += (uint64_t)st.st_size;
		else
			sum += SEG_SIZE_DEFAULT;
	}
	return sum;
}

/* Creates the first segment of a log, synchronously. */
static int
create_first(struct wal *w, uint64_t first_lsn, struct wal_seg **out)
{
	struct seg_hdr h = {
		.version = SEG_VERSION,
		.hdr_size = SEG_HDR_SIZE,
		.first_lsn = first_lsn,
		.epoch = w->epoch,
		.created = clock_now_ms(),
		.size = w->cfg.seg_size,
	};
	uint8_t hdr[SEG_HDR_SIZE];
	struct wal_seg *s;
	int rc;

	rc = make_spare(w, w->alloc.seq++, !w->cfg.no_zero_fill, &s);
	if (rc != 0)
		return rc;
	s->first_lsn = first_lsn;
	rc = seg_path(s->path, sizeof(s->path), w->dir, first_lsn);
	if (rc != 0)
		goto fail;
	seg_hdr_encode(hdr, &h);
	rc = fs_pwrite_all(s->fd, hdr, sizeof(hdr), 0);
	if (rc == 0 && fdatasync(s->fd) < 0)
		rc = -errno;
	if (rc == 0 && rename(s->spare_path, s->path) < 0)
		rc = -errno;
	if (rc == 0)
		rc = fs_sync_dir(w->dir);
	if (rc != 0)
		goto fail;
	*out = s;
	return 0;

fail:
	unlink(s->spare_path);
	seg_unref(s);
	return rc;
}

/* Opens the last segment of an existing log to continue in it. */
static int
open_last(struct wal *w, const struct logdir_end *end, struct wal_seg **out)
{
	struct wal_seg *s;
	int rc;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->refs = 1;
	s->first_lsn = end->seg_first_lsn;
	s->size = end->seg_size;
	rc = seg_path(s->path, sizeof(s->path), w->dir, s->first_lsn);
	if (rc != 0)
		goto fail;
	s->fd = open(s->path, O_RDWR | O_CLOEXEC);
	if (s->fd < 0) {
		rc = -errno;
		goto fail;
	}
	/* What a crashed process left in the page cache is on disk from
	 * here on, so it may be counted durable. */
	if (fdatasync(s->fd) < 0) {
		rc = -errno;
		close(s->fd);
		goto fail;
	}
	*out = s;
	return 0;

fail:
	free(s);
	return rc;
}

static int
check_config(struct wal_config *c, const struct logdir_end *end)
{
	if (c->dir == NULL || c->dir[0] == '\0')
		return SLUICE_EINVAL;
	if (c->fsync != WAL_FSYNC_ALWAYS && c->fsync != WAL_FSYNC_INTERVAL &&
	    c->fsync != WAL_FSYNC_NEVER)
		return SLUICE_EINVAL;
	if (c->seg_size == 0)
		c->seg_size = SEG_SIZE_DEFAULT;
	if (c->seg_size % SEG_ALIGN != 0 || c->seg_size < SEG_SIZE_MIN)
		return SLUICE_EINVAL;
	if (c->interval_ms == 0)
		c->interval_ms = 1;
	if (c->prealloc == 0)
		c->prealloc = 1;
	if (end != NULL && end->seg_first_lsn != 0 &&
	    (end->offset < SEG_HDR_SIZE || end->offset % REC_ALIGN != 0 ||
	        end->offset > end->seg_size ||
	        end->last_lsn + 1 < end->seg_first_lsn))
		return SLUICE_EINVAL;
	return 0;
}

int
wal_open(const struct wal_config *cfg, const struct logdir_end *end,
    struct wal **out)
{
	struct logdir ld;
	struct wal *w;
	int rc;

	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	w->cfg = *cfg;
	w->dirfd = -1;
	w->mark.fd = -1;
	rc = check_config(&w->cfg, end);
	if (rc != 0)
		goto fail;
	if (snprintf(w->dir, sizeof(w->dir), "%s", cfg->dir) >=
	    (int)sizeof(w->dir)) {
		rc = -ENAMETOOLONG;
		goto fail;
	}
	w->cfg.dir = w->dir;
	pthread_mutex_init(&w->alloc.mu, NULL);
	pthread_cond_init(&w->alloc.cv, NULL);
	pthread_cond_init(&w->alloc.done, NULL);
	w->sync.req.kind = REQ_SYNC;
	w->timer.req.kind = REQ_TIMER;

	rc = fs_mkdir_p(w->dir);
	if (rc == 0)
		rc = remove_stale_spares(w->dir);
	if (rc != 0)
		goto fail;
	w->dirfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = ring_open(&w->ring, RING_ENTRIES);
	if (rc != 0) {
		log_err("wal", "io_uring setup failed error=\"%s\"",
		    sluice_strerror(rc));
		goto fail;
	}
	w->epoch = end != NULL && end->epoch != 0 ? end->epoch : 1;
	if (end != NULL && end->seg_first_lsn != 0) {
		w->next_lsn = end->last_lsn + 1;
		w->fill_off = end->offset;
		rc = open_last(w, end, &w->cur);
	} else {
		w->next_lsn = end != NULL ? end->last_lsn + 1 : 1;
		w->fill_off = SEG_HDR_SIZE;
		rc = create_first(w, w->next_lsn, &w->cur);
	}
	if (rc != 0) {
		log_err("wal", "cannot open the log dir=%s error=\"%s\"",
		    w->dir, sluice_strerror(rc));
		goto fail;
	}
	w->written_lsn = w->synced_lsn = w->durable_lsn = w->next_lsn - 1;
	/* Not clean from here on: synced before the first record. */
	rc = durable_open(&w->mark, w->dir, w->synced_lsn);
	if (rc != 0) {
		/* A full disk may not have the block for a new file: the log
		 * still works, a later start only knows less. */
		log_warn("wal",
		    "cannot write the durable mark dir=%s error=\"%s\"; the "
		    "log works without it, but a start after a crash cannot "
		    "tell damage at its end from a torn write",
		    w->dir, sluice_strerror(rc));
		w->mark.fd = -1;
		w->mark.failed = true;
	}
	w->wseg = seg_ref(w->cur);
	rc = logdir_list(w->dir, &ld);
	if (rc != 0)
		goto fail;
	w->st.segments = ld.n;
	/* No spare exists yet: the files counted are the segments. */
	w->alloc.bytes = segments_bytes(w->dir, &ld);
	logdir_destroy(&ld);

	w->alloc.want = w->want = w->cfg.prealloc;
	rc = pthread_create(&w->alloc.thr, NULL, alloc_main, w);
	if (rc != 0) {
		rc = -rc;
		goto fail;
	}
	w->alloc.started = true;
	*out = w;
	return 0;

fail:
	durable_close(&w->mark);
	seg_unref(w->wseg);
	seg_unref(w->cur);
	ring_close(&w->ring);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w);
	return rc;
}

/* ---------------------------------------------------------------------
 * Appending
 * ------------------------------------------------------------------- */

/* Starts the next segment with a spare: seals the filling batch and
 * opens a batch whose first bytes are the new header. */
static int
rotate(struct wal *w)
{
	struct seg_hdr h = {
		.version = SEG_VERSION,
		.hdr_size = SEG_HDR_SIZE,
		.first_lsn = w->next_lsn,
		.epoch = w->epoch,
		.created = clock_now_ms(),
	};
	struct wal_batch *b;
	struct wal_seg *s;
	uint8_t *p;

	s = alloc_take(w);
	if (s == NULL && alloc_inline(w) == 0)
		s = alloc_take(w);
	if (s == NULL)
		return SLUICE_ENOSPC;
	s->first_lsn = w->next_lsn;
	h.size = s->size;
	if (seg_path(s->path, sizeof(s->path), w->dir, s->first_lsn) != 0)
		goto fail;
	b = batch_new(w, s, 0);
	if (b == NULL)
		goto fail;
	p = buf_extend(&b->data, SEG_HDR_SIZE);
	if (p == NULL) {
		batch_free(w, b);
		goto fail;
	}
	seg_hdr_encode(p, &h);
	b->opens = true;
	b->prev = seg_ref(w->cur);
	seal_fill(w);
	w->fill = b;
	seg_unref(w->cur);
	w->cur = s; /* the writer's reference is the spare's */
	w->fill_off = SEG_HDR_SIZE;
	w->st.rotations++;
	w->st.segments++;
	alloc_update_want(w);
	return 0;

fail:
	/* Out of memory: the spare goes back to be used next time. */
	pthread_mutex_lock(&w->alloc.mu);
	s->first_lsn = 0;
	s->next = w->alloc.ready;
	w->alloc.ready = s;
	if (w->alloc.ready_tail == NULL)
		w->alloc.ready_tail = s;
	atomic_fetch_add(&w->alloc.nready, 1);
	pthread_mutex_unlock(&w->alloc.mu);
	return -ENOMEM;
}

/* Bytes available now: the rest of the current segment and the spares
 * ready. */
static uint64_t
avail_now(const struct wal *w)
{
	return w->cur->size - w->fill_off +
	    atomic_load(&((struct wal *)w)->alloc.nready) * spare_cap(w);
}

/* Whether a record of `size` bytes fits and leaves `keep` available. A
 * record that does not fit in the current segment wastes its rest. */
static bool
room_for(const struct wal *w, uint64_t size, uint64_t keep)
{
	uint64_t left = w->cur->size - w->fill_off;
	uint64_t avail = avail_now(w);
	uint64_t use = w->fill_off + size <= w->cur->size ? size : left + size;

	return avail >= use && avail - use >= keep;
}

/* Whether this append may fallocate a spare itself: not for reserved
 * work within ALLOC_RETRY_MS of a failure (the disk is full; trying on
 * every refused put would cost a fallocate each). */
static bool
may_alloc_inline(struct wal *w)
{
	int64_t now = clock_mono_ns() / 1000000;
	bool failing;

	if (w->inline_failed_ms != 0 &&
	    now - w->inline_failed_ms < ALLOC_RETRY_MS)
		return false;
	pthread_mutex_lock(&w->alloc.mu);
	failing = w->alloc.err != 0;
	pthread_mutex_unlock(&w->alloc.mu);
	return !failing;
}

static int
refuse(struct wal *w, unsigned flags, uint64_t size, const char *why)
{
	w->st.enospc++;
	if ((flags & WAL_NEW_WORK) && !w->refusing)
		log_warn("wal",
		    "refusing new work; what is accepted can still be taken, "
		    "acked, failed and deleted dir=%s why=\"%s\" "
		    "reserved=%" PRIu64 " available=%" PRIu64,
		    w->dir, why, w->floor + w->margin, avail_now(w));
	else if (!(flags & WAL_NEW_WORK) && !w->retry_logged)
		log_warn("wal",
		    "refusing a retry (a retake, touch or kick) while the log "
		    "is short of space dir=%s why=\"%s\" reserved=%" PRIu64
		    " available=%" PRIu64,
		    w->dir, why, w->floor, avail_now(w));
	if ((flags & WAL_NEW_WORK) && !w->refusing)
		w->refused_size = size;
	if (flags & WAL_NEW_WORK)
		w->refusing = true;
	else
		w->retry_logged = true;
	return SLUICE_ENOSPC;
}

static void
accepting_again(struct wal *w)
{
	w->refusing = false;
	log_info("wal",
	    "accepting new work again dir=%s reserved=%" PRIu64
	    " available=%" PRIu64,
	    w->dir, w->floor + w->margin, avail_now(w));
}

static int
append(struct wal *w, uint16_t type, int64_t time, uint64_t epoch,
    const void *body, size_t len, unsigned flags, uint64_t *lsn)
{
	struct rec_hdr h;
	size_t size;
	uint8_t *dst;
	bool fits;
	int rc;

	if (w->poisoned)
		return SLUICE_ELOG;
	if (type == 0 || (flags & ~(unsigned)(WAL_NEW_WORK | WAL_RETRY)) != 0 ||
	    flags == (WAL_NEW_WORK | WAL_RETRY))
		return SLUICE_EINVAL;
	if (len > REC_MAX_BODY ||
	    rec_size(len) > w->cfg.seg_size - SEG_HDR_SIZE)
		return SLUICE_ETOOBIG;
	size = rec_size(len);
	/* New work and retries must leave their part of the reservation
	 * covered by space that is allocated now; when the preallocator is
	 * behind, allocate here. */
	if (flags != 0) {
		uint64_t keep =
		    w->floor + (flags & WAL_NEW_WORK ? w->margin : 0);
		/* Once refusing, new work waits until the record refused
		 * would fit: smaller ones do not slip in meanwhile. */
		uint64_t need = (flags & WAL_NEW_WORK) && w->refusing &&
		        w->refused_size > size
		    ? w->refused_size
		    : size;

		for (int tries = 0; !room_for(w, need, keep); tries++)
			if (tries >= ALLOC_INLINE_MAX ||
			    (tries == 0 && !may_alloc_inline(w)) ||
			    alloc_inline(w) != 0)
				return refuse(w, flags, need,
				    "the preallocated log space left "
				    "would not cover the reservation");
	}
	fits = w->fill_off + size <= w->cur->size;
	if (!fits) {
		rc = rotate(w);
		if (rc == SLUICE_ENOSPC && flags != 0)
			return refuse(w, flags, size,
			    "no preallocated segment to "
			    "continue in");
		if (rc == SLUICE_ENOSPC) {
			/* The reserve was not preallocated (the disk
			 * filled before the reservation was first set). */
			w->st.enospc++;
			if (!w->retry_logged)
				log_warn("wal",
				    "no room for a record that finishes "
				    "work: no preallocated segment to "
				    "continue in dir=%s",
				    w->dir);
			w->retry_logged = true;
			return rc;
		}
		if (rc != 0)
			return rc;
	}
	if (w->fill == NULL) {
		w->fill = batch_new(w, w->cur, w->fill_off);
		if (w->fill == NULL)
			return -ENOMEM;
	}
	/* Reserved, not extended: rec_write fills every byte. */
	if (!buf_reserve(&w->fill->data, size)) {
		w->fill->data.oom = false;
		return -ENOMEM;
	}
	dst = w->fill->data.data + w->fill->data.len;
	h.type = type;
	h.flags = 0;
	h.lsn = w->next_lsn;
	h.epoch = epoch;
	h.time = time;
	rec_write(dst, &h, body, len);
	w->fill->data.len += size;
	w->fill_off += size;
	w->fill->last_lsn = h.lsn;
	w->fill->nrec++;
	w->next_lsn++;
	w->st.records++;
	if ((flags & WAL_NEW_WORK) && w->refusing)
		accepting_again(w);
	if (flags & WAL_RETRY)
		w->retry_logged = false;
	*lsn = h.lsn;
	return 0;
}

int
wal_append(struct wal *w, uint16_t type, int64_t time, const void *body,
    size_t len, unsigned flags, uint64_t *lsn)
{
	return append(w, type, time, w->epoch, body, len, flags, lsn);
}

int
wal_append_rec(
    struct wal *w, const struct rec_hdr *hdr, const void *body, unsigned flags)
{
	uint64_t lsn;
	int rc;

	if (w->poisoned)
		return SLUICE_ELOG;
	if (hdr->lsn != w->next_lsn || hdr->flags != 0)
		return SLUICE_EINVAL;
	if (hdr->epoch < w->epoch)
		return SLUICE_EEPOCH;
	if (hdr->len < REC_HDR_SIZE)
		return SLUICE_EINVAL;
	rc = append(w, hdr->type, hdr->time, hdr->epoch, body,
	    hdr->len - REC_HDR_SIZE, flags, &lsn);
	if (rc == 0)
		w->epoch = hdr->epoch;
	return rc;
}

int
wal_set_epoch(
    struct wal *w, uint64_t epoch, uint64_t nonce, int64_t time, uint64_t *lsn)
{
	uint8_t body[REC_EPOCH_BODY];
	int rc;

	if (w->poisoned)
		return SLUICE_ELOG;
	if (epoch <= w->epoch)
		return SLUICE_EEPOCH;
	le_store_u64(body, epoch);
	le_store_u64(body + 8, w->epoch);
	le_store_u64(body + 16, nonce);
	rc = append(w, REC_EPOCH, time, epoch, body, sizeof(body), 0, lsn);
	if (rc == 0) {
		log_info("wal",
		    "epoch begins epoch=%" PRIu64 " lsn=%" PRIu64 " dir=%s",
		    epoch, *lsn, w->dir);
		w->epoch = epoch;
	}
	return rc;
}

uint64_t
wal_epoch(const struct wal *w)
{
	return w->epoch;
}

void
wal_set_reserved(struct wal *w, uint64_t floor, uint64_t margin)
{
	w->floor = floor;
	w->margin = margin;
	alloc_update_want(w);
}

bool
wal_refusing(struct wal *w)
{
	if (w->refusing && room_for(w, w->refused_size, w->floor + w->margin))
		accepting_again(w);
	return w->refusing;
}

bool
wal_space_short(const struct wal *w)
{
	struct wal_alloc *a = (struct wal_alloc *)&w->alloc;
	bool short_;

	pthread_mutex_lock(&a->mu);
	short_ = a->err != 0;
	pthread_mutex_unlock(&a->mu);
	return short_;
}

/* ---------------------------------------------------------------------
 * The event loop's side
 * ------------------------------------------------------------------- */

int
wal_submit(struct wal *w)
{
	if (w->poisoned)
		return SLUICE_ELOG;
	return pump(w, true);
}

int
wal_fd(const struct wal *w)
{
	return ring_fd(&w->ring);
}

int
wal_reap(struct wal *w)
{
	int rc = ring_reap(&w->ring, on_done, w);

	if (rc < 0 && !w->poisoned)
		poison(w, "reaping completions of", w->dir, 0,
		    w->durable_lsn + 1, w->next_lsn - 1, rc);
	return w->poisoned ? SLUICE_ELOG : 0;
}

uint64_t
wal_durable_lsn(const struct wal *w)
{
	return w->durable_lsn;
}

uint64_t
wal_last_lsn(const struct wal *w)
{
	return w->next_lsn - 1;
}

bool
wal_poisoned(const struct wal *w)
{
	return w->poisoned;
}

/* Waits for completions until `deadline` (monotonic ns); 0 or
 * SLUICE_ETIMEDOUT. */
static int
wait_some(struct wal *w, int64_t deadline)
{
	int64_t left = deadline - clock_mono_ns();
	int rc;

	if (left <= 0)
		return SLUICE_ETIMEDOUT;
	rc = ring_wait(&w->ring, left);
	if (rc == -ETIME)
		return SLUICE_ETIMEDOUT;
	ring_reap(&w->ring, on_done, w);
	return 0;
}

int
wal_sync(struct wal *w, int64_t timeout_ms)
{
	int64_t deadline = clock_mono_ns() + timeout_ms * 1000000;
	int rc;

	rc = wal_submit(w);
	while (rc == 0) {
		if (w->poisoned)
			return SLUICE_ELOG;
		if (w->inflight == NULL && w->q == NULL &&
		    (w->fill == NULL || w->fill->nrec == 0)) {
			if (w->synced_lsn >= w->next_lsn - 1)
				return 0;
			submit_sync(w);
		}
		pump(w, true);
		/* An inline commit is done already: wait only for the ring. */
		if (w->ring.pending > 0)
			rc = wait_some(w, deadline);
		else if (clock_mono_ns() > deadline)
			rc = SLUICE_ETIMEDOUT;
	}
	return w->poisoned ? SLUICE_ELOG : rc;
}

int
wal_prealloc_wait(struct wal *w, int64_t timeout_ms)
{
	struct wal_alloc *a = &w->alloc;
	int64_t deadline = clock_now_ms() + timeout_ms;
	int rc = 0;

	pthread_mutex_lock(&a->mu);
	while (a->busy || (atomic_load(&a->nready) < a->want && a->err == 0)) {
		struct timespec ts = {
			.tv_sec = deadline / 1000,
			.tv_nsec = (deadline % 1000) * 1000000,
		};

		if (pthread_cond_timedwait(&a->done, &a->mu, &ts) ==
		    ETIMEDOUT) {
			rc = SLUICE_ETIMEDOUT;
			break;
		}
	}
	if (rc == 0 && atomic_load(&a->nready) < a->want)
		rc = a->err;
	pthread_mutex_unlock(&a->mu);
	return rc;
}

int
wal_remove_before(struct wal *w, uint64_t lsn, unsigned keep)
{
	struct logdir ld;
	size_t cand = 0, n;
	int rc, removed = 0;

	rc = logdir_list(w->dir, &ld);
	if (rc != 0)
		return rc;
	/* Segment i holds only LSNs below lsn when the next one starts at
	 * or below it; the current segment is never a candidate. */
	while (cand + 1 < ld.n && ld.first[cand + 1] <= lsn &&
	    ld.first[cand] != w->cur->first_lsn)
		cand++;
	n = cand > keep ? cand - keep : 0;
	for (size_t i = 0; i < n; i++) {
		char path[LOGDIR_PATH_MAX];
		struct stat st = { 0 };

		rc = seg_path(path, sizeof(path), w->dir, ld.first[i]);
		if (rc == 0 && stat(path, &st) < 0)
			st.st_size = 0;
		if (rc == 0 && unlink(path) < 0)
			rc = -errno;
		if (rc == 0)
			files_sub(w, (uint64_t)st.st_size);
		if (rc != 0) {
			log_err("wal",
			    "cannot remove a segment segment=%s error=\"%s\"",
			    path, sluice_strerror(rc));
			break;
		}
		removed++;
	}
	logdir_destroy(&ld);
	if (removed > 0) {
		int src = fs_sync_dir(w->dir);

		if (rc == 0)
			rc = src;
		w->st.removed += (uint64_t)removed;
		w->st.segments -= (uint64_t)removed;
		log_info("wal",
		    "segments removed removed=%d below_lsn=%" PRIu64 " dir=%s",
		    removed, lsn, w->dir);
		/* The room may be what the preallocator was waiting for:
		 * it tries now rather than at its next retry. */
		pthread_mutex_lock(&w->alloc.mu);
		w->alloc.retry_at = 0;
		pthread_cond_signal(&w->alloc.cv);
		pthread_mutex_unlock(&w->alloc.mu);
		w->inline_failed_ms = 0;
	}
	return rc != 0 ? rc : removed;
}

void
wal_stats(const struct wal *w, struct wal_stats *out)
{
	struct wal_alloc *a = (struct wal_alloc *)&w->alloc;

	*out = w->st;
	out->last_lsn = w->next_lsn - 1;
	out->durable_lsn = w->durable_lsn;
	out->synced_lsn = w->synced_lsn;
	out->epoch = w->epoch;
	out->reserved = w->floor + w->margin;
	out->reserved_floor = w->floor;
	out->refusing = w->refusing;
	out->spares = atomic_load(&a->nready);
	out->avail = w->cur->size - w->fill_off + out->spares * spare_cap(w);
	pthread_mutex_lock(&a->mu);
	out->alloc_failures = a->failures;
	out->files_bytes = a->bytes;
	out->space_short = a->err != 0;
	pthread_mutex_unlock(&a->mu);
	out->poisoned = w->poisoned;
}

/* ---------------------------------------------------------------------
 * Closing
 * ------------------------------------------------------------------- */

int
wal_close(struct wal *w)
{
	int64_t deadline;
	int rc = 0;

	if (w == NULL)
		return 0;
	if (!w->poisoned)
		rc = wal_sync(w, CLOSE_TIMEOUT_MS);
	/* Nothing may stay in flight over memory about to be freed (the
	 * timer only holds its own copy of the timeout). */
	deadline = clock_mono_ns() + (int64_t)CLOSE_TIMEOUT_MS * 1000000;
	while (w->ring.pending > (w->timer.armed ? 1u : 0u)) {
		if (wait_some(w, deadline) != 0) {
			rc = SLUICE_ETIMEDOUT;
			break;
		}
	}
	if (rc == 0 && w->poisoned)
		rc = SLUICE_ELOG;
	if (rc == 0 && w->mark.fd >= 0) {
		/* A clean stop: everything is synced, and says so. */
		int mrc = durable_note(&w->mark, w->synced_lsn, true, true);

		if (mrc != 0)
			log_warn("wal",
			    "cannot write the durable mark at close dir=%s "
			    "error=\"%s\"",
			    w->dir, sluice_strerror(mrc));
	}
	durable_close(&w->mark);
	alloc_stop(w);
	ring_close(&w->ring);
	if (w->fill != NULL)
		batch_free(w, w->fill);
	while (w->q != NULL) {
		struct wal_batch *b = w->q;

		w->q = b->next;
		batch_free(w, b);
	}
	if (w->inflight != NULL)
		batch_free(w, w->inflight);
	while (w->idle != NULL) {
		struct wal_batch *b = w->idle;

		w->idle = b->next;
		buf_free(&b->data);
		free(b);
	}
	seg_unref(w->sync.seg);
	seg_unref(w->wseg);
	seg_unref(w->cur);
	close(w->dirfd);
	pthread_mutex_destroy(&w->alloc.mu);
	pthread_cond_destroy(&w->alloc.cv);
	pthread_cond_destroy(&w->alloc.done);
	free(w);
	return rc;
}
