/* Tests of a tube's move between clusters in the queue (src/queue/move.c):
 * tasks held at the source out of every worker's reach, over ttr, a
 * restart and a snapshot, then dropped; copies made at the target with
 * their attempts, errors, times, keys and groups, never twice for one
 * source id, folded into a live task of their key; key reservations
 * listed at the source and reserved at the target until the same time;
 * the tasks of a workflow under way counted; a tube's group settings
 * listed by name; replay and snapshots give the same state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "queue/limits.h"
#include "queue/qstate.h"

#define T0 TQ_T0

static uint64_t
put(struct tq *h, const char *tube, const char *p, const char *key,
    int64_t delay)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	queue_put_req_init(&req);
	req.tube = tube;
	req.tube_len = strlen(tube);
	req.payload = p;
	req.payload_len = strlen(p);
	req.delay_ms = delay;
	req.key = key;
	req.key_len = key != NULL ? strlen(key) : 0;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	return res.id;
}

static int
take(struct tq *h, const char *tube, uint64_t *id)
{
	struct queue_str s = { tube, strlen(tube) };
	struct queue_take_req tr = { &s, 1, 7, false, false };
	struct qrec rec;
	int rc;

	if ((rc = queue_decide_take(h->q, h->now, &tr, &rec)) != 0)
		return rc;
	assert_int_equal(tq_commit(h, &rec), 0);
	if (id != NULL)
		*id = rec.u.take.id;
	return 0;
}

static int
hold(struct tq *h, const char *tube, uint64_t *id)
{
	struct qrec rec;
	int rc = queue_decide_move_hold(
	    h->q, h->now, tube, strlen(tube), 1000 + h->lsn, &rec);

	if (rc != 0)
		return rc;
	assert_int_equal(tq_commit(h, &rec), 0);
	*id = rec.u.move.id;
	return 0;
}

static void
same_by_replay_and_snapshot(struct tq *h)
{
	struct tq r;

	tq_replayed(h);
	tq_loaded(h, &r);
	tq_check(&r);
	tq_fini(&r);
}

/* Held tasks are out of reach: no take, no ttr expiry, no restart
 * releases them; they keep their state before for the copy; a drop
 * under another lease does nothing; replay and a snapshot keep them. */
static void
test_hold_and_drop(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t r1, r2, d, b, ids[8], got[3], lease = 0, x;
	struct qrec rec;
	size_t n;

	r1 = put(h, "m", "a", "k1", 0);
	r2 = put(h, "m", "b", NULL, 0);
	d = put(h, "m", "c", NULL, 60000);
	b = put(h, "m", "d", NULL, 0);
	put(h, "other", "e", NULL, 0);
	assert_int_equal(take(h, "m", &x), 0);
	assert_int_equal(x, r1);
	/* r1 is taken by a worker: it stays out of the move */
	for (int i = 0; i < 3; i++)
		assert_int_equal(hold(h, "m", &got[i]), 0);
	/* the oldest ready first: r2, b, then the delayed d (r1 is taken) */
	assert_int_equal(got[0], r2);
	assert_int_equal(got[1], b);
	assert_int_equal(got[2], d);
	assert_int_equal(hold(h, "m", &x), SLUICE_ENOTFOUND);
	assert_int_equal(take(h, "m", &x), SLUICE_ETIMEDOUT);
	assert_int_equal(queue_move_was(h->q, d, &lease), QUEUE_DELAYED);
	assert_int_equal(queue_move_was(h->q, r2, NULL), QUEUE_READY);
	assert_int_equal(queue_move_was(h->q, r1, NULL), 0);
	n = queue_move_held(h->q, "m", 1, ids, 8);
	assert_int_equal(n, 3);
	/* a week later: r1's lease expired, the held ones stay */
	h->now += 8LL * 24 * 3600 * 1000;
	while (queue_decide_expired(h->q, h->now, &rec) == 0)
		assert_int_equal(tq_commit(h, &rec), 0);
	while (queue_decide_restart(h->q, h->now, "r", 1, &rec) == 0)
		assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_move_held(h->q, "m", 1, ids, 8), 3);
	h->now += 2LL * 3600 * 1000; /* past r1's backoff */
	assert_int_equal(take(h, "m", &x), 0);
	assert_int_equal(x, r1);
	tq_check(h);
	same_by_replay_and_snapshot(h);
	/* a drop under another lease is nothing; under its own, it goes */
	assert_int_equal(queue_decide_move_drop(h->q, d, lease + 1, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	for (int i = 0; i < 3; i++) {
		uint64_t l = 0;

		assert_int_not_equal(queue_move_was(h->q, got[i], &l), 0);
		assert_int_equal(
		    queue_decide_move_drop(h->q, got[i], l, &rec), 0);
		assert_int_equal(rec.type, QREC_MOVE_DROP);
		assert_int_equal(tq_commit(h, &rec), 0);
		assert_int_equal(
		    queue_decide_move_drop(h->q, got[i], l, &rec), 0);
		assert_int_equal(rec.type, QREC_NONE);
	}
	assert_int_equal(queue_move_held(h->q, "m", 1, ids, 8), 0);
	tq_check(h);
	same_by_replay_and_snapshot(h);
}

static struct queue_move_item
item(uint64_t src, int st, const char *key, const char *p)
{
	struct queue_move_item it;

	memset(&it, 0, sizeof(it));
	it.src_id = src;
	it.state = st;
	it.attempts = 3;
	it.created_at = T0 - 5000;
	it.error = "boom";
	it.error_len = 4;
	it.tube = "m";
	it.tube_len = 1;
	it.payload = p;
	it.payload_len = strlen(p);
	it.pri = 7;
	it.ttr = 1234;
	it.max_attempts = 9;
	it.run_at = st == QUEUE_DELAYED ? T0 + 60000 : T0 - 4000;
	it.key = key;
	it.key_len = key != NULL ? strlen(key) : 0;
	it.group = "g1";
	it.group_len = 2;
	return it;
}

static uint64_t
copy_in(struct tq *h, const struct queue_move_item *it, int *type)
{
	struct qrec rec;
	uint64_t id = 0;

	assert_int_equal(
	    queue_decide_move_in(h->q, h->now, "c1", 2, it, &rec, &id), 0);
	*type = rec.type;
	if (rec.type != QREC_NONE)
		assert_int_equal(tq_commit(h, &rec), 0);
	return id;
}

/* Copies keep what the source knew; a source id is copied once; a key
 * live here folds the copy into its task; the end forgets the table. */
static void
test_copy_in(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_move_item a = item(11, QUEUE_READY, NULL, "a"),
	                       d = item(12, QUEUE_DELAYED, "kd", "d"),
	                       b = item(13, QUEUE_BURIED, NULL, "b"),
	                       k = item(14, QUEUE_READY, "live", "k");
	struct queue_task_view v;
	uint64_t ia, id, ib, ik, live, x;
	const char *src = NULL;
	struct qrec rec;
	int type;

	live = put(h, "m", "new", "live", 0);
	ia = copy_in(h, &a, &type);
	assert_int_equal(type, QREC_MOVE_IN);
	id = copy_in(h, &d, &type);
	ib = copy_in(h, &b, &type);
	ik = copy_in(h, &k, &type);
	assert_int_equal(type, QREC_MOVE_IN); /* folded, noted */
	assert_int_equal(ik, live);
	/* again (a mover that resumes): nothing new, the same ids */
	assert_int_equal(copy_in(h, &a, &type), ia);
	assert_int_equal(type, QREC_NONE);
	assert_int_equal(copy_in(h, &k, &type), live);
	assert_int_equal(type, QREC_NONE);
	assert_int_equal(queue_move_pairs(h->q, "m", 1, &src), 4);
	assert_string_equal(src, "c1");
	/* another source while this one's move is on */
	assert_int_equal(
	    queue_decide_move_in(h->q, h->now, "c9", 2, &a, &rec, &x),
	    SLUICE_ESTATE);
	assert_int_equal(queue_peek(h->q, h->now, ia, &v), 0);
	assert_int_equal(v.state, QUEUE_READY);
	assert_int_equal(v.attempts, 3);
	assert_int_equal(v.max_attempts, 9);
	assert_int_equal(v.ttr, 1234);
	assert_int_equal(v.pri, 7);
	assert_int_equal(v.created_at, T0 - 5000);
	assert_int_equal(v.run_at, T0 - 4000);
	assert_int_equal(v.last_error_len, 4);
	assert_int_equal(v.group_len, 2);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_int_equal(v.run_at, T0 + 60000);
	assert_int_equal(v.key_len, 2);
	assert_int_equal(queue_peek(h->q, h->now, ib, &v), 0);
	assert_int_equal(v.state, QUEUE_BURIED);
	/* the older ready copy comes before the task put here */
	assert_int_equal(take(h, "m", &x), 0);
	assert_int_equal(x, ia);
	tq_check(h);
	same_by_replay_and_snapshot(h);
	assert_int_equal(queue_decide_move_end(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_MOVE_END);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_move_pairs(h->q, "m", 1, NULL), 0);
	assert_int_equal(queue_decide_move_end(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	tq_check(h);
	same_by_replay_and_snapshot(h);
}

/* A tube marked moving out hands out nothing until its move ends; the
 * mark outlives replay and a snapshot. */
static void
test_mark(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, x;
	struct qrec rec;

	assert_int_equal(queue_decide_move_mark(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE); /* no such tube */
	a = put(h, "m", "a", "k", 0);
	assert_int_equal(queue_decide_move_mark(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_MOVE_MARK);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_decide_move_mark(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	assert_int_equal(take(h, "m", &x), SLUICE_ETIMEDOUT);
	same_by_replay_and_snapshot(h);
	assert_int_equal(queue_decide_move_end(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_MOVE_END);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(take(h, "m", &x), 0);
	assert_int_equal(x, a);
	tq_check(h);
}

/* A put's answer: its id, *created. */
static uint64_t
put_key(struct tq *h, const char *key, bool *created)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	queue_put_req_init(&req);
	req.tube = "m";
	req.tube_len = 1;
	req.payload = "x";
	req.payload_len = 1;
	req.key = key;
	req.key_len = strlen(key);
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	*created = res.created;
	return res.id;
}

static uint64_t
key_in(
    struct tq *h, const char *source, const struct queue_move_key *k, int *type)
{
	struct qrec rec;
	uint64_t id = 99;

	assert_int_equal(queue_decide_move_key(h->q, h->now, source,
	                     strlen(source), "m", 1, k, &rec, &id),
	    0);
	*type = rec.type;
	if (rec.type != QREC_NONE)
		assert_int_equal(tq_commit(h, &rec), 0);
	return id;
}

/* The keys of tasks acked at the source are listed (its tube's only, not
 * expired, by id from a cursor), and reserved at the target until the
 * same time: a put of one there creates nothing; a key live there folds
 * the reservation into its task; sent again, nothing is made; once the
 * time is over the key is free; replay and a snapshot keep it all. */
static void
test_keys(void **state)
{
	struct tq *h = tq_of(state), t;
	uint64_t k1, k2, k3, x, y, id1, id2, live, got;
	struct queue_move_key keys[4];
	struct qrec rec;
	bool created;
	int type;

	k1 = put(h, "m", "a", "k1", 0);
	k2 = put(h, "m", "b", "k2", 0);
	k3 = put(h, "other", "c", "k3", 0);
	put(h, "m", "d", "k4", 0); /* live: not a reservation */
	/* acked out of order: k2 first, k1 a second later */
	assert_int_equal(take(h, "m", &x), 0);
	assert_int_equal(x, k1);
	assert_int_equal(take(h, "m", &y), 0);
	assert_int_equal(y, k2);
	tq_ack(h, y);
	h->now += 1000;
	tq_ack(h, x);
	assert_int_equal(take(h, "other", &x), 0);
	tq_ack(h, x);
	assert_int_equal(queue_move_keys(h->q, "m", 1, 0, keys, 4), 2);
	assert_int_equal(keys[0].id, k1);
	assert_int_equal(keys[1].id, k2);
	assert_int_equal(keys[0].expires, T0 + 1000 + QUEUE_DEFAULT_DEDUP_MS);
	assert_int_equal(keys[1].expires, T0 + QUEUE_DEFAULT_DEDUP_MS);
	assert_int_equal(keys[1].key_len, 2);
	assert_memory_equal(keys[1].key, "k2", 2);
	assert_int_equal(queue_move_keys(h->q, "m", 1, k1, keys, 4), 1);
	assert_int_equal(keys[0].id, k2);
	assert_int_equal(queue_move_keys(h->q, "m", 1, 0, keys, 1), 2);
	assert_int_equal(keys[0].id, k1);
	assert_int_equal(queue_move_keys(h->q, "other", 5, 0, keys, 4), 1);
	assert_int_equal(keys[0].id, k3);
	assert_int_equal(queue_move_keys(h->q, "m", 1, 0, keys, 4), 2);

	/* the target: k2 was put there during the move; an entry of its
	 * own expires later than k1's, earlier than nothing */
	tq_init(&t, NULL, T0 + 2000);
	live = put_key(&t, "k2", &created);
	assert_true(created);
	id1 = key_in(&t, "c1", &keys[0], &type);
	assert_int_equal(type, QREC_MOVE_KEY);
	assert_true(id1 > live);
	id2 = key_in(&t, "c1", &keys[1], &type);
	assert_int_equal(type, QREC_MOVE_KEY); /* folded, noted */
	assert_int_equal(id2, live);
	assert_int_equal(key_in(&t, "c1", &keys[0], &type), id1);
	assert_int_equal(type, QREC_NONE);
	assert_int_equal(queue_move_pairs(t.q, "m", 1, NULL), 2);
	assert_int_equal(queue_decide_move_key(
	                     t.q, t.now, "c9", 2, "m", 1, &keys[0], &rec, &x),
	    SLUICE_ESTATE);
	got = put_key(&t, "k1", &created);
	assert_false(created);
	assert_int_equal(got, id1);
	tq_check(&t);
	same_by_replay_and_snapshot(&t);
	/* a reservation made here, ending after k1's: the list keeps its
	 * order, so k1's ends first */
	assert_int_equal(take(&t, "m", &x), 0);
	tq_ack(&t, x);
	keys[2] = keys[0];
	keys[2].id = 50;
	keys[2].key = "k5";
	keys[2].expires = keys[0].expires + 500; /* between the two */
	assert_int_not_equal(key_in(&t, "c1", &keys[2], &type), 0);
	assert_int_equal(type, QREC_MOVE_KEY);
	tq_check(&t);
	t.now = keys[0].expires + 1;
	put_key(&t, "k1", &created);
	assert_true(created);
	put_key(&t, "k2", &created);
	assert_false(created);
	put_key(&t, "k5", &created);
	assert_false(created);
	t.now = keys[2].expires + 1;
	put_key(&t, "k5", &created);
	assert_true(created);
	tq_check(&t);
	same_by_replay_and_snapshot(&t);
	/* over at the source: nothing to carry */
	keys[0].id = 77;
	assert_int_equal(key_in(&t, "c1", &keys[0], &type), 0);
	assert_int_equal(type, QREC_NONE);
	assert_int_equal(queue_decide_move_end(t.q, "m", 1, &rec), 0);
	assert_int_equal(tq_commit(&t, &rec), 0);
	tq_check(&t);
	tq_fini(&t);
}

static void
commit_some(struct tq *h, const struct qrec *rec)
{
	if (rec->type != QREC_NONE)
		assert_int_equal(tq_commit(h, rec), 0);
}

/* A keyed put's answer, or its refusal. */
static int
try_put(struct tq *h, const char *tube, const char *key, bool replace,
    uint64_t *id, bool *created)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	int rc;

	queue_put_req_init(&req);
	req.tube = tube;
	req.tube_len = strlen(tube);
	req.payload = "x";
	req.payload_len = 1;
	req.key = key;
	req.key_len = key != NULL ? strlen(key) : 0;
	req.replace = replace;
	if ((rc = queue_decide_put(h->q, h->now, &req, &rec, &res)) != 0)
		return rc;
	commit_some(h, &rec);
	*id = res.id;
	*created = res.created;
	return 0;
}

static uint64_t
place_key(struct tq *h, uint64_t src, const char *key, int *type)
{
	struct qrec rec;
	uint64_t id = 0;

	assert_int_equal(queue_decide_move_place(h->q, h->now, "c1", 2, "m", 1,
	                     src, key, strlen(key), &rec, &id),
	    0);
	*type = rec.type;
	commit_some(h, &rec);
	return id;
}

/* The key window: the source lists the keys of its live tasks (any state
 * but done) and keeps its drain for the mover; the target, keys pending,
 * refuses keyed puts of the tube and of the tubes under its name (not
 * unkeyed ones, not other tubes'); placeholders hold the keys under the
 * ids their copies get (sent again: the same ids); once the keys are
 * here a put of one answers that id, a replace waits; the copy gets the
 * id, an acked task's reservation takes the placeholder, a deleted one's
 * goes at the end; replay and snapshots keep the marks and placeholders. */
static void
test_key_window(void **state)
{
	struct tq *h = tq_of(state), t;
	struct queue_move_live live[4];
	struct queue_move_key k;
	struct queue_move_item it;
	uint64_t a, b, c, x, id, pa, pb, pc;
	struct qrec rec;
	bool created;
	int type;

	/* the source: a ready, a taken and a delayed keyed task, an
	 * unkeyed one, a done one */
	a = put(h, "m", "a", "ka", 0);
	b = put(h, "m", "b", "kb", 0);
	c = put(h, "m", "c", "kc", 60000);
	put(h, "m", "d", NULL, 0);
	x = put(h, "m", "e", "ke", 0);
	assert_int_equal(take(h, "m", &id), 0);
	assert_int_equal(id, a);
	assert_int_equal(take(h, "m", &id), 0);
	assert_int_equal(id, b);
	tq_ack(h, b);                           /* b done: not live */
	assert_int_equal(take(h, "m", &id), 0); /* the unkeyed one */
	assert_int_equal(take(h, "m", &id), 0);
	assert_int_equal(id, x); /* taken */
	assert_int_equal(queue_move_live(h->q, "m", 1, 0, live, 4), 3);
	assert_int_equal(live[0].id, a);
	assert_int_equal(live[0].state, QUEUE_TAKEN);
	assert_int_equal(live[1].id, c);
	assert_int_equal(live[1].state, QUEUE_DELAYED);
	assert_int_equal(live[2].id, x);
	assert_int_equal(queue_move_live(h->q, "m", 1, c, live, 4), 1);
	assert_int_equal(queue_move_live(h->q, "m", 1, 0, live, 1), 3);
	assert_int_equal(live[0].id, a);
	assert_int_equal(queue_decide_move_keep(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_MOVE_KEEP);
	commit_some(h, &rec);
	assert_int_equal(queue_decide_move_keep(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	same_by_replay_and_snapshot(h);
	assert_int_equal(queue_decide_move_end(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_MOVE_END); /* lifts the mark */
	commit_some(h, &rec);
	assert_int_equal(queue_decide_move_keep(h->q, "m", 1, &rec), 0);
	assert_int_equal(rec.type, QREC_MOVE_KEEP);

	/* the target */
	tq_init(&t, NULL, T0);
	assert_int_equal(
	    queue_decide_move_pend(t.q, "m", 1, "c1", 2, true, &rec), 0);
	assert_int_equal(rec.type, QREC_MOVE_PEND);
	commit_some(&t, &rec);
	assert_int_equal(
	    queue_decide_move_pend(t.q, "m", 1, "c1", 2, true, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	assert_int_equal(
	    try_put(&t, "m", "ka", false, &id, &created), SLUICE_EMOVING);
	assert_int_equal(
	    try_put(&t, "m.sub", "zz", false, &id, &created), SLUICE_EMOVING);
	assert_int_equal(try_put(&t, "m", NULL, false, &id, &created), 0);
	assert_true(created);
	assert_int_equal(try_put(&t, "n", "ka", false, &id, &created), 0);
	pa = place_key(&t, a, "ka", &type);
	assert_int_equal(type, QREC_MOVE_PLACE);
	pc = place_key(&t, c, "kc", &type);
	assert_int_equal(type, QREC_MOVE_PLACE);
	pb = place_key(&t, x, "ke", &type);
	assert_int_equal(place_key(&t, a, "ka", &type), pa);
	assert_int_equal(type, QREC_NONE);
	tq_check(&t);
	same_by_replay_and_snapshot(&t);
	assert_int_equal(
	    try_put(&t, "m", "ka", false, &id, &created), SLUICE_EMOVING);
	assert_int_equal(
	    queue_decide_move_pend(t.q, "m", 1, "c1", 2, false, &rec), 0);
	assert_int_equal(rec.type, QREC_MOVE_PEND);
	commit_some(&t, &rec);
	assert_int_equal(try_put(&t, "m", "ka", false, &id, &created), 0);
	assert_false(created);
	assert_int_equal(id, pa);
	assert_int_equal(
	    try_put(&t, "m", "ka", true, &id, &created), SLUICE_EMOVING);
	assert_int_equal(try_put(&t, "m.sub", "zz", false, &id, &created), 0);
	tq_check(&t);

	/* a released at the source, then buried, copied: it gets its
	 * placeholder's id, with its attempts, error and state */
	it = item(a, QUEUE_BURIED, "ka", "a");
	assert_int_equal(copy_in(&t, &it, &type), pa);
	{
		struct queue_task_view v;

		assert_int_equal(queue_peek(t.q, t.now, pa, &v), 0);
		assert_int_equal(v.state, QUEUE_BURIED);
		assert_int_equal(v.attempts, 3);
		assert_int_equal(v.created_at, T0 - 5000);
	}
	assert_int_equal(type, QREC_MOVE_IN);
	assert_int_equal(copy_in(&t, &it, &type), pa);
	assert_int_equal(type, QREC_NONE);
	assert_int_equal(try_put(&t, "m", "ka", false, &id, &created), 0);
	assert_false(created);
	assert_int_equal(id, pa);
	tq_check(&t);
	/* x acked at the source: its reservation takes the placeholder */
	memset(&k, 0, sizeof(k));
	k.id = x;
	k.key = "ke";
	k.key_len = 2;
	k.expires = t.now + 5000;
	assert_int_equal(key_in(&t, "c1", &k, &type), pb);
	assert_int_equal(type, QREC_MOVE_KEY);
	assert_int_equal(key_in(&t, "c1", &k, &type), pb);
	assert_int_equal(type, QREC_NONE);
	assert_int_equal(try_put(&t, "m", "ke", false, &id, &created), 0);
	assert_int_equal(id, pb);
	assert_false(created);
	tq_check(&t);
	same_by_replay_and_snapshot(&t);
	/* c deleted at the source: its placeholder goes with the move */
	assert_int_equal(queue_decide_move_end(t.q, "m", 1, &rec), 0);
	commit_some(&t, &rec);
	assert_int_equal(try_put(&t, "m", "kc", false, &id, &created), 0);
	assert_true(created);
	assert_true(id != pc);
	t.now = k.expires + 1;
	assert_int_equal(try_put(&t, "m", "ke", false, &id, &created), 0);
	assert_true(created);
	tq_check(&t);
	same_by_replay_and_snapshot(&t);
	tq_fini(&t);
	/* many: 3,000 placeholders, copied in order, over replays and
	 * snapshots */
	{
		struct tq s;
		char kb[32];
		uint64_t ids[3000];

		tq_init(&s, NULL, T0);
		assert_int_equal(
		    queue_decide_move_pend(s.q, "m", 1, "c1", 2, true, &rec),
		    0);
		commit_some(&s, &rec);
		for (int i = 0; i < 3000; i++) {
			snprintf(kb, sizeof(kb), "key%d", i);
			ids[i] = place_key(&s, 1000 + (uint64_t)i, kb, &type);
		}
		assert_int_equal(
		    queue_decide_move_pend(s.q, "m", 1, "c1", 2, false, &rec),
		    0);
		commit_some(&s, &rec);
		for (int i = 0; i < 3000; i++) {
			snprintf(kb, sizeof(kb), "key%d", i);
			it = item(1000 + (uint64_t)i, QUEUE_READY, kb, "p");
			assert_int_equal(copy_in(&s, &it, &type), ids[i]);
			if (i % 1000 == 0)
				same_by_replay_and_snapshot(&s);
		}
		tq_check(&s);
		tq_fini(&s);
	}
}

static uint64_t
put_after(struct tq *h, const char *tube, const uint64_t *parents, size_t n)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	queue_put_req_init(&req);
	req.tube = tube;
	req.tube_len = strlen(tube);
	req.payload = "w";
	req.payload_len = 1;
	req.after = parents;
	req.nafter = n;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	return res.id;
}

/* A workflow under way counts its waiting children, the parents they
 * wait for (in the tube), and children made ready (they get results);
 * a plain task does not, nor a parent in another tube; once the graph
 * has run, nothing holds the move back. */
static void
test_graph(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t p, c, plain, other, c2, x;

	plain = put(h, "m", "plain", NULL, 0);
	assert_int_equal(queue_move_graph(h->q, "m", 1), 0);
	p = put(h, "m", "p", NULL, 0);
	other = put(h, "o", "q", NULL, 0);
	c = put_after(h, "m", &p, 1);
	c2 = put_after(h, "o", &other, 1);
	assert_int_equal(queue_move_graph(h->q, "m", 1), 2); /* p and c */
	assert_int_equal(queue_move_graph(h->q, "o", 1), 2);
	assert_int_equal(queue_move_graph(h->q, "nope", 4), 0);
	assert_int_equal(take(h, "m", &x), 0);
	assert_int_equal(x, plain);
	tq_ack(h, x);
	assert_int_equal(take(h, "m", &x), 0);
	assert_int_equal(x, p);
	assert_int_equal(queue_move_graph(h->q, "m", 1), 2); /* taken */
	tq_ack(h, p);
	assert_int_equal(queue_move_graph(h->q, "m", 1), 1); /* c, ready */
	assert_int_equal(take(h, "m", &x), 0);
	assert_int_equal(x, c);
	tq_ack(h, c);
	assert_int_equal(queue_move_graph(h->q, "m", 1), 0);
	assert_int_equal(take(h, "o", &x), 0);
	tq_ack(h, other);
	assert_int_equal(take(h, "o", &x), 0);
	assert_int_equal(x, c2);
	tq_ack(h, c2);
	assert_int_equal(queue_move_graph(h->q, "o", 1), 0);
	tq_check(h);
}

static void
group_set(struct tq *h, const char *g, uint32_t conc, bool pause)
{
	struct queue_group_set_req r;
	struct qrec rec;

	memset(&r, 0, sizeof(r));
	r.tube = "m";
	r.tube_len = 1;
	r.group = g;
	r.group_len = strlen(g);
	if (conc != 0) {
		r.set = QREC_LIM_CONCURRENCY;
		r.lim.concurrency = conc;
	}
	r.pause = pause ? QUEUE_GROUP_PAUSE : QUEUE_GROUP_KEEP;
	assert_int_equal(queue_decide_group_set(h->q, h->now, &r, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

/* The groups with settings of their own come in the order of their
 * names, from a cursor; every group's defaults are not one of them. */
static void
test_group_next(void **state)
{
	struct tq *h = tq_of(state);
	char name[QREC_GROUP_MAX];
	size_t len = 9;

	assert_int_equal(queue_move_group_next(h->q, "m", 1, "", 0, name, &len),
	    SLUICE_ENOTFOUND);
	put(h, "m", "a", NULL, 0);
	assert_int_equal(
	    queue_move_group_next(h->q, "m", 1, "", 0, name, &len), 0);
	assert_int_equal(len, 0);
	group_set(h, "", 4, false);
	group_set(h, "beta", 2, false);
	group_set(h, "alpha", 0, true);
	group_set(h, "alphabet", 3, false);
	assert_int_equal(
	    queue_move_group_next(h->q, "m", 1, "", 0, name, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(name, "alpha", 5);
	assert_int_equal(
	    queue_move_group_next(h->q, "m", 1, name, len, name, &len), 0);
	assert_int_equal(len, 8);
	assert_memory_equal(name, "alphabet", 8);
	assert_int_equal(
	    queue_move_group_next(h->q, "m", 1, name, len, name, &len), 0);
	assert_int_equal(len, 4);
	assert_memory_equal(name, "beta", 4);
	assert_int_equal(
	    queue_move_group_next(h->q, "m", 1, name, len, name, &len), 0);
	assert_int_equal(len, 0);
}

/* Bad input is refused, naming nothing made. */
static void
test_bad_input(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_move_item a = item(11, QUEUE_READY, NULL, "a");
	struct qrec rec;
	uint64_t id;

	assert_int_equal(
	    queue_decide_move_in(h->q, h->now, "bad name", 8, &a, &rec, &id),
	    SLUICE_EINVAL);
	a.state = QUEUE_TAKEN;
	assert_int_equal(
	    queue_decide_move_in(h->q, h->now, "c1", 2, &a, &rec, &id),
	    SLUICE_EINVAL);
	a = item(11, QUEUE_READY, NULL, "a");
	a.ttr = 0;
	assert_int_equal(
	    queue_decide_move_in(h->q, h->now, "c1", 2, &a, &rec, &id),
	    SLUICE_EINVAL);
	a = item(0, QUEUE_READY, NULL, "a");
	assert_int_equal(
	    queue_decide_move_in(h->q, h->now, "c1", 2, &a, &rec, &id),
	    SLUICE_EINVAL);
	a = item(1, QUEUE_READY, NULL, "a");
	a.tube = "bad tube";
	a.tube_len = 8;
	assert_int_equal(
	    queue_decide_move_in(h->q, h->now, "c1", 2, &a, &rec, &id),
	    SLUICE_ETUBE);
	assert_int_equal(
	    queue_decide_move_hold(h->q, h->now, "nope", 4, 5, &rec),
	    SLUICE_ENOTFOUND);
	assert_int_equal(queue_move_pairs(h->q, "m", 1, NULL), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_hold_and_drop, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_copy_in, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_mark, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_input, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_keys, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_graph, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_group_next, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_key_window, tq_setup, tq_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
