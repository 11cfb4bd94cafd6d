/* The beanstalk face's deadlines are beanstalkd's, measured by a client:
 * a reserve answers DEADLINE_SOON only once a job the connection holds
 * has no more than 1 s left, counted from when the client sent the
 * reserve that got it; a touch counts the job's new ttr from its answer,
 * not from the server's decision, however long the log took to commit
 * it in between (sluiced-fault holds every fdatasync for half a second:
 * the old rule answered DEADLINE_SOON with about 1.5 s left); a delayed
 * job is never reservable before its delay has passed since its put was
 * sent, and hardly later; a reserve is not answered behind another
 * connection's write to another tube (on that slow disk, half a second
 * later under the old rule). Bounds are generous where they are upper
 * bounds of waits (a loaded machine, sanitizers); the lower bounds are
 * exact. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"

enum {
	FSYNC_PAUSE_MS = 500, /* sluiced-fault's hold on each fdatasync */
	ROUNDS = 5,
};

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

/* Sends `cmd`, expects a reply starting with `want`; returns the
 * monotonic ms at which it was read. */
static int64_t
expect(struct bsc *b, const char *cmd, const char *want)
{
	char *got = bsc_cmd(b, cmd);
	int64_t at = it_mono_ms();

	if (strncmp(got, want, strlen(want)) != 0)
		fail_msg("%s-> %s (wanted %s)", cmd, got, want);
	free(got);
	return at;
}

static void
use_tube(struct bsc *b, const char *tube)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "use %s\r\n", tube);
	free(bsc_cmd(b, cmd));
	snprintf(cmd, sizeof(cmd), "watch %s\r\n", tube);
	free(bsc_cmd(b, cmd));
	free(bsc_cmd(b, "ignore default\r\n"));
}

static void
test_deadline_soon_comes_with_a_second_left_at_most(void **state)
{
	struct bsc_node f;
	struct bsc a;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&a, f.port), 0);
	use_tube(&a, "soon");
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t id = put_id(&a, "put 0 0 2 1\r\nx\r\n");
		int64_t sent = it_mono_ms(), soon;
		char del[64];

		expect(&a, "reserve-with-timeout 0\r\n", "RESERVED ");
		soon =
		    expect(&a, "reserve-with-timeout 5\r\n", "DEADLINE_SOON");
		/* the ttr ends no sooner than 2 s after the reserve was sent */
		if (sent + 2000 - soon > 1000)
			fail_msg("round %d: DEADLINE_SOON with %" PRId64
			         " ms left",
			    i, sent + 2000 - soon);
		snprintf(del, sizeof(del), "delete %" PRIu64 "\r\n", id);
		expect(&a, del, "DELETED");
	}
	bsc_close(&a);
	bsc_node_down(&f);
}

/* A node whose every fdatasync of the log takes FSYNC_PAUSE_MS more
 * (sluiced-fault). */
static void
slow_disk_up(void **state, struct bsc_node *f)
{
	char pause[32];

	snprintf(pause, sizeof(pause), "fsync:%d", FSYNC_PAUSE_MS);
	setenv("SLUICE_FAULT_PAUSE", pause, 1);
	f->s = it_srv(*state, "node");
	f->s->prog = "sluiced-fault";
	f->port = t_free_port();
	snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%d", f->port);
	f->s->args[0] = "--beanstalk";
	f->s->args[1] = f->addr;
	it_start(f->s);
	unsetenv("SLUICE_FAULT_PAUSE");
	f->c = it_client(f->s);
}

static void
test_a_touch_counts_its_ttr_from_its_answer(void **state)
{
	char cmd[64];
	struct bsc_node f;
	struct bsc a;
	int64_t touched, soon, left;
	uint64_t id;

	/* every fdatasync of the log waits half a second: a touch is
	 * answered that long after the server decided it */
	slow_disk_up(state, &f);

	assert_int_equal(bsc_open(&a, f.port), 0);
	use_tube(&a, "touch");
	id = put_id(&a, "put 0 0 2 1\r\nx\r\n");
	expect(&a, "reserve-with-timeout 0\r\n", "RESERVED ");
	snprintf(cmd, sizeof(cmd), "touch %" PRIu64 "\r\n", id);
	touched = expect(&a, cmd, "TOUCHED");
	soon = expect(&a, "reserve-with-timeout 5\r\n", "DEADLINE_SOON");
	left = touched + 2000 - soon;
	/* counted from the decision, about 1.5 s would be left; the slack
	 * is for a loaded machine's reads */
	if (left > 1000 + 150)
		fail_msg("DEADLINE_SOON with %" PRId64 " ms left after the "
		         "touch's answer",
		    left);
	/* and the job is still this connection's */
	snprintf(cmd, sizeof(cmd), "delete %" PRIu64 "\r\n", id);
	expect(&a, cmd, "DELETED");
	bsc_close(&a);
	bsc_node_down(&f);
}

static void
test_a_delayed_job_is_never_early_and_hardly_late(void **state)
{
	int64_t most = it_sanitized() ? 1000 : 250, best = INT64_MAX;
	int64_t worst = 0;
	struct bsc_node f;
	struct bsc a;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&a, f.port), 0);
	use_tube(&a, "later");
	for (int i = 0; i < ROUNDS; i++) {
		int64_t sent = it_mono_ms(), got, late;
		uint64_t id = put_id(&a, "put 0 1 10 1\r\nx\r\n");
		char del[64];

		got = expect(&a, "reserve-with-timeout 5\r\n", "RESERVED ");
		late = got - sent - 1000;
		if (late < 0)
			fail_msg("round %d: reserved %" PRId64 " ms before "
			         "its delay had passed",
			    i, -late);
		if (late < best)
			best = late;
		if (late > worst)
			worst = late;
		snprintf(del, sizeof(del), "delete %" PRIu64 "\r\n", id);
		expect(&a, del, "DELETED");
	}
	print_message("delayed jobs reserved %" PRId64 "..%" PRId64
	              " ms after their delay\n",
	    best, worst);
	if (best > 30 || worst > most)
		fail_msg("reserved %" PRId64 "..%" PRId64
		         " ms late (at most 30 at best, %" PRId64 " at worst)",
		    best, worst, most);
	bsc_close(&a);
	bsc_node_down(&f);
}

/* A reserve's answer waits for what its job depends on, not for other
 * connections' writes to other tubes decided in the same turn: on a
 * slow disk it would otherwise wait a whole fdatasync more. */
static void
test_a_reserve_does_not_wait_for_other_tubes_writes(void **state)
{
	struct bsc_node f;
	struct bsc a, b, c;
	int64_t sent, got;

	slow_disk_up(state, &f);
	assert_int_equal(bsc_open(&a, f.port), 0);
	assert_int_equal(bsc_open(&b, f.port), 0);
	assert_int_equal(bsc_open(&c, f.port), 0);
	use_tube(&a, "mine");
	free(bsc_cmd(&b, "use other\r\n"));
	free(bsc_cmd(&c, "use third\r\n"));
	(void)put_id(&a, "put 0 0 60 1\r\nx\r\n"); /* durable */
	/* c's put holds the log for FSYNC_PAUSE_MS; meanwhile b's put and
	 * then a's reserve arrive, and are decided in one turn after it */
	assert_int_equal(bsc_sends(&c, "put 0 0 60 1\r\nc\r\n"), 0);
	it_sleep_ms(100);
	assert_int_equal(bsc_sends(&b, "put 0 0 60 1\r\nb\r\n"), 0);
	it_sleep_ms(50);
	sent = it_mono_ms();
	got = expect(&a, "reserve-with-timeout 0\r\n", "RESERVED ");
	/* at the end of c's commit (about FSYNC_PAUSE_MS - 150 ms after
	 * it was sent), not after b's too (a whole FSYNC_PAUSE_MS later) */
	if (got - sent >= FSYNC_PAUSE_MS)
		fail_msg("the reserve was answered after %" PRId64 " ms, "
		         "behind another tube's write",
		    got - sent);
	free(bsc_reply(&b));
	free(bsc_reply(&c));
	bsc_close(&a);
	bsc_close(&b);
	bsc_close(&c);
	bsc_node_down(&f);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_deadline_soon_comes_with_a_second_left_at_most),
		T(test_a_touch_counts_its_ttr_from_its_answer),
		T(test_a_delayed_job_is_never_early_and_hardly_late),
		T(test_a_reserve_does_not_wait_for_other_tubes_writes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
