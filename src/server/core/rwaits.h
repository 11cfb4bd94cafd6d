/* rwaits - the waits for a task's result (wait, HTTP's long poll of
 * /v1/tasks/{id}/result), parked on the core as a waiting take is: no
 * polling. The queue says when a task reaches its outcome (queue_on_final,
 * as a record is applied: on a leader and on a follower alike); its
 * waiters move to a list the core's turn answers (ops/result.c), after
 * the record that ended the task.
 *
 * Three indexes over one set of waiters: by task (an idx of each task's
 * list, in arrival order), by deadline (a heap), and a list of them all
 * (the HTTP face's connections that left are found by a walk when the
 * face says one did, and a session's waiters when it goes). Each
 * operation is O(1) or O(log n) but those walks. No I/O. */
#ifndef SLUICE_SERVER_CORE_RWAITS_H
#define SLUICE_SERVER_CORE_RWAITS_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/heap.h"
#include "queue/idx.h"

struct face_ctx;
struct rwait_task;

struct rwaiter {
	struct rwaiter *next, *prev;   /* its task's waiters */
	struct rwaiter *anext, *aprev; /* every waiter */
	struct rwait_task *task;
	uint32_t hpos;    /* in the deadline heap */
	uint64_t seq;     /* arrival order */
	int64_t deadline; /* monotonic ms */
	struct face_ctx *ctx;
	uint32_t session;
};

/* The waiters of one task; once it ended (woken), on the woken list. */
struct rwait_task {
	uint64_t id;
	struct rwaiter *head, *tail;
	struct rwait_task *wnext; /* the woken list */
	bool woken;
};

/* A session's parked waits, counted for the cap per connection. */
struct rwait_sess {
	uint64_t session;
	uint32_t n;
};

struct rwaits {
	struct idx tasks;    /* struct rwait_task by id, not yet woken */
	struct idx sessions; /* struct rwait_sess by session */
	struct heap due;     /* waiters by (deadline, seq) */
	struct rwaiter *all;
	struct rwait_task *woken, *woken_tail;
	uint64_t seq;
	uint64_t n; /* waiters */
};

void rwaits_init(struct rwaits *rw);
/* Frees the indexes; the waiters must be gone. */
void rwaits_fini(struct rwaits *rw);

/* Parks a wait for task `id` until `deadline` (monotonic ms). Returns 0,
 * or SLUICE_ENOMEM (nothing parked). */
int rwaits_add(struct rwaits *rw, uint64_t id, struct face_ctx *ctx,
    uint32_t session, int64_t deadline);

/* Task `id` ended: its waiters go to the woken list. O(1). */
void rwaits_wake(struct rwaits *rw, uint64_t id);

/* Unlinks and frees `w` (its context is the caller's to answer or drop
 * first). */
void rwaits_remove(struct rwaits *rw, struct rwaiter *w);

/* The first waiter of a woken task, or NULL when none is left (the
 * woken list is emptied as it goes). */
struct rwaiter *rwaits_next_woken(struct rwaits *rw);

/* The waiter whose deadline comes first, or NULL. */
struct rwaiter *rwaits_first_due(const struct rwaits *rw);

/* The waits `session` has parked. */
uint32_t rwaits_of_session(const struct rwaits *rw, uint32_t session);

#endif
