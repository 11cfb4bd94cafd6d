/* Batches with callbacks against real servers (docs/queue.md,
 * "Batches"): a batch of 10,000 tasks put with put_batch and drained,
 * with a kill -9 and a restart half way and another after its end, fires
 * its on_success and on_complete callbacks exactly once each, their
 * payloads holding the counts; so does one over a failover half way
 * (finished over HTTP on the promoted follower), and one put, closed,
 * drained and shown through HTTP alone, and one through the CLI alone,
 * each with a kill -9 half way; a batch cancelled ends and puts
 * on_complete alone once its taken task's lease ends; a leader
 * killed between a batch's end and its callbacks' firing (held there by
 * sluiced-fault) leaves them owed, and the restarted node, or the
 * promoted follower, puts them once; on_complete fires, and on_success
 * does not, when tasks fail (buried, deleted); a put into a closed or
 * ended batch is refused (SLUICE_EBATCH, through libsluice, the CLI and
 * HTTP); bad input gets a specific error and changes nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"
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

/* HTTP: puts `n` tasks into tube "w" in batch `name` (`"in_batch"`), in
 * batch puts of SLUICE_BATCH_MAX items. */
static void
http_put_many(int port, const char *name, int n)
{
	size_t cap = 64 * SLUICE_BATCH_MAX + 16;
	char *body = malloc(cap), *out = NULL;

	assert_non_null(body);
	for (int done = 0; done < n;) {
		int k =
		    n - done < SLUICE_BATCH_MAX ? n - done : SLUICE_BATCH_MAX;
		size_t len = (size_t)snprintf(body, cap, "[");
		const char *p;
		int created = 0;

		for (int i = 0; i < k; i++)
			len += (size_t)snprintf(body + len, cap - len,
			    "%s{\"payload\":\"x\",\"in_batch\":\"%s\"}",
			    i > 0 ? "," : "", name);
		snprintf(body + len, cap - len, "]");
		assert_int_equal(
		    it_http(port, "POST", "/v1/tubes/w/tasks?batch=1", NULL,
		        body, &out),
		    200);
		assert_null(strstr(out, "\"error\""));
		for (p = out; (p = strstr(p, "\"created\":true")) != NULL; p++)
			created++;
		assert_int_equal(created, k);
		free(out);
		done += k;
	}
	free(body);
}

/* HTTP: takes and acks up to `n` tasks of "w", 1,000 at a time (POST
 * /v1/tubes/w/take?n=, POST /v1/tasks/ack); how many. */
static int
http_drain(int port, int n)
{
	size_t cap = 64 * SLUICE_BATCH_MAX + 16;
	char *ack = malloc(cap);
	int acked = 0;

	assert_non_null(ack);
	while (acked < n) {
		char path[64], *body = NULL;
		const char *p, *l;
		size_t len = (size_t)snprintf(ack, cap, "[");
		int k = 0, want = n - acked < 1000 ? n - acked : 1000;

		snprintf(path, sizeof(path), "/v1/tubes/w/take?n=%d", want);
		assert_int_equal(
		    it_http(port, "POST", path, NULL, "", &body), 200);
		for (p = body; (p = strstr(p, "{\"id\":")) != NULL; p = l) {
			unsigned long long id = strtoull(p + 6, NULL, 10);

			assert_non_null(l = strstr(p, "\"lease\":"));
			len += (size_t)snprintf(ack + len, cap - len,
			    "%s{\"id\":%llu,\"lease\":%llu}", k > 0 ? "," : "",
			    id, strtoull(l + 8, NULL, 10));
			k++;
		}
		free(body);
		if (k == 0)
			break;
		snprintf(ack + len, cap - len, "]");
		assert_int_equal(
		    it_http(port, "POST", "/v1/tasks/ack", NULL, ack, &body),
		    200);
		assert_null(strstr(body, "\"error\""));
		free(body);
		acked += k;
	}
	free(ack);
	return acked;
}

/* HTTP: GET /v1/batches/NAME (asserted 200); the body, to free. */
static char *
http_show(int port, const char *name)
{
	char path[96];

	snprintf(path, sizeof(path), "/v1/batches/%s", name);
	return it_http_get(port, path, 200);
}

/* HTTP: waits until batch `name` has put both its callbacks; their ids. */
static void
http_wait_fired(int port, const char *name, uint64_t *ok, uint64_t *done)
{
	int64_t end = it_mono_ms() + it_scale(WAIT_MS, 1, 1);

	for (;;) {
		char *b = http_show(port, name);

		*ok = (uint64_t)it_json_num(b, "on_success", "task");
		*done = (uint64_t)it_json_num(b, "on_complete", "task");
		free(b);
		if (*ok != 0 && *done != 0)
			return;
		if (it_mono_ms() > end)
			fail_msg("batch %s: callbacks not put over HTTP", name);
		it_sleep_ms(20);
	}
}

/* HTTP: the tasks of `tube` taken (up to 10), asserted to be exactly one,
 * with id `id` and `needle` in its payload; nothing else is left. */
static void
http_one_callback(int port, const char *tube, uint64_t id, const char *needle)
{
	char path[96], *body = NULL;

	snprintf(path, sizeof(path), "/v1/tubes/%s/take?n=10", tube);
	assert_int_equal(it_http(port, "POST", path, NULL, "", &body), 200);
	assert_true((uint64_t)it_json_num(body, NULL, "id") == id);
	assert_non_null(strstr(body, needle));
	assert_null(strstr(strstr(body, "{\"id\":") + 1, "{\"id\":"));
	free(body);
}

/* A batch of 10,000 through HTTP alone: callbacks set (a bad tube is
 * refused and changes nothing), items put with "in_batch", closed (a
 * later put is 409 batch_closed), half drained, a kill -9 and restart,
 * the rest drained: each callback put once, with the counts, and not
 * again after another kill -9. */
static void
test_http_ten_thousand_over_a_crash(void **state)
{
	int n = (int)it_scale(N, 4, 2500); /* 10,000; sanitized 2,500 */
	char want[64];
	struct t_srv *s = it_srv(*state, "n");
	static char addr[32];
	int port = it_free_port();
	uint64_t ok, done, ok2, done2;
	char *body = NULL;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	s->args[0] = "--http";
	s->args[1] = addr;
	s->args[2] = NULL;
	it_start(s);
	assert_int_equal(
	    it_http(port, "PUT",
	        "/v1/batches/hb?on_success=ok&on_success_payload=all+good"
	        "&on_complete=done",
	        NULL, NULL, &body),
	    200);
	assert_non_null(strstr(body, "\"on_success\":{\"tube\":\"ok\""));
	free(body);
	assert_int_equal(
	    it_http(port, "PUT", "/v1/batches/hb?on_success=no+spaces&close=1",
	        NULL, NULL, &body),
	    400);
	if (strstr(body, "bad callback tube name") == NULL)
		fail_msg("%s", body);
	free(body);
	http_put_many(port, "hb", n);
	body = http_show(port, "hb");
	assert_non_null(strstr(body, "\"on_success\":{\"tube\":\"ok\""));
	assert_non_null(strstr(body, "\"closed\":false"));
	free(body);
	assert_int_equal(
	    it_http(port, "POST", "/v1/batches/hb/close", NULL, NULL, &body),
	    200);
	assert_true(it_json_num(body, NULL, "total") == n);
	assert_non_null(strstr(body, "\"closed\":true,\"ended\":false"));
	free(body);
	assert_int_equal(it_http(port, "POST", "/v1/tubes/w/tasks?in_batch=hb",
	                     NULL, "late", &body),
	    409);
	assert_non_null(strstr(body, "batch_closed"));
	free(body);
	assert_int_equal(http_drain(port, n / 2), n / 2);
	it_crash_restart(s, NULL);
	body = http_show(port, "hb");
	assert_true(it_json_num(body, NULL, "acked") == n / 2);
	assert_true(it_json_num(body, NULL, "total") == n);
	assert_non_null(strstr(body, "\"ended\":false"));
	free(body);
	assert_int_equal(http_drain(port, n), n / 2);
	http_wait_fired(port, "hb", &ok, &done);
	it_crash_restart(s, NULL);
	it_sleep_ms(300); /* a leader that would fire again has by now */
	http_wait_fired(port, "hb", &ok2, &done2);
	assert_true(ok2 == ok && done2 == done);
	snprintf(want, sizeof(want), "acked\\\":%d", n);
	http_one_callback(port, "ok", ok, want);
	http_one_callback(port, "done", done, "event\\\":\\\"complete");
}

/* Starts `s` as sluiced-fault holding every batch's callbacks for ten
 * minutes after its end (FAULT_PAUSE_BATCH_FIRE): it never fires them. */
static void
start_holding(struct t_srv *s)
{
	s->prog = "sluiced-fault";
	setenv("SLUICE_FAULT_PAUSE", "batch_fire:600000", 1);
	it_start(s);
	unsetenv("SLUICE_FAULT_PAUSE");
}

/* Puts `n` tasks in batch `name`, closed, drained: ended, its callbacks
 * owed and not put (the leader holds them). */
static void
end_held(struct sluice_client *c, const char *name, int n)
{
	struct sluice_batch_callback ok = { "ok", NULL, 0 };
	struct sluice_batch_callback done = { "done", NULL, 0 };
	struct sluice_task *t;
	struct sluice_batch b;

	it_rc(c, sluice_batch_set(c, name, &ok, &done, 0, NULL), 0);
	put_many(c, name, n);
	it_rc(c, sluice_batch_set(c, name, NULL, NULL, 1, NULL), 0);
	assert_int_equal(drain(c, n), n);
	it_sleep_ms(300); /* a leader that fires has by now */
	it_rc(c, sluice_batch_show(c, name, &b), 0);
	assert_true(b.ended);
	assert_true(b.success_id == 0 && b.complete_id == 0);
	assert_int_equal(tasks(c, "ok", &t), 0);
	sluice_task_free(t);
	assert_int_equal(it_node_kv(c, "batch_firings"), 0);
}

/* One task in each callback tube, the batch's. */
static void
fired_once(struct sluice_client *c, const struct sluice_batch *b)
{
	struct sluice_task *t;

	assert_int_equal(tasks(c, "ok", &t), 1);
	assert_true(t[0].id == b->success_id);
	assert_non_null(strstr(t[0].payload, "\"event\":\"success\""));
	sluice_task_free(t);
	assert_int_equal(tasks(c, "done", &t), 1);
	assert_true(t[0].id == b->complete_id);
	sluice_task_free(t);
}

/* A leader killed after a batch's end and before its callbacks' firing:
 * the restarted node (not holding) puts them once; another kill -9 puts
 * nothing more. */
static void
test_killed_between_end_and_fire(void **state)
{
	struct t_srv *s = it_srv(*state, "n");
	struct sluice_client *c;
	struct sluice_batch b;

	start_holding(s);
	c = it_client(s);
	end_held(c, "held", 1000);
	it_crash_restart(s, &c);
	b = wait_fired(c, "held", true);
	assert_int_equal(it_node_kv(c, "batch_firings"), 1);
	it_crash_restart(s, &c);
	it_sleep_ms(300);
	fired_once(c, &b);
	assert_int_equal(it_node_kv(c, "batch_firings"), 0);
	assert_int_equal(
	    it_sluice(s, "batch", "show", "held", "--json", NULL), 0);
	assert_non_null(strstr(it_out, "\"acked\":1000"));
	sluice_close(c);
}

/* Over a failover: batch "held" ended on the leader, which held its
 * callbacks; batch "big", 10,000 tasks, half drained on it. The leader
 * is killed, its follower promoted: it puts held's callbacks once,
 * drains the rest of big over HTTP and puts big's once; restarted alone
 * after a kill -9 it puts none again. */
static void
test_ten_thousand_over_a_failover(void **state)
{
	int n = (int)it_scale(N, 4, 2500); /* 10,000; sanitized 2,500 */
	char want[64];
	struct sluice_batch_callback ok = { "ok", NULL, 0 };
	struct sluice_batch_callback done = { "done", NULL, 0 };
	static char addr[32];
	int port = it_free_port();
	struct it_node l, f;
	struct sluice_batch b, held;
	struct sluice_task *t;
	uint64_t big_ok, big_done;

	it_node_init(state, &l, "l");
	it_node_init(state, &f, "f");
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	it_node_arg(&f, "--http", addr);
	it_node_follows(&f, &l);
	start_holding(l.s);
	l.c = it_client(l.s);
	it_node_start(&f);
	end_held(l.c, "held", 500);
	it_rc(l.c, sluice_batch_set(l.c, "big", &ok, &done, 0, NULL), 0);
	put_many(l.c, "big", n);
	it_rc(l.c, sluice_batch_set(l.c, "big", NULL, NULL, 1, NULL), 0);
	assert_int_equal(drain(l.c, n / 2), n / 2);
	it_node_caught_up(&l, &f);
	it_rc(f.c, sluice_batch_show(f.c, "held", &b), 0);
	assert_true(b.ended && b.success_id == 0);
	t_srv_stop(l.s, 9); /* first: a client closed first ends its session */
	sluice_close(l.c);
	l.c = NULL;
	it_rc(f.c, sluice_promote(f.c, NULL), 0);
	held = wait_fired(f.c, "held", true);
	it_rc(f.c, sluice_batch_show(f.c, "big", &b), 0);
	assert_int_equal(b.acked, n / 2);
	assert_false(b.ended);
	assert_int_equal(http_drain(port, n), n / 2);
	http_wait_fired(port, "big", &big_ok, &big_done);
	it_node_kill(&f);
	for (size_t a = 0; f.s->args[a] != NULL; a += 2)
		if (strcmp(f.s->args[a], "--follow") == 0)
			f.s->args[a] = NULL; /* the last pair */
	it_node_start(&f);
	it_sleep_ms(500);
	assert_int_equal(it_node_kv(f.c, "batch_firings"), 0);
	it_rc(f.c, sluice_batch_show(f.c, "held", &b), 0);
	assert_true(b.success_id == held.success_id &&
	    b.complete_id == held.complete_id);
	it_rc(f.c, sluice_batch_show(f.c, "big", &b), 0);
	assert_int_equal(b.acked, n);
	assert_true(b.success_id == big_ok && b.complete_id == big_done);
	assert_int_equal(tasks(f.c, "ok", &t), 2);
	assert_true(t[0].id == held.success_id && t[1].id == big_ok);
	snprintf(want, sizeof(want), "\"acked\":%d", n);
	assert_non_null(strstr(t[1].payload, want));
	sluice_task_free(t);
	assert_int_equal(tasks(f.c, "done", &t), 2);
	assert_true(t[0].id == held.complete_id && t[1].id == big_done);
	sluice_task_free(t);
	assert_int_equal(it_sluice(f.s, "batch", "show", "big", NULL), 0);
}

/* A batch cancelled (`sluice batch cancel`): closed, its waiting, ready
 * and delayed tasks gone at once (their waits say cancelled), its taken
 * one marked (its holder's touch is ECANCELED, after a kill -9 and
 * restart too) and gone when its lease ends (the holder's ack); then it ends
 * and puts on_complete alone, the acked task and the four cancelled
 * counted. HTTP cancels as an admin write; an unknown batch is not
 * found. */
static void
test_cancel_a_batch(void **state)
{
	struct t_srv *s = it_srv(*state, "n");
	struct sluice_batch_callback ok = { "ok", NULL, 0 };
	struct sluice_batch_callback done = { "done", NULL, 0 };
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct sluice_task *t, *held;
	struct sluice_outcome oc;
	struct sluice_batch b;
	static char addr[32];
	int port = it_free_port();
	uint64_t id[5];
	char *body = NULL;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	s->args[0] = "--http";
	s->args[1] = addr;
	s->args[2] = "--http-admin";
	s->args[3] = NULL;
	it_start(s);
	c = it_client(s);
	it_rc(c, sluice_batch_set(c, "cb", &ok, &done, 0, NULL), 0);
	sluice_put_opts_init(&o);
	o.tube = "w";
	o.batch = "cb";
	id[0] = it_put_o(c, &o, "a"); /* acked */
	id[1] = it_put_o(c, &o, "b"); /* taken */
	id[2] = it_put_o(c, &o, "c"); /* ready */
	o.delay_ms = 60000;
	id[3] = it_put_o(c, &o, "d"); /* delayed */
	o.delay_ms = 0;
	o.after = &id[2];
	o.nafter = 1;
	id[4] = it_put_o(c, &o, "e"); /* waiting */
	t = it_take(c, "w", 1000, 1);
	assert_true(t->id == id[0]);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	held = it_take(c, "w", 1000, 1);
	assert_true(held->id == id[1]);
	assert_int_equal(
	    it_sluice(s, "batch", "cancel", "cb", "--json", NULL), 0);
	assert_non_null(strstr(it_out,
	    "\"waiting\":0,\"ready\":0,\"delayed\":0,"
	    "\"taken\":1"));
	assert_non_null(strstr(it_out, "\"closed\":true,\"ended\":false"));
	for (int i = 2; i < 5; i++) {
		it_rc(c, sluice_wait(c, id[i], 0, &oc), 0);
		assert_true(oc.final);
		assert_int_equal(oc.state, SLUICE_CANCELLED);
	}
	it_rc(
	    c, sluice_touch(c, held->id, held->lease, NULL), SLUICE_ECANCELED);
	o.after = NULL;
	o.nafter = 0;
	it_rc(c, sluice_put(c, &o, "late", 4, NULL, NULL), SLUICE_EBATCH);
	it_crash_restart(s, &c); /* the mark survives; the lease, detached,
	                          * too */
	it_rc(
	    c, sluice_touch(c, held->id, held->lease, NULL), SLUICE_ECANCELED);
	it_rc(c, sluice_ack(c, held->id, held->lease, NULL, NULL), 0);
	sluice_task_free(held);
	b = wait_fired(c, "cb", false);
	assert_true(b.success_id == 0);
	assert_int_equal(b.acked, 1);
	assert_int_equal(b.failed, 4);
	it_rc(c, sluice_wait(c, id[1], 0, &oc), 0);
	assert_int_equal(oc.state, SLUICE_CANCELLED);
	assert_int_equal(tasks(c, "ok", &t), 0);
	sluice_task_free(t);
	assert_int_equal(tasks(c, "done", &t), 1);
	assert_non_null(strstr(t[0].payload, "\"acked\":1,\"failed\":4"));
	sluice_task_free(t);
	/* an ended batch: nothing left to cancel; an unknown one */
	assert_int_equal(
	    it_http(port, "POST", "/v1/batches/cb/cancel", NULL, NULL, &body),
	    200);
	assert_non_null(strstr(body, "\"ended\":true"));
	free(body);
	assert_int_equal(
	    it_http(port, "POST", "/v1/batches/nope/cancel", NULL, NULL, &body),
	    404);
	free(body);
	it_rc(c, sluice_batch_cancel(c, "nope", NULL), SLUICE_ENOTFOUND);
	assert_int_equal(it_sluice(s, "batch", "cancel", "nope", NULL), 1);
	assert_non_null(strstr(it_err, "no such batch"));
	sluice_close(c);
}

/* CLI: takes up to `max` (at most 1,000) tasks of "w" (`take -n MAX
 * --json`) and acks them (`ack --lines`, "ID LEASE" a line); how many. */
static int
cli_drain(const struct t_srv *s, int max, char *out, size_t cap, char *lines,
    size_t lcap)
{
	const char *p, *l;
	char err[1024], ntxt[16];
	size_t len = 0;
	int k = 0, rc;

	snprintf(ntxt, sizeof(ntxt), "%d", max < 1000 ? max : 1000);

	rc = it_cli(s->url, NULL, out, cap, err, sizeof(err), "take", "-t", "w",
	    "-n", ntxt, "--json", NULL);
	if (rc == 3)
		return 0; /* nothing to take */
	if (rc != 0)
		fail_msg("take: exit %d: %s", rc, err);
	for (p = out; (p = strstr(p, "{\"id\":")) != NULL; p = l) {
		unsigned long long id = strtoull(p + 6, NULL, 10);

		assert_non_null(l = strstr(p, "\"lease\":"));
		len += (size_t)snprintf(lines + len, lcap - len, "%llu %llu\n",
		    id, strtoull(l + 8, NULL, 10));
		k++;
	}
	if (k == 0)
		return 0;
	assert_int_equal(
	    it_cli(s->url, lines, out, cap, NULL, 0, "ack", "--lines", NULL),
	    0);
	return k;
}

/* A batch of 10,000 through the CLI alone: callbacks set and the batch
 * closed by `batch set`, its tasks put by `put --batch --lines`, taken
 * 1,000 at a time and acked by `ack --lines`, a kill -9 half way and
 * another after the end: `batch show` has each callback put once, and
 * each callback tube holds one task. */
static void
test_cli_ten_thousand_over_a_crash(void **state)
{
	int n = (int)it_scale(N, 4, 2500); /* 10,000; sanitized 2,500 */
	char want[64];
	struct t_srv *s = it_srv(*state, "n");
	size_t cap = 4 << 20;
	char *in = malloc(2 * n + 1), *out = malloc(cap),
	     *lines = malloc(64000);
	int acked = 0, k;
	uint64_t ok;

	assert_true(in != NULL && out != NULL && lines != NULL);
	for (int i = 0; i < n; i++)
		memcpy(in + 2 * i, "x\n", 2);
	in[2 * n] = '\0';
	it_start(s);
	assert_int_equal(it_sluice(s, "batch", "set", "cli", "--on-success",
	                     "ok:all", "--on-complete", "done", NULL),
	    0);
	assert_int_equal(it_cli(s->url, in, out, cap, NULL, 0, "put", "-t", "w",
	                     "--batch", "cli", "--lines", NULL),
	    0);
	assert_int_equal(
	    it_sluice(s, "batch", "close", "cli", "--json", NULL), 0);
	snprintf(want, sizeof(want), "\"total\":%d,", n);
	assert_non_null(strstr(it_out, want));
	while (acked < n / 2 &&
	    (k = cli_drain(s, n / 2 - acked, out, cap, lines, 64000)) > 0)
		acked += k;
	assert_int_equal(acked, n / 2);
	it_crash_restart(s, NULL);
	assert_int_equal(
	    it_sluice(s, "batch", "show", "cli", "--json", NULL), 0);
	snprintf(want, sizeof(want), "\"acked\":%d,", n / 2);
	assert_non_null(strstr(it_out, want));
	while ((k = cli_drain(s, 1000, out, cap, lines, 64000)) > 0)
		acked += k;
	assert_int_equal(acked, n);
	for (int64_t end = it_mono_ms() + it_scale(WAIT_MS, 1, 1);;) {
		assert_int_equal(
		    it_sluice(s, "batch", "show", "cli", "--json", NULL), 0);
		if (strstr(it_out,
		        "\"on_complete\":{\"tube\":\"done\","
		        "\"task\":0}") == NULL)
			break;
		assert_true(it_mono_ms() < end);
		it_sleep_ms(20);
	}
	ok = (uint64_t)it_json_num(it_out, "on_success", "task");
	assert_true(ok != 0);
	it_crash_restart(s, NULL);
	it_sleep_ms(300); /* a leader that would fire again has by now */
	assert_int_equal(it_sluice(s, "list", "-t", "ok", "--json", NULL), 0);
	assert_true((uint64_t)it_json_num(it_out, NULL, "id") == ok);
	assert_null(strstr(strstr(it_out, "{\"id\":") + 1, "{\"id\":"));
	snprintf(lines, 64000, "%llu", (unsigned long long)ok);
	assert_int_equal(it_sluice(s, "peek", lines, "--json", NULL), 0);
	snprintf(want, sizeof(want), "acked\\\":%d", n);
	assert_non_null(strstr(it_out, want));
	assert_int_equal(it_sluice(s, "list", "-t", "done", "--json", NULL), 0);
	assert_null(strstr(strstr(it_out, "{\"id\":") + 1, "{\"id\":"));
	free(in);
	free(out);
	free(lines);
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
		    test_http_ten_thousand_over_a_crash, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_killed_between_end_and_fire, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cancel_a_batch, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cli_ten_thousand_over_a_crash, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_failover_fires_once, it_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_ten_thousand_over_a_failover, it_setup,
		    it_node_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
