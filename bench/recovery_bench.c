/* recovery_bench - what a restart costs: replay speed of the log, the
 * snapshot (written in-process, and the fork() that stalls the server when
 * it snapshots in the background), restart from snapshot + tail, and the
 * memory a live task takes.
 *
 *   recovery_bench --dir DIR --live N [--churn M] [--tail T]
 *                  [--payload BYTES] [--json]
 *
 * Builds a log in DIR (which must not exist) with N live tasks of BYTES
 * bytes (put) and M finished ones (put, take, ack: three records each),
 * through the real writer and the real queue, writes its snapshot, puts
 * T more (1,000 unless told: the log a restart replays after the
 * snapshot; a long load can leave millions), then:
 *   replay    a fresh queue rebuilt from the log alone: records/s;
 *   snapshot  the live queue written as a snapshot file: ms, MB;
 *   fork      fork() of this process holding the queue: ms (the stall a
 *             snapshot by fork would cost the server; it no longer does);
 *   build     the snapshot as the server now makes it: a thread rebuilds
 *             the state from the snapshot plus the log after it (the
 *             tail, the writer still open) and writes it: ms, and
 *             what handing it to the waiting thread cost the caller (the
 *             loop's pause);
 *   restart   a fresh queue from the snapshot plus the log after it, and
 *             the writer opened where the log ends: ms;
 *   memory    resident bytes per live task, and beyond its payload.
 * The last line is JSON. Nothing here is a test: figures only.
 *
 *   recovery_bench --replay DIR [--rounds R] [--restart]
 *
 * replays the log of a directory an earlier run left (its snapshots
 * ignored) R times into fresh queues and prints records/s and CPU ms of
 * each, and the loading thread's own user and system CPU and page faults
 * (the task-fill worker's are the rest): the replay alone, to profile
 * (perf, callgrind) or compare builds on one log. With --restart, from
 * its newest snapshot and the log after it instead, as a restart does
 * (the writer is not opened). Every replay and restart here ends as
 * sluiced ends its recovery, with queue_expect_done (the task memory made
 * ahead for the load settles), inside the time measured. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log/recover.h"
#include "log/snap.h"
#include "log/wal.h"
#include "queue/qrecover.h"
#include "queue/queue.h"
#include "queue/tslab.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/log.h"

enum { SYNC_EVERY = 1 << 16, SNAP_BUF = 1 << 20 };

struct opts {
	const char *dir;
	const char *replay;
	int rounds;
	bool restart;
	uint64_t live;
	uint64_t churn;
	uint64_t tail;
	size_t payload;
	bool json;
};

static double
ms_since(int64_t t0)
{
	return (double)(clock_mono_ns() - t0) / 1e6;
}

/* CPU time of the process (user + system), ms: on a shared machine it
 * moves less than the wall clock with what else runs. */
static double
cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* This thread's user and system CPU time (ms) and page faults: the
 * loading thread's own share of a restart, apart from the worker that
 * faults task memory in beside it (tslab.c). */
struct thread_use {
	double user_ms;
	double sys_ms;
	long faults;
};

static struct thread_use
thread_use(void)
{
	struct rusage ru;
	struct thread_use u = { 0, 0, 0 };

	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		u.user_ms = (double)ru.ru_utime.tv_sec * 1e3 +
		    (double)ru.ru_utime.tv_usec / 1e3;
		u.sys_ms = (double)ru.ru_stime.tv_sec * 1e3 +
		    (double)ru.ru_stime.tv_usec / 1e3;
		u.faults = ru.ru_minflt + ru.ru_majflt;
	}
	return u;
}

/* Resident bytes of the process. */
static size_t
rss_bytes(void)
{
	unsigned long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%lu %lu", &size, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (size_t)sysconf(_SC_PAGESIZE);
}

/* Bytes the heap holds (mallinfo2: arena + mmapped) and the task slabs
 * touched (tslab.h). */
static size_t
heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd + tslab_bytes();
}

static void
die(const char *what, int rc)
{
	fprintf(stderr, "recovery_bench: %s: %s\n", what, sluice_strerror(rc));
	exit(1);
}

struct builder {
	struct queue *q;
	struct wal *wal;
	struct buf body;
	int64_t now;
	uint64_t n;
};

static void
commit(struct builder *b, const struct qrec *r)
{
	uint64_t lsn;
	int rc;

	buf_reset(&b->body);
	if ((rc = qrec_encode(r, &b->body)) != 0)
		die("encode", rc);
	rc = wal_append(
	    b->wal, r->type, b->now, b->body.data, b->body.len, 0, &lsn);
	if (rc != 0)
		die("append", rc);
	if ((rc = queue_apply(b->q, lsn, b->now, r)) != 0)
		die("apply", rc);
	if (++b->n % SYNC_EVERY == 0) {
		wal_submit(b->wal);
		if ((rc = wal_sync(b->wal, 60000)) != 0)
			die("sync", rc);
	}
}

static uint64_t
put(struct builder *b, const char *payload, size_t len)
{
	struct queue_put_req p;
	struct queue_put_res res;
	struct qrec r;
	int rc;

	queue_put_req_init(&p);
	p.tube = "bench";
	p.tube_len = 5;
	p.payload = payload;
	p.payload_len = len;
	if ((rc = queue_decide_put(b->q, b->now, &p, &r, &res)) != 0)
		die("put", rc);
	commit(b, &r);
	return res.id;
}

static void
build(const struct opts *o, struct builder *b)
{
	struct queue_str tube = { "bench", 5 };
	struct queue_take_req t = { &tube, 1, 1, true };
	struct wal_config wc = { 0 };
	char *payload = calloc(1, o->payload + 1);
	struct qrec r;
	int rc;

	memset(payload, 'x', o->payload);
	wc.dir = o->dir;
	wc.fsync = WAL_FSYNC_NEVER;
	wc.seg_size = 256u << 20;
	if ((rc = wal_open(&wc, NULL, &b->wal)) != 0)
		die("wal_open", rc);
	b->q = queue_new(NULL);
	buf_init(&b->body);
	b->now = clock_now_ms();
	for (uint64_t i = 0; i < o->churn; i++) {
		struct queue_ack_req a = { 0 };

		put(b, payload, o->payload);
		if ((rc = queue_decide_take(b->q, b->now, &t, &r)) != 0)
			die("take", rc);
		commit(b, &r);
		a.id = r.u.take.id;
		if ((rc = queue_decide_ack(b->q, b->now, &a, &r)) != 0)
			die("ack", rc);
		commit(b, &r);
	}
	for (uint64_t i = 0; i < o->live; i++)
		put(b, payload, o->payload);
	wal_submit(b->wal);
	if ((rc = wal_sync(b->wal, 60000)) != 0)
		die("sync", rc);
	free(payload);
}

static int
emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	return snap_writer_add(arg, type, a, alen, b, blen);
}

/* The server's background snapshot (bgsnap.c), bare: the state at `lsn`
 * from the newest snapshot and the log, written as the snapshot of lsn. */
struct build_job {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool go;
	const char *dir;
	uint64_t lsn;
	uint64_t epoch;
	int64_t now;
	int rc;
	double ms;
	double cpu_ms;
	uint64_t records;
};

static double
thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *
build_thread(void *arg)
{
	struct build_job *j = arg;
	struct recover_result res;
	struct snap_writer sw;
	uint8_t *buf = malloc(SNAP_BUF);
	struct queue *q;
	int64_t t0;
	double c0;

	/* A worker waiting for its job, as the server's. */
	pthread_mutex_lock(&j->mu);
	while (!j->go)
		pthread_cond_wait(&j->cv, &j->mu);
	pthread_mutex_unlock(&j->mu);
	t0 = clock_mono_ns();
	c0 = thread_cpu_ms();
	q = queue_new(NULL);

	j->rc = recover_live(j->dir, j->lsn, &queue_recover_ops, q, &res);
	j->records = res.records;
	if (j->rc == 0)
		j->rc = snap_writer_open(
		    &sw, j->dir, j->lsn, j->epoch, j->now, buf, SNAP_BUF);
	if (j->rc == 0 && (j->rc = queue_snapshot_write(q, emit, &sw)) == 0)
		j->rc = snap_writer_commit(&sw);
	queue_free(q);
	free(buf);
	j->ms = ms_since(t0);
	j->cpu_ms = thread_cpu_ms() - c0;
	return NULL;
}

static void
usage(void)
{
	fputs("usage: recovery_bench --dir DIR --live N [--churn M] "
	      "[--tail T] [--payload BYTES] [--json]\n"
	      "       recovery_bench --replay DIR [--rounds R] [--restart]\n",
	    stderr);
	exit(2);
}

/* Replays the log of `dir` alone (RECOVER_NO_SNAP-like: its snapshots
 * hidden by a rename for the time) `rounds` times. */
static void
replay_only(const char *dir, int rounds, bool restart)
{
	uint64_t *lsns = NULL;
	size_t n = 0;
	char path[4096], hidden[4200];
	int rc;

	if ((rc = snap_list(dir, &lsns, &n)) != 0)
		die("snap_list", rc);
	if (restart)
		n = 0; /* none hidden */
	for (size_t i = 0; i < n; i++) {
		snap_path(path, sizeof(path), dir, lsns[i]);
		snprintf(hidden, sizeof(hidden), "%s.hidden", path);
		rename(path, hidden);
	}
	for (int i = 0; i < rounds; i++) {
		struct recover_result res;
		struct queue *q = queue_new(NULL);
		struct thread_use u0 = thread_use(), u1;
		int64_t t0 = clock_mono_ns();
		double c0 = cpu_ms(), ms;

		rc = recover(dir, 0, 0, &queue_recover_ops, q, &res);
		if (rc != 0)
			die("replay", rc);
		queue_expect_done(q); /* as sluiced ends its recovery */
		ms = ms_since(t0);
		u1 = thread_use();
		printf("%s%" PRIu64 " records, %.0f ms (cpu "
		       "%.0f), %.2f M records/s; loading thread: user %.0f "
		       "ms, sys %.0f ms, %ld page faults\n",
		    restart ? "restart (snap+log)  " : "replay (log only)   ",
		    res.records, ms, cpu_ms() - c0,
		    (double)res.records / ms / 1e3, u1.user_ms - u0.user_ms,
		    u1.sys_ms - u0.sys_ms, u1.faults - u0.faults);
		queue_free(q);
	}
	for (size_t i = 0; i < n; i++) {
		snap_path(path, sizeof(path), dir, lsns[i]);
		snprintf(hidden, sizeof(hidden), "%s.hidden", path);
		rename(hidden, path);
	}
	free(lsns);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = { { "dir", 1, NULL, 'd' },
		{ "live", 1, NULL, 'l' }, { "churn", 1, NULL, 'c' },
		{ "payload", 1, NULL, 'p' }, { "json", 0, NULL, 'j' },
		{ "replay", 1, NULL, 'r' }, { "rounds", 1, NULL, 'R' },
		{ "restart", 0, NULL, 'S' }, { "tail", 1, NULL, 't' },
		{ NULL, 0, NULL, 0 } };
	struct opts o = { NULL, NULL, 1, false, 0, 0, 1000, 100, false };
	struct recover_result res;
	struct builder b = { 0 };
	struct snap_writer sw;
	struct wal_config wc = { 0 };
	struct wal *w2;
	struct queue *q;
	struct stat st;
	char path[4096];
	uint8_t *sbuf;
	size_t heap0, heap1;
	double build_ms, replay_ms, snap_ms, fork_ms, restart_ms, pause_ms;
	struct build_job bj = { .mu = PTHREAD_MUTEX_INITIALIZER,
		.cv = PTHREAD_COND_INITIALIZER };
	pthread_t thr;
	size_t rss0, rss1;
	double c0, replay_cpu, snap_cpu, restart_cpu;
	uint64_t records;
	int64_t t0;
	pid_t pid;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.dir = optarg;
			break;
		case 'l':
			o.live = strtoull(optarg, NULL, 10);
			break;
		case 'c':
			o.churn = strtoull(optarg, NULL, 10);
			break;
		case 't':
			o.tail = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			o.payload = strtoull(optarg, NULL, 10);
			break;
		case 'j':
			o.json = true;
			break;
		case 'r':
			o.replay = optarg;
			break;
		case 'R':
			o.rounds = atoi(optarg);
			break;
		case 'S':
			o.restart = true;
			break;
		default:
			usage();
		}
	}
	log_set_level(LOG_WARN);
	if (o.replay != NULL) {
		replay_only(o.replay, o.rounds > 0 ? o.rounds : 1, o.restart);
		return 0;
	}
	if (o.dir == NULL || stat(o.dir, &st) == 0)
		usage();

	heap0 = heap_bytes();
	t0 = clock_mono_ns();
	build(&o, &b);
	build_ms = ms_since(t0);
	heap1 = heap_bytes();
	records = b.n;

	/* Snapshot of the live queue, then the fork stall. */
	sbuf = malloc(SNAP_BUF);
	t0 = clock_mono_ns();
	c0 = cpu_ms();
	rc = snap_writer_open(&sw, o.dir, wal_last_lsn(b.wal), wal_epoch(b.wal),
	    b.now, sbuf, SNAP_BUF);
	if (rc == 0)
		rc = queue_snapshot_write(b.q, emit, &sw);
	if (rc == 0)
		rc = snap_writer_commit(&sw);
	if (rc != 0)
		die("snapshot", rc);
	snap_ms = ms_since(t0);
	snap_cpu = cpu_ms() - c0;
	snap_path(path, sizeof(path), o.dir, wal_last_lsn(b.wal));
	stat(path, &st);
	t0 = clock_mono_ns();
	pid = fork();
	if (pid == 0)
		_exit(0);
	fork_ms = ms_since(t0);
	waitpid(pid, NULL, 0);

	/* A tail after the snapshot, as a restart would find: short, or as
	 * long as the snapshot cadence lets it grow (--tail). */
	{
		char *tp = calloc(1, o.payload + 1);

		memset(tp, 't', o.payload);
		for (uint64_t i = 0; i < o.tail; i++)
			put(&b, tp, o.payload);
		free(tp);
	}
	wal_submit(b.wal);
	wal_sync(b.wal, 60000);

	/* The snapshot as the server makes it, beside the open writer. */
	bj.dir = o.dir;
	bj.lsn = wal_last_lsn(b.wal);
	bj.epoch = wal_epoch(b.wal);
	bj.now = b.now;
	rss0 = rss_bytes();
	if (pthread_create(&thr, NULL, build_thread, &bj) != 0)
		die("pthread_create", -EAGAIN);
	usleep(10000);
	t0 = clock_mono_ns();
	pthread_mutex_lock(&bj.mu);
	bj.go = true;
	pthread_cond_signal(&bj.cv);
	pthread_mutex_unlock(&bj.mu);
	pause_ms = ms_since(t0);
	pthread_join(thr, NULL);
	rss1 = rss_bytes();
	if (bj.rc != 0)
		die("background snapshot", bj.rc);
	{
		/* The restart below reads the first snapshot plus the tail. */
		char built[4096];

		snap_path(built, sizeof(built), o.dir, bj.lsn);
		unlink(built);
	}
	wal_close(b.wal);
	queue_free(b.q);
	buf_fini(&b.body);

	/* Restart: snapshot + tail, then the writer. */
	q = queue_new(NULL);
	t0 = clock_mono_ns();
	c0 = cpu_ms();
	rc = recover(o.dir, RECOVER_CUT, 0, &queue_recover_ops, q, &res);
	if (rc != 0)
		die("recover", rc);
	queue_expect_done(q);
	wc.dir = o.dir;
	wc.seg_size = 256u << 20;
	if ((rc = wal_open(&wc, &res.end, &w2)) != 0)
		die("wal_open", rc);
	restart_ms = ms_since(t0);
	restart_cpu = cpu_ms() - c0;
	wal_close(w2);
	queue_free(q);

	/* Replay from the log alone: hide the snapshot. */
	{
		char hidden[4200];

		snprintf(hidden, sizeof(hidden), "%s.hidden", path);
		rename(path, hidden);
		q = queue_new(NULL);
		t0 = clock_mono_ns();
		c0 = cpu_ms();
		rc = recover(o.dir, 0, 0, &queue_recover_ops, q, &res);
		if (rc != 0)
			die("replay", rc);
		queue_expect_done(q);
		replay_ms = ms_since(t0);
		replay_cpu = cpu_ms() - c0;
		queue_free(q);
		rename(hidden, path);
	}

	{
		double per =
		    o.live ? (double)(heap1 - heap0) / (double)o.live : 0;
		double rps = (double)res.records / (replay_ms / 1000.0);

		printf("live tasks          %" PRIu64 " of %zu bytes, %" PRIu64
		       " finished (%" PRIu64 " records)\n",
		    o.live, o.payload, o.churn, records);
		printf("build               %.0f ms\n", build_ms);
		printf("replay (log only)   %.0f ms (cpu %.0f), %.2f M "
		       "records/s\n",
		    replay_ms, replay_cpu, rps / 1e6);
		printf("snapshot write      %.0f ms (cpu %.0f), %.1f MB\n",
		    snap_ms, snap_cpu, (double)st.st_size / 1e6);
		printf("fork stall          %.2f ms (not paid: see build)\n",
		    fork_ms);
		printf("build (thread)      %.0f ms (cpu %.0f), %" PRIu64
		       " records after the snapshot, loop pause %.3f ms\n",
		    bj.ms, bj.cpu_ms, bj.records, pause_ms);
		printf("                    resident memory %.0f MB before it, "
		       "%.0f MB after it ended\n",
		    (double)rss0 / 1e6, (double)rss1 / 1e6);
		printf("restart (snap+tail) %.0f ms (cpu %.0f)\n", restart_ms,
		    restart_cpu);
		printf("memory per task     %.0f bytes (%.0f beyond the "
		       "payload)\n",
		    per, per - (double)o.payload);
		printf("{\"live\":%" PRIu64 ",\"churn\":%" PRIu64
		       ",\"tail\":%" PRIu64
		       ",\"payload\":%zu,\"records\":%" PRIu64
		       ",\"replay_ms\":%.1f,\"replay_records_per_sec\":%.0f,"
		       "\"snapshot_ms\":%.1f,\"snapshot_bytes\":%lld,"
		       "\"fork_ms\":%.3f,\"restart_ms\":%.1f,"
		       "\"bytes_per_task\":%.1f,\"replay_cpu_ms\":%.1f,"
		       "\"snapshot_cpu_ms\":%.1f,\"restart_cpu_ms\":%.1f,"
		       "\"build_ms\":%.1f,\"build_cpu_ms\":%.1f,"
		       "\"pause_ms\":%.3f,\"rss_before_build\":%zu,"
		       "\"rss_after_build\":%zu}\n",
		    o.live, o.churn, o.tail, o.payload, records, replay_ms, rps,
		    snap_ms, (long long)st.st_size, fork_ms, restart_ms, per,
		    replay_cpu, snap_cpu, restart_cpu, bj.ms, bj.cpu_ms,
		    pause_ms, rss0, rss1);
	}
	free(sbuf);
	return 0;
}
