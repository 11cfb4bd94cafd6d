/* tube - a named queue's heaps, orders and settings (tube.h). The orders here
 * are total (ties go to the smaller id or tube index), so every heap has a
 * single possible top whatever the history that built it: a queue rebuilt from
 * a snapshot takes, expires and kicks in the same order as the original. */
#include <stdlib.h>
#include <string.h>

#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/hourly.h"
#include "queue/task.h"
#include "queue/tube.h"
#include "sluice.h"

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
	heap_init(&tb->waiting, tube_id_less, offsetof(struct task, hpos));
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
	heap_fini(&tb->ready);
	heap_fini(&tb->age);
	heap_fini(&tb->delayed);
	heap_fini(&tb->buried);
	heap_fini(&tb->done);
	heap_fini(&tb->waiting);
	free(tb->conf);
	groups_free(tb->groups);
	gconf_free(tb->gconf);
	free(tb->flow); /* off the flows heap already, or the queue goes */
	hourly_free(tb->hourly);
	free(tb->rates);
	free(tb);
}

int
tube_conf_new(const struct qrec_tube_conf *c, struct tube_conf **out)
{
	struct tube_conf *tc;

	*out = NULL;
	if (c->set == 0)
		return 0;
	if ((tc = malloc(sizeof(*tc))) == NULL)
		return SLUICE_ENOMEM;
	tc->v = *c;
	if (c->dead_letter_len > 0)
		memcpy(tc->dead_letter, c->dead_letter, c->dead_letter_len);
	tc->v.dead_letter = tc->dead_letter;
	*out = tc;
	return 0;
}

struct qrec_tube_conf
tube_conf_get(const struct tube *tb)
{
	struct qrec_tube_conf none = { 0 };

	return tb != NULL && tb->conf != NULL ? tb->conf->v : none;
}

/* Priority, then the time the task became due (a ready task's run_at),
 * then id: FIFO for plain puts, whose run_at never decreases with the id,
 * and due order for timed tasks, which may have been put in another
 * order than they came due. */
bool
tube_ready_less(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	if (x->pri != y->pri)
		return x->pri < y->pri;
	if (x->run_at != y->run_at)
		return x->run_at < y->run_at;
	return x->id < y->id;
}

bool
tube_run_at_less(const void *a, const void *b)
{
	const struct task *x = a, *y = b;

	return x->run_at != y->run_at ? x->run_at < y->run_at : x->id < y->id;
}

bool
tube_id_less(const void *a, const void *b)
{
	return ((const struct task *)a)->id < ((const struct task *)b)->id;
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

/* a += sign * b, counter by counter (sign 1 or -1, modulo 2^64). */
static void
counters_fold(
    struct queue_counters *a, const struct queue_counters *b, uint64_t sign)
{
	a->put += sign * b->put;
	a->take += sign * b->take;
	a->ack += sign * b->ack;
	a->release += sign * b->release;
	a->fail += sign * b->fail;
	a->bury += sign * b->bury;
	a->kick += sign * b->kick;
	a->del += sign * b->del;
	a->ttr_expired += sign * b->ttr_expired;
	a->session_released += sign * b->session_released;
	a->replace += sign * b->replace;
}

void
tube_counters_add(struct queue_counters *a, const struct queue_counters *b)
{
	counters_fold(a, b, 1);
}

void
tube_counters_sub(struct queue_counters *a, const struct queue_counters *b)
{
	counters_fold(a, b, UINT64_MAX);
}
