/* qrec_format.c - the text form of a queue record, for `sluice-log dump`
 * and the tests' messages: its type, then each field as name=value, keys
 * and texts escaped, payloads by their size.
 *
 * The binary form (encode, decode, the validity rules) is qrec.c's. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "queue/qrec.h"
#include "sluice.h"

static const char *const reason_names[QREC_REASON_END_] = {
	"client",
	"ttr",
	"session",
	"restart",
};

static const char *const outcome_names[QREC_OUTCOME_END_] = {
	"deleted",
	"wait",
	"buried",
	"moved",
	"replaced",
	"done",
};

/* The states a DELETE_WHERE may name (enum queue_state's numbers). */
static const char *
where_state_name(uint8_t state)
{
	switch (state) {
	case 1:
		return "ready";
	case 2:
		return "delayed";
	case 3:
		return "taken";
	case 4:
		return "buried";
	case 5:
		return "done";
	default:
		return "?";
	}
}

void
qrec_tube_conf_format(const struct qrec_tube_conf *c, struct buf *out)
{
	if (c->set == 0)
		buf_printf(out, " (defaults)");
	if (c->set & QREC_TS_TTR)
		buf_printf(out, " ttr=%" PRIu32, c->ttr);
	if (c->set & QREC_TS_MAX_ATTEMPTS)
		buf_printf(out, " max_attempts=%" PRIu32, c->max_attempts);
	if (c->set & QREC_TS_BACKOFF)
		buf_printf(out, " backoff=%" PRIu32 ",%" PRIu32,
		    c->backoff_base, c->backoff_cap);
	if (c->set & QREC_TS_KEEP_DONE)
		buf_printf(out, " keep_done=%" PRId64, c->keep_done);
	if (c->set & QREC_TS_LOST_LEASE)
		buf_printf(out, " lost_lease=%s",
		    c->lost_lease_immediate ? "immediate" : "backoff");
	if (c->set & QREC_TS_DEAD_LETTER) {
		buf_printf(out, " dead_letter=");
		buf_put(out, c->dead_letter, c->dead_letter_len);
	}
}

void
qrec_limits_format(const struct qrec_limits *l, struct buf *out)
{
	if (l->set == 0)
		buf_printf(out, " (none)");
	if (l->set & QREC_LIM_RATE)
		buf_printf(out,
		    " rate=%" PRIu32 "/%" PRIu32 "ms burst=%" PRIu32, l->rate,
		    l->per_ms, l->burst);
	if (l->set & QREC_LIM_CONCURRENCY)
		buf_printf(out, " concurrency=%" PRIu32, l->concurrency);
}

int
qrec_format(const struct qrec *rec, struct buf *out)
{
	const struct qrec_end *e = &rec->u.end;

	buf_printf(out, "%s", qrec_type_name(rec->type));
	switch (rec->type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_T:
	case QREC_PUT_G:
	case QREC_PUT_X: {
		const struct qrec_put *p = &rec->u.put;

		buf_printf(out, " id=%" PRIu64 " tube=", p->id);
		buf_put(out, p->tube, p->tube_len);
		buf_printf(out,
		    " pri=%" PRIu32 " run_at=%" PRId64 " ttr=%" PRIu32
		    " max_attempts=%" PRIu32 " period=%" PRId64,
		    p->pri, p->run_at, p->ttr, p->max_attempts, p->period);
		if (p->key_len > 0) {
			buf_printf(out, " key=");
			buf_put_escaped(out, p->key, p->key_len);
		}
		if (p->version != 0)
			buf_printf(out, " version=%" PRIu64, p->version);
		if (p->throttle_until != 0)
			buf_printf(
			    out, " throttle_until=%" PRId64, p->throttle_until);
		if (p->group_len > 0) {
			buf_printf(out, " group=");
			buf_put(out, p->group, p->group_len);
		}
		for (uint32_t i = 0; i < p->nafter; i++) {
			uint64_t id = 0;

			for (int b = 7; b >= 0; b--)
				id = id << 8 | p->after[8 * i + (size_t)b];
			buf_printf(out, "%s%" PRIu64, i ? "," : " after=", id);
		}
		if (p->nafter > 0)
			buf_printf(out, " on_parent_failure=%s",
			    p->on_parent == 0       ? "fail"
			        : p->on_parent == 1 ? "ignore"
			                            : "cancel");
		if (p->batch_len > 0) {
			buf_printf(out, " batch=");
			buf_put(out, p->batch, p->batch_len);
		}
		buf_printf(out, " payload=%zuB", p->payload_len);
		break;
	}
	case QREC_TAKE:
	case QREC_TAKE_LEASE:
		buf_printf(out, " id=%" PRIu64 " session=%" PRIu64 "%s",
		    rec->u.take.id, rec->u.take.session,
		    rec->u.take.detached ? " detached" : "");
		if (rec->u.take.lease != 0)
			buf_printf(out, " lease=%" PRIu64, rec->u.take.lease);
		break;
	case QREC_ACK_R:
		buf_printf(out, " id=%" PRIu64 " lease=%" PRIu64 " -> %s",
		    e->id, e->lease,
		    e->outcome == QREC_MOVED ? "moved" : "deleted");
		if (e->outcome == QREC_MOVED) {
			buf_printf(out, " to=");
			buf_put(out, e->text, e->text_len);
		} else {
			buf_printf(out, " dedup_ms=%" PRIu32, e->dedup_ms);
		}
		buf_printf(out, " kept_result=");
		buf_put_escaped(out, e->result, e->result_len);
		break;
	case QREC_ACK:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_UNTAKE:
	case QREC_SETBACK:
		buf_printf(
		    out, " id=%" PRIu64 " lease=%" PRIu64, e->id, e->lease);
		if (e->reason < QREC_REASON_END_ && rec->type != QREC_UNTAKE)
			buf_printf(out, " by=%s", reason_names[e->reason]);
		if (e->outcome < QREC_OUTCOME_END_)
			buf_printf(out, " -> %s", outcome_names[e->outcome]);
		if (e->outcome == QREC_WAIT && rec->type != QREC_UNTAKE) {
			buf_printf(out, " run_at=%" PRId64, e->run_at);
			if (rec->type == QREC_RELEASE ||
			    rec->type == QREC_SETBACK)
				buf_printf(out, " pri=%" PRIu32, e->pri);
		}
		if ((e->outcome == QREC_DELETED || e->outcome == QREC_DONE) &&
		    rec->type == QREC_ACK)
			buf_printf(out, " dedup_ms=%" PRIu32, e->dedup_ms);
		if (e->outcome == QREC_DONE) {
			buf_printf(out,
			    " keep_ms=%" PRId64 " max_done=%" PRIu64 " result=",
			    e->keep_ms, e->max_done);
			buf_put_escaped(out, e->text, e->text_len);
		}
		if (rec->type == QREC_ACK && e->outcome == QREC_MOVED) {
			buf_printf(out, " to=");
			buf_put(out, e->text, e->text_len);
		}
		if (rec->type == QREC_FAIL || rec->type == QREC_SETBACK) {
			buf_printf(out, " error=");
			buf_put_escaped(out, e->text, e->text_len);
		}
		if (rec->type != QREC_ACK && e->outcome == QREC_MOVED) {
			buf_printf(out, " to=");
			buf_put(out, e->to, e->to_len);
		}
		break;
	case QREC_TOUCH:
		buf_printf(out, " id=%" PRIu64 " lease=%" PRIu64,
		    rec->u.touch.id, rec->u.touch.lease);
		break;
	case QREC_KICK:
		buf_printf(out, " id=%" PRIu64, rec->u.kick.id);
		break;
	case QREC_CANCEL:
		buf_printf(out, " id=%" PRIu64 " lease=%" PRIu64,
		    rec->u.cancel.id, rec->u.cancel.lease);
		break;
	case QREC_DELETE:
		buf_printf(out, " id=%" PRIu64 " dedup_ms=%" PRIu32,
		    rec->u.del.id, rec->u.del.dedup_ms);
		break;
	case QREC_FLUSH:
		buf_printf(out, " tube=");
		buf_put(out, rec->u.flush.tube, rec->u.flush.tube_len);
		buf_printf(out, " dedup_ms=%" PRIu32, rec->u.flush.dedup_ms);
		break;
	case QREC_REPLACE:
	case QREC_REPLACE_V: {
		const struct qrec_replace *r = &rec->u.replace;

		buf_printf(out,
		    " id=%" PRIu64 "%s pri=%" PRIu32 " run_at=%" PRId64
		    " ttr=%" PRIu32 " max_attempts=%" PRIu32 " period=%" PRId64,
		    r->id, r->pending ? " pending" : "", r->pri, r->run_at,
		    r->ttr, r->max_attempts, r->period);
		if (r->version != 0)
			buf_printf(out, " version=%" PRIu64, r->version);
		buf_printf(out, " payload=%zuB", r->payload_len);
		break;
	}
	case QREC_PAUSE:
		buf_printf(out, " tube=");
		buf_put(out, rec->u.pause.tube, rec->u.pause.tube_len);
		buf_printf(out, " until=%" PRId64, rec->u.pause.until);
		break;
	case QREC_UPDATE: {
		const struct qrec_update *u = &rec->u.update;

		buf_printf(out,
		    " id=%" PRIu64 " pri=%" PRIu32 " run_at=%" PRId64
		    " ttr=%" PRIu32 " max_attempts=%" PRIu32,
		    u->id, u->pri, u->run_at, u->ttr, u->max_attempts);
		if (u->has_payload)
			buf_printf(out, " payload=%zuB", u->payload_len);
		break;
	}
	case QREC_DELETE_WHERE:
		buf_printf(out, " tube=");
		buf_put(out, rec->u.where.tube, rec->u.where.tube_len);
		buf_printf(out, " state=%s before=%" PRId64,
		    where_state_name(rec->u.where.state), rec->u.where.before);
		break;
	case QREC_DELETE_AGED: {
		const char *sep = "";

		buf_printf(out, " tube=");
		buf_put(out, rec->u.where.tube, rec->u.where.tube_len);
		buf_printf(out, " states=");
		for (uint8_t st = 1; st <= 5; st++)
			if (rec->u.where.states & QREC_STATE_BIT(st)) {
				buf_printf(
				    out, "%s%s", sep, where_state_name(st));
				sep = ",";
			}
		buf_printf(out, " by=%s before=%" PRId64,
		    rec->u.where.by == QREC_BY_UPDATED ? "updated" : "created",
		    rec->u.where.before);
		break;
	}
	case QREC_TUBE_SET:
		buf_printf(out, " tube=");
		buf_put(out, rec->u.tube_set.tube, rec->u.tube_set.tube_len);
		qrec_tube_conf_format(&rec->u.tube_set.conf, out);
		break;
	case QREC_TUBE_DELETE:
		buf_printf(out, " tube=");
		buf_put(
		    out, rec->u.tube_delete.tube, rec->u.tube_delete.tube_len);
		if (rec->u.tube_delete.force)
			buf_printf(out, " force");
		break;
	case QREC_TUBE_LIMIT:
		buf_printf(out, " tube=");
		buf_put(
		    out, rec->u.tube_limit.tube, rec->u.tube_limit.tube_len);
		qrec_limits_format(&rec->u.tube_limit.lim, out);
		break;
	case QREC_GROUP_SET:
		buf_printf(out, " tube=");
		buf_put(out, rec->u.group_set.tube, rec->u.group_set.tube_len);
		if (rec->u.group_set.group_len == 0) {
			buf_printf(out, " every group");
		} else {
			buf_printf(out, " group=");
			buf_put(out, rec->u.group_set.group,
			    rec->u.group_set.group_len);
		}
		qrec_limits_format(&rec->u.group_set.lim, out);
		if (rec->u.group_set.paused)
			buf_printf(out, " paused");
		break;
	case QREC_SCHED_SET:
	case QREC_SCHED_DELETE:
	case QREC_SCHED_PAUSE:
	case QREC_SCHED_FIRE:
		qrec_sched_format(&rec->u.sched, rec->type, out);
		break;
	case QREC_BATCH_SET:
	case QREC_BATCH_CLOSE:
	case QREC_BATCH_FIRE:
		qrec_batch_format(&rec->u.batch, rec->type, out);
		break;
	case QREC_MOVE_HOLD ... QREC_MOVE_KEEP:
		qrec_move_format(&rec->u.move, rec->type, out);
		break;
	case QREC_PUTS:
		qrec_puts_format(&rec->u.puts, out);
		break;
	default:
		break;
	}
	return buf_failed(out) ? SLUICE_ENOMEM : 0;
}
