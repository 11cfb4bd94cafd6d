/* The examples of README.md, docs/client.md and docs/http-api.md, and
 * those of `sluice help COMMAND`, run against a real sluiced, so that the
 * documents cannot drift from what the programs do. The examples are read
 * from the markdown itself, or from the help the tool prints, never
 * copied here.
 *
 * What is run, and what is expected:
 *  - A ```sh block whose lines start with "$ " is a transcript. Each "$ "
 *    line is a command (a line ending in "\" goes on with the next); the
 *    lines after it, up to the next command, are what it prints (standard
 *    output and error together). Any other block is only shown, and so is
 *    a transcript right after a line "<!-- not run -->".
 *  - A block whose info string names a file (```c file=app.c) is written
 *    to that file before the document's transcripts run.
 *  - Where a value changes from one run to the next, matching is loose:
 *    a run of digits matches any run of digits on the same side of 2^32
 *    (ids and counts below, leases and unix times in ms above), "..."
 *    matches any text within a line, and a line that is only "..." any
 *    number of lines. Trailing blanks do not count.
 *  - A command must exit 0, unless its line ends with "# exit N": then it
 *    must exit N.
 *
 * A document's transcripts run in order in one bash (so a variable set in
 * one is seen by the next), in a directory of their own that holds
 * `build`, a link to this build, and is $HOME; $SLUICE_URL names a fresh
 * sluiced and the build's bin/ leads $PATH; for docs/http-api.md that
 * sluiced also serves HTTP (--http-admin) at $SLUICE_HTTP. libsluice is
 * installed under $HOME/.local first, as `make install PREFIX=$HOME/.local`
 * would. */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "it.h"
#include "it_http.h"

enum {
	DOC_MAX = 256 << 10,
	OUT_MAX = 1 << 20,
	CMDS_MAX = 128,
	LINES_MAX = 256,
};

struct cmd {
	char text[2048];   /* the command, lines joined with "\n" */
	char expect[8192]; /* what it prints, lines ended by "\n" */
	int exit_code;     /* what it must exit with */
	int line;          /* of its "$ " in the document */
};

struct doc {
	const char *name; /* relative to the source directory */
	struct cmd cmds[CMDS_MAX];
	int ncmds;
	int nfiles;
};

static char out[OUT_MAX], err[OUT_MAX];

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b = malloc(DOC_MAX);
	size_t n;

	if (f == NULL)
		fail_msg("cannot read %s", path);
	assert_non_null(b);
	n = fread(b, 1, DOC_MAX - 1, f);
	assert_true(n < DOC_MAX - 1);
	b[n] = '\0';
	fclose(f);
	return b;
}

static void
append(char *dst, size_t cap, const char *p, size_t n)
{
	size_t len = strlen(dst);

	if (len + n + 1 >= cap)
		fail_msg("an example is longer than %zu bytes", cap);
	memcpy(dst + len, p, n);
	dst[len + n] = '\0';
}

/* "# exit N" at the end of a command: N, else 0. */
static int
wanted_exit(const char *cmd)
{
	const char *p = strstr(cmd, "# exit ");

	return p != NULL ? atoi(p + 7) : 0;
}

/* Reads the transcripts and files of `text` (the document, changed in
 * place) into `d`, writing the files into `dir`. */
static void
parse(struct doc *d, char *text, const char *dir)
{
	char *line = text, *next, *fence_file = NULL;
	bool in_block = false, transcript = false, skip_next = false;
	bool skip = false, cont = false;
	FILE *file = NULL;
	struct cmd *c = NULL;
	int lineno = 0;

	for (; line != NULL && *line != '\0'; line = next) {
		size_t len;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		lineno++;
		len = strlen(line);
		if (!in_block && strncmp(line, "```", 3) == 0) {
			const char *info = line + 3;

			in_block = true;
			transcript = strncmp(info, "sh", 2) == 0 &&
			    (info[2] == '\0' || info[2] == ' ');
			skip = skip_next;
			skip_next = false;
			fence_file = strstr(info, "file=");
			if (fence_file != NULL) {
				char path[1024];

				snprintf(path, sizeof(path), "%s/%s", dir,
				    fence_file + 5);
				assert_non_null(file = fopen(path, "w"));
				d->nfiles++;
			}
			c = NULL;
			continue;
		}
		if (in_block && strcmp(line, "```") == 0) {
			in_block = false;
			if (file != NULL)
				fclose(file);
			file = NULL;
			continue;
		}
		if (!in_block) {
			if (len > 0)
				skip_next =
				    strcmp(line, "<!-- not run -->") == 0;
			continue;
		}
		if (file != NULL) {
			fprintf(file, "%s\n", line);
			continue;
		}
		if (!transcript || skip)
			continue;
		if (cont) {
			append(c->text, sizeof(c->text), "\n", 1);
			append(c->text, sizeof(c->text), line, len);
			cont = len > 0 && line[len - 1] == '\\';
			if (!cont)
				c->exit_code = wanted_exit(c->text);
			continue;
		}
		if (strncmp(line, "$ ", 2) == 0) {
			assert_true(d->ncmds < CMDS_MAX);
			c = &d->cmds[d->ncmds++];
			memset(c, 0, sizeof(*c));
			c->line = lineno;
			append(c->text, sizeof(c->text), line + 2, len - 2);
			cont = line[len - 1] == '\\';
			c->exit_code = wanted_exit(c->text);
			continue;
		}
		if (c == NULL)
			continue; /* a block of commands without prompts */
		append(c->expect, sizeof(c->expect), line, len);
		append(c->expect, sizeof(c->expect), "\n", 1);
	}
	if (in_block)
		fail_msg("%s: a block is not closed", d->name);
}

/* ---- loose matching ---------------------------------------------------- */

/* Steps over the run of digits at `*p`; whether its number is 2^32 or
 * more. A run of digits matches any other of the same side of 2^32, so
 * that ids, times and counts may change from run to run while a lease
 * (epoch x 2^32 + LSN) or a unix time in ms cannot be shown as a small
 * number, nor a count as a large one. */
static bool
digits_wide(const char **p)
{
	uint64_t v = 0;
	bool wide = false;

	for (; isdigit((unsigned char)**p); (*p)++) {
		if (v > (UINT64_C(1) << 32))
			wide = true;
		else
			v = v * 10 + (uint64_t)(**p - '0');
	}
	return wide || v >= UINT64_C(1) << 32;
}

static bool
match_line(const char *e, const char *a)
{
	if (strncmp(e, "...", 3) == 0) {
		for (const char *p = a;; p++) {
			if (match_line(e + 3, p))
				return true;
			if (*p == '\0')
				return false;
		}
	}
	if (isdigit((unsigned char)*e)) {
		if (!isdigit((unsigned char)*a))
			return false;
		if (digits_wide(&e) != digits_wide(&a))
			return false; /* a lease shown as 3 where 8589934595 is
			               */
		return match_line(e, a);
	}
	if (*e == '\0')
		return *a == '\0';
	return *e == *a && match_line(e + 1, a + 1);
}

/* Splits `s` into lines (changed in place), trailing blanks dropped. */
static int
split_lines(char *s, char **v)
{
	int n = 0;

	while (*s != '\0') {
		char *nl = strchr(s, '\n'), *end;

		assert_true(n < LINES_MAX);
		if (nl != NULL)
			*nl = '\0';
		end = s + strlen(s);
		while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		v[n++] = s;
		if (nl == NULL)
			break;
		s = nl + 1;
	}
	return n;
}

static bool
match_lines(char **e, int ne, char **a, int na)
{
	if (ne == 0)
		return na == 0;
	if (strcmp(e[0], "...") == 0) {
		for (int k = 0; k <= na; k++)
			if (match_lines(e + 1, ne - 1, a + k, na - k))
				return true;
		return false;
	}
	return na > 0 && match_line(e[0], a[0]) &&
	    match_lines(e + 1, ne - 1, a + 1, na - 1);
}

/* ---- running ------------------------------------------------------------ */

/* After each command: a line no example prints, with its exit code. */
#define MARK "@@sluice-docs "

static void
write_script(const struct doc *d, const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "exec 2>&1\ncd \"$HOME\"\n");
#ifdef SLUICE_DOCS_SANITIZED
	/* libsluice was built with the sanitizers: so must its users be */
	fprintf(f,
	    "cc() { command cc -fsanitize=address,undefined \"$@\"; "
	    "}\n");
#endif
	for (int i = 0; i < d->ncmds; i++)
		fprintf(f, "%s\nprintf '\\n" MARK "%d %%d\\n' $?\n",
		    d->cmds[i].text, i);
	fclose(f);
}

/* Checks what the commands printed against what the document says. */
static void
check_output(const struct doc *d, char *o)
{
	char *p = o;

	for (int i = 0; i < d->ncmds; i++) {
		const struct cmd *c = &d->cmds[i];
		char mark[64], expect[sizeof(c->expect)];
		char *ev[LINES_MAX], *av[LINES_MAX], *m, *got;
		int ne, na, code;

		snprintf(mark, sizeof(mark), "\n" MARK "%d ", i);
		m = strstr(p, mark);
		if (m == NULL)
			fail_msg("%s:%d: `%s` did not finish; the output:\n%s",
			    d->name, c->line, c->text, p);
		*m = '\0';
		got = p;
		code = atoi(m + strlen(mark));
		p = strchr(m + 1, '\n');
		p = p != NULL ? p + 1 : m + strlen(mark);
		if (code != c->exit_code)
			fail_msg(
			    "%s:%d: `%s` exited %d, not %d; it printed:\n%s",
			    d->name, c->line, c->text, code, c->exit_code, got);
		snprintf(expect, sizeof(expect), "%s", c->expect);
		{
			static char copy[OUT_MAX];
			size_t n = strlen(got);

			memcpy(copy, got, n + 1);
			ne = split_lines(expect, ev);
			na = split_lines(copy, av);
			if (!match_lines(ev, ne, av, na))
				fail_msg("%s:%d: `%s` printed\n%s\n--- where "
				         "the document says\n%s",
				    d->name, c->line, c->text, got, c->expect);
		}
	}
}

/* Runs the transcripts of `d` in one bash, in $HOME, with $SLUICE_URL
 * naming `s` and this build's bin/ leading $PATH, and checks what they
 * print. */
static void
run_transcripts(
    void **state, const struct doc *d, const struct t_srv *s, const char *home)
{
	static char path0[2048]; /* $PATH as the test found it */
	char script[700], env[2200];
	char *argv[] = { "/bin/bash", script, NULL };
	int rc;

	if (path0[0] == '\0')
		snprintf(path0, sizeof(path0), "%s",
		    getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("SLUICE_URL", s->url, 1);
	setenv("HOME", home, 1);
	snprintf(env, sizeof(env), "%s/bin:%s", SLUICE_BUILD_DIR, path0);
	setenv("PATH", env, 1);
	snprintf(script, sizeof(script), "%s", t_path(*state, "examples.sh"));
	write_script(d, script);
	rc = t_run(argv, NULL, out, sizeof(out), NULL, 0);
	if (rc < 0)
		fail_msg(
		    "%s: the examples did not end in time:\n%s", d->name, out);
	check_output(d, out);
}

/* Runs the examples of the document `name` against a fresh server (with
 * `http`, one that serves HTTP at $SLUICE_HTTP). */
static void
run_doc(void **state, const char *name, int min_cmds, bool http)
{
	struct t_dir *td = *state;
	struct t_srv *s = it_srv(*state, "data");
	struct doc *d = calloc(1, sizeof(*d));
	char path[1024], home[600], *text;
	char *const install[] = { SLUICE_CMAKE, "--install", SLUICE_BUILD_DIR,
		"--prefix", path, NULL };
	int rc;

	assert_non_null(d);
	d->name = name;
	snprintf(home, sizeof(home), "%s", t_path(td, "home"));
	assert_int_equal(mkdir(home, 0755), 0);
	snprintf(path, sizeof(path), "%s/build", home);
	assert_int_equal(symlink(SLUICE_BUILD_DIR, path), 0);

	snprintf(path, sizeof(path), "%s/%s", SLUICE_SOURCE_DIR, name);
	text = slurp(path);
	parse(d, text, home);
	free(text);
	if (d->ncmds < min_cmds)
		fail_msg("%s: %d commands found, at least %d expected", name,
		    d->ncmds, min_cmds);

	/* libsluice where `make install PREFIX=$HOME/.local` puts it */
	snprintf(path, sizeof(path), "%s/.local", home);
	if ((rc = t_run(install, NULL, out, sizeof(out), err, sizeof(err))) !=
	    0)
		fail_msg("cmake --install exited %d:\n%s%s", rc, out, err);

	if (http) {
		static char addr[64], url[80];

		snprintf(addr, sizeof(addr), "127.0.0.1:%d", it_free_port());
		snprintf(url, sizeof(url), "http://%s", addr);
		s->args[0] = "--http";
		s->args[1] = addr;
		s->args[2] = "--http-admin";
		s->args[3] = NULL;
		setenv("SLUICE_HTTP", url, 1);
	}
	it_start(s);
	run_transcripts(state, d, s, home);
	free(d);
}

/* README.md: the first task, as a new user types it. */
static void
test_readme_examples_run_as_written(void **state)
{
	run_doc(state, "README.md", 4, false);
}

/* docs/client.md: a program built against the installed libsluice (its
 * shared and its static library) and the sluice tool's exit codes. */
static void
test_client_doc_examples_run_as_written(void **state)
{
	run_doc(state, "docs/client.md", 6, false);
}

/* docs/http-api.md: a curl example of every route, and the Python worker
 * written with the standard library. */
static void
test_http_api_doc_examples_run_as_written(void **state)
{
	run_doc(state, "docs/http-api.md", 40, true);
}

/* The examples of `sluice help COMMAND` (tools/sluice/cli_examples.c),
 * each command's against a fresh, empty server: the text after the help's
 * "Examples" line is a transcript, each line indented two blanks. The
 * commands are those `sluice --help` lists; the ones a newcomer uses first
 * must have examples. */
static void
test_help_examples_run_as_written(void **state)
{
	static const char *const needed[] = { "put", "take", "ack", "work",
		"stats" };
	static char list[OUT_MAX], md[64 << 10];
	static char names[64][32];
	char prog[1024], home[600], *line, *next;
	char *argv[] = { prog, "--help", NULL, NULL };
	bool seen[sizeof(needed) / sizeof(needed[0])] = { false };
	struct t_srv *s = NULL;
	int nnames = 0, run = 0;

	snprintf(prog, sizeof(prog), "%s", t_bin("sluice"));
	snprintf(home, sizeof(home), "%s", t_path(*state, "home"));
	assert_int_equal(mkdir(home, 0755), 0);
	assert_int_equal(
	    t_run(argv, NULL, list, sizeof(list), err, sizeof(err)), 0);
	/* "  NAME      what it does": the commands' lines */
	for (line = list; line != NULL && *line != '\0'; line = next) {
		size_t n = strspn(line + 2, "abcdefghijklmnopqrstuvwxyz");

		next = strchr(line, '\n');
		next = next != NULL ? next + 1 : NULL;
		if (strncmp(line, "  ", 2) == 0 && n > 0 && n < 32 &&
		    strncmp(line + 2 + n, "  ", 2) == 0 && nnames < 64)
			snprintf(names[nnames++], 32, "%.*s", (int)n, line + 2);
	}
	assert_true(nnames >= 20);
	for (int i = 0; i < nnames; i++) {
		struct doc *d;
		char *ex, dname[64], sname[64];

		argv[1] = "help";
		argv[2] = names[i];
		if (t_run(argv, NULL, out, sizeof(out), err, sizeof(err)) != 0)
			fail_msg("sluice help %s failed: %s", names[i], err);
		if ((ex = strstr(out, "\nExamples")) == NULL)
			continue;
		ex = strchr(ex + 1, '\n') + 1;
		/* the transcript as README.md would hold it */
		snprintf(md, sizeof(md), "```sh\n");
		for (line = ex; *line != '\0'; line = next) {
			next = strchr(line, '\n');
			next = next != NULL ? next + 1 : line + strlen(line);
			if (strncmp(line, "  ", 2) != 0)
				fail_msg("sluice help %s: an example's line "
				         "is not indented: %.*s",
				    names[i], (int)(next - line), line);
			append(md, sizeof(md), line + 2,
			    (size_t)(next - line - 2));
		}
		append(md, sizeof(md), "```\n", 4);
		assert_non_null(d = calloc(1, sizeof(*d)));
		snprintf(dname, sizeof(dname), "sluice help %.31s", names[i]);
		d->name = dname;
		parse(d, md, home);
		if (d->ncmds < 2)
			fail_msg(
			    "%s: %d commands in its examples", dname, d->ncmds);
		/* a fresh server each: the examples start from an empty one */
		snprintf(sname, sizeof(sname), "data-%.31s", names[i]);
		if (s == NULL) {
			s = it_srv(*state, sname);
		} else {
			t_srv_stop(s, SIGKILL);
			t_srv_init(s, ((struct t_dir *)*state)->path, sname);
		}
		it_start(s);
		run_transcripts(state, d, s, home);
		free(d);
		run++;
		for (size_t k = 0; k < sizeof(needed) / sizeof(needed[0]); k++)
			if (strcmp(names[i], needed[k]) == 0)
				seen[k] = true;
	}
	for (size_t k = 0; k < sizeof(needed) / sizeof(needed[0]); k++)
		if (!seen[k])
			fail_msg("sluice help %s has no examples", needed[k]);
	printf("the examples of %d commands' help run as written\n", run);
}

/* The matcher itself: what is loose and what is not. */
static void
test_loose_matching(void **state)
{
	(void)state;
	assert_true(match_line(
	    "task 1, lease 8589934595", "task 12, lease 12884901890"));
	assert_false(match_line("task 1, lease 3", "task 1, lease 8589934595"));
	assert_false(match_line("task 8589934595", "task 3"));
	assert_true(match_line("at 1700000000000", "at 17958922032410"));
	assert_false(match_line("task 1, lease 3", "task x, lease 40"));
	assert_false(match_line("acked 1", "acked 1 more"));
	assert_true(match_line("run_at 2024-01-01T00:00:00.000+00:00 (...)",
	    "run_at 2026-11-25T00:34:57.076+01:00 (73ms ago)"));
	assert_true(match_line("{\"id\":3,...}", "{\"id\":9,\"lease\":2}"));
	assert_false(match_line("{\"id\":3,...}", "{\"lease\":2}"));
	{
		char e[] = "a\n...\nz\n", a[] = "a\nb\nc\nz\n", a2[] = "a\n";
		char *ev[8], *av[8];
		int ne = split_lines(e, ev);

		assert_true(match_lines(ev, ne, av, split_lines(a, av)));
		assert_false(match_lines(ev, ne, av, split_lines(a2, av)));
	}
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loose_matching),
		T(test_readme_examples_run_as_written),
		T(test_client_doc_examples_run_as_written),
		T(test_http_api_doc_examples_run_as_written),
		T(test_help_examples_run_as_written),
	};
#undef T
	return cmocka_run_group_tests_name("docs", tests, NULL, NULL);
}
