/* bench_run - what a workload driver measures, and the drivers: two for
 * sluiced (nng req0 aios; libsluice, a thread per connection), one for
 * beanstalkd (its text protocol over TCP).
 * A driver connects, preloads what the workload needs outside the timing,
 * runs the workload, checks the counts, and fills a bench_result; the
 * caller prints it. */
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

/* Run the workload `o` names. Return 0, or -1 after printing why on stderr
 * (the server refused, did not answer, or broke the protocol; a count did
 * not add up). */
int bench_sluice_run(const struct bench_opts *o, struct bench_result *r);
int bench_lib_run(const struct bench_opts *o, struct bench_result *r);
int bench_beanstalk_run(const struct bench_opts *o, struct bench_result *r);

/* "sluice-bench: " and the message on stderr. */
void bench_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
