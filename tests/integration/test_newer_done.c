/* put --key K --replace --if-newer V after K's task finished, against
 * real sluiced nodes: the version of the finished work is kept with the
 * key for the dedup window, so a late put of older (or the same) content
 * is stale, as it is while the task lives, and creates nothing; a newer
 * one creates a task. Checked with a task acked and deleted, with one
 * kept as done (--keep-done, whose peek shows the version), after a
 * snapshot and a kill -9 (the version comes back from the snapshot and
 * from the log), and on a follower promoted after the ack. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "it_node.h"

/* A versioned upsert of `payload` under `key` in tube "rows". */
static struct sluice_put_result
upsert(struct sluice_client *c, const char *key, uint64_t version,
    const char *payload)
{
	struct sluice_put_result res;
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = "rows";
	o.key = key;
	o.replace = 1;
	o.if_newer = version;
	it_rc(c, sluice_put_ex(c, &o, payload, strlen(payload), &res), 0);
	return res;
}

/* Takes the next task of "rows", which must be `id`, and acks it. */
static void
take_ack(struct sluice_client *c, uint64_t id)
{
	struct sluice_task *t = it_take(c, "rows", 0, 1);

	assert_true(t->id == id);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
}

/* A put of `version` is stale and names the finished task `id`. */
static void
assert_stale(
    struct sluice_client *c, const char *key, uint64_t version, uint64_t id)
{
	struct sluice_put_result res = upsert(c, key, version, "late");

	assert_true(res.stale_version);
	assert_true(!res.created && !res.replaced);
	assert_true(res.id == id);
}

static int
ready(struct sluice_client *c)
{
	return (int)it_counts(c, "rows").ready;
}

static void
test_a_late_older_put_after_the_ack_is_stale(void **state)
{
	struct t_srv *s = it_srv(*state, "newer-done");
	struct sluice_client *c;
	struct sluice_put_result res;
	char out[4096], err[4096];
	uint64_t a, b, lsn;

	it_start(s);
	c = it_client(s);
	a = upsert(c, "row-1", 101, "v101").id;
	take_ack(c, a);
	/* the defect: this created a new task with the older content */
	assert_stale(c, "row-1", 50, a);
	assert_stale(c, "row-1", 101, a);
	assert_int_equal(ready(c), 0);
	/* the CLI says so as it does for a live task */
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "put", "-t", "rows", "--key", "row-1",
	                     "--replace", "--if-newer", "60", "v60", NULL),
	    0);
	assert_non_null(strstr(err, "nothing changed"));
	assert_int_equal(ready(c), 0);

	/* in the log only, then in a snapshot */
	b = upsert(c, "row-2", 7, "v7").id;
	take_ack(c, b);
	it_crash_restart(s, &c);
	assert_stale(c, "row-1", 100, a);
	assert_stale(c, "row-2", 6, b);
	it_rc(c, sluice_snapshot(c, &lsn), 0);
	it_crash_restart(s, &c);
	assert_stale(c, "row-1", 100, a);
	assert_stale(c, "row-2", 7, b);
	assert_int_equal(ready(c), 0);

	/* newer content is new work */
	res = upsert(c, "row-1", 102, "v102");
	assert_true(res.created && !res.stale_version && res.id != a);
	assert_int_equal(ready(c), 1);
	sluice_close(c);
}

/* With --keep-done the version stays with the finished task as long as
 * it is kept, past the dedup window (its key is no longer reserved: a
 * plain put with it is new work). */
static void
test_a_done_task_keeps_its_version(void **state)
{
	static const char *const args[] = { "--keep-done", "1h",
		"--dedup-window", "300ms", NULL };
	struct t_srv *s = it_srv(*state, "newer-kept");
	struct sluice_put_result res;
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct sluice_task *t;
	uint64_t a, b, lsn;

	memcpy(s->args, args, sizeof(args));
	it_start(s);
	c = it_client(s);
	a = upsert(c, "row-1", 101, "v101").id;
	take_ack(c, a);
	assert_stale(c, "row-1", 50, a); /* within the window */
	sluice_put_opts_init(&o);
	o.tube = "rows";
	o.key = "row-2"; /* no version: free once the window is over */
	b = it_put_o(c, &o, "plain");
	take_ack(c, b);
	it_sleep_ms(600); /* twice the dedup window */
	it_rc(c, sluice_put_ex(c, &o, "again", 5, &res), 0);
	assert_true(res.created && res.id != b);
	t = it_peek(c, a);
	assert_int_equal(t->state, SLUICE_DONE);
	assert_true(t->version == 101);
	sluice_task_free(t);
	assert_stale(c, "row-1", 50, a);
	it_crash_restart(s, &c); /* from the log */
	assert_stale(c, "row-1", 50, a);
	it_rc(c, sluice_snapshot(c, &lsn), 0); /* then from a snapshot */
	it_crash_restart(s, &c);
	t = it_peek(c, a);
	assert_true(t->state == SLUICE_DONE && t->version == 101);
	sluice_task_free(t);
	assert_stale(c, "row-1", 50, a);
	assert_int_equal(ready(c), 1); /* row-2's new task */
	/* newer content is new work; the done task keeps its own */
	res = upsert(c, "row-1", 102, "v102");
	assert_true(res.created && res.id != a);
	sluice_close(c);
}

static void
test_a_follower_keeps_the_version(void **state)
{
	struct it_node l, f;
	uint64_t a;

	it_node_init(state, &l, "l");
	it_node_init(state, &f, "f");
	it_node_start(&l);
	it_node_follows(&f, &l);
	it_node_start(&f);
	a = upsert(l.c, "row-1", 101, "v101").id;
	take_ack(l.c, a);
	it_node_caught_up(&l, &f);
	it_node_kill(&l);
	it_rc(f.c, sluice_promote(f.c, NULL), 0);
	assert_stale(f.c, "row-1", 50, a);
	assert_int_equal(ready(f.c), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_a_late_older_put_after_the_ack_is_stale, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_done_task_keeps_its_version, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_follower_keeps_the_version, it_setup,
		    it_node_teardown),
	};

	return cmocka_run_group_tests_name("newer_done", tests, NULL, NULL);
}
