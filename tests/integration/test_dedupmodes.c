/* put --key K --debounce DUR and --throttle DUR against a real sluiced:
 * three debounced puts 100 ms apart run once, with the last payload, not
 * before DUR after the last put; a throttled put within the window is
 * ignored and answered with the window's task (flagged throttled), a put
 * after it is a new task; both hold across kill -9 and a restart (from
 * the log and from a snapshot) and a failover to a promoted follower;
 * a group rides along with either mode; the HTTP face takes them too;
 * bad input is refused with a specific message and creates nothing.
 * Through the CLI and the library. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"
#include "it_node.h"

enum { OUT = 64 << 10 };

static char out[OUT], err[OUT];

static struct t_srv *
up(void **state)
{
	struct t_srv *s = it_srv(*state, "dedupmodes");

	it_start(s);
	return s;
}

/* A put of `payload` under key `key` in tube `tube` with one mode (ms). */
static struct sluice_put_result
put_mode(struct sluice_client *c, const char *tube, const char *key,
    uint64_t debounce, uint64_t throttle, const char *payload)
{
	struct sluice_put_result res;
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.key = key;
	o.debounce_ms = debounce;
	o.throttle_ms = throttle;
	it_rc(c, sluice_put_ex(c, &o, payload, strlen(payload), &res), 0);
	return res;
}

/* Takes, from tube `tube`, nothing within wait_ms (asserted). */
static void
assert_nothing(struct sluice_client *c, const char *tube, uint64_t wait_ms)
{
	const char *tubes[1] = { tube };
	struct sluice_take_opts o = { .tubes = tubes, .ntubes = 1 };
	struct sluice_task *t = NULL;
	size_t n = 0;

	o.wait_ms = wait_ms;
	it_rc(c, sluice_take(c, &o, &t, &n), SLUICE_ETIMEDOUT);
	assert_null(t);
}

static void
ack(struct sluice_client *c, const struct sluice_task *t)
{
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
}

/* Three puts 100 ms apart, debounced 500 ms, by the CLI: one task runs,
 * the last payload, no sooner than 500 ms after the last put. */
static void
test_debounce_runs_the_last_once(void **state)
{
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	const char *payloads[3] = { "p1", "p2", "p3" };
	uint64_t ids[3];
	int64_t last = 0, got;
	struct sluice_task *t;

	for (int i = 0; i < 3; i++) {
		if (i > 0)
			it_sleep_ms(100);
		last = it_wall_ms();
		assert_int_equal(
		    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err),
		        "put", "-t", "hooks", "--key", "acct-1", "--debounce",
		        "500ms", payloads[i], NULL),
		    0);
		ids[i] = strtoull(out, NULL, 10);
		assert_true(ids[i] != 0);
		if (i > 0)
			assert_non_null(strstr(err, "updated"));
	}
	assert_true(ids[1] == ids[0] && ids[2] == ids[0]);
	t = it_take(c, "hooks", 10000, 0);
	got = it_wall_ms();
	assert_true(t->id == ids[0]);
	assert_string_equal(t->payload, "p3");
	assert_true(got - last >= 500);
	assert_true((int64_t)t->run_at >= last + 500);
	assert_int_equal(t->attempts, 1);
	ack(c, t);
	sluice_task_free(t);
	/* it ran once: nothing else comes */
	assert_nothing(c, "hooks", 700);

	/* with --json: replaced */
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "put", "-t", "hooks", "--key",
	                     "acct-2", "--debounce", "1s", "--json", "a", NULL),
	    0);
	assert_non_null(strstr(out, "\"created\":true,\"replaced\":false"));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "put", "-t", "hooks", "--key",
	                     "acct-2", "--debounce", "1s", "--json", "b", NULL),
	    0);
	assert_non_null(strstr(out, "\"created\":false,\"replaced\":true"));
	sluice_close(c);
}

/* Throttle: a put within the window is ignored, answered with the
 * window's task and flagged, also once that task is done; after the
 * window, a new task. */
static void
test_throttle_ignores_within_the_window(void **state)
{
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	struct sluice_put_result r1, r;
	struct sluice_task *t;
	int64_t t0 = it_wall_ms();
	uint64_t win = 4000;

	r1 = put_mode(c, "hooks", "acct-9", 0, win, "first");
	assert_true(r1.created && !r1.throttled);
	r = put_mode(c, "hooks", "acct-9", 0, win, "second");
	assert_true(r.throttled && !r.created && r.id == r1.id);
	/* the CLI says so */
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "put", "-t", "hooks", "--key",
	                     "acct-9", "--throttle", "4s", "third", NULL),
	    0);
	assert_true(strtoull(out, NULL, 10) == r1.id);
	assert_non_null(strstr(err, "key acct-9 throttled"));
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "put",
	        "-t", "hooks", "--key", "acct-9", "--throttle", "4s", "--json",
	        "4th", NULL),
	    0);
	assert_non_null(strstr(out, "\"created\":false,\"throttled\":true"));
	/* done, the window still holds */
	t = it_take(c, "hooks", 0, 0);
	assert_true(t->id == r1.id);
	assert_string_equal(t->payload, "first");
	ack(c, t);
	sluice_task_free(t);
	r = put_mode(c, "hooks", "acct-9", 0, win, "fifth");
	/* (a put answered past t0 + win may have come after the window) */
	if (it_wall_ms() >= t0 + (int64_t)win)
		fail_msg("5 requests took over %" PRIu64 " ms", win);
	assert_true(r.throttled && r.id == r1.id);
	assert_nothing(c, "hooks", 0);
	/* past the window: a new task (the dedup window does not hold it) */
	while (it_wall_ms() < t0 + (int64_t)win + 50)
		it_sleep_ms(20);
	r = put_mode(c, "hooks", "acct-9", 0, win, "sixth");
	assert_true(r.created && !r.throttled && r.id > r1.id);
	t = it_take(c, "hooks", 0, 0);
	assert_string_equal(t->payload, "sixth");
	sluice_task_free(t);
	sluice_close(c);
}

/* The windows and the debounced task across kill -9: once from the log
 * alone, once from a snapshot with the log after it. */
static void
test_modes_survive_a_crash(void **state)
{
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	struct sluice_put_result th, r, d;
	struct sluice_task *t;
	uint64_t lsn;

	th = put_mode(c, "hooks", "acct-5", 0, 600000, "once");
	assert_true(th.created);
	t = it_take(c, "hooks", 0, 0);
	ack(c, t);
	sluice_task_free(t);
	d = put_mode(c, "deb", "acct-5", 1000, 0, "d1");
	assert_true(d.created);

	it_crash_restart(s, &c); /* from the log */
	r = put_mode(c, "hooks", "acct-5", 0, 600000, "again");
	assert_true(r.throttled && r.id == th.id);
	r = put_mode(c, "deb", "acct-5", 1000, 0, "d2");
	assert_true(r.replaced && r.id == d.id);

	it_rc(c, sluice_snapshot(c, &lsn), 0);
	/* a window opened after the snapshot lives in the log after it */
	r = put_mode(c, "hooks", "acct-6", 0, 600000, "six");
	assert_true(r.created);

	it_crash_restart(s, &c); /* from the snapshot, then the log */
	r = put_mode(c, "hooks", "acct-5", 0, 600000, "again");
	assert_true(r.throttled && r.id == th.id);
	r = put_mode(c, "hooks", "acct-6", 0, 600000, "again");
	assert_true(r.throttled && !r.created);
	t = it_take(c, "deb", 10000, 0);
	assert_true(t->id == d.id);
	assert_string_equal(t->payload, "d2");
	ack(c, t);
	sluice_task_free(t);
	assert_nothing(c, "deb", 300);
	sluice_close(c);
}

/* A throttled or debounced put may name a fair group: the task is in
 * it (a PUT_T carries the group), also after kill -9 and a replay. */
static void
test_modes_with_a_group(void **state)
{
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	struct sluice_put_result th, d, r;
	struct sluice_put_opts o;
	struct sluice_task *t;

	sluice_put_opts_init(&o);
	o.tube = "hooks";
	o.key = "acct-7";
	o.throttle_ms = 600000;
	o.group = "tenant-a";
	it_rc(c, sluice_put_ex(c, &o, "th", 2, &th), 0);
	assert_true(th.created);
	o.key = "acct-8";
	o.throttle_ms = 0;
	o.debounce_ms = 1;
	o.group = "tenant-b";
	it_rc(c, sluice_put_ex(c, &o, "db", 2, &d), 0);
	assert_true(d.created);

	it_crash_restart(s, &c); /* from the log */
	o.key = "acct-7";
	o.debounce_ms = 0;
	o.throttle_ms = 600000;
	o.group = "tenant-a";
	it_rc(c, sluice_put_ex(c, &o, "th", 2, &r), 0);
	assert_true(r.throttled && r.id == th.id);
	it_rc(c, sluice_peek(c, th.id, &t), 0);
	assert_non_null(t->group);
	assert_string_equal(t->group, "tenant-a");
	sluice_task_free(t);
	it_rc(c, sluice_peek(c, d.id, &t), 0);
	assert_non_null(t->group);
	assert_string_equal(t->group, "tenant-b");
	sluice_task_free(t);
	sluice_close(c);
}

/* Replicated: a follower applies the PUT_T, so once promoted it holds
 * the key's window (and the debounced task's content and time). */
static void
test_modes_replicate(void **state)
{
	struct it_node a, b;
	struct sluice_put_result th, r, d;
	struct sluice_task *t;
	uint64_t lsn;

	it_node_init(state, &a, "a");
	it_node_init(state, &b, "b");
	it_node_follows(&b, &a);
	it_node_start(&a);
	it_node_start(&b);
	th = put_mode(a.c, "hooks", "acct-1", 0, 600000, "once");
	assert_true(th.created);
	t = it_take(a.c, "hooks", 0, 0);
	ack(a.c, t);
	sluice_task_free(t);
	d = put_mode(a.c, "deb", "acct-1", 800, 0, "d1");
	r = put_mode(a.c, "deb", "acct-1", 800, 0, "d2");
	assert_true(r.replaced && r.id == d.id);
	it_node_caught_up(&a, &b);
	it_node_same_state(&a, &b);
	it_node_kill(&a);
	it_rc(b.c, sluice_promote(b.c, &lsn), 0);
	r = put_mode(b.c, "hooks", "acct-1", 0, 600000, "again");
	assert_true(r.throttled && r.id == th.id);
	t = it_take(b.c, "deb", 10000, 0);
	assert_true(t->id == d.id);
	assert_string_equal(t->payload, "d2");
	sluice_task_free(t);
	it_node_stop(&b, SIGTERM);
}

/* Bad input: each misuse its own message, and nothing created. */
static void
test_bad_input(void **state)
{
	static const struct {
		const char *args[8];
		const char *says;
	} bad[] = {
		{ { "--debounce", "5s", "x" }, "--debounce needs --key" },
		{ { "--throttle", "1m", "x" }, "--throttle needs --key" },
		{ { "--key", "k", "--debounce", "5s", "--throttle", "1m", "x" },
		    "exclude each other" },
		{ { "--key", "k", "--debounce", "5s", "--replace", "x" },
		    "no --replace" },
		{ { "--key", "k", "--debounce", "5s", "--delay", "1s", "x" },
		    "no --delay or --at" },
		{ { "--key", "k", "--debounce", "500", "x" },
		    "a duration needs a unit" },
		{ { "--key", "k", "--throttle", "0", "x" }, "at least 1ms" },
		{ { "--key", "k", "--throttle", "31d", "x" }, "at most 30d" },
	};
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	struct sluice_put_opts o;
	struct sluice_put_result res;
	struct it_counts n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const *a = bad[i].args;

		assert_int_equal(
		    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err),
		        "put", "-t", "bad", a[0], a[1], a[2], a[3], a[4], a[5],
		        a[6], a[7], NULL),
		    2);
		if (strstr(err, bad[i].says) == NULL)
			fail_msg(
			    "case %zu: \"%s\" not in: %s", i, bad[i].says, err);
	}
	/* the library's own checks */
	sluice_put_opts_init(&o);
	o.tube = "bad";
	o.debounce_ms = 100;
	it_rc(c, sluice_put_ex(c, &o, "x", 1, &res), SLUICE_EINVAL);
	assert_non_null(strstr(sluice_errmsg(c), "debounce needs a key"));
	o.key = "k";
	o.throttle_ms = 100;
	it_rc(c, sluice_put_ex(c, &o, "x", 1, &res), SLUICE_EINVAL);
	assert_non_null(strstr(sluice_errmsg(c), "together"));
	o.throttle_ms = 0;
	o.debounce_ms = 31ull * 24 * 3600 * 1000;
	it_rc(c, sluice_put_ex(c, &o, "x", 1, &res), SLUICE_EINVAL);
	assert_non_null(strstr(sluice_errmsg(c), "out of range"));
	n = it_counts(c, "bad");
	assert_true(n.ready + n.delayed + n.taken + n.buried == 0);
	sluice_close(c);
}

/* The HTTP task API: debounce= and throttle= as query parameters and
 * batch fields; the server's own checks answer 400 with their message. */
static void
test_http(void **state)
{
	static char haddr[64];
	struct t_srv *s = it_srv(*state, "dedupmodes");
	struct sluice_client *c;
	struct sluice_task *t;
	struct it_counts n;
	char *body = NULL;
	int hport = it_free_port();
	static const struct {
		const char *query, *says;
	} bad[] = {
		{ "throttle=1m", "throttle needs a key" },
		{ "debounce=1s", "debounce needs a key" },
		{ "key=k&debounce=1s&throttle=1m", "cannot be used together" },
		{ "key=k&debounce=1s&replace=1",
		    "debounce cannot be used with "
		    "replace" },
		{ "key=k&throttle=1m&delay=1s",
		    "throttle takes no delay or at" },
		{ "key=k&debounce=31d",
		    "debounce window out of range: 1 ms to "
		    "30 days" },
		{ "key=k&throttle=0", "a window of 1ms to 30d, not 0" },
		{ "key=k&throttle=60", "needs a unit" },
	};

	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = haddr;
	it_start(s);
	c = it_client(s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char path[160];

		snprintf(
		    path, sizeof(path), "/v1/tubes/h/tasks?%s", bad[i].query);
		assert_int_equal(
		    it_http(hport, "POST", path, NULL, "x", &body), 400);
		if (strstr(body, bad[i].says) == NULL)
			fail_msg("%s: \"%s\" not in %s", bad[i].query,
			    bad[i].says, body);
		free(body);
	}
	n = it_counts(c, "h");
	assert_true(n.ready + n.delayed == 0);

	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/h/tasks?key=a&throttle=10m", NULL,
	        "one", &body),
	    201);
	assert_non_null(strstr(body, "\"created\":true}"));
	free(body);
	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/h/tasks?key=a&throttle=10m", NULL,
	        "two", &body),
	    200);
	assert_non_null(strstr(body, "\"created\":false,\"throttled\":true}"));
	free(body);
	/* a batch: per item, and its bad window refused alone */
	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/h/tasks?batch=1", NULL,
	        "[{\"payload\":\"b1\",\"key\":\"a\",\"throttle\":\"10m\"},"
	        "{\"payload\":\"d1\",\"key\":\"d\",\"debounce\":\"200ms\"},"
	        "{\"payload\":\"d2\",\"key\":\"d\",\"debounce\":200},"
	        "{\"payload\":\"x\",\"key\":\"e\",\"debounce\":0}]",
	        &body),
	    200);
	assert_non_null(strstr(body, "\"created\":false,\"throttled\":true}"));
	assert_non_null(strstr(body, "not 0"));
	free(body);
	t = it_take(c, "h", 0, 0);
	assert_string_equal(t->payload, "one");
	sluice_task_free(t);
	t = it_take(c, "h", 10000, 0);
	assert_string_equal(t->payload, "d2");
	sluice_task_free(t);
	assert_nothing(c, "h", 400);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_debounce_runs_the_last_once, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_throttle_ignores_within_the_window, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_modes_with_a_group, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_modes_survive_a_crash, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_input, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_http, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_modes_replicate, it_setup, it_node_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
