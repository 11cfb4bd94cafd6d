/* decide - checks requests against the state and says, as a record, what
 * they would change (queue.h has the errors of each request). Nothing
 * here changes the state, except catching up with `now` (queue_tick),
 * which changes nothing a dump shows as of a given time.
 *
 * Decide computes every value that depends on the configuration or on
 * the clock - run_at from a delay, the backoff of a fail, the next run of
 * a recurring task, how long a completed key stays reserved, whether an
 * expired lease buries its task - so that apply needs neither.
 *
 * This file decides what acts on tasks (put, take, the lease operations,
 * update, delete, kick, expiries, sessions, restarts); decide_tube.c what
 * acts on a whole tube (flush, delete_where, pause, tube_set,
 * tube_delete). What both use is decide.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "queue/decide.h"
#include "queue/deps.h"
#include "queue/group.h"
#include "queue/qstate.h"
#include "sluice.h"

bool
decide_time_ok(int64_t t)
{
	return t >= 0 && t <= QREC_TIME_MAX;
}

static int64_t
clamp_time(int64_t t)
{
	return t > QREC_TIME_MAX ? QREC_TIME_MAX : t;
}

/* Every decision: catches up with `now`, which must be a valid time, lets
 * `fn` decide, and hands out the record only on success. */
int
decide_run(struct queue *q, int64_t now, decide_fn *fn, const void *arg,
    struct qrec *result)
{
	struct qrec rec;
	int rc;

	memset(&rec, 0, sizeof(rec));
	if (!decide_time_ok(now))
		return SLUICE_EINVAL;
	if ((rc = queue_tick(q, now)) != 0 || (rc = fn(q, now, arg, &rec)) != 0)
		return rc;
	/* a cancelled task's lease ends as a DELETE (outcome.c) */
	if ((rc = qs_cancel_decided(q, &rec)) != 0)
		return rc;
	*result = rec;
	return 0;
}

/* run_at of a request: absolute when given, else now + delay; never in
 * the past. */
static int
when(int64_t now, int64_t run_at, int64_t delay, int64_t *out)
{
	if (!decide_time_ok(run_at) || !decide_time_ok(delay))
		return SLUICE_EINVAL;
	if (run_at == 0)
		run_at = now + delay;
	if (run_at < now)
		run_at = now;
	if (run_at > QREC_TIME_MAX)
		return SLUICE_EINVAL;
	*out = run_at;
	return 0;
}

/* The lease rule (queue.h): the task, then its state, then the lease.
 * Leases are LSNs (>= 1), so lease 0 never matches: it is no wildcard. */
static int
leased(
    struct queue *q, uint64_t id, uint64_t lease, bool force, struct task **out)
{
	struct task *t = qs_task_seen(q, id);

	if (t == NULL)
		return SLUICE_ENOTFOUND;
	if (t->state != QUEUE_TAKEN)
		return SLUICE_ESTATE;
	if (!force && t->ext->lease != lease)
		return SLUICE_ESTALE;
	*out = t;
	return 0;
}

static void
end_rec(struct qrec *out, uint16_t type, const struct task *t, uint8_t reason,
    uint8_t outcome)
{
	out->type = type;
	out->u.end.id = t->id;
	out->u.end.lease = t->state == QUEUE_TAKEN ? t->ext->lease : 0;
	out->u.end.reason = reason;
	out->u.end.outcome = outcome;
}

/* The tube's backoff base * 2^(attempts - 1), at most its cap. */
static int64_t
backoff(const struct queue *q, const struct tube *tb, uint32_t attempts)
{
	uint32_t base, cap;
	int64_t d;

	queue_tube_backoff(q, tb, &base, &cap);
	d = base;
	for (uint32_t i = 1; i < attempts && d > 0 && d < cap; i++)
		d *= 2;
	return d < cap ? d : cap;
}

/* The tube's lost-lease setting, else the holder's `ready`, else the
 * server's --lost-lease-retry; a backoff is the tube's (its own base and
 * cap, else the server's). */
int64_t
queue_lost_lease_delay(
    const struct queue *q, const struct tube *tb, uint32_t attempts, bool ready)
{
	if (ready && !queue_tube_lost_lease_own(tb))
		return 0;
	if (queue_tube_lost_lease_immediate(q, tb))
		return 0;
	return backoff(q, tb, attempts);
}

static bool
at_max_attempts(const struct task *t)
{
	return t->max_attempts > 0 && t->attempts >= t->max_attempts;
}

bool
decide_new_tube_allowed(const struct queue *q, const char *name, size_t len)
{
	return q->cfg.max_tubes == 0 || q->ntubes < q->cfg.max_tubes ||
	    qs_tube(q, name, len) != NULL;
}

/* A taken task is to be buried (FAIL, BURY or SETBACK of type): it moves
 * to its tube's dead-letter tube instead when the tube has one (and that
 * tube may be made), else it is buried in place. */
static void
bury_rec_of(const struct queue *q, struct qrec *out, uint16_t type,
    const struct task *t, uint8_t reason)
{
	const char *to;
	size_t len;

	if (queue_tube_dead_letter(q, qs_tube_of(q, t), &to, &len) &&
	    decide_new_tube_allowed(q, to, len)) {
		end_rec(out, type, t, reason, QREC_MOVED);
		out->u.end.to = to;
		out->u.end.to_len = len;
	} else {
		end_rec(out, type, t, reason, QREC_BURIED);
	}
}

/* Whether the session holding `t` asks for ready at once when its lease
 * is lost (queue_on_lost_lease). */
static bool
holder_wants_ready(const struct queue *q, const struct task *t)
{
	return q->lost_ready != NULL && t->ext != NULL && !t->ext->detached &&
	    t->ext->session != 0 &&
	    q->lost_ready(q->lost_ready_arg, t->ext->session);
}

/* A lease ends without its holder: expired or session gone (SETBACK
 * under the retry policy), or its session ended with the server
 * (`at_once`: a restart or a promotion, SETBACK ready at once: the node
 * failed, not the task), each with `why`. At max_attempts the task is
 * buried, or moves to its tube's dead letter. */
static void
lost_lease(const struct queue *q, const struct task *t, int64_t now,
    uint8_t reason, const char *why, size_t why_len, bool at_once,
    struct qrec *out)
{
	if (task_has_repl(t)) {
		end_rec(out, QREC_RELEASE, t, reason, QREC_REPLACED);
		return;
	}
	if (at_max_attempts(t)) {
		bury_rec_of(q, out, QREC_SETBACK, t, reason);
	} else {
		end_rec(out, QREC_SETBACK, t, reason, QREC_WAIT);
		out->u.end.run_at = at_once
		    ? now
		    : clamp_time(now +
		          queue_lost_lease_delay(q, qs_tube_of(q, t),
		              t->attempts, holder_wants_ready(q, t)));
		out->u.end.pri = t->pri;
	}
	out->u.end.text = why;
	out->u.end.text_len =
	    why_len < q->cfg.max_error ? why_len : q->cfg.max_error;
}

void
queue_put_req_init(struct queue_put_req *req)
{
	memset(req, 0, sizeof(*req));
	req->pri = QUEUE_DEFAULT_PRI;
}

struct put_args {
	const struct queue_put_req *req;
	struct queue_put_res *res;
	bool copy; /* a move's copy: its key's window is not asked */
};

static int
put_res(struct queue_put_res *res, uint64_t id, bool created, bool replaced)
{
	res->id = id;
	res->created = created;
	res->replaced = replaced;
	res->stale = false;
	res->throttled = false;
	return 0;
}

/* The version a replace with if_newer is compared with: that of the
 * content the task will have, its pending replacement's when a worker
 * holds it. */
static uint64_t
newest_version(const struct task *t)
{
	return task_has_repl(t) ? t->ext->repl->version : task_version(t);
}

/* A REPLACE of the live task `t`, or nothing when if_newer is not newer
 * than its version. */
static int
replace_rec(const struct queue_put_req *req, struct task *t, uint32_t ttr,
    uint32_t max_attempts, int64_t run_at, struct qrec *out,
    struct queue_put_res *res)
{
	struct qrec_replace *r = &out->u.replace;

	if (req->if_newer != 0 && newest_version(t) >= req->if_newer) {
		out->type = QREC_NONE;
		put_res(res, t->id, false, false);
		res->stale = true;
		return 0;
	}
	out->type = req->if_newer != 0 ? QREC_REPLACE_V : QREC_REPLACE;
	r->id = t->id;
	r->payload = req->payload;
	r->payload_len = req->payload_len;
	r->pri = req->pri;
	r->ttr = ttr;
	r->max_attempts = max_attempts;
	r->run_at = run_at;
	r->period = req->period_ms;
	r->pending = t->state == QUEUE_TAKEN;
	r->version = req->if_newer;
	return put_res(res, t->id, false, true);
}

/* A put's group: a valid name, and room for it in its tube when new. */
static int
put_group_check(const struct queue *q, const struct queue_put_req *req)
{
	const struct tube *tb;

	if (req->group_len == 0)
		return 0;
	if (req->group == NULL || !qrec_group_valid(req->group, req->group_len))
		return SLUICE_EGROUP;
	tb = qs_tube(q, req->tube, req->tube_len);
	if (tb != NULL && tb->groups != NULL &&
	    tb->groups->n >= GROUP_SLOTS_MAX &&
	    groups_find(tb, req->group, req->group_len) == NULL)
		return SLUICE_ELIMIT;
	return 0;
}

/* A new task in a group is a PUT_G (with its version, if any). */
static void
put_group_set(
    const struct queue_put_req *req, struct qrec_put *p, uint16_t *type)
{
	if (req->group_len == 0)
		return;
	p->group = req->group;
	p->group_len = req->group_len;
	*type = QREC_PUT_G;
}

static int
put_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct put_args *a = arg;
	const struct queue_put_req *req = a->req;
	uint32_t ttr = req->ttr_ms, max_attempts = req->max_attempts;
	struct keyent *ke = NULL;
	int64_t run_at;
	int rc;

	if (!qrec_tube_valid(req->tube, req->tube_len))
		return SLUICE_ETUBE;
	/* What the put leaves out, its tube decides. The lookup is the
	 * one apply makes next (the queue's last tube: one compare). */
	if (ttr == 0 || max_attempts == 0) {
		const struct tube *tb = qs_tube(q, req->tube, req->tube_len);

		if (ttr == 0)
			ttr = queue_tube_ttr_ms(q, tb);
		if (max_attempts == 0)
			max_attempts = queue_tube_max_attempts(q, tb);
	}
	if (req->payload_len > q->cfg.max_payload)
		return SLUICE_ETOOBIG;
	if (req->key_len > QREC_KEY_MAX || (req->key_len && !req->key))
		return SLUICE_EKEY;
	if (req->payload_len > 0 && req->payload == NULL)
		return SLUICE_EINVAL;
	if (ttr == 0 || ttr > q->cfg.max_ttr_ms)
		return SLUICE_EINVAL;
	if (!decide_time_ok(req->period_ms) ||
	    (req->replace && req->key_len == 0))
		return SLUICE_EINVAL;
	if (req->if_newer != 0 && !req->replace)
		return SLUICE_EINVAL;
	if ((rc = when(now, req->run_at, req->delay_ms, &run_at)) != 0)
		return rc;
	if ((rc = put_group_check(q, req)) != 0)
		return rc;

	if (req->key_len > 0 && !a->copy &&
	    queue_move_keys_pending(q, req->tube, req->tube_len))
		return SLUICE_EMOVING; /* move_place.c */
	if (req->key_len > 0)
		ke = qs_key_for_put(
		    q, req->tube, req->tube_len, req->key, req->key_len);
	if (ke != NULL && ke->task == NULL && req->replace &&
	    ke->expires == QUEUE_MOVE_PLACED)
		return SLUICE_EMOVING; /* its task is still at the source */
	if (ke != NULL && ke->task != NULL && req->replace &&
	    ke->task->state == QUEUE_WAITING)
		return SLUICE_ESTATE; /* its parents decide when it runs */
	if (ke != NULL && ke->task != NULL && req->replace)
		return replace_rec(
		    req, ke->task, ttr, max_attempts, run_at, out, a->res);
	/* The key's task completed within the dedup window, or is still
	 * kept as done: a versioned replace compares with the version of
	 * the work already done, so that a late put of older content does
	 * not run it again. */
	if (ke != NULL && ke->task == NULL && req->if_newer != 0 &&
	    (ke->expires > now || qs_key_task(q, ke) != NULL) &&
	    ke->version >= req->if_newer) {
		out->type = QREC_NONE;
		put_res(a->res, ke->id, false, false);
		a->res->stale = true;
		return 0;
	}
	if (ke != NULL && !req->replace &&
	    (ke->task != NULL || ke->expires > now)) {
		out->type = QREC_NONE;
		return put_res(
		    a->res, ke->task ? ke->task->id : ke->id, false, false);
	}
	/* Done tasks have a bound of their own (max_done). */
	if (q->cfg.max_tasks != 0 &&
	    q->ntasks - q->count[QUEUE_DONE] >= q->cfg.max_tasks)
		return SLUICE_ELIMIT;
	if (!decide_new_tube_allowed(q, req->tube, req->tube_len))
		return SLUICE_ELIMIT;
	out->type = req->if_newer != 0 ? QREC_PUT_V : QREC_PUT;
	out->u.put.version = req->if_newer;
	out->u.put.id = q->next_id;
	out->u.put.tube = req->tube;
	out->u.put.tube_len = req->tube_len;
	out->u.put.payload = req->payload;
	out->u.put.payload_len = req->payload_len;
	out->u.put.key = req->key;
	out->u.put.key_len = req->key_len;
	out->u.put.pri = req->pri;
	out->u.put.ttr = ttr;
	out->u.put.max_attempts = max_attempts;
	out->u.put.run_at = run_at;
	out->u.put.period = req->period_ms;
	put_group_set(req, &out->u.put, &out->type);
	if ((req->nafter > 0 || req->nafter_keys > 0) &&
	    (rc = deps_decide_put(q, req, &out->u.put, &out->type)) != 0)
		return rc;
	if (req->batch_len > 0 &&
	    (rc = batch_decide_put(q, req, &out->u.put, &out->type)) != 0)
		return rc;
	return put_res(a->res, q->next_id, true, false);
}

int
queue_decide_put(struct queue *q, int64_t now, const struct queue_put_req *req,
    struct qrec *result, struct queue_put_res *res)
{
	struct put_args a = { req, res, false };

	if ((req->debounce_ms != 0 || req->throttle_ms != 0) &&
	    (req->nafter > 0 || req->nafter_keys > 0))
		return SLUICE_EINVAL; /* parents with a deduplication mode */
	if (req->debounce_ms != 0 || req->throttle_ms != 0)
		return queue_decide_put_mode(q, now, req, result, res);
	return decide_run(q, now, put_rec, &a, result);
}

int
queue_decide_put_copy(struct queue *q, int64_t now,
    const struct queue_put_req *req, struct qrec *result,
    struct queue_put_res *res)
{
	struct put_args a = { req, res, true };

	return decide_run(q, now, put_rec, &a, result);
}

static int
take_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_take_req *req = arg;
	struct task *best = NULL;
	bool paused = false;

	(void)now;
	if (req->ntubes == 0)
		return SLUICE_EINVAL;
	if (req->ntubes > q->cfg.max_take_tubes)
		return SLUICE_ELIMIT;
	for (size_t i = 0; i < req->ntubes; i++)
		if (!qrec_tube_valid(req->tubes[i].p, req->tubes[i].len))
			return SLUICE_ETUBE;
	for (size_t i = 0; i < req->ntubes; i++) {
		const struct queue_str *s = &req->tubes[i];
		struct tube *tb;
		struct task *top;

		tb = qs_tube(q, s->p, s->len);
		if (tb == NULL || tb->moving_out) /* move.h */
			continue;
		top = tb->groups == NULL ? heap_top(&tb->ready)
		                         : groups_top(tb->groups);
		if (top == NULL)
			continue;
		if (tb->paused_until != 0) {
			paused = true;
			continue;
		}
		/* its flow limits: held back, it is as if it were empty */
		if (tb->flow != NULL &&
		    (best == NULL || tube_ready_less(top, best)) &&
		    qs_flow_admit(q, tb, now) != FLOW_OPEN)
			continue;
		if (best == NULL || tube_ready_less(top, best))
			best = top;
		if (req->strict)
			break; /* the first tube in order with a task wins */
	}
	if (best == NULL)
		return paused ? SLUICE_EPAUSED : SLUICE_ETIMEDOUT;
	out->type = QREC_TAKE;
	out->u.take.id = best->id;
	out->u.take.session = req->session;
	out->u.take.detached = req->detached;
	return 0;
}

int
queue_decide_take(struct queue *q, int64_t now,
    const struct queue_take_req *req, struct qrec *result)
{
	return decide_run(q, now, take_rec, req, result);
}

/* The first run_at + k * period (k >= 1) after now. */
static int64_t
next_run(int64_t run_at, int64_t period, int64_t now)
{
	int64_t k = 1;

	if (run_at < now)
		k = (now - run_at) / period + 1;
	return clamp_time(run_at + k * period);
}

static int
ack_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_ack_req *req = arg;
	struct task *t;
	int64_t keep;
	int rc;

	if (req->to_tube_len > 0 &&
	    !qrec_tube_valid(req->to_tube, req->to_tube_len))
		return SLUICE_ETUBE;
	if (req->result_len > QUEUE_RESULT_MAX)
		return SLUICE_ERESULT;
	if (req->result_len > 0 && req->result == NULL)
		return SLUICE_EINVAL;
	if ((rc = leased(q, req->id, req->lease, req->force, &t)) != 0)
		return rc;
	if (task_has_repl(t)) {
		end_rec(out, QREC_ACK, t, QREC_BY_CLIENT, QREC_REPLACED);
	} else if (req->to_tube_len > 0) {
		if (!decide_new_tube_allowed(q, req->to_tube, req->to_tube_len))
			return SLUICE_ELIMIT;
		end_rec(out, QREC_ACK, t, QREC_BY_CLIENT, QREC_MOVED);
		out->u.end.text = req->to_tube;
		out->u.end.text_len = req->to_tube_len;
	} else if (task_period(t) > 0) {
		end_rec(out, QREC_ACK, t, QREC_BY_CLIENT, QREC_WAIT);
		out->u.end.run_at = next_run(t->run_at, task_period(t), now);
	} else if ((keep = queue_keep_done_ms(q, qs_tube_of(q, t)->name,
	                qs_tube_of(q, t)->name_len)) > 0) {
		end_rec(out, QREC_ACK, t, QREC_BY_CLIENT, QREC_DONE);
		out->u.end.dedup_ms = task_has_key(t) ? q->cfg.dedup_ms : 0;
		out->u.end.keep_ms = keep;
		out->u.end.max_done = q->cfg.max_done;
		out->u.end.text = req->result;
		out->u.end.text_len = req->result_len;
	} else {
		end_rec(out, QREC_ACK, t, QREC_BY_CLIENT, QREC_DELETED);
		out->u.end.dedup_ms = task_has_key(t) ? q->cfg.dedup_ms : 0;
		if (req->result_len > 0) { /* kept in its outcome */
			out->type = QREC_ACK_R;
			out->u.end.result = req->result;
			out->u.end.result_len = req->result_len;
		}
	}
	deps_ack_result(q, req->result, req->result_len, out);
	return 0;
}

int64_t
queue_keep_done_ms(const struct queue *q, const char *tube, size_t tube_len)
{
	return queue_tube_keep_done_ms(q, qs_tube(q, tube, tube_len));
}

int
queue_decide_ack(struct queue *q, int64_t now, const struct queue_ack_req *req,
    struct qrec *result)
{
	return decide_run(q, now, ack_rec, req, result);
}

static int
release_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_release_req *req = arg;
	struct task *t;
	int64_t run_at;
	int rc;

	if (req->front && (req->run_at != 0 || req->delay_ms != 0))
		return SLUICE_EINVAL;
	if ((rc = when(now, req->run_at, req->delay_ms, &run_at)) != 0)
		return rc;
	if ((rc = leased(q, req->id, req->lease, req->force, &t)) != 0)
		return rc;
	if (task_has_repl(t)) {
		end_rec(out, QREC_RELEASE, t, QREC_BY_CLIENT, QREC_REPLACED);
		return 0;
	}
	end_rec(out, QREC_RELEASE, t, QREC_BY_CLIENT, QREC_WAIT);
	/* A taken task kept the run_at it was ready from (a take changes
	 * none), at or before now: the RELEASE needs nothing new. */
	out->u.end.run_at = req->front ? t->run_at : run_at;
	out->u.end.pri = req->set_pri ? req->pri : t->pri;
	return 0;
}

int
queue_decide_release(struct queue *q, int64_t now,
    const struct queue_release_req *req, struct qrec *result)
{
	return decide_run(q, now, release_rec, req, result);
}

static int
fail_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_fail_req *req = arg;
	struct task *t;
	int rc;

	if (req->error_len > q->cfg.max_error)
		return SLUICE_ELIMIT;
	if (req->error_len > 0 && req->error == NULL)
		return SLUICE_EINVAL;
	if (req->set_delay && !decide_time_ok(req->delay_ms))
		return SLUICE_EINVAL;
	if ((rc = leased(q, req->id, req->lease, req->force, &t)) != 0)
		return rc;
	if (task_has_repl(t)) {
		end_rec(out, QREC_FAIL, t, QREC_BY_CLIENT, QREC_REPLACED);
	} else if (req->fatal || at_max_attempts(t)) {
		/* A fatal fail is a bury by the worker: it follows the tube's
		 * dead letter like every other. */
		bury_rec_of(q, out, QREC_FAIL, t, QREC_BY_CLIENT);
	} else {
		end_rec(out, QREC_FAIL, t, QREC_BY_CLIENT, QREC_WAIT);
		out->u.end.run_at = clamp_time(now +
		    (req->set_delay
		            ? req->delay_ms
		            : backoff(q, qs_tube_of(q, t), t->attempts)));
	}
	out->u.end.text = req->error;
	out->u.end.text_len = req->error_len;
	return 0;
}

int
queue_decide_fail(struct queue *q, int64_t now,
    const struct queue_fail_req *req, struct qrec *result)
{
	return decide_run(q, now, fail_rec, req, result);
}

static int
touch_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_touch_req *req = arg;
	struct task *t;
	int rc;

	(void)now;
	if ((rc = leased(q, req->id, req->lease, req->force, &t)) != 0)
		return rc;
	out->type = QREC_TOUCH;
	out->u.touch.id = t->id;
	out->u.touch.lease = t->ext->lease;
	return 0;
}

int
queue_decide_touch(struct queue *q, int64_t now,
    const struct queue_touch_req *req, struct qrec *result)
{
	return decide_run(q, now, touch_rec, req, result);
}

static int
bury_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_bury_req *req = arg;
	uint16_t type = req->error_len > 0 ? QREC_SETBACK : QREC_BURY;
	struct task *t;
	int rc;

	(void)now;
	if (req->error_len > q->cfg.max_error)
		return SLUICE_ELIMIT;
	if (req->error_len > 0 && req->error == NULL)
		return SLUICE_EINVAL;
	if ((t = qs_task_seen(q, req->id)) == NULL)
		return SLUICE_ENOTFOUND;
	if (t->state == QUEUE_READY || t->state == QUEUE_DELAYED) {
		/* Only an operator parks a task nobody holds. */
		if (!req->force)
			return SLUICE_ESTATE;
		end_rec(out, type, t, QREC_BY_CLIENT, QREC_BURIED);
	} else {
		if ((rc = leased(q, req->id, req->lease, req->force, &t)) != 0)
			return rc;
		if (task_has_repl(t))
			end_rec(out, type, t, QREC_BY_CLIENT, QREC_REPLACED);
		else
			bury_rec_of(q, out, type, t, QREC_BY_CLIENT);
	}
	out->u.end.text = req->error;
	out->u.end.text_len = req->error_len;
	return 0;
}

int
queue_decide_bury(struct queue *q, int64_t now,
    const struct queue_bury_req *req, struct qrec *result)
{
	return decide_run(q, now, bury_rec, req, result);
}

static int
kick_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_kick_req *req = arg;
	struct task *t;
	struct tube *tb;

	(void)now;
	if (req->id != 0) {
		if ((t = qs_task_seen(q, req->id)) == NULL)
			return SLUICE_ENOTFOUND;
		if (t->state != QUEUE_BURIED && t->state != QUEUE_DELAYED)
			return SLUICE_ESTATE;
	} else {
		if (!qrec_tube_valid(req->tube, req->tube_len))
			return SLUICE_ETUBE;
		tb = qs_tube(q, req->tube, req->tube_len);
		if (tb == NULL || (t = heap_top(&tb->buried)) == NULL)
			return SLUICE_ENOTFOUND;
	}
	out->type = QREC_KICK;
	out->u.kick.id = t->id;
	return 0;
}

int
queue_decide_kick(struct queue *q, int64_t now,
    const struct queue_kick_req *req, struct qrec *result)
{
	return decide_run(q, now, kick_rec, req, result);
}

static int
delete_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_delete_req *req = arg;
	struct task *t;
	struct keyent *ke;

	(void)now;
	if (req->id != 0) {
		t = qs_task_seen(q, req->id);
	} else {
		if (req->key_len == 0)
			return SLUICE_EINVAL;
		if (req->key_len > QREC_KEY_MAX || req->key == NULL)
			return SLUICE_EKEY;
		if (!qrec_tube_valid(req->tube, req->tube_len))
			return SLUICE_ETUBE;
		ke =
		    qs_key(q, req->tube, req->tube_len, req->key, req->key_len);
		/* a done task only while its key is reserved (not held) */
		t = ke != NULL && ke->task == NULL && ke->held
		    ? NULL
		    : qs_key_task(q, ke);
	}
	if (t == NULL)
		return SLUICE_ENOTFOUND;
	/* A cancelled task's key is free at once: the dedup window is for
	 * work that was done, so that it is not done twice. */
	out->type = QREC_DELETE;
	out->u.del.id = t->id;
	out->u.del.dedup_ms = 0;
	return 0;
}

int
queue_decide_delete(struct queue *q, int64_t now,
    const struct queue_delete_req *req, struct qrec *result)
{
	return decide_run(q, now, delete_rec, req, result);
}

static int
update_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_update_req *req = arg;
	struct qrec_update *u = &out->u.update;
	struct task *t;
	int64_t run_at = 0;
	int rc;

	if (!req->set_pri && !req->set_run_at && !req->set_ttr &&
	    !req->set_max_attempts && !req->set_payload)
		return SLUICE_EINVAL;
	if (req->set_ttr &&
	    (req->ttr_ms == 0 || req->ttr_ms > q->cfg.max_ttr_ms))
		return SLUICE_EINVAL;
	if (req->set_payload && req->payload_len > q->cfg.max_payload)
		return SLUICE_ETOOBIG;
	if (req->set_payload && req->payload_len > 0 && req->payload == NULL)
		return SLUICE_EINVAL;
	if (req->set_run_at &&
	    (rc = when(now, req->run_at, req->delay_ms, &run_at)) != 0)
		return rc;
	if ((t = qs_task_seen(q, req->id)) == NULL)
		return SLUICE_ENOTFOUND;
	/* A worker holds the task as it is; only where it goes when it comes
	 * back may change. A buried task waits for a kick, not a time. */
	if (t->state == QUEUE_TAKEN &&
	    (req->set_run_at || req->set_ttr || req->set_max_attempts ||
	        req->set_payload))
		return SLUICE_ESTATE;
	if ((t->state == QUEUE_BURIED && req->set_run_at) ||
	    t->state == QUEUE_DONE ||  /* finished: history, not work */
	    t->state == QUEUE_WAITING) /* its parents decide when */
		return SLUICE_ESTATE;
	out->type = QREC_UPDATE;
	u->id = t->id;
	u->pri = req->set_pri ? req->pri : t->pri;
	u->run_at = req->set_run_at ? run_at : t->run_at;
	u->ttr = req->set_ttr ? req->ttr_ms : t->ttr;
	u->max_attempts =
	    req->set_max_attempts ? req->max_attempts : t->max_attempts;
	u->has_payload = req->set_payload;
	u->payload = req->payload;
	u->payload_len = req->set_payload ? req->payload_len : 0;
	return 0;
}

int
queue_decide_update(struct queue *q, int64_t now,
    const struct queue_update_req *req, struct qrec *result)
{
	return decide_run(q, now, update_rec, req, result);
}

static int
expired_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	struct task *t = heap_top(&q->taken);

	(void)arg;
	if (t == NULL || t->ext->deadline > now)
		return SLUICE_ENOTFOUND;
	if (t->ttr % 1000 == 0)
		snprintf(q->why, sizeof(q->why),
		    "ttr expired after %" PRIu32 "s", t->ttr / 1000);
	else
		snprintf(q->why, sizeof(q->why),
		    "ttr expired after %" PRIu32 "ms", t->ttr);
	lost_lease(q, t, now, QREC_BY_TTR, q->why, strlen(q->why), false, out);
	return 0;
}

int
queue_decide_expired(struct queue *q, int64_t now, struct qrec *result)
{
	return decide_run(q, now, expired_rec, NULL, result);
}

struct gone_args {
	uint64_t session;
	const char *why;
	size_t why_len;
};

static int
session_gone_rec(
    struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct gone_args *a = arg;
	struct task *t;

	if (a->why_len > 0 && a->why == NULL)
		return SLUICE_EINVAL;
	if ((t = idx_find(&q->sessions, a->session)) == NULL)
		return SLUICE_ENOTFOUND;
	lost_lease(q, t, now, QREC_BY_SESSION, a->why, a->why_len, false, out);
	return 0;
}

int
queue_decide_session_gone(struct queue *q, int64_t now, uint64_t session,
    const char *why, size_t why_len, struct qrec *result)
{
	struct gone_args a = { session, why, why_len };

	return decide_run(q, now, session_gone_rec, &a, result);
}

static int
restart_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct gone_args *a = arg;

	if (a->why_len > 0 && a->why == NULL)
		return SLUICE_EINVAL;
	for (uint32_t i = 0; i < q->sessions.cap; i++) {
		struct task *t = idx_at(&q->sessions, i);

		if (t != NULL) {
			lost_lease(q, t, now, QREC_BY_SESSION, a->why,
			    a->why_len, true, out);
			return 0;
		}
	}
	return SLUICE_ENOTFOUND;
}

int
queue_decide_restart(struct queue *q, int64_t now, const char *why,
    size_t why_len, struct qrec *result)
{
	struct gone_args a = { 0, why, why_len };

	return decide_run(q, now, restart_rec, &a, result);
}

struct untake_args {
	uint64_t id;
	uint64_t lease;
};

static int
untake_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct untake_args *a = arg;
	struct task *t;
	int rc;

	(void)now;
	if ((rc = leased(q, a->id, a->lease, false, &t)) != 0)
		return rc;
	end_rec(out, QREC_UNTAKE, t, QREC_BY_CLIENT,
	    task_has_repl(t) ? QREC_REPLACED : QREC_WAIT);
	return 0;
}

int
queue_decide_untake(struct queue *q, int64_t now, uint64_t id, uint64_t lease,
    struct qrec *result)
{
	struct untake_args a = { id, lease };

	return decide_run(q, now, untake_rec, &a, result);
}
