/* http_api_tube - the task API's routes of a tube, /v1/tubes/T[/VERB]:
 * its settings (GET, PUT, DELETE), put (one task or a batch), take (of
 * one tube or several), list, delete by state or flush, kick, pause,
 * stats, hourly, errors, next; docs/http-api.md lists them. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_API_TUBE_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_API_TUBE_H

#include "server/face/http/http_api.h"

/* Serves /v1/tubes/T[/VERB], routed by http_api.c (a method the route
 * takes: c->seg[1] the tube, or tubes "a,b" for take). */
void http_api_tube_route(struct http_api_call *c);

/* The limits a PUT's query sets: rate=100/s, burst=20 (with its rate),
 * concurrency=10; `none` lifts one, as unset=rate,concurrency does. A bad
 * value is the query's error (http_query_bad). Shared by a tube's and a
 * fair group's settings. */
void http_api_limits(
    struct http_api_call *c, struct msg_flow *flow, uint8_t *lunset);

#endif
