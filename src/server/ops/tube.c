/* tube - the operations on a tube as a whole: its own settings and its
 * removal (tube_set 0x1e, tube_show 0x1f, tube_delete 0x21), and the
 * settings a stats reply carries when asked; a kick of its buried (or,
 * with none, delayed) tasks; a flush, a delete of its tasks in one state
 * older than an age, and a pause.
 *
 * A tube_set names the fields it sets and those it returns to the
 * server's defaults; decide merges them with what the tube has and logs
 * the whole result (TUBE_SET), so the reply, a replay and a follower all
 * see the same settings. The checks here come first only to say which
 * rule a request broke; decide checks the same again. A tube set or a
 * pause that makes a tube counts against the token's quotas
 * (core/quota.h). A tube set with flag 0x01 carries flow limits too
 * (limit.c): checked whole first, logged after the settings. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "queue/limits.h"
#include "server/core/core.h"
#include "server/core/quota.h"
#include "server/ops/ops_int.h"
#include "sluice.h"
#include "util/log.h"

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

/* Answers with the tube's settings as they are now, and its limits when
 * asked. */
static void
reply_conf(struct core *c, struct face_ctx *ctx, uint8_t op,
    struct msg_str tube, bool limits)
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
	rep.tube_conf.limits = limits;
	if (limits)
		ops_limit_to_msg(
		    c, tube, &rep.tube_conf.flow, &rep.tube_conf.state);
	ops_reply(c, ctx, &rep);
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
op_tube_set(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_tube_set *m)
{
	struct queue_tube_limit_req lim;
	struct queue_tube_set_req a;
	const char *why = set_broken(m);
	/* flag 0x01 without a limit to change only asks for them */
	bool lim_change = m->limits && (m->flow.set | m->lunset) != 0;
	struct qrec r;
	uint64_t lsn;
	int rc;

	if (why != NULL) {
		core_reply_err(c, ctx, MSG_OP_TUBE_SET, SLUICE_EINVAL,
		    "tube set '%.*s': %s", (int)m->tube.len, m->tube.p, why);
		return;
	}
	/* limits first: a request they refuse changes nothing */
	if (lim_change && ops_limit_check(c, ctx, m, &lim) != 0)
		return;
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
		rc = quota_admit(c, tok, &r); /* a tube it would make */
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
	if (lim_change && ops_limit_commit(c, ctx, &lim) != 0)
		return;
	reply_conf(c, ctx, MSG_OP_TUBE_SET, m->tube, m->limits);
}

static void
op_tube_delete(
    struct core *c, struct face_ctx *ctx, const struct msg_tube_delete *m)
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
ops_tube(struct core *c, struct face_ctx *ctx, const struct tokens_entry *tok,
    const struct msg_req *req)
{
	switch (req->op) {
	case MSG_OP_TUBE_SET:
		op_tube_set(c, ctx, tok, &req->tube_set);
		break;
	case MSG_OP_TUBE_SHOW:
		reply_conf(c, ctx, MSG_OP_TUBE_SHOW, req->tube_set.tube,
		    req->tube_set.limits);
		break;
	default:
		op_tube_delete(c, ctx, &req->tube_delete);
		break;
	}
}

/* Kicks up to k->n delayed tasks of the tube, the soonest due first (a
 * beanstalk kick when nothing is buried). Returns as ops_kick's loop. */
static int
kick_delayed(struct core *c, const struct msg_kick *k, uint64_t *count)
{
	struct queue_task_view v;
	struct qrec r;
	uint64_t lsn;
	int rc = 0;

	for (uint32_t i = 0; i < k->n; i++) {
		rc = queue_peek_next(
		    c->q, c->now, k->tube.p, k->tube.len, QUEUE_DELAYED, &v);
		if (rc == 0) {
			struct queue_kick_req a = { v.id, NULL, 0 };

			rc = queue_decide_kick(c->q, c->now, &a, &r);
		}
		if (rc == 0)
			rc = core_commit(c, &r, WAL_RETRY, &lsn);
		if (rc != 0)
			break;
		(*count)++;
	}
	return rc;
}

void
ops_kick(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	struct queue_kick_req a = { 0, req->kick.tube.p, req->kick.tube.len };
	struct msg_rep rep = { .op = MSG_OP_KICK };
	struct qrec r;
	uint64_t lsn;
	int rc = 0;

	for (uint32_t i = 0; i < req->kick.n; i++) {
		rc = queue_decide_kick(c->q, c->now, &a, &r);
		if (rc == 0)
			rc = core_commit(c, &r, WAL_RETRY, &lsn);
		if (rc != 0)
			break;
		rep.count++;
	}
	if (rc == SLUICE_ENOTFOUND && rep.count == 0 && req->kick.delayed)
		rc = kick_delayed(c, &req->kick, &rep.count);
	if (rc != 0 && rc != SLUICE_ENOTFOUND && rep.count == 0) {
		core_reply_err(c, ctx, MSG_OP_KICK, rc, "kick tube '%.*s': %s",
		    (int)a.tube_len, a.tube, sluice_strerror(rc));
		return;
	}
	ops_reply(c, ctx, &rep);
}

void
ops_flush(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	struct queue_flush_req a = { req->tube.p, req->tube.len };
	struct msg_rep rep = { .op = MSG_OP_FLUSH };
	struct queue_tube_stats ts;
	struct qrec r;
	uint64_t lsn;
	int rc;

	if (queue_tube_stats(c->q, c->now, a.tube, a.tube_len, &ts) == 0)
		rep.count =
		    ts.ready + ts.delayed + ts.taken + ts.buried + ts.done;
	rc = queue_decide_flush(c->q, c->now, &a, &r);
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, 0, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_FLUSH, rc,
		    "flush tube '%.*s': %s", (int)a.tube_len, a.tube,
		    sluice_strerror(rc));
		return;
	}
	ops_reply(c, ctx, &rep);
}

void
ops_delete_where(struct core *c, struct face_ctx *ctx,
    const struct msg_req *req, const char *peer)
{
	const struct msg_delete_where *m = &req->where;
	struct queue_delete_where_req a = { m->tube.p, m->tube.len, m->state,
		0 };
	struct msg_rep rep = { .op = MSG_OP_DELETE_WHERE };
	char states[64] = "";
	struct qrec r;
	uint64_t lsn;
	int rc = SLUICE_EINVAL;

	/* The wire's states and times are the queue's (MSG_ST_* are enum
	 * queue_state's numbers, MSG_AGE_* enum qrec_age_by's). */
	a.states = m->aged ? m->states : 0;
	a.by = m->aged ? m->by : 0;
	a.force = m->force;
	for (int st = MSG_ST_READY; m->aged && st <= MSG_ST_DONE; st++)
		if (m->states & MSG_STATE_BIT(st))
			snprintf(states + strlen(states),
			    sizeof(states) - strlen(states), "%s%s",
			    states[0] ? "," : "", msg_state_name((uint8_t)st));
	if (!m->aged)
		snprintf(
		    states, sizeof(states), "%s", msg_state_name(m->state));
	if (m->aged && (m->states & MSG_STATE_BIT(MSG_ST_TAKEN)) && !m->force) {
		core_reply_err(c, ctx, MSG_OP_DELETE_WHERE, SLUICE_EINVAL,
		    "delete %s tasks of tube '%.*s': taken tasks are held by "
		    "workers; force deletes them (their leases end)",
		    states, (int)m->tube.len, m->tube.p);
		return;
	}
	if (m->older <= (uint64_t)QREC_TIME_MAX) {
		a.older = (int64_t)m->older;
		rc =
		    queue_decide_delete_where(c->q, c->now, &a, &r, &rep.count);
	}
	if (m->dry) { /* the count alone: a confirmation's question */
		if (rc == 0)
			ops_reply(c, ctx, &rep);
		else
			core_reply_err(c, ctx, MSG_OP_DELETE_WHERE, rc,
			    "count %s tasks of tube '%.*s': %s", states,
			    (int)m->tube.len, m->tube.p, sluice_strerror(rc));
		return;
	}
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, 0, &lsn);
	if (peer != NULL)
		log_warn("ops",
		    "lease override request=delete_where tube=%.*s states=%s "
		    "peer=%s result=%s deleted=%" PRIu64,
		    (int)m->tube.len, m->tube.p, states, peer,
		    rc == 0 ? "ok" : sluice_strerror(rc),
		    rc == 0 ? rep.count : 0);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_DELETE_WHERE, rc,
		    "delete %s tasks of tube '%.*s' %s %" PRIu64 " ms ago: %s",
		    states, (int)m->tube.len, m->tube.p,
		    m->aged && m->by == MSG_AGE_CREATED ? "created over"
		        : m->aged                       ? "changed last over"
		                                        : "older than",
		    m->older, sluice_strerror(rc));
		return;
	}
	ops_reply(c, ctx, &rep);
}

void
ops_pause(struct core *c, struct face_ctx *ctx, const struct tokens_entry *tok,
    const struct msg_req *req)
{
	struct queue_pause_req a = { req->pause.tube.p, req->pause.tube.len, 0,
		req->pause.create };
	struct msg_rep rep = { .op = MSG_OP_PAUSE };
	struct qrec r;
	uint64_t lsn;
	int rc = SLUICE_EINVAL;

	if (req->pause.duration <= (uint64_t)QREC_TIME_MAX) {
		a.until = req->pause.duration == 0
		    ? c->now
		    : c->now + (int64_t)req->pause.duration;
		rc = queue_decide_pause(c->q, c->now, &a, &r);
	}
	if (rc == 0 && r.type != QREC_NONE &&
	    (rc = quota_admit(c, tok, &r)) != 0) { /* a tube it would make */
		core_reply_err(c, ctx, MSG_OP_PAUSE, rc,
		    "pause tube '%.*s': %s", (int)a.tube_len, a.tube,
		    c->quota.why);
		return;
	}
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, WAL_RETRY, &lsn);
	if (rc == SLUICE_ENOTFOUND) {
		core_reply_err(c, ctx, MSG_OP_PAUSE, rc,
		    "pause tube '%.*s': no such tube (a tube exists once a "
		    "task was put in it)",
		    (int)a.tube_len, a.tube);
		return;
	}
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_PAUSE, rc,
		    "pause tube '%.*s': %s", (int)a.tube_len, a.tube,
		    sluice_strerror(rc));
		return;
	}
	rep.until = req->pause.duration == 0 ? 0 : (uint64_t)a.until;
	ops_reply(c, ctx, &rep);
}
