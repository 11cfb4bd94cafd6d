/* t_model_queue - the model test of src/queue's tasks, keys, groups and
 * limits (test_model.c, whose opening comment tells what it checks): its
 * sizes, its names, the model's types, and the functions its files share.
 *
 * Design. The test is one case over a few seeds, in five files by
 * subject, each with its own static helpers and the rest declared here:
 * - t_model_queue.c: the model's own rules (its events, keys, leases,
 *   settings, flow limits, group limits and a take's tops), and commit,
 *   which counts the seams a record crosses as it goes to the queue;
 * - t_model_queue_ops.c: the requests on tasks (put, take, ack, release,
 *   fail, touch, bury, untake, kick, update, delete, flush, delete
 *   where), each decided by the queue and answered by the model;
 * - t_model_queue_tube.c: the requests on tubes (pause, settings,
 *   delete, limits, group limits), ttr expiry and a session's end;
 * - t_model_queue_cmp.c: the queue's answers against the model's (a
 *   task, errors, settings, groups, stats, the hourly statistics);
 * - test_model.c: a step, a seed's run with its log's checks, the case.
 * t_model.h has what this test shares with test_model_flow.c. */
#ifndef SLUICE_T_MODEL_QUEUE_H
#define SLUICE_T_MODEL_QUEUE_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/limits.h"
#include "t_lib.h"
#include "t_queue.h"

#define T0 1700000000000LL

enum {
	NTUBE = 4,
	NKEY = 6,
	NERR = 4,
	NPAY = 9,
	NSESSION = 4,
	MAXLIVE = 2048,
	STEPS = 25000, /* per seed */
	NSNAP = 3,
	PICK_OTHER = 5 /* t_model.h's pick_taken: 1 in 5 names any id */
};

enum { M_QUEUED = 1, M_TAKEN = 2, M_BURIED = 3, M_DONE = 4 };

enum { NGRP = 3 };
extern const char *const grp_names[NGRP];

/* A tube's group limits: every group's cap (0: none), each group's own
 * (0: none) and pause. */
struct mgl {
	uint32_t def;
	uint32_t own[NGRP];
	bool paused[NGRP];
	uint32_t def_rate, def_burst; /* every group's rate (per second) */
	uint32_t own_rate[NGRP], own_burst[NGRP];
};

/* A live group's bucket (per second), as the queue keeps it: full when
 * the group is made or its rate changes, a token spent by each take. */
struct mgb {
	bool live;            /* tasks name the group */
	uint32_t rate, burst; /* its rate in force (0: none) */
	uint64_t credit;
	int64_t stamp;
};

/* A tube's settings: the QREC_TS_* it sets, and their values. */
struct mconf {
	uint8_t set;
	uint32_t ttr, maxa, base, cap;
	int64_t keep;
	bool immediate;
	int dl; /* the dead letter tube; -1: none */
};

/* A tube's flow limits (per second), and its bucket: credit in
 * token-milliseconds at stamp. */
struct mlim {
	uint8_t set; /* QREC_LIM_* */
	uint32_t rate, burst, conc;
	uint64_t credit;
	int64_t stamp;
};

extern const char *const tube_names[NTUBE];
/* Namespaces whose usage is counted: a tube, every tube, a prefix that
 * covers one, and one that covers none. */
extern const struct queue_ns ns[4];
extern const char *const key_names[NKEY];
extern const char *const err_texts[NERR];
extern const char *const results[NERR];

/* Payload p: "payload-p" cut or repeated to a length that depends on p;
 * its length. */
size_t payload(int p, char *out);

/* ---- The model --------------------------------------------------------- */

struct mt {
	uint64_t id;
	int tube;
	int state;
	uint32_t pri, ttr, attempts, maxa;
	int64_t run_at, period, buried_at;
	int key, pay; /* -1: none; key: tube * NKEY + its name's index */
	bool has_err;
	char err[80]; /* last_error while has_err */
	uint64_t lease, session;
	bool detached;
	int64_t deadline;
	int64_t created, taken_at;
	/* done: when, until when it is kept, its key while reserved (in
	 * dedup_id), its result (-1: none) */
	int64_t finished, kept_until;
	int dkey, res;
	bool repl;
	uint32_t r_pri, r_ttr, r_maxa;
	int64_t r_run_at, r_period;
	int r_pay;
	uint64_t ver, r_ver; /* the client's versions; 0: none */
	int grp;             /* its fair group; -1: none */
};

struct model {
	struct queue_config cfg;
	struct mt t[MAXLIVE];
	size_t n;
	uint64_t next_id;
	bool exists[NTUBE];
	int64_t pause[NTUBE];
	/* by key of a tube, tube * NKEY + key (keys are per tube) */
	uint64_t dedup_id[NTUBE * NKEY]; /* 0: no entry */
	int64_t dedup_exp[NTUBE * NKEY];
	uint64_t dedup_ver[NTUBE * NKEY]; /* the finished task's version */
	/* the key's throttle window: the task that opened it, its end */
	uint64_t thr_id[NTUBE * NKEY];
	int64_t thr_until[NTUBE * NKEY];
	struct queue_counters ctr[NTUBE];
	struct mconf conf[NTUBE];
	struct mlim lim[NTUBE];
	struct mgl grpl[NTUBE];
	struct mgb gb[NTUBE][NGRP];
	struct mev *ev; /* every event the hourly statistics count */
	size_t nev, evcap;
};

enum { EV_WAIT, EV_WORK, EV_FAIL, EV_BURY, EV_TTR };

struct mev {
	int64_t time;
	int64_t dur; /* EV_WAIT, EV_WORK */
	int tube;
	int kind;
};

/* The run: the queue (t_queue.h) and the model, side by side. */
struct run {
	struct tq h;
	struct model *m;
	struct queue *follower;
	size_t fed; /* log entries given to the follower */
	uint64_t rnd;
	uint64_t ops, records;
	uint64_t tube_sets, tube_deletes, dead_letters;
	uint64_t tube_limits, held; /* TUBE_LIMITs; takes a limit held */
	uint64_t group_sets, gheld; /* GROUP_SETs; takes a group's held */
	uint64_t grate;             /* ... and of them by its rate */
	struct buf snap[NSNAP];
	size_t snap_at[NSNAP];
	int nsnap;
};

/* What a take may get of each tube of `mask`: the tops of its groups
 * (the best ready task of each group no limit holds, of the best
 * priority among them; one for a tube without groups). */
struct tops {
	struct mt *t[NTUBE][NGRP + 1];
	size_t n[NTUBE];
};

/* pick_id, which t_model.h names: an id, mostly of a live task, sometimes
 * any id ever given or more. */
static uint64_t pick_id(struct run *r);

/* The helpers both model tests use, over the types above. */
#include "t_model.h"

/* The seams between tube settings and the server's, over every seed: a
 * task kept as done by its tube's own keep_done where the server keeps
 * none, a lost lease under its tube's own retry where the server's
 * differs, a lost lease at max_attempts and a fatal fail moved to a dead
 * letter. Each must happen, or the model did not test it. */
struct seams {
	uint64_t own_keep, own_retry, lost_moved, fatal_moved;
};
extern struct seams seams;

/* The records the hourly statistics classify since UNTAKE, SETBACK, dead
 * letters and tube removal, over every seed: a ttr expiry and a lost
 * session (SETBACK), a ttr expiry that buries or moves, a move to a dead
 * letter, an undone take, a tube deleted with statistics. Each must
 * happen, or compare_hourly did not check it. */
struct hseams {
	uint64_t ttr, session, ttr_bury, moved, untake, freed;
};
extern struct hseams hseams;

static inline uint64_t
pick_id(struct run *r)
{
	if (r->m->n > 0 && rnd(r, 8) != 0)
		return r->m->t[rnd(r, r->m->n)].id;
	return 1 + rnd(r, r->m->next_id + 1);
}

/* ---- the model's own rules and commit (t_model_queue.c) */

void m_event(struct model *m, int tube, int64_t time, int kind, int64_t dur);
void m_forget_events(struct model *m, int tube);
struct mt *m_by_key(struct model *m, int key);
struct mt *m_done_by_key(struct model *m, int key, int64_t now);
struct mt *m_done_of_key(struct model *m, int key);
bool m_held(struct model *m, int key, int64_t now);
void m_gone(struct model *m, struct mt *t, int64_t now, bool completed);
void m_unlease(struct mt *t);
void m_apply_repl(struct mt *t, int64_t now);
void m_bury(struct model *m, struct mt *t, int64_t now);
void m_purge(struct model *m, int64_t now);
size_t m_count_done(const struct model *m);
void m_move_key(struct model *m, struct mt *t, int to, int64_t now);
void m_bury_taken(struct model *m, struct mt *t, int64_t now);
uint32_t m_ttr(const struct model *m, int tube, uint32_t asked);
uint32_t m_maxa(const struct model *m, int tube, uint32_t asked);
int64_t m_backoff(const struct model *m, int tube, uint32_t attempts);
bool m_lost_immediate(const struct model *m, int tube);
void m_lost(struct model *m, struct mt *t, int64_t now, bool ttr,
    const char *why, bool at_once);
uint64_t m_credit(const struct model *m, int tube, int64_t now);
bool m_tube_held(const struct model *m, int tube, int64_t now);
uint64_t m_gcredit(const struct model *m, int tube, int g, int64_t now);
void m_gsync(struct model *m, int64_t now);
bool m_group_held(const struct model *m, int tube, int g, int64_t now);
int m_tops(const struct model *m, unsigned mask, int64_t now, bool strict,
    struct tops *o);
bool m_pick_ok(const struct tops *o, const struct mt *p);
void count_seams(struct run *r, const struct qrec *rec);
void count_hourly_seams(const struct qrec *rec);
void commit(struct run *r, const struct qrec *rec);

/* ---- the requests on tasks (t_model_queue_ops.c) */

uint64_t pick_lease(struct run *r, uint64_t id);
bool pick_force(struct run *r);
int pick_tube(struct run *r);
void op_put(struct run *r);
void op_take(struct run *r);
int64_t m_keep(const struct model *m, int tube);
void m_done(struct model *m, struct mt *t, int64_t now, int res);
void op_ack(struct run *r);
void op_release(struct run *r);
void op_fail(struct run *r);
void op_touch(struct run *r);
void op_bury(struct run *r);
void op_untake(struct run *r);
void op_kick(struct run *r);
void op_update(struct run *r);
void op_delete(struct run *r);
void op_flush(struct run *r);
int64_t m_age_time(const struct mt *t);
int m_state(const struct mt *t, int64_t now);
bool m_aged(struct run *r, const struct mt *t, int tube, uint8_t states,
    uint8_t by, int64_t before);
void op_delete_aged(
    struct run *r, int tube, struct queue_delete_where_req *req);
void op_delete_where(struct run *r);

/* ---- the requests on tubes, timers and sessions (t_model_queue_tube.c) */

void op_pause(struct run *r);
void op_tube_set(struct run *r);
void m_conf_clear(struct mconf *c);
void op_tube_delete(struct run *r);
void op_tube_limit(struct run *r);
void op_group_set(struct run *r);
void compare_groups(struct run *r, int tube);
void op_expire(struct run *r);
void op_sessions(struct run *r, uint64_t session);

/* ---- the queue against the model (t_model_queue_cmp.c) */

void compare_task(struct run *r, const struct mt *t);
int by_err(const void *a, const void *b);
void compare_errors(struct run *r, int tube);
void compare_conf(struct run *r, int tube);
void compare(struct run *r);
int cmp_i64(const void *a, const void *b);
void compare_dist(const struct queue_dist *d, int64_t *durs, size_t n);
void compare_hours(struct run *r, int tube);
int total_bucket_of(int64_t ms);
void compare_totals(struct run *r, int tube);
void compare_hourly(struct run *r);

#endif
