/* A slow disk stalls only what must wait for it. sluiced-fault with every
 * flush of the log delayed by FLUSH_MS (SLUICE_FAULT_PAUSE=fsync:50: a
 * durable write, or an fdatasync, starts that much later), under a mixed
 * load: writers put and ack through libsluice, which must wait for their
 * commit; beanstalk clients reserve preloaded tasks (a reserve's answer
 * needs no new durability: its tube's puts are durable) and read a job's
 * stats; libsluice clients peek a preloaded task and read the stats; a
 * libsluice client takes preloaded tasks of another tube (its take's
 * answer needs no new durability either: it waits only for what its
 * task's tube depends on, not for the writers' commit in flight); an
 * HTTP client reads /metrics.
 *
 * With the log committed through io_uring (--wal-commit uring) the loop
 * goes on while the disk works: every read and take keeps a p99 well
 * under the flush (READ_P99_MS, generous for a sanitized build on a
 * shared machine), while no put or ack is answered before FLUSH_MS. With
 * the inline commit the loop itself waits in every flush, and the same
 * reads wait with it: the defect this test was written against. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"
#include "it_http.h"
#include "sluice.h"

enum {
	FLUSH_MS = 50,
	READ_P99_MS = 40, /* well under FLUSH_MS, far over a served read */
	WRITERS = 4,
	BS_READERS = 2,
	LIB_READERS = 2,
	LIB_TAKERS = 1,
	PRELOAD = 3000,
	SAMPLES_MAX = 20000,
	READ_GAP_US = 2000, /* a reader's pause between two requests */
};

enum kind {
	K_PUT,
	K_ACK,
	K_TAKE,
	K_LIB_TAKE,
	K_JOB_STATS,
	K_PEEK,
	K_STATS,
	K_METRICS,
	K_COUNT
};

static const char *const kind_names[K_COUNT] = { "put", "ack",
	"take (beanstalk reserve)", "take (libsluice)", "stats-job (beanstalk)",
	"peek", "stats", "GET /metrics" };

struct lat {
	int64_t us[SAMPLES_MAX];
	size_t n;
};

struct load {
	struct t_srv *s;
	int bport, hport;
	uint64_t first_id; /* a preloaded task, for the peeks */
	atomic_bool stop;
	pthread_mutex_t mu;
	struct lat lat[K_COUNT];
	struct it_errs errs;
};

static int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
note(struct load *l, enum kind k, int64_t t0)
{
	int64_t d = now_us() - t0;

	pthread_mutex_lock(&l->mu);
	if (l->lat[k].n < SAMPLES_MAX)
		l->lat[k].us[l->lat[k].n++] = d;
	pthread_mutex_unlock(&l->mu);
}

static void
gap(void)
{
	struct timespec ts = { 0, READ_GAP_US * 1000L };

	nanosleep(&ts, NULL);
}

/* Puts into tube "w", then takes one of them and acks it. */
static void *
writer(void *arg)
{
	struct load *l = arg;
	struct sluice_client *c = it_client_url(l->s->url);
	struct sluice_put_opts o;
	const char *tube = "w";
	struct sluice_take_opts to = {
		.tubes = &tube, .ntubes = 1, .wait_ms = 5000
	};

	if (c == NULL) {
		it_errs_add(&l->errs, "writer: no client");
		return NULL;
	}
	sluice_put_opts_init(&o);
	o.tube = "w";
	while (!atomic_load(&l->stop)) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		uint64_t id;
		int64_t t0 = now_us();
		int rc = sluice_put(c, &o, "x", 1, &id, NULL);

		if (rc != 0) {
			it_errs_add(&l->errs, "put: %s", sluice_strerror(rc));
			break;
		}
		note(l, K_PUT, t0);
		rc = sluice_take(c, &to, &t, &n);
		if (rc != 0 || n != 1) {
			it_errs_add(&l->errs, "take from w: %s n=%zu",
			    sluice_strerror(rc), n);
			break;
		}
		t0 = now_us();
		rc = sluice_ack(c, t->id, t->lease, NULL, NULL);
		sluice_task_free(t);
		if (rc != 0) {
			it_errs_add(&l->errs, "ack: %s", sluice_strerror(rc));
			break;
		}
		note(l, K_ACK, t0);
	}
	sluice_close(c);
	return NULL;
}

/* One beanstalk reply (its body too) within 10 s; false when none. */
static bool
bs_one(struct bsc *b, struct buf *out)
{
	buf_reset(out);
	return bsc_replies(b, 1, 10000, out) == 1;
}

/* Reserves preloaded tasks of tube "t" and reads each one's stats. */
static void *
bs_reader(void *arg)
{
	struct load *l = arg;
	struct bsc b;
	struct buf r;

	buf_init(&r);
	if (bsc_open(&b, l->bport) != 0) {
		it_errs_add(&l->errs, "beanstalk: cannot connect");
		return NULL;
	}
	if (bsc_sends(&b, "watch t\r\n") != 0 || !bs_one(&b, &r))
		it_errs_add(&l->errs, "beanstalk: watch t");
	while (!atomic_load(&l->stop)) {
		char cmd[64];
		uint64_t id;
		int64_t t0 = now_us();

		if (bsc_sends(&b, "reserve-with-timeout 0\r\n") != 0 ||
		    !bs_one(&b, &r)) {
			it_errs_add(
			    &l->errs, "beanstalk: no answer to reserve");
			break;
		}
		if (strncmp((const char *)r.data, "TIMED_OUT", 9) != 0 &&
		    sscanf((const char *)r.data, "RESERVED %" SCNu64, &id) !=
		        1) {
			it_errs_add(&l->errs, "beanstalk: reserve: %.*s",
			    (int)(r.len < 80 ? r.len : 80), (char *)r.data);
			break;
		}
		if (strncmp((const char *)r.data, "TIMED_OUT", 9) == 0) {
			gap(); /* every preloaded task is reserved */
			continue;
		}
		note(l, K_TAKE, t0);
		snprintf(cmd, sizeof(cmd), "stats-job %" PRIu64 "\r\n", id);
		t0 = now_us();
		if (bsc_sends(&b, cmd) != 0 || !bs_one(&b, &r) ||
		    strncmp((const char *)r.data, "OK ", 3) != 0) {
			it_errs_add(&l->errs, "beanstalk: stats-job");
			break;
		}
		note(l, K_JOB_STATS, t0);
		gap();
	}
	bsc_close(&b);
	buf_fini(&r);
	return NULL;
}

/* Peeks a preloaded task and reads the node's stats. */
static void *
lib_reader(void *arg)
{
	struct load *l = arg;
	struct sluice_client *c = it_client_url(l->s->url);

	if (c == NULL) {
		it_errs_add(&l->errs, "reader: no client");
		return NULL;
	}
	while (!atomic_load(&l->stop)) {
		struct sluice_task *t = NULL;
		struct sluice_stats *st = NULL;
		int64_t t0 = now_us();
		int rc = sluice_peek(c, l->first_id, &t);

		if (rc != 0) {
			it_errs_add(&l->errs, "peek: %s", sluice_strerror(rc));
			break;
		}
		note(l, K_PEEK, t0);
		sluice_task_free(t);
		t0 = now_us();
		rc = sluice_stats(c, NULL, &st);
		if (rc != 0) {
			it_errs_add(&l->errs, "stats: %s", sluice_strerror(rc));
			break;
		}
		note(l, K_STATS, t0);
		sluice_stats_free(st);
		gap();
	}
	sluice_close(c);
	return NULL;
}

/* Takes preloaded tasks of tube "u", one at a time, without waiting:
 * their puts are durable, so the answer leaves while the writers'
 * commit is in flight. The leases are left to the session. */
static void *
lib_taker(void *arg)
{
	struct load *l = arg;
	struct sluice_client *c = it_client_url(l->s->url);
	const char *tube = "u";
	struct sluice_take_opts to = { .tubes = &tube, .ntubes = 1 };

	if (c == NULL) {
		it_errs_add(&l->errs, "taker: no client");
		return NULL;
	}
	while (!atomic_load(&l->stop)) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int64_t t0 = now_us();
		int rc = sluice_take(c, &to, &t, &n);

		if (rc != 0 || n != 1) {
			it_errs_add(&l->errs, "take from u: %s n=%zu",
			    sluice_strerror(rc), n);
			sluice_task_free(t);
			break;
		}
		note(l, K_LIB_TAKE, t0);
		sluice_task_free(t);
		gap();
	}
	sluice_close(c);
	return NULL;
}

static void *
metrics_reader(void *arg)
{
	struct load *l = arg;

	while (!atomic_load(&l->stop)) {
		char *body = NULL;
		int64_t t0 = now_us();
		int st =
		    it_http(l->hport, "GET", "/metrics", NULL, NULL, &body);

		free(body);
		if (st != 200) {
			it_errs_add(&l->errs, "GET /metrics: %d", st);
			break;
		}
		note(l, K_METRICS, t0);
		gap();
	}
	return NULL;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The p-th percentile of a kind's samples, in us (sorts them). */
static int64_t
pct(struct lat *a, double p)
{
	size_t i;

	qsort(a->us, a->n, sizeof(a->us[0]), cmp_i64);
	i = (size_t)(p / 100.0 * (double)a->n);
	return a->us[i < a->n ? i : a->n - 1];
}

/* sluiced-fault with the slow disk (`slow`; else the disk as it is),
 * committing as `commit` says, with PRELOAD tasks in each of tubes "t"
 * and "u"; then the load for `run_ms`. */
static void
run(void **state, struct load *l, const char *name, const char *commit,
    int64_t run_ms, bool slow)
{
	static char baddr[32], haddr[32];
	pthread_t th[WRITERS + BS_READERS + LIB_READERS + LIB_TAKERS + 1];
	struct sluice_batch_item items[100];
	struct sluice_client *c;
	int nth = 0;

	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->mu, NULL);
	it_errs_init(&l->errs);
	l->bport = it_free_port();
	l->hport = it_free_port();
	snprintf(baddr, sizeof(baddr), "127.0.0.1:%d", l->bport);
	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", l->hport);
	if (slow)
		setenv("SLUICE_FAULT_PAUSE", "fsync:50", 1);
	l->s = it_srv(*state, name);
	l->s->prog = "sluiced-fault";
	l->s->args[0] = "--wal-commit";
	l->s->args[1] = commit;
	l->s->args[2] = "--beanstalk";
	l->s->args[3] = baddr;
	l->s->args[4] = "--http";
	l->s->args[5] = haddr;
	it_start(l->s);
	unsetenv("SLUICE_FAULT_PAUSE");

	c = it_client(l->s);
	for (int b = 0; b < 2 * PRELOAD / 100; b++) {
		for (int i = 0; i < 100; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = b < PRELOAD / 100 ? "t" : "u";
			items[i].payload = "p";
			items[i].len = 1;
		}
		it_rc(c, sluice_put_batch(c, items, 100), 0);
		if (b == 0)
			l->first_id = items[0].id;
	}
	sluice_close(c);

	for (int i = 0; i < WRITERS; i++)
		pthread_create(&th[nth++], NULL, writer, l);
	for (int i = 0; i < BS_READERS; i++)
		pthread_create(&th[nth++], NULL, bs_reader, l);
	for (int i = 0; i < LIB_READERS; i++)
		pthread_create(&th[nth++], NULL, lib_reader, l);
	for (int i = 0; i < LIB_TAKERS; i++)
		pthread_create(&th[nth++], NULL, lib_taker, l);
	pthread_create(&th[nth++], NULL, metrics_reader, l);
	it_sleep_ms(run_ms);
	atomic_store(&l->stop, true);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	it_errs_check(&l->errs);
	for (int k = 0; k < K_COUNT; k++) {
		struct lat *a = &l->lat[k];

		assert_true(a->n >= 5);
		pct(a, 50); /* sorted: us[0] is the fastest */
		print_message("%s, %s: %zu, p50 %.1f ms, p99 %.1f ms, min %.1f "
		              "ms\n",
		    commit, kind_names[k], a->n, (double)pct(a, 50) / 1000.0,
		    (double)pct(a, 99) / 1000.0, (double)a->us[0] / 1000.0);
	}
}

/* Through io_uring (`commit`: uring or uring-fsync): reads and takes are
 * served while the disk works; puts and acks wait for their commit,
 * never less than the flush. A read's p99 is under READ_P99_MS; or, on a
 * machine busy with other work (the suite runs two tests at a time, under
 * the sanitizers too), under three times the p99 of the same read in the
 * same load without the slow disk (one more run, only then): a read that
 * waited for the flush is as slow as the flush whatever the machine,
 * where scheduling stalls slow both runs alike. */
static void
check_ring(void **state, const char *commit)
{
	static struct load l, calm;
	bool over = false;

	run(state, &l, commit, commit, 2000, true);
	assert_int_equal(it_log_count(l.s, "refuses O_DIRECT"), 0);
	for (int k = K_TAKE; k < K_COUNT; k++)
		over = over || pct(&l.lat[k], 99) >= READ_P99_MS * 1000;
	/* sorted by pct: us[0] is the fastest */
	assert_true(l.lat[K_PUT].us[0] >= FLUSH_MS * 1000);
	assert_true(l.lat[K_ACK].us[0] >= FLUSH_MS * 1000);
	/* killed with commits in flight (a live log's last block may be
	 * being written again as sluice-log reads it): it starts */
	t_srv_stop(l.s, SIGKILL);
	it_verify_startable(l.s->data);
	if (!over)
		return;
	run(state, &calm, "calm", commit, 2000, false);
	t_srv_stop(calm.s, SIGKILL);
	for (int k = K_TAKE; k < K_COUNT; k++) {
		double p99 = (double)pct(&l.lat[k], 99) / 1000.0,
		       base = (double)pct(&calm.lat[k], 99) / 1000.0;

		if (p99 < READ_P99_MS)
			continue;
		fprintf(stderr,
		    "%s: p99 %.1f ms over %d ms; without the slow disk "
		    "%.1f ms\n",
		    kind_names[k], p99, READ_P99_MS, base);
		if (p99 >= 3 * base) {
			t_srv_print_log(l.s);
			fail_msg("%s: p99 %.1f ms under a %d ms flush",
			    kind_names[k], p99, FLUSH_MS);
		}
	}
}

static void
test_slow_disk_stalls_only_writes_with_the_ring(void **state)
{
	check_ring(state, "uring");
}

/* The same with each write made durable by an fdatasync op. */
static void
test_slow_disk_stalls_only_writes_with_the_fsync_op(void **state)
{
	check_ring(state, "uring-fsync");
}

/* Inline, the loop waits in every flush, and every read with it. */
static void
test_slow_disk_stalls_every_read_inline(void **state)
{
	static struct load l;

	run(state, &l, "inline", "inline", 1500, true);
	assert_true(pct(&l.lat[K_PEEK], 99) >= READ_P99_MS * 1000);
	assert_true(pct(&l.lat[K_STATS], 99) >= READ_P99_MS * 1000);
	assert_true(l.lat[K_PUT].us[0] >= FLUSH_MS * 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_slow_disk_stalls_only_writes_with_the_ring, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_slow_disk_stalls_only_writes_with_the_fsync_op,
		    it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_slow_disk_stalls_every_read_inline, it_setup,
		    it_teardown),
	};

	return cmocka_run_group_tests_name("slowdisk", tests, NULL, NULL);
}
