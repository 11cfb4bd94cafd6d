/* group_list - the listing of fair groups by backlog (group_list.h).
 *
 * Looks at one candidate per group with ready or taken tasks (a tube
 * without fair groups: one for its "" group, when it was named) and keeps
 * the best `max` in a heap whose top is the worst kept (a candidate
 * better than it takes its place): O(g log max) time and O(max) memory
 * whatever the groups, so that a node with a million groups answers a
 * scrape's top 20 without sorting them all. The kept ones are sorted,
 * then the ready tasks of those only are read for the age of their
 * oldest: a group's heap is ordered by priority first, so
 * its oldest task can be anywhere in it. The tube without groups keeps its
 * ready tasks in its age heap too, whose top is the oldest. Reads the
 * queue, changes nothing but its clock (queue_tick). */
#include <stdlib.h>
#include <string.h>

#include "queue/group.h"
#include "queue/group_list.h"
#include "queue/qrec.h"
#include "queue/qstate.h"
#include "queue/tube.h"
#include "sluice.h"

struct cand {
	const struct tube *tb;
	const struct group *g; /* NULL: a tube without fair groups */
	uint64_t ready, taken;
};

static int
by_backlog(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	size_t xl, yl, l;
	int c;

	if (x->ready != y->ready)
		return x->ready > y->ready ? -1 : 1;
	if (x->taken != y->taken)
		return x->taken > y->taken ? -1 : 1;
	if (x->tb != y->tb) {
		l = x->tb->name_len < y->tb->name_len ? x->tb->name_len
		                                      : y->tb->name_len;
		if ((c = memcmp(x->tb->name, y->tb->name, l)) != 0)
			return c;
		return x->tb->name_len < y->tb->name_len ? -1 : 1;
	}
	xl = x->g != NULL ? x->g->name_len : 0;
	yl = y->g != NULL ? y->g->name_len : 0;
	l = xl < yl ? xl : yl;
	if (l > 0 && (c = memcmp(x->g->name, y->g->name, l)) != 0)
		return c;
	return xl < yl ? -1 : xl > yl;
}

/* The best `max` candidates seen so far: a heap by backlog, the worst
 * kept at the root; `total` counts every candidate. */
struct keep {
	struct cand *c;
	size_t n, max;
	uint64_t total;
};

static void
sift_down(struct keep *k, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		struct cand t;

		if (l < k->n && by_backlog(&k->c[l], &k->c[w]) > 0)
			w = l;
		if (r < k->n && by_backlog(&k->c[r], &k->c[w]) > 0)
			w = r;
		if (w == i)
			return;
		t = k->c[i];
		k->c[i] = k->c[w];
		k->c[w] = t;
		i = w;
	}
}

static void
offer(struct keep *k, const struct cand *c)
{
	k->total++;
	if (k->n < k->max) {
		size_t i = k->n++;

		k->c[i] = *c;
		while (i > 0 && by_backlog(&k->c[(i - 1) / 2], &k->c[i]) < 0) {
			struct cand t = k->c[i];

			k->c[i] = k->c[(i - 1) / 2];
			k->c[(i - 1) / 2] = t;
			i = (i - 1) / 2;
		}
	} else if (by_backlog(c, &k->c[0]) < 0) {
		k->c[0] = *c;
		sift_down(k, 0);
	}
}

/* Offers the groups of one tube. */
static void
gather(const struct tube *tb, struct keep *k)
{
	const struct groups *gs = tb->groups;

	if (gs == NULL) {
		if (tube_nready(tb) + tb->ntaken > 0)
			offer(k,
			    &(struct cand) {
			        tb, NULL, tube_nready(tb), tb->ntaken });
		return;
	}
	if (tb->ready.len + gs->none.taken > 0)
		offer(k,
		    &(struct cand) {
		        tb, &gs->none, tb->ready.len, gs->none.taken });
	for (uint32_t s = 1; s < gs->cap; s++) {
		const struct group *g = gs->table[s];

		if (g == NULL || ((uintptr_t)g & 1) != 0 ||
		    g->len + g->taken == 0)
			continue;
		offer(k, &(struct cand) { tb, g, g->len, g->taken });
	}
}

/* The least run_at among a candidate's ready tasks (it has some). */
static int64_t
oldest(const struct cand *c)
{
	void *const *item;
	uint32_t len;
	int64_t min = INT64_MAX;

	if (c->g == NULL)
		return ((const struct task *)heap_top(&c->tb->age))->run_at;
	if (c->g->slot == 0) {
		item = c->tb->ready.item;
		len = c->tb->ready.len;
	} else {
		item = group_items(c->g);
		len = c->g->len;
	}
	for (uint32_t i = 0; i < len; i++) {
		const struct task *t = item[i];

		if (t->run_at < min)
			min = t->run_at;
	}
	return min;
}

int
group_list(struct queue *q, int64_t now, const char *tube, size_t tube_len,
    struct group_row *out, size_t max, size_t *n, uint64_t *total)
{
	const struct tube *one = NULL;
	struct keep k = { .max = max };
	int rc;

	if (now < 0 || now > QREC_TIME_MAX || max == 0 || max > GROUP_LIST_MAX)
		return SLUICE_EINVAL;
	if (tube_len > 0 && !qrec_tube_valid(tube, tube_len))
		return SLUICE_ETUBE;
	if ((rc = queue_tick(q, now)) != 0)
		return rc;
	if (tube_len > 0 && (one = qs_tube(q, tube, tube_len)) == NULL)
		return SLUICE_ENOTFOUND;
	if ((k.c = malloc(max * sizeof(*k.c))) == NULL)
		return SLUICE_ENOMEM;
	if (one != NULL)
		gather(one, &k);
	else /* the tubes with groups only, whatever the others */
		for (const struct groups *gs = q->grouped.head; gs != NULL;
		     gs = gs->lnext)
			gather(gs->tube, &k);
	qsort(k.c, k.n, sizeof(*k.c), by_backlog);
	for (size_t i = 0; i < k.n; i++) {
		const struct cand *c = &k.c[i];
		int64_t at = c->ready > 0 ? oldest(c) : q->clock;

		out[i] = (struct group_row) {
			.tube = c->tb->name,
			.tube_len = c->tb->name_len,
			.name = c->g != NULL ? c->g->name : "",
			.name_len = c->g != NULL ? c->g->name_len : 0,
			.ready = c->ready,
			.taken = c->taken,
			.oldest_ready_age =
			    q->clock > at ? (uint64_t)(q->clock - at) : 0,
		};
	}
	*n = k.n;
	*total = k.total;
	free(k.c);
	return 0;
}
