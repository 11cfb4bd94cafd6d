/* decide - what the files that decide requests (decide.c: tasks;
 * decide_tube.c: whole tubes; decide_dedup.c: a put's deduplication
 * modes) share: the frame every decision runs in, and the checks they
 * make. Internal to src/queue: the decisions themselves are declared in
 * queue.h, but for decide_dedup.c's, which queue_decide_put hands the
 * puts that ask for a mode. */
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

/* The deduplication modes of a keyed put (queue_put_req's debounce_ms,
 * throttle_ms; docs/queue.md): debounce_ms: the put replaces the key's
 * live task (as replace does) and runs it debounce_ms from now.
 * throttle_ms: ignored (res->throttled) while the key's last accepted
 * throttled put is less than its window old, whatever became of its task;
 * else accepted, opening a new window (PUT_T). A key is needed, one mode at
 * a time, neither with replace, if_newer, delay or run_at.
 *
 * queue_decide_put for a put with debounce_ms or throttle_ms (which
 * queue_decide_put hands it). Errors as queue_decide_put's, and
 * SLUICE_EINVAL for a mode with no key, both modes, a mode with replace,
 * if_newer, a delay or a run_at, and a window out of range. Debounce: a
 * REPLACE of the key's live task (pending when it is taken) with run_at =
 * now + debounce_ms, or, with no live task, a PUT at that time that
 * ignores the key's dedup window. Throttle: within the key's open window,
 * out->type = QREC_NONE, res names the window's task, created false and
 * throttled true; else, with a live task of the key, nothing either
 * (created false, the task named, no window opened); else a PUT_T that
 * ignores the dedup window and opens one until now + throttle_ms. */
/* queue_decide_put for a move's copy (move.c): a plain put whose key's
 * window (a move's pending keys) is not asked. */
int queue_decide_put_copy(struct queue *q, int64_t now,
    const struct queue_put_req *req, struct qrec *result,
    struct queue_put_res *res);

int queue_decide_put_mode(struct queue *q, int64_t now,
    const struct queue_put_req *req, struct qrec *out,
    struct queue_put_res *res);

#endif
