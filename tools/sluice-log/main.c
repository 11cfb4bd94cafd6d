/* sluice-log - the offline tool for a sluice data directory: what an
 * operator runs when a node will not start or its data is in doubt.
 *
 *   sluice-log verify DIR
 *   sluice-log dump DIR [--from LSN] [--to LSN] [--type T] [--tube TUBE]
 *                       [--json]
 *   sluice-log stats DIR [--json]
 *   sluice-log state DIR [--at LSN] [--json]
 *   sluice-log repair DIR [--dry-run] [--cut-at-damage]
 *
 * It links the log and queue libraries only (no network) and changes a
 * data directory only in `repair` without --dry-run. Exit codes are in
 * sluice_log.h and docs/operations.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sluice.h"
#include "sluice_log.h"
#include "util/log.h"

static const char usage[] =
    "usage: sluice-log [-v] COMMAND DIR [options]\n"
    "\n"
    "Inspects and repairs a sluiced data directory, offline.\n"
    "\n"
    "  verify DIR            every checksum, LSN continuity, segment and\n"
    "                        snapshot headers; names every problem\n"
    "  dump DIR              one line per record (--json: one object)\n"
    "      --from LSN --to LSN --type T[,T...] --tube TUBE --json\n"
    "  stats DIR [--json]    per segment: records, bytes, LSNs, times,\n"
    "                        live and dead records, what keeps it\n"
    "  state DIR [--at LSN] [--json]\n"
    "                        the queue rebuilt up to LSN, as sluiced\n"
    "                        would: counts per tube and state, the\n"
    "                        settings and flow limits tubes have\n"
    "  repair DIR [--dry-run] [--cut-at-damage]\n"
    "                        cuts a torn tail; salvages every whole record\n"
    "                        around damage (what is lost is named); what\n"
    "                        goes is moved to DIR/lost+found/\n"
    "\n"
    "  -v, --verbose         show the log library's own messages too\n"
    "  --version, --help\n"
    "\n"
    "Exit codes: 0 ok (verify: sound), 1 damage or a failed step,\n"
    "2 usage, 3 verify: a torn tail only, 4 not a sluice data directory\n"
    "(or none at all), 5 a file cannot be read.\n";

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "verify", lt_cmd_verify },
		{ "dump", lt_cmd_dump },
		{ "stats", lt_cmd_stats },
		{ "state", lt_cmd_state },
		{ "repair", lt_cmd_repair },
	};
	int i = 1;

	/* The library logs errors only; the tool says what it found. */
	log_set_level(LOG_ERR);
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-v") == 0 ||
		    strcmp(argv[i], "--verbose") == 0) {
			lt_verbose = true;
			log_set_level(LOG_DEBUG);
		} else if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			fputs(usage, stdout);
			return LT_EXIT_OK;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("sluice-log %d.%d.%d\n", SLUICE_VERSION_MAJOR,
			    SLUICE_VERSION_MINOR, SLUICE_VERSION_PATCH);
			return LT_EXIT_OK;
		} else {
			fprintf(stderr, "sluice-log: unknown option '%s'\n%s",
			    argv[i], usage);
			return LT_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		fputs(usage, stderr);
		return LT_EXIT_USAGE;
	}
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		if (strcmp(argv[i], cmds[k].name) == 0) {
			/* getopt starts after the command's name. */
			return cmds[k].fn(argc - i, argv + i);
		}
	}
	fprintf(stderr, "sluice-log: unknown command '%s'\n%s", argv[i], usage);
	return LT_EXIT_USAGE;
}
