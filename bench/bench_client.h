/* bench_client - what the benchmarks against a running sluiced share
 * (flow-bench, groups-bench, limits-bench): seconds for rates, a
 * libsluice handle or the end of the program, and tasks put in batches.
 *
 * Design. Each helper takes the program's name for its messages; a
 * failure to connect or to put ends the program (exit 1), as a benchmark
 * whose set-up failed has nothing to measure. */
#ifndef SLUICE_BENCH_CLIENT_H
#define SLUICE_BENCH_CLIENT_H

#include <stdint.h>

#include "sluice.h"

/* Seconds on the monotonic clock, for rates. */
double bench_mono_s(void);

/* A handle on `url`, or the program ends saying why. */
struct sluice_client *bench_connect(const char *prog, const char *url);

/* n tasks of 100 bytes into `tube`, 500 a batch; with groups > 0, task i
 * in group "g<i mod groups>". The program ends on a failed batch. */
void bench_put_n(const char *prog, struct sluice_client *c, const char *tube,
    uint64_t n, uint32_t groups);

#endif
