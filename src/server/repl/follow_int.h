/* follow_int - what the files of a follower's side of replication share
 * (follow.c: the interface, the turn and the change of role;
 * follow_link.c: the link to the leader and the requests sent on it;
 * follow_stream.c: what the leader sends, applied): the state, and the
 * functions one of them calls in another. Not for use outside
 * src/server/repl/follow*.c: the interface is follow.h. */
#ifndef SLUICE_SERVER_REPL_FOLLOW_INT_H
#define SLUICE_SERVER_REPL_FOLLOW_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "log/logdir.h"
#include "proto/msg.h"
#include "proto/replmsg.h"
#include "util/buf.h"

struct core;
struct tlsfile;

enum {
	FETCH_BYTES = 4 << 20,   /* records asked for per fetch */
	FETCH_WAIT_MS = 1000,    /* how long the leader may hold a fetch */
	FETCH_TIMEOUT_MS = 5000, /* beyond the wait: the leader is lost */
	RETRY_MS = 200,          /* after a failed fetch */
	RETRY_SLOW_MS = 1000,    /* after a refusal */
	SNAP_CHUNK = 4 << 20,
	LOST_MS = 3000,           /* no answer this long: not connected */
	UNREACHED_LOG_MS = 30000, /* "cannot reach", at most this often */
	LINK_CLOSE_MS = 3000,     /* the longest a link close waits for nng */
};

struct follow {
	char url[MSG_URL_MAX + 1]; /* the leader's replication URL */
	nng_socket sock;
	nng_ctx fctx, actx;
	nng_aio *faio, *aaio;
	int efd;
	atomic_bool fdone, adone;
	atomic_bool fsent, asent; /* the request went out; a receive waits */
	bool fbusy, abusy;
	uint8_t fop;    /* the op in flight on fctx */
	uint64_t acked; /* the durable LSN last acked */
	uint64_t leader_last;
	uint64_t leader_last_time;
	uint64_t leader_epoch;
	int64_t contact;  /* monotonic ms of the last answer */
	int64_t started;  /* monotonic ms follow_start() ran */
	int64_t warn_at;  /* never answered: say so again at this time */
	int64_t retry_at; /* no fetch before this (monotonic ms) */
	int last_err;     /* the last refusal logged, not to repeat it */
	bool broken;      /* a record did not apply: stop */
	/* installing a snapshot */
	bool snap;
	uint64_t snap_lsn, snap_off, snap_size;
	int snap_fd;
	char snap_tmp[LOGDIR_PATH_MAX + 32];
	struct replmsg_epoch *hist;
	uint32_t nhist;
	struct buf out;
};

/* ---- follow_link.c: the link --------------------------------------------- */

/* Opens the req0 socket and dials the leader at `url`. Returns 0 or an
 * nng error as -(1000 + rv). */
int follow_link_open(
    struct follow *f, const char *url, const struct tlsfile *tls);

/* Stops both exchanges and closes the socket (bounded). */
void follow_link_close(struct follow *f);

/* Frees what a finished exchange on `aio` still holds. */
void follow_exchange_free(nng_aio *aio, const atomic_bool *sent);

/* The requests: a fetch from our last LSN + 1, the next chunk of the
 * snapshot being loaded, an ack of our durable LSN. */
void follow_send_fetch(struct core *c, struct follow *f);
void follow_send_snap(struct follow *f);
void follow_send_ack(struct core *c, struct follow *f);

/* ---- follow_stream.c: what the leader sends ------------------------------ */

/* A fetch's answer: records applied, a snapshot to load, a tail to cut. */
void follow_on_fetch_rep(
    struct core *c, struct follow *f, nng_msg *m, int64_t mono_ms);

/* A chunk of the snapshot being loaded; the last one installs it. */
void follow_on_snap_rep(
    struct core *c, struct follow *f, nng_msg *m, int64_t mono_ms);

/* Gives up the snapshot being loaded (its file removed). */
void follow_snap_abandon(struct follow *f);

#endif
