/* sched - the queue's schedules (sched.h): a table in name order, their
 * decisions, the apply of their records and their snapshot entry.
 *
 * The table is an array of pointers sorted by name (binary search; a set
 * or delete moves the tail: schedules are few, QUEUE_SCHED_MAX). Each
 * schedule is one allocation: struct sched, then name, tube, cron text
 * and zone (each with its NUL), then the payload.
 *
 * Transitions (records in capitals):
 *   (none)  -> active | paused    SCHED_SET (replaces one of that name,
 *                                 keeping its counts and creation time)
 *   active  -> paused             SCHED_PAUSE paused
 *   paused  -> active             SCHED_PAUSE resumed: from = its time
 *   active  -> active             SCHED_FIRE: from = slot; with a put,
 *                                 the task is put as a PUT would
 *   any     -> (gone)             SCHED_DELETE
 * A FIRE is valid only for an active schedule and a slot after `from`:
 * the log cannot hold a slot twice.
 *
 * Snapshot entry SCHED (50), after the THROTTLE entries, one per
 * schedule in name order: i64 created_at, i64 updated_at, i64 last_slot,
 * u64 last_id, u64 fired, u64 skipped, then a SCHED_SET body (qrec.h)
 * whose `from` is the schedule's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/decide.h"
#include "queue/qstate.h"
#include "queue/sched.h"
#include "sluice.h"
#include "util/tz.h"

static const char *const catch_names[QREC_CATCH_END_] = { "none", "one",
	"all" };

const char *
queue_sched_catch_name(uint8_t mode)
{
	return mode < QREC_CATCH_END_ ? catch_names[mode] : "?";
}

int
queue_sched_catch_parse(const char *s, size_t len)
{
	for (int i = 0; i < QREC_CATCH_END_; i++)
		if (strlen(catch_names[i]) == len &&
		    memcmp(s, catch_names[i], len) == 0)
			return i;
	return -1;
}

size_t
queue_sched_key(const char *name, size_t len, int64_t slot, char *buf)
{
	int64_t s = tz_floor_div(slot, 1000), days = tz_floor_div(s, 86400);
	int64_t y;
	unsigned m, d;
	int sec = (int)(s - days * 86400);

	tz_civil(days, &y, &m, &d);
	memcpy(buf, name, len);
	return len +
	    (size_t)snprintf(buf + len, QUEUE_SCHED_KEY_MAX - len,
	        "@%04lld-%02u-%02uT%02d:%02dZ", (long long)y, m, d, sec / 3600,
	        sec / 60 % 60);
}

/* ---- the table ------------------------------------------------------- */

/* The index of `name`, or where it would go (*found false). */
static size_t
sched_pos(const struct queue *q, const char *name, size_t len, bool *found)
{
	size_t lo = 0, hi = q->nsched;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct sched *s = q->scheds[mid];
		size_t n = s->name_len < len ? s->name_len : len;
		int c = memcmp(sched_name(s), name, n);

		if (c == 0)
			c = s->name_len < len ? -1 : s->name_len > len ? 1 : 0;
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

struct sched *
queue_sched_find(const struct queue *q, const char *name, size_t len)
{
	bool found;
	size_t i = sched_pos(q, name, len, &found);

	return found ? q->scheds[i] : NULL;
}

size_t
queue_sched_count(const struct queue *q)
{
	return q->nsched;
}

struct sched *
queue_sched_at(const struct queue *q, size_t i)
{
	return i < q->nsched ? q->scheds[i] : NULL;
}

uint64_t
queue_sched_gen(const struct queue *q)
{
	return q->sched_gen;
}

size_t
queue_sched_mem(const struct sched *s)
{
	return sizeof(*s) + s->name_len + s->tube_len + s->cron_len +
	    s->tz_len + 4 + s->payload_len + 16; /* malloc's own */
}

void
qs_sched_fini(struct queue *q)
{
	for (uint32_t i = 0; i < q->nsched; i++)
		free(q->scheds[i]);
	free(q->scheds);
	q->scheds = NULL;
	q->nsched = q->sched_cap = 0;
}

static void
put_str(char **p, const char *s, size_t len)
{
	memcpy(*p, s, len);
	(*p)[len] = '\0';
	*p += len + 1;
}

/* A schedule from a SET record's fields; NULL when out of memory. */
static struct sched *
sched_new(const struct qrec_sched *r)
{
	size_t n = sizeof(struct sched) + r->name_len + r->tube_len +
	    r->cron_len + r->tz_len + 4 + r->payload_len;
	struct sched *s = malloc(n);
	char *p;

	if (s == NULL)
		return NULL;
	memset(s, 0, sizeof(*s));
	if (cron_parse(r->cron, r->cron_len, &s->cron, NULL, 0) != 0) {
		free(s);
		return NULL;
	}
	p = (char *)(s + 1);
	put_str(&p, r->name, r->name_len);
	put_str(&p, r->tube, r->tube_len);
	put_str(&p, r->cron, r->cron_len);
	put_str(&p, r->tz, r->tz_len);
	if (r->payload_len > 0)
		memcpy(p, r->payload, r->payload_len);
	s->name_len = (uint8_t)r->name_len;
	s->tube_len = (uint8_t)r->tube_len;
	s->cron_len = (uint8_t)r->cron_len;
	s->tz_len = (uint8_t)r->tz_len;
	s->payload_len = (uint32_t)r->payload_len;
	s->catch_up = r->catch_up;
	s->paused = r->paused;
	s->pri = r->pri;
	s->ttr = r->ttr;
	s->max_attempts = r->max_attempts;
	s->from = r->from;
	return s;
}

/* Puts `s` at index i (a new name). */
static int
sched_insert(struct queue *q, size_t i, struct sched *s)
{
	if (q->nsched == q->sched_cap) {
		uint32_t cap = q->sched_cap ? q->sched_cap * 2 : 8;
		struct sched **v = realloc(q->scheds, cap * sizeof(*v));

		if (v == NULL)
			return SLUICE_ENOMEM;
		q->scheds = v;
		q->sched_cap = cap;
	}
	memmove(q->scheds + i + 1, q->scheds + i,
	    (q->nsched - i) * sizeof(*q->scheds));
	q->scheds[i] = s;
	q->nsched++;
	return 0;
}

/* ---- decide ---------------------------------------------------------- */

static int
fail(char *err, size_t errlen, int rc, const char *text)
{
	if (errlen > 0)
		snprintf(err, errlen, "%s", text);
	return rc;
}

static bool
name_ok(const char *name, size_t len)
{
	return len <= QREC_SCHED_NAME_MAX && qrec_tube_valid(name, len);
}

int
queue_decide_sched_set(struct queue *q, int64_t now,
    const struct queue_sched_req *req, struct qrec *out, char *err,
    size_t errlen)
{
	struct qrec_sched *r = &out->u.sched;
	struct cron c;
	uint32_t ttr = req->ttr ? req->ttr : q->cfg.default_ttr_ms;
	int rc;

	if (errlen > 0)
		err[0] = '\0';
	if (!name_ok(req->name, req->name_len))
		return fail(err, errlen, SLUICE_ESCHED,
		    "a schedule's name is 1-64 bytes of [A-Za-z0-9_.:/-]");
	if (!qrec_tube_valid(req->tube, req->tube_len))
		return fail(err, errlen, SLUICE_ETUBE,
		    "bad tube name (1-200 bytes of [A-Za-z0-9_.:/-])");
	if ((rc = cron_parse(req->cron, req->cron_len, &c, err, errlen)) != 0)
		return SLUICE_ESCHED;
	if (req->tz_len > 0 && !tz_name_valid(req->tz, req->tz_len))
		return fail(err, errlen, SLUICE_ESCHED, "bad time zone name");
	if (req->catch_up >= QREC_CATCH_END_)
		return fail(
		    err, errlen, SLUICE_EINVAL, "catch-up is none, one or all");
	if (ttr == 0 || ttr > q->cfg.max_ttr_ms)
		return fail(err, errlen, SLUICE_EINVAL, "ttr out of range");
	if (req->payload_len > q->cfg.max_payload)
		return fail(err, errlen, SLUICE_ETOOBIG, "payload too large");
	if (queue_sched_find(q, req->name, req->name_len) == NULL &&
	    q->nsched >= QUEUE_SCHED_MAX)
		return fail(err, errlen, SLUICE_ELIMIT,
		    "the server holds 10000 schedules already");
	queue_tick(q, now);
	memset(out, 0, sizeof(*out));
	out->type = QREC_SCHED_SET;
	r->name = req->name;
	r->name_len = req->name_len;
	r->tube = req->tube;
	r->tube_len = req->tube_len;
	r->cron = req->cron;
	r->cron_len = req->cron_len;
	r->tz = req->tz_len > 0 ? req->tz : "UTC";
	r->tz_len = req->tz_len > 0 ? req->tz_len : 3;
	r->catch_up = req->catch_up;
	r->paused = req->paused;
	r->pri = req->pri;
	r->ttr = ttr;
	r->max_attempts = req->max_attempts;
	r->from = now;
	r->payload = req->payload_len > 0 ? req->payload : "";
	r->payload_len = req->payload_len;
	return 0;
}

int
queue_decide_sched_delete(
    struct queue *q, const char *name, size_t len, struct qrec *out)
{
	if (!name_ok(name, len))
		return SLUICE_ESCHED;
	if (queue_sched_find(q, name, len) == NULL)
		return SLUICE_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	out->type = QREC_SCHED_DELETE;
	out->u.sched.name = name;
	out->u.sched.name_len = len;
	return 0;
}

int
queue_decide_sched_pause(struct queue *q, int64_t now, const char *name,
    size_t len, bool paused, struct qrec *out)
{
	const struct sched *s;

	if (!name_ok(name, len))
		return SLUICE_ESCHED;
	if ((s = queue_sched_find(q, name, len)) == NULL)
		return SLUICE_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	if (s->paused == paused)
		return 0; /* QREC_NONE */
	out->type = QREC_SCHED_PAUSE;
	out->u.sched.name = name;
	out->u.sched.name_len = len;
	out->u.sched.paused = paused;
	out->u.sched.from = paused ? s->from : (now > s->from ? now : s->from);
	return 0;
}

int
queue_decide_sched_fire(struct queue *q, int64_t now, const char *name,
    size_t len, int64_t slot, bool put, char *keybuf, struct qrec *out,
    uint64_t *put_id)
{
	const struct sched *s = queue_sched_find(q, name, len);
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec pr;
	int rc;

	if (s == NULL)
		return SLUICE_ENOTFOUND;
	if (s->paused || slot <= s->from || slot > QREC_TIME_MAX)
		return SLUICE_ESTATE;
	memset(out, 0, sizeof(*out));
	out->type = QREC_SCHED_FIRE;
	out->u.sched.name = sched_name(s);
	out->u.sched.name_len = s->name_len;
	out->u.sched.slot = slot;
	*put_id = 0;
	if (!put)
		return 0;
	queue_put_req_init(&req);
	req.tube = sched_tube(s);
	req.tube_len = s->tube_len;
	req.payload = sched_payload(s);
	req.payload_len = s->payload_len;
	req.pri = s->pri;
	req.ttr_ms = s->ttr;
	req.max_attempts = s->max_attempts;
	req.key = keybuf;
	req.key_len = queue_sched_key(sched_name(s), s->name_len, slot, keybuf);
	if ((rc = queue_decide_put(q, now, &req, &pr, &res)) != 0)
		return rc;
	if (pr.type != QREC_PUT)
		return 0; /* the key is taken: the slot is skipped */
	out->u.sched.has_put = true;
	out->u.sched.put = pr.u.put;
	*put_id = pr.u.put.id;
	return 0;
}

/* ---- apply ----------------------------------------------------------- */

static int
apply_set(struct queue *q, int64_t time, const struct qrec_sched *r)
{
	bool found;
	size_t i = sched_pos(q, r->name, r->name_len, &found);
	struct sched *s = sched_new(r), *old;
	int rc;

	if (s == NULL)
		return SLUICE_ENOMEM;
	s->created_at = time;
	s->updated_at = time;
	if (found) {
		old = q->scheds[i];
		s->created_at = old->created_at;
		s->last_slot = old->last_slot;
		s->last_id = old->last_id;
		s->fired = old->fired;
		s->skipped = old->skipped;
		if (old->from > s->from)
			s->from = old->from; /* a slot decided stays so */
		q->scheds[i] = s;
		free(old);
		return 0;
	}
	if ((rc = sched_insert(q, i, s)) != 0)
		free(s);
	return rc;
}

static int
apply_delete(struct queue *q, const struct qrec_sched *r)
{
	bool found;
	size_t i = sched_pos(q, r->name, r->name_len, &found);

	if (!found)
		return SLUICE_ECORRUPT;
	free(q->scheds[i]);
	memmove(q->scheds + i, q->scheds + i + 1,
	    (q->nsched - i - 1) * sizeof(*q->scheds));
	q->nsched--;
	return 0;
}

static int
apply_fire(struct queue *q, int64_t time, const struct qrec_sched *r)
{
	struct sched *s = queue_sched_find(q, r->name, r->name_len);
	int rc;

	if (s == NULL || s->paused || r->slot <= s->from)
		return SLUICE_ECORRUPT;
	if (r->has_put) {
		if (r->put.tube_len != s->tube_len ||
		    memcmp(r->put.tube, sched_tube(s), s->tube_len) != 0)
			return SLUICE_ECORRUPT;
		if ((rc = qs_apply_put(q, time, &r->put)) != 0)
			return rc;
		s->fired++;
		s->last_slot = r->slot;
		s->last_id = r->put.id;
	} else {
		s->skipped++;
	}
	s->from = r->slot;
	return 0;
}

int
qs_sched_apply(struct queue *q, int64_t time, const struct qrec *rec)
{
	const struct qrec_sched *r = &rec->u.sched;
	struct sched *s;
	int rc;

	switch (rec->type) {
	case QREC_SCHED_SET:
		rc = apply_set(q, time, r);
		break;
	case QREC_SCHED_DELETE:
		rc = apply_delete(q, r);
		break;
	case QREC_SCHED_PAUSE:
		s = queue_sched_find(q, r->name, r->name_len);
		if (s == NULL || s->paused == r->paused || r->from < s->from)
			return SLUICE_ECORRUPT;
		s->paused = r->paused;
		s->from = r->from;
		s->updated_at = time;
		rc = 0;
		break;
	case QREC_SCHED_FIRE:
		rc = apply_fire(q, time, r);
		break;
	default:
		return SLUICE_ECORRUPT;
	}
	if (rc == 0) {
		q->sched_gen++;
		if ((s = queue_sched_find(q, r->name, r->name_len)) != NULL)
			s->next_at = 0;
	}
	return rc;
}

const char *
qs_sched_check(const struct queue *q)
{
	struct cron c;

	if (q->nsched > q->sched_cap || q->nsched > QUEUE_SCHED_MAX)
		return "schedules: more than the table holds";
	for (uint32_t i = 0; i < q->nsched; i++) {
		const struct sched *s = q->scheds[i], *p;
		bool found;

		if (!name_ok(sched_name(s), s->name_len))
			return "schedules: a bad name";
		if (sched_pos(q, sched_name(s), s->name_len, &found) != i ||
		    !found)
			return "schedules: not in name order";
		if (i > 0) {
			p = q->scheds[i - 1];
			if (p->name_len == s->name_len &&
			    memcmp(sched_name(p), sched_name(s), s->name_len) ==
			        0)
				return "schedules: a name twice";
		}
		if (cron_parse(sched_cron(s), s->cron_len, &c, NULL, 0) != 0 ||
		    c.min != s->cron.min || c.hour != s->cron.hour ||
		    c.dom != s->cron.dom || c.mon != s->cron.mon ||
		    c.dow != s->cron.dow || c.flags != s->cron.flags)
			return "schedules: an expression that is not its own";
		if (s->last_slot > s->from ||
		    (s->last_slot == 0) != (s->last_id == 0) ||
		    (s->last_slot != 0 && s->fired == 0))
			return "schedules: a last slot after its decisions";
		if (s->created_at > s->updated_at ||
		    s->catch_up >= QREC_CATCH_END_ ||
		    queue_sched_mem(s) - s->payload_len > 512)
			return "schedules: a field out of range";
	}
	return NULL;
}

/* One line per schedule, for queue_dump. */
void
qs_sched_dump(const struct queue *q, struct buf *out)
{
	for (uint32_t i = 0; i < q->nsched; i++) {
		const struct sched *s = q->scheds[i];

		buf_printf(out,
		    "schedule %s tube=%s cron='%s' tz=%s catch_up=%s%s "
		    "pri=%" PRIu32 " ttr=%" PRIu32 " max_attempts=%" PRIu32
		    " from=%" PRId64 " created=%" PRId64 " updated=%" PRId64
		    " last_slot=%" PRId64 " last_id=%" PRIu64 " fired=%" PRIu64
		    " skipped=%" PRIu64 " payload=%" PRIu32 "\n",
		    sched_name(s), sched_tube(s), sched_cron(s), sched_tz(s),
		    queue_sched_catch_name(s->catch_up),
		    s->paused ? " paused" : "", s->pri, s->ttr, s->max_attempts,
		    s->from, s->created_at, s->updated_at, s->last_slot,
		    s->last_id, s->fired, s->skipped, s->payload_len);
	}
}

/* ---- snapshot -------------------------------------------------------- */

struct wr {
	uint8_t *p;
	size_t len;
};

static void
w_bytes(struct wr *w, const void *p, size_t n)
{
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

static void
w_u64(struct wr *w, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		w->p[w->len++] = (uint8_t)(v >> (8 * i));
}

static void
w_str16(struct wr *w, const char *s, size_t n)
{
	w_u64(w, n, 2);
	w_bytes(w, s, n);
}

int
qs_sched_snapshot_write(const struct queue *q, queue_emit_fn *emit, void *arg)
{
	/* the largest fixed part: four strings and the numbers */
	uint8_t mem[8 + QREC_SCHED_NAME_MAX + QREC_NAME_MAX + CRON_EXPR_MAX +
	    TZ_NAME_MAX + 2 + 12 + 8 + 4 + 48];
	int rc;

	for (uint32_t i = 0; i < q->nsched; i++) {
		const struct sched *s = q->scheds[i];
		struct wr w = { mem, 0 };

		w_u64(&w, (uint64_t)s->created_at, 8);
		w_u64(&w, (uint64_t)s->updated_at, 8);
		w_u64(&w, (uint64_t)s->last_slot, 8);
		w_u64(&w, s->last_id, 8);
		w_u64(&w, s->fired, 8);
		w_u64(&w, s->skipped, 8);
		w_str16(&w, sched_name(s), s->name_len);
		w_str16(&w, sched_tube(s), s->tube_len);
		w_str16(&w, sched_cron(s), s->cron_len);
		w_str16(&w, sched_tz(s), s->tz_len);
		w_u64(&w, s->catch_up, 1);
		w_u64(&w, s->paused ? 1 : 0, 1);
		w_u64(&w, s->pri, 4);
		w_u64(&w, s->ttr, 4);
		w_u64(&w, s->max_attempts, 4);
		w_u64(&w, (uint64_t)s->from, 8);
		w_u64(&w, s->payload_len, 4); /* the blob's length */
		rc = emit(arg, QSNAP_SCHED, mem, w.len, sched_payload(s),
		    s->payload_len);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
qs_sched_load(struct queue *q, struct rd *r)
{
	struct qrec_sched rs;
	struct qrec rec;
	struct sched *s;
	int64_t created = rd_i64(r), updated = rd_i64(r), last = rd_i64(r);
	uint64_t last_id = rd_u64(r), fired = rd_u64(r), skipped = rd_u64(r);
	bool found;
	size_t i;
	int rc;

	memset(&rs, 0, sizeof(rs));
	qrec_sched_decode(r, QREC_SCHED_SET, &rs);
	if (rd_failed(r) || rd_left(r) != 0)
		return SLUICE_ECORRUPT;
	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_SCHED_SET;
	rec.u.sched = rs;
	if (!qrec_valid(&rec))
		return SLUICE_ECORRUPT;
	i = sched_pos(q, rs.name, rs.name_len, &found);
	if (found || (i != q->nsched) || q->nsched >= QUEUE_SCHED_MAX)
		return SLUICE_ECORRUPT; /* written in name order, once each */
	if (created < 0 || created > QREC_TIME_MAX || updated < created ||
	    updated > QREC_TIME_MAX || last < 0 || last > rs.from ||
	    (last == 0) != (last_id == 0) || (last != 0 && fired == 0))
		return SLUICE_ECORRUPT;
	if ((s = sched_new(&rs)) == NULL)
		return SLUICE_ENOMEM;
	s->created_at = created;
	s->updated_at = updated;
	s->last_slot = last;
	s->last_id = last_id;
	s->fired = fired;
	s->skipped = skipped;
	if ((rc = sched_insert(q, i, s)) != 0) {
		free(s);
		return rc;
	}
	q->sched_gen++;
	return 0;
}
