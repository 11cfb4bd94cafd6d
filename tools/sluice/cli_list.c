/* cli_list - `sluice list`: a tube's tasks by state and order, as a table
 * or JSON; with --after or --all, page after page in id order, printed as
 * they come. Says how many tasks a list left out, from the tube's
 * counts. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"

static const char list_usage[] =
    "usage: sluice list -t TUBE [--state S] [--order O] [--limit N] "
    "[--after ID | --all] [--payloads] [--json]\n";
static const char list_help[] =
    "\nLists a tube's tasks.\n\n"
    "  -t, --tube TUBE     the tube\n"
    "      --state S       ready, delayed, taken, buried, done or waiting\n"
    "                      (for its parents; default: all)\n"
    "      --order O       attempts (most first), age (oldest first,\n"
    "                      the default), run_at (soonest first) or id\n"
    "                      (lowest first)\n"
    "      --limit N       at most N tasks (default 100, at most 1000);\n"
    "                      how many were left out is said after them\n"
    "      --after ID      the page after task ID, in id order: pass the\n"
    "                      last id of a page to get the next\n"
    "      --all           every task, in id order, fetched in pages of\n"
    "                      --limit (default 1000)\n"
    "      --payloads      include the payloads (JSON; the text table "
    "shows\n"
    "                      sizes only)\n"
    "      --json          print {\"tasks\":[...],\"omitted\":N}; with\n"
    "                      --after or --all, {\"tasks\":[...],\"next\":ID}\n"
    "                      (null: nothing follows)\n";

/* How many of the tube's tasks (in `state`, 0: any) a list of `n` left
 * out, from the tube's counts; 0 when it showed fewer than it could. */
static uint64_t
list_omitted(
    struct cli *cli, const char *tube, int state, size_t n, size_t limit)
{
	const struct sluice_tube_stats *ts = NULL;
	struct sluice_stats *st;
	uint64_t total = 0, done = 0, waiting = 0;

	if (n < limit || sluice_stats(cli->c, tube, &st) != 0)
		return 0;
	for (size_t i = 0; i < st->ntubes; i++)
		if (strcmp(st->tubes[i].name, tube) == 0)
			ts = &st->tubes[i];
	if (ts != NULL && sluice_kv_get(ts->kv, ts->nkv, "done", &done) != 0)
		done = 0; /* a server that keeps no done tasks */
	if (ts != NULL &&
	    sluice_kv_get(ts->kv, ts->nkv, "waiting", &waiting) != 0)
		waiting = 0; /* a server before dependencies */
	if (ts != NULL)
		total = state == SLUICE_READY ? ts->ready
		    : state == SLUICE_DELAYED ? ts->delayed
		    : state == SLUICE_TAKEN   ? ts->taken
		    : state == SLUICE_BURIED  ? ts->buried
		    : state == SLUICE_DONE    ? done
		    : state == SLUICE_WAITING ? waiting
		                              : ts->ready + ts->delayed +
		        ts->taken + ts->buried + done + waiting;
	sluice_stats_free(st);
	return total > n ? total - n : 0;
}

/* --after and --all: pages in id order, printed as they come. A failure
 * midway still ends the JSON, its "next" the cursor to resume from. */
static int
list_pages(struct cli *cli, const char *tube, int state, uint64_t after,
    uint32_t limit, bool all, bool payloads, bool json)
{
	uint64_t next;
	bool first = true;
	int rc;

	cli_print_list_head(stdout, json);
	for (;;) {
		struct sluice_task *t;
		size_t n;

		rc = sluice_list_after(cli->c, tube, state, SLUICE_ORDER_ID,
		    after, limit, payloads, &t, &n);
		if (rc != 0) {
			cli_print_list_next(stdout, after, json);
			fflush(stdout);
			return cli_fail(cli, rc, "list -t %s --after %" PRIu64,
			    tube, after);
		}
		cli_print_list_rows(stdout, t, n, json, first);
		first = first && n == 0;
		next = n == limit ? t[n - 1].id : 0;
		sluice_task_free(t);
		if (!all || next == 0)
			break;
		after = next;
	}
	cli_print_list_next(stdout, next, json);
	return EXIT_OK;
}

static int
cmd_list(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		{ "state", required_argument, NULL, OPT_STATE },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "after", required_argument, NULL, OPT_AFTER },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "payloads", no_argument, NULL, OPT_PAYLOADS },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "t:h", opts };
	const char *tube = NULL;
	int state = 0, order = 0, ch, rc;
	bool payloads = false, all = false, paged = false;
	uint64_t limit = 0, after = 0;
	struct sluice_task *t;
	size_t n;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		switch (ch) {
		case 't':
			tube = optarg;
			break;
		case OPT_STATE:
			if ((state = cli_parse_state(optarg)) < 0)
				return cli_usage_error(cli,
				    "--state: \"%s\" is not ready, delayed, "
				    "taken, buried or done",
				    optarg);
			break;
		case OPT_ORDER:
			if (strcmp(optarg, "attempts") == 0)
				order = SLUICE_ORDER_ATTEMPTS;
			else if (strcmp(optarg, "age") == 0)
				order = SLUICE_ORDER_AGE;
			else if (strcmp(optarg, "run_at") == 0)
				order = SLUICE_ORDER_RUN_AT;
			else if (strcmp(optarg, "id") == 0)
				order = SLUICE_ORDER_ID;
			else
				return cli_usage_error(cli,
				    "--order: \"%s\" is not attempts, age, "
				    "run_at or id",
				    optarg);
			break;
		case OPT_LIMIT:
			if ((rc = cli_parse_num(cli, "--limit", optarg, 1,
			         SLUICE_LIST_MAX, &limit)) != 0)
				return rc;
			break;
		case OPT_AFTER:
			if ((rc = cli_parse_num(cli, "--after", optarg, 0,
			         UINT64_MAX, &after)) != 0)
				return rc;
			paged = true;
			break;
		case OPT_ALL:
			all = paged = true;
			break;
		case OPT_PAYLOADS:
			payloads = true;
			break;
		}
	}
	if (a.stop)
		return a.status;
	if (tube == NULL)
		return cli_usage_error(cli, "-t TUBE is needed");
	if (paged && order != 0 && order != SLUICE_ORDER_ID)
		return cli_usage_error(cli,
		    "--after and --all page in id order: leave out --order "
		    "or give --order id");
	if ((rc = cli_no_operand_connect(cli, argc, argv)) != 0)
		return rc;
	if (limit == 0)
		limit = all ? SLUICE_LIST_MAX : 100;
	if (paged)
		return list_pages(cli, tube, state, after, (uint32_t)limit, all,
		    payloads && a.json, a.json);
	if ((rc = sluice_list(cli->c, tube, state,
	         order != 0 ? order : SLUICE_ORDER_AGE, (uint32_t)limit,
	         payloads && a.json, &t, &n)) != 0)
		return cli_fail(cli, rc, "list -t %s", tube);
	cli_print_task_list(stdout, t, n,
	    list_omitted(cli, tube, state, n, (size_t)limit), a.json);
	sluice_task_free(t);
	return EXIT_OK;
}

CLI_COMMAND(list, cmd_list);
