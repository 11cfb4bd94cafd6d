/* idx - the open-addressing hash table of pointers tagged with bits of
 * their key's hash (idx.h). Linear probing; removal shifts the following run
 * back (no tombstones), so a lookup stops at the first empty slot. An item's
 * home slot comes from the high half of its mixed key, scaled to the
 * capacity (so any capacity works, not only powers of two); its tag is
 * the low bits of the mixed key. Invariants: len <= 3/4 cap (so an empty
 * slot always exists and every probe loop ends); every item sits between
 * its home slot and the first empty slot after it; a slot's tag is its
 * item's. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "queue/idx.h"
#include "sluice.h"

enum {
	IDX_MIN_CAP = 16,
	IDX_MAX_CAP = 1u << 31,
	IDX_BATCH = 16, /* old slots a rehash moves at a time */
};

static inline uint32_t
home_of(uint64_t h, uint32_t cap)
{
	return (uint32_t)(((h >> 32) * (uint64_t)cap) >> 32);
}

static inline uintptr_t
slot_val(const void *item, uint64_t h)
{
	assert(((uintptr_t)item & IDX_TAG_MASK) == 0);
	return (uintptr_t)item | ((uintptr_t)h & IDX_TAG_MASK);
}

static inline uint32_t
next(const struct idx *x, uint32_t i)
{
	return i + 1 == x->cap ? 0 : i + 1;
}

static inline uint32_t
home(const struct idx *x, const void *item)
{
	return home_of(idx_mix(x->key(item) ^ x->seed), x->cap);
}

void
idx_init(struct idx *x, idx_key_fn *key)
{
	x->slot = NULL;
	x->cap = 0;
	x->len = 0;
	x->key = key;
	x->seed = 0;
}

void
idx_seed(struct idx *x, uint64_t seed)
{
	assert(x->len == 0);
	x->seed = seed;
}

void
idx_fini(struct idx *x)
{
	free(x->slot);
	x->slot = NULL;
	x->cap = 0;
	x->len = 0;
}

static void
place(struct idx *x, uint32_t i, uintptr_t v)
{
	while (x->slot[i] != 0)
		i = next(x, i);
	x->slot[i] = v;
}

/* Moves every item into a new table of `cap` slots. Each item must be
 * read for its key, and they lie all over the heap, so the old slots go
 * in batches: while one batch is placed, the items of the next are
 * fetched, and the new home slots of a batch are fetched before any of
 * it is placed. */
static int
rehash(struct idx *x, uint32_t cap)
{
	uintptr_t *old = x->slot;
	uint32_t ocap = x->cap;

	x->slot = calloc(cap, sizeof(*x->slot));
	if (x->slot == NULL) {
		x->slot = old;
		return SLUICE_ENOMEM;
	}
	x->cap = cap;
	for (uint32_t i = 0; i < ocap; i += IDX_BATCH) {
		uint32_t end = ocap - i < IDX_BATCH ? ocap : i + IDX_BATCH;
		uint32_t ahead =
		    ocap - end < IDX_BATCH ? ocap : end + IDX_BATCH;
		uintptr_t v[IDX_BATCH];
		uint32_t h[IDX_BATCH], n = 0;

		for (uint32_t j = end; j < ahead; j++)
			if (old[j] != 0)
				__builtin_prefetch(
				    (void *)(old[j] & ~IDX_TAG_MASK));
		for (uint32_t j = i; j < end; j++) {
			if (old[j] == 0)
				continue;
			v[n] = old[j];
			h[n] = home_of(
			    idx_mix(x->key((void *)(old[j] & ~IDX_TAG_MASK)) ^
			        x->seed),
			    cap);
			__builtin_prefetch(&x->slot[h[n]], 1);
			n++;
		}
		for (uint32_t k = 0; k < n; k++)
			place(x, h[k], v[k]);
	}
	free(old);
	return 0;
}

/* The capacity for `need` items: at most 3/4 full. */
static uint64_t
cap_for(uint64_t need)
{
	uint64_t cap = (need * 4 + 2) / 3;

	return cap < IDX_MIN_CAP ? IDX_MIN_CAP : cap;
}

int
idx_reserve(struct idx *x, uint32_t more)
{
	uint64_t need = (uint64_t)x->len + more;
	uint64_t cap;

	if (need * 4 <= (uint64_t)x->cap * 3)
		return 0;
	/* Grow by a quarter at least: the table is 3/5 full after growing,
	 * and each item is moved 4 times on average while it fills up. */
	cap = cap_for(need);
	if (cap < (uint64_t)x->cap + x->cap / 2)
		cap = (uint64_t)x->cap + x->cap / 2;
	if (cap > IDX_MAX_CAP)
		return SLUICE_ENOMEM;
	return rehash(x, (uint32_t)cap);
}

void
idx_insert(struct idx *x, void *item)
{
	uint64_t h = idx_mix(x->key(item) ^ x->seed);

	assert((uint64_t)(x->len + 1) * 4 <= (uint64_t)x->cap * 3);
	place(x, home_of(h, x->cap), slot_val(item, h));
	x->len++;
}

void *
idx_insert_new(struct idx *x, void *item)
{
	uint64_t key = x->key(item);
	uint64_t h = idx_mix(key);
	uintptr_t tag = (uintptr_t)h & IDX_TAG_MASK;
	uint32_t i;

	assert((uint64_t)(x->len + 1) * 4 <= (uint64_t)x->cap * 3);
	for (i = home_of(h, x->cap); x->slot[i] != 0; i = next(x, i)) {
		uintptr_t v = x->slot[i];

		if ((v & IDX_TAG_MASK) == tag &&
		    x->key((void *)(v & ~IDX_TAG_MASK)) == key)
			return (void *)(v & ~IDX_TAG_MASK);
	}
	x->slot[i] = slot_val(item, h);
	x->len++;
	return NULL;
}

void *
idx_find(const struct idx *x, uint64_t key)
{
	uint64_t h = idx_mix(key ^ x->seed);
	uintptr_t tag = (uintptr_t)h & IDX_TAG_MASK;
	uint32_t i;

	if (x->len == 0)
		return NULL;
	for (i = home_of(h, x->cap); x->slot[i] != 0; i = next(x, i)) {
		uintptr_t v = x->slot[i];

		if ((v & IDX_TAG_MASK) == tag &&
		    x->key((void *)(v & ~IDX_TAG_MASK)) == key)
			return (void *)(v & ~IDX_TAG_MASK);
	}
	return NULL;
}

void *
idx_find_eq(const struct idx *x, uint64_t key, idx_eq_fn *eq, const void *arg)
{
	uint64_t h = idx_mix(key ^ x->seed);
	uintptr_t tag = (uintptr_t)h & IDX_TAG_MASK;
	uint32_t i;

	if (x->len == 0)
		return NULL;
	for (i = home_of(h, x->cap); x->slot[i] != 0; i = next(x, i)) {
		uintptr_t v = x->slot[i];
		void *item = (void *)(v & ~IDX_TAG_MASK);

		if ((v & IDX_TAG_MASK) == tag && x->key(item) == key &&
		    eq(item, arg))
			return item;
	}
	return NULL;
}

static uint32_t
slot_of(const struct idx *x, const void *item)
{
	uint32_t i = home(x, item);

	while ((x->slot[i] & ~IDX_TAG_MASK) != (uintptr_t)item) {
		assert(x->slot[i] != 0);
		i = next(x, i);
	}
	return i;
}

void
idx_remove(struct idx *x, const void *item)
{
	uint32_t i = slot_of(x, item);
	uint32_t j = i;

	/* Backward shift: move each later item of the run into the hole
	 * when the hole lies between its home and where it sits. */
	for (;;) {
		uint32_t h;

		x->slot[i] = 0;
		for (;;) {
			j = next(x, j);
			if (x->slot[j] == 0)
				goto done;
			h = home(x, (void *)(x->slot[j] & ~IDX_TAG_MASK));
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
	if (x->cap / 2 >= IDX_MIN_CAP && x->len < x->cap / 8)
		(void)rehash(x, x->cap / 2);
}

void
idx_swap(struct idx *x, const void *old, void *item)
{
	uint32_t i;

	assert(x->key(old) == x->key(item));
	i = slot_of(x, old);
	x->slot[i] = (uintptr_t)item | (x->slot[i] & IDX_TAG_MASK);
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
