/* tidx - the tasks by id: ids are dense and increasing, so most of them
 * are kept where sequential ids land in sequential memory, and the rest
 * in a hash table (idx.h).
 *
 * A hash table puts each new id on a random cache line of a table tens of
 * MB large: an insert under a long batch put is a cache (and TLB) miss
 * each, and each time the table grows every item is read again, at
 * random, to be moved, on the serving loop. Here ids go by chunks of
 * TIDX_CHUNK consecutive ids: chunk c (ids c * TIDX_CHUNK ...) is an
 * array of TIDX_CHUNK pointers (4 KiB), found in a directory of the
 * chunks from `base` up, by its number. A new id lands next to the one
 * before it; a lookup is two loads; nothing is ever moved to grow (the
 * directory, 16 bytes a chunk, is). 8 bytes a task when the ids are
 * dense (the hash table takes 11-13).
 *
 * What does not fit that shape goes to the hash table, which always has
 * room reserved for the next insert (tidx_reserve), so an insert never
 * allocates and never fails:
 *   - an id whose chunk is not in the directory: below `base`, in a
 *     chunk given up, or far above the directory's last chunk;
 *   - the tasks left in a chunk when it falls under a quarter full once
 *     the ids have moved past it (so a chunk never costs more than 32
 *     bytes a task: a queue that keeps one task in many does not keep a
 *     page for each), moved there once;
 *   - the front chunks when the directory holds over 4 entries a chunk
 *     (long-lived tasks far below the newest ids: the directory's span
 *     is bounded by what it holds, not by the ids' range).
 * An item is either in its chunk's slot or in the hash table, never
 * both; a lookup looks in the chunk first, and in the table when the
 * slot is empty and the table is not.
 * Pure: no I/O, no logging. */
#ifndef SLUICE_QUEUE_TIDX_H
#define SLUICE_QUEUE_TIDX_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/idx.h"

enum {
	TIDX_CHUNK_BITS = 9,
	TIDX_CHUNK = 1u << TIDX_CHUNK_BITS, /* ids a chunk: 4 KiB */
};

/* A directory entry: the chunk's slots (NULL: none) and its items. */
struct tidx_ent {
	void **slot;
	uint32_t live;
};

struct tidx {
	struct tidx_ent *dir; /* entries [off, off + ndir) are in use */
	uint32_t off, ndir, dcap;
	uint32_t nchunks;  /* entries with a chunk */
	uint64_t base;     /* the chunk number of dir[off] */
	uint64_t inchunks; /* items in chunks */
	uint64_t far;      /* items put in the table since the directory
	                    * last started, for being above its reach */
	uint32_t len;      /* items in all */
	uint64_t expect;   /* len once a load announced is done; 0: none */
	void **spare;      /* an empty chunk made ahead; NULL */
	struct idx hash;   /* the items not in a chunk */
	idx_key_fn *key;
};

void tidx_init(struct tidx *x, idx_key_fn *key);
/* Frees the index (not the items). */
void tidx_fini(struct tidx *x);
int tidx_reserve_slow(struct tidx *x, uint32_t more);

/* Room for `more` inserts. Returns 0 or SLUICE_ENOMEM. Also makes a
 * chunk ahead, and gives the directory's far front to the table when it
 * holds too little (best effort: an insert finds room without them).
 * Inline while nothing is to be done: the table has room, the spare
 * chunk is there (no chunk was made since the last call) and no ids went
 * far above the directory. */
static inline int
tidx_reserve(struct tidx *x, uint32_t more)
{
	if (((uint64_t)x->hash.len + more) * 4 <= (uint64_t)x->hash.cap * 3 &&
	    x->spare != NULL && x->far <= x->inchunks)
		return 0;
	return tidx_reserve_slow(x, more);
}
/* Room in the directory ahead for `n` items of dense ids (a snapshot or
 * a replay about to load them), best effort. Until `n` more items are in
 * (or tidx_expect(x, 0)), chunks are made below the first one and far
 * above the last, within twice the span `n` ids take: a load in no order
 * of its ids (a snapshot written from a hash table) still fills chunks. */
void tidx_expect(struct tidx *x, uint64_t n);
/* Adds an item (aligned to max_align_t, as malloc gives) whose id is
 * not in the index; room must have been reserved. */
void tidx_insert(struct tidx *x, void *item);
/* The item with that id, or NULL. */
void *tidx_find(const struct tidx *x, uint64_t id);
/* Removes an item that is in the index. */
void tidx_remove(struct tidx *x, const void *item);
/* Puts `item` where `old` is, which has the same id. */
void tidx_swap(struct tidx *x, const void *old, void *item);

/* For visiting every item: slots 0 .. tidx_slots() - 1, each holding an
 * item or NULL (tidx_at), the chunks' in id order first. Nothing may be
 * added or removed meanwhile. */
static inline uint64_t
tidx_slots(const struct tidx *x)
{
	return (uint64_t)x->ndir * TIDX_CHUNK + x->hash.cap;
}

static inline void *
tidx_at(const struct tidx *x, uint64_t i)
{
	uint64_t inchunks = (uint64_t)x->ndir * TIDX_CHUNK;
	void **s;

	if (i >= inchunks)
		return idx_at(&x->hash, (uint32_t)(i - inchunks));
	s = x->dir[x->off + (i >> TIDX_CHUNK_BITS)].slot;
	return s != NULL ? s[i & (TIDX_CHUNK - 1)] : NULL;
}

/* Asks the memory for where `id` would go, ahead of its insert or
 * lookup. Changes nothing. */
static inline __attribute__((always_inline)) void
tidx_prefetch(const struct tidx *x, uint64_t id)
{
	uint64_t k = (id >> TIDX_CHUNK_BITS) - x->base;

	if (k < x->ndir && x->dir[x->off + k].slot != NULL)
		__builtin_prefetch(
		    &x->dir[x->off + k].slot[id & (TIDX_CHUNK - 1)], 1);
	else if (x->hash.len > 0)
		idx_prefetch(&x->hash, id);
}

#endif
