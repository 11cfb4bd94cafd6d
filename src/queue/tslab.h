/* tslab - memory for tasks without a per-allocation header.
 *
 * A task is one allocation of its fixed fields and its payload, and there
 * are millions of them: malloc's 8-byte chunk header and its rounding of
 * size + 8 up to 16 cost 8 to 23 bytes a task. A pool hands out objects
 * of up to TSLAB_MAX bytes from 2 MiB slabs, one size class per slab in
 * steps of 16 bytes, with no header: the slab of an object is its address
 * rounded down to 2 MiB, and the caller gives the size back on free (a
 * task knows its payload's length). Larger objects go to malloc.
 *
 * A slab is mapped anonymous memory, touched in order as objects are
 * first handed out (a bump offset), then reused through a free list.
 * The slabs of a class that have room are listed; a slab that empties
 * is unmapped, but the last of its class is kept (a queue that goes
 * from one task to none and back does not map a slab each time). A
 * class's second slab and later ones are backed by huge pages where the
 * kernel offers them (a queue that big is what they are for), but for
 * those of a load (a replay or a snapshot's: small pages, faster to
 * back on a VM, marked for huge pages once it is over); from the 64th
 * on, each is faulted in ahead by a worker thread while the one before
 * it fills.
 *
 * Objects are 16-byte aligned (the id index keeps 4 tag bits below a
 * pointer). Built with AddressSanitizer, the pool is malloc and free, so
 * that every object stays checked. One pool belongs to one queue and one
 * thread at a time. */
#ifndef SLUICE_QUEUE_TSLAB_H
#define SLUICE_QUEUE_TSLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	TSLAB_ALIGN = 16,
	TSLAB_MAX = 2048, /* larger objects come from malloc */
	TSLAB_CLASSES = TSLAB_MAX / TSLAB_ALIGN,
	TSLAB_EXPECT_MANY = 1000000,
	TSLAB_AHEAD_LOAD = 8, /* spares of a class during a load */
};

struct tslab;

struct tslab_pool {
	struct tslab *room[TSLAB_CLASSES]; /* slabs of a class with room */
	/* Mapped ahead by the worker, each with its job's ticket (tslab.c):
	 * kept here, as a spare's own pages are not touched. */
	struct tslab *spare[TSLAB_CLASSES][TSLAB_AHEAD_LOAD];
	uint32_t spare_ticket[TSLAB_CLASSES][TSLAB_AHEAD_LOAD];
	uint32_t nslabs[TSLAB_CLASSES];
	uint8_t nspare[TSLAB_CLASSES];
	uint8_t spare_head[TSLAB_CLASSES];  /* the oldest, in a ring */
	uint8_t spare_small[TSLAB_CLASSES]; /* by slot: asked for in a load */
	struct tslab *all;                  /* every slab */
	uint32_t spare_from;  /* slabs of a class before it gets spares */
	uint32_t spare_ahead; /* spares a class may have at most */
	size_t touched; /* bytes of slabs touched so far (rounded to pages) */
};

void tslab_init(struct tslab_pool *p);

/* Unmaps every slab, with whatever objects are still in them (objects
 * larger than TSLAB_MAX must have been freed). */
void tslab_fini(struct tslab_pool *p);

/* About `objects` objects are to come at once (a replay): from
 * TSLAB_EXPECT_MANY on, every class that needs a second slab gets spares
 * faulted in ahead from then on, not only past 128 MiB, and until
 * tslab_settle several of them (as many as it has slabs, up to
 * TSLAB_AHEAD_LOAD), so that the worker stays ahead of a fast load. */
void tslab_expect(struct tslab_pool *p, uint64_t objects);

/* The load announced by tslab_expect is over: each class keeps one spare
 * at most, and the others are unmapped (or never made); the slabs the
 * load mapped in small pages are marked for huge pages. */
void tslab_settle(struct tslab_pool *p);

/* For tests: while held, the worker that faults spares in starts no job,
 * as on a host slow to back memory; a pool does not wait for it (it
 * faults its own slabs) and takes back the jobs it no longer wants. */
void tslab_fill_hold(bool hold);

/* During a load announced by tslab_expect, asks the worker to fault in
 * the pages of [addr, addr + len) ahead of their first touch: a large
 * array the load will fill (a heap sized for a snapshot's tasks), whose
 * zeroing (and on a VM, backing) then runs beside the load. Ranges under
 * 2 MiB, and callers below the default priority, are left alone. The
 * caller never waits for it; if the memory is given back meanwhile, the
 * fault-in does nothing to it (MADV_POPULATE_WRITE keeps what memory
 * holds). */
void tslab_prefault(struct tslab_pool *p, const void *addr, size_t len);

/* Are a load's slabs mapped in small pages on this machine: does it give
 * free memory back to a hypervisor (a virtio-balloon device with free
 * page reporting), which backs a huge page again at its first touch,
 * at times several times slower than small ones (tslab.c)? Elsewhere a
 * load's slabs are huge, as the rest are. */
bool tslab_load_small(void);

/* `size` bytes, 16-byte aligned, or NULL when out of memory. */
void *tslab_alloc(struct tslab_pool *p, size_t size);

/* Gives back an object of tslab_alloc(p, size), with the same size.
 * Accepts NULL. */
void tslab_free(struct tslab_pool *p, void *obj, size_t size);

/* True when an object of `size` bytes is in a slab (tslab_fini frees it
 * with its slab), false when it is malloc's. */
static inline bool
tslab_in_slab(size_t size)
{
#if defined(__SANITIZE_ADDRESS__)
	(void)size;
	return false;
#else
	return size <= TSLAB_MAX;
#endif
}

/* Bytes of slab memory touched by every pool of the process: what a
 * measure of memory must add to what malloc holds (mallinfo2). */
size_t tslab_bytes(void);

#endif
