/* main - the command-line client of the sluice job queue server.
 *
 *   sluice [-s URL[,URL...]] [--timeout DUR] COMMAND [options]
 *
 * Reads the options every command shares (the servers, the token, TLS,
 * --timeout), finds the command typed in the table below and runs it.
 * Each command lives in the file of its family, its help beside its code
 * (cli_put.c, cli_take.c, cli_lease.c, cli_task.c, cli_list.c,
 * cli_stats.c, cli_tube.c, cli_node.c, cli_token.c, cli_work.c): it parses
 * its options (cli_next_opt), makes one or a few libsluice calls and
 * prints the result (cli_print.c) as text or, with --json, as JSON. Exit
 * codes: 0 ok, 1 error, 2 usage, 3 nothing to take before the timeout. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "util/dur.h"
#include "util/tokens.h"

static const char main_usage[] =
    "usage: sluice [-s URL[,URL...]] [--map] [--cluster NAME] [--timeout DUR] "
    "COMMAND [options]\n";

static const char main_help[] =
    "\n"
    "The command-line client of the sluice job queue server.\n"
    "\n"
    "  -s, --server URL[,URL...]  the servers: a leader and its followers,\n"
    "                             tried in order (default $SLUICE_URL, else\n"
    "                             " SLUICE_DEFAULT_URL "); sluiced's --listen\n"
    "                             URLs, tcp://, tls+tcp:// or ipc://, not the\n"
    "                             HTTP API's http://; or etcd://HOST:PORT\n"
    "                             [,...], etcd's, to route by the cluster\n"
    "                             map (put, take, stats, map)\n"
    "      --map                  route by the cluster map the -s node\n"
    "                             serves (any node of any cluster)\n"
    "      --cluster NAME         with a map: the cluster that commands\n"
    "                             other than put, take, stats and map ask\n"
    "                             (take prints each task's cluster)\n"
    "      --token-file FILE      send the token in FILE's first line to a\n"
    "                             server started with --auth (default\n"
    "                             $SLUICE_TOKEN); never on the command line,\n"
    "                             where ps would show it\n"
    "      --timeout DUR          wait this long to connect, and for each\n"
    "                             reply (default 2s to connect, 30s for a\n"
    "                             reply; 0: replies may take any time); a\n"
    "                             refused connection fails within 250ms\n"
    "      --tls-ca FILE          for tls+tcp:// URLs: the CA (PEM) that\n"
    "                             signed the servers' certificates\n"
    "                             (default $SLUICE_TLS_CA)\n"
    "      --tls-cert FILE        this client's certificate (PEM), for\n"
    "                             servers that require one\n"
    "                             (default $SLUICE_TLS_CERT)\n"
    "      --tls-key FILE         its private key (default $SLUICE_TLS_KEY)\n"
    "  -h, --help                 this help; `sluice COMMAND --help` for "
    "one\n"
    "                             command's options\n"
    "  -V, --version              print the version\n"
    "\n"
    "Tasks:\n"
    "  put       put a task (or one per line of stdin)\n"
    "  take      take tasks to work on\n"
    "  ack       a taken task is done\n"
    "  release   put a taken task back, now or later\n"
    "  fail      a taken task failed: retry it later, or bury it\n"
    "  touch     extend a taken task's lease\n"
    "  bury      park a taken task until it is kicked\n"
    "  update    change a waiting task in place (priority, time, ttr, ...)\n"
    "  kick      move buried tasks back to ready (those of one error too)\n"
    "  delete    delete a task (by id or key), a tube's tasks by state and\n"
    "            age, or every task of a tube\n"
    "  peek      show a task without taking it\n"
    "  wait      wait for a task to end: its result, or how it failed\n"
    "  cancel    cancel tasks (a taken one when its lease ends)\n"
    "  work      run a command for each task of a tube\n"
    "Admin:\n"
    "  stats     counts per tube and state, log and replication state\n"
    "  list      a tube's tasks, by state and order\n"
    "  groups    a tube's fair groups: ready, taken, oldest ready\n"
    "  group     one fair group's limits; pause or resume it\n"
    "  errors    a tube's tasks counted by last error\n"
    "  rates     events per second lately: puts, takes, acks, fails, ...\n"
    "  pause     stop handing out a tube's tasks for a while\n"
    "  tube      set or show a tube's own settings; delete a tube\n"
    "  schedule  cron schedules that put tasks: set, list, show, pause,\n"
    "            resume, delete\n"
    "  batch     a batch's counts, callbacks, close and cancel: show, set,\n"
    "            close, cancel\n"
    "  snapshot  write a snapshot now\n"
    "  promote   make the follower a leader\n"
    "  follow    make the node follow a leader\n"
    "  token     make a new token for sluiced --auth\n"
    "Automatic failover (sluiced --etcd):\n"
    "  cluster     the cluster's members as the node sees them\n"
    "  switchover  hand the leadership to another member\n"
    "Several clusters (docs/scaling.md):\n"
    "  map         show or change the cluster map (which cluster owns\n"
    "              which tubes)\n"
    "\n"
    "DUR is a number with a unit, ms, s, m, h or d: 500ms, 2s, 1.5m, 1h,\n"
    "30d; a bare number other than 0 is refused (30s or 30ms?).\n"
    "`sluice help COMMAND` (or `sluice COMMAND --help`) shows a command's\n"
    "options, and for put, take, work and most others examples: what they\n"
    "print from an empty server. `man sluice` has this help and every\n"
    "command's in one page (`man sluiced`, `man sluice-log` the others';\n"
    "`make install` installs them).\n"
    "\n"
    "Output, the same for every command:\n"
    "  On success a command prints its result on standard output: put the\n"
    "  new task's id alone (for scripts), take and peek the task, stats,\n"
    "  list and errors a table, and every other command one line saying\n"
    "  what it did, the verb first (\"acked 12\", \"released 12, ready\",\n"
    "  \"kicked 3 tasks\"). With --json (every command but work) it prints\n"
    "  exactly one JSON value instead (put --lines: one array, an element\n"
    "  per line as it is stored). Times for people are ISO 8601\n"
    "  in local time with their zone (2024-06-01T12:00:00.000+02:00); in\n"
    "  JSON they are unix milliseconds. Errors and notes go to standard\n"
    "  error, one line each: \"sluice: COMMAND: why\".\n"
    "Exit status: 0 ok, 1 error, 2 usage, 3 nothing to take before the "
    "timeout\n(wait: still running when its timeout passed).\n"
    "\n"
    "Python and Node.js clients: clients/ (docs/clients.md).\n";

static const struct cli_command *const commands[] = {
	&cli_cmd_put,
	&cli_cmd_take,
	&cli_cmd_ack,
	&cli_cmd_release,
	&cli_cmd_fail,
	&cli_cmd_touch,
	&cli_cmd_bury,
	&cli_cmd_update,
	&cli_cmd_kick,
	&cli_cmd_delete,
	&cli_cmd_peek,
	&cli_cmd_wait,
	&cli_cmd_cancel,
	&cli_cmd_stats,
	&cli_cmd_list,
	&cli_cmd_groups,
	&cli_cmd_group,
	&cli_cmd_errors,
	&cli_cmd_rates,
	&cli_cmd_pause,
	&cli_cmd_tube,
	&cli_cmd_schedule,
	&cli_cmd_batch,
	&cli_cmd_snapshot,
	&cli_cmd_promote,
	&cli_cmd_follow,
	&cli_cmd_cluster,
	&cli_cmd_switchover,
	&cli_cmd_map,
	&cli_cmd_work,
	&cli_cmd_token,
};

static int main_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int
main_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sluice: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'sluice --help'.\n", stderr);
	return EXIT_USAGE;
}

static const struct cli_command *
find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i]->name) == 0)
			return commands[i];
	return NULL;
}

/* An unknown command's error: with the closest command's name when it is
 * at most 2 edits away (and fewer than the name's own length). */
static int
unknown_command(const char *what, const char *name)
{
	const char *best = NULL;
	unsigned best_d = 3;

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		unsigned d = cli_edit_distance(name, commands[i]->name);

		if (d < best_d && d < strlen(name)) {
			best = commands[i]->name;
			best_d = d;
		}
	}
	if (best != NULL)
		return main_usage_error("%sunknown command \"%s\"; did you "
		                        "mean \"%s\"?",
		    what, name, best);
	return main_usage_error("%sunknown command \"%s\"", what, name);
}

/* `sluice help` and `sluice help COMMAND`: the same as --help. */
static int
cmd_help(int argc, char **argv)
{
	const struct cli_command *cmd;

	if (argc == 1) {
		printf("%s%s", main_usage, main_help);
		return EXIT_OK;
	}
	if (argc > 2)
		return main_usage_error("help: one COMMAND at most");
	if ((cmd = find_command(argv[1])) == NULL)
		return unknown_command("help: ", argv[1]);
	cli_print_help(cmd);
	return EXIT_OK;
}

/* The first line of `path`, its blanks cut, or NULL (said why). */
static const char *
read_token(const char *path)
{
	static char token[TOKENS_TOKEN_MAX + 2];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "sluice: --token-file %s: %s\n", path,
		    strerror(errno));
		return NULL;
	}
	if (fgets(token, sizeof(token), f) == NULL)
		token[0] = '\0';
	fclose(f);
	n = strcspn(token, " \t\r\n");
	if (n == 0 || n > TOKENS_TOKEN_MAX) {
		fprintf(stderr,
		    "sluice: --token-file %s: its first line is not a token "
		    "(1-%d bytes)\n",
		    path, TOKENS_TOKEN_MAX);
		return NULL;
	}
	token[n] = '\0';
	return token;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "map", no_argument, NULL, OPT_MAP },
		{ "cluster", required_argument, NULL, OPT_CLUSTER },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "tls-ca", required_argument, NULL, OPT_TLS_CA },
		{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
		{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
		{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		END_OPT,
	};
	struct cli cli = { .timeout_ms = -1, .cmd = "sluice" };
	static char prog[64] = "sluice";
	uint64_t ms;
	int ch, rc;

	cli.urls = getenv("SLUICE_URL");
	cli.tls_ca = getenv("SLUICE_TLS_CA");
	cli.tls_cert = getenv("SLUICE_TLS_CERT");
	cli.tls_key = getenv("SLUICE_TLS_KEY");
	cli.token = getenv("SLUICE_TOKEN");
	if (cli.token != NULL && cli.token[0] == '\0')
		cli.token = NULL;
	argv[0] = prog; /* getopt_long names argv[0] in its complaints */
	/* "+": stop at the command; its options are its own */
	while ((ch = getopt_long(argc, argv, "+s:hV", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			cli.urls = optarg;
			break;
		case OPT_MAP:
			cli.map = true;
			break;
		case OPT_CLUSTER:
			cli.cluster = optarg;
			break;
		case OPT_TOKEN_FILE:
			if ((cli.token = read_token(optarg)) == NULL)
				return EXIT_ERR;
			break;
		case OPT_TIMEOUT:
			if ((rc = dur_parse(optarg, &ms)) == DUR_EBARE) {
				char hint[128];

				dur_hint(hint, sizeof(hint), optarg);
				return main_usage_error("--timeout %s: a "
				                        "duration needs a "
				                        "unit: %s",
				    optarg, hint);
			}
			if (rc != 0 || ms > INT32_MAX)
				return main_usage_error(
				    "--timeout takes a duration: " DUR_SYNTAX
				    "; not \"%s\"",
				    optarg);
			cli.timeout_ms = (int)ms;
			break;
		case OPT_TLS_CA:
			cli.tls_ca = optarg;
			break;
		case OPT_TLS_CERT:
			cli.tls_cert = optarg;
			break;
		case OPT_TLS_KEY:
			cli.tls_key = optarg;
			break;
		case 'h':
			printf("%s%s", main_usage, main_help);
			return EXIT_OK;
		case 'V':
			printf("sluice %d.%d.%d\n", SLUICE_VERSION_MAJOR,
			    SLUICE_VERSION_MINOR, SLUICE_VERSION_PATCH);
			return EXIT_OK;
		default:
			fputs("Try 'sluice --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "%sTry 'sluice --help'.\n", main_usage);
		return EXIT_USAGE;
	}
	if (strcmp(argv[optind], "help") == 0)
		return cmd_help(argc - optind, argv + optind);
	if ((cli.command = find_command(argv[optind])) == NULL)
		return unknown_command("", argv[optind]);
	cli.cmd = cli.command->name;
	argv += optind;
	argc -= optind;
	snprintf(prog, sizeof(prog), "sluice %s", cli.cmd);
	argv[0] = prog;
	optind = 0; /* restart getopt: the command's options follow its name */
	rc = cli.command->run(&cli, argc, argv);
	if (cli.r != NULL)
		sluice_router_close(cli.r); /* cli.c was one of its own */
	else
		sluice_close(cli.c);
	return rc;
}
