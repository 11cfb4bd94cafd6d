/* qrecover - recover()'s callbacks for a bare queue: snapshot entries to
 * queue_snapshot_load, queue records through queue_apply, the log's own
 * records skipped. The argument given to recover() is the queue.
 * (sluiced has its own: it also keeps the epoch history and logs.) */
#ifndef SLUICE_QUEUE_QRECOVER_H
#define SLUICE_QUEUE_QRECOVER_H

#include "log/recover.h"

extern const struct recover_ops queue_recover_ops;

struct queue;

/* The replay announced by queue_expect_tasks is over: the task memory
 * made ahead for it beyond one slab a size is given back. */
void queue_expect_done(struct queue *q);

#endif
