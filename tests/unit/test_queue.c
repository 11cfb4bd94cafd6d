/* Tests of src/queue's task state machine (test_queue_ends.c,
 * test_queue_query.c and test_queue_snap.c test the rest): put and take
 * (leases, the take order, delays), and leases (release, stale and zero
 * leases, force, ttr expiry, touch, a session's end, lost leases and
 * their retry, untake, restarts), every request through the same path as
 * the server (decide, encode, decode, apply: t_queue_ops.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "t_queue_ops.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

/* ---- put and take ------------------------------------------------------ */

/* A put gives increasing ids; a take returns the task with a lease that is
 * the LSN of its TAKE record, one attempt, and the ttr deadline. */
static void
test_put_then_take_gives_a_lease_and_a_deadline(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	uint64_t a, b, id, lease;

	a = put(h, "jobs", "one");
	b = put(h, "jobs", "two");
	assert_true(a == 1 && b == 2);
	assert_counts(h, "jobs", 2, 0, 0, 0);
	h->now += 5;
	assert_int_equal(take(h, "jobs", 7, &id, &lease), 0);
	assert_true(id == a && lease == 3);
	v = view(h, id);
	assert_int_equal(v.attempts, 1);
	assert_true(v.taken_at == h->now);
	assert_true(v.deadline == h->now + QUEUE_DEFAULT_TTR_MS);
	assert_true(v.session == 7 && !v.detached);
	assert_true(v.created_at == T0 && v.updated_at == h->now);
	assert_int_equal(v.pri, QUEUE_DEFAULT_PRI);
	assert_payload(&v, "one");
	assert_counts(h, "jobs", 1, 0, 1, 0);
	assert_int_equal(ack(h, id, lease), 0);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), SLUICE_ENOTFOUND);
	assert_counts(h, "jobs", 1, 0, 0, 0);
	assert_true(tstats(h, "jobs").ctr.ack == 1);
}

/* queue_task_dep_lsn: a take depends on the last record that placed a
 * task of its tube, not on a take under a session lease, nor on records
 * of other tubes; a detached take, and a record that changes a tube's
 * state, count. */
static void
test_a_takes_dependency_is_its_tubes_last_placing_record(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str b = { "b", 1 };
	uint64_t a1, b1, id, lease;

	a1 = put(h, "a", "one"); /* lsn 1 */
	b1 = put(h, "b", "two"); /* lsn 2 */
	assert_true(queue_task_dep_lsn(h->q, a1) == 1);
	assert_true(queue_task_dep_lsn(h->q, b1) == 2);
	(void)put(h, "a", "three");                        /* lsn 3 */
	assert_int_equal(take(h, "a", 7, &id, &lease), 0); /* lsn 4 */
	assert_true(id == a1);
	assert_true(queue_task_dep_lsn(h->q, a1) == 3);
	assert_true(queue_task_dep_lsn(h->q, b1) == 2);
	assert_int_equal(take_from(h, &b, 1, 7, true, &id, &lease), 0);
	assert_true(id == b1);
	assert_true(queue_task_dep_lsn(h->q, b1) == h->lsn);  /* detached */
	assert_true(queue_task_dep_lsn(h->q, 999) == h->lsn); /* no task */
}

/* queue_lease_restart counts a lease's ttr from a later moment, never
 * from an earlier one, and only for the lease the task holds. */
static void
test_a_lease_restarts_from_its_answer(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	uint64_t id, lease;

	(void)put(h, "jobs", "one");
	assert_int_equal(take(h, "jobs", 7, &id, &lease), 0);
	v = view(h, id);
	assert_true(v.deadline == h->now + QUEUE_DEFAULT_TTR_MS);
	assert_true(queue_lease_restart(h->q, id, lease, h->now + 40) ==
	    h->now + 40 + QUEUE_DEFAULT_TTR_MS);
	assert_true(view(h, id).deadline == h->now + 40 + QUEUE_DEFAULT_TTR_MS);
	assert_true(queue_lease_restart(h->q, id, lease, h->now) ==
	    h->now + 40 + QUEUE_DEFAULT_TTR_MS);
	assert_true(queue_lease_restart(h->q, id, lease + 1, h->now + 90) == 0);
	assert_true(view(h, id).deadline == h->now + 40 + QUEUE_DEFAULT_TTR_MS);
	tq_check(h);
}

/* Ready order is priority first, then id (FIFO among equals). */
static void
test_take_order_is_priority_then_id(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b, c, d, id;

	a = put_pri(h, "t", "a", 10);
	b = put_pri(h, "t", "b", 5);
	c = put_pri(h, "t", "c", 10);
	d = put_pri(h, "t", "d", 0);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == d);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == b);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == a);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == c);
	assert_int_equal(take(h, "t", 1, &id, NULL), SLUICE_ETIMEDOUT);
}

/* Tasks due at one priority come out in the order they became due, not
 * in id order: a later put that was due first is taken first, and a
 * plain put made after both waits behind them (priority, run_at, id). */
static void
test_take_order_is_priority_then_due_time_then_id(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t late, early, plain, urgent, id;

	req_for(&req, "t", "due at +200");
	req.delay_ms = 200;
	late = put_req(h, &req);
	req_for(&req, "t", "due at +100");
	req.delay_ms = 100;
	early = put_req(h, &req);
	h->now = T0 + 300;
	plain = put(h, "t", "plain");
	urgent = put_pri(h, "t", "urgent", 1);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == urgent);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == early);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == late);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == plain);
}

/* A delayed task is not taken before its run_at, and is ready from then
 * on; a run_at in the past means now. */
static void
test_delayed_task_gets_ready_at_run_at(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, b, id;

	req_for(&req, "t", "later");
	req.delay_ms = 1000;
	a = put_req(h, &req);
	assert_counts(h, "t", 0, 1, 0, 0);
	assert_true(view(h, a).run_at == T0 + 1000);
	assert_true(queue_next_wake(h->q) == T0 + 1000);
	assert_int_equal(take(h, "t", 1, &id, NULL), SLUICE_ETIMEDOUT);
	h->now = T0 + 999;
	assert_int_equal(take(h, "t", 1, &id, NULL), SLUICE_ETIMEDOUT);
	h->now = T0 + 1000;
	assert_counts(h, "t", 1, 0, 0, 0);
	assert_true(queue_next_wake(h->q) == INT64_MAX);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == a);

	req_for(&req, "t", "past");
	req.run_at = T0 - 5000;
	b = put_req(h, &req);
	assert_int_equal(view(h, b).state, QUEUE_READY);
	assert_true(view(h, b).run_at == h->now);
}

/* ---- leases -------------------------------------------------------------- */

/* Release puts the task back with the delay and priority asked, attempts
 * kept. */
static void
test_release_with_delay_and_new_priority(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	uint64_t a, b, id, lease;

	a = put_pri(h, "t", "a", 100);
	b = put_pri(h, "t", "b", 50);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == b);
	assert_int_equal(release(h, b, lease, 2000, true, 1), 0);
	v = view(h, b);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_int_equal(v.pri, 1);
	assert_int_equal(v.attempts, 1);
	assert_true(v.run_at == h->now + 2000);
	assert_true(v.lease == 0);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == a);
	h->now += 2000;
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == b);
	assert_int_equal(view(h, b).attempts, 2);
	/* Without a delay or priority: ready at once, priority kept. */
	assert_int_equal(release(h, b, lease, 0, false, 0), 0);
	v = view(h, b);
	assert_int_equal(v.state, QUEUE_READY);
	assert_int_equal(v.pri, 1);
	assert_true(tstats(h, "t").ctr.release == 2);
}

/* A lease that is not the task's current one is refused; an unknown id is
 * not found; a task that is not taken is ESTATE whatever the lease. */
static void
test_stale_leases(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, id, l1, l2;

	a = put(h, "t", "a");
	assert_int_equal(ack(h, a, 0), SLUICE_ESTATE);
	assert_int_equal(ack(h, a, 12345), SLUICE_ESTATE);
	assert_int_equal(take(h, "t", 1, &id, &l1), 0);
	assert_int_equal(ack(h, a, l1 + 1), SLUICE_ESTALE);
	assert_int_equal(touch(h, a, l1 + 1), SLUICE_ESTALE);
	assert_int_equal(bury(h, a, l1 + 1), SLUICE_ESTALE);
	assert_int_equal(fail_task(h, a, l1 + 1, "x"), SLUICE_ESTALE);
	assert_int_equal(release(h, a, l1 + 1, 0, false, 0), SLUICE_ESTALE);
	assert_int_equal(release(h, a, l1, 0, false, 0), 0);
	/* Released: the task is not taken, whatever lease comes. */
	assert_int_equal(ack(h, a, l1), SLUICE_ESTATE);
	assert_int_equal(take(h, "t", 1, &id, &l2), 0);
	assert_true(l2 > l1);
	/* Taken again: the old lease is stale. */
	assert_int_equal(ack(h, a, l1), SLUICE_ESTALE);
	assert_int_equal(ack(h, 999, l2), SLUICE_ENOTFOUND);
	{
		/* A refused request leaves the record untouched. */
		struct queue_ack_req req = { a, l1, NULL, 0 };
		struct qrec rec;

		memset(&rec, 0xa5, sizeof(rec));
		assert_int_equal(
		    queue_decide_ack(h->q, h->now, &req, &rec), SLUICE_ESTALE);
		assert_int_equal(rec.type, 0xa5a5);
	}
	assert_int_equal(ack(h, a, l2), 0);
	assert_int_equal(ack(h, a, l2), SLUICE_ENOTFOUND);
}

/* Lease 0 is no wildcard: on a task another worker holds, every lease
 * operation is refused as stale, and the holder's lease still works. */
static void
test_lease_zero_is_refused(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, id, lease;

	a = put(h, "t", "a");
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(ack(h, a, 0), SLUICE_ESTALE);
	assert_int_equal(touch(h, a, 0), SLUICE_ESTALE);
	assert_int_equal(bury(h, a, 0), SLUICE_ESTALE);
	assert_int_equal(fail_task(h, a, 0, "x"), SLUICE_ESTALE);
	assert_int_equal(release(h, a, 0, 0, false, 0), SLUICE_ESTALE);
	assert_int_equal(view(h, a).state, QUEUE_TAKEN);
	assert_true(view(h, a).lease == lease);
	assert_int_equal(ack(h, a, lease), 0);
}

/* force skips the lease check (any lease, 0 too) but not the state: on a
 * task that is not taken it is still ESTATE (bury aside: it parks a
 * waiting task by force). */
static void
test_force_overrides_the_lease_only(void **state)
{
	static const char *const ops[] = { "touch", "release", "fail", "ack" };
	struct tq *h = tq_of(state);
	uint64_t a, id, lease;

	a = put(h, "t", "a");
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(forced(h, ops[i], a, 0), SLUICE_ESTATE);
		assert_int_equal(forced(h, ops[i], 99, 0), SLUICE_ENOTFOUND);
	}
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(forced(h, "touch", a, lease + 7), 0);
	assert_int_equal(forced(h, "touch", a, 0), 0);
	assert_int_equal(view(h, a).state, QUEUE_TAKEN);
	assert_int_equal(forced(h, "release", a, 0), 0);
	assert_int_equal(view(h, a).state, QUEUE_READY);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(forced(h, "fail", a, lease + 1), 0);
	assert_int_equal(view(h, a).state, QUEUE_DELAYED);
	h->now = view(h, a).run_at;
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(forced(h, "bury", a, 0), 0);
	assert_int_equal(view(h, a).state, QUEUE_BURIED);
	assert_int_equal(kick_id(h, a), 0);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(forced(h, "ack", a, 0), 0);
	assert_int_equal(forced(h, "ack", a, 0), SLUICE_ENOTFOUND);
}

static void
assert_error(const struct queue_task_view *v, const char *text)
{
	assert_int_equal(v->last_error_len, strlen(text));
	assert_memory_equal(v->last_error, text, v->last_error_len);
}

/* An expired lease puts the task back with its attempts, delayed by the
 * backoff of a fail and with why in last_error; the old lease is then
 * stale. */
static void
test_ttr_expiry_releases_and_keeps_attempts(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_task_view v;
	uint64_t a, id, lease;

	req_for(&req, "t", "a");
	req.ttr_ms = 500;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(queue_next_wake(h->q) == h->now + 500);
	h->now += 499;
	assert_int_equal(expire(h), 0);
	h->now += 1;
	assert_int_equal(expire(h), 1);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_true(v.run_at == h->now + QUEUE_DEFAULT_BACKOFF_BASE_MS);
	assert_int_equal(v.attempts, 1);
	assert_error(&v, "ttr expired after 500ms");
	assert_int_equal(ack(h, a, lease), SLUICE_ESTATE);
	assert_true(tstats(h, "t").ctr.ttr_expired == 1);
	assert_true(tstats(h, "t").ctr.release == 0);
}

/* With max_attempts, the lease that expires at the last attempt buries
 * the task instead. */
static void
test_ttr_expiry_buries_at_max_attempts(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, id;

	req_for(&req, "t", "a");
	req.ttr_ms = 100;
	req.max_attempts = 2;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	h->now += 100;
	assert_int_equal(expire(h), 1);
	assert_int_equal(view(h, a).state, QUEUE_DELAYED);
	h->now += QUEUE_DEFAULT_BACKOFF_BASE_MS;
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	h->now += 100;
	assert_int_equal(expire(h), 1);
	assert_int_equal(view(h, a).state, QUEUE_BURIED);
	assert_int_equal(view(h, a).attempts, 2);
	{
		struct queue_task_view v = view(h, a);

		assert_error(&v, "ttr expired after 100ms");
	}
	assert_true(tstats(h, "t").ctr.bury == 1);
	assert_true(tstats(h, "t").ctr.ttr_expired == 2);
}

/* Touch moves the deadline to now + ttr. */
static void
test_touch_extends_the_deadline(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, id, lease;

	req_for(&req, "t", "a");
	req.ttr_ms = 1000;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	h->now += 800;
	assert_int_equal(touch(h, a, lease), 0);
	assert_true(view(h, a).deadline == h->now + 1000);
	assert_true(queue_next_wake(h->q) == h->now + 1000);
	h->now += 900;
	assert_int_equal(expire(h), 0);
	assert_int_equal(view(h, a).lease, lease);
	h->now += 100;
	assert_int_equal(expire(h), 1);
	assert_int_equal(touch(h, a, lease), SLUICE_ESTATE);
}

/* A session going away releases the tasks it holds under session leases,
 * and only those: detached leases and other sessions keep theirs. */
static void
test_session_gone_releases_only_its_session_leases(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str s = { "t", 1 };
	struct queue_task_view v;
	uint64_t a, b, c, d, id;

	a = put(h, "t", "a");
	b = put(h, "t", "b");
	c = put(h, "t", "c");
	d = put(h, "t", "d");
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_int_equal(take_from(h, &s, 1, 1, true, &id, NULL), 0);
	assert_int_equal(take(h, "t", 2, &id, NULL), 0);
	assert_true(id == d);
	assert_int_equal(session_gone(h, 1), 2);
	assert_int_equal(view(h, a).state, QUEUE_DELAYED);
	assert_int_equal(view(h, b).state, QUEUE_DELAYED);
	assert_int_equal(view(h, c).state, QUEUE_TAKEN);
	assert_int_equal(view(h, d).state, QUEUE_TAKEN);
	assert_int_equal(view(h, a).attempts, 1);
	v = view(h, a);
	assert_error(&v, "worker disconnected");
	assert_int_equal(session_gone(h, 1), 0);
	assert_true(tstats(h, "t").ctr.session_released == 2);
	/* The detached lease ends by its ttr only. */
	h->now += QUEUE_DEFAULT_TTR_MS;
	assert_int_equal(expire(h), 2);
	v = view(h, c);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_error(&v, "ttr expired after 60s");
}

/* Under QUEUE_RETRY_IMMEDIATE a lost lease makes the task ready at once,
 * still recording why. */
static void
test_lost_lease_can_retry_at_once(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_config cfg;
	struct queue_task_view v;
	uint64_t a, id;

	tq_fini(h);
	queue_config_default(&cfg);
	cfg.lost_lease_retry = QUEUE_RETRY_IMMEDIATE;
	tq_init(h, &cfg, T0);
	a = put(h, "t", "a");
	assert_int_equal(take(h, "t", 3, &id, NULL), 0);
	assert_int_equal(session_gone(h, 3), 1);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_READY);
	assert_int_equal(v.attempts, 1);
	assert_error(&v, "worker disconnected");
}

/* queue_on_lost_lease: session 7 asks for ready at once. */
static bool
ready_for_7(void *arg, uint64_t session)
{
	(*(int *)arg)++;
	return session == 7;
}

/* A lease's holder may ask for ready at once (the beanstalk face's
 * sessions): its tasks come back ready on a disconnect and a ttr expiry
 * under the default backoff; other sessions' and detached leases keep
 * the backoff, and a restart does not ask. */
static void
test_lost_lease_holder_may_ask_for_ready_at_once(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str s = { "t", 1 };
	struct queue_put_req req;
	struct queue_task_view v;
	uint64_t a, b, c, d, id;
	int asked = 0;

	queue_on_lost_lease(h->q, ready_for_7, &asked);
	a = put(h, "t", "a");
	b = put(h, "t", "b");
	c = put(h, "t", "c");
	req_for(&req, "t", "d");
	req.ttr_ms = 10;
	d = put_req(h, &req);
	assert_int_equal(take(h, "t", 7, &id, NULL), 0);
	assert_true(id == a);
	assert_int_equal(take(h, "t", 8, &id, NULL), 0);
	assert_true(id == b);
	assert_int_equal(take_from(h, &s, 1, 7, true, &id, NULL), 0);
	assert_true(id == c);
	assert_int_equal(session_gone(h, 7), 1);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_READY);
	assert_int_equal(v.attempts, 1);
	assert_error(&v, "worker disconnected");
	assert_int_equal(session_gone(h, 8), 1);
	assert_int_equal(view(h, b).state, QUEUE_DELAYED);
	assert_int_equal(asked, 2);

	/* a ttr expiry of session 7's lease: ready at once */
	assert_int_equal(take(h, "t", 7, &id, NULL), 0);
	assert_true(id == a || id == d);
	if (id == a)
		assert_int_equal(take(h, "t", 7, &id, NULL), 0);
	assert_true(id == d);
	h->now += 10;
	assert_int_equal(expire(h), 1);
	v = view(h, d);
	assert_int_equal(v.state, QUEUE_READY);
	assert_error(&v, "ttr expired after 10ms");
	/* the detached lease (session 7 took it) is not asked about */
	h->now += QUEUE_DEFAULT_TTR_MS;
	assert_true(expire(h) >= 1);
	assert_int_equal(view(h, c).state, QUEUE_DELAYED);
}

/* The backoff of lost leases doubles per attempt up to its cap, as a
 * fail's does. */
static void
test_lost_lease_backoff_doubles(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	int64_t want = QUEUE_DEFAULT_BACKOFF_BASE_MS;
	uint64_t a, id;

	req_for(&req, "t", "a");
	req.ttr_ms = 10;
	a = put_req(h, &req);
	for (int i = 0; i < 14; i++) {
		assert_int_equal(take(h, "t", 1, &id, NULL), 0);
		h->now += 10;
		assert_int_equal(expire(h), 1);
		assert_true(view(h, a).run_at == h->now + want);
		h->now = view(h, a).run_at;
		want = want * 2 > QUEUE_DEFAULT_BACKOFF_CAP_MS
		    ? QUEUE_DEFAULT_BACKOFF_CAP_MS
		    : want * 2;
	}
	assert_int_equal(view(h, a).attempts, 14);
}

/* A take whose reply went nowhere is undone: the task waits where it
 * did (ahead of later puts), its attempt uncounted; its lease is gone. */
static void
test_untake_puts_the_task_back_in_its_place(void **state)
{
	struct tq *h = tq_of(state);
	struct qrec rec;
	uint64_t a, b, id, lease;

	a = put(h, "t", "a");
	h->now += 5;
	b = put(h, "t", "b");
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == a);
	assert_int_equal(
	    run(h, queue_decide_untake(h->q, h->now, a, lease + 1, &rec), &rec),
	    SLUICE_ESTALE);
	assert_int_equal(
	    run(h, queue_decide_untake(h->q, h->now, a, lease, &rec), &rec), 0);
	assert_int_equal(rec.type, QREC_UNTAKE);
	assert_int_equal(view(h, a).state, QUEUE_READY);
	assert_int_equal(view(h, a).attempts, 0);
	assert_int_equal(ack(h, a, lease), SLUICE_ESTATE);
	assert_int_equal(
	    run(h, queue_decide_untake(h->q, h->now, a, lease, &rec), &rec),
	    SLUICE_ESTATE);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == a);
	assert_int_equal(view(h, a).attempts, 1);
	(void)b;
}

/* fail --fatal buries at once whatever the attempts; bury takes a text
 * that becomes last_error, for a taken task and an operator's park. */
static void
test_fatal_fail_and_bury_with_a_text(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_fail_req f = { 0 };
	struct queue_bury_req br = { 0 };
	struct queue_task_view v;
	struct qrec rec;
	uint64_t a, b, id, lease;

	a = put(h, "t", "a");
	b = put(h, "t", "b");
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	f.id = a;
	f.lease = lease;
	f.error = "bad input";
	f.error_len = 9;
	f.fatal = true;
	assert_int_equal(
	    run(h, queue_decide_fail(h->q, h->now, &f, &rec), &rec), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_BURIED);
	assert_error(&v, "bad input");

	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	br.id = b;
	br.lease = lease;
	br.error = "poison";
	br.error_len = 6;
	assert_int_equal(
	    run(h, queue_decide_bury(h->q, h->now, &br, &rec), &rec), 0);
	assert_int_equal(rec.type, QREC_SETBACK);
	v = view(h, b);
	assert_int_equal(v.state, QUEUE_BURIED);
	assert_error(&v, "poison");
	assert_true(tstats(h, "t").ctr.bury == 2);

	/* an operator parks a ready task with a text */
	assert_int_equal(kick_id(h, b), 0);
	br.lease = 0;
	br.force = true;
	br.error = "parked by hand";
	br.error_len = 14;
	assert_int_equal(
	    run(h, queue_decide_bury(h->q, h->now, &br, &rec), &rec), 0);
	v = view(h, b);
	assert_int_equal(v.state, QUEUE_BURIED);
	assert_error(&v, "parked by hand");
	br.error_len = QUEUE_DEFAULT_MAX_ERROR + 1;
	assert_int_equal(
	    queue_decide_bury(h->q, h->now, &br, &rec), SLUICE_ELIMIT);
}

/* A disconnect at the last attempt buries, as a ttr expiry does. */
static void
test_session_gone_buries_at_max_attempts(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, id;

	req_for(&req, "t", "a");
	req.max_attempts = 1;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 9, &id, NULL), 0);
	assert_int_equal(session_gone(h, 9), 1);
	assert_int_equal(view(h, a).state, QUEUE_BURIED);
}

/* After a restart every session lease is released: ready at once (no
 * backoff: the node failed), attempts kept, and why as the last error;
 * detached leases stay until their ttr. */
static void
test_restart_releases_session_leases_only(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str s = { "t", 1 };
	uint64_t ids[6], id;

	for (int i = 0; i < 6; i++)
		ids[i] = put(h, "t", "x");
	for (int i = 0; i < 6; i++)
		assert_int_equal(
		    take_from(h, &s, 1, (uint64_t)i % 3, i == 5, &id, NULL), 0);
	assert_int_equal(restart(h), 5);
	for (int i = 0; i < 5; i++) {
		struct queue_task_view v = view(h, ids[i]);

		assert_int_equal(v.state, QUEUE_READY);
		assert_int_equal(v.attempts, 1);
		assert_int_equal(v.last_error_len, 16);
		assert_memory_equal(v.last_error, "server restarted", 16);
	}
	assert_int_equal(view(h, ids[5]).state, QUEUE_TAKEN);
	assert_true(tstats(h, "t").ctr.session_released == 5);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tq_setup, tq_teardown)
	const struct CMUnitTest tests[] = {
		T(test_put_then_take_gives_a_lease_and_a_deadline),
		T(test_a_takes_dependency_is_its_tubes_last_placing_record),
		T(test_a_lease_restarts_from_its_answer),
		T(test_take_order_is_priority_then_id),
		T(test_take_order_is_priority_then_due_time_then_id),
		T(test_delayed_task_gets_ready_at_run_at),
		T(test_release_with_delay_and_new_priority),
		T(test_stale_leases),
		T(test_lease_zero_is_refused),
		T(test_force_overrides_the_lease_only),
		T(test_ttr_expiry_releases_and_keeps_attempts),
		T(test_ttr_expiry_buries_at_max_attempts),
		T(test_touch_extends_the_deadline),
		T(test_session_gone_releases_only_its_session_leases),
		T(test_session_gone_buries_at_max_attempts),
		T(test_lost_lease_can_retry_at_once),
		T(test_lost_lease_holder_may_ask_for_ready_at_once),
		T(test_lost_lease_backoff_doubles),
		T(test_untake_puts_the_task_back_in_its_place),
		T(test_fatal_fail_and_bury_with_a_text),
		T(test_restart_releases_session_leases_only),
	};
#undef T
	return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
