/* flow - a tube's flow limits (flow.h has the design): the token bucket,
 * the cap, the heap of tubes that wait for a token, and the decision,
 * apply, snapshot and view of a TUBE_LIMIT. */
#include <stdlib.h>
#include <string.h>

#include "queue/decide.h"
#include "queue/flow.h"
#include "queue/qstate.h"
#include "sluice.h"

bool
flow_due_less(const void *a, const void *b)
{
	const struct flow *x = a, *y = b;

	if (x->due != y->due)
		return x->due < y->due;
	return x->tube->index < y->tube->index;
}

/* ---- the bucket ------------------------------------------------------ */

static uint64_t
bucket_cap(const struct flow *f)
{
	return (uint64_t)f->lim.burst * f->lim.per_ms;
}

/* The credit at `now`: what it was at stamp and what the time since
 * brought, at most the cap. A clock behind the stamp (a new leader's)
 * brings nothing. */
static uint64_t
credit_at(const struct flow *f, int64_t now)
{
	uint64_t cap = bucket_cap(f), el;

	if (now <= f->stamp)
		return f->credit < cap ? f->credit : cap;
	el = (uint64_t)(now - f->stamp);
	if (el > cap / f->lim.rate) /* fills it whatever it held */
		return cap;
	return f->credit + el * f->lim.rate < cap ? f->credit + el * f->lim.rate
	                                          : cap;
}

static void
refill(struct flow *f, int64_t now)
{
	f->credit = credit_at(f, now);
	if (now > f->stamp)
		f->stamp = now;
}

uint64_t
flow_tokens(const struct flow *f, int64_t now)
{
	if (f == NULL || !(f->lim.set & QREC_LIM_RATE))
		return 0;
	return credit_at(f, now) / f->lim.per_ms;
}

/* When the bucket, short of a token at its stamp, has one. */
static int64_t
token_due(const struct flow *f)
{
	uint64_t need = f->lim.per_ms - f->credit;

	return f->stamp + (int64_t)((need + f->lim.rate - 1) / f->lim.rate);
}

/* ---- takes ------------------------------------------------------------ */

enum flow_hold
qs_flow_admit(struct queue *q, struct tube *tb, int64_t now)
{
	struct flow *f = tb->flow;

	if ((f->lim.set & QREC_LIM_CONCURRENCY) &&
	    tb->ntaken >= f->lim.concurrency) {
		f->held_conc++;
		return FLOW_CONCURRENCY;
	}
	if (!(f->lim.set & QREC_LIM_RATE))
		return FLOW_OPEN;
	refill(f, now);
	if (f->credit >= f->lim.per_ms)
		return FLOW_OPEN;
	f->held_rate++;
	f->due = token_due(f);
	if (f->hpos == HEAP_NONE)
		heap_push(&q->flows, f);
	else
		heap_fix(&q->flows, f);
	return FLOW_RATE;
}

void
qs_flow_took(struct tube *tb, int64_t time)
{
	struct flow *f = tb->flow;

	if (f == NULL || !(f->lim.set & QREC_LIM_RATE))
		return;
	refill(f, time);
	/* A record decided on a clock ahead of this one (a follower's, a
	 * replay's) may find less than a token: the bucket is empty. */
	f->credit = f->credit >= f->lim.per_ms ? f->credit - f->lim.per_ms : 0;
}

void
qs_flow_freed(struct queue *q, struct tube *tb)
{
	if ((tb->flow->lim.set & QREC_LIM_CONCURRENCY) && tube_nready(tb) > 0 &&
	    q->on_ready != NULL)
		q->on_ready(q->on_ready_arg, tb->name, tb->name_len);
}

void
qs_flow_tick(struct queue *q, int64_t now)
{
	struct flow *f;

	while ((f = heap_top(&q->flows)) != NULL && f->due <= now) {
		heap_remove(&q->flows, f);
		if (tube_nready(f->tube) > 0 && q->on_ready != NULL)
			q->on_ready(
			    q->on_ready_arg, f->tube->name, f->tube->name_len);
	}
}

int64_t
qs_flow_next(const struct queue *q)
{
	const struct flow *f = heap_top(&q->flows);

	return f != NULL ? f->due : INT64_MAX;
}

/* ---- setting them ----------------------------------------------------- */

int
qs_flow_set(
    struct queue *q, struct tube *tb, const struct qrec_limits *l, int64_t now)
{
	struct flow *f;

	if (l->set == 0) {
		qs_flow_drop(q, tb);
		return 0;
	}
	if ((f = tb->flow) == NULL) {
		if ((f = calloc(1, sizeof(*f))) == NULL)
			return SLUICE_ENOMEM;
		/* room on the flows heap for every limited tube at once, kept
		 * (noshrink): the reservation counts from the heap's length */
		if (heap_reserve(&q->flows, q->nflows + 1 - q->flows.len) !=
		    0) {
			free(f);
			return SLUICE_ENOMEM;
		}
		f->tube = tb;
		f->hpos = HEAP_NONE;
		tb->flow = f;
		q->nflows++;
	}
	f->lim = *l;
	f->stamp = now;
	f->credit = (l->set & QREC_LIM_RATE) ? bucket_cap(f) : 0;
	if (f->hpos != HEAP_NONE)
		heap_remove(&q->flows, f);
	/* a take the old limits held may go now */
	if (tube_nready(tb) > 0 && q->on_ready != NULL)
		q->on_ready(q->on_ready_arg, tb->name, tb->name_len);
	return 0;
}

void
qs_flow_drop(struct queue *q, struct tube *tb)
{
	struct flow *f = tb->flow;

	if (f == NULL)
		return;
	if (f->hpos != HEAP_NONE)
		heap_remove(&q->flows, f);
	tb->flow = NULL;
	q->nflows--;
	free(f);
	if (tube_nready(tb) > 0 && q->on_ready != NULL)
		q->on_ready(q->on_ready_arg, tb->name, tb->name_len);
}

const char *
queue_limits_broken(const struct qrec_limits *l)
{
	if ((l->set & ~QREC_LIM_ALL) != 0)
		return "unknown limit";
	if (l->set & QREC_LIM_RATE) {
		if (l->per_ms != 1000 && l->per_ms != 60000 &&
		    l->per_ms != 3600000)
			return "a rate is per second, minute or hour (/s, /m, "
			       "/h)";
		if (l->rate == 0)
			return "a rate of 0 would take nothing: pause the tube "
			       "instead";
		if ((uint64_t)l->rate * 1000 >
		    (uint64_t)QREC_RATE_MAX * l->per_ms)
			return "a rate over 1000000/s";
		if (l->burst == 0)
			return "a burst of 0 would take nothing";
		if (l->burst > QREC_BURST_MAX)
			return "a burst over 1000000";
		if ((uint64_t)l->burst * l->per_ms < l->rate)
			return "a burst below the tokens one millisecond "
			       "brings "
			       "at this rate (it would cap the rate)";
	}
	if ((l->set & QREC_LIM_CONCURRENCY) &&
	    (l->concurrency == 0 || l->concurrency > QREC_CONCURRENCY_MAX))
		return l->concurrency == 0
		    ? "a concurrency of 0 would take nothing: pause the tube "
		      "instead"
		    : "a concurrency over 1000000";
	return NULL;
}

void
queue_limits_change(struct qrec_limits *l, const struct qrec_limits *lim,
    uint8_t set, uint8_t unset)
{
	if (set & QREC_LIM_RATE) {
		l->rate = lim->rate;
		l->per_ms = lim->per_ms;
		l->burst = lim->burst;
	}
	if (unset & QREC_LIM_RATE)
		l->rate = l->per_ms = l->burst = 0;
	if (set & QREC_LIM_CONCURRENCY)
		l->concurrency = lim->concurrency;
	if (unset & QREC_LIM_CONCURRENCY)
		l->concurrency = 0;
	l->set = (uint8_t)((l->set | set) & ~unset);
}

uint32_t
queue_limits_default_burst(uint32_t rate, uint32_t per_ms)
{
	/* the tokens of 100 ms, rounded up, at least 1 */
	uint64_t b = per_ms ? ((uint64_t)rate * 100 + per_ms - 1) / per_ms : 1;

	if (b < 1)
		b = 1;
	return b > QREC_BURST_MAX ? QREC_BURST_MAX : (uint32_t)b;
}

static int
limit_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_tube_limit_req *req = arg;
	struct qrec_limits l = { 0 };
	const struct tube *tb;

	(void)now;
	if (!qrec_tube_valid(req->tube, req->tube_len))
		return SLUICE_ETUBE;
	if (((req->set | req->unset) & ~QREC_LIM_ALL) != 0 ||
	    (req->set & req->unset) != 0)
		return SLUICE_EINVAL;
	if ((tb = qs_tube(q, req->tube, req->tube_len)) == NULL)
		return SLUICE_ENOTFOUND;
	if (tb->flow != NULL)
		l = tb->flow->lim;
	queue_limits_change(&l, &req->lim, req->set, req->unset);
	if (!qrec_limits_valid(&l))
		return SLUICE_EINVAL;
	if (tb->flow != NULL ? qrec_limits_equal(&l, &tb->flow->lim)
	                     : l.set == 0)
		return 0; /* QREC_NONE: nothing changes */
	out->type = QREC_TUBE_LIMIT;
	out->u.tube_limit.tube = req->tube;
	out->u.tube_limit.tube_len = req->tube_len;
	out->u.tube_limit.lim = l;
	return 0;
}

int
queue_decide_tube_limit(struct queue *q, int64_t now,
    const struct queue_tube_limit_req *req, struct qrec *out)
{
	return decide_run(q, now, limit_rec, req, out);
}

int
qs_apply_tube_limit(
    struct queue *q, int64_t time, const struct qrec_tube_limit *r)
{
	struct tube *tb = qs_tube(q, r->tube, r->tube_len);

	if (tb == NULL)
		return SLUICE_ECORRUPT;
	return qs_flow_set(q, tb, &r->lim, time);
}

/* ---- what a client sees ------------------------------------------------ */

int
queue_tube_flow(struct queue *q, const char *name, size_t len, int64_t now,
    struct queue_flow_view *out)
{
	const struct tube *tb;
	struct queue_flow_view v = { 0 };

	if (!qrec_tube_valid(name, len))
		return SLUICE_ETUBE;
	if ((tb = qs_tube(q, name, len)) == NULL)
		return SLUICE_ENOTFOUND;
	v.taken = tb->ntaken;
	if (tb->flow != NULL) {
		const struct flow *f = tb->flow;

		v.lim = f->lim;
		v.tokens = flow_tokens(f, now > q->clock ? now : q->clock);
		v.held_rate = f->held_rate;
		v.held_conc = f->held_conc;
		if (tube_nready(tb) > 0) {
			if ((f->lim.set & QREC_LIM_CONCURRENCY) &&
			    tb->ntaken >= f->lim.concurrency)
				v.holding = FLOW_CONCURRENCY;
			else if ((f->lim.set & QREC_LIM_RATE) && v.tokens == 0)
				v.holding = FLOW_RATE;
		}
		if (v.holding != FLOW_OPEN && tb->paused_until == 0)
			v.held_tasks = tube_nready(tb);
	}
	*out = v;
	return 0;
}

/* ---- snapshot ------------------------------------------------------------ */

int
qs_flow_load(struct queue *q, struct rd *r)
{
	struct tube *tb = q->ntubes > 0 ? q->tubes[q->ntubes - 1] : NULL;
	struct qrec_limits l;

	qrec_limits_get(r, &l);
	if (rd_failed(r) || rd_left(r) != 0 || tb == NULL || tb->flow != NULL ||
	    l.set == 0 || !qrec_limits_valid(&l))
		return SLUICE_ECORRUPT;
	return qs_flow_set(q, tb, &l, q->clock);
}
