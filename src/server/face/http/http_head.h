/* http_head - one HTTP/1.1 request head (its request line and header
 * lines) parsed into an nng_http_req, or refused with the status that
 * says why (RFC 9112 2-5):
 *  - the request line is METHOD SP /PATH SP HTTP/1.1 (or HTTP/1.0): a
 *    method of token characters (at most HTTP_HEAD_METHOD_MAX), an
 *    origin-form target of at most HTTP_HEAD_URI_MAX bytes without
 *    controls or blanks; another HTTP version is 505, anything else 400;
 *  - a header line is NAME ":" OWS VALUE OWS: a name of token characters
 *    (a blank before the colon, a line folded, a control byte in a value
 *    are 400), at most HTTP_HEAD_LINES_MAX lines (431);
 *  - an HTTP/1.1 request has exactly one Host (400 without, or with two);
 *  - a NUL byte anywhere is 400.
 * Pure (no I/O, no globals); the server calls it once a head is whole
 * (http_srv.c), and it is fuzzed (tests/fuzz/fuzz_http_head.c). */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_HEAD_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

enum {
	HTTP_HEAD_METHOD_MAX = 32,
	HTTP_HEAD_URI_MAX = 8192,
	HTTP_HEAD_LINES_MAX = 100, /* header lines */
};

struct http_head {
	nng_http_req *req; /* the caller's to free */
	bool close;        /* HTTP/1.0, or Connection: close */
	bool head_only;    /* HEAD: the response's body is left out */
};

/* Parses the head at `p`: `len` bytes of lines each ended by CRLF (the
 * blank line that ends a head left out), followed by one more writable
 * byte. `p` is changed (NULs written into it). Returns 0 with `out`
 * filled; or the HTTP status refusing the head (400, 431, 505; 500
 * without memory) with its reason phrase and a text for the body. */
int http_head_parse(char *p, size_t len, struct http_head *out,
    const char **reason, const char **text);

#endif
