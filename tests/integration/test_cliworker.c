/* The shell worker patterns of README.md and docs/client.md against a
 * real sluiced: the README's `take --sh` loop, read from README.md itself,
 * handles each task once and stops on an empty tube; an `eval` of an
 * empty take leaves no previous task's variables behind; and `sluice
 * work` gives its command exactly the variables `take --sh` prints
 * (SLUICE_PAYLOAD for text up to 64 KiB, SLUICE_PAYLOAD_BASE64 for binary,
 * neither beyond, the payload always on stdin). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

enum { OUT_MAX = 256 << 10, BIG = 70000 };

static char out[OUT_MAX], err[OUT_MAX];

/* Runs the sh script `script` with $SLUICE_URL naming `s`, the build's
 * sluice first on $PATH and $DIR the test's directory; its exit code,
 * its stdout in out, its stderr in err. */
static int
sh(void **state, const struct t_srv *s, const char *script)
{
	char path[4096], bin[1024], dir[600], *slash;
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };

	snprintf(bin, sizeof(bin), "%s", t_bin("sluice"));
	if ((slash = strrchr(bin, '/')) != NULL)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s:%s", bin,
	    getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	snprintf(dir, sizeof(dir), "%s", t_path(*state, "."));
	setenv("PATH", path, 1);
	setenv("SLUICE_URL", s->url, 1);
	setenv("DIR", dir, 1);
	return t_run(argv, NULL, out, sizeof(out), err, sizeof(err));
}

static void
write_file(void **state, const char *name, const void *p, size_t n)
{
	FILE *f = fopen(t_path(*state, name), "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static char *
read_file(void **state, const char *name)
{
	static char buf[OUT_MAX];
	FILE *f = fopen(t_path(*state, name), "rb");
	size_t n;

	if (f == NULL)
		fail_msg("%s was not written", name);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The block of README.md that follows "```sh file=worker.sh". */
static void
readme_loop(char *loop, size_t cap)
{
	static char doc[256 << 10];
	FILE *f = fopen(SLUICE_SOURCE_DIR "/README.md", "rb");
	const char *mark = "```sh file=worker.sh\n", *p, *end;
	size_t n;

	assert_non_null(f);
	n = fread(doc, 1, sizeof(doc) - 1, f);
	doc[n] = '\0';
	fclose(f);
	if ((p = strstr(doc, mark)) == NULL)
		fail_msg("README.md has no ```sh file=worker.sh block");
	p += strlen(mark);
	assert_non_null(end = strstr(p, "\n```"));
	assert_true((size_t)(end - p) + 2 < cap);
	snprintf(loop, cap, "%.*s\n", (int)(end - p), p);
}

static void
stats_are(const struct t_srv *s, const char *tube, const char *want)
{
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "stats", "-t", tube, "--json", NULL),
	    0);
	if (strstr(out, want) == NULL)
		fail_msg("stats -t %s: no %s in %s", tube, want, out);
}

/* The README's loop, as written there: two tasks, each handled exactly
 * once, then the loop stops on the empty tube; run again, it does
 * nothing. */
static void
test_readme_loop_does_nothing_twice(void **state)
{
	struct t_srv *s = it_srv(*state, "data");
	char loop[4096];

	it_start(s);
	readme_loop(loop, sizeof(loop));
	write_file(state, "worker.sh", loop, strlen(loop));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "put", "-t", "emails", "first", NULL),
	    0);
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "put",
	        "-t", "emails", "second", NULL),
	    0);
	assert_int_equal(sh(state, s, "sh \"$DIR/worker.sh\""), 0);
	assert_string_equal(out, "sending: first\nsending: second\n");
	assert_string_equal(err, "");
	/* both acked: nothing ready, taken, delayed or buried */
	stats_are(s, "emails",
	    "\"ready\":0,\"delayed\":0,\"taken\":0,"
	    "\"buried\":0");
	assert_int_equal(sh(state, s, "sh \"$DIR/worker.sh\""), 0);
	assert_string_equal(out, "");
	assert_string_equal(err, "");
}

/* The README's first pattern without a loop: an eval of a take that
 * found nothing leaves nothing of the task before it set. */
static void
test_eval_of_an_empty_take_unsets_the_last_task(void **state)
{
	struct t_srv *s = it_srv(*state, "data");

	it_start(s);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "put", "-t", "emails", "once", NULL),
	    0);
	assert_int_equal(
	    sh(state, s,
	        "eval \"$(sluice take -t emails --sh)\"\n"
	        "echo \"took $SLUICE_PAYLOAD\"\n"
	        "sluice ack \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\"\n"
	        "eval \"$(sluice take -t emails --sh)\"\n"
	        "echo \"then id=${SLUICE_TASK_ID-unset}"
	        " lease=${SLUICE_LEASE-unset}"
	        " payload=${SLUICE_PAYLOAD-unset}"
	        " size=${SLUICE_PAYLOAD_SIZE-unset}\"\n"
	        "sluice take -t emails --sh; echo \"exit $?\"\n"),
	    0);
	assert_non_null(strstr(out, "took once\nacked "));
	assert_non_null(strstr(out,
	    "then id=unset lease=unset payload=unset size=unset\n"
	    "unset SLUICE_TASK_ID SLUICE_LEASE SLUICE_TUBE SLUICE_ATTEMPTS "
	    "SLUICE_PAYLOAD_SIZE SLUICE_PAYLOAD SLUICE_PAYLOAD_BASE64\n"
	    "exit 3\n"));
	/* --sh says nothing on stderr; a plain take notes it there */
	assert_string_equal(err, "");
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "take", "-t", "emails", NULL),
	    3);
	assert_string_equal(err, "sluice: take: nothing to take from emails\n");
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "take", "-t", "emails", "-q", NULL),
	    3);
	assert_string_equal(err, "");
}

/* What a task's script reports of its variables: $MODE is "work" (run by
 * sluice work, payload on stdin) or "sh" (sourced after an eval). */
static const char report[] =
    "{ printf '%s|%s|%s|%s|%s\\n' \"$SLUICE_TUBE\" \"$SLUICE_ATTEMPTS\" \\\n"
    "    \"$SLUICE_PAYLOAD_SIZE\" \"${SLUICE_PAYLOAD-unset}\" \\\n"
    "    \"${SLUICE_PAYLOAD_BASE64-unset}\"\n"
    "  case \"$SLUICE_TASK_ID:$SLUICE_LEASE\" in\n"
    "  [1-9]*:[1-9]*) ;; *) echo \"no id or lease\";; esac\n"
    "} > \"$DIR/$MODE.$SLUICE_PAYLOAD_SIZE\"\n"
    "if [ \"$MODE\" = work ]; then\n"
    "  wc -c | tr -d ' ' > \"$DIR/stdin.$SLUICE_PAYLOAD_SIZE\"\n"
    "fi\n";

static void
put_three(void **state, const struct t_srv *s, const char *text)
{
	static char big[BIG];

	memset(big, 'a', sizeof(big));
	write_file(state, "binary", "\xff\x00\x01", 3);
	write_file(state, "big", big, sizeof(big));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "put", "-t", "w", text, NULL),
	    0);
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "put",
	        "-t", "w", "--file", t_path(*state, "binary"), NULL),
	    0);
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "put",
	        "-t", "w", "--file", t_path(*state, "big"), NULL),
	    0);
}

/* sluice work sets what take --sh prints: the same report from a text
 * task, a binary one and one over 64 KiB, whichever way it was taken;
 * a stale SLUICE_PAYLOAD in work's own environment never reaches CMD. */
static void
test_work_sets_what_take_sh_prints(void **state)
{
	struct t_srv *s = it_srv(*state, "data");
	const char *text = "h\xc3\xa9llo 'it' $HOME `x`\nline two";
	char want[256], name[64];

	it_start(s);
	write_file(state, "report.sh", report, strlen(report));
	put_three(state, s, text);
	assert_int_equal(sh(state, s,
	                     "MODE=work SLUICE_PAYLOAD=stale "
	                     "SLUICE_PAYLOAD_BASE64=stale sluice work -t w "
	                     "--max-tasks 3 -- sh \"$DIR/report.sh\""),
	    0);
	put_three(state, s, text);
	assert_int_equal(sh(state, s,
	                     "MODE=sh; for i in 1 2 3; do\n"
	                     "  vars=$(sluice take -t w --sh) || exit 9\n"
	                     "  eval \"$vars\"\n"
	                     "  . \"$DIR/report.sh\"\n"
	                     "  sluice ack \"$SLUICE_TASK_ID\" --lease "
	                     "\"$SLUICE_LEASE\" > /dev/null || exit 8\n"
	                     "done\n"),
	    0);

	snprintf(want, sizeof(want), "w|1|%zu|%s|unset\n", strlen(text), text);
	snprintf(name, sizeof(name), "work.%zu", strlen(text));
	assert_string_equal(read_file(state, name), want);
	snprintf(name, sizeof(name), "sh.%zu", strlen(text));
	assert_string_equal(read_file(state, name), want);
	snprintf(name, sizeof(name), "stdin.%zu", strlen(text));
	snprintf(want, sizeof(want), "%zu\n", strlen(text));
	assert_string_equal(read_file(state, name), want);

	assert_string_equal(read_file(state, "work.3"), "w|1|3|unset|/wAB\n");
	assert_string_equal(read_file(state, "sh.3"), "w|1|3|unset|/wAB\n");
	assert_string_equal(read_file(state, "stdin.3"), "3\n");

	snprintf(want, sizeof(want), "w|1|%d|unset|unset\n", BIG);
	snprintf(name, sizeof(name), "work.%d", BIG);
	assert_string_equal(read_file(state, name), want);
	snprintf(name, sizeof(name), "sh.%d", BIG);
	assert_string_equal(read_file(state, name), want);
	snprintf(name, sizeof(name), "stdin.%d", BIG);
	snprintf(want, sizeof(want), "%d\n", BIG);
	assert_string_equal(read_file(state, name), want);
	stats_are(s, "w", "\"ready\":0,\"delayed\":0,\"taken\":0,\"buried\":0");
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_readme_loop_does_nothing_twice),
		T(test_eval_of_an_empty_take_unsets_the_last_task),
		T(test_work_sets_what_take_sh_prints),
	};
#undef T
	return cmocka_run_group_tests_name("cliworker", tests, NULL, NULL);
}
