/* t_model_flow_sched - test_model_flow.c's batches (set, close, their
 * success and completion puts), schedules (set, pause, delete, their
 * slots fired or skipped, a stale one refused), a lost session, and the
 * restarts from the log or a snapshot (t_model_flow.h). */
#include "t_model_flow.h"

/* ---- Batches ----------------------------------------------------------- */

void
op_batch_set(struct run *r)
{
	struct model *m = r->m;
	int bi = (int)rnd(r, NBATCH), which = (int)rnd(r, 3), want = 0;
	struct mbatch *b = &m->b[bi];
	struct qrec rec;
	bool s = which != 1, c = which != 0;

	if (b->exists && b->ended)
		want = SLUICE_EBATCH;
	assert_int_equal(
	    queue_decide_batch_set(r->h.q, batch_names[bi], 2, s ? "t0" : NULL,
	        s ? 2 : 0, "s", 1, c ? "t0" : NULL, c ? 2 : 0, "c", 1, &rec),
	    want);
	if (want != 0)
		return;
	commit(r, &rec);
	b->exists = true;
	b->on[0] |= s;
	b->on[1] |= c;
}

void
op_batch_close(struct run *r)
{
	struct model *m = r->m;
	int bi = (int)rnd(r, NBATCH);
	struct mbatch *b = &m->b[bi];
	struct qrec rec;

	assert_int_equal(
	    queue_decide_batch_close(r->h.q, batch_names[bi], 2, &rec),
	    b->exists ? 0 : SLUICE_ENOTFOUND);
	if (!b->exists)
		return;
	assert_int_equal(rec.type == QREC_NONE, b->closed);
	if (b->closed)
		return;
	commit(r, &rec);
	b->closed = true;
	m_batch_maybe_end(m, b, r->h.now);
}

/* The leader fires what ended batches owe: once each. */
void
fire_batches(struct run *r)
{
	struct model *m = r->m;
	struct batch *qb;
	struct qrec rec;

	for (int k = 0; k <= NBATCH; k++) {
		struct mbatch *b = NULL;
		int n = 0;

		if ((qb = queue_batch_owed(r->h.q)) == NULL)
			break;
		for (int i = 0; i < NBATCH; i++)
			if (qb->name_len == 2 &&
			    memcmp(qb->name, batch_names[i], 2) == 0)
				b = &m->b[i];
		assert_non_null(b);
		assert_true(b->ended && b->owed == qb->owed);
		assert_int_equal(
		    queue_decide_batch_fire(r->h.q, r->h.now, qb, &rec), 0);
		assert_int_equal(rec.u.batch.which, b->owed);
		for (int i = 0; i < 2; i++) {
			const struct qrec_put *p;
			char want[64];

			if (!(b->owed & (1 << i)))
				continue;
			p = &rec.u.batch.puts[n++];
			assert_true(p->id == m->next_id + (uint64_t)(n - 1));
			snprintf(want, sizeof(want), "\"total\":%" PRIu64 ",",
			    b->total);
			assert_non_null(memmem(
			    p->payload, p->payload_len, want, strlen(want)));
			snprintf(want, sizeof(want),
			    "\"acked\":%" PRIu64 ",\"failed\":%" PRIu64,
			    b->acked, b->failed);
			assert_non_null(memmem(
			    p->payload, p->payload_len, want, strlen(want)));
		}
		commit(r, &rec);
		for (int i = 0; i < 2; i++)
			if (b->owed & (1 << i)) {
				m_new_task(m, 0, r->h.now, r->h.now)->pri =
				    QUEUE_DEFAULT_PRI;
				r->callbacks++;
			}
		b->fired |= b->owed;
		b->owed = 0;
		b->expires = r->h.now + m->cfg.dedup_ms;
	}
	for (int i = 0; i < NBATCH; i++)
		assert_int_equal(m->b[i].owed, 0);
}

/* ---- Schedules --------------------------------------------------------- */

static const char *const crons[2] = { "* * * * *", "*/5 * * * *" };

void
op_sched_set(struct run *r)
{
	struct model *m = r->m;
	int si = (int)rnd(r, NSCHED), c = (int)rnd(r, 2);
	struct msched *s = &m->s[si];
	struct queue_sched_req req;
	struct qrec rec;
	char err[160];

	memset(&req, 0, sizeof(req));
	req.name = sched_names[si];
	req.name_len = 2;
	req.tube = "t0";
	req.tube_len = 2;
	req.cron = crons[c];
	req.cron_len = strlen(crons[c]);
	req.catch_up = (uint8_t)rnd(r, 3);
	req.pri = 5;
	req.ttr = 1000;
	req.max_attempts = 2;
	req.payload = "tick";
	req.payload_len = 4;
	assert_int_equal(queue_decide_sched_set(
	                     r->h.q, r->h.now, &req, &rec, err, sizeof(err)),
	    0);
	commit(r, &rec);
	if (!s->exists || s->from < r->h.now)
		s->from = r->h.now; /* a slot decided stays so */
	if (!s->exists) {
		s->fired = 0;
		s->last_slot = 0;
		s->last_id = 0;
	}
	s->exists = true;
	s->paused = false;
	s->period = c == 0 ? 1 : 5;
	s->catch_up = req.catch_up;
}

void
op_sched_pause(struct run *r)
{
	struct model *m = r->m;
	int si = (int)rnd(r, NSCHED);
	struct msched *s = &m->s[si];
	bool paused = rnd(r, 2) == 0;
	struct qrec rec;
	int rc = queue_decide_sched_pause(
	    r->h.q, r->h.now, sched_names[si], 2, paused, &rec);

	if (!s->exists) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
		return;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(rec.type == QREC_NONE, s->paused == paused);
	if (rec.type == QREC_NONE)
		return;
	commit(r, &rec);
	s->paused = paused;
	if (!paused && r->h.now > s->from)
		s->from = r->h.now; /* the slots of the pause are skipped */
}

void
op_sched_delete(struct run *r)
{
	struct model *m = r->m;
	int si = (int)rnd(r, NSCHED);
	struct qrec rec;
	int rc = queue_decide_sched_delete(r->h.q, sched_names[si], 2, &rec);

	if (!m->s[si].exists) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
		return;
	}
	assert_int_equal(rc, 0);
	commit(r, &rec);
	memset(&m->s[si], 0, sizeof(m->s[si]));
}

/* One SCHED_FIRE up to `slot`, with the slot's task when `put`. */
void
fire_slot(struct run *r, int si, int64_t slot, bool put)
{
	struct model *m = r->m;
	struct msched *s = &m->s[si];
	char key[QUEUE_SCHED_KEY_MAX];
	struct qrec rec;
	uint64_t id;
	struct mt *t;

	assert_true(slot > s->from);
	assert_int_equal(queue_decide_sched_fire(r->h.q, r->h.now,
	                     sched_names[si], 2, slot, put, key, &rec, &id),
	    0);
	assert_int_equal(rec.u.sched.has_put, put);
	commit(r, &rec);
	s->from = slot;
	if (!put) {
		r->slots_skipped++;
		return;
	}
	assert_true(id == m->next_id);
	for (size_t i = 0; i < m->nfired; i++)
		if (m->fired[i].sched == si && m->fired[i].slot == slot)
			fail_msg("slot %" PRId64 " of %s fired twice", slot,
			    sched_names[si]);
	assert_true(m->nfired < MAXFIRED);
	m->fired[m->nfired].sched = si;
	m->fired[m->nfired].slot = slot;
	m->nfired++;
	t = m_new_task(m, 0, r->h.now, r->h.now);
	t->pri = 5;
	t->maxa = 2;
	t->sched = si + 1;
	t->slot = slot;
	s->fired++;
	s->last_slot = slot;
	s->last_id = t->id;
	r->slots_put++;
}

/* The server's timer (ops/sched.c, fire_due): each schedule's slots due
 * by now, by its catch-up mode. */
void
fire_schedules(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;

	for (int si = 0; si < NSCHED; si++) {
		struct msched *s = &m->s[si];
		int64_t p, first, last, n, after, grace;
		bool on_time;

		if (!s->exists || s->paused)
			continue;
		p = s->period * MIN_MS;
		first = (s->from / p + 1) * p;
		if (first > now)
			continue;
		last = now / p * p;
		n = (last - first) / p + 1;
		after = last + p;
		grace = (after - last) / 2 < 60000 ? (after - last) / 2 : 60000;
		on_time = now - last <= grace;
		if (s->catch_up == QREC_CATCH_ALL) {
			int64_t keep =
			    n < QREC_CATCH_ALL_MAX ? n : QREC_CATCH_ALL_MAX;

			if (n > keep)
				fire_slot(
				    r, si, first + (n - keep) * p - 1, false);
			for (int64_t k = n - keep; k < n; k++)
				fire_slot(r, si, first + k * p, true);
		} else if (s->catch_up == QREC_CATCH_ONE || on_time) {
			if (n > 1)
				fire_slot(r, si, last - p, false);
			fire_slot(r, si, last, true);
		} else {
			fire_slot(r, si, last, false);
		}
	}
}

/* A FIRE of a slot already decided (a node that lost track, a second
 * leader) is refused. */
void
op_sched_stale(struct run *r)
{
	struct model *m = r->m;
	int si = (int)rnd(r, NSCHED);
	struct msched *s = &m->s[si];
	char key[QUEUE_SCHED_KEY_MAX];
	struct qrec rec;
	uint64_t id;
	int64_t slot;
	int rc;

	if (!s->exists || s->from == 0)
		return;
	slot = s->last_slot != 0 && rnd(r, 2)
	    ? s->last_slot
	    : s->from - (int64_t)rnd(r, 3) * MIN_MS;
	rc = queue_decide_sched_fire(
	    r->h.q, r->h.now, sched_names[si], 2, slot, true, key, &rec, &id);
	assert_int_equal(rc, SLUICE_ESTATE);
	r->stale_refused++;
}

/* A worker's session ends: its leases that are not detached end with
 * it, each as a lost lease (a cancelled task's as a DELETE). */
void
op_session_gone(struct run *r)
{
	struct model *m = r->m;
	uint64_t session = 1 + rnd(r, 3);
	struct qrec rec;
	char why[64];

	snprintf(why, sizeof(why), "worker disconnected (peer-%" PRIu64 ")",
	    session);
	for (size_t k = 0; k <= MAXLIVE; k++) {
		struct mt *t = lease_end_next(r, session, why, &rec);

		if (t == NULL)
			return;
		r->sessions_gone++;
		if (t->cancelled) {
			m_cancelled_end(r, t, &rec);
		} else {
			commit(r, &rec);
			m_lost(m, t, r->h.now, false, why);
		}
		m_settle_all(m, r->h.now);
	}
	fail_msg("session release did not end");
}

/* ---- Restarts ----------------------------------------------------------- */

/* The queue is rebuilt from the log (from the start, or from the
 * snapshot plus the log after it), then the leases of the old process
 * end as a node's start ends them. */
void
restart(struct run *r, bool from_snap)
{
	struct model *m = r->m;
	struct queue *q =
	    tm_rebuilt(&r->h, &m->cfg, from_snap ? &r->snap : NULL, r->snap_at);
	struct qrec rec;
	static const char why[] = "server restarted";

	queue_free(r->h.q);
	r->h.q = q;
	queue_on_final(q, on_final, m);
	r->restarts++;
	for (size_t k = 0; k <= MAXLIVE; k++) {
		struct mt *t = lease_end_next(r, 0, why, &rec);

		if (t == NULL)
			return;
		if (t->cancelled) {
			m_cancelled_end(r, t, &rec);
		} else {
			commit(r, &rec);
			m_lost(m, t, r->h.now, false, why);
		}
		m_settle_all(m, r->h.now);
	}
	fail_msg("restart did not end");
}
