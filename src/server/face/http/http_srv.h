/* http_srv - the HTTP/1.1 server under the HTTP face (http.h): it accepts
 * connections from an nng stream listener (tcp:// or tls+tcp://, the
 * node's certificate), reads each request's head (request line and
 * headers), calls one handler right after it, and writes the handler's
 * response; then the next request of the same connection (keep-alive;
 * what a client pipelined stays buffered for it). The handler reads the
 * body itself, if it wants it (http_conn_read, http_body.c), so nothing
 * of a body is read before the handler has judged the head.
 *
 * Written for the bounds nng's own HTTP server does not have (it has no
 * deadline before or between requests, no connection limit, and reads a
 * whole body before any handler runs):
 *  - at most `max_conns` connections: one past it is accepted and closed
 *    at once (counted), so a flood of idle connections costs no more
 *    than the cap;
 *  - a head is at most HTTP_SRV_HEAD_MAX bytes (431 past it) and
 *    HTTP_HEAD_LINES_MAX headers (http_head.h), and must arrive within
 *    `header_timeout_ms` of its first byte: a client that sends a byte a
 *    second (slowloris) is closed then;
 *  - a connection without a request in progress (just accepted, or
 *    between two requests) is closed after `idle_timeout_ms`, and so is
 *    one whose client reads nothing of its answer for as long (a client
 *    that never reads holds one answer, not a queue of them: the next
 *    request is read only once the answer is written);
 *  - a connection whose accept fails for want of descriptors (EMFILE)
 *    pauses accepting for a moment instead of retrying at once.
 * While a handler runs there is no deadline here: a body has its own
 * (http_body.h), a take that waits its own bound.
 *
 * Threads: everything runs on nng's threads (the aio callbacks). A
 * connection is freed once it is closed and no operation of it is
 * outstanding (the handler's included). */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_SRV_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>
#include <nng/supplemental/tls/tls.h>

enum {
	HTTP_SRV_HEAD_MAX = 16384,      /* request line and headers, bytes */
	HTTP_SRV_ACCEPT_PAUSE_MS = 100, /* after an accept failed */
};

struct http_srv;
struct http_conn;

struct http_srv_conf {
	uint32_t header_timeout_ms; /* a head, from its first byte */
	uint32_t idle_timeout_ms;   /* no request in progress */
	uint32_t max_conns;         /* open connections at once */
};

/* What a server has seen, for /metrics. */
struct http_srv_stats {
	uint64_t open;          /* connections open now */
	uint64_t accepted;      /* since start */
	uint64_t over_cap;      /* closed at accept: past max_conns */
	uint64_t head_timeouts; /* closed: a head too slow */
	uint64_t idle_timeouts; /* closed: idle */
	uint64_t bad_heads;     /* answered 400/431/505 and closed */
	uint64_t accept_errors; /* accept failures (descriptors, memory) */
};

/* A response, which the server writes (and frees) after the handler
 * finishes its aio with it as output 0. */
struct http_res {
	uint16_t status;
	const char *reason;
	char *head; /* its header lines ("Name: value\r\n" each) */
	size_t head_len;
	void *body;
	size_t len;
	bool close; /* the connection is closed once it is written */
};

/* A response with `status` and its `reason`, Content-Type `ctype`,
 * Cache-Control: no-store, one more header `hname: hval` unless hname is
 * NULL, and `len` bytes of `body` (copied). NULL without memory. */
struct http_res *http_res_new(uint16_t status, const char *reason,
    const char *ctype, const void *body, size_t len, const char *hname,
    const char *hval, bool close);

void http_res_free(struct http_res *r);

/* The handler: called on an nng thread right after a request's head,
 * with `aio` (begun) whose input 0 is the request (nng_http_req *: its
 * method, URI, version and headers; no body) and input 2 its connection
 * (struct http_conn *); input 1 is the handler's own. The handler
 * finishes the aio (nng_aio_finish) with a struct http_res * as output
 * 0 and result 0; with an error, the connection is closed unanswered. */
typedef void (*http_srv_fn)(nng_aio *aio, void *arg);

/* Listens on `url` (tcp://HOST:PORT, tls+tcp://HOST:PORT with `tls`) and
 * serves. Returns 0 or an nng error. */
int http_srv_open(struct http_srv **out, const char *url, nng_tls_config *tls,
    const struct http_srv_conf *conf, http_srv_fn fn, void *arg);

/* Stops accepting, closes every connection, waits (bounded) for them to
 * end and frees the server. Not from one of its handlers. */
void http_srv_close(struct http_srv *s);

void http_srv_stats(struct http_srv *s, struct http_srv_stats *out);

/* ---- a connection, for its handler -------------------------------------- */

/* The end of a read: rv 0 and `n` bytes (at least 1), or an nng error
 * (NNG_ETIMEDOUT, NNG_ECLOSED...: the connection is then unusable). */
typedef void (*http_conn_fn)(void *arg, int rv, size_t n);

/* Copies up to `n` bytes the connection holds already (read with the
 * head) into buf: their count, 0 when it holds none. */
size_t http_conn_take(struct http_conn *c, void *buf, size_t n);

/* Reads up to `n` bytes (at least one) into buf, within `timeout`
 * (NNG_DURATION_INFINITE: none); `fn` is called on an nng thread (at
 * once when the connection is closed). One read at a time. */
void http_conn_read(struct http_conn *c, void *buf, size_t n,
    nng_duration timeout, http_conn_fn fn, void *arg);

/* Writes "100 Continue" (the request's Expect: 100-continue): its body
 * is wanted. Before the response, which may follow at once. */
void http_conn_continue(struct http_conn *c);

/* The client's address, "ADDR:PORT" ("[ADDR]:PORT" for IPv6), or
 * "http" when the stream does not tell. */
const char *http_conn_peer(const struct http_conn *c);

/* The response of the request in progress closes the connection. */
void http_conn_close_after(struct http_conn *c);

/* Closes the connection now (a read in progress ends with an error). */
void http_conn_close(struct http_conn *c);

#endif
