/* cli - what the files of the sluice command-line tool share: the state of
 * one invocation, the table entry of a command, the options the commands'
 * tables share and the loop that reads them, error reporting, parsing of
 * operands (cli.c) and the output of results (cli_print.c). The tool talks
 * to servers through libsluice's public API only (sluice.h); besides it, it
 * links the token file's module (util/tokens.h, for `sluice token new`),
 * the JSON of results it shares with the server's HTTP face
 * (json/json.h) and util's durations. */
#ifndef SLUICE_TOOLS_CLI_H
#define SLUICE_TOOLS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sluice.h"

/* Exit codes. */
enum {
	EXIT_OK = 0,
	EXIT_ERR = 1,
	EXIT_USAGE = 2,
	EXIT_EMPTY = 3, /* nothing to take before the timeout */
};

struct cli_command;

struct cli {
	const char *urls;        /* -s, $SLUICE_URL, or NULL for the default */
	const char *token;       /* --token-file's, or $SLUICE_TOKEN; NULL */
	int timeout_ms;          /* --timeout; < 0: the library's default */
	const char *tls_ca;      /* --tls-ca, $SLUICE_TLS_CA; NULL: none */
	const char *tls_cert;    /* --tls-cert, $SLUICE_TLS_CERT */
	const char *tls_key;     /* --tls-key, $SLUICE_TLS_KEY */
	struct sluice_client *c; /* opened by cli_connect() */
	/* Routing by the cluster map (docs/scaling.md): -s etcd://... or
	 * --map; the routed commands (put, take, stats, map) send each
	 * request to its tube's cluster, the others to --cluster's. */
	bool map;
	const char *cluster;     /* --cluster NAME */
	struct sluice_router *r; /* opened by cli_connect*() in map mode */
	const char *cmd;         /* the command, for messages */
	const struct cli_command *command; /* the one being run */
	bool hinted; /* the hint of a refused connection was given */
};

/* `stats` in map mode: every cluster's totals and their sum
 * (cli_map.c). */
int cli_map_stats(struct cli *cli, const char *tube, bool json);

/* `tube move TUBE CLUSTER` (cli_move.c), from cmd_tube. */
int cli_tube_move(struct cli *cli, int argc, char **argv);

/* Map mode: -s etcd://... or --map. */
bool cli_routed(const struct cli *cli);

/* For a routed command: in map mode without --cluster, opens the routing
 * handle (cli->r, cli->c stays NULL); otherwise cli_connect. */
int cli_connect_routed(struct cli *cli);

/* How long a refused connection is tried again: a person asking a server
 * that is not running hears so at once (`sluice work` keeps the library's
 * default, which waits for a server that is restarting). */
enum { CLI_REFUSED_MS = 250 };

/* A command: its name, what runs it and its help, defined in the file of
 * its family beside its code; main.c's table lists them. */
struct cli_command {
	const char *name;
	int (*run)(struct cli *cli, int argc, char **argv);
	const char *usage; /* one or more "usage:" lines */
	const char *help;  /* the options, after the usage */
};

/* Defines cli_cmd_NAME, the command `NAME` run by `run`, its help the
 * file's NAME_usage and NAME_help. */
#define CLI_COMMAND(name, run)                                                 \
	const struct cli_command cli_cmd_##name = { #name, run, name##_usage,  \
		name##_help }

extern const struct cli_command cli_cmd_put, cli_cmd_take, cli_cmd_ack,
    cli_cmd_release, cli_cmd_fail, cli_cmd_touch, cli_cmd_bury, cli_cmd_update,
    cli_cmd_kick, cli_cmd_delete, cli_cmd_peek, cli_cmd_stats, cli_cmd_list,
    cli_cmd_groups, cli_cmd_group, cli_cmd_errors, cli_cmd_rates, cli_cmd_pause,
    cli_cmd_tube, cli_cmd_snapshot, cli_cmd_promote, cli_cmd_follow,
    cli_cmd_cluster, cli_cmd_switchover, cli_cmd_work, cli_cmd_token,
    cli_cmd_schedule, cli_cmd_wait, cli_cmd_cancel, cli_cmd_map, cli_cmd_batch;

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
	OPT_GROUP,
	OPT_EVERY,
	OPT_AFTER_ID, /* put: its parents */
	OPT_AFTER_KEY,
	OPT_ON_PARENT_FAILURE,
	OPT_BATCH, /* put: the batch it joins */
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
	OPT_CREATED_BEFORE, /* delete: by creation */
	OPT_FRONT,          /* release: back at its place */
	OPT_PAUSE_OK,       /* work: pauses */
	OPT_PAUSE_ERROR,
	OPT_PAUSE_EMPTY,
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
	OPT_MAP,
	OPT_CLUSTER,
	OPT_DRAINING,
	OPT_AFTER,
	OPT_ERROR,    /* kick: an error group */
	OPT_DRY_RUN,  /* kick, delete: count only */
	OPT_DEBOUNCE, /* put: deduplication modes */
	OPT_THROTTLE,
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

/* The options of a task that put and update share, in their tables. */
#define TASK_OPTS                                                              \
	{ "priority", required_argument, NULL, 'p' },                          \
	    { "delay", required_argument, NULL, OPT_DELAY },                   \
	    { "at", required_argument, NULL, OPT_AT },                         \
	    { "ttr", required_argument, NULL, OPT_TTR },                       \
	{                                                                      \
		"max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS      \
	}

/* What those options gave: each value with whether it was given (run_at
 * 0: --at was not). */
struct cli_task_opts {
	uint64_t priority, delay_ms, run_at, ttr_ms, max_attempts;
	bool has_priority, has_delay, has_ttr, has_max_attempts;
};

/* A command's arguments, read with getopt_long over its table. */
struct cli_args {
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
int cli_next_opt(struct cli *cli, struct cli_args *a);

/* Option `ch` of a command's loop when it is one of TASK_OPTS: 0 with
 * its value in `t`, or the usage error's exit code; -1 for any other
 * option, which the command reads itself. */
int cli_task_opt(
    struct cli *cli, int ch, const char *arg, struct cli_task_opts *t);

/* Commands with no options but --json and --help, and their operands:
 * pause TUBE DUR, snapshot, promote, follow URL, cluster, token. Returns
 * -1 to go on, or the command's exit code. */
int cli_simple_args(
    struct cli *cli, int argc, char **argv, int nargs, bool *json);

/* After the options of a command that takes no operand: the usage error
 * for one, or else connects. */
int cli_no_operand_connect(struct cli *cli, int argc, char **argv);

/* A task id (a whole number from 1): 0 and `*id`, or the usage error. */
int cli_parse_id(struct cli *cli, const char *s, uint64_t *id);

/* The state named `s` (SLUICE_READY .. SLUICE_DONE), or -1. */
int cli_parse_state(const char *s);

/* The payload of `put -` or `update -` (stdin, `file` NULL), or of
 * --file FILE, bytes as they are. Returns 0 and a malloc'd `*out` of
 * `*len` bytes, or prints why and returns EXIT_ERR. */
int cli_read_payload(const char *file, char **out, size_t *len);

/* A result that is one number: {"KEY":N} with --json, else "TEXT N". */
void cli_print_number(bool json, const char *key, const char *text, uint64_t v);

/* A count of tasks: {"KEY":N} with --json, else "VERB N task(s)". */
void cli_print_count(bool json, const char *key, const char *verb, uint64_t v);

/* Opens the client once. Returns 0, or prints why and returns EXIT_ERR. */
int cli_connect(struct cli *cli);

/* "sluice: WHAT: ERROR (DETAIL)" on stderr, WHAT printf-style; returns
 * EXIT_ERR. DETAIL is the library's message when it adds to the error's
 * name. */
int cli_fail(struct cli *cli, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "sluice: COMMAND: MESSAGE" and a hint ("Try 'sluice COMMAND --help'")
 * on stderr, as getopt tools do; returns EXIT_USAGE. */
int cli_usage_error(struct cli *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A whole number in [min, max] for option `opt`: 0 and `*out`, or the
 * usage error ("OPT takes a whole number from MIN to MAX, not "S""). */
int cli_parse_num(struct cli *cli, const char *opt, const char *s, uint64_t min,
    uint64_t max, uint64_t *out);

/* A duration (util/dur.h) of at least `min` ms for option `opt`: 0 and
 * `*ms`, or the usage error. */
int cli_parse_ms(struct cli *cli, const char *opt, const char *s, uint64_t min,
    uint64_t *ms);

/* Prints the current command's usage and help; returns EXIT_OK. */
int cli_help(struct cli *cli);

/* ---- help (cli_examples.c) ------------------------------------------- */

/* The examples of command `name`'s help (a transcript, each line indented
 * two blanks), or NULL when it has none. */
const char *cli_examples(const char *name);

/* `sluice help COMMAND`: the usage, the help, then the examples. */
void cli_print_help(const struct cli_command *cmd);

/* After getopt_long complained about an option: the hint, EXIT_USAGE. */
int cli_bad_option(struct cli *cli);

/* ---- output (cli_print.c) -------------------------------------------------
 */

/* One task: a JSON object on one line, or aligned "name value" lines. */
void cli_print_task(FILE *f, const struct sluice_task *t, bool json);

/* One task as a JSON object, no newline after it. */
void cli_print_task_json(FILE *f, const struct sluice_task *t);

/* list's result: {"tasks":[...],"omitted":N} or a table, then how many
 * were left out (`omitted`) and how to see them. */
void cli_print_task_list(FILE *f, const struct sluice_task *t, size_t n,
    uint64_t omitted, bool json);

/* A list printed in pages (--after, --all): the head ('{"tasks":[' or
 * the table's header), then the rows of each page (`first`: no comma
 * before the first JSON object), then the end: '],"next":ID}' (null when
 * no page follows) or, in text, how to see the next page. */
void cli_print_list_head(FILE *f, bool json);
void cli_print_list_rows(
    FILE *f, const struct sluice_task *t, size_t n, bool json, bool first);
void cli_print_list_next(FILE *f, uint64_t next, bool json);

/* The table of counts, then the settings tubes set themselves. */
void cli_print_stats(FILE *f, const struct sluice_stats *s, bool json);

/* Setting `i` (the bit 1 << i of SLUICE_TS_*) for people: "30s", "5",
 * "1s, doubling, at most 1h", ... */
void cli_tube_setting_text(
    const struct sluice_tube_conf *c, unsigned i, char *out, size_t n);

/* A tube's flow limits and where they stand, as tube show prints them. */
void cli_print_limits(const struct sluice_limits *l);

void cli_print_errors(
    FILE *f, const struct sluice_error_count *e, size_t n, bool json);

/* rates: per kind of event its count, average and peak per second. */
void cli_print_history(FILE *f, const struct sluice_history *h, bool json);

/* stats --hourly: one row per hour, newest first. */
void cli_print_hourly(
    FILE *f, const struct sluice_hour *h, size_t n, bool json);

/* cluster: a line naming the cluster, the node that answered and the
 * leader, then a row per member (NAME ROLE EPOCH LSN LAG SYNC LEASE SEEN,
 * the leader marked "*"), then the node's last etcd error when there is
 * one; or the JSON object. */
void cli_print_cluster(FILE *f, const struct sluice_cluster *c, bool json);

/* What a lease operation or kick --id did: JSON ({"id":N,"state":...}),
 * or one line for people, the verb (past tense) first: "acked 42",
 * "failed 42, retry at TIME (in 2s)", "touched 42, leased until TIME".
 * `to` is ack --to's tube, else NULL. */
void cli_print_after(FILE *f, const char *verb, const struct sluice_after *a,
    const char *to, bool json);

/* ---- the batch forms of ack and delete (cli_batch.c) ------------------ */

/* ack ID:LEASE... (`ack` true) or delete ID... (more than one). */
int cli_batch_operands(
    struct cli *cli, char **args, size_t nargs, bool ack, bool json);

/* ack --lines: "ID LEASE" per line of stdin. */
int cli_ack_lines(struct cli *cli, bool json);

#endif
