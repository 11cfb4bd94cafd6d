/* sluice-log - the offline tool for a sluice data directory: what an
 * operator runs when a node will not start or its data is in doubt.
 *
 *   sluice-log verify DIR
 *   sluice-log dump DIR [--from LSN] [--to LSN] [--type T] [--tube TUBE]
 *                       [--json]
 *   sluice-log stats DIR [--json]
 *   sluice-log state DIR [--at LSN] [--json]
 *   sluice-log repair DIR [--dry-run]
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
    "                        would: counts per tube and state\n"
    "  repair DIR [--dry-run]\n"
    "                        cuts a torn or damaged log; what is cut goes\n"
    "                        to DIR/lost+found/\n"
    "\n"
    "  -v, --verbose         show the log library's own messages too\n"
    "  --version, --help\n"
    "\n"
    "Exit codes: 0 ok (verify: sound), 1 damage or a failed step,\n"
    "2 usage, 3 verify: a torn tail only, 4 not a sluice data directory\n"
    "(or none at all), 5 a file cannot be read.\n";

bool
lt_parse_u64(const char *opt, const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-') {
		fprintf(stderr, "sluice-log: %s wants a number, not '%s'\n",
		    opt, s);
		return false;
	}
	*out = v;
	return true;
}

int
lt_open_checked(
    const char *path, struct lt_dir *d, const struct lt_visit *v, void *arg)
{
	char err[PATH_MAX + 256];
	int rc;

	rc = lt_dir_open(path, d, err, sizeof(err));
	if (rc != LT_EXIT_OK) {
		fprintf(stderr, "sluice-log: %s\n", err);
		return rc;
	}
	rc = lt_dir_check(d, v, arg);
	if (rc != 0 && rc != -EPIPE) {
		fprintf(
		    stderr, "sluice-log: %s: %s\n", path, sluice_strerror(rc));
		lt_dir_free(d);
		return LT_EXIT_IO;
	}
	if (rc == -EPIPE) {
		lt_dir_free(d);
		return LT_EXIT_IO;
	}
	return LT_EXIT_OK;
}

const char *
lt_type_name(uint16_t type)
{
	if (type >= QREC_PUT && type < QREC_TYPE_END_)
		return qrec_type_name(type);
	if (type == REC_EPOCH)
		return "EPOCH";
	return NULL;
}

uint16_t
lt_type_parse(const char *s)
{
	for (uint16_t t = QREC_PUT; t < QREC_TYPE_END_; t++)
		if (strcasecmp(s, qrec_type_name(t)) == 0)
			return t;
	if (strcasecmp(s, "EPOCH") == 0)
		return REC_EPOCH;
	return 0;
}

uint64_t
lt_qrec_id(const struct qrec *r)
{
	switch (r->type) {
	case QREC_PUT:
		return r->u.put.id;
	case QREC_TAKE:
		return r->u.take.id;
	case QREC_ACK:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
		return r->u.end.id;
	case QREC_TOUCH:
		return r->u.touch.id;
	case QREC_KICK:
		return r->u.kick.id;
	case QREC_DELETE:
		return r->u.del.id;
	case QREC_REPLACE:
		return r->u.replace.id;
	}
	return 0;
}

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
