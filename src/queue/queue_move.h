/* queue_move - part of queue.h: a tube's move between clusters
 * (move.h says how the records work). */
#ifndef SLUICE_QUEUE_QUEUE_MOVE_H
#define SLUICE_QUEUE_QUEUE_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct queue;
struct qrec;

/* A held task's deadline: never. */
#define QUEUE_MOVE_HELD ((int64_t)1 << 53)
/* A placeholder's key entry (move_place.c) expires then: never, and no
 * reservation's time (those are at most QREC_TIME_MAX). */
#define QUEUE_MOVE_PLACED INT64_MAX

/* The next task of `tube` to hold for a move under `lease` (>= 1): its
 * oldest ready task, else its next delayed one, else its oldest buried
 * one (tasks waiting for parents are not moved: they wait at the
 * source). Fills a MOVE_HOLD record. SLUICE_ETUBE (a bad name),
 * SLUICE_ENOTFOUND (nothing left to hold). */
int queue_decide_move_hold(struct queue *q, int64_t now, const char *tube,
    size_t len, uint64_t lease, struct qrec *out);

/* The ids of up to `max` tasks of `tube` held for a move now; returns
 * how many there are (may be more than max). */
size_t queue_move_held(const struct queue *q, const char *tube, size_t len,
    uint64_t *ids, size_t max);

/* The state (QUEUE_READY, _DELAYED, _BURIED) task `id` was in before
 * it was held, and its lease; 0 when it is not held. */
int queue_move_was(const struct queue *q, uint64_t id, uint64_t *lease);

/* Drops task `id`, held under `lease`: a MOVE_DROP record, or
 * out->type QREC_NONE when it is not held under that lease (gone
 * already: a drop sent again). */
int queue_decide_move_drop(
    struct queue *q, uint64_t id, uint64_t lease, struct qrec *out);

/* A task to copy in, as its source holds it. */
struct queue_move_item {
	uint64_t src_id;
	int state; /* QUEUE_READY, QUEUE_DELAYED or QUEUE_BURIED */
	uint32_t attempts;
	int64_t created_at;
	const char *error; /* error_len 0: none */
	size_t error_len;
	const char *tube;
	size_t tube_len;
	const void *payload;
	size_t payload_len;
	uint32_t pri;
	uint32_t ttr; /* ms, >= 1 */
	uint32_t max_attempts;
	int64_t run_at; /* ready: since when; delayed: when due */
	int64_t period;
	const char *key; /* key_len 0: none */
	size_t key_len;
	const char *group; /* group_len 0: none */
	size_t group_len;
};

/* Copies `it` in from cluster `source`: a MOVE_IN record, and in *id the
 * copy's id (a new task, or the task it is folded into: its key is live
 * or reserved in the tube). out->type QREC_NONE when it was copied
 * before (*id: the copy). Errors: those of queue_decide_put, and
 * SLUICE_EINVAL (a bad source name, state, ttr or time), SLUICE_ESTATE
 * (the tube is moving in from another cluster, whose move is not over). */
int queue_decide_move_in(struct queue *q, int64_t now, const char *source,
    size_t source_len, const struct queue_move_item *it, struct qrec *out,
    uint64_t *id);

/* Marks `tube` moving out: a MOVE_MARK record, or QREC_NONE when the
 * tube does not exist or is marked already. */
int queue_decide_move_mark(
    struct queue *q, const char *tube, size_t len, struct qrec *out);

/* Ends `tube`'s move here: a MOVE_END record (the target's table of
 * source ids goes, a source's mark too), or QREC_NONE when there is
 * neither. */
int queue_decide_move_end(
    struct queue *q, const char *tube, size_t len, struct qrec *out);

/* How many source ids `tube`'s table holds (0: no move in), and its
 * source (NULL: none). */
size_t queue_move_pairs(
    const struct queue *q, const char *tube, size_t len, const char **source);

/* A key reservation of a tube (the key of a task completed there, kept
 * for the dedup window), as the source holds it. */
struct queue_move_key {
	uint64_t id;     /* the task it was the key of */
	const char *key; /* borrowed from the queue until it changes */
	size_t key_len;
	int64_t expires; /* reserved until then */
	uint64_t version;
};

/* The reservations of `tube`'s keys not expired, of tasks whose ids are
 * above `after`, lowest id first: up to `max` into out; returns how many
 * there are (may be more than max). Reservations of every tube (old
 * snapshots' entries) are not a tube's and are left out. */
size_t queue_move_keys(const struct queue *q, const char *tube, size_t len,
    uint64_t after, struct queue_move_key *out, size_t max);

/* Copies reservation `k` of `tube` in from cluster `source`: a MOVE_KEY
 * record, and in *id what it maps to here (a new entry, or the live task
 * or reservation of the key here: it is folded). out->type QREC_NONE when
 * it was copied before (*id: that copy) or has expired (*id 0).
 * SLUICE_EINVAL (a bad source, key or time), SLUICE_ETUBE, SLUICE_ESTATE
 * (the tube is moving in from another cluster). */
int queue_decide_move_key(struct queue *q, int64_t now, const char *source,
    size_t source_len, const char *tube, size_t tube_len,
    const struct queue_move_key *k, struct qrec *out, uint64_t *id);

/* How many tasks of `tube` belong to a workflow still under way here:
 * waiting for parents, or queued or taken while a child waits for them,
 * or with parents (whose results they get when taken). A move holds none
 * of the tube's tasks while there are any (move_wait.c). */
size_t queue_move_graph(const struct queue *q, const char *tube, size_t len);

/* True when no tube `governs` selects holds a task here but done ones,
 * nor is moving out or in (a move's mark or table): a drain from here
 * is over (docs/scaling.md, "Drain instead of move"). move_wait.c. */
bool queue_move_drained(const struct queue *q,
    bool (*governs)(void *arg, const char *name, size_t len), void *arg);

/* The first group of `tube` after `after` (by its bytes; after_len 0:
 * from the first) that has settings of its own: its name into `name`
 * (QREC_GROUP_MAX bytes), *name_len 0 when there is none. SLUICE_ETUBE,
 * SLUICE_ENOTFOUND (no such tube). move_group.c. */
int queue_move_group_next(const struct queue *q, const char *tube, size_t len,
    const char *after, size_t after_len, char *name, size_t *name_len);

/* ---- The key window of a move (move_place.c) ----------------------- */

/* The target: the keys of `tube` (and of the tubes it is a prefix of)
 * moving in from `source` are pending (on 1: a keyed put of them is
 * refused SLUICE_EMOVING until they are here) or here (on 0): a MOVE_PEND
 * record, or QREC_NONE when the mark is so already. SLUICE_ETUBE,
 * SLUICE_EINVAL (a bad source). */
int queue_decide_move_pend(struct queue *q, const char *tube, size_t len,
    const char *source, size_t source_len, bool on, struct qrec *out);

/* The source: its drain of `tube` does not end by itself until the
 * tube's MOVE_END here: a MOVE_KEEP record, or QREC_NONE when marked. */
int queue_decide_move_keep(
    struct queue *q, const char *tube, size_t len, struct qrec *out);

/* Whether a keyed put of `tube` waits: a move's keys pending for it. */
bool queue_move_keys_pending(
    const struct queue *q, const char *tube, size_t len);

/* A live task of a tube with a key, as the source holds it. */
struct queue_move_live {
	uint64_t id;
	const char *key; /* borrowed from the queue until it changes */
	size_t key_len;
	int state; /* QUEUE_READY .. QUEUE_WAITING */
};

/* The keyed tasks of `tube` not done, ids above `after`, lowest first:
 * up to `max` into out; returns how many there are. */
size_t queue_move_live(const struct queue *q, const char *tube, size_t len,
    uint64_t after, struct queue_move_live *out, size_t max);

/* Holds the key of source task `src_id` (live at `source`) in `tube`
 * here: a MOVE_PLACE record and in *id the id its copy will get (or the
 * task or entry the key names here: folded). QREC_NONE when held before
 * (*id: its id). SLUICE_EINVAL, SLUICE_ETUBE, SLUICE_EKEY, SLUICE_ESTATE
 * (the tube moves in from another cluster). */
int queue_decide_move_place(struct queue *q, int64_t now, const char *source,
    size_t source_len, const char *tube, size_t tube_len, uint64_t src_id,
    const char *key, size_t key_len, struct qrec *out, uint64_t *id);

#endif
