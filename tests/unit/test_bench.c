/* Tests of sluice-bench's pure parts: the latency histogram and its
 * percentiles, the command line, and the beanstalkd and Redis (RESP)
 * reply parsers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_bsreply.h"
#include "bench_hist.h"
#include "bench_opts.h"
#include "bench_resp.h"
#include "util/dur.h"
#include "t_lib.h"

/* ---- histogram ---------------------------------------------------- */

/* Every bucket's range starts right after the previous one's. */
static void
test_hist_buckets_tile_the_values(void **state)
{
	(void)state;
	assert_int_equal(bench_hist_low(0), 0);
	for (unsigned i = 1; i < BENCH_HIST_BUCKETS; i++) {
		assert_true(bench_hist_low(i) == bench_hist_high(i - 1) + 1);
		assert_true(bench_hist_low(i) <= bench_hist_high(i));
	}
	assert_true(bench_hist_high(BENCH_HIST_BUCKETS - 1) == UINT64_MAX);
}

/* A value lands in the bucket whose range holds it, and that range is at
 * most 1/64 of the value wide. */
static void
test_hist_value_lands_in_its_bucket(void **state)
{
	uint64_t seed = t_seed(7);

	(void)state;
	for (int i = 0; i < 100000; i++) {
		uint64_t v = t_rand(&seed) >> (t_rand(&seed) % 64);
		unsigned idx = bench_hist_index(v);
		assert_true(idx < BENCH_HIST_BUCKETS);
		assert_true(bench_hist_low(idx) <= v);
		assert_true(v <= bench_hist_high(idx));
		assert_true(
		    bench_hist_high(idx) - bench_hist_low(idx) <= v / 64);
	}
	assert_int_equal(bench_hist_index(0), 0);
	assert_int_equal(bench_hist_index(127), 127);
	assert_int_equal(bench_hist_index(128), 128);
	assert_int_equal(bench_hist_index(UINT64_MAX), BENCH_HIST_BUCKETS - 1);
}

/* Below 128 ns values are exact: percentiles are the classic nearest-rank
 * ones. */
static void
test_hist_percentiles_exact_for_small_values(void **state)
{
	struct bench_hist *h = malloc(sizeof(*h));

	(void)state;
	bench_hist_init(h);
	assert_int_equal(bench_hist_percentile(h, 50), 0);
	for (uint64_t v = 1; v <= 100; v++)
		bench_hist_record(h, v);
	assert_int_equal(h->count, 100);
	assert_int_equal(h->min, 1);
	assert_int_equal(h->max, 100);
	assert_int_equal(bench_hist_percentile(h, 50), 50);
	assert_int_equal(bench_hist_percentile(h, 99), 99);
	assert_int_equal(bench_hist_percentile(h, 99.9), 100);
	assert_int_equal(bench_hist_percentile(h, 100), 100);
	assert_int_equal(bench_hist_percentile(h, 0.001), 1);
	assert_true(bench_hist_mean(h) == 50.5);
	free(h);
}

/* Large values come back within 1/64 above their true percentile, never
 * above the max. */
static void
test_hist_percentiles_within_precision(void **state)
{
	struct bench_hist *h = malloc(sizeof(*h));
	const double pcts[] = { 50, 90, 99, 99.9 };

	(void)state;
	bench_hist_init(h);
	/* 1..1,000,000 microseconds, in ns */
	for (uint64_t v = 1; v <= 1000000; v++)
		bench_hist_record(h, v * 1000);
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		double want = pcts[i] / 100.0 * 1e6 * 1000;
		double got = (double)bench_hist_percentile(h, pcts[i]);
		assert_true(got >= want);
		assert_true(got <= want * (1.0 + 1.0 / 64));
	}
	assert_true(bench_hist_percentile(h, 100) == 1000000000ULL);
	free(h);
}

/* Merging two histograms is the same as recording both sets in one. */
static void
test_hist_merge_equals_recording_all(void **state)
{
	struct bench_hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct bench_hist *all = malloc(sizeof(*all));
	uint64_t seed = t_seed(11);

	(void)state;
	bench_hist_init(a);
	bench_hist_init(b);
	bench_hist_init(all);
	for (int i = 0; i < 5000; i++) {
		uint64_t v = t_rand(&seed) % 50000000;
		bench_hist_record(i % 3 ? a : b, v);
		bench_hist_record(all, v);
	}
	bench_hist_merge(a, b);
	assert_int_equal(a->count, all->count);
	assert_int_equal(a->min, all->min);
	assert_int_equal(a->max, all->max);
	assert_memory_equal(a->bucket, all->bucket, sizeof(a->bucket));
	assert_int_equal(
	    bench_hist_percentile(a, 99), bench_hist_percentile(all, 99));
	/* an empty one changes nothing */
	bench_hist_init(b);
	bench_hist_merge(a, b);
	assert_int_equal(a->min, all->min);
	free(a);
	free(b);
	free(all);
}

/* ---- options ------------------------------------------------------ */

static int
parse(struct bench_opts *o, char *err, const char *line)
{
	char buf[512], *argv[32];
	int argc = 0;

	snprintf(buf, sizeof(buf), "sluice-bench %s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	err[0] = '\0';
	return bench_opts_parse(o, argc, argv, err, 256);
}

/* The flags of the synopsis fill their fields; the rest keep defaults. */
static void
test_opts_full_command_line(void **state)
{
	struct bench_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(&o, err,
	                     "--target sluice --url tcp://127.0.0.1:7800 "
	                     "--workload put -c 32 -n 100k -s 100 --batch 50 "
	                     "--tube t1 --json --duration 5s"),
	    0);
	assert_int_equal(o.target, BENCH_SLUICE);
	assert_int_equal(o.workload, BENCH_PUT);
	assert_string_equal(o.url, "tcp://127.0.0.1:7800");
	assert_int_equal(o.conns, 32);
	assert_int_equal(o.tasks, 100000);
	assert_int_equal(o.bytes, 100);
	assert_int_equal(o.batch, 50);
	assert_string_equal(o.tube, "t1");
	assert_true(o.json);
	assert_int_equal(o.duration_ms, 5000);
	assert_int_equal(o.timeout_ms, BENCH_TIMEOUT_MS_DEFAULT);
}

/* Each target has its default address; mixed runs 10 s unless told. */
static void
test_opts_defaults_per_target(void **state)
{
	struct bench_opts o;
	char err[256];

	(void)state;
	assert_int_equal(
	    parse(&o, err, "--target beanstalkd --workload mixed"), 0);
	assert_string_equal(o.url, "tcp://127.0.0.1:11300");
	assert_int_equal(o.duration_ms, 10000);
	assert_int_equal(o.preload, BENCH_PRELOAD_DEFAULT);
	assert_int_equal(o.conns, 1);
	assert_int_equal(o.batch, 1);
	assert_int_equal(parse(&o, err, "--target sluice --workload drain"), 0);
	assert_string_equal(o.url, "tcp://127.0.0.1:7711");
	assert_int_equal(o.duration_ms, 0);
	assert_int_equal(
	    parse(&o, err, "--target sluice --workload drain --duration 5s"),
	    0);
	assert_int_equal(o.duration_ms, 5000);
	/* a bare number is no duration, as for sluiced and the sluice tool */
	assert_int_equal(
	    parse(&o, err, "--target sluice --workload drain --duration 5"),
	    -1);
	assert_non_null(strstr(
	    err, "--duration 5: a duration needs a unit: say 5s or 5000ms"));
	assert_int_equal(parse(&o, err, "--target redis --workload put"), 0);
	assert_int_equal(o.target, BENCH_REDIS);
	assert_string_equal(o.url, "tcp://127.0.0.1:6379");
	assert_int_equal(parse(&o, err, "--target http --workload put"), 0);
	assert_int_equal(o.target, BENCH_HTTP);
	assert_string_equal(o.url, "tcp://127.0.0.1:7780");
	assert_string_equal(bench_target_name(o.target), "http");
	assert_int_equal(o.server_pid, 0);
	assert_int_equal(parse(&o, err,
	                     "--target libsluice --workload put --batch 100 "
	                     "--server-pid 4242"),
	    0);
	assert_int_equal(o.target, BENCH_LIBSLUICE);
	assert_string_equal(o.url, "tcp://127.0.0.1:7711");
	assert_int_equal(o.batch, 100);
	assert_int_equal(o.server_pid, 4242);
	assert_int_equal(parse(&o, err, "--help"), 1);
}

/* Wrong command lines are refused with a reason, before any connection. */
static void
test_opts_refuses_wrong_lines(void **state)
{
	static const char *const bad[] = {
		"--workload put",                         /* no target */
		"--target sluice",                        /* no workload */
		"--target memcached --workload put",      /* bad target */
		"--target sluice --workload get",         /* bad workload */
		"--target sluice --workload put -c 0",    /* no conns */
		"--target sluice --workload put -c 5000", /* too many */
		"--target sluice --workload put -n x",    /* not a count */
		"--target sluice --workload put -n 0",    /* zero tasks */
		"--target sluice --workload put --batch 1001", /* over the max
		                                                */
		"--target sluice --workload drain --batch 10", /* put only */
		"--target sluice --workload mixed --batch 10", /* put only */
		"--target sluice --workload put --preload 10", /* mixed only */
		"--target sluice --workload put --tube a:b",   /* beanstalkd */
		"--target sluice --workload put --tube -a",
		"--target sluice --workload put --url ipc:///x",
		"--target sluice --workload put --duration 5x",
		"--target sluice --workload mixed --duration 10s --limit 5s",
		"--target sluice --workload put extra",
		"--target sluice --workload put --bogus",
		"--target sluice --workload put -c",
		"--target redis --workload put --server-pid 0",
		"--target redis --workload put --server-pid x",
	};
	struct bench_opts o;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(&o, err, bad[i]) != -1)
			fail_msg("accepted: %s", bad[i]);
		assert_true(err[0] != '\0');
	}
}

static void
test_opts_durations_and_counts(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(bench_parse_duration("10s", &v), 0);
	assert_int_equal(v, 10000);
	assert_int_equal(bench_parse_duration("10", &v), DUR_EBARE);
	assert_int_equal(bench_parse_duration("250ms", &v), 0);
	assert_int_equal(v, 250);
	assert_int_equal(bench_parse_duration("1.5s", &v), 0);
	assert_int_equal(v, 1500);
	assert_int_equal(bench_parse_duration("2m", &v), 0);
	assert_int_equal(v, 120000);
	assert_int_equal(bench_parse_duration("", &v), -1);
	assert_int_equal(bench_parse_duration("-1s", &v), -1);
	assert_int_equal(bench_parse_duration("s", &v), -1);
	assert_int_equal(bench_parse_count("42", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(bench_parse_count("3k", &v), 0);
	assert_int_equal(v, 3000);
	assert_int_equal(bench_parse_count("2M", &v), 0);
	assert_int_equal(v, 2000000);
	assert_int_equal(bench_parse_count("-3", &v), -1);
	assert_int_equal(bench_parse_count("3kk", &v), -1);
	assert_int_equal(bench_parse_count("99999999999999999999", &v), -1);
}

/* Mixed splits producers and consumers in halves; one connection does
 * both. */
static void
test_opts_roles(void **state)
{
	(void)state;
	assert_int_equal(bench_role_of(BENCH_PUT, 3, 8), BENCH_PRODUCER);
	assert_int_equal(bench_role_of(BENCH_DRAIN, 0, 8), BENCH_CONSUMER);
	assert_int_equal(bench_role_of(BENCH_MIXED, 0, 1), BENCH_BOTH);
	assert_int_equal(bench_role_of(BENCH_MIXED, 0, 2), BENCH_PRODUCER);
	assert_int_equal(bench_role_of(BENCH_MIXED, 1, 2), BENCH_CONSUMER);
	assert_int_equal(bench_role_of(BENCH_MIXED, 15, 32), BENCH_PRODUCER);
	assert_int_equal(bench_role_of(BENCH_MIXED, 16, 32), BENCH_CONSUMER);
	assert_int_equal(bench_role_of(BENCH_MIXED, 1, 3), BENCH_CONSUMER);
}

/* ---- beanstalkd replies ------------------------------------------- */

static long
bsparse(const char *s, struct bench_bsreply *r)
{
	return bench_bsreply_parse(s, strlen(s), r);
}

/* The replies the benchmark waits for parse, with their numbers. */
static void
test_bsreply_parses_each_reply(void **state)
{
	struct bench_bsreply r;

	(void)state;
	assert_int_equal(bsparse("INSERTED 42\r\n", &r), 13);
	assert_int_equal(r.kind, BS_INSERTED);
	assert_int_equal(r.id, 42);
	assert_int_equal(bsparse("BURIED 7\r\n", &r), 10);
	assert_int_equal(r.kind, BS_BURIED);
	assert_int_equal(r.id, 7);
	assert_int_equal(
	    bsparse("RESERVED 9 5\r\nhello\r\nDELETED\r\n", &r), 21);
	assert_int_equal(r.kind, BS_RESERVED);
	assert_int_equal(r.id, 9);
	assert_int_equal(r.body_len, 5);
	assert_memory_equal(r.body, "hello", 5);
	assert_int_equal(bsparse("RESERVED 9 0\r\n\r\n", &r), 16);
	assert_int_equal(r.body_len, 0);
	assert_int_equal(bsparse("TIMED_OUT\r\n", &r), 11);
	assert_int_equal(r.kind, BS_TIMED_OUT);
	assert_int_equal(bsparse("DELETED\r\n", &r), 9);
	assert_int_equal(r.kind, BS_DELETED);
	assert_int_equal(bsparse("NOT_FOUND\r\n", &r), 11);
	assert_int_equal(r.kind, BS_NOT_FOUND);
	assert_int_equal(bsparse("DEADLINE_SOON\r\n", &r), 15);
	assert_int_equal(r.kind, BS_DEADLINE_SOON);
	assert_int_equal(bsparse("USING t1\r\n", &r), 10);
	assert_int_equal(r.kind, BS_USING);
	assert_int_equal(bsparse("WATCHING 2\r\n", &r), 12);
	assert_int_equal(r.kind, BS_WATCHING);
	assert_int_equal(r.id, 2);
	assert_int_equal(bsparse("OUT_OF_MEMORY\r\n", &r), 15);
	assert_int_equal(r.kind, BS_OTHER);
	assert_int_equal(r.line_len, 13);
	/* a known word without its argument is some other reply */
	assert_int_equal(bsparse("WATCHING\r\n", &r), 10);
	assert_int_equal(r.kind, BS_OTHER);
}

/* Any prefix of a reply asks for more bytes, never misparses. */
static void
test_bsreply_waits_for_the_whole_reply(void **state)
{
	static const char *const replies[] = { "INSERTED 1234\r\n",
		"RESERVED 5 3\r\nabc\r\n", "OK 4\r\na: 1\r\n",
		"TIMED_OUT\r\n" };
	struct bench_bsreply r;

	(void)state;
	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		size_t n = strlen(replies[i]);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(
			    bench_bsreply_parse(replies[i], k, &r), 0);
		assert_int_equal(
		    bench_bsreply_parse(replies[i], n, &r), (long)n);
	}
}

/* Bytes that cannot be a reply are refused. */
static void
test_bsreply_refuses_garbage(void **state)
{
	char big[BENCH_BSREPLY_LINE_MAX + 10];
	struct bench_bsreply r;

	(void)state;
	assert_int_equal(bsparse("INSERTED x\r\n", &r), -1);
	assert_int_equal(bsparse("INSERTED 1 2\r\n", &r), -1);
	assert_int_equal(bsparse("RESERVED 1\r\n", &r), -1);
	assert_int_equal(bsparse("RESERVED 1 3\r\nabcd\r\n", &r), -1);
	assert_int_equal(bsparse("INSERTED 99999999999999999999\r\n", &r), -1);
	memset(big, 'A', sizeof(big));
	assert_int_equal(bench_bsreply_parse(big, sizeof(big), &r), -1);
}

/* stats-tube's YAML yields the counts the drain check adds up. */
static void
test_bsreply_reads_stats(void **state)
{
	static const char body[] = "---\nname: t1\ncurrent-urgent: 0\n"
	                           "current-jobs-ready: 12\n"
	                           "current-jobs-reserved: 3\n"
	                           "current-jobs-ready-x: 9\n";

	(void)state;
	assert_int_equal(
	    bench_bsreply_stat(body, sizeof(body) - 1, "current-jobs-ready"),
	    12);
	assert_int_equal(
	    bench_bsreply_stat(body, sizeof(body) - 1, "current-jobs-reserved"),
	    3);
	assert_int_equal(
	    bench_bsreply_stat(body, sizeof(body) - 1, "current-jobs-buried"),
	    -1);
}

/* ---- Redis replies (RESP) ----------------------------------------- */

/* A command is an array of bulk strings; the length comes back even when
 * the buffer is too small, and nothing is written past it. */
static void
test_resp_writes_a_command(void **state)
{
	static const char want[] = "*3\r\n$4\r\nXLEN\r\n$1\r\nt\r\n$0\r\n\r\n";
	const char *argv[] = { "XLEN", "t", "" };
	size_t lens[] = { 4, 1, 0 };
	char buf[64];

	(void)state;
	assert_int_equal(
	    bench_resp_cmd(buf, sizeof(buf), 3, argv, lens), sizeof(want) - 1);
	assert_memory_equal(buf, want, sizeof(want) - 1);
	memset(buf, '#', sizeof(buf));
	assert_int_equal(
	    bench_resp_cmd(buf, 10, 3, argv, lens), sizeof(want) - 1);
	assert_int_equal(buf[10], '#');
	assert_int_equal(
	    bench_resp_cmd(NULL, 0, 3, argv, lens), sizeof(want) - 1);
}

static long
rparse(const char *s, struct bench_resp *r)
{
	return bench_resp_parse(s, strlen(s), r);
}

/* Each type of reply parses, nested arrays spanned whole. */
static void
test_resp_parses_each_type(void **state)
{
	struct bench_resp r;

	(void)state;
	assert_int_equal(rparse("+OK\r\n", &r), 5);
	assert_int_equal(r.type, BENCH_RESP_SIMPLE);
	assert_int_equal(r.len, 2);
	assert_memory_equal(r.str, "OK", 2);
	assert_int_equal(rparse("-BUSYGROUP exists\r\n", &r), 19);
	assert_int_equal(r.type, BENCH_RESP_ERROR);
	assert_int_equal(r.len, 16);
	assert_int_equal(rparse(":42\r\n", &r), 5);
	assert_int_equal(r.type, BENCH_RESP_INT);
	assert_int_equal(r.n, 42);
	assert_int_equal(rparse(":-3\r\n", &r), 5);
	assert_int_equal(r.n, -3);
	assert_int_equal(rparse("$5\r\nhello\r\n:1\r\n", &r), 11);
	assert_int_equal(r.type, BENCH_RESP_BULK);
	assert_int_equal(r.len, 5);
	assert_memory_equal(r.str, "hello", 5);
	assert_int_equal(rparse("$-1\r\n", &r), 5);
	assert_true(r.nil);
	assert_int_equal(rparse("*-1\r\n", &r), 5);
	assert_int_equal(r.type, BENCH_RESP_ARRAY);
	assert_true(r.nil);
	assert_int_equal(rparse("*0\r\n", &r), 4);
	assert_int_equal(r.n, 0);
	assert_int_equal(
	    rparse("*2\r\n*1\r\n:1\r\n$2\r\nab\r\n+x\r\n", &r), 20);
	assert_int_equal(r.n, 2);
}

/* Any prefix of a reply asks for more bytes, never misparses. */
static void
test_resp_waits_for_the_whole_reply(void **state)
{
	static const char *const replies[] = { "+OK\r\n", ":12345\r\n",
		"$3\r\nabc\r\n", "*2\r\n$1\r\na\r\n*1\r\n:7\r\n", "*-1\r\n" };
	struct bench_resp r;

	(void)state;
	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		size_t n = strlen(replies[i]);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(
			    bench_resp_parse(replies[i], k, &r), 0);
		assert_int_equal(bench_resp_parse(replies[i], n, &r), (long)n);
	}
}

/* Bytes that cannot be a reply are refused. */
static void
test_resp_refuses_garbage(void **state)
{
	char big[BENCH_RESP_LINE_MAX + 10], deep[64] = "";
	struct bench_resp r;

	(void)state;
	assert_int_equal(rparse("OK\r\n", &r), -1);
	assert_int_equal(rparse(":x\r\n", &r), -1);
	assert_int_equal(rparse(":\r\n", &r), -1);
	assert_int_equal(rparse(":-\r\n", &r), -1);
	assert_int_equal(rparse(":99999999999999999999\r\n", &r), -1);
	assert_int_equal(rparse("$-2\r\n", &r), -1);
	assert_int_equal(rparse("$3\r\nabcd\r\n", &r), -1);
	assert_int_equal(rparse("*-2\r\n", &r), -1);
	assert_int_equal(rparse("*1\r\n?\r\n", &r), -1);
	memset(big, '+', sizeof(big));
	assert_int_equal(bench_resp_parse(big, sizeof(big), &r), -1);
	for (int i = 0; i <= BENCH_RESP_DEPTH_MAX; i++)
		strcat(deep, "*1\r\n");
	strcat(deep, ":1\r\n");
	assert_int_equal(rparse(deep, &r), -1);
}

/* XREADGROUP's reply yields the entry's id and its payload's size; nil or
 * an empty list is "nothing new"; another shape is refused. */
static void
test_resp_reads_a_stream_entry(void **state)
{
	static const char one[] = "*1\r\n*2\r\n$5\r\nbench\r\n*1\r\n"
	                          "*2\r\n$15\r\n1700000000000-7\r\n"
	                          "*4\r\n$1\r\na\r\n$1\r\nb\r\n"
	                          "$7\r\npayload\r\n$3\r\nxyz\r\n";
	static const char none[] = "*1\r\n*2\r\n$5\r\nbench\r\n*0\r\n";
	static const char nofield[] = "*1\r\n*2\r\n$1\r\nt\r\n*1\r\n"
	                              "*2\r\n$3\r\n1-1\r\n"
	                              "*2\r\n$1\r\na\r\n$1\r\nb\r\n";
	const char *id;
	size_t id_len, value_len;

	(void)state;
	assert_int_equal(
	    rparse(one, &(struct bench_resp) { 0 }), (long)sizeof(one) - 1);
	assert_int_equal(bench_resp_stream_entry(one, sizeof(one) - 1,
	                     "payload", &id, &id_len, &value_len),
	    1);
	assert_int_equal(id_len, 15);
	assert_memory_equal(id, "1700000000000-7", 15);
	assert_int_equal(value_len, 3);
	assert_int_equal(bench_resp_stream_entry(
	                     "*-1\r\n", 5, "payload", &id, &id_len, &value_len),
	    0);
	assert_int_equal(bench_resp_stream_entry(
	                     "$-1\r\n", 5, "payload", &id, &id_len, &value_len),
	    0);
	assert_int_equal(bench_resp_stream_entry(none, sizeof(none) - 1,
	                     "payload", &id, &id_len, &value_len),
	    0);
	assert_int_equal(bench_resp_stream_entry(nofield, sizeof(nofield) - 1,
	                     "payload", &id, &id_len, &value_len),
	    -1);
	assert_int_equal(bench_resp_stream_entry(
	                     ":1\r\n", 4, "payload", &id, &id_len, &value_len),
	    -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_buckets_tile_the_values),
		cmocka_unit_test(test_hist_value_lands_in_its_bucket),
		cmocka_unit_test(test_hist_percentiles_exact_for_small_values),
		cmocka_unit_test(test_hist_percentiles_within_precision),
		cmocka_unit_test(test_hist_merge_equals_recording_all),
		cmocka_unit_test(test_opts_full_command_line),
		cmocka_unit_test(test_opts_defaults_per_target),
		cmocka_unit_test(test_opts_refuses_wrong_lines),
		cmocka_unit_test(test_opts_durations_and_counts),
		cmocka_unit_test(test_opts_roles),
		cmocka_unit_test(test_bsreply_parses_each_reply),
		cmocka_unit_test(test_bsreply_waits_for_the_whole_reply),
		cmocka_unit_test(test_bsreply_refuses_garbage),
		cmocka_unit_test(test_bsreply_reads_stats),
		cmocka_unit_test(test_resp_writes_a_command),
		cmocka_unit_test(test_resp_parses_each_type),
		cmocka_unit_test(test_resp_waits_for_the_whole_reply),
		cmocka_unit_test(test_resp_refuses_garbage),
		cmocka_unit_test(test_resp_reads_a_stream_entry),
	};
	return cmocka_run_group_tests_name("bench", tests, NULL, NULL);
}
