/* outcome - the outcomes of finished tasks and the marks of cancelled
 * taken tasks, inside the queue (design in queue_outcome.h).
 *
 * Outcomes: an idx by id and a list in the order they were noted, which
 * is the order they expire (each expires at the queue's clock when noted
 * + the window); the memory bound drops the oldest first. Cancel marks:
 * an idx by id of the taken tasks a CANCEL marked, each with the lease
 * it marked. Pure: no I/O. */
#ifndef SLUICE_QUEUE_OUTCOME_H
#define SLUICE_QUEUE_OUTCOME_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/idx.h"
#include "queue/queue.h"
#include "util/buf.h"

struct task;
struct rd;

struct outcome {
	uint64_t id;
	struct outcome *prev, *next; /* noted order, oldest first */
	int64_t time;                /* the task ended */
	int64_t expires;             /* kept until then */
	uint8_t kind;                /* enum queue_end */
	uint8_t tube_len;
	uint16_t text_len;
	char data[]; /* tube, then text */
};

struct cmark {
	uint64_t id;
	uint64_t lease;
};

struct qoutcomes {
	struct idx ids;   /* struct outcome by id */
	struct idx marks; /* struct cmark by id */
	struct outcome *head, *tail;
	uint64_t bytes;          /* OUTCOME_COST + data of each */
	const struct tube *tube; /* an ACK's task's, while it applies */
	uint8_t why; /* enum queue_end of the removals the record being
	                applied makes (0: none noted) */
	queue_final_fn *on_final;
	void *on_final_arg;
};

void qs_outcome_init(struct queue *q);
void qs_outcome_fini(struct queue *q);

/* Drops the outcomes whose window passed by `now`. */
void qs_outcome_tick(struct queue *q, int64_t now);

/* queue_apply's hooks: before a record (after the catch-up with its
 * time), and after it, which applied with result `rc` (outcomes are
 * noted only on success). */
void qs_outcome_before(struct queue *q, const struct qrec *rec);
void qs_outcome_after(
    struct queue *q, int64_t time, const struct qrec *rec, int rc);

/* A task leaves the queue (qs_task_remove): its outcome is noted when
 * the record being applied removes tasks (deleted, or cancelled when it
 * was marked); its mark goes. Returns how it ended (QUEUE_END_DELETED,
 * QUEUE_END_CANCELLED), or 0 when the record is not one that removes. */
int qs_outcome_removed(struct queue *q, const struct task *t, int64_t time);

/* A child that its parent's failure ends, whatever record is applied
 * (deps.c): one buried by its rule `fail` is final where it is (its
 * waiters are told); one removed by its rule `cancel` is removed here,
 * its outcome cancelled. */
void qs_outcome_final(struct queue *q, uint64_t id);
void qs_cancel_child(struct queue *q, struct task *t, int64_t time);

/* Applies a CANCEL. */
int qs_cancel_apply(struct queue *q, int64_t time, const struct qrec_cancel *r);

/* decide_run's last step: the record that ends a cancelled task's lease
 * becomes a DELETE; a touch of one is refused (SLUICE_ECANCELED). */
int qs_cancel_decided(struct queue *q, struct qrec *rec);

/* queue_check's: NULL, or what is broken. */
const char *qs_outcome_check(const struct queue *q);
/* A line per outcome and per mark, by id, for queue_dump. */
int qs_outcome_dump(const struct queue *q, struct buf *out);
/* CANCEL entries (u64 id, u64 lease) for the marks, then OUTCOME
 * entries (u64 id, u8 kind, i64 time, i64 expires, str16 tube, str16
 * text) oldest first; counts them into *nmarks and *noutcomes (END
 * holds both). Allocates nothing. */
int qs_outcome_snapshot_write(const struct queue *q, queue_emit_fn *emit,
    void *arg, uint64_t *nmarks, uint64_t *noutcomes);
int qs_cancel_load(struct queue *q, struct rd *r);
int qs_outcome_load(struct queue *q, struct rd *r);

#endif
