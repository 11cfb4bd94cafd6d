/* Fair groups against a real server: a group with 10,000 ready tasks
 * does not delay a small one (each of the small group's tasks comes out
 * within one round of the two groups); tasks and their groups survive a
 * kill -9 and restart, and the loaded server goes round every group; a
 * follower holds them and goes round them once promoted; bad
 * group names are refused with their reason by libsluice, the CLI and
 * HTTP, and put nothing; and libsluice, the CLI (text and JSON) and the
 * HTTP task API show each task's group; `sluice groups` lists a tube's
 * groups by backlog. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"
#include "it_node.h"

enum { BIG = 10000, SMALL = 5 };

/* n tasks into `tube`, group `group` (NULL: none), in batches. */
static void
put_group(struct sluice_client *c, const char *tube, const char *group, int n)
{
	static struct sluice_batch_item items[500];

	for (int done = 0; done < n;) {
		int k = n - done < 500 ? n - done : 500;

		memset(items, 0, sizeof(items));
		for (int i = 0; i < k; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = tube;
			items[i].opts.group = group;
			items[i].payload = group != NULL ? group : "-";
			items[i].len = strlen(items[i].payload);
		}
		it_rc(c, sluice_put_batch(c, items, (size_t)k), 0);
		for (int i = 0; i < k; i++)
			assert_int_equal(items[i].rc, 0);
		done += k;
	}
}

/* Takes one task of `tube` and acks it; its group's name ("" for none)
 * in out. */
static void
take_ack(struct sluice_client *c, const char *tube, char *out, size_t cap)
{
	struct sluice_task *t = it_take(c, tube, 5000, 0);

	snprintf(out, cap, "%s", t->group != NULL ? t->group : "");
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
}

/* 10,000 tasks of "big", then 5 of "small": the 5 come out within the
 * first 10 takes (one round of two groups each), and big's go on. */
static void
test_small_group_within_one_round(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	char g[256];
	int small_seen = 0, last_small = 0;

	it_start(s);
	c = it_client(s);
	put_group(c, "fair", "big", BIG);
	put_group(c, "fair", "small", SMALL);
	for (int i = 1; i <= 2 * SMALL + 10; i++) {
		take_ack(c, "fair", g, sizeof(g));
		if (strcmp(g, "small") == 0) {
			small_seen++;
			last_small = i;
		} else {
			assert_string_equal(g, "big");
		}
	}
	assert_int_equal(small_seen, SMALL);
	assert_true(last_small <= 2 * SMALL);
	/* a small group arriving later waits one round too */
	put_group(c, "fair", "late", 1);
	take_ack(c, "fair", g, sizeof(g));
	if (strcmp(g, "late") != 0) {
		assert_string_equal(g, "big");
		take_ack(c, "fair", g, sizeof(g));
		assert_string_equal(g, "late");
	}
	sluice_close(c);
}

/* Three groups and tasks without one, one task taken (detached, so it
 * stays taken), a snapshot, then a task of a fourth group: after kill -9
 * and a restart (the snapshot's GROUP entries, then the log's PUT_G)
 * every task is there with its group, and the next takes go round all
 * five groups. */
static void
test_groups_survive_kill(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_put_opts o;
	uint64_t ids[4], lsn;
	const char *names[3] = { "a", "b", "c" };
	char g[256];
	int seen[4] = { 0 };

	it_start(s);
	c = it_client(s);
	for (int k = 0; k < 3; k++)
		put_group(c, "surv", names[k], 4);
	put_group(c, "surv", NULL, 4);
	sluice_put_opts_init(&o);
	o.tube = "held";
	o.group = "tenant-7";
	ids[0] = it_put_o(c, &o, "held");
	t = it_take(c, "held", 5000, 1);
	assert_int_equal(t->id, ids[0]);
	assert_string_equal(t->group, "tenant-7");
	sluice_task_free(t);
	/* the restart loads this snapshot, then the log after it */
	it_rc(c, sluice_snapshot(c, &lsn), 0);
	o.tube = "surv";
	o.group = "d";
	ids[1] = it_put_o(c, &o, "d");
	it_crash_restart(s, &c);
	t = it_peek(c, ids[0]);
	assert_non_null(t);
	assert_int_equal(t->state, SLUICE_TAKEN);
	assert_string_equal(t->group, "tenant-7");
	sluice_task_free(t);
	t = it_peek(c, ids[1]);
	assert_string_equal(t->group, "d");
	sluice_task_free(t);
	/* the first five takes: a, b, c, "" and d each once, in some order */
	for (int i = 0; i < 5; i++) {
		take_ack(c, "surv", g, sizeof(g));
		if (g[0] == '\0')
			seen[3]++;
		else if (g[0] >= 'a' && g[0] <= 'c')
			seen[g[0] - 'a']++;
		else
			assert_string_equal(g, "d");
	}
	for (int k = 0; k < 4; k++)
		assert_int_equal(seen[k], 1);
	assert_int_equal(it_counts(c, "surv").ready, 12);
	sluice_close(c);
}

/* A follower holds the groups the leader's records put (PUT_G records
 * stream as they are); after a failover to the follower every task keeps
 * its group and the promoted node goes round the groups. */
static void
test_groups_replicate_and_fail_over(void **state)
{
	struct it_node a, b;
	struct sluice_task *t;
	uint64_t lsn;
	char g[256];
	int seen[3] = { 0 };

	it_node_init(state, &a, "a");
	it_node_init(state, &b, "b");
	it_node_follows(&b, &a);
	it_node_start(&a);
	it_node_start(&b);
	put_group(a.c, "rep", "x", 3);
	put_group(a.c, "rep", "y", 3);
	it_rc(a.c, sluice_snapshot(a.c, &lsn), 0);
	put_group(a.c, "rep", "z", 3);
	it_node_caught_up(&a, &b);
	t = it_peek(b.c, 1);
	assert_string_equal(t->group, "x");
	sluice_task_free(t);
	t = it_peek(b.c, 9);
	assert_string_equal(t->group, "z");
	sluice_task_free(t);
	it_node_kill(&a);
	it_rc(b.c, sluice_promote(b.c, &lsn), 0);
	for (int i = 0; i < 3; i++) {
		take_ack(b.c, "rep", g, sizeof(g));
		assert_true(g[0] >= 'x' && g[0] <= 'z' && g[1] == '\0');
		seen[g[0] - 'x']++;
	}
	for (int k = 0; k < 3; k++)
		assert_int_equal(seen[k], 1);
	it_node_stop(&b, SIGTERM);
}

/* Bad names: too long, a space, a byte outside the alphabet; refused by
 * libsluice, the CLI and HTTP with the reason; nothing put. */
static void
test_bad_group_names(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_put_opts o;
	static char port[32];
	char longname[202], err[1024], *body = NULL;
	uint64_t id;
	int created, hport = it_free_port();

	snprintf(port, sizeof(port), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = port;
	s->args[2] = NULL;
	it_start(s);
	c = it_client(s);
	memset(longname, 'g', 201);
	longname[201] = '\0';
	sluice_put_opts_init(&o);
	o.tube = "bad";
	o.group = longname;
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), SLUICE_EGROUP);
	o.group = "a b";
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), SLUICE_EGROUP);
	o.group = "caf\xc3\xa9";
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), SLUICE_EGROUP);
	assert_string_equal(sluice_errname(SLUICE_EGROUP), "bad_group");
	assert_true(it_cli(s->url, NULL, NULL, 0, err, sizeof(err), "put", "-t",
	                "bad", "--group", "a b", "x", NULL) != 0);
	assert_non_null(strstr(err, "bad group name"));
	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/bad/tasks?group=a%20b", NULL, "x",
	        &body),
	    400);
	assert_non_null(strstr(body, "bad_group"));
	free(body);
	/* 200 bytes is the most */
	longname[200] = '\0';
	o.group = longname;
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), 0);
	assert_int_equal(it_counts(c, "bad").ready, 1);
	sluice_close(c);
}

/* libsluice's take and peek, the CLI's put --group, peek --json, take
 * --json and list, HTTP's put ?group= and task JSON show the group. */
static void
test_faces_show_group(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	static char port[32];
	char out[8192], path[64], *body = NULL;
	uint64_t id;
	int hport = it_free_port();

	snprintf(port, sizeof(port), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = port;
	s->args[2] = NULL;
	it_start(s);
	c = it_client(s);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "put",
	                     "-t", "show", "--group", "acme", "hello", NULL),
	    0);
	id = strtoull(out, NULL, 10);
	assert_true(id > 0);
	t = it_peek(c, id);
	assert_string_equal(t->group, "acme");
	sluice_task_free(t);
	snprintf(path, sizeof(path), "%" PRIu64, id);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "peek",
	                     path, "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"group\":\"acme\""));
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "peek", path, NULL),
	    0);
	assert_non_null(strstr(out, "group         acme"));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "list",
	                     "-t", "show", NULL),
	    0);
	assert_non_null(strstr(out, "group acme"));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "take",
	                     "-t", "show", "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"group\":\"acme\""));
	/* HTTP: put into a group, the task's JSON names it */
	assert_int_equal(it_http(hport, "POST", "/v1/tubes/web/tasks?group=w1",
	                     NULL, "x", &body),
	    201);
	id = (uint64_t)it_json_num(body, NULL, "id");
	free(body);
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64, id);
	body = it_http_get(hport, path, 200);
	assert_non_null(strstr(body, "\"group\":\"w1\""));
	free(body);
	t = it_take(c, "web", 5000, 0);
	assert_string_equal(t->group, "w1");
	sluice_task_free(t);
	/* sluice groups: the largest backlog first, "-" for none */
	put_group(c, "many", "b", 3);
	put_group(c, "many", "a", 1);
	put_group(c, "many", NULL, 2);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0,
	                     "groups", "many", NULL),
	    0);
	assert_non_null(strstr(out, "GROUP "));
	assert_true(strstr(out, "\nb ") < strstr(out, "\n- "));
	assert_true(strstr(out, "\n- ") < strstr(out, "\na "));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0,
	                     "groups", "many", "--json", NULL),
	    0);
	assert_non_null(
	    strstr(out, "[{\"group\":\"b\",\"ready\":3,\"taken\":0,"));
	assert_non_null(strstr(out, "{\"group\":null,\"ready\":2,"));
	/* stats: the tube's groups and those with ready tasks ("" too);
	 * /metrics: the groups */
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0,
	                     "stats", "-t", "many", "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"groups\":2"));
	assert_non_null(strstr(out, "\"groups_ready\":3"));
	body = it_http_get(hport, "/metrics", 200);
	assert_true(it_metric(body, "sluice_tube_groups{tube=\"many\"}") == 2);
	free(body);
	/* a task without a group shows none */
	id = it_put(c, "web", "plain");
	t = it_peek(c, id);
	assert_null(t->group);
	sluice_task_free(t);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_small_group_within_one_round, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_groups_survive_kill, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_groups_replicate_and_fail_over, it_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_group_names, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_faces_show_group, it_setup, it_teardown),
	};
	return cmocka_run_group_tests_name("groups", tests, NULL, NULL);
}
