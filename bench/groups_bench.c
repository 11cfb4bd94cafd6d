/* groups-bench - the cost of fair groups, measured against a running
 * sluiced (bench/groups.sh starts one and writes docs/benchmarks.md): W
 * workers (a thread and a libsluice handle each: take one task waiting
 * up to 100 ms, ack it) drain N tasks of a tube without groups, then N
 * tasks spread over G groups (task i in group i mod G, put in that
 * order), --rounds times, alternating, each drain on a tube of its own:
 * tasks a second of each drain, and the ratio of the medians (groups
 * against none; the goal: at least 0.9). The output: a readable report,
 * and with --json one JSON line last.
 *
 * --fairness: the latency a fair group buys a small tenant. N tasks of
 * one group ("big", named g0) are put first; then W workers take and ack while
 * a producer puts a task of group "small" every 10 ms, until big's tasks are
 * all taken (or 60 s). For each small task taken while big still had tasks, its
 * wait as the server saw it (taken_at - run_at, ms: ready to taken) and end to
 * end (monotonic, from before its put to the take's answer, µs: the put's own
 * commit included); p50, p99 and the maximum of both (the goal: a server-side
 * p99 under 20 ms, one round of the two groups). Then the same without groups,
 * the control: the small tasks queue behind big's in id order. */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_client.h"
#include "sluice.h"
#include "util/clock.h"

enum { BATCH = 500, ROUNDS_MAX = 9 };

struct run {
	const char *url;
	const char *tube;
	uint64_t want; /* stop after this many tasks */
	int64_t end;   /* monotonic ms: give up */
	atomic_ulong n;
	atomic_int errors;
};

static void *
worker(void *arg)
{
	struct run *r = arg;
	struct sluice_client *c = bench_connect("groups-bench", r->url);
	const char *tubes[] = { r->tube };
	struct sluice_take_opts o = { tubes, 1, 100, 1, 0, 0, 0 };

	while (clock_mono_ms() < r->end && atomic_load(&r->n) < r->want) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int rc = sluice_take(c, &o, &t, &n);

		if (rc == SLUICE_ETIMEDOUT)
			continue;
		if (rc != 0 || n != 1) {
			atomic_fetch_add(&r->errors, 1);
			sluice_task_free(t);
			continue;
		}
		atomic_fetch_add(&r->n, 1);
		if (sluice_ack(c, t[0].id, t[0].lease, NULL, NULL) != 0)
			atomic_fetch_add(&r->errors, 1);
		sluice_task_free(t);
	}
	sluice_close(c);
	return NULL;
}

/* Drains `tube` (want tasks) with `workers` threads: tasks a second. */
static double
drain(
    const char *url, const char *tube, uint64_t want, int workers, int *errors)
{
	struct run r = { .url = url, .tube = tube, .want = want };
	pthread_t *th = calloc((size_t)workers, sizeof(*th));
	double t0 = bench_mono_s(), s;

	r.end = clock_mono_ms() + 600000;
	for (int i = 0; i < workers; i++)
		pthread_create(&th[i], NULL, worker, &r);
	for (int i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	s = bench_mono_s() - t0;
	free(th);
	*errors += r.errors;
	if (r.n != want)
		fprintf(stderr, "groups-bench: %s: %lu of %" PRIu64 " tasks\n",
		    tube, (unsigned long)r.n, want);
	return (double)r.n / s;
}

/* ---- --fairness ---------------------------------------------------- */

enum { FAIR_EVERY_MS = 10, FAIR_MAX_S = 60 };

struct fair {
	const char *url;
	const char *tube;
	bool grouped;
	atomic_long big_left;      /* big's tasks not yet taken */
	atomic_ulong small_put;    /* small tasks put */
	atomic_ulong small_taken;  /* small tasks taken */
	atomic_bool producer_done; /* no more small tasks */
	atomic_bool stop;
	atomic_int errors;
	pthread_mutex_t mu;
	int64_t *srv_ms; /* server-side waits of the samples */
	int64_t *e2e_us; /* end-to-end waits */
	size_t n, cap;
};

static void
fair_sample(struct fair *f, const struct sluice_task *t, int64_t now_ns)
{
	int64_t put_ns = strtoll((const char *)t->payload + 2, NULL, 10);

	pthread_mutex_lock(&f->mu);
	if (f->n < f->cap) {
		f->srv_ms[f->n] = t->taken_at > t->run_at
		    ? (int64_t)(t->taken_at - t->run_at)
		    : 0;
		f->e2e_us[f->n] = (now_ns - put_ns) / 1000;
		f->n++;
	}
	pthread_mutex_unlock(&f->mu);
}

static void *
fair_worker(void *arg)
{
	struct fair *f = arg;
	struct sluice_client *c = bench_connect("groups-bench", f->url);
	const char *tubes[] = { f->tube };
	struct sluice_take_opts o = { tubes, 1, 100, 1, 0, 0, 0 };

	while (!atomic_load(&f->stop)) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int rc = sluice_take(c, &o, &t, &n);
		int64_t now = clock_mono_ns();

		if (rc == SLUICE_ETIMEDOUT || (rc == 0 && n == 0))
			continue;
		if (rc != 0 || n != 1) {
			atomic_fetch_add(&f->errors, 1);
			sluice_task_free(t);
			continue;
		}
		if (((const char *)t[0].payload)[0] == 's') {
			/* a sample while big still has tasks to compete */
			if (atomic_load(&f->big_left) > 0)
				fair_sample(f, &t[0], now);
			atomic_fetch_add(&f->small_taken, 1);
		} else {
			atomic_fetch_sub(&f->big_left, 1);
		}
		if (sluice_ack(c, t[0].id, t[0].lease, NULL, NULL) != 0)
			atomic_fetch_add(&f->errors, 1);
		sluice_task_free(t);
	}
	sluice_close(c);
	return NULL;
}

/* A small task every FAIR_EVERY_MS (on an absolute schedule) while big
 * has tasks, at most FAIR_MAX_S. */
static void *
fair_producer(void *arg)
{
	struct fair *f = arg;
	struct sluice_client *c = bench_connect("groups-bench", f->url);
	struct sluice_put_opts o;
	struct timespec next;
	int64_t end = clock_mono_ms() + FAIR_MAX_S * 1000;

	sluice_put_opts_init(&o);
	o.tube = f->tube;
	o.group = f->grouped ? "small" : NULL;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (atomic_load(&f->big_left) > 0 && clock_mono_ms() < end) {
		char p[32];
		uint64_t id;
		int created;

		snprintf(p, sizeof(p), "s %" PRId64, clock_mono_ns());
		if (sluice_put(c, &o, p, strlen(p), &id, &created) != 0)
			atomic_fetch_add(&f->errors, 1);
		else
			atomic_fetch_add(&f->small_put, 1);
		next.tv_nsec += FAIR_EVERY_MS * 1000000L;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	atomic_store(&f->producer_done, true);
	sluice_close(c);
	return NULL;
}

static int
by_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of v[n], sorted: the nearest rank. */
static int64_t
quantile(const int64_t *v, size_t n, double q)
{
	size_t k = (size_t)(q * (double)n + 0.999999);

	if (n == 0)
		return 0;
	return v[k == 0 ? 0 : (k > n ? n - 1 : k - 1)];
}

struct fair_res {
	size_t samples;
	unsigned long small_put;
	int64_t srv_p50, srv_p99, srv_max; /* ms */
	int64_t e2e_p50, e2e_p99, e2e_max; /* µs */
	double secs;
};

/* One run of the scenario on `tube`: the small group's waits. */
static struct fair_res
fair_run(struct sluice_client *c, const char *url, const char *tube,
    uint64_t big, int workers, bool grouped, int *errors)
{
	struct fair f = { .url = url, .tube = tube, .grouped = grouped };
	pthread_t *th = calloc((size_t)workers, sizeof(*th)), prod;
	struct fair_res r = { 0 };
	int64_t end = clock_mono_ms() + (FAIR_MAX_S + 30) * 1000;
	double t0;

	pthread_mutex_init(&f.mu, NULL);
	f.cap = FAIR_MAX_S * 1000 / FAIR_EVERY_MS + 16;
	f.srv_ms = calloc(f.cap, sizeof(*f.srv_ms));
	f.e2e_us = calloc(f.cap, sizeof(*f.e2e_us));
	bench_put_n(
	    "groups-bench", c, tube, big, grouped ? 1 : 0); /* big: group g0 */
	atomic_store(&f.big_left, (long)big);
	t0 = bench_mono_s();
	for (int i = 0; i < workers; i++)
		pthread_create(&th[i], NULL, fair_worker, &f);
	pthread_create(&prod, NULL, fair_producer, &f);
	/* until big is drained and every small task is taken */
	while (clock_mono_ms() < end &&
	    !(atomic_load(&f.producer_done) &&
	        atomic_load(&f.small_taken) >= atomic_load(&f.small_put) &&
	        atomic_load(&f.big_left) <= 0)) {
		struct timespec ms = { 0, 5000000 };

		nanosleep(&ms, NULL);
	}
	atomic_store(&f.stop, true);
	pthread_join(prod, NULL);
	for (int i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	r.secs = bench_mono_s() - t0;
	qsort(f.srv_ms, f.n, sizeof(*f.srv_ms), by_i64);
	qsort(f.e2e_us, f.n, sizeof(*f.e2e_us), by_i64);
	r.samples = f.n;
	r.small_put = atomic_load(&f.small_put);
	r.srv_p50 = quantile(f.srv_ms, f.n, 0.50);
	r.srv_p99 = quantile(f.srv_ms, f.n, 0.99);
	r.srv_max = f.n ? f.srv_ms[f.n - 1] : 0;
	r.e2e_p50 = quantile(f.e2e_us, f.n, 0.50);
	r.e2e_p99 = quantile(f.e2e_us, f.n, 0.99);
	r.e2e_max = f.n ? f.e2e_us[f.n - 1] : 0;
	*errors += f.errors;
	free(f.srv_ms);
	free(f.e2e_us);
	free(th);
	pthread_mutex_destroy(&f.mu);
	return r;
}

static void
fair_print(
    const char *what, uint64_t big, int workers, const struct fair_res *r)
{
	printf("%s: %" PRIu64 " tasks of big, a small task every %d ms, %d "
	       "workers, %.1f s: %zu small tasks taken while big had tasks "
	       "(of %lu put): wait ready->taken p50 %" PRId64
	       " ms, p99 %" PRId64 " ms, max %" PRId64
	       " ms; put->taken (client) p50 %.1f ms, p99 %.1f ms, max "
	       "%.1f ms\n",
	    what, big, FAIR_EVERY_MS, workers, r->secs, r->samples,
	    r->small_put, r->srv_p50, r->srv_p99, r->srv_max,
	    (double)r->e2e_p50 / 1000, (double)r->e2e_p99 / 1000,
	    (double)r->e2e_max / 1000);
}

static int
fairness(const char *url, uint64_t big, int workers, bool json)
{
	struct sluice_client *c = bench_connect("groups-bench", url);
	struct fair_res g, p;
	int errors = 0;

	g = fair_run(c, url, "bench.fair.groups", big, workers, true, &errors);
	fair_print("fair groups", big, workers, &g);
	p = fair_run(c, url, "bench.fair.plain", big, workers, false, &errors);
	fair_print("no groups (control)", big, workers, &p);
	if (json)
		printf("{\"big\":%" PRIu64 ",\"every_ms\":%d,\"workers\":%d,"
		       "\"samples\":%zu,\"wait_p50_ms\":%" PRId64
		       ",\"wait_p99_ms\":%" PRId64 ",\"wait_max_ms\":%" PRId64
		       ",\"e2e_p50_ms\":%.1f,\"e2e_p99_ms\":%.1f,"
		       "\"control_wait_p50_ms\":%" PRId64
		       ",\"control_wait_p99_ms\":%" PRId64 ",\"errors\":%d}\n",
		    big, FAIR_EVERY_MS, workers, g.samples, g.srv_p50,
		    g.srv_p99, g.srv_max, (double)g.e2e_p50 / 1000,
		    (double)g.e2e_p99 / 1000, p.srv_p50, p.srv_p99, errors);
	sluice_close(c);
	return errors != 0;
}

static int
by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "workers", required_argument, NULL, 'w' },
		{ "tasks", required_argument, NULL, 'n' },
		{ "groups", required_argument, NULL, 'g' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "fairness", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	const char *url = "tcp://127.0.0.1:7711";
	int workers = 32, rounds = 1, ch, errors = 0;
	uint64_t tasks = 100000;
	uint32_t groups = 10000;
	double plain[ROUNDS_MAX], grouped[ROUNDS_MAX], mp, mg;
	bool json = false, fair = false;
	struct sluice_client *c;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			url = optarg;
			break;
		case 'w':
			workers = atoi(optarg);
			break;
		case 'n':
			tasks = strtoull(optarg, NULL, 10);
			break;
		case 'g':
			groups = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'f':
			fair = true;
			break;
		default:
			fprintf(stderr,
			    "usage: groups-bench [--url URL] [--workers W] "
			    "[--tasks N] [--groups G] [--rounds R] [--json] "
			    "[--fairness]\n");
			return 2;
		}
	}
	if (workers < 1 || tasks == 0 || groups == 0 || rounds < 1 ||
	    rounds > ROUNDS_MAX) {
		fprintf(stderr, "groups-bench: bad arguments\n");
		return 2;
	}
	if (fair)
		return fairness(url, tasks, workers, json);
	c = bench_connect("groups-bench", url);
	for (int i = 0; i < rounds; i++) {
		char tp[32], tg[32];

		snprintf(tp, sizeof(tp), "bench.plain.%d", i);
		snprintf(tg, sizeof(tg), "bench.groups.%d", i);
		/* alternate which goes first */
		if (i % 2 == 0) {
			bench_put_n("groups-bench", c, tp, tasks, 0);
			plain[i] = drain(url, tp, tasks, workers, &errors);
			bench_put_n("groups-bench", c, tg, tasks, groups);
			grouped[i] = drain(url, tg, tasks, workers, &errors);
		} else {
			bench_put_n("groups-bench", c, tg, tasks, groups);
			grouped[i] = drain(url, tg, tasks, workers, &errors);
			bench_put_n("groups-bench", c, tp, tasks, 0);
			plain[i] = drain(url, tp, tasks, workers, &errors);
		}
		printf("round %d: drain of %" PRIu64 " tasks, %d workers: "
		       "no groups %.0f tasks/s, %" PRIu32
		       " groups %.0f tasks/s (%.3f)\n",
		    i + 1, tasks, workers, plain[i], groups, grouped[i],
		    grouped[i] / plain[i]);
	}
	mp = median(plain, rounds);
	mg = median(grouped, rounds);
	printf("median: no groups %.0f tasks/s, %" PRIu32
	       " groups %.0f tasks/s: %.3f x, errors %d\n",
	    mp, groups, mg, mg / mp, errors);
	if (json)
		printf("{\"tasks\":%" PRIu64 ",\"groups\":%" PRIu32
		       ",\"workers\":%d,\"rounds\":%d,\"plain_s\":%.0f,"
		       "\"groups_s\":%.0f,\"ratio\":%.3f,\"errors\":%d}\n",
		    tasks, groups, workers, rounds, mp, mg, mg / mp, errors);
	sluice_close(c);
	return errors != 0;
}
