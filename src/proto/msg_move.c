/* msg_move - the messages of a tube's move between clusters; layouts in
 * docs/protocol.md ("Moving a tube"):
 *
 *   move_out   u8 kind, str16 tube, then
 *              hold (1): u32 max (1..MSG_MOVE_MAX)
 *              drop (2): u32 n (1..MSG_MOVE_MAX), n x (u64 id, u64 lease)
 *              keys (3), live (4): u32 max (1..MSG_MOVE_MAX), u64 after
 *              keep (5): nothing more
 *   move_in    str16 tube, str16 source cluster, u32 n (1..MSG_MOVE_MAX),
 *              n tasks as a take's reply carries them; the header's flags
 *              name its kind: 0 copies, 0x01 placeholders (n tasks as
 *              live answers them), 0x02 keys pending, 0x04 keys here (both
 *              with n 0)
 *   move_end   str16 tube
 *   replies    move_out hold: u32 n, n tasks (a take's layout; state:
 *              the task's before its hold); keys: the same, one per key
 *              reserved (state done, run_at: its end); drop: u32 n dropped;
 *              move_in: u32 n, n x (u16 status, u64 id); move_end: u32 n
 *              source ids forgotten */
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

static int
get_pair(struct rd *r)
{
	rd_u64(r);
	rd_u64(r);
	NEED(r);
	return 0;
}

bool
msg_next_move_drop(struct msg_iter *it, uint64_t *id, uint64_t *lease)
{
	if (it->left == 0)
		return false;
	*id = rd_u64(&it->r);
	*lease = rd_u64(&it->r);
	it->left--;
	return !rd_failed(&it->r);
}

static int
get_res(struct rd *r, struct msg_move_res *out)
{
	out->status = rd_u16(r);
	out->id = rd_u64(r);
	NEED(r);
	return 0;
}

bool
msg_next_move_res(struct msg_iter *it, struct msg_move_res *out)
{
	NEXT(it, get_res(&it->r, out));
}

/* move_in's kind and its count of tasks: copies and placeholders 1..MAX,
 * pend and ready none. */
static int
in_count(uint8_t kind, uint32_t n)
{
	if (kind == MSG_MOVE_IN_PEND || kind == MSG_MOVE_IN_READY)
		return n == 0 ? 0 : SLUICE_EINVAL;
	if (kind != 0 && kind != MSG_MOVE_IN_PLACE)
		return SLUICE_EINVAL;
	return msg_check_count(n, MSG_MOVE_MAX);
}

static int
msg_move_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	struct msg_move_req *m = &q->move;
	struct msg_tasks ts;

	memset(m, 0, sizeof(*m));
	if (op == MSG_OP_MOVE_OUT) {
		m->kind = rd_u8(r);
		NEED(r);
		if (m->kind < MSG_MOVE_HOLD || m->kind > MSG_MOVE_KEEP)
			return SLUICE_EINVAL;
	}
	if (op == MSG_OP_MOVE_IN)
		m->kind = flags;
	TRY(msg_get_tube(r, false, &m->tube));
	switch (op) {
	case MSG_OP_MOVE_OUT:
		if (m->kind == MSG_MOVE_KEEP)
			return 0;
		if (m->kind != MSG_MOVE_DROP) {
			m->max = rd_u32(r);
			if (m->kind != MSG_MOVE_HOLD)
				m->after = rd_u64(r);
			NEED(r);
			return msg_check_count(m->max, MSG_MOVE_MAX);
		}
		m->n = rd_u32(r);
		NEED(r);
		TRY(msg_check_count(m->n, MSG_MOVE_MAX));
		GET_EACH(&m->it, r, m->n, pmax, get_pair(r));
		return 0;
	case MSG_OP_MOVE_IN:
		TRY(msg_get_node(r, false, &m->source));
		TRY(msg_get_tasks(r, pmax, &ts));
		m->n = ts.n;
		m->tasks_it = ts.it;
		return in_count(m->kind, m->n);
	default:
		return 0;
	}
}

static int
msg_move_put_req(struct buf *b, const struct msg_req *q)
{
	const struct msg_move_req *m = &q->move;
	struct msg_iter it = m->it;
	uint64_t id, lease;

	if (q->op == MSG_OP_MOVE_OUT) {
		if (m->kind < MSG_MOVE_HOLD || m->kind > MSG_MOVE_KEEP)
			return SLUICE_EINVAL;
		buf_put_u8(b, m->kind);
	}
	TRY(msg_put_tube(b, m->tube, false));
	switch (q->op) {
	case MSG_OP_MOVE_OUT:
		if (m->kind == MSG_MOVE_KEEP)
			return 0;
		if (m->kind != MSG_MOVE_DROP) {
			TRY(msg_check_count(m->max, MSG_MOVE_MAX));
			buf_put_u32(b, m->max);
			if (m->kind != MSG_MOVE_HOLD)
				buf_put_u64(b, m->after);
			return 0;
		}
		TRY(msg_check_count(m->n, MSG_MOVE_MAX));
		buf_put_u32(b, m->n);
		for (uint32_t i = 0; i < m->n; i++) {
			/* the pairs, or a decoded request's sent on */
			if (m->ids != NULL && m->leases != NULL) {
				id = m->ids[i];
				lease = m->leases[i];
			} else if (!msg_next_move_drop(&it, &id, &lease)) {
				return SLUICE_EINVAL;
			}
			buf_put_u64(b, id);
			buf_put_u64(b, lease);
		}
		return 0;
	case MSG_OP_MOVE_IN:
		TRY(msg_put_node(b, m->source, false));
		TRY(in_count(m->kind, m->n));
		return msg_put_tasks(b,
		    &(struct msg_tasks) {
		        .n = m->n, .tasks = m->tasks, .it = m->tasks_it });
	default:
		return 0;
	}
}

/* move_in's kind goes in the header's flags. */
static uint8_t
msg_move_req_flags(const struct msg_req *q)
{
	return q->op == MSG_OP_MOVE_IN ? q->move.kind : 0;
}

/* The reply's shape depends on the request: a hold's carries tasks
 * (flag 0x01), move_in's results (flag 0x02), the others a count. */
enum { MOVE_F_TASKS = MSG_MOVE_REP_TASKS, MOVE_F_RES = MSG_MOVE_REP_RES };

static int
msg_move_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_move_rep *s = &m->move;
	struct msg_move_res res;
	struct msg_tasks ts;

	(void)op;
	memset(s, 0, sizeof(*s));
	s->shape = flags & (MOVE_F_TASKS | MOVE_F_RES);
	if (flags & MOVE_F_TASKS) {
		TRY(msg_get_tasks(r, pmax, &ts));
		s->ntasks = ts.n;
		s->tasks_it = ts.it;
		return 0;
	}
	s->n = rd_u32(r);
	NEED(r);
	if (flags & MOVE_F_RES) {
		if (s->n > MSG_MOVE_MAX)
			return SLUICE_EPROTO;
		GET_EACH(&s->it, r, s->n, pmax, get_res(r, &res));
	}
	return 0;
}

static uint8_t
msg_move_rep_flags(const struct msg_rep *m)
{
	return m->move.res != NULL ? MOVE_F_RES
	    : m->move.ntasks > 0   ? MOVE_F_TASKS
	                           : m->move.shape;
}

static int
msg_move_put_rep(struct buf *b, const struct msg_rep *m)
{
	const struct msg_move_rep *s = &m->move;
	uint8_t flags = msg_move_rep_flags(m);
	struct msg_iter it = s->it;
	const struct msg_move_res *e;
	struct msg_move_res one;

	if (flags & MOVE_F_TASKS)
		return msg_put_tasks(b,
		    &(struct msg_tasks) {
		        .n = s->ntasks, .tasks = s->tasks, .it = s->tasks_it });
	buf_put_u32(b, s->n);
	if (!(flags & MOVE_F_RES))
		return 0;
	for (uint32_t i = 0; i < s->n; i++) {
		if ((e = LIST_AT(s->res, i, it, msg_next_move_res, one)) ==
		    NULL)
			return SLUICE_EINVAL;
		buf_put_u16(b, e->status);
		buf_put_u64(b, e->id);
	}
	return 0;
}

const struct msg_family msg_move_family = {
	.get_req = msg_move_get_req,
	.put_req = msg_move_put_req,
	.req_flags = msg_move_req_flags,
	.get_rep = msg_move_get_rep,
	.put_rep = msg_move_put_rep,
	.rep_flags = msg_move_rep_flags,
};
