/* msg_wire - what the files of the wire codec share (msg.c: framing and
 * dispatch; msg_field.c: the fields and their checks; msg_task.c,
 * msg_lease.c, msg_tube.c, msg_stats.c, msg_node.c: the messages, one
 * family a file): the header's flag bits, the decoders' macros, the field
 * getters and putters, and each family's entry points. Internal to
 * src/proto/msg*.c: the codec's interface is msg.h. */
#ifndef SLUICE_PROTO_MSG_WIRE_H
#define SLUICE_PROTO_MSG_WIRE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"
#include "util/buf.h"

/* Flag bits of the header's fourth byte, per op (msg.c's tables say which
 * op may set which). */
enum {
	PUT_F_REPLACE = 0x01,
	PUT_F_AT = 0x02,
	PUT_F_IF_NEWER = 0x04, /* a u64 version follows the payload */
	PUT_F_GROUP = 0x08,    /* a str16 group follows */
	PUT_F_EXT = 0x10,      /* tagged fields follow, last (msg_deps.c) */
	PUT_F_THROTTLE = 0x40, /* a u64 window (ms) follows, after debounce's */
	PUT_F_DEBOUNCE =
	    0x80, /* a u64 window (ms) follows, after the version */
	PUT_F_ALL = PUT_F_REPLACE | PUT_F_AT | PUT_F_IF_NEWER | PUT_F_GROUP |
	    PUT_F_THROTTLE | PUT_F_DEBOUNCE | PUT_F_EXT,
	PUT_RES_STALE = 2, /* put result's `created`: if_newer was not newer */
	PUT_RES_THROTTLED = 3, /* put result's `created`: within the key's
	                          throttle window, ignored */
	TAKE_F_DETACH = 0x01,
	TAKE_F_STRICT = 0x02,
	TAKE_F_DURABLE = 0x04,
	RELEASE_F_PRIORITY = 0x01,
	RELEASE_F_FRONT = 0x02,  /* back at its place before the take */
	RELEASE_F_UNTAKE = 0x04, /* the take undone: attempt uncounted */
	FAIL_F_DELAY = 0x01,
	FAIL_F_FATAL = 0x02, /* buried at once, whatever the attempts */
	BURY_F_ERROR = 0x01, /* an error text follows the lease */
	LIST_F_PAYLOADS = 0x01,
	LIST_F_AFTER = 0x02, /* a cursor (u64) follows the limit */
	KICK_F_DELAYED = 0x01,
	KICK_F_ERROR = 0x02, /* a text follows n: only buried tasks of that
	                       last error */
	KICK_F_DRY = 0x80,   /* count what it would kick, kick nothing */
	TASK_F_DETACHED = 0x01,
	TASK_F_PENDING = 0x02,     /* a replacement is pending: fields follow */
	TASK_F_DONE = 0x04,        /* a done task: its fields follow */
	TASK_F_VERSION = 0x08,     /* versions follow, after the done fields */
	TASK_F_HOLDER = 0x10,      /* the lease's session follows */
	TASK_F_GROUP = 0x20,       /* a str16 group follows */
	TASK_F_DEPS = 0x40,        /* its dependencies follow, last */
	TASK_F_CANCELLED = 0x80,   /* taken and cancelled (no field) */
	RESULT_F_CANCELLED = 0x01, /* wait's reply: taken and cancelled */
	ACK_F_RESULT = 0x01,       /* a result text follows the to_tube */
	LEASE_F_REPORT = 0x40,     /* ack release fail bury: tell REPLACED */
	REP_F_REPLACED = 0x01,     /* their reply: a replacement took over */
	LEASE_F_FORCE = 0x80, /* ack release fail touch bury: no lease check */
	PAUSE_F_CREATE = 0x01,
	STATS_F_SETTINGS = 0x01,  /* stats, request and reply */
	ERRORS_F_IDS = 0x01,      /* errors, request and reply */
	ERRORS_F_STATE = 0x02,    /* errors request: a u8 state follows */
	STATS_F_DURATIONS = 0x02, /* stats request: histograms in the pairs */
	STATS_F_PAGE = 0x04,      /* stats request: u32 limit, u32 after */
	STATS_F_TOP = 0x08,       /* stats request: u32 limit, the deepest */
	TUBE_DELETE_F_FORCE = 0x01,
	WHERE_F_AGED = 0x01,     /* delete_where: u8 states, u8 by follow */
	WHERE_F_DRY = 0x40,      /* delete_where: count, delete nothing */
	WHERE_F_FORCE = 0x80,    /* delete_where: taken tasks too */
	TUBE_F_LIMITS = 0x01,    /* tube_set, tube_show, request and reply:
	                            the flow limits follow the settings */
	SCHED_F_PAUSED = 0x01,   /* sched_set: created paused */
	SCHED_F_PAYLOADS = 0x02, /* sched_list, request and reply */
	KEY_F_TUBE = 0x01, /* delete_key, peek_key: the key's tube follows */
	BATCH_F_MESSAGES = 0x01, /* put_batch, request and reply */
	BATCH_F_LIST = 0x01,     /* batch_show, request and reply */
	PEEK_F_BATCH = 0x01,     /* peek, request and reply: the task's batch
	                            (str16, after the task; empty: none) */
	UPD_F_PRIORITY = 0x01,   /* update: the fields it sets */
	UPD_F_DELAY = 0x02,
	UPD_F_AT = 0x04,
	UPD_F_TTR = 0x08,
	UPD_F_MAX_ATTEMPTS = 0x10,
	UPD_F_PAYLOAD = 0x20,
	UPD_F_ALL = 0x3f,
	/* id .. size: the fixed part of a task record, in bytes */
	TASK_FIXED = 8 + 8 + 1 + 1 + 4 + 4 + 4 + 8 * 7 + 4,
};

/* A put's tagged fields and a task's dependencies (msg_deps.c). */
int msg_get_put_ext(struct rd *r, uint8_t flags, struct msg_put *p);
int msg_put_put_ext(struct buf *b, const struct msg_put *p);
int msg_get_task_deps(struct rd *r, uint8_t flags, struct msg_task *t);
int msg_put_task_deps(struct buf *b, const struct msg_task *t);

/* Each getter returns 0 or the error of the first problem it meets. */
#define NEED(r)                                                                \
	do {                                                                   \
		if (rd_failed(r))                                              \
			return SLUICE_ETRUNC;                                  \
	} while (0)

#define TRY(expr)                                                              \
	do {                                                                   \
		int rc_ = (expr);                                              \
		if (rc_ != 0)                                                  \
			return rc_;                                            \
	} while (0)

/* A list of `n` elements: `it` is set to read them again (msg_next_*()),
 * then each is checked now with `get`, which reads one from `r`. */
#define GET_EACH(it, r, n, pmax, get)                                          \
	do {                                                                   \
		msg_iter_start((it), (r), (n), (pmax));                        \
		for (uint32_t i_ = 0; i_ < (n); i_++)                          \
			TRY(get);                                              \
	} while (0)

/* The element was checked by the decoder; failing now is a bug. */
#define NEXT(it, getter)                                                       \
	do {                                                                   \
		int rc_;                                                       \
		if ((it)->left == 0)                                           \
			return false;                                          \
		rc_ = (getter);                                                \
		assert(rc_ == 0);                                              \
		(void)rc_;                                                     \
		(it)->left--;                                                  \
		return true;                                                   \
	} while (0)

/* Element `i` of a list an encoder writes. A message the server built
 * holds the list as an array (`arr`); one decoded from the wire and sent
 * on holds none, only its iterator: a copy of it, `it`, walked in step
 * with `i` by `next` into `tmp`. NULL when neither has element `i` (a
 * built message whose array is missing): the encoder refuses it. */
#define LIST_AT(arr, i, it, next, tmp)                                         \
	((arr) != NULL ? &(arr)[i] : (next)(&(it), &(tmp)) ? &(tmp) : NULL)

/* A family of messages: its ops' bodies, both ways. The head (magic,
 * version, op, flags, status) is msg.c's; a family sees only known ops
 * of its own, with flags msg.c has checked against its tables. A NULL
 * flags function means no flags. */
struct msg_family {
	int (*get_req)(struct rd *r, uint8_t op, uint8_t flags, size_t pmax,
	    struct msg_req *q);
	int (*put_req)(struct buf *b, const struct msg_req *q);
	uint8_t (*req_flags)(const struct msg_req *q);
	int (*get_rep)(struct rd *r, uint8_t op, uint8_t flags, size_t pmax,
	    struct msg_rep *m);
	int (*put_rep)(struct buf *b, const struct msg_rep *m);
	uint8_t (*rep_flags)(const struct msg_rep *m);
};

extern const struct msg_family msg_task_family;
extern const struct msg_family msg_lease_family;
extern const struct msg_family msg_tube_family;
extern const struct msg_family msg_stats_family;
extern const struct msg_family msg_node_family;
extern const struct msg_family msg_groups_family; /* msg_groups.c */
extern const struct msg_family msg_group_family;

/* A tube's flow limits (msg_tube.c): u8 set, u32 rate, u32 per_ms,
 * u32 burst, u32 concurrency. */
int msg_get_flow(struct rd *r, struct msg_flow *out);
int msg_put_flow(struct buf *b, const struct msg_flow *f);
extern const struct msg_family msg_sched_family;
extern const struct msg_family msg_batch_family; /* msg_batch.c */
extern const struct msg_family msg_result_family;
extern const struct msg_family msg_map_family;
extern const struct msg_family msg_move_family; /* msg_move.c */
/* A take reply's tasks (msg_task.c): u32 n, then each task. */
int msg_get_tasks(struct rd *r, size_t pmax, struct msg_tasks *t);
int msg_put_tasks(struct buf *b, const struct msg_tasks *t);

/* ---- msg_field.c: each returns 0 or the first problem's SLUICE_E* */

int msg_check_tube(struct msg_str s, bool empty_ok);
int msg_check_key(struct msg_str s, bool required);
int msg_check_text(struct msg_str s, size_t max);
int msg_check_node(struct msg_str s, bool empty_ok);
bool msg_name_valid(struct msg_str s);
bool msg_state_valid(uint8_t st);
int msg_check_count(uint32_t n, uint32_t max);
void msg_iter_start(
    struct msg_iter *it, const struct rd *r, uint32_t n, size_t pmax);
int msg_get_bytes(
    struct rd *r, size_t len, size_t max, int too_long, struct msg_str *out);
int msg_get_str(struct rd *r, size_t max, int too_long, struct msg_str *out);
int msg_get_tube(struct rd *r, bool empty_ok, struct msg_str *out);
int msg_get_key(struct rd *r, bool required, struct msg_str *out);
int msg_get_text(struct rd *r, size_t max, struct msg_str *out);
int msg_get_node(struct rd *r, bool empty_ok, struct msg_str *out);
int msg_get_payload(struct rd *r, size_t max, struct msg_str *out);
void msg_put_str(struct buf *b, struct msg_str s);
int msg_put_tube(struct buf *b, struct msg_str s, bool empty_ok);
int msg_put_key(struct buf *b, struct msg_str s, bool required);
int msg_put_text(struct buf *b, struct msg_str s, size_t max);
int msg_put_node(struct buf *b, struct msg_str s, bool empty_ok);
int msg_put_payload(struct buf *b, struct msg_str s);

/* ---- msg_lease.c: the reply of the lease ops, kick_id and update (the
 * task as the op left it) */

int msg_get_after(struct rd *r, uint8_t flags, struct msg_rep *m);
int msg_put_after(struct buf *b, const struct msg_rep *m);

/* ---- msg_tube.c: a tube's settings record (tube_set, tube_show, stats)
 * and the one-u64 reply of the tube ops, delete_key, snapshot and
 * promote */

int msg_get_tube_conf(struct rd *r, struct msg_tube_conf *out);
int msg_put_tube_conf(struct buf *b, const struct msg_tube_conf *c);
int msg_get_count(struct rd *r, struct msg_rep *m);
int msg_put_count(struct buf *b, const struct msg_rep *m);

#endif
