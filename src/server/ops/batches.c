/* batches - batches with callbacks on the server: the ops batch_show
 * (one batch, or with flag 0x01 the list of them) and batch_set, and the
 * firing of an ended batch's callbacks (queue/batch.h holds the state,
 * the records and the rules; docs/queue.md, "Batches").
 *
 * Firing. Only a leader fires (run_timers calls ops_batch_run on a
 * leader only): a batch that ended in an apply owes its callbacks, and
 * one BATCH_FIRE record puts them and marks them put in the same apply.
 * A node that applies the log (a restart, a follower promoted) sees the
 * fire and never puts them again; one that applied the end but not the
 * fire (a leader that crashed in between) puts them once it leads.
 * poll wakes at once while a batch owes (ops_batch_next_wake), or a
 * second after a firing the log refused.
 *
 * A batch_set with the cancel bit closes the batch and cancels each of
 * its live tasks with a CANCEL record of its own (no record of its own:
 * the batch ends as its last task goes, taken ones when their leases
 * end, and on_complete fires then).
 *
 * A test build (sluiced-fault) may hold the firing: $SLUICE_FAULT_PAUSE
 * "batch_fire:MS" makes a leader wait MS after a batch's end before it
 * fires, so that a test can kill it in between (util/fault.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/batch.h"
#include "server/core/core.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "sluice.h"
#include "util/fault.h"
#include "util/log.h"

enum {
	BATCH_RETRY_MS = 1000, /* after a firing the log refused */
	BATCH_FIRES_MAX = 1000 /* batches fired in one turn */
};

static int64_t retry_at;
static uint64_t firings; /* BATCH_FIRE records decided here */

uint64_t
ops_batch_firings(void)
{
	return firings;
}

/* When `b`'s callbacks may be put: at once, but in a test build that
 * holds firings (FAULT_PAUSE_BATCH_FIRE) that long after its end. */
static int64_t
fire_at(const struct batch *b)
{
	unsigned ms = FAULT_PAUSE_MS(FAULT_PAUSE_BATCH_FIRE);

	return ms == 0 ? 0 : b->ended_at + (int64_t)ms;
}

int64_t
ops_batch_next_wake(struct core *c)
{
	const struct batch *b;
	int64_t at;

	if (c->follower || c->fenced || c->handing ||
	    (b = queue_batch_owed(c->q)) == NULL)
		return INT64_MAX;
	at = retry_at > c->now ? retry_at : c->now;
	return fire_at(b) > at ? fire_at(b) : at;
}

void
ops_batch_run(struct core *c)
{
	struct batch *b;

	if (retry_at > c->now)
		return;
	retry_at = 0;
	for (int i = 0; i < BATCH_FIRES_MAX; i++) {
		struct qrec r;
		uint64_t lsn;
		int rc;

		if ((b = queue_batch_owed(c->q)) == NULL || fire_at(b) > c->now)
			return;
		rc = queue_decide_batch_fire(c->q, c->now, b, &r);
		if (rc == 0)
			rc = core_commit(c, &r, WAL_NEW_WORK, &lsn);
		if (rc != 0) {
			log_warn("batch",
			    "batch %s: cannot put its callbacks error=\"%s\"; "
			    "tried again every second",
			    b->name, sluice_strerror(rc));
			retry_at = c->now + BATCH_RETRY_MS;
			return;
		}
		firings++;
	}
}

static void
to_msg(const struct queue_batch_info *i, struct msg_batch *m)
{
	const struct batch *b = i->b;

	memset(m, 0, sizeof(*m));
	m->name = (struct msg_str) { b->name, b->name_len };
	m->total = i->total;
	m->waiting = i->waiting;
	m->ready = i->ready;
	m->delayed = i->delayed;
	m->taken = i->taken;
	m->buried = i->buried;
	m->acked = i->acked;
	m->failed = i->failed;
	m->started_at = (uint64_t)i->started_at;
	m->ended_at = (uint64_t)i->ended_at;
	m->closed = i->closed;
	m->ended = i->ended;
	m->owed = i->owed;
	m->fired = i->fired;
	if (b->on_tube[0] != NULL)
		m->success_tube =
		    (struct msg_str) { b->on_tube[0], b->on_tube_len[0] };
	if (b->on_tube[1] != NULL)
		m->complete_tube =
		    (struct msg_str) { b->on_tube[1], b->on_tube_len[1] };
	m->success_id = b->fired_id[0];
	m->complete_id = b->fired_id[1];
}

static void
reply_one(struct core *c, struct face_ctx *ctx, uint8_t op,
    const struct msg_str *name)
{
	struct msg_rep rep = { .op = op };
	struct queue_batch_info i;
	int rc = queue_batch_show(c->q, name->p, name->len, &i);

	if (rc != 0) {
		core_reply_err(c, ctx, op, rc, "batch '%.*s': %s",
		    (int)name->len, name->p,
		    rc == SLUICE_ENOTFOUND
		        ? "no such batch (never made, or forgotten the dedup "
		          "window after it ended)"
		        : sluice_strerror(rc));
		return;
	}
	to_msg(&i, &rep.batch_info.one);
	ops_reply_applied(c, ctx, &rep);
}

static const char *
set_err(int rc)
{
	switch (rc) {
	case SLUICE_EINVAL:
		return "bad batch name: 1-200 bytes of A-Z a-z 0-9 _ . : / -";
	case SLUICE_ETUBE:
		return "bad callback tube name: 1-200 bytes of A-Z a-z 0-9 _ "
		       ". : / -";
	case SLUICE_ETOOBIG:
		return "a callback's payload is over 65,536 bytes";
	case SLUICE_EBATCH:
		return "the batch has ended: its callbacks cannot change";
	case SLUICE_ELIMIT:
		return "the server holds as many batches (100,000) as it may";
	case SLUICE_ENOTFOUND:
		return "no such batch: nothing to close or cancel";
	default:
		return sluice_strerror(rc);
	}
}

/* Cancels the live tasks of batch `name` (closed already), each as
 * `sluice cancel` does: one CANCEL record a task, a taken one marked. A
 * task of a tube the token may not see is left alone; one gone since
 * (its parent's cancel rule) or cancelled already is no error. */
static int
cancel_members(
    struct core *c, const struct tokens_entry *tok, const struct msg_str *name)
{
	uint64_t *ids, lsn;
	size_t n;
	int rc = queue_batch_live_ids(c->q, name->p, name->len, &ids, &n);

	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct qrec r;

		if (ops_auth_hidden(c, tok, ids[i]))
			continue;
		rc = queue_decide_cancel(c->q, c->now, ids[i], &r);
		if (rc == SLUICE_ECANCELED || rc == SLUICE_ENOTFOUND)
			rc = 0;
		else if (rc == 0)
			rc = core_commit(c, &r, 0, &lsn);
	}
	free(ids);
	return rc;
}

static void
batch_set(struct core *c, struct face_ctx *ctx, const struct tokens_entry *tok,
    const struct msg_batch_req *m)
{
	struct qrec r;
	uint64_t lsn;
	int rc = 0;

	if (m->what & (MSG_BATCH_SUCCESS | MSG_BATCH_COMPLETE)) {
		bool s = m->what & MSG_BATCH_SUCCESS;
		bool k = m->what & MSG_BATCH_COMPLETE;

		rc = queue_decide_batch_set(c->q, m->name.p, m->name.len,
		    s ? (m->success_tube.p ? m->success_tube.p : "") : NULL,
		    s ? m->success_tube.len : 0, m->success_payload.p,
		    m->success_payload.len,
		    k ? (m->complete_tube.p ? m->complete_tube.p : "") : NULL,
		    k ? m->complete_tube.len : 0, m->complete_payload.p,
		    m->complete_payload.len, &r);
		if (rc == 0)
			rc = core_commit(c, &r, WAL_RETRY, &lsn);
	}
	if (rc == 0 && (m->what & (MSG_BATCH_CLOSE | MSG_BATCH_CANCEL))) {
		rc = queue_decide_batch_close(c->q, m->name.p, m->name.len, &r);
		if (rc == 0 && r.type != QREC_NONE)
			rc = core_commit(c, &r, WAL_RETRY, &lsn);
	}
	if (rc == 0 && (m->what & MSG_BATCH_CANCEL))
		rc = cancel_members(c, tok, &m->name);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_BATCH_SET, rc,
		    "batch set '%.*s': %s; nothing was changed",
		    (int)m->name.len, m->name.p, set_err(rc));
		return;
	}
	reply_one(c, ctx, MSG_OP_BATCH_SET, &m->name);
}

/* batch_show with flag 0x01: up to `limit` batches (queue_batch_list's
 * order) and how many the server holds. */
static void
reply_list(struct core *c, struct face_ctx *ctx, uint32_t limit)
{
	struct msg_rep rep = { .op = MSG_OP_BATCH_SHOW };
	struct queue_batch_info *info = calloc(limit, sizeof(*info));
	struct msg_batch *v = calloc(limit, sizeof(*v));
	uint32_t n = 0;
	int rc = info == NULL || v == NULL
	    ? SLUICE_ENOMEM
	    : queue_batch_list(c->q, c->now, limit, info, &n);

	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_BATCH_SHOW, rc, "batch list: %s",
		    sluice_strerror(rc));
	} else {
		for (uint32_t i = 0; i < n; i++)
			to_msg(&info[i], &v[i]);
		rep.batch_info.list = true;
		rep.batch_info.total = queue_batch_count(c->q);
		rep.batch_info.n = n;
		rep.batch_info.v = v;
		ops_reply(c, ctx, &rep);
	}
	free(info);
	free(v);
}

void
ops_batch(struct core *c, struct face_ctx *ctx, const struct tokens_entry *tok,
    const struct msg_req *req)
{
	if (req->op == MSG_OP_BATCH_SET) {
		batch_set(c, ctx, tok, &req->batch);
		return;
	}
	if (req->batch.list) {
		reply_list(c, ctx, req->batch.limit);
		return;
	}
	if (!queue_batch_name_valid(req->batch.name.p, req->batch.name.len)) {
		core_reply_err(c, ctx, MSG_OP_BATCH_SHOW, SLUICE_EINVAL,
		    "batch show: %s", set_err(SLUICE_EINVAL));
		return;
	}
	reply_one(c, ctx, MSG_OP_BATCH_SHOW, &req->batch.name);
}
