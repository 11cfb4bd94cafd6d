/* limits-bench - a tube's flow limits measured against a running sluiced
 * (bench/limits.sh starts one and writes docs/benchmarks.md):
 *
 *   rate   W greedy workers (a thread and a libsluice handle each: take
 *          one task waiting up to 100 ms, ack it) on a tube limited to R/s
 *          (with --burst B, else the default: 100 ms of tokens). A second
 *          can count up to the burst more or less than R when the server
 *          was late at its start: the tokens wait in the bucket. After one
 * second of warm-up (the burst goes then), each of the next S seconds counts
 * the takes that returned in it; the report gives every second's count and the
 * worst deviation from R in percent. cap    W workers on a tube capped at C
 * tasks taken at once, each holding its task 1 ms before the ack: the most the
 * workers held at once (counted before the ack is sent, so it never runs ahead
 *          of the server), which must not pass C, and the tasks a second.
 *   drain  W workers drain N tasks from a tube without limits, then N
 *          from a tube whose limits never hold (a concurrency of 1000000):
 *          tasks a second of each, the unlimited path against itself and
 *          against a build from before the limits (limits.sh runs both;
 *          --mode free drains the tube without limits only, which such a
 *          build can serve; --mode open the limited one only).
 * The output: a readable report, and with --json one JSON line last. */
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

enum { STAMPS_MAX = 1 << 21, BATCH = 500 };

struct run {
	const char *url;
	const char *tube;
	int64_t end;      /* monotonic ms: the workers stop */
	uint64_t hold_us; /* a worker holds each task this long */
	atomic_ulong n;   /* tasks taken */
	atomic_int holding, most;
	atomic_int errors;
	int64_t *stamps; /* monotonic ms of each take, the first STAMPS_MAX */
	uint64_t want;   /* drain: stop after this many tasks */
};

static uint32_t burst; /* --burst; 0: the server's default */

static void
limit(struct sluice_client *c, const char *tube, unsigned set, uint32_t rate,
    uint32_t conc)
{
	struct sluice_limits l = { set, rate, 1000, burst, conc, 0, 0, 0 };
	int rc = sluice_tube_limit(c, tube, &l, 0, NULL);

	if (rc != 0) {
		fprintf(stderr, "limits-bench: tube limit: %s (%s)\n",
		    sluice_strerror(rc), sluice_errmsg(c));
		exit(1);
	}
}

static void *
worker(void *arg)
{
	struct run *r = arg;
	struct sluice_client *c = bench_connect("limits-bench", r->url);
	const char *tubes[] = { r->tube };
	struct sluice_take_opts o = { tubes, 1, 100, 1, 0, 0, 0 };

	while (clock_mono_ms() < r->end) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int rc = sluice_take(c, &o, &t, &n);

		if (rc == SLUICE_ETIMEDOUT) {
			if (r->want != 0 && atomic_load(&r->n) >= r->want)
				break;
			continue;
		}
		if (rc != 0 || n != 1) {
			atomic_fetch_add(&r->errors, 1);
			sluice_task_free(t);
			continue;
		}
		unsigned long i = atomic_fetch_add(&r->n, 1);

		if (r->stamps != NULL && i < STAMPS_MAX)
			r->stamps[i] = clock_mono_ms();
		if (r->hold_us != 0) {
			int h = atomic_fetch_add(&r->holding, 1) + 1;
			int m = atomic_load(&r->most);
			struct timespec ts = { 0, (long)r->hold_us * 1000 };

			while (h > m &&
			    !atomic_compare_exchange_weak(&r->most, &m, h))
				;
			nanosleep(&ts, NULL);
			atomic_fetch_sub(&r->holding, 1);
		}
		if (sluice_ack(c, t[0].id, t[0].lease, NULL, NULL) != 0)
			atomic_fetch_add(&r->errors, 1);
		sluice_task_free(t);
		if (r->want != 0 && i + 1 >= r->want)
			break;
	}
	sluice_close(c);
	return NULL;
}

static void
run_workers(struct run *r, int workers)
{
	pthread_t *th = calloc((size_t)workers, sizeof(*th));

	for (int i = 0; i < workers; i++)
		pthread_create(&th[i], NULL, worker, r);
	for (int i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	free(th);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "workers", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "secs", required_argument, NULL, 's' },
		{ "cap", required_argument, NULL, 'c' },
		{ "burst", required_argument, NULL, 'b' },
		{ "drain", required_argument, NULL, 'd' },
		{ "mode", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const char *url = "tcp://127.0.0.1:7711", *mode = "all";
	int workers = 32, secs = 10, cap = 10, ch;
	uint32_t rate = 1000;
	uint64_t drain = 50000;
	bool json = false;
	struct sluice_client *c;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			url = optarg;
			break;
		case 'w':
			workers = atoi(optarg);
			break;
		case 'r':
			rate = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 's':
			secs = atoi(optarg);
			break;
		case 'c':
			cap = atoi(optarg);
			break;
		case 'b':
			burst = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'd':
			drain = strtoull(optarg, NULL, 10);
			break;
		case 'm':
			mode = optarg;
			break;
		case 'j':
			json = true;
			break;
		default:
			fprintf(stderr,
			    "usage: limits-bench [--url URL] [--workers W] "
			    "[--rate R] [--burst B] [--secs S] [--cap C] "
			    "[--drain N] "
			    "[--mode rate|cap|drain|free|open|all] [--json]\n");
			return 2;
		}
	}
	c = bench_connect("limits-bench", url);
	char js[2048] = "";
	size_t jl = 0;

	if (strcmp(mode, "rate") == 0 || strcmp(mode, "all") == 0) {
		struct run r = { .url = url, .tube = "bench.rate" };
		unsigned per[64] = { 0 }, lo = UINT32_MAX, hi = 0, sum = 0;
		int64_t t0;
		double worst = 0;

		r.stamps = calloc(STAMPS_MAX, sizeof(*r.stamps));
		bench_put_n("limits-bench", c, r.tube,
		    (uint64_t)rate * (uint64_t)(secs + 2) + 1000, 0);
		limit(c, r.tube, SLUICE_LIM_RATE, rate, 0);
		t0 = clock_mono_ms();
		r.end = t0 + 1000 + (int64_t)secs * 1000 + 100;
		run_workers(&r, workers);
		for (unsigned long i = 0; i < r.n && i < STAMPS_MAX; i++) {
			int64_t s = (r.stamps[i] - t0) / 1000 - 1;

			if (s >= 0 && s < secs && s < 64)
				per[s]++;
		}
		printf("rate %u/s (burst %u), %d workers, %d s after 1 s of "
		       "warm-up:\n ",
		    rate, burst, workers, secs);
		for (int i = 0; i < secs && i < 64; i++) {
			double d = 100.0 * ((double)per[i] - rate) / rate;

			printf(" %u", per[i]);
			sum += per[i];
			lo = per[i] < lo ? per[i] : lo;
			hi = per[i] > hi ? per[i] : hi;
			if (d < 0)
				d = -d;
			worst = d > worst ? d : worst;
		}
		printf("\n  min %u, max %u, worst deviation %.2f %%; %u in all "
		       "(%.2f %% off), errors %d\n",
		    lo, hi, worst, sum,
		    100.0 * ((double)sum - (double)rate * secs) /
		        ((double)rate * secs),
		    r.errors);
		jl += (size_t)snprintf(js + jl, sizeof(js) - jl,
		    "\"rate\":%u,\"rate_min\":%u,\"rate_max\":%u,"
		    "\"rate_worst_pct\":%.2f,\"rate_total\":%u,",
		    rate, lo, hi, worst, sum);
		free(r.stamps);
	}
	if (strcmp(mode, "cap") == 0 || strcmp(mode, "all") == 0) {
		struct run r = {
			.url = url, .tube = "bench.cap", .hold_us = 1000
		};
		double t0;

		bench_put_n("limits-bench", c, r.tube, 200000, 0);
		limit(c, r.tube, SLUICE_LIM_CONCURRENCY, 0, (uint32_t)cap);
		t0 = bench_mono_s();
		r.end = clock_mono_ms() + (int64_t)secs * 1000;
		run_workers(&r, workers);
		printf("cap %d, %d workers holding 1 ms, %d s: most held at "
		       "once %d, %.0f tasks/s, errors %d\n",
		    cap, workers, secs, r.most,
		    (double)r.n / (bench_mono_s() - t0), r.errors);
		jl += (size_t)snprintf(js + jl, sizeof(js) - jl,
		    "\"cap\":%d,\"cap_most\":%d,\"cap_tasks_s\":%.0f,", cap,
		    r.most, (double)r.n / (bench_mono_s() - t0));
	}
	if (strcmp(mode, "drain") == 0 || strcmp(mode, "free") == 0 ||
	    strcmp(mode, "open") == 0 || strcmp(mode, "all") == 0) {
		const char *tubes[] = { "bench.free", "bench.open" };
		double tps[2] = { 0, 0 };
		int first = strcmp(mode, "open") == 0 ? 1 : 0;
		int last = strcmp(mode, "free") == 0 ? 0 : 1;

		for (int k = first; k <= last; k++) {
			struct run r = { .url = url, .tube = tubes[k] };
			double t0;

			bench_put_n("limits-bench", c, r.tube, drain, 0);
			if (k == 1)
				limit(c, r.tube, SLUICE_LIM_CONCURRENCY, 0,
				    1000000);
			r.want = drain;
			r.end = clock_mono_ms() + 120000;
			t0 = bench_mono_s();
			run_workers(&r, workers);
			tps[k] = (double)r.n / (bench_mono_s() - t0);
			printf("drain of %" PRIu64 " tasks, %d workers, %s: "
			       "%.0f tasks/s, errors %d\n",
			    drain, workers,
			    k == 0 ? "no limits" : "limits that never hold",
			    tps[k], r.errors);
		}
		jl += (size_t)snprintf(js + jl, sizeof(js) - jl,
		    "\"drain_free_s\":%.0f,\"drain_open_s\":%.0f,", tps[0],
		    tps[1]);
	}
	if (json && jl > 0) {
		js[jl - 1] = '\0'; /* the last comma */
		printf("{%s}\n", js);
	}
	sluice_close(c);
	return 0;
}
