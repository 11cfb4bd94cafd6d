/* move_wait - the tasks of a workflow still under way that keep a tube's
 * move from starting (queue_move.h, docs/scaling.md "What a move
 * carries"): a task waiting for parents, a parent some child still waits
 * for, and a child whose parents are settled (its take hands it their
 * results). A workflow runs where it began: the graph's edges and the
 * results parents leave are this cluster's (deps.h), and a copy would
 * carry neither. So the source holds none of a tube's tasks, and marks
 * nothing, while any are there: it hands them out as before, their
 * children become ready there, and once the last has run the move holds
 * and copies the rest. Its children are put only on this cluster (the map
 * sends new puts to the target, whose graph is its own), so the count
 * only falls.
 *
 * A scan of the dependency nodes, each with its task: called once per
 * hold of a moving tube, not on a request path. Buried tasks are left
 * out unless a child waits for them: a buried child waits for an
 * operator, and is carried as it is (without its parents' results).
 *
 * Here too: whether the tubes a map entry governs are drained (nothing
 * but done tasks, no move under way), for the end of a plain drain. */
#include <string.h>

#include "queue/move.h"
#include "queue/qstate.h"

/* A child still waits for the task of node n. */
static bool
awaited(const struct dnode *n)
{
	return n->nlive > 0 && n->outcome == QUEUE_DEP_PENDING;
}

size_t
queue_move_graph(const struct queue *q, const char *tube, size_t len)
{
	const struct tube *tb = qs_tube(q, tube, len);
	size_t n = 0;

	if (tb == NULL || q->deps.nodes.len == 0)
		return 0;
	for (uint32_t i = 0; i < q->deps.nodes.cap; i++) {
		const struct dnode *d = idx_at(&q->deps.nodes, i);
		const struct task *t;

		if (d == NULL || d->gone || (d->nparents == 0 && !awaited(d)) ||
		    (t = qs_task(q, d->id)) == NULL || qs_tube_of(q, t) != tb ||
		    t->state == QUEUE_DONE)
			continue;
		/* a buried child is carried; a buried parent is waited for:
		 * its drop here would fail the children that wait for it */
		if (t->state != QUEUE_BURIED || awaited(d))
			n++;
	}
	return n;
}

bool
queue_move_drained(const struct queue *q,
    bool (*governs)(void *arg, const char *name, size_t len), void *arg)
{
	if (move_keep_governed(q, governs, arg))
		return false; /* a mover's move is under way (move_place.c) */
	for (uint32_t i = 0; i < q->ntubes; i++) {
		const struct tube *tb = q->tubes[i];

		if (tb == NULL || !governs(arg, tb->name, tb->name_len))
			continue;
		if (tb->moving_out ||
		    move_table_find(q, tb->name, tb->name_len) != NULL ||
		    tube_tasks(tb) > tb->done.len)
			return false;
	}
	return true;
}
