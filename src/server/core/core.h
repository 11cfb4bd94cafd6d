/* core - the state of the core thread, shared by the files that run on
 * it (srv.c's comment lists them, layer by layer), and the functions of
 * core.c, the layer they all call down to. Nothing here is touched by
 * any other thread. */
#ifndef SLUICE_SERVER_CORE_CORE_H
#define SLUICE_SERVER_CORE_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "log/epochs.h"
#include "log/wal.h"
#include "proto/msg.h"
#include "queue/queue.h"
#include "server/config.h"
#include "server/core/bgsnap.h"
#include "server/core/cohort.h"
#include "server/core/quota.h"
#include "server/core/reserve.h"
#include "server/core/rwaits.h"
#include "server/core/sess.h"
#include "server/core/waiters.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "server/face/nng.h"
#include "server/face/sp.h"
#include "util/buf.h"
#include "util/tokens.h"

/* A task a take reply hands out: undone (UNTAKE) when the reply cannot
 * be delivered. */
struct core_take {
	uint64_t id;
	uint64_t lease;
};

/* A reply waiting for the log to hold what it depends on. */
struct pending {
	struct pending *next;
	struct face_ctx *ctx;
	nng_msg *msg;
	uint64_t lsn;
	int64_t at;       /* monotonic ms it was queued */
	bool local;       /* needs the local log only, not --sync-replicas */
	bool undone;      /* its takes were undone: dropped, not sent */
	bool loose;       /* a take's or a read's: its LSN may be below
	                   * those before it (core_flush_replies) */
	uint32_t session; /* a take reply's session */
	uint64_t lease_id, lease; /* core_reply_how's */
	uint32_t ntakes; /* the tasks a take reply hands out, in takes[] */
	struct core_take takes[];
};

struct http;
struct cluster;
struct cmap_node;
struct rec_hdr;

/* What the core tells and asks the leader's side of replication, which
 * sits above it: repl/lead.c sets c->repl_hook while it listens for
 * followers (lead_open to lead_close). Without it there is no follower:
 * the core tells no one, no follower holds a record (0), and none needs
 * one from the segments (UINT64_MAX). */
struct core_repl_hook {
	/* a record was just appended: a copy for followers */
	void (*note)(struct core *c, const struct rec_hdr *h, const void *body,
	    size_t len);
	/* the highest LSN `k` followers that count (core_counts) hold
	 * durably; 0 when fewer are connected */
	uint64_t (*replicated_lsn)(const struct core *c, unsigned k);
	/* the lowest LSN a connected follower still needs from the
	 * segments; UINT64_MAX when none does */
	uint64_t (*needed_lsn)(const struct core *c);
};

/* The followers --sync-replicas counts: every one (on false), or with
 * automatic failover only the sync set, whose client URLs
 * failover/cluster.c writes here as the election thread decides. Plain
 * data, read through core_counts by the leader's side of replication,
 * which sits below failover. */
struct core_sync {
	bool on;
	size_t n;
	char (*urls)[MSG_URL_MAX + 1];
};

struct core {
	const struct config *cfg;
	struct queue *q;
	struct wal *wal;
	struct events *events;
	/* the URLs no other face reads: nng's socket (face/nng.c) */
	struct face_nng *nng;
	struct conns *conns;         /* the sockets of the core's own faces */
	struct face_sp_config sp;    /* tcp:// clients (face/sp.c) */
	struct face_stream *fstream; /* tls+tcp://, ipc:// (face/stream.c) */
	/* --auth over nng's transports (tls+tcp://, ipc://): pipes closed
	 * unauthenticated after --handshake-timeout, and past
	 * --max-unauth-conns; the next check */
	uint64_t pipes_closed_handshake;
	uint64_t pipes_evicted; /* past --max-unauth-conns, the oldest */
	int64_t pipes_check_ms;
	int sigfd;
	bool stopping;
	int stop_signo; /* the signal that asked for the stop; 0: none */
	/* SIGUSR1, beanstalkd's drain mode: puts are refused
	 * (SLUICE_ESHUTDOWN, the beanstalk face's DRAINING) until the stop;
	 * takes, acks and everything else go on */
	bool draining;
	int64_t now; /* unix ms of this turn, never going back */
	int64_t started_ms;
	uint64_t sessions;    /* open */
	struct sess_tab sess; /* open sessions and their peers */
	/* --auth (ops/auth.c): the token file, and the answers to tokens
	 * not in it, each sent after a pause (gate.h) */
	bool auth_on;
	struct tokens auth;
	struct gate_wait *gate;
	struct tokens_limit tokens_limit; /* failed attempts per address */
	struct quota quota;               /* the tokens' quotas (quota.c) */
	bool applied;                     /* a record was applied this turn */
	uint64_t hard_lsn;   /* the last record that is not a take under a
	                      * session lease */
	uint64_t epoch_lsn;  /* the record that began this node's epoch:
	                      * every take's answer waits for it (the
	                      * lease names the epoch) */
	int64_t takes_since; /* monotonic ms the log's commit has waited
	                      * for, holding takes only; 0: it does not */
	struct buf body;     /* a record body being encoded */
	struct buf puts;     /* a batch put's PUTS record (core_puts.h) */
	struct buf out;      /* a reply being encoded */
	struct pending *pend_head, *pend_tail;
	uint32_t pend_n;        /* replies in that list */
	uint32_t pend_loose;    /* of them, takes' and reads' (loose) */
	struct cohort cohort;   /* the commit's hold for its clients */
	struct waiters waits;   /* the takes waiting (ops/wait.c) */
	bool waits_check;       /* a face saw a waiting take's client
	                         * leave: drop it this turn */
	uint64_t waits_refused; /* takes refused a wait by the limits */
	struct rwaits rwaits;   /* the waits for a result (ops/result.c) */
	struct bgsnap snap;
	struct msg_limits limits;
	/* replication */
	bool follower; /* this node follows a leader (follow.c) */
	struct {
		uint64_t gen;      /* queue_sched_gen when `next` was found */
		int64_t next;      /* unix ms of the earliest slot to fire */
		int64_t retry_at;  /* after a firing the log refused */
		uint64_t fired;    /* slots that put a task, since start */
		int64_t warned_at; /* the last refusal logged */
	} sched;                   /* schedules (ops/sched.c) */
	bool fenced;               /* a leader that learned of a higher epoch */
	uint64_t fenced_by;        /* that epoch */
	struct epochs epochs;
	/* the leader's side (repl/lead.c), --repl-listen; NULL without,
	 * and its hook (core_repl_hook) while it is there */
	struct lead *repl;
	const struct core_repl_hook *repl_hook;
	struct follow *fol;               /* the link to the leader; NULL */
	char leader_url[MSG_URL_MAX + 1]; /* its client URL, as it says; "" */
	/* counters since start, for stats */
	uint64_t ops[MSG_OP_END_];
	/* records' tasks beyond one a record (a PUTS's n - 1), applied since
	 * start, replay included: the snapshot cadence counts records as the
	 * PUTs they stand for (bgsnap_due) */
	uint64_t puts_extra;
	struct http *http; /* --http; NULL without */
	/* automatic failover (failover/cluster.c writes these): its state
	 * (--etcd; NULL without); until when (monotonic ms) a leader may
	 * write (core_check_lease; NULL: no lease); a switchover under way
	 * (no writes); the followers --sync-replicas counts */
	struct cluster *cluster;
	struct cmap_node *cmapn; /* the cluster map (failover/cmap_node.c);
	                            NULL without --etcd */
	int64_t (*lease_until)(const struct core *c);
	bool handing;
	struct core_sync sync;
	int64_t recovery_ms; /* how long start-up recovery took */
	/* the log's reservation (reserve.h) */
	struct reserve_sizes rsv;
	uint64_t rsv_pool;
	/* A full log: new work refused, or spares the disk has no room
	 * for, and until a snapshot gave the room of finished work back.
	 * A snapshot is started when as many tasks finished since the last
	 * one as are live, so that the segments it covers are removed. */
	struct {
		bool on;
		uint64_t done_mark; /* tasks finished (acked, deleted) when
		                     * the last snapshot started */
		int64_t next_ms;    /* monotonic: no snapshot for room before */
	} full;
};

/* Decides nothing; appends `rec` to the log and applies it, then sets the
 * log's reservation for the new state. `flags`: WAL_NEW_WORK for records
 * that create work, WAL_RETRY for churn (reserve.h says which is which),
 * 0 for records that finish work already accepted. Returns 0 or the WAL's
 * error (SLUICE_ENOSPC, SLUICE_ELOG, ...); on error nothing changed. */
int core_commit(
    struct core *c, const struct qrec *rec, unsigned flags, uint64_t *lsn);

/* The node's role: a follower (of a leader, or of nobody until an
 * election decides) or not. A follower's log takes its leader's records
 * LSN for LSN and adds none of its own (wal_set_follower). */
void core_set_follower(struct core *c, bool follower);

/* Starts a new epoch (a leader's start, a promotion): a random nonce, the
 * epoch history, then the REC_EPOCH record. Returns as wal_set_epoch. */
int core_new_epoch(struct core *c, uint64_t epoch);

/* The LSN up to which replies may go out: durable here, and on
 * --sync-replicas followers. */
uint64_t core_commit_lsn(const struct core *c);

/* With a lease (c->lease_until: --etcd), a leader takes writes only
 * while it holds: past its deadline the leader fences itself (no writes;
 * the replies that wait for a commit fail). */
void core_check_lease(struct core *c);

/* Whether the follower at client URL `url` counts for --sync-replicas:
 * with --etcd, only those of the sync set (c->sync) do. */
bool core_counts(const struct core *c, const char *url);

/* Logs the release of every session lease (a restart, a promotion): ready
 * at once, attempts kept, `why` ("server restarted (...)") as its last
 * error (queue_decide_restart). */
void core_release_sessions(struct core *c, const char *why);

/* A clean stop ends the sessions, and the leases they hold, as their
 * disconnects would (core_session_gone): the takes of replies still
 * waiting for the log are undone, every other session lease is logged
 * lost under the retry policy with "server stopped (lease of PEER)".
 * On a leader; before the log's last sync. */
void core_stop_sessions(struct core *c);

/* A session opened: remembered with its peer's address, logged (debug). */
void core_session_open(struct core *c, uint32_t session, const char *peer);

/* A session is gone: on a leader, the takes of its replies still waiting
 * for the log are undone (UNTAKE), and the loss of its other leases is
 * logged ("worker disconnected (PEER)"); logged (debug) with counts.
 * (Its waiting takes are the operations' to drop.) */
void core_session_gone(struct core *c, uint32_t session);

/* A queue_lost_ready_fn (arg: the core): whether `session`'s face asks for
 * lost leases ready at once (struct sess's lost_ready). */
bool core_session_lost_ready(void *arg, uint64_t session);

/* Sends every pending reply the log (and enough followers) now covers;
 * after the log failed, or past --sync-timeout, the waiting replies
 * become errors. */
void core_flush_replies(struct core *c);

/* Tells the log how much room live tasks' records still need, and the
 * pool for retries beyond that (reserve.h). O(1). */
void core_update_reservation(struct core *c);

/* Rebuilds the queue from the data directory (newest snapshot, then the
 * log) and opens the writer where the log ends. Returns 0 or an error
 * (logged). */
struct recover_result;
int core_open_log(struct core *c, struct recover_result *res);

/* Rebuilds the queue and reopens the writer from what the data directory
 * holds now (after a follower cut its log or installed a snapshot).
 * Returns 0 or an error (logged). */
int core_reload(struct core *c);

/* Answers every pending reply that waits for a commit with an error:
 * the node stopped leading before the change was confirmed. */
void core_fail_pending(struct core *c);

/* Whether `op` changes the queue: a follower refuses it, and the answer
 * to it waits for the commit LSN (core_commit_lsn: with --sync-replicas,
 * for followers); the answer to any other op needs the local log only. */
bool core_op_writes(uint8_t op);

/* What a reply waits for before it is sent: the facts of the request it
 * answers, given with it (core_reply_as). Zeroed: the last record
 * appended so far, at the commit LSN. */
struct core_reply_how {
	bool local; /* the local log only, not --sync-replicas followers:
	             * an answer that wrote nothing */
	bool now;   /* at once, whatever the log holds (stats on a failed
	             * log: log_failed says why; the answer to a switchover,
	             * which depends on no record of this node's) */
	bool take;  /* it hands out tasks under session leases: it waits
	             * for take_lsn (the tasks' puts or releases among it)
	             * and the epoch's record (epoch_lsn), not for the takes
	             * themselves nor for other writes before them. A crash
	             * that loses a take makes its task ready again
	             * (at-least-once); its lease stays unique (qrec_lease).
	             * SPEC 4. A take that asked to be durable, or a
	             * detached one, waits for its own record: not set. */
	const struct core_take *takes; /* the tasks it hands out (a
	                                * take's): undone (UNTAKE) when it
	                                * cannot be delivered */
	uint32_t ntakes;
	uint32_t session; /* the session of that take */
	/* A lease the answer touches or hands out besides takes[] (a
	 * touch, a take by id), 0 for none: like takes[], its ttr counts
	 * from when the answer leaves (queue_lease_restart). */
	uint64_t lease_id, lease;
	/* With `take`: the last record its tasks' tubes depend on
	 * (queue_task_dep_lsn), which it waits for, whatever the face: the
	 * answer may leave before those of earlier requests of its
	 * connection (SP matches replies by request id; the beanstalk face
	 * posts a reserve only once everything before it is answered). */
	uint64_t take_lsn;
	/* A read (an op that writes nothing: core_op_writes): it shows what
	 * the node holds, and waits only for read_lsn, the last record the
	 * task(s) it shows depend on (queue_task_dep_lsn; 0: none, at once),
	 * not for every record appended before it nor behind the replies
	 * that wait for them: while a commit is in flight, peeks, lists and
	 * stats are answered (docs/protocol.md). */
	bool read;
	uint64_t read_lsn;
};

/* Sends the encoded reply in c->out on `ctx` once the log holds what
 * `how` says it depends on (at once when it already does). */
void core_reply_as(
    struct core *c, struct face_ctx *ctx, const struct core_reply_how *how);

/* core_reply_as for the answer to the op the reply names (its op byte):
 * for the local log alone when that op writes nothing (core_op_writes),
 * else at the commit LSN. */
void core_reply(struct core *c, struct face_ctx *ctx);

/* core_reply for an answer that depends on the local log alone (a
 * promotion: its followers are yet to come; a refusal). */
void core_reply_local(struct core *c, struct face_ctx *ctx);

/* An error reply: `rc` with sluice_strerror's text, or `fmt` when given,
 * sent as core_reply sends the answer to `op`. */
void core_reply_err(struct core *c, struct face_ctx *ctx, uint8_t op, int rc,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* core_reply_err sent as `how` says. */
void core_reply_err_as(struct core *c, struct face_ctx *ctx,
    const struct core_reply_how *how, uint8_t op, int rc, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif
