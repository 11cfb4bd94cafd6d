/* rates - the rolling per-second history of events (queue.h, "Rates"):
 * a ring of counters, one slot per `step` seconds, `nslots` slots, each
 * slot a counter per kind of event and a depth per state (enum
 * queue_rate). The slot of the unix second s is s / step; slot number n
 * lives at n % nslots.
 *
 * Counting is an increment into the slot of the event's time; when that
 * time is in a later slot than the newest one, the ring first advances,
 * clearing the counts of the slots it skips (at most nslots of them) and
 * giving them the newest depth. An event older than the window is
 * dropped. A depth is written into the newest slot (or the later one of
 * its time) and kept as the newest. Reading as of a later time sees the
 * skipped slots' counts as zero and their depth as the newest, without
 * changing the ring.
 *
 * A tube's ring starts small and grows only when a slot it would push out
 * still holds something the window shows (rates_fit); one whose newest
 * slot left the window reads as none and is freed (qs_rates_sweep), so
 * tubes that are idle, or were busy once, cost little or nothing.
 *
 * Observation, not state: nothing here is logged, snapshotted or dumped,
 * so no two nodes need agree on it. */
#ifndef SLUICE_QUEUE_RATES_H
#define SLUICE_QUEUE_RATES_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/queue.h"

struct rates {
	int64_t head;    /* the newest slot's number; -1 before any event */
	uint32_t nslots; /* slots held: nslots * step seconds */
	uint32_t window; /* the slots it may grow to (rates_fit) */
	uint32_t step;   /* seconds per slot */
	uint32_t depth[QUEUE_RATE_DEPTHS]; /* the newest */
	/* The newest slot, found without a division while the clock stays
	 * in it (every event of a turn): the ms [head_from, head_to) it
	 * covers, empty until slot_get sets it. */
	int64_t head_from, head_to;
	uint32_t *headv;
	uint32_t v[][QUEUE_RATES];
};

/* An empty ring of `nslots` slots of `step` seconds (both >= 1) whose
 * depth is `depth` (NULL: zero) until one is written, or NULL when out of
 * memory. Free with free(). */
struct rates *rates_new(uint32_t nslots, uint32_t step, const uint32_t *depth);

/* A ring that holds RATES_FIRST_SLOTS slots (fewer when `window` is
 * smaller) and grows, by rates_fit, up to `window` as what it holds needs:
 * a tube's, whose events mostly come in bursts. */
enum { RATES_FIRST_SLOTS = 12 };
struct rates *rates_new_small(
    uint32_t window, uint32_t step, const uint32_t *depth);

/* Before an event or a change of depth at unix ms `ms`: grows *rp (by
 * doubling, up to its window) when writing at `ms` would push out a slot
 * of the window that holds anything (an event, or a depth other than the
 * newest). Returns 0, or SLUICE_ENOMEM (the ring is kept as it is: the
 * oldest slot is then lost, an observation only). */
int rates_fit(struct rates **rp, int64_t ms);

/* Whether the ring holds nothing of the window ending at `now` (its newest
 * slot is older): it reads as no ring at all with its newest depth. */
bool rates_stale(const struct rates *r, int64_t now);

/* One event of `kind` at unix ms `ms` (>= 0). A counter saturates at
 * UINT32_MAX. */
void rates_count(struct rates *r, int64_t ms, unsigned kind);

/* The depth by state (QUEUE_RATE_DEPTHS values, from QUEUE_RATE_READY on)
 * after a change at unix ms `ms`. */
void rates_depth(struct rates *r, int64_t ms, const uint32_t *depth);

/* The slots that cover the last `secs` seconds up to unix ms `now` (the
 * slot of `now` last): ceil(secs / step) of them, at most nslots, at
 * least 1. Writes their counts kind-major into out (out[k * n + i], n the
 * returned count, so out holds QUEUE_RATES * nslots values) and the unix
 * ms of the first slot's start into *start. Slots newer than the ring's
 * newest, or older than its window, count 0; their depth is the newest,
 * or the oldest the window holds. */
uint32_t rates_read(const struct rates *r, int64_t now, uint32_t secs,
    int64_t *start, uint32_t *out);

#endif
