/* bench_opts - see bench_opts.h. Every check that does not need a server
 * is made here, before anything connects, so a wrong flag fails in a
 * millisecond with a reason instead of halfway through a preload. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opts.h"
#include "util/dur.h"

enum {
	OPT_TARGET = 256,
	OPT_URL,
	OPT_WORKLOAD,
	OPT_DURATION,
	OPT_BATCH,
	OPT_PRELOAD,
	OPT_TUBE,
	OPT_TIMEOUT,
	OPT_LIMIT,
	OPT_JSON,
	OPT_SERVER_PID,
	OPT_TLS_CA,
};

static const struct option long_opts[] = {
	{ "target", required_argument, NULL, OPT_TARGET },
	{ "url", required_argument, NULL, OPT_URL },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "conns", required_argument, NULL, 'c' },
	{ "tasks", required_argument, NULL, 'n' },
	{ "size", required_argument, NULL, 's' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "preload", required_argument, NULL, OPT_PRELOAD },
	{ "tube", required_argument, NULL, OPT_TUBE },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "server-pid", required_argument, NULL, OPT_SERVER_PID },
	{ "tls-ca", required_argument, NULL, OPT_TLS_CA },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void
bench_opts_usage(FILE *f)
{
	static const char *const lines[] = {
		"usage: sluice-bench --target TARGET [--url URL]",
		"    --workload put|drain|mixed -c CONNS -n TASKS -s BYTES",
		"    [--duration DUR] [--batch N] [--preload N] [--tube T]",
		"    [--timeout DUR] [--limit DUR] [--server-pid PID] [--json]",
		"",
		"Closed-loop client workloads: each connection sends its next",
		"request when the reply to its previous one came.",
		"",
		"  --target T    sluice:     sluiced, its protocol on nng req0",
		"                            (asynchronous, one thread)",
		"                libsluice:  sluiced through libsluice, a "
		"thread",
		"                            and a handle per connection",
		"                beanstalkd: beanstalkd's text protocol "
		"(also",
		"                            sluiced --beanstalk)",
		"                redis:      a Redis stream and consumer "
		"group",
		"                            (XADD, XREADGROUP, XACK + XDEL)",
		"                http:       sluiced's HTTP task API, "
		"keep-alive",
		"                            HTTP/1.1 (POST tasks, take, ack)",
		"  --url URL     tcp://HOST:PORT; default tcp://127.0.0.1:7711",
		"                (sluice, libsluice), tcp://127.0.0.1:11300",
		"                (beanstalkd), tcp://127.0.0.1:6379 (redis),",
		"                tcp://127.0.0.1:7780 (http: the --http "
		"address);",
		"                libsluice also tls+tcp://HOST:PORT",
		"  --tls-ca FILE the CA of a tls+tcp:// URL (libsluice)",
		"                (libsluice sends $SLUICE_TOKEN when set: "
		"--auth)",
		"  --workload W  put:   C connections put N tasks",
		"                drain: N tasks are preloaded (untimed), then "
		"C",
		"                       connections take + ack until the tube",
		"                       is empty (beanstalkd: reserve-with-",
		"                       timeout 0 + delete); 1 op = take + ack",
		"                mixed: a preload, then C/2 producers put and",
		"                       C/2 consumers take + ack for "
		"--duration",
		"                       (C = 1: one connection alternates)",
		"  -c, --conns C connections (default 1, at most 4096)",
		"  -n, --tasks N tasks to put or drain (default 10000; 10k, "
		"2M)",
		"  -s, --size S  payload bytes (default 100)",
		"  --duration D  mixed: how long (default 10s); put, drain: "
		"stop",
		"                at N (drain: the empty tube) or after D,",
		"                whichever comes first (500ms, 5s, 1m)",
		"  --batch N     put: N tasks per request, at most 1000 "
		"(sluice's",
		"                batch put; beanstalkd and redis have none, so",
		"                there N puts are pipelined in one write);",
		"                drain (libsluice only): take up to N tasks,",
		"                then one batch ack of them; latency per batch",
		"  --preload N   mixed: tasks put before the clock starts "
		"(10000)",
		"  --tube T      tube to use (default bench); drain wants it "
		"empty",
		"  --timeout D   give up when a reply takes longer (default "
		"10s)",
		"  --limit D     give up when the whole run takes longer (5m)",
		"  --server-pid P  also report the CPU time (user + system) "
		"process",
		"                P used during the run, per op",
		"  --json        end with one JSON line of the same figures",
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		fprintf(f, "%s\n", lines[i]);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int
bench_parse_count(const char *s, uint64_t *out)
{
	unsigned long long v;
	uint64_t mul = 1;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		mul = 1000;
	else if (*end == 'M')
		mul = 1000000;
	if (mul != 1)
		end++;
	if (*end != '\0')
		return -1;
	if (v > UINT64_MAX / mul)
		return -1;
	*out = (uint64_t)v * mul;
	return 0;
}

int
bench_parse_duration(const char *s, uint64_t *ms)
{
	double v, mul;
	char *end;

	if (s == NULL || ((*s < '0' || *s > '9') && *s != '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || !isfinite(v) || v < 0)
		return -1;
	if (strcmp(end, "") == 0)
		return DUR_EBARE;
	if (strcmp(end, "s") == 0)
		mul = 1000.0;
	else if (strcmp(end, "ms") == 0)
		mul = 1.0;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		mul = 60000.0;
	else if (strcmp(end, "h") == 0)
		mul = 3600000.0;
	else
		return -1;
	v *= mul;
	if (v > 1e15)
		return -1;
	*ms = (uint64_t)(v + 0.5);
	return 0;
}

/* A tube both servers accept: 1-200 bytes of [A-Za-z0-9_./-], not starting
 * with '-' (sluice also allows ':', beanstalkd does not; beanstalkd also
 * allows a few more, sluice does not). */
static bool
tube_ok(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > BENCH_TUBE_MAX || t[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = t[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		        (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		        c == '/' || c == '-'))
			return false;
	}
	return true;
}

static int
count_arg(const char *name, const char *s, uint64_t lo, uint64_t hi,
    uint64_t *out, char *err, size_t errlen)
{
	uint64_t v;

	if (bench_parse_count(s, &v) != 0 || v < lo || v > hi)
		return fail(err, errlen,
		    "%s: '%s' is not a count in %llu..%llu", name, s,
		    (unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
}

static int
duration_arg(
    const char *name, const char *s, uint64_t *out, char *err, size_t errlen)
{
	char hint[128];
	int rc = bench_parse_duration(s, out);

	if (rc == DUR_EBARE) {
		dur_hint(hint, sizeof(hint), s);
		return fail(err, errlen, "%s %s: a duration needs a unit: %s",
		    name, s, hint);
	}
	if (rc != 0 || *out == 0)
		return fail(err, errlen,
		    "%s: '%s' is not a duration (e.g. 500ms, 10s, 2m)", name,
		    s);
	return 0;
}

int
bench_opts_parse(
    struct bench_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	bool have_duration = false, have_batch = false, have_preload = false;
	bool have_limit = false;
	uint64_t v = 0;
	int c;

	memset(o, 0, sizeof(*o));
	o->conns = 1;
	o->tasks = BENCH_TASKS_DEFAULT;
	o->bytes = 100;
	o->batch = 1;
	o->preload = BENCH_PRELOAD_DEFAULT;
	strcpy(o->tube, "bench");
	o->timeout_ms = BENCH_TIMEOUT_MS_DEFAULT;
	o->limit_ms = BENCH_LIMIT_MS_DEFAULT;

	optind = 0; /* GNU: start over, for repeated calls */
	opterr = 0;
	while (
	    (c = getopt_long(argc, argv, ":c:n:s:h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_TARGET:
			if (strcmp(optarg, "sluice") == 0)
				o->target = BENCH_SLUICE;
			else if (strcmp(optarg, "libsluice") == 0)
				o->target = BENCH_LIBSLUICE;
			else if (strcmp(optarg, "beanstalkd") == 0 ||
			    strcmp(optarg, "beanstalk") == 0)
				o->target = BENCH_BEANSTALKD;
			else if (strcmp(optarg, "redis") == 0)
				o->target = BENCH_REDIS;
			else if (strcmp(optarg, "http") == 0)
				o->target = BENCH_HTTP;
			else
				return fail(err, errlen,
				    "--target: '%s' is not sluice, libsluice, "
				    "beanstalkd, redis or http",
				    optarg);
			break;
		case OPT_TLS_CA:
			o->tls_ca = optarg;
			break;
		case OPT_URL:
			if (strlen(optarg) >= sizeof(o->url))
				return fail(err, errlen, "--url: too long");
			strcpy(o->url, optarg);
			break;
		case OPT_WORKLOAD:
			if (strcmp(optarg, "put") == 0)
				o->workload = BENCH_PUT;
			else if (strcmp(optarg, "drain") == 0)
				o->workload = BENCH_DRAIN;
			else if (strcmp(optarg, "mixed") == 0)
				o->workload = BENCH_MIXED;
			else
				return fail(err, errlen,
				    "--workload: '%s' is not put, drain or "
				    "mixed",
				    optarg);
			break;
		case 'c':
			if (count_arg("-c", optarg, 1, BENCH_CONNS_MAX, &v, err,
			        errlen) != 0)
				return -1;
			o->conns = (unsigned)v;
			break;
		case 'n':
			if (count_arg("-n", optarg, 1, UINT32_MAX, &o->tasks,
			        err, errlen) != 0)
				return -1;
			break;
		case 's':
			if (count_arg("-s", optarg, 0, BENCH_BYTES_MAX, &v, err,
			        errlen) != 0)
				return -1;
			o->bytes = (size_t)v;
			break;
		case OPT_DURATION:
			if (duration_arg("--duration", optarg, &o->duration_ms,
			        err, errlen) != 0)
				return -1;
			have_duration = true;
			break;
		case OPT_BATCH:
			if (count_arg("--batch", optarg, 1, BENCH_BATCH_MAX, &v,
			        err, errlen) != 0)
				return -1;
			o->batch = (unsigned)v;
			have_batch = true;
			break;
		case OPT_PRELOAD:
			if (count_arg("--preload", optarg, 0, UINT32_MAX,
			        &o->preload, err, errlen) != 0)
				return -1;
			have_preload = true;
			break;
		case OPT_TUBE:
			if (!tube_ok(optarg))
				return fail(err, errlen,
				    "--tube: '%s' is not 1-200 bytes of "
				    "[A-Za-z0-9_./-] (not starting with '-')",
				    optarg);
			strcpy(o->tube, optarg);
			break;
		case OPT_TIMEOUT:
			if (duration_arg("--timeout", optarg, &o->timeout_ms,
			        err, errlen) != 0)
				return -1;
			break;
		case OPT_LIMIT:
			if (duration_arg("--limit", optarg, &o->limit_ms, err,
			        errlen) != 0)
				return -1;
			have_limit = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_SERVER_PID:
			if (count_arg("--server-pid", optarg, 1, INT32_MAX, &v,
			        err, errlen) != 0)
				return -1;
			o->server_pid = (int)v;
			break;
		case 'h':
			return 1;
		case ':':
			return fail(
			    err, errlen, "%s needs a value", argv[optind - 1]);
		default:
			return fail(err, errlen, "unknown option '%s'",
			    argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fail(
		    err, errlen, "unexpected argument '%s'", argv[optind]);
	if (o->target == 0)
		return fail(err, errlen,
		    "--target sluice|libsluice|beanstalkd|redis|http is "
		    "needed");
	if (o->workload == 0)
		return fail(
		    err, errlen, "--workload put|drain|mixed is needed");
	if (o->url[0] == '\0')
		strcpy(o->url,
		    o->target == BENCH_BEANSTALKD  ? "tcp://127.0.0.1:11300"
		        : o->target == BENCH_REDIS ? "tcp://127.0.0.1:6379"
		        : o->target == BENCH_HTTP  ? "tcp://127.0.0.1:7780"
		                                   : "tcp://127.0.0.1:7711");
	if (o->target == BENCH_LIBSLUICE &&
	    strncmp(o->url, "tls+tcp://", 10) == 0) {
		if (o->tls_ca == NULL)
			return fail(err, errlen, "--url %s needs --tls-ca FILE",
			    o->url);
	} else if (strncmp(o->url, "tcp://", 6) != 0) {
		return fail(
		    err, errlen, "--url: '%s' is not tcp://HOST:PORT", o->url);
	}
	if (have_batch && o->workload != BENCH_PUT &&
	    !(o->workload == BENCH_DRAIN && o->target == BENCH_LIBSLUICE))
		return fail(err, errlen,
		    "--batch applies to put, and to drain with libsluice");
	if (have_preload && o->workload != BENCH_MIXED)
		return fail(err, errlen,
		    "--preload applies to mixed only (drain preloads -n)");
	if (o->workload == BENCH_MIXED && !have_duration)
		o->duration_ms = BENCH_MIXED_MS_DEFAULT;
	if (!have_limit && o->duration_ms + 60000 > o->limit_ms)
		o->limit_ms = o->duration_ms + 60000;
	if (o->duration_ms >= o->limit_ms)
		return fail(
		    err, errlen, "--limit must be longer than --duration");
	return 0;
}

const char *
bench_target_name(enum bench_target t)
{
	switch (t) {
	case BENCH_SLUICE:
		return "sluice";
	case BENCH_BEANSTALKD:
		return "beanstalkd";
	case BENCH_LIBSLUICE:
		return "libsluice";
	case BENCH_REDIS:
		return "redis";
	case BENCH_HTTP:
		return "http";
	}
	return "?";
}

const char *
bench_workload_name(enum bench_workload w)
{
	switch (w) {
	case BENCH_PUT:
		return "put";
	case BENCH_DRAIN:
		return "drain";
	case BENCH_MIXED:
		return "mixed";
	}
	return "?";
}

enum bench_role
bench_role_of(enum bench_workload w, unsigned i, unsigned conns)
{
	switch (w) {
	case BENCH_PUT:
		return BENCH_PRODUCER;
	case BENCH_DRAIN:
		return BENCH_CONSUMER;
	case BENCH_MIXED:
		if (conns == 1)
			return BENCH_BOTH;
		return i < conns / 2 ? BENCH_PRODUCER : BENCH_CONSUMER;
	}
	return BENCH_PRODUCER;
}
