/* wal_remove - removing the log segments a snapshot made needless, on
 * the writer's preallocator thread rather than the caller's.
 *
 * Removing a segment is an unlink (the file system frees its extents
 * and the kernel drops its cached pages: milliseconds for a large
 * segment) and then a sync of the directory, which waits for the disk.
 * The caller (the server's loop) only hands the request over
 * (wal_remove_later: a mutex and a condition variable); the preallocator
 * thread (wal_alloc.c) takes it before its next spare, does the work and
 * logs it, and then tries again at once a spare the disk had no room for.
 *
 * What stays is decided when the request is handed over, so the work
 * itself needs nothing of the caller's state: segments whose records are
 * all below `lsn` (the oldest kept snapshot's LSN + 1, or less for
 * followers) go, oldest first, except the newest `keep` of them and the
 * segment being written then (and every later one). A later request
 * replaces one not yet begun: it was decided with what the caller knew
 * later. A crash at any point leaves a recoverable directory: the
 * snapshot the cut was taken from is published before the request, and
 * a crash mid-way leaves the oldest segments removed and the others
 * whole (a removal the directory sync did not reach reappears, as
 * before). wal_close finishes a request already handed over. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log/seg.h"
#include "log/wal.h"
#include "log/wal_int.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/fsutil.h"
#include "util/log.h"

enum {
	REMOVE_WAIT_MS = 60000, /* wal_remove_before's wait, at most */
};

/* The work: lists the directory and removes what `rm` asks. *removed
 * gets the count. Returns 0 or -errno. Called without the lock. */
static int
remove_segments(struct wal *w, const struct wal_rm *rm, int *removed)
{
	struct logdir ld;
	size_t cand = 0, n;
	int rc;

	*removed = 0;
	rc = logdir_list(w->dir, &ld);
	if (rc != 0)
		return rc;
	/* Segment i holds only LSNs below rm->lsn when the next one starts
	 * at or below it; the segment being written when it was asked, and
	 * every later one, are never candidates. */
	while (cand + 1 < ld.n && ld.first[cand + 1] <= rm->lsn &&
	    ld.first[cand] < rm->cur_first)
		cand++;
	n = cand > rm->keep ? cand - rm->keep : 0;
	/* Test builds only: a slow removal, to show who waits for it. */
	if (n > 0)
		FAULT_PAUSE(FAULT_PAUSE_REMOVE);
	for (size_t i = 0; i < n; i++) {
		char path[LOGDIR_PATH_MAX];
		struct stat st = { 0 };

		rc = seg_path(path, sizeof(path), w->dir, ld.first[i]);
		if (rc == 0 && stat(path, &st) < 0)
			st.st_size = 0;
		if (rc == 0 && unlink(path) < 0)
			rc = -errno;
		if (rc == 0)
			wal_alloc_files_sub(w, (uint64_t)st.st_size);
		if (rc != 0) {
			log_err("wal",
			    "cannot remove a segment segment=%s error=\"%s\"",
			    path, sluice_strerror(rc));
			break;
		}
		(*removed)++;
	}
	logdir_fini(&ld);
	if (*removed > 0) {
		int src = fs_sync_dir(w->dir);

		if (rc == 0)
			rc = src;
	}
	return rc;
}

void
wal_remove_run(struct wal *w)
{
	struct wal_alloc *a = &w->alloc;
	struct wal_rm rm = a->rm;
	int64_t t0 = clock_mono_ns();
	uint64_t us;
	int removed, rc;

	a->rm.pending = false;
	pthread_mutex_unlock(&a->mu);
	rc = remove_segments(w, &rm, &removed);
	us = (uint64_t)(clock_mono_ns() - t0) / 1000;
	if (removed > 0)
		log_info("wal",
		    "segments removed removed=%d below_lsn=%" PRIu64
		    " unlink_us=%" PRIu64 " thread=wal-alloc dir=%s",
		    removed, rm.lsn, us, w->dir);
	pthread_mutex_lock(&a->mu);
	a->rm.done = rm.asked;
	a->rm.rc = rc;
	a->rm.removed = removed;
	a->rm.total += (uint64_t)removed;
	if (removed > 0) {
		/* The room may be what spares were waiting for: they are
		 * tried now rather than at the next retry, by this thread
		 * and by the writer's appends. */
		a->rm.freed_ms = clock_mono_ns() / 1000000;
		a->retry_at = 0;
	}
	pthread_cond_broadcast(&a->done);
}

/* Hands a request over; returns its number. */
static uint64_t
hand_over(struct wal *w, uint64_t lsn, unsigned keep)
{
	struct wal_alloc *a = &w->alloc;
	uint64_t seq;

	pthread_mutex_lock(&a->mu);
	a->rm.pending = true;
	a->rm.lsn = lsn;
	a->rm.keep = keep;
	a->rm.cur_first = w->cur->first_lsn;
	seq = ++a->rm.asked;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return seq;
}

int
wal_remove_later(struct wal *w, uint64_t lsn, unsigned keep)
{
	if (!w->alloc.started)
		return -ESRCH;
	hand_over(w, lsn, keep);
	return 0;
}

bool
wal_removing(struct wal *w)
{
	struct wal_alloc *a = &w->alloc;
	bool busy;

	pthread_mutex_lock(&a->mu);
	busy = a->rm.done != a->rm.asked;
	pthread_mutex_unlock(&a->mu);
	return busy;
}

int
wal_remove_before(struct wal *w, uint64_t lsn, unsigned keep)
{
	struct wal_alloc *a = &w->alloc;
	int64_t deadline = clock_now_ms() + REMOVE_WAIT_MS;
	uint64_t seq;
	int rc = 0;

	if (!w->alloc.started)
		return -ESRCH;
	seq = hand_over(w, lsn, keep);
	pthread_mutex_lock(&a->mu);
	while (a->rm.done < seq) {
		struct timespec ts = {
			.tv_sec = deadline / 1000,
			.tv_nsec = (deadline % 1000) * 1000000,
		};

		if (pthread_cond_timedwait(&a->done, &a->mu, &ts) ==
		    ETIMEDOUT) {
			rc = -ETIMEDOUT;
			break;
		}
	}
	if (rc == 0)
		rc = a->rm.rc != 0 ? a->rm.rc : a->rm.removed;
	pthread_mutex_unlock(&a->mu);
	return rc;
}
