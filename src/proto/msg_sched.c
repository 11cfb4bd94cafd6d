/* msg_sched - the schedule messages: sched_set (0x2f), sched_list (0x30)
 * and sched_ctl (0x31); layouts in docs/protocol.md.
 *
 *   sched_set   str16 name, str16 tube, str16 cron, str16 tz, u8
 *               catch_up, u32 priority, u64 ttr, u32 max_attempts,
 *               u32 payload length + payload; flag 0x01: paused
 *   sched_list  str16 name (empty: every schedule); flag 0x02: with
 *               their payloads
 *   sched_ctl   str16 name, u8 action (1 pause, 2 resume, 3 delete)
 *   reply       u32 n, then n schedules: str16 name, str16 tube, str16
 *               cron, str16 tz, u8 catch_up, u8 paused, u32 priority,
 *               u64 ttr, u32 max_attempts, u64 created_at, u64
 *               updated_at, u64 next_at, u64 last_slot, u64 last_id, u64
 *               fired, u64 skipped, u32 size, u32 payload length +
 *               payload (empty unless asked: sched_list with flag 0x02,
 *               sched_set and sched_ctl always)
 * The name, cron and zone strings are at most MSG_SCHED_STR_MAX bytes
 * here; the server says what it refuses within that. */
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

static int
get_sched_str(struct rd *r, bool empty_ok, struct msg_str *out)
{
	TRY(msg_get_str(r, MSG_SCHED_STR_MAX, SLUICE_ELIMIT, out));
	return out->len == 0 && !empty_ok ? SLUICE_EINVAL : 0;
}

static int
put_sched_str(struct buf *b, struct msg_str s, bool empty_ok)
{
	if (s.len > MSG_SCHED_STR_MAX)
		return SLUICE_ELIMIT;
	if (s.len == 0 && !empty_ok)
		return SLUICE_EINVAL;
	msg_put_str(b, s);
	return 0;
}

static int
get_sched(struct rd *r, size_t pmax, struct msg_sched *s)
{
	uint8_t paused;

	memset(s, 0, sizeof(*s));
	TRY(get_sched_str(r, false, &s->name));
	TRY(msg_get_tube(r, false, &s->tube));
	TRY(get_sched_str(r, false, &s->cron));
	TRY(get_sched_str(r, true, &s->tz));
	s->catch_up = rd_u8(r);
	paused = rd_u8(r);
	s->priority = rd_u32(r);
	s->ttr = rd_u64(r);
	s->max_attempts = rd_u32(r);
	s->created_at = rd_u64(r);
	s->updated_at = rd_u64(r);
	s->next_at = rd_u64(r);
	s->last_slot = rd_u64(r);
	s->last_id = rd_u64(r);
	s->fired = rd_u64(r);
	s->skipped = rd_u64(r);
	s->size = rd_u32(r);
	NEED(r);
	if (s->catch_up > MSG_CATCH_ALL || paused > 1)
		return SLUICE_EPROTO;
	s->paused = paused;
	TRY(msg_get_payload(r, pmax, &s->payload));
	return s->payload.len != 0 && s->payload.len != s->size ? SLUICE_EPROTO
	                                                        : 0;
}

static int
put_sched(struct buf *b, const struct msg_sched *s)
{
	if (s->catch_up > MSG_CATCH_ALL ||
	    (s->payload.len != 0 && s->payload.len != s->size))
		return SLUICE_EINVAL;
	TRY(put_sched_str(b, s->name, false));
	TRY(msg_put_tube(b, s->tube, false));
	TRY(put_sched_str(b, s->cron, false));
	TRY(put_sched_str(b, s->tz, true));
	buf_put_u8(b, s->catch_up);
	buf_put_u8(b, s->paused ? 1 : 0);
	buf_put_u32(b, s->priority);
	buf_put_u64(b, s->ttr);
	buf_put_u32(b, s->max_attempts);
	buf_put_u64(b, s->created_at);
	buf_put_u64(b, s->updated_at);
	buf_put_u64(b, s->next_at);
	buf_put_u64(b, s->last_slot);
	buf_put_u64(b, s->last_id);
	buf_put_u64(b, s->fired);
	buf_put_u64(b, s->skipped);
	buf_put_u32(b, s->size);
	return msg_put_payload(b, s->payload);
}

bool
msg_next_sched(struct msg_iter *it, struct msg_sched *out)
{
	NEXT(it, get_sched(&it->r, it->payload_max, out));
}

static int
msg_sched_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	struct msg_sched_set *s = &q->sched_set;

	switch (op) {
	case MSG_OP_SCHED_SET:
		TRY(get_sched_str(r, false, &s->name));
		TRY(msg_get_tube(r, false, &s->tube));
		TRY(get_sched_str(r, false, &s->cron));
		TRY(get_sched_str(r, true, &s->tz));
		s->catch_up = rd_u8(r);
		s->priority = rd_u32(r);
		s->ttr = rd_u64(r);
		s->max_attempts = rd_u32(r);
		NEED(r);
		if (s->catch_up > MSG_CATCH_ALL)
			return SLUICE_EINVAL;
		s->paused = flags & SCHED_F_PAUSED;
		return msg_get_payload(r, pmax, &s->payload);
	case MSG_OP_SCHED_LIST:
		q->sched.payloads = flags & SCHED_F_PAYLOADS;
		return get_sched_str(r, true, &q->sched.name);
	case MSG_OP_SCHED_CTL:
		TRY(get_sched_str(r, false, &q->sched.name));
		q->sched.action = rd_u8(r);
		NEED(r);
		return q->sched.action >= MSG_SCHED_PAUSE &&
		        q->sched.action <= MSG_SCHED_DELETE
		    ? 0
		    : SLUICE_EINVAL;
	}
	return SLUICE_EUNKNOWNOP;
}

static uint8_t
msg_sched_req_flags(const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_SCHED_SET:
		return q->sched_set.paused ? SCHED_F_PAUSED : 0;
	case MSG_OP_SCHED_LIST:
		return q->sched.payloads ? SCHED_F_PAYLOADS : 0;
	}
	return 0;
}

static int
msg_sched_put_req(struct buf *b, const struct msg_req *q)
{
	const struct msg_sched_set *s = &q->sched_set;

	switch (q->op) {
	case MSG_OP_SCHED_SET:
		if (s->catch_up > MSG_CATCH_ALL)
			return SLUICE_EINVAL;
		TRY(put_sched_str(b, s->name, false));
		TRY(msg_put_tube(b, s->tube, false));
		TRY(put_sched_str(b, s->cron, false));
		TRY(put_sched_str(b, s->tz, true));
		buf_put_u8(b, s->catch_up);
		buf_put_u32(b, s->priority);
		buf_put_u64(b, s->ttr);
		buf_put_u32(b, s->max_attempts);
		return msg_put_payload(b, s->payload);
	case MSG_OP_SCHED_LIST:
		return put_sched_str(b, q->sched.name, true);
	case MSG_OP_SCHED_CTL:
		if (q->sched.action < MSG_SCHED_PAUSE ||
		    q->sched.action > MSG_SCHED_DELETE)
			return SLUICE_EINVAL;
		TRY(put_sched_str(b, q->sched.name, false));
		buf_put_u8(b, q->sched.action);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

static int
msg_sched_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_sched s;

	(void)op;
	(void)flags;
	m->scheds.n = rd_u32(r);
	NEED(r);
	if (m->scheds.n > MSG_SCHEDS_MAX)
		return SLUICE_ELIMIT;
	GET_EACH(&m->scheds.it, r, m->scheds.n, pmax, get_sched(r, pmax, &s));
	return 0;
}

static uint8_t
msg_sched_rep_flags(const struct msg_rep *m)
{
	(void)m;
	return 0;
}

static int
msg_sched_put_rep(struct buf *b, const struct msg_rep *m)
{
	struct msg_iter it = m->scheds.it;
	const struct msg_sched *e;
	struct msg_sched one;

	if (m->scheds.n > MSG_SCHEDS_MAX)
		return SLUICE_ELIMIT;
	buf_put_u32(b, m->scheds.n);
	for (uint32_t i = 0; i < m->scheds.n; i++) {
		if ((e = LIST_AT(m->scheds.v, i, it, msg_next_sched, one)) ==
		    NULL)
			return SLUICE_EINVAL;
		TRY(put_sched(b, e));
	}
	return 0;
}

const struct msg_family msg_sched_family = {
	.get_req = msg_sched_get_req,
	.put_req = msg_sched_put_req,
	.req_flags = msg_sched_req_flags,
	.get_rep = msg_sched_get_rep,
	.put_rep = msg_sched_put_rep,
	.rep_flags = msg_sched_rep_flags,
};
