/* stats-job's per-job counts, and stats-tube's pause, on the beanstalk
 * face, as clients use them:
 * a worker that retries a job while its `releases` is under a maximum
 * and buries it then (beaneater's Jobs#process!) stops after that many
 * releases. Before, `releases` was always 0 and such a worker released
 * the job for ever. The values are beanstalkd's for jobs whose
 * reservations end by release or bury (docs/beanstalk.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"

/* The value of `key` in the stats-job of job `id`. */
static long
job_stat(struct bsc *b, uint64_t id, const char *key)
{
	char cmd[64], want[64], *got, *at;
	long v = -1;

	snprintf(cmd, sizeof(cmd), "stats-job %" PRIu64 "\r\n", id);
	got = bsc_cmd(b, cmd);
	snprintf(want, sizeof(want), "\n%s: ", key);
	at = strstr(got, want);
	if (at == NULL || sscanf(at + strlen(want), "%ld", &v) != 1)
		fail_msg("%s-> %s (no %s)", cmd, got, key);
	free(got);
	return v;
}

static void
expect(struct bsc *b, const char *cmd, const char *want)
{
	char *got = bsc_cmd(b, cmd);

	if (strncmp(got, want, strlen(want)) != 0)
		fail_msg("%s-> %s (wanted %s)", cmd, got, want);
	free(got);
}

static void
test_releases_and_buries_count_as_in_beanstalkd(void **state)
{
	struct bsc_node f;
	struct bsc a;
	char cmd[64];
	uint64_t id = 0;
	char *got;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&a, f.port), 0);
	got = bsc_cmd(&a, "put 0 0 60 1\r\nx\r\n");
	assert_int_equal(sscanf(got, "INSERTED %" SCNu64, &id), 1);
	free(got);
	assert_int_equal(job_stat(&a, id, "releases"), 0);
	snprintf(cmd, sizeof(cmd), "release %" PRIu64 " 0 0\r\n", id);
	for (int i = 1; i <= 2; i++) {
		expect(&a, "reserve-with-timeout 0\r\n", "RESERVED ");
		assert_int_equal(job_stat(&a, id, "releases"), i - 1);
		expect(&a, cmd, "RELEASED");
		assert_int_equal(job_stat(&a, id, "releases"), i);
		assert_int_equal(job_stat(&a, id, "reserves"), i);
	}
	expect(&a, "reserve-with-timeout 0\r\n", "RESERVED ");
	snprintf(cmd, sizeof(cmd), "bury %" PRIu64 " 0\r\n", id);
	expect(&a, cmd, "BURIED");
	assert_int_equal(job_stat(&a, id, "releases"), 2);
	assert_int_equal(job_stat(&a, id, "buries"), 1);
	assert_int_equal(job_stat(&a, id, "reserves"), 3);
	bsc_close(&a);
	bsc_node_down(&f);
}

static void
test_a_worker_retrying_by_releases_stops(void **state)
{
	struct bsc_node f;
	struct bsc a;
	char cmd[64];
	uint64_t id = 0;
	int rounds = 0;
	char *got;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&a, f.port), 0);
	free(bsc_cmd(&a, "put 0 0 60 6\r\nfailer\r\n"));
	/* beaneater's Jobs#process! with max_retries 2 and a job that
	 * always fails: release while releases < 2, else bury */
	for (; rounds < 10; rounds++) {
		got = bsc_cmd(&a, "reserve-with-timeout 0\r\n");
		if (strncmp(got, "TIMED_OUT", 9) == 0) {
			free(got);
			break;
		}
		assert_int_equal(sscanf(got, "RESERVED %" SCNu64 " ", &id), 1);
		free(got);
		if (job_stat(&a, id, "releases") < 2)
			snprintf(cmd, sizeof(cmd),
			    "release %" PRIu64 " 0 0\r\n", id);
		else
			snprintf(
			    cmd, sizeof(cmd), "bury %" PRIu64 " 0\r\n", id);
		free(bsc_cmd(&a, cmd));
	}
	assert_int_equal(rounds, 3); /* two releases, then the bury */
	assert_int_equal(job_stat(&a, id, "releases"), 2);
	expect(&a, "peek-buried\r\n", "FOUND ");
	bsc_close(&a);
	bsc_node_down(&f);
}

/* The value of `key` in the stats-tube of `tube`. */
static long
tube_stat(struct bsc *b, const char *tube, const char *key)
{
	char cmd[64], want[64], *got, *at;
	long v = -1;

	snprintf(cmd, sizeof(cmd), "stats-tube %s\r\n", tube);
	got = bsc_cmd(b, cmd);
	snprintf(want, sizeof(want), "\n%s: ", key);
	at = strstr(got, want);
	if (at == NULL || sscanf(at + strlen(want), "%ld", &v) != 1)
		fail_msg("%s-> %s (no %s)", cmd, got, key);
	free(got);
	return v;
}

/* A client that pauses a tube for N s and looks sees N (beaneater's
 * "should allow tube pause"): before, `pause` was the time left rounded
 * down, N - 1 a millisecond later. */
static void
test_a_paused_tube_shows_its_pause(void **state)
{
	struct bsc_node f;
	struct bsc a;
	int64_t sent, elapsed;
	long pause, left;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&a, f.port), 0);
	free(bsc_cmd(&a, "use p\r\n"));
	free(bsc_cmd(&a, "put 0 0 60 1\r\nx\r\n"));
	assert_int_equal(tube_stat(&a, "p", "pause"), 0);
	sent = it_mono_ms();
	expect(&a, "pause-tube p 100\r\n", "PAUSED");
	pause = tube_stat(&a, "p", "pause");
	left = tube_stat(&a, "p", "pause-time-left");
	elapsed = it_mono_ms() - sent;
	/* 100 unless a whole second went by since the pause (a slow run) */
	assert_true(pause <= 100 && pause >= 100 - (elapsed + 999) / 1000);
	if (elapsed < 1000)
		assert_int_equal(pause, 100);
	assert_true(left <= 100 && left >= 99 - (elapsed + 999) / 1000);
	bsc_close(&a);
	bsc_node_down(&f);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_releases_and_buries_count_as_in_beanstalkd),
		T(test_a_worker_retrying_by_releases_stops),
		T(test_a_paused_tube_shows_its_pause),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
