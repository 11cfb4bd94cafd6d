/* cohort - a group commit that waits for the clients it answered.
 *
 * A commit answers the clients whose writes it held, and under many
 * clients they come back together, each with its next write, within a
 * fraction of a commit's time. Submitted at the first turn after the
 * completion, the next batch takes the first few of them only, and the
 * rest wait behind it for a whole commit: two cohorts then take turns at
 * the disk for good, each of half the clients (16.5 records a commit at
 * 32 clients, docs/benchmarks.md "A commit that waits for its cohort").
 *
 * So while nothing is in flight and fewer writes wait than the last
 * commit answered, the loop holds the commit back (serving everything
 * else meanwhile) until they are as many, or until as long as the last
 * commit took has passed: a write that missed the batch would have
 * waited that long anyway. A hold that runs out means the clients do
 * not come back together (a worker busy with its task, a producer that
 * pauses); when not one more write came meanwhile, the next 1, 2, 4... up
 * to COHORT_SKIP_MAX commits go without a hold, and a hold that gathers
 * any sets that back to 1. One client never holds: it is all the cohort
 * there is.
 *
 * Pure: the caller gives the counts and the clock. */
#ifndef SLUICE_SERVER_CORE_COHORT_H
#define SLUICE_SERVER_CORE_COHORT_H

#include <stdbool.h>
#include <stdint.h>

enum {
	COHORT_SKIP_MAX = 64,
	COHORT_HOLD_MAX_NS = 1000000, /* never longer than 1 ms */
};

struct cohort {
	uint32_t answered; /* writes the last commit answered */
	int64_t since_ns;  /* when the current hold began; 0: none */
	uint32_t at_start; /* the writes waiting when it began */
	uint32_t skip;     /* commits left to submit without a hold */
	uint32_t backoff;  /* the skip after the next hold that runs out */
	uint64_t holds;    /* holds begun */
	uint64_t filled;   /* holds that ended with the cohort back */
	uint64_t ran_out;  /* holds that ended at their limit */
};

/* A completion's replies went out: `n` of them answered writes. */
void cohort_answered(struct cohort *h, uint32_t n);

/* Whether the commit waits this turn: `waiting` writes wait for it,
 * the clock reads `now_ns` (monotonic) and the last commit took
 * `commit_ns`. Call only when the log has nothing in flight. */
bool cohort_hold(
    struct cohort *h, uint32_t waiting, int64_t now_ns, int64_t commit_ns);

/* The commit was submitted. */
void cohort_submitted(struct cohort *h);

/* No hold this turn (the commit went, or was not the loop's to hold):
 * whatever hold was under way is over, uncounted. */
void cohort_cancel(struct cohort *h);

/* When the hold under way ends at the latest (monotonic ns), or 0. */
int64_t cohort_deadline_ns(const struct cohort *h, int64_t commit_ns);

#endif
