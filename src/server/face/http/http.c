/* http - the HTTP face (http.h): its state, its lifetime, and the
 * requests it posts to the core. The other files of the face are what a
 * request meets on its way: the server (http_srv.c) reads its head, the
 * gate (http_gate.c) finds its route, judges it and reads its body, a
 * handler (http_pages.c, the face's own pages; http_api.c, the task API)
 * parses its query (http_query.c) and body and posts a wire request
 * here; the answer is written back through http_respond.c.
 *
 * One request's life (struct http_req):
 *   1. the server calls the gate on one of nng's threads with the
 *      request's aio once its head is in; the route is found, the gate
 *      judges the head and reads the body, and the route's handler
 *      encodes a wire request and posts it to the core (http_post, under
 *      h->mu, so nothing is posted once quiesced);
 *   2. the core answers through this face's reply/drop, on its thread:
 *      they only park the answer and schedule `work` (schedule_work), so
 *      the core spends nothing on formatting;
 *   3. work_cb, on an nng thread, decodes the answer, has it formatted
 *      (http_pages_answer, or the poster's http_answer_fn), finishes the
 *      request's aio with it (the server writes it), and frees the
 *      request (its work aio through nng_aio_reap, as it is running).
 * A take that waits for a task watches its connection meanwhile (struct
 * http_wait): one whose client left is dropped by the core and takes
 * nothing, as SPEC's undeliverable take wants.
 *
 * Every posted request is answered by the core, which answers each one
 * (the shutdown drain included); h->inflight counts those in progress so
 * http_close can wait for them before the server is released. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "proto/msg.h"
#include "server/face/http/http.h"
#include "server/face/http/http_api.h"
#include "server/face/http/http_face.h"
#include "server/face/http/http_gate.h"
#include "server/face/http/http_page.h"
#include "server/face/http/http_pages.h"
#include "server/face/http/http_respond.h"
#include "server/face/http/http_srv.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/tlsfile.h"
#include "util/tokens.h"

enum {
	CLOSE_WAIT_MS = 3000,
};

struct http_req {
	struct face_ctx ctx; /* the core answers here */
	struct event ev;
	struct http *h;
	nng_aio *aio;  /* the HTTP handler's */
	nng_aio *work; /* formats the answer off the core thread */
	nng_msg *rep;  /* the core's answer; NULL when it dropped it */
	enum http_kind kind;
	http_answer_fn fn; /* HK_FN: answers, with fn_arg (freed after) */
	void *fn_arg;
	char peer[64]; /* the client's address (http_srv.h) */
	bool bearer;   /* Authorization: Bearer came; its SHA-256: */
	uint8_t hash[TOKENS_HASH_LEN];
	char what[MSG_TUBE_MAX + 64]; /* an admin write, for the log */
	struct http_wait *wait;       /* a take that waits: its connection */
	atomic_int parts;      /* work_cb's, and the wait's: the last ends r */
	struct http_req *next; /* on h->done */
};

/* A take that waits (http_face_waiting) watches its connection: the server
 * reads nothing while a handler runs and so would never see its client
 * leave; a one-byte read does. The answer then goes out with
 * "Connection: close" (the read may have taken a byte of whatever the
 * client sent next); a take answered at once keeps its connection. */
struct http_wait {
	uint8_t byte;
	atomic_bool gone;  /* the read ended: the client left */
	atomic_bool ended; /* the answer is on its way */
};

/* ---- health --------------------------------------------------------- */

int
http_health_status(const struct http_health *h, const char **reason)
{
	if (h->phase == HTTP_RECOVERING) {
		*reason = "recovering: replaying the log, not serving yet";
		return 503;
	}
	if (h->phase == HTTP_STOPPING) {
		*reason = "stopping";
		return 503;
	}
	if (h->log_failed) {
		*reason = "log refuses writes: a write or fsync failed; "
		          "restart sluiced";
		return 503;
	}
	if (h->follower && h->leader_lost) {
		*reason = "follower lost its leader: not connected to it";
		return 503;
	}
	if (h->no_lease) {
		*reason = "no leader lease: this node refuses writes until "
		          "the election decides";
		return 503;
	}
	if (h->fenced) {
		*reason = "fenced: a newer leader exists; this node refuses "
		          "writes";
		return 503;
	}
	if (h->log_full) {
		*reason = "log full: puts refused";
		return 503;
	}
	*reason = "ok";
	return 200;
}

/* ---- requests to the core ------------------------------------------- */

static void work_cb(void *arg);

/* Runs work_cb on one of nng's task threads: the aio is begun and
 * finished at once, so its callback is dispatched there. (Not a zero
 * sleep: nng's timer thread would handle every answer, at a cost that
 * shows under load.) */
static void
schedule_work(struct http_req *r)
{
	if (nng_aio_begin(r->work))
		nng_aio_finish(r->work, 0);
}

static void
http_face_reply(struct face_ctx *ctx, nng_msg *msg)
{
	struct http_req *r = (struct http_req *)ctx;

	r->rep = msg;
	schedule_work(r);
}

static void
http_face_drop(struct face_ctx *ctx)
{
	struct http_req *r = (struct http_req *)ctx;

	r->rep = NULL;
	schedule_work(r);
}

/* Ends r once the answer and, for a take that waited, its connection
 * are done: r is freed on the core thread, between its events, so it
 * outlives whatever the core still does with a request it answered. */
static void
req_done(struct http_req *r)
{
	struct http *h = r->h;

	if (atomic_fetch_sub(&r->parts, 1) != 1)
		return;
	pthread_mutex_lock(&h->mu);
	r->next = h->done;
	h->done = r;
	pthread_mutex_unlock(&h->mu);
	atomic_fetch_sub(&h->inflight, 1);
}

/* The watch's read ended: the client left (or sent more, which a client
 * may not after a POST it waits for: it is treated as gone as well), or
 * the connection closed after the answer. The core drops a take whose
 * client left on its next turn (ops_serve_waiters). */
static void
wait_watch_cb(void *arg, int rv, size_t n)
{
	struct http_req *r = arg;
	struct http *h = r->h;

	(void)rv;
	(void)n;
	if (!atomic_load(&r->wait->ended)) {
		atomic_store(&r->wait->gone, true);
		pthread_mutex_lock(&h->mu);
		if (h->events != NULL && !h->closing)
			(void)events_wake(h->events);
		pthread_mutex_unlock(&h->mu);
	}
	req_done(r); /* the wait's part */
}

/* On the core thread: the take waits for a task. Without the memory to
 * watch its connection it waits as before, unwatched. */
static void
http_face_waiting(struct face_ctx *ctx)
{
	struct http_req *r = (struct http_req *)ctx;
	struct http_conn *conn = nng_aio_get_input(r->aio, 2);
	struct http_wait *w;

	if (r->wait != NULL || conn == NULL ||
	    (w = calloc(1, sizeof(*w))) == NULL)
		return;
	atomic_init(&w->gone, false);
	atomic_init(&w->ended, false);
	atomic_fetch_add(&r->parts, 1);
	r->wait = w;
	http_conn_close_after(conn);
	http_conn_read(
	    conn, &w->byte, 1, NNG_DURATION_INFINITE, wait_watch_cb, r);
}

static bool
http_face_alive(const struct face_ctx *ctx)
{
	const struct http_req *r = (const struct http_req *)ctx;

	return r->wait == NULL || !atomic_load(&r->wait->gone);
}

static const struct face http_face = { .reply = http_face_reply,
	.drop = http_face_drop,
	.alive = http_face_alive,
	.waiting = http_face_waiting };

/* The SHA-256 of the request's `Authorization: Bearer TOKEN` into r;
 * r->bearer false without one (or with another scheme). Hashed here, on
 * nng's thread: the core only looks the hash up. */
static void
bearer_of(struct http_req *r, nng_aio *aio)
{
	const char *v =
	    nng_http_req_get_header(nng_aio_get_input(aio, 0), "Authorization");
	size_t len;

	r->bearer = false;
	if (v == NULL || strncasecmp(v, "Bearer ", 7) != 0)
		return;
	for (v += 7; *v == ' '; v++)
		;
	len = strcspn(v, " \t");
	if (len == 0 || len > TOKENS_TOKEN_MAX)
		return;
	tokens_sha256(v, len, r->hash);
	r->bearer = true;
}

const char *
http_peer(const struct face_ctx *ctx)
{
	return ((const struct http_req *)ctx)->peer;
}

bool
http_bearer(
    const struct face_ctx *ctx, uint8_t hash[TOKENS_HASH_LEN], bool *admin_only)
{
	const struct http_req *r = (const struct http_req *)ctx;

	*admin_only = r->kind == HK_PAGE;
	if (r->bearer)
		memcpy(hash, r->hash, TOKENS_HASH_LEN);
	return r->bearer;
}

/* A request that does not reach the core, refused with `code` and
 * `text`: by `fn` (which then frees `arg`) in its shapes, else as
 * {"error":TEXT,"code":N} (`status` 0: the code's) or, with a status,
 * as that text. */
static void
refuse_early(nng_aio *aio, http_answer_fn fn, void *arg, int code,
    uint16_t status, const char *text)
{
	if (fn != NULL) {
		struct msg_rep rep = { .status = (uint16_t)code,
			.err = { .message = msg_cstr(text) } };

		fn(aio, &rep, arg);
		free(arg);
	} else if (status != 0) {
		http_respond_text(aio, status, text);
	} else {
		http_respond_errc(aio, code, text);
	}
}

/* Encodes `req` and posts it to the core; the answer comes to work_cb
 * (and to `fn` for HK_FN). On failure the HTTP request is answered
 * here. */
static void
post_req(struct http *h, nng_aio *aio, enum http_kind kind,
    const struct msg_req *req, http_answer_fn fn, void *arg)
{
	struct http_req *r = calloc(1, sizeof(*r));
	struct buf b;
	nng_msg *m = NULL;
	int rc;

	buf_init(&b);
	rc = msg_encode_req(&b, req);
	if (rc != 0) {
		free(r);
		buf_fini(&b);
		refuse_early(aio, fn, arg, rc > 0 ? rc : SLUICE_ENOMEM, 0,
		    sluice_strerror(rc));
		return;
	}
	if (r == NULL || nng_msg_alloc(&m, 0) != 0 ||
	    nng_msg_append(m, b.data, b.len) != 0 ||
	    nng_aio_alloc(&r->work, work_cb, r) != 0) {
		if (m != NULL)
			nng_msg_free(m);
		free(r);
		buf_fini(&b);
		refuse_early(aio, fn, arg, SLUICE_ENOMEM, 500, "out of memory");
		return;
	}
	buf_fini(&b);
	if (req->op == MSG_OP_KICK_ID || req->op == MSG_OP_DELETE)
		snprintf(r->what, sizeof(r->what), "%s id=%" PRIu64,
		    req->op == MSG_OP_DELETE ? "delete" : "kick", req->id);
	else if (req->op == MSG_OP_UPDATE)
		snprintf(r->what, sizeof(r->what), "update id=%" PRIu64,
		    req->update.id);
	else if (req->op == MSG_OP_PAUSE)
		snprintf(r->what, sizeof(r->what),
		    "pause tube=%.*s ms=%" PRIu64, (int)req->pause.tube.len,
		    req->pause.tube.p, req->pause.duration);
	else if (req->op == MSG_OP_KICK)
		snprintf(r->what, sizeof(r->what), "kick tube=%.*s n=%u",
		    (int)req->kick.tube.len, req->kick.tube.p, req->kick.n);
	r->ctx.face = &http_face;
	r->h = h;
	r->aio = aio;
	r->kind = kind;
	r->fn = fn;
	r->fn_arg = arg;
	atomic_init(&r->parts, 1);
	bearer_of(r, aio);
	snprintf(r->peer, sizeof(r->peer), "%s",
	    nng_aio_get_input(aio, 2) != NULL
	        ? http_conn_peer(nng_aio_get_input(aio, 2))
	        : "http");
	r->ev.kind = EVENT_REQUEST;
	r->ev.session = h->session;
	r->ev.ctx = &r->ctx;
	r->ev.msg = m;
	pthread_mutex_lock(&h->mu);
	if (h->events == NULL || h->closing) {
		pthread_mutex_unlock(&h->mu);
		nng_msg_free(m);
		nng_aio_free(r->work);
		free(r);
		refuse_early(aio, fn, arg, SLUICE_ESHUTDOWN, 503,
		    atomic_load(&h->phase) == HTTP_RECOVERING
		        ? "recovering: not serving yet"
		        : "stopping");
		return;
	}
	atomic_fetch_add(&h->inflight, 1);
	events_post(h->events, &r->ev);
	pthread_mutex_unlock(&h->mu);
}

void
http_post_page(struct http *h, nng_aio *aio, enum http_kind kind,
    const struct msg_req *req)
{
	post_req(h, aio, kind, req, NULL, NULL);
}

void
http_post(struct http *h, nng_aio *aio, const struct msg_req *req,
    http_answer_fn fn, void *arg)
{
	post_req(h, aio, HK_FN, req, fn, arg);
}

/* The answer as the HTTP response. */
static void
answer(struct http_req *r)
{
	struct msg_limits lim;
	struct msg_rep rep;
	int rc;

	if (r->rep == NULL) {
		if (r->kind == HK_FN)
			r->fn(r->aio, NULL, r->fn_arg);
		else
			http_respond_text(
			    r->aio, 503, "the server gave up the request");
		return;
	}
	lim.msg_max = MSG_SIZE_MAX;
	lim.payload_max = r->h->payload_max; /* the server's, not 1 MiB */
	rc = msg_decode_rep(
	    nng_msg_body(r->rep), nng_msg_len(r->rep), &lim, &rep);
	if (rc != 0) {
		http_respond_text(
		    r->aio, 500, "undecodable answer from the core");
		return;
	}
	if (r->what[0] != '\0' && rep.status != 0)
		log_info("http", "admin %s result=error error=\"%.*s\"",
		    r->what, (int)rep.err.message.len, rep.err.message.p);
	else if (r->what[0] != '\0')
		log_info("http", "admin %s result=ok", r->what);
	if (r->kind == HK_FN) {
		r->fn(r->aio, &rep, r->fn_arg);
		return;
	}
	if (rep.status == SLUICE_EAUTH || rep.status == SLUICE_EPERM) {
		http_respond_refused(r->aio, rep.status);
		return;
	}
	http_pages_answer(r->aio, r->h, r->kind, &rep);
}

static void
work_cb(void *arg)
{
	struct http_req *r = arg;

	if (r->wait != NULL)
		atomic_store(&r->wait->ended, true);
	answer(r);
	free(r->fn_arg);
	r->fn_arg = NULL;
	if (r->rep != NULL)
		nng_msg_free(r->rep);
	r->rep = NULL;
	nng_aio_reap(r->work);
	req_done(r);
}

/* Frees the answered requests: on the core thread, between its events,
 * so the core is done with every one of them. */
static void
reclaim(struct http *h)
{
	struct http_req *r, *next;

	pthread_mutex_lock(&h->mu);
	r = h->done;
	h->done = NULL;
	pthread_mutex_unlock(&h->mu);
	for (; r != NULL; r = next) {
		next = r->next;
		free(r->wait);
		free(r);
	}
}

/* ---- for the other files of the face (http_face.h) ---------------------- */

const struct http_route *
http_route_of(nng_aio *aio)
{
	return nng_aio_get_input(aio, 1);
}

struct http *
http_of(nng_aio *aio)
{
	return http_route_of(aio)->h;
}

const char *
http_uri(nng_aio *aio)
{
	return nng_http_req_get_uri(nng_aio_get_input(aio, 0));
}

void
http_set_owners(struct http *h, const struct cmap *m)
{
	struct cmap copy;

	if (h == NULL || cmap_copy(&copy, m) != 0)
		return; /* out of memory: the last map's URLs serve */
	pthread_mutex_lock(&h->mu);
	cmap_free(&h->owners);
	h->owners = copy;
	pthread_mutex_unlock(&h->mu);
}

bool
http_owner_urls(struct http *h, const char *name, char *out, size_t cap)
{
	const struct cmap_cluster *c;
	bool found;

	pthread_mutex_lock(&h->mu);
	c = cmap_cluster(&h->owners, name);
	found = c != NULL && c->http != NULL && c->http[0] != '\0';
	if (found)
		snprintf(out, cap, "%s", c->http);
	pthread_mutex_unlock(&h->mu);
	return found;
}

/* ---- the face's lifetime ---------------------------------------------- */

/* The one HTTP face of the process. It is never freed: nng may still be
 * running a handler (which reads it) on one of its threads after the
 * server is stopped, until the process ends. */
static struct http the_http;

static void
http_release(struct http *h)
{
	http_srv_close(h->srv);
	h->srv = NULL;
}

int
http_open(struct http **out, const struct http_conf *conf)
{
	static const struct {
		const char *path, *method;
		void (*cb)(nng_aio *);
		bool tree;
	} routes[] = {
		{ "/", "GET", http_pages_index, false },
		{ "/metrics", "GET", http_pages_metrics, false },
		{ "/stats", "GET", http_pages_stats, false },
		{ "/health", "GET", http_pages_health, false },
		{ "/api/list", "GET", http_pages_list, false },
		{ "/api/errors", "GET", http_pages_errors, false },
		{ "/api/kick", "POST", http_pages_kick, false },
		{ "/api/delete", "POST", http_pages_delete, false },
		{ "/v1/history", "GET", http_pages_history, false },
		/* the task API (http_api.c), one route per method */
		{ "/v1", "GET", http_api_serve, true },
		{ "/v1", "POST", http_api_serve, true },
		{ "/v1", "PUT", http_api_serve, true },
		{ "/v1", "DELETE", http_api_serve, true },
	};
	struct http *h = &the_http;
	const char *addr = conf->addr;
	const struct tlsfile *tls = conf->tls;
	const struct http_srv_conf sc = {
		.header_timeout_ms = conf->header_timeout_ms,
		.idle_timeout_ms = conf->idle_timeout_ms,
		.max_conns = conf->max_conns,
	};
	nng_tls_config *cfg = NULL;
	char url[512];
	int rv;

	if (h->page != NULL)
		return -EBUSY; /* one per process */
	pthread_mutex_init(&h->mu, NULL);
	h->admin = conf->admin;
	h->auth = conf->auth;
	h->payload_max = conf->payload_max;
	h->body_timeout_ms = conf->body_timeout_ms;
	atomic_init(&h->phase, HTTP_RECOVERING);
	atomic_init(&h->inflight, 0);
	h->page = http_page_build(conf->admin, &h->page_len);
	if (h->page == NULL)
		return -ENOMEM;
	if (strstr(addr, "://") != NULL)
		addr = strstr(addr, "://") + 3;
	if ((rv = http_gate_hosts(h, addr, conf)) != 0)
		goto fail;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if ((rv = http_gate_route(h, routes[i].path, routes[i].method,
		         routes[i].cb, routes[i].tree)) != 0)
			goto fail;
	h->none =
	    (struct http_route) { .h = h, .cb = http_gate_none, .path = "" };
	snprintf(
	    url, sizeof(url), "%s://%s", tls != NULL ? "tls+tcp" : "tcp", addr);
	if (tls != NULL && (rv = tlsfile_server(tls, &cfg)) != 0)
		goto fail;
	rv = http_srv_open(&h->srv, url, cfg, &sc, http_gate_dispatch, h);
	if (cfg != NULL)
		nng_tls_config_free(cfg); /* the listener holds its own */
	if (rv != 0)
		goto fail;
	*out = h;
	return 0;

fail:
	http_release(h);
	return -(1000 + rv);
}

uint32_t
http_session(const struct http *h)
{
	return h != NULL ? h->session : 0;
}

void
http_attach(struct http *h, struct events *net)
{
	if (h == NULL)
		return;
	pthread_mutex_lock(&h->mu);
	h->events = net;
	h->session = events_session(net);
	pthread_mutex_unlock(&h->mu);
	atomic_store(&h->phase, HTTP_SERVING);
}

void
http_turn(struct http *h, const struct http_health *st)
{
	if (h == NULL)
		return;
	atomic_store(&h->log_failed, st->log_failed);
	atomic_store(&h->follower, st->follower);
	atomic_store(&h->leader_lost, st->leader_lost);
	atomic_store(&h->fenced, st->fenced);
	atomic_store(&h->no_lease, st->no_lease);
	atomic_store(&h->log_full, st->log_full);
	reclaim(h);
}

void
http_quiesce(struct http *h)
{
	if (h == NULL)
		return;
	atomic_store(&h->phase, HTTP_STOPPING);
	pthread_mutex_lock(&h->mu);
	h->closing = true;
	pthread_mutex_unlock(&h->mu);
}

void
http_close(struct http *h)
{
	struct timespec ts = { 0, 1000000 };

	if (h == NULL)
		return;
	http_quiesce(h);
	for (int i = 0; i < CLOSE_WAIT_MS && atomic_load(&h->inflight) > 0; i++)
		nanosleep(&ts, NULL);
	if (atomic_load(&h->inflight) > 0) {
		/* A request the core never answered: its memory would be
		 * used after the free. Leave the server to the exit. */
		log_warn("http",
		    "requests still in progress at exit; "
		    "leaving them to the process's end");
		return;
	}
	http_release(h);
	reclaim(h);
	pthread_mutex_lock(&h->mu);
	cmap_free(&h->owners);
	pthread_mutex_unlock(&h->mu);
}
