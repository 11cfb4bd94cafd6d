/* cli_stats - what a node counts: stats (per tube and state, the log's
 * and replication's state; --hourly, an hour a row), rates (per kind of
 * event, its count, average and peak per second) and errors (a tube's
 * tasks counted by their last error). stats pages through the tubes when
 * the node has more than one reply lists. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"

/* Prints `first`, a stats reply; when the node has more tubes in use
 * than one reply lists (its pair tubes_next), the rest are read a page at
 * a time and printed with it, as one reply of every tube. */
static int
stats_print_all(struct cli *cli, const struct sluice_stats *first, bool json)
{
	enum { PAGES_MAX = 1000 };
	struct sluice_stats *pages[PAGES_MAX], all = *first;
	struct sluice_tube_stats *tubes = NULL;
	struct sluice_kv *kv = NULL;
	size_t npages = 0, n = first->ntubes, k = 0;
	uint64_t v = 0;
	uint32_t next;
	int rc = EXIT_OK;

	if (sluice_kv_get(first->kv, first->nkv, "tubes_next", &v) != 0 ||
	    v == 0) {
		cli_print_stats(stdout, first, json);
		return EXIT_OK;
	}
	for (next = (uint32_t)v; next != 0 && npages < PAGES_MAX; npages++) {
		int e = sluice_stats_page(
		    cli->c, next, SLUICE_STATS_PAGE_MAX, &pages[npages], &next);

		if (e != 0) {
			rc = cli_fail(cli, e,
			    "stats (the tubes after %" PRIu32 ")", next);
			goto out;
		}
		n += pages[npages]->ntubes;
	}
	tubes = malloc((n ? n : 1) * sizeof(*tubes));
	kv = malloc((first->nkv ? first->nkv : 1) * sizeof(*kv));
	if (tubes == NULL || kv == NULL) {
		rc = cli_fail(cli, SLUICE_ENOMEM, "stats");
		goto out;
	}
	memcpy(tubes, first->tubes, first->ntubes * sizeof(*tubes));
	n = first->ntubes;
	for (size_t i = 0; i < npages; i++) {
		memcpy(tubes + n, pages[i]->tubes,
		    pages[i]->ntubes * sizeof(*tubes));
		n += pages[i]->ntubes;
	}
	/* the pairs of one reply, not of the whole */
	for (size_t i = 0; i < first->nkv; i++)
		if (strcmp(first->kv[i].name, "tubes_next") != 0 &&
		    strcmp(first->kv[i].name, "tubes_listed") != 0)
			kv[k++] = first->kv[i];
	all.tubes = tubes;
	all.ntubes = n;
	all.kv = kv;
	all.nkv = k;
	cli_print_stats(stdout, &all, json);
out:
	for (size_t i = 0; i < npages; i++)
		sluice_stats_free(pages[i]);
	free(tubes);
	free(kv);
	return rc;
}

static const char stats_usage[] =
    "usage: sluice stats [--hourly] [-t TUBE] [--json]\n";
static const char stats_help[] =
    "\nCounts per tube and state, cumulative counters, the age of the "
    "oldest\nready task, and the node's log and replication state.\n\n"
    "  -t, --tube TUBE   only this tube (the totals still cover all)\n"
    "      --hourly      per UTC hour of the last 48 (newest first): acks,\n"
    "                    fails, buries, ttr expiries, the work of the acks\n"
    "                    (take -> ack: total, average, p50, p99) and the\n"
    "                    wait of the takes (ready -> take); of every tube,\n"
    "                    or of TUBE with -t\n"
    "      --json        print one JSON object\n";

static int
stats_hourly(struct cli *cli, const char *tube, bool json)
{
	struct sluice_hour *h;
	size_t n;
	int rc;

	if ((rc = sluice_stats_hourly(cli->c, tube, &h, &n)) != 0)
		return tube ? cli_fail(cli, rc, "stats --hourly -t %s", tube)
		            : cli_fail(cli, rc, "stats --hourly");
	cli_print_hourly(stdout, h, n, json);
	sluice_stats_hourly_free(h);
	return EXIT_OK;
}

static int
cmd_stats(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		{ "hourly", no_argument, NULL, OPT_HOURLY },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "t:h", opts };
	const char *tube = NULL;
	struct sluice_stats *s;
	bool hourly = false;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		if (ch == 't')
			tube = optarg;
		else if (ch == OPT_HOURLY)
			hourly = true;
	}
	if (a.stop)
		return a.status;
	if (optind != argc)
		return cli_usage_error(cli, "unexpected \"%s\"", argv[optind]);
	if ((rc = hourly ? cli_connect(cli) : cli_connect_routed(cli)) != 0)
		return rc;
	if (hourly)
		return stats_hourly(cli, tube, a.json);
	if (cli->c == NULL)
		return cli_map_stats(cli, tube, a.json);
	if ((rc = sluice_stats(cli->c, tube, &s)) != 0)
		return tube ? cli_fail(cli, rc, "stats -t %s", tube)
		            : cli_fail(cli, rc, "stats");
	rc = stats_print_all(cli, s, a.json);
	sluice_stats_free(s);
	return rc;
}

static const char rates_usage[] =
    "usage: sluice rates [-t TUBE] [--secs N] [--json]\n";
static const char rates_help[] =
    "\nEvents per second over the last N seconds, from the rolling "
    "history the\nserver keeps in memory (15 minutes; empty after a "
    "restart): puts, takes,\nacks, fails, buries and ttr expiries, each "
    "with its count, average and\npeak per second.\n\n"
    "  -t, --tube TUBE   only this tube (counted per 5 s)\n"
    "      --secs N      the last N seconds, 1..3600 (default 60)\n"
    "      --json        print {\"start\":MS,\"step_ms\":N,\"puts\":[...],"
    "...}:\n                    the counts per slot, oldest first\n";

static int
cmd_rates(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		{ "secs", required_argument, NULL, OPT_SECS },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "t:h", opts };
	struct sluice_history *h;
	const char *tube = NULL;
	uint64_t secs = 60;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		if (ch == 't')
			tube = optarg;
		else if (ch == OPT_SECS &&
		    (rc = cli_parse_num(
		         cli, "--secs", optarg, 1, 3600, &secs)) != 0)
			return rc;
	}
	if (a.stop)
		return a.status;
	if ((rc = cli_no_operand_connect(cli, argc, argv)) != 0)
		return rc;
	if ((rc = sluice_history(cli->c, tube, (uint32_t)secs, &h)) != 0)
		return tube ? cli_fail(cli, rc, "rates -t %s", tube)
		            : cli_fail(cli, rc, "rates");
	cli_print_history(stdout, h, a.json);
	sluice_history_free(h);
	return EXIT_OK;
}

static const char errors_usage[] =
    "usage: sluice errors -t TUBE [--state STATE] [--json]\n";
static const char errors_help[] =
    "\nCounts a tube's buried tasks by their last error, most frequent "
    "first.\n"
    "A task keeps its last error when it is retried and taken again, so\n"
    "by default only the buried ones count: the failures waiting for a\n"
    "person.\n\n"
    "  -t, --tube TUBE     the tube\n"
    "      --state STATE   the tasks counted: buried (the default), ready,\n"
    "                      delayed, taken, or all (every live task)\n"
    "      --json          print "
    "{\"errors\":[{\"error\":TEXT,\"count\":N}]}\n"
    "\nExample:\n"
    "  sluice errors -t emails --state all\n";

static int
cmd_errors(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		{ "state", required_argument, NULL, OPT_STATE },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "t:h", opts };
	struct sluice_error_count *e;
	const char *tube = NULL;
	int state = SLUICE_BURIED, ch;
	size_t n;
	int rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		if (ch == 't') {
			tube = optarg;
		} else if (ch == OPT_STATE) {
			state = strcmp(optarg, "all") == 0
			    ? 0
			    : cli_parse_state(optarg);
			if (state < 0 || state == SLUICE_DONE)
				return cli_usage_error(cli,
				    "--state: \"%s\" is not buried, ready, "
				    "delayed, taken or all",
				    optarg);
		}
	}
	if (a.stop)
		return a.status;
	if (tube == NULL)
		return cli_usage_error(cli, "-t TUBE is needed");
	if ((rc = cli_no_operand_connect(cli, argc, argv)) != 0)
		return rc;
	if ((rc = sluice_errors_state(cli->c, tube, state, &e, &n)) != 0)
		return cli_fail(cli, rc, "errors -t %s", tube);
	cli_print_errors(stdout, e, n, a.json);
	sluice_errors_free(e);
	return EXIT_OK;
}

CLI_COMMAND(stats, cmd_stats);

CLI_COMMAND(rates, cmd_rates);

CLI_COMMAND(errors, cmd_errors);
