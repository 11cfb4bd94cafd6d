/* Bad input to the workflow features gets a specific error and changes
 * nothing, through the CLI and HTTP alike (libsluice's are in after,
 * batch_cb, cancelwait and schedules), against one real server:
 * - a cron expression with a bad field: the message names the field and
 *   the value;
 * - an unknown time zone;
 * - a result over 65,535 bytes: refused, the task still taken, and a
 *   good ack then works;
 * - more than 1,000 parents;
 * - a batch callback into a tube name that is not valid;
 * - a cancel of an unknown id.
 * After each, the server holds what it held before: no schedule, no
 * batch, no task put, none removed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"

static void
has(const char *text, const char *needle)
{
	if (text == NULL || strstr(text, needle) == NULL)
		fail_msg("no %s in %s", needle, text ? text : "(nothing)");
}

/* `method path` with `body` is `status`, its body holding `needle`. */
static void
http_refused(int port, const char *method, const char *path, const char *body,
    int status, const char *needle)
{
	char *out = NULL;

	assert_int_equal(it_http(port, method, path, NULL, body, &out), status);
	has(out, needle);
	free(out);
}

/* No schedule, through both faces. */
static void
no_schedules(const struct t_srv *s, int port)
{
	char *body;

	assert_int_equal(it_sluice(s, "schedule", "list", "--json", NULL), 0);
	assert_string_equal(it_out, "{\"schedules\":[]}\n");
	body = it_http_get(port, "/v1/schedules", 200);
	has(body, "\"schedules\":[]");
	free(body);
}

static void
test_cron_and_time_zone(const struct t_srv *s, int port)
{
	assert_int_equal(it_sluice(s, "schedule", "set", "b", "-t", "t",
	                     "--cron", "0 25 * * *", "x", NULL),
	    1);
	has(it_err, "hour field: 25 is out of 0-23");
	assert_int_equal(it_sluice(s, "schedule", "set", "b", "-t", "t",
	                     "--cron", "* * * * mon-xyz", "x", NULL),
	    1);
	has(it_err, "day-of-week field");
	has(it_err, "xyz");
	http_refused(port, "PUT", "/v1/schedules/b?tube=t&cron=0+0+32+*+*", "x",
	    400, "day-of-month field: 32 is out of 1-31");
	http_refused(port, "PUT", "/v1/schedules/b?tube=t&cron=*/0+*+*+*+*",
	    "x", 400, "minute field");
	no_schedules(s, port);
	assert_int_equal(
	    it_sluice(s, "schedule", "set", "b", "-t", "t", "--cron", "@daily",
	        "--tz", "Mars/Olympus", "x", NULL),
	    1);
	has(it_err, "unknown time zone 'Mars/Olympus'");
	http_refused(port, "PUT",
	    "/v1/schedules/b?tube=t&cron=@daily&tz=Europe/Atlantis", "x", 400,
	    "unknown time zone 'Europe/Atlantis'");
	http_refused(port, "PUT",
	    "/v1/schedules/b?tube=t&cron=@daily&tz=../etc", "x", 400,
	    "time zone");
	no_schedules(s, port);
}

static void
test_result_too_large(struct sluice_client *c, const struct t_srv *s, int port)
{
	struct sluice_task *t, *p;
	char id[32], lease[32], path[128], *big = malloc(65537);

	assert_non_null(big);
	memset(big, 'r', 65536); /* one byte over */
	big[65536] = '\0';
	it_put(c, "res", "x");
	t = it_take(c, "res", 5000, 1);
	snprintf(id, sizeof(id), "%" PRIu64, t->id);
	snprintf(lease, sizeof(lease), "%" PRIu64, t->lease);
	assert_int_equal(
	    it_sluice(s, "ack", id, "--lease", lease, "--result", big, NULL),
	    1);
	has(it_err, "result");
	has(it_err, "65535");
	snprintf(path, sizeof(path), "/v1/tasks/%s/ack?lease=%s", id, lease);
	http_refused(port, "POST", path, big, 400, "result_too_large");
	p = it_peek(c, t->id); /* nothing changed: still taken, same lease */
	assert_non_null(p);
	assert_int_equal(p->state, SLUICE_TAKEN);
	assert_int_equal(p->attempts, 1);
	sluice_task_free(p);
	big[65535] = '\0'; /* the most an ack takes */
	assert_int_equal(
	    it_sluice(s, "ack", id, "--lease", lease, "--result", big, NULL),
	    0);
	sluice_task_free(t);
	free(big);
}

static void
test_too_many_parents(struct sluice_client *c, const struct t_srv *s, int port)
{
	size_t cap = 1001 * 24 + 64;
	char *ids = malloc(cap), *path = malloc(cap + 64);
	uint64_t a = it_put(c, "par", "A");
	size_t len = 0;

	assert_non_null(ids);
	assert_non_null(path);
	for (int i = 0; i < 1001; i++) /* 1,001 distinct ids */
		len += (size_t)snprintf(ids + len, cap - len, "%s%" PRIu64,
		    i > 0 ? "," : "", a + (uint64_t)i);
	assert_int_equal(
	    it_sluice(s, "put", "-t", "par", "--after", ids, "x", NULL), 2);
	has(it_err, "at most 1000 parents");
	snprintf(path, cap + 64, "/v1/tubes/par/tasks?after=%s", ids);
	http_refused(port, "POST", path, "x", 400, "1000");
	assert_int_equal(it_counts(c, "par").ready, 1); /* A alone */
	free(ids);
	free(path);
}

static void
test_bad_callback_tube(const struct t_srv *s, int port)
{
	assert_int_equal(it_sluice(s, "batch", "set", "b", "--on-success",
	                     "no spaces", NULL),
	    1);
	has(it_err, "bad callback tube name");
	assert_int_equal(it_sluice(s, "batch", "set", "b", "--on-complete",
	                     "a,b:payload", "--close", NULL),
	    1);
	has(it_err, "bad callback tube name");
	http_refused(port, "PUT", "/v1/batches/b?on_complete=a%2Cb", NULL, 400,
	    "on_complete: bad callback tube name");
	/* nothing made */
	assert_int_equal(it_sluice(s, "batch", "show", "b", NULL), 1);
	has(it_err, "no such batch");
	http_refused(port, "GET", "/v1/batches/b", NULL, 404, "no such batch");
}

static void
test_cancel_unknown(struct sluice_client *c, const struct t_srv *s, int port)
{
	uint64_t a = it_put(c, "can", "x");
	char id[32];

	assert_int_equal(it_sluice(s, "cancel", "987654", NULL), 1);
	has(it_err, "cancel 987654: no such task");
	http_refused(
	    port, "POST", "/v1/tasks/987654/cancel", NULL, 404, "not_found");
	snprintf(id, sizeof(id), "[987654,%" PRIu64 "]", a + 1000);
	http_refused(port, "POST", "/v1/tasks/cancel", id, 200, "not_found");
	assert_int_equal(it_state(c, a), SLUICE_READY);
}

/* The last LSN the node wrote. */
static uint64_t
last_lsn(struct sluice_client *c)
{
	struct sluice_stats *st = NULL;
	uint64_t lsn;

	it_rc(c, sluice_stats(c, NULL, &st), 0);
	lsn = st->lsn;
	sluice_stats_free(st);
	return lsn;
}

static void
test_bad_input_changes_nothing(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	static char addr[32];
	struct sluice_client *c;
	int port = it_free_port();
	uint64_t lsn0, lsn1;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	s->args[0] = "--http";
	s->args[1] = addr;
	s->args[2] = "--http-admin";
	s->args[3] = NULL;
	it_start(s);
	c = it_client(s);
	lsn0 = last_lsn(c);
	test_cron_and_time_zone(s, port);
	test_bad_callback_tube(s, port);
	lsn1 = last_lsn(c);
	assert_true(lsn1 == lsn0); /* nothing was written */
	test_result_too_large(c, s, port);
	test_too_many_parents(c, s, port);
	test_cancel_unknown(c, s, port);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_bad_input_changes_nothing, it_setup, it_teardown),
	};
	return cmocka_run_group_tests_name("wfbadinput", tests, NULL, NULL);
}
