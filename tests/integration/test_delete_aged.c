/* delete by state and age against real sluiced nodes: --older-than counts
 * from a task's last change (updated_at, as the SQL design's `updated`),
 * --created-before from its creation; several states go in one request;
 * taken tasks only with --force, which ends their leases (the holder's
 * ack then says the task is gone). Through the CLI, the library and the
 * HTTP API; after a kill -9 (the record replayed from the log) and on a
 * follower (the record replicated), the same tasks are gone. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_node.h"
#include "it_http.h"

enum { AGE_MS = 700 };

static uint64_t
put_delayed(struct sluice_client *c, const char *tube, uint64_t delay_ms)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.delay_ms = delay_ms;
	return it_put_o(c, &o, "x");
}

static bool
gone(struct sluice_client *c, uint64_t id)
{
	struct sluice_task *t = NULL;
	int rc = sluice_peek(c, id, &t);

	sluice_task_free(t);
	return rc == SLUICE_ENOTFOUND;
}

static void
test_delete_by_last_change_or_creation(void **state)
{
	struct t_srv *s = it_srv(*state, "aged");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_delete_where_opts wo = { 0 };
	char haddr[32], path[160], *body = NULL;
	int hport = it_free_port();
	uint64_t a, b, d, e, f, g, n;

	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = haddr;
	s->args[2] = "--http-admin";
	it_start(s);
	c = it_client(s);

	/* a and b are old; a was retried just now (its last change) */
	a = it_put(c, "q", "a");
	b = it_put(c, "q", "b");
	it_sleep_ms(AGE_MS);
	t = it_take(c, "q", 0, 1);
	assert_true(t->id == a);
	it_rc(c, sluice_release(c, a, t->lease, 0, -1, NULL), 0);
	sluice_task_free(t);
	/* by the last change: b only (by creation, a would go too) */
	assert_int_equal(it_sluice(s, "delete", "-t", "q", "--state", "ready",
	                     "--older-than", "500ms", "--json", NULL),
	    0);
	assert_string_equal(it_out, "{\"deleted\":1}\n");
	assert_true(gone(c, b) && !gone(c, a));
	/* by creation: a, not the new d */
	d = it_put(c, "q", "d");
	assert_int_equal(it_sluice(s, "delete", "-t", "q", "--state", "ready",
	                     "--created-before", "500ms", NULL),
	    0);
	assert_non_null(strstr(it_out, "deleted 1"));
	assert_true(gone(c, a) && !gone(c, d));
	assert_int_equal(
	    it_sluice(s, "delete", "-t", "q", "--state", "ready",
	        "--created-before", "1s", "--older-than", "1s", NULL),
	    2);
	assert_non_null(strstr(it_err, "not both"));

	/* several states in one request: ready, delayed and buried */
	e = put_delayed(c, "q", 3600000);
	f = it_put(c, "q", "f");
	it_rc(c, sluice_bury(c, f, SLUICE_FORCE, NULL), 0);
	g = it_put(c, "keep", "g"); /* another tube */
	assert_int_equal(
	    it_sluice(s, "delete", "-t", "q", "--state", "ready,delayed",
	        "--state", "buried", "--older-than", "0s", "--json", NULL),
	    0);
	assert_string_equal(it_out, "{\"deleted\":3}\n");
	assert_true(gone(c, d) && gone(c, e) && gone(c, f) && !gone(c, g));

	/* taken: only with --force; the holder's ack then fails clearly */
	a = it_put(c, "q", "held");
	t = it_take(c, "q", 0, 1);
	assert_true(t->id == a);
	assert_int_equal(it_sluice(s, "delete", "-t", "q", "--state", "taken",
	                     "--older-than", "0s", NULL),
	    2);
	assert_non_null(strstr(it_err, "add --force"));
	wo.states = SLUICE_STATE_BIT(SLUICE_TAKEN);
	it_rc(c, sluice_delete_where_opts(c, "q", &wo, &n), SLUICE_EINVAL);
	assert_false(gone(c, a));
	assert_int_equal(it_sluice(s, "delete", "-t", "q", "--state", "taken",
	                     "--older-than", "0s", "--force", "--json", NULL),
	    0);
	assert_string_equal(it_out, "{\"deleted\":1}\n");
	assert_true(gone(c, a));
	it_rc(c, sluice_ack(c, a, t->lease, NULL, NULL), SLUICE_ENOTFOUND);
	assert_non_null(strstr(sluice_errmsg(c), "no such task"));
	sluice_task_free(t);
	assert_true(it_log_count(s, "request=delete_where") >= 1);

	/* the library: taken and buried, by the last change */
	b = it_put(c, "q", "b2");
	t = it_take(c, "q", 0, 1);
	d = it_put(c, "q", "d2");
	wo.states |= SLUICE_STATE_BIT(SLUICE_BURIED);
	wo.force = 1;
	it_rc(c, sluice_delete_where_opts(c, "q", &wo, &n), 0);
	assert_true(n == 1 && gone(c, b) && !gone(c, d));
	sluice_task_free(t);

	/* the HTTP API */
	e = it_put(c, "q", "e2");
	snprintf(path, sizeof(path),
	    "/v1/tubes/q/tasks?state=ready,buried&older=0s");
	assert_int_equal(
	    it_http(hport, "DELETE", path, NULL, NULL, &body), 200);
	assert_string_equal(body, "{\"deleted\":2}");
	free(body);
	assert_true(gone(c, d) && gone(c, e));
	a = it_put(c, "q", "held2");
	t = it_take(c, "q", 0, 1);
	snprintf(path, sizeof(path), "/v1/tubes/q/tasks?state=taken&older=0s");
	assert_int_equal(
	    it_http(hport, "DELETE", path, NULL, NULL, &body), 400);
	assert_non_null(strstr(body, "force"));
	free(body);
	snprintf(path, sizeof(path),
	    "/v1/tubes/q/tasks?state=taken&created_before=0s&force=1");
	assert_int_equal(
	    it_http(hport, "DELETE", path, NULL, NULL, &body), 200);
	assert_string_equal(body, "{\"deleted\":1}");
	free(body);
	assert_true(gone(c, a));
	sluice_task_free(t);

	/* the log replays the same deletes */
	it_crash_restart(s, &c);
	assert_true(gone(c, a) && gone(c, b) && gone(c, d) && gone(c, e));
	assert_false(gone(c, g));
	assert_int_equal(it_counts(c, "q").ready, 0);
	sluice_close(c);
}

static void
test_a_follower_deletes_the_same(void **state)
{
	struct it_node l, f;
	struct sluice_delete_where_opts wo = { 0 };
	struct sluice_task *t;
	uint64_t n;

	it_node_init(state, &l, "l");
	it_node_init(state, &f, "f");
	it_node_start(&l);
	it_node_follows(&f, &l);
	it_node_start(&f);
	(void)it_put(l.c, "q", "old");
	(void)it_put(l.c, "q", "held");
	it_sleep_ms(AGE_MS);
	t = it_take(l.c, "q", 0, 1); /* detached: outlives nothing here */
	(void)it_put(l.c, "q", "new");
	wo.states =
	    SLUICE_STATE_BIT(SLUICE_READY) | SLUICE_STATE_BIT(SLUICE_TAKEN);
	wo.older_ms = 500;
	wo.by_created = 1;
	wo.force = 1;
	it_rc(l.c, sluice_delete_where_opts(l.c, "q", &wo, &n), 0);
	assert_true(n == 2);
	sluice_task_free(t);
	it_node_same_state(&l, &f);
	assert_int_equal(it_counts(f.c, "q").ready, 1);
	assert_int_equal(it_counts(f.c, "q").taken, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_delete_by_last_change_or_creation, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_follower_deletes_the_same, it_setup,
		    it_node_teardown),
	};

	return cmocka_run_group_tests_name("delete_aged", tests, NULL, NULL);
}
