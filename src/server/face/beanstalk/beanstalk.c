/* face_beanstalk - the beanstalk face: beanstalkd's text protocol, on the
 * core thread (beanstalk.h). This file holds the face's listener and its
 * connections (their FIFO of commands, their replies in order), and its
 * side of the core (the answers, struct face); the commands are
 * bs_cmd.c's, the translation of the core's answers bs_reply.c's, the
 * YAML of stats bs_stats.c's, the parser bs_proto.c's.
 *
 * Threads. None of its own: the listener and every connection are sockets
 * of the core's loop (face/conn.h), so a command's bytes, its request to
 * the core, the core's answer and the reply text never cross a thread.
 *
 * A connection. Bytes received are parsed (bs_proto.c) into commands,
 * each a `struct bs_req` in the connection's FIFO. A command either gets
 * its reply text at once (local commands, syntax errors), or is encoded
 * as a wire request and posted to the core (events_post_local); its reply is
 * translated to text when the core answers. Replies are written strictly
 * in FIFO order: the head leaves when it is done, then the next.
 *
 * Reserves block, as in beanstalkd: a reserve is posted only once every
 * command before it is answered (so DEADLINE_SOON sees the connection's
 * reservations as they are), and nothing after it is parsed until it is
 * answered (so a later put cannot feed it). Every other command is posted
 * as soon as it is parsed: the core answers one session's requests in
 * order, and a pipelined client gets group commit.
 *
 * Sessions. Each connection is a core session (events_session): its
 * reserves are session leases, released by the core when the connection
 * closes (EVENT_SESSION_CLOSE, posted after its last request). The face
 * remembers the deadline of each job the connection holds only to answer
 * DEADLINE_SOON; authority over jobs stays with the core (MSG_OP_JOB
 * checks the session).
 *
 * Lifetime. A request posted to the core holds its connection
 * (conn_hold) until bs_face_reply/bs_face_drop; conn.c frees the connection,
 * and bs_conn_free its requests, once it is closed and nothing holds it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>

#include "proto/msg.h"
#include "server/face/beanstalk/bs_conn.h"
#include "server/face/beanstalk/bs_proto.h"
#include "server/face/beanstalk/beanstalk.h"
#include "server/face/conn.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	RECV_MIN = 16 * 1024, /* input room past the largest command */
	OUT_HIGH = 4 << 20,   /* stop parsing while this much is unsent */
	REQS_MAX = 1024,      /* commands in flight per connection */
	BULKY_MAX = 4,        /* commands answered with a job body */
};

static void answer(struct bs_req *r, nng_msg *m);

/* ---- replies from the core --------------------------------------- */

static void
bs_face_reply(struct face_ctx *ctx, nng_msg *msg)
{
	answer(
	    (struct bs_req *)((char *)ctx - offsetof(struct bs_req, ctx)), msg);
}

static void
bs_face_drop(struct face_ctx *ctx)
{
	answer((struct bs_req *)((char *)ctx - offsetof(struct bs_req, ctx)),
	    NULL);
}

static const char *
bs_face_peer(const struct face_ctx *ctx)
{
	return ((const struct bs_req *)((const char *)ctx -
	            offsetof(struct bs_req, ctx)))
	    ->conn->conn->peer;
}

static bool
bs_face_alive(const struct face_ctx *ctx)
{
	return !((const struct bs_req *)((const char *)ctx -
	             offsetof(struct bs_req, ctx)))
	            ->conn->closed;
}

const struct face bs_face = {
	.reply = bs_face_reply,
	.drop = bs_face_drop,
	.peer = bs_face_peer,
	.alive = bs_face_alive,
	.lost_lease_ready = true, /* beanstalkd's rule */
	.restart_leases = true,   /* and its ttr from the answer */
};

/* ---- a connection's commands, in order --------------------------- */

static bool
is_reserve(const struct bs_req *r)
{
	return r->cmd.kind == BS_RESERVE || r->cmd.kind == BS_RESERVE_TIMEOUT;
}

/* Moves the replies of the done commands at the head to the output. */
void
bs_conn_flush(struct bs_conn *c)
{
	struct bs_req *r;

	while ((r = c->head) != NULL) {
		if (!r->done && !r->posted && is_reserve(r))
			bs_cmd_reserve(r);
		if (!r->done)
			return;
		c->head = r->next;
		if (c->head == NULL)
			c->tail = NULL;
		c->nreqs--;
		if (r->cmd.kind == BS_QUIT)
			c->quit = true;
		conn_write(c->conn, r->text.data, r->text.len);
		conn_msg_queued(c->conn);
		if (r->bulky)
			c->nbulky--;
		bs_req_free(r);
	}
}

/* Parses what was received into commands, while the connection may take
 * more. */
static void
conn_parse(struct bs_conn *c)
{
	struct conn *k = c->conn;
	size_t max_job = c->bs->cfg.max_job;

	while (!c->quit && !c->closed && !c->eof && k->in_off < k->in_len &&
	    c->nreqs < REQS_MAX && conn_unsent(k) < OUT_HIGH &&
	    conn_room(k, c->nreqs - (c->waiting ? 1 : 0))) {
		struct bs_cmd cmd;
		enum bs_err err;
		size_t n;

		/* a reserve blocks what follows it; quit ends the input */
		if (c->tail != NULL &&
		    ((is_reserve(c->tail) && !c->tail->done) ||
		        c->tail->cmd.kind == BS_QUIT))
			break;
		n = bs_parse(&c->ps, (const char *)k->in + k->in_off,
		    k->in_len - k->in_off, max_job, &cmd, &err);
		if (n == 0) {
			conn_want_more(k); /* the frame timeout runs */
			break;
		}
		/* parsed again once a body is written (parsing a whole
		 * command changes no state) */
		if (err == BS_OK && bs_cmd_bulky(cmd.kind) &&
		    c->nbulky >= BULKY_MAX)
			break;
		c->bs->cmds[cmd.count_as]++;
		if (err != BS_OK) {
			struct bs_req *r = bs_req_new(c, NULL);

			if (r == NULL) {
				c->eof = true;
				break;
			}
			bs_req_text(r, bs_err_line(err));
		} else if (cmd.kind != BS_NONE) {
			bs_cmd_exec(c, &cmd);
		}
		conn_consume(k, n);
		bs_conn_flush(c);
	}
}

/* After any event on the connection: reply, parse, close when done. */
void
bs_conn_progress(struct bs_conn *c)
{
	if (c->closed)
		return;
	bs_conn_flush(c);
	conn_parse(c);
	if (c->eof) {
		conn_close(c->conn);
		return;
	}
	if (c->quit && c->head == NULL)
		conn_close_when_sent(c->conn);
}

/* The core's answer `m` (NULL: dropped) to a posted request. */
static void
answer(struct bs_req *r, nng_msg *m)
{
	struct bs_conn *c = r->conn;
	struct conn *k = c->conn;
	/* the server's limits: a job up to --max-payload comes back whole */
	const struct msg_limits lim = { MSG_SIZE_MAX, c->bs->cfg.payload_max };
	struct msg_rep rep;

	r->posted = false;
	c->posted--;
	if (is_reserve(r))
		c->waiting = false;
	if (c->closed || m == NULL) {
		/* gone, or dropped by the core (its session ended) */
		if (m == NULL && !c->closed)
			bs_req_text(r, "INTERNAL_ERROR\r\n");
		if (c->closed)
			r->done = true;
	} else if (msg_decode_rep(
	               nng_msg_body(m), nng_msg_len(m), &lim, &rep) != 0) {
		bs_req_text(r, "INTERNAL_ERROR\r\n");
	} else {
		/* translate may post the request again (pause-tube) */
		bs_translate(r, &rep);
	}
	if (m != NULL)
		nng_msg_free(m);
	bs_conn_progress(c);
	conn_release(k);
}

/* ---- connections ------------------------------------------------- */

static void
bs_conn_input(struct conn *k)
{
	bs_conn_progress(k->data);
}

static int
bs_conn_open(struct conn *k, void *arg)
{
	struct face_beanstalk *bs = arg;
	struct bs_conn *c = calloc(1, sizeof(*c));

	if (c != NULL) {
		c->watch_cap = 4;
		c->watch = calloc(c->watch_cap, sizeof(*c->watch));
	}
	if (c == NULL || c->watch == NULL) {
		free(c);
		return -ENOMEM;
	}
	c->bs = bs;
	c->conn = k;
	c->session = events_session(bs->events);
	memcpy(c->use.s, "default", 7);
	c->use.len = 7;
	c->watch[0] = c->use;
	c->nwatch = 1;
	if (events_post_session_local(
	        bs->events, EVENT_SESSION_OPEN, c->session, k->peer) != 0) {
		free(c->watch);
		free(c);
		return -ENOMEM;
	}
	k->data = c;
	k->in_max = BS_LINE_MAX + bs->cfg.max_job + 2 + RECV_MIN;
	conn_ready(k); /* no handshake, no authentication */
	c->next = bs->conns;
	if (bs->conns != NULL)
		bs->conns->prev = c;
	bs->conns = c;
	bs->nconns++;
	bs->total_conns++;
	return 0;
}

/* The socket closed (as beanstalkd, replies not sent yet are dropped):
 * the core releases the session's leases. */
static void
bs_conn_closed(struct conn *k)
{
	struct bs_conn *c = k->data;
	struct face_beanstalk *bs = c->bs;

	c->closed = true;
	c->waiting = false;
	bs->nconns--;
	if (events_post_session_local(
	        bs->events, EVENT_SESSION_CLOSE, c->session, NULL) != 0)
		log_warn("bs",
		    "cannot tell the core that session %u ended; "
		    "its jobs return at their ttr",
		    c->session);
}

static void
bs_conn_free(struct conn *k)
{
	struct bs_conn *c = k->data;
	struct face_beanstalk *bs = c->bs;

	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		bs->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	while (c->head != NULL) {
		struct bs_req *r = c->head;

		c->head = r->next;
		bs_req_free(r);
	}
	free(c->watch);
	free(c->held);
	free(c);
}

/* Not idle while a command is in the core (a waiting reserve included)
 * or the connection holds reserved jobs. */
static bool
bs_conn_busy(const struct conn *k)
{
	const struct bs_conn *c = k->data;

	return c->posted > 0 || c->nheld > 0;
}

static const struct conn_face bs_conn_face = {
	.name = "bs",
	.open = bs_conn_open,
	.input = bs_conn_input,
	.closed = bs_conn_closed,
	.free = bs_conn_free,
	.busy = bs_conn_busy,
};

/* ---- start and stop ---------------------------------------------- */

int
face_beanstalk_open(struct face_beanstalk **out, struct events *net,
    struct conns *cs, const struct face_beanstalk_config *cfg)
{
	struct face_beanstalk *bs = calloc(1, sizeof(*bs));
	int rc;

	if (bs == NULL)
		return -ENOMEM;
	bs->events = net;
	bs->cfg = *cfg;
	bs->started_ms = clock_now_ms();
	snprintf(bs->id, sizeof(bs->id), "%016" PRIx64,
	    (uint64_t)clock_mono_ns() ^ ((uint64_t)getpid() << 32));
	buf_init(&bs->scratch);
	rc = conns_listen(cs, cfg->addr, &bs_conn_face, bs);
	if (rc != 0) {
		face_beanstalk_free(bs);
		return rc;
	}
	*out = bs;
	return 0;
}

void
face_beanstalk_free(struct face_beanstalk *bs)
{
	if (bs == NULL)
		return;
	buf_fini(&bs->scratch);
	free(bs);
}
