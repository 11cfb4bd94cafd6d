/* wal_space - the writer's space reservation: how much the log can
 * still take (the rest of the current segment and the spares ready), and
 * which appends it refuses when that runs short. An append marked
 * WAL_NEW_WORK must leave floor + margin available, one marked WAL_RETRY
 * the floor; others may use all of it (wal_set_reserved). Refusing new
 * work is logged once when it starts and once when it ends
 * (wal_refusing), so a full disk reads as two lines, not one a put. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log/durable.h"
#include "log/iochain.h"
#include "log/seg.h"
#include "log/wal.h"
#include "log/wal_int.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/fsutil.h"
#include "util/log.h"

/* Bytes available now: the rest of the current segment and the spares
 * ready. */
static uint64_t
avail_now(const struct wal *w)
{
	return w->cur->size - w->fill_off +
	    atomic_load(&((struct wal *)w)->alloc.nready) *
	    wal_alloc_spare_cap(w);
}

/* Whether a record of `size` bytes fits and leaves `keep` available. A
 * record that does not fit in the current segment wastes its rest. */
bool
wal_room_for(const struct wal *w, uint64_t size, uint64_t keep)
{
	uint64_t left = w->cur->size - w->fill_off;
	uint64_t avail = avail_now(w);
	uint64_t use = w->fill_off + size <= w->cur->size ? size : left + size;

	return avail >= use && avail - use >= keep;
}

/* Whether this append may fallocate a spare itself: not for reserved
 * work within ALLOC_RETRY_MS of a failure (the disk is full; trying on
 * every refused put would cost a fallocate each). */
bool
wal_may_alloc_inline(struct wal *w)
{
	int64_t now = clock_mono_ns() / 1000000, freed_ms;
	bool failing;

	pthread_mutex_lock(&w->alloc.mu);
	failing = w->alloc.err != 0;
	freed_ms = w->alloc.rm.freed_ms;
	pthread_mutex_unlock(&w->alloc.mu);
	/* Segments removed since the failure may have made the room. */
	if (w->inline_failed_ms != 0 && freed_ms < w->inline_failed_ms &&
	    now - w->inline_failed_ms < ALLOC_RETRY_MS)
		return false;
	return !failing;
}

int
wal_refuse(struct wal *w, unsigned flags, uint64_t size, const char *why)
{
	w->st.enospc++;
	if ((flags & WAL_NEW_WORK) && !w->refusing)
		log_warn("wal",
		    "refusing new work; what is accepted can still be taken, "
		    "acked, failed and deleted dir=%s why=\"%s\" "
		    "reserved=%" PRIu64 " available=%" PRIu64,
		    w->dir, why, w->floor + w->margin, avail_now(w));
	else if (!(flags & WAL_NEW_WORK) && !w->retry_logged)
		log_warn("wal",
		    "refusing a retry (a retake, touch or kick) while the log "
		    "is short of space dir=%s why=\"%s\" reserved=%" PRIu64
		    " available=%" PRIu64,
		    w->dir, why, w->floor, avail_now(w));
	if ((flags & WAL_NEW_WORK) && !w->refusing)
		w->refused_size = size;
	if (flags & WAL_NEW_WORK)
		w->refusing = true;
	else
		w->retry_logged = true;
	return SLUICE_ENOSPC;
}

void
wal_accepting_again(struct wal *w)
{
	w->refusing = false;
	log_info("wal",
	    "accepting new work again dir=%s reserved=%" PRIu64
	    " available=%" PRIu64,
	    w->dir, w->floor + w->margin, avail_now(w));
}

void
wal_set_reserved(struct wal *w, uint64_t floor, uint64_t margin)
{
	w->floor = floor;
	w->margin = margin;
	wal_alloc_update_want(w);
}

bool
wal_refusing(struct wal *w)
{
	if (w->refusing &&
	    wal_room_for(w, w->refused_size, w->floor + w->margin))
		wal_accepting_again(w);
	return w->refusing;
}

bool
wal_space_short(const struct wal *w)
{
	struct wal_alloc *a = (struct wal_alloc *)&w->alloc;
	bool short_;

	pthread_mutex_lock(&a->mu);
	short_ = a->err != 0;
	pthread_mutex_unlock(&a->mu);
	return short_;
}
