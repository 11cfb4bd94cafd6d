/* wal_alloc - the writer's spare segment files and the preallocator
 * thread that makes them.
 *
 * A spare is a file "NNNNNN.spare" in the log directory, allocated to a
 * segment's size and synced, so that rotation (wal.c) only renames it and
 * never waits for the disk. The preallocator is the one thread of the
 * writer besides the caller's: it keeps `alloc.want` spares ready, and
 * shares with the writer only the ready list and the removals handed to
 * it (wal_remove.c, done before anything else), under `alloc.mu`, and the
 * eventfd it signals when a spare is ready or a removal done. When it
 * falls behind, an append makes a spare itself (wal_alloc_inline: a short
 * stall rather than a refused record).
 *
 * Zeros. The spares next in line (the first lead() of the list) are
 * zero-filled (unless cfg.no_zero_fill), so that the writer's fdatasyncs
 * flush data only (seg.h). The others are there for the reservation
 * (wal_alloc_update_want): space that live tasks may need to finish, a
 * spare per 64 MiB of it, 1.3 GiB at 3 M ready tasks. They are only
 * allocated, and get their zeros when they move up to the front of the
 * line: zeros written for all of them as they were made came to 580
 * bytes a task put, five times the task's own record, and took the disk
 * from the log in a batch put (docs/benchmarks.md). While its zeros are
 * written a spare is marked `zeroing`, and the writer takes the next one
 * instead (wal_alloc_take).
 * The bytes of segment and spare files are counted here against cfg.max_bytes.
 * Spares an earlier run left are removed at open: they may hold the data of a
 * rename that never reached the disk. */
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
 * Preallocator thread
 * ------------------------------------------------------------------- */

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

void
wal_alloc_files_sub(struct wal *w, uint64_t size)
{
	struct wal_alloc *a = &w->alloc;

	pthread_mutex_lock(&a->mu);
	a->bytes -= size < a->bytes ? size : a->bytes;
	pthread_mutex_unlock(&a->mu);
}

/* The spares next in line, the ones that get their zeros. */
static unsigned
lead(const struct wal *w)
{
	return w->cfg.no_zero_fill ? 0 : w->cfg.prealloc;
}

/* The first spare of the lead still without its zeros, or NULL. Under the
 * lock. */
static struct wal_seg *
lead_unzeroed(struct wal *w)
{
	struct wal_seg *s = w->alloc.ready;

	for (unsigned i = 0; s != NULL && i < lead(w); i++, s = s->next)
		if (!s->zeroed && !s->zeroing)
			return s;
	return NULL;
}

/* Writes the zeros of spare `s`, which stays in the list meanwhile,
 * marked so that the writer does not take it unless it has no other
 * (then it stops the zeros, wal_alloc_take). Called with the lock, which
 * it drops while the zeros are written. A failure leaves the spare as it
 * was, to be used without its zeros (as wal_alloc_inline's are): it
 * still has its space. */
static void
zero_spare(struct wal *w, struct wal_seg *s)
{
	struct wal_alloc *a = &w->alloc;
	int rc;

	s->zeroing = true;
	pthread_mutex_unlock(&a->mu);
	rc = seg_zero_fill(s->spare_path, s->fd, s->size, &a->zero_stop);
	if (rc != 0 && rc != -ECANCELED)
		log_warn("wal",
		    "cannot write the zeros of a spare segment; it will be "
		    "used without them path=%s error=\"%s\"",
		    s->spare_path, sluice_strerror(rc));
	pthread_mutex_lock(&a->mu);
	s->zeroing = false;
	s->zeroed = true; /* done, or not to be tried again */
	if (rc == 0)
		a->zeroed_late++;
	pthread_cond_broadcast(&a->done);
}

/* Makes one spare, with its zeros when `zero_fill`. Called without the
 * lock. */
int
wal_alloc_make_spare(
    struct wal *w, unsigned seq, bool zero_fill, struct wal_seg **out)
{
	struct wal_seg *s;
	char name[32];
	int rc;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->fd = -1;
	s->dfd = -1;
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
	rc =
	    seg_prealloc(s->spare_path, s->size, zero_fill, &s->fd, &s->zeroed);
	if (rc != 0) {
		wal_alloc_files_sub(w, s->size);
		free(s);
		return rc;
	}
	rc = wal_seg_open_direct(w, s, s->spare_path);
	if (rc != 0) {
		unlink(s->spare_path);
		wal_alloc_files_sub(w, s->size);
		wal_seg_unref(s);
		return rc;
	}
	*out = s;
	return 0;
}

void *
wal_alloc_main(void *arg)
{
	struct wal *w = arg;
	struct wal_alloc *a = &w->alloc;

	(void)pthread_setname_np(pthread_self(), "wal-alloc");
	pthread_mutex_lock(&a->mu);
	for (;;) {
		int64_t now = clock_now_ms();
		struct wal_seg *s = NULL;
		unsigned seq;
		bool zero;
		int rc;

		/* A removal first (wal_remove.c), even when stopping: it was
		 * promised before the stop. */
		if (a->rm.pending) {
			wal_remove_run(w);
			iochain_wake(&w->ring);
			continue;
		}
		if (a->stop)
			break;
		if ((s = lead_unzeroed(w)) != NULL) {
			zero_spare(w, s);
			continue;
		}
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
		zero = atomic_load(&a->nready) < lead(w);
		pthread_mutex_unlock(&a->mu);
		rc = wal_alloc_make_spare(w, seq, zero, &s);
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
		iochain_wake(&w->ring);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* Room counted for a spare: what it holds, less the end a record too
 * large for the rest may leave unused. */
uint64_t
wal_alloc_spare_cap(const struct wal *w)
{
	uint64_t slack = w->cfg.seg_size / 8;

	if (slack > SPARE_SLACK)
		slack = SPARE_SLACK;
	return w->cfg.seg_size - SEG_HDR_SIZE - slack;
}

/* Spares wanted: the configured lead, plus enough to hold the
 * reservation beyond what the current segment has left. */
void
wal_alloc_update_want(struct wal *w)
{
	uint64_t cap = wal_alloc_spare_cap(w);
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

/* The first spare of the list not getting its zeros, or the one that is
 * when it is the only spare: its zeros stop (within a MiB, a few ms on
 * the writer's thread, only when the log is down to its last spare). */
struct wal_seg *
wal_alloc_take(struct wal *w)
{
	struct wal_alloc *a = &w->alloc;
	struct wal_seg **at, *s, *prev = NULL;

	pthread_mutex_lock(&a->mu);
	for (at = &a->ready; *at != NULL && (*at)->zeroing; at = &(*at)->next)
		prev = *at;
	if (*at == NULL && a->ready != NULL) {
		/* The one spare there is gets its zeros now: they stop
		 * within a MiB, and the spare is used as it is. */
		atomic_store(&a->zero_stop, true);
		while (a->ready->zeroing)
			pthread_cond_wait(&a->done, &a->mu);
		atomic_store(&a->zero_stop, a->stop);
		prev = NULL;
		at = &a->ready;
	}
	s = *at;
	if (s != NULL) {
		*at = s->next;
		if (a->ready_tail == s)
			a->ready_tail = prev;
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
int
wal_alloc_inline(struct wal *w)
{
	struct wal_alloc *a = &w->alloc;
	struct wal_seg *s;
	unsigned seq;
	int rc;

	pthread_mutex_lock(&a->mu);
	seq = a->seq++;
	pthread_mutex_unlock(&a->mu);
	rc = wal_alloc_make_spare(w, seq, false, &s);
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

void
wal_alloc_stop(struct wal *w)
{
	struct wal_alloc *a = &w->alloc;
	struct wal_seg *s;

	if (!a->started)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	atomic_store(&a->zero_stop, true); /* spares' zeros: not waited for */
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thr, NULL);
	a->started = false;
	/* Spares not used are removed: the next open makes fresh ones. */
	while ((s = a->ready) != NULL) {
		a->ready = s->next;
		if (unlink(s->spare_path) == 0)
			a->bytes -= s->size < a->bytes ? s->size : a->bytes;
		wal_seg_unref(s);
	}
	a->ready_tail = NULL;
	atomic_store(&a->nready, 0);
}

/* Removes spares an earlier run left: they may hold data of a rename
 * that never reached the disk. */
int
wal_alloc_remove_stale(const char *dir)
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
uint64_t
wal_alloc_segments_bytes(const char *dir, const struct logdir *ld)
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
