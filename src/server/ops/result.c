/* result - wait (a task's result, waiting until it ends) and cancel.
 *
 * wait is a read: its answer shows what this node applied (a follower's
 * too), held only until the log holds what it shows, as a peek's. A task
 * that has not ended parks its request on the core (core/rwaits.h) until
 * the queue says it ended (queue_on_final, as the record that ends it is
 * applied), its wait passes (answered with the task's state, not final),
 * its client leaves (dropped), or the server stops (answered with the
 * state). Nothing polls.
 *
 * cancel names tasks by id, each on its own as delete_batch does; a task
 * already cancelled is no error (cancelling twice is cancelling). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/core/core.h"
#include "server/core/rwaits.h"
#include "server/face/face.h"
#include "server/face/http/http.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "sluice.h"
#include "util/clock.h"

/* Whether a token that may see only some tubes may see a result of
 * `tube` (a finished task's outcome names its tube; a live task hidden
 * from it is not found already: queue_hide). */
static bool
result_visible(const struct tokens_entry *tok, const struct queue_result *r)
{
	return tok == NULL || tokens_all_tubes(tok) ||
	    (r->tube != NULL && tokens_tube_ok(tok, r->tube, r->tube_len));
}

static void
reply_result(struct core *c, struct face_ctx *ctx, const struct queue_result *r)
{
	struct msg_rep rep = { .op = MSG_OP_WAIT };
	struct msg_result *m = &rep.result;

	m->id = r->id;
	m->state = (uint8_t)r->state;
	m->final = r->final;
	m->cancelled = r->cancelled;
	m->time = r->final ? (uint64_t)r->time : 0;
	m->tube = (struct msg_str) { r->tube, r->tube_len };
	m->text = (struct msg_str) { r->text,
		r->text_len < MSG_RESULT_MAX ? r->text_len : MSG_RESULT_MAX };
	ops_reply_applied(c, ctx, &rep);
}

static void
reply_missing(struct core *c, struct face_ctx *ctx, uint64_t id, int rc)
{
	if (rc == SLUICE_ENOTFOUND)
		core_reply_err(c, ctx, MSG_OP_WAIT, rc,
		    "wait %" PRIu64 ": no such task (never put, or it ended "
		    "longer ago than the outcome window, --dedup-window)",
		    id);
	else
		core_reply_err(c, ctx, MSG_OP_WAIT, rc, "wait %" PRIu64 ": %s",
		    id, sluice_strerror(rc));
}

/* Answers waiter `w` with how its task stands now, and frees it. */
static void
answer(struct core *c, struct rwaiter *w)
{
	struct face_ctx *ctx = w->ctx;
	uint64_t id = w->task->id;
	struct queue_result r;
	int rc;

	rwaits_remove(&c->rwaits, w);
	if (!face_ctx_alive(ctx)) {
		face_ctx_drop(ctx);
		return;
	}
	if ((rc = queue_result(c->q, c->now, id, &r)) != 0)
		reply_missing(c, ctx, id, rc);
	else
		reply_result(c, ctx, &r);
}

void
ops_wait(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct tokens_entry *tok, const struct msg_req *req)
{
	const struct msg_wait *m = &req->wait;
	struct queue_result r;
	int rc = queue_result(c->q, c->now, m->id, &r);

	if (rc == 0 && !result_visible(tok, &r))
		rc = SLUICE_ENOTFOUND;
	if (rc != 0) {
		reply_missing(c, ctx, m->id, rc);
		return;
	}
	if (r.final || m->wait == 0) {
		reply_result(c, ctx, &r);
		return;
	}
	if (c->cfg->max_waits != 0 && c->rwaits.n >= c->cfg->max_waits) {
		c->waits_refused++;
		core_reply_err(c, ctx, MSG_OP_WAIT, SLUICE_ELIMIT,
		    "wait %" PRIu64 ": %" PRIu64 " waits for a result are "
		    "parked on this node already, the most it allows "
		    "(--max-waiting-takes); wait without a timeout, or try "
		    "again later",
		    m->id, c->cfg->max_waits);
		return;
	}
	/* an HTTP connection waits for one answer at a time: the HTTP
	 * face counts for the node's limit only, as a take's */
	if (c->cfg->max_waits_conn != 0 &&
	    (c->http == NULL || session != http_session(c->http)) &&
	    rwaits_of_session(&c->rwaits, session) >= c->cfg->max_waits_conn) {
		c->waits_refused++;
		core_reply_err(c, ctx, MSG_OP_WAIT, SLUICE_ELIMIT,
		    "wait %" PRIu64 ": %u waits for a result are parked on "
		    "this connection already, the most it allows "
		    "(--max-waiting-takes-per-conn)",
		    m->id, c->cfg->max_waits_conn);
		return;
	}
	if (rwaits_add(&c->rwaits, m->id, ctx, session,
	        clock_mono_ms() + (int64_t)m->wait) != 0) {
		core_reply_err(c, ctx, MSG_OP_WAIT, SLUICE_ENOMEM,
		    "wait %" PRIu64 ": out of memory", m->id);
		return;
	}
	face_ctx_waiting(ctx);
}

void
ops_result_final(void *arg, uint64_t id)
{
	struct core *c = arg;

	if (c->rwaits.n > 0)
		rwaits_wake(&c->rwaits, id);
}

void
ops_result_serve(struct core *c, int64_t mono_ms, bool check)
{
	struct rwaiter *w, *next;

	while ((w = rwaits_next_woken(&c->rwaits)) != NULL)
		answer(c, w);
	while ((w = rwaits_first_due(&c->rwaits)) != NULL &&
	    w->deadline <= mono_ms)
		answer(c, w);
	/* The HTTP face said one of its waiting requests lost its client. */
	if (!check || c->http == NULL)
		return;
	for (w = c->rwaits.all; w != NULL; w = next) {
		next = w->anext;
		if (w->session != http_session(c->http) ||
		    face_ctx_alive(w->ctx))
			continue;
		face_ctx_drop(w->ctx);
		rwaits_remove(&c->rwaits, w);
	}
}

void
ops_result_drop(struct core *c, uint32_t session)
{
	struct rwaiter *w, *next;

	for (w = c->rwaits.n > 0 ? c->rwaits.all : NULL; w != NULL; w = next) {
		next = w->anext;
		if (w->session != session)
			continue;
		face_ctx_drop(w->ctx);
		rwaits_remove(&c->rwaits, w);
	}
}

void
ops_result_end(struct core *c)
{
	while (c->rwaits.all != NULL)
		answer(c, c->rwaits.all);
}

int64_t
ops_result_next(const struct core *c)
{
	const struct rwaiter *w = rwaits_first_due(&c->rwaits);

	if (c->rwaits.woken != NULL)
		return 0; /* answered this turn */
	return w != NULL ? w->deadline : INT64_MAX;
}

void
ops_cancel(struct core *c, struct face_ctx *ctx, const struct tokens_entry *tok,
    const struct msg_req *req)
{
	const struct msg_delete_batch *b = &req->delete_batch;
	struct msg_iter it = b->it;
	struct msg_item_res *res = calloc(b->n, sizeof(*res));
	char(*texts)[OPS_ITEM_TEXT] =
	    b->messages ? calloc(b->n, sizeof(*texts)) : NULL;
	struct msg_rep rep = { .op = req->op };
	uint64_t id;
	uint32_t i = 0;

	if (res == NULL || (b->messages && texts == NULL)) {
		free(res);
		free(texts);
		core_reply_err(c, ctx, req->op, SLUICE_ENOMEM, NULL);
		return;
	}
	for (; i < b->n && msg_next_id(&it, &id); i++) {
		struct qrec r;
		uint64_t lsn;
		int rc = ops_auth_hidden(c, tok, id)
		    ? SLUICE_ENOTFOUND
		    : queue_decide_cancel(c->q, c->now, id, &r);

		if (rc == SLUICE_ECANCELED)
			rc = 0; /* cancelled already: so it stays */
		else if (rc == 0)
			rc = core_commit(c, &r, 0, &lsn);
		res[i].status = (uint16_t)(rc > 0 ? rc
		        : rc < 0                  ? SLUICE_ENOMEM
		                                  : 0);
		if (rc == 0 || texts == NULL)
			continue;
		if (rc == SLUICE_ENOTFOUND)
			snprintf(texts[i], OPS_ITEM_TEXT,
			    "cancel %" PRIu64 ": no such task (unknown, or it "
			    "ended already: `sluice wait %" PRIu64
			    "` says how)",
			    id, id);
		else
			snprintf(texts[i], OPS_ITEM_TEXT,
			    "cancel %" PRIu64 ": %s", id, sluice_strerror(rc));
		res[i].message = msg_cstr(texts[i]);
	}
	rep.batch.n = b->n;
	rep.batch.messages = texts != NULL;
	rep.batch.items = res;
	ops_reply(c, ctx, &rep);
	free(res);
	free(texts);
}
