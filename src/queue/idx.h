/* idx - an open-addressing hash table of pointers, keyed by a u64 that
 * each item yields through a callback (a task's id, a session, the hash
 * of a name). A slot is one word: the item's pointer, whose low bits
 * (free, since malloc aligns every item to max_align_t) hold a few bits
 * of the key's hash, so a probe passes over most other items without
 * reading them. 8 bytes a slot, at most 3/4 full; the table grows by a
 * quarter, so it is at least 3/5 full after growing. Items whose keys
 * collide (two names with one hash) are told apart with idx_find_eq(). As
 * with the heap, space is reserved apart from insertion so callers can
 * allocate before they change anything.
 * Pure: no I/O, no logging. */
#ifndef SLUICE_QUEUE_IDX_H
#define SLUICE_QUEUE_IDX_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t idx_key_fn(const void *item);
typedef bool idx_eq_fn(const void *item, const void *arg);

/* Hash bits kept in a slot beside the pointer. */
#define IDX_TAG_MASK                                                           \
	((uintptr_t)(alignof(max_align_t) >= 16 ? 15                           \
	        : alignof(max_align_t) >= 8     ? 7                            \
	                                        : 3))

struct idx {
	uintptr_t *slot; /* 0: empty; else pointer | tag */
	uint32_t cap;    /* 0, or at least IDX_MIN_CAP; any size */
	uint32_t len;
	idx_key_fn *key;
	uint64_t seed; /* mixed into every key: 0 unless idx_seed() */
};

void idx_init(struct idx *x, idx_key_fn *key);
/* Frees the table (not the items). */
void idx_fini(struct idx *x);
/* Mixes `seed` into every key's hash, on an empty table: a table whose
 * seed differs from another's may be filled in that one's slot order
 * (a snapshot written from it) without reserving room for all first,
 * since that order is random to it. */
void idx_seed(struct idx *x, uint64_t seed);
/* Room for `more` inserts. Returns 0 or SLUICE_ENOMEM. Reserve for all
 * before filling a table in the slot order of another (a snapshot): the
 * items come in the order of their hash, and in a table too small for all
 * of them they would pile up at its front, each insert probing a longer
 * run than the one before. */
int idx_reserve(struct idx *x, uint32_t more);
/* Adds an item (aligned to max_align_t, as malloc gives); room must have
 * been reserved. */
void idx_insert(struct idx *x, void *item);
/* idx_insert, unless an item with the same key is in the table: that
 * item is returned then, and nothing added (NULL: added). One probe where
 * idx_find and idx_insert make two. */
void *idx_insert_new(struct idx *x, void *item);
/* An item with that key, or NULL. */
void *idx_find(const struct idx *x, uint64_t key);
/* The item with that key for which eq(item, arg) holds, or NULL. */
void *idx_find_eq(
    const struct idx *x, uint64_t key, idx_eq_fn *eq, const void *arg);
/* Removes an item that is in the table. May shrink the table, but always
 * leaves room for one insert. */
void idx_remove(struct idx *x, const void *item);
/* Puts `item` in the slot of `old`, which has the same key. */
void idx_swap(struct idx *x, const void *old, void *item);

/* The item in slot i (i < cap), or NULL: for visiting every item. */
static inline void *
idx_at(const struct idx *x, uint32_t i)
{
	return (void *)(x->slot[i] & ~IDX_TAG_MASK);
}

/* A strong 64-bit mix (the splitmix64 finalizer). */
static inline uint64_t
idx_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Asks the memory for the home slot of `key` in advance, when an insert
 * or lookup of that key is likely to come soon. Changes nothing. Always
 * inlined: a function whose only effect is a prefetch counts as having
 * none, and GCC drops a call to it that it did not inline early (it did,
 * in apply.c: the prefetch was never issued). */
static inline __attribute__((always_inline)) void
idx_prefetch(const struct idx *x, uint64_t key)
{
	if (x->cap > 0)
		__builtin_prefetch(
		    &x->slot[(idx_mix(key ^ x->seed) >> 32) * x->cap >> 32], 1);
}

/* Hash of a byte string under a seed. */
uint64_t idx_hash_bytes(uint64_t seed, const void *p, size_t n);

#endif
