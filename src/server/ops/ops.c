/* ops - one handler per request of the wire protocol (docs/protocol.md),
 * and the waiting takes.
 *
 * A handler decodes nothing itself (msg.c did), maps the request onto the
 * queue's decide functions, commits each record (core_commit: append +
 * apply), and encodes the reply, which core_reply holds until the log is
 * durable up to the last record appended. Errors are answered with the
 * code the queue or the log gave and a text naming the task or tube.
 *
 * The log's reservation (reserve.h): puts and replaces are new work,
 * refused first when the disk fills; a retake, a touch, a kick, a pause
 * and an ack that keeps the task alive (recurring, moved) are retries,
 * which may use the pool beyond what live tasks need; everything that
 * finishes accepted work (a first take, an ack, a release, a fail with
 * its text cut to RESERVE_ERROR_MAX, a bury, a delete) may use it all.
 *
 * Waiting takes: a take that finds nothing and may wait is parked
 * (park_take, the one place that checks the limits on waiting takes) on
 * the list of each tube it names (waiters.h). When a task becomes ready
 * in a tube or its pause ends, the queue marks the tube; each loop turn,
 * after the turn's requests and timers, the marked tubes' waiters are
 * served in arrival order, each taking what it can, until one finds
 * nothing; then the waits that are over are answered, from a heap by
 * deadline. A turn so costs what can be served, not what waits. While
 * takes wait on a tube, a new take on it that may wait queues behind
 * them, so a task goes to whoever has waited longest on its tube. A
 * waiter whose client left (its face says so: net_alive) is dropped
 * before it takes anything: when its session closes, when its turn
 * comes, or when the HTTP face wakes the core for it (ops_check_waiters). */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/failover/cluster.h"
#include "server/face/conn.h"
#include "server/core/core.h"
#include "server/face/nng.h"
#include "server/face/stream.h"
#include "server/repl/follow.h"
#include "server/face/http/http.h"
#include "server/repl/lead.h"
#include "server/core/waiters.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	ERR_GROUPS_MAX = 1000,
	/* A reply carries at most MSG_SIZE_MAX bytes: its head and count,
	 * then its tasks, each at most ops_task_wire_max bytes. */
	REPLY_MAX = MSG_SIZE_MAX,
	REPLY_HEAD_MAX = 64,
	HTTP_JSON_GROWTH = 6,
	PEER_MAX = 160, /* a peer's address as the log shows it */
};

/* Who holds a session lease: the session's id and, on the leader, the
 * peer its table has for it. A follower's table is of its own
 * connections while the id is the leader's: it tells the id alone. */
static void
task_holder(
    const struct core *c, const struct queue_task_view *v, struct msg_task *t)
{
	const struct sess *s;

	if (v->state != QUEUE_TAKEN || v->detached || v->session == 0)
		return;
	t->holder.session = (uint32_t)v->session;
	s = c->follower ? NULL : sess_find(&c->sess, t->holder.session);
	if (s != NULL)
		t->holder.peer = (struct msg_str) { s->peer, strlen(s->peer) };
}

void
ops_view_to_task(const struct core *c, const struct queue_task_view *v,
    bool payload, struct msg_task *t)
{
	memset(t, 0, sizeof(*t));
	t->id = v->id;
	t->lease = v->lease;
	t->state = (uint8_t)v->state; /* the numbers agree */
	t->detached = v->detached;
	t->priority = v->pri;
	t->attempts = v->attempts;
	t->max_attempts = v->max_attempts;
	t->ttr = v->ttr;
	t->run_at = (uint64_t)v->run_at;
	t->period = (uint64_t)v->period;
	t->created_at = (uint64_t)v->created_at;
	t->updated_at = (uint64_t)v->updated_at;
	t->taken_at = (uint64_t)v->taken_at;
	t->deadline = (uint64_t)v->deadline;
	t->size = (uint32_t)v->payload_len;
	t->tube = (struct msg_str) { v->tube, v->tube_len };
	t->version = v->version;
	if (v->key != NULL)
		t->key = (struct msg_str) { v->key, v->key_len };
	if (v->last_error != NULL)
		t->last_error =
		    (struct msg_str) { v->last_error, v->last_error_len };
	if (payload)
		t->payload = (struct msg_str) { v->payload, v->payload_len };
	if (v->state == QUEUE_DONE) {
		t->done.finished_at = (uint64_t)v->finished_at;
		t->done.kept_until = (uint64_t)v->kept_until;
		t->done.duration = (uint64_t)v->duration;
		if (v->result != NULL)
			t->done.result =
			    (struct msg_str) { v->result, v->result_len };
	}
	if (v->replace_pending) {
		t->replace_pending = true;
		t->pending.priority = v->repl.pri;
		t->pending.max_attempts = v->repl.max_attempts;
		t->pending.ttr = v->repl.ttr;
		t->pending.run_at = (uint64_t)v->repl.run_at;
		t->pending.period = (uint64_t)v->repl.period;
		t->pending.size = (uint32_t)v->repl.payload_len;
		t->pending.version = v->repl.version;
		if (payload)
			t->pending.payload = (struct msg_str) { v->repl.payload,
				v->repl.payload_len };
	}
	task_holder(c, v, t);
}

void
ops_reply(struct core *c, struct net_ctx *ctx, const struct msg_rep *rep)
{
	int rc;

	buf_reset(&c->out);
	rc = msg_encode_rep(&c->out, rep);
	if (rc != 0) {
		core_reply_err(c, ctx, rep->op, rc > 0 ? rc : SLUICE_ENOMEM,
		    "cannot encode the reply: %s", sluice_strerror(rc));
		return;
	}
	core_reply(c, ctx);
}

/* The reply of ack, release, fail, touch, bury, kick_id: where the task
 * is now; `replaced`: its lease ended by a pending replacement taking its
 * place (said only to a request that asked). */
static void
reply_after(
    struct core *c, struct net_ctx *ctx, uint8_t op, uint64_t id, bool replaced)
{
	struct msg_rep rep = { .op = op };
	struct queue_task_view v;

	rep.after.id = id;
	rep.after.replaced = replaced;
	if (queue_peek(c->q, c->now, id, &v) == 0) {
		rep.after.state = (uint8_t)v.state;
		rep.after.run_at = (uint64_t)v.run_at;
		rep.after.deadline = (uint64_t)v.deadline;
	}
	ops_reply(c, ctx, &rep);
}

/* ---- put ------------------------------------------------------------- */

static void
put_req_from_msg(
    struct core *c, const struct msg_put *m, struct queue_put_req *r)
{
	queue_put_req_init(r);
	r->tube = m->tube.p;
	r->tube_len = m->tube.len;
	r->payload = m->payload.p;
	r->payload_len = m->payload.len;
	r->pri = m->priority;
	if (m->at)
		r->run_at = m->at && m->when == 0 ? c->now : (int64_t)m->when;
	else
		r->delay_ms = (int64_t)m->when;
	r->ttr_ms = (uint32_t)(m->ttr > UINT32_MAX ? UINT32_MAX : m->ttr);
	r->max_attempts = m->max_attempts;
	r->period_ms = (int64_t)m->period;
	r->key = m->key.p;
	r->key_len = m->key.len;
	r->replace = m->replace;
	r->if_newer = m->if_newer;
}

/* One put: decide and commit. Returns 0 or an error code. */
static int
put_one(struct core *c, const struct msg_put *m, struct msg_put_res *res)
{
	struct queue_put_req req;
	struct queue_put_res qres;
	struct qrec r;
	uint64_t lsn;
	int rc;

	c->quota.why[0] = '\0';
	if (m->ttr > UINT32_MAX || m->when > (uint64_t)QREC_TIME_MAX ||
	    m->period > (uint64_t)QREC_TIME_MAX)
		return SLUICE_EINVAL;
	put_req_from_msg(c, m, &req);
	rc = queue_decide_put(c->q, c->now, &req, &r, &qres);
	if (rc != 0)
		return rc;
	if (r.type != QREC_NONE) {
		if ((rc = quota_admit(c, &r)) != 0)
			return rc;
		rc = core_commit(c, &r, WAL_NEW_WORK, &lsn);
		if (rc != 0)
			return rc;
	}
	res->status = 0;
	res->created = qres.created;
	res->stale = qres.stale;
	res->id = qres.id;
	return 0;
}

/* A name the client sent, fit for a message: at most 64 bytes, bytes that
 * cannot be part of a tube name or a key shown as '?'. */
static void
show_name(struct msg_str s, char *out, size_t cap)
{
	size_t n = s.len < 64 ? s.len : 64, k = 0;

	for (size_t i = 0; i < n && k + 4 < cap; i++) {
		unsigned char ch = (unsigned char)s.p[i];

		out[k++] =
		    ch >= 0x20 && ch < 0x7f && ch != '\'' ? (char)ch : '?';
	}
	if (n < s.len && k + 4 < cap) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

/* Why a put, or one item of a batch put, was refused: `rc` in words that
 * name what is wrong with the request. */
static void
put_err_text(
    struct core *c, const struct msg_put *m, int rc, char *out, size_t len)
{
	char name[80];

	switch (rc) {
	case SLUICE_ETUBE:
		show_name(m->tube, name, sizeof(name));
		snprintf(out, len,
		    "bad tube name '%s' (%zu bytes): 1-200 bytes of A-Z a-z "
		    "0-9 _ . : / -",
		    name, m->tube.len);
		return;
	case SLUICE_EKEY:
		snprintf(out, len,
		    "bad key of %zu bytes: a key is 1-200 bytes, no NUL byte",
		    m->key.len);
		return;
	case SLUICE_ETOOBIG:
		snprintf(out, len,
		    "payload of %zu bytes: over the server's limit of %zu "
		    "bytes",
		    m->payload.len, c->limits.payload_max);
		return;
	case SLUICE_EINVAL:
		snprintf(out, len, "%s",
		    m->replace && m->key.len == 0 ? "replace needs a key"
		        : m->error == SLUICE_EINVAL ||
		            (m->if_newer != 0 && !m->replace)
		        ? "if-newer needs replace, a key and a version of at "
		          "least 1"
		        : "a value out of range: ttr (up to 7 days), delay, "
		          "run_at or period");
		return;
	case SLUICE_ELIMIT:
		snprintf(out, len, "%s",
		    c->quota.why[0] != '\0'
		        ? c->quota.why
		        : "the server holds as many tasks or tubes as it may");
		return;
	default:
		break;
	}
	snprintf(out, len, "%s", sluice_strerror(rc));
}

static void
op_put(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct msg_rep rep = { .op = MSG_OP_PUT };
	int rc = put_one(c, &req->put, &rep.put);
	char text[MSG_TEXT_MAX / 2], name[80];

	if (rc != 0) {
		put_err_text(c, &req->put, rc, text, sizeof(text));
		show_name(req->put.tube, name, sizeof(name));
		if (rc == SLUICE_ETUBE)
			core_reply_err(c, ctx, MSG_OP_PUT, rc, "put: %s", text);
		else
			core_reply_err(c, ctx, MSG_OP_PUT, rc,
			    "put to tube '%s': %s", name, text);
		return;
	}
	ops_reply(c, ctx, &rep);
}

enum { ITEM_TEXT = 256 }; /* a batch item's message, at most */

/* Each item on its own: one that breaks a limit of its own (the decoder
 * marked it) or that the queue refuses gets its code, and its message when
 * the request asked for them; the others are put. All of them in one
 * turn of the core, so one commit. */
static void
op_put_batch(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	const struct msg_put_batch *b = &req->put_batch;
	struct msg_rep rep = { .op = MSG_OP_PUT_BATCH };
	struct msg_iter it = b->it;
	struct msg_put_res *res;
	char(*texts)[ITEM_TEXT] = NULL;
	struct msg_put m;
	uint32_t n = 0;

	res = calloc(b->n, sizeof(*res));
	if (b->messages)
		texts = calloc(b->n, sizeof(*texts));
	if (res == NULL || (b->messages && texts == NULL)) {
		free(res);
		free(texts);
		core_reply_err(c, ctx, MSG_OP_PUT_BATCH, SLUICE_ENOMEM, NULL);
		return;
	}
	while (n < b->n && msg_next_put(&it, &m)) {
		int rc = m.error != 0 ? m.error : put_one(c, &m, &res[n]);

		if (rc != 0) {
			res[n].status = (uint16_t)(rc > 0 ? rc : SLUICE_ENOMEM);
			res[n].id = 0;
			res[n].created = false;
			if (texts != NULL) {
				put_err_text(c, &m, rc, texts[n], ITEM_TEXT);
				res[n].message = msg_cstr(texts[n]);
			}
		}
		n++;
	}
	rep.put_batch.n = n;
	rep.put_batch.messages = b->messages;
	rep.put_batch.items = res;
	ops_reply(c, ctx, &rep);
	free(res);
	free(texts);
}

/* ---- take and the waiters ------------------------------------------- */

/* The log's class of a take of task `id`: its first take finishes work
 * accepted with its put (its space is reserved); a task taken before is
 * taken again from the pool. */
unsigned
ops_take_flags(struct core *c, uint64_t id)
{
	struct queue_task_view v;

	if (queue_peek(c->q, c->now, id, &v) == 0 && v.attempts == 0)
		return 0;
	return WAL_RETRY;
}

/* The room for the tasks of a reply to `session` beyond its first: the
 * HTTP face writes the reply again as JSON, where a payload byte may take
 * up to HTTP_JSON_GROWTH (a \u00XX escape), so its replies get that much
 * less. */
static size_t
reply_budget(const struct core *c, uint32_t session)
{
	if (c->http != NULL && session == http_session(c->http))
		return REPLY_MAX / HTTP_JSON_GROWTH;
	return REPLY_MAX;
}

size_t
ops_task_wire_max(const struct queue_task_view *v, bool payload)
{
	size_t n = TASK_WIRE_FIXED + v->tube_len + v->key_len +
	    v->last_error_len + v->result_len + MSG_PEER_MAX;

	if (payload)
		n += v->payload_len +
		    (v->replace_pending ? v->repl.payload_len : 0);
	return n;
}

/* Takes up to `max` tasks now into ids[], no more than the reply can
 * carry (REPLY_MAX; an HTTP take, beyond its first task, a sixth of it):
 * a take is applied only when its task is handed out. Returns 0 with *got >= 1;
 * or the reason there is nothing (SLUICE_ETIMEDOUT, SLUICE_EPAUSED),
 * SLUICE_EMSGSIZE when the first task alone is over the reply limit (its id in
 * *big, nothing taken), or an error, with *got tasks taken before it. */
static int
take_now(struct core *c, const struct queue_take_req *tr, uint32_t max,
    uint64_t *ids, uint32_t *got, uint64_t *big)
{
	size_t bytes = REPLY_HEAD_MAX, need, budget = REPLY_MAX;
	struct queue_task_view v;
	struct qrec r;
	unsigned flags;
	uint64_t lsn;
	int rc = 0;

	budget = reply_budget(c, (uint32_t)tr->session);
	*got = 0;
	while (*got < max) {
		rc = queue_decide_take(c->q, c->now, tr, &r);
		if (rc != 0)
			break;
		flags = WAL_RETRY;
		need = 0;
		if (queue_peek(c->q, c->now, r.u.take.id, &v) == 0) {
			flags = v.attempts == 0 ? 0 : WAL_RETRY;
			need = ops_task_wire_max(&v, true);
		}
		if (need > REPLY_MAX - bytes ||
		    (*got > 0 && bytes + need > budget)) {
			if (*got == 0) {
				rc = SLUICE_EMSGSIZE;
				*big = r.u.take.id;
			}
			break;
		}
		rc = core_commit(c, &r, flags, &lsn);
		if (rc != 0)
			break;
		bytes += need;
		ids[(*got)++] = r.u.take.id;
	}
	return *got > 0 ? 0 : rc;
}

/* The error of a take that got nothing. */
static void
take_err(struct core *c, struct net_ctx *ctx, int rc, uint64_t big)
{
	if (rc == SLUICE_EMSGSIZE)
		core_reply_err(c, ctx, MSG_OP_TAKE, rc,
		    "take: task %" PRIu64 " is over the reply limit of %d "
		    "bytes with its payload; nothing was taken (peek it "
		    "without payload, or delete it)",
		    big, (int)REPLY_MAX);
	else
		core_reply_err(
		    c, ctx, MSG_OP_TAKE, rc, "take: %s", sluice_strerror(rc));
}

/* Answers a take of `session` with the tasks it got. Should the reply
 * not reach its client, the core undoes the takes (core.c). */
static void
reply_tasks(struct core *c, struct net_ctx *ctx, uint32_t session,
    const uint64_t *ids, uint32_t n)
{
	struct msg_rep rep = { .op = MSG_OP_TAKE };
	struct msg_task *tasks = NULL;
	struct core_take *takes = NULL;
	struct queue_task_view v;
	uint32_t k = 0;

	if (n > 0) {
		/* one allocation: the take's reply is the hot path */
		tasks = calloc(n, sizeof(*tasks) + sizeof(*takes));
		if (tasks == NULL) {
			core_reply_err(
			    c, ctx, MSG_OP_TAKE, SLUICE_ENOMEM, NULL);
			return;
		}
		takes = (struct core_take *)(tasks + n);
	}
	for (uint32_t i = 0; i < n; i++) {
		if (queue_peek(c->q, c->now, ids[i], &v) != 0)
			continue;
		takes[k] = (struct core_take) { v.id, v.lease };
		ops_view_to_task(c, &v, true, &tasks[k++]);
	}
	rep.tasks.n = k;
	rep.tasks.tasks = tasks;
	c->reply_take = k > 0 && !c->take_durable;
	c->reply_takes = takes;
	c->reply_ntakes = k;
	c->reply_session = session;
	ops_reply(c, ctx, &rep);
	c->reply_take = false;
	c->reply_takes = NULL;
	c->reply_ntakes = 0;
	free(tasks);
}

/* ---- parking a take ---------------------------------------------------
 *
 * The one place a take is parked (park_take): the limits on waiting takes
 * are checked there, before anything is allocated. */

/* Whether the parked takes of `session` are counted for the cap per
 * connection: the HTTP face's requests share one session, and each of its
 * connections waits for one answer at a time. */
static bool
session_capped(const struct core *c, uint32_t session)
{
	return c->http == NULL || session != http_session(c->http);
}

/* Parks take `tr` (its tube names copied) until a task comes or its wait
 * passes. Returns 0, or SLUICE_ELIMIT (answered here, with what limit)
 * or SLUICE_ENOMEM. `behind`: it was not tried, others wait on some of
 * its tubes: it is tried this turn behind them (on the tubes where it
 * waits first). */
static int
park_take(struct core *c, struct net_ctx *ctx, const struct queue_take_req *tr,
    const struct msg_take *t, bool behind)
{
	uint32_t conn_max = c->cfg->max_waits_conn;
	uint64_t node_max = c->cfg->max_waits;
	struct waiter *w;
	int rc;

	if (node_max != 0 && c->waits.n >= node_max) {
		c->waits_refused++;
		core_reply_err(c, ctx, MSG_OP_TAKE, SLUICE_ELIMIT,
		    "take: %" PRIu64 " takes wait on this node already, the "
		    "most it allows (--max-waiting-takes); take without "
		    "waiting, or try again later",
		    node_max);
		return SLUICE_ELIMIT;
	}
	if (conn_max != 0 && session_capped(c, (uint32_t)tr->session) &&
	    waiters_of_session(&c->waits, (uint32_t)tr->session) >= conn_max) {
		c->waits_refused++;
		core_reply_err(c, ctx, MSG_OP_TAKE, SLUICE_ELIMIT,
		    "take: %u takes wait on this connection already, the "
		    "most it allows (--max-waiting-takes-per-conn)",
		    conn_max);
		return SLUICE_ELIMIT;
	}
	w = waiters_new(tr->tubes, tr->ntubes);
	if (w == NULL)
		return SLUICE_ENOMEM;
	if (quota_park(c, w) != 0) { /* the token's takes waiting */
		free(w);
		c->waits_refused++;
		core_reply_err(c, ctx, MSG_OP_TAKE, SLUICE_ELIMIT, "take: %s",
		    c->quota.why);
		return SLUICE_ELIMIT;
	}
	w->ctx = ctx;
	w->session = (uint32_t)tr->session;
	w->max = t->max;
	w->detached = tr->detached;
	w->strict = tr->strict;
	w->durable = t->durable;
	w->deadline = clock_mono_ms() +
	    (int64_t)(t->wait > (uint64_t)INT32_MAX * 1000
	            ? (uint64_t)INT32_MAX * 1000
	            : t->wait);
	if ((rc = waiters_add(&c->waits, w)) != 0) {
		quota_unpark(c, w);
		free(w);
		return rc;
	}
	if (behind)
		waiters_mark_heads(&c->waits, w);
	net_waiting(ctx);
	return 0;
}

/* Whether a take waits on one of the tubes of `tr`: a new take that may
 * wait then waits behind it, so a task goes to whoever waited longest. */
static bool
waited_on(const struct core *c, const struct queue_take_req *tr)
{
	if (c->waits.n == 0)
		return false;
	for (size_t i = 0; i < tr->ntubes; i++)
		if (waiters_on(&c->waits, tr->tubes[i].p, tr->tubes[i].len))
			return true;
	return false;
}

static void
op_take(struct core *c, struct net_ctx *ctx, uint32_t session,
    const struct msg_req *req)
{
	struct queue_str tubes[MSG_TAKE_TUBES_MAX];
	struct msg_iter it = req->take.it;
	const struct msg_take *t = &req->take;
	struct queue_take_req tr = { tubes, 0, session, t->detach, t->strict };
	uint64_t *ids, big = 0;
	struct msg_str s;
	uint32_t got = 0;
	int rc;

	while (tr.ntubes < MSG_TAKE_TUBES_MAX && msg_next_str(&it, &s))
		tubes[tr.ntubes++] = (struct queue_str) { s.p, s.len };
	/* Queue behind those who waited first. */
	if (t->wait > 0 && waited_on(c, &tr)) {
		rc = park_take(c, ctx, &tr, t, true);
		if (rc == SLUICE_ENOMEM)
			core_reply_err(c, ctx, MSG_OP_TAKE, rc, NULL);
		return;
	}
	ids = malloc(t->max * sizeof(*ids));
	if (ids == NULL) {
		core_reply_err(c, ctx, MSG_OP_TAKE, SLUICE_ENOMEM, NULL);
		return;
	}
	rc = take_now(c, &tr, t->max, ids, &got, &big);
	if (got == 0 && rc == SLUICE_ENOSPC && t->wait > 0)
		rc = SLUICE_ETIMEDOUT; /* a retake on a full log: wait for
		                        * room as for a task */
	if (got == 0 && (rc == SLUICE_ETIMEDOUT || rc == SLUICE_EPAUSED)) {
		if (t->wait > 0) {
			rc = park_take(c, ctx, &tr, t, false);
			if (rc == SLUICE_ENOMEM)
				core_reply_err(c, ctx, MSG_OP_TAKE, rc, NULL);
		} else {
			reply_tasks(c, ctx, session, ids, 0);
		}
	} else if (got == 0) {
		take_err(c, ctx, rc, big);
	} else {
		c->take_durable = t->durable;
		reply_tasks(c, ctx, session, ids, got);
		c->take_durable = false;
	}
	free(ids);
}

/* ---- the waiting takes ------------------------------------------------ */

static void
waiter_end(struct core *c, struct waiter *w)
{
	waiters_remove(&c->waits, w);
	quota_unpark(c, w);
	free(w);
}

/* Serves tube `t`'s waiters from the first: each takes what it can (from
 * any of its tubes). The first that finds nothing ends it: the tube has
 * no task for anyone now. One that meets a full log puts the tube off to
 * the next turn. A waiter whose client left is dropped: it takes
 * nothing. */
static void
serve_tube(struct core *c, struct wait_tube *t, uint64_t *ids)
{
	struct waiter *w;

	while ((w = waiters_head(t)) != NULL) {
		struct queue_take_req tr = { w->tubes, w->ntubes, w->session,
			w->detached, w->strict };
		uint32_t got = 0;
		uint64_t big = 0;
		int rc;

		if (!net_alive(w->ctx)) {
			net_drop(c->net, w->ctx);
			waiter_end(c, w);
			continue;
		}
		rc = take_now(c, &tr, w->max, ids, &got, &big);
		if (got > 0) {
			struct net_ctx *ctx = w->ctx;
			uint32_t session = w->session;

			c->take_durable = w->durable;
			waiter_end(c, w);
			reply_tasks(c, ctx, session, ids, got);
			c->take_durable = false;
		} else if (rc == SLUICE_ENOSPC) {
			waiters_retry(&c->waits, t);
			return;
		} else if (rc == SLUICE_ETIMEDOUT || rc == SLUICE_EPAUSED) {
			break;
		} else {
			take_err(c, w->ctx, rc, big);
			waiter_end(c, w);
		}
	}
	waiters_release(&c->waits, t);
}

void
ops_serve_waiters(struct core *c, int64_t mono_ms)
{
	uint64_t ids[MSG_TAKE_MAX];
	struct wait_tube *t;
	struct waiter *w;

	ops_auth_serve(c, mono_ms);
	if (c->waits_check) {
		c->waits_check = false;
		ops_check_waiters(c);
	}
	waiters_turn(&c->waits);
	while ((t = waiters_next_marked(&c->waits)) != NULL)
		serve_tube(c, t, ids);
	while ((w = waiters_first_due(&c->waits)) != NULL &&
	    w->deadline <= mono_ms) {
		struct net_ctx *ctx = w->ctx;
		uint32_t session = w->session;
		bool alive = net_alive(ctx);

		waiter_end(c, w);
		if (alive)
			reply_tasks(c, ctx, session, ids, 0);
		else
			net_drop(c->net, ctx);
	}
}

void
ops_check_waiters(struct core *c)
{
	struct waiter *w, *next;

	/* Only the HTTP face watches its waiting connections (a beanstalk
	 * or native connection that closes ends its session). */
	if (c->http == NULL)
		return;
	for (w = waiters_session_head(&c->waits, http_session(c->http));
	     w != NULL; w = next) {
		next = w->snext;
		if (net_alive(w->ctx))
			continue;
		net_drop(c->net, w->ctx);
		waiter_end(c, w);
	}
}

void
ops_drop_waiters(struct core *c, uint32_t session)
{
	struct waiter *w;

	while ((w = waiters_session_head(&c->waits, session)) != NULL) {
		net_drop(c->net, w->ctx);
		waiter_end(c, w);
	}
	ops_auth_drop(c, session, false);
}

void
ops_end_waiters(struct core *c)
{
	struct waiter *w;

	ops_auth_serve(c, INT64_MAX);
	while ((w = waiters_any(&c->waits)) != NULL) {
		struct net_ctx *ctx = w->ctx;
		uint32_t session = w->session;

		waiter_end(c, w);
		reply_tasks(c, ctx, session, NULL, 0);
	}
}

int64_t
ops_next_deadline(const struct core *c)
{
	int64_t min = ops_auth_next(c);
	const struct waiter *w = waiters_first_due(&c->waits);

	if (w != NULL && w->deadline < min)
		min = w->deadline;
	return min;
}

void
ops_tube_ready(void *arg, const char *name, size_t len)
{
	struct core *c = arg;

	if (c->waits.n > 0)
		waiters_mark(&c->waits, name, len);
}

/* ---- the lease operations ------------------------------------------- */

/* Who sent a request, for the log: the peer's address as its face knows
 * it, or an nng client's (its pipe's remote address), else the session. */
static void
peer_name(const struct net_ctx *ctx, nng_msg *msg, uint32_t session, char *out,
    size_t len)
{
	const char *known = ctx->face != NULL && ctx->face->peer != NULL
	    ? ctx->face->peer(ctx)
	    : NULL;

	if (known != NULL) {
		snprintf(out, len, "%s", known);
		return;
	}
	face_nng_pipe_peer(nng_msg_get_pipe(msg), out, len);
	if (out[0] == '\0')
		snprintf(out, len, "session-%" PRIu32, session);
}

bool
ops_req_forced(const struct msg_req *r)
{
	switch (r->op) {
	case MSG_OP_ACK:
		return r->ack.force;
	case MSG_OP_RELEASE:
		return r->release.force;
	case MSG_OP_FAIL:
		return r->fail.force;
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		return r->lease.force;
	case MSG_OP_RELEASE_ALL:
		return true; /* an operator's override of every lease */
	default:
		return false;
	}
}

/* Why a lease operation was refused, in words that name the task and what
 * is wrong with the request, into out[len]. Never says the task's current
 * lease. */
static void
lease_err_text(struct core *c, uint8_t op, uint64_t id, uint64_t lease, int rc,
    char *out, size_t len)
{
	const char *name = msg_op_name(op);
	struct queue_task_view v;

	if (op == MSG_OP_ACK_BATCH)
		name = "ack";
	switch (rc) {
	case SLUICE_ENOTFOUND:
		snprintf(out, len, "%s %" PRIu64 ": no such task", name, id);
		return;
	case SLUICE_ESTATE:
		if (queue_peek(c->q, c->now, id, &v) != 0)
			break;
		snprintf(out, len,
		    "%s %" PRIu64 ": the task is %s, not taken%s", name, id,
		    queue_state_name(v.state),
		    op == MSG_OP_BURY && v.state != QUEUE_BURIED
		        ? " (an operator parks it with force)"
		        : "");
		return;
	case SLUICE_ESTALE:
		if (lease == 0)
			snprintf(out, len,
			    "%s %" PRIu64 ": a lease is required: the one "
			    "its take returned (force overrides it, as an "
			    "operator)",
			    name, id);
		else
			snprintf(out, len,
			    "%s %" PRIu64 ": lease %" PRIu64 " is stale: the "
			    "task was released, expired or taken again",
			    name, id, lease);
		return;
	default:
		break;
	}
	snprintf(out, len, "%s %" PRIu64 ": %s", name, id, sluice_strerror(rc));
}

static void
lease_err(struct core *c, struct net_ctx *ctx, uint8_t op, uint64_t id,
    uint64_t lease, int rc)
{
	char text[MSG_TEXT_MAX / 2];

	lease_err_text(c, op, id, lease, rc, text, sizeof(text));
	core_reply_err(c, ctx, op, rc, "%s", text);
}

/* Whether a lease request asked to be told of a replacement. */
static bool
req_report(const struct msg_req *r)
{
	switch (r->op) {
	case MSG_OP_ACK:
		return r->ack.report;
	case MSG_OP_RELEASE:
		return r->release.report;
	case MSG_OP_FAIL:
		return r->fail.report;
	case MSG_OP_BURY:
		return r->lease.report;
	default:
		return false;
	}
}

/* Answers a lease operation whose record `r` was committed (rc 0) or
 * refused. `peer` is set for a forced request, which is logged whatever
 * its result. */
static void
lease_done(struct core *c, struct net_ctx *ctx, const struct msg_req *req,
    uint64_t id, uint64_t lease, int rc, const struct qrec *r, const char *peer)
{
	uint8_t op = req->op;
	bool replaced;

	if (peer != NULL && rc == 0)
		log_warn("ops",
		    "lease override request=%s id=%" PRIu64
		    " peer=%s result=ok",
		    msg_op_name(op), id, peer);
	else if (peer != NULL)
		log_warn("ops",
		    "lease override request=%s id=%" PRIu64 " peer=%s "
		    "result=error error=\"%s\"",
		    msg_op_name(op), id, peer, sluice_strerror(rc));
	if (rc != 0) {
		lease_err(c, ctx, op, id, lease, rc);
		return;
	}
	replaced = r->type != QREC_TOUCH && r->type != QREC_NONE &&
	    r->u.end.outcome == QREC_REPLACED;
	reply_after(c, ctx, op, id, replaced && req_report(req));
}

/* Commits `r` after a decide that returned `rc`, with the log's class
 * `flags` (reserve.h); answers. */
static void
finish_lease_op(struct core *c, struct net_ctx *ctx, const struct msg_req *req,
    uint64_t id, uint64_t lease, int rc, const struct qrec *r, unsigned flags,
    const char *peer)
{
	uint64_t lsn;

	if (rc == 0 && r->type != QREC_NONE)
		rc = core_commit(c, r, flags, &lsn);
	lease_done(c, ctx, req, id, lease, rc, r, peer);
}

/* The log's class of a decided ack: one that keeps the task alive (its
 * next run, another tube, a replacement) starts its life again, a retry;
 * one that ends it (deleted, or kept as done) finishes accepted work. */
static unsigned
ack_flags(int rc, const struct qrec *r)
{
	return rc == 0 && r->type == QREC_ACK &&
	        r->u.end.outcome != QREC_DELETED &&
	        r->u.end.outcome != QREC_DONE
	    ? WAL_RETRY
	    : 0;
}

/* The reserve holds a lease's end with RESERVE_ERROR_MAX bytes of text (a
 * fail's or a setback's error, an ack's result), less the name of the
 * dead-letter tube it moves the task to: a longer one is written whole
 * only beyond the floor, and cut when the log is that full. True when `r`
 * was committed here; else *rc and `r` (perhaps cut) are for the usual
 * way. */
static bool
commit_long_text(struct core *c, struct qrec *r, int *rc)
{
	size_t room = RESERVE_ERROR_MAX - r->u.end.to_len;
	uint64_t lsn;

	if (*rc != 0 || r->u.end.text_len <= room)
		return false;
	*rc = core_commit(c, r, WAL_RETRY, &lsn);
	if (*rc == 0)
		return true;
	if (*rc == SLUICE_ENOSPC) {
		r->u.end.text_len =
		    reserve_error_len(r->u.end.text, r->u.end.text_len, room);
		*rc = 0;
	}
	return false;
}

static void
op_ack(struct core *c, struct net_ctx *ctx, const struct msg_req *req,
    const char *peer)
{
	const struct msg_ack *m = &req->ack;
	struct queue_ack_req a = { m->id, m->lease, m->to.p, m->to.len,
		m->force, m->result.p, m->result.len };
	struct qrec r;
	int rc = queue_decide_ack(c->q, c->now, &a, &r);

	if (rc == 0 && r.type == QREC_ACK && r.u.end.outcome == QREC_MOVED &&
	    (rc = quota_admit(c, &r)) != 0) {
		core_reply_err(c, ctx, MSG_OP_ACK, rc, "ack %" PRIu64 ": %s",
		    m->id, c->quota.why);
		return;
	}
	if (rc == 0 && r.type == QREC_ACK && r.u.end.outcome == QREC_DONE &&
	    commit_long_text(c, &r, &rc)) {
		lease_done(c, ctx, req, m->id, m->lease, 0, &r, peer);
		return;
	}
	finish_lease_op(
	    c, ctx, req, m->id, m->lease, rc, &r, ack_flags(rc, &r), peer);
}

/* ---- ack_batch and delete_batch --------------------------------------- */

/* The results of a batch being answered: a status per item, and a text
 * per refused item when the request asked for them. */
struct batch_out {
	struct msg_item_res *res;
	char (*texts)[ITEM_TEXT];
	uint32_t n;
};

static int
batch_out_new(struct batch_out *o, uint32_t n, bool messages)
{
	o->n = n;
	o->res = calloc(n, sizeof(*o->res));
	o->texts = messages ? calloc(n, sizeof(*o->texts)) : NULL;
	if (o->res == NULL || (messages && o->texts == NULL)) {
		free(o->res);
		free(o->texts);
		return SLUICE_ENOMEM;
	}
	return 0;
}

/* Sets item i's result to `rc`; returns where its text goes when it was
 * refused and the request asked for texts, else NULL. */
static char *
batch_item(struct batch_out *o, uint32_t i, int rc)
{
	o->res[i].status = (uint16_t)(rc == 0 ? 0
	        : rc > 0                      ? rc
	                                      : SLUICE_ENOMEM);
	return rc == 0 || o->texts == NULL ? NULL : o->texts[i];
}

/* Answers with every item's result once the log holds the batch (all its
 * records were appended in this turn: one commit), and frees them. */
static void
batch_reply(
    struct core *c, struct net_ctx *ctx, uint8_t op, struct batch_out *o)
{
	struct msg_rep rep = { .op = op };

	for (uint32_t i = 0; o->texts != NULL && i < o->n; i++)
		o->res[i].message = msg_cstr(o->texts[i]);
	rep.batch.n = o->n;
	rep.batch.messages = o->texts != NULL;
	rep.batch.items = o->res;
	ops_reply(c, ctx, &rep);
	free(o->res);
	free(o->texts);
}

/* Each (id, lease) acked on its own, as a plain ack without force or a
 * move: the lease rule per item, one bad item refusing only itself. */
static void
op_ack_batch(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	const struct msg_ack_batch *b = &req->ack_batch;
	struct msg_iter it = b->it;
	struct msg_ack_item m;
	struct batch_out o;
	uint32_t i = 0;

	if (batch_out_new(&o, b->n, b->messages) != 0) {
		core_reply_err(c, ctx, req->op, SLUICE_ENOMEM, NULL);
		return;
	}
	for (; i < b->n && msg_next_ack_item(&it, &m); i++) {
		struct queue_ack_req a = { m.id, m.lease, NULL, 0, false };
		struct qrec r;
		uint64_t lsn;
		char *why;
		int rc = ops_auth_hidden(c, m.id)
		    ? SLUICE_ENOTFOUND
		    : queue_decide_ack(c->q, c->now, &a, &r);

		if (rc == 0)
			rc = core_commit(c, &r, ack_flags(rc, &r), &lsn);
		if ((why = batch_item(&o, i, rc)) != NULL)
			lease_err_text(
			    c, req->op, m.id, m.lease, rc, why, ITEM_TEXT);
	}
	batch_reply(c, ctx, req->op, &o);
}

static void
op_delete_batch(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	const struct msg_delete_batch *b = &req->delete_batch;
	struct msg_iter it = b->it;
	struct batch_out o;
	uint64_t id;
	uint32_t i = 0;

	if (batch_out_new(&o, b->n, b->messages) != 0) {
		core_reply_err(c, ctx, req->op, SLUICE_ENOMEM, NULL);
		return;
	}
	for (; i < b->n && msg_next_id(&it, &id); i++) {
		struct queue_delete_req a = { id, NULL, 0 };
		struct qrec r;
		uint64_t lsn;
		char *why;
		int rc = ops_auth_hidden(c, id)
		    ? SLUICE_ENOTFOUND
		    : queue_decide_delete(c->q, c->now, &a, &r);

		if (rc == 0)
			rc = core_commit(c, &r, 0, &lsn);
		if ((why = batch_item(&o, i, rc)) != NULL)
			snprintf(why, ITEM_TEXT, "delete %" PRIu64 ": %s", id,
			    rc == SLUICE_ENOTFOUND ? "no such task"
			                           : sluice_strerror(rc));
	}
	batch_reply(c, ctx, req->op, &o);
}

static void
op_release(struct core *c, struct net_ctx *ctx, const struct msg_req *req,
    const char *peer)
{
	const struct msg_release *m = &req->release;
	struct queue_release_req a = { 0 };
	struct qrec r;
	int rc = SLUICE_EINVAL;

	a.id = m->id;
	a.lease = m->lease;
	a.force = m->force;
	a.set_pri = m->set_priority;
	a.pri = m->priority;
	if (m->delay <= (uint64_t)QREC_TIME_MAX) {
		a.delay_ms = (int64_t)m->delay;
		rc = queue_decide_release(c->q, c->now, &a, &r);
	}
	finish_lease_op(c, ctx, req, m->id, m->lease, rc, &r, 0, peer);
}

/* finish_lease_op for a record with an error text (FAIL, SETBACK), which
 * may be longer than the reserve holds (commit_long_text). */
static void
finish_with_text(struct core *c, struct net_ctx *ctx, const struct msg_req *req,
    uint64_t id, uint64_t lease, int rc, struct qrec *r, const char *peer)
{
	if (rc == 0 && (r->type == QREC_FAIL || r->type == QREC_SETBACK) &&
	    commit_long_text(c, r, &rc)) {
		lease_done(c, ctx, req, id, lease, 0, r, peer);
		return;
	}
	finish_lease_op(c, ctx, req, id, lease, rc, r, 0, peer);
}

static void
op_fail(struct core *c, struct net_ctx *ctx, const struct msg_req *req,
    const char *peer)
{
	const struct msg_fail *m = &req->fail;
	struct queue_fail_req a = { 0 };
	struct qrec r;
	int rc = SLUICE_EINVAL;

	a.id = m->id;
	a.lease = m->lease;
	a.force = m->force;
	a.error = m->error.p;
	a.error_len = m->error.len;
	a.set_delay = m->set_delay;
	a.fatal = m->fatal;
	if (m->delay <= (uint64_t)QREC_TIME_MAX) {
		a.delay_ms = (int64_t)m->delay;
		rc = queue_decide_fail(c->q, c->now, &a, &r);
	}
	finish_with_text(c, ctx, req, m->id, m->lease, rc, &r, peer);
}

static void
op_touch(struct core *c, struct net_ctx *ctx, const struct msg_req *req,
    const char *peer)
{
	const struct msg_lease *m = &req->lease;
	struct queue_touch_req a = { m->id, m->lease, m->force };
	struct qrec r;
	int rc = queue_decide_touch(c->q, c->now, &a, &r);

	/* A touch extends work already taken: a retry for the log's
	 * reservation, so a full disk cannot be eaten by touches. */
	finish_lease_op(c, ctx, req, m->id, m->lease, rc, &r, WAL_RETRY, peer);
}

static void
op_bury(struct core *c, struct net_ctx *ctx, const struct msg_req *req,
    const char *peer)
{
	const struct msg_lease *m = &req->lease;
	struct queue_bury_req a = { m->id, m->lease, m->force, m->error.p,
		m->error.len };
	struct qrec r;
	int rc = queue_decide_bury(c->q, c->now, &a, &r);

	finish_with_text(c, ctx, req, m->id, m->lease, rc, &r, peer);
}

/* Every taken task of a tube back to ready, attempts kept: an operator's
 * release of the tube's leases (each a RELEASE, as with force), all in
 * this turn's commit window. */
static void
op_release_all(struct core *c, struct net_ctx *ctx, const struct msg_req *req,
    const char *peer)
{
	struct queue_list_req lr = { req->tube.p, req->tube.len, QUEUE_TAKEN,
		QUEUE_BY_AGE, 0 };
	struct msg_rep rep = { .op = MSG_OP_RELEASE_ALL };
	struct queue_task_view *v = NULL;
	struct queue_tube_stats ts;
	size_t n = 0;
	int rc = 0;

	if (queue_tube_stats(c->q, c->now, lr.tube, lr.tube_len, &ts) == 0 &&
	    ts.taken > 0) {
		lr.limit = (size_t)ts.taken;
		v = malloc(lr.limit * sizeof(*v));
		rc = v == NULL ? SLUICE_ENOMEM
		               : queue_list(c->q, c->now, &lr, v, &n);
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct queue_release_req a = { 0 };
		struct qrec r;
		uint64_t lsn;

		a.id = v[i].id;
		a.force = true;
		rc = queue_decide_release(c->q, c->now, &a, &r);
		if (rc == 0)
			rc = core_commit(c, &r, 0, &lsn);
		if (rc == 0)
			rep.count++;
	}
	free(v);
	log_info("ops",
	    "release of every lease tube=%.*s released=%" PRIu64
	    " peer=%s result=%s",
	    (int)lr.tube_len, lr.tube, rep.count, peer ? peer : "-",
	    rc == 0 ? "ok" : sluice_strerror(rc));
	if (rc != 0 && rep.count == 0) {
		core_reply_err(c, ctx, MSG_OP_RELEASE_ALL, rc,
		    "release every task of tube '%.*s': %s", (int)lr.tube_len,
		    lr.tube, sluice_strerror(rc));
		return;
	}
	ops_reply(c, ctx, &rep);
}

/* Kicks up to k->n delayed tasks of the tube, the soonest due first (a
 * beanstalk kick when nothing is buried). Returns as op_kick's loop. */
static int
kick_delayed(struct core *c, const struct msg_kick *k, uint64_t *count)
{
	struct queue_task_view v;
	struct qrec r;
	uint64_t lsn;
	int rc = 0;

	for (uint32_t i = 0; i < k->n; i++) {
		rc = queue_peek_next(
		    c->q, c->now, k->tube.p, k->tube.len, QUEUE_DELAYED, &v);
		if (rc == 0) {
			struct queue_kick_req a = { v.id, NULL, 0 };

			rc = queue_decide_kick(c->q, c->now, &a, &r);
		}
		if (rc == 0)
			rc = core_commit(c, &r, WAL_RETRY, &lsn);
		if (rc != 0)
			break;
		(*count)++;
	}
	return rc;
}

static void
op_kick(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct queue_kick_req a = { 0, req->kick.tube.p, req->kick.tube.len };
	struct msg_rep rep = { .op = MSG_OP_KICK };
	struct qrec r;
	uint64_t lsn;
	int rc = 0;

	for (uint32_t i = 0; i < req->kick.n; i++) {
		rc = queue_decide_kick(c->q, c->now, &a, &r);
		if (rc == 0)
			rc = core_commit(c, &r, WAL_RETRY, &lsn);
		if (rc != 0)
			break;
		rep.count++;
	}
	if (rc == SLUICE_ENOTFOUND && rep.count == 0 && req->kick.delayed)
		rc = kick_delayed(c, &req->kick, &rep.count);
	if (rc != 0 && rc != SLUICE_ENOTFOUND && rep.count == 0) {
		core_reply_err(c, ctx, MSG_OP_KICK, rc, "kick tube '%.*s': %s",
		    (int)a.tube_len, a.tube, sluice_strerror(rc));
		return;
	}
	ops_reply(c, ctx, &rep);
}

static void
op_kick_id(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct queue_kick_req a = { req->id, NULL, 0 };
	struct qrec r;
	uint64_t lsn;
	int rc = queue_decide_kick(c->q, c->now, &a, &r);

	if (rc == 0)
		rc = core_commit(c, &r, WAL_RETRY, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_KICK_ID, rc,
		    "kick %" PRIu64 ": %s", req->id, sluice_strerror(rc));
		return;
	}
	reply_after(c, ctx, MSG_OP_KICK_ID, req->id, false);
}

/* A delete_key or peek_key without the key's tube: a client from before
 * keys were per tube. Named, not guessed: a key may live in many tubes. */
static void
key_without_tube(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	core_reply_err(c, ctx, req->op, SLUICE_EINVAL,
	    "%s: the request names no tube: keys are per tube, so a key is "
	    "found in the tube given with it (flag 0x01 and str16 tube after "
	    "the key, docs/protocol.md)",
	    msg_op_name(req->op));
}

static void
op_delete(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct queue_delete_req a = { 0 };
	struct msg_rep rep = { .op = req->op };
	struct qrec r;
	uint64_t lsn;
	int rc;

	if (req->op == MSG_OP_DELETE) {
		a.id = req->id;
	} else {
		if (req->by_key.tube.len == 0) {
			key_without_tube(c, ctx, req);
			return;
		}
		a.key = req->by_key.key.p;
		a.key_len = req->by_key.key.len;
		a.tube = req->by_key.tube.p;
		a.tube_len = req->by_key.tube.len;
	}
	rc = queue_decide_delete(c->q, c->now, &a, &r);
	if (rc == 0 && r.type != QREC_NONE) {
		rep.id = r.u.del.id;
		rc = core_commit(c, &r, 0, &lsn);
	}
	if (rc != 0) {
		if (req->op == MSG_OP_DELETE)
			core_reply_err(c, ctx, req->op, rc,
			    "delete %" PRIu64 ": %s", req->id,
			    sluice_strerror(rc));
		else
			core_reply_err(c, ctx, req->op, rc,
			    "delete key '%.*s' of tube '%.*s': %s",
			    (int)a.key_len, a.key, (int)a.tube_len, a.tube,
			    sluice_strerror(rc));
		return;
	}
	ops_reply(c, ctx, &rep);
}

/* Why an update was refused, naming the task. */
static void
update_err(struct core *c, struct net_ctx *ctx, uint64_t id, int rc)
{
	struct queue_task_view v;
	bool known = queue_peek(c->q, c->now, id, &v) == 0;

	if (rc == SLUICE_ESTATE && known && v.state == QUEUE_TAKEN)
		core_reply_err(c, ctx, MSG_OP_UPDATE, rc,
		    "update %" PRIu64 ": task %" PRIu64 " is taken: only its "
		    "priority can change while a worker holds it",
		    id, id);
	else if (rc == SLUICE_ESTATE && known && v.state == QUEUE_DONE)
		core_reply_err(c, ctx, MSG_OP_UPDATE, rc,
		    "update %" PRIu64 ": task %" PRIu64 " is done: a finished "
		    "task is kept as it was",
		    id, id);
	else if (rc == SLUICE_ESTATE && known)
		core_reply_err(c, ctx, MSG_OP_UPDATE, rc,
		    "update %" PRIu64 ": task %" PRIu64 " is buried: it waits "
		    "for a kick, not a time (kick it, then change its time)",
		    id, id);
	else if (rc == SLUICE_EINVAL)
		core_reply_err(c, ctx, MSG_OP_UPDATE, rc,
		    "update %" PRIu64 ": a value out of range: ttr (1 ms up to "
		    "7 days), delay or run_at",
		    id);
	else if (rc == SLUICE_ETOOBIG)
		core_reply_err(c, ctx, MSG_OP_UPDATE, rc,
		    "update %" PRIu64 ": a payload over the server's limit of "
		    "%zu bytes",
		    id, c->limits.payload_max);
	else
		core_reply_err(c, ctx, MSG_OP_UPDATE, rc,
		    "update %" PRIu64 ": %s", id,
		    rc == SLUICE_ENOTFOUND ? "no such task"
		                           : sluice_strerror(rc));
}

static void
op_update(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	const struct msg_update *m = &req->update;
	struct queue_update_req a = { 0 };
	struct qrec r;
	uint64_t lsn;
	int rc = SLUICE_EINVAL;

	a.id = m->id;
	a.set_pri = m->set_priority;
	a.pri = m->priority;
	a.set_run_at = m->set_delay || m->set_at;
	a.set_ttr = m->set_ttr;
	a.set_max_attempts = m->set_max_attempts;
	a.max_attempts = m->max_attempts;
	a.set_payload = m->set_payload;
	a.payload = m->payload.p;
	a.payload_len = m->payload.len;
	if (m->when <= (uint64_t)QREC_TIME_MAX && m->ttr <= UINT32_MAX) {
		a.ttr_ms = (uint32_t)m->ttr;
		if (m->set_at)
			a.run_at = m->when == 0 ? c->now : (int64_t)m->when;
		else
			a.delay_ms = (int64_t)m->when;
		rc = queue_decide_update(c->q, c->now, &a, &r);
	}
	/* New content takes room in the log as a put's does; the rest is
	 * churn of work already accepted. */
	if (rc == 0)
		rc = core_commit(
		    c, &r, m->set_payload ? WAL_NEW_WORK : WAL_RETRY, &lsn);
	if (rc != 0) {
		update_err(c, ctx, m->id, rc);
		return;
	}
	reply_after(c, ctx, MSG_OP_UPDATE, m->id, false);
}

static void
op_flush(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct queue_flush_req a = { req->tube.p, req->tube.len };
	struct msg_rep rep = { .op = MSG_OP_FLUSH };
	struct queue_tube_stats ts;
	struct qrec r;
	uint64_t lsn;
	int rc;

	if (queue_tube_stats(c->q, c->now, a.tube, a.tube_len, &ts) == 0)
		rep.count =
		    ts.ready + ts.delayed + ts.taken + ts.buried + ts.done;
	rc = queue_decide_flush(c->q, c->now, &a, &r);
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, 0, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_FLUSH, rc,
		    "flush tube '%.*s': %s", (int)a.tube_len, a.tube,
		    sluice_strerror(rc));
		return;
	}
	ops_reply(c, ctx, &rep);
}

static void
op_delete_where(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	const struct msg_delete_where *m = &req->where;
	struct queue_delete_where_req a = { m->tube.p, m->tube.len, m->state,
		0 };
	struct msg_rep rep = { .op = MSG_OP_DELETE_WHERE };
	struct qrec r;
	uint64_t lsn;
	int rc = SLUICE_EINVAL;

	if (m->older <= (uint64_t)QREC_TIME_MAX) {
		a.older = (int64_t)m->older;
		rc =
		    queue_decide_delete_where(c->q, c->now, &a, &r, &rep.count);
	}
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, 0, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_DELETE_WHERE, rc,
		    "delete %s tasks of tube '%.*s' older than %" PRIu64
		    " ms: %s",
		    msg_state_name(m->state), (int)m->tube.len, m->tube.p,
		    m->older, sluice_strerror(rc));
		return;
	}
	ops_reply(c, ctx, &rep);
}

static void
op_pause(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct queue_pause_req a = { req->pause.tube.p, req->pause.tube.len, 0,
		req->pause.create };
	struct msg_rep rep = { .op = MSG_OP_PAUSE };
	struct qrec r;
	uint64_t lsn;
	int rc = SLUICE_EINVAL;

	if (req->pause.duration <= (uint64_t)QREC_TIME_MAX) {
		a.until = req->pause.duration == 0
		    ? c->now
		    : c->now + (int64_t)req->pause.duration;
		rc = queue_decide_pause(c->q, c->now, &a, &r);
	}
	if (rc == 0 && r.type != QREC_NONE &&
	    (rc = quota_admit(c, &r)) != 0) { /* a tube it would make */
		core_reply_err(c, ctx, MSG_OP_PAUSE, rc,
		    "pause tube '%.*s': %s", (int)a.tube_len, a.tube,
		    c->quota.why);
		return;
	}
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, WAL_RETRY, &lsn);
	if (rc == SLUICE_ENOTFOUND) {
		core_reply_err(c, ctx, MSG_OP_PAUSE, rc,
		    "pause tube '%.*s': no such tube (a tube exists once a "
		    "task was put in it)",
		    (int)a.tube_len, a.tube);
		return;
	}
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_PAUSE, rc,
		    "pause tube '%.*s': %s", (int)a.tube_len, a.tube,
		    sluice_strerror(rc));
		return;
	}
	rep.until = req->pause.duration == 0 ? 0 : (uint64_t)a.until;
	ops_reply(c, ctx, &rep);
}

/* ---- reads ----------------------------------------------------------- */

static void
reply_view(struct core *c, struct net_ctx *ctx, uint8_t op, int rc,
    const struct queue_task_view *v, const char *what)
{
	struct msg_rep rep = { .op = op };

	if (rc != 0) {
		core_reply_err(
		    c, ctx, op, rc, "peek %s: %s", what, sluice_strerror(rc));
		return;
	}
	if (ops_task_wire_max(v, true) > REPLY_MAX - REPLY_HEAD_MAX) {
		core_reply_err(c, ctx, op, SLUICE_EMSGSIZE,
		    "peek %s: task %" PRIu64 " is over the reply limit of %d "
		    "bytes with its payloads; list it without payloads",
		    what, v->id, (int)REPLY_MAX);
		return;
	}
	ops_view_to_task(c, v, true, &rep.task);
	ops_reply(c, ctx, &rep);
}

static void
op_peek(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct queue_task_view v;
	char what[200];
	int rc;

	switch (req->op) {
	case MSG_OP_PEEK:
		snprintf(what, sizeof(what), "%" PRIu64, req->id);
		rc = queue_peek(c->q, c->now, req->id, &v);
		break;
	case MSG_OP_PEEK_KEY:
		if (req->by_key.tube.len == 0) {
			key_without_tube(c, ctx, req);
			return;
		}
		snprintf(what, sizeof(what), "key '%.*s' of tube '%.*s'",
		    (int)req->key.len, req->key.p, (int)req->by_key.tube.len,
		    req->by_key.tube.p);
		rc = queue_peek_key(c->q, c->now, req->by_key.tube.p,
		    req->by_key.tube.len, req->key.p, req->key.len, &v);
		break;
	default:
		snprintf(what, sizeof(what), "next %s of tube '%.*s'",
		    msg_state_name(req->peek_next.state),
		    (int)req->peek_next.tube.len, req->peek_next.tube.p);
		rc = queue_peek_next(c->q, c->now, req->peek_next.tube.p,
		    req->peek_next.tube.len, req->peek_next.state, &v);
		break;
	}
	reply_view(c, ctx, req->op, rc, &v, what);
}

/* How many of the n tasks fit in one reply of `budget` bytes, in order
 * (the first within REPLY_MAX). */
static size_t
list_fit(
    const struct queue_task_view *views, size_t n, bool payloads, size_t budget)
{
	size_t bytes = REPLY_HEAD_MAX, i;

	for (i = 0; i < n; i++) {
		size_t need = ops_task_wire_max(&views[i], payloads);

		if (need > REPLY_MAX - bytes ||
		    (i > 0 && bytes + need > budget))
			break;
		bytes += need;
	}
	return i;
}

static void
op_list(struct core *c, struct net_ctx *ctx, uint32_t session,
    const struct msg_req *req)
{
	size_t budget = reply_budget(c, session);
	const struct msg_list *m = &req->list;
	struct queue_list_req lr = { m->tube.p, m->tube.len, m->state, 0,
		m->limit, m->after };
	struct msg_rep rep = { .op = MSG_OP_LIST };
	struct queue_task_view *views;
	struct msg_task *tasks;
	size_t n = 0, fit;
	int rc;

	lr.order = m->order == MSG_ORDER_ATTEMPTS ? QUEUE_BY_ATTEMPTS
	    : m->order == MSG_ORDER_AGE           ? QUEUE_BY_AGE
	    : m->order == MSG_ORDER_ID            ? QUEUE_BY_ID
	                                          : QUEUE_BY_RUN_AT;
	views = calloc(m->limit, sizeof(*views));
	tasks = calloc(m->limit, sizeof(*tasks));
	rc = views && tasks ? queue_list(c->q, c->now, &lr, views, &n)
	                    : SLUICE_ENOMEM;
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_LIST, rc, "list tube '%.*s': %s",
		    (int)m->tube.len, m->tube.p, sluice_strerror(rc));
	} else if ((fit = list_fit(views, n, m->payloads, budget)) < n) {
		core_reply_err(c, ctx, MSG_OP_LIST, SLUICE_EMSGSIZE,
		    "list tube '%.*s': %zu tasks%s are over the reply limit "
		    "of %zu bytes; the first %zu fit: ask for a limit of %zu%s",
		    (int)m->tube.len, m->tube.p, n,
		    m->payloads ? " with their payloads" : "", budget, fit,
		    fit > 0 ? fit : 1,
		    m->payloads ? ", or list without payloads" : "");
	} else {
		for (size_t i = 0; i < n; i++)
			ops_view_to_task(c, &views[i], m->payloads, &tasks[i]);
		rep.tasks.n = (uint32_t)n;
		rep.tasks.tasks = tasks;
		ops_reply(c, ctx, &rep);
	}
	free(views);
	free(tasks);
}

static void
op_errors(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct msg_rep rep = { .op = MSG_OP_ERRORS };
	struct queue_error_group *g;
	struct msg_error_count *e;
	size_t n = 0;
	int rc;

	g = calloc(ERR_GROUPS_MAX, sizeof(*g));
	e = calloc(ERR_GROUPS_MAX, sizeof(*e));
	rc = g && e ? queue_errors(c->q, c->now, req->tube.p, req->tube.len, g,
	                  ERR_GROUPS_MAX, &n)
	            : SLUICE_ENOMEM;
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_ERRORS, rc,
		    "errors of tube '%.*s': %s", (int)req->tube.len,
		    req->tube.p, sluice_strerror(rc));
	} else {
		for (size_t i = 0; i < n; i++) {
			e[i].text =
			    (struct msg_str) { g[i].text, g[i].text_len };
			e[i].count = g[i].count;
			e[i].nids = (uint8_t)g[i].nids;
			memcpy(e[i].ids, g[i].ids,
			    g[i].nids * sizeof(e[i].ids[0]));
		}
		rep.errors.ids = req->errors.ids;
		rep.errors.n = (uint32_t)n;
		rep.errors.errors = e;
		ops_reply(c, ctx, &rep);
	}
	free(g);
	free(e);
}

static void
dist_to_msg(const struct queue_dist *d, struct msg_dist *out)
{
	*out = (struct msg_dist) { d->count, d->total_ms, d->max_ms, d->p50_ms,
		d->p99_ms };
}

/* A tube's (or every tube's) statistics per hour: read-only, so followers
 * answer it with the same numbers (they come from the records applied). */
static void
op_stats_hourly(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct msg_rep rep = { .op = MSG_OP_STATS_HOURLY };
	struct queue_hour *hours = calloc(QUEUE_HOURS, sizeof(*hours));
	struct msg_hour *out = calloc(QUEUE_HOURS, sizeof(*out));
	size_t n = 0;
	int rc;

	rc = hours && out
	    ? queue_hourly(c->q, c->now, req->tube.p, req->tube.len, hours, &n)
	    : SLUICE_ENOMEM;
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_STATS_HOURLY, rc,
		    "hourly stats of tube '%.*s': %s", (int)req->tube.len,
		    req->tube.p,
		    rc == SLUICE_ENOTFOUND ? "no such tube"
		                           : sluice_strerror(rc));
	} else {
		for (size_t i = 0; i < n; i++) {
			out[i].start = (uint64_t)hours[i].start;
			out[i].acks = hours[i].acks;
			out[i].fails = hours[i].fails;
			out[i].buries = hours[i].buries;
			out[i].ttr_expired = hours[i].ttr_expired;
			dist_to_msg(&hours[i].work, &out[i].work);
			dist_to_msg(&hours[i].wait, &out[i].wait);
		}
		rep.hours.n = (uint32_t)n;
		rep.hours.hours = out;
		ops_reply(c, ctx, &rep);
	}
	free(hours);
	free(out);
}

_Static_assert((int)QUEUE_RATES == (int)MSG_HISTORY_KINDS &&
        (int)QUEUE_RATE_BURIED == (int)MSG_HK_BURIED,
    "history kinds");

/* The rolling history of events and depths (queue.h, "Rates"): what this
 * node applied, so a follower shows what it applied of the leader's. */
static void
op_history(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	static uint32_t v[QUEUE_RATES * QUEUE_RATE_SECS]; /* core thread */
	struct msg_rep rep = { .op = MSG_OP_HISTORY };
	uint32_t step = 1;
	int64_t start = 0;
	int n = queue_rates(c->q, c->now, req->history.tube.p,
	    req->history.tube.len, req->history.secs, &step, &start, v);

	if (n < 0) {
		core_reply_err(c, ctx, MSG_OP_HISTORY, -n,
		    "history of tube '%.*s': %s", (int)req->history.tube.len,
		    req->history.tube.p,
		    n == -SLUICE_ENOTFOUND ? "no such tube"
		                           : sluice_strerror(-n));
		return;
	}
	rep.history.start = (uint64_t)start;
	rep.history.step = step * 1000;
	rep.history.kinds = QUEUE_RATES;
	rep.history.n = (uint32_t)n;
	rep.history.values = v;
	ops_reply(c, ctx, &rep);
}

/* ---- stats ----------------------------------------------------------- */

enum {
	TUBE_KVS = 13,
	/* work and wait: a cumulative pair per total bucket, and the sum */
	DURATION_KVS = 2 * (QUEUE_TOTAL_BUCKETS + 1),
	DURATION_TUBES_MAX = 100, /* tubes whose histograms a stats carries */
	NODE_KVS = 72 + 2 * WAL_HIST_BUCKETS,
	/* Tubes a stats of every tube lists without a page or top asked
	 * (old clients): every tube of a node that has no more in use; a
	 * larger node is read a page at a time. About 3 ms of the core. */
	OPS_STATS_TUBES = 1000,
	OPS_PEERS_MAX = 16,
	KV_NAME = 40,
};

struct tube_kvs {
	struct msg_kv kv[TUBE_KVS + DURATION_KVS];
};

static void
kv(struct msg_kv *out, size_t *n, const char *name, uint64_t value)
{
	out[*n].name = msg_cstr(name);
	out[*n].value = value;
	(*n)++;
}

/* With --etcd, the cluster's figures among the stats' node pairs:
 * whether this node holds the leader lease, the lease's remaining ms, ms
 * since its last renewal, etcd calls failed, when the last failed,
 * elections won. */
/* The bounds of the core thread's connections (conn.h): what they
 * refused and closed. */
static void
conns_kvs(struct core *c, struct msg_kv *out, size_t *n)
{
	struct conns_stats st;

	conns_stats(c->conns, &st);
	face_stream_stats(c->fstream, &st);
	kv(out, n, "conns_open", st.open);
	kv(out, n, "conns_accept_exhausted", st.accept_exhausted);
	kv(out, n, "conns_refused_fds", st.refused_fds);
	kv(out, n, "conns_refused_full",
	    st.refused_full + face_nng_pipes_refused(c->nng));
	kv(out, n, "conns_evicted_unauth",
	    st.evicted_unready + c->pipes_evicted);
	kv(out, n, "conns_closed_handshake",
	    st.closed_handshake + c->pipes_closed_handshake);
	kv(out, n, "conns_closed_frame", st.closed_frame);
	kv(out, n, "conns_closed_idle", st.closed_idle);
	kv(out, n, "conns_closed_stalled",
	    st.closed_stalled + face_nng_pipes_stalled(c->nng));
	kv(out, n, "conns_closed_refused", st.closed_refused);
	if (c->repl != NULL) {
		struct lead_conn_stats rs;

		lead_conn_stats(c, &rs);
		kv(out, n, "repl_conns_refused_full", rs.refused_full);
		kv(out, n, "repl_conns_closed_handshake", rs.closed_handshake);
		kv(out, n, "repl_conns_evicted_unauth", rs.evicted_unauth);
		kv(out, n, "repl_conns_closed_other", rs.closed_other);
	}
}

static void
cluster_kvs(struct core *c, struct msg_kv *out, size_t *n)
{
	struct elect_view *v;
	int64_t now = clock_now_ms();

	if (c->elect == NULL || (v = malloc(sizeof(*v))) == NULL)
		return;
	elect_view(c->elect, v);
	kv(out, n, "cluster_on", 1);
	kv(out, n, "cluster_leader", v->holding);
	kv(out, n, "cluster_lease_remaining_ms",
	    v->holding && v->lease_until > now
	        ? (uint64_t)(v->lease_until - now)
	        : 0);
	kv(out, n, "cluster_renewal_age_ms",
	    v->renewed_at != 0 && now > v->renewed_at
	        ? (uint64_t)(now - v->renewed_at)
	        : 0);
	kv(out, n, "cluster_etcd_errors", v->etcd_errors);
	kv(out, n, "cluster_etcd_error_at", (uint64_t)v->etcd_error_at);
	kv(out, n, "cluster_elections", v->elections);
	free(v);
}

/* A pair whose name is made here; `names` keeps it (KV_NAME bytes per
 * pair). */
static void kvf(struct msg_kv *out, size_t *n, char (*names)[KV_NAME],
    uint64_t value, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void
kvf(struct msg_kv *out, size_t *n, char (*names)[KV_NAME], uint64_t value,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(names[*n], KV_NAME, fmt, ap);
	va_end(ap);
	kv(out, n, names[*n], value);
}

/* The log's histograms as cumulative counts: log_commit_us_le_B (commits
 * whose latency, submit to fdatasync done, was below B us) and
 * log_batch_le_B (batches of at most B records), the last bucket of each
 * being every one (_le_inf). */
static void
node_hist_kvs(const struct wal_stats *ws, struct msg_kv *node, size_t *nn,
    char (*names)[KV_NAME])
{
	uint64_t sum = 0;

	for (int i = 0; i < WAL_HIST_BUCKETS; i++) {
		sum += ws->commit_hist[i];
		if (i < WAL_HIST_BUCKETS - 1)
			kvf(node, nn, names, sum, "log_commit_us_le_%llu",
			    16ULL << i);
		else
			kvf(node, nn, names, sum, "log_commit_us_le_inf");
	}
	kv(node, nn, "log_commit_us_sum", ws->commit_us_sum);
	sum = 0;
	for (int i = 0; i < WAL_HIST_BUCKETS; i++) {
		sum += ws->batch_hist[i];
		if (i < WAL_HIST_BUCKETS - 1)
			kvf(node, nn, names, sum, "log_batch_le_%llu",
			    1ULL << i);
		else
			kvf(node, nn, names, sum, "log_batch_le_inf");
	}
	kv(node, nn, "log_batch_records", ws->batch_records);
}

static void
counters_kvs(const struct queue_counters *q, uint64_t done, struct tube_kvs *k,
    struct msg_kvs *out)
{
	size_t n = 0;

	kv(k->kv, &n, "puts", q->put);
	kv(k->kv, &n, "takes", q->take);
	kv(k->kv, &n, "acks", q->ack);
	kv(k->kv, &n, "releases", q->release);
	kv(k->kv, &n, "fails", q->fail);
	kv(k->kv, &n, "buries", q->bury);
	kv(k->kv, &n, "kicks", q->kick);
	kv(k->kv, &n, "deletes", q->del);
	kv(k->kv, &n, "timeouts", q->ttr_expired + q->session_released);
	kv(k->kv, &n, "ttr_expired", q->ttr_expired);
	kv(k->kv, &n, "session_released", q->session_released);
	kv(k->kv, &n, "replaces", q->replace);
	kv(k->kv, &n, "done", done); /* kept now, not cumulative */
	out->n = (uint32_t)n;
	out->kvs = k->kv;
}

/* The names of the duration pairs (protocol.md): work_ms_le_B and
 * wait_ms_le_B for the bounds of queue_total_bound(), _le_inf for the
 * last bucket; made once (the core is one thread). */
static const char *
duration_name(int which, int c)
{
	static char names[2][QUEUE_TOTAL_BUCKETS][KV_NAME];
	static bool made;

	if (!made) {
		for (int w = 0; w < 2; w++) {
			const char *p = w == 0 ? "work_ms" : "wait_ms";

			for (int b = 0; b < QUEUE_TOTAL_BUCKETS - 1; b++)
				snprintf(names[w][b], KV_NAME, "%s_le_%" PRId64,
				    p, queue_total_bound(b));
			snprintf(names[w][QUEUE_TOTAL_BUCKETS - 1], KV_NAME,
			    "%s_le_inf", p);
		}
		made = true;
	}
	return names[which][c];
}

/* Appends one histogram's pairs after the tube's counters. */
static void
duration_kvs(
    struct tube_kvs *k, size_t *n, int which, const struct queue_total *t)
{
	uint64_t sum = 0;

	for (int b = 0; b < QUEUE_TOTAL_BUCKETS; b++) {
		sum += t->bucket[b];
		kv(k->kv, n, duration_name(which, b), sum);
	}
	kv(k->kv, n, which == 0 ? "work_ms_sum" : "wait_ms_sum", t->total_ms);
}

struct busy {
	uint64_t events; /* takes and acks in the tube's totals */
	uint32_t pos;    /* in the reply's list */
};

static int
busy_cmp(const void *a, const void *b)
{
	const struct busy *x = a, *y = b;

	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Stats flag durations: the histograms of the DURATION_TUBES_MAX listed
 * tubes with the most takes and acks (ties: the one listed first, made
 * first), after their counters. Returns 0 or SLUICE_ENOMEM. */
static int
durations_add(struct core *c, struct msg_tube_stats *tubes, uint32_t n,
    struct tube_kvs *tkvs)
{
	struct queue_total work, wait;
	struct queue_tube_stats ts;
	struct busy *busy = calloc(n ? n : 1, sizeof(*busy));
	uint32_t nb = 0;

	if (busy == NULL)
		return SLUICE_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (queue_tube_stats(c->q, c->now, tubes[i].name.p,
		        tubes[i].name.len, &ts) != 0 ||
		    queue_tube_totals(c->q, ts.index, &work, &wait) != 0)
			continue;
		if (work.count + wait.count > 0)
			busy[nb++] =
			    (struct busy) { work.count + wait.count, i };
	}
	qsort(busy, nb, sizeof(*busy), busy_cmp);
	for (uint32_t j = 0; j < nb && j < DURATION_TUBES_MAX; j++) {
		struct msg_tube_stats *t = &tubes[busy[j].pos];
		size_t k = t->more.n;

		if (queue_tube_stats(
		        c->q, c->now, t->name.p, t->name.len, &ts) != 0 ||
		    queue_tube_totals(c->q, ts.index, &work, &wait) != 0)
			continue;
		duration_kvs(&tkvs[busy[j].pos], &k, 0, &work);
		duration_kvs(&tkvs[busy[j].pos], &k, 1, &wait);
		t->more.n = (uint32_t)k;
	}
	free(busy);
	return 0;
}

/* A tube's counts, and its settings when the stats asked for them. */
static void
tube_to_msg(struct core *c, const struct queue_tube_stats *ts,
    struct tube_kvs *k, bool settings, struct msg_tube_stats *out)
{
	struct qrec_tube_conf conf;

	memset(out, 0, sizeof(*out));
	out->name = (struct msg_str) { ts->name, ts->name_len };
	out->ready = ts->ready;
	out->delayed = ts->delayed;
	out->taken = ts->taken;
	out->buried = ts->buried;
	out->paused_until = (uint64_t)ts->paused_until;
	out->oldest_ready_age = (uint64_t)ts->oldest_ready_age;
	counters_kvs(&ts->ctr, ts->done, k, &out->more);
	if (settings &&
	    queue_tube_settings(c->q, ts->name, ts->name_len, &conf) == 0)
		ops_tube_conf_to_msg(&conf, &out->conf);
}

/* Tubes come and go as in beanstalkd: a tube with no task, no pause, no
 * settings and no take waiting on it is idle, and the listings (stats of every
 * tube, hence /metrics and the admin page) leave it out. The queue keeps it
 * (and its counters): a task put in it brings it back, and stats of that tube
 * alone still answer. */

/* Idle: nothing in it, not paused, no take waiting on it. */
static bool
tube_idle(const struct core *c, const struct queue_tube_stats *ts)
{
	if (ts->ready + ts->delayed + ts->taken + ts->buried + ts->done > 0 ||
	    ts->paused_until != 0 || ts->settings != 0)
		return false;
	return !waiters_on(&c->waits, ts->name, ts->name_len);
}

/* A tube a stats reply lists: its depth (top) and index. */
struct stats_pick {
	uint64_t depth;
	uint32_t index;
};

/* How many tubes a stats of every tube lists: a page's limit; the
 * deepest --metrics-tubes when top asks for the server's choice; without
 * either, OPS_STATS_TUBES (old clients: every tube of a small node). */
static uint32_t
stats_limit(const struct core *c, const struct msg_stats_req *q)
{
	if (q->top && q->limit == 0)
		return c->cfg->metrics_tubes;
	if (q->page || q->top)
		return q->limit;
	return OPS_STATS_TUBES;
}

/* Deeper first; among equals, the tube made first. */
static bool
pick_before(const struct stats_pick *a, const struct stats_pick *b)
{
	return a->depth != b->depth ? a->depth > b->depth : a->index < b->index;
}

static int
pick_cmp(const void *a, const void *b)
{
	return pick_before(a, b) ? -1 : pick_before(b, a) ? 1 : 0;
}

/* Keeps the `cap` deepest tubes in pick[] (*n of them), a min-heap of
 * the order pick_before: its root is the one to drop first. */
static void
pick_deepest(struct stats_pick *pick, uint32_t *n, uint32_t cap,
    const struct queue_tube_stats *ts)
{
	struct stats_pick x = {
		ts->ready + ts->delayed + ts->taken + ts->buried, ts->index
	};
	uint32_t i;

	if (cap == 0)
		return;
	if (*n < cap) {
		i = (*n)++;
		while (i > 0 && pick_before(&pick[(i - 1) / 2], &x)) {
			pick[i] = pick[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		pick[i] = x;
		return;
	}
	if (!pick_before(&x, &pick[0]))
		return;
	i = 0;
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		const struct stats_pick *best = &x;

		if (l < *n && pick_before(best, &pick[l]))
			m = l, best = &pick[l];
		if (r < *n && pick_before(best, &pick[r]))
			m = r;
		if (m == i)
			break;
		pick[i] = pick[m];
		i = m;
	}
	pick[i] = x;
}

static void
op_stats(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	struct msg_rep rep = { .op = MSG_OP_STATS };
	struct msg_stats *s = &rep.stats;
	struct msg_tube_stats *tubes = NULL;
	struct tube_kvs *tkvs = NULL, totkv;
	struct msg_kv node[NODE_KVS + 5 * OPS_PEERS_MAX];
	char names[NODE_KVS + 5 * OPS_PEERS_MAX][KV_NAME];
	struct lead_peer_info peers[OPS_PEERS_MAX];
	char pnames[OPS_PEERS_MAX][5][MSG_NAME_MAX];
	size_t npeers;
	struct queue_tube_stats ts;
	struct queue_stats qs;
	struct wal_stats ws;
	size_t nn = 0, nctx, nidle;
	uint32_t ntubes = 0, count, listed = 0, limit, cap, npick = 0, next = 0;
	struct stats_pick *pick;
	int64_t oldest = 0;

	queue_stats(c->q, c->now, &qs);
	wal_stats(c->wal, &ws);
	count = queue_tube_count(c->q);
	limit = stats_limit(c, &req->stats);
	if (req->tube.len > 0)
		limit = 1;
	cap = limit < count ? limit : count;
	tubes = calloc(cap ? cap : 1, sizeof(*tubes));
	tkvs = calloc(cap ? cap : 1, sizeof(*tkvs));
	pick = calloc(cap ? cap : 1, sizeof(*pick));
	if (tubes == NULL || tkvs == NULL || pick == NULL) {
		free(tubes);
		free(tkvs);
		free(pick);
		core_reply_err(c, ctx, MSG_OP_STATS, SLUICE_ENOMEM, NULL);
		return;
	}
	if (req->tube.len > 0) {
		if (queue_tube_stats(
		        c->q, c->now, req->tube.p, req->tube.len, &ts) != 0) {
			free(tubes);
			free(tkvs);
			free(pick);
			core_reply_err(c, ctx, MSG_OP_STATS, SLUICE_ENOTFOUND,
			    "stats of tube '%.*s': no such tube (a tube exists "
			    "once a task was put in it)",
			    (int)req->tube.len, req->tube.p);
			return;
		}
		tube_to_msg(c, &ts, &tkvs[0], req->stats.settings, &tubes[0]);
		ntubes = 1;
	}
	/* Every tube is looked at (the totals, the oldest ready task); only
	 * those listed are encoded. */
	for (uint32_t i = 0; i < count; i++) {
		if (queue_tube_stats_at(c->q, c->now, i, &ts) != 0)
			break;
		if (ts.oldest_ready_age > oldest)
			oldest = ts.oldest_ready_age;
		if (tube_idle(c, &ts))
			continue;
		listed++;
		if (req->tube.len > 0)
			continue;
		if (req->stats.top) {
			pick_deepest(pick, &npick, cap, &ts);
		} else if (i >= req->stats.after) {
			if (npick < cap)
				pick[npick++] = (struct stats_pick) { 0, i };
			else if (next == 0)
				next = i;
		}
	}
	if (req->stats.top)
		qsort(pick, npick, sizeof(*pick), pick_cmp);
	for (uint32_t j = 0; j < npick; j++) {
		if (queue_tube_stats_at(c->q, c->now, pick[j].index, &ts) != 0)
			continue;
		tube_to_msg(
		    c, &ts, &tkvs[ntubes], req->stats.settings, &tubes[ntubes]);
		ntubes++;
	}
	free(pick);
	if (req->stats.durations &&
	    durations_add(c, tubes, ntubes, tkvs) != 0) {
		free(tubes);
		free(tkvs);
		core_reply_err(c, ctx, MSG_OP_STATS, SLUICE_ENOMEM, NULL);
		return;
	}

	s->role = c->follower ? MSG_ROLE_FOLLOWER : MSG_ROLE_LEADER;
	if (c->follower)
		s->leader = msg_cstr(follow_leader_url(c));
	s->epoch = wal_epoch(c->wal);
	s->lsn = wal_last_lsn(c->wal);
	s->durable_lsn = wal_durable_lsn(c->wal);
	s->now = (uint64_t)c->now;
	s->totals.ready = qs.ready;
	s->totals.delayed = qs.delayed;
	s->totals.taken = qs.taken;
	s->totals.buried = qs.buried;
	s->totals.oldest_ready_age = (uint64_t)oldest;
	counters_kvs(&qs.ctr, qs.done, &totkv, &s->totals.more);
	face_nng_counts(c->nng, &nctx, &nidle);
	kv(node, &nn, "uptime_ms", (uint64_t)(c->now - c->started_ms));
	kv(node, &nn, "tubes", listed);
	if (req->tube.len == 0) {
		kv(node, &nn, "tubes_listed", ntubes);
		kv(node, &nn, "tubes_next", next);
	}
	kv(node, &nn, "tasks", qs.tasks);
	kv(node, &nn, "keys", qs.keys);
	kv(node, &nn, "sessions", c->sessions);
	kv(node, &nn, "waiting_takes", c->waits.n);
	kv(node, &nn, "waiting_takes_refused", c->waits_refused);
	kv(node, &nn, "log_segments", ws.segments);
	kv(node, &nn, "log_bytes", ws.bytes);
	kv(node, &nn, "log_fsyncs", ws.fsyncs);
	kv(node, &nn, "log_batches", ws.batches);
	kv(node, &nn, "log_failed", ws.poisoned);
	kv(node, &nn, "log_reserved", ws.reserved);
	kv(node, &nn, "log_available", ws.avail);
	kv(node, &nn, "log_refusing_puts", ws.refusing);
	kv(node, &nn, "log_files_bytes", ws.files_bytes);
	kv(node, &nn, "log_max_bytes", c->cfg->max_log_bytes);
	kv(node, &nn, "snapshot_lsn", c->snap.last_lsn);
	kv(node, &nn, "snapshot_at", (uint64_t)c->snap.last_at);
	kv(node, &nn, "snapshot_ms", (uint64_t)c->snap.last_ms);
	kv(node, &nn, "recovery_ms", (uint64_t)c->recovery_ms);
	node_hist_kvs(&ws, node, &nn, names);
	kv(node, &nn, "sync_replicas", c->cfg->sync_replicas);
	kv(node, &nn, "fenced", c->fenced);
	kv(node, &nn, "auth_failures", c->tokens_limit.failures);
	kv(node, &nn, "auth_delayed", c->tokens_limit.delayed);
	kv(node, &nn, "auth_dropped", c->tokens_limit.dropped);
	conns_kvs(c, node, &nn);
	cluster_kvs(c, node, &nn);
	if (c->follower) {
		uint64_t lag, lag_ms;

		follow_lag(c, &lag, &lag_ms);
		kv(node, &nn, "leader_connected", follow_connected(c));
		kv(node, &nn, "lag_records", lag);
		kv(node, &nn, "lag_ms", lag_ms);
	}
	npeers = lead_peers(c, peers, OPS_PEERS_MAX);
	kv(node, &nn, "followers", npeers);
	for (size_t i = 0; i < npeers; i++) {
		snprintf(pnames[i][0], sizeof(pnames[i][0]),
		    "follower_%zu_acked_lsn", i + 1);
		snprintf(pnames[i][1], sizeof(pnames[i][1]),
		    "follower_%zu_lag_records", i + 1);
		snprintf(pnames[i][2], sizeof(pnames[i][2]),
		    "follower_%zu_lag_ms", i + 1);
		kv(node, &nn, pnames[i][0], peers[i].acked_lsn);
		kv(node, &nn, pnames[i][1], peers[i].lag_records);
		kv(node, &nn, pnames[i][2], peers[i].lag_ms);
		snprintf(pnames[i][3], sizeof(pnames[i][3]),
		    "follower_%zu_ack_ms", i + 1);
		snprintf(pnames[i][4], sizeof(pnames[i][4]),
		    "follower_%zu_ack_ms_max", i + 1);
		kv(node, &nn, pnames[i][3], peers[i].ack_ms);
		kv(node, &nn, pnames[i][4], peers[i].ack_ms_max);
	}
	s->more.n = (uint32_t)nn;
	s->more.kvs = node;
	s->ntubes = ntubes;
	s->tubes = tubes;
	s->settings = req->stats.settings;
	/* A failed log makes nothing durable again: stats answer anyway
	 * (log_failed says why), or metrics would go dark when most
	 * needed. */
	c->reply_now = ws.poisoned;
	ops_reply(c, ctx, &rep);
	c->reply_now = false;
	free(tubes);
	free(tkvs);
}

/* ---- node control ---------------------------------------------------- */

static void
op_snapshot(struct core *c, struct net_ctx *ctx)
{
	struct snap_waiter *w = malloc(sizeof(*w));
	int rc;

	if (w == NULL) {
		core_reply_err(c, ctx, MSG_OP_SNAPSHOT, SLUICE_ENOMEM, NULL);
		return;
	}
	/* Waiting before the start: a start with nothing new since the
	 * last snapshot answers the waiters at once. */
	w->ctx = ctx;
	w->next = c->snap.waiters;
	c->snap.waiters = w;
	rc = c->snap.pid != 0 || c->snap.ready ? 0 : bgsnap_start(c);
	if (rc != 0 && c->snap.waiters == w) {
		/* A start that fails answers no waiter: still ours. */
		c->snap.waiters = w->next;
		free(w);
		core_reply_err(c, ctx, MSG_OP_SNAPSHOT, bgsnap_error(rc),
		    "snapshot: %s%s", sluice_strerror(rc),
		    bgsnap_error(rc) == SLUICE_ENOSPC
		        ? " (no room for it on the disk; the log is fine "
		          "and the node takes writes)"
		        : "");
	}
}

static void ops_dispatch(struct core *c, struct net_ctx *ctx, uint32_t session,
    const struct msg_req *r, const char *peer);

/* Whether `op` changes the queue (a follower refuses it). */
static bool
op_writes(uint8_t op)
{
	switch (op) {
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
	case MSG_OP_STATS:
	case MSG_OP_LIST:
	case MSG_OP_ERRORS:
	case MSG_OP_STATS_HOURLY:
	case MSG_OP_HISTORY:
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
	case MSG_OP_FOLLOW:
	case MSG_OP_TUBE_SHOW:
	case MSG_OP_CLUSTER:
	case MSG_OP_AUTH:
		return false;
	default:
		return true;
	}
}

static void
refuse_write(struct core *c, struct net_ctx *ctx, uint8_t op)
{
	const char *leader = follow_leader_url(c);

	buf_reset(&c->out);
	if (c->follower) {
		char text[MSG_URL_MAX + 64];

		snprintf(text, sizeof(text), "not leader; the leader is %s",
		    leader[0] ? leader : "not known yet");
		msg_encode_err(&c->out, op, SLUICE_ENOTLEADER, text,
		    leader[0] ? leader : NULL);
	} else if (c->handing) {
		char text[160];

		snprintf(text, sizeof(text),
		    "not leader: handing the lead over to %s", c->handover_to);
		msg_encode_err(&c->out, op, SLUICE_ENOTLEADER, text, NULL);
	} else if (c->fenced_by == 0) {
		msg_encode_err(&c->out, op, SLUICE_ENOTLEADER,
		    "not leader: this node's leader lease ran out; it takes "
		    "no writes until the election decides",
		    NULL);
	} else {
		char text[160];

		snprintf(text, sizeof(text),
		    "not leader: epoch %" PRIu64 " began on another node; "
		    "this one (epoch %" PRIu64 ") takes no writes",
		    c->fenced_by, wal_epoch(c->wal));
		msg_encode_err(&c->out, op, SLUICE_ENOTLEADER, text, NULL);
	}
	core_reply_local(c, ctx); /* a refusal writes nothing */
}

void
ops_handle(struct core *c, struct net_ctx *ctx, uint32_t session, nng_msg *msg)
{
	char peer[PEER_MAX] = "";
	struct msg_req req;
	int rc;

	/* What is answered before the op runs (a bad request, an auth, a
	 * refusal) writes nothing: it waits for no --sync-replicas
	 * follower. */
	c->reply_local = true;
	rc = msg_decode_req(
	    nng_msg_body(msg), nng_msg_len(msg), &c->limits, &req);
	if (rc != 0) {
		uint8_t op = msg_req_op(nng_msg_body(msg), nng_msg_len(msg));

		if (rc == SLUICE_ETOOBIG)
			core_reply_err(c, ctx, op, rc,
			    "bad request: a payload over the server's limit of "
			    "%zu bytes",
			    c->limits.payload_max);
		else if (rc == SLUICE_EMSGSIZE)
			core_reply_err(c, ctx, op, rc,
			    "bad request: %zu bytes, over the message limit of "
			    "%zu bytes",
			    nng_msg_len(msg), c->limits.msg_max);
		else
			core_reply_err(c, ctx, op, rc, "bad request: %s",
			    sluice_strerror(rc));
		c->reply_local = false;
		return;
	}
	c->ops[req.op]++;
	c->req_tok = NULL;
	c->req_hidden = 0;
	if (!ops_auth_check(c, ctx, session, &req)) {
		c->reply_local = false;
		return;
	}
	c->reply_local = false;
	if (op_writes(req.op))
		core_check_lease(c); /* a write is decided only under it */
	if ((c->follower || c->fenced || c->handing) && op_writes(req.op)) {
		refuse_write(c, ctx, req.op);
		return;
	}
	/* A read shows what this node holds; it does not wait for
	 * --sync-replicas followers (a write does). */
	if (ops_req_forced(&req))
		peer_name(ctx, msg, session, peer, sizeof(peer));
	c->reply_local = !op_writes(req.op);
	queue_hide(c->q, c->req_hidden); /* for this request only */
	ops_dispatch(c, ctx, session, &req, peer[0] ? peer : NULL);
	queue_hide(c->q, 0);
	c->reply_local = false;
	c->req_tok = NULL;
	c->req_hidden = 0;
}

static void
ops_dispatch(struct core *c, struct net_ctx *ctx, uint32_t session,
    const struct msg_req *r, const char *peer)
{
	const struct msg_req req = *r;

	switch (req.op) {
	case MSG_OP_PUT:
		op_put(c, ctx, &req);
		break;
	case MSG_OP_PUT_BATCH:
		op_put_batch(c, ctx, &req);
		break;
	case MSG_OP_TAKE:
		op_take(c, ctx, session, &req);
		break;
	case MSG_OP_ACK:
		op_ack(c, ctx, &req, peer);
		break;
	case MSG_OP_RELEASE:
		op_release(c, ctx, &req, peer);
		break;
	case MSG_OP_FAIL:
		op_fail(c, ctx, &req, peer);
		break;
	case MSG_OP_TOUCH:
		op_touch(c, ctx, &req, peer);
		break;
	case MSG_OP_BURY:
		op_bury(c, ctx, &req, peer);
		break;
	case MSG_OP_KICK:
		op_kick(c, ctx, &req);
		break;
	case MSG_OP_KICK_ID:
		op_kick_id(c, ctx, &req);
		break;
	case MSG_OP_DELETE:
	case MSG_OP_DELETE_KEY:
		op_delete(c, ctx, &req);
		break;
	case MSG_OP_ACK_BATCH:
		op_ack_batch(c, ctx, &req);
		break;
	case MSG_OP_DELETE_BATCH:
		op_delete_batch(c, ctx, &req);
		break;
	case MSG_OP_UPDATE:
		op_update(c, ctx, &req);
		break;
	case MSG_OP_FLUSH:
		op_flush(c, ctx, &req);
		break;
	case MSG_OP_DELETE_WHERE:
		op_delete_where(c, ctx, &req);
		break;
	case MSG_OP_RELEASE_ALL:
		op_release_all(c, ctx, &req, peer);
		break;
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
		op_peek(c, ctx, &req);
		break;
	case MSG_OP_STATS:
		op_stats(c, ctx, &req);
		break;
	case MSG_OP_LIST:
		op_list(c, ctx, session, &req);
		break;
	case MSG_OP_ERRORS:
		op_errors(c, ctx, &req);
		break;
	case MSG_OP_STATS_HOURLY:
		op_stats_hourly(c, ctx, &req);
		break;
	case MSG_OP_HISTORY:
		op_history(c, ctx, &req);
		break;
	case MSG_OP_PAUSE:
		op_pause(c, ctx, &req);
		break;
	case MSG_OP_SNAPSHOT:
		op_snapshot(c, ctx);
		break;
	case MSG_OP_PROMOTE:
		follow_promote(c, ctx);
		break;
	case MSG_OP_FOLLOW:
		follow_repoint(c, ctx, req.url.p, req.url.len);
		break;
	case MSG_OP_CLUSTER:
		cluster_op_view(c, ctx);
		break;
	case MSG_OP_SWITCHOVER:
		cluster_op_switchover(c, ctx, &req.switchover);
		break;
	case MSG_OP_JOB:
		ops_job(c, ctx, session, &req);
		break;
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_SHOW:
	case MSG_OP_TUBE_DELETE:
		ops_tube(c, ctx, &req);
		break;
	case MSG_OP_AUTH:
		/* without --auth there is nothing to bind */
		ops_reply(c, ctx, &(struct msg_rep) { .op = MSG_OP_AUTH });
		break;
	default:
		core_reply_err(c, ctx, req.op, SLUICE_EUNKNOWNOP, NULL);
		break;
	}
}
