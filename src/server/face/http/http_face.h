/* http_face - the HTTP face's state, shared by its files, and what
 * http.c (the face itself: its lifetime and the requests it posts to the
 * core) lends the others: the gate (http_gate.c), the face's own pages
 * (http_pages.c) and the task API (http_api*.c). nng threads only, but
 * where a function says otherwise; nothing here touches the queue.
 * Outside the face, http.h is the header. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_FACE_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_FACE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "proto/cmap.h"
#include "server/face/http/http.h"

struct msg_rep;
struct msg_req;

/* What a request posted to the core is, for the answer (http_pages.c
 * writes the face's own pages' answers). */
enum http_kind {
	HK_STATS,
	HK_LIST,
	HK_ERRORS,
	HK_KICK,
	HK_DELETE,
	HK_PAGE, /* the admin page: a stats request stands for its check */
	HK_HISTORY,
	HK_FN, /* another file's handler answers (http_answer_fn) */
};

/* A route: its handler, and whether the task API's (its answers,
 * refusals included, in the API's shapes). */
struct http_route {
	struct http *h;
	void (*cb)(nng_aio *);
	bool v1;
	const char *path, *method;
	bool tree; /* every path under `path` too */
};

enum { HTTP_ROUTES_MAX = 16 };

/* Methods, as bits: the routes of a path (an Allow header). */
enum {
	HTTP_M_GET = 0x01, /* and HEAD */
	HTTP_M_POST = 0x02,
	HTTP_M_PUT = 0x04,
	HTTP_M_DELETE = 0x08,
	HTTP_M_ALL = 0x0f,
};

struct http {
	struct http_srv *srv;
	pthread_mutex_t mu;    /* net, closing */
	struct events *events; /* NULL until the core serves */
	bool closing;
	bool admin;
	bool auth;          /* --auth: the token is known before a body */
	size_t payload_max; /* --max-payload */
	uint32_t body_timeout_ms;
	struct http_route routes[HTTP_ROUTES_MAX];
	size_t nroutes;
	struct http_route none; /* what no route takes */
	/* the Host names served (lower case, no port): the listener's,
	 * and --http-host's */
	char *hosts[HTTP_HOSTS_MAX + 1];
	size_t nhosts;
	bool loopback; /* the listener is: localhost names too */
	bool wildcard; /* every address: any IP literal too */
	uint32_t session;
	char *page; /* the admin page, built once */
	size_t page_len;
	atomic_int phase;
	atomic_bool log_failed, follower, leader_lost, fenced, no_lease;
	atomic_bool log_full;
	atomic_uint inflight;
	struct http_req *done; /* answered; freed on the core thread (mu) */
	/* the cluster map's clusters as the core last took them (mu): the
	 * HTTP URLs a moved answer names */
	struct cmap owners;
};

/* Makes the core's answer `rep` to a request posted with http_post into
 * the HTTP response of `aio`, on an nng thread. `rep->status` may be an
 * error (the core's, or one met before the request reached it: an
 * encoding error, SLUICE_ESHUTDOWN while recovering or stopping, with
 * its message); `rep` is NULL when the core gave the request up. `arg`
 * is the poster's; it is freed (free()) after the call. */
typedef void (*http_answer_fn)(
    nng_aio *aio, const struct msg_rep *rep, void *arg);

/* The route of a handler's aio (the gate sets it), and its face. */
const struct http_route *http_route_of(nng_aio *aio);
struct http *http_of(nng_aio *aio);

/* The request's URI (path and query, as sent). */
const char *http_uri(nng_aio *aio);

/* The HTTP URLs of cluster `name`'s nodes ("URL,URL,...", its leader's
 * first) into `out` (cap bytes), as they publish them in etcd
 * (--advertise-http); false when none is known. Any thread. */
bool http_owner_urls(struct http *h, const char *name, char *out, size_t cap);

/* Encodes `req`, posts it to the core, and has `fn` answer (with `arg`,
 * which becomes the face's: freed after fn). On failure `fn` answers at
 * once, with the error. */
void http_post(struct http *h, nng_aio *aio, const struct msg_req *req,
    http_answer_fn fn, void *arg);

/* Posts `req` for one of the face's own pages, whose answer is written
 * as `kind` says (http_pages_answer); on failure the request is answered
 * at once. */
void http_post_page(struct http *h, nng_aio *aio, enum http_kind kind,
    const struct msg_req *req);

#endif
