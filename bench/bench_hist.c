/* bench_hist - see bench_hist.h.
 *
 * Bucket layout. A value v < 128 is its own bucket. Above, let m be the
 * index of v's highest set bit (m >= 7) and s = m - 6: the top seven bits
 * t = v >> s lie in [64, 127] and the bucket is s * 64 + t. So bucket
 * s * 64 + t holds [t << s, ((t + 1) << s) - 1]: 64 buckets per power of
 * two, each 1/64 of the values' magnitude wide. Indexes run without gaps
 * (s = 1 starts at 128) up to 57 * 64 + 127 for v near 2^64. */
#include <assert.h>
#include <string.h>

#include "bench_hist.h"

void
bench_hist_init(struct bench_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned
bench_hist_index(uint64_t v)
{
	unsigned m, s;

	if (v < 2 * BENCH_HIST_SUB)
		return (unsigned)v;
	m = 63u - (unsigned)__builtin_clzll(v);
	s = m - BENCH_HIST_SUB_BITS;
	return s * BENCH_HIST_SUB + (unsigned)(v >> s);
}

uint64_t
bench_hist_low(unsigned idx)
{
	unsigned s;

	assert(idx < BENCH_HIST_BUCKETS);
	if (idx < 2 * BENCH_HIST_SUB)
		return idx;
	s = idx / BENCH_HIST_SUB - 1;
	return (uint64_t)(idx % BENCH_HIST_SUB + BENCH_HIST_SUB) << s;
}

uint64_t
bench_hist_high(unsigned idx)
{
	unsigned s;

	assert(idx < BENCH_HIST_BUCKETS);
	if (idx < 2 * BENCH_HIST_SUB)
		return idx;
	s = idx / BENCH_HIST_SUB - 1;
	/* ((t + 1) << s) - 1 without overflow for the very last bucket. */
	return bench_hist_low(idx) + (((uint64_t)1 << s) - 1);
}

void
bench_hist_record(struct bench_hist *h, uint64_t v)
{
	h->bucket[bench_hist_index(v)]++;
	h->count++;
	h->sum += (double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void
bench_hist_merge(struct bench_hist *into, const struct bench_hist *from)
{
	if (from->count == 0)
		return;
	for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++)
		into->bucket[i] += from->bucket[i];
	into->count += from->count;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t
bench_hist_percentile(const struct bench_hist *h, double pct)
{
	uint64_t rank, seen = 0;
	double r;

	if (h->count == 0)
		return 0;
	if (pct >= 100.0)
		return h->max;
	r = pct / 100.0 * (double)h->count;
	rank = (uint64_t)r;
	if ((double)rank < r)
		rank++; /* ceil */
	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t hi = bench_hist_high(i);
			return hi < h->max ? hi : h->max;
		}
	}
	return h->max; /* not reached: the buckets add up to count */
}

double
bench_hist_mean(const struct bench_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}
