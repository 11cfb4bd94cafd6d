/* http_api_answer - the task API's answers (http_api_answer.h), written
 * on an nng thread once the core answers (http.c calls http_api_answer
 * with the context the route posted, struct http_api_ans), in the JSON
 * of `sluice ... --json` (json/json.h, from the decoded answer turned
 * into sluice.h's types by client/result.h).
 *
 * An error is {"error":NAME,"code":N,"message":TEXT}, and "leader":URL
 * on a follower, with the status of its code: 404 not found, 409 a
 * conflict of state, 413 too big, 401 and 403 for --auth, 421 (a
 * follower that knows its leader) or 503 (and Retry-After) when the node
 * cannot serve now, 421 and the owner ("cluster", "revision", "urls")
 * for a tube the cluster map gives to another cluster (and "http", its
 * nodes' HTTP URLs, with Location: the first one and the request's path,
 * when they publish them), 500 for memory, 400 for
 * any bad input. A batch's results hold one object per item, in the request's
 * order, each the item's result or its error. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "client/result.h"
#include "json/json.h"
#include "proto/cmap.h"
#include "proto/msg.h"
#include "server/face/http/http_api_batches.h"
#include "server/face/http/http_api_group.h"
#include "server/face/http/http_api_answer.h"
#include "server/face/http/http_face.h"
#include "server/face/http/http_respond.h"
#include "sluice.h"

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
	case SLUICE_ECANCELED: /* the task was cancelled: stop */
	case SLUICE_EBATCH:    /* the batch takes no more tasks */
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
	case SLUICE_EMOVED: /* another cluster's tube: the body names it */
		return 421;
	case SLUICE_EMOVING: /* a keyed put while the tube moves in: again */
		return 503;
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

void
http_api_json(nng_aio *aio, uint16_t status, const char *body, size_t len)
{
	http_respond(aio, status, "application/json", body, len, NULL, NULL);
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

/* "URL,URL,..." as a JSON array. */
static void
url_array(FILE *f, const char *urls)
{
	bool first = true;

	fputc('[', f);
	for (const char *p = urls; *p != '\0'; first = false) {
		size_t l = strcspn(p, ",");

		if (!first)
			fputc(',', f);
		json_str(f, p, l);
		p += l;
		p += *p == ',';
	}
	fputc(']', f);
}

/* A moved error's owner (its detail, cmap.h): ,"cluster":NAME,
 * "revision":N,"urls":[URL,...] (its nodes' sluice URLs), and
 * ,"http":[URL,...] when they publish their HTTP faces' (etcd's member
 * keys, --advertise-http); then `location` is the first of those with
 * the request's own path and query, where the client sends it again. */
static void
moved_fields(FILE *f, nng_aio *aio, const char *detail, size_t len,
    char *location, size_t cap)
{
	char cluster[MSG_NODE_MAX + 1], urls[MSG_URL_MAX + 1];
	char http[MSG_URL_MAX + 1];
	uint64_t rev;

	if (!cmap_moved_parse(detail, len, cluster, &rev, urls, sizeof(urls)))
		return;
	fputs(",\"cluster\":", f);
	json_cstr(f, cluster);
	fprintf(f, ",\"revision\":%" PRIu64 ",\"urls\":", rev);
	url_array(f, urls);
	if (aio == NULL ||
	    !http_owner_urls(http_of(aio), cluster, http, sizeof(http)))
		return;
	fputs(",\"http\":", f);
	url_array(f, http);
	snprintf(location, cap, "%.*s%s", (int)strcspn(http, ","), http,
	    http_uri(aio));
}

/* {"error":"stale_lease","code":2,"message":"..."} (and "leader":URL, the
 * leader's client URL, on a follower), with `status` (0: the code's);
 * `close`: the connection is closed after it. */
static void
respond_error_x(nng_aio *aio, uint16_t status, int code, const char *msg,
    size_t msg_len, const char *leader, size_t leader_len, const char *allow,
    bool close)
{
	char *body = NULL, location[2 * MSG_URL_MAX + 2] = "";
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);

	if (f == NULL) {
		http_respond_x(aio, 500, "text/plain", "out of memory\n", 14,
		    NULL, NULL, close);
		return;
	}
	json_error_open(f, code, msg, msg_len);
	if (code == SLUICE_EMOVED)
		moved_fields(
		    f, aio, leader, leader_len, location, sizeof(location));
	else if (leader_len > 0) {
		fputs(",\"leader\":", f);
		json_str(f, leader, leader_len);
	}
	fputc('}', f);
	fclose(f);
	if (status == 0)
		status = err_status(code, leader_len > 0);
	if (allow != NULL)
		http_respond_x(aio, status, "application/json", body, len,
		    "Allow", allow, close);
	else if (status == 401)
		http_respond_x(aio, status, "application/json", body, len,
		    "WWW-Authenticate", "Bearer", close);
	else if (status == 503)
		http_respond_x(aio, status, "application/json", body, len,
		    "Retry-After", "1", close);
	else if (location[0] != '\0')
		http_respond_x(aio, status, "application/json", body, len,
		    "Location", location, close);
	else
		http_respond_x(aio, status, "application/json", body, len, NULL,
		    NULL, close);
	free(body);
}

static void
respond_error(nng_aio *aio, int code, const char *msg, size_t msg_len,
    const char *leader, size_t leader_len)
{
	respond_error_x(
	    aio, 0, code, msg, msg_len, leader, leader_len, NULL, false);
}

void
http_api_refuse(
    nng_aio *aio, uint16_t status, int code, const char *msg, bool close)
{
	respond_error_x(
	    aio, status, code, msg, strlen(msg), NULL, 0, NULL, close);
}

void
http_api_refuse_allow(
    nng_aio *aio, int code, const char *msg, const char *allow, bool close)
{
	respond_error_x(
	    aio, 405, code, msg, strlen(msg), NULL, 0, allow, close);
}

void
http_api_error(nng_aio *aio, int code, const char *msg)
{
	respond_error(aio, code, msg, strlen(msg), NULL, 0);
}

static void
json_item_error(FILE *f, int code, const char *msg, size_t len)
{
	json_error_open(f, code, msg, len);
	fputc('}', f);
}

void
http_api_put_results(
    FILE *f, const struct http_api_ans *a, const struct msg_rep *rep)
{
	struct msg_iter it =
	    rep != NULL ? rep->put_batch.it : (struct msg_iter) { 0 };
	struct msg_put_res pr;

	fputs("{\"results\":[", f);
	for (uint32_t i = 0; i < a->n; i++) {
		const struct http_api_batch_err *e = &a->errs[i];

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
			fprintf(f, "{\"id\":%" PRIu64 ",\"created\":%s%s}",
			    pr.id, pr.created ? "true" : "false",
			    pr.throttled ? ",\"throttled\":true" : "");
	}
	fputs("]}", f);
}

static void
items_results(FILE *f, const struct http_api_ans *a, const struct msg_rep *rep)
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

/* wait's answer, as `sluice wait --json` prints it. */
static void
write_result(FILE *f, const struct msg_result *m)
{
	const char *state = msg_result_state_name(m->state);
	bool done = m->final && m->state == MSG_ST_DONE;

	fprintf(f, "{\"id\":%" PRIu64 ",\"state\":\"%s\",\"final\":%s", m->id,
	    state != NULL ? state : "?", m->final ? "true" : "false");
	if (m->final)
		fprintf(f, ",\"time\":%" PRIu64, m->time);
	if (m->tube.len > 0) {
		fputs(",\"tube\":", f);
		json_str(f, m->tube.p, m->tube.len);
	}
	if (m->text.len > 0) {
		fprintf(f, ",\"%s\":", done ? "result" : "error");
		json_str(f, m->text.p, m->text.len);
	}
	if (m->cancelled)
		fputs(",\"cancelled\":true", f);
	fputc('}', f);
}

/* A cancel of one task refused: its error answered (true). */
static bool
cancel_refused(nng_aio *aio, const struct msg_rep *rep)
{
	struct msg_iter it = rep->batch.it;
	struct msg_item_res ir;

	if (!msg_next_item_res(&it, &ir) || ir.status == 0)
		return false;
	respond_error(aio, ir.status, ir.message.p, ir.message.len, NULL, 0);
	return true;
}

/* The body of a successful answer into f; 0 or SLUICE_ENOMEM. */
static int
write_answer(FILE *f, const struct http_api_ans *a, const struct msg_rep *rep)
{
	int rc = 0;

	switch (a->shape) {
	case SH_PUT:
		fprintf(f, "{\"id\":%" PRIu64 ",\"created\":%s%s}", rep->put.id,
		    rep->put.created ? "true" : "false",
		    rep->put.throttled ? ",\"throttled\":true" : "");
		break;
	case SH_PUT_BATCH:
		http_api_put_results(f, a, rep);
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
		if (rc == 0 && rep->task.batch.len > 0 &&
		    fseek(f, -1, SEEK_CUR) == 0) {
			/* in place of the object's last '}' */
			fputs(",\"batch\":", f);
			json_str(f, rep->task.batch.p, rep->task.batch.len);
			fputc('}', f);
		}
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
	case SH_RESULT:
		write_result(f, &rep->result);
		break;
	case SH_CANCEL:
		fprintf(f, "{\"cancelled\":true,\"id\":%" PRIu64 "}", a->id);
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
	case SH_GROUPS: {
		struct sluice_group *g = NULL;
		size_t n = 0;

		if ((rc = result_groups(&rep->groups, &g, &n)) == 0)
			json_groups(f, g, n, rep->groups.total);
		free(g);
		break;
	}
	case SH_HOURS:
		write_hours(f, &rep->hours);
		break;
	case SH_CLUSTER: {
		struct sluice_cluster *cl = NULL;

		if ((rc = result_cluster(&rep->cluster, &cl)) == 0)
			json_cluster(f, cl);
		free(cl);
		break;
	}
	case SH_CONF: {
		struct sluice_tube_conf c;

		result_tube_conf(&rep->tube_conf.conf, &c);
		if (rep->tube_conf.limits) {
			struct sluice_limits l;

			result_tube_limits(rep, &l);
			json_tube_conf_limits(f, a->tube, &c, &l);
		} else {
			json_tube_conf(f, a->tube, &c);
		}
		break;
	}
	case SH_GROUP:
		http_api_group_json(f, &rep->group);
		break;
	case SH_PAUSE:
		fprintf(f, "{\"paused_until\":%" PRIu64 "}", rep->until);
		break;
	case SH_LSN:
		fprintf(f, "{\"lsn\":%" PRIu64 "}", rep->lsn);
		break;
	case SH_SCHEDULE:
	case SH_SCHEDULES: {
		struct sluice_schedule *s = NULL;
		size_t n = 0;

		rc = result_scheds(
		    &rep->scheds, a->shape == SH_SCHEDULE, &s, &n);
		if (rc == 0 && a->shape == SH_SCHEDULES)
			json_schedules(f, s, n);
		else if (rc == 0 && n == 1)
			json_schedule(f, s);
		else if (rc == 0)
			fputs("{}", f);
		free(s);
		break;
	}
	case SH_SCHED_DELETED:
		fputs("{\"deleted\":true}", f);
		break;
	case SH_BATCH:
		http_api_batch_json(f, &rep->batch_info.one);
		break;
	case SH_BATCHES:
		http_api_batches_json(f, &rep->batch_info);
		break;
	}
	return rc;
}

void
http_api_answer(nng_aio *aio, const struct msg_rep *rep, void *arg)
{
	const struct http_api_ans *a = arg;
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (rep == NULL) {
		http_api_error(aio, SLUICE_ESHUTDOWN,
		    "the server gave up the request (shutting down)");
		return;
	}
	if (rep->status == SLUICE_ENOTFOUND && a->shape == SH_KEY_TASKS) {
		http_api_json(aio, 200, "{\"tasks\":[]}", 12);
		return;
	}
	if (rep->status != 0) {
		respond_error(aio, rep->status, rep->err.message.p,
		    rep->err.message.len, rep->err.leader.p,
		    rep->err.leader.len);
		return;
	}
	if (a->shape == SH_CANCEL && cancel_refused(aio, rep))
		return;
	if ((f = open_memstream(&body, &len)) == NULL) {
		http_api_error(aio, SLUICE_ENOMEM, "out of memory");
		return;
	}
	rc = write_answer(f, a, rep);
	fclose(f);
	if (rc != 0)
		http_api_error(aio, SLUICE_ENOMEM, "out of memory");
	else
		http_api_json(aio,
		    a->shape == SH_PUT && rep->put.created ? 201 : 200, body,
		    len);
	free(body);
}

struct http_api_ans *
http_api_ans_new(nng_aio *aio, enum http_api_shape shape, size_t items)
{
	struct http_api_ans *a =
	    calloc(1, sizeof(*a) + items * sizeof(a->items[0]));

	if (a == NULL) {
		http_api_error(aio, SLUICE_ENOMEM, "out of memory");
		return NULL;
	}
	a->shape = shape;
	a->ids = &a->items[0].id;
	a->errs = &a->items[0].err;
	return a;
}
