/* What the HTTP face says, without a server: the Prometheus text of a
 * stats reply (metrics.c), /health's verdict (http_health_status), and the
 * JSON log lines of --log-format json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t_lib.h"

#include "server/face/http/http.h"
#include "server/face/http/metrics.h"
#include "util/log.h"

static char *
prom(const struct sluice_stats *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	metrics_write(f, s);
	fclose(f);
	return text;
}

static int
count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

static bool
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

/* Two tubes, histograms, snapshot: every family has one HELP and one
 * TYPE line; samples carry the tube (escaped) and state labels;
 * histogram buckets are cumulative, in seconds, with +Inf = count. */
static void
test_metrics_write_every_family_once_with_its_samples(void **state)
{
	static const struct sluice_kv ctr[] = { { "puts", 7 }, { "acks", 3 },
		{ "ttr_expired", 2 }, { "session_released", 1 } };
	static const struct sluice_kv node[] = { { "uptime_ms", 61500 },
		{ "sessions", 4 }, { "waiting_takes", 2 }, { "tasks", 9 },
		{ "log_segments", 3 }, { "log_bytes", 4096 },
		{ "snapshot_at", 1000000 }, { "snapshot_ms", 250 },
		{ "log_commit_us_le_16", 1 }, { "log_commit_us_le_32", 3 },
		{ "log_commit_us_le_inf", 5 }, { "log_commit_us_sum", 2000000 },
		{ "log_batch_le_1", 2 }, { "log_batch_le_2", 4 },
		{ "log_batch_le_inf", 5 }, { "log_batch_records", 12 },
		{ "log_reserved", 2204976 }, { "log_available", 2205408 },
		{ "log_refusing_puts", 1 }, { "log_files_bytes", 8388608 } };
	struct sluice_tube_stats tubes[2] = {
		{ .name = "emails",
		    .ready = 5,
		    .delayed = 1,
		    .taken = 2,
		    .buried = 1,
		    .oldest_ready_age_ms = 1500,
		    .nkv = 4,
		    .kv = ctr },
		{ .name = "odd\"na\\me", .ready = 0, .nkv = 0 },
	};
	struct sluice_stats s = { .role = SLUICE_LEADER,
		.epoch = 3,
		.lsn = 100,
		.durable_lsn = 99,
		.now = 1010500,
		.leader = "",
		.nkv = sizeof(node) / sizeof(node[0]),
		.kv = node,
		.ntubes = 2,
		.tubes = tubes };
	char *t = prom(&s);
	(void)state;

	assert_int_equal(count(t, "# TYPE sluice_tube_tasks gauge\n"), 1);
	assert_int_equal(count(t, "# HELP sluice_tube_tasks "), 1);
	assert_int_equal(
	    count(t, "# TYPE sluice_tube_puts_total counter\n"), 1);
	assert_true(has_line(
	    t, "sluice_tube_tasks{tube=\"emails\",state=\"ready\"} 5"));
	assert_true(has_line(
	    t, "sluice_tube_tasks{tube=\"emails\",state=\"buried\"} 1"));
	assert_true(has_line(t,
	    "sluice_tube_tasks{tube=\"odd\\\"na\\\\me\",state=\"ready\"} 0"));
	assert_true(has_line(t, "sluice_tube_puts_total{tube=\"emails\"} 7"));
	assert_true(
	    has_line(t, "sluice_tube_ttr_expired_total{tube=\"emails\"} 2"));
	assert_true(has_line(
	    t, "sluice_tube_disconnect_releases_total{tube=\"emails\"} 1"));
	assert_true(has_line(
	    t, "sluice_tube_oldest_ready_age_seconds{tube=\"emails\"} 1.500"));
	assert_true(has_line(t, "sluice_connections 4"));
	assert_true(has_line(t, "sluice_waiting_takes 2"));
	assert_true(has_line(t, "sluice_lsn 100"));
	assert_true(has_line(t, "sluice_durable_lsn 99"));
	assert_true(has_line(t, "sluice_epoch 3"));
	assert_true(has_line(t, "sluice_role{role=\"leader\"} 1"));
	assert_true(has_line(t, "sluice_role{role=\"follower\"} 0"));
	assert_true(has_line(t, "sluice_uptime_seconds 61.500"));
	assert_true(has_line(t, "sluice_log_reserved_bytes 2204976"));
	assert_true(has_line(t, "sluice_log_available_bytes 2205408"));
	assert_true(has_line(t, "sluice_log_refusing_puts 1"));
	assert_true(has_line(t, "sluice_log_files_bytes 8388608"));
	assert_int_equal(
	    count(t, "# TYPE sluice_log_refusing_puts gauge\n"), 1);
	assert_true(has_line(t, "# TYPE sluice_log_commit_seconds histogram"));
	assert_true(
	    has_line(t, "sluice_log_commit_seconds_bucket{le=\"1.6e-05\"} 1"));
	assert_true(
	    has_line(t, "sluice_log_commit_seconds_bucket{le=\"3.2e-05\"} 3"));
	assert_true(
	    has_line(t, "sluice_log_commit_seconds_bucket{le=\"+Inf\"} 5"));
	assert_true(has_line(t, "sluice_log_commit_seconds_sum 2"));
	assert_true(has_line(t, "sluice_log_commit_seconds_count 5"));
	assert_true(has_line(t, "sluice_log_batch_records_bucket{le=\"2\"} 4"));
	assert_true(has_line(t, "sluice_log_batch_records_sum 12"));
	assert_true(has_line(t, "sluice_log_batch_records_count 5"));
	assert_true(has_line(t, "sluice_snapshot_age_seconds 10.500"));
	assert_true(has_line(t, "sluice_snapshot_duration_seconds 0.250"));
	assert_true(has_line(t, "sluice_followers 0"));
	free(t);
}

/* A follower: its role; no snapshot yet is NaN, not a made-up age. A
 * leader's followers get a sample each, labelled by their name (a node
 * name, or an address with '_' for '.' and ':'), not a position. */
static void
test_metrics_write_roles_followers_and_no_snapshot(void **state)
{
	static const struct sluice_kv node[] = { { "leader_connected", 0 },
		{ "lag_records", 7 }, { "lag_ms", 1200 }, { "followers", 2 },
		{ "follower_n2_acked_lsn", 90 },
		{ "follower_n2_lag_records", 10 },
		{ "follower_n2_lag_ms", 350 }, { "follower_n2_ack_ms", 4 },
		{ "follower_127_0_0_1_7713_acked_lsn", 100 },
		{ "follower_127_0_0_1_7713_lag_records", 0 },
		{ "follower_127_0_0_1_7713_lag_ms", 0 } };
	struct sluice_stats s = { .role = SLUICE_FOLLOWER,
		.leader = "x",
		.nkv = sizeof(node) / sizeof(node[0]),
		.kv = node };
	char *t = prom(&s);
	(void)state;

	assert_true(has_line(t, "sluice_role{role=\"follower\"} 1"));
	assert_true(has_line(t, "sluice_leader_lost 1"));
	assert_true(has_line(t, "sluice_replication_lag_records 7"));
	assert_true(has_line(t, "sluice_replication_lag_seconds 1.200"));
	assert_true(has_line(t, "sluice_snapshot_age_seconds NaN"));
	assert_true(has_line(t, "sluice_followers 2"));
	assert_true(
	    has_line(t, "sluice_follower_acked_lsn{follower=\"n2\"} 90"));
	assert_true(
	    has_line(t, "sluice_follower_lag_records{follower=\"n2\"} 10"));
	assert_true(
	    has_line(t, "sluice_follower_lag_seconds{follower=\"n2\"} 0.350"));
	assert_true(has_line(
	    t, "sluice_follower_lag_records{follower=\"127_0_0_1_7713\"} 0"));
	assert_true(
	    has_line(t, "sluice_follower_ack_seconds{follower=\"n2\"} 0.004"));
	assert_int_equal(count(t, "sluice_follower_acked_lsn{"), 2);
	assert_int_equal(count(t, "{follower=\"1\"}"), 0);
	assert_int_equal(count(t, "sluice_tube_tasks{"), 0);
	free(t);
}

/* /health: recovering and stopping first, then a failed log, then a
 * follower without its leader; a leader never has "lost its leader". */
static void
test_health_status_names_the_first_reason(void **state)
{
	struct http_health h = { .phase = HTTP_RECOVERING,
		.log_failed = true,
		.follower = true,
		.leader_lost = true };
	const char *why;
	(void)state;

	assert_int_equal(http_health_status(&h, &why), 503);
	assert_non_null(strstr(why, "recovering"));
	h.phase = HTTP_STOPPING;
	assert_int_equal(http_health_status(&h, &why), 503);
	assert_string_equal(why, "stopping");
	h.phase = HTTP_SERVING;
	assert_int_equal(http_health_status(&h, &why), 503);
	assert_non_null(strstr(why, "log refuses writes"));
	h.log_failed = false;
	assert_int_equal(http_health_status(&h, &why), 503);
	assert_non_null(strstr(why, "follower lost its leader"));
	h.leader_lost = false;
	assert_int_equal(http_health_status(&h, &why), 200);
	assert_string_equal(why, "ok");
	h.follower = false;
	h.leader_lost = true;
	assert_int_equal(http_health_status(&h, &why), 200);
	h.fenced = true;
	assert_int_equal(http_health_status(&h, &why), 503);
	assert_non_null(strstr(why, "fenced"));
	/* a full log refuses puts only: last, with the reason alerts match */
	h.log_full = true;
	assert_int_equal(http_health_status(&h, &why), 503);
	assert_non_null(strstr(why, "fenced"));
	h.fenced = false;
	assert_int_equal(http_health_status(&h, &why), 503);
	assert_string_equal(why, "log full: puts refused");
	h.log_full = false;
	assert_int_equal(http_health_status(&h, &why), 200);
}

/* The groups' gauges: three families, each sample labelled with its tube
 * and group ("" for none, escaped), the age in seconds; never more than
 * METRICS_GROUPS groups whatever the reply holds. */
static void
test_metrics_groups_bounded_and_labelled(void **state)
{
	struct sluice_group g[METRICS_GROUPS + 5];
	char name[METRICS_GROUPS + 5][16];
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	for (int i = 0; i < METRICS_GROUPS + 5; i++) {
		snprintf(name[i], sizeof(name[i]), "g%d", i);
		g[i] = (struct sluice_group) { "emails", name[i],
			(uint64_t)(100 - i), 1, 1500 };
	}
	g[1].group = NULL;
	g[2].tube = "odd\"tube";
	assert_non_null(f = open_memstream(&body, &len));
	metrics_groups(f, g, METRICS_GROUPS + 5);
	fclose(f);
	assert_int_equal(
	    count(body, "# TYPE sluice_group_ready_tasks gauge\n"), 1);
	assert_int_equal(
	    count(body, "# TYPE sluice_group_taken_tasks gauge\n"), 1);
	assert_int_equal(
	    count(body, "# TYPE sluice_group_oldest_ready_age_seconds gauge\n"),
	    1);
	assert_int_equal(
	    count(body, "\nsluice_group_ready_tasks{"), METRICS_GROUPS);
	assert_int_equal(
	    count(body, "\nsluice_group_taken_tasks{"), METRICS_GROUPS);
	assert_true(has_line(body,
	    "sluice_group_ready_tasks{tube=\"emails\",group=\"g0\"} 100"));
	assert_true(has_line(
	    body, "sluice_group_ready_tasks{tube=\"emails\",group=\"\"} 99"));
	assert_true(has_line(body,
	    "sluice_group_taken_tasks{tube=\"odd\\\"tube\",group=\"g2\"} 1"));
	assert_true(has_line(body,
	    "sluice_group_oldest_ready_age_seconds{tube=\"emails\",group="
	    "\"g0\"} "
	    "1.500"));
	assert_int_equal(count(body, "group=\"g20\""), 0);
	free(body);
}

/* Captures what log_msg writes to stderr. */
static void
log_capture(char *buf, size_t cap, bool json, const char *msg)
{
	int fds[2], saved;
	ssize_t n;

	assert_int_equal(pipe(fds), 0);
	saved = dup(STDERR_FILENO);
	dup2(fds[1], STDERR_FILENO);
	log_set_json(json);
	log_msg(LOG_WARN, "wal", "%s", msg);
	log_set_json(false);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fds[1]);
	n = read(fds[0], buf, cap - 1);
	close(fds[0]);
	assert_true(n > 0);
	buf[n] = '\0';
}

/* --log-format json: one object per line, the message escaped, and its
 * key=value words as fields too. Text: time, level, subsystem, message. */
static void
test_log_lines_json_and_text(void **state)
{
	char buf[4096];
	(void)state;

	log_capture(buf, sizeof(buf), true, "fsync \"a\\b\": EIO\nnext");
	assert_true(strncmp(buf, "{\"time\":\"", 9) == 0);
	assert_non_null(strstr(buf,
	    "Z\",\"level\":\"warn\",\"subsys\":\"wal\",\"msg\":\"fsync "
	    "\\\"a\\\\b\\\": EIO\\u000anext\"}\n"));
	assert_int_equal(count(buf, "\n"), 1);

	log_capture(buf, sizeof(buf), true,
	    "admin kick id=42 tube=jobs why=\"by hand\" result=ok x= =y");
	assert_non_null(strstr(buf,
	    "\"msg\":\"admin kick id=42 tube=jobs why=\\\"by hand\\\" "
	    "result=ok x= =y\",\"id\":\"42\",\"tube\":\"jobs\","
	    "\"why\":\"by hand\",\"result\":\"ok\"}\n"));

	/* The server's shape: a phrase, fields (a path, a quoted error),
	 * then advice after a quoted value, which adds no field. */
	log_capture(buf, sizeof(buf), true,
	    "cannot start data=/var/lib/sluice error=\"damaged data on "
	    "disk\"; run 'sluice-log verify /var/lib/sluice'");
	assert_non_null(strstr(buf,
	    ",\"data\":\"/var/lib/sluice\",\"error\":\"damaged data on "
	    "disk\"}\n"));

	/* A message ending in a word: nothing read past its end (a field
	 * of the line before must not come back). */
	log_capture(buf, sizeof(buf), true, "x addr=1 admin=yes");
	log_capture(buf, sizeof(buf), true, "stopped after in-flight work");
	assert_non_null(
	    strstr(buf, "\"msg\":\"stopped after in-flight work\"}\n"));

	log_capture(buf, sizeof(buf), false, "segment cut at=64");
	assert_int_equal(buf[4], '-');
	assert_non_null(strstr(buf, "Z warn wal: segment cut at=64\n"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_metrics_write_every_family_once_with_its_samples),
		cmocka_unit_test(
		    test_metrics_write_roles_followers_and_no_snapshot),
		cmocka_unit_test(test_health_status_names_the_first_reason),
		cmocka_unit_test(test_metrics_groups_bounded_and_labelled),
		cmocka_unit_test(test_log_lines_json_and_text),
	};
	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
