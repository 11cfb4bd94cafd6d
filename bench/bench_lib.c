/* bench_lib - the libsluice side of sluice-bench: the same workloads as
 * bench_sluice.c, but each connection is a thread with its own
 * `struct sluice_client` calling sluice_put / sluice_take / sluice_ack,
 * as an application does. What it measures is the library's own path on
 * top of the server's (bench_sluice.c drives nng aios directly, so the
 * two side by side show what the library costs).
 *
 * Puts claim their tasks from one atomic counter, so exactly N are put
 * whatever the threads' speeds; every thread keeps its own tally (no
 * lock on the hot path), merged after the run. Each call is bounded by
 * --timeout (sluice_set_timeout) and the whole run by --limit: a thread
 * still running then is reported and left to the process's exit. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_run.h"
#include "sluice.h"
#include "util/clock.h"

struct lconn;

struct ldrv {
	const struct bench_opts *o;
	unsigned n;
	struct lconn *conns;
	struct sluice_batch_item *items; /* o->batch, for put */
	uint8_t *payload;
	atomic_uint_fast64_t remaining; /* put: tasks not claimed yet */
	atomic_bool stop;
	int64_t deadline; /* ns; 0 = none */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned active; /* threads still running (under mu) */
	int64_t t_last;  /* ns: the last thread stopped (under mu) */
	bool failed;     /* under mu */
	char err[512];   /* the first error (under mu) */
};

struct lconn {
	struct ldrv *d;
	unsigned idx;
	struct sluice_client *c;
	pthread_t thread;
	bool started;
	enum bench_role role;
	struct sluice_batch_item *items; /* this thread's copy of d->items */
	struct bench_tally t;
};

static void
ldrv_fail(struct lconn *l, const char *what, int rc)
{
	struct ldrv *d = l->d;

	pthread_mutex_lock(&d->mu);
	if (!d->failed) {
		d->failed = true;
		snprintf(d->err, sizeof(d->err), "connection %u: %s: %s (%s)",
		    l->idx, what, sluice_strerror(rc), sluice_errmsg(l->c));
	}
	pthread_mutex_unlock(&d->mu);
	atomic_store(&d->stop, true);
}

/* Up to `want` tasks from the shared count; 0 when none are left. */
static unsigned
claim(struct ldrv *d, unsigned want)
{
	uint_fast64_t cur = atomic_load(&d->remaining);

	while (cur > 0) {
		uint_fast64_t k = cur < want ? cur : want;
		if (atomic_compare_exchange_weak(&d->remaining, &cur, cur - k))
			return (unsigned)k;
	}
	return 0;
}

/* One put (or batch of `k`); 0, or -1 after ldrv_fail. */
static int
lconn_put(struct lconn *l, unsigned k)
{
	const struct bench_opts *o = l->d->o;
	struct sluice_batch_item *it = l->items;
	int64_t t0 = clock_mono_ns();
	int created = 0, rc;

	if (o->batch == 1)
		rc = sluice_put(l->c, &it[0].opts, it[0].payload, it[0].len,
		    NULL, &created);
	else
		rc = sluice_put_batch(l->c, it, k);
	if (rc != 0) {
		ldrv_fail(l, "put", rc);
		return -1;
	}
	for (unsigned i = 0; o->batch > 1 && i < k; i++) {
		if (it[i].rc != 0) {
			ldrv_fail(l, "put_batch item", it[i].rc);
			return -1;
		}
	}
	bench_hist_record(&l->t.lat_put, (uint64_t)(clock_mono_ns() - t0));
	l->t.puts += k;
	l->t.requests++;
	return 0;
}

/* One take + ack. Returns 1 when the tube was empty, 0, or -1 after
 * ldrv_fail. */
static int
lconn_take_ack(struct lconn *l)
{
	const struct bench_opts *o = l->d->o;
	const char *tubes[] = { o->tube };
	struct sluice_take_opts to = { .tubes = tubes, .ntubes = 1, .max = 1 };
	struct sluice_after after;
	struct sluice_task *t;
	int64_t t0 = clock_mono_ns();
	size_t n;
	int rc;

	rc = sluice_take(l->c, &to, &t, &n);
	if (rc == SLUICE_ETIMEDOUT)
		return 1;
	if (rc != 0) {
		ldrv_fail(l, "take", rc);
		return -1;
	}
	if (n != 1 || t[0].size != o->bytes) {
		sluice_task_free(t);
		ldrv_fail(
		    l, "take: not one task of --size bytes", SLUICE_EPROTO);
		return -1;
	}
	rc = sluice_ack(l->c, t[0].id, t[0].lease, NULL, &after);
	sluice_task_free(t);
	if (rc != 0 || after.state != 0) {
		ldrv_fail(l, "ack", rc != 0 ? rc : SLUICE_ESTATE);
		return -1;
	}
	bench_hist_record(&l->t.lat_take, (uint64_t)(clock_mono_ns() - t0));
	l->t.take_acks++;
	return 0;
}

static void *
lconn_run(void *arg)
{
	struct lconn *l = arg;
	struct ldrv *d = l->d;
	bool put_next = true;
	int64_t now;

	for (;;) {
		bool put;
		int rc;

		if (atomic_load(&d->stop) ||
		    (d->deadline && clock_mono_ns() >= d->deadline))
			break;
		put = l->role == BENCH_PRODUCER ||
		    (l->role == BENCH_BOTH && put_next);
		put_next = !put_next;
		if (put) {
			unsigned k = 1;

			if (d->o->workload == BENCH_PUT &&
			    (k = claim(d, d->o->batch)) == 0)
				break;
			if (lconn_put(l, k) != 0)
				break;
			continue;
		}
		if ((rc = lconn_take_ack(l)) < 0)
			break;
		if (rc == 1 && d->o->workload == BENCH_DRAIN)
			break;
		l->t.empty += (uint64_t)rc;
	}
	now = clock_mono_ns();
	pthread_mutex_lock(&d->mu);
	if (now > d->t_last)
		d->t_last = now;
	if (--d->active == 0)
		pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

/* ---- set-up, preload, checks ------------------------------------------ */

/* Tasks of the tube in any state; -1 after printing why. */
static long long
tube_count(struct lconn *l)
{
	struct sluice_stats *st;
	long long n = 0;
	int rc;

	rc = sluice_stats(l->c, l->d->o->tube, &st);
	if (rc == SLUICE_ENOTFOUND)
		return 0;
	if (rc != 0) {
		bench_error("stats from %s: %s (%s)", l->d->o->url,
		    sluice_strerror(rc), sluice_errmsg(l->c));
		return -1;
	}
	for (size_t i = 0; i < st->ntubes; i++) {
		const struct sluice_tube_stats *ts = &st->tubes[i];

		if (strcmp(ts->name, l->d->o->tube) == 0)
			n += (long long)(ts->ready + ts->delayed + ts->taken +
			    ts->buried);
	}
	sluice_stats_free(st);
	return n;
}

/* Puts `n` tasks in batches of up to SLUICE_BATCH_MAX. */
static int
preload(struct ldrv *d, struct lconn *l, uint64_t n)
{
	struct sluice_batch_item *items;
	int rc = 0;

	if ((items = calloc(SLUICE_BATCH_MAX, sizeof(*items))) == NULL) {
		bench_error("out of memory");
		return -1;
	}
	for (unsigned i = 0; i < SLUICE_BATCH_MAX; i++)
		items[i] = d->items[0];
	while (n > 0 && rc == 0) {
		unsigned k =
		    n < SLUICE_BATCH_MAX ? (unsigned)n : SLUICE_BATCH_MAX;

		if ((rc = sluice_put_batch(l->c, items, k)) != 0) {
			bench_error("preload: %s (%s)", sluice_strerror(rc),
			    sluice_errmsg(l->c));
			break;
		}
		for (unsigned i = 0; i < k && rc == 0; i++)
			if ((rc = items[i].rc) != 0)
				bench_error("preload: a task refused: %s",
				    sluice_strerror(rc));
		n -= k;
	}
	free(items);
	return rc == 0 ? 0 : -1;
}

static int
lconn_open(struct ldrv *d, struct lconn *l)
{
	const struct bench_opts *o = d->o;
	int rc;

	bench_tally_init(&l->t);
	if ((rc = sluice_open(o->url, &l->c)) != 0) {
		bench_error("sluice_open %s: %s", o->url, sluice_strerror(rc));
		return -1;
	}
	sluice_set_timeout(l->c, (int)o->timeout_ms);
	if ((l->items = calloc(o->batch, sizeof(*l->items))) == NULL) {
		bench_error("out of memory");
		return -1;
	}
	memcpy(l->items, d->items, o->batch * sizeof(*l->items));
	return 0;
}

/* Waits until every thread stopped, at most until `limit` (ns, as
 * clock_mono_ns). Returns how many still run. */
static unsigned
ldrv_wait(struct ldrv *d, int64_t limit)
{
	struct timespec ts = { .tv_sec = limit / 1000000000,
		.tv_nsec = limit % 1000000000 };
	unsigned left;

	pthread_mutex_lock(&d->mu);
	while (d->active > 0)
		if (pthread_cond_timedwait(&d->cv, &d->mu, &ts) == ETIMEDOUT)
			break;
	left = d->active;
	pthread_mutex_unlock(&d->mu);
	return left;
}

static void
ldrv_destroy(struct ldrv *d)
{
	for (unsigned i = 0; d->conns != NULL && i < d->n; i++) {
		struct lconn *l = &d->conns[i];

		if (l->started)
			pthread_join(l->thread, NULL);
		sluice_close(l->c);
		free(l->items);
	}
	free(d->conns);
	free(d->items);
	free(d->payload);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
}

int
bench_lib_run(const struct bench_opts *o, struct bench_result *r)
{
	struct ldrv d = { .o = o };
	pthread_condattr_t ca;
	int64_t t0, limit;
	long long before;
	unsigned left;
	int rc = -1;

	limit = clock_mono_ns() + (int64_t)o->limit_ms * 1000000;
	pthread_mutex_init(&d.mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d.cv, &ca);
	pthread_condattr_destroy(&ca);

	d.n = o->conns;
	d.conns = calloc(d.n, sizeof(*d.conns));
	d.payload = malloc(o->bytes ? o->bytes : 1);
	d.items = calloc(o->batch, sizeof(*d.items));
	if (d.conns == NULL || d.payload == NULL || d.items == NULL) {
		bench_error("out of memory");
		goto out;
	}
	memset(d.payload, 'x', o->bytes);
	for (unsigned i = 0; i < o->batch; i++) {
		sluice_put_opts_init(&d.items[i].opts);
		d.items[i].opts.tube = o->tube;
		d.items[i].payload = d.payload;
		d.items[i].len = o->bytes;
	}
	for (unsigned i = 0; i < d.n; i++) {
		d.conns[i].d = &d;
		d.conns[i].idx = i;
		d.conns[i].role = bench_role_of(o->workload, i, d.n);
		if (lconn_open(&d, &d.conns[i]) != 0)
			goto out;
	}

	/* Untimed: the server answers and the tube is as needed; preload. */
	if ((before = tube_count(&d.conns[0])) < 0)
		goto out;
	if (o->workload == BENCH_DRAIN && before != 0) {
		bench_error("tube %s already holds %lld tasks: drain needs an "
		            "empty tube (use another --tube)",
		    o->tube, before);
		goto out;
	}
	r->preloaded = o->workload == BENCH_DRAIN ? o->tasks
	    : o->workload == BENCH_MIXED          ? o->preload
	                                          : 0;
	t0 = clock_mono_ns();
	if (r->preloaded && preload(&d, &d.conns[0], r->preloaded) != 0)
		goto out;
	r->preload_s = (double)(clock_mono_ns() - t0) / 1e9;

	/* The run: every connection connects during its first call, as the
	 * nng driver's connections were connected before the clock. So the
	 * connections are made first, with a stats call each. */
	for (unsigned i = 1; i < d.n; i++)
		if (tube_count(&d.conns[i]) < 0)
			goto out;
	atomic_store(&d.remaining, o->tasks);
	d.active = d.n;
	t0 = clock_mono_ns();
	d.t_last = t0;
	if (o->duration_ms)
		d.deadline = t0 + (int64_t)o->duration_ms * 1000000;
	for (unsigned i = 0; i < d.n; i++) {
		if (pthread_create(&d.conns[i].thread, NULL, lconn_run,
		        &d.conns[i]) != 0) {
			bench_error("cannot start thread %u", i);
			atomic_store(&d.stop, true);
			pthread_mutex_lock(&d.mu);
			d.active -= d.n - i;
			pthread_mutex_unlock(&d.mu);
			goto out;
		}
		d.conns[i].started = true;
	}
	if ((left = ldrv_wait(&d, limit)) != 0) {
		bench_error("the run did not end within --limit %llu ms: %u of "
		            "%u connections still wait for %s",
		    (unsigned long long)o->limit_ms, left, d.n, o->url);
		/* Threads may still be in a call: leave them to exit. */
		return -1;
	}
	if (d.failed) {
		bench_error("%s", d.err);
		goto out;
	}
	r->seconds = (double)(d.t_last - t0) / 1e9;
	for (unsigned i = 0; i < d.n; i++)
		bench_result_add(r, &d.conns[i].t);
	if (bench_check_puts(o, r) != 0)
		goto out;
	if (o->workload == BENCH_DRAIN) {
		if ((r->left = tube_count(&d.conns[0])) < 0)
			goto out;
		if (bench_check_drain(o, r, "tasks") != 0)
			goto out;
	}
	rc = 0;
out:
	ldrv_destroy(&d);
	return rc;
}
