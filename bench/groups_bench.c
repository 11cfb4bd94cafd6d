/* groups-bench - the cost of fair groups, measured against a running
 * sluiced (bench/groups.sh starts one and writes docs/benchmarks.md): W
 * workers (a thread and a libsluice handle each: take one task waiting
 * up to 100 ms, ack it) drain N tasks of a tube without groups, then N
 * tasks spread over G groups (task i in group i mod G, put in that
 * order), --rounds times, alternating, each drain on a tube of its own:
 * tasks a second of each drain, and the ratio of the medians (groups
 * against none; the goal: at least 0.9). The output: a readable report,
 * and with --json one JSON line last. */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Seconds on the monotonic clock, for rates. */
static double
mono_s(void)
{
	return (double)clock_mono_ns() / 1e9;
}

static struct sluice_client *
connect_url(const char *url)
{
	struct sluice_client *c = NULL;
	int rc = sluice_open(url, &c);

	if (rc != 0) {
		fprintf(stderr, "groups-bench: connect %s: %s\n", url,
		    sluice_strerror(rc));
		exit(1);
	}
	return c;
}

/* n tasks of 100 bytes into `tube`; with groups > 0, task i in group
 * "g<i mod groups>". */
static void
put_n(struct sluice_client *c, const char *tube, uint64_t n, uint32_t groups)
{
	static struct sluice_batch_item items[BATCH];
	static char names[BATCH][16];
	static const char payload[100];

	for (uint64_t done = 0; done < n;) {
		size_t k = n - done < BATCH ? (size_t)(n - done) : BATCH;
		int rc;

		memset(items, 0, sizeof(items));
		for (size_t i = 0; i < k; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = tube;
			if (groups > 0) {
				snprintf(names[i], sizeof(names[i]),
				    "g%" PRIu64, (done + i) % groups);
				items[i].opts.group = names[i];
			}
			items[i].payload = payload;
			items[i].len = sizeof(payload);
		}
		if ((rc = sluice_put_batch(c, items, k)) != 0) {
			fprintf(stderr, "groups-bench: put: %s\n",
			    sluice_strerror(rc));
			exit(1);
		}
		done += k;
	}
}

static void *
worker(void *arg)
{
	struct run *r = arg;
	struct sluice_client *c = connect_url(r->url);
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
	double t0 = mono_s(), s;

	r.end = clock_mono_ms() + 600000;
	for (int i = 0; i < workers; i++)
		pthread_create(&th[i], NULL, worker, &r);
	for (int i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	s = mono_s() - t0;
	free(th);
	*errors += r.errors;
	if (r.n != want)
		fprintf(stderr, "groups-bench: %s: %lu of %" PRIu64 " tasks\n",
		    tube, (unsigned long)r.n, want);
	return (double)r.n / s;
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
		{ NULL, 0, NULL, 0 },
	};
	const char *url = "tcp://127.0.0.1:7711";
	int workers = 32, rounds = 1, ch, errors = 0;
	uint64_t tasks = 100000;
	uint32_t groups = 10000;
	double plain[ROUNDS_MAX], grouped[ROUNDS_MAX], mp, mg;
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
		default:
			fprintf(stderr,
			    "usage: groups-bench [--url URL] [--workers W] "
			    "[--tasks N] [--groups G] [--rounds R] [--json]\n");
			return 2;
		}
	}
	if (workers < 1 || tasks == 0 || groups == 0 || rounds < 1 ||
	    rounds > ROUNDS_MAX) {
		fprintf(stderr, "groups-bench: bad arguments\n");
		return 2;
	}
	c = connect_url(url);
	for (int i = 0; i < rounds; i++) {
		char tp[32], tg[32];

		snprintf(tp, sizeof(tp), "bench.plain.%d", i);
		snprintf(tg, sizeof(tg), "bench.groups.%d", i);
		/* alternate which goes first */
		if (i % 2 == 0) {
			put_n(c, tp, tasks, 0);
			plain[i] = drain(url, tp, tasks, workers, &errors);
			put_n(c, tg, tasks, groups);
			grouped[i] = drain(url, tg, tasks, workers, &errors);
		} else {
			put_n(c, tg, tasks, groups);
			grouped[i] = drain(url, tg, tasks, workers, &errors);
			put_n(c, tp, tasks, 0);
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
