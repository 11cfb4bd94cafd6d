/* qrec_sched - the schedule records (SCHED_SET, SCHED_DELETE,
 * SCHED_PAUSE, SCHED_FIRE): their check, encoding, decoding and text.
 * Layouts at the top of qrec.h; qrec.c calls here for these types.
 *
 * A valid SET names a schedule (1-QREC_SCHED_NAME_MAX bytes of the tube
 * alphabet), a valid tube, a cron expression cron_parse accepts, a zone
 * name tz_name_valid accepts (whether the zone exists is the deciding
 * node's question, never the log's), a catch-up mode, ttr >= 1. A FIRE's
 * slot is >= 1; its put, when it has one, is a valid PUT with a key and
 * no period. Pure, like qrec.c. */
#include <inttypes.h>
#include <string.h>

#include "queue/qrec.h"
#include "util/cron.h"
#include "util/tz.h"

static bool
time_ok(int64_t t)
{
	return t >= 0 && t <= QREC_TIME_MAX;
}

static bool
name_ok(const char *p, size_t len)
{
	return len <= QREC_SCHED_NAME_MAX && qrec_tube_valid(p, len);
}

bool
qrec_sched_valid(const struct qrec_sched *s, uint16_t type)
{
	struct cron c;
	struct qrec put;

	if (!name_ok(s->name, s->name_len))
		return false;
	switch (type) {
	case QREC_SCHED_SET:
		return qrec_tube_valid(s->tube, s->tube_len) &&
		    s->cron_len > 0 && s->cron_len <= CRON_EXPR_MAX &&
		    cron_parse(s->cron, s->cron_len, &c, NULL, 0) == 0 &&
		    tz_name_valid(s->tz, s->tz_len) &&
		    s->catch_up < QREC_CATCH_END_ && s->ttr != 0 &&
		    time_ok(s->from) &&
		    (s->payload != NULL || s->payload_len == 0) &&
		    s->payload_len <= QREC_PAYLOAD_MAX;
	case QREC_SCHED_DELETE:
		return true;
	case QREC_SCHED_PAUSE:
		return time_ok(s->from);
	case QREC_SCHED_FIRE:
		if (s->slot < 1 || !time_ok(s->slot))
			return false;
		if (!s->has_put)
			return true;
		memset(&put, 0, sizeof(put));
		put.type = QREC_PUT;
		put.u.put = s->put;
		return s->put.key_len > 0 && s->put.period == 0 &&
		    qrec_valid(&put);
	default:
		return false;
	}
}

void
qrec_sched_encode(const struct qrec_sched *s, uint16_t type, struct buf *out)
{
	const struct qrec_put *p = &s->put;

	buf_put_str16(out, s->name, s->name_len);
	switch (type) {
	case QREC_SCHED_SET:
		buf_put_str16(out, s->tube, s->tube_len);
		buf_put_str16(out, s->cron, s->cron_len);
		buf_put_str16(out, s->tz, s->tz_len);
		buf_put_u8(out, s->catch_up);
		buf_put_u8(out, s->paused ? 1 : 0);
		buf_put_u32(out, s->pri);
		buf_put_u32(out, s->ttr);
		buf_put_u32(out, s->max_attempts);
		buf_put_i64(out, s->from);
		buf_put_blob(out, s->payload, s->payload_len);
		break;
	case QREC_SCHED_PAUSE:
		buf_put_u8(out, s->paused ? 1 : 0);
		buf_put_i64(out, s->from);
		break;
	case QREC_SCHED_FIRE:
		buf_put_i64(out, s->slot);
		buf_put_u8(out, s->has_put ? 1 : 0);
		if (!s->has_put)
			break;
		buf_put_u64(out, p->id);
		buf_put_str16(out, p->tube, p->tube_len);
		buf_put_u32(out, p->pri);
		buf_put_i64(out, p->run_at);
		buf_put_u32(out, p->ttr);
		buf_put_u32(out, p->max_attempts);
		buf_put_i64(out, p->period);
		buf_put_str16(out, p->key, p->key_len);
		buf_put_blob(out, p->payload, p->payload_len);
		break;
	default:
		break;
	}
}

static bool
rd_flag(struct rd *r)
{
	uint8_t v = rd_u8(r);

	if (v > 1)
		r->bad = true;
	return v == 1;
}

void
qrec_sched_decode(struct rd *r, uint16_t type, struct qrec_sched *s)
{
	struct qrec_put *p = &s->put;

	s->name = rd_str16(r, QREC_SCHED_NAME_MAX, &s->name_len);
	switch (type) {
	case QREC_SCHED_SET:
		s->tube = rd_str16(r, QREC_NAME_MAX, &s->tube_len);
		s->cron = rd_str16(r, CRON_EXPR_MAX, &s->cron_len);
		s->tz = rd_str16(r, TZ_NAME_MAX, &s->tz_len);
		s->catch_up = rd_u8(r);
		s->paused = rd_flag(r);
		s->pri = rd_u32(r);
		s->ttr = rd_u32(r);
		s->max_attempts = rd_u32(r);
		s->from = rd_i64(r);
		s->payload = rd_blob(r, QREC_PAYLOAD_MAX, &s->payload_len);
		break;
	case QREC_SCHED_PAUSE:
		s->paused = rd_flag(r);
		s->from = rd_i64(r);
		break;
	case QREC_SCHED_FIRE:
		s->slot = rd_i64(r);
		s->has_put = rd_flag(r);
		if (!s->has_put)
			break;
		p->id = rd_u64(r);
		p->tube = rd_str16(r, QREC_NAME_MAX, &p->tube_len);
		p->pri = rd_u32(r);
		p->run_at = rd_i64(r);
		p->ttr = rd_u32(r);
		p->max_attempts = rd_u32(r);
		p->period = rd_i64(r);
		p->key = rd_str16(r, QREC_KEY_MAX, &p->key_len);
		p->payload = rd_blob(r, QREC_PAYLOAD_MAX, &p->payload_len);
		break;
	default:
		break;
	}
}

static const char *const catch_names[QREC_CATCH_END_] = { "none", "one",
	"all" };

void
qrec_sched_format(const struct qrec_sched *s, uint16_t type, struct buf *out)
{
	buf_printf(out, " name=");
	buf_put(out, s->name, s->name_len);
	switch (type) {
	case QREC_SCHED_SET:
		buf_printf(out, " tube=%.*s cron='%.*s' tz=%.*s catch_up=%s%s",
		    (int)s->tube_len, s->tube, (int)s->cron_len, s->cron,
		    (int)s->tz_len, s->tz,
		    s->catch_up < QREC_CATCH_END_ ? catch_names[s->catch_up]
		                                  : "?",
		    s->paused ? " paused" : "");
		buf_printf(out,
		    " pri=%" PRIu32 " ttr=%" PRIu32 " max_attempts=%" PRIu32
		    " from=%" PRId64 " payload=%zu",
		    s->pri, s->ttr, s->max_attempts, s->from, s->payload_len);
		break;
	case QREC_SCHED_PAUSE:
		buf_printf(out, " %s from=%" PRId64,
		    s->paused ? "paused" : "resumed", s->from);
		break;
	case QREC_SCHED_FIRE:
		buf_printf(out, " slot=%" PRId64, s->slot);
		if (s->has_put)
			buf_printf(out, " id=%" PRIu64 " key=%.*s", s->put.id,
			    (int)s->put.key_len, s->put.key);
		else
			buf_printf(out, " skipped");
		break;
	default:
		break;
	}
}
