/* msg - the sluice wire protocol: one request or one reply per nng req/rep
 * message body. The byte layout, every op code, field and limit is in
 * docs/protocol.md; this header is the C view of it, shared by the server
 * (decodes requests, encodes replies) and libsluice (the reverse).
 *
 * Pure: no I/O, no logging, no allocation except the caller's `struct buf`.
 *
 * Borrowing: a decoded `struct msg_req` / `struct msg_rep` points into the
 * message bytes it was decoded from (strings, payloads, lists). It is valid
 * while those bytes are, and strings are NOT NUL-terminated: use `.p` and
 * `.len` (printf "%.*s").
 *
 * Lists (batch put items, take tubes, tasks, stats, errors, key/value
 * pairs, cluster members) are two-faced: to ENCODE, set the count `n` and point
 * the array field at `n` elements; after DECODE the array field is NULL and the
 * `it` iterator walks the elements with msg_next_*(). The decoder checks
 * every element before it returns, so iteration never fails: each
 * msg_next_*() returns true exactly `n` times.
 *
 * Results: 0, or a SLUICE_E* code naming the problem (sluice.h), or
 * -ENOMEM when the output buffer could not grow. Encoders check the same
 * limits as decoders, so whatever encodes also decodes; on failure the
 * buffer is restored to its length on entry. */
#ifndef SLUICE_PROTO_MSG_H
#define SLUICE_PROTO_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

enum {
	MSG_MAGIC = 0x53,     /* 'S', first byte of every message */
	MSG_VERSION = 1,      /* second byte; bumped on incompatible changes */
	MSG_REQ_HDR = 4,      /* magic, version, op, flags */
	MSG_REP_HDR = 6,      /* magic, version, op, flags, u16 status */
	MSG_TUBE_MAX = 200,   /* tube name: 1-200 bytes of [A-Za-z0-9_.:/-] */
	MSG_KEY_MAX = 200,    /* key: 0 (none) - 200 bytes, no NUL byte */
	MSG_TEXT_MAX = 1024,  /* error texts: fail's text, reply message */
	MSG_URL_MAX = 512,    /* follow's URL, the leader URL of a reply */
	MSG_TOKEN_MAX = 256,  /* auth's token */
	MSG_NAME_MAX = 64,    /* name of a stats key/value pair */
	MSG_PEER_MAX = 64,    /* a task holder's address ("host:port") */
	MSG_BATCH_MAX = 1000, /* tasks in one batch put, ack or delete */
	MSG_TAKE_MAX = 1000,  /* tasks in one take */
	MSG_TAKE_TUBES_MAX = 64,       /* tubes named in one take */
	MSG_LIST_MAX = 1000,           /* tasks in one list */
	MSG_STATS_TUBES_MAX = 10000,   /* tubes in one stats reply */
	MSG_PAYLOAD_DEFAULT = 1 << 20, /* default payload limit, 1 MiB */
	MSG_SIZE_MAX = 64 << 20,       /* largest message, 64 MiB */
	/* What a server lets its transport receive: 1 MiB over the limit,
	 * so that a message a little too large arrives and is answered
	 * SLUICE_EMSGSIZE (nng counts the REQ's 4-byte request id in its
	 * receive limit too); beyond it the transport drops the connection
	 * without reading the message. */
	MSG_RECV_MAX = MSG_SIZE_MAX + (1 << 20),
};

/* Request op codes (byte 2 of every message). A reply echoes its
 * request's op. Numbers are stable. (MSG_OP_*, not MSG_*: <sys/socket.h>
 * owns MSG_PEEK and friends.) */
enum msg_op {
	MSG_OP_PUT = 0x01,
	MSG_OP_PUT_BATCH = 0x02,
	MSG_OP_TAKE = 0x03,
	MSG_OP_ACK = 0x04,
	MSG_OP_RELEASE = 0x05,
	MSG_OP_FAIL = 0x06,
	MSG_OP_TOUCH = 0x07,
	MSG_OP_BURY = 0x08,
	MSG_OP_KICK = 0x09,
	MSG_OP_KICK_ID = 0x0a,
	MSG_OP_DELETE = 0x0b,
	MSG_OP_DELETE_KEY = 0x0c,
	MSG_OP_FLUSH = 0x0d,
	MSG_OP_PEEK = 0x0e,
	MSG_OP_PEEK_KEY = 0x0f,
	MSG_OP_PEEK_NEXT = 0x10,
	MSG_OP_STATS = 0x11,
	MSG_OP_LIST = 0x12,
	MSG_OP_ERRORS = 0x13,
	MSG_OP_PAUSE = 0x14,
	MSG_OP_SNAPSHOT = 0x15,
	MSG_OP_PROMOTE = 0x16,
	MSG_OP_FOLLOW = 0x17,
	MSG_OP_RELEASE_ALL = 0x18, /* every taken task of a tube */
	MSG_OP_ACK_BATCH = 0x19,
	MSG_OP_DELETE_BATCH = 0x1a,
	MSG_OP_UPDATE = 0x1b,
	MSG_OP_STATS_HOURLY = 0x1c, /* a tube's statistics per hour, 48 h */
	MSG_OP_DELETE_WHERE = 0x1d, /* a tube's tasks by state and age */
	MSG_OP_TUBE_SET = 0x1e,
	MSG_OP_TUBE_SHOW = 0x1f,
	/* 0x20, 0x25..0x27: what the beanstalk face needs (docs/beanstalk.md)
	 */
	MSG_OP_JOB = 0x20,
	MSG_OP_TUBE_DELETE = 0x21,
	MSG_OP_CLUSTER = 0x22,    /* the cluster as the node sees it (etcd) */
	MSG_OP_SWITCHOVER = 0x23, /* hand the leadership to a named member */
	MSG_OP_HISTORY = 0x24,    /* events per second, 15 minutes (rates) */
	/* 0x25..0x27: the beanstalk face's */
	MSG_OP_AUTH = 0x28,       /* bind the session to a token (--auth) */
	MSG_OP_GROUPS = 0x29,     /* a tube's fair groups by backlog */
	MSG_OP_GROUP = 0x2a,      /* a tube's group limits (msg_group.h) */
	MSG_OP_BATCH_SHOW = 0x2b, /* a batch's counts (msg_batch.h) */
	MSG_OP_BATCH_SET = 0x2c,  /* a batch's callbacks, or its close */
	MSG_OP_CANCEL = 0x2d, /* cancel tasks by id (delete_batch's layout) */
	MSG_OP_WAIT = 0x2e,   /* a task's result, waiting until it ends */
	MSG_OP_SCHED_SET = 0x2f,  /* create or replace a schedule */
	MSG_OP_SCHED_LIST = 0x30, /* the schedules, or one by name */
	MSG_OP_SCHED_CTL = 0x31,  /* pause, resume or delete a schedule */
	MSG_OP_MAP = 0x32,     /* the cluster map and its clusters' members */
	MSG_OP_MAP_SET = 0x33, /* map a tube prefix to a cluster (admin) */
	MSG_OP_MAP_DELETE = 0x34, /* remove a prefix from the map (admin) */
	MSG_OP_MOVE_OUT = 0x35,   /* hold or drop a moving tube's tasks */
	MSG_OP_MOVE_IN = 0x36,    /* copy tasks in from another cluster */
	MSG_OP_MOVE_END = 0x37,   /* a tube's copies are all in (msg_move.h) */
	MSG_OP_END_               /* one past the last op */
};

/* What MSG_OP_JOB does to its task. The task must not be taken, or be
 * taken under a session lease of the session that sends the request:
 * anything else is SLUICE_ENOTFOUND, as for an unknown id. */
enum msg_job_verb {
	MSG_JOB_DELETE = 1,  /* cancel it */
	MSG_JOB_RELEASE = 2, /* taken: back, with priority and delay */
	MSG_JOB_BURY = 3,    /* taken: buried, with priority */
	MSG_JOB_TOUCH = 4,   /* taken: extend the lease */
	MSG_JOB_TAKE = 5,    /* ready, delayed or buried: take it */
	MSG_JOB_END_
};

/* Task states as they travel (task records, peek_next, list). 0 means
 * "none": a task that no longer exists (after ack), or "any" in list. */
enum msg_state {
	MSG_ST_NONE = 0,
	MSG_ST_READY = 1,
	MSG_ST_DELAYED = 2,
	MSG_ST_TAKEN = 3,
	MSG_ST_BURIED = 4,
	MSG_ST_DONE = 5,    /* acked, kept by the tube's retention */
	MSG_ST_WAITING = 6, /* put after parents that are not acked yet */
};

/* How a task that is gone ended, in wait's reply (buried, done too). */
enum msg_end { MSG_END_DELETED = 16, MSG_END_CANCELLED, MSG_END_DEAD };

/* list's order. */
enum msg_order {
	MSG_ORDER_ATTEMPTS = 1, /* most attempts first, then id */
	MSG_ORDER_AGE = 2,      /* oldest (created_at) first, then id */
	MSG_ORDER_RUN_AT = 3,   /* soonest run_at first, then id */
	MSG_ORDER_ID = 4,       /* lowest id first: the order a cursor pages */
};

/* stats' role. (A cluster member's role is enum msg_node_role, numbered
 * apart: both are on the wire as they are.) */
enum msg_role {
	MSG_ROLE_LEADER = 1,
	MSG_ROLE_FOLLOWER = 2,
};

/* A cluster member's role, as the cluster reply carries it. */
enum msg_node_role {
	MSG_NODE_FOLLOWER = 0,
	MSG_NODE_LEADER = 1,
	MSG_NODE_CANDIDATE = 2, /* no leader known yet */
	MSG_NODE_FENCED = 3,    /* a leader that stopped writing */
	MSG_NODE_ROLE_END_
};

/* A cluster member's flags. */
enum {
	MSG_MEMBER_SYNC = 0x01,  /* counted by the leader for --sync-replicas:
	                            may take over */
	MSG_MEMBER_LEASE = 0x02, /* holds the leader lease */
	MSG_MEMBER_ALL = 0x03
};

/* Borrowed bytes, not NUL-terminated. {NULL, 0} and {"", 0} are empty. */
struct msg_str {
	const char *p;
	size_t len;
};

#include "proto/msg_deps.h"

/* Walks a decoded list; see msg_next_*(). Opaque to callers. An encoder
 * takes a list from its array, or, when that is NULL (a decoded message
 * sent on), from its iterator. */
struct msg_iter {
	struct rd r;
	uint32_t left;
	size_t payload_max;
	uint8_t flags; /* the message's flags, when they shape its elements */
};

/* The schedule ops' messages: part of this header, after the types they
 * use. */
#include "proto/msg_sched.h"
#include "proto/msg_batch.h"
/* The cluster map's messages: part of this header (they use msg_str and
 * msg_iter, above; msg_req and msg_rep, below, hold them). */
#include "proto/msg_map.h"
#include "proto/msg_move.h"

/* Limits a decoder enforces; NULL means the defaults (msg_max =
 * MSG_SIZE_MAX, payload_max = MSG_PAYLOAD_DEFAULT). Values above the
 * protocol's own limits are clamped to them. */
struct msg_limits {
	size_t msg_max;     /* whole message, else SLUICE_EMSGSIZE */
	size_t payload_max; /* one payload, else SLUICE_ETOOBIG */
};

/* ---- requests ------------------------------------------------------ */

/* put, and each item of a batch put. */
struct msg_put {
	struct msg_str tube;
	uint32_t priority;     /* 0 most urgent; the library default is 1024 */
	uint64_t when;         /* delay in ms, or unix ms when `at` is set */
	bool at;               /* `when` is an absolute time (unix ms) */
	bool replace;          /* update the live task holding `key` */
	uint64_t ttr;          /* ms; 0 = the server's default (60 s) */
	uint32_t max_attempts; /* 0 = unlimited */
	uint64_t period;       /* ms; 0 = not recurring */
	struct msg_str key;    /* len 0 = no key; `replace` needs one */
	struct msg_str payload;
	uint64_t if_newer; /* flag 0x04, with replace: a version >= 1 (after
	                      the payload); 0 = none */
	/* Deduplication modes of a keyed put (the server checks the rest:
	 * a key, one mode, no replace, delay or time, at most 30 days):
	 * flag 0x80, a u64 after the version: debounce ms >= 1; flag 0x40, a
	 * u64 after that: throttle ms >= 1; 0 = none. */
	uint64_t debounce;
	uint64_t throttle;
	struct msg_str group; /* flag 0x08: a fair group (1-200 bytes of the
	                         tube alphabet; else EGROUP); len 0 = none */
	/* Flag 0x10, after the group: tagged fields (msg_deps.c): parents
	 * by id and key (1..MSG_AFTER_MAX), the rule when one fails. */
	bool ext;
	uint8_t on_parent_failure; /* enum msg_on_parent */
	uint32_t nafter;
	const uint64_t *after;    /* encode */
	struct msg_iter after_it; /* decode: msg_next_id() */
	uint32_t nafter_keys;
	const struct msg_str *after_keys; /* encode */
	struct msg_iter after_keys_it;    /* decode: msg_next_key() */
	struct msg_str batch; /* tag 3: the batch it joins; len 0: none */
	/* Decoded batch items only: 0, or the SLUICE_E* code that refuses
	 * this item alone (SLUICE_ETUBE, SLUICE_EKEY, SLUICE_EINVAL for a
	 * replace without a key, SLUICE_ETOOBIG); its fields are then as
	 * read, unchecked. */
	uint16_t error;
};

/* A batch put. Its items are checked one by one: an item whose tube, key
 * or payload breaks its limit is read whole and refused alone (its
 * `error`), the others are put. Only what breaks the message itself (a
 * count, flags, missing bytes, a length over its limit whose bytes are
 * missing) refuses the whole request. The encoder lets such items through
 * (so that a server can be asked, and answer, per item) as long as they
 * fit the layout (str16 lengths). */
struct msg_put_batch {
	uint32_t n;                  /* 1..MSG_BATCH_MAX */
	bool messages;               /* flag 0x01: each result carries a text */
	const struct msg_put *items; /* encode */
	struct msg_iter it;          /* decode: msg_next_put() */
};

struct msg_take {
	uint64_t wait;   /* ms to wait for a task; 0 = poll */
	uint32_t max;    /* 1..MSG_TAKE_MAX tasks */
	bool detach;     /* lease survives the session, ends by ttr only */
	bool strict;     /* tubes in the order given, not the most urgent
	                    task across them */
	bool durable;    /* the reply waits for the take's own record */
	uint32_t ntubes; /* 1..MSG_TAKE_TUBES_MAX */
	const struct msg_str *tubes; /* encode */
	struct msg_iter it;          /* decode: msg_next_str() */
};

/* ack, release, fail, touch and bury name a task and the lease its take
 * returned; `force` (flag 0x80) is an operator's override: the lease is
 * not checked (the server logs who asked). */

/* touch, bury */
struct msg_lease {
	uint64_t id;
	uint64_t lease;
	bool force;
	bool report;          /* bury: flag 0x40, as ack's */
	struct msg_str error; /* bury: flag 0x01 when not empty; last_error */
};

struct msg_ack {
	uint64_t id;
	uint64_t lease;
	bool force;
	bool report; /* flag 0x40: the reply says (its flag 0x01) whether a
	                pending replacement took the task's place */
	struct msg_str to; /* len 0 = no move; else the tube to move it to */
	struct msg_str result; /* flag 0x01 when len > 0: a short text kept
	                          with the done task (0..MSG_TEXT_MAX) */
};

struct msg_release {
	uint64_t id;
	uint64_t lease;
	bool force;
	bool report;       /* flag 0x40, as ack's */
	uint64_t delay;    /* ms; 0 = ready at once */
	bool set_priority; /* else `priority` is ignored (sent as 0) */
	uint32_t priority;
	bool front;  /* flag 0x02: ready at its place before the take */
	bool untake; /* flag 0x04: the take undone (its holder's only:
	                no force, delay, priority or front) */
};

struct msg_fail {
	uint64_t id;
	uint64_t lease;
	bool force;
	bool report;          /* flag 0x40, as ack's */
	bool set_delay;       /* else the server's backoff decides */
	bool fatal;           /* flag 0x02: buried at once */
	uint64_t delay;       /* ms, with set_delay (sent as 0 without) */
	struct msg_str error; /* 0..MSG_TEXT_MAX bytes */
};

/* One task of an ack_batch: its id and the lease its take returned. */
struct msg_ack_item {
	uint64_t id;
	uint64_t lease;
};

/* ack_batch and delete_batch: many tasks in one request and one commit,
 * each with its own result (the lease rule for an ack, an unknown id for
 * both). No force, no move, no report: those take the single forms. */
struct msg_ack_batch {
	uint32_t n;                       /* 1..MSG_BATCH_MAX */
	bool messages;                    /* flag 0x01: each result a text */
	const struct msg_ack_item *items; /* encode */
	struct msg_iter it;               /* decode: msg_next_ack_item() */
};

struct msg_delete_batch {
	uint32_t n;          /* 1..MSG_BATCH_MAX */
	bool messages;       /* flag 0x01: each result a text */
	const uint64_t *ids; /* encode */
	struct msg_iter it;  /* decode: msg_next_id() */
};

/* wait: task `id`'s result once it ends, or its state after `wait` ms
 * (0: at once; at most MSG_WAIT_MAX, an hour). */
struct msg_wait {
	uint64_t id;
	uint64_t wait;
};
enum { MSG_WAIT_MAX = 3600 * 1000 };

/* update: a task changed in place; each flag says a field is set (the
 * others are sent as 0 and ignored). */
struct msg_update {
	uint64_t id;
	bool set_priority;     /* flag 0x01 */
	bool set_delay;        /* flag 0x02: `when` is a delay in ms */
	bool set_at;           /* flag 0x04: `when` is a unix ms time */
	bool set_ttr;          /* flag 0x08 */
	bool set_max_attempts; /* flag 0x10 */
	bool set_payload;      /* flag 0x20 */
	uint32_t priority;
	uint64_t when;
	uint64_t ttr; /* ms, >= 1 */
	uint32_t max_attempts;
	struct msg_str payload;
};

struct msg_kick {
	struct msg_str tube;
	uint32_t n;   /* >= 1 buried tasks to kick */
	bool delayed; /* none buried: kick delayed ones, soonest first */
	struct msg_str error; /* not empty: only the buried tasks whose last
	                         error is this text (not with delayed) */
	bool dry;             /* count the tasks it would kick, kick none */
};

/* MSG_OP_JOB */
struct msg_job {
	uint8_t verb; /* enum msg_job_verb */
	uint64_t id;
	uint32_t priority; /* release, bury: the priority from now on */
	uint64_t delay;    /* release: ms before it is ready again */
};

struct msg_peek_next {
	struct msg_str tube;
	uint8_t state; /* MSG_ST_READY, _DELAYED or _BURIED */
};

struct msg_list {
	struct msg_str tube;
	uint8_t state;  /* MSG_ST_*; MSG_ST_NONE = every state */
	uint8_t order;  /* MSG_ORDER_* */
	uint32_t limit; /* 1..MSG_LIST_MAX */
	bool payloads;  /* include payloads (else only their size) */
	uint64_t
	    after; /* a cursor: only ids above it (MSG_ORDER_ID); 0: none */
};

/* delete_where: a tube's tasks in one state, at least `older` ms old;
 * with `aged` (flag 0x01), in several states, by the time `by` names */
struct msg_delete_where {
	struct msg_str tube;
	uint8_t state;  /* MSG_ST_READY, _DELAYED, _BURIED or _DONE; with
	                   aged: sent as 0 */
	uint64_t older; /* ms; by created_at, a done task by finished_at */
	bool dry;       /* count the tasks it would delete, delete none */
	bool aged;      /* flag 0x01: u8 states and u8 by follow `older` */
	uint8_t states; /* aged: MSG_STATE_BIT()s of MSG_ST_READY.._DONE */
	uint8_t by;     /* aged: MSG_AGE_* */
	bool force;     /* flag 0x80: taken tasks may be named (their leases
	                   end) */
};

enum {
	MSG_AGE_UPDATED = 1,   /* from the task's last change (updated_at) */
	MSG_AGE_CREATED = 2,   /* from its creation (created_at) */
	MSG_STATES_ALL = 0x3e, /* the bits of MSG_ST_READY .. MSG_ST_DONE */
};
#define MSG_STATE_BIT(s) ((uint8_t)(1u << (s)))

struct msg_pause {
	struct msg_str tube;
	uint64_t duration; /* ms; 0 = resume now */
	bool create; /* flag 0x01: a tube the server never had is made (the
	                beanstalk face); else SLUICE_ENOTFOUND */
};

/* A tube's settings (tube_set, tube_show, stats with `settings`). `set`
 * says which the tube sets itself (MSG_TS_*); in a reply every value is
 * the one in force (the server's default where the tube sets none), and
 * dead_letter is empty unless set. */
enum msg_tube_field {
	MSG_TS_TTR = 0x01,
	MSG_TS_MAX_ATTEMPTS = 0x02,
	MSG_TS_BACKOFF = 0x04, /* base and cap */
	MSG_TS_KEEP_DONE = 0x08,
	MSG_TS_LOST_LEASE = 0x10,
	MSG_TS_DEAD_LETTER = 0x20,
	MSG_TS_ALL = 0x3f
};

struct msg_tube_conf {
	uint8_t set;
	uint64_t ttr; /* ms */
	uint32_t max_attempts;
	uint64_t backoff_base;     /* ms */
	uint64_t backoff_cap;      /* ms */
	uint64_t keep_done;        /* ms */
	bool lost_lease_immediate; /* else a lost lease backs off as a fail */
	struct msg_str dead_letter;
};

/* A tube's flow limits (tube_set and tube_show with flag 0x01): `set`
 * says which the tube has; the values of the others are 0. */
enum msg_limit_field {
	MSG_LIM_RATE = 0x01, /* rate per per_ms, with burst */
	MSG_LIM_CONCURRENCY = 0x02,
	MSG_LIM_ALL = 0x03
};

struct msg_flow {
	uint8_t set;          /* MSG_LIM_* */
	uint32_t rate;        /* tasks per per_ms */
	uint32_t per_ms;      /* 1000 (/s), 60000 (/m) or 3600000 (/h) */
	uint32_t burst;       /* tokens the bucket holds */
	uint32_t concurrency; /* tasks taken at once */
};

/* Where a tube's limits stand (a reply with flag 0x01). */
struct msg_flow_state {
	uint64_t tokens; /* whole tokens in the bucket */
	uint64_t taken;  /* its tasks taken now: slots in use */
	uint64_t held;   /* its ready tasks a limit holds back now */
};

/* tube_set: the fields in conf.set take conf's values, those in `unset`
 * go back to the server's defaults, the others stay; with `limits` (flag
 * 0x01) the same for the limits in flow.set and lunset. tube_show is
 * decoded here too: its tube (also req->tube) and `limits`. */
struct msg_tube_set {
	struct msg_str tube;
	uint8_t unset;
	struct msg_tube_conf conf;
	bool limits; /* flag 0x01: lunset and flow follow the settings */
	uint8_t lunset;
	struct msg_flow flow;
};

#include "proto/msg_group.h"

struct msg_tube_delete {
	struct msg_str tube;
	bool force; /* flag 0x01: its tasks are deleted with it */
};

/* switchover: the leader stops taking writes, waits until `node` holds
 * everything it wrote, then lets only `node` take its lease. */
struct msg_switchover {
	struct msg_str node; /* 1..MSG_NODE_MAX bytes, else SLUICE_EINVAL */
	uint32_t timeout_ms; /* how long to wait for `node` to catch up; 0:
	                        the server's default */
};

/* stats: `tube` first, as the member `tube` of the request it shares
 * its place with. */
struct msg_stats_req {
	struct msg_str tube; /* len 0 = every tube */
	bool settings;  /* flag 0x01: each tube's settings follow its counts */
	bool durations; /* flag 0x02: the duration histograms of the busiest
	                   tubes among their pairs (protocol.md) */
	/* Of every tube, a part (protocol.md, "The stats reply"): */
	bool page;      /* flag 0x04: `limit` tubes from cursor `after` */
	bool top;       /* flag 0x08: the `limit` deepest tubes */
	uint32_t limit; /* page: 1..MSG_STATS_TUBES_MAX; top: 0 (the
	                   server's choice) ..MSG_STATS_TUBES_MAX */
	uint32_t after; /* page: 0 first, then the reply's tubes_next */
};

/* history and stats_hourly: msg_history.h, part of this header. */
#include "proto/msg_history.h"

/* errors: `tube` first, as the member `tube` of the request it shares its
 * place with. */
struct msg_errors_req {
	struct msg_str tube;
	bool ids; /* flag 0x01: each group with up to MSG_ERROR_IDS ids */
	/* flag 0x02: a u8 state follows the tube: the tasks counted are
	 * those in it (MSG_ST_READY, _DELAYED, _TAKEN or _BURIED), or in
	 * every live state (MSG_ST_NONE). Without it: buried. */
	bool set_state;
	uint8_t state;
};

/* delete_key, peek_key: a key of a tube. `key` first, as the member `key`
 * of the request it shares its place with. A tube of 0 bytes: the
 * request has none (a client from before keys were per tube; the server
 * answers EINVAL saying so). */
struct msg_by_key {
	struct msg_str key;
	struct msg_str tube; /* flag 0x01 */
};

#include "proto/msg_groups.h"

/* A request. `op` selects the member:
 *   put put_batch take ack release fail ack_batch delete_batch update
 *   touch, bury                  -> lease
 *   kick                         -> kick
 *   kick_id, delete, peek        -> id
 *   delete_key, peek_key         -> by_key (its key is also `key`)
 *   flush                        -> tube
 *   errors                       -> errors (its tube is also `tube`)
 *   stats                        -> stats (its tube is also `tube`)
 *   tube_set tube_delete
 *   tube_show                    -> tube (and tube_set.limits)
 *   stats_hourly                 -> tube (len 0 = every tube)
 *   peek_next list pause
 *   delete_where                 -> where
 *   follow                       -> url (1..MSG_URL_MAX bytes)
 *   auth                         -> token (1..MSG_TOKEN_MAX bytes)
 *   history                      -> history
 *   groups                       -> groups (its tube is also `tube`)
 *   group                        -> group
 *   job switchover
 *   map_set                      -> map_set
 *   map_delete                   -> map_prefix (0 bytes: the default)
 *   snapshot, promote, cluster,
 *   map                          -> nothing */
struct msg_req {
	uint8_t op;
	bool with_batch; /* peek, flag 0x01: the task's batch in the reply */
	union {
		struct msg_put put;
		struct msg_put_batch put_batch;
		struct msg_ack_batch ack_batch;
		struct msg_delete_batch delete_batch; /* and cancel */
		struct msg_wait wait;
		struct msg_update update;
		struct msg_take take;
		struct msg_ack ack;
		struct msg_release release;
		struct msg_fail fail;
		struct msg_lease lease;
		struct msg_kick kick;
		uint64_t id;
		struct msg_str key;
		struct msg_by_key by_key;
		struct msg_str tube;
		struct msg_peek_next peek_next;
		struct msg_list list;
		struct msg_pause pause;
		struct msg_delete_where where;
		struct msg_str url;
		struct msg_str token;
		struct msg_job job;
		struct msg_stats_req stats;
		struct msg_groups_req groups;
		struct msg_tube_set tube_set;
		struct msg_tube_delete tube_delete;
		struct msg_switchover switchover;
		struct msg_history_req history;
		struct msg_errors_req errors;
		struct msg_group_req group;
		struct msg_sched_set sched_set;
		struct msg_batch_req batch;
		struct msg_sched_ctl sched;
		struct msg_map_entry map_set;
		struct msg_str map_prefix; /* map_delete */
		struct msg_move_req move;  /* move_out, move_in, move_end */
	};
};

/* ---- replies ------------------------------------------------------- */

/* One task, as take, peek and list return it. */
struct msg_task {
	uint64_t id;
	uint64_t lease; /* the current lease while taken, else 0 */
	uint8_t state;  /* MSG_ST_READY .. MSG_ST_DONE */
	bool detached;  /* the lease is detached from its session */
	uint32_t priority;
	uint32_t attempts; /* times taken */
	uint32_t max_attempts;
	uint64_t ttr;        /* ms */
	uint64_t run_at;     /* unix ms the task is (or was) due */
	uint64_t period;     /* ms; 0 = not recurring */
	uint64_t created_at; /* unix ms */
	uint64_t updated_at; /* unix ms */
	uint64_t taken_at;   /* unix ms of the last take; 0 = never */
	uint64_t deadline;   /* unix ms the lease ends; 0 unless taken */
	uint32_t size;       /* payload size, even when payload is omitted */
	struct msg_str tube;
	struct msg_str key;        /* len 0 = no key */
	struct msg_str last_error; /* len 0 = none */
	struct msg_str payload;    /* len 0 when omitted (list) */
	/* A replacement waits for the task's lease to end (a put with
	 * replace of a taken task): flag 0x02 of the record, then these
	 * fields after the payload, the content the task takes then. */
	bool replace_pending;
	struct {
		uint32_t priority;
		uint32_t max_attempts;
		uint64_t ttr;
		uint64_t run_at; /* as asked; a past time means at once */
		uint64_t period;
		uint32_t size;
		struct msg_str payload; /* len 0 when omitted (list) */
		uint64_t version;       /* 0 = none */
	} pending;
	/* A done task (state MSG_ST_DONE): record flag 0x04, these fields
	 * after the payload. */
	struct {
		uint64_t finished_at; /* unix ms of its ack */
		uint64_t kept_until;  /* unix ms it is purged */
		uint64_t duration;    /* ms from its last take to its ack */
		struct msg_str result;
	} done;
	/* The client's version (a put with if_newer), and the pending
	 * replacement's: flag 0x08 of the record and two u64 at its end,
	 * when either is not 0. */
	uint64_t version;
	/* Who holds a session lease (taken, not detached): record flag
	 * 0x10 and these fields last, when `session` is not 0. */
	struct {
		uint32_t session;    /* the server's id of the connection */
		struct msg_str peer; /* its address; len 0 = not known */
	} holder;
	struct msg_str group; /* its fair group: record flag 0x20 */
	bool with_batch;      /* peek's reply, flag 0x01: `batch` follows */
	struct msg_str batch; /* the batch it is in; len 0: none */
	/* Its parents and children: record flag 0x40, last (msg_deps.c) */
	bool has_deps;
	struct {
		uint8_t on_parent_failure;  /* enum msg_on_parent */
		uint32_t pending, nparents; /* not acked yet; all */
		/* encode: parents, or ids and a function that tells each
		 * one's outcome and result; results only with `results` */
		const struct msg_parent *parents;
		const uint64_t *parent_ids;
		void (*parent_get)(
		    void *arg, uint64_t id, struct msg_parent *out);
		void *parent_arg;
		bool results;
		struct msg_iter parents_it;  /* decode: msg_next_parent() */
		uint32_t nchildren, nshown;  /* all; sent, <= 1000 */
		const uint64_t *children;    /* encode */
		struct msg_iter children_it; /* decode: msg_next_id() */
	} deps;
	bool cancelled; /* record flag 0x80: taken and cancelled (its lease's
	                   end removes it; its holder's touch is refused) */
};

/* wait's reply: how task `id` stands (msg_result.c). */
struct msg_result {
	uint64_t id;
	uint8_t state;  /* final: MSG_ST_DONE, _BURIED, MSG_END_*; else now */
	bool final;     /* it ended: done, or failed for good */
	bool cancelled; /* reply flag 0x01: taken and cancelled */
	uint64_t time;  /* final: unix ms it ended; else 0 */
	struct msg_str tube;
	struct msg_str text; /* done: its result; else its last error */
};

/* take and list */
struct msg_tasks {
	uint32_t n;                   /* take: 0 = nothing before the wait */
	const struct msg_task *tasks; /* encode */
	struct msg_iter it;           /* decode: msg_next_task() */
};

/* put's result, and one item of a batch put's. */
struct msg_put_res {
	uint16_t status; /* batch items: 0 or a SLUICE_E* code; put: 0 */
	bool created;   /* false: the key was live, `id` is the existing task */
	bool stale;     /* if_newer was not newer than the task's version:
	                   nothing changed (`created` byte 2) */
	bool throttled; /* within the key's throttle window: ignored, `id`
	                   is the task that opened it (`created` byte 3) */
	uint64_t id;    /* 0 when status != 0 */
	struct msg_str message; /* batch reply with flag 0x01: why the item
	                           was refused (0..MSG_TEXT_MAX bytes) */
};

struct msg_put_batch_res {
	uint32_t n;                      /* one per item, in request order */
	bool messages;                   /* flag 0x01: items carry a text */
	const struct msg_put_res *items; /* encode */
	struct msg_iter it;              /* decode: msg_next_put_res() */
};

/* One result of ack_batch or delete_batch. */
struct msg_item_res {
	uint16_t status;        /* 0 or the item's SLUICE_E* code */
	struct msg_str message; /* with flag 0x01: why it was refused */
};

struct msg_batch_res {
	uint32_t n;                       /* one per item, in request order */
	bool messages;                    /* flag 0x01: items carry a text */
	const struct msg_item_res *items; /* encode */
	struct msg_iter it;               /* decode: msg_next_item_res() */
};

/* ack, release, fail, touch, bury, kick_id: the task after the op. */
struct msg_after {
	uint64_t id;
	uint8_t state;     /* MSG_ST_NONE: gone (acked, not recurring) */
	uint64_t run_at;   /* when delayed: unix ms it becomes ready */
	uint64_t deadline; /* when taken (touch): unix ms the lease ends */
	bool replaced;     /* reply flag 0x01 (asked by the request's flag
	                      0x40): the lease ended by a pending replacement
	                      taking the task's place; it waits again */
};

struct msg_kv {
	struct msg_str name; /* 1..MSG_NAME_MAX bytes of [a-z0-9_] */
	uint64_t value;
};

struct msg_kvs {
	uint32_t n;               /* 0..65535 */
	const struct msg_kv *kvs; /* encode */
	struct msg_iter it;       /* decode: msg_next_kv() */
};

/* Counts of one tube, or of all of them (totals, name empty). */
struct msg_tube_stats {
	struct msg_str name;
	uint64_t ready, delayed, taken, buried;
	uint64_t paused_until;     /* unix ms; 0 = not paused */
	uint64_t oldest_ready_age; /* ms; 0 = nothing ready */
	struct msg_kvs more;       /* cumulative counters (protocol.md) */
	struct msg_tube_conf conf; /* tubes of a stats with `settings` */
};

struct msg_stats {
	uint8_t role; /* MSG_ROLE_* */
	uint64_t epoch;
	uint64_t lsn;          /* last LSN written */
	uint64_t durable_lsn;  /* last LSN durable under the fsync policy */
	uint64_t now;          /* the server's clock, unix ms */
	struct msg_str leader; /* followers: the leader's client URL */
	struct msg_tube_stats totals;
	struct msg_kvs more; /* log and replication state (protocol.md) */
	bool settings;       /* reply flag 0x01 (asked by the request's): each
	                        tube carries its settings (conf) */
	uint32_t ntubes;
	const struct msg_tube_stats *tubes; /* encode */
	struct msg_iter it;                 /* decode: msg_next_tube_stats() */
};

enum { MSG_ERROR_IDS = 3 }; /* example ids per group, at most */

struct msg_error_count {
	struct msg_str text;
	uint64_t count;
	uint8_t nids; /* with the reply's flag 0x01: 0..MSG_ERROR_IDS */
	uint64_t ids[MSG_ERROR_IDS]; /* example tasks, lowest ids first */
};

struct msg_errors {
	bool ids; /* reply flag 0x01 (asked by the request's): each group
	             carries example ids */
	uint32_t n;
	const struct msg_error_count *errors; /* encode */
	struct msg_iter it; /* decode: msg_next_error_count() */
};

/* cluster: msg_node.h, part of this header. */
#include "proto/msg_node.h"

/* A reply. With status != 0 only `err` is meaningful (its message, and
 * for SLUICE_ENOTLEADER the leader's client URL, possibly empty). With
 * status 0, `op` selects the member:
 *   put -> put          put_batch -> put_batch     take, list -> tasks
 *   ack_batch, delete_batch, cancel -> batch    wait -> result
 *   job -> tasks (the task after the op; none when deleted)
 *   ack release fail touch bury kick_id update -> after
 *   kick, flush, delete_where -> count
 *   delete_key -> id (of the deleted task)
 *   peek peek_key peek_next -> task          stats -> stats
 *   errors -> errors    pause -> until (unix ms; 0 = resumed)
 *   tube_set, tube_show -> tube_conf    tube_delete -> count (its tasks)
 *   stats_hourly -> hours
 *   snapshot -> lsn (the snapshot covers up to it)
 *   promote -> epoch (the new one)
 *   cluster -> cluster   switchover -> switchover
 *   history -> history    groups -> groups    group -> group
 *   map -> map        map_set, map_delete -> revision
 *   delete, follow -> nothing */
struct msg_rep {
	uint8_t op;
	uint16_t status; /* 0, or a SLUICE_E* code */
	union {
		struct {
			struct msg_str message; /* 0..MSG_TEXT_MAX bytes */
			struct msg_str leader;  /* 0..MSG_URL_MAX bytes */
		} err;
		struct msg_put_res put;
		struct msg_put_batch_res put_batch;
		struct msg_batch_res batch;
		struct msg_tasks tasks;
		struct msg_after after;
		struct msg_result result;
		uint64_t count;
		uint64_t id;
		struct msg_task task;
		struct msg_stats stats;
		struct msg_errors errors;
		struct msg_groups groups;
		struct msg_hours hours;
		uint64_t until;
		uint64_t lsn;
		uint64_t epoch;
		uint64_t revision;
		struct {
			struct msg_str tube;
			struct msg_tube_conf conf;
			bool limits; /* flag 0x01, when asked: flow, state */
			struct msg_flow flow;
			struct msg_flow_state state;
		} tube_conf;
		struct msg_cluster cluster;
		struct msg_history history;
		struct msg_group_rep group;
		struct msg_scheds scheds;        /* the schedule ops */
		struct msg_batch_rep batch_info; /* the batch ops */
		struct msg_map map;
		struct msg_move_rep move;
		struct {
			struct msg_str leader; /* the new leader's client URL,
			                          0..MSG_URL_MAX */
			uint64_t epoch;        /* its epoch */
		} switchover;
	};
};

/* ---- API ------------------------------------------------------------ */

/* Appends the encoding of `req` to `b`. Returns 0; the SLUICE_E* code a
 * decoder would give for a field outside its limits (SLUICE_ETUBE,
 * SLUICE_EKEY, SLUICE_ELIMIT, SLUICE_EINVAL, SLUICE_EUNKNOWNOP,
 * SLUICE_EMSGSIZE), except that an undefined enum value (state, order,
 * role, member flags) is SLUICE_EINVAL here where a decoder says
 * SLUICE_EPROTO; or
 * -ENOMEM. No payload limit is applied (the server's
 * is configurable), but the message must stay within MSG_SIZE_MAX. */
int msg_encode_req(struct buf *b, const struct msg_req *req);

/* Decodes a request from `len` bytes at `p`. Returns 0 and fills `*out`
 * (borrowing from `p`), or: SLUICE_EMSGSIZE (len > msg_max), SLUICE_EPROTO
 * (bad magic, unknown flag bits or enum value, bytes left over),
 * SLUICE_EVERSION, SLUICE_EUNKNOWNOP, SLUICE_ETRUNC (ends too early),
 * SLUICE_ETOOBIG (payload > payload_max), SLUICE_ETUBE, SLUICE_EKEY,
 * SLUICE_ELIMIT (a count or text over its limit), SLUICE_EINVAL (a value
 * out of range: take/list/kick count 0, replace without a key, peek_next of
 * any state byte other than ready/delayed/buried, a node name empty, over
 * MSG_NODE_MAX bytes or holding a NUL byte). `*out` is written only on
 * success. */
int msg_decode_req(const void *p, size_t len, const struct msg_limits *lim,
    struct msg_req *out);

/* The op byte of a request that may not decode, for the error reply; 0
 * when the message is too short to have one. */
uint8_t msg_req_op(const void *p, size_t len);

/* Appends the encoding of `rep` to `b`. With status != 0 only `err` is
 * read. Same results as msg_encode_req (SLUICE_EINVAL for a status that is
 * not a SLUICE_E* code in 1..65535). */
int msg_encode_rep(struct buf *b, const struct msg_rep *rep);

/* Appends an error reply: the common case of msg_encode_rep. `message`
 * and `leader` may be NULL (empty); longer texts are cut at their limit.
 * `status` must be > 0 and < 65536, else SLUICE_EINVAL. */
int msg_encode_err(struct buf *b, uint8_t op, int status, const char *message,
    const char *leader);

/* Decodes a reply. Results as msg_decode_req; an error reply (status != 0)
 * decodes whatever its op byte, so the reply to an unknown op is readable.
 * A reply's own version is checked: SLUICE_EVERSION. */
int msg_decode_rep(const void *p, size_t len, const struct msg_limits *lim,
    struct msg_rep *out);

/* Iterators over decoded lists: true and the next element, or false when
 * all `n` were returned. Elements borrow from the message. */
bool msg_next_put(struct msg_iter *it, struct msg_put *out);
bool msg_next_str(struct msg_iter *it, struct msg_str *out);
bool msg_next_task(struct msg_iter *it, struct msg_task *out);
bool msg_next_put_res(struct msg_iter *it, struct msg_put_res *out);
bool msg_next_ack_item(struct msg_iter *it, struct msg_ack_item *out);
bool msg_next_id(struct msg_iter *it, uint64_t *out);
bool msg_next_key(struct msg_iter *it, struct msg_str *out);
bool msg_next_parent(struct msg_iter *it, struct msg_parent *out);
bool msg_next_item_res(struct msg_iter *it, struct msg_item_res *out);
bool msg_next_kv(struct msg_iter *it, struct msg_kv *out);
bool msg_next_tube_stats(struct msg_iter *it, struct msg_tube_stats *out);
bool msg_next_error_count(struct msg_iter *it, struct msg_error_count *out);
bool msg_next_hour(struct msg_iter *it, struct msg_hour *out);
bool msg_next_member(struct msg_iter *it, struct msg_member *out);

/* True when `len` bytes at `p` are a valid tube name. */
bool msg_tube_valid(const char *p, size_t len);

/* Why `s` is no tube name, as a sentence that names it and its first bad
 * byte ("tube 'a b' has ' ' at byte 2; a tube name is 1-200 bytes of
 * A-Z a-z 0-9 _ . : / -"), written to `out` (cap bytes, cut short if
 * need be). */
void msg_tube_why(struct msg_str s, char *out, size_t cap);

/* The first tube name `q` holds that its encoder refuses (the cause of
 * its SLUICE_ETUBE): true and `*out`, or false when it holds none. */
bool msg_req_bad_tube(const struct msg_req *q, struct msg_str *out);

/* "put", "put_batch", ...; NULL for an unknown op. */
const char *msg_op_name(uint8_t op);

/* "ready", "delayed", "taken", "buried"; "none" for 0; NULL if unknown. */
const char *msg_state_name(uint8_t state);

/* A state of wait's reply: msg_state_name's, or "deleted", "cancelled",
 * "dead_lettered"; NULL if unknown. */
const char *msg_result_state_name(uint8_t state);

/* "follower", "leader", "candidate", "fenced"; NULL if unknown. */
const char *msg_node_role_name(uint8_t role);

/* "attempts", "age", "run_at"; NULL if unknown. */
const char *msg_order_name(uint8_t order);

/* True for the requests that may be sent again after a lost connection
 * without changing the outcome: peeks, stats, list, errors, cluster, and puts
 * (single or batch) where every task has a key. */
bool msg_req_idempotent(const struct msg_req *req);

/* A C string as a msg_str (NULL gives an empty one). */
struct msg_str msg_cstr(const char *s);

#endif
