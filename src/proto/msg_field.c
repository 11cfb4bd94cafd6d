/* msg_field - the fields every message of the wire codec is made of
 * (strings, tubes, keys, texts, node names, payloads, counts) and the one
 * check each has, shared by the decoders and the encoders: the encoder
 * refuses exactly what the decoder would refuse. The decoders read with
 * `struct rd` (util/buf.h) and test its sticky `bad` flag before they
 * look at a length (NEED), so a short message is SLUICE_ETRUNC, never a
 * limit's error computed from a zero that was not there. The messages
 * themselves are in msg_task.c, msg_lease.c, msg_tube.c, msg_stats.c and
 * msg_node.c; the framing in msg.c. */
#include <stdio.h>
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "util/name.h"
#include "sluice.h"

bool
msg_tube_valid(const char *p, size_t len)
{
	return name_valid(p, len, MSG_TUBE_MAX);
}

void
msg_tube_why(struct msg_str s, char *out, size_t cap)
{
	static const char rule[] =
	    "a tube name is 1-200 bytes of A-Z a-z 0-9 _ . : / -";
	int show = s.len > 60 ? 60 : (int)s.len;
	size_t i = 0;

	if (s.len == 0) {
		snprintf(out, cap, "the tube name is empty; %s", rule);
		return;
	}
	if (s.len > MSG_TUBE_MAX) {
		snprintf(out, cap, "tube '%.*s...' is %zu bytes long; %s", show,
		    s.p, s.len, rule);
		return;
	}
	while (i < s.len && msg_tube_valid(s.p + i, 1))
		i++;
	if (i < s.len && (unsigned char)s.p[i] >= 0x20 &&
	    (unsigned char)s.p[i] < 0x7f)
		snprintf(out, cap, "tube '%.*s' has '%c' at byte %zu; %s", show,
		    s.p, s.p[i], i + 1, rule);
	else
		snprintf(out, cap,
		    "tube '%.*s' has byte 0x%02x at byte %zu; %s", show, s.p,
		    i < s.len ? (unsigned char)s.p[i] : 0, i + 1, rule);
}

/* A tube the encoder would refuse: `s` unless it is valid (or empty
 * where `empty_ok`). */
static bool
refused(struct msg_str s, bool empty_ok, struct msg_str *out)
{
	if (msg_check_tube(s, empty_ok) == 0)
		return false;
	*out = s;
	return true;
}

bool
msg_req_bad_tube(const struct msg_req *q, struct msg_str *out)
{
	const struct msg_str *tube;
	struct msg_iter it;
	struct msg_str s;

	switch (q->op) {
	case MSG_OP_PUT:
		return refused(q->put.tube, false, out);
	case MSG_OP_TAKE:
		it = q->take.it;
		for (uint32_t i = 0; i < q->take.ntubes; i++) {
			tube = LIST_AT(q->take.tubes, i, it, msg_next_str, s);
			if (tube != NULL && refused(*tube, false, out))
				return true;
		}
		return false;
	case MSG_OP_ACK:
		return refused(q->ack.to, true, out);
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PEEK_KEY:
		return refused(q->by_key.tube, true, out);
	case MSG_OP_PEEK_NEXT:
		return refused(q->peek_next.tube, false, out);
	case MSG_OP_LIST:
		return refused(q->list.tube, false, out);
	case MSG_OP_KICK:
		return refused(q->kick.tube, false, out);
	case MSG_OP_FLUSH:
	case MSG_OP_RELEASE_ALL:
	case MSG_OP_ERRORS:
		return refused(q->tube, false, out);
	case MSG_OP_STATS_HOURLY:
	case MSG_OP_GROUPS:
		return refused(q->tube, true, out);
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_SHOW:
		return refused(q->tube_set.tube, false, out) ||
		    refused(q->tube_set.conf.dead_letter, true, out);
	case MSG_OP_TUBE_DELETE:
		return refused(q->tube_delete.tube, false, out);
	case MSG_OP_PAUSE:
		return refused(q->pause.tube, false, out);
	case MSG_OP_DELETE_WHERE:
		return refused(q->where.tube, false, out);
	case MSG_OP_STATS:
		return refused(q->stats.tube, true, out);
	case MSG_OP_HISTORY:
		return refused(q->history.tube, true, out);
	case MSG_OP_SCHED_SET:
		return refused(q->sched_set.tube, false, out);
	default:
		return false;
	}
}

int
msg_check_tube(struct msg_str s, bool empty_ok)
{
	if (s.len == 0 && empty_ok)
		return 0;
	return msg_tube_valid(s.p, s.len) ? 0 : SLUICE_ETUBE;
}

int
msg_check_key(struct msg_str s, bool required)
{
	if (s.len > MSG_KEY_MAX || (s.len == 0 && required))
		return SLUICE_EKEY;
	if (s.len > 0 && memchr(s.p, '\0', s.len) != NULL)
		return SLUICE_EKEY;
	return 0;
}

int
msg_check_text(struct msg_str s, size_t max)
{
	return s.len > max ? SLUICE_ELIMIT : 0;
}

/* A node's or a cluster's name: 1..MSG_NODE_MAX bytes (0 when `empty_ok`),
 * no NUL byte (libsluice hands them out as C strings). */
int
msg_check_node(struct msg_str s, bool empty_ok)
{
	if ((s.len == 0 && !empty_ok) || s.len > MSG_NODE_MAX)
		return SLUICE_EINVAL;
	if (s.len > 0 && memchr(s.p, '\0', s.len) != NULL)
		return SLUICE_EINVAL;
	return 0;
}

bool
msg_name_valid(struct msg_str s)
{
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		        c == '_'))
			return false;
	}
	return true;
}

bool
msg_state_valid(uint8_t st)
{
	return st >= MSG_ST_READY && st <= MSG_ST_WAITING;
}

/* A count of `n` elements allowed 1..max: 0 is EINVAL, more ELIMIT. */
int
msg_check_count(uint32_t n, uint32_t max)
{
	if (n == 0)
		return SLUICE_EINVAL;
	return n > max ? SLUICE_ELIMIT : 0;
}

/* ---- decoding ------------------------------------------------------------ */

void
msg_iter_start(struct msg_iter *it, const struct rd *r, uint32_t n, size_t pmax)
{
	it->r = *r;
	it->left = n;
	it->payload_max = pmax;
	it->flags = 0;
}

/* The `len` bytes after a length just read: at most `max`, `too_long` is
 * the error beyond. */
int
msg_get_bytes(
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
int
msg_get_str(struct rd *r, size_t max, int too_long, struct msg_str *out)
{
	uint16_t len = rd_u16(r);

	return msg_get_bytes(r, len, max, too_long, out);
}

int
msg_get_tube(struct rd *r, bool empty_ok, struct msg_str *out)
{
	TRY(msg_get_str(r, MSG_TUBE_MAX, SLUICE_ETUBE, out));
	return msg_check_tube(*out, empty_ok);
}

int
msg_get_key(struct rd *r, bool required, struct msg_str *out)
{
	TRY(msg_get_str(r, MSG_KEY_MAX, SLUICE_EKEY, out));
	return msg_check_key(*out, required);
}

int
msg_get_text(struct rd *r, size_t max, struct msg_str *out)
{
	return msg_get_str(r, max, SLUICE_ELIMIT, out);
}

int
msg_get_node(struct rd *r, bool empty_ok, struct msg_str *out)
{
	TRY(msg_get_str(r, MSG_NODE_MAX, SLUICE_EINVAL, out));
	return msg_check_node(*out, empty_ok);
}

int
msg_get_payload(struct rd *r, size_t max, struct msg_str *out)
{
	uint32_t len = rd_u32(r);

	return msg_get_bytes(r, len, max, SLUICE_ETOOBIG, out);
}

bool
msg_next_str(struct msg_iter *it, struct msg_str *out)
{
	NEXT(it, msg_get_tube(&it->r, false, out));
}

/* ---- encoding ------------------------------------------------------------ */

void
msg_put_str(struct buf *b, struct msg_str s)
{
	buf_put_str16(b, s.p, s.len);
}

/* Writes `s` when its check `rc` passed; returns rc. */
static int
put_checked(struct buf *b, struct msg_str s, int rc)
{
	if (rc == 0)
		msg_put_str(b, s);
	return rc;
}

int
msg_put_tube(struct buf *b, struct msg_str s, bool empty_ok)
{
	return put_checked(b, s, msg_check_tube(s, empty_ok));
}

int
msg_put_key(struct buf *b, struct msg_str s, bool required)
{
	return put_checked(b, s, msg_check_key(s, required));
}

int
msg_put_text(struct buf *b, struct msg_str s, size_t max)
{
	return put_checked(b, s, msg_check_text(s, max));
}

int
msg_put_node(struct buf *b, struct msg_str s, bool empty_ok)
{
	return put_checked(b, s, msg_check_node(s, empty_ok));
}

int
msg_put_payload(struct buf *b, struct msg_str s)
{
	if (s.len > MSG_SIZE_MAX)
		return SLUICE_ETOOBIG;
	buf_put_blob(b, s.p, s.len);
	return 0;
}
