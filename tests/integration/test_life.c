/* A task's life against a real sluiced: due order, a take whose client is
 * gone, the release of every lease of a tube, sessions in the log (issue
 * 18, section 2); an error text on every failure path and the backoff of
 * lost leases (section 4). Each test changes the state through one
 * interface (libsluice or the CLI), checks it through the other, and
 * again after a kill -9 and a restart. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"

enum { WAIT_MS = 10000 };

/* The same in the background, output thrown away: its pid (tracked). */
static pid_t
cli_spawn(const struct t_srv *s, ...)
{
	struct it_argv a;
	va_list ap;
	pid_t pid;

	va_start(ap, s);
	it_cli_argv(&a, s->url, ap);
	va_end(ap);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *null = freopen("/dev/null", "w", stdout);

		(void)null;
		execv(a.argv[0], a.argv);
		_exit(127);
	}
	it_track_pid(pid);
	return pid;
}

static void
reap(pid_t pid, int sig)
{
	int status;

	if (sig != 0)
		kill(pid, sig);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

/* The number after `"name":` in `json` (the first such key). */
static long long
json_num(const char *json, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(json, key);
	assert_non_null(p);
	return strtoll(p + strlen(key), NULL, 10);
}

/* True when the string value of `name` in `json` starts with `prefix`. */
static bool
json_str_starts(const char *json, const char *name, const char *prefix)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":\"", name);
	p = strstr(json, key);
	return p != NULL &&
	    strncmp(p + strlen(key), prefix, strlen(prefix)) == 0;
}

/* `sluice peek ID --json` into out. */
static void
cli_peek(const struct t_srv *s, uint64_t id)
{
	char ids[32];

	snprintf(ids, sizeof(ids), "%llu", (unsigned long long)id);
	assert_int_equal(it_sluice(s, "peek", ids, "--json", NULL), 0);
}

static uint64_t
put_delayed(struct sluice_client *c, const char *tube, const char *payload,
    uint64_t delay_ms)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.delay_ms = delay_ms;
	return it_put_o(c, &o, payload);
}

/* ---- 2. due order and ownership ---------------------------------------- */

/* Tasks of one priority come out in the order they became due: a delayed
 * task put after another but due before it is taken first, and a plain
 * put made once both were due comes last. The order is the state's, so
 * it holds after a kill -9. */
static void
test_tasks_come_out_in_due_order(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t = NULL;
	uint64_t late, early, plain;

	it_start(s);
	c = it_client(s);
	late = put_delayed(c, "due", "late", 400);
	early = put_delayed(c, "due", "early", 200);
	assert_true(it_wait_state(c, late, SLUICE_READY, WAIT_MS) >= 0);
	plain = it_put(c, "due", "plain");
	it_rc(c, sluice_peek_next(c, "due", SLUICE_READY, &t), 0);
	assert_true(t->id == early);
	sluice_task_free(t);

	it_crash_restart(s, &c);
	assert_int_equal(it_sluice(s, "take", "-t", "due", "--json", NULL), 0);
	assert_true((uint64_t)json_num(it_out, "id") == early);
	assert_int_equal(it_sluice(s, "take", "-t", "due", "--json", NULL), 0);
	assert_true((uint64_t)json_num(it_out, "id") == late);
	assert_int_equal(it_sluice(s, "take", "-t", "due", "--json", NULL), 0);
	assert_true((uint64_t)json_num(it_out, "id") == plain);
	sluice_close(c);
}

/* A leader whose writes wait for one follower; stopping the follower
 * (SIGSTOP) holds every reply that depends on a write. */
struct pair {
	struct t_srv *lead, *fol;
	char repl[64], follow[64];
};

static void
pair_start(void **state, struct pair *p)
{
	p->lead = it_srv(*state, "lead");
	p->fol = it_srv(*state, "fol");
	snprintf(p->repl, sizeof(p->repl), "tcp://127.0.0.1:%d", t_free_port());
	snprintf(p->follow, sizeof(p->follow), "%s", p->repl);
	p->lead->args[0] = "--repl-listen";
	p->lead->args[1] = p->repl;
	p->lead->args[2] = "--sync-replicas";
	p->lead->args[3] = "1";
	p->lead->args[4] = "--sync-timeout";
	p->lead->args[5] = "30s";
	p->lead->args[6] = "--log-level";
	p->lead->args[7] = "debug";
	p->fol->args[0] = "--follow";
	p->fol->args[1] = p->follow;
	it_start(p->lead);
	it_start(p->fol);
}

/* One take whose client is killed while the reply waits for the
 * follower: `detach` a detached take, else a session lease (its reply
 * then waits for the put, which is made with the follower stopped too).
 * Returns false when the client was killed before its take reached the
 * server (nothing was taken: the caller tries again). */
static bool
take_then_kill(struct pair *p, struct sluice_client *c, const char *tube,
    bool detach, int64_t settle_ms, uint64_t *id)
{
	pid_t put = 0, take;
	struct sluice_task *t;
	char undone[64];
	int before;

	snprintf(undone, sizeof(undone), "takes_undone=1");
	before = it_log_count(p->lead, undone);
	if (detach)
		*id = it_put(c, tube, "job");
	assert_int_equal(kill(p->fol->pid, SIGSTOP), 0);
	if (!detach)
		put = cli_spawn(p->lead, "put", "-t", tube, "job", NULL);
	take = cli_spawn(p->lead, "take", "-t", tube, "-w", "10s",
	    detach ? "--detach" : "--no-detach", NULL);
	it_sleep_ms(settle_ms);
	reap(take, SIGKILL);
	it_sleep_ms(100); /* the server reads the end of the connection */
	assert_int_equal(kill(p->fol->pid, SIGCONT), 0);
	if (put != 0)
		reap(put, 0);
	if (!detach) {
		struct sluice_task *ts = NULL;
		size_t n = 0;

		it_rc(c,
		    sluice_list(c, tube, 0, SLUICE_ORDER_AGE, 1, 0, &ts, &n),
		    0);
		assert_int_equal(n, 1);
		*id = ts[0].id;
		sluice_task_free(ts);
	}
	t = it_peek(c, *id);
	assert_non_null(t);
	if (it_log_count(p->lead, undone) == before) {
		/* never taken: the client died before it asked */
		assert_int_equal(t->state, SLUICE_READY);
		assert_int_equal(t->attempts, 0);
		sluice_task_free(t);
		it_rc(c, sluice_delete(c, *id), 0);
		return false;
	}
	assert_int_equal(t->state, SLUICE_READY);
	assert_int_equal(t->attempts, 0);
	assert_null(t->last_error);
	sluice_task_free(t);
	return true;
}

/* A take answered while its client is being killed takes nothing: the
 * take is undone in the same commit window (an UNTAKE record), the task
 * is ready with its attempt uncounted, and stays so after a kill -9. */
static void
test_a_take_whose_client_is_gone_takes_nothing(void **state)
{
	struct pair p;
	struct sluice_client *c;
	uint64_t ids[2] = { 0, 0 };

	pair_start(state, &p);
	c = it_client(p.lead);
	for (int k = 0; k < 2; k++) {
		bool done = false;

		for (int round = 0; round < 5 && !done; round++)
			done = take_then_kill(&p, c, k ? "session" : "detached",
			    k == 0, 300 + 300 * round, &ids[k]);
		assert_true(done);
	}
	assert_true(it_log_count(p.lead, "takes_undone=1") >= 2);

	it_crash_restart(p.lead, &c);
	for (int k = 0; k < 2; k++) {
		cli_peek(p.lead, ids[k]);
		assert_true(strstr(it_out, "\"state\":\"ready\"") != NULL);
		assert_int_equal(json_num(it_out, "attempts"), 0);
	}
	sluice_close(c);

	/* the log inspector reads the records that undid the takes */
	t_srv_stop(p.lead, SIGKILL);
	{
		char bin[1024];
		char *argv[] = { bin, "dump", "--type", "UNTAKE", p.lead->data,
			NULL };

		snprintf(bin, sizeof(bin), "%s", t_bin("sluice-log"));
		assert_int_equal(t_run(argv, NULL, it_out, sizeof(it_out),
		                     it_err, sizeof(it_err)),
		    0);
		assert_true(strstr(it_out, "UNTAKE") != NULL);
		assert_true(strstr(it_out, "-> wait") != NULL);
	}
}

/* An operator releases every taken task of a tube at once; their holders'
 * leases are void, and the tasks stay ready after a kill -9. */
static void
test_release_all_frees_every_lease_of_a_tube(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c, *w;
	struct sluice_task *a, *b;
	struct it_counts n;

	it_start(s);
	c = it_client(s);
	w = it_client(s);
	(void)it_put(c, "jobs", "a");
	(void)it_put(c, "jobs", "b");
	(void)it_put(c, "jobs", "c");
	(void)it_put(c, "other", "d");
	a = it_take(w, "jobs", 0, 0);
	b = it_take(w, "jobs", 0, 1);
	sluice_task_free(it_take(w, "other", 0, 0));
	assert_int_equal(
	    it_sluice(s, "release", "-t", "jobs", "--all", "--json", NULL), 0);
	assert_string_equal(it_out, "{\"released\":2}\n");
	n = it_counts(c, "jobs");
	assert_true(n.ready == 3 && n.taken == 0);
	assert_int_equal(it_counts(c, "other").taken, 1);
	it_rc(w, sluice_ack(w, a->id, a->lease, NULL, NULL), SLUICE_ESTATE);
	assert_int_equal(
	    it_sluice(s, "release", "-t", "jobs", "--all", NULL), 0);
	assert_string_equal(it_out, "released 0 tasks\n");
	assert_int_equal(it_sluice(s, "release", "1", "--all", NULL), 2);
	assert_true(it_log_count(s,
	                "release of every lease tube=jobs "
	                "released=2 peer=127.0.0.1:") == 1);

	sluice_close(w);
	it_crash_restart(s, &c);
	n = it_counts(c, "jobs");
	assert_true(n.ready == 3 && n.taken == 0);
	cli_peek(s, b->id);
	assert_true(strstr(it_out, "\"state\":\"ready\"") != NULL);
	assert_int_equal(json_num(it_out, "attempts"), 1);
	sluice_task_free(a);
	sluice_task_free(b);
	sluice_close(c);
}

/* Sessions coming and going are logged at debug level with the peer's
 * address, and on the way out with the leases they released. */
static void
test_sessions_are_logged_with_their_peer(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c, *w;

	s->args[0] = "--log-level";
	s->args[1] = "debug";
	it_start(s);
	c = it_client(s);
	(void)it_put(c, "jobs", "a");
	w = it_client(s);
	sluice_task_free(it_take(w, "jobs", 0, 0));
	sluice_close(w);
	assert_true(it_wait_state(c, 1, SLUICE_DELAYED, WAIT_MS) >= 0);
	assert_true(it_log_count(s, "session opened session=") >= 2);
	assert_true(it_log_count(s, "peer=127.0.0.1:") >= 2);
	assert_int_equal(it_log_count(s, "leases_released=1"), 1);
	sluice_close(c);
}

/* ---- 4. an error text on every failure path ----------------------------- */

/* fail --fatal buries at once whatever the attempts; bury keeps its text;
 * both are grouped by errors, and survive a kill -9. */
static void
test_fatal_fail_and_bury_carry_their_text(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct sluice_task *t;
	char ids[32], lease[32];
	uint64_t a, b;

	it_start(s);
	c = it_client(s);
	sluice_put_opts_init(&o);
	o.tube = "jobs";
	o.max_attempts = 5;
	a = it_put_o(c, &o, "a");
	b = it_put_o(c, &o, "b");
	assert_int_equal(it_sluice(s, "take", "-t", "jobs", "--json", NULL), 0);
	assert_true((uint64_t)json_num(it_out, "id") == a);
	snprintf(ids, sizeof(ids), "%llu", json_num(it_out, "id"));
	snprintf(lease, sizeof(lease), "%llu", json_num(it_out, "lease"));
	assert_int_equal(it_sluice(s, "fail", ids, "--lease", lease, "-e",
	                     "bad input", "--fatal", NULL),
	    0);
	assert_string_equal(it_out, "failed 1, buried\n");
	assert_int_equal(it_sluice(s, "fail", ids, "--lease", lease, "-e", "x",
	                     "--fatal", "--delay", "1s", NULL),
	    2);
	t = it_peek(c, a);
	assert_int_equal(t->state, SLUICE_BURIED);
	assert_int_equal(t->attempts, 1);
	assert_string_equal(t->last_error, "bad input");
	sluice_task_free(t);

	t = it_take(c, "jobs", 0, 1);
	assert_true(t->id == b);
	it_rc(c, sluice_bury_error(c, b, t->lease, "poison", NULL), 0);
	sluice_task_free(t);
	assert_int_equal(
	    it_sluice(s, "errors", "-t", "jobs", "--json", NULL), 0);
	assert_non_null(strstr(it_out, "\"poison\""));
	assert_non_null(strstr(it_out, "\"bad input\""));

	it_crash_restart(s, &c);
	cli_peek(s, b);
	assert_true(strstr(it_out, "\"state\":\"buried\"") != NULL);
	assert_true(json_str_starts(it_out, "last_error", "poison"));
	t = it_peek(c, a);
	assert_int_equal(t->state, SLUICE_BURIED);
	assert_string_equal(t->last_error, "bad input");
	sluice_task_free(t);
	sluice_close(c);
}

/* Checks, in the JSON of a peek, a task whose lease was lost: waiting
 * the first backoff (1 s after the record, which updated_at holds), with
 * `why` as its last error and its last take kept. On a slow machine the
 * second may be over: the task is ready then, and its updated_at is the
 * moment the backoff ended (run_at), still 1 s or more after the take. */
static void
assert_backed_off(const char *why, long long taken_at)
{
	bool ready = strstr(it_out, "\"state\":\"ready\"") != NULL;

	assert_true(strstr(it_out, "\"state\":\"delayed\"") != NULL || ready);
	assert_true(json_str_starts(it_out, "last_error", why));
	if (ready) {
		assert_int_equal(
		    json_num(it_out, "run_at"), json_num(it_out, "updated_at"));
		assert_true(json_num(it_out, "run_at") - taken_at >= 1000);
	} else {
		assert_int_equal(
		    json_num(it_out, "run_at") - json_num(it_out, "updated_at"),
		    1000);
	}
	assert_int_equal(json_num(it_out, "taken_at"), taken_at);
	assert_int_equal(json_num(it_out, "attempts"), 1);
}

/* A ttr expiry and a disconnect record why and delay the task by the
 * backoff of a fail (buried at max_attempts); the errors view groups
 * them; all of it survives a kill -9. */
static void
test_lost_leases_back_off_and_say_why(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c, *w;
	struct sluice_put_opts o;
	struct sluice_task *ta, *tb, *tc;
	uint64_t a, b, d;

	it_start(s);
	c = it_client(s);
	sluice_put_opts_init(&o);
	o.tube = "hung";
	o.ttr_ms = 200;
	a = it_put_o(c, &o, "slow");
	ta = it_take(c, "hung", 0, 1);
	assert_true(it_wait_state(c, a, SLUICE_DELAYED, WAIT_MS) >= 0);
	cli_peek(s, a);
	assert_backed_off("ttr expired after 200ms", (long long)ta->taken_at);

	o.ttr_ms = 0;
	b = it_put_o(c, &o, "gone");
	o.max_attempts = 1;
	d = it_put_o(c, &o, "last");
	w = it_client(s);
	tb = it_take(w, "hung", 0, 0);
	tc = it_take(w, "hung", 0, 0);
	assert_true(tb->id == b && tc->id == d);
	sluice_close(w);
	assert_true(it_wait_state(c, d, SLUICE_BURIED, WAIT_MS) >= 0);
	cli_peek(s, b);
	assert_backed_off(
	    "worker disconnected (127.0.0.1:", (long long)tb->taken_at);
	cli_peek(s, d);
	assert_true(strstr(it_out, "\"state\":\"buried\"") != NULL);
	assert_true(json_str_starts(
	    it_out, "last_error", "worker disconnected (127.0.0.1:"));
	/* a's lease is backing off (delayed): every live task's errors */
	assert_int_equal(it_sluice(s, "errors", "-t", "hung", "--state", "all",
	                     "--json", NULL),
	    0);
	assert_non_null(strstr(it_out, "\"ttr expired after 200ms\""));

	it_crash_restart(s, &c);
	cli_peek(s, a);
	assert_backed_off("ttr expired after 200ms", (long long)ta->taken_at);
	cli_peek(s, b);
	assert_backed_off(
	    "worker disconnected (127.0.0.1:", (long long)tb->taken_at);
	cli_peek(s, d);
	assert_true(strstr(it_out, "\"state\":\"buried\"") != NULL);
	sluice_task_free(ta);
	sluice_task_free(tb);
	sluice_task_free(tc);
	sluice_close(c);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_tasks_come_out_in_due_order),
		T(test_a_take_whose_client_is_gone_takes_nothing),
		T(test_release_all_frees_every_lease_of_a_tube),
		T(test_sessions_are_logged_with_their_peer),
		T(test_fatal_fail_and_bury_carry_their_text),
		T(test_lost_leases_back_off_and_say_why),
	};
#undef T
	return cmocka_run_group_tests_name("life", tests, NULL, NULL);
}
