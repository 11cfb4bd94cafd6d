/* wal - the log writer: pipelined group commit (by default one O_DIRECT
 * write per batch through io_uring, or plain pwrite + fdatasync on the
 * caller's thread), rotation into preallocated segments, the fsync
 * policies, space reservation.
 *
 * Files. This one opens the log, appends, rotates, serves the event
 * loop's calls and closes; wal_batch.c commits the batches and handles
 * their completions and failures; wal_alloc.c makes the spare segments
 * (the preallocator thread); wal_remove.c removes the segments a
 * snapshot made needless, on that thread; wal_space.c decides which
 * appends the space left allows. What they share is wal_int.h. The design below
 *is the whole writer's.
 *
 * Threads. Everything here runs on the caller's thread (the server's
 * queue thread) except the preallocator, a background thread that makes
 * spare segment files ("NNNNNN.spare": allocated, zero-filled, synced) so
 * that rotation never waits for the disk, and removes needless segments
 * when asked. The two share only the spare list and the removal asked
 * for, under `alloc.mu`, and the eventfd the preallocator signals.
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
 * How a batch is committed (cfg.commit). Direct, the server's default
 * (WAL_COMMIT_DIRECT): segments are opened O_DIRECT as well, and the batch
 * is laid into whole WAL_BLOCK blocks (wal_batch.c's stage: the bytes the
 * block it starts in already holds, its records, zeros to the end of its
 * last block) and written with RWF_DSYNC through io_uring, with no
 * fdatasync op; wal_reap finishes it, and the loop goes on meanwhile. The
 * next batch writes the partial last block again, with the same bytes in
 * front of its own: the file holds exactly what a page-cache writer
 * leaves (docs/log-format.md). io_uring completes such a write without a
 * worker thread, where an fdatasync op always goes to one
 * (docs/benchmarks.md, fsync_probe --mode). Where the file system refuses
 * O_DIRECT, wal_open falls back to inline and logs it. Under `interval`
 * and `never` nothing waits for the disk: no O_DIRECT, a batch is written
 * into the page cache on the caller's thread, and only a chain that opens
 * a segment and the periodic fdatasync go through the ring. Inline
 * (WAL_COMMIT_INLINE): the chain runs on the caller's thread with plain
 * system calls (iochain_run), so wal_submit returns with the batch
 * durable (wal_fd is not signalled: the caller looks at wal_durable_lsn);
 * the caller's loop waits for the disk meanwhile, and what arrives then
 * is the next batch. Ring (WAL_COMMIT_RING): the page-cache chain through
 * io_uring, whose fdatasync runs on a kernel worker thread; kept for the
 * tests and benchmarks that compare the three.
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
 * fsync: it names only what is synced already; with wal_mark_late, once
 * the event loop has sent the replies that completion allowed), and at a
 * clean close, with the CLEAN flag, synced. A start reads it to tell a torn
 * write of unacknowledged records from damage to acknowledged ones.
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
 * Segments
 * ------------------------------------------------------------------- */

struct wal_seg *
wal_seg_ref(struct wal_seg *s)
{
	if (s != NULL)
		s->refs++;
	return s;
}

void
wal_seg_unref(struct wal_seg *s)
{
	if (s == NULL || --s->refs > 0)
		return;
	if (s->fd >= 0)
		close(s->fd);
	if (s->dfd >= 0)
		close(s->dfd);
	free(s);
}

int
wal_seg_open_direct(struct wal *w, struct wal_seg *s, const char *path)
{
	int f;

	if (!w->direct || s->dfd >= 0)
		return 0;
	f = FAULT_HIT(FAULT_WAL_ODIRECT);
	if (f < 0)
		return f;
	s->dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
	return s->dfd < 0 ? -errno : 0;
}

/* WAL_COMMIT_DIRECT, once the segment to write is open: its O_DIRECT
 * descriptor, and the alignment the file system asks of it (a read of
 * 512 bytes, else of a block, must pass). Where O_DIRECT is refused, the
 * writer commits inline and says so. Under `never` and `interval` no
 * O_DIRECT: the batches go to the page cache (wal_int.h, cached).
 * Returns 0 or -errno. */
static int
direct_start(struct wal *w)
{
	int rc;

	if (w->cfg.commit != WAL_COMMIT_DIRECT)
		return 0;
	if (w->cfg.fsync != WAL_FSYNC_ALWAYS) {
		w->cached = true; /* nothing waits for the disk */
		return 0;
	}
	if (posix_memalign((void **)&w->tail, WAL_BLOCK, WAL_BLOCK) != 0)
		return -ENOMEM;
	w->direct = true;
	rc = wal_seg_open_direct(w, w->cur, w->cur->path);
	if (rc == 0) {
		w->dio_align = 512;
		if (pread(w->cur->dfd, w->tail, 512, 0) < 0) {
			w->dio_align = WAL_BLOCK;
			if (pread(w->cur->dfd, w->tail, WAL_BLOCK, 0) < 0)
				rc = -errno;
		}
	}
	if (rc == -EINVAL) {
		log_info("wal",
		    "the file system refuses O_DIRECT: the log commits "
		    "inline (pwrite + fdatasync on the loop's thread) dir=%s",
		    w->dir);
		if (w->cur->dfd >= 0)
			close(w->cur->dfd);
		w->cur->dfd = -1;
		w->direct = false;
		w->cfg.commit = WAL_COMMIT_INLINE;
		return 0;
	}
	return rc;
}

/* ---------------------------------------------------------------------
 * Opening
 * ------------------------------------------------------------------- */

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

	rc = wal_alloc_make_spare(w, w->alloc.seq++, !w->cfg.no_zero_fill, &s);
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
	wal_seg_unref(s);
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
	s->dfd = -1;
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
	if (c->inflight == 0)
		c->inflight = 1;
	if (c->inflight > WAL_INFLIGHT_MAX)
		return SLUICE_EINVAL;
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
		rc = wal_alloc_remove_stale(w->dir);
	if (rc != 0)
		goto fail;
	w->dirfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = iochain_ring_open(&w->ring, RING_ENTRIES);
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
	rc = direct_start(w);
	if (rc != 0) {
		log_err("wal",
		    "cannot open the log for O_DIRECT dir=%s error=\"%s\"",
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
	w->wseg = wal_seg_ref(w->cur);
	rc = logdir_list(w->dir, &ld);
	if (rc != 0)
		goto fail;
	w->st.segments = ld.n;
	/* No spare exists yet: the files counted are the segments. */
	w->alloc.bytes = wal_alloc_segments_bytes(w->dir, &ld);
	logdir_fini(&ld);

	w->alloc.want = w->want = w->cfg.prealloc;
	rc = pthread_create(&w->alloc.thr, NULL, wal_alloc_main, w);
	if (rc != 0) {
		rc = -rc;
		goto fail;
	}
	w->alloc.started = true;
	*out = w;
	return 0;

fail:
	durable_close(&w->mark);
	wal_seg_unref(w->wseg);
	wal_seg_unref(w->cur);
	iochain_ring_close(&w->ring);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->tail);
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

	s = wal_alloc_take(w);
	if (s == NULL && wal_alloc_inline(w) == 0)
		s = wal_alloc_take(w);
	if (s == NULL)
		return SLUICE_ENOSPC;
	s->first_lsn = w->next_lsn;
	h.size = s->size;
	if (seg_path(s->path, sizeof(s->path), w->dir, s->first_lsn) != 0)
		goto fail;
	b = wal_batch_new(w, s, 0);
	if (b == NULL)
		goto fail;
	p = buf_extend(&b->data, SEG_HDR_SIZE);
	if (p == NULL) {
		wal_batch_free(w, b);
		goto fail;
	}
	seg_hdr_encode(p, &h);
	b->opens = true;
	b->prev = wal_seg_ref(w->cur);
	wal_seal_fill(w);
	w->fill = b;
	wal_seg_unref(w->cur);
	w->cur = s; /* the writer's reference is the spare's */
	w->fill_off = SEG_HDR_SIZE;
	w->st.rotations++;
	w->st.segments++;
	wal_alloc_update_want(w);
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

		for (int tries = 0; !wal_room_for(w, need, keep); tries++)
			if (tries >= ALLOC_INLINE_MAX ||
			    (tries == 0 && !wal_may_alloc_inline(w)) ||
			    wal_alloc_inline(w) != 0)
				return wal_refuse(w, flags, need,
				    "the preallocated log space left "
				    "would not cover the reservation");
	}
	fits = w->fill_off + size <= w->cur->size;
	if (!fits) {
		rc = rotate(w);
		if (rc == SLUICE_ENOSPC && flags != 0)
			return wal_refuse(w, flags, size,
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
		w->fill = wal_batch_new(w, w->cur, w->fill_off);
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
		wal_accepting_again(w);
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

/* Ends the filling batch on a block boundary with a REC_PAD record, when
 * its successor should be free to go in flight beside it (wal.h,
 * cfg.inflight): commits are contended, a batch being in flight now, or
 * records having waited behind one since the last batch was sealed. One
 * client's commits, each done before its next request, carry none. Not on a
 * follower, whose LSNs are its leader's; not when the pad would not fit in the
 * segment, or would eat into the reserved space (the successor then waits, as
 * with one in flight). */
void
wal_pad_fill(struct wal *w)
{
	static const uint8_t zeros[WAL_BLOCK];
	uint64_t rem = (WAL_BLOCK - w->fill_off % WAL_BLOCK) % WAL_BLOCK, lsn;
	int64_t now;

	if (w->follower || wal_fly_max(w) < 2 || w->fill == NULL ||
	    w->fill->seg != w->cur || rem == 0 || (w->nfly == 0 && !w->waited))
		return;
	if (rem < REC_HDR_SIZE)
		rem += WAL_BLOCK;
	if (w->fill_off + rem > w->cur->size ||
	    !wal_room_for(w, rem, w->floor + w->margin))
		return;
	now = clock_now_ms();
	if (append(w, REC_PAD, now, w->epoch, zeros, rem - REC_HDR_SIZE, 0,
	        &lsn) != 0)
		return;
	w->st.pads++;
	if (w->own != NULL) {
		struct rec_hdr h = { .len = (uint32_t)rem,
			.type = REC_PAD,
			.version = REC_VERSION,
			.lsn = lsn,
			.epoch = w->epoch,
			.time = now };

		w->own(w->own_arg, &h, zeros, rem - REC_HDR_SIZE);
	}
}

void
wal_set_follower(struct wal *w, bool follower)
{
	w->follower = follower;
}

void
wal_set_own(struct wal *w, wal_own_fn *fn, void *arg)
{
	w->own = fn;
	w->own_arg = arg;
}

int
wal_prepare(struct wal *w, size_t len, uint64_t keep)
{
	size_t size = rec_size(len);

	if (w->poisoned)
		return SLUICE_ELOG;
	if (len > REC_MAX_BODY || size > w->cfg.seg_size - SEG_HDR_SIZE)
		return SLUICE_ETOOBIG;
	if (w->refusing || !wal_room_for(w, size, keep))
		return SLUICE_ENOSPC;
	if (w->fill_off + size > w->cur->size) {
		int rc = rotate(w);

		if (rc != 0)
			return rc;
	}
	if (w->fill == NULL) {
		w->fill = wal_batch_new(w, w->cur, w->fill_off);
		if (w->fill == NULL)
			return -ENOMEM;
	}
	if (!buf_reserve(&w->fill->data, size)) {
		w->fill->data.oom = false;
		return -ENOMEM;
	}
	return 0;
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

/* ---------------------------------------------------------------------
 * The event loop's side
 * ------------------------------------------------------------------- */

int
wal_submit(struct wal *w)
{
	if (w->poisoned)
		return SLUICE_ELOG;
	return wal_pump(w, true);
}

int
wal_fd(const struct wal *w)
{
	return iochain_ring_fd(&w->ring);
}

int
wal_wake_fd(const struct wal *w)
{
	return iochain_wake_fd(&w->ring);
}

int
wal_reap(struct wal *w)
{
	int rc = iochain_reap(&w->ring, wal_on_done, w);

	if (rc < 0 && !w->poisoned)
		wal_poison(w, "reaping completions of", w->dir, 0,
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
wal_busy(const struct wal *w)
{
	return w->nfly > 0 || w->q != NULL;
}

int64_t
wal_commit_ns(const struct wal *w)
{
	return w->commit_ns;
}

bool
wal_poisoned(const struct wal *w)
{
	return w->poisoned;
}

enum wal_commit
wal_commit_mode(const struct wal *w)
{
	return w->cfg.commit;
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
	rc = iochain_wait(&w->ring, left);
	if (rc == -ETIME)
		return SLUICE_ETIMEDOUT;
	iochain_reap(&w->ring, wal_on_done, w);
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
		if (w->nfly == 0 && w->q == NULL &&
		    (w->fill == NULL || w->fill->nrec == 0)) {
			if (w->synced_lsn >= w->next_lsn - 1) {
				if (w->mark_due)
					wal_mark(w);
				return 0;
			}
			wal_submit_sync(w);
		}
		wal_pump(w, true);
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
	out->avail =
	    w->cur->size - w->fill_off + out->spares * wal_alloc_spare_cap(w);
	pthread_mutex_lock(&a->mu);
	out->alloc_failures = a->failures;
	out->zeroed_late = a->zeroed_late;
	out->zeroing = false;
	for (const struct wal_seg *s = a->ready; s != NULL; s = s->next)
		out->zeroing = out->zeroing || s->zeroing;
	out->files_bytes = a->bytes;
	out->space_short = a->err != 0;
	out->removed = a->rm.total;
	out->segments = w->st.segments - a->rm.total;
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
	if (w->mark_due)
		wal_mark(w); /* what was synced, if the stop is not clean */
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
	wal_alloc_stop(w);
	iochain_ring_close(&w->ring);
	if (w->fill != NULL)
		wal_batch_free(w, w->fill);
	while (w->q != NULL) {
		struct wal_batch *b = w->q;

		w->q = b->next;
		wal_batch_free(w, b);
	}
	while (w->fly != NULL) {
		struct wal_batch *b = w->fly;

		w->fly = b->next;
		wal_batch_free(w, b);
	}
	while (w->idle != NULL) {
		struct wal_batch *b = w->idle;

		w->idle = b->next;
		buf_fini(&b->data);
		free(b->dio);
		free(b);
	}
	wal_seg_unref(w->sync.seg);
	wal_seg_unref(w->wseg);
	wal_seg_unref(w->tail_seg);
	wal_seg_unref(w->cur);
	free(w->tail);
	close(w->dirfd);
	pthread_mutex_destroy(&w->alloc.mu);
	pthread_cond_destroy(&w->alloc.cv);
	pthread_cond_destroy(&w->alloc.done);
	free(w);
	return rc;
}
