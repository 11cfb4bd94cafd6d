/* cli_examples - the examples that end the help of the commands a newcomer
 * uses first (`sluice help put`, and `man sluice`, which is made from the
 * same text): a few command lines each, with what they print.
 *
 * Each command's examples are a transcript: a line "  $ COMMAND" is typed
 * into a shell, the lines after it, up to the next "$ ", are what it prints
 * (standard output and error together), and "# exit N" ends a command
 * that exits N rather than 0. They start from an empty server, and
 * tests/integration/test_docs.c runs them so against a fresh sluiced, as
 * it runs README.md's, with the same loose matching (a run of digits
 * stands for any, "..." for any text, a line "..." for any lines): an
 * example that stops being true fails the test. They live here, in one
 * table, rather than beside each command's code, so that the test finds
 * every one of them through `sluice help COMMAND`, and the commands' own
 * help stays about their options. */
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	const char *text;
} examples[] = {
	{ "put",
	    "  $ sluice put -t emails 'send welcome to ada@example.com'\n"
	    "  1\n"
	    "  $ sluice put -t emails -p 10 --delay 5m --ttr 30s 'remind ada'\n"
	    "  2\n"
	    "  $ sluice put -t emails --key welcome-bob 'send welcome to bob'\n"
	    "  3\n"
	    "  $ printf 'report 1\\nreport 2\\n' | sluice put -t reports "
	    "--lines\n"
	    "  4\n"
	    "  5\n"
	    "  $ sluice put -t emails --json 'send welcome to cy'\n"
	    "  {\"id\":6,\"created\":true}\n" },
	{ "take",
	    "  $ sluice put -t emails 'send welcome to ada@example.com'\n"
	    "  1\n"
	    "  $ sluice take -t emails\n"
	    "  id            1\n"
	    "  tube          emails\n"
	    "  state         taken\n"
	    "  lease         8589934595\n"
	    "  ...\n"
	    "  payload       send welcome to ada@example.com\n"
	    "  $ sluice take -t emails -w 200ms        # exit 3\n"
	    "  sluice: take: nothing to take from emails within 200 ms\n"
	    "  $ sluice put -t emails 'send welcome to bob@example.com'\n"
	    "  2\n"
	    "  $ eval \"$(sluice take -t emails --sh)\"\n"
	    "  $ echo \"$SLUICE_TASK_ID $SLUICE_LEASE $SLUICE_PAYLOAD\"\n"
	    "  2 8589934597 send welcome to bob@example.com\n" },
	{ "ack",
	    "  $ sluice put -t emails 'send welcome to ada@example.com'\n"
	    "  1\n"
	    "  $ eval \"$(sluice take -t emails --sh)\"\n"
	    "  $ sluice ack \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\"\n"
	    "  acked 1\n"
	    "  $ sluice put -t photos 'resize 17.jpg'\n"
	    "  2\n"
	    "  $ eval \"$(sluice take -t photos --sh)\"\n"
	    "  $ sluice ack \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\" "
	    "--to publish\n"
	    "  acked 2, moved to publish\n" },
	{ "release",
	    "  $ sluice put -t emails 'send welcome to ada@example.com'\n"
	    "  1\n"
	    "  $ eval \"$(sluice take -t emails --sh)\"\n"
	    "  $ sluice release \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\"\n"
	    "  released 1, ready\n"
	    "  $ sluice take -t emails --json > /dev/null\n"
	    "  $ sluice release -t emails --all\n"
	    "  released 1 task\n" },
	{ "fail",
	    "  $ sluice put -t emails 'send welcome to ada@example.com'\n"
	    "  1\n"
	    "  $ eval \"$(sluice take -t emails --sh)\"\n"
	    "  $ sluice fail \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\" -e "
	    "'smtp timeout'\n"
	    "  failed 1, retry at 2024-06-01T12:00:01.000+02:00 (in ...)\n"
	    "  $ sluice put -t emails 'send welcome to nobody@example.com'\n"
	    "  2\n"
	    "  $ eval \"$(sluice take -t emails --sh)\"\n"
	    "  $ sluice fail \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\" -e "
	    "'no such mailbox' --fatal\n"
	    "  failed 2, buried\n" },
	{ "touch",
	    "  $ sluice put -t reports 'build the monthly report'\n"
	    "  1\n"
	    "  $ eval \"$(sluice take -t reports --sh)\"\n"
	    "  $ sluice touch \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\"\n"
	    "  touched 1, leased until 2024-06-01T12:01:00.000+02:00 (in "
	    "...)\n" },
	{ "bury",
	    "  $ sluice put -t emails 'send welcome to nobody@example.com'\n"
	    "  1\n"
	    "  $ eval \"$(sluice take -t emails --sh)\"\n"
	    "  $ sluice bury \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\" -e "
	    "'no such mailbox'\n"
	    "  buried 1\n"
	    "  $ sluice put -t emails 'send welcome to bob@example.com'\n"
	    "  2\n"
	    "  $ sluice bury 2 --force -e 'on hold'\n"
	    "  buried 2\n" },
	{ "update",
	    "  $ sluice put -t emails --delay 1h 'remind ada'\n"
	    "  1\n"
	    "  $ sluice update 1 -p 0 --delay 10m\n"
	    "  updated 1, delayed until 2024-06-01T12:10:00.000+02:00 (in "
	    "...)\n"
	    "  $ sluice update 1 --payload 'remind ada, again'\n"
	    "  updated 1, delayed until 2024-06-01T12:10:00.000+02:00 (in "
	    "...)\n" },
	{ "pause",
	    "  $ sluice put -t emails 'send welcome to ada@example.com'\n"
	    "  1\n"
	    "  $ sluice pause emails 10m\n"
	    "  paused emails until 2024-06-01T12:10:00.000+02:00\n"
	    "  $ sluice pause emails 0\n"
	    "  resumed emails\n" },
	{ "tube",
	    "  $ sluice tube set emails --ttr 5m --max-attempts 5\n"
	    "  tube emails\n"
	    "    ttr           5m\n"
	    "    max_attempts  5\n"
	    "  ...\n"
	    "  $ sluice tube show emails --json\n"
	    "  "
	    "{\"tube\":\"emails\",\"ttr_ms\":300000,\"max_attempts\":5,...}"
	    "\n" },
	{ "group",
	    "  $ sluice put -t emails --group acme 'send welcome to "
	    "ada@acme.example'\n"
	    "  1\n"
	    "  $ sluice tube set emails --group-concurrency 2 >/dev/null\n"
	    "  $ sluice group set emails acme --rate 10/s\n"
	    "  group acme of tube emails: ready 1, taken 0\n"
	    "    paused        no\n"
	    "    rate          10/s, burst 1 (tokens now 1; its own)\n"
	    "    concurrency   2 (taken now 0; every group's)\n"
	    "  $ sluice group pause emails acme --json\n"
	    "  {\"tube\":\"emails\",\"group\":\"acme\",\"own\":true,"
	    "\"paused\":true,...}\n" },
	{ "kick",
	    "  $ sluice put -t emails 'send welcome to nobody@example.com'\n"
	    "  1\n"
	    "  $ eval \"$(sluice take -t emails --sh)\"\n"
	    "  $ sluice bury \"$SLUICE_TASK_ID\" --lease \"$SLUICE_LEASE\" -e "
	    "'no such mailbox'\n"
	    "  buried 1\n"
	    "  $ sluice kick -t emails --error 'no such mailbox' --dry-run\n"
	    "  would kick 1 task\n"
	    "  $ sluice kick -t emails --error 'no such mailbox'\n"
	    "  kicked 1 task\n"
	    "  $ sluice kick emails\n"
	    "  kicked 0 tasks\n" },
	{ "peek",
	    "  $ sluice put -t emails --key welcome-ada 'send welcome to ada'\n"
	    "  1\n"
	    "  $ sluice peek 1\n"
	    "  id            1\n"
	    "  tube          emails\n"
	    "  state         ready\n"
	    "  ...\n"
	    "  $ sluice peek --key welcome-ada -t emails --json\n"
	    "  "
	    "{\"id\":1,\"lease\":0,\"tube\":\"emails\",\"state\":\"ready\",...}"
	    "\n"
	    "  $ sluice peek -t emails --ready\n"
	    "  id            1\n"
	    "  ...\n" },
	{ "list",
	    "  $ printf 'report 1\\nreport 2\\n' | sluice put -t reports "
	    "--lines\n"
	    "  1\n"
	    "  2\n"
	    "  $ sluice list -t reports\n"
	    "  ID         STATE      PRIORITY  ATTEMPTS  RUN_AT                "
	    "            SIZE  KEY / LAST_ERROR / HOLDER\n"
	    "  1          ready          1024         0  "
	    "2024-06-01T12:00:00.000+02:00        8\n"
	    "  2          ready          1024         0  "
	    "2024-06-01T12:00:00.000+02:00        8\n" },
	{ "stats",
	    "  $ sluice put -t emails 'send welcome to ada@example.com'\n"
	    "  1\n"
	    "  $ sluice stats -t emails\n"
	    "  role        leader\n"
	    "  ...\n"
	    "  TUBE                         READY   DELAYED     TAKEN    "
	    "BURIED  OLDEST       PAUSED_UNTIL\n"
	    "  emails                           1         0         0         "
	    "0  ...\n"
	    "  ...\n"
	    "  $ sluice stats -t emails --json\n"
	    "  {\"role\":\"leader\",...}\n" },
	{ "work",
	    "  $ sluice put -t emails 'send welcome to ada@example.com'\n"
	    "  1\n"
	    "  $ sluice work -t emails --max-tasks 1 -- sh -c 'echo "
	    "\"task $SLUICE_TASK_ID: $SLUICE_PAYLOAD\"'\n"
	    "  task 1: send welcome to ada@example.com\n"
	    "  $ sluice put -t emails 'send welcome to bob@example.com'\n"
	    "  2\n"
	    "  $ sluice work -t emails --max-tasks 1 -- sh -c 'echo \"no such "
	    "mailbox\" >&2; exit 1'\n"
	    "  no such mailbox\n"
	    "  sluice: work: task 2 failed: no such mailbox\n"
	    "  $ sluice list -t emails\n"
	    "  ID         STATE      PRIORITY  ATTEMPTS  RUN_AT  ...\n"
	    "  2          delayed        1024         1  ...  no such "
	    "mailbox\n" },
	{ "delete",
	    "  $ sluice put -t emails 'send welcome to ada@example.com'\n"
	    "  1\n"
	    "  $ sluice delete 1\n"
	    "  deleted 1\n"
	    "  $ printf 'a\\nb\\n' | sluice put -t reports --lines\n"
	    "  2\n"
	    "  3\n"
	    "  $ sluice delete -t reports --state ready --older-than 0 "
	    "--dry-run\n"
	    "  would delete 2 tasks\n"
	    "  $ sluice delete -t reports --all\n"
	    "  deleted 2 tasks\n" },
};

const char *
cli_examples(const char *name)
{
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++)
		if (strcmp(name, examples[i].name) == 0)
			return examples[i].text;
	return NULL;
}

void
cli_print_help(const struct cli_command *cmd)
{
	const char *ex = cli_examples(cmd->name);

	printf("%s%s", cmd->usage, cmd->help);
	if (ex != NULL)
		printf("\nExamples, from an empty server (\"# exit N\": the "
		       "command exits N):\n%s",
		    ex);
}
