/* hourly - a tube's completion statistics (queue.h, "Hourly statistics"):
 * a ring of QUEUE_HOURS hours, the hour h in slot h % QUEUE_HOURS, each
 * allocated when its hour first sees an event and freed when the queue's
 * clock leaves it behind; and the tube's totals since its first event, for
 * /metrics. A tube that never had an event has none (tube->hourly NULL).
 *
 * Memory: 640 bytes per tube that ever had an event (the ring's pointers and
 * the totals), plus 472 bytes per hour it had one in, in the last 48.
 *
 * Reserve, then commit, as for the rest of the state (qstate.h):
 * hourly_reserve() allocates what an event at `time` needs and may fail;
 * hourly_take() and hourly_end() never fail. A reservation whose apply
 * then fails leaves an empty hour, which nothing shows. */
#ifndef SLUICE_QUEUE_HOURLY_H
#define SLUICE_QUEUE_HOURLY_H

#include <stdint.h>

#include "queue/qrec.h"
#include "queue/queue.h"
#include "util/buf.h"

struct queue;
struct tube;

/* One distribution of one hour. An hour counts at most UINT32_MAX events
 * of a kind; past that it ignores them (count, total and buckets agree). */
struct hourly_dist {
	uint32_t count;
	uint32_t bucket[QUEUE_HIST_BUCKETS];
	uint64_t total_ms;
	uint64_t max_ms;
};

struct hourly_hour {
	int64_t hour; /* unix ms / QUEUE_HOUR_MS */
	uint32_t fails;
	uint32_t buries;
	uint32_t ttr_expired;
	struct hourly_dist work;
	struct hourly_dist wait;
};

struct hourly {
	struct hourly_hour *slot[QUEUE_HOURS]; /* NULL: never used or freed */
	struct queue_total work;
	struct queue_total wait;
};

/* What a record that ends a lease (or buries a waiting task) counts as, a
 * mask of these, for the tube the task was in. The one place that
 * classifies: a ttr expiry is a SETBACK (a RELEASE or a BURY in logs
 * older than SETBACK) with reason TTR, and counts its bury too when the
 * task is buried or moved to the dead-letter tube; a move to the dead
 * letter counts as the bury it stands for (and a FAIL's as a fail); an
 * UNTAKE counts nothing (the take's wait stays counted). */
enum {
	HOURLY_ACK = 0x1,
	HOURLY_FAIL = 0x2,
	HOURLY_BURY = 0x4,
	HOURLY_TTR = 0x8
};
unsigned hourly_kinds(uint16_t type, const struct qrec_end *e);

/* Room for an event of tube tb at `time` (the record's, <= the clock).
 * Returns 0 or SLUICE_ENOMEM. */
int hourly_reserve(struct queue *q, struct tube *tb, int64_t time);

/* A take at `time` of a task ready since `ready_at`; room reserved. */
void hourly_take(
    struct queue *q, struct tube *tb, int64_t time, int64_t ready_at);

/* A record of `type` ending a lease taken at `taken_at` (a bury of a
 * waiting task: any) at `time`; room reserved. */
void hourly_end(struct queue *q, struct tube *tb, int64_t time, uint16_t type,
    const struct qrec_end *e, int64_t taken_at);

/* Frees the hours the clock has left behind. Never fails. */
void hourly_prune(struct queue *q);

/* Frees a tube's statistics. Accepts NULL. */
void hourly_free(struct hourly *h);

/* Sums the hours of tube tb (NULL: every tube) in the window of the clock
 * into out[], newest first; *n says how many hours had events. Returns 0 or
 * SLUICE_ENOMEM. */
int hourly_collect(const struct queue *q, const struct tube *tb,
    struct queue_hour out[QUEUE_HOURS], size_t *n);

/* Appends the dump lines of a tube's statistics (none when it has none). */
void hourly_dump(const struct queue *q, const struct tube *tb, struct buf *out);

/* Checks a tube's statistics; SLUICE_ECORRUPT with *why set. */
int hourly_check(
    const struct queue *q, const struct tube *tb, const char **why);

/* Emits the HOURLY and HOUR entries of every tube with statistics (layout in
 * hourly.c); *ntubes says how many HOURLY entries. Allocates nothing.
 * Returns 0 or what `emit` returned. */
int hourly_snapshot_write(
    const struct queue *q, queue_emit_fn *emit, void *arg, uint32_t *ntubes);

/* Loads a HOURLY entry (its tube becomes the one the HOUR entries after it
 * fill: q->load) or a HOUR entry. SLUICE_ECORRUPT, SLUICE_ENOMEM. */
int hourly_load_tube(struct queue *q, struct rd *r);
int hourly_load_hour(struct queue *q, struct rd *r);

#endif
