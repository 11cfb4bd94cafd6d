/* http - see http.h.
 *
 * One request's life (struct hreq):
 *   1. the server (http_srv.c) calls `dispatch` on one of nng's threads
 *      with the request's aio once its head is in; the route is found,
 *      the gate (below) judges the head and reads the body, and the
 *      route's handler parses the query, encodes a wire request and
 *      posts it to the core (under h->mu, so nothing is posted once
 *      quiesced);
 *   2. the core answers through this face's reply/drop, on its thread:
 *      they only park the answer and schedule `work` (schedule_work), so
 *      the core spends nothing on formatting;
 *   3. work_cb, on an nng thread, decodes the answer, formats the HTTP
 *      response (Prometheus text, JSON), finishes the request's aio with
 *      it (the server writes it), and frees the request (its work aio
 *      through nng_aio_reap, as it is running).
 * A take that waits for a task watches its connection meanwhile (struct
 * hwait): one whose client left is dropped by the core and takes
 * nothing, as SPEC's undeliverable take wants.
 *
 * Every posted request is answered by the core, which answers each one
 * (the shutdown drain included); h->inflight counts those in progress so
 * http_close can wait for them before the server is released.
 *
 * Admin writes (POST) need the header X-Sluice-Admin: a page of another
 * origin cannot send it without a CORS preflight, which is never
 * granted, so a foreign page cannot kick or delete through a browser. */
#include <arpa/inet.h>
#include <ctype.h>
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

#include "client/result.h"
#include "json/json.h"
#include "proto/msg.h"
#include "server/face/http/http.h"
#include "util/tokens.h"
#include "server/face/http/http_api.h"
#include "server/face/http/http_body.h"
#include "server/face/http/http_face.h"
#include "server/face/http/http_page.h"
#include "server/face/http/http_srv.h"
#include "server/face/http/metrics.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/tlsfile.h"

enum {
	QUERY_MAX = 256,   /* one decoded query value */
	LIST_DEFAULT = 50, /* /api/list without limit */
	CLOSE_WAIT_MS = 3000,
};

enum hkind {
	HK_METRICS,
	HK_STATS,
	HK_LIST,
	HK_ERRORS,
	HK_KICK,
	HK_DELETE,
	HK_PAGE, /* the admin page: a stats request stands for its check */
	HK_HISTORY,
	HK_FN, /* another file's handler answers (http_face.h) */
};

/* A route: its handler, and whether the task API's (its answers,
 * refusals included, in the API's shapes). */
struct hroute {
	struct http *h;
	void (*cb)(nng_aio *);
	bool v1;
	const char *path, *method;
	bool tree; /* every path under `path` too */
};

enum { ROUTES_MAX = 16 };

struct http {
	struct http_srv *srv;
	pthread_mutex_t mu; /* net, closing */
	struct net *net;    /* NULL until the core serves */
	bool closing;
	bool admin;
	bool auth;          /* --auth: the token is known before a body */
	size_t payload_max; /* --max-payload */
	uint32_t body_timeout_ms;
	struct hroute routes[ROUTES_MAX];
	size_t nroutes;
	struct hroute none; /* what no route takes */
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
	struct hreq *done; /* answered; freed on the core thread (mu) */
};

struct hreq {
	struct net_ctx ctx; /* the core answers here */
	struct net_ev ev;
	struct http *h;
	nng_aio *aio;  /* the HTTP handler's */
	nng_aio *work; /* formats the answer off the core thread */
	nng_msg *rep;  /* the core's answer; NULL when it dropped it */
	enum hkind kind;
	http_answer_fn fn; /* HK_FN: answers, with fn_arg (freed after) */
	void *fn_arg;
	char peer[64]; /* the client's address (http_srv.h) */
	bool bearer;   /* Authorization: Bearer came; its SHA-256: */
	uint8_t hash[TOKENS_HASH_LEN];
	char what[MSG_TUBE_MAX + 64]; /* an admin write, for the log */
	struct hwait *wait;           /* a take that waits: its connection */
	atomic_int parts;  /* work_cb's, and the wait's: the last ends r */
	struct hreq *next; /* on h->done */
};

/* A take that waits (face_waiting) watches its connection: the server
 * reads nothing while a handler runs and so would never see its client
 * leave; a one-byte read does. The answer then goes out with
 * "Connection: close" (the read may have taken a byte of whatever the
 * client sent next); a take answered at once keeps its connection. */
struct hwait {
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

/* ---- responses ------------------------------------------------------ */

/* The reason phrase of every status the face sends (RFC 9110 15; nng's
 * server, which served the face before, knew some of them only: "413
 * Unknown HTTP Status"). */
static const char *
reason_of(uint16_t status)
{
	switch (status) {
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 204:
		return "No Content";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 413:
		return "Content Too Large";
	case 421:
		return "Misdirected Request";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	default:
		return status < 300 ? "OK"
		    : status < 500  ? "Client Error"
		                    : "Server Error";
	}
}

/* The response, with one more header `hname: hval` unless hname is NULL;
 * `close`: the connection is closed once it is written. */
static void
respond_x(nng_aio *aio, uint16_t status, const char *ctype, const void *body,
    size_t len, const char *hname, const char *hval, bool close)
{
	struct http_res *res = http_res_new(
	    status, reason_of(status), ctype, body, len, hname, hval, close);

	if (res == NULL) {
		nng_aio_finish(aio, NNG_ENOMEM);
		return;
	}
	nng_aio_set_output(aio, 0, res);
	nng_aio_finish(aio, 0);
}

static void
respond_h(nng_aio *aio, uint16_t status, const char *ctype, const void *body,
    size_t len, const char *hname, const char *hval)
{
	respond_x(aio, status, ctype, body, len, hname, hval, false);
}

static void
respond(nng_aio *aio, uint16_t status, const char *ctype, const void *body,
    size_t len)
{
	respond_h(aio, status, ctype, body, len, NULL, NULL);
}

static void
respond_text(nng_aio *aio, uint16_t status, const char *text)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s\n", text);

	respond(aio, status, "text/plain; charset=utf-8", line,
	    n < 0                          ? 0
	        : (size_t)n < sizeof(line) ? (size_t)n
	                                   : sizeof(line) - 1);
}

/* A refusal of --auth: no more than that is said (the log says who and
 * why). 401 asks for a bearer token; 403: the token's role may not. */
static void
respond_refused(nng_aio *aio, int code)
{
	if (code == SLUICE_EAUTH) {
		static const char text[] = "unauthenticated\n";

		respond_h(aio, 401, "text/plain; charset=utf-8", text,
		    sizeof(text) - 1, "WWW-Authenticate", "Bearer");
	} else {
		respond_text(aio, 403, "not allowed");
	}
}

/* {"error":TEXT,"code":N} with an HTTP status that fits the code. */
static void
respond_err(nng_aio *aio, int code, const char *text, size_t len)
{
	uint16_t status = code == SLUICE_ENOTFOUND ? 404
	    : code == SLUICE_ETUBE || code == SLUICE_EINVAL ||
	        code == SLUICE_ELIMIT || code == SLUICE_ESTATE
	    ? 400
	    : code == SLUICE_ESHUTDOWN ? 503
	                               : 500;
	char *body = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&body, &blen);

	if (f == NULL) {
		respond_text(aio, 500, "out of memory");
		return;
	}
	fputs("{\"error\":", f);
	json_str(f, text, len);
	fprintf(f, ",\"code\":%d}", code);
	fclose(f);
	respond(aio, status, "application/json", body, blen);
	free(body);
}

static void
respond_errc(nng_aio *aio, int code, const char *text)
{
	respond_err(aio, code, text, strlen(text));
}

/* ---- the query string ------------------------------------------------- */

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
http_unescape(const char *p, size_t len, bool plus, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *q = p, *end = p + len; q < end; q++) {
		int c = (unsigned char)*q;

		if (c == '+' && plus) {
			c = ' ';
		} else if (c == '%' && end - q >= 3 && hexval(q[1]) >= 0 &&
		    hexval(q[2]) >= 0) {
			c = hexval(q[1]) * 16 + hexval(q[2]);
			q += 2;
		}
		if (c == 0 || n + 1 >= cap)
			return false;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return true;
}

/* The decoded value of `name` in the query of `uri` into out (NUL-ended).
 * Returns true when present and it fits (no NUL byte inside). */
static bool
query_get(const char *uri, const char *name, char *out, size_t cap)
{
	const char *p = strchr(uri, '?');
	size_t nlen = strlen(name);

	if (p == NULL)
		return false;
	for (p++; *p != '\0';) {
		const char *end = p + strcspn(p, "&");

		if ((size_t)(end - p) > nlen && strncmp(p, name, nlen) == 0 &&
		    p[nlen] == '=')
			return http_unescape(p + nlen + 1,
			    (size_t)(end - p - nlen - 1), true, out, cap);
		p = *end ? end + 1 : end;
	}
	return false;
}

static bool
query_u64(const char *uri, const char *name, uint64_t *out)
{
	char v[32], *end;

	if (!query_get(uri, name, v, sizeof(v)) || v[0] < '0' || v[0] > '9')
		return false;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno == 0 && *end == '\0';
}

/* ---- requests to the core ------------------------------------------- */

static void work_cb(void *arg);

/* Runs work_cb on one of nng's task threads: the aio is begun and
 * finished at once, so its callback is dispatched there. (Not a zero
 * sleep: nng's timer thread would handle every answer, at a cost that
 * shows under load.) */
static void
schedule_work(struct hreq *r)
{
	if (nng_aio_begin(r->work))
		nng_aio_finish(r->work, 0);
}

static void
face_reply(struct net_ctx *ctx, nng_msg *msg)
{
	struct hreq *r = (struct hreq *)ctx;

	r->rep = msg;
	schedule_work(r);
}

static void
face_drop(struct net_ctx *ctx)
{
	struct hreq *r = (struct hreq *)ctx;

	r->rep = NULL;
	schedule_work(r);
}

/* Ends r once the answer and, for a take that waited, its connection
 * are done: r is freed on the core thread, between its events, so it
 * outlives whatever the core still does with a request it answered. */
static void
hreq_done(struct hreq *r)
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
	struct hreq *r = arg;
	struct http *h = r->h;

	(void)rv;
	(void)n;
	if (!atomic_load(&r->wait->ended)) {
		atomic_store(&r->wait->gone, true);
		pthread_mutex_lock(&h->mu);
		if (h->net != NULL && !h->closing)
			(void)net_wake(h->net);
		pthread_mutex_unlock(&h->mu);
	}
	hreq_done(r); /* the wait's part */
}

/* On the core thread: the take waits for a task. Without the memory to
 * watch its connection it waits as before, unwatched. */
static void
face_waiting(struct net_ctx *ctx)
{
	struct hreq *r = (struct hreq *)ctx;
	struct http_conn *conn = nng_aio_get_input(r->aio, 2);
	struct hwait *w;

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
face_alive(const struct net_ctx *ctx)
{
	const struct hreq *r = (const struct hreq *)ctx;

	return r->wait == NULL || !atomic_load(&r->wait->gone);
}

static const struct net_face http_face = { .reply = face_reply,
	.drop = face_drop,
	.alive = face_alive,
	.waiting = face_waiting };

/* The SHA-256 of the request's `Authorization: Bearer TOKEN` into r;
 * r->bearer false without one (or with another scheme). Hashed here, on
 * nng's thread: the core only looks the hash up. */
static void
bearer_of(struct hreq *r, nng_aio *aio)
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
http_peer(const struct net_ctx *ctx)
{
	return ((const struct hreq *)ctx)->peer;
}

bool
http_bearer(
    const struct net_ctx *ctx, uint8_t hash[TOKENS_HASH_LEN], bool *admin_only)
{
	const struct hreq *r = (const struct hreq *)ctx;

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
		respond_text(aio, status, text);
	} else {
		respond_errc(aio, code, text);
	}
}

/* Encodes `req` and posts it to the core; the answer comes to work_cb
 * (and to `fn` for HK_FN). On failure the HTTP request is answered
 * here. */
static void
post_req(struct http *h, nng_aio *aio, enum hkind kind,
    const struct msg_req *req, http_answer_fn fn, void *arg)
{
	struct hreq *r = calloc(1, sizeof(*r));
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
	r->ev.kind = NET_REQUEST;
	r->ev.session = h->session;
	r->ev.ctx = &r->ctx;
	r->ev.msg = m;
	pthread_mutex_lock(&h->mu);
	if (h->net == NULL || h->closing) {
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
	net_post(h->net, &r->ev);
	pthread_mutex_unlock(&h->mu);
}

static void
post(struct http *h, nng_aio *aio, enum hkind kind, const struct msg_req *req)
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
answer(struct hreq *r)
{
	struct msg_rep rep;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (r->rep == NULL) {
		if (r->kind == HK_FN)
			r->fn(r->aio, NULL, r->fn_arg);
		else
			respond_text(
			    r->aio, 503, "the server gave up the request");
		return;
	}
	rc = msg_decode_rep(
	    nng_msg_body(r->rep), nng_msg_len(r->rep), NULL, &rep);
	if (rc != 0) {
		respond_text(r->aio, 500, "undecodable answer from the core");
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
		respond_refused(r->aio, rep.status);
		return;
	}
	if (r->kind == HK_PAGE) { /* allowed: the stats are not shown */
		respond(r->aio, 200, "text/html; charset=utf-8", r->h->page,
		    r->h->page_len);
		return;
	}
	if (rep.status != 0) {
		respond_err(
		    r->aio, rep.status, rep.err.message.p, rep.err.message.len);
		return;
	}
	if ((f = open_memstream(&body, &len)) == NULL) {
		respond_text(r->aio, 500, "out of memory");
		return;
	}
	rc = 0;
	switch (r->kind) {
	case HK_METRICS:
	case HK_STATS: {
		struct sluice_stats *s;

		if ((rc = result_stats(&rep.stats, &s)) != 0)
			break;
		if (r->kind == HK_METRICS) {
			struct http_srv_stats hs;

			metrics_write(f, s);
			http_srv_stats(r->h->srv, &hs);
			metrics_http(f, &hs);
		} else
			json_stats(f, s);
		free(s);
		break;
	}
	case HK_LIST: {
		struct sluice_task *t = NULL;

		if ((rc = result_tasks(&rep.tasks, &t)) != 0)
			break;
		json_tasks(f, t, rep.tasks.n);
		free(t);
		break;
	}
	case HK_ERRORS: {
		struct sluice_error_count *e = NULL;
		size_t n = 0;

		if ((rc = result_errors(&rep.errors, &e, &n)) != 0)
			break;
		json_errors(f, e, n);
		free(e);
		break;
	}
	case HK_KICK:
		if (rep.op == MSG_OP_KICK)
			fprintf(f, "{\"kicked\":%" PRIu64 "}", rep.count);
		else
			fprintf(f, "{\"kicked\":1,\"id\":%" PRIu64 "}",
			    rep.after.id);
		break;
	case HK_DELETE:
		fputs("{\"deleted\":1}", f);
		break;
	case HK_HISTORY: {
		struct sluice_history *hist;

		if ((rc = result_history(&rep.history, &hist)) != 0)
			break;
		json_history(f, hist);
		free(hist);
		break;
	}
	case HK_PAGE: /* answered above */
	case HK_FN:
		break;
	}
	fclose(f);
	if (rc != 0)
		respond_text(r->aio, 500, "out of memory");
	else if (r->kind == HK_METRICS)
		respond(r->aio, 200, "text/plain; version=0.0.4; charset=utf-8",
		    body, len);
	else
		respond(r->aio, 200, "application/json", body, len);
	free(body);
}

static void
work_cb(void *arg)
{
	struct hreq *r = arg;

	if (r->wait != NULL)
		atomic_store(&r->wait->ended, true);
	answer(r);
	free(r->fn_arg);
	r->fn_arg = NULL;
	if (r->rep != NULL)
		nng_msg_free(r->rep);
	r->rep = NULL;
	nng_aio_reap(r->work);
	hreq_done(r);
}

/* Frees the answered requests: on the core thread, between its events,
 * so the core is done with every one of them. */
static void
reclaim(struct http *h)
{
	struct hreq *r, *next;

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

/* ---- handlers --------------------------------------------------------- */

static const struct hroute *
route_of(nng_aio *aio)
{
	return nng_aio_get_input(aio, 1);
}

static struct http *
handler_http(nng_aio *aio)
{
	return route_of(aio)->h;
}

static const char *
req_uri(nng_aio *aio)
{
	return nng_http_req_get_uri(nng_aio_get_input(aio, 0));
}

static void
on_health(nng_aio *aio)
{
	struct http *h = handler_http(aio);
	struct http_health hh = {
		.phase = (enum http_phase)atomic_load(&h->phase),
		.log_failed = atomic_load(&h->log_failed),
		.follower = atomic_load(&h->follower),
		.leader_lost = atomic_load(&h->leader_lost),
		.fenced = atomic_load(&h->fenced),
		.no_lease = atomic_load(&h->no_lease),
		.log_full = atomic_load(&h->log_full),
	};
	const char *reason;
	int status = http_health_status(&hh, &reason);

	respond_text(aio, (uint16_t)status, reason);
}

/* Through the core, like the other pages, so that with --auth it checks
 * the bearer token (the admin's only); the page itself holds no data. */
static void
on_page(nng_aio *aio)
{
	struct msg_req req = { .op = MSG_OP_STATS,
		.stats = { .page = true, .limit = 1 } };

	post(handler_http(aio), aio, HK_PAGE, &req);
}

static void
on_stats(nng_aio *aio)
{
	struct msg_req req = { .op = MSG_OP_STATS,
		.stats = { .settings = true } };

	post(handler_http(aio), aio, HK_STATS, &req);
}

static void
on_metrics(nng_aio *aio)
{
	/* the deepest tubes (sluiced --metrics-tubes), and the totals */
	struct msg_req req = { .op = MSG_OP_STATS,
		.stats = { .settings = true, .durations = true, .top = true } };

	post(handler_http(aio), aio, HK_METRICS, &req);
}

/* The tube of the query, checked; else answers 400 and returns false. */
static bool
tube_param(nng_aio *aio, char *tube, size_t cap)
{
	if (!query_get(req_uri(aio), "tube", tube, cap) ||
	    !msg_tube_valid(tube, strlen(tube))) {
		respond_errc(
		    aio, SLUICE_ETUBE, "tube: a valid ?tube= is needed");
		return false;
	}
	return true;
}

static void
on_list(nng_aio *aio)
{
	static const char *const states[] = { "all", "ready", "delayed",
		"taken", "buried", "done" };
	enum { NSTATES = sizeof(states) / sizeof(states[0]) };
	const char *uri = req_uri(aio);
	struct msg_req req = { .op = MSG_OP_LIST };
	char tube[QUERY_MAX], v[32];
	uint64_t limit = LIST_DEFAULT, after = 0;

	if (!tube_param(aio, tube, sizeof(tube)))
		return;
	req.list.tube = msg_cstr(tube);
	req.list.state = MSG_ST_NONE;
	req.list.order = MSG_ORDER_ATTEMPTS;
	if (query_get(uri, "state", v, sizeof(v))) {
		uint8_t i = 0;

		while (i < NSTATES && strcmp(v, states[i]) != 0)
			i++;
		if (i == NSTATES)
			goto bad;
		req.list.state = i;
	}
	if (query_get(uri, "after", v, sizeof(v))) {
		if (!query_u64(uri, "after", &after))
			goto bad;
		req.list.order = MSG_ORDER_ID; /* a cursor pages by id */
		req.list.after = after;
	}
	if (query_get(uri, "order", v, sizeof(v))) {
		uint8_t i = 1;

		while (msg_order_name(i) != NULL &&
		    strcmp(v, msg_order_name(i)) != 0)
			i++;
		if (msg_order_name(i) == NULL ||
		    (after > 0 && i != MSG_ORDER_ID))
			goto bad;
		req.list.order = i;
	}
	if (query_get(uri, "limit", v, sizeof(v)) &&
	    (!query_u64(uri, "limit", &limit) || limit < 1 ||
	        limit > MSG_LIST_MAX))
		goto bad;
	req.list.limit = (uint32_t)limit;
	post(handler_http(aio), aio, HK_LIST, &req);
	return;
bad:
	respond_errc(aio, SLUICE_EINVAL,
	    "list: state is all|ready|delayed|taken|buried|done, order "
	    "attempts|age|run_at|id, limit 1..1000, after an id (in id "
	    "order)");
}

static void
on_errors(nng_aio *aio)
{
	struct msg_req req = { .op = MSG_OP_ERRORS, .errors = { .ids = true } };
	char tube[QUERY_MAX];

	if (!tube_param(aio, tube, sizeof(tube)))
		return;
	req.errors.tube = msg_cstr(tube);
	post(handler_http(aio), aio, HK_ERRORS, &req);
}

/* ?tube=T (none: every tube) &secs=N (1..900, default 900). */
static void
on_history(nng_aio *aio)
{
	const char *uri = req_uri(aio);
	struct msg_req req = { .op = MSG_OP_HISTORY,
		.history = { .secs = MSG_HISTORY_SECS } };
	char tube[QUERY_MAX], v[32];
	uint64_t secs;

	if (query_get(uri, "tube", tube, sizeof(tube))) {
		if (!tube_param(aio, tube, sizeof(tube)))
			return;
		req.history.tube = msg_cstr(tube);
	}
	if (query_get(uri, "secs", v, sizeof(v))) {
		if (!query_u64(uri, "secs", &secs) || secs < 1 ||
		    secs > MSG_HISTORY_SECS) {
			respond_errc(
			    aio, SLUICE_EINVAL, "history: secs is 1..900");
			return;
		}
		req.history.secs = (uint32_t)secs;
	}
	post(handler_http(aio), aio, HK_HISTORY, &req);
}

/* Admin writes: refused unless --http-admin, and without the header a
 * cross-origin page cannot send. */
static bool
admin_allowed(nng_aio *aio)
{
	struct http *h = handler_http(aio);

	if (!h->admin) {
		respond_text(aio, 403,
		    "read-only: start sluiced with --http-admin to kick and "
		    "delete from the page");
		return false;
	}
	if (nng_http_req_get_header(
	        nng_aio_get_input(aio, 0), "X-Sluice-Admin") == NULL) {
		respond_text(aio, 403, "admin requests need X-Sluice-Admin");
		return false;
	}
	return true;
}

static void
on_kick(nng_aio *aio)
{
	const char *uri = req_uri(aio);
	struct msg_req req = { 0 };
	char tube[QUERY_MAX];
	uint64_t v = 0;

	if (!admin_allowed(aio))
		return;
	if (query_u64(uri, "id", &v)) {
		req.op = MSG_OP_KICK_ID;
		req.id = v;
	} else {
		if (!tube_param(aio, tube, sizeof(tube)))
			return;
		if (!query_u64(uri, "n", &v) || v < 1 || v > UINT32_MAX) {
			respond_errc(
			    aio, SLUICE_EINVAL, "kick: ?id=N, or ?tube=T&n=N");
			return;
		}
		req.op = MSG_OP_KICK;
		req.kick.tube = msg_cstr(tube);
		req.kick.n = (uint32_t)v;
	}
	post(handler_http(aio), aio, HK_KICK, &req);
}

static void
on_delete(nng_aio *aio)
{
	struct msg_req req = { .op = MSG_OP_DELETE };
	uint64_t id = 0;

	if (!admin_allowed(aio))
		return;
	if (!query_u64(req_uri(aio), "id", &id)) {
		respond_errc(aio, SLUICE_EINVAL, "delete: ?id=N");
		return;
	}
	req.id = id;
	post(handler_http(aio), aio, HK_DELETE, &req);
}

/* ---- for the other files of the face (http_face.h) ---------------------- */

struct http *
http_of(nng_aio *aio)
{
	return handler_http(aio);
}

const char *
http_uri(nng_aio *aio)
{
	return req_uri(aio);
}

bool
http_admin(const struct http *h)
{
	return h->admin;
}

void
http_respond(nng_aio *aio, uint16_t status, const char *ctype, const void *body,
    size_t len, const char *hname, const char *hval)
{
	respond_h(aio, status, ctype, body, len, hname, hval);
}

void
http_respond_x(nng_aio *aio, uint16_t status, const char *ctype,
    const void *body, size_t len, const char *hname, const char *hval,
    bool close)
{
	respond_x(aio, status, ctype, body, len, hname, hval, close);
}

bool
http_query(const char *uri, const char *name, char *out, size_t cap)
{
	return query_get(uri, name, out, cap);
}

/* ---- the gate: what is judged before a body is read --------------------
 *
 * The server (http_srv.c) reads no body: it calls dispatch, and so
 * on_request, right after a request's head, and the body (if any) is
 * read here, only once the request passed, in this order:
 *   1. its Host is one this face serves (DNS rebinding: a page of
 *      attacker.example rebound to 127.0.0.1 sends its own name), else
 *      421;
 *   2. its framing (http_body.h): Content-Length or chunked, not both
 *      (400), no other transfer coding (501);
 *   3. with --auth, its bearer token: the core is asked first (a wire
 *      auth request carrying the request's bearer: a token it does not
 *      know is answered 401 after its usual pause, and one past its
 *      bounds closes the connection), so a request without a known
 *      token never has a byte of its body read, whatever its size;
 *   4. its size against its route's limit (http_api_body_max; none for
 *      the face's own pages), else 413;
 *   5. the body itself, within --http-body-timeout (http_body.c).
 * A request refused with its body unread is answered with "Connection:
 * close": its body is never taken for the next request. */

/* One request whose body is being read. */
struct hcall {
	nng_aio *aio; /* the server's, of the request */
	const struct hroute *rt;
	struct http_framing f;
	size_t limit;
};

/* The Host's name: lower case, without its port or an IPv6 literal's
 * brackets, nor a final dot. False when it does not fit. */
static bool
host_name(const char *host, char *out, size_t cap)
{
	size_t n;

	while (*host == ' ' || *host == '\t')
		host++;
	if (*host == '[') {
		host++;
		n = strcspn(host, "]");
	} else {
		n = strcspn(host, ": \t");
	}
	if (n > 0 && host[n - 1] == '.')
		n--;
	if (n >= cap)
		return false;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)host[i]);
	out[n] = '\0';
	return true;
}

static bool
ip_literal(const char *name)
{
	unsigned char a[16];

	return inet_pton(AF_INET, name, a) == 1 ||
	    inet_pton(AF_INET6, name, a) == 1;
}

static bool
loopback_name(const char *name)
{
	size_t n = strlen(name);
	unsigned char a[4];

	return strcmp(name, "localhost") == 0 ||
	    (n > 10 && strcmp(name + n - 10, ".localhost") == 0) ||
	    strcmp(name, "::1") == 0 ||
	    (inet_pton(AF_INET, name, a) == 1 && a[0] == 127);
}

/* Whether a request's Host header (NULL: none, an HTTP/1.0 request; a
 * browser always sends one) names this face. */
static bool
host_ok(const struct http *h, const char *host)
{
	char name[256];

	if (host == NULL)
		return true;
	if (!host_name(host, name, sizeof(name)))
		return false;
	for (size_t i = 0; i < h->nhosts; i++)
		if (strcmp(h->hosts[i], name) == 0)
			return true;
	return (h->loopback && loopback_name(name)) ||
	    (h->wildcard && ip_literal(name));
}

/* Refuses the request before its route runs, closing the connection
 * when its body is left unread (`close`). */
static void
gate_refuse(nng_aio *aio, const struct hroute *rt, uint16_t status, int code,
    const char *text, bool close)
{
	char line[512];
	int n;

	if (rt->v1) {
		http_api_refuse(aio, status, code, text, close);
		return;
	}
	n = snprintf(line, sizeof(line), "%s\n", text);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	respond_x(aio, status, "text/plain; charset=utf-8", line, (size_t)n,
	    status == 401 ? "WWW-Authenticate" : NULL,
	    status == 401 ? "Bearer" : NULL, close);
}

static int
code_of_status(int status)
{
	switch (status) {
	case 401:
		return SLUICE_EAUTH;
	case 408:
		return SLUICE_ETIMEDOUT;
	case 413:
		return SLUICE_ETOOBIG;
	case 500:
		return SLUICE_ENOMEM;
	case 421:
		return SLUICE_EPERM;
	default:
		return SLUICE_EINVAL;
	}
}

/* The body is in (or could not be): the route runs with it, or the
 * request is refused and its connection closed. */
static void
body_done(void *arg, int status, const char *why, void *data, size_t len)
{
	struct hcall *x = arg;
	nng_aio *aio = x->aio;
	const struct hroute *rt = x->rt;

	free(x);
	if (status < 0) {
		nng_aio_finish(aio, NNG_ECLOSED); /* the server closes it */
		return;
	}
	if (status > 0) {
		gate_refuse(aio, rt, (uint16_t)status, code_of_status(status),
		    why, true);
		return;
	}
	/* The route copies what it uses before it returns (a request to
	 * the core is encoded then): the body is freed after it. */
	if (nng_http_req_set_data(nng_aio_get_input(aio, 0), data, len) != 0) {
		free(data);
		gate_refuse(aio, rt, 500, SLUICE_ENOMEM, "out of memory", true);
		return;
	}
	rt->cb(aio);
	free(data);
}

/* Reads the body, unless its announced length is over the route's
 * limit already. */
static void
read_body(struct hcall *x)
{
	struct http_conn *conn = nng_aio_get_input(x->aio, 2);
	nng_http_req *req = nng_aio_get_input(x->aio, 0);
	const char *v;
	char text[160];

	if (x->f.length > x->limit) {
		nng_aio *aio = x->aio;
		const struct hroute *rt = x->rt;

		snprintf(text, sizeof(text),
		    "the body is over this route's limit of %zu bytes",
		    x->limit);
		free(x);
		gate_refuse(aio, rt, 413, SLUICE_ETOOBIG, text, true);
		return;
	}
	v = nng_http_req_get_header(req, "Expect");
	if (v != NULL && strcasecmp(v, "100-continue") == 0 &&
	    strcmp(nng_http_req_get_version(req), "HTTP/1.1") == 0)
		http_conn_continue(conn); /* a client waits for it to send */
	http_body_read(
	    conn, &x->f, x->limit, x->rt->h->body_timeout_ms, body_done, x);
}

/* The core's answer to the bearer check (an auth request): the body is
 * read only when the token is known. */
static void
bearer_answer(nng_aio *aio, const struct msg_rep *rep, void *arg)
{
	struct hcall *x = *(struct hcall **)arg;

	(void)aio;
	if (rep == NULL) { /* past the bounds on refusals: close */
		free(x);
		nng_aio_finish(aio, NNG_ECLOSED);
		return;
	}
	if (rep->status == SLUICE_EAUTH) {
		const struct hroute *rt = x->rt;

		free(x);
		gate_refuse(
		    aio, rt, 401, SLUICE_EAUTH, "unauthenticated", true);
		return;
	}
	/* Not checked: the core is not serving yet (or any more), or no
	 * memory to ask it. Any other answer came after the core found
	 * the token (an error then is the op's, not the token's: a
	 * degraded cluster's EREPLICA, say), and the request goes on. */
	if (rep->status == SLUICE_ESHUTDOWN || rep->status == SLUICE_ENOMEM) {
		const struct hroute *rt = x->rt;
		char text[MSG_TEXT_MAX + 1];

		snprintf(text, sizeof(text), "%.*s", (int)rep->err.message.len,
		    rep->err.message.p);
		free(x);
		gate_refuse(aio, rt,
		    rep->status == SLUICE_ESHUTDOWN ? 503 : 500, rep->status,
		    text, true);
		return;
	}
	read_body(x);
}

/* Every route's entry: the gate above, then the route. */
static void
on_request(nng_aio *aio)
{
	const struct hroute *rt = route_of(aio);
	struct http *h = rt->h;
	nng_http_req *req = nng_aio_get_input(aio, 0);
	struct http_framing f;
	const char *why = NULL;
	int st = http_body_framing(req, &f, &why);
	bool pending = st != 0 || http_body_pending(&f);
	struct hcall *x, **px;

	if (!host_ok(h, nng_http_req_get_header(req, "Host"))) {
		gate_refuse(aio, rt, 421, SLUICE_EPERM,
		    "this server does not serve that Host: name it with "
		    "--http-host",
		    pending);
		return;
	}
	if (st != 0) {
		gate_refuse(aio, rt, (uint16_t)st, SLUICE_EINVAL, why, true);
		return;
	}
	if (!pending) {
		rt->cb(aio);
		return;
	}
	x = malloc(sizeof(*x));
	if (x == NULL) {
		gate_refuse(aio, rt, 500, SLUICE_ENOMEM, "out of memory", true);
		return;
	}
	x->aio = aio;
	x->rt = rt;
	x->f = f;
	x->limit = rt->v1 ? http_api_body_max(nng_http_req_get_method(req),
	                        nng_http_req_get_uri(req), h->payload_max)
	                  : 0;
	if (!h->auth) {
		read_body(x);
		return;
	}
	if ((px = malloc(sizeof(*px))) == NULL) {
		free(x);
		gate_refuse(aio, rt, 500, SLUICE_ENOMEM, "out of memory", true);
		return;
	}
	*px = x;
	post_req(h, aio, HK_FN,
	    &(struct msg_req) {
	        .op = MSG_OP_AUTH, .token = msg_cstr("bearer") },
	    bearer_answer, px);
}

/* Whatever no route takes: 404 (405 for a page's path with another
 * method), through the gate, so a body is never left to be read as the
 * next request. */
static void
on_none(nng_aio *aio)
{
	const struct hroute *rt = route_of(aio);
	const char *uri = nng_http_req_get_uri(nng_aio_get_input(aio, 0));
	size_t plen = strcspn(uri, "?#");
	static const char *const pages[] = { "/", "/metrics", "/stats",
		"/health", "/api/list", "/api/errors", "/api/kick",
		"/api/delete", "/v1/history" };

	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if ((strlen(pages[i]) == plen &&
		        strncmp(uri, pages[i], plen) == 0) ||
		    strncmp(uri, "/v1/", 4) == 0) {
			respond_x(aio, 405, "text/plain; charset=utf-8",
			    "method not allowed\n", 19, NULL, NULL, false);
			return;
		}
	(void)rt;
	respond_text(aio, 404, "no such page");
}

/* ---- the server ------------------------------------------------------- */

/* Registers `cb` (through the gate) for `method` on `path` (NULL: every
 * method), and with `tree` every path under it too. */
static int
add_route(struct http *h, const char *path, const char *method,
    void (*cb)(nng_aio *), bool tree)
{
	struct hroute *rt;

	if (h->nroutes == ROUTES_MAX)
		return NNG_ENOMEM;
	rt = &h->routes[h->nroutes++];
	rt->h = h;
	rt->cb = cb;
	rt->v1 = cb == http_api_serve;
	rt->path = path;
	rt->method = method;
	rt->tree = tree;
	return 0;
}

/* Whether `rt` serves the path of `uri` (up to its query). */
static bool
route_path(const struct hroute *rt, const char *uri)
{
	size_t plen = strcspn(uri, "?#"), rlen = strlen(rt->path);

	if (plen == rlen)
		return strncmp(uri, rt->path, plen) == 0;
	return rt->tree && plen > rlen && uri[rlen] == '/' &&
	    strncmp(uri, rt->path, rlen) == 0;
}

/* The server's handler: the request's route (HEAD as GET; none: on_none,
 * which answers 404 or 405), through the gate. */
static void
dispatch(nng_aio *aio, void *arg)
{
	struct http *h = arg;
	nng_http_req *req = nng_aio_get_input(aio, 0);
	const char *uri = nng_http_req_get_uri(req);
	const char *method = nng_http_req_get_method(req);
	const struct hroute *rt = &h->none;

	if (strcmp(method, "HEAD") == 0)
		method = "GET";
	for (size_t i = 0; i < h->nroutes; i++)
		if (strcmp(h->routes[i].method, method) == 0 &&
		    route_path(&h->routes[i], uri)) {
			rt = &h->routes[i];
			break;
		}
	nng_aio_set_input(aio, 1, (void *)rt);
	on_request(aio);
}

/* The names a Host may carry: the listener's own (host of `addr`), the
 * configured ones; and whether loopback names or IP literals go too. */
static int
hosts_init(struct http *h, const char *addr, const struct http_conf *conf)
{
	char name[256];

	if (!host_name(addr, name, sizeof(name)))
		return NNG_EINVAL;
	h->loopback = loopback_name(name);
	h->wildcard = name[0] == '\0' || strcmp(name, "0.0.0.0") == 0 ||
	    strcmp(name, "::") == 0 || strcmp(name, "*") == 0;
	if (!h->wildcard && (h->hosts[h->nhosts++] = strdup(name)) == NULL)
		return NNG_ENOMEM;
	for (size_t i = 0; i < conf->nhosts && i < HTTP_HOSTS_MAX; i++) {
		if (!host_name(conf->hosts[i], name, sizeof(name)))
			return NNG_EINVAL;
		if ((h->hosts[h->nhosts++] = strdup(name)) == NULL)
			return NNG_ENOMEM;
	}
	return 0;
}

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
		{ "/", "GET", on_page, false },
		{ "/metrics", "GET", on_metrics, false },
		{ "/stats", "GET", on_stats, false },
		{ "/health", "GET", on_health, false },
		{ "/api/list", "GET", on_list, false },
		{ "/api/errors", "GET", on_errors, false },
		{ "/api/kick", "POST", on_kick, false },
		{ "/api/delete", "POST", on_delete, false },
		{ "/v1/history", "GET", on_history, false },
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
	if ((rv = hosts_init(h, addr, conf)) != 0)
		goto fail;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if ((rv = add_route(h, routes[i].path, routes[i].method,
		         routes[i].cb, routes[i].tree)) != 0)
			goto fail;
	h->none = (struct hroute) { .h = h, .cb = on_none, .path = "" };
	snprintf(
	    url, sizeof(url), "%s://%s", tls != NULL ? "tls+tcp" : "tcp", addr);
	if (tls != NULL && (rv = tlsfile_server(tls, &cfg)) != 0)
		goto fail;
	rv = http_srv_open(&h->srv, url, cfg, &sc, dispatch, h);
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
http_attach(struct http *h, struct net *net)
{
	if (h == NULL)
		return;
	pthread_mutex_lock(&h->mu);
	h->net = net;
	h->session = net_face_session(net);
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
}
