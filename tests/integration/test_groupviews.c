/* The views of fair groups against real servers: the server lists a
 * tube's groups by backlog (the groups op) with their ready and taken
 * counts and oldest ready age, through libsluice, the CLI and HTTP; the
 * taken counts survive kill -9 (a detached lease) and reach a follower,
 * which answers the listing too; /metrics has the groups with the
 * largest backlog only (20 of 25), beside each tube's held tasks and its
 * wait histogram. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"
#include "it_node.h"

/* n tasks into `tube`, group `group` (NULL: none), in one batch (n <=
 * 500). */
static void
put_group(struct sluice_client *c, const char *tube, const char *group, int n)
{
	static struct sluice_batch_item items[500];

	assert_true(n <= 500);
	memset(items, 0, sizeof(items));
	for (int i = 0; i < n; i++) {
		sluice_put_opts_init(&items[i].opts);
		items[i].opts.tube = tube;
		items[i].opts.group = group;
		items[i].payload = "x";
		items[i].len = 1;
	}
	it_rc(c, sluice_put_batch(c, items, (size_t)n), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(items[i].rc, 0);
}

/* Row i of a listing is (group, ready, taken); group NULL: none. */
static void
assert_row(const struct sluice_group *g, const char *tube, const char *group,
    uint64_t ready, uint64_t taken)
{
	assert_string_equal(g->tube, tube);
	if (group == NULL)
		assert_null(g->group);
	else
		assert_string_equal(g->group, group);
	assert_int_equal(g->ready, ready);
	assert_int_equal(g->taken, taken);
}

/* Takes one task of `tube` detached (its lease outlives the session and
 * a restart); its group must be `want`. */
static struct sluice_task *
take_of(struct sluice_client *c, const char *tube, const char *want)
{
	struct sluice_task *t = it_take(c, tube, 5000, 1);

	if (want == NULL)
		assert_null(t->group);
	else
		assert_string_equal(t->group, want);
	return t;
}

/* big 40 tasks, mid 10, none 5, one 1; a take from each of big, mid and
 * none (the rotation's first three): the listing orders by ready, cuts
 * at the limit with the total, ages the oldest ready task; after kill -9
 * the detached leases still count as taken; an ack and a release move
 * the counts; the CLI prints the same; bad requests are refused. */
static void
test_listing_by_backlog(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_group *g = NULL;
	struct sluice_task *tb, *tm, *tn;
	uint64_t total = 0;
	size_t n = 0;

	it_start(s);
	c = it_client(s);
	put_group(c, "gv", "big", 40);
	put_group(c, "gv", "mid", 10);
	put_group(c, "gv", NULL, 5);
	put_group(c, "gv", "one", 1);
	tb = take_of(c, "gv", "big");
	tm = take_of(c, "gv", "mid");
	tn = take_of(c, "gv", NULL);
	it_rc(c, sluice_groups(c, "gv", 10, &g, &n, &total), 0);
	assert_int_equal(n, 4);
	assert_int_equal(total, 4);
	assert_row(&g[0], "gv", "big", 39, 1);
	assert_row(&g[1], "gv", "mid", 9, 1);
	assert_row(&g[2], "gv", NULL, 4, 1);
	assert_row(&g[3], "gv", "one", 1, 0);
	/* ages count from the put: well under the test's own length */
	assert_true(g[0].oldest_ready_ms < 60000);
	sluice_groups_free(g);
	/* the first two, and how many there are */
	it_rc(c, sluice_groups(c, "gv", 2, &g, &n, &total), 0);
	assert_int_equal(n, 2);
	assert_int_equal(total, 4);
	assert_row(&g[1], "gv", "mid", 9, 1);
	sluice_groups_free(g);
	/* kill -9: the groups come back from the log, the detached leases
	 * with them, counted as taken */
	it_crash_restart(s, &c);
	it_rc(c, sluice_groups(c, "gv", 10, &g, &n, &total), 0);
	assert_int_equal(n, 4);
	assert_row(&g[0], "gv", "big", 39, 1);
	assert_row(&g[1], "gv", "mid", 9, 1);
	assert_row(&g[2], "gv", NULL, 4, 1);
	sluice_groups_free(g);
	/* an ack frees big's, a release puts mid's back to ready */
	it_rc(c, sluice_ack(c, tb->id, tb->lease, NULL, NULL), 0);
	it_rc(c, sluice_release(c, tm->id, tm->lease, 0, -1, NULL), 0);
	it_rc(c, sluice_groups(c, "gv", 10, &g, &n, &total), 0);
	assert_row(&g[0], "gv", "big", 39, 0);
	assert_row(&g[1], "gv", "mid", 10, 0);
	assert_row(&g[2], "gv", NULL, 4, 1);
	sluice_groups_free(g);
	/* the CLI asks the same */
	assert_int_equal(it_cli(s->url, NULL, it_out, IT_OUT_MAX, NULL, 0,
	                     "groups", "gv", "--json", NULL),
	    0);
	assert_non_null(strstr(it_out,
	    "{\"groups\":[{\"group\":\"big\",\"ready\":39,\"taken\":0,"));
	assert_non_null(
	    strstr(it_out, "{\"group\":null,\"ready\":4,\"taken\":1,"));
	assert_non_null(strstr(it_out, "],\"total\":4}"));
	assert_int_equal(it_cli(s->url, NULL, it_out, IT_OUT_MAX, NULL, 0,
	                     "groups", "gv", "--limit", "1", NULL),
	    0);
	assert_non_null(strstr(it_out, "\nbig "));
	assert_null(strstr(it_out, "\nmid "));
	assert_non_null(strstr(it_out, "(3 more not shown"));
	/* every tube: gv's groups with their tube */
	put_group(c, "other", "o1", 50);
	it_rc(c, sluice_groups(c, "*", 10, &g, &n, &total), 0);
	assert_int_equal(total, 5);
	assert_row(&g[0], "other", "o1", 50, 0);
	assert_row(&g[1], "gv", "big", 39, 0);
	sluice_groups_free(g);
	/* bad requests: each its own error */
	it_rc(
	    c, sluice_groups(c, "nope", 10, &g, &n, &total), SLUICE_ENOTFOUND);
	assert_non_null(strstr(sluice_errmsg(c), "no such tube"));
	it_rc(c, sluice_groups(c, "gv", 0, &g, &n, &total), SLUICE_EINVAL);
	it_rc(c, sluice_groups(c, "gv", 1001, &g, &n, &total), SLUICE_ELIMIT);
	it_rc(c, sluice_groups(c, "a b", 10, &g, &n, &total), SLUICE_ETUBE);
	assert_int_equal(it_cli(s->url, NULL, it_out, IT_OUT_MAX, it_err,
	                     IT_OUT_MAX, "groups", "gv", "--limit", "0", NULL),
	    2);
	assert_non_null(strstr(it_err, "--limit"));
	sluice_task_free(tb);
	sluice_task_free(tm);
	sluice_task_free(tn);
	sluice_close(c);
}

/* 10,000 groups of one task each: one request lists the first 1,000 and
 * counts them all; the largest first whatever their number. */
static void
test_listing_many_groups(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	static struct sluice_batch_item items[500];
	static char names[500][16];
	struct sluice_client *c;
	struct sluice_group *g = NULL;
	uint64_t total = 0;
	size_t n = 0;

	it_start(s);
	c = it_client(s);
	for (int b = 0; b < 20; b++) {
		memset(items, 0, sizeof(items));
		for (int i = 0; i < 500; i++) {
			snprintf(
			    names[i], sizeof(names[i]), "t%05d", b * 500 + i);
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = "many";
			items[i].opts.group = names[i];
			items[i].payload = "x";
			items[i].len = 1;
		}
		it_rc(c, sluice_put_batch(c, items, 500), 0);
	}
	put_group(c, "many", "t07777", 2); /* three tasks: the largest */
	it_rc(
	    c, sluice_groups(c, "many", SLUICE_GROUPS_MAX, &g, &n, &total), 0);
	assert_int_equal(n, SLUICE_GROUPS_MAX);
	assert_int_equal(total, 10000);
	assert_row(&g[0], "many", "t07777", 3, 0);
	assert_row(&g[1], "many", "t00000", 1, 0);
	assert_row(&g[999], "many", "t00998", 1, 0);
	sluice_groups_free(g);
	sluice_close(c);
}

/* A follower applies the same records: its listing is the leader's,
 * taken counts included, and it answers it as a read. */
static void
test_follower_lists_the_same(void **state)
{
	struct it_node a, b;
	struct sluice_group *ga = NULL, *gb = NULL;
	struct sluice_task *t;
	uint64_t ta = 0, tbt = 0;
	size_t na = 0, nb = 0;

	it_node_init(state, &a, "a");
	it_node_init(state, &b, "b");
	it_node_follows(&b, &a);
	it_node_start(&a);
	it_node_start(&b);
	put_group(a.c, "rep", "x", 3);
	put_group(a.c, "rep", "y", 5);
	t = it_take(a.c, "rep", 5000, 1);
	it_node_caught_up(&a, &b);
	it_rc(a.c, sluice_groups(a.c, "rep", 10, &ga, &na, &ta), 0);
	it_rc(b.c, sluice_groups(b.c, "rep", 10, &gb, &nb, &tbt), 0);
	assert_int_equal(na, 2);
	assert_int_equal(nb, na);
	assert_int_equal(tbt, ta);
	for (size_t i = 0; i < na; i++)
		assert_row(
		    &gb[i], "rep", ga[i].group, ga[i].ready, ga[i].taken);
	assert_int_equal(ga[0].taken + ga[1].taken, 1);
	sluice_groups_free(ga);
	sluice_groups_free(gb);
	sluice_task_free(t);
	it_node_stop(&b, SIGTERM);
	it_node_stop(&a, SIGTERM);
}

/* HTTP: GET /v1/tubes/T/groups with a limit and the total, 400 on a bad
 * limit, 404 on an unknown tube. /metrics: of 25 groups the 20 with the
 * largest backlog have gauges (ready, taken, oldest age); a tube with a
 * concurrency cap shows the tasks it holds back, and its takes' wait
 * histogram. */
static void
test_http_and_metrics(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_limits lim;
	static char port[32];
	char name[16], series[128], *body = NULL;
	int hport = it_free_port();

	snprintf(port, sizeof(port), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = port;
	s->args[2] = NULL;
	it_start(s);
	c = it_client(s);
	/* group gNN has 30 - NN tasks: g00 the largest, g24 the smallest */
	for (int i = 0; i < 25; i++) {
		snprintf(name, sizeof(name), "g%02d", i);
		put_group(c, "web", name, 30 - i);
	}
	put_group(c, "web", NULL, 1);
	body = it_http_get(hport, "/v1/tubes/web/groups?limit=2", 200);
	assert_non_null(strstr(
	    body, "{\"groups\":[{\"group\":\"g00\",\"ready\":30,\"taken\":0,"));
	assert_non_null(strstr(body, "\"tube\":\"web\"},{\"group\":\"g01\""));
	assert_non_null(strstr(body, "],\"total\":26}"));
	free(body);
	body = it_http_get(hport, "/v1/tubes/web/groups", 200);
	assert_non_null(strstr(body, "{\"group\":null,\"ready\":1,"));
	free(body);
	assert_int_equal(it_http(hport, "GET", "/v1/tubes/web/groups?limit=0",
	                     NULL, NULL, &body),
	    400);
	free(body);
	assert_int_equal(
	    it_http(hport, "GET", "/v1/tubes/web/groups?limit=1001", NULL, NULL,
	        &body),
	    400);
	free(body);
	assert_int_equal(
	    it_http(hport, "GET", "/v1/tubes/nope/groups", NULL, NULL, &body),
	    404);
	assert_non_null(strstr(body, "no such tube"));
	free(body);
	/* a cap of 1, one taken: the other tasks are held back */
	memset(&lim, 0, sizeof(lim));
	lim.set = SLUICE_LIM_CONCURRENCY;
	lim.concurrency = 1;
	it_rc(c, sluice_tube_limit(c, "web", &lim, 0, NULL), 0);
	t = it_take(c, "web", 5000, 0);
	assert_string_equal(t->group, "g00");
	body = it_http_get(hport, "/metrics", 200);
	assert_true(
	    it_metric(body,
	        "sluice_group_ready_tasks{tube=\"web\",group=\"g00\"}") == 29);
	assert_true(
	    it_metric(body,
	        "sluice_group_taken_tasks{tube=\"web\",group=\"g00\"}") == 1);
	assert_true(
	    it_metric(body,
	        "sluice_group_ready_tasks{tube=\"web\",group=\"g19\"}") == 11);
	assert_true(it_metric(body,
	                "sluice_group_oldest_ready_age_seconds{tube=\"web\","
	                "group=\"g19\"}") >= 0);
	for (int i = 20; i < 25; i++) {
		snprintf(series, sizeof(series),
		    "sluice_group_ready_tasks{tube=\"web\",group=\"g%02d\"}",
		    i);
		assert_null(strstr(body, series));
	}
	assert_null(strstr(body, "group=\"\"}")); /* "" has 1: not in 20 */
	assert_true(it_metric(body,
	                "sluice_tube_limit_held_tasks{tube=\"web\","
	                "limit=\"concurrency\"}") == 450);
	assert_true(it_metric(body,
	                "sluice_task_wait_seconds_count{tube=\"web\"}") == 1);
	assert_true(it_metric(body,
	                "sluice_task_wait_seconds_bucket{tube=\"web\","
	                "le=\"+Inf\"}") == 1);
	free(body);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_listing_by_backlog, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_listing_many_groups, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_follower_lists_the_same, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_http_and_metrics, it_setup, it_teardown),
	};
	return cmocka_run_group_tests_name("groupviews", tests, NULL, NULL);
}
