/* lead_int - what the files of the leader's side of replication share
 * (lead.c: the interface and the core's hook; lead_peer.c: the
 * followers, their requests and the answers; lead_link.c: the
 * connections to the replication port and their tokens; lead_recent.c:
 * the recent records kept in memory for followers): the state, and the
 * functions one of them calls in another. Not for use outside
 * src/server/repl/lead*.c: the interface is lead.h. */
#ifndef SLUICE_SERVER_REPL_LEAD_INT_H
#define SLUICE_SERVER_REPL_LEAD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "proto/msg.h"
#include "server/face/face.h"
#include "server/face/sp.h"
#include "server/repl/catchup.h"
#include "util/buf.h"
#include "util/tokens.h"

struct core;
struct face_stream;
struct rec_hdr;
struct replmsg_fetch_rep;

enum {
	RECENT_CAP = 32 << 20,     /* bytes of recent records kept */
	RECENT_RECS_MAX = 1 << 20, /* records kept */
	FETCH_WAIT_MAX = 10000,    /* ms a fetch may park */
	PEERS_MAX = 64,
	/* How far ahead of this node's epoch a follower may say its own
	 * is: one promotion after another while this node still leads. */
	REPL_EPOCH_AHEAD_MAX = 1000,
	/* The largest request a follower sends (a fetch: its URL and its
	 * token, a few fixed fields): anything longer closes its connection
	 * before a byte of it is kept, authenticated or not. */
	REPL_REQ_MAX = 4096,
	/* Connections to the replication port at once; of those not ready
	 * (under --auth: no replica token accepted yet), the oldest past
	 * REPL_UNAUTH_MAX is closed for a new one. */
	REPL_PIPES_MAX = 4 * PEERS_MAX,
	REPL_UNAUTH_MAX = PEERS_MAX,
	REPL_CHECK_MS = 1000,
};

struct lead_recent {
	uint8_t *data;
	size_t len, cap;
	uint64_t first; /* LSN of the record at off[0] */
	uint32_t *off;
	size_t n, ncap;
};

struct lead_peer {
	struct lead_peer *next;
	uint32_t session;
	char url[MSG_URL_MAX + 1];
	uint64_t acked;      /* durable on the follower */
	uint64_t ack_ms;     /* from the append of the record acked last to
	                      * the ack saying it is durable there */
	uint64_t ack_ms_max; /* the most that took since it came */
	uint64_t joined;     /* our last LSN when it came: catching up to
	                      * there is not lag */
	uint64_t want;       /* the LSN it asked for last */
	/* a parked fetch */
	struct face_ctx *ctx;
	uint32_t max_bytes;
	int64_t deadline;
	struct catchup *cu;  /* reads its segments; NULL until needed */
	uint64_t cu_none_at; /* durable LSN when a read found nothing */
};

/* One connection to the replication port, known from its open: where it
 * comes from, and with --auth the token it showed (checked at its first
 * fetch; its acks and snapshot reads need that fetch to have passed). */
struct lead_link {
	struct lead_link *next;
	uint32_t session;
	bool authed;
	bool closing;      /* closed by the bounds; its close follows */
	int64_t opened_ms; /* monotonic */
	int refused;       /* the last refusal logged, not to repeat it */
	uint8_t hash[TOKENS_HASH_LEN];
	char token[TOKENS_NAME_MAX + 1]; /* the token's name once authed */
	char addr[FACE_PEER_MAX];
};

struct lead {
	struct events *events;
	struct face_nng *nng; /* the URLs face/stream.c does not serve */
	/* tcp://, tls+tcp://, ipc://, ws:// (face/stream.c: the bounds of
	 * every connection); NULL: nng's socket serves the URL
	 * (abstract://, wss://) */
	struct face_stream *fs;
	struct face_sp_config spc;
	struct lead_link *links;
	struct lead_peer *peers;
	size_t npeers;
	struct lead_recent recent; /* lead_recent.c */
	struct catchup_io *io;
	struct buf recs;
	struct buf out;
	/* fetches refused for an epoch no leader can have begun: logged
	 * once a second at most, with the count since the last line */
	uint64_t bad_epochs;
	int64_t bad_epoch_logged; /* monotonic ms */
	int64_t check_ms;         /* the bounds' next check */
	uint64_t closed_handshake, evicted_unauth;
};

/* ---- lead_recent.c: the recent records ---------------------------------- */

/* Forgets every record; the next one kept is `next`. */
void lead_recent_clear(struct lead_recent *r, uint64_t next);

/* Appends records from `from` up to `upto` (at most `max` bytes, at least
 * one record) to `out`. False when `from` is not kept. */
bool lead_recent_get(const struct lead_recent *r, uint64_t from, uint64_t upto,
    size_t max, struct buf *out, uint32_t *count);

/* The time of the record `lsn`, when it is kept. */
bool lead_recent_time(const struct lead_recent *r, uint64_t lsn, int64_t *time);

/* core_repl_hook.note: keeps a copy of the record just appended. */
void lead_recent_note(
    struct core *c, const struct rec_hdr *h, const void *body, size_t len);

/* ---- lead_link.c: the connections and their tokens ---------------------- */

struct lead_link *lead_link_find(struct lead *rp, uint32_t session);

/* A connection opened (EVENT_SESSION_OPEN) from `addr`; closed. */
void lead_link_open(struct lead *rp, uint32_t session, const char *addr);
void lead_link_close(struct lead *rp, uint32_t session);

/* Whether the connection may replicate: always without --auth; with it,
 * once a fetch showed a replica (or admin) token for every tube. */
bool lead_link_authed(struct core *c, uint32_t session);

/* Checks the token of a connection's fetch. Returns 0, the error to
 * refuse it with (logged: the peer, the token's name if known; a refusal
 * says no more than the client port's), or LEAD_LINK_UNKNOWN for a token that
 * is not in the file: that one goes through the client port's limit on
 * failed attempts (gate_unknown), which logs it. */
enum { LEAD_LINK_UNKNOWN = -1 };
int lead_link_token(struct core *c, uint32_t session, struct msg_str token,
    struct msg_str url, const char **text);

/* On nng's own socket under --auth, once a second: closes the
 * connections that showed no token in time, and the oldest past
 * REPL_UNAUTH_MAX. */
void lead_link_sweep(struct core *c, int64_t now);

/* ---- lead_peer.c: the followers and their requests ---------------------- */

/* The follower of connection `session`; with `create`, a new one when
 * there is room (PEERS_MAX). NULL. */
struct lead_peer *lead_peer_get(struct core *c, uint32_t session, bool create);

/* Forgets the follower of connection `session` (its parked fetch let go). */
void lead_peer_drop(struct lead *rp, uint32_t session);

/* Answers p's parked fetch with records when there are some: from memory,
 * or by starting a read of the segments (answered when it completes).
 * False while there is nothing to send yet. */
bool lead_peer_send(struct core *c, struct lead_peer *p);

/* catchup_done_fn (arg: the core): a segment read for a follower ended. */
void lead_peer_read_done(struct catchup *r, int rc, void *arg);

/* Decodes and answers one request on the replication port. */
void lead_peer_request(
    struct core *c, struct face_ctx *ctx, uint32_t session, nng_msg *msg);

/* Sends the encoded answer in rp->out on `ctx`. */
void lead_send(struct lead *rp, struct face_ctx *ctx);

/* Answers `ctx` with the error `rc` (`text`, or sluice_strerror's). */
void lead_send_err(
    struct core *c, struct face_ctx *ctx, uint8_t op, int rc, const char *text);

/* A fetch's answer of `kind`, saying where this node's log stands. */
void lead_fetch_rep_init(
    struct core *c, struct replmsg_fetch_rep *r, uint8_t kind);

#endif
