/* http_api_task - the task API's routes of a task, /v1/tasks/ID[/VERB]:
 * peek (GET), delete (DELETE), the lease ops (ack, release, fail, touch,
 * bury), kick and update (POST); and the batches of acks and deletes
 * (POST /v1/tasks/ack, /v1/tasks/delete). docs/http-api.md lists them. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_API_TASK_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_API_TASK_H

#include <stdbool.h>

#include "server/face/http/http_api.h"

/* Serves /v1/tasks/ID[/VERB], routed by http_api.c (a method and verb
 * the route takes). */
void http_api_task_route(struct http_api_call *c);

/* Serves POST /v1/tasks/ack (`ack`) or /v1/tasks/delete: a JSON array of
 * {"id":N,"lease":L} or of ids. */
void http_api_task_batch(struct http_api_call *c, char verb);

#endif
