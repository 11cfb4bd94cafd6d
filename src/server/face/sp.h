/* face_sp - the client face of sluiced for tcp:// URLs: the SP-over-TCP
 * framing nng's req0 sockets speak (src/proto/sp.h), served on the core
 * thread (face/conn.h). libsluice, nng's req0, and any other REQ socket
 * of the scalability protocols (pynng, mangos) are clients.
 *
 * Each connection is a session (disconnect releases its leases); each
 * message a request posted to the core like any face's (events_post_local);
 * each reply echoes its request's backtrace. Several requests of one
 * connection may be in flight; their replies leave as the core answers
 * them, in any order, each naming its request id. tls+tcp:// and
 * ipc:// are read on nng's threads with the same framing and bounds
 * (face/stream.c); the URLs neither serves are nng's socket's (face/nng.c). */
#ifndef SLUICE_SERVER_FACE_SP_H
#define SLUICE_SERVER_FACE_SP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conns;
struct events;

struct face_sp_config {
	struct events *events; /* where requests go */
	size_t max_msg;        /* a longer message closes its connection */
	/* --auth: before its session authenticated, a connection may send
	 * messages of at most FACE_SP_PREAUTH_MAX bytes, and it is not
	 * ready (conn.h: the handshake timeout, the not-ready cap) */
	bool auth_on;
	/* Asked on the core thread with `arg`: whether the session has
	 * authenticated; whether it holds leases (the idle timeout spares
	 * it). Both may be NULL: no, and no. */
	bool (*session_authed)(void *arg, uint32_t session);
	bool (*session_holds)(void *arg, uint32_t session);
	void *arg;
};

enum {
	/* The largest message a connection may send before it
	 * authenticated (an auth request is a few hundred bytes). */
	FACE_SP_PREAUTH_MAX = 4096,
	/* Requests of one connection in the core at once. */
	FACE_SP_INFLIGHT_MAX = 1024,
	/* Of those, not parked, whose reply may be large (face_sp_bulky). */
	FACE_SP_BULKY_MAX = 4,
};

/* Whether a request (after its backtrace) may be answered with payloads
 * or long lists (a take, a peek, stats, a list...): a connection has few
 * of those in the core at once, so a client that never reads cannot have
 * the core make more than a few large replies beyond its output mark.
 * face_stream obeys the same rule. */
bool face_sp_bulky(const uint8_t *req, size_t len);

/* Whether `url` is one this face serves (tcp://). */
bool face_sp_serves(const char *url);

/* Listens on `url` ("tcp://HOST:PORT"; HOST may be *, empty, a name, an
 * IPv4 or a bracketed IPv6 address) for SP clients. `cfg` must outlive
 * `cs`. Returns as conns_listen, or -EINVAL when `url` is not tcp://. */
int face_sp_listen(
    struct conns *cs, const struct face_sp_config *cfg, const char *url);

#endif
