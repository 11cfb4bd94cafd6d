/* A worker killed with kill -9 in the middle of a task. The worker is a
 * separate process (this binary run again with --worker, so it starts
 * with nng untouched): it opens its own client, takes a task, tells the
 * parent the task's id and lease through a pipe, and sleeps. The parent
 * SIGKILLs it.
 *
 * With a session lease (the default) the server sees the connection
 * close and the task is ready again at once, long before its 60 s ttr,
 * with its attempt counted. With a detached lease the task stays taken
 * until its ttr, and the lease still works for whoever holds it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"

enum {
	WORKER_SLEEP_MS = 60000, /* bounded even if nobody kills it */
	REPORT_WAIT_MS = 15000,
};

/* ---- the worker process ------------------------------------------------ */

/* --worker URL TUBE MAX DETACH FD: takes up to MAX tasks, writes "id
 * lease\n" for each to FD, then sleeps. */
static int
worker_main(char **argv)
{
	const char *tubes[1] = { argv[3] };
	struct sluice_take_opts o = { tubes, 1, 5000, 0, 0 };
	struct sluice_client *c = it_client_url(argv[2]);
	struct sluice_task *t = NULL;
	char line[4096];
	size_t n = 0, len = 0;
	int fd, rc;

	o.max = (uint32_t)atoi(argv[4]);
	o.detach = atoi(argv[5]);
	fd = atoi(argv[6]);
	if (c == NULL)
		return 2;
	rc = sluice_take(c, &o, &t, &n);
	if (rc != 0) {
		dprintf(fd, "error %s\n", sluice_errmsg(c));
		return 3;
	}
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len,
		    "%" PRIu64 " %" PRIu64 "\n", t[i].id, t[i].lease);
	if (write(fd, line, len) != (ssize_t)len)
		return 4;
	close(fd);
	it_sleep_ms(WORKER_SLEEP_MS);
	sluice_task_free(t);
	sluice_close(c);
	return 0;
}

/* ---- the parent --------------------------------------------------------- */

struct worker {
	pid_t pid;
	size_t n;
	uint64_t id[8], lease[8];
};

/* Starts a worker and waits (bounded) for it to report `want` tasks. */
static void
worker_spawn(const struct t_srv *s, const char *tube, int max, int detach,
    size_t want, struct worker *w)
{
	char smax[16], sdet[16], sfd[16], buf[4096];
	size_t len = 0;
	int p[2];
	int64_t t0 = it_mono_ms();
	char *line, *save;

	assert_int_equal(pipe(p), 0);
	snprintf(smax, sizeof(smax), "%d", max);
	snprintf(sdet, sizeof(sdet), "%d", detach);
	snprintf(sfd, sizeof(sfd), "%d", p[1]);
	memset(w, 0, sizeof(*w));
	w->pid = fork();
	assert_true(w->pid >= 0);
	if (w->pid == 0) {
		char *const argv[] = { "/proc/self/exe", "--worker",
			(char *)s->url, (char *)tube, smax, sdet, sfd, NULL };

		close(p[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	it_track_pid(w->pid);
	close(p[1]);
	/* read until the writer closes (after its one write) */
	for (;;) {
		struct pollfd pfd = { p[0], POLLIN, 0 };
		int64_t left = REPORT_WAIT_MS - (it_mono_ms() - t0);
		ssize_t r;

		if (left <= 0)
			fail_msg("the worker did not report in time");
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			fail_msg("poll: %s", strerror(errno));
		r = read(p[0], buf + len, sizeof(buf) - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(p[0]);
	buf[len] = '\0';
	if (strncmp(buf, "error", 5) == 0)
		fail_msg("worker: %s", buf);
	for (line = strtok_r(buf, "\n", &save); line != NULL && w->n < 8;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long id, lease;

		assert_int_equal(sscanf(line, "%llu %llu", &id, &lease), 2);
		w->id[w->n] = id;
		w->lease[w->n] = lease;
		w->n++;
	}
	assert_int_equal(w->n, want);
}

static void
worker_kill(struct worker *w)
{
	int status;

	assert_int_equal(kill(w->pid, SIGKILL), 0);
	assert_int_equal(waitpid(w->pid, &status, 0), w->pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* Under --lost-lease-retry immediate, the task of a killed worker is
 * ready again at once, attempts 1, with why in last_error. (By default
 * it waits the backoff first: test_life.c.) */
static void
test_killed_workers_task_is_ready_at_once(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct sluice_task *t;
	struct worker w;
	int64_t took;
	uint64_t id;

	s->args[0] = "--lost-lease-retry";
	s->args[1] = "immediate";
	it_start(s);
	c = it_client(s);
	sluice_put_opts_init(&o);
	o.tube = "work";
	o.ttr_ms = 60000;
	id = it_put_o(c, &o, "job");

	for (int round = 1; round <= 3; round++) {
		worker_spawn(s, "work", 1, 0, 1, &w);
		assert_int_equal(w.id[0], id);
		assert_int_equal(it_state(c, id), SLUICE_TAKEN);
		worker_kill(&w);
		took = it_wait_state(c, id, SLUICE_READY, 2000);
		assert_true(took >= 0);
		print_message("round %d: ready again %lld ms after the kill\n",
		    round, (long long)took);
		t = it_peek(c, id);
		assert_int_equal(t->attempts, (uint32_t)round);
		assert_int_equal(t->lease, 0);
		assert_non_null(t->last_error);
		assert_memory_equal(
		    t->last_error, "worker disconnected (127.0.0.1:", 31);
		sluice_task_free(t);
		/* the dead worker's lease ended: the task is not taken */
		it_rc(c, sluice_ack(c, id, w.lease[0], NULL, NULL),
		    SLUICE_ESTATE);
	}

	/* several tasks held by one worker all come back */
	(void)it_put_o(c, &o, "job2");
	(void)it_put_o(c, &o, "job3");
	worker_spawn(s, "work", 3, 0, 3, &w);
	worker_kill(&w);
	for (size_t i = 0; i < w.n; i++)
		assert_true(it_wait_state(c, w.id[i], SLUICE_READY, 2000) >= 0);
	assert_int_equal(it_counts(c, "work").ready, 3);
	assert_int_equal(it_counts(c, "work").taken, 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* A detached lease survives its worker: the task stays taken until its
 * ttr, and the lease can still ack it (or expires at the ttr). The two
 * workers, one for each, are killed together. */
static void
test_detached_lease_survives_the_worker(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_put_opts o;
	struct sluice_after after;
	struct sluice_client *c;
	struct sluice_task *t;
	struct worker w, w2;
	int64_t t_kill, took;
	uint64_t id, id2;

	it_start(s);
	c = it_client(s);
	sluice_put_opts_init(&o);
	/* ttr 60 s: still taken after the kill, acked with its lease */
	o.tube = "det";
	o.ttr_ms = 60000;
	id = it_put_o(c, &o, "long");
	/* ttr 1.5 s: taken until the ttr, then ready with attempts kept */
	o.tube = "det2";
	o.ttr_ms = 1500;
	id2 = it_put_o(c, &o, "short");
	worker_spawn(s, "det", 1, 1, 1, &w);
	assert_int_equal(w.id[0], id);
	worker_spawn(s, "det2", 1, 1, 1, &w2);
	assert_int_equal(w2.id[0], id2);
	worker_kill(&w);
	worker_kill(&w2);
	t_kill = it_mono_ms();
	it_sleep_ms(500);
	t = it_peek(c, id);
	assert_int_equal(t->state, SLUICE_TAKEN);
	assert_int_equal(t->detached, 1);
	assert_int_equal(t->lease, w.lease[0]);
	sluice_task_free(t);
	assert_int_equal(it_state(c, id2), SLUICE_TAKEN);
	it_rc(c, sluice_ack(c, id, w.lease[0], NULL, &after), 0);
	assert_int_equal(after.state, 0);
	assert_null(it_peek(c, id));

	took = it_wait_state(c, id2, SLUICE_READY, 3000);
	assert_true(took >= 0);
	took = it_mono_ms() - t_kill;
	print_message(
	    "detached lease ended %lld ms after the kill\n", (long long)took);
	assert_true(took >= 900); /* the lease began before the kill */
	t = it_peek(c, id2);
	assert_int_equal(t->attempts, 1);
	sluice_task_free(t);
	it_rc(c, sluice_ack(c, id2, w2.lease[0], NULL, NULL), SLUICE_ESTATE);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_killed_workers_task_is_ready_at_once, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_detached_lease_survives_the_worker, it_setup,
		    it_teardown),
	};

	if (argc == 7 && strcmp(argv[1], "--worker") == 0)
		return worker_main(argv);
	return cmocka_run_group_tests_name("kill", tests, NULL, NULL);
}
