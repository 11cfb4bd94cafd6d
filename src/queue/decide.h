/* decide - what the files that decide requests (decide.c: tasks;
 * decide_tube.c: whole tubes) share: the frame every decision runs in,
 * and the checks both make. Internal to src/queue: the decisions
 * themselves are declared in queue.h. */
#ifndef SLUICE_QUEUE_DECIDE_H
#define SLUICE_QUEUE_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/qstate.h"

/* The part of a decision particular to its request: checks `arg` (the
 * request) against the state and fills `out`, or returns an error. */
typedef int decide_fn(
    struct queue *q, int64_t now, const void *arg, struct qrec *out);

/* Every decision: catches up with `now`, which must be a valid time, lets
 * `fn` decide, and hands out the record only on success. */
int decide_run(struct queue *q, int64_t now, decide_fn *fn, const void *arg,
    struct qrec *result);

/* A time a record can hold: 0..QREC_TIME_MAX. */
bool decide_time_ok(int64_t t);

/* Whether `name` may be a tube: it is one, or the queue has room for one
 * more (cfg.max_tubes). */
bool decide_new_tube_allowed(
    const struct queue *q, const char *name, size_t len);

#endif
