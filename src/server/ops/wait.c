/* wait - the takes that wait for a task (parked by take.c, indexed by
 * core/waiters.h), served once per turn of the core's loop.
 *
 * When a task becomes ready in a tube or its pause ends, the queue marks
 * the tube (ops_tube_ready); each loop turn, after the turn's requests
 * and timers, the marked tubes' waiters are served in arrival order, each
 * taking what it can, until one finds nothing; then the waits that are
 * over are answered, from a heap by deadline. A turn so costs what can be
 * served, not what waits. A waiter whose client left (its face says so:
 * face_ctx_alive) is dropped before it takes anything: when its session
 * closes, when its turn comes, or when the HTTP face wakes the core for
 * it (check_waiters). The same turn ends the unknown tokens' waits that
 * are due (core/gate.h). */
#include <stdlib.h>

#include "server/core/core.h"
#include "server/core/gate.h"
#include "server/core/quota.h"
#include "server/core/waiters.h"
#include "server/face/face.h"
#include "server/face/http/http.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

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

		if (!face_ctx_alive(w->ctx)) {
			face_ctx_drop(w->ctx);
			waiter_end(c, w);
			continue;
		}
		rc = ops_take_now(c, &tr, w->max, ids, &got, &big);
		if (got > 0) {
			struct face_ctx *ctx = w->ctx;
			uint32_t session = w->session;
			bool durable = w->durable;

			waiter_end(c, w);
			ops_reply_tasks(c, ctx, session, ids, got, durable);
		} else if (rc == SLUICE_ENOSPC) {
			waiters_retry(&c->waits, t);
			return;
		} else if (rc == SLUICE_ETIMEDOUT || rc == SLUICE_EPAUSED) {
			break;
		} else {
			ops_take_err(c, w->ctx, rc, big);
			waiter_end(c, w);
		}
	}
	waiters_release(&c->waits, t);
}

/* Drops the waiting takes whose client left (the HTTP face's, which it
 * watches; the face wakes the core for them). */
static void
check_waiters(struct core *c)
{
	struct waiter *w, *next;

	/* Only the HTTP face watches its waiting connections (a beanstalk
	 * or native connection that closes ends its session). */
	if (c->http == NULL)
		return;
	for (w = waiters_session_head(&c->waits, http_session(c->http));
	     w != NULL; w = next) {
		next = w->snext;
		if (face_ctx_alive(w->ctx))
			continue;
		face_ctx_drop(w->ctx);
		waiter_end(c, w);
	}
}

void
ops_serve_waiters(struct core *c, int64_t mono_ms)
{
	uint64_t ids[MSG_TAKE_MAX];
	struct wait_tube *t;
	struct waiter *w;

	gate_serve(c, mono_ms);
	ops_result_serve(c, mono_ms, c->waits_check);
	if (c->waits_check) {
		c->waits_check = false;
		check_waiters(c);
	}
	waiters_turn(&c->waits);
	while ((t = waiters_next_marked(&c->waits)) != NULL)
		serve_tube(c, t, ids);
	while ((w = waiters_first_due(&c->waits)) != NULL &&
	    w->deadline <= mono_ms) {
		struct face_ctx *ctx = w->ctx;
		uint32_t session = w->session;
		bool alive = face_ctx_alive(ctx);

		waiter_end(c, w);
		if (alive)
			ops_reply_tasks(c, ctx, session, ids, 0, false);
		else
			face_ctx_drop(ctx);
	}
}

void
ops_drop_waiters(struct core *c, uint32_t session)
{
	struct waiter *w;

	while ((w = waiters_session_head(&c->waits, session)) != NULL) {
		face_ctx_drop(w->ctx);
		waiter_end(c, w);
	}
	ops_result_drop(c, session);
	ops_auth_drop(c, session);
}

void
ops_end_waiters(struct core *c)
{
	struct waiter *w;

	gate_serve(c, INT64_MAX);
	while ((w = waiters_any(&c->waits)) != NULL) {
		struct face_ctx *ctx = w->ctx;
		uint32_t session = w->session;

		waiter_end(c, w);
		ops_reply_tasks(c, ctx, session, NULL, 0, false);
	}
}

int64_t
ops_next_deadline(const struct core *c)
{
	int64_t min = gate_next(c);
	const struct waiter *w = waiters_first_due(&c->waits);

	if (ops_result_next(c) < min)
		min = ops_result_next(c);
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
