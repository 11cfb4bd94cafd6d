/* bench_libsluice - the libsluice side of sluice-bench: what a program
 * using the client library (include/sluice.h) sees. Each connection is a
 * thread with its own handle (one handle per thread, as sluice.h asks)
 * making the library's blocking calls:
 *
 *   put    sluice_put, or sluice_put_batch of --batch tasks
 *   take   sluice_take of one task from the tube (drain --batch N: up to
 *          N, then one sluice_ack_batch of them), no wait (a session
 *          lease); SLUICE_ETIMEDOUT means the tube is empty
 *   ack    sluice_ack of that task with its lease
 *
 * A put claims its tasks from one atomic counter, so exactly N are put
 * whatever the threads' speeds. The threads connect first (a stats call
 * on the tube), then wait at a start line, so the clock starts when all
 * of them are connected. A control handle on the main thread counts the
 * tube and preloads it (batch puts of SLUICE_BATCH_MAX), outside the
 * timing.
 *
 * Shared state (the counter, the stop flag, the first error, the start
 * line and the count of threads still running) is atomic or under `mu`;
 * each thread records into its own tally, added up after the run. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_run.h"
#include "sluice.h"
#include "util/clock.h"

enum {
	LS_STACK = 256 * 1024, /* a thread's stack: calls, no big locals */
};

struct ldrv;

struct lconn {
	struct ldrv *d;
	unsigned idx;
	pthread_t th;
	bool started;
	struct sluice_client *cl;
	enum bench_role role;
	struct sluice_batch_item *items; /* --batch > 1: o->batch of them */
	struct bench_tally t;
};

struct ldrv {
	const struct bench_opts *o;
	unsigned n;
	struct lconn *conns;
	char *payload;
	struct sluice_put_opts put;
	atomic_uint_fast64_t remaining; /* put: tasks not claimed yet */
	atomic_bool stop;
	int64_t deadline; /* ns; 0 = none; set before `go` */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned ready;  /* threads connected (under mu) */
	bool go;         /* the start line was crossed (under mu) */
	unsigned active; /* threads still running (under mu) */
	int64_t t_last;  /* ns: the last thread stopped (under mu) */
	bool failed;     /* under mu */
	char err[512];   /* the first error (under mu) */
};

static void ldrv_fail(struct ldrv *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records the first error and asks every thread to stop. */
static void
ldrv_fail(struct ldrv *d, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&d->mu);
	if (!d->failed) {
		d->failed = true;
		va_start(ap, fmt);
		vsnprintf(d->err, sizeof(d->err), fmt, ap);
		va_end(ap);
	}
	atomic_store(&d->stop, true);
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
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

/* Tasks of the tube in any state; -1 with the reason in `err`. */
static long long
tube_count(struct ldrv *d, struct sluice_client *cl, char *err, size_t errlen)
{
	struct sluice_stats *st;
	long long n = 0;
	int rc;

	rc = sluice_stats(cl, d->o->tube, &st);
	if (rc == SLUICE_ENOTFOUND)
		return 0;
	if (rc != 0) {
		snprintf(err, errlen, "stats of %.200s: %s: %.200s", d->o->url,
		    sluice_strerror(rc), sluice_errmsg(cl));
		return -1;
	}
	for (size_t i = 0; i < st->ntubes; i++) {
		const struct sluice_tube_stats *ts = &st->tubes[i];
		if (strcmp(ts->name, d->o->tube) == 0)
			n += (long long)(ts->ready + ts->delayed + ts->taken +
			    ts->buried);
	}
	sluice_stats_free(st);
	return n;
}

/* Puts `n` tasks through batch puts of SLUICE_BATCH_MAX on `cl`. */
static int
preload(struct ldrv *d, struct sluice_client *cl, uint64_t n)
{
	struct sluice_batch_item *items;
	int rc = 0;

	items = calloc(SLUICE_BATCH_MAX, sizeof(*items));
	if (items == NULL) {
		bench_error("out of memory");
		return -1;
	}
	while (n > 0 && rc == 0) {
		unsigned k =
		    n < SLUICE_BATCH_MAX ? (unsigned)n : SLUICE_BATCH_MAX;
		for (unsigned i = 0; i < k; i++) {
			items[i].opts = d->put;
			items[i].payload = d->payload;
			items[i].len = d->o->bytes;
		}
		rc = sluice_put_batch(cl, items, k);
		if (rc != 0) {
			bench_error("preload: sluice_put_batch: %s: %s",
			    sluice_strerror(rc), sluice_errmsg(cl));
			break;
		}
		for (unsigned i = 0; i < k && rc == 0; i++) {
			if (items[i].rc != 0 || !items[i].created) {
				bench_error("preload: task %u refused: %s", i,
				    sluice_strerror(items[i].rc));
				rc = -1;
			}
		}
		n -= k;
	}
	free(items);
	return rc == 0 ? 0 : -1;
}

/* ---- one thread ------------------------------------------------------ */

/* One put of `k` tasks (a batch put when --batch > 1). 0, or -1 after
 * ldrv_fail. */
static int
lconn_put(struct lconn *c, unsigned k)
{
	struct ldrv *d = c->d;
	uint64_t id;
	int rc, created;

	if (d->o->batch == 1) {
		rc = sluice_put(
		    c->cl, &d->put, d->payload, d->o->bytes, &id, &created);
		if (rc == 0 && (!created || id == 0)) {
			ldrv_fail(
			    d, "connection %u: put: no task created", c->idx);
			return -1;
		}
	} else {
		for (unsigned i = 0; i < k; i++) {
			c->items[i].opts = d->put;
			c->items[i].payload = d->payload;
			c->items[i].len = d->o->bytes;
			c->items[i].rc = -1;
		}
		rc = sluice_put_batch(c->cl, c->items, k);
		for (unsigned i = 0; rc == 0 && i < k; i++) {
			if (c->items[i].rc != 0 || !c->items[i].created) {
				ldrv_fail(d,
				    "connection %u: put_batch: task %u "
				    "refused: %s",
				    c->idx, i, sluice_strerror(c->items[i].rc));
				return -1;
			}
		}
	}
	if (rc != 0) {
		ldrv_fail(d, "connection %u: %s: %s: %s", c->idx,
		    d->o->batch == 1 ? "sluice_put" : "sluice_put_batch",
		    sluice_strerror(rc), sluice_errmsg(c->cl));
		return -1;
	}
	return 0;
}

/* Acks the `n` tasks a take returned: one sluice_ack, or with --batch one
 * sluice_ack_batch. 0, or -1 after ldrv_fail. */
static int
lconn_ack(struct lconn *c, const struct sluice_task *t, size_t n)
{
	struct sluice_lease items[SLUICE_TAKE_MAX] = { { 0, 0 } };
	struct sluice_result res[SLUICE_TAKE_MAX];
	struct sluice_after after;
	int rc;

	if (c->d->o->batch == 1) {
		rc = sluice_ack(c->cl, t[0].id, t[0].lease, NULL, &after);
		/* finished: gone, or kept as done (--keep-done) */
		if (rc == 0 && after.state != 0 && after.state != SLUICE_DONE)
			rc = SLUICE_ESTATE;
	} else {
		for (size_t i = 0; i < n; i++)
			items[i] =
			    (struct sluice_lease) { t[i].id, t[i].lease };
		rc = sluice_ack_batch(c->cl, items, n, res);
		for (size_t i = 0; rc == 0 && i < n; i++)
			rc = res[i].rc;
	}
	if (rc != 0) {
		ldrv_fail(c->d,
		    "connection %u: ack of %zu tasks from %llu: %s: %s", c->idx,
		    n, (unsigned long long)t[0].id, sluice_strerror(rc),
		    sluice_errmsg(c->cl));
		return -1;
	}
	return 0;
}

/* One take (of up to --batch tasks in a drain) and, when it got tasks,
 * their ack. The number of tasks taken and acked, 0 when the tube was
 * empty, -1 after ldrv_fail. */
static int
lconn_take_ack(struct lconn *c)
{
	struct ldrv *d = c->d;
	const char *tubes[] = { d->o->tube };
	struct sluice_take_opts to = {
		.tubes = tubes, .ntubes = 1, .wait_ms = 0, .max = d->o->batch
	};
	struct sluice_task *tasks;
	size_t n;
	int rc;

	rc = sluice_take(c->cl, &to, &tasks, &n);
	if (rc == SLUICE_ETIMEDOUT)
		return 0;
	if (rc != 0) {
		ldrv_fail(d, "connection %u: sluice_take: %s: %s", c->idx,
		    sluice_strerror(rc), sluice_errmsg(c->cl));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (tasks[i].size != d->o->bytes) {
			ldrv_fail(d,
			    "connection %u: take: a task of %zu bytes, not "
			    "%zu (a tube with other tasks?)",
			    c->idx, tasks[i].size, d->o->bytes);
			sluice_task_free(tasks);
			return -1;
		}
	}
	rc = lconn_ack(c, tasks, n);
	sluice_task_free(tasks);
	return rc < 0 ? -1 : (int)n;
}

/* The ops, until a stop condition: an error anywhere, the end of
 * --duration, no task left to put, or (drain) an empty tube. */
static void
lconn_loop(struct lconn *c)
{
	struct ldrv *d = c->d;
	bool put_next = true;

	for (;;) {
		int64_t t = clock_mono_ns(), now;
		bool put = c->role == BENCH_PRODUCER ||
		    (c->role == BENCH_BOTH && put_next);
		int rc;

		if (atomic_load(&d->stop) || (d->deadline && t >= d->deadline))
			return;
		if (c->role == BENCH_BOTH)
			put_next = !put_next;
		if (put) {
			unsigned k = 1;
			if (d->o->workload == BENCH_PUT &&
			    (k = claim(d, d->o->batch)) == 0)
				return;
			if (lconn_put(c, k) != 0)
				return;
			now = clock_mono_ns();
			bench_hist_record(&c->t.lat_put, (uint64_t)(now - t));
			c->t.puts += k;
			c->t.requests++;
			continue;
		}
		if ((rc = lconn_take_ack(c)) < 0)
			return;
		if (rc == 0) {
			if (d->o->workload == BENCH_DRAIN)
				return;
			c->t.empty++;
			continue;
		}
		now = clock_mono_ns();
		bench_hist_record(&c->t.lat_take, (uint64_t)(now - t));
		c->t.take_acks += (uint64_t)rc;
	}
}

static void *
lconn_main(void *arg)
{
	struct lconn *c = arg;
	struct ldrv *d = c->d;
	char err[512];
	bool go;

	/* Connect (the first call does), then wait at the start line. */
	if (tube_count(d, c->cl, err, sizeof(err)) < 0)
		ldrv_fail(d, "connection %u: %s", c->idx, err);
	pthread_mutex_lock(&d->mu);
	d->ready++;
	pthread_cond_broadcast(&d->cv);
	while (!d->go && !atomic_load(&d->stop))
		pthread_cond_wait(&d->cv, &d->mu);
	go = d->go;
	pthread_mutex_unlock(&d->mu);

	if (go)
		lconn_loop(c);

	pthread_mutex_lock(&d->mu);
	int64_t now = clock_mono_ns();
	if (now > d->t_last)
		d->t_last = now;
	d->active--;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

/* ---- set-up and the run -------------------------------------------- */

/* A handle for `url` with the run's timeout; NULL after printing why. */
static struct sluice_client *
client_open(const struct bench_opts *o)
{
	struct sluice_client *cl;
	int rc;

	if ((rc = sluice_open(o->url, &cl)) != 0) {
		bench_error("sluice_open %s: %s", o->url, sluice_strerror(rc));
		return NULL;
	}
	if (o->tls_ca != NULL &&
	    (rc = sluice_set_tls(cl, o->tls_ca, NULL, NULL)) != 0) {
		bench_error("--tls-ca: %s", sluice_errmsg(cl));
		sluice_close(cl);
		return NULL;
	}
	/* a server with --auth: the token from the environment, as the CLI
	 * reads it (never on the command line, where ps shows it) */
	if (getenv("SLUICE_TOKEN") != NULL &&
	    sluice_set_token(cl, getenv("SLUICE_TOKEN")) != 0) {
		bench_error("$SLUICE_TOKEN: longer than a token may be");
		sluice_close(cl);
		return NULL;
	}
	sluice_set_timeout(
	    cl, o->timeout_ms > 1000000000 ? 1000000000 : (int)o->timeout_ms);
	return cl;
}

/* Waits under d->mu until `cond` holds or `limit` (ns, monotonic) passed;
 * returns whether it holds. */
static bool
wait_until(struct ldrv *d, bool (*cond)(struct ldrv *), int64_t limit)
{
	struct timespec ts = { .tv_sec = limit / 1000000000,
		.tv_nsec = limit % 1000000000 };
	bool ok;

	pthread_mutex_lock(&d->mu);
	while (!(ok = cond(d)))
		if (pthread_cond_timedwait(&d->cv, &d->mu, &ts) == ETIMEDOUT) {
			ok = cond(d);
			break;
		}
	pthread_mutex_unlock(&d->mu);
	return ok;
}

static bool
all_ready(struct ldrv *d)
{
	return d->ready == d->n || d->failed;
}

static bool
all_stopped(struct ldrv *d)
{
	return d->active == 0;
}

/* Stops, joins and frees; when threads may still be inside a call (the
 * limit passed), leaves them and their memory to the process's exit. */
static void
ldrv_destroy(struct ldrv *d, bool join)
{
	if (!join)
		return;
	pthread_mutex_lock(&d->mu);
	atomic_store(&d->stop, true);
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	for (unsigned i = 0; d->conns != NULL && i < d->n; i++) {
		struct lconn *c = &d->conns[i];
		if (c->started)
			pthread_join(c->th, NULL);
		sluice_close(c->cl);
		free(c->items);
	}
	free(d->conns);
	free(d->payload);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
}

int
bench_libsluice_run(const struct bench_opts *o, struct bench_result *r)
{
	struct ldrv d = { .o = o };
	struct sluice_client *ctl = NULL;
	pthread_condattr_t ca;
	pthread_attr_t ta;
	int64_t t0, cpu0, limit, self0;
	long long before;
	bool join = true;
	char err[512];
	int rc = -1, e;

	limit = clock_mono_ns() + (int64_t)o->limit_ms * 1000000;
	pthread_mutex_init(&d.mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d.cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&ta);
	pthread_attr_setstacksize(&ta, LS_STACK);

	d.n = o->conns;
	d.conns = calloc(d.n, sizeof(*d.conns));
	d.payload = malloc(o->bytes ? o->bytes : 1);
	if (d.conns == NULL || d.payload == NULL) {
		bench_error("out of memory");
		goto out;
	}
	memset(d.payload, 'x', o->bytes);
	sluice_put_opts_init(&d.put);
	d.put.tube = o->tube;
	d.put.priority = 1024;

	/* Untimed: the tube, then the preload, on a handle of our own. */
	if ((ctl = client_open(o)) == NULL)
		goto out;
	if ((before = tube_count(&d, ctl, err, sizeof(err))) < 0) {
		bench_error("%s", err);
		goto out;
	}
	if (bench_check_start(o, before, r) != 0)
		goto out;
	t0 = clock_mono_ns();
	if (r->preloaded && preload(&d, ctl, r->preloaded) != 0)
		goto out;
	r->preload_s = (double)(clock_mono_ns() - t0) / 1e9;

	/* The threads connect and line up. */
	atomic_store(&d.remaining, o->tasks);
	d.active = d.n;
	for (unsigned i = 0; i < d.n; i++) {
		struct lconn *c = &d.conns[i];

		c->d = &d;
		c->idx = i;
		c->role = bench_role_of(o->workload, i, d.n);
		bench_tally_init(&c->t);
		if (o->batch > 1 &&
		    (c->items = calloc(o->batch, sizeof(*c->items))) == NULL) {
			ldrv_fail(&d, "out of memory");
			break;
		}
		if ((c->cl = client_open(o)) == NULL) {
			ldrv_fail(&d, "connection %u: no handle", i);
			break;
		}
		if ((e = pthread_create(&c->th, &ta, lconn_main, c)) != 0) {
			ldrv_fail(&d, "pthread_create: %s", strerror(e));
			break;
		}
		c->started = true;
	}
	/* Threads never started count as stopped. */
	pthread_mutex_lock(&d.mu);
	for (unsigned i = 0; i < d.n; i++)
		if (!d.conns[i].started) {
			d.active--;
			d.ready++;
		}
	pthread_mutex_unlock(&d.mu);
	if (!wait_until(&d, all_ready, limit)) {
		bench_error("the connections were not made within --limit "
		            "%llu ms",
		    (unsigned long long)o->limit_ms);
		join = false;
		goto out;
	}

	/* The run. */
	cpu0 = bench_server_cpu_ns(o);
	self0 = bench_self_cpu_ns();
	t0 = clock_mono_ns();
	pthread_mutex_lock(&d.mu);
	if (o->duration_ms)
		d.deadline = t0 + (int64_t)o->duration_ms * 1000000;
	d.t_last = t0;
	d.go = !d.failed;
	pthread_cond_broadcast(&d.cv);
	pthread_mutex_unlock(&d.mu);
	if (!wait_until(&d, all_stopped, limit)) {
		atomic_store(&d.stop, true);
		bench_error("the run did not end within --limit %llu ms: "
		            "threads still wait for %s",
		    (unsigned long long)o->limit_ms, o->url);
		join = false;
		goto out;
	}
	bench_result_cpu(r, o, cpu0, self0);
	if (d.failed) {
		bench_error("%s", d.err);
		goto out;
	}
	r->seconds = (double)(d.t_last - t0) / 1e9;
	for (unsigned i = 0; i < d.n; i++)
		bench_result_add(r, &d.conns[i].t);

	/* Do the counts add up? */
	if (bench_check_puts(o, r) != 0)
		goto out;
	if (o->workload == BENCH_DRAIN) {
		if ((r->left = tube_count(&d, ctl, err, sizeof(err))) < 0) {
			bench_error("%s", err);
			goto out;
		}
		if (bench_check_drain(o, r, "tasks") != 0)
			goto out;
	}
	rc = 0;
out:
	pthread_attr_destroy(&ta);
	if (join)
		sluice_close(ctl);
	ldrv_destroy(&d, join);
	return rc;
}
