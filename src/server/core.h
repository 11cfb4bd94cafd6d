/* core - the state of the core thread, shared by the files that run on
 * it: srv.c (start-up, loop, timers, shutdown), ops.c (one handler per
 * request), bgsnap.c (snapshots in a forked child). Nothing here is
 * touched by any other thread. */
#ifndef SLUICE_SERVER_CORE_H
#define SLUICE_SERVER_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <nng/nng.h>

#include "log/wal.h"
#include "proto/msg.h"
#include "queue/queue.h"
#include "server/net.h"
#include "server/srv.h"
#include "util/buf.h"

/* A reply waiting for the log to hold what it depends on. */
struct pending {
	struct pending *next;
	struct net_ctx *ctx;
	nng_msg *msg;
	uint64_t lsn;
};

/* A take waiting for a task. Waiters are served in arrival order. */
struct waiter {
	struct waiter *next, *prev;
	struct net_ctx *ctx;
	uint32_t session;
	uint32_t max;
	bool detached;
	int64_t deadline; /* monotonic ms */
	size_t ntubes;
	struct queue_str tubes[MSG_TAKE_TUBES_MAX];
	char names[]; /* the tube names the tubes point into */
};

/* A snapshot request waiting for the snapshot to be published. */
struct snap_waiter {
	struct snap_waiter *next;
	struct net_ctx *ctx;
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

struct core {
	const struct srv_config *cfg;
	struct queue *q;
	struct wal *wal;
	struct net *net;
	int sigfd;
	bool stopping;
	int stop_signo; /* the signal that asked for the stop; 0: none */
	int64_t now;    /* unix ms of this turn, never going back */
	int64_t started_ms;
	uint64_t sessions; /* open */
	bool applied;      /* a record was applied this turn */
	struct buf body;   /* a record body being encoded */
	struct buf out;    /* a reply being encoded */
	struct pending *pend_head, *pend_tail;
	struct waiter *wait_head, *wait_tail;
	uint64_t nwaiters;
	struct bgsnap snap;
	struct msg_limits limits;
	/* counters since start, for stats */
	uint64_t ops[MSG_OP_END_];
};

/* Decides nothing; appends `rec` to the log and applies it. `flags`:
 * WAL_NEW_WORK for records that create work. Returns 0 or the WAL's error
 * (SLUICE_ENOSPC, SLUICE_ELOG, ...); on error nothing changed. */
int core_commit(
    struct core *c, const struct qrec *rec, unsigned flags, uint64_t *lsn);

/* Sends the encoded reply in c->out on `ctx` once the log is durable up
 * to the last record appended so far (at once when it already is). */
void core_reply(struct core *c, struct net_ctx *ctx);

/* An error reply: `rc` with sluice_strerror's text, or `fmt` when given. */
void core_reply_err(struct core *c, struct net_ctx *ctx, uint8_t op, int rc,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ops.c: decodes and answers one request (the message stays the
 * caller's). */
void ops_handle(
    struct core *c, struct net_ctx *ctx, uint32_t session, nng_msg *msg);

/* ops.c: a task as the wire carries it (the payload only when asked). */
void ops_view_to_task(
    const struct queue_task_view *v, bool payload, struct msg_task *t);

/* ops_job.c: MSG_OP_JOB, the beanstalk face's operations on one task. */
void ops_job(struct core *c, struct net_ctx *ctx, uint32_t session,
    const struct msg_req *req);

/* ops.c: tries every waiting take in arrival order; answers those that
 * got tasks and those whose wait is over. */
void ops_serve_waiters(struct core *c, int64_t mono_ms);

/* ops.c: drops the waiting takes of a session that is gone. */
void ops_drop_waiters(struct core *c, uint32_t session);

/* ops.c: answers every waiting take with nothing (shutdown). */
void ops_end_waiters(struct core *c);

/* ops.c: the earliest waiter deadline (monotonic ms), or INT64_MAX. */
int64_t ops_next_deadline(const struct core *c);

/* bgsnap.c */
void bgsnap_init(struct bgsnap *s);
/* Starts a snapshot in a child process unless one runs. Returns 0,
 * -errno, or SLUICE_ELOG. */
int bgsnap_start(struct core *c);
/* Whether the thresholds ask for a snapshot now. */
bool bgsnap_due(const struct core *c);
/* The child's pidfd became readable: collect it. */
void bgsnap_reap(struct core *c);
/* Publishes a written snapshot once the log is durable up to it. */
void bgsnap_publish(struct core *c);
/* Waits for a running child (shutdown) and frees what is left. */
void bgsnap_fini(struct core *c);

/* monotonic ms */
int64_t core_mono_ms(void);

#endif
