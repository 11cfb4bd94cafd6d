/* Tests of the shape of the dependency graph as src/queue/deps.c keeps
 * it (test_deps.c has its rules): a put names its parents in any order
 * and the record holds them sorted, a parent named twice anywhere is
 * refused; a parent keeps its first child in its own node and its list
 * grows past it, live and after a snapshot; a join is released by the
 * last of its parents to be acked, in any order. */
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

/* Parents named in any order: the record holds them sorted, a repeat
 * anywhere is refused; a parent's first child is kept in its node and
 * its list grows past it, through a snapshot too; a join released by the
 * last of its parents, whatever their order. */
static void
test_parents_in_any_order(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_deps d;
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	struct tq r;
	uint64_t p[3], c[3], j, twice[3];

	for (int i = 0; i < 3; i++)
		p[i] = put0(h, "p");
	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.after = (uint64_t[]) { p[2], p[0], p[1] };
	req.nafter = 3;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(rec.u.put.nafter, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(deps_after_id(&rec.u.put, (size_t)i), p[i]);
	assert_int_equal(tq_commit(h, &rec), 0);
	j = res.id;
	twice[0] = p[1];
	twice[1] = p[0];
	twice[2] = p[1];
	assert_int_equal(put_after(h, "x", twice, 3, 0, NULL), SLUICE_EINVAL);
	/* p[0]: one child (j), then three more */
	for (int i = 0; i < 3; i++)
		assert_int_equal(put_after(h, "c", &p[0], 1, 0, &c[i]), 0);
	assert_int_equal(queue_task_deps(h->q, p[0], &d), 0);
	assert_int_equal(d.nchildren, 4);
	assert_int_equal(d.children[0], j);
	for (int i = 0; i < 3; i++)
		assert_int_equal(d.children[1 + i], c[i]);
	assert_int_equal(queue_task_deps(h->q, p[1], &d), 0);
	assert_int_equal(d.nchildren, 1);
	assert_int_equal(d.children[0], j);
	tq_check(h);
	/* through a snapshot: the same graph, and it grows on */
	tq_loaded(h, &r);
	assert_int_equal(put_after(&r, "c", &p[1], 1, 0, NULL), 0);
	assert_int_equal(queue_task_deps(r.q, p[1], &d), 0);
	assert_int_equal(d.nchildren, 2);
	assert_int_equal(d.children[0], j);
	tq_check(&r);
	/* the join waits for all three, acked in another order */
	assert_int_equal(take(&r), p[0]);
	assert_int_equal(take(&r), p[1]);
	assert_int_equal(take(&r), p[2]);
	tq_ack_result(&r, p[2], NULL);
	tq_ack_result(&r, p[0], NULL);
	assert_int_equal(state_of(&r, j), QUEUE_WAITING);
	assert_int_equal(queue_task_deps(r.q, j, &d), 0);
	assert_int_equal(d.pending, 1);
	tq_ack_result(&r, p[1], "r1");
	assert_int_equal(state_of(&r, j), QUEUE_READY);
	assert_result(&r, p[1], "r1");
	tq_check(&r);
	tq_fini(&r);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tq_setup, tq_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_parents_in_any_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
