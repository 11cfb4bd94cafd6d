/* msg - encode and decode wire messages (layout: docs/protocol.md).
 *
 * Files. This one frames a message (magic, version, op, flags, status,
 * the limits), checks the flags each op may carry, names the ops, and
 * hands each op's body to its family: msg_task.c (put, take, update,
 * peek, list, job, delete), msg_lease.c (ack, release, fail, touch,
 * bury, the ack and delete batches), msg_tube.c (kick, flush, pause,
 * delete_where, the tube's settings), msg_stats.c (stats, hourly,
 * errors, history), msg_node.c (snapshot, promote, follow, auth,
 * cluster, switchover), msg_groups.c (groups). The fields they are all made of,
 * and their checks, are msg_field.c's; what the files share is msg_wire.h.
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
#include "proto/msg_wire.h"
#include "sluice.h"

/* Flag bits each request op may set in the header. */
static const uint8_t req_flags[MSG_OP_END_] = {
	[MSG_OP_PUT] = PUT_F_ALL,
	[MSG_OP_PUT_BATCH] = BATCH_F_MESSAGES,
	[MSG_OP_TAKE] = TAKE_F_DETACH | TAKE_F_STRICT | TAKE_F_DURABLE,
	[MSG_OP_ACK] = LEASE_F_FORCE | LEASE_F_REPORT | ACK_F_RESULT,
	[MSG_OP_RELEASE] = RELEASE_F_PRIORITY | RELEASE_F_FRONT |
	    RELEASE_F_UNTAKE | LEASE_F_FORCE | LEASE_F_REPORT,
	[MSG_OP_FAIL] =
	    FAIL_F_DELAY | FAIL_F_FATAL | LEASE_F_FORCE | LEASE_F_REPORT,
	[MSG_OP_TOUCH] = LEASE_F_FORCE,
	[MSG_OP_BURY] = BURY_F_ERROR | LEASE_F_FORCE | LEASE_F_REPORT,
	[MSG_OP_LIST] = LIST_F_PAYLOADS | LIST_F_AFTER,
	[MSG_OP_KICK] = KICK_F_DELAYED | KICK_F_ERROR | KICK_F_DRY,
	[MSG_OP_PAUSE] = PAUSE_F_CREATE,
	[MSG_OP_ACK_BATCH] = BATCH_F_MESSAGES,
	[MSG_OP_DELETE_BATCH] = BATCH_F_MESSAGES,
	[MSG_OP_CANCEL] = BATCH_F_MESSAGES,
	[MSG_OP_UPDATE] = UPD_F_ALL,
	[MSG_OP_STATS] =
	    STATS_F_SETTINGS | STATS_F_DURATIONS | STATS_F_PAGE | STATS_F_TOP,
	[MSG_OP_TUBE_DELETE] = TUBE_DELETE_F_FORCE,
	[MSG_OP_TUBE_SET] = TUBE_F_LIMITS,
	[MSG_OP_TUBE_SHOW] = TUBE_F_LIMITS,
	[MSG_OP_ERRORS] = ERRORS_F_IDS | ERRORS_F_STATE,
	[MSG_OP_DELETE_WHERE] = WHERE_F_AGED | WHERE_F_FORCE | WHERE_F_DRY,
	[MSG_OP_DELETE_KEY] = KEY_F_TUBE,
	[MSG_OP_PEEK_KEY] = KEY_F_TUBE,
	[MSG_OP_SCHED_SET] = SCHED_F_PAUSED,
	[MSG_OP_SCHED_LIST] = SCHED_F_PAYLOADS,
	[MSG_OP_BATCH_SHOW] = BATCH_F_LIST,
	[MSG_OP_PEEK] = PEEK_F_BATCH,
	[MSG_OP_MOVE_IN] =
	    MSG_MOVE_IN_PLACE | MSG_MOVE_IN_PEND | MSG_MOVE_IN_READY,
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
	[MSG_OP_CANCEL] = BATCH_F_MESSAGES,
	[MSG_OP_WAIT] = RESULT_F_CANCELLED,
	[MSG_OP_STATS] = STATS_F_SETTINGS,
	[MSG_OP_TUBE_SET] = TUBE_F_LIMITS,
	[MSG_OP_TUBE_SHOW] = TUBE_F_LIMITS,
	[MSG_OP_ERRORS] = ERRORS_F_IDS,
	[MSG_OP_DELETE_KEY] = KEY_F_TUBE,
	[MSG_OP_PEEK_KEY] = KEY_F_TUBE,
	[MSG_OP_BATCH_SHOW] = BATCH_F_LIST,
	[MSG_OP_PEEK] = PEEK_F_BATCH,
	[MSG_OP_MOVE_OUT] = MSG_MOVE_REP_TASKS,
	[MSG_OP_MOVE_IN] = MSG_MOVE_REP_RES,
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
	[MSG_OP_GROUPS] = "groups",
	[MSG_OP_GROUP] = "group",
	[MSG_OP_BATCH_SHOW] = "batch_show",
	[MSG_OP_BATCH_SET] = "batch_set",
	[MSG_OP_SCHED_SET] = "sched_set",
	[MSG_OP_SCHED_LIST] = "sched_list",
	[MSG_OP_SCHED_CTL] = "sched_ctl",
	[MSG_OP_CANCEL] = "cancel",
	[MSG_OP_WAIT] = "wait",
	[MSG_OP_MAP] = "map",
	[MSG_OP_MAP_SET] = "map_set",
	[MSG_OP_MAP_DELETE] = "map_delete",
	[MSG_OP_MOVE_OUT] = "move_out",
	[MSG_OP_MOVE_IN] = "move_in",
	[MSG_OP_MOVE_END] = "move_end",
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

/* The family each op's codec belongs to (msg_task.c ... msg_node.c). */
static const struct msg_family *const families[MSG_OP_END_] = {
	[MSG_OP_PUT] = &msg_task_family,
	[MSG_OP_PUT_BATCH] = &msg_task_family,
	[MSG_OP_TAKE] = &msg_task_family,
	[MSG_OP_ACK] = &msg_lease_family,
	[MSG_OP_RELEASE] = &msg_lease_family,
	[MSG_OP_FAIL] = &msg_lease_family,
	[MSG_OP_TOUCH] = &msg_lease_family,
	[MSG_OP_BURY] = &msg_lease_family,
	[MSG_OP_KICK] = &msg_tube_family,
	[MSG_OP_KICK_ID] = &msg_task_family,
	[MSG_OP_DELETE] = &msg_task_family,
	[MSG_OP_DELETE_KEY] = &msg_task_family,
	[MSG_OP_FLUSH] = &msg_tube_family,
	[MSG_OP_PEEK] = &msg_task_family,
	[MSG_OP_PEEK_KEY] = &msg_task_family,
	[MSG_OP_PEEK_NEXT] = &msg_task_family,
	[MSG_OP_STATS] = &msg_stats_family,
	[MSG_OP_LIST] = &msg_task_family,
	[MSG_OP_ERRORS] = &msg_stats_family,
	[MSG_OP_PAUSE] = &msg_tube_family,
	[MSG_OP_SNAPSHOT] = &msg_node_family,
	[MSG_OP_PROMOTE] = &msg_node_family,
	[MSG_OP_FOLLOW] = &msg_node_family,
	[MSG_OP_RELEASE_ALL] = &msg_tube_family,
	[MSG_OP_ACK_BATCH] = &msg_lease_family,
	[MSG_OP_DELETE_BATCH] = &msg_lease_family,
	[MSG_OP_UPDATE] = &msg_task_family,
	[MSG_OP_STATS_HOURLY] = &msg_stats_family,
	[MSG_OP_DELETE_WHERE] = &msg_tube_family,
	[MSG_OP_JOB] = &msg_task_family,
	[MSG_OP_TUBE_SET] = &msg_tube_family,
	[MSG_OP_TUBE_SHOW] = &msg_tube_family,
	[MSG_OP_TUBE_DELETE] = &msg_tube_family,
	[MSG_OP_CLUSTER] = &msg_node_family,
	[MSG_OP_SWITCHOVER] = &msg_node_family,
	[MSG_OP_AUTH] = &msg_node_family,
	[MSG_OP_HISTORY] = &msg_stats_family,
	[MSG_OP_GROUPS] = &msg_groups_family,
	[MSG_OP_GROUP] = &msg_group_family,
	[MSG_OP_BATCH_SHOW] = &msg_batch_family,
	[MSG_OP_BATCH_SET] = &msg_batch_family,
	[MSG_OP_SCHED_SET] = &msg_sched_family,
	[MSG_OP_SCHED_LIST] = &msg_sched_family,
	[MSG_OP_SCHED_CTL] = &msg_sched_family,
	[MSG_OP_CANCEL] = &msg_lease_family,
	[MSG_OP_WAIT] = &msg_result_family,
	[MSG_OP_MAP] = &msg_map_family,
	[MSG_OP_MAP_SET] = &msg_map_family,
	[MSG_OP_MAP_DELETE] = &msg_map_family,
	[MSG_OP_MOVE_OUT] = &msg_move_family,
	[MSG_OP_MOVE_IN] = &msg_move_family,
	[MSG_OP_MOVE_END] = &msg_move_family,
};

/* ---- decoding ------------------------------------------------------------ */

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
	TRY(families[op]->get_req(&r, op, flags, pmax, &q));
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
		TRY(msg_get_text(&r, MSG_TEXT_MAX, &m.err.message));
		TRY(msg_get_text(&r, MSG_URL_MAX, &m.err.leader));
	} else {
		if (!op_known(m.op))
			return SLUICE_EUNKNOWNOP;
		if (b[3] & ~rep_flags[m.op])
			return SLUICE_EPROTO;
		TRY(families[m.op]->get_rep(&r, m.op, b[3], pmax, &m));
	}
	if (rd_left(&r) != 0)
		return SLUICE_EPROTO;
	*out = m;
	return 0;
}

/* ---- encoding ------------------------------------------------------------ */

/* The header's flags byte of a request of a known op. */
static uint8_t
req_flag_byte(const struct msg_req *q)
{
	const struct msg_family *f = families[q->op];

	return f->req_flags != NULL ? f->req_flags(q) : 0;
}

/* The flags byte of a reply (status 0) of a known op. */
static uint8_t
rep_flag_byte(const struct msg_rep *m)
{
	const struct msg_family *f = families[m->op];

	return f->rep_flags != NULL ? f->rep_flags(m) : 0;
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
		rc = families[q->op]->put_req(b, q);
	}
	return enc_finish(b, start, rc);
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
		if ((rc = msg_put_text(b, m->err.message, MSG_TEXT_MAX)) == 0)
			rc = msg_put_text(b, m->err.leader, MSG_URL_MAX);
	} else {
		rc = op_known(m->op) ? families[m->op]->put_rep(b, m)
		                     : SLUICE_EUNKNOWNOP;
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
	case MSG_OP_GROUPS:
	case MSG_OP_SCHED_LIST:
	case MSG_OP_BATCH_SHOW:
	case MSG_OP_MOVE_OUT: /* a hold answers the batch held before; a
	                         drop or a copy sent twice is done once */
	case MSG_OP_MOVE_IN:
	case MSG_OP_MOVE_END:
	case MSG_OP_SCHED_SET: /* absolute values: twice is once */
	case MSG_OP_WAIT:
	case MSG_OP_CANCEL: /* a task cancelled twice is cancelled */
	case MSG_OP_MAP:
	case MSG_OP_MAP_SET: /* the same value set again */
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
