/* bgsnap - snapshots written in the background by a forked child, and
 * the snapshot requests waiting for one to be published (the design is
 * in bgsnap.c). Core thread only; the state is embedded in struct core
 * (c->snap). */
#ifndef SLUICE_SERVER_CORE_BGSNAP_H
#define SLUICE_SERVER_CORE_BGSNAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct core;
struct face_ctx;

/* A snapshot request waiting for the snapshot to be published. */
struct snap_waiter {
	struct snap_waiter *next;
	struct face_ctx *ctx;
};

struct bgsnap {
	pid_t pid;    /* the child writing; 0 when none */
	int pidfd;    /* readable when it exits; -1 */
	uint64_t lsn; /* what it covers */
	int64_t started_ns;
	bool ready;               /* written, waiting for the log to be durable
	                           * up to lsn before it is published */
	uint64_t last_lsn;        /* the newest published snapshot */
	int64_t last_at;          /* unix ms it was published */
	int64_t last_ms;          /* how long it took */
	uint64_t records_at_last; /* wal records counter then */
	uint64_t bytes_at_last;   /* wal bytes counter then */
	uint64_t fork_us;         /* the last fork's duration */
	struct snap_waiter *waiters;
	uint8_t *buf; /* the writer's buffer */
};

void bgsnap_init(struct bgsnap *s);

/* Starts a snapshot in a child process unless one runs. Returns 0,
 * -errno, or SLUICE_ELOG. With nothing new since the last snapshot, the
 * waiting requests are answered at once (they came with the request
 * being handled: a read, answered for the local log). */
int bgsnap_start(struct core *c);

/* Whether the thresholds ask for a snapshot now. */
bool bgsnap_due(const struct core *c);

/* Whether a snapshot would give a full log (c->full) room back: as many
 * tasks finished since the last snapshot as are live, and segments other
 * than the current one; without `start`, also while one is under way.
 * With `start`, logs and rate-limits the start. */
bool bgsnap_due_for_room(struct core *c, bool start);

/* The child's pidfd became readable: collect it. */
void bgsnap_reap(struct core *c);

/* Publishes a written snapshot once the log is durable up to it. */
void bgsnap_publish(struct core *c);

/* Waits for a running child (shutdown) and frees what is left. */
void bgsnap_fini(struct core *c);

/* The code a failed snapshot answers: SLUICE_ENOSPC when the disk had
 * no room (-ENOSPC, -EDQUOT), which leaves the log and its writes alone;
 * a SLUICE_E* code as it is; SLUICE_ELOG otherwise. */
int bgsnap_error(int rc);

#endif
