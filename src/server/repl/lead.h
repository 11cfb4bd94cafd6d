/* lead - a leader's side of replication: the --repl-listen socket, the
 * followers it serves, and the recent records it keeps in memory for them
 * (lead.c, lead_link.c, lead_peer.c, lead_recent.c).
 *
 * A follower asks for records from an LSN (a fetch); the leader first
 * checks that the follower's log agrees with its own up to there (epoch
 * history), then answers with a batch of whole records: from memory when
 * they are recent, from its segments when older (catchup.c, through
 * io_uring), or "load a snapshot first" when those segments are gone. With
 * nothing new, the fetch waits (long poll) until a record is appended or its
 * wait is over. Acks carry each follower's durable LSN; with --sync-replicas K
 * a reply waits until K followers hold what it depends on (core_commit_lsn,
 * which asks through the hook lead_open registers on the core: core_repl_hook).
 *
 * Everything here runs on the core thread. */
#ifndef SLUICE_SERVER_REPL_LEAD_H
#define SLUICE_SERVER_REPL_LEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/tokens.h"

struct core;
struct lead;

/* What stats and metrics show of one follower. */
struct lead_peer_info {
	const char *url; /* its client URL, as it told us ("" if none) */
	uint64_t acked_lsn;
	uint64_t lag_records;
	uint64_t lag_ms;
	uint64_t ack_ms;     /* append → durable on the follower, last ack */
	uint64_t ack_ms_max; /* the most since it connected */
};

/* Listens for followers on `url`. Returns 0 or an error as face_nng_open. */
int lead_open(struct core *c, const char *url);
void lead_close(struct core *c);

/* Readable while follower requests wait; -1 without a listener. */
int lead_fd(const struct core *c);

/* Readable when reads of segments for followers completed; -1. */
int lead_io_fd(const struct core *c);

/* Handles every waiting follower request, and completed segment reads. */
void lead_handle(struct core *c);

/* What the replication port's bounds refused and closed, since start
 * (docs/security.md). */
struct lead_conn_stats {
	uint64_t refused_full;     /* past its cap on connections */
	uint64_t closed_handshake; /* no token within --handshake-timeout */
	uint64_t evicted_unauth;   /* the oldest unauthenticated, for more */
	uint64_t closed_other;     /* the frame and stall timeouts, a length
	                            * over the limit, a malformed frame */
};
void lead_conn_stats(const struct core *c, struct lead_conn_stats *out);

/* Answers parked fetches that can now be served, or whose wait is over.
 * Call at the end of each turn (after the turn's appends). */
void lead_serve(struct core *c, int64_t mono_ms);

/* The earliest parked fetch's deadline (monotonic ms), or INT64_MAX. */
int64_t lead_next_deadline(const struct core *c);

/* Connected followers; fills up to `max` entries of `out`. */
size_t lead_peers(const struct core *c, struct lead_peer_info *out, size_t max);

/* --auth's file was read again: a follower whose token is gone, or may
 * no longer replicate, is refused at its next request. */
void lead_auth_reload(struct core *c);

/* The end of a fetch whose token is not in the file, `how` ops_auth
 * says (util/tokens.h): EAUTH when its pause ends, its context let go (the
 * connection closed meanwhile), or its connection closed. */
void lead_answer_unknown(
    struct core *c, struct face_ctx *ctx, enum tokens_end how);

/* The node stopped leading: answers every parked fetch with "not leader"
 * and forgets the records kept for followers. */
void lead_demote(struct core *c);

#endif
