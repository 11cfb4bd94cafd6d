/* cli_group - `sluice group set|pause|resume|show TUBE GROUP`: the limits
 * of one fair group of a tube (its own concurrency, rate and burst, which
 * replace the limits every group of the tube gets, `sluice tube set T
 * --group-concurrency N --group-rate R`), its pause, and where it stands
 * (docs/queue.md, "Group limits"). Settings stay while the group has no
 * task; `set --clear` drops the group's own limits. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "util/rate.h"

enum {
	G_RATE = 256,
	G_BURST,
	G_CONCURRENCY,
	G_CLEAR,
	G_JSON,
};

static const char group_usage[] =
    "usage: sluice group set TUBE GROUP [--concurrency N|none]\n"
    "                   [--rate N/s|m|h|none [--burst N]] [--clear] "
    "[--json]\n"
    "       sluice group pause TUBE GROUP [--json]\n"
    "       sluice group resume TUBE GROUP [--json]\n"
    "       sluice group show TUBE GROUP [--json]\n";
static const char group_help[] =
    "\nOne fair group's own limits (a put names its group with --group).\n"
    "Every group of a tube gets the tube's group limits (sluice tube set\n"
    "TUBE --group-concurrency N --group-rate N/s); a group's own limit\n"
    "replaces that one limit for it. A group at its concurrency, out of\n"
    "tokens or paused is skipped: its tasks stay ready and the next\n"
    "group's are handed out. The tube's own limits hold on top. A\n"
    "group's settings stay while it has no task.\n\n"
    "      --concurrency N   at most N tasks of the group taken at once;\n"
    "                        none lifts its own (the tube's group limit\n"
    "                        holds again)\n"
    "      --rate N/s|m|h    at most N of its tasks handed out a second,\n"
    "                        minute or hour; none lifts its own\n"
    "      --burst N         the rate's bucket (default: 100 ms of "
    "tokens)\n"
    "      --clear           drop the group's own limits (a pause stays)\n"
    "      --json            print the group as JSON\n";

struct group_args {
	struct sluice_limits lim;
	unsigned lunset;
	bool burst, clear, json;
};

static int
parse_limit(struct cli *cli, int opt, const char *s, struct group_args *a)
{
	unsigned bit =
	    opt == G_CONCURRENCY ? SLUICE_LIM_CONCURRENCY : SLUICE_LIM_RATE;
	const char *name = opt == G_RATE ? "--rate"
	    : opt == G_BURST             ? "--burst"
	                                 : "--concurrency";
	uint64_t v;

	if (opt == G_BURST) {
		if (a->burst)
			return cli_usage_error(cli, "--burst is given twice");
		a->burst = true;
		if (cli_parse_num(cli, name, s, 1, 1000000, &v) != 0)
			return EXIT_USAGE;
		a->lim.burst = (uint32_t)v;
		return 0;
	}
	if ((a->lim.set | a->lunset) & bit)
		return cli_usage_error(cli, "%s is given twice", name);
	if (strcmp(s, "none") == 0) {
		a->lunset |= bit;
		return 0;
	}
	a->lim.set |= bit;
	if (opt == G_RATE) {
		if (rate_parse(s, &a->lim.rate, &a->lim.per_ms) != 0)
			return cli_usage_error(cli,
			    "--rate takes " RATE_SYNTAX " or none, not \"%s\"",
			    s);
		return 0;
	}
	if (cli_parse_num(cli, name, s, 1, 1000000, &v) != 0)
		return EXIT_USAGE;
	a->lim.concurrency = (uint32_t)v;
	return 0;
}

static int
parse_args(struct cli *cli, int argc, char **argv, struct group_args *a)
{
	static const struct option opts[] = {
		{ "rate", required_argument, NULL, G_RATE },
		{ "burst", required_argument, NULL, G_BURST },
		{ "concurrency", required_argument, NULL, G_CONCURRENCY },
		{ "clear", no_argument, NULL, G_CLEAR },
		{ "json", no_argument, NULL, G_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case G_CLEAR:
			a->clear = true;
			break;
		case G_JSON:
			a->json = true;
			break;
		case 'h':
			exit(cli_help(cli));
		case '?':
			return cli_bad_option(cli);
		default:
			if ((rc = parse_limit(cli, ch, optarg, a)) != 0)
				return rc;
			break;
		}
	}
	return 0;
}

static const char *const holds[] = { "none", "rate", "concurrency", "paused" };

static void
json_limits(const char *name, const struct sluice_limits *l)
{
	printf(",\"%s\":{", name);
	if (l->set & SLUICE_LIM_RATE)
		printf("\"rate\":%" PRIu32 ",\"per_ms\":%" PRIu32
		       ",\"burst\":%" PRIu32 "%s",
		    l->rate, l->per_ms, l->burst,
		    l->set & SLUICE_LIM_CONCURRENCY ? "," : "");
	if (l->set & SLUICE_LIM_CONCURRENCY)
		printf("\"concurrency\":%" PRIu32, l->concurrency);
	printf("}");
}

/* A limit's text: its value and whose it is. */
static void
print_limit(const char *what, const struct sluice_group_info *g, unsigned bit)
{
	const struct sluice_limits *l = &g->limits;
	const char *whose = (g->own_limits.set & bit) ? "its own"
	    : (g->every.set & bit)                    ? "every group's"
	                                              : NULL;
	char rate[32];

	if (!(l->set & bit)) {
		printf("  %-13s none\n", what);
		return;
	}
	if (bit == SLUICE_LIM_RATE) {
		rate_fmt(rate, sizeof(rate), l->rate, l->per_ms);
		printf("  %-13s %s, burst %" PRIu32 " (tokens now %" PRIu64
		       "; %s)\n",
		    what, rate, l->burst, l->tokens, whose);
	} else {
		printf("  %-13s %" PRIu32 " (taken now %" PRIu64 "; %s)\n",
		    what, l->concurrency, l->taken, whose);
	}
}

static void
print_group(const char *tube, const char *group,
    const struct sluice_group_info *g, bool json)
{
	if (json) {
		printf("{\"tube\":\"%s\",\"group\":\"%s\",\"own\":%s,"
		       "\"paused\":%s,\"live\":%s,\"ready\":%" PRIu32
		       ",\"taken\":%" PRIu64 ",\"tokens\":%" PRIu64
		       ",\"held_by\":\"%s\"",
		    tube, group, g->own ? "true" : "false",
		    g->paused ? "true" : "false", g->live ? "true" : "false",
		    g->ready, g->limits.taken, g->limits.tokens,
		    holds[g->holding & 3]);
		json_limits("limits", &g->limits);
		json_limits("own_limits", &g->own_limits);
		json_limits("every_group", &g->every);
		printf("}\n");
		return;
	}
	printf("group %s of tube %s: ready %" PRIu32 ", taken %" PRIu64 "%s\n",
	    group, tube, g->ready, g->limits.taken,
	    g->live ? "" : " (no task now; its settings stay)");
	printf("  %-13s %s\n", "paused", g->paused ? "yes" : "no");
	print_limit("rate", g, SLUICE_LIM_RATE);
	print_limit("concurrency", g, SLUICE_LIM_CONCURRENCY);
	if (g->holding != 0 && g->ready > 0)
		printf("  %-13s by its %s: its ready tasks wait, the other "
		       "groups' go\n",
		    "held back",
		    g->holding == 3 ? "pause" : holds[g->holding & 3]);
}

static int
cmd_group(struct cli *cli, int argc, char **argv)
{
	struct group_args a;
	struct sluice_group_info g;
	const char *sub, *tube, *group;
	int rc;

	memset(&a, 0, sizeof(a));
	if ((rc = parse_args(cli, argc, argv, &a)) != 0)
		return rc;
	if (argc - optind != 3)
		return cli_usage_error(
		    cli, "set, pause, resume or show, a TUBE and a GROUP");
	sub = argv[optind];
	tube = argv[optind + 1];
	group = argv[optind + 2];
	if (strcmp(sub, "set") != 0 && strcmp(sub, "pause") != 0 &&
	    strcmp(sub, "resume") != 0 && strcmp(sub, "show") != 0)
		return cli_usage_error(
		    cli, "set, pause, resume or show, not \"%s\"", sub);
	if (strcmp(sub, "set") != 0 &&
	    (a.lim.set != 0 || a.lunset != 0 || a.burst || a.clear))
		return cli_usage_error(
		    cli, "the limits (--rate ...) and --clear are set's");
	if (strcmp(sub, "set") == 0) {
		if (a.burst && !(a.lim.set & SLUICE_LIM_RATE))
			return cli_usage_error(cli,
			    "--burst goes with --rate (the rate's bucket)");
		if (a.clear && (a.lim.set != 0 || a.lunset != 0))
			return cli_usage_error(cli,
			    "--clear drops every limit of the group's own: "
			    "give it alone");
		if (a.clear)
			a.lunset = SLUICE_LIM_RATE | SLUICE_LIM_CONCURRENCY;
		if (a.lim.set == 0 && a.lunset == 0)
			return cli_usage_error(
			    cli, "set what? --concurrency, --rate or --clear");
	}
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if (strcmp(sub, "set") == 0)
		rc =
		    sluice_group_set(cli->c, tube, group, &a.lim, a.lunset, &g);
	else if (strcmp(sub, "pause") == 0)
		rc = sluice_group_pause(cli->c, tube, group, &g);
	else if (strcmp(sub, "resume") == 0)
		rc = sluice_group_resume(cli->c, tube, group, &g);
	else
		rc = sluice_group_show(cli->c, tube, group, &g);
	if (rc != 0)
		return cli_fail(cli, rc, "group %s %s %s", sub, tube, group);
	print_group(tube, group, &g, a.json);
	return EXIT_OK;
}

CLI_COMMAND(group, cmd_group);
