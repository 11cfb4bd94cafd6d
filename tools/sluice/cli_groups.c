/* cli_groups - `sluice groups T`: a tube's fair groups with their ready
 * and taken counts and the age of their oldest ready task, the largest
 * backlog first, as a table or JSON.
 *
 * The server lists them (sluice_groups, the groups op): one request
 * whatever the tasks, the first --limit groups (100 by default) and how
 * many there are. The "" group (tasks put without one) shows as "-"
 * (JSON: null). T "*" lists the groups of every tube that has fair
 * groups, with a TUBE column. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "json/json.h"
#include "util/dur.h"

enum { GROUPS_DEFAULT = 100 };

static void
print(const struct sluice_group *g, size_t n, uint64_t total, bool every,
    bool json)
{
	char age[32];

	if (json) {
		json_groups(stdout, g, n, total);
		fputc('\n', stdout);
		return;
	}
	if (every)
		printf("%-24s %-24s %10s %10s  %s\n", "TUBE", "GROUP", "READY",
		    "TAKEN", "OLDEST_READY");
	else
		printf("%-24s %10s %10s  %s\n", "GROUP", "READY", "TAKEN",
		    "OLDEST_READY");
	for (size_t i = 0; i < n; i++) {
		if (g[i].ready != 0)
			dur_fmt(age, sizeof(age), g[i].oldest_ready_ms);
		else
			snprintf(age, sizeof(age), "-");
		if (every)
			printf("%-24s ", g[i].tube);
		printf("%-24s %10" PRIu64 " %10" PRIu64 "  %s\n",
		    g[i].group ? g[i].group : "-", g[i].ready, g[i].taken, age);
	}
	if (total > n)
		printf("(%" PRIu64 " more not shown: --limit N shows up to "
		       "%d)\n",
		    total - n, SLUICE_GROUPS_MAX);
}

static const char groups_usage[] =
    "usage: sluice groups TUBE [--limit N] [--json]\n";
static const char groups_help[] =
    "\nLists a tube's fair groups (put --group) that have ready or taken\n"
    "tasks: their ready and taken counts and how long their oldest ready\n"
    "task has waited, the largest backlog (ready) first. \"-\" is the\n"
    "tasks put without a group. The server counts them: one request\n"
    "whatever the tasks. TUBE \"*\" lists the groups of every tube that\n"
    "has fair groups together.\n\n"
    "      --limit N       the first N groups (default 100, at most 1000);\n"
    "                      a last line says how many more there are\n"
    "      --json          print {\"groups\":[{\"group\":G,\"ready\":N,\n"
    "                      \"taken\":N,\"oldest_ready_ms\":N,\"tube\":T},\n"
    "                      ...],\"total\":N} (group null: none)\n";

static int
cmd_groups(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "limit", required_argument, NULL, OPT_LIMIT },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "h", opts };
	struct sluice_group *g = NULL;
	uint64_t limit = GROUPS_DEFAULT, total = 0;
	const char *tube;
	size_t n = 0;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		if (ch == OPT_LIMIT &&
		    (rc = cli_parse_num(cli, "--limit", optarg, 1,
		         SLUICE_GROUPS_MAX, &limit)) != 0)
			return rc;
	}
	if (a.stop)
		return a.status;
	if (optind != argc - 1)
		return cli_usage_error(cli, "give one TUBE");
	tube = argv[optind];
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	rc = sluice_groups(cli->c, tube, (uint32_t)limit, &g, &n, &total);
	if (rc != 0)
		return cli_fail(cli, rc, "groups %s", tube);
	print(g, n, total, strcmp(tube, "*") == 0, a.json);
	sluice_groups_free(g);
	return EXIT_OK;
}

CLI_COMMAND(groups, cmd_groups);
