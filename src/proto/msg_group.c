/* msg_group - the wire codec of op group (0x2a; msg_group.h): a tube's
 * group limits and one group's settings and state. Request: str16 tube,
 * str16 group (empty: every named group), u8 verb, u8 lunset, limits.
 * Reply: str16 tube, str16 group, every group's limits, u32 overrides,
 * u32 paused, u32 held, u8 gflags, the group's own limits, the limits in
 * force, u32 ready, u32 taken, u64 tokens, u8 holding. Limits are
 * msg_tube.c's (u8 set, u32 rate, u32 per_ms, u32 burst,
 * u32 concurrency); their ranges are the server's to check. */
#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

/* A group name: empty (every group) or 1..MSG_TUBE_MAX bytes of the tube
 * alphabet, else EGROUP. */
static int
check_group(struct msg_str g)
{
	if (g.len == 0)
		return 0;
	return msg_check_tube(g, false) == 0 ? 0 : SLUICE_EGROUP;
}

static int
req_valid(const struct msg_group_req *g)
{
	if (g->verb >= MSG_GROUP_VERB_END_ || (g->lunset & ~MSG_LIM_ALL) != 0 ||
	    (g->lunset & g->flow.set) != 0)
		return SLUICE_EINVAL;
	/* only a set changes limits; every group is never paused */
	if (g->verb != MSG_GROUP_SET && (g->lunset != 0 || g->flow.set != 0))
		return SLUICE_EINVAL;
	if (g->group.len == 0 &&
	    (g->verb == MSG_GROUP_PAUSE || g->verb == MSG_GROUP_RESUME))
		return SLUICE_EINVAL;
	return 0;
}

static int
get_req(struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	struct msg_group_req *g = &q->group;

	(void)flags;
	(void)pmax;
	if (op != MSG_OP_GROUP)
		return SLUICE_EUNKNOWNOP;
	TRY(msg_get_tube(r, false, &g->tube));
	TRY(msg_get_str(r, MSG_TUBE_MAX, SLUICE_EGROUP, &g->group));
	TRY(check_group(g->group));
	g->verb = rd_u8(r);
	g->lunset = rd_u8(r);
	NEED(r);
	TRY(msg_get_flow(r, &g->flow));
	return req_valid(g);
}

static int
put_req(struct buf *b, const struct msg_req *q)
{
	const struct msg_group_req *g = &q->group;

	if (q->op != MSG_OP_GROUP)
		return SLUICE_EUNKNOWNOP;
	TRY(check_group(g->group));
	TRY(req_valid(g));
	TRY(msg_put_tube(b, g->tube, false));
	msg_put_str(b, g->group);
	buf_put_u8(b, g->verb);
	buf_put_u8(b, g->lunset);
	return msg_put_flow(b, &g->flow);
}

static uint8_t
no_flags_req(const struct msg_req *q)
{
	(void)q;
	return 0;
}

static int
get_rep(struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_group_rep *g = &m->group;

	(void)flags;
	(void)pmax;
	if (op != MSG_OP_GROUP)
		return SLUICE_EUNKNOWNOP;
	TRY(msg_get_tube(r, false, &g->tube));
	TRY(msg_get_str(r, MSG_TUBE_MAX, SLUICE_EGROUP, &g->group));
	TRY(check_group(g->group));
	TRY(msg_get_flow(r, &g->every));
	g->overrides = rd_u32(r);
	g->paused = rd_u32(r);
	g->held = rd_u32(r);
	g->gflags = rd_u8(r);
	NEED(r);
	TRY(msg_get_flow(r, &g->own));
	TRY(msg_get_flow(r, &g->lim));
	g->ready = rd_u32(r);
	g->taken = rd_u32(r);
	g->tokens = rd_u64(r);
	g->holding = rd_u8(r);
	NEED(r);
	if ((g->gflags & ~MSG_GROUP_ALL) != 0 ||
	    g->holding > MSG_GROUP_HELD_PAUSED)
		return SLUICE_EPROTO;
	return 0;
}

static int
put_rep(struct buf *b, const struct msg_rep *m)
{
	const struct msg_group_rep *g = &m->group;

	if (m->op != MSG_OP_GROUP)
		return SLUICE_EUNKNOWNOP;
	if ((g->gflags & ~MSG_GROUP_ALL) != 0 ||
	    g->holding > MSG_GROUP_HELD_PAUSED)
		return SLUICE_EINVAL;
	TRY(check_group(g->group));
	TRY(msg_put_tube(b, g->tube, false));
	msg_put_str(b, g->group);
	TRY(msg_put_flow(b, &g->every));
	buf_put_u32(b, g->overrides);
	buf_put_u32(b, g->paused);
	buf_put_u32(b, g->held);
	buf_put_u8(b, g->gflags);
	TRY(msg_put_flow(b, &g->own));
	TRY(msg_put_flow(b, &g->lim));
	buf_put_u32(b, g->ready);
	buf_put_u32(b, g->taken);
	buf_put_u64(b, g->tokens);
	buf_put_u8(b, g->holding);
	return 0;
}

static uint8_t
no_flags_rep(const struct msg_rep *m)
{
	(void)m;
	return 0;
}

const struct msg_family msg_group_family = {
	.get_req = get_req,
	.put_req = put_req,
	.req_flags = no_flags_req,
	.get_rep = get_rep,
	.put_rep = put_rep,
	.rep_flags = no_flags_rep,
};
