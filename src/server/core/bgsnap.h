/* bgsnap - snapshots built and written in the background by a thread from
 * the previous snapshot and the log, and the snapshot requests waiting for
 * one to be published (the design is in bgsnap.c). Core thread only (the
 * worker thread sees only its job); the state is embedded in struct core
 * (c->snap). */
#ifndef SLUICE_SERVER_CORE_BGSNAP_H
#define SLUICE_SERVER_CORE_BGSNAP_H

#include <stdbool.h>
#include <stdint.h>

#include "server/core/snapdue.h"

struct core;
struct face_ctx;
struct recover_result;

/* A snapshot request waiting for the snapshot to be published. */
struct snap_waiter {
	struct snap_waiter *next;
	struct face_ctx *ctx;
};

struct bgsnap_job;
struct bgsnap_worker;

struct bgsnap {
	bool running; /* the worker thread builds one */
	bool waiting; /* started: waits for the log to be durable up to lsn
	               * before the worker is handed it */
	int fd;       /* eventfd, readable when the worker is done; -1 */
	struct bgsnap_worker *worker; /* the thread (bgsnap_open); NULL */
	struct bgsnap_job *job;       /* handed over, until reaped */
	uint64_t lsn;                 /* what it covers */
	uint64_t epoch;               /* the log's epoch at lsn */
	int64_t time;                 /* the queue's clock when started */
	int64_t started_ns;
	uint64_t last_lsn;        /* the newest published snapshot */
	int64_t last_at;          /* unix ms it was published */
	int64_t last_ms;          /* how long it took */
	uint64_t records_at_last; /* wal records counter then */
	uint64_t bytes_at_last;   /* wal bytes counter then */
	struct snapdue_base base; /* the last snapshot's size, which sets
	                           * how much log the next one waits for */
	uint64_t pause_us;        /* what starting the last one cost the
	                           * loop (handing the worker its job) */
	struct snap_waiter *waiters;
	uint8_t *buf; /* the writer's buffer */
};

void bgsnap_init(struct bgsnap *s);

/* Makes the worker thread (and its eventfd) ahead of the first snapshot,
 * so that no snapshot's start pays for a thread's creation. Returns 0 or
 * -errno; without it the first snapshot makes the worker. */
int bgsnap_open(struct bgsnap *s);

/* Whether a snapshot is under way (waiting for the log, or being built). */
static inline bool
bgsnap_busy(const struct bgsnap *s)
{
	return s->running || s->waiting;
}

/* Starts a snapshot unless one is under way: notes the LSN, and the
 * worker is handed it once the log is durable up to it. Returns 0,
 * -errno, or SLUICE_ELOG. With nothing new since the last snapshot, the
 * waiting requests are answered at once (they came with the request
 * being handled: a read, answered for the local log). */
int bgsnap_start(struct core *c);

/* The state was recovered (`res`): the snapshot it loaded is the last
 * one, its size sets the next one's thresholds, and the records replayed
 * after it count as log since it (a restart replays them again). */
void bgsnap_recovered(struct core *c, const struct recover_result *res);

/* Whether the thresholds ask for a snapshot now (snapdue.h: they grow
 * with the last snapshot's size). */
bool bgsnap_due(const struct core *c);

/* Whether a snapshot would give a full log (c->full) room back: as many
 * tasks finished since the last snapshot as are live, and segments other
 * than the current one; without `start`, also while one is under way or
 * while fewer have finished (a drain under way: srv.c keeps watching).
 * With `start`, logs and rate-limits the start. */
bool bgsnap_due_for_room(struct core *c, bool start);

/* The worker's eventfd became readable: collect its job (the snapshot
 * is published already, or failed). */
void bgsnap_reap(struct core *c);

/* Hands a snapshot waiting for the log to be durable up to its LSN to
 * the worker, once it is. */
void bgsnap_launch(struct core *c);

/* Stops a snapshot under way (the data directory is about to change
 * under it): it is cancelled, waited for and what it left unfinished
 * removed; its requests are answered SLUICE_ESHUTDOWN. The worker stays
 * for the next bgsnap_start. */
void bgsnap_stop(struct core *c);

/* bgsnap_stop, then ends the worker and frees what is left (shutdown).
 * A later bgsnap_start works again. */
void bgsnap_fini(struct core *c);

/* The code a failed snapshot answers: SLUICE_ENOSPC when the disk had
 * no room (-ENOSPC, -EDQUOT), which leaves the log and its writes alone;
 * a SLUICE_E* code as it is; SLUICE_ELOG otherwise. */
int bgsnap_error(int rc);

#endif
