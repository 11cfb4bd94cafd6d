/* Batch ack and batch delete against a real sluiced: many tasks in one
 * request, each with its own result (the lease rule per item), checked
 * afterwards through the CLI and again after a kill -9 and a restart; the
 * CLI's batch forms (ack ID:LEASE..., ack --lines, delete ID...), checked
 * through the library; and update, of a waiting task in place and of a
 * taken one's priority, checked through the CLI and after a restart. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "it.h"

enum { OUT = 64 << 10 };

static char out[OUT], err[OUT];

static struct t_srv *
up(void **state)
{
	struct t_srv *s = it_srv(*state, "batch");

	it_start(s);
	return s;
}

/* `n` tasks put into `tube`, their ids in ids[]. */
static void
put_n(struct sluice_client *c, const char *tube, uint64_t *ids, int n)
{
	for (int i = 0; i < n; i++)
		ids[i] = it_put(c, tube, "work");
}

/* Takes exactly `n` tasks of `tube` with detached leases (they outlive the
 * handle and a restart: the CLI, a stateless client, acks them). */
static struct sluice_task *
take_n(struct sluice_client *c, const char *tube, uint32_t n)
{
	const char *tubes[] = { tube };
	struct sluice_take_opts o = {
		.tubes = tubes, .ntubes = 1, .max = n, .detach = 1
	};
	struct sluice_task *t = NULL;
	size_t got = 0;

	it_rc(c, sluice_take(c, &o, &t, &got), 0);
	assert_int_equal(got, n);
	return t;
}

/* `sluice peek ID`: 0 when the task exists, 1 when it does not. */
static int
cli_peek(const struct t_srv *s, uint64_t id)
{
	char arg[32];

	snprintf(arg, sizeof(arg), "%" PRIu64, id);
	return it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "peek",
	    arg, NULL);
}

/* One request acks three tasks and refuses a stale lease, an unknown id
 * and a task that is not taken, each alone; one request deletes two tasks
 * and refuses an unknown id. The CLI sees the result, and so does the
 * server after a kill -9 and a restart. */
static void
test_batch_ack_and_delete_answer_each_task(void **state)
{
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	struct sluice_result res[6];
	uint64_t ids[6], del[3];
	struct sluice_task *t;

	put_n(c, "b", ids, 6);
	t = take_n(c, "b", 4); /* ids[0..3]; ids[4], ids[5] stay ready */
	{
		struct sluice_lease items[6] = {
			{ t[0].id, t[0].lease },
			{ t[1].id, t[1].lease },
			{ t[2].id, t[2].lease + 1 }, /* stale */
			{ 999999, 1 },               /* unknown */
			{ ids[4], 1 },               /* ready, not taken */
			{ t[3].id, t[3].lease },
		};

		it_rc(c, sluice_ack_batch(c, items, 6, res), 0);
	}
	assert_int_equal(res[0].rc, 0);
	assert_int_equal(res[1].rc, 0);
	assert_int_equal(res[2].rc, SLUICE_ESTALE);
	assert_non_null(strstr(res[2].errmsg, "is stale"));
	assert_int_equal(res[3].rc, SLUICE_ENOTFOUND);
	assert_non_null(strstr(res[3].errmsg, "no such task"));
	assert_int_equal(res[4].rc, SLUICE_ESTATE);
	assert_non_null(strstr(res[4].errmsg, "ready, not taken"));
	assert_int_equal(res[5].rc, 0);
	assert_string_equal(res[5].errmsg, "");

	del[0] = ids[4];
	del[1] = 888888;
	del[2] = ids[5];
	it_rc(c, sluice_delete_batch(c, del, 3, res), 0);
	assert_int_equal(res[0].rc, 0);
	assert_int_equal(res[1].rc, SLUICE_ENOTFOUND);
	assert_int_equal(res[2].rc, 0);

	/* through the CLI: only the task with the stale ack is left */
	for (int i = 0; i < 6; i++)
		assert_int_equal(
		    cli_peek(s, ids[i]), ids[i] == t[2].id ? 0 : 1);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "stats", "-t", "b", "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"ready\":0,\"delayed\":0,\"taken\":1"));

	it_crash_restart(s, &c);
	for (int i = 0; i < 6; i++)
		assert_int_equal(
		    it_state(c, ids[i]), ids[i] == t[2].id ? SLUICE_TAKEN : 0);
	assert_int_equal(it_counts(c, "b").taken, 1);
	sluice_task_free(t);
	sluice_close(c);
}

/* The CLI's batch forms: ack ID:LEASE..., ack --lines, delete ID...; one
 * result per task, exit 1 when any was refused; the library and a
 * restarted server agree. */
static void
test_cli_batch_forms(void **state)
{
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	char a0[64], a1[128], stale[64], lines[256], d0[32], d1[32];
	uint64_t ids[5];
	struct sluice_task *t;

	put_n(c, "cli", ids, 5);
	t = take_n(c, "cli", 3);
	snprintf(a0, sizeof(a0), "%" PRIu64 ":%" PRIu64, t[0].id, t[0].lease);
	snprintf(stale, sizeof(stale), "%" PRIu64 ":%" PRIu64, t[1].id,
	    t[1].lease + 7);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "ack", a0, stale, "--json", NULL),
	    1);
	snprintf(
	    a1, sizeof(a1), "[{\"id\":%" PRIu64 ",\"acked\":true}\n,", t[0].id);
	assert_non_null(strstr(out, a1));
	assert_non_null(strstr(out, "\"code\":2}\n]"));
	assert_non_null(strstr(err, "is stale"));

	/* --lines: a good line, a line that is no "ID LEASE", a good one */
	snprintf(lines, sizeof(lines),
	    "%" PRIu64 " %" PRIu64 "\nnot a lease\n\t%" PRIu64 "  %" PRIu64
	    "\n",
	    t[1].id, t[1].lease, t[2].id, t[2].lease);
	assert_int_equal(it_cli(s->url, lines, out, sizeof(out), err,
	                     sizeof(err), "ack", "--lines", NULL),
	    1);
	snprintf(a1, sizeof(a1), "acked %" PRIu64 "\nacked %" PRIu64 "\n",
	    t[1].id, t[2].id);
	assert_string_equal(out, a1);
	assert_non_null(strstr(err, "line 2: expected ID LEASE"));

	/* delete of several ids: each deleted, the unknown one refused */
	snprintf(d0, sizeof(d0), "%" PRIu64, ids[3]);
	snprintf(d1, sizeof(d1), "%" PRIu64, ids[4]);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "delete", d0, "777777", d1, NULL),
	    1);
	snprintf(a1, sizeof(a1), "deleted %s\ndeleted %s\n", d0, d1);
	assert_string_equal(out, a1);
	assert_non_null(strstr(err, "delete 777777: no such task"));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "ack", "1:2", "--lease", "2", NULL),
	    2);

	for (int i = 0; i < 5; i++)
		assert_int_equal(it_state(c, ids[i]), 0);
	it_crash_restart(s, &c);
	for (int i = 0; i < 5; i++)
		assert_int_equal(it_state(c, ids[i]), 0);
	assert_int_equal(it_node_kv(c, "tasks"), 0);
	sluice_task_free(t);
	sluice_close(c);
}

/* update through the library: a waiting task's priority, payload, ttr
 * and run time change in place (attempts and key stay); the CLI shows it,
 * and so does the server after a kill -9. A taken task may change its
 * priority only; a buried one takes no new time. */
static void
test_update_changes_a_waiting_task_in_place(void **state)
{
	struct t_srv *s = up(state);
	struct sluice_client *c = it_client(s);
	struct sluice_update_opts u;
	struct sluice_put_opts po;
	struct sluice_after after;
	struct sluice_task *t, *p;
	uint64_t id, taken, buried;
	char arg[32];

	sluice_put_opts_init(&po);
	po.tube = "u";
	po.key = "row-7";
	id = it_put_o(c, &po, "old");
	sluice_update_opts_init(&u);
	u.priority = 3;
	u.ttr_ms = 5000;
	u.max_attempts = 2;
	u.delay_ms = 3600 * 1000;
	u.set_payload = 1;
	u.payload = "new payload";
	u.len = 11;
	it_rc(c, sluice_update(c, id, &u, &after), 0);
	assert_int_equal(after.state, SLUICE_DELAYED);

	snprintf(arg, sizeof(arg), "%" PRIu64, id);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "peek", arg, "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"state\":\"delayed\""));
	assert_non_null(strstr(out, "\"payload\":\"new payload\""));
	assert_non_null(strstr(out, "\"priority\":3,"));
	assert_non_null(strstr(out, "\"key\":\"row-7\""));
	assert_non_null(strstr(out, "\"ttr\":5000,"));
	assert_non_null(strstr(out, "\"max_attempts\":2,"));

	/* back to ready through the CLI, then a taken task and a buried one */
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "update", arg, "--delay", "0s", NULL),
	    0);
	taken = it_put(c, "v", "held");
	buried = it_put(c, "w", "parked");
	t = it_take(c, "v", 0, 1);
	sluice_update_opts_init(&u);
	u.ttr_ms = 1000;
	it_rc(c, sluice_update(c, taken, &u, &after), SLUICE_ESTATE);
	assert_non_null(
	    strstr(sluice_errmsg(c), "only its priority can change"));
	sluice_update_opts_init(&u);
	u.priority = 0;
	it_rc(c, sluice_update(c, taken, &u, &after), 0);
	assert_int_equal(after.state, SLUICE_TAKEN);
	it_rc(c, sluice_bury(c, buried, SLUICE_FORCE, NULL), 0);
	snprintf(arg, sizeof(arg), "%" PRIu64, buried);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "update", arg, "--delay", "1s", NULL),
	    1);
	assert_non_null(strstr(err, "is buried"));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "update", arg, "-p", "9", NULL),
	    0);
	sluice_update_opts_init(&u);
	it_rc(c, sluice_update(c, buried, &u, &after), SLUICE_EINVAL);

	it_crash_restart(s, &c);
	p = it_peek(c, id);
	assert_int_equal(p->state, SLUICE_READY);
	assert_int_equal(p->priority, 3);
	assert_int_equal(p->attempts, 0);
	assert_true(p->ttr_ms == 5000 && p->max_attempts == 2);
	assert_string_equal(p->payload, "new payload");
	assert_string_equal(p->key, "row-7");
	sluice_task_free(p);
	p = it_peek(c, taken); /* detached: still taken, priority 0 */
	assert_int_equal(p->state, SLUICE_TAKEN);
	assert_int_equal(p->priority, 0);
	sluice_task_free(p);
	p = it_peek(c, buried);
	assert_int_equal(p->state, SLUICE_BURIED);
	assert_int_equal(p->priority, 9);
	sluice_task_free(p);
	sluice_task_free(t);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_batch_ack_and_delete_answer_each_task, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cli_batch_forms, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_update_changes_a_waiting_task_in_place, it_setup,
		    it_teardown),
	};

	return cmocka_run_group_tests_name("batch", tests, NULL, NULL);
}
