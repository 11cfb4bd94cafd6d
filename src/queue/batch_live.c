/* batch_live - the live tasks of a batch (waiting, ready, delayed,
 * taken), for its cancel (ops/batches.c, docs/queue.md "Batches"): the
 * server cancels each as `sluice cancel` would, one CANCEL record a task.
 *
 * A batch keeps no list of its own tasks: its members are in one table
 * by task id (batch.h, struct bmember), so this is a scan of that table,
 * O(members of every live batch), as queue_batch_show's counts are.
 * The ids come newest first: a child is newer than its parents (a put
 * names only ids given out before its own), so a cancel in this order
 * reaches each task before its parents' cancels could bury it (rule
 * fail) or delete it (rule cancel) in their stead. */
#include <stdlib.h>
#include <string.h>

#include "queue/batch.h"
#include "queue/qstate.h"
#include "sluice.h"

static int
newest_first(const void *a, const void *b)
{
	uint64_t x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x < y ? 1 : x > y ? -1 : 0;
}

int
queue_batch_live_ids(const struct queue *q, const char *name, size_t len,
    uint64_t **ids, size_t *n)
{
	const struct batch *b = queue_batch_find(q, name, len);
	size_t k = 0;

	*ids = NULL;
	*n = 0;
	if (b == NULL)
		return SLUICE_ENOTFOUND;
	if (b->nlive == 0)
		return 0;
	if ((*ids = malloc(b->nlive * sizeof(**ids))) == NULL)
		return SLUICE_ENOMEM;
	for (uint32_t i = 0; i < q->bt.members.cap && k < b->nlive; i++) {
		const struct bmember *m;
		const struct task *t;

		if (q->bt.members.slot[i] == 0)
			continue;
		m = idx_at(&q->bt.members, i);
		if (m->b != b || (t = qs_task(q, m->id)) == NULL)
			continue;
		if (t->state == QUEUE_WAITING || t->state == QUEUE_READY ||
		    t->state == QUEUE_DELAYED || t->state == QUEUE_TAKEN)
			(*ids)[k++] = m->id;
	}
	qsort(*ids, k, sizeof(**ids), newest_first);
	*n = k;
	return 0;
}
