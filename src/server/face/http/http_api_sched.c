/* http_api_sched - /v1/schedules[/NAME[/pause|/resume]]
 * (http_api_sched.h): each a wire request (sched_set, sched_list,
 * sched_ctl), answered in the JSON of `sluice schedule ... --json`.
 *
 * PUT /v1/schedules/NAME takes the schedule's options as query
 * parameters (tube, cron, tz, catch_up, priority, ttr, max_attempts,
 * paused) and its payload as the body, as a put does; the cron
 * expression's spaces are %20 or +. */
#include <string.h>

#include "proto/msg.h"
#include "server/face/http/http_api_answer.h"
#include "server/face/http/http_api_sched.h"
#include "server/face/http/http_query.h"
#include "sluice.h"

bool
http_api_sched_match(const struct http_api_call *c)
{
	const char *m = c->method;

	if (c->nseg == 0 || strcmp(c->seg[0], "schedules") != 0)
		return false;
	switch (c->nseg) {
	case 1:
		return strcmp(m, "GET") == 0;
	case 2:
		return strcmp(m, "GET") == 0 || strcmp(m, "PUT") == 0 ||
		    strcmp(m, "DELETE") == 0;
	case 3:
		return strcmp(m, "POST") == 0 &&
		    (strcmp(c->seg[2], "pause") == 0 ||
		        strcmp(c->seg[2], "resume") == 0);
	default:
		return false;
	}
}

static void
set(struct http_api_call *c, struct msg_req *req)
{
	struct msg_sched_set *s = &req->sched_set;
	char tube[MSG_TUBE_MAX + 2], cron[MSG_SCHED_STR_MAX + 2];
	char tz[MSG_SCHED_STR_MAX + 2], mode[8];
	uint64_t v;

	req->op = MSG_OP_SCHED_SET;
	s->name = msg_cstr(c->seg[1]);
	s->catch_up = MSG_CATCH_ONE;
	if (http_query_str(&c->q, "tube", tube, sizeof(tube)))
		s->tube = msg_cstr(tube);
	else
		http_query_bad(&c->q, "tube", "the schedule's tube is needed");
	if (http_query_str(&c->q, "cron", cron, sizeof(cron)))
		s->cron = msg_cstr(cron);
	else
		http_query_bad(&c->q, "cron",
		    "the schedule's cron expression is needed (M H DOM MON "
		    "DOW, spaces as %20 or +)");
	if (http_query_str(&c->q, "tz", tz, sizeof(tz)))
		s->tz = msg_cstr(tz);
	if (http_query_str(&c->q, "catch_up", mode, sizeof(mode))) {
		if (strcmp(mode, "none") == 0)
			s->catch_up = MSG_CATCH_NONE;
		else if (strcmp(mode, "all") == 0)
			s->catch_up = MSG_CATCH_ALL;
		else if (strcmp(mode, "one") != 0)
			http_query_bad(&c->q, "catch_up", "none, one or all");
	}
	s->priority = 1024;
	if (http_query_u64(&c->q, "priority", UINT32_MAX, &v))
		s->priority = (uint32_t)v;
	if (http_query_dur(&c->q, "ttr", &v))
		s->ttr = v;
	if (http_query_u64(&c->q, "max_attempts", UINT32_MAX, &v))
		s->max_attempts = (uint32_t)v;
	s->paused = http_query_flag(&c->q, "paused");
	s->payload = (struct msg_str) { c->body, c->body_len };
	http_api_send_shape(c, req, SH_SCHEDULE);
}

void
http_api_sched_route(struct http_api_call *c)
{
	struct msg_req req = { 0 };

	if (c->nseg == 1) {
		req.op = MSG_OP_SCHED_LIST;
		http_api_send_shape(c, &req, SH_SCHEDULES);
		return;
	}
	if (c->nseg == 3) {
		req.op = MSG_OP_SCHED_CTL;
		req.sched.name = msg_cstr(c->seg[1]);
		req.sched.action = strcmp(c->seg[2], "pause") == 0
		    ? MSG_SCHED_PAUSE
		    : MSG_SCHED_RESUME;
		http_api_send_shape(c, &req, SH_SCHEDULE);
		return;
	}
	switch (c->method[0]) {
	case 'G':
		req.op = MSG_OP_SCHED_LIST;
		req.sched.name = msg_cstr(c->seg[1]);
		req.sched.payloads = true;
		http_api_send_shape(c, &req, SH_SCHEDULE);
		break;
	case 'P':
		set(c, &req);
		break;
	default:
		req.op = MSG_OP_SCHED_CTL;
		req.sched.name = msg_cstr(c->seg[1]);
		req.sched.action = MSG_SCHED_DELETE;
		http_api_send_shape(c, &req, SH_SCHED_DELETED);
		break;
	}
}
