/* Tests of the deduplication modes of a keyed put (src/queue/
 * decide_dedup.c, throttle.c): debounce (each put replaces the waiting
 * task and moves its run time; a taken task gets a pending replacement),
 * throttle (a put within the window of the last accepted one is ignored,
 * whatever became of its task, and answered with that task's id), the
 * errors of bad input (nothing changes), the PUT_T record through the
 * codec, and the windows through replay and a snapshot. Every record goes
 * through the harness (decide, encode, decode, apply). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "queue/throttle.h"

#define T0 1700000000000LL /* a unix time in ms */

static int
setup(void **state)
{
	struct queue_config cfg;

	queue_config_default(&cfg);
	cfg.dedup_ms = 60000; /* a key stays reserved a minute after an ack */
	*state = tq_new_with(&cfg, T0);
	return *state != NULL ? 0 : -1;
}

/* A put of key "k" in tube "t" with one mode; the decision's error, or 0
 * with the record committed and *res filled. */
static int
put_mode(struct tq *h, const char *payload, int64_t debounce, int64_t throttle,
    struct queue_put_res *res, struct qrec *rec)
{
	struct queue_put_req req;
	int rc;

	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.key = "k";
	req.key_len = 1;
	req.payload = payload;
	req.payload_len = strlen(payload);
	req.debounce_ms = debounce;
	req.throttle_ms = throttle;
	if ((rc = queue_decide_put(h->q, h->now, &req, rec, res)) != 0)
		return rc;
	assert_int_equal(tq_commit(h, rec), 0);
	return 0;
}

static uint64_t
take1(struct tq *h, int *rc, uint64_t *lease)
{
	struct queue_str s = { "t", 1 };
	struct queue_take_req tr = { &s, 1, 7, false, false };
	struct qrec rec;

	*rc = queue_decide_take(h->q, h->now, &tr, &rec);
	if (*rc != 0)
		return 0;
	assert_int_equal(tq_commit(h, &rec), 0);
	*lease = h->lsn;
	return rec.u.take.id;
}

static void
ack(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_ack_req ar = { .id = id, .lease = lease };
	struct qrec rec;

	assert_int_equal(queue_decide_ack(h->q, h->now, &ar, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

static void
assert_payload(struct tq *h, uint64_t id, const char *want)
{
	struct queue_task_view v;

	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	assert_int_equal(v.payload_len, strlen(want));
	assert_memory_equal(v.payload, want, strlen(want));
}

/* Three puts 100 ms apart with debounce 500 ms: one task, the last
 * payload, due 500 ms after the last put, not before. */
static void
test_debounce_last_wins(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_res res;
	struct queue_task_view v;
	struct qrec rec;
	uint64_t id, lease;
	int rc;

	assert_int_equal(put_mode(h, "a", 500, 0, &res, &rec), 0);
	assert_true(res.created);
	id = res.id;
	h->now += 100;
	assert_int_equal(put_mode(h, "b", 500, 0, &res, &rec), 0);
	assert_int_equal(rec.type, QREC_REPLACE);
	assert_true(res.replaced && !res.created && res.id == id);
	h->now += 100;
	assert_int_equal(put_mode(h, "c", 500, 0, &res, &rec), 0);
	assert_int_equal(res.id, id);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_int_equal(v.run_at, T0 + 200 + 500);
	h->now = T0 + 699;
	assert_int_equal(take1(h, &rc, &lease), 0);
	assert_int_equal(rc, SLUICE_ETIMEDOUT);
	h->now = T0 + 700;
	assert_int_equal(take1(h, &rc, &lease), id);
	assert_payload(h, id, "c");
	ack(h, id, lease);
	/* after the ack, within the dedup window: a debounced put is a new
	 * task (as replace), due 500 ms on */
	h->now += 10;
	assert_int_equal(put_mode(h, "d", 500, 0, &res, &rec), 0);
	assert_true(res.created && res.id != id);
	assert_int_equal(queue_peek(h->q, h->now, res.id, &v), 0);
	assert_int_equal(v.run_at, h->now + 500);
}

/* A debounced put of a taken task: its pending replacement, which waits
 * again 500 ms after the put once the lease ends. */
static void
test_debounce_taken(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_res res;
	struct queue_task_view v;
	struct qrec rec;
	uint64_t id, lease;
	int rc;

	assert_int_equal(put_mode(h, "a", 500, 0, &res, &rec), 0);
	id = res.id;
	h->now += 500;
	assert_int_equal(take1(h, &rc, &lease), id);
	h->now += 50;
	assert_int_equal(put_mode(h, "b", 500, 0, &res, &rec), 0);
	assert_true(rec.u.replace.pending && res.replaced);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	assert_true(v.replace_pending);
	h->now += 100;
	ack(h, id, lease);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_int_equal(v.run_at, T0 + 550 + 500);
	assert_payload(h, id, "b");
}

/* Throttle: the window holds after the task finished and is answered with
 * the task that opened it; past it, a new task and a new window. */
static void
test_throttle_window(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_res res;
	struct qrec rec;
	uint64_t id, lease;
	int rc;

	assert_int_equal(put_mode(h, "a", 0, 1000, &res, &rec), 0);
	assert_int_equal(rec.type, QREC_PUT_T);
	assert_true(res.created && !res.throttled);
	id = res.id;
	h->now += 10;
	assert_int_equal(put_mode(h, "b", 0, 1000, &res, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	assert_true(res.throttled && !res.created && res.id == id);
	assert_payload(h, id, "a");
	/* finished, still within the window (and the dedup window) */
	assert_int_equal(take1(h, &rc, &lease), id);
	ack(h, id, lease);
	h->now = T0 + 999;
	assert_int_equal(put_mode(h, "c", 0, 1000, &res, &rec), 0);
	assert_true(res.throttled && res.id == id);
	/* past it: a new task though the dedup window (60 s) holds */
	h->now = T0 + 1000;
	assert_int_equal(put_mode(h, "d", 0, 1000, &res, &rec), 0);
	assert_true(res.created && !res.throttled && res.id > id);
	assert_int_equal(rec.u.put.throttle_until, T0 + 2000);
	id = res.id;
	/* past that window, the task still waiting: the key's answer */
	h->now = T0 + 2000;
	assert_int_equal(put_mode(h, "e", 0, 1000, &res, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	assert_true(!res.created && !res.throttled && res.id == id);
	assert_payload(h, id, "d");
	/* the sweep frees ended windows */
	h->now = T0 + 5000;
	assert_int_equal(queue_tick(h->q, h->now), 0);
}

/* The windows have a bound: past it a put that would open one more is
 * ELIMIT (nothing changes), one within a window is still answered, and a
 * key whose window ended reuses its entry. */
static void
test_throttle_bound(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	uint64_t lsn;

	qs_throttle_set_max(h->q, 1);
	assert_int_equal(put_mode(h, "a", 0, 1000, &res, &rec), 0);
	assert_true(res.created);
	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.key = "other";
	req.key_len = 5;
	req.throttle_ms = 1000;
	lsn = h->lsn;
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_ELIMIT);
	assert_int_equal(h->lsn, lsn);
	h->now += 10;
	assert_int_equal(put_mode(h, "b", 0, 1000, &res, &rec), 0);
	assert_true(res.throttled);
	/* k's window ended (not swept yet): k opens its next one */
	h->now = T0 + 1000;
	{
		uint64_t lease, id;
		int rc;

		id = take1(h, &rc, &lease);
		ack(h, id, lease);
	}
	assert_int_equal(put_mode(h, "c", 0, 1000, &res, &rec), 0);
	assert_true(res.created);
}

/* Bad input: a specific error, no record, nothing changed. */
static void
test_bad_input(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	uint64_t lsn = h->lsn;

	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.debounce_ms = 100; /* no key */
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.key = "k";
	req.key_len = 1;
	req.throttle_ms = 100; /* both */
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.throttle_ms = 0;
	req.replace = true; /* with replace */
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.replace = false;
	req.delay_ms = 5; /* with a delay */
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.delay_ms = 0;
	req.run_at = T0 + 5; /* with a time */
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.run_at = 0;
	req.debounce_ms = -1; /* out of range */
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.debounce_ms = QREC_WINDOW_MAX_MS + 1;
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.debounce_ms = 0;
	req.throttle_ms = QREC_WINDOW_MAX_MS + 1;
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.throttle_ms = 100;
	req.if_newer = 3; /* with a version */
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.if_newer = 0;
	req.tube_len = 0; /* the put's own checks come first */
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_ETUBE);
	assert_int_equal(h->lsn, lsn);
	assert_int_equal(queue_peek_key(h->q, h->now, "t", 1, "k", 1,
	                     &(struct queue_task_view) { 0 }),
	    SLUICE_ENOTFOUND);
	/* the longest window is allowed */
	req.tube_len = 1;
	req.throttle_ms = QREC_WINDOW_MAX_MS;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(rec.type, QREC_PUT_T);
}

/* The windows through replay and a snapshot: the same state (dump), and
 * a put within the window is throttled in either copy. */
static void
test_throttle_survives(void **state)
{
	struct tq *h = tq_of(state), r;
	struct queue_put_res res;
	struct qrec rec;
	uint64_t id, lease;
	int rc;

	assert_int_equal(put_mode(h, "a", 0, 60000, &res, &rec), 0);
	id = res.id;
	assert_int_equal(take1(h, &rc, &lease), id);
	ack(h, id, lease);
	h->now += 1000;
	tq_init(&r, NULL, h->now);
	assert_int_equal(tq_replay(h, r.q, 0, h->nlog), 0);
	assert_true(tq_same(h->q, r.q, h->now));
	r.lsn = h->lsn;
	assert_int_equal(put_mode(&r, "b", 0, 60000, &res, &rec), 0);
	assert_true(res.throttled && res.id == id);
	tq_fini(&r);

	tq_loaded(h, &r);
	assert_int_equal(put_mode(&r, "b", 0, 60000, &res, &rec), 0);
	assert_true(res.throttled && res.id == id);
	/* past the window (the snapshot's entry ended): a new task */
	r.now = T0 + 60000;
	assert_int_equal(put_mode(&r, "c", 0, 60000, &res, &rec), 0);
	assert_true(res.created && res.id > id);
	tq_fini(&r);
}

/* A PUT_T body: a PUT's, the window's end, then the group (empty here);
 * encode and decode agree, and an invalid one (no key, no end) is
 * refused. */
static void
test_record_codec(void **state)
{
	struct qrec r = { .type = QREC_PUT_T }, d;
	struct buf b;

	(void)state;
	buf_init(&b);
	r.u.put.id = 9;
	r.u.put.tube = "t";
	r.u.put.tube_len = 1;
	r.u.put.key = "k";
	r.u.put.key_len = 1;
	r.u.put.ttr = 1000;
	r.u.put.throttle_until = T0;
	assert_int_equal(qrec_encode(&r, &b), 0);
	assert_int_equal(b.len, 8 + 3 + 4 + 8 + 4 + 4 + 8 + 3 + 4 + 8 + 2);
	assert_int_equal(qrec_decode(QREC_PUT_T, b.data, b.len, &d), 0);
	assert_int_equal(d.u.put.throttle_until, T0);
	/* as a PUT the body is too long */
	assert_int_equal(
	    qrec_decode(QREC_PUT, b.data, b.len, &d), SLUICE_ECORRUPT);
	r.u.put.throttle_until = 0;
	buf_reset(&b);
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	r.u.put.throttle_until = T0;
	r.u.put.key_len = 0;
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	buf_fini(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_debounce_last_wins, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_debounce_taken, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_throttle_window, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_input, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_throttle_bound, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_throttle_survives, setup, tq_teardown),
		cmocka_unit_test(test_record_codec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
