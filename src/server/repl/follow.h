/* follow - a follower's side of replication: the link to the leader, the
 * records it streams (written at the same LSNs and applied with the same
 * apply as recovery), snapshot installation, cutting a divergent tail,
 * and the change of role (promote, follow).
 *
 * The link is an nng req0 socket dialing the leader's --repl-listen URL,
 * with one fetch and one ack in flight at most; nng's callbacks only
 * queue completions, signalled through follow_fd(), and every decision is
 * taken on the core thread. */
#ifndef SLUICE_SERVER_REPL_FOLLOW_H
#define SLUICE_SERVER_REPL_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>

struct core;
struct face_ctx;

/* Starts following the leader at `url`. Returns 0, -errno, or an nng
 * error as face_nng_open. */
int follow_start(struct core *c, const char *url);

/* Stops following (promotion, shutdown). */
void follow_stop(struct core *c);

/* Readable when a fetch or an ack completed; -1 when not following. */
int follow_fd(const struct core *c);

/* Handles completions, sends the next fetch and acks. Call every turn
 * (after the writer's completions were reaped). */
void follow_turn(struct core *c, int64_t mono_ms);

/* When follow_turn wants to run again at the latest (a retry, or the
 * next note that the leader cannot be reached), in
 * monotonic ms; INT64_MAX when only events matter. */
int64_t follow_next_deadline(const struct core *c);

/* The leader's client URL as the leader told it ("" until known). */
const char *follow_leader_url(const struct core *c);

/* Whether the leader answered recently. */
bool follow_connected(const struct core *c);

/* Records the leader has that this node has not applied, and how far
 * behind in ms. */
void follow_lag(const struct core *c, uint64_t *records, uint64_t *ms);

/* This follower, or a fenced leader, becomes a leader with a new epoch:
 * above every epoch it knows of, and at least `min_epoch`; session
 * leases are released as at a restart. Returns 0 with the epoch in
 * *epoch, SLUICE_ECORRUPT (it stopped on a record it could not apply),
 * or the log's error. */
int follow_lead(struct core *c, uint64_t min_epoch, uint64_t *epoch);

/* From now on follows the leader whose replication URL is `url`; a
 * leader steps down (its waiting replies fail). Returns 0 or an error as
 * follow_start (the node is then a follower with no leader). */
int follow_switch(struct core *c, const char *url);

/* The replication URL followed; "" when none. */
const char *follow_url(const struct core *c);

/* MSG_OP_PROMOTE: this follower becomes a leader with a new epoch. */
void follow_promote(struct core *c, struct face_ctx *ctx);

/* MSG_OP_FOLLOW: follow the leader at `url` from now on (a follower is
 * re-pointed; a leader steps down). */
void follow_repoint(
    struct core *c, struct face_ctx *ctx, const char *url, size_t len);

#endif
