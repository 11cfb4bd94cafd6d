/* check_slot - the rule "slot" of history.h: a schedule's slot fires
 * once, judged from the tasks clients took.
 *
 * Each firing puts one task whose key names the schedule and the slot;
 * the client that takes it records a HIST_FIRE with the task's id, the
 * schedule and the slot. A slot fired again (by a leader that did not
 * know it had fired: a restart that lost the decision, a promoted
 * follower that never got it) puts a second task: a second id for the
 * same (schedule, slot). The same id taken again, its lease lost, is one
 * firing. The rule sees only slots whose tasks were taken, so it can
 * tell a slot fired twice, not one never fired (a slot missed while no
 * node led is skipped by the catch-up rules, as it may be).
 *
 * O(n log n): the fires sorted by schedule, slot and id. */
#include <inttypes.h>
#include <stdlib.h>

#include "check_int.h"

struct fire {
	uint32_t sched;
	int64_t slot;
	uint64_t id;
	size_t i; /* its index in ops */
};

static int
cmp_fire(const void *a, const void *b)
{
	const struct fire *x = a, *y = b;

	if (x->sched != y->sched)
		return x->sched < y->sched ? -1 : 1;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int
hist_check_slot(const struct hist_op *ops, size_t n, struct hist_report *r)
{
	struct fire *f = malloc((n ? n : 1) * sizeof(*f));
	size_t nf = 0;

	if (f == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct hist_op *op = &ops[i];

		if (op->type == HIST_FIRE && op->outcome == HIST_OK &&
		    op->id != 0 && op->sched != 0)
			f[nf++] =
			    (struct fire) { op->sched, op->slot, op->id, i };
	}
	qsort(f, nf, sizeof(*f), cmp_fire);
	for (size_t i = 0, j; i < nf; i = j) {
		for (j = i + 1; j < nf && f[j].sched == f[i].sched &&
		     f[j].slot == f[i].slot;
		     j++) {
			if (f[j].id == f[j - 1].id)
				continue; /* taken again: one firing */
			hist_violation(r, ops, HIST_R_SLOT, f[j].id, 0,
			    &ops[f[i].i], &ops[f[j].i],
			    "slot %" PRId64 " of schedule %" PRIu32
			    " fired twice: tasks %" PRIu64 " and %" PRIu64,
			    f[i].slot, f[i].sched, f[i].id, f[j].id);
		}
		r->slots++;
	}
	free(f);
	return 0;
}
