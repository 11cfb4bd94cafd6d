/* waiters - see waiters.h.
 *
 * A tube entry (wait_tube) holds the list of the waiters on it and the
 * state of its mark: idle, marked (on ws->marked), put off to the next
 * turn (on ws->retry), or held by the core while it serves it. An entry
 * is freed when its list is empty and it is idle, so a tube that no take
 * waits on costs nothing here, and marking it (every put of a tube no
 * take waits on) is one failed lookup. The name hash is seeded at start,
 * so names that collide cannot be chosen in advance. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/core/waiters.h"
#include "sluice.h"

enum { WT_IDLE, WT_MARKED, WT_RETRY, WT_HELD };

struct wait_tube {
	struct waiter_link *head, *tail;
	uint32_t n;              /* waiters on its list */
	struct wait_tube *mnext; /* on ws->marked or ws->retry */
	uint8_t state;
	uint64_t hash;
	size_t len;
	char name[];
};

struct wait_sess {
	uint32_t session;
	uint32_t n;
	struct waiter *head, *tail;
};

struct name_arg {
	const char *p;
	size_t len;
};

static uint64_t
tube_key(const void *item)
{
	return ((const struct wait_tube *)item)->hash;
}

static bool
tube_eq(const void *item, const void *arg)
{
	const struct wait_tube *t = item;
	const struct name_arg *a = arg;

	return t->len == a->len && memcmp(t->name, a->p, a->len) == 0;
}

static uint64_t
sess_key(const void *item)
{
	return idx_mix(((const struct wait_sess *)item)->session);
}

static bool
due_less(const void *a, const void *b)
{
	const struct waiter *x = a, *y = b;

	return x->deadline != y->deadline ? x->deadline < y->deadline
	                                  : x->seq < y->seq;
}

void
waiters_init(struct waiters *ws)
{
	struct timespec ts;

	memset(ws, 0, sizeof(*ws));
	idx_init(&ws->tubes, tube_key);
	idx_init(&ws->sessions, sess_key);
	heap_init(&ws->due, due_less, offsetof(struct waiter, hpos));
	clock_gettime(CLOCK_REALTIME, &ts);
	ws->seed = idx_mix((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
	    (uint64_t)(uintptr_t)ws);
}

void
waiters_fini(struct waiters *ws)
{
	struct wait_tube *t;

	for (uint32_t i = 0; i < ws->tubes.cap; i++)
		if ((t = idx_at(&ws->tubes, i)) != NULL)
			free(t);
	for (uint32_t i = 0; i < ws->sessions.cap; i++)
		free(idx_at(&ws->sessions, i));
	idx_fini(&ws->tubes);
	idx_fini(&ws->sessions);
	heap_fini(&ws->due);
	ws->marked = ws->retry = NULL;
}

static struct wait_tube *
tube_find(const struct waiters *ws, const char *name, size_t len)
{
	struct name_arg a = { name, len };

	if (ws->tubes.len == 0)
		return NULL;
	return idx_find_eq(
	    &ws->tubes, idx_hash_bytes(ws->seed, name, len), tube_eq, &a);
}

static struct wait_sess *
sess_find(const struct waiters *ws, uint32_t session)
{
	return ws->sessions.len == 0
	    ? NULL
	    : idx_find(&ws->sessions, idx_mix(session));
}

static void
tube_free_if_unused(struct waiters *ws, struct wait_tube *t)
{
	if (t->head != NULL || t->state != WT_IDLE)
		return;
	idx_remove(&ws->tubes, t);
	free(t);
}

struct waiter *
waiters_new(const struct queue_str *tubes, size_t ntubes)
{
	size_t bytes = 0, off = 0;
	struct waiter *w;
	char *names;

	for (size_t i = 0; i < ntubes; i++)
		bytes += tubes[i].len;
	w = calloc(1,
	    sizeof(*w) + ntubes * sizeof(w->tubes[0]) +
	        ntubes * sizeof(w->links[0]) + bytes + 1);
	if (w == NULL)
		return NULL;
	w->tubes = (struct queue_str *)(void *)w->mem;
	w->links = (struct waiter_link *)(void *)(w->tubes + ntubes);
	names = (char *)(w->links + ntubes);
	w->ntubes = ntubes;
	for (size_t i = 0; i < ntubes; i++) {
		memcpy(names + off, tubes[i].p, tubes[i].len);
		w->tubes[i] = (struct queue_str) { names + off, tubes[i].len };
		off += tubes[i].len;
	}
	w->hpos = HEAP_NONE;
	return w;
}

/* Whether tube i of w names one of the tubes before it. */
static bool
named_before(const struct waiter *w, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (w->tubes[j].len == w->tubes[i].len &&
		    memcmp(w->tubes[j].p, w->tubes[i].p, w->tubes[i].len) == 0)
			return true;
	return false;
}

int
waiters_add(struct waiters *ws, struct waiter *w)
{
	struct wait_sess *s;

	/* Every allocation first: nothing is linked until all succeeded. */
	if (idx_reserve(&ws->tubes, (uint32_t)w->ntubes) != 0 ||
	    idx_reserve(&ws->sessions, 1) != 0 ||
	    heap_reserve(&ws->due, 1) != 0)
		return SLUICE_ENOMEM;
	s = sess_find(ws, w->session);
	if (s == NULL) {
		if ((s = calloc(1, sizeof(*s))) == NULL)
			return SLUICE_ENOMEM;
		s->session = w->session;
		idx_insert(&ws->sessions, s);
	}
	w->nlinks = 0;
	for (size_t i = 0; i < w->ntubes; i++) {
		const struct queue_str *n = &w->tubes[i];
		struct wait_tube *t;

		if (named_before(w, i))
			continue;
		t = tube_find(ws, n->p, n->len);
		if (t == NULL) {
			t = calloc(1, sizeof(*t) + n->len + 1);
			if (t == NULL)
				goto nomem;
			t->hash = idx_hash_bytes(ws->seed, n->p, n->len);
			t->len = n->len;
			memcpy(t->name, n->p, n->len);
			idx_insert(&ws->tubes, t);
		}
		struct waiter_link *l = &w->links[w->nlinks++];

		*l = (struct waiter_link) { NULL, t->tail, w, t };
		if (t->tail != NULL)
			t->tail->next = l;
		else
			t->head = l;
		t->tail = l;
		t->n++;
	}
	w->seq = ++ws->seq;
	w->sess = s;
	w->snext = NULL;
	w->sprev = s->tail;
	if (s->tail != NULL)
		s->tail->snext = w;
	else
		s->head = w;
	s->tail = w;
	s->n++;
	heap_push(&ws->due, w);
	ws->n++;
	return 0;

nomem:
	/* Out of memory for a tube entry: undo the links made. */
	for (size_t i = 0; i < w->nlinks; i++) {
		struct waiter_link *l = &w->links[i];
		struct wait_tube *t = l->tube;

		t->tail = l->prev;
		if (l->prev != NULL)
			l->prev->next = NULL;
		else
			t->head = NULL;
		t->n--;
		tube_free_if_unused(ws, t);
	}
	w->nlinks = 0;
	if (s->n == 0) {
		idx_remove(&ws->sessions, s);
		free(s);
	}
	return SLUICE_ENOMEM;
}

void
waiters_remove(struct waiters *ws, struct waiter *w)
{
	struct wait_sess *s = w->sess;

	for (size_t i = 0; i < w->nlinks; i++) {
		struct waiter_link *l = &w->links[i];
		struct wait_tube *t = l->tube;

		if (l->prev != NULL)
			l->prev->next = l->next;
		else
			t->head = l->next;
		if (l->next != NULL)
			l->next->prev = l->prev;
		else
			t->tail = l->prev;
		t->n--;
		tube_free_if_unused(ws, t);
	}
	w->nlinks = 0;
	if (w->sprev != NULL)
		w->sprev->snext = w->snext;
	else
		s->head = w->snext;
	if (w->snext != NULL)
		w->snext->sprev = w->sprev;
	else
		s->tail = w->sprev;
	if (--s->n == 0) {
		idx_remove(&ws->sessions, s);
		free(s);
	}
	w->sess = NULL;
	heap_remove(&ws->due, w);
	ws->n--;
}

uint32_t
waiters_of_session(const struct waiters *ws, uint32_t session)
{
	const struct wait_sess *s = sess_find(ws, session);

	return s != NULL ? s->n : 0;
}

struct waiter *
waiters_session_head(const struct waiters *ws, uint32_t session)
{
	const struct wait_sess *s = sess_find(ws, session);

	return s != NULL ? s->head : NULL;
}

bool
waiters_on(const struct waiters *ws, const char *name, size_t len)
{
	const struct wait_tube *t = tube_find(ws, name, len);

	return t != NULL && t->head != NULL;
}

uint32_t
waiters_count_on(const struct waiters *ws, const char *name, size_t len)
{
	const struct wait_tube *t = tube_find(ws, name, len);

	return t != NULL ? t->n : 0;
}

static void
tube_mark(struct waiters *ws, struct wait_tube *t)
{
	if (t->state != WT_IDLE)
		return;
	t->state = WT_MARKED;
	t->mnext = ws->marked;
	ws->marked = t;
}

void
waiters_mark(struct waiters *ws, const char *name, size_t len)
{
	struct wait_tube *t = tube_find(ws, name, len);

	if (t != NULL)
		tube_mark(ws, t);
}

void
waiters_mark_heads(struct waiters *ws, const struct waiter *w)
{
	for (size_t i = 0; i < w->nlinks; i++)
		if (w->links[i].prev == NULL)
			tube_mark(ws, w->links[i].tube);
}

void
waiters_turn(struct waiters *ws)
{
	struct wait_tube *t;

	while ((t = ws->retry) != NULL) {
		ws->retry = t->mnext;
		t->state = WT_MARKED;
		t->mnext = ws->marked;
		ws->marked = t;
	}
}

struct wait_tube *
waiters_next_marked(struct waiters *ws)
{
	struct wait_tube *t = ws->marked;

	if (t != NULL) {
		ws->marked = t->mnext;
		t->mnext = NULL;
		t->state = WT_HELD;
	}
	return t;
}

struct waiter *
waiters_head(const struct wait_tube *t)
{
	return t->head != NULL ? t->head->w : NULL;
}

void
waiters_release(struct waiters *ws, struct wait_tube *t)
{
	t->state = WT_IDLE;
	tube_free_if_unused(ws, t);
}

void
waiters_retry(struct waiters *ws, struct wait_tube *t)
{
	if (t->head == NULL) {
		waiters_release(ws, t);
		return;
	}
	t->state = WT_RETRY;
	t->mnext = ws->retry;
	ws->retry = t;
}

struct waiter *
waiters_first_due(const struct waiters *ws)
{
	return heap_top(&ws->due);
}

struct waiter *
waiters_any(const struct waiters *ws)
{
	return heap_top(&ws->due);
}

struct waiter *
waiters_at(const struct waiters *ws, uint64_t i)
{
	return i < ws->due.len ? ws->due.item[i] : NULL;
}
