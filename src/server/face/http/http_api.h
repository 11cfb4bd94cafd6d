/* http_api - the task API of the HTTP face under /v1/ (every operation
 * of the wire protocol but replication control), JSON in the shapes of
 * `sluice ... --json`, described by GET /v1/openapi.json; the routes are
 * in docs/http-api.md. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_API_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

/* The handler of every method under /v1 (http.c registers it). */
void http_api_serve(nng_aio *aio);

/* The largest body the route of `method` `uri` takes, before it is read:
 * 0 for GET; `payload_max` (--max-payload) for a put or an update; a
 * wire message's (MSG_SIZE_MAX) for a batch put; a little for the rest.
 * A body over it is refused (413) unread. */
size_t http_api_body_max(
    const char *method, const char *uri, size_t payload_max);

/* Refuses the request before its route runs, with `status` and the API's
 * error object of `code` saying `msg`; with `close` the connection is
 * closed after the answer (its body is left unread). */
void http_api_refuse(
    nng_aio *aio, uint16_t status, int code, const char *msg, bool close);

#endif
