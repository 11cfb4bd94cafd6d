/* msg_batch - the batch messages: batch_show (0x2b) and batch_set
 * (0x2c); layouts in docs/protocol.md.
 *
 *   batch_show  str16 name; flag 0x01 (list): u32 limit (1..1000)
 *               instead
 *   batch_set   str16 name, u8 what (0x01 on_success given, 0x02
 *               on_complete given, 0x04 close, 0x08 cancel), str16
 *               success tube, u32 length + success payload, str16
 *               complete tube, u32 length + complete payload (a callback not
 * given: empty tube and payload; given with an empty tube: removed) reply str16
 * name, u64 total, waiting, ready, delayed, taken, buried, acked, failed, u64
 * started_at, u64 ended_at, u8 state (0x01 closed, 0x02 ended), u8 owed, u8
 * fired, str16 success tube, u64 success id, str16 complete tube, u64 complete
 * id; flag 0x01 (the answer of a list): u64 total (the batches the server
 * holds), u32 n, then n batches, each as above Names are 1..MSG_BATCH_NAME_MAX
 * bytes here; the server checks their alphabet. */
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

static int
get_name(struct rd *r, struct msg_str *out)
{
	TRY(msg_get_str(r, MSG_BATCH_NAME_MAX, SLUICE_ELIMIT, out));
	return out->len == 0 ? SLUICE_EINVAL : 0;
}

static int
put_name(struct buf *b, struct msg_str s)
{
	if (s.len > MSG_BATCH_NAME_MAX)
		return SLUICE_ELIMIT;
	if (s.len == 0)
		return SLUICE_EINVAL;
	msg_put_str(b, s);
	return 0;
}

static int
msg_batch_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	struct msg_batch_req *s = &q->batch;

	if (op == MSG_OP_BATCH_SHOW && (flags & BATCH_F_LIST)) {
		s->list = true;
		s->limit = rd_u32(r);
		NEED(r);
		return s->limit >= 1 && s->limit <= MSG_BATCHES_MAX
		    ? 0
		    : SLUICE_EINVAL;
	}
	TRY(get_name(r, &s->name));
	if (op == MSG_OP_BATCH_SHOW)
		return 0;
	s->what = rd_u8(r);
	NEED(r);
	if (s->what == 0 || (s->what & ~MSG_BATCH_ALL) != 0)
		return SLUICE_EINVAL;
	TRY(msg_get_tube(r, true, &s->success_tube));
	TRY(msg_get_payload(r, pmax, &s->success_payload));
	TRY(msg_get_tube(r, true, &s->complete_tube));
	return msg_get_payload(r, pmax, &s->complete_payload);
}

static uint8_t
msg_batch_req_flags(const struct msg_req *q)
{
	return q->op == MSG_OP_BATCH_SHOW && q->batch.list ? BATCH_F_LIST : 0;
}

static int
msg_batch_put_req(struct buf *b, const struct msg_req *q)
{
	const struct msg_batch_req *s = &q->batch;

	if (q->op == MSG_OP_BATCH_SHOW && s->list) {
		if (s->limit < 1 || s->limit > MSG_BATCHES_MAX)
			return SLUICE_EINVAL;
		buf_put_u32(b, s->limit);
		return 0;
	}
	TRY(put_name(b, s->name));
	if (q->op == MSG_OP_BATCH_SHOW)
		return 0;
	if (s->what == 0 || (s->what & ~MSG_BATCH_ALL) != 0)
		return SLUICE_EINVAL;
	buf_put_u8(b, s->what);
	TRY(msg_put_tube(b, s->success_tube, true));
	TRY(msg_put_payload(b, s->success_payload));
	TRY(msg_put_tube(b, s->complete_tube, true));
	return msg_put_payload(b, s->complete_payload);
}

static int
get_one(struct rd *r, struct msg_batch *s)
{
	uint8_t state;

	memset(s, 0, sizeof(*s));
	TRY(get_name(r, &s->name));
	s->total = rd_u64(r);
	s->waiting = rd_u64(r);
	s->ready = rd_u64(r);
	s->delayed = rd_u64(r);
	s->taken = rd_u64(r);
	s->buried = rd_u64(r);
	s->acked = rd_u64(r);
	s->failed = rd_u64(r);
	s->started_at = rd_u64(r);
	s->ended_at = rd_u64(r);
	state = rd_u8(r);
	s->owed = rd_u8(r);
	s->fired = rd_u8(r);
	NEED(r);
	if (state > 3 || s->owed > 3 || s->fired > 3)
		return SLUICE_EPROTO;
	s->closed = state & 1;
	s->ended = state & 2;
	TRY(msg_get_tube(r, true, &s->success_tube));
	s->success_id = rd_u64(r);
	TRY(msg_get_tube(r, true, &s->complete_tube));
	s->complete_id = rd_u64(r);
	NEED(r);
	return 0;
}

static int
put_one(struct buf *b, const struct msg_batch *s)
{
	TRY(put_name(b, s->name));
	buf_put_u64(b, s->total);
	buf_put_u64(b, s->waiting);
	buf_put_u64(b, s->ready);
	buf_put_u64(b, s->delayed);
	buf_put_u64(b, s->taken);
	buf_put_u64(b, s->buried);
	buf_put_u64(b, s->acked);
	buf_put_u64(b, s->failed);
	buf_put_u64(b, s->started_at);
	buf_put_u64(b, s->ended_at);
	buf_put_u8(b, (uint8_t)((s->closed ? 1 : 0) | (s->ended ? 2 : 0)));
	buf_put_u8(b, s->owed);
	buf_put_u8(b, s->fired);
	TRY(msg_put_tube(b, s->success_tube, true));
	buf_put_u64(b, s->success_id);
	TRY(msg_put_tube(b, s->complete_tube, true));
	buf_put_u64(b, s->complete_id);
	return 0;
}

bool
msg_next_batch(struct msg_iter *it, struct msg_batch *out)
{
	NEXT(it, get_one(&it->r, out));
}

static int
msg_batch_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_batch_rep *s = &m->batch_info;
	struct msg_batch one;

	(void)op;
	memset(s, 0, sizeof(*s));
	if ((flags & BATCH_F_LIST) == 0)
		return get_one(r, &s->one);
	s->list = true;
	s->total = rd_u64(r);
	s->n = rd_u32(r);
	NEED(r);
	if (s->n > MSG_BATCHES_MAX || s->n > s->total)
		return SLUICE_EPROTO;
	GET_EACH(&s->it, r, s->n, pmax, get_one(r, &one));
	return 0;
}

static uint8_t
msg_batch_rep_flags(const struct msg_rep *m)
{
	return m->batch_info.list ? BATCH_F_LIST : 0;
}

static int
msg_batch_put_rep(struct buf *b, const struct msg_rep *m)
{
	const struct msg_batch_rep *s = &m->batch_info;
	struct msg_iter it = s->it;
	const struct msg_batch *e;
	struct msg_batch one;

	if (!s->list)
		return put_one(b, &s->one);
	if (s->n > MSG_BATCHES_MAX || s->n > s->total)
		return SLUICE_EINVAL;
	buf_put_u64(b, s->total);
	buf_put_u32(b, s->n);
	for (uint32_t i = 0; i < s->n; i++) {
		if ((e = LIST_AT(s->v, i, it, msg_next_batch, one)) == NULL)
			return SLUICE_EINVAL;
		TRY(put_one(b, e));
	}
	return 0;
}

const struct msg_family msg_batch_family = {
	.get_req = msg_batch_get_req,
	.put_req = msg_batch_put_req,
	.req_flags = msg_batch_req_flags,
	.get_rep = msg_batch_get_rep,
	.put_rep = msg_batch_put_rep,
	.rep_flags = msg_batch_rep_flags,
};
