/* snapdue - when the log since the last snapshot asks for the next one:
 * the snapshot cadence.
 *
 * A snapshot is rebuilt whole by the worker (bgsnap.c): its cost grows
 * with the state it holds, not with the log it saves. Taken every N
 * records whatever the state's size, a queue that grows under a long load
 * pays a rebuild of everything it holds each N records: quadratic in the
 * queue's size over the load (at a million tasks a second, a rebuild of
 * the whole queue every second). So the thresholds grow with the state,
 * as Redis's auto-aof-rewrite-percentage does: a snapshot is due once the
 * log since the last one holds at least
 *
 *   max(--snapshot-records, --snapshot-growth % of the last snapshot's
 *       entries) records, or
 *   max(--snapshot-bytes, --snapshot-growth % of the last snapshot's
 *       bytes) bytes of log.
 *
 * Under a growing load snapshots then come at sizes that grow by a factor
 * (1 + growth/100): the rebuilds of a load of N tasks cost a few N in all,
 * not N^2 / (2 x --snapshot-records). What a restart replays after the
 * snapshot it loads stays bounded by the same measure: at most that many
 * records, growth % of the snapshot's own entries (or the floor), so the
 * replay costs about growth % of the snapshot's load. With growth 0 the
 * floors alone decide, as they did before (every --snapshot-records
 * records or --snapshot-bytes bytes).
 * Pure: no I/O, no state. */
#ifndef SLUICE_SERVER_CORE_SNAPDUE_H
#define SLUICE_SERVER_CORE_SNAPDUE_H

#include <stdbool.h>
#include <stdint.h>

enum {
	SNAPDUE_GROWTH_DEFAULT = 100, /* --snapshot-growth, per cent */
	SNAPDUE_GROWTH_MAX = 10000,
};

/* The configured cadence. */
struct snapdue_cfg {
	uint64_t records; /* --snapshot-records: the floor, >= 1 */
	uint64_t bytes;   /* --snapshot-bytes: the floor, >= 1 */
	unsigned growth;  /* --snapshot-growth: per cent; 0: floors only */
};

/* The last snapshot (published, or recovered from at the start). */
struct snapdue_base {
	uint64_t entries; /* its entries; 0: none */
	uint64_t bytes;   /* its file's size; 0: none */
};

/* max(floor, growth % of base), saturating at UINT64_MAX. */
uint64_t snapdue_limit(uint64_t floor, uint64_t base, unsigned growth);

/* Whether `records` records and `bytes` bytes of log since the last
 * snapshot ask for a new one. */
bool snapdue(const struct snapdue_cfg *cfg, const struct snapdue_base *base,
    uint64_t records, uint64_t bytes);

#endif
