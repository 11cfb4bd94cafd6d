/* bench_beanstalk - the beanstalkd dialect of sluice-bench's TCP driver
 * (bench_tcp.c): beanstalkd's text protocol (doc/protocol.txt of
 * beanstalkd), spoken to beanstalkd and to sluice's beanstalk face alike.
 *
 * Each connection first says `use T`, `watch T`, `ignore default`, so its
 * puts and reserves both go to the tube T. Then:
 *
 *   put:   `put 1024 0 60 S` + payload  ->  INSERTED <id>
 *          (--batch N: N puts in one write, N INSERTED back; beanstalkd
 *          has no batch put, so this is pipelining, timed per batch)
 *   take:  `reserve-with-timeout 0`  ->  RESERVED <id> <bytes> + job
 *                                    |   TIMED_OUT (the tube is empty)
 *   ack:   `delete <id>`             ->  DELETED
 *
 * The tube is counted with stats-tube (ready + reserved + delayed +
 * buried). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_bsreply.h"
#include "bench_tcp.h"

static long
bs_parse(const char *p, size_t len, void *out)
{
	return bench_bsreply_parse(p, len, out);
}

static int
bs_expect(struct bench_tconn *c, const struct bench_bsreply *rep,
    enum bench_bsreply_kind kind, const char *cmd)
{
	if (rep->kind == kind)
		return 0;
	bench_tconn_fail(c, "%s: beanstalkd answered '%.*s'", cmd,
	    (int)rep->line_len, rep->line);
	return -1;
}

static int
bs_call(struct bench_tconn *c, const char *cmd, size_t len,
    struct bench_bsreply *rep, int64_t deadline)
{
	if (bench_tconn_append(c, cmd, len) != 0 ||
	    bench_tconn_flush(c, deadline) != 0)
		return -1;
	return bench_tconn_wait(c, bs_parse, rep, deadline);
}

/* use, watch, ignore default: one write, three replies. */
static int
bs_hello(struct bench_tconn *c, int64_t deadline)
{
	const char *tube = bench_tconn_opts(c)->tube;
	char cmd[3 * (BENCH_TUBE_MAX + 32)];
	struct bench_bsreply rep;
	int n;

	n = snprintf(cmd, sizeof(cmd),
	    "use %s\r\nwatch %s\r\nignore default\r\n", tube, tube);
	if (bs_call(c, cmd, (size_t)n, &rep, deadline) != 0 ||
	    bs_expect(c, &rep, BS_USING, "use") != 0 ||
	    bench_tconn_wait(c, bs_parse, &rep, deadline) != 0 ||
	    bs_expect(c, &rep, BS_WATCHING, "watch") != 0 ||
	    bench_tconn_wait(c, bs_parse, &rep, deadline) != 0 ||
	    bs_expect(c, &rep, BS_WATCHING, "ignore default") != 0)
		return -1;
	return 0;
}

static long long
bs_count(struct bench_tconn *c, int64_t deadline)
{
	static const char *const keys[] = { "current-jobs-ready",
		"current-jobs-reserved", "current-jobs-delayed",
		"current-jobs-buried" };
	struct bench_bsreply rep;
	char cmd[BENCH_TUBE_MAX + 32];
	long long sum = 0;
	int n;

	n = snprintf(
	    cmd, sizeof(cmd), "stats-tube %s\r\n", bench_tconn_opts(c)->tube);
	if (bs_call(c, cmd, (size_t)n, &rep, deadline) != 0)
		return -1;
	if (rep.kind == BS_NOT_FOUND)
		return 0;
	if (bs_expect(c, &rep, BS_OK, "stats-tube") != 0)
		return -1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		long long v =
		    bench_bsreply_stat(rep.body, rep.body_len, keys[i]);
		if (v < 0) {
			bench_tconn_fail(
			    c, "stats-tube: no %s in the reply", keys[i]);
			return -1;
		}
		sum += v;
	}
	return sum;
}

static char *
bs_put_cmd(const struct bench_opts *o, size_t *len)
{
	char head[64], *cmd;
	int hn;

	hn = snprintf(head, sizeof(head), "put 1024 0 60 %zu\r\n", o->bytes);
	*len = (size_t)hn + o->bytes + 2;
	if ((cmd = malloc(*len)) == NULL)
		return NULL;
	memcpy(cmd, head, (size_t)hn);
	memset(cmd + hn, 'x', o->bytes);
	memcpy(cmd + hn + o->bytes, "\r\n", 2);
	return cmd;
}

static int
bs_take(struct bench_tconn *c)
{
	static const char reserve[] = "reserve-with-timeout 0\r\n";

	return bench_tconn_append(c, reserve, sizeof(reserve) - 1);
}

static int
bs_ack(struct bench_tconn *c, const char *id)
{
	char cmd[BENCH_TID_MAX + 16];
	int n = snprintf(cmd, sizeof(cmd), "delete %s\r\n", id);

	return bench_tconn_append(c, cmd, (size_t)n) == 0 ? 1 : -1;
}

static long
bs_reply(
    enum bench_tphase phase, const char *p, size_t len, struct bench_treply *r)
{
	struct bench_bsreply rep;
	long k = bench_bsreply_parse(p, len, &rep);

	if (k <= 0)
		return k;
	r->kind = BT_OTHER;
	r->text = rep.line;
	r->text_len = rep.line_len;
	switch (phase) {
	case BT_PUT:
		if (rep.kind == BS_INSERTED)
			r->kind = BT_DONE;
		break;
	case BT_TAKE:
		if (rep.kind == BS_TIMED_OUT) {
			r->kind = BT_EMPTY;
		} else if (rep.kind == BS_RESERVED) {
			r->kind = BT_TASK;
			snprintf(r->id, sizeof(r->id), "%llu",
			    (unsigned long long)rep.id);
			r->body_len = rep.body_len;
		}
		break;
	case BT_ACK:
		if (rep.kind == BS_DELETED)
			r->kind = BT_DONE;
		break;
	case BT_IDLE:
		break;
	}
	return k;
}

const struct bench_dialect bench_beanstalk_dialect = {
	.server = "beanstalkd",
	.take_name = "reserve-with-timeout",
	.ack_name = "delete",
	.hello = bs_hello,
	.count = bs_count,
	.put_cmd = bs_put_cmd,
	.take = bs_take,
	.ack = bs_ack,
	.reply = bs_reply,
};
