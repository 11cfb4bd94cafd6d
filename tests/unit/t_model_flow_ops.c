/* t_model_flow_ops - test_model_flow.c's requests on tasks
 * (t_model_flow.h): each picks its arguments from the random stream, has
 * the queue decide it, checks the code against the model's answer,
 * commits the record and follows it in the model; the queue's final
 * callback is noted for the comparison. */
#include "t_model_flow.h"

/* ---- Both sides -------------------------------------------------------- */

/* The queue's final callback (queue_on_final): what a waiter is told. */
void
on_final(void *arg, uint64_t id)
{
	struct model *m = arg;

	assert_true(m->nfinal_got < 4 * MAXLIVE);
	m->final_got[m->nfinal_got++] = id;
}

void
commit(struct run *r, const struct qrec *rec)
{
	assert_int_equal(tq_commit(&r->h, rec), 0);
}

/* The lease a worker sends: mostly the right one. */
uint64_t
pick_lease(struct run *r, uint64_t id)
{
	struct mt *t = m_find(r->m, id);

	if (t != NULL && t->lease != 0 && rnd(r, 8) != 0)
		return t->lease;
	return 1 + rnd(r, r->h.lsn + 1);
}

/* A cancelled task's lease ended: the record is a DELETE. */
void
m_cancelled_end(struct run *r, struct mt *t, const struct qrec *rec)
{
	assert_int_equal(rec->type, QREC_DELETE);
	assert_true(rec->u.del.id == t->id);
	commit(r, rec);
	r->m->ctr[t->tube].del++;
	r->m->why = QUEUE_END_DELETED; /* cancelled itself: it is marked */
	m_remove(r->m, t, false, -1, r->h.now);
}

void
op_put(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	uint64_t after[MAXP], ids[MAXP];
	char kbuf[QUEUE_SCHED_KEY_MAX];
	struct queue_str key;
	size_t np = 0;
	int tube = (int)rnd(r, 2), bi = -1, want = 0, rc;
	struct mt *t;

	queue_put_req_init(&req);
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.payload = "p";
	req.payload_len = 1;
	req.pri = (uint32_t)rnd(r, 2) * 10;
	req.ttr_ms = rnd(r, 2) ? 1000 : 1500;
	req.max_attempts = (uint32_t)rnd(r, 3);
	if (rnd(r, 4) == 0)
		req.delay_ms = (int64_t)rnd(r, 2000);
	if (rnd(r, 5) < 3 && m->next_id > 1) {
		np = 1 + rnd(r, MAXP - 1);
		for (size_t i = 0; i < np; i++) {
			uint64_t lo = m->next_id > 16 ? m->next_id - 16 : 1;

			after[i] = lo + rnd(r, m->next_id - lo);
		}
		qsort(after, np, sizeof(*after), sorted_u64);
		for (size_t i = 1; i < np; i++)
			if (after[i] == after[i - 1])
				want = SLUICE_EINVAL; /* a parent named twice */
		if (want == 0 && rnd(r, 40) == 0) {
			after[np - 1] = m->next_id + rnd(r, 3);
			want = SLUICE_ENOTFOUND;
		}
		memcpy(ids, after, np * sizeof(*ids));
		req.after = ids;
		req.nafter = np;
		req.on_parent_failure = (uint8_t)rnd(r, 3);
		/* now and then one more by key: a schedule's task in the
		 * put's tube (else ENOTFOUND), maybe one named by id too */
		if (rnd(r, 4) == 0 && m->nfired > 0) {
			size_t f = m->nfired - 1 -
			    rnd(r, m->nfired < 8 ? m->nfired : 8);
			int si = m->fired[f].sched;
			struct mt *kp = NULL;

			key.p = kbuf;
			key.len = queue_sched_key(
			    sched_names[si], 2, m->fired[f].slot, kbuf);
			req.after_keys = &key;
			req.nafter_keys = 1;
			for (size_t i = 0; i < m->n; i++)
				if (m->t[i].sched == si + 1 &&
				    m->t[i].slot == m->fired[f].slot)
					kp = &m->t[i];
			/* keys are looked up before parents named twice */
			if (kp == NULL || kp->tube != tube)
				want = SLUICE_ENOTFOUND;
			if (want == 0) {
				for (size_t i = 0; i < np; i++)
					if (after[i] == kp->id)
						want = SLUICE_EINVAL;
				after[np++] = kp->id;
				qsort(after, np, sizeof(*after), sorted_u64);
				r->key_parents++;
			}
		}
	}
	if (want == 0 && rnd(r, 3) == 0) {
		bi = (int)rnd(r, NBATCH);
		req.batch = batch_names[bi];
		req.batch_len = 2;
		if (m->b[bi].exists && (m->b[bi].closed || m->b[bi].ended))
			want = SLUICE_EBATCH;
	}
	rc = queue_decide_put(r->h.q, now, &req, &rec, &res);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	assert_true(res.created && res.id == m->next_id);
	assert_int_equal(rec.type, np > 0 || bi >= 0 ? QREC_PUT_X : QREC_PUT);
	commit(r, &rec);
	t = m_new_task(m, tube, now + req.delay_ms, now);
	t->pri = req.pri;
	t->ttr = req.ttr_ms;
	t->maxa = req.max_attempts;
	if (bi >= 0) {
		struct mbatch *b = &m->b[bi];

		b->exists = true;
		if (b->started == 0)
			b->started = now;
		b->total++;
		t->batch = bi;
	}
	if (np == 0)
		return;
	/* its node, and each parent's when the queue holds or remembers
	 * it */
	t->np = (int)np;
	t->rule = req.on_parent_failure;
	t->state = M_WAITING;
	m->node[t->id].exists = true;
	m->node[t->id].res = -1;
	for (size_t i = 0; i < np; i++) {
		uint64_t p = after[i];
		struct mnode *n = &m->node[p];
		int o;

		t->parents[i] = p;
		if (m_find(m, p) == NULL && !n->exists)
			continue; /* forgotten: as acked */
		if (!n->exists) {
			memset(n, 0, sizeof(*n));
			n->exists = true;
			n->res = -1;
		}
		t->linked[i] = true;
		o = m_outcome(m, p);
		if (n->outcome == O_PENDING)
			n->outcome = (uint8_t)o;
		if (o == O_PENDING)
			m->node[t->id].pending++;
	}
	/* decided at once: the first failed parent's rule, or ready */
	for (size_t i = 0; i < np; i++) {
		if (m_outcome(m, after[i]) != O_FAILED ||
		    t->rule == QUEUE_PARENT_IGNORE)
			continue;
		m->node[t->id].pending++;
		m_tell(m, after[i], t->id, now);
		m_settle_all(m, now);
		return;
	}
	if (m->node[t->id].pending == 0)
		m_release_child(t, now);
	m_settle_all(m, now);
}

/* A take: the model's best task, and a child's parents' outcomes and
 * results as the model has them. */
void
op_take(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_str ts[NTUBE];
	struct queue_take_req req = { ts, 0, 1 + rnd(r, 3), rnd(r, 4) == 0,
		false };
	struct queue_task_deps d;
	struct qrec rec;
	unsigned mask = 0;
	struct mt *best;
	int rc;

	for (int i = 0; i < NTUBE; i++) {
		if (rnd(r, 3) == 0 && i != 0)
			continue;
		ts[req.ntubes].p = tube_names[i];
		ts[req.ntubes].len = 2;
		req.ntubes++;
		mask |= 1u << i;
	}
	best = m_best(m, mask, now);
	rc = queue_decide_take(r->h.q, now, &req, &rec);
	if (best == NULL) {
		assert_int_equal(rc, SLUICE_ETIMEDOUT);
		return;
	}
	assert_int_equal(rc, 0);
	if (rec.u.take.id != best->id)
		fail_msg("take got %" PRIu64 ", the model %" PRIu64,
		    rec.u.take.id, best->id);
	if (m->cancelled[best->id])
		fail_msg("task %" PRIu64 " was cancelled, and taken", best->id);
	commit(r, &rec);
	best->state = M_TAKEN;
	best->session = req.session;
	best->detached = req.detached;
	best->lease = r->h.lsn;
	best->deadline = now + best->ttr;
	best->attempts++;
	m->ctr[best->tube].take++;
	/* the child's parents, each acked (or failed under ignore, or the
	 * child was kicked), with the results the model expects */
	assert_int_equal(queue_task_deps(r->h.q, best->id, &d), 0);
	assert_int_equal(d.nparents, (size_t)best->np);
	r->children_taken += best->np > 0;
	for (int k = 0; k < best->np; k++) {
		uint64_t p = best->parents[k];
		int o = m_outcome(m, p), qo, want;
		const char *res;
		size_t len;

		assert_true(d.parents[k] == p);
		if (!(o == O_DONE ||
		        (o == O_FAILED && best->rule == QUEUE_PARENT_IGNORE) ||
		        best->kicked))
			fail_msg("child %" PRIu64
			         " taken before parent %" PRIu64 " was acked",
			    best->id, p);
		queue_dep_result(r->h.q, p, &qo, &res, &len);
		assert_int_equal(qo, o);
		if ((want = m_dep_res(m, p)) > 0) {
			r->results_seen++;
			assert_int_equal(len, strlen(results[want]));
			assert_memory_equal(res, results[want], len);
		} else {
			assert_null(res);
		}
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
	int res = (int)rnd(r, NRES), to = -1, want;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.result = results[res];
	req.result_len = strlen(results[res]);
	if (rnd(r, 12) == 0) {
		to = rnd(r, 2) ? 0 : 1;
		req.to_tube = tube_names[to];
		req.to_tube_len = 2;
	}
	want = m_leased(m, req.id, req.lease, false, &t);
	assert_int_equal(queue_decide_ack(r->h.q, now, &req, &rec), want);
	if (want != 0)
		return;
	if (t->cancelled) {
		m_cancelled_end(r, t, &rec);
		m_settle_all(m, now);
		return;
	}
	commit(r, &rec);
	m->ctr[t->tube].ack++;
	if (to >= 0) {
		/* moved: acked for its children, live for its batch */
		t->tube = to;
		t->state = M_QUEUED;
		t->run_at = now;
		t->attempts = 0;
		t->has_err = false;
		m_unlease(t);
		m_settle(m, t->id, O_DONE, res);
	} else if (m->cfg.keep_done_ms > 0) {
		/* kept as done, with its result; past max_done the first
		 * done goes */
		size_t ndone = 0;

		m_note(m, t, QUEUE_END_DONE, results[res], now);
		m_batch_end_member(m, t, HOW_ACKED, now);
		m_settle(m, t->id, O_DONE, res);
		t->state = M_DONE;
		t->res = res > 0 ? res : -1;
		t->kept_until = now + m->cfg.keep_done_ms;
		m_unlease(t);
		for (size_t i = 0; i < m->n; i++)
			ndone += m->t[i].state == M_DONE;
		for (; ndone > m->cfg.max_done; ndone--)
			m_remove(m, m_first_done(m), true, -1, now);
	} else {
		m_note(m, t, QUEUE_END_DONE, results[res], now);
		m_remove(m, t, true, res, now);
	}
	m_settle_all(m, now);
}

void
op_release(struct run *r)
{
	struct model *m = r->m;
	struct queue_release_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	if (rnd(r, 2) == 0)
		req.delay_ms = (int64_t)rnd(r, 1500);
	want = m_leased(m, req.id, req.lease, false, &t);
	assert_int_equal(
	    queue_decide_release(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (t->cancelled) {
		m_cancelled_end(r, t, &rec);
		m_settle_all(m, r->h.now);
		return;
	}
	commit(r, &rec);
	m->ctr[t->tube].release++;
	t->state = M_QUEUED;
	t->run_at = r->h.now + req.delay_ms;
	m_unlease(t);
}

void
op_fail(struct run *r)
{
	struct model *m = r->m;
	struct queue_fail_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int e = (int)rnd(r, NERR), want;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.error = errors[e];
	req.error_len = strlen(errors[e]);
	req.fatal = rnd(r, 4) == 0;
	req.set_delay = true;
	req.delay_ms = (int64_t)rnd(r, 1000);
	want = m_leased(m, req.id, req.lease, false, &t);
	assert_int_equal(queue_decide_fail(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (t->cancelled) {
		m_cancelled_end(r, t, &rec);
		m_settle_all(m, r->h.now);
		return;
	}
	commit(r, &rec);
	m->ctr[t->tube].fail++;
	m_set_err(t, errors[e]);
	if (req.fatal || (t->maxa > 0 && t->attempts >= t->maxa)) {
		m_bury_taken(m, t, r->h.now);
	} else {
		t->state = M_QUEUED;
		t->run_at = r->h.now + req.delay_ms;
		m_unlease(t);
	}
	m_settle_all(m, r->h.now);
}

void
op_touch(struct run *r)
{
	struct queue_touch_req req = { 0 };
	struct qrec rec;
	struct mt *t = NULL;
	int want;

	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	want = m_leased(r->m, req.id, req.lease, false, &t);
	if (want == 0 && t->cancelled)
		want = SLUICE_ECANCELED;
	assert_int_equal(
	    queue_decide_touch(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	t->deadline = r->h.now + t->ttr;
}

/* A worker's bury of its taken task, or an operator's (force) of a
 * queued one (one waiting for its parents is refused). */
void
op_bury(struct run *r)
{
	struct model *m = r->m;
	struct queue_bury_req req;
	struct qrec rec;
	struct mt *t;
	int e = (int)rnd(r, NERR + 1) - 1, want;

	memset(&req, 0, sizeof(req));
	if (e >= 0) {
		req.error = errors[e];
		req.error_len = strlen(errors[e]);
	}
	if (rnd(r, 2) == 0) {
		req.id = pick_taken(r);
		req.lease = pick_lease(r, req.id);
		want = m_leased(m, req.id, req.lease, false, &t);
	} else {
		req.id = pick_id(r);
		req.force = true;
		t = m_find(m, req.id);
		want = t == NULL ? SLUICE_ENOTFOUND
		    : t->state == M_BURIED || t->state == M_WAITING ||
		        t->state == M_DONE
		    ? SLUICE_ESTATE
		    : t->state == M_TAKEN ? 1 /* not this way */
		                          : 0;
		if (want == 1)
			return;
	}
	assert_int_equal(queue_decide_bury(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (t->cancelled) {
		m_cancelled_end(r, t, &rec);
		m_settle_all(m, r->h.now);
		return;
	}
	commit(r, &rec);
	if (e >= 0)
		m_set_err(t, errors[e]);
	if (t->state == M_TAKEN)
		m_bury_taken(m, t, r->h.now);
	else
		m_bury(m, t, r->h.now); /* parked in place */
	m_settle_all(m, r->h.now);
}

void
op_kick(struct run *r)
{
	struct model *m = r->m;
	struct queue_kick_req req;
	struct qrec rec;
	struct mt *t;
	int want;

	memset(&req, 0, sizeof(req));
	req.id = pick_id(r);
	t = m_find(m, req.id);
	if (t == NULL)
		want = SLUICE_ENOTFOUND;
	else if (t->state == M_BURIED ||
	    (t->state == M_QUEUED && t->run_at > r->h.now))
		want = 0;
	else
		want = SLUICE_ESTATE;
	assert_int_equal(queue_decide_kick(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	t->state = M_QUEUED;
	t->run_at = r->h.now;
	t->kicked = true;
	m->ctr[t->tube].kick++;
}

void
op_delete(struct run *r)
{
	struct model *m = r->m;
	struct queue_delete_req req = { .id = pick_id(r) };
	struct qrec rec;
	struct mt *t = m_find(m, req.id);

	assert_int_equal(queue_decide_delete(r->h.q, r->h.now, &req, &rec),
	    t != NULL ? 0 : SLUICE_ENOTFOUND);
	if (t == NULL)
		return;
	commit(r, &rec);
	m->ctr[t->tube].del++;
	m->why = QUEUE_END_DELETED;
	m_remove(m, t, false, -1, r->h.now);
	m_settle_all(m, r->h.now);
}

/* An update of the priority, the run time or the ttr: of a queued
 * task anything, of a buried one all but the run time, of a taken one
 * the priority only; a task waiting for its parents, or done, none. */
void
op_update(struct run *r)
{
	struct model *m = r->m;
	struct queue_update_req req;
	struct qrec rec;
	struct mt *t;
	int want = 0;

	memset(&req, 0, sizeof(req));
	req.id = pick_id(r);
	req.set_pri = rnd(r, 2) == 0;
	req.pri = (uint32_t)rnd(r, 3) * 10;
	req.set_run_at = rnd(r, 3) == 0;
	req.delay_ms = (int64_t)rnd(r, 2000);
	req.set_ttr = !req.set_pri && !req.set_run_at ? true : rnd(r, 4) == 0;
	req.ttr_ms = rnd(r, 2) ? 1000 : 1500;
	t = m_find(m, req.id);
	if (t == NULL)
		want = SLUICE_ENOTFOUND;
	else if (t->state == M_WAITING || t->state == M_DONE ||
	    (t->state == M_TAKEN && (req.set_run_at || req.set_ttr)) ||
	    (t->state == M_BURIED && req.set_run_at))
		want = SLUICE_ESTATE;
	assert_int_equal(
	    queue_decide_update(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	if (req.set_pri)
		t->pri = req.pri;
	if (req.set_run_at)
		t->run_at = r->h.now + req.delay_ms;
	if (req.set_ttr)
		t->ttr = req.ttr_ms;
}

/* Every task of a tube goes at once, by id (cancel_all): their children
 * follow their rules, breadth first from the first removed. */
void
op_flush(struct run *r)
{
	struct model *m = r->m;
	int tube = (int)rnd(r, NTUBE);
	struct queue_flush_req req = { tube_names[tube], 2 };
	struct qrec rec;
	uint64_t ids[MAXLIVE];
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].tube == tube)
			ids[n++] = m->t[i].id;
	assert_int_equal(queue_decide_flush(r->h.q, r->h.now, &req, &rec), 0);
	assert_int_equal(rec.type == QREC_NONE, n == 0);
	if (n == 0)
		return;
	commit(r, &rec);
	qsort(ids, n, sizeof(*ids), sorted_u64);
	m->why = QUEUE_END_DELETED;
	for (size_t i = 0; i < n; i++) {
		struct mt *t = m_find(m, ids[i]);

		m->ctr[tube].del++;
		m_remove(m, t, false, -1, r->h.now);
	}
	r->flushed += n;
	m_settle_all(m, r->h.now);
}

void
op_cancel(struct run *r)
{
	struct model *m = r->m;
	uint64_t id = rnd(r, 3) ? pick_taken(r) : pick_id(r);
	struct qrec rec;
	struct mt *t;
	int want;

	if (rnd(r, 4) == 0) { /* one of a state, now and then delayed */
		int st = rnd(r, 2) ? QUEUE_DELAYED : 1 + (int)rnd(r, 6);
		uint64_t k = 0;

		for (size_t i = 0; i < m->n; i++)
			if (m_view_state(&m->t[i], r->h.now) == st &&
			    rnd(r, ++k) == 0)
				id = m->t[i].id;
	}
	t = m_find(m, id);
	want = t == NULL   ? SLUICE_ENOTFOUND
	    : t->cancelled ? SLUICE_ECANCELED
	                   : 0;
	assert_int_equal(queue_decide_cancel(r->h.q, r->h.now, id, &rec), want);
	if (want != 0)
		return;
	assert_int_equal(rec.type, QREC_CANCEL);
	m->cancelled[id] = true;
	cancels[m_view_state(t, r->h.now)]++;
	commit(r, &rec);
	assert_int_equal(queue_cancelled(r->h.q, id), t->state == M_TAKEN);
	if (t->state == M_TAKEN) {
		assert_true(rec.u.cancel.lease == t->lease);
		t->cancelled = true;
		r->cancel_taken++;
		return;
	}
	assert_true(rec.u.cancel.lease == 0);
	r->cancel_queued++;
	m->ctr[t->tube].del++;
	m->why = QUEUE_END_CANCELLED;
	m_remove(m, t, false, -1, r->h.now);
	m_settle_all(m, r->h.now);
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
		if (due->cancelled) {
			m_cancelled_end(r, due, &rec);
		} else {
			commit(r, &rec);
			m_lost(m, due, r->h.now, true, NULL);
		}
		m_settle_all(m, r->h.now);
	}
	fail_msg("expiry did not end");
}
