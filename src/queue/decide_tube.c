/* decide_tube - decides the requests that act on a whole tube: flush,
 * delete_where, pause, tube_set (merged with the settings the tube has)
 * and tube_delete. Like decide.c, it only checks a request against the
 * state and says, as a record, what it would change; apply changes it.
 * queue.h has each request's errors. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "queue/decide.h"
#include "queue/qstate.h"
#include "sluice.h"

static int
flush_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_flush_req *req = arg;
	struct tube *tb;

	(void)now;
	if (!qrec_tube_valid(req->tube, req->tube_len))
		return SLUICE_ETUBE;
	tb = qs_tube(q, req->tube, req->tube_len);
	if (tb == NULL || tube_tasks(tb) == 0)
		return 0; /* QREC_NONE: nothing to flush */
	out->type = QREC_FLUSH;
	out->u.flush.tube = req->tube;
	out->u.flush.tube_len = req->tube_len;
	out->u.flush.dedup_ms = 0; /* cancelled: keys free at once */
	return 0;
}

int
queue_decide_flush(struct queue *q, int64_t now,
    const struct queue_flush_req *req, struct qrec *result)
{
	return decide_run(q, now, flush_rec, req, result);
}

struct where_args {
	const struct queue_delete_where_req *req;
	uint64_t *count;
};

static int
delete_where_rec(
    struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct where_args *a = arg;
	const struct queue_delete_where_req *req = a->req;
	uint8_t states = req->states;
	bool aged = req->by != 0 || req->states != 0;
	struct tube *tb;
	uint64_t n = 0;

	if (!qrec_tube_valid(req->tube, req->tube_len))
		return SLUICE_ETUBE;
	if (!decide_time_ok(req->older))
		return SLUICE_EINVAL;
	if (!aged) {
		/* one state, by creation (a done task: its finish) */
		if (req->state != QUEUE_READY && req->state != QUEUE_DELAYED &&
		    req->state != QUEUE_BURIED && req->state != QUEUE_DONE)
			return SLUICE_EINVAL;
		states = QREC_STATE_BIT(req->state);
	} else {
		if (req->states == 0 && req->state >= QUEUE_READY &&
		    req->state <= QUEUE_DONE)
			states = QREC_STATE_BIT(req->state);
		else if (req->state != 0)
			return SLUICE_EINVAL;
		if (states == 0 || (states & ~QREC_STATES_ALL) != 0 ||
		    (req->by != QREC_BY_UPDATED && req->by != QREC_BY_CREATED))
			return SLUICE_EINVAL;
	}
	if ((states & QREC_STATE_BIT(QUEUE_TAKEN)) && !req->force)
		return SLUICE_EINVAL;
	tb = qs_tube(q, req->tube, req->tube_len);
	if (tb != NULL)
		n = qs_aged(q, tb, states, req->by, now - req->older, NULL);
	*a->count = n;
	if (n == 0)
		return 0; /* QREC_NONE: nothing that old */
	out->type = aged ? QREC_DELETE_AGED : QREC_DELETE_WHERE;
	out->u.where.tube = req->tube;
	out->u.where.tube_len = req->tube_len;
	out->u.where.state = aged ? 0 : (uint8_t)req->state;
	out->u.where.states = aged ? states : 0;
	out->u.where.by = req->by;
	out->u.where.before = now - req->older;
	return 0;
}

int
queue_decide_delete_where(struct queue *q, int64_t now,
    const struct queue_delete_where_req *req, struct qrec *result,
    uint64_t *count)
{
	struct where_args a = { req, count };
	uint64_t n = 0;
	int rc;

	a.count = &n;
	rc = decide_run(q, now, delete_where_rec, &a, result);
	if (rc == 0)
		*count = n;
	return rc;
}

static int
pause_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_pause_req *req = arg;
	struct tube *tb;

	if (!qrec_tube_valid(req->tube, req->tube_len))
		return SLUICE_ETUBE;
	if (!decide_time_ok(req->until))
		return SLUICE_EINVAL;
	tb = qs_tube(q, req->tube, req->tube_len);
	if (tb == NULL && !req->create)
		return SLUICE_ENOTFOUND;
	/* Unpausing a tube that is not paused changes nothing. */
	if (req->until <= now && (tb == NULL || tb->paused_until == 0))
		return 0;
	if (tb == NULL && !decide_new_tube_allowed(q, req->tube, req->tube_len))
		return SLUICE_ELIMIT;
	out->type = QREC_PAUSE;
	out->u.pause.tube = req->tube;
	out->u.pause.tube_len = req->tube_len;
	out->u.pause.until = req->until;
	return 0;
}

int
queue_decide_pause(struct queue *q, int64_t now,
    const struct queue_pause_req *req, struct qrec *result)
{
	return decide_run(q, now, pause_rec, req, result);
}

/* The settings `req` leaves the tube with (`old` its current ones). */
static int
merged_conf(const struct queue *q, const struct qrec_tube_conf *old,
    const struct queue_tube_set_req *req, struct qrec_tube_conf *out)
{
	const struct qrec_tube_conf *in = &req->conf;
	uint8_t set = req->set, unset = req->unset;
	struct qrec_tube_conf c = *old;

	if (((set | unset) & ~QREC_TS_ALL) != 0 || (set & unset) != 0)
		return SLUICE_EINVAL;
	if ((set & QREC_TS_DEAD_LETTER) &&
	    !qrec_tube_valid(in->dead_letter, in->dead_letter_len))
		return SLUICE_ETUBE;
	if ((set & QREC_TS_TTR) &&
	    (in->ttr == 0 || in->ttr > q->cfg.max_ttr_ms))
		return SLUICE_EINVAL;
	if (set & QREC_TS_TTR)
		c.ttr = in->ttr;
	if (set & QREC_TS_MAX_ATTEMPTS)
		c.max_attempts = in->max_attempts;
	if (set & QREC_TS_BACKOFF) {
		c.backoff_base = in->backoff_base;
		c.backoff_cap = in->backoff_cap;
	}
	if (set & QREC_TS_KEEP_DONE)
		c.keep_done = in->keep_done;
	if (set & QREC_TS_LOST_LEASE)
		c.lost_lease_immediate = in->lost_lease_immediate;
	if (set & QREC_TS_DEAD_LETTER) {
		c.dead_letter = in->dead_letter;
		c.dead_letter_len = in->dead_letter_len;
	}
	/* An unset field is zero, as a TUBE_SET record holds it. */
	if (unset & QREC_TS_TTR)
		c.ttr = 0;
	if (unset & QREC_TS_MAX_ATTEMPTS)
		c.max_attempts = 0;
	if (unset & QREC_TS_BACKOFF)
		c.backoff_base = c.backoff_cap = 0;
	if (unset & QREC_TS_KEEP_DONE)
		c.keep_done = 0;
	if (unset & QREC_TS_LOST_LEASE)
		c.lost_lease_immediate = false;
	if (unset & QREC_TS_DEAD_LETTER) {
		c.dead_letter = NULL;
		c.dead_letter_len = 0;
	}
	c.set = (uint8_t)((c.set | set) & ~unset);
	if (!qrec_tube_conf_valid(&c, req->tube, req->tube_len))
		return SLUICE_EINVAL;
	*out = c;
	return 0;
}

static bool
same_conf(const struct qrec_tube_conf *a, const struct qrec_tube_conf *b)
{
	return a->set == b->set && a->ttr == b->ttr &&
	    a->max_attempts == b->max_attempts &&
	    a->backoff_base == b->backoff_base &&
	    a->backoff_cap == b->backoff_cap && a->keep_done == b->keep_done &&
	    a->lost_lease_immediate == b->lost_lease_immediate &&
	    a->dead_letter_len == b->dead_letter_len &&
	    (a->dead_letter_len == 0 ||
	        memcmp(a->dead_letter, b->dead_letter, a->dead_letter_len) ==
	            0);
}

static int
tube_set_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_tube_set_req *req = arg;
	const struct tube *tb;
	struct qrec_tube_conf old, c;
	int rc;

	(void)now;
	if (!qrec_tube_valid(req->tube, req->tube_len))
		return SLUICE_ETUBE;
	tb = qs_tube(q, req->tube, req->tube_len);
	old = tube_conf_get(tb);
	if ((rc = merged_conf(q, &old, req, &c)) != 0)
		return rc;
	/* No change, or nothing to set on a tube that is not there. */
	if (same_conf(&old, &c))
		return 0;
	if (tb == NULL && !decide_new_tube_allowed(q, req->tube, req->tube_len))
		return SLUICE_ELIMIT;
	out->type = QREC_TUBE_SET;
	out->u.tube_set.tube = req->tube;
	out->u.tube_set.tube_len = req->tube_len;
	out->u.tube_set.conf = c;
	return 0;
}

int
queue_decide_tube_set(struct queue *q, int64_t now,
    const struct queue_tube_set_req *req, struct qrec *result)
{
	return decide_run(q, now, tube_set_rec, req, result);
}

static int
tube_delete_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_tube_delete_req *req = arg;
	const struct tube *tb;

	(void)now;
	if (!qrec_tube_valid(req->tube, req->tube_len))
		return SLUICE_ETUBE;
	if ((tb = qs_tube(q, req->tube, req->tube_len)) == NULL)
		return SLUICE_ENOTFOUND;
	if (tube_tasks(tb) != 0 && !req->force)
		return SLUICE_ENOTEMPTY;
	out->type = QREC_TUBE_DELETE;
	out->u.tube_delete.tube = req->tube;
	out->u.tube_delete.tube_len = req->tube_len;
	out->u.tube_delete.force = req->force && tube_tasks(tb) != 0;
	return 0;
}

int
queue_decide_tube_delete(struct queue *q, int64_t now,
    const struct queue_tube_delete_req *req, struct qrec *result)
{
	return decide_run(q, now, tube_delete_rec, req, result);
}
