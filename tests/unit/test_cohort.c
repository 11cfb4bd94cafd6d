/* Tests of src/server/core/cohort.c: a commit holds while fewer writes
 * wait than the last one answered, until they are as many or as long as
 * a commit takes (at most 1 ms) has passed; one client never holds; a
 * hold that runs out with nobody come back skips the next 1, 2, 4... up
 * to 64 commits, and one that gathers anyone sets that back. */
#include <stdint.h>

#include "t_lib.h"

#include "server/core/cohort.h"

enum { US = 1000, COMMIT = 400 * US };

/* A commit answered `n` writes, and then one turn ran at `now` with
 * `waiting` writes back: whether it held. */
static bool
turn(struct cohort *h, uint32_t waiting, int64_t now)
{
	return cohort_hold(h, waiting, now, COMMIT);
}

static void
test_cohort_holds_until_the_cohort_is_back(void **state)
{
	struct cohort h = { 0 };
	int64_t t = 1000000;

	(void)state;
	cohort_answered(&h, 32);
	assert_true(turn(&h, 5, t));
	assert_true(cohort_deadline_ns(&h, COMMIT) == t + COMMIT);
	assert_true(turn(&h, 20, t + 50 * US));
	assert_false(turn(&h, 32, t + 90 * US)); /* all back */
	assert_true(cohort_deadline_ns(&h, COMMIT) == 0);
	cohort_submitted(&h);
	assert_true(h.holds == 1 && h.filled == 1 && h.ran_out == 0);
	/* until the commit answers, nothing holds */
	assert_false(turn(&h, 3, t + 100 * US));
}

static void
test_cohort_one_client_or_no_commit_time_never_holds(void **state)
{
	struct cohort h = { 0 };

	(void)state;
	cohort_answered(&h, 1);
	assert_false(turn(&h, 0, 10));
	assert_false(turn(&h, 1, 10));
	cohort_answered(&h, 8);
	assert_false(turn(&h, 0, 10)); /* nothing to commit yet */
	assert_false(cohort_hold(&h, 2, 10, 0));
	assert_true(h.holds == 0);
}

static void
test_cohort_hold_ends_at_the_commit_time_at_most_1_ms(void **state)
{
	struct cohort h = { 0 };

	(void)state;
	cohort_answered(&h, 4);
	assert_true(turn(&h, 1, 0 + 1));
	assert_true(turn(&h, 1, COMMIT));
	assert_false(turn(&h, 1, COMMIT + 1));
	assert_true(h.ran_out == 1);
	/* a slow disk: 50 ms commits hold 1 ms at the most */
	h = (struct cohort) { 0 };
	cohort_answered(&h, 4);
	assert_true(cohort_hold(&h, 1, 1, 50000 * US));
	assert_true(cohort_deadline_ns(&h, 50000 * US) == 1 + 1000 * US);
	assert_true(cohort_hold(&h, 1, 1000 * US, 50000 * US));
	assert_false(cohort_hold(&h, 1, 1000 * US + 1, 50000 * US));
}

/* One round: a commit answered 2 writes, one is back at once, the other
 * never; returns whether the round held. */
static bool
lonely_round(struct cohort *h, int64_t *t)
{
	bool held;

	cohort_answered(h, 2);
	held = turn(h, 1, *t);
	if (held)
		assert_false(turn(h, 1, *t + COMMIT + 1));
	cohort_submitted(h);
	*t += 2 * COMMIT;
	return held;
}

static void
test_cohort_backs_off_while_nobody_comes(void **state)
{
	struct cohort h = { 0 };
	int64_t t = 1;
	int held[200], n = 0;

	(void)state;
	for (int i = 0; i < 200; i++)
		held[i] = lonely_round(&h, &t);
	for (int i = 0; i < 200; i++)
		n += held[i];
	/* held, skip 1, held, skip 2, held, skip 4, ... then every 65th */
	assert_true(held[0] && !held[1] && held[2] && !held[3] && !held[4]);
	assert_true(held[5]);
	assert_true(n < 10);
	assert_true(h.ran_out == (uint64_t)n);
	/* a round whose hold gathers a write sets the backoff back */
	while (h.skip > 0) {
		cohort_answered(&h, 3);
		assert_false(turn(&h, 1, t));
		cohort_submitted(&h);
	}
	cohort_answered(&h, 3);
	assert_true(turn(&h, 1, t));
	assert_false(turn(&h, 2, t + COMMIT + 1)); /* ran out, one came */
	cohort_submitted(&h);
	assert_true(h.skip == 0 && h.backoff == 1);
	cohort_answered(&h, 3);
	assert_true(turn(&h, 1, t + 3 * COMMIT));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cohort_holds_until_the_cohort_is_back),
		cmocka_unit_test(
		    test_cohort_one_client_or_no_commit_time_never_holds),
		cmocka_unit_test(
		    test_cohort_hold_ends_at_the_commit_time_at_most_1_ms),
		cmocka_unit_test(test_cohort_backs_off_while_nobody_comes),
	};
	return cmocka_run_group_tests_name("cohort", tests, NULL, NULL);
}
