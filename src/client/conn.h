/* conn - one connection of a libsluice handle to one server, whatever
 * carries the bytes. The handle's rules (which URL, "not leader", what may
 * be sent again: client.c) sit on top of four calls: open, up,
 * exchange, close. Two transports implement them:
 *
 *   conn_tcp   tcp:// URLs: SP over TCP (proto/sp.h) spoken on the
 *              caller's thread with plain sockets and poll(), so a call
 *              costs a send, a poll and a receive, and no thread hand-off
 *   conn_nng   every other scheme (ipc://, inproc://, ws://, tls+tcp://):
 *              an nng REQ socket
 *
 * Both send one request at a time and wait for its reply; neither ever
 * sends a request again by itself (sluice.h, "Retries"). */
#ifndef SLUICE_CLIENT_CONN_H
#define SLUICE_CLIENT_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "util/buf.h"

struct conn_ops;
struct tlsfile;

/* Each transport's connection starts with this. */
struct conn {
	const struct conn_ops *ops;
};

struct conn_ops {
	/* Connects to `url`, all of it (resolving, connecting, the
	 * protocol's greeting) within `connect_ms`; a refused connection is
	 * tried again meanwhile for up to `refused_ms` (< 0: all of
	 * connect_ms; 0: not at all, as when the handle has other URLs to
	 * try), and then fails the URL saying it was refused. A TLS URL
	 * (tls+tcp://) is verified with `tls` (util/tlsfile.h; NULL: no CA was
	 * given, which such a URL needs). Returns 0 and `*out`; SLUICE_ECONN or
	 * SLUICE_ENOMEM with the reason, naming the URL, in `err`. */
	int (*open)(const char *url, int connect_ms, int refused_ms,
	    const struct tlsfile *tls, struct conn **out, char *err,
	    size_t errlen);

	/* Whether the connection still stands as far as is known now,
	 * without waiting: false once the server closed it. */
	bool (*up)(struct conn *k);

	/* Sends the request body `req` (`len` bytes) and waits for its
	 * reply, all within `tmo_ms` (< 0: no limit). `seq` numbers the
	 * request among the handle's; a transport that tags requests uses
	 * it. On 0 the reply's body is `reply->data[*off .. reply->len)`;
	 * `reply` is the caller's and is reused (reset) by the next
	 * exchange. Returns 0; SLUICE_ECONN (the connection went away: the
	 * request may or may not have run), SLUICE_ETIMEDOUT, SLUICE_ENOMEM,
	 * SLUICE_EPROTO (the server broke the framing; the reason in `err`).
	 * After an error the caller closes the connection. */
	int (*exchange)(struct conn *k, const void *req, size_t len,
	    uint32_t seq, int tmo_ms, struct buf *reply, size_t *off, char *err,
	    size_t errlen);

	/* Closes and frees `k`. */
	void (*close)(struct conn *k);
};

extern const struct conn_ops conn_tcp_ops; /* conn_tcp.c */
extern const struct conn_ops conn_nng_ops; /* conn_nng.c */

/* For tests: the socket and context under a conn_nng connection. */
void conn_nng_sock(struct conn *k, nng_socket *sock, nng_ctx *ctx);

#endif
