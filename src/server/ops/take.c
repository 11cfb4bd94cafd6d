/* take - a take: up to `max` tasks of the tubes it names, taken now and
 * handed out in one reply, or, when there is none and it may wait,
 * parked until a task comes or its wait passes (wait.c serves the
 * parked ones).
 *
 * A take is applied only when its task is handed out, and no more are
 * taken than the reply can carry. The reply waits for the records its
 * tasks' tubes depend on (the tasks' puts or releases among them), not
 * for the takes themselves nor for other writes, unless the take asked
 * to be durable or is detached (core_reply_how); a reply that cannot
 * reach its client has its takes undone (core.c).
 *
 * Parking (park_take) is the one place that checks the limits on waiting
 * takes: per node, per connection, per token (core/quota.h), before
 * anything is allocated. While takes wait on a tube, a new take on it
 * that may wait queues behind them, so a task goes to whoever has waited
 * longest on its tube. */
#include <inttypes.h>
#include <stdlib.h>

#include "server/core/core.h"
#include "server/core/quota.h"
#include "server/core/waiters.h"
#include "server/face/face.h"
#include "server/face/http/http.h"
#include "server/ops/ops_int.h"
#include "sluice.h"
#include "util/clock.h"

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

/* No more than the reply can carry (OPS_REPLY_MAX; an HTTP take, beyond
 * its first task, a sixth of it): a take is applied only when its task
 * is handed out. */
int
ops_take_now(struct core *c, const struct queue_take_req *tr, uint32_t max,
    uint64_t *ids, uint32_t *got, uint64_t *big)
{
	size_t bytes = OPS_REPLY_HEAD_MAX, need, budget = OPS_REPLY_MAX;
	struct queue_task_view v;
	struct qrec r;
	unsigned flags;
	uint64_t lsn;
	int rc = 0;

	budget = ops_reply_budget(c, (uint32_t)tr->session);
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
		if (need > OPS_REPLY_MAX - bytes ||
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
void
ops_take_err(struct core *c, struct face_ctx *ctx, int rc, uint64_t big)
{
	if (rc == SLUICE_EMSGSIZE)
		core_reply_err(c, ctx, MSG_OP_TAKE, rc,
		    "take: task %" PRIu64 " is over the reply limit of %d "
		    "bytes with its payload; nothing was taken (peek it "
		    "without payload, or delete it)",
		    big, (int)OPS_REPLY_MAX);
	else
		core_reply_err(
		    c, ctx, MSG_OP_TAKE, rc, "take: %s", sluice_strerror(rc));
}

void
ops_reply_tasks(struct core *c, struct face_ctx *ctx, uint32_t session,
    const uint64_t *ids, uint32_t n, bool durable)
{
	struct msg_rep rep = { .op = MSG_OP_TAKE };
	struct core_reply_how how = { 0 }; /* a take writes: commit LSN */
	struct msg_task *tasks = NULL;
	struct core_take *takes = NULL;
	struct queue_task_view v;
	uint32_t k = 0;
	bool detached = false;

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
		detached |= v.detached;
		if (queue_task_dep_lsn(c->q, v.id) > how.take_lsn)
			how.take_lsn = queue_task_dep_lsn(c->q, v.id);
		ops_view_to_task(c, &v, true, &tasks[k++]);
	}
	rep.tasks.n = k;
	rep.tasks.tasks = tasks;
	/* A detached lease outlives a crash: its take is waited for. */
	how.take = k > 0 && !durable && !detached;
	how.takes = takes;
	how.ntakes = k;
	how.session = session;
	ops_reply_as(c, ctx, &rep, &how);
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
park_take(struct core *c, struct face_ctx *ctx, const struct tokens_entry *tok,
    const struct queue_take_req *tr, const struct msg_take *t, bool behind)
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
	if (quota_park(c, tok, w) != 0) { /* the token's takes waiting */
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
	face_ctx_waiting(ctx);
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

void
ops_take(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct tokens_entry *tok, const struct msg_req *req)
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
		rc = park_take(c, ctx, tok, &tr, t, true);
		if (rc == SLUICE_ENOMEM)
			core_reply_err(c, ctx, MSG_OP_TAKE, rc, NULL);
		return;
	}
	ids = malloc(t->max * sizeof(*ids));
	if (ids == NULL) {
		core_reply_err(c, ctx, MSG_OP_TAKE, SLUICE_ENOMEM, NULL);
		return;
	}
	rc = ops_take_now(c, &tr, t->max, ids, &got, &big);
	if (got == 0 && rc == SLUICE_ENOSPC && t->wait > 0)
		rc = SLUICE_ETIMEDOUT; /* a retake on a full log: wait for
		                        * room as for a task */
	if (got == 0 && (rc == SLUICE_ETIMEDOUT || rc == SLUICE_EPAUSED)) {
		if (t->wait > 0) {
			rc = park_take(c, ctx, tok, &tr, t, false);
			if (rc == SLUICE_ENOMEM)
				core_reply_err(c, ctx, MSG_OP_TAKE, rc, NULL);
		} else {
			ops_reply_tasks(c, ctx, session, ids, 0, false);
		}
	} else if (got == 0) {
		ops_take_err(c, ctx, rc, big);
	} else {
		ops_reply_tasks(c, ctx, session, ids, got, t->durable);
	}
	free(ids);
}
