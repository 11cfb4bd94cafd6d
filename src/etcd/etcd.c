/* etcd - a blocking client of etcd's v3 JSON gateway (etcd.h), for the
 * election thread alone.
 *
 * A call is: the request as a JSON object (jansson), dumped compact;
 * a connection to an endpoint (the next one only when connecting fails);
 * one HTTP POST and its answer through nng's HTTP client, waited for on
 * an aio whose timeout is what is left of the call's budget; the answer
 * parsed back into a JSON object, then into the caller's values.
 *
 * The gateway speaks proto3's JSON mapping: int64 fields are strings of
 * digits, bytes fields are base64, and a field whose value is zero (or
 * empty, or false) is left out. So a missing "lease" is lease 0 and a
 * missing "value" an empty value; fields that can never be zero (a
 * lease's ID, a key's revisions, the answer's "header") are required,
 * and their absence means the answer is not what we asked for.
 *
 * Errors come back in two shapes: an HTTP status other than 200 with
 * {"error","message","code"} (code is the gRPC status; 5 is NotFound),
 * and, on the streaming keepalive, a 200 whose body is {"error":{...}}. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "etcd/etcd.h"
#include "util/base64.h"
#include "util/clock.h"

enum {
	ETCD_MAX_ENDPOINTS = 16,
	GRPC_NOT_FOUND = 5,
};

struct endpoint {
	char *url; /* as given, for messages */
	nng_url *nurl;
	nng_http_client *client;
};

struct etcd {
	struct endpoint ep[ETCD_MAX_ENDPOINTS];
	int n;
	int cur; /* tried first: the last that answered */
	int timeout_ms;
	char where[320]; /* "URL PATH" of the call under way */
	char msg[640];
};

static const char *const names[ETCD_ERRMAX_] = {
	[ETCD_OK] = "ok",
	[ETCD_EINVAL] = "invalid argument",
	[ETCD_ENOMEM] = "out of memory",
	[ETCD_ECONNECT] = "no etcd endpoint accepted a connection",
	[ETCD_ETIMEDOUT] = "etcd did not answer in time",
	[ETCD_EIO] = "the connection to etcd failed",
	[ETCD_EHTTP] = "etcd answered an error",
	[ETCD_EJSON] = "etcd's answer is not the JSON expected",
	[ETCD_ENOLEASE] = "no such lease",
};

const char *
etcd_strerror(int rc)
{
	if (rc >= 0 && rc < ETCD_ERRMAX_)
		return names[rc];
	return "unknown etcd error";
}

const char *
etcd_errmsg(const struct etcd *e)
{
	return e->msg;
}

/* Records the message of a failed call and returns `rc`. */
static int fail(struct etcd *e, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(struct etcd *e, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- Endpoints ---------------------------------------------------------- */

static int
add_endpoint(struct etcd *e, const char *url, char *err, size_t errlen)
{
	struct endpoint *ep = &e->ep[e->n];

	if (e->n == ETCD_MAX_ENDPOINTS) {
		snprintf(err, errlen, "more than %d etcd endpoints",
		    ETCD_MAX_ENDPOINTS);
		return ETCD_EINVAL;
	}
	if (nng_url_parse(&ep->nurl, url) != 0 ||
	    strcmp(ep->nurl->u_scheme, "http") != 0 ||
	    ep->nurl->u_hostname[0] == '\0') {
		snprintf(err, errlen,
		    "bad etcd endpoint \"%s\": expected http://HOST:PORT", url);
		nng_url_free(ep->nurl);
		ep->nurl = NULL;
		return ETCD_EINVAL;
	}
	if ((ep->url = strdup(url)) == NULL ||
	    nng_http_client_alloc(&ep->client, ep->nurl) != 0) {
		snprintf(err, errlen, "out of memory");
		free(ep->url);
		nng_url_free(ep->nurl);
		memset(ep, 0, sizeof(*ep));
		return ETCD_ENOMEM;
	}
	e->n++;
	return 0;
}

struct etcd *
etcd_new(const char *endpoints, int timeout_ms, char *err, size_t errlen)
{
	struct etcd *e = calloc(1, sizeof(*e));
	char *list = strdup(endpoints), *save = NULL;

	if (e == NULL || list == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (timeout_ms <= 0) {
		snprintf(err, errlen, "etcd timeout must be positive");
		goto fail;
	}
	e->timeout_ms = timeout_ms;
	for (char *s = strtok_r(list, ",", &save); s != NULL;
	     s = strtok_r(NULL, ",", &save)) {
		s += strspn(s, " \t");
		s[strcspn(s, " \t")] = '\0';
		if (*s != '\0' && add_endpoint(e, s, err, errlen) != 0)
			goto fail;
	}
	if (e->n == 0) {
		snprintf(err, errlen, "no etcd endpoint in \"%s\"", endpoints);
		goto fail;
	}
	free(list);
	return e;
fail:
	free(list);
	etcd_delete(e);
	return NULL;
}

void
etcd_delete(struct etcd *e)
{
	if (e == NULL)
		return;
	for (int i = 0; i < e->n; i++) {
		if (e->ep[i].client != NULL)
			nng_http_client_free(e->ep[i].client);
		nng_url_free(e->ep[i].nurl);
		free(e->ep[i].url);
	}
	free(e);
}

/* ---- One exchange ------------------------------------------------------- */

/* Waits for `aio`, started by the caller with its timeout set. Returns
 * nng's result. */
static int
wait_aio(nng_aio *aio)
{
	nng_aio_wait(aio);
	return nng_aio_result(aio);
}

/* Milliseconds left until `deadline` (monotonic), at least 1 so that nng
 * never takes 0 for "no timeout" (it takes it as "poll", but 1 is
 * clearer). */
static nng_duration
left_ms(int64_t deadline)
{
	int64_t left = deadline - clock_mono_ms();

	return left > 0 ? (nng_duration)left : 1;
}

/* The message of an error answer: "message" of its JSON (or of its
 * "error" object), else the body's first bytes. Sets *code to the gRPC
 * code when the body names one, else -1. */
static void
error_text(json_t *root, const char *body, size_t len, char *out, size_t outlen,
    int *code)
{
	json_t *err = json_object_get(root, "error");
	json_t *src = json_is_object(err) ? err : root;
	json_t *msg = json_object_get(src, "message");
	json_t *c = json_object_get(src, "code");

	if (c == NULL)
		c = json_object_get(src, "grpc_code");
	*code = json_is_integer(c) ? (int)json_integer_value(c) : -1;
	if (json_is_string(msg))
		snprintf(out, outlen, "%s", json_string_value(msg));
	else if (json_is_string(err))
		snprintf(out, outlen, "%s", json_string_value(err));
	else
		snprintf(
		    out, outlen, "%.*s", (int)(len < 200 ? len : 200), body);
}

/* An error answer: ETCD_ENOLEASE for a lease that does not exist (gRPC
 * NotFound about a lease), else ETCD_EHTTP. `status` 200 is the keepalive
 * stream's error object. */
static int
answer_error(struct etcd *e, unsigned status, const char *reason, json_t *root,
    const char *body, size_t len)
{
	char text[400];
	int code;

	error_text(root, body, len, text, sizeof(text), &code);
	if (code == GRPC_NOT_FOUND && strstr(text, "lease not found") != NULL)
		return fail(e, ETCD_ENOLEASE, "%s: %s", e->where, text);
	if (status == 200)
		return fail(e, ETCD_EHTTP, "%s: error: %s", e->where, text);
	return fail(e, ETCD_EHTTP, "%s: HTTP %u %s: %s", e->where, status,
	    reason, text);
}

/* Turns a complete HTTP answer into a JSON object in *out. */
static int
parse_answer(struct etcd *e, nng_http_res *res, json_t **out)
{
	unsigned status = nng_http_res_get_status(res);
	json_error_t jerr;
	json_t *root;
	void *body;
	size_t len;
	int rc;

	nng_http_res_get_data(res, &body, &len);
	root = json_loadb(body, len, 0, &jerr);
	if (status != 200 || json_object_get(root, "error") != NULL) {
		rc = answer_error(
		    e, status, nng_http_res_get_reason(res), root, body, len);
		json_decref(root);
		return rc;
	}
	if (root == NULL)
		return fail(e, ETCD_EJSON, "%s: malformed JSON (%s at byte %d)",
		    e->where, jerr.text, jerr.position);
	if (!json_is_object(root)) {
		json_decref(root);
		return fail(
		    e, ETCD_EJSON, "%s: the answer is not an object", e->where);
	}
	*out = root;
	return 0;
}

/* POSTs `text` to `path` over `conn` and parses the answer. */
static int
exchange(struct etcd *e, const struct endpoint *ep, nng_http_conn *conn,
    const char *path, const char *text, int64_t deadline, json_t **out)
{
	nng_http_req *req = NULL;
	nng_http_res *res = NULL;
	nng_aio *aio = NULL;
	int rv, rc;

	if (nng_http_req_alloc(&req, ep->nurl) != 0 ||
	    nng_http_res_alloc(&res) != 0 ||
	    nng_aio_alloc(&aio, NULL, NULL) != 0 ||
	    nng_http_req_set_method(req, "POST") != 0 ||
	    nng_http_req_set_uri(req, path) != 0 ||
	    nng_http_req_set_header(req, "Content-Type", "application/json") !=
	        0 ||
	    nng_http_req_set_data(req, text, strlen(text)) != 0) {
		rc = fail(e, ETCD_ENOMEM, "%s: out of memory", e->where);
		goto done;
	}
	nng_aio_set_timeout(aio, left_ms(deadline));
	nng_http_conn_transact(conn, req, res, aio);
	rv = wait_aio(aio);
	if (rv == NNG_ETIMEDOUT)
		rc = fail(e, ETCD_ETIMEDOUT, "%s: no answer within %d ms",
		    e->where, e->timeout_ms);
	else if (rv != 0)
		rc = fail(e, ETCD_EIO, "%s: %s", e->where, nng_strerror(rv));
	else
		rc = parse_answer(e, res, out);
done:
	nng_aio_free(aio);
	nng_http_res_free(res);
	nng_http_req_free(req);
	return rc;
}

/* Connects to `ep` within what is left until `deadline`.
 *
 * A connect that gives up (its timeout) leaves the client's own dial
 * aborted, its ending still to come on one of nng's threads; a connect
 * through the same client before that ending takes it for its own
 * ending with no connection, and nng 1.5's HTTP client stops the process
 * on its assertion ("stream != NULL"). So a client whose connect gave up
 * is replaced: freeing it waits for that ending. A client that could
 * not be made again (out of memory) is made at the next call. */
static int
connect_ep(struct endpoint *ep, int64_t deadline, nng_http_conn **conn)
{
	nng_aio *aio;
	int rv;

	if (ep->client == NULL &&
	    (rv = nng_http_client_alloc(&ep->client, ep->nurl)) != 0)
		return rv;
	if ((rv = nng_aio_alloc(&aio, NULL, NULL)) != 0)
		return rv;
	nng_aio_set_timeout(aio, left_ms(deadline));
	nng_http_client_connect(ep->client, aio);
	if ((rv = wait_aio(aio)) == 0)
		*conn = nng_aio_get_output(aio, 0);
	nng_aio_free(aio);
	if (rv == NNG_ETIMEDOUT || rv == NNG_ECANCELED) {
		nng_http_client_free(ep->client);
		ep->client = NULL;
		(void)nng_http_client_alloc(&ep->client, ep->nurl);
	}
	return rv;
}

/* One call: POSTs `body` to `path` on the first endpoint that accepts a
 * connection and returns its answer as an object in *out (the caller
 * decrefs it). Consumes nothing: the caller still owns `body`. */
static int
post(struct etcd *e, const char *path, json_t *body, json_t **out)
{
	int64_t deadline = clock_mono_ms() + e->timeout_ms;
	char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	int rc = ETCD_ECONNECT;

	if (text == NULL)
		return fail(e, ETCD_ENOMEM, "%s: out of memory", path);
	for (int k = 0; k < e->n; k++) {
		int i = (e->cur + k) % e->n;
		nng_http_conn *conn = NULL;
		int rv;

		snprintf(e->where, sizeof(e->where), "etcd %s %s", e->ep[i].url,
		    path);
		if (clock_mono_ms() >= deadline) {
			rc = fail(e, ETCD_ETIMEDOUT,
			    "%s: no endpoint connected within %d ms", e->where,
			    e->timeout_ms);
			break;
		}
		rv = connect_ep(&e->ep[i], deadline, &conn);
		if (rv == 0) {
			rc = exchange(
			    e, &e->ep[i], conn, path, text, deadline, out);
			nng_http_conn_close(conn);
			/* A member that timed out is tried last next time. */
			e->cur = rc == ETCD_ETIMEDOUT ? (i + 1) % e->n : i;
			break;
		}
		if (rv == NNG_ENOMEM) {
			rc =
			    fail(e, ETCD_ENOMEM, "%s: out of memory", e->where);
			break;
		}
		if (rv == NNG_ETIMEDOUT) {
			e->cur = (i + 1) % e->n;
			rc = fail(e, ETCD_ETIMEDOUT,
			    "%s: no connection within %d ms", e->where,
			    e->timeout_ms);
			break;
		}
		rc = fail(e, ETCD_ECONNECT, "%s: %s%s", e->where,
		    nng_strerror(rv),
		    e->n > 1 ? " (and every other endpoint)" : "");
	}
	free(text);
	return rc;
}

/* ---- JSON fields -------------------------------------------------------- */

static void
i64s(char buf[24], int64_t v)
{
	snprintf(buf, 24, "%" PRId64, v);
}

/* `len` bytes as a base64 JSON string (NULL when out of memory). */
static json_t *
b64(const void *p, size_t len)
{
	char *s = malloc(base64_len(len) + 1);
	json_t *j;

	if (s == NULL)
		return NULL;
	base64_encode(s, p, len);
	j = json_string(s);
	free(s);
	return j;
}

/* The int64 field `name` of `obj` into *out: a string of digits (or a
 * number), or 0 when absent and not `required`. */
static int
get_i64(
    struct etcd *e, json_t *obj, const char *name, bool required, int64_t *out)
{
	json_t *j = json_object_get(obj, name);
	const char *s;
	char *end;

	if (j == NULL) {
		if (required)
			return fail(e, ETCD_EJSON, "%s: field \"%s\" missing",
			    e->where, name);
		*out = 0;
		return 0;
	}
	if (json_is_integer(j)) {
		*out = json_integer_value(j);
		return 0;
	}
	s = json_string_value(j);
	if (s == NULL || *s == '\0')
		return fail(e, ETCD_EJSON, "%s: field \"%s\" is not an integer",
		    e->where, name);
	errno = 0;
	*out = strtoll(s, &end, 10);
	if (*end != '\0' || errno != 0)
		return fail(e, ETCD_EJSON, "%s: field \"%s\" is not an integer",
		    e->where, name);
	return 0;
}

/* The object field `name` of `obj`, or NULL (and the message set). */
static json_t *
get_obj(struct etcd *e, json_t *obj, const char *name)
{
	json_t *j = json_object_get(obj, name);

	if (!json_is_object(j)) {
		fail(e, ETCD_EJSON, "%s: field \"%s\" %s", e->where, name,
		    j == NULL ? "missing" : "is not an object");
		return NULL;
	}
	return j;
}

/* The base64 field `name` of `obj`, decoded into a new NUL-ended buffer;
 * an absent field is empty unless `required`. */
static int
get_bytes(struct etcd *e, json_t *obj, const char *name, bool required,
    uint8_t **out, size_t *len)
{
	json_t *j = json_object_get(obj, name);
	const char *s = json_string_value(j);
	size_t n = json_string_length(j);
	uint8_t *p;

	if (j == NULL && !required) {
		s = "";
		n = 0;
	} else if (s == NULL) {
		return fail(e, ETCD_EJSON, "%s: field \"%s\" %s", e->where,
		    name, j == NULL ? "missing" : "is not a string");
	}
	if ((p = malloc(n / 4 * 3 + 1)) == NULL)
		return fail(e, ETCD_ENOMEM, "%s: out of memory", e->where);
	if (!base64_decode(p, s, n, len)) {
		free(p);
		return fail(e, ETCD_EJSON, "%s: field \"%s\" is not base64",
		    e->where, name);
	}
	p[*len] = '\0';
	*out = p;
	return 0;
}

/* Every answer carries a header; one without is not etcd's. */
static int
check_header(struct etcd *e, json_t *obj)
{
	return get_obj(e, obj, "header") != NULL ? 0 : ETCD_EJSON;
}

void
etcd_kv_free(struct etcd_kv *kv)
{
	if (kv == NULL)
		return;
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

void
etcd_kvs_free(struct etcd_kvs *kvs)
{
	if (kvs == NULL)
		return;
	for (size_t i = 0; i < kvs->n; i++)
		etcd_kv_free(&kvs->kv[i]);
	free(kvs->kv);
	memset(kvs, 0, sizeof(*kvs));
}

static int
parse_kv(struct etcd *e, json_t *j, struct etcd_kv *kv)
{
	uint8_t *key = NULL;
	size_t klen;
	int rc;

	memset(kv, 0, sizeof(*kv));
	if (!json_is_object(j))
		return fail(
		    e, ETCD_EJSON, "%s: a key is not an object", e->where);
	if ((rc = get_bytes(e, j, "key", true, &key, &klen)) != 0 ||
	    (rc = get_bytes(e, j, "value", false, &kv->value, &kv->len)) != 0 ||
	    (rc = get_i64(e, j, "create_revision", true, &kv->create_rev)) !=
	        0 ||
	    (rc = get_i64(e, j, "mod_revision", true, &kv->mod_rev)) != 0 ||
	    (rc = get_i64(e, j, "version", true, &kv->version)) != 0 ||
	    (rc = get_i64(e, j, "lease", false, &kv->lease)) != 0) {
		free(key);
		etcd_kv_free(kv);
		return rc;
	}
	kv->key = (char *)key;
	return 0;
}

/* A RangeResponse (alone, or inside a transaction's answer). */
static int
parse_range(struct etcd *e, json_t *j, struct etcd_kvs *out)
{
	json_t *kvs = json_object_get(j, "kvs");
	json_t *hdr = get_obj(e, j, "header");
	size_t n = json_array_size(kvs);
	int rc;

	memset(out, 0, sizeof(*out));
	if (hdr == NULL)
		return ETCD_EJSON;
	if (kvs != NULL && !json_is_array(kvs))
		return fail(e, ETCD_EJSON, "%s: field \"kvs\" is not an array",
		    e->where);
	if ((rc = get_i64(e, hdr, "revision", true, &out->revision)) != 0)
		return rc;
	if (n == 0)
		return 0;
	if ((out->kv = calloc(n, sizeof(*out->kv))) == NULL)
		return fail(e, ETCD_ENOMEM, "%s: out of memory", e->where);
	for (; out->n < n; out->n++) {
		rc = parse_kv(e, json_array_get(kvs, out->n), &out->kv[out->n]);
		if (rc != 0) {
			etcd_kvs_free(out);
			return rc;
		}
	}
	return 0;
}

/* Moves the first key of `kvs` into *kv and frees the rest. */
static void
take_first(struct etcd_kvs *kvs, struct etcd_kv *kv)
{
	*kv = kvs->kv[0];
	memset(&kvs->kv[0], 0, sizeof(kvs->kv[0]));
	etcd_kvs_free(kvs);
}

/* ---- Leases ------------------------------------------------------------- */

int
etcd_lease_grant(struct etcd *e, int64_t ttl_s, int64_t *id, int64_t *granted_s)
{
	json_t *req, *ans = NULL;
	int64_t got_id, got_ttl;
	char ttl[24];
	int rc;

	if (ttl_s <= 0)
		return fail(e, ETCD_EINVAL, "lease TTL must be positive");
	i64s(ttl, ttl_s);
	req = json_pack("{s:s}", "TTL", ttl);
	if ((rc = post(e, "/v3/lease/grant", req, &ans)) == 0 &&
	    (rc = check_header(e, ans)) == 0 &&
	    (rc = get_i64(e, ans, "ID", true, &got_id)) == 0 &&
	    (rc = get_i64(e, ans, "TTL", true, &got_ttl)) == 0) {
		*id = got_id;
		*granted_s = got_ttl;
	}
	json_decref(ans);
	json_decref(req);
	return rc;
}

/* {"ID":"id"}, the body of the keepalive and revoke requests. */
static json_t *
lease_req(int64_t id)
{
	char s[24];

	i64s(s, id);
	return json_pack("{s:s}", "ID", s);
}

int
etcd_lease_keepalive(struct etcd *e, int64_t id, int64_t *ttl_s)
{
	json_t *req = lease_req(id), *ans = NULL, *result;
	int64_t ttl;
	int rc;

	/* A stream of answers in gRPC; one request gives one, under
	 * "result". A lease that is gone comes back with TTL 0. */
	if ((rc = post(e, "/v3/lease/keepalive", req, &ans)) == 0) {
		if ((result = get_obj(e, ans, "result")) == NULL)
			rc = ETCD_EJSON;
		else if ((rc = check_header(e, result)) == 0 &&
		    (rc = get_i64(e, result, "TTL", false, &ttl)) == 0) {
			if (ttl > 0)
				*ttl_s = ttl;
			else
				rc = fail(e, ETCD_ENOLEASE,
				    "%s: lease %" PRId64
				    " not found (expired or revoked)",
				    e->where, id);
		}
	}
	json_decref(ans);
	json_decref(req);
	return rc;
}

int
etcd_lease_revoke(struct etcd *e, int64_t id)
{
	json_t *req = lease_req(id), *ans = NULL;
	int rc;

	if ((rc = post(e, "/v3/lease/revoke", req, &ans)) == 0)
		rc = check_header(e, ans);
	json_decref(ans);
	json_decref(req);
	return rc;
}

/* ---- Keys --------------------------------------------------------------- */

/* {"key":..., "value":..., "lease":...}: a PutRequest. NULL when out of
 * memory. */
static json_t *
put_req(const char *key, const void *value, size_t len, int64_t lease)
{
	char ls[24];

	i64s(ls, lease);
	return json_pack("{s:o, s:o, s:s}", "key", b64(key, strlen(key)),
	    "value", b64(value, len), "lease", ls);
}

int
etcd_put(struct etcd *e, const char *key, const void *value, size_t len,
    int64_t lease)
{
	json_t *req = put_req(key, value, len, lease), *ans = NULL;
	int rc;

	if ((rc = post(e, "/v3/kv/put", req, &ans)) == 0)
		rc = check_header(e, ans);
	json_decref(ans);
	json_decref(req);
	return rc;
}

/* The answer of the create transaction: succeeded, or the key as it is
 * (the failure branch's range). */
static int
parse_create(struct etcd *e, json_t *ans, bool *created, struct etcd_kv *cur)
{
	json_t *ok = json_object_get(ans, "succeeded");
	json_t *range;
	struct etcd_kvs kvs;
	int rc;

	if ((rc = check_header(e, ans)) != 0)
		return rc;
	if (ok != NULL && !json_is_boolean(ok))
		return fail(e, ETCD_EJSON,
		    "%s: field \"succeeded\" is not a boolean", e->where);
	if (json_is_true(ok)) {
		*created = true;
		return 0;
	}
	range = json_object_get(
	    json_array_get(json_object_get(ans, "responses"), 0),
	    "response_range");
	if (range == NULL)
		return fail(e, ETCD_EJSON,
		    "%s: a failed transaction without its range", e->where);
	if ((rc = parse_range(e, range, &kvs)) != 0)
		return rc;
	/* Atomic: the comparison failed because the key was there. */
	if (kvs.n == 0) {
		etcd_kvs_free(&kvs);
		return fail(e, ETCD_EJSON,
		    "%s: the transaction failed on a key that is absent",
		    e->where);
	}
	*created = false;
	if (cur != NULL)
		take_first(&kvs, cur);
	else
		etcd_kvs_free(&kvs);
	return 0;
}

int
etcd_create(struct etcd *e, const char *key, const void *value, size_t len,
    int64_t lease, bool *created, struct etcd_kv *cur)
{
	json_t *k = b64(key, strlen(key)), *put, *req = NULL, *ans = NULL;
	int rc;

	put = put_req(key, value, len, lease);
	if (k != NULL && put != NULL)
		req = json_pack("{s:[{s:O, s:s, s:s, s:s}], s:[{s:O}], "
		                "s:[{s:{s:O}}]}",
		    "compare", "key", k, "result", "EQUAL", "target", "CREATE",
		    "create_revision", "0", "success", "request_put", put,
		    "failure", "request_range", "key", k);
	if ((rc = post(e, "/v3/kv/txn", req, &ans)) == 0)
		rc = parse_create(e, ans, created, cur);
	json_decref(ans);
	json_decref(req);
	json_decref(put);
	json_decref(k);
	return rc;
}

int
etcd_put_if_lease(struct etcd *e, const char *key, const void *value,
    size_t len, int64_t lease, const char *guard, int64_t guard_lease,
    bool *done)
{
	json_t *g = b64(guard, strlen(guard)), *put, *req = NULL, *ans = NULL;
	json_t *ok;
	char ls[24];
	int rc;

	i64s(ls, guard_lease);
	put = put_req(key, value, len, lease);
	if (g != NULL && put != NULL)
		req = json_pack("{s:[{s:O, s:s, s:s, s:s}], s:[{s:O}]}",
		    "compare", "key", g, "result", "EQUAL", "target", "LEASE",
		    "lease", ls, "success", "request_put", put);
	if ((rc = post(e, "/v3/kv/txn", req, &ans)) == 0 &&
	    (rc = check_header(e, ans)) == 0) {
		ok = json_object_get(ans, "succeeded");
		if (ok != NULL && !json_is_boolean(ok))
			rc = fail(e, ETCD_EJSON,
			    "%s: field \"succeeded\" is not a boolean",
			    e->where);
		else
			*done = json_is_true(ok);
	}
	json_decref(ans);
	json_decref(req);
	json_decref(put);
	json_decref(g);
	return rc;
}

/* A range of [key, end) (end NULL: the key alone). */
static int
range(struct etcd *e, const char *key, const char *end, struct etcd_kvs *out)
{
	json_t *req = json_pack("{s:o}", "key", b64(key, strlen(key)));
	json_t *ans = NULL;
	int rc;

	if (req != NULL && end != NULL &&
	    json_object_set_new(req, "range_end", b64(end, strlen(end))) != 0) {
		json_decref(req);
		req = NULL;
	}
	if ((rc = post(e, "/v3/kv/range", req, &ans)) == 0)
		rc = parse_range(e, ans, out);
	json_decref(ans);
	json_decref(req);
	return rc;
}

int
etcd_get(struct etcd *e, const char *key, bool *found, struct etcd_kv *kv)
{
	struct etcd_kvs kvs;
	int rc;

	if ((rc = range(e, key, NULL, &kvs)) != 0)
		return rc;
	*found = kvs.n > 0;
	if (*found)
		take_first(&kvs, kv);
	else
		etcd_kvs_free(&kvs);
	return 0;
}

int
etcd_get_prefix(struct etcd *e, const char *prefix, struct etcd_kvs *out)
{
	size_t n = strlen(prefix);
	char *end;
	int rc;

	/* The first key past the prefix: its last byte that can grow, grown,
	 * and what follows it cut off. */
	while (n > 0 && (unsigned char)prefix[n - 1] == 0xff)
		n--;
	if (n == 0)
		return fail(e, ETCD_EINVAL,
		    "etcd key prefix empty or made of 0xff bytes only");
	if ((end = strndup(prefix, n)) == NULL)
		return fail(e, ETCD_ENOMEM, "out of memory");
	end[n - 1]++;
	rc = range(e, prefix, end, out);
	free(end);
	return rc;
}

int
etcd_del(struct etcd *e, const char *key, bool *deleted)
{
	json_t *req = json_pack("{s:o}", "key", b64(key, strlen(key)));
	json_t *ans = NULL;
	int64_t n;
	int rc;

	if ((rc = post(e, "/v3/kv/deleterange", req, &ans)) == 0 &&
	    (rc = check_header(e, ans)) == 0 &&
	    (rc = get_i64(e, ans, "deleted", false, &n)) == 0 &&
	    deleted != NULL)
		*deleted = n > 0;
	json_decref(ans);
	json_decref(req);
	return rc;
}

/* ---- Two keys in one transaction ---------------------------------------- */

/* Posts transaction `req` (NULL: out of memory before it was made) and
 * reads its answer: the revision after it and whether it succeeded. */
static int
txn(struct etcd *e, json_t *req, bool *done, int64_t *revision)
{
	json_t *ans = NULL, *ok, *hdr;
	int rc;

	if ((rc = post(e, "/v3/kv/txn", req, &ans)) == 0 &&
	    (hdr = get_obj(e, ans, "header")) != NULL &&
	    (rc = get_i64(e, hdr, "revision", true, revision)) == 0) {
		ok = json_object_get(ans, "succeeded");
		if (ok != NULL && !json_is_boolean(ok))
			rc = fail(e, ETCD_EJSON,
			    "%s: field \"succeeded\" is not a boolean",
			    e->where);
		else
			*done = json_is_true(ok);
	} else if (rc == 0) {
		rc = ETCD_EJSON;
	}
	json_decref(ans);
	return rc;
}

int
etcd_put_marked(struct etcd *e, const char *key, const void *value, size_t len,
    const char *marker, const void *mval, size_t mlen, bool *done,
    int64_t *revision)
{
	json_t *k = b64(key, strlen(key)), *op = NULL, *mark, *req = NULL;
	int rc;

	mark = put_req(marker, mval, mlen, 0);
	if (value != NULL)
		op = json_pack(
		    "{s:o}", "request_put", put_req(key, value, len, 0));
	else if (k != NULL)
		op = json_pack("{s:{s:O}}", "request_delete_range", "key", k);
	if (k != NULL && op != NULL && mark != NULL) {
		/* a delete happens only to a key that exists */
		if (value == NULL)
			req = json_pack("{s:[{s:O, s:s, s:s, s:s}], s:[O, "
			                "{s:O}]}",
			    "compare", "key", k, "result", "GREATER", "target",
			    "CREATE", "create_revision", "0", "success", op,
			    "request_put", mark);
		else
			req = json_pack("{s:[O, {s:O}]}", "success", op,
			    "request_put", mark);
	}
	rc = txn(e, req, done, revision);
	json_decref(req);
	json_decref(op);
	json_decref(mark);
	json_decref(k);
	return rc;
}

int
etcd_put_marked_if(struct etcd *e, const char *key, const void *value,
    size_t len, const void *expect, size_t elen, const char *marker,
    const void *mval, size_t mlen, bool *done, int64_t *revision)
{
	json_t *k = b64(key, strlen(key)), *v = b64(expect, elen);
	json_t *op = NULL, *mark = put_req(marker, mval, mlen, 0);
	json_t *req = NULL;
	int rc;

	op = json_pack("{s:o}", "request_put", put_req(key, value, len, 0));
	if (k != NULL && v != NULL && op != NULL && mark != NULL)
		req = json_pack("{s:[{s:O, s:s, s:s, s:O}], s:[O, {s:O}]}",
		    "compare", "key", k, "result", "EQUAL", "target", "VALUE",
		    "value", v, "success", op, "request_put", mark);
	rc = txn(e, req, done, revision);
	json_decref(req);
	json_decref(op);
	json_decref(mark);
	json_decref(v);
	json_decref(k);
	return rc;
}
