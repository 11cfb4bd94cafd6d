/* sluiced - the sluice server: command-line flags, then srv_run(). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>

#include "log/seg.h"
#include "proto/msg.h"
#include "queue/queue.h"
#include "server/certdates.h"
#include "server/preflight.h"
#include "server/srv.h"
#include "sluice.h"
#include "util/dur.h"
#include "util/fault.h"
#include "util/log.h"
#include "util/tlsfile.h"

static const char usage[] =
    "usage: sluiced [options]\n"
    "\n"
    "A persistent, replicated job queue server.\n"
    "\n"
    "  --data DIR             data directory (log segments, snapshots);\n"
    "                         created when missing (default ./data)\n"
    "  --listen URL           where clients connect: a URL such as\n"
    "                         tcp://HOST:PORT (default tcp://127.0.0.1:7711)\n"
    "  --fsync always|DUR|never\n"
    "                         always: fdatasync before any reply (default);\n"
    "                         DUR: fdatasync every DUR (1ms to 1h), up to\n"
    "                         DUR of acknowledged writes at risk;\n"
    "                         never: leave it to the OS\n"
    "  --repl-listen URL      accept followers on URL, e.g.\n"
    "                         tcp://127.0.0.1:7721 (default: none)\n"
    "  --follow URL           run as a follower of the leader whose\n"
    "                         --repl-listen is URL\n"
    "  --repl-token-file FILE the token (FILE's first line) this node shows\n"
    "                         a leader with --auth when it follows; a\n"
    "                         token of role replica (or $SLUICE_REPL_TOKEN;\n"
    "                         never on the command line)\n"
    "  --sync-replicas K      answer a write only once K followers hold it\n"
    "                         (default 0)\n"
    "  --sync-timeout DUR     how long a write waits for those followers\n"
    "                         before it fails with 'too few replicas'\n"
    "                         (default 5s)\n"
    "  --etcd URL[,URL...]    automatic failover: elect the leader through\n"
    "                         etcd at these client URLs, e.g.\n"
    "                         http://127.0.0.1:2379 (default: none; promote\n"
    "                         and follow by hand). Needs --repl-listen\n"
    "  --cluster NAME         the cluster's name in etcd: nodes of one\n"
    "                         cluster share it (default sluice)\n"
    "  --node NAME            this node's name in the cluster (default: the\n"
    "                         HOST:PORT of --advertise)\n"
    "  --advertise URL        the client URL other nodes and clients reach\n"
    "                         this node at (default: --listen)\n"
    "  --advertise-repl URL   the URL followers reach --repl-listen at\n"
    "                         (default: --repl-listen)\n"
    "  --leader-ttl DUR       the leader's lease in etcd: a leader that\n"
    "                         cannot renew it stops taking writes before\n"
    "                         it ends, and a follower takes over after it\n"
    "                         (1s to 5m, whole seconds; default 3s)\n"
    "  --http ADDR            serve /metrics, /health, /stats and the admin\n"
    "                         page / on ADDR, e.g. 127.0.0.1:7780; over\n"
    "                         HTTPS when --tls-cert is given\n"
    "                         (default: none)\n"
    "  --http-admin           the admin page may kick and delete tasks\n"
    "                         (default: read-only)\n"
    "  --http-host NAME       a name the HTTP face answers to besides its\n"
    "                         address (and localhost names on loopback):\n"
    "                         a request's Host must be one of them, else\n"
    "                         421 (DNS rebinding); repeatable, up to 16\n"
    "  --http-body-timeout DUR  a request's whole body must arrive within\n"
    "                         this of its headers, else 408 and the\n"
    "                         connection closed (default 60s)\n"
    "  --http-header-timeout DUR  a request's line and headers must arrive\n"
    "                         within this of their first byte, else the\n"
    "                         connection is closed (default 10s)\n"
    "  --http-idle-timeout DUR  an HTTP connection without a request in\n"
    "                         progress, or whose client reads nothing of\n"
    "                         its answer, is closed after this (default\n"
    "                         60s)\n"
    "  --http-max-conns N     HTTP connections open at once; one more is\n"
    "                         closed as it comes (default 512)\n"
    "  --tls-cert FILE        this node's certificate (PEM), for the\n"
    "                         tls+tcp:// URLs of --listen and --repl-listen\n"
    "                         and for --http, which then serves HTTPS\n"
    "  --tls-key FILE         the certificate's private key (PEM)\n"
    "  --tls-ca FILE          the CA (PEM) that signs the peers: a follower\n"
    "                         verifies its leader (--follow tls+tcp://)\n"
    "                         with it, and --tls-client-auth clients\n"
    "  --tls-client-auth      every TLS port requires a client certificate\n"
    "                         signed by --tls-ca\n"
    "  --beanstalk ADDR       also speak beanstalkd's protocol on ADDR,\n"
    "                         e.g. 127.0.0.1:11300 (default: none)\n"
    "  --beanstalk-insecure   with --auth, let --beanstalk listen on an\n"
    "                         address other than loopback (beanstalkd's\n"
    "                         protocol has no way to authenticate)\n"
    "  --auth FILE            clients must send a token of FILE first;\n"
    "                         lines NAME ROLE TUBES SHA256HEX [QUOTAS],\n"
    "                         quotas tubes= tasks= bytes= parked= and a\n"
    "                         `default` line (default: 1000 tubes for a\n"
    "                         token not for *; see docs/security.md);\n"
    "                         SIGHUP reads it again\n"
    "  --max-payload BYTES    largest task payload (default 1048576)\n"
    "  --max-conns N          open connections per face (tcp://, beanstalk,\n"
    "                         tls+tcp://, ipc://); more are closed at accept\n"
    "                         (default 10000; 0: no limit)\n"
    "  --max-unauth-conns N   of those, not yet through their handshake\n"
    "                         (and, with --auth, their token); the oldest\n"
    "                         is closed for a new one (default 1000)\n"
    "  --handshake-timeout DUR\n"
    "                         time from accept to the handshake done (and\n"
    "                         the token accepted, with --auth; on\n"
    "                         --repl-listen a replica token) (default 10s)\n"
    "  --frame-timeout DUR    time a message or command begun has to\n"
    "                         arrive whole, or 16 KiB more of it\n"
    "                         (default 30s)\n"
    "  --idle-timeout DUR     close a connection with nothing in or out\n"
    "                         this long, no request waiting and no task\n"
    "                         taken (default 0: never)\n"
    "  --stall-timeout DUR    close a connection over its output limits\n"
    "                         that has read nothing this long (default 30s)\n"
    "  --max-queued-bytes BYTES\n"
    "                         reply bytes a connection may leave unread\n"
    "                         before its requests wait (default 4M)\n"
    "  --max-queued-replies N replies a connection may leave unread or\n"
    "                         have in progress before its requests wait\n"
    "                         (default 256)\n"
    "  --ttr DUR              default time-to-run (default 60s)\n"
    "  --dedup-window DUR     how long a completed key stays taken in\n"
    "                         its tube (keys are per tube)\n"
    "                         (default 10m)\n"
    "  --keep-done DUR        keep acked tasks as done this long, with\n"
    "                         their finish time, duration and result;\n"
    "                         0 deletes them at ack (default 0)\n"
    "  --max-done N           the most done tasks kept; past it, those\n"
    "                         whose keep ends first are purged (default\n"
    "                         1000000)\n"
    "  --lost-lease-retry backoff|immediate\n"
    "                         a task whose lease expired or whose worker\n"
    "                         disconnected waits the fail backoff (1s,\n"
    "                         doubling per attempt, at most 1h; default)\n"
    "                         or is ready again at once\n"
    "  --segment-size BYTES   log segment size (default 67108864)\n"
    "  --snapshot-records N   snapshot after N records (default 1000000)\n"
    "  --snapshot-bytes BYTES snapshot after BYTES of log (default 256 MiB)\n"
    "  --keep-segments N      old segments kept after a snapshot, for\n"
    "                         followers (default 2)\n"
    "  --keep-snapshots N     snapshots kept, with the segments the oldest\n"
    "                         of them needs, so that a damaged newest one\n"
    "                         falls back to the one before (default 2,\n"
    "                         1 to 100)\n"
    "  --max-log-bytes N      the most the log's segment files may take,\n"
    "                         preallocated ones included; a number with\n"
    "                         an optional k, M or G (KiB, MiB, GiB); at\n"
    "                         least two segments. When it is reached,\n"
    "                         puts are refused while takes, acks, fails\n"
    "                         and deletes go on (default: no limit, only\n"
    "                         the disk's)\n"
    "  --max-waiting-takes N  takes that may wait for a task on this node\n"
    "                         at once; past it a take that would wait is\n"
    "                         refused with ELIMIT; 0: no limit (default\n"
    "                         100000)\n"
    "  --max-waiting-takes-per-conn N\n"
    "                         the same per connection (an HTTP connection\n"
    "                         waits for one answer at a time); 0: no\n"
    "                         limit (default 256)\n"
    "  --metrics-tubes N      tubes with series of their own in /metrics,\n"
    "                         the deepest first; the rest are summed in\n"
    "                         the totals; 0..10000 (default 100)\n"
    "  --log-level LEVEL      err, warn, info (default) or debug\n"
    "  --log-format FORMAT    text (default) or json: one object per line\n"
    "  --version              print the version and exit\n"
    "  --help                 print this help and exit\n"
    "\n"
    "DUR is milliseconds, or a number with ms, s, m, h or d: 500, 2s, "
    "1.5m, 1h, 30d.\n"
    "Nothing is written to --data until every address above could be\n"
    "listened on.\n";

static const char hint[] = "Try 'sluiced --help'.\n";

enum {
	OPT_DATA = 256,
	OPT_LISTEN,
	OPT_FSYNC,
	OPT_REPL_LISTEN,
	OPT_FOLLOW,
	OPT_SYNC_REPLICAS,
	OPT_SYNC_TIMEOUT,
	OPT_ETCD,
	OPT_CLUSTER,
	OPT_NODE,
	OPT_ADVERTISE,
	OPT_ADVERTISE_REPL,
	OPT_LEADER_TTL,
	OPT_HTTP,
	OPT_HTTP_ADMIN,
	OPT_HTTP_HOST,
	OPT_HTTP_BODY_TIMEOUT,
	OPT_HTTP_HEADER_TIMEOUT,
	OPT_HTTP_IDLE_TIMEOUT,
	OPT_HTTP_MAX_CONNS,
	OPT_AUTH,
	OPT_REPL_TOKEN_FILE,
	OPT_BEANSTALK_INSECURE,
	OPT_BEANSTALK,
	OPT_TLS_CERT,
	OPT_TLS_KEY,
	OPT_TLS_CA,
	OPT_TLS_CLIENT_AUTH,
	OPT_MAX_PAYLOAD,
	OPT_MAX_CONNS,
	OPT_MAX_UNAUTH_CONNS,
	OPT_HANDSHAKE_TIMEOUT,
	OPT_FRAME_TIMEOUT,
	OPT_IDLE_TIMEOUT,
	OPT_STALL_TIMEOUT,
	OPT_MAX_QUEUED_BYTES,
	OPT_MAX_QUEUED_REPLIES,
	OPT_TTR,
	OPT_DEDUP,
	OPT_KEEP_DONE,
	OPT_MAX_DONE,
	OPT_LOST_LEASE_RETRY,
	OPT_SEG_SIZE,
	OPT_SNAP_RECORDS,
	OPT_SNAP_BYTES,
	OPT_KEEP_SEGMENTS,
	OPT_KEEP_SNAPSHOTS,
	OPT_MAX_LOG_BYTES,
	OPT_MAX_WAITS,
	OPT_MAX_WAITS_CONN,
	OPT_METRICS_TUBES,
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
	{ "etcd", required_argument, NULL, OPT_ETCD },
	{ "cluster", required_argument, NULL, OPT_CLUSTER },
	{ "node", required_argument, NULL, OPT_NODE },
	{ "advertise", required_argument, NULL, OPT_ADVERTISE },
	{ "advertise-repl", required_argument, NULL, OPT_ADVERTISE_REPL },
	{ "leader-ttl", required_argument, NULL, OPT_LEADER_TTL },
	{ "http", required_argument, NULL, OPT_HTTP },
	{ "http-admin", no_argument, NULL, OPT_HTTP_ADMIN },
	{ "http-host", required_argument, NULL, OPT_HTTP_HOST },
	{ "http-body-timeout", required_argument, NULL, OPT_HTTP_BODY_TIMEOUT },
	{ "http-header-timeout", required_argument, NULL,
	    OPT_HTTP_HEADER_TIMEOUT },
	{ "http-idle-timeout", required_argument, NULL, OPT_HTTP_IDLE_TIMEOUT },
	{ "http-max-conns", required_argument, NULL, OPT_HTTP_MAX_CONNS },
	{ "auth", required_argument, NULL, OPT_AUTH },
	{ "repl-token-file", required_argument, NULL, OPT_REPL_TOKEN_FILE },
	{ "beanstalk-insecure", no_argument, NULL, OPT_BEANSTALK_INSECURE },
	{ "beanstalk", required_argument, NULL, OPT_BEANSTALK },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "tls-ca", required_argument, NULL, OPT_TLS_CA },
	{ "tls-client-auth", no_argument, NULL, OPT_TLS_CLIENT_AUTH },
	{ "max-payload", required_argument, NULL, OPT_MAX_PAYLOAD },
	{ "max-conns", required_argument, NULL, OPT_MAX_CONNS },
	{ "max-unauth-conns", required_argument, NULL, OPT_MAX_UNAUTH_CONNS },
	{ "handshake-timeout", required_argument, NULL, OPT_HANDSHAKE_TIMEOUT },
	{ "frame-timeout", required_argument, NULL, OPT_FRAME_TIMEOUT },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "stall-timeout", required_argument, NULL, OPT_STALL_TIMEOUT },
	{ "max-queued-bytes", required_argument, NULL, OPT_MAX_QUEUED_BYTES },
	{ "max-queued-replies", required_argument, NULL,
	    OPT_MAX_QUEUED_REPLIES },
	{ "ttr", required_argument, NULL, OPT_TTR },
	{ "dedup-window", required_argument, NULL, OPT_DEDUP },
	{ "keep-done", required_argument, NULL, OPT_KEEP_DONE },
	{ "max-done", required_argument, NULL, OPT_MAX_DONE },
	{ "lost-lease-retry", required_argument, NULL, OPT_LOST_LEASE_RETRY },
	{ "segment-size", required_argument, NULL, OPT_SEG_SIZE },
	{ "snapshot-records", required_argument, NULL, OPT_SNAP_RECORDS },
	{ "snapshot-bytes", required_argument, NULL, OPT_SNAP_BYTES },
	{ "keep-segments", required_argument, NULL, OPT_KEEP_SEGMENTS },
	{ "keep-snapshots", required_argument, NULL, OPT_KEEP_SNAPSHOTS },
	{ "max-log-bytes", required_argument, NULL, OPT_MAX_LOG_BYTES },
	{ "max-waiting-takes", required_argument, NULL, OPT_MAX_WAITS },
	{ "max-waiting-takes-per-conn", required_argument, NULL,
	    OPT_MAX_WAITS_CONN },
	{ "metrics-tubes", required_argument, NULL, OPT_METRICS_TUBES },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* ---- the flags' values ------------------------------------------------ */

/* Every complaint about the command line: one line, exit code 2. */
static int flag_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int
flag_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sluiced: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* A decimal integer in [lo, hi], the whole string. */
static int
parse_u64(
    const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] < '0' ||
	    s[0] > '9' || v < lo || v > hi)
		return flag_error("%s takes a whole number from %" PRIu64
		                  " to %" PRIu64 ", not '%s'",
		    flag, lo, hi, s);
	*out = v;
	return 0;
}

/* A duration (util/dur.h, as the sluice tool reads them) in [lo, hi] ms. */
static int
parse_ms(
    const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char a[32], b[32];
	uint64_t ms;

	dur_fmt(a, sizeof(a), lo);
	dur_fmt(b, sizeof(b), hi);
	if (dur_parse(s, &ms) != 0 || ms < lo || ms > hi)
		return flag_error("%s takes a duration from %s to %s: "
		                  "milliseconds, or a number with ms, s, m, h "
		                  "or d (500, 2s, 1.5m, 1h, 30d); not '%s'",
		    flag, a, b, s);
	*out = ms;
	return 0;
}

/* --http-host NAME: a DNS name or an IP literal, without a port. */
static int
add_http_host(struct srv_config *cfg, const char *name)
{
	size_t n = strlen(name);

	if (cfg->http_nhosts == SRV_HTTP_HOSTS_MAX)
		return flag_error(
		    "--http-host: at most %d names", (int)SRV_HTTP_HOSTS_MAX);
	if (n == 0 || n > 253 ||
	    strspn(name,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789.-_:[]") != n ||
	    (strchr(name, ':') != NULL && name[0] != '['))
		return flag_error("--http-host takes a host name or an IP "
		                  "address without a port ([::1] for IPv6); "
		                  "not '%s'",
		    name);
	cfg->http_hosts[cfg->http_nhosts++] = name;
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
		return flag_error("%s takes a number of bytes, with an "
		                  "optional k, M or G (for example 512M), not "
		                  "'%s'",
		    flag, s);
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
	if (dur_parse(s, &ms) != 0 || ms < 1 || ms > 3600000)
		return flag_error("--fsync takes always, never, or how often "
		                  "to sync: a duration from 1ms to 1h (500, "
		                  "10ms, 1s); not '%s'",
		    s);
	cfg->fsync = WAL_FSYNC_INTERVAL;
	cfg->fsync_ms = (uint32_t)ms;
	return 0;
}

/* True when `port` is a decimal port number, 1 to 65535. */
static bool
port_ok(const char *port)
{
	uint64_t v = 0;

	if (*port == '\0' || strlen(port) > 5)
		return false;
	for (const char *p = port; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	return v >= 1 && v <= 65535;
}

/* An nng URL (--listen, --repl-listen, --follow): a scheme nng knows,
 * and for the TCP ones a host (for --follow) and a port. `example` is the
 * flag's default port, for the message. */
static int
check_url(const char *flag, const char *s, const char *example)
{
	static const char *const schemes[] = { "tcp", "tcp4", "tcp6", "tls+tcp",
		"tls+tcp4", "tls+tcp6", "ipc", "abstract", "ws", "ws4", "ws6",
		"wss", "wss4", "wss6" };
	bool known = false, tcp;
	nng_url *u = NULL;
	int rc = 0;

	if (strstr(s, "://") == NULL)
		return flag_error("%s takes a URL such as tcp://%s, not '%s'",
		    flag, strchr(s, ':') != NULL ? s : example, s);
	if (nng_url_parse(&u, s) != 0)
		return flag_error("%s: '%s' is not a URL (one such as "
		                  "tcp://%s is expected)",
		    flag, s, example);
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		known = known || strcmp(u->u_scheme, schemes[i]) == 0;
	tcp = strncmp(u->u_scheme, "ipc", 3) != 0 &&
	    strcmp(u->u_scheme, "abstract") != 0;
	if (!known)
		rc = flag_error("%s: '%s' is not a transport sluiced speaks "
		                "(tcp://, tls+tcp://, ipc://, ws://), in '%s'",
		    flag, u->u_scheme, s);
	else if (tcp && !port_ok(u->u_port))
		rc = flag_error("%s: '%s' has no port from 1 to 65535 (a URL "
		                "such as tcp://%s is expected)",
		    flag, s, example);
	else if (tcp && strcmp(flag, "--follow") == 0 &&
	    u->u_hostname[0] == '\0')
		rc = flag_error("--follow: '%s' names no host (a URL such as "
		                "tcp://%s is expected)",
		    s, example);
	nng_url_free(u);
	return rc;
}

/* HOST:PORT (--http, --beanstalk; --http also http:// or
 * https://HOST:PORT). */
static int
check_addr(const char *flag, const char *s, const char *example)
{
	const char *a = s, *colon;

	if (strcmp(flag, "--http") == 0 && strncmp(a, "http://", 7) == 0)
		a += 7;
	else if (strcmp(flag, "--http") == 0 && strncmp(a, "https://", 8) == 0)
		a += 8;
	colon = strrchr(a, ':');
	if (colon == NULL || !port_ok(colon + 1) || strchr(a, '/') != NULL)
		return flag_error("%s takes HOST:PORT such as %s (PORT from 1 "
		                  "to 65535), not '%s'",
		    flag, example, s);
	return 0;
}

/* The beanstalk face has no way to authenticate: beside --auth it
 * listens on loopback only, unless --beanstalk-insecure says otherwise. */
static int
check_beanstalk_auth(const struct srv_config *cfg)
{
	const char *host = cfg->beanstalk;

	if (cfg->beanstalk_insecure && cfg->beanstalk == NULL)
		return flag_error("--beanstalk-insecure needs --beanstalk");
	if (cfg->auth_file == NULL || host == NULL || cfg->beanstalk_insecure)
		return 0;
	if (strncmp(host, "127.", 4) == 0 ||
	    strncmp(host, "localhost:", 10) == 0 ||
	    strncmp(host, "[::1]:", 6) == 0)
		return 0;
	return flag_error("--beanstalk %s: the beanstalk protocol cannot "
	                  "send a token, so with --auth it listens on "
	                  "loopback only (add --beanstalk-insecure to allow "
	                  "it)",
	    host);
}

/* --etcd: comma-separated http:// URLs with a port. */
static int
check_endpoints(const char *s)
{
	char one[512];
	const char *p = s, *comma;
	size_t len;

	for (int i = 0; i < 16; i++) {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (len == 0 || len >= sizeof(one) ||
		    strncmp(p, "http://", 7) != 0)
			return flag_error("--etcd takes etcd's client URLs "
			                  "such as http://127.0.0.1:2379, "
			                  "separated by commas; not '%s'",
			    s);
		memcpy(one, p, len);
		one[len] = '\0';
		if (strrchr(one + 7, ':') == NULL ||
		    !port_ok(strrchr(one + 7, ':') + 1))
			return flag_error("--etcd: '%s' has no port from 1 to "
			                  "65535 (http://127.0.0.1:2379 is "
			                  "etcd's usual address)",
			    one);
		if (comma == NULL)
			return 0;
		p = comma + 1;
	}
	return flag_error("--etcd takes at most 16 URLs");
}

/* --cluster and --node: 1 to 64 bytes of [A-Za-z0-9_.:-], which go into
 * etcd keys as they are. */
static int
check_name(const char *flag, const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64 ||
	    strspn(s,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	        "0123456789_.:-") != n)
		return flag_error("%s takes 1 to 64 letters, digits and "
		                  "_ . : -, not '%s'",
		    flag, s);
	return 0;
}

/* Whether an nng URL listens on every address (0.0.0.0, ::, or none):
 * no use to others as an address to reach. */
static bool
url_wildcard(const char *url)
{
	const char *h = strstr(url, "://");

	if (h == NULL)
		return true;
	h += 3;
	return h[0] == ':' || h[0] == '*' || strncmp(h, "0.0.0.0:", 8) == 0 ||
	    strncmp(h, "[::]:", 5) == 0;
}

/* The flags of automatic failover, with their defaults. */
static int
check_failover(struct srv_config *cfg)
{
	static char node[80];
	const char *h;

	if (cfg->etcd == NULL) {
		if (cfg->advertise != NULL || cfg->node != NULL ||
		    cfg->advertise_repl != NULL)
			return flag_error("--node, --advertise and "
			                  "--advertise-repl need --etcd");
		return 0;
	}
	if (cfg->follow != NULL)
		return flag_error("--etcd elects the leader: leave --follow "
		                  "out");
	if (cfg->repl_listen == NULL)
		return flag_error("--etcd needs --repl-listen: any node may "
		                  "come to lead, and followers dial it there");
	if (cfg->advertise == NULL) {
		if (url_wildcard(cfg->listen))
			return flag_error("--listen %s is no address others "
			                  "can reach: say --advertise URL",
			    cfg->listen);
		cfg->advertise = cfg->listen;
	}
	if (cfg->advertise_repl == NULL) {
		if (url_wildcard(cfg->repl_listen))
			return flag_error("--repl-listen %s is no address "
			                  "followers can reach: say "
			                  "--advertise-repl URL",
			    cfg->repl_listen);
		cfg->advertise_repl = cfg->repl_listen;
	}
	if (cfg->node == NULL) {
		h = strstr(cfg->advertise, "://");
		snprintf(node, sizeof(node), "%s", h != NULL ? h + 3 : "");
		if (check_name("--node", node) != 0)
			return 2;
		cfg->node = node;
	}
	return 0;
}

/* The TLS flags against the URLs that need them. */
static int
check_tls(const struct srv_config *cfg)
{
	const char *const listening[][2] = { { "--listen", cfg->listen },
		{ "--repl-listen", cfg->repl_listen } };

	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL))
		return flag_error("--tls-cert and --tls-key go together: give "
		                  "both");
	for (size_t i = 0; i < 2; i++)
		if (listening[i][1] != NULL && tlsfile_url(listening[i][1]) &&
		    cfg->tls_cert == NULL)
			return flag_error(
			    "%s %s needs this node's certificate: "
			    "give --tls-cert FILE and --tls-key "
			    "FILE",
			    listening[i][0], listening[i][1]);
	if (cfg->follow != NULL && tlsfile_url(cfg->follow) &&
	    cfg->tls_ca == NULL)
		return flag_error("--follow %s needs --tls-ca FILE: the CA "
		                  "that signed the leader's certificate",
		    cfg->follow);
	if (cfg->etcd != NULL && cfg->repl_listen != NULL &&
	    tlsfile_url(cfg->repl_listen) && cfg->tls_ca == NULL)
		return flag_error("--etcd with --repl-listen %s needs --tls-ca "
		                  "FILE: a node that comes to follow verifies "
		                  "its leader with it",
		    cfg->repl_listen);
	if (cfg->http != NULL && strncmp(cfg->http, "https://", 8) == 0 &&
	    cfg->tls_cert == NULL)
		return flag_error("--http %s needs this node's certificate: "
		                  "give --tls-cert FILE and --tls-key FILE",
		    cfg->http);
	if (cfg->http != NULL && strncmp(cfg->http, "http://", 7) == 0 &&
	    cfg->tls_cert != NULL)
		return flag_error("--http %s: with --tls-cert the HTTP face "
		                  "serves HTTPS; say https:// or HOST:PORT",
		    cfg->http);
	if (cfg->tls_client_auth &&
	    (cfg->tls_ca == NULL || cfg->tls_cert == NULL))
		return flag_error("--tls-client-auth needs --tls-ca (the CA "
		                  "that signs the clients) and --tls-cert");
	return 0;
}

/* Reads and checks the TLS files, before anything is written. */
static int
load_tls(struct srv_config *cfg, struct tlsfile *tls)
{
	static const char *const names[3] = { "--tls-ca", "--tls-cert",
		"--tls-key" };
	char err[512];

	if (cfg->tls_ca == NULL && cfg->tls_cert == NULL)
		return 0;
	if (tlsfile_load(tls, cfg->tls_ca, cfg->tls_cert, cfg->tls_key, names,
	        err, sizeof(err)) != 0) {
		log_err("srv",
		    "cannot use TLS file error=\"%s\"; nothing was written to "
		    "the data directory",
		    err);
		return 1;
	}
	tls->client_auth = cfg->tls_client_auth;
	cfg->tls = tls;
	if (tls->cert != NULL &&
	    certdates_check(cfg->tls_cert, tls->cert, (int64_t)time(NULL)) != 0)
		return 1;
	return 0;
}

/* ---- the command line --------------------------------------------------- */

/* --repl-token-file: the token is FILE's first line, its blanks cut. */
static int
read_repl_token(const char *path, const char **out)
{
	static char token[MSG_TOKEN_MAX + 2];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return flag_error(
		    "--repl-token-file %s: %s", path, strerror(errno));
	if (fgets(token, sizeof(token), f) == NULL)
		token[0] = '\0';
	fclose(f);
	n = strcspn(token, " \t\r\n");
	if (n == 0 || n > MSG_TOKEN_MAX)
		return flag_error("--repl-token-file %s: its first line is not "
		                  "a token (1-%d bytes)",
		    path, MSG_TOKEN_MAX);
	token[n] = '\0';
	*out = token;
	return 0;
}

/* Without --repl-token-file: $SLUICE_REPL_TOKEN, when set. */
static int
env_repl_token(struct srv_config *cfg)
{
	const char *env = getenv("SLUICE_REPL_TOKEN");
	size_t n;

	if (cfg->repl_token != NULL || env == NULL)
		return 0;
	n = strlen(env);
	if (n == 0 || n > MSG_TOKEN_MAX || strcspn(env, " \t\r\n") != n)
		return flag_error("$SLUICE_REPL_TOKEN is not a token (1-%d "
		                  "bytes, no blanks)",
		    MSG_TOKEN_MAX);
	cfg->repl_token = env;
	return 0;
}

/* The long name of the option whose value is `val`. */
static const char *
option_name(int val)
{
	for (const struct option *o = options; o->name != NULL; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

static int
parse_args(int argc, char **argv, struct srv_config *cfg)
{
	enum log_level level;
	uint64_t v;
	int c, rc = 0;

	opterr = 0; /* our own messages: one line, then the hint */
	while (rc == 0 &&
	    (c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
		switch (c) {
		case OPT_DATA:
			cfg->data_dir = optarg;
			break;
		case OPT_LISTEN:
			cfg->listen = optarg;
			rc = check_url("--listen", optarg, "127.0.0.1:7711");
			break;
		case OPT_FSYNC:
			rc = parse_fsync(optarg, cfg);
			break;
		case OPT_REPL_LISTEN:
			cfg->repl_listen = optarg;
			rc = check_url(
			    "--repl-listen", optarg, "127.0.0.1:7721");
			break;
		case OPT_FOLLOW:
			cfg->follow = optarg;
			rc = check_url("--follow", optarg, "127.0.0.1:7721");
			break;
		case OPT_SYNC_REPLICAS:
			if ((rc = parse_u64(
			         "--sync-replicas", optarg, 0, 16, &v)) == 0)
				cfg->sync_replicas = (unsigned)v;
			break;
		case OPT_SYNC_TIMEOUT:
			if ((rc = parse_ms("--sync-timeout", optarg, 1, 3600000,
			         &v)) == 0)
				cfg->sync_timeout_ms = (uint32_t)v;
			break;
		case OPT_ETCD:
			cfg->etcd = optarg;
			rc = check_endpoints(optarg);
			break;
		case OPT_CLUSTER:
			cfg->cluster = optarg;
			rc = check_name("--cluster", optarg);
			break;
		case OPT_NODE:
			cfg->node = optarg;
			rc = check_name("--node", optarg);
			break;
		case OPT_ADVERTISE:
			cfg->advertise = optarg;
			rc = check_url("--advertise", optarg, "127.0.0.1:7711");
			break;
		case OPT_ADVERTISE_REPL:
			cfg->advertise_repl = optarg;
			rc = check_url(
			    "--advertise-repl", optarg, "127.0.0.1:7721");
			break;
		case OPT_LEADER_TTL:
			if ((rc = parse_ms("--leader-ttl", optarg, 1000, 300000,
			         &v)) == 0)
				cfg->leader_ttl_ms =
				    (uint32_t)((v + 999) / 1000 * 1000);
			break;
		case OPT_HTTP:
			cfg->http = optarg;
			rc = check_addr("--http", optarg, "127.0.0.1:7780");
			break;
		case OPT_HTTP_ADMIN:
			cfg->http_admin = true;
			break;
		case OPT_HTTP_HOST:
			rc = add_http_host(cfg, optarg);
			break;
		case OPT_HTTP_BODY_TIMEOUT:
			if ((rc = parse_ms("--http-body-timeout", optarg, 100,
			         3600000, &v)) == 0)
				cfg->http_body_timeout_ms = (uint32_t)v;
			break;
		case OPT_HTTP_HEADER_TIMEOUT:
			if ((rc = parse_ms("--http-header-timeout", optarg, 100,
			         3600000, &v)) == 0)
				cfg->http_header_timeout_ms = (uint32_t)v;
			break;
		case OPT_HTTP_IDLE_TIMEOUT:
			if ((rc = parse_ms("--http-idle-timeout", optarg, 100,
			         86400000, &v)) == 0)
				cfg->http_idle_timeout_ms = (uint32_t)v;
			break;
		case OPT_HTTP_MAX_CONNS:
			if ((rc = parse_u64("--http-max-conns", optarg, 1,
			         1000000, &v)) == 0)
				cfg->http_max_conns = (uint32_t)v;
			break;
		case OPT_AUTH:
			cfg->auth_file = optarg;
			break;
		case OPT_REPL_TOKEN_FILE:
			rc = read_repl_token(optarg, &cfg->repl_token);
			break;
		case OPT_BEANSTALK_INSECURE:
			cfg->beanstalk_insecure = true;
			break;
		case OPT_BEANSTALK:
			cfg->beanstalk = optarg;
			rc = check_addr(
			    "--beanstalk", optarg, "127.0.0.1:11300");
			break;
		case OPT_TLS_CERT:
			cfg->tls_cert = optarg;
			break;
		case OPT_TLS_KEY:
			cfg->tls_key = optarg;
			break;
		case OPT_TLS_CA:
			cfg->tls_ca = optarg;
			break;
		case OPT_TLS_CLIENT_AUTH:
			cfg->tls_client_auth = true;
			break;
		case OPT_MAX_PAYLOAD:
			if ((rc = parse_u64("--max-payload", optarg, 1,
			         64 << 20, &v)) == 0)
				cfg->max_payload = (size_t)v;
			break;
		case OPT_MAX_CONNS:
			if ((rc = parse_u64(
			         "--max-conns", optarg, 0, 1 << 24, &v)) == 0)
				cfg->max_conns = (unsigned)v;
			break;
		case OPT_MAX_UNAUTH_CONNS:
			if ((rc = parse_u64("--max-unauth-conns", optarg, 0,
			         1 << 24, &v)) == 0)
				cfg->max_unauth_conns = (unsigned)v;
			break;
		case OPT_HANDSHAKE_TIMEOUT:
			if ((rc = parse_ms("--handshake-timeout", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->handshake_ms = (uint32_t)v;
			break;
		case OPT_FRAME_TIMEOUT:
			if ((rc = parse_ms("--frame-timeout", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->frame_ms = (uint32_t)v;
			break;
		case OPT_IDLE_TIMEOUT:
			if ((rc = parse_ms("--idle-timeout", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->idle_ms = (uint32_t)v;
			break;
		case OPT_STALL_TIMEOUT:
			if ((rc = parse_ms("--stall-timeout", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->stall_ms = (uint32_t)v;
			break;
		case OPT_MAX_QUEUED_BYTES:
			rc = parse_size("--max-queued-bytes", optarg,
			    &cfg->max_queued_bytes);
			break;
		case OPT_MAX_QUEUED_REPLIES:
			if ((rc = parse_u64("--max-queued-replies", optarg, 1,
			         1 << 20, &v)) == 0)
				cfg->max_queued_replies = (unsigned)v;
			break;
		case OPT_TTR:
			if ((rc = parse_ms(
			         "--ttr", optarg, 1, UINT32_MAX, &v)) == 0)
				cfg->default_ttr_ms = (uint32_t)v;
			break;
		case OPT_DEDUP:
			if ((rc = parse_ms("--dedup-window", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->dedup_ms = (uint32_t)v;
			break;
		case OPT_KEEP_DONE:
			if ((rc = parse_ms("--keep-done", optarg, 0,
			         UINT64_C(3650) * 86400000, &v)) == 0)
				cfg->keep_done_ms = (int64_t)v;
			break;
		case OPT_MAX_DONE:
			rc = parse_u64("--max-done", optarg, 1, UINT64_MAX,
			    &cfg->max_done);
			break;
		case OPT_MAX_WAITS:
			rc = parse_u64("--max-waiting-takes", optarg, 0,
			    UINT64_MAX, &cfg->max_waits);
			break;
		case OPT_MAX_WAITS_CONN:
			if ((rc = parse_u64("--max-waiting-takes-per-conn",
			         optarg, 0, UINT32_MAX, &v)) == 0)
				cfg->max_waits_conn = (uint32_t)v;
			break;
		case OPT_METRICS_TUBES:
			if ((rc = parse_u64("--metrics-tubes", optarg, 0,
			         MSG_STATS_TUBES_MAX, &v)) == 0)
				cfg->metrics_tubes = (uint32_t)v;
			break;
		case OPT_LOST_LEASE_RETRY:
			if (strcmp(optarg, "backoff") == 0) {
				cfg->lost_lease_retry = QUEUE_RETRY_BACKOFF;
			} else if (strcmp(optarg, "immediate") == 0) {
				cfg->lost_lease_retry = QUEUE_RETRY_IMMEDIATE;
			} else {
				rc =
				    flag_error("--lost-lease-retry takes "
				               "backoff or immediate, not '%s'",
				        optarg);
			}
			break;
		case OPT_SEG_SIZE:
			if ((rc = parse_u64("--segment-size", optarg, 1 << 20,
			         UINT64_C(1) << 36, &v)) == 0)
				cfg->seg_size = (v + 4095) & ~UINT64_C(4095);
			break;
		case OPT_SNAP_RECORDS:
			rc = parse_u64("--snapshot-records", optarg, 1,
			    UINT64_MAX, &cfg->snap_records);
			break;
		case OPT_SNAP_BYTES:
			rc = parse_u64("--snapshot-bytes", optarg, 1,
			    UINT64_MAX, &cfg->snap_bytes);
			break;
		case OPT_KEEP_SEGMENTS:
			if ((rc = parse_u64("--keep-segments", optarg, 0,
			         100000, &v)) == 0)
				cfg->keep_segments = (unsigned)v;
			break;
		case OPT_KEEP_SNAPSHOTS:
			if ((rc = parse_u64(
			         "--keep-snapshots", optarg, 1, 100, &v)) == 0)
				cfg->keep_snapshots = (unsigned)v;
			break;
		case OPT_MAX_LOG_BYTES:
			rc = parse_size(
			    "--max-log-bytes", optarg, &cfg->max_log_bytes);
			break;
		case OPT_LOG_LEVEL:
			if (log_parse_level(optarg, &level) != 0)
				rc = flag_error("--log-level takes err, warn, "
				                "info or debug, not '%s'",
				    optarg);
			else
				log_set_level(level);
			break;
		case OPT_LOG_FORMAT:
			if (strcmp(optarg, "text") != 0 &&
			    strcmp(optarg, "json") != 0)
				rc = flag_error("--log-format takes text or "
				                "json, not '%s'",
				    optarg);
			else
				log_set_json(strcmp(optarg, "json") == 0);
			break;
		case OPT_VERSION:
			printf("sluiced %d.%d.%d\n", SLUICE_VERSION_MAJOR,
			    SLUICE_VERSION_MINOR, SLUICE_VERSION_PATCH);
			exit(0);
		case OPT_HELP:
			fputs(usage, stdout);
			exit(0);
		case ':':
			rc = flag_error(
			    "--%s needs a value", option_name(optopt));
			fputs(hint, stderr);
			break;
		default:
			rc =
			    flag_error("unknown option '%s'", argv[optind - 1]);
			fputs(hint, stderr);
			break;
		}
	}
	if (rc != 0)
		return rc;
	if (optind < argc) {
		flag_error("unexpected argument '%s'", argv[optind]);
		fputs(hint, stderr);
		return 2;
	}
	if ((rc = env_repl_token(cfg)) != 0)
		return rc;
	if (cfg->http_admin && cfg->http == NULL)
		return flag_error("--http-admin needs --http");
	if (cfg->http_nhosts > 0 && cfg->http == NULL)
		return flag_error("--http-host needs --http");
	if ((rc = check_beanstalk_auth(cfg)) != 0)
		return rc;
	if (cfg->sync_replicas > 0 && cfg->repl_listen == NULL)
		return flag_error("--sync-replicas needs --repl-listen");
	if ((rc = check_failover(cfg)) != 0)
		return rc;
	if ((rc = check_tls(cfg)) != 0)
		return rc;
	if (cfg->max_log_bytes != 0) {
		uint64_t seg = cfg->seg_size ? cfg->seg_size : SEG_SIZE_DEFAULT;

		if (cfg->max_log_bytes / 2 < seg)
			return flag_error(
			    "--max-log-bytes %" PRIu64
			    " is less than two segments of %" PRIu64
			    " bytes (--segment-size): the log needs "
			    "one to write and one ready",
			    cfg->max_log_bytes, seg);
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

/* Every connection is a descriptor: the soft limit (often 1024, as
 * systemd's default LimitNOFILE) is raised to the hard one, as far as
 * the kernel allows, and the result logged. */
static void
raise_nofile(void)
{
	struct rlimit rl;
	rlim_t was;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	was = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			log_warn("srv",
			    "cannot raise the descriptor limit to the hard "
			    "limit limit=%llu hard=%llu error=\"%s\"",
			    (unsigned long long)was,
			    (unsigned long long)rl.rlim_max, strerror(errno));
			return;
		}
		log_info("srv",
		    "descriptor limit raised to the hard limit was=%llu "
		    "limit=%llu",
		    (unsigned long long)was, (unsigned long long)rl.rlim_cur);
		return;
	}
	log_info("srv", "descriptor limit limit=%llu (the hard limit)",
	    (unsigned long long)rl.rlim_cur);
}

int
main(int argc, char **argv)
{
	struct srv_config cfg;
	struct tlsfile tls = { 0 };
	sigset_t sigs;
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
	/* Before anything is written: a start bound to fail for a TLS
	 * file or an address fails here, with the data directory untouched. The
	 * check starts nng's threads, which must inherit the mask srv_run sets
	 * (SIGINT and SIGTERM blocked: the core reads them from a signalfd), or
	 * a signal would end the process in one of them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	if (load_tls(&cfg, &tls) != 0 || preflight_check(&cfg) != 0)
		return 1;
	raise_nofile();
	rc = srv_run(&cfg);
	tlsfile_fini(&tls);
	return rc;
}
