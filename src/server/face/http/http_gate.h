/* http_gate - where every request of the HTTP face enters, right after
 * its head is read: its route is found, its head judged (Host, framing,
 * with --auth its bearer token, its size against the route's limit), and
 * only then its body read and its route run. The order and what each
 * refusal answers are at the top of http_gate.c. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_GATE_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_GATE_H

#include <stdbool.h>

#include <nng/nng.h>

#include "server/face/http/http_face.h"

/* Registers `cb` for `method` on `path` (NULL: every method), and with
 * `tree` every path under it too; the task API's handler
 * (http_api_serve) makes it a v1 route. 0, or NNG_ENOMEM past
 * HTTP_ROUTES_MAX. */
int http_gate_route(struct http *h, const char *path, const char *method,
    void (*cb)(nng_aio *), bool tree);

/* What no route takes: 404 for a path no route serves; for a path served
 * with other methods, 405 with Allow (OPTIONS: 200 with Allow) (set as
 * h->none's handler). */
void http_gate_none(nng_aio *aio);

/* The methods (HTTP_M_*) the face takes on the path of `uri`: its pages'
 * and, under /v1/, the task API's (http_api_methods); 0 when none. */
unsigned http_gate_methods(const struct http *h, const char *uri);

/* An Allow header's value for `methods` ("GET, HEAD, POST, OPTIONS"),
 * into out (cap >= 48). */
void http_gate_allow(unsigned methods, char *out, size_t cap);

/* The names a Host may carry: the listener's own (host of `addr`), the
 * configured ones (conf->hosts); and whether loopback names or IP
 * literals go too. 0, NNG_EINVAL (a name that does not fit) or
 * NNG_ENOMEM. */
int http_gate_hosts(
    struct http *h, const char *addr, const struct http_conf *conf);

/* The server's handler (http_srv_open's, `arg` the face): the request's
 * route (HEAD as GET), through the gate. */
void http_gate_dispatch(nng_aio *aio, void *arg);

#endif
