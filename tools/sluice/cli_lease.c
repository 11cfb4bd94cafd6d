/* cli_lease - the lease operations on a taken task: ack, release, fail,
 * touch and bury. They share their parsing, and differ by the options of
 * their row in lease_ops; ack of several tasks (ID:LEASE... or --lines)
 * goes to cli_batch.c, release -t TUBE --all releases every task of the
 * tube. Each prints what became of the task (cli_print_after). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"

static const char ack_usage[] =
    "usage: sluice ack ID (--lease L | --force) [--to TUBE] [--result TEXT] "
    "[--json]\n"
    "       sluice ack ID:LEASE... [--json]\n"
    "       sluice ack --lines [--json] < FILE\n";
static const char ack_help[] =
    "\nThe task is done: it is deleted (a recurring one is scheduled "
    "again),\nor kept as done when the server keeps finished tasks "
    "(--keep-done).\n"
    "Many tasks at once: ID:LEASE operands, or --lines with \"ID LEASE\" on\n"
    "each line of stdin; up to 1000 tasks go in one request (one commit),\n"
    "each acked or refused on its own: \"acked ID\" per task on stdout, the\n"
    "reason of each refused one on stderr (exit 1 when any was).\n\n"
    "      --lease L   the lease its take printed (needed: it fences off\n"
    "                  a worker whose lease ran out)\n"
    "      --force     without the lease: an operator's override, logged\n"
    "                  by the server\n"
    "      --to TUBE   move it, atomically, to TUBE as a ready task (the\n"
    "                  next stage of a pipeline)\n"
    "      --lines     ack the \"ID LEASE\" of each line of stdin\n"
    "      --result TEXT  a text (up to 65535 bytes) kept with the done\n"
    "                  task, and for the tasks put --after it, whose\n"
    "                  takes carry it\n"
    "      --json      print the task's state after: "
    "{\"id\":N,\"state\":...};\n"
    "                  many tasks: one array, {\"id\":N,\"acked\":true} or\n"
    "                  {\"id\":N,\"error\":\"...\",\"code\":N} per task\n";

static const char release_usage[] =
    "usage: sluice release ID (--lease L | --force) [--delay DUR | --front] "
    "[-p PRI] [--json]\n"
    "       sluice release -t TUBE --all [--json]\n";
static const char release_help[] =
    "\nPuts a taken task back: ready now, or after --delay.\n\n"
    "      --lease L       the lease its take printed\n"
    "      --force         without the lease (an operator's override)\n"
    "      --delay DUR     ready again only after DUR\n"
    "      --front         ready again at once at the place it had before\n"
    "                      the take (its original order among the tasks\n"
    "                      of its priority), not behind the tasks already\n"
    "                      due\n"
    "  -p, --priority N    give it a new priority\n"
    "  -t, --tube TUBE     with --all: the tube\n"
    "      --all           every taken task of the tube, ready again at\n"
    "                      once with its attempts (an operator's override\n"
    "                      of every lease, logged by the server); prints\n"
    "                      how many\n"
    "      --json          print the task's state after ({\"released\":N}\n"
    "                      with --all)\n";

static const char fail_usage[] =
    "usage: sluice fail ID (--lease L | --force) -e TEXT "
    "[--delay DUR | --fatal] [--json]\n";
static const char fail_help[] =
    "\nThe task failed: it is retried after a backoff (1s, doubling each\n"
    "attempt, at most 1h), or buried when it was taken max-attempts times.\n"
    "Prints when it runs again, or that it is buried.\n\n"
    "      --lease L       the lease its take printed\n"
    "      --force         without the lease (an operator's override)\n"
    "  -e, --error TEXT    why (kept as its last error, up to 1024 bytes)\n"
    "      --delay DUR     retry after DUR instead of the backoff\n"
    "      --fatal         no retry can mend it: buried at once, whatever\n"
    "                      the attempts\n"
    "      --json          print the task's state after\n";

static const char touch_usage[] =
    "usage: sluice touch ID (--lease L | --force) [--json]\n";
static const char touch_help[] =
    "\nExtends the lease by the task's ttr from now; prints the new "
    "deadline.\n\n"
    "      --lease L   the lease its take printed\n"
    "      --force     without the lease (an operator's override)\n"
    "      --json      print the task's state after\n";

static const char bury_usage[] =
    "usage: sluice bury ID (--lease L | --force) [-e TEXT] [--json]\n";
static const char bury_help[] =
    "\nParks a task: it stays buried until kicked. A taken task needs its\n"
    "lease; --force parks any task that is not buried yet, a ready or\n"
    "delayed one too (an operator's override, logged by the server).\n\n"
    "      --lease L       the lease its take printed\n"
    "      --force         without the lease\n"
    "  -e, --error TEXT    why (kept as its last error, up to 1024 bytes)\n"
    "      --json          print the task's state after\n";

/* ack, release, fail, touch and bury share their parsing; this is what
 * sets them apart. */
enum lease_verb { ACK, RELEASE, FAIL, TOUCH, BURY };

static const struct lease_op {
	const char *name;
	const char *done; /* what it printed: "acked 42, ..." */
	enum lease_verb verb;
	const char *shorts;
	bool to, delay, priority, error, all, fatal,
	    front; /* the options it has */
	bool needs_error;
} lease_ops[] = {
	{ "ack", "acked", ACK, "h", .to = true },
	{ "release", "released", RELEASE, "hp:t:", .delay = true,
	    .priority = true, .all = true, .front = true },
	{ "fail", "failed", FAIL, "he:", .delay = true, .error = true,
	    .fatal = true, .needs_error = true },
	{ "touch", "touched", TOUCH, "h" },
	{ "bury", "buried", BURY, "he:", .error = true },
};

/* sluice release -t TUBE --all */
static int
release_all(struct cli *cli, const char *tube, bool json)
{
	uint64_t n = 0;
	int rc;

	if ((rc = cli_connect(cli)) != 0)
		return rc;
	rc = sluice_release_all(cli->c, tube, &n);
	if (rc != 0)
		return cli_fail(cli, rc, "release every task of %s", tube);
	cli_print_count(json, "released", "released", n);
	return EXIT_OK;
}

static const struct lease_op *
find_lease_op(const char *name)
{
	size_t i = 0;

	while (strcmp(lease_ops[i].name, name) != 0)
		i++;
	return &lease_ops[i];
}

static int
cmd_lease_op(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		LEASE_OPT,
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "to", required_argument, NULL, OPT_TO },
		{ "delay", required_argument, NULL, OPT_DELAY },
		{ "priority", required_argument, NULL, 'p' },
		{ "error", required_argument, NULL, 'e' },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "result", required_argument, NULL, OPT_RESULT },
		{ "tube", required_argument, NULL, 't' },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "fatal", no_argument, NULL, OPT_FATAL },
		{ "front", no_argument, NULL, OPT_FRONT },
		COMMON_OPTS,
	};
	const struct lease_op *op = find_lease_op(cli->cmd);
	struct cli_args a = { argc, argv, op->shorts, opts };
	const char *to = NULL, *error = NULL, *result = NULL, *tube = NULL;
	bool has_lease = false, has_delay = false, force = false, lines = false;
	bool all = false, fatal = false, front = false;
	int64_t priority = -1;
	uint64_t id, lease = 0, delay = 0, v = 0;
	struct sluice_after after;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		bool ok = true;

		switch (ch) {
		case OPT_LEASE:
			if ((rc = cli_parse_num(cli, "--lease", optarg, 0,
			         UINT64_MAX, &lease)) != 0)
				return rc;
			has_lease = true;
			break;
		case OPT_FORCE:
			force = true;
			break;
		case OPT_TO:
			ok = op->to;
			to = optarg;
			break;
		case OPT_DELAY:
			ok = op->delay;
			if (ok &&
			    (rc = cli_parse_ms(
			         cli, "--delay", optarg, 0, &delay)) != 0)
				return rc;
			has_delay = true;
			break;
		case 'p':
			ok = op->priority;
			if (ok &&
			    (rc = cli_parse_num(
			         cli, "-p", optarg, 0, UINT32_MAX, &v)) != 0)
				return rc;
			priority = (int64_t)v;
			break;
		case 'e':
			ok = op->error;
			error = optarg;
			break;
		case OPT_LINES:
			ok = op->verb == ACK;
			lines = true;
			break;
		case OPT_RESULT:
			ok = op->verb == ACK;
			result = optarg;
			break;
		case 't':
			ok = op->all;
			tube = optarg;
			break;
		case OPT_ALL:
			ok = op->all;
			all = true;
			break;
		case OPT_FATAL:
			ok = op->fatal;
			fatal = true;
			break;
		case OPT_FRONT:
			ok = op->front;
			front = true;
			break;
		}
		if (!ok)
			return cli_usage_error(cli, "%s has no option %s",
			    op->name,
			    ch == OPT_TO           ? "--to"
			        : ch == OPT_DELAY  ? "--delay"
			        : ch == 'p'        ? "-p/--priority"
			        : ch == 'e'        ? "-e/--error"
			        : ch == OPT_RESULT ? "--result"
			        : ch == 't'        ? "-t/--tube"
			        : ch == OPT_ALL    ? "--all"
			        : ch == OPT_FATAL  ? "--fatal"
			        : ch == OPT_FRONT  ? "--front"
			                           : "--lines");
	}
	if (a.stop)
		return a.status;
	if (op->verb == ACK &&
	    (lines || (optind < argc && strchr(argv[optind], ':') != NULL))) {
		if (has_lease || force || to != NULL || result != NULL)
			return cli_usage_error(cli,
			    "ID:LEASE and --lines take no --lease, --force, "
			    "--to "
			    "or --result (ack those one at a time)");
		if (lines && optind != argc)
			return cli_usage_error(
			    cli, "--lines reads stdin: no ID:LEASE with it");
		return lines ? cli_ack_lines(cli, a.json)
		             : cli_batch_operands(cli, argv + optind,
		                   (size_t)(argc - optind), true, a.json);
	}
	if (all || tube != NULL) {
		if (!all || tube == NULL)
			return cli_usage_error(cli,
			    "-t TUBE and --all go together: every taken "
			    "task of TUBE");
		if (optind != argc || has_lease || force || has_delay ||
		    priority >= 0 || front)
			return cli_usage_error(cli,
			    "release -t TUBE --all takes no task ID, lease, "
			    "delay or priority");
		return release_all(cli, tube, a.json);
	}
	if (fatal && has_delay)
		return cli_usage_error(
		    cli, "--fatal and --delay exclude each other");
	if (front && has_delay)
		return cli_usage_error(cli,
		    "--front and --delay exclude each other (--front puts "
		    "the task back at its place at once)");
	if (optind != argc - 1)
		return cli_usage_error(cli, "one task ID is needed");
	if ((rc = cli_parse_id(cli, argv[optind], &id)) != 0)
		return rc;
	if (op->needs_error && error == NULL)
		return cli_usage_error(cli, "-e TEXT is needed");
	if (has_lease == force)
		return cli_usage_error(cli,
		    has_lease ? "--lease and --force exclude each other"
		              : "--lease L (the lease its take printed) or "
		                "--force is needed");
	if (force)
		lease = SLUICE_FORCE;
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	switch (op->verb) {
	case ACK: {
		struct sluice_ack_opts o = { to, result };

		rc = sluice_ack_opts(cli->c, id, lease, &o, &after);
		break;
	}
	case RELEASE: {
		struct sluice_release_opts o = { delay, priority, front };

		rc = sluice_release_opts(cli->c, id, lease, &o, &after);
		break;
	}
	case FAIL:
		rc = fatal ? sluice_fail_fatal(cli->c, id, lease, error, &after)
		           : sluice_fail(cli->c, id, lease, error,
		                 has_delay ? (int64_t)delay : -1, &after);
		break;
	case TOUCH:
		rc = sluice_touch(cli->c, id, lease, &after);
		break;
	case BURY:
		rc = sluice_bury_error(cli->c, id, lease, error, &after);
		break;
	}
	if (rc != 0)
		return cli_fail(cli, rc, "%s %" PRIu64, op->name, id);
	cli_print_after(stdout, op->done, &after, to, a.json);
	return EXIT_OK;
}

CLI_COMMAND(ack, cmd_lease_op);

CLI_COMMAND(release, cmd_lease_op);

CLI_COMMAND(fail, cmd_lease_op);

CLI_COMMAND(touch, cmd_lease_op);

CLI_COMMAND(bury, cmd_lease_op);
