/* limit - a tube's flow limits as the operations carry them: the limits
 * part of a tube_set (flag 0x01), the limits and their state in the
 * replies of tube_set and tube_show, and the key/values stats shows for a
 * limited tube (docs/protocol.md, "Flow limits").
 *
 * A tube_set with limits is checked whole before anything is written:
 * the limits it would leave (merged with the tube's) must be valid and
 * the tube must exist, else nothing changes, not even its settings. Then
 * the settings' record, then the limits' (TUBE_LIMIT). A rate given
 * without a burst (0) gets queue_limits_default_burst(): 100 ms of
 * tokens. */
#include <inttypes.h>
#include <string.h>

#include "queue/limits.h"
#include "server/core/core.h"
#include "server/core/waiters.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

void
ops_limits_asked(const struct msg_flow *f, struct qrec_limits *lim)
{
	lim->rate = f->rate;
	lim->per_ms = f->per_ms;
	lim->burst = f->burst;
	lim->concurrency = f->concurrency;
	if ((f->set & MSG_LIM_RATE) && f->burst == 0)
		lim->burst = queue_limits_default_burst(f->rate, f->per_ms);
}

int
ops_limit_check(struct core *c, struct face_ctx *ctx,
    const struct msg_tube_set *m, struct queue_tube_limit_req *out)
{
	const struct msg_flow *f = &m->flow;
	struct queue_flow_view v;
	struct qrec_limits l;
	const char *why;
	int rc;

	memset(out, 0, sizeof(*out));
	out->tube = m->tube.p;
	out->tube_len = m->tube.len;
	out->set = f->set;
	out->unset = m->lunset;
	ops_limits_asked(f, &out->lim);
	rc = queue_tube_flow(c->q, m->tube.p, m->tube.len, c->now, &v);
	if (rc == SLUICE_ENOTFOUND) {
		core_reply_err(c, ctx, MSG_OP_TUBE_SET, rc,
		    "tube set '%.*s': no such tube: limits are set on a tube "
		    "that exists (put a task to it, or set its settings "
		    "first); nothing was changed",
		    (int)m->tube.len, m->tube.p);
		return rc;
	}
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_TUBE_SET, rc,
		    "tube set '%.*s': %s", (int)m->tube.len, m->tube.p,
		    sluice_strerror(rc));
		return rc;
	}
	/* the limits it would leave */
	l = v.lim;
	queue_limits_change(&l, &out->lim, out->set, out->unset);
	if ((why = queue_limits_broken(&l)) != NULL) {
		core_reply_err(c, ctx, MSG_OP_TUBE_SET, SLUICE_EINVAL,
		    "tube set '%.*s': %s; nothing was changed",
		    (int)m->tube.len, m->tube.p, why);
		return SLUICE_EINVAL;
	}
	return 0;
}

int
ops_limit_commit(
    struct core *c, struct face_ctx *ctx, const struct queue_tube_limit_req *a)
{
	struct qrec r;
	uint64_t lsn;
	int rc;

	rc = queue_decide_tube_limit(c->q, c->now, a, &r);
	/* Limits are churn, as settings are: they spend the retry pool. */
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, WAL_RETRY, &lsn);
	if (rc != 0)
		core_reply_err(c, ctx, MSG_OP_TUBE_SET, rc,
		    "tube set '%.*s': limits: %s", (int)a->tube_len, a->tube,
		    sluice_strerror(rc));
	return rc;
}

void
ops_limit_to_msg(struct core *c, struct msg_str tube, struct msg_flow *f,
    struct msg_flow_state *s)
{
	struct queue_flow_view v;

	memset(f, 0, sizeof(*f));
	memset(s, 0, sizeof(*s));
	if (queue_tube_flow(c->q, tube.p, tube.len, c->now, &v) != 0)
		return;
	f->set = v.lim.set;
	f->rate = v.lim.rate;
	f->per_ms = v.lim.per_ms;
	f->burst = v.lim.burst;
	f->concurrency = v.lim.concurrency;
	s->tokens = v.tokens;
	s->taken = v.taken;
	s->held = v.held_tasks;
}

size_t
ops_limit_kvs(
    struct core *c, const char *name, size_t len, struct msg_kv *kv, size_t n)
{
	struct queue_flow_view v;
	size_t k = n;

	if (queue_tube_flow(c->q, name, len, c->now, &v) != 0 || v.lim.set == 0)
		return 0;
#define KV(s, x) (kv[k].name = msg_cstr(s), kv[k].value = (x), k++)
	if (v.lim.set & QREC_LIM_RATE) {
		KV("limit_rate", v.lim.rate);
		KV("limit_rate_per_ms", v.lim.per_ms);
		KV("limit_burst", v.lim.burst);
		KV("limit_tokens", v.tokens);
	}
	if (v.lim.set & QREC_LIM_CONCURRENCY) {
		KV("limit_concurrency", v.lim.concurrency);
		KV("limit_slots_used", v.taken);
	}
	KV("limit_held_rate", v.holding == QUEUE_FLOW_RATE ? v.held_tasks : 0);
	KV("limit_held_concurrency",
	    v.holding == QUEUE_FLOW_CONCURRENCY ? v.held_tasks : 0);
	KV("limit_waiting_takes",
	    v.holding != QUEUE_FLOW_OPEN
	        ? waiters_count_on(&c->waits, name, len)
	        : 0);
	KV("limit_rate_holds", v.held_rate);
	KV("limit_concurrency_holds", v.held_conc);
#undef KV
	return k - n;
}

bool
ops_limit_has(const struct core *c, const char *name, size_t len)
{
	struct queue_flow_view v;

	return queue_tube_flow(c->q, name, len, c->now, &v) == 0 &&
	    v.lim.set != 0;
}
