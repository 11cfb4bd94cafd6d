/* msg - encode and decode wire messages (layout: docs/protocol.md).
 *
 * Design. Every field goes through one checker shared by both directions
 * (check_tube, check_key, check_text, ...), so the encoder refuses exactly
 * what the decoder would refuse and an encoded message always decodes.
 * The decoder reads with `struct rd`, which never reads out of bounds and
 * turns a short read into a sticky `bad` flag; every getter here tests that
 * flag before it looks at a length or a value, so a truncated message is
 * reported as SLUICE_ETRUNC and never as a limit or range error computed
 * from a zero that was not really there.
 *
 * Lists are validated element by element at decode time, and the iterator
 * keeps a copy of the reader at the first element: msg_next_*() runs the
 * same getter again, which cannot fail the second time.
 *
 * Error precedence within a field: a declared length over its limit is the
 * limit's error (ETOOBIG, ETUBE, EKEY, ELIMIT) even if the bytes are
 * missing; otherwise missing bytes are ETRUNC. */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "proto/msg.h"
#include "sluice.h"

enum {
	PUT_F_REPLACE = 0x01,
	PUT_F_AT = 0x02,
	PUT_F_IF_NEWER = 0x04, /* a u64 version follows the payload */
	PUT_F_ALL = PUT_F_REPLACE | PUT_F_AT | PUT_F_IF_NEWER,
	PUT_RES_STALE = 2, /* put result's `created`: if_newer was not newer */
	TAKE_F_DETACH = 0x01,
	TAKE_F_STRICT = 0x02,
	TAKE_F_DURABLE = 0x04,
	RELEASE_F_PRIORITY = 0x01,
	FAIL_F_DELAY = 0x01,
	FAIL_F_FATAL = 0x02, /* buried at once, whatever the attempts */
	BURY_F_ERROR = 0x01, /* an error text follows the lease */
	LIST_F_PAYLOADS = 0x01,
	LIST_F_AFTER = 0x02, /* a cursor (u64) follows the limit */
	KICK_F_DELAYED = 0x01,
	TASK_F_DETACHED = 0x01,
	TASK_F_PENDING = 0x02, /* a replacement is pending: fields follow */
	TASK_F_DONE = 0x04,    /* a done task: its fields follow */
	TASK_F_VERSION = 0x08, /* versions follow, after the done fields */
	TASK_F_HOLDER = 0x10,  /* the lease's session follows, last */
	ACK_F_RESULT = 0x01,   /* a result text follows the to_tube */
	LEASE_F_REPORT = 0x40, /* ack release fail bury: tell REPLACED */
	REP_F_REPLACED = 0x01, /* their reply: a replacement took over */
	LEASE_F_FORCE = 0x80,  /* ack release fail touch bury: no lease check */
	PAUSE_F_CREATE = 0x01,
	STATS_F_SETTINGS = 0x01,  /* stats, request and reply */
	ERRORS_F_IDS = 0x01,      /* errors, request and reply */
	STATS_F_DURATIONS = 0x02, /* stats request: histograms in the pairs */
	STATS_F_PAGE = 0x04,      /* stats request: u32 limit, u32 after */
	STATS_F_TOP = 0x08,       /* stats request: u32 limit, the deepest */
	TUBE_DELETE_F_FORCE = 0x01,
	KEY_F_TUBE = 0x01, /* delete_key, peek_key: the key's tube follows */
	BATCH_F_MESSAGES = 0x01, /* put_batch, request and reply */
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

/* Flag bits each request op may set in the header. */
static const uint8_t req_flags[MSG_OP_END_] = {
	[MSG_OP_PUT] = PUT_F_ALL,
	[MSG_OP_PUT_BATCH] = BATCH_F_MESSAGES,
	[MSG_OP_TAKE] = TAKE_F_DETACH | TAKE_F_STRICT | TAKE_F_DURABLE,
	[MSG_OP_ACK] = LEASE_F_FORCE | LEASE_F_REPORT | ACK_F_RESULT,
	[MSG_OP_RELEASE] = RELEASE_F_PRIORITY | LEASE_F_FORCE | LEASE_F_REPORT,
	[MSG_OP_FAIL] =
	    FAIL_F_DELAY | FAIL_F_FATAL | LEASE_F_FORCE | LEASE_F_REPORT,
	[MSG_OP_TOUCH] = LEASE_F_FORCE,
	[MSG_OP_BURY] = BURY_F_ERROR | LEASE_F_FORCE | LEASE_F_REPORT,
	[MSG_OP_LIST] = LIST_F_PAYLOADS | LIST_F_AFTER,
	[MSG_OP_KICK] = KICK_F_DELAYED,
	[MSG_OP_PAUSE] = PAUSE_F_CREATE,
	[MSG_OP_ACK_BATCH] = BATCH_F_MESSAGES,
	[MSG_OP_DELETE_BATCH] = BATCH_F_MESSAGES,
	[MSG_OP_UPDATE] = UPD_F_ALL,
	[MSG_OP_STATS] =
	    STATS_F_SETTINGS | STATS_F_DURATIONS | STATS_F_PAGE | STATS_F_TOP,
	[MSG_OP_TUBE_DELETE] = TUBE_DELETE_F_FORCE,
	[MSG_OP_ERRORS] = ERRORS_F_IDS,
	[MSG_OP_DELETE_KEY] = KEY_F_TUBE,
	[MSG_OP_PEEK_KEY] = KEY_F_TUBE,
};

/* Flag bits a reply (status 0) may carry, each one only when its request
 * asked for it, so that a client that asks for nothing gets replies of
 * version 1's first layout. */
static const uint8_t rep_flags[MSG_OP_END_] = {
	[MSG_OP_PUT_BATCH] = BATCH_F_MESSAGES,
	[MSG_OP_ACK] = REP_F_REPLACED,
	[MSG_OP_RELEASE] = REP_F_REPLACED,
	[MSG_OP_FAIL] = REP_F_REPLACED,
	[MSG_OP_BURY] = REP_F_REPLACED,
	[MSG_OP_ACK_BATCH] = BATCH_F_MESSAGES,
	[MSG_OP_DELETE_BATCH] = BATCH_F_MESSAGES,
	[MSG_OP_STATS] = STATS_F_SETTINGS,
	[MSG_OP_ERRORS] = ERRORS_F_IDS,
	[MSG_OP_DELETE_KEY] = KEY_F_TUBE,
	[MSG_OP_PEEK_KEY] = KEY_F_TUBE,
};

static const char *const op_names[MSG_OP_END_] = {
	[MSG_OP_PUT] = "put",
	[MSG_OP_PUT_BATCH] = "put_batch",
	[MSG_OP_TAKE] = "take",
	[MSG_OP_ACK] = "ack",
	[MSG_OP_RELEASE] = "release",
	[MSG_OP_FAIL] = "fail",
	[MSG_OP_TOUCH] = "touch",
	[MSG_OP_BURY] = "bury",
	[MSG_OP_KICK] = "kick",
	[MSG_OP_KICK_ID] = "kick_id",
	[MSG_OP_DELETE] = "delete",
	[MSG_OP_DELETE_KEY] = "delete_key",
	[MSG_OP_FLUSH] = "flush",
	[MSG_OP_PEEK] = "peek",
	[MSG_OP_PEEK_KEY] = "peek_key",
	[MSG_OP_PEEK_NEXT] = "peek_next",
	[MSG_OP_STATS] = "stats",
	[MSG_OP_LIST] = "list",
	[MSG_OP_ERRORS] = "errors",
	[MSG_OP_PAUSE] = "pause",
	[MSG_OP_SNAPSHOT] = "snapshot",
	[MSG_OP_PROMOTE] = "promote",
	[MSG_OP_FOLLOW] = "follow",
	[MSG_OP_RELEASE_ALL] = "release_all",
	[MSG_OP_ACK_BATCH] = "ack_batch",
	[MSG_OP_DELETE_BATCH] = "delete_batch",
	[MSG_OP_UPDATE] = "update",
	[MSG_OP_STATS_HOURLY] = "stats_hourly",
	[MSG_OP_DELETE_WHERE] = "delete_where",
	[MSG_OP_JOB] = "job",
	[MSG_OP_TUBE_SET] = "tube_set",
	[MSG_OP_TUBE_SHOW] = "tube_show",
	[MSG_OP_TUBE_DELETE] = "tube_delete",
	[MSG_OP_CLUSTER] = "cluster",
	[MSG_OP_SWITCHOVER] = "switchover",
	[MSG_OP_AUTH] = "auth",
	[MSG_OP_HISTORY] = "history",
};

static bool
op_known(uint8_t op)
{
	return op > 0 && op < MSG_OP_END_ && op_names[op] != NULL;
}

const char *
msg_op_name(uint8_t op)
{
	return op_known(op) ? op_names[op] : NULL;
}

const char *
msg_state_name(uint8_t state)
{
	static const char *const names[] = { "none", "ready", "delayed",
		"taken", "buried", "done" };

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : NULL;
}

const char *
msg_node_role_name(uint8_t role)
{
	static const char *const names[MSG_NODE_ROLE_END_] = { "follower",
		"leader", "candidate", "fenced" };

	return role < MSG_NODE_ROLE_END_ ? names[role] : NULL;
}

const char *
msg_order_name(uint8_t order)
{
	switch (order) {
	case MSG_ORDER_ATTEMPTS:
		return "attempts";
	case MSG_ORDER_AGE:
		return "age";
	case MSG_ORDER_RUN_AT:
		return "run_at";
	case MSG_ORDER_ID:
		return "id";
	}
	return NULL;
}

struct msg_str
msg_cstr(const char *s)
{
	struct msg_str m = { s ? s : "", s ? strlen(s) : 0 };

	return m;
}

/* ---- field checks, shared by encoder and decoder -------------------- */

bool
msg_tube_valid(const char *p, size_t len)
{
	if (len == 0 || len > MSG_TUBE_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		        (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		        c == ':' || c == '/' || c == '-'))
			return false;
	}
	return true;
}

static int
check_tube(struct msg_str s, bool empty_ok)
{
	if (s.len == 0 && empty_ok)
		return 0;
	return msg_tube_valid(s.p, s.len) ? 0 : SLUICE_ETUBE;
}

static int
check_key(struct msg_str s, bool required)
{
	if (s.len > MSG_KEY_MAX || (s.len == 0 && required))
		return SLUICE_EKEY;
	if (s.len > 0 && memchr(s.p, '\0', s.len) != NULL)
		return SLUICE_EKEY;
	return 0;
}

static int
check_text(struct msg_str s, size_t max)
{
	return s.len > max ? SLUICE_ELIMIT : 0;
}

/* A node's or a cluster's name: 1..MSG_NODE_MAX bytes (0 when `empty_ok`),
 * no NUL byte (libsluice hands them out as C strings). */
static int
check_node(struct msg_str s, bool empty_ok)
{
	if ((s.len == 0 && !empty_ok) || s.len > MSG_NODE_MAX)
		return SLUICE_EINVAL;
	if (s.len > 0 && memchr(s.p, '\0', s.len) != NULL)
		return SLUICE_EINVAL;
	return 0;
}

static bool
name_valid(struct msg_str s)
{
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		        c == '_'))
			return false;
	}
	return true;
}

static bool
state_valid(uint8_t st)
{
	return st >= MSG_ST_READY && st <= MSG_ST_DONE;
}

/* The states a delete_where can name: every state but taken (a task
 * someone holds is deleted by id). */
static bool
where_state_valid(uint8_t st)
{
	return st == MSG_ST_READY || st == MSG_ST_DELAYED ||
	    st == MSG_ST_BURIED || st == MSG_ST_DONE;
}

/* The states peek_next can look into. */
static bool
peek_state_valid(uint8_t st)
{
	return st == MSG_ST_READY || st == MSG_ST_DELAYED ||
	    st == MSG_ST_BURIED || st == MSG_ST_DONE;
}

static bool
order_valid(uint8_t order)
{
	return msg_order_name(order) != NULL;
}

/* A cursor pages in id order only: another order's position moves as
 * tasks are taken and retried, id never does. */
static int
list_cursor_valid(const struct msg_list *l)
{
	return l->after == 0 || l->order == MSG_ORDER_ID ? 0 : SLUICE_EINVAL;
}

/* A count of `n` elements allowed 1..max: 0 is EINVAL, more ELIMIT. */
static int
check_count(uint32_t n, uint32_t max)
{
	if (n == 0)
		return SLUICE_EINVAL;
	return n > max ? SLUICE_ELIMIT : 0;
}

/* A part of the stats of every tube: a page (1..MSG_STATS_TUBES_MAX
 * tubes) or the deepest (0, the server's choice, ..MSG_STATS_TUBES_MAX),
 * not both, and of every tube only; `after` pages only. */
static int
stats_part_check(const struct msg_stats_req *q)
{
	if (q->page && q->top)
		return SLUICE_EINVAL;
	if ((q->page || q->top) && q->tube.len > 0)
		return SLUICE_EINVAL;
	if (!q->page && q->after != 0)
		return SLUICE_EINVAL;
	if (q->page)
		return check_count(q->limit, MSG_STATS_TUBES_MAX);
	if (q->top)
		return q->limit > MSG_STATS_TUBES_MAX ? SLUICE_ELIMIT : 0;
	return q->limit == 0 ? 0 : SLUICE_EINVAL;
}

static bool
history_secs_valid(uint32_t secs)
{
	return secs >= 1 && secs <= MSG_HISTORY_SECS;
}

/* A history reply's shape: a step, 1..KINDS_MAX kinds, 1..SECS slots. */
static int
history_shape(const struct msg_history *h)
{
	if (h->step == 0 || h->kinds == 0 || h->n == 0)
		return SLUICE_EINVAL;
	return h->kinds > MSG_HISTORY_KINDS_MAX || h->n > MSG_HISTORY_SECS
	    ? SLUICE_ELIMIT
	    : 0;
}

uint32_t
msg_history_at(const struct msg_history *h, unsigned k, uint32_t i)
{
	size_t at = (size_t)k * h->n + i;

	if (k >= h->kinds || i >= h->n)
		return 0;
	if (h->values != NULL)
		return h->values[at];
	return h->raw != NULL ? le_load_u32(h->raw + at * 4) : 0;
}

/* ---- decoding: getters ------------------------------------------------ */

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

static void
iter_start(struct msg_iter *it, const struct rd *r, uint32_t n, size_t pmax)
{
	it->r = *r;
	it->left = n;
	it->payload_max = pmax;
	it->flags = 0;
}

/* A list of `n` elements: `it` is set to read them again (msg_next_*()),
 * then each is checked now with `get`, which reads one from `r`. */
#define GET_EACH(it, r, n, pmax, get)                                          \
	do {                                                                   \
		iter_start((it), (r), (n), (pmax));                            \
		for (uint32_t i_ = 0; i_ < (n); i_++)                          \
			TRY(get);                                              \
	} while (0)

/* The `len` bytes after a length just read: at most `max`, `too_long` is
 * the error beyond. */
static int
get_bytes(
    struct rd *r, size_t len, size_t max, int too_long, struct msg_str *out)
{
	const uint8_t *p;

	NEED(r);
	if (len > max)
		return too_long;
	p = rd_bytes(r, len);
	NEED(r);
	out->p = len ? (const char *)p : "";
	out->len = len;
	return 0;
}

/* A str16 of at most `max` bytes; `too_long` is the error beyond. */
static int
get_str(struct rd *r, size_t max, int too_long, struct msg_str *out)
{
	uint16_t len = rd_u16(r);

	return get_bytes(r, len, max, too_long, out);
}

static int
get_tube(struct rd *r, bool empty_ok, struct msg_str *out)
{
	TRY(get_str(r, MSG_TUBE_MAX, SLUICE_ETUBE, out));
	return check_tube(*out, empty_ok);
}

static int
get_key(struct rd *r, bool required, struct msg_str *out)
{
	TRY(get_str(r, MSG_KEY_MAX, SLUICE_EKEY, out));
	return check_key(*out, required);
}

static int
get_text(struct rd *r, size_t max, struct msg_str *out)
{
	return get_str(r, max, SLUICE_ELIMIT, out);
}

static int
get_node(struct rd *r, bool empty_ok, struct msg_str *out)
{
	TRY(get_str(r, MSG_NODE_MAX, SLUICE_EINVAL, out));
	return check_node(*out, empty_ok);
}

static int
get_payload(struct rd *r, size_t max, struct msg_str *out)
{
	uint32_t len = rd_u32(r);

	return get_bytes(r, len, max, SLUICE_ETOOBIG, out);
}

/* With flag 0x04, the version after the payload: at least 1, and only
 * with replace (which has a key). EINVAL otherwise. */
static int
get_if_newer(struct rd *r, uint8_t flags, struct msg_put *p)
{
	if (!(flags & PUT_F_IF_NEWER))
		return 0;
	p->if_newer = rd_u64(r);
	NEED(r);
	return p->if_newer == 0 || !p->replace ? SLUICE_EINVAL : 0;
}

/* The put fields, after the flags that came with them. */
static int
get_put(struct rd *r, uint8_t flags, size_t payload_max, struct msg_put *p)
{
	memset(p, 0, sizeof(*p));
	if (flags & ~PUT_F_ALL)
		return SLUICE_EPROTO;
	p->replace = flags & PUT_F_REPLACE;
	p->at = flags & PUT_F_AT;
	TRY(get_tube(r, false, &p->tube));
	p->priority = rd_u32(r);
	p->when = rd_u64(r);
	p->ttr = rd_u64(r);
	p->max_attempts = rd_u32(r);
	p->period = rd_u64(r);
	TRY(get_key(r, false, &p->key));
	if (p->replace && p->key.len == 0)
		return SLUICE_EINVAL;
	TRY(get_payload(r, payload_max, &p->payload));
	return get_if_newer(r, flags, p);
}

/* A field of a batch item: a length (just read) and its bytes. A length
 * over `max` whose bytes are all there is the item's error `err` (kept in
 * *item_err when it is the first); over `max` with bytes missing, the
 * request's (section 2 of the protocol: a limit before a truncation). */
static int
get_item_bytes(struct rd *r, size_t len, size_t max, int err,
    struct msg_str *out, int *item_err)
{
	NEED(r);
	if (len > max && rd_left(r) < len)
		return err;
	TRY(get_bytes(r, len, SIZE_MAX, err, out));
	if (len > max && *item_err == 0)
		*item_err = err;
	return 0;
}

/* One batch item: its flags byte, then the put fields. What breaks only
 * this item (a bad tube, a bad key, a replace without a key, a payload
 * over the limit) is read whole and kept in p->error. */
static int
get_put_item(struct rd *r, size_t payload_max, struct msg_put *p)
{
	uint8_t flags = rd_u8(r);
	int err = 0, rc;

	NEED(r);
	memset(p, 0, sizeof(*p));
	if (flags & ~PUT_F_ALL)
		return SLUICE_EPROTO;
	p->replace = flags & PUT_F_REPLACE;
	p->at = flags & PUT_F_AT;
	TRY(get_item_bytes(
	    r, rd_u16(r), MSG_TUBE_MAX, SLUICE_ETUBE, &p->tube, &err));
	if (err == 0 && check_tube(p->tube, false) != 0)
		err = SLUICE_ETUBE;
	p->priority = rd_u32(r);
	p->when = rd_u64(r);
	p->ttr = rd_u64(r);
	p->max_attempts = rd_u32(r);
	p->period = rd_u64(r);
	TRY(get_item_bytes(
	    r, rd_u16(r), MSG_KEY_MAX, SLUICE_EKEY, &p->key, &err));
	if (err == 0 && check_key(p->key, false) != 0)
		err = SLUICE_EKEY;
	if (err == 0 && p->replace && p->key.len == 0)
		err = SLUICE_EINVAL;
	TRY(get_item_bytes(
	    r, rd_u32(r), payload_max, SLUICE_ETOOBIG, &p->payload, &err));
	if ((rc = get_if_newer(r, flags, p)) == SLUICE_EINVAL) {
		if (err == 0)
			err = rc;
	} else if (rc != 0) {
		return rc;
	}
	p->error = (uint16_t)err;
	return 0;
}

/* A task's pending replacement, after its payload (flag 0x02). */
static int
get_pending(struct rd *s, size_t payload_max, struct msg_task *t)
{
	t->replace_pending = true;
	t->pending.priority = rd_u32(s);
	t->pending.max_attempts = rd_u32(s);
	t->pending.ttr = rd_u64(s);
	t->pending.run_at = rd_u64(s);
	t->pending.period = rd_u64(s);
	t->pending.size = rd_u32(s);
	TRY(get_payload(s, payload_max, &t->pending.payload));
	if (t->pending.payload.len != 0 &&
	    t->pending.payload.len != t->pending.size)
		return SLUICE_EPROTO;
	return 0;
}

/* One task record. Its own length bounds a sub-reader; fields it lacks are
 * EPROTO (the record lies about its size), bytes it has beyond the fields
 * of version 1 are skipped. */
static int
get_task(struct rd *r, size_t payload_max, struct msg_task *t)
{
	uint32_t len = rd_u32(r);
	const uint8_t *rec;
	struct rd s;
	uint8_t flags;
	int rc;

	NEED(r);
	rec = rd_bytes(r, len);
	NEED(r);
	rd_init(&s, rec, len);
	memset(t, 0, sizeof(*t));
	t->id = rd_u64(&s);
	t->lease = rd_u64(&s);
	t->state = rd_u8(&s);
	flags = rd_u8(&s);
	t->detached = flags & TASK_F_DETACHED;
	t->priority = rd_u32(&s);
	t->attempts = rd_u32(&s);
	t->max_attempts = rd_u32(&s);
	t->ttr = rd_u64(&s);
	t->run_at = rd_u64(&s);
	t->period = rd_u64(&s);
	t->created_at = rd_u64(&s);
	t->updated_at = rd_u64(&s);
	t->taken_at = rd_u64(&s);
	t->deadline = rd_u64(&s);
	t->size = rd_u32(&s);
	if (!rd_failed(&s) && !state_valid(t->state))
		return SLUICE_EPROTO;
	if ((rc = get_tube(&s, false, &t->tube)) == 0 &&
	    (rc = get_key(&s, false, &t->key)) == 0 &&
	    (rc = get_text(&s, MSG_TEXT_MAX, &t->last_error)) == 0)
		rc = get_payload(&s, payload_max, &t->payload);
	if (rc == 0 && (flags & TASK_F_PENDING))
		rc = get_pending(&s, payload_max, t);
	if (rc == 0 && (flags & TASK_F_DONE)) {
		t->done.finished_at = rd_u64(&s);
		t->done.kept_until = rd_u64(&s);
		t->done.duration = rd_u64(&s);
		rc = get_text(&s, MSG_TEXT_MAX, &t->done.result);
	}
	if (rc == 0 && (flags & TASK_F_VERSION)) {
		t->version = rd_u64(&s);
		t->pending.version = rd_u64(&s);
		if (rd_failed(&s))
			rc = SLUICE_ETRUNC;
	}
	if (rc == 0 && (flags & TASK_F_HOLDER)) {
		t->holder.session = rd_u32(&s);
		rc = get_text(&s, MSG_PEER_MAX, &t->holder.peer);
	}
	if (rc == SLUICE_ETRUNC)
		return SLUICE_EPROTO; /* the record, not the message, is short
		                       */
	if (rc != 0)
		return rc;
	if (t->payload.len != 0 && t->payload.len != t->size)
		return SLUICE_EPROTO;
	return 0;
}

/* A put result; with `message`, a batch item's text follows. */
static int
get_put_res(struct rd *r, bool message, struct msg_put_res *out)
{
	uint8_t created;

	memset(out, 0, sizeof(*out));
	out->status = rd_u16(r);
	created = rd_u8(r);
	out->id = rd_u64(r);
	NEED(r);
	if (created > PUT_RES_STALE)
		return SLUICE_EPROTO;
	out->created = created == 1;
	out->stale = created == PUT_RES_STALE;
	if (message)
		TRY(get_text(r, MSG_TEXT_MAX, &out->message));
	return 0;
}

static int
get_ack_item(struct rd *r, struct msg_ack_item *out)
{
	out->id = rd_u64(r);
	out->lease = rd_u64(r);
	NEED(r);
	return 0;
}

static int
get_id(struct rd *r, uint64_t *out)
{
	*out = rd_u64(r);
	NEED(r);
	return 0;
}

/* An ack_batch or delete_batch result; with `message`, its text. */
static int
get_item_res(struct rd *r, bool message, struct msg_item_res *out)
{
	memset(out, 0, sizeof(*out));
	out->status = rd_u16(r);
	NEED(r);
	if (message)
		TRY(get_text(r, MSG_TEXT_MAX, &out->message));
	return 0;
}

static int
get_kv(struct rd *r, struct msg_kv *out)
{
	TRY(get_str(r, MSG_NAME_MAX, SLUICE_ELIMIT, &out->name));
	if (out->name.len == 0)
		return SLUICE_ELIMIT;
	if (!name_valid(out->name))
		return SLUICE_EPROTO;
	out->value = rd_u64(r);
	NEED(r);
	return 0;
}

static int
get_kvs(struct rd *r, struct msg_kvs *out)
{
	struct msg_kv kv;

	memset(out, 0, sizeof(*out));
	out->n = rd_u16(r);
	NEED(r);
	GET_EACH(&out->it, r, out->n, 0, get_kv(r, &kv));
	return 0;
}

/* counts: six u64, then key/values. The name is read by the caller. */
static int
get_counts(struct rd *r, struct msg_tube_stats *out)
{
	out->ready = rd_u64(r);
	out->delayed = rd_u64(r);
	out->taken = rd_u64(r);
	out->buried = rd_u64(r);
	out->paused_until = rd_u64(r);
	out->oldest_ready_age = rd_u64(r);
	NEED(r);
	return get_kvs(r, &out->more);
}

/* A tube's settings: u8 set, u64 ttr, u32 max_attempts, u64 backoff
 * base, u64 backoff cap, u64 keep_done, u8 lost_lease (1 immediate),
 * str16 dead_letter (present exactly when set says so). */
static int
get_tube_conf(struct rd *r, struct msg_tube_conf *out)
{
	uint8_t lost;

	out->set = rd_u8(r);
	out->ttr = rd_u64(r);
	out->max_attempts = rd_u32(r);
	out->backoff_base = rd_u64(r);
	out->backoff_cap = rd_u64(r);
	out->keep_done = rd_u64(r);
	lost = rd_u8(r);
	NEED(r);
	if ((out->set & ~MSG_TS_ALL) != 0 || lost > 1)
		return SLUICE_EPROTO;
	out->lost_lease_immediate = lost == 1;
	TRY(get_tube(r, true, &out->dead_letter));
	if ((out->dead_letter.len > 0) !=
	    ((out->set & MSG_TS_DEAD_LETTER) != 0))
		return SLUICE_EINVAL;
	return 0;
}

static int
get_tube_stats(struct rd *r, bool settings, struct msg_tube_stats *out)
{
	memset(out, 0, sizeof(*out));
	TRY(get_tube(r, false, &out->name));
	TRY(get_counts(r, out));
	return settings ? get_tube_conf(r, &out->conf) : 0;
}

static int
get_error_count(struct rd *r, bool ids, struct msg_error_count *out)
{
	TRY(get_text(r, MSG_TEXT_MAX, &out->text));
	out->count = rd_u64(r);
	out->nids = ids ? rd_u8(r) : 0;
	NEED(r);
	if (out->nids > MSG_ERROR_IDS)
		return SLUICE_ELIMIT;
	for (uint8_t i = 0; i < out->nids; i++)
		out->ids[i] = rd_u64(r);
	NEED(r);
	return 0;
}

static void
get_dist(struct rd *r, struct msg_dist *d)
{
	d->count = rd_u64(r);
	d->total = rd_u64(r);
	d->max = rd_u64(r);
	d->p50 = rd_u64(r);
	d->p99 = rd_u64(r);
}

static int
get_hour(struct rd *r, struct msg_hour *out)
{
	out->start = rd_u64(r);
	out->acks = rd_u64(r);
	out->fails = rd_u64(r);
	out->buries = rd_u64(r);
	out->ttr_expired = rd_u64(r);
	get_dist(r, &out->work);
	get_dist(r, &out->wait);
	NEED(r);
	return 0;
}

/* One member of a cluster reply. */
static int
get_member(struct rd *r, struct msg_member *out)
{
	memset(out, 0, sizeof(*out));
	TRY(get_node(r, false, &out->name));
	TRY(get_text(r, MSG_URL_MAX, &out->client));
	TRY(get_text(r, MSG_URL_MAX, &out->repl));
	out->role = rd_u8(r);
	out->flags = rd_u8(r);
	out->epoch = rd_u64(r);
	out->durable_lsn = rd_u64(r);
	out->lag_records = rd_u64(r);
	out->lease_until = (int64_t)rd_u64(r);
	out->age_ms = rd_u64(r);
	NEED(r);
	if (out->role >= MSG_NODE_ROLE_END_ || (out->flags & ~MSG_MEMBER_ALL))
		return SLUICE_EPROTO;
	return 0;
}

/* ---- decoding: iterators ---------------------------------------------- */

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

bool
msg_next_put(struct msg_iter *it, struct msg_put *out)
{
	NEXT(it, get_put_item(&it->r, it->payload_max, out));
}

bool
msg_next_str(struct msg_iter *it, struct msg_str *out)
{
	NEXT(it, get_tube(&it->r, false, out));
}

bool
msg_next_task(struct msg_iter *it, struct msg_task *out)
{
	NEXT(it, get_task(&it->r, it->payload_max, out));
}

bool
msg_next_put_res(struct msg_iter *it, struct msg_put_res *out)
{
	NEXT(it, get_put_res(&it->r, it->flags & BATCH_F_MESSAGES, out));
}

bool
msg_next_ack_item(struct msg_iter *it, struct msg_ack_item *out)
{
	NEXT(it, get_ack_item(&it->r, out));
}

bool
msg_next_id(struct msg_iter *it, uint64_t *out)
{
	NEXT(it, get_id(&it->r, out));
}

bool
msg_next_item_res(struct msg_iter *it, struct msg_item_res *out)
{
	NEXT(it, get_item_res(&it->r, it->flags & BATCH_F_MESSAGES, out));
}

bool
msg_next_kv(struct msg_iter *it, struct msg_kv *out)
{
	NEXT(it, get_kv(&it->r, out));
}

bool
msg_next_tube_stats(struct msg_iter *it, struct msg_tube_stats *out)
{
	NEXT(it, get_tube_stats(&it->r, it->flags & STATS_F_SETTINGS, out));
}

bool
msg_next_error_count(struct msg_iter *it, struct msg_error_count *out)
{
	NEXT(it, get_error_count(&it->r, it->flags & ERRORS_F_IDS, out));
}

bool
msg_next_hour(struct msg_iter *it, struct msg_hour *out)
{
	NEXT(it, get_hour(&it->r, out));
}

bool
msg_next_member(struct msg_iter *it, struct msg_member *out)
{
	NEXT(it, get_member(&it->r, out));
}

/* ---- decoding: messages ----------------------------------------------- */

static void
limits_resolve(const struct msg_limits *lim, size_t *msg_max, size_t *pmax)
{
	*msg_max = MSG_SIZE_MAX;
	*pmax = MSG_PAYLOAD_DEFAULT;
	if (lim == NULL)
		return;
	if (lim->msg_max != 0 && lim->msg_max < MSG_SIZE_MAX)
		*msg_max = lim->msg_max;
	if (lim->payload_max != 0)
		*pmax = lim->payload_max < MSG_SIZE_MAX ? lim->payload_max
		                                        : MSG_SIZE_MAX;
}

/* The checks every message starts with: size, magic, version, length. */
static int
check_head(const uint8_t *b, size_t len, size_t msg_max, size_t hdr)
{
	if (len > msg_max)
		return SLUICE_EMSGSIZE;
	if (len >= 1 && b[0] != MSG_MAGIC)
		return SLUICE_EPROTO;
	if (len >= 2 && b[1] != MSG_VERSION)
		return SLUICE_EVERSION;
	if (len < hdr)
		return SLUICE_ETRUNC;
	return 0;
}

/* Starts decoding a message with a `hdr`-byte header: its head checked
 * against the limits, `r` set on its body. */
static int
open_msg(const uint8_t *b, size_t len, const struct msg_limits *lim, size_t hdr,
    struct rd *r, size_t *pmax)
{
	size_t msg_max;

	limits_resolve(lim, &msg_max, pmax);
	TRY(check_head(b, len, msg_max, hdr));
	rd_init(r, b + hdr, len - hdr);
	return 0;
}

/* The task and lease a request acts on, first in its body. */
static void
get_lease(struct rd *r, uint64_t *id, uint64_t *lease)
{
	*id = rd_u64(r);
	*lease = rd_u64(r);
}

static int
get_take(struct rd *r, uint8_t flags, struct msg_take *t)
{
	struct msg_str tube;

	t->detach = flags & TAKE_F_DETACH;
	t->strict = flags & TAKE_F_STRICT;
	t->durable = flags & TAKE_F_DURABLE;
	t->wait = rd_u64(r);
	t->max = rd_u32(r);
	NEED(r);
	TRY(check_count(t->max, MSG_TAKE_MAX));
	t->ntubes = rd_u16(r);
	NEED(r);
	TRY(check_count(t->ntubes, MSG_TAKE_TUBES_MAX));
	GET_EACH(&t->it, r, t->ntubes, 0, get_tube(r, false, &tube));
	return 0;
}

/* update: at least one field, and a delay or a time, not both. */
static int
check_update_flags(uint8_t flags)
{
	if (flags == 0 || (flags & UPD_F_DELAY && flags & UPD_F_AT))
		return SLUICE_EINVAL;
	return 0;
}

static int
get_update(struct rd *r, uint8_t flags, size_t pmax, struct msg_update *u)
{
	u->set_priority = flags & UPD_F_PRIORITY;
	u->set_delay = flags & UPD_F_DELAY;
	u->set_at = flags & UPD_F_AT;
	u->set_ttr = flags & UPD_F_TTR;
	u->set_max_attempts = flags & UPD_F_MAX_ATTEMPTS;
	u->set_payload = flags & UPD_F_PAYLOAD;
	u->id = rd_u64(r);
	u->priority = rd_u32(r);
	u->when = rd_u64(r);
	u->ttr = rd_u64(r);
	u->max_attempts = rd_u32(r);
	NEED(r);
	TRY(get_payload(r, pmax, &u->payload));
	if (!u->set_payload && u->payload.len != 0)
		return SLUICE_EINVAL;
	return check_update_flags(flags);
}

static bool
job_verb_valid(uint8_t verb)
{
	return verb >= MSG_JOB_DELETE && verb < MSG_JOB_END_;
}

static int
get_req_body(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	struct msg_ack_item ack;
	struct msg_put item;
	uint64_t id;

	switch (op) {
	case MSG_OP_PUT:
		return get_put(r, flags, pmax, &q->put);
	case MSG_OP_PUT_BATCH:
		q->put_batch.messages = flags & BATCH_F_MESSAGES;
		q->put_batch.n = rd_u32(r);
		NEED(r);
		TRY(check_count(q->put_batch.n, MSG_BATCH_MAX));
		GET_EACH(&q->put_batch.it, r, q->put_batch.n, pmax,
		    get_put_item(r, pmax, &item));
		return 0;
	case MSG_OP_TAKE:
		return get_take(r, flags, &q->take);
	case MSG_OP_ACK_BATCH:
		q->ack_batch.messages = flags & BATCH_F_MESSAGES;
		q->ack_batch.n = rd_u32(r);
		NEED(r);
		TRY(check_count(q->ack_batch.n, MSG_BATCH_MAX));
		GET_EACH(&q->ack_batch.it, r, q->ack_batch.n, 0,
		    get_ack_item(r, &ack));
		return 0;
	case MSG_OP_DELETE_BATCH:
		q->delete_batch.messages = flags & BATCH_F_MESSAGES;
		q->delete_batch.n = rd_u32(r);
		NEED(r);
		TRY(check_count(q->delete_batch.n, MSG_BATCH_MAX));
		GET_EACH(&q->delete_batch.it, r, q->delete_batch.n, 0,
		    get_id(r, &id));
		return 0;
	case MSG_OP_UPDATE:
		return get_update(r, flags, pmax, &q->update);
	case MSG_OP_ACK:
		get_lease(r, &q->ack.id, &q->ack.lease);
		q->ack.force = flags & LEASE_F_FORCE;
		q->ack.report = flags & LEASE_F_REPORT;
		NEED(r);
		TRY(get_tube(r, true, &q->ack.to));
		if (!(flags & ACK_F_RESULT))
			return 0;
		TRY(get_text(r, MSG_TEXT_MAX, &q->ack.result));
		return q->ack.result.len == 0 ? SLUICE_EINVAL : 0;
	case MSG_OP_RELEASE:
		get_lease(r, &q->release.id, &q->release.lease);
		q->release.delay = rd_u64(r);
		q->release.priority = rd_u32(r);
		q->release.set_priority = flags & RELEASE_F_PRIORITY;
		q->release.force = flags & LEASE_F_FORCE;
		q->release.report = flags & LEASE_F_REPORT;
		NEED(r);
		return 0;
	case MSG_OP_FAIL:
		get_lease(r, &q->fail.id, &q->fail.lease);
		q->fail.delay = rd_u64(r);
		q->fail.set_delay = flags & FAIL_F_DELAY;
		q->fail.fatal = flags & FAIL_F_FATAL;
		q->fail.force = flags & LEASE_F_FORCE;
		q->fail.report = flags & LEASE_F_REPORT;
		NEED(r);
		return get_text(r, MSG_TEXT_MAX, &q->fail.error);
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		get_lease(r, &q->lease.id, &q->lease.lease);
		q->lease.force = flags & LEASE_F_FORCE;
		q->lease.report = flags & LEASE_F_REPORT;
		NEED(r);
		if (op != MSG_OP_BURY || !(flags & BURY_F_ERROR))
			return 0;
		TRY(get_text(r, MSG_TEXT_MAX, &q->lease.error));
		/* the flag says a text follows: an empty one is not sent */
		return q->lease.error.len > 0 ? 0 : SLUICE_EINVAL;
	case MSG_OP_KICK:
		TRY(get_tube(r, false, &q->kick.tube));
		q->kick.n = rd_u32(r);
		q->kick.delayed = flags & KICK_F_DELAYED;
		NEED(r);
		return q->kick.n == 0 ? SLUICE_EINVAL : 0;
	case MSG_OP_KICK_ID:
	case MSG_OP_DELETE:
	case MSG_OP_PEEK:
		q->id = rd_u64(r);
		NEED(r);
		return 0;
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PEEK_KEY:
		TRY(get_key(r, true, &q->by_key.key));
		if (flags & KEY_F_TUBE)
			return get_tube(r, false, &q->by_key.tube);
		return 0;
	case MSG_OP_ERRORS:
		q->errors.ids = flags & ERRORS_F_IDS;
		return get_tube(r, false, &q->errors.tube);
	case MSG_OP_FLUSH:
	case MSG_OP_RELEASE_ALL:
		return get_tube(r, false, &q->tube);
	case MSG_OP_STATS:
		q->stats.settings = flags & STATS_F_SETTINGS;
		q->stats.durations = flags & STATS_F_DURATIONS;
		q->stats.page = flags & STATS_F_PAGE;
		q->stats.top = flags & STATS_F_TOP;
		TRY(get_tube(r, true, &q->stats.tube));
		if (!q->stats.page && !q->stats.top)
			return 0;
		q->stats.limit = rd_u32(r);
		if (q->stats.page)
			q->stats.after = rd_u32(r);
		NEED(r);
		return stats_part_check(&q->stats);
	case MSG_OP_TUBE_SHOW:
		return get_tube(r, false, &q->tube);
	case MSG_OP_TUBE_SET:
		TRY(get_tube(r, false, &q->tube_set.tube));
		q->tube_set.unset = rd_u8(r);
		NEED(r);
		if ((q->tube_set.unset & ~MSG_TS_ALL) != 0)
			return SLUICE_EPROTO;
		TRY(get_tube_conf(r, &q->tube_set.conf));
		return (q->tube_set.unset & q->tube_set.conf.set) != 0
		    ? SLUICE_EINVAL
		    : 0;
	case MSG_OP_TUBE_DELETE:
		q->tube_delete.force = flags & TUBE_DELETE_F_FORCE;
		return get_tube(r, false, &q->tube_delete.tube);
	case MSG_OP_STATS_HOURLY:
		return get_tube(r, true, &q->tube);
	case MSG_OP_PEEK_NEXT:
		TRY(get_tube(r, false, &q->peek_next.tube));
		q->peek_next.state = rd_u8(r);
		NEED(r);
		/* ready, delayed or buried; any other value (taken, none, or
		 * none at all) is out of range for this op */
		return peek_state_valid(q->peek_next.state) ? 0 : SLUICE_EINVAL;
	case MSG_OP_LIST:
		TRY(get_tube(r, false, &q->list.tube));
		q->list.state = rd_u8(r);
		q->list.order = rd_u8(r);
		q->list.limit = rd_u32(r);
		q->list.payloads = flags & LIST_F_PAYLOADS;
		q->list.after = flags & LIST_F_AFTER ? rd_u64(r) : 0;
		NEED(r);
		if ((q->list.state != MSG_ST_NONE &&
		        !state_valid(q->list.state)) ||
		    !order_valid(q->list.order))
			return SLUICE_EPROTO;
		TRY(list_cursor_valid(&q->list));
		return check_count(q->list.limit, MSG_LIST_MAX);
	case MSG_OP_DELETE_WHERE:
		TRY(get_tube(r, false, &q->where.tube));
		q->where.state = rd_u8(r);
		q->where.older = rd_u64(r);
		NEED(r);
		return where_state_valid(q->where.state) ? 0 : SLUICE_EINVAL;
	case MSG_OP_PAUSE:
		TRY(get_tube(r, false, &q->pause.tube));
		q->pause.duration = rd_u64(r);
		q->pause.create = flags & PAUSE_F_CREATE;
		NEED(r);
		return 0;
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
	case MSG_OP_CLUSTER:
		return 0;
	case MSG_OP_FOLLOW:
		TRY(get_text(r, MSG_URL_MAX, &q->url));
		return q->url.len == 0 ? SLUICE_EINVAL : 0;
	case MSG_OP_AUTH:
		TRY(get_text(r, MSG_TOKEN_MAX, &q->token));
		return q->token.len == 0 ? SLUICE_EINVAL : 0;
	case MSG_OP_SWITCHOVER:
		TRY(get_node(r, false, &q->switchover.node));
		q->switchover.timeout_ms = rd_u32(r);
		NEED(r);
		return 0;
	case MSG_OP_JOB:
		q->job.verb = rd_u8(r);
		q->job.id = rd_u64(r);
		q->job.priority = rd_u32(r);
		q->job.delay = rd_u64(r);
		NEED(r);
		return job_verb_valid(q->job.verb) ? 0 : SLUICE_EPROTO;
	case MSG_OP_HISTORY:
		TRY(get_tube(r, true, &q->history.tube));
		q->history.secs = rd_u32(r);
		NEED(r);
		return history_secs_valid(q->history.secs) ? 0 : SLUICE_EINVAL;
	}
	return SLUICE_EUNKNOWNOP;
}

int
msg_decode_req(const void *p, size_t len, const struct msg_limits *lim,
    struct msg_req *out)
{
	const uint8_t *b = p;
	size_t pmax;
	struct msg_req q;
	struct rd r;
	uint8_t op, flags;

	TRY(open_msg(b, len, lim, MSG_REQ_HDR, &r, &pmax));
	op = b[2];
	flags = b[3];
	if (!op_known(op))
		return SLUICE_EUNKNOWNOP;
	if (flags & ~req_flags[op])
		return SLUICE_EPROTO;
	memset(&q, 0, sizeof(q));
	q.op = op;
	TRY(get_req_body(&r, op, flags, pmax, &q));
	if (rd_left(&r) != 0)
		return SLUICE_EPROTO;
	*out = q;
	return 0;
}

uint8_t
msg_req_op(const void *p, size_t len)
{
	const uint8_t *b = p;

	return len >= 3 ? b[2] : 0;
}

static int
get_tasks(struct rd *r, size_t pmax, struct msg_tasks *t)
{
	struct msg_task task;

	t->n = rd_u32(r);
	NEED(r);
	if (t->n > MSG_TAKE_MAX)
		return SLUICE_ELIMIT;
	GET_EACH(&t->it, r, t->n, pmax, get_task(r, pmax, &task));
	return 0;
}

static int
get_stats(struct rd *r, bool settings, struct msg_stats *s)
{
	struct msg_tube_stats ts;

	s->role = rd_u8(r);
	s->epoch = rd_u64(r);
	s->lsn = rd_u64(r);
	s->durable_lsn = rd_u64(r);
	s->now = rd_u64(r);
	NEED(r);
	if (s->role != MSG_ROLE_LEADER && s->role != MSG_ROLE_FOLLOWER)
		return SLUICE_EPROTO;
	TRY(get_text(r, MSG_URL_MAX, &s->leader));
	TRY(get_counts(r, &s->totals));
	TRY(get_kvs(r, &s->more));
	s->ntubes = rd_u32(r);
	NEED(r);
	GET_EACH(&s->it, r, s->ntubes, 0, get_tube_stats(r, settings, &ts));
	s->settings = settings;
	s->it.flags = settings ? STATS_F_SETTINGS : 0;
	return 0;
}

static int
get_cluster(struct rd *r, struct msg_cluster *c)
{
	struct msg_member mb;

	TRY(get_node(r, false, &c->cluster));
	TRY(get_node(r, false, &c->node));
	TRY(get_node(r, true, &c->leader));
	c->ttl_ms = rd_u32(r);
	NEED(r);
	TRY(get_text(r, MSG_TEXT_MAX, &c->etcd_error));
	c->n = rd_u32(r);
	NEED(r);
	if (c->n > MSG_CLUSTER_MEMBERS_MAX)
		return SLUICE_ELIMIT;
	GET_EACH(&c->it, r, c->n, 0, get_member(r, &mb));
	return 0;
}

static int
get_history(struct rd *r, struct msg_history *h)
{
	memset(h, 0, sizeof(*h));
	h->start = rd_u64(r);
	h->step = rd_u32(r);
	h->kinds = rd_u8(r);
	h->n = rd_u32(r);
	NEED(r);
	TRY(history_shape(h));
	h->raw = rd_bytes(r, (size_t)h->kinds * h->n * 4);
	NEED(r);
	return 0;
}

static int
get_rep_body(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_put_res pr;
	struct msg_item_res ir;
	struct msg_error_count ec;
	struct msg_hour hr;

	switch (op) {
	case MSG_OP_PUT:
		TRY(get_put_res(r, false, &m->put));
		return m->put.status != 0 ? SLUICE_EPROTO : 0;
	case MSG_OP_PUT_BATCH:
		m->put_batch.messages = flags & BATCH_F_MESSAGES;
		m->put_batch.n = rd_u32(r);
		NEED(r);
		if (m->put_batch.n > MSG_BATCH_MAX)
			return SLUICE_ELIMIT;
		GET_EACH(&m->put_batch.it, r, m->put_batch.n, 0,
		    get_put_res(r, m->put_batch.messages, &pr));
		m->put_batch.it.flags = flags;
		return 0;
	case MSG_OP_ACK_BATCH:
	case MSG_OP_DELETE_BATCH:
		m->batch.messages = flags & BATCH_F_MESSAGES;
		m->batch.n = rd_u32(r);
		NEED(r);
		if (m->batch.n > MSG_BATCH_MAX)
			return SLUICE_ELIMIT;
		GET_EACH(&m->batch.it, r, m->batch.n, 0,
		    get_item_res(r, m->batch.messages, &ir));
		m->batch.it.flags = flags;
		return 0;
	case MSG_OP_TAKE:
	case MSG_OP_LIST:
	case MSG_OP_JOB:
		return get_tasks(r, pmax, &m->tasks);
	case MSG_OP_ACK:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
	case MSG_OP_KICK_ID:
	case MSG_OP_UPDATE:
		m->after.id = rd_u64(r);
		m->after.state = rd_u8(r);
		m->after.run_at = rd_u64(r);
		m->after.deadline = rd_u64(r);
		m->after.replaced = flags & REP_F_REPLACED;
		NEED(r);
		if (m->after.state != MSG_ST_NONE &&
		    !state_valid(m->after.state))
			return SLUICE_EPROTO;
		return 0;
	case MSG_OP_KICK:
	case MSG_OP_FLUSH:
	case MSG_OP_DELETE_WHERE:
	case MSG_OP_RELEASE_ALL:
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PAUSE:
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
	case MSG_OP_TUBE_DELETE:
		/* count, id, until, lsn, epoch: one u64 in the same place */
		m->count = rd_u64(r);
		NEED(r);
		return 0;
	case MSG_OP_DELETE:
	case MSG_OP_FOLLOW:
	case MSG_OP_AUTH:
		return 0;
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
		return get_task(r, pmax, &m->task);
	case MSG_OP_STATS:
		return get_stats(r, flags & STATS_F_SETTINGS, &m->stats);
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_SHOW:
		TRY(get_tube(r, false, &m->tube_conf.tube));
		return get_tube_conf(r, &m->tube_conf.conf);
	case MSG_OP_ERRORS:
		m->errors.ids = flags & ERRORS_F_IDS;
		m->errors.n = rd_u32(r);
		NEED(r);
		GET_EACH(&m->errors.it, r, m->errors.n, 0,
		    get_error_count(r, m->errors.ids, &ec));
		m->errors.it.flags = flags;
		return 0;
	case MSG_OP_STATS_HOURLY:
		m->hours.n = rd_u32(r);
		NEED(r);
		if (m->hours.n > MSG_HOURS_MAX)
			return SLUICE_ELIMIT;
		GET_EACH(&m->hours.it, r, m->hours.n, 0, get_hour(r, &hr));
		return 0;
	case MSG_OP_CLUSTER:
		return get_cluster(r, &m->cluster);
	case MSG_OP_HISTORY:
		return get_history(r, &m->history);
	case MSG_OP_SWITCHOVER:
		TRY(get_text(r, MSG_URL_MAX, &m->switchover.leader));
		m->switchover.epoch = rd_u64(r);
		NEED(r);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

int
msg_decode_rep(const void *p, size_t len, const struct msg_limits *lim,
    struct msg_rep *out)
{
	const uint8_t *b = p;
	size_t pmax;
	struct msg_rep m;
	struct rd r;

	TRY(open_msg(b, len, lim, MSG_REP_HDR, &r, &pmax));
	memset(&m, 0, sizeof(m));
	m.op = b[2];
	m.status = le_load_u16(b + 4);
	if (m.status != 0) {
		if (b[3] != 0)
			return SLUICE_EPROTO;
		TRY(get_text(&r, MSG_TEXT_MAX, &m.err.message));
		TRY(get_text(&r, MSG_URL_MAX, &m.err.leader));
	} else {
		if (!op_known(m.op))
			return SLUICE_EUNKNOWNOP;
		if (b[3] & ~rep_flags[m.op])
			return SLUICE_EPROTO;
		TRY(get_rep_body(&r, m.op, b[3], pmax, &m));
	}
	if (rd_left(&r) != 0)
		return SLUICE_EPROTO;
	*out = m;
	return 0;
}

/* ---- encoding ------------------------------------------------------------ */

static void
put_str(struct buf *b, struct msg_str s)
{
	buf_put_str16(b, s.p, s.len);
}

/* Writes `s` when its check `rc` passed; returns rc. */
static int
put_checked(struct buf *b, struct msg_str s, int rc)
{
	if (rc == 0)
		put_str(b, s);
	return rc;
}

static int
put_tube(struct buf *b, struct msg_str s, bool empty_ok)
{
	return put_checked(b, s, check_tube(s, empty_ok));
}

static int
put_key(struct buf *b, struct msg_str s, bool required)
{
	return put_checked(b, s, check_key(s, required));
}

static int
put_text(struct buf *b, struct msg_str s, size_t max)
{
	return put_checked(b, s, check_text(s, max));
}

static int
put_node(struct buf *b, struct msg_str s, bool empty_ok)
{
	return put_checked(b, s, check_node(s, empty_ok));
}

static void
put_lease(struct buf *b, uint64_t id, uint64_t lease)
{
	buf_put_u64(b, id);
	buf_put_u64(b, lease);
}

static int
put_payload(struct buf *b, struct msg_str s)
{
	if (s.len > MSG_SIZE_MAX)
		return SLUICE_ETOOBIG;
	buf_put_blob(b, s.p, s.len);
	return 0;
}

static uint8_t
put_flags(const struct msg_put *p)
{
	return (p->replace ? PUT_F_REPLACE : 0) | (p->at ? PUT_F_AT : 0) |
	    (p->if_newer != 0 ? PUT_F_IF_NEWER : 0);
}

/* After the payload: the version, with flag 0x04 (put_flags). */
static void
put_if_newer(struct buf *b, const struct msg_put *p)
{
	if (p->if_newer != 0)
		buf_put_u64(b, p->if_newer);
}

/* A batch item, as lenient as get_put_item: a bad tube, key or payload is
 * the server's to refuse (alone); only what the layout cannot hold is an
 * error here. */
static int
enc_put_item(struct buf *b, const struct msg_put *p)
{
	if (p->tube.len > UINT16_MAX)
		return SLUICE_ETUBE;
	if (p->key.len > UINT16_MAX)
		return SLUICE_EKEY;
	buf_put_u8(b, put_flags(p));
	put_str(b, p->tube);
	buf_put_u32(b, p->priority);
	buf_put_u64(b, p->when);
	buf_put_u64(b, p->ttr);
	buf_put_u32(b, p->max_attempts);
	buf_put_u64(b, p->period);
	put_str(b, p->key);
	TRY(put_payload(b, p->payload));
	put_if_newer(b, p);
	return 0;
}

static int
enc_put(struct buf *b, const struct msg_put *p)
{
	TRY(put_tube(b, p->tube, false));
	buf_put_u32(b, p->priority);
	buf_put_u64(b, p->when);
	buf_put_u64(b, p->ttr);
	buf_put_u32(b, p->max_attempts);
	buf_put_u64(b, p->period);
	TRY(put_key(b, p->key, false));
	if ((p->replace || p->if_newer != 0) && p->key.len == 0)
		return SLUICE_EINVAL;
	if (p->if_newer != 0 && !p->replace)
		return SLUICE_EINVAL;
	TRY(put_payload(b, p->payload));
	put_if_newer(b, p);
	return 0;
}

static int
enc_tube_conf(struct buf *b, const struct msg_tube_conf *c)
{
	if ((c->set & ~MSG_TS_ALL) != 0 ||
	    (c->dead_letter.len > 0) != ((c->set & MSG_TS_DEAD_LETTER) != 0))
		return SLUICE_EINVAL;
	buf_put_u8(b, c->set);
	buf_put_u64(b, c->ttr);
	buf_put_u32(b, c->max_attempts);
	buf_put_u64(b, c->backoff_base);
	buf_put_u64(b, c->backoff_cap);
	buf_put_u64(b, c->keep_done);
	buf_put_u8(b, c->lost_lease_immediate ? 1 : 0);
	return put_tube(b, c->dead_letter, true);
}

/* The header's flags byte for a request. */
static uint8_t
req_flag_byte(const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_PUT:
		return put_flags(&q->put);
	case MSG_OP_PUT_BATCH:
		return q->put_batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_ACK_BATCH:
		return q->ack_batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_DELETE_BATCH:
		return q->delete_batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_UPDATE:
		return (q->update.set_priority ? UPD_F_PRIORITY : 0) |
		    (q->update.set_delay ? UPD_F_DELAY : 0) |
		    (q->update.set_at ? UPD_F_AT : 0) |
		    (q->update.set_ttr ? UPD_F_TTR : 0) |
		    (q->update.set_max_attempts ? UPD_F_MAX_ATTEMPTS : 0) |
		    (q->update.set_payload ? UPD_F_PAYLOAD : 0);
	case MSG_OP_TAKE:
		return (q->take.detach ? TAKE_F_DETACH : 0) |
		    (q->take.strict ? TAKE_F_STRICT : 0) |
		    (q->take.durable ? TAKE_F_DURABLE : 0);
	case MSG_OP_ACK:
		return (q->ack.force ? LEASE_F_FORCE : 0) |
		    (q->ack.report ? LEASE_F_REPORT : 0) |
		    (q->ack.result.len > 0 ? ACK_F_RESULT : 0);
	case MSG_OP_RELEASE:
		return (q->release.set_priority ? RELEASE_F_PRIORITY : 0) |
		    (q->release.force ? LEASE_F_FORCE : 0) |
		    (q->release.report ? LEASE_F_REPORT : 0);
	case MSG_OP_FAIL:
		return (q->fail.set_delay ? FAIL_F_DELAY : 0) |
		    (q->fail.fatal ? FAIL_F_FATAL : 0) |
		    (q->fail.force ? LEASE_F_FORCE : 0) |
		    (q->fail.report ? LEASE_F_REPORT : 0);
	case MSG_OP_TOUCH:
		return q->lease.force ? LEASE_F_FORCE : 0;
	case MSG_OP_BURY:
		return (q->lease.error.len > 0 ? BURY_F_ERROR : 0) |
		    (q->lease.force ? LEASE_F_FORCE : 0) |
		    (q->lease.report ? LEASE_F_REPORT : 0);
	case MSG_OP_LIST:
		return (q->list.payloads ? LIST_F_PAYLOADS : 0) |
		    (q->list.after > 0 ? LIST_F_AFTER : 0);
	case MSG_OP_KICK:
		return q->kick.delayed ? KICK_F_DELAYED : 0;
	case MSG_OP_PAUSE:
		return q->pause.create ? PAUSE_F_CREATE : 0;
	case MSG_OP_STATS:
		return (q->stats.settings ? STATS_F_SETTINGS : 0) |
		    (q->stats.durations ? STATS_F_DURATIONS : 0) |
		    (q->stats.page ? STATS_F_PAGE : 0) |
		    (q->stats.top ? STATS_F_TOP : 0);
	case MSG_OP_TUBE_DELETE:
		return q->tube_delete.force ? TUBE_DELETE_F_FORCE : 0;
	case MSG_OP_ERRORS:
		return q->errors.ids ? ERRORS_F_IDS : 0;
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PEEK_KEY:
		return q->by_key.tube.len > 0 ? KEY_F_TUBE : 0;
	}
	return 0;
}

static int
enc_req_body(struct buf *b, const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_PUT:
		return enc_put(b, &q->put);
	case MSG_OP_PUT_BATCH:
		TRY(check_count(q->put_batch.n, MSG_BATCH_MAX));
		buf_put_u32(b, q->put_batch.n);
		for (uint32_t i = 0; i < q->put_batch.n; i++)
			TRY(enc_put_item(b, &q->put_batch.items[i]));
		return 0;
	case MSG_OP_ACK_BATCH:
		TRY(check_count(q->ack_batch.n, MSG_BATCH_MAX));
		buf_put_u32(b, q->ack_batch.n);
		for (uint32_t i = 0; i < q->ack_batch.n; i++)
			put_lease(b, q->ack_batch.items[i].id,
			    q->ack_batch.items[i].lease);
		return 0;
	case MSG_OP_UPDATE: {
		const struct msg_update *u = &q->update;

		TRY(check_update_flags(req_flag_byte(q)));
		if (!u->set_payload && u->payload.len != 0)
			return SLUICE_EINVAL;
		buf_put_u64(b, u->id);
		buf_put_u32(b, u->set_priority ? u->priority : 0);
		buf_put_u64(b, u->set_delay || u->set_at ? u->when : 0);
		buf_put_u64(b, u->set_ttr ? u->ttr : 0);
		buf_put_u32(b, u->set_max_attempts ? u->max_attempts : 0);
		return put_payload(b, u->payload);
	}
	case MSG_OP_DELETE_BATCH:
		TRY(check_count(q->delete_batch.n, MSG_BATCH_MAX));
		buf_put_u32(b, q->delete_batch.n);
		for (uint32_t i = 0; i < q->delete_batch.n; i++)
			buf_put_u64(b, q->delete_batch.ids[i]);
		return 0;
	case MSG_OP_TAKE:
		TRY(check_count(q->take.max, MSG_TAKE_MAX));
		TRY(check_count(q->take.ntubes, MSG_TAKE_TUBES_MAX));
		buf_put_u64(b, q->take.wait);
		buf_put_u32(b, q->take.max);
		buf_put_u16(b, (uint16_t)q->take.ntubes);
		for (uint32_t i = 0; i < q->take.ntubes; i++)
			TRY(put_tube(b, q->take.tubes[i], false));
		return 0;
	case MSG_OP_ACK:
		put_lease(b, q->ack.id, q->ack.lease);
		TRY(put_tube(b, q->ack.to, true));
		if (q->ack.result.len > 0)
			return put_text(b, q->ack.result, MSG_TEXT_MAX);
		return 0;
	case MSG_OP_RELEASE:
		put_lease(b, q->release.id, q->release.lease);
		buf_put_u64(b, q->release.delay);
		buf_put_u32(
		    b, q->release.set_priority ? q->release.priority : 0);
		return 0;
	case MSG_OP_FAIL:
		put_lease(b, q->fail.id, q->fail.lease);
		buf_put_u64(b, q->fail.set_delay ? q->fail.delay : 0);
		return put_text(b, q->fail.error, MSG_TEXT_MAX);
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		put_lease(b, q->lease.id, q->lease.lease);
		if (q->op == MSG_OP_BURY && q->lease.error.len > 0)
			return put_text(b, q->lease.error, MSG_TEXT_MAX);
		return 0;
	case MSG_OP_KICK:
		if (q->kick.n == 0)
			return SLUICE_EINVAL;
		TRY(put_tube(b, q->kick.tube, false));
		buf_put_u32(b, q->kick.n);
		return 0;
	case MSG_OP_KICK_ID:
	case MSG_OP_DELETE:
	case MSG_OP_PEEK:
		buf_put_u64(b, q->id);
		return 0;
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PEEK_KEY:
		TRY(put_key(b, q->by_key.key, true));
		if (q->by_key.tube.len > 0)
			return put_tube(b, q->by_key.tube, false);
		return 0;
	case MSG_OP_FLUSH:
	case MSG_OP_ERRORS:
	case MSG_OP_RELEASE_ALL:
		return put_tube(b, q->tube, false);
	case MSG_OP_STATS:
		TRY(stats_part_check(&q->stats));
		TRY(put_tube(b, q->stats.tube, true));
		if (q->stats.page || q->stats.top)
			buf_put_u32(b, q->stats.limit);
		if (q->stats.page)
			buf_put_u32(b, q->stats.after);
		return 0;
	case MSG_OP_TUBE_SHOW:
		return put_tube(b, q->tube, false);
	case MSG_OP_TUBE_DELETE:
		return put_tube(b, q->tube_delete.tube, false);
	case MSG_OP_TUBE_SET:
		if ((q->tube_set.unset & ~MSG_TS_ALL) != 0 ||
		    (q->tube_set.unset & q->tube_set.conf.set) != 0)
			return SLUICE_EINVAL;
		TRY(put_tube(b, q->tube_set.tube, false));
		buf_put_u8(b, q->tube_set.unset);
		return enc_tube_conf(b, &q->tube_set.conf);
	case MSG_OP_STATS_HOURLY:
		return put_tube(b, q->tube, true);
	case MSG_OP_PEEK_NEXT:
		if (!peek_state_valid(q->peek_next.state))
			return SLUICE_EINVAL;
		TRY(put_tube(b, q->peek_next.tube, false));
		buf_put_u8(b, q->peek_next.state);
		return 0;
	case MSG_OP_LIST:
		if ((q->list.state != MSG_ST_NONE &&
		        !state_valid(q->list.state)) ||
		    !order_valid(q->list.order))
			return SLUICE_EINVAL;
		TRY(list_cursor_valid(&q->list));
		TRY(check_count(q->list.limit, MSG_LIST_MAX));
		TRY(put_tube(b, q->list.tube, false));
		buf_put_u8(b, q->list.state);
		buf_put_u8(b, q->list.order);
		buf_put_u32(b, q->list.limit);
		if (q->list.after > 0)
			buf_put_u64(b, q->list.after);
		return 0;
	case MSG_OP_PAUSE:
		TRY(put_tube(b, q->pause.tube, false));
		buf_put_u64(b, q->pause.duration);
		return 0;
	case MSG_OP_DELETE_WHERE:
		if (!where_state_valid(q->where.state))
			return SLUICE_EINVAL;
		TRY(put_tube(b, q->where.tube, false));
		buf_put_u8(b, q->where.state);
		buf_put_u64(b, q->where.older);
		return 0;
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
	case MSG_OP_CLUSTER:
		return 0;
	case MSG_OP_FOLLOW:
		if (q->url.len == 0)
			return SLUICE_EINVAL;
		return put_text(b, q->url, MSG_URL_MAX);
	case MSG_OP_AUTH:
		if (q->token.len == 0)
			return SLUICE_EINVAL;
		return put_text(b, q->token, MSG_TOKEN_MAX);
	case MSG_OP_HISTORY:
		if (!history_secs_valid(q->history.secs))
			return SLUICE_EINVAL;
		TRY(put_tube(b, q->history.tube, true));
		buf_put_u32(b, q->history.secs);
		return 0;
	case MSG_OP_SWITCHOVER:
		TRY(put_node(b, q->switchover.node, false));
		buf_put_u32(b, q->switchover.timeout_ms);
		return 0;
	case MSG_OP_JOB:
		if (!job_verb_valid(q->job.verb))
			return SLUICE_EINVAL;
		buf_put_u8(b, q->job.verb);
		buf_put_u64(b, q->job.id);
		buf_put_u32(b, q->job.priority);
		buf_put_u64(b, q->job.delay);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* Ends an encoding started at `start`: keeps it, or on failure takes it
 * back out of the buffer. */
static int
enc_finish(struct buf *b, size_t start, int rc)
{
	if (rc == 0 && buf_failed(b))
		rc = -ENOMEM;
	if (rc == 0 && b->len - start > MSG_SIZE_MAX)
		rc = SLUICE_EMSGSIZE;
	if (rc != 0 && b->len > start)
		b->len = start;
	return rc;
}

int
msg_encode_req(struct buf *b, const struct msg_req *q)
{
	size_t start = b->len;
	int rc = SLUICE_EUNKNOWNOP;

	if (op_known(q->op)) {
		buf_put_u8(b, MSG_MAGIC);
		buf_put_u8(b, MSG_VERSION);
		buf_put_u8(b, q->op);
		buf_put_u8(b, req_flag_byte(q));
		rc = enc_req_body(b, q);
	}
	return enc_finish(b, start, rc);
}

/* A record without versions has the layout it had before them. */
static bool
has_version(const struct msg_task *t)
{
	return t->version != 0 || (t->replace_pending && t->pending.version);
}

static int
enc_task(struct buf *b, const struct msg_task *t)
{
	size_t at = b->len;

	if (!state_valid(t->state))
		return SLUICE_EINVAL;
	if (t->payload.len != 0 && t->payload.len != t->size)
		return SLUICE_EINVAL;
	buf_put_u32(b, 0); /* the record's length, set below */
	buf_put_u64(b, t->id);
	buf_put_u64(b, t->lease);
	buf_put_u8(b, t->state);
	buf_put_u8(b,
	    (t->detached ? TASK_F_DETACHED : 0) |
	        (t->replace_pending ? TASK_F_PENDING : 0) |
	        (t->state == MSG_ST_DONE ? TASK_F_DONE : 0) |
	        (has_version(t) ? TASK_F_VERSION : 0) |
	        (t->holder.session != 0 ? TASK_F_HOLDER : 0));
	buf_put_u32(b, t->priority);
	buf_put_u32(b, t->attempts);
	buf_put_u32(b, t->max_attempts);
	buf_put_u64(b, t->ttr);
	buf_put_u64(b, t->run_at);
	buf_put_u64(b, t->period);
	buf_put_u64(b, t->created_at);
	buf_put_u64(b, t->updated_at);
	buf_put_u64(b, t->taken_at);
	buf_put_u64(b, t->deadline);
	buf_put_u32(b, t->size);
	TRY(put_tube(b, t->tube, false));
	TRY(put_key(b, t->key, false));
	TRY(put_text(b, t->last_error, MSG_TEXT_MAX));
	TRY(put_payload(b, t->payload));
	if (t->replace_pending) {
		if (t->pending.payload.len != 0 &&
		    t->pending.payload.len != t->pending.size)
			return SLUICE_EINVAL;
		buf_put_u32(b, t->pending.priority);
		buf_put_u32(b, t->pending.max_attempts);
		buf_put_u64(b, t->pending.ttr);
		buf_put_u64(b, t->pending.run_at);
		buf_put_u64(b, t->pending.period);
		buf_put_u32(b, t->pending.size);
		TRY(put_payload(b, t->pending.payload));
	}
	if (t->state == MSG_ST_DONE) {
		buf_put_u64(b, t->done.finished_at);
		buf_put_u64(b, t->done.kept_until);
		buf_put_u64(b, t->done.duration);
		TRY(put_text(b, t->done.result, MSG_TEXT_MAX));
	}
	if (has_version(t)) {
		buf_put_u64(b, t->version);
		buf_put_u64(b, t->pending.version);
	}
	if (t->holder.session != 0) {
		buf_put_u32(b, t->holder.session);
		TRY(put_text(b, t->holder.peer, MSG_PEER_MAX));
	}
	if (!buf_failed(b))
		le_store_u32(b->data + at, (uint32_t)(b->len - at - 4));
	return 0;
}

static int
enc_tasks(struct buf *b, const struct msg_tasks *t)
{
	if (t->n > MSG_TAKE_MAX)
		return SLUICE_ELIMIT;
	buf_put_u32(b, t->n);
	for (uint32_t i = 0; i < t->n; i++)
		TRY(enc_task(b, &t->tasks[i]));
	return 0;
}

static int
enc_put_res(struct buf *b, const struct msg_put_res *r, bool message)
{
	buf_put_u16(b, r->status);
	buf_put_u8(b, r->created ? 1 : r->stale ? PUT_RES_STALE : 0);
	buf_put_u64(b, r->id);
	return message ? put_text(b, r->message, MSG_TEXT_MAX) : 0;
}

static int
enc_kvs(struct buf *b, const struct msg_kvs *k)
{
	if (k->n > UINT16_MAX)
		return SLUICE_ELIMIT;
	buf_put_u16(b, (uint16_t)k->n);
	for (uint32_t i = 0; i < k->n; i++) {
		const struct msg_kv *kv = &k->kvs[i];

		if (kv->name.len == 0 || kv->name.len > MSG_NAME_MAX)
			return SLUICE_ELIMIT;
		if (!name_valid(kv->name))
			return SLUICE_EINVAL;
		put_str(b, kv->name);
		buf_put_u64(b, kv->value);
	}
	return 0;
}

static int
enc_counts(struct buf *b, const struct msg_tube_stats *s)
{
	buf_put_u64(b, s->ready);
	buf_put_u64(b, s->delayed);
	buf_put_u64(b, s->taken);
	buf_put_u64(b, s->buried);
	buf_put_u64(b, s->paused_until);
	buf_put_u64(b, s->oldest_ready_age);
	return enc_kvs(b, &s->more);
}

static void
enc_dist(struct buf *b, const struct msg_dist *d)
{
	buf_put_u64(b, d->count);
	buf_put_u64(b, d->total);
	buf_put_u64(b, d->max);
	buf_put_u64(b, d->p50);
	buf_put_u64(b, d->p99);
}

static void
enc_hour(struct buf *b, const struct msg_hour *h)
{
	buf_put_u64(b, h->start);
	buf_put_u64(b, h->acks);
	buf_put_u64(b, h->fails);
	buf_put_u64(b, h->buries);
	buf_put_u64(b, h->ttr_expired);
	enc_dist(b, &h->work);
	enc_dist(b, &h->wait);
}

static int
enc_stats(struct buf *b, const struct msg_stats *s)
{
	if (s->role != MSG_ROLE_LEADER && s->role != MSG_ROLE_FOLLOWER)
		return SLUICE_EINVAL;
	buf_put_u8(b, s->role);
	buf_put_u64(b, s->epoch);
	buf_put_u64(b, s->lsn);
	buf_put_u64(b, s->durable_lsn);
	buf_put_u64(b, s->now);
	TRY(put_text(b, s->leader, MSG_URL_MAX));
	TRY(enc_counts(b, &s->totals));
	TRY(enc_kvs(b, &s->more));
	buf_put_u32(b, s->ntubes);
	for (uint32_t i = 0; i < s->ntubes; i++) {
		TRY(put_tube(b, s->tubes[i].name, false));
		TRY(enc_counts(b, &s->tubes[i]));
		if (s->settings)
			TRY(enc_tube_conf(b, &s->tubes[i].conf));
	}
	return 0;
}

static int
enc_member(struct buf *b, const struct msg_member *mb)
{
	if (mb->role >= MSG_NODE_ROLE_END_ || (mb->flags & ~MSG_MEMBER_ALL))
		return SLUICE_EINVAL;
	TRY(put_node(b, mb->name, false));
	TRY(put_text(b, mb->client, MSG_URL_MAX));
	TRY(put_text(b, mb->repl, MSG_URL_MAX));
	buf_put_u8(b, mb->role);
	buf_put_u8(b, mb->flags);
	buf_put_u64(b, mb->epoch);
	buf_put_u64(b, mb->durable_lsn);
	buf_put_u64(b, mb->lag_records);
	buf_put_u64(b, (uint64_t)mb->lease_until);
	buf_put_u64(b, mb->age_ms);
	return 0;
}

static int
enc_cluster(struct buf *b, const struct msg_cluster *c)
{
	TRY(put_node(b, c->cluster, false));
	TRY(put_node(b, c->node, false));
	TRY(put_node(b, c->leader, true));
	buf_put_u32(b, c->ttl_ms);
	TRY(put_text(b, c->etcd_error, MSG_TEXT_MAX));
	if (c->n > MSG_CLUSTER_MEMBERS_MAX)
		return SLUICE_ELIMIT;
	buf_put_u32(b, c->n);
	for (uint32_t i = 0; i < c->n; i++)
		TRY(enc_member(b, &c->members[i]));
	return 0;
}

static int
enc_rep_body(struct buf *b, const struct msg_rep *m)
{
	switch (m->op) {
	case MSG_OP_PUT:
		if (m->put.status != 0)
			return SLUICE_EINVAL;
		return enc_put_res(b, &m->put, false);
	case MSG_OP_PUT_BATCH:
		if (m->put_batch.n > MSG_BATCH_MAX)
			return SLUICE_ELIMIT;
		buf_put_u32(b, m->put_batch.n);
		for (uint32_t i = 0; i < m->put_batch.n; i++)
			TRY(enc_put_res(
			    b, &m->put_batch.items[i], m->put_batch.messages));
		return 0;
	case MSG_OP_ACK_BATCH:
	case MSG_OP_DELETE_BATCH:
		if (m->batch.n > MSG_BATCH_MAX)
			return SLUICE_ELIMIT;
		buf_put_u32(b, m->batch.n);
		for (uint32_t i = 0; i < m->batch.n; i++) {
			buf_put_u16(b, m->batch.items[i].status);
			if (m->batch.messages)
				TRY(put_text(b, m->batch.items[i].message,
				    MSG_TEXT_MAX));
		}
		return 0;
	case MSG_OP_TAKE:
	case MSG_OP_LIST:
	case MSG_OP_JOB:
		return enc_tasks(b, &m->tasks);
	case MSG_OP_ACK:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
	case MSG_OP_KICK_ID:
	case MSG_OP_UPDATE:
		if (m->after.state != MSG_ST_NONE &&
		    !state_valid(m->after.state))
			return SLUICE_EINVAL;
		buf_put_u64(b, m->after.id);
		buf_put_u8(b, m->after.state);
		buf_put_u64(b, m->after.run_at);
		buf_put_u64(b, m->after.deadline);
		return 0;
	case MSG_OP_KICK:
	case MSG_OP_FLUSH:
	case MSG_OP_DELETE_WHERE:
	case MSG_OP_RELEASE_ALL:
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PAUSE:
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
	case MSG_OP_TUBE_DELETE:
		buf_put_u64(b, m->count);
		return 0;
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_SHOW:
		TRY(put_tube(b, m->tube_conf.tube, false));
		return enc_tube_conf(b, &m->tube_conf.conf);
	case MSG_OP_DELETE:
	case MSG_OP_FOLLOW:
	case MSG_OP_AUTH:
		return 0;
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
		return enc_task(b, &m->task);
	case MSG_OP_STATS:
		return enc_stats(b, &m->stats);
	case MSG_OP_ERRORS:
		buf_put_u32(b, m->errors.n);
		for (uint32_t i = 0; i < m->errors.n; i++) {
			const struct msg_error_count *e = &m->errors.errors[i];

			TRY(put_text(b, e->text, MSG_TEXT_MAX));
			buf_put_u64(b, e->count);
			if (!m->errors.ids)
				continue;
			if (e->nids > MSG_ERROR_IDS)
				return SLUICE_ELIMIT;
			buf_put_u8(b, e->nids);
			for (uint8_t k = 0; k < e->nids; k++)
				buf_put_u64(b, e->ids[k]);
		}
		return 0;
	case MSG_OP_STATS_HOURLY:
		if (m->hours.n > MSG_HOURS_MAX)
			return SLUICE_ELIMIT;
		buf_put_u32(b, m->hours.n);
		for (uint32_t i = 0; i < m->hours.n; i++)
			enc_hour(b, &m->hours.hours[i]);
		return 0;
	case MSG_OP_CLUSTER:
		return enc_cluster(b, &m->cluster);
	case MSG_OP_HISTORY:
		TRY(history_shape(&m->history));
		buf_put_u64(b, m->history.start);
		buf_put_u32(b, m->history.step);
		buf_put_u8(b, m->history.kinds);
		buf_put_u32(b, m->history.n);
		for (size_t i = 0; i < (size_t)m->history.kinds * m->history.n;
		     i++)
			buf_put_u32(b, m->history.values[i]);
		return 0;
	case MSG_OP_SWITCHOVER:
		TRY(put_text(b, m->switchover.leader, MSG_URL_MAX));
		buf_put_u64(b, m->switchover.epoch);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* The flags byte of a reply (status 0). */
static uint8_t
rep_flag_byte(const struct msg_rep *m)
{
	switch (m->op) {
	case MSG_OP_PUT_BATCH:
		return m->put_batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_ACK_BATCH:
	case MSG_OP_DELETE_BATCH:
		return m->batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_ACK:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_BURY:
		return m->after.replaced ? REP_F_REPLACED : 0;
	case MSG_OP_STATS:
		return m->stats.settings ? STATS_F_SETTINGS : 0;
	case MSG_OP_ERRORS:
		return m->errors.ids ? ERRORS_F_IDS : 0;
	}
	return 0;
}

static void
put_rep_head(struct buf *b, uint8_t op, uint8_t flags, uint16_t status)
{
	buf_put_u8(b, MSG_MAGIC);
	buf_put_u8(b, MSG_VERSION);
	buf_put_u8(b, op);
	buf_put_u8(b, flags);
	buf_put_u16(b, status);
}

int
msg_encode_rep(struct buf *b, const struct msg_rep *m)
{
	size_t start = b->len;
	int rc;

	put_rep_head(b, m->op,
	    m->status == 0 && op_known(m->op) ? rep_flag_byte(m) : 0,
	    m->status);
	if (m->status != 0) {
		if ((rc = put_text(b, m->err.message, MSG_TEXT_MAX)) == 0)
			rc = put_text(b, m->err.leader, MSG_URL_MAX);
	} else {
		rc = op_known(m->op) ? enc_rep_body(b, m) : SLUICE_EUNKNOWNOP;
	}
	return enc_finish(b, start, rc);
}

/* At most `max` bytes of `s`, cut back to the start of a UTF-8 sequence
 * so that a cut never leaves half a character. */
static struct msg_str
cut_text(const char *s, size_t max)
{
	struct msg_str m = msg_cstr(s);

	if (m.len > max) {
		m.len = max;
		while (m.len > 0 && ((unsigned char)m.p[m.len] & 0xc0) == 0x80)
			m.len--;
	}
	return m;
}

int
msg_encode_err(struct buf *b, uint8_t op, int status, const char *message,
    const char *leader)
{
	struct msg_rep m;

	if (status <= 0 || status > UINT16_MAX)
		return SLUICE_EINVAL;
	memset(&m, 0, sizeof(m));
	m.op = op;
	m.status = (uint16_t)status;
	m.err.message = cut_text(message, MSG_TEXT_MAX);
	m.err.leader = cut_text(leader, MSG_URL_MAX);
	return msg_encode_rep(b, &m);
}

/* ---- retry safety ------------------------------------------------------ */

bool
msg_req_idempotent(const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
	case MSG_OP_STATS:
	case MSG_OP_LIST:
	case MSG_OP_ERRORS:
	case MSG_OP_TUBE_SHOW:
	case MSG_OP_TUBE_SET: /* absolute values: twice is once */
	case MSG_OP_STATS_HOURLY:
	case MSG_OP_CLUSTER:
	case MSG_OP_AUTH: /* the same token bound again */
	case MSG_OP_HISTORY:
		return true;
	case MSG_OP_PUT:
		return q->put.key.len > 0;
	case MSG_OP_PUT_BATCH:
		if (q->put_batch.items != NULL) {
			for (uint32_t i = 0; i < q->put_batch.n; i++)
				if (q->put_batch.items[i].key.len == 0)
					return false;
		} else {
			struct msg_iter it = q->put_batch.it;
			struct msg_put p;

			while (msg_next_put(&it, &p))
				if (p.key.len == 0)
					return false;
		}
		return q->put_batch.n > 0;
	}
	return false;
}
