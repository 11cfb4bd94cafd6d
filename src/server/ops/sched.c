/* sched - schedules on the server: the ops sched_set, sched_list and
 * sched_ctl, and the firing of their slots (queue/sched.h holds the
 * state and the records; docs/queue.md, "Schedules", the rules).
 *
 * Firing. Only a leader fires (run_timers calls ops_sched_run on a
 * leader only): each slot is one SCHED_FIRE record, which puts the slot's
 * task and moves the schedule's `from` past the slot in the same apply,
 * so whether a slot fired is in the log, and a node that applies the log
 * (after a restart, a snapshot, as a follower promoted) never fires it
 * again. The loop sleeps until the earliest next slot (ops_sched_next_wake
 * bounds poll's timeout, as delayed tasks do); no schedule is polled.
 *
 * Each schedule's next slot is noted in the queue's schedule (next_at),
 * computed again only when the schedule changed (queue_sched_gen moves at
 * every apply of its records), so a turn with nothing due costs one
 * comparison.
 *
 * Missed slots. When a schedule wakes, the slots due are those after its
 * `from` up to now. A slot later than its time by no more than the grace
 * (SCHED_GRACE_MS, or half the time to the slot after it when that is
 * shorter) is not missed: it fires in every mode (a follower promoted at
 * 12:00:00.5 fires 12:00). Older ones follow the schedule's catch-up:
 * none skips them, one fires the last slot due, all fires each, at most
 * the last QREC_CATCH_ALL_MAX. Skipped slots are one SCHED_FIRE without a
 * put, so the log says so.
 *
 * Zones are read from the system's zoneinfo (util/tz.h) when first named,
 * and kept: ZONES_MAX of them; a schedule whose zone file went away since
 * it was set waits (logged) and fires when the file is back. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/sched.h"
#include "server/core/core.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "sluice.h"
#include "util/cron.h"
#include "util/log.h"
#include "util/tz.h"

enum {
	ZONES_MAX = 128,
	SCHED_GRACE_MS = 60 * 1000,
	SCHED_WALK_MAX = 200000, /* slots looked at for one schedule a turn */
	SCHED_RETRY_MS = 1000,   /* after a firing the log refused */
	SCHED_WARN_MS = 60000,   /* between two warnings of such refusals */
};

static struct {
	char name[TZ_NAME_MAX + 1];
	struct tz *z;
} zones[ZONES_MAX];
static int nzones;

/* The zone `name`, loaded once. Returns 0 or tz_load's error. */
static int
zone_get(const char *name, size_t len, const struct tz **out)
{
	struct tz *z;
	int rc;

	for (int i = 0; i < nzones; i++)
		if (strlen(zones[i].name) == len &&
		    memcmp(zones[i].name, name, len) == 0) {
			*out = zones[i].z;
			return 0;
		}
	if ((rc = tz_load(name, len, &z)) != 0)
		return rc;
	if (nzones == ZONES_MAX) { /* full: the oldest goes */
		tz_free(zones[0].z);
		memmove(zones, zones + 1, (ZONES_MAX - 1) * sizeof(zones[0]));
		nzones--;
	}
	memcpy(zones[nzones].name, name, len);
	zones[nzones].name[len] = '\0';
	zones[nzones].z = z;
	*out = z;
	nzones++;
	return 0;
}

/* The next slot of `s` after `after`; -1 when none (never, or no zone). */
static int64_t
next_slot(const struct sched *s, int64_t after)
{
	const struct tz *z;

	if (zone_get(sched_tz(s), s->tz_len, &z) != 0)
		return -1;
	return cron_next(&s->cron, z, after);
}

/* Its next slot as noted, computed when not known. */
static int64_t
noted_next(struct sched *s)
{
	if (s->next_at == 0) {
		int64_t n = next_slot(s, s->from);

		s->next_at = n < 0 ? -1 : n;
		if (n < 0)
			log_warn("sched",
			    "schedule %s has no next slot (zone %s unreadable, "
			    "or the expression names none)",
			    sched_name(s), sched_tz(s));
	}
	return s->next_at;
}

/* The earliest slot to fire, over every active schedule. */
static int64_t
earliest(struct core *c)
{
	int64_t best = INT64_MAX;

	for (size_t i = 0; i < queue_sched_count(c->q); i++) {
		struct sched *s = queue_sched_at(c->q, i);
		int64_t n;

		if (s->paused)
			continue;
		n = noted_next(s);
		if (n > 0 && n < best)
			best = n;
	}
	return best;
}

int64_t
ops_sched_next_wake(struct core *c)
{
	if (c->follower || c->fenced || c->handing)
		return INT64_MAX;
	if (c->sched.gen != queue_sched_gen(c->q) || c->sched.gen == 0) {
		c->sched.next = earliest(c);
		c->sched.gen = queue_sched_gen(c->q);
	}
	if (c->sched.retry_at > c->sched.next)
		return c->sched.retry_at;
	return c->sched.next;
}

/* Commits one SCHED_FIRE of `s` up to `slot`, with its task when
 * `put`. Returns 0 or the error (logged). */
static int
fire(struct core *c, struct sched *s, int64_t slot, bool put)
{
	char key[QUEUE_SCHED_KEY_MAX], name[QREC_SCHED_NAME_MAX + 1];
	struct qrec r;
	uint64_t lsn, id;
	int rc;

	memcpy(name, sched_name(s), s->name_len + 1u);
	rc = queue_decide_sched_fire(
	    c->q, c->now, name, s->name_len, slot, put, key, &r, &id);
	if (rc == 0)
		rc = core_commit(c, &r, put ? WAL_NEW_WORK : WAL_RETRY, &lsn);
	if (rc != 0) {
		/* once in a while: a full log refuses every second */
		if (c->now - c->sched.warned_at >= SCHED_WARN_MS) {
			c->sched.warned_at = c->now;
			log_warn("sched",
			    "schedule %s: cannot fire the slot %" PRId64
			    " error=\"%s\"; tried again every second",
			    name, slot, sluice_strerror(rc));
		}
		return rc;
	}
	c->sched.fired += id != 0;
	return 0;
}

/* The grace of `slot`: SCHED_GRACE_MS, or half the time to `after`. */
static int64_t
grace(int64_t slot, int64_t after)
{
	int64_t half = after > slot ? (after - slot) / 2 : SCHED_GRACE_MS;

	return half < SCHED_GRACE_MS ? half : SCHED_GRACE_MS;
}

/* Decides every slot of `s` due by now. Returns 0 or an error. */
static int
fire_due(struct core *c, struct sched *s)
{
	static int64_t ring[QREC_CATCH_ALL_MAX];
	int64_t now = c->now, slot = noted_next(s), after = -1;
	size_t n = 0, walked = 0, keep;
	bool capped = false;
	uint8_t mode = s->catch_up;
	int rc;

	while (slot > 0 && slot <= now) {
		ring[n % QREC_CATCH_ALL_MAX] = slot;
		n++;
		after = next_slot(s, slot);
		if (++walked >= SCHED_WALK_MAX && after > 0 && after <= now) {
			capped = true;
			break;
		}
		slot = after;
	}
	if (n == 0)
		return 0;
	if (capped) {
		/* the oldest kept in the ring is where the next turn goes on
		 * from: everything before it is older than the last 1,000 */
		int64_t upto = ring[n % QREC_CATCH_ALL_MAX] - 1;

		return upto > s->from ? fire(c, s, upto, false) : 0;
	}
	int64_t last = ring[(n - 1) % QREC_CATCH_ALL_MAX];
	bool on_time = now - last <= grace(last, after);

	if (mode == QREC_CATCH_ALL) {
		keep = n < QREC_CATCH_ALL_MAX ? n : QREC_CATCH_ALL_MAX;
		if (n > keep &&
		    (rc = fire(c, s, ring[(n - keep) % QREC_CATCH_ALL_MAX] - 1,
		         false)) != 0)
			return rc; /* the slots before the last 1,000 */
		for (size_t i = n - keep; i < n; i++) {
			rc = fire(c, s, ring[i % QREC_CATCH_ALL_MAX], true);
			if (rc != 0)
				return rc;
		}
		return 0;
	}
	if (mode == QREC_CATCH_ONE || on_time) {
		if (n > 1 &&
		    (rc = fire(
		         c, s, ring[(n - 2) % QREC_CATCH_ALL_MAX], false)) != 0)
			return rc;
		return fire(c, s, last, true);
	}
	return fire(c, s, last, false); /* none: every slot was missed */
}

void
ops_sched_run(struct core *c)
{
	int64_t wake = ops_sched_next_wake(c);

	if (wake == INT64_MAX || wake > c->now)
		return;
	c->sched.retry_at = 0;
	for (size_t i = 0; i < queue_sched_count(c->q); i++) {
		struct sched *s = queue_sched_at(c->q, i);
		int64_t n;

		if (s->paused)
			continue;
		n = noted_next(s);
		if (n <= 0 || n > c->now)
			continue;
		if (fire_due(c, s) != 0) {
			c->sched.retry_at = c->now + SCHED_RETRY_MS;
			break;
		}
		s = queue_sched_at(c->q, i); /* a fire replaced nothing, but
		                                the table may have grown */
		if (s != NULL && s->next_at > 0 && s->next_at <= c->now)
			c->sched.retry_at =
			    c->now; /* capped: go on next turn */
	}
}

/* ---- the ops --------------------------------------------------------- */

static void
to_msg(struct sched *s, bool payload, struct msg_sched *m)
{
	memset(m, 0, sizeof(*m));
	m->name = (struct msg_str) { sched_name(s), s->name_len };
	m->tube = (struct msg_str) { sched_tube(s), s->tube_len };
	m->cron = (struct msg_str) { sched_cron(s), s->cron_len };
	m->tz = (struct msg_str) { sched_tz(s), s->tz_len };
	m->catch_up = s->catch_up;
	m->paused = s->paused;
	m->priority = s->pri;
	m->ttr = s->ttr;
	m->max_attempts = s->max_attempts;
	m->created_at = (uint64_t)s->created_at;
	m->updated_at = (uint64_t)s->updated_at;
	m->next_at = s->paused || noted_next(s) < 0 ? 0 : (uint64_t)s->next_at;
	m->last_slot = (uint64_t)s->last_slot;
	m->last_id = s->last_id;
	m->fired = s->fired;
	m->skipped = s->skipped;
	m->size = s->payload_len;
	if (payload)
		m->payload =
		    (struct msg_str) { sched_payload(s), s->payload_len };
}

/* Answers the schedule `name` (none when it is gone). */
static void
reply_one(struct core *c, struct face_ctx *ctx, uint8_t op, const char *name,
    size_t len)
{
	struct msg_rep rep = { .op = op };
	struct sched *s = queue_sched_find(c->q, name, len);
	struct msg_sched m;

	if (s != NULL) {
		to_msg(s, true, &m);
		rep.scheds.n = 1;
		rep.scheds.v = &m;
	}
	ops_reply_applied(c, ctx, &rep);
}

static void
sched_set(struct core *c, struct face_ctx *ctx, const struct msg_sched_set *m)
{
	struct queue_sched_req req;
	const struct tz *z;
	char err[CRON_ERR_MAX];
	struct qrec r;
	uint64_t lsn;
	int rc;

	if (m->tz.len > 0 && (rc = zone_get(m->tz.p, m->tz.len, &z)) != 0) {
		core_reply_err(c, ctx, MSG_OP_SCHED_SET, SLUICE_ESCHED,
		    "schedule set '%.*s': %s '%.*s'; nothing was changed",
		    (int)m->name.len, m->name.p,
		    rc == SLUICE_ENOTFOUND    ? "unknown time zone"
		        : rc == SLUICE_EINVAL ? "bad time zone name"
		                              : "unreadable time zone",
		    (int)m->tz.len, m->tz.p);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.name = m->name.p;
	req.name_len = m->name.len;
	req.tube = m->tube.p;
	req.tube_len = m->tube.len;
	req.cron = m->cron.p;
	req.cron_len = m->cron.len;
	req.tz = m->tz.p;
	req.tz_len = m->tz.len;
	req.catch_up = m->catch_up;
	req.paused = m->paused;
	req.pri = m->priority;
	req.ttr = m->ttr > UINT32_MAX ? UINT32_MAX : (uint32_t)m->ttr;
	req.max_attempts = m->max_attempts;
	req.payload = m->payload.p;
	req.payload_len = m->payload.len;
	rc = queue_decide_sched_set(c->q, c->now, &req, &r, err, sizeof(err));
	if (rc == 0)
		rc = core_commit(c, &r, WAL_RETRY, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_SCHED_SET, rc,
		    "schedule set '%.*s': %s; nothing was changed",
		    (int)m->name.len, m->name.p,
		    err[0] ? err : sluice_strerror(rc));
		return;
	}
	reply_one(c, ctx, MSG_OP_SCHED_SET, m->name.p, m->name.len);
}

static void
sched_list(struct core *c, struct face_ctx *ctx, const struct msg_sched_ctl *m)
{
	struct msg_rep rep = { .op = MSG_OP_SCHED_LIST };
	size_t n = queue_sched_count(c->q);
	struct msg_sched *v;

	if (m->name.len > 0) {
		if (queue_sched_find(c->q, m->name.p, m->name.len) == NULL) {
			core_reply_err(c, ctx, MSG_OP_SCHED_LIST,
			    SLUICE_ENOTFOUND, "no schedule '%.*s'",
			    (int)m->name.len, m->name.p);
			return;
		}
		reply_one(c, ctx, MSG_OP_SCHED_LIST, m->name.p, m->name.len);
		return;
	}
	if ((v = calloc(n ? n : 1, sizeof(*v))) == NULL) {
		core_reply_err(c, ctx, MSG_OP_SCHED_LIST, SLUICE_ENOMEM, NULL);
		return;
	}
	for (size_t i = 0; i < n; i++)
		to_msg(queue_sched_at(c->q, i), m->payloads, &v[i]);
	rep.scheds.n = (uint32_t)n;
	rep.scheds.v = v;
	ops_reply_applied(c, ctx, &rep);
	free(v);
}

static void
sched_ctl(struct core *c, struct face_ctx *ctx, const struct msg_sched_ctl *m)
{
	static const char *const verbs[] = { "", "pause", "resume", "delete" };
	struct qrec r;
	uint64_t lsn;
	int rc;

	if (m->action == MSG_SCHED_DELETE)
		rc =
		    queue_decide_sched_delete(c->q, m->name.p, m->name.len, &r);
	else
		rc = queue_decide_sched_pause(c->q, c->now, m->name.p,
		    m->name.len, m->action == MSG_SCHED_PAUSE, &r);
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, WAL_RETRY, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_SCHED_CTL, rc,
		    "schedule %s '%.*s': %s", verbs[m->action],
		    (int)m->name.len, m->name.p,
		    rc == SLUICE_ENOTFOUND    ? "no such schedule"
		        : rc == SLUICE_ESCHED ? "bad schedule name"
		                              : sluice_strerror(rc));
		return;
	}
	reply_one(c, ctx, MSG_OP_SCHED_CTL, m->name.p, m->name.len);
}

void
ops_sched(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	switch (req->op) {
	case MSG_OP_SCHED_SET:
		sched_set(c, ctx, &req->sched_set);
		break;
	case MSG_OP_SCHED_LIST:
		sched_list(c, ctx, &req->sched);
		break;
	default:
		sched_ctl(c, ctx, &req->sched);
		break;
	}
}
