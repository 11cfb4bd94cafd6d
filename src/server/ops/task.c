/* task - the changes to one task, named by id (or by key and tube),
 * outside a lease: kick (a buried or delayed task back to ready), delete,
 * and update (its priority, time, ttr, attempts or payload). A refusal
 * names the task and says what its state allows. */
#include <inttypes.h>

#include "server/core/core.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

void
ops_kick_id(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
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
	ops_reply_after(c, ctx, MSG_OP_KICK_ID, req->id, false);
}

/* A delete_key or peek_key without the key's tube: a client from before
 * keys were per tube. Named, not guessed: a key may live in many tubes. */
void
ops_key_without_tube(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	core_reply_err(c, ctx, req->op, SLUICE_EINVAL,
	    "%s: the request names no tube: keys are per tube, so a key is "
	    "found in the tube given with it (flag 0x01 and str16 tube after "
	    "the key, docs/protocol.md)",
	    msg_op_name(req->op));
}

void
ops_delete(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
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
			ops_key_without_tube(c, ctx, req);
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
update_err(struct core *c, struct face_ctx *ctx, uint64_t id, int rc)
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

void
ops_update(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
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
	ops_reply_after(c, ctx, MSG_OP_UPDATE, m->id, false);
}
