/* t_model_flow - the model test of src/queue's workflows
 * (test_model_flow.c, whose opening comment tells what it checks): its
 * sizes, its names, the model's types, and the functions its files share.
 *
 * Design. The test is one case over a few seeds, in five files by
 * subject, each with its own static helpers and the rest declared here:
 * - t_model_flow.c: the model's own rules (the dependency graph and its
 *   outcomes, the parent-failure rules, leases, batch ends, the next
 *   task a take gets);
 * - t_model_flow_ops.c: the requests on tasks (put with parents, take,
 *   ack with a result, release, fail, touch, bury, kick, delete,
 *   update, flush, cancel, ttr expiry), each decided by the queue and
 *   answered by the model;
 * - t_model_flow_sched.c: batches, schedules and their slots, a lost
 *   session, and the restarts (from the log or a snapshot);
 * - t_model_flow_cmp.c: the queue's answers against the model's (a task,
 *   its dependencies, batches, schedules, the final callbacks, stats);
 * - test_model_flow.c: a step, a seed's run with its log's checks, the
 *   case.
 * t_model.h has what this test shares with test_model.c. */
#ifndef SLUICE_T_MODEL_FLOW_H
#define SLUICE_T_MODEL_FLOW_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/batch.h"
#include "queue/sched.h"
#include "t_lib.h"
#include "t_queue.h"

/* 2026-09-21 21:33 UTC, on a minute */
#define T0     1789999980000LL
#define MIN_MS 60000LL

enum {
	NTUBE = 3, /* t0, t1 (its dead letters go to dl), dl */
	TDL = 2,
	NBATCH = 3,
	NSCHED = 2,
	MAXLIVE = 1024,
	MAXID = 16384,
	MAXP = 5, /* parents: up to 4 by id, 1 by key */
	MAXFIRED = 8192,
	STEPS = 6000, /* per seed */
	NRES = 4,
	NERR = 3,
	PICK_OTHER = 6, /* t_model.h's pick_taken: 1 in 6 names any id */
};

enum { M_WAITING = 1, M_QUEUED = 2, M_TAKEN = 3, M_BURIED = 4, M_DONE = 5 };
enum { O_PENDING = 0, O_DONE = 1, O_FAILED = 2 }; /* queue_dep_outcome */

extern const char *const tube_names[NTUBE];
extern const char *const batch_names[NBATCH];
extern const char *const sched_names[NSCHED];
extern const char *const results[NRES];
extern const char *const errors[NERR];

struct mt {
	uint64_t id;
	int tube, state;
	uint32_t pri, ttr, attempts, maxa;
	int64_t run_at, deadline;
	uint64_t lease;
	bool cancelled;   /* taken and marked */
	uint64_t session; /* taken: its session (1..3) */
	bool detached;    /* taken: its lease outlives the session */
	bool kicked;      /* an operator kicked it: it may run before parents */
	bool has_err;
	char err[256];
	int batch;          /* a live member of it; -1: none */
	int sched;          /* put by schedule sched_names[sched - 1]; 0: not */
	int64_t slot;       /* ... for this slot (its key names both) */
	int res;            /* done: its result's index (-1: none) */
	int64_t kept_until; /* done: purged then */
	uint64_t parents[MAXP]; /* sorted */
	bool linked[MAXP];      /* the parent had a node (or got one) */
	int np, rule;
	uint32_t pending;
};

/* A node of the graph, by id, as deps.h keeps it. */
struct mnode {
	bool exists, gone;
	bool cancelled; /* failed by being cancelled: "task N failed:
	                   cancelled" */
	uint8_t outcome;
	int res; /* DONE with a result: its index; -1: none */
	uint32_t pending;
};

struct mbatch {
	bool exists, closed, ended;
	bool on[2]; /* success, complete callbacks set */
	uint8_t owed, fired;
	uint64_t total, acked, buried, failed;
	int64_t started, ended_at, expires;
};

struct msched {
	bool exists, paused;
	int period; /* minutes: 1 or 5 */
	uint8_t catch_up;
	int64_t from, last_slot;
	uint64_t fired, last_id;
};

struct model {
	struct queue_config cfg;
	struct mt t[MAXLIVE];
	size_t n;
	uint64_t next_id;
	struct mnode node[MAXID];
	uint64_t todo[MAXID]; /* nodes to settle, in order */
	size_t todo_head, todo_tail;
	struct queue_counters ctr[NTUBE];
	struct mbatch b[NBATCH];
	struct msched s[NSCHED];
	struct {
		int sched;
		int64_t slot;
	} fired[MAXFIRED];
	size_t nfired;
	/* outcomes (queue_outcome.h), by id, and the ids the queue must
	 * name to its final callback for the step's records */
	struct mout {
		uint8_t kind; /* enum queue_end; 0: none */
		int tube;
		int64_t time, expires;
		bool has_text;
		char text[256];
	} out[MAXID];
	uint8_t why;           /* the kind of the removals the record makes */
	bool cancelled[MAXID]; /* ids a CANCEL named: never handed out again */
	uint64_t final_want[4 * MAXLIVE], final_got[4 * MAXLIVE];
	size_t nfinal_want, nfinal_got;
};

struct run {
	struct tq h;
	struct model *m;
	struct queue *follower;
	size_t fed;
	uint64_t rnd;
	struct buf snap;
	size_t snap_at;
	/* what the seed did, so that the run shows it tested it */
	uint64_t results_seen;
	uint64_t cancel_taken, cancel_queued, callbacks, slots_put;
	uint64_t slots_skipped, stale_refused, restarts, children_taken;
	uint64_t flushed, key_parents, sessions_gone;
};

/* pick_id, which t_model.h names: an id, mostly of a live task, else any
 * id given so far or the next. */
static uint64_t pick_id(struct run *r);

/* The helpers both model tests use, over the types above. */
#include "t_model.h"

/* Each rule applied (fail, ignore, cancel), over every seed: each must
 * happen, or the model did not test it. */
extern uint64_t rules_applied[QUEUE_PARENT_END_];

/* Cancels, by the state of the task cancelled (enum queue_state). */
extern uint64_t cancels[QUEUE_STATE_END_];

static inline uint64_t
pick_id(struct run *r)
{
	struct model *m = r->m;

	if (m->n > 0 && rnd(r, 6) != 0)
		return m->t[rnd(r, m->n)].id;
	return 1 + rnd(r, m->next_id);
}

/* How a batch's member ended (m_batch_end_member). */
enum { HOW_ACKED, HOW_BURIED, HOW_FAILED };

/* ---- the model's own rules (t_model_flow.c) */

int sorted_u64(const void *a, const void *b);
uint32_t m_nlive(const struct model *m, uint64_t id);
int m_outcome(struct model *m, uint64_t id);
const char *m_failure_text(struct model *m, uint64_t id);
int m_dep_res(struct model *m, uint64_t id);
void m_push(struct model *m, uint64_t id);
void m_final(struct model *m, uint64_t id);
void m_note(struct model *m, const struct mt *t, int kind, const char *text,
    int64_t now);
void m_settle(struct model *m, uint64_t id, uint8_t outcome, int res);
void m_remove(struct model *m, struct mt *t, bool acked, int res, int64_t now);
void m_unlease(struct mt *t);
void m_bury(struct model *m, struct mt *t, int64_t now);
void m_bury_taken(struct model *m, struct mt *t, int64_t now);
void m_release_child(struct mt *t, int64_t now);
void m_tell(struct model *m, uint64_t p, uint64_t cid, int64_t now);
void m_settle_all(struct model *m, int64_t now);
void m_batch_maybe_end(struct model *m, struct mbatch *b, int64_t now);
void m_batch_end_member(struct model *m, struct mt *t, int how, int64_t now);
void m_tick(struct model *m, int64_t now);
struct mt *m_new_task(struct model *m, int tube, int64_t run_at, int64_t now);
void m_lost(
    struct model *m, struct mt *t, int64_t now, bool ttr, const char *why);
int m_view_state(const struct mt *t, int64_t now);
struct mt *m_best(struct model *m, unsigned mask, int64_t now);

/* ---- both sides: the requests on tasks (t_model_flow_ops.c) */

void on_final(void *arg, uint64_t id);
void commit(struct run *r, const struct qrec *rec);
uint64_t pick_lease(struct run *r, uint64_t id);
void m_cancelled_end(struct run *r, struct mt *t, const struct qrec *rec);
void op_put(struct run *r);
void op_take(struct run *r);
void op_ack(struct run *r);
void op_release(struct run *r);
void op_fail(struct run *r);
void op_touch(struct run *r);
void op_bury(struct run *r);
void op_kick(struct run *r);
void op_delete(struct run *r);
void op_update(struct run *r);
void op_flush(struct run *r);
void op_cancel(struct run *r);
void op_expire(struct run *r);

/* ---- batches, schedules, restarts (t_model_flow_sched.c) */

void op_batch_set(struct run *r);
void op_batch_close(struct run *r);
void fire_batches(struct run *r);
void op_sched_set(struct run *r);
void op_sched_pause(struct run *r);
void op_sched_delete(struct run *r);
void fire_slot(struct run *r, int si, int64_t slot, bool put);
void fire_schedules(struct run *r);
void op_sched_stale(struct run *r);
void op_session_gone(struct run *r);
void restart(struct run *r, bool from_snap);

/* ---- the queue against the model (t_model_flow_cmp.c) */

void compare_task(struct run *r, const struct mt *t);
void compare_deps(struct run *r, uint64_t id);
void compare_batches(struct run *r);
void compare_scheds(struct run *r);
void compare_finals(struct run *r);
void compare_result(struct run *r, uint64_t id);
void compare(struct run *r);

#endif
