/* The log segments a snapshot makes needless are removed off the serving
 * loop (log/wal_remove.c, on the log's preallocator thread), with the
 * removal made slow on purpose (sluiced-fault, SLUICE_FAULT_PAUSE=
 * remove:PAUSE_MS, a sleep before the unlinks).
 *
 * - While the removal sleeps, the server answers at once (a client asks
 *   for stats over and over: no answer waits for the removal, where on
 *   the loop one would wait about PAUSE_MS), and then the segments go
 *   (the log line names the thread).
 * - A SIGTERM with a removal handed over finishes it before the exit;
 *   the next start has every task.
 * - A kill -9 in the middle of a removal leaves a directory sluiced
 *   starts on, with every task. */
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it.h"

enum {
	PAUSE_MS = 4000,
	TASKS = 4000, /* of 1 KiB: about 4 segments of 1 MiB */
	SIZE = 1024,
	SLOW_MS = 2000, /* an answer this late waited for the removal */
	GONE_MS = 30000,
};

/* The segment files ("*.wal") in `dir`. */
static int
segment_files(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		n += len > 4 && strcmp(e->d_name + len - 4, ".wal") == 0;
	}
	closedir(d);
	return n;
}

/* Whether the `log_segments` stat and the segment files in `dir` agree
 * within `ms`: the stat is read before and after the files are counted,
 * and both reads must equal the count (a removal or a new segment in
 * between makes the sample unusable, and it is taken again). The last
 * sample is left in *nstat and *files. */
static bool
segments_agree(struct sluice_client *c, const char *dir, int ms,
    uint64_t *nstat, int *files)
{
	int64_t end = it_mono_ms() + ms;

	for (;;) {
		uint64_t s1 = it_node_kv(c, "log_segments"), s2;

		*files = segment_files(dir);
		s2 = it_node_kv(c, "log_segments");
		*nstat = s2;
		if (s1 == s2 && s2 == (uint64_t)*files)
			return true;
		if (it_mono_ms() >= end)
			return false;
		it_sleep_ms(50);
	}
}

static struct t_srv *
node(void **state, const char *name)
{
	struct t_srv *s = it_srv(*state, name);

	s->prog = "sluiced-fault";
	s->args[0] = "--segment-size";
	s->args[1] = "1048576";
	s->args[2] = "--keep-segments";
	s->args[3] = "0";
	s->args[4] = "--fsync";
	s->args[5] = "never";
	return s;
}

/* Starts `s` with the slow removal, and fills it. */
static void
start_filled(struct t_srv *s)
{
	struct sluice_batch_item items[100];
	struct sluice_client *c;
	char *payload = malloc(SIZE);

	assert_non_null(payload);
	memset(payload, 'r', SIZE);
	setenv("SLUICE_FAULT_PAUSE", "remove:4000", 1);
	it_start(s);
	unsetenv("SLUICE_FAULT_PAUSE");
	c = it_client(s);
	for (int b = 0; b < TASKS / 100; b++) {
		for (int i = 0; i < 100; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = "t";
			items[i].payload = payload;
			items[i].len = SIZE;
		}
		it_rc(c, sluice_put_batch(c, items, 100), 0);
	}
	sluice_close(c);
	free(payload);
	assert_true(segment_files(s->data) >= 3);
}

/* A client asking for stats until told to stop: the slowest answer. */
struct asker {
	pthread_t th;
	const struct t_srv *s;
	atomic_bool stop;
	int64_t worst_ms;
	unsigned answers;
	struct it_errs errs;
};

static void *
ask(void *arg)
{
	struct asker *a = arg;
	struct sluice_client *c = it_client(a->s);
	int64_t end = it_mono_ms() + GONE_MS + PAUSE_MS;

	sluice_set_timeout(c, GONE_MS);
	while (!atomic_load(&a->stop) && it_mono_ms() < end) {
		struct sluice_stats *st = NULL;
		int64_t t0 = it_mono_ms();

		if (sluice_stats(c, NULL, &st) != 0)
			it_errs_add(&a->errs, "stats failed");
		sluice_stats_free(st);
		if (it_mono_ms() - t0 > a->worst_ms)
			a->worst_ms = it_mono_ms() - t0;
		a->answers++;
		it_sleep_ms(20);
	}
	sluice_close(c);
	return NULL;
}

static void
test_the_removal_does_not_stop_the_loop(void **state)
{
	struct t_srv *s = node(state, "loop");
	struct asker a = { .s = s };
	struct sluice_client *c;
	int before, after = 0, files = -1;
	uint64_t nstat = 0, ready;
	bool agreed;
	int64_t end;

	start_filled(s);
	before = segment_files(s->data);
	it_errs_init(&a.errs);
	atomic_init(&a.stop, false);
	assert_int_equal(pthread_create(&a.th, NULL, ask, &a), 0);
	c = it_client(s);
	sluice_set_timeout(c, GONE_MS);
	it_rc(c, sluice_snapshot(c, NULL), 0);
	/* The removal sleeps PAUSE_MS on its thread, then removes. */
	end = it_mono_ms() + PAUSE_MS + GONE_MS;
	while (it_mono_ms() < end && (after = segment_files(s->data)) >= before)
		it_sleep_ms(50);
	it_sleep_ms(200); /* a few answers after it */
	atomic_store(&a.stop, true);
	pthread_join(a.th, NULL);
	agreed = segments_agree(c, s->data, GONE_MS, &nstat, &files);
	ready = it_counts(c, "t").ready;
	sluice_close(c); /* before the checks: a failed one leaks nothing */
	it_errs_check(&a.errs);
	assert_true(after < before);
	assert_true(a.answers > 10);
	/* On the loop, one answer would have waited about PAUSE_MS. */
	if (a.worst_ms >= SLOW_MS)
		fail_msg("an answer waited %lld ms during the removal",
		    (long long)a.worst_ms);
	assert_int_equal(it_log_count(s, "segments removed removed=") -
	        it_log_count(s, "thread=wal-alloc"),
	    0);
	assert_true(it_log_count(s, "thread=wal-alloc") >= 1);
	if (!agreed)
		fail_msg("log_segments %" PRIu64 " and %d segment files never "
		         "agreed",
		    nstat, files);
	assert_true(files < before);
	assert_int_equal(ready, TASKS);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* A stop right after the snapshot: the removal handed over is done
 * before the exit. */
static void
test_a_stop_finishes_the_removal(void **state)
{
	struct t_srv *s = node(state, "stop");
	struct sluice_client *c;
	uint64_t ready;
	int before;

	start_filled(s);
	before = segment_files(s->data);
	c = it_client(s);
	sluice_set_timeout(c, GONE_MS);
	it_rc(c, sluice_snapshot(c, NULL), 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	assert_true(segment_files(s->data) < before);
	assert_true(it_log_count(s, "thread=wal-alloc") >= 1);
	it_verify_startable(s->data);
	it_start(s);
	c = it_client(s);
	ready = it_counts(c, "t").ready;
	sluice_close(c);
	assert_int_equal(ready, TASKS);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A kill -9 while the removal sleeps (the snapshot is published, no
 * segment removed yet), and one in the middle of the next removal: each
 * start finds every task. */
static void
test_a_kill_during_the_removal(void **state)
{
	struct t_srv *s = node(state, "kill");
	struct sluice_client *c;
	uint64_t ready;

	start_filled(s);
	c = it_client(s);
	sluice_set_timeout(c, GONE_MS);
	it_rc(c, sluice_snapshot(c, NULL), 0);
	sluice_close(c);
	it_sleep_ms(PAUSE_MS / 2);
	assert_true(WIFSIGNALED(t_srv_stop(s, SIGKILL)));
	it_verify_startable(s->data);
	it_start(s); /* no pause: removals are quick now */
	c = it_client(s);
	ready = it_counts(c, "t").ready;
	if (ready == TASKS) {
		it_put(c, "t", "after");
		it_rc(c, sluice_snapshot(c, NULL), 0);
	}
	sluice_close(c);
	assert_int_equal(ready, TASKS);
	assert_true(WIFSIGNALED(t_srv_stop(s, SIGKILL)));
	it_verify_startable(s->data);
	it_start(s);
	c = it_client(s);
	ready = it_counts(c, "t").ready;
	sluice_close(c);
	assert_int_equal(ready, TASKS + 1);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_the_removal_does_not_stop_the_loop, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_stop_finishes_the_removal, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_kill_during_the_removal, it_setup, it_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
