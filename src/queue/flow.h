/* flow - a tube's flow limits: a rate (a token bucket) and a concurrency
 * cap, held when a take is decided (docs/queue.md, "Flow limits").
 *
 * A tube without limits has flow NULL, and a take from it costs one test
 * of that pointer. A tube with limits has one struct flow:
 *   - the cap counts the tube's taken tasks (tube->ntaken), which the
 *     log and the snapshot restore, so it holds from the first take after
 *     a restart or a failover;
 *   - the bucket holds `credit` in token-milliseconds: each millisecond
 *     of the queue's clock adds `rate`, a token costs `per_ms`, and it
 *     holds at most burst * per_ms. Integers only, nothing rounded away,
 *     so over any span the tokens handed out are the rate's to the token.
 *     It starts full (a new limit, a loaded snapshot) and each TAKE
 *     record spends a token at its time, so a follower's and a replayed
 *     bucket are the leader's: a limit holds across a failover too.
 * A take the rate holds back puts its tube on the queue's flows heap,
 * due when the next token comes; queue_tick marks it then (on_ready), so
 * a waiting take wakes on a timer, never by polling. A take the cap
 * holds back is woken when a lease of the tube ends (qs_unplace).
 *
 * Groups (later) carry the same struct qrec_limits; their state will sit
 * beside this one, not in it. */
#ifndef SLUICE_QUEUE_FLOW_H
#define SLUICE_QUEUE_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/qrec.h"
#include "queue/limits.h"
#include "queue/queue.h"

struct queue;
struct tube;

struct flow {
	struct qrec_limits lim;
	struct tube *tube;  /* whose limits these are */
	uint64_t credit;    /* token-ms in the bucket at `stamp` */
	int64_t stamp;      /* queue ms the credit was counted at */
	int64_t due;        /* on the flows heap: when a token comes */
	uint32_t hpos;      /* in the queue's flows heap */
	uint64_t held_rate; /* takes that found the tube held back ... */
	uint64_t held_conc; /* ... by each limit (counters) */
};

/* Why a take may not take from a tube now. */
enum flow_hold {
	FLOW_OPEN = QUEUE_FLOW_OPEN,
	FLOW_RATE = QUEUE_FLOW_RATE,
	FLOW_CONCURRENCY = QUEUE_FLOW_CONCURRENCY
};

/* Whole tokens in the bucket at `now` (0 without a rate). */
uint64_t flow_tokens(const struct flow *f, int64_t now);

/* Whether tube tb (flow not NULL) may hand out a task at `now`; when the
 * rate holds it, its tube is put on the flows heap until the next token
 * (the flows heap has room: qs_flow_set reserves it). Counts the hold. */
enum flow_hold qs_flow_admit(struct queue *q, struct tube *tb, int64_t now);

/* A TAKE of tube tb at `time` was applied: a token is spent. */
void qs_flow_took(struct tube *tb, int64_t time);

/* A lease of tube tb ended: a waiting take may go (on_ready). */
void qs_flow_freed(struct queue *q, struct tube *tb);

/* The clock reached `now`: tubes whose token came are marked. */
void qs_flow_tick(struct queue *q, int64_t now);

/* The earliest token due on the flows heap, or INT64_MAX. */
int64_t qs_flow_next(const struct queue *q);

/* Sets tube tb's limits (valid; set 0: none) at `now`, a full bucket.
 * Returns 0 or SLUICE_ENOMEM (nothing changed). */
int qs_flow_set(
    struct queue *q, struct tube *tb, const struct qrec_limits *l, int64_t now);

/* Frees tube tb's limits, off the flows heap. */
void qs_flow_drop(struct queue *q, struct tube *tb);

/* Applies a TUBE_LIMIT (its tube must exist: SLUICE_ECORRUPT). */
int qs_apply_tube_limit(
    struct queue *q, int64_t time, const struct qrec_tube_limit *r);

/* Loads a snapshot's TUBE_LIMIT entry: the limits of the tube loaded
 * last, which has none yet. SLUICE_ECORRUPT, SLUICE_ENOMEM. */
int qs_flow_load(struct queue *q, struct rd *r);

/* Heap order of the flows heap: by due. */
bool flow_due_less(const void *a, const void *b);

#endif
