/* idx - see idx.h. Linear probing; removal shifts the following run back
 * (no tombstones), so a lookup stops at the first empty slot. Invariants:
 * len <= 3/4 cap (so an empty slot always exists and every probe loop
 * ends); every item sits between its home slot and the first empty slot
 * after it. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "queue/idx.h"
#include "sluice.h"

enum { IDX_MIN_CAP = 16 };

static inline uint32_t
home(const struct idx *x, const void *item)
{
	return (uint32_t)idx_mix(x->key(item)) & (x->cap - 1);
}

void
idx_init(struct idx *x, idx_key_fn *key)
{
	x->slot = NULL;
	x->cap = 0;
	x->len = 0;
	x->key = key;
}

void
idx_free(struct idx *x)
{
	free(x->slot);
	x->slot = NULL;
	x->cap = 0;
	x->len = 0;
}

static void
place(struct idx *x, void *item)
{
	uint32_t i = home(x, item);

	while (x->slot[i] != NULL)
		i = (i + 1) & (x->cap - 1);
	x->slot[i] = item;
}

static int
rehash(struct idx *x, uint32_t cap)
{
	void **old = x->slot;
	uint32_t ocap = x->cap;

	x->slot = calloc(cap, sizeof(*x->slot));
	if (x->slot == NULL) {
		x->slot = old;
		return SLUICE_ENOMEM;
	}
	x->cap = cap;
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i] != NULL)
			place(x, old[i]);
	free(old);
	return 0;
}

int
idx_reserve(struct idx *x, uint32_t more)
{
	uint64_t need = (uint64_t)x->len + more;
	uint64_t cap = x->cap ? x->cap : IDX_MIN_CAP;

	if (need * 4 <= (uint64_t)x->cap * 3)
		return 0;
	while (need * 4 > cap * 3)
		cap *= 2;
	if (cap > ((uint64_t)1 << 31))
		return SLUICE_ENOMEM;
	return rehash(x, (uint32_t)cap);
}

void
idx_insert(struct idx *x, void *item)
{
	assert((uint64_t)(x->len + 1) * 4 <= (uint64_t)x->cap * 3);
	place(x, item);
	x->len++;
}

void *
idx_find(const struct idx *x, uint64_t key)
{
	uint32_t i;

	if (x->len == 0)
		return NULL;
	i = (uint32_t)idx_mix(key) & (x->cap - 1);
	for (; x->slot[i] != NULL; i = (i + 1) & (x->cap - 1))
		if (x->key(x->slot[i]) == key)
			return x->slot[i];
	return NULL;
}

void *
idx_find_eq(const struct idx *x, uint64_t key, idx_eq_fn *eq, const void *arg)
{
	uint32_t i;

	if (x->len == 0)
		return NULL;
	i = (uint32_t)idx_mix(key) & (x->cap - 1);
	for (; x->slot[i] != NULL; i = (i + 1) & (x->cap - 1))
		if (x->key(x->slot[i]) == key && eq(x->slot[i], arg))
			return x->slot[i];
	return NULL;
}

static uint32_t
slot_of(const struct idx *x, const void *item)
{
	uint32_t i = home(x, item);

	while (x->slot[i] != item) {
		assert(x->slot[i] != NULL);
		i = (i + 1) & (x->cap - 1);
	}
	return i;
}

void
idx_remove(struct idx *x, const void *item)
{
	uint32_t mask = x->cap - 1;
	uint32_t i = slot_of(x, item);
	uint32_t j = i;

	/* Backward shift: move each later item of the run into the hole
	 * when the hole lies between its home and where it sits. */
	for (;;) {
		uint32_t h;

		x->slot[i] = NULL;
		for (;;) {
			j = (j + 1) & mask;
			if (x->slot[j] == NULL)
				goto done;
			h = home(x, x->slot[j]);
			/* Keep it when its home is cyclically in (i, j]. */
			if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
				continue;
			break;
		}
		x->slot[i] = x->slot[j];
		i = j;
	}
done:
	x->len--;
	/* Shrink when under 1/8 full; a failed shrink keeps the table. The
	 * smaller table is at most 1/4 full: room for one insert remains. */
	if (x->cap > IDX_MIN_CAP && x->len < x->cap / 8)
		(void)rehash(x, x->cap / 2);
}

void
idx_swap(struct idx *x, const void *old, void *item)
{
	assert(x->key(old) == x->key(item));
	x->slot[slot_of(x, old)] = item;
}

uint64_t
idx_hash_bytes(uint64_t seed, const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t h = idx_mix(seed ^ (n * 0x9e3779b97f4a7c15ULL));

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, s, 8);
		h = idx_mix(h ^ w) + 0x9e3779b97f4a7c15ULL;
		s += 8;
		n -= 8;
	}
	if (n > 0) {
		uint64_t w = 0;

		memcpy(&w, s, n);
		h = idx_mix(h ^ w ^ ((uint64_t)n << 56));
	}
	return idx_mix(h);
}
