/* http_gate - what a request of the HTTP face meets before its route
 * runs (http_gate.h). The server (http_srv.c) reads no body: it calls
 * http_gate_dispatch right after a request's head; the route is found
 * (none: http_gate_none, through the gate as well), and the body (if
 * any) is read here, only once the request passed, in this order:
 *   1. its Host is one this face serves (DNS rebinding: a page of
 *      attacker.example rebound to 127.0.0.1 sends its own name), else
 *      421;
 *   2. its framing (http_body.h): Content-Length or chunked, not both
 *      (400), no other transfer coding (501);
 *   3. its expectation: an HTTP/1.1 request's Expect other than
 *      100-continue is 417 (RFC 9110 10.1.1);
 *   4. its route: a path no route serves is 404; a path served with
 *      other methods 405, with Allow naming them (OPTIONS answers 200
 *      with the same Allow);
 *   5. with --auth, its bearer token: the core is asked first (a wire
 *      auth request carrying the request's bearer, through http_post: a
 *      token it does not know is answered 401 after its usual pause,
 *      and one past its bounds closes the connection), so a request
 *      without a known token never has a byte of its body read,
 *      whatever its size; the request names the operation its route
 *      sends and the tube of its path, so a token whose role or tubes
 *      may not is answered 403 there, its body unread too;
 *   6. a task API write the API refuses whatever its body (403: from a
 *      page of another origin, an admin write without --http-admin;
 *      http_api_precheck);
 *   7. its size against its route's limit (http_api_body_max; none for
 *      the face's own pages), else 413;
 *   8. the body itself, within --http-body-timeout (http_body.c), after
 *      "100 Continue" when the request expects it.
 * Steps 5 to 8 are only for a request with a body; one without goes to
 * its route after step 4 (which checks its token, by its operation).
 * A request refused with its body unread is answered with "Connection:
 * close", and what its client still sends is read and dropped for a
 * moment before the connection closes (http_srv.c): its body is never
 * taken for the next request, and a client that waited for "100
 * Continue" has its answer at once and sends nothing. A refusal of a
 * task API route, and a 405 of any route, is in the API's shape
 * (http_api_refuse), another of a page in plain text. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "proto/msg.h"
#include "server/face/http/http_api.h"
#include "server/face/http/http_api_answer.h"
#include "server/face/http/http_body.h"
#include "server/face/http/http_face.h"
#include "server/face/http/http_gate.h"
#include "server/face/http/http_respond.h"
#include "server/face/http/http_srv.h"
#include "sluice.h"

/* One request whose body is being read. */
struct http_gate_call {
	nng_aio *aio; /* the server's, of the request */
	const struct http_route *rt;
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
gate_refuse(nng_aio *aio, const struct http_route *rt, uint16_t status,
    int code, const char *text, bool close)
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
	http_respond_x(aio, status, "text/plain; charset=utf-8", line,
	    (size_t)n, status == 401 ? "WWW-Authenticate" : NULL,
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
	struct http_gate_call *x = arg;
	nng_aio *aio = x->aio;
	const struct http_route *rt = x->rt;

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

enum expect { EXPECT_NONE, EXPECT_CONTINUE, EXPECT_UNKNOWN };

/* What an HTTP/1.1 request expects (an HTTP/1.0 one's Expect is ignored,
 * RFC 9110 10.1.1). */
static enum expect
expects(nng_http_req *req)
{
	const char *v = nng_http_req_get_header(req, "Expect");

	if (v == NULL || strcmp(nng_http_req_get_version(req), "HTTP/1.1") != 0)
		return EXPECT_NONE;
	return strcasecmp(v, "100-continue") == 0 ? EXPECT_CONTINUE
	                                          : EXPECT_UNKNOWN;
}

/* Reads the body, unless the request is refused whatever it holds: a
 * write the API refuses (403), a length over the route's limit (413). */
static void
read_body(struct http_gate_call *x)
{
	struct http_conn *conn = nng_aio_get_input(x->aio, 2);
	nng_http_req *req = nng_aio_get_input(x->aio, 0);
	const char *why = NULL;
	char text[160];

	if (x->rt->v1 && http_api_precheck(req, x->rt->h->admin, &why) != 0) {
		nng_aio *aio = x->aio;
		const struct http_route *rt = x->rt;

		free(x);
		gate_refuse(aio, rt, 403, SLUICE_EPERM, why, true);
		return;
	}
	if (x->f.length > x->limit) {
		nng_aio *aio = x->aio;
		const struct http_route *rt = x->rt;

		snprintf(text, sizeof(text),
		    "the body is over this route's limit of %zu bytes",
		    x->limit);
		free(x);
		gate_refuse(aio, rt, 413, SLUICE_ETOOBIG, text, true);
		return;
	}
	if (expects(req) == EXPECT_CONTINUE)
		http_conn_continue(conn); /* a client waits for it to send */
	http_body_read(
	    conn, &x->f, x->limit, x->rt->h->body_timeout_ms, body_done, x);
}

/* The core's answer to the bearer check (an auth request): the body is
 * read only when the token is known. */
static void
bearer_answer(nng_aio *aio, const struct msg_rep *rep, void *arg)
{
	struct http_gate_call *x = *(struct http_gate_call **)arg;

	(void)aio;
	if (rep == NULL) { /* past the bounds on refusals: close */
		free(x);
		nng_aio_finish(aio, NNG_ECLOSED);
		return;
	}
	if (rep->status == SLUICE_EAUTH) {
		const struct http_route *rt = x->rt;

		free(x);
		gate_refuse(
		    aio, rt, 401, SLUICE_EAUTH, "unauthenticated", true);
		return;
	}
	if (rep->status == SLUICE_EPERM) { /* the token's role or tube */
		const struct http_route *rt = x->rt;

		free(x);
		gate_refuse(aio, rt, 403, SLUICE_EPERM, "not allowed", true);
		return;
	}
	/* Not checked: the core is not serving yet (or any more), or no
	 * memory to ask it. Any other answer came after the core found
	 * the token (an error then is the op's, not the token's: a
	 * degraded cluster's EREPLICA, say), and the request goes on. */
	if (rep->status == SLUICE_ESHUTDOWN || rep->status == SLUICE_ENOMEM) {
		const struct http_route *rt = x->rt;
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

static void gate_none(nng_aio *aio, bool close);

/* Every route's entry: the gate above, then the route. */
static void
on_request(nng_aio *aio)
{
	const struct http_route *rt = http_route_of(aio);
	struct http *h = rt->h;
	nng_http_req *req = nng_aio_get_input(aio, 0);
	struct http_framing f;
	const char *why = NULL;
	int st = http_body_framing(req, &f, &why);
	bool pending = st != 0 || http_body_pending(&f);
	struct http_gate_call *x, **px;
	char tube[MSG_TUBE_MAX + 1], what[MSG_TUBE_MAX + 8];
	uint8_t op;

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
	if (expects(req) == EXPECT_UNKNOWN) {
		gate_refuse(aio, rt, 417, SLUICE_EINVAL,
		    "the only expectation this server knows is 100-continue",
		    pending);
		return;
	}
	if (rt == &h->none) {
		gate_none(aio, pending);
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
	/* The check names the operation the route will send, and the tube
	 * its path names, so that the token's role and tubes are judged
	 * before the body too ("OP TUBE", ops/auth.c); "bearer" for a page
	 * of the face's own. */
	op = rt->v1 ? http_api_op(req, tube, sizeof(tube)) : 0;
	if (op != 0)
		snprintf(
		    what, sizeof(what), "%u%s%s", op, tube[0] ? " " : "", tube);
	else
		snprintf(what, sizeof(what), "bearer");
	http_post(h, aio,
	    &(struct msg_req) { .op = MSG_OP_AUTH, .token = msg_cstr(what) },
	    bearer_answer, px);
}

/* Whatever no route takes (http_gate_none), through the gate, so a body
 * is never left to be read as the next request: `close` when it is. */
static void
gate_none(nng_aio *aio, bool close)
{
	struct http *h = http_route_of(aio)->h;
	nng_http_req *req = nng_aio_get_input(aio, 0);
	const char *uri = nng_http_req_get_uri(req);
	const char *method = nng_http_req_get_method(req);
	unsigned allowed = http_gate_methods(h, uri);
	char allow[64], text[256];

	if (allowed == 0) {
		if (strncmp(uri, "/v1/", 4) == 0 ||
		    (strcspn(uri, "?#") == 3 && strncmp(uri, "/v1", 3) == 0))
			http_api_refuse(aio, 404, SLUICE_ENOTFOUND,
			    "no such route: see GET /v1/openapi.json", close);
		else
			http_respond_x(aio, 404, "text/plain; charset=utf-8",
			    "no such page\n", 13, NULL, NULL, close);
		return;
	}
	http_gate_allow(allowed, allow, sizeof(allow));
	if (strcmp(method, "OPTIONS") == 0) {
		http_respond_x(aio, 200, "text/plain; charset=utf-8", "", 0,
		    "Allow", allow, close);
		return;
	}
	snprintf(text, sizeof(text),
	    "method %s not allowed on %.*s: it takes %s", method,
	    (int)(strcspn(uri, "?#") < 64 ? strcspn(uri, "?#") : 64), uri,
	    allow);
	http_api_refuse_allow(aio, SLUICE_EUNKNOWNOP, text, allow, close);
}

void
http_gate_none(nng_aio *aio)
{
	gate_none(aio, false);
}

/* ---- routes ------------------------------------------------------------ */

/* Registers `cb` (through the gate) for `method` on `path` (NULL: every
 * method), and with `tree` every path under it too. */
int
http_gate_route(struct http *h, const char *path, const char *method,
    void (*cb)(nng_aio *), bool tree)
{
	struct http_route *rt;

	if (h->nroutes == HTTP_ROUTES_MAX)
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
route_path(const struct http_route *rt, const char *uri)
{
	size_t plen = strcspn(uri, "?#"), rlen = strlen(rt->path);

	if (plen == rlen)
		return strncmp(uri, rt->path, plen) == 0;
	return rt->tree && plen > rlen && uri[rlen] == '/' &&
	    strncmp(uri, rt->path, rlen) == 0;
}

static unsigned
method_bit(const char *m)
{
	return strcmp(m, "GET") == 0   ? HTTP_M_GET
	    : strcmp(m, "POST") == 0   ? HTTP_M_POST
	    : strcmp(m, "PUT") == 0    ? HTTP_M_PUT
	    : strcmp(m, "DELETE") == 0 ? HTTP_M_DELETE
	                               : 0;
}

unsigned
http_gate_methods(const struct http *h, const char *uri)
{
	unsigned m = 0;
	bool api = false;

	for (size_t i = 0; i < h->nroutes; i++) {
		const struct http_route *rt = &h->routes[i];

		if (!route_path(rt, uri))
			continue;
		if (!rt->v1)
			m |= method_bit(rt->method);
		else if (!api) {
			m |= http_api_methods(uri);
			api = true;
		}
	}
	return m;
}

void
http_gate_allow(unsigned methods, char *out, size_t cap)
{
	static const struct {
		unsigned bit;
		const char *names;
	} order[] = {
		{ HTTP_M_GET, "GET, HEAD" },
		{ HTTP_M_POST, "POST" },
		{ HTTP_M_PUT, "PUT" },
		{ HTTP_M_DELETE, "DELETE" },
	};
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (methods & order[i].bit)
			n += (size_t)snprintf(out + n, n < cap ? cap - n : 0,
			    "%s, ", order[i].names);
	snprintf(
	    out + (n < cap ? n : cap - 1), n < cap ? cap - n : 1, "OPTIONS");
}

/* The server's handler: the request's route (HEAD as GET; none:
 * http_gate_none, which answers 404, 405 or OPTIONS), through the gate.
 * A path's methods are the task API's own for /v1/ (a route of the
 * tree may take a method on one path and not on another). */
void
http_gate_dispatch(nng_aio *aio, void *arg)
{
	struct http *h = arg;
	nng_http_req *req = nng_aio_get_input(aio, 0);
	const char *uri = nng_http_req_get_uri(req);
	const char *method = nng_http_req_get_method(req);
	const struct http_route *rt = &h->none;

	if (strcmp(method, "HEAD") == 0)
		method = "GET";
	if ((http_gate_methods(h, uri) & method_bit(method)) != 0)
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
int
http_gate_hosts(struct http *h, const char *addr, const struct http_conf *conf)
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
