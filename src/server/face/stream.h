/* face_stream - the client face of sluiced for tls+tcp://, ipc:// and
 * ws:// URLs, and the replication port's (repl/lead.c): the framing nng's REQ
 * sockets speak over those transports (SP over TLS is SP over TCP inside
 * TLS; ipc:// puts a message-type byte, 1, before each length; over
 * WebSocket each SP message is one WebSocket message, without a length),
 * read and written through
 * nng's byte streams on nng's threads, with the bounds of every connection of
 * the tcp:// face (face/conn.h, docs/security.md): per connection an input
 * cap that grows only once its session authenticated, the handshake (the TLS
 * handshake included), frame and idle timeouts, the caps on connections and on
 * unauthenticated ones, and the output marks, past which its requests are not
 * read and after --stall-timeout it is closed. Requests go to the core like
 * every face's (events_post). */
#ifndef SLUICE_SERVER_FACE_STREAM_H
#define SLUICE_SERVER_FACE_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "server/face/conn.h"
#include "server/face/sp.h"

struct face_stream;
struct tlsfile;

/* Whether `url` is one this face serves (tcp://, tcp4://, tcp6://,
 * tls+tcp://, tls+tcp4://, tls+tcp6://, ipc://, ws://, ws4://, ws6://). The
 * client port's tcp:// is face_sp's, on the core thread (the server asks it
 * first); the replication port's is this face's. */
bool face_stream_serves(const char *url);

/* Listens on `url`; a TLS URL with `tls`'s certificate. `cfg` (its net
 * set) must outlive the face. Returns 0, -errno, or an nng error as
 * -(FACE_NNG_ERR_BASE + code) (face_strerror names both). */
int face_stream_open(struct face_stream **out, const char *url,
    const struct tlsfile *tls, const struct face_sp_config *cfg,
    const struct conns_limits *lim);

/* The timeouts: call every turn of the core's loop, on the core thread
 * (it asks cfg's session_holds); connections whose last reference went
 * are freed here. */
void face_stream_tick(struct face_stream *fs, int64_t now_ms);

/* Adds this face's counters to `st` (open, refused, closed...). */
void face_stream_stats(const struct face_stream *fs, struct conns_stats *st);

/* Waits up to `timeout_ms` until every reply queued has been sent
 * (shutdown). */
void face_stream_quiesce(struct face_stream *fs, int timeout_ms);

/* Stops listening and closes every connection; no callback of nng runs
 * for this face afterwards. Requests the core still holds stay valid
 * until face_stream_free (call that after the event queue is freed,
 * events_free). Accepts NULL. */
void face_stream_stop(struct face_stream *fs);
void face_stream_free(struct face_stream *fs);

#endif
