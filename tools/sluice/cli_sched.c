/* cli_sched - `sluice schedule set|list|show|pause|resume|delete`: cron
 * schedules that put a task into a tube at each slot (sluice_sched.h),
 * as text or JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "json/json.h"

static const char schedule_usage[] =
    "usage: sluice schedule set NAME -t TUBE --cron EXPR [--tz ZONE]\n"
    "                [--catch-up none|one|all] [-p PRI] [--ttr DUR]\n"
    "                [--max-attempts N] [--paused] (PAYLOAD | - | --file F)\n"
    "       sluice schedule list [--json]\n"
    "       sluice schedule show|pause|resume|delete NAME [--json]\n";
static const char schedule_help[] =
    "\nA schedule puts a task with PAYLOAD into TUBE at each slot of a\n"
    "cron expression, once per slot across restarts and failovers; the\n"
    "task's key is NAME@YYYY-MM-DDTHH:MMZ (the slot in UTC). set creates or\n"
    "replaces one (slots after now fire), list shows them all with their\n"
    "next slot, show one with its payload, pause and resume stop and\n"
    "restart its firing (the slots of a pause are skipped), delete removes\n"
    "it (the tasks it put stay).\n\n"
    "  -t, --tube TUBE         the tube of its tasks\n"
    "      --cron EXPR         M H DOM MON DOW (minute 0-59, hour 0-23,\n"
    "                          day of month 1-31, month 1-12 or jan-dec,\n"
    "                          day of week 0-7 or sun-sat; lists a,b,\n"
    "                          ranges a-b, steps */n and a-b/n), or\n"
    "                          @yearly @monthly @weekly @daily @hourly\n"
    "      --tz ZONE           its local times are ZONE's (a zoneinfo\n"
    "                          name: Europe/Paris); default UTC. A time\n"
    "                          that a clock change skips fires at the\n"
    "                          first minute after the gap; one that\n"
    "                          happens twice fires once, the first time\n"
    "      --catch-up MODE     the slots missed while no leader ran: none\n"
    "                          (skipped), one (the last fires; default),\n"
    "                          all (each fires, at most 1,000)\n"
    "  -p, --priority PRI      each task's priority (default 1024)\n"
    "      --ttr DUR           each task's ttr (default: the server's)\n"
    "      --max-attempts N    each task's attempts (default unlimited)\n"
    "      --paused            set it paused\n"
    "      --file FILE         the payload is the content of FILE\n"
    "      --json              print the schedule(s) as JSON\n";

static void
print_one(const struct sluice_schedule *s, bool json)
{
	char next[64], last[64];

	if (json) {
		json_schedule(stdout, s);
		fputc('\n', stdout);
		return;
	}
	if (s->next_at != 0)
		cli_fmt_time(next, sizeof(next), s->next_at);
	else
		snprintf(next, sizeof(next), "-");
	if (s->last_slot != 0)
		cli_fmt_time(last, sizeof(last), s->last_slot);
	else
		snprintf(last, sizeof(last), "-");
	printf("name: %s\ntube: %s\ncron: %s\ntz: %s\ncatch-up: %s\n"
	       "state: %s\nnext: %s\nlast: %s (task %" PRIu64 ")\n"
	       "fired: %" PRIu64 "\nskipped: %" PRIu64 "\npriority: %" PRIu32
	       "\nttr: %" PRIu64 " ms\nmax-attempts: %" PRIu32 "\n",
	    s->name, s->tube, s->cron, s->tz, s->catch_up,
	    s->paused ? "paused" : "active", next, last, s->last_id, s->fired,
	    s->skipped, s->priority, s->ttr_ms, s->max_attempts);
	if (s->payload != NULL) {
		fputs("payload: ", stdout);
		cli_print_bytes(stdout, s->payload, s->payload_len);
		fputc('\n', stdout);
	}
}

static void
print_list(const struct sluice_schedule *s, size_t n, bool json)
{
	char next[64];

	if (json) {
		json_schedules(stdout, s, n);
		fputc('\n', stdout);
		return;
	}
	/* NEXT is as wide as cli_fmt_time's 2026-11-29T03:00:00.000+01:00 */
	printf("%-20s %-16s %-18s %-16s %-8s %-29s %s\n", "NAME", "TUBE",
	    "CRON", "TZ", "STATE", "NEXT", "FIRED");
	for (size_t i = 0; i < n; i++) {
		if (s[i].next_at != 0)
			cli_fmt_time(next, sizeof(next), s[i].next_at);
		else
			snprintf(next, sizeof(next), "-");
		printf("%-20s %-16s %-18s %-16s %-8s %-29s %" PRIu64 "\n",
		    s[i].name, s[i].tube, s[i].cron, s[i].tz,
		    s[i].paused ? "paused" : "active", next, s[i].fired);
	}
}

enum { OPT_CRON = 1000, OPT_TZ, OPT_CATCH_UP, OPT_PAUSED };

struct sched_args {
	const char *tube, *cron, *file;
	struct sluice_schedule_opts o;
	struct cli_task_opts t;
	bool set_only; /* an option only set takes was given */
	bool json;
};

/* Every option of the command, whatever its verb. Returns -1 to go on,
 * or the exit code. */
static int
parse(struct cli *cli, int argc, char **argv, struct sched_args *s)
{
	static const struct option opts[] = {
		TUBE_OPT,
		{ "cron", required_argument, NULL, OPT_CRON },
		{ "tz", required_argument, NULL, OPT_TZ },
		{ "catch-up", required_argument, NULL, OPT_CATCH_UP },
		{ "priority", required_argument, NULL, 'p' },
		{ "ttr", required_argument, NULL, OPT_TTR },
		{ "max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS },
		{ "paused", no_argument, NULL, OPT_PAUSED },
		{ "file", required_argument, NULL, OPT_FILE },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "t:p:h", opts };
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		s->set_only = true;
		switch (ch) {
		case 't':
			s->tube = optarg;
			break;
		case OPT_CRON:
			s->cron = optarg;
			break;
		case OPT_TZ:
			s->o.tz = optarg;
			break;
		case OPT_CATCH_UP:
			if (strcmp(optarg, "none") != 0 &&
			    strcmp(optarg, "one") != 0 &&
			    strcmp(optarg, "all") != 0)
				return cli_usage_error(cli,
				    "--catch-up is none, one or all, not '%s'",
				    optarg);
			s->o.catch_up = optarg;
			break;
		case OPT_PAUSED:
			s->o.paused = 1;
			break;
		case OPT_FILE:
			s->file = optarg;
			break;
		default:
			if ((rc = cli_task_opt(cli, ch, optarg, &s->t)) != 0)
				return rc;
			break;
		}
	}
	if (a.stop)
		return a.status;
	s->json = a.json;
	return -1;
}

/* set NAME PAYLOAD: operands from argv[optind] (NAME). */
static int
sched_set(struct cli *cli, int argc, char **argv, struct sched_args *sa)
{
	struct sluice_schedule *s = NULL;
	const char *name = argv[optind];
	char *data = NULL;
	const char *payload;
	size_t len;
	int rc;

	if (sa->tube == NULL)
		return cli_usage_error(cli, "schedule set: give its -t TUBE");
	if (sa->cron == NULL)
		return cli_usage_error(
		    cli, "schedule set: give its --cron EXPR");
	if (sa->file != NULL && optind != argc - 1)
		return cli_usage_error(
		    cli, "the payload is --file's: no PAYLOAD or - with it");
	if (sa->file == NULL && optind != argc - 2)
		return cli_usage_error(cli,
		    "schedule set: give NAME and one PAYLOAD (- for stdin, or "
		    "--file F)");
	if (sa->t.ttr_ms > UINT32_MAX)
		return cli_usage_error(cli, "--ttr is too long");
	sa->o.priority = sa->t.has_priority ? (uint32_t)sa->t.priority : 1024;
	sa->o.ttr_ms = sa->t.ttr_ms;
	sa->o.max_attempts = (uint32_t)sa->t.max_attempts;
	if (sa->file != NULL || strcmp(argv[optind + 1], "-") == 0) {
		if ((rc = cli_read_payload(sa->file, &data, &len)) != 0)
			return rc;
		payload = data;
	} else {
		payload = argv[optind + 1];
		len = strlen(payload);
	}
	if ((rc = cli_connect(cli)) != 0) {
		free(data);
		return rc;
	}
	rc = sluice_schedule_set(
	    cli->c, name, sa->tube, sa->cron, payload, len, &sa->o, &s);
	free(data);
	if (rc != 0)
		return cli_fail(cli, rc, "schedule set %s", name);
	print_one(s, sa->json);
	sluice_schedule_free(s);
	return EXIT_OK;
}

static int
cmd_schedule(struct cli *cli, int argc, char **argv)
{
	struct sched_args sa;
	struct sluice_schedule *s = NULL;
	const char *verb, *name;
	size_t n = 0;
	int rc;

	memset(&sa, 0, sizeof(sa));
	if ((rc = parse(cli, argc, argv, &sa)) != -1)
		return rc;
	if (optind >= argc)
		return cli_usage_error(cli,
		    "schedule: give set, list, show, "
		    "pause, resume or delete");
	verb = argv[optind++];
	if (strcmp(verb, "set") != 0 && strcmp(verb, "list") != 0 &&
	    strcmp(verb, "show") != 0 && strcmp(verb, "pause") != 0 &&
	    strcmp(verb, "resume") != 0 && strcmp(verb, "delete") != 0)
		return cli_usage_error(cli,
		    "schedule: '%s' is not set, list, show, pause, resume or "
		    "delete",
		    verb);
	if (strcmp(verb, "set") != 0 && sa.set_only)
		return cli_usage_error(
		    cli, "schedule %s: only set takes those options", verb);
	if (strcmp(verb, "set") == 0) {
		if (optind >= argc)
			return cli_usage_error(
			    cli, "schedule set: give its NAME");
		return sched_set(cli, argc, argv, &sa);
	}
	if (strcmp(verb, "list") == 0) {
		if (optind != argc)
			return cli_usage_error(cli, "schedule list: no NAME");
		if ((rc = cli_connect(cli)) != 0)
			return rc;
		if ((rc = sluice_schedule_list(cli->c, &s, &n)) != 0)
			return cli_fail(cli, rc, "schedule list");
		print_list(s, n, sa.json);
		sluice_schedule_free(s);
		return EXIT_OK;
	}
	if (optind != argc - 1)
		return cli_usage_error(cli, "schedule %s: give one NAME", verb);
	name = argv[optind];
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if (strcmp(verb, "pause") == 0)
		rc = sluice_schedule_pause(cli->c, name);
	else if (strcmp(verb, "resume") == 0)
		rc = sluice_schedule_resume(cli->c, name);
	else if (strcmp(verb, "delete") == 0)
		rc = sluice_schedule_delete(cli->c, name);
	if (rc != 0)
		return cli_fail(cli, rc, "schedule %s %s", verb, name);
	if (strcmp(verb, "delete") == 0) {
		if (sa.json)
			printf("{\"deleted\":true}\n");
		else
			printf("deleted %s\n", name);
		return EXIT_OK;
	}
	if ((rc = sluice_schedule_show(cli->c, name, &s)) != 0)
		return cli_fail(cli, rc, "schedule %s %s", verb, name);
	print_one(s, sa.json);
	sluice_schedule_free(s);
	return EXIT_OK;
}

CLI_COMMAND(schedule, cmd_schedule);
