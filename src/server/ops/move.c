/* move - the ops of a tube's move between clusters (docs/scaling.md,
 * "Moving a tube"; queue/move.h): move_out on the source (hold a batch of
 * the tube's tasks for the mover and answer them, or drop the held
 * tasks the mover copied), move_in on the target (copy a batch in, each
 * task at most once), move_end on the target (forget the source ids)
 * and on each source (lift its mark).
 * A source's first hold marks the tube moving out: its takes find none
 * of its tasks from then on, until move_end there.
 * The admin's (auth.c: no other role names them). Each request is one
 * turn of the core, so one commit; its reply leaves once that commit is
 * (with --sync-replicas, on the followers too).
 *
 * A hold answers the tasks held already when there are any (a batch whose
 * mover died before it dropped them), else holds new ones: a mover that
 * starts again gets the same batch, copies it again (nothing is made
 * twice at the target) and drops it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue.h"
#include "server/core/core.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "sluice.h"
#include "util/log.h"

/* Answers the tasks ids[0..n) with their state before the hold. */
static void
reply_held(
    struct core *c, struct face_ctx *ctx, const uint64_t *ids, uint32_t n)
{
	struct msg_rep rep = { .op = MSG_OP_MOVE_OUT };
	struct msg_task *t = calloc(n > 0 ? n : 1, sizeof(*t));
	uint32_t k = 0;

	if (t == NULL) {
		core_reply_err(c, ctx, MSG_OP_MOVE_OUT, SLUICE_ENOMEM, NULL);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct queue_task_view v;
		uint64_t lease = 0;
		int was = queue_move_was(c->q, ids[i], &lease);

		if (was == 0 || queue_peek(c->q, c->now, ids[i], &v) != 0)
			continue;
		ops_view_to_task(c, &v, true, &t[k]);
		t[k].state = (uint8_t)was;
		t[k].lease = lease;
		t[k].detached = false;
		t[k].deadline = 0;
		t[k].holder.session = 0;
		k++;
	}
	rep.move.ntasks = k;
	rep.move.tasks = t;
	ops_reply(c, ctx, &rep);
	free(t);
}

static void
hold(struct core *c, struct face_ctx *ctx, const struct msg_move_req *m)
{
	uint64_t ids[MSG_MOVE_MAX], lsn;
	size_t bytes = OPS_REPLY_HEAD_MAX, need;
	struct queue_task_view v;
	uint32_t n;
	struct qrec r;
	int rc = 0;

	/* from now on no take finds the tube's tasks here (queue/move.h),
	 * once no workflow of the tube is under way here (move_wait.c):
	 * until then the answer holds nothing, and the mover waits */
	rc = queue_decide_move_mark(c->q, m->tube.p, m->tube.len, &r);
	if (rc == 0 && r.type != QREC_NONE &&
	    queue_move_graph(c->q, m->tube.p, m->tube.len) > 0) {
		reply_held(c, ctx, ids, 0);
		return;
	}
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, 0, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_MOVE_OUT, rc,
		    "move_out: tube '%.*s': %s", (int)m->tube.len, m->tube.p,
		    sluice_strerror(rc));
		return;
	}
	n = (uint32_t)queue_move_held(
	    c->q, m->tube.p, m->tube.len, ids, MSG_MOVE_MAX);
	if (n > MSG_MOVE_MAX)
		n = MSG_MOVE_MAX; /* the rest in the next hold */
	if (n > 0) {
		/* a batch held before: answered again, as far as fits */
		uint32_t k = 0;

		while (k < n && k < m->max &&
		    queue_peek(c->q, c->now, ids[k], &v) == 0 &&
		    (need = ops_task_wire_max(&v, true)) <=
		        OPS_REPLY_MAX - bytes) {
			bytes += need;
			k++;
		}
		reply_held(c, ctx, ids, k > 0 ? k : 1);
		return;
	}
	while (n < m->max) {
		uint64_t lease =
		    qrec_lease(wal_epoch(c->wal), wal_last_lsn(c->wal) + 1);

		rc = queue_decide_move_hold(
		    c->q, c->now, m->tube.p, m->tube.len, lease, &r);
		if (rc != 0)
			break;
		need = queue_peek(c->q, c->now, r.u.move.id, &v) == 0
		    ? ops_task_wire_max(&v, true)
		    : 0;
		if (n > 0 && need > OPS_REPLY_MAX - bytes)
			break;
		if ((rc = core_commit(c, &r, 0, &lsn)) != 0)
			break;
		bytes += need;
		ids[n++] = r.u.move.id;
	}
	if (n == 0 && rc != SLUICE_ENOTFOUND) {
		core_reply_err(c, ctx, MSG_OP_MOVE_OUT, rc,
		    "move_out: tube '%.*s': %s", (int)m->tube.len, m->tube.p,
		    sluice_strerror(rc));
		return;
	}
	reply_held(c, ctx, ids, n);
}

static void
drop(struct core *c, struct face_ctx *ctx, const struct msg_move_req *m)
{
	struct msg_rep rep = { .op = MSG_OP_MOVE_OUT };
	struct msg_iter it = m->it;
	uint64_t id, lease, lsn;
	struct qrec r;
	int rc;

	while (msg_next_move_drop(&it, &id, &lease)) {
		if ((rc = queue_decide_move_drop(c->q, id, lease, &r)) != 0 ||
		    (r.type != QREC_NONE &&
		        (rc = core_commit(c, &r, 0, &lsn)) != 0)) {
			core_reply_err(c, ctx, MSG_OP_MOVE_OUT, rc,
			    "move_out: drop of task %" PRIu64 ": %s", id,
			    sluice_strerror(rc));
			return;
		}
		if (r.type != QREC_NONE)
			rep.move.n++;
	}
	ops_reply(c, ctx, &rep);
}

/* A task of a move_in as the queue takes it. */
static void
item_from_task(const struct msg_task *t, struct queue_move_item *it)
{
	memset(it, 0, sizeof(*it));
	it->src_id = t->id;
	it->state = t->state;
	it->attempts = t->attempts;
	it->created_at = t->created_at > (uint64_t)QREC_TIME_MAX
	    ? -1
	    : (int64_t)t->created_at;
	it->error = t->last_error.p;
	it->error_len = t->last_error.len;
	it->tube = t->tube.p;
	it->tube_len = t->tube.len;
	it->payload = t->payload.p;
	it->payload_len = t->payload.len;
	it->pri = t->priority;
	it->ttr = t->ttr > UINT32_MAX ? 0 : (uint32_t)t->ttr;
	it->max_attempts = t->max_attempts;
	it->run_at =
	    t->run_at > (uint64_t)QREC_TIME_MAX ? -1 : (int64_t)t->run_at;
	it->period =
	    t->period > (uint64_t)QREC_TIME_MAX ? -1 : (int64_t)t->period;
	it->key = t->key.p;
	it->key_len = t->key.len;
	it->group = t->group.p;
	it->group_len = t->group.len;
}

void
ops_move_each(struct core *c, struct face_ctx *ctx,
    const struct msg_move_req *m,
    int (*one)(struct core *c, const struct msg_move_req *m,
        const struct msg_task *t, uint64_t *id))
{
	struct msg_rep rep = { .op = MSG_OP_MOVE_IN };
	struct msg_move_res *res = calloc(m->n > 0 ? m->n : 1, sizeof(*res));
	struct msg_iter it = m->tasks_it;
	struct msg_task t;
	uint32_t n = 0;

	if (res == NULL) {
		core_reply_err(c, ctx, MSG_OP_MOVE_IN, SLUICE_ENOMEM, NULL);
		return;
	}
	while (n < m->n && msg_next_task(&it, &t)) {
		int rc = one(c, m, &t, &res[n].id);

		if (rc != 0) {
			res[n].status = (uint16_t)(rc > 0 ? rc : SLUICE_ENOMEM);
			res[n].id = 0;
		}
		n++;
	}
	rep.move.n = n;
	rep.move.res = res;
	ops_reply(c, ctx, &rep);
	free(res);
}

/* move_in of one task: its copy, or a key's reservation (move_keys.c). */
static int
copy_one(struct core *c, const struct msg_move_req *m, const struct msg_task *t,
    uint64_t *id)
{
	struct queue_move_item item;
	uint64_t lsn;
	struct qrec r;
	int rc;

	item_from_task(t, &item);
	if (t->tube.len != m->tube.len ||
	    memcmp(t->tube.p, m->tube.p, m->tube.len) != 0 ||
	    t->payload.len != t->size)
		return SLUICE_EINVAL; /* another tube's, or no payload */
	if (t->state == MSG_ST_DONE)  /* a key's reservation */
		return ops_move_key_in(c, m, t, id);
	rc = queue_decide_move_in(
	    c->q, c->now, m->source.p, m->source.len, &item, &r, id);
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, WAL_NEW_WORK, &lsn);
	return rc;
}

static void
end(struct core *c, struct face_ctx *ctx, const struct msg_move_req *m)
{
	struct msg_rep rep = { .op = MSG_OP_MOVE_END };
	struct qrec r;
	uint64_t lsn;
	int rc;

	rep.move.n =
	    (uint32_t)queue_move_pairs(c->q, m->tube.p, m->tube.len, NULL);
	rc = queue_decide_move_end(c->q, m->tube.p, m->tube.len, &r);
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, 0, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_MOVE_END, rc,
		    "move_end: tube '%.*s': %s", (int)m->tube.len, m->tube.p,
		    sluice_strerror(rc));
		return;
	}
	if (rep.move.n > 0)
		log_info("move",
		    "a tube's move in is over tube=%.*s copies=%" PRIu32,
		    (int)m->tube.len, m->tube.p, rep.move.n);
	ops_reply(c, ctx, &rep);
}

void
ops_move(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	const struct msg_move_req *m = &req->move;

	switch (req->op) {
	case MSG_OP_MOVE_OUT:
		if (m->kind == MSG_MOVE_HOLD)
			hold(c, ctx, m);
		else if (m->kind == MSG_MOVE_KEYS)
			ops_move_keys(c, ctx, m);
		else if (m->kind == MSG_MOVE_LIVE)
			ops_move_live(c, ctx, m);
		else if (m->kind == MSG_MOVE_KEEP)
			ops_move_keep(c, ctx, m);
		else
			drop(c, ctx, m);
		break;
	case MSG_OP_MOVE_IN:
		if (m->kind != 0)
			ops_move_window_in(c, ctx, m); /* move_window.c */
		else
			ops_move_each(c, ctx, m, copy_one);
		break;
	default:
		end(c, ctx, m);
		break;
	}
}
