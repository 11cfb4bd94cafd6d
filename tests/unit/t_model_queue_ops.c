/* t_model_queue_ops - test_model.c's requests on tasks (t_model_queue.h):
 * each picks its arguments from the random stream (mostly a live task's
 * id and its lease), has the queue decide it, checks the code against
 * the model's answer, commits the record and follows it in the model. */
#include "t_model_queue.h"

/* The lease a client would send for id: mostly right, else 0 or stale. */
uint64_t
pick_lease(struct run *r, uint64_t id)
{
	struct mt *t = m_find(r->m, id);
	uint64_t lease = t ? t->lease : 0;
	uint64_t c = rnd(r, 10);

	if (c < 7 && lease != 0)
		return lease;
	if (c < 8)
		return 0;
	return lease + 1 + rnd(r, 3);
}

/* Now and then an operator's override. */
bool
pick_force(struct run *r)
{
	return rnd(r, 10) == 0;
}

int
pick_tube(struct run *r)
{
	return (int)rnd(r, NTUBE);
}

void
op_put(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	char pay[64];
	int tube = pick_tube(r), key = -1, p = (int)rnd(r, NPAY);
	int grp = tube >= 2 && rnd(r, 2) == 0 ? (int)rnd(r, NGRP) : -1;
	int want = 0, rc;
	int64_t run_at;
	struct mt *live;
	bool repl;

	queue_put_req_init(&req);
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.payload = pay;
	req.payload_len = payload(p, pay);
	req.pri = (uint32_t)rnd(r, 4) * 10;
	if (grp >= 0) {
		req.group = grp_names[grp];
		req.group_len = 2;
	}
	if (rnd(r, 3) == 0)
		req.delay_ms = (int64_t)rnd(r, 3000);
	if (rnd(r, 20) == 0)
		req.run_at = now + (int64_t)rnd(r, 4000) - 2000;
	req.ttr_ms = rnd(r, 4) ? 100 + (uint32_t)rnd(r, 2000) : 0;
	req.max_attempts = (uint32_t)rnd(r, 4);
	if (rnd(r, 12) == 0)
		req.period_ms = 500 + (int64_t)rnd(r, 2000);
	if (rnd(r, 2) == 0) {
		key = tube * NKEY + (int)rnd(r, NKEY);
		req.key = key_names[key % NKEY];
		req.key_len = 2;
		req.replace = rnd(r, 3) == 0;
		/* a few versions, so that stale ones come often */
		if (req.replace && rnd(r, 2) == 0)
			req.if_newer = 1 + rnd(r, 6);
		/* a deduplication mode, which sets the time itself */
		if (!req.replace && rnd(r, 4) == 0) {
			if (rnd(r, 2) == 0)
				req.debounce_ms = 1 + (int64_t)rnd(r, 3000);
			else
				req.throttle_ms = 1 + (int64_t)rnd(r, 3000);
			req.delay_ms = 0;
			req.run_at = 0;
		}
	}
	/* Now and then a request that breaks a rule. */
	switch (rnd(r, 60)) {
	case 0:
		req.tube = "bad tube";
		req.tube_len = 8;
		want = SLUICE_ETUBE;
		break;
	case 1:
		req.payload_len = m->cfg.max_payload + 1;
		want = SLUICE_ETOOBIG;
		break;
	case 2:
		req.ttr_ms = m->cfg.max_ttr_ms + 1;
		want = SLUICE_EINVAL;
		break;
	case 3:
		req.delay_ms = -1;
		req.run_at = 0;
		want = SLUICE_EINVAL;
		break;
	case 4:
		req.replace = true;
		req.key_len = 0;
		key = -1;
		want = SLUICE_EINVAL;
		break;
	case 5:
		req.replace = false;
		req.if_newer = 1 + rnd(r, 6);
		want = SLUICE_EINVAL;
		break;
	case 6: /* a mode without a key */
		req.key_len = 0;
		req.replace = false;
		req.if_newer = 0;
		req.debounce_ms = 1 + (int64_t)rnd(r, 100);
		key = -1;
		want = SLUICE_EINVAL;
		break;
	case 8: /* a bad group name */
		req.group = "a b";
		req.group_len = 3;
		req.replace = false;
		req.if_newer = 0;
		req.debounce_ms = req.throttle_ms = 0;
		want = SLUICE_EGROUP;
		break;
	case 7: /* both modes, or a window out of range */
		if (key >= 0) {
			req.debounce_ms = 1 + (int64_t)rnd(r, 100);
			req.throttle_ms = rnd(r, 2) ? 5 : 0;
			if (req.throttle_ms == 0)
				req.debounce_ms = QREC_WINDOW_MAX_MS + 1;
			want = SLUICE_EINVAL;
		}
		break;
	default:
		break;
	}
	rc = queue_decide_put(r->h.q, now, &req, &rec, &res);
	if (want != 0) {
		assert_int_equal(rc, want);
		return;
	}
	repl = req.replace;
	run_at = req.run_at ? req.run_at : now + req.delay_ms;
	if (run_at < now)
		run_at = now;
	if (req.debounce_ms != 0) {
		run_at = now + req.debounce_ms;
		repl = true; /* a replace due then */
	}
	live = key >= 0 ? m_by_key(m, key) : NULL;
	if (req.throttle_ms != 0) {
		assert_int_equal(rc, 0);
		if (m->thr_until[key] > now || live != NULL) {
			bool thr = m->thr_until[key] > now;

			assert_int_equal(rec.type, QREC_NONE);
			assert_true(!res.created && !res.replaced);
			assert_int_equal(res.throttled, thr);
			assert_true(
			    res.id == (thr ? m->thr_id[key] : live->id));
			return;
		}
		assert_int_equal(rec.type, QREC_PUT_T);
		assert_true(rec.u.put.throttle_until == now + req.throttle_ms);
		m->thr_id[key] = m->next_id;
		m->thr_until[key] = now + req.throttle_ms;
		repl = true; /* a new task, whatever the dedup window */
	}
	if (live != NULL && repl) {
		assert_int_equal(live->tube, tube);
		assert_int_equal(rc, 0);
		if (req.if_newer != 0 &&
		    (live->repl ? live->r_ver : live->ver) >= req.if_newer) {
			assert_int_equal(rec.type, QREC_NONE);
			assert_true(res.stale && !res.replaced && !res.created);
			assert_true(res.id == live->id);
			return;
		}
		assert_int_equal(
		    rec.type, req.if_newer ? QREC_REPLACE_V : QREC_REPLACE);
		assert_true(res.replaced && !res.created && res.id == live->id);
		assert_false(res.stale);
		commit(r, &rec);
		m->ctr[tube].replace++;
		live->r_pay = p;
		live->r_pri = req.pri;
		live->r_ttr = m_ttr(m, tube, req.ttr_ms);
		live->r_maxa = m_maxa(m, tube, req.max_attempts);
		live->r_run_at = run_at;
		live->r_period = req.period_ms;
		live->r_ver = req.if_newer;
		if (live->state == M_TAKEN) {
			live->repl = true;
		} else {
			live->repl = true;
			m_apply_repl(live, run_at);
			live->run_at = run_at;
		}
		return;
	}
	/* a versioned replace after the key's task finished, within the
	 * window: compared with the finished task's version */
	if (live == NULL && key >= 0 && req.if_newer != 0 &&
	    m->dedup_id[key] != 0 &&
	    (m->dedup_exp[key] > now || m_done_of_key(m, key) != NULL) &&
	    m->dedup_ver[key] >= req.if_newer) {
		assert_int_equal(rc, 0);
		assert_int_equal(rec.type, QREC_NONE);
		assert_true(res.stale && !res.replaced && !res.created);
		assert_true(res.id == m->dedup_id[key]);
		return;
	}
	if (live != NULL ||
	    (key >= 0 && !repl && m->dedup_id[key] != 0 &&
	        m->dedup_exp[key] > now)) {
		assert_int_equal(rc, 0);
		assert_int_equal(rec.type, QREC_NONE);
		assert_false(res.created);
		assert_true(res.id == (live ? live->id : m->dedup_id[key]));
		return;
	}
	assert_int_equal(rc, 0);
	assert_true(res.created && res.id == m->next_id && !res.stale);
	assert_false(res.throttled);
	assert_int_equal(rec.type,
	    req.throttle_ms    ? QREC_PUT_T
	        : grp >= 0     ? QREC_PUT_G
	        : req.if_newer ? QREC_PUT_V
	                       : QREC_PUT);
	commit(r, &rec);
	assert_true(m->n < MAXLIVE);
	{
		struct mt *t = &m->t[m->n++];

		memset(t, 0, sizeof(*t));
		t->id = m->next_id++;
		t->tube = tube;
		t->state = M_QUEUED;
		t->pri = req.pri;
		t->ttr = m_ttr(m, tube, req.ttr_ms);
		t->maxa = m_maxa(m, tube, req.max_attempts);
		t->run_at = run_at;
		t->period = req.period_ms;
		t->key = key;
		t->ver = req.if_newer;
		t->has_err = false;
		t->res = -1;
		t->dkey = -1;
		t->created = now;
		t->pay = p;
		t->grp = grp;
		if (key >= 0)
			m->dedup_id[key] = 0;
	}
	m->exists[tube] = true;
	m->ctr[tube].put++;
}

void
op_take(struct run *r)
{
	struct model *m = r->m;
	struct queue_str ts[NTUBE + 1];
	struct queue_take_req req;
	struct qrec rec;
	unsigned mask = 0;
	size_t n = 0;
	int want, rc;
	struct mt *best;
	struct tops tops;

	for (int i = 0; i < NTUBE; i++) {
		if (rnd(r, 2) == 0)
			continue;
		ts[n].p = tube_names[i];
		ts[n].len = 2;
		n++;
		mask |= 1u << i;
	}
	if (n == 0) {
		ts[n].p = tube_names[0];
		ts[n].len = 2;
		n++;
		mask = 1;
	}
	req.tubes = ts;
	req.ntubes = n;
	req.session = 1 + rnd(r, NSESSION);
	req.detached = rnd(r, 8) == 0;
	req.strict = rnd(r, 4) == 0;
	if (rnd(r, 80) == 0) {
		ts[n].p = "no/good!";
		ts[n].len = 8;
		req.ntubes = n + 1;
		assert_int_equal(
		    queue_decide_take(r->h.q, r->h.now, &req, &rec),
		    SLUICE_ETUBE);
		return;
	}
	want = m_tops(m, mask, r->h.now, req.strict, &tops);
	for (int i = 0; i < NTUBE; i++)
		r->held += (mask & (1u << i)) && m->lim[i].set != 0 &&
		    m_tube_held(m, i, r->h.now);
	for (size_t i = 0; i < m->n; i++) /* a group held with work */
		if ((mask & (1u << m->t[i].tube)) && m->t[i].grp >= 0 &&
		    m_ready(&m->t[i], r->h.now) &&
		    m_group_held(m, m->t[i].tube, m->t[i].grp, r->h.now)) {
			r->gheld++;
			break;
		}
	for (size_t i = 0; i < m->n; i++) /* ... by its rate */
		if ((mask & (1u << m->t[i].tube)) && m->t[i].grp >= 0 &&
		    m_ready(&m->t[i], r->h.now) &&
		    m_gcredit(m, m->t[i].tube, m->t[i].grp, r->h.now) < 1000) {
			r->grate++;
			break;
		}
	rc = queue_decide_take(r->h.q, r->h.now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	best = m_find(m, rec.u.take.id);
	if (!m_pick_ok(&tops, best))
		fail_msg("take got %" PRIu64 ", which the model would not give",
		    rec.u.take.id);
	commit(r, &rec);
	if (best->grp >= 0 && m->gb[best->tube][best->grp].rate != 0) {
		struct mgb *b = &m->gb[best->tube][best->grp];
		uint64_t c = m_gcredit(m, best->tube, best->grp, r->h.now);

		b->credit = c >= 1000 ? c - 1000 : 0; /* its token */
		b->stamp = r->h.now;
	}
	if (m->lim[best->tube].set & QREC_LIM_RATE) { /* a token spent */
		struct mlim *l = &m->lim[best->tube];

		l->credit = m_credit(m, best->tube, r->h.now) - 1000;
		l->stamp = r->h.now;
	}
	best->state = M_TAKEN;
	best->lease = r->h.lsn;
	best->session = req.session;
	best->detached = req.detached;
	best->deadline = r->h.now + best->ttr;
	best->taken_at = r->h.now;
	best->attempts++;
	m->ctr[best->tube].take++;
	m_event(m, best->tube, r->h.now, EV_WAIT, r->h.now - best->run_at);
}

/* How long the tube keeps finished tasks: its own, else the server's. */
int64_t
m_keep(const struct model *m, int tube)
{
	const struct mconf *c = &m->conf[tube];

	return (c->set & QREC_TS_KEEP_DONE) ? c->keep : m->cfg.keep_done_ms;
}

/* Acked in a tube that keeps finished tasks. */
void
m_done(struct model *m, struct mt *t, int64_t now, int res)
{
	t->state = M_DONE;
	t->finished = now;
	t->kept_until = now + m_keep(m, t->tube);
	t->res = res;
	t->repl = false;
	m_unlease(t);
	t->dkey = t->key;
	if (t->key >= 0) {
		m->dedup_id[t->key] = t->id;
		m->dedup_exp[t->key] = now + m->cfg.dedup_ms;
		m->dedup_ver[t->key] = t->ver;
		t->key = -1;
	}
	while (m_count_done(m) > m->cfg.max_done) {
		struct mt *x = m_first_done(m);

		x->dkey = -1;
		m_gone(m, x, now, true);
	}
}

void
op_ack(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_ack_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int to = -1, res = -1, want, rc;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.force = pick_force(r);
	if (rnd(r, 5) == 0) {
		to = pick_tube(r);
		req.to_tube = tube_names[to];
		req.to_tube_len = 2;
	}
	if (rnd(r, 2) == 0) {
		res = (int)rnd(r, NERR);
		req.result = results[res];
		req.result_len = strlen(results[res]);
		if (req.result_len == 0)
			res = -1;
	}
	want = m_leased(m, req.id, req.lease, req.force, &t);
	rc = queue_decide_ack(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	m->ctr[t->tube].ack++;
	m_event(m, t->tube, now, EV_WORK, now - t->taken_at);
	if (t->repl) {
		m_apply_repl(t, now);
	} else if (to >= 0) {
		m_move_key(m, t, to, now);
		t->tube = to;
		t->state = M_QUEUED;
		t->run_at = now;
		t->attempts = 0;
		t->has_err = false;
		m_unlease(t);
		m->exists[to] = true;
	} else if (t->period > 0) {
		int64_t k =
		    t->run_at < now ? (now - t->run_at) / t->period + 1 : 1;

		t->run_at += k * t->period;
		t->state = M_QUEUED;
		t->attempts = 0;
		t->has_err = false;
		m_unlease(t);
	} else if (m_keep(m, t->tube) > 0) {
		m_done(m, t, now, res);
	} else {
		m_gone(m, t, now, true);
	}
}

void
op_release(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_release_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want, rc;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.force = pick_force(r);
	if (rnd(r, 2) == 0)
		req.delay_ms = (int64_t)rnd(r, 2000);
	if (rnd(r, 3) == 0) {
		req.set_pri = true;
		req.pri = (uint32_t)rnd(r, 40);
	}
	/* front: back where it waited before the take; with a delay the
	 * request is refused whatever the task */
	req.front = rnd(r, 4) == 0;
	want = req.front && req.delay_ms != 0
	    ? SLUICE_EINVAL
	    : m_leased(m, req.id, req.lease, req.force, &t);
	rc = queue_decide_release(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	m->ctr[t->tube].release++;
	if (t->repl) {
		m_apply_repl(t, now);
		return;
	}
	t->state = M_QUEUED;
	if (!req.front) /* front keeps the run_at it was ready from */
		t->run_at = now + req.delay_ms;
	if (req.set_pri)
		t->pri = req.pri;
	m_unlease(t);
}

void
op_fail(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_fail_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int e = (int)rnd(r, NERR), want, rc;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.force = pick_force(r);
	req.error = err_texts[e];
	req.error_len = strlen(err_texts[e]);
	req.fatal = rnd(r, 8) == 0;
	if (rnd(r, 4) == 0) {
		req.set_delay = true;
		req.delay_ms = (int64_t)rnd(r, 1500);
	}
	want = m_leased(m, req.id, req.lease, req.force, &t);
	rc = queue_decide_fail(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	m->ctr[t->tube].fail++;
	m_event(m, t->tube, now, EV_FAIL, 0);
	if (t->repl) {
		m_apply_repl(t, now);
		return;
	}
	m_set_err(t, err_texts[e]);
	if (req.fatal || (t->maxa > 0 && t->attempts >= t->maxa)) {
		m_bury_taken(m, t, now);
		return;
	}
	t->state = M_QUEUED;
	t->run_at = now +
	    (req.set_delay ? req.delay_ms : m_backoff(m, t->tube, t->attempts));
	m_unlease(t);
}

void
op_touch(struct run *r)
{
	struct queue_touch_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want, rc;

	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.force = pick_force(r);
	want = m_leased(r->m, req.id, req.lease, req.force, &t);
	rc = queue_decide_touch(r->h.q, r->h.now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	t->deadline = r->h.now + t->ttr;
}

void
op_bury(struct run *r)
{
	struct model *m = r->m;
	struct queue_bury_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want, rc, e = -1;

	memset(&req, 0, sizeof(req));
	req.id = rnd(r, 2) ? pick_taken(r) : pick_id(r);
	req.lease = rnd(r, 3) ? pick_lease(r, req.id) : 0;
	req.force = rnd(r, 3) == 0;
	if (rnd(r, 2) == 0) {
		e = (int)rnd(r, NERR);
		req.error = err_texts[e];
		req.error_len = strlen(err_texts[e]);
	}
	t = m_find(m, req.id);
	if (t != NULL && t->state == M_QUEUED)
		want = req.force ? 0 : SLUICE_ESTATE;
	else
		want = m_leased(m, req.id, req.lease, req.force, &t);
	rc = queue_decide_bury(r->h.q, r->h.now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	if (t->repl) {
		m_apply_repl(t, r->h.now);
		return;
	}
	if (e >= 0)
		m_set_err(t, err_texts[e]);
	if (t->state == M_TAKEN)
		m_bury_taken(m, t, r->h.now);
	else /* an operator parks a waiting task in place */
		m_bury(m, t, r->h.now);
}

/* A take whose reply was not delivered is undone: the task waits where
 * it did, one attempt fewer. */
void
op_untake(struct run *r)
{
	struct model *m = r->m;
	uint64_t id = pick_taken(r), lease = pick_lease(r, id);
	struct qrec rec;
	struct mt *t = NULL;
	int want, rc;

	want = m_leased(m, id, lease, false, &t);
	rc = queue_decide_untake(r->h.q, r->h.now, id, lease, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	if (t->repl) {
		m_apply_repl(t, r->h.now);
		return;
	}
	/* The take's wait stays counted (EV_WAIT of op_take), as the
	 * tube's take counter keeps the take. */
	t->state = M_QUEUED;
	if (t->attempts > 0)
		t->attempts--;
	m_unlease(t);
}

void
op_kick(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_kick_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want = 0, rc;

	memset(&req, 0, sizeof(req));
	if (rnd(r, 2) == 0) {
		req.id = pick_id(r);
		t = m_find(m, req.id);
		if (t == NULL)
			want = SLUICE_ENOTFOUND;
		else if (t->state != M_BURIED &&
		    !(t->state == M_QUEUED && t->run_at > now))
			want = SLUICE_ESTATE;
	} else {
		int tube = pick_tube(r);

		req.tube = tube_names[tube];
		req.tube_len = 2;
		for (size_t i = 0; i < m->n; i++) {
			struct mt *x = &m->t[i];

			if (x->tube != tube || x->state != M_BURIED)
				continue;
			if (t == NULL || x->buried_at < t->buried_at ||
			    (x->buried_at == t->buried_at && x->id < t->id))
				t = x;
		}
		if (t == NULL)
			want = SLUICE_ENOTFOUND;
	}
	rc = queue_decide_kick(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	assert_true(rec.u.kick.id == t->id);
	commit(r, &rec);
	t->state = M_QUEUED;
	t->run_at = now;
	m->ctr[t->tube].kick++;
}

/* An update: of a waiting task anything, of a buried one all but its
 * run time, of a taken one only its priority. */
void
op_update(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_update_req req;
	struct qrec rec;
	struct mt *t;
	char pay[64];
	int p = (int)rnd(r, NPAY), want = 0, rc;
	int64_t run_at = 0;

	memset(&req, 0, sizeof(req));
	req.id = pick_id(r);
	t = m_find(m, req.id);
	req.set_pri = rnd(r, 2) == 0;
	req.pri = (uint32_t)rnd(r, 4) * 10;
	req.set_run_at = rnd(r, 3) == 0;
	req.delay_ms = (int64_t)rnd(r, 3000);
	req.set_ttr = rnd(r, 4) == 0;
	req.ttr_ms = 100 + (uint32_t)rnd(r, 2000);
	req.set_max_attempts = rnd(r, 4) == 0;
	req.max_attempts = (uint32_t)rnd(r, 4);
	req.set_payload = rnd(r, 4) == 0;
	req.payload = pay;
	req.payload_len = payload(p, pay);
	if (req.set_run_at)
		run_at = now + req.delay_ms;
	if (!req.set_pri && !req.set_run_at && !req.set_ttr &&
	    !req.set_max_attempts && !req.set_payload)
		want = SLUICE_EINVAL;
	else if (t == NULL)
		want = SLUICE_ENOTFOUND;
	else if (t->state == M_TAKEN &&
	    (req.set_run_at || req.set_ttr || req.set_max_attempts ||
	        req.set_payload))
		want = SLUICE_ESTATE;
	else if ((t->state == M_BURIED && req.set_run_at) || t->state == M_DONE)
		want = SLUICE_ESTATE;
	rc = queue_decide_update(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	if (req.set_pri) {
		t->pri = req.pri;
		t->r_pri = req.pri; /* a pending replacement's too */
	}
	if (req.set_run_at)
		t->run_at = run_at;
	if (req.set_ttr)
		t->ttr = req.ttr_ms;
	if (req.set_max_attempts)
		t->maxa = req.max_attempts;
	if (req.set_payload)
		t->pay = p;
	if (t->state == M_BURIED)
		t->buried_at = now; /* the back of the kick order */
}

void
op_delete(struct run *r)
{
	struct model *m = r->m;
	struct queue_delete_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int key = -1, rc;

	memset(&req, 0, sizeof(req));
	if (rnd(r, 4) == 0) {
		int tube = pick_tube(r);

		key = tube * NKEY + (int)rnd(r, NKEY);
		req.key = key_names[key % NKEY];
		req.key_len = 2;
		req.tube = tube_names[tube];
		req.tube_len = 2;
		t = m_by_key(m, key);
		if (t == NULL)
			t = m_done_by_key(m, key, r->h.now);
	} else {
		req.id = pick_id(r);
		t = m_find(m, req.id);
	}
	rc = queue_decide_delete(r->h.q, r->h.now, &req, &rec);
	assert_int_equal(rc, t ? 0 : SLUICE_ENOTFOUND);
	if (rc != 0)
		return;
	commit(r, &rec);
	m->ctr[t->tube].del++;
	m_gone(m, t, r->h.now, false);
}

void
op_flush(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r);
	struct queue_flush_req req = { tube_names[tube], 2 };
	struct qrec rec;

	assert_int_equal(queue_decide_flush(r->h.q, r->h.now, &req, &rec), 0);
	commit(r, &rec);
	for (size_t i = 0; i < m->n;) {
		if (m->t[i].tube == tube) {
			m->ctr[tube].del++;
			m_gone(m, &m->t[i], r->h.now, false);
		} else {
			i++;
		}
	}
}

/* The age a delete by state and age measures. */
int64_t
m_age_time(const struct mt *t)
{
	return t->state == M_DONE ? t->finished : t->created;
}

int
m_state(const struct mt *t, int64_t now)
{
	switch (t->state) {
	case M_TAKEN:
		return QUEUE_TAKEN;
	case M_BURIED:
		return QUEUE_BURIED;
	case M_DONE:
		return QUEUE_DONE;
	default:
		return t->run_at <= now ? QUEUE_READY : QUEUE_DELAYED;
	}
}

/* Whether a DELETE_AGED of `states`, `by`, cut at `before` takes t. The
 * model keeps no updated_at: that one time comes from the queue (the rest
 * of the model checks every change that moves it). */
bool
m_aged(struct run *r, const struct mt *t, int tube, uint8_t states, uint8_t by,
    int64_t before)
{
	struct queue_task_view v;
	int64_t at = t->created;

	if (t->tube != tube || !(states & QREC_STATE_BIT(m_state(t, r->h.now))))
		return false;
	if (by == QREC_BY_UPDATED) {
		assert_int_equal(queue_peek(r->h.q, r->h.now, t->id, &v), 0);
		at = v.updated_at;
	}
	return at <= before;
}

/* delete by states and the last change or the creation (DELETE_AGED):
 * taken tasks only with force; the tasks counted are those removed. */
void
op_delete_aged(struct run *r, int tube, struct queue_delete_where_req *req)
{
	struct model *m = r->m;
	int64_t now = r->h.now, before = now - req->older;
	uint64_t count = 0, want = 0;
	struct qrec rec;
	bool *take = calloc(MAXLIVE, sizeof(*take));
	int rc;

	assert_non_null(take);
	req->state = 0;
	req->states = (uint8_t)(QREC_STATE_BIT(1 + rnd(r, 5)) |
	    (rnd(r, 2) ? QREC_STATE_BIT(1 + rnd(r, 5)) : 0));
	req->by = rnd(r, 2) ? QREC_BY_UPDATED : QREC_BY_CREATED;
	req->force = rnd(r, 2) == 0;
	for (size_t i = 0; i < m->n; i++)
		if ((take[i] = m_aged(
		         r, &m->t[i], tube, req->states, req->by, before)))
			want++;
	rc = queue_decide_delete_where(r->h.q, now, req, &rec, &count);
	if ((req->states & QREC_STATE_BIT(QUEUE_TAKEN)) && !req->force) {
		assert_int_equal(rc, SLUICE_EINVAL);
		free(take);
		return;
	}
	assert_int_equal(rc, 0);
	assert_true(count == want);
	assert_true((rec.type == QREC_NONE) == (want == 0));
	commit(r, &rec);
	for (size_t i = m->n; i-- > 0;) {
		if (!take[i])
			continue;
		m->ctr[tube].del++;
		m_gone(m, &m->t[i], now, false);
	}
	free(take);
}

void
op_delete_where(struct run *r)
{
	static const int states[] = { QUEUE_READY, QUEUE_DELAYED, QUEUE_BURIED,
		QUEUE_DONE };
	struct model *m = r->m;
	int64_t now = r->h.now;
	int tube = pick_tube(r);
	struct queue_delete_where_req req = { tube_names[tube], 2,
		states[rnd(r, 4)], (int64_t)rnd(r, 6000) };
	uint64_t count = 0, want = 0;
	struct qrec rec;

	if (rnd(r, 2) == 0) {
		op_delete_aged(r, tube, &req);
		return;
	}
	for (size_t i = 0; i < m->n; i++)
		want += m->t[i].tube == tube &&
		    m_state(&m->t[i], now) == req.state &&
		    m_age_time(&m->t[i]) <= now - req.older;
	assert_int_equal(
	    queue_decide_delete_where(r->h.q, now, &req, &rec, &count), 0);
	assert_true(count == want);
	assert_true((rec.type == QREC_NONE) == (want == 0));
	commit(r, &rec);
	for (size_t i = 0; i < m->n;) {
		struct mt *t = &m->t[i];

		if (t->tube == tube && m_state(t, now) == req.state &&
		    m_age_time(t) <= now - req.older) {
			m->ctr[tube].del++;
			m_gone(m, t, now, false);
		} else {
			i++;
		}
	}
}
