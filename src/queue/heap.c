/* heap - the binary min-heap of pointers that each item's stored
 * position makes removable in O(log n) (heap.h). The array starts at 8 slots,
 * grows by a quarter when full (so it is at least 4/5 full after growing: 10
 * bytes a task at worst, where doubling left 16) and halves when under a
 * quarter full (never below 8), so a drained tube gives most of its memory
 * back. A reservation for many at once gets exactly that room.
 *
 * A push into a large heap compares the new item with its parent first,
 * and for items that come in order (a replay) or in a random one (a
 * snapshot's tasks, in the order of the id index) that is usually where
 * it stops: that parent, an item far from the one just added in memory,
 * is most of a push's cost. The slot a push fills is always the next, so
 * the parent (and grandparent) of the push HEAP_PUSH_AHEAD on is asked of
 * the memory now, and a run of pushes does not wait for each parent in
 * turn. Building the heap at the end instead (Floyd, O(n)) was measured
 * slower on a 10M-task snapshot: its sifts reach down into every level,
 * far apart in the array and in memory. Invariants:
 * item[i] is never after its parent item[(i-1)/2] in the `less` order, and
 * heap_pos(item[i]) == i. */
#include <assert.h>
#include <stdlib.h>

#include "queue/heap.h"
#include "sluice.h"

enum {
	HEAP_MIN_CAP = 8,
	HEAP_PUSH_AHEAD = 16,
	/* Below this many items the heap's items are likely in the cache. */
	HEAP_PREFETCH_FROM = 4096,
};

static inline void
set_pos(const struct heap *h, void *item, uint32_t pos)
{
	*(uint32_t *)((char *)item + h->pos_off) = pos;
}

static inline void
put_at(struct heap *h, uint32_t i, void *item)
{
	h->item[i] = item;
	set_pos(h, item, i);
}

void
heap_init(struct heap *h, heap_less_fn *less, size_t pos_off)
{
	h->item = NULL;
	h->len = 0;
	h->cap = 0;
	h->pos_off = (uint32_t)pos_off;
	h->noshrink = false;
	h->less = less;
}

void
heap_fini(struct heap *h)
{
	free(h->item);
	h->item = NULL;
	h->len = 0;
	h->cap = 0;
}

static int
resize(struct heap *h, uint32_t cap)
{
	void **p = realloc(h->item, (size_t)cap * sizeof(*p));

	if (p == NULL)
		return SLUICE_ENOMEM;
	h->item = p;
	h->cap = cap;
	return 0;
}

int
heap_reserve(struct heap *h, uint32_t more)
{
	uint64_t need = (uint64_t)h->len + more;
	uint64_t cap = (uint64_t)h->cap + h->cap / 4;

	if (need <= h->cap)
		return 0;
	if (cap < need)
		cap = need;
	if (cap < HEAP_MIN_CAP)
		cap = HEAP_MIN_CAP;
	if (cap > UINT32_MAX / 2)
		return SLUICE_ENOMEM;
	return resize(h, (uint32_t)cap);
}

static void
sift_up(struct heap *h, uint32_t i, void *item)
{
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!h->less(item, h->item[parent]))
			break;
		put_at(h, i, h->item[parent]);
		i = parent;
	}
	put_at(h, i, item);
}

static void
sift_down(struct heap *h, uint32_t i, void *item)
{
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->len)
			break;
		if (c + 1 < h->len && h->less(h->item[c + 1], h->item[c]))
			c++;
		if (!h->less(h->item[c], item))
			break;
		put_at(h, i, h->item[c]);
		i = c;
	}
	put_at(h, i, item);
}

void
heap_push(struct heap *h, void *item)
{
	assert(h->len < h->cap);
	if (h->len >= HEAP_PREFETCH_FROM) {
		/* the parent of slot len + AHEAD, and its parent */
		uint32_t parent = (h->len + HEAP_PUSH_AHEAD - 1) / 2;

		__builtin_prefetch(h->item[parent]);
		__builtin_prefetch(h->item[(parent - 1) / 2]);
	}
	h->len++;
	sift_up(h, h->len - 1, item);
}

void
heap_remove(struct heap *h, void *item)
{
	uint32_t i = heap_pos(h, item);
	void *last;

	assert(i < h->len && h->item[i] == item);
	set_pos(h, item, HEAP_NONE);
	last = h->item[--h->len];
	if (i < h->len) {
		if (i > 0 && h->less(last, h->item[(i - 1) / 2]))
			sift_up(h, i, last);
		else
			sift_down(h, i, last);
	}
	/* Halve when under a quarter full; a failed shrink keeps the
	 * larger array. Room for one push remains either way, so a
	 * reservation made before a removal still holds after it. */
	if (!h->noshrink && h->cap > HEAP_MIN_CAP && h->len < h->cap / 4)
		(void)resize(h, h->cap / 2);
}

void
heap_fix(struct heap *h, void *item)
{
	uint32_t i = heap_pos(h, item);

	assert(i < h->len && h->item[i] == item);
	if (i > 0 && h->less(item, h->item[(i - 1) / 2]))
		sift_up(h, i, item);
	else
		sift_down(h, i, item);
}

bool
heap_valid(const struct heap *h)
{
	if (h->len > h->cap)
		return false;
	for (uint32_t i = 0; i < h->len; i++) {
		if (heap_pos(h, h->item[i]) != i)
			return false;
		if (i > 0 && h->less(h->item[i], h->item[(i - 1) / 2]))
			return false;
	}
	return true;
}
