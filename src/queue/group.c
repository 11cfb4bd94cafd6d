/* group - a tube's fair groups (group.h): the table of groups by slot, the
 * name index, each group's heap of ready tasks and the rotation.
 *
 * A named group's heap is kept in the group as (item, len, cap) and worked
 * on through a struct heap made for the call (view/keep), so a group pays
 * for no comparison function or offset of its own. The room of a group's
 * heap covers every task that names it (cap >= ntasks), so a push never
 * allocates; the room shrinks when a quarter is used. Invariants: a group
 * is in the rotation iff it has ready tasks, and then its `pri` is its
 * best ready task's; table[g->slot] == g for every named group; the
 * "" group has slot 0 and its heap is the tube's ready heap. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/qrec.h"
#include "queue/tube.h"
#include "sluice.h"

enum { GROUP_SEED = 0x67726f7570 };

bool
group_name_valid(const char *name, size_t len)
{
	return qrec_group_valid(name, len);
}

static uint64_t
name_hash(const char *name, size_t len)
{
	return idx_hash_bytes(GROUP_SEED, name, len);
}

static uint64_t
group_key(const void *item)
{
	const struct group *g = item;

	return name_hash(g->name, g->name_len);
}

struct name_arg {
	const char *p;
	size_t len;
};

static bool
group_eq(const void *item, const void *arg)
{
	const struct group *g = item;
	const struct name_arg *a = arg;

	return g->name_len == a->len && memcmp(g->name, a->p, a->len) == 0;
}

/* Rotation order: the better best task first, then the earlier turn, then
 * the smaller slot (so the top is one whatever the history). */
static bool
rotation_less(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->pri != y->pri)
		return x->pri < y->pri;
	if (x->turn != y->turn)
		return x->turn < y->turn;
	return x->slot < y->slot;
}

/* ---- A group's heap --------------------------------------------------- */

static struct heap *
view(struct groups *gs, struct group *g, struct heap *h)
{
	if (g->slot == 0)
		return &gs->tube->ready;
	h->item = (void **)group_items(g);
	h->len = g->len;
	h->cap = g->cap;
	h->pos_off = (uint32_t)offsetof(struct task, hpos);
	h->noshrink = true;
	h->less = tube_ready_less;
	return h;
}

static void
keep(struct group *g, const struct heap *h)
{
	if (g->slot == 0)
		return;
	/* the room never moves: room() made it big enough */
	assert(h->item == group_items(g));
	g->len = h->len;
}

static struct task *
best(const struct groups *gs, const struct group *g)
{
	if (g->slot == 0)
		return heap_top(&gs->tube->ready);
	return g->len > 0 ? group_items(g)[0] : NULL;
}

/* Room for `need` tasks in g's heap (never below its ready tasks). */
static int
room(struct group *g, uint32_t need)
{
	void **p;
	uint32_t cap;

	if (need <= g->cap)
		return 0;
	cap = g->cap + g->cap / 4;
	if (cap < need)
		cap = need;
	if (cap < 4)
		cap = cap <= 1 ? 1 : 4;
	if (cap == 1) {
		g->one = NULL;
		g->cap = 1;
		return 0;
	}
	if (g->cap <= 1) {
		if ((p = malloc((size_t)cap * sizeof(*p))) == NULL)
			return SLUICE_ENOMEM;
		if (g->len > 0)
			p[0] = g->one;
	} else if ((p = realloc(g->item, (size_t)cap * sizeof(*p))) == NULL) {
		return SLUICE_ENOMEM;
	}
	g->item = p;
	g->cap = cap;
	return 0;
}

/* Gives back room when under a quarter of it is needed. */
static void
shrink(struct group *g)
{
	void **p;
	uint32_t cap;

	if (g->cap <= 4 || g->ntasks >= g->cap / 4)
		return;
	cap = g->ntasks * 2 < 4 ? 4 : g->ntasks * 2;
	if ((p = realloc(g->item, (size_t)cap * sizeof(*p))) != NULL) {
		g->item = p;
		g->cap = cap;
	}
}

/* ---- The rotation ------------------------------------------------------ */

static int
by_turn(const void *a, const void *b)
{
	const struct group *x = *(struct group *const *)a;
	const struct group *y = *(struct group *const *)b;

	return x->turn < y->turn ? -1 : x->turn > y->turn;
}

static int
by_rotation(const void *a, const void *b)
{
	const void *x = *(void *const *)a, *y = *(void *const *)b;

	return rotation_less(x, y) ? -1 : rotation_less(y, x);
}

/* The next turn. Before the counter wraps, the turns of the groups in the
 * rotation are renumbered 1..n in their order (a sorted array is a heap):
 * once in 2^32 turns, O(g log g), in place. */
static uint32_t
next_turn(struct groups *gs)
{
	struct heap *r = &gs->rotation;

	if (gs->turn == UINT32_MAX) {
		qsort(r->item, r->len, sizeof(*r->item), by_turn);
		for (uint32_t i = 0; i < r->len; i++)
			((struct group *)r->item[i])->turn = i + 1;
		qsort(r->item, r->len, sizeof(*r->item), by_rotation);
		for (uint32_t i = 0; i < r->len; i++)
			((struct group *)r->item[i])->rpos = i;
		gs->turn = r->len;
	}
	return ++gs->turn;
}

/* After g's ready tasks changed: in the rotation iff it has some and its
 * limits do not hold it (glimit.h; one test without group limits), at
 * the place of its best one. A group that joins takes the next turn. */
void
groups_rotate(struct groups *gs, struct group *g)
{
	struct task *t = best(gs, g);

	if (t == NULL || (gs->lv != NULL && glimit_held(gs, g))) {
		if (g->rpos != HEAP_NONE)
			heap_remove(&gs->rotation, g);
		return;
	}
	if (g->rpos == HEAP_NONE) {
		g->pri = t->pri;
		g->turn = next_turn(gs);
		heap_push(&gs->rotation, g);
	} else if (g->pri != t->pri) {
		g->pri = t->pri;
		heap_fix(&gs->rotation, g);
	}
}

struct group *
groups_of(const struct tube *tb, const struct task *t)
{
	uint32_t s = group_slot(t);

	return s == 0 ? &tb->groups->none : tb->groups->table[s];
}

void
groups_push(struct groups *gs, struct task *t)
{
	struct group *g = groups_of(gs->tube, t);
	struct heap h, *hp = view(gs, g, &h);

	heap_push(hp, t);
	keep(g, hp);
	groups_rotate(gs, g);
}

void
groups_remove(struct groups *gs, struct task *t)
{
	struct group *g = groups_of(gs->tube, t);
	struct heap h, *hp = view(gs, g, &h);

	heap_remove(hp, t);
	keep(g, hp);
	groups_rotate(gs, g);
}

struct task *
groups_top(const struct groups *gs)
{
	const struct group *g = heap_top(&gs->rotation);

	return g == NULL ? NULL : best(gs, g);
}

void
groups_served(struct groups *gs, const struct task *t)
{
	struct group *g = groups_of(gs->tube, t);

	if (g->rpos == HEAP_NONE)
		return;
	g->turn = next_turn(gs);
	heap_fix(&gs->rotation, g);
}

/* ---- Groups come and go ------------------------------------------------ */

static struct groups *
groups_new(struct tube *tb)
{
	struct groups *gs = calloc(1, sizeof(*gs));

	if (gs == NULL)
		return NULL;
	gs->tube = tb;
	/* the tube's taken tasks so far name no group */
	gs->none.taken = (uint32_t)tb->ntaken;
	idx_init(&gs->names, group_key);
	heap_init(&gs->rotation, rotation_less, offsetof(struct group, rpos));
	gs->none.rpos = HEAP_NONE;
	return gs;
}

/* The "" group's ready tasks join the rotation (a tube's first group). */
static void
groups_start(struct groups *gs)
{
	groups_rotate(gs, &gs->none);
}

void
groups_free(struct groups *gs)
{
	if (gs == NULL)
		return;
	glimit_groups_free(gs);
	if (gs->all != NULL) { /* out of the queue's list */
		if (gs->lprev != NULL)
			gs->lprev->lnext = gs->lnext;
		else
			gs->all->head = gs->lnext;
		if (gs->lnext != NULL)
			gs->lnext->lprev = gs->lprev;
		gs->all->n--;
	}
	for (uint32_t i = 1; i < gs->cap; i++) {
		struct group *g = gs->table[i];

		if (((uintptr_t)g & 1) != 0 || g == NULL)
			continue;
		if (g->cap > 1)
			free(g->item);
		free(g);
	}
	free(gs->table);
	idx_fini(&gs->names);
	heap_fini(&gs->rotation);
	free(gs);
}

struct group *
groups_find(const struct tube *tb, const char *name, size_t len)
{
	struct name_arg a = { name, len };

	if (tb->groups == NULL)
		return NULL;
	return idx_find_eq(
	    &tb->groups->names, name_hash(name, len), group_eq, &a);
}

/* A free slot (the table grows by a quarter when full), or 0. */
static uint32_t
slot_get(struct groups *gs)
{
	uint32_t s, cap, start;
	struct group **p;

	if (gs->free == 0) {
		cap = gs->cap + gs->cap / 4;
		if (cap < 8)
			cap = 8;
		if (cap > GROUP_SLOTS_MAX + 1)
			cap = GROUP_SLOTS_MAX + 1;
		if (cap <= gs->cap || glimit_room(gs, cap) != 0)
			return 0;
		if ((p = realloc(gs->table, (size_t)cap * sizeof(*p))) == NULL)
			return 0;
		/* the new slots form the free list, in order */
		start = gs->cap > 1 ? gs->cap : 1;
		for (uint32_t i = start; i < cap; i++)
			p[i] = (struct group
			        *)(((uintptr_t)(i + 1 < cap ? i + 1 : 0) << 1) |
			    1);
		gs->free = start;
		gs->table = p;
		gs->cap = cap;
	}
	s = gs->free;
	gs->free = (uint32_t)((uintptr_t)gs->table[s] >> 1);
	return s;
}

static void
slot_put(struct groups *gs, uint32_t s)
{
	gs->table[s] = (struct group *)(((uintptr_t)gs->free << 1) | 1);
	gs->free = s;
}

int
groups_prepare(struct groups_list *all, struct tube *tb, const char *name,
    size_t len, struct group **out)
{
	struct groups *gs = tb->groups;
	struct group *g;
	bool fresh = false;
	int rc;

	*out = NULL;
	if ((g = groups_find(tb, name, len)) != NULL) {
		if ((rc = room(g, g->ntasks + 1)) != 0)
			return rc;
		*out = g;
		return 0;
	}
	if (gs == NULL) {
		if ((gs = groups_new(tb)) == NULL)
			return SLUICE_ENOMEM;
		fresh = true;
	}
	rc = SLUICE_ENOMEM;
	if (gs->n >= GROUP_SLOTS_MAX) {
		rc = SLUICE_ELIMIT;
		goto fail;
	}
	if (idx_reserve(&gs->names, 1) != 0 ||
	    heap_reserve(&gs->rotation, 2) != 0)
		goto fail;
	if ((g = calloc(1, offsetof(struct group, name) + len)) == NULL)
		goto fail;
	if ((g->slot = slot_get(gs)) == 0) {
		free(g);
		rc = gs->cap > GROUP_SLOTS_MAX ? SLUICE_ELIMIT : SLUICE_ENOMEM;
		goto fail;
	}
	g->rpos = HEAP_NONE;
	g->name_len = (uint8_t)len & 0xff;
	memcpy(g->name, name, len);
	if (!fresh && (rc = glimit_group_new(tb, g)) != 0) {
		slot_put(gs, g->slot);
		free(g);
		goto fail;
	}
	(void)room(g, 1); /* inside the struct: cannot fail */
	gs->table[g->slot] = g;
	idx_insert(&gs->names, g);
	gs->n++;
	if (fresh) {
		tb->groups = gs;
		if ((rc = glimit_group_new(tb, g)) != 0) {
			tb->groups = NULL;
			goto fail; /* groups_free frees g */
		}
		groups_start(gs);
		gs->all = all;
		gs->lnext = all->head;
		if (all->head != NULL)
			all->head->lprev = gs;
		all->head = gs;
		all->n++;
	}
	*out = g;
	return 0;
fail:
	if (fresh)
		groups_free(gs);
	return rc;
}

/* Frees g, which no task names (and so has no ready task); with the last
 * named group, the tube's groups go. */
static void
group_drop(struct tube *tb, struct group *g)
{
	struct groups *gs = tb->groups;

	assert(g->ntasks == 0 && g->len == 0 && g->rpos == HEAP_NONE &&
	    g->taken == 0);
	glimit_group_drop(gs, g);
	idx_remove(&gs->names, g);
	slot_put(gs, g->slot);
	if (g->cap > 1)
		free(g->item);
	free(g);
	if (--gs->n == 0) {
		tb->groups = NULL;
		groups_free(gs);
	}
}

void
groups_undo(struct tube *tb, struct group *g)
{
	if (g != NULL && g->ntasks == 0)
		group_drop(tb, g);
}

void
groups_join(struct tube *tb, struct group *g, struct task *t)
{
	(void)tb;
	assert(g->cap > g->ntasks);
	g->ntasks++;
	group_slot_set(t, g->slot);
}

void
groups_leave(struct tube *tb, struct task *t)
{
	uint32_t s = group_slot(t);
	struct group *g;

	if (s == 0)
		return;
	g = tb->groups->table[s];
	group_slot_set(t, 0);
	g->ntasks--;
	if (g->ntasks == 0)
		group_drop(tb, g);
	else
		shrink(g);
}

bool
groups_valid(const struct groups *gs)
{
	uint64_t taken = 0;
	uint32_t n = 0;

	if (!heap_valid(&gs->rotation))
		return false;
	for (uint32_t i = 1; i < gs->cap; i++) {
		const struct group *g = gs->table[i];
		struct heap h;

		if (((uintptr_t)g & 1) != 0)
			continue;
		n++;
		if (g == NULL || g->slot != i || g->ntasks == 0 ||
		    g->cap < g->ntasks || g->len > g->ntasks)
			return false;
		if (g->taken > g->ntasks)
			return false;
		taken += g->taken;
		h.item = (void **)group_items(g);
		h.len = g->len;
		h.cap = g->cap;
		h.pos_off = (uint32_t)offsetof(struct task, hpos);
		h.less = tube_ready_less;
		if (!heap_valid(&h))
			return false;
		if ((g->len > 0 && !glimit_held(gs, g)) !=
		    (g->rpos != HEAP_NONE))
			return false;
		if (g->rpos != HEAP_NONE &&
		    g->pri != ((struct task *)best(gs, g))->pri)
			return false;
	}
	if ((gs->tube->ready.len > 0) != (gs->none.rpos != HEAP_NONE))
		return false;
	if (taken + gs->none.taken != gs->tube->ntaken)
		return false;
	return n == gs->n && n == gs->names.len && n > 0;
}
