/* bench_redis - the Redis dialect of sluice-bench's TCP driver
 * (bench_tcp.c): a queue as a Redis stream (the tube's name) read by one
 * consumer group, spoken in RESP (bench_resp.c).
 *
 *   prepare  XGROUP CREATE T g 0 MKSTREAM  ->  +OK (or -BUSYGROUP: it was
 *            there already)
 *   put      XADD T * payload <bytes>      ->  $<id>
 *            (--batch N: N of them pipelined in one write)
 *   take     XREADGROUP GROUP g c<i> COUNT 1 STREAMS T >
 *                                          ->  the entry, or nil (nothing
 *                                              new: the tube is empty)
 *   ack      XACK T g <id> and XDEL T <id>, pipelined in one write
 *                                          ->  :1 and :1
 *   count    XLEN T (acked entries are deleted, so what is left is what
 *            was not acked)
 *
 * Connection i is the group's consumer c<i>. A take is logged by Redis
 * (it changes the group's pending list) as a take is by sluice. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_resp.h"
#include "bench_tcp.h"

enum {
	RD_ARGS_MAX = 16, /* arguments of a command rd_cmd sends */
};

static const char group[] = "g";
static const char field[] = "payload";

/* Queues the command of `argc` (at most RD_ARGS_MAX) NUL-terminated
 * arguments. */
static int
rd_cmd(struct bench_tconn *c, unsigned argc, const char *const *argv)
{
	size_t lens[RD_ARGS_MAX], n;
	char buf[512];

	assert(argc <= RD_ARGS_MAX);
	for (unsigned i = 0; i < argc; i++)
		lens[i] = strlen(argv[i]);
	n = bench_resp_cmd(buf, sizeof(buf), argc, argv, lens);
	if (n > sizeof(buf)) {
		bench_tconn_fail(c, "a command of %zu bytes", n);
		return -1;
	}
	return bench_tconn_append(c, buf, n);
}

static long
rd_parse(const char *p, size_t len, void *out)
{
	return bench_resp_parse(p, len, out);
}

/* A reply's first line, for messages. */
static void
rd_text(const char *p, size_t len, const char **text, size_t *text_len)
{
	const char *cr = memchr(p, '\r', len);

	*text = p;
	*text_len = cr != NULL ? (size_t)(cr - p) : len;
}

static int
rd_call(struct bench_tconn *c, unsigned argc, const char *const *argv,
    struct bench_resp *rep, int64_t deadline)
{
	if (rd_cmd(c, argc, argv) != 0 || bench_tconn_flush(c, deadline) != 0)
		return -1;
	return bench_tconn_wait(c, rd_parse, rep, deadline);
}

static void
rd_unexpected(
    struct bench_tconn *c, const char *cmd, const struct bench_resp *rep)
{
	if (rep->type == BENCH_RESP_ERROR || rep->type == BENCH_RESP_SIMPLE)
		bench_tconn_fail(c, "%s: Redis answered '%.*s'", cmd,
		    (int)rep->len, rep->str);
	else
		bench_tconn_fail(c, "%s: Redis answered a reply of type '%c'",
		    cmd, (char)rep->type);
}

/* The group, from the start of the stream (it is created empty when
 * missing). */
static int
rd_prepare(struct bench_tconn *c, int64_t deadline)
{
	const char *tube = bench_tconn_opts(c)->tube;
	const char *argv[] = { "XGROUP", "CREATE", tube, group, "0",
		"MKSTREAM" };
	struct bench_resp rep;

	if (rd_call(c, 6, argv, &rep, deadline) != 0)
		return -1;
	if (rep.type == BENCH_RESP_SIMPLE && rep.len == 2 &&
	    memcmp(rep.str, "OK", 2) == 0)
		return 0;
	if (rep.type == BENCH_RESP_ERROR && rep.len >= 9 &&
	    memcmp(rep.str, "BUSYGROUP", 9) == 0)
		return 0;
	rd_unexpected(c, "XGROUP CREATE", &rep);
	return -1;
}

static long long
rd_count(struct bench_tconn *c, int64_t deadline)
{
	const char *argv[] = { "XLEN", bench_tconn_opts(c)->tube };
	struct bench_resp rep;

	if (rd_call(c, 2, argv, &rep, deadline) != 0)
		return -1;
	if (rep.type != BENCH_RESP_INT || rep.n < 0) {
		rd_unexpected(c, "XLEN", &rep);
		return -1;
	}
	return rep.n;
}

static char *
rd_put_cmd(const struct bench_opts *o, size_t *len)
{
	const char *argv[] = { "XADD", o->tube, "*", field, NULL };
	size_t lens[] = { 4, strlen(o->tube), 1, sizeof(field) - 1, o->bytes };
	char *payload, *cmd;

	if ((payload = malloc(o->bytes ? o->bytes : 1)) == NULL)
		return NULL;
	memset(payload, 'x', o->bytes);
	argv[4] = payload;
	*len = bench_resp_cmd(NULL, 0, 5, argv, lens);
	if ((cmd = malloc(*len)) != NULL)
		bench_resp_cmd(cmd, *len, 5, argv, lens);
	free(payload);
	return cmd;
}

static int
rd_take(struct bench_tconn *c)
{
	char consumer[16];
	const char *argv[] = { "XREADGROUP", "GROUP", group, consumer, "COUNT",
		"1", "STREAMS", bench_tconn_opts(c)->tube, ">" };

	snprintf(consumer, sizeof(consumer), "c%u", bench_tconn_idx(c));
	return rd_cmd(c, 9, argv);
}

static int
rd_ack(struct bench_tconn *c, const char *id)
{
	const char *tube = bench_tconn_opts(c)->tube;
	const char *xack[] = { "XACK", tube, group, id };
	const char *xdel[] = { "XDEL", tube, id };

	if (rd_cmd(c, 4, xack) != 0 || rd_cmd(c, 3, xdel) != 0)
		return -1;
	return 2;
}

static long
rd_reply(
    enum bench_tphase phase, const char *p, size_t len, struct bench_treply *r)
{
	struct bench_resp rep;
	long k = bench_resp_parse(p, len, &rep);
	const char *id;
	size_t id_len, value_len;

	if (k <= 0)
		return k;
	r->kind = BT_OTHER;
	rd_text(p, (size_t)k, &r->text, &r->text_len);
	switch (phase) {
	case BT_PUT:
		if (rep.type == BENCH_RESP_BULK && !rep.nil)
			r->kind = BT_DONE;
		break;
	case BT_TAKE:
		if (rep.type != BENCH_RESP_ARRAY && rep.type != BENCH_RESP_BULK)
			break;
		switch (bench_resp_stream_entry(
		    p, (size_t)k, field, &id, &id_len, &value_len)) {
		case 0:
			r->kind = BT_EMPTY;
			break;
		case 1:
			if (id_len >= sizeof(r->id))
				break;
			memcpy(r->id, id, id_len);
			r->id[id_len] = '\0';
			r->body_len = value_len;
			r->kind = BT_TASK;
			break;
		}
		break;
	case BT_ACK:
		/* XACK: one entry acknowledged; XDEL: one entry deleted */
		if (rep.type == BENCH_RESP_INT && rep.n == 1)
			r->kind = BT_DONE;
		break;
	case BT_IDLE:
		break;
	}
	return k;
}

const struct bench_dialect bench_redis_dialect = {
	.server = "Redis",
	.take_name = "XREADGROUP",
	.ack_name = "XACK + XDEL",
	.prepare = rd_prepare,
	.count = rd_count,
	.put_cmd = rd_put_cmd,
	.take = rd_take,
	.ack = rd_ack,
	.reply = rd_reply,
};
