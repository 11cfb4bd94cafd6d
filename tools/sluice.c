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
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cli.h"
#include "cli_lines.h"
#include "cli_util.h"
#include "util/tokens.h"
#include "util/dur.h"

/* Long-only options, shared by the commands' tables. */
enum {
	OPT_JSON = 256,
	OPT_DELAY,
	OPT_AT,
	OPT_TTR,
	OPT_MAX_ATTEMPTS,
	OPT_KEY,
	OPT_REPLACE,
	OPT_IF_NEWER,
	OPT_EVERY,
	OPT_LINES,
	OPT_DETACH,
	OPT_NO_DETACH,
	OPT_STRICT_ORDER,
	OPT_LEASE,
	OPT_FORCE,
	OPT_TO,
	OPT_ID,
	OPT_ALL,
	OPT_READY,
	OPT_DELAYED,
	OPT_BURIED,
	OPT_DONE,
	OPT_OLDER_THAN,
	OPT_RESULT,
	OPT_STATE,
	OPT_ORDER,
	OPT_LIMIT,
	OPT_PAYLOADS,
	OPT_TIMEOUT,
	OPT_FILE,
	OPT_SH,
	OPT_PAYLOAD,
	OPT_FATAL,
	OPT_HOURLY,
	OPT_SECS,
	OPT_TLS_CA,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_TOKEN_FILE,
	OPT_AFTER,
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
    "      --token-file FILE      send the token in FILE's first line to a\n"
    "                             server started with --auth (default\n"
    "                             $SLUICE_TOKEN); never on the command line,\n"
    "                             where ps would show it\n"
    "      --timeout DUR          wait this long to connect, and for each\n"
    "                             reply (default 2s to connect, 30s for a\n"
    "                             reply; 0: replies may take any time)\n"
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
    "  kick      move buried tasks back to ready\n"
    "  delete    delete a task (by id or key), or every task of a tube\n"
    "  peek      show a task without taking it\n"
    "  work      run a command for each task of a tube\n"
    "Admin:\n"
    "  stats     counts per tube and state, log and replication state\n"
    "  list      a tube's tasks, by state and order\n"
    "  errors    a tube's tasks counted by last error\n"
    "  pause     stop handing out a tube's tasks for a while\n"
    "  tube      set or show a tube's own settings; delete a tube\n"
    "  snapshot  write a snapshot now\n"
    "  promote   make the follower a leader\n"
    "  follow    make the node follow a leader\n"
    "  token     make a new token for sluiced --auth\n"
    "Automatic failover (sluiced --etcd):\n"
    "  cluster     the cluster's members as the node sees them\n"
    "  switchover  hand the leadership to another member\n"
    "\n"
    "DUR is milliseconds, or a number with ms, s, m, h or d: 500, 2s, "
    "1.5m, 1h, 30d.\n"
    "`sluice help COMMAND` is `sluice COMMAND --help`.\n"
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
	if ((cli->tls_ca != NULL || cli->tls_cert != NULL) &&
	    sluice_set_tls(cli->c, cli->tls_ca, cli->tls_cert, cli->tls_key) !=
	        0) {
		fprintf(stderr, "sluice: TLS: %s\n", sluice_errmsg(cli->c));
		return EXIT_ERR;
	}
	if (cli->token != NULL && sluice_set_token(cli->c, cli->token) != 0) {
		fprintf(stderr, "sluice: the token is over %d bytes\n",
		    AUTH_TOKEN_MAX);
		return EXIT_USAGE;
	}
	/* --timeout bounds the connect too, not only each reply; 0 waits
	 * for replies as long as they take */
	if (cli->timeout_ms == 0) {
		sluice_set_timeout(cli->c, -1);
	} else if (cli->timeout_ms > 0) {
		sluice_set_timeout(cli->c, cli->timeout_ms);
		sluice_set_connect_timeout(cli->c, cli->timeout_ms);
	}
	return 0;
}

/* The server's and the library's messages often restate the error after
 * where it happened, in their own words ("kick_id 9: no such task",
 * "put to tube 'x': payload too large"). The where is said here, in the
 * words of the command typed; so when the message holds the error's name,
 * only the name and what follows it are kept; otherwise the server's why
 * (what follows its "where: "), which is more specific than the name; a
 * connection's message whole (it names the server). */
int
cli_fail(struct cli *cli, int rc, const char *fmt, ...)
{
	const char *detail = cli->c ? sluice_errmsg(cli->c) : "";
	const char *name = sluice_strerror(rc);
	const char *at = strstr(detail, name);
	va_list ap;

	fputs("sluice: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (detail[0] == '\0')
		fprintf(stderr, ": %s\n", name);
	else if (at != NULL)
		fprintf(stderr, ": %s\n", at);
	else if (rc != SLUICE_ECONN && rc != SLUICE_ETIMEDOUT &&
	    (at = strstr(detail, ": ")) != NULL)
		fprintf(stderr, ": %s\n", at + 2); /* the why, not the where */
	else
		fprintf(stderr, ": %s\n", detail);
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

/* A count of tasks: {"KEY":N} with --json, else "VERB N task(s)". */
static void
print_count(bool json, const char *key, const char *verb, uint64_t v)
{
	if (json)
		printf("{\"%s\":%" PRIu64 "}\n", key, v);
	else
		printf("%s %" PRIu64 " task%s\n", verb, v, v == 1 ? "" : "s");
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

/* What put prints: print_put's, with "replaced" for a put with replace
 * and "stale_version" for one with if_newer. Without --json, the id alone
 * stays on stdout, for scripts; that nothing new was stored, or nothing
 * changed, is said on stderr beside it. */
static void
print_put_result(const struct sluice_put_opts *o,
    const struct sluice_put_result *res, bool json)
{
	if (json && o->replace) {
		printf("{\"id\":%" PRIu64 ",\"created\":%s,\"replaced\":%s",
		    res->id, res->created ? "true" : "false",
		    res->replaced ? "true" : "false");
		if (o->if_newer)
			printf(",\"stale_version\":%s",
			    res->stale_version ? "true" : "false");
		puts("}");
		return;
	}
	print_put(json, res->id, res->created);
	if (json || res->created)
		return;
	if (res->stale_version)
		fprintf(stderr,
		    "sluice: put: key %s: task %" PRIu64 " has a version of "
		    "%" PRIu64 " or newer; nothing changed\n",
		    o->key, res->id, o->if_newer);
	else if (o->replace)
		fprintf(stderr,
		    "sluice: put: key %s: task %" PRIu64
		    " updated; nothing created\n",
		    o->key, res->id);
	else
		fprintf(stderr,
		    "sluice: put: key %s exists as task %" PRIu64
		    "; nothing created\n",
		    o->key ? o->key : "", res->id);
}

static int
parse_id(struct cli *cli, const char *s, uint64_t *id)
{
	if (cli_parse_uint(s, UINT64_MAX, id) != 0 || *id == 0)
		return cli_usage_error(cli, "\"%s\" is not a task id", s);
	return 0;
}

int
cli_parse_num(struct cli *cli, const char *opt, const char *s, uint64_t min,
    uint64_t max, uint64_t *out)
{
	uint64_t v;

	if (cli_parse_uint(s, max, &v) != 0 || v < min)
		return cli_usage_error(cli,
		    "%s takes a whole number from %" PRIu64 " to %" PRIu64
		    ", not \"%s\"",
		    opt, min, max, s);
	*out = v;
	return 0;
}

int
cli_parse_ms(
    struct cli *cli, const char *opt, const char *s, uint64_t min, uint64_t *ms)
{
	char lo[32];
	uint64_t v;

	dur_fmt(lo, sizeof(lo), min);
	if (dur_parse(s, &v) != 0 || v < min)
		return cli_usage_error(cli,
		    "%s takes a duration%s%s: milliseconds, or a number with "
		    "ms, s, m, h or d (500, 2s, 1.5m, 1h, 30d); not \"%s\"",
		    opt, min ? " of at least " : "", min ? lo : "", s);
	*ms = v;
	return 0;
}

static int
parse_u64(struct cli *cli, const char *opt, const char *s, uint64_t min,
    uint64_t max, uint64_t *out)
{
	return cli_parse_num(cli, opt, s, min, max, out);
}

static int
parse_dur(struct cli *cli, const char *opt, const char *s, uint64_t *ms)
{
	return cli_parse_ms(cli, opt, s, 0, ms);
}

/* ---- put ------------------------------------------------------------------
 */

enum {
	LINES_BATCH = 100,     /* lines per batch put */
	LINES_BYTES = 4 << 20, /* bytes per batch put, at most */
};

/* What put --lines prints as it goes: with --json one array, an element
 * per line as its batch is stored ("[" before the first, "," before the
 * others, "]" at the end), else an id per stored line; each refused line
 * gets its own error on stderr. */
struct lines_out {
	bool json;
	size_t printed;         /* JSON elements so far */
	int status;             /* EXIT_ERR once a line was refused */
	int limit_known;        /* 0: not asked yet; 1: known; -1: not told */
	uint64_t limit;         /* the server's --max-payload, when told */
	unsigned long accepted; /* lines stored */
	bool full;              /* the log refused one: stop reading */
};

/* A batch the server refused whole with one of these may have been
 * refused for one of its lines alone (a server that checks every item's
 * limits while it decodes the request does so): its halves are tried
 * apart, down to the line to blame. */
static bool
line_error(int rc)
{
	return rc == SLUICE_ETOOBIG || rc == SLUICE_ETUBE ||
	    rc == SLUICE_EKEY || rc == SLUICE_ELIMIT || rc == SLUICE_EINVAL ||
	    rc == SLUICE_EMSGSIZE;
}

/* "payload too large (N bytes; the limit is M)": the limit when the
 * server's stats say it (node key max_payload). */
static void
too_large(
    struct cli *cli, struct lines_out *lo, size_t len, char *out, size_t n)
{
	struct sluice_stats *st;

	if (lo->limit_known == 0) {
		lo->limit_known = -1;
		if (sluice_stats(cli->c, NULL, &st) == 0) {
			if (sluice_kv_get(st->kv, st->nkv, "max_payload",
			        &lo->limit) == 0)
				lo->limit_known = 1;
			sluice_stats_free(st);
		}
	}
	if (lo->limit_known == 1)
		snprintf(out, n, "%s (%zu bytes; the limit is %" PRIu64 ")",
		    sluice_strerror(SLUICE_ETOOBIG), len, lo->limit);
	else
		snprintf(out, n,
		    "%s (%zu bytes, over the server's --max-payload)",
		    sluice_strerror(SLUICE_ETOOBIG), len);
}

static void
lines_element(struct lines_out *lo)
{
	fputs(lo->printed++ == 0 ? "[" : ",", stdout);
}

/* One line's result. */
static void
line_result(struct cli *cli, struct lines_out *lo,
    const struct sluice_batch_item *it, unsigned long lineno)
{
	char why[256];

	if (it->rc == 0) {
		if (lo->json) {
			lines_element(lo);
			printf("{\"line\":%lu,\"id\":%" PRIu64
			       ",\"created\":%s}\n",
			    lineno, it->id, it->created ? "true" : "false");
		} else {
			printf("%" PRIu64 "\n", it->id);
		}
		lo->accepted++;
		return;
	}
	if (it->rc == SLUICE_ENOSPC)
		lo->full = true;
	if (it->rc == SLUICE_ETOOBIG)
		too_large(cli, lo, it->len, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s", sluice_strerror(it->rc));
	fprintf(stderr, "sluice: put: line %lu: %s\n", lineno, why);
	if (lo->json) {
		lines_element(lo);
		printf("{\"line\":%lu,\"error\":", lineno);
		cli_json_cstr(stdout, why);
		printf(",\"code\":%d}\n", it->rc);
	}
	lo->status = EXIT_ERR;
}

/* Puts the tasks of `items` (lines `lineno`) and prints their results in
 * order. Returns 0, or EXIT_ERR when the batch failed as a whole (the
 * connection, a full log): its outcome is then unknown, and said. */
static int
put_lines_batch(struct cli *cli, struct sluice_batch_item *items, size_t n,
    const unsigned long *lineno, struct lines_out *lo)
{
	int rc = sluice_put_batch(cli->c, items, n);

	if (rc != 0 && line_error(rc) && n > 1) {
		size_t h = n / 2;

		if ((rc = put_lines_batch(cli, items, h, lineno, lo)) != 0)
			return rc;
		return put_lines_batch(cli, items + h, n - h, lineno + h, lo);
	}
	if (rc != 0 && line_error(rc)) {
		items[0].rc = rc; /* one line, refused */
		rc = 0;
	}
	if (rc == SLUICE_ENOSPC)
		lo->full = true;
	if (rc != 0) {
		lo->status = EXIT_ERR;
		return n == 1 ? cli_fail(cli, rc, "put: line %lu", lineno[0])
		              : cli_fail(cli, rc, "put: lines %lu-%lu",
		                    lineno[0], lineno[n - 1]);
	}
	for (size_t i = 0; i < n; i++)
		line_result(cli, lo, &items[i], lineno[i]);
	fflush(stdout);
	return 0;
}

/* --lines: one task per line of stdin, in batches of the lines that are
 * already there (cli_lines.h). */
static int
put_lines(struct cli *cli, const struct sluice_put_opts *o, bool json)
{
	struct line_reader lr = { 0 };
	struct sluice_batch_item items[LINES_BATCH];
	unsigned long lineno[LINES_BATCH];
	struct line_span sp[LINES_BATCH];
	struct lines_out lo = { .json = json, .status = EXIT_OK };
	int rc;

	for (;;) {
		size_t n = 0, off = 0;

		rc = lines_gather(&lr, LINES_BATCH, LINES_BYTES, sp, &n, &off);
		if (rc != 0) {
			fprintf(stderr, "sluice: put: reading stdin: %s\n",
			    strerror(-rc));
			lo.status = EXIT_ERR;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			items[i].opts = *o;
			items[i].payload = lr.buf + sp[i].start;
			items[i].len = sp[i].len;
			lineno[i] = sp[i].lineno;
		}
		if (n > 0 && put_lines_batch(cli, items, n, lineno, &lo) != 0 &&
		    !lo.full)
			break;
		if (lo.full) {
			/* what follows would be refused too, until the log
			 * has room again: say how far it got */
			fprintf(stderr,
			    "sluice: put: the log is full: stopped after line "
			    "%lu; %lu lines accepted\n",
			    lineno[n - 1], lo.accepted);
			lo.status = EXIT_ERR;
			break;
		}
		if (lines_consume(&lr, off))
			break;
	}
	lines_free(&lr);
	if (json)
		fputs(lo.printed == 0 ? "[]\n" : "]\n", stdout);
	return lo.status;
}

enum {
	/* The most a payload may be: sluiced's --max-payload is at most 64
	 * MiB. What is longer is refused here, before it fills memory. */
	PAYLOAD_READ_MAX = 64 << 20,
};

/* The payload of `put -` (stdin, `file` NULL) or `put --file FILE`, bytes
 * as they are. Returns 0 and a malloc'd `*out` of `*len` bytes, or prints
 * why and returns EXIT_ERR. */
static int
read_payload(const char *file, char **out, size_t *len)
{
	const char *name = file != NULL ? file : "stdin";
	int fd = file != NULL ? open(file, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	size_t n = 0, cap = 0;
	char *b = NULL;
	ssize_t r;

	if (fd < 0) {
		fprintf(stderr, "sluice: put: cannot read %s: %s\n", name,
		    strerror(errno));
		return EXIT_ERR;
	}
	for (;;) {
		if (cap - n < 65536) {
			char *nb;

			cap = cap ? cap * 2 : 262144;
			if ((nb = realloc(b, cap)) == NULL) {
				r = -1;
				errno = ENOMEM;
				break;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n > PAYLOAD_READ_MAX) {
			fprintf(stderr,
			    "sluice: put: %s holds more than %d MiB, more "
			    "than any payload may be\n",
			    name, PAYLOAD_READ_MAX >> 20);
			r = 0;
			n = SIZE_MAX;
			break;
		}
	}
	if (r < 0)
		fprintf(stderr, "sluice: put: cannot read %s: %s\n", name,
		    strerror(errno));
	if (file != NULL)
		close(fd);
	if (r < 0 || n == SIZE_MAX) {
		free(b);
		return EXIT_ERR;
	}
	*out = b;
	*len = n;
	return 0;
}

static const char put_usage[] = "usage: sluice put [options] PAYLOAD\n"
                                "       sluice put [options] - < FILE\n"
                                "       sluice put [options] --file FILE\n"
                                "       sluice put [options] --lines < FILE\n";
static const char put_help[] =
    "\nPuts a task into a tube and prints its id. The payload is PAYLOAD,\n"
    "or with - all of stdin, or with --file all of FILE: bytes as they\n"
    "are, up to the server's --max-payload.\n\n"
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
    "                        creates nothing: it prints the existing id, and\n"
    "                        on stderr \"key KEY exists as task N\"\n"
    "      --replace         with --key: update the live task instead\n"
    "      --if-newer V      with --replace: only if V (a version, such as\n"
    "                        the source row's updated_at, >= 1) is greater\n"
    "                        than the version stored with the live task\n"
    "                        (none stored: any V); else nothing changes and\n"
    "                        stderr says so (exit 0). V is stored with the\n"
    "                        task, a new one too\n"
    "      --every DUR       recurring: each ack schedules it again DUR\n"
    "                        after its run_at\n"
    "      --file FILE       the payload is the content of FILE\n"
    "      --lines           one task per line of stdin (empty lines are\n"
    "                        skipped), sent in batches; prints one id per\n"
    "                        line as each batch is stored. A line that is\n"
    "                        refused (too large, ...) is said on stderr\n"
    "                        with its number, the others are stored; the\n"
    "                        exit status is 1 when any line was refused.\n"
    "                        It stops at the first line a full log\n"
    "                        refuses, saying how many were accepted\n"
    "      --json            print {\"id\":N,\"created\":true} (with\n"
    "                        --replace, \"replaced\" too; with --if-newer,\n"
    "                        \"stale_version\" too); with\n"
    "                        --lines one array, an element per line:\n"
    "                        {\"line\":N,\"id\":N,\"created\":true} or\n"
    "                        {\"line\":N,\"error\":TEXT,\"code\":N}\n";

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
		{ "if-newer", required_argument, NULL, OPT_IF_NEWER },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "file", required_argument, NULL, OPT_FILE },
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "t:p:h", opts };
	struct sluice_put_opts o;
	struct sluice_put_result res;
	bool lines = false, delay = false;
	const char *file = NULL, *payload;
	char *data = NULL;
	uint64_t v = 0;
	size_t len;
	int ch, rc;

	sluice_put_opts_init(&o);
	while ((ch = next_opt(cli, &a)) != -1) {
		switch (ch) {
		case 't':
			o.tube = optarg;
			break;
		case 'p':
			if ((rc = parse_u64(
			         cli, "-p", optarg, 0, UINT32_MAX, &v)) != 0)
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
			if ((rc = parse_u64(cli, "--at", optarg, 1, UINT64_MAX,
			         &o.run_at)) != 0)
				return rc;
			break;
		case OPT_TTR:
			if ((rc = parse_dur(cli, "--ttr", optarg, &o.ttr_ms)) !=
			    0)
				return rc;
			break;
		case OPT_MAX_ATTEMPTS:
			if ((rc = parse_u64(cli, "--max-attempts", optarg, 0,
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
		case OPT_IF_NEWER:
			if ((rc = parse_u64(cli, "--if-newer", optarg, 1,
			         UINT64_MAX, &o.if_newer)) != 0)
				return rc;
			break;
		case OPT_EVERY:
			if ((rc = parse_dur(
			         cli, "--every", optarg, &o.period_ms)) != 0)
				return rc;
			break;
		case OPT_LINES:
			lines = true;
			break;
		case OPT_FILE:
			file = optarg;
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
	if (o.if_newer && !o.replace)
		return cli_usage_error(
		    cli, "--if-newer needs --replace (and --key)");
	if (lines && o.key)
		return cli_usage_error(cli,
		    "--key with --lines would give every line the same key");
	if (lines && (optind != argc || file != NULL))
		return cli_usage_error(cli,
		    "--lines reads stdin: no PAYLOAD, - or --file with it");
	if (file != NULL && optind != argc)
		return cli_usage_error(
		    cli, "the payload is --file's: no PAYLOAD or - with it");
	if (!lines && file == NULL && optind != argc - 1)
		return cli_usage_error(cli,
		    optind == argc
		        ? "a PAYLOAD (- for stdin, --file F, or --lines) is "
		          "needed"
		        : "one PAYLOAD only (quote it)");
	if (lines) {
		if ((rc = cli_connect(cli)) != 0)
			return rc;
		return put_lines(cli, &o, a.json);
	}
	if (file != NULL || strcmp(argv[optind], "-") == 0) {
		if ((rc = read_payload(file, &data, &len)) != 0)
			return rc;
		payload = data;
	} else {
		payload = argv[optind];
		len = strlen(payload);
	}
	if ((rc = cli_connect(cli)) == 0 &&
	    (rc = sluice_put_ex(cli->c, &o, payload, len, &res)) != 0)
		rc = cli_fail(cli, rc, "put");
	free(data);
	if (rc != 0)
		return rc;
	print_put_result(&o, &res, a.json);
	return EXIT_OK;
}

/* ---- take ------------------------------------------------------------------
 */

static const char take_usage[] =
    "usage: sluice take [-t TUBE]... [--strict-order] [-w DUR] [-n N] "
    "[--no-detach] [--json]\n"
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
    "      --sh          print the task as shell assignments, for\n"
    "                    eval \"$(sluice take --sh)\": SLUICE_TASK_ID,\n"
    "                    SLUICE_LEASE, SLUICE_TUBE, SLUICE_ATTEMPTS (as\n"
    "                    work gives its CMD) and SLUICE_PAYLOAD (or\n"
    "                    SLUICE_PAYLOAD_BASE64 when it is not UTF-8 text)\n\n"
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
		{ "sh", no_argument, NULL, OPT_SH },
		{ "strict-order", no_argument, NULL, OPT_STRICT_ORDER },
		COMMON_OPTS,
	};
	const char *tubes[64];
	bool sh = false;
	struct sluice_take_opts o = { .tubes = tubes, .max = 1, .detach = 1 };
	struct args a = { argc, argv, "t:w:n:h", opts };
	struct sluice_task *t;
	uint64_t v = 0;
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
			if ((rc = parse_u64(cli, "-n", optarg, 1,
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
	if (sh) {
		cli_print_task_sh(stdout, &t[0]);
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

/* ---- the lease operations ----------------------------------------------- */

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
    "      --result TEXT  a short text (up to 1024 bytes) kept with the\n"
    "                  done task\n"
    "      --json      print the task's state after: "
    "{\"id\":N,\"state\":...};\n"
    "                  many tasks: one array, {\"id\":N,\"acked\":true} or\n"
    "                  {\"id\":N,\"error\":\"...\",\"code\":N} per task\n";

static const char release_usage[] =
    "usage: sluice release ID (--lease L | --force) [--delay DUR] [-p PRI] "
    "[--json]\n"
    "       sluice release -t TUBE --all [--json]\n";
static const char release_help[] =
    "\nPuts a taken task back: ready now, or after --delay.\n\n"
    "      --lease L       the lease its take printed\n"
    "      --force         without the lease (an operator's override)\n"
    "      --delay DUR     ready again only after DUR\n"
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
	bool to, delay, priority, error, all, fatal; /* the options it has */
	bool needs_error;
} lease_ops[] = {
	{ "ack", "acked", ACK, "h", .to = true },
	{ "release", "released", RELEASE, "hp:t:", .delay = true,
	    .priority = true, .all = true },
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
	print_count(json, "released", "released", n);
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
		COMMON_OPTS,
	};
	const struct lease_op *op = find_lease_op(cli->cmd);
	struct args a = { argc, argv, op->shorts, opts };
	const char *to = NULL, *error = NULL, *result = NULL, *tube = NULL;
	bool has_lease = false, has_delay = false, force = false, lines = false;
	bool all = false, fatal = false;
	int64_t priority = -1;
	uint64_t id, lease = 0, delay = 0, v = 0;
	struct sluice_after after;
	int ch, rc;

	while ((ch = next_opt(cli, &a)) != -1) {
		bool ok = true;

		switch (ch) {
		case OPT_LEASE:
			if ((rc = parse_u64(cli, "--lease", optarg, 0,
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
			    (rc = parse_dur(cli, "--delay", optarg, &delay)) !=
			        0)
				return rc;
			has_delay = true;
			break;
		case 'p':
			ok = op->priority;
			if (ok &&
			    (rc = parse_u64(
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
		    priority >= 0)
			return cli_usage_error(cli,
			    "release -t TUBE --all takes no task ID, lease, "
			    "delay or priority");
		return release_all(cli, tube, a.json);
	}
	if (fatal && has_delay)
		return cli_usage_error(
		    cli, "--fatal and --delay exclude each other");
	if (optind != argc - 1)
		return cli_usage_error(cli, "one task ID is needed");
	if ((rc = parse_id(cli, argv[optind], &id)) != 0)
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
	case RELEASE:
		rc = sluice_release(cli->c, id, lease, delay, priority, &after);
		break;
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

/* ---- update ----------------------------------------------------------- */

static const char update_usage[] =
    "usage: sluice update ID [-p PRI] [--delay DUR | --at MS] [--ttr DUR]\n"
    "                        [--max-attempts N] [--payload TEXT | --file F]"
    " [--json]\n";
static const char update_help[] =
    "\nChanges a ready, delayed or buried task in place (no key needed):\n"
    "what is given, nothing else. Its attempts, key and tube stay. A taken\n"
    "task may change its priority only (it applies when the task comes\n"
    "back); a buried task keeps waiting for a kick, so no new time.\n\n"
    "  -p, --priority N       the new priority (0 most urgent)\n"
    "      --delay DUR        ready DUR from now (delayed until then)\n"
    "      --at MS            ready at this unix time in ms\n"
    "      --ttr DUR          how long a worker may hold it\n"
    "      --max-attempts N   buried after N takes (0: unlimited)\n"
    "      --payload TEXT     the new payload\n"
    "      --file F           the new payload, from F (- for stdin)\n"
    "      --json             print the task's state after: "
    "{\"id\":N,\"state\":...}\n";

static int
cmd_update(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "priority", required_argument, NULL, 'p' },
		{ "delay", required_argument, NULL, OPT_DELAY },
		{ "at", required_argument, NULL, OPT_AT },
		{ "ttr", required_argument, NULL, OPT_TTR },
		{ "max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS },
		{ "payload", required_argument, NULL, OPT_PAYLOAD },
		{ "file", required_argument, NULL, OPT_FILE },
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "p:h", opts };
	struct sluice_update_opts o;
	struct sluice_after after;
	const char *file = NULL;
	char *data = NULL;
	uint64_t v = 0, id;
	int ch, rc;

	sluice_update_opts_init(&o);
	while ((ch = next_opt(cli, &a)) != -1) {
		rc = 0;
		switch (ch) {
		case 'p':
			rc = parse_u64(cli, "-p", optarg, 0, UINT32_MAX, &v);
			o.priority = (int64_t)v;
			break;
		case OPT_DELAY:
			rc = parse_dur(cli, "--delay", optarg, &v);
			o.delay_ms = (int64_t)v;
			break;
		case OPT_AT:
			rc = parse_u64(
			    cli, "--at", optarg, 1, UINT64_MAX, &o.run_at);
			break;
		case OPT_TTR:
			rc = parse_dur(cli, "--ttr", optarg, &v);
			o.ttr_ms = (int64_t)v;
			break;
		case OPT_MAX_ATTEMPTS:
			rc = parse_u64(
			    cli, "--max-attempts", optarg, 0, UINT32_MAX, &v);
			o.max_attempts = (int64_t)v;
			break;
		case OPT_PAYLOAD:
			o.set_payload = 1;
			o.payload = optarg;
			o.len = strlen(optarg);
			break;
		case OPT_FILE:
			file = optarg;
			break;
		}
		if (rc != 0)
			return rc;
	}
	if (a.stop)
		return a.status;
	if (optind != argc - 1)
		return cli_usage_error(cli, "one task ID is needed");
	if ((rc = parse_id(cli, argv[optind], &id)) != 0)
		return rc;
	if (o.delay_ms >= 0 && o.run_at != 0)
		return cli_usage_error(
		    cli, "--delay and --at exclude each other");
	if (o.set_payload && file != NULL)
		return cli_usage_error(
		    cli, "--payload and --file exclude each other");
	if (o.priority < 0 && o.delay_ms < 0 && o.run_at == 0 && o.ttr_ms < 0 &&
	    o.max_attempts < 0 && !o.set_payload && file == NULL)
		return cli_usage_error(cli,
		    "nothing to change: give -p, --delay, --at, --ttr, "
		    "--max-attempts, --payload or --file");
	if (file != NULL) {
		if ((rc = read_payload(strcmp(file, "-") == 0 ? NULL : file,
		         &data, &o.len)) != 0)
			return rc;
		o.set_payload = 1;
		o.payload = data;
	}
	if ((rc = cli_connect(cli)) == 0 &&
	    (rc = sluice_update(cli->c, id, &o, &after)) != 0)
		rc = cli_fail(cli, rc, "update %" PRIu64, id);
	free(data);
	if (rc != 0)
		return rc;
	cli_print_after(stdout, "updated", &after, NULL, a.json);
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
			return cli_fail(cli, rc, "kick --id %" PRIu64, id);
		if (a.json)
			printf("{\"kicked\":1,\"id\":%" PRIu64 "}\n", id);
		else
			cli_print_after(stdout, "kicked", &after, NULL, false);
		return EXIT_OK;
	}
	if (optind == argc || argc - optind > 2)
		return cli_usage_error(cli, "a TUBE (and maybe N) is needed");
	if (argc - optind == 2 &&
	    ((rc = parse_u64(cli, "N", argv[optind + 1], 1, UINT32_MAX, &n)) !=
	        0))
		return rc;
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_kick(cli->c, argv[optind], (uint32_t)n, &kicked)) != 0)
		return cli_fail(cli, rc, "kick %s", argv[optind]);
	print_count(a.json, "kicked", "kicked", kicked);
	return EXIT_OK;
}

/* Which task delete or peek is about: an ID, --key KEY (in -t TUBE,
 * default "default": keys are per tube), or -t TUBE with a selector
 * (delete's --all, peek's state). */
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
	if (tg->tube != NULL && !tg->sel && tg->key == NULL)
		return cli_usage_error(
		    cli, "-t TUBE goes with --key or with %s", sel);
	if (tg->sel && tg->tube == NULL)
		return cli_usage_error(cli, "-t TUBE goes with %s", sel);
	if (optind < argc)
		return parse_id(cli, argv[optind], &tg->id);
	return 0;
}

/* The --older-than value as given, for messages. */
static const char *
argv_older(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--older-than") == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], "--older-than=", 13) == 0)
			return argv[i] + 13;
	}
	return "?";
}

static int parse_state(const char *s);

static const char delete_usage[] =
    "usage: sluice delete ID... [--json]\n"
    "       sluice delete --key KEY [-t TUBE] [--json]\n"
    "       sluice delete -t TUBE --all [--json]\n"
    "       sluice delete -t TUBE --state S --older-than DUR [--json]\n";
static const char delete_help[] =
    "\nDeletes a task in any state, by id or by key, every task of a "
    "tube,\nor a tube's tasks in one state by age.\n"
    "Several IDs go in requests of up to 1000 (one commit each), each task\n"
    "deleted or refused on its own: \"deleted ID\" per task on stdout, the\n"
    "reason of each refused one on stderr (exit 1 when any was).\n\n"
    "      --key KEY      the task holding this key in its tube (-t TUBE,\n"
    "                     default \"default\": keys are per tube)\n"
    "  -t, --tube TUBE    with --key, --all or --state: the tube\n"
    "      --all          every task of the tube; prints how many\n"
    "      --state S      ready, delayed, buried or done: those at least\n"
    "                     --older-than DUR old (since created; a done\n"
    "                     task since its ack), in one request; prints how\n"
    "                     many\n"
    "      --older-than DUR  with --state: the age (0: all of them)\n"
    "      --json         print {\"id\":N} (ID, --key) or {\"deleted\":N} "
    "(--all, --state);\n"
    "                     several IDs: one array, {\"id\":N,\"deleted\":true}\n"
    "                     or {\"id\":N,\"error\":\"...\",\"code\":N} per "
    "task\n";

static int
cmd_delete(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, OPT_KEY },
		TUBE_OPT,
		{ "all", no_argument, NULL, OPT_ALL },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "older-than", required_argument, NULL, OPT_OLDER_THAN },
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "t:h", opts };
	struct target tg = { 0 };
	uint64_t n, older = 0;
	bool has_older = false;
	int state = 0, ch, rc;

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
		case OPT_STATE:
			state = parse_state(optarg);
			if (state != SLUICE_READY && state != SLUICE_DELAYED &&
			    state != SLUICE_BURIED && state != SLUICE_DONE)
				return cli_usage_error(cli,
				    "--state: \"%s\" is not ready, delayed, "
				    "buried or done",
				    optarg);
			break;
		case OPT_OLDER_THAN:
			if ((rc = parse_dur(
			         cli, "--older-than", optarg, &older)) != 0)
				return rc;
			has_older = true;
			break;
		}
	}
	if (a.stop)
		return a.status;
	if (argc - optind > 1 && tg.key == NULL && !tg.sel && state == 0)
		return cli_batch_operands(
		    cli, argv + optind, (size_t)(argc - optind), false, a.json);
	if ((state != 0) != has_older)
		return cli_usage_error(
		    cli, "--state S and --older-than DUR go together");
	if (state != 0 && tg.sel)
		return cli_usage_error(cli, "--all or --state, not both");
	tg.sel = tg.sel || state != 0;
	if ((rc = parse_target(cli, argc, argv, &tg, "--all or --state",
	         "--all or --state")) != 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if (state != 0) {
		if ((rc = sluice_delete_where(
		         cli->c, tg.tube, state, older, &n)) != 0)
			return cli_fail(cli, rc,
			    "delete -t %s --state %s --older-than %s", tg.tube,
			    sluice_state_name(state), argv_older(argc, argv));
		print_count(a.json, "deleted", "deleted", n);
	} else if (tg.key != NULL) {
		if ((rc = sluice_delete_key(cli->c, tg.tube, tg.key, &tg.id)) !=
		    0)
			return cli_fail(cli, rc, "delete --key %s -t %s",
			    tg.key, tg.tube ? tg.tube : "default");
		print_number(a.json, "id", "deleted", tg.id);
	} else if (tg.sel) {
		if ((rc = sluice_flush(cli->c, tg.tube, &n)) != 0)
			return cli_fail(cli, rc, "delete -t %s --all", tg.tube);
		print_count(a.json, "deleted", "deleted", n);
	} else if ((rc = sluice_delete(cli->c, tg.id)) != 0) {
		return cli_fail(cli, rc, "delete %" PRIu64, tg.id);
	} else {
		print_number(a.json, "id", "deleted", tg.id);
	}
	return EXIT_OK;
}

static const char peek_usage[] =
    "usage: sluice peek ID [--json]\n"
    "       sluice peek --key KEY [-t TUBE] [--json]\n"
    "       sluice peek -t TUBE --ready|--delayed|--buried|--done [--json]\n";
static const char peek_help[] =
    "\nShows a task without taking it.\n\n"
    "      --key KEY      the task holding this key in its tube (-t TUBE,\n"
    "                     default \"default\": keys are per tube)\n"
    "  -t, --tube TUBE    with --key: the key's tube; with a state: that\n"
    "                     tube's next task\n"
    "      --ready        the next task a take would get\n"
    "      --delayed      the delayed task due soonest\n"
    "      --buried       the task buried longest\n"
    "      --done         the done task finished longest ago\n"
    "      --json         print the task as one JSON object; a payload "
    "that\n"
    "                     is not UTF-8 comes as \"payload_base64\" (base64)\n"
    "                     instead of \"payload\"\n";

static int
cmd_peek(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, OPT_KEY },
		TUBE_OPT,
		{ "ready", no_argument, NULL, OPT_READY },
		{ "delayed", no_argument, NULL, OPT_DELAYED },
		{ "buried", no_argument, NULL, OPT_BURIED },
		{ "done", no_argument, NULL, OPT_DONE },
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
		case OPT_DONE:
			if (state != 0)
				return cli_usage_error(cli,
				    "one of --ready, --delayed, --buried, "
				    "--done");
			state = ch == OPT_READY ? SLUICE_READY
			    : ch == OPT_DELAYED ? SLUICE_DELAYED
			    : ch == OPT_BURIED  ? SLUICE_BURIED
			                        : SLUICE_DONE;
			break;
		}
	}
	if (a.stop)
		return a.status;
	tg.sel = state != 0;
	if ((rc = parse_target(cli, argc, argv, &tg, "with a state",
	         "--ready, --delayed, --buried or --done")) != 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if (tg.key != NULL)
		rc = sluice_peek_key(cli->c, tg.tube, tg.key, &t);
	else if (tg.sel)
		rc = sluice_peek_next(cli->c, tg.tube, state, &t);
	else
		rc = sluice_peek(cli->c, tg.id, &t);
	if (rc != 0) {
		if (tg.key != NULL)
			return cli_fail(cli, rc, "peek --key %s -t %s", tg.key,
			    tg.tube ? tg.tube : "default");
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
	struct args a = { argc, argv, "t:h", opts };
	const char *tube = NULL;
	struct sluice_stats *s;
	bool hourly = false;
	int ch, rc;

	while ((ch = next_opt(cli, &a)) != -1) {
		if (ch == 't')
			tube = optarg;
		else if (ch == OPT_HOURLY)
			hourly = true;
	}
	if (a.stop)
		return a.status;
	if ((rc = no_operand_connect(cli, argc, argv)) != 0)
		return rc;
	if (hourly)
		return stats_hourly(cli, tube, a.json);
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
    "      --secs N      the last N seconds, 1..900 (default 60)\n"
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
	struct args a = { argc, argv, "t:h", opts };
	struct sluice_history *h;
	const char *tube = NULL;
	uint64_t secs = 60;
	int ch, rc;

	while ((ch = next_opt(cli, &a)) != -1) {
		if (ch == 't')
			tube = optarg;
		else if (ch == OPT_SECS &&
		    (rc = parse_u64(cli, "--secs", optarg, 1, 900, &secs)) != 0)
			return rc;
	}
	if (a.stop)
		return a.status;
	if ((rc = no_operand_connect(cli, argc, argv)) != 0)
		return rc;
	if ((rc = sluice_history(cli->c, tube, (uint32_t)secs, &h)) != 0)
		return tube ? cli_fail(cli, rc, "rates -t %s", tube)
		            : cli_fail(cli, rc, "rates");
	cli_print_history(stdout, h, a.json);
	sluice_history_free(h);
	return EXIT_OK;
}

static const char list_usage[] =
    "usage: sluice list -t TUBE [--state S] [--order O] [--limit N] "
    "[--after ID | --all] [--payloads] [--json]\n";
static const char list_help[] =
    "\nLists a tube's tasks.\n\n"
    "  -t, --tube TUBE     the tube\n"
    "      --state S       ready, delayed, taken, buried or done (default:\n"
    "                      all)\n"
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

static int
parse_state(const char *s)
{
	for (int st = SLUICE_READY; st <= SLUICE_DONE; st++)
		if (strcmp(s, sluice_state_name(st)) == 0)
			return st;
	return -1;
}

/* How many of the tube's tasks (in `state`, 0: any) a list of `n` left
 * out, from the tube's counts; 0 when it showed fewer than it could. */
static uint64_t
list_omitted(
    struct cli *cli, const char *tube, int state, size_t n, size_t limit)
{
	const struct sluice_tube_stats *ts = NULL;
	struct sluice_stats *st;
	uint64_t total = 0, done = 0;

	if (n < limit || sluice_stats(cli->c, tube, &st) != 0)
		return 0;
	for (size_t i = 0; i < st->ntubes; i++)
		if (strcmp(st->tubes[i].name, tube) == 0)
			ts = &st->tubes[i];
	if (ts != NULL && sluice_kv_get(ts->kv, ts->nkv, "done", &done) != 0)
		done = 0; /* a server that keeps no done tasks */
	if (ts != NULL)
		total = state == SLUICE_READY ? ts->ready
		    : state == SLUICE_DELAYED ? ts->delayed
		    : state == SLUICE_TAKEN   ? ts->taken
		    : state == SLUICE_BURIED  ? ts->buried
		    : state == SLUICE_DONE
		    ? done
		    : ts->ready + ts->delayed + ts->taken + ts->buried + done;
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
	struct args a = { argc, argv, "t:h", opts };
	const char *tube = NULL;
	int state = 0, order = 0, ch, rc;
	bool payloads = false, all = false, paged = false;
	uint64_t limit = 0, after = 0;
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
			if ((rc = parse_u64(cli, "--limit", optarg, 1,
			         SLUICE_LIST_MAX, &limit)) != 0)
				return rc;
			break;
		case OPT_AFTER:
			if ((rc = parse_u64(cli, "--after", optarg, 0,
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
	if ((rc = no_operand_connect(cli, argc, argv)) != 0)
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
 * pause TUBE DUR, snapshot, promote, follow URL, cluster. Returns -1 to go
 * on, or the command's exit code. */
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
		printf("paused %s until %s\n", argv[optind], when);
	else
		printf("resumed %s\n", argv[optind]);
	return EXIT_OK;
}

static const char tube_usage[] =
    "usage: sluice tube set TUBE [--ttr DUR] [--max-attempts N]\n"
    "                   [--backoff BASE,CAP] [--keep-done DUR]\n"
    "                   [--lost-lease immediate|backoff]\n"
    "                   [--dead-letter TUBE2] [--json]\n"
    "       sluice tube show TUBE [--json]\n"
    "       sluice tube delete TUBE [--force] [--json]\n";
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
    "      --force              delete: the tube's tasks too (else a tube\n"
    "                           with tasks is refused)\n"
    "      --json               print the settings as JSON (set, show), or\n"
    "                           {\"tube\":\"T\",\"deleted\":N} (delete)\n";

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
	    snap ? "snapshot written, up to lsn" : "promoted, epoch", v);
	return EXIT_OK;
}

static const char follow_usage[] = "usage: sluice follow URL [--json]\n";
static const char follow_help[] =
    "\nMakes the node at -s URL follow the leader whose replication URL is\n"
    "URL (the leader's --repl-listen).\n\n"
    "      --json   print {\"following\":URL}\n";

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
	if (json) {
		fputs("{\"following\":", stdout);
		cli_json_cstr(stdout, argv[optind]);
		fputs("}\n", stdout);
	} else {
		printf("following %s\n", argv[optind]);
	}
	return EXIT_OK;
}

/* ---- tokens --------------------------------------------------------- */

static const char token_usage[] =
    "usage: sluice token new NAME ROLE TUBES [--json]\n";
static const char token_help[] =
    "\nPrints a new random token (32 bytes, in hex) for sluiced --auth,\n"
    "and the line to add to its token file (the token's SHA-256 in place\n"
    "of the token): ROLE is producer, worker, admin, replica or monitor,\n"
    "TUBES `*`, a prefix and `*` (emails*) or one tube. Send SIGHUP to\n"
    "sluiced after changing the file. Talks to no server.\n\n"
    "      --json   print {\"token\":TOKEN,\"line\":LINE}\n";

static int
cmd_token(struct cli *cli, int argc, char **argv)
{
	char token[2 * 32 + 1], line[512], err[AUTH_ERR_MAX];
	uint8_t raw[32], hash[AUTH_HASH_LEN];
	struct auth check;
	bool json = false;
	int rc, n;

	if ((rc = simple_args(cli, argc, argv, 4, &json)) >= 0)
		return rc;
	if (strcmp(argv[optind], "new") != 0)
		return cli_usage_error(
		    cli, "unknown \"%s\" (token new)", argv[optind]);
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return cli_fail(cli, -errno, "token new: getrandom");
	for (size_t i = 0; i < sizeof(raw); i++)
		sprintf(token + 2 * i, "%02x", raw[i]);
	auth_sha256(token, strlen(token), hash);
	n = snprintf(line, sizeof(line), "%s %s %s ", argv[optind + 1],
	    argv[optind + 2], argv[optind + 3]);
	for (size_t i = 0; i < sizeof(hash) && n > 0 && n < 400; i++)
		n += snprintf(
		    line + n, sizeof(line) - (size_t)n, "%02x", hash[i]);
	/* the server's own parser says whether the line is good */
	if (auth_parse("line", line, strlen(line), &check, err) != 0)
		return cli_usage_error(cli, "%s", strchr(err, ' ') + 1);
	auth_free(&check);
	if (json) {
		fputs("{\"token\":", stdout);
		cli_json_cstr(stdout, token);
		fputs(",\"line\":", stdout);
		cli_json_cstr(stdout, line);
		fputs("}\n", stdout);
	} else {
		printf("token: %s\nline:  %s\n", token, line);
	}
	return EXIT_OK;
}

/* ---- automatic failover ----------------------------------------------- */

static const char cluster_usage[] = "usage: sluice cluster [--json]\n";
static const char cluster_help[] =
    "\nShows the cluster as the node at -s URL sees it in etcd (any node\n"
    "answers, leader or follower): one row per member, the leader marked\n"
    "\"*\": its role (leader, follower, candidate: no leader known yet,\n"
    "fenced: a leader that stopped writing), epoch, durable LSN, lag in\n"
    "records, SYNC (counted for --sync-replicas, so it may take over),\n"
    "the leader's lease and when the member last published its key. The\n"
    "node's last failed etcd call, if any, follows the table. A node\n"
    "started without --etcd answers that automatic failover is off.\n\n"
    "      --json   print {\"cluster\":NAME,\"node\":NAME,\"leader\":NAME,\n"
    "               \"ttl_ms\":N,\"etcd_error\":TEXT,\"members\":[...]}\n";

static int
cmd_cluster(struct cli *cli, int argc, char **argv)
{
	struct sluice_cluster *cl;
	bool json = false;
	int rc;

	if ((rc = simple_args(cli, argc, argv, 0, &json)) >= 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_cluster(cli->c, &cl)) != 0)
		return cli_fail(cli, rc, "cluster");
	cli_print_cluster(stdout, cl, json);
	sluice_cluster_free(cl);
	return EXIT_OK;
}

static const char switchover_usage[] =
    "usage: sluice switchover NODE [--timeout DUR] [--json]\n";
static const char switchover_help[] =
    "\nHands the leadership to the member NODE (its --node): the leader "
    "stops\ntaking writes, waits until NODE holds everything it wrote, "
    "then lets\nonly NODE take its lease; prints the new leader once NODE "
    "leads. Sent\nto a follower, it goes to the leader.\n\n"
    "      --timeout DUR   how long the leader waits for NODE to catch up\n"
    "                      (default: the server's); past it, the old\n"
    "                      leader keeps leading\n"
    "      --json          print {\"node\":NODE,\"leader\":URL,"
    "\"epoch\":N}\n";

static int
cmd_switchover(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		COMMON_OPTS,
	};
	struct args a = { argc, argv, "h", opts };
	struct sluice_switchover_result res;
	uint64_t ms = 0;
	const char *node;
	int ch, rc;

	while ((ch = next_opt(cli, &a)) != -1) {
		if (ch == OPT_TIMEOUT &&
		    (rc = cli_parse_ms(cli, "--timeout", optarg, 1, &ms)) != 0)
			return rc;
	}
	if (a.stop)
		return a.status;
	if (argc - optind != 1)
		return cli_usage_error(cli, "one NODE is needed");
	node = argv[optind];
	if (node[0] == '\0' || strlen(node) > SLUICE_NODE_MAX)
		return cli_usage_error(cli,
		    "NODE is a member's name (its --node), 1-64 bytes; not "
		    "\"%s\"",
		    node);
	if (ms > UINT32_MAX)
		return cli_usage_error(cli, "--timeout is at most 49d");
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_switchover(cli->c, node, (uint32_t)ms, &res)) != 0)
		return cli_fail(cli, rc, "switchover %s", node);
	if (a.json) {
		fputs("{\"node\":", stdout);
		cli_json_cstr(stdout, node);
		fputs(",\"leader\":", stdout);
		cli_json_cstr(stdout, res.leader);
		printf(",\"epoch\":%" PRIu64 "}\n", res.epoch);
	} else {
		printf("%s leads now (epoch %" PRIu64 ", %s)\n", node,
		    res.epoch, res.leader);
	}
	return EXIT_OK;
}

/* ---- main
 * --------------------------------------------------------------------- */

static const char work_usage[] =
    "usage: sluice work -t TUBE [-c N] [--max-tasks N] [--wait DUR] -- CMD "
    "[ARGS...]\n";
static const char work_help[] =
    "\nRuns CMD once per task of TUBE, with the payload on its standard "
    "input,\nup to N at once (a CMD that cannot be run is refused before any "
    "task\nis taken). CMD's exit status decides: 0 acks the task; "
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
	{ "update", cmd_update, update_usage, update_help },
	{ "kick", cmd_kick, kick_usage, kick_help },
	{ "delete", cmd_delete, delete_usage, delete_help },
	{ "peek", cmd_peek, peek_usage, peek_help },
	{ "stats", cmd_stats, stats_usage, stats_help },
	{ "list", cmd_list, list_usage, list_help },
	{ "errors", cmd_errors, errors_usage, errors_help },
	{ "rates", cmd_rates, rates_usage, rates_help },
	{ "pause", cmd_pause, pause_usage, pause_help },
	{ "tube", cmd_tube, tube_usage, tube_help },
	{ "snapshot", cmd_node, snapshot_usage, snapshot_help },
	{ "promote", cmd_node, promote_usage, promote_help },
	{ "follow", cmd_follow, follow_usage, follow_help },
	{ "cluster", cmd_cluster, cluster_usage, cluster_help },
	{ "switchover", cmd_switchover, switchover_usage, switchover_help },
	{ "work", cmd_work, work_usage, work_help },
	{ "token", cmd_token, token_usage, token_help },
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

static const struct command *
find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/* `sluice help` and `sluice help COMMAND`: the same as --help. */
static int
cmd_help(int argc, char **argv)
{
	const struct command *cmd;

	if (argc == 1) {
		printf("%s%s", main_usage, main_help);
		return EXIT_OK;
	}
	if (argc > 2)
		return main_usage_error("help: one COMMAND at most");
	if ((cmd = find_command(argv[1])) == NULL)
		return main_usage_error(
		    "help: unknown command \"%s\"", argv[1]);
	printf("%s%s", cmd->usage, cmd->help);
	return EXIT_OK;
}

/* The first line of `path`, its blanks cut, or NULL (said why). */
static const char *
read_token(const char *path)
{
	static char token[AUTH_TOKEN_MAX + 2];
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
	if (n == 0 || n > AUTH_TOKEN_MAX) {
		fprintf(stderr,
		    "sluice: --token-file %s: its first line is not a token "
		    "(1-%d bytes)\n",
		    path, AUTH_TOKEN_MAX);
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
		case OPT_TOKEN_FILE:
			if ((cli.token = read_token(optarg)) == NULL)
				return EXIT_ERR;
			break;
		case OPT_TIMEOUT:
			if (dur_parse(optarg, &ms) != 0 || ms > INT32_MAX)
				return main_usage_error(
				    "--timeout takes a duration: milliseconds, "
				    "or a number with ms, s, m, h or d (500, "
				    "2s, 1.5m, 1h, 30d); not \"%s\"",
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
	if ((cur_cmd = find_command(argv[optind])) == NULL)
		return main_usage_error("unknown command \"%s\"", argv[optind]);
	cli.cmd = cur_cmd->name;
	argv += optind;
	argc -= optind;
	snprintf(prog, sizeof(prog), "sluice %s", cli.cmd);
	argv[0] = prog;
	optind = 0; /* restart getopt: the command's options follow its name */
	rc = cur_cmd->run(&cli, argc, argv);
	sluice_close(cli.c);
	return rc;
}
