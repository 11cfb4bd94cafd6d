/* deps - dependencies between tasks: a task put with parents (--after)
 * waits (QUEUE_WAITING) until each of them is acked, then becomes ready
 * or delayed by its run_at; a parent failing for good (buried, moved to
 * a dead-letter tube, deleted) applies the child's rule (enum
 * queue_on_parent). Parents and children form a DAG: a put names only
 * tasks that exist already, so a cycle cannot be made.
 *
 * Design: a side table of nodes, by task id, beside the tasks (struct
 * task carries nothing of it). A task has a node while it has parents or
 * children, and a parent's node outlives its task for as long as one of
 * its children does: the node remembers how the parent ended (acked,
 * with its result, or failed) so that a child taken later gets the
 * result, and a child put later is decided at once. An edge costs two
 * ids, 16 bytes: the child's parents[] and the parent's children[]; a
 * node keeps its first parent and its first child in itself (a chain or
 * a fan-out's middle allocates no list).
 *
 *   put      every parent gets a node (if it has none) and the child in
 *            its children[]; the child's node lists its parents, and
 *            counts those not finished (pending); it waits
 *   ack      of a parent (deleted, kept as done, moved --to): its node
 *            keeps the result; each waiting child's pending - 1, and a
 *            child at 0 becomes ready (run_at: now, or its later run_at)
 *   failure  of a parent for good: each waiting child's rule; a child
 *            buried or deleted so fails for good in turn, and its own
 *            children are decided the same way, through a list of nodes
 *            to settle (a loop, never a recursion)
 *   gone     a task leaves the queue: its node stays while a live child
 *            names it (live: children not gone), else it goes; the
 *            child's own parents count one live child less
 *
 * Rule for a parent the queue no longer holds: a put may name any id
 * below the next id. A task that finished with no child waiting for it
 * leaves nothing behind, and counts as acked (satisfied, without a
 * result): only the outcome of a parent with a live child is kept. A
 * parent whose failure should stop a child must therefore have the child
 * put while the parent is live (queued, taken, buried, kept as done).
 *
 * Everything here runs inside queue_apply (the same records give the
 * same graph on every node) or reads for decide and the queries. */
#ifndef SLUICE_QUEUE_DEPS_H
#define SLUICE_QUEUE_DEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/idx.h"
#include "queue/qrec.h"

struct queue;
struct task;

struct dnode {
	uint64_t id;
	uint64_t *parents;  /* child side: the tasks it waits for (&one
	                       when it is one: no allocation) */
	uint64_t one;       /* the parent of a child of one */
	uint64_t *children; /* parent side: the tasks that wait for it
	                       (&first while it is one) */
	uint64_t first;     /* the child of a parent of one */
	char *result;       /* acked with a result: a copy */
	struct dnode *next; /* on the list to settle */
	uint32_t nparents;
	uint32_t pending; /* parents not finished */
	uint32_t nchildren;
	uint32_t children_cap;
	uint32_t nlive; /* children whose task is not gone */
	uint32_t result_len;
	uint8_t on_parent; /* enum queue_on_parent */
	uint8_t outcome;   /* enum queue_dep_outcome */
	bool gone;         /* its task left the queue */
	uint8_t how;       /* failed by leaving: QUEUE_END_DELETED or
	                      _CANCELLED (its children's "task N failed:
	                      cancelled"); else 0 */
	bool queued;       /* on the list to settle */
};

struct deps {
	struct idx nodes;   /* dnode by id */
	struct dnode *todo; /* nodes whose children are to be told */
	struct dnode *todo_tail;
	uint64_t nedges;      /* sum of nparents */
	uint64_t acking;      /* the task an ACK being applied finishes */
	const char *ack_text; /* and its result (borrowed from the record) */
	size_t ack_text_len;
	uint64_t recheck;    /* a PUT_X's task, decided after its apply */
	bool recheck_failed; /* and whether a parent of it had failed */
	struct dnode *child; /* a PUT_X's node, between reserve and
	                        commit */
	uint8_t *scratch;    /* decide: the ids of a PUT_X's parents */
	size_t scratch_cap;
	struct dnode **pnode; /* a PUT_X's parents' nodes (NULL: none), */
	uint8_t *pout;        /* and outcomes, from reserve to commit */
	uint32_t pcap;
};

void deps_init(struct deps *d);
void deps_fini(struct deps *d);

/* The node of task `id`, or NULL. */
struct dnode *deps_node(const struct queue *q, uint64_t id);

/* Frees a node's parent list (not when it is the node's own `one`). */
void deps_parents_free(struct dnode *n);

/* The parent id i of a PUT_X record. */
uint64_t deps_after_id(const struct qrec_put *p, size_t i);

/* Decide for a put with parents (queue_put_req's after, after_keys): the
 * checks of queue_decide_put, and the record becomes a PUT_X carrying
 * them (sorted by id, in the queue's scratch). */
int deps_decide_put(
    struct queue *q, const void *req, struct qrec_put *p, uint16_t *type);

/* Decide of an ack: an ACK whose task goes (deleted or moved) while
 * children still need its result becomes an ACK_R carrying it. */
void deps_ack_result(
    const struct queue *q, const char *res, size_t len, struct qrec *out);

/* apply of a PUT_X, around apply_put: reserve every allocation (0 or
 * SLUICE_ENOMEM; SLUICE_ECORRUPT for a parent that cannot be named),
 * then commit once the task is placed (waiting), or undo. The reserve
 * looks each parent up once and keeps its node and outcome for the
 * commit: nothing but the placing of the put's own task may come
 * between them. */
int deps_apply_put(struct queue *q, int64_t time, const struct qrec_put *p);
int deps_put_reserve(struct queue *q, const struct qrec_put *p);
void deps_put_commit(struct queue *q, const struct qrec_put *p);
void deps_put_undo(struct queue *q);

/* Before apply: note the task an ACK finishes (its removal is then no
 * failure). Allocates nothing. */
void deps_before(struct queue *q, const struct qrec *rec);

/* A task leaves the queue (qs_task_remove): its node settles (failed,
 * unless it is the task being acked; `how` is how it ended, as
 * qs_outcome_removed says, which its children are told) and its parents
 * count one live child less. Allocates nothing. */
void deps_task_gone(struct queue *q, struct task *t, int how);

/* After apply: settles the task the record finished (acked, or failed
 * for good) and tells the children, in a loop until nothing is left to
 * settle. Returns 0 or SLUICE_ENOMEM (the state is then half way: the
 * server stops, as on any failed apply). */
int deps_after(struct queue *q, const struct qrec *rec);

/* Snapshot (deps_snap.c): writes the DEP and DEPC entries of every
 * node; loads one (SLUICE_ECORRUPT, SLUICE_ENOMEM). */
int deps_snapshot_write(const struct queue *q,
    int (*emit)(void *arg, uint16_t type, const void *a, size_t alen,
        const void *b, size_t blen),
    void *arg);
int deps_snapshot_load(struct queue *q, uint16_t type, struct rd *r);

/* Checks the graph against the tasks (queue_check). */
int deps_check(const struct queue *q, const char **why);

/* Appends the nodes, by id, to a dump. */
int deps_dump(const struct queue *q, struct buf *out);

#endif
