/* job - MSG_OP_JOB: the operations of beanstalk's protocol on one
 * task by id, which sluice's own ops cannot express because beanstalk
 * authorises them by connection instead of by lease.
 *
 * The rule of every verb: a task taken under another session's lease, or
 * under a detached one, is invisible (SLUICE_ENOTFOUND, as beanstalkd
 * answers NOT_FOUND for a job reserved by another client). A task taken
 * under this session's lease may be deleted, released, buried, touched;
 * a task that is not taken may be deleted or taken (reserve-job).
 *
 * Each verb is one handler run on the core thread, so when it needs two
 * records (bury with a new priority: RELEASE then BURY; take of a buried
 * or delayed task: KICK then TAKE) nothing else runs in between. */
#include <inttypes.h>
#include <string.h>

#include "server/core/core.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

/* Answers with the task as it is now (none when it is gone). */
static void
reply_job(struct core *c, struct face_ctx *ctx, uint64_t id, uint8_t verb)
{
	struct msg_rep rep = { .op = MSG_OP_JOB };
	struct core_reply_how how = { .local = false };
	struct queue_task_view v;
	struct msg_task t;

	if (queue_peek(c->q, c->now, id, &v) == 0) {
		ops_view_to_task(c, &v, verb == MSG_JOB_TAKE, &t);
		rep.tasks.n = 1;
		rep.tasks.tasks = &t;
		/* a take or a touch: its ttr counts from the answer */
		if (verb == MSG_JOB_TAKE || verb == MSG_JOB_TOUCH) {
			how.lease_id = v.id;
			how.lease = v.lease;
		}
	}
	ops_reply_as(c, ctx, &rep, &how);
}

static int
commit(struct core *c, int rc, const struct qrec *r, unsigned flags)
{
	uint64_t lsn;

	if (rc == 0 && r->type != QREC_NONE)
		rc = core_commit(c, r, flags, &lsn);
	return rc;
}

/* bury with a priority: a BURY record keeps the priority, so a task
 * whose priority changes is released with it first, then buried. */
static int
job_bury(struct core *c, const struct queue_task_view *v, uint32_t pri)
{
	struct queue_bury_req b = { v->id, v->lease };
	struct qrec r;
	int rc;

	if (pri != v->pri) {
		struct queue_release_req a = { 0 };

		a.id = v->id;
		a.lease = v->lease;
		a.set_pri = true;
		a.pri = pri;
		rc = queue_decide_release(c->q, c->now, &a, &r);
		if ((rc = commit(c, rc, &r, 0)) != 0)
			return rc;
		/* released: ready now, parked by the face's own right */
		b.lease = 0;
		b.force = true;
	}
	rc = queue_decide_bury(c->q, c->now, &b, &r);
	return commit(c, rc, &r, 0);
}

/* reserve-job: a buried or delayed task is kicked first; the TAKE record
 * is the one queue_decide_take would make for this task. */
static int
job_take(struct core *c, uint32_t session, const struct queue_task_view *v)
{
	struct queue_kick_req k = { v->id, NULL, 0 };
	struct qrec r;
	int rc;

	/* Taken only when its reply can carry it (take.c's ops_take_now). */
	if (ops_task_wire_max(v, true) > MSG_SIZE_MAX - TASK_WIRE_FIXED)
		return SLUICE_EMSGSIZE;
	if (v->state == QUEUE_BURIED || v->state == QUEUE_DELAYED) {
		rc = queue_decide_kick(c->q, c->now, &k, &r);
		if ((rc = commit(c, rc, &r, WAL_RETRY)) != 0)
			return rc;
	}
	memset(&r, 0, sizeof(r));
	r.type = QREC_TAKE;
	r.u.take.id = v->id;
	r.u.take.session = session;
	r.u.take.detached = false;
	return commit(c, 0, &r, ops_take_flags(c, v->id));
}

void
ops_job(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct msg_req *req)
{
	const struct msg_job *j = &req->job;
	struct queue_task_view v;
	struct qrec r;
	bool taken, mine, cancelled;
	int rc;

	rc = queue_peek(c->q, c->now, j->id, &v);
	/* a cancelled job's release or bury ends its lease, which removes
	 * it (outcome.h): its holder hears of it as of a touch */
	cancelled = rc == 0 && queue_cancelled(c->q, j->id) &&
	    (j->verb == MSG_JOB_RELEASE || j->verb == MSG_JOB_BURY);
	/* A done task is finished work: the beanstalk face never sees it. */
	if (rc == 0 && v.state == QUEUE_DONE)
		rc = SLUICE_ENOTFOUND;
	taken = rc == 0 && v.state == QUEUE_TAKEN;
	mine = taken && !v.detached && v.session == session;
	if (rc == 0 && taken != mine)
		rc = SLUICE_ENOTFOUND;
	if (rc == 0 && j->verb != MSG_JOB_DELETE &&
	    mine != (j->verb != MSG_JOB_TAKE))
		rc = SLUICE_ENOTFOUND;
	if (rc == 0 && j->delay > (uint64_t)QREC_TIME_MAX)
		rc = SLUICE_EINVAL;
	if (rc == 0) {
		switch (j->verb) {
		case MSG_JOB_DELETE: {
			struct queue_delete_req a = { j->id, NULL, 0 };

			rc = queue_decide_delete(c->q, c->now, &a, &r);
			rc = commit(c, rc, &r, 0);
			break;
		}
		case MSG_JOB_RELEASE: {
			struct queue_release_req a = { 0 };

			a.id = j->id;
			a.lease = v.lease;
			a.delay_ms = (int64_t)j->delay;
			/* beanstalkd orders ready jobs of a priority by id: a
			 * job released at once goes back to its place */
			a.front = j->delay == 0;
			a.set_pri = true;
			a.pri = j->priority;
			rc = queue_decide_release(c->q, c->now, &a, &r);
			rc = commit(c, rc, &r, 0);
			break;
		}
		case MSG_JOB_BURY:
			rc = job_bury(c, &v, j->priority);
			break;
		case MSG_JOB_TOUCH: {
			struct queue_touch_req a = { j->id, v.lease };

			/* a retry for the log's reservation, as ops_touch */
			rc = queue_decide_touch(c->q, c->now, &a, &r);
			rc = commit(c, rc, &r, WAL_RETRY);
			break;
		}
		default:
			rc = job_take(c, session, &v);
			break;
		}
	}
	if (rc == 0 && cancelled)
		rc = SLUICE_ECANCELED;
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_JOB, rc, "job %" PRIu64 ": %s",
		    j->id, sluice_strerror(rc));
		return;
	}
	reply_job(c, ctx, j->id, j->verb);
}
