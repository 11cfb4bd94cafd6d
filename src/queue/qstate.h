/* qstate - the queue's state and the primitives that change it, shared by
 * the files of the queue module (apply, decide, queries, snapshot, dump,
 * check) and by nothing else.
 *
 * Where a task is, by state:
 *   ready    its tube's ready heap (pri, run_at, id) and age heap (run_at, id)
 *   delayed  its tube's delayed heap (run_at, id); the tube is in the
 *            queue's wake heap while that heap is not empty
 *   taken    the queue's lease heap (deadline, id); under a session lease
 *            also in its session's list, whose head is in `sessions`
 *   buried   its tube's buried heap (updated_at, id)
 *   done     its tube's done heap (updated_at, id) and the queue's purge
 *            heap `done` (run_at = kept until, id)
 * and always in `ids`. Invariants, as of `clock`: a ready task has
 * run_at <= clock, a delayed one and a done one run_at > clock; a tube is in
 * `pauses` iff paused_until != 0, and then paused_until > clock.
 *
 * Changing the state: first reserve (qs_reserve and friends: every
 * allocation, may fail), then commit (qs_place, qs_unplace: never fail).
 * That is how apply leaves the state unchanged on an error. */
#ifndef SLUICE_QUEUE_QSTATE_H
#define SLUICE_QUEUE_QSTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/batch.h"
#include "queue/deps.h"
#include "queue/flow.h"
#include "queue/group.h"
#include "queue/heap.h"
#include "queue/idx.h"
#include "queue/tidx.h"
#include "queue/move.h"
#include "queue/outcome.h"
#include "queue/queue.h"
#include "queue/task.h"
#include "queue/tslab.h"
#include "queue/tube.h"

/* A tube's tasks by state, as its snapshot TUBE entry counts them. */
struct qsnap_want {
	uint64_t ready;
	uint64_t delayed;
	uint64_t buried;
	uint64_t done;
};

/* The snapshot loader's progress (qsnap.c). */
struct qsnap_load {
	int phase;         /* the last entry type loaded; 0 before META */
	uint32_t version;  /* META's: the layout of the entries that follow */
	struct task *last; /* the task a REPL entry belongs to */
	uint64_t group_id; /* a GROUP entry's task, until its TASK; 0: none */
	uint16_t group_len;
	char group[QREC_GROUP_MAX];
	struct keyent *dedup; /* the key of the last DEDUP entry (DEDUPVER) */
	uint64_t ndedup;      /* DEDUP entries loaded */
	uint64_t ntasks;      /* as META counts them */
	uint64_t ntaken;
	uint64_t nkeys;
	uint64_t nplaced; /* of ntasks - ntaken, not yet in a TUBE count */
	struct qsnap_want *want; /* per tube, until END checks them */
	struct tube *hourly;     /* the tube of the last HOURLY entry */
	uint32_t hours_left;     /* HOUR entries it announced, not yet seen */
	uint32_t nhourly;        /* HOURLY entries loaded */
	uint64_t nmarks;         /* CANCEL entries loaded */
	uint64_t noutcomes;      /* OUTCOME entries loaded */
	struct dnode *dep;       /* the last DEP entry's node (deps_snap.c) */
	uint32_t dep_left;       /* its children still to come (DEPC) */
	bool done;
};

/* A namespace of tubes whose usage is counted (acct.c). */
struct qacct {
	char *name;
	size_t len;
	bool prefix;
	struct queue_usage use;
};

/* A set of namespaces (indexes into the queue's acct), shared by the
 * tubes they all cover. */
struct qaset {
	uint32_t n;
	uint32_t *v;
};

struct queue {
	struct queue_config cfg;
	uint64_t apply_lsn;     /* the record queue_apply applies, for qs_place
	                         * to note in tube->dep_lsn; 0 outside it and
	                         * for a take under a session lease */
	struct tslab_pool pool; /* the tasks' memory (tslab.h) */
	struct tidx ids;        /* task by id (tidx.h) */
	struct idx keys;        /* keyent by hash of (tube, key) */
	struct idx names;       /* tube by hash of the name */
	struct idx sessions;    /* first task of each session's list */
	struct tube **tubes;    /* in creation order */
	struct tube **tslots;   /* by slot (task.h's tslot); NULL: free */
	uint32_t *tslot_free;   /* free slots below tslot_len */
	uint32_t tslot_len;     /* slots ever handed out */
	uint32_t tslot_cap;     /* of both arrays */
	uint32_t tslot_nfree;
	struct tube *last_tube; /* the last found by name: puts come in runs */
	uint32_t ntubes;
	uint32_t tubes_cap;
	struct heap taken;  /* every taken task by (deadline, id) */
	struct heap wake;   /* tubes with delayed tasks, by next run_at */
	struct heap pauses; /* paused tubes, by paused_until */
	struct heap done;   /* done tasks, by (run_at = kept until, id) */
	struct heap flows;  /* tubes a take waits on for a token (flow.h) */
	struct groups_list grouped; /* tubes with fair groups (group.h) */
	uint32_t nflows;  /* tubes with limits: the flows heap has room
	                     for them all */
	struct heap gdue; /* groups a take waits on for a token
	                     (glimit.h) */
	uint32_t nglive;  /* groups with limits: gdue has room for all */
	struct keyent *dedup_head; /* dedup entries, oldest first */
	struct keyent *dedup_tail;
	uint64_t ndedup;
	uint64_t nkeys;    /* live tasks with a key */
	uint64_t nanykeys; /* dedup entries of every tube (tube_len 0) */
	uint64_t nheld;    /* held key entries (task.h) */
	uint64_t ntasks;
	uint64_t count[QUEUE_STATE_END_]; /* tasks by state */
	uint64_t next_id;
	uint64_t lsn;
	int64_t clock;
	struct queue_counters ctr;
	struct rates *rates; /* the whole queue's (rates.h); NULL: off */
	struct qsnap_load load;
	char why[64];             /* the text of the last ttr expiry decided */
	int64_t rates_swept;      /* unix ms of the last qs_rates_sweep */
	uint32_t rates_cursor;    /* the tube it looks at next */
	queue_ready_fn *on_ready; /* queue_on_ready; NULL */
	void *on_ready_arg;
	queue_lost_ready_fn *lost_ready; /* queue_on_lost_lease; NULL */
	void *lost_ready_arg;
	struct qacct *acct; /* namespaces counted (acct.c) */
	uint32_t nacct;
	struct qaset *asets; /* [0]: the empty set */
	uint32_t nasets;
	uint64_t hidden;        /* queue_hide's; 0: none */
	struct idx throttles;   /* open throttle windows (throttle.h) */
	int64_t throttle_swept; /* the clock of the last qs_throttle_sweep */
	uint32_t throttle_max; /* windows at once (QREC_THROTTLE_WINDOWS_MAX) */
	struct sched **scheds; /* schedules in name order (sched.h) */
	uint32_t nsched;
	uint32_t sched_cap;
	uint64_t sched_gen;  /* queue_sched_gen */
	struct qoutcomes oc; /* finished tasks' outcomes, cancel marks */
	struct deps deps;    /* who waits for whom (deps.h) */
	struct batches bt;   /* batches and their members (batch.h) */
	struct moves mv;     /* tubes moving in (move.h) */
};

/* The rate each counter feeds (queue_rate), or -1. */
enum {
	QS_RATE_put = QUEUE_RATE_PUT,
	QS_RATE_take = QUEUE_RATE_TAKE,
	QS_RATE_ack = QUEUE_RATE_ACK,
	QS_RATE_fail = QUEUE_RATE_FAIL,
	QS_RATE_bury = QUEUE_RATE_BURY,
	QS_RATE_ttr_expired = QUEUE_RATE_TTR,
	QS_RATE_release = -1,
	QS_RATE_kick = -1,
	QS_RATE_del = -1,
	QS_RATE_session_released = -1,
	QS_RATE_replace = -1,
};

/* Counts an event of `kind` (QS_RATE_*) of tube tb in the rates, when
 * they are on. */
void qs_rate(struct queue *q, struct tube *tb, int kind);

/* Frees the rings of tubes whose history left the window (they read as
 * none): RATES_SWEEP tubes a second, in turn, so a node's tubes are all
 * looked at within ntubes / RATES_SWEEP seconds. */
enum { RATES_SWEEP = 256 };
void qs_rates_sweep(struct queue *q, int64_t now);

/* Writes the depths of tube tb and of the queue in the rates after a task
 * entered (delta 1) or left (-1) `state`; rates on. */
void qs_depth(struct queue *q, struct tube *tb, int state, int delta);

/* Both the tube's and the queue's counter, and their rates. */
#define QS_COUNT(q, tb, field)                                                 \
	do {                                                                   \
		(tb)->ctr.field++;                                             \
		(q)->ctr.field++;                                              \
		if (QS_RATE_##field >= 0 && (q)->rates != NULL)                \
			qs_rate((q), (tb), QS_RATE_##field);                   \
	} while (0)

struct task *qs_task(const struct queue *q, uint64_t id);
/* qs_task for decide and the queries: NULL for the task queue_hide()
 * hides. */
struct task *qs_task_seen(const struct queue *q, uint64_t id);
struct tube *qs_tube(const struct queue *q, const char *name, size_t len);

/* queue_apply, and queue_apply_decoded with `checked`: rec's fields were
 * checked by qrec_valid already (apply.c). */
int qs_apply(struct queue *q, uint64_t lsn, int64_t time,
    const struct qrec *rec, bool checked);

/* How many ids ahead a put asks for the index slot of the put to come
 * (a replay applies one in 300 ns or so: one ahead is too late for a
 * miss to memory). */
enum { QS_PREFETCH_IDS = 4 };

/* Ready or delayed: a task a take may have (on a node with another
 * clock, a delayed one too). */
static inline bool
qs_queued(const struct task *t)
{
	return t->state == QUEUE_READY || t->state == QUEUE_DELAYED;
}

/* The tube of task t: a task names it by its slot (4 bytes, not a
 * pointer's 8). */
static inline struct tube *
qs_tube_of(const struct queue *q, const struct task *t)
{
	return q->tslots[t->tslot];
}
/* The entry of `key` in tube `tube` (tube_len 0: the reservation of
 * every tube an older snapshot left), or NULL. */
struct keyent *qs_key(const struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t len);
/* The entry that holds `key` for a put to `tube`: the tube's own, else
 * a reservation of every tube (qs_key with tube_len 0), else NULL. */
struct keyent *qs_key_for_put(const struct queue *q, const char *tube,
    size_t tube_len, const char *key, size_t len);

/* ---- Usage of namespaces (acct.c) ---- */
/* A new tube joins the namespaces that cover it. 0, SLUICE_ENOMEM. */
int qs_acct_tube_join(struct queue *q, struct tube *tb);
/* A tube that goes leaves its namespaces. */
void qs_acct_tube_leave(struct queue *q, const struct tube *tb);
/* Live tasks and payload bytes of tube tb change by (tasks, bytes). */
void qs_acct_use(
    struct queue *q, struct tube *tb, int64_t tasks, int64_t bytes);
/* Whether every namespace's counts are the sums of its tubes' (check). */
bool qs_acct_valid(const struct queue *q);
/* Frees the namespaces (queue_free). */
void qs_acct_fini(struct queue *q);

/* The tube with that (valid) name, created when missing (*created then
 * true). Returns 0, SLUICE_ENOMEM. */
int qs_tube_get(struct queue *q, const char *name, size_t len,
    struct tube **out, bool *created);
/* Undoes qs_tube_get() that created an empty tube. */
void qs_tube_undo(struct queue *q, struct tube *tb);
/* Removes a tube that has no task, wherever it is: the tubes after it
 * move down one index (their order, hence every heap's, stays), and its
 * counters leave the totals. */
void qs_tube_remove(struct queue *q, struct tube *tb);

/* ---- The settings in force for a tube (tubeconf.c) ----
 * Each gives the tube's own value when it sets one, else the server's
 * default. `tb` may be NULL (a tube not made yet: the defaults). Decide
 * reads them; apply never does (records carry the values). */
uint32_t queue_tube_ttr_ms(const struct queue *q, const struct tube *tb);
uint32_t queue_tube_max_attempts(const struct queue *q, const struct tube *tb);
/* A fail's delay after attempt n: base * 2^(n-1), at most cap. */
void queue_tube_backoff(const struct queue *q, const struct tube *tb,
    uint32_t *base_ms, uint32_t *cap_ms);
/* How long finished tasks are kept (0: not at all): the tube's own,
 * else the server's cfg.keep_done_ms. */
int64_t queue_tube_keep_done_ms(const struct queue *q, const struct tube *tb);
/* True: a lost lease (ttr, disconnect) makes the task ready at once;
 * false: it waits out the fail backoff. The tube's own, else the server's
 * --lost-lease-retry (cfg.lost_lease_retry). */
bool queue_tube_lost_lease_immediate(
    const struct queue *q, const struct tube *tb);
/* True when the tube has its own lost-lease setting. */
bool queue_tube_lost_lease_own(const struct tube *tb);
/* True and the tube's dead-letter tube (borrowed from the tube), when
 * buried tasks move there; false when they stay buried in place. */
bool queue_tube_dead_letter(const struct queue *q, const struct tube *tb,
    const char **name, size_t *len);

/* The state a waiting task with this run_at is in: READY or DELAYED. */
static inline int
qs_wait_state(const struct queue *q, int64_t run_at)
{
	return run_at <= q->clock ? QUEUE_READY : QUEUE_DELAYED;
}

/* Room to place one task in `state` in tube tb; for TAKEN, under a
 * session lease of `session` (detached: false). Returns 0, SLUICE_ENOMEM. */
int qs_reserve(struct queue *q, struct tube *tb, int state, bool session_lease,
    uint64_t session);

/* Puts the task in `state` (the lease in t->ext set first for TAKEN);
 * room reserved. */
void qs_place(struct queue *q, struct task *t, int state);

/* Takes the task out of the structures of its state. */
void qs_unplace(struct queue *q, struct task *t);

/* Room in the id index for one more task. */
int qs_reserve_id(struct queue *q);

/* A PUT's apply, which a SCHED_FIRE with a put shares (apply.c). */
int qs_apply_put(struct queue *q, int64_t time, const struct qrec_put *p);

/* Schedules (sched.c): the apply of SCHED_* records (SLUICE_ECORRUPT
 * for any other type), the snapshot's SCHED entries written and one
 * loaded, and their memory freed. */
int qs_sched_apply(struct queue *q, int64_t time, const struct qrec *rec);
int qs_sched_snapshot_write(
    const struct queue *q, queue_emit_fn *emit, void *arg);
int qs_sched_load(struct queue *q, struct rd *r);
void qs_sched_fini(struct queue *q);
void qs_sched_dump(const struct queue *q, struct buf *out);
/* The schedules' invariants (queue_check): NULL, or what does not hold. */
const char *qs_sched_check(const struct queue *q);
int qs_reserve_key(struct queue *q);

/* A new key entry of tube `tube` (not indexed). NULL when out of
 * memory. */
struct keyent *qs_keyent_new(const struct queue *q, const char *tube,
    size_t tube_len, const char *key, size_t len);

/* Indexes a new key entry; room reserved. */
void qs_key_insert(struct queue *q, struct keyent *ke);

/* A live task's key `ke` becomes `nke` (new, of another tube: the task
 * moved there), with its version; `ke` is freed. */
void qs_key_rehome(struct queue *q, struct keyent *ke, struct keyent *nke);

/* The task completed at `time`: its key (if any) becomes a dedup entry
 * until time + dedup_ms, or goes away when dedup_ms is 0. */
void qs_key_complete(
    struct queue *q, struct task *t, int64_t time, uint32_t dedup_ms);

/* Unlinks a dedup entry from the dedup list (it stays indexed). */
void qs_dedup_unlink(struct queue *q, struct keyent *ke);
/* Takes a dedup entry off the list for a new task with its key (a done
 * task it named loses the key). */
void qs_dedup_reuse(struct queue *q, struct keyent *ke);
/* Appends a dedup entry to the dedup list. */
void qs_dedup_append(struct queue *q, struct keyent *ke);

/* Removes a task completely: from its state, the id index, its key
 * (which becomes a dedup entry as qs_key_complete says; a done task's
 * entry is dropped when dedup_ms is 0, else kept), and frees it. */
void qs_task_remove(
    struct queue *q, struct task *t, int64_t time, uint32_t dedup_ms);

/* The task a key names: its live task, or the done task its dedup entry
 * still belongs to; NULL when neither. */
struct task *qs_key_task(const struct queue *q, const struct keyent *ke);

/* Purges a done task (its dedup entry, if any, stays until it expires). */
void qs_done_drop(struct queue *q, struct task *t);

/* `nt` takes the place of `t` (same id): in the id index and the key
 * entry. Neither is placed in a state. */
void qs_task_swap(struct queue *q, struct task *t, struct task *nt);

/* Sets or clears (0) a tube's pause. */
void qs_pause(struct queue *q, struct tube *tb, int64_t until);

/* The time a task's age is measured from: created_at, or for a done task
 * the time it finished. */
int64_t qs_age_time(const struct task *t);

/* The tasks of tube `tb` in any of `states` (QREC_STATE_BIT()s) whose time
 * `by` (enum qrec_age_by; 0: qs_age_time) is at or before `before`: how
 * many, and when `out` is not NULL (room for tube_tasks(tb)), the tasks
 * themselves. What DELETE_WHERE and DELETE_AGED
 * cancel, and what their decide counts. */
size_t qs_aged(const struct queue *q, const struct tube *tb, uint8_t states,
    uint8_t by, int64_t before, struct task **out);

/* How long a task whose lease was lost waits before it is ready again,
 * after `attempts` takes: the one place that reads the retry policy of
 * lost leases: the tube's own lost-lease setting, else the server's
 * (cfg.lost_lease_retry); a backoff is the tube's own base and cap, else
 * the server's. `ready`: the lease's holder asks for ready at once
 * (queue_on_lost_lease), which only the tube's own setting overrides. */
int64_t queue_lost_lease_delay(const struct queue *q, const struct tube *tb,
    uint32_t attempts, bool ready);

/* Applies a TUBE_SET: the tube's settings are replaced (tubeconf.c). */
int qs_apply_tube_set(struct queue *q, const struct qrec_tube_set *r);

/* Applies a put (apply.c); a PUT_X's task waits (deps_apply_put). */
int qs_apply_put(struct queue *q, int64_t time, const struct qrec_put *p);

/* Applies a PUTS: its items as PUTs (apply_puts.c). */
int qs_apply_puts(struct queue *q, int64_t time, const struct qrec_puts *p);

/* Fills a view of a task. */
void qs_view(
    const struct queue *q, const struct task *t, struct queue_task_view *out);

#endif
