/* rwaits - the waits for a task's result (design in rwaits.h). */
#include "server/core/rwaits.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sluice.h"

static uint64_t
task_key(const void *item)
{
	return ((const struct rwait_task *)item)->id;
}

static uint64_t
sess_key(const void *item)
{
	return ((const struct rwait_sess *)item)->session;
}

static bool
due_less(const void *a, const void *b)
{
	const struct rwaiter *x = a, *y = b;

	return x->deadline != y->deadline ? x->deadline < y->deadline
	                                  : x->seq < y->seq;
}

void
rwaits_init(struct rwaits *rw)
{
	memset(rw, 0, sizeof(*rw));
	idx_init(&rw->tasks, task_key);
	idx_init(&rw->sessions, sess_key);
	heap_init(&rw->due, due_less, offsetof(struct rwaiter, hpos));
}

void
rwaits_fini(struct rwaits *rw)
{
	struct rwait_task *t;

	while ((t = rw->woken) != NULL) {
		rw->woken = t->wnext;
		free(t);
	}
	for (uint32_t i = 0; i < rw->tasks.cap; i++)
		free(idx_at(&rw->tasks, i));
	for (uint32_t i = 0; i < rw->sessions.cap; i++)
		free(idx_at(&rw->sessions, i));
	idx_fini(&rw->tasks);
	idx_fini(&rw->sessions);
	heap_fini(&rw->due);
}

int
rwaits_add(struct rwaits *rw, uint64_t id, struct face_ctx *ctx,
    uint32_t session, int64_t deadline)
{
	struct rwait_task *t = rw->tasks.len ? idx_find(&rw->tasks, id) : NULL;
	struct rwait_sess *s =
	    rw->sessions.len ? idx_find(&rw->sessions, session) : NULL;
	struct rwaiter *w;

	if (heap_reserve(&rw->due, 1) != 0 ||
	    (t == NULL && idx_reserve(&rw->tasks, 1) != 0) ||
	    (s == NULL && idx_reserve(&rw->sessions, 1) != 0))
		return SLUICE_ENOMEM;
	if (s == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL)
			return SLUICE_ENOMEM;
		s->session = session;
		idx_insert(&rw->sessions, s);
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		if (s->n == 0) {
			idx_remove(&rw->sessions, s);
			free(s);
		}
		return SLUICE_ENOMEM;
	}
	if (t == NULL) {
		if ((t = calloc(1, sizeof(*t))) == NULL) {
			free(w);
			return SLUICE_ENOMEM;
		}
		t->id = id;
		idx_insert(&rw->tasks, t);
	}
	w->task = t;
	w->ctx = ctx;
	w->session = session;
	w->deadline = deadline;
	w->seq = ++rw->seq;
	w->prev = t->tail;
	if (t->tail != NULL)
		t->tail->next = w;
	else
		t->head = w;
	t->tail = w;
	w->anext = rw->all;
	if (rw->all != NULL)
		rw->all->aprev = w;
	rw->all = w;
	heap_push(&rw->due, w);
	s->n++;
	rw->n++;
	return 0;
}

void
rwaits_wake(struct rwaits *rw, uint64_t id)
{
	struct rwait_task *t;

	if (rw->tasks.len == 0 || (t = idx_find(&rw->tasks, id)) == NULL)
		return;
	idx_remove(&rw->tasks, t);
	t->woken = true;
	t->wnext = NULL;
	if (rw->woken_tail != NULL)
		rw->woken_tail->wnext = t;
	else
		rw->woken = t;
	rw->woken_tail = t;
}

void
rwaits_remove(struct rwaits *rw, struct rwaiter *w)
{
	struct rwait_task *t = w->task;

	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		t->head = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	else
		t->tail = w->prev;
	if (w->aprev != NULL)
		w->aprev->anext = w->anext;
	else
		rw->all = w->anext;
	if (w->anext != NULL)
		w->anext->aprev = w->aprev;
	heap_remove(&rw->due, w);
	rw->n--;
	{
		struct rwait_sess *s = idx_find(&rw->sessions, w->session);

		if (s != NULL && --s->n == 0) {
			idx_remove(&rw->sessions, s);
			free(s);
		}
	}
	free(w);
	/* A task without waiters goes, unless it is on the woken list
	 * (rwaits_next_woken frees it there). */
	if (t->head == NULL && !t->woken) {
		idx_remove(&rw->tasks, t);
		free(t);
	}
}

struct rwaiter *
rwaits_next_woken(struct rwaits *rw)
{
	struct rwait_task *t;

	while ((t = rw->woken) != NULL) {
		if (t->head != NULL)
			return t->head;
		rw->woken = t->wnext;
		if (rw->woken == NULL)
			rw->woken_tail = NULL;
		free(t);
	}
	return NULL;
}

struct rwaiter *
rwaits_first_due(const struct rwaits *rw)
{
	return heap_top(&rw->due);
}

uint32_t
rwaits_of_session(const struct rwaits *rw, uint32_t session)
{
	const struct rwait_sess *s =
	    rw->sessions.len ? idx_find(&rw->sessions, session) : NULL;

	return s != NULL ? s->n : 0;
}
