/* cli_task - the commands about a task that waits: update (its priority,
 * time, ttr, ... changed in place), kick (buried tasks back to ready),
 * delete (by id, by key, several ids, or every task of a tube) and peek (a
 * task shown without being taken). delete and peek name their task the
 * same ways (struct target). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"

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
		TASK_OPTS,
		{ "payload", required_argument, NULL, OPT_PAYLOAD },
		{ "file", required_argument, NULL, OPT_FILE },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "p:h", opts };
	struct sluice_update_opts o;
	struct sluice_after after;
	const char *file = NULL;
	char *data = NULL;
	struct cli_task_opts to = { 0 };
	uint64_t id;
	int ch, rc;

	sluice_update_opts_init(&o);
	while ((ch = cli_next_opt(cli, &a)) != -1) {
		if ((rc = cli_task_opt(cli, ch, optarg, &to)) >= 0) {
			if (rc != 0)
				return rc;
			continue;
		}
		rc = 0;
		switch (ch) {
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
	if (to.has_priority)
		o.priority = (int64_t)to.priority;
	if (to.has_delay)
		o.delay_ms = (int64_t)to.delay_ms;
	o.run_at = to.run_at;
	if (to.has_ttr)
		o.ttr_ms = (int64_t)to.ttr_ms;
	if (to.has_max_attempts)
		o.max_attempts = (int64_t)to.max_attempts;
	if (optind != argc - 1)
		return cli_usage_error(cli, "one task ID is needed");
	if ((rc = cli_parse_id(cli, argv[optind], &id)) != 0)
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
		if ((rc = cli_read_payload(strcmp(file, "-") == 0 ? NULL : file,
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

static const char kick_usage[] =
    "usage: sluice kick TUBE [N] [--error TEXT] [--dry-run] [--json]\n"
    "       sluice kick -t TUBE [N] [--error TEXT] [--dry-run] [--json]\n"
    "       sluice kick --id ID [--json]\n";
static const char kick_help[] =
    "\nMoves buried tasks back to ready: up to N of TUBE (default 1), "
    "oldest\nfirst, or one task by id. Prints how many moved; a TUBE that "
    "does not\nexist is an error, as with stats -t.\n\n"
    "  -t, --tube TUBE  the tube (or TUBE, first)\n"
    "      --error TEXT  only the buried tasks whose last error is TEXT\n"
    "                   (a group of `sluice errors`), lowest ids first;\n"
    "                   every one of them unless N is given\n"
    "      --dry-run    kick nothing: print how many it would kick\n"
    "                   (\"would kick 3 tasks\")\n"
    "      --id ID      kick this task\n"
    "      --json       print {\"kicked\":N} ({\"would_kick\":N} with "
    "--dry-run)\n";

static int
cmd_kick(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, OPT_ID },
		TUBE_OPT,
		{ "error", required_argument, NULL, OPT_ERROR },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "t:h", opts };
	struct sluice_kick_opts ko = { 0 };
	const char *id_arg = NULL, *tube = NULL;
	struct sluice_after after;
	uint64_t id, n = 1, kicked;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		switch (ch) {
		case OPT_ID:
			id_arg = optarg;
			break;
		case 't':
			tube = optarg;
			break;
		case OPT_ERROR:
			if (optarg[0] == '\0')
				return cli_usage_error(cli,
				    "--error: the text of a last error is "
				    "needed (see sluice errors -t TUBE)");
			ko.error = optarg;
			break;
		case OPT_DRY_RUN:
			ko.dry = 1;
			break;
		}
	}
	if (a.stop)
		return a.status;
	if (id_arg != NULL) {
		if (optind != argc || tube != NULL)
			return cli_usage_error(cli, "--id takes no TUBE");
		if (ko.error != NULL || ko.dry)
			return cli_usage_error(cli,
			    "--id kicks one task: --error and --dry-run go "
			    "with a TUBE");
		if ((rc = cli_parse_id(cli, id_arg, &id)) != 0 ||
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
	if (tube == NULL && optind < argc)
		tube = argv[optind++];
	if (tube == NULL || argc - optind > 1)
		return cli_usage_error(cli, "a TUBE (and maybe N) is needed");
	if (ko.error != NULL)
		n = UINT32_MAX; /* the whole group unless N says */
	if (argc - optind == 1 &&
	    ((rc = cli_parse_num(cli, "N", argv[optind], 1, UINT32_MAX, &n)) !=
	        0))
		return rc;
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	ko.n = (uint32_t)n;
	if ((rc = sluice_kick_opts(cli->c, tube, &ko, &kicked)) != 0)
		return ko.error != NULL
		    ? cli_fail(
		          cli, rc, "kick %s --error \"%s\"", tube, ko.error)
		    : cli_fail(cli, rc, "kick %s", tube);
	if (kicked == 0) {
		/* the server kicks nothing of a tube it does not know (as
		 * beanstalkd does): a person is told it does not exist, as
		 * stats -t says it */
		struct sluice_stats *st;

		if ((rc = sluice_stats(cli->c, tube, &st)) != 0)
			return cli_fail(cli, rc, "kick %s", tube);
		sluice_stats_free(st);
	}
	if (ko.dry)
		cli_print_count(a.json, "would_kick", "would kick", kicked);
	else
		cli_print_count(a.json, "kicked", "kicked", kicked);
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
		return cli_parse_id(cli, argv[optind], &tg->id);
	return 0;
}

/* The value of option `opt` ("--older-than") as given, for messages. */
static const char *
argv_value(int argc, char **argv, const char *opt)
{
	size_t n = strlen(opt);

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], opt) == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], opt, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
	}
	return "?";
}

/* --state S[,S...]: adds each state's bit to *states. */
static int
parse_states(struct cli *cli, const char *arg, unsigned *states)
{
	char buf[128];
	char *save = NULL, *s;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (s = strtok_r(buf, ",", &save); s != NULL;
	     s = strtok_r(NULL, ",", &save)) {
		int st = cli_parse_state(s);

		if (st < 0)
			return cli_usage_error(cli,
			    "--state: \"%s\" is not ready, delayed, taken, "
			    "buried or done",
			    s);
		*states |= SLUICE_STATE_BIT(st);
	}
	if (*states == 0)
		return cli_usage_error(cli, "--state: no state in \"%s\"", arg);
	return 0;
}

/* The states of a mask, "ready,buried", for messages. */
static const char *
states_text(unsigned states, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int st = SLUICE_READY; st <= SLUICE_DONE; st++)
		if (states & SLUICE_STATE_BIT(st))
			n += (size_t)snprintf(buf + n, cap - n, "%s%s",
			    n ? "," : "", sluice_state_name(st));
	return buf;
}

static const char delete_usage[] =
    "usage: sluice delete ID... [--json]\n"
    "       sluice delete --key KEY [-t TUBE] [--json]\n"
    "       sluice delete -t TUBE --all [--json]\n"
    "       sluice delete -t TUBE --state S[,S...] (--older-than DUR |\n"
    "                     --created-before DUR) [--force] [--dry-run]\n"
    "                     [--json]\n";
static const char delete_help[] =
    "\nDeletes a task in any state, by id or by key, every task of a "
    "tube,\nor a tube's tasks in some states by age (since their last "
    "change,\nor their creation).\n"
    "Several IDs go in requests of up to 1000 (one commit each), each task\n"
    "deleted or refused on its own: \"deleted ID\" per task on stdout, the\n"
    "reason of each refused one on stderr (exit 1 when any was).\n\n"
    "      --key KEY      the task holding this key in its tube (-t TUBE,\n"
    "                     default \"default\": keys are per tube)\n"
    "  -t, --tube TUBE    with --key, --all or --state: the tube\n"
    "      --all          every task of the tube; prints how many\n"
    "      --state S      the tasks in state S (ready, delayed, taken,\n"
    "                     buried or done; several with commas, or the\n"
    "                     option again) whose age is at least DUR, all\n"
    "                     in one request; prints how many\n"
    "      --older-than DUR  with --state: last changed at least DUR ago\n"
    "                     (its updated_at: put, take, fail, release, kick,\n"
    "                     update, ready, finished; 0: all of them)\n"
    "      --created-before DUR  with --state, instead: created at least\n"
    "                     DUR ago\n"
    "      --force        with --state taken: tasks workers hold are\n"
    "                     deleted too; their leases end, and their\n"
    "                     holders' ack or fail answers \"no such task\"\n"
    "      --dry-run      with --state: delete nothing, print how many it\n"
    "                     would delete (\"would delete 3 tasks\")\n"
    "      --json         print {\"id\":N} (ID, --key) or {\"deleted\":N} "
    "(--all, --state;\n"
    "                     {\"would_delete\":N} with --dry-run);\n"
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
		{ "created-before", required_argument, NULL,
		    OPT_CREATED_BEFORE },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "t:h", opts };
	struct sluice_delete_where_opts wo = { 0 };
	bool dry = false;
	struct target tg = { 0 };
	uint64_t n;
	bool has_older = false, has_created = false;
	unsigned states = 0;
	char stxt[64];
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
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
			if ((rc = parse_states(cli, optarg, &states)) != 0)
				return rc;
			break;
		case OPT_OLDER_THAN:
			if ((rc = cli_parse_ms(cli, "--older-than", optarg, 0,
			         &wo.older_ms)) != 0)
				return rc;
			has_older = true;
			break;
		case OPT_CREATED_BEFORE:
			if ((rc = cli_parse_ms(cli, "--created-before", optarg,
			         0, &wo.older_ms)) != 0)
				return rc;
			has_created = true;
			break;
		case OPT_FORCE:
			wo.force = 1;
			break;
		case OPT_DRY_RUN:
			dry = true;
			break;
		}
	}
	if (a.stop)
		return a.status;
	if (dry && states == 0)
		return cli_usage_error(cli,
		    "--dry-run goes with --state S (a delete by state and "
		    "age)");
	if (argc - optind > 1 && tg.key == NULL && !tg.sel && states == 0)
		return cli_batch_operands(
		    cli, argv + optind, (size_t)(argc - optind), false, a.json);
	if (has_older && has_created)
		return cli_usage_error(cli,
		    "--older-than (since the last change) or --created-before "
		    "(since the creation), not both");
	if ((states != 0) != (has_older || has_created))
		return cli_usage_error(cli,
		    "--state S and --older-than DUR (or --created-before DUR) "
		    "go together");
	if (wo.force && !(states & SLUICE_STATE_BIT(SLUICE_TAKEN)))
		return cli_usage_error(cli,
		    "--force goes with --state taken (tasks workers hold)");
	if ((states & SLUICE_STATE_BIT(SLUICE_TAKEN)) && !wo.force)
		return cli_usage_error(cli,
		    "--state taken deletes tasks workers hold: add --force "
		    "(their leases end)");
	if (states != 0 && tg.sel)
		return cli_usage_error(cli, "--all or --state, not both");
	tg.sel = tg.sel || states != 0;
	wo.states = states;
	wo.by_created = has_created;
	if ((rc = parse_target(cli, argc, argv, &tg, "--all or --state",
	         "--all or --state")) != 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if (states != 0) {
		const char *opt =
		    has_created ? "--created-before" : "--older-than";

		rc = dry ? sluice_delete_where_dry(cli->c, tg.tube, &wo, &n)
		         : sluice_delete_where_opts(cli->c, tg.tube, &wo, &n);
		if (rc != 0)
			return cli_fail(cli, rc,
			    "delete -t %s --state %s %s %s", tg.tube,
			    states_text(states, stxt, sizeof(stxt)), opt,
			    argv_value(argc, argv, opt));
		if (dry)
			cli_print_count(
			    a.json, "would_delete", "would delete", n);
		else
			cli_print_count(a.json, "deleted", "deleted", n);
	} else if (tg.key != NULL) {
		if ((rc = sluice_delete_key(cli->c, tg.tube, tg.key, &tg.id)) !=
		    0)
			return cli_fail(cli, rc, "delete --key %s -t %s",
			    tg.key, tg.tube ? tg.tube : "default");
		cli_print_number(a.json, "id", "deleted", tg.id);
	} else if (tg.sel) {
		if ((rc = sluice_flush(cli->c, tg.tube, &n)) != 0)
			return cli_fail(cli, rc, "delete -t %s --all", tg.tube);
		cli_print_count(a.json, "deleted", "deleted", n);
	} else if ((rc = sluice_delete(cli->c, tg.id)) != 0) {
		return cli_fail(cli, rc, "delete %" PRIu64, tg.id);
	} else {
		cli_print_number(a.json, "id", "deleted", tg.id);
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
	struct cli_args a = { argc, argv, "t:h", opts };
	struct target tg = { 0 };
	struct sluice_task *t;
	int state = 0, ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
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

CLI_COMMAND(update, cmd_update);

CLI_COMMAND(kick, cmd_kick);

CLI_COMMAND(delete, cmd_delete);

CLI_COMMAND(peek, cmd_peek);
