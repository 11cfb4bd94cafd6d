/* http_face - what http.c (the face's plumbing: the server, the query
 * string, responses, posting to the core) lends the handlers of the
 * other files of the HTTP face (http_api.c: the task API under /v1/).
 * nng threads only; nothing here touches the queue. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_FACE_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_FACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

struct http;
struct msg_rep;
struct msg_req;

/* Makes the core's answer `rep` to a request posted with http_post into
 * the HTTP response of `aio`, on an nng thread. `rep->status` may be an
 * error (the core's, or one met before the request reached it: an
 * encoding error, SLUICE_ESHUTDOWN while recovering or stopping, with
 * its message); `rep` is NULL when the core gave the request up. `arg`
 * is the poster's; it is freed (free()) after the call. */
typedef void (*http_answer_fn)(
    nng_aio *aio, const struct msg_rep *rep, void *arg);

/* The face of a handler's aio. */
struct http *http_of(nng_aio *aio);

/* The request's URI (path and query, as sent). */
const char *http_uri(nng_aio *aio);

/* Whether sluiced runs with --http-admin. */
bool http_admin(const struct http *h);

/* Answers `aio` with `status`, `ctype` and `len` bytes of `body`, and one
 * more header `hname: hval` unless hname is NULL. */
void http_respond(nng_aio *aio, uint16_t status, const char *ctype,
    const void *body, size_t len, const char *hname, const char *hval);

/* http_respond, and with `close` the connection is closed after the
 * answer (a request whose body was left unread). */
void http_respond_x(nng_aio *aio, uint16_t status, const char *ctype,
    const void *body, size_t len, const char *hname, const char *hval,
    bool close);

/* The decoded value of `name` in the query of `uri` into out
 * (NUL-ended): true when present and it fits (no NUL byte inside). */
bool http_query(const char *uri, const char *name, char *out, size_t cap);

/* Percent-decodes `len` bytes at `p` into out (NUL-ended); `plus`: a `+`
 * is a space (a query, not a path). False when it does not fit or holds
 * a NUL byte. */
bool http_unescape(const char *p, size_t len, bool plus, char *out, size_t cap);

/* Encodes `req`, posts it to the core, and has `fn` answer (with `arg`,
 * which becomes the face's: freed after fn). */
void http_post(struct http *h, nng_aio *aio, const struct msg_req *req,
    http_answer_fn fn, void *arg);

#endif
