/* http_respond - the HTTP face's answers: a status with its reason
 * phrase, a body and its type, handed to the server (http_srv.h) through
 * the request's aio; the face's plain-text and {"error":...} answers
 * (the task API has its own shapes, http_api_answer.h). */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_RESPOND_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_RESPOND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

/* Answers `aio` with `status`, `ctype` and `len` bytes of `body`, and one
 * more header `hname: hval` unless hname is NULL. */
void http_respond(nng_aio *aio, uint16_t status, const char *ctype,
    const void *body, size_t len, const char *hname, const char *hval);

/* http_respond, and with `close` the connection is closed after the
 * answer (a request whose body was left unread). */
void http_respond_x(nng_aio *aio, uint16_t status, const char *ctype,
    const void *body, size_t len, const char *hname, const char *hval,
    bool close);

/* `text` and a newline as text/plain (at most 511 bytes of it). */
void http_respond_text(nng_aio *aio, uint16_t status, const char *text);

/* A refusal of --auth, SLUICE_EAUTH (401, asking for a bearer token) or
 * else 403: no more than that is said (the log says who and why). */
void http_respond_refused(nng_aio *aio, int code);

/* {"error":TEXT,"code":N} (`len` bytes of text) with an HTTP status that
 * fits the code. */
void http_respond_err(nng_aio *aio, int code, const char *text, size_t len);

/* http_respond_err of a NUL-ended text. */
void http_respond_errc(nng_aio *aio, int code, const char *text);

#endif
