/* msg_tube - the wire codec of the messages that act on a whole tube:
 * kick, flush, release_all, delete_where, pause, and the tube's settings
 * (tube_set, tube_show, tube_delete); the settings record, which stats
 * also carries; and the one-u64 reply (a count) that these ops share with
 * delete_key, snapshot and promote. Decoders stand beside encoders; msg.c
 * frames them and sends each op here through msg_tube_family. */
#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

/* The states a delete_where can name: in its first form one state, every
 * state but taken (a task someone holds is deleted by id); aged, any set
 * of states (taken needs force, which the server checks, naming it), and
 * the time the age counts from. */
static bool
where_valid(const struct msg_delete_where *w)
{
	uint8_t st = w->state;

	if (w->aged)
		return st == 0 && w->states != 0 &&
		    (w->states & ~MSG_STATES_ALL) == 0 &&
		    (w->by == MSG_AGE_UPDATED || w->by == MSG_AGE_CREATED);
	return st == MSG_ST_READY || st == MSG_ST_DELAYED ||
	    st == MSG_ST_BURIED || st == MSG_ST_DONE;
}

/* A tube's settings: u8 set, u64 ttr, u32 max_attempts, u64 backoff
 * base, u64 backoff cap, u64 keep_done, u8 lost_lease (1 immediate),
 * str16 dead_letter (present exactly when set says so). */
int
msg_get_tube_conf(struct rd *r, struct msg_tube_conf *out)
{
	uint8_t lost;

	out->set = rd_u8(r);
	out->ttr = rd_u64(r);
	out->max_attempts = rd_u32(r);
	out->backoff_base = rd_u64(r);
	out->backoff_cap = rd_u64(r);
	out->keep_done = rd_u64(r);
	lost = rd_u8(r);
	NEED(r);
	if ((out->set & ~MSG_TS_ALL) != 0 || lost > 1)
		return SLUICE_EPROTO;
	out->lost_lease_immediate = lost == 1;
	TRY(msg_get_tube(r, true, &out->dead_letter));
	if ((out->dead_letter.len > 0) !=
	    ((out->set & MSG_TS_DEAD_LETTER) != 0))
		return SLUICE_EINVAL;
	return 0;
}

int
msg_put_tube_conf(struct buf *b, const struct msg_tube_conf *c)
{
	if ((c->set & ~MSG_TS_ALL) != 0 ||
	    (c->dead_letter.len > 0) != ((c->set & MSG_TS_DEAD_LETTER) != 0))
		return SLUICE_EINVAL;
	buf_put_u8(b, c->set);
	buf_put_u64(b, c->ttr);
	buf_put_u32(b, c->max_attempts);
	buf_put_u64(b, c->backoff_base);
	buf_put_u64(b, c->backoff_cap);
	buf_put_u64(b, c->keep_done);
	buf_put_u8(b, c->lost_lease_immediate ? 1 : 0);
	return msg_put_tube(b, c->dead_letter, true);
}

/* A tube's flow limits: u8 set (MSG_LIM_*), u32 rate, u32 per_ms,
 * u32 burst, u32 concurrency. Their ranges are the server's to check (it
 * says which rule a value breaks); an unknown bit is EPROTO. */
int
msg_get_flow(struct rd *r, struct msg_flow *out)
{
	out->set = rd_u8(r);
	out->rate = rd_u32(r);
	out->per_ms = rd_u32(r);
	out->burst = rd_u32(r);
	out->concurrency = rd_u32(r);
	NEED(r);
	return (out->set & ~MSG_LIM_ALL) != 0 ? SLUICE_EPROTO : 0;
}

int
msg_put_flow(struct buf *b, const struct msg_flow *f)
{
	if ((f->set & ~MSG_LIM_ALL) != 0)
		return SLUICE_EINVAL;
	buf_put_u8(b, f->set);
	buf_put_u32(b, f->rate);
	buf_put_u32(b, f->per_ms);
	buf_put_u32(b, f->burst);
	buf_put_u32(b, f->concurrency);
	return 0;
}

/* One u64 in the same place: a count (kick, flush, delete_where,
 * release_all, tube_delete), a deleted key's id, a pause's end, a
 * snapshot's LSN, a promotion's epoch. */
int
msg_get_count(struct rd *r, struct msg_rep *m)
{
	m->count = rd_u64(r);
	NEED(r);
	return 0;
}

int
msg_put_count(struct buf *b, const struct msg_rep *m)
{
	buf_put_u64(b, m->count);
	return 0;
}

/* ---- requests ---------------------------------------------------------- */

/* Decodes the body of a request of this family (the head is checked). */
static int
msg_tube_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	(void)pmax;

	switch (op) {
	case MSG_OP_KICK:
		TRY(msg_get_tube(r, false, &q->kick.tube));
		q->kick.n = rd_u32(r);
		q->kick.delayed = flags & KICK_F_DELAYED;
		q->kick.dry = flags & KICK_F_DRY;
		NEED(r);
		if (q->kick.n == 0)
			return SLUICE_EINVAL;
		if (!(flags & KICK_F_ERROR))
			return 0;
		TRY(msg_get_text(r, MSG_TEXT_MAX, &q->kick.error));
		/* the flag says a text follows: an empty one is not sent */
		return q->kick.error.len > 0 && !q->kick.delayed
		    ? 0
		    : SLUICE_EINVAL;
	case MSG_OP_FLUSH:
	case MSG_OP_RELEASE_ALL:
		return msg_get_tube(r, false, &q->tube);
	case MSG_OP_TUBE_SHOW:
		q->tube_set.limits = flags & TUBE_F_LIMITS;
		return msg_get_tube(r, false, &q->tube_set.tube);
	case MSG_OP_TUBE_SET:
		TRY(msg_get_tube(r, false, &q->tube_set.tube));
		q->tube_set.unset = rd_u8(r);
		NEED(r);
		if ((q->tube_set.unset & ~MSG_TS_ALL) != 0)
			return SLUICE_EPROTO;
		TRY(msg_get_tube_conf(r, &q->tube_set.conf));
		if ((q->tube_set.unset & q->tube_set.conf.set) != 0)
			return SLUICE_EINVAL;
		if (!(flags & TUBE_F_LIMITS))
			return 0;
		q->tube_set.limits = true;
		q->tube_set.lunset = rd_u8(r);
		NEED(r);
		if ((q->tube_set.lunset & ~MSG_LIM_ALL) != 0)
			return SLUICE_EPROTO;
		TRY(msg_get_flow(r, &q->tube_set.flow));
		return (q->tube_set.lunset & q->tube_set.flow.set) != 0
		    ? SLUICE_EINVAL
		    : 0;
	case MSG_OP_TUBE_DELETE:
		q->tube_delete.force = flags & TUBE_DELETE_F_FORCE;
		return msg_get_tube(r, false, &q->tube_delete.tube);
	case MSG_OP_DELETE_WHERE:
		TRY(msg_get_tube(r, false, &q->where.tube));
		q->where.state = rd_u8(r);
		q->where.older = rd_u64(r);
		q->where.dry = flags & WHERE_F_DRY;
		q->where.aged = flags & WHERE_F_AGED;
		q->where.force = flags & WHERE_F_FORCE;
		if (q->where.aged) {
			q->where.states = rd_u8(r);
			q->where.by = rd_u8(r);
		}
		NEED(r);
		return where_valid(&q->where) ? 0 : SLUICE_EINVAL;
	case MSG_OP_PAUSE:
		TRY(msg_get_tube(r, false, &q->pause.tube));
		q->pause.duration = rd_u64(r);
		q->pause.create = flags & PAUSE_F_CREATE;
		NEED(r);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* The header's flags byte for a request of this family. */
static uint8_t
msg_tube_req_flags(const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_KICK:
		return (q->kick.delayed ? KICK_F_DELAYED : 0) |
		    (q->kick.error.len > 0 ? KICK_F_ERROR : 0) |
		    (q->kick.dry ? KICK_F_DRY : 0);
	case MSG_OP_PAUSE:
		return q->pause.create ? PAUSE_F_CREATE : 0;
	case MSG_OP_TUBE_DELETE:
		return q->tube_delete.force ? TUBE_DELETE_F_FORCE : 0;
	case MSG_OP_DELETE_WHERE:
		return (q->where.aged ? WHERE_F_AGED : 0) |
		    (q->where.force ? WHERE_F_FORCE : 0) |
		    (q->where.dry ? WHERE_F_DRY : 0);
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_SHOW:
		return q->tube_set.limits ? TUBE_F_LIMITS : 0;
	}
	return 0;
}

/* Encodes the body of a request of this family, checked as its decoder
 * checks it. */
static int
msg_tube_put_req(struct buf *b, const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_KICK:
		if (q->kick.n == 0 ||
		    (q->kick.error.len > 0 && q->kick.delayed))
			return SLUICE_EINVAL;
		TRY(msg_put_tube(b, q->kick.tube, false));
		buf_put_u32(b, q->kick.n);
		if (q->kick.error.len > 0)
			return msg_put_text(b, q->kick.error, MSG_TEXT_MAX);
		return 0;
	case MSG_OP_FLUSH:
	case MSG_OP_RELEASE_ALL:
		return msg_put_tube(b, q->tube, false);
	case MSG_OP_TUBE_SHOW:
		return msg_put_tube(b, q->tube_set.tube, false);
	case MSG_OP_TUBE_DELETE:
		return msg_put_tube(b, q->tube_delete.tube, false);
	case MSG_OP_TUBE_SET:
		if ((q->tube_set.unset & ~MSG_TS_ALL) != 0 ||
		    (q->tube_set.unset & q->tube_set.conf.set) != 0)
			return SLUICE_EINVAL;
		TRY(msg_put_tube(b, q->tube_set.tube, false));
		buf_put_u8(b, q->tube_set.unset);
		TRY(msg_put_tube_conf(b, &q->tube_set.conf));
		if (!q->tube_set.limits)
			return 0;
		if ((q->tube_set.lunset & ~MSG_LIM_ALL) != 0 ||
		    (q->tube_set.lunset & q->tube_set.flow.set) != 0)
			return SLUICE_EINVAL;
		buf_put_u8(b, q->tube_set.lunset);
		return msg_put_flow(b, &q->tube_set.flow);
	case MSG_OP_PAUSE:
		TRY(msg_put_tube(b, q->pause.tube, false));
		buf_put_u64(b, q->pause.duration);
		return 0;
	case MSG_OP_DELETE_WHERE:
		if (!where_valid(&q->where))
			return SLUICE_EINVAL;
		TRY(msg_put_tube(b, q->where.tube, false));
		buf_put_u8(b, q->where.state);
		buf_put_u64(b, q->where.older);
		if (q->where.aged) {
			buf_put_u8(b, q->where.states);
			buf_put_u8(b, q->where.by);
		}
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* ---- replies ----------------------------------------------------------- */

/* Decodes the body of a reply (status 0) of this family. */
static int
msg_tube_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	(void)pmax;

	switch (op) {
	case MSG_OP_KICK:
	case MSG_OP_FLUSH:
	case MSG_OP_DELETE_WHERE:
	case MSG_OP_RELEASE_ALL:
	case MSG_OP_PAUSE:
	case MSG_OP_TUBE_DELETE:
		return msg_get_count(r, m);
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_SHOW:
		TRY(msg_get_tube(r, false, &m->tube_conf.tube));
		TRY(msg_get_tube_conf(r, &m->tube_conf.conf));
		if (!(flags & TUBE_F_LIMITS))
			return 0;
		m->tube_conf.limits = true;
		TRY(msg_get_flow(r, &m->tube_conf.flow));
		m->tube_conf.state.tokens = rd_u64(r);
		m->tube_conf.state.taken = rd_u64(r);
		m->tube_conf.state.held = rd_u64(r);
		NEED(r);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* Encodes the body of a reply (status 0) of this family. */
static int
msg_tube_put_rep(struct buf *b, const struct msg_rep *m)
{
	switch (m->op) {
	case MSG_OP_KICK:
	case MSG_OP_FLUSH:
	case MSG_OP_DELETE_WHERE:
	case MSG_OP_RELEASE_ALL:
	case MSG_OP_PAUSE:
	case MSG_OP_TUBE_DELETE:
		return msg_put_count(b, m);
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_SHOW:
		TRY(msg_put_tube(b, m->tube_conf.tube, false));
		TRY(msg_put_tube_conf(b, &m->tube_conf.conf));
		if (!m->tube_conf.limits)
			return 0;
		TRY(msg_put_flow(b, &m->tube_conf.flow));
		buf_put_u64(b, m->tube_conf.state.tokens);
		buf_put_u64(b, m->tube_conf.state.taken);
		buf_put_u64(b, m->tube_conf.state.held);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* The flags byte of a reply of this family. */
static uint8_t
msg_tube_rep_flags(const struct msg_rep *m)
{
	if ((m->op == MSG_OP_TUBE_SET || m->op == MSG_OP_TUBE_SHOW) &&
	    m->tube_conf.limits)
		return TUBE_F_LIMITS;
	return 0;
}

const struct msg_family msg_tube_family = {
	.get_req = msg_tube_get_req,
	.put_req = msg_tube_put_req,
	.req_flags = msg_tube_req_flags,
	.get_rep = msg_tube_get_rep,
	.put_rep = msg_tube_put_rep,
	.rep_flags = msg_tube_rep_flags,
};
