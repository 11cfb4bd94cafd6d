/* The beanstalk face with the rest of sluice: jobs cross between the two
 * faces (put through one, taken through the other, both ways), a client
 * that disconnects while it holds jobs gives them back at once, and what
 * a beanstalk client was told was inserted or deleted survives kill -9. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"

static void
expect(struct bsc *b, const char *cmd, const char *want)
{
	char *got = bsc_cmd(b, cmd);

	if (strcmp(got, want) != 0)
		fail_msg("%s-> %s (wanted %s)", cmd, got, want);
	free(got);
}

/* The id of an "INSERTED <id>\r\n" reply to `cmd`. */
static uint64_t
put_id(struct bsc *b, const char *cmd)
{
	char *got = bsc_cmd(b, cmd);
	uint64_t id = 0;

	if (sscanf(got, "INSERTED %" SCNu64, &id) != 1)
		fail_msg("%s-> %s", cmd, got);
	free(got);
	return id;
}

/* put via beanstalk, take via libsluice, and back; tube names with the
 * characters sluice escapes; priorities, delays and ttrs in their units. */
static void
test_jobs_cross_between_the_faces(void **state)
{
	struct sluice_put_opts o = { 0 };
	struct sluice_task *t;
	struct bsc b;
	struct bsc_node f;
	uint64_t id;
	char cmd[128], want[128];

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&b, f.port), 0);

	/* beanstalk -> sluice */
	expect(&b, "use jobs(1)+x\r\n", "USING jobs(1)+x\r\n");
	id = put_id(&b, "put 7 0 30 5\r\nhe\r\nl\r\n");
	t = it_take(f.c, "jobs:o1:c:px", 1000, 0);
	assert_int_equal(t->id, id);
	assert_int_equal(t->priority, 7);
	assert_int_equal(t->ttr_ms, 30000);
	assert_int_equal(t->payload_len, 5);
	assert_memory_equal(t->payload, "he\r\nl", 5);
	it_rc(f.c, sluice_ack(f.c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	snprintf(cmd, sizeof(cmd), "peek %" PRIu64 "\r\n", id);
	expect(&b, cmd, "NOT_FOUND\r\n");

	/* a delay in seconds is a run_at in ms */
	id = put_id(&b, "put 1 100 30 1\r\nd\r\n");
	assert_int_equal(it_state(f.c, id), SLUICE_DELAYED);
	t = it_peek(f.c, id);
	assert_true(t->run_at >= t->created_at + 99000);
	assert_true(t->run_at <= t->created_at + 101000);
	sluice_task_free(t);

	/* sluice -> beanstalk */
	o.tube = "work";
	o.priority = 3;
	id = it_put_o(f.c, &o, "from nng");
	expect(&b, "watch work\r\n", "WATCHING 2\r\n");
	snprintf(
	    want, sizeof(want), "RESERVED %" PRIu64 " 8\r\nfrom nng\r\n", id);
	expect(&b, "reserve-with-timeout 5\r\n", want);
	assert_int_equal(it_state(f.c, id), SLUICE_TAKEN);
	/* the beanstalk connection acts on what it holds */
	snprintf(cmd, sizeof(cmd), "release %" PRIu64 " 9 0\r\n", id);
	expect(&b, cmd, "RELEASED\r\n");
	t = it_peek(f.c, id);
	assert_int_equal(t->state, SLUICE_READY);
	assert_int_equal(t->priority, 9);
	sluice_task_free(t);
	t = it_take(f.c, "work", 1000, 1);
	snprintf(cmd, sizeof(cmd), "delete %" PRIu64 "\r\n", id);
	expect(&b, cmd, "NOT_FOUND\r\n"); /* held by another session */
	snprintf(cmd, sizeof(cmd), "reserve-job %" PRIu64 "\r\n", id);
	expect(&b, cmd, "NOT_FOUND\r\n");
	it_rc(f.c, sluice_ack(f.c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);

	/* both faces count the same jobs */
	put_id(&b, "put 1 0 30 1\r\nz\r\n");
	assert_int_equal(it_counts(f.c, "jobs:o1:c:px").ready, 1);
	assert_int_equal(it_counts(f.c, "jobs:o1:c:px").delayed, 1);
	expect(&b, "list-tubes\r\n",
	    "OK 33\r\n---\n- default\n- jobs(1)+x\n- work\n\r\n");
	bsc_close(&b);
	bsc_node_down(&f);
}

/* A connection closed while it holds jobs (and while another of its
 * reserves waits): its jobs are ready at once, with their reserve
 * counted, long before their ttr; the core forgets the waiting reserve. */
static void
test_a_client_gone_gives_its_jobs_back_at_once(void **state)
{
	struct bsc b, w;
	struct bsc_node f;
	uint64_t ids[3];
	char *got, cmd[64];
	int64_t ms;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&b, f.port), 0);
	for (int i = 0; i < 3; i++)
		ids[i] = put_id(&b, "put 1 0 3600 3\r\njob\r\n");
	for (int i = 0; i < 3; i++) {
		got = bsc_cmd(&b, "reserve\r\n");
		assert_true(strncmp(got, "RESERVED ", 9) == 0);
		free(got);
	}
	for (int i = 0; i < 3; i++)
		assert_int_equal(it_state(f.c, ids[i]), SLUICE_TAKEN);
	assert_int_equal(bsc_sends(&b, "reserve\r\n"), 0); /* waits */
	assert_true(bsc_quiet(&b, 100));
	bsc_close(&b);
	for (int i = 0; i < 3; i++) {
		ms = it_wait_state(f.c, ids[i], SLUICE_READY,
		    it_scale(5000, 1, 1) * (it_sanitized() ? 3 : 1));
		assert_true(ms >= 0);
	}
	/* the gone connection's reserve took nothing: another gets them */
	assert_int_equal(bsc_open(&w, f.port), 0);
	for (int i = 0; i < 3; i++) {
		got = bsc_cmd(&w, "reserve-with-timeout 5\r\n");
		assert_true(strncmp(got, "RESERVED ", 9) == 0);
		free(got);
	}
	snprintf(cmd, sizeof(cmd), "stats-job %" PRIu64 "\r\n", ids[0]);
	got = bsc_cmd(&w, cmd);
	assert_non_null(strstr(got, "\nstate: reserved\n"));
	assert_non_null(strstr(got, "\nreserves: 2\n"));
	free(got);
	bsc_close(&w);
	bsc_node_down(&f);
}

/* Every INSERTED and DELETED a beanstalk client read survives kill -9;
 * the jobs it held come back ready. */
static void
test_replies_are_durable_across_kill_9(void **state)
{
	enum { N = 40 };
	struct bsc b;
	struct bsc_node f;
	uint64_t ids[N];
	char cmd[64];
	struct it_counts n;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&b, f.port), 0);
	expect(&b, "use durable\r\n", "USING durable\r\n");
	for (int i = 0; i < N; i++)
		ids[i] = put_id(&b, "put 5 0 60 4\r\nbody\r\n");
	for (int i = 0; i < N / 4; i++) {
		snprintf(cmd, sizeof(cmd), "delete %" PRIu64 "\r\n", ids[i]);
		expect(&b, cmd, "DELETED\r\n");
	}
	expect(&b, "watch durable\r\n", "WATCHING 2\r\n");
	expect(&b, "ignore default\r\n", "WATCHING 1\r\n");
	free(bsc_cmd(&b, "reserve\r\n"));
	snprintf(cmd, sizeof(cmd), "bury %" PRIu64 " 1\r\n", ids[N / 4]);
	expect(&b, cmd, "BURIED\r\n");
	it_crash_restart(f.s, &f.c);
	bsc_close(&b);
	n = it_counts(f.c, "durable");
	assert_int_equal(n.ready, N - N / 4 - 1);
	assert_int_equal(n.buried, 1);
	assert_int_equal(n.taken + n.delayed, 0);
	for (int i = 0; i < N / 4; i++)
		assert_int_equal(it_state(f.c, ids[i]), 0);
	/* the face is back too */
	assert_int_equal(bsc_open(&b, f.port), 0);
	expect(&b, "use durable\r\n", "USING durable\r\n");
	expect(&b, "kick 5\r\n", "KICKED 1\r\n");
	bsc_close(&b);
	bsc_node_down(&f);
}

/* On a follower, reads work and every write command names the leader;
 * a job put on the leader is seen through the follower's face. */
static void
test_a_follower_names_its_leader(void **state)
{
	struct t_srv *lead = it_srv(*state, "leader");
	struct t_srv *fol = it_srv(*state, "follower");
	struct sluice_client *c;
	char repl[64], follow[64], addr[32], cmd[64], want[128];
	struct bsc b;
	int port = t_free_port();
	uint64_t id;
	char *got;

	snprintf(repl, sizeof(repl), "tcp://127.0.0.1:%d", t_free_port());
	snprintf(follow, sizeof(follow), "%s", repl);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	lead->args[0] = "--repl-listen";
	lead->args[1] = repl;
	it_start(lead);
	fol->args[0] = "--follow";
	fol->args[1] = follow;
	fol->args[2] = "--beanstalk";
	fol->args[3] = addr;
	it_start(fol);
	c = it_client(lead);
	id = it_put(c, "default", "replicated");
	assert_int_equal(bsc_open(&b, port), 0);
	/* the follower applies the put soon after the leader answers */
	snprintf(
	    want, sizeof(want), "FOUND %" PRIu64 " 10\r\nreplicated\r\n", id);
	for (int i = 0; i < 500; i++) {
		snprintf(cmd, sizeof(cmd), "peek %" PRIu64 "\r\n", id);
		got = bsc_cmd(&b, cmd);
		if (strcmp(got, want) == 0) {
			free(got);
			break;
		}
		assert_string_equal(got, "NOT_FOUND\r\n");
		free(got);
		it_sleep_ms(10);
	}
	snprintf(want, sizeof(want), "NOT_LEADER %s\r\n", lead->url);
	expect(&b, "put 1 0 10 1\r\na\r\n", want);
	expect(&b, "reserve-with-timeout 0\r\n", want);
	snprintf(cmd, sizeof(cmd), "delete %" PRIu64 "\r\n", id);
	expect(&b, cmd, want);
	expect(&b, "kick 1\r\n", want);
	got = bsc_cmd(&b, "stats-tube default\r\n");
	assert_non_null(strstr(got, "\ncurrent-jobs-ready: 1\n"));
	free(got);
	bsc_close(&b);
	sluice_close(c);
	assert_int_equal(t_srv_stop(fol, SIGTERM), 0);
	assert_int_equal(t_srv_stop(lead, SIGTERM), 0);
}

/* The value of `key` in a YAML reply, as a string ("" when missing). */
static void
yaml_value(const char *yaml, const char *key, char *out, size_t cap)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\n%s: ", key);
	out[0] = '\0';
	if ((p = strstr(yaml, pat)) == NULL)
		return;
	p += strlen(pat);
	while (p[n] != '\0' && p[n] != '\n' && n + 1 < cap)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* stats says a version beanstalkd clients can compare (1.12) and sluice's
 * own in a field of its own; binlog-max-size is the segment size;
 * list-tubes lists only names a client can use; pause-tube and
 * stats-tube work on a tube that is only watched. */
static void
test_stats_and_tube_names_for_beanstalk_clients(void **state)
{
	struct bsc b;
	struct bsc_node f;
	char v[64], *got, *line;
	int n = 0;

	bsc_node_up(state, &f);
	assert_int_equal(bsc_open(&b, f.port), 0);
	got = bsc_cmd(&b, "stats\r\n");
	yaml_value(got, "version", v, sizeof(v));
	assert_string_equal(v, "\"1.12\"");
	yaml_value(got, "sluice-version", v, sizeof(v));
	assert_true(v[0] == '"' && strchr(v + 1, '.') != NULL);
	yaml_value(got, "binlog-max-size", v, sizeof(v));
	assert_string_equal(v, T_SRV_SEGMENT); /* the servers' --segment-size */
	free(got);

	/* tubes made through nng: one beanstalk can name, one it cannot */
	(void)it_put(f.c, "x:zz", "unreachable");
	(void)it_put(f.c, "jobs:o1:c", "jobs(1)");
	got = bsc_cmd(&b, "list-tubes\r\n");
	assert_null(strstr(got, "x:zz"));
	assert_non_null(strstr(got, "\n- jobs(1)\n"));
	/* every name listed can be used */
	for (line = strstr(got, "\n- "); line != NULL && n < 16;
	     line = strstr(line + 1, "\n- "), n++) {
		char cmd[300], want[300];
		size_t len = strcspn(line + 3, "\n");

		snprintf(cmd, sizeof(cmd), "use %.*s\r\n", (int)len, line + 3);
		snprintf(
		    want, sizeof(want), "USING %.*s\r\n", (int)len, line + 3);
		expect(&b, cmd, want);
	}
	assert_true(n >= 2);
	free(got);
	got = bsc_cmd(&b, "stats\r\n");
	yaml_value(got, "current-tubes", v, sizeof(v));
	assert_string_equal(v, "2"); /* default and jobs(1) */
	free(got);

	/* a tube only watched: stats-tube answers, pause-tube pauses it */
	expect(&b, "watch fresh\r\n", "WATCHING 2\r\n");
	got = bsc_cmd(&b, "stats-tube fresh\r\n");
	assert_non_null(strstr(got, "\nname: fresh\n"));
	free(got);
	expect(&b, "pause-tube fresh 60\r\n", "PAUSED\r\n");
	got = bsc_cmd(&b, "stats-tube fresh\r\n");
	yaml_value(got, "pause-time-left", v, sizeof(v));
	assert_true(atoi(v) >= 58);
	free(got);
	expect(&b, "stats-tube nope\r\n", "NOT_FOUND\r\n");
	expect(&b, "pause-tube nope 1\r\n", "NOT_FOUND\r\n");
	bsc_close(&b);
	bsc_node_down(&f);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_jobs_cross_between_the_faces),
		T(test_a_client_gone_gives_its_jobs_back_at_once),
		T(test_replies_are_durable_across_kill_9),
		T(test_a_follower_names_its_leader),
		T(test_stats_and_tube_names_for_beanstalk_clients),
	};
#undef T
	return cmocka_run_group_tests_name("beanstalk", tests, NULL, NULL);
}
