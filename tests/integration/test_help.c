/* The help of the three programs and the man pages made from it
 * (tools/man/mkman.c): sluiced's flags in their groups, each flag of its
 * option table listed once; the pages made by the build, rendered by
 * groff without a warning, their NAME read by whatis (lexgrog), holding
 * every word of the help they are made from, in order (so they cannot
 * drift from it); and `make install`'s
 * step putting them under share/man/man1. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "it.h"

enum {
	OUT_MAX = 1 << 20,
	WORDS_MAX = 64,
};

static char out[OUT_MAX], err[OUT_MAX];

/* Runs argv (NULL-ended) into out and err; its exit status. */
static int
run(char *const argv[])
{
	return t_run(argv, NULL, out, sizeof(out), err, sizeof(err));
}

/* A built program's path, copied (t_bin's buffer is shared). */
static char *
bin(const char *name)
{
	char *p = strdup(t_bin(name));

	assert_non_null(p);
	return p;
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b = malloc(OUT_MAX);
	size_t n;

	if (f == NULL)
		fail_msg("cannot read %s", path);
	assert_non_null(b);
	n = fread(b, 1, OUT_MAX - 1, f);
	b[n] = '\0';
	fclose(f);
	return b;
}

/* The next line of *p (changed in place), or NULL at the end. */
static char *
next_line(char **p)
{
	char *line = *p, *nl;

	if (line == NULL || *line == '\0')
		return NULL;
	nl = strchr(line, '\n');
	if (nl != NULL) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = line + strlen(line);
	}
	return line;
}

/* sluiced --help: the flags in groups, each under a one-line heading, in
 * this order; every flag of flags.c's option table in one group, once. */
static void
test_sluiced_help_groups_every_flag(void **state)
{
	static const char *const groups[] = { "Listening:",
		"Storage & durability:", "Queue behaviour:",
		"Replication & failover:", "Security:", "HTTP:",
		"Beanstalk face:", "Limits:", "Logging:", "Information:" };
	static char flags[128][64];
	char *argv[] = { bin("sluiced"), "--help", NULL };
	char path[1024], *src, *p, *line, *table;
	int ngroups = 0, nflags = 0, in_group = 0, ntable = 0;

	(void)state;
	assert_int_equal(run(argv), 0);
	p = out;
	while ((line = next_line(&p)) != NULL) {
		if (line[0] != ' ' && line[0] != '\0' &&
		    line[strlen(line) - 1] == ':' && strlen(line) <= 40) {
			if (ngroups >= 10)
				fail_msg("a heading past the ten: %s", line);
			assert_string_equal(line, groups[ngroups]);
			ngroups++;
			in_group = 0;
			continue;
		}
		if (strncmp(line, "  --", 4) != 0)
			continue;
		if (ngroups == 0)
			fail_msg("a flag before any heading: %s", line);
		assert_true(nflags < 128);
		snprintf(flags[nflags], 64, "%.*s", (int)strcspn(line + 4, " "),
		    line + 4);
		for (int i = 0; i < nflags; i++)
			if (strcmp(flags[i], flags[nflags]) == 0)
				fail_msg("--%s is listed twice", flags[i]);
		nflags++;
		in_group++;
	}
	assert_int_equal(ngroups, 10);
	assert_true(in_group > 0);

	/* every flag sluiced reads is listed, and nothing else */
	snprintf(
	    path, sizeof(path), "%s/src/server/flags.c", SLUICE_SOURCE_DIR);
	src = slurp(path);
	table = strstr(src, "static const struct option options[] = {");
	assert_non_null(table);
	*strstr(table, "};") = '\0';
	for (p = table; (p = strstr(p, "{ \"")) != NULL; p += 3) {
		char name[64];
		bool listed = false;

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(p + 3, "\""),
		    p + 3);
		for (int i = 0; i < nflags; i++)
			listed = listed || strcmp(flags[i], name) == 0;
		if (!listed)
			fail_msg("--%s is not in sluiced --help", name);
		ntable++;
	}
	assert_int_equal(ntable, nflags);
	printf("%d flags in %d groups\n", nflags, ngroups);
	free(src);
	free(argv[0]);
}

/* sluice --help's overview says where the examples and the man page are,
 * and both are so: `sluice help put` ends with examples, and the build
 * made the page `man sluice` shows. */
static void
test_sluice_overview_names_examples_and_man(void **state)
{
	char *prog = bin("sluice");
	char *argv[] = { prog, "--help", NULL, NULL };
	char page[1024];
	struct stat st;

	(void)state;
	assert_int_equal(run(argv), 0);
	assert_non_null(strstr(out, "`sluice help COMMAND`"));
	assert_non_null(strstr(out, "examples"));
	assert_non_null(strstr(out, "`man sluice`"));
	argv[1] = "help";
	argv[2] = "put";
	assert_int_equal(run(argv), 0);
	assert_non_null(strstr(out, "\nExamples, from an empty server"));
	argv[2] = "kick";
	assert_int_equal(run(argv), 0);
	assert_non_null(strstr(out, "--dry-run"));
	assert_non_null(strstr(out, "$ sluice kick -t emails --error"));
	snprintf(page, sizeof(page), "%s/man/sluice.1", SLUICE_BUILD_DIR);
	if (stat(page, &st) != 0 || st.st_size == 0)
		fail_msg("%s was not made by the build", page);
	free(prog);
}

/* ---- the man pages ------------------------------------------------------
 */

/* The words of `s`, each kept to its letters, digits and '-' (so that the
 * help's punctuation and roff's rendering of it do not count), empty
 * ones dropped; "usage:" too (the page's synopsis leaves it out). */
static int
words(char *s, char **w, int max)
{
	int n = 0;

	for (char *t = strtok(s, " \t\n"); t != NULL;
	     t = strtok(NULL, " \t\n")) {
		char *o = t;

		if (strcmp(t, "usage:") == 0)
			continue;
		for (char *c = t; *c != '\0'; c++)
			if (isalnum((unsigned char)*c) || *c == '-')
				*o++ = *c;
		*o = '\0';
		if (*t != '\0') {
			assert_true(n < max);
			w[n++] = t;
		}
	}
	return n;
}

/* The help `prog --help` (and with `commands`, each command's, in the
 * order the help lists them) into `help`. */
static void
help_of(const char *prog, bool commands, char *help, size_t cap)
{
	char *argv[] = { (char *)prog, "--help", NULL, NULL };
	char names[WORDS_MAX][32], *main_help, *p, *line;
	const char *name = strrchr(prog, '/') + 1;
	int nnames = 0;

	assert_int_equal(run(argv), 0);
	snprintf(help, cap, "%s", out);
	if (!commands)
		return;
	main_help = strdup(out);
	assert_non_null(main_help);
	p = main_help;
	while ((line = next_line(&p)) != NULL) {
		size_t w = strspn(
		    line + (line[0] ? 2 : 0), "abcdefghijklmnopqrstuvwxyz");
		char usage[128];
		bool dup = false;

		if (strncmp(line, "  ", 2) != 0 || line[2] == ' ' || w == 0 ||
		    w >= 32 || line[2 + w] != ' ' || nnames == WORDS_MAX)
			continue;
		snprintf(names[nnames], 32, "%.*s", (int)w, line + 2);
		for (int i = 0; i < nnames; i++)
			dup = dup || strcmp(names[i], names[nnames]) == 0;
		argv[1] = names[nnames];
		argv[2] = "--help";
		snprintf(
		    usage, sizeof(usage), "usage: %s %s", name, names[nnames]);
		if (dup || run(argv) != 0 ||
		    strncmp(out, usage, strlen(usage)) != 0)
			continue;
		nnames++;
		assert_true(strlen(help) + strlen(out) + 1 < cap);
		strcat(help, out);
	}
	assert_true(nnames >= 5);
	free(main_help);
}

/* `name` as found on $PATH, or NULL. */
static const char *
which(const char *name)
{
	static char path[1024];
	const char *dirs = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";

	while (*dirs != '\0') {
		size_t n = strcspn(dirs, ":");

		snprintf(path, sizeof(path), "%.*s/%s", (int)n, dirs, name);
		if (access(path, X_OK) == 0)
			return path;
		dirs += n + (dirs[n] == ':');
	}
	return NULL;
}

/* Renders `page` with groff as `man` would on a terminal (-Tutf8), with
 * every warning on (-ww): none may come. The text, plain, into out. */
static void
render(const char *page)
{
	char *argv[] = { (char *)which("groff"), "-man", "-Tutf8", "-ww",
		"-P-cbou", (char *)page, NULL };
	int rc = run(argv);

	if (rc != 0 || err[0] != '\0')
		fail_msg("groff exited %d on %s:\n%s", rc, page, err);
}

/* The pages the build made: present, rendered without a warning, and
 * holding every word of their help, in order. */
static void
test_man_pages_hold_the_help_and_render_cleanly(void **state)
{
	static const struct {
		const char *prog;
		bool commands;
	} pages[] = {
		{ "sluiced", false },
		{ "sluice", true },
		{ "sluice-log", true },
	};
	static char help[OUT_MAX], text[OUT_MAX];
	static char *hw[OUT_MAX / 8], *pw[OUT_MAX / 8];
	(void)state;
	if (which("groff") == NULL)
		skip(); /* groff-base: make test-deps installs it */
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		char page[1024], *prog = bin(pages[i].prog);
		struct stat st;
		int nh, np, k = 0;

		snprintf(page, sizeof(page), "%s/man/%s.1", SLUICE_BUILD_DIR,
		    pages[i].prog);
		if (stat(page, &st) != 0 || st.st_size == 0)
			fail_msg("%s was not made by the build", page);
		render(page);
		snprintf(text, sizeof(text), "%s", out);
		/* NAME as whatis and apropos read it (man-db's lexgrog) */
		if (which("lexgrog") != NULL) {
			char *lex[] = { (char *)which("lexgrog"), page, NULL };
			char want[64];

			snprintf(want, sizeof(want), "\"%s - ", pages[i].prog);
			if (run(lex) != 0 || strstr(out, want) == NULL)
				fail_msg("lexgrog finds no NAME in %s: %s%s",
				    page, out, err);
		}
		help_of(prog, pages[i].commands, help, sizeof(help));
		nh = words(help, hw, OUT_MAX / 8);
		np = words(text, pw, OUT_MAX / 8);
		/* every word of the help, in order, in the page */
		for (int h = 0; h < nh; h++) {
			while (k < np && strcmp(pw[k], hw[h]) != 0)
				k++;
			if (k == np)
				fail_msg("%s: the help's word %d \"%s\" (after "
				         "\"%s\") is not in the page",
				    page, h, hw[h], h > 0 ? hw[h - 1] : "");
			k++;
		}
		printf("%s: %d words of help, all in its %d\n", page, nh, np);
		free(prog);
	}
}

/* cmake --install (what make install runs) puts the three pages under
 * PREFIX/share/man/man1, as the build made them. */
static void
test_install_puts_the_pages_in_man1(void **state)
{
	static const char *const names[] = { "sluiced", "sluice",
		"sluice-log" };
	char prefix[600];
	char *argv[] = { SLUICE_CMAKE, "--install", SLUICE_BUILD_DIR,
		"--prefix", prefix, NULL };
	int rc;

	snprintf(prefix, sizeof(prefix), "%s", t_path(*state, "prefix"));
	if ((rc = run(argv)) != 0)
		fail_msg("cmake --install exited %d:\n%s%s", rc, out, err);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char a[1024], b[1024], *x, *y;

		snprintf(
		    a, sizeof(a), "%s/share/man/man1/%s.1", prefix, names[i]);
		snprintf(
		    b, sizeof(b), "%s/man/%s.1", SLUICE_BUILD_DIR, names[i]);
		x = slurp(a);
		y = slurp(b);
		assert_string_equal(x, y);
		free(x);
		free(y);
	}
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_sluiced_help_groups_every_flag),
		T(test_sluice_overview_names_examples_and_man),
		T(test_man_pages_hold_the_help_and_render_cleanly),
		T(test_install_puts_the_pages_in_man1),
	};
#undef T
	return cmocka_run_group_tests_name("help", tests, NULL, NULL);
}
