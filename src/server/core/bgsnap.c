/* bgsnap - snapshots built and written in the background by a thread.
 *
 * The log is the truth: the state at LSN L is the newest snapshot plus
 * the records after it up to L. So the core thread only notes L (the last
 * record appended, every one of them applied), and once the log is
 * durable up to L (written, and synced under --fsync always) a thread
 * (the worker, made once the server has recovered, before it serves, and
 * waiting for jobs) rebuilds that state apart from the live queue, in a queue
 * of its own: it loads the newest snapshot and applies the log's records up to
 * L, read with a cursor that never reads past L (recover_live), writes it as
 * the snapshot of L, reads it back whole, publishes it (rename, directory
 * sync) and removes the snapshots older than the newest --keep-snapshots
 * (default 2). The serving loop pays for none of it but handing the job
 * over (a mutex and a condition variable: pause_us), whatever the
 * queue's size. What it costs instead is the
 * thread's CPU (about a restart plus a write; it runs at a lower
 * priority than the loop) and, while it runs, memory for a second copy of
 * the state; both are given back when it ends. The thread shares nothing
 * with the loop but its job, and tells the loop it ended through an
 * eventfd in its poll set; the loop then decides which log segments the
 * oldest snapshot kept covers (keeping --keep-segments of them, and what
 * connected followers still need) and hands their removal to the log's
 * preallocator thread (wal_remove_later: remove_us is that hand-over;
 * the unlinks and the directory sync wait for the disk there): when the
 * newest snapshot turns out damaged at a start, recovery falls back to
 * the one before and the log it needs.
 *
 * The snapshot is published only with the log durable up to L, so a crash
 * never leaves a snapshot holding changes that the log, and so every
 * client, never saw acknowledged; and a snapshot that does not read back
 * whole is never published.
 *
 * A full log (c->full: new work refused, or no room for spares) is given
 * its room back by snapshots: one is started when as many tasks finished
 * (acked, deleted) since the last snapshot as are live, so that it holds
 * at most half of what the log since then does (a drain halves the queue
 * between two), and while the log is full its segments are removed
 * without keeping --keep-segments (connected followers still keep
 * theirs). A snapshot that does not fit on a full disk fails and is
 * tried again when as many more tasks finished; one asked for answers
 * SLUICE_ENOSPC (the log is fine and takes writes), never SLUICE_ELOG,
 * which says the log failed.
 *
 * The state a job wrote is kept by the worker for --snapshot-reuse
 * seconds (default 30; 0: never): a next job within that time starts
 * from it and applies only the log's records since, instead of loading
 * the newest snapshot again. Under a long load, when snapshots follow
 * each other, that saves the worker the load of the base (its reading,
 * decoding and, most of all, the kernel zeroing fresh pages for every
 * task of it: the zeroing, with that of the tasks the log adds, was over
 * half the worker's time in a 5 M batch put). It is the state
 * at the LSN of the snapshot just published, and read back whole, so the
 * next snapshot is what a rebuild from that file would give; what is
 * checked before a publish is unchanged. It is only used while the
 * newest snapshot at or below the job's LSN on disk is the one it wrote,
 * and dropped when the loop stops the worker's work (bgsnap_stop: before
 * a follower cuts its log or installs a leader's snapshot) or recovers
 * its state again (bgsnap_recovered), after a job that failed, and when
 * no job came in time: the memory of the second copy is held that long
 * after a snapshot, no longer. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log/recover.h"
#include "log/seg.h"
#include "log/snap.h"
#include "queue/qrecover.h"
#include "server/core/bgsnap.h"
#include "server/core/core.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	SNAP_BUF_SIZE = 1 << 20,
	REPL_RETAIN_SEGMENTS = 16,
	ROOM_SNAP_MS = 1000, /* between two snapshots for room, at least */
	/* Between two looks at the cancel flag: records, entries or bytes,
	 * whichever comes first. A stop waits for the worker to see it, and
	 * the worker runs below the loop's priority: on a busy machine a
	 * few MiB can take it seconds. */
	CANCEL_EVERY = 4096,
	CANCEL_BYTES = 1 << 20,
	THREAD_NICE = 10, /* the thread's priority below the loop's */
};

/* How a job ended. */
enum job_end {
	JOB_OK,
	JOB_FAILED,     /* rebuilding or writing failed (rc says) */
	JOB_NOSPC,      /* the disk had no room */
	JOB_UNREADABLE, /* written, but it does not read back whole */
	JOB_UNPUBLISHED /* written, but the rename failed (rc says) */
};

/* What the thread gets, and gives back: the loop touches it only before
 * the thread starts and after it ended (joined). */
struct bgsnap_job {
	char dir[PATH_MAX];
	uint64_t lsn;
	uint64_t epoch;
	int64_t time;
	unsigned keep_snapshots;
	unsigned reuse_s; /* --snapshot-reuse: how long the state is kept */
	uint8_t *buf;     /* SNAP_BUF_SIZE bytes, the loop's */
	atomic_bool cancel;
	/* Results. */
	enum job_end end;
	int rc;
	uint64_t keep_from; /* the oldest snapshot kept; 0: unknown */
	uint64_t records;   /* records applied after the base snapshot */
	uint64_t base_lsn;  /* the snapshot it started from; 0: none */
	bool reused;        /* started from the state the worker kept */
	uint64_t cpu_us;    /* the worker's CPU time for it */
	uint64_t entries;   /* the snapshot written: its entries ... */
	uint64_t bytes;     /* ... and its file's size */
};

/* The thread and what it shares with the loop, under `mu`. */
struct bgsnap_worker {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct bgsnap_job *todo; /* handed over, not yet taken */
	struct bgsnap_job *done; /* built (or failed), not yet reaped */
	bool quit;
	bool forget; /* the loop says: drop the state kept */
	int fd;      /* the eventfd written when a job is done */
	/* The worker's alone: the state of the last snapshot it wrote, at
	 * kept_lsn, kept until kept_until (CLOCK_MONOTONIC); NULL: none. */
	struct queue *kept;
	uint64_t kept_lsn;
	struct timespec kept_until;
};

int
bgsnap_error(int rc)
{
	if (rc == -ENOSPC || rc == -EDQUOT || rc == SLUICE_ENOSPC)
		return SLUICE_ENOSPC;
	return rc > 0 ? rc : SLUICE_ELOG;
}

void
bgsnap_init(struct bgsnap *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

bool
bgsnap_due(const struct core *c)
{
	struct wal_stats ws;

	if (bgsnap_busy(&c->snap))
		return false;
	wal_stats(c->wal, &ws);
	return snapdue(&(struct snapdue_cfg) { c->cfg->snap_records,
	                   c->cfg->snap_bytes, c->cfg->snap_growth },
	    &c->snap.base, ws.records + c->puts_extra - c->snap.records_at_last,
	    ws.bytes - c->snap.bytes_at_last);
}

/* Tells the worker to drop the state it kept: the data directory is about
 * to change under it, or the state was recovered anew. */
static void
forget(struct bgsnap *s)
{
	struct bgsnap_worker *wk = s->worker;

	if (wk == NULL)
		return;
	pthread_mutex_lock(&wk->mu);
	wk->forget = true;
	pthread_cond_broadcast(&wk->cv);
	pthread_mutex_unlock(&wk->mu);
}

void
bgsnap_recovered(struct core *c, const struct recover_result *res)
{
	struct bgsnap *s = &c->snap;
	char path[PATH_MAX];
	struct stat st;

	forget(s);
	s->last_lsn = res->snap_lsn;
	s->base.entries = res->snap_entries;
	s->base.bytes = 0;
	if (res->snap_lsn != 0 &&
	    snap_path(path, sizeof(path), c->cfg->data_dir, res->snap_lsn) ==
	        0 &&
	    stat(path, &st) == 0)
		s->base.bytes = (uint64_t)st.st_size;
	/* The log's counters start at zero: the records replayed are
	 * counted before them (unsigned, so since - (0 - n) = since + n);
	 * their PUTS items beyond one are in c->puts_extra already. */
	s->records_at_last = 0 - res->records;
	s->bytes_at_last = 0;
}

/* Tasks finished so far (acked, deleted, flushed). */
static uint64_t
tasks_done(const struct queue_stats *st)
{
	return st->ctr.ack + st->ctr.del;
}

bool
bgsnap_due_for_room(struct core *c, bool start)
{
	struct queue_stats st;
	struct wal_stats ws;
	int64_t now = clock_mono_ms();
	uint64_t done;

	if (!c->full.on)
		return false;
	if (bgsnap_busy(&c->snap) || wal_removing(c->wal))
		return !start; /* one is under way: its removal is wanted */
	if (wal_last_lsn(c->wal) == c->snap.last_lsn ||
	    queue_stats(c->q, c->now, &st) != 0)
		return false;
	wal_stats(c->wal, &ws);
	if (ws.segments < 2)
		return false; /* only the segment being written: no room */
	done = tasks_done(&st) - c->full.done_mark;
	if (done == 0 || done < st.tasks)
		/* a snapshot would hold most of the log: not yet. Without
		 * `start`, tasks finishing since the last one are a drain
		 * under way, whose end will be due: still watched, even
		 * once the refusal ended (a drain's first acks, a spare
		 * made) */
		return !start && done > 0;
	if (!start)
		return true;
	if (now < c->full.next_ms)
		return false;
	c->full.next_ms = now + ROOM_SNAP_MS;
	log_info("snap",
	    "snapshot for room: the log is full and tasks finished since "
	    "the last snapshot done=%" PRIu64 " tasks=%" PRIu64
	    " segments=%" PRIu64,
	    done, st.tasks, ws.segments);
	return true;
}

/* Answers every snapshot request: with the LSN covered, or an error,
 * `why` (NULL: the error's own text); for the local log alone with
 * `local` (the request being handled, a read), else at the commit LSN
 * as every answer the loop sends later. */
static void
answer_waiters(struct core *c, int rc, const char *why, bool local)
{
	struct core_reply_how how = { .local = local };
	struct snap_waiter *w;

	while ((w = c->snap.waiters) != NULL) {
		c->snap.waiters = w->next;
		if (rc == 0) {
			struct msg_rep rep = { .op = MSG_OP_SNAPSHOT };

			rep.lsn = c->snap.last_lsn;
			buf_reset(&c->out);
			if (msg_encode_rep(&c->out, &rep) == 0)
				core_reply_as(c, w->ctx, &how);
			else
				face_ctx_drop(w->ctx);
		} else {
			core_reply_err_as(c, w->ctx, &how, MSG_OP_SNAPSHOT,
			    bgsnap_error(rc), "snapshot failed: %s",
			    why != NULL ? why : sluice_strerror(rc));
		}
		free(w);
	}
}

/* ---- The thread -------------------------------------------------------- */

/* recover_live's callbacks: queue_recover_ops on the thread's queue, with
 * a look at the cancel flag now and then. */
struct build {
	struct queue *q;
	struct bgsnap_job *job;
	uint32_t n;     /* records or entries since the last look */
	uint64_t bytes; /* their bytes */
};

static bool
cancelled_now(const struct build *b)
{
	return atomic_load_explicit(&b->job->cancel, memory_order_relaxed);
}

/* cancelled_now, looked at once CANCEL_EVERY items or CANCEL_BYTES
 * bytes went by since the last look. */
static bool
cancelled(struct build *b, size_t bytes)
{
	b->bytes += bytes;
	if (++b->n < CANCEL_EVERY && b->bytes < CANCEL_BYTES)
		return false;
	b->n = 0;
	b->bytes = 0;
	return cancelled_now(b);
}

static int
build_entry(void *arg, uint16_t type, const void *data, size_t len)
{
	struct build *b = arg;

	if (cancelled(b, len))
		return SLUICE_ESHUTDOWN;
	return queue_recover_ops.snap_entry(b->q, type, data, len);
}

static int
build_reset(void *arg)
{
	struct build *b = arg;

	return queue_recover_ops.reset(b->q);
}

static int
build_apply(const struct rec_hdr *h, const void *body, void *arg)
{
	struct build *b = arg;

	if (cancelled(b, h->len))
		return SLUICE_ESHUTDOWN;
	return queue_recover_ops.apply(h, body, b->q);
}

static const char *
build_check(void *arg, uint64_t name_lsn, const struct snap_info *si)
{
	struct build *b = arg;

	return queue_recover_ops.snap_check(b->q, name_lsn, si);
}

static const struct recover_ops build_ops = { build_entry, build_apply,
	build_reset, build_check };

struct emit_ctx {
	struct build *b;
	struct snap_writer *w;
};

static int
emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	struct emit_ctx *e = arg;

	if (cancelled(e->b, alen + blen))
		return SLUICE_ESHUTDOWN;
	return snap_writer_add(e->w, type, a, alen, b, blen);
}

/* snap_load's visit of the read-back: only a look at the cancel flag. */
static int
reread(void *arg, uint16_t type, const void *data, size_t len)
{
	(void)type;
	(void)data;
	return cancelled(arg, len) ? SLUICE_ESHUTDOWN : 0;
}

/* The LSN of the oldest snapshot to keep: the newest `keep` of them stay,
 * so that a damaged newest one falls back to the one before. Returns 0 or
 * -errno. */
static int
kept_from(const struct bgsnap_job *j, uint64_t *out)
{
	unsigned keep = j->keep_snapshots ? j->keep_snapshots : 1;
	uint64_t *lsns = NULL;
	size_t n = 0;
	int rc = snap_list(j->dir, &lsns, &n);

	if (rc != 0)
		return rc;
	*out = n == 0 ? j->lsn : n <= keep ? lsns[0] : lsns[n - keep];
	free(lsns);
	return 0;
}

/* Writes the state of `q` as the snapshot of j->lsn under its temporary
 * name, and reads it back whole. */
static void
write_snapshot(struct bgsnap_job *j, struct build *b)
{
	struct snap_writer w;
	struct emit_ctx e = { b, &w };
	struct stat st;
	int rc;

	rc = snap_writer_open(
	    &w, j->dir, j->lsn, j->epoch, j->time, j->buf, SNAP_BUF_SIZE);
	if (rc != 0)
		goto fail;
	rc = queue_snapshot_write(b->q, emit, &e);
	if (rc == 0 && cancelled_now(b))
		rc = SLUICE_ESHUTDOWN; /* its sync would only delay the stop */
	if (rc == 0) {
		j->entries = w.entries;
		rc = snap_writer_finish(&w);
	} else {
		snap_writer_abort(&w);
	}
	if (rc != 0)
		goto fail;
	if (stat(w.tmp, &st) == 0)
		j->bytes = (uint64_t)st.st_size;
	/* Read back whole before the older ones may go (a stop ends the
	 * read, and the file goes with it). */
	if ((rc = snap_load(w.tmp, reread, b, NULL, NULL)) != 0) {
		unlink(w.tmp);
		if (rc == SLUICE_ESHUTDOWN)
			goto fail;
		j->end = JOB_UNREADABLE;
		return;
	}
	j->end = JOB_OK;
	return;
fail:
	j->rc = rc;
	j->end = rc == -ENOSPC || rc == -EDQUOT ? JOB_NOSPC : JOB_FAILED;
}

/* Whether the newest snapshot on disk at or below `upto` is the one at
 * `lsn`: the state kept at lsn is then what a rebuild would start from. */
static bool
newest_is(const char *dir, uint64_t upto, uint64_t lsn)
{
	uint64_t *lsns = NULL, newest = 0;
	size_t n = 0;

	if (snap_list(dir, &lsns, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lsns[i] <= upto && lsns[i] > newest)
			newest = lsns[i];
	free(lsns);
	return newest == lsn;
}

/* Drops the state the worker kept, if any. */
static void
drop_kept(struct bgsnap_worker *wk)
{
	queue_free(wk->kept);
	wk->kept = NULL;
	wk->kept_lsn = 0;
}

/* The state to build j on: the one kept, when it may be used (its
 * snapshot still the newest below j's LSN), else a new empty queue. */
static struct queue *
base_for(struct bgsnap_worker *wk, struct bgsnap_job *j)
{
	struct queue *q = wk->kept;

	if (q != NULL && j->reuse_s > 0 && wk->kept_lsn < j->lsn &&
	    newest_is(j->dir, j->lsn, wk->kept_lsn)) {
		wk->kept = NULL;
		j->reused = true;
		return q;
	}
	drop_kept(wk);
	return queue_new(NULL);
}

/* Keeps q, the state at j's LSN just published, for j->reuse_s seconds. */
static void
keep(struct bgsnap_worker *wk, struct bgsnap_job *j, struct queue *q)
{
	struct timespec now;

	if (j->reuse_s == 0) {
		queue_free(q);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	wk->kept = q;
	wk->kept_lsn = j->lsn;
	wk->kept_until = now;
	wk->kept_until.tv_sec += (time_t)j->reuse_s;
}

static void
run(struct bgsnap_worker *wk, struct bgsnap_job *j)
{
	struct build b = { NULL, j, 0, 0 };
	struct recover_result res;
	uint64_t from = wk->kept_lsn;
	int rc;

	b.q = base_for(wk, j);
	if (b.q == NULL) {
		j->rc = SLUICE_ENOMEM;
		j->end = JOB_FAILED;
		return;
	}
	if (j->reused)
		rc = recover_live_after(
		    j->dir, from, j->lsn, &build_ops, &b, &res);
	else
		rc = recover_live(j->dir, j->lsn, &build_ops, &b, &res);
	j->records = res.records;
	j->base_lsn = res.snap_lsn;
	if (rc != 0) {
		j->rc = rc;
		j->end = JOB_FAILED;
	} else {
		write_snapshot(j, &b);
	}
	if (j->end == JOB_OK && (rc = snap_publish(j->dir, j->lsn)) != 0) {
		char path[PATH_MAX + 16];

		if (snap_path(path, PATH_MAX, j->dir, j->lsn) == 0) {
			strcat(path, ".inprogress");
			unlink(path);
		}
		j->rc = rc;
		j->end = JOB_UNPUBLISHED;
	}
	/* The copy's memory goes back to the system as it is freed: it lies
	 * in the worker's own malloc arena, whose heaps are trimmed (not
	 * malloc_trim(), which would walk, and lock, the loop's arena). */
	if (j->end != JOB_OK) {
		queue_free(b.q);
		return;
	}
	keep(wk, j, b.q);
	if ((rc = kept_from(j, &j->keep_from)) == 0)
		rc = snap_remove_before(j->dir, j->keep_from);
	if (rc != 0) {
		j->rc = rc;
		j->keep_from = 0; /* keep every segment too */
	}
}

/* The calling thread's CPU time, in microseconds. */
static uint64_t
thread_cpu_us(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Waits, with wk->mu held, for a job, a quit or a forget; the state kept
 * is dropped once its time is up. */
static void
wait_for_work(struct bgsnap_worker *wk)
{
	while (!wk->quit && wk->todo == NULL && !wk->forget) {
		if (wk->kept == NULL) {
			pthread_cond_wait(&wk->cv, &wk->mu);
			continue;
		}
		if (pthread_cond_timedwait(&wk->cv, &wk->mu, &wk->kept_until) ==
		        ETIMEDOUT &&
		    wk->todo == NULL && !wk->quit) {
			pthread_mutex_unlock(&wk->mu);
			log_debug("snap",
			    "the state of the last snapshot is given back "
			    "lsn=%" PRIu64,
			    wk->kept_lsn);
			drop_kept(wk);
			pthread_mutex_lock(&wk->mu);
		}
	}
}

/* The worker: waits for a job, builds it, hands it back and says so
 * through the eventfd; until told to quit. */
static void *
work(void *arg)
{
	struct bgsnap_worker *wk = arg;
	uint64_t one = 1;
	ssize_t n;

	/* The loop comes first on a busy machine (Linux: a thread's own
	 * nice value, set through its thread id). */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), THREAD_NICE);
	pthread_mutex_lock(&wk->mu);
	for (;;) {
		struct bgsnap_job *j;

		wait_for_work(wk);
		if (wk->forget) {
			wk->forget = false;
			pthread_mutex_unlock(&wk->mu);
			drop_kept(wk);
			pthread_mutex_lock(&wk->mu);
			continue;
		}
		if ((j = wk->todo) == NULL)
			break; /* quit, with nothing handed over */
		wk->todo = NULL;
		pthread_mutex_unlock(&wk->mu);
		j->cpu_us = thread_cpu_us();
		run(wk, j);
		j->cpu_us = thread_cpu_us() - j->cpu_us;
		pthread_mutex_lock(&wk->mu);
		wk->done = j;
		pthread_cond_broadcast(&wk->cv); /* bgsnap_stop may wait */
		do
			n = write(wk->fd, &one, sizeof(one));
		while (n < 0 && errno == EINTR);
	}
	pthread_mutex_unlock(&wk->mu);
	drop_kept(wk);
	return NULL;
}

/* Makes the worker. Returns 0 or a positive errno (pthread's). Every
 * signal is blocked in it: the core reads the ones it handles from a
 * signalfd, and any other thread that took one would end the process. */
static int
worker_new(struct bgsnap *s)
{
	struct bgsnap_worker *wk = calloc(1, sizeof(*wk));
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	if (wk == NULL)
		return ENOMEM;
	pthread_mutex_init(&wk->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wk->cv, &ca);
	pthread_condattr_destroy(&ca);
	wk->fd = s->fd;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&wk->thread, NULL, work, wk);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_cond_destroy(&wk->cv);
		pthread_mutex_destroy(&wk->mu);
		free(wk);
		return rc;
	}
	(void)pthread_setname_np(wk->thread, "sluiced-snap");
	s->worker = wk;
	return 0;
}

/* Stops the worker once its job (if any) is done, and frees it. */
static void
worker_delete(struct bgsnap *s)
{
	struct bgsnap_worker *wk = s->worker;

	if (wk == NULL)
		return;
	pthread_mutex_lock(&wk->mu);
	wk->quit = true;
	pthread_cond_broadcast(&wk->cv);
	pthread_mutex_unlock(&wk->mu);
	pthread_join(wk->thread, NULL);
	free(wk->todo);
	free(wk->done);
	pthread_cond_destroy(&wk->cv);
	pthread_mutex_destroy(&wk->mu);
	free(wk);
	s->worker = NULL;
}

/* ---- The loop's side ----------------------------------------------------- */

int
bgsnap_open(struct bgsnap *s)
{
	int rc;

	if (s->fd < 0 && (s->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return -errno;
	if (s->worker == NULL && (rc = worker_new(s)) != 0)
		return -rc;
	return 0;
}

int
bgsnap_start(struct core *c)
{
	struct bgsnap *s = &c->snap;
	struct wal_stats ws;
	struct queue_stats st;

	if (bgsnap_busy(s))
		return 0;
	if (wal_poisoned(c->wal))
		return SLUICE_ELOG;
	if (s->buf == NULL && (s->buf = malloc(SNAP_BUF_SIZE)) == NULL)
		return -ENOMEM;
	if (s->fd < 0 && (s->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return -errno;
	wal_stats(c->wal, &ws);
	s->records_at_last = ws.records + c->puts_extra;
	s->bytes_at_last = ws.bytes;
	if (queue_stats(c->q, c->now, &st) == 0)
		c->full.done_mark = tasks_done(&st);
	s->lsn = wal_last_lsn(c->wal);
	if (s->lsn == s->last_lsn) {
		/* Nothing new since the last one: it already covers all. */
		answer_waiters(c, 0, NULL, true);
		return 0;
	}
	s->epoch = wal_epoch(c->wal);
	s->time = c->now;
	s->started_ns = clock_mono_ns();
	s->waiting = true;
	bgsnap_launch(c);
	return 0;
}

void
bgsnap_launch(struct core *c)
{
	struct bgsnap *s = &c->snap;
	struct bgsnap_job *j;
	int64_t t0;
	int rc;

	if (!s->waiting)
		return;
	if (wal_poisoned(c->wal)) {
		s->waiting = false;
		answer_waiters(c, SLUICE_ELOG,
		    "the log failed before the snapshot could start", false);
		return;
	}
	if (wal_durable_lsn(c->wal) < s->lsn)
		return;
	t0 = clock_mono_ns();
	s->waiting = false;
	j = calloc(1, sizeof(*j));
	if (j == NULL) {
		rc = SLUICE_ENOMEM;
		goto fail;
	}
	snprintf(j->dir, sizeof(j->dir), "%s", c->cfg->data_dir);
	j->lsn = s->lsn;
	j->epoch = s->epoch;
	j->time = s->time;
	j->keep_snapshots = c->cfg->keep_snapshots;
	j->reuse_s = c->cfg->snap_reuse_s;
	j->buf = s->buf;
	atomic_init(&j->cancel, false);
	if (s->worker == NULL && (rc = bgsnap_open(s)) != 0) {
		free(j);
		goto fail;
	}
	pthread_mutex_lock(&s->worker->mu);
	s->worker->todo = j;
	pthread_cond_broadcast(&s->worker->cv);
	pthread_mutex_unlock(&s->worker->mu);
	s->job = j;
	s->running = true;
	s->pause_us = (uint64_t)(clock_mono_ns() - t0) / 1000;
	log_debug("snap",
	    "building a snapshot lsn=%" PRIu64 " pause_us=%" PRIu64, s->lsn,
	    s->pause_us);
	return;
fail:
	log_err("snap", "cannot start a snapshot's worker error=\"%s\"",
	    sluice_strerror(rc));
	answer_waiters(c, rc, NULL, false);
}

/* The first LSN the segments must keep: what the snapshot does not cover,
 * and what connected followers have not acked yet, up to
 * REPL_RETAIN_SEGMENTS segments more (past that, a follower that far
 * behind loads a snapshot instead). */
static uint64_t
retain_from(struct core *c, uint64_t after_snap)
{
	uint64_t need =
	    c->repl_hook != NULL ? c->repl_hook->needed_lsn(c) : UINT64_MAX;
	uint64_t seg = c->cfg->seg_size ? c->cfg->seg_size : SEG_SIZE_DEFAULT;
	uint64_t span = REPL_RETAIN_SEGMENTS * seg / 64; /* records, at
	                                                  * least */

	if (need >= after_snap)
		return after_snap;
	if (after_snap - need > span)
		return after_snap - span;
	return need;
}

/* The job the worker is done with, or NULL. */
static struct bgsnap_job *
take_done(struct bgsnap *s)
{
	struct bgsnap_worker *wk = s->worker;
	struct bgsnap_job *j;
	uint64_t v;

	if (wk == NULL)
		return NULL;
	while (read(s->fd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&wk->mu);
	j = wk->done;
	wk->done = NULL;
	pthread_mutex_unlock(&wk->mu);
	if (j != NULL) {
		s->running = false;
		s->job = NULL;
	}
	return j;
}

/* A published snapshot: the log segments it makes needless go. */
static void
published(struct core *c, const struct bgsnap_job *j)
{
	struct bgsnap *s = &c->snap;
	uint64_t keep = j->keep_from, below, remove_us;
	int64_t t0;
	int rc;

	s->last_lsn = s->lsn;
	s->last_at = clock_now_ms();
	s->last_ms = (clock_mono_ns() - s->started_ns) / 1000000;
	s->base.entries = j->entries;
	s->base.bytes = j->bytes;
	if (j->rc != 0)
		log_warn("snap", "cannot remove older snapshots error=\"%s\"",
		    sluice_strerror(j->rc));
	/* The oldest snapshot kept needs the segments after it; while the
	 * log is full, room comes first: the newest one's only. */
	if (c->full.on)
		keep = s->lsn;
	t0 = clock_mono_ns();
	below = keep == 0 ? 0 : retain_from(c, keep + 1);
	rc = below == 0 ? 0
	                : wal_remove_later(c->wal, below,
	                      c->full.on ? 0 : c->cfg->keep_segments);
	remove_us = (uint64_t)(clock_mono_ns() - t0) / 1000;
	if (rc < 0)
		log_warn("snap", "cannot remove old segments error=\"%s\"",
		    strerror(-rc));
	log_info("snap",
	    "snapshot written lsn=%" PRIu64 " ms=%" PRId64 " cpu_ms=%" PRIu64
	    " pause_us=%" PRIu64 " base_lsn=%" PRIu64
	    " base=%s records=%" PRIu64 " entries=%" PRIu64 " bytes=%" PRIu64
	    " next_records=%" PRIu64 " below_lsn=%" PRIu64
	    " remove_us=%" PRIu64,
	    s->lsn, s->last_ms, j->cpu_us / 1000, s->pause_us, j->base_lsn,
	    j->reused ? "kept" : "snapshot", j->records, j->entries, j->bytes,
	    snapdue_limit(
	        c->cfg->snap_records, j->entries, c->cfg->snap_growth),
	    below, remove_us);
	answer_waiters(c, 0, NULL, false);
}

void
bgsnap_reap(struct core *c)
{
	struct bgsnap *s = &c->snap;
	struct bgsnap_job *j;

	if (!s->running || (j = take_done(s)) == NULL)
		return;
	switch (j->end) {
	case JOB_OK:
		published(c, j);
		break;
	case JOB_NOSPC:
		log_warn("snap",
		    "snapshot failed: no room for it on the disk lsn=%" PRIu64
		    "; the log keeps its segments until one fits",
		    s->lsn);
		answer_waiters(c, SLUICE_ENOSPC,
		    "no room for it on the disk; the log is fine and the "
		    "node takes writes",
		    false);
		break;
	case JOB_UNREADABLE:
		log_err("snap",
		    "snapshot written but it does not read back whole "
		    "lsn=%" PRIu64 "; removed, the older snapshots and their "
		    "segments stay (check the disk)",
		    s->lsn);
		answer_waiters(c, SLUICE_ECORRUPT,
		    "it was written but does not read back whole (check the "
		    "disk); the older snapshots stay, the log is fine",
		    false);
		break;
	case JOB_UNPUBLISHED:
		log_err("snap",
		    "cannot publish the snapshot lsn=%" PRIu64 " error=\"%s\"",
		    s->lsn, sluice_strerror(j->rc));
		answer_waiters(c, j->rc, NULL, false);
		break;
	default:
		log_err("snap", "snapshot failed lsn=%" PRIu64 " error=\"%s\"",
		    s->lsn, sluice_strerror(j->rc));
		answer_waiters(c, SLUICE_ELOG,
		    "the snapshot's writer failed (the log is fine; see the "
		    "server's log)",
		    false);
		break;
	}
	free(j);
}

void
bgsnap_stop(struct core *c)
{
	struct bgsnap *s = &c->snap;
	struct bgsnap_worker *wk = s->worker;

	if (s->running && wk != NULL) {
		atomic_store(&s->job->cancel, true);
		pthread_mutex_lock(&wk->mu);
		while (wk->done == NULL)
			pthread_cond_wait(&wk->cv, &wk->mu);
		pthread_mutex_unlock(&wk->mu);
		free(take_done(s)); /* what it left unfinished is removed */
	}
	forget(s);
	s->running = false;
	s->job = NULL;
	s->waiting = false;
	answer_waiters(c, SLUICE_ESHUTDOWN, NULL, false);
}

void
bgsnap_fini(struct core *c)
{
	struct bgsnap *s = &c->snap;

	bgsnap_stop(c);
	worker_delete(s);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->buf);
	s->buf = NULL;
}
