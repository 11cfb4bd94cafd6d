/* replmsg - encode and decode the replication messages (fetch, ack,
 * snapshot chunk, and their replies) that a follower (server/repl/follow*.c)
 * and its leader (server/repl/lead*.c, server/repl/catchup.c) exchange. The
 * contract and the shapes are in replmsg.h, the byte layout in
 * docs/replication.md. Pure, like msg.c: every decoder checks each length
 * against the bytes it has and against its limit before it reads, and an
 * encoder refuses what its decoder would refuse. */
#include <errno.h>
#include <string.h>

#include "proto/replmsg.h"
#include "sluice.h"

static void
put_head(struct buf *b, uint8_t op, uint8_t flags)
{
	buf_put_u8(b, MSG_MAGIC);
	buf_put_u8(b, MSG_VERSION);
	buf_put_u8(b, op);
	buf_put_u8(b, flags);
}

static void
put_req_head(struct buf *b, uint8_t op)
{
	put_head(b, op, 0);
}

static void
put_rep_head(struct buf *b, uint8_t op)
{
	put_head(b, op, 0);
	buf_put_u16(b, 0);
}

static int
finish(struct buf *b)
{
	return buf_failed(b) ? -ENOMEM : 0;
}

/* Checks a request's head (flags outside `known` refused) and starts
 * reading its body. */
static int
req_head_flags(const void *p, size_t len, uint8_t op, uint8_t known,
    uint8_t *flags, struct rd *r)
{
	const uint8_t *h = p;

	if (len < MSG_REQ_HDR)
		return SLUICE_ETRUNC;
	if (h[0] != MSG_MAGIC)
		return SLUICE_EPROTO;
	if (h[1] != MSG_VERSION)
		return SLUICE_EVERSION;
	if (h[2] != op || (h[3] & ~known) != 0)
		return SLUICE_EPROTO;
	*flags = h[3];
	rd_init(r, h + MSG_REQ_HDR, len - MSG_REQ_HDR);
	return 0;
}

static int
req_head(const void *p, size_t len, uint8_t op, struct rd *r)
{
	uint8_t flags;

	return req_head_flags(p, len, op, 0, &flags, r);
}

static int
rep_head(const void *p, size_t len, uint8_t op, struct rd *r)
{
	int rc = replmsg_rep_status(p, len, op);

	if (rc != 0)
		return rc;
	rd_init(r, (const uint8_t *)p + MSG_REP_HDR, len - MSG_REP_HDR);
	return 0;
}

static int
done(const struct rd *r)
{
	if (rd_failed(r))
		return SLUICE_ETRUNC;
	return rd_left(r) == 0 ? 0 : SLUICE_EPROTO;
}

uint8_t
replmsg_req_op(const void *p, size_t len)
{
	const uint8_t *h = p;

	if (len < MSG_REQ_HDR || h[0] != MSG_MAGIC)
		return 0;
	switch (h[2]) {
	case REPLMSG_OP_FETCH:
	case REPLMSG_OP_ACK:
	case REPLMSG_OP_SNAP:
		return h[2];
	default:
		return 0;
	}
}

int
replmsg_rep_status(const void *p, size_t len, uint8_t op)
{
	const uint8_t *h = p;

	if (len < MSG_REP_HDR)
		return SLUICE_ETRUNC;
	if (h[0] != MSG_MAGIC)
		return SLUICE_EPROTO;
	if (h[1] != MSG_VERSION)
		return SLUICE_EVERSION;
	if (h[2] != op || h[3] != 0)
		return SLUICE_EPROTO;
	return le_load_u16(h + 4);
}

int
replmsg_encode_fetch(struct buf *b, const struct replmsg_fetch_req *q)
{
	if (q->url.len > MSG_URL_MAX || q->token.len > MSG_TOKEN_MAX)
		return SLUICE_ELIMIT;
	put_head(
	    b, REPLMSG_OP_FETCH, q->token.len > 0 ? REPLMSG_FETCH_F_TOKEN : 0);
	buf_put_u64(b, q->from_lsn);
	buf_put_u64(b, q->last_epoch);
	buf_put_u64(b, q->last_nonce);
	buf_put_u64(b, q->epoch_start);
	buf_put_u64(b, q->durable_lsn);
	buf_put_u32(b, q->max_bytes);
	buf_put_u32(b, q->wait_ms);
	buf_put_str16(b, q->url.p, q->url.len);
	if (q->token.len > 0)
		buf_put_str16(b, q->token.p, q->token.len);
	return finish(b);
}

int
replmsg_decode_fetch(const void *p, size_t len, struct replmsg_fetch_req *q)
{
	struct rd r;
	uint8_t flags;
	size_t n;
	int rc;

	memset(q, 0, sizeof(*q));
	q->token.p = "";
	rc = req_head_flags(
	    p, len, REPLMSG_OP_FETCH, REPLMSG_FETCH_F_TOKEN, &flags, &r);
	if (rc != 0)
		return rc;
	q->from_lsn = rd_u64(&r);
	q->last_epoch = rd_u64(&r);
	q->last_nonce = rd_u64(&r);
	q->epoch_start = rd_u64(&r);
	q->durable_lsn = rd_u64(&r);
	q->max_bytes = rd_u32(&r);
	q->wait_ms = rd_u32(&r);
	q->url.p = rd_str16(&r, MSG_URL_MAX, &n);
	q->url.len = n;
	if (flags & REPLMSG_FETCH_F_TOKEN) {
		q->token.p = rd_str16(&r, MSG_TOKEN_MAX, &n);
		q->token.len = n;
	}
	if ((rc = done(&r)) != 0)
		return rc;
	if (q->from_lsn == 0 || q->last_epoch == 0 ||
	    ((flags & REPLMSG_FETCH_F_TOKEN) && q->token.len == 0))
		return SLUICE_EINVAL;
	return 0;
}

int
replmsg_encode_fetch_rep(struct buf *b, const struct replmsg_fetch_rep *m)
{
	if (m->url.len > MSG_URL_MAX || m->records_len > UINT32_MAX)
		return SLUICE_ELIMIT;
	put_rep_head(b, REPLMSG_OP_FETCH);
	buf_put_u8(b, m->kind);
	buf_put_u64(b, m->epoch);
	buf_put_u64(b, m->last_lsn);
	buf_put_u64(b, m->last_time);
	buf_put_i64(b, m->now);
	buf_put_str16(b, m->url.p, m->url.len);
	switch (m->kind) {
	case REPLMSG_FETCH_RECORDS:
		buf_put_u32(b, m->count);
		buf_put_blob(b, m->records, m->records_len);
		break;
	case REPLMSG_FETCH_SNAPSHOT:
		buf_put_u64(b, m->snap_lsn);
		break;
	case REPLMSG_FETCH_DIVERGED:
		buf_put_u64(b, m->truncate_to);
		break;
	default:
		return SLUICE_EINVAL;
	}
	return finish(b);
}

int
replmsg_decode_fetch_rep(const void *p, size_t len, struct replmsg_fetch_rep *m)
{
	struct rd r;
	size_t n;
	int rc;

	memset(m, 0, sizeof(*m));
	if ((rc = rep_head(p, len, REPLMSG_OP_FETCH, &r)) != 0)
		return rc;
	m->kind = rd_u8(&r);
	m->epoch = rd_u64(&r);
	m->last_lsn = rd_u64(&r);
	m->last_time = rd_u64(&r);
	m->now = rd_i64(&r);
	m->url.p = rd_str16(&r, MSG_URL_MAX, &n);
	m->url.len = n;
	switch (m->kind) {
	case REPLMSG_FETCH_RECORDS:
		m->count = rd_u32(&r);
		m->records = rd_blob(&r, REPLMSG_RECORDS_MAX, &n);
		m->records_len = n;
		break;
	case REPLMSG_FETCH_SNAPSHOT:
		m->snap_lsn = rd_u64(&r);
		break;
	case REPLMSG_FETCH_DIVERGED:
		m->truncate_to = rd_u64(&r);
		break;
	default:
		return SLUICE_EPROTO;
	}
	return done(&r);
}

int
replmsg_encode_ack(struct buf *b, const struct replmsg_ack_req *q)
{
	put_req_head(b, REPLMSG_OP_ACK);
	buf_put_u64(b, q->durable_lsn);
	return finish(b);
}

int
replmsg_decode_ack(const void *p, size_t len, struct replmsg_ack_req *q)
{
	struct rd r;
	int rc;

	if ((rc = req_head(p, len, REPLMSG_OP_ACK, &r)) != 0)
		return rc;
	q->durable_lsn = rd_u64(&r);
	return done(&r);
}

int
replmsg_encode_ack_rep(struct buf *b, uint64_t epoch)
{
	put_rep_head(b, REPLMSG_OP_ACK);
	buf_put_u64(b, epoch);
	return finish(b);
}

int
replmsg_decode_ack_rep(const void *p, size_t len, uint64_t *epoch)
{
	struct rd r;
	int rc;

	if ((rc = rep_head(p, len, REPLMSG_OP_ACK, &r)) != 0)
		return rc;
	*epoch = rd_u64(&r);
	return done(&r);
}

int
replmsg_encode_snap(struct buf *b, const struct replmsg_snap_req *q)
{
	put_req_head(b, REPLMSG_OP_SNAP);
	buf_put_u64(b, q->snap_lsn);
	buf_put_u64(b, q->offset);
	buf_put_u32(b, q->max_bytes);
	return finish(b);
}

int
replmsg_decode_snap(const void *p, size_t len, struct replmsg_snap_req *q)
{
	struct rd r;
	int rc;

	if ((rc = req_head(p, len, REPLMSG_OP_SNAP, &r)) != 0)
		return rc;
	q->snap_lsn = rd_u64(&r);
	q->offset = rd_u64(&r);
	q->max_bytes = rd_u32(&r);
	return done(&r);
}

int
replmsg_encode_snap_rep(struct buf *b, const struct replmsg_snap_rep *m)
{
	if (m->len > REPLMSG_CHUNK_MAX || m->nhist > REPLMSG_HISTORY_MAX)
		return SLUICE_ELIMIT;
	put_rep_head(b, REPLMSG_OP_SNAP);
	buf_put_u64(b, m->snap_lsn);
	buf_put_u64(b, m->size);
	buf_put_u64(b, m->offset);
	buf_put_blob(b, m->data, m->len);
	buf_put_u32(b, m->nhist);
	/* the history, or a decoded reply's sent on */
	if (m->nhist > 0 && m->hist == NULL && m->hist_raw == NULL)
		return SLUICE_EINVAL;
	for (uint32_t i = 0; i < m->nhist; i++) {
		struct replmsg_epoch e =
		    m->hist != NULL ? m->hist[i] : replmsg_hist_at(m, i);

		buf_put_u64(b, e.epoch);
		buf_put_u64(b, e.nonce);
		buf_put_u64(b, e.start);
	}
	return finish(b);
}

int
replmsg_decode_snap_rep(const void *p, size_t len, struct replmsg_snap_rep *m)
{
	struct rd r;
	size_t n;
	int rc;

	memset(m, 0, sizeof(*m));
	if ((rc = rep_head(p, len, REPLMSG_OP_SNAP, &r)) != 0)
		return rc;
	m->snap_lsn = rd_u64(&r);
	m->size = rd_u64(&r);
	m->offset = rd_u64(&r);
	m->data = rd_blob(&r, REPLMSG_CHUNK_MAX, &n);
	m->len = n;
	m->nhist = rd_u32(&r);
	if (m->nhist > REPLMSG_HISTORY_MAX)
		return SLUICE_ELIMIT;
	m->hist_raw = rd_bytes(&r, (size_t)m->nhist * 24);
	if ((rc = done(&r)) != 0)
		return rc;
	if (m->offset > m->size || m->len > m->size - m->offset)
		return SLUICE_EPROTO;
	return 0;
}

struct replmsg_epoch
replmsg_hist_at(const struct replmsg_snap_rep *m, uint32_t i)
{
	const uint8_t *p = m->hist_raw + (size_t)i * 24;

	return (struct replmsg_epoch) { le_load_u64(p), le_load_u64(p + 8),
		le_load_u64(p + 16) };
}
