/* sluiced - the sluice server: command-line flags, then srv_run(). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/seg.h"
#include "server/srv.h"
#include "sluice.h"
#include "util/fault.h"
#include "util/log.h"

static const char usage[] =
    "usage: sluiced [options]\n"
    "\n"
    "A persistent, replicated job queue server.\n"
    "\n"
    "  --data DIR             data directory (log segments, snapshots);\n"
    "                         created when missing (default ./data)\n"
    "  --listen URL           where clients connect\n"
    "                         (default tcp://127.0.0.1:7711)\n"
    "  --fsync always|MS|never\n"
    "                         always: fdatasync before any reply (default);\n"
    "                         MS: fdatasync every MS milliseconds, up to MS\n"
    "                         ms of acknowledged writes at risk;\n"
    "                         never: leave it to the OS\n"
    "  --repl-listen URL      accept followers on URL (default: none)\n"
    "  --follow URL           run as a follower of the leader at URL\n"
    "  --sync-replicas K      answer a write only once K followers hold it\n"
    "                         (default 0)\n"
    "  --sync-timeout MS      how long a write waits for those followers\n"
    "                         before it fails with 'too few replicas'\n"
    "                         (default 5000)\n"
    "  --http ADDR            serve /metrics, /health, /stats and the admin\n"
    "                         page / on ADDR, e.g. 127.0.0.1:7780\n"
    "                         (default: none)\n"
    "  --http-admin           the admin page may kick and delete tasks\n"
    "                         (default: read-only)\n"
    "  --beanstalk ADDR       also speak beanstalkd's protocol on ADDR,\n"
    "                         e.g. 127.0.0.1:11300 (default: none)\n"
    "  --max-payload BYTES    largest task payload (default 1048576)\n"
    "  --ttr MS               default time-to-run (default 60000)\n"
    "  --dedup-window MS      how long a completed key stays taken\n"
    "                         (default 600000)\n"
    "  --segment-size BYTES   log segment size (default 67108864)\n"
    "  --snapshot-records N   snapshot after N records (default 1000000)\n"
    "  --snapshot-bytes BYTES snapshot after BYTES of log (default 256 MiB)\n"
    "  --keep-segments N      old segments kept after a snapshot, for\n"
    "                         followers (default 2)\n"
    "  --max-log-bytes N      the most the log's segment files may take,\n"
    "                         preallocated ones included; a number with\n"
    "                         an optional k, M or G (KiB, MiB, GiB); at\n"
    "                         least two segments. When it is reached,\n"
    "                         puts are refused while takes, acks, fails\n"
    "                         and deletes go on (default: no limit, only\n"
    "                         the disk's)\n"
    "  --log-level LEVEL      err, warn, info (default) or debug\n"
    "  --log-format FORMAT    text (default) or json: one object per line\n"
    "  --version              print the version and exit\n"
    "  --help                 print this help and exit\n";

enum {
	OPT_DATA = 256,
	OPT_LISTEN,
	OPT_FSYNC,
	OPT_REPL_LISTEN,
	OPT_FOLLOW,
	OPT_SYNC_REPLICAS,
	OPT_SYNC_TIMEOUT,
	OPT_HTTP,
	OPT_HTTP_ADMIN,
	OPT_BEANSTALK,
	OPT_MAX_PAYLOAD,
	OPT_TTR,
	OPT_DEDUP,
	OPT_SEG_SIZE,
	OPT_SNAP_RECORDS,
	OPT_SNAP_BYTES,
	OPT_KEEP_SEGMENTS,
	OPT_MAX_LOG_BYTES,
	OPT_LOG_LEVEL,
	OPT_LOG_FORMAT,
	OPT_VERSION,
	OPT_HELP,
};

static const struct option options[] = {
	{ "data", required_argument, NULL, OPT_DATA },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "fsync", required_argument, NULL, OPT_FSYNC },
	{ "repl-listen", required_argument, NULL, OPT_REPL_LISTEN },
	{ "follow", required_argument, NULL, OPT_FOLLOW },
	{ "sync-replicas", required_argument, NULL, OPT_SYNC_REPLICAS },
	{ "sync-timeout", required_argument, NULL, OPT_SYNC_TIMEOUT },
	{ "http", required_argument, NULL, OPT_HTTP },
	{ "http-admin", no_argument, NULL, OPT_HTTP_ADMIN },
	{ "beanstalk", required_argument, NULL, OPT_BEANSTALK },
	{ "max-payload", required_argument, NULL, OPT_MAX_PAYLOAD },
	{ "ttr", required_argument, NULL, OPT_TTR },
	{ "dedup-window", required_argument, NULL, OPT_DEDUP },
	{ "segment-size", required_argument, NULL, OPT_SEG_SIZE },
	{ "snapshot-records", required_argument, NULL, OPT_SNAP_RECORDS },
	{ "snapshot-bytes", required_argument, NULL, OPT_SNAP_BYTES },
	{ "keep-segments", required_argument, NULL, OPT_KEEP_SEGMENTS },
	{ "max-log-bytes", required_argument, NULL, OPT_MAX_LOG_BYTES },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* A decimal integer in [lo, hi], the whole string. */
static int
parse_u64(
    const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < lo ||
	    v > hi) {
		fprintf(stderr,
		    "sluiced: %s wants a whole number from %" PRIu64
		    " to %" PRIu64 ", not '%s'\n",
		    flag, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* A byte count: a whole number with an optional k, M or G (binary
 * multiples), the whole string, at least 1. */
static int
parse_size(const char *flag, const char *s, uint64_t *out)
{
	unsigned long long v;
	uint64_t mult = 1;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end != s && end[0] != '\0' && end[1] == '\0') {
		switch (end[0]) {
		case 'k':
		case 'K':
			mult = UINT64_C(1) << 10;
			end++;
			break;
		case 'M':
			mult = UINT64_C(1) << 20;
			end++;
			break;
		case 'G':
			mult = UINT64_C(1) << 30;
			end++;
			break;
		default:
			break;
		}
	}
	if (errno != 0 || end == s || *end != '\0' || s[0] < '0' ||
	    s[0] > '9' || v == 0 || v > UINT64_MAX / mult) {
		fprintf(stderr,
		    "sluiced: %s wants a number of bytes, with an optional "
		    "k, M or G (for example 512M), not '%s'\n",
		    flag, s);
		return -1;
	}
	*out = (uint64_t)v * mult;
	return 0;
}

static int
parse_fsync(const char *s, struct srv_config *cfg)
{
	uint64_t ms;

	if (strcmp(s, "always") == 0) {
		cfg->fsync = WAL_FSYNC_ALWAYS;
		return 0;
	}
	if (strcmp(s, "never") == 0) {
		cfg->fsync = WAL_FSYNC_NEVER;
		return 0;
	}
	if (parse_u64("--fsync", s, 1, 3600000, &ms) != 0) {
		fprintf(stderr,
		    "sluiced: --fsync takes always, never or a "
		    "number of milliseconds\n");
		return -1;
	}
	cfg->fsync = WAL_FSYNC_INTERVAL;
	cfg->fsync_ms = (uint32_t)ms;
	return 0;
}

static int
parse_args(int argc, char **argv, struct srv_config *cfg)
{
	enum log_level level;
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (c) {
		case OPT_DATA:
			cfg->data_dir = optarg;
			break;
		case OPT_LISTEN:
			cfg->listen = optarg;
			break;
		case OPT_FSYNC:
			if (parse_fsync(optarg, cfg) != 0)
				return 2;
			break;
		case OPT_REPL_LISTEN:
			cfg->repl_listen = optarg;
			break;
		case OPT_FOLLOW:
			cfg->follow = optarg;
			break;
		case OPT_SYNC_REPLICAS:
			if (parse_u64("--sync-replicas", optarg, 0, 16, &v))
				return 2;
			cfg->sync_replicas = (unsigned)v;
			break;
		case OPT_SYNC_TIMEOUT:
			if (parse_u64("--sync-timeout", optarg, 1, 3600000, &v))
				return 2;
			cfg->sync_timeout_ms = (uint32_t)v;
			break;
		case OPT_HTTP:
			cfg->http = optarg;
			break;
		case OPT_HTTP_ADMIN:
			cfg->http_admin = true;
			break;
		case OPT_BEANSTALK:
			cfg->beanstalk = optarg;
			break;
		case OPT_MAX_PAYLOAD:
			if (parse_u64("--max-payload", optarg, 1, 64 << 20, &v))
				return 2;
			cfg->max_payload = (size_t)v;
			break;
		case OPT_TTR:
			if (parse_u64("--ttr", optarg, 1, UINT32_MAX, &v))
				return 2;
			cfg->default_ttr_ms = (uint32_t)v;
			break;
		case OPT_DEDUP:
			if (parse_u64(
			        "--dedup-window", optarg, 0, UINT32_MAX, &v))
				return 2;
			cfg->dedup_ms = (uint32_t)v;
			break;
		case OPT_SEG_SIZE:
			if (parse_u64("--segment-size", optarg, 1 << 20,
			        UINT64_C(1) << 36, &v))
				return 2;
			cfg->seg_size = (v + 4095) & ~UINT64_C(4095);
			break;
		case OPT_SNAP_RECORDS:
			if (parse_u64("--snapshot-records", optarg, 1,
			        UINT64_MAX, &cfg->snap_records))
				return 2;
			break;
		case OPT_SNAP_BYTES:
			if (parse_u64("--snapshot-bytes", optarg, 1, UINT64_MAX,
			        &cfg->snap_bytes))
				return 2;
			break;
		case OPT_KEEP_SEGMENTS:
			if (parse_u64("--keep-segments", optarg, 0, 100000, &v))
				return 2;
			cfg->keep_segments = (unsigned)v;
			break;
		case OPT_MAX_LOG_BYTES:
			if (parse_size(
			        "--max-log-bytes", optarg, &cfg->max_log_bytes))
				return 2;
			break;
		case OPT_LOG_LEVEL:
			if (log_parse_level(optarg, &level) != 0) {
				fprintf(stderr,
				    "sluiced: --log-level takes err, warn, "
				    "info or debug, not '%s'\n",
				    optarg);
				return 2;
			}
			log_set_level(level);
			break;
		case OPT_LOG_FORMAT:
			if (strcmp(optarg, "text") != 0 &&
			    strcmp(optarg, "json") != 0) {
				fprintf(stderr,
				    "sluiced: --log-format takes text or json, "
				    "not '%s'\n",
				    optarg);
				return 2;
			}
			log_set_json(strcmp(optarg, "json") == 0);
			break;
		case OPT_VERSION:
			printf("sluiced %d.%d.%d\n", SLUICE_VERSION_MAJOR,
			    SLUICE_VERSION_MINOR, SLUICE_VERSION_PATCH);
			exit(0);
		case OPT_HELP:
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sluiced: unexpected argument '%s'\n%s",
		    argv[optind], usage);
		return 2;
	}
	if (cfg->http_admin && cfg->http == NULL) {
		fprintf(stderr, "sluiced: --http-admin needs --http\n");
		return 2;
	}
	if (cfg->sync_replicas > 0 && cfg->repl_listen == NULL) {
		fprintf(
		    stderr, "sluiced: --sync-replicas needs --repl-listen\n");
		return 2;
	}
	if (cfg->max_log_bytes != 0) {
		uint64_t seg = cfg->seg_size ? cfg->seg_size : SEG_SIZE_DEFAULT;

		if (cfg->max_log_bytes / 2 < seg) {
			fprintf(stderr,
			    "sluiced: --max-log-bytes %" PRIu64 " is less than "
			    "two segments of %" PRIu64
			    " bytes (--segment-size):"
			    " the log needs one to write and one ready\n",
			    cfg->max_log_bytes, seg);
			return 2;
		}
	}
	return 0;
}

/* Background snapshots fork the server, and fork copies the page tables of
 * the whole heap: 18 ms for 1M tasks with 4 KiB pages. glibc's
 * malloc.hugetlb tunable backs the heap with transparent huge pages, which
 * cuts that stall about sevenfold. Tunables are read only at start, so the
 * server re-executes itself once with it set (SLUICE_NO_HUGEPAGES=1 keeps
 * the heap as it is). */
static void
reexec_with_hugepages(char **argv)
{
	const char *cur = getenv("GLIBC_TUNABLES");
	char buf[1024];

	if (getenv("SLUICE_NO_HUGEPAGES") != NULL ||
	    (cur != NULL && strstr(cur, "glibc.malloc.hugetlb") != NULL))
		return;
	snprintf(buf, sizeof(buf), "%s%sglibc.malloc.hugetlb=1", cur ? cur : "",
	    cur && *cur ? ":" : "");
	if (setenv("GLIBC_TUNABLES", buf, 1) != 0)
		return;
	execv("/proc/self/exe", argv);
	/* Not fatal: run with small pages. */
}

int
main(int argc, char **argv)
{
	struct srv_config cfg;
	int rc;

	reexec_with_hugepages(argv);
#ifdef SLUICE_FAULT
	/* Test builds only (sluiced-fault): arm a fault point of the log. */
	if (fault_arm_spec(getenv("SLUICE_FAULT")) != 0) {
		fprintf(stderr, "sluiced: bad SLUICE_FAULT '%s'\n",
		    getenv("SLUICE_FAULT"));
		return 2;
	}
	/* And a pause point: "recover:MS" holds recovery open MS ms. */
	if (fault_arm_pause_spec(getenv("SLUICE_FAULT_PAUSE")) != 0) {
		fprintf(stderr, "sluiced: bad SLUICE_FAULT_PAUSE '%s'\n",
		    getenv("SLUICE_FAULT_PAUSE"));
		return 2;
	}
#endif
	srv_config_defaults(&cfg);
	rc = parse_args(argc, argv, &cfg);
	if (rc != 0)
		return rc;
	return srv_run(&cfg);
}
