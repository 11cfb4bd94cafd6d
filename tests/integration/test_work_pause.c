/* sluice work's pauses against a real sluiced, measured by the server's
 * own times: --pause-ok puts off the next take after a success,
 * --pause-error after a failure, --pause-empty after a take that found
 * nothing; without them the next take comes at once. A duration that is
 * not one is refused, naming the option. Only lower bounds are asserted
 * (a pause is never shorter than asked; a slow machine may make it
 * longer). */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"

enum { OUT = 16 << 10, PAUSE_MS = 1500, SLACK_MS = 100 };

static char out[OUT], err[OUT];

static struct t_srv *
up(void **state)
{
	struct t_srv *s = it_srv(*state, "pause");

	s->args[0] = "--keep-done";
	s->args[1] = "1h";
	it_start(s);
	return s;
}

/* `sluice work` started in the background (NULL-ended arguments). */
static pid_t
spawn(const char *url, ...)
{
	struct it_argv a;
	va_list ap;
	pid_t pid;

	va_start(ap, url);
	it_cli_argv(&a, url, ap);
	va_end(ap);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execv(a.bin, a.argv);
		_exit(127);
	}
	it_track_pid(pid);
	return pid;
}

/* Waits (bounded) for `pid` to exit; its exit status. */
static int
reap(pid_t pid)
{
	int64_t end = it_mono_ms() + 30000;
	int st;

	while (it_mono_ms() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		it_sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	fail_msg("sluice work did not stop within 30 s");
	return -1;
}

static struct sluice_task *
peek(struct sluice_client *c, uint64_t id)
{
	struct sluice_task *t = it_peek(c, id);

	assert_non_null(t);
	return t;
}

static void
test_pause_after_success_and_error(void **state)
{
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	struct sluice_task *a, *b;
	uint64_t ida, idb;
	int64_t gap;

	/* a success: the next take only PAUSE_MS after it */
	ida = it_put(c, "ok", "one");
	idb = it_put(c, "ok", "two");
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "work",
	        "-t", "ok", "--max-tasks", "2", "--pause-ok", "1500ms", "--",
	        "sh", "-c", "cat >/dev/null", NULL),
	    0);
	a = peek(c, ida);
	b = peek(c, idb);
	assert_int_equal(a->state, SLUICE_DONE);
	assert_int_equal(b->state, SLUICE_DONE);
	gap = (int64_t)b->taken_at - (int64_t)a->finished_at;
	if (gap < PAUSE_MS - SLACK_MS)
		fail_msg("taken %lld ms after the success, not after the pause",
		    (long long)gap);
	sluice_task_free(a);
	sluice_task_free(b);

	/* a failure: the next take only PAUSE_MS after it; the failed task
	 * backs off (1 s), so the next one is the other task */
	ida = it_put(c, "err", "bad");
	idb = it_put(c, "err", "ok");
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "work",
	        "-t", "err", "--max-tasks", "2", "--pause-error", "1500ms",
	        "--", "sh", "-c",
	        "[ \"$(cat)\" = ok ] || { echo no >&2; exit 1; }", NULL),
	    0);
	a = peek(c, ida);
	b = peek(c, idb);
	assert_string_equal(a->last_error, "no");
	assert_int_equal(b->state, SLUICE_DONE);
	/* a's last take came before its failure (its updated_at moves on
	 * when its backoff ends) */
	gap = (int64_t)b->taken_at - (int64_t)a->taken_at;
	if (gap < PAUSE_MS - SLACK_MS)
		fail_msg("taken %lld ms after the failure, not after the pause",
		    (long long)gap);
	sluice_task_free(a);
	sluice_task_free(b);

	/* not a duration */
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "work",
	        "-t", "ok", "--pause-error", "soon", "--", "true", NULL),
	    2);
	assert_non_null(strstr(err, "--pause-error takes a duration"));
	sluice_close(c);
}

/* waiting_takes of the node stats becomes `want` within 10 s. */
static void
wait_takes(struct sluice_client *c, uint64_t want)
{
	int64_t end = it_mono_ms() + 10000;

	while (it_node_kv(c, "waiting_takes") != want) {
		if (it_mono_ms() > end)
			fail_msg("waiting_takes never became %" PRIu64, want);
		it_sleep_ms(10);
	}
}

static void
test_pause_when_the_tube_is_empty(void **state)
{
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	struct sluice_task *t;
	pid_t pid;
	uint64_t id;
	int64_t gap;

	pid = spawn(s->url, "work", "-t", "idle", "--max-tasks", "1",
	    "--pause-empty", "3s", "--", "sh", "-c", "cat >/dev/null", NULL);
	/* its first take waits on the empty tube, then ends with nothing:
	 * the worker pauses instead of taking again at once */
	wait_takes(c, 1);
	wait_takes(c, 0);
	id = it_put(c, "idle", "late");
	assert_int_equal(reap(pid), 0);
	t = peek(c, id);
	assert_int_equal(t->state, SLUICE_DONE);
	gap = (int64_t)t->taken_at - (int64_t)t->created_at;
	if (gap < 1000)
		fail_msg("taken %lld ms after the put, within the pause",
		    (long long)gap);
	sluice_task_free(t);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_pause_after_success_and_error, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_pause_when_the_tube_is_empty, it_setup, it_teardown),
	};

	return cmocka_run_group_tests_name("work_pause", tests, NULL, NULL);
}
