/* lease - the operations on a taken task under its lease: ack, release,
 * fail, touch, bury, and release_all (an operator's release of a tube's
 * leases).
 *
 * Each names the task and the lease its take returned; the queue checks
 * the lease (a stale one is refused, saying so, never telling the
 * current one). Force overrides the lease: an operator's, the admin's
 * under --auth (auth.c), logged whatever its result with who sent it.
 * A release with untake undoes its holder's take (UNTAKE, as the server
 * does for a take whose reply went nowhere): a client that took a task
 * it will not work on (a routed take's cancelled wait) gives it back
 * with its attempt uncounted.
 *
 * The log's reservation holds a lease's end with RESERVE_ERROR_MAX bytes
 * of text (commit_long_text): a longer fail, setback or ack result is
 * written whole only beyond the floor, and cut when the log is that
 * full, so that a full disk never refuses the end of accepted work. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/core/core.h"
#include "server/core/quota.h"
#include "server/core/reserve.h"
#include "server/ops/ops_int.h"
#include "sluice.h"
#include "util/log.h"

/* In words that name the task and what is wrong with the request. */
void
ops_lease_err_text(struct core *c, uint8_t op, uint64_t id, uint64_t lease,
    int rc, char *out, size_t len)
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
	case SLUICE_ECANCELED:
		snprintf(out, len,
		    "%s %" PRIu64 ": the task was cancelled: stop working on "
		    "it (it is removed as its lease ends)",
		    name, id);
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
lease_err(struct core *c, struct face_ctx *ctx, uint8_t op, uint64_t id,
    uint64_t lease, int rc)
{
	char text[MSG_TEXT_MAX / 2];

	ops_lease_err_text(c, op, id, lease, rc, text, sizeof(text));
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
lease_done(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
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
	/* A cancelled task's lease ended as a DELETE: an ack succeeds, the
	 * others tell the holder (outcome.h). */
	if (rc == 0 && r->type == QREC_DELETE && op != MSG_OP_ACK)
		rc = SLUICE_ECANCELED;
	if (rc != 0) {
		lease_err(c, ctx, op, id, lease, rc);
		return;
	}
	replaced = r->type != QREC_TOUCH && r->type != QREC_NONE &&
	    r->type != QREC_DELETE && r->u.end.outcome == QREC_REPLACED;
	ops_reply_after(c, ctx, op, id, replaced && req_report(req));
}

/* Commits `r` after a decide that returned `rc`, with the log's class
 * `flags` (reserve.h); answers. */
static void
finish_lease_op(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
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
unsigned
ops_ack_flags(int rc, const struct qrec *r)
{
	return rc == 0 && (r->type == QREC_ACK || r->type == QREC_ACK_R) &&
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

	if (*rc != 0 || r->u.end.text_len + r->u.end.result_len <= room)
		return false;
	*rc = core_commit(c, r, WAL_RETRY, &lsn);
	if (*rc == 0)
		return true;
	if (*rc == SLUICE_ENOSPC && r->type == QREC_ACK_R) {
		/* the log is that full: the ack goes, its children go
		 * without its result */
		r->type = QREC_ACK;
		r->u.end.result_len = 0;
		*rc = 0;
	} else if (*rc == SLUICE_ENOSPC) {
		r->u.end.text_len =
		    reserve_error_len(r->u.end.text, r->u.end.text_len, room);
		*rc = 0;
	}
	return false;
}

void
ops_ack(struct core *c, struct face_ctx *ctx, const struct tokens_entry *tok,
    const struct msg_req *req, const char *peer)
{
	const struct msg_ack *m = &req->ack;
	struct queue_ack_req a = { m->id, m->lease, m->to.p, m->to.len,
		m->force, m->result.p, m->result.len };
	struct qrec r;
	int rc = queue_decide_ack(c->q, c->now, &a, &r);

	if (rc == 0 && (r.type == QREC_ACK || r.type == QREC_ACK_R) &&
	    r.u.end.outcome == QREC_MOVED &&
	    (rc = quota_admit(c, tok, &r)) != 0) {
		core_reply_err(c, ctx, MSG_OP_ACK, rc, "ack %" PRIu64 ": %s",
		    m->id, c->quota.why);
		return;
	}
	if (rc == 0 &&
	    ((r.type == QREC_ACK && r.u.end.outcome == QREC_DONE) ||
	        r.type == QREC_ACK_R) &&
	    commit_long_text(c, &r, &rc)) {
		lease_done(c, ctx, req, m->id, m->lease, 0, &r, peer);
		return;
	}
	finish_lease_op(
	    c, ctx, req, m->id, m->lease, rc, &r, ops_ack_flags(rc, &r), peer);
}

/* A release with flag untake: the take undone, as if it never happened
 * (UNTAKE: the task waits again where it was, its attempt uncounted, no
 * last error). Its holder's only: force cannot give it, and it takes
 * nothing of a release's (delay, priority, front): an undone take has no
 * say in where the task goes. */
static void
untake(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	const struct msg_release *m = &req->release;
	const char *bad = m->delay != 0 ? "delay"
	    : m->set_priority           ? "priority"
	    : m->front                  ? "front"
	                                : NULL;
	struct qrec r;
	int rc;

	if (m->force) {
		core_reply_err(c, ctx, req->op, SLUICE_EINVAL,
		    "release %" PRIu64 ": untake is the lease holder's: "
		    "force cannot undo another's take",
		    m->id);
		return;
	}
	if (bad != NULL) {
		core_reply_err(c, ctx, req->op, SLUICE_EINVAL,
		    "release %" PRIu64 ": untake puts the task back as "
		    "before its take: it takes no %s",
		    m->id, bad);
		return;
	}
	rc = queue_decide_untake(c->q, c->now, m->id, m->lease, &r);
	finish_lease_op(c, ctx, req, m->id, m->lease, rc, &r, 0, NULL);
}

void
ops_release(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
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
	a.front = m->front;
	if (m->untake) {
		untake(c, ctx, req);
		return;
	}
	if (m->front && m->delay != 0) {
		core_reply_err(c, ctx, req->op, SLUICE_EINVAL,
		    "release %" PRIu64 ": front puts the task back at its "
		    "place at once: it takes no delay",
		    m->id);
		return;
	}
	if (m->delay <= (uint64_t)QREC_TIME_MAX) {
		a.delay_ms = (int64_t)m->delay;
		rc = queue_decide_release(c->q, c->now, &a, &r);
	}
	finish_lease_op(c, ctx, req, m->id, m->lease, rc, &r, 0, peer);
}

/* finish_lease_op for a record with an error text (FAIL, SETBACK), which
 * may be longer than the reserve holds (commit_long_text). */
static void
finish_with_text(struct core *c, struct face_ctx *ctx,
    const struct msg_req *req, uint64_t id, uint64_t lease, int rc,
    struct qrec *r, const char *peer)
{
	if (rc == 0 && (r->type == QREC_FAIL || r->type == QREC_SETBACK) &&
	    commit_long_text(c, r, &rc)) {
		lease_done(c, ctx, req, id, lease, 0, r, peer);
		return;
	}
	finish_lease_op(c, ctx, req, id, lease, rc, r, 0, peer);
}

void
ops_fail(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
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

void
ops_touch(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
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

void
ops_bury(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
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
void
ops_release_all(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
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
