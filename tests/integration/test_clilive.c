/* The sluice command-line tool against a real sluiced: every command, its
 * JSON shapes (SPEC §6), its exit codes (0 ok, 1 error, 2 usage, 3 nothing
 * to take), `put --lines` and `work`. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

enum { OUT_MAX = 512 << 10 };

static char out[OUT_MAX], err[OUT_MAX];

/* Runs `sluice -s URL ARGS...` (NULL-ended) with `in` on stdin; returns
 * its exit code, its stdout in `out`, its stderr in `err`. */
static int
vcli(const char *url, const char *in, va_list ap)
{
	return it_cli_v(url, in, out, sizeof(out), err, sizeof(err), ap);
}

static int
cli(const struct t_srv *s, const char *in, ...)
{
	va_list ap;
	int rc;

	va_start(ap, in);
	rc = vcli(s->url, in, ap);
	va_end(ap);
	return rc;
}

/* The same against any URL. */
static int
cli_at(const char *url, const char *in, ...)
{
	va_list ap;
	int rc;

	va_start(ap, in);
	rc = vcli(url, in, ap);
	va_end(ap);
	return rc;
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

/* The first line of out, as a string (for ids). */
static const char *
first_line(char *buf, size_t n)
{
	snprintf(buf, n, "%.*s", (int)strcspn(out, "\n"), out);
	return buf;
}

/* The unsigned number after `"name":` in out. */
static unsigned long long
json_num(const char *json, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(json, key);
	if (p == NULL)
		fail_msg("no %s in %s", key, json);
	return strtoull(p + strlen(key), NULL, 10);
}

/* The sum of the numbers of the array `"name":[...]` in out; its last
 * number into *last (optional). */
static unsigned long long
json_sum_last(const char *json, const char *name, unsigned long long *last)
{
	unsigned long long sum = 0, v = 0;
	char key[64], *end;
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":[", name);
	p = strstr(json, key);
	if (p == NULL)
		fail_msg("no %s in %s", key, json);
	for (p += strlen(key); *p != ']'; p = end + (*end == ',')) {
		sum += v = strtoull(p, &end, 10);
		if (end == p)
			fail_msg("not an array of numbers: %s", json);
	}
	if (last != NULL)
		*last = v;
	return sum;
}

static unsigned long long
json_sum(const char *json, const char *name)
{
	return json_sum_last(json, name, NULL);
}

/* The last number of the array `"name":[...]` in out. */
static unsigned long long
json_last(const char *json, const char *name)
{
	unsigned long long last;

	json_sum_last(json, name, &last);
	return last;
}

static struct t_srv *
up(void **state)
{
	struct t_srv *s = it_srv(*state, "cli");

	it_start(s);
	return s;
}

/* put, take, ack in both forms, with the JSON shapes of SPEC §6. */
static void
test_put_take_ack_with_json(void **state)
{
	struct t_srv *s = up(state);
	char id[32], lease[32];

	assert_int_equal(cli(s, NULL, "put", "-t", "mail", "hello", NULL), 0);
	assert_string_equal(out, "1\n");
	assert_int_equal(
	    cli(s, NULL, "put", "-t", "mail", "--json", "second", NULL), 0);
	assert_non_null(strstr(out, "{\"id\":2,\"created\":true}"));

	assert_int_equal(cli(s, NULL, "take", "-t", "mail", "--json", NULL), 0);
	assert_int_equal(json_num(out, "id"), 1);
	assert_non_null(strstr(out, "\"tube\":\"mail\""));
	assert_non_null(strstr(out, "\"state\":\"taken\""));
	assert_non_null(strstr(out, "\"payload\":\"hello\""));
	assert_int_equal(json_num(out, "attempts"), 1);
	assert_int_equal(json_num(out, "priority"), 1024);
	assert_non_null(strstr(out, "\"last_error\":null"));
	assert_true(json_num(out, "run_at") > 0);
	snprintf(lease, sizeof(lease), "%llu", json_num(out, "lease"));

	/* a stale lease is refused, with a message and exit code 1 */
	assert_int_equal(cli(s, NULL, "ack", "1", "--lease", "999", NULL), 1);
	assert_non_null(strstr(err, "is stale"));
	assert_int_equal(cli(s, NULL, "ack", "1", "--lease", lease, NULL), 0);
	assert_int_equal(cli(s, NULL, "peek", "1", NULL), 1);

	/* payloads that are not UTF-8 come back as base64 */
	assert_int_equal(
	    cli(s, "\xff\xfe\n", "put", "-t", "bin", "--lines", NULL), 0);
	snprintf(id, sizeof(id), "%.*s", (int)strcspn(out, "\n"), out);
	assert_int_equal(cli(s, NULL, "peek", id, "--json", NULL), 0);
	assert_non_null(strstr(out, "\"payload_base64\":\"//4=\""));
}

/* Exit code 3 when nothing can be taken before the wait ends; 2 for bad
 * usage; 1 for a server's refusal. */
static void
test_exit_codes(void **state)
{
	struct t_srv *s = up(state);

	assert_int_equal(
	    cli(s, NULL, "take", "-t", "empty", "-w", "200ms", NULL), 3);
	assert_int_equal(cli(s, NULL, "take", "-t", "empty", NULL), 3);
	assert_int_equal(cli(s, NULL, "put", "--delay", "soon", "x", NULL), 2);
	assert_int_equal(cli(s, NULL, "no-such-command", NULL), 2);
	assert_int_equal(cli(s, NULL, "put", "-t", "bad tube!", "x", NULL), 1);
	assert_non_null(strstr(err, "tube"));
	assert_int_equal(cli(s, NULL, "delete", "424242", NULL), 1);
	assert_non_null(strstr(err, "no such task"));
	assert_int_equal(cli(s, NULL, "promote", NULL), 1);
	assert_int_equal(cli(s, NULL, "follow", "tcp://127.0.0.1:1", NULL), 1);
}

/* release, fail, touch, bury, kick, delete, peek, list, errors, pause,
 * stats --json and snapshot, each through the tool. */
static void
test_every_other_command(void **state)
{
	struct t_srv *s = up(state);
	unsigned long long ready;
	char lease[32];

	for (int i = 0; i < 3; i++)
		assert_int_equal(cli(s, NULL, "put", "-t", "w",
		                     "--max-attempts", "2", "job", NULL),
		    0);
	assert_int_equal(cli(s, NULL, "take", "-t", "w", "--json", NULL), 0);
	snprintf(lease, sizeof(lease), "%llu", json_num(out, "lease"));
	assert_int_equal(cli(s, NULL, "touch", "1", "--lease", lease, NULL), 0);
	assert_int_equal(cli(s, NULL, "release", "1", "--lease", lease,
	                     "--delay", "1h", "-p", "5", NULL),
	    0);
	assert_int_equal(cli(s, NULL, "peek", "1", "--json", NULL), 0);
	assert_non_null(strstr(out, "\"state\":\"delayed\""));
	assert_int_equal(json_num(out, "priority"), 5);
	assert_int_equal(cli(s, NULL, "kick", "--id", "1", NULL), 0);

	/* task 1 now comes first: priority 5 */
	assert_int_equal(cli(s, NULL, "take", "-t", "w", "--json", NULL), 0);
	assert_int_equal(json_num(out, "id"), 1);
	snprintf(lease, sizeof(lease), "%llu", json_num(out, "lease"));
	assert_int_equal(cli(s, NULL, "fail", "1", "--lease", lease, "-e",
	                     "disk on fire", NULL),
	    0);
	assert_int_equal(cli(s, NULL, "take", "-t", "w", "--json", NULL), 0);
	assert_int_equal(json_num(out, "id"), 2);
	snprintf(lease, sizeof(lease), "%llu", json_num(out, "lease"));
	assert_int_equal(cli(s, NULL, "bury", "2", "--lease", lease, NULL), 0);
	/* task 1 reached max-attempts (2) at its fail: buried first */
	assert_int_equal(
	    cli(s, NULL, "peek", "-t", "w", "--buried", "--json", NULL), 0);
	assert_int_equal(json_num(out, "id"), 1);

	assert_int_equal(cli(s, NULL, "errors", "-t", "w", "--json", NULL), 0);
	assert_non_null(strstr(out, "\"error\":\"disk on fire\""));
	assert_int_equal(cli(s, NULL, "list", "-t", "w", "--json", "--order",
	                     "attempts", NULL),
	    0);
	assert_non_null(strstr(out, "{\"tasks\":["));

	assert_int_equal(cli(s, NULL, "kick", "w", "5", NULL), 0);
	assert_int_equal(cli(s, NULL, "stats", "-t", "w", "--json", NULL), 0);
	ready = json_num(out, "ready");
	assert_int_equal(ready, 3); /* the two buried ones kicked */
	assert_non_null(strstr(out, "\"role\":\"leader\""));
	assert_non_null(strstr(out, "\"tubes\":{\"w\":{\"ready\":"));
	assert_non_null(strstr(out, "\"totals\":{"));
	assert_true(json_num(out, "lsn") > 0);
	assert_true(json_num(out, "epoch") >= 1);

	/* rates: the puts of the last minute, per second, of every tube
	 * and of w (5 s slots), and the depth of now in the last slot */
	assert_int_equal(
	    cli(s, NULL, "rates", "--secs", "60", "--json", NULL), 0);
	assert_int_equal(json_sum(out, "puts"), 3);
	assert_int_equal(json_sum(out, "fails"), 1);
	assert_int_equal(json_num(out, "step_ms"), 1000);
	assert_int_equal(json_last(out, "ready"), ready); /* the depth now */
	assert_int_equal(json_last(out, "buried"), 0);
	assert_int_equal(cli(s, NULL, "rates", "-t", "w", "--json", NULL), 0);
	assert_int_equal(json_sum(out, "puts"), 3);
	assert_int_equal(json_num(out, "step_ms"), 5000);
	assert_int_equal(json_last(out, "ready"), ready);
	assert_int_equal(json_last(out, "taken"), 0);
	assert_int_equal(cli(s, NULL, "rates", NULL), 0);
	assert_non_null(strstr(out, "puts                  3"));
	assert_non_null(strstr(out, "\nready                 3 "));
	assert_int_equal(cli(s, NULL, "rates", "--secs", "0", NULL), 2);
	assert_int_equal(cli(s, NULL, "rates", "-t", "nosuch", NULL), 1);

	assert_int_equal(cli(s, NULL, "pause", "w", "10s", NULL), 0);
	assert_int_equal(cli(s, NULL, "take", "-t", "w", NULL), 3);
	assert_int_equal(cli(s, NULL, "pause", "w", "0", NULL), 0);
	assert_int_equal(cli(s, NULL, "delete", "-t", "w", "--all", NULL), 0);
	assert_int_equal(cli(s, NULL, "stats", "-t", "w", "--json", NULL), 0);
	assert_int_equal(json_num(out, "ready"), 0);
	assert_int_equal(cli(s, NULL, "snapshot", NULL), 0);
}

/* put --lines prints an id per line; work runs a command per task: exit
 * 0 acks, any other exit fails the task with its last stderr line. */
static void
test_lines_and_work(void **state)
{
	struct t_srv *s = up(state);
	unsigned long ids = 0;

	assert_int_equal(cli(s, "a\nb\nc\n", "put", "-t", "jobs",
	                     "--max-attempts", "1", "--lines", NULL),
	    0);
	for (const char *p = out; *p != '\0'; p++)
		ids += *p == '\n';
	assert_int_equal(ids, 3);
	assert_int_equal(cli(s, NULL, "work", "-t", "jobs", "--max-tasks", "3",
	                     "--", "/bin/sh", "-c",
	                     "read x; [ \"$x\" != b ] || { echo no b >&2; "
	                     "exit 1; }",
	                     NULL),
	    0);
	assert_int_equal(
	    cli(s, NULL, "stats", "-t", "jobs", "--json", NULL), 0);
	assert_int_equal(json_num(out, "ready"), 0);
	/* the failed one, buried at once (max-attempts 1): it cannot come
	 * back and be taken again while work runs */
	assert_int_equal(json_num(out, "buried"), 1);
	assert_int_equal(
	    cli(s, NULL, "errors", "-t", "jobs", "--json", NULL), 0);
	assert_non_null(strstr(out, "\"error\":\"no b\""));
}

/* ---- issue: errors said once, in the words of the command typed ------- */

/* One line per error: the command as typed, the task, why. The server's
 * and the library's own words for where it happened ("peek 99",
 * "kick_id 9999" once) are not repeated after it. */
static void
test_errors_are_said_once(void **state)
{
	struct t_srv *s = up(state);

	assert_int_equal(cli(s, NULL, "ack", "99", "--force", NULL), 1);
	assert_string_equal(err, "sluice: ack 99: no such task\n");
	assert_int_equal(cli(s, NULL, "ack", "99", "--lease", "5", NULL), 1);
	assert_string_equal(err, "sluice: ack 99: no such task\n");
	assert_int_equal(cli(s, NULL, "kick", "--id", "9999", NULL), 1);
	assert_string_equal(err, "sluice: kick --id 9999: no such task\n");
	assert_int_equal(cli(s, NULL, "delete", "424242", NULL), 1);
	assert_string_equal(err, "sluice: delete 424242: no such task\n");
	assert_int_equal(cli(s, NULL, "peek", "77", NULL), 1);
	assert_string_equal(err, "sluice: peek 77: no such task\n");
	/* a tube that does not exist: kick says so, as stats -t does;
	 * a tube that exists with nothing buried kicks 0 */
	assert_int_equal(cli(s, NULL, "stats", "-t", "nosuchtube", NULL), 1);
	assert_string_equal(err,
	    "sluice: stats -t nosuchtube: no such tube (a tube exists once a "
	    "task was put in it)\n");
	assert_int_equal(cli(s, NULL, "kick", "nosuchtube", NULL), 1);
	assert_string_equal(err,
	    "sluice: kick nosuchtube: no such tube (a tube exists once a task "
	    "was put in it)\n");
	assert_string_equal(out, "");
	assert_int_equal(cli(s, NULL, "put", "-t", "real", "x", NULL), 0);
	assert_int_equal(cli(s, NULL, "kick", "real", NULL), 0);
	assert_string_equal(out, "kicked 0 tasks\n");
	/* a bad tube name is echoed, with its first bad byte */
	assert_int_equal(cli(s, NULL, "put", "-t", "bad tube!", "x", NULL), 1);
	assert_string_equal(err,
	    "sluice: put: tube 'bad tube!' has ' ' at byte 4; a tube name is "
	    "1-200 bytes of A-Z a-z 0-9 _ . : / -\n");
	assert_string_equal(out, "");
	assert_int_equal(
	    cli(s, NULL, "take", "-t", "real", "-t", "a;b", "-w", "0", NULL),
	    1);
	assert_string_equal(err,
	    "sluice: take: tube 'a;b' has ';' at byte 2; a tube name is "
	    "1-200 bytes of A-Z a-z 0-9 _ . : / -\n");
	assert_int_equal(cli(s, NULL, "stats", "-t", "\xc3\xa9", NULL), 1);
	assert_non_null(strstr(err, "tube '\xc3\xa9' has byte 0xc3 at byte 1"));
	assert_int_equal(
	    cli(s, NULL, "tube", "set", "a b", "--ttr", "5s", NULL), 1);
	assert_non_null(strstr(err, "tube 'a b' has ' ' at byte 2"));

	/* a range is said once, whole */
	assert_int_equal(
	    cli(s, NULL, "list", "-t", "x", "--limit", "5000", NULL), 2);
	assert_string_equal(err,
	    "sluice: list: --limit takes a whole number from 1 to 1000, not "
	    "\"5000\"\nTry 'sluice list --help'.\n");
	assert_int_equal(
	    cli(s, NULL, "list", "-t", "x", "--limit", "0", NULL), 2);
	assert_non_null(strstr(err, "from 1 to 1000, not \"0\""));
	assert_int_equal(cli(s, NULL, "take", "-n", "1001", NULL), 2);
	assert_string_equal(err,
	    "sluice: take: -n takes a whole number from 1 to 1000, not "
	    "\"1001\"\nTry 'sluice take --help'.\n");
	assert_int_equal(cli(s, NULL, "take", "-n", "0", NULL), 2);
	assert_non_null(strstr(err, "from 1 to 1000, not \"0\""));
}

/* --timeout bounds the connect too; a port where another protocol
 * answers is named, and so is one where nothing listens. */
static void
test_connection_trouble_is_named(void **state)
{
	struct t_srv *s = it_srv(*state, "faces");
	char http[64], bs[64], url[80];
	int64_t t0;

	snprintf(http, sizeof(http), "127.0.0.1:%d", t_free_port());
	snprintf(bs, sizeof(bs), "127.0.0.1:%d", t_free_port());
	s->args[0] = "--http";
	s->args[1] = http;
	s->args[2] = "--beanstalk";
	s->args[3] = bs;
	it_start(s);

	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", t_free_port());
	t0 = it_mono_ms();
	assert_int_equal(
	    cli_at(url, NULL, "--timeout", "300ms", "stats", NULL), 1);
	assert_true(it_mono_ms() - t0 < 1500); /* not the 2 s default */
	assert_int_equal(count_lines(err), 2); /* the error, and a hint */
	assert_non_null(strstr(err, "sluice: stats: tcp://"));
	assert_non_null(
	    strstr(err, ": connection refused: no server listens there\n"));
	assert_non_null(strstr(err, "sluice: is sluiced running at tcp://"));

	snprintf(url, sizeof(url), "tcp://%s", http);
	assert_int_equal(
	    cli_at(url, NULL, "--timeout", "500ms", "stats", NULL), 1);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "speaks HTTP"));

	snprintf(url, sizeof(url), "tcp://%s", bs);
	assert_int_equal(cli_at(url, NULL, "--timeout", "500ms", "put", "-t",
	                     "t", "x", NULL),
	    1);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "beanstalk"));
}

/* ---- issue: putting as users do -------------------------------------- */

/* `put -` reads the payload from stdin, `--file F` from a file: bytes as
 * they are, larger than an argument list may be. */
static void
test_put_reads_stdin_and_files(void **state)
{
	struct t_srv *s = up(state);
	struct t_dir *d = *state;
	enum { BIG = 140000 };
	char *big = malloc(BIG + 1), id[32], path[600];
	FILE *f;

	assert_int_equal(
	    cli(s, "hello from stdin\n", "put", "-t", "in", "-", NULL), 0);
	assert_int_equal(
	    cli(s, NULL, "peek", first_line(id, sizeof(id)), "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"payload\":\"hello from stdin\\n\""));

	memset(big, 'b', BIG);
	big[BIG] = '\0';
	assert_int_equal(cli(s, big, "put", "-t", "in", "-", NULL), 0);
	assert_int_equal(
	    cli(s, NULL, "peek", first_line(id, sizeof(id)), "--json", NULL),
	    0);
	assert_int_equal(json_num(out, "size"), BIG);
	free(big);

	snprintf(path, sizeof(path), "%s", t_path(d, "payload.bin"));
	assert_non_null(f = fopen(path, "wb"));
	fwrite("a\0b\xff", 1, 4, f);
	fclose(f);
	assert_int_equal(
	    cli(s, NULL, "put", "-t", "in", "--file", path, NULL), 0);
	assert_int_equal(
	    cli(s, NULL, "peek", first_line(id, sizeof(id)), "--json", NULL),
	    0);
	assert_non_null(strstr(out, "\"payload_base64\":\"YQBi/w==\""));

	assert_int_equal(
	    cli(s, NULL, "put", "--file", t_path(d, "no-such-file"), NULL), 1);
	assert_non_null(strstr(err, "no-such-file"));
	assert_int_equal(count_lines(err), 1);
	assert_int_equal(cli(s, "x", "put", "-", "--file", path, NULL), 2);
	assert_int_equal(cli(s, "x", "put", "-", "more", NULL), 2);
}

/* put --lines: every good line is stored; each bad line gets its own
 * error with its number; the exit status says not all were stored. */
static void
test_put_lines_refuses_bad_lines_alone(void **state)
{
	struct t_srv *s = it_srv(*state, "small");
	char in[1024], *p = in;

	s->args[0] = "--max-payload";
	s->args[1] = "100";
	it_start(s);
	p += sprintf(p, "ok1\n");
	memset(p, 'y', 200);
	p += 200;
	p += sprintf(p, "\nok2\n");
	memset(p, 'z', 150);
	p += 150;
	p += sprintf(p, "\nok3\n");
	assert_int_equal(cli(s, in, "put", "-t", "l", "--lines", NULL), 1);
	assert_int_equal(count_lines(out), 3);
	assert_int_equal(count_lines(err), 2);
	assert_non_null(
	    strstr(err, "sluice: put: line 2: payload too large (200 bytes"));
	assert_non_null(
	    strstr(err, "sluice: put: line 4: payload too large (150 bytes"));
	assert_int_equal(cli(s, NULL, "stats", "-t", "l", "--json", NULL), 0);
	assert_int_equal(json_num(out, "ready"), 3);

	/* all good: exit 0; --json is one value, an element per line */
	assert_int_equal(
	    cli(s, "a\nb\n", "put", "-t", "l", "--lines", "--json", NULL), 0);
	assert_non_null(strstr(out, "[{\"line\":1,\"id\":"));
	assert_non_null(strstr(out, "\n,{\"line\":2,\"id\":"));
	assert_string_equal(out + strlen(out) - 2, "]\n");
}

/* A put that creates nothing (its key belongs to a live task) prints
 * that task's id, and says so. */
static void
test_put_that_creates_nothing_says_so(void **state)
{
	struct t_srv *s = up(state);
	char id[32], want[128];

	assert_int_equal(cli(s, NULL, "put", "--key", "k1", "a", NULL), 0);
	first_line(id, sizeof(id));
	assert_string_equal(err, "");
	assert_int_equal(cli(s, NULL, "put", "--key", "k1", "b", NULL), 0);
	snprintf(want, sizeof(want), "%s\n", id);
	assert_string_equal(out, want);
	snprintf(want, sizeof(want),
	    "sluice: put: key k1 exists as task %s; nothing created\n", id);
	assert_string_equal(err, want);
}

/* work refuses to start when CMD cannot be run: no task is taken. */
static void
test_work_refuses_a_command_that_cannot_run(void **state)
{
	struct t_srv *s = up(state);
	struct t_dir *d = *state;
	char path[600];
	FILE *f;

	assert_int_equal(cli(s, NULL, "put", "-t", "wk", "job", NULL), 0);
	assert_int_equal(cli(s, NULL, "work", "-t", "wk", "--max-tasks", "1",
	                     "--", "/no/such/cmd", NULL),
	    1);
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "/no/such/cmd"));
	assert_int_equal(cli(s, NULL, "work", "-t", "wk", "--max-tasks", "1",
	                     "--", "no-such-command-anywhere", NULL),
	    1);
	assert_non_null(strstr(err, "not found"));
	snprintf(path, sizeof(path), "%s", t_path(d, "not-executable"));
	assert_non_null(f = fopen(path, "w"));
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	assert_int_equal(cli(s, NULL, "work", "-t", "wk", "--max-tasks", "1",
	                     "--", path, NULL),
	    1);
	assert_non_null(strstr(err, "not-executable"));
	assert_int_equal(cli(s, NULL, "stats", "-t", "wk", "--json", NULL), 0);
	assert_int_equal(json_num(out, "ready"), 1);
	assert_int_equal(json_num(out, "taken"), 0);
}

/* ---- issue: lists and output ----------------------------------------- */

/* "YYYY-MM-DDTHH:MM:SS.mmm+HH:MM" (or -HH:MM) at p. */
static bool
iso_time_at(const char *p)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddd+dd:dd";

	for (size_t i = 0; i < sizeof(shape) - 1; i++) {
		char c = p[i];

		if (shape[i] == 'd'       ? c < '0' || c > '9'
		        : shape[i] == '+' ? c != '+' && c != '-'
		                          : c != shape[i])
			return false;
	}
	return true;
}

/* True when the line at p holds such a time. */
static bool
iso_time_in_line(const char *p)
{
	assert_non_null(p);
	for (p++; *p != '\0' && *p != '\n'; p++)
		if (iso_time_at(p))
			return true;
	return false;
}

/* The text after `label` (and its spaces) in out. */
static const char *
after(const char *label)
{
	const char *p = strstr(out, label);

	if (p == NULL)
		fail_msg("no \"%s\" in:\n%s", label, out);
	p += strlen(label);
	while (*p == ' ')
		p++;
	return p;
}

/* The rule of `sluice --help`: a command that changes something prints
 * one line saying what it did (put: the id alone); --json prints exactly
 * one JSON value; times carry their zone. */
static void
test_output_rules(void **state)
{
	struct t_srv *s = up(state);
	char lease[32];

	for (int i = 0; i < 4; i++)
		assert_int_equal(
		    cli(s, NULL, "put", "-t", "o", "job", NULL), 0);
	assert_int_equal(cli(s, NULL, "take", "-t", "o", "--json", NULL), 0);
	snprintf(lease, sizeof(lease), "%llu", json_num(out, "lease"));
	assert_int_equal(cli(s, NULL, "ack", "1", "--lease", lease, NULL), 0);
	assert_string_equal(out, "acked 1\n");

	assert_int_equal(cli(s, NULL, "take", "-t", "o", "--json", NULL), 0);
	snprintf(lease, sizeof(lease), "%llu", json_num(out, "lease"));
	/* -p 0: released now, it would queue behind 3 and 4, which were
	 * due before it */
	assert_int_equal(
	    cli(s, NULL, "release", "2", "--lease", lease, "-p", "0", NULL), 0);
	assert_string_equal(out, "released 2, ready\n");
	assert_int_equal(cli(s, NULL, "take", "-t", "o", "--json", NULL), 0);
	snprintf(lease, sizeof(lease), "%llu", json_num(out, "lease"));
	assert_int_equal(cli(s, NULL, "touch", "2", "--lease", lease, NULL), 0);
	assert_memory_equal(out, "touched 2, leased until ", 24);
	assert_true(iso_time_at(out + 24));
	assert_int_equal(cli(s, NULL, "bury", "2", "--lease", lease, NULL), 0);
	assert_string_equal(out, "buried 2\n");
	assert_int_equal(cli(s, NULL, "kick", "o", "5", NULL), 0);
	assert_string_equal(out, "kicked 1 task\n");
	assert_int_equal(cli(s, NULL, "delete", "2", NULL), 0);
	assert_string_equal(out, "deleted 2\n");
	assert_int_equal(cli(s, NULL, "delete", "3", "--json", NULL), 0);
	assert_string_equal(out, "{\"id\":3}\n");
	assert_int_equal(cli(s, NULL, "delete", "3", "--json", NULL), 1);
	assert_string_equal(out, "");
	assert_int_equal(cli(s, NULL, "pause", "o", "10s", NULL), 0);
	assert_memory_equal(out, "paused o until ", 15);
	assert_true(iso_time_at(out + 15));
	assert_int_equal(cli(s, NULL, "pause", "o", "0", NULL), 0);
	assert_string_equal(out, "resumed o\n");

	/* one JSON value, whatever -n says */
	assert_int_equal(cli(s, NULL, "put", "-t", "o", "job", NULL), 0);
	assert_int_equal(
	    cli(s, NULL, "take", "-t", "o", "-n", "5", "--json", NULL), 0);
	assert_memory_equal(out, "{\"tasks\":[{\"id\":", 16);
	assert_int_equal(count_lines(out), 1);

	/* times for people carry their zone */
	assert_int_equal(cli(s, NULL, "peek", "4", NULL), 0);
	assert_true(iso_time_at(after("created_at")));
	assert_true(iso_time_at(after("run_at")));
	assert_int_equal(cli(s, NULL, "list", "-t", "o", NULL), 0);
	assert_true(iso_time_in_line(strstr(out, "\n4 ")));
}

/* True when the line at p ends with `tail`. */
static bool
ends_line(const char *p, const char *tail)
{
	size_t n = strcspn(p, "\n"), t = strlen(tail);

	return n >= t && memcmp(p + n - t, tail, t) == 0;
}

/* stats in text: durations, times and sizes for people; raw numbers in
 * --json. */
static void
test_stats_text_is_for_people(void **state)
{
	struct t_srv *s = up(state);

	assert_int_equal(cli(s, NULL, "put", "-t", "st", "x", NULL), 0);
	assert_int_equal(cli(s, NULL, "stats", NULL), 0);
	assert_null(strstr(out, "uptime_ms"));
	assert_true(strchr("0123456789", *after("uptime")) != NULL);
	assert_true(ends_line(after("log_bytes"), " B"));
	assert_true(ends_line(after("log_available"), "iB"));
	assert_int_equal(cli(s, NULL, "stats", "--json", NULL), 0);
	assert_non_null(strstr(out, "\"uptime_ms\":"));
}

/* list says how many tasks it left out, and how to see them. */
static void
test_list_says_what_it_left_out(void **state)
{
	struct t_srv *s = up(state);

	for (int i = 0; i < 5; i++)
		assert_int_equal(cli(s, NULL, "put", "-t", "l", "x", NULL), 0);
	assert_int_equal(
	    cli(s, NULL, "list", "-t", "l", "--limit", "2", NULL), 0);
	assert_int_equal(count_lines(out), 4); /* header, 2 tasks, note */
	assert_non_null(strstr(out, "3 more"));
	assert_non_null(strstr(out, "--limit"));
	assert_int_equal(
	    cli(s, NULL, "list", "-t", "l", "--limit", "2", "--json", NULL), 0);
	assert_non_null(strstr(out, "\"omitted\":3"));
	assert_int_equal(cli(s, NULL, "list", "-t", "l", NULL), 0);
	assert_int_equal(count_lines(out), 6);
	assert_null(strstr(out, "more"));
	assert_int_equal(cli(s, NULL, "list", "-t", "l", "--json", NULL), 0);
	assert_non_null(strstr(out, "\"omitted\":0"));
}

/* How many tasks out's JSON holds; their ids, in order, into ids[] (at
 * most max; NULL: only count). */
static size_t
json_ids(uint64_t *ids, size_t max)
{
	size_t n = 0;

	for (const char *p = out; (p = strstr(p, "{\"id\":")) != NULL; p++) {
		if (ids != NULL) {
			assert_true(n < max);
			ids[n] = strtoull(p + 6, NULL, 10);
		}
		n++;
	}
	return n;
}

/* --after pages in id order and says where the next page starts; --all
 * walks every page: each task once, whatever its state. */
static void
test_list_pages_through_every_task(void **state)
{
	enum { N = 2100, SMALL = 10 };
	struct t_srv *s = up(state);
	static char lines[N * 4];
	uint64_t ids[SMALL + 1], first;
	char arg[32];
	size_t len = 0;

	for (int i = 0; i < N; i++)
		len += (size_t)snprintf(
		    lines + len, sizeof(lines) - len, "%d\n", i % 100);
	assert_int_equal(cli(s, lines, "put", "-t", "big", "--lines", NULL), 0);
	assert_int_equal(count_lines(out), N);
	first = strtoull(out, NULL, 10);
	/* one taken, one deleted */
	assert_int_equal(cli(s, NULL, "take", "-t", "big", NULL), 0);
	snprintf(arg, sizeof(arg), "%" PRIu64, first + 500);
	assert_int_equal(cli(s, NULL, "delete", arg, NULL), 0);
	assert_int_equal(cli(s, NULL, "list", "-t", "big", "--all", NULL), 0);
	assert_int_equal(count_lines(out), 1 + N - 1); /* header + tasks */
	assert_null(strstr(out, "more"));
	snprintf(arg, sizeof(arg), "%" PRIu64, first + 2000);
	assert_int_equal(
	    cli(s, NULL, "list", "-t", "big", "--after", arg, "--json", NULL),
	    0);
	assert_int_equal(json_ids(NULL, 0), N - 2001);
	assert_non_null(strstr(out, "\"next\":null}"));

	for (int i = 0; i < SMALL; i++)
		assert_int_equal(cli(s, NULL, "put", "-t", "p", "x", NULL), 0);
	assert_int_equal(cli(s, NULL, "list", "-t", "p", "--all", "--limit",
	                     "3", "--json", NULL),
	    0);
	assert_int_equal(json_ids(ids, SMALL + 1), SMALL);
	for (int i = 1; i < SMALL; i++)
		assert_true(ids[i] > ids[i - 1]);
	assert_non_null(strstr(out, "\"next\":null}"));
	assert_int_equal(cli(s, NULL, "list", "-t", "p", "--after", "0",
	                     "--limit", "4", "--json", NULL),
	    0);
	assert_int_equal(json_ids(ids, SMALL + 1), 4);
	assert_true(json_num(out, "next") == ids[3]);
	assert_int_equal(cli(s, NULL, "list", "-t", "p", "--after", "1",
	                     "--order", "age", NULL),
	    2);
	assert_non_null(strstr(err, "id order"));
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_put_take_ack_with_json, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_exit_codes, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_every_other_command, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_lines_and_work, it_setup, it_teardown),
		T(test_errors_are_said_once),
		T(test_connection_trouble_is_named),
		T(test_put_reads_stdin_and_files),
		T(test_put_lines_refuses_bad_lines_alone),
		T(test_put_that_creates_nothing_says_so),
		T(test_work_refuses_a_command_that_cannot_run),
		T(test_output_rules),
		T(test_stats_text_is_for_people),
		T(test_list_says_what_it_left_out),
		T(test_list_pages_through_every_task),
	};
#undef T
	return cmocka_run_group_tests_name(
	    "cli against sluiced", tests, NULL, NULL);
}
