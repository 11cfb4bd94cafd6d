/* Tests of dependencies between tasks (src/queue/deps.c): a task put with
 * parents waits until each is acked, then runs once with their results;
 * a parent failing for good applies the child's rule (fail, ignore,
 * cancel), down a chain; a put naming unknown, finished or failed parents
 * is decided at once; bad input is refused and changes nothing; the
 * PUT_X and ACK_R records round-trip; replay and a snapshot give the
 * same state; random steps keep the invariants and never hand out a
 * child before its parents are acked; an edge costs at most 32 bytes.
 * Every record goes through the harness (decide, encode, decode, apply). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "t_deps.h"
#include "queue/deps.h"
#include "queue/qstate.h"

/* Parent p's result as child's take sees it is `want`. */
static void
assert_result(struct tq *h, uint64_t p, const char *want)
{
	const char *r;
	size_t len;
	int o;

	queue_dep_result(h->q, p, &o, &r, &len);
	assert_int_equal(o, QUEUE_DEP_DONE);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(r, want, len);
}

static void
assert_error(struct tq *h, uint64_t id, const char *want)
{
	struct queue_task_view v;

	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	assert_int_equal(v.last_error_len, strlen(want));
	assert_memory_equal(v.last_error, want, v.last_error_len);
}

/* A diamond: A -> B, A -> C, B + C -> D. Only A runs first; B and C after
 * A's ack, with its result; D after both, once, with both results; then
 * nothing of the graph is left. */
static void
test_diamond(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_deps d;
	struct queue_stats st;
	uint64_t a, b, c, dd, x, y;

	a = put0(h, "A");
	assert_int_equal(put_after(h, "B", &a, 1, 0, &b), 0);
	assert_int_equal(put_after(h, "C", &a, 1, 0, &c), 0);
	{
		uint64_t bc[2] = { b, c };

		assert_int_equal(put_after(h, "D", bc, 2, 0, &dd), 0);
	}
	tq_check(h);
	assert_int_equal(state_of(h, b), QUEUE_WAITING);
	assert_int_equal(state_of(h, dd), QUEUE_WAITING);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_int_equal(st.waiting, 3);
	assert_int_equal(st.ready, 1);
	assert_int_equal(queue_task_deps(h->q, a, &d), 0);
	assert_int_equal(d.nchildren, 2);
	assert_int_equal(queue_task_deps(h->q, dd, &d), 0);
	assert_int_equal(d.nparents, 2);
	assert_int_equal(d.pending, 2);

	assert_int_equal(take(h), a);
	assert_int_equal(take(h), 0); /* B, C wait */
	tq_ack_result(h, a, "ra");
	tq_check(h);
	x = take(h);
	y = take(h);
	assert_true((x == b && y == c) || (x == c && y == b));
	assert_result(h, a, "ra");
	assert_int_equal(take(h), 0);
	tq_ack_result(h, b, "rb");
	assert_int_equal(state_of(h, dd), QUEUE_WAITING);
	tq_ack_result(h, c, "rc");
	tq_check(h);
	assert_int_equal(take(h), dd);
	assert_result(h, b, "rb");
	assert_result(h, c, "rc");
	assert_int_equal(take(h), 0);
	tq_ack_result(h, dd, NULL);
	tq_check(h);
	assert_int_equal(h->q->deps.nodes.len, 0); /* nothing left */
	assert_int_equal(h->q->deps.nedges, 0);
}

/* A chain A -> B -> C with rule `rule` on B and C; A fails for good. */
static void
chain(struct tq *h, int rule, uint64_t *a, uint64_t *b, uint64_t *c)
{
	*a = put0(h, "A");
	assert_int_equal(put_after(h, "B", a, 1, rule, b), 0);
	assert_int_equal(put_after(h, "C", b, 1, rule, c), 0);
	assert_int_equal(take(h), *a);
	tq_fail_fatal(h, *a, "boom");
	tq_check(h);
}

static void
test_parent_fails_fail(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b, c;

	chain(h, QUEUE_PARENT_FAIL, &a, &b, &c);
	assert_int_equal(state_of(h, b), QUEUE_BURIED);
	assert_error(h, b, "task 1 failed: boom");
	assert_int_equal(state_of(h, c), QUEUE_BURIED);
	assert_error(h, c, "task 2 failed: task 1 failed: boom");
	assert_int_equal(take(h), 0);
}

static void
test_parent_fails_ignore(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b, c;

	chain(h, QUEUE_PARENT_IGNORE, &a, &b, &c);
	assert_int_equal(state_of(h, b), QUEUE_READY);
	assert_int_equal(state_of(h, c), QUEUE_WAITING);
	assert_int_equal(take(h), b);
	tq_ack_result(h, b, NULL);
	assert_int_equal(take(h), c);
	tq_check(h);
}

static void
test_parent_fails_cancel(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b, c, d;

	a = put0(h, "A");
	assert_int_equal(put_after(h, "B", &a, 1, QUEUE_PARENT_CANCEL, &b), 0);
	assert_int_equal(put_after(h, "C", &b, 1, QUEUE_PARENT_CANCEL, &c), 0);
	/* D ignores C's failure: it runs once C is cancelled */
	assert_int_equal(put_after(h, "D", &c, 1, QUEUE_PARENT_IGNORE, &d), 0);
	tq_delete(h, a); /* deleted: failed for good */
	tq_check(h);
	assert_int_equal(state_of(h, b), 0);
	assert_int_equal(state_of(h, c), 0);
	assert_int_equal(state_of(h, d), QUEUE_READY);
	assert_int_equal(take(h), d);
	tq_ack_result(h, d, NULL);
	tq_check(h);
	assert_int_equal(h->q->deps.nodes.len, 0);
}

/* A cancelled parent fails for good: one nobody holds at once, a taken
 * one when its lease ends, even by an ack (which removes it instead). */
static void
test_parent_cancelled(void **state)
{
	struct tq *h = tq_of(state);
	struct qrec rec;
	uint64_t a, b, c, x, y;

	a = put0(h, "A");
	assert_int_equal(put_after(h, "B", &a, 1, QUEUE_PARENT_FAIL, &b), 0);
	assert_int_equal(put_after(h, "C", &a, 1, QUEUE_PARENT_IGNORE, &c), 0);
	assert_int_equal(queue_decide_cancel(h->q, h->now, a, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	tq_check(h);
	assert_int_equal(state_of(h, a), 0);
	assert_int_equal(state_of(h, b), QUEUE_BURIED);
	assert_int_equal(state_of(h, c), QUEUE_READY);
	assert_int_equal(take(h), c);
	tq_ack_result(h, c, NULL);
	/* taken, then cancelled: its child waits until the lease ends */
	x = put0(h, "X");
	assert_int_equal(put_after(h, "Y", &x, 1, QUEUE_PARENT_CANCEL, &y), 0);
	assert_int_equal(take(h), x);
	assert_int_equal(queue_decide_cancel(h->q, h->now, x, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(state_of(h, y), QUEUE_WAITING);
	tq_ack_result(h, x, "late");
	tq_check(h);
	assert_int_equal(state_of(h, x), 0);
	assert_int_equal(state_of(h, y), 0); /* cancelled with its parent */
	assert_int_equal(take(h), 0);
}

/* A cancelled parent's children read "task N failed: cancelled", not
 * "deleted", also a child put after a snapshot load (the DEP entry keeps
 * how the parent left); a deleted parent's read "deleted". */
static void
test_cancelled_parent_named(void **state)
{
	struct tq *h = tq_of(state);
	struct qrec rec;
	struct tq r;
	uint64_t a, b, c, d, e;
	char want[64];

	a = put0(h, "A");
	assert_int_equal(put_after(h, "B", &a, 1, QUEUE_PARENT_FAIL, &b), 0);
	assert_int_equal(queue_decide_cancel(h->q, h->now, a, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	snprintf(want, sizeof(want), "task %" PRIu64 " failed: cancelled", a);
	assert_error(h, b, want);
	/* taken, cancelled, then acked anyway: cancelled all the same */
	c = put0(h, "C");
	assert_int_equal(put_after(h, "D", &c, 1, QUEUE_PARENT_FAIL, &d), 0);
	assert_int_equal(take(h), c);
	assert_int_equal(queue_decide_cancel(h->q, h->now, c, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	tq_fail_fatal(h, c, "boom");
	assert_int_equal(state_of(h, c), 0);
	snprintf(want, sizeof(want), "task %" PRIu64 " failed: cancelled", c);
	assert_error(h, d, want);
	tq_check(h);
	tq_loaded(h, &r);
	/* a later child of A, on the loaded queue and on the live one */
	assert_int_equal(put_after(&r, "E", &a, 1, QUEUE_PARENT_FAIL, &e), 0);
	snprintf(want, sizeof(want), "task %" PRIu64 " failed: cancelled", a);
	assert_error(&r, e, want);
	assert_int_equal(put_after(h, "E", &a, 1, QUEUE_PARENT_FAIL, &e), 0);
	assert_error(h, e, want);
	tq_check(&r);
	tq_fini(&r);
	/* deleted by an operator */
	a = put0(h, "F");
	assert_int_equal(put_after(h, "G", &a, 1, QUEUE_PARENT_FAIL, &b), 0);
	tq_delete(h, a);
	snprintf(want, sizeof(want), "task %" PRIu64 " failed: deleted", a);
	assert_error(h, b, want);
	tq_check(h);
}

/* A long chain of cancels runs in a loop, not a recursion. */
static void
test_long_cancel_chain(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t first, prev, id;

	h->keep = false;
	first = prev = put0(h, "0");
	for (int i = 0; i < 100000; i++) {
		assert_int_equal(
		    put_after(h, "x", &prev, 1, QUEUE_PARENT_CANCEL, &id), 0);
		prev = id;
	}
	tq_delete(h, first);
	assert_int_equal(state_of(h, prev), 0);
	assert_int_equal(h->q->ntasks, 0);
	assert_int_equal(h->q->deps.nodes.len, 0);
}

/* A dead-lettered parent failed for good too. */
static void
test_parent_dead_lettered(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_tube_set_req ts;
	uint64_t a, b;
	struct qrec rec;

	memset(&ts, 0, sizeof(ts));
	ts.tube = "t";
	ts.tube_len = 1;
	ts.set = QREC_TS_DEAD_LETTER;
	ts.conf.dead_letter = "dl";
	ts.conf.dead_letter_len = 2;
	assert_int_equal(queue_decide_tube_set(h->q, h->now, &ts, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	a = put0(h, "A");
	assert_int_equal(put_after(h, "B", &a, 1, QUEUE_PARENT_FAIL, &b), 0);
	assert_int_equal(take(h), a);
	tq_fail_fatal(h, a, "bad row");
	assert_int_equal(state_of(h, b), QUEUE_BURIED);
	assert_error(h, b, "task 1 failed: bad row");
	tq_check(h);
}

/* Parents and children in different tubes: a flush of the parents' tube
 * fails them for good (deleted), and the children elsewhere follow their
 * rules; stats count the waiting tasks of each tube. */
static void
test_across_tubes(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_flush_req fl = { "t", 1 };
	struct queue_tube_stats ts;
	struct qrec rec;
	uint64_t a, b, c;

	a = put0(h, "A");
	queue_put_req_init(&req);
	req.tube = "u";
	req.tube_len = 1;
	req.after = &a;
	req.nafter = 1;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	b = res.id;
	req.on_parent_failure = QUEUE_PARENT_IGNORE;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	c = res.id;
	assert_int_equal(queue_tube_stats(h->q, h->now, "u", 1, &ts), 0);
	assert_int_equal(ts.waiting, 2);
	assert_int_equal(queue_decide_flush(h->q, h->now, &fl, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	tq_check(h);
	assert_int_equal(state_of(h, a), 0);
	assert_int_equal(state_of(h, b), QUEUE_BURIED);
	assert_error(h, b, "task 1 failed: deleted");
	assert_int_equal(state_of(h, c), QUEUE_READY);
	assert_int_equal(queue_tube_stats(h->q, h->now, "u", 1, &ts), 0);
	assert_int_equal(ts.waiting, 0);
}

/* What a put finds when it names its parents. */
static void
test_put_decides_at_once(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b, c, id, big[QUEUE_AFTER_MAX + 1];
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	/* unknown */
	id = 99;
	assert_int_equal(put_after(h, "x", &id, 1, 0, NULL), SLUICE_ENOTFOUND);
	id = 0;
	assert_int_equal(put_after(h, "x", &id, 1, 0, NULL), SLUICE_ENOTFOUND);
	/* acked and gone: satisfied */
	a = put0(h, "A");
	assert_int_equal(take(h), a);
	tq_ack_result(h, a, "ra");
	assert_int_equal(put_after(h, "B", &a, 1, 0, &b), 0);
	assert_int_equal(state_of(h, b), QUEUE_READY);
	/* buried: the rule at once */
	assert_int_equal(take(h), b);
	tq_fail_fatal(h, b, "no");
	assert_int_equal(put_after(h, "C", &b, 1, QUEUE_PARENT_FAIL, &c), 0);
	assert_int_equal(state_of(h, c), QUEUE_BURIED);
	assert_error(h, c, "task 2 failed: no");
	assert_int_equal(put_after(h, "D", &b, 1, QUEUE_PARENT_CANCEL, &id), 0);
	assert_int_equal(state_of(h, id), 0);
	assert_int_equal(put_after(h, "E", &b, 1, QUEUE_PARENT_IGNORE, &id), 0);
	assert_int_equal(state_of(h, id), QUEUE_READY);
	tq_check(h);
	/* more than 1,000 parents; a parent twice; a bad rule */
	for (size_t i = 0; i <= QUEUE_AFTER_MAX; i++)
		big[i] = a;
	assert_int_equal(put_after(h, "x", big, QUEUE_AFTER_MAX + 1, 0, NULL),
	    SLUICE_ELIMIT);
	assert_int_equal(put_after(h, "x", big, 2, 0, NULL), SLUICE_EINVAL);
	assert_int_equal(put_after(h, "x", big, 1, 3, NULL), SLUICE_EINVAL);
	/* parents with a period or a replace */
	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.after = &a;
	req.nafter = 1;
	req.period_ms = 1000;
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	req.period_ms = 0;
	req.throttle_ms = 1000;
	req.key = "k";
	req.key_len = 1;
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	tq_check(h);
}

/* A parent named by its key, in the put's tube; a waiting task refuses
 * replace, debounce and update; a throttled put names it. */
static void
test_after_key(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_update_req up;
	struct queue_str k = { "parent", 6 };
	struct qrec rec;
	uint64_t a, b;

	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.key = "parent";
	req.key_len = 6;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	a = res.id;
	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.key = "child";
	req.key_len = 5;
	req.after_keys = &k;
	req.nafter_keys = 1;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(rec.type, QREC_PUT_X);
	assert_int_equal(tq_commit(h, &rec), 0);
	b = res.id;
	assert_int_equal(state_of(h, b), QUEUE_WAITING);
	/* unknown key */
	k.p = "nope";
	k.len = 4;
	req.key = "c2";
	req.key_len = 2;
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_ENOTFOUND);
	/* replace and update of the waiting task */
	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.key = "child";
	req.key_len = 5;
	req.replace = true;
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_ESTATE);
	/* debounce replaces: refused; throttle names the waiting task */
	req.replace = false;
	req.debounce_ms = 1000;
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_ESTATE);
	req.debounce_ms = 0;
	req.throttle_ms = 1000;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(rec.type, QREC_NONE);
	assert_false(res.created);
	assert_int_equal(res.id, b);
	memset(&up, 0, sizeof(up));
	up.id = b;
	up.set_pri = true;
	up.pri = 1;
	assert_int_equal(
	    queue_decide_update(h->q, h->now, &up, &rec), SLUICE_ESTATE);
	assert_int_equal(take(h), a);
	tq_ack_result(h, a, NULL);
	assert_int_equal(take(h), b);
	tq_check(h);
}

/* Results: up to 65,535 bytes; one more is ERESULT. A parent's result
 * stays while its child lives, also when its tube keeps no done tasks
 * (ACK_R). */
static void
test_result_limit(void **state)
{
	struct tq *h = tq_of(state);
	char *big = malloc(QUEUE_RESULT_MAX + 2);
	struct queue_ack_req req;
	struct qrec rec;
	uint64_t a, b;
	const char *r;
	size_t len;
	int o;

	memset(big, 'r', QUEUE_RESULT_MAX + 1);
	big[QUEUE_RESULT_MAX + 1] = '\0';
	a = put0(h, "A");
	assert_int_equal(put_after(h, "B", &a, 1, 0, &b), 0);
	assert_int_equal(take(h), a);
	memset(&req, 0, sizeof(req));
	req.id = a;
	{
		struct queue_task_view v;

		queue_peek(h->q, h->now, a, &v);
		req.lease = v.lease;
	}
	req.result = big;
	req.result_len = QUEUE_RESULT_MAX + 1;
	assert_int_equal(
	    queue_decide_ack(h->q, h->now, &req, &rec), SLUICE_ERESULT);
	req.result_len = QUEUE_RESULT_MAX;
	assert_int_equal(queue_decide_ack(h->q, h->now, &req, &rec), 0);
	assert_int_equal(rec.type, QREC_ACK_R);
	assert_int_equal(tq_commit(h, &rec), 0);
	queue_dep_result(h->q, a, &o, &r, &len);
	assert_int_equal(o, QUEUE_DEP_DONE);
	assert_int_equal(len, QUEUE_RESULT_MAX);
	assert_int_equal(take(h), b);
	tq_check(h);
	free(big);
}

/* The PUT_X and ACK_R codecs: round trips, and bodies that are not
 * exactly valid are refused. */
static void
test_record_codec(void **state)
{
	uint8_t ids[16] = { 1, 0, 0, 0, 0, 0, 0, 0, 2 };
	struct qrec r, d;
	struct buf b;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.type = QREC_PUT_X;
	r.u.put.id = 5;
	r.u.put.tube = "t";
	r.u.put.tube_len = 1;
	r.u.put.ttr = 1000;
	r.u.put.after = ids;
	r.u.put.nafter = 2;
	r.u.put.on_parent = 2;
	buf_init(&b);
	assert_int_equal(qrec_encode(&r, &b), 0);
	assert_int_equal(qrec_decode(QREC_PUT_X, b.data, b.len, &d), 0);
	assert_int_equal(d.u.put.nafter, 2);
	assert_int_equal(d.u.put.on_parent, 2);
	assert_int_equal(deps_after_id(&d.u.put, 1), 2);
	/* a trailing byte, a missing AFTER, an unknown tag */
	buf_put_u8(&b, 0);
	assert_int_equal(
	    qrec_decode(QREC_PUT_X, b.data, b.len, &d), SLUICE_ECORRUPT);
	b.len -= 1 + 5 + 17;
	assert_int_equal(
	    qrec_decode(QREC_PUT_X, b.data, b.len, &d), SLUICE_ECORRUPT);
	buf_put_u8(&b, 2);
	buf_put_u32(&b, 0);
	assert_int_equal(
	    qrec_decode(QREC_PUT_X, b.data, b.len, &d), SLUICE_ECORRUPT);
	/* parents not increasing, or not below the id */
	ids[8] = 1;
	buf_reset(&b);
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	ids[8] = 5;
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	/* ACK_R */
	memset(&r, 0, sizeof(r));
	r.type = QREC_ACK_R;
	r.u.end.id = 3;
	r.u.end.lease = 7;
	r.u.end.outcome = QREC_DELETED;
	r.u.end.result = "res";
	r.u.end.result_len = 3;
	buf_reset(&b);
	assert_int_equal(qrec_encode(&r, &b), 0);
	assert_int_equal(qrec_decode(QREC_ACK_R, b.data, b.len, &d), 0);
	assert_int_equal(d.u.end.result_len, 3);
	assert_memory_equal(d.u.end.result, "res", 3);
	r.u.end.result_len = 0;
	buf_reset(&b);
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	r.type = QREC_ACK;
	r.u.end.result_len = 3;
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	buf_fini(&b);
}

/* Replay and a snapshot taken half way through a diamond give the same
 * state, and the loaded queue finishes it: D once, with both results. */
static void
test_replay_and_snapshot(void **state)
{
	struct tq *h = tq_of(state);
	struct tq r;
	uint64_t a, b, c, d;

	a = put0(h, "A");
	assert_int_equal(put_after(h, "B", &a, 1, 0, &b), 0);
	assert_int_equal(put_after(h, "C", &a, 1, 0, &c), 0);
	{
		uint64_t bc[2] = { b, c };

		assert_int_equal(put_after(h, "D", bc, 2, 0, &d), 0);
	}
	assert_int_equal(take(h), a);
	tq_ack_result(h, a, "ra");
	assert_int_equal(take(h), b);
	tq_ack_result(h, b, "rb");
	tq_replayed(h);
	tq_loaded(h, &r);
	tq_check(&r);
	assert_int_equal(take(&r), c);
	assert_int_equal(take(&r), 0);
	tq_ack_result(&r, c, "rc");
	assert_int_equal(take(&r), d);
	assert_result(&r, b, "rb");
	assert_result(&r, c, "rc");
	assert_int_equal(take(&r), 0);
	tq_fini(&r);
}

/* Random puts with random parents and rules, takes, acks, fatal fails
 * (buried, then, half way, moved to a dead-letter tube), kicks, deletes:
 * the invariants hold after every step, a task is taken only once each
 * of its parents is acked (or failed under ignore, or it was kicked), and
 * replay and a snapshot agree at the end. */
static void
test_random_steps(void **state)
{
	struct tq *h = tq_of(state);
	enum { N = 6000 };
	static uint8_t acked[N + 64], kicked[N + 64];
	/* the parents a child was put after once they were gone and
	 * forgotten (deleted, cancelled: deps.h, they count as acked) */
	static uint64_t forgot[N + 64][4];
	struct tq r;
	uint64_t seed = 42;

	memset(acked, 0, sizeof(acked));
	memset(kicked, 0, sizeof(kicked));
	memset(forgot, 0, sizeof(forgot));
	for (int step = 0; step < N; step++) {
		if (step == N / 2) { /* from now on failures dead-letter */
			struct queue_tube_set_req ts;
			struct qrec rec;

			memset(&ts, 0, sizeof(ts));
			ts.tube = "t";
			ts.tube_len = 1;
			ts.set = QREC_TS_DEAD_LETTER;
			ts.conf.dead_letter = "dl";
			ts.conf.dead_letter_len = 2;
			assert_int_equal(
			    queue_decide_tube_set(h->q, h->now, &ts, &rec), 0);
			assert_int_equal(tq_commit(h, &rec), 0);
		}
		uint64_t next = queue_next_id(h->q), id;
		struct queue_task_deps d;
		int op;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		op = (int)(seed >> 33) % 10;
		h->now += 1;
		if (op < 4 && next > 1) {
			uint64_t ps[4];
			size_t n = 1 + (seed >> 20) % 4, k = 0;

			for (size_t i = 0; i < n; i++) {
				uint64_t p = next - 1 - (seed >> (8 * i)) % 12;
				bool dup = false;

				if (p < 1 || p >= next)
					continue;
				for (size_t j = 0; j < k; j++)
					dup |= ps[j] == p;
				if (!dup)
					ps[k++] = p;
			}
			if (k > 0) {
				for (size_t j = 0; j < k; j++)
					if (state_of(h, ps[j]) == 0 &&
					    deps_node(h->q, ps[j]) == NULL)
						forgot[next][j] = ps[j];
				assert_int_equal(
				    put_after(h, "c", ps, k,
				        (int)((seed >> 40) % 3), NULL),
				    0);
			}
		} else if (op < 5) {
			put0(h, "p");
		} else if (op < 9 && (id = take(h)) != 0) {
			/* each parent acked, or failed with ignore */
			assert_int_equal(queue_task_deps(h->q, id, &d), 0);
			for (size_t i = 0; i < d.nparents; i++) {
				const char *res;
				size_t len;
				int o;

				queue_dep_result(
				    h->q, d.parents[i], &o, &res, &len);
				bool f = false;

				for (int j = 0; j < 4; j++)
					f |= forgot[id][j] == d.parents[i];
				/* a child buried by its rule runs once
				 * an operator kicks it */
				assert_true(acked[d.parents[i]] || f ||
				    kicked[id] ||
				    (o == QUEUE_DEP_FAILED &&
				        d.on_parent == QUEUE_PARENT_IGNORE));
			}
			if (op == 8) {
				tq_fail_fatal(h, id, "x");
			} else {
				tq_ack_result(h, id, "r");
				acked[id] = 1;
			}
		} else if (next > 1 && (seed >> 50) % 3 == 0) {
			/* an operator kicks a buried task */
			struct queue_kick_req kr = { 0 };
			struct qrec rec;

			id = next - 1 - (seed >> 24) % 16;
			kr.id = id;
			if (id >= 1 && state_of(h, id) == QUEUE_BURIED) {
				assert_int_equal(
				    queue_decide_kick(h->q, h->now, &kr, &rec),
				    0);
				assert_int_equal(tq_commit(h, &rec), 0);
				kicked[id] = 1;
			}
		} else if (next > 1) {
			id = next - 1 - (seed >> 24) % 8;
			if (id >= 1 && state_of(h, id) != 0 &&
			    state_of(h, id) != QUEUE_TAKEN) {
				tq_delete(h, id);
			}
		}
		tq_check(h);
	}
	/* the steps did kick, and dead-letter */
	{
		struct queue_tube_stats ts;
		int nk = 0;

		for (int i = 0; i < N + 64; i++)
			nk += kicked[i];
		assert_true(nk > 0);
		assert_int_equal(
		    queue_tube_stats(h->q, h->now, "dl", 2, &ts), 0);
		assert_true(ts.ctr.put + ts.ready + ts.taken > 0);
	}
	tq_replayed(h);
	tq_loaded(h, &r);
	tq_fini(&r);
}

/* 100 children, each waiting on the same 100 parents: 10,000 edges cost
 * at most 32 bytes each, the children's nodes included. */
static void
test_memory_per_edge(void **state)
{
	struct tq *h = tq_of(state);
	enum { P = 100, C = 100 };
	uint64_t ps[P];
	size_t base, used;

	h->keep = false;
	for (int i = 0; i < P; i++)
		ps[i] = put0(h, "p");
	for (int i = 0; i < C; i++)
		assert_int_equal(put_after(h, "c", ps, 1, 0, NULL), 0);
	base = tq_heap_bytes();
	for (int i = 0; i < C; i++)
		assert_int_equal(put_after(h, "c", ps, P, 0, NULL), 0);
	used = tq_heap_bytes() - base;
	/* minus what 100 tasks cost without parents */
	base = tq_heap_bytes();
	for (int i = 0; i < C; i++)
		put0(h, "c");
	used -= tq_heap_bytes() - base;
	print_message("%zu bytes for %d edges: %.1f a edge\n", used, P * C,
	    (double)used / (P * C));
	assert_true(used <= (size_t)32 * P * C);
	/* a child of one parent: its node dominates (an edge is 16 bytes
	 * of it) */
	base = tq_heap_bytes();
	for (int i = 0; i < 10 * C; i++)
		assert_int_equal(put_after(h, "c", ps, 1, 0, NULL), 0);
	used = tq_heap_bytes() - base;
	base = tq_heap_bytes();
	for (int i = 0; i < 10 * C; i++)
		put0(h, "c");
	used -= tq_heap_bytes() - base;
	print_message("a child of one parent: %.1f bytes more than a task\n",
	    (double)used / (10 * C));
	assert_true(used <= (size_t)160 * 10 * C);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tq_setup, tq_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_diamond),
		T(test_parent_fails_fail),
		T(test_parent_fails_ignore),
		T(test_parent_fails_cancel),
		T(test_parent_cancelled),
		T(test_cancelled_parent_named),
		T(test_long_cancel_chain),
		T(test_parent_dead_lettered),
		T(test_across_tubes),
		T(test_put_decides_at_once),
		T(test_after_key),
		T(test_result_limit),
		T(test_record_codec),
		T(test_replay_and_snapshot),
		T(test_random_steps),
		T(test_memory_per_edge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
