/* http_api - the task API's entry and router (http_api.h); the routes,
 * their parameters and answers are in docs/http-api.md and GET
 * /v1/openapi.json (openapi.json, built into the binary).
 *
 * A request becomes one wire request (proto/msg.h), posted to the core
 * through http.c (http_post) like the face's other pages; the core checks
 * a bearer token with --auth by the operation, as for any client, and
 * answers writes once they are durable. The answer is written by
 * http_api_answer.c, on an nng thread, in the JSON of
 * `sluice ... --json` (json/json.h).
 *
 * Here the path is split into its segments and the route found: the
 * node's (stats, hourly, snapshot, the OpenAPI description), a tube's
 * (http_api_tube.c: put, take, list, its settings, ...), a task's
 * (http_api_task.c: the lease ops, peek, update, ...), a key's, the
 * schedules' (http_api_sched.c). Each
 * route reads its parameters (http_query.h) and sends one request with
 * the shape of its answer (http_api_send); a bad parameter is answered
 * 400 naming the first one met.
 *
 * HTTP keeps no session: every take is a detached lease, which only
 * its ttr ends. A long-poll take whose client leaves while it waits takes
 * nothing (http.c watches its connection; its answer closes it).
 *
 * A browser page of another origin can send a POST without a preflight;
 * every write whose Origin is not this server's (or that the browser
 * marks Sec-Fetch-Site: cross-site) is refused. Admin writes (kick,
 * delete, flush, pause, update, tube settings, snapshot, a forced lease
 * op) need --http-admin, and with --auth an admin's token. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "proto/msg.h"
#include "server/face/http/http_api.h"
#include "server/face/http/http_api_answer.h"
#include "server/face/http/http_api_group.h"
#include "server/face/http/http_api_batches.h"
#include "server/face/http/http_api_sched.h"
#include "server/face/http/http_api_task.h"
#include "server/face/http/http_api_tube.h"
#include "server/face/http/http_face.h"
#include "server/face/http/http_query.h"
#include "server/face/http/http_respond.h"
#include "sluice.h"

enum {
	/* Bodies (http_api_body_max): a route without a payload takes a
	 * short text at most (fail's error: MSG_TEXT_MAX, said 400 past
	 * it; an ack's result has MSG_RESULT_MAX), an ack or delete batch
	 * 1000 small items. */
	BODY_SMALL = 16 << 10,
	BODY_IDS = 1 << 20,
};

static const char CROSS_SITE[] =
    "cross-site request refused: a write's Origin must be this server's "
    "own (programs send no Origin)";
static const char READ_ONLY[] =
    "read-only: kick, delete, cancel, flush, release, pause, update, tube "
    "settings, schedules, snapshot and force need sluiced --http-admin";

/* The built-in OpenAPI description (openapi.json, embedded at build). */
extern const unsigned char http_openapi_json[];
extern const size_t http_openapi_json_len;

/* ---- a request --------------------------------------------------------- */

/* Splits the path after /v1 into segments. False when it is too long,
 * has too many segments, or a segment does not decode. */
static bool
split_path(struct http_api_call *c)
{
	const char *p = c->q.uri + 3; /* past "/v1" */
	const char *end = p + strcspn(p, "?#");
	size_t off = 0;

	c->nseg = 0;
	while (p < end) {
		const char *s = p + 1, *e = s;

		while (e < end && *e != '/')
			e++;
		if (e == s && e == end)
			break; /* a trailing slash */
		if (c->nseg == HTTP_API_SEGS_MAX ||
		    !http_unescape(s, (size_t)(e - s), false, c->path + off,
		        sizeof(c->path) - off))
			return false;
		c->seg[c->nseg++] = c->path + off;
		off += strlen(c->path + off) + 1;
		p = e;
	}
	return true;
}

static bool admin_op(const struct msg_req *r);

/* The request's wire form is posted with its answer's shape (`a`, which
 * goes with it). */
void
http_api_send(
    struct http_api_call *c, const struct msg_req *req, struct http_api_ans *a)
{
	if (c->q.err[0] != '\0') {
		free(a);
		http_api_error(c->aio, SLUICE_EINVAL, c->q.err);
		return;
	}
	if ((admin_op(req) || c->force) && !http_of(c->aio)->admin) {
		free(a);
		http_api_error(c->aio, SLUICE_EPERM, READ_ONLY);
		return;
	}
	http_post(http_of(c->aio), c->aio, req, http_api_answer, a);
}

void
http_api_send_shape(struct http_api_call *c, const struct msg_req *req,
    enum http_api_shape shape)
{
	struct http_api_ans *a = http_api_ans_new(c->aio, shape, 0);

	if (a != NULL)
		http_api_send(c, req, a);
}

void
http_api_send_count(
    struct http_api_call *c, const struct msg_req *req, const char *key)
{
	struct http_api_ans *a = http_api_ans_new(c->aio, SH_COUNT, 0);

	if (a == NULL)
		return;
	a->count_key = key;
	http_api_send(c, req, a);
}

/* ---- the gates --------------------------------------------------------- */

static bool
admin_op(const struct msg_req *r)
{
	switch (r->op) {
	case MSG_OP_KICK:
	case MSG_OP_KICK_ID:
	case MSG_OP_DELETE:
	case MSG_OP_DELETE_KEY:
	case MSG_OP_DELETE_BATCH:
	case MSG_OP_DELETE_WHERE:
	case MSG_OP_FLUSH:
	case MSG_OP_RELEASE_ALL:
	case MSG_OP_PAUSE:
	case MSG_OP_UPDATE:
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_DELETE:
	case MSG_OP_SNAPSHOT:
	case MSG_OP_SCHED_SET:
	case MSG_OP_SCHED_CTL:
		return true;
	case MSG_OP_BATCH_SET: /* a batch's cancel */
		return (r->batch.what & MSG_BATCH_CANCEL) != 0;
	}
	return false;
}

/* The host[:port] of an Origin ("https://a.example:8080"). */
static const char *
origin_host(const char *origin)
{
	const char *p = strstr(origin, "://");

	return p != NULL ? p + 3 : origin;
}

/* A write from a page of another origin (refused, 403). Programs send no
 * Origin; browsers send one on every cross-origin POST. */
static bool
cross_site(nng_http_req *r)
{
	const char *site = nng_http_req_get_header(r, "Sec-Fetch-Site");
	const char *origin = nng_http_req_get_header(r, "Origin");
	const char *host = nng_http_req_get_header(r, "Host");

	return (site != NULL && strcasecmp(site, "cross-site") == 0) ||
	    (origin != NULL &&
	        (host == NULL || strcasecmp(origin_host(origin), host) != 0));
}

static bool
same_origin(struct http_api_call *c)
{
	if (cross_site(nng_aio_get_input(c->aio, 0))) {
		http_api_error(c->aio, SLUICE_EPERM, CROSS_SITE);
		return false;
	}
	return true;
}

/* ---- the router -------------------------------------------------------- */

/* /v1/tubes/T/VERB: the methods of each verb. */
static const struct {
	const char *method, *verb;
} tube_verbs[] = {
	{ "POST", "take" },
	{ "POST", "tasks" },
	{ "GET", "tasks" },
	{ "DELETE", "tasks" },
	{ "POST", "kick" },
	{ "POST", "release" },
	{ "POST", "pause" },
	{ "GET", "stats" },
	{ "GET", "hourly" },
	{ "GET", "errors" },
	{ "GET", "groups" },
	{ "GET", "next" },
};

static unsigned
method_bit(const char *m)
{
	return strcmp(m, "GET") == 0   ? HTTP_M_GET
	    : strcmp(m, "POST") == 0   ? HTTP_M_POST
	    : strcmp(m, "PUT") == 0    ? HTTP_M_PUT
	    : strcmp(m, "DELETE") == 0 ? HTTP_M_DELETE
	                               : 0;
}

static unsigned
tube_verb_methods(const char *verb)
{
	unsigned m = 0;

	for (size_t i = 0; i < sizeof(tube_verbs) / sizeof(tube_verbs[0]); i++)
		if (strcmp(verb, tube_verbs[i].verb) == 0)
			m |= method_bit(tube_verbs[i].method);
	return m;
}

/* /v1/tubes/T/VERB: whether the verb takes this method. */
static bool
route_tube_verb(const struct http_api_call *c)
{
	return (tube_verb_methods(c->seg[2]) & method_bit(c->method)) != 0;
}

/* /v1/tasks/ID/VERB (POST) */
static bool
route_task_verb(const char *verb)
{
	static const char *const verbs[] = { "ack", "release", "fail", "touch",
		"bury", "kick", "update", "cancel" };

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verb, verbs[i]) == 0)
			return true;
	return false;
}

static bool
is(const struct http_api_call *c, const char *method, size_t nseg,
    const char *s0)
{
	return strcmp(c->method, method) == 0 && c->nseg == nseg &&
	    strcmp(c->seg[0], s0) == 0;
}

static void
no_route(struct http_api_call *c)
{
	http_api_error(c->aio, SLUICE_ENOTFOUND,
	    "no such route: see GET /v1/openapi.json");
}

static void
route(struct http_api_call *c)
{
	struct msg_req req = { 0 };
	const char *s1 = c->nseg > 1 ? c->seg[1] : "";

	if (c->nseg == 0) {
		no_route(c);
	} else if (is(c, "GET", 1, "openapi.json")) {
		http_respond(c->aio, 200, "application/json", http_openapi_json,
		    http_openapi_json_len, NULL, NULL);
	} else if (is(c, "GET", 1, "stats")) {
		req.op = MSG_OP_STATS;
		req.stats.settings = true;
		http_api_send_shape(c, &req, SH_STATS);
	} else if (is(c, "GET", 1, "cluster")) {
		req.op = MSG_OP_CLUSTER; /* a read: the members, with --etcd */
		http_api_send_shape(c, &req, SH_CLUSTER);
	} else if (is(c, "GET", 1, "hourly")) {
		req.op = MSG_OP_STATS_HOURLY;
		http_api_send_shape(c, &req, SH_HOURS);
	} else if (is(c, "POST", 1, "snapshot")) {
		req.op = MSG_OP_SNAPSHOT;
		http_api_send_shape(c, &req, SH_LSN);
	} else if (http_api_sched_match(c)) {
		http_api_sched_route(c);
	} else if (http_api_batches_match(c)) {
		http_api_batches_route(c);
	} else if (strcmp(c->seg[0], "tubes") == 0 &&
	    (http_api_group_methods(c) & method_bit(c->method)) != 0) {
		http_api_group_route(c);
	} else if (strcmp(c->seg[0], "tubes") == 0 &&
	    (c->nseg == 2 ? strcmp(c->method, "POST") != 0
	                  : c->nseg == 3 && route_tube_verb(c))) {
		http_api_tube_route(c);
	} else if (is(c, "POST", 2, "tasks") &&
	    (strcmp(s1, "ack") == 0 || strcmp(s1, "delete") == 0 ||
	        strcmp(s1, "cancel") == 0)) {
		http_api_task_batch(c, s1[0]);
	} else if (strcmp(c->seg[0], "tasks") == 0 &&
	    (c->nseg == 2 ? strcmp(c->method, "GET") == 0 ||
	                strcmp(c->method, "DELETE") == 0
	                  : c->nseg == 3 &&
	                (strcmp(c->method, "POST") == 0
	                        ? route_task_verb(c->seg[2])
	                        : strcmp(c->method, "GET") == 0 &&
	                            strcmp(c->seg[2], "result") == 0))) {
		http_api_task_route(c);
	} else if (strcmp(c->seg[0], "keys") == 0 && c->nseg == 2 &&
	    (strcmp(c->method, "GET") == 0 ||
	        strcmp(c->method, "DELETE") == 0)) {
		char tube[MSG_TUBE_MAX + 2];
		struct http_api_ans *a;

		/* The key's tube: ?tube=NAME (keys are per tube; without
		 * it the answer is 400 naming it). */
		req.op =
		    c->method[0] == 'G' ? MSG_OP_PEEK_KEY : MSG_OP_DELETE_KEY;
		req.by_key.key = msg_cstr(s1);
		if (http_query_str(&c->q, "tube", tube, sizeof(tube)) &&
		    tube[0] != '\0')
			req.by_key.tube = msg_cstr(tube);
		else
			http_query_bad(&c->q, "tube",
			    "the key's tube is needed: keys are per tube "
			    "(?tube=NAME)");
		if ((a = http_api_ans_new(c->aio,
		         req.op == MSG_OP_PEEK_KEY ? SH_TASK : SH_DELETED,
		         0)) != NULL)
			http_api_send(c, &req, a);
	} else {
		no_route(c);
	}
}

size_t
http_api_body_max(const char *method, const char *uri, size_t payload_max)
{
	struct http_api_call *c = malloc(sizeof(*c));
	size_t max = BODY_SMALL;

	if (c == NULL)
		return 0;
	c->q.uri = uri;
	c->method = method;
	c->q.err[0] = '\0';
	c->force = false;
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ||
	    strncmp(uri, "/v1", 3) != 0 || !split_path(c)) {
		max = 0;
	} else if (strcmp(method, "POST") == 0 && c->nseg == 3 &&
	    strcmp(c->seg[0], "tubes") == 0 &&
	    strcmp(c->seg[2], "tasks") == 0) {
		/* a batch: its payloads as JSON text (escaped, up to 6
		 * bytes a byte) or base64 (4 for 3), within one wire
		 * message */
		max = http_query_flag(&c->q, "batch") ? MSG_SIZE_MAX
		                                      : payload_max;
	} else if (strcmp(method, "POST") == 0 && c->nseg == 3 &&
	    strcmp(c->seg[0], "tasks") == 0 &&
	    strcmp(c->seg[2], "update") == 0) {
		max = payload_max;
	} else if (strcmp(method, "PUT") == 0 && c->nseg == 2 &&
	    strcmp(c->seg[0], "schedules") == 0) {
		max = payload_max; /* the schedule's payload */
	} else if (strcmp(method, "POST") == 0 && c->nseg == 2 &&
	    strcmp(c->seg[0], "tasks") == 0) {
		max = BODY_IDS; /* ack or delete batch */
	} else if (strcmp(method, "POST") == 0 && c->nseg == 3 &&
	    strcmp(c->seg[0], "tasks") == 0 && strcmp(c->seg[2], "ack") == 0) {
		/* a result up to MSG_RESULT_MAX; one byte more is read to be
		 * answered result_too_large */
		max = MSG_RESULT_MAX + 1;
	}
	free(c);
	return max;
}

/* The methods of the path split into `c` (every route of route(); the
 * face's own /v1/history among them). */
static unsigned
path_methods(const struct http_api_call *c)
{
	const char *s0 = c->nseg > 0 ? c->seg[0] : "";
	const char *s1 = c->nseg > 1 ? c->seg[1] : "";

	if (strcmp(s0, "batches") == 0)
		return http_api_batches_methods(c);
	switch (c->nseg) {
	case 1:
		if (strcmp(s0, "openapi.json") == 0 ||
		    strcmp(s0, "stats") == 0 || strcmp(s0, "hourly") == 0 ||
		    strcmp(s0, "cluster") == 0 || strcmp(s0, "history") == 0 ||
		    strcmp(s0, "schedules") == 0)
			return HTTP_M_GET;
		return strcmp(s0, "snapshot") == 0 ? HTTP_M_POST : 0;
	case 2:
		if (strcmp(s0, "tubes") == 0 || strcmp(s0, "schedules") == 0)
			return HTTP_M_GET | HTTP_M_PUT | HTTP_M_DELETE;
		if (strcmp(s0, "tasks") == 0)
			return strcmp(s1, "ack") == 0 ||
			        strcmp(s1, "delete") == 0 ||
			        strcmp(s1, "cancel") == 0
			    ? HTTP_M_POST
			    : HTTP_M_GET | HTTP_M_DELETE;
		return strcmp(s0, "keys") == 0 ? HTTP_M_GET | HTTP_M_DELETE : 0;
	case 3:
		if (strcmp(s0, "tubes") == 0)
			return tube_verb_methods(c->seg[2]) |
			    http_api_group_methods(c);
		if (strcmp(s0, "schedules") == 0)
			return strcmp(c->seg[2], "pause") == 0 ||
			        strcmp(c->seg[2], "resume") == 0
			    ? HTTP_M_POST
			    : 0;
		if (strcmp(s0, "tasks") == 0 &&
		    strcmp(c->seg[2], "result") == 0)
			return HTTP_M_GET;
		return strcmp(s0, "tasks") == 0 && route_task_verb(c->seg[2])
		    ? HTTP_M_POST
		    : 0;
	case 4:
	case 5:
		return strcmp(s0, "tubes") == 0 ? http_api_group_methods(c) : 0;
	default:
		return 0;
	}
}

/* A request's call with its path split, for the checks before its body;
 * NULL without memory. `*split` says whether the path splits. */
static struct http_api_call *
call_of(const char *method, const char *uri, bool *split)
{
	struct http_api_call *c = malloc(sizeof(*c));

	if (c == NULL)
		return NULL;
	c->q.uri = uri;
	c->method = method;
	c->q.err[0] = '\0';
	c->force = false;
	*split = strncmp(uri, "/v1", 3) == 0 && split_path(c);
	return c;
}

unsigned
http_api_methods(const char *uri)
{
	bool split;
	struct http_api_call *c = call_of("GET", uri, &split);
	unsigned m;

	if (c == NULL)
		return HTTP_M_ALL; /* the route answers 500 */
	m = split ? path_methods(c) : HTTP_M_ALL;
	free(c);
	return m;
}

/* Whether the request `c` (split) is an admin write, as admin_op() and
 * the routes' `force` judge it once they have read it. */
static bool
admin_route(struct http_api_call *c)
{
	const char *m = c->method, *s0 = c->nseg > 0 ? c->seg[0] : "";
	const char *verb = c->nseg > 2 ? c->seg[2] : "";

	if (strcmp(m, "GET") == 0)
		return false;
	if (c->nseg == 1)
		return strcmp(s0, "snapshot") == 0;
	if (strcmp(s0, "tubes") == 0 && http_api_group_methods(c) != 0)
		return true; /* a group's limits or pause */
	if (strcmp(s0, "tubes") == 0)
		return c->nseg == 2 || strcmp(verb, "kick") == 0 ||
		    strcmp(verb, "release") == 0 ||
		    strcmp(verb, "pause") == 0 ||
		    (strcmp(verb, "tasks") == 0 && strcmp(m, "DELETE") == 0);
	if (strcmp(s0, "keys") == 0)
		return strcmp(m, "DELETE") == 0;
	if (strcmp(s0, "schedules") == 0)
		return true; /* set, delete, pause, resume */
	if (strcmp(s0, "batches") == 0)
		return strcmp(verb, "cancel") == 0;
	if (strcmp(s0, "tasks") != 0)
		return false;
	if (c->nseg == 2)
		return strcmp(m, "DELETE") == 0 ||
		    strcmp(c->seg[1], "delete") == 0 ||
		    strcmp(c->seg[1], "cancel") == 0;
	return strcmp(verb, "kick") == 0 || strcmp(verb, "update") == 0 ||
	    strcmp(verb, "cancel") == 0 ||
	    (c->nseg == 3 && http_query_flag(&c->q, "force"));
}

int
http_api_precheck(nng_http_req *req, bool admin, const char **why)
{
	const char *method = nng_http_req_get_method(req);
	struct http_api_call *c;
	bool split;
	int rc = 0;

	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return 0;
	if (cross_site(req)) {
		*why = CROSS_SITE;
		return SLUICE_EPERM;
	}
	if (admin)
		return 0;
	c = call_of(method, nng_http_req_get_uri(req), &split);
	if (c == NULL)
		return 0; /* the route finds out */
	if (split && path_methods(c) != 0 && admin_route(c)) {
		*why = READ_ONLY;
		rc = SLUICE_EPERM;
	}
	free(c);
	return rc;
}

/* The wire operation of the route of `c` (split), and the tube it names
 * for a tube's route other than a take (whose path may name several);
 * 0 for a read or no route. */
static uint8_t
route_op(struct http_api_call *c, char *tube, size_t cap)
{
	static const struct {
		const char *verb;
		uint8_t op;
	} task_ops[] = {
		{ "ack", MSG_OP_ACK },
		{ "release", MSG_OP_RELEASE },
		{ "fail", MSG_OP_FAIL },
		{ "touch", MSG_OP_TOUCH },
		{ "bury", MSG_OP_BURY },
		{ "kick", MSG_OP_KICK_ID },
		{ "update", MSG_OP_UPDATE },
		{ "cancel", MSG_OP_CANCEL },
	};
	const char *m = c->method, *s0 = c->nseg > 0 ? c->seg[0] : "";
	const char *verb = c->nseg > 2 ? c->seg[2] : "";
	bool post = strcmp(m, "POST") == 0, del = strcmp(m, "DELETE") == 0;

	tube[0] = '\0';
	if ((path_methods(c) & method_bit(m)) == 0)
		return 0;
	if (c->nseg == 1)
		return post && strcmp(s0, "snapshot") == 0 ? MSG_OP_SNAPSHOT
		                                           : 0;
	if (strcmp(s0, "keys") == 0)
		return del ? MSG_OP_DELETE_KEY : 0;
	if (strcmp(s0, "batches") == 0) /* its callbacks' tubes: core */
		return strcmp(m, "GET") == 0 ? 0 : MSG_OP_BATCH_SET;
	if (strcmp(s0, "schedules") == 0) {
		if (c->nseg == 3)
			return MSG_OP_SCHED_CTL;
		if (strcmp(m, "PUT") == 0 &&
		    !http_query_get(c->q.uri, "tube", tube, cap))
			tube[0] = '\0';
		return strcmp(m, "PUT") == 0 ? MSG_OP_SCHED_SET
		    : del                    ? MSG_OP_SCHED_CTL
		                             : 0;
	}
	if (strcmp(s0, "tasks") == 0) {
		if (c->nseg == 2)
			return del                          ? MSG_OP_DELETE
			    : strcmp(c->seg[1], "ack") == 0 ? MSG_OP_ACK_BATCH
			    : strcmp(c->seg[1], "delete") == 0
			    ? MSG_OP_DELETE_BATCH
			    : strcmp(c->seg[1], "cancel") == 0 ? MSG_OP_CANCEL
			                                       : 0;
		for (size_t i = 0; i < sizeof(task_ops) / sizeof(task_ops[0]);
		     i++)
			if (strcmp(verb, task_ops[i].verb) == 0)
				return task_ops[i].op;
		return 0;
	}
	if (strcmp(verb, "take") == 0)
		return MSG_OP_TAKE;
	snprintf(tube, cap, "%s", c->seg[1]);
	if (http_api_group_methods(c) != 0)
		return strcmp(m, "GET") == 0 ? 0 : MSG_OP_GROUP;
	if (c->nseg == 2)
		return strcmp(m, "PUT") == 0 ? MSG_OP_TUBE_SET
		    : del                    ? MSG_OP_TUBE_DELETE
		                             : 0;
	if (strcmp(verb, "tasks") == 0)
		return post
		    ? (http_query_flag(&c->q, "batch") ? MSG_OP_PUT_BATCH
		                                       : MSG_OP_PUT)
		    : del ? MSG_OP_DELETE_WHERE
		          : 0;
	return strcmp(verb, "kick") == 0   ? MSG_OP_KICK
	    : strcmp(verb, "release") == 0 ? MSG_OP_RELEASE_ALL
	    : strcmp(verb, "pause") == 0   ? MSG_OP_PAUSE
	                                   : 0;
}

uint8_t
http_api_op(nng_http_req *req, char *tube, size_t cap)
{
	bool split;
	struct http_api_call *c = call_of(
	    nng_http_req_get_method(req), nng_http_req_get_uri(req), &split);
	uint8_t op = 0;

	tube[0] = '\0';
	if (c == NULL)
		return 0;
	if (split)
		op = route_op(c, tube, cap);
	free(c);
	return op;
}

void
http_api_serve(nng_aio *aio)
{
	nng_http_req *r = nng_aio_get_input(aio, 0);
	struct http_api_call *c = malloc(sizeof(*c));
	void *body = NULL;

	if (c == NULL) {
		http_api_error(aio, SLUICE_ENOMEM, "out of memory");
		return;
	}
	c->aio = aio;
	c->method = nng_http_req_get_method(r);
	c->q.uri = http_uri(aio);
	c->q.err[0] = '\0';
	c->force = false;
	nng_http_req_get_data(r, &body, &c->body_len);
	c->body = body != NULL ? body : "";
	if (strncmp(c->q.uri, "/v1", 3) != 0 || !split_path(c))
		http_api_error(aio, SLUICE_EINVAL,
		    "bad path: too long, or a segment that does not decode");
	else if (strcmp(c->method, "GET") == 0 || same_origin(c))
		route(c);
	free(c);
}
