/* http_api - the task API of the HTTP face under /v1/ (every operation
 * of the wire protocol but replication control), JSON in the shapes of
 * `sluice ... --json`, described by GET /v1/openapi.json; the routes are
 * in docs/http-api.md. */
#ifndef SLUICE_SERVER_HTTP_API_H
#define SLUICE_SERVER_HTTP_API_H

#include <nng/nng.h>

/* The handler of every method under /v1 (http.c registers it). */
void http_api_serve(nng_aio *aio);

#endif
