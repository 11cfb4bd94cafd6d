/* cli_tube - `sluice tube set|show|delete TUBE`: a tube's own settings,
 * its flow limits and its removal; and `sluice pause TUBE DUR`, which
 * stops handing out the tube's tasks for a while.
 *
 * set changes only the settings named on its command line; a value of
 * `default` gives a setting back to the server, `none` lifts a limit.
 * show prints the settings in force, each marked when it is the server's
 * default, and the limits with where they stand. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "json/json.h"
#include "util/rate.h"

enum {
	T_TTR = 256,
	T_MAX_ATTEMPTS,
	T_BACKOFF,
	T_KEEP_DONE,
	T_LOST_LEASE,
	T_DEAD_LETTER,
	T_FORCE,
	T_JSON,
	T_RATE,
	T_BURST,
	T_CONCURRENCY,
	T_GROUP_RATE,
	T_GROUP_BURST,
	T_GROUP_CONCURRENCY,
};

/* What the command line asks. */
struct tube_args {
	struct sluice_tube_conf set; /* set.set: the settings given */
	unsigned unset;              /* the settings given as `default` */
	unsigned named;              /* every setting named */
	bool force;
	bool json;
	struct sluice_limits lim;  /* lim.set: the limits given */
	unsigned lunset;           /* the limits given as `none` */
	bool burst;                /* --burst given */
	struct sluice_limits glim; /* every group's: --group-rate ... */
	unsigned glunset;
	bool gburst;
};

/* --rate N/s|m|h, --burst N, --concurrency N; `none` (or `default`)
 * lifts a limit. */
static int
parse_limit(struct cli *cli, int opt, const char *s, struct tube_args *a)
{
	bool grp = opt >= T_GROUP_RATE;
	int o = grp ? opt - T_GROUP_RATE + T_RATE : opt;
	struct sluice_limits *lim = grp ? &a->glim : &a->lim;
	unsigned *lunset = grp ? &a->glunset : &a->lunset;
	bool *burst = grp ? &a->gburst : &a->burst;
	unsigned bit =
	    o == T_CONCURRENCY ? SLUICE_LIM_CONCURRENCY : SLUICE_LIM_RATE;
	const char *name = o == T_RATE ? (grp ? "--group-rate" : "--rate")
	    : o == T_BURST             ? (grp ? "--group-burst" : "--burst")
	    : grp                      ? "--group-concurrency"
	                               : "--concurrency";
	uint64_t v;

	if (o == T_BURST) {
		if (*burst)
			return cli_usage_error(cli, "%s is given twice", name);
		*burst = true;
		if (cli_parse_num(cli, name, s, 1, 1000000, &v) != 0)
			return EXIT_USAGE;
		lim->burst = (uint32_t)v;
		return 0;
	}
	if ((lim->set | *lunset) & bit)
		return cli_usage_error(cli, "%s is given twice", name);
	if (strcmp(s, "none") == 0 || strcmp(s, "default") == 0) {
		*lunset |= bit;
		return 0;
	}
	lim->set |= bit;
	if (o == T_RATE) {
		if (rate_parse(s, &lim->rate, &lim->per_ms) != 0)
			return cli_usage_error(cli,
			    "%s takes " RATE_SYNTAX " or none, not \"%s\"",
			    name, s);
		return 0;
	}
	if (cli_parse_num(cli, name, s, 1, 1000000, &v) != 0)
		return EXIT_USAGE;
	lim->concurrency = (uint32_t)v;
	return 0;
}

/* BASE,CAP: two durations, the cap at least the base. */
static int
parse_backoff(struct cli *cli, const char *s, struct sluice_tube_conf *c)
{
	char base[64];
	const char *comma = strchr(s, ',');

	if (comma == NULL || (size_t)(comma - s) >= sizeof(base))
		return cli_usage_error(cli,
		    "--backoff takes BASE,CAP: two durations (1s,1h), not "
		    "\"%s\"",
		    s);
	memcpy(base, s, (size_t)(comma - s));
	base[comma - s] = '\0';
	if (cli_parse_ms(
	        cli, "--backoff's BASE", base, 0, &c->backoff_base_ms) != 0 ||
	    cli_parse_ms(
	        cli, "--backoff's CAP", comma + 1, 0, &c->backoff_cap_ms) != 0)
		return EXIT_USAGE;
	if (c->backoff_cap_ms < c->backoff_base_ms)
		return cli_usage_error(
		    cli, "--backoff: the CAP must be at least the BASE");
	return 0;
}

/* One setting's value into a->set, or `default` into a->unset. */
static int
parse_setting(struct cli *cli, int opt, const char *s, struct tube_args *a)
{
	struct sluice_tube_conf *c = &a->set;
	unsigned bit = 1u << (opt - T_TTR);
	uint64_t v;
	int rc = 0;

	if (a->named & bit)
		return cli_usage_error(
		    cli, "--%s is given twice", json_tube_fields[opt - T_TTR]);
	a->named |= bit;
	if (strcmp(s, "default") == 0) {
		a->unset |= bit;
		return 0;
	}
	c->set |= bit;
	switch (opt) {
	case T_TTR:
		return cli_parse_ms(cli, "--ttr", s, 1, &c->ttr_ms);
	case T_MAX_ATTEMPTS:
		rc = cli_parse_num(cli, "--max-attempts", s, 0, UINT32_MAX, &v);
		c->max_attempts = (uint32_t)v;
		return rc;
	case T_BACKOFF:
		return parse_backoff(cli, s, c);
	case T_KEEP_DONE:
		return cli_parse_ms(cli, "--keep-done", s, 0, &c->keep_done_ms);
	case T_LOST_LEASE:
		if (strcmp(s, "immediate") != 0 && strcmp(s, "backoff") != 0)
			return cli_usage_error(cli,
			    "--lost-lease takes immediate, backoff or "
			    "default, not \"%s\"",
			    s);
		c->lost_lease_immediate = strcmp(s, "immediate") == 0;
		return 0;
	default:
		if (strlen(s) > SLUICE_TUBE_MAX)
			return cli_usage_error(cli,
			    "--dead-letter: a tube name is at most %d bytes",
			    SLUICE_TUBE_MAX);
		strcpy(c->dead_letter, s);
		return 0;
	}
}

static int
parse_args(struct cli *cli, int argc, char **argv, struct tube_args *a)
{
	static const struct option opts[] = {
		{ "ttr", required_argument, NULL, T_TTR },
		{ "max-attempts", required_argument, NULL, T_MAX_ATTEMPTS },
		{ "backoff", required_argument, NULL, T_BACKOFF },
		{ "keep-done", required_argument, NULL, T_KEEP_DONE },
		{ "lost-lease", required_argument, NULL, T_LOST_LEASE },
		{ "dead-letter", required_argument, NULL, T_DEAD_LETTER },
		{ "rate", required_argument, NULL, T_RATE },
		{ "burst", required_argument, NULL, T_BURST },
		{ "concurrency", required_argument, NULL, T_CONCURRENCY },
		{ "group-rate", required_argument, NULL, T_GROUP_RATE },
		{ "group-burst", required_argument, NULL, T_GROUP_BURST },
		{ "group-concurrency", required_argument, NULL,
		    T_GROUP_CONCURRENCY },
		{ "force", no_argument, NULL, T_FORCE },
		{ "json", no_argument, NULL, T_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, rc;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case T_FORCE:
			a->force = true;
			break;
		case T_JSON:
			a->json = true;
			break;
		case 'h':
			exit(cli_help(cli));
		case '?':
			return cli_bad_option(cli);
		case T_RATE:
		case T_BURST:
		case T_CONCURRENCY:
		case T_GROUP_RATE:
		case T_GROUP_BURST:
		case T_GROUP_CONCURRENCY:
			if ((rc = parse_limit(cli, ch, optarg, a)) != 0)
				return rc;
			break;
		default:
			if ((rc = parse_setting(cli, ch, optarg, a)) != 0)
				return rc;
			break;
		}
	}
	return 0;
}

/* The limits' lines of tube show and stats -t. */
void
cli_print_limits(const struct sluice_limits *l)
{
	char rate[32];

	if (l->set & SLUICE_LIM_RATE) {
		rate_fmt(rate, sizeof(rate), l->rate, l->per_ms);
		printf("  %-13s %s, burst %" PRIu32 " (tokens now %" PRIu64
		       ")\n",
		    "rate", rate, l->burst, l->tokens);
	} else {
		printf("  %-13s none\n", "rate");
	}
	if (l->set & SLUICE_LIM_CONCURRENCY)
		printf("  %-13s %" PRIu32 " (slots in use %" PRIu64 ")\n",
		    "concurrency", l->concurrency, l->taken);
	else
		printf("  %-13s none\n", "concurrency");
	if (l->held > 0)
		printf("  %-13s %" PRIu64 " ready task%s wait on a limit\n",
		    "held back", l->held, l->held == 1 ? "" : "s");
}

/* The group limits' lines of tube show (none when the tube has no
 * group settings). */
static void
print_group_limits(const struct sluice_group_info *g)
{
	char rate[32];

	if (g->every.set == 0 && g->overrides == 0)
		return;
	if (g->every.set & SLUICE_LIM_RATE) {
		rate_fmt(rate, sizeof(rate), g->every.rate, g->every.per_ms);
		printf("  %-13s %s a group, burst %" PRIu32 "\n", "group rate",
		    rate, g->every.burst);
	}
	if (g->every.set & SLUICE_LIM_CONCURRENCY)
		printf("  %-13s %" PRIu32 " a group\n", "group conc.",
		    g->every.concurrency);
	printf("  %-13s %" PRIu32 " with their own settings (%" PRIu32
	       " paused), %" PRIu32 " held back now\n",
	    "groups", g->overrides, g->paused_groups, g->held_groups);
}

/* The tube's JSON with "group_limits":{...} before its end, when it has
 * group settings (g not NULL). */
static void
print_conf_json(const char *tube, const struct sluice_tube_conf *c,
    const struct sluice_limits *l, const struct sluice_group_info *g)
{
	char *text = NULL, rate[32];
	size_t len = 0;
	FILE *f;

	if (g == NULL || (f = open_memstream(&text, &len)) == NULL) {
		json_tube_conf_limits(stdout, tube, c, l);
		fputc('\n', stdout);
		return;
	}
	json_tube_conf_limits(f, tube, c, l);
	fclose(f);
	if (len > 0 && text[len - 1] == '}')
		len--; /* the object goes on */
	fwrite(text, 1, len, stdout);
	free(text);
	printf(",\"group_limits\":{");
	if (g->every.set & SLUICE_LIM_RATE) {
		rate_fmt(rate, sizeof(rate), g->every.rate, g->every.per_ms);
		printf("\"rate\":\"%s\",\"burst\":%" PRIu32 ",", rate,
		    g->every.burst);
	}
	if (g->every.set & SLUICE_LIM_CONCURRENCY)
		printf("\"concurrency\":%" PRIu32 ",", g->every.concurrency);
	printf("\"overrides\":%" PRIu32 ",\"paused\":%" PRIu32
	       ",\"held\":%" PRIu32 "}}\n",
	    g->overrides, g->paused_groups, g->held_groups);
}

static void
print_conf(const char *tube, const struct sluice_tube_conf *c,
    const struct sluice_limits *l, bool json)
{
	char val[SLUICE_TUBE_MAX + 64];

	if (json) {
		json_tube_conf_limits(stdout, tube, c, l);
		fputc('\n', stdout);
		return;
	}
	printf("tube %s\n", tube);
	for (unsigned i = 0; i < 6; i++) {
		cli_tube_setting_text(c, i, val, sizeof(val));
		printf("  %-13s %s%s\n", json_tube_fields[i], val,
		    c->set & (1u << i) ? "" : " (default)");
	}
	if (l != NULL && l->set != 0)
		cli_print_limits(l);
}

static const char *
operand_check(struct cli *cli, const char *sub, const struct tube_args *a)
{
	(void)cli;
	if (strcmp(sub, "set") == 0) {
		if (a->burst && !(a->lim.set & SLUICE_LIM_RATE))
			return "--burst goes with --rate (the rate's bucket)";
		if (a->gburst && !(a->glim.set & SLUICE_LIM_RATE))
			return "--group-burst goes with --group-rate";
		return a->force ? "--force is delete's" : NULL;
	}
	if (a->named != 0 || a->lim.set != 0 || a->lunset != 0 || a->burst ||
	    a->glim.set != 0 || a->glunset != 0 || a->gburst)
		return "the settings (--ttr ...) and limits (--rate ...) are "
		       "set's";
	if (strcmp(sub, "show") == 0 && a->force)
		return "--force is delete's";
	return NULL;
}

static const char tube_usage[] =
    "usage: sluice tube set TUBE [--ttr DUR] [--max-attempts N]\n"
    "                   [--backoff BASE,CAP] [--keep-done DUR]\n"
    "                   [--lost-lease immediate|backoff]\n"
    "                   [--dead-letter TUBE2] [--rate N/s|m|h [--burst N]]\n"
    "                   [--concurrency N] [--group-concurrency N]\n"
    "                   [--group-rate N/s|m|h [--group-burst N]] [--json]\n"
    "       sluice tube show TUBE [--json]\n"
    "       sluice tube delete TUBE [--force] [--json]\n"
    "       sluice tube move TUBE CLUSTER [--batch N] [--wait DUR] "
    "[--quiet]\n"
    "                   [--json]\n";
static const char tube_help[] =
    "\nA tube's own defaults, for the tasks put in it from now on; each\n"
    "setting the tube does not have is the server's. `set` changes only\n"
    "the settings given; `default` as a value gives one back to the "
    "server.\n\n"
    "      --ttr DUR            a put's ttr when it gives none\n"
    "      --max-attempts N     a put's max attempts when it gives none "
    "(0:\n"
    "                           unlimited)\n"
    "      --backoff BASE,CAP   a fail's delay: BASE, doubling with each\n"
    "                           attempt, at most CAP\n"
    "      --keep-done DUR      how long finished tasks are kept\n"
    "      --lost-lease HOW     a lease lost to ttr or a disconnect: ready\n"
    "                           at once (immediate) or as a fail "
    "(backoff)\n"
    "      --dead-letter TUBE2  a task that would be buried in TUBE moves\n"
    "                           to TUBE2 instead, ready, its attempts and\n"
    "                           last error kept\n"
    "      --rate N/s|m|h       a limit: at most N tasks handed out a\n"
    "                           second, minute or hour (a token bucket;\n"
    "                           a take finding none waits as on an empty\n"
    "                           tube); none lifts it. 1 to 1000000/s\n"
    "      --burst N            the bucket: up to N at once after a pause\n"
    "                           (default: 100 ms of tokens, at least 1)\n"
    "      --concurrency N      a limit: at most N tasks of the tube taken\n"
    "                           at once, by every worker; none lifts it\n"
    "      --group-concurrency N  every fair group of the tube: at most N\n"
    "                           of its tasks taken at once (sluice group\n"
    "                           set T G overrides it for one); none lifts\n"
    "      --group-rate N/s|m|h every fair group: at most N of its tasks\n"
    "                           handed out a second, minute or hour\n"
    "      --group-burst N      each group's bucket (default: 100 ms)\n"
    "      --force              delete: the tube's tasks too (else a tube\n"
    "                           with tasks is refused)\n"
    "      --json               print the settings as JSON (set, show), or\n"
    "                           {\"tube\":\"T\",\"deleted\":N} (delete)\n\n"
    "`move` moves TUBE, with its tasks, to another cluster of the map\n"
    "(docs/scaling.md): the map gives TUBE to CLUSTER and marks its\n"
    "clusters draining; each holds a batch of its ready, delayed and\n"
    "buried tasks, CLUSTER copies them (keys, attempts, last errors, run\n"
    "times, priorities, groups) and the source drops them, until it has\n"
    "none left; its taken tasks finish or expire there first, and a\n"
    "workflow under way there runs there first. The tube's settings and\n"
    "its groups' come along, and the keys of tasks completed at the\n"
    "source stay reserved at CLUSTER for their dedup window. Then the\n"
    "map names CLUSTER alone. Run it again after an interruption (a node\n"
    "or the mover killed): it resumes and copies nothing twice.\n"
    "      --batch N            tasks per round, 1 to 1000 (default 500)\n"
    "      --wait DUR           give up when taken tasks (or a workflow)\n"
    "                           have not ended at the source after DUR\n"
    "                           (default: wait)\n"
    "      --quiet              no progress on stderr\n";

static int
cmd_tube(struct cli *cli, int argc, char **argv)
{
	struct tube_args a;
	struct sluice_tube_conf now;
	struct sluice_limits lnow;
	struct sluice_group_info gnow;
	const char *sub, *tube, *why;
	bool limits, glimits, gshown;
	uint64_t deleted;
	int rc;

	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-') { /* the first operand: a move's own */
			if (strcmp(argv[i], "move") == 0)
				return cli_tube_move(cli, argc, argv);
			break;
		}
	memset(&a, 0, sizeof(a));
	if ((rc = parse_args(cli, argc, argv, &a)) != 0)
		return rc;
	if (argc - optind != 2)
		return cli_usage_error(cli, "set, show or delete, and a TUBE");
	sub = argv[optind];
	tube = argv[optind + 1];
	if (strcmp(sub, "set") != 0 && strcmp(sub, "show") != 0 &&
	    strcmp(sub, "delete") != 0)
		return cli_usage_error(
		    cli, "set, show or delete, not \"%s\"", sub);
	if ((why = operand_check(cli, sub, &a)) != NULL)
		return cli_usage_error(cli, "%s", why);
	limits = a.lim.set != 0 || a.lunset != 0;
	glimits = a.glim.set != 0 || a.glunset != 0;
	if (strcmp(sub, "set") == 0 && a.named == 0 && !limits && !glimits)
		return cli_usage_error(cli,
		    "set what? --ttr, --max-attempts, --backoff, --keep-done, "
		    "--lost-lease, --dead-letter, --rate, --concurrency or "
		    "--group-concurrency, --group-rate");
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if (strcmp(sub, "delete") == 0) {
		if ((rc = sluice_tube_delete(cli->c, tube, a.force, &deleted)))
			return cli_fail(cli, rc, "tube delete %s", tube);
		if (a.json)
			printf("{\"tube\":\"%s\",\"deleted\":%" PRIu64 "}\n",
			    tube, deleted);
		else
			printf("deleted tube %s (%" PRIu64 " task%s)\n", tube,
			    deleted, deleted == 1 ? "" : "s");
		return EXIT_OK;
	}
	/* The limits first: the server refuses them (a tube that does not
	 * exist, a value out of range) before any setting changes. */
	if (limits &&
	    (rc = sluice_tube_limit(cli->c, tube, &a.lim, a.lunset, &lnow))) {
		if (rc == SLUICE_EPROTO) { /* it refused the limits' flag */
			fprintf(stderr,
			    "sluice: tube set %s: the server does not know "
			    "flow limits (it is older than this sluice); "
			    "nothing was changed\n",
			    tube);
			return EXIT_ERR;
		}
		return cli_fail(cli, rc, "tube set %s", tube);
	}
	if (glimits &&
	    (rc = sluice_group_set(
	         cli->c, tube, NULL, &a.glim, a.glunset, NULL)) != 0)
		return cli_fail(cli, rc, "tube set %s: group limits", tube);
	rc = strcmp(sub, "set") == 0 && a.named != 0
	    ? sluice_tube_set(cli->c, tube, &a.set, a.unset, &now)
	    : sluice_tube_show(cli->c, tube, &now);
	if (rc != 0)
		return cli_fail(cli, rc, "tube %s %s", sub, tube);
	/* a server from before flow limits refuses the flag (EPROTO): it
	 * has none to show */
	if (!limits && (rc = sluice_tube_limits(cli->c, tube, &lnow)) != 0) {
		if (rc != SLUICE_EPROTO)
			return cli_fail(cli, rc, "tube %s %s", sub, tube);
		memset(&lnow, 0, sizeof(lnow));
	}
	/* a server from before group limits does not know the op */
	gshown = sluice_group_show(cli->c, tube, NULL, &gnow) == 0 &&
	    (gnow.every.set != 0 || gnow.overrides != 0);
	if (a.json) {
		print_conf_json(tube, &now, &lnow, gshown ? &gnow : NULL);
		return EXIT_OK;
	}
	print_conf(tube, &now, &lnow, false);
	if (gshown)
		print_group_limits(&gnow);
	return EXIT_OK;
}

static const char pause_usage[] = "usage: sluice pause TUBE DUR [--json]\n";
static const char pause_help[] =
    "\nHands out no task of TUBE for DUR; 0 resumes it now.\n\n"
    "      --json   print {\"until\":UNIX_MS} (0 when resumed)\n";

static int
cmd_pause(struct cli *cli, int argc, char **argv)
{
	bool json = false;
	uint64_t ms, until;
	char when[40];
	int rc;

	if ((rc = cli_simple_args(cli, argc, argv, 2, &json)) >= 0)
		return rc;
	if ((rc = cli_parse_ms(cli, "DUR", argv[optind + 1], 0, &ms)) != 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_pause(cli->c, argv[optind], ms, &until)) != 0)
		return cli_fail(cli, rc, "pause %s", argv[optind]);
	cli_fmt_time(when, sizeof(when), until);
	if (json)
		printf("{\"until\":%" PRIu64 "}\n", until);
	else if (until)
		printf("paused %s until %s\n", argv[optind], when);
	else
		printf("resumed %s\n", argv[optind]);
	return EXIT_OK;
}

CLI_COMMAND(tube, cmd_tube);

CLI_COMMAND(pause, cmd_pause);
