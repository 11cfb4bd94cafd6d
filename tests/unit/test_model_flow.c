/* Model test of the queue's workflows (deps.h, batch.h, sched.h,
 * queue_outcome.h): random requests run both through the queue (decide,
 * encode, decode, apply, as the server does) and through a small
 * reference model that keeps tasks, the dependency graph, batches and
 * schedules in plain arrays and answers by linear scans. test_model.c
 * does the same for the rest of the queue (keys, groups, limits, hourly
 * statistics); this one adds what issue 29 brought:
 *
 * - puts with parents (ids named, one unknown: ENOTFOUND, one twice:
 *   EINVAL; now and then one more by key, a schedule's task, found only
 *   in the put's tube) under each on-parent-failure rule; the waiting state;
 * the parents' outcomes as the queue keeps them (a parent's node lives while
 *   its task does or a live child names it; forgotten, it reads as acked
 *   without a result); the cascade of a failure down the graph, breadth
 *   first as the queue settles it ("task N failed: ERROR");
 * - acks with results (a take of a child carries its parents' results),
 *   ack --to, acked tasks kept as done a while (half the seeds: a done
 *   parent's result comes from the task, then from its node once it is
 *   purged), fails (fatal, at max_attempts, to a dead-letter tube),
 *   buries (of taken tasks and, forced, of queued ones; a task waiting
 *   for its parents is parked by no one: ESTATE), kicks, updates,
 *   deletes, flushes (every task of a tube, by id), ttr expiry, a
 *   session's end (its leases that are not detached);
 * - cancel of ready, delayed, waiting, buried and taken tasks (a taken
 *   one is marked: its touch is ECANCELED, the end of its lease in any
 *   way a DELETE: a cancelled task is never handed out again), with
 *   the cascade to its children;
 * - the outcomes a waiter reads (queue_result: done with its result,
 *   dead-lettered, deleted, cancelled, kept the dedup window; else the
 *   live task) and the final callback, which must name exactly the tasks
 *   each record ends (acked, buried, dead-lettered, removed), children
 *   ended by their parent's failure included;
 * - batches: puts into a batch, callbacks set, close; when a batch ends
 *   the model (as the leader) fires what it owes, and the callbacks are
 *   put exactly once, with the counts; an ended batch is forgotten after
 *   the dedup window, and its name starts a new one;
 * - schedules (every minute or every five, catch-up none, one or all):
 *   set, pause, resume, delete; the model advances the clock and fires
 *   each due slot as the server's timer does (ops/sched.c); a slot's task
 *   is put once, and a FIRE of a slot already decided is refused.
 *
 * After every step: each tube's counts by state (waiting included) and
 * counters, the task the next take would get, one random task's fields,
 * the dependencies and parents' outcomes of random ids, every batch's
 * counts and every schedule, the outcomes of random ids, the tasks named
 * final, and the queue's next wake; every take is checked: a child is never
 * handed out before each of its parents is acked (or failed under
 * `ignore`, or an operator kicked the child), and it carries exactly
 * the results the model expects.
 *
 * Restarts: twice per seed the queue the decisions come from is replaced
 * by one rebuilt from the log (from the start, or from a snapshot taken
 * earlier plus the log after it), and the restart's lease ends follow,
 * as when a node starts; schedules then must not fire a slot again.
 * Every record also goes to a follower through apply alone, compared
 * along the way, and at the end a full replay and the snapshot plus the
 * rest of the log must give the same dump. The helpers and log checks
 * this shares with test_model.c are t_model.h's. */
#include "t_model_flow.h"

/* ---- The run ------------------------------------------------------------- */

static void
step(struct run *r, size_t i)
{
	struct model *m = r->m;
	uint64_t c = rnd(r, 100);
	int64_t dt = rnd(r, 3) == 0 ? (int64_t)rnd(r, 400) : 0;

	if (rnd(r, 60) == 0)
		dt = (int64_t)rnd(r, 3 * MIN_MS);
	if (rnd(r, 700) == 0)
		dt = (int64_t)rnd(r, 120 * MIN_MS); /* a gap: catch-up */
	r->h.now += dt;
	m_tick(m, r->h.now);
	op_expire(r);
	fire_schedules(r);
	fire_batches(r);
	if (m->n > 250 && c < 40)
		c = 40 + c % 30; /* keep the live set small */
	if (c < 30)
		op_put(r);
	else if (c < 44)
		op_take(r);
	else if (c < 56)
		op_ack(r);
	else if (c < 59)
		op_release(r);
	else if (c < 64)
		op_fail(r);
	else if (c < 66)
		op_touch(r);
	else if (c < 70)
		op_bury(r);
	else if (c < 74)
		op_kick(r);
	else if (c < 77)
		op_delete(r);
	else if (c < 83)
		op_cancel(r);
	else if (c < 86)
		op_batch_set(r);
	else if (c < 89)
		op_batch_close(r);
	else if (c < 91)
		op_sched_set(r);
	else if (c < 93)
		op_sched_pause(r);
	else if (c < 94)
		rnd(r, 4) ? op_sched_stale(r) : op_sched_delete(r);
	else if (c < 97)
		op_update(r);
	else if (c < 98 && rnd(r, 4) == 0)
		op_flush(r);
	else if (c < 98)
		op_session_gone(r);
	else
		op_take(r);
	/* callbacks owed by this step's record are fired at once too */
	fire_batches(r);
	compare(r);
	feed_follower(r);
	if (i % 1000 == 0)
		assert_true(tq_same(r->h.q, r->follower, r->h.now));
	if (i == STEPS / 4)
		tm_snapshot(&r->h, &r->snap, &r->snap_at);
	if (i == STEPS / 2)
		restart(r, false);
	if (i == 3 * STEPS / 4)
		restart(r, true);
}

static void
run_seed(uint64_t seed, struct run *total)
{
	struct run *r = calloc(1, sizeof(*r));
	struct model *m = calloc(1, sizeof(*m));
	struct queue_tube_set_req ts;
	struct qrec rec;

	assert_true(r != NULL && m != NULL);
	r->m = m;
	queue_config_default(&m->cfg);
	m->cfg.dedup_ms = 5000;
	m->cfg.default_ttr_ms = 1000;
	/* half the seeds keep acked tasks as done a while, a few at most:
	 * a done parent's result comes from the task, then its node */
	if (seed % 2 == 1) {
		m->cfg.keep_done_ms = 3000;
		m->cfg.max_done = 30;
	}
	m->cfg.lost_lease_retry = QUEUE_RETRY_IMMEDIATE;
	m->next_id = 1;
	tq_init(&r->h, &m->cfg, T0);
	queue_on_final(r->h.q, on_final, m);
	r->follower = queue_new(&m->cfg);
	buf_init(&r->snap);
	r->rnd = seed;
	/* t1's failures go to dl */
	memset(&ts, 0, sizeof(ts));
	ts.tube = "t1";
	ts.tube_len = 2;
	ts.set = QREC_TS_DEAD_LETTER;
	ts.conf.dead_letter = "dl";
	ts.conf.dead_letter_len = 2;
	assert_int_equal(queue_decide_tube_set(r->h.q, r->h.now, &ts, &rec), 0);
	commit(r, &rec);
	for (size_t i = 1; i <= STEPS; i++)
		step(r, i);
	assert_true(tq_same(r->h.q, r->follower, r->h.now));
	queue_free(tm_rebuilt(&r->h, &m->cfg, NULL, 0));
	queue_free(tm_rebuilt(&r->h, &m->cfg, &r->snap, r->snap_at));
	fprintf(stderr,
	    "seed %" PRIu64 ": %" PRIu64 " ids; children taken %" PRIu64
	    ", results %" PRIu64 ", cancels taken %" PRIu64 " queued %" PRIu64
	    ", callbacks %" PRIu64 ", slots put %" PRIu64 " skipped %" PRIu64
	    ", stale fires refused %" PRIu64 ", restarts %" PRIu64 "\n",
	    seed, m->next_id - 1, r->children_taken, r->results_seen,
	    r->cancel_taken, r->cancel_queued, r->callbacks, r->slots_put,
	    r->slots_skipped, r->stale_refused, r->restarts);
	total->children_taken += r->children_taken;
	total->results_seen += r->results_seen;
	total->cancel_taken += r->cancel_taken;
	total->cancel_queued += r->cancel_queued;
	total->callbacks += r->callbacks;
	total->slots_put += r->slots_put;
	total->slots_skipped += r->slots_skipped;
	total->stale_refused += r->stale_refused;
	total->restarts += r->restarts;
	total->flushed += r->flushed;
	total->key_parents += r->key_parents;
	total->sessions_gone += r->sessions_gone;
	buf_fini(&r->snap);
	queue_free(r->follower);
	tq_fini(&r->h);
	free(m);
	free(r);
}

static void
test_workflows_agree_with_the_model(void **state)
{
	const uint64_t seeds[] = { 1, 2, 7, 0x5eed };
	uint64_t base = t_seed(0);
	struct run total;

	(void)state;
	memset(&total, 0, sizeof(total));
	memset(rules_applied, 0, sizeof(rules_applied));
	memset(cancels, 0, sizeof(cancels));
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		run_seed(seeds[i] + base, &total);
	/* each part was reached */
	assert_true(total.children_taken > 0 && total.results_seen > 0);
	assert_true(total.cancel_taken > 0 && total.cancel_queued > 0);
	assert_true(total.callbacks > 0 && total.slots_put > 0);
	assert_true(total.slots_skipped > 0 && total.stale_refused > 0);
	assert_true(total.restarts == 2 * 4);
	assert_true(total.flushed > 0 && total.key_parents > 0);
	assert_true(total.sessions_gone > 0);
	fprintf(stderr,
	    "rules applied: fail %" PRIu64 ", ignore %" PRIu64
	    ", cancel %" PRIu64 "\n",
	    rules_applied[QUEUE_PARENT_FAIL],
	    rules_applied[QUEUE_PARENT_IGNORE],
	    rules_applied[QUEUE_PARENT_CANCEL]);
	for (int k = 0; k < QUEUE_PARENT_END_; k++)
		assert_true(rules_applied[k] > 0);
	fprintf(stderr,
	    "cancelled: ready %" PRIu64 ", delayed %" PRIu64
	    ", waiting %" PRIu64 ", buried %" PRIu64 ", taken %" PRIu64 "\n",
	    cancels[QUEUE_READY], cancels[QUEUE_DELAYED],
	    cancels[QUEUE_WAITING], cancels[QUEUE_BURIED],
	    cancels[QUEUE_TAKEN]);
	assert_true(cancels[QUEUE_READY] > 0 && cancels[QUEUE_DELAYED] > 0);
	assert_true(cancels[QUEUE_WAITING] > 0 && cancels[QUEUE_BURIED] > 0);
	assert_true(cancels[QUEUE_TAKEN] > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workflows_agree_with_the_model),
	};

	return cmocka_run_group_tests_name("model_flow", tests, NULL, NULL);
}
