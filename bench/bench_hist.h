/* bench_hist - a latency histogram of bounded size: log-linear buckets over
 * nanoseconds, exact below 128 ns, then 64 buckets per power of two, so any
 * recorded value is reported within 1/64 (1.6 %) of itself, whatever the
 * number of samples. One histogram is about 30 KiB; each connection of a
 * benchmark records into its own and they are merged at the end, so the
 * hot path takes no lock. */
#ifndef SLUICE_BENCH_HIST_H
#define SLUICE_BENCH_HIST_H

#include <stdint.h>

enum {
	BENCH_HIST_SUB_BITS = 6, /* 64 buckets per power of two */
	BENCH_HIST_SUB = 1 << BENCH_HIST_SUB_BITS,
	/* Indexes 0..127 are exact; each power of two from 2^7 to 2^63 adds
	 * 64 more: the last bucket is 57 * 64 + 127. */
	BENCH_HIST_BUCKETS = (64 - BENCH_HIST_SUB_BITS + 1) * BENCH_HIST_SUB,
};

struct bench_hist {
	uint64_t count;
	uint64_t min, max; /* exact; min is UINT64_MAX while empty */
	double sum;        /* of every value, for the mean */
	uint64_t bucket[BENCH_HIST_BUCKETS];
};

void bench_hist_init(struct bench_hist *h);
void bench_hist_record(struct bench_hist *h, uint64_t v);
/* Adds every sample of `from` to `into`. */
void bench_hist_merge(struct bench_hist *into, const struct bench_hist *from);

/* The value below or at which `pct` percent (0 < pct <= 100) of the samples
 * lie: the highest value of the bucket holding the sample of rank
 * ceil(pct / 100 * count), clamped to the exact max. 0 when empty. */
uint64_t bench_hist_percentile(const struct bench_hist *h, double pct);

/* The mean, 0 when empty. */
double bench_hist_mean(const struct bench_hist *h);

/* The bucket of a value, and the lowest and highest values of a bucket
 * (exposed for the tests). */
unsigned bench_hist_index(uint64_t v);
uint64_t bench_hist_low(unsigned idx);
uint64_t bench_hist_high(unsigned idx);

#endif
