/* ops - the operations layer: one handler per request of the wire
 * protocol (docs/protocol.md), the takes waiting for a task, and --auth on
 * the client port. What the loop (srv.c) calls; the handlers and what
 * they share are ops_int.h's. Core thread only. */
#ifndef SLUICE_SERVER_OPS_OPS_H
#define SLUICE_SERVER_OPS_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

struct core;
struct face_ctx;

/* dispatch.c: decodes and answers one request (the message stays the
 * caller's). */
void ops_handle(
    struct core *c, struct face_ctx *ctx, uint32_t session, nng_msg *msg);

/* wait.c: serves the waiting takes on the tubes marked since the last
 * turn, in arrival order, and answers those whose wait is over (and the
 * unknown tokens' answers that are due, core/gate.h). */
void ops_serve_waiters(struct core *c, int64_t mono_ms);

/* wait.c: the queue's queue_ready_fn (arg: the core): marks the tube for
 * the next ops_serve_waiters. O(1). */
void ops_tube_ready(void *arg, const char *name, size_t len);

/* wait.c: drops the waiting takes of a session that is gone (and its
 * unknown token's answer). */
void ops_drop_waiters(struct core *c, uint32_t session);

/* wait.c: answers every waiting take with nothing, and every unknown
 * token's wait (shutdown). */
void ops_end_waiters(struct core *c);

/* wait.c: the earliest waiter deadline (monotonic ms), or INT64_MAX. */
int64_t ops_next_deadline(const struct core *c);

/* sched.c: on a leader, fires every schedule slot that is due (run by
 * the loop's timers); and the unix ms of the earliest slot to come
 * (INT64_MAX: none, or not a leader), which bounds the loop's sleep. */
void ops_sched_run(struct core *c);
/* batches.c: a leader puts the callbacks ended batches owe; when poll must
 * wake for them (INT64_MAX: no need). */
void ops_batch_run(struct core *c);
int64_t ops_batch_next_wake(struct core *c);
/* The BATCH_FIRE records this node decided as leader since it started. */
uint64_t ops_batch_firings(void);
int64_t ops_sched_next_wake(struct core *c);

/* result.c: the queue's queue_final_fn (arg: the core): task `id`
 * ended; its waiters are answered in this turn's ops_serve_waiters. */
void ops_result_final(void *arg, uint64_t id);

/* result.c: answers every wait for a result with the task's state
 * (shutdown). */
void ops_result_end(struct core *c);

/* auth.c: --auth: loads the token file at start. Returns 0, or -1
 * (logged). */
int ops_auth_open(struct core *c);

/* auth.c: SIGHUP: reads the token file again; sessions whose token left
 * it lose it. A bad file keeps the tokens in force (logged). */
void ops_auth_reload(struct core *c);

/* auth.c: frees the token file, the unknown tokens' waits, the limit on
 * failed attempts and the quotas' counts. */
void ops_auth_close(struct core *c);

/* auth.c: whether a token of `role` (util/tokens.h) may send the wire op
 * `op` (MSG_OP_*). The tubes the request names are checked apart
 * (tokens_tube_ok). */
bool ops_auth_role_allows(int role, uint8_t op);

#endif
