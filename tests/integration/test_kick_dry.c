/* An error group kicked, and the dry runs of a kick and of a delete by
 * state, against a real sluiced through libsluice (sluice_kick_opts,
 * sluice_delete_where_dry) and the CLI (`kick -t T --error TEXT`,
 * `--dry-run` on kick and delete): a dry run counts what the act would
 * touch and changes nothing, and the act then touches exactly that many;
 * an error group's kick moves only the buried tasks of that last error.
 * A --dry-run or --error with nothing to count (kick --id, delete --all)
 * is refused, naming what it goes with. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

enum { OUT = 16 << 10 };

static char out[OUT], err[OUT];

/* Puts a task in "t", takes it and buries it with last error `text`. */
static void
buried(struct sluice_client *c, const char *text)
{
	uint64_t id = it_put(c, "t", text);
	struct sluice_task *t = it_take(c, "t", 0, 1);

	assert_true(t->id == id);
	it_rc(c, sluice_fail_fatal(c, id, t->lease, text, NULL), 0);
	sluice_task_free(t);
}

/* The buried groups of "t", as "text=count,...". */
static void
groups(struct sluice_client *c, char *buf, size_t cap)
{
	struct sluice_error_count *e;
	size_t n, len = 0;

	it_rc(c, sluice_errors(c, "t", &e, &n), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s=%" PRIu64,
		    i ? "," : "", e[i].text, e[i].count);
	sluice_errors_free(e);
}

/* Runs the CLI on `s` with the NULL-ended words after it; its status. */
#define CLI(s, ...)                                                            \
	it_cli((s)->url, NULL, out, sizeof(out), err, sizeof(err),             \
	    __VA_ARGS__, NULL)

static void
test_kick_of_an_error_group_and_dry_runs(void **state)
{
	struct t_srv *s = it_srv(*state, "kickdry");
	struct sluice_client *c;
	struct sluice_kick_opts ko = { .n = 1000, .error = "poison", .dry = 1 };
	struct sluice_delete_where_opts wo = {
		.states = SLUICE_STATE_BIT(SLUICE_READY), .older_ms = 0
	};
	char g[256];
	uint64_t n = 99;

	it_start(s);
	c = it_client(s);
	buried(c, "poison");
	buried(c, "poison");
	buried(c, "poison");
	buried(c, "oom");
	groups(c, g, sizeof(g));
	assert_string_equal(g, "poison=3,oom=1");

	/* the library: a dry run counts, kicks nothing */
	it_rc(c, sluice_kick_opts(c, "t", &ko, &n), 0);
	assert_true(n == 3);
	ko.n = 2;
	it_rc(c, sluice_kick_opts(c, "t", &ko, &n), 0);
	assert_true(n == 2);
	groups(c, g, sizeof(g));
	assert_string_equal(g, "poison=3,oom=1");
	ko.delayed = 1;
	it_rc(c, sluice_kick_opts(c, "t", &ko, &n), SLUICE_EINVAL);
	ko.delayed = 0;
	ko.dry = 0;
	ko.n = 1;
	it_rc(c, sluice_kick_opts(c, "t", &ko, &n), 0);
	assert_true(n == 1);
	groups(c, g, sizeof(g));
	assert_string_equal(g, "poison=2,oom=1");

	/* the CLI: a dry run of the group, then the group kicked whole */
	assert_int_equal(
	    CLI(s, "kick", "-t", "t", "--error", "poison", "--dry-run"), 0);
	assert_string_equal(out, "would kick 2 tasks\n");
	assert_int_equal(
	    CLI(s, "kick", "t", "--error", "poison", "--dry-run", "--json"), 0);
	assert_string_equal(out, "{\"would_kick\":2}\n");
	assert_int_equal(
	    CLI(s, "kick", "-t", "t", "--error", "nope", "--dry-run"), 0);
	assert_string_equal(out, "would kick 0 tasks\n");
	assert_int_equal(CLI(s, "kick", "--dry-run", "t", "5"), 0);
	assert_string_equal(out, "would kick 3 tasks\n");
	groups(c, g, sizeof(g));
	assert_string_equal(g, "poison=2,oom=1");
	assert_int_equal(CLI(s, "kick", "-t", "t", "--error", "poison"), 0);
	assert_string_equal(out, "kicked 2 tasks\n");
	groups(c, g, sizeof(g));
	assert_string_equal(g, "oom=1");
	/* a tube that does not exist is an error, dry or not */
	assert_int_equal(
	    CLI(s, "kick", "-t", "nosuch", "--error", "oom", "--dry-run"), 1);
	assert_non_null(strstr(err, "no such tube"));

	/* delete by state: the dry run's count, then the same deleted */
	it_rc(c, sluice_delete_where_dry(c, "t", &wo, &n), 0);
	assert_true(n == 3); /* the three poison tasks kicked to ready */
	assert_int_equal(CLI(s, "delete", "-t", "t", "--state", "ready,buried",
	                     "--older-than", "0", "--dry-run"),
	    0);
	assert_string_equal(out, "would delete 4 tasks\n");
	assert_int_equal(CLI(s, "delete", "-t", "t", "--state", "buried",
	                     "--older-than", "1h", "--dry-run", "--json"),
	    0);
	assert_string_equal(out, "{\"would_delete\":0}\n");
	groups(c, g, sizeof(g));
	assert_string_equal(g, "oom=1");
	it_rc(c, sluice_delete_where_dry(c, "t", &wo, &n), 0);
	assert_true(n == 3);
	assert_int_equal(CLI(s, "delete", "-t", "t", "--state", "ready,buried",
	                     "--older-than", "0"),
	    0);
	assert_string_equal(out, "deleted 4 tasks\n");
	it_rc(c, sluice_delete_where_dry(c, "t", &wo, &n), 0);
	assert_true(n == 0);

	/* refusals: nothing to count, or nothing to name */
	assert_int_equal(CLI(s, "delete", "-t", "t", "--all", "--dry-run"), 2);
	assert_non_null(strstr(err, "--dry-run goes with --state"));
	assert_int_equal(CLI(s, "kick", "--id", "1", "--dry-run"), 2);
	assert_non_null(strstr(err, "--error and --dry-run go with a TUBE"));
	assert_int_equal(CLI(s, "kick", "-t", "t", "--error", ""), 2);
	assert_non_null(strstr(err, "--error: the text of a last error"));
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_kick_of_an_error_group_and_dry_runs, it_setup,
		    it_teardown),
	};

	return cmocka_run_group_tests_name("kick_dry", tests, NULL, NULL);
}
