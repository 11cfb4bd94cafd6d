/* batch - batches of tasks with callbacks: tasks put with the same batch
 * name (PUT_X tag BATCH) form a batch; when it ends, its callbacks
 * (on_success: every task acked; on_complete: every task acked or failed
 * for good) are put into their tubes, each with the batch's counts in
 * its payload (JSON). docs/queue.md, "Batches", has the rules.
 *
 * Names are the whole queue's, not a tube's: a batch's tasks may be in
 * any tubes (a pipeline's stages), and a name means one batch.
 *
 * When a batch ends: it is closed (BATCH_CLOSE: it takes no more tasks)
 * and none of its tasks is live. A task is live until it is acked
 * (deleted or kept as done; an ack --to another tube keeps it live
 * there, same id) or fails for good: buried (by a fail past its
 * attempts, a bury, a parent's failure), moved to a dead-letter tube,
 * deleted, cancelled. A buried task counts as failed for the batch from
 * then on, even if it is kicked later. A close of a batch with no live
 * task ends it at once. A put into a closed or ended batch is refused
 * (SLUICE_EBATCH), so an end, once reached, is final.
 *
 * Exactly once: the end is reached in apply (the same records end it on
 * every node); the callbacks are then owed, and the leader decides one
 * BATCH_FIRE record that puts them and marks them put in the same apply:
 * a node that applies the log (a restart, a follower promoted) never
 * puts them again, and one that ended the batch but did not fire puts
 * them when it leads.
 *
 * Memory: a batch costs sizeof(struct batch) (about 160 bytes) + its
 * name + its callbacks' tubes and payloads (at most 64 KiB each); a
 * task in a live batch, 16 bytes in the member table + its index slot
 * (about 40 bytes with the allocator's overhead).
 * At most QUEUE_BATCHES_MAX batches at once (a put or set that would
 * make one more: SLUICE_ELIMIT). An ended batch forgets its members and
 * is kept, with its counts, the dedup window (cfg.dedup_ms) after its
 * callbacks were put, so `batch show` still answers; then its name is
 * free again. */
#ifndef SLUICE_QUEUE_BATCH_H
#define SLUICE_QUEUE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/idx.h"
#include "queue/qrec.h"
#include "util/buf.h"

struct queue;
struct task;

enum { QUEUE_BATCHES_MAX = 100000 };

struct batch {
	char *name;
	char *on_tube[2]; /* success, complete; NULL: none */
	void *on_payload[2];
	uint32_t on_tube_len[2];
	uint32_t on_payload_len[2];
	uint16_t name_len;
	bool closed;
	bool ended;
	uint8_t owed; /* QREC_BATCH_ON_* bits still to put */
	uint8_t fired;
	int64_t started_at; /* its first put; 0: none yet */
	int64_t ended_at;
	int64_t expires; /* ended, nothing owed: forgotten then */
	uint64_t total;  /* tasks put into it */
	uint64_t nlive;
	uint64_t acked;
	uint64_t buried;
	uint64_t failed; /* deleted, cancelled, dead-lettered */
	uint64_t fired_id[2];
	struct batch *next; /* on the list to forget, by expires */
};

struct bmember {
	uint64_t id;
	struct batch *b;
};

struct batches {
	struct idx names;       /* batch by hash of its name */
	struct idx members;     /* bmember by task id */
	struct batch *old_head; /* ended, nothing owed: by expires */
	struct batch *old_tail;
	uint32_t nowed;        /* batches with callbacks owed */
	uint64_t acking;       /* the task an ACK being applied acks */
	int64_t time;          /* of the record being applied */
	struct bmember *spare; /* a PUT_X's member, between reserve and
	                          commit */
	struct batch *made;    /* a batch made by that put */
	struct buf cb[2];      /* decide: a BATCH_FIRE's payloads */
};

/* The counts of a batch, by state (queue_batch_show). */
struct queue_batch_info {
	const struct batch *b;
	uint64_t waiting, ready, delayed, taken; /* live, now */
	uint64_t total, acked, buried, failed;
	int64_t started_at, ended_at; /* 0: not yet */
	bool closed, ended;
	uint8_t owed, fired;
};

void batches_init(struct batches *bs);
void batches_fini(struct batches *bs);

/* The batch `name`, or NULL. */
struct batch *queue_batch_find(
    const struct queue *q, const char *name, size_t len);

/* True when `name` is a valid batch name. */
bool queue_batch_name_valid(const char *name, size_t len);

/* Decide of a put's batch (queue_put_req's batch): SLUICE_EINVAL for a
 * bad name or a put the batch cannot hold (a period, replace, if_newer,
 * debounce, throttle); SLUICE_EBATCH for a closed or ended batch; else
 * the record becomes a PUT_X carrying it. */
int batch_decide_put(
    struct queue *q, const void *req, struct qrec_put *p, uint16_t *type);

/* Decide of `batch set`: each callback given (tube non-NULL) replaces
 * that one; tube_len 0 with a non-NULL tube removes it. SLUICE_EINVAL
 * (name), SLUICE_ETUBE (a callback's tube), SLUICE_ETOOBIG (payload over
 * QREC_BATCH_PAYLOAD_MAX), SLUICE_EBATCH (ended), SLUICE_ELIMIT (too
 * many batches). */
int queue_decide_batch_set(struct queue *q, const char *name, size_t len,
    const char *success_tube, size_t success_tube_len,
    const void *success_payload, size_t success_payload_len,
    const char *complete_tube, size_t complete_tube_len,
    const void *complete_payload, size_t complete_payload_len,
    struct qrec *out);

/* Decide of `batch close`: SLUICE_EINVAL (name), SLUICE_ENOTFOUND; a
 * closed one: QREC_NONE. */
int queue_decide_batch_close(
    struct queue *q, const char *name, size_t len, struct qrec *out);

/* A batch whose callbacks are owed (the leader fires it), or NULL. */
struct batch *queue_batch_owed(const struct queue *q);

/* Decide of the BATCH_FIRE of `b` (owed). The payloads stay in the
 * queue's scratch until the next call. */
int queue_decide_batch_fire(
    struct queue *q, int64_t now, const struct batch *b, struct qrec *out);

/* The ids of the live tasks (waiting, ready, delayed, taken) of the batch
 * `name`, newest first, into *ids (to free; NULL when none) and *n:
 * SLUICE_ENOTFOUND, SLUICE_ENOMEM. O(members) (batch_live.c). */
int queue_batch_live_ids(const struct queue *q, const char *name, size_t len,
    uint64_t **ids, size_t *n);

/* Counts live task t in its state's count of `i` (queue_batch_show and
 * queue_batch_list). */
void batch_count_live(struct queue_batch_info *i, const struct task *t);

/* The counts of the batch `name` (SLUICE_ENOTFOUND). O(members). */
int queue_batch_show(const struct queue *q, const char *name, size_t len,
    struct queue_batch_info *out);

/* The batch task `id` is in while it is live in it (an ended batch
 * forgets its members), or NULL (batch_list.c). */
const struct batch *queue_batch_of(const struct queue *q, uint64_t id);

/* Up to `limit` batches into `out` (room for `limit`), *n of them: the
 * open ones first, the latest started first, then the ended ones, the
 * latest ended first; each with queue_batch_show's counts (batch_list.c).
 * `now`: the time an open batch with no task yet counts as started.
 * SLUICE_ENOMEM. */
int queue_batch_list(const struct queue *q, int64_t now, uint32_t limit,
    struct queue_batch_info *out, uint32_t *n);

/* Appends the JSON object of a batch's counts (the callbacks' payloads,
 * `batch show --json`). `event` NULL: none. */
void queue_batch_json(const struct queue_batch_info *i, const char *event,
    const void *payload, size_t payload_len, struct buf *out);

uint64_t queue_batch_count(const struct queue *q);

/* apply: a PUT_X with a batch (around deps_apply_put or qs_apply_put);
 * the batch records; the hooks around every record and a task's removal
 * or burial. */
int batch_apply_put(struct queue *q, int64_t time, const struct qrec_put *p);
/* The batch records; any other type goes to qs_sched_apply. */
int batch_apply(struct queue *q, int64_t time, const struct qrec *rec);
void batch_before(struct queue *q, int64_t time, const struct qrec *rec);
/* Every hook before an apply: the outcomes', deps', batches'. */
void batch_hooks_before(struct queue *q, int64_t time, const struct qrec *rec);
void batch_after(struct queue *q, const struct qrec *rec);
void batch_task_gone(struct queue *q, const struct task *t);
void batch_task_buried(struct queue *q, const struct task *t);
void batch_tick(struct queue *q, int64_t now);

/* Snapshot: one entry per batch (QSNAP 42), then one per member (43:
 * u64 id, str16 name; after the tasks). */
int batch_snapshot_write(const struct queue *q,
    int (*emit)(void *arg, uint16_t type, const void *a, size_t alen,
        const void *b, size_t blen),
    void *arg);
int batch_snapshot_load(struct queue *q, uint16_t type, struct rd *r);

/* queue_check's part; queue_dump's part. */
const char *batch_check(const struct queue *q);
void batch_dump(const struct queue *q, struct buf *out);

#endif
