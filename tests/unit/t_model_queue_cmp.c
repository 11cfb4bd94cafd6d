/* t_model_queue_cmp - test_model.c's comparisons (t_model_queue.h):
 * every field of a task, a tube's errors by text, its settings, its
 * groups, the stats of every tube and the next take, and the hourly
 * statistics (counts, totals and maxima exactly, each percentile in the
 * bucket of the true one), between the queue and the model. */
#include "t_model_queue.h"

/* ---- Comparing ------------------------------------------------------------
 */

void
compare_task(struct run *r, const struct mt *t)
{
	struct queue_task_view v;
	char pay[64];
	size_t plen = payload(t->pay, pay);
	int state = m_state(t, r->h.now);
	int key = t->key;

	assert_int_equal(queue_peek(r->h.q, r->h.now, t->id, &v), 0);
	assert_int_equal(v.state, state);
	assert_memory_equal(v.tube, tube_names[t->tube], 2);
	assert_int_equal(v.pri, t->pri);
	assert_int_equal(v.ttr, t->ttr);
	assert_int_equal(v.attempts, t->attempts);
	assert_int_equal(v.max_attempts, t->maxa);
	if (state == QUEUE_DONE) {
		assert_true(
		    v.run_at == t->kept_until && v.kept_until == t->kept_until);
		assert_true(v.finished_at == t->finished);
		assert_true(v.duration == t->finished - t->taken_at);
		if (t->res >= 0) {
			assert_int_equal(v.result_len, strlen(results[t->res]));
			assert_memory_equal(
			    v.result, results[t->res], v.result_len);
		} else {
			assert_null(v.result);
		}
		if (t->dkey >= 0 && m_done_by_key(r->m, t->dkey, r->h.now) == t)
			key = t->dkey;
	} else {
		assert_true(v.run_at == t->run_at);
	}
	assert_true(v.period == t->period);
	assert_int_equal(v.payload_len, plen);
	if (plen > 0)
		assert_memory_equal(v.payload, pay, plen);
	if (key >= 0) {
		assert_int_equal(v.key_len, 2);
		assert_memory_equal(v.key, key_names[key % NKEY], 2);
	} else {
		assert_null(v.key);
	}
	if (t->has_err) {
		assert_int_equal(v.last_error_len, strlen(t->err));
		assert_memory_equal(v.last_error, t->err, v.last_error_len);
	} else {
		assert_null(v.last_error);
	}
	/* the last take outlives its lease: a done task's duration starts
	 * there, a waiting one shows when it was last tried */
	assert_true(v.taken_at == t->taken_at);
	assert_true(v.lease == t->lease && v.session == t->session);
	assert_true(v.deadline == t->deadline && v.detached == t->detached);
	assert_int_equal(v.replace_pending, t->repl && t->state == M_TAKEN);
	/* a done task shows its version while its key is reserved, or
	 * held for it */
	assert_true(v.version ==
	    (t->state != M_DONE ? t->ver
	            : key >= 0  ? t->ver
	            : t->dkey >= 0 && m_held(r->m, t->dkey, r->h.now) &&
	                m_done_of_key(r->m, t->dkey) == t
	            ? t->ver
	            : 0));
	if (v.replace_pending)
		assert_true(v.repl.version == t->r_ver);
}

int
by_err(const void *a, const void *b)
{
	return strcmp((*(const struct mt *const *)a)->err,
	    (*(const struct mt *const *)b)->err);
}

/* errors groups the last_error of a tube's live tasks: a done task keeps
 * its last error (peek shows how its attempts went) but is no longer
 * failing, so a lost lease or a fail it got over does not count. */
void
compare_errors(struct run *r, int tube)
{
	static const struct mt *with[MAXLIVE];
	static struct queue_error_group g[MAXLIVE];
	static const int states[] = { QUEUE_ANY, QUEUE_READY, QUEUE_DELAYED,
		QUEUE_TAKEN, QUEUE_BURIED };
	int state = states[rnd(r, 5)];
	struct model *m = r->m;
	size_t n = 0, ng = 0, i, j;

	for (i = 0; i < m->n; i++)
		if (m->t[i].tube == tube && m->t[i].has_err &&
		    m->t[i].state != M_DONE &&
		    (state == QUEUE_ANY ||
		        m_state(&m->t[i], r->h.now) == state))
			with[n++] = &m->t[i];
	qsort(with, n, sizeof(with[0]), by_err);
	assert_int_equal(queue_errors(r->h.q, r->h.now, tube_names[tube], 2,
	                     state, g, MAXLIVE, &ng),
	    0);
	for (i = 0; i < n; i = j) {
		const char *text = with[i]->err;
		size_t k = 0;

		for (j = i; j < n && strcmp(with[j]->err, text) == 0; j++)
			;
		while (k < ng &&
		    (g[k].text_len != strlen(text) ||
		        memcmp(g[k].text, text, g[k].text_len) != 0))
			k++;
		assert_true(k < ng);
		assert_int_equal(g[k].count, j - i);
		ng--; /* each group once: move the last into its place */
		g[k] = g[ng];
	}
	assert_int_equal(ng, 0);
}

/* The settings in force: the tube's own, else the defaults. */
void
compare_conf(struct run *r, int tube)
{
	const struct mconf *c = &r->m->conf[tube];
	struct qrec_tube_conf q;
	uint8_t set = c->set;

	assert_int_equal(
	    queue_tube_settings(r->h.q, tube_names[tube], 2, &q), 0);
	assert_int_equal(q.set, set);
	assert_int_equal(q.ttr, m_ttr(r->m, tube, 0));
	assert_int_equal(q.max_attempts, m_maxa(r->m, tube, 0));
	assert_int_equal(q.backoff_base,
	    set & QREC_TS_BACKOFF ? c->base : r->m->cfg.backoff_base_ms);
	assert_int_equal(q.backoff_cap,
	    set & QREC_TS_BACKOFF ? c->cap : r->m->cfg.backoff_cap_ms);
	assert_true(q.keep_done == m_keep(r->m, tube));
	assert_true(q.lost_lease_immediate == m_lost_immediate(r->m, tube));
	if (c->dl >= 0) {
		assert_int_equal(q.dead_letter_len, 2);
		assert_memory_equal(q.dead_letter, tube_names[c->dl], 2);
	} else {
		assert_int_equal(q.dead_letter_len, 0);
	}
}

void
compare(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_str all[NTUBE];
	struct queue_take_req tr = { all, NTUBE, 1, false };
	struct qrec rec;
	uint64_t total = 0;
	int want, rc;
	struct tops tops;

	for (int i = 0; i < NTUBE; i++) {
		struct queue_tube_stats s;
		uint64_t c[5] = { 0 };
		int64_t oldest = INT64_MAX;

		all[i].p = tube_names[i];
		all[i].len = 2;
		rc = queue_tube_stats(r->h.q, now, tube_names[i], 2, &s);
		if (!m->exists[i]) {
			assert_int_equal(rc, SLUICE_ENOTFOUND);
			continue;
		}
		assert_int_equal(rc, 0);
		for (size_t k = 0; k < m->n; k++) {
			const struct mt *t = &m->t[k];

			if (t->tube != i)
				continue;
			if (t->state == M_DONE)
				c[4]++;
			else if (t->state == M_TAKEN)
				c[2]++;
			else if (t->state == M_BURIED)
				c[3]++;
			else if (t->run_at <= now)
				c[0]++;
			else
				c[1]++;
			if (m_ready(t, now) && t->run_at < oldest)
				oldest = t->run_at;
		}
		assert_true(s.ready == c[0] && s.delayed == c[1]);
		assert_true(s.taken == c[2] && s.buried == c[3]);
		assert_true(s.done == c[4]);
		assert_true(s.oldest_ready_age ==
		    (oldest == INT64_MAX ? 0 : now - oldest));
		assert_true(
		    s.paused_until == (m->pause[i] > now ? m->pause[i] : 0));
		assert_memory_equal(&s.ctr, &m->ctr[i], sizeof(s.ctr));
		compare_conf(r, i);
		total += c[0] + c[1] + c[2] + c[3] + c[4];
	}
	assert_true(total == m->n);
	want = m_tops(m, (1u << NTUBE) - 1, now, false, &tops);
	rc = queue_decide_take(r->h.q, now, &tr, &rec);
	assert_int_equal(rc, want);
	if (rc == 0 && !m_pick_ok(&tops, m_find(m, rec.u.take.id)))
		fail_msg("a take would get %" PRIu64 ", which the model would "
		         "not give",
		    rec.u.take.id);
	compare_groups(r, (int)rnd(r, NTUBE));
	if (m->n > 0)
		compare_task(r, &m->t[rnd(r, m->n)]);
	if (rnd(r, 4) == 0)
		compare_errors(r, (int)rnd(r, NTUBE));
	tq_check(&r->h);
}

int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* One distribution of an hour against the durations the model logged. */
void
compare_dist(const struct queue_dist *d, int64_t *durs, size_t n)
{
	static const unsigned pct[2] = { 50, 99 };
	uint64_t total = 0;

	assert_int_equal(d->count, n);
	qsort(durs, n, sizeof(*durs), cmp_i64);
	for (size_t i = 0; i < n; i++)
		total += (uint64_t)durs[i];
	assert_true(d->total_ms == total);
	assert_true(d->max_ms == (n ? (uint64_t)durs[n - 1] : 0));
	for (int k = 0; k < 2 && n > 0; k++) {
		uint64_t est = k == 0 ? d->p50_ms : d->p99_ms;
		int64_t v = durs[(n * pct[k] + 99) / 100 - 1];
		int b = queue_hist_bucket(v);

		if (b == QUEUE_HIST_BUCKETS - 1) {
			assert_true(est == d->max_ms);
			continue;
		}
		assert_int_equal(queue_hist_bucket((int64_t)est), b);
		assert_true((double)est <= 1.225 * (double)v + 1 &&
		    (double)est >= (double)v / 1.225 - 1);
	}
}

/* The hours of one tube (-1: every tube merged) against the model's log. */
void
compare_hours(struct run *r, int tube)
{
	struct model *m = r->m;
	int64_t hc = r->h.now / QUEUE_HOUR_MS;
	struct queue_hour out[QUEUE_HOURS];
	int64_t *work = malloc((m->nev + 1) * sizeof(*work));
	int64_t *wait = malloc((m->nev + 1) * sizeof(*wait));
	size_t n = 0, k = 0;
	int rc;

	assert_true(work != NULL && wait != NULL);
	rc = queue_hourly(r->h.q, r->h.now, tube < 0 ? NULL : tube_names[tube],
	    tube < 0 ? 0 : 2, out, &n);
	if (tube >= 0 && !m->exists[tube]) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
		goto done;
	}
	assert_int_equal(rc, 0);
	for (int64_t h = hc; h > hc - QUEUE_HOURS; h--) {
		uint64_t c[5] = { 0 };
		size_t nwork = 0, nwait = 0;

		for (size_t i = 0; i < m->nev; i++) {
			const struct mev *e = &m->ev[i];

			if (e->time / QUEUE_HOUR_MS != h ||
			    (tube >= 0 && e->tube != tube))
				continue;
			c[e->kind]++;
			if (e->kind == EV_WORK)
				work[nwork++] = e->dur;
			if (e->kind == EV_WAIT)
				wait[nwait++] = e->dur;
		}
		if (c[0] + c[1] + c[2] + c[3] + c[4] == 0)
			continue;
		assert_true(k < n);
		assert_true(out[k].start == h * QUEUE_HOUR_MS);
		assert_int_equal(out[k].acks, c[EV_WORK]);
		assert_int_equal(out[k].fails, c[EV_FAIL]);
		assert_int_equal(out[k].buries, c[EV_BURY]);
		assert_int_equal(out[k].ttr_expired, c[EV_TTR]);
		compare_dist(&out[k].work, work, nwork);
		compare_dist(&out[k].wait, wait, nwait);
		k++;
	}
	assert_int_equal(k, n);
done:
	free(work);
	free(wait);
}

/* The total bucket of a duration: (4^(c-1), 4^c], 0 and 1 in bucket 0,
 * the last one everything longer. */
int
total_bucket_of(int64_t ms)
{
	int c = 0;

	while (c < QUEUE_TOTAL_BUCKETS - 1 && ms > queue_total_bound(c))
		c++;
	return c;
}

/* A tube's totals since its first event (those of /metrics) against
 * every event the model logged for it. */
void
compare_totals(struct run *r, int tube)
{
	struct model *m = r->m;
	struct queue_total got[2], want[2];
	struct queue_tube_stats st;

	if (!m->exists[tube])
		return;
	assert_int_equal(
	    queue_tube_stats(r->h.q, r->h.now, tube_names[tube], 2, &st), 0);
	assert_int_equal(
	    queue_tube_totals(r->h.q, st.index, &got[0], &got[1]), 0);
	memset(want, 0, sizeof(want));
	for (size_t i = 0; i < m->nev; i++) {
		const struct mev *e = &m->ev[i];
		struct queue_total *w = &want[e->kind == EV_WORK ? 0 : 1];

		if (e->tube != tube ||
		    (e->kind != EV_WORK && e->kind != EV_WAIT))
			continue;
		w->count++;
		w->total_ms += (uint64_t)e->dur;
		w->bucket[total_bucket_of(e->dur)]++;
	}
	for (int k = 0; k < 2; k++) {
		assert_true(got[k].count == want[k].count);
		assert_true(got[k].total_ms == want[k].total_ms);
		assert_memory_equal(
		    got[k].bucket, want[k].bucket, sizeof(want[k].bucket));
	}
}

void
compare_hourly(struct run *r)
{
	for (int i = -1; i < NTUBE; i++)
		compare_hours(r, i);
	for (int i = 0; i < NTUBE; i++)
		compare_totals(r, i);
}
