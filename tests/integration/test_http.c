/* The HTTP face of sluiced (--http): /metrics is valid Prometheus text
 * (promtool, from Debian's prometheus package, checks it) and says what
 * `sluice stats --json` says after a known workload; /stats is that
 * JSON; /health turns 503 once the log refuses writes (a fault armed in
 * sluiced-fault), while recovery runs (held open by sluiced-fault) and on
 * a follower whose leader is gone; admin writes need --http-admin. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"

enum { OUT_MAX = 1 << 20 };

struct http_srv {
	struct t_srv *s;
	int hport;
	char haddr[64];
};

/* A server with --http on a free port (and `extra`, NULL-ended). */
static void
start_http(void **state, struct http_srv *h, const char *name, const char *prog,
    const char *const *extra)
{
	int n = 0;

	h->s = it_srv(*state, name);
	h->s->prog = prog;
	h->hport = it_free_port();
	snprintf(h->haddr, sizeof(h->haddr), "127.0.0.1:%d", h->hport);
	h->s->args[n++] = "--http";
	h->s->args[n++] = h->haddr;
	for (; extra != NULL && *extra != NULL; extra++)
		h->s->args[n++] = *extra;
	it_start(h->s);
}

/* Polls GET `path` (every 50 ms, bounded) until it answers `want`; the
 * body (to free). Fails the test, saying what came last and printing the
 * server's log, when it never did. */
static char *
wait_status(
    const struct http_srv *h, const char *path, int want, int64_t timeout_ms)
{
	int64_t deadline = it_mono_ms() + timeout_ms;
	char *body = NULL, last[512] = "(no answer)";
	int st = -1;

	while (it_mono_ms() < deadline) {
		st = it_http(h->hport, "GET", path, NULL, NULL, &body);
		if (st == want)
			return body;
		snprintf(last, sizeof(last), "%s", body ? body : "(no answer)");
		free(body);
		body = NULL;
		it_sleep_ms(50);
	}
	fprintf(stderr, "--- %s\n", h->s->log);
	{
		char line[1024];
		FILE *f = fopen(h->s->log, "r");

		while (f != NULL && fgets(line, sizeof(line), f) != NULL)
			fputs(line, stderr);
		if (f != NULL)
			fclose(f);
	}
	fail_msg("GET %s never answered %d within %" PRId64 " ms; last: %d %s",
	    path, want, timeout_ms, st, last);
	return NULL;
}

/* `sluice -s URL stats --json` of the server: the output (to free). */
static char *
cli_stats_json(const struct t_srv *s)
{
	char *out = malloc(OUT_MAX), err[4096];
	int rc;

	assert_non_null(out);
	/* The tool connects within 2 s by default; a machine busy with
	 * sanitized builds may need longer: one run, a longer bound. */
	rc = it_cli(s->url, NULL, out, OUT_MAX, err, sizeof(err), "--timeout",
	    "10s", "stats", "--json", NULL);
	if (rc != 0)
		fail_msg("sluice stats --json: exit %d: %s", rc, err);
	return out;
}

static void
fail_one(struct sluice_client *c, const char *tube, const char *error)
{
	struct sluice_task *t = it_take(c, tube, 0, 1);

	it_rc(c, sluice_fail(c, t->id, t->lease, error, -1, NULL), 0);
	sluice_task_free(t);
}

/* alpha: 1 ready, 1 delayed, 1 taken, 1 acked. beta: 2 buried by
 * failing at max_attempts 1, one of them kicked back; 1 failed and
 * delayed by the backoff. */
static struct sluice_task *
workload(struct sluice_client *c)
{
	struct sluice_put_opts o;
	struct sluice_task *t, *held;
	uint64_t kicked = 0;

	sluice_put_opts_init(&o);
	o.tube = "alpha";
	it_put_o(c, &o, "a1");
	it_put_o(c, &o, "a2");
	it_put_o(c, &o, "a3");
	o.delay_ms = 3600000;
	it_put_o(c, &o, "later");
	t = it_take(c, "alpha", 0, 1);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	held = it_take(c, "alpha", 0, 1);

	sluice_put_opts_init(&o);
	o.tube = "beta";
	o.max_attempts = 1;
	it_put_o(c, &o, "x");
	it_put_o(c, &o, "y");
	fail_one(c, "beta", "disk full");
	fail_one(c, "beta", "disk full");
	it_rc(c, sluice_kick(c, "beta", 1, &kicked), 0);
	assert_int_equal(kicked, 1);
	o.max_attempts = 0;
	o.priority = 5000; /* after the kicked one */
	it_put_o(c, &o, "z");
	t = it_take(c, "beta", 0, 1);
	sluice_task_free(t); /* the kicked one: taken again */
	t = it_take(c, "beta", 0, 1);
	it_rc(c, sluice_fail(c, t->id, t->lease, "timeout", -1, NULL), 0);
	sluice_task_free(t);
	return held;
}

static void
check_tube(const char *metrics, const char *json, const char *tube,
    const uint64_t want[4])
{
	static const char *const states[] = { "ready", "delayed", "taken",
		"buried" };
	static const char *const counters[][2] = {
		{ "puts", "sluice_tube_puts_total" },
		{ "takes", "sluice_tube_takes_total" },
		{ "acks", "sluice_tube_acks_total" },
		{ "releases", "sluice_tube_releases_total" },
		{ "fails", "sluice_tube_fails_total" },
		{ "buries", "sluice_tube_buries_total" },
		{ "kicks", "sluice_tube_kicks_total" },
		{ "deletes", "sluice_tube_deletes_total" },
		{ "ttr_expired", "sluice_tube_ttr_expired_total" },
		{ "session_released", "sluice_tube_disconnect_releases_total" },
	};
	char series[256];

	for (int i = 0; i < 4; i++) {
		snprintf(series, sizeof(series),
		    "sluice_tube_tasks{tube=\"%s\",state=\"%s\"}", tube,
		    states[i]);
		assert_int_equal((uint64_t)it_metric(metrics, series), want[i]);
		assert_int_equal(
		    (uint64_t)it_json_num(json, tube, states[i]), want[i]);
	}
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		snprintf(series, sizeof(series), "%s{tube=\"%s\"}",
		    counters[i][1], tube);
		assert_int_equal((uint64_t)it_metric(metrics, series),
		    (uint64_t)it_json_num(json, tube, counters[i][0]));
	}
}

/* After a known workload, promtool accepts /metrics and every count and
 * counter equals what `sluice stats --json` reports. */
static void
test_metrics_pass_promtool_and_match_sluice_stats(void **state)
{
	static const uint64_t alpha[4] = { 1, 1, 1, 0 };
	static const uint64_t beta[4] = { 0, 1, 1, 1 };
	char promtool[1024], out[4096], err[4096];
	struct http_srv h;
	struct sluice_client *c;
	struct sluice_task *held;
	char *metrics, *json;

	if (!it_which("promtool", promtool, sizeof(promtool)))
		fail_msg("promtool is missing: install Debian's prometheus "
		         "package (make test does)");
	start_http(state, &h, "m", NULL, NULL);
	c = it_client(h.s);
	held = workload(c);
	metrics = it_http_get(h.hport, "/metrics", 200);
	json = cli_stats_json(h.s);

	{
		char *argv[] = { promtool, "check", "metrics", NULL };
		int rc =
		    t_run(argv, metrics, out, sizeof(out), err, sizeof(err));

		if (rc != 0)
			fail_msg(
			    "promtool check metrics: %d\n%s%s", rc, out, err);
	}
	check_tube(metrics, json, "alpha", alpha);
	check_tube(metrics, json, "beta", beta);
	assert_int_equal((uint64_t)it_metric(
	                     metrics, "sluice_tube_acks_total{tube=\"alpha\"}"),
	    1);
	assert_int_equal((uint64_t)it_metric(
	                     metrics, "sluice_tube_kicks_total{tube=\"beta\"}"),
	    1);
	assert_int_equal((uint64_t)it_metric(metrics,
	                     "sluice_tube_buries_total{tube=\"beta\"}"),
	    2);
	/* The node: nothing was written between the two reads. */
	assert_int_equal((uint64_t)it_metric(metrics, "sluice_lsn"),
	    (uint64_t)it_json_num(json, NULL, "lsn"));
	assert_int_equal((uint64_t)it_metric(metrics, "sluice_durable_lsn"),
	    (uint64_t)it_json_num(json, NULL, "durable_lsn"));
	assert_int_equal((uint64_t)it_metric(metrics, "sluice_epoch"),
	    (uint64_t)it_json_num(json, NULL, "epoch"));
	assert_int_equal(
	    (uint64_t)it_metric(metrics, "sluice_role{role=\"leader\"}"), 1);
	assert_int_equal((uint64_t)it_metric(metrics, "sluice_tasks"),
	    (uint64_t)it_json_num(json, "node", "tasks"));
	assert_int_equal((uint64_t)it_metric(metrics, "sluice_log_segments"),
	    (uint64_t)it_json_num(json, "node", "log_segments"));
	assert_int_equal(
	    (uint64_t)it_metric(metrics, "sluice_log_batch_records_count"),
	    (uint64_t)it_json_num(json, "node", "log_batches"));
	assert_true(it_metric(metrics, "sluice_log_commit_seconds_count") >= 1);
	assert_true(it_metric(metrics,
	                "sluice_log_commit_seconds_bucket{le=\"+Inf\"}") ==
	    it_metric(metrics, "sluice_log_commit_seconds_count"));
	assert_int_equal((uint64_t)it_metric(metrics, "sluice_log_failed"), 0);
	/* The ready task of alpha has waited since it was put. */
	assert_true(
	    it_metric(metrics,
	        "sluice_tube_oldest_ready_age_seconds{tube=\"alpha\"}") > 0);
	sluice_task_free(held);
	sluice_close(c);
	free(metrics);
	free(json);
}

/* The histogram bounds of the duration families: 4^c ms in seconds. */
static const char *const dur_le[] = { "0.001", "0.004", "0.016", "0.064",
	"0.256", "1.024", "4.096", "16.384", "65.536", "262.144", "1048.576",
	"4194.304", "16777.216", "+Inf" };

static double
dur_sample(const char *metrics, const char *fam, const char *part,
    const char *tube, const char *le)
{
	char series[256];

	if (le != NULL)
		snprintf(series, sizeof(series), "%s_%s{tube=\"%s\",le=\"%s\"}",
		    fam, part, tube, le);
	else
		snprintf(series, sizeof(series), "%s_%s{tube=\"%s\"}", fam,
		    part, tube);
	return it_metric(metrics, series);
}

/* One tube's histogram of /metrics against the tube's hours through the
 * library (all of a test's events fall in the 48 hours): its count and
 * sum exactly, cumulative buckets that reach the count at the first
 * bound at or above the longest duration, and not before. */
static void
check_durations(const char *metrics, const char *fam, const char *tube,
    const struct sluice_hour *hours, size_t n, bool work)
{
	uint64_t count = 0, total = 0, max = 0, prev = 0;

	for (size_t i = 0; i < n; i++) {
		const struct sluice_dist *d =
		    work ? &hours[i].work : &hours[i].wait;

		count += d->count;
		total += d->total_ms;
		if (d->max_ms > max)
			max = d->max_ms;
	}
	assert_int_equal(
	    (uint64_t)dur_sample(metrics, fam, "count", tube, NULL), count);
	assert_int_equal(
	    (uint64_t)(dur_sample(metrics, fam, "sum", tube, NULL) * 1000 +
	        0.5),
	    total);
	for (size_t c = 0; c < sizeof(dur_le) / sizeof(dur_le[0]); c++) {
		uint64_t v = (uint64_t)dur_sample(
		    metrics, fam, "bucket", tube, dur_le[c]);
		uint64_t bound = c + 1 < sizeof(dur_le) / sizeof(dur_le[0])
		    ? UINT64_C(1) << (2 * c)
		    : UINT64_MAX;

		assert_true(v >= prev);
		assert_int_equal(v == count, bound >= max || count == 0);
		prev = v;
	}
}

/* /metrics carries sluice_task_duration_seconds and
 * sluice_task_wait_seconds per tube: promtool accepts them, they agree
 * with the tube's counters and its hours, and only the 100 busiest tubes
 * have them: beta and t01..t98 (4 takes and acks each), alpha (3), not
 * t00 (a take and an ack). Like every per-tube series, only tubes in use
 * (listed by stats) have them: each keeps a ready task. (/metrics lists
 * the --metrics-tubes deepest tubes: all 101 here.) */
static void
test_metrics_histograms_of_work_and_wait(void **state)
{
	static const char *const extra[] = { "--metrics-tubes", "200", NULL };
	static const char *const fams[] = { "sluice_task_duration_seconds",
		"sluice_task_wait_seconds" };
	char promtool[1024], out[4096], err[4096], tube[8], series[128];
	struct http_srv h;
	struct sluice_client *c;
	struct sluice_task *held, *t;
	struct sluice_hour *hours;
	char *metrics;
	size_t n;

	if (!it_which("promtool", promtool, sizeof(promtool)))
		fail_msg("promtool is missing: install Debian's prometheus "
		         "package (make test does)");
	start_http(state, &h, "d", NULL, extra);
	c = it_client(h.s);
	held = workload(c);
	for (int i = 0; i <= 98; i++) {
		snprintf(tube, sizeof(tube), "t%02d", i);
		for (int k = 0; k < (i == 0 ? 1 : 2); k++) {
			it_put(c, tube, "x");
			t = it_take(c, tube, 0, 1);
			it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
			sluice_task_free(t);
		}
		it_put(c, tube, "left"); /* listed: a tube in use */
	}
	metrics = it_http_get(h.hport, "/metrics", 200);
	{
		char *argv[] = { promtool, "check", "metrics", NULL };
		int rc =
		    t_run(argv, metrics, out, sizeof(out), err, sizeof(err));

		if (rc != 0)
			fail_msg(
			    "promtool check metrics: %d\n%s%s", rc, out, err);
	}
	for (size_t k = 0; k < 2; k++) {
		snprintf(
		    series, sizeof(series), "# TYPE %s histogram\n", fams[k]);
		assert_non_null(strstr(metrics, series));
	}
	/* alpha: 2 takes, 1 ack; beta: 4 takes, no ack. */
	assert_int_equal(
	    (uint64_t)dur_sample(metrics, fams[0], "count", "alpha", NULL),
	    (uint64_t)it_metric(
	        metrics, "sluice_tube_acks_total{tube=\"alpha\"}"));
	assert_int_equal(
	    (uint64_t)dur_sample(metrics, fams[1], "count", "beta", NULL), 4);
	for (int i = 0; i < 2; i++) {
		const char *name = i == 0 ? "alpha" : "beta";

		it_rc(c, sluice_stats_hourly(c, name, &hours, &n), 0);
		check_durations(metrics, fams[0], name, hours, n, true);
		check_durations(metrics, fams[1], name, hours, n, false);
		sluice_stats_hourly_free(hours);
	}
	/* 101 tubes had takes: t00, the least busy, is left out. */
	snprintf(series, sizeof(series), "%s_count{tube=\"t00\"}", fams[0]);
	assert_null(strstr(metrics, series));
	snprintf(series, sizeof(series), "%s_count{tube=\"t00\"}", fams[1]);
	assert_null(strstr(metrics, series));
	assert_int_equal(
	    (uint64_t)dur_sample(metrics, fams[0], "count", "t01", NULL), 2);
	assert_int_equal(
	    (uint64_t)dur_sample(metrics, fams[1], "count", "t98", NULL), 2);
	assert_non_null(
	    strstr(metrics, "sluice_tube_takes_total{tube=\"t00\"} 1"));
	sluice_task_free(held);
	sluice_close(c);
	free(metrics);
}

/* /stats is the JSON `sluice stats --json` prints. */
static void
test_stats_is_the_json_of_sluice_stats(void **state)
{
	static const char *const keys[] = { "ready", "delayed", "taken",
		"buried", "puts", "takes", "fails", "buries", "kicks" };
	struct http_srv h;
	struct sluice_client *c;
	struct sluice_task *held;
	char *http, *cli, role[32];

	start_http(state, &h, "s", NULL, NULL);
	c = it_client(h.s);
	held = workload(c);
	http = it_http_get(h.hport, "/stats", 200);
	cli = cli_stats_json(h.s);
	assert_true(it_json_str(http, "role", role, sizeof(role)));
	assert_string_equal(role, "leader");
	assert_true(strncmp(http, "{\"role\":\"leader\",\"epoch\":", 25) == 0);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		assert_int_equal((uint64_t)it_json_num(http, "alpha", keys[i]),
		    (uint64_t)it_json_num(cli, "alpha", keys[i]));
		assert_int_equal((uint64_t)it_json_num(http, "beta", keys[i]),
		    (uint64_t)it_json_num(cli, "beta", keys[i]));
	}
	assert_int_equal((uint64_t)it_json_num(http, NULL, "lsn"),
	    (uint64_t)it_json_num(cli, NULL, "lsn"));
	assert_non_null(strstr(http, "\"log_commit_us_le_inf\":"));
	sluice_task_free(held);
	sluice_close(c);
	free(http);
	free(cli);
}

/* /health: 200 while serving; 503 naming the log once a write failed
 * (sluiced-fault fails the log's first write, sticky), while /metrics
 * still answers and says so. */
static void
test_health_is_503_when_the_log_refuses_writes(void **state)
{
	struct http_srv h;
	struct sluice_client *c;
	char *body, *metrics;
	uint64_t id = 0;
	int created, rc = 0;

	/* The 2nd write of the log: a leader writes its epoch record at
	 * start, the first put is the next one. */
	setenv("SLUICE_FAULT", "wal_write:2:EIO:sticky", 1);
	start_http(state, &h, "f", "sluiced-fault", NULL);
	unsetenv("SLUICE_FAULT");
	body = it_http_get(h.hport, "/health", 200);
	assert_string_equal(body, "ok\n");
	free(body);

	/* Puts until the armed write fails one (bounded). */
	c = it_client(h.s);
	for (int i = 0; i < 20; i++) {
		rc = sluice_put(c, NULL, "doomed", 6, &id, &created);
		if (rc != 0)
			break;
	}
	assert_int_equal(rc, SLUICE_ELOG);
	body = wait_status(&h, "/health", 503, 10000);
	assert_non_null(strstr(body, "log refuses writes"));
	metrics = it_http_get(h.hport, "/metrics", 200);
	assert_int_equal((uint64_t)it_metric(metrics, "sluice_log_failed"), 1);
	sluice_close(c);
	free(body);
	free(metrics);
}

static void *
start_run(void *arg)
{
	struct t_srv *s = arg;

	return (void *)(intptr_t)t_srv_start(s);
}

/* /health: 503 "recovering" while recovery runs (sluiced-fault holds it
 * open for RECOVER_PAUSE_MS after loading the snapshot), then 200 once
 * the node serves, with the task put before the restart. */
static void
test_health_is_503_while_recovering(void **state)
{
	enum { RECOVER_PAUSE_MS = 3000 };
	struct http_srv h;
	struct sluice_client *c;
	char pause[32], *body = NULL, last[512] = "(no answer)";
	pthread_t th;
	void *started;
	int64_t deadline;
	uint64_t id;
	int st = -1;

	start_http(state, &h, "r", "sluiced-fault", NULL);
	c = it_client(h.s);
	id = it_put(c, "jobs", "kept");
	sluice_close(c);
	assert_int_equal(t_srv_stop(h.s, SIGTERM), 0);

	/* The queue's port opens only after recovery, so the start (which
	 * waits for it) runs in a thread while /health is polled. */
	snprintf(pause, sizeof(pause), "recover:%d", RECOVER_PAUSE_MS);
	setenv("SLUICE_FAULT_PAUSE", pause, 1);
	assert_int_equal(pthread_create(&th, NULL, start_run, h.s), 0);
	deadline = it_mono_ms() + RECOVER_PAUSE_MS * 3;
	while (it_mono_ms() < deadline) {
		st = it_http(h.hport, "GET", "/health", NULL, NULL, &body);
		if (st == 503 && strstr(body, "recovering") != NULL)
			break;
		snprintf(last, sizeof(last), "%s", body ? body : "(no answer)");
		free(body);
		body = NULL;
		it_sleep_ms(20);
	}
	assert_int_equal(pthread_join(th, &started), 0);
	unsetenv("SLUICE_FAULT_PAUSE");
	assert_int_equal((intptr_t)started, 0);
	if (body == NULL)
		fail_msg("/health never answered 503 recovering; last: %d %s",
		    st, last);
	free(body);

	body = wait_status(&h, "/health", 200, 10000);
	assert_string_equal(body, "ok\n");
	free(body);
	c = it_client(h.s);
	assert_int_equal(it_state(c, id), SLUICE_READY);
	sluice_close(c);
}

/* Kick and delete answer 403 without --http-admin, and without the
 * X-Sluice-Admin header (which a foreign page cannot send); with both
 * they work. */
static void
test_admin_writes_need_http_admin(void **state)
{
	static const char *const admin[] = { "--http-admin", NULL };
	const char *hdr = "X-Sluice-Admin: 1\r\n";
	struct http_srv ro, rw;
	struct sluice_client *c;
	struct sluice_put_opts o;
	struct sluice_task *t;
	char path[128], *body;
	uint64_t id, later;

	start_http(state, &ro, "ro", NULL, NULL);
	start_http(state, &rw, "rw", NULL, admin);
	c = it_client(rw.s);
	sluice_put_opts_init(&o);
	o.tube = "jobs";
	o.max_attempts = 1;
	id = it_put_o(c, &o, "p");
	t = it_take(c, "jobs", 0, 1);
	it_rc(c, sluice_fail(c, t->id, t->lease, "broken", -1, NULL), 0);
	sluice_task_free(t);
	assert_int_equal(it_state(c, id), SLUICE_BURIED);

	snprintf(path, sizeof(path), "/api/kick?id=%" PRIu64, id);
	assert_int_equal(
	    it_http(ro.hport, "POST", path, hdr, NULL, &body), 403);
	assert_non_null(strstr(body, "--http-admin"));
	free(body);
	assert_int_equal(
	    it_http(rw.hport, "POST", path, NULL, NULL, &body), 403);
	free(body);
	assert_int_equal(it_state(c, id), SLUICE_BURIED);
	assert_int_equal(
	    it_http(rw.hport, "POST", path, hdr, NULL, &body), 200);
	free(body);
	assert_int_equal(it_state(c, id), SLUICE_READY);
	/* Admin writes are logged, with key=value fields. */
	snprintf(path, sizeof(path), "admin kick id=%" PRIu64 " result=ok", id);
	assert_int_equal(it_log_count(rw.s, path), 1);
	/* An error says what was asked, once, in the page's words. */
	assert_int_equal(
	    it_http(rw.hport, "POST", "/api/kick?id=424242", hdr, NULL, &body),
	    404);
	assert_string_equal(
	    body, "{\"error\":\"kick 424242: no such task\",\"code\":1}");
	free(body);

	/* The page's reads. */
	body = it_http_get(rw.hport, "/api/list?tube=jobs&state=all", 200);
	assert_non_null(strstr(body, "\"last_error\":\"broken\""));
	free(body);
	/* kicked: ready again, its last error kept (every live state) */
	body = it_http_get(rw.hport, "/api/errors?tube=jobs&state=all", 200);
	assert_string_equal(body,
	    "{\"errors\":[{\"error\":\"broken\",\"count\":1,"
	    "\"ids\":[1]}]}");
	free(body);
	body = it_http_get(rw.hport, "/api/list?tube=bad%20name", 400);
	free(body);
	/* A cursor: the tasks after `id` (none), and id order with it only. */
	snprintf(path, sizeof(path), "/api/list?tube=jobs&after=%" PRIu64, id);
	body = it_http_get(rw.hport, path, 200);
	assert_string_equal(body, "{\"tasks\":[]}");
	free(body);
	snprintf(
	    path, sizeof(path), "/api/list?tube=jobs&after=%" PRIu64, id - 1);
	body = it_http_get(rw.hport, path, 200);
	assert_non_null(strstr(body, "\"last_error\":\"broken\""));
	free(body);
	body =
	    it_http_get(rw.hport, "/api/list?tube=jobs&after=1&order=age", 400);
	free(body);

	/* The dashboard's peek, run now and pause: the task API's. */
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64, id);
	body = it_http_get(rw.hport, path, 200);
	assert_non_null(strstr(body, "\"state\":\"ready\""));
	free(body);
	o.key = "k1";
	o.delay_ms = 3600000;
	later = it_put_o(c, &o, "later");
	body = it_http_get(rw.hport, "/v1/keys/k1?tube=jobs", 200);
	snprintf(path, sizeof(path), "{\"id\":%" PRIu64 ",", later);
	assert_true(strncmp(body, path, strlen(path)) == 0);
	free(body);
	body = it_http_get(rw.hport, "/v1/keys/nokey?tube=jobs", 404);
	free(body);
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64 "/update?run_at=now",
	    later);
	assert_int_equal(
	    it_http(ro.hport, "POST", path, hdr, NULL, &body), 403);
	free(body);
	assert_int_equal(it_state(c, later), SLUICE_DELAYED);
	assert_int_equal(
	    it_http(rw.hport, "POST", path, hdr, NULL, &body), 200);
	assert_non_null(strstr(body, "\"state\":\"ready\""));
	free(body);
	assert_int_equal(it_state(c, later), SLUICE_READY);
	assert_int_equal(it_http(rw.hport, "POST",
	                     "/v1/tubes/jobs/pause?for=1h", hdr, NULL, &body),
	    200);
	free(body);
	body = it_http_get(rw.hport, "/stats", 200);
	assert_non_null(
	    strstr(body, "\"buried\":0,\"waiting\":0,\"paused\":true"));
	free(body);
	assert_int_equal(it_http(rw.hport, "POST",
	                     "/v1/tubes/jobs/pause?for=soon", hdr, NULL, &body),
	    400);
	free(body);
	assert_int_equal(it_http(rw.hport, "POST", "/v1/tubes/jobs/pause?for=0",
	                     hdr, NULL, &body),
	    200);
	free(body);
	body = it_http_get(rw.hport, "/stats", 200);
	assert_null(strstr(body, "\"paused\":true"));
	free(body);
	/* the dashboard's own peek is gone: the task API has it */
	body = it_http_get(rw.hport, "/api/peek?id=1", 404);
	free(body);

	snprintf(path, sizeof(path), "/api/delete?id=%" PRIu64, id);
	assert_int_equal(
	    it_http(rw.hport, "POST", path, hdr, NULL, &body), 200);
	free(body);
	assert_int_equal(it_state(c, id), 0);
	assert_int_equal(
	    it_http(rw.hport, "POST", path, hdr, NULL, &body), 404);
	free(body);
	sluice_close(c);
}

/* The numbers of the array `"name":[...]` in json: their count into *len
 * (NULL: not wanted) and their sum. */
static uint64_t
array_scan(const char *json, const char *name, size_t *len)
{
	char key[64], *end;
	const char *p;
	uint64_t sum = 0;
	size_t n = 0;

	snprintf(key, sizeof(key), "\"%s\":[", name);
	if ((p = strstr(json, key)) == NULL)
		fail_msg("no %s in %s", key, json);
	for (p += strlen(key); *p != ']'; p = end + (*end == ','), n++) {
		sum += strtoull(p, &end, 10);
		if (end == p)
			fail_msg("not an array of numbers: %s", json);
	}
	if (len != NULL)
		*len = n;
	return sum;
}

static uint64_t
array_sum(const char *json, const char *name)
{
	return array_scan(json, name, NULL);
}

static size_t
array_len(const char *json, const char *name)
{
	size_t n;

	array_scan(json, name, &n);
	return n;
}

/* /v1/history: the workload's events per second as arrays of numbers, of
 * every tube (1 s slots) or one (5 s); errors as JSON. */
static void
test_history_is_arrays_of_numbers(void **state)
{
	struct http_srv h;
	struct sluice_client *c;
	struct sluice_task *held;
	char *body, *stats;

	start_http(state, &h, "hist", NULL, NULL);
	c = it_client(h.s);
	held = workload(c);
	stats = cli_stats_json(h.s);
	body = it_http_get(h.hport, "/v1/history?secs=60", 200);
	assert_true(strncmp(body, "{\"start\":", 9) == 0);
	assert_int_equal((uint64_t)it_json_num(body, NULL, "step_ms"), 1000);
	assert_int_equal(array_sum(body, "puts"),
	    (uint64_t)it_json_num(stats, "totals", "puts"));
	free(stats);
	assert_true(array_sum(body, "takes") > 0);
	assert_int_equal(array_len(body, "acks"), 60);
	free(body);
	body = it_http_get(h.hport, "/v1/history?tube=alpha&secs=30", 200);
	assert_int_equal((uint64_t)it_json_num(body, NULL, "step_ms"), 5000);
	assert_int_equal(array_len(body, "puts"), 6);
	assert_true(array_sum(body, "puts") > 0);
	free(body);
	body = it_http_get(h.hport, "/v1/history", 200); /* 900 s */
	assert_int_equal(array_len(body, "ttr_expired"), 900);
	free(body);
	body = it_http_get(h.hport, "/v1/history?tube=nosuch", 404);
	assert_non_null(strstr(body, "no such tube"));
	free(body);
	body = it_http_get(h.hport, "/v1/history?secs=3601", 400);
	free(body);
	body = it_http_get(h.hport, "/v1/history?tube=bad%20name", 400);
	free(body);
	sluice_task_free(held);
	sluice_close(c);
}

/* A follower's /health is 200 while it is connected to its leader, and
 * 503 once the leader is gone (killed); its metrics say so too. The
 * leader's metrics show the follower and its acked LSN. */
static void
test_health_is_503_on_a_follower_whose_leader_is_gone(void **state)
{
	static char repl[64];
	struct http_srv leader, follower;
	const char *largs[] = { "--repl-listen", repl, NULL };
	const char *fargs[] = { "--follow", repl, NULL };
	struct sluice_client *c;
	char *body, *metrics, series[128];
	int64_t deadline;

	snprintf(repl, sizeof(repl), "tcp://127.0.0.1:%d", it_free_port());
	start_http(state, &leader, "leader", NULL, largs);
	start_http(state, &follower, "follower", NULL, fargs);
	body = wait_status(&follower, "/health", 200, 30000);
	free(body);

	c = it_client(leader.s);
	it_put(c, "jobs", "replicated");
	/* The leader sees its follower ack the put; it names the follower
	 * by its address (its client URL's HOST:PORT), not by a position. */
	snprintf(series, sizeof(series),
	    "sluice_follower_acked_lsn{follower=\"127_0_0_1_%d\"}",
	    follower.s->port);
	deadline = it_mono_ms() + 15000;
	for (;;) {
		metrics = it_http_get(leader.hport, "/metrics", 200);
		if (it_metric(metrics, "sluice_followers") == 1 &&
		    it_metric(metrics, series) ==
		        it_metric(metrics, "sluice_lsn"))
			break;
		free(metrics);
		if (it_mono_ms() > deadline)
			fail_msg("the follower never acked the leader's log");
		it_sleep_ms(50);
	}
	free(metrics);
	sluice_close(c);
	metrics = it_http_get(follower.hport, "/metrics", 200);
	assert_int_equal(
	    (uint64_t)it_metric(metrics, "sluice_role{role=\"follower\"}"), 1);
	assert_int_equal((uint64_t)it_metric(metrics, "sluice_leader_lost"), 0);
	free(metrics);

	t_srv_stop(leader.s, SIGKILL);
	body = wait_status(&follower, "/health", 503, 30000);
	assert_non_null(strstr(body, "follower lost its leader"));
	free(body);
	metrics = it_http_get(follower.hport, "/metrics", 200);
	assert_int_equal((uint64_t)it_metric(metrics, "sluice_leader_lost"), 1);
	free(metrics);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_history_is_arrays_of_numbers, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_metrics_pass_promtool_and_match_sluice_stats, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_metrics_histograms_of_work_and_wait, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_stats_is_the_json_of_sluice_stats, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_health_is_503_when_the_log_refuses_writes, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_health_is_503_while_recovering, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_admin_writes_need_http_admin, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_health_is_503_on_a_follower_whose_leader_is_gone,
		    it_setup, it_teardown),
	};
	return cmocka_run_group_tests_name("http", tests, NULL, NULL);
}
