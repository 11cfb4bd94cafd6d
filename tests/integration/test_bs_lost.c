/* Lost leases on the beanstalk face keep beanstalkd's rule: a job whose
 * reserving connection closes, or whose ttr runs out, is ready at once
 * (never delayed by the server's lost-lease backoff, the default of the
 * other faces), and another connection reserves it at once; a native
 * client's session lease lost the same way still waits out the backoff,
 * and a tube's own lost-lease setting overrides the face's rule. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"

/* The state task `id` leaves SLUICE_TAKEN for (polled every 5 ms for up
 * to 10 s, 30 s sanitized); 0 when it stays taken. */
static int
state_after_taken(struct sluice_client *c, uint64_t id)
{
	int64_t end = it_mono_ms() + (it_sanitized() ? 30000 : 10000);
	int st;

	while ((st = it_state(c, id)) == SLUICE_TAKEN && it_mono_ms() < end)
		it_sleep_ms(5);
	return st == SLUICE_TAKEN ? 0 : st;
}

static uint64_t
put_id(struct bsc *b, const char *cmd)
{
	char *got = bsc_cmd(b, cmd);
	uint64_t id = 0;

	if (sscanf(got, "INSERTED %" SCNu64, &id) != 1)
		fail_msg("%s-> %s", cmd, got);
	free(got);
	return id;
}

static void
reserve(struct bsc *b, uint64_t id)
{
	char *got = bsc_cmd(b, "reserve-with-timeout 0\r\n"), want[64];

	snprintf(want, sizeof(want), "RESERVED %" PRIu64 " ", id);
	if (strncmp(got, want, strlen(want)) != 0)
		fail_msg(
		    "reserve-with-timeout 0 -> %s (wanted %s...)", got, want);
	free(got);
}

static void
test_a_closed_connections_job_is_ready_at_once(void **state)
{
	struct bsc a, b;
	struct bsc_node f;
	uint64_t id;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&a, f.port), 0);
	assert_int_equal(bsc_open(&b, f.port), 0);
	id = put_id(&a, "put 1 0 3600 3\r\njob\r\n");
	reserve(&a, id);
	assert_int_equal(it_state(f.c, id), SLUICE_TAKEN);
	bsc_close(&a);
	assert_int_equal(state_after_taken(f.c, id), SLUICE_READY);
	reserve(&b, id); /* no wait: ready now */
	bsc_close(&b);
	bsc_node_down(&f);
}

static void
test_a_job_whose_ttr_runs_out_is_ready_at_once(void **state)
{
	struct bsc a, b;
	struct bsc_node f;
	struct sluice_task *t;
	uint64_t id;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&a, f.port), 0);
	assert_int_equal(bsc_open(&b, f.port), 0);
	id = put_id(&a, "put 1 0 1 3\r\njob\r\n"); /* ttr 1 s */
	reserve(&a, id);
	assert_int_equal(state_after_taken(f.c, id), SLUICE_READY);
	reserve(&b, id);
	t = it_peek(f.c, id);
	assert_non_null(strstr(t->last_error, "ttr expired"));
	sluice_task_free(t);
	bsc_close(&a);
	bsc_close(&b);
	bsc_node_down(&f);
}

/* The native face keeps the server's default (the backoff); a tube's own
 * setting beats the beanstalk face's rule. */
static void
test_other_faces_and_tube_settings_keep_their_rule(void **state)
{
	struct sluice_client *w;
	struct sluice_task *t;
	struct bsc a;
	struct bsc_node f;
	uint64_t id;
	struct sluice_tube_conf set = { 0 };

	bsc_node_up(state, &f);
	id = it_put(f.c, "default", "native");
	w = it_client(f.s);
	t = it_take(w, "default", 5000, 0);
	assert_int_equal(t->id, id);
	sluice_task_free(t);
	sluice_close(w);
	assert_int_equal(state_after_taken(f.c, id), SLUICE_DELAYED);
	it_rc(f.c, sluice_delete(f.c, id), 0);

	set.set = SLUICE_TS_LOST_LEASE;
	set.lost_lease_immediate = 0; /* the tube's own: the backoff */
	it_rc(f.c, sluice_tube_set(f.c, "slow", &set, 0, NULL), 0);
	assert_int_equal(bsc_open(&a, f.port), 0);
	free(bsc_cmd(&a, "use slow\r\n"));
	free(bsc_cmd(&a, "watch slow\r\n"));
	free(bsc_cmd(&a, "ignore default\r\n"));
	id = put_id(&a, "put 1 0 3600 3\r\njob\r\n");
	reserve(&a, id);
	bsc_close(&a);
	assert_int_equal(state_after_taken(f.c, id), SLUICE_DELAYED);
	bsc_node_down(&f);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_a_closed_connections_job_is_ready_at_once),
		T(test_a_job_whose_ttr_runs_out_is_ready_at_once),
		T(test_other_faces_and_tube_settings_keep_their_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
