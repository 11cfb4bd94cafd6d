/* Model test of src/queue: random request sequences, run both through the
 * queue (decide, encode, decode, apply, as the server does) and through a
 * small reference model that keeps live tasks in a plain array and answers
 * everything by linear scans. After every step the error codes, the per
 * tube stats (counts by state, oldest ready age, pause, every counter), the
 * task the next take would get, and every field of one random task must
 * agree. Time moves randomly, so delays, ttr expiry, backoff, dedup
 * windows and pauses all happen.
 *
 * Tubes carry settings (tube set: ttr, max_attempts, backoff, a dead
 * letter tube, and two the queue only keeps) that puts, fails and buries
 * follow, and go away (tube delete, with their tasks when forced). They
 * carry flow limits too (a rate per second with its burst, a cap on tasks
 * taken at once), which the model holds with a token bucket of its own:
 * a take the queue gives or refuses, the model must too.
 *
 * Puts into tubes t2 and t3 may name a fair group (g0..g2), and tubes
 * carry group limits (every group's cap, one group's own cap, a group's
 * pause, every group's rate or one group's own, with a bucket the model
 * keeps on the queue's clock: glimit.h). The model does not replay the
 * rotation's turns: a take must get the best ready task of a group that no
 * limit holds, of the best priority among those groups (any group's, in turn),
 * and the best across the tubes of some choice of those; the model then follows
 * the queue's choice. A group at its cap or paused never hands out a
 * task, and a take finds nothing exactly when the model finds nothing.
 *
 * Keyed puts may debounce (a replace due its window from now) or
 * throttle (ignored while the key's window from its last accepted
 * throttled put is open, whatever became of that task; the model keeps
 * the windows by key), and the windows go through replay and snapshots.
 *
 * Replay: every record also goes to a follower queue through apply alone;
 * their dumps are compared along the way. Snapshots taken at a few points
 * are loaded into fresh queues that then apply the rest of the log, and
 * must end with the same dump.
 *
 * Hourly statistics: the model logs every take, ack, fail, bury and ttr
 * expiry with its time and duration; now and then (and at the end) each
 * tube's hours and those of every tube merged must agree: counts, totals
 * and maxima exactly, each percentile in the bucket of the true one (the
 * nearest rank of the durations logged) and within the stated error.
 *
 * Workflows (dependencies and the waiting state, results, cancelling,
 * batches, schedules) have a model of their own: test_model_flow.c. The
 * helpers and log checks both use are t_model.h's. */
#include "t_model_queue.h"

static void
step(struct run *r, size_t i)
{
	uint64_t c = rnd(r, 100);
	int64_t dt = 0;

	/* Time: usually a little, now and then a jump past windows. */
	if (rnd(r, 3) == 0)
		dt = (int64_t)rnd(r, 400);
	if (rnd(r, 200) == 0)
		dt = (int64_t)rnd(r, 12000);
	/* Rarely hours at once: the statistics' window moves on. */
	if (rnd(r, 1500) == 0)
		dt = (int64_t)rnd(r, 60) * QUEUE_HOUR_MS;
	r->h.now += dt;
	m_purge(r->m, r->h.now);
	m_gsync(r->m, r->h.now);
	if (rnd(r, 10) < 7) {
		op_expire(r);
		m_gsync(r->m, r->h.now);
	}
	/* Keep the live set small enough for linear scans. */
	if (r->m->n > 300 && c < 46)
		c = 85 + c % 4;
	if (c < 28)
		op_put(r);
	else if (c < 46)
		op_take(r);
	else if (c < 58)
		op_ack(r);
	else if (c < 63)
		op_release(r);
	else if (c < 70)
		op_fail(r);
	else if (c < 72)
		op_touch(r);
	else if (c < 73)
		op_untake(r);
	else if (c < 76)
		op_bury(r);
	else if (c < 83)
		op_kick(r);
	else if (c < 85)
		op_update(r);
	else if (c < 88)
		op_delete(r);
	else if (c < 89)
		rnd(r, 2) ? op_flush(r) : op_delete_where(r);
	else if (c < 91)
		op_pause(r);
	else if (c < 92)
		rnd(r, 8) ? op_tube_set(r) : op_tube_delete(r);
	else if (c < 93)
		rnd(r, 2) ? op_tube_limit(r) : op_group_set(r);
	else if (c < 96)
		op_sessions(r, 1 + rnd(r, NSESSION));
	else if (c < 97)
		op_sessions(r, 0);
	else
		op_expire(r);
	r->ops++;
	m_gsync(r->m, r->h.now);
	compare(r);
	feed_follower(r);
	if (i % 2500 == 0)
		assert_true(tq_same(r->h.q, r->follower, r->h.now));
	if (i % 500 == 0)
		compare_hourly(r);
	if (r->nsnap < NSNAP && i == (size_t)(r->nsnap + 1) * STEPS / 4) {
		buf_init(&r->snap[r->nsnap]);
		tm_snapshot(&r->h, &r->snap[r->nsnap], &r->snap_at[r->nsnap]);
		r->nsnap++;
	}
}

/* Takes that found a group held by its rate, over every seed. */
static uint64_t grate_total;

/* One seed: STEPS steps, then the follower, a full replay and each
 * snapshot plus the rest of the log must end in the primary's state. */
static void
run_seed(uint64_t seed, uint8_t retry, uint64_t *ops, uint64_t *records)
{
	struct run *r = calloc(1, sizeof(*r));
	struct queue *replay;

	assert_non_null(r);
	r->m = calloc(1, sizeof(*r->m));
	assert_non_null(r->m);
	queue_config_default(&r->m->cfg);
	r->m->cfg.dedup_ms = 5000;
	r->m->cfg.backoff_base_ms = 100;
	r->m->cfg.backoff_cap_ms = 1000;
	r->m->cfg.default_ttr_ms = 1000;
	r->m->cfg.max_ttr_ms = 10000;
	r->m->cfg.max_payload = 59;
	/* Half the seeds keep acked tasks as done, a few at most. */
	if (seed % 2 == 1) {
		r->m->cfg.keep_done_ms = 3000;
		r->m->cfg.max_done = 40;
	}
	r->m->cfg.lost_lease_retry = retry;
	r->m->next_id = 1;
	for (int i = 0; i < NTUBE; i++)
		m_conf_clear(&r->m->conf[i]);
	tq_init(&r->h, &r->m->cfg, T0);
	r->follower = queue_new(&r->m->cfg);
	r->rnd = seed;
	/* Usage per namespace is counted all along (queue_check compares it
	 * with the sums of the tubes at each step), and the namespaces
	 * change halfway, as a reloaded token file changes them. */
	assert_int_equal(queue_acct_set(r->h.q, ns, 3), 0);
	for (size_t i = 1; i <= STEPS; i++) {
		if (i == STEPS / 2)
			assert_int_equal(queue_acct_set(r->h.q, ns + 1, 3), 0);
		step(r, i);
	}
	assert_true(tq_same(r->h.q, r->follower, r->h.now));
	compare_hourly(r);
	/* apply needs no configuration but the window outcomes are kept
	 * (outcome.h: the node's own --dedup-window) */
	replay = tm_rebuilt(&r->h, &r->m->cfg, NULL, 0);
	/* Counted from the records as they came, or from the state after a
	 * restart: the same. */
	assert_int_equal(queue_acct_set(replay, ns + 1, 3), 0);
	assert_int_equal(queue_check(replay, NULL), 0);
	for (size_t i = 0; i < 3; i++) {
		struct queue_usage a, b;

		queue_acct_usage(r->h.q, i, &a);
		queue_acct_usage(replay, i, &b);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	queue_free(replay);
	for (int k = 0; k < r->nsnap; k++) {
		queue_free(
		    tm_rebuilt(&r->h, &r->m->cfg, &r->snap[k], r->snap_at[k]));
		buf_fini(&r->snap[k]);
	}
	{
		struct queue_stats st;
		const struct queue_counters *c = &st.ctr;

		assert_int_equal(queue_stats(r->h.q, r->h.now, &st), 0);
		fprintf(stderr,
		    "seed %" PRIu64 ": put %" PRIu64 " take %" PRIu64
		    " ack %" PRIu64 " release %" PRIu64 " fail %" PRIu64
		    " bury %" PRIu64 " kick %" PRIu64 " delete %" PRIu64
		    " ttr %" PRIu64 " session %" PRIu64 " replace %" PRIu64
		    ", %" PRIu64 " tasks, %" PRIu64 " done; tube set %" PRIu64
		    " delete %" PRIu64 ", dead letters %" PRIu64
		    "; limits %" PRIu64 ", held %" PRIu64
		    "; group sets %" PRIu64 ", held by a group %" PRIu64
		    " (by its rate %" PRIu64 ")\n",
		    seed, c->put, c->take, c->ack, c->release, c->fail, c->bury,
		    c->kick, c->del, c->ttr_expired, c->session_released,
		    c->replace, st.tasks, st.done, r->tube_sets,
		    r->tube_deletes, r->dead_letters, r->tube_limits, r->held,
		    r->group_sets, r->gheld, r->grate);
		assert_true(r->tube_sets > 0 && r->tube_deletes > 0 &&
		    r->dead_letters > 0 && r->tube_limits > 0 && r->held > 0);
		assert_true(r->group_sets > 0 && r->gheld > 0);
		grate_total += r->grate;
	}
	*ops += r->ops;
	*records += r->records;
	queue_free(r->follower);
	tq_fini(&r->h);
	free(r->m->ev);
	free(r->m);
	free(r);
}

static void
test_queue_agrees_with_the_model(void **state)
{
	grate_total = 0;
	const uint64_t seeds[] = { 1, 2, 3, 0x5eed, 20240601 };
	uint64_t base = t_seed(0), ops = 0, records = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		run_seed(seeds[i] + base,
		    i == 0 ? QUEUE_RETRY_IMMEDIATE : QUEUE_RETRY_BACKOFF, &ops,
		    &records);
	fprintf(stderr,
	    "model: %" PRIu64 " operations, %" PRIu64 " records; kept by "
	    "a tube %" PRIu64 ", lost leases by a tube's retry %" PRIu64
	    ", lost leases moved %" PRIu64 ", fatal fails moved %" PRIu64 "\n",
	    ops, records, seams.own_keep, seams.own_retry, seams.lost_moved,
	    seams.fatal_moved);
	assert_true(ops >= 100000);
	assert_true(grate_total > 0); /* a group's rate held a take */
	assert_true(seams.own_keep > 0 && seams.own_retry > 0);
	assert_true(seams.lost_moved > 0 && seams.fatal_moved > 0);
	fprintf(stderr,
	    "hourly: ttr setbacks %" PRIu64 " (burying or moved %" PRIu64
	    "), session setbacks %" PRIu64 ", dead-letter moves %" PRIu64
	    ", untakes %" PRIu64 ", tubes deleted with statistics %" PRIu64
	    "\n",
	    hseams.ttr, hseams.ttr_bury, hseams.session, hseams.moved,
	    hseams.untake, hseams.freed);
	assert_true(hseams.ttr > 0 && hseams.ttr_bury > 0);
	assert_true(hseams.session > 0 && hseams.moved > 0);
	assert_true(hseams.untake > 0 && hseams.freed > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_agrees_with_the_model),
	};

	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
