/* bench_opts - the command line of sluice-bench: what to run, against what,
 * and the bounds of the run. Parsing is pure (no I/O) so the tests can
 * feed it argument vectors. */
#ifndef SLUICE_BENCH_OPTS_H
#define SLUICE_BENCH_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum bench_target {
	BENCH_SLUICE = 1,     /* sluiced, its wire protocol on nng req0 */
	BENCH_BEANSTALKD = 2, /* beanstalkd's text protocol */
	BENCH_LIBSLUICE = 3,  /* sluiced through libsluice's calls */
	BENCH_REDIS = 4,      /* Redis streams, RESP */
	BENCH_HTTP = 5,       /* sluiced's HTTP task API (--http) */
};

enum bench_workload {
	BENCH_PUT = 1,   /* C connections put N tasks */
	BENCH_DRAIN = 2, /* preload N, then C connections take + ack them */
	BENCH_MIXED = 3, /* preload, then producers and consumers for a time */
};

enum {
	BENCH_CONNS_MAX = 4096,
	BENCH_BATCH_MAX = 1000,    /* sluice's MSG_BATCH_MAX */
	BENCH_BYTES_MAX = 1 << 20, /* sluice's default payload limit */
	BENCH_TUBE_MAX = 200,
	BENCH_URL_MAX = 256,
	BENCH_PRELOAD_DEFAULT = 10000, /* mixed */
	BENCH_TASKS_DEFAULT = 10000,
	BENCH_MIXED_MS_DEFAULT = 10000, /* mixed runs 10 s */
	BENCH_TIMEOUT_MS_DEFAULT = 10000,
	BENCH_LIMIT_MS_DEFAULT = 300000, /* the whole run, preload included */
};

/* Which side of a workload a connection plays. */
enum bench_role {
	BENCH_PRODUCER = 1, /* puts */
	BENCH_CONSUMER = 2, /* takes + acks */
	BENCH_BOTH = 3,     /* mixed with one connection: alternates */
};

struct bench_opts {
	enum bench_target target;
	enum bench_workload workload;
	char url[BENCH_URL_MAX];
	unsigned conns;       /* -c */
	uint64_t tasks;       /* -n: put and drain */
	size_t bytes;         /* -s: payload size */
	uint64_t duration_ms; /* put, drain: a cap; mixed: the run; 0 = none */
	unsigned batch;       /* put: tasks per request (1 = no batch) */
	uint64_t preload;     /* mixed: tasks put before the clock starts */
	char tube[BENCH_TUBE_MAX + 1];
	uint64_t timeout_ms; /* longest wait for one reply */
	uint64_t limit_ms;   /* hard limit on the whole run */
	bool json;           /* also print one JSON line, last */
	int server_pid;      /* whose CPU time to measure; 0 = none */
	const char *tls_ca;  /* libsluice with tls+tcp://: the CA */
};

/* Fills `o` from argv. Returns 0; 1 when --help was asked (nothing else is
 * checked); -1 with a one-line reason in `err` when the arguments are
 * wrong. Resets getopt, so it may be called more than once. */
int bench_opts_parse(
    struct bench_opts *o, int argc, char **argv, char *err, size_t errlen);

void bench_opts_usage(FILE *f);

/* "10s", "250ms", "2m", "1.5s" into ms. Returns 0; DUR_EBARE for a bare
 * number ("10": seconds or milliseconds? as sluiced and the sluice tool,
 * util/dur.h); -1 when it does not parse. */
int bench_parse_duration(const char *s, uint64_t *ms);

/* A count: digits with an optional k (10^3) or M (10^6) suffix. Returns 0,
 * or -1 when it does not parse or overflows. */
int bench_parse_count(const char *s, uint64_t *out);

/* Role of connection `i` of `conns` in workload `w`. Mixed: the first
 * half (rounded down) produces, the rest consume; a single connection
 * does both. */
enum bench_role bench_role_of(
    enum bench_workload w, unsigned i, unsigned conns);

const char *bench_target_name(enum bench_target t);
const char *bench_workload_name(enum bench_workload w);

#endif
