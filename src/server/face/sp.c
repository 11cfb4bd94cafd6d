/* face_sp - the tcp:// face (sp.h): SP over TCP read and written on the
 * core thread through conn.c, the framing read by sp_frame.c.
 *
 * A connection: our rep0 header goes out as soon as it is accepted; the
 * peer's must be req0's, else the connection closes. Then each message is
 * [u64 length][backtrace][sluice request] (sp_frame_parse): the request is
 * copied into an nng_msg (what the core's handlers take) and posted; the
 * backtrace waits in the request until the reply, which is written as [u64
 * length] [backtrace][sluice reply] by the next conns_flush. A message whose
 * backtrace is malformed (no word with the top bit, the request id, in
 * its first SP_HOPS_MAX) closes the connection, as nng's transports do
 * with a peer speaking garbage: dropping it would leave the client
 * waiting forever. One longer than the limit closes it too; before its
 * session authenticated under --auth, the limit is FACE_SP_PREAUTH_MAX.
 *
 * At most FACE_SP_INFLIGHT_MAX requests of one connection are in the core at
 * once; parked takes aside, the requests in the core and the replies not
 * yet written stay under the connection's output mark (conn_room): past
 * it its input waits (and then its socket, and then its client) until
 * replies go out, and a client that never reads is closed by the stall
 * timeout (conn.h). So a connection holds at most the mark's bytes plus
 * the replies to the requests in the core. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "proto/msg.h"
#include "proto/sp.h"
#include "server/face/conn.h"
#include "server/face/sp.h"
#include "server/face/sp_frame.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "util/log.h"

enum {
	IN_DEFAULT = 64 * 1024, /* unparsed input held between messages */
};

struct sp_conn {
	struct conn *conn;
	const struct face_sp_config *cfg;
	uint32_t session;
	bool shaken; /* the peer's header arrived and is req0's */
	bool authed; /* its session authenticated (or no --auth) */
	unsigned inflight;
	unsigned parked; /* of those, takes waiting for a task */
	unsigned bulky;  /* of those, not parked, whose reply may be large */
};

struct sp_req {
	struct face_ctx ctx; /* face = &sp_face */
	struct event ev;
	struct sp_conn *sc;
	size_t btlen;
	bool parked; /* face.waiting */
	bool bulky;  /* counted in sc->bulky */
	uint8_t bt[SP_BACKTRACE_MAX];
};

static void sp_input(struct conn *c);

static struct sp_req *
req_of(struct face_ctx *ctx)
{
	return (struct sp_req *)((char *)ctx - offsetof(struct sp_req, ctx));
}

/* The request is over: its connection may read again, and be freed. */
static void
req_end(struct sp_req *r)
{
	struct sp_conn *s = r->sc;
	struct conn *c = s->conn;

	s->inflight--;
	if (r->parked)
		s->parked--;
	if (r->bulky)
		s->bulky--;
	free(r);
	if (!c->closed && c->in_len > c->in_off)
		sp_input(c); /* room for what waits */
	conn_release(c);
}

/* Under --auth, whether the session authenticated: then the connection
 * is ready and may send messages up to the full limit. */
static void
authed_now(struct sp_conn *s)
{
	const struct face_sp_config *cfg = s->cfg;

	if (s->authed || cfg->session_authed == NULL ||
	    !cfg->session_authed(cfg->arg, s->session))
		return;
	s->authed = true;
	conn_ready(s->conn);
}

static void
sp_reply(struct face_ctx *ctx, nng_msg *msg)
{
	struct sp_req *r = req_of(ctx);
	struct conn *c = r->sc->conn;
	uint8_t len[SP_LEN];

	sp_store_len(len, r->btlen + nng_msg_len(msg));
	conn_write(c, len, sizeof(len));
	conn_write(c, r->bt, r->btlen);
	conn_write(c, nng_msg_body(msg), nng_msg_len(msg));
	conn_msg_queued(c);
	nng_msg_free(msg);
	authed_now(r->sc);
	req_end(r);
}

static void
sp_drop(struct face_ctx *ctx)
{
	req_end(req_of(ctx));
}

static const char *
sp_peer(const struct face_ctx *ctx)
{
	return ((const struct sp_req *)((const char *)ctx -
	            offsetof(struct sp_req, ctx)))
	    ->sc->conn->peer;
}

static bool
sp_alive(const struct face_ctx *ctx)
{
	return !((const struct sp_req *)((const char *)ctx -
	             offsetof(struct sp_req, ctx)))
	            ->sc->conn->closed;
}

/* The connection closes now (its session's close follows), then the
 * request ends like a dropped one. */
static void
sp_close(struct face_ctx *ctx)
{
	struct sp_req *r = req_of(ctx);

	conn_close(r->sc->conn);
	req_end(r);
}

/* A take parks: it may wait as long as it likes, apart from the rest. */
static void
sp_waiting(struct face_ctx *ctx)
{
	struct sp_req *r = req_of(ctx);

	if (r->parked)
		return;
	r->parked = true;
	r->sc->parked++;
	if (r->bulky) {
		r->bulky = false;
		r->sc->bulky--;
	}
	if (!r->sc->conn->closed)
		sp_input(r->sc->conn); /* its room in the mark is free */
}

static const struct face sp_face = { sp_reply, sp_drop, sp_peer, sp_alive,
	sp_close, sp_waiting };

/* Whether the request (after its backtrace) may be answered with
 * payloads or long lists (a take, a peek, stats, a list...): those of
 * one connection in the core at once are few, so that a client that
 * never reads cannot have the core make more than a few large replies
 * beyond its output mark. The rest are answered in a few bytes. */
bool
face_sp_bulky(const uint8_t *req, size_t len)
{
	if (len < MSG_REQ_HDR)
		return false;
	switch (req[2]) {
	case MSG_OP_PUT:
	case MSG_OP_PUT_BATCH:
	case MSG_OP_ACK:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
	case MSG_OP_KICK:
	case MSG_OP_KICK_ID:
	case MSG_OP_DELETE:
	case MSG_OP_DELETE_KEY:
	case MSG_OP_FLUSH:
	case MSG_OP_PAUSE:
	case MSG_OP_RELEASE_ALL:
	case MSG_OP_ACK_BATCH:
	case MSG_OP_DELETE_BATCH:
	case MSG_OP_UPDATE:
	case MSG_OP_DELETE_WHERE:
	case MSG_OP_TUBE_SET:
	case MSG_OP_TUBE_DELETE:
	case MSG_OP_GROUP:
	case MSG_OP_AUTH:
		return false;
	default:
		return true;
	}
}

/* One whole message: post its request. False when out of memory. */
static bool
post(struct sp_conn *s, const struct sp_frame *f)
{
	struct sp_req *r;
	nng_msg *m;

	r = malloc(sizeof(*r));
	if (r == NULL || nng_msg_alloc(&m, f->body_len) != 0) {
		free(r);
		return false;
	}
	memcpy(nng_msg_body(m), f->body, f->body_len);
	r->ctx.face = &sp_face;
	r->sc = s;
	r->btlen = f->btlen;
	r->parked = false;
	r->bulky = face_sp_bulky(f->body, f->body_len);
	s->bulky += r->bulky;
	memcpy(r->bt, f->bt, f->btlen);
	r->ev = (struct event) { .kind = EVENT_REQUEST,
		.session = s->session,
		.ctx = &r->ctx,
		.msg = m };
	conn_hold(s->conn);
	s->inflight++;
	events_post_local(s->cfg->events, &r->ev);
	return true;
}

static void
sp_input(struct conn *c)
{
	struct sp_conn *s = c->data;

	while (!c->closed && s->inflight < FACE_SP_INFLIGHT_MAX &&
	    conn_room(c, s->inflight - s->parked)) {
		size_t have = c->in_len - c->in_off;
		size_t limit = s->authed ? s->cfg->max_msg + SP_BACKTRACE_MAX
		                         : FACE_SP_PREAUTH_MAX;
		struct sp_frame f;

		switch (sp_frame_parse(
		    c->in + c->in_off, have, s->shaken, limit, &f)) {
		case SP_FRAME_MORE:
			if (f.want > c->in_max)
				c->in_max = f.want;
			if (have > 0)
				conn_want_more(c);
			return;
		case SP_FRAME_NOT_SP:
			log_debug("sp",
			    "a peer that is not an SP requester; closing "
			    "peer=%s",
			    c->peer);
			conn_close(c);
			return;
		case SP_FRAME_HANDSHAKE:
			s->shaken = true;
			conn_consume(c, f.used);
			if (s->authed)
				conn_ready(c);
			continue;
		case SP_FRAME_TOO_LONG:
			log_info("sp",
			    "a message over the size limit; closing the "
			    "connection peer=%s bytes=%llu limit=%zu%s",
			    c->peer, (unsigned long long)f.len, limit,
			    s->authed ? "" : " (not authenticated yet)");
			conn_refuse(c);
			return;
		case SP_FRAME_NO_ID:
			log_info("sp",
			    "a message without a request id (no backtrace word "
			    "with the top bit set); closing the connection "
			    "peer=%s",
			    c->peer);
			conn_refuse(c);
			return;
		case SP_FRAME_MSG:
			break;
		}
		if (s->bulky >= FACE_SP_BULKY_MAX &&
		    face_sp_bulky(f.body, f.body_len))
			return; /* until one of those is answered */
		if (!post(s, &f)) {
			log_warn("sp",
			    "out of memory for a request; closing the "
			    "connection peer=%s",
			    c->peer);
			conn_close(c);
			return;
		}
		conn_consume(c, f.used);
		c->in_max =
		    s->authed ? IN_DEFAULT : FACE_SP_PREAUTH_MAX + SP_LEN;
	}
}

static int
sp_open(struct conn *c, void *arg)
{
	const struct face_sp_config *cfg = arg;
	struct sp_conn *s = calloc(1, sizeof(*s));
	uint8_t hs[SP_HANDSHAKE];

	if (s == NULL)
		return -ENOMEM;
	s->conn = c;
	s->cfg = cfg;
	s->authed = !cfg->auth_on;
	s->session = events_session(cfg->events);
	if (events_post_session_local(
	        cfg->events, EVENT_SESSION_OPEN, s->session, c->peer) != 0) {
		free(s);
		return -ENOMEM;
	}
	c->data = s;
	c->in_max = s->authed ? IN_DEFAULT : FACE_SP_PREAUTH_MAX + SP_LEN;
	sp_handshake(hs, SP_PROTO_REP0);
	conn_write(c, hs, sizeof(hs));
	return 0;
}

static void
sp_closed(struct conn *c)
{
	struct sp_conn *s = c->data;

	if (events_post_session_local(
	        s->cfg->events, EVENT_SESSION_CLOSE, s->session, NULL) != 0)
		log_warn("sp",
		    "cannot tell the core that a session ended; its leases "
		    "end at their ttr session=%u",
		    s->session);
}

/* Not idle while a request is in the core (a parked take included) or
 * its session holds a lease (a worker busy with a task). */
static bool
sp_busy(const struct conn *c)
{
	const struct sp_conn *s = c->data;
	const struct face_sp_config *cfg = s->cfg;

	return s->inflight > 0 ||
	    (cfg->session_holds != NULL &&
	        cfg->session_holds(cfg->arg, s->session));
}

static void
sp_free(struct conn *c)
{
	free(c->data);
}

static const struct conn_face face = {
	.name = "sp",
	.open = sp_open,
	.input = sp_input,
	.closed = sp_closed,
	.free = sp_free,
	.busy = sp_busy,
};

bool
face_sp_serves(const char *url)
{
	return strncmp(url, "tcp://", 6) == 0;
}

int
face_sp_listen(
    struct conns *cs, const struct face_sp_config *cfg, const char *url)
{
	if (!face_sp_serves(url))
		return -EINVAL;
	return conns_listen(cs, url + 6, &face, (void *)cfg);
}
