/* face_nng - the face of sluiced for the URLs no other face reads
 * (abstract://, wss://, ...): an nng rep0 socket served through a pool
 * of contexts that grows with the number of requests in progress, so
 * hundreds of clients (blocked takes included) are served at once.
 * tcp:// is face_sp's, tls+tcp://, ipc:// and ws:// face_stream's; this
 * face is what the client port and the replication port fall back to.
 *
 * nng's threads only receive, send and post events (face/events.h):
 * each request goes to the core with a context of this face, answered
 * through face/face.h like any face's. A session is an nng pipe (its id,
 * below 2^31): EVENT_SESSION_OPEN arrives before any request from that
 * pipe, EVENT_SESSION_CLOSE after its last one.
 *
 * Every function but face_nng_open accepts NULL (no socket: nothing to
 * do, nothing counted). */
#ifndef SLUICE_SERVER_FACE_NNG_H
#define SLUICE_SERVER_FACE_NNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

struct face_nng;
struct events;
struct tlsfile;

/* Listens on `url` ("tcp://127.0.0.1:7711", "ipc:///path", ...) and
 * posts to `events`, which must outlive the face's stop. Messages longer
 * than `max_msg` are refused by the transport (the connection is
 * closed); enforce the protocol's own limit below that. A TLS URL
 * (tls+tcp://) is served with `tls`'s certificate (util/tlsfile.h; NULL
 * only for other URLs). Returns 0, -errno, or an nng error as
 * -(FACE_NNG_ERR_BASE + code) (face_strerror names both). */
int face_nng_open(struct face_nng **out, struct events *events, const char *url,
    size_t max_msg, const struct tlsfile *tls);

/* At most `max` pipes (connections) at once (0: no limit): one more is
 * closed as it arrives, and counted (face_nng_pipes_refused). Call right
 * after face_nng_open. */
void face_nng_set_max_pipes(struct face_nng *f, unsigned max);
uint64_t face_nng_pipes_refused(const struct face_nng *f);

/* The unread replies' bounds of the pipes (docs/security.md): nng
 * cannot stop reading one pipe, so a pipe whose replies not yet sent
 * reach `bytes` (two replies or more) or `replies` and stay so, no reply
 * sent, for `stall_ms` is closed by face_nng_check_stalled (call it once
 * a second from the core thread); one OUT_HARD times over is closed at
 * once. `replies` 0: no bound. Call right after face_nng_open. */
void face_nng_set_out_limits(
    struct face_nng *f, size_t bytes, unsigned replies, uint32_t stall_ms);
void face_nng_check_stalled(struct face_nng *f, int64_t now);
uint64_t face_nng_pipes_stalled(const struct face_nng *f);

/* Closes the nng pipe of `session` (its EVENT_SESSION_CLOSE follows).
 * True when it was open; false when it is not one of this face's or is
 * closed already. Any thread. */
bool face_nng_close_pipe(struct face_nng *f, uint32_t session);

/* Waits up to `timeout_ms` until every answer given to the face has
 * been handed to the transport (shutdown). */
void face_nng_quiesce(struct face_nng *f, int timeout_ms);

/* Contexts in the pool, and how many are waiting for a request. */
void face_nng_counts(const struct face_nng *f, size_t *total, size_t *idle);

/* An nng address as text ("127.0.0.1:5000", "[::1]:5000", "ipc:/path")
 * into out; "" for another family. */
void face_nng_addr(const nng_sockaddr *sa, char *out, size_t len);

/* The remote address of an nng pipe ("127.0.0.1:5000", "[::1]:5000",
 * "ipc:/path") into out; "" when it cannot be told. */
void face_nng_pipe_peer(nng_pipe p, char *out, size_t len);

/* Stops listening and aborts everything in flight: no callback of nng
 * runs for this face afterwards, and nothing more is posted. Waits at
 * most 3 s for nng to close the socket; after that it returns with the
 * socket left to the process's exit. Then free the event queue (the
 * face's requests in it are discarded), then the face. */
void face_nng_stop(struct face_nng *f);
void face_nng_free(struct face_nng *f);

#endif
