/* t_model_flow_cmp - test_model_flow.c's comparisons (t_model_flow.h):
 * every field of a task, its dependencies and their outcomes, the
 * batches, the schedules, the ids the final callback named, and the
 * stats, between the queue and the model. */
#include "t_model_flow.h"

/* ---- Comparing ----------------------------------------------------------- */

void
compare_task(struct run *r, const struct mt *t)
{
	struct queue_task_view v;

	assert_int_equal(queue_peek(r->h.q, r->h.now, t->id, &v), 0);
	assert_int_equal(v.state, m_view_state(t, r->h.now));
	assert_memory_equal(v.tube, tube_names[t->tube], 2);
	assert_int_equal(v.attempts, t->attempts);
	assert_int_equal(v.pri, t->pri);
	if (t->state == M_DONE)
		assert_true(v.run_at == t->kept_until);
	else if (t->state != M_WAITING)
		assert_true(v.run_at == t->run_at);
	assert_true(v.lease == t->lease);
	assert_true(v.session == t->session);
	assert_int_equal(v.detached, t->detached);
	if (t->has_err) {
		assert_non_null(v.last_error);
		if (v.last_error_len != strlen(t->err) ||
		    memcmp(v.last_error, t->err, v.last_error_len) != 0)
			fail_msg("task %" PRIu64 ": last error \"%.*s\", the "
			         "model \"%s\"",
			    t->id, (int)v.last_error_len, v.last_error, t->err);
	} else {
		assert_null(v.last_error);
	}
	assert_int_equal(queue_cancelled(r->h.q, t->id), t->cancelled);
}

/* The graph around `id`: whether the queue knows it, its parents and
 * how many it still waits for, and its outcome as a child sees it. */
void
compare_deps(struct run *r, uint64_t id)
{
	struct model *m = r->m;
	struct mt *t = m_find(m, id);
	struct queue_task_deps d;
	const char *res;
	size_t len;
	int o, want, rc = queue_task_deps(r->h.q, id, &d);

	if (t == NULL && !m->node[id].exists) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
	} else {
		assert_int_equal(rc, 0);
		if (t != NULL) {
			assert_int_equal(d.nparents, (size_t)t->np);
			for (int k = 0; k < t->np; k++)
				assert_true(d.parents[k] == t->parents[k]);
			if (t->np > 0)
				assert_int_equal(d.on_parent, t->rule);
		}
		if (m->node[id].exists && !m->node[id].gone)
			assert_int_equal(d.pending, m->node[id].pending);
	}
	queue_dep_result(r->h.q, id, &o, &res, &len);
	assert_int_equal(o, m_outcome(m, id));
	if ((want = m_dep_res(m, id)) > 0) {
		assert_int_equal(len, strlen(results[want]));
		assert_memory_equal(res, results[want], len);
	} else {
		assert_null(res);
	}
}

void
compare_batches(struct run *r)
{
	struct model *m = r->m;

	for (int i = 0; i < NBATCH; i++) {
		const struct mbatch *b = &m->b[i];
		struct queue_batch_info q;
		uint64_t c[5] = { 0 };
		int rc = queue_batch_show(r->h.q, batch_names[i], 2, &q);

		if (!b->exists) {
			assert_int_equal(rc, SLUICE_ENOTFOUND);
			continue;
		}
		assert_int_equal(rc, 0);
		for (size_t k = 0; k < m->n; k++)
			if (m->t[k].batch == i)
				c[m_view_state(&m->t[k], r->h.now) ==
				            QUEUE_WAITING
				        ? 0
				        : m_view_state(&m->t[k], r->h.now)]++;
		assert_true(q.waiting == c[0] && q.ready == c[QUEUE_READY]);
		assert_true(q.delayed == c[QUEUE_DELAYED]);
		assert_true(q.taken == c[QUEUE_TAKEN]);
		assert_true(q.total == b->total && q.acked == b->acked);
		assert_true(q.buried == b->buried && q.failed == b->failed);
		assert_int_equal(q.closed, b->closed);
		assert_int_equal(q.ended, b->ended);
		assert_int_equal(q.owed, b->owed);
		assert_int_equal(q.fired, b->fired);
		assert_true(q.started_at == b->started);
		assert_true(q.ended_at == (b->ended ? b->ended_at : 0));
	}
	assert_int_equal(queue_batch_owed(r->h.q) != NULL,
	    m->b[0].owed || m->b[1].owed || m->b[2].owed);
}

void
compare_scheds(struct run *r)
{
	struct model *m = r->m;

	for (int i = 0; i < NSCHED; i++) {
		const struct msched *s = &m->s[i];
		const struct sched *q =
		    queue_sched_find(r->h.q, sched_names[i], 2);

		if (!s->exists) {
			assert_null(q);
			continue;
		}
		assert_non_null(q);
		assert_int_equal(q->paused, s->paused);
		assert_true(q->from == s->from);
		assert_true(q->fired == s->fired);
		assert_true(q->last_slot == s->last_slot);
		assert_true(q->last_id == s->last_id);
		assert_int_equal(q->catch_up, s->catch_up);
	}
}

/* The ids named to the final callback are those the model expects,
 * each once. */
void
compare_finals(struct run *r)
{
	struct model *m = r->m;

	qsort(m->final_want, m->nfinal_want, sizeof(uint64_t), sorted_u64);
	qsort(m->final_got, m->nfinal_got, sizeof(uint64_t), sorted_u64);
	for (size_t i = 0; i < m->nfinal_want || i < m->nfinal_got; i++) {
		uint64_t w = i < m->nfinal_want ? m->final_want[i] : 0;
		uint64_t g = i < m->nfinal_got ? m->final_got[i] : 0;

		if (w != g)
			fail_msg("final callback: the model wants %" PRIu64
			         ", the queue named %" PRIu64 " (%zu and %zu)",
			    w, g, m->nfinal_want, m->nfinal_got);
	}
	m->nfinal_want = m->nfinal_got = 0;
}

/* How task `id` stands for a waiter (queue_result): its outcome while
 * kept, else the live task, else not found. */
void
compare_result(struct run *r, uint64_t id)
{
	struct model *m = r->m;
	const struct mout *o = &m->out[id];
	const struct mt *t = m_find(m, id);
	struct queue_result q;
	int rc = queue_result(r->h.q, r->h.now, id, &q);

	if (o->kind != 0 && o->expires > r->h.now) {
		assert_int_equal(rc, 0);
		if (!q.final || q.state != o->kind)
			fail_msg("task %" PRIu64 ": outcome %s, the model %s",
			    id, q.final ? queue_end_name(q.state) : "not final",
			    queue_end_name(o->kind));
		assert_true(q.time == o->time);
		assert_memory_equal(q.tube, tube_names[o->tube], 2);
		assert_int_equal(q.text_len, o->has_text ? strlen(o->text) : 0);
		if (o->has_text)
			assert_memory_equal(q.text, o->text, q.text_len);
		return;
	}
	if (t == NULL) {
		if (rc != SLUICE_ENOTFOUND)
			fail_msg("task %" PRIu64
			         ": a result (%s), the model none",
			    id, queue_end_name(q.state));
		return;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(q.state, m_view_state(t, r->h.now));
	assert_int_equal(q.final, t->state == M_BURIED || t->state == M_DONE);
	assert_int_equal(q.cancelled, t->cancelled);
}

void
compare(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_str all[NTUBE];
	struct queue_take_req tr = { all, NTUBE, 1, false, false };
	struct qrec rec;
	struct mt *best;
	int rc;

	for (int i = 0; i < NTUBE; i++) {
		struct queue_tube_stats s;
		uint64_t c[QUEUE_STATE_END_] = { 0 };

		all[i].p = tube_names[i];
		all[i].len = 2;
		if (queue_tube_stats(r->h.q, now, tube_names[i], 2, &s) != 0)
			memset(&s, 0, sizeof(s)); /* never made yet */
		for (size_t k = 0; k < m->n; k++)
			if (m->t[k].tube == i)
				c[m_view_state(&m->t[k], now)]++;
		if (s.ready != c[QUEUE_READY] ||
		    s.delayed != c[QUEUE_DELAYED] ||
		    s.taken != c[QUEUE_TAKEN] || s.buried != c[QUEUE_BURIED] ||
		    s.waiting != c[QUEUE_WAITING] || s.done != c[QUEUE_DONE])
			fail_msg("tube %s: ready %" PRIu64 " delayed %" PRIu64
			         " taken %" PRIu64 " buried %" PRIu64
			         " waiting %" PRIu64 "; the model %" PRIu64
			         " %" PRIu64 " %" PRIu64 " %" PRIu64
			         " %" PRIu64,
			    tube_names[i], s.ready, s.delayed, s.taken,
			    s.buried, s.waiting, c[QUEUE_READY],
			    c[QUEUE_DELAYED], c[QUEUE_TAKEN], c[QUEUE_BURIED],
			    c[QUEUE_WAITING]);
		assert_memory_equal(&s.ctr, &m->ctr[i], sizeof(s.ctr));
	}
	best = m_best(m, (1u << NTUBE) - 1, now);
	rc = queue_decide_take(r->h.q, now, &tr, &rec);
	assert_int_equal(rc, best != NULL ? 0 : SLUICE_ETIMEDOUT);
	if (best != NULL)
		assert_true(rec.u.take.id == best->id);
	if (m->n > 0)
		compare_task(r, &m->t[rnd(r, m->n)]);
	for (int k = 0; k < 2; k++)
		compare_deps(r, 1 + rnd(r, m->next_id - 1 + 1));
	for (int k = 0; k < 2; k++)
		compare_result(r, 1 + rnd(r, m->next_id - 1 + 1));
	compare_finals(r);
	/* the model's own rule: a child out of waiting (queued, taken,
	 * done) has each parent acked, or failed under ignore, unless an
	 * operator kicked it */
	for (size_t k = 0; k < m->n; k++) {
		const struct mt *t = &m->t[k];

		if (t->np == 0 || t->kicked || t->state == M_WAITING ||
		    t->state == M_BURIED)
			continue;
		for (int j = 0; j < t->np; j++) {
			int o = m_outcome(m, t->parents[j]);

			assert_true(o == O_DONE ||
			    (o == O_FAILED && t->rule == QUEUE_PARENT_IGNORE));
		}
	}
	compare_batches(r);
	compare_scheds(r);
	/* the server sleeps until then: a child released delayed, a lease's
	 * deadline, a done task's purge */
	{
		int64_t wake = INT64_MAX;

		for (size_t k = 0; k < m->n; k++) {
			const struct mt *t = &m->t[k];
			int64_t at = t->state == M_QUEUED && t->run_at > now
			    ? t->run_at
			    : t->state == M_TAKEN ? t->deadline
			    : t->state == M_DONE  ? t->kept_until
			                          : INT64_MAX;

			wake = at < wake ? at : wake;
		}
		assert_true(queue_next_wake(r->h.q) == wake);
	}
	tq_check(&r->h);
}
