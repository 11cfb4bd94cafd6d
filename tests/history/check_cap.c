/* check_cap - the rule "cap" of history.h: a tube's concurrency cap, and
 * that of each of its fair groups, is never exceeded, judged from the
 * clients' record alone.
 *
 * Each answered take with a cap gives an interval in which its task was
 * surely taken: from the take's completion (the server had handed it out
 * by then) to the earliest moment anything could have ended its lease
 * (history.h lists them). The intervals are swept in time order, an end
 * before a start at the same moment: more open at once than the cap is a
 * violation, named by the take that opened one too many. Every bound errs
 * towards a shorter interval, so a violation is a moment at which the
 * server surely had more tasks taken than the cap; the price is that an
 * excess shorter than the replies' delays, or only across a fault, goes
 * unseen.
 *
 * A group's cap is swept the same way over its group's takes (those with
 * a gcap), each group apart.
 *
 * The rule "double" uses the same intervals task by task: two takes of a
 * task whose intervals overlap are two workers holding it at once, except
 * that there another take does not end an interval (it is what is
 * judged).
 *
 * O(n log n) a sweep: the operations indexed once by task and by client, the
 * faults in invocation order with the latest completion so far (so the
 * first fault that could fall after a moment is one binary search). */
#include <inttypes.h>
#include <stdlib.h>

#include "check_int.h"

enum {
	MARGIN_US = 5000, /* the server counts a ttr from a millisecond
	                     clock: its expiry may come this much sooner
	                     than the take's invocation plus the ttr */
};

struct pair {
	uint64_t k;
	size_t i;
};

struct edge {
	int64_t t;
	int d; /* +1 a take's interval opens, -1 it closes */
	size_t take;
};

static int
cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int
cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->d - y->d; /* an end before a start */
}

/* Which takes a sweep counts: group 0 the tube's (those with a cap),
 * else group `group`'s (those with a gcap). */
static bool
capped(const struct hist_op *op, unsigned group)
{
	if (op->type != HIST_TAKE || op->outcome != HIST_OK || op->id == 0)
		return false;
	return group == 0 ? op->cap != 0 : op->group == group && op->gcap != 0;
}

static bool
fault(const struct hist_op *op)
{
	return op->type == HIST_CRASH || op->type == HIST_FAULT;
}

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t
max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* For each client operation: the invocation of its client's next
 * operation of unknown outcome or new session (INT64_MAX: none), and the
 * end of its
 * client's last operation, into next_unknown[] and last_end[] by index
 * in ops. `by_client` is sorted by client, then index. */
static void
client_bounds(const struct hist_op *ops, const struct pair *by_client,
    size_t ncl, int64_t *next_unknown, int64_t *last_end)
{
	for (size_t i = 0, j; i < ncl; i = j) {
		int64_t nu = INT64_MAX, le = INT64_MIN;

		for (j = i; j < ncl && by_client[j].k == by_client[i].k; j++)
			le = max64(le, ops[by_client[j].i].complete);
		for (size_t k = j; k-- > i;) {
			const struct hist_op *op = &ops[by_client[k].i];

			next_unknown[by_client[k].i] = nu;
			last_end[by_client[k].i] = le;
			if (op->outcome == HIST_UNKNOWN ||
			    op->type == HIST_SESSION)
				nu = op->invoke;
		}
	}
}

/* The earliest moment the lease of take `t` (index ti) could have ended,
 * given the other operations on its task (task[0..ntask), indices);
 * with `retakes`, another take of the task is not taken to end it (the
 * rule double asks whether one came while it was held). */
static int64_t
lease_end(const struct hist_op *ops, size_t ti, const struct pair *task,
    size_t ntask, const int64_t *next_unknown, const int64_t *last_end,
    const size_t *faults, const int64_t *fmax, size_t nf, bool retakes)
{
	const struct hist_op *t = &ops[ti];
	int64_t end = t->ttr != 0
	    ? t->invoke + (int64_t)t->ttr * 1000 - MARGIN_US
	    : t->complete;
	size_t lo = 0, hi = nf;

	for (size_t k = 0; k < ntask; k++) {
		const struct hist_op *x = &ops[task[k].i];

		if (task[k].i == ti ||
		    (x->outcome != HIST_UNKNOWN && x->complete < t->invoke))
			continue; /* done before the take began */
		if (retakes && x->type == HIST_TAKE)
			continue;
		end = min64(end, max64(x->invoke, t->invoke));
	}
	end = min64(end, min64(next_unknown[ti], last_end[ti]));
	while (lo < hi) { /* the first fault that may end after t began */
		size_t mid = lo + (hi - lo) / 2;

		if (fmax[mid] >= t->invoke)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < nf)
		end = min64(end, max64(ops[faults[lo]].invoke, t->invoke));
	return end;
}

/* One sweep: the takes of `group` (0: the tube's), their intervals in
 * time order; more open at once than the cap is a violation. */
static void
sweep(const struct hist_op *ops, const struct pair *by_id, size_t nid,
    const int64_t *next_unknown, const int64_t *last_end, const size_t *faults,
    const int64_t *fmax, size_t nf, struct edge *e, unsigned group,
    struct hist_report *r)
{
	size_t ne = 0;
	uint32_t open = 0;

	for (size_t i = 0, j; i < nid; i = j) {
		for (j = i; j < nid && by_id[j].k == by_id[i].k; j++)
			;
		for (size_t k = i; k < j; k++) {
			const struct hist_op *t = &ops[by_id[k].i];
			int64_t end;

			if (!capped(t, group))
				continue;
			end = lease_end(ops, by_id[k].i, by_id + i, j - i,
			    next_unknown, last_end, faults, fmax, nf, false);
			if (end <= t->complete)
				continue;
			e[ne++] = (struct edge) { t->complete, 1, by_id[k].i };
			e[ne++] = (struct edge) { end, -1, by_id[k].i };
		}
	}
	qsort(e, ne, sizeof(*e), cmp_edge);
	for (size_t i = 0; i < ne; i++) {
		const struct hist_op *t = &ops[e[i].take];
		uint32_t cap = group == 0 ? r->cap : t->gcap;
		uint32_t *peak = group == 0 ? &r->cap_peak : &r->gcap_peak;

		open = e[i].d > 0 ? open + 1 : open - 1;
		if (open > *peak)
			*peak = open;
		if (e[i].d < 0 || open <= cap)
			continue;
		if (group == 0)
			hist_violation(r, ops, HIST_R_CAP, t->id, t->key, t,
			    NULL,
			    "%" PRIu32 " tasks of a tube capped at %" PRIu32
			    " surely taken at once at %" PRId64
			    " us (this take the last of them)",
			    open, cap, e[i].t);
		else
			hist_violation(r, ops, HIST_R_CAP, t->id, t->key, t,
			    NULL,
			    "%" PRIu32 " tasks of fair group %u capped at "
			    "%" PRIu32 " surely taken at once at %" PRId64
			    " us (this take the last of them)",
			    open, group, cap, e[i].t);
	}
}

/* The rule double over one task's operations (task[0..ntask)): the
 * intervals of two answered takes in which each surely held the task
 * never overlap. */
static void
retake(const struct hist_op *ops, const struct pair *task, size_t ntask,
    const int64_t *next_unknown, const int64_t *last_end, const size_t *faults,
    const int64_t *fmax, size_t nf, int64_t *end, struct hist_report *r)
{
	for (size_t k = 0; k < ntask; k++) {
		const struct hist_op *a = &ops[task[k].i];

		end[k] = INT64_MIN;
		if (a->type == HIST_TAKE && a->outcome == HIST_OK)
			end[k] = lease_end(ops, task[k].i, task, ntask,
			    next_unknown, last_end, faults, fmax, nf, true);
	}
	for (size_t k = 0; k < ntask; k++) {
		const struct hist_op *a = &ops[task[k].i];

		if (end[k] == INT64_MIN)
			continue;
		for (size_t m = k + 1; m < ntask; m++) {
			const struct hist_op *b = &ops[task[m].i];

			if (end[m] == INT64_MIN)
				continue;
			r->retakes++;
			if (max64(a->complete, b->complete) <
			    min64(end[k], end[m])) {
				hist_violation(r, ops, HIST_R_DOUBLE, a->id,
				    a->key, a, b,
				    "task %" PRIu64 " surely held by two "
				    "takes at once, from %" PRId64
				    " us to %" PRId64 " us",
				    a->id, max64(a->complete, b->complete),
				    min64(end[k], end[m]));
				return;
			}
		}
	}
}

static int check_rules(
    const struct hist_op *ops, size_t n, struct hist_report *r, bool dbl);

int
hist_check_cap(const struct hist_op *ops, size_t n, struct hist_report *r)
{
	return check_rules(ops, n, r, false);
}

int
hist_check_double(const struct hist_op *ops, size_t n, struct hist_report *r)
{
	return check_rules(ops, n, r, true);
}

/* The rule cap (dbl false) or double (true). */
static int
check_rules(
    const struct hist_op *ops, size_t n, struct hist_report *r, bool dbl)
{
	struct pair *by_id = malloc((n ? n : 1) * sizeof(*by_id));
	struct pair *by_client = malloc((n ? n : 1) * sizeof(*by_client));
	size_t *faults = malloc((n ? n : 1) * sizeof(*faults));
	int64_t *fmax = malloc((n ? n : 1) * sizeof(*fmax));
	int64_t *next_unknown = malloc((n ? n : 1) * sizeof(*next_unknown));
	int64_t *last_end = malloc((n ? n : 1) * sizeof(*last_end));
	struct edge *e = malloc((n ? n : 1) * 2 * sizeof(*e));
	int64_t *scratch = malloc((n ? n : 1) * sizeof(*scratch));
	size_t nid = 0, ncl = 0, nf = 0;
	uint64_t groups[4] = { 0 }; /* the groups with a cap, a bit each */
	int rc = -1;

	if (by_id == NULL || by_client == NULL || faults == NULL ||
	    fmax == NULL || next_unknown == NULL || last_end == NULL ||
	    e == NULL || scratch == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct hist_op *op = &ops[i];

		if (!dbl && capped(op, 0) && r->cap == 0)
			r->cap = op->cap;
		if (!dbl && op->group != 0 && capped(op, op->group)) {
			groups[op->group / 64] |= 1ull << (op->group % 64);
			if (r->gcap == 0)
				r->gcap = op->gcap;
		}
		if (fault(op)) {
			fmax[nf] = nf > 0 ? max64(fmax[nf - 1], op->complete)
			                  : op->complete;
			faults[nf++] = i;
			continue;
		}
		if (op->type != HIST_FINAL)
			by_client[ncl++] = (struct pair) { op->client, i };
		if (op->id != 0)
			by_id[nid++] = (struct pair) { op->id, i };
	}
	if (!dbl && r->cap == 0 && r->gcap == 0) {
		rc = 0;
		goto out;
	}
	qsort(by_id, nid, sizeof(*by_id), cmp_pair);
	qsort(by_client, ncl, sizeof(*by_client), cmp_pair);
	client_bounds(ops, by_client, ncl, next_unknown, last_end);
	for (size_t i = 0, j; dbl && i < nid; i = j) {
		size_t takes = 0;

		for (j = i; j < nid && by_id[j].k == by_id[i].k; j++)
			takes += ops[by_id[j].i].type == HIST_TAKE;
		if (takes > 1)
			retake(ops, by_id + i, j - i, next_unknown, last_end,
			    faults, fmax, nf, scratch, r);
	}
	for (unsigned g = 0; !dbl && g < 256; g++)
		if (g == 0 ? r->cap != 0 : (groups[g / 64] >> (g % 64)) & 1)
			sweep(ops, by_id, nid, next_unknown, last_end, faults,
			    fmax, nf, e, g, r);
	rc = 0;
out:
	free(by_id);
	free(by_client);
	free(faults);
	free(fmax);
	free(next_unknown);
	free(last_end);
	free(e);
	free(scratch);
	return rc;
}
