/* move - a tube's tasks copied to another cluster (docs/scaling.md,
 * "Moving a tube"): the source's side (tasks held for the move, then
 * dropped once copied) and the target's (copies made, each noted by its
 * source id so that a copy is never made twice).
 *
 * Source. MOVE_HOLD takes a ready, delayed or buried task out of reach:
 * it becomes taken under a detached lease whose deadline is
 * QUEUE_MOVE_HELD (2^53 ms: never), so no worker takes it, no ttr
 * expires it and no restart or promotion releases it (detached leases
 * outlive both); its state before the hold is kept in the lease's
 * session field (unused by detached leases), for the copy. MOVE_DROP
 * removes a held task under that lease, once its copy is made. A held
 * task counts as taken (stats, the tube's and its group's caps) while it
 * is held: one batch of the mover at a time.
 *
 * The first hold of a tube is after a MOVE_MARK: the tube is moving out
 * (struct tube's moving_out, snapshot entry QSNAP_MOVEOUT), and a take
 * finds none of its tasks here from then on, until MOVE_END: a task not
 * copied yet never runs here while a put of its key made a task at the
 * target (the copy is folded into that one), and workers take the
 * tube's tasks at the target, where the copies go.
 *
 * Target. MOVE_IN makes the copy with its attempts, last error, creation
 * and run times, priority, ttr, key, group and payload (ready, delayed
 * by run_at, or buried), or folds it into a task already there (its key
 * is live or reserved in the tube, or its source id was copied before);
 * either way the pair (source id, id here) is kept in the tube's table
 * until MOVE_END. A MOVE_IN for a source id the table has makes nothing
 * (queue_decide_move_in answers the copy's id): the mover may send a
 * batch again after a crash of any node or of itself. The table is part
 * of the state (records, snapshot entry QSNAP_MOVEIN), 16 bytes plus an
 * allocation per task moved, gone at the move's end.
 *
 * Pure, like the rest of the queue. */
#ifndef SLUICE_QUEUE_MOVE_H
#define SLUICE_QUEUE_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/idx.h"
#include "queue/qrec.h"
#include "util/buf.h"

struct queue;

/* The table of one tube moving in: its source and the pairs. */
struct move_in {
	struct idx pairs; /* struct move_pair by source id */
	uint16_t tube_len;
	uint16_t source_len;
	char tube[QREC_NAME_MAX + 1];
	char source[QREC_CLUSTER_MAX + 1];
};

struct moves {
	struct move_in **in;
	uint32_t n;
};

void moves_init(struct moves *m);
void moves_fini(struct moves *m);

/* queue_apply's dispatch for the MOVE_* records; any other type goes on
 * to batch_apply. */
int move_apply(
    struct queue *q, uint64_t lsn, int64_t time, const struct qrec *rec);

/* The table of `tube` moving in from `source` (made when there is none);
 * NULL with *rc SLUICE_ENOMEM, or SLUICE_ECORRUPT when it names another
 * source. */
struct move_in *move_table(struct queue *q, const char *tube, size_t len,
    const char *source, size_t source_len, int *rc);
/* The table of `tube`, or NULL. */
struct move_in *move_table_find(
    const struct queue *q, const char *tube, size_t len);
/* Notes the pair (source id, id here): SLUICE_ECORRUPT when the source id
 * has one, SLUICE_ENOMEM. */
int move_pair_add(struct move_in *mi, uint64_t src, uint64_t id);
/* The id here of source id `src` in the table; 0: none. */
uint64_t move_pair_id(const struct move_in *mi, uint64_t src);
/* apply of a MOVE_KEY (move_key.c). */
int move_key_apply(struct queue *q, const struct qrec_move *m);

int move_snapshot_write(const struct queue *q,
    int (*emit)(void *, uint16_t, const void *, size_t, const void *, size_t),
    void *arg);
int move_snapshot_load(struct queue *q, uint16_t type, struct rd *r);
const char *move_check(const struct queue *q);
void move_dump(const struct queue *q, struct buf *out);

#endif
