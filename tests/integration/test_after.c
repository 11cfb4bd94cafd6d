/* Dependencies between tasks against real servers: a diamond (A -> B,
 * A -> C, B + C -> D) runs D once, after both, with both results,
 * through libsluice, the CLI and HTTP, across a kill -9 and restart (from the
 * log, and from a snapshot taken half way), and across a failover to a
 * follower; a parent failing for good applies each rule (fail: buried
 * with "task N failed: ERROR", ignore: runs, cancel: deleted with its
 * own children, each cancelled), and a wait parked on a child returns
 * as its parent's failure ends it; bad input gets its own error and puts
 * nothing; stats and /metrics count the waiting tasks; a batch put names
 * parents as a single put does. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"
#include "it_node.h"
#include "sluice_result.h"

/* A task of `tube` after parents[0..n), with `rule`. */
static uint64_t
put_after(struct sluice_client *c, const char *tube, const char *payload,
    const uint64_t *parents, size_t n, int rule)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.after = parents;
	o.nafter = n;
	o.on_parent_failure = rule;
	return it_put_o(c, &o, payload);
}

struct diamond {
	uint64_t a, b, c, d;
};

static void
put_diamond(struct sluice_client *c, const char *tube, struct diamond *g)
{
	uint64_t bc[2];

	g->a = it_put(c, tube, "A");
	g->b = put_after(c, tube, "B", &g->a, 1, SLUICE_ON_PARENT_FAIL);
	g->c = put_after(c, tube, "C", &g->a, 1, SLUICE_ON_PARENT_FAIL);
	bc[0] = g->b;
	bc[1] = g->c;
	g->d = put_after(c, tube, "D", bc, 2, SLUICE_ON_PARENT_FAIL);
}

/* Takes the next task of `tube` (it must be `want`) and acks it with
 * `result`. */
static void
run(struct sluice_client *c, const char *tube, uint64_t want,
    const char *result)
{
	struct sluice_task *t = it_take(c, tube, 5000, 1);
	struct sluice_ack_opts ao = { .result = result };

	assert_int_equal(t->id, want);
	it_rc(c, sluice_ack_opts(c, t->id, t->lease, &ao, NULL), 0);
	sluice_task_free(t);
}

/* Nothing to take from `tube` now. */
static void
none(struct sluice_client *c, const char *tube)
{
	struct sluice_take_opts o = { 0 };
	const char *tubes[1] = { tube };
	struct sluice_task *t = NULL;
	size_t n = 0;

	o.tubes = tubes;
	o.ntubes = 1;
	it_rc(c, sluice_take(c, &o, &t, &n), SLUICE_ETIMEDOUT);
	assert_int_equal(n, 0);
}

/* The parent `id` of task t, with its outcome and result. */
static void
assert_parent(const struct sluice_task *t, uint64_t id, const char *result)
{
	for (size_t i = 0; i < t->nparents; i++) {
		if (t->parents[i].id != id)
			continue;
		assert_int_equal(t->parents[i].outcome, 1);
		assert_non_null(t->parents[i].result);
		assert_string_equal(t->parents[i].result, result);
		return;
	}
	fail_msg("task %" PRIu64 " has no parent %" PRIu64, t->id, id);
}

/* D's take: after B and C, with both results; then nothing is left. */
static void
finish_d(struct sluice_client *c, const char *tube, const struct diamond *g)
{
	struct sluice_task *t = it_take(c, tube, 5000, 1);

	assert_int_equal(t->id, g->d);
	assert_int_equal(t->nparents, 2);
	assert_int_equal(t->parents_pending, 0);
	assert_parent(t, g->b, "rb");
	assert_parent(t, g->c, "rc");
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	none(c, tube);
	assert_int_equal(it_state(c, g->d), 0);
}

/* libsluice: only A runs first; B and C after A, with its result; D
 * waits for both; stats and /metrics count the waiting tasks. */
static void
test_diamond_libsluice(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct diamond g;
	static char port[32];
	char *body;
	int hport = it_free_port();

	snprintf(port, sizeof(port), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = port;
	s->args[2] = NULL;
	it_start(s);
	c = it_client(s);
	put_diamond(c, "dia", &g);
	assert_int_equal(it_state(c, g.b), SLUICE_WAITING);
	assert_int_equal(it_state(c, g.d), SLUICE_WAITING);
	t = it_peek(c, g.a);
	assert_int_equal(t->nchildren, 2);
	sluice_task_free(t);
	t = it_peek(c, g.d);
	assert_int_equal(t->nparents, 2);
	assert_int_equal(t->parents_pending, 2);
	sluice_task_free(t);
	body = it_http_get(hport, "/metrics", 200);
	assert_true(
	    it_metric(body,
	        "sluice_tube_tasks{tube=\"dia\",state=\"waiting\"}") == 3);
	assert_true(
	    it_metric(body, "sluice_tasks_by_state{state=\"waiting\"}") == 3);
	free(body);
	t = it_take(c, "dia", 5000, 1);
	assert_int_equal(t->id, g.a);
	none(c, "dia"); /* B and C wait for A's ack */
	it_rc(c,
	    sluice_ack_opts(c, t->id, t->lease,
	        &(struct sluice_ack_opts) { .result = "ra" }, NULL),
	    0);
	sluice_task_free(t);
	t = it_take(c, "dia", 5000, 1);
	assert_true(t->id == g.b || t->id == g.c);
	assert_parent(t, g.a, "ra");
	it_rc(c,
	    sluice_ack_opts(c, t->id, t->lease,
	        &(struct sluice_ack_opts) {
	            .result = t->id == g.b ? "rb" : "rc" },
	        NULL),
	    0);
	assert_int_equal(it_state(c, g.d), SLUICE_WAITING);
	run(c, "dia", t->id == g.b ? g.c : g.b, t->id == g.b ? "rc" : "rb");
	sluice_task_free(t);
	finish_d(c, "dia", &g);
	sluice_close(c);
}

/* The CLI: put --after, take --json with the parents' results, peek
 * with parents and children. */
static void
test_diamond_cli(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	char out[8192], ids[4][32], bc[80];
	struct sluice_client *c;
	struct diamond g;

	it_start(s);
	c = it_client(s);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "put",
	                     "-t", "cli", "A", NULL),
	    0);
	g.a = strtoull(out, NULL, 10);
	snprintf(ids[0], sizeof(ids[0]), "%" PRIu64, g.a);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "put",
	                     "-t", "cli", "--after", ids[0], "B", NULL),
	    0);
	g.b = strtoull(out, NULL, 10);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "put",
	                     "-t", "cli", "--after", ids[0], "C", NULL),
	    0);
	g.c = strtoull(out, NULL, 10);
	snprintf(bc, sizeof(bc), "%" PRIu64 ",%" PRIu64, g.b, g.c);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "put",
	                     "-t", "cli", "--after", bc, "D", NULL),
	    0);
	g.d = strtoull(out, NULL, 10);
	snprintf(ids[3], sizeof(ids[3]), "%" PRIu64, g.d);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "peek",
	                     ids[3], NULL),
	    0);
	assert_non_null(strstr(out, "state         waiting"));
	assert_non_null(strstr(out, "parents       2, 2 not acked yet"));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "peek",
	                     ids[0], "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"children_count\":2"));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "list",
	                     "-t", "cli", NULL),
	    0);
	assert_non_null(strstr(out, "waiting"));
	/* stats: a WAITING column once a task waits */
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "stats", NULL), 0);
	assert_non_null(strstr(out, "BURIED   WAITING  OLDEST"));
	{
		const char *row = strstr(out, "\ncli ");
		unsigned long long n[5];

		assert_non_null(row);
		assert_int_equal(sscanf(row + 5, "%llu %llu %llu %llu %llu",
		                     &n[0], &n[1], &n[2], &n[3], &n[4]),
		    5);
		assert_true(n[0] == 1 && n[4] == 3); /* A ready; B, C, D wait */
	}
	run(c, "cli", g.a, "ra");
	run(c, "cli", g.b, "rb");
	run(c, "cli", g.c, "rc");
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "take",
	                     "-t", "cli", "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"payload\":\"D\""));
	snprintf(bc, sizeof(bc),
	    "{\"id\":%" PRIu64 ",\"outcome\":\"done\","
	    "\"result\":\"rb\"}",
	    g.b);
	assert_non_null(strstr(out, bc));
	snprintf(bc, sizeof(bc),
	    "{\"id\":%" PRIu64 ",\"outcome\":\"done\","
	    "\"result\":\"rc\"}",
	    g.c);
	assert_non_null(strstr(out, bc));
	none(c, "cli");
	sluice_close(c);
}

/* kill -9 after A's ack (replayed from the log); B (or C) taken, a
 * snapshot, its ack (an ACK_R after the snapshot), kill -9 again (the
 * snapshot's DEP entries, then the log): D still waits for the other,
 * then runs once with both results. */
static void
test_diamond_survives_kill(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct diamond g;
	uint64_t lsn, first;

	it_start(s);
	c = it_client(s);
	put_diamond(c, "kill", &g);
	run(c, "kill", g.a, "ra");
	it_crash_restart(s, &c);
	assert_int_equal(it_state(c, g.d), SLUICE_WAITING);
	t = it_take(c, "kill", 5000, 1);
	assert_true(t->id == g.b || t->id == g.c);
	assert_parent(t, g.a, "ra");
	first = t->id;
	it_rc(c, sluice_snapshot(c, &lsn), 0);
	it_rc(c,
	    sluice_ack_opts(c, t->id, t->lease,
	        &(struct sluice_ack_opts) {
	            .result = first == g.b ? "rb" : "rc" },
	        NULL),
	    0);
	sluice_task_free(t);
	it_crash_restart(s, &c);
	assert_int_equal(it_state(c, g.d), SLUICE_WAITING);
	t = it_peek(c, g.d);
	assert_int_equal(t->parents_pending, 1);
	sluice_task_free(t);
	/* The offline state read from the same files counts D waiting. */
	{
		static char out[64 << 10];

		assert_int_equal(it_log_tool(out, sizeof(out), "state", s->data,
		                     "--json", NULL),
		    0);
		assert_non_null(strstr(out,
		    "\"kill\":{\"ready\":1,\"delayed\":0,\"taken\":0,"
		    "\"buried\":0,\"waiting\":1,"));
	}
	run(c, "kill", first == g.b ? g.c : g.b, first == g.b ? "rc" : "rb");
	finish_d(c, "kill", &g);
	sluice_close(c);
}

/* A follower holds the graph (PUT_X and ACK_R records stream as they
 * are); promoted after the leader dies half way, it runs the rest: D
 * once, with both results. */
static void
test_diamond_fails_over(void **state)
{
	struct it_node a, b;
	struct sluice_task *t;
	struct diamond g;
	uint64_t lsn;

	it_node_init(state, &a, "a");
	it_node_init(state, &b, "b");
	it_node_follows(&b, &a);
	it_node_start(&a);
	it_node_start(&b);
	put_diamond(a.c, "fo", &g);
	run(a.c, "fo", g.a, "ra");
	run(a.c, "fo", g.b, "rb");
	it_node_caught_up(&a, &b);
	t = it_peek(b.c, g.d);
	assert_int_equal(t->state, SLUICE_WAITING);
	assert_int_equal(t->parents_pending, 1);
	sluice_task_free(t);
	it_node_kill(&a);
	it_rc(b.c, sluice_promote(b.c, &lsn), 0);
	run(b.c, "fo", g.c, "rc");
	finish_d(b.c, "fo", &g);
	it_node_stop(&b, SIGTERM);
}

/* HTTP: POST ?after=, the take's JSON with the parents' results, ack
 * with a result in the body; bad input: an unknown parent, a bad rule,
 * a result over 65,535 bytes. */
static uint64_t
http_put(int hport, const char *query, const char *payload, int want)
{
	char path[160], *body = NULL;
	uint64_t id;

	snprintf(path, sizeof(path), "/v1/tubes/h/tasks%s", query);
	assert_int_equal(
	    it_http(hport, "POST", path, NULL, payload, &body), want);
	id = want == 201 ? (uint64_t)it_json_num(body, NULL, "id") : 0;
	free(body);
	return id;
}

/* Takes from tube h over HTTP (it must be `want`), acks with `result`;
 * the take's JSON in out. */
static void
http_run(int hport, uint64_t want, const char *result, char *out, size_t cap)
{
	char path[96], *body = NULL;
	uint64_t lease;

	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/h/take?wait=5s", NULL, "", &body),
	    200);
	assert_int_equal((uint64_t)it_json_num(body, NULL, "id"), want);
	lease = (uint64_t)it_json_num(body, NULL, "lease");
	snprintf(out, cap, "%s", body);
	free(body);
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64 "/ack?lease=%" PRIu64,
	    want, lease);
	assert_int_equal(
	    it_http(hport, "POST", path, NULL, result, &body), 200);
	free(body);
}

static void
test_diamond_http(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	static char port[32];
	char q[96], out[8192], want[96], *body = NULL, *big;
	struct diamond g;
	int hport = it_free_port();

	snprintf(port, sizeof(port), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = port;
	s->args[2] = NULL;
	it_start(s);
	g.a = http_put(hport, "", "A", 201);
	snprintf(q, sizeof(q), "?after=%" PRIu64, g.a);
	g.b = http_put(hport, q, "B", 201);
	g.c = http_put(hport, q, "C", 201);
	snprintf(q, sizeof(q), "?after=%" PRIu64 ",%" PRIu64, g.b, g.c);
	g.d = http_put(hport, q, "D", 201);
	snprintf(q, sizeof(q), "/v1/tasks/%" PRIu64, g.d);
	body = it_http_get(hport, q, 200);
	assert_non_null(strstr(body, "\"state\":\"waiting\""));
	assert_non_null(strstr(body, "\"parents_pending\":2"));
	free(body);
	http_run(hport, g.a, "ra", out, sizeof(out));
	http_run(hport, g.b, "rb", out, sizeof(out));
	snprintf(want, sizeof(want),
	    "{\"id\":%" PRIu64 ",\"outcome\":\"done\",\"result\":\"ra\"}", g.a);
	assert_non_null(strstr(out, want));
	http_run(hport, g.c, "rc", out, sizeof(out));
	http_run(hport, g.d, "", out, sizeof(out));
	snprintf(want, sizeof(want),
	    "{\"id\":%" PRIu64 ",\"outcome\":\"done\",\"result\":\"rb\"}", g.b);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want),
	    "{\"id\":%" PRIu64 ",\"outcome\":\"done\",\"result\":\"rc\"}", g.c);
	assert_non_null(strstr(out, want));
	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/h/take", NULL, "", &body), 200);
	assert_non_null(strstr(body, "\"tasks\":[]"));
	free(body);
	/* a batch item after a task */
	snprintf(out, sizeof(out),
	    "[{\"payload\":\"E\",\"after\":[%" PRIu64 "],"
	    "\"on_parent_failure\":\"ignore\"},"
	    "{\"payload\":\"F\",\"after\":[0]}]",
	    g.d);
	assert_int_equal(it_http(hport, "POST", "/v1/tubes/h/tasks?batch=1",
	                     NULL, out, &body),
	    200);
	assert_non_null(strstr(body, "\"created\":true"));
	assert_non_null(strstr(body, "after: task ids of at least 1"));
	free(body);
	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/h/take", NULL, "", &body), 200);
	assert_non_null(strstr(body, "\"payload\":\"E\""));
	free(body);
	/* bad input */
	http_put(hport, "?after=999", "x", 404);
	http_put(hport, "?after=1&on_parent_failure=maybe", "x", 400);
	http_put(hport, "?after=0", "x", 400);
	g.a = http_put(hport, "", "A", 201);
	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/h/take", NULL, "", &body), 200);
	snprintf(q, sizeof(q), "/v1/tasks/%" PRIu64 "/ack?lease=%" PRIu64, g.a,
	    (uint64_t)it_json_num(body, NULL, "lease"));
	free(body);
	big = malloc(65537);
	memset(big, 'r', 65536); /* one byte over */
	big[65536] = '\0';
	assert_int_equal(it_http(hport, "POST", q, NULL, big, &body), 400);
	assert_non_null(strstr(body, "result_too_large"));
	free(body);
	free(big);
}

/* A chain A -> B -> C, each child with `rule`; A fails for good. */
static void
chain(struct sluice_client *c, const char *tube, int rule, uint64_t id[3])
{
	struct sluice_task *t;

	id[0] = it_put(c, tube, "A");
	id[1] = put_after(c, tube, "B", &id[0], 1, rule);
	id[2] = put_after(c, tube, "C", &id[1], 1, rule);
	t = it_take(c, tube, 5000, 1);
	assert_int_equal(t->id, id[0]);
	it_rc(c, sluice_fail_fatal(c, t->id, t->lease, "disk full", NULL), 0);
	sluice_task_free(t);
}

/* fail: B and C buried, each naming its parent's failure; ignore: B
 * runs, then C; cancel: B and C deleted; and a parent deleted, failed
 * already when its child is put. */
static void
test_parent_fails(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	char want[64];
	uint64_t id[3], x;

	it_start(s);
	c = it_client(s);
	chain(c, "fail", SLUICE_ON_PARENT_FAIL, id);
	t = it_peek(c, id[1]);
	assert_int_equal(t->state, SLUICE_BURIED);
	snprintf(
	    want, sizeof(want), "task %" PRIu64 " failed: disk full", id[0]);
	assert_string_equal(t->last_error, want);
	sluice_task_free(t);
	t = it_peek(c, id[2]);
	assert_int_equal(t->state, SLUICE_BURIED);
	snprintf(want, sizeof(want),
	    "task %" PRIu64 " failed: task %" PRIu64 " failed: disk full",
	    id[1], id[0]);
	assert_string_equal(t->last_error, want);
	sluice_task_free(t);

	chain(c, "ign", SLUICE_ON_PARENT_IGNORE, id);
	assert_int_equal(it_state(c, id[2]), SLUICE_WAITING);
	run(c, "ign", id[1], NULL);
	run(c, "ign", id[2], NULL);

	chain(c, "can", SLUICE_ON_PARENT_CANCEL, id);
	assert_int_equal(it_state(c, id[1]), 0);
	assert_int_equal(it_state(c, id[2]), 0);
	none(c, "can");

	/* a deleted parent; a child put after its parent failed */
	x = it_put(c, "del", "A");
	id[1] = put_after(c, "del", "B", &x, 1, SLUICE_ON_PARENT_FAIL);
	it_rc(c, sluice_delete(c, x), 0);
	t = it_peek(c, id[1]);
	assert_int_equal(t->state, SLUICE_BURIED);
	snprintf(want, sizeof(want), "task %" PRIu64 " failed: deleted", x);
	assert_string_equal(t->last_error, want);
	sluice_task_free(t);
	id[2] = put_after(c, "del", "C", &id[1], 1, SLUICE_ON_PARENT_IGNORE);
	assert_int_equal(it_state(c, id[2]), SLUICE_READY);
	sluice_close(c);
}

/* A wait parked on a child: the child that its parent's failure buries
 * (rule fail) or removes (rule cancel) ends then, and the wait returns
 * at once with how it ended, not at its timeout. */
struct parked {
	struct t_srv *s;
	uint64_t id;
	int rc;
	int64_t ms; /* how long it waited */
	struct sluice_outcome o;
};

static void *
park(void *arg)
{
	struct parked *p = arg;
	struct sluice_client *c = it_client(p->s);
	int64_t t0 = it_mono_ms();

	p->rc = sluice_wait(c, p->id, 30000, &p->o);
	p->ms = it_mono_ms() - t0;
	sluice_close(c);
	return NULL;
}

static void
test_wait_on_a_child_ends_with_its_parent(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct parked w[2];
	pthread_t th[2];
	uint64_t p;

	it_start(s);
	c = it_client(s);
	p = it_put(c, "pw", "A");
	w[0] = (struct parked) { .s = s };
	w[1] = (struct parked) { .s = s };
	w[0].id = put_after(c, "pw", "B", &p, 1, SLUICE_ON_PARENT_FAIL);
	w[1].id = put_after(c, "pw", "C", &p, 1, SLUICE_ON_PARENT_CANCEL);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, park, &w[i]), 0);
	it_sleep_ms(500); /* both parked */
	t = it_take(c, "pw", 5000, 1);
	assert_int_equal(t->id, p);
	it_rc(c, sluice_fail_fatal(c, t->id, t->lease, "disk full", NULL), 0);
	sluice_task_free(t);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(w[i].rc, 0);
		assert_true(w[i].o.final);
		/* at once: far from the 30 s the wait would last */
		assert_true(w[i].ms < 15000);
	}
	assert_int_equal(w[0].o.state, SLUICE_BURIED);
	assert_int_equal(w[1].o.state, SLUICE_CANCELLED);
	sluice_close(c);
}

/* Bad input, each with its error, nothing put: an unknown parent, more
 * than 1,000, parents with replace or a period, a bad rule, a result
 * over 65,535 bytes; the CLI says why. */
static void
test_bad_input(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	static uint64_t many[1001];
	struct sluice_client *c;
	struct sluice_put_opts o;
	struct sluice_task *t;
	char err[1024], *big;
	uint64_t id, a;
	int created;

	it_start(s);
	c = it_client(s);
	a = it_put(c, "bad", "A");
	sluice_put_opts_init(&o);
	o.tube = "bad";
	id = 777;
	o.after = &id;
	o.nafter = 1;
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), SLUICE_ENOTFOUND);
	for (int i = 0; i < 1001; i++)
		many[i] = a;
	o.after = many;
	o.nafter = 1001;
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), SLUICE_ELIMIT);
	o.nafter = 1;
	o.period_ms = 1000;
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), SLUICE_EINVAL);
	o.period_ms = 0;
	o.on_parent_failure = 7;
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), SLUICE_EINVAL);
	o.on_parent_failure = 0;
	o.after_keys = (const char *const[]) { "nope" };
	o.nafter_keys = 1;
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), SLUICE_ENOTFOUND);
	assert_int_equal(it_counts(c, "bad").ready, 1);
	assert_true(it_cli(s->url, NULL, NULL, 0, err, sizeof(err), "put", "-t",
	                "bad", "--after", "999", "x", NULL) != 0);
	assert_non_null(strstr(err, "not one this server knows"));
	assert_true(it_cli(s->url, NULL, NULL, 0, err, sizeof(err), "put", "-t",
	                "bad", "--after", "1", "--on-parent-failure", "maybe",
	                "x", NULL) != 0);
	assert_non_null(strstr(err, "fail, ignore or cancel"));
	/* a result over 65,535 bytes */
	big = malloc(65537);
	memset(big, 'r', 65536);
	big[65536] = '\0';
	t = it_take(c, "bad", 5000, 1);
	it_rc(c,
	    sluice_ack_opts(c, t->id, t->lease,
	        &(struct sluice_ack_opts) { .result = big }, NULL),
	    SLUICE_ERESULT);
	big[65535] = '\0';
	it_rc(c,
	    sluice_ack_opts(c, t->id, t->lease,
	        &(struct sluice_ack_opts) { .result = big }, NULL),
	    0);
	sluice_task_free(t);
	free(big);
	sluice_close(c);
}

/* A batch put names parents as a single put does: its items wait for
 * them (one by id, one by key), a take of each carries its parent, and
 * a bad parent (an id 0, over 1,000) refuses the whole batch and puts
 * nothing. (libsluice's batch put sent no parents: its tasks were ready
 * at once.) */
static void
test_batch_puts_with_parents(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	static uint64_t many[1001];
	struct sluice_batch_item items[3];
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct sluice_task *t;
	const char *const keys[] = { "a-key" };
	uint64_t a, zero = 0;

	it_start(s);
	c = it_client(s);
	sluice_put_opts_init(&o);
	o.tube = "bat";
	o.key = "a-key";
	a = it_put_o(c, &o, "A");
	memset(items, 0, sizeof(items));
	for (int i = 0; i < 3; i++) {
		sluice_put_opts_init(&items[i].opts);
		items[i].opts.tube = "bat";
		items[i].payload = "child";
		items[i].len = 5;
	}
	items[0].opts.after = &a;
	items[0].opts.nafter = 1;
	items[1].opts.after_keys = keys;
	items[1].opts.nafter_keys = 1;
	it_rc(c, sluice_put_batch(c, items, 3), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(items[i].rc, 0);
	assert_int_equal(it_state(c, items[0].id), SLUICE_WAITING);
	assert_int_equal(it_state(c, items[1].id), SLUICE_WAITING);
	assert_int_equal(it_state(c, items[2].id), SLUICE_READY);
	/* A (the lower id) first; then, in any order, the children each
	 * with its parent and the third without */
	t = it_take(c, "bat", 0, 1);
	assert_int_equal(t->id, a);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	for (int k = 0; k < 3; k++) {
		int i = 0;

		t = it_take(c, "bat", 1000, 1);
		while (i < 3 && items[i].id != t->id)
			i++;
		assert_true(i < 3);
		assert_int_equal(t->nparents, i < 2 ? 1 : 0);
		if (i < 2) {
			assert_int_equal(t->parents[0].id, a);
			assert_int_equal(t->parents[0].outcome, 1);
		}
		it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
		sluice_task_free(t);
	}
	/* bad parents refuse the batch: nothing is put */
	items[0].opts.after = &zero;
	it_rc(c, sluice_put_batch(c, items, 3), SLUICE_EINVAL);
	for (int i = 0; i < 1001; i++)
		many[i] = a;
	items[0].opts.after = many;
	items[0].opts.nafter = 1001;
	it_rc(c, sluice_put_batch(c, items, 3), SLUICE_ELIMIT);
	assert_int_equal(it_counts(c, "bat").ready, 0);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_diamond_libsluice, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_diamond_cli, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_diamond_http, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_diamond_survives_kill, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_diamond_fails_over, it_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_parent_fails, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_wait_on_a_child_ends_with_its_parent, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_input, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_batch_puts_with_parents, it_setup, it_teardown),
	};
	return cmocka_run_group_tests_name("after", tests, NULL, NULL);
}
