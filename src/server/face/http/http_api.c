/* http_api - see http_api.h; the routes, their parameters and answers
 * are in docs/http-api.md and GET /v1/openapi.json (openapi.json, built
 * into the binary).
 *
 * A request becomes one wire request (proto/msg.h), posted to the core
 * through http.c (http_post) like the face's other pages; the core checks
 * a bearer token with --auth by the operation, as for any client, and
 * answers writes once they are durable. The answer is written here, on an
 * nng thread, in the JSON of `sluice ... --json` (proto/json.c).
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

#include <jansson.h>
#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "client/result.h"
#include "json/json.h"
#include "proto/msg.h"
#include "server/face/http/http_api.h"
#include "server/face/http/http_face.h"
#include "sluice.h"
#include "util/base64.h"
#include "util/dur.h"

enum {
	PATH_MAX_ = MSG_TAKE_TUBES_MAX * (MSG_TUBE_MAX + 1) + 64,
	SEGS_MAX = 6,
	WAIT_MAX_MS = 60000, /* a take's longest wait */
	LIST_DEFAULT = 50,
	RETRY_AFTER_S = 1,
	ERRTEXT = 256,
	/* A batch body's JSON: 1..MSG_BATCH_MAX items, each an object of a
	 * dozen fields at most; a body of more values (or deeper) is
	 * refused before it is parsed (json_within): the parse's memory
	 * stays about the body's size plus a few MB. */
	JSON_VALUES_MAX = MSG_BATCH_MAX * 32 + 1,
	JSON_DEPTH_MAX = 4,
	/* Bodies (http_api_body_max): a route without a payload takes a
	 * short text at most (fail's error, ack's result: MSG_TEXT_MAX,
	 * said 400 past it), an ack or delete batch 1000 small items. */
	BODY_SMALL = 16 << 10,
	BODY_IDS = 1 << 20,
};

/* The built-in OpenAPI description (openapi.json, embedded at build). */
extern const unsigned char http_openapi_json[];
extern const size_t http_openapi_json_len;

/* ---- answers ----------------------------------------------------------- */

/* The HTTP status of an error code. */
static uint16_t
err_status(int code, bool has_leader)
{
	switch (code) {
	case SLUICE_ENOTFOUND:
		return 404;
	case SLUICE_ESTALE:
	case SLUICE_ESTATE:
	case SLUICE_EEXIST:
	case SLUICE_EPAUSED:
	case SLUICE_ENOTEMPTY:
		return 409;
	case SLUICE_ETOOBIG:
	case SLUICE_EMSGSIZE:
		return 413;
	case SLUICE_EAUTH:
		return 401;
	case SLUICE_EPERM:
		return 403;
	case SLUICE_ENOTLEADER:
		return has_leader ? 421 : 503;
	case SLUICE_ENOSPC:
	case SLUICE_ELOG:
	case SLUICE_ESHUTDOWN:
	case SLUICE_EREPLICA:
	case SLUICE_EEPOCH:
	case SLUICE_ETIMEDOUT:
		return 503;
	case SLUICE_ENOMEM:
	case SLUICE_ECORRUPT:
		return 500;
	default: /* bad input: tube, key, value, limit, message */
		return 400;
	}
}

static void
respond_json(nng_aio *aio, uint16_t status, const char *body, size_t len,
    const char *hname, const char *hval)
{
	http_respond(aio, status, "application/json", body, len, hname, hval);
}

/* {"error":NAME,"code":N,"message":TEXT without its closing brace; TEXT
 * is the code's own when `len` is 0. */
static void
json_error_open(FILE *f, int code, const char *msg, size_t len)
{
	if (len == 0) {
		msg = sluice_strerror(code);
		len = strlen(msg);
	}
	fprintf(f,
	    "{\"error\":\"%s\",\"code\":%d,\"message\":", sluice_errname(code),
	    code);
	json_str(f, msg, len);
}

/* {"error":"stale_lease","code":2,"message":"..."} (and "leader":URL, the
 * leader's client URL, on a follower), with `status` (0: the code's);
 * `close`: the connection is closed after it. */
static void
respond_error_x(nng_aio *aio, uint16_t status, int code, const char *msg,
    size_t msg_len, const char *leader, size_t leader_len, bool close)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);

	if (f == NULL) {
		http_respond_x(aio, 500, "text/plain", "out of memory\n", 14,
		    NULL, NULL, close);
		return;
	}
	json_error_open(f, code, msg, msg_len);
	if (leader_len > 0) {
		fputs(",\"leader\":", f);
		json_str(f, leader, leader_len);
	}
	fputc('}', f);
	fclose(f);
	if (status == 0)
		status = err_status(code, leader_len > 0);
	if (status == 401)
		http_respond_x(aio, status, "application/json", body, len,
		    "WWW-Authenticate", "Bearer", close);
	else if (status == 503)
		http_respond_x(aio, status, "application/json", body, len,
		    "Retry-After", "1", close);
	else
		http_respond_x(aio, status, "application/json", body, len, NULL,
		    NULL, close);
	free(body);
}

static void
respond_error(nng_aio *aio, int code, const char *msg, size_t msg_len,
    const char *leader, size_t leader_len)
{
	respond_error_x(aio, 0, code, msg, msg_len, leader, leader_len, false);
}

void
http_api_refuse(
    nng_aio *aio, uint16_t status, int code, const char *msg, bool close)
{
	respond_error_x(aio, status, code, msg, strlen(msg), NULL, 0, close);
}

static void
respond_errc(nng_aio *aio, int code, const char *msg)
{
	respond_error(aio, code, msg, strlen(msg), NULL, 0);
}

/* What the answer to a request looks like. */
enum shape {
	SH_PUT,       /* {"id":N,"created":B} */
	SH_PUT_BATCH, /* {"results":[{"id":N,"created":B}|ERROR,...]} */
	SH_ITEMS,     /* ack/delete batch: {"results":[{"id":N}|ERROR]} */
	SH_TASKS,     /* {"tasks":[...]} */
	SH_PAGE,      /* {"tasks":[...],"next":ID|null}: a list in id order */
	SH_KEY_TASKS, /* peek by key as {"tasks":[]} or one of `tube` */
	SH_TASK,      /* one task */
	SH_AFTER,     /* json_after */
	SH_COUNT,     /* {"<count_key>":N} */
	SH_DELETED,   /* {"deleted":1,"id":N} */
	SH_STATS,
	SH_ERRORS,
	SH_HOURS,
	SH_CONF,  /* a tube's settings */
	SH_PAUSE, /* {"paused_until":MS} */
	SH_LSN,   /* {"lsn":N} */
};

/* An item of a batch refused here, before the core saw it. */
struct item_err {
	int code; /* 0: sent to the core */
	char msg[128];
};

/* The answer's context: freed by http.c after the answer. */
struct ans {
	enum shape shape;
	const char *count_key;
	uint64_t id;    /* SH_DELETED */
	uint32_t limit; /* SH_PAGE: a full page has more after it */
	char tube[MSG_TUBE_MAX + 1];
	uint32_t n;            /* batch items, in the request's order */
	uint64_t *ids;         /* SH_ITEMS: each item's id */
	struct item_err *errs; /* SH_PUT_BATCH: each item's refusal */
	union {                /* room for n of either; ids or errs use it */
		uint64_t id;
		struct item_err err;
	} items[];
};

static void
json_item_error(FILE *f, int code, const char *msg, size_t len)
{
	json_error_open(f, code, msg, len);
	fputc('}', f);
}

/* A batch put's results: the core's for the items it got, in order,
 * merged with those refused here. */
static void
put_batch_results(FILE *f, const struct ans *a, const struct msg_rep *rep)
{
	struct msg_iter it =
	    rep != NULL ? rep->put_batch.it : (struct msg_iter) { 0 };
	struct msg_put_res pr;

	fputs("{\"results\":[", f);
	for (uint32_t i = 0; i < a->n; i++) {
		const struct item_err *e = &a->errs[i];

		if (i)
			fputc(',', f);
		if (e->code != 0)
			json_item_error(f, e->code, e->msg, strlen(e->msg));
		else if (!msg_next_put_res(&it, &pr))
			json_item_error(f, SLUICE_EPROTO, "", 0);
		else if (pr.status != 0)
			json_item_error(
			    f, pr.status, pr.message.p, pr.message.len);
		else
			fprintf(f, "{\"id\":%" PRIu64 ",\"created\":%s}", pr.id,
			    pr.created ? "true" : "false");
	}
	fputs("]}", f);
}

static void
items_results(FILE *f, const struct ans *a, const struct msg_rep *rep)
{
	struct msg_iter it = rep->batch.it;
	struct msg_item_res ir;

	fputs("{\"results\":[", f);
	for (uint32_t i = 0; i < a->n && msg_next_item_res(&it, &ir); i++) {
		if (i)
			fputc(',', f);
		if (ir.status == 0) {
			fprintf(f, "{\"id\":%" PRIu64 "}", a->ids[i]);
			continue;
		}
		fprintf(f,
		    "{\"id\":%" PRIu64 ",\"error\":\"%s\",\"code\":%d,"
		    "\"message\":",
		    a->ids[i], sluice_errname(ir.status), ir.status);
		if (ir.message.len > 0)
			json_str(f, ir.message.p, ir.message.len);
		else
			json_cstr(f, sluice_strerror(ir.status));
		fputc('}', f);
	}
	fputs("]}", f);
}

static int
write_task(FILE *f, const struct msg_task *m, bool as_list)
{
	struct sluice_task *t;
	int rc = result_task(m, &t);

	if (rc != 0)
		return rc;
	if (as_list)
		json_tasks(f, t, 1);
	else
		json_task(f, t);
	free(t);
	return 0;
}

static void
write_hours(FILE *f, const struct msg_hours *h)
{
	struct sluice_hour v[MSG_HOURS_MAX];
	struct msg_iter it = h->it;
	struct msg_hour m;
	size_t n = 0;

	while (n < MSG_HOURS_MAX && msg_next_hour(&it, &m)) {
		v[n] = (struct sluice_hour) { m.start, m.acks, m.fails,
			m.buries, m.ttr_expired,
			{ m.work.count, m.work.total, m.work.max, m.work.p50,
			    m.work.p99 },
			{ m.wait.count, m.wait.total, m.wait.max, m.wait.p50,
			    m.wait.p99 } };
		n++;
	}
	json_hours(f, v, n);
}

/* The body of a successful answer into f; 0 or SLUICE_ENOMEM. */
static int
write_answer(FILE *f, const struct ans *a, const struct msg_rep *rep)
{
	int rc = 0;

	switch (a->shape) {
	case SH_PUT:
		fprintf(f, "{\"id\":%" PRIu64 ",\"created\":%s}", rep->put.id,
		    rep->put.created ? "true" : "false");
		break;
	case SH_PUT_BATCH:
		put_batch_results(f, a, rep);
		break;
	case SH_ITEMS:
		items_results(f, a, rep);
		break;
	case SH_TASKS: {
		struct sluice_task *t = NULL;

		if ((rc = result_tasks(&rep->tasks, &t)) == 0)
			json_tasks(f, t, rep->tasks.n);
		free(t);
		break;
	}
	case SH_PAGE: {
		struct sluice_task *t = NULL;
		uint32_t n = rep->tasks.n;

		if ((rc = result_tasks(&rep->tasks, &t)) == 0)
			json_tasks_page(
			    f, t, n, n > 0 && n == a->limit ? t[n - 1].id : 0);
		free(t);
		break;
	}
	case SH_KEY_TASKS:
		if (rep->task.tube.len == strlen(a->tube) &&
		    memcmp(rep->task.tube.p, a->tube, rep->task.tube.len) == 0)
			rc = write_task(f, &rep->task, true);
		else
			fputs("{\"tasks\":[]}", f);
		break;
	case SH_TASK:
		rc = write_task(f, &rep->task, false);
		break;
	case SH_AFTER: {
		struct sluice_after af = { rep->after.id, rep->after.state,
			rep->after.run_at, rep->after.deadline,
			rep->after.replaced };

		json_after(f, &af);
		break;
	}
	case SH_COUNT:
		fprintf(f, "{\"%s\":%" PRIu64 "}", a->count_key, rep->count);
		break;
	case SH_DELETED:
		fprintf(f, "{\"deleted\":1,\"id\":%" PRIu64 "}",
		    rep->op == MSG_OP_DELETE_KEY ? rep->id : a->id);
		break;
	case SH_STATS: {
		struct sluice_stats *s;

		if ((rc = result_stats(&rep->stats, &s)) == 0)
			json_stats(f, s);
		free(s);
		break;
	}
	case SH_ERRORS: {
		struct sluice_error_count *e = NULL;
		size_t n = 0;

		if ((rc = result_errors(&rep->errors, &e, &n)) == 0)
			json_errors(f, e, n);
		free(e);
		break;
	}
	case SH_HOURS:
		write_hours(f, &rep->hours);
		break;
	case SH_CONF: {
		struct sluice_tube_conf c;

		result_tube_conf(&rep->tube_conf.conf, &c);
		json_tube_conf(f, a->tube, &c);
		break;
	}
	case SH_PAUSE:
		fprintf(f, "{\"paused_until\":%" PRIu64 "}", rep->until);
		break;
	case SH_LSN:
		fprintf(f, "{\"lsn\":%" PRIu64 "}", rep->lsn);
		break;
	}
	return rc;
}

static void
answer(nng_aio *aio, const struct msg_rep *rep, void *arg)
{
	const struct ans *a = arg;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (rep == NULL) {
		respond_errc(aio, SLUICE_ESHUTDOWN,
		    "the server gave up the request (shutting down)");
		return;
	}
	if (rep->status == SLUICE_ENOTFOUND && a->shape == SH_KEY_TASKS) {
		respond_json(aio, 200, "{\"tasks\":[]}", 12, NULL, NULL);
		return;
	}
	if (rep->status != 0) {
		respond_error(aio, rep->status, rep->err.message.p,
		    rep->err.message.len, rep->err.leader.p,
		    rep->err.leader.len);
		return;
	}
	if ((f = open_memstream(&body, &len)) == NULL) {
		respond_errc(aio, SLUICE_ENOMEM, "out of memory");
		return;
	}
	rc = write_answer(f, a, rep);
	fclose(f);
	if (rc != 0)
		respond_errc(aio, SLUICE_ENOMEM, "out of memory");
	else
		respond_json(aio,
		    a->shape == SH_PUT && rep->put.created ? 201 : 200, body,
		    len, NULL, NULL);
	free(body);
}

/* ---- a request --------------------------------------------------------- */

/* One request as the handlers see it: its method, path segments
 * (percent-decoded), query, body; and the first bad parameter met. */
struct call {
	nng_aio *aio;
	const char *method;
	const char *uri;
	size_t nseg;
	const char *seg[SEGS_MAX];
	const void *body;
	size_t body_len;
	bool force;        /* a lease op's override: an admin's */
	char err[ERRTEXT]; /* the first bad parameter: 400 */
	char path[PATH_MAX_];
};

/* Splits the path after /v1 into segments. False when it is too long,
 * has too many segments, or a segment does not decode. */
static bool
split_path(struct call *c)
{
	const char *p = c->uri + 3; /* past "/v1" */
	const char *end = p + strcspn(p, "?#");
	size_t off = 0;

	c->nseg = 0;
	while (p < end) {
		const char *s = p + 1, *e = s;

		while (e < end && *e != '/')
			e++;
		if (e == s && e == end)
			break; /* a trailing slash */
		if (c->nseg == SEGS_MAX ||
		    !http_unescape(s, (size_t)(e - s), false, c->path + off,
		        sizeof(c->path) - off))
			return false;
		c->seg[c->nseg++] = c->path + off;
		off += strlen(c->path + off) + 1;
		p = e;
	}
	return true;
}

/* Notes the first bad parameter: "NAME: WHAT". */
static void
bad(struct call *c, const char *name, const char *what)
{
	if (c->err[0] == '\0')
		snprintf(c->err, sizeof(c->err), "%s: %s", name, what);
}

/* Query parameters. Each returns whether the parameter is present; a
 * malformed one is noted in c->err (and counts as absent). */
/* Whether the query names `name` at all (with a value that may not
 * decode). */
static bool
q_has(const char *uri, const char *name)
{
	const char *p = strchr(uri, '?');
	size_t n = strlen(name);

	for (; p != NULL; p = strchr(p + 1, '&'))
		if (strncmp(p + 1, name, n) == 0 && p[1 + n] == '=')
			return true;
	return false;
}

static bool
q_str(struct call *c, const char *name, char *out, size_t cap)
{
	if (http_query(c->uri, name, out, cap))
		return true;
	if (q_has(c->uri, name))
		bad(c, name, "too long, or holds a NUL byte");
	return false;
}

static bool
q_u64(struct call *c, const char *name, uint64_t max, uint64_t *out)
{
	char v[32], *end;
	unsigned long long x;

	if (!q_str(c, name, v, sizeof(v)))
		return false;
	x = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
	if (v[0] < '0' || v[0] > '9' || *end != '\0' || x > max) {
		char what[64];

		snprintf(what, sizeof(what), "a whole number 0..%" PRIu64, max);
		bad(c, name, what);
		return false;
	}
	*out = x;
	return true;
}

static bool
q_dur(struct call *c, const char *name, uint64_t *out)
{
	char v[32];

	if (!q_str(c, name, v, sizeof(v)))
		return false;
	if (dur_parse(v, out) != 0) {
		bad(c, name, DUR_SYNTAX);
		return false;
	}
	return true;
}

/* 1/true/yes or 0/false/no; absent is false. */
static bool
q_flag(struct call *c, const char *name)
{
	char v[8];

	if (!q_str(c, name, v, sizeof(v)))
		return false;
	if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 ||
	    strcmp(v, "yes") == 0 || v[0] == '\0')
		return true;
	if (strcmp(v, "0") != 0 && strcmp(v, "false") != 0 &&
	    strcmp(v, "no") != 0)
		bad(c, name, "1 or 0 (true or false)");
	return false;
}

static bool admin_op(const struct msg_req *r);

/* The request's wire form is posted with its answer's shape (`a`, which
 * goes with it). Refused here: a bad parameter (400), an admin write
 * without --http-admin (403). */
static void
send_req(struct call *c, const struct msg_req *req, struct ans *a)
{
	if (c->err[0] != '\0') {
		free(a);
		respond_errc(c->aio, SLUICE_EINVAL, c->err);
		return;
	}
	if ((admin_op(req) || c->force) && !http_admin(http_of(c->aio))) {
		free(a);
		respond_errc(c->aio, SLUICE_EPERM,
		    "read-only: kick, delete, flush, pause, update, tube "
		    "settings, snapshot and force need sluiced --http-admin");
		return;
	}
	http_post(http_of(c->aio), c->aio, req, answer, a);
}

/* An answer's context, with room for `items` batch items (their ids or
 * their refusals). */
static struct ans *
ans_new(struct call *c, enum shape shape, size_t items)
{
	struct ans *a = calloc(1, sizeof(*a) + items * sizeof(a->items[0]));

	if (a == NULL) {
		respond_errc(c->aio, SLUICE_ENOMEM, "out of memory");
		return NULL;
	}
	a->shape = shape;
	a->ids = &a->items[0].id;
	a->errs = &a->items[0].err;
	return a;
}

static void
send_shape(struct call *c, const struct msg_req *req, enum shape shape)
{
	struct ans *a = ans_new(c, shape, 0);

	if (a != NULL)
		send_req(c, req, a);
}

static void
send_count(struct call *c, const struct msg_req *req, const char *key)
{
	struct ans *a = ans_new(c, SH_COUNT, 0);

	if (a == NULL)
		return;
	a->count_key = key;
	send_req(c, req, a);
}

/* A tube named in the path, checked: false (answered 400) when not. */
static bool
tube_ok(struct call *c, const char *tube)
{
	if (msg_tube_valid(tube, strlen(tube)))
		return true;
	respond_errc(c->aio, SLUICE_ETUBE,
	    "bad tube name: 1-200 bytes of [A-Za-z0-9_.:/-] (a / in a path "
	    "is written %2F)");
	return false;
}

/* A task id in the path. */
static bool
id_ok(struct call *c, const char *s, uint64_t *id)
{
	char *end;

	if (s[0] >= '1' && s[0] <= '9') {
		*id = strtoull(s, &end, 10);
		if (*end == '\0' && *id != UINT64_MAX)
			return true;
	}
	respond_errc(c->aio, SLUICE_EINVAL, "a task id is a whole number >= 1");
	return false;
}

/* ---- state names ------------------------------------------------------- */

/* "ready".."done" (and "all" when `all`) to MSG_ST_*; -1 when unknown. */
static int
state_of(const char *s, bool all)
{
	static const char *const names[] = { "all", "ready", "delayed", "taken",
		"buried", "done" };

	for (int i = all ? 0 : 1; i < 6; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* ---- put --------------------------------------------------------------- */

/* A put's options from the query. */
static void
put_opts(struct call *c, struct msg_put *p, char *key, size_t key_cap)
{
	uint64_t v;

	p->priority = 1024;
	if (q_u64(c, "priority", UINT32_MAX, &v))
		p->priority = (uint32_t)v;
	if (q_dur(c, "delay", &p->when))
		p->at = false;
	if (q_u64(c, "run_at", UINT64_MAX, &v)) {
		if (p->when != 0)
			bad(c, "run_at", "give delay or run_at, not both");
		p->when = v;
		p->at = true;
	}
	q_dur(c, "ttr", &p->ttr);
	if (q_u64(c, "max_attempts", UINT32_MAX, &v))
		p->max_attempts = (uint32_t)v;
	q_dur(c, "every", &p->period);
	if (q_str(c, "key", key, key_cap))
		p->key = msg_cstr(key);
	p->replace = q_flag(c, "replace");
}

static void
put_one(struct call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_PUT };
	char key[MSG_KEY_MAX + 2];

	req.put.tube = msg_cstr(tube);
	put_opts(c, &req.put, key, sizeof(key));
	req.put.payload = (struct msg_str) { c->body, c->body_len };
	send_shape(c, &req, SH_PUT);
}

static bool
j_u64(json_t *o, const char *name, uint64_t max, uint64_t *out,
    struct item_err *e)
{
	json_t *v = json_object_get(o, name);

	if (v == NULL || json_is_null(v))
		return false;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max) {
		e->code = SLUICE_EINVAL;
		snprintf(e->msg, sizeof(e->msg),
		    "%s: a whole number 0..%" PRIu64, name, max);
		return false;
	}
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* A duration item field: a number of ms or a string ("10s"). */
static bool
j_dur(json_t *o, const char *name, uint64_t *out, struct item_err *e)
{
	json_t *v = json_object_get(o, name);

	if (v != NULL && json_is_string(v)) {
		if (dur_parse(json_string_value(v), out) == 0)
			return true;
		e->code = SLUICE_EINVAL;
		snprintf(e->msg, sizeof(e->msg), "%s: %s", name, DUR_SYNTAX);
		return false;
	}
	return j_u64(o, name, UINT64_MAX, out, e);
}

/* One item of a batch put; e->code set when it is refused here.
 * Payloads decoded from base64 are appended to `blobs` (freed by the
 * caller). */
static void
batch_item(json_t *o, const char *tube, struct msg_put *p, struct item_err *e,
    void **blob)
{
	json_t *pl = json_object_get(o, "payload");
	json_t *b64 = json_object_get(o, "payload_base64");
	json_t *t = json_object_get(o, "tube"), *k = json_object_get(o, "key");
	uint64_t v;

	p->tube = msg_cstr(
	    t != NULL && json_is_string(t) ? json_string_value(t) : tube);
	p->priority = 1024;
	if (!json_is_object(o)) {
		e->code = SLUICE_EINVAL;
		snprintf(e->msg, sizeof(e->msg), "an item is a JSON object");
		return;
	}
	if (pl != NULL && json_is_string(pl)) {
		p->payload = (struct msg_str) { json_string_value(pl),
			json_string_length(pl) };
	} else if (b64 != NULL && json_is_string(b64)) {
		size_t n = 0;

		*blob = malloc(json_string_length(b64) / 4 * 3 + 3);
		if (*blob == NULL ||
		    !base64_decode(*blob, json_string_value(b64),
		        json_string_length(b64), &n)) {
			e->code = SLUICE_EINVAL;
			snprintf(e->msg, sizeof(e->msg),
			    "payload_base64: not standard base64");
			return;
		}
		p->payload = (struct msg_str) { *blob, n };
	} else {
		e->code = SLUICE_EINVAL;
		snprintf(e->msg, sizeof(e->msg),
		    "an item needs \"payload\" (text) or \"payload_base64\"");
		return;
	}
	if (j_u64(o, "priority", UINT32_MAX, &v, e))
		p->priority = (uint32_t)v;
	if (j_dur(o, "delay", &p->when, e))
		p->at = false;
	if (j_u64(o, "run_at", UINT64_MAX, &v, e)) {
		p->when = v;
		p->at = true;
	}
	j_dur(o, "ttr", &p->ttr, e);
	if (j_u64(o, "max_attempts", UINT32_MAX, &v, e))
		p->max_attempts = (uint32_t)v;
	j_dur(o, "every", &p->period, e);
	if (k != NULL && json_is_string(k))
		p->key = (struct msg_str) { json_string_value(k),
			json_string_length(k) };
	p->replace = json_is_true(json_object_get(o, "replace"));
}

static void
put_batch(struct call *c, const char *tube)
{
	json_error_t jerr;
	json_t *arr =
	    json_within(c->body, c->body_len, JSON_VALUES_MAX, JSON_DEPTH_MAX)
	    ? json_loadb(c->body, c->body_len, 0, &jerr)
	    : NULL;
	struct msg_put *items = NULL;
	void **blobs = NULL;
	struct ans *a = NULL;
	struct msg_req req = { .op = MSG_OP_PUT_BATCH };
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0;

	if (n == 0 || n > MSG_BATCH_MAX) {
		respond_errc(c->aio, SLUICE_EINVAL,
		    "batch: the body is a JSON array of 1..1000 items "
		    "{\"payload\":\"...\",...}");
		goto out;
	}
	items = calloc(n, sizeof(*items));
	blobs = calloc(n, sizeof(*blobs));
	if (items == NULL || blobs == NULL ||
	    (a = ans_new(c, SH_PUT_BATCH, n)) == NULL) {
		if (a == NULL && items != NULL && blobs != NULL)
			goto out; /* answered */
		respond_errc(c->aio, SLUICE_ENOMEM, "out of memory");
		goto out;
	}
	a->n = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		struct msg_put p = { 0 };

		batch_item(
		    json_array_get(arr, i), tube, &p, &a->errs[i], &blobs[i]);
		if (a->errs[i].code == 0)
			items[req.put_batch.n++] = p;
	}
	req.put_batch.items = items;
	req.put_batch.messages = true;
	if (req.put_batch.n == 0) { /* every item refused here */
		char *body = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&body, &len);

		if (f == NULL) {
			respond_errc(c->aio, SLUICE_ENOMEM, "out of memory");
			goto out;
		}
		put_batch_results(f, a, NULL);
		fclose(f);
		respond_json(c->aio, 200, body, len, NULL, NULL);
		free(body);
		goto out;
	}
	send_req(c, &req, a);
	a = NULL;
out:
	free(a);
	for (size_t i = 0; blobs != NULL && i < n; i++)
		free(blobs[i]);
	free(blobs);
	free(items);
	json_decref(arr);
}

/* ---- take -------------------------------------------------------------- */

/* POST /v1/tubes/a,b/take?wait=DUR&n=N&order=strict */
static void
take(struct call *c, char *tubes)
{
	struct msg_str names[MSG_TAKE_TUBES_MAX];
	struct msg_req req = { .op = MSG_OP_TAKE };
	char order[16];
	uint64_t n = 1;

	for (char *save = NULL, *t = strtok_r(tubes, ",", &save); t != NULL;
	     t = strtok_r(NULL, ",", &save)) {
		if (req.take.ntubes == MSG_TAKE_TUBES_MAX) {
			respond_errc(
			    c->aio, SLUICE_ELIMIT, "take: at most 64 tubes");
			return;
		}
		if (!tube_ok(c, t))
			return;
		names[req.take.ntubes++] = msg_cstr(t);
	}
	if (req.take.ntubes == 0 && !tube_ok(c, ""))
		return;
	if (q_dur(c, "wait", &req.take.wait) && req.take.wait > WAIT_MAX_MS)
		bad(c, "wait", "at most 60s");
	if (q_u64(c, "n", MSG_TAKE_MAX, &n) && n == 0)
		bad(c, "n", "1..1000");
	if (q_str(c, "order", order, sizeof(order))) {
		if (strcmp(order, "strict") == 0)
			req.take.strict = true;
		else if (strcmp(order, "priority") != 0)
			bad(c, "order",
			    "strict (in the order given) or priority");
	}
	req.take.max = (uint32_t)n;
	req.take.detach = true; /* HTTP keeps no session */
	req.take.durable = true;
	req.take.tubes = names;
	send_shape(c, &req, SH_TASKS);
}

/* ---- a tube's routes --------------------------------------------------- */

static void
list(struct call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_LIST };
	char v[16], key[MSG_KEY_MAX + 2];
	uint64_t limit = LIST_DEFAULT, after = 0;
	struct ans *a;

	if (q_str(c, "key", key, sizeof(key))) { /* a search by key */
		struct ans *a = ans_new(c, SH_KEY_TASKS, 0);

		if (a == NULL)
			return;
		snprintf(a->tube, sizeof(a->tube), "%s", tube);
		req.op = MSG_OP_PEEK_KEY;
		req.by_key.key = msg_cstr(key);
		req.by_key.tube = msg_cstr(tube);
		send_req(c, &req, a);
		return;
	}
	req.list.tube = msg_cstr(tube);
	req.list.order = MSG_ORDER_ATTEMPTS;
	if (q_str(c, "state", v, sizeof(v))) {
		int st = state_of(v, true);

		if (st < 0 || st == MSG_ST_DONE)
			bad(c, "state", "all, ready, delayed, taken or buried");
		else
			req.list.state = (uint8_t)st;
	}
	if (q_str(c, "order", v, sizeof(v))) {
		req.list.order = strcmp(v, "attempts") == 0 ? MSG_ORDER_ATTEMPTS
		    : strcmp(v, "age") == 0                 ? MSG_ORDER_AGE
		    : strcmp(v, "run_at") == 0              ? MSG_ORDER_RUN_AT
		    : strcmp(v, "id") == 0                  ? MSG_ORDER_ID
		                                            : 0;
		if (req.list.order == 0)
			bad(c, "order", "attempts, age, run_at or id");
	}
	/* The cursor: only ids above it, so it pages in id order only. */
	if (q_u64(c, "after", UINT64_MAX, &after)) {
		if (q_has(c->uri, "order") && req.list.order != MSG_ORDER_ID)
			bad(c, "after", "pages in id order only (order=id)");
		req.list.order = MSG_ORDER_ID;
		req.list.after = after;
	}
	if (q_u64(c, "limit", MSG_LIST_MAX, &limit) && limit == 0)
		bad(c, "limit", "1..1000");
	req.list.limit = (uint32_t)limit;
	req.list.payloads = q_flag(c, "payloads");
	/* In id order a page says where the next one starts. */
	a = ans_new(c, req.list.order == MSG_ORDER_ID ? SH_PAGE : SH_TASKS, 0);
	if (a == NULL)
		return;
	a->limit = req.list.limit;
	send_req(c, &req, a);
}

/* DELETE /v1/tubes/T/tasks?state=S&older=DUR, or ?all=1: flush */
static void
delete_where(struct call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_DELETE_WHERE };
	char v[16];

	if (q_flag(c, "all")) {
		req.op = MSG_OP_FLUSH;
		req.tube = msg_cstr(tube);
		send_count(c, &req, "deleted");
		return;
	}
	req.where.tube = msg_cstr(tube);
	if (!q_str(c, "state", v, sizeof(v)) || state_of(v, false) < 0 ||
	    state_of(v, false) == MSG_ST_TAKEN) {
		respond_errc(c->aio, SLUICE_EINVAL,
		    "delete: ?state=ready|delayed|buried|done (and "
		    "older=DUR), or ?all=1 for every task of the tube");
		return;
	}
	req.where.state = (uint8_t)state_of(v, false);
	q_dur(c, "older", &req.where.older);
	send_count(c, &req, "deleted");
}

/* PUT /v1/tubes/T?ttr=..&unset=ttr,backoff */
static void
tube_set(struct call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_TUBE_SET };
	struct msg_tube_conf *k = &req.tube_set.conf;
	char v[MSG_TUBE_MAX + 2];
	uint64_t x;
	struct ans *a;

	req.tube_set.tube = msg_cstr(tube);
	if (q_dur(c, "ttr", &k->ttr))
		k->set |= MSG_TS_TTR;
	if (q_u64(c, "max_attempts", UINT32_MAX, &x)) {
		k->max_attempts = (uint32_t)x;
		k->set |= MSG_TS_MAX_ATTEMPTS;
	}
	if (q_dur(c, "backoff_base", &k->backoff_base) |
	    q_dur(c, "backoff_cap", &k->backoff_cap))
		k->set |= MSG_TS_BACKOFF;
	if (q_dur(c, "keep_done", &k->keep_done))
		k->set |= MSG_TS_KEEP_DONE;
	if (q_str(c, "lost_lease", v, sizeof(v))) {
		k->lost_lease_immediate = strcmp(v, "immediate") == 0;
		if (!k->lost_lease_immediate && strcmp(v, "backoff") != 0)
			bad(c, "lost_lease", "immediate or backoff");
		k->set |= MSG_TS_LOST_LEASE;
	}
	if (q_str(c, "dead_letter", v, sizeof(v))) {
		k->dead_letter = msg_cstr(v);
		k->set |= MSG_TS_DEAD_LETTER;
	}
	if (q_str(c, "unset", v, sizeof(v))) {
		for (char *save = NULL, *f = strtok_r(v, ",", &save); f != NULL;
		     f = strtok_r(NULL, ",", &save)) {
			unsigned i = 0;

			while (i < 6 && strcmp(f, json_tube_fields[i]) != 0)
				i++;
			if (i == 6)
				bad(c, "unset",
				    "a list of ttr, max_attempts, backoff, "
				    "keep_done, lost_lease, dead_letter");
			else
				req.tube_set.unset |= (uint8_t)(1u << i);
		}
	}
	if ((a = ans_new(c, SH_CONF, 0)) == NULL)
		return;
	snprintf(a->tube, sizeof(a->tube), "%s", tube);
	send_req(c, &req, a);
}

static void
tube_show(struct call *c, const char *tube)
{
	struct msg_req req = { .op = MSG_OP_TUBE_SHOW };
	struct ans *a = ans_new(c, SH_CONF, 0);

	if (a == NULL)
		return;
	snprintf(a->tube, sizeof(a->tube), "%s", tube);
	req.tube = msg_cstr(tube);
	send_req(c, &req, a);
}

/* /v1/tubes/T[/VERB] */
static void
tube_route(struct call *c)
{
	const char *m = c->method, *verb = c->nseg > 2 ? c->seg[2] : "";
	char *tube = (char *)c->seg[1];
	struct msg_req req = { 0 };
	uint64_t v = 1;

	if (strcmp(verb, "take") == 0 && strcmp(m, "POST") == 0) {
		take(c, tube);
		return;
	}
	if (!tube_ok(c, tube))
		return;
	if (c->nseg == 2) {
		if (strcmp(m, "GET") == 0) {
			tube_show(c, tube);
		} else if (strcmp(m, "PUT") == 0) {
			tube_set(c, tube);
		} else {
			req.op = MSG_OP_TUBE_DELETE;
			req.tube_delete.tube = msg_cstr(tube);
			req.tube_delete.force = q_flag(c, "force");
			send_count(c, &req, "deleted");
		}
	} else if (strcmp(verb, "tasks") == 0) {
		if (strcmp(m, "POST") == 0 && q_flag(c, "batch"))
			put_batch(c, tube);
		else if (strcmp(m, "POST") == 0)
			put_one(c, tube);
		else if (strcmp(m, "GET") == 0)
			list(c, tube);
		else
			delete_where(c, tube);
	} else if (strcmp(verb, "kick") == 0) {
		req.op = MSG_OP_KICK;
		req.kick.tube = msg_cstr(tube);
		if (q_u64(c, "n", UINT32_MAX, &v) && v == 0)
			bad(c, "n", "at least 1");
		req.kick.n = (uint32_t)v;
		req.kick.delayed = q_flag(c, "delayed");
		send_count(c, &req, "kicked");
	} else if (strcmp(verb, "pause") == 0) {
		req.op = MSG_OP_PAUSE;
		req.pause.tube = msg_cstr(tube);
		if (!q_dur(c, "for", &req.pause.duration) && c->err[0] == 0)
			bad(c, "for", "a duration is needed (0 resumes)");
		send_shape(c, &req, SH_PAUSE);
	} else if (strcmp(verb, "stats") == 0) {
		req.op = MSG_OP_STATS;
		req.stats.tube = msg_cstr(tube);
		req.stats.settings = true;
		send_shape(c, &req, SH_STATS);
	} else if (strcmp(verb, "hourly") == 0) {
		req.op = MSG_OP_STATS_HOURLY;
		req.tube = msg_cstr(tube);
		send_shape(c, &req, SH_HOURS);
	} else if (strcmp(verb, "errors") == 0) {
		req.op = MSG_OP_ERRORS; /* with example ids, as json_errors */
		req.errors.tube = msg_cstr(tube);
		req.errors.ids = true;
		send_shape(c, &req, SH_ERRORS);
	} else { /* next */
		char st[16] = "ready";
		int s;

		q_str(c, "state", st, sizeof(st));
		s = state_of(st, false);
		if (s != MSG_ST_READY && s != MSG_ST_DELAYED &&
		    s != MSG_ST_BURIED)
			bad(c, "state", "ready, delayed or buried");
		req.op = MSG_OP_PEEK_NEXT;
		req.peek_next.tube = msg_cstr(tube);
		req.peek_next.state = (uint8_t)(s > 0 ? s : MSG_ST_READY);
		send_shape(c, &req, SH_TASK);
	}
}

/* ---- a task's routes --------------------------------------------------- */

/* The body as a text of at most MSG_TEXT_MAX bytes (fail, bury, ack's
 * result). */
static struct msg_str
body_text(struct call *c, const char *what)
{
	if (c->body_len > MSG_TEXT_MAX)
		bad(c, what, "at most 1024 bytes");
	return (struct msg_str) { c->body, c->body_len };
}

/* ?lease=L, needed unless force=1 (an admin's override, c->force). */
static uint64_t
lease_of(struct call *c)
{
	uint64_t lease = 0;

	c->force = q_flag(c, "force");
	if (!q_u64(c, "lease", UINT64_MAX, &lease) && !c->force)
		bad(c, "lease",
		    "the lease its take returned is needed (?lease=N)");
	return lease;
}

static void
update(struct call *c, uint64_t id)
{
	struct msg_req req = { .op = MSG_OP_UPDATE };
	struct msg_update *u = &req.update;
	char at[32];
	uint64_t v;

	u->id = id;
	if ((u->set_priority = q_u64(c, "priority", UINT32_MAX, &v)))
		u->priority = (uint32_t)v;
	if (q_str(c, "run_at", at, sizeof(at)) && strcmp(at, "now") == 0) {
		u->set_delay = true; /* run now */
	} else if (q_u64(c, "run_at", UINT64_MAX, &u->when)) {
		u->set_at = true;
	}
	if (q_dur(c, "delay", &v)) {
		if (u->set_at || u->set_delay)
			bad(c, "delay", "give delay or run_at");
		u->set_delay = true;
		u->when = v;
	}
	u->set_ttr = q_dur(c, "ttr", &u->ttr);
	if ((u->set_max_attempts = q_u64(c, "max_attempts", UINT32_MAX, &v)))
		u->max_attempts = (uint32_t)v;
	if (c->body_len > 0) {
		u->set_payload = true;
		u->payload = (struct msg_str) { c->body, c->body_len };
	}
	send_shape(c, &req, SH_AFTER);
}

/* /v1/tasks/ID[/VERB] */
static void
task_route(struct call *c)
{
	const char *verb = c->nseg > 2 ? c->seg[2] : "";
	struct msg_req req = { 0 };
	char to[MSG_TUBE_MAX + 2];
	uint64_t id, v, lease;

	if (!id_ok(c, c->seg[1], &id))
		return;
	if (c->nseg == 2) {
		struct ans *a;

		req.op =
		    strcmp(c->method, "GET") == 0 ? MSG_OP_PEEK : MSG_OP_DELETE;
		req.id = id;
		if (req.op == MSG_OP_PEEK) {
			send_shape(c, &req, SH_TASK);
		} else if ((a = ans_new(c, SH_DELETED, 0)) != NULL) {
			a->id = id;
			send_req(c, &req, a);
		}
		return;
	}
	if (strcmp(verb, "kick") == 0) {
		req.op = MSG_OP_KICK_ID;
		req.id = id;
		send_shape(c, &req, SH_AFTER);
		return;
	}
	if (strcmp(verb, "update") == 0) {
		update(c, id);
		return;
	}
	lease = lease_of(c); /* the lease ops */
	if (strcmp(verb, "ack") == 0) {
		req.op = MSG_OP_ACK;
		req.ack = (struct msg_ack) { id, lease, c->force };
		if (q_str(c, "to", to, sizeof(to)))
			req.ack.to = msg_cstr(to);
		req.ack.result = body_text(c, "result");
	} else if (strcmp(verb, "release") == 0) {
		req.op = MSG_OP_RELEASE;
		req.release = (struct msg_release) { id, lease, c->force };
		q_dur(c, "delay", &req.release.delay);
		if ((req.release.set_priority =
		            q_u64(c, "priority", UINT32_MAX, &v)))
			req.release.priority = (uint32_t)v;
	} else if (strcmp(verb, "fail") == 0) {
		req.op = MSG_OP_FAIL;
		req.fail = (struct msg_fail) { id, lease, c->force };
		req.fail.set_delay = q_dur(c, "delay", &req.fail.delay);
		req.fail.fatal = q_flag(c, "fatal");
		req.fail.error = body_text(c, "error");
	} else { /* touch, bury */
		req.op = verb[0] == 't' ? MSG_OP_TOUCH : MSG_OP_BURY;
		req.lease = (struct msg_lease) { id, lease, c->force };
		if (req.op == MSG_OP_BURY)
			req.lease.error = body_text(c, "error");
	}
	send_shape(c, &req, SH_AFTER);
}

/* POST /v1/tasks/ack: [{"id":N,"lease":L},...]; /v1/tasks/delete:
 * [N,...] */
static void
task_batch(struct call *c, bool ack)
{
	json_error_t jerr;
	json_t *arr =
	    json_within(c->body, c->body_len, JSON_VALUES_MAX, JSON_DEPTH_MAX)
	    ? json_loadb(c->body, c->body_len, 0, &jerr)
	    : NULL;
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
	struct msg_ack_item items[MSG_BATCH_MAX];
	struct msg_req req = { .op = ack ? MSG_OP_ACK_BATCH
		                         : MSG_OP_DELETE_BATCH };
	struct ans *a = NULL;

	if (n == 0 || n > MSG_BATCH_MAX)
		goto bad;
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(arr, i);
		json_t *id = ack ? json_object_get(e, "id") : e;
		json_t *lease = json_object_get(e, "lease");

		if (!json_is_integer(id) || json_integer_value(id) < 1 ||
		    (ack &&
		        (!json_is_integer(lease) ||
		            json_integer_value(lease) < 0)))
			goto bad;
		items[i].id = (uint64_t)json_integer_value(id);
		items[i].lease = ack ? (uint64_t)json_integer_value(lease) : 0;
	}
	if ((a = ans_new(c, SH_ITEMS, n)) == NULL)
		goto out;
	a->n = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		a->ids[i] = items[i].id;
	if (ack) {
		req.ack_batch =
		    (struct msg_ack_batch) { (uint32_t)n, true, items };
	} else {
		req.delete_batch =
		    (struct msg_delete_batch) { (uint32_t)n, true, a->ids };
	}
	send_req(c, &req, a);
	goto out;
bad:
	respond_errc(c->aio, SLUICE_EINVAL,
	    ack ? "ack: the body is a JSON array of 1..1000 "
	          "{\"id\":N,\"lease\":N}"
	        : "delete: the body is a JSON array of 1..1000 ids");
out:
	json_decref(arr);
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
	case MSG_OP_PAUSE:
	case MSG_OP_UPDATE:
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_DELETE:
	case MSG_OP_SNAPSHOT:
		return true;
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

/* A write from a page of another origin: refused (403). Programs send
 * no Origin; browsers send one on every cross-origin POST. */
static bool
same_origin(struct call *c)
{
	nng_http_req *r = nng_aio_get_input(c->aio, 0);
	const char *site = nng_http_req_get_header(r, "Sec-Fetch-Site");
	const char *origin = nng_http_req_get_header(r, "Origin");
	const char *host = nng_http_req_get_header(r, "Host");

	if ((site != NULL && strcasecmp(site, "cross-site") == 0) ||
	    (origin != NULL &&
	        (host == NULL || strcasecmp(origin_host(origin), host) != 0))) {
		respond_errc(c->aio, SLUICE_EPERM,
		    "cross-site request refused: a write's Origin must be "
		    "this server's own (programs send no Origin)");
		return false;
	}
	return true;
}

/* ---- the router -------------------------------------------------------- */

/* /v1/tubes/T/VERB: whether the verb takes this method. */
static bool
route_tube_verb(const struct call *c)
{
	static const struct {
		const char *method, *verb;
	} verbs[] = {
		{ "POST", "take" },
		{ "POST", "tasks" },
		{ "GET", "tasks" },
		{ "DELETE", "tasks" },
		{ "POST", "kick" },
		{ "POST", "pause" },
		{ "GET", "stats" },
		{ "GET", "hourly" },
		{ "GET", "errors" },
		{ "GET", "next" },
	};

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(c->method, verbs[i].method) == 0 &&
		    strcmp(c->seg[2], verbs[i].verb) == 0)
			return true;
	return false;
}

/* /v1/tasks/ID/VERB (POST) */
static bool
route_task_verb(const char *verb)
{
	static const char *const verbs[] = { "ack", "release", "fail", "touch",
		"bury", "kick", "update" };

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verb, verbs[i]) == 0)
			return true;
	return false;
}

static bool
is(const struct call *c, const char *method, size_t nseg, const char *s0)
{
	return strcmp(c->method, method) == 0 && c->nseg == nseg &&
	    strcmp(c->seg[0], s0) == 0;
}

static void
no_route(struct call *c)
{
	respond_errc(c->aio, SLUICE_ENOTFOUND,
	    "no such route: see GET /v1/openapi.json");
}

static void
route(struct call *c)
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
		send_shape(c, &req, SH_STATS);
	} else if (is(c, "GET", 1, "hourly")) {
		req.op = MSG_OP_STATS_HOURLY;
		send_shape(c, &req, SH_HOURS);
	} else if (is(c, "POST", 1, "snapshot")) {
		req.op = MSG_OP_SNAPSHOT;
		send_shape(c, &req, SH_LSN);
	} else if (strcmp(c->seg[0], "tubes") == 0 &&
	    (c->nseg == 2 ? strcmp(c->method, "POST") != 0
	                  : c->nseg == 3 && route_tube_verb(c))) {
		tube_route(c);
	} else if (is(c, "POST", 2, "tasks") &&
	    (strcmp(s1, "ack") == 0 || strcmp(s1, "delete") == 0)) {
		task_batch(c, s1[0] == 'a');
	} else if (strcmp(c->seg[0], "tasks") == 0 &&
	    (c->nseg == 2 ? strcmp(c->method, "GET") == 0 ||
	                strcmp(c->method, "DELETE") == 0
	                  : c->nseg == 3 && strcmp(c->method, "POST") == 0 &&
	                route_task_verb(c->seg[2]))) {
		task_route(c);
	} else if (strcmp(c->seg[0], "keys") == 0 && c->nseg == 2 &&
	    (strcmp(c->method, "GET") == 0 ||
	        strcmp(c->method, "DELETE") == 0)) {
		char tube[MSG_TUBE_MAX + 2];
		struct ans *a;

		/* The key's tube: ?tube=NAME (keys are per tube; without
		 * it the answer is 400 naming it). */
		req.op =
		    c->method[0] == 'G' ? MSG_OP_PEEK_KEY : MSG_OP_DELETE_KEY;
		req.by_key.key = msg_cstr(s1);
		if (q_str(c, "tube", tube, sizeof(tube)) && tube[0] != '\0')
			req.by_key.tube = msg_cstr(tube);
		else
			bad(c, "tube",
			    "the key's tube is needed: keys are per tube "
			    "(?tube=NAME)");
		if ((a = ans_new(c,
		         req.op == MSG_OP_PEEK_KEY ? SH_TASK : SH_DELETED,
		         0)) != NULL)
			send_req(c, &req, a);
	} else {
		no_route(c);
	}
}

size_t
http_api_body_max(const char *method, const char *uri, size_t payload_max)
{
	struct call *c = malloc(sizeof(*c));
	size_t max = BODY_SMALL;

	if (c == NULL)
		return 0;
	c->uri = uri;
	c->method = method;
	c->err[0] = '\0';
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
		max = q_flag(c, "batch") ? MSG_SIZE_MAX : payload_max;
	} else if (strcmp(method, "POST") == 0 && c->nseg == 3 &&
	    strcmp(c->seg[0], "tasks") == 0 &&
	    strcmp(c->seg[2], "update") == 0) {
		max = payload_max;
	} else if (strcmp(method, "POST") == 0 && c->nseg == 2 &&
	    strcmp(c->seg[0], "tasks") == 0) {
		max = BODY_IDS; /* ack or delete batch */
	}
	free(c);
	return max;
}

void
http_api_serve(nng_aio *aio)
{
	nng_http_req *r = nng_aio_get_input(aio, 0);
	struct call *c = malloc(sizeof(*c));
	void *body = NULL;

	if (c == NULL) {
		respond_errc(aio, SLUICE_ENOMEM, "out of memory");
		return;
	}
	c->aio = aio;
	c->method = nng_http_req_get_method(r);
	c->uri = http_uri(aio);
	c->err[0] = '\0';
	c->force = false;
	nng_http_req_get_data(r, &body, &c->body_len);
	c->body = body != NULL ? body : "";
	if (strncmp(c->uri, "/v1", 3) != 0 || !split_path(c))
		respond_errc(aio, SLUICE_EINVAL,
		    "bad path: too long, or a segment that does not decode");
	else if (strcmp(c->method, "GET") == 0 || same_origin(c))
		route(c);
	free(c);
}
