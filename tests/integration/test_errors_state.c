/* errors by state against a real sluiced: a task keeps its last error when
 * it is retried and taken again, so errors counts the buried tasks by
 * default (the failures waiting for a person, as a SQL queue counts its
 * rows of status 3) and every other live state on request (--state
 * ready|delayed|taken|all) - through the library, the CLI, the HTTP API
 * and the request the dashboard's errors tab sends. A state errors cannot
 * count (done, or a name it does not know) is refused, naming it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"

enum { OUT = 16 << 10 };

static char out[OUT], err[OUT];

/* Puts a task in "t", takes it and fails it with `text` (delay: its
 * retry, -1: buried at once). Its id. */
static uint64_t
failed(struct sluice_client *c, const char *text, int64_t delay)
{
	uint64_t id = it_put(c, "t", text);
	struct sluice_task *t = it_take(c, "t", 0, 1);

	assert_true(t->id == id);
	if (delay < 0)
		it_rc(c, sluice_fail_fatal(c, id, t->lease, text, NULL), 0);
	else
		it_rc(c, sluice_fail(c, id, t->lease, text, delay, NULL), 0);
	sluice_task_free(t);
	return id;
}

/* The groups of `state` (0: every live state), as "text=count,...". */
static void
groups(struct sluice_client *c, int state, char *buf, size_t cap)
{
	struct sluice_error_count *e;
	size_t n, len = 0;

	it_rc(c, sluice_errors_state(c, "t", state, &e, &n), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s=%" PRIu64,
		    i ? "," : "", e[i].text, e[i].count);
	sluice_errors_free(e);
}

static void
test_errors_count_the_buried_by_default(void **state)
{
	struct t_srv *s = it_srv(*state, "errors");
	struct sluice_client *c;
	struct sluice_error_count *e;
	struct sluice_task *t;
	char haddr[32], g[256], *body = NULL;
	int hport = it_free_port();
	uint64_t again;
	size_t n;

	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = haddr;
	it_start(s);
	c = it_client(s);
	/* retried and taken again: still "timeout" as its last error */
	again = failed(c, "timeout", 0);
	t = it_take(c, "t", 0, 1);
	assert_true(t->id == again);
	sluice_task_free(t);
	(void)failed(c, "oom", 3600000); /* delayed, waiting to retry */
	(void)failed(c, "poison", -1);   /* buried */
	(void)failed(c, "poison", -1);

	/* the library: buried by default, the others on request */
	it_rc(c, sluice_errors(c, "t", &e, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].text, "poison");
	assert_true(e[0].count == 2);
	sluice_errors_free(e);
	groups(c, SLUICE_TAKEN, g, sizeof(g));
	assert_string_equal(g, "timeout=1");
	groups(c, SLUICE_DELAYED, g, sizeof(g));
	assert_string_equal(g, "oom=1");
	groups(c, SLUICE_READY, g, sizeof(g));
	assert_string_equal(g, "");
	groups(c, 0, g, sizeof(g));
	assert_string_equal(g, "poison=2,oom=1,timeout=1");
	it_rc(
	    c, sluice_errors_state(c, "t", SLUICE_DONE, &e, &n), SLUICE_EINVAL);

	/* the CLI */
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "errors", "-t", "t", "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"error\":\"poison\",\"count\":2"));
	assert_null(strstr(out, "timeout"));
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "errors",
	        "-t", "t", "--state", "taken", "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"error\":\"timeout\",\"count\":1"));
	assert_null(strstr(out, "poison"));
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "errors",
	        "-t", "t", "--state", "all", "--json", NULL),
	    0);
	assert_non_null(strstr(out, "poison"));
	assert_non_null(strstr(out, "oom"));
	assert_non_null(strstr(out, "timeout"));
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "errors",
	        "-t", "t", "--state", "done", NULL),
	    2);
	assert_non_null(strstr(err, "\"done\" is not buried"));

	/* the HTTP API */
	body = it_http_get(hport, "/v1/tubes/t/errors", 200);
	assert_non_null(strstr(body, "\"error\":\"poison\",\"count\":2"));
	assert_null(strstr(body, "timeout"));
	free(body);
	body = it_http_get(hport, "/v1/tubes/t/errors?state=delayed", 200);
	assert_non_null(strstr(body, "\"error\":\"oom\",\"count\":1"));
	assert_null(strstr(body, "poison"));
	free(body);
	body = it_http_get(hport, "/v1/tubes/t/errors?state=all", 200);
	assert_non_null(strstr(body, "timeout"));
	free(body);
	body = it_http_get(hport, "/v1/tubes/t/errors?state=done", 400);
	assert_non_null(strstr(body, "state"));
	free(body);
	/* the dashboard's errors tab: the request its page sends */
	body = it_http_get(hport, "/api/errors?tube=t&state=buried", 200);
	assert_string_equal(body,
	    "{\"errors\":[{\"error\":\"poison\","
	    "\"count\":2,\"ids\":[3,4]}]}");
	free(body);
	body = it_http_get(hport, "/api/errors?tube=t", 200);
	assert_null(strstr(body, "timeout"));
	free(body);
	body = it_http_get(hport, "/api/errors?tube=t&state=nope", 400);
	free(body);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_errors_count_the_buried_by_default, it_setup,
		    it_teardown),
	};

	return cmocka_run_group_tests_name("errors_state", tests, NULL, NULL);
}
