/* t_model_queue_tube - test_model.c's requests on tubes
 * (t_model_queue.h): pause, settings, delete, flow limits and group
 * limits, then the server's timers and sessions (ttr expiry, a session's
 * end); each decided by the queue, checked against the model and
 * followed in it, as the requests on tasks are (t_model_queue_ops.c). */
#include "t_model_queue.h"

void
op_pause(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r);
	int64_t until = rnd(r, 3) ? r->h.now + (int64_t)rnd(r, 3000) : 0;
	struct queue_pause_req req = { tube_names[tube], 2, until,
		rnd(r, 2) == 0 };
	struct qrec rec;
	int want = m->exists[tube] || req.create ? 0 : SLUICE_ENOTFOUND;

	assert_int_equal(
	    queue_decide_pause(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	if (until > r->h.now) {
		m->pause[tube] = until;
		m->exists[tube] = true;
	} else {
		m->pause[tube] = 0;
	}
}

/* Random settings for a tube: some fields set, some back to default,
 * now and then a request that breaks a rule. */
void
op_tube_set(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r), want = 0, dl = (int)rnd(r, NTUBE);
	struct queue_tube_set_req req;
	struct mconf c = m->conf[tube];
	struct qrec rec;

	memset(&req, 0, sizeof(req));
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.set = (uint8_t)rnd(r, QREC_TS_ALL + 1);
	req.unset = (uint8_t)(rnd(r, QREC_TS_ALL + 1) & ~req.set);
	req.conf.ttr = 100 + (uint32_t)rnd(r, 2000);
	req.conf.max_attempts = (uint32_t)rnd(r, 4);
	req.conf.backoff_base = (uint32_t)rnd(r, 300);
	req.conf.backoff_cap = req.conf.backoff_base + (uint32_t)rnd(r, 3000);
	req.conf.keep_done = (int64_t)rnd(r, 100000);
	req.conf.lost_lease_immediate = rnd(r, 2) == 0;
	req.conf.dead_letter = tube_names[dl];
	req.conf.dead_letter_len = 2;
	if (rnd(r, 3) != 0)
		req.unset &= (uint8_t)rnd(r, QREC_TS_ALL + 1);
	switch (rnd(r, 30)) {
	case 0:
		req.set |= QREC_TS_TTR;
		req.conf.ttr = rnd(r, 2) ? 0 : m->cfg.max_ttr_ms + 1;
		want = SLUICE_EINVAL;
		break;
	case 1:
		req.set |= QREC_TS_BACKOFF;
		req.conf.backoff_cap = req.conf.backoff_base = 10;
		req.conf.backoff_base = 11;
		want = SLUICE_EINVAL;
		break;
	case 2:
		req.set |= QREC_TS_DEAD_LETTER;
		req.conf.dead_letter = "no such!";
		req.conf.dead_letter_len = 8;
		req.unset &= (uint8_t)~QREC_TS_DEAD_LETTER;
		want = SLUICE_ETUBE;
		break;
	case 3:
		req.unset |= req.set | QREC_TS_TTR;
		req.set |= QREC_TS_TTR;
		want = SLUICE_EINVAL;
		break;
	default:
		break;
	}
	if (want == 0 && (req.set & QREC_TS_DEAD_LETTER) && dl == tube)
		want = SLUICE_EINVAL; /* never the tube itself */
	assert_int_equal(
	    queue_decide_tube_set(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (req.set & QREC_TS_TTR)
		c.ttr = req.conf.ttr;
	if (req.set & QREC_TS_MAX_ATTEMPTS)
		c.maxa = req.conf.max_attempts;
	if (req.set & QREC_TS_BACKOFF) {
		c.base = req.conf.backoff_base;
		c.cap = req.conf.backoff_cap;
	}
	if (req.set & QREC_TS_KEEP_DONE)
		c.keep = req.conf.keep_done;
	if (req.set & QREC_TS_LOST_LEASE)
		c.immediate = req.conf.lost_lease_immediate;
	if (req.set & QREC_TS_DEAD_LETTER)
		c.dl = dl;
	if (req.unset & QREC_TS_DEAD_LETTER)
		c.dl = -1;
	c.set = (uint8_t)((c.set | req.set) & ~req.unset);
	/* A record exactly when something changed. */
	assert_int_equal(rec.type == QREC_NONE,
	    c.set == m->conf[tube].set &&
	        (c.set == 0 || memcmp(&c, &m->conf[tube], sizeof(c)) == 0));
	if (rec.type == QREC_NONE)
		return;
	commit(r, &rec);
	m->conf[tube] = c;
	m->exists[tube] = true;
}

void
m_conf_clear(struct mconf *c)
{
	memset(c, 0, sizeof(*c));
	c->dl = -1;
}

void
op_tube_delete(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r), want = 0;
	struct queue_tube_delete_req req = { tube_names[tube], 2,
		rnd(r, 2) == 0 };
	struct qrec rec;
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += m->t[i].tube == tube;
	if (!m->exists[tube])
		want = SLUICE_ENOTFOUND;
	else if (n > 0 && !req.force)
		want = SLUICE_ENOTEMPTY;
	assert_int_equal(
	    queue_decide_tube_delete(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	for (size_t i = 0; i < m->n;) {
		if (m->t[i].tube == tube)
			m_gone(m, &m->t[i], r->h.now, false);
		else
			i++;
	}
	m->exists[tube] = false;
	m->pause[tube] = 0;
	memset(&m->ctr[tube], 0, sizeof(m->ctr[tube]));
	for (size_t i = 0; i < m->nev; i++) {
		if (m->ev[i].tube == tube) {
			hseams.freed++;
			break;
		}
	}
	m_forget_events(m, tube);
	m_conf_clear(&m->conf[tube]);
	memset(&m->lim[tube], 0, sizeof(m->lim[tube]));
	memset(&m->grpl[tube], 0, sizeof(m->grpl[tube]));
}

/* Random flow limits for a tube: a rate of 1 to 40 a second with a burst
 * of 1 to 4, a cap of 1 to 4, either lifted; now and then a rule broken
 * (a rate or cap of 0, a limit both set and lifted) or a tube the queue
 * does not have: refused, nothing changed. */
void
op_tube_limit(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r), want = 0;
	struct queue_tube_limit_req req;
	struct mlim l = m->lim[tube];
	struct qrec rec;

	memset(&req, 0, sizeof(req));
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.set = (uint8_t)rnd(r, QREC_LIM_ALL + 1);
	req.unset =
	    (uint8_t)(rnd(r, 3) == 0 ? rnd(r, QREC_LIM_ALL + 1) & ~req.set : 0);
	req.lim.rate = 1 + (uint32_t)rnd(r, 40);
	req.lim.per_ms = 1000;
	req.lim.burst = 1 + (uint32_t)rnd(r, 4);
	req.lim.concurrency = 1 + (uint32_t)rnd(r, 4);
	switch (rnd(r, 20)) {
	case 0:
		req.set |= QREC_LIM_RATE;
		req.lim.rate = 0;
		want = SLUICE_EINVAL;
		break;
	case 1:
		req.set |= QREC_LIM_CONCURRENCY;
		req.lim.concurrency = 0;
		want = SLUICE_EINVAL;
		break;
	case 2:
		req.set |= QREC_LIM_RATE;
		req.unset |= QREC_LIM_RATE;
		want = SLUICE_EINVAL;
		break;
	default:
		break;
	}
	/* a limit both set and lifted is refused first, then a tube the
	 * queue does not have, then values out of range */
	if (!m->exists[tube] && (req.set & req.unset) == 0)
		want = SLUICE_ENOTFOUND;
	assert_int_equal(
	    queue_decide_tube_limit(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (req.set & QREC_LIM_RATE) {
		l.rate = req.lim.rate;
		l.burst = req.lim.burst;
	}
	if (req.unset & QREC_LIM_RATE)
		l.rate = l.burst = 0;
	if (req.set & QREC_LIM_CONCURRENCY)
		l.conc = req.lim.concurrency;
	if (req.unset & QREC_LIM_CONCURRENCY)
		l.conc = 0;
	l.set = (uint8_t)((l.set | req.set) & ~req.unset);
	/* a record exactly when the limits change; the bucket then full */
	assert_int_equal(rec.type == QREC_NONE,
	    l.set == m->lim[tube].set && l.rate == m->lim[tube].rate &&
	        l.burst == m->lim[tube].burst && l.conc == m->lim[tube].conc);
	if (rec.type == QREC_NONE)
		return;
	commit(r, &rec);
	r->tube_limits++;
	l.credit = (l.set & QREC_LIM_RATE) ? (uint64_t)l.burst * 1000 : 0;
	l.stamp = r->h.now;
	m->lim[tube] = l;
}

/* Group limits: every group's cap or one group's own (set or lifted), a
 * group's pause or resume; now and then a request that breaks a rule.
 * A record exactly when the settings change. */
void
op_group_set(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r), g = (int)rnd(r, NGRP + 1) - 1, want = 0;
	struct mgl l = m->grpl[tube];
	struct queue_group_set_req req;
	struct qrec rec;
	bool same;

	memset(&req, 0, sizeof(req));
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.group = g >= 0 ? grp_names[g] : "";
	req.group_len = g >= 0 ? 2 : 0;
	req.lim.concurrency = 1 + (uint32_t)rnd(r, 3);
	req.lim.rate = 1 + (uint32_t)rnd(r, 4);
	req.lim.per_ms = 1000;
	req.lim.burst = 1 + (uint32_t)rnd(r, 2);
	switch (rnd(r, 8)) {
	case 0:
	case 1:
		req.set = QREC_LIM_CONCURRENCY;
		break;
	case 2:
		req.unset = QREC_LIM_CONCURRENCY;
		break;
	case 3:
		req.pause = QUEUE_GROUP_PAUSE;
		break;
	case 4:
		req.pause = QUEUE_GROUP_RESUME;
		break;
	case 5:
	case 6:
		req.set = QREC_LIM_RATE;
		break;
	default:
		req.unset = QREC_LIM_RATE;
		break;
	}
	if (g < 0 && req.pause != QUEUE_GROUP_KEEP)
		want = SLUICE_EINVAL; /* every group is never paused */
	switch (rnd(r, 20)) {
	case 0:
		req.set = QREC_LIM_CONCURRENCY;
		req.lim.concurrency = 0;
		want = want != 0 ? want : SLUICE_EINVAL;
		break;
	case 1:
		req.group = "a b";
		req.group_len = 3;
		want = SLUICE_EGROUP;
		break;
	default:
		break;
	}
	/* a bad name first, then a request broken in itself, then a tube
	 * the queue does not have, then a value out of range */
	if (want != SLUICE_EGROUP && !m->exists[tube] &&
	    !(g < 0 && req.pause != QUEUE_GROUP_KEEP))
		want = SLUICE_ENOTFOUND;
	assert_int_equal(
	    queue_decide_group_set(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (g < 0) {
		if (req.set & QREC_LIM_CONCURRENCY)
			l.def = req.lim.concurrency;
		if (req.unset & QREC_LIM_CONCURRENCY)
			l.def = 0;
		if (req.set & QREC_LIM_RATE) {
			l.def_rate = req.lim.rate;
			l.def_burst = req.lim.burst;
		}
		if (req.unset & QREC_LIM_RATE)
			l.def_rate = l.def_burst = 0;
	} else {
		if (req.set & QREC_LIM_CONCURRENCY)
			l.own[g] = req.lim.concurrency;
		if (req.unset & QREC_LIM_CONCURRENCY)
			l.own[g] = 0;
		if (req.set & QREC_LIM_RATE) {
			l.own_rate[g] = req.lim.rate;
			l.own_burst[g] = req.lim.burst;
		}
		if (req.unset & QREC_LIM_RATE)
			l.own_rate[g] = l.own_burst[g] = 0;
		if (req.pause != QUEUE_GROUP_KEEP)
			l.paused[g] = req.pause == QUEUE_GROUP_PAUSE;
	}
	same = memcmp(&l, &m->grpl[tube], sizeof(l)) == 0;
	assert_int_equal(rec.type == QREC_NONE, same);
	if (same)
		return;
	commit(r, &rec);
	r->group_sets++;
	m->grpl[tube] = l;
	m_gsync(m, r->h.now); /* a rate that changed: a full bucket */
}

/* The queue's view of a tube's group limits, and of one group's, is the
 * model's. */
void
compare_groups(struct run *r, int tube)
{
	const struct model *m = r->m;
	const struct mgl *l = &m->grpl[tube];
	struct queue_group_view v;
	int g = (int)rnd(r, NGRP);
	uint32_t nover = 0, npaused = 0, taken = 0, ready = 0;
	int rc = queue_group_limits(
	    r->h.q, tube_names[tube], 2, grp_names[g], 2, r->h.now, &v);

	if (!m->exists[tube]) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
		return;
	}
	assert_int_equal(rc, 0);
	for (int k = 0; k < NGRP; k++) {
		nover += l->own[k] != 0 || l->paused[k] || l->own_rate[k] != 0;
		npaused += l->paused[k];
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct mt *t = &m->t[i];

		if (t->tube != tube || t->grp != g)
			continue;
		taken += t->state == M_TAKEN;
		ready += m_ready(t, r->h.now);
	}
	assert_int_equal(v.def.concurrency, l->def);
	assert_int_equal(v.noverrides, nover);
	assert_int_equal(v.npaused, npaused);
	assert_int_equal(v.paused, l->paused[g]);
	assert_int_equal(v.lim.concurrency, l->own[g] ? l->own[g] : l->def);
	assert_int_equal(v.taken, taken);
	assert_int_equal(v.ready, ready);
	assert_int_equal(v.holding != 0 && ready > 0,
	    m_group_held(m, tube, g, r->h.now) && ready > 0);
	if (m->gb[tube][g].live && m->gb[tube][g].rate != 0)
		assert_true(v.tokens == m_gcredit(m, tube, g, r->h.now) / 1000);
}

/* The server's ttr timer: every expired lease, earliest deadline first. */
void
op_expire(struct run *r)
{
	struct model *m = r->m;
	struct qrec rec;

	for (size_t k = 0; k <= MAXLIVE; k++) {
		struct mt *due = expired_next(r, &rec);

		if (due == NULL)
			return;
		commit(r, &rec);
		m_lost(m, due, r->h.now, true, NULL, false);
	}
	fail_msg("expiry did not end");
}

/* A session goes away (session != 0), or the node restarts (0). */
void
op_sessions(struct run *r, uint64_t session)
{
	struct model *m = r->m;
	struct qrec rec;
	char why[64];

	if (session != 0)
		snprintf(why, sizeof(why),
		    "worker disconnected (peer-%" PRIu64 ")", session);
	else
		snprintf(why, sizeof(why), "server restarted");
	for (size_t k = 0; k <= MAXLIVE; k++) {
		struct mt *t = lease_end_next(r, session, why, &rec);

		if (t == NULL)
			return;
		commit(r, &rec);
		m_lost(m, t, r->h.now, false, why, session == 0);
	}
	fail_msg("session release did not end");
}
