/* `sluice-log state` on the data of a sluiced killed (-9) while a tube had
 * flow limits and tasks taken under them: the text lists the tube under
 * "flow limits:" with its rate, burst, tokens, cap and slots in use (the
 * taken tasks that survived, as a restarted sluiced counts them), and the
 * JSON has the limit_* pairs in the tube's counters as `sluice stats
 * --json` has them; a tube without limits has none. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "it.h"

enum { OUT_MAX = 64 << 10 };

static char out[OUT_MAX], err[OUT_MAX];

/* Runs `sluice-log state DIR [ARG]`: its exit code, stdout in `out`. */
static int
state_of(const char *dir, const char *arg)
{
	char bin[1024];
	char *argv[] = { bin, "state", (char *)dir, (char *)arg, NULL };

	snprintf(bin, sizeof(bin), "%s", t_bin("sluice-log"));
	return t_run(argv, NULL, out, sizeof(out), err, sizeof(err));
}

static void
has(const char *want)
{
	if (strstr(out, want) == NULL)
		fail_msg("no \"%s\" in\n%s", want, out);
}

static void
test_state_shows_the_limits_and_slots(void **state)
{
	struct t_srv *s = it_srv(*state, "loglim");
	struct sluice_client *c;
	struct sluice_limits l = { SLUICE_LIM_RATE | SLUICE_LIM_CONCURRENCY, 10,
		1000, 5, 3, 0, 0, 0 };
	struct sluice_task *t[2];
	char *tail;

	it_start(s);
	c = it_client(s);
	for (int i = 0; i < 4; i++)
		it_put(c, "lim", "x");
	it_put(c, "free", "y");
	it_rc(c, sluice_tube_limit(c, "lim", &l, 0, NULL), 0);
	t[0] = it_take(c, "lim", 0, 1); /* detached: taken in the log */
	t[1] = it_take(c, "lim", 0, 1);
	sluice_task_free(t[0]);
	sluice_task_free(t[1]);
	sluice_close(c);
	t_srv_stop(s, SIGKILL);

	assert_int_equal(state_of(s->data, NULL), 0);
	has("\nflow limits:\n  lim                    rate 10/s, burst 5 "
	    "(tokens now ");
	has("); concurrency 3 (slots in use 2)\n");
	tail = strstr(out, "flow limits:");
	assert_null(strstr(tail, "  free "));

	assert_int_equal(state_of(s->data, "--json"), 0);
	has("\"lim\":{\"ready\":2,\"delayed\":0,\"taken\":2,");
	has("\"replaces\":0,\"limit_rate\":10,\"limit_rate_per_ms\":1000,"
	    "\"limit_burst\":5,\"limit_tokens\":");
	has(",\"limit_concurrency\":3,\"limit_slots_used\":2,"
	    "\"limit_held_rate\":0,\"limit_held_concurrency\":0,"
	    "\"limit_waiting_takes\":0,");
	tail = strstr(out, "\"free\":");
	assert_non_null(tail);
	*strstr(tail, "}}") = '\0';
	assert_null(strstr(tail, "limit_"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_state_shows_the_limits_and_slots, it_setup,
		    it_teardown),
	};

	return cmocka_run_group_tests_name("log_limits", tests, NULL, NULL);
}
