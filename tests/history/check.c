/* check - the rules of history.h over a whole history.
 *
 * The operations are sorted by invocation time; then three indexes are
 * built over them: by task id, by payload key, and the crashes in time
 * order (with the latest end so far, so "did a crash fall between a and
 * b" is one binary search). Each rule then looks at one task's operations
 * at a time, which are few, so the check is O(n log n) over the history.
 *
 * Two orders are used and never mixed up:
 * - real time: an operation that completed before another was invoked
 *   happened before it (the clock is one process's CLOCK_MONOTONIC);
 *   an unknown operation may take effect at any time after its
 *   invocation, even after the client gave up, so it is never said to
 *   have happened before anything;
 * - lease order: leases of the sluice protocol are tokens that grow with
 *   the log (lsn + epoch * 2^32, across crashes and failovers), so two
 *   takes of a task by that face are ordered by their leases whatever
 *   their times. The beanstalk face's reserves have no token and are
 *   ordered by real time only.
 *
 * Why the rules hold for sluice (docs/protocol.md, "When the reply
 * leaves"): every reply that changes a task waits until its record is
 * durable (and on --sync-replicas followers), but a take's reply waits
 * only for the records before its own. So a crash can lose the newest
 * take of a task, never anything before it: what ended the previous
 * lease, the put, earlier takes. Hence "one lower, once, when a crash
 * fell between". */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check_int.h"
#include "history.h"
#include "sluice.h"

struct pair {
	uint64_t k;
	size_t i;
};

struct ctx {
	struct hist *h;
	struct hist_report *r;
	const struct hist_op *ops;
	size_t n;
	const struct pair *by_key; /* puts, takes, finals by payload key */
	size_t nkey;
	size_t *crash;      /* indices of HIST_CRASH, by invocation */
	int64_t *crash_max; /* the latest completion among crash[0..i] */
	size_t ncrash;
};

static int
cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Sorting by invocation, stably: ties by completion, then by the order
 * the history recorded them. */
static int
cmp_time(const void *a, const void *b, void *base)
{
	const struct hist_op *ops = base;
	const struct hist_op *x = &ops[*(const size_t *)a];
	const struct hist_op *y = &ops[*(const size_t *)b];
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (x->invoke != y->invoke)
		return x->invoke < y->invoke ? -1 : 1;
	if (x->complete != y->complete)
		return x->complete < y->complete ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int
sort_ops(struct hist *h)
{
	size_t *idx = malloc((h->n ? h->n : 1) * sizeof(*idx));
	struct hist_op *ops = malloc((h->n ? h->n : 1) * sizeof(*ops));

	if (idx == NULL || ops == NULL) {
		free(idx);
		free(ops);
		return -1;
	}
	for (size_t i = 0; i < h->n; i++)
		idx[i] = i;
	qsort_r(idx, h->n, sizeof(*idx), cmp_time, h->ops);
	for (size_t i = 0; i < h->n; i++)
		ops[i] = h->ops[idx[i]];
	free(idx);
	free(h->ops);
	h->ops = ops;
	h->cap = h->n ? h->n : 1;
	return 0;
}

static bool
is_client_op(const struct hist_op *op)
{
	return op->type >= HIST_PUT && op->type <= HIST_DELETE;
}

static bool
is_lease_op(const struct hist_op *op)
{
	return op->type == HIST_ACK || op->type == HIST_FAIL ||
	    op->type == HIST_RELEASE || op->type == HIST_TOUCH;
}

void
hist_violation_v(struct hist_report *r, const struct hist_op *ops,
    enum hist_rule rule, uint64_t id, uint64_t key, const struct hist_op *a,
    const struct hist_op *b, const char *fmt, va_list ap)
{
	struct hist_violation *v;

	r->violations++;
	r->by_rule[rule]++;
	if (r->nv >= HIST_REPORT_KEEP)
		return;
	v = &r->v[r->nv++];
	v->rule = rule;
	v->id = id;
	v->key = key;
	v->op[0] = a != NULL ? (size_t)(a - ops) : SIZE_MAX;
	v->op[1] = b != NULL ? (size_t)(b - ops) : SIZE_MAX;
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
}

void
hist_violation(struct hist_report *r, const struct hist_op *ops,
    enum hist_rule rule, uint64_t id, uint64_t key, const struct hist_op *a,
    const struct hist_op *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hist_violation_v(r, ops, rule, id, key, a, b, fmt, ap);
	va_end(ap);
}

static void violation(struct ctx *c, enum hist_rule rule, uint64_t id,
    uint64_t key, const struct hist_op *a, const struct hist_op *b,
    const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void
violation(struct ctx *c, enum hist_rule rule, uint64_t id, uint64_t key,
    const struct hist_op *a, const struct hist_op *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hist_violation_v(c->r, c->ops, rule, id, key, a, b, fmt, ap);
	va_end(ap);
}

/* True when a crash of the leader overlaps (a, b): it began before b and
 * ended after a. */
static bool
crash_between(const struct ctx *c, int64_t a, int64_t b)
{
	size_t lo = 0, hi = c->ncrash;

	while (lo < hi) { /* the first crash invoked at or after b */
		size_t mid = lo + (hi - lo) / 2;

		if (c->ops[c->crash[mid]].invoke < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && c->crash_max[lo - 1] > a;
}

/* ---- one task ---------------------------------------------------------- */

/* The operations of one task id, by kind, each in invocation order. */
struct task {
	uint64_t id;
	const struct hist_op **all; /* every operation naming the id */
	size_t nall;
	const struct hist_op **takes; /* takes that succeeded */
	size_t ntakes;
	const struct hist_op *put;   /* the put that answered this id */
	const struct hist_op *final; /* the final read's, or NULL */
	const struct hist_op *done;  /* the first completion that succeeded
	                                (by completion time) */
	uint32_t max;                /* max_attempts */
	bool max_known;
};

/* Leases ordered by the log: libsluice on one cluster. */
static bool
lib(const struct hist_op *op)
{
	return op->face == HIST_LIB;
}

/* A libsluice face: takes report attempts, max_attempts and a lease of
 * the log's (one cluster's for HIST_LIB, either's for HIST_MV). */
static bool
reports(const struct hist_op *op)
{
	return op->face == HIST_LIB || op->face == HIST_MV;
}

/* `a` is a newer take than `b` of the same task. */
static bool
newer(const struct hist_op *a, const struct hist_op *b)
{
	if (lib(a) && lib(b))
		return a->lease > b->lease;
	return a->invoke > b->complete;
}

/* The take that gave the lease `op` used, or NULL. */
static const struct hist_op *
take_of(const struct task *t, const struct hist_op *op)
{
	for (size_t i = 0; i < t->ntakes; i++)
		if (t->takes[i]->lease == op->lease &&
		    t->takes[i]->face == op->face)
			return t->takes[i];
	return NULL;
}

static const char *
state_name(int s)
{
	static const char *const names[] = { "gone", "ready", "delayed",
		"taken", "buried", "done", "waiting" };

	return s >= 0 && s <= 6 ? names[s] : "?";
}

/* Payload keys: one per task id, and each a put's. */
static void
check_keys(struct ctx *c, const struct task *t)
{
	const struct hist_op *first = NULL;

	for (size_t i = 0; i < t->nall; i++) {
		const struct hist_op *op = t->all[i];

		if (op->outcome != HIST_OK ||
		    (op->type != HIST_PUT && op->type != HIST_TAKE &&
		        op->type != HIST_FINAL))
			continue;
		if (op->key == 0) {
			violation(c, HIST_R_INTEGRITY, t->id, 0, op, NULL,
			    "task %" PRIu64 ": %s whose payload is no "
			    "put's",
			    t->id, hist_type_name(op->type));
			return;
		}
		if (first == NULL) {
			first = op;
		} else if (op->key != first->key) {
			violation(c, HIST_R_INTEGRITY, t->id, op->key, first,
			    op,
			    "task %" PRIu64 " carries the payloads of two "
			    "puts (keys %" PRIx64 " and %" PRIx64 ")",
			    t->id, first->key, op->key);
			return;
		}
	}
}

static void
check_states(struct ctx *c, const struct task *t)
{
	for (size_t i = 0; i < t->nall; i++) {
		const struct hist_op *op = t->all[i];
		bool bad = false;

		if (op->outcome != HIST_OK)
			continue;
		if (op->type == HIST_ACK)
			bad = op->state != HIST_STATE_NONE && op->state != 0;
		else if (op->type == HIST_RELEASE)
			bad = op->state != HIST_STATE_NONE &&
			    op->state != SLUICE_READY &&
			    op->state != SLUICE_DELAYED;
		else if (op->type == HIST_TOUCH)
			bad = op->state != HIST_STATE_NONE &&
			    op->state != SLUICE_TAKEN;
		else if (op->type == HIST_TAKE && reports(op))
			bad = op->attempts == 0 || op->lease == 0;
		if (bad) {
			violation(c, HIST_R_INTEGRITY, t->id, op->key, op, NULL,
			    "task %" PRIu64 ": %s answered %s", t->id,
			    hist_type_name(op->type),
			    op->type == HIST_TAKE ? "no lease or no attempt"
			                          : state_name(op->state));
		}
	}
	if (t->final != NULL && t->final->state == SLUICE_TAKEN)
		violation(c, HIST_R_INTEGRITY, t->id, t->final->key, t->final,
		    NULL,
		    "task %" PRIu64 " is still taken at the end, after every "
		    "session closed and every ttr ran out",
		    t->id);
}

static void
check_completion(struct ctx *c, const struct task *t)
{
	const struct hist_op *second = NULL, *d = t->done;

	if (d == NULL)
		return;
	for (size_t i = 0; i < t->nall; i++) {
		const struct hist_op *op = t->all[i];

		if (op != d && op->outcome == HIST_OK &&
		    (op->type == HIST_ACK || op->type == HIST_DELETE)) {
			second = op;
			break;
		}
	}
	if (second != NULL)
		violation(c, HIST_R_TWICE, t->id, 0, d, second,
		    "task %" PRIu64 " was completed twice", t->id);
	for (size_t i = 0; i < t->nall; i++) {
		const struct hist_op *op = t->all[i];

		if (op == d || op->outcome != HIST_OK || !is_client_op(op) ||
		    op->type == HIST_ACK || op->type == HIST_DELETE ||
		    op->type == HIST_PUT)
			continue;
		if (op->invoke > d->complete) {
			violation(c, HIST_R_REVIVED, t->id, 0, d, op,
			    "task %" PRIu64 ": %s succeeded after the task "
			    "was completed",
			    t->id, hist_type_name(op->type));
			return;
		}
		if (op->type == HIST_TAKE && d->type == HIST_ACK && lib(d) &&
		    lib(op) && op->lease > d->lease) {
			violation(c, HIST_R_REVIVED, t->id, 0, d, op,
			    "task %" PRIu64 " was taken under lease %" PRIu64
			    ", newer than the lease %" PRIu64
			    " an ack that succeeded ended",
			    t->id, op->lease, d->lease);
			return;
		}
	}
	if (t->final != NULL && c->h->final_complete)
		violation(c, HIST_R_REVIVED, t->id, 0, d, t->final,
		    "task %" PRIu64 " is present at the end (%s) though it "
		    "was completed",
		    t->id, state_name(t->final->state));
}

/* Exclusivity: a lease operation succeeds only while its lease is the
 * newest, so never after a newer take was answered. */
static void
check_leases(struct ctx *c, const struct task *t)
{
	for (size_t i = 0; i < t->nall; i++) {
		const struct hist_op *op = t->all[i], *t0;

		if (!is_lease_op(op) || op->outcome != HIST_OK)
			continue;
		if ((t0 = take_of(t, op)) == NULL) {
			violation(c, HIST_R_INTEGRITY, t->id, 0, op, NULL,
			    "task %" PRIu64 ": %s succeeded with a lease no "
			    "answered take of it gave",
			    t->id, hist_type_name(op->type));
			continue;
		}
		for (size_t k = 0; k < t->ntakes; k++) {
			const struct hist_op *tk = t->takes[k];

			if (tk != t0 && newer(tk, t0) &&
			    tk->complete < op->invoke) {
				violation(c, HIST_R_STALE, t->id, 0, tk, op,
				    "task %" PRIu64 ": %s with lease %" PRIu64
				    " succeeded after a newer take (lease "
				    "%" PRIu64 ") was answered",
				    t->id, hist_type_name(op->type), op->lease,
				    tk->lease);
				break;
			}
		}
	}
}

static int
cmp_lease(const void *a, const void *b)
{
	const struct hist_op *x = *(const struct hist_op *const *)a;
	const struct hist_op *y = *(const struct hist_op *const *)b;

	if (x->lease != y->lease)
		return x->lease < y->lease ? -1 : 1;
	return x->invoke < y->invoke ? -1 : x->invoke > y->invoke;
}

/* Attempts never go down: from take to take in lease order, and from the
 * last take to the end; one lower only across a crash. */
static void
check_attempts(
    struct ctx *c, struct task *t, const struct hist_op **lt, size_t nlt)
{
	const struct hist_op *last = NULL;
	bool by_time = nlt > 0 && !lib(lt[0]);

	/* a moving tube's takes (HIST_MV) come in invocation order (the
	 * history is sorted so); two that overlap are not ordered */
	if (!by_time)
		qsort(lt, nlt, sizeof(*lt), cmp_lease);
	for (size_t i = 0; i < nlt; i++) {
		const struct hist_op *q = lt[i];

		if (by_time && last != NULL && q->invoke < last->complete)
			continue;
		if (last != NULL) {
			uint32_t slack =
			    crash_between(c, last->invoke, q->complete) ? 1 : 0;

			if (slack && q->attempts == last->attempts)
				c->r->uncounted++;
			if ((uint64_t)q->attempts + slack <
			    (uint64_t)last->attempts + 1) {
				violation(c, HIST_R_ATTEMPTS, t->id, 0, last, q,
				    "task %" PRIu64 ": attempts %" PRIu32
				    " at a take after one at %" PRIu32 "%s",
				    t->id, q->attempts, last->attempts,
				    slack ? " (one crash between)"
				          : " (no crash between)");
				return;
			}
		}
		last = q;
	}
	if (last != NULL && t->final != NULL && c->h->final_complete) {
		uint32_t slack =
		    crash_between(c, last->invoke, c->h->final_at) ? 1 : 0;

		if (slack && t->final->attempts + 1 == last->attempts)
			c->r->uncounted++;
		if ((uint64_t)t->final->attempts + slack < last->attempts)
			violation(c, HIST_R_ATTEMPTS, t->id, 0, last, t->final,
			    "task %" PRIu64 ": attempts %" PRIu32
			    " at the end after a take at %" PRIu32 "%s",
			    t->id, t->final->attempts, last->attempts,
			    slack ? " (one crash between)"
			          : " (no crash between)");
	}
}

/* A release of `t` (any outcome but refused, invoked before `before`)
 * that put the task back at `attempts`: a beanstalk release (its
 * reserve's attempts are not reported), or one of a take that reported
 * exactly that many. */
static bool
released_at(const struct task *t, uint32_t attempts, int64_t before)
{
	for (size_t i = 0; i < t->nall; i++) {
		const struct hist_op *op = t->all[i], *t0;

		if (op->type != HIST_RELEASE || op->outcome == HIST_ERR ||
		    op->invoke >= before)
			continue;
		if (op->face == HIST_BS)
			return true;
		if ((t0 = take_of(t, op)) != NULL && t0->attempts == attempts)
			return true;
	}
	return false;
}

/* The task was put after a parent (its put, answered or found by the
 * payload's key, names one): its parent's failure buries it whatever its
 * attempts. */
static bool
put_after_parent(const struct ctx *c, const struct task *t)
{
	size_t lo = 0, hi = c->nkey;
	uint64_t key = t->final != NULL ? t->final->key : 0;

	if (t->put != NULL && t->put->after != 0)
		return true;
	if (key == 0)
		return false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->by_key[mid].k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->nkey && c->by_key[lo].k == key; lo++) {
		const struct hist_op *op = &c->ops[c->by_key[lo].i];

		if (op->type == HIST_PUT && op->after != 0)
			return true;
	}
	return false;
}

static void
check_bury(struct ctx *c, const struct task *t)
{
	uint32_t m = t->max;
	const struct hist_op *f = t->final;

	for (size_t i = 0; i < t->nall; i++) {
		const struct hist_op *op = t->all[i], *t0;
		bool buried, want;

		if (op->type != HIST_FAIL || op->outcome != HIST_OK ||
		    op->state == HIST_STATE_NONE ||
		    (t0 = take_of(t, op)) == NULL || !reports(t0))
			continue;
		buried = op->state == SLUICE_BURIED;
		want = m > 0 && t0->attempts >= m;
		if (buried != want)
			violation(c, HIST_R_BURY, t->id, 0, t0, op,
			    "task %" PRIu64 ": a fail at attempts %" PRIu32
			    " of max %" PRIu32 " left it %s",
			    t->id, t0->attempts, m, state_name(op->state));
	}
	if (m == 0)
		goto final;
	for (size_t i = 0; i < t->ntakes; i++) {
		const struct hist_op *tk = t->takes[i];

		if (!reports(tk) || tk->attempts <= m)
			continue;
		if (!released_at(t, tk->attempts - 1, tk->complete)) {
			violation(c, HIST_R_BURY, t->id, 0, tk, NULL,
			    "task %" PRIu64 " taken at attempts %" PRIu32
			    " of max %" PRIu32 ", yet no take at %" PRIu32
			    " was released",
			    t->id, tk->attempts, m, tk->attempts - 1);
			return;
		}
	}
final:
	if (f == NULL || !c->h->final_complete)
		return;
	if (f->state == SLUICE_BURIED && (m == 0 || f->attempts < m) &&
	    !put_after_parent(c, t))
		violation(c, HIST_R_BURY, t->id, 0, f, NULL,
		    "task %" PRIu64 " is buried at attempts %" PRIu32
		    " of max %" PRIu32,
		    t->id, f->attempts, m);
	if ((f->state == SLUICE_READY || f->state == SLUICE_DELAYED) && m > 0 &&
	    f->attempts >= m && !released_at(t, f->attempts, INT64_MAX))
		violation(c, HIST_R_BURY, t->id, 0, f, NULL,
		    "task %" PRIu64 " is %s at the end at attempts %" PRIu32
		    " of max %" PRIu32 ", yet no take at %" PRIu32
		    " was released",
		    t->id, state_name(f->state), f->attempts, m, f->attempts);
}

/* Present or completed at the end. */
static void
check_lost(struct ctx *c, const struct task *t)
{
	const struct hist_op *ruled_out = NULL, *newer_take = NULL;
	bool known = false;

	if (!c->h->final_complete || t->final != NULL || t->done != NULL)
		return;
	for (size_t i = 0; i < t->nall; i++)
		if (t->all[i]->outcome == HIST_OK && is_client_op(t->all[i]))
			known = true;
	if (!known)
		return;
	for (size_t i = 0; i < t->nall; i++) {
		const struct hist_op *op = t->all[i];
		const struct hist_op *nt = NULL;

		if (op->outcome != HIST_UNKNOWN)
			continue;
		if (op->type == HIST_DELETE)
			return; /* it may have taken effect */
		if (op->type != HIST_ACK)
			continue;
		for (size_t k = 0; k < t->ntakes && lib(op); k++)
			if (lib(t->takes[k]) && t->takes[k]->lease > op->lease)
				nt = t->takes[k];
		if (nt == NULL)
			return; /* it may have taken effect */
		ruled_out = op;
		newer_take = nt;
	}
	if (ruled_out != NULL)
		violation(c, HIST_R_UNKNOWN, t->id, 0, ruled_out, newer_take,
		    "task %" PRIu64 " is gone: only an ack of unknown outcome "
		    "could have removed it, and a newer take (lease %" PRIu64
		    ") shows that ack did not happen",
		    t->id, newer_take->lease);
	else
		violation(c, HIST_R_LOST, t->id, 0,
		    t->put != NULL ? t->put : t->all[0], NULL,
		    "task %" PRIu64 " is gone at the end, and nothing "
		    "completed it",
		    t->id);
}

static int
check_task(struct ctx *c, struct task *t)
{
	const struct hist_op **lt;
	size_t nlt = 0;

	t->ntakes = 0;
	t->put = t->final = t->done = NULL;
	t->max = 0;
	t->max_known = false;
	for (size_t i = 0; i < t->nall; i++) {
		const struct hist_op *op = t->all[i];

		if (op->type == HIST_FINAL) {
			if (t->final != NULL)
				violation(c, HIST_R_DOUBLE, t->id, op->key,
				    t->final, op,
				    "task %" PRIu64 " (payload %" PRIx64
				    ") is there twice at the end",
				    t->id, op->key);
			t->final = op;
		} else if (op->outcome != HIST_OK) {
			continue;
		} else if (op->type == HIST_TAKE) {
			t->takes[t->ntakes++] = op;
		} else if (op->type == HIST_PUT) {
			if (t->put == NULL)
				t->put = op;
		} else if (op->type == HIST_ACK || op->type == HIST_DELETE) {
			if (t->done == NULL || op->complete < t->done->complete)
				t->done = op;
		}
		if ((op->type == HIST_PUT && reports(op)) ||
		    (op->type == HIST_TAKE && reports(op)) ||
		    op->type == HIST_FINAL) {
			if (t->max_known && t->max != op->max) {
				violation(c, HIST_R_INTEGRITY, t->id, 0, op,
				    NULL,
				    "task %" PRIu64 ": max_attempts %" PRIu32
				    " here, %" PRIu32 " before",
				    t->id, op->max, t->max);
			}
			t->max = op->max;
			t->max_known = true;
		}
	}
	lt = malloc((t->ntakes ? t->ntakes : 1) * sizeof(*lt));
	if (lt == NULL)
		return -1;
	for (size_t i = 0; i < t->ntakes; i++)
		if (reports(t->takes[i]))
			lt[nlt++] = t->takes[i];
	check_keys(c, t);
	check_states(c, t);
	check_completion(c, t);
	check_leases(c, t);
	check_attempts(c, t, lt, nlt);
	check_bury(c, t);
	check_lost(c, t);
	free(lt);
	return 0;
}

/* ---- one put ----------------------------------------------------------- */

/* The operations carrying one payload key: its put, and every take and
 * final task that returned that payload. */
static void
check_put(struct ctx *c, uint64_t key, const struct pair *p, size_t n)
{
	const struct hist_op *put = NULL, *first = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct hist_op *op = &c->ops[p[i].i];

		if (op->type != HIST_PUT)
			continue;
		if (put != NULL) {
			violation(c, HIST_R_INTEGRITY, op->id, key, put, op,
			    "two puts with the key %" PRIx64, key);
			return;
		}
		put = op;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hist_op *op = &c->ops[p[i].i];

		if (op->type == HIST_PUT || op->outcome != HIST_OK)
			continue;
		if (put == NULL) {
			violation(c, HIST_R_INTEGRITY, op->id, key, op, NULL,
			    "task %" PRIu64 " has the payload of a put no "
			    "client made (key %" PRIx64 ")",
			    op->id, key);
			return;
		}
		if (put->outcome == HIST_ERR) {
			violation(c, HIST_R_UNKNOWN, op->id, key, put, op,
			    "a put the server refused (%s) created task "
			    "%" PRIu64,
			    sluice_strerror(put->err), op->id);
			return;
		}
		if (op->complete < put->invoke) {
			violation(c, HIST_R_INTEGRITY, op->id, key, put, op,
			    "task %" PRIu64 " was taken before its put",
			    op->id);
			return;
		}
		if (put->outcome == HIST_OK && op->id != put->id) {
			violation(c, HIST_R_INTEGRITY, op->id, key, put, op,
			    "a put answered task %" PRIu64
			    " and its payload is in task %" PRIu64 " too",
			    put->id, op->id);
			return;
		}
		if (first == NULL)
			first = op;
		else if (first->id != op->id) {
			violation(c, HIST_R_UNKNOWN, op->id, key, first, op,
			    "a put of unknown outcome created two tasks, "
			    "%" PRIu64 " and %" PRIu64,
			    first->id, op->id);
			return;
		}
	}
}

/* ---- the whole history ------------------------------------------------- */

static void
count(struct ctx *c)
{
	struct hist_report *r = c->r;

	for (size_t i = 0; i < c->n; i++) {
		const struct hist_op *op = &c->ops[i];

		if (is_client_op(op)) {
			r->ops++;
			if (op->outcome == HIST_OK)
				r->ok++;
			else if (op->outcome == HIST_ERR)
				r->err++;
			else
				r->unknown++;
		} else if (op->type == HIST_CRASH || op->type == HIST_FAULT) {
			r->faults++;
			if (op->kind < HIST_FAULTS_)
				r->by_fault[op->kind]++;
		} else if (op->type == HIST_FINAL) {
			r->final_tasks++;
		}
	}
}

int
hist_check(struct hist *h, struct hist_report *r)
{
	struct ctx c = { .h = h, .r = r };
	struct pair *by_id = NULL, *by_key = NULL;
	struct task t = { 0 };
	size_t nid = 0, nkey = 0, most = 1;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (h->nomem || sort_ops(h) != 0)
		return -1;
	c.ops = h->ops;
	c.n = h->n;
	r->v = calloc(HIST_REPORT_KEEP, sizeof(*r->v));
	by_id = malloc((h->n ? h->n : 1) * sizeof(*by_id));
	by_key = malloc((h->n ? h->n : 1) * sizeof(*by_key));
	c.crash = malloc((h->n ? h->n : 1) * sizeof(*c.crash));
	c.crash_max = malloc((h->n ? h->n : 1) * sizeof(*c.crash_max));
	if (r->v == NULL || by_id == NULL || by_key == NULL ||
	    c.crash == NULL || c.crash_max == NULL)
		goto out;
	count(&c);
	for (size_t i = 0; i < c.n; i++) {
		const struct hist_op *op = &c.ops[i];

		if (op->type == HIST_CRASH) {
			c.crash_max[c.ncrash] = c.ncrash > 0 &&
			        c.crash_max[c.ncrash - 1] > op->complete
			    ? c.crash_max[c.ncrash - 1]
			    : op->complete;
			c.crash[c.ncrash++] = i;
		}
		if ((is_client_op(op) || op->type == HIST_FINAL) && op->id != 0)
			by_id[nid++] = (struct pair) { op->id, i };
		if ((op->type == HIST_PUT || op->type == HIST_TAKE ||
		        op->type == HIST_FINAL) &&
		    op->key != 0)
			by_key[nkey++] = (struct pair) { op->key, i };
	}
	qsort(by_id, nid, sizeof(*by_id), cmp_pair);
	qsort(by_key, nkey, sizeof(*by_key), cmp_pair);
	c.by_key = by_key;
	c.nkey = nkey;
	for (size_t i = 0, j; i < nid; i = j) {
		for (j = i; j < nid && by_id[j].k == by_id[i].k; j++)
			;
		if (j - i > most)
			most = j - i;
	}
	t.all = malloc(most * sizeof(*t.all));
	t.takes = malloc(most * sizeof(*t.takes));
	if (t.all == NULL || t.takes == NULL)
		goto out;
	for (size_t i = 0, j; i < nid; i = j) {
		t.id = by_id[i].k;
		t.nall = 0;
		for (j = i; j < nid && by_id[j].k == t.id; j++)
			t.all[t.nall++] = &c.ops[by_id[j].i];
		r->tasks++;
		if (check_task(&c, &t) != 0)
			goto out;
	}
	for (size_t i = 0, j; i < nkey; i = j) {
		for (j = i; j < nkey && by_key[j].k == by_key[i].k; j++)
			;
		check_put(&c, by_key[i].k, by_key + i, j - i);
	}
	if (hist_check_cap(c.ops, c.n, r) != 0 ||
	    hist_check_after(c.ops, c.n, r) != 0 ||
	    hist_check_slot(c.ops, c.n, r) != 0 ||
	    hist_check_double(c.ops, c.n, r) != 0)
		goto out;
	rc = 0;
out:
	free(t.all);
	free(t.takes);
	free(by_id);
	free(by_key);
	free(c.crash);
	free(c.crash_max);
	if (rc != 0)
		hist_report_free(r);
	return rc;
}

void
hist_report_free(struct hist_report *r)
{
	free(r->v);
	r->v = NULL;
	r->nv = 0;
}

const char *
hist_rule_name(enum hist_rule rule)
{
	static const char *const names[HIST_RULES_] = {
		[HIST_R_LOST] = "lost",
		[HIST_R_TWICE] = "twice",
		[HIST_R_REVIVED] = "revived",
		[HIST_R_STALE] = "stale",
		[HIST_R_ATTEMPTS] = "attempts",
		[HIST_R_BURY] = "bury",
		[HIST_R_UNKNOWN] = "unknown",
		[HIST_R_INTEGRITY] = "integrity",
		[HIST_R_CAP] = "cap",
		[HIST_R_AFTER] = "after",
		[HIST_R_SLOT] = "slot",
		[HIST_R_DOUBLE] = "double",
	};

	return (unsigned)rule < HIST_RULES_ ? names[rule] : "?";
}

/* The operations of task `id` or of payload `key`, and the crashes
 * between the first and the last of them. */
static void
print_task(const struct hist *h, uint64_t id, uint64_t key, FILE *f)
{
	int64_t from = INT64_MAX, to = INT64_MIN;
	char line[512];

	for (size_t i = 0; i < h->n; i++) {
		const struct hist_op *op = &h->ops[i];

		if ((id != 0 && op->id == id) || (key != 0 && op->key == key)) {
			from = op->invoke < from ? op->invoke : from;
			to = op->complete > to ? op->complete : to;
		}
	}
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_op *op = &h->ops[i];
		bool mine =
		    (id != 0 && op->id == id) || (key != 0 && op->key == key);
		bool crash = op->type == HIST_CRASH && op->complete > from &&
		    op->invoke < to;

		if (!mine && !crash)
			continue;
		hist_format(op, line, sizeof(line));
		fprintf(f, "      %s\n", line);
	}
	if (h->final_at != 0)
		fprintf(f, "      end %" PRId64 " %s\n", h->final_at,
		    h->final_complete ? "complete" : "incomplete");
}

void
hist_report_print(
    const struct hist *h, const struct hist_report *r, FILE *f, size_t max)
{
	char line[512];

	fprintf(f,
	    "operations %zu (ok %zu, refused %zu, unknown %zu) on %zu tasks; "
	    "%zu found by the final read; %zu takes uncounted after a "
	    "crash\n",
	    r->ops, r->ok, r->err, r->unknown, r->tasks, r->final_tasks,
	    r->uncounted);
	fprintf(f, "faults %zu (", r->faults);
	for (int k = 1; k < HIST_FAULTS_; k++)
		fprintf(f, "%s%s %zu", k > 1 ? ", " : "", hist_fault_name(k),
		    r->by_fault[k]);
	fprintf(f, ")\n");
	if (r->cap != 0)
		fprintf(f,
		    "a tube capped at %" PRIu32
		    " concurrent tasks: at most %" PRIu32
		    " surely taken at once\n",
		    r->cap, r->cap_peak);
	if (r->gcap != 0)
		fprintf(f,
		    "its fair groups capped at %" PRIu32
		    " concurrent tasks each: at most %" PRIu32
		    " of one group surely taken at once\n",
		    r->gcap, r->gcap_peak);
	if (r->children != 0)
		fprintf(f,
		    "%zu takes of tasks put after a parent, each after its "
		    "parent's ack or delete\n",
		    r->children);
	if (r->slots != 0)
		fprintf(f,
		    "%zu slots of schedules whose tasks were taken, each "
		    "by one task\n",
		    r->slots);
	if (r->retakes != 0)
		fprintf(f,
		    "%zu pairs of takes of one task, the later never while "
		    "the earlier surely held it\n",
		    r->retakes);
	fprintf(f, "violations %zu (", r->violations);
	for (int k = 0; k < HIST_RULES_; k++)
		fprintf(f, "%s%s %zu", k > 0 ? ", " : "",
		    hist_rule_name((enum hist_rule)k), r->by_rule[k]);
	fprintf(f, ")\n");
	for (size_t i = 0; i < r->nv && i < max; i++) {
		const struct hist_violation *v = &r->v[i];

		fprintf(
		    f, "violation %s: %s\n", hist_rule_name(v->rule), v->why);
		for (int k = 0; k < 2; k++) {
			if (v->op[k] == SIZE_MAX)
				continue;
			hist_format(&h->ops[v->op[k]], line, sizeof(line));
			fprintf(f, "    at: %s\n", line);
		}
		fprintf(f, "    the task's history:\n");
		print_task(h, v->id, v->key, f);
	}
}
