/* gate - the pause before a token that is not in the file is refused, on
 * every port that takes tokens: the client port's faces (ops/auth.c) and
 * the replication port (repl/lead.c). Core thread only.
 *
 * Each failed attempt is counted per address by the limit of
 * util/tokens.h (c->tokens_limit), which says whether the request is
 * answered after a pause, or its connection closed at once. A request
 * that waits is kept in a list the core's loop serves like its other
 * timers: the core never blocks, nor does anyone else wait for it. How a
 * request ends is the port's: it gives the function that ends it. */
#ifndef SLUICE_SERVER_CORE_GATE_H
#define SLUICE_SERVER_CORE_GATE_H

#include <stdint.h>

#include "util/tokens.h"

struct core;
struct face_ctx;

/* Ends the refused request on `ctx` `how` (util/tokens.h): answered (its
 * connection is alive), dropped (its connection left), or its connection
 * closed. Given by the port that took the request. */
typedef void gate_end_fn(
    struct core *c, struct face_ctx *ctx, enum tokens_end how);

/* A token that is not in the file, from `peer` on session `session`:
 * counted and logged (`what`: "a token", "a follower's token"), then
 * ended by `end` when the limit says (at once when it closes the
 * connection, else after the pause, by gate_serve). */
void gate_unknown(struct core *c, struct face_ctx *ctx, uint32_t session,
    const char *peer, const char *what, gate_end_fn *end);

/* Ends the waits due by `mono_ms` (INT64_MAX: all of them, at shutdown
 * while the sockets are up), each answered. */
void gate_serve(struct core *c, int64_t mono_ms);

/* Drops the waits of `session` of the port whose ending is `end` (its
 * connection left). */
void gate_drop(struct core *c, uint32_t session, gate_end_fn *end);

/* When the next wait is due (monotonic ms); INT64_MAX: none. */
int64_t gate_next(const struct core *c);

/* Frees every wait left, unanswered (after gate_serve(c, INT64_MAX)). */
void gate_clear(struct core *c);

#endif
