/* Tests of the groups listing (src/queue/group_list.c) and of each
 * group's taken count (group.c's groups_taken): the counts follow takes,
 * acks and releases, the "" group counts the tasks taken before the
 * tube's first group, replay and a snapshot rebuild them, and the listing
 * orders by backlog (ready, taken, tube, name), cuts at `max` with the
 * total, ages each group's oldest ready task, and lists every tube with
 * groups when no tube is named. Every record goes through the harness
 * (decide, encode, decode, apply) and the teardown checks the queue's
 * invariants (the taken counts add up to the tube's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "queue/group.h"
#include "queue/group_list.h"
#include "queue/qstate.h"
#include "queue/tube.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

/* Puts a task into `tube`, group g (NULL: none); its id. */
static uint64_t
put(struct tq *h, const char *tube, const char *g)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	queue_put_req_init(&req);
	req.tube = tube;
	req.tube_len = strlen(tube);
	req.payload = "x";
	req.payload_len = 1;
	req.pri = 10;
	req.group = g;
	req.group_len = g != NULL ? strlen(g) : 0;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	return res.id;
}

/* Takes from `tube`: the id (0: none), its lease in *lease. */
static uint64_t
take(struct tq *h, const char *tube, uint64_t *lease)
{
	struct queue_str t = { tube, strlen(tube) };
	struct queue_take_req req = { &t, 1, 1, false, false };
	struct queue_task_view v;
	struct qrec rec;

	if (queue_decide_take(h->q, h->now, &req, &rec) != 0)
		return 0;
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_peek(h->q, h->now, rec.u.take.id, &v), 0);
	*lease = v.lease;
	return rec.u.take.id;
}

static void
ack(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_ack_req req;
	struct qrec rec;

	memset(&req, 0, sizeof(req));
	req.id = id;
	req.lease = lease;
	assert_int_equal(queue_decide_ack(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

static void
release(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_release_req req;
	struct qrec rec;

	memset(&req, 0, sizeof(req));
	req.id = id;
	req.lease = lease;
	assert_int_equal(queue_decide_release(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

static const struct group *
grp(struct queue *q, const char *tube, const char *g)
{
	const struct tube *tb = qs_tube(q, tube, strlen(tube));

	assert_non_null(tb);
	assert_non_null(tb->groups);
	return g == NULL ? &tb->groups->none : groups_find(tb, g, strlen(g));
}

/* A row is (tube, group, ready, taken). */
static void
assert_row(const struct group_row *r, const char *tube, const char *g,
    uint64_t ready, uint64_t taken)
{
	assert_int_equal(r->tube_len, strlen(tube));
	assert_memory_equal(r->tube, tube, r->tube_len);
	assert_int_equal(r->name_len, strlen(g));
	if (r->name_len > 0)
		assert_memory_equal(r->name, g, r->name_len);
	assert_int_equal(r->ready, ready);
	assert_int_equal(r->taken, taken);
}

/* The tasks taken before a tube's first group are the "" group's; each
 * take, release and ack moves its group's count; replay and a snapshot
 * load give the same counts. */
static void
test_taken_counts(void **state)
{
	struct tq *h = tq_of(state), r;
	uint64_t l0, la, lb, lb2, id0, ida, idb, idb2;
	struct queue *q;
	struct buf snap;

	put(h, "t", NULL);
	id0 = take(h, "t", &l0); /* taken while the tube has no groups */
	assert_true(id0 != 0);
	put(h, "t", "a");
	put(h, "t", "b");
	put(h, "t", "b");
	assert_int_equal(grp(h->q, "t", NULL)->taken, 1);
	ida = take(h, "t", &la);
	idb = take(h, "t", &lb);
	idb2 = take(h, "t", &lb2);
	assert_true(ida != 0 && idb != 0 && idb2 != 0);
	assert_int_equal(grp(h->q, "t", "a")->taken, 1);
	assert_int_equal(grp(h->q, "t", "b")->taken, 2);
	release(h, idb, lb);
	assert_int_equal(grp(h->q, "t", "b")->taken, 1);
	assert_int_equal(grp(h->q, "t", "b")->len, 1);
	ack(h, id0, l0);
	assert_int_equal(grp(h->q, "t", NULL)->taken, 0);
	/* replay and a snapshot count the same */
	q = queue_new(NULL);
	assert_int_equal(tq_replay(h, q, 0, h->nlog), 0);
	assert_int_equal(grp(q, "t", "a")->taken, 1);
	assert_int_equal(grp(q, "t", "b")->taken, 1);
	assert_int_equal(grp(q, "t", NULL)->taken, 0);
	queue_free(q);
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	tq_init(&r, NULL, h->now);
	assert_int_equal(tq_snap_load(r.q, &snap), 0);
	assert_int_equal(grp(r.q, "t", "a")->taken, 1);
	assert_int_equal(grp(r.q, "t", "b")->taken, 1);
	assert_int_equal(grp(r.q, "t", NULL)->taken, 0);
	tq_fini(&r);
	buf_fini(&snap);
	ack(h, ida, la);
	ack(h, idb2, lb2);
	assert_int_equal(grp(h->q, "t", "b")->taken, 0);
}

/* A snapshot holding a taken task of the "" group before the first
 * named task: the "" group's count starts with it. */
static void
test_taken_before_groups_in_snapshot(void **state)
{
	struct tq *h = tq_of(state), r;
	uint64_t l;
	struct buf snap;

	put(h, "t", NULL);
	assert_true(take(h, "t", &l) != 0);
	put(h, "t", "a");
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	tq_init(&r, NULL, h->now);
	assert_int_equal(tq_snap_load(r.q, &snap), 0);
	assert_int_equal(grp(r.q, "t", NULL)->taken, 1);
	assert_int_equal(tq_end(memcpy(malloc(sizeof(r)), &r, sizeof(r))), 0);
	buf_fini(&snap);
}

/* By backlog: ready first, then taken, then name ("" first); cut at max
 * with the total; the oldest ready task's age. */
static void
test_list_order(void **state)
{
	struct tq *h = tq_of(state);
	struct group_row rows[8];
	size_t n;
	uint64_t total, l;

	put(h, "t", "b");
	put(h, "t", "b");
	put(h, "t", "b");
	h->now += 1000;
	put(h, "t", "a");
	put(h, "t", NULL);
	put(h, "t", "c");
	put(h, "t", "c");
	put(h, "t", "d"); /* d: one taken, none ready */
	h->now += 500;
	/* the rotation serves b, a, "", c, d: take until d's is taken */
	for (int i = 0; i < 5; i++)
		assert_true(take(h, "t", &l) != 0);
	/* b 2 ready, c 1, a 0 ready 1 taken, "" 0/1, d 0/1 */
	assert_int_equal(
	    group_list(h->q, h->now, "t", 1, rows, 8, &n, &total), 0);
	assert_int_equal(n, 5);
	assert_int_equal(total, 5);
	assert_row(&rows[0], "t", "b", 2, 1);
	assert_int_equal(rows[0].oldest_ready_age, 1500);
	assert_row(&rows[1], "t", "c", 1, 1);
	assert_int_equal(rows[1].oldest_ready_age, 500);
	assert_row(&rows[2], "t", "", 0, 1);
	assert_row(&rows[3], "t", "a", 0, 1);
	assert_row(&rows[4], "t", "d", 0, 1);
	assert_int_equal(rows[4].oldest_ready_age, 0);
	/* the first two, and the total */
	assert_int_equal(
	    group_list(h->q, h->now, "t", 1, rows, 2, &n, &total), 0);
	assert_int_equal(n, 2);
	assert_int_equal(total, 5);
	assert_row(&rows[1], "t", "c", 1, 1);
	/* bad requests */
	assert_int_equal(group_list(h->q, h->now, "t", 1, rows, 0, &n, &total),
	    SLUICE_EINVAL);
	assert_int_equal(group_list(h->q, h->now, "t", 1, rows,
	                     GROUP_LIST_MAX + 1, &n, &total),
	    SLUICE_EINVAL);
	assert_int_equal(
	    group_list(h->q, h->now, "nope", 4, rows, 8, &n, &total),
	    SLUICE_ENOTFOUND);
	assert_int_equal(
	    group_list(h->q, h->now, "a b", 3, rows, 8, &n, &total),
	    SLUICE_ETUBE);
}

/* A tube without groups lists its "" group when named, none of its own
 * in the listing of every tube; that one orders the groups of all tubes
 * together. A delayed task ages from its due time. */
static void
test_list_every_tube(void **state)
{
	struct tq *h = tq_of(state);
	struct group_row rows[8];
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	size_t n;
	uint64_t total;

	put(h, "plain", NULL);
	put(h, "plain", NULL);
	put(h, "plain", NULL);
	assert_int_equal(h->q->grouped.n, 0); /* the listing visits none */
	put(h, "u", "x");
	put(h, "v", "y");
	put(h, "v", "y");
	assert_int_equal(h->q->grouped.n, 2);
	/* z: due in 2 s, ready after 3 */
	queue_put_req_init(&req);
	req.tube = "v";
	req.tube_len = 1;
	req.payload = "x";
	req.payload_len = 1;
	req.delay_ms = 2000;
	req.group = "z";
	req.group_len = 1;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(
	    group_list(h->q, h->now, "plain", 5, rows, 8, &n, &total), 0);
	assert_int_equal(n, 1);
	assert_row(&rows[0], "plain", "", 3, 0);
	/* z is delayed: no row yet */
	assert_int_equal(
	    group_list(h->q, h->now, "", 0, rows, 8, &n, &total), 0);
	assert_int_equal(n, 2);
	assert_row(&rows[0], "v", "y", 2, 0);
	assert_row(&rows[1], "u", "x", 1, 0);
	h->now += 3000;
	assert_int_equal(
	    group_list(h->q, h->now, "", 0, rows, 8, &n, &total), 0);
	assert_int_equal(n, 3);
	assert_int_equal(total, 3);
	assert_row(&rows[0], "v", "y", 2, 0);
	assert_row(&rows[1], "u", "x", 1, 0);
	assert_row(&rows[2], "v", "z", 1, 0);
	assert_int_equal(rows[2].oldest_ready_age, 1000);
	assert_int_equal(rows[1].oldest_ready_age, 3000);
	/* u's last task gone: u leaves the list of tubes with groups */
	{
		uint64_t l, id = take(h, "u", &l);

		assert_true(id != 0);
		ack(h, id, l);
	}
	assert_null(qs_tube(h->q, "u", 1)->groups);
	assert_int_equal(h->q->grouped.n, 1);
	assert_int_equal(
	    group_list(h->q, h->now, "", 0, rows, 8, &n, &total), 0);
	assert_int_equal(total, 2);
	assert_row(&rows[0], "v", "y", 2, 0);
}

/* The best `max` of many groups are the first `max` of the whole order,
 * whatever max: 300 groups of 1 to 6 tasks, some taken. */
static void
test_list_top_is_the_prefix(void **state)
{
	struct tq *h = tq_of(state);
	static struct group_row all[GROUP_LIST_MAX], some[GROUP_LIST_MAX];
	static const size_t maxes[] = { 1, 2, 7, 20, 299, 300, 301 };
	uint64_t rng = 12345, total, l;
	size_t n, m;
	char g[16];

	h->keep = false;
	for (int i = 0; i < 300; i++) {
		snprintf(g, sizeof(g), "g%03d", i);
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		for (uint64_t k = 0; k < 1 + (rng >> 33) % 6; k++)
			put(h, "t", g);
	}
	for (int i = 0; i < 150; i++)
		assert_true(take(h, "t", &l) != 0);
	assert_int_equal(
	    group_list(h->q, h->now, "t", 1, all, GROUP_LIST_MAX, &n, &total),
	    0);
	assert_int_equal(n, total);
	for (size_t i = 1; i < n; i++)
		assert_true(all[i - 1].ready > all[i].ready ||
		    (all[i - 1].ready == all[i].ready &&
		        all[i - 1].taken >= all[i].taken));
	for (size_t j = 0; j < sizeof(maxes) / sizeof(maxes[0]); j++) {
		assert_int_equal(group_list(h->q, h->now, "t", 1, some,
		                     maxes[j], &m, &total),
		    0);
		assert_int_equal(total, n);
		assert_int_equal(m, maxes[j] < n ? maxes[j] : n);
		for (size_t i = 0; i < m; i++) {
			assert_int_equal(some[i].name_len, all[i].name_len);
			assert_memory_equal(
			    some[i].name, all[i].name, all[i].name_len);
			assert_int_equal(some[i].ready, all[i].ready);
			assert_int_equal(some[i].taken, all[i].taken);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_taken_counts, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_taken_before_groups_in_snapshot, tq_setup,
		    tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_list_order, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_list_every_tube, tq_setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_list_top_is_the_prefix, tq_setup, tq_teardown),
	};
	return cmocka_run_group_tests_name("group_list", tests, NULL, NULL);
}
