/* A duration a person types needs its unit. "--ttr 30" once meant 30 ms
 * where every other queue a newcomer knows reads seconds; now each place a
 * person writes a duration refuses a bare number other than 0, naming the
 * value and both readings ("--ttr 30: a duration needs a unit: say 30s or
 * 30000ms ..."), and does nothing: every duration of the sluice tool
 * (each command's flags, the DUR of pause, the global --timeout) and of
 * the HTTP API's query strings and a batch's string fields, against a
 * real sluiced. `0` stays a duration, and numbers a program sends (a
 * batch item's JSON number) stay milliseconds. sluiced's own flags are in
 * test_flags.c. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"

/* The usage error of a bare number: exit 2, the flag and value named,
 * both readings offered. */
static void
refused(int rc, const char *what, const char *n)
{
	char want[256];

	snprintf(want, sizeof(want),
	    "%s %s: a duration needs a unit: say %ss or %s000ms (%sms if "
	    "milliseconds were meant)",
	    what, n, n, n, n);
	if (rc != 2 || strstr(it_err, want) == NULL)
		fail_msg("exit %d, stderr \"%s\"; wanted exit 2 and \"%s\"", rc,
		    it_err, want);
}

static struct t_srv *
server(void **state, int *hport)
{
	static char haddr[64];
	struct t_srv *s = it_srv(*state, "node");

	*hport = it_free_port();
	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", *hport);
	s->args[0] = "--http";
	s->args[1] = haddr;
	s->args[2] = "--http-admin";
	it_start(s);
	return s;
}

/* Every duration of the sluice tool refuses a bare number and does
 * nothing; 0 is still a duration. */
static void
test_the_tool_refuses_a_bare_number(void **state)
{
	int hport;
	struct t_srv *s = server(state, &hport);
	struct sluice_client *c = it_client(s);
	struct sluice_task *t;
	struct it_counts n;
	char id[32], lease[32];
	uint64_t tid;

	refused(it_sluice(s, "put", "-t", "d", "--ttr", "30", "x", NULL),
	    "--ttr", "30");
	refused(it_sluice(s, "put", "-t", "d", "--delay", "5", "x", NULL),
	    "--delay", "5");
	refused(it_sluice(s, "put", "-t", "d", "--every", "60", "x", NULL),
	    "--every", "60");
	refused(it_sluice(s, "take", "-t", "d", "-w", "5", NULL), "-w", "5");
	refused(
	    it_sluice(s, "take", "-t", "d", "--wait", "5", NULL), "-w", "5");
	refused(
	    it_sluice(s, "--timeout", "5", "stats", NULL), "--timeout", "5");
	refused(it_sluice(s, "pause", "d", "30", NULL), "DUR", "30");
	refused(it_sluice(s, "tube", "set", "d", "--ttr", "30", NULL), "--ttr",
	    "30");
	refused(it_sluice(s, "tube", "set", "d", "--keep-done", "10", NULL),
	    "--keep-done", "10");
	refused(it_sluice(s, "tube", "set", "d", "--backoff", "1,60s", NULL),
	    "--backoff's BASE", "1");
	refused(
	    it_sluice(s, "work", "-t", "d", "--wait", "2", "--", "true", NULL),
	    "--wait", "2");
	refused(it_sluice(s, "delete", "-t", "d", "--state", "ready",
	            "--older-than", "60", NULL),
	    "--older-than", "60");
	refused(it_sluice(s, "switchover", "n2", "--timeout", "10", NULL),
	    "--timeout", "10");
	/* a fraction has one reading in milliseconds only */
	assert_int_equal(it_sluice(s, "take", "-t", "d", "-w", "1.5", NULL), 2);
	assert_non_null(strstr(
	    it_err, "-w 1.5: a duration needs a unit: say 1.5s or 1500ms"));

	/* nothing above reached the server */
	n = it_counts(c, "d");
	assert_true(n.ready + n.delayed + n.taken + n.buried == 0);

	/* a task's own: release, fail and update refuse the same way and
	 * leave it as it was */
	tid = it_put(c, "d", "x");
	t = it_take(c, "d", 0, 1);
	snprintf(id, sizeof(id), "%" PRIu64, t->id);
	snprintf(lease, sizeof(lease), "%" PRIu64, t->lease);
	refused(
	    it_sluice(s, "release", id, "--lease", lease, "--delay", "5", NULL),
	    "--delay", "5");
	refused(
	    it_sluice(s, "fail", id, "--lease", lease, "--delay", "7", NULL),
	    "--delay", "7");
	refused(it_sluice(s, "update", id, "--ttr", "30", NULL), "--ttr", "30");
	assert_int_equal(it_state(c, tid), SLUICE_TAKEN);
	sluice_task_free(t);

	/* with units, and 0 alone, they work */
	assert_int_equal(
	    it_sluice(s, "release", id, "--lease", lease, "--delay", "0", NULL),
	    0);
	assert_int_equal(it_state(c, tid), SLUICE_READY);
	assert_int_equal(it_sluice(s, "update", id, "--ttr", "30s", NULL), 0);
	t = it_peek(c, tid);
	assert_int_equal(t->ttr_ms, 30000);
	sluice_task_free(t);
	assert_int_equal(it_sluice(s, "pause", "d", "0", NULL), 0);
	assert_int_equal(it_sluice(s, "take", "-t", "e", "-w", "0", NULL), 3);
	assert_int_equal(
	    it_sluice(s, "take", "-t", "e", "-w", "20ms", NULL), 3);
	assert_int_equal(it_sluice(s, "put", "-t", "e", "--ttr", "30s",
	                     "--delay", "0", "y", NULL),
	    0);
	t = it_peek(c, strtoull(it_out, NULL, 10));
	assert_non_null(t);
	assert_int_equal(t->ttr_ms, 30000);
	sluice_task_free(t);
	sluice_close(c);
}

/* The HTTP API's query strings are typed by people (curl): a bare
 * duration is a 400 naming the parameter and the value; a batch's string
 * duration the same, its JSON number milliseconds as before. */
static void
test_the_http_api_refuses_a_bare_number(void **state)
{
	int hport;
	struct t_srv *s = server(state, &hport);
	struct sluice_client *c = it_client(s);
	struct it_counts n;
	char *body = NULL;
	struct sluice_task *t;

	assert_int_equal(it_http(hport, "POST", "/v1/tubes/h/take?wait=5", NULL,
	                     NULL, &body),
	    400);
	assert_non_null(strstr(body, "wait: 5 needs a unit: say 5s or 5000ms"));
	free(body);
	assert_int_equal(it_http(hport, "POST", "/v1/tubes/h/tasks?ttr=30",
	                     NULL, "x", &body),
	    400);
	assert_non_null(
	    strstr(body, "ttr: 30 needs a unit: say 30s or 30000ms"));
	free(body);
	assert_int_equal(it_http(hport, "POST", "/v1/tubes/h/pause?for=60",
	                     NULL, NULL, &body),
	    400);
	assert_non_null(strstr(body, "for: 60 needs a unit"));
	free(body);
	assert_int_equal(it_http(hport, "PUT", "/v1/tubes/h?keep_done=10", NULL,
	                     NULL, &body),
	    400);
	assert_non_null(strstr(body, "keep_done: 10 needs a unit"));
	free(body);
	n = it_counts(c, "h");
	assert_true(n.ready + n.delayed == 0);

	/* a batch: "30" (a string) is refused alone, 30000 (a number) is
	 * milliseconds, "30s" is seconds */
	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/h/tasks?batch=1", NULL,
	        "[{\"payload\":\"a\",\"ttr\":\"30\"},"
	        "{\"payload\":\"b\",\"ttr\":30000},"
	        "{\"payload\":\"c\",\"ttr\":\"30s\"}]",
	        &body),
	    200);
	assert_non_null(
	    strstr(body, "ttr: \\\"30\\\" needs a unit: say 30s or 30000ms"));
	free(body);
	n = it_counts(c, "h");
	assert_int_equal(n.ready, 2);
	for (int i = 0; i < 2; i++) {
		t = it_take(c, "h", 0, 1);
		assert_int_equal(t->ttr_ms, 30000);
		sluice_task_free(t);
	}

	/* with a unit, and 0 alone, as before */
	assert_int_equal(it_http(hport, "POST", "/v1/tubes/h/take?wait=0", NULL,
	                     NULL, &body),
	    200);
	free(body);
	assert_int_equal(it_http(hport, "POST", "/v1/tubes/h/take?wait=20ms",
	                     NULL, NULL, &body),
	    200);
	free(body);
	sluice_close(c);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_the_tool_refuses_a_bare_number),
		T(test_the_http_api_refuses_a_bare_number),
	};
#undef T
	return cmocka_run_group_tests_name("duration units", tests, NULL, NULL);
}
