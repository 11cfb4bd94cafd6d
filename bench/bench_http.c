/* bench_http - the HTTP dialect of sluice-bench's TCP driver (bench_tcp.c):
 * sluiced's task API (--http, docs/http-api.md) over keep-alive HTTP/1.1
 * connections, one request in flight on each.
 *
 *   put:   POST /v1/tubes/T/tasks + payload  ->  201 {"id":N,...}
 *          (--batch N: N requests pipelined in one write)
 *   take:  POST /v1/tubes/T/take             ->  200 {"tasks":[{"id":N,
 *                                                "lease":L,...}]}, or
 *                                                {"tasks":[]} (empty)
 *   ack:   POST /v1/tasks/N/ack?lease=L      ->  200
 *
 * The tube is counted with GET /v1/tubes/T/stats (ready + delayed + taken
 * + buried; 404 before the tube exists: 0). The --url is the HTTP
 * address as tcp://HOST:PORT. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench_tcp.h"

/* One HTTP response, as the parser found it. */
struct hresp {
	int status;
	const char *body;
	size_t body_len;
};

/* The bytes the response at `p` spans (> 0) and *out; 0 when more bytes
 * are needed; -1 when it is not an HTTP/1.1 response with a
 * Content-Length. */
static long
http_parse(const char *p, size_t len, void *out)
{
	struct hresp *r = out;
	const char *end = NULL, *cl = NULL;
	unsigned long long n;
	size_t head;

	for (size_t i = 0; i + 4 <= len; i++) {
		if (memcmp(p + i, "\r\n\r\n", 4) == 0) {
			end = p + i;
			break;
		}
		if ((i == 0 || p[i - 1] == '\n') &&
		    strncasecmp(p + i, "Content-Length:", 15) == 0)
			cl = p + i + 15;
	}
	if (end == NULL)
		return len > 65536 ? -1 : 0;
	if (len < 12 || memcmp(p, "HTTP/1.", 7) != 0 || cl == NULL)
		return -1;
	n = strtoull(cl, NULL, 10);
	head = (size_t)(end - p) + 4;
	if (len < head + n)
		return 0;
	r->status = atoi(p + 9);
	r->body = p + head;
	r->body_len = (size_t)n;
	return (long)(head + n);
}

/* The number after the first `"key":` in the `len` bytes at `p`; false
 * when absent. */
static bool
num_after(const char *p, size_t len, const char *key, uint64_t *out)
{
	size_t k = strlen(key);

	for (size_t i = 0; i + k + 3 < len; i++) {
		if (p[i] == '"' && memcmp(p + i + 1, key, k) == 0 &&
		    p[i + 1 + k] == '"' && p[i + 2 + k] == ':') {
			*out = strtoull(p + i + 3 + k, NULL, 10);
			return true;
		}
	}
	return false;
}

/* HOST:PORT of the --url, as a client sends it in Host (the server
 * refuses a Host it does not answer to). */
static const char *
host_of(const struct bench_opts *o)
{
	const char *p = strstr(o->url, "://");

	return p != NULL ? p + 3 : o->url;
}

static int
http_req(struct bench_tconn *c, const char *method, const char *path,
    const void *body, size_t len)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
	    "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %zu\r\n\r\n", method,
	    path, host_of(bench_tconn_opts(c)), len);

	if (n < 0 || (size_t)n >= sizeof(head)) {
		bench_tconn_fail(c, "a path too long");
		return -1;
	}
	if (bench_tconn_append(c, head, (size_t)n) != 0)
		return -1;
	return len > 0 ? bench_tconn_append(c, body, len) : 0;
}

static long long
http_count(struct bench_tconn *c, int64_t deadline)
{
	const char *tube = bench_tconn_opts(c)->tube;
	static const char *const states[] = { "ready", "delayed", "taken",
		"buried" };
	char path[BENCH_TUBE_MAX + 32];
	struct hresp r;
	long long sum = 0;

	snprintf(path, sizeof(path), "/v1/tubes/%s/stats", tube);
	if (http_req(c, "GET", path, NULL, 0) != 0 ||
	    bench_tconn_flush(c, deadline) != 0 ||
	    bench_tconn_wait(c, http_parse, &r, deadline) != 0)
		return -1;
	if (r.status == 404)
		return 0;
	for (size_t i = 0; i < 4; i++) {
		uint64_t v;

		if (r.status != 200 ||
		    !num_after(r.body, r.body_len, states[i], &v)) {
			bench_tconn_fail(c,
			    "GET %s: the server answered %d %.*s", path,
			    r.status, (int)r.body_len, r.body);
			return -1;
		}
		sum += (long long)v;
	}
	return sum;
}

static char *
http_put_cmd(const struct bench_opts *o, size_t *len)
{
	char head[BENCH_TUBE_MAX + BENCH_URL_MAX + 128], *cmd;
	int n = snprintf(head, sizeof(head),
	    "POST /v1/tubes/%s/tasks HTTP/1.1\r\nHost: %s\r\n"
	    "Content-Length: %zu\r\n\r\n",
	    o->tube, host_of(o), o->bytes);

	if (n < 0 || (size_t)n >= sizeof(head) ||
	    (cmd = malloc((size_t)n + o->bytes)) == NULL)
		return NULL;
	memcpy(cmd, head, (size_t)n);
	memset(cmd + n, 'x', o->bytes);
	*len = (size_t)n + o->bytes;
	return cmd;
}

static int
http_take(struct bench_tconn *c)
{
	char path[BENCH_TUBE_MAX + 32];

	snprintf(
	    path, sizeof(path), "/v1/tubes/%s/take", bench_tconn_opts(c)->tube);
	return http_req(c, "POST", path, NULL, 0);
}

/* `id` is "ID:LEASE", as the take's reply left it. */
static int
http_ack(struct bench_tconn *c, const char *id)
{
	char path[BENCH_TID_MAX + 32];
	const char *colon = strchr(id, ':');

	if (colon == NULL) {
		bench_tconn_fail(c, "ack of '%s': no lease", id);
		return -1;
	}
	snprintf(path, sizeof(path), "/v1/tasks/%.*s/ack?lease=%s",
	    (int)(colon - id), id, colon + 1);
	return http_req(c, "POST", path, NULL, 0) == 0 ? 1 : -1;
}

static long
http_reply(
    enum bench_tphase phase, const char *p, size_t len, struct bench_treply *r)
{
	struct hresp h;
	long k = http_parse(p, len, &h);
	uint64_t id, lease, size;

	if (k <= 0)
		return k;
	r->kind = BT_OTHER;
	r->text = p;
	r->text_len = (size_t)k;
	switch (phase) {
	case BT_PUT:
		if (h.status == 201 || h.status == 200)
			r->kind = BT_DONE;
		break;
	case BT_TAKE:
		if (h.status != 200)
			break;
		if (!num_after(h.body, h.body_len, "id", &id)) {
			r->kind = BT_EMPTY;
			break;
		}
		if (!num_after(h.body, h.body_len, "lease", &lease) ||
		    !num_after(h.body, h.body_len, "size", &size))
			break;
		snprintf(
		    r->id, sizeof(r->id), "%" PRIu64 ":%" PRIu64, id, lease);
		r->body_len = (size_t)size;
		r->kind = BT_TASK;
		break;
	case BT_ACK:
		if (h.status == 200)
			r->kind = BT_DONE;
		break;
	case BT_IDLE:
		break;
	}
	return k;
}

const struct bench_dialect bench_http_dialect = {
	.server = "sluiced's HTTP API",
	.take_name = "POST take",
	.ack_name = "POST ack",
	.count = http_count,
	.put_cmd = http_put_cmd,
	.take = http_take,
	.ack = http_ack,
	.reply = http_reply,
	/* nng's HTTP server drops a connection that pipelines more than a
	 * few kilobytes of requests, and answers a pipelined one late:
	 * one request at a time */
	.pipeline_max = 1,
};
