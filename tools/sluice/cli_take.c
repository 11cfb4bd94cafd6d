/* cli_take - `sluice take`: take tasks of one or more tubes to work on,
 * waiting up to -w for one; prints each (cli_print.c), or as shell
 * assignments with --sh (cli_vars.c). Exit 3 when nothing came before the
 * wait ended, with a note on stderr unless --quiet or --sh; --sh then
 * prints only the unset of every variable, so that an eval clears what a
 * previous task left. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "cli_vars.h"

static const char take_usage[] =
    "usage: sluice take [-t TUBE]... [--strict-order] [-w DUR] [-n N] "
    "[--no-detach] [-q] [--json]\n"
    "       sluice take [-t TUBE]... [--strict-order] [-w DUR] "
    "[--no-detach] --sh\n";
static const char take_help[] =
    "\nTakes tasks and prints them, with the lease that ack, release, fail,\n"
    "touch and bury need.\n\n"
    "The lease is DETACHED by default: the task stays taken after this\n"
    "command exits, until ack/release/fail/bury or until its ttr runs out\n"
    "(then it waits the server's retry backoff). With --no-detach the\n"
    "lease belongs to this command's connection, and the task goes back\n"
    "as soon as the command exits, as a lost lease (the backoff, the\n"
    "attempt counted): only useful to look, not to work. A take killed\n"
    "before its answer arrived takes nothing.\n\n"
    "  -t, --tube TUBE   a tube to take from (default \"default\"); repeat\n"
    "                    for several: the most urgent task across them\n"
    "                    (priority, then the earliest due)\n"
    "      --strict-order\n"
    "                    try the tubes in the order given instead: the first\n"
    "                    with a ready task gives it\n"
    "  -w, --wait DUR    wait up to DUR for a task (default 0: answer at "
    "once)\n"
    "  -n, --count N     take up to N tasks (default 1, at most 1000)\n"
    "      --detach      a detached lease (the default)\n"
    "      --no-detach   a lease bound to this command's connection\n"
    "      --json        print the task as one JSON object (with -n N\n"
    "                    above 1: {\"tasks\":[...]}); a payload that is\n"
    "                    not UTF-8 comes as \"payload_base64\" instead of\n"
    "                    \"payload\"\n"
    "  -q, --quiet       no note on stderr when there is nothing to take\n"
    "      --sh          print the task as shell assignments, for\n"
    "                    eval: the variables work sets for its CMD\n"
    "                    (SLUICE_TASK_ID, SLUICE_LEASE, SLUICE_TUBE,\n"
    "                    SLUICE_ATTEMPTS, SLUICE_PAYLOAD_SIZE, and up to\n"
    "                    64 KiB SLUICE_PAYLOAD, or SLUICE_PAYLOAD_BASE64\n"
    "                    when it is not UTF-8 text), after an unset of\n"
    "                    them all; with nothing taken, only the unset\n\n"
    "Exit status 3 when there was nothing to take before the wait ended\n"
    "(with a note on stderr, unless --quiet or --sh). A worker loop:\n\n"
    "  while vars=$(sluice take -t emails -w 30s --sh); do\n"
    "      eval \"$vars\"\n"
    "      ./send-email.sh \"$SLUICE_PAYLOAD\" &&\n"
    "          sluice ack \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\"\n"
    "  done\n";

/* "sluice: take: nothing to take from TUBE[, TUBE...][ within N ms]" */
static void
empty_note(const struct sluice_take_opts *o)
{
	fputs("sluice: take: nothing to take from ", stderr);
	for (size_t i = 0; i < o->ntubes; i++)
		fprintf(stderr, "%s%s", i > 0 ? ", " : "", o->tubes[i]);
	if (o->wait_ms > 0)
		fprintf(stderr, " within %" PRIu64 " ms", (uint64_t)o->wait_ms);
	fputc('\n', stderr);
}

static int
cmd_take(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		{ "wait", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'n' },
		{ "detach", no_argument, NULL, OPT_DETACH },
		{ "no-detach", no_argument, NULL, OPT_NO_DETACH },
		{ "sh", no_argument, NULL, OPT_SH },
		{ "quiet", no_argument, NULL, 'q' },
		{ "strict-order", no_argument, NULL, OPT_STRICT_ORDER },
		COMMON_OPTS,
	};
	const char *tubes[64];
	bool sh = false, quiet = false;
	struct sluice_take_opts o = { .tubes = tubes, .max = 1, .detach = 1 };
	struct cli_args a = { argc, argv, "t:w:n:qh", opts };
	struct sluice_task *t;
	uint64_t v = 0;
	size_t n;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		switch (ch) {
		case 't':
			if (o.ntubes == 64)
				return cli_usage_error(cli, "at most 64 tubes");
			tubes[o.ntubes++] = optarg;
			break;
		case 'w':
			if ((rc = cli_parse_ms(
			         cli, "-w", optarg, 0, &o.wait_ms)) != 0)
				return rc;
			break;
		case 'n':
			if ((rc = cli_parse_num(cli, "-n", optarg, 1,
			         SLUICE_TAKE_MAX, &v)) != 0)
				return rc;
			o.max = (uint32_t)v;
			break;
		case OPT_DETACH:
			o.detach = 1;
			break;
		case OPT_NO_DETACH:
			o.detach = 0;
			break;
		case OPT_SH:
			sh = true;
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_STRICT_ORDER:
			o.strict_order = 1;
			break;
		}
	}
	if (a.stop)
		return a.status;
	if (sh && (a.json || o.max > 1))
		return cli_usage_error(
		    cli, "--sh prints one task: no --json or -n with it");
	if (optind != argc)
		return cli_usage_error(cli, "unexpected \"%s\"", argv[optind]);
	if ((rc = cli_connect_routed(cli)) != 0)
		return rc;
	if (o.ntubes == 0)
		tubes[o.ntubes++] = SLUICE_DEFAULT_TUBE;
	rc = cli->c == NULL ? sluice_router_take(cli->r, &o, &t, &n)
	                    : sluice_take(cli->c, &o, &t, &n);
	if (rc != 0 && sh)
		cli_vars_print_sh(stdout, NULL); /* no task: nothing left set */
	if (rc == SLUICE_ETIMEDOUT &&
	    strncmp(cli->c == NULL ? sluice_router_errmsg(cli->r)
	                           : sluice_errmsg(cli->c),
	        "nothing to take", 15) == 0) {
		if (!quiet && !sh)
			empty_note(&o);
		return EXIT_EMPTY;
	}
	if (rc == SLUICE_ETIMEDOUT) {
		cli_fail(cli, rc, "take");
		return EXIT_EMPTY;
	}
	if (rc != 0)
		return cli_fail(cli, rc, "take");
	if (sh) {
		struct cli_vars v;

		if (cli_vars_of(&v, &t[0]) != 0) {
			sluice_task_free(t);
			cli_vars_print_sh(stdout, NULL);
			fprintf(stderr, "sluice: take: out of memory\n");
			return EXIT_ERR;
		}
		cli_vars_print_sh(stdout, &v);
		cli_vars_free(&v);
	} else if (a.json && o.max > 1) {
		/* one JSON value: its shape follows -n, not what came */
		fputs("{\"tasks\":[", stdout);
		for (size_t i = 0; i < n; i++) {
			if (i > 0)
				putchar(',');
			cli_print_task_json(stdout, &t[i]);
		}
		fputs("]}\n", stdout);
	} else {
		for (size_t i = 0; i < n; i++) {
			if (i > 0)
				putchar('\n');
			cli_print_task(stdout, &t[i], a.json);
		}
	}
	sluice_task_free(t);
	return EXIT_OK;
}

CLI_COMMAND(take, cmd_take);
