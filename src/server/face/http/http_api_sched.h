/* http_api_sched - the task API's routes of schedules: /v1/schedules
 * (GET: every schedule, without payloads) and /v1/schedules/NAME (GET
 * one with its payload, PUT to set it, DELETE), /v1/schedules/NAME/pause
 * and /resume (POST); docs/http-api.md lists their parameters. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_API_SCHED_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_API_SCHED_H

#include <stdbool.h>

#include "server/face/http/http_api.h"

/* Whether `c` (split) names a schedules route with its method. */
bool http_api_sched_match(const struct http_api_call *c);

/* Serves it (http_api_sched_match was true). */
void http_api_sched_route(struct http_api_call *c);

#endif
