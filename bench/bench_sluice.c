/* bench_sluice - the sluice side of sluice-bench: C nng req0 sockets, one
 * dial (one TCP connection, one server session) each, driven by nng aio
 * callbacks on nng's own threads, so two cores can keep hundreds of
 * connections busy without a thread per connection.
 *
 * Every socket has NNG_OPT_REQ_RESENDTIME set to infinite: nng would
 * otherwise send a request again after 60 s without a reply, and a put
 * would create two tasks (docs/protocol.md, section 1). Instead every send
 * and receive has the --timeout of its aio, and a reply that does not come
 * in time stops the run with an error.
 *
 * A connection is a small state machine, one request in flight:
 *
 *   idle --put--> PUT --reply--> (next op)
 *   idle --take--> TAKE --empty--> drain: done; mixed: (next op)
 *                       --task--> ACK --reply--> (next op)
 *
 * where "next op" first checks the stop conditions: an error anywhere, the
 * end of --duration, or (put) no task left to claim. A put claims its tasks
 * from one atomic counter shared by the connections, so exactly N are put
 * whatever their speeds. Each connection records latencies into its own
 * histograms; they are merged after the run. The aio callback of one
 * connection never runs twice at once (an aio has one operation at a
 * time), so a connection's fields need no lock; what is shared (the
 * counter, the stop flag, the first error, the count of connections still
 * running) is atomic or under `mu`. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "bench_run.h"
#include "proto/msg.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/clock.h"

enum sphase {
	SP_PUT = 1,
	SP_TAKE,
	SP_ACK,
};

struct sdrv;

struct sconn {
	struct sdrv *d;
	unsigned idx;
	nng_socket sock;
	bool open;
	nng_aio *aio;
	enum bench_role role;
	enum sphase phase;
	bool sending;   /* the aio carries a send (else a receive) */
	bool put_next;  /* BENCH_BOTH: the next op is a put */
	unsigned batch; /* tasks in the put in flight */
	int64_t t_req;  /* ns: the request in flight was sent */
	int64_t t_op;   /* ns: the op (take + ack) began */
	uint64_t id, lease;
	struct buf req; /* encoding scratch */
	struct bench_tally t;
};

struct sdrv {
	const struct bench_opts *o;
	unsigned n;
	struct sconn *conns;
	uint8_t *payload;
	struct msg_put *items;          /* o->batch identical put items */
	atomic_uint_fast64_t remaining; /* put: tasks not claimed yet */
	atomic_bool stop;
	int64_t deadline; /* ns; 0 = none */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned active; /* connections still running (under mu) */
	int64_t t_last;  /* ns: the last connection stopped (under mu) */
	bool failed;     /* under mu */
	char err[512];   /* the first error (under mu) */
};

static void sdrv_fail(struct sdrv *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records the first error and asks every connection to stop. */
static void
sdrv_fail(struct sdrv *d, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&d->mu);
	if (!d->failed) {
		d->failed = true;
		va_start(ap, fmt);
		vsnprintf(d->err, sizeof(d->err), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&d->mu);
	atomic_store(&d->stop, true);
}

/* Up to `want` tasks from the shared count; 0 when none are left. */
static unsigned
claim(struct sdrv *d, unsigned want)
{
	uint_fast64_t cur = atomic_load(&d->remaining);

	while (cur > 0) {
		uint_fast64_t k = cur < want ? cur : want;
		if (atomic_compare_exchange_weak(&d->remaining, &cur, cur - k))
			return (unsigned)k;
	}
	return 0;
}

/* ---- requests and replies ------------------------------------------ */

static void
req_put(struct sdrv *d, struct msg_req *q, unsigned n)
{
	memset(q, 0, sizeof(*q));
	if (n == 1 && d->o->batch == 1) {
		q->op = MSG_OP_PUT;
		q->put = d->items[0];
	} else {
		q->op = MSG_OP_PUT_BATCH;
		q->put_batch.n = n;
		q->put_batch.items = d->items;
	}
}

static void
req_take(struct sdrv *d, struct msg_req *q, struct msg_str *tube)
{
	memset(q, 0, sizeof(*q));
	*tube = msg_cstr(d->o->tube);
	q->op = MSG_OP_TAKE;
	q->take.wait = 0;
	q->take.max = 1;
	q->take.ntubes = 1;
	q->take.tubes = tube;
}

static void
req_ack(struct msg_req *q, uint64_t id, uint64_t lease)
{
	memset(q, 0, sizeof(*q));
	q->op = MSG_OP_ACK;
	q->ack.id = id;
	q->ack.lease = lease;
}

/* Decodes a reply to `op` and checks it is a success. Returns 0, or -1
 * with the reason in `err`. */
static int
rep_check(const void *p, size_t len, uint8_t op, struct msg_rep *rep, char *err,
    size_t errlen)
{
	int rc = msg_decode_rep(p, len, NULL, rep);

	if (rc != 0) {
		snprintf(err, errlen, "%s: reply does not decode: %s",
		    msg_op_name(op), sluice_strerror(rc));
		return -1;
	}
	if (rep->op != op) {
		snprintf(err, errlen, "%s: reply is for op %u", msg_op_name(op),
		    rep->op);
		return -1;
	}
	if (rep->status != 0) {
		snprintf(err, errlen, "%s refused: %s%s%.*s", msg_op_name(op),
		    sluice_strerror(rep->status),
		    rep->err.message.len ? ": " : "", (int)rep->err.message.len,
		    rep->err.message.p);
		return -1;
	}
	return 0;
}

/* Checks a put or batch put reply carries `n` created tasks. */
static int
put_check(struct msg_rep *rep, unsigned n, char *err, size_t errlen)
{
	struct msg_put_res res;
	unsigned k = 0;

	if (rep->op == MSG_OP_PUT) {
		if (!rep->put.created || rep->put.id == 0) {
			snprintf(err, errlen, "put: no task created");
			return -1;
		}
		return 0;
	}
	if (rep->put_batch.n != n) {
		snprintf(err, errlen, "put_batch: %u results for %u tasks",
		    rep->put_batch.n, n);
		return -1;
	}
	while (msg_next_put_res(&rep->put_batch.it, &res)) {
		if (res.status != 0 || !res.created) {
			snprintf(err, errlen, "put_batch: task %u refused: %s",
			    k, sluice_strerror(res.status));
			return -1;
		}
		k++;
	}
	return 0;
}

/* ---- synchronous calls, for setup, preload and checks --------------- */

/* Sends `q` on `c` and waits for its reply, checked as rep_check does,
 * except that an error reply with status `allow` (when not 0) is returned
 * as `allow`. Returns 0 or `allow` with `*m` holding the reply message
 * `rep` borrows from (the caller frees it); or -1 after printing why. */
static int
scall(struct sconn *c, const struct msg_req *q, struct msg_rep *rep,
    nng_msg **m, int allow)
{
	const struct bench_opts *o = c->d->o;
	char err[256];
	nng_msg *msg;
	int rc;

	buf_reset(&c->req);
	rc = msg_encode_req(&c->req, q);
	if (rc != 0) {
		bench_error("%s: cannot encode: %s", msg_op_name(q->op),
		    sluice_strerror(rc));
		return -1;
	}
	if ((rc = nng_msg_alloc(&msg, c->req.len)) != 0) {
		bench_error("nng_msg_alloc: %s", nng_strerror(rc));
		return -1;
	}
	memcpy(nng_msg_body(msg), c->req.data, c->req.len);
	if ((rc = nng_sendmsg(c->sock, msg, 0)) != 0) {
		nng_msg_free(msg);
		bench_error("%s: sending to %s: %s", msg_op_name(q->op), o->url,
		    nng_strerror(rc));
		return -1;
	}
	if ((rc = nng_recvmsg(c->sock, &msg, 0)) != 0) {
		bench_error("%s: no reply from %s: %s", msg_op_name(q->op),
		    o->url, nng_strerror(rc));
		return -1;
	}
	if (allow != 0 &&
	    msg_decode_rep(nng_msg_body(msg), nng_msg_len(msg), NULL, rep) ==
	        0 &&
	    rep->op == q->op && rep->status == allow) {
		*m = msg;
		return allow;
	}
	if (rep_check(nng_msg_body(msg), nng_msg_len(msg), q->op, rep, err,
	        sizeof(err)) != 0) {
		nng_msg_free(msg);
		bench_error("%s: %s", o->url, err);
		return -1;
	}
	*m = msg;
	return 0;
}

/* Tasks of the tube in any state, from a stats request; -1 on error. */
static long long
tube_count(struct sconn *c)
{
	struct msg_tube_stats ts;
	struct msg_req q = { .op = MSG_OP_STATS };
	struct msg_rep rep;
	long long n = 0;
	nng_msg *m;
	int rc;

	q.tube = msg_cstr(c->d->o->tube);
	rc = scall(c, &q, &rep, &m, SLUICE_ENOTFOUND);
	if (rc < 0)
		return -1;
	if (rc > 0) { /* a server that names no tube it does not know */
		nng_msg_free(m);
		return 0;
	}
	while (msg_next_tube_stats(&rep.stats.it, &ts)) {
		if (ts.name.len == strlen(c->d->o->tube) &&
		    memcmp(ts.name.p, c->d->o->tube, ts.name.len) == 0)
			n += (long long)(ts.ready + ts.delayed + ts.taken +
			    ts.buried);
	}
	nng_msg_free(m);
	return n;
}

/* Puts `n` tasks through batch puts of up to MSG_BATCH_MAX on `c`. */
static int
preload(struct sdrv *d, struct sconn *c, uint64_t n)
{
	struct msg_put *items;
	struct msg_req q;
	struct msg_rep rep;
	char err[256];
	nng_msg *m;
	int rc = 0;

	items = calloc(MSG_BATCH_MAX, sizeof(*items));
	if (items == NULL) {
		bench_error("out of memory");
		return -1;
	}
	for (unsigned i = 0; i < MSG_BATCH_MAX; i++)
		items[i] = d->items[0];
	while (n > 0 && rc == 0) {
		unsigned k = n < MSG_BATCH_MAX ? (unsigned)n : MSG_BATCH_MAX;

		memset(&q, 0, sizeof(q));
		q.op = MSG_OP_PUT_BATCH;
		q.put_batch.n = k;
		q.put_batch.items = items;
		if (scall(c, &q, &rep, &m, 0) != 0) {
			rc = -1;
			break;
		}
		if (put_check(&rep, k, err, sizeof(err)) != 0) {
			bench_error("preload: %s", err);
			rc = -1;
		}
		nng_msg_free(m);
		n -= k;
	}
	free(items);
	return rc;
}

/* ---- the asynchronous loop ------------------------------------------ */

static void
sconn_stop(struct sconn *c)
{
	struct sdrv *d = c->d;
	int64_t now = clock_mono_ns();

	pthread_mutex_lock(&d->mu);
	if (now > d->t_last)
		d->t_last = now;
	if (--d->active == 0)
		pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

/* Encodes `q` and sends it through the aio; the callback takes over. */
static void
sconn_send(struct sconn *c, const struct msg_req *q, int64_t now)
{
	nng_msg *msg;
	int rc;

	buf_reset(&c->req);
	rc = msg_encode_req(&c->req, q);
	if (rc != 0) {
		sdrv_fail(c->d, "%s: cannot encode: %s", msg_op_name(q->op),
		    sluice_strerror(rc));
		sconn_stop(c);
		return;
	}
	if ((rc = nng_msg_alloc(&msg, c->req.len)) != 0) {
		sdrv_fail(c->d, "nng_msg_alloc: %s", nng_strerror(rc));
		sconn_stop(c);
		return;
	}
	memcpy(nng_msg_body(msg), c->req.data, c->req.len);
	c->t_req = now;
	c->sending = true;
	nng_aio_set_msg(c->aio, msg);
	nng_send_aio(c->sock, c->aio);
}

/* Starts the next op of `c`, or stops it. */
static void
sconn_next(struct sconn *c, int64_t now)
{
	struct sdrv *d = c->d;
	struct msg_str tube;
	struct msg_req q;
	bool put;

	if (atomic_load(&d->stop) || (d->deadline && now >= d->deadline)) {
		sconn_stop(c);
		return;
	}
	put =
	    c->role == BENCH_PRODUCER || (c->role == BENCH_BOTH && c->put_next);
	if (c->role == BENCH_BOTH)
		c->put_next = !c->put_next;
	if (put) {
		unsigned k = 1;
		if (d->o->workload == BENCH_PUT &&
		    (k = claim(d, d->o->batch)) == 0) {
			sconn_stop(c);
			return;
		}
		c->batch = k;
		c->phase = SP_PUT;
		req_put(d, &q, k);
	} else {
		c->phase = SP_TAKE;
		c->t_op = now;
		req_take(d, &q, &tube);
	}
	sconn_send(c, &q, now);
}

/* Handles the reply `p`; returns 0 or -1 after sdrv_fail. */
static int
sconn_reply(struct sconn *c, const void *p, size_t len, int64_t now)
{
	struct sdrv *d = c->d;
	static const uint8_t ops[] = { [SP_PUT] = MSG_OP_PUT,
		[SP_TAKE] = MSG_OP_TAKE,
		[SP_ACK] = MSG_OP_ACK };
	uint8_t op = ops[c->phase];
	struct msg_task task;
	struct msg_rep rep;
	struct msg_req q;
	char err[256];

	if (c->phase == SP_PUT && !(c->batch == 1 && d->o->batch == 1))
		op = MSG_OP_PUT_BATCH;
	if (rep_check(p, len, op, &rep, err, sizeof(err)) != 0)
		goto fail_reply;
	switch (c->phase) {
	case SP_PUT:
		if (put_check(&rep, c->batch, err, sizeof(err)) != 0)
			goto fail_reply;
		bench_hist_record(&c->t.lat_put, (uint64_t)(now - c->t_req));
		c->t.puts += c->batch;
		c->t.requests++;
		sconn_next(c, now);
		return 0;
	case SP_TAKE:
		if (rep.tasks.n == 0) {
			if (d->o->workload == BENCH_DRAIN) {
				sconn_stop(c);
				return 0;
			}
			c->t.empty++;
			sconn_next(c, now);
			return 0;
		}
		if (rep.tasks.n != 1 || !msg_next_task(&rep.tasks.it, &task)) {
			snprintf(err, sizeof(err),
			    "take: %u tasks for a take of 1", rep.tasks.n);
			goto fail_reply;
		}
		if (task.size != d->o->bytes) {
			snprintf(err, sizeof(err),
			    "take: task %llu has %u bytes, not %zu (a tube "
			    "with other tasks?)",
			    (unsigned long long)task.id, task.size,
			    d->o->bytes);
			goto fail_reply;
		}
		c->id = task.id;
		c->lease = task.lease;
		c->phase = SP_ACK;
		req_ack(&q, c->id, c->lease);
		sconn_send(c, &q, now);
		return 0;
	case SP_ACK:
		if (rep.after.state != MSG_ST_NONE) {
			snprintf(err, sizeof(err),
			    "ack: task %llu still exists (state %s)",
			    (unsigned long long)c->id,
			    msg_state_name(rep.after.state));
			goto fail_reply;
		}
		bench_hist_record(&c->t.lat_take, (uint64_t)(now - c->t_op));
		c->t.take_acks++;
		sconn_next(c, now);
		return 0;
	}
	snprintf(err, sizeof(err), "reply in no known state");
fail_reply:
	sdrv_fail(d, "connection %u: %s", c->idx, err);
	sconn_stop(c);
	return -1;
}

static void
sconn_cb(void *arg)
{
	struct sconn *c = arg;
	const struct bench_opts *o = c->d->o;
	int rv = nng_aio_result(c->aio);
	nng_msg *msg;

	if (c->sending) {
		c->sending = false;
		if (rv != 0) {
			nng_msg_free(nng_aio_get_msg(c->aio));
			sdrv_fail(c->d, "connection %u: sending to %s: %s",
			    c->idx, o->url, nng_strerror(rv));
			sconn_stop(c);
			return;
		}
		nng_recv_aio(c->sock, c->aio);
		return;
	}
	if (rv != 0) {
		sdrv_fail(c->d,
		    "connection %u: no reply from %s to %s after %llu ms: %s",
		    c->idx, o->url,
		    c->phase == SP_PUT        ? "a put"
		        : c->phase == SP_TAKE ? "a take"
		                              : "an ack",
		    (unsigned long long)o->timeout_ms, nng_strerror(rv));
		sconn_stop(c);
		return;
	}
	msg = nng_aio_get_msg(c->aio);
	sconn_reply(c, nng_msg_body(msg), nng_msg_len(msg), clock_mono_ns());
	nng_msg_free(msg);
}

/* ---- set-up and the run -------------------------------------------- */

static int
sconn_open(struct sdrv *d, struct sconn *c)
{
	const struct bench_opts *o = d->o;
	int rv;

	buf_init(&c->req);
	bench_tally_init(&c->t);
	if ((rv = nng_req0_open(&c->sock)) != 0) {
		bench_error("nng_req0_open: %s", nng_strerror(rv));
		return -1;
	}
	c->open = true;
	if ((rv = nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME,
	         NNG_DURATION_INFINITE)) != 0 ||
	    (rv = nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO,
	         (nng_duration)o->timeout_ms)) != 0 ||
	    (rv = nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO,
	         (nng_duration)o->timeout_ms)) != 0 ||
	    (rv = nng_socket_set_size(
	         c->sock, NNG_OPT_RECVMAXSZ, MSG_SIZE_MAX)) != 0) {
		bench_error("setting socket options: %s", nng_strerror(rv));
		return -1;
	}
	if ((rv = nng_aio_alloc(&c->aio, sconn_cb, c)) != 0) {
		bench_error("nng_aio_alloc: %s", nng_strerror(rv));
		return -1;
	}
	nng_aio_set_timeout(c->aio, (nng_duration)o->timeout_ms);
	/* Synchronous: fails now when nothing listens. */
	if ((rv = nng_dial(c->sock, o->url, NULL, 0)) != 0) {
		bench_error("cannot connect to %s: %s (is sluiced running?)",
		    o->url, nng_strerror(rv));
		return -1;
	}
	return 0;
}

static void
sdrv_destroy(struct sdrv *d)
{
	for (unsigned i = 0; d->conns != NULL && i < d->n; i++) {
		struct sconn *c = &d->conns[i];
		if (c->aio != NULL) {
			nng_aio_stop(c->aio);
			nng_aio_free(c->aio);
		}
		if (c->open)
			nng_close(c->sock);
		buf_fini(&c->req);
	}
	free(d->conns);
	free(d->items);
	free(d->payload);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
}

/* Waits until every connection stopped, at most until `limit` (ns,
 * monotonic, as clock_mono_ns). Returns how many still run: 0, or more
 * when the limit passed. */
static unsigned
sdrv_wait(struct sdrv *d, int64_t limit)
{
	struct timespec ts;
	unsigned left;
	int rc = 0;

	ts.tv_sec = limit / 1000000000;
	ts.tv_nsec = limit % 1000000000;
	pthread_mutex_lock(&d->mu);
	while (d->active > 0 && rc == 0)
		if (pthread_cond_timedwait(&d->cv, &d->mu, &ts) == ETIMEDOUT)
			rc = -1;
	left = d->active;
	pthread_mutex_unlock(&d->mu);
	return left;
}

int
bench_sluice_run(const struct bench_opts *o, struct bench_result *r)
{
	struct sdrv d = { .o = o };
	pthread_condattr_t ca;
	int64_t t0, t1, limit, cpu0, self0;
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
		d.items[i].tube = msg_cstr(o->tube);
		d.items[i].priority = 1024;
		d.items[i].payload.p = (const char *)d.payload;
		d.items[i].payload.len = o->bytes;
	}
	for (unsigned i = 0; i < d.n; i++) {
		d.conns[i].d = &d;
		d.conns[i].idx = i;
		d.conns[i].role = bench_role_of(o->workload, i, d.n);
		d.conns[i].put_next = true;
		if (sconn_open(&d, &d.conns[i]) != 0)
			goto out;
	}

	/* Untimed: check the server speaks our protocol, then preload. */
	if ((before = tube_count(&d.conns[0])) < 0)
		goto out;
	if (bench_check_start(o, before, r) != 0)
		goto out;
	t0 = clock_mono_ns();
	if (r->preloaded && preload(&d, &d.conns[0], r->preloaded) != 0)
		goto out;
	r->preload_s = (double)(clock_mono_ns() - t0) / 1e9;

	/* The run. */
	atomic_store(&d.remaining, o->tasks);
	d.active = d.n;
	cpu0 = bench_server_cpu_ns(o);
	self0 = bench_self_cpu_ns();
	t0 = clock_mono_ns();
	d.t_last = t0;
	if (o->duration_ms)
		d.deadline = t0 + (int64_t)o->duration_ms * 1000000;
	for (unsigned i = 0; i < d.n; i++)
		sconn_next(&d.conns[i], t0);
	if ((left = sdrv_wait(&d, limit)) != 0) {
		bench_error("the run did not end within --limit %llu ms: %u of "
		            "%u connections still wait for %s",
		    (unsigned long long)o->limit_ms, left, d.n, o->url);
		/* Callbacks may still be running: leave the memory to exit. */
		return -1;
	}
	bench_result_cpu(r, o, cpu0, self0);
	t1 = d.t_last;
	if (d.failed) {
		bench_error("%s", d.err);
		goto out;
	}

	r->seconds = (double)(t1 - t0) / 1e9;
	for (unsigned i = 0; i < d.n; i++)
		bench_result_add(r, &d.conns[i].t);

	/* Do the counts add up? */
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
	sdrv_destroy(&d);
	return rc;
}
