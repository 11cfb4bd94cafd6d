/* Schedules against real servers: a slot fires exactly once over a
 * kill -9 and restart (set through the CLI, read through HTTP after) and
 * over a failover (set through HTTP; a follower promoted just after a
 * slot fires it, once, as the CLI shows); the catch-up modes after downtime;
 * pause and resume; bad input refused with its specific error and nothing
 * changed.
 *
 * Cron has minute resolution, and a test cannot wait minutes: the servers
 * are sluiced-fault, whose wall clock runs SLUICE_CLOCK_SHIFT_MS ahead of
 * the system's. Each start puts the server's clock a second or two before
 * a minute boundary (always later than any time it showed before), so a
 * slot comes within seconds; downtime is a start further ahead. Nothing
 * else about time is faked: the server sleeps until the slot as it would
 * in production. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "it.h"
#include "it_http.h"
#include "it_node.h"

enum {
	LEAD_MS = 1500, /* a start this long before the minute */
	/* A start again of a server whose schedule is set: it has nothing
	 * to do before the slot but be up, and one up a little after the
	 * slot (a loaded machine) fires it all the same, within the grace
	 * (sched.c, "Missed slots"). */
	RESTART_LEAD_MS = 500,
	FIRE_WAIT_MS = 15000,
};

/* The server time the last start asked for; each start is later. */
static int64_t last_target;
/* The shift that start was given: its server reads it_wall_ms() + it. */
static int64_t shift_ms;

/* Sets SLUICE_CLOCK_SHIFT_MS so that a server started now reads
 * `target` (unix ms) at once. */
static void
shift_to(int64_t target)
{
	char v[32];

	assert_true(target > last_target);
	last_target = target;
	shift_ms = target - it_wall_ms();
	snprintf(v, sizeof(v), "%lld", (long long)shift_ms);
	setenv("SLUICE_CLOCK_SHIFT_MS", v, 1);
}

/* Sleeps until the server last started reads `t` (unix ms) or later:
 * what the start itself took is not waited again. */
static void
sleep_until_server(int64_t t)
{
	int64_t left = t - (it_wall_ms() + shift_ms);

	if (left > 0)
		it_sleep_ms(left);
}

/* The first minute boundary at least a minute after every time asked so
 * far (and after now). */
static int64_t
next_minute(void)
{
	int64_t t = it_wall_ms() > last_target ? it_wall_ms() : last_target;

	return (t / 60000 + 2) * 60000;
}

static struct t_srv *
srv(void **state, const char *name)
{
	struct t_srv *s = it_srv(*state, name);

	s->prog = "sluiced-fault";
	return s;
}

static struct sluice_schedule *
show(struct sluice_client *c, const char *name)
{
	struct sluice_schedule *s = NULL;

	it_rc(c, sluice_schedule_show(c, name, &s), 0);
	return s;
}

/* Waits until schedule `name` has fired `n` times; the time it took. */
static void
wait_fired(struct sluice_client *c, const char *name, uint64_t n)
{
	int64_t end = it_mono_ms() + it_scale(FIRE_WAIT_MS, 1, 1) * 2;

	for (;;) {
		struct sluice_schedule *s = show(c, name);
		uint64_t f = s->fired;

		sluice_schedule_free(s);
		if (f >= n)
			return;
		if (it_mono_ms() > end)
			fail_msg("schedule %s fired %llu times, not %llu", name,
			    (unsigned long long)f, (unsigned long long)n);
		it_sleep_ms(50);
	}
}

/* The tasks of `tube` (ids and keys), every state. */
static size_t
tasks(struct sluice_client *c, const char *tube, struct sluice_task **t)
{
	size_t n = 0;

	it_rc(c,
	    sluice_list(c, tube, 0, SLUICE_ORDER_ID, SLUICE_LIST_MAX, 1, t, &n),
	    0);
	return n;
}

static void
key_of(const char *name, int64_t slot, char *out, size_t cap)
{
	int64_t s = slot / 1000;
	time_t tt = (time_t)s;
	struct tm tm;

	gmtime_r(&tt, &tm);
	snprintf(out, cap, "%s@%04d-%02d-%02dT%02d:%02dZ", name,
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
	    tm.tm_min);
}

static void
set(struct sluice_client *c, const char *name, const char *tube,
    const char *cron, const char *mode)
{
	struct sluice_schedule_opts o = { .tz = "Europe/Paris",
		.catch_up = mode };

	it_rc(c, sluice_schedule_set(c, name, tube, cron, "tick", 4, &o, NULL),
	    0);
}

/* A slot fires once; a kill -9 right after it and a restart do not fire
 * it again, nor does one from a snapshot taken after it; the next slot
 * fires once too. */
static void
test_schedule_fires_once_over_a_crash(void **state)
{
	struct t_srv *s = srv(state, "n");
	struct sluice_client *c;
	struct sluice_task *t;
	static char http[32];
	char key[128], *body;
	int port = it_free_port();
	int64_t m = next_minute();
	size_t n;

	snprintf(http, sizeof(http), "127.0.0.1:%d", port);
	s->args[0] = "--http";
	s->args[1] = http;
	s->args[2] = NULL;
	shift_to(m - LEAD_MS);
	it_start(s);
	c = it_client(s);
	assert_int_equal(
	    it_sluice(s, "schedule", "set", "every", "-t", "cron", "--cron",
	        "* * * * *", "--tz", "Europe/Paris", "tick", NULL),
	    0);
	wait_fired(c, "every", 1);
	it_rc(c, sluice_snapshot(c, NULL), 0); /* the schedule in it */
	it_crash_restart(s, &c); /* the same clock: just after the slot */
	it_sleep_ms(1000);
	n = tasks(c, "cron", &t);
	assert_int_equal(n, 1);
	key_of("every", m, key, sizeof(key));
	assert_string_equal(t[0].key, key);
	assert_string_equal(t[0].payload, "tick");
	sluice_task_free(t);
	/* the next minute, after another crash */
	sluice_close(c);
	t_srv_stop(s, 9);
	shift_to(m + 60000 - RESTART_LEAD_MS);
	it_start(s);
	c = it_client(s);
	wait_fired(c, "every", 2);
	it_crash_restart(s, &c);
	it_sleep_ms(500);
	n = tasks(c, "cron", &t);
	assert_int_equal(n, 2);
	key_of("every", m + 60000, key, sizeof(key));
	assert_string_equal(t[1].key, key);
	sluice_task_free(t);
	t = NULL;
	{
		struct sluice_schedule *sc = show(c, "every");

		assert_int_equal(sc->fired, 2);
		assert_true(sc->last_slot == (uint64_t)(m + 60000));
		assert_true(sc->next_at == (uint64_t)(m + 120000));
		sluice_schedule_free(sc);
	}
	/* HTTP and the CLI read the same after the restarts */
	body = it_http_get(port, "/v1/schedules/every", 200);
	assert_non_null(strstr(body, "\"fired\":2"));
	assert_true(it_json_num(body, NULL, "next_at") == (double)(m + 120000));
	free(body);
	assert_int_equal(
	    it_sluice(s, "schedule", "show", "every", "--json", NULL), 0);
	assert_non_null(strstr(it_out, "\"fired\":2,\"skipped\":0"));
	assert_int_equal(it_sluice(s, "schedule", "list", NULL), 0);
	assert_non_null(strstr(it_out, "every"));
	assert_non_null(strstr(it_out, "Europe/Paris"));
	sluice_close(c);
}

/* Five slots missed while the server was down: none fires none, one the
 * last, all each of them. */
static void
test_schedule_catch_up_after_downtime(void **state)
{
	struct t_srv *s = srv(state, "n");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_schedule *sc;
	char key[128];
	int64_t m = next_minute();
	size_t n;

	shift_to(m - 30000); /* set half a minute before slot m */
	it_start(s);
	c = it_client(s);
	set(c, "none", "c-none", "* * * * *", "none");
	set(c, "one", "c-one", "* * * * *", "one");
	set(c, "all", "c-all", "* * * * *", "all");
	sluice_close(c);
	c = NULL;
	t_srv_stop(s, 9);
	/* back 40 s after slot m + 4: five slots, the last past its grace */
	shift_to(m + 4 * 60000 + 40000);
	it_start(s);
	c = it_client(s);
	wait_fired(c, "one", 1);
	wait_fired(c, "all", 5);
	it_sleep_ms(500);
	n = tasks(c, "c-none", &t);
	assert_int_equal(n, 0);
	sc = show(c, "none");
	assert_int_equal(sc->fired, 0);
	assert_true(sc->skipped >= 1);
	assert_true(sc->next_at == (uint64_t)(m + 5 * 60000));
	sluice_schedule_free(sc);
	n = tasks(c, "c-one", &t);
	assert_int_equal(n, 1);
	key_of("one", m + 4 * 60000, key, sizeof(key));
	assert_string_equal(t[0].key, key);
	sluice_task_free(t);
	n = tasks(c, "c-all", &t);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++) {
		key_of("all", m + (int64_t)i * 60000, key, sizeof(key));
		assert_string_equal(t[i].key, key);
	}
	sluice_task_free(t);
	sluice_close(c);
}

/* All after 1,101 missed slots fires the last 1,000, once each; the
 * older ones are skipped. */
static void
test_schedule_catch_up_all_is_bounded(void **state)
{
	struct t_srv *s = srv(state, "n");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_schedule *sc;
	char key[128];
	int64_t m = next_minute();
	size_t n;

	shift_to(m - 30000);
	it_start(s);
	c = it_client(s);
	set(c, "many", "c-many", "* * * * *", "all");
	sluice_close(c);
	c = NULL;
	t_srv_stop(s, 9);
	shift_to(m + 1100 * 60000 + 40000); /* slots m .. m + 1100 min */
	it_start(s);
	c = it_client(s);
	wait_fired(c, "many", 1000);
	it_sleep_ms(500);
	sc = show(c, "many");
	assert_int_equal(sc->fired, 1000);
	assert_int_equal(sc->skipped, 1); /* one record for the 101 older */
	assert_true(sc->last_slot == (uint64_t)(m + 1100 * 60000));
	sluice_schedule_free(sc);
	n = tasks(c, "c-many", &t);
	assert_int_equal(n, 1000);
	key_of("many", m + 101 * 60000, key, sizeof(key));
	assert_string_equal(t[0].key, key);
	key_of("many", m + 1100 * 60000, key, sizeof(key));
	assert_string_equal(t[999].key, key);
	sluice_task_free(t);
	sluice_close(c);
}

/* Paused, its slot does not fire; resumed, the next one does. */
static void
test_schedule_pause_and_resume(void **state)
{
	struct t_srv *s = srv(state, "n");
	struct sluice_client *c;
	struct sluice_task *t;
	char key[128];
	int64_t m = next_minute();
	size_t n;

	shift_to(m - LEAD_MS);
	it_start(s);
	c = it_client(s);
	set(c, "p", "cron", "* * * * *", "all");
	it_rc(c, sluice_schedule_pause(c, "p"), 0);
	sleep_until_server(m + 1500); /* slot m passes, paused */
	n = tasks(c, "cron", &t);
	assert_int_equal(n, 0);
	it_rc(c, sluice_schedule_resume(c, "p"), 0);
	it_sleep_ms(500);
	n = tasks(c, "cron", &t); /* resumed: slot m was the pause's */
	assert_int_equal(n, 0);
	sluice_close(c);
	c = NULL;
	t_srv_stop(s, 9);
	shift_to(m + 60000 - RESTART_LEAD_MS);
	it_start(s);
	c = it_client(s);
	wait_fired(c, "p", 1);
	n = tasks(c, "cron", &t);
	assert_int_equal(n, 1);
	key_of("p", m + 60000, key, sizeof(key));
	assert_string_equal(t[0].key, key);
	sluice_task_free(t);
	sluice_close(c);
}

/* Bad input: the specific error, its text, and nothing changed; through
 * libsluice and the CLI. */
static void
test_schedule_bad_input(void **state)
{
	struct t_srv *s = srv(state, "n");
	struct sluice_client *c;
	struct sluice_schedule *v;
	struct sluice_schedule_opts o = { .tz = "Mars/Olympus" };
	size_t n;

	shift_to(
	    it_wall_ms() > last_target ? it_wall_ms() + 1 : last_target + 1);
	it_start(s);
	c = it_client(s);
	it_rc(c,
	    sluice_schedule_set(c, "b", "t", "0 25 * * *", "x", 1, NULL, NULL),
	    SLUICE_ESCHED);
	assert_non_null(
	    strstr(sluice_errmsg(c), "hour field: 25 is out of 0-23"));
	it_rc(c,
	    sluice_schedule_set(c, "b", "t", "0 2 * * *", "x", 1, &o, NULL),
	    SLUICE_ESCHED);
	assert_non_null(strstr(sluice_errmsg(c), "unknown time zone"));
	it_rc(c,
	    sluice_schedule_set(c, "b c", "t", "@daily", "x", 1, NULL, NULL),
	    SLUICE_ESCHED);
	it_rc(c,
	    sluice_schedule_set(
	        c, "b", "bad tube", "@daily", "x", 1, NULL, NULL),
	    SLUICE_ETUBE);
	it_rc(c, sluice_schedule_show(c, "b", &v), SLUICE_ENOTFOUND);
	it_rc(c, sluice_schedule_pause(c, "b"), SLUICE_ENOTFOUND);
	it_rc(c, sluice_schedule_delete(c, "b"), SLUICE_ENOTFOUND);
	it_rc(c, sluice_schedule_list(c, &v, &n), 0);
	assert_int_equal(n, 0);
	/* the CLI says the same, and exits 1 */
	assert_int_equal(it_sluice(s, "schedule", "set", "b", "-t", "t",
	                     "--cron", "* * * jan-foo *", "x", NULL),
	    1);
	assert_non_null(strstr(
	    it_err, "month field: 'foo' is not a month (1-12 or jan-dec)"));
	assert_int_equal(
	    it_sluice(s, "schedule", "set", "b", "-t", "t", "--cron", "@daily",
	        "--tz", "Europe/Nowhere", "x", NULL),
	    1);
	assert_non_null(strstr(it_err, "unknown time zone 'Europe/Nowhere'"));
	assert_int_equal(
	    it_sluice(s, "schedule", "set", "b", "-t", "t", "--cron", "@daily",
	        "--catch-up", "some", "x", NULL),
	    2);
	assert_int_equal(it_sluice(s, "schedule", "list", "--json", NULL), 0);
	assert_string_equal(it_out, "{\"schedules\":[]}\n");
	/* and a good one, deleted */
	assert_int_equal(it_sluice(s, "schedule", "set", "g", "-t", "t",
	                     "--cron", "30 2 * * *", "--tz", "Europe/Paris",
	                     "--catch-up", "all", "payload", NULL),
	    0);
	assert_non_null(strstr(it_out, "catch-up: all"));
	assert_int_equal(it_sluice(s, "schedule", "delete", "g", NULL), 0);
	it_rc(c, sluice_schedule_list(c, &v, &n), 0);
	assert_int_equal(n, 0);
	sluice_close(c);
}

/* The leader dies just before a slot; its follower, promoted just after
 * it, fires the slot once (it had never fired on the old leader); the
 * slot stays fired over the new leader's restart. */
static void
test_schedule_failover_fires_once(void **state)
{
	struct it_node l, f;
	struct sluice_task *t;
	struct sluice_schedule *sc;
	char key[128];
	int64_t m = next_minute();
	size_t n;

	static char http[32];
	char *body = NULL;
	int port = it_free_port();

	it_node_init(state, &l, "l");
	it_node_init(state, &f, "f");
	l.s->prog = f.s->prog = "sluiced-fault";
	snprintf(http, sizeof(http), "127.0.0.1:%d", port);
	it_node_arg(&l, "--http", http);
	it_node_arg(&l, "--http-admin", "--http-admin");
	it_node_follows(&f, &l);
	shift_to(m - 4000);
	it_node_start(&l);
	it_node_start(&f);
	assert_int_equal(it_http(port, "PUT",
	                     "/v1/schedules/fo?tube=cron&cron=*+*+*+*+*&tz="
	                     "Europe/Paris&catch_up=none",
	                     NULL, "tick", &body),
	    200);
	free(body);
	it_node_caught_up(&l, &f);
	it_node_kill(&l);
	/* the follower fires nothing while it follows */
	n = tasks(f.c, "cron", &t);
	assert_int_equal(n, 0);
	sleep_until_server(m + 500); /* slot m passes while no one leads */
	it_rc(f.c, sluice_promote(f.c, NULL), 0);
	wait_fired(f.c, "fo", 1);
	it_sleep_ms(1000);
	n = tasks(f.c, "cron", &t);
	assert_int_equal(n, 1);
	key_of("fo", m, key, sizeof(key));
	assert_string_equal(t[0].key, key);
	sluice_task_free(t);
	assert_int_equal(
	    it_sluice(f.s, "schedule", "show", "fo", "--json", NULL), 0);
	assert_non_null(strstr(it_out, "\"fired\":1,\"skipped\":0"));
	/* restarted alone, it leads again and fires nothing twice */
	it_node_kill(&f);
	for (size_t a = 0; f.s->args[a] != NULL; a += 2)
		if (strcmp(f.s->args[a], "--follow") == 0)
			f.s->args[a] = NULL; /* the last pair */
	shift_to(m + 30000);
	it_node_start(&f);
	it_sleep_ms(1000);
	n = tasks(f.c, "cron", &t);
	assert_int_equal(n, 1);
	sluice_task_free(t);
	sc = show(f.c, "fo");
	assert_int_equal(sc->fired, 1);
	sluice_schedule_free(sc);
}

/* The HTTP API: a schedule set by PUT fires its slot; GET lists it with
 * its next firing; pause, resume and DELETE; a bad cron is a 400 with
 * the field named; /metrics counts the firing; the dashboard's page
 * holds the schedules' table. */
static void
test_schedule_http(void **state)
{
	struct t_srv *s = srv(state, "n");
	char http[32], *body = NULL;
	int port = it_free_port();
	int64_t m = next_minute();

	snprintf(http, sizeof(http), "127.0.0.1:%d", port);
	s->args[0] = "--http";
	s->args[1] = http;
	s->args[2] = "--http-admin";
	shift_to(m - LEAD_MS);
	it_start(s);
	assert_int_equal(it_http(port, "PUT",
	                     "/v1/schedules/h?tube=web&cron=*+*+*+*+*&tz="
	                     "America/New_York&catch_up=all",
	                     NULL, "from-http", &body),
	    200);
	assert_non_null(strstr(body, "\"name\":\"h\""));
	assert_non_null(strstr(body, "\"tz\":\"America/New_York\""));
	free(body);
	assert_int_equal(
	    it_http(port, "PUT", "/v1/schedules/bad?tube=web&cron=61+*+*+*+*",
	        NULL, "x", &body),
	    400);
	assert_non_null(strstr(body, "minute field: 61 is out of 0-59"));
	free(body);
	{
		struct sluice_client *c = it_client(s);

		wait_fired(c, "h", 1);
		sluice_close(c);
	}
	body = it_http_get(port, "/v1/schedules", 200);
	assert_non_null(strstr(body, "\"schedules\":[{\"name\":\"h\""));
	assert_true(it_json_num(body, NULL, "fired") == 1);
	assert_true(it_json_num(body, NULL, "next_at") == (double)(m + 60000));
	free(body);
	body = it_http_get(port, "/v1/schedules/h", 200);
	assert_non_null(strstr(body, "\"payload\":\"from-http\""));
	free(body);
	assert_int_equal(
	    it_http(port, "POST", "/v1/schedules/h/pause", NULL, "", &body),
	    200);
	assert_non_null(strstr(body, "\"paused\":true"));
	free(body);
	assert_int_equal(
	    it_http(port, "POST", "/v1/schedules/h/resume", NULL, "", &body),
	    200);
	assert_non_null(strstr(body, "\"paused\":false"));
	free(body);
	body = it_http_get(port, "/metrics", 200);
	assert_true(it_metric(body, "sluice_schedule_firings_total") == 1);
	assert_true(it_metric(body, "sluice_schedules") == 1);
	free(body);
	body = it_http_get(port, "/", 200);
	assert_non_null(strstr(body, "id=\"schedules\""));
	free(body);
	assert_int_equal(
	    it_http(port, "DELETE", "/v1/schedules/h", NULL, NULL, &body), 200);
	free(body);
	assert_int_equal(
	    it_http(port, "GET", "/v1/schedules/h", NULL, NULL, &body), 404);
	free(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_schedule_fires_once_over_a_crash, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_schedule_catch_up_after_downtime, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_schedule_catch_up_all_is_bounded, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_schedule_pause_and_resume, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_schedule_bad_input, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_schedule_http, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_schedule_failover_fires_once, it_setup,
		    it_node_teardown),
	};
	return cmocka_run_group_tests_name("schedules", tests, NULL, NULL);
}
