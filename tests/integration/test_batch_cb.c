/* Batches with callbacks against real servers (docs/queue.md,
 * "Batches"): a batch of 10,000 tasks put with put_batch and drained,
 * with a kill -9 and a restart half way and another after its end, fires
 * its on_success and on_complete callbacks exactly once each, their
 * payloads holding the counts; on_complete fires, and on_success does
 * not, when tasks fail (buried, deleted); a put into a closed or ended
 * batch is refused (SLUICE_EBATCH, through libsluice and the CLI); bad
 * input gets a specific error and changes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_node.h"

enum { N = 10000, WAIT_MS = 20000 };

/* Puts `n` tasks into tube "w" in batch `name`, in requests of
 * SLUICE_BATCH_MAX. */
static void
put_many(struct sluice_client *c, const char *name, int n)
{
	static struct sluice_batch_item items[SLUICE_BATCH_MAX];

	for (int done = 0; done < n;) {
		int k =
		    n - done < SLUICE_BATCH_MAX ? n - done : SLUICE_BATCH_MAX;

		for (int i = 0; i < k; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = "w";
			items[i].opts.batch = name;
			items[i].payload = "x";
			items[i].len = 1;
		}
		it_rc(c, sluice_put_batch(c, items, (size_t)k), 0);
		for (int i = 0; i < k; i++)
			assert_int_equal(items[i].rc, 0);
		done += k;
	}
}

/* Takes and acks up to `n` tasks of "w", 100 at a time; how many. */
static int
drain(struct sluice_client *c, int n)
{
	static struct sluice_lease ls[100];
	static struct sluice_result rs[100];
	const char *tubes[] = { "w" };
	int acked = 0;

	while (acked < n) {
		struct sluice_take_opts o = { tubes, 1, 0, 100, 0, 0, 0 };
		struct sluice_task *t = NULL;
		size_t k = 0;
		int rc = sluice_take(c, &o, &t, &k);

		if (rc == SLUICE_ETIMEDOUT)
			break;
		it_rc(c, rc, 0);
		if ((int)k > n - acked)
			k = (size_t)(n - acked); /* the rest go back by ttr */
		for (size_t i = 0; i < k; i++)
			ls[i] = (struct sluice_lease) { t[i].id, t[i].lease };
		it_rc(c, sluice_ack_batch(c, ls, k, rs), 0);
		for (size_t i = 0; i < k; i++)
			assert_int_equal(rs[i].rc, 0);
		acked += (int)k;
		sluice_task_free(t);
	}
	return acked;
}

/* The tasks of `tube`, every state. */
static size_t
tasks(struct sluice_client *c, const char *tube, struct sluice_task **t)
{
	size_t n = 0;

	it_rc(c,
	    sluice_list(c, tube, 0, SLUICE_ORDER_ID, SLUICE_LIST_MAX, 1, t, &n),
	    0);
	return n;
}

/* Waits until batch `name` has put what it owes. */
static struct sluice_batch
wait_fired(struct sluice_client *c, const char *name, bool success)
{
	int64_t end = it_mono_ms() + it_scale(WAIT_MS, 1, 1);
	struct sluice_batch b;

	for (;;) {
		it_rc(c, sluice_batch_show(c, name, &b), 0);
		if (b.ended &&
		    (b.complete_tube[0] == '\0' || b.complete_id != 0) &&
		    (!success || b.success_id != 0))
			return b;
		if (it_mono_ms() > end)
			fail_msg("batch %s: callbacks not put (ended %d)", name,
			    b.ended);
		it_sleep_ms(20);
	}
}

/* 10,000 tasks, a crash half way and one after the end: each callback is
 * put once, with the counts. */
static void
test_ten_thousand_exactly_once(void **state)
{
	struct t_srv *s = it_srv(*state, "n");
	struct sluice_batch_callback ok = { "ok", "all good", 8 };
	struct sluice_batch_callback done = { "done", NULL, 0 };
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_batch b;
	int acked;

	it_start(s);
	c = it_client(s);
	it_rc(c, sluice_batch_set(c, "big", &ok, &done, 0, NULL), 0);
	put_many(c, "big", N);
	it_rc(c, sluice_batch_set(c, "big", NULL, NULL, 1, &b), 0);
	assert_true(b.closed);
	assert_int_equal(b.total, N);
	assert_int_equal(b.ready, N);
	acked = drain(c, N / 2);
	assert_int_equal(acked, N / 2);
	it_crash_restart(s, &c);
	it_rc(c, sluice_batch_show(c, "big", &b), 0);
	assert_int_equal(b.acked, N / 2);
	assert_false(b.ended);
	assert_int_equal(tasks(c, "ok", &t), 0);
	sluice_task_free(t);
	acked += drain(c, N);
	assert_int_equal(acked, N);
	b = wait_fired(c, "big", true);
	assert_int_equal(b.acked, N);
	assert_int_equal(b.failed + b.buried, 0);
	assert_true(b.ended_at >= b.started_at && b.started_at > 0);
	it_crash_restart(s, &c);
	it_sleep_ms(300); /* a leader that would fire again has by now */
	assert_int_equal(tasks(c, "ok", &t), 1);
	assert_non_null(strstr(t[0].payload, "\"event\":\"success\""));
	assert_non_null(strstr(t[0].payload, "\"acked\":10000"));
	assert_non_null(strstr(t[0].payload, "\"payload\":\"all good\""));
	assert_true(t[0].id == b.success_id);
	sluice_task_free(t);
	assert_int_equal(tasks(c, "done", &t), 1);
	assert_non_null(strstr(t[0].payload, "\"event\":\"complete\""));
	assert_true(t[0].id == b.complete_id);
	sluice_task_free(t);
	it_rc(c, sluice_batch_show(c, "big", &b), 0);
	assert_true(b.ended);
	/* the CLI reads the same */
	assert_int_equal(
	    it_sluice(s, "batch", "show", "big", "--json", NULL), 0);
	assert_non_null(strstr(it_out, "\"acked\":10000"));
	assert_non_null(strstr(it_out, "\"ended\":true"));
	sluice_close(c);
}

/* A batch that ends on a leader with a follower: the follower applies
 * the end and the fire and puts nothing itself; promoted after the
 * leader's kill -9, and restarted alone, it never puts the callbacks
 * again. */
static void
test_failover_fires_once(void **state)
{
	struct sluice_batch_callback ok = { "ok", NULL, 0 };
	struct it_node l, f;
	struct sluice_task *t;
	struct sluice_batch b;

	it_node_init(state, &l, "l");
	it_node_init(state, &f, "f");
	it_node_follows(&f, &l);
	it_node_start(&l);
	it_node_start(&f);
	it_rc(l.c, sluice_batch_set(l.c, "fo", &ok, NULL, 0, NULL), 0);
	put_many(l.c, "fo", 300);
	it_rc(l.c, sluice_batch_set(l.c, "fo", NULL, NULL, 1, NULL), 0);
	assert_int_equal(drain(l.c, 300), 300);
	b = wait_fired(l.c, "fo", true);
	it_node_caught_up(&l, &f);
	it_rc(f.c, sluice_batch_show(f.c, "fo", &b), 0);
	assert_true(b.ended && b.success_id != 0);
	it_node_kill(&l);
	it_rc(f.c, sluice_promote(f.c, NULL), 0);
	it_sleep_ms(500);
	assert_int_equal(tasks(f.c, "ok", &t), 1);
	assert_true(t[0].id == b.success_id);
	sluice_task_free(t);
	it_node_kill(&f);
	for (size_t a = 0; f.s->args[a] != NULL; a += 2)
		if (strcmp(f.s->args[a], "--follow") == 0)
			f.s->args[a] = NULL; /* the last pair */
	it_node_start(&f);
	it_sleep_ms(500);
	assert_int_equal(tasks(f.c, "ok", &t), 1);
	sluice_task_free(t);
	it_rc(f.c, sluice_batch_show(f.c, "fo", &b), 0);
	assert_int_equal(b.acked, 300);
}

/* A fatal fail and a delete: on_complete with the failures counted, no
 * on_success; adding after the end is refused. */
static void
test_complete_with_failures(void **state)
{
	struct t_srv *s = it_srv(*state, "n");
	struct sluice_batch_callback ok = { "ok", NULL, 0 };
	struct sluice_batch_callback done = { "done", "p", 1 };
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct sluice_task *t;
	struct sluice_batch b;
	uint64_t a, d;
	int rc;

	it_start(s);
	c = it_client(s);
	sluice_put_opts_init(&o);
	o.tube = "w";
	o.batch = "f";
	a = it_put_o(c, &o, "a");
	d = it_put_o(c, &o, "d");
	it_put_o(c, &o, "e");
	assert_int_equal(it_sluice(s, "batch", "set", "f", "--on-success", "ok",
	                     "--on-complete", "done:p", "--close", NULL),
	    0);
	(void)ok;
	(void)done;
	t = it_take(c, "w", 1000, 0);
	assert_true(t->id == a);
	it_rc(c, sluice_fail_fatal(c, t->id, t->lease, "boom", NULL), 0);
	sluice_task_free(t);
	it_rc(c, sluice_delete(c, d), 0);
	assert_int_equal(drain(c, 1), 1);
	b = wait_fired(c, "f", false);
	assert_int_equal(b.acked, 1);
	assert_int_equal(b.buried, 1);
	assert_int_equal(b.failed, 1);
	assert_true(b.success_id == 0);
	assert_int_equal(tasks(c, "ok", &t), 0);
	sluice_task_free(t);
	assert_int_equal(tasks(c, "done", &t), 1);
	assert_non_null(
	    strstr(t[0].payload, "\"buried\":1,\"acked\":1,\"failed\":1"));
	sluice_task_free(t);
	assert_int_equal(it_node_kv(c, "batches"), 1);
	assert_int_equal(it_node_kv(c, "batch_firings"), 1);
	/* adding after the end */
	rc = sluice_put(c, &o, "late", 4, NULL, NULL);
	assert_int_equal(rc, SLUICE_EBATCH);
	assert_non_null(strstr(sluice_errmsg(c), "closed or ended"));
	assert_int_not_equal(
	    it_sluice(s, "put", "-t", "w", "--batch", "f", "late", NULL), 0);
	assert_non_null(strstr(it_err, "batch 'f' is closed or ended"));
	rc = sluice_batch_set(c, "f", &ok, NULL, 0, NULL);
	assert_int_equal(rc, SLUICE_EBATCH);
	sluice_close(c);
}

/* Bad input: a specific error, nothing changed. */
static void
test_bad_input(void **state)
{
	struct t_srv *s = it_srv(*state, "n");
	struct sluice_batch_callback bad = { "no spaces", NULL, 0 };
	struct sluice_batch_callback big = { "ok", NULL, 65537 };
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct sluice_batch b;
	char *pl = calloc(1, 65537);

	assert_non_null(pl);
	big.payload = pl;
	it_start(s);
	c = it_client(s);
	it_rc(c, sluice_batch_set(c, "b", &bad, NULL, 0, NULL), SLUICE_ETUBE);
	if (strstr(sluice_errmsg(c), "tube") == NULL)
		fail_msg("errmsg: %s", sluice_errmsg(c));
	it_rc(c, sluice_batch_set(c, "b", &big, NULL, 0, NULL), SLUICE_ETOOBIG);
	it_rc(
	    c, sluice_batch_set(c, "a b", NULL, NULL, 1, NULL), SLUICE_EINVAL);
	it_rc(
	    c, sluice_batch_set(c, "b", NULL, NULL, 1, NULL), SLUICE_ENOTFOUND);
	it_rc(c, sluice_batch_show(c, "b", &b), SLUICE_ENOTFOUND);
	sluice_put_opts_init(&o);
	o.batch = "bad name";
	it_rc(c, sluice_put(c, &o, "x", 1, NULL, NULL), SLUICE_EINVAL);
	o.batch = "b";
	o.period_ms = 1000;
	it_rc(c, sluice_put(c, &o, "x", 1, NULL, NULL), SLUICE_EINVAL);
	it_rc(c, sluice_batch_show(c, "b", &b), SLUICE_ENOTFOUND);
	assert_int_not_equal(it_sluice(s, "batch", "show", "b", NULL), 0);
	assert_non_null(strstr(it_err, "no such batch"));
	assert_int_not_equal(it_sluice(s, "batch", "set", "b", NULL), 0);
	assert_int_not_equal(it_sluice(s, "batch", "frob", "b", NULL), 0);
	free(pl);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_ten_thousand_exactly_once, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_complete_with_failures, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_input, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_failover_fires_once, it_setup, it_node_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
