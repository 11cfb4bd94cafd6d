/* msg_result - the wire codec of wait: its request (u64 id, u64 wait in
 * ms) and its reply, how the task stands:
 *   u64 id, u8 state, u8 final, u64 time, str16 tube, str16 text
 * (reply flag 0x01: the task is taken and cancelled). `state` is a task
 * state (MSG_ST_*) or, for a task that is gone, how it ended
 * (MSG_END_*); final says it ended (done, buried, deleted, cancelled,
 * dead-lettered) and `time` when. msg.c frames the messages and sends
 * them here through msg_result_family; cancel's messages are
 * delete_batch's (msg_lease.c). */
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

const char *
msg_result_state_name(uint8_t state)
{
	switch (state) {
	case MSG_END_DELETED:
		return "deleted";
	case MSG_END_CANCELLED:
		return "cancelled";
	case MSG_END_DEAD:
		return "dead_lettered";
	case MSG_ST_NONE:
		return NULL;
	default:
		return msg_state_name(state);
	}
}

static int
msg_result_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	(void)flags;
	(void)pmax;
	if (op != MSG_OP_WAIT)
		return SLUICE_EUNKNOWNOP;
	q->wait.id = rd_u64(r);
	q->wait.wait = rd_u64(r);
	NEED(r);
	if (q->wait.id == 0 || q->wait.wait > MSG_WAIT_MAX)
		return SLUICE_EINVAL;
	return 0;
}

static int
msg_result_put_req(struct buf *b, const struct msg_req *q)
{
	if (q->op != MSG_OP_WAIT)
		return SLUICE_EUNKNOWNOP;
	if (q->wait.id == 0 || q->wait.wait > MSG_WAIT_MAX)
		return SLUICE_EINVAL;
	buf_put_u64(b, q->wait.id);
	buf_put_u64(b, q->wait.wait);
	return 0;
}

/* A state wait's reply may carry; `final` with it. */
static bool
result_ok(uint8_t state, bool final)
{
	if (state >= MSG_END_DELETED && state <= MSG_END_DEAD)
		return final;
	if (state == MSG_ST_DONE)
		return final;
	/* buried is final; the other task states (those a later version
	 * adds too) are not */
	return state != MSG_ST_NONE && (state == MSG_ST_BURIED || !final);
}

static int
msg_result_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_result *x = &m->result;
	uint8_t final;

	(void)pmax;
	if (op != MSG_OP_WAIT)
		return SLUICE_EUNKNOWNOP;
	memset(x, 0, sizeof(*x));
	x->id = rd_u64(r);
	x->state = rd_u8(r);
	final = rd_u8(r);
	x->time = rd_u64(r);
	NEED(r);
	x->final = final == 1;
	x->cancelled = flags & RESULT_F_CANCELLED;
	if (final > 1 || !result_ok(x->state, x->final))
		return SLUICE_EPROTO;
	TRY(msg_get_tube(r, true, &x->tube));
	return msg_get_text(r, MSG_RESULT_MAX, &x->text);
}

static uint8_t
msg_result_rep_flags(const struct msg_rep *m)
{
	return m->op == MSG_OP_WAIT && m->result.cancelled ? RESULT_F_CANCELLED
	                                                   : 0;
}

static int
msg_result_put_rep(struct buf *b, const struct msg_rep *m)
{
	const struct msg_result *x = &m->result;

	if (m->op != MSG_OP_WAIT)
		return SLUICE_EUNKNOWNOP;
	if (!result_ok(x->state, x->final))
		return SLUICE_EINVAL;
	buf_put_u64(b, x->id);
	buf_put_u8(b, x->state);
	buf_put_u8(b, x->final ? 1 : 0);
	buf_put_u64(b, x->time);
	TRY(msg_put_tube(b, x->tube, true));
	return msg_put_text(b, x->text, MSG_RESULT_MAX);
}

const struct msg_family msg_result_family = {
	.get_req = msg_result_get_req,
	.put_req = msg_result_put_req,
	.req_flags = NULL,
	.get_rep = msg_result_get_rep,
	.put_rep = msg_result_put_rep,
	.rep_flags = msg_result_rep_flags,
};
