/* tidx - the tasks by id in chunks of consecutive ids, and a hash table
 * for the rest (tidx.h). Invariants: entries [off, off + ndir) of dir are
 * in use, the first and the last with a chunk when ndir > 0; a chunk's
 * `live` counts its non-NULL slots, and is > 0; an item sits in the slot
 * of its id in its chunk, or in `hash`, never both; nchunks, inchunks and
 * len count what they say; `hash` has room for the inserts reserved. */
#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "queue/tidx.h"
#include "sluice.h"

enum {
	TIDX_GAP = 16,       /* empty chunks the directory may skip to
	                      * make a new one above its last */
	TIDX_DIR_MIN = 1024, /* entries the directory may always span */
	TIDX_DIR_PER = 4,    /* ... and per chunk it holds */
	TIDX_SPARSE = TIDX_CHUNK / 4, /* a chunk under it goes to the table
	                               * once the ids have passed it ... */
	TIDX_KEEP = 8, /* ... unless there are no more chunks than this
	                * (a small queue stays in chunks) */
};

#define CHUNK_OF(id) ((id) >> TIDX_CHUNK_BITS)
#define SLOT_OF(id)  ((uint32_t)((id) & (TIDX_CHUNK - 1)))

/* Each index's table gets a seed of its own: a snapshot lists the
 * table's tasks in its slot order, which is then random to the loading
 * queue's table (a table filled in its own slot order, growing as it
 * goes, would pile its items up into runs as long as the table). */
static atomic_uint_fast64_t tables;

void
tidx_init(struct tidx *x, idx_key_fn *key)
{
	memset(x, 0, sizeof(*x));
	x->key = key;
	idx_init(&x->hash, key);
	idx_seed(&x->hash, idx_mix(atomic_fetch_add(&tables, 1) + 1));
}

void
tidx_fini(struct tidx *x)
{
	idx_key_fn *key = x->key;

	for (uint32_t k = 0; k < x->ndir; k++)
		free(x->dir[x->off + k].slot);
	free(x->dir);
	free(x->spare);
	idx_fini(&x->hash);
	tidx_init(x, key);
}

/* The entry of chunk `c`, or NULL when the directory has none for it. */
static inline struct tidx_ent *
ent_of(const struct tidx *x, uint64_t c)
{
	uint64_t k = c - x->base;

	return k < x->ndir ? &x->dir[x->off + k] : NULL;
}

/* How many entries the directory may span. */
static uint64_t
dir_limit(const struct tidx *x)
{
	uint64_t lim = (uint64_t)x->nchunks * TIDX_DIR_PER;

	return lim > TIDX_DIR_MIN ? lim : TIDX_DIR_MIN;
}

/* How many entries the directory may span while a load announced is
 * under way (its ids in no order, in a range twice what it brings), or
 * else (dir_limit). */
static uint64_t
span_limit(const struct tidx *x)
{
	uint64_t lim = dir_limit(x), load;

	if (x->expect <= x->len)
		return lim;
	load = 2 * ((x->expect - x->len) / TIDX_CHUNK) + x->ndir + TIDX_GAP;
	return load > lim ? load : lim;
}

/* Room for `n` entries from dir[off] on; moves them to the front or
 * grows the array. Returns 0 or SLUICE_ENOMEM. */
static int
dir_room(struct tidx *x, uint64_t n)
{
	struct tidx_ent *d;
	uint64_t cap;

	if (x->off + n <= x->dcap)
		return 0;
	if (n <= x->dcap && x->off >= x->dcap / 2) {
		memmove(x->dir, x->dir + x->off, x->ndir * sizeof(*x->dir));
		x->off = 0;
		return 0;
	}
	if (n > UINT32_MAX / 2)
		return SLUICE_ENOMEM;
	cap = (uint64_t)x->dcap * 2;
	if (cap < n + TIDX_GAP)
		cap = n + TIDX_GAP;
	if (cap < 64)
		cap = 64;
	d = malloc(cap * sizeof(*d));
	if (d == NULL)
		return SLUICE_ENOMEM;
	if (x->ndir > 0)
		memcpy(d, x->dir + x->off, x->ndir * sizeof(*d));
	free(x->dir);
	x->dir = d;
	x->off = 0;
	x->dcap = (uint32_t)cap;
	return 0;
}

/* Drops the empty entries at both ends of the directory. */
static void
trim(struct tidx *x)
{
	while (x->ndir > 0 && x->dir[x->off].slot == NULL) {
		x->off++;
		x->base++;
		x->ndir--;
	}
	while (x->ndir > 0 && x->dir[x->off + x->ndir - 1].slot == NULL)
		x->ndir--;
	if (x->ndir == 0) {
		x->off = 0;
		x->far = 0;
		if (x->len == 0) { /* nothing left: nor is the spare */
			free(x->spare);
			x->spare = NULL;
		}
	}
	/* A directory much larger than its span gives memory back (a failed
	 * shrink keeps it). */
	if (x->dcap > 64 && x->ndir < x->dcap / 8) {
		uint32_t cap = x->dcap / 4 > 64 ? x->dcap / 4 : 64;
		struct tidx_ent *d;

		memmove(x->dir, x->dir + x->off, x->ndir * sizeof(*x->dir));
		x->off = 0;
		if ((d = realloc(x->dir, cap * sizeof(*d))) != NULL) {
			x->dir = d;
			x->dcap = cap;
		}
	}
}

/* Takes chunk `e` (empty: every slot NULL) out of the directory; it
 * becomes the spare unless there is one. */
static void
drop(struct tidx *x, struct tidx_ent *e)
{
	assert(e->live == 0);
	if (x->spare == NULL)
		x->spare = e->slot;
	else
		free(e->slot);
	e->slot = NULL;
	x->nchunks--;
	trim(x);
}

/* Moves the items of chunk `e` into the table. Returns 0 or
 * SLUICE_ENOMEM (nothing moved). */
static int
evict(struct tidx *x, struct tidx_ent *e)
{
	void **s = e->slot;
	int rc = idx_reserve(&x->hash, e->live);

	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < TIDX_CHUNK && e->live > 0; i++) {
		if (s[i] == NULL)
			continue;
		idx_insert(&x->hash, s[i]);
		s[i] = NULL;
		e->live--;
		x->inchunks--;
	}
	drop(x, e);
	return 0;
}

/* Whether chunk `e`, which the ids have passed, holds too few to keep. */
static bool
sparse(const struct tidx *x, const struct tidx_ent *e)
{
	return e->live < TIDX_SPARSE && x->nchunks > TIDX_KEEP;
}

/* The chunk below the last one, which the ids have just passed: its few
 * go to the table when it is sparse (filled so from the start, it would
 * never see a removal that moves them). */
static void
settle_passed(struct tidx *x)
{
	for (uint32_t k = x->ndir - 1, n = 0; k-- > 0 && n <= TIDX_GAP; n++) {
		struct tidx_ent *e = &x->dir[x->off + k];

		if (e->slot == NULL)
			continue;
		if (sparse(x, e))
			(void)evict(x, e);
		return;
	}
}

int
tidx_reserve_slow(struct tidx *x, uint32_t more)
{
	int rc;

	if ((rc = idx_reserve(&x->hash, more)) != 0)
		return rc;
	/* The rest is for the fast path, best effort. Ids far above the
	 * directory went to the table: once more of them did than the
	 * chunks hold, the chunks go there too and the directory starts
	 * again at the next id. */
	if (x->far > x->inchunks) {
		while (x->ndir > 0 && evict(x, &x->dir[x->off]) == 0)
			;
		x->far = 0;
	}
	/* A directory spanning much more than its chunks: its front goes. */
	while (x->ndir > span_limit(x) && evict(x, &x->dir[x->off]) == 0)
		;
	if (x->ndir >= 2 && x->expect <= x->len)
		settle_passed(x); /* not while a load fills chunks anywhere */
	if (x->spare == NULL)
		x->spare = calloc(TIDX_CHUNK, sizeof(void *));
	(void)dir_room(x, (uint64_t)x->ndir + TIDX_GAP + 1);
	/* the chunks evicted or settled above filled the table's room:
	 * `more` items may still go there (an id below the chunks) */
	return idx_reserve(&x->hash, more);
}

void
tidx_expect(struct tidx *x, uint64_t n)
{
	x->expect = x->len + n;
	(void)dir_room(
	    x, (uint64_t)x->ndir + 2 * (n / TIDX_CHUNK) + TIDX_GAP + 1);
}

/* The entry for a new chunk `c` above the directory's last (or the first
 * of an empty directory), with the spare as its chunk; NULL when it
 * cannot be made without allocating, or would stretch the directory. */
static struct tidx_ent *
extend(struct tidx *x, uint64_t c)
{
	bool loading = x->expect > x->len;
	uint64_t n;
	struct tidx_ent *e;

	if (x->spare == NULL)
		return NULL;
	if (x->ndir == 0) {
		if (x->dcap == 0)
			return NULL;
		x->base = c;
		x->off = 0;
		n = 1;
	} else if (c < x->base) {
		/* below the first: only while a load is under way */
		uint64_t k = x->base - c;

		if (!loading || x->ndir + k > span_limit(x) ||
		    x->ndir + k > x->dcap)
			return NULL;
		if (x->off < k) {
			memmove(x->dir + k, x->dir + x->off,
			    x->ndir * sizeof(*x->dir));
			x->off = (uint32_t)k;
		}
		x->off -= (uint32_t)k;
		for (uint64_t j = 1; j < k; j++)
			x->dir[x->off + j] = (struct tidx_ent) { NULL, 0 };
		x->ndir += (uint32_t)k;
		x->base = c;
		e = &x->dir[x->off];
		goto made;
	} else {
		n = c - x->base + 1;
		if (c - (x->base + x->ndir) >= TIDX_GAP &&
		    (!loading || n > span_limit(x)))
			return NULL;
		if (x->off + n > x->dcap || n > span_limit(x) + TIDX_GAP)
			return NULL;
	}
	for (uint64_t k = x->ndir; k < n; k++)
		x->dir[x->off + k] = (struct tidx_ent) { NULL, 0 };
	x->ndir = (uint32_t)n;
	e = &x->dir[x->off + n - 1];
made:
	e->slot = x->spare;
	e->live = 0;
	x->spare = NULL;
	x->nchunks++;
	return e;
}

void
tidx_insert(struct tidx *x, void *item)
{
	uint64_t id = x->key(item);
	uint64_t c = CHUNK_OF(id);
	struct tidx_ent *e = ent_of(x, c);

	if (e == NULL) { /* outside the directory */
		e = extend(x, c);
		if (e == NULL && x->ndir > 0 && c >= x->base)
			x->far++;
	} else if (e->slot == NULL && x->spare != NULL && x->expect > x->len) {
		e->slot = x->spare; /* a gap a load fills */
		e->live = 0;
		x->spare = NULL;
		x->nchunks++;
	}
	if (e != NULL && e->slot != NULL && e->slot[SLOT_OF(id)] == NULL) {
		e->slot[SLOT_OF(id)] = item;
		e->live++;
		x->inchunks++;
	} else {
		idx_insert(&x->hash, item);
	}
	x->len++;
}

void *
tidx_find(const struct tidx *x, uint64_t id)
{
	const struct tidx_ent *e = ent_of(x, CHUNK_OF(id));

	if (e != NULL && e->slot != NULL && e->slot[SLOT_OF(id)] != NULL)
		return e->slot[SLOT_OF(id)];
	return x->hash.len > 0 ? idx_find(&x->hash, id) : NULL;
}

void
tidx_remove(struct tidx *x, const void *item)
{
	uint64_t id = x->key(item);
	struct tidx_ent *e = ent_of(x, CHUNK_OF(id));

	x->len--;
	if (e == NULL || e->slot == NULL || e->slot[SLOT_OF(id)] != item) {
		idx_remove(&x->hash, item);
		return;
	}
	e->slot[SLOT_OF(id)] = NULL;
	e->live--;
	x->inchunks--;
	if (e->live == 0)
		drop(x, e);
	else if (sparse(x, e) && e != &x->dir[x->off + x->ndir - 1])
		(void)evict(x, e); /* ids passed it: its few go to the table */
}

void
tidx_swap(struct tidx *x, const void *old, void *item)
{
	uint64_t id = x->key(old);
	struct tidx_ent *e = ent_of(x, CHUNK_OF(id));

	assert(x->key(item) == id);
	if (e != NULL && e->slot != NULL && e->slot[SLOT_OF(id)] == old)
		e->slot[SLOT_OF(id)] = item;
	else
		idx_swap(&x->hash, old, item);
}
