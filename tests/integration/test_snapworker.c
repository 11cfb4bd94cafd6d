/* Snapshots built by the snapshot worker: the serving loop notes an LSN
 * and a thread rebuilds that state from the newest snapshot and the log
 * (server/core/bgsnap.c).
 *
 * - A snapshot is built from the one before plus the log after it, while
 *   the server goes on writing: the log line names the snapshot it
 *   started from, and a kill -9 then a restart from the new snapshot
 *   finds exactly what was acknowledged.
 * - A SIGTERM while the worker builds a large snapshot stops the server
 *   cleanly (exit 0, no unfinished snapshot left), and it starts again
 *   with every task.
 * - A queue that grows under a long load is snapshotted at sizes that
 *   grow with it (--snapshot-growth), not every --snapshot-records
 *   records, and a restart replays no more than the snapshot it loads
 *   allows. */
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it.h"

/* Whether the server's log holds `needle`. */
static bool
log_has(const struct t_srv *s, const char *needle)
{
	FILE *f = fopen(s->log, "r");
	char line[4096];
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/* How many lines of the server's log hold `needle`; the last one's text
 * after it is copied into `last` (when not NULL). */
static int
log_count(const struct t_srv *s, const char *needle, char *last, size_t n)
{
	FILE *f = fopen(s->log, "r");
	char line[4096];
	int count = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		const char *at = strstr(line, needle);

		if (at == NULL)
			continue;
		count++;
		if (last != NULL)
			snprintf(last, n, "%s", at + strlen(needle));
	}
	fclose(f);
	return count;
}

/* How many "*.snap.inprogress" files `dir` holds. */
static int
unfinished_snapshots(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		n += len > 16 &&
		    strcmp(e->d_name + len - 16, ".snap.inprogress") == 0;
	}
	closedir(d);
	return n;
}

/* The second snapshot starts from the first: what the log added between
 * them (puts, acks) is in it, and a restart from it (the log after it
 * holding only what came later) finds the state acknowledged. */
static void
test_snapshot_is_built_from_the_one_before_and_the_log(void **state)
{
	enum { FIRST = 100, MORE = 50, ACKED = 30 };
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	uint64_t lsn1, lsn2, last = 0;
	char want[128];

	it_start(s);
	c = it_client(s);
	for (int i = 0; i < FIRST; i++)
		it_put(c, "w", "first");
	it_rc(c, sluice_snapshot(c, &lsn1), 0);
	for (int i = 0; i < MORE; i++)
		last = it_put(c, "w", "more");
	for (int i = 0; i < ACKED; i++) {
		t = it_take(c, "w", 1000, 0);
		it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
		sluice_task_free(t);
	}
	it_rc(c, sluice_snapshot(c, &lsn2), 0);
	assert_true(lsn2 > lsn1);
	snprintf(want, sizeof(want), "snapshot written lsn=%" PRIu64 " ", lsn2);
	assert_true(log_has(s, want));
	snprintf(want, sizeof(want), "base_lsn=%" PRIu64 " ", lsn1);
	assert_true(log_has(s, want));
	/* One more put after it: the restart needs the snapshot and the
	 * log after it. */
	it_put(c, "w", "after");
	it_crash_restart(s, &c);
	snprintf(want, sizeof(want), "snap_lsn=%" PRIu64 " ", lsn2);
	assert_true(log_has(s, want));
	assert_int_equal(it_counts(c, "w").ready, FIRST + MORE - ACKED + 1);
	t = it_peek(c, last); /* the last put before the snapshot */
	assert_non_null(t);
	sluice_task_free(t);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* A stop while the worker builds a large snapshot: the build is given
 * up, nothing unfinished stays, and the next start has every task. */
static void
test_stop_while_the_worker_builds(void **state)
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
	/* a snapshot request whose reply does not come in 30 ms: the
	 * worker is at work */
	sluice_set_timeout(c, 30);
	assert_int_not_equal(sluice_snapshot(c, &lsn), 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	assert_int_equal(unfinished_snapshots(s->data), 0);
	it_verify_startable(s->data);
	it_start(s);
	c = it_client(s);
	sluice_set_timeout(c, IT_CALL_MS * (it_sanitized() ? 3 : 1));
	assert_int_equal(it_counts(c, NULL).ready, TASKS);
	it_rc(c, sluice_snapshot(c, &lsn), 0);
	assert_true(lsn > 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
	free(items);
	free(payload);
}

/* 8,000 puts with --snapshot-records 1000, paced so that each snapshot
 * ends before the next is due: with the thresholds growing with the last
 * snapshot's entries they come after 1,000, 2,000, 4,000 and 8,000
 * tasks (4, where a fixed cadence gives 7 or 8), and after a kill -9 the
 * restart replays at most as many records as the snapshot it loads
 * holds entries. */
static void
test_a_growing_queue_is_snapshotted_as_it_doubles(void **state)
{
	enum { TASKS = 8000, BATCH = 100, FLOOR = 1000 };
	static const char *const args[] = { "--snapshot-records", "1000",
		NULL };
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_batch_item items[BATCH];
	struct sluice_client *c;
	uint64_t entries = 0, records = 0;
	char last[512];
	const char *at;
	int n;

	for (int i = 0; args[i] != NULL; i++)
		s->args[i] = args[i];
	it_start(s);
	c = it_client(s);
	for (int b = 0; b < TASKS / BATCH; b++) {
		for (int i = 0; i < BATCH; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = "grow";
			items[i].payload = "g";
			items[i].len = 1;
		}
		it_rc(c, sluice_put_batch(c, items, BATCH), 0);
		/* every 500 tasks, time for a snapshot due to end */
		if ((b + 1) % 5 == 0)
			it_sleep_ms(it_sanitized() ? 600 : 200);
	}
	it_sleep_ms(it_sanitized() ? 1500 : 500);
	n = log_count(s, "snapshot written ", last, sizeof(last));
	assert_true(n >= 3 && n <= 5);
	assert_non_null(at = strstr(last, " entries="));
	entries = strtoull(at + 9, NULL, 10);
	assert_true(entries >= 4000 && entries <= TASKS + 10);
	/* a few more puts, then a crash: the restart loads the newest
	 * snapshot and replays the log after it, no more than it allows */
	it_rc(c, sluice_put_batch(c, items, BATCH), 0);
	it_crash_restart(s, &c);
	assert_int_equal(it_counts(c, "grow").ready, TASKS + BATCH);
	assert_int_equal(
	    log_count(s, "recovered from a snapshot", last, sizeof(last)), 1);
	assert_non_null(at = strstr(last, " snap_entries="));
	entries = strtoull(at + 14, NULL, 10);
	assert_non_null(at = strstr(last, " records="));
	records = strtoull(at + 9, NULL, 10);
	assert_true(records <= (entries > FLOOR ? entries : FLOOR) + BATCH);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_snapshot_is_built_from_the_one_before_and_the_log),
		T(test_stop_while_the_worker_builds),
		T(test_a_growing_queue_is_snapshotted_as_it_doubles),
	};
#undef T
	return cmocka_run_group_tests_name("snapworker", tests, NULL, NULL);
}
