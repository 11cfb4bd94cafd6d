/* http_api_group - the routes of a tube's group limits (http_api_group.h).
 * The limits are read from the query as PUT /v1/tubes/T reads a tube's:
 * concurrency=N, rate=N/s|m|h, burst=N, `none` lifting one, and
 * unset=rate,concurrency; DELETE /v1/tubes/T/groups/G lifts the group's
 * own limits (its pause stays). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "server/face/http/http_api_answer.h"
#include "server/face/http/http_api_group.h"
#include "server/face/http/http_api_tube.h"
#include "server/face/http/http_face.h"
#include "server/face/http/http_query.h"
#include "sluice.h"

/* Which group path: 0 none, 3 group_limits, 4 a group, 5 its verb. */
static size_t
kind(const struct http_api_call *c)
{
	if (c->nseg == 3 && strcmp(c->seg[2], "group_limits") == 0)
		return 3;
	if (c->nseg >= 4 && strcmp(c->seg[2], "groups") == 0) {
		if (c->nseg == 4)
			return 4;
		if (c->nseg == 5 &&
		    (strcmp(c->seg[4], "pause") == 0 ||
		        strcmp(c->seg[4], "resume") == 0))
			return 5;
	}
	return 0;
}

unsigned
http_api_group_methods(const struct http_api_call *c)
{
	switch (kind(c)) {
	case 3:
		return HTTP_M_GET | HTTP_M_PUT;
	case 4:
		return HTTP_M_GET | HTTP_M_PUT | HTTP_M_DELETE;
	case 5:
		return HTTP_M_POST;
	default:
		return 0;
	}
}

/* The limits of a PUT, as a tube's (http_api_tube.c); one at least. */
static void
limits_of(struct http_api_call *c, struct msg_group_req *m)
{
	http_api_limits(c, &m->flow, &m->lunset);
	if (m->flow.set == 0 && m->lunset == 0 && c->q.err[0] == '\0')
		http_query_bad(&c->q, "concurrency",
		    "a limit to set: concurrency, rate (with burst) or unset");
}

void
http_api_group_route(struct http_api_call *c)
{
	struct msg_req req = { .op = MSG_OP_GROUP };
	struct msg_group_req *g = &req.group;
	size_t k = kind(c);

	g->tube = msg_cstr(c->seg[1]);
	if (k >= 4) {
		g->group = msg_cstr(c->seg[3]);
		if (!msg_tube_valid(g->group.p, g->group.len)) {
			http_api_error(c->aio, SLUICE_EGROUP,
			    "bad group name: 1-200 bytes of "
			    "[A-Za-z0-9_.:/-] (a / in a path is written %2F)");
			return;
		}
	}
	if (k == 5)
		g->verb = strcmp(c->seg[4], "pause") == 0 ? MSG_GROUP_PAUSE
		                                          : MSG_GROUP_RESUME;
	else if (strcmp(c->method, "PUT") == 0) {
		g->verb = MSG_GROUP_SET;
		limits_of(c, g);
	} else if (strcmp(c->method, "DELETE") == 0) {
		g->verb = MSG_GROUP_SET;
		g->lunset = MSG_LIM_RATE | MSG_LIM_CONCURRENCY;
	}
	http_api_send_shape(c, &req, SH_GROUP);
}

static void
write_limits(FILE *f, const char *name, const struct msg_flow *l)
{
	bool both = (l->set & MSG_LIM_RATE) && (l->set & MSG_LIM_CONCURRENCY);

	fprintf(f, ",\"%s\":{", name);
	if (l->set & MSG_LIM_RATE)
		fprintf(f,
		    "\"rate\":%" PRIu32 ",\"per_ms\":%" PRIu32
		    ",\"burst\":%" PRIu32 "%s",
		    l->rate, l->per_ms, l->burst, both ? "," : "");
	if (l->set & MSG_LIM_CONCURRENCY)
		fprintf(f, "\"concurrency\":%" PRIu32, l->concurrency);
	fputc('}', f);
}

void
http_api_group_json(FILE *f, const struct msg_group_rep *g)
{
	static const char *const holds[] = { "none", "rate", "concurrency",
		"paused" };

	fprintf(f, "{\"tube\":\"%.*s\"", (int)g->tube.len, g->tube.p);
	write_limits(f, "every_group", &g->every);
	fprintf(f,
	    ",\"overrides\":%" PRIu32 ",\"paused_groups\":%" PRIu32
	    ",\"held_groups\":%" PRIu32,
	    g->overrides, g->paused, g->held);
	if (g->group.len == 0) {
		fputc('}', f);
		return;
	}
	fprintf(f,
	    ",\"group\":\"%.*s\",\"own\":%s,\"paused\":%s,\"live\":%s"
	    ",\"ready\":%" PRIu32 ",\"taken\":%" PRIu32 ",\"tokens\":%" PRIu64
	    ",\"held_by\":\"%s\"",
	    (int)g->group.len, g->group.p,
	    (g->gflags & MSG_GROUP_OWN) ? "true" : "false",
	    (g->gflags & MSG_GROUP_PAUSED) ? "true" : "false",
	    (g->gflags & MSG_GROUP_LIVE) ? "true" : "false", g->ready, g->taken,
	    g->tokens, holds[g->holding & 3]);
	write_limits(f, "own_limits", &g->own);
	write_limits(f, "limits", &g->lim);
	fputc('}', f);
}
