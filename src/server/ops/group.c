/* group - the limits of a tube's fair groups as op group (0x2a) carries
 * them: every named group's (an empty group name) and one group's own,
 * its pause and resume, and the reply that says where the group stands
 * (docs/protocol.md, "group"; docs/queue.md, "Group limits").
 *
 * A change is checked whole before anything is written, only to say
 * which rule it breaks (decide checks the same again): the tube must
 * exist and the limits the name would have must be valid; else nothing
 * changes. A rate given without a burst (0) gets the tube rate's
 * default, queue_limits_default_burst(): 100 ms of tokens. */
#include <string.h>

#include "queue/limits.h"
#include "server/core/core.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

static void
flow_to_msg(const struct qrec_limits *l, struct msg_flow *f)
{
	f->set = l->set;
	f->rate = l->rate;
	f->per_ms = l->per_ms;
	f->burst = l->burst;
	f->concurrency = l->concurrency;
}

/* The group's name for a text: "every group" or "group 'G'". */
#define GROUP_FMT "%s%.*s%s"
#define GROUP_ARG(g)                                                           \
	(g).len == 0 ? "every group" : "group '", (int)(g).len,                \
	    (g).len == 0 ? "" : (g).p, (g).len == 0 ? "" : "'"

static void
reply_view(struct core *c, struct face_ctx *ctx, const struct msg_group_req *m)
{
	struct msg_rep rep = { .op = MSG_OP_GROUP };
	struct msg_group_rep *g = &rep.group;
	struct queue_group_view v;
	int rc;

	rc = queue_group_limits(
	    c->q, m->tube.p, m->tube.len, m->group.p, m->group.len, c->now, &v);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_GROUP, rc,
		    "tube '%.*s' " GROUP_FMT ": %s", (int)m->tube.len,
		    m->tube.p, GROUP_ARG(m->group),
		    rc == SLUICE_ENOTFOUND ? "no such tube"
		                           : sluice_strerror(rc));
		return;
	}
	g->tube = m->tube;
	g->group = m->group;
	flow_to_msg(&v.def, &g->every);
	g->overrides = v.noverrides;
	g->paused = v.npaused;
	g->held = v.nheld;
	if (m->group.len > 0) {
		g->gflags = (uint8_t)((v.has_own ? MSG_GROUP_OWN : 0) |
		    (v.paused ? MSG_GROUP_PAUSED : 0) |
		    (v.live ? MSG_GROUP_LIVE : 0));
		flow_to_msg(&v.own, &g->own);
		flow_to_msg(&v.lim, &g->lim);
		g->ready = v.ready;
		g->taken = v.taken;
		g->tokens = v.tokens;
		g->holding = v.holding;
	}
	ops_reply(c, ctx, &rep);
}

/* The queue's request for `m`; 0, or the error it answered. */
static int
check(struct core *c, struct face_ctx *ctx, const struct msg_group_req *m,
    struct queue_group_set_req *out)
{
	const struct msg_flow *f = &m->flow;
	struct queue_group_view v;
	struct qrec_limits l;
	const char *why;
	int rc;

	memset(out, 0, sizeof(*out));
	out->tube = m->tube.p;
	out->tube_len = m->tube.len;
	out->group = m->group.p;
	out->group_len = m->group.len;
	out->set = f->set;
	out->unset = m->lunset;
	ops_limits_asked(f, &out->lim);
	out->pause = m->verb == MSG_GROUP_PAUSE ? QUEUE_GROUP_PAUSE
	    : m->verb == MSG_GROUP_RESUME       ? QUEUE_GROUP_RESUME
	                                        : QUEUE_GROUP_KEEP;
	rc = queue_group_limits(
	    c->q, m->tube.p, m->tube.len, m->group.p, m->group.len, c->now, &v);
	if (rc == SLUICE_ENOTFOUND) {
		core_reply_err(c, ctx, MSG_OP_GROUP, rc,
		    "group limits of tube '%.*s': no such tube: limits are set "
		    "on a tube that exists (put a task to it first); nothing "
		    "was changed",
		    (int)m->tube.len, m->tube.p);
		return rc;
	}
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_GROUP, rc,
		    "group limits of tube '%.*s': %s", (int)m->tube.len,
		    m->tube.p, sluice_strerror(rc));
		return rc;
	}
	/* the limits the name would have */
	l = m->group.len == 0 ? v.def : v.own;
	queue_limits_change(&l, &out->lim, out->set, out->unset);
	if ((why = queue_limits_broken(&l)) != NULL) {
		/* a limit of 0 on a group: the group is what to pause */
		const char *tube_pause =
		    strstr(why, ": pause the tube instead");

		core_reply_err(c, ctx, MSG_OP_GROUP, SLUICE_EINVAL,
		    "group limits of tube '%.*s', " GROUP_FMT
		    ": %.*s%s; nothing was changed",
		    (int)m->tube.len, m->tube.p, GROUP_ARG(m->group),
		    tube_pause != NULL ? (int)(tube_pause - why)
		                       : (int)strlen(why),
		    why,
		    tube_pause == NULL ? ""
		        : m->group.len > 0
		        ? ": pause the group instead"
		        : ": pause the groups one by one, or the tube");
		return SLUICE_EINVAL;
	}
	return 0;
}

void
ops_group(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	const struct msg_group_req *m = &req->group;
	struct queue_group_set_req a;
	struct qrec r;
	uint64_t lsn;
	int rc;

	if (m->verb == MSG_GROUP_SHOW) {
		reply_view(c, ctx, m);
		return;
	}
	if (m->verb == MSG_GROUP_NEXT) {
		char name[QREC_GROUP_MAX];
		struct msg_group_req at = *m;
		size_t len = 0;

		rc = queue_move_group_next(c->q, m->tube.p, m->tube.len,
		    m->group.p, m->group.len, name, &len);
		at.group = (struct msg_str) { name, len };
		if (rc == 0)
			reply_view(c, ctx, &at);
		else
			core_reply_err(c, ctx, MSG_OP_GROUP, rc,
			    "tube '%.*s': %s", (int)m->tube.len, m->tube.p,
			    rc == SLUICE_ENOTFOUND ? "no such tube"
			                           : sluice_strerror(rc));
		return;
	}
	if (check(c, ctx, m, &a) != 0)
		return;
	rc = queue_decide_group_set(c->q, c->now, &a, &r);
	/* Settings are churn: they spend the retry pool. */
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, WAL_RETRY, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_GROUP, rc,
		    "group limits of tube '%.*s', " GROUP_FMT ": %s",
		    (int)m->tube.len, m->tube.p, GROUP_ARG(m->group),
		    rc == SLUICE_ELIMIT
		        ? "the tube has 100000 groups with settings of their "
		          "own already; clear some first"
		        : sluice_strerror(rc));
		return;
	}
	reply_view(c, ctx, m);
}

size_t
ops_group_kvs(const struct core *c, const char *name, size_t len,
    struct msg_kv *kv, size_t n)
{
	struct queue_group_view v;
	size_t k = n;

	if (queue_group_limits(c->q, name, len, NULL, 0, c->now, &v) != 0 ||
	    (v.def.set == 0 && v.noverrides == 0))
		return 0;
#define KV(s, x) (kv[k].name = msg_cstr(s), kv[k].value = (x), k++)
	if (v.def.set & QREC_LIM_RATE) {
		KV("group_limit_rate", v.def.rate);
		KV("group_limit_rate_per_ms", v.def.per_ms);
		KV("group_limit_burst", v.def.burst);
	}
	if (v.def.set & QREC_LIM_CONCURRENCY)
		KV("group_limit_concurrency", v.def.concurrency);
	KV("group_limit_overrides", v.noverrides);
	KV("groups_paused", v.npaused);
	KV("groups_held", v.nheld);
#undef KV
	return k - n;
}
