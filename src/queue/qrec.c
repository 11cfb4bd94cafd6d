/* qrec - encode, decode and check queue record bodies. The byte layout of
 * every type, and the rule for a valid body, are at the top of qrec.h.
 *
 * Decoding parses with the bounds-checked reader of util/buf.h and then
 * runs the same check (qrec_valid) that encoding runs first, so what one
 * accepts the other produces. Pure: no allocation beyond the output
 * buffer, no I/O, no logging; fuzzed by tests/fuzz/fuzz_qrec.c. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "queue/qrec.h"
#include "util/name.h"
#include "sluice.h"

static const char *const type_names[QREC_TYPE_END_] = {
	[QREC_NONE] = "NONE",
	[QREC_PUT] = "PUT",
	[QREC_TAKE] = "TAKE",
	[QREC_ACK] = "ACK",
	[QREC_RELEASE] = "RELEASE",
	[QREC_FAIL] = "FAIL",
	[QREC_TOUCH] = "TOUCH",
	[QREC_BURY] = "BURY",
	[QREC_KICK] = "KICK",
	[QREC_DELETE] = "DELETE",
	[QREC_FLUSH] = "FLUSH",
	[QREC_REPLACE] = "REPLACE",
	[QREC_PAUSE] = "PAUSE",
	[QREC_TAKE_LEASE] = "TAKE",
	[QREC_UNTAKE] = "UNTAKE",
	[QREC_SETBACK] = "SETBACK",
	[QREC_UPDATE] = "UPDATE",
	[QREC_DELETE_WHERE] = "DELETE_WHERE",
	[QREC_PUT_V] = "PUT_V",
	[QREC_PUT_T] = "PUT_T",
	[QREC_REPLACE_V] = "REPLACE_V",
	[QREC_DELETE_AGED] = "DELETE_AGED",
	[QREC_TUBE_SET] = "TUBE_SET",
	[QREC_TUBE_DELETE] = "TUBE_DELETE",
	[QREC_TUBE_LIMIT] = "TUBE_LIMIT",
	[QREC_PUT_G] = "PUT_G",
	[QREC_GROUP_SET] = "GROUP_SET",
	[QREC_PUT_X] = "PUT_X",
	[QREC_ACK_R] = "ACK_R",
	[QREC_CANCEL] = "CANCEL",
	[QREC_SCHED_SET] = "SCHED_SET",
	[QREC_SCHED_DELETE] = "SCHED_DELETE",
	[QREC_SCHED_PAUSE] = "SCHED_PAUSE",
	[QREC_SCHED_FIRE] = "SCHED_FIRE",
	[QREC_BATCH_SET] = "BATCH_SET",
	[QREC_BATCH_CLOSE] = "BATCH_CLOSE",
	[QREC_BATCH_FIRE] = "BATCH_FIRE",
	[QREC_PUTS] = "PUTS",
	[QREC_MOVE_HOLD] = "MOVE_HOLD",
	[QREC_MOVE_DROP] = "MOVE_DROP",
	[QREC_MOVE_IN] = "MOVE_IN",
	[QREC_MOVE_END] = "MOVE_END",
	[QREC_MOVE_MARK] = "MOVE_MARK",
	[QREC_MOVE_KEY] = "MOVE_KEY",
	[QREC_MOVE_PEND] = "MOVE_PEND",
	[QREC_MOVE_PLACE] = "MOVE_PLACE",
	[QREC_MOVE_KEEP] = "MOVE_KEEP",
};

const char *
qrec_type_name(uint16_t type)
{
	if (type < QREC_TYPE_END_ && type_names[type] != NULL)
		return type_names[type];
	return "?";
}

bool
qrec_group_valid(const char *name, size_t len)
{
	return len <= QREC_GROUP_MAX && qrec_tube_valid(name, len);
}

bool
qrec_tube_valid(const char *name, size_t len)
{
	return name_valid(name, len, QREC_NAME_MAX);
}

/* The bytes of a PUT's head (put_head) besides its tube, key and payload:
 * id, the tube's length, pri, run_at, ttr, max_attempts, period, the
 * key's length, the payload's length. */
enum { PUT_FIXED = 8 + 2 + 4 + 8 + 4 + 4 + 8 + 2 + 4 };

static bool
time_ok(int64_t t)
{
	return t >= 0 && t <= QREC_TIME_MAX;
}

/* A string field: NULL only when empty. */
static bool
str_ok(const void *p, size_t len, size_t max)
{
	return len <= max && (len == 0 || p != NULL);
}

static bool
end_valid(uint16_t type, const struct qrec_end *e)
{
	if (e->id == 0 || e->reason >= QREC_REASON_END_)
		return false;
	if (e->outcome >= QREC_OUTCOME_END_)
		return false;
	/* Only BURY and SETBACK may come from a task that is not taken
	 * (lease 0), and then only on a client's (operator's) request. */
	if (e->lease == 0 &&
	    ((type != QREC_BURY && type != QREC_SETBACK) ||
	        e->reason != QREC_BY_CLIENT || e->outcome != QREC_BURIED))
		return false;
	if (e->outcome == QREC_WAIT ? !time_ok(e->run_at) : e->run_at != 0)
		return false;
	if (e->outcome == QREC_DONE
	        ? type != QREC_ACK || e->keep_ms < 1 || !time_ok(e->keep_ms)
	        : e->keep_ms != 0 || e->max_done != 0)
		return false;
	/* A dead-letter move names its tube in `to`; nothing else does. */
	if (type != QREC_ACK && e->outcome == QREC_MOVED
	        ? !qrec_tube_valid(e->to, e->to_len)
	        : e->to_len != 0)
		return false;
	switch (type) {
	case QREC_ACK:
		if (e->reason != QREC_BY_CLIENT || e->pri != 0)
			return false;
		if (e->outcome == QREC_BURIED)
			return false;
		if (e->outcome != QREC_DELETED && e->outcome != QREC_DONE &&
		    e->dedup_ms != 0)
			return false;
		if (e->outcome == QREC_MOVED)
			return qrec_tube_valid(e->text, e->text_len);
		if (e->outcome == QREC_DONE)
			return str_ok(e->text, e->text_len, QREC_RESULT_MAX);
		return e->text_len == 0;
	case QREC_RELEASE:
		if (e->outcome != QREC_WAIT && e->outcome != QREC_REPLACED)
			return false;
		if (e->outcome != QREC_WAIT && e->pri != 0)
			return false;
		return e->dedup_ms == 0 && e->text_len == 0;
	case QREC_FAIL:
		if (e->reason != QREC_BY_CLIENT || e->pri != 0)
			return false;
		if (e->outcome != QREC_WAIT && e->outcome != QREC_BURIED &&
		    e->outcome != QREC_REPLACED && e->outcome != QREC_MOVED)
			return false;
		return e->dedup_ms == 0 &&
		    str_ok(e->text, e->text_len, QREC_ERROR_MAX);
	case QREC_BURY:
		if (e->outcome != QREC_BURIED && e->outcome != QREC_REPLACED &&
		    e->outcome != QREC_MOVED)
			return false;
		return e->pri == 0 && e->dedup_ms == 0 && e->text_len == 0;
	case QREC_UNTAKE:
		if (e->outcome != QREC_WAIT && e->outcome != QREC_REPLACED)
			return false;
		return e->reason == QREC_BY_CLIENT && e->run_at == 0 &&
		    e->pri == 0 && e->dedup_ms == 0 && e->text_len == 0;
	case QREC_SETBACK:
		/* A client's setback is a bury; a restart's has no text. */
		if (e->reason == QREC_BY_RESTART ||
		    (e->reason == QREC_BY_CLIENT && e->outcome == QREC_WAIT))
			return false;
		if (e->outcome != QREC_WAIT && e->outcome != QREC_BURIED &&
		    e->outcome != QREC_REPLACED && e->outcome != QREC_MOVED)
			return false;
		if (e->outcome != QREC_WAIT && e->pri != 0)
			return false;
		return e->dedup_ms == 0 &&
		    str_ok(e->text, e->text_len, QREC_ERROR_MAX);
	default:
		return false;
	}
}

bool
qrec_tube_conf_valid(
    const struct qrec_tube_conf *c, const char *tube, size_t tube_len)
{
	uint8_t s = c->set;

	if ((s & ~QREC_TS_ALL) != 0)
		return false;
	/* A field the tube does not set is zero: one encoding per state. */
	if (!(s & QREC_TS_TTR) ? c->ttr != 0 : c->ttr == 0)
		return false;
	if (!(s & QREC_TS_MAX_ATTEMPTS) && c->max_attempts != 0)
		return false;
	if (!(s & QREC_TS_BACKOFF) ? c->backoff_base != 0 || c->backoff_cap != 0
	                           : c->backoff_base > c->backoff_cap)
		return false;
	if (!(s & QREC_TS_KEEP_DONE) ? c->keep_done != 0
	                             : !time_ok(c->keep_done))
		return false;
	if (!(s & QREC_TS_LOST_LEASE) && c->lost_lease_immediate)
		return false;
	if (!(s & QREC_TS_DEAD_LETTER))
		return c->dead_letter_len == 0;
	/* Never the tube itself: a dead letter is somewhere else. */
	return qrec_tube_valid(c->dead_letter, c->dead_letter_len) &&
	    (c->dead_letter_len != tube_len ||
	        memcmp(c->dead_letter, tube, tube_len) != 0);
}

bool
qrec_limits_valid(const struct qrec_limits *l)
{
	if ((l->set & ~QREC_LIM_ALL) != 0)
		return false;
	if (!(l->set & QREC_LIM_RATE)) {
		if (l->rate != 0 || l->per_ms != 0 || l->burst != 0)
			return false;
	} else {
		if (l->per_ms != 1000 && l->per_ms != 60000 &&
		    l->per_ms != 3600000)
			return false;
		/* rate / per_ms <= QREC_RATE_MAX / 1000, in integers */
		if (l->rate == 0 ||
		    (uint64_t)l->rate * 1000 >
		        (uint64_t)QREC_RATE_MAX * l->per_ms)
			return false;
		if (l->burst == 0 || l->burst > QREC_BURST_MAX ||
		    (uint64_t)l->burst * l->per_ms < l->rate)
			return false;
	}
	if (!(l->set & QREC_LIM_CONCURRENCY))
		return l->concurrency == 0;
	return l->concurrency >= 1 && l->concurrency <= QREC_CONCURRENCY_MAX;
}

/* A PUT_X's parents: 1..QREC_AFTER_MAX ids, each >= 1, below the put's
 * own id, increasing; a known rule. Other puts have none. */
static bool
after_valid(uint16_t type, const struct qrec_put *p)
{
	uint64_t prev = 0;

	if (type != QREC_PUT_X)
		return p->nafter == 0 && p->on_parent == 0 && p->batch_len == 0;
	if (p->batch_len > 0 &&
	    (p->batch_len > QREC_BATCH_MAX ||
	        !qrec_tube_valid(p->batch, p->batch_len)))
		return false;
	if (p->nafter == 0)
		return p->batch_len > 0 && p->on_parent == 0;
	if (p->nafter > QREC_AFTER_MAX || p->after == NULL || p->on_parent > 2)
		return false;
	for (uint32_t i = 0; i < p->nafter; i++) {
		uint64_t id;

		memcpy(&id, p->after + 8 * (size_t)i, sizeof(id)); /* LE */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		id = __builtin_bswap64(id);
#endif
		if (id <= prev || id >= p->id)
			return false;
		prev = id;
	}
	return true;
}

/* The tagged fields of a PUT_X, to the end of the body: AFTER, BATCH;
 * an unknown tag, a repeated one or a length that does not fit fails the
 * reader. */
static void
put_tags_read(struct rd *r, struct qrec_put *p)
{
	int last = 0;

	while (!rd_failed(r) && rd_left(r) > 0) {
		uint8_t tag = rd_u8(r);
		uint32_t len = rd_u32(r);

		if (rd_failed(r) || tag <= last || len > rd_left(r) ||
		    (tag == QREC_TAG_AFTER &&
		        (len < 9 || (len - 1) % 8 != 0)) ||
		    (tag == QREC_TAG_BATCH &&
		        (len < 1 || len > QREC_BATCH_MAX)) ||
		    tag > QREC_TAG_BATCH) {
			rd_bytes(r, rd_left(r) + 1); /* fails it */
			return;
		}
		last = tag;
		if (tag == QREC_TAG_BATCH) {
			p->batch = (const char *)rd_bytes(r, len);
			p->batch_len = len;
			continue;
		}
		p->on_parent = rd_u8(r);
		p->nafter = (len - 1) / 8;
		p->after = rd_bytes(r, len - 1);
	}
	if (p->nafter == 0 && p->batch_len == 0)
		rd_bytes(r, rd_left(r) + 1); /* one of them is required */
}

bool
qrec_valid(const struct qrec *rec)
{
	const struct qrec_put *p = &rec->u.put;
	const struct qrec_replace *r = &rec->u.replace;
	const struct qrec_update *u = &rec->u.update;

	switch (rec->type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_T:
	case QREC_PUT_G:
	case QREC_PUT_X:
		if (!after_valid(rec->type, p))
			return false;
		/* The next id is id + 1: it must not wrap. */
		return p->id != 0 && p->id != UINT64_MAX && p->ttr != 0 &&
		    qrec_tube_valid(p->tube, p->tube_len) &&
		    str_ok(p->key, p->key_len, QREC_KEY_MAX) &&
		    str_ok(p->payload, p->payload_len, QREC_PAYLOAD_MAX) &&
		    time_ok(p->run_at) && time_ok(p->period) &&
		    (rec->type == QREC_PUT_X
		            ? (p->version == 0 || p->key_len > 0) &&
		                (p->group_len == 0 ||
		                    qrec_group_valid(p->group, p->group_len))
		            : rec->type == QREC_PUT_G
		            ? (p->version == 0 || p->key_len > 0) &&
		                qrec_group_valid(p->group, p->group_len)
		            : rec->type == QREC_PUT_T ? p->group_len == 0 ||
		                qrec_group_valid(p->group, p->group_len)
		                                      : p->group_len == 0) &&
		    (rec->type == QREC_PUT_V ? p->version != 0 && p->key_len > 0
		            : rec->type == QREC_PUT_G || rec->type == QREC_PUT_X
		            ? true
		            : p->version == 0) &&
		    (rec->type == QREC_PUT_T
		            ? p->key_len > 0 && p->throttle_until >= 1 &&
		                time_ok(p->throttle_until)
		            : p->throttle_until == 0);
	case QREC_TAKE:
		return rec->u.take.id != 0 && rec->u.take.lease == 0;
	case QREC_TAKE_LEASE:
		return rec->u.take.id != 0 && rec->u.take.lease != 0;
	case QREC_ACK:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_UNTAKE:
	case QREC_SETBACK:
		return rec->u.end.result_len == 0 &&
		    end_valid(rec->type, &rec->u.end);
	case QREC_ACK_R:
		return (rec->u.end.outcome == QREC_DELETED ||
		           rec->u.end.outcome == QREC_MOVED) &&
		    rec->u.end.result_len >= 1 &&
		    str_ok(rec->u.end.result, rec->u.end.result_len,
		        QREC_RESULT_MAX) &&
		    end_valid(QREC_ACK, &rec->u.end);
	case QREC_TOUCH:
		return rec->u.touch.id != 0 && rec->u.touch.lease != 0;
	case QREC_CANCEL:
		return rec->u.cancel.id != 0;
	case QREC_KICK:
		return rec->u.kick.id != 0;
	case QREC_DELETE:
		return rec->u.del.id != 0;
	case QREC_FLUSH:
		return qrec_tube_valid(
		    rec->u.flush.tube, rec->u.flush.tube_len);
	case QREC_REPLACE:
	case QREC_REPLACE_V:
		return r->id != 0 && r->ttr != 0 &&
		    str_ok(r->payload, r->payload_len, QREC_PAYLOAD_MAX) &&
		    time_ok(r->run_at) && time_ok(r->period) &&
		    (rec->type == QREC_REPLACE_V) == (r->version != 0);
	case QREC_PAUSE:
		return qrec_tube_valid(
		           rec->u.pause.tube, rec->u.pause.tube_len) &&
		    time_ok(rec->u.pause.until);
	case QREC_UPDATE:
		return u->id != 0 && u->ttr != 0 && time_ok(u->run_at) &&
		    (u->has_payload ? str_ok(u->payload, u->payload_len,
		                          QREC_PAYLOAD_MAX)
		                    : u->payload_len == 0);
	case QREC_DELETE_WHERE:
		return qrec_tube_valid(
		           rec->u.where.tube, rec->u.where.tube_len) &&
		    (rec->u.where.state == 1 || rec->u.where.state == 2 ||
		        rec->u.where.state == 4 || rec->u.where.state == 5) &&
		    rec->u.where.states == 0 && rec->u.where.by == 0 &&
		    time_ok(rec->u.where.before);
	case QREC_DELETE_AGED:
		return qrec_tube_valid(
		           rec->u.where.tube, rec->u.where.tube_len) &&
		    rec->u.where.states != 0 &&
		    (rec->u.where.states & ~QREC_STATES_ALL) == 0 &&
		    (rec->u.where.by == QREC_BY_UPDATED ||
		        rec->u.where.by == QREC_BY_CREATED) &&
		    rec->u.where.state == 0 && time_ok(rec->u.where.before);
	case QREC_TUBE_LIMIT:
		return qrec_tube_valid(rec->u.tube_limit.tube,
		           rec->u.tube_limit.tube_len) &&
		    qrec_limits_valid(&rec->u.tube_limit.lim);
	case QREC_GROUP_SET:
		return qrec_tube_valid(
		           rec->u.group_set.tube, rec->u.group_set.tube_len) &&
		    (rec->u.group_set.group_len == 0
		            ? !rec->u.group_set.paused
		            : qrec_group_valid(rec->u.group_set.group,
		                  rec->u.group_set.group_len)) &&
		    qrec_limits_valid(&rec->u.group_set.lim);
	case QREC_TUBE_SET:
		return qrec_tube_valid(
		           rec->u.tube_set.tube, rec->u.tube_set.tube_len) &&
		    qrec_tube_conf_valid(&rec->u.tube_set.conf,
		        rec->u.tube_set.tube, rec->u.tube_set.tube_len);
	case QREC_TUBE_DELETE:
		return qrec_tube_valid(
		    rec->u.tube_delete.tube, rec->u.tube_delete.tube_len);
	case QREC_SCHED_SET:
	case QREC_SCHED_DELETE:
	case QREC_SCHED_PAUSE:
	case QREC_SCHED_FIRE:
		return qrec_sched_valid(&rec->u.sched, rec->type);
	case QREC_BATCH_SET:
	case QREC_BATCH_CLOSE:
	case QREC_BATCH_FIRE:
		return qrec_batch_valid(&rec->u.batch, rec->type);
	case QREC_MOVE_HOLD ... QREC_MOVE_KEEP: /* qrec_move.c */
		return qrec_move_valid(&rec->u.move, rec->type);
	case QREC_PUTS: /* qrec_puts.c */
		return qrec_puts_valid(&rec->u.puts);
	default:
		return false;
	}
}

static void
put_end(const struct qrec *rec, struct buf *out)
{
	const struct qrec_end *e = &rec->u.end;

	buf_put_u64(out, e->id);
	buf_put_u64(out, e->lease);
	if (rec->type == QREC_RELEASE || rec->type == QREC_BURY ||
	    rec->type == QREC_SETBACK)
		buf_put_u8(out, e->reason);
	buf_put_u8(out, e->outcome);
	switch (rec->type) {
	case QREC_ACK:
		if (e->outcome == QREC_DELETED) {
			buf_put_u32(out, e->dedup_ms);
		} else if (e->outcome == QREC_WAIT) {
			buf_put_i64(out, e->run_at);
		} else if (e->outcome == QREC_MOVED) {
			buf_put_str16(out, e->text, e->text_len);
		} else if (e->outcome == QREC_DONE) {
			buf_put_u32(out, e->dedup_ms);
			buf_put_i64(out, e->keep_ms);
			buf_put_u64(out, e->max_done);
			buf_put_str16(out, e->text, e->text_len);
		}
		break;
	case QREC_RELEASE:
		if (e->outcome == QREC_WAIT) {
			buf_put_u32(out, e->pri);
			buf_put_i64(out, e->run_at);
		}
		break;
	case QREC_FAIL:
		buf_put_str16(out, e->text, e->text_len);
		if (e->outcome == QREC_WAIT)
			buf_put_i64(out, e->run_at);
		break;
	case QREC_SETBACK:
		buf_put_str16(out, e->text, e->text_len);
		if (e->outcome == QREC_WAIT) {
			buf_put_u32(out, e->pri);
			buf_put_i64(out, e->run_at);
		}
		break;
	default:
		break;
	}
	if (rec->type != QREC_ACK && e->outcome == QREC_MOVED)
		buf_put_str16(out, e->to, e->to_len);
}

void
qrec_tube_conf_put(struct buf *out, const struct qrec_tube_conf *c)
{
	buf_put_u8(out, c->set);
	buf_put_u32(out, c->ttr);
	buf_put_u32(out, c->max_attempts);
	buf_put_u32(out, c->backoff_base);
	buf_put_u32(out, c->backoff_cap);
	buf_put_i64(out, c->keep_done);
	buf_put_u8(out, c->lost_lease_immediate ? 1 : 0);
	buf_put_str16(out, c->dead_letter, c->dead_letter_len);
}

bool
qrec_limits_equal(const struct qrec_limits *a, const struct qrec_limits *b)
{
	return a->set == b->set && a->rate == b->rate &&
	    a->per_ms == b->per_ms && a->burst == b->burst &&
	    a->concurrency == b->concurrency;
}

void
qrec_limits_put(struct buf *out, const struct qrec_limits *l)
{
	buf_put_u8(out, l->set);
	buf_put_u32(out, l->rate);
	buf_put_u32(out, l->per_ms);
	buf_put_u32(out, l->burst);
	buf_put_u32(out, l->concurrency);
}

/* A PUT's body up to its payload, included (the part every put type
 * shares): one reservation, then stores (every put goes this way). */
static void
put_head(const struct qrec_put *p, struct buf *out)
{
	size_t n = PUT_FIXED + p->tube_len + p->key_len + p->payload_len;
	uint8_t *d;

	if (!buf_reserve(out, n))
		return;
	d = out->data + out->len;
	le_store_u64(d, p->id);
	le_store_u16(d + 8, (uint16_t)p->tube_len);
	d += 10;
	memcpy(d, p->tube, p->tube_len);
	d += p->tube_len;
	le_store_u32(d, p->pri);
	le_store_u64(d + 4, (uint64_t)p->run_at);
	le_store_u32(d + 12, p->ttr);
	le_store_u32(d + 16, p->max_attempts);
	le_store_u64(d + 20, (uint64_t)p->period);
	le_store_u16(d + 28, (uint16_t)p->key_len);
	d += 30;
	if (p->key_len > 0)
		memcpy(d, p->key, p->key_len);
	d += p->key_len;
	le_store_u32(d, (uint32_t)p->payload_len);
	if (p->payload_len > 0)
		memcpy(d + 4, p->payload, p->payload_len);
	out->len += n;
}

int
qrec_encode(const struct qrec *rec, struct buf *out)
{
	size_t start = out->len;

	if (!qrec_valid(rec))
		return SLUICE_EINVAL;
	switch (rec->type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_T:
	case QREC_PUT_G:
	case QREC_PUT_X: {
		const struct qrec_put *p = &rec->u.put;

		put_head(p, out);
		if (rec->type == QREC_PUT_V || rec->type == QREC_PUT_G ||
		    rec->type == QREC_PUT_X)
			buf_put_u64(out, p->version);
		if (rec->type == QREC_PUT_T)
			buf_put_i64(out, p->throttle_until);
		if (rec->type == QREC_PUT_G || rec->type == QREC_PUT_T ||
		    rec->type == QREC_PUT_X)
			buf_put_str16(out, p->group, p->group_len);
		if (rec->type == QREC_PUT_X && p->nafter > 0) {
			buf_put_u8(out, QREC_TAG_AFTER);
			buf_put_u32(out, 1 + 8 * p->nafter);
			buf_put_u8(out, p->on_parent);
			buf_put(out, p->after, 8 * (size_t)p->nafter);
		}
		if (rec->type == QREC_PUT_X && p->batch_len > 0) {
			buf_put_u8(out, QREC_TAG_BATCH);
			buf_put_u32(out, (uint32_t)p->batch_len);
			buf_put(out, p->batch, p->batch_len);
		}
		break;
	}
	case QREC_TAKE:
	case QREC_TAKE_LEASE:
		buf_put_u64(out, rec->u.take.id);
		buf_put_u64(out, rec->u.take.session);
		buf_put_u8(out, rec->u.take.detached ? 1 : 0);
		if (rec->type == QREC_TAKE_LEASE)
			buf_put_u64(out, rec->u.take.lease);
		break;
	case QREC_ACK:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_UNTAKE:
	case QREC_SETBACK:
		put_end(rec, out);
		break;
	case QREC_ACK_R: {
		struct qrec a = *rec;

		a.type = QREC_ACK;
		put_end(&a, out);
		buf_put_str16(out, rec->u.end.result, rec->u.end.result_len);
		break;
	}
	case QREC_CANCEL:
		buf_put_u64(out, rec->u.cancel.id);
		buf_put_u64(out, rec->u.cancel.lease);
		break;
	case QREC_TOUCH:
		buf_put_u64(out, rec->u.touch.id);
		buf_put_u64(out, rec->u.touch.lease);
		break;
	case QREC_KICK:
		buf_put_u64(out, rec->u.kick.id);
		break;
	case QREC_DELETE:
		buf_put_u64(out, rec->u.del.id);
		buf_put_u32(out, rec->u.del.dedup_ms);
		break;
	case QREC_FLUSH:
		buf_put_str16(out, rec->u.flush.tube, rec->u.flush.tube_len);
		buf_put_u32(out, rec->u.flush.dedup_ms);
		break;
	case QREC_REPLACE:
	case QREC_REPLACE_V: {
		const struct qrec_replace *r = &rec->u.replace;

		buf_put_u64(out, r->id);
		buf_put_u8(out, r->pending ? 1 : 0);
		buf_put_u32(out, r->pri);
		buf_put_i64(out, r->run_at);
		buf_put_u32(out, r->ttr);
		buf_put_u32(out, r->max_attempts);
		buf_put_i64(out, r->period);
		buf_put_blob(out, r->payload, r->payload_len);
		if (rec->type == QREC_REPLACE_V)
			buf_put_u64(out, r->version);
		break;
	}
	case QREC_PAUSE:
		buf_put_str16(out, rec->u.pause.tube, rec->u.pause.tube_len);
		buf_put_i64(out, rec->u.pause.until);
		break;
	case QREC_UPDATE: {
		const struct qrec_update *u = &rec->u.update;

		buf_put_u64(out, u->id);
		buf_put_u32(out, u->pri);
		buf_put_i64(out, u->run_at);
		buf_put_u32(out, u->ttr);
		buf_put_u32(out, u->max_attempts);
		buf_put_u8(out, u->has_payload ? 1 : 0);
		if (u->has_payload)
			buf_put_blob(out, u->payload, u->payload_len);
		break;
	}
	case QREC_DELETE_WHERE:
		buf_put_str16(out, rec->u.where.tube, rec->u.where.tube_len);
		buf_put_u8(out, rec->u.where.state);
		buf_put_i64(out, rec->u.where.before);
		break;
	case QREC_DELETE_AGED:
		buf_put_str16(out, rec->u.where.tube, rec->u.where.tube_len);
		buf_put_u8(out, rec->u.where.states);
		buf_put_u8(out, rec->u.where.by);
		buf_put_i64(out, rec->u.where.before);
		break;
	case QREC_TUBE_SET:
		buf_put_str16(
		    out, rec->u.tube_set.tube, rec->u.tube_set.tube_len);
		qrec_tube_conf_put(out, &rec->u.tube_set.conf);
		break;
	case QREC_TUBE_LIMIT:
		buf_put_str16(
		    out, rec->u.tube_limit.tube, rec->u.tube_limit.tube_len);
		qrec_limits_put(out, &rec->u.tube_limit.lim);
		break;
	case QREC_GROUP_SET:
		buf_put_str16(
		    out, rec->u.group_set.tube, rec->u.group_set.tube_len);
		buf_put_str16(
		    out, rec->u.group_set.group, rec->u.group_set.group_len);
		qrec_limits_put(out, &rec->u.group_set.lim);
		buf_put_u8(out, rec->u.group_set.paused ? 1 : 0);
		break;
	case QREC_TUBE_DELETE:
		buf_put_str16(
		    out, rec->u.tube_delete.tube, rec->u.tube_delete.tube_len);
		buf_put_u8(out, rec->u.tube_delete.force ? 1 : 0);
		break;
	case QREC_SCHED_SET:
	case QREC_SCHED_DELETE:
	case QREC_SCHED_PAUSE:
	case QREC_SCHED_FIRE:
		qrec_sched_encode(&rec->u.sched, rec->type, out);
		break;
	case QREC_BATCH_SET:
	case QREC_BATCH_CLOSE:
	case QREC_BATCH_FIRE:
		qrec_batch_encode(&rec->u.batch, rec->type, out);
		break;
	case QREC_MOVE_HOLD ... QREC_MOVE_KEEP: /* qrec_move.c */
		qrec_move_encode(&rec->u.move, rec->type, out);
		break;
	case QREC_PUTS:
		qrec_puts_encode(&rec->u.puts, out);
		break;
	}
	if (buf_failed(out)) {
		out->len = start < out->len ? start : out->len;
		return SLUICE_ENOMEM;
	}
	return 0;
}

static bool
rd_bool(struct rd *r, bool *out)
{
	uint8_t v = rd_u8(r);

	*out = v == 1;
	return v <= 1;
}

static void
get_end(uint16_t type, struct rd *r, struct qrec_end *e)
{
	e->id = rd_u64(r);
	e->lease = rd_u64(r);
	if (type == QREC_RELEASE || type == QREC_BURY || type == QREC_SETBACK)
		e->reason = rd_u8(r);
	e->outcome = rd_u8(r);
	switch (type) {
	case QREC_ACK:
		if (e->outcome == QREC_DELETED) {
			e->dedup_ms = rd_u32(r);
		} else if (e->outcome == QREC_WAIT) {
			e->run_at = rd_i64(r);
		} else if (e->outcome == QREC_MOVED) {
			e->text = rd_str16(r, QREC_NAME_MAX, &e->text_len);
		} else if (e->outcome == QREC_DONE) {
			e->dedup_ms = rd_u32(r);
			e->keep_ms = rd_i64(r);
			e->max_done = rd_u64(r);
			e->text = rd_str16(r, QREC_RESULT_MAX, &e->text_len);
		}
		break;
	case QREC_RELEASE:
		if (e->outcome == QREC_WAIT) {
			e->pri = rd_u32(r);
			e->run_at = rd_i64(r);
		}
		break;
	case QREC_FAIL:
		e->text = rd_str16(r, QREC_ERROR_MAX, &e->text_len);
		if (e->outcome == QREC_WAIT)
			e->run_at = rd_i64(r);
		break;
	case QREC_SETBACK:
		e->text = rd_str16(r, QREC_ERROR_MAX, &e->text_len);
		if (e->outcome == QREC_WAIT) {
			e->pri = rd_u32(r);
			e->run_at = rd_i64(r);
		}
		break;
	default:
		break;
	}
	if (type != QREC_ACK && e->outcome == QREC_MOVED)
		e->to = rd_str16(r, QREC_NAME_MAX, &e->to_len);
}

void
qrec_tube_conf_get(struct rd *r, struct qrec_tube_conf *c)
{
	uint8_t lost;

	c->set = rd_u8(r);
	c->ttr = rd_u32(r);
	c->max_attempts = rd_u32(r);
	c->backoff_base = rd_u32(r);
	c->backoff_cap = rd_u32(r);
	c->keep_done = rd_i64(r);
	lost = rd_u8(r);
	c->lost_lease_immediate = lost == 1;
	if (lost > 1)
		r->bad = true;
	c->dead_letter = rd_str16(r, QREC_NAME_MAX, &c->dead_letter_len);
}

void
qrec_limits_get(struct rd *r, struct qrec_limits *l)
{
	l->set = rd_u8(r);
	l->rate = rd_u32(r);
	l->per_ms = rd_u32(r);
	l->burst = rd_u32(r);
	l->concurrency = rd_u32(r);
}

int
qrec_decode(uint16_t type, const void *body, size_t len, struct qrec *out)
{
	struct qrec rec;
	struct rd r;
	bool ok = true;

	memset(&rec, 0, sizeof(rec));
	rec.type = type;
	rd_init(&r, body, len);
	switch (type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_T:
	case QREC_PUT_G:
	case QREC_PUT_X: {
		struct qrec_put *p = &rec.u.put;

		p->id = rd_u64(&r);
		p->tube = rd_str16(&r, QREC_NAME_MAX, &p->tube_len);
		p->pri = rd_u32(&r);
		p->run_at = rd_i64(&r);
		p->ttr = rd_u32(&r);
		p->max_attempts = rd_u32(&r);
		p->period = rd_i64(&r);
		p->key = rd_str16(&r, QREC_KEY_MAX, &p->key_len);
		p->payload = rd_blob(&r, QREC_PAYLOAD_MAX, &p->payload_len);
		if (type == QREC_PUT_V || type == QREC_PUT_G ||
		    type == QREC_PUT_X)
			p->version = rd_u64(&r);
		if (type == QREC_PUT_T)
			p->throttle_until = rd_i64(&r);
		if (type == QREC_PUT_G || type == QREC_PUT_T ||
		    type == QREC_PUT_X)
			p->group = rd_str16(&r, QREC_GROUP_MAX, &p->group_len);
		if (type == QREC_PUT_X)
			put_tags_read(&r, p);
		break;
	}
	case QREC_TAKE:
	case QREC_TAKE_LEASE:
		rec.u.take.id = rd_u64(&r);
		rec.u.take.session = rd_u64(&r);
		ok = rd_bool(&r, &rec.u.take.detached);
		if (type == QREC_TAKE_LEASE)
			rec.u.take.lease = rd_u64(&r);
		break;
	case QREC_ACK:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_UNTAKE:
	case QREC_SETBACK:
		get_end(type, &r, &rec.u.end);
		break;
	case QREC_ACK_R:
		get_end(QREC_ACK, &r, &rec.u.end);
		rec.u.end.result =
		    rd_str16(&r, QREC_RESULT_MAX, &rec.u.end.result_len);
		break;
	case QREC_CANCEL:
		rec.u.cancel.id = rd_u64(&r);
		rec.u.cancel.lease = rd_u64(&r);
		break;
	case QREC_TOUCH:
		rec.u.touch.id = rd_u64(&r);
		rec.u.touch.lease = rd_u64(&r);
		break;
	case QREC_KICK:
		rec.u.kick.id = rd_u64(&r);
		break;
	case QREC_DELETE:
		rec.u.del.id = rd_u64(&r);
		rec.u.del.dedup_ms = rd_u32(&r);
		break;
	case QREC_FLUSH:
		rec.u.flush.tube =
		    rd_str16(&r, QREC_NAME_MAX, &rec.u.flush.tube_len);
		rec.u.flush.dedup_ms = rd_u32(&r);
		break;
	case QREC_REPLACE:
	case QREC_REPLACE_V: {
		struct qrec_replace *p = &rec.u.replace;

		p->id = rd_u64(&r);
		ok = rd_bool(&r, &p->pending);
		p->pri = rd_u32(&r);
		p->run_at = rd_i64(&r);
		p->ttr = rd_u32(&r);
		p->max_attempts = rd_u32(&r);
		p->period = rd_i64(&r);
		p->payload = rd_blob(&r, QREC_PAYLOAD_MAX, &p->payload_len);
		if (type == QREC_REPLACE_V)
			p->version = rd_u64(&r);
		break;
	}
	case QREC_PAUSE:
		rec.u.pause.tube =
		    rd_str16(&r, QREC_NAME_MAX, &rec.u.pause.tube_len);
		rec.u.pause.until = rd_i64(&r);
		break;
	case QREC_UPDATE: {
		struct qrec_update *u = &rec.u.update;

		u->id = rd_u64(&r);
		u->pri = rd_u32(&r);
		u->run_at = rd_i64(&r);
		u->ttr = rd_u32(&r);
		u->max_attempts = rd_u32(&r);
		ok = rd_bool(&r, &u->has_payload);
		if (u->has_payload)
			u->payload =
			    rd_blob(&r, QREC_PAYLOAD_MAX, &u->payload_len);
		break;
	}
	case QREC_DELETE_WHERE:
		rec.u.where.tube =
		    rd_str16(&r, QREC_NAME_MAX, &rec.u.where.tube_len);
		rec.u.where.state = rd_u8(&r);
		rec.u.where.before = rd_i64(&r);
		break;
	case QREC_DELETE_AGED:
		rec.u.where.tube =
		    rd_str16(&r, QREC_NAME_MAX, &rec.u.where.tube_len);
		rec.u.where.states = rd_u8(&r);
		rec.u.where.by = rd_u8(&r);
		rec.u.where.before = rd_i64(&r);
		break;
	case QREC_TUBE_SET:
		rec.u.tube_set.tube =
		    rd_str16(&r, QREC_NAME_MAX, &rec.u.tube_set.tube_len);
		qrec_tube_conf_get(&r, &rec.u.tube_set.conf);
		break;
	case QREC_TUBE_LIMIT:
		rec.u.tube_limit.tube =
		    rd_str16(&r, QREC_NAME_MAX, &rec.u.tube_limit.tube_len);
		qrec_limits_get(&r, &rec.u.tube_limit.lim);
		break;
	case QREC_GROUP_SET:
		rec.u.group_set.tube =
		    rd_str16(&r, QREC_NAME_MAX, &rec.u.group_set.tube_len);
		rec.u.group_set.group =
		    rd_str16(&r, QREC_GROUP_MAX, &rec.u.group_set.group_len);
		qrec_limits_get(&r, &rec.u.group_set.lim);
		ok = rd_bool(&r, &rec.u.group_set.paused);
		break;
	case QREC_TUBE_DELETE:
		rec.u.tube_delete.tube =
		    rd_str16(&r, QREC_NAME_MAX, &rec.u.tube_delete.tube_len);
		ok = rd_bool(&r, &rec.u.tube_delete.force);
		break;
	case QREC_SCHED_SET:
	case QREC_SCHED_DELETE:
	case QREC_SCHED_PAUSE:
	case QREC_SCHED_FIRE:
		qrec_sched_decode(&r, type, &rec.u.sched);
		break;
	case QREC_BATCH_SET:
	case QREC_BATCH_CLOSE:
	case QREC_BATCH_FIRE:
		qrec_batch_decode(&r, type, &rec.u.batch);
		break;
	case QREC_MOVE_HOLD ... QREC_MOVE_KEEP: /* qrec_move.c */
		qrec_move_decode(&r, type, &rec.u.move);
		break;
	case QREC_PUTS:
		qrec_puts_decode(&r, &rec.u.puts);
		break;
	default:
		return SLUICE_ECORRUPT;
	}
	if (!ok || rd_failed(&r) || rd_left(&r) != 0 || !qrec_valid(&rec))
		return SLUICE_ECORRUPT;
	*out = rec;
	return 0;
}
