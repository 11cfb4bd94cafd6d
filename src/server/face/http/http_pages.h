/* http_pages - the HTTP face's own pages, outside the task API: /health,
 * /metrics, /stats, the dashboard (/) and what it reads and does
 * (/api/list, /api/errors, /api/kick, /api/delete, /v1/history); http.h
 * lists them with their parameters. Each is a route's handler (http.c
 * registers them), and http_pages_answer writes their answers. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_PAGES_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_PAGES_H

#include <nng/nng.h>

#include "server/face/http/http_face.h"

struct msg_rep;

/* The handlers, one a page. */
void http_pages_health(nng_aio *aio);
void http_pages_index(nng_aio *aio); /* the dashboard */
void http_pages_stats(nng_aio *aio);
void http_pages_metrics(nng_aio *aio);
void http_pages_list(nng_aio *aio);
void http_pages_errors(nng_aio *aio);
void http_pages_history(nng_aio *aio);
void http_pages_kick(nng_aio *aio);
void http_pages_delete(nng_aio *aio);

/* Answers `aio` with the core's answer `rep` (decoded, status 0 or an
 * error but a refusal of --auth) to a page's request of `kind` (not
 * HK_FN) on face `h`: the page, its JSON or Prometheus text, or the
 * error. */
void http_pages_answer(nng_aio *aio, struct http *h, enum http_kind kind,
    const struct msg_rep *rep);

#endif
