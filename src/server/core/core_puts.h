/* core_puts - a batch put's plain PUTs written as one PUTS record
 * (qrec.h): each applied as it is decided, the record appended once for
 * the run (core_puts.c says how nothing applied can miss the log). */
#ifndef SLUICE_SERVER_CORE_CORE_PUTS_H
#define SLUICE_SERVER_CORE_CORE_PUTS_H

#include <stddef.h>
#include <stdint.h>

struct core;
struct qrec;

/* A run: the PUTs of one tube taken so far, not yet in the log, its body
 * in c->puts (the count written last). Zeroed, then core_puts_fini when
 * done. The tube is borrowed from the request. */
struct core_puts {
	const char *tube;
	size_t tube_len;
	uint64_t lsn;      /* the record's, once it has an item */
	uint64_t first_id; /* the first item's id and run_at */
	uint64_t prev_id;
	uint64_t floor; /* the log's reservation floor after the last item */
	int64_t run_at;
	uint32_t n;
};

/* Takes `rec`, a put decide made and the quotas admitted, into the run:
 * applied now, logged by the next core_puts_flush. Returns 0 when taken;
 * 1 when not (a put the record cannot carry, no room promised for it):
 * the caller flushes, then commits it alone (core_commit), which refuses
 * it or takes it as every put. */
int core_puts_add(
    struct core *c, struct core_puts *run, const struct qrec *rec);

/* Appends the run's record (a PUT for a run of one) and empties the run.
 * Cannot fail: core_puts_add made room for it (a failure here means a
 * state the log does not hold, and stops the server, as core_commit's
 * apply failure does). */
void core_puts_flush(struct core *c, struct core_puts *run);

/* Flushes: the request's run is over. */
void core_puts_fini(struct core *c, struct core_puts *run);

#endif
