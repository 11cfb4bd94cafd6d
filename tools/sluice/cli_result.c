/* cli_result - `sluice wait ID` (how a task ended, waiting for it) and
 * `sluice cancel ID...`. wait asks the server in calls of up to an hour
 * each (SLUICE_WAIT_MAX_MS), so a wait without --timeout lasts until the
 * task ends; the server parks each call and answers it as the task ends.
 * Exit status of wait: 0 done, 1 failed for good (buried, dead-lettered,
 * deleted, cancelled) or an error, 2 usage, 3 still running when the
 * timeout passed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"

static const char wait_usage[] =
    "usage: sluice wait ID [--timeout DUR] [--json]\n";
static const char wait_help[] =
    "\nWaits for a task to end, and says how: done, with its result\n"
    "(ack --result), or failed for good: buried or moved to its tube's\n"
    "dead-letter tube (with its last error), deleted or cancelled. A task\n"
    "that ended before the wait began is answered at once: the server\n"
    "keeps a task's outcome for its dedup window (sluiced --dedup-window,\n"
    "10 minutes by default) after the task is gone.\n\n"
    "      --timeout DUR  wait at most DUR (0: answer at once; default:\n"
    "                     until the task ends); a task still running then\n"
    "                     prints its state and exits 3\n"
    "      --json         print {\"id\":N,\"state\":\"done\",\"final\":true,\n"
    "                     \"time\":MS,\"tube\":\"...\",\"result\":\"...\"} "
    "(\"error\" for a\n"
    "                     failure's last error; \"cancelled\":true for a "
    "taken\n"
    "                     task that is cancelled)\n"
    "Prints \"done ID\" and the result on the next line, or \"STATE ID: "
    "ERROR\"\n"
    "(buried, dead_lettered, deleted, cancelled), or \"running ID: STATE\".\n"
    "Exit status: 0 done, 1 failed for good (or an error), 3 still running\n"
    "when the timeout passed.\n";

static void
print_outcome(const struct sluice_outcome *o, bool json)
{
	const char *state = sluice_state_name(o->state);
	bool done = o->final && o->state == SLUICE_DONE;

	if (json) {
		printf("{\"id\":%" PRIu64 ",\"state\":\"%s\",\"final\":%s",
		    o->id, state, o->final ? "true" : "false");
		if (o->final)
			printf(",\"time\":%" PRIu64, o->time);
		if (o->tube[0] != '\0') {
			fputs(",\"tube\":", stdout);
			cli_json_cstr(stdout, o->tube);
		}
		if (o->text_len > 0) {
			printf(",\"%s\":", done ? "result" : "error");
			cli_json_str(stdout, o->text, o->text_len);
		}
		if (o->cancelled)
			fputs(",\"cancelled\":true", stdout);
		fputs("}\n", stdout);
		return;
	}
	if (!o->final) {
		printf("running %" PRIu64 ": %s%s\n", o->id, state,
		    o->cancelled ? " (cancelled: it goes when its lease ends)"
		                 : "");
		return;
	}
	printf("%s %" PRIu64, state, o->id);
	if (done) {
		putchar('\n');
		if (o->text_len > 0) {
			cli_print_bytes(stdout, o->text, o->text_len);
			putchar('\n');
		}
		return;
	}
	if (o->text_len > 0) {
		fputs(": ", stdout);
		cli_print_bytes(stdout, o->text, o->text_len);
	}
	putchar('\n');
}

static int
cmd_wait(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "h", opts };
	struct sluice_outcome o;
	uint64_t id, left = UINT64_MAX;
	bool forever = true;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		if (ch == OPT_TIMEOUT) {
			if ((rc = cli_parse_ms(
			         cli, "--timeout", optarg, 0, &left)) != 0)
				return rc;
			forever = false;
		}
	}
	if (a.stop)
		return a.status;
	if (argc - optind != 1)
		return cli_usage_error(cli, "wait takes one task ID");
	if ((rc = cli_parse_id(cli, argv[optind], &id)) != 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	for (;;) {
		uint64_t chunk =
		    left < SLUICE_WAIT_MAX_MS ? left : SLUICE_WAIT_MAX_MS;

		if ((rc = sluice_wait(cli->c, id, chunk, &o)) != 0)
			return cli_fail(cli, rc, "wait %" PRIu64, id);
		if (!forever)
			left -= chunk;
		if (o.final || (!forever && left == 0))
			break;
	}
	print_outcome(&o, a.json);
	if (!o.final)
		return EXIT_EMPTY;
	return o.state == SLUICE_DONE ? EXIT_OK : EXIT_ERR;
}

static const char cancel_usage[] = "usage: sluice cancel ID... [--json]\n";
static const char cancel_help[] =
    "\nCancels tasks. A ready, delayed or buried task is deleted at once; a\n"
    "taken one is marked: its worker's next touch, release, fail or bury\n"
    "is refused with \"cancelled\" (`sluice work` stops its command), and "
    "the\n"
    "task goes when its lease ends, whatever the ending (an ack succeeds).\n"
    "`sluice wait ID` then says \"cancelled\". A task cancelled already is\n"
    "no error. IDs go in requests of up to 1000, each task on its own:\n"
    "\"cancelled ID\" per task on stdout, the reason of each refused one on\n"
    "stderr (exit 1 when any was).\n\n"
    "      --json         one array: {\"id\":N,\"cancelled\":true} or\n"
    "                     {\"id\":N,\"error\":\"...\",\"code\":N} per task\n";

static int
cancel_some(
    struct cli *cli, const uint64_t *ids, size_t n, bool json, size_t *printed)
{
	struct sluice_result res[SLUICE_BATCH_MAX];
	int rc = sluice_cancel_batch(cli->c, ids, n, res), status = EXIT_OK;

	if (rc != 0)
		return cli_fail(cli, rc, "cancel");
	for (size_t i = 0; i < n; i++) {
		if (json)
			fputs((*printed)++ == 0 ? "[" : ",", stdout);
		if (res[i].rc == 0) {
			if (json)
				printf("{\"id\":%" PRIu64
				       ",\"cancelled\":true}\n",
				    ids[i]);
			else
				printf("cancelled %" PRIu64 "\n", ids[i]);
			continue;
		}
		fprintf(stderr, "sluice: %s\n", res[i].errmsg);
		if (json) {
			printf("{\"id\":%" PRIu64 ",\"error\":", ids[i]);
			cli_json_cstr(stdout, res[i].errmsg);
			printf(",\"code\":%d}\n", res[i].rc);
		}
		status = EXIT_ERR;
	}
	return status;
}

static int
cmd_cancel(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS };
	struct cli_args a = { argc, argv, "h", opts };
	uint64_t *ids;
	size_t n, printed = 0;
	int status = EXIT_OK, rc;

	while (cli_next_opt(cli, &a) != -1)
		;
	if (a.stop)
		return a.status;
	if (argc - optind < 1)
		return cli_usage_error(cli, "cancel takes one task ID or more");
	n = (size_t)(argc - optind);
	if ((ids = calloc(n, sizeof(*ids))) == NULL)
		return cli_fail(cli, SLUICE_ENOMEM, "cancel");
	for (size_t i = 0; i < n; i++)
		if ((rc = cli_parse_id(cli, argv[optind + i], &ids[i])) != 0) {
			free(ids);
			return rc;
		}
	if ((rc = cli_connect(cli)) != 0) {
		free(ids);
		return rc;
	}
	for (size_t i = 0; i < n; i += SLUICE_BATCH_MAX) {
		size_t k = n - i < SLUICE_BATCH_MAX ? n - i : SLUICE_BATCH_MAX;

		if ((rc = cancel_some(cli, ids + i, k, a.json, &printed)) != 0)
			status = rc;
		if (rc != 0 && rc != EXIT_ERR)
			break;
	}
	if (a.json)
		fputs(printed == 0 ? "[]\n" : "]\n", stdout);
	free(ids);
	return status;
}

CLI_COMMAND(wait, cmd_wait);

CLI_COMMAND(cancel, cmd_cancel);
