/* msg_stats - the wire codec of the messages that report: stats (the
 * node's and every tube's counts and key/values, paged or the deepest),
 * stats_hourly, errors and history; and the records they are made of.
 * Decoders stand beside encoders; msg.c frames them and sends each op here
 * through msg_stats_family. */
#include <assert.h>
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

/* A part of the stats of every tube: a page (1..MSG_STATS_TUBES_MAX
 * tubes) or the deepest (0, the server's choice, ..MSG_STATS_TUBES_MAX),
 * not both, and of every tube only; `after` pages only. */
static int
stats_part_check(const struct msg_stats_req *q)
{
	if (q->page && q->top)
		return SLUICE_EINVAL;
	if ((q->page || q->top) && q->tube.len > 0)
		return SLUICE_EINVAL;
	if (!q->page && q->after != 0)
		return SLUICE_EINVAL;
	if (q->page)
		return msg_check_count(q->limit, MSG_STATS_TUBES_MAX);
	if (q->top)
		return q->limit > MSG_STATS_TUBES_MAX ? SLUICE_ELIMIT : 0;
	return q->limit == 0 ? 0 : SLUICE_EINVAL;
}

static bool
history_secs_valid(uint32_t secs)
{
	return secs >= 1 && secs <= MSG_HISTORY_SECS;
}

/* A history reply's shape: a step, 1..KINDS_MAX kinds, 1..SECS slots. */
static int
history_shape(const struct msg_history *h)
{
	if (h->step == 0 || h->kinds == 0 || h->n == 0)
		return SLUICE_EINVAL;
	return h->kinds > MSG_HISTORY_KINDS_MAX || h->n > MSG_HISTORY_SECS
	    ? SLUICE_ELIMIT
	    : 0;
}

uint32_t
msg_history_at(const struct msg_history *h, unsigned k, uint32_t i)
{
	size_t at = (size_t)k * h->n + i;

	if (k >= h->kinds || i >= h->n)
		return 0;
	if (h->values != NULL)
		return h->values[at];
	return h->raw != NULL ? le_load_u32(h->raw + at * 4) : 0;
}

static int
get_kv(struct rd *r, struct msg_kv *out)
{
	TRY(msg_get_str(r, MSG_NAME_MAX, SLUICE_ELIMIT, &out->name));
	if (out->name.len == 0)
		return SLUICE_ELIMIT;
	if (!msg_name_valid(out->name))
		return SLUICE_EPROTO;
	out->value = rd_u64(r);
	NEED(r);
	return 0;
}

static int
get_kvs(struct rd *r, struct msg_kvs *out)
{
	struct msg_kv kv;

	memset(out, 0, sizeof(*out));
	out->n = rd_u16(r);
	NEED(r);
	GET_EACH(&out->it, r, out->n, 0, get_kv(r, &kv));
	return 0;
}

static int
enc_kvs(struct buf *b, const struct msg_kvs *k)
{
	struct msg_iter it;
	struct msg_kv one;

	if (k->n > UINT16_MAX)
		return SLUICE_ELIMIT;
	buf_put_u16(b, (uint16_t)k->n);
	it = k->it;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct msg_kv *kv =
		    LIST_AT(k->kvs, i, it, msg_next_kv, one);

		if (kv == NULL)
			return SLUICE_EINVAL;
		if (kv->name.len == 0 || kv->name.len > MSG_NAME_MAX)
			return SLUICE_ELIMIT;
		if (!msg_name_valid(kv->name))
			return SLUICE_EINVAL;
		msg_put_str(b, kv->name);
		buf_put_u64(b, kv->value);
	}
	return 0;
}

/* counts: six u64, then key/values. The name is read by the caller. */
static int
get_counts(struct rd *r, struct msg_tube_stats *out)
{
	out->ready = rd_u64(r);
	out->delayed = rd_u64(r);
	out->taken = rd_u64(r);
	out->buried = rd_u64(r);
	out->paused_until = rd_u64(r);
	out->oldest_ready_age = rd_u64(r);
	NEED(r);
	return get_kvs(r, &out->more);
}

static int
enc_counts(struct buf *b, const struct msg_tube_stats *s)
{
	buf_put_u64(b, s->ready);
	buf_put_u64(b, s->delayed);
	buf_put_u64(b, s->taken);
	buf_put_u64(b, s->buried);
	buf_put_u64(b, s->paused_until);
	buf_put_u64(b, s->oldest_ready_age);
	return enc_kvs(b, &s->more);
}

static int
get_tube_stats(struct rd *r, bool settings, struct msg_tube_stats *out)
{
	memset(out, 0, sizeof(*out));
	TRY(msg_get_tube(r, false, &out->name));
	TRY(get_counts(r, out));
	return settings ? msg_get_tube_conf(r, &out->conf) : 0;
}

static void
get_dist(struct rd *r, struct msg_dist *d)
{
	d->count = rd_u64(r);
	d->total = rd_u64(r);
	d->max = rd_u64(r);
	d->p50 = rd_u64(r);
	d->p99 = rd_u64(r);
}

static void
enc_dist(struct buf *b, const struct msg_dist *d)
{
	buf_put_u64(b, d->count);
	buf_put_u64(b, d->total);
	buf_put_u64(b, d->max);
	buf_put_u64(b, d->p50);
	buf_put_u64(b, d->p99);
}

static int
get_hour(struct rd *r, struct msg_hour *out)
{
	out->start = rd_u64(r);
	out->acks = rd_u64(r);
	out->fails = rd_u64(r);
	out->buries = rd_u64(r);
	out->ttr_expired = rd_u64(r);
	get_dist(r, &out->work);
	get_dist(r, &out->wait);
	NEED(r);
	return 0;
}

static void
enc_hour(struct buf *b, const struct msg_hour *h)
{
	buf_put_u64(b, h->start);
	buf_put_u64(b, h->acks);
	buf_put_u64(b, h->fails);
	buf_put_u64(b, h->buries);
	buf_put_u64(b, h->ttr_expired);
	enc_dist(b, &h->work);
	enc_dist(b, &h->wait);
}

static int
get_error_count(struct rd *r, bool ids, struct msg_error_count *out)
{
	TRY(msg_get_text(r, MSG_TEXT_MAX, &out->text));
	out->count = rd_u64(r);
	out->nids = ids ? rd_u8(r) : 0;
	NEED(r);
	if (out->nids > MSG_ERROR_IDS)
		return SLUICE_ELIMIT;
	for (uint8_t i = 0; i < out->nids; i++)
		out->ids[i] = rd_u64(r);
	NEED(r);
	return 0;
}

static int
get_stats(struct rd *r, bool settings, struct msg_stats *s)
{
	struct msg_tube_stats ts;

	s->role = rd_u8(r);
	s->epoch = rd_u64(r);
	s->lsn = rd_u64(r);
	s->durable_lsn = rd_u64(r);
	s->now = rd_u64(r);
	NEED(r);
	if (s->role != MSG_ROLE_LEADER && s->role != MSG_ROLE_FOLLOWER)
		return SLUICE_EPROTO;
	TRY(msg_get_text(r, MSG_URL_MAX, &s->leader));
	TRY(get_counts(r, &s->totals));
	TRY(get_kvs(r, &s->more));
	s->ntubes = rd_u32(r);
	NEED(r);
	GET_EACH(&s->it, r, s->ntubes, 0, get_tube_stats(r, settings, &ts));
	s->settings = settings;
	s->it.flags = settings ? STATS_F_SETTINGS : 0;
	return 0;
}

static int
enc_stats(struct buf *b, const struct msg_stats *s)
{
	const struct msg_tube_stats *e;
	struct msg_tube_stats one;
	struct msg_iter it;

	if (s->role != MSG_ROLE_LEADER && s->role != MSG_ROLE_FOLLOWER)
		return SLUICE_EINVAL;
	buf_put_u8(b, s->role);
	buf_put_u64(b, s->epoch);
	buf_put_u64(b, s->lsn);
	buf_put_u64(b, s->durable_lsn);
	buf_put_u64(b, s->now);
	TRY(msg_put_text(b, s->leader, MSG_URL_MAX));
	TRY(enc_counts(b, &s->totals));
	TRY(enc_kvs(b, &s->more));
	buf_put_u32(b, s->ntubes);
	it = s->it;
	for (uint32_t i = 0; i < s->ntubes; i++) {
		e = LIST_AT(s->tubes, i, it, msg_next_tube_stats, one);
		if (e == NULL)
			return SLUICE_EINVAL;
		TRY(msg_put_tube(b, e->name, false));
		TRY(enc_counts(b, e));
		if (s->settings)
			TRY(msg_put_tube_conf(b, &e->conf));
	}
	return 0;
}

static int
get_history(struct rd *r, struct msg_history *h)
{
	memset(h, 0, sizeof(*h));
	h->start = rd_u64(r);
	h->step = rd_u32(r);
	h->kinds = rd_u8(r);
	h->n = rd_u32(r);
	NEED(r);
	TRY(history_shape(h));
	h->raw = rd_bytes(r, (size_t)h->kinds * h->n * 4);
	NEED(r);
	return 0;
}

bool
msg_next_kv(struct msg_iter *it, struct msg_kv *out)
{
	NEXT(it, get_kv(&it->r, out));
}

bool
msg_next_tube_stats(struct msg_iter *it, struct msg_tube_stats *out)
{
	NEXT(it, get_tube_stats(&it->r, it->flags & STATS_F_SETTINGS, out));
}

bool
msg_next_error_count(struct msg_iter *it, struct msg_error_count *out)
{
	NEXT(it, get_error_count(&it->r, it->flags & ERRORS_F_IDS, out));
}

bool
msg_next_hour(struct msg_iter *it, struct msg_hour *out)
{
	NEXT(it, get_hour(&it->r, out));
}

/* ---- requests ---------------------------------------------------------- */

/* The states errors can count: a live one, or every live one (NONE). */
static bool
errors_state_valid(uint8_t st)
{
	return st == MSG_ST_NONE || st == MSG_ST_READY ||
	    st == MSG_ST_DELAYED || st == MSG_ST_TAKEN || st == MSG_ST_BURIED;
}

/* Decodes the body of a request of this family (the head is checked). */
static int
msg_stats_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	(void)pmax;

	switch (op) {
	case MSG_OP_ERRORS:
		q->errors.ids = flags & ERRORS_F_IDS;
		q->errors.set_state = flags & ERRORS_F_STATE;
		TRY(msg_get_tube(r, false, &q->errors.tube));
		if (!q->errors.set_state)
			return 0;
		q->errors.state = rd_u8(r);
		NEED(r);
		return errors_state_valid(q->errors.state) ? 0 : SLUICE_EINVAL;
	case MSG_OP_STATS:
		q->stats.settings = flags & STATS_F_SETTINGS;
		q->stats.durations = flags & STATS_F_DURATIONS;
		q->stats.page = flags & STATS_F_PAGE;
		q->stats.top = flags & STATS_F_TOP;
		TRY(msg_get_tube(r, true, &q->stats.tube));
		if (!q->stats.page && !q->stats.top)
			return 0;
		q->stats.limit = rd_u32(r);
		if (q->stats.page)
			q->stats.after = rd_u32(r);
		NEED(r);
		return stats_part_check(&q->stats);
	case MSG_OP_STATS_HOURLY:
		return msg_get_tube(r, true, &q->tube);
	case MSG_OP_HISTORY:
		TRY(msg_get_tube(r, true, &q->history.tube));
		q->history.secs = rd_u32(r);
		NEED(r);
		return history_secs_valid(q->history.secs) ? 0 : SLUICE_EINVAL;
	}
	return SLUICE_EUNKNOWNOP;
}

/* The header's flags byte for a request of this family. */
static uint8_t
msg_stats_req_flags(const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_STATS:
		return (q->stats.settings ? STATS_F_SETTINGS : 0) |
		    (q->stats.durations ? STATS_F_DURATIONS : 0) |
		    (q->stats.page ? STATS_F_PAGE : 0) |
		    (q->stats.top ? STATS_F_TOP : 0);
	case MSG_OP_ERRORS:
		return (q->errors.ids ? ERRORS_F_IDS : 0) |
		    (q->errors.set_state ? ERRORS_F_STATE : 0);
	}
	return 0;
}

/* Encodes the body of a request of this family, checked as its decoder
 * checks it. */
static int
msg_stats_put_req(struct buf *b, const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_ERRORS:
		if (q->errors.set_state && !errors_state_valid(q->errors.state))
			return SLUICE_EINVAL;
		TRY(msg_put_tube(b, q->tube, false));
		if (q->errors.set_state)
			buf_put_u8(b, q->errors.state);
		return 0;
	case MSG_OP_STATS:
		TRY(stats_part_check(&q->stats));
		TRY(msg_put_tube(b, q->stats.tube, true));
		if (q->stats.page || q->stats.top)
			buf_put_u32(b, q->stats.limit);
		if (q->stats.page)
			buf_put_u32(b, q->stats.after);
		return 0;
	case MSG_OP_STATS_HOURLY:
		return msg_put_tube(b, q->tube, true);
	case MSG_OP_HISTORY:
		if (!history_secs_valid(q->history.secs))
			return SLUICE_EINVAL;
		TRY(msg_put_tube(b, q->history.tube, true));
		buf_put_u32(b, q->history.secs);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* ---- replies ----------------------------------------------------------- */

/* Decodes the body of a reply (status 0) of this family. */
static int
msg_stats_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_error_count ec;
	struct msg_hour hr;

	(void)pmax;

	switch (op) {
	case MSG_OP_STATS:
		return get_stats(r, flags & STATS_F_SETTINGS, &m->stats);
	case MSG_OP_ERRORS:
		m->errors.ids = flags & ERRORS_F_IDS;
		m->errors.n = rd_u32(r);
		NEED(r);
		GET_EACH(&m->errors.it, r, m->errors.n, 0,
		    get_error_count(r, m->errors.ids, &ec));
		m->errors.it.flags = flags;
		return 0;
	case MSG_OP_STATS_HOURLY:
		m->hours.n = rd_u32(r);
		NEED(r);
		if (m->hours.n > MSG_HOURS_MAX)
			return SLUICE_ELIMIT;
		GET_EACH(&m->hours.it, r, m->hours.n, 0, get_hour(r, &hr));
		return 0;
	case MSG_OP_HISTORY:
		return get_history(r, &m->history);
	}
	return SLUICE_EUNKNOWNOP;
}

/* The flags byte of a reply (status 0) of this family. */
static uint8_t
msg_stats_rep_flags(const struct msg_rep *m)
{
	switch (m->op) {
	case MSG_OP_STATS:
		return m->stats.settings ? STATS_F_SETTINGS : 0;
	case MSG_OP_ERRORS:
		return m->errors.ids ? ERRORS_F_IDS : 0;
	}
	return 0;
}

/* Encodes the body of a reply (status 0) of this family. */
static int
msg_stats_put_rep(struct buf *b, const struct msg_rep *m)
{
	const struct msg_hour *h;
	struct msg_error_count ec;
	struct msg_hour hr;
	struct msg_iter it;

	switch (m->op) {
	case MSG_OP_STATS:
		return enc_stats(b, &m->stats);
	case MSG_OP_ERRORS:
		buf_put_u32(b, m->errors.n);
		it = m->errors.it;
		for (uint32_t i = 0; i < m->errors.n; i++) {
			const struct msg_error_count *e = LIST_AT(
			    m->errors.errors, i, it, msg_next_error_count, ec);

			if (e == NULL)
				return SLUICE_EINVAL;
			TRY(msg_put_text(b, e->text, MSG_TEXT_MAX));
			buf_put_u64(b, e->count);
			if (!m->errors.ids)
				continue;
			if (e->nids > MSG_ERROR_IDS)
				return SLUICE_ELIMIT;
			buf_put_u8(b, e->nids);
			for (uint8_t k = 0; k < e->nids; k++)
				buf_put_u64(b, e->ids[k]);
		}
		return 0;
	case MSG_OP_STATS_HOURLY:
		if (m->hours.n > MSG_HOURS_MAX)
			return SLUICE_ELIMIT;
		buf_put_u32(b, m->hours.n);
		it = m->hours.it;
		for (uint32_t i = 0; i < m->hours.n; i++) {
			h = LIST_AT(m->hours.hours, i, it, msg_next_hour, hr);
			if (h == NULL)
				return SLUICE_EINVAL;
			enc_hour(b, h);
		}
		return 0;
	case MSG_OP_HISTORY:
		TRY(history_shape(&m->history));
		buf_put_u64(b, m->history.start);
		buf_put_u32(b, m->history.step);
		buf_put_u8(b, m->history.kinds);
		buf_put_u32(b, m->history.n);
		/* values, or the raw counts of a decoded reply sent on */
		for (unsigned k = 0; k < m->history.kinds; k++)
			for (uint32_t i = 0; i < m->history.n; i++)
				buf_put_u32(
				    b, msg_history_at(&m->history, k, i));
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

const struct msg_family msg_stats_family = {
	.get_req = msg_stats_get_req,
	.put_req = msg_stats_put_req,
	.req_flags = msg_stats_req_flags,
	.get_rep = msg_stats_get_rep,
	.put_rep = msg_stats_put_rep,
	.rep_flags = msg_stats_rep_flags,
};
