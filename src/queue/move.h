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

/* A pair of the table: a source id and the id here. key_len > 0: a
 * placeholder (move_place.c): the id was given to the source's live task
 * of that key (of the table's tube), held here by a task-less key entry
 * (expires QUEUE_MOVE_PLACED) until its copy or its reservation comes
 * (then key_len is 0), or the move's end. */
struct move_pair {
	uint64_t src;
	uint64_t id;
	uint16_t key_len;
	char key[];
};

/* A mark of a tube's move by name (move_place.c): at a target, the keys
 * of `tube` moving in from `source` are pending (keep 0); at a source,
 * its drain of `tube` waits for the mover (keep 1, no source). */
struct move_mark {
	uint8_t keep;
	uint16_t tube_len;
	uint16_t source_len;
	char tube[QREC_NAME_MAX + 1];
	char source[QREC_CLUSTER_MAX + 1];
};

/* The snapshot's entries of the marks and the placeholders (after the
 * MOVEIN ones): str16 tube, str16 source; str16 tube, str16 source, u64
 * source id, u64 id, str16 key; str16 tube. Numbered as their records. */
enum {
	QSNAP_MOVEPEND = 66,
	QSNAP_MOVEPLACE = 67,
	QSNAP_MOVEKEEP = 68,
};

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
	struct move_mark *marks;
	uint32_t nmarks;
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
/* move_pair_add with the key of a placeholder (move_place.c). */
int move_pair_add_key(struct move_in *mi, uint64_t src, uint64_t id,
    const char *key, size_t key_len);
/* The pair of `src` in the table, or NULL. */
struct move_pair *move_pair_find(const struct move_in *mi, uint64_t src);
/* The table of `tube` in *mi (NULL: none yet) for a step of its move in
 * from `source`: SLUICE_ESTATE when it moves in from another source. */
int move_table_from(const struct queue *q, const char *tube, size_t len,
    const char *source, size_t source_len, const struct move_in **mi);
/* `out` made a record of `type` (MOVE_PLACE, MOVE_KEY) for source task
 * `src_id` of `tube` and its key; the rest is the caller's. */
void move_rec_key(struct qrec *out, int type, uint64_t src_id,
    const char *source, size_t source_len, const char *tube, size_t tube_len,
    const char *key, size_t key_len);
/* The `max` lowest ids seen, kept sorted in out[0..*kept) (elements of
 * `size` bytes, each opening with its uint64_t id), for queue_move_keys
 * and queue_move_live: the index `id` goes at, room made there (the
 * highest dropped when full), or `max` when it is not among them. */
size_t move_lowest(
    void *out, size_t size, size_t *kept, size_t max, uint64_t id);

/* move_place.c: apply of MOVE_PEND, MOVE_PLACE, MOVE_KEEP; the key
 * entry of placeholder `p` of `mi` (NULL: none, damaged); a placeholder
 * made a copy's or a reservation's (its entry goes: *ke set NULL; or
 * stays for the reservation); what a MOVE_END removes besides the table
 * (its placeholders, the tube's marks); whether the tube has a mark
 * (any: keep or pending); the snapshot entries, their check and dump. */
int move_place_apply(struct queue *q, const struct qrec *rec);
struct keyent *move_placeholder(
    const struct queue *q, const struct move_in *mi, const struct move_pair *p);
void move_place_end(
    struct queue *q, const char *tube, size_t len, struct move_in *mi);
bool move_marked(const struct queue *q, const char *tube, size_t len);
bool move_keep_governed(const struct queue *q,
    bool (*governs)(void *arg, const char *name, size_t len), void *arg);
int move_place_snapshot_write(const struct queue *q,
    int (*emit)(void *, uint16_t, const void *, size_t, const void *, size_t),
    void *arg);
int move_place_snapshot_load(struct queue *q, uint16_t type, struct rd *r);
const char *move_place_check(const struct queue *q);
void move_place_dump(const struct queue *q, struct buf *out);
void move_marks_fini(struct moves *m);

int move_snapshot_write(const struct queue *q,
    int (*emit)(void *, uint16_t, const void *, size_t, const void *, size_t),
    void *arg);
int move_snapshot_load(struct queue *q, uint16_t type, struct rd *r);
const char *move_check(const struct queue *q);
void move_dump(const struct queue *q, struct buf *out);

#endif
