/* http_pages - the HTTP face's own pages (routes and parameters in
 * http.h): /health, answered from what the core publishes (no core turn,
 * so it answers while recovering); the dashboard (http_page.c builds it
 * once), served after the core checks the admin's token with --auth; and
 * the pages of the queue's state and its admin writes, each a wire
 * request posted to the core (http_post_page) and answered here once the
 * core answers (http_pages_answer, on an nng thread): Prometheus text
 * (metrics.c) or the JSON of `sluice ... --json` (json/json.h).
 *
 * Admin writes (POST /api/kick and /api/delete) need --http-admin and
 * the header X-Sluice-Admin: a page of another origin cannot send it
 * without a CORS preflight, which is never granted, so a foreign page
 * cannot kick or delete through a browser. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "client/result.h"
#include "json/json.h"
#include "proto/msg.h"
#include "server/face/http/http_face.h"
#include "server/face/http/http_pages.h"
#include "server/face/http/http_query.h"
#include "server/face/http/http_respond.h"
#include "server/face/http/http_srv.h"
#include "server/face/http/metrics.h"
#include "sluice.h"

enum {
	QUERY_MAX = 256,   /* one decoded query value */
	LIST_DEFAULT = 50, /* /api/list without limit */
};

/* ---- the handlers ------------------------------------------------------ */

void
http_pages_health(nng_aio *aio)
{
	struct http *h = http_of(aio);
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

	http_respond_text(aio, (uint16_t)status, reason);
}

/* Through the core, like the other pages, so that with --auth it checks
 * the bearer token (the admin's only); the page itself holds no data. */
void
http_pages_index(nng_aio *aio)
{
	struct msg_req req = { .op = MSG_OP_STATS,
		.stats = { .page = true, .limit = 1 } };

	http_post_page(http_of(aio), aio, HK_PAGE, &req);
}

void
http_pages_stats(nng_aio *aio)
{
	struct msg_req req = { .op = MSG_OP_STATS,
		.stats = { .settings = true } };

	http_post_page(http_of(aio), aio, HK_STATS, &req);
}

/* /metrics asks twice: the fair groups of every tube with the largest
 * backlog (the groups op), then the stats of the deepest tubes
 * (sluiced --metrics-tubes) and the totals; the page is written from
 * both once the second answers. */
struct metrics_call {
	struct sluice_group *g; /* NULL when the groups could not be had */
	size_t n;
};

static void
metrics_stats_answer(nng_aio *aio, const struct msg_rep *rep, void *arg)
{
	struct metrics_call *m = arg;
	struct sluice_stats *s = NULL;
	struct http_srv_stats hs;
	char *body = NULL;
	size_t len = 0;
	FILE *f = NULL;

	if (rep == NULL)
		http_respond_text(aio, 503, "the server gave up the request");
	else if (rep->status == SLUICE_EAUTH || rep->status == SLUICE_EPERM)
		http_respond_refused(aio, rep->status);
	else if (rep->status != 0)
		http_respond_err(
		    aio, rep->status, rep->err.message.p, rep->err.message.len);
	else if (result_stats(&rep->stats, &s) != 0 ||
	    (f = open_memstream(&body, &len)) == NULL)
		http_respond_text(aio, 500, "out of memory");
	else {
		metrics_write(f, s);
		metrics_groups(f, m->g, m->n);
		http_srv_stats(http_of(aio)->srv, &hs);
		metrics_http(f, &hs);
		fclose(f);
		http_respond(aio, 200,
		    "text/plain; version=0.0.4; charset=utf-8", body, len, NULL,
		    NULL);
	}
	free(body);
	free(s);
	free(m->g); /* m itself is the face's (http_post) */
}

static void
metrics_groups_answer(nng_aio *aio, const struct msg_rep *rep, void *arg)
{
	struct msg_req req = { .op = MSG_OP_STATS,
		.stats = { .settings = true, .durations = true, .top = true } };
	struct metrics_call *m;

	(void)arg;
	if (rep == NULL) {
		http_respond_text(aio, 503, "the server gave up the request");
		return;
	}
	if (rep->status == SLUICE_EAUTH || rep->status == SLUICE_EPERM) {
		http_respond_refused(aio, rep->status);
		return;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		http_respond_text(aio, 500, "out of memory");
		return;
	}
	/* Without the groups (a server recovering, no memory) the page
	 * goes on without their series; the stats say what is wrong. */
	if (rep->status != 0 ||
	    result_groups(&rep->groups, &m->g, &m->n) != 0) {
		m->g = NULL;
		m->n = 0;
	}
	http_post(http_of(aio), aio, &req, metrics_stats_answer, m);
}

void
http_pages_metrics(nng_aio *aio)
{
	struct msg_req req = { .op = MSG_OP_GROUPS,
		.groups = { .limit = METRICS_GROUPS } };

	http_post(http_of(aio), aio, &req, metrics_groups_answer, NULL);
}

/* The tube of the query, checked; else answers 400 and returns false. */
static bool
tube_param(nng_aio *aio, char *tube, size_t cap)
{
	if (!http_query_get(http_uri(aio), "tube", tube, cap) ||
	    !msg_tube_valid(tube, strlen(tube))) {
		http_respond_errc(
		    aio, SLUICE_ETUBE, "tube: a valid ?tube= is needed");
		return false;
	}
	return true;
}

void
http_pages_list(nng_aio *aio)
{
	static const char *const states[] = { "all", "ready", "delayed",
		"taken", "buried", "done" };
	enum { NSTATES = sizeof(states) / sizeof(states[0]) };
	const char *uri = http_uri(aio);
	struct msg_req req = { .op = MSG_OP_LIST };
	char tube[QUERY_MAX], v[32];
	uint64_t limit = LIST_DEFAULT, after = 0;

	if (!tube_param(aio, tube, sizeof(tube)))
		return;
	req.list.tube = msg_cstr(tube);
	req.list.state = MSG_ST_NONE;
	req.list.order = MSG_ORDER_ATTEMPTS;
	if (http_query_get(uri, "state", v, sizeof(v))) {
		uint8_t i = 0;

		while (i < NSTATES && strcmp(v, states[i]) != 0)
			i++;
		if (i == NSTATES)
			goto bad;
		req.list.state = i;
	}
	if (http_query_get(uri, "after", v, sizeof(v))) {
		if (!http_query_get_u64(uri, "after", &after))
			goto bad;
		req.list.order = MSG_ORDER_ID; /* a cursor pages by id */
		req.list.after = after;
	}
	if (http_query_get(uri, "order", v, sizeof(v))) {
		uint8_t i = 1;

		while (msg_order_name(i) != NULL &&
		    strcmp(v, msg_order_name(i)) != 0)
			i++;
		if (msg_order_name(i) == NULL ||
		    (after > 0 && i != MSG_ORDER_ID))
			goto bad;
		req.list.order = i;
	}
	if (http_query_get(uri, "limit", v, sizeof(v)) &&
	    (!http_query_get_u64(uri, "limit", &limit) || limit < 1 ||
	        limit > MSG_LIST_MAX))
		goto bad;
	req.list.limit = (uint32_t)limit;
	http_post_page(http_of(aio), aio, HK_LIST, &req);
	return;
bad:
	http_respond_errc(aio, SLUICE_EINVAL,
	    "list: state is all|ready|delayed|taken|buried|done, order "
	    "attempts|age|run_at|id, limit 1..1000, after an id (in id "
	    "order)");
}

void
http_pages_errors(nng_aio *aio)
{
	static const char *const states[] = { "all", "ready", "delayed",
		"taken", "buried" };
	enum { NSTATES = sizeof(states) / sizeof(states[0]) };
	struct msg_req req = { .op = MSG_OP_ERRORS, .errors = { .ids = true } };
	char tube[QUERY_MAX], v[32];

	if (!tube_param(aio, tube, sizeof(tube)))
		return;
	req.errors.tube = msg_cstr(tube);
	/* ?state=buried (the default), ready, delayed, taken, all */
	if (http_query_get(http_uri(aio), "state", v, sizeof(v))) {
		uint8_t i = 0;

		while (i < NSTATES && strcmp(v, states[i]) != 0)
			i++;
		if (i == NSTATES) {
			http_respond_errc(aio, SLUICE_EINVAL,
			    "errors: state is buried, ready, delayed, taken "
			    "or all");
			return;
		}
		req.errors.set_state = i != MSG_ST_BURIED;
		req.errors.state = i;
	}
	http_post_page(http_of(aio), aio, HK_ERRORS, &req);
}

/* ?tube=T (none: every tube) &secs=N (1..3600, default 900). */
void
http_pages_history(nng_aio *aio)
{
	const char *uri = http_uri(aio);
	struct msg_req req = { .op = MSG_OP_HISTORY,
		.history = { .secs = 900 } }; /* 15 min */
	char tube[QUERY_MAX], v[32];
	uint64_t secs;

	if (http_query_get(uri, "tube", tube, sizeof(tube))) {
		if (!tube_param(aio, tube, sizeof(tube)))
			return;
		req.history.tube = msg_cstr(tube);
	}
	if (http_query_get(uri, "secs", v, sizeof(v))) {
		if (!http_query_get_u64(uri, "secs", &secs) || secs < 1 ||
		    secs > MSG_HISTORY_SECS) {
			http_respond_errc(
			    aio, SLUICE_EINVAL, "history: secs is 1..3600");
			return;
		}
		req.history.secs = (uint32_t)secs;
	}
	http_post_page(http_of(aio), aio, HK_HISTORY, &req);
}

/* Admin writes: refused unless --http-admin, and without the header a
 * cross-origin page cannot send. */
static bool
admin_allowed(nng_aio *aio)
{
	struct http *h = http_of(aio);

	if (!h->admin) {
		http_respond_text(aio, 403,
		    "read-only: start sluiced with --http-admin to kick and "
		    "delete from the page");
		return false;
	}
	if (nng_http_req_get_header(
	        nng_aio_get_input(aio, 0), "X-Sluice-Admin") == NULL) {
		http_respond_text(
		    aio, 403, "admin requests need X-Sluice-Admin");
		return false;
	}
	return true;
}

void
http_pages_kick(nng_aio *aio)
{
	const char *uri = http_uri(aio);
	struct msg_req req = { 0 };
	char tube[QUERY_MAX];
	uint64_t v = 0;

	if (!admin_allowed(aio))
		return;
	if (http_query_get_u64(uri, "id", &v)) {
		req.op = MSG_OP_KICK_ID;
		req.id = v;
	} else {
		if (!tube_param(aio, tube, sizeof(tube)))
			return;
		if (!http_query_get_u64(uri, "n", &v) || v < 1 ||
		    v > UINT32_MAX) {
			http_respond_errc(
			    aio, SLUICE_EINVAL, "kick: ?id=N, or ?tube=T&n=N");
			return;
		}
		req.op = MSG_OP_KICK;
		req.kick.tube = msg_cstr(tube);
		req.kick.n = (uint32_t)v;
	}
	http_post_page(http_of(aio), aio, HK_KICK, &req);
}

void
http_pages_delete(nng_aio *aio)
{
	struct msg_req req = { .op = MSG_OP_DELETE };
	uint64_t id = 0;

	if (!admin_allowed(aio))
		return;
	if (!http_query_get_u64(http_uri(aio), "id", &id)) {
		http_respond_errc(aio, SLUICE_EINVAL, "delete: ?id=N");
		return;
	}
	req.id = id;
	http_post_page(http_of(aio), aio, HK_DELETE, &req);
}

/* ---- their answers ----------------------------------------------------- */

void
http_pages_answer(nng_aio *aio, struct http *h, enum http_kind kind,
    const struct msg_rep *rep)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (kind == HK_PAGE) { /* allowed: the stats are not shown */
		http_respond(aio, 200, "text/html; charset=utf-8", h->page,
		    h->page_len, NULL, NULL);
		return;
	}
	if (rep->status != 0) {
		http_respond_err(
		    aio, rep->status, rep->err.message.p, rep->err.message.len);
		return;
	}
	if ((f = open_memstream(&body, &len)) == NULL) {
		http_respond_text(aio, 500, "out of memory");
		return;
	}
	rc = 0;
	switch (kind) {
	case HK_STATS: {
		struct sluice_stats *s;

		if ((rc = result_stats(&rep->stats, &s)) != 0)
			break;
		json_stats(f, s);
		free(s);
		break;
	}
	case HK_LIST: {
		struct sluice_task *t = NULL;

		if ((rc = result_tasks(&rep->tasks, &t)) != 0)
			break;
		json_tasks(f, t, rep->tasks.n);
		free(t);
		break;
	}
	case HK_ERRORS: {
		struct sluice_error_count *e = NULL;
		size_t n = 0;

		if ((rc = result_errors(&rep->errors, &e, &n)) != 0)
			break;
		json_errors(f, e, n);
		free(e);
		break;
	}
	case HK_KICK:
		if (rep->op == MSG_OP_KICK)
			fprintf(f, "{\"kicked\":%" PRIu64 "}", rep->count);
		else
			fprintf(f, "{\"kicked\":1,\"id\":%" PRIu64 "}",
			    rep->after.id);
		break;
	case HK_DELETE:
		fputs("{\"deleted\":1}", f);
		break;
	case HK_HISTORY: {
		struct sluice_history *hist;

		if ((rc = result_history(&rep->history, &hist)) != 0)
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
		http_respond_text(aio, 500, "out of memory");
	else
		http_respond(
		    aio, 200, "application/json", body, len, NULL, NULL);
	free(body);
}
