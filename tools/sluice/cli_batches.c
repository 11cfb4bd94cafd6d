/* cli_batches - `sluice batch show|set|close NAME` and `sluice batch
 * list`: a batch's counts by state, its callbacks, its close, the
 * batches the server holds (sluice_batch.h). Tasks join a batch
 * with `sluice put --batch NAME`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "json/json.h"

static const char batch_usage[] =
    "usage: sluice batch show NAME [--json]\n"
    "       sluice batch set NAME [--on-success TUBE[:PAYLOAD]]\n"
    "                [--on-complete TUBE[:PAYLOAD]] [--close] [--json]\n"
    "       sluice batch close NAME [--json]\n"
    "       sluice batch cancel NAME [--json]\n"
    "       sluice batch list [--limit N] [--json]\n";
static const char batch_help[] =
    "\nTasks put with --batch NAME form a batch. Once closed (batch close,\n"
    "or set --close) it takes no more tasks (a put into it is refused)\n"
    "and it ends when none of its tasks is live: each was acked or failed\n"
    "for good (buried, dead-lettered, deleted, cancelled); a closed batch\n"
    "with no live task ends at once. Then its callbacks are put, once\n"
    "across restarts and failovers: on_success when every task was\n"
    "acked, on_complete in any case, each a task in its TUBE whose\n"
    "payload is a JSON object of the batch's counts with PAYLOAD as its\n"
    "\"payload\" string. An ended batch is kept, for show, the server's\n"
    "dedup window (10 minutes by default); then its name is free again.\n"
    "batch cancel closes it and cancels each of its live tasks as `sluice\n"
    "cancel` does (a taken one goes when its lease ends, its worker's\n"
    "touch refused with \"cancelled\"): it ends as its last task goes,\n"
    "and on_complete is put (on_success is not).\n\n"
    "      --on-success TUBE[:PAYLOAD]   the callback when every task was\n"
    "                                    acked (TUBE '' removes it)\n"
    "      --on-complete TUBE[:PAYLOAD]  the callback when every task\n"
    "                                    ended, acked or failed\n"
    "      --close                       close it, after setting them\n"
    "      --limit N                     list: at most N batches (1-1000;\n"
    "                                    100), the open ones first\n"
    "      --json                        print the batch as JSON\n";

enum { OPT_ON_SUCCESS = 1000, OPT_ON_COMPLETE, OPT_CLOSE };

/* A batch as JSON, as GET /v1/batches/NAME answers it (no newline). */
static void
print_batch_json(const struct sluice_batch *b)
{
	printf("{\"name\":");
	json_cstr(stdout, b->name);
	printf(",\"total\":%" PRIu64 ",\"waiting\":%" PRIu64
	       ",\"ready\":%" PRIu64 ",\"delayed\":%" PRIu64
	       ",\"taken\":%" PRIu64 ",\"buried\":%" PRIu64
	       ",\"acked\":%" PRIu64 ",\"failed\":%" PRIu64
	       ",\"started_at\":%" PRIu64 ",\"ended_at\":%" PRIu64
	       ",\"closed\":%s,\"ended\":%s",
	    b->total, b->waiting, b->ready, b->delayed, b->taken, b->buried,
	    b->acked, b->failed, b->started_at, b->ended_at,
	    b->closed ? "true" : "false", b->ended ? "true" : "false");
	printf(",\"on_success\":");
	if (b->success_tube[0] != '\0') {
		printf("{\"tube\":");
		json_cstr(stdout, b->success_tube);
		printf(",\"task\":%" PRIu64 "}", b->success_id);
	} else
		printf("null");
	printf(",\"on_complete\":");
	if (b->complete_tube[0] != '\0') {
		printf("{\"tube\":");
		json_cstr(stdout, b->complete_tube);
		printf(",\"task\":%" PRIu64 "}", b->complete_id);
	} else
		printf("null");
	printf("}");
}

/* A callback's line: its tube, and the task it put ("not put yet"
 * before the batch ends). */
static void
callback_text(const char *which, const char *tube, uint64_t id)
{
	if (id != 0)
		printf("  %s -> %s (task %" PRIu64 ")\n", which, tube, id);
	else
		printf("  %s -> %s (not put yet)\n", which, tube);
}

static void
print_batch(const struct sluice_batch *b, bool json)
{
	char started[64], ended[64];

	if (json) {
		print_batch_json(b);
		printf("\n");
		return;
	}
	printf("batch %s: %s\n", b->name,
	    b->ended        ? "ended"
	        : b->closed ? "closed"
	                    : "open");
	printf("  total %" PRIu64 "  waiting %" PRIu64 "  ready %" PRIu64
	       "  delayed %" PRIu64 "  taken %" PRIu64 "\n",
	    b->total, b->waiting, b->ready, b->delayed, b->taken);
	printf("  acked %" PRIu64 "  buried %" PRIu64 "  failed %" PRIu64 "\n",
	    b->acked, b->buried, b->failed);
	cli_fmt_time(started, sizeof(started), b->started_at);
	cli_fmt_time(ended, sizeof(ended), b->ended_at);
	printf("  started_at %s  ended_at %s\n", started, ended);
	if (b->success_tube[0] != '\0')
		callback_text("on_success", b->success_tube, b->success_id);
	if (b->complete_tube[0] != '\0')
		callback_text("on_complete", b->complete_tube, b->complete_id);
}

/* TUBE[:PAYLOAD] into `cb` (borrowing `arg`, cut at the colon). */
static void
callback_arg(char *arg, struct sluice_batch_callback *cb)
{
	char *colon = strchr(arg, ':');

	/* a tube name may hold ':' too: the payload starts at the last
	 * colon only when the text after it is no tube name part... keep it
	 * simple and documented: the first colon ends the tube */
	cb->tube = arg;
	cb->payload = NULL;
	cb->len = 0;
	if (colon != NULL) {
		*colon = '\0';
		cb->payload = colon + 1;
		cb->len = strlen(colon + 1);
	}
}

/* `batch list`: one line a batch ("NAME  open  3 of 10 done ..."), or
 * with --json {"batches":[...],"total":N} as GET /v1/batches. */
static int
batch_list(struct cli *cli, uint32_t limit, bool json)
{
	struct sluice_batch *v = NULL;
	uint64_t total = 0;
	size_t n = 0;
	int rc;

	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_batch_list(cli->c, limit, &v, &n, &total)) != 0)
		return cli_fail(cli, rc, "batch list");
	if (json) {
		printf("{\"batches\":[");
		for (size_t i = 0; i < n; i++) {
			if (i > 0)
				printf(",");
			print_batch_json(&v[i]);
		}
		printf("],\"total\":%" PRIu64 "}\n", total);
	} else {
		for (size_t i = 0; i < n; i++) {
			const struct sluice_batch *b = &v[i];
			uint64_t done = b->acked + b->buried + b->failed;

			printf("%-24s %-6s %" PRIu64 " of %" PRIu64
			       " done (acked %" PRIu64 ", failed %" PRIu64
			       "), live: waiting %" PRIu64 " ready %" PRIu64
			       " delayed %" PRIu64 " taken %" PRIu64 "\n",
			    b->name,
			    b->ended        ? "ended"
			        : b->closed ? "closed"
			                    : "open",
			    done, b->total, b->acked, b->buried + b->failed,
			    b->waiting, b->ready, b->delayed, b->taken);
		}
		if (total > n)
			printf("(%zu of %" PRIu64
			       " batches: --limit for more)\n",
			    n, total);
		else if (n == 0)
			printf("no batches\n");
	}
	free(v);
	return EXIT_OK;
}

static int
cmd_batch(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "on-success", required_argument, NULL, OPT_ON_SUCCESS },
		{ "on-complete", required_argument, NULL, OPT_ON_COMPLETE },
		{ "close", no_argument, NULL, OPT_CLOSE },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "h", opts };
	struct sluice_batch_callback s, k;
	struct sluice_batch b;
	bool has_s = false, has_k = false, close = false, has_limit = false;
	const char *verb, *name;
	uint64_t limit = 100;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		switch (ch) {
		case OPT_ON_SUCCESS:
			callback_arg(optarg, &s);
			has_s = true;
			break;
		case OPT_ON_COMPLETE:
			callback_arg(optarg, &k);
			has_k = true;
			break;
		case OPT_CLOSE:
			close = true;
			break;
		case OPT_LIMIT:
			if ((rc = cli_parse_num(
			         cli, "--limit", optarg, 1, 1000, &limit)) != 0)
				return rc;
			has_limit = true;
			break;
		default:
			return cli_usage_error(cli, "batch: unknown option");
		}
	}
	if (a.stop)
		return a.status;
	if (optind < argc && strcmp(argv[optind], "list") == 0) {
		if (optind + 1 != argc)
			return cli_usage_error(cli, "batch list: no NAME");
		if (has_s || has_k || close)
			return cli_usage_error(
			    cli, "batch list: only --limit and --json");
		return batch_list(cli, (uint32_t)limit, a.json);
	}
	if (has_limit)
		return cli_usage_error(cli, "batch: --limit is list's");
	if (optind + 2 != argc)
		return cli_usage_error(cli,
		    "batch: give show, set, close or cancel, and one NAME (or "
		    "list)");
	verb = argv[optind];
	name = argv[optind + 1];
	if (strcmp(verb, "show") != 0 && strcmp(verb, "set") != 0 &&
	    strcmp(verb, "close") != 0 && strcmp(verb, "cancel") != 0)
		return cli_usage_error(
		    cli, "batch: '%s' is not show, set, close or cancel", verb);
	if (strcmp(verb, "set") != 0 && (has_s || has_k || close))
		return cli_usage_error(
		    cli, "batch %s: only set takes those options", verb);
	if (strcmp(verb, "set") == 0 && !has_s && !has_k && !close)
		return cli_usage_error(cli,
		    "batch set: give --on-success, --on-complete or --close");
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if (strcmp(verb, "show") == 0)
		rc = sluice_batch_show(cli->c, name, &b);
	else if (strcmp(verb, "close") == 0)
		rc = sluice_batch_set(cli->c, name, NULL, NULL, 1, &b);
	else if (strcmp(verb, "cancel") == 0)
		rc = sluice_batch_cancel(cli->c, name, &b);
	else
		rc = sluice_batch_set(cli->c, name, has_s ? &s : NULL,
		    has_k ? &k : NULL, close, &b);
	if (rc != 0)
		return cli_fail(cli, rc, "batch %s %s", verb, name);
	print_batch(&b, a.json);
	return EXIT_OK;
}

CLI_COMMAND(batch, cmd_batch);
