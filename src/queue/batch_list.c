/* batch_list - what the views read of batches: the batch a task is in
 * (a task's view links to it), and the batches a queue holds, for a
 * listing (`GET /v1/batches`, the dashboard): the open ones first, the latest
 * started first (one made by `batch set` before any put counts as started now),
 * then the ended ones kept for the dedup window, the latest ended first;
 * at most `limit` of them, each with the counts of queue_batch_show.
 *
 * Cost: the batches are sorted (O(B log B), B <= QUEUE_BATCHES_MAX), and
 * the live tasks of the listed ones counted by state in one pass over
 * the member table (O(members log limit)), not one pass per batch as
 * queue_batch_show would make; no pass at all when none of the listed
 * batches has a live task. */
#include <stdlib.h>
#include <string.h>

#include "queue/batch.h"
#include "queue/qstate.h"
#include "sluice.h"

const struct batch *
queue_batch_of(const struct queue *q, uint64_t id)
{
	const struct bmember *m = idx_find(&q->bt.members, idx_mix(id));

	return m != NULL ? m->b : NULL;
}

/* A batch's place in the listing: open before ended; then the latest
 * first (started for an open one, ended for an ended one). */
static int64_t
list_time(const struct batch *b, int64_t now)
{
	if (b->ended)
		return b->ended_at;
	return b->started_at != 0 ? b->started_at : now;
}

static int64_t list_now; /* for the comparisons of one qsort */

static int
cmp_listed(const void *x, const void *y)
{
	const struct batch *a = *(const struct batch *const *)x;
	const struct batch *b = *(const struct batch *const *)y;
	int64_t ta, tb;

	if (a->ended != b->ended)
		return a->ended ? 1 : -1;
	ta = list_time(a, list_now);
	tb = list_time(b, list_now);
	if (ta != tb)
		return ta > tb ? -1 : 1;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	return memcmp(a->name, b->name, a->name_len);
}

static int
cmp_info_batch(const void *x, const void *y)
{
	const struct queue_batch_info *a = x, *b = y;

	return a->b < b->b ? -1 : a->b > b->b;
}

/* Counts the live tasks of the batches of `sorted` (by batch address)
 * by state, in one pass over the members. */
static void
count_live(const struct queue *q, struct queue_batch_info *sorted, uint32_t n)
{
	for (uint32_t i = 0; i < q->bt.members.cap; i++) {
		const struct bmember *m;
		const struct task *t;
		struct queue_batch_info key, *in;

		if (q->bt.members.slot[i] == 0)
			continue;
		m = idx_at(&q->bt.members, i);
		key.b = m->b;
		in = bsearch(&key, sorted, n, sizeof(*sorted), cmp_info_batch);
		if (in == NULL || (t = qs_task(q, m->id)) == NULL)
			continue;
		batch_count_live(in, t);
	}
}

static void
info_of(const struct batch *b, struct queue_batch_info *out)
{
	memset(out, 0, sizeof(*out));
	out->b = b;
	out->total = b->total;
	out->acked = b->acked;
	out->buried = b->buried;
	out->failed = b->failed;
	out->started_at = b->started_at;
	out->ended_at = b->ended ? b->ended_at : 0;
	out->closed = b->closed;
	out->ended = b->ended;
	out->owed = b->owed;
	out->fired = b->fired;
}

static int
cmp_info_listed(const void *x, const void *y)
{
	const struct queue_batch_info *a = x, *b = y;

	return cmp_listed(&a->b, &b->b);
}

int
queue_batch_list(const struct queue *q, int64_t now, uint32_t limit,
    struct queue_batch_info *out, uint32_t *n)
{
	const struct batch **all;
	uint32_t k = 0;
	bool live = false;

	*n = 0;
	if (q->bt.names.len == 0 || limit == 0)
		return 0;
	if ((all = malloc(q->bt.names.len * sizeof(*all))) == NULL)
		return SLUICE_ENOMEM;
	for (uint32_t i = 0; i < q->bt.names.cap && k < q->bt.names.len; i++)
		if (q->bt.names.slot[i] != 0)
			all[k++] = idx_at(&q->bt.names, i);
	list_now = now;
	qsort(all, k, sizeof(*all), cmp_listed);
	if (k > limit)
		k = limit;
	for (uint32_t i = 0; i < k; i++) {
		info_of(all[i], &out[i]);
		live |= all[i]->nlive != 0;
	}
	free(all);
	if (live) {
		qsort(out, k, sizeof(*out), cmp_info_batch);
		count_live(q, out, k);
		list_now = now;
		qsort(out, k, sizeof(*out), cmp_info_listed);
	}
	*n = k;
	return 0;
}
