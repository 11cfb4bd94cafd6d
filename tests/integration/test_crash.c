/* Crashes: sluiced killed with SIGKILL and restarted on the same data.
 * This test kills the server while its snapshot child writes a large
 * snapshot and restarts it at once. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

/* Killed while its snapshot child writes a large snapshot, the server
 * can be restarted at once: the child must not outlive it holding the
 * data directory's lock or the listening port. */
static void
test_restart_while_a_snapshot_was_being_written(void **state)
{
	enum { TASKS = 20000, SIZE = 4096 };
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_batch_item *items = calloc(1000, sizeof(*items));
	char *payload = malloc(SIZE);
	struct sluice_client *c;
	uint64_t lsn;

	assert_non_null(items);
	assert_non_null(payload);
	memset(payload, 's', SIZE);
	it_start(s);
	c = it_client(s);
	for (int b = 0; b < TASKS / 1000; b++) {
		for (int i = 0; i < 1000; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].payload = payload;
			items[i].len = SIZE;
		}
		it_rc(c, sluice_put_batch(c, items, 1000), 0);
	}
	for (int round = 0; round < 3; round++) {
		/* a snapshot request, then the kill as soon as the child is
		 * at work: the reply never comes */
		sluice_set_timeout(c, 30);
		assert_int_not_equal(sluice_snapshot(c, &lsn), 0);
		it_crash_restart(s);
		sluice_set_timeout(c, IT_CALL_MS * (it_sanitized() ? 3 : 1));
		assert_int_equal(it_counts(c, NULL).ready, TASKS);
	}
	it_rc(c, sluice_snapshot(c, &lsn), 0);
	assert_true(lsn > 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	free(items);
	free(payload);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_restart_while_a_snapshot_was_being_written),
	};
#undef T
	return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
