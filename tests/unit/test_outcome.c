/* Tests of the outcomes of finished tasks and of cancelling (src/queue/
 * outcome.c): a task acked before anyone asked keeps its result for the
 * dedup window even when its tube keeps no finished tasks (ACK_R); a dead
 * letter, a delete and a cancel are outcomes too; the window and the
 * memory bound end them; a cancel removes a waiting task at once and
 * marks a taken one, whose touch is refused and whose lease, however it
 * ends, removes it; the records go through the codec, and replay and a
 * snapshot rebuild the same state. Every record goes through the harness
 * (decide, encode, decode, apply). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"

#define T0 1700000000000LL /* a unix time in ms */

static int
setup(void **state)
{
	struct queue_config cfg;

	queue_config_default(&cfg);
	cfg.dedup_ms = 60000; /* outcomes are kept a minute */
	*state = tq_new_with(&cfg, T0);
	return *state != NULL ? 0 : -1;
}

/* Ids of the tasks the final callback named, in order. */
static uint64_t finals[16];
static size_t nfinals;

static void
on_final(void *arg, uint64_t id)
{
	(void)arg;
	if (nfinals < 16)
		finals[nfinals++] = id;
}

static uint64_t
put(struct tq *h, const char *tube, int64_t delay)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	queue_put_req_init(&req);
	req.tube = tube;
	req.tube_len = strlen(tube);
	req.payload = "p";
	req.payload_len = 1;
	req.delay_ms = delay;
	req.ttr_ms = 1000;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	return res.id;
}

/* Takes the next task of `tube`; returns its lease. */
static uint64_t
take(struct tq *h, const char *tube, uint64_t id)
{
	struct queue_str t = { tube, strlen(tube) };
	struct queue_take_req req = { &t, 1, 7, false, false };
	struct queue_task_view v;
	struct qrec rec;

	assert_int_equal(queue_decide_take(h->q, h->now, &req, &rec), 0);
	assert_int_equal(rec.u.take.id, id);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	return v.lease;
}

static int
ack(struct tq *h, uint64_t id, uint64_t lease, const char *result,
    uint16_t *type)
{
	struct queue_ack_req req = { id, lease, NULL, 0, false, result,
		result ? strlen(result) : 0 };
	struct qrec rec;
	int rc = queue_decide_ack(h->q, h->now, &req, &rec);

	if (rc != 0)
		return rc;
	if (type != NULL)
		*type = rec.type;
	return tq_commit(h, &rec);
}

static int
cancel(struct tq *h, uint64_t id, struct qrec *out)
{
	struct qrec rec;
	int rc = queue_decide_cancel(h->q, h->now, id, &rec);

	if (rc != 0)
		return rc;
	if (out != NULL)
		*out = rec;
	return tq_commit(h, &rec);
}

/* The replayed log and a snapshot of h give h's state. */
static void
rebuilds(struct tq *h)
{
	struct queue *r, *s;
	struct queue_config cfg;
	struct buf snap;

	queue_config_default(&cfg);
	cfg.dedup_ms = 60000;
	r = queue_new(&cfg);
	s = queue_new(&cfg);
	assert_non_null(r);
	assert_non_null(s);
	assert_int_equal(tq_replay(h, r, 0, h->nlog), 0);
	assert_true(tq_same(h->q, r, h->now));
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	assert_int_equal(tq_snap_load(s, &snap), 0);
	assert_true(tq_same(h->q, s, h->now));
	assert_int_equal(queue_check(s, NULL), 0);
	buf_fini(&snap);
	queue_free(r);
	queue_free(s);
}

/* An ack with a result in a tube that keeps no finished task: the task
 * is gone, its outcome (done, the result, the tube, the time) is kept
 * for the window, then forgotten. */
static void
test_outcome_of_ack_outlives_the_task(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_result r;
	struct queue_task_view v;
	uint16_t type = 0;
	uint64_t id = put(h, "jobs", 0), lease = take(h, "jobs", id);

	nfinals = 0;
	queue_on_final(h->q, on_final, NULL);
	assert_int_equal(queue_result(h->q, h->now, id, &r), 0);
	assert_false(r.final);
	assert_int_equal(r.state, QUEUE_TAKEN);
	h->now += 10;
	assert_int_equal(ack(h, id, lease, "42", &type), 0);
	assert_int_equal(type, QREC_ACK_R);
	assert_int_equal(nfinals, 1);
	assert_int_equal(finals[0], id);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), SLUICE_ENOTFOUND);
	assert_int_equal(queue_result(h->q, h->now, id, &r), 0);
	assert_true(r.final);
	assert_int_equal(r.state, QUEUE_END_DONE);
	assert_int_equal(r.time, h->now);
	assert_int_equal(r.text_len, 2);
	assert_memory_equal(r.text, "42", 2);
	assert_int_equal(r.tube_len, 4);
	assert_memory_equal(r.tube, "jobs", 4);
	assert_int_equal(queue_outcome_count(h->q), 1);
	assert_int_equal(queue_outcome_bytes(h->q), OUTCOME_COST + 4 + 2);
	rebuilds(h);
	/* an ack without a result is the ACK it always was */
	id = put(h, "jobs", 0);
	lease = take(h, "jobs", id);
	assert_int_equal(ack(h, id, lease, NULL, &type), 0);
	assert_int_equal(type, QREC_ACK);
	assert_int_equal(queue_result(h->q, h->now, id, &r), 0);
	assert_int_equal(r.state, QUEUE_END_DONE);
	assert_null(r.text);
	h->now += 60000;
	assert_int_equal(queue_result(h->q, h->now, id, &r), SLUICE_ENOTFOUND);
	assert_int_equal(queue_outcome_count(h->q), 0);
	assert_int_equal(queue_outcome_bytes(h->q), 0);
	queue_on_final(h->q, NULL, NULL);
}

/* A buried task is final where it is; a task moved to its tube's dead
 * letter is final with its error though it lives on there; a deleted
 * one is final as deleted. */
static void
test_outcome_of_failures(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_tube_set_req ts;
	struct queue_fail_req fr;
	struct queue_delete_req dr;
	struct queue_result r;
	struct qrec rec;
	uint64_t a, b, lease;

	a = put(h, "w", 0);
	lease = take(h, "w", a);
	memset(&fr, 0, sizeof(fr));
	fr.id = a;
	fr.lease = lease;
	fr.error = "boom";
	fr.error_len = 4;
	fr.fatal = true;
	assert_int_equal(queue_decide_fail(h->q, h->now, &fr, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_result(h->q, h->now, a, &r), 0);
	assert_true(r.final);
	assert_int_equal(r.state, QUEUE_END_BURIED);
	assert_memory_equal(r.text, "boom", 4);

	memset(&ts, 0, sizeof(ts));
	ts.tube = "x";
	ts.tube_len = 1;
	ts.set = QREC_TS_DEAD_LETTER;
	ts.conf.dead_letter = "dlq";
	ts.conf.dead_letter_len = 3;
	assert_int_equal(queue_decide_tube_set(h->q, h->now, &ts, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	b = put(h, "x", 0);
	fr.id = b;
	fr.lease = take(h, "x", b);
	assert_int_equal(queue_decide_fail(h->q, h->now, &fr, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_result(h->q, h->now, b, &r), 0);
	assert_true(r.final);
	assert_int_equal(r.state, QUEUE_END_DEAD);
	assert_string_equal(queue_end_name(r.state), "dead_lettered");
	assert_memory_equal(r.text, "boom", 4);

	memset(&dr, 0, sizeof(dr));
	dr.id = a;
	assert_int_equal(queue_decide_delete(h->q, h->now, &dr, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_result(h->q, h->now, a, &r), 0);
	assert_int_equal(r.state, QUEUE_END_DELETED);
	assert_memory_equal(r.text, "boom", 4);
	rebuilds(h);
}

/* Puts into "w" after `parent` with `rule`; the id. */
static uint64_t
put_after(struct tq *h, uint64_t parent, int rule)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	queue_put_req_init(&req);
	req.tube = "w";
	req.tube_len = 1;
	req.payload = "c";
	req.payload_len = 1;
	req.after = &parent;
	req.nafter = 1;
	req.on_parent_failure = (uint8_t)rule;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	return res.id;
}

/* Whether the final callback named `id`. */
static bool
named_final(uint64_t id)
{
	for (size_t i = 0; i < nfinals; i++)
		if (finals[i] == id)
			return true;
	return false;
}

/* A parent that fails for good by a worker's fail (no delete, no
 * cancel of its own) ends its children by their rules: the one under
 * `fail`, buried, is final where it is, and the one under `cancel`,
 * gone, has the outcome cancelled; a waiter on either is told at once
 * (the final callback), not at its timeout. So is a child put under
 * `cancel` after its parent failed already: gone as it is put,
 * cancelled. */
static void
test_children_ended_by_a_parent_are_final(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_fail_req fr;
	struct queue_result r;
	struct qrec rec;
	uint64_t p = put(h, "w", 0), cf, cc, late;

	cf = put_after(h, p, QUEUE_PARENT_FAIL);
	cc = put_after(h, p, QUEUE_PARENT_CANCEL);
	nfinals = 0;
	queue_on_final(h->q, on_final, NULL);
	memset(&fr, 0, sizeof(fr));
	fr.id = p;
	fr.lease = take(h, "w", p);
	fr.error = "boom";
	fr.error_len = 4;
	fr.fatal = true;
	h->now += 10;
	assert_int_equal(queue_decide_fail(h->q, h->now, &fr, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_true(named_final(p));
	assert_true(named_final(cf));
	assert_true(named_final(cc));
	assert_int_equal(queue_result(h->q, h->now, cf, &r), 0);
	assert_true(r.final);
	assert_int_equal(r.state, QUEUE_END_BURIED);
	assert_int_equal(queue_result(h->q, h->now, cc, &r), 0);
	assert_true(r.final);
	assert_int_equal(r.state, QUEUE_END_CANCELLED);
	assert_true(r.time == h->now);
	/* put after the failed parent: gone at once, cancelled */
	late = put_after(h, p, QUEUE_PARENT_CANCEL);
	assert_true(named_final(late));
	assert_int_equal(queue_result(h->q, h->now, late, &r), 0);
	assert_true(r.final);
	assert_int_equal(r.state, QUEUE_END_CANCELLED);
	rebuilds(h);
	queue_on_final(h->q, NULL, NULL);
}

/* A ready, a delayed and a buried task are removed at once, each noted
 * cancelled; an unknown id is ENOTFOUND and changes nothing. */
static void
test_cancel_waiting_tasks(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_bury_req br;
	struct queue_result r;
	struct qrec rec;
	uint64_t ids[3];
	uint64_t lsn = h->lsn;

	assert_int_equal(cancel(h, 999, NULL), SLUICE_ENOTFOUND);
	assert_int_equal(h->lsn, lsn);
	ids[0] = put(h, "c", 0);
	ids[1] = put(h, "c", 5000);
	ids[2] = put(h, "c", 0);
	memset(&br, 0, sizeof(br));
	br.id = ids[2];
	br.force = true;
	assert_int_equal(queue_decide_bury(h->q, h->now, &br, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	for (int i = 0; i < 3; i++) {
		struct queue_task_view v;

		assert_int_equal(cancel(h, ids[i], &rec), 0);
		assert_int_equal(rec.type, QREC_CANCEL);
		assert_int_equal(rec.u.cancel.lease, 0);
		assert_int_equal(
		    queue_peek(h->q, h->now, ids[i], &v), SLUICE_ENOTFOUND);
		assert_int_equal(queue_result(h->q, h->now, ids[i], &r), 0);
		assert_true(r.final);
		assert_int_equal(r.state, QUEUE_END_CANCELLED);
		assert_string_equal(queue_end_name(r.state), "cancelled");
		assert_int_equal(cancel(h, ids[i], NULL), SLUICE_ENOTFOUND);
	}
	rebuilds(h);
}

/* A taken task is marked: it stays taken, its touch gets ECANCELED, a
 * second cancel too; its release is a DELETE that removes it (outcome
 * cancelled), and so is an ack; a mark survives replay and a
 * snapshot. */
static void
test_cancel_taken_task(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_touch_req tr;
	struct queue_release_req rr;
	struct queue_task_view v;
	struct queue_result r;
	struct qrec rec;
	uint16_t type = 0;
	uint64_t a = put(h, "c", 0), la = take(h, "c", a);
	uint64_t b = put(h, "c", 0), lb = take(h, "c", b);

	assert_int_equal(cancel(h, a, &rec), 0);
	assert_int_equal(rec.u.cancel.lease, la);
	assert_true(queue_cancelled(h->q, a));
	assert_int_equal(queue_peek(h->q, h->now, a, &v), 0);
	assert_int_equal(v.state, QUEUE_TAKEN);
	assert_int_equal(queue_result(h->q, h->now, a, &r), 0);
	assert_false(r.final);
	assert_true(r.cancelled);
	assert_int_equal(cancel(h, a, NULL), SLUICE_ECANCELED);
	tr.id = a;
	tr.lease = la;
	tr.force = false;
	assert_int_equal(
	    queue_decide_touch(h->q, h->now, &tr, &rec), SLUICE_ECANCELED);
	rebuilds(h);
	memset(&rr, 0, sizeof(rr));
	rr.id = a;
	rr.lease = la;
	assert_int_equal(queue_decide_release(h->q, h->now, &rr, &rec), 0);
	assert_int_equal(rec.type, QREC_DELETE);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_false(queue_cancelled(h->q, a));
	assert_int_equal(queue_peek(h->q, h->now, a, &v), SLUICE_ENOTFOUND);
	assert_int_equal(queue_result(h->q, h->now, a, &r), 0);
	assert_int_equal(r.state, QUEUE_END_CANCELLED);

	/* an ack of a cancelled task succeeds and removes it */
	assert_int_equal(cancel(h, b, NULL), 0);
	assert_int_equal(ack(h, b, lb, "late", &type), 0);
	assert_int_equal(type, QREC_DELETE);
	assert_int_equal(queue_peek(h->q, h->now, b, &v), SLUICE_ENOTFOUND);
	assert_int_equal(queue_result(h->q, h->now, b, &r), 0);
	assert_int_equal(r.state, QUEUE_END_CANCELLED);
	rebuilds(h);
}

/* A done task (its tube keeps finished tasks) that is cancelled goes at
 * once, and its outcome stays what it was: done, with its result. */
static void
test_cancel_of_a_done_task_keeps_its_outcome(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_tube_set_req ts;
	struct queue_task_view v;
	struct queue_result r;
	struct qrec rec;
	uint64_t id, lease;

	memset(&ts, 0, sizeof(ts));
	ts.tube = "k";
	ts.tube_len = 1;
	ts.set = QREC_TS_KEEP_DONE;
	ts.conf.keep_done = 3600000;
	assert_int_equal(queue_decide_tube_set(h->q, h->now, &ts, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	id = put(h, "k", 0);
	lease = take(h, "k", id);
	assert_int_equal(ack(h, id, lease, "kept", NULL), 0);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	assert_int_equal(v.state, QUEUE_DONE);
	assert_int_equal(cancel(h, id, &rec), 0);
	assert_int_equal(rec.u.cancel.lease, 0);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), SLUICE_ENOTFOUND);
	assert_int_equal(queue_result(h->q, h->now, id, &r), 0);
	assert_int_equal(r.state, QUEUE_END_DONE);
	assert_memory_equal(r.text, "kept", 4);
	rebuilds(h);
}

/* A cancelled task whose lease runs out is removed by the expiry (no
 * retry), and a stale lease is still refused as stale. */
static void
test_cancel_then_ttr(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_touch_req tr;
	struct queue_result r;
	struct qrec rec;
	uint64_t a = put(h, "c", 0), la = take(h, "c", a);

	assert_int_equal(cancel(h, a, NULL), 0);
	tr.id = a;
	tr.lease = la + 1;
	tr.force = false;
	assert_int_equal(
	    queue_decide_touch(h->q, h->now, &tr, &rec), SLUICE_ESTALE);
	h->now += 1001;
	assert_int_equal(queue_decide_expired(h->q, h->now, &rec), 0);
	assert_int_equal(rec.type, QREC_DELETE);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_result(h->q, h->now, a, &r), 0);
	assert_int_equal(r.state, QUEUE_END_CANCELLED);
	assert_int_equal(
	    queue_decide_expired(h->q, h->now, &rec), SLUICE_ENOTFOUND);
	rebuilds(h);
}

/* The memory bound drops the oldest outcomes first. */
static void
test_outcome_memory_bound(void **state)
{
	struct queue_config cfg;
	struct queue_result r;
	struct tq small;
	uint64_t ids[4];

	(void)state;
	queue_config_default(&cfg);
	cfg.max_outcome_bytes = 3 * (OUTCOME_COST + 1 + 1);
	tq_init(&small, &cfg, T0);
	for (int i = 0; i < 4; i++) {
		uint64_t lease;

		ids[i] = put(&small, "q", 0);
		lease = take(&small, "q", ids[i]);
		assert_int_equal(ack(&small, ids[i], lease, "r", NULL), 0);
	}
	assert_int_equal(queue_outcome_count(small.q), 3);
	assert_true(queue_outcome_bytes(small.q) <= cfg.max_outcome_bytes);
	assert_int_equal(
	    queue_result(small.q, small.now, ids[0], &r), SLUICE_ENOTFOUND);
	assert_int_equal(queue_result(small.q, small.now, ids[3], &r), 0);
	assert_int_equal(queue_check(small.q, NULL), 0);
	tq_fini(&small);
}

/* xorshift64*: a fixed sequence per seed. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* Random steps - puts, takes, acks with and without a result, fails
 * (some to a dead letter), buries, cancels of any task, deletes,
 * expiries, time passing the window - keep the invariants at every
 * step (queue_check), every outcome the queue answers is final, a
 * cancelled task is never answered as done, and replay and a snapshot
 * rebuild the same state, snapshots taken half-way included. */
static void
test_random_steps_agree(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_tube_set_req ts;
	struct qrec rec;
	uint64_t seed = 0x9e3779b97f4a7c15ULL, ids[64] = { 0 }, leases[64];
	bool cancelled[64] = { false };
	size_t n = 0, checked = 0;

	memset(&ts, 0, sizeof(ts));
	ts.tube = "r";
	ts.tube_len = 1;
	ts.set = QREC_TS_DEAD_LETTER | QREC_TS_MAX_ATTEMPTS;
	ts.conf.max_attempts = 2;
	ts.conf.dead_letter = "rdead";
	ts.conf.dead_letter_len = 5;
	assert_int_equal(queue_decide_tube_set(h->q, h->now, &ts, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	for (int step = 0; step < 3000; step++) {
		uint64_t r = rnd(&seed), pick = ids[r % (n ? n : 1)];
		size_t k = n ? (size_t)(r % n) : 0;
		int what = (int)((r >> 16) % 10);
		struct queue_str tube = { "r", 1 };
		struct queue_take_req tr = { &tube, 1, 3, false, false };
		struct queue_task_view v;

		h->now += (int64_t)((r >> 24) % 50);
		if (what == 0 || n == 0) {
			if (n == 64) { /* forget the oldest, keep the array */
				memmove(ids, ids + 1, 63 * sizeof(ids[0]));
				memmove(cancelled, cancelled + 1, 63);
				n--;
			}
			ids[n] = put(h, (r >> 32) % 3 ? "r" : "s", 0);
			cancelled[n] = false;
			n++;
			continue;
		}
		if (what == 1 &&
		    queue_decide_take(h->q, h->now, &tr, &rec) == 0) {
			assert_int_equal(tq_commit(h, &rec), 0);
			continue;
		}
		if (queue_peek(h->q, h->now, pick, &v) != 0)
			continue;
		leases[k] = v.lease;
		if (what == 2 && v.state == QUEUE_TAKEN) {
			struct queue_ack_req a = { pick, v.lease, NULL, 0,
				false, (r >> 40) % 2 ? "res" : NULL,
				(r >> 40) % 2 ? 3 : 0 };

			if (queue_decide_ack(h->q, h->now, &a, &rec) == 0)
				assert_int_equal(tq_commit(h, &rec), 0);
		} else if (what == 3 && v.state == QUEUE_TAKEN) {
			struct queue_fail_req f = { 0 };

			f.id = pick;
			f.lease = leases[k];
			f.error = "e";
			f.error_len = 1;
			f.set_delay = true;
			if (queue_decide_fail(h->q, h->now, &f, &rec) == 0)
				assert_int_equal(tq_commit(h, &rec), 0);
		} else if (what == 4 || what == 5) {
			int rc = queue_decide_cancel(h->q, h->now, pick, &rec);

			assert_true(rc == 0 || rc == SLUICE_ECANCELED);
			if (rc == 0)
				assert_int_equal(tq_commit(h, &rec), 0);
			cancelled[k] = true;
		} else if (what == 6) {
			struct queue_delete_req d = { pick, NULL, 0, NULL, 0 };

			if (!cancelled[k] &&
			    queue_decide_delete(h->q, h->now, &d, &rec) == 0)
				assert_int_equal(tq_commit(h, &rec), 0);
		} else if (what == 7) {
			h->now += 1001; /* leases of 1 s end */
			while (queue_decide_expired(h->q, h->now, &rec) == 0)
				assert_int_equal(tq_commit(h, &rec), 0);
		} else if (what == 8 && (r >> 48) % 20 == 0) {
			h->now += 60000; /* the window passes */
		}
		assert_int_equal(queue_check(h->q, NULL), 0);
		if (step == 1500)
			rebuilds(h);
	}
	for (size_t i = 0; i < n; i++) {
		struct queue_result res;

		if (queue_result(h->q, h->now, ids[i], &res) != 0)
			continue;
		/* a cancel wins over whatever ended the task after it */
		checked += cancelled[i];
		if (cancelled[i])
			assert_true(res.final
			        ? res.state == QUEUE_END_CANCELLED
			        : res.cancelled && res.state == QUEUE_TAKEN);
		if (res.state == QUEUE_END_DONE)
			assert_true(res.final);
	}
	assert_true(checked > 0);
	assert_true(queue_outcome_count(h->q) > 0);
	rebuilds(h);
}

/* The new records through the codec: exactly their layout; an ACK_R
 * without a result and a CANCEL of id 0 are not valid. */
static void
test_records_codec(void **state)
{
	struct qrec rec, dec;
	struct buf b;

	(void)state;
	buf_init(&b);
	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_CANCEL;
	rec.u.cancel.id = 5;
	rec.u.cancel.lease = 9;
	assert_int_equal(qrec_encode(&rec, &b), 0);
	assert_int_equal(b.len, 16);
	assert_int_equal(qrec_decode(QREC_CANCEL, b.data, b.len, &dec), 0);
	assert_int_equal(dec.u.cancel.id, 5);
	assert_int_equal(dec.u.cancel.lease, 9);
	assert_int_equal(
	    qrec_decode(QREC_CANCEL, b.data, b.len - 1, &dec), SLUICE_ECORRUPT);
	rec.u.cancel.id = 0;
	assert_false(qrec_valid(&rec));
	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_ACK_R;
	rec.u.end.id = 5;
	rec.u.end.lease = 9;
	rec.u.end.outcome = QREC_DELETED;
	assert_false(qrec_valid(&rec)); /* no result */
	rec.u.end.result = "ok";
	rec.u.end.result_len = 2;
	buf_reset(&b);
	assert_int_equal(qrec_encode(&rec, &b), 0);
	assert_int_equal(qrec_decode(QREC_ACK_R, b.data, b.len, &dec), 0);
	assert_int_equal(dec.u.end.outcome, QREC_DELETED);
	assert_int_equal(dec.u.end.result_len, 2);
	assert_memory_equal(dec.u.end.result, "ok", 2);
	assert_int_equal(
	    qrec_decode(QREC_ACK_R, b.data, b.len - 1, &dec), SLUICE_ECORRUPT);
	assert_string_equal(qrec_type_name(QREC_ACK_R), "ACK_R");
	assert_string_equal(qrec_type_name(QREC_CANCEL), "CANCEL");
	buf_fini(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_outcome_of_ack_outlives_the_task, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_outcome_of_failures, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cancel_waiting_tasks, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cancel_taken_task, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cancel_then_ttr, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cancel_of_a_done_task_keeps_its_outcome, setup,
		    tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_outcome_memory_bound, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_random_steps_agree, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_children_ended_by_a_parent_are_final, setup,
		    tq_teardown),
		cmocka_unit_test(test_records_codec),
	};
	return cmocka_run_group_tests_name("outcome", tests, NULL, NULL);
}
