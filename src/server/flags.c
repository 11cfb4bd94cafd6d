/* flags - sluiced's command line: --help's text, the table of long
 * options, and flags_parse, which fills struct config from argv and
 * then checks the values together (failover's, TLS's, the beanstalk face
 * beside --auth). The checks of one value each live in flags_value.c.
 * Every complaint is one line on stderr and exit code 2, before anything
 * is opened or written. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/seg.h"
#include "proto/msg.h"
#include "queue/queue.h"
#include "server/core/snapdue.h"
#include "server/face/http/http.h"
#include "server/flags.h"
#include "sluice.h"
#include "util/log.h"

static const char usage[] =
    "usage: sluiced [options]\n"
    "\n"
    "A persistent, replicated job queue server.\n"
    "\n"
    "Listening:\n"
    "  --listen URL           where clients connect: a URL such as\n"
    "                         tcp://HOST:PORT (default tcp://127.0.0.1:7711)\n"
    "\n"
    "Storage & durability:\n"
    "  --data DIR             data directory (log segments, snapshots);\n"
    "                         created when missing (default ./data)\n"
    "  --fsync always|DUR|never\n"
    "                         always: fdatasync before any reply (default);\n"
    "                         DUR: fdatasync every DUR (1ms to 1h), up to\n"
    "                         DUR of acknowledged writes at risk;\n"
    "                         never: leave it to the OS\n"
    "  --wal-commit uring|uring-fsync|uring-auto|inline\n"
    "                         uring: each batch is one O_DIRECT write made\n"
    "                         durable by the disk (RWF_DSYNC) through\n"
    "                         io_uring, and the server goes on serving\n"
    "                         meanwhile (default; inline where the file\n"
    "                         system refuses O_DIRECT, logged);\n"
    "                         uring-fsync: the same O_DIRECT writes, each\n"
    "                         followed by an fdatasync that io_uring\n"
    "                         runs on its worker thread (faster than\n"
    "                         uring on some loaded machines whose disk\n"
    "                         lacks FUA: docs/benchmarks.md);\n"
    "                         uring-auto: the same O_DIRECT writes, made\n"
    "                         durable by the fdatasync while commits hold\n"
    "                         one or two records on average (one or two\n"
    "                         clients), by RWF_DSYNC otherwise;\n"
    "                         inline: pwrite + fdatasync on the server's\n"
    "                         thread, which waits for the disk\n"
    "  --wal-inflight N       uring: up to N batches written at once (1 to\n"
    "                         16, default 1): a batch then ends on a 4 KiB\n"
    "                         block with a pad record while commits are\n"
    "                         contended, so that the next may go at once\n"
    "                         (docs/log-format.md)\n"
    "  --segment-size BYTES   log segment size (default 67108864)\n"
    "  --snapshot-records N   snapshot after N records (default 1000000),\n"
    "                         at least (--snapshot-growth)\n"
    "  --snapshot-bytes BYTES snapshot after BYTES of log (default 256 MiB),\n"
    "                         at least (--snapshot-growth)\n"
    "  --snapshot-growth PCT  and not before the log since the last\n"
    "                         snapshot holds PCT % of that snapshot's\n"
    "                         entries in records (or of its size in\n"
    "                         bytes), so that a growing queue is not\n"
    "                         rebuilt whole every N records; a restart\n"
    "                         replays at most that much after the\n"
    "                         snapshot it loads (default 100, 0 to\n"
    "                         10000; 0: the two floors alone)\n"
    "  --keep-segments N      old segments kept after a snapshot, for\n"
    "                         followers (default 2)\n"
    "  --keep-snapshots N     snapshots kept, with the segments the oldest\n"
    "                         of them needs, so that a damaged newest one\n"
    "                         falls back to the one before (default 2,\n"
    "                         1 to 100)\n"
    "  --snapshot-reuse SECS  the snapshot worker keeps the state it last\n"
    "                         wrote for SECS seconds, and a snapshot\n"
    "                         started meanwhile applies only the log since\n"
    "                         to it instead of loading the newest snapshot\n"
    "                         again (cheaper under a long load; costs a\n"
    "                         second copy of the state for that long;\n"
    "                         default 30, 0 to 86400; 0: never)\n"
    "  --max-log-bytes N      the most the log's segment files may take,\n"
    "                         preallocated ones included; a number with\n"
    "                         an optional k, M or G (KiB, MiB, GiB); at\n"
    "                         least two segments. When it is reached,\n"
    "                         puts are refused while takes, acks, fails\n"
    "                         and deletes go on (default: no limit, only\n"
    "                         the disk's)\n"
    "\n"
    "Queue behaviour:\n"
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
    "                         or is ready again at once (the beanstalk\n"
    "                         face's jobs: at once, as beanstalkd does)\n"
    "\n"
    "Replication & failover:\n"
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
    "  --advertise-http URL   the URL clients reach --http at, published\n"
    "                         in etcd so that another cluster's node can\n"
    "                         name it (default: --http, unless it listens\n"
    "                         on every address: then none)\n"
    "  --leader-ttl DUR       the leader's lease in etcd: a leader that\n"
    "                         cannot renew it stops taking writes before\n"
    "                         it ends, and a follower takes over after it\n"
    "                         (1s to 5m, whole seconds; default 3s)\n"
    "  --map-reread DUR       with --etcd, how often the node reads the\n"
    "                         whole cluster map even when its revision did\n"
    "                         not move, for an entry edited in etcd by hand\n"
    "                         (1s to 1h; default 5s)\n"
    "\n"
    "Security:\n"
    "  --auth FILE            clients must send a token of FILE first;\n"
    "                         lines NAME ROLE TUBES SHA256HEX [QUOTAS],\n"
    "                         quotas tubes= tasks= bytes= parked= and a\n"
    "                         `default` line (default: 1000 tubes for a\n"
    "                         token not for *; see docs/security.md);\n"
    "                         SIGHUP reads it again\n"
    "  --tls-cert FILE        this node's certificate (PEM), for the\n"
    "                         tls+tcp:// URLs of --listen and --repl-listen\n"
    "                         and for --http, which then serves HTTPS\n"
    "  --tls-key FILE         the certificate's private key (PEM)\n"
    "  --tls-ca FILE          the CA (PEM) that signs the peers: a follower\n"
    "                         verifies its leader (--follow tls+tcp://)\n"
    "                         with it, and --tls-client-auth clients\n"
    "  --tls-client-auth      every TLS port requires a client certificate\n"
    "                         signed by --tls-ca\n"
    "\n"
    "HTTP:\n"
    "  --http ADDR            serve the task API /v1/ (docs/http-api.md),\n"
    "                         /metrics, /health, /stats and the admin page /\n"
    "                         on ADDR, e.g. 127.0.0.1:7780; over HTTPS when\n"
    "                         --tls-cert is given (default: none)\n"
    "  --http-admin           allow the admin writes over HTTP, the page's\n"
    "                         and /v1/'s alike: kick, delete, flush, release,\n"
    "                         update, pause, tube settings, snapshot, a\n"
    "                         forced lease (default: refused with 403)\n"
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
    "  --metrics-tubes N      tubes with series of their own in /metrics,\n"
    "                         the deepest first; the rest are summed in\n"
    "                         the totals; 0..10000 (default 100)\n"
    "\n"
    "Beanstalk face:\n"
    "  --beanstalk ADDR       also speak beanstalkd's protocol on ADDR,\n"
    "                         e.g. 127.0.0.1:11300, or a Unix socket\n"
    "                         unix:PATH (default: none);\n"
    "                         SIGUSR1 drains as beanstalkd does (puts\n"
    "                         refused, takes go on: docs/beanstalk.md)\n"
    "  --beanstalk-max-job-size BYTES\n"
    "                         the beanstalk face's put limit, at most\n"
    "                         --max-payload (default: --max-payload);\n"
    "                         65535 is beanstalkd's: a bigger put is\n"
    "                         JOB_TOO_BIG\n"
    "  --beanstalk-insecure   with --auth, let --beanstalk listen on an\n"
    "                         address other than loopback (beanstalkd's\n"
    "                         protocol has no way to authenticate)\n"
    "\n"
    "Limits:\n"
    "  --max-payload BYTES    largest task payload (default 1048576, or\n"
    "                         what a smaller --segment-size holds)\n"
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
    "  --max-waiting-takes N  takes that may wait for a task on this node\n"
    "                         at once; past it a take that would wait is\n"
    "                         refused with ELIMIT; 0: no limit (default\n"
    "                         100000); as many waits for a task's\n"
    "                         result (sluice wait) may be parked too\n"
    "  --max-waiting-takes-per-conn N\n"
    "                         the same per connection (an HTTP connection\n"
    "                         waits for one answer at a time); 0: no\n"
    "                         limit (default 256)\n"
    "\n"
    "Logging:\n"
    "  --log-level LEVEL      err, warn, info (default) or debug\n"
    "  --log-format FORMAT    text (default) or json: one object per line\n"
    "\n"
    "Information:\n"
    "  --version              print the version and exit\n"
    "  --help                 print this help and exit\n"
    "\n"
    "DUR is a number with a unit, ms, s, m, h or d: 500ms, 2s, 1.5m, 1h,\n"
    "30d; a bare number other than 0 is refused (30s or 30ms?).\n"
    "Nothing is written to --data until every address above could be\n"
    "listened on.\n";

static const char hint[] = "Try 'sluiced --help'.\n";

/* What a put's record may hold besides its payload, header included:
 * tube, key and group names (200 bytes each), up to 1,000 tasks it
 * waits for, its numbers; a bound, not an exact sum. */
enum { PUT_FIELDS_ROOM = 64 << 10 };

enum {
	OPT_DATA = 256,
	OPT_LISTEN,
	OPT_FSYNC,
	OPT_WAL_COMMIT,
	OPT_WAL_INFLIGHT,
	OPT_REPL_LISTEN,
	OPT_FOLLOW,
	OPT_SYNC_REPLICAS,
	OPT_SYNC_TIMEOUT,
	OPT_ETCD,
	OPT_CLUSTER,
	OPT_NODE,
	OPT_ADVERTISE,
	OPT_ADVERTISE_REPL,
	OPT_ADVERTISE_HTTP,
	OPT_LEADER_TTL,
	OPT_MAP_REREAD,
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
	OPT_BEANSTALK_MAX_JOB,
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
	OPT_SNAP_GROWTH,
	OPT_KEEP_SEGMENTS,
	OPT_KEEP_SNAPSHOTS,
	OPT_SNAP_REUSE,
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
	{ "wal-commit", required_argument, NULL, OPT_WAL_COMMIT },
	{ "wal-inflight", required_argument, NULL, OPT_WAL_INFLIGHT },
	{ "repl-listen", required_argument, NULL, OPT_REPL_LISTEN },
	{ "follow", required_argument, NULL, OPT_FOLLOW },
	{ "sync-replicas", required_argument, NULL, OPT_SYNC_REPLICAS },
	{ "sync-timeout", required_argument, NULL, OPT_SYNC_TIMEOUT },
	{ "etcd", required_argument, NULL, OPT_ETCD },
	{ "cluster", required_argument, NULL, OPT_CLUSTER },
	{ "node", required_argument, NULL, OPT_NODE },
	{ "advertise", required_argument, NULL, OPT_ADVERTISE },
	{ "advertise-repl", required_argument, NULL, OPT_ADVERTISE_REPL },
	{ "advertise-http", required_argument, NULL, OPT_ADVERTISE_HTTP },
	{ "leader-ttl", required_argument, NULL, OPT_LEADER_TTL },
	{ "map-reread", required_argument, NULL, OPT_MAP_REREAD },
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
	{ "beanstalk-max-job-size", required_argument, NULL,
	    OPT_BEANSTALK_MAX_JOB },
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
	{ "snapshot-growth", required_argument, NULL, OPT_SNAP_GROWTH },
	{ "keep-segments", required_argument, NULL, OPT_KEEP_SEGMENTS },
	{ "keep-snapshots", required_argument, NULL, OPT_KEEP_SNAPSHOTS },
	{ "snapshot-reuse", required_argument, NULL, OPT_SNAP_REUSE },
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

void
flags_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->data_dir = "./data";
	cfg->listen = "tcp://127.0.0.1:7711";
	cfg->fsync = WAL_FSYNC_ALWAYS;
	cfg->wal_commit = WAL_COMMIT_DIRECT;
	cfg->wal_fsync_op = false;
	cfg->wal_adapt = false;
	cfg->wal_inflight = 1;
	cfg->max_payload = QUEUE_DEFAULT_MAX_PAYLOAD;
	cfg->snap_records = 1000000;
	cfg->snap_bytes = 256u << 20;
	cfg->snap_growth = SNAPDUE_GROWTH_DEFAULT;
	cfg->keep_segments = 2;
	cfg->keep_snapshots = 2;
	cfg->snap_reuse_s = 30;
	cfg->default_ttr_ms = QUEUE_DEFAULT_TTR_MS;
	cfg->dedup_ms = QUEUE_DEFAULT_DEDUP_MS;
	cfg->max_done = QUEUE_DEFAULT_MAX_DONE;
	cfg->sync_timeout_ms = 5000;
	cfg->cluster = "sluice";
	cfg->leader_ttl_ms = 3000;
	cfg->map_reread_ms = 5000;
	cfg->max_waits = CONFIG_DEFAULT_MAX_WAITS;
	cfg->max_waits_conn = CONFIG_DEFAULT_MAX_WAITS_CONN;
	cfg->metrics_tubes = CONFIG_DEFAULT_METRICS_TUBES;
	cfg->max_conns = CONFIG_DEFAULT_MAX_CONNS;
	cfg->max_unauth_conns = CONFIG_DEFAULT_MAX_UNAUTH;
	cfg->handshake_ms = CONFIG_DEFAULT_HANDSHAKE_MS;
	cfg->frame_ms = CONFIG_DEFAULT_FRAME_MS;
	cfg->stall_ms = CONFIG_DEFAULT_STALL_MS;
	cfg->max_queued_bytes = CONFIG_DEFAULT_QUEUED_BYTES;
	cfg->max_queued_replies = CONFIG_DEFAULT_QUEUED_REPLIES;
	cfg->http_body_timeout_ms = HTTP_BODY_TIMEOUT_DEFAULT;
	cfg->http_header_timeout_ms = HTTP_HEADER_TIMEOUT_DEFAULT;
	cfg->http_idle_timeout_ms = HTTP_IDLE_TIMEOUT_DEFAULT;
	cfg->http_max_conns = HTTP_MAX_CONNS_DEFAULT;
}

/* --repl-token-file: the token is FILE's first line, its blanks cut. */
static int
read_repl_token(const char *path, const char **out)
{
	static char token[MSG_TOKEN_MAX + 2];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return flags_error(
		    "--repl-token-file %s: %s", path, strerror(errno));
	if (fgets(token, sizeof(token), f) == NULL)
		token[0] = '\0';
	fclose(f);
	n = strcspn(token, " \t\r\n");
	if (n == 0 || n > MSG_TOKEN_MAX)
		return flags_error(
		    "--repl-token-file %s: its first line is not "
		    "a token (1-%d bytes)",
		    path, MSG_TOKEN_MAX);
	token[n] = '\0';
	*out = token;
	return 0;
}

/* Without --repl-token-file: $SLUICE_REPL_TOKEN, when set. */
static int
env_repl_token(struct config *cfg)
{
	const char *env = getenv("SLUICE_REPL_TOKEN");
	size_t n;

	if (cfg->repl_token != NULL || env == NULL)
		return 0;
	n = strlen(env);
	if (n == 0 || n > MSG_TOKEN_MAX || strcspn(env, " \t\r\n") != n)
		return flags_error("$SLUICE_REPL_TOKEN is not a token (1-%d "
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

/* A put's record holds its payload, its fields (tube, key, group, the
 * tasks it waits for...) and a header, in one segment: a --max-payload
 * whose record cannot fit would refuse its largest puts for the log's
 * sake, under the payload limit's name. So a limit given is refused,
 * and the default lowered to what a small segment holds. */
static int
check_payload_fits(struct config *cfg, bool given)
{
	uint64_t seg = cfg->seg_size ? cfg->seg_size : SEG_SIZE_DEFAULT;
	uint64_t room = seg - SEG_HDR_SIZE - PUT_FIELDS_ROOM;

	if (cfg->max_payload <= room)
		return 0;
	if (!given) {
		cfg->max_payload = (size_t)room;
		return 0;
	}
	return flags_error("--max-payload %zu does not fit in a log segment "
	                   "of %" PRIu64 " bytes (--segment-size): a task's "
	                   "record holds its payload and up to %u bytes of "
	                   "header and fields, in one segment; a "
	                   "--segment-size of at least %" PRIu64
	                   " or a --max-payload of at most %" PRIu64,
	    cfg->max_payload, seg, (unsigned)PUT_FIELDS_ROOM,
	    (cfg->max_payload + (uint64_t)PUT_FIELDS_ROOM + SEG_HDR_SIZE +
	        4095) &
	        ~UINT64_C(4095),
	    room);
}

int
flags_parse(int argc, char **argv, struct config *cfg)
{
	bool payload_given = false;
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
			rc = flags_check_url(
			    "--listen", optarg, "127.0.0.1:7711");
			break;
		case OPT_FSYNC:
			rc = flags_fsync(optarg, cfg);
			break;
		case OPT_WAL_COMMIT:
			rc = flags_wal_commit(optarg, cfg);
			break;
		case OPT_WAL_INFLIGHT:
			if ((rc = flags_u64(
			         "--wal-inflight", optarg, 1, 16, &v)) == 0)
				cfg->wal_inflight = (unsigned)v;
			break;
		case OPT_REPL_LISTEN:
			cfg->repl_listen = optarg;
			rc = flags_check_url(
			    "--repl-listen", optarg, "127.0.0.1:7721");
			break;
		case OPT_FOLLOW:
			cfg->follow = optarg;
			rc = flags_check_url(
			    "--follow", optarg, "127.0.0.1:7721");
			break;
		case OPT_SYNC_REPLICAS:
			if ((rc = flags_u64(
			         "--sync-replicas", optarg, 0, 16, &v)) == 0)
				cfg->sync_replicas = (unsigned)v;
			break;
		case OPT_SYNC_TIMEOUT:
			if ((rc = flags_ms("--sync-timeout", optarg, 1, 3600000,
			         &v)) == 0)
				cfg->sync_timeout_ms = (uint32_t)v;
			break;
		case OPT_ETCD:
			cfg->etcd = optarg;
			rc = flags_check_endpoints(optarg);
			break;
		case OPT_CLUSTER:
			cfg->cluster = optarg;
			rc = flags_check_name("--cluster", optarg);
			break;
		case OPT_NODE:
			cfg->node = optarg;
			rc = flags_check_name("--node", optarg);
			break;
		case OPT_ADVERTISE:
			cfg->advertise = optarg;
			rc = flags_check_url(
			    "--advertise", optarg, "127.0.0.1:7711");
			break;
		case OPT_ADVERTISE_REPL:
			cfg->advertise_repl = optarg;
			rc = flags_check_url(
			    "--advertise-repl", optarg, "127.0.0.1:7721");
			break;
		case OPT_ADVERTISE_HTTP:
			cfg->advertise_http = optarg;
			rc = flags_check_http_url("--advertise-http", optarg);
			break;
		case OPT_LEADER_TTL:
			if ((rc = flags_ms("--leader-ttl", optarg, 1000, 300000,
			         &v)) == 0)
				cfg->leader_ttl_ms =
				    (uint32_t)((v + 999) / 1000 * 1000);
			break;
		case OPT_MAP_REREAD:
			if ((rc = flags_ms("--map-reread", optarg, 1000,
			         3600000, &v)) == 0)
				cfg->map_reread_ms = (uint32_t)v;
			break;
		case OPT_HTTP:
			cfg->http = optarg;
			rc = flags_check_addr(
			    "--http", optarg, "127.0.0.1:7780");
			break;
		case OPT_HTTP_ADMIN:
			cfg->http_admin = true;
			break;
		case OPT_HTTP_HOST:
			rc = flags_http_host(cfg, optarg);
			break;
		case OPT_HTTP_BODY_TIMEOUT:
			if ((rc = flags_ms("--http-body-timeout", optarg, 100,
			         3600000, &v)) == 0)
				cfg->http_body_timeout_ms = (uint32_t)v;
			break;
		case OPT_HTTP_HEADER_TIMEOUT:
			if ((rc = flags_ms("--http-header-timeout", optarg, 100,
			         3600000, &v)) == 0)
				cfg->http_header_timeout_ms = (uint32_t)v;
			break;
		case OPT_HTTP_IDLE_TIMEOUT:
			if ((rc = flags_ms("--http-idle-timeout", optarg, 100,
			         86400000, &v)) == 0)
				cfg->http_idle_timeout_ms = (uint32_t)v;
			break;
		case OPT_HTTP_MAX_CONNS:
			if ((rc = flags_u64("--http-max-conns", optarg, 1,
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
			rc = flags_check_beanstalk_addr(optarg);
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
		case OPT_BEANSTALK_MAX_JOB:
			if ((rc = flags_u64("--beanstalk-max-job-size", optarg,
			         1, 64 << 20, &v)) == 0)
				cfg->beanstalk_max_job = (size_t)v;
			break;
		case OPT_MAX_PAYLOAD:
			if ((rc = flags_u64("--max-payload", optarg, 1,
			         64 << 20, &v)) == 0)
				cfg->max_payload = (size_t)v;
			payload_given = true;
			break;
		case OPT_MAX_CONNS:
			if ((rc = flags_u64(
			         "--max-conns", optarg, 0, 1 << 24, &v)) == 0)
				cfg->max_conns = (unsigned)v;
			break;
		case OPT_MAX_UNAUTH_CONNS:
			if ((rc = flags_u64("--max-unauth-conns", optarg, 0,
			         1 << 24, &v)) == 0)
				cfg->max_unauth_conns = (unsigned)v;
			break;
		case OPT_HANDSHAKE_TIMEOUT:
			if ((rc = flags_ms("--handshake-timeout", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->handshake_ms = (uint32_t)v;
			break;
		case OPT_FRAME_TIMEOUT:
			if ((rc = flags_ms("--frame-timeout", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->frame_ms = (uint32_t)v;
			break;
		case OPT_IDLE_TIMEOUT:
			if ((rc = flags_ms("--idle-timeout", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->idle_ms = (uint32_t)v;
			break;
		case OPT_STALL_TIMEOUT:
			if ((rc = flags_ms("--stall-timeout", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->stall_ms = (uint32_t)v;
			break;
		case OPT_MAX_QUEUED_BYTES:
			rc = flags_size("--max-queued-bytes", optarg,
			    &cfg->max_queued_bytes);
			break;
		case OPT_MAX_QUEUED_REPLIES:
			if ((rc = flags_u64("--max-queued-replies", optarg, 1,
			         1 << 20, &v)) == 0)
				cfg->max_queued_replies = (unsigned)v;
			break;
		case OPT_TTR:
			if ((rc = flags_ms(
			         "--ttr", optarg, 1, UINT32_MAX, &v)) == 0)
				cfg->default_ttr_ms = (uint32_t)v;
			break;
		case OPT_DEDUP:
			if ((rc = flags_ms("--dedup-window", optarg, 0,
			         UINT32_MAX, &v)) == 0)
				cfg->dedup_ms = (uint32_t)v;
			break;
		case OPT_KEEP_DONE:
			if ((rc = flags_ms("--keep-done", optarg, 0,
			         UINT64_C(3650) * 86400000, &v)) == 0)
				cfg->keep_done_ms = (int64_t)v;
			break;
		case OPT_MAX_DONE:
			rc = flags_u64("--max-done", optarg, 1, UINT64_MAX,
			    &cfg->max_done);
			break;
		case OPT_MAX_WAITS:
			rc = flags_u64("--max-waiting-takes", optarg, 0,
			    UINT64_MAX, &cfg->max_waits);
			break;
		case OPT_MAX_WAITS_CONN:
			if ((rc = flags_u64("--max-waiting-takes-per-conn",
			         optarg, 0, UINT32_MAX, &v)) == 0)
				cfg->max_waits_conn = (uint32_t)v;
			break;
		case OPT_METRICS_TUBES:
			if ((rc = flags_u64("--metrics-tubes", optarg, 0,
			         MSG_STATS_TUBES_MAX, &v)) == 0)
				cfg->metrics_tubes = (uint32_t)v;
			break;
		case OPT_LOST_LEASE_RETRY:
			if (strcmp(optarg, "backoff") == 0) {
				cfg->lost_lease_retry = QUEUE_RETRY_BACKOFF;
			} else if (strcmp(optarg, "immediate") == 0) {
				cfg->lost_lease_retry = QUEUE_RETRY_IMMEDIATE;
			} else {
				rc = flags_error(
				    "--lost-lease-retry takes "
				    "backoff or immediate, not '%s'",
				    optarg);
			}
			break;
		case OPT_SEG_SIZE:
			if ((rc = flags_u64("--segment-size", optarg, 1 << 20,
			         UINT64_C(1) << 36, &v)) == 0)
				cfg->seg_size = (v + 4095) & ~UINT64_C(4095);
			break;
		case OPT_SNAP_RECORDS:
			rc = flags_u64("--snapshot-records", optarg, 1,
			    UINT64_MAX, &cfg->snap_records);
			break;
		case OPT_SNAP_BYTES:
			rc = flags_u64("--snapshot-bytes", optarg, 1,
			    UINT64_MAX, &cfg->snap_bytes);
			break;
		case OPT_SNAP_GROWTH:
			if ((rc = flags_u64("--snapshot-growth", optarg, 0,
			         SNAPDUE_GROWTH_MAX, &v)) == 0)
				cfg->snap_growth = (unsigned)v;
			break;
		case OPT_KEEP_SEGMENTS:
			if ((rc = flags_u64("--keep-segments", optarg, 0,
			         100000, &v)) == 0)
				cfg->keep_segments = (unsigned)v;
			break;
		case OPT_SNAP_REUSE:
			if ((rc = flags_u64("--snapshot-reuse", optarg, 0,
			         86400, &v)) == 0)
				cfg->snap_reuse_s = (unsigned)v;
			break;
		case OPT_KEEP_SNAPSHOTS:
			if ((rc = flags_u64(
			         "--keep-snapshots", optarg, 1, 100, &v)) == 0)
				cfg->keep_snapshots = (unsigned)v;
			break;
		case OPT_MAX_LOG_BYTES:
			rc = flags_size(
			    "--max-log-bytes", optarg, &cfg->max_log_bytes);
			break;
		case OPT_LOG_LEVEL:
			if (log_parse_level(optarg, &level) != 0)
				rc = flags_error("--log-level takes err, warn, "
				                 "info or debug, not '%s'",
				    optarg);
			else
				log_set_level(level);
			break;
		case OPT_LOG_FORMAT:
			if (strcmp(optarg, "text") != 0 &&
			    strcmp(optarg, "json") != 0)
				rc = flags_error("--log-format takes text or "
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
			rc = flags_error(
			    "--%s needs a value", option_name(optopt));
			fputs(hint, stderr);
			break;
		default:
			rc = flags_error(
			    "unknown option '%s'", argv[optind - 1]);
			fputs(hint, stderr);
			break;
		}
	}
	if (rc != 0)
		return rc;
	if (optind < argc) {
		flags_error("unexpected argument '%s'", argv[optind]);
		fputs(hint, stderr);
		return 2;
	}
	if ((rc = env_repl_token(cfg)) != 0)
		return rc;
	if (cfg->http_admin && cfg->http == NULL)
		return flags_error("--http-admin needs --http");
	if (cfg->http_nhosts > 0 && cfg->http == NULL)
		return flags_error("--http-host needs --http");
	if ((rc = check_payload_fits(cfg, payload_given)) != 0)
		return rc;
	if ((rc = flags_check_beanstalk(cfg)) != 0)
		return rc;
	if (cfg->sync_replicas > 0 && cfg->repl_listen == NULL)
		return flags_error("--sync-replicas needs --repl-listen");
	if ((rc = flags_check_failover(cfg)) != 0)
		return rc;
	if ((rc = flags_check_tls(cfg)) != 0)
		return rc;
	if (cfg->max_log_bytes != 0) {
		uint64_t seg = cfg->seg_size ? cfg->seg_size : SEG_SIZE_DEFAULT;

		if (cfg->max_log_bytes / 2 < seg)
			return flags_error(
			    "--max-log-bytes %" PRIu64
			    " is less than two segments of %" PRIu64
			    " bytes (--segment-size): the log needs "
			    "one to write and one ready",
			    cfg->max_log_bytes, seg);
	}
	return 0;
}
