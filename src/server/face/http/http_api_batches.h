/* http_api_batches - the task API's routes of batches with callbacks:
 * GET /v1/batches (batch_show's list: ?limit=1..1000, 100 by default;
 * the open batches first), GET /v1/batches/NAME (batch_show), PUT
 * /v1/batches/NAME (batch_set: query parameters on_success=TUBE,
 * on_success_payload=TEXT, on_complete=TUBE, on_complete_payload=TEXT,
 * close=1), POST /v1/batches/NAME/close and POST /v1/batches/NAME/cancel
 * (an admin write: closes it and cancels its live tasks); answered in the
 * JSON of `sluice batch show --json`. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_API_BATCHES_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_API_BATCHES_H

#include <stdbool.h>
#include <stdio.h>

#include "proto/msg.h"
#include "server/face/http/http_api.h"

enum { HTTP_API_BATCHES_DEFAULT = 100 }; /* GET /v1/batches' limit */

/* Whether `c` (split) names a batches route with its method. */
bool http_api_batches_match(const struct http_api_call *c);

/* The methods of a batches path (HTTP_M_* bits), 0 for none. */
unsigned http_api_batches_methods(const struct http_api_call *c);

/* Serves it (http_api_batches_match was true). */
void http_api_batches_route(struct http_api_call *c);

/* The JSON of a batch, as `sluice batch show --json` prints it. */
void http_api_batch_json(FILE *f, const struct msg_batch *b);

/* The JSON of GET /v1/batches: {"batches":[...],"total":N}. */
void http_api_batches_json(FILE *f, const struct msg_batch_rep *r);

#endif
