/* http_api - the task API of the HTTP face under /v1/ (every operation
 * of the wire protocol but replication control), JSON in the shapes of
 * `sluice ... --json`, described by GET /v1/openapi.json; the routes are
 * in docs/http-api.md. This is its entry and router, and the request as
 * its routes see it (struct http_api_call); a tube's routes are in
 * http_api_tube.c, a task's in http_api_task.c, the answers in
 * http_api_answer.c. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_API_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "proto/msg.h"
#include "server/face/http/http_api_answer.h"
#include "server/face/http/http_query.h"

enum {
	HTTP_API_SEGS_MAX = 6,
	HTTP_API_PATH_MAX = MSG_TAKE_TUBES_MAX * (MSG_TUBE_MAX + 1) + 64,
};

/* One request as the routes see it: its method, path segments
 * (percent-decoded), query (with the first bad parameter met), body. */
struct http_api_call {
	nng_aio *aio;
	const char *method;
	struct http_query q;
	size_t nseg;
	const char *seg[HTTP_API_SEGS_MAX];
	const void *body;
	size_t body_len;
	bool force; /* a lease op's override: an admin's */
	char path[HTTP_API_PATH_MAX];
};

/* The handler of every method under /v1 (http.c registers it). */
void http_api_serve(nng_aio *aio);

/* The largest body the route of `method` `uri` takes, before it is read:
 * 0 for GET; `payload_max` (--max-payload) for a put or an update; a
 * wire message's (MSG_SIZE_MAX) for a batch put; a little for the rest.
 * A body over it is refused (413) unread. Pure. */
size_t http_api_body_max(
    const char *method, const char *uri, size_t payload_max);

/* The methods (HTTP_M_*, http_face.h) the task API takes on the path of
 * `uri` (under /v1), before anything else of the request is read: 0 for
 * a path that is no route (404); every method for a path that does not
 * split (too long, a bad escape: its route answers 400). Pure. */
unsigned http_api_methods(const char *uri);

/* What the task API refuses of request `req` (method, URI, headers)
 * before its body is read: a write from a page of another origin, an
 * admin write without --http-admin (`admin`: the face's). 0, or
 * SLUICE_EPERM with `*why` (static) saying why (403). */
int http_api_precheck(nng_http_req *req, bool admin, const char **why);

/* The wire operation (MSG_OP_*) the route of `req` (a write) sends, and
 * into `tube` (cap >= MSG_TUBE_MAX + 1) the tube its path names for a
 * tube's route ("" for the others, a take's included): for the token's
 * check before the body (http_gate.c). 0 for a read, or no route. */
uint8_t http_api_op(nng_http_req *req, char *tube, size_t cap);

/* Posts the request's wire form `req` with its answer's context `a`
 * (which goes with it, or is freed). Refused here: a bad parameter noted
 * in c->q (400), an admin write without --http-admin (403). */
void http_api_send(
    struct http_api_call *c, const struct msg_req *req, struct http_api_ans *a);

/* http_api_send with a new context of `shape`. */
void http_api_send_shape(struct http_api_call *c, const struct msg_req *req,
    enum http_api_shape shape);

/* http_api_send answering {"<key>":COUNT}. */
void http_api_send_count(
    struct http_api_call *c, const struct msg_req *req, const char *key);

#endif
