/* sluice - the command-line client of the sluice job queue server.
 *
 *   sluice [-s URL[,URL...]] [--timeout DUR] COMMAND [options]
 *
 * One function per command: parse its options (next_opt(), getopt_long
 * over the command's own table, handles the --json, --help and bad
 * options they all share), make one or a few libsluice calls, print the
 * result (cli_print.c) as text or, with --json, as JSON. `work` lives in
 * cli_work.c. Exit codes: 0 ok, 1 error, 2 usage, 3 nothing to take
 * before the timeout. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_util.h"

/* Long-only options, shared by the commands' tables. */
enum {
	OPT_JSON = 256,
	OPT_DELAY,
	OPT_AT,
	OPT_TTR,
	OPT_MAX_ATTEMPTS,
	OPT_KEY,
	OPT_REPLACE,
	OPT_EVERY,
	OPT_LINES,
	OPT_DETACH,
	OPT_NO_DETACH,
	OPT_LEASE,
	OPT_TO,
	OPT_ID,
	OPT_ALL,
	OPT_READY,
	OPT_DELAYED,
	OPT_BURIED,
	OPT_STATE,
	OPT_ORDER,
	OPT_LIMIT,
	OPT_PAYLOADS,
	OPT_TIMEOUT,
	OPT_HELP = 'h',
};

#define HELP_OPT                                                               \
	{                                                                      \
		"help", no_argument, NULL, OPT_HELP                            \
	}
#define JSON_OPT                                                               \
	{                                                                      \
		"json", no_argument, NULL, OPT_JSON                            \
	}
#define TUBE_OPT                                                               \
	{                                                                      \
		"tube", required_argument, NULL, 't'                           \
	}
#define LEASE_OPT                                                              \
	{                                                                      \
		"lease", required_argument, NULL, OPT_LEASE                    \
	}
#define END_OPT                                                                \
	{                                                                      \
		NULL, 0, NULL, 0                                               \
	}

/* What ends every command's table. */
#define COMMON_OPTS JSON_OPT, HELP_OPT, END_OPT

/* ---- help texts ------------------------------------------------------- */

static const char main_usage[] =
    "usage: sluice [-s URL[,URL...]] [--timeout DUR] COMMAND [options]\n";

static const char main_help[] =
    "\n"
    "The command-line client of the sluice job queue server.\n"
    "\n"
    "  -s, --server URL[,URL...]  the servers: a leader and its followers,\n"
    "                             tried in order (default $SLUICE_URL, else\n"
    "                             " SLUICE_DEFAULT_URL ")\n"
    "      --timeout DUR          wait this long for each reply (default "
    "30s)\n"
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
    "  kick      move buried tasks back to ready\n"
    "  delete    delete a task (by id or key), or every task of a tube\n"
    "  peek      show a task without taking it\n"
    "  work      run a command for each task of a tube\n"
    "Admin:\n"
    "  stats     counts per tube and state, log and replication state\n"
    "  list      a tube's tasks, by state and order\n"
    "  errors    a tube's tasks counted by last error\n"
    "  pause     stop handing out a tube's tasks for a while\n"
    "  snapshot  write a snapshot now\n"
    "  promote   make the follower a leader\n"
    "  follow    make the node follow a leader\n"
    "\n"
    "DUR is milliseconds, or a number with ms, s, m or h: 500, 2s, 1.5m, "
    "1h.\n"
    "Commands that print data take --json.\n"
    "Exit status: 0 ok, 1 error, 2 usage, 3 nothing to take before the "
    "timeout.\n";

struct command {
	const char *name;
	int (*run)(struct cli *cli, int argc, char **argv);
	const char *usage; /* one or more "usage:" lines */
	const char *help;  /* the options, after the usage */
};

static const struct command *cur_cmd;

/* ---- shared helpers -------------------------------------------------------
 */

int
cli_connect(struct cli *cli)
{
	int rc;

	if (cli->c != NULL)
		return 0;
	if ((rc = sluice_open(cli->urls, &cli->c)) != 0) {
		fprintf(stderr,
		    "sluice: bad server list \"%s\": %s (expected "
		    "URL[,URL...], each like tcp://HOST:PORT)\n",
		    cli->urls ? cli->urls : "", sluice_strerror(rc));
		return EXIT_ERR;
	}
	if (cli->timeout_ms >= 0)
		sluice_set_timeout(cli->c, cli->timeout_ms);
	return 0;
}

int
cli_fail(struct cli *cli, int rc, const char *fmt, ...)
{
	const char *detail = cli->c ? sluice_errmsg(cli->c) : "";
	const char *name = sluice_strerror(rc);
	va_list ap;

	fputs("sluice: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (detail[0] == '\0' || strcmp(detail, name) == 0)
		fprintf(stderr, ": %s\n", name);
	else if (strncmp(detail, name, strlen(name)) == 0)
		fprintf(stderr, ": %s\n", detail); /* already says it */
	else
		fprintf(stderr, ": %s (%s)\n", name, detail);
	return EXIT_ERR;
}

int
cli_usage_error(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sluice: %s: ", cli->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (cur_cmd != NULL)
		fputs(cur_cmd->usage, stderr);
	fprintf(stderr, "Try 'sluice %s --help'.\n", cli->cmd);
	return EXIT_USAGE;
}

int
cli_help(void)
{
	printf("%s%s", cur_cmd->usage, cur_cmd->help);
	return EXIT_OK;
}

int
cli_bad_option(struct cli *cli)
{
	fputs(cur_cmd->usage, stderr);
	fprintf(stderr, "Try 'sluice %s --help'.\n", cli->cmd);
	return EXIT_USAGE;
}

/* A command's arguments, read with getopt_long over its table. */
struct args {
	int argc;
	char **argv;
	const char *shorts;         /* getopt_long's optstring */
	const struct option *longs; /* the command's table */
	bool json;                  /* --json was given */
	bool stop;                  /* the command is to return `status` */
	int status;
};

/* The next of the command's own options, for its switch; -1 when there
 * are no more. Handles what every command's options share: --json sets
 * `a->json`; --help prints the help, and an option the command does not
 * have the usage, and both set `a->stop`. */
static int
next_opt(struct cli *cli, struct args *a)
{
	int ch;

	for (;;) {
		ch = getopt_long(a->argc, a->argv, a->shorts, a->longs, NULL);
		if (ch == OPT_JSON) {
			a->json = true;
			continue;
		}
		if (ch == OPT_HELP || ch == '?') {
			a->status =
			    ch == OPT_HELP ? cli_help() : cli_bad_option(cli);
			a->stop = true;
			return -1;
		}
		return ch;
	}
}

/* After the options of a command that takes no operand: the usage error
 * for one, or else connects. */
static int
no_operand_connect(struct cli *cli, int argc, char **argv)
{
	if (optind != argc)
		return cli_usage_error(cli, "unexpected \"%s\"", argv[optind]);
	return cli_connect(cli);
}

/* A result that is one number: {"KEY":N} with --json, else "TEXT N". */
static void
print_number(bool json, const char *key, const char *text, uint64_t v)
{
	if (json)
		printf("{\"%s\":%" PRIu64 "}\n", key, v);
	else
		printf("%s %" PRIu64 "\n", text, v);
}

/* What put prints of a task it put: {"id":N,"created":BOOL} with --json,
 * else the id. */
static void
print_put(bool json, uint64_t id, bool created)
{
	if (json)
		printf("{\"id\":%" PRIu64 ",\"created\":%s}\n", id,
		    created ? "true" : "false");
	else
		printf("%" PRIu64 "\n", id);
}

static int
parse_id(struct cli *cli, const char *s, uint64_t *id)
{
	if (cli_parse_uint(s, UINT64_MAX, id) != 0 || *id == 0)
		return cli_usage_error(cli, "\"%s\" is not a task id", s);
	return 0;
}

static int
parse_u64(struct cli *cli, const char *opt, const char *s, uint64_t max,
    uint64_t *out)
{
	if (cli_parse_uint(s, max, out) != 0)
		return cli_usage_error(cli,
		    "%s: \"%s\" is not a whole number (0 to %" PRIu64 ")", opt,
		    s, max);
	return 0;
}

static int
parse_dur(struct cli *cli, const char *opt, const char *s, uint64_t *ms)
{
	if (cli_parse_dur(s, ms) != 0)
		return cli_usage_error(cli,
		    "%s: \"%s\" is not a duration (ms, or a number with ms, s, "
		    "m or h)",
		    opt, s);
	return 0;
}

/* The lease given with --lease, or the task's current one (peek). */
static int
find_lease(struct cli *cli, uint64_t id, bool given, uint64_t *lease)
{
	struct sluice_task *t;
	int rc;

	if (given)
		return 0;
	if ((rc = sluice_peek(cli->c, id, &t)) != 0)
		return cli_fail(cli, rc, "%s %" PRIu64, cli->cmd, id);
	if (t->state != SLUICE_TAKEN) {
		fprintf(stderr,
		    "sluice: %s %" PRIu64 ": the task is %s, not "
		    "taken\n",
		    cli->cmd, id, sluice_state_name(t->state));
		sluice_task_free(t);
		return EXIT_ERR;
	}
	*lease = t->lease;
	sluice_task_free(t);
	return 0;
}

/* ---- put ------------------------------------------------------------------
 */

enum {
	LINES_BATCH = 100,     /* lines per batch put */
	LINES_BYTES = 4 << 20, /* bytes per batch put, at most */
};

struct line_reader {
	char *buf;
	size_t len, cap;
	bool eof;
	unsigned long lineno;
};

/* Reads more of stdin; with `block` false only when some is ready. */
static int
lines_fill(struct line_reader *lr, bool block)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	ssize_t n;

	if (lr->eof)
		return 0;
	if (!block && poll(&p, 1, 0) <= 0)
		return 0;
	if (lr->cap - lr->len < 65536) {
		size_t cap = lr->cap ? lr->cap * 2 : 131072;
		char *b = realloc(lr->buf, cap);

		if (b == NULL)
			return -ENOMEM;
		lr->buf = b;
		lr->cap = cap;
	}
	do
		n = read(STDIN_FILENO, lr->buf + lr->len, lr->cap - lr->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		lr->eof = true;
	lr->len += (size_t)n;
	return 0;
}

/* Puts the tasks of `items` and prints their ids in order; counts them
 * in *accepted. Returns 0; SLUICE_ENOSPC when the log refused a line for
 * want of room (the caller stops: every later line would be refused). */
static int
put_lines_batch(struct cli *cli, struct sluice_batch_item *items, size_t n,
    const unsigned long *lineno, bool json, int *status,
    unsigned long *accepted)
{
	int rc = sluice_put_batch(cli->c, items, n);
	bool full = false;

	if (rc != 0)
		return cli_fail(
		    cli, rc, "put: lines %lu-%lu", lineno[0], lineno[n - 1]);
	for (size_t i = 0; i < n; i++) {
		if (items[i].rc != 0) {
			fprintf(stderr, "sluice: put: line %lu: %s\n",
			    lineno[i], sluice_strerror(items[i].rc));
			*status = EXIT_ERR;
			full = full || items[i].rc == SLUICE_ENOSPC;
		} else {
			print_put(json, items[i].id, items[i].created);
			(*accepted)++;
		}
	}
	fflush(stdout);
	return full ? SLUICE_ENOSPC : 0;
}

/* The next newline at or after `off`, or NULL. */
static char *
lines_next(const struct line_reader *lr, size_t off)
{
	return lr->len > off ? memchr(lr->buf + off, '\n', lr->len - off)
	                     : NULL;
}

/* --lines: one task per line of stdin. A batch holds the lines that are
 * already there (up to LINES_BATCH), so a slow producer gets each line put
 * as it comes and a fast one gets big batches. Lines are kept as offsets
 * while reading, since reading may move the buffer. */
static int
put_lines(struct cli *cli, const struct sluice_put_opts *o, bool json)
{
	struct line_reader lr = { 0 };
	struct sluice_batch_item items[LINES_BATCH];
	unsigned long lineno[LINES_BATCH];
	size_t start[LINES_BATCH];
	unsigned long accepted = 0;
	int status = EXIT_OK, rc = 0;

	for (;;) {
		size_t n = 0, off = 0, bytes = 0;

		/* gather complete lines: block for the first, not after */
		while (n < LINES_BATCH && bytes < LINES_BYTES) {
			char *nl = lines_next(&lr, off);
			size_t end;

			if (nl == NULL && !lr.eof) {
				if ((rc = lines_fill(&lr, n == 0)) != 0)
					break;
				if (lines_next(&lr, off) == NULL && !lr.eof &&
				    n > 0)
					break; /* nothing more ready now */
				continue;
			}
			end = nl ? (size_t)(nl - lr.buf) : lr.len;
			if (nl == NULL && end == off)
				break; /* eof */
			lr.lineno++;
			if (end > off && lr.buf[end - 1] == '\r')
				end--;
			if (end > off) {
				items[n].opts = *o;
				start[n] = off;
				items[n].len = end - off;
				lineno[n] = lr.lineno;
				bytes += end - off;
				n++;
			}
			off = nl ? (size_t)(nl - lr.buf) + 1 : lr.len;
		}
		if (rc != 0) {
			fprintf(stderr, "sluice: put: reading stdin: %s\n",
			    strerror(-rc));
			status = EXIT_ERR;
			break;
		}
		for (size_t i = 0; i < n; i++)
			items[i].payload = lr.buf + start[i];
		if (n > 0)
			rc = put_lines_batch(
			    cli, items, n, lineno, json, &status, &accepted);
		if (rc == SLUICE_ENOSPC) {
			fprintf(stderr,
			    "sluice: put: the log is full: stopped after line "
			    "%lu; %lu lines accepted\n",
			    lineno[n - 1], accepted);
			status = EXIT_ERR;
			break;
		}
		if (rc != 0) {
			status = EXIT_ERR;
			break;
		}
		if (off > 0) {
			memmove(lr.buf, lr.buf + off, lr.len - off);
			lr.len -= off;
		}
		if (lr.eof && lr.len == 0)
			break;
	}
	free(lr.buf);
	return status;
}

static const char put_usage[] = "usage: sluice put [options] PAYLOAD\n"
                                "       sluice put [options] --lines < FILE\n";
static const char put_help[] =
    "\nPuts a task into a tube and prints its id.\n\n"
    "  -t, --tube TUBE       the tube (default \"default\")\n"
    "  -p, --priority N      0 is the most urgent (default 1024)\n"
    "      --delay DUR       ready only after DUR\n"
    "      --at UNIX_MS      ready only at this time (unix milliseconds)\n"
    "      --ttr DUR         how long a taker may hold it (default: the\n"
    "                        server's, 60s)\n"
    "      --max-attempts N  bury it when it was taken N times (default 0:\n"
    "                        no limit)\n"
    "      --key KEY         while a task with this key lives (or for the\n"
    "                        server's dedup window after), putting it again\n"
    "                        creates nothing and prints the existing id\n"
    "      --replace         with --key: update the live task instead\n"
    "      --every DUR       recurring: each ack schedules it again DUR\n"
    "                        after its run_at\n"
    "      --lines           one task per line of stdin (empty lines are\n"
    "                        skipped), sent in batches; prints one id per\n"
    "                        line as each batch is stored; stops at the\n"
    "                        first batch a full log refuses, says how many\n"
    "                        lines were accepted and exits 1\n"
    "      --json            print {\"id\":N,\"created\":true}\n";

static int
cmd_put(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		{ "priority", required_argument, NULL, 'p' },
		{ "delay", required_argument, NULL, OPT_DELAY },
		{ "at", required_argument, NULL, OPT_AT },
		{ "ttr", required_argument, NULL, OPT_TTR },
		{ "max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "replace", no_argument, NULL, OPT_REPLACE },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "lines", no_argument, NULL, OPT_LINES },
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "t:p:h", opts };
	struct sluice_put_opts o;
	bool lines = false, delay = false;
	uint64_t v, id;
	int ch, rc, created;

	sluice_put_opts_init(&o);
	while ((ch = next_opt(cli, &a)) != -1) {
		switch (ch) {
		case 't':
			o.tube = optarg;
			break;
		case 'p':
			if ((rc = parse_u64(
			         cli, "-p", optarg, UINT32_MAX, &v)) != 0)
				return rc;
			o.priority = (uint32_t)v;
			break;
		case OPT_DELAY:
			if ((rc = parse_dur(
			         cli, "--delay", optarg, &o.delay_ms)) != 0)
				return rc;
			delay = true;
			break;
		case OPT_AT:
			if ((rc = parse_u64(cli, "--at", optarg, UINT64_MAX,
			         &o.run_at)) != 0)
				return rc;
			if (o.run_at == 0)
				return cli_usage_error(
				    cli, "--at: 0 is not a time");
			break;
		case OPT_TTR:
			if ((rc = parse_dur(cli, "--ttr", optarg, &o.ttr_ms)) !=
			    0)
				return rc;
			break;
		case OPT_MAX_ATTEMPTS:
			if ((rc = parse_u64(cli, "--max-attempts", optarg,
			         UINT32_MAX, &v)) != 0)
				return rc;
			o.max_attempts = (uint32_t)v;
			break;
		case OPT_KEY:
			o.key = optarg;
			break;
		case OPT_REPLACE:
			o.replace = 1;
			break;
		case OPT_EVERY:
			if ((rc = parse_dur(
			         cli, "--every", optarg, &o.period_ms)) != 0)
				return rc;
			break;
		case OPT_LINES:
			lines = true;
			break;
		}
	}
	if (a.stop)
		return a.status;
	if (delay && o.run_at)
		return cli_usage_error(
		    cli, "--delay and --at exclude each other");
	if (o.replace && o.key == NULL)
		return cli_usage_error(cli, "--replace needs --key");
	if (lines && o.key)
		return cli_usage_error(cli,
		    "--key with --lines would give every line the same key");
	if (lines && optind != argc)
		return cli_usage_error(
		    cli, "--lines takes no PAYLOAD argument");
	if (!lines && optind != argc - 1)
		return cli_usage_error(cli,
		    optind == argc ? "a PAYLOAD (or --lines) is needed"
		                   : "one PAYLOAD only (quote it)");
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if (lines)
		return put_lines(cli, &o, a.json);
	if ((rc = sluice_put(cli->c, &o, argv[optind], strlen(argv[optind]),
	         &id, &created)) != 0)
		return cli_fail(cli, rc, "put");
	print_put(a.json, id, created);
	return EXIT_OK;
}

/* ---- take ------------------------------------------------------------------
 */

static const char take_usage[] =
    "usage: sluice take [-t TUBE]... [-w DUR] [-n N] [--no-detach] "
    "[--json]\n";
static const char take_help[] =
    "\nTakes tasks and prints them, with the lease that ack, release, fail,\n"
    "touch and bury need.\n\n"
    "The lease is DETACHED by default: the task stays taken after this\n"
    "command exits, until ack/release/fail/bury or until its ttr runs out\n"
    "(then it is ready again). With --no-detach the lease belongs to this\n"
    "command's connection, and the task returns to ready as soon as the\n"
    "command exits: only useful to look, not to work.\n\n"
    "  -t, --tube TUBE   a tube to take from; repeat for several, tried in\n"
    "                    order (default \"default\")\n"
    "  -w, --wait DUR    wait up to DUR for a task (default 0: answer at "
    "once)\n"
    "  -n, --count N     take up to N tasks (default 1, at most 1000)\n"
    "      --detach      a detached lease (the default)\n"
    "      --no-detach   a lease bound to this command's connection\n"
    "      --json        one JSON object per task, one per line\n\n"
    "Exit status 3 when there was nothing to take before the wait ended.\n";

static int
cmd_take(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		{ "wait", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'n' },
		{ "detach", no_argument, NULL, OPT_DETACH },
		{ "no-detach", no_argument, NULL, OPT_NO_DETACH },
		COMMON_OPTS,
	};
	const char *tubes[64];
	struct sluice_take_opts o = { .tubes = tubes, .max = 1, .detach = 1 };
	struct args a = { argc, argv, "t:w:n:h", opts };
	struct sluice_task *t;
	uint64_t v;
	size_t n;
	int ch, rc;

	while ((ch = next_opt(cli, &a)) != -1) {
		switch (ch) {
		case 't':
			if (o.ntubes == 64)
				return cli_usage_error(cli, "at most 64 tubes");
			tubes[o.ntubes++] = optarg;
			break;
		case 'w':
			if ((rc = parse_dur(cli, "-w", optarg, &o.wait_ms)) !=
			    0)
				return rc;
			break;
		case 'n':
			if ((rc = parse_u64(
			         cli, "-n", optarg, SLUICE_TAKE_MAX, &v)) != 0)
				return rc;
			if (v == 0)
				return cli_usage_error(cli, "-n: at least 1");
			o.max = (uint32_t)v;
			break;
		case OPT_DETACH:
			o.detach = 1;
			break;
		case OPT_NO_DETACH:
			o.detach = 0;
			break;
		}
	}
	if (a.stop)
		return a.status;
	if ((rc = no_operand_connect(cli, argc, argv)) != 0)
		return rc;
	if (o.ntubes == 0)
		tubes[o.ntubes++] = SLUICE_DEFAULT_TUBE;
	rc = sluice_take(cli->c, &o, &t, &n);
	if (rc == SLUICE_ETIMEDOUT &&
	    strncmp(sluice_errmsg(cli->c), "nothing to take", 15) == 0)
		return EXIT_EMPTY;
	if (rc == SLUICE_ETIMEDOUT) {
		cli_fail(cli, rc, "take");
		return EXIT_EMPTY;
	}
	if (rc != 0)
		return cli_fail(cli, rc, "take");
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && !a.json)
			putchar('\n');
		cli_print_task(stdout, &t[i], a.json);
	}
	sluice_task_free(t);
	return EXIT_OK;
}

/* ---- the lease operations ----------------------------------------------- */

static const char ack_usage[] =
    "usage: sluice ack ID [--lease L] [--to TUBE] [--json]\n";
static const char ack_help[] =
    "\nThe task is done: it is deleted (a recurring one is scheduled "
    "again).\n\n"
    "      --lease L   the lease its take printed. Without it the task's\n"
    "                  current lease is looked up, which gives up the\n"
    "                  protection against acking a task someone else has\n"
    "                  taken since\n"
    "      --to TUBE   move it, atomically, to TUBE as a ready task (the\n"
    "                  next stage of a pipeline)\n"
    "      --json      print the task's state after: "
    "{\"id\":N,\"state\":...}\n";

static const char release_usage[] =
    "usage: sluice release ID [--lease L] [--delay DUR] [-p PRI] [--json]\n";
static const char release_help[] =
    "\nPuts a taken task back: ready now, or after --delay.\n\n"
    "      --lease L       the lease its take printed (default: look it "
    "up)\n"
    "      --delay DUR     ready again only after DUR\n"
    "  -p, --priority N    give it a new priority\n"
    "      --json          print the task's state after\n";

static const char fail_usage[] =
    "usage: sluice fail ID [--lease L] -e TEXT [--delay DUR] [--json]\n";
static const char fail_help[] =
    "\nThe task failed: it is retried after a backoff (1s, doubling each\n"
    "attempt, at most 1h), or buried when it was taken max-attempts times.\n"
    "Prints when it runs again, or that it is buried.\n\n"
    "      --lease L       the lease its take printed (default: look it "
    "up)\n"
    "  -e, --error TEXT    why (kept as its last error, up to 1024 bytes)\n"
    "      --delay DUR     retry after DUR instead of the backoff\n"
    "      --json          print the task's state after\n";

static const char touch_usage[] =
    "usage: sluice touch ID [--lease L] [--json]\n";
static const char touch_help[] =
    "\nExtends the lease by the task's ttr from now; prints the new "
    "deadline.\n\n"
    "      --lease L   the lease its take printed (default: look it up)\n"
    "      --json      print the task's state after\n";

static const char bury_usage[] = "usage: sluice bury ID [--lease L] [--json]\n";
static const char bury_help[] =
    "\nParks a taken task: it stays buried until kicked.\n\n"
    "      --lease L   the lease its take printed (default: look it up)\n"
    "      --json      print the task's state after\n";

/* ack, release, fail, touch and bury share their parsing; this is what
 * sets them apart. */
enum lease_verb { ACK, RELEASE, FAIL, TOUCH, BURY };

static const struct lease_op {
	const char *name;
	enum lease_verb verb;
	const char *shorts;
	bool to, delay, priority, error; /* the options it has */
	bool print;                      /* prints the state after, always */
} lease_ops[] = {
	{ "ack", ACK, "h", .to = true },
	{ "release", RELEASE, "hp:", .delay = true, .priority = true },
	{ "fail", FAIL, "he:", .delay = true, .error = true, .print = true },
	{ "touch", TOUCH, "h", .print = true },
	{ "bury", BURY, "h" },
};

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
		{ "to", required_argument, NULL, OPT_TO },
		{ "delay", required_argument, NULL, OPT_DELAY },
		{ "priority", required_argument, NULL, 'p' },
		{ "error", required_argument, NULL, 'e' },
		COMMON_OPTS,
	};
	const struct lease_op *op = find_lease_op(cli->cmd);
	struct args a = { argc, argv, op->shorts, opts };
	const char *to = NULL, *error = NULL;
	bool has_lease = false, has_delay = false;
	int64_t priority = -1;
	uint64_t id, lease = 0, delay = 0, v;
	struct sluice_after after;
	int ch, rc;

	while ((ch = next_opt(cli, &a)) != -1) {
		bool ok = true;

		switch (ch) {
		case OPT_LEASE:
			if ((rc = parse_u64(cli, "--lease", optarg, UINT64_MAX,
			         &lease)) != 0)
				return rc;
			has_lease = true;
			break;
		case OPT_TO:
			ok = op->to;
			to = optarg;
			break;
		case OPT_DELAY:
			ok = op->delay;
			if (ok &&
			    (rc = parse_dur(cli, "--delay", optarg, &delay)) !=
			        0)
				return rc;
			has_delay = true;
			break;
		case 'p':
			ok = op->priority;
			if (ok &&
			    (rc = parse_u64(
			         cli, "-p", optarg, UINT32_MAX, &v)) != 0)
				return rc;
			priority = (int64_t)v;
			break;
		case 'e':
			ok = op->error;
			error = optarg;
			break;
		}
		if (!ok)
			return cli_usage_error(cli, "%s has no option %s",
			    op->name,
			    ch == OPT_TO          ? "--to"
			        : ch == OPT_DELAY ? "--delay"
			        : ch == 'p'       ? "-p/--priority"
			                          : "-e/--error");
	}
	if (a.stop)
		return a.status;
	if (optind != argc - 1)
		return cli_usage_error(cli, "one task ID is needed");
	if ((rc = parse_id(cli, argv[optind], &id)) != 0)
		return rc;
	if (op->error && error == NULL)
		return cli_usage_error(cli, "-e TEXT is needed");
	if ((rc = cli_connect(cli)) != 0 ||
	    (rc = find_lease(cli, id, has_lease, &lease)) != 0)
		return rc;
	switch (op->verb) {
	case ACK:
		rc = sluice_ack(cli->c, id, lease, to, &after);
		break;
	case RELEASE:
		rc = sluice_release(cli->c, id, lease, delay, priority, &after);
		break;
	case FAIL:
		rc = sluice_fail(cli->c, id, lease, error,
		    has_delay ? (int64_t)delay : -1, &after);
		break;
	case TOUCH:
		rc = sluice_touch(cli->c, id, lease, &after);
		break;
	case BURY:
		rc = sluice_bury(cli->c, id, lease, &after);
		break;
	}
	if (rc != 0)
		return cli_fail(cli, rc, "%s %" PRIu64, op->name, id);
	if (a.json || op->print || after.state == SLUICE_DELAYED)
		cli_print_after(stdout, &after, a.json);
	return EXIT_OK;
}

/* ---- kick, delete, peek ------------------------------------------------ */

static const char kick_usage[] = "usage: sluice kick TUBE [N] [--json]\n"
                                 "       sluice kick --id ID [--json]\n";
static const char kick_help[] =
    "\nMoves buried tasks back to ready: up to N of TUBE (default 1), "
    "oldest\nfirst, or one task by id. Prints how many moved.\n\n"
    "      --id ID   kick this task\n"
    "      --json    print {\"kicked\":N}\n";

static int
cmd_kick(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, OPT_ID },
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "h", opts };
	const char *id_arg = NULL;
	struct sluice_after after;
	uint64_t id, n = 1, kicked;
	int rc;

	while (next_opt(cli, &a) == OPT_ID)
		id_arg = optarg;
	if (a.stop)
		return a.status;
	if (id_arg != NULL) {
		if (optind != argc)
			return cli_usage_error(cli, "--id takes no TUBE");
		if ((rc = parse_id(cli, id_arg, &id)) != 0 ||
		    (rc = cli_connect(cli)) != 0)
			return rc;
		if ((rc = sluice_kick_id(cli->c, id, &after)) != 0)
			return cli_fail(cli, rc, "kick %" PRIu64, id);
		if (a.json)
			printf("{\"kicked\":1,\"id\":%" PRIu64 "}\n", id);
		else
			printf("kicked 1\n");
		return EXIT_OK;
	}
	if (optind == argc || argc - optind > 2)
		return cli_usage_error(cli, "a TUBE (and maybe N) is needed");
	if (argc - optind == 2 &&
	    ((rc = parse_u64(cli, "N", argv[optind + 1], UINT32_MAX, &n)) != 0))
		return rc;
	if (n == 0)
		return cli_usage_error(cli, "N: at least 1");
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_kick(cli->c, argv[optind], (uint32_t)n, &kicked)) != 0)
		return cli_fail(cli, rc, "kick %s", argv[optind]);
	print_number(a.json, "kicked", "kicked", kicked);
	return EXIT_OK;
}

/* Which task delete or peek is about: an ID, --key KEY, or -t TUBE with
 * a selector (delete's --all, peek's state). */
struct target {
	const char *key, *tube;
	bool sel;
	uint64_t id;
};

/* Checks that exactly one way was given, and reads the ID. The messages
 * name the selector: "-t TUBE `tube_sel`", "-t TUBE goes with `sel`". */
static int
parse_target(struct cli *cli, int argc, char **argv, struct target *tg,
    const char *tube_sel, const char *sel)
{
	if ((tg->key != NULL) + tg->sel + (optind < argc) != 1 ||
	    optind < argc - 1)
		return cli_usage_error(
		    cli, "give one of ID, --key KEY or -t TUBE %s", tube_sel);
	if ((tg->tube != NULL) != tg->sel)
		return cli_usage_error(cli, "-t TUBE goes with %s", sel);
	if (optind < argc)
		return parse_id(cli, argv[optind], &tg->id);
	return 0;
}

static const char delete_usage[] =
    "usage: sluice delete ID\n"
    "       sluice delete --key KEY [--json]\n"
    "       sluice delete -t TUBE --all [--json]\n";
static const char delete_help[] =
    "\nDeletes a task in any state, by id or by key, or every task of a "
    "tube.\n\n"
    "      --key KEY      the task holding this key\n"
    "  -t, --tube TUBE    with --all: the tube to empty\n"
    "      --all          every task of the tube; prints how many\n"
    "      --json         print {\"id\":N} (--key) or {\"deleted\":N} "
    "(--all)\n";

static int
cmd_delete(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, OPT_KEY },
		TUBE_OPT,
		{ "all", no_argument, NULL, OPT_ALL },
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "t:h", opts };
	struct target tg = { 0 };
	uint64_t n;
	int ch, rc;

	while ((ch = next_opt(cli, &a)) != -1) {
		switch (ch) {
		case OPT_KEY:
			tg.key = optarg;
			break;
		case 't':
			tg.tube = optarg;
			break;
		case OPT_ALL:
			tg.sel = true;
			break;
		}
	}
	if (a.stop)
		return a.status;
	if ((rc = parse_target(cli, argc, argv, &tg, "--all", "--all")) != 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if (tg.key != NULL) {
		if ((rc = sluice_delete_key(cli->c, tg.key, &tg.id)) != 0)
			return cli_fail(cli, rc, "delete --key %s", tg.key);
		print_number(a.json, "id", "deleted", tg.id);
	} else if (tg.sel) {
		if ((rc = sluice_flush(cli->c, tg.tube, &n)) != 0)
			return cli_fail(cli, rc, "delete -t %s --all", tg.tube);
		print_number(a.json, "deleted", "deleted", n);
	} else if ((rc = sluice_delete(cli->c, tg.id)) != 0) {
		return cli_fail(cli, rc, "delete %" PRIu64, tg.id);
	}
	return EXIT_OK;
}

static const char peek_usage[] =
    "usage: sluice peek ID [--json]\n"
    "       sluice peek --key KEY [--json]\n"
    "       sluice peek -t TUBE --ready|--delayed|--buried [--json]\n";
static const char peek_help[] =
    "\nShows a task without taking it.\n\n"
    "      --key KEY      the task holding this key\n"
    "  -t, --tube TUBE    with a state: that tube's next task\n"
    "      --ready        the next task a take would get\n"
    "      --delayed      the delayed task due soonest\n"
    "      --buried       the task buried longest\n"
    "      --json         print the task as one JSON object\n";

static int
cmd_peek(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, OPT_KEY },
		TUBE_OPT,
		{ "ready", no_argument, NULL, OPT_READY },
		{ "delayed", no_argument, NULL, OPT_DELAYED },
		{ "buried", no_argument, NULL, OPT_BURIED },
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "t:h", opts };
	struct target tg = { 0 };
	struct sluice_task *t;
	int state = 0, ch, rc;

	while ((ch = next_opt(cli, &a)) != -1) {
		switch (ch) {
		case OPT_KEY:
			tg.key = optarg;
			break;
		case 't':
			tg.tube = optarg;
			break;
		case OPT_READY:
		case OPT_DELAYED:
		case OPT_BURIED:
			if (state != 0)
				return cli_usage_error(
				    cli, "one of --ready, --delayed, --buried");
			state = ch == OPT_READY ? SLUICE_READY
			    : ch == OPT_DELAYED ? SLUICE_DELAYED
			                        : SLUICE_BURIED;
			break;
		}
	}
	if (a.stop)
		return a.status;
	tg.sel = state != 0;
	if ((rc = parse_target(cli, argc, argv, &tg, "with a state",
	         "--ready, --delayed or --buried")) != 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if (tg.key != NULL)
		rc = sluice_peek_key(cli->c, tg.key, &t);
	else if (tg.sel)
		rc = sluice_peek_next(cli->c, tg.tube, state, &t);
	else
		rc = sluice_peek(cli->c, tg.id, &t);
	if (rc != 0) {
		if (tg.key != NULL)
			return cli_fail(cli, rc, "peek --key %s", tg.key);
		if (tg.sel)
			return cli_fail(cli, rc, "peek -t %s --%s", tg.tube,
			    sluice_state_name(state));
		return cli_fail(cli, rc, "peek %" PRIu64, tg.id);
	}
	cli_print_task(stdout, t, a.json);
	sluice_task_free(t);
	return EXIT_OK;
}

/* ---- admin ------------------------------------------------------------------
 */

static const char stats_usage[] = "usage: sluice stats [-t TUBE] [--json]\n";
static const char stats_help[] =
    "\nCounts per tube and state, cumulative counters, the age of the "
    "oldest\nready task, and the node's log and replication state.\n\n"
    "  -t, --tube TUBE   only this tube (the totals still cover all)\n"
    "      --json        print one JSON object\n";

static int
cmd_stats(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "t:h", opts };
	const char *tube = NULL;
	struct sluice_stats *s;
	int rc;

	while (next_opt(cli, &a) == 't')
		tube = optarg;
	if (a.stop)
		return a.status;
	if ((rc = no_operand_connect(cli, argc, argv)) != 0)
		return rc;
	if ((rc = sluice_stats(cli->c, tube, &s)) != 0)
		return tube ? cli_fail(cli, rc, "stats -t %s", tube)
		            : cli_fail(cli, rc, "stats");
	cli_print_stats(stdout, s, a.json);
	sluice_stats_free(s);
	return EXIT_OK;
}

static const char list_usage[] =
    "usage: sluice list -t TUBE [--state S] [--order O] [--limit N] "
    "[--payloads] [--json]\n";
static const char list_help[] =
    "\nLists a tube's tasks.\n\n"
    "  -t, --tube TUBE     the tube\n"
    "      --state S       ready, delayed, taken or buried (default: all)\n"
    "      --order O       attempts (most first), age (oldest first,\n"
    "                      the default) or run_at (soonest first)\n"
    "      --limit N       at most N tasks (default 100, at most 1000)\n"
    "      --payloads      include the payloads (JSON; the text table "
    "shows\n"
    "                      sizes only)\n"
    "      --json          print {\"tasks\":[...]}\n";

static int
parse_state(const char *s)
{
	for (int st = SLUICE_READY; st <= SLUICE_BURIED; st++)
		if (strcmp(s, sluice_state_name(st)) == 0)
			return st;
	return -1;
}

static int
cmd_list(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		{ "state", required_argument, NULL, OPT_STATE },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "payloads", no_argument, NULL, OPT_PAYLOADS },
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "t:h", opts };
	const char *tube = NULL;
	int state = 0, order = SLUICE_ORDER_AGE, ch, rc;
	bool payloads = false;
	uint64_t limit = 100;
	struct sluice_task *t;
	size_t n;

	while ((ch = next_opt(cli, &a)) != -1) {
		switch (ch) {
		case 't':
			tube = optarg;
			break;
		case OPT_STATE:
			if ((state = parse_state(optarg)) < 0)
				return cli_usage_error(cli,
				    "--state: \"%s\" is not ready, delayed, "
				    "taken or buried",
				    optarg);
			break;
		case OPT_ORDER:
			if (strcmp(optarg, "attempts") == 0)
				order = SLUICE_ORDER_ATTEMPTS;
			else if (strcmp(optarg, "age") == 0)
				order = SLUICE_ORDER_AGE;
			else if (strcmp(optarg, "run_at") == 0)
				order = SLUICE_ORDER_RUN_AT;
			else
				return cli_usage_error(cli,
				    "--order: \"%s\" is not attempts, age or "
				    "run_at",
				    optarg);
			break;
		case OPT_LIMIT:
			if ((rc = parse_u64(cli, "--limit", optarg,
			         SLUICE_LIST_MAX, &limit)) != 0)
				return rc;
			if (limit == 0)
				return cli_usage_error(
				    cli, "--limit: at least 1");
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
	if ((rc = no_operand_connect(cli, argc, argv)) != 0)
		return rc;
	if ((rc = sluice_list(cli->c, tube, state, order, (uint32_t)limit,
	         payloads && a.json, &t, &n)) != 0)
		return cli_fail(cli, rc, "list -t %s", tube);
	cli_print_task_list(stdout, t, n, a.json);
	sluice_task_free(t);
	return EXIT_OK;
}

static const char errors_usage[] = "usage: sluice errors -t TUBE [--json]\n";
static const char errors_help[] =
    "\nCounts a tube's tasks by their last error, most frequent first.\n\n"
    "  -t, --tube TUBE   the tube\n"
    "      --json        print {\"errors\":[{\"error\":TEXT,\"count\":N}]}\n";

static int
cmd_errors(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "t:h", opts };
	struct sluice_error_count *e;
	const char *tube = NULL;
	size_t n;
	int rc;

	while (next_opt(cli, &a) == 't')
		tube = optarg;
	if (a.stop)
		return a.status;
	if (tube == NULL)
		return cli_usage_error(cli, "-t TUBE is needed");
	if ((rc = no_operand_connect(cli, argc, argv)) != 0)
		return rc;
	if ((rc = sluice_errors(cli->c, tube, &e, &n)) != 0)
		return cli_fail(cli, rc, "errors -t %s", tube);
	cli_print_errors(stdout, e, n, a.json);
	sluice_errors_free(e);
	return EXIT_OK;
}

/* Commands with no options but --json and --help, and their operands:
 * pause TUBE DUR, snapshot, promote, follow URL. Returns -1 to go on, or
 * the command's exit code. */
static int
simple_args(struct cli *cli, int argc, char **argv, int nargs, bool *json)
{
	static const struct option opts[] = { COMMON_OPTS };
	struct args a = { argc, argv, "h", opts };

	while (next_opt(cli, &a) != -1)
		;
	if (a.stop)
		return a.status;
	*json = a.json;
	if (argc - optind != nargs && nargs == 0)
		return cli_usage_error(cli, "takes no arguments");
	if (argc - optind != nargs)
		return cli_usage_error(cli, "%d argument%s needed", nargs,
		    nargs == 1 ? " is" : "s are");
	return -1;
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

	if ((rc = simple_args(cli, argc, argv, 2, &json)) >= 0)
		return rc;
	if ((rc = parse_dur(cli, "DUR", argv[optind + 1], &ms)) != 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_pause(cli->c, argv[optind], ms, &until)) != 0)
		return cli_fail(cli, rc, "pause %s", argv[optind]);
	cli_fmt_time(when, sizeof(when), until);
	if (json)
		printf("{\"until\":%" PRIu64 "}\n", until);
	else if (until)
		printf("%s paused until %s\n", argv[optind], when);
	else
		printf("%s resumed\n", argv[optind]);
	return EXIT_OK;
}

static const char snapshot_usage[] = "usage: sluice snapshot [--json]\n";
static const char snapshot_help[] =
    "\nAsks the server to write a snapshot now; prints the last LSN it "
    "covers.\n\n"
    "      --json   print {\"lsn\":N}\n";
static const char promote_usage[] = "usage: sluice promote [--json]\n";
static const char promote_help[] =
    "\nTurns the follower at -s URL into a leader with a new epoch; prints "
    "the\nepoch. Give the follower's URL alone: with several, the first "
    "that\nanswers is promoted. Then point the other followers at it with\n"
    "`sluice -s FOLLOWER follow LEADER_REPL_URL`.\n\n"
    "      --json   print {\"epoch\":N}\n";

/* snapshot and promote: no argument, one number back. */
static int
cmd_node(struct cli *cli, int argc, char **argv)
{
	bool json = false, snap = strcmp(cli->cmd, "snapshot") == 0;
	uint64_t v;
	int rc;

	if ((rc = simple_args(cli, argc, argv, 0, &json)) >= 0)
		return rc;
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	rc = snap ? sluice_snapshot(cli->c, &v) : sluice_promote(cli->c, &v);
	if (rc != 0)
		return cli_fail(cli, rc, "%s", cli->cmd);
	print_number(json, snap ? "lsn" : "epoch",
	    snap ? "snapshot at lsn" : "epoch", v);
	return EXIT_OK;
}

static const char follow_usage[] = "usage: sluice follow URL\n";
static const char follow_help[] =
    "\nMakes the node at -s URL follow the leader whose replication URL is\n"
    "URL (the leader's --repl-listen).\n";

static int
cmd_follow(struct cli *cli, int argc, char **argv)
{
	bool json = false;
	int rc;

	if ((rc = simple_args(cli, argc, argv, 1, &json)) >= 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_follow(cli->c, argv[optind])) != 0)
		return cli_fail(cli, rc, "follow %s", argv[optind]);
	return EXIT_OK;
}

/* ---- main
 * --------------------------------------------------------------------- */

static const char work_usage[] =
    "usage: sluice work -t TUBE [-c N] [--max-tasks N] [--wait DUR] -- CMD "
    "[ARGS...]\n";
static const char work_help[] =
    "\nRuns CMD once per task of TUBE, with the payload on its standard "
    "input,\nup to N at once. CMD's exit status decides: 0 acks the task; "
    "anything\nelse fails it with the last line CMD wrote to standard error "
    "(or how it\nended), so it is retried after a backoff or buried. While "
    "CMD runs\nlonger than half the task's ttr, its lease is touched. CMD "
    "sees the task\nin $SLUICE_TASK_ID, $SLUICE_LEASE, $SLUICE_TUBE and "
    "$SLUICE_ATTEMPTS.\n\n"
    "  -t, --tube TUBE       the tube (repeat for several)\n"
    "  -c, --concurrency N   run up to N commands at once (default 1)\n"
    "      --max-tasks N     stop after N tasks (default: never)\n"
    "      --wait DUR        stop when no task came for DUR (default: "
    "never)\n\n"
    "SIGINT or SIGTERM stops taking tasks; running commands finish and "
    "their\ntasks are acked or failed. A second signal terminates them "
    "(their tasks\nfail). The leases are bound to this process: if it "
    "dies, its tasks\nreturn to ready.\n";

static const struct command commands[] = {
	{ "put", cmd_put, put_usage, put_help },
	{ "take", cmd_take, take_usage, take_help },
	{ "ack", cmd_lease_op, ack_usage, ack_help },
	{ "release", cmd_lease_op, release_usage, release_help },
	{ "fail", cmd_lease_op, fail_usage, fail_help },
	{ "touch", cmd_lease_op, touch_usage, touch_help },
	{ "bury", cmd_lease_op, bury_usage, bury_help },
	{ "kick", cmd_kick, kick_usage, kick_help },
	{ "delete", cmd_delete, delete_usage, delete_help },
	{ "peek", cmd_peek, peek_usage, peek_help },
	{ "stats", cmd_stats, stats_usage, stats_help },
	{ "list", cmd_list, list_usage, list_help },
	{ "errors", cmd_errors, errors_usage, errors_help },
	{ "pause", cmd_pause, pause_usage, pause_help },
	{ "snapshot", cmd_node, snapshot_usage, snapshot_help },
	{ "promote", cmd_node, promote_usage, promote_help },
	{ "follow", cmd_follow, follow_usage, follow_help },
	{ "work", cmd_work, work_usage, work_help },
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
	fprintf(stderr, "\n%sTry 'sluice --help'.\n", main_usage);
	return EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		END_OPT,
	};
	struct cli cli = { .timeout_ms = -1, .cmd = "sluice" };
	static char prog[64];
	uint64_t ms;
	int ch, rc;

	cli.urls = getenv("SLUICE_URL");
	/* "+": stop at the command; its options are its own */
	while ((ch = getopt_long(argc, argv, "+s:hV", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			cli.urls = optarg;
			break;
		case OPT_TIMEOUT:
			if (cli_parse_dur(optarg, &ms) != 0 || ms > INT32_MAX)
				return main_usage_error(
				    "--timeout: \"%s\" is not a duration",
				    optarg);
			cli.timeout_ms = (int)ms;
			break;
		case 'h':
			printf("%s%s", main_usage, main_help);
			return EXIT_OK;
		case 'V':
			printf("sluice %d.%d.%d\n", SLUICE_VERSION_MAJOR,
			    SLUICE_VERSION_MINOR, SLUICE_VERSION_PATCH);
			return EXIT_OK;
		default:
			fprintf(stderr, "%sTry 'sluice --help'.\n", main_usage);
			return EXIT_USAGE;
		}
	}
	if (optind == argc)
		return main_usage_error("a COMMAND is needed");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name) != 0)
			continue;
		cur_cmd = &commands[i];
		cli.cmd = commands[i].name;
		argv += optind;
		argc -= optind;
		/* getopt_long names argv[0] in its complaints */
		snprintf(prog, sizeof(prog), "sluice %s", cli.cmd);
		argv[0] = prog;
		optind = 0; /* restart getopt: the command's options follow
		               its name */
		rc = commands[i].run(&cli, argc, argv);
		sluice_close(cli.c);
		return rc;
	}
	return main_usage_error("unknown command \"%s\"", argv[optind]);
}
