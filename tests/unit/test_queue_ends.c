/* Tests of src/queue's task state machine (test_queue.c has put, take
 * and leases): fail, bury and kick; keys and their dedup window; recurring
 * tasks, replace, ack to a tube; delete, flush and pause; takes over
 * several tubes. Every request goes the server's way (decide, encode,
 * decode, apply: t_queue_ops.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "t_queue_ops.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

/* ---- fail, bury, kick -----------------------------------------------------
 */

/* Fail delays by the backoff (1 s, 2 s, 4 s ...), records the error, and
 * buries once attempts reach max_attempts. */
static void
test_fail_backs_off_then_buries(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_task_view v;
	uint64_t a, id, lease;
	int64_t delay = 1000;

	req_for(&req, "t", "a");
	req.max_attempts = 4;
	a = put_req(h, &req);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(take(h, "t", 1, &id, &lease), 0);
		assert_int_equal(fail_task(h, a, lease, "boom"), 0);
		v = view(h, a);
		assert_int_equal(v.state, QUEUE_DELAYED);
		assert_true(v.run_at == h->now + delay);
		assert_int_equal(v.last_error_len, 4);
		assert_memory_equal(v.last_error, "boom", 4);
		assert_int_equal(take(h, "t", 1, &id, NULL), SLUICE_ETIMEDOUT);
		h->now += delay;
		delay *= 2;
	}
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(fail_task(h, a, lease, "last"), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_BURIED);
	assert_int_equal(v.attempts, 4);
	assert_memory_equal(v.last_error, "last", 4);
	assert_true(tstats(h, "t").ctr.fail == 4);
	assert_true(tstats(h, "t").ctr.bury == 1);
}

/* The backoff stops doubling at its cap; a fail may give its own delay. */
static void
test_fail_backoff_is_capped_and_can_be_explicit(void **state)
{
	struct queue_config cfg;
	struct queue_fail_req fr;
	struct qrec rec;
	struct tq h;
	uint64_t a, id, lease;
	int64_t want[] = { 100, 200, 400, 500, 500 };

	(void)state;
	queue_config_default(&cfg);
	cfg.backoff_base_ms = 100;
	cfg.backoff_cap_ms = 500;
	tq_init(&h, &cfg, T0);
	a = put(&h, "t", "a");
	for (int i = 0; i < 5; i++) {
		assert_int_equal(take(&h, "t", 1, &id, &lease), 0);
		assert_int_equal(fail_task(&h, a, lease, ""), 0);
		assert_true(view(&h, a).run_at == h.now + want[i]);
		assert_null(view(&h, a).last_error);
		h.now += want[i];
	}
	assert_int_equal(take(&h, "t", 1, &id, &lease), 0);
	memset(&fr, 0, sizeof(fr));
	fr.id = a;
	fr.lease = lease;
	fr.set_delay = true;
	fr.delay_ms = 7;
	assert_int_equal(
	    run(&h, queue_decide_fail(h.q, h.now, &fr, &rec), &rec), 0);
	assert_true(view(&h, a).run_at == h.now + 7);
	fr.delay_ms = -1;
	assert_int_equal(
	    queue_decide_fail(h.q, h.now, &fr, &rec), SLUICE_EINVAL);
	tq_fini(&h);
}

/* Bury parks a taken task; kick by id brings buried and delayed tasks
 * back; ready and taken ones cannot be kicked. */
static void
test_bury_and_kick_by_id(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, b, id, lease;

	a = put(h, "t", "a");
	req_for(&req, "t", "b");
	req.delay_ms = 60000;
	b = put_req(h, &req);
	assert_int_equal(kick_id(h, a), SLUICE_ESTATE);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(kick_id(h, a), SLUICE_ESTATE);
	assert_int_equal(bury(h, a, lease), 0);
	assert_counts(h, "t", 0, 1, 0, 1);
	assert_int_equal(park(h, a), SLUICE_ESTATE);
	assert_int_equal(bury(h, a, lease), SLUICE_ESTATE);
	h->now += 10;
	assert_int_equal(kick_id(h, a), 0);
	assert_int_equal(view(h, a).state, QUEUE_READY);
	assert_true(view(h, a).run_at == h->now);
	assert_int_equal(kick_id(h, b), 0);
	assert_int_equal(view(h, b).state, QUEUE_READY);
	assert_true(view(h, b).run_at == h->now);
	assert_int_equal(kick_id(h, 77), SLUICE_ENOTFOUND);
	assert_true(tstats(h, "t").ctr.kick == 2);
}

/* A ready or delayed task is parked by force only: without it, bury
 * says the task is not taken, whatever the lease. */
static void
test_bury_of_a_waiting_task_needs_force(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a = put(h, "t", "a"), b;

	req_for(&req, "t", "b");
	req.delay_ms = 60000;
	b = put_req(h, &req);
	assert_int_equal(bury(h, a, 5), SLUICE_ESTATE);
	assert_int_equal(bury(h, a, 0), SLUICE_ESTATE);
	assert_int_equal(bury(h, b, 0), SLUICE_ESTATE);
	assert_int_equal(view(h, a).state, QUEUE_READY);
	assert_int_equal(park(h, a), 0);
	assert_int_equal(view(h, a).state, QUEUE_BURIED);
	assert_int_equal(park(h, b), 0);
	assert_int_equal(view(h, b).state, QUEUE_BURIED);
	assert_int_equal(park(h, a), SLUICE_ESTATE);
	assert_int_equal(park(h, 99), SLUICE_ENOTFOUND);
}

/* Kick N brings back up to N buried tasks, the longest buried first. */
static void
test_kick_n_oldest_buried_first(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t ids[4];

	for (int i = 0; i < 4; i++)
		ids[i] = put(h, "t", "x");
	/* Bury in the order 2, 0, 3, 1 at increasing times. */
	assert_int_equal(park(h, ids[2]), 0);
	h->now++;
	assert_int_equal(park(h, ids[0]), 0);
	h->now++;
	assert_int_equal(park(h, ids[3]), 0);
	h->now++;
	assert_int_equal(park(h, ids[1]), 0);
	assert_int_equal(kick_n(h, "t", 2), 2);
	assert_int_equal(view(h, ids[2]).state, QUEUE_READY);
	assert_int_equal(view(h, ids[0]).state, QUEUE_READY);
	assert_int_equal(view(h, ids[3]).state, QUEUE_BURIED);
	assert_int_equal(kick_n(h, "t", 10), 2);
	assert_int_equal(kick_n(h, "t", 10), 0);
	assert_int_equal(kick_n(h, "nosuch", 1), 0);
}

/* ---- keys ------------------------------------------------------------------
 */

/* A key is unique among the live tasks of its tube, then reserved there
 * for the dedup window after its task completes, then free again. */
static void
test_key_dedup_window(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_stats st;
	uint64_t a, b, id, lease;

	req_for(&req, "t", "a");
	req.key = "order-42";
	req.key_len = 8;
	a = put_req(h, &req);
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_false(res.created);
	assert_true(res.id == a);
	/* Keys are per tube: in another tube the key is another task's,
	 * and nothing of the first shows. */
	req.tube = "u";
	req.tube_len = 1;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	assert_true(res.id != a);
	assert_int_equal(del_key_in(h, "u", "order-42"), 0);
	assert_int_equal(del_key_in(h, "u", "order-42"), SLUICE_ENOTFOUND);
	req.tube = "t";
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(ack(h, a, lease), 0);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.keys == 0 && st.dedup == 1);
	h->now += QUEUE_DEFAULT_DEDUP_MS - 1;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_false(res.created);
	assert_true(res.id == a);
	h->now += 1;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	b = res.id;
	assert_true(b > a);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.keys == 1 && st.dedup == 0);
	assert_int_equal(view(h, b).key_len, 8);
}

/* Delete by key cancels the live task and frees its key at once (the
 * dedup window is for completed work); peek by key sees only live tasks.
 * The same for a delete by id and a flush. */
static void
test_delete_frees_the_key_at_once(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_task_view v;
	struct queue_stats st;
	uint64_t a, b, c;

	req_for(&req, "t", "a");
	req.key = "k";
	req.key_len = 1;
	a = put_req(h, &req);
	assert_int_equal(queue_peek_key(h->q, h->now, "t", 1, "k", 1, &v), 0);
	assert_true(v.id == a);
	assert_int_equal(del_key_in(h, "t", "k"), 0);
	assert_int_equal(del_key_in(h, "t", "k"), SLUICE_ENOTFOUND);
	assert_int_equal(
	    queue_peek_key(h->q, h->now, "t", 1, "k", 1, &v), SLUICE_ENOTFOUND);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.keys == 0 && st.dedup == 0);
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	b = res.id;
	assert_true(b > a);
	assert_int_equal(del_id(h, b), 0);
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	c = res.id;
	assert_true(c > b);
	{
		struct queue_flush_req fr = { "t", 1 };
		struct qrec rec;

		assert_int_equal(
		    run(h, queue_decide_flush(h->q, h->now, &fr, &rec), &rec),
		    0);
	}
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created && res.id > c);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.keys == 1 && st.dedup == 0);
}

/* ---- recurring, replace, ack --to ------------------------------------------
 */

/* Acking a recurring task schedules it at the first run_at + k * period
 * after the ack, with attempts reset. */
static void
test_ack_of_a_recurring_task_reschedules_it(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_task_view v;
	uint64_t a, id, lease;

	req_for(&req, "cron", "tick");
	req.period_ms = 1000;
	a = put_req(h, &req);
	assert_int_equal(take(h, "cron", 1, &id, &lease), 0);
	h->now += 300;
	assert_int_equal(ack(h, a, lease), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_true(v.run_at == T0 + 1000);
	assert_int_equal(v.attempts, 0);
	assert_true(v.period == 1000);
	/* Runs that were missed are skipped. */
	h->now = T0 + 1000;
	assert_int_equal(take(h, "cron", 1, &id, &lease), 0);
	h->now = T0 + 3500;
	assert_int_equal(ack(h, a, lease), 0);
	assert_true(view(h, a).run_at == T0 + 4000);
	assert_true(tstats(h, "cron").ctr.ack == 2);
	assert_true(tstats(h, "cron").ctr.del == 0);
}

/* Replace of a ready task changes its content at once, same id. */
static void
test_replace_of_a_ready_task(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_task_view v;
	uint64_t a;

	req_for(&req, "t", "old");
	req.key = "k";
	req.key_len = 1;
	a = put_req(h, &req);
	req_for(&req, "t", "new!");
	req.key = "k";
	req.key_len = 1;
	req.replace = true;
	req.pri = 3;
	req.delay_ms = 50;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.id == a && !res.created && res.replaced);
	v = view(h, a);
	assert_payload(&v, "new!");
	assert_int_equal(v.pri, 3);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_true(v.created_at == T0);
	assert_int_equal(v.key_len, 1);
	assert_true(tstats(h, "t").ctr.replace == 1);
	assert_true(tstats(h, "t").ctr.put == 1);
	/* A buried task is replaced too, and waits again. */
	assert_int_equal(park(h, a), 0);
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_int_equal(view(h, a).state, QUEUE_DELAYED);
}

/* Replace of a taken task waits for its lease to end: the holder still
 * sees the old content; its ack re-queues the task with the new one. */
static void
test_replace_of_a_taken_task_waits_for_the_ack(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_task_view v;
	uint64_t a, id, lease;

	req_for(&req, "t", "v1");
	req.key = "k";
	req.key_len = 1;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	req_for(&req, "t", "v2");
	req.key = "k";
	req.key_len = 1;
	req.replace = true;
	req.pri = 9;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.replaced && res.id == a);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_TAKEN);
	assert_true(v.replace_pending);
	assert_payload(&v, "v1");
	/* The view shows what is pending. */
	assert_int_equal(v.repl.payload_len, 2);
	assert_memory_equal(v.repl.payload, "v2", 2);
	assert_int_equal(v.repl.pri, 9);
	assert_int_equal(v.repl.ttr, QUEUE_DEFAULT_TTR_MS);
	/* A second replace wins over the first. */
	req.payload = "v3";
	assert_int_equal(try_put(h, &req, &res), 0);
	v = view(h, a);
	assert_memory_equal(v.repl.payload, "v3", 2);
	h->now += 10;
	assert_int_equal(ack(h, a, lease), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_READY);
	assert_payload(&v, "v3");
	assert_int_equal(v.pri, 9);
	assert_int_equal(v.attempts, 0);
	assert_false(v.replace_pending);
	assert_int_equal(ack(h, a, lease), SLUICE_ESTATE);
}

/* The replacement also takes effect when the lease ends otherwise: by ttr
 * expiry, release, fail or bury. */
static void
test_replace_of_a_taken_task_applies_when_the_lease_ends(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	uint64_t a, id, lease;

	for (int way = 0; way < 4; way++) {
		char key[8];

		snprintf(key, sizeof(key), "k%d", way);
		req_for(&req, "t", "old");
		req.key = key;
		req.key_len = strlen(key);
		req.ttr_ms = 100;
		req.max_attempts = 1;
		a = put_req(h, &req);
		assert_int_equal(take(h, "t", 1, &id, &lease), 0);
		assert_true(id == a);
		req.payload = "new";
		req.replace = true;
		assert_int_equal(try_put(h, &req, &res), 0);
		if (way == 0) {
			h->now += 100;
			assert_int_equal(expire(h), 1);
		} else if (way == 1) {
			assert_int_equal(release(h, a, lease, 0, false, 0), 0);
		} else if (way == 2) {
			assert_int_equal(fail_task(h, a, lease, "e"), 0);
		} else {
			assert_int_equal(bury(h, a, lease), 0);
		}
		/* Not buried despite max_attempts 1: new content, new start. */
		assert_int_equal(view(h, a).state, QUEUE_READY);
		assert_int_equal(view(h, a).payload_len, 3);
		assert_memory_equal(view(h, a).payload, "new", 3);
		assert_int_equal(view(h, a).attempts, 0);
		assert_int_equal(del_id(h, a), 0);
	}
}

/* Replace with no live task is an ordinary put, even inside the dedup
 * window; replace needs a key; in another tube the key is another's. */
static void
test_replace_edge_cases(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	uint64_t a, id, lease;

	req_for(&req, "t", "a");
	req.key = "k";
	req.key_len = 1;
	req.replace = true;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(ack(h, a, lease), 0); /* the key's window begins */
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created && res.id != a);
	id = res.id;
	req.tube = "other";
	req.tube_len = 5;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created && !res.replaced && res.id != id);
	req.key_len = 0;
	assert_int_equal(try_put(h, &req, &res), SLUICE_EINVAL);
}

/* ack --to moves the task, same id, ready in the other tube, attempts 0. */
static void
test_ack_to_tube_moves_the_task(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	uint64_t a, id, lease;

	a = put(h, "stage1", "data");
	assert_int_equal(take(h, "stage1", 1, &id, &lease), 0);
	assert_int_equal(ack_to(h, a, lease, "bad name!"), SLUICE_ETUBE);
	h->now += 20;
	assert_int_equal(ack_to(h, a, lease, "stage2"), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_READY);
	assert_int_equal(v.tube_len, 6);
	assert_memory_equal(v.tube, "stage2", 6);
	assert_int_equal(v.attempts, 0);
	assert_true(v.run_at == h->now);
	assert_counts(h, "stage1", 0, 0, 0, 0);
	assert_counts(h, "stage2", 1, 0, 0, 0);
	assert_true(tstats(h, "stage1").ctr.ack == 1);
	assert_int_equal(take(h, "stage2", 1, &id, &lease), 0);
	assert_true(id == a);
	assert_int_equal(ack(h, a, lease), 0);
}

/* ---- delete, flush, pause -------------------------------------------------
 */

/* Delete works in every state; a deleted taken task's lease is gone. */
static void
test_delete_in_each_state(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t r, d, t, b, id, lease;

	r = put(h, "t", "r");
	req_for(&req, "t", "d");
	req.delay_ms = 1000;
	d = put_req(h, &req);
	t = put(h, "t", "t");
	b = put(h, "t", "b");
	assert_int_equal(park(h, b), 0);
	assert_int_equal(del_id(h, r), 0);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == t);
	assert_int_equal(del_id(h, d), 0);
	assert_int_equal(del_id(h, t), 0);
	assert_int_equal(del_id(h, b), 0);
	assert_int_equal(ack(h, t, lease), SLUICE_ENOTFOUND);
	assert_int_equal(del_id(h, t), SLUICE_ENOTFOUND);
	assert_counts(h, "t", 0, 0, 0, 0);
	assert_true(tstats(h, "t").ctr.del == 4);
	assert_true(queue_next_wake(h->q) == INT64_MAX);
	{
		struct queue_delete_req dr = { 0, NULL, 0 };
		struct qrec rec;

		assert_int_equal(queue_decide_delete(h->q, h->now, &dr, &rec),
		    SLUICE_EINVAL);
	}
}

/* Flush cancels every task of one tube, in every state. */
static void
test_flush_cancels_a_whole_tube(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_flush_req fr = { "t", 1 };
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	uint64_t other, id;

	for (int i = 0; i < 5; i++)
		put(h, "t", "x");
	req_for(&req, "t", "keyed");
	req.key = "k";
	req.key_len = 1;
	req.delay_ms = 10;
	put_req(h, &req);
	other = put(h, "u", "y");
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_int_equal(park(h, id + 1), 0);
	assert_int_equal(
	    run(h, queue_decide_flush(h->q, h->now, &fr, &rec), &rec), 0);
	assert_counts(h, "t", 0, 0, 0, 0);
	assert_true(tstats(h, "t").ctr.del == 6);
	assert_int_equal(view(h, other).state, QUEUE_READY);
	/* cancelled, not done: the key is free at once */
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	assert_int_equal(
	    run(h, queue_decide_flush(h->q, h->now, &fr, &rec), &rec), 0);
	/* Flushing an empty or unknown tube logs nothing. */
	assert_int_equal(queue_decide_flush(h->q, h->now, &fr, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	fr.tube = "nosuch";
	fr.tube_len = 6;
	assert_int_equal(queue_decide_flush(h->q, h->now, &fr, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	fr.tube = "";
	fr.tube_len = 0;
	assert_int_equal(
	    queue_decide_flush(h->q, h->now, &fr, &rec), SLUICE_ETUBE);
}

/* A paused tube hands out nothing until the pause ends or is lifted;
 * takes over several tubes skip it. */
static void
test_pause_and_unpause(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str both[2] = { { "p", 1 }, { "q", 1 } };
	uint64_t a, b, id;

	a = put_pri(h, "p", "a", 0);
	b = put_pri(h, "q", "b", 100);
	assert_int_equal(pause_tube(h, "p", h->now + 1000), 0);
	assert_true(tstats(h, "p").paused_until == h->now + 1000);
	assert_true(queue_next_wake(h->q) == h->now + 1000);
	assert_int_equal(take(h, "p", 1, &id, NULL), SLUICE_EPAUSED);
	assert_int_equal(take_from(h, both, 2, 1, false, &id, NULL), 0);
	assert_true(id == b);
	h->now += 1000;
	assert_true(tstats(h, "p").paused_until == 0);
	assert_int_equal(take(h, "p", 1, &id, NULL), 0);
	assert_true(id == a);
	/* Pause, then lift it early; lifting twice logs nothing. */
	put(h, "p", "c");
	assert_int_equal(pause_tube(h, "p", h->now + 5000), 0);
	assert_int_equal(take(h, "p", 1, &id, NULL), SLUICE_EPAUSED);
	assert_int_equal(pause_tube(h, "p", 0), 0);
	assert_int_equal(take(h, "p", 1, &id, NULL), 0);
	{
		struct queue_pause_req pr = { "p", 1, 0 };
		struct qrec rec;

		assert_int_equal(
		    queue_decide_pause(h->q, h->now, &pr, &rec), 0);
		assert_int_equal(rec.type, QREC_NONE);
		pr.until = -1;
		assert_int_equal(
		    queue_decide_pause(h->q, h->now, &pr, &rec), SLUICE_EINVAL);
	}
	/* A tube the queue never had is not made by a pause (nor lifted),
	 * unless the caller asks for it (the beanstalk face, whose watched
	 * tubes exist before their first task). */
	assert_int_equal(pause_tube(h, "fresh", h->now + 10), SLUICE_ENOTFOUND);
	assert_int_equal(pause_tube(h, "fresh", 0), SLUICE_ENOTFOUND);
	assert_int_equal(queue_tube_count(h->q), 2);
	{
		struct queue_pause_req pr = { "fresh", 5, h->now + 10, true };
		struct qrec rec;

		assert_int_equal(
		    run(h, queue_decide_pause(h->q, h->now, &pr, &rec), &rec),
		    0);
	}
	assert_int_equal(queue_tube_count(h->q), 3);
	assert_true(tstats(h, "fresh").paused_until == h->now + 10);
}

/* A take over several tubes picks the best priority across them, then the
 * smallest id; tubes that do not exist are skipped. */
static void
test_take_over_several_tubes(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str ts[3] = { { "a", 1 }, { "b", 1 }, { "none", 4 } };
	uint64_t a1, b1, a2, b2, id;

	a1 = put_pri(h, "a", "a1", 5);
	b1 = put_pri(h, "b", "b1", 5);
	a2 = put_pri(h, "a", "a2", 7);
	b2 = put_pri(h, "b", "b2", 1);
	assert_int_equal(take_from(h, ts, 3, 1, false, &id, NULL), 0);
	assert_true(id == b2);
	assert_int_equal(take_from(h, ts, 3, 1, false, &id, NULL), 0);
	assert_true(id == a1);
	assert_int_equal(take_from(h, ts, 3, 1, false, &id, NULL), 0);
	assert_true(id == b1);
	assert_int_equal(take_from(h, ts, 3, 1, false, &id, NULL), 0);
	assert_true(id == a2);
	assert_int_equal(
	    take_from(h, ts, 3, 1, false, &id, NULL), SLUICE_ETIMEDOUT);
	assert_int_equal(
	    take_from(h, ts, 0, 1, false, &id, NULL), SLUICE_EINVAL);
}

/* A strict take tries the tubes in the order given: the first (not
 * paused) with a ready task gives its best, however urgent the others'. */
static void
test_strict_take_follows_the_order_given(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str ts[3] = { { "none", 4 }, { "a", 1 }, { "b", 1 } };
	struct queue_take_req req = { ts, 3, 1, false, true };
	struct qrec rec;
	uint64_t a1, a2, b1;

	a1 = put_pri(h, "a", "a1", 9);
	a2 = put_pri(h, "a", "a2", 5);
	b1 = put_pri(h, "b", "b1", 0);
	assert_int_equal(
	    run(h, queue_decide_take(h->q, h->now, &req, &rec), &rec), 0);
	assert_true(rec.u.take.id == a2);
	/* a paused tube is passed over */
	assert_int_equal(pause_tube(h, "a", h->now + 1000), 0);
	assert_int_equal(
	    run(h, queue_decide_take(h->q, h->now, &req, &rec), &rec), 0);
	assert_true(rec.u.take.id == b1);
	assert_int_equal(
	    queue_decide_take(h->q, h->now, &req, &rec), SLUICE_EPAUSED);
	assert_int_equal(pause_tube(h, "a", 0), 0);
	assert_int_equal(
	    run(h, queue_decide_take(h->q, h->now, &req, &rec), &rec), 0);
	assert_true(rec.u.take.id == a1);
	assert_int_equal(
	    queue_decide_take(h->q, h->now, &req, &rec), SLUICE_ETIMEDOUT);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tq_setup, tq_teardown)
	const struct CMUnitTest tests[] = {
		T(test_fail_backs_off_then_buries),
		T(test_fail_backoff_is_capped_and_can_be_explicit),
		T(test_bury_and_kick_by_id),
		T(test_bury_of_a_waiting_task_needs_force),
		T(test_kick_n_oldest_buried_first),
		T(test_key_dedup_window),
		T(test_delete_frees_the_key_at_once),
		T(test_ack_of_a_recurring_task_reschedules_it),
		T(test_replace_of_a_ready_task),
		T(test_replace_of_a_taken_task_waits_for_the_ack),
		T(test_replace_of_a_taken_task_applies_when_the_lease_ends),
		T(test_replace_edge_cases),
		T(test_ack_to_tube_moves_the_task),
		T(test_delete_in_each_state),
		T(test_flush_cancels_a_whole_tube),
		T(test_pause_and_unpause),
		T(test_take_over_several_tubes),
		T(test_strict_take_follows_the_order_given),
	};
#undef T
	return cmocka_run_group_tests_name("queue_ends", tests, NULL, NULL);
}
