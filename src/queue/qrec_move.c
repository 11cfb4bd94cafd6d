/* qrec_move - the records of a tube's move between clusters (move.h):
 * their check, encoding, decoding and text. qrec.c calls here for these
 * types. Pure, like qrec.c.
 *
 * Layouts (little-endian; str16 = u16 length + bytes):
 *   MOVE_HOLD u64 id, u64 lease: a ready, delayed or buried task is held
 *             for the move, taken under `lease` (>= 1) until it is
 *             dropped; its state before is kept for the copy
 *   MOVE_DROP u64 id, u64 lease: the task held under `lease` goes (it
 *             was copied to the target)
 *   MOVE_IN   u64 src_id, str16 source (1..QREC_CLUSTER_MAX bytes of
 *             [A-Za-z0-9_.:-]), u8 fold, then
 *             fold 1: u64 id, str16 tube - the copy of src_id is the
 *             task `id` already there (its key was live, or it was
 *             copied before): nothing is made, the pair is noted;
 *             fold 0: u8 state (1 ready or delayed by run_at, 4
 *             buried), u32 attempts, i64 created_at, str16 error (empty:
 *             none), str16 group (empty: none), a PUT's body - the copy
 *             is made with its attempts, error, creation time, group;
 *             fold 2: the same, and the copy takes the id of the
 *             placeholder of src_id (its key's, made by MOVE_PLACE)
 *   MOVE_END  str16 tube: the tube's move is over here: at the target
 *             the pairs of source ids go, at a source its mark
 *   MOVE_MARK str16 tube: the tube's tasks start moving out of this
 *             cluster: a take finds none of them from now on
 *   MOVE_KEY  u64 src_id, str16 source, str16 tube, str16 key, u8 fold,
 *             u64 id, i64 expires, u64 version: the reservation of `key`
 *             in `tube` (the key of source task src_id, completed there)
 *             holds here until `expires`, with its version (0: none);
 *             fold 0: a new entry under the new id `id` (it names no
 *             task, as a reservation whose done task was purged); fold 1:
 *             the key is live or reserved here already (task or entry
 *             `id`), nothing is made; either way the pair is noted */
#include <inttypes.h>
#include <string.h>

#include "queue/qrec.h"

bool
qrec_cluster_valid(const char *p, size_t len)
{
	if (len < 1 || len > QREC_CLUSTER_MAX || p == NULL)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = p[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		        (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
		        ch == ':' || ch == '-'))
			return false;
	}
	return true;
}

static bool
in_ok(const struct qrec_move *m)
{
	struct qrec put;

	if (!qrec_cluster_valid(m->source, m->source_len) || m->src_id == 0)
		return false;
	if (m->fold == 1)
		return m->id != 0 && qrec_tube_valid(m->tube, m->tube_len);
	if (m->fold > 2)
		return false;
	if ((m->state != 1 && m->state != 4) || m->created_at < 0 ||
	    m->created_at > QREC_TIME_MAX || m->error_len > QREC_ERROR_MAX ||
	    (m->error_len > 0 && m->error == NULL))
		return false;
	memset(&put, 0, sizeof(put));
	put.type = m->put.group_len > 0 ? QREC_PUT_G : QREC_PUT;
	put.u.put = m->put;
	return m->put.version == 0 && m->put.throttle_until == 0 &&
	    m->put.nafter == 0 && m->put.batch_len == 0 && qrec_valid(&put);
}

bool
qrec_move_valid(const struct qrec_move *m, uint16_t type)
{
	switch (type) {
	case QREC_MOVE_HOLD:
	case QREC_MOVE_DROP:
		return m->id != 0 && m->lease != 0;
	case QREC_MOVE_IN:
		return in_ok(m);
	case QREC_MOVE_KEY:
	case QREC_MOVE_PLACE:
		return qrec_cluster_valid(m->source, m->source_len) &&
		    m->src_id != 0 && m->id != 0 &&
		    m->fold <= (type == QREC_MOVE_KEY ? 2 : 1) &&
		    qrec_tube_valid(m->tube, m->tube_len) && m->key_len >= 1 &&
		    m->key_len <= QREC_KEY_MAX && m->key != NULL &&
		    m->expires >= 0 && m->expires <= QREC_TIME_MAX;
	case QREC_MOVE_PEND:
		return qrec_cluster_valid(m->source, m->source_len) &&
		    m->state <= 1 && qrec_tube_valid(m->tube, m->tube_len);
	case QREC_MOVE_END:
	case QREC_MOVE_MARK:
	case QREC_MOVE_KEEP:
		return qrec_tube_valid(m->tube, m->tube_len);
	default:
		return false;
	}
}

void
qrec_move_encode(const struct qrec_move *m, uint16_t type, struct buf *out)
{
	switch (type) {
	case QREC_MOVE_HOLD:
	case QREC_MOVE_DROP:
		buf_put_u64(out, m->id);
		buf_put_u64(out, m->lease);
		break;
	case QREC_MOVE_IN:
		buf_put_u64(out, m->src_id);
		buf_put_str16(out, m->source, m->source_len);
		buf_put_u8(out, m->fold);
		if (m->fold == 1) {
			buf_put_u64(out, m->id);
			buf_put_str16(out, m->tube, m->tube_len);
			break;
		}
		buf_put_u8(out, m->state);
		buf_put_u32(out, m->attempts);
		buf_put_i64(out, m->created_at);
		buf_put_str16(out, m->error, m->error_len);
		buf_put_str16(out, m->put.group, m->put.group_len);
		qrec_put_body_encode(&m->put, out);
		break;
	case QREC_MOVE_KEY:
		buf_put_u64(out, m->src_id);
		buf_put_str16(out, m->source, m->source_len);
		buf_put_str16(out, m->tube, m->tube_len);
		buf_put_str16(out, m->key, m->key_len);
		buf_put_u8(out, m->fold);
		buf_put_u64(out, m->id);
		buf_put_i64(out, m->expires);
		buf_put_u64(out, m->version);
		break;
	case QREC_MOVE_PLACE:
		buf_put_u64(out, m->src_id);
		buf_put_str16(out, m->source, m->source_len);
		buf_put_str16(out, m->tube, m->tube_len);
		buf_put_str16(out, m->key, m->key_len);
		buf_put_u8(out, m->fold);
		buf_put_u64(out, m->id);
		break;
	case QREC_MOVE_PEND:
		buf_put_str16(out, m->tube, m->tube_len);
		buf_put_str16(out, m->source, m->source_len);
		buf_put_u8(out, m->state);
		break;
	case QREC_MOVE_END:
	case QREC_MOVE_MARK:
	case QREC_MOVE_KEEP:
		buf_put_str16(out, m->tube, m->tube_len);
		break;
	default:
		break;
	}
}

void
qrec_move_decode(struct rd *r, uint16_t type, struct qrec_move *m)
{
	switch (type) {
	case QREC_MOVE_HOLD:
	case QREC_MOVE_DROP:
		m->id = rd_u64(r);
		m->lease = rd_u64(r);
		break;
	case QREC_MOVE_IN:
		m->src_id = rd_u64(r);
		m->source = rd_str16(r, QREC_CLUSTER_MAX, &m->source_len);
		m->fold = rd_u8(r);
		if (m->fold == 1) {
			m->id = rd_u64(r);
			m->tube = rd_str16(r, QREC_NAME_MAX, &m->tube_len);
			break;
		}
		m->state = rd_u8(r);
		m->attempts = rd_u32(r);
		m->created_at = rd_i64(r);
		m->error = rd_str16(r, QREC_ERROR_MAX, &m->error_len);
		m->put.group = rd_str16(r, QREC_GROUP_MAX, &m->put.group_len);
		qrec_put_body_decode(r, &m->put);
		break;
	case QREC_MOVE_KEY:
		m->src_id = rd_u64(r);
		m->source = rd_str16(r, QREC_CLUSTER_MAX, &m->source_len);
		m->tube = rd_str16(r, QREC_NAME_MAX, &m->tube_len);
		m->key = rd_str16(r, QREC_KEY_MAX, &m->key_len);
		m->fold = rd_u8(r);
		m->id = rd_u64(r);
		m->expires = rd_i64(r);
		m->version = rd_u64(r);
		break;
	case QREC_MOVE_PLACE:
		m->src_id = rd_u64(r);
		m->source = rd_str16(r, QREC_CLUSTER_MAX, &m->source_len);
		m->tube = rd_str16(r, QREC_NAME_MAX, &m->tube_len);
		m->key = rd_str16(r, QREC_KEY_MAX, &m->key_len);
		m->fold = rd_u8(r);
		m->id = rd_u64(r);
		break;
	case QREC_MOVE_PEND:
		m->tube = rd_str16(r, QREC_NAME_MAX, &m->tube_len);
		m->source = rd_str16(r, QREC_CLUSTER_MAX, &m->source_len);
		m->state = rd_u8(r);
		break;
	case QREC_MOVE_END:
	case QREC_MOVE_MARK:
	case QREC_MOVE_KEEP:
		m->tube = rd_str16(r, QREC_NAME_MAX, &m->tube_len);
		break;
	default:
		break;
	}
}

void
qrec_move_format(const struct qrec_move *m, uint16_t type, struct buf *out)
{
	switch (type) {
	case QREC_MOVE_HOLD:
	case QREC_MOVE_DROP:
		buf_printf(
		    out, " id=%" PRIu64 " lease=%" PRIu64, m->id, m->lease);
		break;
	case QREC_MOVE_IN:
		buf_printf(out, " from=%.*s:%" PRIu64, (int)m->source_len,
		    m->source, m->src_id);
		if (m->fold == 1) {
			buf_printf(out, " folded_into=%" PRIu64 " tube=%.*s",
			    m->id, (int)m->tube_len, m->tube);
			break;
		}
		if (m->fold == 2)
			buf_printf(out, " placed");
		buf_printf(out,
		    " id=%" PRIu64 " tube=%.*s state=%s attempts=%" PRIu32
		    " pri=%" PRIu32 " run_at=%" PRId64 " payload=%zuB",
		    m->put.id, (int)m->put.tube_len, m->put.tube,
		    m->state == 4 ? "buried" : "waiting", m->attempts,
		    m->put.pri, m->put.run_at, m->put.payload_len);
		if (m->put.key_len > 0)
			buf_printf(
			    out, " key=%.*s", (int)m->put.key_len, m->put.key);
		if (m->put.group_len > 0)
			buf_printf(out, " group=%.*s", (int)m->put.group_len,
			    m->put.group);
		break;
	case QREC_MOVE_KEY:
		buf_printf(out,
		    " from=%.*s:%" PRIu64 " tube=%.*s key=%.*s %s=%" PRIu64
		    " until=%" PRId64,
		    (int)m->source_len, m->source, m->src_id, (int)m->tube_len,
		    m->tube, (int)m->key_len, m->key,
		    m->fold == 1       ? "folded_into"
		        : m->fold == 2 ? "placeholder"
		                       : "id",
		    m->id, m->expires);
		if (m->version != 0)
			buf_printf(out, " version=%" PRIu64, m->version);
		break;
	case QREC_MOVE_PLACE:
		buf_printf(out,
		    " from=%.*s:%" PRIu64 " tube=%.*s key=%.*s %s=%" PRIu64,
		    (int)m->source_len, m->source, m->src_id, (int)m->tube_len,
		    m->tube, (int)m->key_len, m->key,
		    m->fold ? "folded_into" : "id", m->id);
		break;
	case QREC_MOVE_PEND:
		buf_printf(out, " tube=%.*s from=%.*s keys=%s",
		    (int)m->tube_len, m->tube, (int)m->source_len, m->source,
		    m->state ? "pending" : "here");
		break;
	case QREC_MOVE_END:
	case QREC_MOVE_MARK:
	case QREC_MOVE_KEEP:
		buf_printf(out, " tube=%.*s", (int)m->tube_len, m->tube);
		break;
	default:
		break;
	}
}
