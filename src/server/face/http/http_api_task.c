/* http_api_task - the task API's routes of a task (http_api_task.h),
 * each a wire request of the task of the id in the path: peek, delete,
 * kick, update (the task options in the query, a new payload the body),
 * and the lease ops, which need ?lease=L (the lease its take returned)
 * unless an admin forces them (?force=1, with --http-admin); fail's and
 * bury's error (1024 bytes at most) and ack's result (65535) are the
 * body. The
 * batches of acks and deletes read a JSON array (http_api_batch.h) and
 * answer each item's result in order. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "proto/msg.h"
#include "server/face/http/http_api.h"
#include "server/face/http/http_api_answer.h"
#include "server/face/http/http_api_batch.h"
#include "server/face/http/http_api_task.h"
#include "server/face/http/http_query.h"
#include "sluice.h"

enum { RESULT_WAIT_MAX_MS = 60000 }; /* a result's longest long poll */

/* A task id in the path. */
static bool
id_ok(struct http_api_call *c, const char *s, uint64_t *id)
{
	char *end;

	if (s[0] >= '1' && s[0] <= '9') {
		*id = strtoull(s, &end, 10);
		if (*end == '\0' && *id != UINT64_MAX)
			return true;
	}
	http_api_error(
	    c->aio, SLUICE_EINVAL, "a task id is a whole number >= 1");
	return false;
}

/* ---- a task's routes --------------------------------------------------- */

/* The body as a text of at most MSG_TEXT_MAX bytes (fail, bury), or
 * MSG_RESULT_MAX (ack's result, checked first: result_too_large). */
static struct msg_str
body_text(struct http_api_call *c, const char *what)
{
	if (strcmp(what, "result") != 0 && c->body_len > MSG_TEXT_MAX)
		http_query_bad(&c->q, what, "at most 1024 bytes");
	return (struct msg_str) { c->body, c->body_len };
}

/* ?lease=L, needed unless force=1 (an admin's override, c->force). */
static uint64_t
lease_of(struct http_api_call *c)
{
	uint64_t lease = 0;

	c->force = http_query_flag(&c->q, "force");
	if (!http_query_u64(&c->q, "lease", UINT64_MAX, &lease) && !c->force)
		http_query_bad(&c->q, "lease",
		    "the lease its take returned is needed (?lease=N)");
	return lease;
}

/* POST /v1/tasks/ID/update: the task options (http_query_opts; run_at
 * may be "now"), one of delay and run_at; the body, when there is one,
 * its new payload. */
static void
update(struct http_api_call *c, uint64_t id)
{
	struct msg_req req = { .op = MSG_OP_UPDATE };
	struct msg_update *u = &req.update;
	struct http_query_opts o;

	u->id = id;
	http_query_opts(&c->q, true, &o);
	u->set_priority = o.set_priority;
	u->priority = o.priority;
	if (o.run_now) {
		u->set_delay = true; /* run now */
	} else if (o.set_run_at) {
		u->set_at = true;
		u->when = o.run_at;
	}
	if (o.set_delay) {
		if (u->set_at || u->set_delay)
			http_query_bad(&c->q, "delay", "give delay or run_at");
		u->set_delay = true;
		u->when = o.delay;
	}
	u->set_ttr = o.set_ttr;
	u->ttr = o.ttr;
	u->set_max_attempts = o.set_max_attempts;
	u->max_attempts = o.max_attempts;
	if (c->body_len > 0) {
		u->set_payload = true;
		u->payload = (struct msg_str) { c->body, c->body_len };
	}
	http_api_send_shape(c, &req, SH_AFTER);
}

/* /v1/tasks/ID[/VERB] */
void
http_api_task_route(struct http_api_call *c)
{
	const char *verb = c->nseg > 2 ? c->seg[2] : "";
	struct msg_req req = { 0 };
	char to[MSG_TUBE_MAX + 2];
	uint64_t id, v, lease;

	if (!id_ok(c, c->seg[1], &id))
		return;
	if (c->nseg == 2) {
		struct http_api_ans *a;

		req.op =
		    strcmp(c->method, "GET") == 0 ? MSG_OP_PEEK : MSG_OP_DELETE;
		req.id = id;
		req.with_batch = req.op == MSG_OP_PEEK; /* a link to it */
		if (req.op == MSG_OP_PEEK) {
			http_api_send_shape(c, &req, SH_TASK);
		} else if ((a = http_api_ans_new(c->aio, SH_DELETED, 0)) !=
		    NULL) {
			a->id = id;
			http_api_send(c, &req, a);
		}
		return;
	}
	if (strcmp(verb, "kick") == 0) {
		req.op = MSG_OP_KICK_ID;
		req.id = id;
		http_api_send_shape(c, &req, SH_AFTER);
		return;
	}
	if (strcmp(verb, "update") == 0) {
		update(c, id);
		return;
	}
	if (strcmp(verb, "result") == 0) { /* GET ?wait=DUR: a long poll */
		req.op = MSG_OP_WAIT;
		req.wait.id = id;
		if (http_query_dur(&c->q, "wait", &req.wait.wait) &&
		    req.wait.wait > RESULT_WAIT_MAX_MS)
			http_query_bad(&c->q, "wait", "at most 60s");
		http_api_send_shape(c, &req, SH_RESULT);
		return;
	}
	if (strcmp(verb, "cancel") == 0) {
		struct http_api_ans *a = http_api_ans_new(c->aio, SH_CANCEL, 1);

		if (a == NULL)
			return;
		a->id = id;
		a->ids[0] = id;
		req.op = MSG_OP_CANCEL;
		req.delete_batch =
		    (struct msg_delete_batch) { 1, true, a->ids };
		http_api_send(c, &req, a);
		return;
	}
	lease = lease_of(c); /* the lease ops */
	if (strcmp(verb, "ack") == 0) {
		req.op = MSG_OP_ACK;
		req.ack = (struct msg_ack) { id, lease, c->force };
		if (http_query_str(&c->q, "to", to, sizeof(to)))
			req.ack.to = msg_cstr(to);
		if (c->body_len > MSG_RESULT_MAX) {
			http_api_error(c->aio, SLUICE_ERESULT,
			    "result: at most 65535 bytes");
			return;
		}
		req.ack.result = body_text(c, "result");
	} else if (strcmp(verb, "release") == 0) {
		req.op = MSG_OP_RELEASE;
		req.release = (struct msg_release) { id, lease, c->force };
		http_query_dur(&c->q, "delay", &req.release.delay);
		req.release.front = http_query_flag(&c->q, "front");
		if ((req.release.set_priority =
		            http_query_u64(&c->q, "priority", UINT32_MAX, &v)))
			req.release.priority = (uint32_t)v;
	} else if (strcmp(verb, "fail") == 0) {
		req.op = MSG_OP_FAIL;
		req.fail = (struct msg_fail) { id, lease, c->force };
		req.fail.set_delay =
		    http_query_dur(&c->q, "delay", &req.fail.delay);
		req.fail.fatal = http_query_flag(&c->q, "fatal");
		req.fail.error = body_text(c, "error");
	} else { /* touch, bury */
		req.op = verb[0] == 't' ? MSG_OP_TOUCH : MSG_OP_BURY;
		req.lease = (struct msg_lease) { id, lease, c->force };
		if (req.op == MSG_OP_BURY)
			req.lease.error = body_text(c, "error");
	}
	http_api_send_shape(c, &req, SH_AFTER);
}

/* POST /v1/tasks/ack: [{"id":N,"lease":L},...]; /v1/tasks/delete and
 * /v1/tasks/cancel: [N,...] (`verb` their first letter) */
void
http_api_task_batch(struct http_api_call *c, char verb)
{
	struct msg_ack_item items[MSG_BATCH_MAX];
	bool ack = verb == 'a';
	struct msg_req req = { .op = ack ? MSG_OP_ACK_BATCH
		    : verb == 'c'        ? MSG_OP_CANCEL
		                         : MSG_OP_DELETE_BATCH };
	size_t n = http_api_batch_ids(c->body, c->body_len, ack, items);
	struct http_api_ans *a;

	if (n == 0) {
		http_api_error(c->aio, SLUICE_EINVAL,
		    ack ? "ack: the body is a JSON array of 1..1000 "
		          "{\"id\":N,\"lease\":N}"
		        : verb == 'c'
		        ? "cancel: the body is a JSON array of 1..1000 ids"
		        : "delete: the body is a JSON array of 1..1000 ids");
		return;
	}
	if ((a = http_api_ans_new(c->aio, SH_ITEMS, n)) == NULL)
		return;
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
	http_api_send(c, &req, a);
}
