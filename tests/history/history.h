/* history - what clients asked a sluice cluster and what they were told,
 * and a checker of the rules every such history must keep (the way Jepsen
 * tests databases: record, then judge the record, never the server's own
 * account of itself).
 *
 * A history is a list of operations. Each has the client that made it,
 * when it was invoked and when it completed (microseconds on one monotonic
 * clock), and its outcome: ok, an error the server answered (the request
 * did nothing), or unknown (the connection was lost or the reply did not
 * come in time: it may or may not have been done, and may still be done
 * after the client gave up). A take that got several tasks is one
 * operation per task, with the same times. Beside the clients' operations
 * the history holds the faults a nemesis injected (a crash of the node
 * that led is what lets a take's attempt go uncounted), and the tasks a
 * final read found once the faults had ended.
 *
 * Every put's payload names the put (hist_payload), so a task the final
 * read finds, or a take returns, is tied to its put even when the put's
 * reply was lost.
 *
 * The rules (hist_check; docs/operations.md has them in prose):
 *   lost       a task known to exist (its put answered, or seen since) is,
 *              at the end, present or was completed (an ack or a delete
 *              that succeeded, or whose outcome is unknown and could have
 *              taken effect);
 *   twice      no task is completed twice;
 *   revived    nothing succeeds on a completed task afterwards: no take,
 *              no lease operation, it is not present at the end, and no
 *              take hands out a lease newer than the one an ack ended;
 *   stale      exclusivity: a lease operation with a lease succeeds only
 *              while no newer take of the task has been answered;
 *   attempts   a task's attempts never go down, from take to take in
 *              lease order and to the end, except that a take whose
 *              record a crash lost is uncounted: one lower is allowed
 *              when a crash of the leader fell between that take and
 *              the next observation;
 *   bury       with max_attempts M: a fail at attempts >= M buries, below
 *              M it does not; a task is taken beyond M, or found ready at
 *              the end with attempts >= M, only after a release of the
 *              take that reached those attempts (release never buries:
 *              every other end of a lease does, at M); nothing is buried
 *              below M but a task put after a parent (its parent's
 *              failure for good buries it);
 *   unknown    an operation whose outcome is unknown has one outcome,
 *              never both: a put creates at most one task, an unknown ack
 *              that a newer take shows did not happen cannot be what
 *              removed the task; a put the server refused creates none;
 *   integrity  what the replies say fits together: one payload per task
 *              id and one task per put, a payload that is a put's, no
 *              task taken before its put, states after ack, release,
 *              fail and touch that those operations can give, nothing
 *              still taken at the end.
 *   cap        a tube's concurrency cap holds at every moment: no more
 *              tasks of a capped tube are surely taken at once than its
 *              cap. A take's task is surely taken from the take's reply
 *              until the earliest moment its lease could have ended: the
 *              invocation of any later operation on the task (an ack,
 *              another take, a delete, the final read...), of any fault,
 *              of the taking client's next operation whose outcome is
 *              unknown (its connection may have closed, and a session's
 *              lease with it) or of its next new session (HIST_SESSION),
 *              or the client's last operation's end,
 *              and at the latest the take's invocation plus its ttr. (The
 *              history names no tubes: every take with a cap is of the
 *              one capped tube.) The same for each fair group of that
 *              tube with a cap (a take's group and gcap): no more of the
 *              group's tasks surely taken at once than gcap.
 *   after      a task put after a parent (a put's `after`; its rule for a
 *              parent's failure "fail", the default, and nothing kicks)
 *              is never taken before its parent was acked or deleted: an
 *              answered take of it completes after the invocation of an
 *              ack or a delete of the parent that succeeded or whose
 *              outcome is unknown. (A parent that failed for good buries
 *              the child, which is then never taken; one deleted and
 *              forgotten before the put counts as acked: its delete came
 *              first all the same.)
 *   slot       a schedule's slot fires once: the tasks clients took from
 *              a schedule (HIST_FIRE: the schedule and the slot its task's
 *              key names) are one task per slot. Two task ids for one
 *              slot of one schedule mean the slot put two tasks (a
 *              leader that fired it again after a restart or a
 *              failover); the same id taken twice (its lease ended) is
 *              no breach.
 *
 * Thread safety: hist_add may be called from any thread; everything else
 * from one thread once the recording threads are done. */
#ifndef SLUICE_HISTORY_H
#define SLUICE_HISTORY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum hist_type {
	HIST_PUT = 1,
	HIST_TAKE,
	HIST_ACK,
	HIST_FAIL,
	HIST_RELEASE,
	HIST_TOUCH,
	HIST_DELETE,
	HIST_CRASH,   /* the node that led died: what it had not made
	                 durable may be gone (kill -9, failover) */
	HIST_FAULT,   /* any other fault, for the figures */
	HIST_FINAL,   /* a task the final read found */
	HIST_SESSION, /* a client closed its session and opened another: its
	                 leases that were not detached ended */
	HIST_FIRE,    /* a client took a task a schedule put: id, sched and
	                 slot (read from the task's key); judged by the rule
	                 slot only */
	HIST_TYPES_
};

enum hist_outcome {
	HIST_OK = 1,
	HIST_ERR,     /* the server answered an error: nothing was done */
	HIST_UNKNOWN, /* no reply: done or not, possibly later */
};

/* Which face of the server a client spoke to. Leases of the sluice
 * protocol are tokens ordered by the log; the beanstalk face has no
 * tokens, so the harness gives each reserve a name of its own (any
 * value, unique), and such leases are ordered by real time only. */
enum hist_face {
	HIST_NOFACE = 0,
	HIST_LIB,
	HIST_BS,
	HIST_MV, /* libsluice through the map (sluice_open_map) on a tube
	            that moves between clusters: a move gives a task a new
	            id on its target, so every operation names the task by
	            HIST_MV_ID of its payload's key; its leases come from two
	            clusters' logs and are ordered by real time only */
};

/* The id a HIST_MV operation gives the task of payload key `key`: the
 * same across moves, and never a real task id (bit 63). */
#define HIST_MV_ID(key) ((uint64_t)(key) | (UINT64_C(1) << 63))

/* Faults, in HIST_CRASH and HIST_FAULT operations. */
enum hist_fault {
	HIST_F_KILL = 1, /* kill -9 of the leader, restarted */
	HIST_F_KILL_FOLLOWER,
	HIST_F_STOP,     /* SIGSTOP, then SIGCONT */
	HIST_F_DISK,     /* the leader's disk full for a while */
	HIST_F_FAILOVER, /* leader killed, a follower promoted */
	HIST_F_MOVE,     /* a tube moved to another cluster (with kills of
	                    the mover, of a node of either cluster in the
	                    middle, recorded as faults of their own) */
	HIST_F_ELECT,    /* a cluster that elects its leader through etcd
	                    has one of a new epoch, seen by a watch between
	                    two looks (the first the fault's invocation): a
	                    crash, whether the nemesis caused it or a leader
	                    lost its lease in etcd by itself */
	HIST_FAULTS_
};

enum { HIST_STATE_NONE = -1 };

struct hist_op {
	int64_t invoke; /* us on the history's clock */
	int64_t
	    complete;    /* us; for unknown outcomes, when the client gave up */
	uint64_t id;     /* the task; 0 when not known */
	uint64_t lease;  /* take: the lease got; lease ops: the lease used */
	uint64_t key;    /* put: its payload's key; take and final: the key
	                    of the payload got (0: not a put's payload) */
	uint32_t client; /* faults: the node */
	uint32_t attempts; /* take, final: as reported (0: not reported) */
	uint32_t max;      /* put, take, final: max_attempts (0: none) */
	uint32_t ttr;      /* take: the lease's ttr in ms (0: not known) */
	uint32_t cap;      /* take: the concurrency cap of the task's tube
	                      (0: none) */
	uint32_t gcap;     /* take: the cap of the task's fair group (0:
	                      none) */
	uint8_t group;     /* take: the task's fair group, 1..255 (0:
	                      none) */
	uint64_t after;    /* put: the task it was put after (0: none) */
	int64_t slot;      /* fire: the slot, unix ms (0: none) */
	uint32_t sched;    /* fire: the schedule's number, 1.. (0: none) */
	int16_t err;       /* HIST_ERR: the SLUICE_E* code */
	int8_t state;      /* ack, fail, release, touch: the state after, as
	                      reported (0 gone); final: the state; else
	                      HIST_STATE_NONE */
	uint8_t type;      /* enum hist_type */
	uint8_t outcome;   /* enum hist_outcome */
	uint8_t face;      /* enum hist_face */
	uint8_t kind;      /* faults: enum hist_fault */
};

struct hist {
	pthread_mutex_t mu;
	struct hist_op *ops;
	size_t n, cap;
	int64_t t0_ns;       /* the clock's zero, CLOCK_MONOTONIC */
	int64_t final_at;    /* when the final read began; 0: no final read */
	bool final_complete; /* it looked at every task the history knows */
	bool nomem;          /* an operation could not be recorded */
};

void hist_init(struct hist *h);
void hist_free(struct hist *h);

/* Microseconds since hist_init, on CLOCK_MONOTONIC. */
int64_t hist_now(const struct hist *h);

/* An operation with every field at "none". */
void hist_op_init(struct hist_op *op, enum hist_type type);

/* Appends a copy of `op`. Thread-safe. On allocation failure the
 * history is marked (h->nomem) and the check refuses it. */
void hist_add(struct hist *h, const struct hist_op *op);

/* ---- payloads ------------------------------------------------------ */

enum { HIST_PAYLOAD_MAX = 96 };

/* The payload of the put with `key` (non-zero): "hk-<16 hex digits>-"
 * then a padding of key % 40 dots, so payloads differ in length too.
 * Writes it to `buf` (HIST_PAYLOAD_MAX bytes) and returns its length. */
size_t hist_payload(uint64_t key, char *buf);

/* The key of a payload made by hist_payload, or 0 when `p` is not
 * exactly such a payload. */
uint64_t hist_payload_key(const void *p, size_t len);

/* ---- text ---------------------------------------------------------- */

/* One operation as one line of text (no newline), e.g.
 *   12 340 c3 lib take ok id=7 lease=4294967301 key=... att=1 max=3
 *   500 900 n0 - crash ok kind=kill
 *   2000 2000 c0 - final ok id=7 key=... att=2 max=3 state=buried
 * Fields that are "none" are left out. Returns the length (as snprintf). */
int hist_format(const struct hist_op *op, char *buf, size_t cap);

/* Reads one line in hist_format's form and appends it, or "end T
 * complete|incomplete" (the final read), or a blank line or a comment
 * ("#..."), which add nothing. Returns 0 or -1 for a line it cannot
 * read. */
int hist_parse(struct hist *h, const char *line);

/* Writes (reads) a whole history, one line each, "end" last. 0 or -1. */
int hist_save(const struct hist *h, const char *path);
int hist_load(struct hist *h, const char *path);

const char *hist_type_name(int type);
const char *hist_fault_name(int kind);

/* ---- the check ----------------------------------------------------- */

enum hist_rule {
	HIST_R_LOST,
	HIST_R_TWICE,
	HIST_R_REVIVED,
	HIST_R_STALE,
	HIST_R_ATTEMPTS,
	HIST_R_BURY,
	HIST_R_UNKNOWN,
	HIST_R_INTEGRITY,
	HIST_R_CAP,
	HIST_R_AFTER,
	HIST_R_SLOT,
	HIST_R_DOUBLE,
	HIST_RULES_
};

struct hist_violation {
	enum hist_rule rule;
	uint64_t id;  /* the task (0: by payload only) */
	uint64_t key; /* the put's key, when known */
	size_t op[2]; /* the operations at fault, indices in h->ops after
	                 the check sorted them; SIZE_MAX: none */
	char why[240];
};

struct hist_report {
	size_t ops; /* clients' operations */
	size_t ok, err, unknown;
	size_t tasks;  /* distinct task ids seen */
	size_t faults; /* faults and crashes */
	size_t by_fault[HIST_FAULTS_];
	size_t final_tasks; /* tasks the final read found */
	size_t uncounted;   /* takes a crash lost: attempts one lower across
	                       it (allowed) */
	uint32_t cap;       /* the capped tube's cap (0: no take had one) */
	uint32_t cap_peak;  /* the most of its tasks surely taken at once */
	uint32_t gcap;      /* a capped group's cap (0: no take had one) */
	uint32_t gcap_peak; /* the most of one group's tasks surely taken
	                       at once */
	size_t children;    /* answered takes of tasks put after a parent */
	size_t slots;       /* distinct slots whose tasks were taken */
	size_t retakes;     /* pairs of answered takes of one task that
	                       the rule double judged */
	size_t violations;  /* all of them (v holds the first few) */
	size_t by_rule[HIST_RULES_];
	struct hist_violation *v;
	size_t nv;
};

enum { HIST_REPORT_KEEP = 100 }; /* violations kept in detail */

/* Sorts h->ops by invocation time (stable), then checks every rule.
 * Returns 0 with `*r` filled (free it with hist_report_free), or -1 when
 * the history cannot be checked (out of memory while recording or now).
 * The final-state rules need a complete final read (h->final_complete);
 * without one only the others are checked. */
int hist_check(struct hist *h, struct hist_report *r);

void hist_report_free(struct hist_report *r);

const char *hist_rule_name(enum hist_rule rule);

/* Prints the figures, then up to `max` violations, each with its
 * operations and every other operation of its task (a minimal history
 * to replay by hand). */
void hist_report_print(
    const struct hist *h, const struct hist_report *r, FILE *f, size_t max);

#endif
