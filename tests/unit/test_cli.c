/* Tests of the sluice command-line tool: its pure helpers
 * (numbers, UTF-8, JSON strings, base64), then the real binary run against
 * t_fake (tests/lib/t_fake.h): output shapes, exit codes, put --lines
 * batching and the work command. */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "sluice.h"
#include "t_fake.h"
#include "t_lib.h"

/* ---- helpers ------------------------------------------------------------ */

static void
test_uint_parsing(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(cli_parse_uint("0", 10, &v), 0);
	assert_true(v == 0);
	assert_int_equal(cli_parse_uint("4294967295", UINT32_MAX, &v), 0);
	assert_true(v == UINT32_MAX);
	assert_int_equal(cli_parse_uint("4294967296", UINT32_MAX, &v), -1);
	assert_int_equal(
	    cli_parse_uint("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(
	    cli_parse_uint("18446744073709551616", UINT64_MAX, &v), -1);
	assert_int_equal(cli_parse_uint("", 10, &v), -1);
	assert_int_equal(cli_parse_uint("-1", 10, &v), -1);
	assert_int_equal(cli_parse_uint("1x", 10, &v), -1);
	assert_int_equal(cli_parse_uint("11", 10, &v), -1);
}

static void
test_utf8_validation(void **state)
{
	(void)state;
	assert_true(cli_utf8_valid("", 0));
	assert_true(cli_utf8_valid("plain ascii", 11));
	assert_true(cli_utf8_valid("\xc3\xa9", 2));         /* é */
	assert_true(cli_utf8_valid("\xe2\x82\xac", 3));     /* € */
	assert_true(cli_utf8_valid("\xf0\x9f\x98\x80", 4)); /* emoji */
	assert_true(cli_utf8_valid("\xf4\x8f\xbf\xbf", 4)); /* U+10FFFF */
	assert_true(cli_utf8_valid("a\0b", 3));             /* NUL is UTF-8 */
	assert_false(cli_utf8_valid("\xff", 1));
	assert_false(cli_utf8_valid("\x80", 1));             /* lone tail */
	assert_false(cli_utf8_valid("\xc0\xaf", 2));         /* overlong */
	assert_false(cli_utf8_valid("\xe0\x80\xaf", 3));     /* overlong */
	assert_false(cli_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
	assert_false(cli_utf8_valid("\xf4\x90\x80\x80", 4)); /* > 10FFFF */
	assert_false(cli_utf8_valid("\xe2\x82", 2));         /* cut short */
	assert_false(cli_utf8_valid("\xc3\x28", 2));         /* bad tail */

	assert_int_equal(cli_utf8_cut("abc", 3, 5), 3);
	assert_int_equal(cli_utf8_cut("ab\xc3\xa9", 4, 3), 2);
	assert_int_equal(cli_utf8_cut("ab\xc3\xa9", 4, 4), 4);
}

/* What `fn` wrote into a memory stream, NUL-terminated; free it. */
static char *
capture(void (*fn)(FILE *, const void *, size_t), const void *p, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	fn(f, p, n);
	fclose(f);
	return out;
}

static void
test_json_escaping(void **state)
{
	static const char in[] =
	    "a\"b\\c/\n\r\t\b\f\x01\x1f\x7f \xc3\xa9 \xff!";
	char *s = capture(cli_json_str, in, sizeof(in) - 1);

	(void)state;
	assert_string_equal(s,
	    "\"a\\\"b\\\\c/\\n\\r\\t\\b\\f\\u0001\\u001f"
	    "\\u007f \xc3\xa9 \\ufffd!\"");
	free(s);
	s = capture(cli_json_str, "a\0b", 3);
	assert_string_equal(s, "\"a\\u0000b\"");
	free(s);
}

static void
test_base64_vectors(void **state)
{
	/* RFC 4648, section 10 */
	static const char *const v[][2] = { { "", "" }, { "f", "Zg==" },
		{ "fo", "Zm8=" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" } };

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *s = capture(cli_base64, v[i][0], strlen(v[i][0]));

		assert_string_equal(s, v[i][1]);
		free(s);
	}
	char *s = capture(cli_base64, "\xff\x00\x01", 3);
	assert_string_equal(s, "/wAB");
	free(s);
}

static void
test_edit_distance(void **state)
{
	(void)state;
	assert_int_equal(cli_edit_distance("stats", "stats"), 0);
	assert_int_equal(cli_edit_distance("statz", "stats"), 1);
	assert_int_equal(cli_edit_distance("tak", "take"), 1);
	assert_int_equal(cli_edit_distance("relase", "release"), 1);
	assert_int_equal(cli_edit_distance("kcik", "kick"), 2);
	assert_int_equal(cli_edit_distance("", "put"), 3);
	assert_int_equal(cli_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(
	    cli_edit_distance("0123456789012345678901234567890123456789"
	                      "0123456789012345678901234",
	        "put"),
	    64);
}

static void
test_human_formats(void **state)
{
	char b[64];

	(void)state;
	cli_fmt_time(b, sizeof(b), 0);
	assert_string_equal(b, "-");
	/* times carry their zone (POSIX TZ strings: no tzdata needed) */
	setenv("TZ", "XYZ-2", 1);
	tzset();
	cli_fmt_time(b, sizeof(b), 1500);
	assert_string_equal(b, "1970-01-01T02:00:01.500+02:00");
	setenv("TZ", "ABC+5:30", 1);
	tzset();
	cli_fmt_time(b, sizeof(b), 86400000);
	assert_string_equal(b, "1970-01-01T18:30:00.000-05:30");
	setenv("TZ", "UTC0", 1);
	tzset();
	cli_fmt_time(b, sizeof(b), 1700000000123ULL);
	assert_string_equal(b, "2023-11-14T22:13:20.123+00:00");
	unsetenv("TZ");
	tzset();
	/* sizes for people */
	cli_fmt_size(b, sizeof(b), 0);
	assert_string_equal(b, "0 B");
	cli_fmt_size(b, sizeof(b), 1023);
	assert_string_equal(b, "1023 B");
	cli_fmt_size(b, sizeof(b), 1536);
	assert_string_equal(b, "1.5 KiB");
	cli_fmt_size(b, sizeof(b), 64 << 20);
	assert_string_equal(b, "64.0 MiB");
	cli_fmt_size(b, sizeof(b), 3ULL << 40);
	assert_string_equal(b, "3.0 TiB");

	char *s = capture(cli_print_bytes, "ok\t\x01\xff\\\n", 7);
	assert_string_equal(s, "ok\t\\x01\\xff\\\\\n");
	free(s);
}

/* ---- the binary -------------------------------------------------------------
 */

struct run {
	int status; /* exit status, or 128 + signal */
	char out[16384];
	char err[8192];
};

/* What take --sh prints first, and alone when nothing was taken. */
#define SH_UNSET                                                               \
	"unset SLUICE_TASK_ID SLUICE_LEASE SLUICE_TUBE SLUICE_ATTEMPTS "       \
	"SLUICE_PAYLOAD_SIZE SLUICE_PAYLOAD SLUICE_PAYLOAD_BASE64\n"

static void
slurp(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0;

	if (f != NULL) {
		len = fread(buf, 1, n - 1, f);
		fclose(f);
	}
	buf[len] = '\0';
}

/* Starts `sluice -s URL ARGS...` with `in` on its stdin; wait_cli()
 * collects it. */
static pid_t
spawn_cli(void *dir, const char *url, const char *in, va_list ap)
{
	char in_path[512], out_path[512], err_path[512];
	const char *argv[40] = { SLUICE_CLI, "-s", url, "--timeout", "5s" };
	posix_spawn_file_actions_t fa;
	int argc = 5;
	FILE *f;
	pid_t pid;

	snprintf(in_path, sizeof(in_path), "%s", t_path(dir, "stdin"));
	snprintf(out_path, sizeof(out_path), "%s", t_path(dir, "stdout"));
	snprintf(err_path, sizeof(err_path), "%s", t_path(dir, "stderr"));
	assert_non_null(f = fopen(in_path, "wb"));
	fputs(in ? in : "", f);
	fclose(f);
	while ((argv[argc] = va_arg(ap, const char *)) != NULL)
		argc++;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in_path, O_RDONLY, 0);
	posix_spawn_file_actions_addopen(
	    &fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(
	    &fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(posix_spawn(&pid, SLUICE_CLI, &fa, NULL,
	                     (char *const *)argv, environ),
	    0);
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

static void
wait_cli(void *dir, pid_t pid, struct run *r)
{
	int wstatus;

	assert_int_equal(waitpid(pid, &wstatus, 0), pid);
	r->status =
	    WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	slurp(t_path(dir, "stdout"), r->out, sizeof(r->out));
	slurp(t_path(dir, "stderr"), r->err, sizeof(r->err));
}

/* Runs `sluice -s URL ARGS...` with `in` on its stdin, to its end. */
static void
run_cli(void *dir, struct run *r, const char *url, const char *in, ...)
{
	va_list ap;
	pid_t pid;

	va_start(ap, in);
	pid = spawn_cli(dir, url, in, ap);
	va_end(ap);
	wait_cli(dir, pid, r);
}

static pid_t
start_cli(void *dir, const char *url, const char *in, ...)
{
	va_list ap;
	pid_t pid;

	va_start(ap, in);
	pid = spawn_cli(dir, url, in, ap);
	va_end(ap);
	return pid;
}

static void
test_cli_put_prints_the_id(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct run r;

	run_cli(*state, &r, f->url, NULL, "put", "-t", "emails", "-p", "5",
	    "--delay", "2s", "--ttr", "1m", "--max-attempts", "3", "hello",
	    NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "42\n");
	assert_string_equal(f->last_put_tube, "emails");
	assert_string_equal(f->last_payload, "hello");
	assert_int_equal(f->last_put.priority, 5);
	assert_true(f->last_put.when == 2000 && !f->last_put.at);
	assert_true(f->last_put.ttr == 60000);
	assert_int_equal(f->last_put.max_attempts, 3);

	run_cli(*state, &r, f->url, NULL, "put", "--json", "--key", "k",
	    "--every", "1h", "x", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "{\"id\":42,\"created\":false}\n");
	assert_true(f->last_put.period == 3600000);
	t_fake_stop(f);
}

static void
test_cli_exit_codes(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct run r;

	run_cli(*state, &r, f->url, NULL, "put", "-t", "bad tube", "x", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err,
	    "sluice: put: tube 'bad tube' has ' ' at byte 4; a tube name is "
	    "1-200 bytes of A-Z a-z 0-9 _ . : / -\n");
	run_cli(*state, &r, f->url, NULL, "put", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err,
	    "sluice: put: a PAYLOAD (- for stdin, --file F, or --lines) is "
	    "needed\n"
	    "Try 'sluice put --help'.\n");
	run_cli(*state, &r, f->url, NULL, "put", "--delay", "soon", "x", NULL);
	assert_int_equal(r.status, 2);
	run_cli(*state, &r, f->url, NULL, "frobnicate", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err,
	    "sluice: unknown command \"frobnicate\"\nTry 'sluice --help'.\n");
	/* a command a typo away is named */
	run_cli(*state, &r, f->url, NULL, "statz", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err,
	    "sluice: unknown command \"statz\"; did you mean \"stats\"?\n"
	    "Try 'sluice --help'.\n");
	run_cli(*state, &r, f->url, NULL, "help", "relase", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err,
	    "sluice: help: unknown command \"relase\"; did you mean "
	    "\"release\"?\nTry 'sluice --help'.\n");
	/* nothing to take: exit 3 and a note, which -q silences; --sh
	 * prints only the unset, on stdout, and no note */
	run_cli(*state, &r, f->url, NULL, "take", "-t", "empty", NULL);
	assert_int_equal(r.status, 3);
	assert_string_equal(r.out, "");
	assert_string_equal(
	    r.err, "sluice: take: nothing to take from empty\n");
	run_cli(*state, &r, f->url, NULL, "take", "-t", "empty", "-q", NULL);
	assert_int_equal(r.status, 3);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	run_cli(*state, &r, f->url, NULL, "take", "-t", "empty", "--sh", NULL);
	assert_int_equal(r.status, 3);
	assert_string_equal(r.out, SH_UNSET);
	assert_string_equal(r.err, "");
	run_cli(*state, &r, f->url, NULL, "ack", "zero", NULL);
	assert_int_equal(r.status, 2);
	t_fake_stop(f);
}

/* The brief's example: an error names the command, the task and why. */
static void
test_cli_error_names_what_failed(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ERROR);
	struct run r;

	atomic_store(&f->status, SLUICE_ESTALE);
	atomic_store(&f->error_op, MSG_OP_ACK);
	run_cli(*state, &r, f->url, NULL, "ack", "42", "--lease", "7", NULL);
	assert_int_equal(r.status, 1);
	/* the server's why, not its where ("ack 42: ") said twice */
	assert_string_equal(
	    r.err, "sluice: ack 42: lease 7 is not the current one\n");
	t_fake_stop(f);
}

static void
test_cli_take_json_shape(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct run r;

	run_cli(*state, &r, f->url, NULL, "take", "--json", "-n", "2", "-t",
	    "a", "-t", "b", "-w", "1s", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(f->last_tubes, "a,b");
	assert_true(f->last_take_detach);  /* the CLI's default */
	assert_false(f->last_take_strict); /* priority across the tubes */
	assert_int_equal(f->last_take_max, 2);
	/* one JSON value: with -n above 1 {"tasks":[...]}, the fixed names
	 * first in each */
	assert_memory_equal(r.out,
	    "{\"tasks\":[{\"id\":1,\"lease\":1001,\"tube\":\"emails\","
	    "\"state\":\"taken\",\"payload\":\"hello\",\"attempts\":1,"
	    "\"priority\":1024,\"run_at\":1700000000000,\"last_error\":null,",
	    strlen("{\"tasks\":[{\"id\":1,\"lease\":1001,\"tube\":"
	           "\"emails\",\"state\":\"taken\",\"payload\":\"hello\","
	           "\"attempts\":1,\"priority\":1024,\"run_at\":"
	           "1700000000000,\"last_error\":null,"));
	assert_non_null(strstr(r.out, "},{\"id\":2,"));
	assert_string_equal(r.out + strlen(r.out) - 3, "]}\n");
	assert_non_null(strstr(r.out, "\"last_error\":\"boom\""));

	run_cli(*state, &r, f->url, NULL, "take", "--json", "--no-detach", "-t",
	    "binary", NULL);
	assert_false(f->last_take_detach);
	assert_non_null(strstr(r.out, "\"payload_base64\":\"/wAB\""));
	assert_null(strstr(r.out, "\"payload\":"));

	run_cli(*state, &r, f->url, NULL, "take", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "lease         1001\n"));
	run_cli(*state, &r, f->url, NULL, "take", "-t", "b", "-t", "a",
	    "--strict-order", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(f->last_tubes, "b,a");
	assert_true(f->last_take_strict);
	t_fake_stop(f);
}

/* A lease operation needs --lease or --force: the CLI never looks the
 * lease up (that would ack whatever worker holds the task). */
static void
test_cli_ack_needs_a_lease_or_force(void **state)
{
	static const char *const ops[] = { "ack", "release", "touch", "bury" };
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct run r;

	for (size_t i = 0; i < 4; i++) {
		run_cli(*state, &r, f->url, NULL, ops[i], "2", NULL);
		assert_int_equal(r.status, 2);
		assert_non_null(strstr(r.err, "--lease"));
		assert_non_null(strstr(r.err, "--force"));
		run_cli(*state, &r, f->url, NULL, ops[i], "2", "--lease", "5",
		    "--force", NULL);
		assert_int_equal(r.status, 2);
	}
	assert_int_equal(atomic_load(&f->nop[MSG_OP_PEEK]), 0);
	assert_int_equal(atomic_load(&f->nop[MSG_OP_ACK]), 0);
	run_cli(*state, &r, f->url, NULL, "ack", "2", "--force", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(atomic_load(&f->nop[MSG_OP_ACK]), 1);
	assert_true(f->last_lease == 0);
	assert_true(f->last_force);
	run_cli(*state, &r, f->url, NULL, "fail", "2", "--lease", "9", "-e",
	    "disk full", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_true(f->last_lease == 9);
	assert_false(f->last_force);
	assert_string_equal(r.out,
	    "{\"id\":2,\"state\":\"delayed\","
	    "\"run_at\":5000,\"deadline\":0}\n");
	assert_int_equal(atomic_load(&f->nop[MSG_OP_PEEK]), 0);
	t_fake_stop(f);
}

/* take --sh: assignments a shell can eval, whatever the payload holds,
 * after an unset of every variable it may set. */
static void
test_cli_take_sh_is_for_eval(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct run r;

	t_fake_add_work(f, "it's $HOME `x`");
	run_cli(*state, &r, f->url, NULL, "take", "-t", "work", "--sh", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out,
	    SH_UNSET "SLUICE_TASK_ID='101'\nSLUICE_LEASE='5000'\n"
	             "SLUICE_TUBE='work'\nSLUICE_ATTEMPTS='1'\n"
	             "SLUICE_PAYLOAD_SIZE='14'\n"
	             "SLUICE_PAYLOAD='it'\\''s $HOME `x`'\n");
	run_cli(*state, &r, f->url, NULL, "take", "-t", "binary", "--sh", NULL);
	assert_non_null(strstr(r.out, "SLUICE_PAYLOAD_BASE64='/wAB'\n"));
	assert_null(strstr(r.out, "SLUICE_PAYLOAD="));
	run_cli(*state, &r, f->url, NULL, "take", "--sh", "--json", NULL);
	assert_int_equal(r.status, 2);
	t_fake_stop(f);
}

static void
test_cli_admin_json_shapes(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct run r;

	run_cli(*state, &r, f->url, NULL, "stats", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out,
	    "{\"role\":\"leader\",\"epoch\":1,"
	    "\"lsn\":10,"));
	assert_non_null(strstr(r.out,
	    "\"tubes\":{\"emails\":{\"ready\":5,\"delayed\":0,\"taken\":0,"
	    "\"buried\":1,"));
	assert_non_null(strstr(r.out,
	    "\"totals\":{\"ready\":5,\"delayed\":0,"
	    "\"taken\":0,\"buried\":1,"));
	run_cli(
	    *state, &r, f->url, NULL, "list", "-t", "emails", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_memory_equal(r.out, "{\"tasks\":[{\"id\":1,", 17);
	assert_non_null(strstr(r.out, "\"payload\":null"));
	run_cli(
	    *state, &r, f->url, NULL, "errors", "-t", "emails", "--json", NULL);
	assert_string_equal(r.out,
	    "{\"errors\":[{\"error\":\"timeout\","
	    "\"count\":4,\"ids\":[]},{\"error\":\"\",\"count\":1,"
	    "\"ids\":[]}]}"
	    "\n");
	run_cli(
	    *state, &r, f->url, NULL, "kick", "emails", "4", "--json", NULL);
	assert_string_equal(r.out, "{\"kicked\":4}\n");
	run_cli(
	    *state, &r, f->url, NULL, "delete", "-t", "emails", "--all", NULL);
	assert_string_equal(r.out, "deleted 7 tasks\n");
	run_cli(*state, &r, f->url, NULL, "stats", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "role        leader\n"));
	t_fake_stop(f);
}

/* cluster: a row per member in the text table, the leader marked, its
 * lease as a time with its zone, a member without a URL down (seen
 * never), etcd's error below; every field in the JSON object. */
static void
test_cli_cluster_table_and_json(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct run r;

	setenv("TZ", "UTC0", 1);
	run_cli(*state, &r, f->url, NULL, "cluster", NULL);
	unsetenv("TZ");
	assert_int_equal(r.status, 0);
	assert_memory_equal(r.out,
	    "cluster prod, as node b sees it: leader a, lease ttl 10s\n"
	    "  NAME  ROLE       EPOCH        LSN      LAG  SYNC  LEASE",
	    strlen("cluster prod, as node b sees it: leader a, lease ttl "
	           "10s\n  NAME  ROLE       EPOCH        LSN      LAG  SYNC  "
	           "LEASE"));
	/* the lease ended long ago: "(... ago)" after its time */
	assert_non_null(strstr(r.out,
	    "\n* a     leader         3       1234        -  -     "
	    "until 2023-11-14T22:13:30.000+00:00 ("));
	assert_non_null(strstr(r.out, "ago)  300ms ago\n"));
	assert_non_null(strstr(
	    r.out, "\n  b     follower       3       1230        4  yes   -"));
	assert_non_null(strstr(r.out, "  1.100s ago\n"));
	/* no URL: a member of the sync set whose key is gone, never seen */
	assert_non_null(strstr(r.out,
	    "\n  c     down           2          0        -  -     -  "));
	assert_non_null(strstr(r.out, "  never\n"));
	assert_non_null(strstr(r.out,
	    "\netcd's last error: etcd 127.0.0.1:2379: connection refused\n"));

	run_cli(*state, &r, f->url, NULL, "cluster", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out,
	    "{\"cluster\":\"prod\",\"node\":\"b\",\"leader\":\"a\","
	    "\"ttl_ms\":10000,\"etcd_error\":\"etcd 127.0.0.1:2379: "
	    "connection refused\",\"members\":["
	    "{\"name\":\"a\",\"role\":\"leader\","
	    "\"client_url\":\"tcp://10.0.0.1:7711\","
	    "\"repl_url\":\"tcp://10.0.0.1:7712\",\"sync\":false,"
	    "\"lease\":true,\"epoch\":3,\"durable_lsn\":1234,"
	    "\"lag_records\":0,\"lease_until\":1700000010000,"
	    "\"age_ms\":300,\"down\":false},"
	    "{\"name\":\"b\",\"role\":\"follower\","
	    "\"client_url\":\"tcp://10.0.0.2:7711\","
	    "\"repl_url\":\"tcp://10.0.0.2:7712\",\"sync\":true,"
	    "\"lease\":false,\"epoch\":3,\"durable_lsn\":1230,"
	    "\"lag_records\":4,\"lease_until\":0,\"age_ms\":1100,"
	    "\"down\":false},"
	    "{\"name\":\"c\",\"role\":\"candidate\",\"client_url\":null,"
	    "\"repl_url\":null,\"sync\":false,\"lease\":false,"
	    "\"epoch\":2,\"durable_lsn\":0,\"lag_records\":0,"
	    "\"lease_until\":0,\"age_ms\":0,\"down\":true}]}\n");

	run_cli(*state, &r, f->url, NULL, "cluster", "extra", NULL);
	assert_int_equal(r.status, 2);
	assert_int_equal(atomic_load(&f->nop[MSG_OP_CLUSTER]), 2);
	t_fake_stop(f);
}

/* cluster from a node without --etcd: the server's why, exit 1. */
static void
test_cli_cluster_without_etcd_says_so(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ERROR);
	struct run r;

	atomic_store(&f->status, SLUICE_ESTATE);
	run_cli(*state, &r, f->url, NULL, "cluster", NULL);
	assert_int_equal(r.status, 1);
	assert_memory_equal(r.err, "sluice: cluster: ", 17);
	assert_string_equal(r.out, "");
	t_fake_stop(f);
}

/* switchover NODE [--timeout DUR]: the new leader, or a usage error. */
static void
test_cli_switchover(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct run r;

	run_cli(*state, &r, f->url, NULL, "switchover", "b", "--timeout", "20s",
	    NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(
	    r.out, "b leads now (epoch 4, tcp://10.0.0.2:7711)\n");
	assert_string_equal(f->last_node, "b");
	assert_int_equal(f->last_switchover_timeout, 20000);
	run_cli(*state, &r, f->url, NULL, "switchover", "--json", "b", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out,
	    "{\"node\":\"b\",\"leader\":\"tcp://10.0.0.2:7711\","
	    "\"epoch\":4}\n");
	assert_int_equal(f->last_switchover_timeout, 0);

	run_cli(*state, &r, f->url, NULL, "switchover", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err,
	    "sluice: switchover: one NODE is needed\n"
	    "Try 'sluice switchover --help'.\n");
	run_cli(*state, &r, f->url, NULL, "switchover", "", NULL);
	assert_int_equal(r.status, 2);
	assert_memory_equal(
	    r.err, "sluice: switchover: NODE is a member's", 38);
	run_cli(*state, &r, f->url, NULL, "switchover", "b", "--timeout",
	    "soon", NULL);
	assert_int_equal(r.status, 2);
	run_cli(*state, &r, f->url, NULL, "switchover", "b", "--timeout", "60d",
	    NULL);
	assert_int_equal(r.status, 2);
	assert_int_equal(atomic_load(&f->nop[MSG_OP_SWITCHOVER]), 2);
	t_fake_stop(f);
}

/* 250 lines: 250 ids in order, in batches of 100; an empty line skipped,
 * a refused line reported by number, in the JSON array too. */
static void
test_cli_put_lines_batches(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	char *in = malloc(250 * 8 + 16);
	struct run r;
	size_t len = 0;
	int lines = 0;

	for (int i = 0; i < 250; i++)
		len += (size_t)sprintf(in + len, "line%d\n", i);
	run_cli(*state, &r, f->url, in, "put", "--lines", NULL);
	assert_int_equal(r.status, 0);
	for (char *p = r.out; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	assert_int_equal(lines, 250);
	assert_int_equal(atomic_load(&f->nop[MSG_OP_PUT_BATCH]), 3);
	assert_int_equal(f->last_batch_n, 50);

	run_cli(*state, &r, f->url, "a\r\n\nxbad\nc", "put", "--lines",
	    "--json", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out,
	    "[{\"line\":1,\"id\":100,\"created\":true}\n"
	    ",{\"line\":3,\"error\":\"key belongs to a live task\","
	    "\"code\":23}\n"
	    ",{\"line\":4,\"id\":102,\"created\":true}\n"
	    "]\n");
	assert_string_equal(
	    r.err, "sluice: put: line 3: key belongs to a live task\n");
	free(in);
	t_fake_stop(f);
}

/* Long lines: the reader's buffer grows while a batch is being gathered;
 * every payload still arrives intact and in order. */
static void
test_cli_put_lines_long_lines(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	enum { LINES = 300, WIDTH = 3000 };
	char *in = malloc(LINES * (WIDTH + 1) + 1), *p = in;
	uint64_t h = 0;
	struct run r;

	for (int i = 0; i < LINES; i++) {
		memset(p, 'a' + i % 26, WIDTH);
		snprintf(p, WIDTH, "%d:", i); /* different lengths too */
		p[strlen(p)] = 'y';
		h = t_fake_hash(h, p, WIDTH);
		p[WIDTH] = '\n';
		p += WIDTH + 1;
	}
	*p = '\0';
	run_cli(*state, &r, f->url, in, "put", "--lines", NULL);
	assert_int_equal(r.status, 0);
	pthread_mutex_lock(&f->mtx);
	assert_true(f->batch_items == LINES);
	assert_true(f->batch_hash == h);
	pthread_mutex_unlock(&f->mtx);
	free(in);
	t_fake_stop(f);
}

/* work: exit 0 acks, failure fails with the last stderr line, a slow
 * command gets its lease touched, and --max-tasks stops it. */
static void
test_cli_work_runs_each_task(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	static const char script[] =
	    "read x; case \"$x\" in "
	    "ok) exit 0;; "
	    "slow) sleep 0.7; exit 0;; "
	    "*) echo first >&2; echo \"bad payload $x\" >&2; exit 3;; esac";
	struct run r;

	t_fake_add_work(f, "ok");
	t_fake_add_work(f, "bad");
	t_fake_add_work(f, "slow");
	t_fake_add_work(f, "ok");
	f->work_ttr = 400;
	run_cli(*state, &r, f->url, NULL, "work", "-t", "work", "-c", "2",
	    "--max-tasks", "4", "--", "sh", "-c", script, NULL);
	assert_int_equal(r.status, 0);
	pthread_mutex_lock(&f->mtx);
	assert_true(f->acked[0] && f->acked[2] && f->acked[3]);
	assert_false(f->acked[1]);
	assert_string_equal(f->failed[1], "bad payload bad");
	assert_true(f->touches[2] >= 1);
	assert_int_equal(f->touches[0], 0);
	pthread_mutex_unlock(&f->mtx);
	assert_non_null(strstr(r.err, "first\nbad payload bad\n"));

	/* a command that cannot be run is refused before any take */
	t_fake_add_work(f, "ok");
	run_cli(*state, &r, f->url, NULL, "work", "-t", "work", "--wait",
	    "300ms", "--", "/nonexistent/cmd", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err,
	    "sluice: work: cannot run /nonexistent/cmd: No such file or "
	    "directory\n");
	pthread_mutex_lock(&f->mtx);
	assert_int_equal(f->work_next, 4);
	pthread_mutex_unlock(&f->mtx);
	t_fake_stop(f);
}

/* SIGTERM: no more takes; the running command finishes and is acked. */
static void
test_cli_work_stops_on_sigterm(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct run r;
	pid_t pid;

	t_fake_add_work(f, "slow");
	t_fake_add_work(f, "ok");
	t_fake_add_work(f, "ok");
	pid = start_cli(*state, f->url, NULL, "work", "-t", "work", "--", "sh",
	    "-c", "read x; [ \"$x\" = ok ] || sleep 0.6", NULL);
	/* once the first task is handed out, work has its handlers */
	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&f->mtx);
		bool taken = f->work_next > 0;
		pthread_mutex_unlock(&f->mtx);
		if (taken)
			break;
		usleep(10 * 1000);
	}
	kill(pid, SIGTERM);
	wait_cli(*state, pid, &r);
	assert_int_equal(r.status, 0);
	pthread_mutex_lock(&f->mtx);
	assert_true(f->acked[0]);
	assert_int_equal(f->work_next, 1); /* nothing taken after the signal */
	pthread_mutex_unlock(&f->mtx);
	t_fake_stop(f);
}

static void
test_cli_every_command_has_help(void **state)
{
	/* every command of main.c's table */
	static const char *const cmds[] = { "put", "take", "ack", "release",
		"fail", "touch", "bury", "update", "kick", "delete", "peek",
		"stats", "list", "groups", "errors", "rates", "pause", "tube",
		"snapshot", "promote", "follow", "cluster", "switchover",
		"work", "token", "schedule" };
	struct run r;
	char main_help[sizeof(r.out)];

	run_cli(*state, &r, "tcp://127.0.0.1:1", NULL, "--help", NULL);
	assert_int_equal(r.status, 0);
	memcpy(main_help, r.out, sizeof(main_help));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char help[sizeof(r.out)], line[64];

		/* listed on a line of its own in --help */
		snprintf(line, sizeof(line), "\n  %s ", cmds[i]);
		if (strstr(main_help, line) == NULL)
			fail_msg("sluice --help does not list %s", cmds[i]);
		run_cli(*state, &r, "tcp://127.0.0.1:1", NULL, cmds[i],
		    "--help", NULL);
		assert_int_equal(r.status, 0);
		assert_memory_equal(r.out, "usage: sluice ", 14);
		memcpy(help, r.out, sizeof(help));
		/* `sluice help CMD` is `sluice CMD --help` */
		run_cli(*state, &r, "tcp://127.0.0.1:1", NULL, "help", cmds[i],
		    NULL);
		assert_int_equal(r.status, 0);
		assert_string_equal(r.out, help);
		/* where a payload is shown, how a binary one is */
		if (strcmp(cmds[i], "take") == 0 ||
		    strcmp(cmds[i], "peek") == 0)
			assert_non_null(strstr(help, "payload_base64"));
		/* work and take --sh name the same variables, the payload's
		 * bound included */
		if (strcmp(cmds[i], "take") == 0 ||
		    strcmp(cmds[i], "work") == 0) {
			assert_non_null(strstr(help, "SLUICE_PAYLOAD_SIZE"));
			assert_non_null(strstr(help, "SLUICE_PAYLOAD_BASE64"));
			assert_non_null(strstr(help, "64 KiB"));
		}
	}
	run_cli(*state, &r, "tcp://127.0.0.1:1", NULL, "help", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, main_help);
	run_cli(
	    *state, &r, "tcp://127.0.0.1:1", NULL, "help", "frobnicate", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err,
	    "sluice: help: unknown command \"frobnicate\"\n"
	    "Try 'sluice --help'.\n");
	/* the output rules, one for all, are written down */
	assert_non_null(strstr(main_help, "Output, the same for every"));
	assert_non_null(strstr(main_help, "exactly one JSON value"));
	/* and it names the language clients */
	assert_non_null(strstr(main_help,
	    "Python and Node.js clients: clients/ (docs/clients.md)"));
}

/* An option a command does not have: getopt's line and a hint, not the
 * usage. */
static void
test_cli_unknown_option_is_a_line_and_a_hint(void **state)
{
	struct run r;

	run_cli(
	    *state, &r, "tcp://127.0.0.1:1", NULL, "put", "--bogus", "x", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err,
	    "sluice put: unrecognized option '--bogus'\n"
	    "Try 'sluice put --help'.\n");
	run_cli(*state, &r, "tcp://127.0.0.1:1", NULL, "--bogus", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err,
	    "sluice: unrecognized option '--bogus'\n"
	    "Try 'sluice --help'.\n");
}

int
main(void)
{
#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, t_tmpdir_setup, t_tmpdir_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uint_parsing),
		cmocka_unit_test(test_utf8_validation),
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test(test_base64_vectors),
		cmocka_unit_test(test_human_formats),
		cmocka_unit_test(test_edit_distance),
		T(test_cli_put_prints_the_id),
		T(test_cli_exit_codes),
		T(test_cli_error_names_what_failed),
		T(test_cli_take_json_shape),
		T(test_cli_take_sh_is_for_eval),
		T(test_cli_ack_needs_a_lease_or_force),
		T(test_cli_admin_json_shapes),
		T(test_cli_cluster_table_and_json),
		T(test_cli_cluster_without_etcd_says_so),
		T(test_cli_switchover),
		T(test_cli_put_lines_batches),
		T(test_cli_put_lines_long_lines),
		T(test_cli_work_runs_each_task),
		T(test_cli_work_stops_on_sigterm),
		T(test_cli_every_command_has_help),
		T(test_cli_unknown_option_is_a_line_and_a_hint),
	};
#undef T
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
