/* http_api_group - the task API's routes of a tube's group limits:
 * /v1/tubes/T/group_limits (GET, PUT: every named group's),
 * /v1/tubes/T/groups/G (GET where it stands, PUT its own limits, DELETE
 * them) and /v1/tubes/T/groups/G/pause, /resume (POST); each is op group
 * (0x2a); docs/http-api.md lists them. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_API_GROUP_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_API_GROUP_H

#include <stdio.h>

#include "proto/msg.h"
#include "server/face/http/http_api.h"

/* The methods (HTTP_M_*) of a group path of `c` (split; seg[0] "tubes"),
 * 0 when it is none. */
unsigned http_api_group_methods(const struct http_api_call *c);

/* Serves a group path (one whose method http_api_group_methods takes). */
void http_api_group_route(struct http_api_call *c);

/* A group reply as JSON (the SH_GROUP answer). */
void http_api_group_json(FILE *f, const struct msg_group_rep *g);

#endif
