/* replmsg - the replication messages between a leader and its followers
 * (the codec only; the leader's side is server/repl/lead*.c, the follower's
 * server/repl/follow*.c): a follower's requests and the leader's replies, one
 * per nng req/rep message, on the leader's --repl-listen socket. Same framing
 * as the client protocol (msg.h): requests start magic, version, op, flags;
 * replies add a u16 status, and an error reply (status != 0) is the
 * client protocol's (msg_encode_err / msg_decode_rep). The layout of
 * every message is in docs/replication.md.
 *
 * Pure, like msg.c: no I/O, no allocation but the caller's buffer. A
 * decoded message borrows the bytes it was decoded from. */
#ifndef SLUICE_PROTO_REPLMSG_H
#define SLUICE_PROTO_REPLMSG_H

#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"
#include "util/buf.h"

enum {
	/* The replication ops; the client protocol's decoder refuses them
	 * (SLUICE_EUNKNOWNOP), so a follower pointed at a client port
	 * learns it at once. */
	REPLMSG_OP_FETCH = 0x18,
	REPLMSG_OP_ACK = 0x19,
	REPLMSG_OP_SNAP = 0x1a,

	/* A fetch's flags (the head's fourth byte; the other requests
	 * have none) */
	REPLMSG_FETCH_F_TOKEN = 0x01, /* a str token follows client_url */

	REPLMSG_FETCH_RECORDS = 0,  /* records from the LSN asked */
	REPLMSG_FETCH_SNAPSHOT = 1, /* those are gone: load snapshot first */
	REPLMSG_FETCH_DIVERGED = 2, /* the follower's log parts from ours:
	                             * cut it after truncate_to */

	REPLMSG_BATCH_MAX = 8 << 20, /* record bytes a fetch asks for at most */
	REPLMSG_RECORDS_MAX = 72 << 20, /* record bytes in one reply: the
	                                 * batch, or one record of up to
	                                 * REC_MAX_LEN */
	REPLMSG_CHUNK_MAX = 4 << 20,    /* snapshot bytes in one reply */
	REPLMSG_HISTORY_MAX = 4096,     /* epoch entries in a snapshot reply */
};

struct replmsg_epoch {
	uint64_t epoch, nonce, start;
};

struct replmsg_fetch_req {
	uint64_t from_lsn;    /* the next LSN the follower wants */
	uint64_t last_epoch;  /* the epoch of its record from_lsn - 1 */
	uint64_t last_nonce;  /* that epoch's nonce */
	uint64_t epoch_start; /* where that epoch began in its log */
	uint64_t durable_lsn; /* its log is durable up to here */
	uint32_t max_bytes;   /* records to send at most (>= one record) */
	uint32_t wait_ms;     /* park this long when there is nothing new */
	struct msg_str url;   /* its client URL, for the leader's stats */
	/* Its replication token (a leader with --auth checks it once per
	 * connection); length 0: none, and the flag is not set. At most
	 * MSG_TOKEN_MAX bytes. */
	struct msg_str token;
};

struct replmsg_fetch_rep {
	uint8_t kind;       /* REPLMSG_FETCH_* */
	uint64_t epoch;     /* the leader's epoch */
	uint64_t last_lsn;  /* the leader's last LSN */
	uint64_t last_time; /* unix ms of that record */
	int64_t now;        /* the leader's clock */
	struct msg_str url; /* the leader's client URL */
	/* kind RECORDS: `count` whole records as stored in segments
	 * (padding included), LSNs from_lsn, from_lsn + 1, ... */
	uint32_t count;
	const uint8_t *records;
	size_t records_len;
	/* kind SNAPSHOT: the newest snapshot to load */
	uint64_t snap_lsn;
	/* kind DIVERGED */
	uint64_t truncate_to;
};

struct replmsg_ack_req {
	uint64_t durable_lsn;
};

struct replmsg_snap_req {
	uint64_t snap_lsn;
	uint64_t offset;
	uint32_t max_bytes;
};

struct replmsg_snap_rep {
	uint64_t snap_lsn;
	uint64_t size; /* the whole file */
	uint64_t offset;
	const uint8_t *data;
	size_t len;
	/* the leader's epoch history up to snap_lsn (offset 0 only) */
	uint32_t nhist;
	const struct replmsg_epoch *hist; /* encode */
	const uint8_t *hist_raw;          /* decode: replmsg_hist_at() */
};

/* The op of a request (0 when it is not one of ours). */
uint8_t replmsg_req_op(const void *p, size_t len);

int replmsg_encode_fetch(struct buf *b, const struct replmsg_fetch_req *q);
int replmsg_decode_fetch(
    const void *p, size_t len, struct replmsg_fetch_req *q);
int replmsg_encode_fetch_rep(struct buf *b, const struct replmsg_fetch_rep *r);
int replmsg_decode_fetch_rep(
    const void *p, size_t len, struct replmsg_fetch_rep *r);

int replmsg_encode_ack(struct buf *b, const struct replmsg_ack_req *q);
int replmsg_decode_ack(const void *p, size_t len, struct replmsg_ack_req *q);
/* The ack's reply: the leader's epoch. */
int replmsg_encode_ack_rep(struct buf *b, uint64_t epoch);
int replmsg_decode_ack_rep(const void *p, size_t len, uint64_t *epoch);

int replmsg_encode_snap(struct buf *b, const struct replmsg_snap_req *q);
int replmsg_decode_snap(const void *p, size_t len, struct replmsg_snap_req *q);
int replmsg_encode_snap_rep(struct buf *b, const struct replmsg_snap_rep *r);
int replmsg_decode_snap_rep(
    const void *p, size_t len, struct replmsg_snap_rep *r);
/* Entry i of a decoded reply's history. */
struct replmsg_epoch replmsg_hist_at(
    const struct replmsg_snap_rep *r, uint32_t i);

/* The status of a reply (its error, when not 0), or SLUICE_EPROTO when it
 * is not a reply to `op`. */
int replmsg_rep_status(const void *p, size_t len, uint8_t op);

#endif
