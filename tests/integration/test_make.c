/* The Makefile's two commands, as `make -n` shows them (nothing is run,
 * installed or built): `make run` builds only what runs (sluiced and the
 * tools the README uses next, not the tests, fuzz replayers and
 * benchmarks) and starts sluiced where LISTEN and DATA say; `make test`
 * still builds everything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

enum { OUT_MAX = 1 << 20 };

static char out[OUT_MAX], err[OUT_MAX];

/* `make -n -C SOURCE TARGET BUILD=... VARS...` (NULL-ended), its
 * commands into out; PKGS and TEST_PKGS empty, so that not even the check
 * of the installed packages could install one. */
static void
make_n(const char *target, const char *var1, const char *var2)
{
	char build[600];
	char *argv[] = { "/usr/bin/make", "-n", "-C", SLUICE_SOURCE_DIR,
		(char *)target, build, "PKGS=", "TEST_PKGS=", "JOBS=2",
		(char *)var1, (char *)var2, NULL };
	int rc;

	snprintf(build, sizeof(build), "BUILD=%s", SLUICE_BUILD_DIR);
	if ((rc = t_run(argv, NULL, out, sizeof(out), err, sizeof(err))) != 0)
		fail_msg("make -n %s exited %d:\n%s%s", target, rc, out, err);
}

/* The "cmake --build" lines of out, each checked by `check`. */
static int
build_lines(void (*check)(const char *line))
{
	int n = 0;

	for (const char *p = out; (p = strstr(p, "cmake --build ")) != NULL;
	     p++) {
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		check(line);
		n++;
	}
	return n;
}

static void
only_what_runs(const char *line)
{
	char want[800];

	snprintf(want, sizeof(want),
	    "cmake --build %s -j 2 --target sluiced sluice_cmd sluice-log",
	    SLUICE_BUILD_DIR);
	assert_string_equal(line, want);
}

static void
everything(const char *line)
{
	char want[800];

	snprintf(want, sizeof(want), "cmake --build %s -j 2", SLUICE_BUILD_DIR);
	assert_string_equal(line, want);
}

static void
test_make_run_builds_only_what_runs(void **state)
{
	char data[600], var[700], want[1400];
	char *argv[] = { SLUICE_CMAKE, "--build", SLUICE_BUILD_DIR, "--target",
		"help", NULL };
	static const char *const targets[] = { "sluiced", "sluice_cmd",
		"sluice-log" };

	snprintf(data, sizeof(data), "%s", t_path(*state, "q"));
	snprintf(var, sizeof(var), "DATA=%s", data);
	make_n("run", "LISTEN=tcp://127.0.0.1:7800", var);
	assert_int_equal(build_lines(only_what_runs), 1);
	snprintf(want, sizeof(want),
	    "exec %s/bin/sluiced --data %s --listen tcp://127.0.0.1:7800\n",
	    SLUICE_BUILD_DIR, data);
	if (strstr(out, want) == NULL)
		fail_msg("make run does not start `%s`:\n%s", want, out);

	/* the targets it names are the build's */
	assert_int_equal(
	    t_run(argv, NULL, out, sizeof(out), err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		char name[64], ninja[64];

		/* make's help lists "... NAME", ninja's "NAME: phony" */
		snprintf(name, sizeof(name), "... %s\n", targets[i]);
		snprintf(ninja, sizeof(ninja), "\n%s: phony\n", targets[i]);
		if (strstr(out, name) == NULL && strstr(out, ninja) == NULL)
			fail_msg("the build has no target %s", targets[i]);
	}
}

static void
test_make_test_builds_everything(void **state)
{
	(void)state;
	make_n("test-plain", NULL, NULL);
	assert_int_equal(build_lines(everything), 1);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_make_run_builds_only_what_runs),
		T(test_make_test_builds_everything),
	};
#undef T
	return cmocka_run_group_tests_name("make", tests, NULL, NULL);
}
