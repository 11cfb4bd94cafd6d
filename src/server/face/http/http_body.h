/* http_body - a request's body on the HTTP face, read by the face itself
 * once the request's headers have been judged, never before.
 *
 * nng's HTTP server read a whole Content-Length body (up to the
 * handler's limit) before any handler ran, knew nothing of
 * Transfer-Encoding (a chunked body was stored as an empty one and its
 * chunks parsed as the next request), and had no deadline. The face's
 * server (http_srv.h) reads no body: the gate (http_gate.c) judges the
 * head first (the Host, the framing, with --auth the bearer token, the
 * route's limit), answers and closes the connection when it is refused,
 * and only then has this file read the body from the connection:
 *
 *  - framing (RFC 9112 6): a Content-Length of digits; or
 *    `Transfer-Encoding: chunked` alone. Both at once is refused (400: a
 *    request a proxy and this server could frame differently), and so is
 *    any other transfer coding (501);
 *  - a body is never read past its end (a chunk's size line is read byte
 *    by byte, its data exactly), so a request pipelined after it is left
 *    to the server on the same keep-alive connection;
 *  - bounded: past `limit` bytes (a Content-Length, a chunk's size, or
 *    the chunks' sum) it is refused (413) and no more is read; chunk
 *    extensions and trailers are read and ignored, each bounded;
 *  - memory grows with what arrives (a step of HTTP_BODY_STEP at a time),
 *    not with what a header announces;
 *  - the whole body must arrive within `timeout_ms` of the end of the
 *    headers, else 408.
 * A refused or timed-out body leaves the connection unusable: the caller
 * answers with the status given and closes it. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_BODY_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

struct http_conn;

enum {
	HTTP_BODY_STEP = 1 << 20,   /* the most read (and grown) at once */
	HTTP_CHUNK_EXT_MAX = 1024,  /* a size line's extensions */
	HTTP_TRAILERS_MAX = 8192,   /* all trailer lines */
	HTTP_CHUNK_DIGITS_MAX = 16, /* hex digits of a chunk size */
};

/* How a request frames its body. */
struct http_framing {
	bool chunked;
	uint64_t length; /* Content-Length; 0 without one */
};

/* The framing of `req`: 0, or the HTTP status refusing it (400: both
 * headers, or a Content-Length that is not one number; 501: a transfer
 * coding other than chunked) with `*why` saying why. */
int http_body_framing(
    nng_http_req *req, struct http_framing *out, const char **why);

/* Whether the request comes with a body to read. */
static inline bool
http_body_pending(const struct http_framing *f)
{
	return f->chunked || f->length > 0;
}

/* ---- the chunked coding, byte by byte (pure) ----------------------- */

enum http_chunks_step {
	HTTP_CHUNKS_MORE = 0, /* feed the next byte */
	HTTP_CHUNKS_DATA = 1, /* `size` bytes of data follow, then its CRLF */
	HTTP_CHUNKS_DONE = 2, /* the last chunk and the trailers are in */
	HTTP_CHUNKS_BAD = -1, /* malformed; `why` says how */
};

struct http_chunks {
	int state;
	uint64_t size; /* the chunk's, once HTTP_CHUNKS_DATA */
	unsigned digits;
	size_t ext;     /* extension bytes of this size line */
	size_t trailer; /* trailer bytes so far */
	const char *why;
};

void http_chunks_init(struct http_chunks *c);

/* Feeds one byte of the coding (a size line, the CRLF after a chunk's
 * data, a trailer); after HTTP_CHUNKS_DATA the data itself is not fed,
 * its CRLF is. */
enum http_chunks_step http_chunks_byte(struct http_chunks *c, uint8_t b);

/* ---- reading ------------------------------------------------------- */

/* The end of a read: `status` 0 and the body (`data`, malloc'd, the
 * callee's to free; NULL when `len` is 0); or the HTTP status to answer
 * before closing (400 malformed chunks, 413 over the limit, 408 too
 * slow) with `why`; or -1: the connection failed (close it, no answer). */
typedef void (*http_body_fn)(
    void *arg, int status, const char *why, void *data, size_t len);

/* Reads the body framed by `f` (http_body_pending) from `conn`, at most
 * `limit` bytes, within `timeout_ms`; `fn` is called once, on an nng
 * thread (or at once when the read cannot start). */
void http_body_read(struct http_conn *conn, const struct http_framing *f,
    size_t limit, uint32_t timeout_ms, http_body_fn fn, void *arg);

#endif
