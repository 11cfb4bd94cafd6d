/* qrec - queue records: the decoded form of every change to the queue's
 * state, and the byte encoding of their bodies in the log.
 *
 * A record is explicit about its outcome: decide (queue.h) computes what
 * happens (the backoff of a fail, whether an expired lease buries its task,
 * the next run of a recurring task, how long a key stays reserved) and
 * apply only follows it, so the log reads as what happened and replay never
 * depends on the configuration of the node that replays.
 *
 * Types 1..99 belong to the queue; the log layer uses 100 and up (epochs
 * and the like) and never hands those to queue_apply(). The log frames a
 * body with its type, LSN, epoch, time and checksum; this file knows only
 * the body.
 *
 * Body layout (every integer little-endian, no padding, nothing after the
 * last field; str16 = u16 length + bytes, blob = u32 length + bytes):
 *
 *   PUT      u64 id, str16 tube, u32 pri, i64 run_at, u32 ttr,
 *            u32 max_attempts, i64 period, str16 key (empty: none),
 *            blob payload
 *   TAKE     u64 id, u64 session, u8 detached (the lease is the LSN)
 *   TAKE_LEASE u64 id, u64 session, u8 detached, u64 lease
 *   ACK      u64 id, u64 lease, u8 outcome, then by outcome:
 *            DELETED u32 dedup_ms | WAIT i64 run_at | MOVED str16 tube |
 *            REPLACED nothing | DONE u32 dedup_ms, i64 keep_ms,
 *            u64 max_done, str16 result
 *   RELEASE  u64 id, u64 lease, u8 reason, u8 outcome (WAIT | REPLACED),
 *            then for WAIT: u32 pri, i64 run_at
 *   FAIL     u64 id, u64 lease, u8 outcome (WAIT | BURIED | REPLACED),
 *            str16 error, then for WAIT: i64 run_at
 *   BURY     u64 id, u64 lease (0: the task was not taken), u8 reason,
 *            u8 outcome (BURIED | REPLACED)
 *   TOUCH    u64 id, u64 lease
 *   KICK     u64 id
 *   DELETE   u64 id, u32 dedup_ms
 *   FLUSH    str16 tube, u32 dedup_ms
 *   REPLACE  u64 id, u8 pending, u32 pri, i64 run_at, u32 ttr,
 *            u32 max_attempts, i64 period, blob payload
 *   PAUSE    str16 tube, i64 until
 *   UNTAKE   u64 id, u64 lease, u8 outcome (WAIT | REPLACED)
 *   SETBACK  u64 id, u64 lease (0: the task was not taken), u8 reason
 *            (CLIENT | TTR | SESSION), u8 outcome (WAIT | BURIED |
 *            REPLACED), str16 error, then for WAIT: u32 pri, i64 run_at
 *   UPDATE   u64 id, u32 pri, i64 run_at, u32 ttr, u32 max_attempts,
 *            u8 has_payload, then with has_payload: blob payload
 *   DELETE_WHERE str16 tube, u8 state (1 ready, 2 delayed, 4 buried,
 *            5 done), i64 before: every task of the tube in that state
 *            created (done: finished) at or before `before` is cancelled
 *   PUT_V    a PUT's body, then u64 version
 *   PUT_T    a PUT's body, then i64 throttle_until: the put opens the
 *            throttle window of its key (it has one) until then; then
 *            str16 group, the task's fair group (empty: none)
 *   REPLACE_V  a REPLACE's body, then u64 version
 *   TUBE_SET str16 tube, then the tube's settings from now on (conf):
 *            u8 set (QREC_TS_* bits), u32 ttr, u32 max_attempts,
 *            u32 backoff_base, u32 backoff_cap, i64 keep_done,
 *            u8 lost_lease_immediate, str16 dead_letter; a field whose
 *            bit is clear is 0 (empty) and inherits the server's default
 *   TUBE_DELETE str16 tube, u8 force (its tasks are cancelled first)
 *   DELETE_AGED str16 tube, u8 states (a bit 1 << state for each state
 *            named: 1 ready, 2 delayed, 3 taken, 4 buried, 5 done),
 *            u8 by (1 updated_at, 2 created_at), i64 before: every task
 *            of the tube in one of those states whose `by` time is at or
 *            before `before` is cancelled (a taken one loses its lease)
 *   CANCEL   u64 id, u64 lease: the task is cancelled; lease 0: it was
 *            not taken and goes at once; else the lease it is taken
 *            under, which it keeps, marked, until the lease ends
 *   PUT_G    a PUT's body, then u64 version (0: none; else as PUT_V's),
 *            str16 group (1-200 bytes of the tube-name alphabet)
 *   TUBE_LIMIT str16 tube, then the tube's flow limits from now on
 *            (limits): u8 set (QREC_LIM_* bits), u32 rate, u32 per_ms,
 *            u32 burst, u32 concurrency; a limit whose bit is clear has
 *            its fields 0 and does not hold (set 0: no limit at all)
 *   GROUP_SET str16 tube, str16 group (empty: the limits of every named
 *            group of the tube; else that group's own settings), then
 *            limits (as TUBE_LIMIT's), u8 paused (0 or 1; 0 for the
 *            empty group): the whole settings of that name from now on
 *            (limits set 0 and not paused: none, the name's settings go)
 *   SCHED_SET str16 name, str16 tube, str16 cron, str16 tz, u8 catch_up
 *            (0 none, 1 one, 2 all), u8 paused, u32 pri, u32 ttr,
 *            u32 max_attempts, i64 from, blob payload: a schedule is
 *            created or replaced; its slots after `from` are to fire
 *   SCHED_DELETE str16 name
 *   SCHED_PAUSE str16 name, u8 paused, i64 from: paused (1), or resumed
 *            (0) with its slots after `from` to fire
 *   SCHED_FIRE str16 name, i64 slot, u8 has_put, then with has_put a
 *            PUT's body: the schedule's slots up to `slot` are decided;
 *            with has_put the slot's task is put (its key names the
 *            schedule and the slot), without it they were skipped
 *            (catch-up, or the slot's key was taken already)
 *
 *   PUT_X    a PUT's body, then u64 version (0: none; else as PUT_V's),
 *            str16 group (empty: none), then tagged fields, each u8 tag,
 *            u32 length, then that many bytes, tags increasing, each at
 *            most once, none unknown: tag 1 AFTER (required): u8
 *            on_parent_failure (0 fail, 1 ignore, 2 cancel), then
 *            1..1000 u64 parent ids, increasing; tag 2 BATCH: the
 *            batch's name (1-200 bytes of the tube alphabet). At least
 *            one of them. Later fields of a put come as new tags (so a
 *            PUT_X cut at the end of a field is a valid body with fewer
 *            fields: the log's checksums catch a torn record).
 *
 *   BATCH_SET str16 name, str16 success_tube (empty: no on_success),
 *            blob success_payload, str16 complete_tube (empty: no
 *            on_complete), blob complete_payload: a batch's callbacks
 *            from now on, the batch made (open, empty) if it has none
 *   BATCH_CLOSE str16 name: the batch takes no more tasks; it ends when
 *            it has no live task (at once when it has none)
 *   BATCH_FIRE str16 name, u8 which (0x01 on_success, 0x02
 *            on_complete), then a PUT's body for each bit set, in that
 *            order: an ended batch's callbacks are put, once
 *
 *   PUTS     str16 tube, u64 first_id, i64 run_at, u32 n (2..
 *            QREC_PUTS_MAX), then n items, each of varints (LEB128,
 *            shortest form): gap (the first 0, then >= 1: its id is the
 *            previous one's + gap), pri, zigzag(run_at - the record's
 *            run_at; the first 0), ttr, max_attempts, period, key length
 *            then the key, payload length then the payload; nothing after
 *            the n-th: the plain PUTs (no version, group, window, parent
 *            or batch) of one tube a batch put made, in order, applied as
 *            that many PUT records at this record's LSN (qrec_puts.c)
 *
 *   ACK_R    an ACK's body with outcome DELETED or MOVED, then str16
 *            result (1..QREC_RESULT_MAX bytes): the ack of a task that
 *            goes, with a result its outcome keeps (outcome.h: an ack
 *            with a result in a tube that keeps no finished tasks) and
 *            its children (deps.h) still to be taken keep
 *
 * PUT_V and REPLACE_V are PUT and REPLACE with the client's version of
 * the content (a put with if_newer), >= 1; PUT and REPLACE carry none (0
 * in struct qrec_put / qrec_replace). Types, not an optional trailing
 * field: a body is exactly its layout, so a binary that does not know
 * versions refuses a log that holds one (an unknown type) rather than
 * reading it as if the version were not there; and a put without a
 * version logs the same bytes as before. A PUT_V has a key.
 *
 * TUBE_LIMIT is a type of its own beside TUBE_SET, not more fields at its
 * end, by the same rule: a log that never limited a tube is read by every
 * binary, one that did is refused by a binary that would not hold the
 * limits. Its limits are valid when: rate (bit 0x01) has rate >= 1,
 * per_ms one of 1000, 60000, 3600000 (/s, /m, /h), at most QREC_RATE_MAX
 * a second, and 1 <= burst <= QREC_BURST_MAX with burst >= the tokens one
 * millisecond brings (rate / per_ms); concurrency (bit 0x02) is 1 to
 * QREC_CONCURRENCY_MAX. The same struct will carry a group's limits.
 *
 * PUT_G is a put that names a fair group (group.h), with or without a
 * version: a type of its own by the same rule, so a log without groups is
 * read by every binary and one with them is refused by a binary that
 * would hand their tasks out without the rotation.
 *
 * FAIL, BURY and SETBACK may also have the outcome MOVED (the tube's
 * dead-letter setting): FAIL and SETBACK then end with str16 tube after
 * their error, BURY with str16 tube after its outcome.
 *
 * A body is valid when it has exactly this layout and its values are in
 * range: ids and ttr >= 1 (a PUT's id < 2^64 - 1, so the next id fits);
 * leases >= 1 except the BURY or SETBACK of a task that was not taken;
 * times, periods in [0, QREC_TIME_MAX]; tube names 1-200 bytes of
 * [A-Za-z0-9_.:/-]; keys at most 200 bytes; error texts at most
 * QREC_ERROR_MAX; payloads at most QREC_PAYLOAD_MAX; booleans 0 or 1; the
 * reason and outcome allowed for the type; a DONE's keep_ms >= 1, its
 * result at most QREC_RESULT_MAX. qrec_decode() accepts exactly
 * the valid bodies and qrec_encode() writes exactly those, so
 * decode(encode(r)) == r and encode(decode(b)) == b.
 *
 * Changing a layout: add a new type number (a record already in a log is
 * never reinterpreted); retire the old type only when no supported log can
 * hold it. */
#ifndef SLUICE_QUEUE_QREC_H
#define SLUICE_QUEUE_QREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

enum qrec_type {
	QREC_NONE = 0, /* no record: the request changes nothing */
	QREC_PUT = 1,
	QREC_TAKE = 2,
	QREC_ACK = 3,
	QREC_RELEASE = 4,
	QREC_FAIL = 5,
	QREC_TOUCH = 6,
	QREC_BURY = 7,
	QREC_KICK = 8,
	QREC_DELETE = 9,
	QREC_FLUSH = 10,
	QREC_REPLACE = 11,
	QREC_PAUSE = 12,
	QREC_TAKE_LEASE = 13,   /* TAKE with its lease token (epoch-proof) */
	QREC_UNTAKE = 14,       /* a take whose reply was not delivered */
	QREC_SETBACK = 15,      /* RELEASE or BURY with an error text */
	QREC_UPDATE = 16,       /* a waiting task changed in place */
	QREC_DELETE_WHERE = 17, /* a tube's tasks by state and age */
	QREC_TUBE_SET = 18,     /* a tube's settings change */
	QREC_TUBE_DELETE = 19,  /* a tube goes away (with its tasks: force) */
	QREC_PUT_V = 20,        /* PUT with the client's version */
	QREC_REPLACE_V = 21,    /* REPLACE with the client's version */
	QREC_DELETE_AGED = 22,  /* a tube's tasks by states and an age */
	QREC_TUBE_LIMIT = 23,   /* a tube's flow limits change */
	QREC_PUT_G = 24,        /* PUT into a fair group */
	QREC_GROUP_SET = 25,    /* a tube's group limits or a group's own */
	QREC_PUT_T = 30,        /* PUT that opens its key's throttle window */
	QREC_PUT_X = 40,        /* PUT with tagged fields: parents (deps.h) */
	QREC_ACK_R = 41,        /* ACK with the task's result, kept for its
	                           children and in its outcome */
	QREC_BATCH_SET = 42,    /* a batch's callbacks (batch.h) */
	QREC_BATCH_CLOSE = 43,  /* a batch takes no more tasks */
	QREC_BATCH_FIRE = 44,   /* an ended batch's callbacks are put */
	QREC_CANCEL = 46,       /* a task is cancelled (outcome.h) */
	QREC_SCHED_SET = 50,    /* a schedule is created or replaced */
	QREC_SCHED_DELETE = 51, /* a schedule goes away */
	QREC_SCHED_PAUSE = 52,  /* a schedule is paused or resumed */
	QREC_SCHED_FIRE = 53,   /* a schedule's slot is decided */
	QREC_MOVE_HOLD = 60,    /* a task is held for a move (move.h) */
	QREC_MOVE_DROP = 61,    /* a held task, copied, leaves its source */
	QREC_MOVE_IN = 62,      /* a task is copied in from another cluster */
	QREC_MOVE_END = 63,     /* a tube's move is over, here */
	QREC_MOVE_MARK = 64,    /* a tube's tasks start moving out */
	QREC_MOVE_KEY = 65,     /* a key's reservation is copied in */
	QREC_MOVE_PEND = 66,    /* keyed puts of a tube moving in wait, or
	                           go on: its keys are pending, or here */
	QREC_MOVE_PLACE = 67,   /* a live key of the source is held here */
	QREC_MOVE_KEEP = 68,    /* a source's drain waits for its mover */
	QREC_PUTS = 69,         /* a batch put's plain PUTs in one record */
	QREC_TYPE_END_,         /* one past the last queue type */
	QREC_TYPE_MAX = 99      /* types above belong to the log layer */
};

/* Why a lease ended (RELEASE, BURY). ACK and FAIL are always CLIENT. */
enum qrec_reason {
	QREC_BY_CLIENT = 0,  /* the holder (or an operator) asked */
	QREC_BY_TTR = 1,     /* the lease passed its deadline */
	QREC_BY_SESSION = 2, /* the session holding the lease went away */
	QREC_BY_RESTART = 3, /* the node restarted: every session is gone */
	QREC_REASON_END_
};

/* What became of the task (ACK, RELEASE, FAIL, BURY). */
enum qrec_outcome {
	QREC_DELETED = 0,  /* ACK: gone; its key stays reserved dedup_ms */
	QREC_WAIT = 1,     /* back in the tube, ready from run_at on */
	QREC_BURIED = 2,   /* parked until kicked */
	QREC_MOVED = 3,    /* ACK --to, or FAIL / BURY to the tube's dead
	                      letter tube: ready in another tube */
	QREC_REPLACED = 4, /* the pending replacement takes effect */
	QREC_DONE = 5,     /* ACK: kept as done until time + keep_ms */
	QREC_OUTCOME_END_
};

enum {
	QREC_NAME_MAX = 200,     /* tube name */
	QREC_GROUP_MAX = 200,    /* group name */
	QREC_KEY_MAX = 200,      /* task key */
	QREC_ERROR_MAX = 4096,   /* error text of a fail */
	QREC_RESULT_MAX = 65535, /* result text of an ack (a str16) */
	QREC_AFTER_MAX = 1000,   /* parents of a PUT_X */
	QREC_PAYLOAD_MAX = 256 * 1024 * 1024
};

/* The tags of a PUT_X's fields. */
enum { QREC_TAG_AFTER = 1, QREC_TAG_BATCH = 2 };

/* A batch's name: the tube alphabet, 1 to QREC_BATCH_MAX bytes; a
 * callback's payload, at most QREC_BATCH_PAYLOAD_MAX bytes. */
enum { QREC_BATCH_MAX = 200, QREC_BATCH_PAYLOAD_MAX = 65536 };

/* Every time (unix ms), delay and period fits in [0, QREC_TIME_MAX], so
 * sums of two never overflow. 2^53 ms is about 285,000 years. */
#define QREC_TIME_MAX ((int64_t)1 << 53)

/* The longest debounce or throttle window of a put: 30 days; and the
 * most throttle windows a queue holds at once (a put that would open one
 * more is refused). */
#define QREC_WINDOW_MAX_MS        ((int64_t)30 * 24 * 3600 * 1000)
#define QREC_THROTTLE_WINDOWS_MAX 1000000

/* A new task. */
struct qrec_put {
	uint64_t id; /* assigned by decide; apply sets next id past it */
	const char *tube;
	size_t tube_len;
	const void *payload;
	size_t payload_len;
	const char *key; /* key_len 0: no key */
	size_t key_len;
	uint32_t pri;
	uint32_t ttr; /* ms */
	uint32_t max_attempts;
	int64_t run_at;         /* ready from then on */
	int64_t period;         /* ms; 0: not recurring */
	uint64_t version;       /* PUT_V: >= 1, stored with the key; PUT: 0 */
	int64_t throttle_until; /* PUT_T: the key's throttle window ends
	                           (>= 1); PUT, PUT_V: 0 */
	const char *group;      /* PUT_G, PUT_T: group_len 0: none (PUT_G has
	                           one) */
	size_t group_len;
	const uint8_t *after; /* PUT_X: nafter parent ids, u64 LE each,
	                         increasing (deps_after_id reads them) */
	uint32_t nafter;      /* PUT_X: 1..QREC_AFTER_MAX; else 0 */
	uint8_t on_parent;    /* PUT_X: enum queue_on_parent (0..2) */
	const char *batch;    /* PUT_X: batch_len 0: none */
	size_t batch_len;
};

/* A worker takes a task. The deadline is the record's time + the task's
 * ttr. The lease: QREC_TAKE_LEASE carries it (>= 1); a QREC_TAKE, the
 * form of older logs, has none here (0) and its lease is its LSN. */
struct qrec_take {
	uint64_t id;
	uint64_t session;
	bool detached; /* the lease survives its session */
	uint64_t lease;
};

/* The lease token of a take written at `lsn` in epoch `epoch`: the LSN
 * plus epoch * 2^32. Tokens increase with every take, and stay unique
 * across a crash that loses takes whose replies went out before they were
 * durable: a restart or a promotion begins a higher epoch, and the LSNs a
 * crash can lose are fewer than 2^32 past the durable one. */
static inline uint64_t
qrec_lease(uint64_t epoch, uint64_t lsn)
{
	return lsn + (epoch << 32);
}

/* A lease ends: ACK, RELEASE, FAIL and BURY share this form; the layout
 * comment above says which fields each type carries. */
struct qrec_end {
	uint64_t id;
	uint64_t lease;    /* the task's current lease; BURY: 0 if not taken */
	uint8_t reason;    /* enum qrec_reason */
	uint8_t outcome;   /* enum qrec_outcome */
	uint32_t pri;      /* RELEASE, SETBACK + WAIT: the priority */
	int64_t run_at;    /* WAIT: when it is ready again */
	uint32_t dedup_ms; /* ACK + DELETED | DONE: how long the key stays
	                      reserved */
	const char *text;  /* ACK + MOVED: the tube; FAIL, SETBACK: the error
	                      text; ACK + DONE: the result */
	size_t text_len;
	int64_t keep_ms;   /* ACK + DONE: kept until time + keep_ms */
	uint64_t max_done; /* ACK + DONE: done tasks kept at most (0: no
	                      limit); those whose keep ends first go */
	const char *to;    /* FAIL, BURY, SETBACK + MOVED: the dead-letter
	                      tube */
	size_t to_len;
	const char *result; /* ACK_R: the result its children keep */
	size_t result_len;
};

/* UNTAKE (in struct qrec_end: id, lease, outcome; the rest 0): a take
 * whose reply could not be delivered (its session was gone) is undone:
 * the task waits again as it did before the take (its run_at kept),
 * attempts - 1, or takes its pending replacement (REPLACED).
 *
 * SETBACK (in struct qrec_end, text = the error): a lease ends with an
 * error text, which becomes last_error: a lost lease under the retry
 * policy (reason TTR or SESSION: WAIT with the backoff's run_at, or
 * BURIED at max_attempts, MOVED to the tube's dead letter) or a bury
 * with a text (reason CLIENT, BURIED or MOVED; lease 0 for an operator's
 * bury of a waiting task, which is always BURIED). */

/* The holder extends its lease: deadline = record time + ttr. */
struct qrec_touch {
	uint64_t id;
	uint64_t lease;
};

/* A buried or delayed task becomes ready. */
struct qrec_kick {
	uint64_t id;
};

/* A task is cancelled, whatever its state. */
struct qrec_delete {
	uint64_t id;
	uint32_t dedup_ms; /* how long its key stays reserved */
};

/* CANCEL: a task is cancelled (outcome.h). */
struct qrec_cancel {
	uint64_t id;
	uint64_t lease; /* 0: not taken, removed at once; else its lease */
};

/* Every task of a tube is cancelled. */
struct qrec_flush {
	const char *tube;
	size_t tube_len;
	uint32_t dedup_ms;
};

/* A live keyed task gets new content: at once, or, when `pending` (the
 * task is taken), as soon as its lease ends. */
struct qrec_replace {
	uint64_t id;
	const void *payload;
	size_t payload_len;
	uint32_t pri;
	uint32_t ttr;
	uint32_t max_attempts;
	int64_t run_at;
	int64_t period;
	bool pending;
	uint64_t version; /* REPLACE_V: >= 1, the new content's; REPLACE: 0
	                     (the new content has no version) */
};

/* A task changed in place, keeping its id, tube, key, attempts and state
 * (a waiting task may go between ready and delayed by its run_at). The
 * record carries every value the task has after it: those the request
 * left alone are the task's own. A taken task changes its priority only
 * (its pending replacement's too); a buried one keeps its run_at. */
struct qrec_update {
	uint64_t id;
	uint32_t pri;
	uint32_t ttr;
	uint32_t max_attempts;
	int64_t run_at;
	bool has_payload; /* else the payload stays */
	const void *payload;
	size_t payload_len;
};

/* No takes from the tube before `until` (until <= the record's time:
 * unpaused). */
struct qrec_pause {
	const char *tube;
	size_t tube_len;
	int64_t until;
};

/* DELETE_WHERE: the tasks of a tube in one state, created (done:
 * finished) at or before `before`, are cancelled; their keys are free at
 * once. DELETE_AGED: those in any of `states`, by the time `by` names
 * (a taken one loses its lease). DELETE_WHERE is the record of a request
 * a DELETE_AGED could also write (a log written before DELETE_AGED reads
 * as it did); it has states and by 0. */
struct qrec_delete_where {
	const char *tube;
	size_t tube_len;
	uint8_t state; /* DELETE_WHERE, enum queue_state: READY DELAYED
	                  BURIED DONE */
	int64_t before;
	uint8_t states; /* DELETE_AGED: QREC_STATE_BIT()s, READY..DONE */
	uint8_t by;     /* DELETE_AGED: enum qrec_age_by */
};

/* The time a DELETE_AGED measures a task's age from. */
enum qrec_age_by {
	QREC_BY_UPDATED = 1, /* its last change (updated_at) */
	QREC_BY_CREATED = 2, /* its creation (created_at) */
};

#define QREC_STATE_BIT(s) ((uint8_t)(1u << (s)))
/* READY, DELAYED, TAKEN, BURIED, DONE (enum queue_state 1..5). */
#define QREC_STATES_ALL ((uint8_t)0x3e)

/* The settings a tube may carry (QREC_TS_* say which it has; the others
 * are the server's defaults). */
enum qrec_tube_field {
	QREC_TS_TTR = 0x01, /* a put's ttr when it gives none */
	QREC_TS_MAX_ATTEMPTS =
	    0x02,                  /* a put's max_attempts when it gives none */
	QREC_TS_BACKOFF = 0x04,    /* a fail's delay: base, doubling, cap */
	QREC_TS_KEEP_DONE = 0x08,  /* how long finished tasks are kept */
	QREC_TS_LOST_LEASE = 0x10, /* a lost lease: retry at once or back off */
	QREC_TS_DEAD_LETTER = 0x20, /* buried tasks move to this tube */
	QREC_TS_ALL = 0x3f
};

struct qrec_tube_conf {
	uint8_t set; /* QREC_TS_* */
	uint32_t ttr;
	uint32_t max_attempts;
	uint32_t backoff_base;
	uint32_t backoff_cap; /* >= backoff_base */
	int64_t keep_done;    /* ms, in [0, QREC_TIME_MAX] */
	bool lost_lease_immediate;
	const char *dead_letter; /* a tube name, never the tube itself */
	size_t dead_letter_len;
};

/* A tube's settings from now on: all of them, not a change. */
struct qrec_tube_set {
	const char *tube;
	size_t tube_len;
	struct qrec_tube_conf conf;
};

/* Flow limits (TUBE_LIMIT; see the rule at the top). */
enum qrec_limit_field {
	QREC_LIM_RATE = 0x01,        /* rate per per_ms, with burst */
	QREC_LIM_CONCURRENCY = 0x02, /* tasks taken at once */
	QREC_LIM_ALL = 0x03
};

enum {
	QREC_RATE_MAX = 1000000,        /* tasks a second, at most */
	QREC_BURST_MAX = 1000000,       /* tokens a bucket holds, at most */
	QREC_CONCURRENCY_MAX = 1000000, /* tasks taken at once, at most */
};

struct qrec_limits {
	uint8_t set;          /* QREC_LIM_* */
	uint32_t rate;        /* tasks per per_ms */
	uint32_t per_ms;      /* 1000, 60000 or 3600000 */
	uint32_t burst;       /* tokens the bucket holds */
	uint32_t concurrency; /* tasks taken at once */
};

/* A tube's flow limits from now on: all of them, not a change. */
struct qrec_tube_limit {
	const char *tube;
	size_t tube_len;
	struct qrec_limits lim;
};

/* The group settings of one name of a tube from now on (glimit.h). */
struct qrec_group_set {
	const char *tube;
	size_t tube_len;
	const char *group; /* empty: every named group's limits */
	size_t group_len;
	struct qrec_limits lim;
	bool paused; /* never for the empty group */
};

/* A tube goes away; with `force` its tasks are cancelled first (their
 * keys free at once), else it has none. */
struct qrec_tube_delete {
	const char *tube;
	size_t tube_len;
	bool force;
};

/* What a schedule does with the slots it missed (sched.h). */
enum qrec_catch_up {
	QREC_CATCH_NONE = 0, /* skipped */
	QREC_CATCH_ONE = 1,  /* the last one fires */
	QREC_CATCH_ALL = 2,  /* each fires, at most QREC_CATCH_ALL_MAX */
	QREC_CATCH_END_
};

enum {
	QREC_SCHED_NAME_MAX = 64, /* a schedule's name: the tube alphabet */
	QREC_CATCH_ALL_MAX = 1000,
};

/* SCHED_SET, SCHED_DELETE, SCHED_PAUSE, SCHED_FIRE (the layout above
 * says which fields each carries; the others are 0). */
struct qrec_sched {
	const char *name;
	size_t name_len;
	const char *tube;
	size_t tube_len;
	const char *cron; /* 1-CRON_EXPR_MAX bytes that cron_parse accepts */
	size_t cron_len;
	const char *tz; /* a zone's name (tz_name_valid) */
	size_t tz_len;
	uint8_t catch_up; /* enum qrec_catch_up */
	bool paused;
	uint32_t pri;
	uint32_t ttr;
	uint32_t max_attempts;
	int64_t from; /* SET, PAUSE: slots after it fire */
	int64_t slot; /* FIRE: decided up to this slot (unix ms) */
	const void *payload;
	size_t payload_len;
	bool has_put;        /* FIRE: the slot's task */
	struct qrec_put put; /* FIRE with has_put: as a PUT's */
};

/* The schedule records' part of qrec_valid, qrec_encode, qrec_decode and
 * qrec_format (qrec_sched.c). */
bool qrec_sched_valid(const struct qrec_sched *s, uint16_t type);
void qrec_sched_encode(
    const struct qrec_sched *s, uint16_t type, struct buf *out);
void qrec_sched_decode(struct rd *r, uint16_t type, struct qrec_sched *s);
void qrec_sched_format(
    const struct qrec_sched *s, uint16_t type, struct buf *out);

/* BATCH_SET, BATCH_CLOSE, BATCH_FIRE (the layout above says which
 * fields each carries; the others are 0). */
struct qrec_batch {
	const char *name;
	size_t name_len;
	const char *success_tube; /* SET: len 0: none */
	size_t success_tube_len;
	const void *success_payload;
	size_t success_payload_len;
	const char *complete_tube;
	size_t complete_tube_len;
	const void *complete_payload;
	size_t complete_payload_len;
	uint8_t which;           /* FIRE: QREC_BATCH_ON_* bits */
	struct qrec_put puts[2]; /* FIRE: success, complete (by which) */
};

enum { QREC_BATCH_ON_SUCCESS = 0x01, QREC_BATCH_ON_COMPLETE = 0x02 };

/* The batch records' part of qrec_valid, encode, decode and format
 * (qrec_batch.c). */
bool qrec_batch_valid(const struct qrec_batch *b, uint16_t type);
void qrec_batch_encode(
    const struct qrec_batch *b, uint16_t type, struct buf *out);
void qrec_batch_decode(struct rd *r, uint16_t type, struct qrec_batch *b);
void qrec_batch_format(
    const struct qrec_batch *b, uint16_t type, struct buf *out);

/* A PUT's body (the layout of a PUT record) within another record. */
void qrec_put_body_encode(const struct qrec_put *p, struct buf *out);
void qrec_put_body_decode(struct rd *r, struct qrec_put *p);

/* MOVE_HOLD, MOVE_DROP, MOVE_IN, MOVE_END, MOVE_MARK, MOVE_KEY,
 * MOVE_PEND, MOVE_PLACE, MOVE_KEEP (move.h; layouts in qrec_move.c). */
struct qrec_move {
	uint64_t id;        /* HOLD, DROP: the task; IN: with fold, the task the
	                       copy is folded into (put.id otherwise) */
	uint64_t lease;     /* HOLD: the lease it is held under (>= 1); DROP:
	                       the lease it must still be held under */
	uint64_t src_id;    /* IN: the task's id in its source cluster */
	const char *source; /* IN: the source cluster's name */
	size_t source_len;
	const char *tube; /* END, MARK; IN with fold */
	size_t tube_len;
	uint8_t fold;       /* IN, KEY, PLACE: 1 nothing is made, src_id
	                       maps to `id`; IN, KEY: 2 the placeholder `id`
	                       becomes the copy, or the reservation */
	uint8_t state;      /* IN: 1 ready or delayed by run_at, 4 buried;
	                       PEND: 1 keys pending, 0 here */
	uint32_t attempts;  /* IN */
	int64_t created_at; /* IN */
	const char *error;  /* IN: last error; error_len 0: none */
	size_t error_len;
	struct qrec_put put; /* IN without fold: the task (group included) */
	const char *key;     /* KEY: the key reserved (tube: its tube) */
	size_t key_len;
	int64_t expires;  /* KEY: reserved until then */
	uint64_t version; /* KEY: the version it keeps; 0: none */
};

/* The longest cluster name a MOVE_IN names (the map's, MSG_NODE_MAX). */
enum { QREC_CLUSTER_MAX = 64 };

/* True when `p` is a cluster's name: 1..QREC_CLUSTER_MAX bytes of
 * [A-Za-z0-9_.:-]. */
bool qrec_cluster_valid(const char *p, size_t len);

bool qrec_move_valid(const struct qrec_move *m, uint16_t type);
void qrec_move_encode(
    const struct qrec_move *m, uint16_t type, struct buf *out);
void qrec_move_decode(struct rd *r, uint16_t type, struct qrec_move *m);
void qrec_move_format(
    const struct qrec_move *m, uint16_t type, struct buf *out);

/* PUTS: n plain PUTs into one tube (layout above); items holds their
 * bytes, read one by one with qrec_puts_next. */
struct qrec_puts {
	const char *tube;
	size_t tube_len;
	uint64_t first_id;
	int64_t run_at; /* the first item's, which the others' are told from */
	uint32_t n;
	const uint8_t *items;
	size_t items_len;
};

enum { QREC_PUTS_MAX = 65536 };

/* Reading a PUTS's items: begin, then next until it returns false (the
 * end, or a bad item: `bad`). Each put is whole: the record's tube, its
 * id, its fields; version, group, window and parents 0. */
struct qrec_puts_it {
	struct rd r;
	const struct qrec_puts *p;
	uint64_t id;
	uint32_t i;
	bool bad;
};

void qrec_puts_begin(const struct qrec_puts *p, struct qrec_puts_it *it);
bool qrec_puts_next(struct qrec_puts_it *it, struct qrec_put *out);

/* Writing one: qrec_puts_add appends an item to `items`, the first with
 * prev_id 0 (it is the record's first_id and run_at), each later with the
 * previous item's id and the record's run_at; false when the buffer could
 * not grow (nothing added). An item takes at most QREC_PUTS_ITEM_HEAD
 * bytes beside its key and payload. */
enum { QREC_PUTS_ITEM_HEAD = 65 };
bool qrec_puts_add(struct buf *items, const struct qrec_put *p,
    uint64_t prev_id, int64_t run_at);

struct qrec;

/* Whether a PUT record could be an item of a PUTS: its type and fields. */
bool qrec_puts_fits(const struct qrec *rec);

/* The PUTS part of qrec_valid, encode, decode and format (qrec_puts.c). */
bool qrec_puts_valid(const struct qrec_puts *p);
void qrec_puts_encode(const struct qrec_puts *p, struct buf *out);
void qrec_puts_decode(struct rd *r, struct qrec_puts *p);
void qrec_puts_format(const struct qrec_puts *p, struct buf *out);

/* A decoded record. Its pointers borrow: from the body it was decoded
 * from, or, when decide made it, from the request. */
struct qrec {
	uint16_t type; /* enum qrec_type */
	union {
		struct qrec_put put; /* PUT, PUT_V, PUT_G */
		struct qrec_take take;
		struct qrec_end end; /* ACK ACK_R RELEASE FAIL BURY UNTAKE
		                        SETBACK */
		struct qrec_cancel cancel;
		struct qrec_touch touch;
		struct qrec_kick kick;
		struct qrec_delete del;
		struct qrec_flush flush;
		struct qrec_replace replace; /* REPLACE, REPLACE_V */
		struct qrec_pause pause;
		struct qrec_update update;
		struct qrec_delete_where where;
		struct qrec_tube_set tube_set;
		struct qrec_tube_delete tube_delete;
		struct qrec_tube_limit tube_limit;
		struct qrec_group_set group_set;
		struct qrec_sched sched; /* SCHED_* */
		struct qrec_batch batch; /* BATCH_* */
		struct qrec_move move;   /* MOVE_* */
		struct qrec_puts puts;   /* PUTS */
	} u;
};

/* Appends the body of `rec` to `out`. Returns 0; SLUICE_EINVAL when the
 * record is not valid (see above; nothing is appended); SLUICE_ENOMEM when
 * the buffer could not grow. */
int qrec_encode(const struct qrec *rec, struct buf *out);

/* Decodes the body of a record of `type`. Returns 0, or SLUICE_ECORRUPT
 * when the body is not exactly a valid body of that type (including every
 * type this file does not know). Never reads outside body[0..len). On
 * success `*out` borrows from `body`; on failure `*out` is untouched. */
int qrec_decode(uint16_t type, const void *body, size_t len, struct qrec *out);

/* True when `rec` is a valid record (what qrec_encode accepts). */
bool qrec_valid(const struct qrec *rec);

/* "PUT", "TAKE", ...; "?" for a type this file does not know. */
const char *qrec_type_name(uint16_t type);

/* Appends a one-line human-readable form of `rec` (no newline), for
 * sluice-log dump. Returns 0 or SLUICE_ENOMEM. */
int qrec_format(const struct qrec *rec, struct buf *out);

/* True when `c` is a valid set of settings for the tube `tube` (the
 * rule of a TUBE_SET body; the snapshot holds the same). */
bool qrec_tube_conf_valid(
    const struct qrec_tube_conf *c, const char *tube, size_t tube_len);

/* Writes or reads the settings part of a TUBE_SET body (after its tube
 * name). The reader fails `r` on missing bytes; check the result with
 * qrec_tube_conf_valid(). */
void qrec_tube_conf_put(struct buf *out, const struct qrec_tube_conf *c);
void qrec_tube_conf_get(struct rd *r, struct qrec_tube_conf *c);

/* Appends " ttr=N max_attempts=N ..." for the fields `c` sets (or
 * " (defaults)"), as qrec_format and the queue's dump write them. */
void qrec_tube_conf_format(const struct qrec_tube_conf *c, struct buf *out);

/* True when `l` is a valid set of limits (the rule at the top). */
bool qrec_limits_valid(const struct qrec_limits *l);

/* Writes or reads the limits part of a TUBE_LIMIT body (after its tube
 * name), as the snapshot holds it too; check what was read with
 * qrec_limits_valid(). */
void qrec_limits_put(struct buf *out, const struct qrec_limits *l);
void qrec_limits_get(struct rd *r, struct qrec_limits *l);

/* Whether two sets of limits are the same (field by field: the struct
 * has padding). */
bool qrec_limits_equal(
    const struct qrec_limits *a, const struct qrec_limits *b);

/* Appends " rate=N/Dms burst=N concurrency=N" (or " (none)"). */
void qrec_limits_format(const struct qrec_limits *l, struct buf *out);

/* True when `name` is a valid tube name: 1-200 bytes of
 * [A-Za-z0-9_.:/-]. */
bool qrec_tube_valid(const char *name, size_t len);
/* A group name: the same alphabet, 1 to QREC_GROUP_MAX bytes. */
bool qrec_group_valid(const char *name, size_t len);

#endif
