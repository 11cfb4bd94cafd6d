/* core - the state of the core thread, shared by the files that run on
 * it (srv.c's comment lists them, layer by layer), and the functions of
 * core.c, the layer they all call down to. Nothing here is touched by
 * any other thread. */
#ifndef SLUICE_SERVER_CORE_CORE_H
#define SLUICE_SERVER_CORE_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <nng/nng.h>

#include "log/epochs.h"
#include "log/wal.h"
#include "proto/msg.h"
#include "queue/queue.h"
#include "util/tokens.h"
#include "server/core/quota.h"
#include "server/failover/elect.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "server/face/nng.h"
#include "server/face/sp.h"
#include "server/core/reserve.h"
#include "server/core/sess.h"
#include "server/core/waiters.h"
#include "server/srv.h"
#include "util/buf.h"

/* A task a take reply hands out: undone (UNTAKE) when the reply cannot
 * be delivered. */
struct core_take {
	uint64_t id;
	uint64_t lease;
};

/* A reply waiting for the log to hold what it depends on. */
struct pending {
	struct pending *next;
	struct net_ctx *ctx;
	nng_msg *msg;
	uint64_t lsn;
	int64_t at;       /* monotonic ms it was queued */
	bool local;       /* needs the local log only, not --sync-replicas */
	bool undone;      /* its takes were undone: dropped, not sent */
	uint32_t session; /* a take reply's session */
	uint32_t ntakes;  /* the tasks a take reply hands out, in takes[] */
	struct core_take takes[];
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

struct http;

struct core {
	const struct srv_config *cfg;
	struct queue *q;
	struct wal *wal;
	struct net *net;
	/* the URLs no other face reads: nng's socket (face/nng.c) */
	struct face_nng *nng;
	struct conns *conns;         /* the sockets of the core's own faces */
	struct face_sp_config sp;    /* tcp:// clients (face_sp.c) */
	struct face_stream *fstream; /* tls+tcp://, ipc:// (face_stream.c) */
	/* --auth over nng's transports (tls+tcp://, ipc://): pipes closed
	 * unauthenticated after --handshake-timeout, and past
	 * --max-unauth-conns; the next check */
	uint64_t pipes_closed_handshake;
	uint64_t pipes_evicted; /* past --max-unauth-conns, the oldest */
	int64_t pipes_check_ms;
	int sigfd;
	bool stopping;
	int stop_signo; /* the signal that asked for the stop; 0: none */
	int64_t now;    /* unix ms of this turn, never going back */
	int64_t started_ms;
	uint64_t sessions;    /* open */
	struct sess_tab sess; /* open sessions and their peers */
	/* --auth (ops_auth.c): the token file, and the replies to failed
	 * auths, each sent after a pause */
	bool auth_on;
	struct tokens auth;
	struct auth_wait *auth_waits;
	struct tokens_limit tokens_limit; /* failed attempts per address */
	/* the token of the request being handled (NULL without --auth),
	 * and the quotas' counts (quota.c) */
	const struct tokens_entry *req_tok;
	uint64_t req_hidden; /* the task it names that the token may not
	                        see (ops_auth.c); 0: none */
	struct quota quota;
	bool applied;      /* a record was applied this turn */
	bool reply_local;  /* the request being handled only reads: its
	                    * answer needs the local log, not followers */
	bool reply_take;   /* the reply being sent hands out tasks: it
	                    * waits for every record before its takes (the
	                    * tasks' puts among them), hard_lsn, not for
	                    * the takes themselves. A crash that loses a
	                    * take makes its task ready again
	                    * (at-least-once); its lease stays unique
	                    * (qrec_lease). SPEC 4. */
	uint64_t hard_lsn; /* the last record that is not a take under a
	                    * session lease */
	bool take_durable; /* the take being answered asked to wait for
	                    * its own record (its durable flag) */
	const struct core_take
	    *reply_takes; /* the reply being sent hands
	                   * these tasks out (a take's): undone when it
	                   * cannot be delivered */
	uint32_t reply_ntakes;
	uint32_t reply_session; /* the session of that take */
	int64_t takes_since;    /* monotonic ms the log's commit has waited
	                         * for, holding takes only; 0: it does not */
	struct buf body;        /* a record body being encoded */
	struct buf out;         /* a reply being encoded */
	struct pending *pend_head, *pend_tail;
	struct waiters waits;   /* the takes waiting for a task (ops.c) */
	bool waits_check;       /* a face saw a waiting take's client
	                         * leave: drop it this turn */
	uint64_t waits_refused; /* takes refused a wait by the limits */
	struct bgsnap snap;
	struct msg_limits limits;
	/* replication */
	bool follower;      /* this node follows a leader (follow.c) */
	bool fenced;        /* a leader that learned of a higher epoch */
	uint64_t fenced_by; /* that epoch */
	struct epochs epochs;
	struct lead *repl;                /* --repl-listen (repl.c); NULL */
	struct follow *fol;               /* the link to the leader; NULL */
	char leader_url[MSG_URL_MAX + 1]; /* its client URL, as it says; "" */
	/* counters since start, for stats */
	uint64_t ops[MSG_OP_END_];
	bool reply_now; /* core_reply sends at once (stats on a failed log) */
	struct http *http; /* --http; NULL without */
	/* automatic failover (cluster.c) */
	struct elect *elect; /* --etcd; NULL without */
	struct elect_state elect_st;
	struct elect_cmd elect_cmd;
	bool counting; /* only the followers in count[] count for
	                * --sync-replicas: the sync set */
	size_t ncount;
	char (*count)[MSG_URL_MAX + 1]; /* their client URLs */
	uint64_t count_gen;             /* the thread's COUNT applied */
	bool handing;                   /* a switchover: no writes */
	struct net_ctx *handover_ctx;   /* its request, to answer */
	uint64_t handover_id;
	char handover_to[ELECT_NAME_MAX + 1];
	uint32_t handover_ms;
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

/* Starts a new epoch (a leader's start, a promotion): a random nonce, the
 * epoch history, then the REC_EPOCH record. Returns as wal_set_epoch. */
int core_new_epoch(struct core *c, uint64_t epoch);

/* The LSN up to which replies may go out: durable here, and on
 * --sync-replicas followers. */
uint64_t core_commit_lsn(const struct core *c);

/* With --etcd, a leader takes writes only while its lease holds: past
 * the election's deadline it fences itself (no writes; the replies that
 * wait for a commit fail). */
void core_check_lease(struct core *c);

/* Whether the follower at client URL `url` counts for --sync-replicas:
 * with --etcd, only those of the sync set (elect.h) do. */
bool core_counts(const struct core *c, const char *url);

/* Logs the release of every session lease (a restart, a promotion). */
void core_release_sessions(struct core *c);

/* A session opened: remembered with its peer's address, logged (debug). */
void core_session_open(struct core *c, uint32_t session, const char *peer);

/* A session is gone: on a leader, the takes of its replies still waiting
 * for the log are undone (UNTAKE), and the loss of its other leases is
 * logged ("worker disconnected (PEER)"); logged (debug) with counts.
 * (Its waiting takes are the operations' to drop.) */
void core_session_gone(struct core *c, uint32_t session);

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

/* Sends the encoded reply in c->out on `ctx` once the log is durable up
 * to the last record appended so far (at once when it already is). */
void core_reply(struct core *c, struct net_ctx *ctx);

/* core_reply for an answer that depends on the local log alone (a
 * promotion: its followers are yet to come). */
void core_reply_local(struct core *c, struct net_ctx *ctx);

/* An error reply: `rc` with sluice_strerror's text, or `fmt` when given. */
void core_reply_err(struct core *c, struct net_ctx *ctx, uint8_t op, int rc,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ops.c: decodes and answers one request (the message stays the
 * caller's). */
/* --auth: loads the token file at start. Returns 0, or -1 (logged). */
int ops_auth_open(struct core *c);

/* SIGHUP: reads the token file again; sessions whose token left it lose
 * it. A bad file keeps the tokens in force (logged). */
void ops_auth_reload(struct core *c);
/* Whether task `id` is of a tube the token of the request being handled
 * may not see (--auth): answered as if it did not exist. */
bool ops_auth_hidden(struct core *c, uint64_t id);

/* Whether the request may go on to its op; else it is answered (an
 * auth request is answered here). */
bool ops_auth_check(struct core *c, struct net_ctx *ctx, uint32_t session,
    const struct msg_req *req);

/* The failed auths' delayed replies: those due by `mono_ms` sent, those
 * of a closed session dropped, all sent at the end; when the next is due
 * (INT64_MAX: none). */
void ops_auth_serve(struct core *c, int64_t mono_ms);
void ops_auth_drop(struct core *c, uint32_t session, bool repl);

/* A token that is not in the file, from `peer`: counted and logged (the
 * limit of util/tokens.h), and answered EAUTH (with `op`) when the limit says;
 * `repl`: a follower's fetch on the replication port (answered by
 * lead_answer_unknown). */
void ops_auth_unknown(struct core *c, struct net_ctx *ctx, uint32_t session,
    uint8_t op, const char *peer, bool repl);
void ops_auth_end(struct core *c); /* frees the file and the list */
int64_t ops_auth_next(const struct core *c);

void ops_handle(
    struct core *c, struct net_ctx *ctx, uint32_t session, nng_msg *msg);

/* ops.c: a task as the wire carries it (the payload only when asked),
 * with the holder of a session lease. Its strings are borrowed from the
 * queue and the session table: encode it before the core moves on. */
void ops_view_to_task(const struct core *c, const struct queue_task_view *v,
    bool payload, struct msg_task *t);

/* ops.c: the most bytes task `v` takes in a reply (its fixed fields and
 * every length prefix within TASK_WIRE_FIXED, its strings, and with
 * `payload` its payloads): a reply is built within MSG_SIZE_MAX. */
enum { TASK_WIRE_FIXED = 512 };
size_t ops_task_wire_max(const struct queue_task_view *v, bool payload);

/* ops.c: whether a lease request overrides the lease (its force flag:
 * an operator's; release_all always does). */
bool ops_req_forced(const struct msg_req *r);

/* ops.c: the log's class of a take of task `id` (reserve.h): 0 for its
 * first take, WAL_RETRY for a task taken before. */
unsigned ops_take_flags(struct core *c, uint64_t id);

/* ops.c: encodes `rep` and answers it as core_reply does. */
void ops_reply(struct core *c, struct net_ctx *ctx, const struct msg_rep *rep);

/* ops_tube.c: tube_set, tube_show and tube_delete. */
void ops_tube(struct core *c, struct net_ctx *ctx, const struct msg_req *req);

/* ops_tube.c: a tube's settings as the wire carries them (borrows the
 * dead letter's name). */
void ops_tube_conf_to_msg(
    const struct qrec_tube_conf *q, struct msg_tube_conf *m);

/* ops_job.c: MSG_OP_JOB, the beanstalk face's operations on one task. */
void ops_job(struct core *c, struct net_ctx *ctx, uint32_t session,
    const struct msg_req *req);

/* ops.c: serves the waiting takes on the tubes marked since the last
 * turn, in arrival order, and answers those whose wait is over. */
void ops_serve_waiters(struct core *c, int64_t mono_ms);

/* ops.c: the queue's queue_ready_fn (arg: the core): marks the tube for
 * the next ops_serve_waiters. O(1). */
void ops_tube_ready(void *arg, const char *name, size_t len);

/* ops.c: drops the waiting takes whose client left (the HTTP face's,
 * which it watches; called when it wakes the core). */
void ops_check_waiters(struct core *c);

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
