/* Tests of how a snapshot's tasks go back into their heaps. A snapshot
 * lists tasks in the order of the id index (their hash's), random for a
 * heap, and a large heap's pushes ask for the parents of later pushes
 * ahead (heap.c): whatever that order, a queue loaded from a snapshot
 * must take, wake, kick and expire exactly as the queue it was written
 * from, ties in priority and time included (tube.c's orders are total),
 * also when the worker that faults task memory in ahead is behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "queue/heap.h"
#include "queue/qstate.h"
#include "queue/tslab.h"
#include "t_lib.h"
#include "t_queue.h"

#define T0 1700000000000LL /* a unix time in ms */

/* Beyond heap.c's HEAP_PREFETCH_FROM (4096) in the ready heap. */
enum { NPUT = 9000, NTAKEN = 400, NBURIED = 300 };

/* ---- A heap past the size from which pushes prefetch ------------------ */

struct item {
	uint32_t key;
	uint32_t id;
	uint32_t pos;
};

static bool
item_less(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return x->key != y->key ? x->key < y->key : x->id < y->id;
}

/* Pushes in a random order with many equal keys, removes some from the
 * middle, then pops: the order is (key, id) whatever the pushes' order,
 * and every position stays right. */
static void
test_a_large_heap_keeps_its_order_and_positions(void **state)
{
	enum { N = 50000 };
	struct item *it = calloc(N, sizeof(*it));
	uint32_t *order = calloc(N, sizeof(*order));
	struct heap h;
	struct item *last = NULL;
	uint32_t seed = 7, popped = 0;

	(void)state;
	assert_non_null(it);
	assert_non_null(order);
	heap_init(&h, item_less, offsetof(struct item, pos));
	for (uint32_t i = 0; i < N; i++) {
		it[i].id = i;
		it[i].key = i % 13; /* ties */
		order[i] = i;
	}
	for (uint32_t i = N - 1; i > 0; i--) { /* shuffled */
		uint32_t j, tmp;

		seed = seed * 1103515245u + 12345u;
		j = (seed >> 8) % (i + 1);
		tmp = order[i];
		order[i] = order[j];
		order[j] = tmp;
	}
	for (uint32_t i = 0; i < N; i++) {
		assert_int_equal(heap_reserve(&h, 1), 0);
		heap_push(&h, &it[order[i]]);
	}
	assert_true(heap_valid(&h));
	for (uint32_t i = 0; i < N; i += 5) /* some from anywhere */
		heap_remove(&h, &it[i]);
	assert_true(heap_valid(&h));
	while (h.len > 0) {
		struct item *top = heap_top(&h);

		assert_true(last == NULL || item_less(last, top));
		assert_true(top->id % 5 != 0);
		heap_remove(&h, top);
		last = top;
		popped++;
	}
	assert_int_equal(popped, N - N / 5);
	heap_fini(&h);
	free(order);
	free(it);
}

/* ---- A queue and its snapshot, side by side --------------------------- */

static void
commit(struct tq *h, int rc, const struct qrec *rec)
{
	assert_int_equal(rc, 0);
	assert_int_equal(tq_commit(h, rec), 0);
}

static uint64_t
put(struct tq *h, uint32_t pri, int64_t delay_ms)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.payload = "x";
	req.payload_len = 1;
	req.pri = pri;
	req.delay_ms = delay_ms;
	req.ttr_ms = 1000;
	commit(h, queue_decide_put(h->q, h->now, &req, &rec, &res), &rec);
	return res.id;
}

/* The id taken, with its lease in *lease; 0 when none is ready. */
static uint64_t
take(struct tq *h, uint64_t *lease)
{
	struct queue_str s = { "t", 1 };
	struct queue_take_req req = { &s, 1, 1, false, false };
	struct qrec rec;
	int rc = queue_decide_take(h->q, h->now, &req, &rec);

	if (rc == SLUICE_ETIMEDOUT)
		return 0;
	commit(h, rc, &rec);
	if (lease != NULL)
		*lease = h->lsn; /* the lease is the TAKE's LSN */
	return rec.u.take.id;
}

static void
bury(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_bury_req req = { id, lease };
	struct qrec rec;

	commit(h, queue_decide_bury(h->q, h->now, &req, &rec), &rec);
}

/* The oldest buried task back to ready; false when none is buried. */
static bool
kick(struct tq *h)
{
	struct queue_kick_req req = { 0, "t", 1 };
	struct qrec rec;
	int rc = queue_decide_kick(h->q, h->now, &req, &rec);

	if (rc != 0)
		return false;
	commit(h, rc, &rec);
	return true;
}

/* Takes from both until neither has a task ready: the same ids, one by
 * one. Returns how many. */
static uint32_t
take_all_alike(struct tq *a, struct tq *b)
{
	uint32_t n = 0;

	for (;;) {
		uint64_t x = take(a, NULL), y = take(b, NULL);

		if (x != y)
			fail_msg("take %u: %llu from the queue, %llu from its "
			         "snapshot",
			    n, (unsigned long long)x, (unsigned long long)y);
		if (x == 0)
			return n;
		n++;
	}
}

/* Ends every lease past its deadline in both: the same records, one by
 * one (the taken heap's order: deadline, then id). Returns how many. */
static uint32_t
expire_all_alike(struct tq *a, struct tq *b)
{
	struct buf x, y;
	uint32_t n = 0;

	buf_init(&x);
	buf_init(&y);
	for (;;) {
		struct qrec ra, rb;
		int rc = queue_decide_expired(a->q, a->now, &ra);

		assert_int_equal(queue_decide_expired(b->q, b->now, &rb), rc);
		if (rc != 0)
			break;
		buf_reset(&x);
		buf_reset(&y);
		assert_int_equal(qrec_encode(&ra, &x), 0);
		assert_int_equal(qrec_encode(&rb, &y), 0);
		assert_int_equal(ra.type, rb.type);
		assert_int_equal(x.len, y.len);
		assert_memory_equal(x.data, y.data, x.len);
		commit(a, 0, &ra);
		commit(b, 0, &rb);
		n++;
	}
	buf_fini(&x);
	buf_fini(&y);
	return n;
}

/* A queue whose heaps all hold ties (priority, run_at, updated_at,
 * deadline) is written to a snapshot and loaded into a fresh queue; the
 * two then take everything ready, the delayed tasks as they come due,
 * the taken ones once their leases end and the buried ones once kicked,
 * in the same order, one task at a time. */
static void
test_a_loaded_queue_takes_in_the_order_of_the_queue_it_was_written_from(
    void **state)
{
	struct tq *h = calloc(1, sizeof(*h)), *c = calloc(1, sizeof(*c));
	static const uint32_t pris[] = { 5, 0, 5, 9, 5, 0 };
	struct queue *copy = queue_new(NULL);
	uint64_t ids[NTAKEN], leases[NTAKEN];
	uint32_t n, total = 0;
	struct buf snap;

	(void)state;
	assert_non_null(h);
	assert_non_null(c);
	tq_init(h, NULL, T0);
	h->keep = false;
	/* Puts at few times (run_at ties within a millisecond) and few
	 * priorities; every seventh delayed to one of three due times. */
	for (uint32_t i = 0; i < NPUT; i++) {
		if (i % 250 == 0)
			h->now++;
		put(h, pris[i % 6], i % 7 == 3 ? 5000 + (i % 3) * 1000 : 0);
	}
	/* Taken at one time with one ttr (deadline ties), and some of them
	 * buried at one time (updated_at ties). */
	for (uint32_t i = 0; i < NTAKEN; i++)
		assert_true((ids[i] = take(h, &leases[i])) != 0);
	h->now++;
	for (uint32_t i = 0; i < NBURIED; i++)
		bury(h, ids[(i * 7) % NTAKEN], leases[(i * 7) % NTAKEN]);

	tq_check(h);
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	assert_non_null(copy);
	assert_int_equal(tq_snap_load(copy, &snap), 0);
	assert_true(tq_same(h->q, copy, h->now));
	tq_init(c, NULL, h->now);
	c->keep = false;
	queue_free(c->q);
	c->q = copy;
	c->lsn = h->lsn;
	tq_check(c);

	n = take_all_alike(h, c); /* the ready ones */
	assert_true(n > 4096);
	total += n;
	for (int64_t due = 5000; due <= 7000; due += 1000) {
		h->now = c->now =
		    T0 + due + 100; /* the delayed, as they come */
		n = take_all_alike(h, c);
		assert_true(n > 0);
		total += n;
	}
	/* Every lease taken before the snapshot (and since) ends, in the
	 * same order, and those tasks are taken again in the same order. */
	h->now = c->now = h->now + 2000;
	assert_true(expire_all_alike(h, c) > NTAKEN - NBURIED);
	assert_true(tq_same(h->q, c->q, h->now));
	total += take_all_alike(h, c);
	/* The buried ones, kicked oldest first. */
	h->now = c->now = h->now + 2000;
	for (uint32_t i = 0; i < NBURIED; i++) {
		assert_true(kick(h));
		assert_true(kick(c));
	}
	assert_false(kick(h));
	assert_false(kick(c));
	total += take_all_alike(h, c);
	/* Every task put, once each, and at least once after the load:
	 * those taken before it again when their leases ended. */
	assert_true(total >= NPUT);
	assert_true(tq_same(h->q, c->q, h->now));
	tq_check(h);
	tq_check(c);
	buf_fini(&snap);
	tq_fini(c);
	tq_fini(h);
	free(c);
	free(h);
}

/* A GROUP entry names the TASK entry that follows it; one that names
 * another id is refused once that task is in the id index, and the task
 * leaves the index again: the index holds the tasks loaded before it,
 * no lookup finds it, and freeing the queue reads nothing freed (the
 * sanitized build checks that). */
static void
test_a_group_naming_another_task_is_refused_and_the_task_not_kept(void **state)
{
	struct tq *h = calloc(1, sizeof(*h));
	struct queue *copy = queue_new(NULL);
	struct queue_task_view v;
	struct buf snap;
	struct rd r;
	uint64_t ids[3], named = 0;
	int rc = 0;

	(void)state;
	assert_non_null(h);
	assert_non_null(copy);
	tq_init(h, NULL, T0);
	for (int i = 0; i < 3; i++) {
		struct queue_put_req req;
		struct queue_put_res res;
		struct qrec rec;

		queue_put_req_init(&req);
		req.tube = "g";
		req.tube_len = 1;
		req.payload = "x";
		req.payload_len = 1;
		req.group = "a";
		req.group_len = 1;
		commit(
		    h, queue_decide_put(h->q, h->now, &req, &rec, &res), &rec);
		ids[i] = res.id;
	}
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	/* The first GROUP entry names an id that no task has. */
	rd_init(&r, snap.data, snap.len);
	while (rd_left(&r) > 0 && rc == 0) {
		uint16_t type = rd_u16(&r);
		uint32_t len = rd_u32(&r);
		uint8_t *p = snap.data + r.off;

		assert_non_null(rd_bytes(&r, len));
		if (type == QSNAP_GROUP && named == 0) {
			named = le_load_u64(p);
			le_store_u64(p, named + 1000);
		}
		if ((rc = queue_snapshot_load(copy, type, p, len)) != 0)
			break;
	}
	assert_int_equal(rc, SLUICE_ECORRUPT);
	assert_true(named == ids[0] || named == ids[1] || named == ids[2]);
	assert_int_equal(queue_peek(copy, h->now, named, &v), SLUICE_ENOTFOUND);
	assert_int_equal(copy->ids.len, copy->ntasks); /* the tasks loaded */
	queue_free(copy);
	buf_fini(&snap);
	tq_fini(h);
	free(h);
}

static bool
sanitized(void)
{
	const char *s = getenv("SLUICE_SANITIZED");

	return s != NULL && strcmp(s, "1") == 0;
}

/* A load of a million tasks (tslab_expect: spares faulted in ahead by
 * the worker) while that worker is held, as on a host slow to back
 * memory: the loading thread does not wait for it (tslab.c faults its
 * own slabs, and takes back the jobs not started), and the queue loaded
 * equals the queue written: the same dump, the same invariants, the
 * same takes. Payloads of three sizes fill three slab classes. Before,
 * the load waited for the held worker and never ended (the alarm ends
 * the test). Under the sanitizers the pool is malloc (no worker) and
 * the run is smaller. */
static void
test_a_large_load_with_the_worker_behind_equals_the_queue_written(void **state)
{
	static const char pay[200] = { 'p' };
	static const uint32_t lens[] = { 1, 40, 200 };
	uint32_t n = sanitized() ? 100000 : TSLAB_EXPECT_MANY;
	struct tq *h = calloc(1, sizeof(*h)), *c = calloc(1, sizeof(*c));
	struct queue *copy = queue_new(NULL);
	uint64_t ids[NTAKEN], leases[NTAKEN];
	struct buf snap;

	(void)state;
	assert_non_null(h);
	assert_non_null(c);
	assert_non_null(copy);
	alarm(300);
	tq_init(h, NULL, T0);
	h->keep = false;
	for (uint32_t i = 0; i < n; i++) {
		struct queue_put_req req;
		struct queue_put_res res;
		struct qrec rec;

		if (i % 1000 == 0)
			h->now++;
		queue_put_req_init(&req);
		req.tube = i % 5 == 0 ? "u" : "t";
		req.tube_len = 1;
		req.payload = pay;
		req.payload_len = lens[i % 3];
		req.pri = i % 7;
		req.delay_ms = i % 11 == 0 ? 60000 : 0;
		req.ttr_ms = 1000;
		commit(
		    h, queue_decide_put(h->q, h->now, &req, &rec, &res), &rec);
	}
	for (uint32_t i = 0; i < NTAKEN; i++)
		assert_true((ids[i] = take(h, &leases[i])) != 0);
	for (uint32_t i = 0; i < NBURIED; i++)
		bury(h, ids[i], leases[i]);
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);

	tslab_fill_hold(true);
	assert_int_equal(tq_snap_load(copy, &snap), 0);
	tslab_fill_hold(false);
	alarm(0);
	assert_int_equal(copy->ntasks, n);
	assert_true(tq_same(h->q, copy, h->now));
	tq_init(c, NULL, h->now);
	c->keep = false;
	queue_free(c->q);
	c->q = copy;
	c->lsn = h->lsn;
	tq_check(h);
	tq_check(c);
	/* The first 20,000 takes alike, and the rest of the state. */
	for (uint32_t i = 0; i < 20000; i++) {
		uint64_t x = take(h, NULL), y = take(c, NULL);

		assert_true(x != 0);
		assert_int_equal(x, y);
	}
	assert_true(tq_same(h->q, c->q, h->now));
	buf_fini(&snap);
	tq_fini(c);
	tq_fini(h);
	free(c);
	free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_a_large_heap_keeps_its_order_and_positions),
		cmocka_unit_test(
		    test_a_loaded_queue_takes_in_the_order_of_the_queue_it_was_written_from),
		cmocka_unit_test(
		    test_a_group_naming_another_task_is_refused_and_the_task_not_kept),
		cmocka_unit_test(
		    test_a_large_load_with_the_worker_behind_equals_the_queue_written),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
