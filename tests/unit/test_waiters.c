/* The index of waiting takes (server/core/waiters.h): each tube's waiters in
 * arrival order, a take of several tubes on each (once, however often it
 * names one), the marks a turn serves and those put off to the next, a
 * session's waiters, the deadline heap, and tube entries freed once
 * nothing holds them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/core/waiters.h"
#include "t_lib.h"

static struct waiter *
add(struct waiters *ws, uint32_t session, int64_t deadline, size_t n,
    const char *const *names)
{
	struct queue_str tubes[8];
	struct waiter *w;

	for (size_t i = 0; i < n; i++)
		tubes[i] = (struct queue_str) { names[i], strlen(names[i]) };
	w = waiters_new(tubes, n);
	assert_non_null(w);
	w->session = session;
	w->deadline = deadline;
	assert_int_equal(waiters_add(ws, w), 0);
	return w;
}

static void
end(struct waiters *ws, struct waiter *w)
{
	waiters_remove(ws, w);
	free(w);
}

static void
test_each_tube_serves_its_waiters_in_arrival_order(void **state)
{
	static const char *const a[] = { "a" }, *const ab[] = { "a", "b", "a" },
	                         *const b[] = { "b" };
	struct waiters ws;
	struct waiter *w1, *w2, *w3;
	struct wait_tube *t;

	(void)state;
	waiters_init(&ws);
	w1 = add(&ws, 1, 300, 1, a);
	w2 = add(&ws, 2, 100, 3, ab); /* "a" twice: linked once */
	w3 = add(&ws, 1, 200, 1, b);
	assert_int_equal(ws.n, 3);
	assert_int_equal(w2->nlinks, 2);
	assert_true(waiters_on(&ws, "a", 1) && waiters_on(&ws, "b", 1));
	assert_false(waiters_on(&ws, "c", 1));
	assert_int_equal(waiters_of_session(&ws, 1), 2);
	assert_ptr_equal(waiters_session_head(&ws, 1), w1);
	assert_ptr_equal(w1->snext, w3);
	assert_ptr_equal(waiters_first_due(&ws), w2);

	/* a mark of a tube nobody waits on is nothing; a tube is marked
	 * once however often */
	waiters_mark(&ws, "c", 1);
	waiters_mark(&ws, "a", 1);
	waiters_mark(&ws, "a", 1);
	t = waiters_next_marked(&ws);
	assert_non_null(t);
	assert_ptr_equal(waiters_head(t), w1);
	end(&ws, w1);
	assert_ptr_equal(waiters_head(t), w2); /* held: still valid */
	end(&ws, w2);
	assert_null(waiters_head(t));
	waiters_release(&ws, t); /* freed: nobody waits on "a" */
	assert_null(waiters_next_marked(&ws));
	assert_false(waiters_on(&ws, "a", 1));
	assert_true(waiters_on(&ws, "b", 1));
	assert_ptr_equal(waiters_first_due(&ws), w3);

	/* put off to the next turn */
	waiters_mark(&ws, "b", 1);
	t = waiters_next_marked(&ws);
	assert_ptr_equal(waiters_head(t), w3);
	waiters_retry(&ws, t);
	assert_null(waiters_next_marked(&ws));
	waiters_turn(&ws);
	t = waiters_next_marked(&ws);
	assert_ptr_equal(waiters_head(t), w3);
	waiters_release(&ws, t);

	end(&ws, w3);
	assert_int_equal(ws.n, 0);
	assert_int_equal(ws.tubes.len, 0);
	assert_int_equal(ws.sessions.len, 0);
	waiters_fini(&ws);
}

/* A take parked behind others marks only the tubes where it is first. */
static void
test_a_late_take_marks_only_the_tubes_it_heads(void **state)
{
	static const char *const a[] = { "a" }, *const ab[] = { "a", "b" };
	struct waiters ws;
	struct waiter *w1, *w2;
	struct wait_tube *t;

	(void)state;
	waiters_init(&ws);
	w1 = add(&ws, 1, 10, 1, a);
	w2 = add(&ws, 2, 10, 2, ab);
	waiters_mark_heads(&ws, w2);
	t = waiters_next_marked(&ws);
	assert_non_null(t);
	assert_ptr_equal(waiters_head(t), w2); /* "b", not "a" */
	assert_null(w2->links[1].prev);
	waiters_release(&ws, t);
	assert_null(waiters_next_marked(&ws));
	end(&ws, w2);
	end(&ws, w1);
	waiters_fini(&ws);
}

/* Many waiters: the deadline heap gives them in order, sessions count
 * them, and removing them in any order leaves nothing behind. */
static void
test_deadlines_and_sessions_at_scale(void **state)
{
	enum { N = 5000 };
	char names[N][8];
	struct waiters ws;
	int64_t last = -1;
	size_t k = 0;

	(void)state;
	waiters_init(&ws);
	for (int i = 0; i < N; i++) {
		const char *n[1];

		snprintf(names[i], sizeof(names[i]), "t%d", i % 97);
		n[0] = names[i];
		(void)add(&ws, (uint32_t)(i % 13), (i * 7919) % 1000, 1, n);
	}
	assert_int_equal(ws.n, N);
	assert_int_equal(waiters_of_session(&ws, 3), (N + 12 - 3) / 13);
	while (ws.n > N / 2) {
		struct waiter *x = waiters_first_due(&ws);

		assert_true(x->deadline >= last);
		last = x->deadline;
		end(&ws, x);
		k++;
	}
	for (uint32_t s = 0; s < 13; s++) {
		struct waiter *x;

		while ((x = waiters_session_head(&ws, s)) != NULL)
			end(&ws, x);
	}
	assert_int_equal(ws.n, 0);
	assert_int_equal(ws.tubes.len, 0);
	assert_int_equal(ws.sessions.len, 0);
	assert_int_equal(k, N / 2);
	waiters_fini(&ws);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_each_tube_serves_its_waiters_in_arrival_order),
		cmocka_unit_test(
		    test_a_late_take_marks_only_the_tubes_it_heads),
		cmocka_unit_test(test_deadlines_and_sessions_at_scale),
	};

	return cmocka_run_group_tests_name("waiters", tests, NULL, NULL);
}
