/* ops_tube - a tube's own settings and its removal: tube_set (0x1e),
 * tube_show (0x1f) and tube_delete (0x21), and the settings a stats reply
 * carries when asked.
 *
 * A tube_set names the fields it sets and those it returns to the
 * server's defaults; decide merges them with what the tube has and logs
 * the whole result (TUBE_SET), so the reply, a replay and a follower all
 * see the same settings. The checks here come first only to say which
 * rule a request broke; decide checks the same again. */
#include <inttypes.h>
#include <string.h>

#include "server/core/core.h"
#include "sluice.h"

void
ops_tube_conf_to_msg(const struct qrec_tube_conf *q, struct msg_tube_conf *m)
{
	memset(m, 0, sizeof(*m));
	m->set = q->set;
	m->ttr = q->ttr;
	m->max_attempts = q->max_attempts;
	m->backoff_base = q->backoff_base;
	m->backoff_cap = q->backoff_cap;
	m->keep_done = (uint64_t)q->keep_done;
	m->lost_lease_immediate = q->lost_lease_immediate;
	m->dead_letter =
	    (struct msg_str) { q->dead_letter, q->dead_letter_len };
}

/* Answers with the tube's settings as they are now. */
static void
reply_conf(struct core *c, struct net_ctx *ctx, uint8_t op, struct msg_str tube)
{
	struct msg_rep rep = { .op = op };
	struct qrec_tube_conf conf;
	int rc;

	rc = queue_tube_settings(c->q, tube.p, tube.len, &conf);
	if (rc != 0) {
		core_reply_err(c, ctx, op, rc, "tube '%.*s': %s", (int)tube.len,
		    tube.p, sluice_strerror(rc));
		return;
	}
	rep.tube_conf.tube = tube;
	ops_tube_conf_to_msg(&conf, &rep.tube_conf.conf);
	buf_reset(&c->out);
	rc = msg_encode_rep(&c->out, &rep);
	if (rc != 0) {
		core_reply_err(c, ctx, op, rc > 0 ? rc : SLUICE_ENOMEM,
		    "cannot encode the reply: %s", sluice_strerror(rc));
		return;
	}
	core_reply(c, ctx);
}

/* Which rule a tube_set breaks, as a text for its error reply; NULL when
 * it breaks none of those the wire lets through. */
static const char *
set_broken(const struct msg_tube_set *m)
{
	const struct msg_tube_conf *in = &m->conf;

	if ((in->set & MSG_TS_TTR) &&
	    (in->ttr == 0 || in->ttr > QUEUE_DEFAULT_MAX_TTR_MS))
		return "ttr must be 1 ms to 7 days";
	if ((in->set & MSG_TS_BACKOFF) &&
	    (in->backoff_cap > UINT32_MAX ||
	        in->backoff_base > in->backoff_cap))
		return "the backoff's cap must be at least its base, and at "
		       "most 49 days";
	if ((in->set & MSG_TS_KEEP_DONE) && in->keep_done > QREC_TIME_MAX)
		return "keep_done is out of range";
	if ((in->set & MSG_TS_DEAD_LETTER) &&
	    in->dead_letter.len == m->tube.len &&
	    memcmp(in->dead_letter.p, m->tube.p, m->tube.len) == 0)
		return "a tube cannot be its own dead letter tube";
	return NULL;
}

static void
op_tube_set(struct core *c, struct net_ctx *ctx, const struct msg_tube_set *m)
{
	struct queue_tube_set_req a;
	const char *why = set_broken(m);
	struct qrec r;
	uint64_t lsn;
	int rc;

	if (why != NULL) {
		core_reply_err(c, ctx, MSG_OP_TUBE_SET, SLUICE_EINVAL,
		    "tube set '%.*s': %s", (int)m->tube.len, m->tube.p, why);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.tube = m->tube.p;
	a.tube_len = m->tube.len;
	a.set = m->conf.set;
	a.unset = m->unset;
	a.conf.ttr = (uint32_t)m->conf.ttr;
	a.conf.max_attempts = m->conf.max_attempts;
	a.conf.backoff_base = (uint32_t)m->conf.backoff_base;
	a.conf.backoff_cap = (uint32_t)m->conf.backoff_cap;
	a.conf.keep_done = (int64_t)m->conf.keep_done;
	a.conf.lost_lease_immediate = m->conf.lost_lease_immediate;
	a.conf.dead_letter = m->conf.dead_letter.p;
	a.conf.dead_letter_len = m->conf.dead_letter.len;
	rc = queue_decide_tube_set(c->q, c->now, &a, &r);
	c->quota.why[0] = '\0';
	if (rc == 0 && r.type != QREC_NONE)
		rc = quota_admit(c, &r); /* a tube it would make */
	/* Settings are churn, as a pause is: they spend the retry pool. */
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, WAL_RETRY, &lsn);
	if (rc != 0) {
		const char *why = sluice_strerror(rc);

		if (rc == SLUICE_ELIMIT)
			why = c->quota.why[0] != '\0' ? c->quota.why
			                              : "too many tubes";
		core_reply_err(c, ctx, MSG_OP_TUBE_SET, rc,
		    "tube set '%.*s': %s", (int)a.tube_len, a.tube, why);
		return;
	}
	reply_conf(c, ctx, MSG_OP_TUBE_SET, m->tube);
}

static void
op_tube_delete(
    struct core *c, struct net_ctx *ctx, const struct msg_tube_delete *m)
{
	struct queue_tube_delete_req a = { m->tube.p, m->tube.len, m->force };
	struct msg_rep rep = { .op = MSG_OP_TUBE_DELETE };
	struct queue_tube_stats ts;
	struct qrec r;
	uint64_t lsn;
	int rc;

	if (queue_tube_stats(c->q, c->now, a.tube, a.tube_len, &ts) == 0)
		rep.count = ts.ready + ts.delayed + ts.taken + ts.buried;
	rc = queue_decide_tube_delete(c->q, c->now, &a, &r);
	if (rc == 0)
		rc = core_commit(c, &r, 0, &lsn);
	if (rc == SLUICE_ENOTEMPTY)
		core_reply_err(c, ctx, MSG_OP_TUBE_DELETE, rc,
		    "tube delete '%.*s': the tube still has %" PRIu64
		    " task(s); delete them first, or use force",
		    (int)a.tube_len, a.tube, rep.count);
	else if (rc == SLUICE_ENOTFOUND)
		core_reply_err(c, ctx, MSG_OP_TUBE_DELETE, rc,
		    "tube delete '%.*s': no such tube", (int)a.tube_len,
		    a.tube);
	else if (rc != 0)
		core_reply_err(c, ctx, MSG_OP_TUBE_DELETE, rc,
		    "tube delete '%.*s': %s", (int)a.tube_len, a.tube,
		    sluice_strerror(rc));
	else
		ops_reply(c, ctx, &rep);
}

void
ops_tube(struct core *c, struct net_ctx *ctx, const struct msg_req *req)
{
	switch (req->op) {
	case MSG_OP_TUBE_SET:
		op_tube_set(c, ctx, &req->tube_set);
		break;
	case MSG_OP_TUBE_SHOW:
		reply_conf(c, ctx, MSG_OP_TUBE_SHOW, req->tube);
		break;
	default:
		op_tube_delete(c, ctx, &req->tube_delete);
		break;
	}
}
