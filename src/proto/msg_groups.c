/* msg_groups - the codec of the groups op (0x29; msg_groups.h, layout in
 * docs/protocol.md). Request: str16 tube (empty: every tube), u32 limit
 * (1..MSG_GROUPS_MAX). Reply: u64 total, u32 n, then n rows of str16
 * tube, str16 group (empty: none), u64 ready, u64 taken, u64
 * oldest_ready_ms. A row's group is checked as a put's (EGROUP). */
#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

static int
limit_check(uint32_t limit)
{
	return msg_check_count(limit, MSG_GROUPS_MAX);
}

static int
get_req(struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	(void)op;
	(void)flags;
	(void)pmax;
	TRY(msg_get_tube(r, true, &q->groups.tube));
	q->groups.limit = rd_u32(r);
	NEED(r);
	return limit_check(q->groups.limit);
}

static int
put_req(struct buf *b, const struct msg_req *q)
{
	TRY(limit_check(q->groups.limit));
	TRY(msg_put_tube(b, q->groups.tube, true));
	buf_put_u32(b, q->groups.limit);
	return 0;
}

static int
check_group(struct msg_str g)
{
	return g.len == 0 || msg_tube_valid(g.p, g.len) ? 0 : SLUICE_EGROUP;
}

static int
get_row(struct rd *r, struct msg_group_row *out)
{
	TRY(msg_get_tube(r, false, &out->tube));
	TRY(msg_get_str(r, MSG_TUBE_MAX, SLUICE_EGROUP, &out->group));
	TRY(check_group(out->group));
	out->ready = rd_u64(r);
	out->taken = rd_u64(r);
	out->oldest_ready_age = rd_u64(r);
	NEED(r);
	return 0;
}

static int
get_rep(struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_group_row row;

	(void)op;
	(void)flags;
	(void)pmax;
	m->groups.total = rd_u64(r);
	m->groups.n = rd_u32(r);
	NEED(r);
	if (m->groups.n > MSG_GROUPS_MAX)
		return SLUICE_ELIMIT;
	if (m->groups.total < m->groups.n)
		return SLUICE_EPROTO;
	GET_EACH(&m->groups.it, r, m->groups.n, 0, get_row(r, &row));
	return 0;
}

static int
put_rep(struct buf *b, const struct msg_rep *m)
{
	struct msg_iter it = m->groups.it;
	struct msg_group_row one;

	if (m->groups.n > MSG_GROUPS_MAX)
		return SLUICE_ELIMIT;
	if (m->groups.total < m->groups.n)
		return SLUICE_EINVAL;
	buf_put_u64(b, m->groups.total);
	buf_put_u32(b, m->groups.n);
	for (uint32_t i = 0; i < m->groups.n; i++) {
		const struct msg_group_row *g =
		    LIST_AT(m->groups.rows, i, it, msg_next_group_row, one);

		if (g == NULL)
			return SLUICE_EINVAL;

		TRY(msg_put_tube(b, g->tube, false));
		TRY(check_group(g->group));
		msg_put_str(b, g->group);
		buf_put_u64(b, g->ready);
		buf_put_u64(b, g->taken);
		buf_put_u64(b, g->oldest_ready_age);
	}
	return 0;
}

bool
msg_next_group_row(struct msg_iter *it, struct msg_group_row *out)
{
	NEXT(it, get_row(&it->r, out));
}

const struct msg_family msg_groups_family = {
	.get_req = get_req,
	.put_req = put_req,
	.get_rep = get_rep,
	.put_rep = put_rep,
};
