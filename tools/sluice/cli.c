/* cli - what every command of the sluice tool shares: opening the client
 * once (cli_connect), the messages of errors and of bad usage, the help of
 * the command being run, the option loop every command reads its options
 * with (cli_next_opt), the results that are one number, and the parsing
 * of the numbers, durations, ids and states operands hold. The commands
 * live one family a file (cli_put.c, cli_lease.c, ...); main.c finds the
 * one typed and runs it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_util.h"
#include "util/dur.h"
#include "util/tokens.h"

bool
cli_routed(const struct cli *cli)
{
	return cli->map ||
	    (cli->urls != NULL && strncmp(cli->urls, "etcd://", 7) == 0);
}

/* Opens the routing handle of map mode. */
static int
open_router(struct cli *cli)
{
	int rc;

	if (cli->r != NULL)
		return 0;
	if (cli->urls == NULL) {
		fprintf(stderr,
		    "sluice: --map needs -s: etcd://HOST:PORT or "
		    "any node's URL\n");
		return EXIT_USAGE;
	}
	if ((rc = sluice_open_map(cli->urls, &cli->r)) != 0) {
		fprintf(stderr,
		    "sluice: bad map source \"%s\": %s (expected "
		    "etcd://HOST:PORT[,HOST:PORT...] or node URLs)\n",
		    cli->urls, sluice_strerror(rc));
		return EXIT_ERR;
	}
	if (cli->token != NULL && sluice_router_set_token(cli->r, cli->token))
		return EXIT_USAGE;
	if (cli->timeout_ms >= 0)
		sluice_router_set_timeout(
		    cli->r, cli->timeout_ms == 0 ? -1 : cli->timeout_ms);
	return 0;
}

int
cli_connect_routed(struct cli *cli)
{
	if (!cli_routed(cli) || cli->cluster != NULL)
		return cli_connect(cli);
	return open_router(cli);
}

int
cli_connect(struct cli *cli)
{
	int rc;

	if (cli->c != NULL)
		return 0;
	if (cli_routed(cli)) {
		if (cli->cluster == NULL) {
			fprintf(stderr,
			    "sluice: %s: with a cluster map (-s etcd://... or "
			    "--map), name the cluster to ask: --cluster NAME "
			    "(put, take, stats and map route by tube)\n",
			    cli->cmd);
			return EXIT_USAGE;
		}
		if ((rc = open_router(cli)) != 0)
			return rc;
		if ((rc = sluice_router_cluster(
		         cli->r, cli->cluster, &cli->c)) != 0) {
			fprintf(stderr, "sluice: cluster %s: %s\n",
			    cli->cluster, sluice_router_errmsg(cli->r));
			return EXIT_ERR;
		}
		return 0;
	}
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
		    TOKENS_TOKEN_MAX);
		return EXIT_USAGE;
	}
	/* a person asking a server that is not running hears so at once,
	 * not after the whole connect timeout */
	sluice_set_refused_retry(cli->c, CLI_REFUSED_MS);
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
	const char *detail = cli->c ? sluice_errmsg(cli->c)
	    : cli->r                ? sluice_router_errmsg(cli->r)
	                            : "";
	const char *name = sluice_strerror(rc);
	const char *at = strstr(detail, name);
	va_list ap;

	fputs("sluice: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (detail[0] == '\0')
		fprintf(stderr, ": %s\n", name);
	else if (at != NULL || rc == SLUICE_ETUBE)
		fprintf(stderr, ": %s\n", at != NULL ? at : detail);
	else if (rc != SLUICE_ECONN && rc != SLUICE_ETIMEDOUT &&
	    (at = strstr(detail, ": ")) != NULL)
		fprintf(stderr, ": %s\n", at + 2); /* the why, not the where */
	else
		fprintf(stderr, ": %s\n", detail);
	if (rc == SLUICE_ECONN && !cli->hinted &&
	    strstr(detail, "connection refused") != NULL) {
		cli->hinted = true; /* once, however often `work` retries */
		fprintf(stderr,
		    "sluice: is sluiced running at %s? (`make run` starts "
		    "one at " SLUICE_DEFAULT_URL "; -s URL or $SLUICE_URL "
		    "names another server)\n",
		    sluice_url(cli->c));
	}
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
cli_help(struct cli *cli)
{
	cli_print_help(cli->command);
	return EXIT_OK;
}

int
cli_bad_option(struct cli *cli)
{
	fprintf(stderr, "Try 'sluice %s --help'.\n", cli->cmd);
	return EXIT_USAGE;
}

/* The next of the command's own options, for its switch; -1 when there
 * are no more. Handles what every command's options share: --json sets
 * `a->json`; --help prints the help, and an option the command does not
 * have the usage, and both set `a->stop`. */
int
cli_next_opt(struct cli *cli, struct cli_args *a)
{
	int ch;

	for (;;) {
		ch = getopt_long(a->argc, a->argv, a->shorts, a->longs, NULL);
		if (ch == OPT_JSON) {
			a->json = true;
			continue;
		}
		if (ch == OPT_HELP || ch == '?') {
			a->status = ch == OPT_HELP ? cli_help(cli)
			                           : cli_bad_option(cli);
			a->stop = true;
			return -1;
		}
		return ch;
	}
}

/* After the options of a command that takes no operand: the usage error
 * for one, or else connects. */
int
cli_no_operand_connect(struct cli *cli, int argc, char **argv)
{
	if (optind != argc)
		return cli_usage_error(cli, "unexpected \"%s\"", argv[optind]);
	return cli_connect(cli);
}

/* A result that is one number: {"KEY":N} with --json, else "TEXT N". */
void
cli_print_number(bool json, const char *key, const char *text, uint64_t v)
{
	if (json)
		printf("{\"%s\":%" PRIu64 "}\n", key, v);
	else
		printf("%s %" PRIu64 "\n", text, v);
}

/* A count of tasks: {"KEY":N} with --json, else "VERB N task(s)". */
void
cli_print_count(bool json, const char *key, const char *verb, uint64_t v)
{
	if (json)
		printf("{\"%s\":%" PRIu64 "}\n", key, v);
	else
		printf("%s %" PRIu64 " task%s\n", verb, v, v == 1 ? "" : "s");
}

int
cli_parse_id(struct cli *cli, const char *s, uint64_t *id)
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
	char lo[32], hint[128];
	uint64_t v;
	int rc = dur_parse(s, &v);

	if (rc == DUR_EBARE) {
		dur_hint(hint, sizeof(hint), s);
		return cli_usage_error(
		    cli, "%s %s: a duration needs a unit: %s", opt, s, hint);
	}
	dur_fmt(lo, sizeof(lo), min);
	if (rc != 0 || v < min)
		return cli_usage_error(cli,
		    "%s takes a duration%s%s: " DUR_SYNTAX "; not \"%s\"", opt,
		    min ? " of at least " : "", min ? lo : "", s);
	*ms = v;
	return 0;
}

int
cli_task_opt(struct cli *cli, int ch, const char *arg, struct cli_task_opts *t)
{
	switch (ch) {
	case 'p':
		t->has_priority = true;
		return cli_parse_num(
		    cli, "-p", arg, 0, UINT32_MAX, &t->priority);
	case OPT_DELAY:
		t->has_delay = true;
		return cli_parse_ms(cli, "--delay", arg, 0, &t->delay_ms);
	case OPT_AT:
		return cli_parse_num(
		    cli, "--at", arg, 1, UINT64_MAX, &t->run_at);
	case OPT_TTR:
		t->has_ttr = true;
		return cli_parse_ms(cli, "--ttr", arg, 0, &t->ttr_ms);
	case OPT_MAX_ATTEMPTS:
		t->has_max_attempts = true;
		return cli_parse_num(cli, "--max-attempts", arg, 0, UINT32_MAX,
		    &t->max_attempts);
	default:
		return -1;
	}
}

/* Commands with no options but --json and --help, and their operands:
 * pause TUBE DUR, snapshot, promote, follow URL, cluster. Returns -1 to go
 * on, or the command's exit code. */
int
cli_simple_args(struct cli *cli, int argc, char **argv, int nargs, bool *json)
{
	static const struct option opts[] = { COMMON_OPTS };
	struct cli_args a = { argc, argv, "h", opts };

	while (cli_next_opt(cli, &a) != -1)
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

int
cli_parse_state(const char *s)
{
	for (int st = SLUICE_READY; st <= SLUICE_WAITING; st++)
		if (strcmp(s, sluice_state_name(st)) == 0)
			return st;
	return -1;
}

enum {
	/* The most a payload may be: sluiced's --max-payload is at most 64
	 * MiB. What is longer is refused here, before it fills memory. */
	PAYLOAD_READ_MAX = 64 << 20,
};

/* The payload of `put -` (stdin, `file` NULL) or `put --file FILE`, bytes
 * as they are. Returns 0 and a malloc'd `*out` of `*len` bytes, or prints
 * why and returns EXIT_ERR. */
int
cli_read_payload(const char *file, char **out, size_t *len)
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
