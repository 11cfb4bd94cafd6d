/* bench_tcp - the driver of sluice-bench for servers spoken to over plain
 * TCP: beanstalkd's text protocol (beanstalkd itself, sluice's beanstalk
 * face), Redis's RESP and sluiced's HTTP task API. What goes on the wire is a
 * dialect's (bench_beanstalk.c, bench_redis.c): its commands, and what a reply
 * means for the request it answers. The driver owns the rest: the connections,
 * the event loop, the timing and the checks.
 *
 * Each connection is a small state machine, one op in flight (closed
 * loop):
 *
 *   IDLE --put--> PUT --k replies DONE--> (next op)
 *   IDLE --take--> TAKE --EMPTY--> drain: stop; mixed: (next op)
 *                       --TASK--> ACK --m replies DONE--> (next op)
 *
 * where a put of a batch of k is k commands in one write, and an ack may
 * be several commands too (Redis: XACK + XDEL). Any other reply stops the
 * run with the server's words. */
#ifndef SLUICE_BENCH_TCP_H
#define SLUICE_BENCH_TCP_H

#include <stddef.h>
#include <stdint.h>

#include "bench_run.h"

enum bench_tphase {
	BT_IDLE = 0,
	BT_PUT,
	BT_TAKE,
	BT_ACK,
};

/* What a reply means to the request it answers. */
enum bench_tkind {
	BT_DONE = 1, /* put: stored; ack: done */
	BT_TASK,     /* take: a task, `id` and `body_len` */
	BT_EMPTY,    /* take: nothing was ready */
	BT_OTHER,    /* anything else: the run stops, `text` says why */
};

enum {
	BENCH_TID_MAX = 64, /* a task id as text, NUL included */
};

struct bench_treply {
	enum bench_tkind kind;
	char id[BENCH_TID_MAX]; /* BT_TASK */
	size_t body_len;        /* BT_TASK: its payload's bytes */
	const char *text;       /* the reply's first line, for messages */
	size_t text_len;
};

struct bench_tconn;

/* A reply parser for the blocking calls of set-up: the bytes the reply at
 * `p` spans (> 0) and `*out`, 0 for more bytes, -1 when malformed. */
typedef long bench_tparse_fn(const char *p, size_t len, void *out);

struct bench_dialect {
	const char *server;    /* in messages: "beanstalkd", "Redis" */
	const char *take_name; /* the take's commands, in messages */
	const char *ack_name;
	/* Right after a connection is made (blocking); NULL: nothing. */
	int (*hello)(struct bench_tconn *c, int64_t deadline);
	/* Once, on the first connection, before the tube is counted
	 * (blocking); NULL: nothing. */
	int (*prepare)(struct bench_tconn *c, int64_t deadline);
	/* Tasks of the tube in any state (blocking); -1 after
	 * bench_tconn_fail. */
	long long (*count)(struct bench_tconn *c, int64_t deadline);
	/* One put of o->bytes bytes: malloc'd bytes and their length; NULL
	 * when out of memory. */
	char *(*put_cmd)(const struct bench_opts *o, size_t *len);
	/* Queue a take of one task that does not wait. 0 or -1. */
	int (*take)(struct bench_tconn *c);
	/* Queue the ack of the task `id`; returns the replies it brings (>
	 * 0), or -1. */
	int (*ack)(struct bench_tconn *c, const char *id);
	/* The most requests one write may pipeline; 0: no limit. */
	unsigned pipeline_max;
	/* The reply at `p` to a request of `phase`, as the parsers above. */
	long (*reply)(enum bench_tphase phase, const char *p, size_t len,
	    struct bench_treply *r);
};

extern const struct bench_dialect bench_beanstalk_dialect;
extern const struct bench_dialect bench_redis_dialect;
extern const struct bench_dialect bench_http_dialect;

/* Runs the workload `o` names with dialect `dl`, as bench_sluice_run. */
int bench_tcp_run(const struct bench_dialect *dl, const struct bench_opts *o,
    struct bench_result *r);

/* ---- for the dialects ---------------------------------------------- */

unsigned bench_tconn_idx(const struct bench_tconn *c);
const struct bench_opts *bench_tconn_opts(const struct bench_tconn *c);

/* Queues `n` bytes to send. 0, or -1 after bench_tconn_fail. */
int bench_tconn_append(struct bench_tconn *c, const void *p, size_t n);

/* Blocking (set-up only): sends what is queued, then waits for the next
 * reply and parses it with `parse`. 0, or -1 after bench_tconn_fail. */
int bench_tconn_flush(struct bench_tconn *c, int64_t deadline);
int bench_tconn_wait(
    struct bench_tconn *c, bench_tparse_fn *parse, void *out, int64_t deadline);

/* Stops the run with "connection <i>: " and the message (the first error
 * wins). */
void bench_tconn_fail(struct bench_tconn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
