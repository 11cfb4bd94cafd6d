/* qtubes - the queue's tubes: created on first use (qs_tube_get, which
 * reserves everything a tube needs and may fail), undone or removed
 * (qs_tube_undo, qs_tube_remove), and the slots tasks name their tubes
 * by. A task holds its tube's slot, 4 bytes where a pointer took 8
 * (task.h); q->tslots maps a slot to its tube (qs_tube_of). A tube keeps
 * its slot for its life; a removed tube's slot is handed to the next
 * tube created. Invariant: tslots[tb->slot] == tb for every tube, every
 * other slot below tslot_len is NULL and listed in tslot_free. */
#include <assert.h>
#include <stdlib.h>

#include "queue/qstate.h"
#include "sluice.h"

/* Room for one more tube's slot (tslots and tslot_free alike). */
static int
tslot_room(struct queue *q)
{
	uint32_t cap;
	struct tube **ts;
	uint32_t *fs;

	if (q->tslot_nfree > 0 || q->tslot_len < q->tslot_cap)
		return 0;
	cap = q->tslot_cap ? q->tslot_cap * 2 : 16;
	if ((ts = realloc(q->tslots, cap * sizeof(*ts))) == NULL)
		return SLUICE_ENOMEM;
	q->tslots = ts;
	if ((fs = realloc(q->tslot_free, cap * sizeof(*fs))) == NULL)
		return SLUICE_ENOMEM;
	q->tslot_free = fs;
	q->tslot_cap = cap;
	return 0;
}

int
qs_tube_get(struct queue *q, const char *name, size_t len, struct tube **out,
    bool *created)
{
	struct tube *tb = qs_tube(q, name, len);
	int rc;

	*created = false;
	if (tb != NULL) {
		q->last_tube = tb;
		*out = tb;
		return 0;
	}
	if (q->ntubes == q->tubes_cap) {
		uint32_t cap = q->tubes_cap ? q->tubes_cap * 2 : 16;
		struct tube **p = realloc(q->tubes, cap * sizeof(*p));

		if (p == NULL)
			return SLUICE_ENOMEM;
		q->tubes = p;
		q->tubes_cap = cap;
	}
	if ((rc = tslot_room(q)) != 0)
		return rc;
	/* Room in the wake and pause heaps for every tube, this one
	 * included: heap_reserve counts from the heap's length (the tubes
	 * in it now), not from the number of tubes. */
	if ((rc = idx_reserve(&q->names, 1)) != 0 ||
	    (rc = heap_reserve(&q->wake, q->ntubes + 1 - q->wake.len)) != 0 ||
	    (rc = heap_reserve(&q->pauses, q->ntubes + 1 - q->pauses.len)) != 0)
		return rc;
	tb = tube_new(name, len, idx_hash_bytes(q->cfg.hash_seed, name, len));
	if (tb == NULL)
		return SLUICE_ENOMEM;
	if ((rc = qs_acct_tube_join(q, tb)) != 0) {
		tube_free(tb);
		return rc;
	}
	tb->index = q->ntubes;
	q->tubes[q->ntubes++] = tb;
	tb->slot = q->tslot_nfree > 0 ? q->tslot_free[--q->tslot_nfree]
	                              : q->tslot_len++;
	q->tslots[tb->slot] = tb;
	idx_insert(&q->names, tb);
	/* The wake and pause heaps keep room for every tube. */
	assert(q->wake.cap >= q->ntubes && q->pauses.cap >= q->ntubes);
	*out = tb;
	*created = true;
	return 0;
}

void
qs_tube_undo(struct queue *q, struct tube *tb)
{
	assert(tb->index == q->ntubes - 1);
	qs_tube_remove(q, tb);
}

void
qs_tube_remove(struct queue *q, struct tube *tb)
{
	assert(tube_tasks(tb) == 0 && tb->wpos == HEAP_NONE);
	qs_acct_tube_leave(q, tb);
	qs_flow_drop(q, tb);
	idx_remove(&q->names, tb);
	if (tb->ppos != HEAP_NONE)
		heap_remove(&q->pauses, tb);
	tube_counters_sub(&q->ctr, &tb->ctr);
	for (uint32_t i = tb->index + 1; i < q->ntubes; i++) {
		q->tubes[i - 1] = q->tubes[i];
		q->tubes[i - 1]->index = i - 1;
	}
	q->ntubes--;
	q->tslots[tb->slot] = NULL;
	q->tslot_free[q->tslot_nfree++] = tb->slot;
	if (q->last_tube == tb)
		q->last_tube = NULL;
	tube_free(tb);
}
