/* What a person sees of batches through HTTP, against a real server
 * (docs/http-api.md, "Batches"): GET /v1/batches lists the batches the
 * server holds with their counts by state, the open ones first (the
 * latest started first), then the ended ones (the latest ended first),
 * at most ?limit= of them (1..1000, 100 by default; out of range: 400
 * naming the parameter) and how many there are; a task's view (GET
 * /v1/tasks/ID) names the batch it is in while it is live in it; the
 * list is the same after a kill -9 and a restart (every count rebuilt
 * from the log). Under --auth the list is node-wide: an admin token
 * whose tubes are some only (a tenant's) gets 403 for it, as for other
 * node-wide reads, and still reads a batch by its name. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_hostile.h"
#include "it_http.h"

static void
body_has(const char *body, const char *want)
{
	if (body == NULL || strstr(body, want) == NULL)
		fail_msg(
		    "the answer lacks %s: %s", want, body ? body : "(none)");
}

static void
body_lacks(const char *body, const char *what)
{
	if (body != NULL && strstr(body, what) != NULL)
		fail_msg("the answer has %s: %s", what, body);
}

/* The position of `"name":"NAME"` in body; asserted to be there. */
static size_t
at(const char *body, const char *name)
{
	char want[128];
	const char *p;

	snprintf(want, sizeof(want), "\"name\":\"%s\"", name);
	if ((p = strstr(body, want)) == NULL)
		fail_msg("no batch %s in %s", name, body);
	return (size_t)(p - body);
}

/* The object of batch `name` in a listing, into out. */
static void
batch_of(const char *body, const char *name, char *out, size_t cap)
{
	const char *p = body + at(body, name);
	const char *e = strstr(p, "\"on_complete\":");

	assert_non_null(e);
	e = strchr(e, '}');
	assert_non_null(e);
	snprintf(out, cap, "%.*s", (int)(e - p), p);
}

static uint64_t
put_in(struct sluice_client *c, const char *batch, const char *payload)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = "w";
	o.batch = batch;
	return it_put_o(c, &o, payload);
}

/* The listing's order and counts, its limit, a task's link to its batch,
 * and the same listing after a kill -9 and a restart. */
static void
test_the_list_of_batches(void **state)
{
	static char haddr[32];
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_batch_callback ok = { "ok", NULL, 0 };
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_batch b;
	char path[128], one[2048], *body = NULL;
	uint64_t a1, a2, a3, b1;
	int port = it_free_port();

	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", port);
	s->args[0] = "--http";
	s->args[1] = haddr;
	s->args[2] = "--http-admin";
	it_start(s);
	c = it_client(s);

	/* none yet: an empty list */
	body = it_http_get(port, "/v1/batches", 200);
	body_has(body, "{\"batches\":[],\"total\":0}");
	free(body);

	/* "old": two tasks, both acked, closed: it ends and fires. */
	it_rc(c, sluice_batch_set(c, "old", &ok, NULL, 0, NULL), 0);
	put_in(c, "old", "o1");
	put_in(c, "old", "o2");
	it_rc(c, sluice_batch_set(c, "old", NULL, NULL, 1, NULL), 0);
	for (int i = 0; i < 2; i++) {
		t = it_take(c, "w", 1000, 1);
		it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
		sluice_task_free(t);
	}
	for (int i = 0; i < 200; i++) {
		it_rc(c, sluice_batch_show(c, "old", &b), 0);
		if (b.ended && b.success_id != 0)
			break;
		it_sleep_ms(50);
	}
	assert_true(b.ended && b.success_id != 0);

	/* "etl": three tasks (one taken, one waiting for it, one ready);
	 * "late", started after it: one ready task. */
	a1 = put_in(c, "etl", "e1");
	it_sleep_ms(5); /* a later start */
	{
		struct sluice_put_opts o;

		sluice_put_opts_init(&o);
		o.tube = "w";
		o.batch = "etl";
		o.after = &a1;
		o.nafter = 1;
		a2 = it_put_o(c, &o, "e2");
	}
	a3 = put_in(c, "etl", "e3");
	it_sleep_ms(5);
	b1 = put_in(c, "late", "l1");
	t = it_take(c, "w", 1000, 1);
	assert_true(t->id == a1);

	body = it_http_get(port, "/v1/batches", 200);
	body_has(body, "\"total\":3}");
	/* open ones first, the latest started first; then the ended */
	assert_true(at(body, "late") < at(body, "etl"));
	assert_true(at(body, "etl") < at(body, "old"));
	batch_of(body, "etl", one, sizeof(one));
	body_has(one,
	    "\"total\":3,\"waiting\":1,\"ready\":1,\"delayed\":0,"
	    "\"taken\":1,\"buried\":0,\"acked\":0,\"failed\":0");
	body_has(one, "\"closed\":false,\"ended\":false");
	body_has(one, "\"ended_at\":0,");
	batch_of(body, "old", one, sizeof(one));
	body_has(one,
	    "\"total\":2,\"waiting\":0,\"ready\":0,\"delayed\":0,"
	    "\"taken\":0,\"buried\":0,\"acked\":2,\"failed\":0");
	body_has(one, "\"closed\":true,\"ended\":true");
	body_has(one, "\"on_success\":{\"tube\":\"ok\",\"task\":");
	body_lacks(one, "\"ended_at\":0,");
	free(body);

	/* the limit: the first one only, the total still 3 */
	body = it_http_get(port, "/v1/batches?limit=1", 200);
	body_has(body, "\"name\":\"late\"");
	body_lacks(body, "\"name\":\"etl\"");
	body_has(body, "\"total\":3}");
	free(body);
	body = it_http_get(port, "/v1/batches?limit=0", 400);
	body_has(body, "\"message\":\"limit: 1..1000\"");
	free(body);
	body = it_http_get(port, "/v1/batches?limit=1001", 400);
	body_has(body, "\"message\":\"limit: 1..1000\"");
	free(body);
	assert_int_equal(
	    it_http(port, "POST", "/v1/batches", NULL, NULL, &body), 405);
	free(body);

	/* libsluice and the CLI list the same */
	{
		struct sluice_batch *v = NULL;
		uint64_t total = 0;
		size_t n = 0;

		it_rc(c, sluice_batch_list(c, 2, &v, &n, &total), 0);
		assert_int_equal(n, 2);
		assert_int_equal(total, 3);
		assert_string_equal(v[0].name, "late");
		assert_string_equal(v[1].name, "etl");
		assert_int_equal(v[1].waiting, 1);
		assert_int_equal(v[1].taken, 1);
		assert_int_equal(v[1].ready, 1);
		free(v);
		it_rc(
		    c, sluice_batch_list(c, 0, &v, &n, &total), SLUICE_EINVAL);
		assert_null(v);
		assert_int_equal(
		    it_sluice(s, "batch", "list", "--json", NULL), 0);
		body_has(it_out, "\"total\":3}");
		assert_true(at(it_out, "late") < at(it_out, "etl"));
		assert_true(at(it_out, "etl") < at(it_out, "old"));
		assert_int_equal(
		    it_sluice(s, "batch", "list", "--limit", "1", NULL), 0);
		body_has(it_out, "late ");
		body_has(it_out, "(1 of 3 batches: --limit for more)");
		body_lacks(it_out, "etl");
		assert_int_not_equal(
		    it_sluice(s, "batch", "list", "--limit", "0", NULL), 0);
		assert_int_not_equal(
		    it_sluice(s, "batch", "list", "x", NULL), 0);
	}

	/* a task's view names its batch; one in none has no field */
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64, a2);
	body = it_http_get(port, path, 200);
	body_has(body, "\"batch\":\"etl\"");
	body_has(body, "\"state\":\"waiting\"");
	free(body);
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64, b1);
	body = it_http_get(port, path, 200);
	body_has(body, "\"batch\":\"late\"");
	free(body);
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64, it_put(c, "w", "x"));
	body = it_http_get(port, path, 200);
	body_lacks(body, "\"batch\"");
	free(body);
	/* libsluice's peek, which does not ask, reads the same task */
	assert_int_equal(it_state(c, a3), SLUICE_READY);

	/* kill -9 and restart: the same batches and counts (the taken task
	 * is taken still, its lease held by ttr) */
	sluice_task_free(t);
	it_crash_restart(s, &c);
	body = it_http_get(port, "/v1/batches", 200);
	body_has(body, "\"total\":3}");
	assert_true(at(body, "late") < at(body, "etl"));
	assert_true(at(body, "etl") < at(body, "old"));
	batch_of(body, "etl", one, sizeof(one));
	body_has(one,
	    "\"total\":3,\"waiting\":1,\"ready\":1,\"delayed\":0,"
	    "\"taken\":1,");
	batch_of(body, "old", one, sizeof(one));
	body_has(one, "\"acked\":2,");
	body_has(one, "\"ended\":true");
	free(body);
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64, a2);
	body = it_http_get(port, path, 200);
	body_has(body, "\"batch\":\"etl\"");
	free(body);
	sluice_close(c);
}

/* --auth: the list needs a token of every tube; a batch by its name
 * any admin's. */
static void
test_the_list_is_node_wide_under_auth(void **state)
{
	static char haddr[32], file[600];
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_put_opts o;
	char *body = NULL;
	FILE *f;
	int port = it_free_port();
	const char *all = "Authorization: Bearer all-secret\r\n";
	const char *tenant = "Authorization: Bearer tenant-secret\r\n";

	snprintf(file, sizeof(file), "%s", t_path(*state, "tokens"));
	assert_non_null(f = fopen(file, "w"));
	fprintf(f, "ops admin * ");
	it_hostile_hash(f, "all-secret");
	fprintf(f, "\ntenant admin emails* ");
	it_hostile_hash(f, "tenant-secret");
	fprintf(f, "\n");
	assert_int_equal(fclose(f), 0);
	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", port);
	s->args[0] = "--http";
	s->args[1] = haddr;
	s->args[2] = "--auth";
	s->args[3] = file;
	it_start(s);
	c = it_client(s);
	assert_int_equal(sluice_set_token(c, "all-secret"), 0);
	sluice_put_opts_init(&o);
	o.tube = "emails";
	o.batch = "mail-1";
	it_put_o(c, &o, "m");

	assert_int_equal(
	    it_http(port, "GET", "/v1/batches", all, NULL, &body), 200);
	body_has(body, "\"name\":\"mail-1\"");
	free(body);
	assert_int_equal(
	    it_http(port, "GET", "/v1/batches", tenant, NULL, &body), 403);
	body_lacks(body, "mail-1");
	free(body);
	assert_int_equal(
	    it_http(port, "GET", "/v1/batches/mail-1", tenant, NULL, &body),
	    200);
	body_has(body, "\"total\":1,");
	free(body);
	assert_int_equal(
	    it_http(port, "GET", "/v1/batches", NULL, NULL, &body), 401);
	free(body);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_the_list_of_batches, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_list_is_node_wide_under_auth, it_setup,
		    it_teardown),
	};

	return cmocka_run_group_tests_name("batchviews", tests, NULL, NULL);
}
