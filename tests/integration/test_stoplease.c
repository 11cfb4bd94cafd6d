/* A session lease held across the end of its server (docs/queue.md, "A
 * lease's end when the server stops"): a clean stop (SIGTERM) ends the
 * session as a disconnect does, so the task waits the retry backoff with
 * "server stopped (lease of ADDR:PORT)" as its last error; a crash
 * (SIGKILL) leaves the lease to the next start, which makes the task
 * ready at once with "server restarted (...)". Either way the attempt is
 * counted, a detached lease held at the same time is untouched, and the
 * worker's ack with the ended lease is refused, never taken for a
 * success. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"

enum {
	BACKOFF_MS = 600000, /* the tube's: the task stays delayed */
};

/* A tube with a backoff no test outlives, a session lease on one task of
 * it and a detached lease on another. */
struct held {
	uint64_t id, lease;   /* the session lease */
	uint64_t did, dlease; /* the detached one */
};

static void
take_two(struct sluice_client *c, struct held *h)
{
	struct sluice_tube_conf conf = { 0 };
	struct sluice_task *t;

	conf.set = SLUICE_TS_BACKOFF;
	conf.backoff_base_ms = BACKOFF_MS;
	conf.backoff_cap_ms = BACKOFF_MS;
	it_rc(c, sluice_tube_set(c, "work", &conf, 0, NULL), 0);
	h->id = it_put(c, "work", "send the welcome mail");
	h->did = it_put(c, "work", "and the invoice");
	t = it_take(c, "work", 0, 0); /* a session lease */
	assert_int_equal(t->id, h->id);
	assert_int_equal(t->detached, 0);
	h->lease = t->lease;
	sluice_task_free(t);
	t = it_take(c, "work", 0, 1);
	assert_int_equal(t->id, h->did);
	h->dlease = t->lease;
	sluice_task_free(t);
}

/* What both ends share: the attempt counted, the lease gone, the ack
 * with it refused, the detached lease still the worker's. */
static struct sluice_task *
check_after(struct sluice_client *c, const struct held *h, int state)
{
	struct sluice_task *t = it_peek(c, h->id);
	int rc;

	assert_non_null(t);
	if (t->state != state || t->attempts != 1 || t->lease != 0 ||
	    t->last_error == NULL)
		fail_msg("task %llu is %s, attempts %u, lease %llu, "
		         "last_error \"%s\": want %s, attempts 1, no lease, "
		         "a last error",
		    (unsigned long long)h->id, sluice_state_name(t->state),
		    t->attempts, (unsigned long long)t->lease,
		    t->last_error ? t->last_error : "",
		    sluice_state_name(state));
	rc = sluice_ack(c, h->id, h->lease, NULL, NULL);
	assert_true(rc == SLUICE_ESTATE || rc == SLUICE_ESTALE);
	it_rc(c, sluice_ack(c, h->did, h->dlease, NULL, NULL), 0);
	return t;
}

/* SIGTERM with a worker connected and holding its lease: the task is
 * delayed by the tube's backoff, and says why. */
static void
test_a_clean_stop_ends_a_session_lease_as_a_disconnect(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *w, *c;
	struct sluice_task *t;
	struct held h;
	char want[96];
	int64_t now;

	it_start(s);
	w = it_client(s);
	take_two(w, &h);
	/* the worker is still connected while the server stops */
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	assert_int_equal(
	    it_log_count(s, "the stop ends the session leases"), 1);
	sluice_close(w);
	it_start(s);
	c = it_client(s);
	t = check_after(c, &h, SLUICE_DELAYED);
	snprintf(want, sizeof(want), "server stopped (lease of 127.0.0.1:");
	if (strncmp(t->last_error, want, strlen(want)) != 0)
		fail_msg(
		    "last_error \"%s\", want \"%s...)\"", t->last_error, want);
	now = it_wall_ms();
	assert_true(t->run_at > (uint64_t)now + BACKOFF_MS / 2);
	sluice_task_free(t);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* SIGKILL: nothing ends the session but the next start, which makes the
 * task ready at once (the node failed, not the task) and says why. */
static void
test_a_crash_leaves_the_task_ready_with_why(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct held h;

	it_start(s);
	c = it_client(s);
	take_two(c, &h);
	it_crash_restart(s, &c);
	t = check_after(c, &h, SLUICE_READY);
	assert_string_equal(t->last_error,
	    "server restarted (lease of a session of its previous run)");
	sluice_task_free(t);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* Whether the file at `path` holds `needle` (in its first 4 KiB). */
static bool
file_has(const char *path, const char *needle)
{
	char text[4096];
	FILE *f = fopen(path, "r");
	size_t n = f != NULL ? fread(text, 1, sizeof(text) - 1, f) : 0;

	text[n] = '\0';
	if (f != NULL)
		fclose(f);
	return strstr(text, needle) != NULL;
}

/* `sluice work` running a command when the server stops: its task
 * comes back after the backoff with the worker's address, and the
 * worker's ack after the restart is refused rather than taken for the
 * task's success. */
static void
test_a_clean_stop_under_sluice_work(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_tube_conf conf = { 0 };
	uint64_t id;
	int64_t deadline;
	pid_t pid;
	int status = 0;
	bool exited = false;

	it_start(s);
	c = it_client(s);
	conf.set = SLUICE_TS_BACKOFF;
	conf.backoff_base_ms = BACKOFF_MS;
	conf.backoff_cap_ms = BACKOFF_MS;
	it_rc(c, sluice_tube_set(c, "work", &conf, 0, NULL), 0);
	id = it_put(c, "work", "resize the picture");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(t_path(*state, "work.log"),
		    O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		execl(t_bin("sluice"), "sluice", "-s", s->url, "work", "-t",
		    "work", "--max-tasks", "1", "--", "sh", "-c", "sleep 2",
		    (char *)NULL);
		_exit(127);
	}
	it_track_pid(pid);
	assert_true(it_wait_state(c, id, SLUICE_TAKEN, 10000) >= 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_start(s);
	c = it_client(s);
	/* the command ends, the worker's ack meets the restarted server */
	deadline = it_mono_ms() + 20000;
	while (!exited && it_mono_ms() < deadline) {
		exited = waitpid(pid, &status, WNOHANG) == pid;
		if (!exited)
			it_sleep_ms(20);
	}
	if (!exited)
		fail_msg("sluice work did not end after its command");
	t = it_peek(c, id);
	if (t->state != SLUICE_DELAYED || t->attempts != 1 ||
	    t->last_error == NULL ||
	    strncmp(t->last_error, "server stopped (lease of 127.0.0.1:", 35) !=
	        0)
		fail_msg("task %llu is %s, attempts %u, last_error \"%s\": "
		         "want delayed, attempts 1, \"server stopped (lease "
		         "of 127.0.0.1:PORT)\"",
		    (unsigned long long)id, sluice_state_name(t->state),
		    t->attempts, t->last_error ? t->last_error : "");
	sluice_task_free(t);
	if (!file_has(t_path(*state, "work.log"), "not taken"))
		fail_msg("the worker's ack was not refused as not taken");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A stop with no session lease held logs nothing about them and changes
 * no task. */
static void
test_a_stop_without_session_leases_changes_nothing(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	uint64_t id;

	it_start(s);
	c = it_client(s);
	id = it_put(c, "idle", "x");
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	assert_int_equal(
	    it_log_count(s, "the stop ends the session leases"), 0);
	sluice_close(c);
	it_start(s);
	c = it_client(s);
	t = it_peek(c, id);
	assert_int_equal(t->state, SLUICE_READY);
	assert_int_equal(t->attempts, 0);
	assert_null(t->last_error);
	sluice_task_free(t);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, it_setup, it_teardown)
		T(test_a_clean_stop_ends_a_session_lease_as_a_disconnect),
		T(test_a_crash_leaves_the_task_ready_with_why),
		T(test_a_stop_without_session_leases_changes_nothing),
		T(test_a_clean_stop_under_sluice_work),
#undef T
	};

	return cmocka_run_group_tests_name("stoplease", tests, NULL, NULL);
}
