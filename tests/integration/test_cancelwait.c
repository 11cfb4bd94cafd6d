/* Waiting for a task's result and cancelling, against real sluiced
 * processes: a wait on a task acked before it began gets the result (the
 * tube keeps no finished tasks: the outcome outlives the task), through
 * libsluice and the CLI, and again after a snapshot, a kill -9 and a
 * restart; a wait parked on a taken task is woken by its ack; a wait
 * that times out says the task's state (CLI exit 3); a cancel of a
 * ready, a delayed and a buried task removes each at once (wait:
 * cancelled); a cancel of a taken task: the holder's touch and release
 * get ECANCELED and the task goes, an ack succeeds and removes it, and a
 * real `sluice work` stops its command; a follower answers waits as its
 * leader does, and after a failover a cancelled task whose holder is gone
 * is removed by the new leader. Bad input gets its own error. */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bsc.h"
#include "it.h"
#include "it_http.h"
#include "it_node.h"
#include "it_sp.h"
#include "proto/msg.h"

/* put with a ttr (0: the default); its id. */
static uint64_t
put_ttr(struct sluice_client *c, const char *tube, uint64_t ttr_ms,
    uint64_t delay_ms)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.ttr_ms = ttr_ms;
	o.delay_ms = delay_ms;
	return it_put_o(c, &o, "payload");
}

static void
ack_result(
    struct sluice_client *c, const struct sluice_task *t, const char *result)
{
	struct sluice_ack_opts o = { NULL, result };

	it_rc(c, sluice_ack_opts(c, t->id, t->lease, &o, NULL), 0);
}

/* The outcome of `id` as the library sees it, not waiting. */
static struct sluice_outcome
outcome(struct sluice_client *c, uint64_t id)
{
	struct sluice_outcome o;

	it_rc(c, sluice_wait(c, id, 0, &o), 0);
	assert_int_equal(o.id, id);
	return o;
}

static void
is_done(struct sluice_client *c, uint64_t id, const char *result)
{
	struct sluice_outcome o = outcome(c, id);

	assert_true(o.final);
	assert_int_equal(o.state, SLUICE_DONE);
	assert_string_equal(o.text, result);
	assert_int_equal(o.text_len, strlen(result));
	assert_true(o.time > 0);
}

static void
is_cancelled(struct sluice_client *c, uint64_t id)
{
	struct sluice_outcome o = outcome(c, id);

	assert_true(o.final);
	assert_int_equal(o.state, SLUICE_CANCELLED);
	assert_string_equal(sluice_state_name(o.state), "cancelled");
	assert_null(it_peek(c, id));
}

static void
out_has(const char *needle)
{
	if (strstr(it_out, needle) == NULL)
		fail_msg(
		    "no %s in stdout: %s (stderr: %s)", needle, it_out, it_err);
}

static void
err_has(const char *needle)
{
	if (strstr(it_err, needle) == NULL)
		fail_msg(
		    "no %s in stderr: %s (stdout: %s)", needle, it_err, it_out);
}

/* A task acked (with a result) before anyone waits, in a tube that keeps
 * no finished tasks: the task is gone, its result is not; through the
 * library and the CLI, after a snapshot plus a kill -9 and restart, and
 * after a kill -9 that leaves it in the log's tail alone. */
static void
test_wait_on_a_task_acked_before(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	char idtxt[32];
	uint64_t a, b;

	it_start(s);
	c = it_client(s);
	a = it_put(c, "jobs", "first");
	t = it_take(c, "jobs", 0, 0);
	ack_result(c, t, "{\"sum\":42}");
	sluice_task_free(t);
	assert_null(it_peek(c, a)); /* the tube keeps nothing */
	is_done(c, a, "{\"sum\":42}");
	snprintf(idtxt, sizeof(idtxt), "%llu", (unsigned long long)a);
	assert_int_equal(it_sluice(s, "wait", idtxt, NULL), 0);
	out_has("done ");
	out_has("{\"sum\":42}");
	assert_int_equal(it_sluice(s, "wait", idtxt, "--json", NULL), 0);
	out_has("\"state\":\"done\",\"final\":true");
	out_has("\"tube\":\"jobs\"");
	out_has("\"result\":\"{\\\"sum\\\":42}\"");

	/* the snapshot holds the outcome */
	it_rc(c, sluice_snapshot(c, NULL), 0);
	b = it_put(c, "jobs", "second");
	t = it_take(c, "jobs", 0, 0);
	ack_result(c, t, "tail");
	sluice_task_free(t);
	it_crash_restart(s, &c);
	is_done(c, a, "{\"sum\":42}"); /* from the snapshot */
	is_done(c, b, "tail");         /* from the log after it */
	it_crash_restart(s, &c);
	is_done(c, a, "{\"sum\":42}");
	is_done(c, b, "tail");
	sluice_close(c);
}

struct waiter {
	struct sluice_client *c;
	uint64_t id, timeout_ms;
	struct sluice_outcome o;
	int rc;
	int64_t ms;
};

static void *
wait_thread(void *arg)
{
	struct waiter *w = arg;
	int64_t t0 = it_mono_ms();

	w->rc = sluice_wait(w->c, w->id, w->timeout_ms, &w->o);
	w->ms = it_mono_ms() - t0;
	return NULL;
}

/* A wait on a taken task is parked and woken by its ack (long before its
 * 60 s would pass); one that times out says the task's state, not
 * final. */
static void
test_wait_woken_by_ack_and_timeout(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_outcome o;
	struct waiter w = { 0 };
	pthread_t th;
	char idtxt[32];
	uint64_t id;

	it_start(s);
	c = it_client(s);
	id = it_put(c, "jobs", "x");
	t = it_take(c, "jobs", 0, 0);
	w.c = it_client(s);
	w.id = id;
	w.timeout_ms = 60000;
	assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
	it_sleep_ms(300); /* parked by now, as a rule; either way it ends */
	ack_result(c, t, "woken");
	sluice_task_free(t);
	assert_int_equal(pthread_join(th, NULL), 0);
	it_rc(w.c, w.rc, 0);
	assert_true(w.o.final);
	assert_int_equal(w.o.state, SLUICE_DONE);
	assert_string_equal(w.o.text, "woken");
	assert_true(w.ms < 30000);
	sluice_close(w.c);

	/* timeouts: the library's, then the CLI's (exit 3) */
	id = it_put(c, "jobs", "y");
	it_rc(c, sluice_wait(c, id, 200, &o), 0);
	assert_false(o.final);
	assert_int_equal(o.state, SLUICE_READY);
	snprintf(idtxt, sizeof(idtxt), "%llu", (unsigned long long)id);
	assert_int_equal(
	    it_sluice(s, "wait", idtxt, "--timeout", "200ms", NULL), 3);
	out_has("running ");
	out_has(": ready");
	/* bad input */
	it_rc(c, sluice_wait(c, 0, 0, &o), SLUICE_EINVAL);
	it_rc(c, sluice_wait(c, id, SLUICE_WAIT_MAX_MS + 1, &o), SLUICE_EINVAL);
	it_rc(c, sluice_wait(c, 999999, 0, &o), SLUICE_ENOTFOUND);
	assert_non_null(strstr(sluice_errmsg(c), "no such task"));
	assert_int_equal(it_sluice(s, "wait", "abc", NULL), 2);
	assert_int_equal(it_sluice(s, "wait", NULL), 2);
	assert_int_equal(it_sluice(s, "wait", "999999", NULL), 1);
	err_has("wait 999999: ");
	err_has("no such task");
	sluice_close(c);
}

/* A ready, a delayed and a buried task are removed at once; an unknown
 * id is refused alone; bad input is a usage error. */
static void
test_cancel_each_waiting_state(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_result res[3];
	uint64_t ids[3];
	char a[32], b[32];

	it_start(s);
	c = it_client(s);
	ids[2] = it_put(c, "c", "to bury");
	ids[1] = put_ttr(c, "c", 0, 60000);
	ids[0] = it_put(c, "c", "ready");
	t = it_take(c, "c", 0, 0);
	assert_int_equal(t->id, ids[2]); /* the oldest ready one */
	it_rc(c, sluice_bury(c, t->id, t->lease, NULL), 0);
	sluice_task_free(t);
	assert_int_equal(it_state(c, ids[2]), SLUICE_BURIED);
	assert_int_equal(it_state(c, ids[1]), SLUICE_DELAYED);
	it_rc(c, sluice_cancel(c, ids[0]), 0);
	is_cancelled(c, ids[0]);
	snprintf(a, sizeof(a), "%llu", (unsigned long long)ids[1]);
	snprintf(b, sizeof(b), "%llu", (unsigned long long)ids[2]);
	assert_int_equal(it_sluice(s, "cancel", a, b, "424242", NULL), 1);
	out_has("cancelled ");
	err_has("cancel 424242: no such task");
	is_cancelled(c, ids[1]);
	is_cancelled(c, ids[2]);
	/* cancelled already, now gone: unknown */
	it_rc(c, sluice_cancel_batch(c, ids, 3, res), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(res[i].rc, SLUICE_ENOTFOUND);
	it_rc(c, sluice_cancel(c, 777777), SLUICE_ENOTFOUND);
	assert_int_equal(it_sluice(s, "cancel", NULL), 2);
	assert_int_equal(it_sluice(s, "cancel", "0", NULL), 2);
	assert_int_equal(it_sluice(s, "cancel", "x1", NULL), 2);
	assert_int_equal(it_sluice(s, "cancel", a, "--json", NULL), 1);
	out_has("\"error\":");
	sluice_close(c);
}

/* A taken task: marked, its touch and release get ECANCELED, the release
 * removes it; another's ack succeeds and removes it; both survive a
 * kill -9 as cancelled; a wait parked on a cancelled task is answered
 * when its lease ends. */
static void
test_cancel_taken_task_libsluice(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t, *u, *p;
	struct sluice_after after;
	struct waiter w = { 0 };
	pthread_t th;
	uint64_t a, b;
	char idtxt[32];

	it_start(s);
	c = it_client(s);
	a = it_put(c, "c", "a");
	b = it_put(c, "c", "b");
	t = it_take(c, "c", 0, 1);
	u = it_take(c, "c", 0, 1);
	assert_true(t->id == a && u->id == b);
	it_rc(c, sluice_cancel(c, a), 0);
	it_rc(c, sluice_cancel(c, a), 0); /* twice is once */
	p = it_peek(c, a);
	assert_non_null(p);
	assert_int_equal(p->state, SLUICE_TAKEN);
	assert_true(p->cancelled);
	sluice_task_free(p);
	snprintf(idtxt, sizeof(idtxt), "%llu", (unsigned long long)a);
	assert_int_equal(it_sluice(s, "peek", idtxt, "--json", NULL), 0);
	out_has("\"cancelled\":true");
	w.c = it_client(s);
	w.id = a;
	w.timeout_ms = 60000;
	assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
	it_rc(c, sluice_touch(c, a, t->lease, &after), SLUICE_ECANCELED);
	assert_non_null(strstr(sluice_errmsg(c), "cancelled"));
	assert_int_equal(it_state(c, a), SLUICE_TAKEN);
	it_rc(c, sluice_release(c, a, t->lease, 0, -1, NULL), SLUICE_ECANCELED);
	assert_int_equal(pthread_join(th, NULL), 0);
	it_rc(w.c, w.rc, 0);
	assert_true(w.o.final);
	assert_int_equal(w.o.state, SLUICE_CANCELLED);
	sluice_close(w.c);
	is_cancelled(c, a);
	it_rc(c, sluice_touch(c, a, t->lease, NULL), SLUICE_ENOTFOUND);

	it_rc(c, sluice_cancel(c, b), 0);
	it_crash_restart(s, &c); /* the mark is in the log */
	p = it_peek(c, b);
	assert_non_null(p); /* detached: the lease outlives the restart */
	assert_true(p->cancelled);
	sluice_task_free(p);
	it_rc(c, sluice_ack(c, b, u->lease, NULL, NULL), 0);
	is_cancelled(c, b);
	it_crash_restart(s, &c);
	is_cancelled(c, a);
	is_cancelled(c, b);
	sluice_task_free(t);
	sluice_task_free(u);
	sluice_close(c);
}

/* `sluice work` runs a command that would sleep a minute; the task is
 * cancelled; the worker's next touch (half the 1 s ttr) gets ECANCELED,
 * the command is stopped, the task goes, and the worker ends (its
 * --max-tasks 1) without calling it a failure. */
static void
test_cancel_stops_sluice_work(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	char errpath[600];
	char buf[4096] = "";
	int64_t end;
	uint64_t id;
	pid_t pid;
	FILE *f;
	int st;

	it_start(s);
	c = it_client(s);
	id = put_ttr(c, "w", 1000, 0);
	snprintf(errpath, sizeof(errpath), "%s.work", s->data);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *e = freopen(errpath, "w", stderr);

		(void)e;
		execl(t_bin("sluice"), "sluice", "-s", s->url, "work", "-t",
		    "w", "--max-tasks", "1", "--", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	it_track_pid(pid);
	assert_true(it_wait_state(c, id, SLUICE_TAKEN, 10000) >= 0);
	it_rc(c, sluice_cancel(c, id), 0);
	end = it_mono_ms() + 30000;
	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (it_mono_ms() > end)
			fail_msg("sluice work did not stop within 30 s");
		it_sleep_ms(20);
	}
	assert_true(WIFEXITED(st));
	f = fopen(errpath, "r");
	assert_non_null(f);
	(void)!fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (strstr(buf, "was cancelled") == NULL)
		fail_msg(
		    "no \"was cancelled\" in the worker's stderr: %s", buf);
	assert_int_equal(WEXITSTATUS(st), 0);
	is_cancelled(c, id);
	sluice_close(c);
}

/* A follower answers waits from the records it applied (the outcome of
 * an ack, a cancel); after a failover the new leader keeps them, and a
 * cancelled task whose holder was the old leader's client is removed as
 * the new leader ends the old sessions' leases. */
static void
test_wait_and_cancel_across_a_failover(void **state)
{
	struct it_node l, f;
	struct sluice_task *t;
	uint64_t a, b;

	it_node_init(state, &l, "leader");
	it_node_init(state, &f, "follower");
	it_node_start(&l);
	it_node_follows(&f, &l);
	it_node_start(&f);
	a = it_put(l.c, "jobs", "a");
	b = it_put(l.c, "jobs", "b");
	t = it_take(l.c, "jobs", 0, 0);
	assert_int_equal(t->id, a);
	ack_result(l.c, t, "before the failover");
	sluice_task_free(t);
	t = it_take(l.c, "jobs", 0, 0); /* b, under a session lease */
	assert_int_equal(t->id, b);
	it_rc(l.c, sluice_cancel(l.c, b), 0);
	it_node_caught_up(&l, &f);
	is_done(f.c, a, "before the failover");
	{
		struct sluice_outcome o = outcome(f.c, b);

		assert_false(o.final);
		assert_true(o.cancelled);
	}
	sluice_task_free(t);
	it_node_kill(&l);
	it_rc(f.c, sluice_promote(f.c, NULL), 0);
	assert_true(it_wait_state(f.c, b, 0, 20000) >= 0);
	is_done(f.c, a, "before the failover");
	is_cancelled(f.c, b);
}

/* Polls (bounded) until the node's parked waits for a result are n. */
static void
parked(struct sluice_client *c, uint64_t n)
{
	int64_t end = it_mono_ms() + 10000;

	while (it_node_kv(c, "waiting_results") != n) {
		if (it_mono_ms() > end)
			fail_msg("waiting_results never became %llu",
			    (unsigned long long)n);
		it_sleep_ms(10);
	}
}

/* A wait parked on the core is let go when its client disconnects, and
 * answered (then let go) when its time passes: nothing is left parked.
 * One connection parks at most --max-waiting-takes-per-conn waits: past
 * it a wait is refused (ELIMIT, naming the flag). */
static void
test_waits_are_released_on_disconnect_and_timeout(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct msg_req q = { .op = MSG_OP_WAIT };
	struct msg_rep rep;
	struct buf b, body;
	uint32_t bt;
	uint64_t id;
	int fd;

	s->args[0] = "--max-waiting-takes-per-conn";
	s->args[1] = "2";
	it_start(s);
	c = it_client(s);
	id = it_put(c, "p", "x");
	buf_init(&b);
	buf_init(&body);
	q.wait = (struct msg_wait) { id, 60000 };
	assert_int_equal(msg_encode_req(&b, &q), 0);
	fd = it_sp_open(s->port);
	it_sp_send(fd, 0x80000001u, b.data, b.len);
	it_sp_send(fd, 0x80000002u, b.data, b.len);
	parked(c, 2);
	it_sp_send(fd, 0x80000003u, b.data, b.len);
	assert_true(it_sp_recv(fd, &bt, 1, &body));
	assert_int_equal(bt, 0x80000003u);
	assert_int_equal(msg_decode_rep(body.data, body.len, NULL, &rep), 0);
	assert_int_equal(rep.status, SLUICE_ELIMIT);
	assert_non_null(memmem(rep.err.message.p, rep.err.message.len,
	    "--max-waiting-takes-per-conn", 28));
	parked(c, 2);
	close(fd);
	parked(c, 0);
	assert_int_equal(it_node_kv(c, "outcomes"), 0);

	q.wait.wait = 300;
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b, &q), 0);
	fd = it_sp_open(s->port);
	it_sp_send(fd, 0x80000002u, b.data, b.len);
	assert_true(it_sp_recv(fd, &bt, 1, &body));
	assert_int_equal(msg_decode_rep(body.data, body.len, NULL, &rep), 0);
	assert_int_equal(rep.status, 0);
	assert_false(rep.result.final);
	assert_int_equal(rep.result.state, MSG_ST_READY);
	close(fd);
	parked(c, 0);
	buf_fini(&b);
	buf_fini(&body);
	sluice_close(c);
}

/* The beanstalk face: a reserved job that is cancelled is NOT_FOUND to
 * its holder's touch, as a job deleted under it (beanstalkd has no
 * word for cancelled); its delete then removes it, and wait says
 * cancelled. */
static void
test_beanstalk_holder_of_a_cancelled_job(void **state)
{
	struct bsc a;
	struct bsc_node f;
	char *got, cmd[64];
	unsigned long long id = 0;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&a, f.port), 0);
	got = bsc_cmd(&a, "put 1 0 60 3\r\njob\r\n");
	assert_int_equal(sscanf(got, "INSERTED %llu", &id), 1);
	free(got);
	got = bsc_cmd(&a, "reserve-with-timeout 0\r\n");
	assert_non_null(strstr(got, "RESERVED"));
	free(got);
	it_rc(f.c, sluice_cancel(f.c, id), 0);
	snprintf(cmd, sizeof(cmd), "touch %llu\r\n", id);
	got = bsc_cmd(&a, cmd);
	assert_string_equal(got, "NOT_FOUND\r\n");
	free(got);
	snprintf(cmd, sizeof(cmd), "release %llu 1 0\r\n", id);
	got = bsc_cmd(&a, cmd);
	assert_string_equal(got, "NOT_FOUND\r\n");
	free(got);
	is_cancelled(f.c, id);
	bsc_close(&a);
	bsc_node_down(&f);
}

struct http_poll {
	int port;
	char path[128];
	int status;
	char *body;
};

static void *
http_thread(void *arg)
{
	struct http_poll *p = arg;

	p->status = it_http(p->port, "GET", p->path, NULL, NULL, &p->body);
	return NULL;
}

static void
body_has(const char *body, const char *needle)
{
	if (body == NULL || strstr(body, needle) == NULL)
		fail_msg("no %s in %s", needle, body ? body : "(nothing)");
}

/* The HTTP face: GET /v1/tasks/ID/result?wait=DUR is a long poll woken
 * by the ack; without a wait it answers the state at once; POST
 * /v1/tasks/ID/cancel and /v1/tasks/cancel cancel (admin writes), a
 * cancelled task's touch is 409 "cancelled"; bad input is 400, an
 * unknown id 404. */
static void
test_http_result_and_cancel(void **state)
{
	static char haddr[32];
	struct t_srv *s = it_srv(*state, "node");
	struct http_poll p = { 0 };
	struct sluice_client *c;
	struct sluice_task *t, *u;
	pthread_t th;
	char path[160], ids[64], *body = NULL;
	uint64_t a, b, d;

	p.port = it_free_port();
	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", p.port);
	s->args[0] = "--http";
	s->args[1] = haddr;
	s->args[2] = "--http-admin";
	it_start(s);
	c = it_client(s);
	a = it_put(c, "h", "a");
	b = it_put(c, "h", "b");
	d = it_put(c, "h", "d");
	t = it_take(c, "h", 0, 1);
	u = it_take(c, "h", 0, 1);
	assert_true(t->id == a && u->id == b);

	snprintf(
	    path, sizeof(path), "/v1/tasks/%llu/result", (unsigned long long)a);
	assert_int_equal(it_http(p.port, "GET", path, NULL, NULL, &body), 200);
	body_has(body, "\"state\":\"taken\",\"final\":false");
	free(body);
	snprintf(p.path, sizeof(p.path), "/v1/tasks/%llu/result?wait=30s",
	    (unsigned long long)a);
	assert_int_equal(pthread_create(&th, NULL, http_thread, &p), 0);
	it_sleep_ms(300);
	ack_result(c, t, "over http");
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(p.status, 200);
	body_has(p.body, "\"state\":\"done\",\"final\":true");
	body_has(p.body, "\"result\":\"over http\"");
	free(p.body);

	/* cancel: a taken task, then its touch */
	snprintf(
	    path, sizeof(path), "/v1/tasks/%llu/cancel", (unsigned long long)b);
	assert_int_equal(it_http(p.port, "POST", path, NULL, NULL, &body), 200);
	body_has(body, "\"cancelled\":true");
	free(body);
	snprintf(path, sizeof(path), "/v1/tasks/%llu/touch?lease=%llu",
	    (unsigned long long)b, (unsigned long long)u->lease);
	assert_int_equal(it_http(p.port, "POST", path, NULL, NULL, &body), 409);
	body_has(body, "\"error\":\"cancelled\"");
	free(body);
	snprintf(path, sizeof(path), "/v1/tasks/%llu/release?lease=%llu",
	    (unsigned long long)b, (unsigned long long)u->lease);
	assert_int_equal(it_http(p.port, "POST", path, NULL, NULL, &body), 409);
	free(body);
	is_cancelled(c, b);
	/* the batch form, with an unknown id beside a good one */
	snprintf(ids, sizeof(ids), "[%llu,424242]", (unsigned long long)d);
	assert_int_equal(
	    it_http(p.port, "POST", "/v1/tasks/cancel", NULL, ids, &body), 200);
	body_has(body, "\"results\":[");
	body_has(body, "\"not_found\"");
	free(body);
	is_cancelled(c, d);
	/* bad input */
	assert_int_equal(it_http(p.port, "POST", "/v1/tasks/424242/cancel",
	                     NULL, NULL, &body),
	    404);
	free(body);
	assert_int_equal(it_http(p.port, "GET", "/v1/tasks/424242/result", NULL,
	                     NULL, &body),
	    404);
	free(body);
	snprintf(path, sizeof(path), "/v1/tasks/%llu/result?wait=2m",
	    (unsigned long long)a);
	assert_int_equal(it_http(p.port, "GET", path, NULL, NULL, &body), 400);
	body_has(body, "wait");
	free(body);
	assert_int_equal(
	    it_http(p.port, "GET", "/v1/tasks/abc/result", NULL, NULL, &body),
	    400);
	free(body);
	assert_int_equal(
	    it_http(p.port, "POST", "/v1/tasks/cancel", NULL, "[]", &body),
	    400);
	free(body);
	/* a long poll whose client leaves is let go */
	{
		char req[200];
		uint64_t e = it_put(c, "h", "e");
		int fd = it_sp_dial(p.port);

		snprintf(req, sizeof(req),
		    "GET /v1/tasks/%llu/result?wait=60s HTTP/1.1\r\n"
		    "Host: %s\r\n\r\n",
		    (unsigned long long)e, haddr);
		it_sp_send_all(fd, req, strlen(req));
		parked(c, 1);
		close(fd);
		parked(c, 0);
	}
	sluice_task_free(t);
	sluice_task_free(u);
	sluice_close(c);
}

/* A result over 1,024 bytes (the wait reply cut it there, and the
 * outcome kept at most 4,096 of it): 65,535 bytes, the most an ack takes,
 * come back whole through libsluice, the CLI and HTTP, after a snapshot
 * and a kill -9 too. */
static void
test_wait_gets_a_long_result(void **state)
{
	static char haddr[32];
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_outcome o;
	char idtxt[32], path[96], *big = malloc(65536), *body = NULL;
	int hport = it_free_port();
	uint64_t id;

	assert_non_null(big);
	for (int i = 0; i < 65535; i++)
		big[i] = (char)('a' + i % 26);
	big[65535] = '\0';
	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = haddr;
	s->args[2] = NULL;
	it_start(s);
	c = it_client(s);
	id = it_put(c, "long", "x");
	t = it_take(c, "long", 0, 0);
	ack_result(c, t, big);
	sluice_task_free(t);
	for (int round = 0; round < 2; round++) {
		it_rc(c, sluice_wait(c, id, 0, &o), 0);
		assert_true(o.final);
		assert_int_equal(o.text_len, 65535);
		assert_memory_equal(o.text, big, 65535);
		snprintf(idtxt, sizeof(idtxt), "%llu", (unsigned long long)id);
		assert_int_equal(it_sluice(s, "wait", idtxt, NULL), 0);
		out_has(big + 65535 - 100); /* its end */
		snprintf(path, sizeof(path), "/v1/tasks/%s/result", idtxt);
		body = it_http_get(hport, path, 200);
		body_has(body, big + 65535 - 100);
		free(body);
		if (round == 0) {
			it_rc(c, sluice_snapshot(c, NULL), 0);
			it_crash_restart(s, &c);
		}
	}
	free(big);
	sluice_close(c);
}

struct acker {
	struct sluice_client *c;
	uint64_t id, lease;
	int rc;
};

static void *
ack_thread(void *arg)
{
	struct acker *a = arg;
	struct sluice_ack_opts o = { NULL, "late" };

	a->rc = sluice_ack_opts(a->c, a->id, a->lease, &o, NULL);
	return NULL;
}

/* A wait answers only what the log holds: an ack on its way to a slow
 * disk (each durable write held 0.7 s) is applied at once, but a wait
 * asking then is answered only once the ack is durable, so a kill -9
 * right after the answer loses nothing it said (the answer came before
 * the ack was durable, and the restarted server had the task ready
 * again). */
static void
test_wait_answers_only_what_the_log_holds(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_outcome o;
	struct acker a = { 0 };
	pthread_t th;
	uint64_t id;

	int64_t end;

	s->prog = "sluiced-fault";
	setenv("SLUICE_FAULT_PAUSE", "fsync:700", 1);
	it_start(s);
	unsetenv("SLUICE_FAULT_PAUSE"); /* its restart has a quick disk */
	c = it_client(s);
	id = it_put(c, "slow", "x");
	t = it_take(c, "slow", 5000, 0);
	a.c = it_client(s);
	a.id = id;
	a.lease = t->lease;
	assert_int_equal(pthread_create(&th, NULL, ack_thread, &a), 0);
	end = it_mono_ms() + 20000;
	do { /* final once the ack is applied (before the fix), durable */
		it_rc(c, sluice_wait(c, id, 0, &o), 0);
		assert_true(it_mono_ms() < end);
	} while (!o.final);
	assert_string_equal(o.text, "late");
	t_srv_stop(s, 9);
	assert_int_equal(pthread_join(th, NULL), 0);
	sluice_close(a.c);
	sluice_close(c);
	it_start(s);
	c = it_client(s);
	is_done(c, id, "late");
	assert_null(it_peek(c, id));
	sluice_task_free(t);
	sluice_close(c);
}

#define T(f) cmocka_unit_test_setup_teardown(f, it_setup, it_node_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_wait_on_a_task_acked_before),
		T(test_wait_woken_by_ack_and_timeout),
		T(test_cancel_each_waiting_state),
		T(test_cancel_taken_task_libsluice),
		T(test_cancel_stops_sluice_work),
		T(test_wait_and_cancel_across_a_failover),
		T(test_http_result_and_cancel),
		T(test_waits_are_released_on_disconnect_and_timeout),
		T(test_beanstalk_holder_of_a_cancelled_job),
		T(test_wait_gets_a_long_result),
		T(test_wait_answers_only_what_the_log_holds),
	};
	return cmocka_run_group_tests_name("cancelwait", tests, NULL, NULL);
}
