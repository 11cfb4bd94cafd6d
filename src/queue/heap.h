/* heap - a binary min-heap of pointers. Each item keeps its own position
 * (a uint32_t at a fixed offset inside it), so an item is removed or
 * re-sorted in O(log n) without a search; HEAP_NONE marks an item in no
 * heap. Space is reserved apart from insertion (heap_reserve), so a caller
 * can get every allocation out of the way before it changes anything.
 * Pure: no I/O, no logging. */
#ifndef SLUICE_QUEUE_HEAP_H
#define SLUICE_QUEUE_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HEAP_NONE UINT32_MAX

/* Strict order: true when a goes before b. */
typedef bool heap_less_fn(const void *a, const void *b);

struct heap {
	void **item;
	uint32_t len;
	uint32_t cap;
	uint32_t pos_off; /* offset of the item's uint32_t position */
	bool noshrink;    /* keep reserved room: never shrink */
	heap_less_fn *less;
};

void heap_init(struct heap *h, heap_less_fn *less, size_t pos_off);
/* Frees the array (not the items). */
void heap_fini(struct heap *h);
/* Room for `more` pushes. Returns 0 or SLUICE_ENOMEM. */
int heap_reserve(struct heap *h, uint32_t more);
/* Adds an item; room must have been reserved. */
void heap_push(struct heap *h, void *item);
/* Removes an item that is in this heap. May shrink the array (unless
 * noshrink is set), but always leaves room for one push. */
void heap_remove(struct heap *h, void *item);
/* Restores the order after the item's key changed. */
void heap_fix(struct heap *h, void *item);
/* True when the array is a heap and every position is right. O(n). */
bool heap_valid(const struct heap *h);

static inline void *
heap_top(const struct heap *h)
{
	return h->len ? h->item[0] : NULL;
}

static inline uint32_t
heap_pos(const struct heap *h, const void *item)
{
	return *(const uint32_t *)((const char *)item + h->pos_off);
}

#endif
