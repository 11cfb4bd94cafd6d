/* tube - see tube.h. The orders here are total (ties go to the smaller id
 * or tube index), so every heap has a single possible top whatever the
 * history that built it: a queue rebuilt from a snapshot takes, expires
 * and kicks in the same order as the original. */
#include <stdlib.h>
#include <string.h>

#include "queue/hourly.h"
#include "queue/task.h"
#include "queue/tube.h"

struct tube *
tube_new(const char *name, size_t len, uint64_t hash)
{
	struct tube *tb = calloc(1, sizeof(*tb) + len + 1);

	if (tb == NULL)
		return NULL;
	heap_init(&tb->ready, tube_ready_less, offsetof(struct task, hpos));
	heap_init(&tb->age, tube_run_at_less, offsetof(struct task, apos));
	heap_init(&tb->delayed, tube_run_at_less, offsetof(struct task, hpos));
	heap_init(&tb->buried, tube_buried_less, offsetof(struct task, hpos));
	heap_init(&tb->done, tube_buried_less, offsetof(struct task, hpos));
	tb->hash = hash;
	tb->wpos = HEAP_NONE;
	tb->ppos = HEAP_NONE;
	tb->name_len = (uint16_t)len;
	memcpy(tb->name, name, len);
	tb->name[len] = '\0';
	return tb;
}

void
tube_free(struct tube *tb)
{
	if (tb == NULL)
		return;
	heap_free(&tb->ready);
	heap_free(&tb->age);
	heap_free(&tb->delayed);
	heap_free(&tb->buried);
	heap_free(&tb->done);
	hourly_free(tb->hourly);
	free(tb);
}

bool
tube_ready_less(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	return x->pri != y->pri ? x->pri < y->pri : x->id < y->id;
}

bool
tube_run_at_less(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	return x->run_at != y->run_at ? x->run_at < y->run_at : x->id < y->id;
}

bool
tube_buried_less(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	return x->updated_at != y->updated_at ? x->updated_at < y->updated_at
	                                      : x->id < y->id;
}

bool
tube_deadline_less(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	return x->ext->deadline != y->ext->deadline
	    ? x->ext->deadline < y->ext->deadline
	    : x->id < y->id;
}

bool
tube_wake_less(const void *a, const void *b)
{
	const struct tube *x = a, *y = b;
	const struct task *tx = heap_top(&x->delayed);
	const struct task *ty = heap_top(&y->delayed);

	return tx->run_at != ty->run_at ? tx->run_at < ty->run_at
	                                : x->index < y->index;
}

bool
tube_pause_less(const void *a, const void *b)
{
	const struct tube *x = a, *y = b;

	return x->paused_until != y->paused_until
	    ? x->paused_until < y->paused_until
	    : x->index < y->index;
}

void
tube_counters_add(struct queue_counters *a, const struct queue_counters *b)
{
	a->put += b->put;
	a->take += b->take;
	a->ack += b->ack;
	a->release += b->release;
	a->fail += b->fail;
	a->bury += b->bury;
	a->kick += b->kick;
	a->del += b->del;
	a->ttr_expired += b->ttr_expired;
	a->session_released += b->session_released;
	a->replace += b->replace;
}
