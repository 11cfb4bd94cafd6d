/* Finished tasks against a real sluiced: with --keep-done an acked task
 * stays as done (finish time, duration, attempts, result), shown by peek,
 * peek by key and list --state done, purged after its retention or past
 * --max-done; `sluice delete -t TUBE --state S --older-than DUR` removes a
 * tube's tasks by state and age in one request. Each state is checked
 * through another interface than the one that made it (the CLI against
 * the library and back), and again after a kill -9 and restart. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

enum { ARGS_MAX = 24 };

/* Runs `sluice-log ARGS...` (NULL-ended) on a stopped server's data. */
static int
log_tool(const char *cmd, const char *dir, ...)
{
	char *argv[ARGS_MAX];
	char bin[1024];
	int argc = 0;
	va_list ap;

	snprintf(bin, sizeof(bin), "%s", t_bin("sluice-log"));
	argv[argc++] = bin;
	argv[argc++] = (char *)cmd;
	argv[argc++] = (char *)dir;
	va_start(ap, dir);
	for (char *a; argc < ARGS_MAX - 1 && (a = va_arg(ap, char *)) != NULL;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	return t_run(
	    argv, NULL, it_out, sizeof(it_out), it_err, sizeof(it_err));
}

/* The unsigned number after `"name":` in out. */
static unsigned long long
json_num(const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(it_out, key);
	if (p == NULL)
		fail_msg("no %s in %s", key, it_out);
	return strtoull(p + strlen(key), NULL, 10);
}

static void
out_has(const char *needle)
{
	if (strstr(it_out, needle) == NULL)
		fail_msg("no %s in %s (stderr: %s)", needle, it_out, it_err);
}

static struct t_srv *
server(void **state, const char *const *args)
{
	struct t_srv *s = it_srv(*state, "done");

	for (int i = 0; args[i] != NULL; i++)
		s->args[i] = args[i];
	it_start(s);
	return s;
}

static uint64_t
put_key(struct sluice_client *c, const char *tube, const char *key,
    const char *payload, int *created)
{
	struct sluice_put_opts o;
	uint64_t id = 0;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.key = key;
	it_rc(c, sluice_put(c, &o, payload, strlen(payload), &id, created), 0);
	return id;
}

/* Takes the one ready task of `tube` and acks it with `result`. */
static uint64_t
take_ack(struct sluice_client *c, const char *tube, const char *result)
{
	struct sluice_task *t = it_take(c, tube, 0, 1);
	struct sluice_ack_opts o = { NULL, result };
	struct sluice_after after;
	uint64_t id = t->id;

	it_rc(c, sluice_ack_opts(c, t->id, t->lease, &o, &after), 0);
	assert_int_equal(after.state, SLUICE_DONE);
	sluice_task_free(t);
	return id;
}

/* The done task `id` as the library sees it. */
static void
lib_done(struct sluice_client *c, uint64_t id, const char *result,
    const char *payload)
{
	struct sluice_task *t = it_peek(c, id);

	assert_non_null(t);
	assert_int_equal(t->state, SLUICE_DONE);
	assert_int_equal(t->attempts, 1);
	assert_true(t->finished_at >= t->taken_at && t->taken_at > 0);
	assert_true(t->duration_ms == t->finished_at - t->taken_at);
	assert_true(t->kept_until > t->finished_at);
	assert_int_equal(t->lease, 0);
	assert_string_equal(t->result, result);
	assert_int_equal(t->payload_len, strlen(payload));
	assert_memory_equal(t->payload, payload, t->payload_len);
	sluice_task_free(t);
}

/* Acked tasks stay as done: the library acks with a result, the CLI shows
 * them (peek, peek by key, list --state done), the key is reserved for the
 * dedup window and then goes to a new task; all of it survives a snapshot
 * and a kill -9. */
static void
test_acked_tasks_are_kept_as_done(void **state)
{
	static const char *const args[] = { "--keep-done", "1h",
		"--dedup-window", "1500ms", NULL };
	struct t_srv *s = server(state, args);
	struct sluice_client *c = it_client(s);
	uint64_t a, b, again, fresh;
	char ida[32], idb[32];
	int created = -1;

	a = put_key(c, "mail", "order-7", "to: ann", &created);
	assert_int_equal(created, 1);
	assert_true(take_ack(c, "mail", "sent as <id-1@x>") == a);
	b = it_put(c, "mail", "to: bob");
	assert_true(take_ack(c, "mail", NULL) == b);
	snprintf(ida, sizeof(ida), "%llu", (unsigned long long)a);
	snprintf(idb, sizeof(idb), "%llu", (unsigned long long)b);

	assert_int_equal(it_sluice(s, "peek", ida, "--json", NULL), 0);
	out_has("\"state\":\"done\"");
	out_has("\"result\":\"sent as <id-1@x>\"");
	out_has("\"key\":\"order-7\"");
	assert_true(json_num("finished_at") >= json_num("taken_at"));
	assert_int_equal(it_sluice(s, "peek", "--key", "order-7", "-t", "mail",
	                     "--json", NULL),
	    0);
	assert_true(json_num("id") == a);
	assert_int_equal(it_sluice(s, "list", "-t", "mail", "--state", "done",
	                     "--payloads", "--json", NULL),
	    0);
	out_has("\"result\":null");
	out_has("\"payload\":\"to: ann\"");
	assert_int_equal(
	    it_sluice(s, "peek", "-t", "mail", "--done", "--json", NULL), 0);
	assert_true(json_num("id") == a);
	assert_int_equal(
	    it_sluice(s, "stats", "-t", "mail", "--json", NULL), 0);
	assert_int_equal(json_num("done"), 2);

	/* Within the dedup window the key names the done task. */
	again = put_key(c, "mail", "order-7", "to: ann again", &created);
	assert_int_equal(created, 0);
	assert_true(again == a);

	/* A snapshot, a kill -9: the done tasks come back from both. */
	assert_int_equal(it_sluice(s, "snapshot", NULL), 0);
	it_crash_restart(s, &c);
	lib_done(c, a, "sent as <id-1@x>", "to: ann");
	assert_int_equal(it_sluice(s, "peek", idb, "--json", NULL), 0);
	out_has("\"state\":\"done\"");

	/* Past the window the key is free: a new task gets it, and the
	 * done one keeps its history without the key. */
	for (int i = 0; i < 400; i++) {
		fresh =
		    put_key(c, "mail", "order-7", "to: ann, later", &created);
		if (created)
			break;
		it_sleep_ms(10);
	}
	assert_int_equal(created, 1);
	assert_true(fresh != a);
	assert_int_equal(it_sluice(s, "peek", "--key", "order-7", "-t", "mail",
	                     "--json", NULL),
	    0);
	assert_true(json_num("id") == fresh);
	out_has("\"state\":\"ready\"");
	assert_int_equal(it_sluice(s, "peek", ida, "--json", NULL), 0);
	out_has("\"state\":\"done\"");
	out_has("\"key\":null");
	it_crash_restart(s, &c);
	assert_int_equal(it_state(c, a), SLUICE_DONE);
	assert_int_equal(it_state(c, fresh), SLUICE_READY);
	sluice_close(c);
}

/* The retention ends: the done task is purged by the clock, with no
 * request; and --max-done keeps only the newest. Checked after a kill -9
 * too (the purge is the same function of time on replay). */
static void
test_done_tasks_are_purged(void **state)
{
	static const char *const args[] = { "--keep-done", "300ms",
		"--max-done", "2", NULL };
	struct t_srv *s = server(state, args);
	struct sluice_client *c = it_client(s);
	uint64_t id[3];
	char one[32];

	for (int i = 0; i < 3; i++) {
		it_put(c, "jobs", "work");
		id[i] = take_ack(c, "jobs", "ok");
	}
	/* The limit of two: the first acked went at the third ack. */
	assert_int_equal(it_state(c, id[0]), 0);
	snprintf(one, sizeof(one), "%llu", (unsigned long long)id[2]);
	assert_int_equal(it_sluice(s, "peek", one, "--json", NULL), 0);
	out_has("\"state\":\"done\"");
	assert_true(it_wait_state(c, id[2], 0, 5000) >= 0);
	assert_true(it_wait_state(c, id[1], 0, 5000) >= 0);
	assert_int_equal(it_sluice(s, "list", "-t", "jobs", "--state", "done",
	                     "--json", NULL),
	    0);
	out_has("{\"tasks\":[]");
	it_crash_restart(s, &c);
	for (int i = 0; i < 3; i++)
		assert_int_equal(it_state(c, id[i]), 0);
	sluice_close(c);
}

/* delete -t TUBE --state S --older-than DUR: one request, the count, keys
 * free at once, done tasks by the time they finished; the library sees
 * the result, and so does a restarted server. */
static void
test_delete_by_state_and_age(void **state)
{
	static const char *const args[] = { "--keep-done", "1h", NULL };
	struct t_srv *s = server(state, args);
	struct sluice_client *c = it_client(s);
	struct sluice_task *t;
	uint64_t n = 0, keyed, done, buried;
	int created = -1;

	for (int i = 0; i < 5; i++)
		it_put(c, "old", "ready one");
	keyed = put_key(c, "old", "nightly", "keyed", &created);
	buried = it_put(c, "other", "to bury");
	t = it_take(c, "other", 0, 1);
	it_rc(c, sluice_bury(c, t->id, t->lease, NULL), 0);
	sluice_task_free(t);
	done = it_put(c, "fin", "finished");
	assert_true(take_ack(c, "fin", "r") == done);

	/* Nothing is an hour old yet. */
	assert_int_equal(it_sluice(s, "delete", "-t", "old", "--state", "ready",
	                     "--older-than", "1h", "--json", NULL),
	    0);
	assert_int_equal(json_num("deleted"), 0);
	assert_int_equal(it_counts(c, "old").ready, 6);
	/* Everything ready, at once: the keyed task's key is free at once. */
	assert_int_equal(it_sluice(s, "delete", "-t", "old", "--state", "ready",
	                     "--older-than", "0", "--json", NULL),
	    0);
	assert_int_equal(json_num("deleted"), 6);
	assert_int_equal(it_counts(c, "old").ready, 0);
	assert_int_equal(it_state(c, keyed), 0);
	assert_true(
	    put_key(c, "old", "nightly", "keyed again", &created) != keyed);
	assert_int_equal(created, 1);
	/* Buried and done, through the library; the CLI sees them gone. */
	it_rc(c, sluice_delete_where(c, "other", SLUICE_BURIED, 0, &n), 0);
	assert_int_equal(n, 1);
	it_rc(c, sluice_delete_where(c, "fin", SLUICE_DONE, 0, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(it_sluice(s, "peek", "--key", "nightly", "-t", "old",
	                     "--json", NULL),
	    0);
	assert_int_equal(it_sluice(s, "list", "-t", "fin", "--state", "done",
	                     "--json", NULL),
	    0);
	out_has("{\"tasks\":[]");
	/* Bad requests: a taken state, a missing age. */
	assert_int_equal(it_sluice(s, "delete", "-t", "old", "--state", "taken",
	                     "--older-than", "1s", NULL),
	    2);
	assert_int_equal(
	    it_sluice(s, "delete", "-t", "old", "--state", "ready", NULL), 2);
	it_rc(c, sluice_delete_where(c, "old", SLUICE_TAKEN, 0, &n),
	    SLUICE_EINVAL);

	it_crash_restart(s, &c);
	assert_int_equal(it_state(c, buried), 0);
	assert_int_equal(it_state(c, done), 0);
	assert_int_equal(it_counts(c, "old").ready, 1);
	sluice_close(c);

	/* The log tool reads the new records and replays them. */
	t_srv_stop(s, SIGKILL);
	assert_int_equal(log_tool("verify", s->data, NULL), 0);
	assert_int_equal(log_tool("dump", s->data, NULL), 0);
	out_has("DELETE_WHERE"); /* the library's, by one state */
	out_has("tube=other state=buried before=");
	out_has("DELETE_AGED"); /* the CLI's, by the last change */
	out_has("tube=old states=ready by=updated before=");
	out_has("-> done dedup_ms=0 keep_ms=3600000");
	out_has("result=\"r\"");
	assert_int_equal(log_tool("dump", s->data, "--json", NULL), 0);
	out_has("\"outcome\":\"done\"");
	out_has("\"state\":\"done\"");
	assert_int_equal(log_tool("state", s->data, "--json", NULL), 0);
	out_has("\"old\":{\"ready\":1,\"delayed\":0,\"taken\":0,"
	        "\"buried\":0,");
	out_has("\"totals\":{\"ready\":1,");
	out_has("\"oldest_ready_age_ms\":0,\"done\":0,");
}

static uint64_t
lsn_of(struct sluice_client *c)
{
	struct sluice_stats *st = NULL;
	uint64_t lsn;

	it_rc(c, sluice_stats(c, NULL, &st), 0);
	lsn = st->lsn;
	sluice_stats_free(st);
	return lsn;
}

/* Followers apply the same records: a done task (the follower keeps no
 * finished tasks of its own: the record says how long) and a delete by
 * state and age arrive as the leader has them. */
static void
test_followers_get_done_tasks_and_deletes(void **state)
{
	static char repl[64];
	static const char *const largs[] = { "--keep-done", "1h",
		"--repl-listen", repl, NULL };
	static const char *const fargs[] = { "--follow", repl, NULL };
	struct t_srv *l, *f;
	struct sluice_client *lc, *fc;
	uint64_t done, n = 0;
	int64_t end;
	char id[32];

	snprintf(repl, sizeof(repl), "tcp://127.0.0.1:%d", t_free_port());
	l = server(state, largs);
	f = it_srv(*state, "follower");
	for (int i = 0; fargs[i] != NULL; i++)
		f->args[i] = fargs[i];
	it_start(f);
	lc = it_client(l);
	fc = it_client(f);
	done = it_put(lc, "mail", "to: ann");
	assert_true(take_ack(lc, "mail", "sent") == done);
	it_put(lc, "mail", "old one");
	it_put(lc, "mail", "old two");
	it_rc(lc, sluice_delete_where(lc, "mail", SLUICE_READY, 0, &n), 0);
	assert_int_equal(n, 2);
	end = it_mono_ms() + it_scale(10000, 1, 10000) * 3;
	while (lsn_of(fc) < lsn_of(lc) && it_mono_ms() < end)
		it_sleep_ms(10);
	assert_true(lsn_of(fc) == lsn_of(lc));

	snprintf(id, sizeof(id), "%llu", (unsigned long long)done);
	assert_int_equal(it_sluice(f, "peek", id, "--json", NULL), 0);
	out_has("\"state\":\"done\"");
	out_has("\"result\":\"sent\"");
	assert_int_equal(
	    it_sluice(f, "stats", "-t", "mail", "--json", NULL), 0);
	assert_int_equal(json_num("ready"), 0);
	assert_int_equal(json_num("done"), 1);
	sluice_close(fc);
	sluice_close(lc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_acked_tasks_are_kept_as_done, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_done_tasks_are_purged, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_delete_by_state_and_age, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_followers_get_done_tasks_and_deletes, it_setup,
		    it_teardown),
	};

	return cmocka_run_group_tests_name("done", tests, NULL, NULL);
}
