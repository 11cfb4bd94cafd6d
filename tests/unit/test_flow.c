/* Tests of a tube's flow limits (src/queue/flow.c): the token bucket's
 * exact refill on the queue's clock, the wake-up when a token is due, the
 * concurrency cap and what frees a slot, the errors of a TUBE_LIMIT, and
 * the limits through the record codec, replay and a snapshot. Every
 * record goes through the harness (decide, encode, decode, apply). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "queue/limits.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

static unsigned marks; /* on_ready calls for tube "t" */

static void
on_ready(void *arg, const char *name, size_t len)
{
	(void)arg;
	if (len == 1 && name[0] == 't')
		marks++;
}

/* A harness at T0 (tq_setup) that counts the tube's wake-ups. Every test
 * ends with the queue's invariants (tq_teardown: queue_check), the flow
 * limits' among them: valid, the bucket within its burst, the flows heap
 * in order and holding exactly the tubes that wait for a token. */
static int
setup(void **state)
{
	if (tq_setup(state) != 0)
		return -1;
	queue_on_ready(tq_of(state)->q, on_ready, NULL);
	marks = 0;
	return 0;
}

static void
put_n(struct tq *h, const char *tube, int n)
{
	for (int i = 0; i < n; i++) {
		struct queue_put_req req;
		struct queue_put_res res;
		struct qrec rec;

		queue_put_req_init(&req);
		req.tube = tube;
		req.tube_len = strlen(tube);
		req.payload = "x";
		req.payload_len = 1;
		assert_int_equal(
		    queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
		assert_int_equal(tq_commit(h, &rec), 0);
	}
}

/* A take of one task of tube `tube`: its id, or 0 with `*rc` the
 * decision's error. */
static uint64_t
take1(struct tq *h, const char *tube, int *rc)
{
	struct queue_str s = { tube, strlen(tube) };
	struct queue_take_req tr = { &s, 1, 7, false, false };
	struct qrec rec;

	*rc = queue_decide_take(h->q, h->now, &tr, &rec);
	if (*rc != 0)
		return 0;
	assert_int_equal(tq_commit(h, &rec), 0);
	return rec.u.take.id;
}

static int
limit(struct tq *h, const char *tube, uint8_t set, uint8_t unset, uint32_t rate,
    uint32_t per_ms, uint32_t burst, uint32_t conc)
{
	struct queue_tube_limit_req req = { tube, strlen(tube), set, unset,
		{ 0, rate, per_ms, burst, conc } };
	struct qrec rec;
	int rc;

	rc = queue_decide_tube_limit(h->q, h->now, &req, &rec);
	if (rc != 0)
		return rc;
	return tq_commit(h, &rec);
}

/* A rate of 10/s with a burst of 2: two takes at once, then none; the
 * queue's next wake is when the next token comes (100 ms), and reaching
 * it marks the tube (a waiting take wakes on a timer). */
static void
test_rate_holds_and_wakes(void **state)
{
	struct tq *h = tq_of(state);
	int rc;

	put_n(h, "t", 20);
	assert_int_equal(limit(h, "t", QREC_LIM_RATE, 0, 10, 1000, 2, 0), 0);
	assert_true(take1(h, "t", &rc) != 0);
	assert_true(take1(h, "t", &rc) != 0);
	assert_int_equal(take1(h, "t", &rc), 0);
	assert_int_equal(rc, SLUICE_ETIMEDOUT); /* waits as for an empty tube */
	assert_int_equal(queue_next_wake(h->q), T0 + 100);
	marks = 0;
	h->now = T0 + 99;
	assert_int_equal(queue_tick(h->q, h->now), 0);
	assert_int_equal(marks, 0);
	assert_int_equal(take1(h, "t", &rc), 0);
	h->now = T0 + 100;
	assert_int_equal(queue_tick(h->q, h->now), 0);
	assert_int_equal(marks, 1);
	assert_true(take1(h, "t", &rc) != 0);
	assert_int_equal(take1(h, "t", &rc), 0);
}

/* Many limited tubes held by their rates at once: the flows heap has a
 * place for each (it is reserved when a tube is limited, not when it
 * waits), and each tube is marked when its own token comes. */
static void
test_many_tubes_wait_for_tokens(void **state)
{
	struct tq *h = tq_of(state);
	char name[16];
	int rc;

	/* every tube limited while none waits, then all of them held */
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		put_n(h, name, 2);
		assert_int_equal(limit(h, name, QREC_LIM_RATE, 0,
		                     (uint32_t)(1 + i), 1000, 1, 0),
		    0);
	}
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		assert_true(take1(h, name, &rc) != 0);
		assert_int_equal(take1(h, name, &rc), 0); /* on the heap */
	}
	/* the fastest (100/s) comes first, in 10 ms */
	assert_int_equal(queue_next_wake(h->q), h->now + 10);
	h->now += 1000;
	assert_int_equal(queue_tick(h->q, h->now), 0);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		assert_true(take1(h, name, &rc) != 0);
	}
}

/* Greedy takes every millisecond for 10 s of the clock at 50/s, burst 5:
 * exactly the burst and then one token per 20 ms, nothing lost or gained
 * to rounding; and at 1000/m (a token per 60 ms) over a minute. */
static void
test_rate_is_exact(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t n = 0;
	int rc;

	h->keep = false;
	put_n(h, "t", 2000);
	assert_int_equal(limit(h, "t", QREC_LIM_RATE, 0, 50, 1000, 5, 0), 0);
	for (int64_t ms = 0; ms < 10000; ms++) {
		h->now = T0 + ms;
		while (take1(h, "t", &rc) != 0)
			n++;
		assert_int_equal(rc, SLUICE_ETIMEDOUT);
	}
	/* tokens at ms 0..9999: 5, then one at 20, 40, ..., 9980 */
	assert_int_equal(n, 5 + 499);
	/* a new rate starts with a full bucket */
	assert_int_equal(limit(h, "t", QREC_LIM_RATE, 0, 1000, 60000, 1, 0), 0);
	n = 0;
	for (int64_t ms = 10000; ms <= 70000; ms++) {
		h->now = T0 + ms;
		while (take1(h, "t", &rc) != 0)
			n++;
	}
	assert_int_equal(n, 1 + 1000);
}

/* At the largest rate the bucket's arithmetic does not overflow and a
 * millisecond hands out its 1000 tokens. */
static void
test_rate_largest(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t n = 0;
	int rc;

	h->keep = false;
	put_n(h, "t", 3000);
	assert_int_equal(
	    limit(h, "t", QREC_LIM_RATE, 0, 1000000, 1000, 1000, 0), 0);
	h->now = T0 + 1000000000LL; /* a long time: the bucket is full */
	while (take1(h, "t", &rc) != 0)
		n++;
	assert_int_equal(n, 1000);
	h->now++;
	while (take1(h, "t", &rc) != 0)
		n++;
	assert_int_equal(n, 2000);
}

/* A cap of 2: a third take waits; an ack, a release or a lost lease frees
 * a slot and marks the tube; a task is never taken past the cap. */
static void
test_cap_holds_and_frees(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b;
	struct qrec rec;
	int rc;

	put_n(h, "t", 10);
	assert_int_equal(limit(h, "t", QREC_LIM_CONCURRENCY, 0, 0, 0, 0, 2), 0);
	a = take1(h, "t", &rc);
	b = take1(h, "t", &rc);
	assert_true(a != 0 && b != 0);
	assert_int_equal(take1(h, "t", &rc), 0);
	assert_int_equal(rc, SLUICE_ETIMEDOUT);
	marks = 0;
	tq_ack(h, a);
	assert_int_equal(marks, 1);
	a = take1(h, "t", &rc);
	assert_true(a != 0);
	assert_int_equal(take1(h, "t", &rc), 0);
	/* a ttr expiry frees one too */
	marks = 0;
	h->now += 3600 * 1000;
	while (queue_decide_expired(h->q, h->now, &rec) == 0)
		assert_int_equal(tq_commit(h, &rec), 0);
	assert_true(marks >= 1);
	assert_true(take1(h, "t", &rc) != 0);
	assert_true(take1(h, "t", &rc) != 0);
	assert_int_equal(take1(h, "t", &rc), 0);
	/* lifting the cap lets them all go */
	assert_int_equal(limit(h, "t", 0, QREC_LIM_CONCURRENCY, 0, 0, 0, 0), 0);
	assert_true(take1(h, "t", &rc) != 0);
}

/* A session that goes frees its slots. */
static void
test_cap_freed_by_session(void **state)
{
	struct tq *h = tq_of(state);
	struct qrec rec;
	int rc;

	put_n(h, "t", 5);
	assert_int_equal(limit(h, "t", QREC_LIM_CONCURRENCY, 0, 0, 0, 0, 1), 0);
	assert_true(take1(h, "t", &rc) != 0);
	assert_int_equal(take1(h, "t", &rc), 0);
	marks = 0;
	while (queue_decide_session_gone(h->q, h->now, 7, "gone", 4, &rec) == 0)
		assert_int_equal(tq_commit(h, &rec), 0);
	assert_true(marks >= 1);
	assert_true(take1(h, "t", &rc) != 0);
}

/* Bad limits are refused and change nothing: a rate of 0 or over
 * 1000000/s, a burst of 0, over 1000000 or below a millisecond's tokens,
 * a period that is not /s, /m, /h, a cap of 0, a limit both set and
 * lifted, a tube the queue does not have. */
static void
test_bad_limits(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_flow_view v;
	struct qrec_limits l = { QREC_LIM_RATE, 0, 1000, 1, 0 };
	size_t n;

	put_n(h, "t", 1);
	n = h->nlog;
	assert_int_equal(
	    limit(h, "t", QREC_LIM_RATE, 0, 0, 1000, 1, 0), SLUICE_EINVAL);
	assert_int_equal(
	    limit(h, "t", QREC_LIM_RATE, 0, 1000001, 1000, 2000, 0),
	    SLUICE_EINVAL);
	assert_int_equal(limit(h, "t", QREC_LIM_RATE, 0, 10, 1000, 1000001, 0),
	    SLUICE_EINVAL);
	assert_int_equal(
	    limit(h, "t", QREC_LIM_RATE, 0, 10, 1000, 0, 0), SLUICE_EINVAL);
	assert_int_equal(limit(h, "t", QREC_LIM_RATE, 0, 100000, 1000, 10, 0),
	    SLUICE_EINVAL);
	assert_int_equal(
	    limit(h, "t", QREC_LIM_RATE, 0, 10, 2000, 1, 0), SLUICE_EINVAL);
	assert_int_equal(
	    limit(h, "t", QREC_LIM_CONCURRENCY, 0, 0, 0, 0, 0), SLUICE_EINVAL);
	assert_int_equal(limit(h, "t", QREC_LIM_CONCURRENCY,
	                     QREC_LIM_CONCURRENCY, 0, 0, 0, 3),
	    SLUICE_EINVAL);
	assert_int_equal(
	    limit(h, "nosuch", QREC_LIM_CONCURRENCY, 0, 0, 0, 0, 3),
	    SLUICE_ENOTFOUND);
	assert_int_equal(
	    limit(h, "bad name", QREC_LIM_CONCURRENCY, 0, 0, 0, 0, 3),
	    SLUICE_ETUBE);
	assert_int_equal(h->nlog, n);
	assert_int_equal(queue_tube_flow(h->q, "t", 1, h->now, &v), 0);
	assert_int_equal(v.lim.set, 0);
	/* the texts say which rule */
	assert_non_null(strstr(queue_limits_broken(&l), "rate of 0"));
	l.rate = 2000000;
	l.burst = 5000;
	assert_non_null(strstr(queue_limits_broken(&l), "1000000/s"));
	l.rate = 10;
	l.burst = 1000001;
	assert_non_null(strstr(queue_limits_broken(&l), "burst over"));
	assert_int_equal(queue_limits_default_burst(100, 1000), 10);
	assert_int_equal(queue_limits_default_burst(5, 1000), 1);
	assert_int_equal(queue_limits_default_burst(30, 60000), 1);
	assert_int_equal(queue_limits_default_burst(1000000, 1000), 100000);
	/* a limit set again to the same values writes nothing */
	assert_int_equal(limit(h, "t", QREC_LIM_CONCURRENCY, 0, 0, 0, 0, 3), 0);
	n = h->nlog;
	assert_int_equal(limit(h, "t", QREC_LIM_CONCURRENCY, 0, 0, 0, 0, 3), 0);
	assert_int_equal(h->nlog, n);
}

/* The view: limits, tokens, slots in use, what is held back and why. */
static void
test_view(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_flow_view v;
	int rc;

	put_n(h, "t", 5);
	assert_int_equal(limit(h, "t", QREC_LIM_RATE | QREC_LIM_CONCURRENCY, 0,
	                     100, 60000, 3, 2),
	    0);
	assert_int_equal(queue_tube_flow(h->q, "t", 1, h->now, &v), 0);
	assert_int_equal(v.lim.rate, 100);
	assert_int_equal(v.lim.per_ms, 60000);
	assert_int_equal(v.tokens, 3);
	assert_int_equal(v.holding, 0);
	take1(h, "t", &rc);
	take1(h, "t", &rc);
	assert_int_equal(take1(h, "t", &rc), 0);
	assert_int_equal(queue_tube_flow(h->q, "t", 1, h->now, &v), 0);
	assert_int_equal(v.tokens, 1);
	assert_int_equal(v.taken, 2);
	assert_int_equal(v.holding, QUEUE_FLOW_CONCURRENCY);
	assert_int_equal(v.held_tasks, 3);
	assert_int_equal(v.held_conc, 1);
	assert_int_equal(
	    queue_tube_flow(h->q, "zz", 2, h->now, &v), SLUICE_ENOTFOUND);
}

/* Limits through replay and a snapshot: the same state (dump) either
 * way; the cap counts the taken tasks the snapshot holds, so it holds
 * from the first take after a restart; the rate starts with its burst. */
static void
test_limits_survive(void **state)
{
	struct tq *h = tq_of(state);
	struct tq r;
	int rc;

	put_n(h, "t", 10);
	put_n(h, "u", 1);
	assert_int_equal(limit(h, "t", QREC_LIM_RATE | QREC_LIM_CONCURRENCY, 0,
	                     10, 1000, 4, 2),
	    0);
	take1(h, "t", &rc);
	take1(h, "t", &rc);
	tq_replayed(h);
	tq_loaded(h, &r);
	r.now = h->now;
	/* the cap: 2 taken, nothing more */
	assert_int_equal(take1(&r, "t", &rc), 0);
	assert_int_equal(rc, SLUICE_ETIMEDOUT);
	/* lifting the cap: the bucket started full (4) */
	assert_int_equal(
	    limit(&r, "t", 0, QREC_LIM_CONCURRENCY, 0, 0, 0, 0), 0);
	for (int i = 0; i < 4; i++)
		assert_true(take1(&r, "t", &rc) != 0);
	assert_int_equal(take1(&r, "t", &rc), 0);
	/* a snapshot of a tube without limits has no TUBE_LIMIT entry;
	 * deleting a limited tube takes its limits with it */
	tq_fini(&r);
}

/* A TUBE_LIMIT body: encode and decode agree, and an invalid one is
 * refused by both. */
static void
test_record_codec(void **state)
{
	struct qrec r = { .type = QREC_TUBE_LIMIT }, d;
	struct buf b;

	(void)state;
	buf_init(&b);
	r.u.tube_limit.tube = "t";
	r.u.tube_limit.tube_len = 1;
	r.u.tube_limit.lim =
	    (struct qrec_limits) { QREC_LIM_ALL, 7, 3600000, 1, 9 };
	assert_int_equal(qrec_encode(&r, &b), 0);
	assert_int_equal(b.len, 2 + 1 + 1 + 16);
	assert_int_equal(qrec_decode(QREC_TUBE_LIMIT, b.data, b.len, &d), 0);
	assert_true(
	    qrec_limits_equal(&d.u.tube_limit.lim, &r.u.tube_limit.lim));
	b.data[3] = 0x04; /* an unknown limit */
	assert_int_equal(
	    qrec_decode(QREC_TUBE_LIMIT, b.data, b.len, &d), SLUICE_ECORRUPT);
	r.u.tube_limit.lim.concurrency = 0;
	buf_reset(&b);
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	buf_fini(&b);
}

/* A tube without limits takes as before: no flow, no heap entry. */
static void
test_unlimited_costs_nothing(void **state)
{
	struct tq *h = tq_of(state);
	int rc;

	put_n(h, "t", 3);
	for (int i = 0; i < 3; i++)
		assert_true(take1(h, "t", &rc) != 0);
	assert_int_equal(queue_next_wake(h->q) > h->now, true);
	assert_int_equal(limit(h, "t", QREC_LIM_RATE, 0, 1, 3600000, 1, 0), 0);
	assert_int_equal(limit(h, "t", 0, QREC_LIM_RATE, 0, 0, 0, 0), 0);
	put_n(h, "t", 2);
	assert_true(take1(h, "t", &rc) != 0);
	assert_true(take1(h, "t", &rc) != 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, tq_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_rate_holds_and_wakes),
		T(test_rate_is_exact),
		T(test_many_tubes_wait_for_tokens),
		T(test_rate_largest),
		T(test_cap_holds_and_frees),
		T(test_cap_freed_by_session),
		T(test_bad_limits),
		T(test_view),
		T(test_limits_survive),
		T(test_record_codec),
		T(test_unlimited_costs_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
