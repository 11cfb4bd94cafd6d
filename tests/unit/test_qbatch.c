/* Tests of batches (src/queue/batch.c): tasks put with a batch name are
 * counted by state; a closed batch ends when none of its tasks is live;
 * its callbacks are owed then and one BATCH_FIRE puts them, with the
 * counts in their payload, once (a second fire is refused, replay and a
 * snapshot keep it fired); on_success only when every task was acked,
 * on_complete always; a put into a closed or ended batch is refused
 * (SLUICE_EBATCH); bad input is refused and changes nothing; the
 * records round-trip; an ended batch is forgotten after the dedup
 * window; the listing orders the open batches first (the latest started
 * first, one with no task yet as started now), then the ended ones (the
 * latest ended first), with queue_batch_show's counts, and keeps to its
 * limit. Every record goes through the harness (decide, encode, decode,
 * apply). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "queue/batch.h"
#include "queue/qstate.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

/* Puts `p` into tube "t" in batch `b` (after `parent` when not 0). */
static int
bput(struct tq *h, const char *b, const char *p, uint64_t parent, uint64_t *id)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	int rc;

	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.payload = p;
	req.payload_len = strlen(p);
	req.batch = b;
	req.batch_len = b != NULL ? strlen(b) : 0;
	if (parent != 0) {
		req.after = &parent;
		req.nafter = 1;
	}
	if ((rc = queue_decide_put(h->q, h->now, &req, &rec, &res)) != 0)
		return rc;
	assert_int_equal(rec.type, b != NULL ? QREC_PUT_X : QREC_PUT);
	assert_int_equal(tq_commit(h, &rec), 0);
	if (id != NULL)
		*id = res.id;
	return 0;
}

static uint64_t
take(struct tq *h, const char *tube)
{
	struct queue_str t = { tube, strlen(tube) };
	struct queue_take_req req = { &t, 1, 1, false, false };
	struct qrec rec;

	if (queue_decide_take(h->q, h->now, &req, &rec) != 0)
		return 0;
	assert_int_equal(tq_commit(h, &rec), 0);
	return rec.u.take.id;
}

static int
set(struct tq *h, const char *b, const char *st, const char *sp, const char *ct,
    const char *cp)
{
	struct qrec rec;
	int rc;

	rc = queue_decide_batch_set(h->q, b, strlen(b), st, st ? strlen(st) : 0,
	    sp, sp ? strlen(sp) : 0, ct, ct ? strlen(ct) : 0, cp,
	    cp ? strlen(cp) : 0, &rec);
	if (rc != 0)
		return rc;
	assert_int_equal(rec.type, QREC_BATCH_SET);
	assert_int_equal(tq_commit(h, &rec), 0);
	return 0;
}

static int
close_batch(struct tq *h, const char *b)
{
	struct qrec rec;
	int rc;

	if ((rc = queue_decide_batch_close(h->q, b, strlen(b), &rec)) != 0)
		return rc;
	if (rec.type != QREC_NONE)
		assert_int_equal(tq_commit(h, &rec), 0);
	return 0;
}

/* Fires what `b` owes, as the leader does: the ids put (0: none). */
static void
fire(struct tq *h, uint64_t ids[2])
{
	struct batch *b = queue_batch_owed(h->q);
	struct qrec rec;
	int n = 0;

	ids[0] = ids[1] = 0;
	assert_non_null(b);
	assert_int_equal(queue_decide_batch_fire(h->q, h->now, b, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	for (int i = 0; i < 2; i++)
		if (rec.u.batch.which & (1 << i))
			ids[i] = rec.u.batch.puts[n++].id;
	assert_null(queue_batch_owed(h->q));
}

static struct queue_batch_info
show(struct tq *h, const char *b)
{
	struct queue_batch_info i;

	assert_int_equal(queue_batch_show(h->q, b, strlen(b), &i), 0);
	return i;
}

static void
assert_payload_has(struct tq *h, uint64_t id, const char *want)
{
	struct queue_task_view v;

	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	if (memmem(v.payload, v.payload_len, want, strlen(want)) == NULL)
		fail_msg("payload %.*s lacks %s", (int)v.payload_len,
		    (const char *)v.payload, want);
}

/* Three tasks acked: counts move by state; closed, the batch ends at the
 * last ack; both callbacks are put once, with the counts. */
static void
test_success(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b, c, ids[2];
	struct queue_batch_info i;

	assert_int_equal(set(h, "b1", "ok", "hello \"x\"", "done", NULL), 0);
	assert_int_equal(bput(h, "b1", "A", 0, &a), 0);
	h->now += 10;
	assert_int_equal(bput(h, "b1", "B", 0, &b), 0);
	assert_int_equal(bput(h, "b1", "C", a, &c), 0);
	i = show(h, "b1");
	assert_int_equal(i.total, 3);
	assert_int_equal(i.ready, 2);
	assert_int_equal(i.waiting, 1);
	assert_int_equal(i.started_at, T0);
	assert_false(i.closed);
	assert_int_equal(take(h, "t"), a);
	i = show(h, "b1");
	assert_int_equal(i.taken, 1);
	tq_ack(h, a);
	tq_ack(h, take(h, "t")); /* b */
	tq_check(h);
	assert_int_equal(close_batch(h, "b1"), 0);
	assert_int_equal(close_batch(h, "b1"), 0); /* again: nothing */
	assert_null(queue_batch_owed(h->q));
	assert_int_equal(bput(h, "b1", "D", 0, NULL), SLUICE_EBATCH);
	h->now += 5;
	assert_int_equal(take(h, "t"), c);
	tq_ack(h, c);
	i = show(h, "b1");
	assert_true(i.ended);
	assert_int_equal(i.acked, 3);
	assert_int_equal(i.ended_at, T0 + 15);
	assert_int_equal(i.owed, 3);
	tq_check(h);
	fire(h, ids);
	assert_int_not_equal(ids[0], 0);
	assert_int_equal(ids[1], ids[0] + 1);
	assert_int_equal(take(h, "ok"), ids[0]);
	assert_int_equal(take(h, "done"), ids[1]);
	assert_payload_has(h, ids[0], "\"event\":\"success\"");
	assert_payload_has(h, ids[0], "\"acked\":3");
	assert_payload_has(h, ids[0], "\"payload\":\"hello \\\"x\\\"\"");
	assert_payload_has(h, ids[1], "\"event\":\"complete\"");
	assert_int_equal(bput(h, "b1", "E", 0, NULL), SLUICE_EBATCH);
	assert_int_equal(set(h, "b1", "ok", NULL, NULL, NULL), SLUICE_EBATCH);
	tq_check(h);
}

/* A fatal fail (buried), a delete, a dead-lettered task: on_complete
 * fires with the failures counted, on_success does not. */
static void
test_complete_with_failures(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b, c, ids[2];
	struct queue_batch_info i;

	assert_int_equal(bput(h, "b2", "A", 0, &a), 0);
	assert_int_equal(bput(h, "b2", "B", 0, &b), 0);
	assert_int_equal(bput(h, "b2", "C", 0, &c), 0);
	assert_int_equal(set(h, "b2", "ok", NULL, "done", "p"), 0);
	assert_int_equal(close_batch(h, "b2"), 0);
	assert_int_equal(take(h, "t"), a);
	tq_fail_fatal(h, a, "boom");
	tq_delete(h, b);
	assert_int_equal(take(h, "t"), c);
	assert_null(queue_batch_owed(h->q));
	tq_ack(h, c);
	i = show(h, "b2");
	assert_true(i.ended);
	assert_int_equal(i.buried, 1);
	assert_int_equal(i.failed, 1);
	assert_int_equal(i.acked, 1);
	assert_int_equal(i.owed, QREC_BATCH_ON_COMPLETE);
	fire(h, ids);
	assert_int_equal(ids[0], 0);
	assert_payload_has(h, ids[1], "\"buried\":1,\"acked\":1,\"failed\":1");
	assert_int_equal(take(h, "ok"), 0);
	tq_check(h);
}

/* The live tasks of a batch (its cancel's list): waiting, ready, taken,
 * newest first (a child before its parent); not the acked, the buried,
 * another batch's; an unknown batch is not found. */
static void
test_live_ids(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b, c, d, e, other, *ids;
	size_t n;

	assert_int_equal(bput(h, "lv", "A", 0, &a), 0);
	assert_int_equal(bput(h, "lv", "B", 0, &b), 0);
	assert_int_equal(bput(h, "lv", "C", 0, &c), 0);
	assert_int_equal(bput(h, "lv", "D", 0, &d), 0);
	assert_int_equal(bput(h, "lv", "E", c, &e), 0); /* waits for C */
	assert_int_equal(bput(h, "other", "X", 0, &other), 0);
	assert_int_equal(take(h, "t"), a);
	tq_ack(h, a);
	assert_int_equal(take(h, "t"), b);
	tq_fail_fatal(h, b, "boom");       /* buried */
	assert_int_equal(take(h, "t"), c); /* taken */
	assert_int_equal(queue_batch_live_ids(h->q, "lv", 2, &ids, &n), 0);
	assert_int_equal(n, 3);
	assert_true(ids[0] == e && ids[1] == d && ids[2] == c);
	free(ids);
	assert_int_equal(
	    queue_batch_live_ids(h->q, "nope", 4, &ids, &n), SLUICE_ENOTFOUND);
	assert_null(ids);
	assert_int_equal(n, 0);
	tq_check(h);
}

/* Closing an empty batch ends it at once; a batch of none but callbacks
 * too. A batch is forgotten the dedup window after its end. */
static void
test_close_empty_and_forget(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t ids[2];

	assert_int_equal(close_batch(h, "nope"), SLUICE_ENOTFOUND);
	assert_int_equal(set(h, "e", NULL, NULL, "done", NULL), 0);
	assert_int_equal(close_batch(h, "e"), 0);
	assert_true(show(h, "e").ended);
	fire(h, ids);
	assert_payload_has(h, ids[1], "\"total\":0");
	h->now += h->q->cfg.dedup_ms + 1;
	queue_tick(h->q, h->now);
	assert_null(queue_batch_find(h->q, "e", 1));
	assert_int_equal(bput(h, "e", "new", 0, NULL), 0); /* a new one */
	tq_check(h);
}

/* Bad input changes nothing. */
static void
test_bad_input(void **state)
{
	struct tq *h = tq_of(state);
	char big[QREC_BATCH_MAX + 2];
	char *pl = malloc(QREC_BATCH_PAYLOAD_MAX + 2);
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	uint64_t lsn = h->lsn;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(bput(h, big, "A", 0, NULL), SLUICE_EINVAL);
	assert_int_equal(bput(h, "a b", "A", 0, NULL), SLUICE_EINVAL);
	assert_int_equal(
	    set(h, "ok", "bad tube", NULL, NULL, NULL), SLUICE_ETUBE);
	assert_non_null(pl);
	memset(pl, 'p', QREC_BATCH_PAYLOAD_MAX + 1);
	pl[QREC_BATCH_PAYLOAD_MAX + 1] = '\0';
	assert_int_equal(set(h, "ok", NULL, NULL, "t", pl), SLUICE_ETOOBIG);
	free(pl);
	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.batch = "b";
	req.batch_len = 1;
	req.period_ms = 1000;
	assert_int_equal(
	    queue_decide_put(h->q, h->now, &req, &rec, &res), SLUICE_EINVAL);
	assert_int_equal(h->lsn, lsn);
	assert_int_equal(queue_batch_count(h->q), 0);
}

/* The records round-trip; a FIRE of a batch that owes nothing, or a
 * second one, is refused by apply (the log could not hold it). */
static void
test_records(void **state)
{
	struct tq *h = tq_of(state);
	struct qrec rec, back;
	struct buf b;
	uint64_t ids[2];

	assert_int_equal(set(h, "r", "ok", "x", NULL, NULL), 0);
	assert_int_equal(bput(h, "r", "A", 0, NULL), 0);
	assert_int_equal(queue_decide_batch_close(h->q, "r", 1, &rec), 0);
	buf_init(&b);
	assert_int_equal(qrec_encode(&rec, &b), 0);
	assert_int_equal(qrec_decode(rec.type, b.data, b.len, &back), 0);
	assert_int_equal(back.u.batch.name_len, 1);
	assert_int_equal(tq_commit(h, &rec), 0);
	tq_delete(h, take(h, "t"));
	assert_int_equal(show(h, "r").owed, 0); /* failed: no success */
	assert_int_equal(set(h, "s", NULL, NULL, "done", NULL), 0);
	assert_int_equal(close_batch(h, "s"), 0);
	{
		struct batch *bt = queue_batch_owed(h->q);

		assert_int_equal(
		    queue_decide_batch_fire(h->q, h->now, bt, &rec), 0);
	}
	buf_reset(&b);
	assert_int_equal(qrec_encode(&rec, &b), 0);
	assert_int_equal(qrec_decode(rec.type, b.data, b.len, &back), 0);
	assert_int_equal(back.u.batch.which, QREC_BATCH_ON_COMPLETE);
	assert_int_equal(tq_commit(h, &rec), 0);
	/* the same record again: apply refuses it */
	assert_int_not_equal(queue_apply(h->q, h->lsn + 1, h->now, &back), 0);
	(void)ids;
	/* a PUT_X with neither parents nor a batch is no valid body */
	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_PUT_X;
	rec.u.put.id = 99;
	rec.u.put.tube = "t";
	rec.u.put.tube_len = 1;
	rec.u.put.ttr = 1000;
	assert_false(qrec_valid(&rec));
	rec.u.put.batch = "z";
	rec.u.put.batch_len = 1;
	assert_true(qrec_valid(&rec));
	buf_fini(&b);
}

/* Replay and a snapshot give the same batches; the one whose callbacks
 * fired is never owed again; one owing, still owes. */
static void
test_replay_and_snapshot(void **state)
{
	struct tq *h = tq_of(state);
	struct tq r;
	uint64_t ids[2], live;

	assert_int_equal(set(h, "f", "ok", NULL, NULL, NULL), 0);
	assert_int_equal(bput(h, "f", "A", 0, NULL), 0);
	assert_int_equal(close_batch(h, "f"), 0);
	tq_ack(h, take(h, "t"));
	fire(h, ids);
	assert_int_equal(set(h, "o", NULL, NULL, "done", NULL), 0);
	assert_int_equal(bput(h, "o", "B", 0, NULL), 0);
	assert_int_equal(close_batch(h, "o"), 0);
	tq_ack(h, take(h, "t")); /* o ends; owes on_complete */
	assert_int_equal(set(h, "l", NULL, NULL, "done", NULL), 0);
	assert_int_equal(bput(h, "l", "C", 0, &live), 0);
	assert_int_equal(bput(h, "l", "D", 0, NULL), 0);
	tq_replayed(h);
	tq_loaded(h, &r);
	tq_check(&r);
	fire(&r, ids); /* o's, once */
	assert_int_not_equal(ids[1], 0);
	assert_null(queue_batch_owed(r.q));
	assert_int_equal(show(&r, "l").total, 2);
	assert_int_equal(show(&r, "l").ready, 2);
	assert_int_equal(close_batch(&r, "l"), 0);
	tq_delete(&r, live);
	tq_delete(&r, take(&r, "t"));
	assert_true(show(&r, "l").ended);
	assert_int_equal(show(&r, "l").failed, 2);
	tq_check(&r);
	tq_fini(&r);
}

/* 10,000 tasks: the callbacks are owed only after the last ends, and put
 * once. */
static void
test_many(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t ids[2];
	int n = 10000;

	assert_int_equal(set(h, "big", "ok", NULL, "done", NULL), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(bput(h, "big", "x", 0, NULL), 0);
	assert_int_equal(close_batch(h, "big"), 0);
	for (int i = 0; i < n; i++) {
		uint64_t id = take(h, "t");

		assert_int_not_equal(id, 0);
		assert_null(queue_batch_owed(h->q));
		tq_ack(h, id);
	}
	assert_int_equal(show(h, "big").acked, (uint64_t)n);
	fire(h, ids);
	assert_int_not_equal(ids[0], 0);
	assert_int_not_equal(ids[1], 0);
	assert_null(queue_batch_owed(h->q));
	tq_check(h);
}

/* A task in a batch costs at most 64 bytes more than one without; a
 * batch with callbacks, at most 1 KiB beside its payloads. */
static void
test_memory(void **state)
{
	struct tq *h = tq_of(state);
	enum { N = 10000 };
	size_t base, used;

	h->keep = false;
	assert_int_equal(bput(h, "m", "x", 0, NULL), 0); /* the batch */
	base = tq_heap_bytes();
	for (int i = 0; i < N; i++)
		assert_int_equal(bput(h, "m", "x", 0, NULL), 0);
	used = tq_heap_bytes() - base;
	base = tq_heap_bytes();
	for (int i = 0; i < N; i++)
		assert_int_equal(bput(h, NULL, "x", 0, NULL), 0);
	used -= tq_heap_bytes() - base;
	print_message("a task in a batch: %.1f bytes more\n", (double)used / N);
	assert_true(used <= (size_t)64 * N);
	base = tq_heap_bytes();
	for (int i = 0; i < 100; i++) {
		char name[16];

		snprintf(name, sizeof(name), "b%d", i);
		assert_int_equal(set(h, name, "ok", "p", "done", "q"), 0);
	}
	used = tq_heap_bytes() - base;
	print_message(
	    "a batch with two callbacks: %.1f bytes\n", (double)used / 100);
	assert_true(used <= (size_t)1024 * 100);
}

/* The listing's order, counts and limit; the batch a task is in. */
static void
test_list(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_batch_info v[8];
	uint64_t a, b1, b2, c, d, plain, ids[2];
	uint32_t n = 0;

	assert_int_equal(bput(h, "a", "x", 0, &a), 0);
	h->now += 10;
	assert_int_equal(bput(h, "b", "x", 0, &b1), 0);
	assert_int_equal(bput(h, "b", "y", 0, &b2), 0);
	assert_int_equal(take(h, "t"), a);
	assert_int_equal(take(h, "t"), b1); /* b: 1 taken, 1 ready */
	h->now += 10;
	assert_int_equal(bput(h, "c", "x", 0, &c), 0);
	assert_int_equal(close_batch(h, "c"), 0);
	assert_int_equal(take(h, "t"), b2);
	assert_int_equal(take(h, "t"), c);
	tq_ack(h, c); /* c ends at T0 + 20 */
	h->now += 10;
	assert_int_equal(bput(h, "d", "x", 0, &d), 0);
	assert_int_equal(close_batch(h, "d"), 0);
	assert_int_equal(take(h, "t"), d);
	h->now += 10;
	tq_ack(h, d); /* d ends at T0 + 40 */
	assert_int_equal(set(h, "empty", "ok", NULL, NULL, NULL), 0);
	assert_int_equal(bput(h, NULL, "p", 0, &plain), 0);
	h->now += 10;

	assert_int_equal(queue_batch_list(h->q, h->now, 8, v, &n), 0);
	assert_int_equal(n, 5);
	/* open: empty (no task: now), b (T0 + 10), a (T0); then ended: d
	 * (T0 + 40), c (T0 + 20) */
	assert_string_equal(v[0].b->name, "empty");
	assert_string_equal(v[1].b->name, "b");
	assert_string_equal(v[2].b->name, "a");
	assert_string_equal(v[3].b->name, "d");
	assert_string_equal(v[4].b->name, "c");
	assert_int_equal(v[1].total, 2);
	assert_int_equal(v[1].taken, 2);
	assert_int_equal(v[1].ready, 0);
	assert_int_equal(v[2].taken, 1);
	assert_true(v[3].ended && v[3].ended_at == T0 + 40);
	assert_int_equal(v[3].acked, 1);
	assert_int_equal(v[4].ended_at, T0 + 20);
	assert_int_equal(v[0].total, 0);
	/* the same counts as show */
	for (uint32_t i = 0; i < n; i++) {
		struct queue_batch_info one = show(h, v[i].b->name);

		assert_int_equal(one.waiting, v[i].waiting);
		assert_int_equal(one.ready, v[i].ready);
		assert_int_equal(one.taken, v[i].taken);
		assert_int_equal(one.delayed, v[i].delayed);
		assert_int_equal(one.acked, v[i].acked);
	}
	/* the limit */
	assert_int_equal(queue_batch_list(h->q, h->now, 2, v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[1].b->name, "b");
	/* the batch of a task while it is live there */
	assert_string_equal(queue_batch_of(h->q, b2)->name, "b");
	assert_null(queue_batch_of(h->q, plain));
	assert_null(queue_batch_of(h->q, d)); /* acked: gone from it */
	/* fired, still listed ended */
	while (queue_batch_owed(h->q) != NULL)
		fire(h, ids);
	assert_int_equal(queue_batch_list(h->q, h->now, 8, v, &n), 0);
	assert_int_equal(n, 5);
	assert_string_equal(v[4].b->name, "c");
	tq_check(h);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tq_setup, tq_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_success),
		T(test_complete_with_failures),
		T(test_live_ids),
		T(test_close_empty_and_forget),
		T(test_bad_input),
		T(test_records),
		T(test_replay_and_snapshot),
		T(test_many),
		T(test_memory),
		T(test_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
