/* dispatch - the door of the operations layer: ops_handle decodes a
 * request, answers at once what cannot go on (a bad request, a failed
 * --auth check, a write sent to a node that does not take writes), and
 * hands the rest to the handler of its op, one per file by concept:
 * put.c, take.c (and wait.c, the takes that wait), lease.c, batch.c,
 * task.c, tube.c, read.c, stats.c, node.c, job.c; auth.c checks tokens.
 * Here too are what every handler answers with: ops_reply, and a task as
 * the wire carries it.
 *
 * A handler decodes nothing itself (msg.c did), maps the request onto the
 * queue's decide functions, commits each record (core_commit: append +
 * apply), and encodes the reply, which the core holds until the log
 * holds what it depends on: for a write, the last record appended (with
 * --sync-replicas, on followers too); for a read, the local log
 * (core_reply). Errors are answered with the code the queue or the log
 * gave and a text naming the task or tube.
 *
 * What a request carries past the dispatcher (its token, the task its
 * token may not see, who sent a forced lease op) lives on the
 * dispatcher's stack for that request and is handed to the handlers that
 * need it; nothing of it stays on the core.
 *
 * The log's reservation (reserve.h): puts and replaces are new work,
 * refused first when the disk fills; a retake, a touch, a kick, a pause
 * and an ack that keeps the task alive (recurring, moved) are retries,
 * which may use the pool beyond what live tasks need; everything that
 * finishes accepted work (a first take, an ack, a release, a fail with
 * its text cut to RESERVE_ERROR_MAX, a bury, a delete) may use it all. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "server/core/core.h"
#include "server/face/face.h"
#include "server/face/http/http.h"
#include "server/face/nng.h"
#include "server/failover/cluster.h"
#include "server/failover/cmap_node.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "server/repl/follow.h"
#include "sluice.h"

enum {
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

/* A parent's outcome and result, for the encoder of a task record. */
static void
parent_get(void *arg, uint64_t id, struct msg_parent *out)
{
	const char *res;
	size_t len;
	int outcome;

	queue_dep_result(arg, id, &outcome, &res, &len);
	out->outcome = (uint8_t)outcome;
	out->result = (struct msg_str) { res, len };
}

/* Its parents (their results with the payload) and children. */
static void
task_deps(const struct core *c, const struct queue_task_view *v, bool payload,
    struct msg_task *t)
{
	struct queue_task_deps d;

	if (queue_task_deps(c->q, v->id, &d) != 0 ||
	    (d.nparents == 0 && d.nchildren == 0))
		return;
	t->has_deps = true;
	t->deps.on_parent_failure = d.on_parent;
	t->deps.pending = d.pending;
	t->deps.nparents = (uint32_t)d.nparents;
	t->deps.parent_ids = d.parents;
	t->deps.parent_get = parent_get;
	t->deps.parent_arg = c->q;
	t->deps.results = payload;
	t->deps.nchildren = (uint32_t)d.nchildren;
	t->deps.nshown = d.nchildren < MSG_CHILDREN_MAX ? (uint32_t)d.nchildren
	                                                : MSG_CHILDREN_MAX;
	t->deps.children = d.children;
}

void
ops_view_to_task(const struct core *c, const struct queue_task_view *v,
    bool payload, struct msg_task *t)
{
	memset(t, 0, sizeof(*t));
	t->id = v->id;
	t->group = (struct msg_str) { v->group, v->group_len };
	t->lease = v->lease;
	t->state = (uint8_t)v->state; /* the numbers agree */
	t->detached = v->detached;
	t->cancelled = v->state == QUEUE_TAKEN && queue_cancelled(c->q, v->id);
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
	task_deps(c, v, payload, t);
}

void
ops_reply_as(struct core *c, struct face_ctx *ctx, const struct msg_rep *rep,
    const struct core_reply_how *how)
{
	int rc;

	buf_reset(&c->out);
	rc = msg_encode_rep(&c->out, rep);
	if (rc != 0) {
		core_reply_err_as(c, ctx, how, rep->op,
		    rc > 0 ? rc : SLUICE_ENOMEM, "cannot encode the reply: %s",
		    sluice_strerror(rc));
		return;
	}
	core_reply_as(c, ctx, how);
}

void
ops_reply(struct core *c, struct face_ctx *ctx, const struct msg_rep *rep)
{
	struct core_reply_how how = { .local = !core_op_writes(rep->op),
		.read = !core_op_writes(rep->op) };

	ops_reply_as(c, ctx, rep, &how);
}

void
ops_reply_applied(
    struct core *c, struct face_ctx *ctx, const struct msg_rep *rep)
{
	struct core_reply_how how = {
		.local = true, .read = true, .read_lsn = queue_lsn(c->q)
	};

	if (core_op_writes(rep->op)) {
		ops_reply(c, ctx, rep);
		return;
	}
	ops_reply_as(c, ctx, rep, &how);
}

void
ops_reply_after(struct core *c, struct face_ctx *ctx, uint8_t op, uint64_t id,
    bool replaced)
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

/* The room for the tasks of a reply to `session` beyond its first: the
 * HTTP face writes the reply again as JSON, where a payload byte may take
 * up to HTTP_JSON_GROWTH (a \u00XX escape), so its replies get that much
 * less. */
size_t
ops_reply_budget(const struct core *c, uint32_t session)
{
	if (c->http != NULL && session == http_session(c->http))
		return OPS_REPLY_MAX / HTTP_JSON_GROWTH;
	return OPS_REPLY_MAX;
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

/* Who sent a request, for the log: the peer's address as its face knows
 * it, or an nng client's (its pipe's remote address), else the session. */
static void
peer_name(const struct face_ctx *ctx, nng_msg *msg, uint32_t session, char *out,
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
	case MSG_OP_DELETE_WHERE:
		return r->where.force; /* taken tasks: their leases end */
	default:
		return false;
	}
}

/* Hands request `r` to the handler of its op. `tok`: its token (NULL
 * without --auth); `peer`: who sent a forced lease op (NULL). */
static void
dispatch(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct msg_req *r, const struct tokens_entry *tok, const char *peer)
{
	const struct msg_req req = *r;

	if (ctx->face->lost_lease_ready &&
	    (req.op == MSG_OP_TAKE || req.op == MSG_OP_JOB)) {
		struct sess *s = sess_get(&c->sess, session);

		if (s != NULL) /* its leases keep its face's rule */
			s->lost_ready = true;
	}
	if (c->draining &&
	    (req.op == MSG_OP_PUT || req.op == MSG_OP_PUT_BATCH)) {
		core_reply_err(c, ctx, req.op, SLUICE_ESHUTDOWN,
		    "the server is draining (SIGUSR1): puts are refused "
		    "until it stops");
		return;
	}
	switch (req.op) {
	case MSG_OP_PUT:
		ops_put(c, ctx, tok, &req);
		break;
	case MSG_OP_PUT_BATCH:
		ops_put_batch(c, ctx, tok, &req);
		break;
	case MSG_OP_TAKE:
		ops_take(c, ctx, session, tok, &req);
		break;
	case MSG_OP_ACK:
		ops_ack(c, ctx, tok, &req, peer);
		break;
	case MSG_OP_RELEASE:
		ops_release(c, ctx, &req, peer);
		break;
	case MSG_OP_FAIL:
		ops_fail(c, ctx, &req, peer);
		break;
	case MSG_OP_TOUCH:
		ops_touch(c, ctx, &req, peer);
		break;
	case MSG_OP_BURY:
		ops_bury(c, ctx, &req, peer);
		break;
	case MSG_OP_KICK:
		if (!ops_kick_bulk(c, ctx, &req))
			ops_kick(c, ctx, &req);
		break;
	case MSG_OP_KICK_ID:
		ops_kick_id(c, ctx, &req);
		break;
	case MSG_OP_DELETE:
	case MSG_OP_DELETE_KEY:
		ops_delete(c, ctx, &req);
		break;
	case MSG_OP_ACK_BATCH:
		ops_ack_batch(c, ctx, tok, &req);
		break;
	case MSG_OP_DELETE_BATCH:
		ops_delete_batch(c, ctx, tok, &req);
		break;
	case MSG_OP_CANCEL:
		ops_cancel(c, ctx, tok, &req);
		break;
	case MSG_OP_WAIT:
		ops_wait(c, ctx, session, tok, &req);
		break;
	case MSG_OP_UPDATE:
		ops_update(c, ctx, &req);
		break;
	case MSG_OP_FLUSH:
		ops_flush(c, ctx, &req);
		break;
	case MSG_OP_DELETE_WHERE:
		ops_delete_where(c, ctx, &req, peer);
		break;
	case MSG_OP_RELEASE_ALL:
		ops_release_all(c, ctx, &req, peer);
		break;
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
		ops_peek(c, ctx, &req);
		break;
	case MSG_OP_STATS:
		ops_stats(c, ctx, &req);
		break;
	case MSG_OP_LIST:
		ops_list(c, ctx, session, &req);
		break;
	case MSG_OP_ERRORS:
		ops_errors(c, ctx, &req);
		break;
	case MSG_OP_STATS_HOURLY:
		ops_stats_hourly(c, ctx, &req);
		break;
	case MSG_OP_HISTORY:
		ops_history(c, ctx, &req);
		break;
	case MSG_OP_GROUPS:
		ops_groups(c, ctx, &req);
		break;
	case MSG_OP_PAUSE:
		ops_pause(c, ctx, tok, &req);
		break;
	case MSG_OP_SNAPSHOT:
		ops_snapshot(c, ctx);
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
	case MSG_OP_MAP:
		cmap_node_op_map(c, ctx);
		break;
	case MSG_OP_MAP_SET:
	case MSG_OP_MAP_DELETE:
		cmap_node_op_change(c, ctx, &req);
		break;
	case MSG_OP_JOB:
		ops_job(c, ctx, session, &req);
		break;
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_SHOW:
	case MSG_OP_TUBE_DELETE:
		ops_tube(c, ctx, tok, &req);
		break;
	case MSG_OP_GROUP:
		ops_group(c, ctx, &req);
		break;
	case MSG_OP_SCHED_SET:
	case MSG_OP_SCHED_LIST:
	case MSG_OP_SCHED_CTL:
		ops_sched(c, ctx, &req);
		break;
	case MSG_OP_BATCH_SHOW:
	case MSG_OP_BATCH_SET:
		ops_batch(c, ctx, tok, &req);
		break;
	case MSG_OP_MOVE_OUT:
	case MSG_OP_MOVE_IN:
	case MSG_OP_MOVE_END:
		ops_move(c, ctx, &req);
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

void
ops_handle(struct core *c, struct face_ctx *ctx, uint32_t session, nng_msg *msg)
{
	/* What is answered before the op runs (a bad request, an auth, a
	 * refusal) writes nothing: it waits for no --sync-replicas
	 * follower. */
	static const struct core_reply_how local = { .local = true };
	const struct tokens_entry *tok = NULL;
	char peer[PEER_MAX] = "";
	uint64_t hidden = 0;
	struct msg_req req;
	int rc;

	rc = msg_decode_req(
	    nng_msg_body(msg), nng_msg_len(msg), &c->limits, &req);
	if (rc != 0) {
		uint8_t op = msg_req_op(nng_msg_body(msg), nng_msg_len(msg));

		if (rc == SLUICE_ETOOBIG)
			core_reply_err_as(c, ctx, &local, op, rc,
			    "bad request: a payload over the server's limit of "
			    "%zu bytes",
			    c->limits.payload_max);
		else if (rc == SLUICE_EMSGSIZE)
			core_reply_err_as(c, ctx, &local, op, rc,
			    "bad request: %zu bytes, over the message limit of "
			    "%zu bytes",
			    nng_msg_len(msg), c->limits.msg_max);
		else
			core_reply_err_as(c, ctx, &local, op, rc,
			    "bad request: %s", sluice_strerror(rc));
		return;
	}
	c->ops[req.op]++;
	if (!ops_auth_check(c, ctx, session, &req, &tok, &hidden))
		return;
	if (core_op_writes(req.op))
		core_check_lease(c); /* a write is decided only under it */
	if ((c->follower || c->fenced || c->handing) &&
	    core_op_writes(req.op)) {
		ops_refuse_write(c, ctx, req.op);
		return;
	}
	if (!cmap_node_admit(c, ctx, &req))
		return; /* another cluster's tube: SLUICE_EMOVED */
	/* A read shows what this node holds; it does not wait for
	 * --sync-replicas followers (a write does: core_reply). */
	if (ops_req_forced(&req))
		peer_name(ctx, msg, session, peer, sizeof(peer));
	queue_hide(c->q, hidden); /* for this request only */
	dispatch(c, ctx, session, &req, tok, peer[0] ? peer : NULL);
	queue_hide(c->q, 0);
}
