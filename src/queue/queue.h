/* queue - the in-memory job queue: tubes, tasks in their four states,
 * leases, keys, pauses, and the counters behind stats.
 *
 * Pure: no I/O, no clock, no logging. Time always comes in, as `now` for
 * a decision or a query, or as a record's `time` for apply.
 *
 * Every state change is split in two:
 *   decide  queue_decide_<op>() checks a request against the state and
 *           fills a record (qrec.h), or returns a SLUICE_E* error. It does
 *           not change what a dump shows, beyond catching up with `now` as
 *           queue_tick() does. out->type == QREC_NONE means "nothing to
 *           log": the request succeeds without a record. The record (and
 *           any other out-parameter) is written only on success; it
 *           borrows strings and payloads from the request.
 *   apply   queue_apply() changes the state from a record. The live server,
 *           recovery and followers all call it, so the state is a pure
 *           function of the sequence of (lsn, time, record): a record
 *           inconsistent with the state (a damaged disk, a buggy peer) gets
 *           SLUICE_ECORRUPT and changes nothing.
 * The server runs decide -> encode -> append to the log (which assigns lsn
 * and time) -> apply -> reply once durable. A take of N tasks is N rounds
 * of decide + apply; so is a kick of N tasks.
 *
 * Task states and transitions (records in capitals):
 *   (none)  -> ready | delayed     PUT, PUT_V (delayed when run_at is
 *                                  later; PUT_V stores a version)
 *   (none)  -> waiting             PUT_X: until each parent is acked,
 *                                  then ready | delayed; a parent failing
 *                                  for good buries it, or deletes it, or
 *                                  counts as acked, by its rule (deps.h)
 *   delayed -> ready               time reaches run_at (no record)
 *   ready | delayed -> taken       TAKE (attempts + 1, lease = its lsn)
 *   taken   -> taken               TOUCH (deadline = time + ttr)
 *   taken   -> ready | delayed     RELEASE (client; restart in older
 *                                  logs); SETBACK (ttr expiry, session
 *                                  gone: backoff and why; a restart:
 *                                  ready at once, why); FAIL (backoff);
 *                                  ACK of a
 *                                  recurring task; ACK --to (other tube);
 *                                  UNTAKE (its take's reply went nowhere:
 *                                  attempts - 1, run_at kept)
 *   taken   -> buried              FAIL at max_attempts or fatal; BURY
 *                                  (client; restart at max_attempts in
 *                                  older logs); SETBACK (bury with a
 *                                  text; ttr / session / restart at
 *                                  max_attempts)
 *   taken   -> ready (other tube)  the same FAIL, BURY and SETBACK (outcome
 *                                  MOVED) in a tube with a dead-letter tube
 *   any     -> (gone)              TUBE_DELETE with force of its tube
 *   ready | delayed -> buried      BURY or SETBACK by an operator (force)
 *   buried | delayed -> ready      KICK
 *   taken   -> done                ACK when the tube keeps finished
 *                                  tasks (outcome DONE)
 *   done    -> (gone)              time reaches its kept_until, or the
 *                                  done limit of a later ACK (no record)
 *   any     -> (gone)              ACK, DELETE, FLUSH of its tube,
 *                                  DELETE_WHERE (by state and age)
 *   not taken -> ready | delayed   REPLACE, REPLACE_V (new content and
 *                                  its version, attempts 0)
 *   not taken -> same, or ready | delayed by run_at   UPDATE (in place)
 *   taken   -> taken               UPDATE of the priority
 *   taken   -> taken               REPLACE pending: when the lease ends in
 *                                  any way, the task takes the new content
 *                                  and waits again (outcome REPLACED)
 *   not taken -> (gone)            CANCEL (lease 0; outcome cancelled)
 *   taken   -> taken, cancelled    CANCEL with its lease; the lease's end,
 *                                  whatever it is, is then a DELETE
 *                                  (outcome cancelled; queue_outcome.h)
 * Ready order: priority, then run_at (when the task became due), then
 * id. Keys are per tube: a key is unique among the live tasks of its
 * tube (the same key in two tubes names two tasks, so tenants on
 * different tubes never meet through one), and it
 * stays reserved for a dedup window once their task is acked (completed);
 * a deleted (cancelled) task's key is free at once. A done task's key is
 * such a reserved key that still names its task (peek by key shows it);
 * when the window ends the done task loses its key, and a put with it
 * creates a new task.
 * A ready task's run_at is when it became ready, so the oldest ready task
 * is the one with the smallest run_at.
 *
 * The clock of the queue is the latest time it has seen (a record's time,
 * or a tick's now); delayed tasks, pauses and dedup entries are as of that
 * clock, and so is the purge of done tasks. Two queues given the same records,
 * and ticked to the same time, have the same dump. */
#ifndef SLUICE_QUEUE_QUEUE_H
#define SLUICE_QUEUE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/qrec.h"
#include "util/buf.h"

struct queue;

enum queue_state {
	QUEUE_ANY = 0, /* for list: every state */
	QUEUE_READY = 1,
	QUEUE_DELAYED = 2,
	QUEUE_TAKEN = 3,
	QUEUE_BURIED = 4,
	QUEUE_DONE = 5, /* acked, kept while its tube retains finished tasks */
	QUEUE_WAITING =
	    6, /* put with parents (--after): until they are acked */
	QUEUE_STATE_END_
};

enum {
	QUEUE_DEFAULT_PRI = 1024,
	QUEUE_DEFAULT_TTR_MS = 60 * 1000,
	QUEUE_DEFAULT_DEDUP_MS = 10 * 60 * 1000,
	QUEUE_DEFAULT_BACKOFF_BASE_MS = 1000,
	QUEUE_DEFAULT_BACKOFF_CAP_MS = 60 * 60 * 1000,
	QUEUE_DEFAULT_MAX_PAYLOAD = 1024 * 1024,
	QUEUE_DEFAULT_MAX_ERROR = 1024,
	QUEUE_DEFAULT_MAX_TTR_MS = 7 * 24 * 60 * 60 * 1000,
	QUEUE_DEFAULT_MAX_TAKE_TUBES = 64,
	QUEUE_DEFAULT_MAX_TUBES = 100000,
	QUEUE_DEFAULT_MAX_DONE = 1000000,
	QUEUE_RESULT_MAX = 65535, /* bytes of an ack's result text */
	QUEUE_AFTER_MAX = 1000    /* parents a put may name */
};

/* What becomes of a task whose lease was lost (ttr expiry, session gone):
 * the retry policy of fail (the default), or ready at once. */
enum queue_retry { QUEUE_RETRY_BACKOFF = 0, QUEUE_RETRY_IMMEDIATE = 1 };

/* Limits and defaults used by decide (apply never reads them: records
 * carry every value). queue_config_default() fills the defaults. */
struct queue_config {
	size_t max_payload; /* bytes, at most QREC_PAYLOAD_MAX */
	size_t max_error;   /* bytes of a fail's text, <= QREC_ERROR_MAX */
	uint32_t dedup_ms;  /* key reserved this long after an ack */
	uint32_t backoff_base_ms; /* a fail's delay after the first attempt */
	uint32_t backoff_cap_ms;  /* the delay doubles per attempt up to this */
	uint32_t default_ttr_ms;  /* a put's ttr when it gives none */
	uint32_t max_ttr_ms;
	uint32_t max_take_tubes;    /* tubes named by one take */
	uint32_t max_tubes;         /* 0: no limit */
	uint64_t max_tasks;         /* live tasks; 0: no limit */
	int64_t keep_done_ms;       /* retention of acked tasks; 0: deleted */
	uint64_t max_done;          /* done tasks kept at most; 0: no limit */
	uint64_t hash_seed;         /* seeds the hash of keys and tube names */
	uint8_t lost_lease_retry;   /* enum queue_retry */
	uint64_t max_outcome_bytes; /* memory the outcomes of finished tasks
	                               take at most; 0: none kept */
};

void queue_config_default(struct queue_config *cfg);

/* A new empty queue; `cfg` NULL means the defaults (copied). NULL when out
 * of memory. */
struct queue *queue_new(const struct queue_config *cfg);

/* Called when tube `name` may hold a task to take that it did not: a task
 * became ready in it, or its pause ended (the server's waiting takes on
 * that tube are tried again, and only those). Called while the queue
 * changes: it must not call back into the queue. NULL: none. */
typedef void queue_ready_fn(void *arg, const char *name, size_t len);
void queue_on_ready(struct queue *q, queue_ready_fn *fn, void *arg);

/* Asked when a session lease is lost (ttr, the session gone): true
 * makes the task ready at once unless its tube has its own lost-lease
 * setting, whatever the server's --lost-lease-retry (the leases of the
 * beanstalk face keep beanstalkd's rule this way). Never asked on a
 * restart (ready at once anyway) nor for detached leases. Must not call
 * back into the queue. NULL (the default): never. */
typedef bool queue_lost_ready_fn(void *arg, uint64_t session);
void queue_on_lost_lease(struct queue *q, queue_lost_ready_fn *fn, void *arg);

/* Frees the queue and everything in it. Accepts NULL. */
void queue_free(struct queue *q);

/* Empties the queue back to what queue_new() made, keeping its
 * configuration (recovery starts over this way when a snapshot turns out
 * damaged half-way through its load). Allocates nothing. */
void queue_clear(struct queue *q);

/* Sizes the id index for `tasks` more tasks at once (a replay about to
 * apply that many records: recover_ops.expect), so that it does not grow,
 * reading every task again, while they come. Best effort: without the
 * memory, the index grows as the tasks come. */
void queue_expect_tasks(struct queue *q, uint64_t tasks);

/* A string that borrows its bytes. */
struct queue_str {
	const char *p;
	size_t len;
};

/* ---- Requests and decisions ------------------------------------------ */

struct queue_put_req {
	const char *tube;
	size_t tube_len;
	const void *payload;
	size_t payload_len;
	uint32_t pri;
	int64_t delay_ms;      /* from now; used when run_at == 0 */
	int64_t run_at;        /* absolute unix ms; 0: now + delay_ms */
	uint32_t ttr_ms;       /* 0: the tube's, else the configured default */
	uint32_t max_attempts; /* 0: the tube's, else unlimited */
	int64_t period_ms;     /* 0: not recurring */
	const char *key;       /* key_len 0: no key */
	size_t key_len;
	bool replace; /* update the live task with this key (needs a key) */
	/* With replace: the client's version of this content (such as its
	 * source row's updated_at), >= 1; 0: none. The replace happens only
	 * when it is greater than the version stored with the live task
	 * (none stored: any is greater); the put stores it either way. */
	uint64_t if_newer;
	/* Deduplication modes, 1 ms..QREC_WINDOW_MAX_MS; 0: off (decide.h) */
	int64_t debounce_ms;
	int64_t throttle_ms;
	const char *group; /* fair group (group.h); len 0: none; bad: EGROUP */
	size_t group_len;
	/* Dependencies (deps.h): the tasks this one waits for, by id and by
	 * key in the put's tube; and what a parent failing for good does to
	 * it (enum queue_on_parent). */
	const uint64_t *after;
	size_t nafter;
	const struct queue_str *after_keys;
	size_t nafter_keys;
	uint8_t on_parent_failure;
	/* The batch it joins (batch.h); len 0: none. */
	const char *batch;
	size_t batch_len;
};

/* What a waiting task does when one of its parents fails for good
 * (buried, dead-lettered, deleted). */
enum queue_on_parent {
	QUEUE_PARENT_FAIL = 0,   /* buried: "task N failed: ERROR" */
	QUEUE_PARENT_IGNORE = 1, /* the parent counts as done */
	QUEUE_PARENT_CANCEL = 2, /* deleted; its own children follow theirs */
	QUEUE_PARENT_END_
};

/* Zero with pri = QUEUE_DEFAULT_PRI. */
void queue_put_req_init(struct queue_put_req *req);

struct queue_put_res {
	uint64_t id;
	bool created;   /* false: the key was live or in its dedup window */
	bool replaced;  /* the live task with this key gets the new content */
	bool stale;     /* if_newer was not newer: nothing changes */
	bool throttled; /* in the key's throttle window: ignored, id its */
};

/* A put. Errors: SLUICE_ETUBE, SLUICE_ETOOBIG (payload), SLUICE_EKEY (key
 * over 200 bytes), SLUICE_EINVAL (ttr 0 after defaults or over the limit,
 * a negative or too large delay, run_at or period, replace without a
 * key), SLUICE_ELIMIT (max_tasks, max_tubes, more than QUEUE_AFTER_MAX
 * parents).
 *
 * With parents (after, after_keys: deps.h), the record is a PUT_X and the
 * task waits (QUEUE_WAITING) until each parent is acked. A parent named
 * by an id or a key the queue does not know is SLUICE_ENOTFOUND; one named
 * twice, or parents with replace, if_newer, a period or a deduplication
 * mode, SLUICE_EINVAL; a rule out of range SLUICE_EINVAL.
 *
 * With a key that is live in the put's tube, or completed there less than
 * the dedup window ago, a put creates nothing: out->type = QREC_NONE and
 * res names the existing task with created = false. (A reservation loaded
 * from a snapshot older than keys per tube holds its key in every tube
 * until it expires.) With `replace`, a live task with the key in
 * the tube gets a REPLACE (res->replaced); with no live task the put
 * is an ordinary one that ignores the dedup window (the caller wants this
 * content queued). A past run_at is read as now.
 *
 * With if_newer (replace and a key needed, else SLUICE_EINVAL) the records
 * are PUT_V and REPLACE_V, which store the version with the task (with a
 * taken task, with its pending replacement). When the live task's version
 * (its pending replacement's, if it has one) is >= if_newer, nothing
 * changes: out->type = QREC_NONE, res names the task with created and
 * replaced false and stale true. So too with no live task, when the key's
 * task completed (ack) within the dedup window with a version >=
 * if_newer: the key's reservation keeps that version, and res names the
 * finished task. */
int queue_decide_put(struct queue *q, int64_t now,
    const struct queue_put_req *req, struct qrec *out,
    struct queue_put_res *res);

struct queue_take_req {
	const struct queue_str *tubes;
	size_t ntubes;
	uint64_t session;
	bool detached; /* the lease outlives the session; only ttr ends it */
	bool strict;   /* tubes in the order given, not the best across them */
};

/* The best ready task across the tubes (priority, run_at, id), skipping
 * paused tubes; with `strict`, the best of the first tube (in the order
 * given) that has a ready task and is not paused. Errors: SLUICE_ETUBE (a bad
 * name), SLUICE_EINVAL (no tube), SLUICE_ELIMIT (more than max_take_tubes);
 * and, when there is nothing to take now, SLUICE_EPAUSED if a paused tube has
 * ready tasks, else SLUICE_ETIMEDOUT. After applying the TAKE record,
 * queue_peek() gives the task with its lease. */
int queue_decide_take(struct queue *q, int64_t now,
    const struct queue_take_req *req, struct qrec *out);

/* The lease rule of ack, release, fail, touch and bury, checked in this
 * order: an unknown id -> SLUICE_ENOTFOUND; a task that is not taken ->
 * SLUICE_ESTATE, whatever the lease; a lease that is not the task's
 * current one -> SLUICE_ESTALE. Lease 0 is no wildcard: leases are LSNs
 * (>= 1), so it is always stale. `force` (an operator's override, which
 * the server logs) skips the lease check, never the state check. */

struct queue_ack_req {
	uint64_t id;
	uint64_t lease;
	const char *to_tube; /* to_tube_len 0: no move */
	size_t to_tube_len;
	bool force; /* the lease is not checked (an operator's override) */
	const char *result; /* kept with a done task; result_len 0: none */
	size_t result_len;
};

/* Done. The task is deleted, or kept as done until now + the retention of
 * its tube (queue_keep_done_ms) with its result text (its key reserved for the
 * dedup window); a recurring task waits for its next run (the first run_at + k
 * * period after now, attempts 0); with to_tube it moves there, ready, attempts
 * 0. A pending replacement wins over all three. Errors: the lease rule,
 * SLUICE_ETUBE, SLUICE_ELIMIT (result over QUEUE_RESULT_MAX). */
int queue_decide_ack(struct queue *q, int64_t now,
    const struct queue_ack_req *req, struct qrec *out);

struct queue_release_req {
	uint64_t id;
	uint64_t lease;
	int64_t delay_ms; /* from now; used when run_at == 0 */
	int64_t run_at;   /* absolute; 0: now + delay_ms */
	bool set_pri;
	uint32_t pri;
	bool force; /* the lease is not checked */
	bool front; /* ready at its place before the take (its run_at) */
};

/* Back to the tube (delayed when asked), attempts kept. Ready by default
 * as of now, behind the tasks already due; with `front`, at the run_at it
 * had before the take, so that it keeps its place among the tasks of its
 * priority (the ready order is priority, run_at, id). Errors: the lease
 * rule, SLUICE_EINVAL (delay or run_at out of range, or given with
 * front). */
int queue_decide_release(struct queue *q, int64_t now,
    const struct queue_release_req *req, struct qrec *out);

struct queue_fail_req {
	uint64_t id;
	uint64_t lease;
	const char *error;
	size_t error_len;
	bool set_delay; /* use delay_ms instead of the backoff */
	int64_t delay_ms;
	bool force; /* the lease is not checked */
	bool fatal; /* buried at once, whatever the attempts */
};

/* Failed: buried when fatal, or when max_attempts > 0 and attempts >=
 * max_attempts (or moved, ready, to its tube's dead-letter tube, attempts
 * kept: a fatal fail is a worker's bury like any other), else delayed by
 * delay_ms or its tube's backoff (base * 2^(attempts-1), capped).
 * The text becomes last_error. Errors: the lease rule, SLUICE_ELIMIT (text
 * over max_error), SLUICE_EINVAL (delay). */
int queue_decide_fail(struct queue *q, int64_t now,
    const struct queue_fail_req *req, struct qrec *out);

struct queue_touch_req {
	uint64_t id;
	uint64_t lease;
	bool force; /* the lease is not checked */
};

/* Extends the lease: deadline = time + ttr. Errors: the lease rule. */
int queue_decide_touch(struct queue *q, int64_t now,
    const struct queue_touch_req *req, struct qrec *out);

/* The last record a take of task `id` depends on: the last that placed
 * a task of its tube (put, release, kick ...) or changed the tube, takes
 * under a session lease aside; queue_lsn() when there is no such task.
 * The leader's answer to a take that needs no more waits for it. */
uint64_t queue_task_dep_lsn(const struct queue *q, uint64_t id);

/* Counts lease `lease` of task `id` from `now`, not from its record's
 * time, when that ends later: deadline = now + ttr. The leader calls it
 * as the answer that hands the lease out or touches it leaves, so that a
 * worker's ttr starts when the worker can know of it, whatever the log's
 * commit cost in between; the records (and so followers, recovery and
 * snapshots) keep time + ttr, which ends a little sooner. Needs no
 * record. Returns the deadline (unix ms), or 0 when the task no longer
 * holds that lease (nothing changes). */
int64_t queue_lease_restart(
    struct queue *q, uint64_t id, uint64_t lease, int64_t now);

struct queue_bury_req {
	uint64_t id;
	uint64_t lease;
	bool force; /* the lease is not checked; a waiting task may be parked */
	const char *error; /* error_len 0: last_error is left as it is */
	size_t error_len;
};

/* Parks a task; a text becomes its last_error (a SETBACK record, else a
 * BURY). A taken task follows the lease rule, and goes to its tube's
 * dead-letter tube (ready) when the tube has one. A ready or delayed
 * task is parked only with `force` (an operator's act: nobody holds a
 * lease on it), else SLUICE_ESTATE; a buried one gets SLUICE_ESTATE.
 * SLUICE_ELIMIT: a text over max_error. */
int queue_decide_bury(struct queue *q, int64_t now,
    const struct queue_bury_req *req, struct qrec *out);

struct queue_kick_req {
	uint64_t id;      /* != 0: this task */
	const char *tube; /* id == 0: the oldest buried task of this tube */
	size_t tube_len;
};

/* One task back to ready. By id: a buried or delayed task, else
 * SLUICE_ESTATE (SLUICE_ENOTFOUND for an unknown id). By tube: the task
 * buried longest; SLUICE_ENOTFOUND when none (kick N: call until then or
 * N times). SLUICE_ETUBE for a bad name. */
int queue_decide_kick(struct queue *q, int64_t now,
    const struct queue_kick_req *req, struct qrec *out);

struct queue_delete_req {
	uint64_t id;     /* != 0: by id */
	const char *key; /* id == 0: by key, in tube `tube` */
	size_t key_len;
	const char *tube;
	size_t tube_len;
};

/* Cancels a task in any state (a taken one loses its lease); its key is
 * free at once (no dedup window: nothing was done). Errors:
 * SLUICE_ENOTFOUND, SLUICE_EKEY (bad key), SLUICE_ETUBE (by key: bad
 * tube), SLUICE_EINVAL (neither). */
int queue_decide_delete(struct queue *q, int64_t now,
    const struct queue_delete_req *req, struct qrec *out);

struct queue_update_req {
	uint64_t id;
	bool set_pri;
	uint32_t pri;
	bool set_run_at;  /* the run time: run_at, or now + delay_ms */
	int64_t delay_ms; /* used when run_at == 0 */
	int64_t run_at;
	bool set_ttr;
	uint32_t ttr_ms;
	bool set_max_attempts;
	uint32_t max_attempts; /* 0: unlimited */
	bool set_payload;
	const void *payload;
	size_t payload_len;
};

/* Changes a ready, delayed or buried task in place: what the request
 * sets, nothing else (attempts, key, tube, id stay; updated_at is the
 * record's time, which moves a buried task to the back of the kick
 * order). A new run time makes a waiting task ready or delayed by it; a
 * past one is read as now. A taken task may change its priority only: it
 * takes effect at once (a taken task sits in no priority order; its
 * release, fail or replacement brings it back with it). Errors:
 * SLUICE_ENOTFOUND; SLUICE_ESTATE (a taken task and anything but the
 * priority, a buried task and a run time); SLUICE_EINVAL (nothing to
 * change, ttr 0 or over the limit, a delay or run_at out of range, a
 * payload missing); SLUICE_ETOOBIG (payload). */
int queue_decide_update(struct queue *q, int64_t now,
    const struct queue_update_req *req, struct qrec *out);

struct queue_flush_req {
	const char *tube;
	size_t tube_len;
};

/* Cancels every task of a tube (QREC_NONE when it has none); their keys
 * are free at once. Errors: SLUICE_ETUBE. */
int queue_decide_flush(struct queue *q, int64_t now,
    const struct queue_flush_req *req, struct qrec *out);

/* How long an acked task of this tube is kept as done; 0: not kept. The
 * one place the retention is read: the tube's own keep_done when it sets
 * one (tube set), else the server's default (cfg.keep_done_ms). */
int64_t queue_keep_done_ms(
    const struct queue *q, const char *tube, size_t tube_len);

struct queue_delete_where_req {
	const char *tube;
	size_t tube_len;
	int state;     /* READY, DELAYED, BURIED or DONE; 0 with `states` */
	int64_t older; /* ms: created_at (done: finished_at) <= now - older,
	                  or by `by` */
	/* Several states at once (QREC_STATE_BIT()s; 0: `state` alone), TAKEN
	 * among them only with force. */
	uint8_t states;
	uint8_t by; /* enum qrec_age_by: the age counts from the last change
	               or the creation; 0: as above (one state only) */
	bool force; /* taken tasks may be named: their leases end */
};

/* Cancels, in one record, every task of the tube in `state` that is at
 * least `older` ms old: by created_at, or for a done task by the time it
 * finished (a DELETE_WHERE). With `by`, or several `states`, every task in
 * any of them whose updated_at (QREC_BY_UPDATED: its last change) or
 * created_at (QREC_BY_CREATED) is at least `older` ms ago (a DELETE_AGED);
 * a taken task (force) loses its lease, and its holder's ack then finds
 * no such task. Their keys are free at once. *count says how many it
 * removes (QREC_NONE when none). Errors: SLUICE_ETUBE, SLUICE_EINVAL
 * (state, states, by, older out of range, taken without force). */
int queue_decide_delete_where(struct queue *q, int64_t now,
    const struct queue_delete_where_req *req, struct qrec *out,
    uint64_t *count);

struct queue_pause_req {
	const char *tube;
	size_t tube_len;
	int64_t until; /* <= now: unpause */
	bool create;   /* a tube the queue does not know is made (else
	                  SLUICE_ENOTFOUND) */
};

/* No takes from the tube before `until`. Errors: SLUICE_ETUBE,
 * SLUICE_EINVAL (until out of range), SLUICE_ENOTFOUND (a tube the queue
 * never had, without `create`), SLUICE_ELIMIT (max_tubes). */
int queue_decide_pause(struct queue *q, int64_t now,
    const struct queue_pause_req *req, struct qrec *out);

struct queue_tube_set_req {
	const char *tube;
	size_t tube_len;
	uint8_t set;   /* QREC_TS_* fields to take from `conf` */
	uint8_t unset; /* QREC_TS_* fields back to the server's defaults */
	struct qrec_tube_conf conf; /* the values of the fields in `set`
	                               (conf.set is not read) */
};

/* Changes the fields of a tube's settings named in set and unset, and no
 * other; the record carries the whole result (QREC_NONE when nothing
 * changes). A tube the queue does not have is made. Errors:
 * SLUICE_ETUBE (the tube, or the dead letter's name), SLUICE_EINVAL (a
 * field both set and unset, an unknown field, ttr 0 or over the limit, a
 * backoff cap below its base, keep_done out of range, a dead letter that
 * is the tube itself), SLUICE_ELIMIT (max_tubes). */
int queue_decide_tube_set(struct queue *q, int64_t now,
    const struct queue_tube_set_req *req, struct qrec *out);

struct queue_tube_delete_req {
	const char *tube;
	size_t tube_len;
	bool force; /* its tasks are cancelled too (keys free at once) */
};

/* Removes a tube and its settings (its counters leave the totals).
 * Errors: SLUICE_ETUBE, SLUICE_ENOTFOUND (a tube the queue does not
 * have), SLUICE_ENOTEMPTY (it has tasks, without force). */
int queue_decide_tube_delete(struct queue *q, int64_t now,
    const struct queue_tube_delete_req *req, struct qrec *out);

/* The server's timers and events. Each yields one record, or
 * SLUICE_ENOTFOUND when nothing is left to do; call until then. */

/* A lost lease follows the retry policy of its tube, else the server's
 * (queue_lost_lease_delay): a SETBACK that delays the task by the backoff
 * of its attempts (or makes it ready at once when the retry is immediate)
 * and records why in last_error, or buries it when max_attempts is
 * reached (moves it, ready, to the tube's dead-letter tube when it has
 * one); a task with a pending replacement takes it (RELEASE, REPLACED). */

/* The lease with the earliest deadline <= now, reason TTR, last_error
 * "ttr expired after 60s" (its ttr). The text borrows from the queue
 * until its next decide. */
int queue_decide_expired(struct queue *q, int64_t now, struct qrec *out);

/* A task held under a session lease by `session`, reason SESSION, with
 * `why` (borrowed: "worker disconnected (127.0.0.1:5432)") as its
 * last_error, cut to max_error. Detached leases are not touched. */
int queue_decide_session_gone(struct queue *q, int64_t now, uint64_t session,
    const char *why, size_t why_len, struct qrec *out);

/* After recovery or a promotion: every task under a session lease
 * (whatever the session: they ended with the previous process, or the
 * old leader), reason SESSION with `why` (borrowed: "server restarted
 * (...)") as its last_error: SETBACK ready at once, attempts kept (the
 * node, not the task, failed: no backoff), buried at max_attempts.
 * Detached leases stay until their ttr. */
int queue_decide_restart(struct queue *q, int64_t now, const char *why,
    size_t why_len, struct qrec *out);

/* Undoes the take that gave `lease` on task `id` (its reply went nowhere, or
 * its holder asks): UNTAKE (the task waits again where it was, attempts - 1).
 * Errors: the lease rule. */
int queue_decide_untake(struct queue *q, int64_t now, uint64_t id,
    uint64_t lease, struct qrec *out);

/* Changes the state from a record; `lsn` must be greater than every LSN
 * applied before (the lease of a TAKE is its LSN) and `time` in
 * [0, QREC_TIME_MAX]. Returns 0; SLUICE_ECORRUPT when the record does not
 * fit the state (unknown id, wrong state or lease, duplicate id or key,
 * unknown type, invalid fields, lsn not increasing); SLUICE_ENOMEM. On an
 * error nothing changed. `rec` is only read. */
int queue_apply(
    struct queue *q, uint64_t lsn, int64_t time, const struct qrec *rec);

/* queue_apply for a record qrec_decode() returned, which checked its
 * fields (qrec_valid) already: they are not checked again. A replay
 * applies every record of the log this way. */
int queue_apply_decoded(
    struct queue *q, uint64_t lsn, int64_t time, const struct qrec *rec);

/* Time-driven changes that need no record, up to `now`: delayed tasks
 * whose run_at has come become ready, pauses end, dedup entries expire,
 * done tasks past their kept_until are purged.
 * Decide and the queries do this themselves. Returns 0 or SLUICE_ENOMEM
 * (the clock then stops short of `now`; call again). */
int queue_tick(struct queue *q, int64_t now);

/* The earliest time something happens without a request: a delayed task
 * gets ready, a lease deadline, a pause ends, a done task is purged. INT64_MAX
 * when none. The server sleeps until then (or a request), ticks, and runs
 * queue_decide_expired(). */
int64_t queue_next_wake(const struct queue *q);

/* The LSN of the last record applied (or loaded with a snapshot). */
uint64_t queue_lsn(const struct queue *q);

/* The id the next put gets. */
uint64_t queue_next_id(const struct queue *q);

/* ---- Queries (read-only but for catching up with `now`) -------------- */

/* Every field of a task. Pointers borrow from the queue until its next
 * change (an apply, a tick, or a query given a later now). */
struct queue_task_view {
	uint64_t id;
	const char *tube;
	size_t tube_len;
	int state; /* enum queue_state */
	const void *payload;
	size_t payload_len;
	uint32_t pri;
	uint32_t ttr;
	uint32_t attempts;
	uint32_t max_attempts;
	int64_t run_at;
	int64_t period;
	int64_t created_at;
	int64_t updated_at;
	const char *key; /* NULL when none */
	size_t key_len;
	const char *group; /* NULL when none (the "" group) */
	size_t group_len;
	const char *last_error; /* NULL when none */
	size_t last_error_len;
	/* while taken, else 0 */
	uint64_t lease;
	uint64_t session;
	int64_t taken_at;
	int64_t deadline;
	bool detached;
	bool replace_pending; /* a REPLACE waits for the lease to end */
	/* done: when it finished (= updated_at), until when it is kept
	 * (= run_at), how long its last take lasted, its result */
	int64_t finished_at;
	int64_t kept_until;
	int64_t duration;
	const char *result; /* NULL when none */
	size_t result_len;
	uint64_t version; /* the client's version (PUT_V); 0: none */
	/* with replace_pending: the content the task takes when its lease
	 * ends (run_at: as asked; the past is read as then) */
	struct {
		const void *payload;
		size_t payload_len;
		uint32_t pri;
		uint32_t ttr;
		uint32_t max_attempts;
		int64_t run_at;
		int64_t period;
		uint64_t version; /* 0: none */
	} repl;
};

/* The dependencies of a task (deps.h): the tasks it waits for (or
 * waited for) and those that wait for it, by id, borrowed until the next
 * change; none when it has none (n 0). */
struct queue_task_deps {
	const uint64_t *parents;
	size_t nparents;
	uint32_t pending;  /* parents not acked yet */
	uint8_t on_parent; /* enum queue_on_parent */
	const uint64_t *children;
	size_t nchildren;
};

/* The outcome of a parent as its children see it. */
enum queue_dep_outcome {
	QUEUE_DEP_PENDING = 0, /* not finished */
	QUEUE_DEP_DONE = 1,    /* acked (or ignored) */
	QUEUE_DEP_FAILED = 2,  /* failed for good */
};

/* Fills `out` for task `id` (a live task, or one that finished while
 * tasks waited for it). SLUICE_ENOTFOUND when the queue knows no such
 * task and no dependency of it. */
int queue_task_deps(struct queue *q, uint64_t id, struct queue_task_deps *out);

/* What became of parent `id`: *outcome (enum queue_dep_outcome) and its
 * result when acked with one (borrowed until the next change; NULL:
 * none). A parent the queue forgot (finished, nothing waited for it)
 * reads as DONE without a result. */
void queue_dep_result(struct queue *q, uint64_t id, int *outcome,
    const char **result, size_t *len);

/* Until queue_hide(q, 0), decisions and queries see no task `id`: a
 * request about it is answered as about an id that does not exist (the
 * server's --auth, for a task of a tube the caller may not see). Records
 * are applied as always. */
void queue_hide(struct queue *q, uint64_t id);

/* SLUICE_ENOTFOUND when no task has that id. */
int queue_peek(
    struct queue *q, int64_t now, uint64_t id, struct queue_task_view *out);

/* The task with that key in that tube: a live one, or a done one while
 * its key is reserved. SLUICE_ENOTFOUND, SLUICE_EKEY, SLUICE_ETUBE. */
int queue_peek_key(struct queue *q, int64_t now, const char *tube,
    size_t tube_len, const char *key, size_t key_len,
    struct queue_task_view *out);

/* The next task of a tube in `state`: READY the next taken (priority,
 * run_at, id), DELAYED the next to get ready, BURIED the one buried longest,
 * DONE the one finished longest ago.
 * SLUICE_ENOTFOUND when none, SLUICE_ETUBE, SLUICE_EINVAL (other state). */
int queue_peek_next(struct queue *q, int64_t now, const char *tube,
    size_t tube_len, int state, struct queue_task_view *out);

enum queue_order {
	QUEUE_BY_ATTEMPTS = 0, /* most attempts first */
	QUEUE_BY_AGE = 1,      /* oldest (created_at) first */
	QUEUE_BY_RUN_AT = 2,   /* earliest run_at first */
	QUEUE_BY_ID = 3,       /* lowest id first */
	QUEUE_ORDER_END_
};

struct queue_list_req {
	const char *tube;
	size_t tube_len;
	int state; /* enum queue_state; QUEUE_ANY for all */
	int order; /* enum queue_order; ties by id */
	size_t limit;
	uint64_t after; /* only tasks with a greater id; 0: every one */
};

/* Up to req->limit tasks of a tube into out[], in order; *n says how many
 * (0 for a tube that does not exist). Errors: SLUICE_ETUBE, SLUICE_EINVAL,
 * SLUICE_ENOMEM. O(tasks of the tube * log limit). */
int queue_list(struct queue *q, int64_t now, const struct queue_list_req *req,
    struct queue_task_view *out, size_t *n);

enum { QUEUE_ERROR_IDS = 3 }; /* example ids of an error group */

struct queue_error_group {
	const char *text; /* borrows, as a view does */
	size_t text_len;
	uint64_t count;
	uint64_t ids[QUEUE_ERROR_IDS]; /* its tasks of the lowest ids */
	size_t nids;                   /* min(count, QUEUE_ERROR_IDS) */
};

/* The live tasks of a tube in `state` (READY, DELAYED, TAKEN, BURIED, or
 * QUEUE_ANY: every live state) that have a last_error, grouped by its
 * text, most frequent first (ties by text); at most `max` groups into
 * out[], *n says how many. A task keeps its last error when it is retried
 * and taken again, so only BURIED counts the failures still waiting for
 * a person. Errors: SLUICE_ETUBE, SLUICE_EINVAL (state), SLUICE_ENOMEM. */
int queue_errors(struct queue *q, int64_t now, const char *tube,
    size_t tube_len, int state, struct queue_error_group *out, size_t max,
    size_t *n);

/* Cumulative event counts. */
struct queue_counters {
	uint64_t put; /* tasks created */
	uint64_t take;
	uint64_t ack;
	uint64_t release; /* by the client */
	uint64_t fail;
	uint64_t bury; /* tasks that became buried, by any way */
	uint64_t kick;
	uint64_t del;              /* deleted, flushed included */
	uint64_t ttr_expired;      /* leases ended by their deadline */
	uint64_t session_released; /* leases ended by session gone / restart */
	uint64_t replace;
};

struct queue_tube_stats {
	const char *name; /* borrows; lives as long as the queue */
	size_t name_len;
	uint32_t index; /* in creation order (queue_tube_stats_at) */
	uint64_t ready;
	uint64_t delayed;
	uint64_t taken;
	uint64_t buried;
	uint64_t done;
	uint64_t waiting;         /* for their parents (deps.h) */
	int64_t paused_until;     /* 0: not paused */
	int64_t oldest_ready_age; /* ms since the oldest ready task got ready;
	                             0 when none */
	uint8_t settings;         /* QREC_TS_* the tube sets itself */
	uint32_t groups, groups_ready; /* fair groups alive; in the rotation */
	struct queue_counters ctr;
};

struct queue_stats {
	uint64_t ready;
	uint64_t delayed;
	uint64_t taken;
	uint64_t buried;
	uint64_t done;
	uint64_t waiting;
	uint64_t tasks; /* done ones included */
	uint64_t tubes;
	uint64_t keys;  /* live tasks with a key */
	uint64_t dedup; /* completed keys still reserved */
	uint64_t next_id;
	uint64_t lsn;
	int64_t clock;
	struct queue_counters ctr;
};

/* Totals. O(1) (after the catch-up with now). Returns 0, SLUICE_EINVAL
 * (now out of range) or SLUICE_ENOMEM (from the catch-up). */
int queue_stats(struct queue *q, int64_t now, struct queue_stats *out);

/* Tubes are numbered 0..queue_tube_count()-1 in creation order; a
 * TUBE_DELETE moves the tubes after it down one. */
uint32_t queue_tube_count(const struct queue *q);

/* Whether `session` holds a task under a session lease (a connection's
 * idle timeout spares it). */
bool queue_session_holds(const struct queue *q, uint64_t session);

/* O(1). SLUICE_ENOTFOUND past the last tube. */
int queue_tube_stats_at(
    struct queue *q, int64_t now, uint32_t i, struct queue_tube_stats *out);

/* O(1). SLUICE_ENOTFOUND when there is no such tube, SLUICE_ETUBE. */
int queue_tube_stats(struct queue *q, int64_t now, const char *name,
    size_t name_len, struct queue_tube_stats *out);

/* The settings in force for a tube: out->set says which the tube sets
 * itself; every value is the one in force (the server's default where
 * the tube sets none); dead_letter is empty unless set (borrowed until
 * the next change). A tube the queue does not have has the defaults.
 * SLUICE_ETUBE. */
int queue_tube_settings(
    struct queue *q, const char *name, size_t len, struct qrec_tube_conf *out);

/* ---- Hourly statistics and rates ------------------------------------ */

/* What the queue counts per hour and per second for the dashboard and
 * `stats`: queue_stats.h, part of this header. */
#include "queue/queue_stats.h"

/* ---- Outcomes of finished tasks, cancelling (outcome.c) ------------ */
#include "queue/queue_outcome.h"
#include "queue/queue_move.h"

/* ---- Dumps ------------------------------------------------------------ */

/* Appends a canonical text form of the whole state as of the queue's
 * clock: every task with every field, tubes with pauses and counters,
 * dedup entries, next id, lsn, clock. Sorted, so two queues with the same
 * state give the same bytes. Returns 0 or SLUICE_ENOMEM. */
int queue_dump(const struct queue *q, struct buf *out);

/* ---- Usage per namespace of tubes (acct.c) ----------------------------
 * For the quotas of the server's tokens: a namespace is a tube name, or a
 * prefix of names (a token's tube pattern). */
struct queue_ns {
	const char *name;
	size_t len;
	bool prefix; /* every tube whose name starts with name[0..len) */
};

struct queue_usage {
	uint64_t tubes; /* that exist */
	uint64_t tasks; /* live: ready, delayed, taken, buried (not done) */
	uint64_t bytes; /* the payloads of those tasks */
};

/* Counts, from now on, what each of ns[0..n) holds (replacing the
 * namespaces set before; the counts are rebuilt from the state, O(tubes)).
 * Returns 0, or SLUICE_ENOMEM (then nothing is counted). */
int queue_acct_set(struct queue *q, const struct queue_ns *ns, size_t n);

/* What namespace i (of the last queue_acct_set) holds; zeros when none. */
void queue_acct_usage(const struct queue *q, size_t i, struct queue_usage *out);

/* What one tube holds (tubes 1; all zero when it does not exist). */
void queue_tube_usage(const struct queue *q, const char *tube, size_t len,
    struct queue_usage *out);

/* Checks every internal invariant (indexes, heaps, counts). O(n); for
 * tests and fuzzing. Returns 0, or SLUICE_ECORRUPT with the failed
 * condition in *why (a static string; why may be NULL). */
int queue_check(const struct queue *q, const char **why);

/* ---- Snapshots -------------------------------------------------------- */

/* Snapshot entry types, in the order they are written:
 *   META   u32 version, u64 lsn, u64 next_id, i64 clock
 *   TUBE   str16 name, i64 paused_until, 11 x u64 counters   (each tube)
 *   TUBE_SET  the settings of the tube just before, when it has any
 *   TUBE_LIMIT  the flow limits of the tube just before, when it has any
 *   TASK   the task's fields, its payload last                (each task)
 *   REPL   the pending replacement of the task just before
 *   TASKVER u64 id, u64 version, u64 pending version  (a task with one)
 *   KEYHELD u64 id, u64 version, str16 key, str16 tube (a done task
 *           whose key's reservation ended, kept for its version)
 *   DEDUP  str16 key, u64 id, i64 expires                 (each dedup key)
 *   DEDUPVER u64 version     (after a DEDUP whose task had a version)
 *   HOURLY str16 tube, its totals                (each tube with statistics)
 *   HOUR   one hour of the tube of the HOURLY before   (each hour it holds)
 *   THROTTLE str16 tube, str16 key, u64 id, i64 until
 *                    (each open throttle window of a key: throttle.h)
 *   DEP    the dependencies of a task, or what a finished parent left
 *          (deps.c has the layout)                  (each, by id)
 *   CANCEL u64 id, u64 lease            (each taken task cancelled)
 *   OUTCOME u64 id, u8 kind, i64 time, i64 expires, str16 tube,
 *           str16 text   (each finished task's outcome, oldest first)
 *   END    u32 tubes, u64 tasks, u64 dedup entries
 * The layouts are in qsnap.c. */
enum queue_snap_type {
	QSNAP_META = 1,
	QSNAP_TUBE = 2,
	QSNAP_TASK = 3,
	QSNAP_REPL = 4,
	QSNAP_DEDUP = 5,
	QSNAP_END = 6,
	QSNAP_TASKVER = 7,
	QSNAP_DEDUPVER = 8,
	QSNAP_KEYHELD = 9,
	QSNAP_GROUP = 10, /* u64 id, str16 group: of the next TASK (that id) */
	QSNAP_TUBE_SET = 18, /* numbered as the record of the same content */
	QSNAP_HOURLY = 19,
	QSNAP_HOUR = 20,
	QSNAP_TUBE_LIMIT = 23, /* numbered as the record of the same content */
	QSNAP_GROUP_SET = 25,  /* a tube's group settings (glimit.c) */
	QSNAP_THROTTLE = 30,   /* numbered as the record that opens a window */
	QSNAP_DEP = 40,        /* a task's dependencies (deps.h), before END */
	QSNAP_DEPC = 41,       /* more children of the DEP entry before */
	QSNAP_CANCEL = 46,     /* u64 id, u64 lease: a taken task cancelled */
	QSNAP_OUTCOME = 47,    /* a finished task's outcome (outcome.h) */
	QSNAP_BATCH = 42,      /* a batch (batch.h), after the tasks */
	QSNAP_BMEMBER = 43,    /* a task of a live batch, after them */
	QSNAP_SCHED = 50,      /* a schedule (sched.c) */
	QSNAP_MOVEIN = 64,     /* a task copied in by a move (move.h) */
	QSNAP_MOVEOUT = 60,    /* a tube moving out (move.h) */
};

/* The name of a snapshot entry type, as sluice-log prints it ("unknown"
 * for a number the queue does not know). */
const char *queue_snap_entry_name(uint16_t type);

/* Receives one entry: its bytes are a[0..alen) then b[0..blen). Returns 0
 * to go on; anything else stops the snapshot and is returned. */
typedef int queue_emit_fn(void *arg, uint16_t type, const void *a, size_t alen,
    const void *b, size_t blen);

/* Emits the whole state. Allocates nothing and changes nothing, so it can
 * run in a forked child. Returns 0 or what `emit` returned. */
int queue_snapshot_write(const struct queue *q, queue_emit_fn *emit, void *arg);

/* Loads one entry into a queue made by queue_new() that nothing was
 * applied to (nor ticked); entries must come in the order written. Every field
 * is checked: SLUICE_ECORRUPT on anything out of order, out of range or
 * inconsistent; SLUICE_ENOMEM. After an error, delete the queue. */
int queue_snapshot_load(
    struct queue *q, uint16_t type, const void *data, size_t len);

/* True once the END entry has been loaded. */
bool queue_snapshot_done(const struct queue *q);

/* The rule a loaded snapshot must meet for a node to start from it, the
 * one both sluiced (recovery) and `sluice-log verify` apply: its END entry
 * was loaded; the file's header names the LSN its name does
 * (`name_lsn`); and the queue's own LSN (the last queue record the state
 * holds) is at or below the snapshot's `snap_lsn` - below it when log
 * records came last (an EPOCH record right before the snapshot: the
 * queue never sees those). Returns NULL when it may start from it, else a
 * static text saying why not. */
const char *queue_snapshot_unusable(
    const struct queue *q, uint64_t name_lsn, uint64_t snap_lsn);

const char *queue_state_name(int state);

#endif
