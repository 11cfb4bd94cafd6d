/* face_sp - see face_sp.h.
 *
 * A connection: our rep0 header goes out as soon as it is accepted; the
 * peer's must be req0's, else the connection closes. Then each message is
 * [u64 length][backtrace][sluice request]: the request is copied into an
 * nng_msg (what the core's handlers take) and posted; the backtrace waits
 * in the request until the reply, which is written as [u64 length]
 * [backtrace][sluice reply] by the next conns_flush. A message whose
 * backtrace is malformed is dropped, as nng's rep0 does; one longer than
 * the limit closes the connection, as nng's transport does.
 *
 * At most INFLIGHT_MAX requests of one connection are in the core at
 * once; past that its input waits (and then its socket, and then its
 * client) until replies go out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "proto/sp.h"
#include "server/conn.h"
#include "server/face_sp.h"
#include "server/net.h"
#include "util/log.h"

enum {
	INFLIGHT_MAX = 1024,
	IN_DEFAULT = 64 * 1024, /* unparsed input held between messages */
};

struct sp_conn {
	struct conn *conn;
	const struct face_sp_config *cfg;
	uint32_t session;
	bool shaken; /* the peer's header arrived and is req0's */
	unsigned inflight;
};

struct sp_req {
	struct net_ctx ctx; /* face = &sp_face */
	struct net_ev ev;
	struct sp_conn *sc;
	size_t btlen;
	uint8_t bt[SP_BACKTRACE_MAX];
};

static void sp_input(struct conn *c);

static struct sp_req *
req_of(struct net_ctx *ctx)
{
	return (struct sp_req *)((char *)ctx - offsetof(struct sp_req, ctx));
}

/* The request is over: its connection may read again, and be freed. */
static void
req_end(struct sp_req *r)
{
	struct sp_conn *s = r->sc;
	struct conn *c = s->conn;
	bool resume = s->inflight-- == INFLIGHT_MAX;

	free(r);
	if (resume && !c->closed)
		sp_input(c);
	conn_release(c);
}

static void
sp_reply(struct net_ctx *ctx, nng_msg *msg)
{
	struct sp_req *r = req_of(ctx);
	struct conn *c = r->sc->conn;
	uint8_t len[SP_LEN];

	sp_store_len(len, r->btlen + nng_msg_len(msg));
	conn_write(c, len, sizeof(len));
	conn_write(c, r->bt, r->btlen);
	conn_write(c, nng_msg_body(msg), nng_msg_len(msg));
	nng_msg_free(msg);
	req_end(r);
}

static void
sp_drop(struct net_ctx *ctx)
{
	req_end(req_of(ctx));
}

static const char *
sp_peer(const struct net_ctx *ctx)
{
	return ((const struct sp_req *)((const char *)ctx -
	            offsetof(struct sp_req, ctx)))
	    ->sc->conn->peer;
}

static bool
sp_alive(const struct net_ctx *ctx)
{
	return !((const struct sp_req *)((const char *)ctx -
	             offsetof(struct sp_req, ctx)))
	            ->sc->conn->closed;
}

/* The connection closes now (its session's close follows), then the
 * request ends like a dropped one. */
static void
sp_close(struct net_ctx *ctx)
{
	struct sp_req *r = req_of(ctx);

	conn_close(r->sc->conn);
	req_end(r);
}

static const struct net_face sp_face = { sp_reply, sp_drop, sp_peer, sp_alive,
	sp_close };

/* One whole message: post its request. False when out of memory. */
static bool
post(struct sp_conn *s, const uint8_t *p, size_t len)
{
	size_t bt = sp_backtrace_len(p, len);
	struct sp_req *r;
	nng_msg *m;

	if (bt == 0)
		return true; /* malformed: dropped, as nng's rep0 does */
	r = malloc(sizeof(*r));
	if (r == NULL || nng_msg_alloc(&m, len - bt) != 0) {
		free(r);
		return false;
	}
	memcpy(nng_msg_body(m), p + bt, len - bt);
	r->ctx.face = &sp_face;
	r->sc = s;
	r->btlen = bt;
	memcpy(r->bt, p, bt);
	r->ev = (struct net_ev) { .kind = NET_REQUEST,
		.session = s->session,
		.ctx = &r->ctx,
		.msg = m };
	conn_hold(s->conn);
	s->inflight++;
	net_post_local(s->cfg->net, &r->ev);
	return true;
}

static void
sp_input(struct conn *c)
{
	struct sp_conn *s = c->data;

	while (!c->closed && s->inflight < INFLIGHT_MAX) {
		const uint8_t *p = c->in + c->in_off;
		size_t have = c->in_len - c->in_off;
		uint64_t len;

		if (!s->shaken) {
			if (have < SP_HANDSHAKE)
				return;
			if (!sp_handshake_ok(p, SP_PROTO_REQ0)) {
				log_debug("sp",
				    "a peer that is not an SP requester; "
				    "closing peer=%s",
				    c->peer);
				conn_close(c);
				return;
			}
			s->shaken = true;
			conn_consume(c, SP_HANDSHAKE);
			continue;
		}
		if (have < SP_LEN)
			return;
		len = sp_load_len(p);
		if (len > s->cfg->max_msg + SP_BACKTRACE_MAX) {
			log_info("sp",
			    "a message over the size limit; closing the "
			    "connection peer=%s bytes=%llu limit=%zu",
			    c->peer, (unsigned long long)len, s->cfg->max_msg);
			conn_close(c);
			return;
		}
		if (have < SP_LEN + len) {
			if (c->in_max < SP_LEN + len)
				c->in_max = SP_LEN + (size_t)len;
			return;
		}
		if (!post(s, p + SP_LEN, (size_t)len)) {
			log_warn("sp",
			    "out of memory for a request; closing the "
			    "connection peer=%s",
			    c->peer);
			conn_close(c);
			return;
		}
		conn_consume(c, SP_LEN + (size_t)len);
		c->in_max = IN_DEFAULT;
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
	s->session = net_face_session(cfg->net);
	if (net_post_session_local(
	        cfg->net, NET_SESSION_OPEN, s->session, c->peer) != 0) {
		free(s);
		return -ENOMEM;
	}
	c->data = s;
	c->in_max = IN_DEFAULT;
	sp_handshake(hs, SP_PROTO_REP0);
	conn_write(c, hs, sizeof(hs));
	return 0;
}

static void
sp_closed(struct conn *c)
{
	struct sp_conn *s = c->data;

	if (net_post_session_local(
	        s->cfg->net, NET_SESSION_CLOSE, s->session, NULL) != 0)
		log_warn("sp",
		    "cannot tell the core that a session ended; its leases "
		    "end at their ttr session=%u",
		    s->session);
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
