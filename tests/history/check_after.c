/* check_after - the rule "after" of history.h: a task put after a parent
 * is never taken before its parent was acked or deleted, judged from the
 * clients' record alone.
 *
 * The server makes a child ready only once it has applied its parent's
 * ack (or delete), which the client invoked before; the child's take is
 * answered after that. So every answered take of a child completes after
 * the invocation of some ack or delete of its parent that succeeded or
 * whose outcome is unknown (an unknown one may have taken effect). A
 * take with no such operation before its completion is a violation. The
 * bound errs towards allowing: an ack invoked before the take's answer
 * but applied after it goes unseen; the price of judging from outside.
 *
 * O(n log n): the puts with a parent indexed by their payload key, the
 * acks and deletes by task id with the earliest invocation of each. */
#include <inttypes.h>
#include <stdlib.h>

#include "check_int.h"

struct pair {
	uint64_t k;
	int64_t t; /* put: its index; completion: its invocation */
};

static int
cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* The first pair of `k` in `p` (sorted), or NULL. */
static const struct pair *
find(const struct pair *p, size_t n, uint64_t k)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid].k < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && p[lo].k == k ? &p[lo] : NULL;
}

int
hist_check_after(const struct hist_op *ops, size_t n, struct hist_report *r)
{
	struct pair *puts = malloc((n ? n : 1) * sizeof(*puts));
	struct pair *done = malloc((n ? n : 1) * sizeof(*done));
	size_t np = 0, nd = 0;

	if (puts == NULL || done == NULL) {
		free(puts);
		free(done);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct hist_op *op = &ops[i];

		if (op->type == HIST_PUT && op->after != 0 && op->key != 0 &&
		    op->outcome != HIST_ERR)
			puts[np++] = (struct pair) { op->key, (int64_t)i };
		else if ((op->type == HIST_ACK || op->type == HIST_DELETE) &&
		    op->id != 0 && op->outcome != HIST_ERR)
			done[nd++] = (struct pair) { op->id, op->invoke };
	}
	qsort(puts, np, sizeof(*puts), cmp_pair);
	qsort(done, nd, sizeof(*done), cmp_pair); /* earliest first */
	for (size_t i = 0; np > 0 && i < n; i++) {
		const struct hist_op *op = &ops[i], *put;
		const struct pair *p, *d;

		if (op->type != HIST_TAKE || op->outcome != HIST_OK ||
		    op->key == 0 || (p = find(puts, np, op->key)) == NULL)
			continue;
		put = &ops[p->t];
		d = find(done, nd, put->after);
		r->children++;
		if (d == NULL || d->t >= op->complete)
			hist_violation(r, ops, HIST_R_AFTER, op->id, op->key,
			    put, op,
			    "task %" PRIu64 " was taken before its parent "
			    "%" PRIu64 " was acked or deleted (%s)",
			    op->id, put->after,
			    d == NULL ? "never" : "only later");
	}
	free(puts);
	free(done);
	return 0;
}
