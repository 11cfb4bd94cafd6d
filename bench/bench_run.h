/* bench_run - what a workload driver measures, and the drivers: sluiced
 * over nng req0 in its wire protocol (bench_sluice.c), sluiced through
 * libsluice (bench_libsluice.c), and the servers spoken to over plain TCP
 * (bench_tcp.h: beanstalkd's protocol, Redis's). A driver connects,
 * preloads what the workload needs outside the timing, runs the workload,
 * checks the counts, and fills a bench_result; the caller prints it. */
#ifndef SLUICE_BENCH_RUN_H
#define SLUICE_BENCH_RUN_H

#include <stdint.h>

#include "bench_hist.h"
#include "bench_opts.h"

struct bench_result {
	uint64_t ops;         /* puts (tasks) + take/ack pairs */
	uint64_t requests;    /* put requests (a batch counts once) */
	uint64_t puts;        /* tasks put */
	uint64_t take_acks;   /* tasks taken and acked */
	uint64_t empty_takes; /* mixed: takes that found the tube empty */
	uint64_t preloaded;   /* tasks put before the clock started */
	double preload_s;
	double seconds; /* from the first request to the last reply */
	long long left; /* drain: tasks left in the tube after; -1 unknown */
	int64_t server_cpu_ns; /* --server-pid's CPU time over the run; -1 */
	int64_t client_cpu_ns; /* this process's (every thread's) over it */
	struct bench_hist lat_put;  /* ns per put request (or batch) */
	struct bench_hist lat_take; /* ns per take + ack pair */
};

/* What one connection counted; each driver keeps one per connection. */
struct bench_tally {
	uint64_t puts, take_acks, empty, requests;
	struct bench_hist lat_put, lat_take;
};

void bench_tally_init(struct bench_tally *t);

/* Adds a connection's tally to the result (and recomputes r->ops). */
void bench_result_add(struct bench_result *r, const struct bench_tally *t);

/* Whether a put workload without --duration put exactly the tasks asked
 * for. Returns 0, or -1 after printing why. */
int bench_check_puts(const struct bench_opts *o, const struct bench_result *r);

/* Whether a drain took and acked every preloaded task (with --duration:
 * all but r->left, which the driver counted). `unit` names them ("tasks",
 * "jobs"). Returns 0, or -1 after printing why. */
int bench_check_drain(
    const struct bench_opts *o, const struct bench_result *r, const char *unit);

/* Before the preload: a drain must start on an empty tube (`before`
 * tasks are in it). Sets r->preloaded to what the workload preloads.
 * Returns 0, or -1 after printing why. */
int bench_check_start(
    const struct bench_opts *o, long long before, struct bench_result *r);

/* The CPU time, user + system, of the process --server-pid names: every
 * thread's, those that ended included (the kernel's clock of the process,
 * in ns; /proc/PID/stat's ticks when that clock cannot be read). -1 when
 * there is no --server-pid or neither can be read. */
int64_t bench_server_cpu_ns(const struct bench_opts *o);

/* The CPU time, user + system, of this process: every thread's. */
int64_t bench_self_cpu_ns(void);

/* Sets r->server_cpu_ns to the server's CPU time since `before` (a value
 * of bench_server_cpu_ns), or -1 when either end is unknown, and
 * r->client_cpu_ns to this process's since `self_before` (a value of
 * bench_self_cpu_ns). */
void bench_result_cpu(struct bench_result *r, const struct bench_opts *o,
    int64_t before, int64_t self_before);

/* Run the workload `o` names. Return 0, or -1 after printing why on stderr
 * (the server refused, did not answer, or broke the protocol; a count did
 * not add up). */
int bench_sluice_run(const struct bench_opts *o, struct bench_result *r);
int bench_libsluice_run(const struct bench_opts *o, struct bench_result *r);

/* "sluice-bench: " and the message on stderr. */
void bench_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
