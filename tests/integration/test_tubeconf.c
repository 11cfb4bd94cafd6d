/* Tube settings and tube removal against a real sluiced: what one
 * interface sets (the CLI or libsluice), the other sees, and so does the
 * server after kill -9 and a restart (from the log alone, and from a
 * snapshot and the log after it).
 *
 *  - tube set / show: puts without their own ttr and max_attempts take
 *    the tube's, a fail backs off by the tube's backoff, `default` gives
 *    a setting back to the server;
 *  - dead letter: a fail at max attempts, a worker's bury and a lost
 *    lease at max attempts move the task to the dead-letter tube, ready,
 *    its attempts, last error and payload kept; chains are not followed;
 *  - tube delete: refused while tasks remain, with --force their tasks go
 *    in one commit and their keys are free at once. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

/* The CLI's output holds `want`. */
static void
assert_out_has(const char *want)
{
	if (strstr(it_out, want) == NULL)
		fail_msg("wanted \"%s\" in the output:\n%s\n%s", want, it_out,
		    it_err);
}

static struct sluice_tube_conf
show(struct sluice_client *c, const char *tube)
{
	struct sluice_tube_conf conf;

	it_rc(c, sluice_tube_show(c, tube, &conf), 0);
	return conf;
}

/* A put with the library's defaults (no ttr, no max attempts). */
static uint64_t
put_plain(struct sluice_client *c, const char *tube, const char *payload)
{
	return it_put(c, tube, payload);
}

/* The settings `mail` was given by the CLI, seen through the library. */
static void
assert_mail_settings(struct sluice_client *c)
{
	struct sluice_tube_conf conf = show(c, "mail");

	assert_int_equal(conf.set,
	    SLUICE_TS_TTR | SLUICE_TS_MAX_ATTEMPTS | SLUICE_TS_BACKOFF);
	assert_true(conf.ttr_ms == 5000);
	assert_int_equal(conf.max_attempts, 3);
	assert_true(conf.backoff_base_ms == 150 && conf.backoff_cap_ms == 400);
	/* the others are the server's (--lost-lease-retry backoff, its
	 * default) */
	assert_int_equal(conf.lost_lease_immediate, 0);
	assert_string_equal(conf.dead_letter, "");
}

/* A fresh put in `mail` gets the tube's ttr and max attempts; a put with
 * its own keeps them. */
static void
assert_puts_follow_mail(struct sluice_client *c)
{
	struct sluice_put_opts o;
	struct sluice_task *t;
	uint64_t id;

	id = put_plain(c, "mail", "plain");
	t = it_peek(c, id);
	assert_true(t->ttr_ms == 5000);
	assert_int_equal(t->max_attempts, 3);
	sluice_task_free(t);
	sluice_put_opts_init(&o);
	o.tube = "mail";
	o.ttr_ms = 7000;
	o.max_attempts = 9;
	id = it_put_o(c, &o, "own");
	t = it_peek(c, id);
	assert_true(t->ttr_ms == 7000);
	assert_int_equal(t->max_attempts, 9);
	sluice_task_free(t);
}

static void
settings_survive(void **state, bool snapshot)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_after after;
	struct sluice_stats *st;
	uint64_t id, first;

	it_start(s);
	c = it_client(s);
	first = put_plain(c, "mail", "before");
	assert_int_equal(
	    it_sluice(s, "tube", "set", "mail", "--ttr", "5s", "--max-attempts",
	        "3", "--backoff", "150ms,400ms", "--keep-done", "1h", NULL),
	    0);
	assert_out_has("ttr           5s\n");
	assert_int_equal(
	    it_sluice(s, "tube", "set", "mail", "--keep-done", "default", NULL),
	    0);
	assert_out_has("keep_done     not kept (default)");
	assert_mail_settings(c);
	/* a task put before keeps what it got */
	t = it_peek(c, first);
	assert_true(t->ttr_ms == 60000 && t->max_attempts == 0);
	sluice_task_free(t);
	assert_puts_follow_mail(c);

	/* A fail without its own delay backs off by the tube's base. */
	t = it_take(c, "mail", 0, 1);
	it_rc(c, sluice_fail(c, t->id, t->lease, "smtp down", -1, &after), 0);
	assert_int_equal(after.state, SLUICE_DELAYED);
	id = t->id;
	sluice_task_free(t);
	t = it_peek(c, id); /* run_at: the fail's time + 150 ms, not 1 s */
	assert_true(t->run_at <= t->updated_at + 150);
	assert_true(t->run_at > t->updated_at);
	sluice_task_free(t);

	/* Stats show them, through the library and the CLI. */
	it_rc(c, sluice_stats(c, "mail", &st), 0);
	assert_int_equal(st->ntubes, 1);
	assert_true(st->tubes[0].conf.ttr_ms == 5000);
	sluice_stats_free(st);
	assert_int_equal(it_sluice(s, "stats", "--json", NULL), 0);
	assert_out_has("\"own\":[\"ttr\",\"max_attempts\",\"backoff\"]");

	if (snapshot)
		it_rc(c, sluice_snapshot(c, NULL), 0);
	/* after the snapshot, a change only the log holds */
	assert_int_equal(
	    it_sluice(s, "tube", "set", "other", "--ttr", "2s", NULL), 0);
	it_crash_restart(s, &c);

	assert_mail_settings(c);
	assert_puts_follow_mail(c);
	assert_int_equal(
	    it_sluice(s, "tube", "show", "other", "--json", NULL), 0);
	assert_out_has("\"ttr_ms\":2000,");
	assert_out_has("\"own\":[\"ttr\"]");
	/* `default` gives the ttr back to the server */
	assert_int_equal(
	    it_sluice(s, "tube", "set", "mail", "--ttr", "default", NULL), 0);
	assert_out_has("ttr           1m (default)");
	id = put_plain(c, "mail", "after");
	t = it_peek(c, id);
	assert_true(t->ttr_ms == 60000);
	assert_int_equal(t->max_attempts, 3);
	sluice_task_free(t);
	it_crash_restart(s, &c);
	assert_int_equal(
	    show(c, "mail").set, SLUICE_TS_MAX_ATTEMPTS | SLUICE_TS_BACKOFF);
	sluice_close(c);
}

static void
test_settings_survive_a_crash_from_the_log(void **state)
{
	settings_survive(state, false);
}

static void
test_settings_survive_a_crash_from_a_snapshot(void **state)
{
	settings_survive(state, true);
}

/* Bad settings are refused, each with its reason. */
static void
test_bad_settings_are_refused(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_tube_conf conf;

	it_start(s);
	c = it_client(s);
	assert_int_equal(
	    it_sluice(s, "tube", "set", "jobs", "--dead-letter", "jobs", NULL),
	    1);
	if (strstr(it_err, "cannot be its own dead letter") == NULL)
		fail_msg("no reason in: %s", it_err);
	assert_int_equal(
	    it_sluice(s, "tube", "set", "jobs", "--backoff", "2s,1s", NULL), 2);
	assert_int_equal(it_sluice(s, "tube", "set", "jobs", "--ttr", "default",
	                     "--ttr", "1s", NULL),
	    2);
	assert_int_equal(it_sluice(s, "tube", "set", "jobs", NULL), 2);
	assert_int_equal(
	    it_sluice(s, "tube", "show", "jobs", "--ttr", "1s", NULL), 2);
	memset(&conf, 0, sizeof(conf));
	conf.set = SLUICE_TS_TTR;
	it_rc(c, sluice_tube_set(c, "jobs", &conf, 0, NULL), SLUICE_EINVAL);
	conf.ttr_ms = 1000;
	it_rc(c, sluice_tube_set(c, "jobs", &conf, SLUICE_TS_TTR, NULL),
	    SLUICE_EINVAL);
	conf.set = SLUICE_TS_DEAD_LETTER;
	strcpy(conf.dead_letter, "no such!");
	it_rc(c, sluice_tube_set(c, "jobs", &conf, 0, NULL), SLUICE_ETUBE);
	/* nothing of it was kept */
	assert_int_equal(show(c, "jobs").set, 0);
	sluice_close(c);
}

/* A task of `tube` taken and failed once more than it may be. */
static uint64_t
fail_to_the_end(struct sluice_client *c, const char *tube, const char *text)
{
	struct sluice_task *t = it_take(c, tube, 0, 1);
	uint64_t id = t->id;

	it_rc(c, sluice_fail(c, t->id, t->lease, text, -1, NULL), 0);
	sluice_task_free(t);
	return id;
}

static void
assert_dead(struct sluice_client *c, uint64_t id, const char *tube,
    uint32_t attempts, const char *error, const char *payload)
{
	struct sluice_task *t = it_peek(c, id);

	assert_non_null(t);
	assert_string_equal(t->tube, tube);
	assert_int_equal(t->state, SLUICE_READY);
	assert_int_equal(t->attempts, attempts);
	if (error != NULL)
		assert_string_equal(t->last_error, error);
	assert_int_equal(t->payload_len, strlen(payload));
	assert_memory_equal(t->payload, payload, t->payload_len);
	sluice_task_free(t);
}

static void
test_dead_letters_arrive_ready_and_survive_a_crash(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c, *w;
	struct sluice_tube_conf conf;
	const char *tubes[] = { "orders" };
	struct sluice_take_opts o = { .tubes = tubes, .ntubes = 1, .max = 1 };
	struct sluice_task *t;
	struct it_counts k;
	uint64_t failed, buried, lost;

	it_start(s);
	c = it_client(s);
	memset(&conf, 0, sizeof(conf));
	conf.set = SLUICE_TS_MAX_ATTEMPTS | SLUICE_TS_DEAD_LETTER;
	conf.max_attempts = 1;
	strcpy(conf.dead_letter, "orders.dead");
	it_rc(c, sluice_tube_set(c, "orders", &conf, 0, NULL), 0);
	/* the dead-letter tube sends its own buried tasks on: not followed
	 * for a task that just arrived */
	assert_int_equal(it_sluice(s, "tube", "set", "orders.dead",
	                     "--dead-letter", "orders.dead2", NULL),
	    0);

	/* a fail at max attempts */
	put_plain(c, "orders", "fail me");
	failed = fail_to_the_end(c, "orders", "card declined");
	assert_dead(c, failed, "orders.dead", 1, "card declined", "fail me");
	/* a worker's bury */
	put_plain(c, "orders", "bury me");
	t = it_take(c, "orders", 0, 1);
	buried = t->id;
	it_rc(c, sluice_bury(c, t->id, t->lease, NULL), 0);
	sluice_task_free(t);
	assert_dead(c, buried, "orders.dead", 1, NULL, "bury me");
	/* a lost lease at max attempts: the worker's connection closes */
	put_plain(c, "orders", "lose me");
	w = it_client(s); /* a session lease: it ends with w */
	{
		struct sluice_task *ts = NULL;
		size_t n = 0;

		it_rc(w, sluice_take(w, &o, &ts, &n), 0);
		assert_int_equal(n, 1);
		lost = ts[0].id;
		sluice_task_free(ts);
	}
	sluice_close(w);
	assert_true(it_wait_state(c, lost, SLUICE_READY, 10000) >= 0);
	assert_dead(c, lost, "orders.dead", 1, NULL, "lose me");
	k = it_counts(c, "orders");
	assert_true(k.buried == 0 && k.ready == 0);

	it_rc(c, sluice_snapshot(c, NULL), 0);
	/* one more after the snapshot: only the log has it */
	put_plain(c, "orders", "after the snapshot");
	failed = fail_to_the_end(c, "orders", "out of stock");
	it_crash_restart(s, &c);

	/* through the CLI: where each went, what it kept */
	assert_int_equal(it_sluice(s, "list", "-t", "orders.dead", "--payloads",
	                     "--json", NULL),
	    0);
	assert_out_has("\"payload\":\"fail me\"");
	assert_out_has("\"last_error\":\"card declined\"");
	assert_out_has("\"payload\":\"bury me\"");
	assert_out_has("\"payload\":\"lose me\"");
	assert_dead(
	    c, failed, "orders.dead", 1, "out of stock", "after the snapshot");
	k = it_counts(c, "orders.dead");
	assert_true(k.ready == 4 && k.buried == 0);
	assert_true(it_counts(c, "orders.dead2").ready == 0);
	/* taken from the dead-letter tube and failed: it has had its
	 * attempts, so its own dead letter applies now */
	t = it_take(c, "orders.dead", 0, 1);
	it_rc(c, sluice_fail(c, t->id, t->lease, "again", -1, NULL), 0);
	assert_dead(c, t->id, "orders.dead2", 2, "again", "fail me");
	sluice_task_free(t);
	sluice_close(c);
}

static void
test_tube_delete_refuses_then_forces_and_survives_a_crash(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_put_opts o;
	struct sluice_stats *st;
	struct sluice_task *t;
	uint64_t deleted, id;
	int created;

	it_start(s);
	c = it_client(s);
	sluice_put_opts_init(&o);
	o.tube = "old";
	o.key = "k-1";
	it_put_o(c, &o, "one");
	o.key = "k-2";
	it_put_o(c, &o, "two");
	t = it_take(c, "old", 0, 1);
	sluice_task_free(t);
	assert_int_equal(
	    it_sluice(s, "tube", "set", "old", "--ttr", "9s", NULL), 0);
	it_rc(c, sluice_tube_delete(c, "old", 0, NULL), SLUICE_ENOTEMPTY);
	assert_int_equal(it_sluice(s, "tube", "delete", "old", NULL), 1);
	if (strstr(it_err, "still has 2 task(s)") == NULL)
		fail_msg("no reason in: %s", it_err);
	assert_int_equal(it_sluice(s, "tube", "delete", "nowhere", NULL), 1);
	assert_int_equal(
	    it_sluice(s, "tube", "delete", "old", "--force", "--json", NULL),
	    0);
	assert_out_has("{\"tube\":\"old\",\"deleted\":2}");
	/* the keys are free at once */
	o.key = "k-1";
	it_rc(c, sluice_put(c, &o, "new", 3, &id, &created), 0);
	assert_int_equal(created, 1);
	it_rc(c, sluice_tube_delete(c, "old", 1, &deleted), 0);
	assert_true(deleted == 1);
	/* an empty tube goes without force */
	put_plain(c, "empty", "x");
	t = it_take(c, "empty", 0, 1);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	it_rc(c, sluice_tube_delete(c, "empty", 0, &deleted), 0);
	assert_true(deleted == 0);
	put_plain(c, "kept", "y");
	it_crash_restart(s, &c);

	/* gone after the restart: not listed, no settings, keys free */
	it_rc(c, sluice_stats(c, NULL, &st), 0);
	assert_int_equal(st->ntubes, 1);
	assert_string_equal(st->tubes[0].name, "kept");
	sluice_stats_free(st);
	it_rc(c, sluice_stats(c, "old", &st), SLUICE_ENOTFOUND);
	assert_int_equal(show(c, "old").set, 0);
	o.key = "k-2";
	it_rc(c, sluice_put(c, &o, "again", 5, &id, &created), 0);
	assert_int_equal(created, 1);
	t = it_peek(c, id);
	assert_true(t->ttr_ms == 60000); /* the old settings went with it */
	sluice_task_free(t);
	/* and the new task brought the tube back, with the defaults */
	assert_int_equal(it_sluice(s, "stats", NULL), 0);
	assert_out_has("\nold ");
	sluice_close(c);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_settings_survive_a_crash_from_the_log),
		T(test_settings_survive_a_crash_from_a_snapshot),
		T(test_bad_settings_are_refused),
		T(test_dead_letters_arrive_ready_and_survive_a_crash),
		T(test_tube_delete_refuses_then_forces_and_survives_a_crash),
	};
#undef T
	return cmocka_run_group_tests_name(
	    "tube settings against sluiced", tests, NULL, NULL);
}
