/* queue_outcome - part of queue.h: the outcomes of finished tasks, kept
 * for a window after the task is gone so that a waiter arriving late
 * still learns how it ended, and cancelling (outcome.c).
 *
 * An outcome is noted when a task is done (ACK, ACK_R: its result), dead
 * lettered (FAIL, BURY, SETBACK that move it: its last error), deleted
 * (DELETE, FLUSH, DELETE_WHERE, DELETE_AGED, TUBE_DELETE) or cancelled
 * (CANCEL, or the end of a cancelled task's lease). A buried task needs
 * none: it stays in its tube, and queue_result reads it there. Outcomes
 * are state like any other (derived from records, so replay and
 * followers rebuild them; a snapshot holds them), kept until the queue's
 * clock passes their time + the dedup window (cfg.dedup_ms; 0: none are
 * kept), and at most cfg.max_outcome_bytes of memory (the oldest go
 * first): an outcome costs OUTCOME_COST bytes + its tube's name + its
 * text (a result of at most QREC_RESULT_MAX, an error of at most
 * QREC_ERROR_MAX). */
#ifndef SLUICE_QUEUE_QUEUE_OUTCOME_H
#define SLUICE_QUEUE_QUEUE_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct queue;
struct qrec;

/* How a finished task ended (queue_result's state when final): done and
 * buried are the task states of the same number. */
enum queue_end {
	QUEUE_END_BURIED = 4,     /* failed for good, parked in its tube */
	QUEUE_END_DONE = 5,       /* acked: its result */
	QUEUE_END_DELETED = 16,   /* deleted by an operator */
	QUEUE_END_CANCELLED = 17, /* cancelled */
	QUEUE_END_DEAD = 18,      /* moved to its tube's dead-letter tube */
};

enum {
	/* The memory an outcome takes besides its tube name and text: its
	 * struct (48 bytes) and malloc's header, and its share of the index
	 * (8 to 13 bytes); 76 measured with a 1-byte tube (test_queue_mem). */
	OUTCOME_COST = 80,
	QUEUE_DEFAULT_OUTCOME_BYTES = 64 * 1024 * 1024,
};

struct queue_result {
	uint64_t id;
	bool final;       /* done, or failed for good */
	int state;        /* final: enum queue_end; else the task's state */
	int64_t time;     /* final: when it ended (unix ms); else 0 */
	const char *tube; /* the task's tube (borrowed, as a view's) */
	size_t tube_len;
	const char *text; /* done: the result; else the last error; NULL */
	size_t text_len;
	bool cancelled; /* a taken task that is cancelled: it goes when its
	                   lease ends */
};

/* How task `id` stands: its outcome while kept, else the live task
 * (final when buried, or done). SLUICE_ENOTFOUND when the queue knows
 * neither (never was, or its outcome's window passed). Borrows as
 * queue_peek does. */
int queue_result(
    struct queue *q, int64_t now, uint64_t id, struct queue_result *out);

/* Called when task `id` reaches an outcome (or is buried) as a record is
 * applied, for the server's waits on results. Must not call back into
 * the queue. NULL: none. */
typedef void queue_final_fn(void *arg, uint64_t id);
void queue_on_final(struct queue *q, queue_final_fn *fn, void *arg);

/* Whether task `id` is taken and cancelled (its holder's touch, release,
 * fail and bury are answered SLUICE_ECANCELED). */
bool queue_cancelled(const struct queue *q, uint64_t id);

/* Cancels a task: a CANCEL record. One that is not taken (ready,
 * delayed, buried, done, or any other waiting state) is removed at once
 * (lease 0); a taken one is marked, keeps its lease, and is removed when
 * the lease ends in any way (decide turns the record that ends it into a
 * DELETE, and refuses a touch with SLUICE_ECANCELED). Its key is free at
 * once. Errors: SLUICE_ENOTFOUND (no such task: a finished one whose
 * outcome is kept is no longer cancellable either), SLUICE_ECANCELED
 * (already cancelled: nothing to log). */
int queue_decide_cancel(
    struct queue *q, int64_t now, uint64_t id, struct qrec *out);

/* Outcomes kept, and the memory they take (OUTCOME_COST each + bytes). */
uint64_t queue_outcome_count(const struct queue *q);
uint64_t queue_outcome_bytes(const struct queue *q);

/* The name of an outcome state ("deleted", "cancelled", "dead_lettered")
 * or of a task state (queue_state_name) otherwise. */
const char *queue_end_name(int state);

#endif
