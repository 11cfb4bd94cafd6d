/* http - see http.h.
 *
 * One request's life (struct hreq):
 *   1. nng calls the handler on one of its threads with the HTTP aio;
 *      the handler parses the query, encodes a wire request and posts it
 *      to the core (under h->mu, so nothing is posted once quiesced);
 *   2. the core answers through this face's reply/drop, on its thread:
 *      they only park the answer and schedule `work` (schedule_work), so
 *      the core spends nothing on formatting;
 *   3. work_cb, on an nng thread, decodes the answer, formats the HTTP
 *      response (Prometheus text, JSON), finishes the HTTP aio, and frees
 *      the request (its work aio through nng_aio_reap, as it is running).
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
#include "proto/json.h"
#include "proto/msg.h"
#include "server/http.h"
#include "server/auth.h"
#include "server/http_api.h"
#include "server/http_face.h"
#include "server/http_page.h"
#include "server/metrics.h"
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

struct http {
	nng_http_server *srv;
	pthread_mutex_t mu; /* net, closing */
	struct net *net;    /* NULL until the core serves */
	bool closing;
	bool admin;
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
	bool bearer; /* Authorization: Bearer came; its SHA-256: */
	uint8_t hash[AUTH_HASH_LEN];
	char what[MSG_TUBE_MAX + 64]; /* an admin write, for the log */
	struct hwait *wait;           /* a take that waits: its connection */
	atomic_int parts;  /* work_cb's, and the wait's: the last ends r */
	struct hreq *next; /* on h->done */
};

/* A take that waits (face_waiting) takes its connection from nng's
 * server (nng_http_hijack), which reads nothing while a handler runs and
 * so would never see its client leave: a one-byte read does. The answer
 * then goes out with "Connection: close"; a take answered at once keeps
 * its connection. */
struct hwait {
	nng_http_conn *conn;
	nng_http_req *req; /* ours with the connection */
	nng_aio *proxy;    /* stands for the server's aio: gets the answer */
	nng_aio *watch;    /* the read */
	nng_aio *tx;       /* the answer's write */
	nng_http_res *res;
	uint8_t byte;
	atomic_bool gone;  /* the read ended: the client left */
	atomic_bool ended; /* the answer is out (or dropped) */
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

/* The response, with one more header `hname: hval` unless hname is NULL. */
static void
respond_h(nng_aio *aio, uint16_t status, const char *ctype, const void *body,
    size_t len, const char *hname, const char *hval)
{
	nng_http_res *res;
	int rv;

	if ((rv = nng_http_res_alloc(&res)) != 0) {
		nng_aio_finish(aio, rv);
		return;
	}
	if ((rv = nng_http_res_set_status(res, status)) != 0 ||
	    (rv = nng_http_res_set_header(res, "Content-Type", ctype)) != 0 ||
	    (rv = nng_http_res_set_header(res, "Cache-Control", "no-store")) !=
	        0 ||
	    (hname != NULL &&
	        (rv = nng_http_res_set_header(res, hname, hval)) != 0) ||
	    (rv = nng_http_res_copy_data(res, body, len)) != 0) {
		nng_http_res_free(res);
		nng_aio_finish(aio, rv);
		return;
	}
	nng_aio_set_output(aio, 0, res);
	nng_aio_finish(aio, 0);
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

/* The answer of a take that waited is written (or needs no writing):
 * the connection is closed, which ends the read. */
static void
wait_end(struct hreq *r)
{
	struct hwait *w = r->wait;

	atomic_store(&w->ended, true);
	nng_http_conn_close(w->conn);
	nng_aio_stop(w->watch);
	nng_aio_free(w->watch);
	if (w->res != NULL)
		nng_http_res_free(w->res);
	nng_http_req_free(w->req);
	nng_aio_reap(w->proxy); /* one of these is running this */
	nng_aio_reap(w->tx);
	hreq_done(r); /* w is freed with r */
}

static void
wait_tx_cb(void *arg)
{
	wait_end(arg);
}

/* The answer (respond_h's output), written here on the connection. */
static void
wait_proxy_cb(void *arg)
{
	struct hreq *r = arg;
	struct hwait *w = r->wait;
	nng_http_res *res = nng_aio_result(w->proxy) == 0
	    ? nng_aio_get_output(w->proxy, 0)
	    : NULL;

	if (res == NULL || atomic_load(&w->gone) ||
	    nng_http_res_set_header(res, "Connection", "close") != 0) {
		if (res != NULL)
			nng_http_res_free(res);
		wait_end(r);
		return;
	}
	w->res = res;
	nng_http_conn_write_res(w->conn, res, w->tx);
}

/* The read ended: the client left (or sent more, which a client may not
 * after a POST it waits for: it is treated as gone as well). The core
 * drops the take on its next turn (ops_serve_waiters). */
static void
wait_watch_cb(void *arg)
{
	struct hreq *r = arg;
	struct http *h = r->h;

	if (atomic_load(&r->wait->ended))
		return;
	atomic_store(&r->wait->gone, true);
	pthread_mutex_lock(&h->mu);
	if (h->net != NULL && !h->closing)
		(void)net_wake(h->net);
	pthread_mutex_unlock(&h->mu);
}

static void
wait_free(struct hwait *w)
{
	nng_aio_free(w->proxy);
	nng_aio_free(w->watch);
	nng_aio_free(w->tx);
	free(w);
}

/* On the core thread: the take waits for a task. Without the memory to
 * watch its connection it waits as before, unwatched. */
static void
face_waiting(struct net_ctx *ctx)
{
	struct hreq *r = (struct hreq *)ctx;
	nng_http_conn *conn = nng_aio_get_input(r->aio, 2);
	struct hwait *w;
	nng_iov iov;

	if (r->wait != NULL || conn == NULL ||
	    (w = calloc(1, sizeof(*w))) == NULL)
		return;
	if (nng_aio_alloc(&w->proxy, wait_proxy_cb, r) != 0 ||
	    nng_aio_alloc(&w->watch, wait_watch_cb, r) != 0 ||
	    nng_aio_alloc(&w->tx, wait_tx_cb, r) != 0 ||
	    !nng_aio_begin(w->proxy)) {
		wait_free(w);
		return;
	}
	for (unsigned i = 0; i < 3; i++)
		nng_aio_set_input(w->proxy, i, nng_aio_get_input(r->aio, i));
	w->conn = conn;
	w->req = nng_aio_get_input(r->aio, 0);
	nng_http_hijack(conn);
	atomic_fetch_add(&r->parts, 1);
	r->wait = w;
	nng_aio_finish(r->aio, 0); /* the server lets the connection go */
	r->aio = w->proxy;
	iov.iov_buf = &w->byte;
	iov.iov_len = 1;
	nng_aio_set_iov(w->watch, 1, &iov);
	nng_http_conn_read(conn, w->watch);
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
	if (len == 0 || len > AUTH_TOKEN_MAX)
		return;
	auth_sha256(v, len, r->hash);
	r->bearer = true;
}

bool
http_bearer(
    const struct net_ctx *ctx, uint8_t hash[AUTH_HASH_LEN], bool *admin_only)
{
	const struct hreq *r = (const struct hreq *)ctx;

	*admin_only = r->kind == HK_PAGE;
	if (r->bearer)
		memcpy(hash, r->hash, AUTH_HASH_LEN);
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
		if (r->kind == HK_METRICS)
			metrics_write(f, s);
		else
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

static struct http *
handler_http(nng_aio *aio)
{
	return nng_http_handler_get_data(nng_aio_get_input(aio, 1));
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

bool
http_query(const char *uri, const char *name, char *out, size_t cap)
{
	return query_get(uri, name, out, cap);
}

/* ---- the server ------------------------------------------------------- */

/* `tree`: for every path under `path` too, with a body of up to the
 * largest wire message (a payload over the server's limit is then
 * refused by the core, 413, not by nng). */
static int
add_handler(struct http *h, const char *path, const char *method,
    void (*cb)(nng_aio *), bool tree)
{
	nng_http_handler *hd;
	int rv;

	if ((rv = nng_http_handler_alloc(&hd, path, cb)) != 0)
		return rv;
	if ((tree &&
	        ((rv = nng_http_handler_set_tree(hd)) != 0 ||
	            (rv = nng_http_handler_collect_body(
	                 hd, true, MSG_SIZE_MAX)) != 0)) ||
	    (rv = nng_http_handler_set_method(hd, method)) != 0 ||
	    (rv = nng_http_handler_set_data(hd, h, NULL)) != 0 ||
	    (rv = nng_http_server_add_handler(h->srv, hd)) != 0) {
		nng_http_handler_free(hd);
		return rv;
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
	if (h->srv != NULL)
		nng_http_server_release(h->srv);
	h->srv = NULL;
}

/* HTTPS with the node's certificate. */
static int
serve_tls(nng_http_server *srv, const struct tlsfile *tls)
{
	nng_tls_config *cfg;
	int rv;

	if ((rv = tlsfile_server(tls, &cfg)) != 0)
		return rv;
	rv = nng_http_server_set_tls(srv, cfg);
	nng_tls_config_free(cfg); /* the server holds its own reference */
	return rv;
}

int
http_open(
    struct http **out, const char *addr, bool admin, const struct tlsfile *tls)
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
		/* the task API (http_api.c), one handler per method */
		{ "/v1", "GET", http_api_serve, true },
		{ "/v1", "POST", http_api_serve, true },
		{ "/v1", "PUT", http_api_serve, true },
		{ "/v1", "DELETE", http_api_serve, true },
	};
	struct http *h = &the_http;
	nng_url *u = NULL;
	char url[512];
	int rv;

	if (h->page != NULL)
		return -EBUSY; /* one per process */
	pthread_mutex_init(&h->mu, NULL);
	h->admin = admin;
	atomic_init(&h->phase, HTTP_RECOVERING);
	atomic_init(&h->inflight, 0);
	h->page = http_page_build(admin, &h->page_len);
	if (h->page == NULL)
		return -ENOMEM;
	if (strstr(addr, "://") != NULL)
		addr = strstr(addr, "://") + 3;
	snprintf(
	    url, sizeof(url), "%s://%s", tls != NULL ? "https" : "http", addr);
	rv = nng_url_parse(&u, url);
	if (rv == 0) {
		rv = nng_http_server_hold(&h->srv, u);
		nng_url_free(u);
	}
	if (rv == 0 && tls != NULL)
		rv = serve_tls(h->srv, tls);
	if (rv != 0)
		goto fail;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if ((rv = add_handler(h, routes[i].path, routes[i].method,
		         routes[i].cb, routes[i].tree)) != 0)
			goto fail;
	if ((rv = nng_http_server_start(h->srv)) != 0)
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
	nng_http_server_stop(h->srv);
	http_release(h);
	reclaim(h);
}
