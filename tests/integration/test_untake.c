/* release with untake against a real sluiced: the holder of a lease
 * undoes its take, as if it never happened. The task is ready again at
 * the place it had before the take (before the tasks put after it), its
 * attempt uncounted (the next take is attempt 1 again, where a release
 * with front makes it 2), its last error unchanged, no release counted;
 * the lease is void. It stays so after a kill -9 (the UNTAKE record is in
 * the log before the reply). Force, a stale lease, a task not taken and
 * an unknown id are refused with specific errors. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

static uint64_t
put_max(struct sluice_client *c, const char *payload, uint32_t max)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = "q";
	o.max_attempts = max;
	return it_put_o(c, &o, payload);
}

/* Takes the next task of "q", asserted to be `id` at `attempts`; its
 * lease. */
static uint64_t
take_is(struct sluice_client *c, uint64_t id, uint32_t attempts)
{
	struct sluice_task *t = it_take(c, "q", 0, 0);
	uint64_t lease = t->lease;

	assert_true(t->id == id);
	assert_int_equal(t->attempts, attempts);
	sluice_task_free(t);
	return lease;
}

/* A counter of tube "q" ("takes", "releases"). */
static uint64_t
counter(struct sluice_client *c, const char *name)
{
	struct sluice_stats *st = NULL;
	uint64_t v = 0;

	it_rc(c, sluice_stats(c, "q", &st), 0);
	assert_int_equal(st->ntubes, 1);
	assert_int_equal(
	    sluice_kv_get(st->tubes[0].kv, st->tubes[0].nkv, name, &v), 0);
	sluice_stats_free(st);
	return v;
}

static void
peek_attempts(struct sluice_client *c, uint64_t id, uint32_t attempts)
{
	struct sluice_task *t = it_peek(c, id);

	assert_non_null(t);
	assert_int_equal(t->state, SLUICE_READY);
	assert_int_equal(t->attempts, attempts);
	assert_null(t->last_error);
	sluice_task_free(t);
}

static void
test_untake_uncounts_the_attempt(void **state)
{
	struct t_srv *s = it_srv(*state, "untake");
	struct sluice_client *c;
	struct sluice_after after;
	uint64_t a, b, lease, old;

	it_start(s);
	c = it_client(s);
	a = put_max(c, "a", 1);
	b = put_max(c, "b", 1);

	/* taken and undone: ready at its place, attempts 0 again */
	lease = take_is(c, a, 1);
	memset(&after, 0, sizeof(after));
	it_rc(c, sluice_untake(c, a, lease, &after), 0);
	assert_true(after.id == a);
	assert_int_equal(after.state, SLUICE_READY);
	assert_int_equal(after.replaced, 0);
	peek_attempts(c, a, 0);
	assert_int_equal(counter(c, "takes"), 1);
	assert_int_equal(counter(c, "releases"), 0);

	/* the lease is void */
	old = lease;
	it_rc(c, sluice_untake(c, a, old, NULL), SLUICE_ESTATE);
	lease = take_is(c, a, 1); /* before b, and attempt 1 again */
	it_rc(c, sluice_untake(c, a, old, NULL), SLUICE_ESTALE);
	assert_non_null(strstr(sluice_errmsg(c), "stale"));
	it_rc(c, sluice_ack(c, a, old, NULL, NULL), SLUICE_ESTALE);

	/* the holder's only: force is refused, naming it */
	it_rc(c, sluice_untake(c, a, SLUICE_FORCE, NULL), SLUICE_EINVAL);
	assert_non_null(strstr(sluice_errmsg(c), "untake"));
	assert_non_null(strstr(sluice_errmsg(c), "force"));
	/* a task not taken, an unknown one */
	it_rc(c, sluice_untake(c, b, lease, NULL), SLUICE_ESTATE);
	it_rc(c, sluice_untake(c, b + 1000, lease, NULL), SLUICE_ENOTFOUND);

	/* a release with front keeps the attempt: the next take is 2 */
	it_rc(c, sluice_untake(c, a, lease, NULL), 0);
	lease = take_is(c, a, 1);
	{
		struct sluice_release_opts front = { 0, -1, 1 };

		it_rc(c, sluice_release_opts(c, a, lease, &front, NULL), 0);
	}
	lease = take_is(c, a, 2);
	it_rc(c, sluice_untake(c, a, lease, NULL), 0);
	peek_attempts(c, a, 1);

	/* after a kill -9 the undone take is still undone */
	lease = take_is(c, a, 2);
	it_rc(c, sluice_untake(c, a, lease, NULL), 0);
	it_crash_restart(s, &c);
	peek_attempts(c, a, 1);
	take_is(c, a, 2);
	take_is(c, b, 1);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_untake_uncounts_the_attempt, it_setup, it_teardown),
	};

	return cmocka_run_group_tests_name("untake", tests, NULL, NULL);
}
