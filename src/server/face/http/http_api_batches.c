/* http_api_batches - /v1/batches[/NAME[/close|/cancel]]
 * (http_api_batches.h): each a wire request (batch_show, batch_set), a
 * batch answered in the JSON of `sluice batch show --json`; GET
 * /v1/batches is batch_show's list (flag 0x01): ?limit=N (1..1000, 100
 * by default) of them, open ones first, as {"batches":[...],"total":N}. */
#include <inttypes.h>
#include <string.h>

#include "json/json.h"
#include "proto/msg.h"
#include "server/face/http/http_api_answer.h"
#include "server/face/http/http_api_batches.h"
#include "server/face/http/http_face.h"
#include "server/face/http/http_query.h"
#include "sluice.h"

unsigned
http_api_batches_methods(const struct http_api_call *c)
{
	if (c->nseg == 0 || strcmp(c->seg[0], "batches") != 0)
		return 0;
	if (c->nseg == 1)
		return HTTP_M_GET;
	if (c->nseg == 2)
		return HTTP_M_GET | HTTP_M_PUT;
	if (c->nseg == 3 &&
	    (strcmp(c->seg[2], "close") == 0 ||
	        strcmp(c->seg[2], "cancel") == 0))
		return HTTP_M_POST;
	return 0;
}

bool
http_api_batches_match(const struct http_api_call *c)
{
	unsigned m = http_api_batches_methods(c);

	return (strcmp(c->method, "GET") == 0 && (m & HTTP_M_GET)) ||
	    (strcmp(c->method, "PUT") == 0 && (m & HTTP_M_PUT)) ||
	    (strcmp(c->method, "POST") == 0 && (m & HTTP_M_POST));
}

static void
json_callback(FILE *f, struct msg_str tube, uint64_t id)
{
	if (tube.len == 0) {
		fputs("null", f);
		return;
	}
	fputs("{\"tube\":", f);
	json_str(f, tube.p, tube.len);
	fprintf(f, ",\"task\":%" PRIu64 "}", id);
}

void
http_api_batch_json(FILE *f, const struct msg_batch *b)
{
	fputs("{\"name\":", f);
	json_str(f, b->name.p, b->name.len);
	fprintf(f,
	    ",\"total\":%" PRIu64 ",\"waiting\":%" PRIu64 ",\"ready\":%" PRIu64
	    ",\"delayed\":%" PRIu64 ",\"taken\":%" PRIu64 ",\"buried\":%" PRIu64
	    ",\"acked\":%" PRIu64 ",\"failed\":%" PRIu64
	    ",\"started_at\":%" PRIu64 ",\"ended_at\":%" PRIu64
	    ",\"closed\":%s,\"ended\":%s",
	    b->total, b->waiting, b->ready, b->delayed, b->taken, b->buried,
	    b->acked, b->failed, b->started_at, b->ended_at,
	    b->closed ? "true" : "false", b->ended ? "true" : "false");
	fputs(",\"on_success\":", f);
	json_callback(f, b->success_tube, b->success_id);
	fputs(",\"on_complete\":", f);
	json_callback(f, b->complete_tube, b->complete_id);
	fputc('}', f);
}

void
http_api_batches_json(FILE *f, const struct msg_batch_rep *r)
{
	struct msg_iter it = r->it;
	struct msg_batch b;
	const char *sep = "";

	fputs("{\"batches\":[", f);
	while (msg_next_batch(&it, &b)) {
		fputs(sep, f);
		http_api_batch_json(f, &b);
		sep = ",";
	}
	fprintf(f, "],\"total\":%" PRIu64 "}", r->total);
}

/* A callback from the query: `key`=TUBE and `key`_payload=TEXT, into
 * the caller's buffers. */
static void
callback(struct http_api_call *c, const char *key, char *tube, size_t tcap,
    char *pl, size_t pcap, struct msg_batch_req *b, uint8_t bit)
{
	char pkey[32];

	if (!http_query_has(c->q.uri, key))
		return;
	b->what |= bit;
	if (!http_query_str(&c->q, key, tube, tcap))
		tube[0] = '\0'; /* on_success= : remove it */
	else if (tube[0] != '\0' && !msg_tube_valid(tube, strlen(tube)))
		http_query_bad(&c->q, key,
		    "bad callback tube name: 1-200 bytes of A-Z a-z 0-9 _ . : "
		    "/ "
		    "-; nothing was changed");
	snprintf(pkey, sizeof(pkey), "%s_payload", key);
	if (!http_query_str(&c->q, pkey, pl, pcap))
		pl[0] = '\0';
	if (bit == MSG_BATCH_SUCCESS) {
		b->success_tube = msg_cstr(tube);
		b->success_payload = msg_cstr(pl);
	} else {
		b->complete_tube = msg_cstr(tube);
		b->complete_payload = msg_cstr(pl);
	}
}

void
http_api_batches_route(struct http_api_call *c)
{
	enum { PL_MAX = 4096 }; /* a query's payload; longer: the CLI */
	static char st[MSG_TUBE_MAX + 2], ct[MSG_TUBE_MAX + 2];
	static char sp[PL_MAX], cp[PL_MAX];
	struct msg_req req = { 0 };

	if (c->nseg == 1) {
		uint64_t limit = HTTP_API_BATCHES_DEFAULT;

		if (http_query_u64(&c->q, "limit", UINT32_MAX, &limit) &&
		    (limit == 0 || limit > MSG_BATCHES_MAX))
			http_query_bad(&c->q, "limit", "1..1000");
		req.op = MSG_OP_BATCH_SHOW;
		req.batch.list = true;
		req.batch.limit = (uint32_t)limit;
		http_api_send_shape(c, &req, SH_BATCHES);
		return;
	}
	req.batch.name = msg_cstr(c->seg[1]);
	if (c->method[0] == 'G') {
		req.op = MSG_OP_BATCH_SHOW;
		http_api_send_shape(c, &req, SH_BATCH);
		return;
	}
	req.op = MSG_OP_BATCH_SET;
	if (c->nseg == 3) {
		req.batch.what =
		    c->seg[2][1] == 'l' ? MSG_BATCH_CLOSE : MSG_BATCH_CANCEL;
	} else {
		callback(c, "on_success", st, sizeof(st), sp, sizeof(sp),
		    &req.batch, MSG_BATCH_SUCCESS);
		callback(c, "on_complete", ct, sizeof(ct), cp, sizeof(cp),
		    &req.batch, MSG_BATCH_COMPLETE);
		if (http_query_flag(&c->q, "close"))
			req.batch.what |= MSG_BATCH_CLOSE;
		if (req.batch.what == 0)
			http_query_bad(&c->q, "on_success",
			    "give on_success, on_complete or close=1");
	}
	http_api_send_shape(c, &req, SH_BATCH);
}
