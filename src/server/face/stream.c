/* face_stream - see face_stream.h.
 *
 * Why nng's streams on nng's threads, and not TLS on the core thread's
 * epoll (conn.c): nng's rep0 socket, which served these URLs (and the
 * replication port) before, has
 * one receive limit per socket and no timeouts, so a client that never
 * authenticated could have it allocate 64 MiB per connection, and a TLS
 * handshake that never completes was invisible. Reading the stream
 * ourselves gives each connection the tcp:// face's bounds, and keeping
 * the crypto on nng's threads keeps the TLS handshake (5.8 ms of CPU
 * each, measured with a 2048-bit RSA certificate) off the one thread
 * that serves every client: a burst of handshakes from strangers does
 * not stall the core, and nng's TLS engine, certificate checks and wire
 * stay exactly those libsluice's REQ sockets already speak with.
 *
 * A connection: accepted → our SP header sent, the peer's read (for TLS,
 * its handshake runs inside that first read) → messages read one at a
 * time, each [u64 length][backtrace][request] (ipc://: a byte 1 first;
 * ws://: no SP header, no length: nng's WebSocket stream, in message
 * mode, ends a read with one whole message, checked against the same
 * limit once whole, see face_stream_open for what bounds it before):
 * the length is checked against the connection's limit before a byte of
 * the body is allocated (FACE_SP_PREAUTH_MAX until its session
 * authenticated under --auth), the body is grown as it arrives, and the
 * whole request is posted to the core. Replies queue per connection and
 * are written one after the other. While the replies queued and the
 * requests in the core reach the output marks, or INFLIGHT_MAX requests
 * are in the core, or BULKY_MAX of those may have large replies and the
 * next would too, the next message is not read: the client's sends then
 * wait in its socket.
 *
 * The timeouts are checked by a scan on the core thread (face_stream_tick,
 * at most every TICK_MS; the core's loop turns at least once a second),
 * as conn.c's: not ready (the SP header, and under
 * --auth the token) within --handshake-timeout; a message begun and not
 * complete within --frame-timeout (again from each FRAME_PROGRESS bytes
 * of it; not on ws://, whose messages are seen whole); nothing read or written
 * for --idle-timeout while nothing is in the core, nothing queued and the
 * session holds no lease; over the output marks with nothing written for
 * --stall-timeout.
 *
 * Threads: nng's callbacks (accept, each connection's read and write)
 * and the core thread (replies, drops, the tick) share one lock, the
 * face's. A connection closed is freed once its read and write are over
 * and the core holds none of its requests: it goes on the dead list,
 * which the tick empties (nng_aio_free waits for a callback that still
 * runs, so it is never called under the lock). */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "proto/sp.h"
#include "server/face/stream.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/tlsfile.h"

enum {
	INFLIGHT_MAX = 1024,
	BULKY_MAX = 4,
	TICK_MS = 250,
	FRAME_PROGRESS = 16384,
	BODY_FIRST = 64 * 1024, /* a body's first allocation, at most */
	ACCEPT_PAUSE_MS = 100,
	NOTE_EVERY_MS = 10000,
	ERR_BASE = 1000, /* nng errors as -(ERR_BASE + code), as net.c's */
	/* ws://: the largest WebSocket frame read, nng's default: its
	 * dialers send frames of up to 1 MiB (its listeners 64 KiB) */
	WS_FRAME_MAX = 1 << 20,
};

/* nng's option for whole messages on a WebSocket stream (internal to
 * nng, named here), and the subprotocol of SP's REP over WebSocket */
#define WS_MSGMODE  "ws:msgmode"
#define WS_PROTOCOL "rep.sp.nanomsg.org"

enum rx_state { RX_HS, RX_LEN, RX_BODY };

/* The framing: SP over TCP or TLS, over ipc://, or over WebSocket. */
enum fs_mode { FS_SP, FS_IPC, FS_WS };

struct fs_out {
	struct fs_out *next;
	nng_msg *m;   /* the bytes to write: a whole frame, or our header */
	size_t total; /* nng_msg_len(m) */
	bool reply;   /* counted in out_msgs */
};

struct fs_req;

struct fs_conn {
	struct face_stream *fs;
	nng_stream *s;
	nng_aio *rx, *tx;
	uint32_t session;
	char peer[NET_PEER_MAX];

	/* under fs->lock */
	enum rx_state rstate;
	uint8_t hdr[1 + SP_LEN];
	size_t hgot;
	nng_msg *body; /* RX_BODY: what arrived, grown as it comes */
	size_t want, got;
	nng_msg *held; /* complete, waiting for a bulky one to end */
	struct fs_out *outq, *outq_tail;
	size_t tx_off;          /* of outq's head, written */
	size_t out_bytes;       /* queued, not written */
	unsigned out_msgs;      /* replies queued, not written */
	unsigned inflight;      /* requests in the core */
	unsigned parked, bulky; /* of those */
	struct fs_req *reqs;    /* the requests in the core */
	bool rx_busy, tx_busy;
	bool shaken, authed, ready, closed, dead;
	int64_t born_ms, active_ms, part_ms, over_ms;
	size_t part_got;
	struct fs_conn *next, *prev;   /* all open ones, oldest first */
	struct fs_conn *dnext;         /* the dead list */
	struct fs_conn *enext, *eprev; /* every one not freed */
};

struct fs_req {
	struct net_ctx ctx; /* face = &fs_net_face */
	struct net_ev ev;
	struct fs_conn *c;
	struct fs_req *next, *prev;
	size_t btlen;
	bool parked, bulky;
	uint8_t bt[SP_BACKTRACE_MAX];
};

struct face_stream {
	const struct face_sp_config *cfg;
	struct conns_limits lim;
	enum fs_mode mode;
	nng_stream_listener *l;
	nng_aio *acc;
	bool acc_sleeping;
	pthread_mutex_t lock;
	struct fs_conn *head, *tail; /* open, oldest first */
	struct fs_conn *dead;
	struct fs_conn *every; /* every connection not freed yet */
	unsigned nconns, nunready;
	bool stopping;
	int64_t next_tick;
	struct conns_stats st;
	int64_t note_ms;
	uint64_t note_since;
};

static void rx_next(struct fs_conn *c);
static void tx_next(struct fs_conn *c);

static bool
ws_url(const char *url)
{
	return strncmp(url, "ws://", 5) == 0 ||
	    strncmp(url, "ws4://", 6) == 0 || strncmp(url, "ws6://", 6) == 0;
}

bool
face_stream_serves(const char *url)
{
	return strncmp(url, "tcp://", 6) == 0 ||
	    strncmp(url, "tcp4://", 7) == 0 ||
	    strncmp(url, "tcp6://", 7) == 0 ||
	    strncmp(url, "tls+tcp://", 10) == 0 ||
	    strncmp(url, "tls+tcp4://", 11) == 0 ||
	    strncmp(url, "tls+tcp6://", 11) == 0 ||
	    strncmp(url, "ipc://", 6) == 0 || ws_url(url);
}

static size_t
len_bytes(const struct face_stream *fs)
{
	return fs->mode == FS_IPC ? 1 + SP_LEN : SP_LEN;
}

/* ---- closing and freeing (under the lock) ------------------------------ */

static void
maybe_dead(struct fs_conn *c)
{
	struct face_stream *fs = c->fs;

	if (!c->closed || c->dead || c->rx_busy || c->tx_busy ||
	    c->inflight > 0)
		return;
	c->dead = true;
	c->dnext = fs->dead;
	fs->dead = c;
}

static void
unready_done(struct fs_conn *c)
{
	if (!c->ready) {
		c->ready = true;
		c->fs->nunready--;
	}
}

static void
close_locked(struct fs_conn *c, uint64_t *counter)
{
	struct face_stream *fs = c->fs;

	if (c->closed)
		return;
	c->closed = true;
	if (counter != NULL)
		(*counter)++;
	if (!c->ready)
		fs->nunready--;
	fs->nconns--;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		fs->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		fs->tail = c->prev;
	c->next = c->prev = NULL;
	nng_stream_close(c->s); /* the read and the write end with ECLOSED */
	if (net_post_session(
	        fs->cfg->net, NET_SESSION_CLOSE, c->session, NULL) != 0)
		log_warn("sp",
		    "cannot tell the core that a session ended; its leases "
		    "end at their ttr session=%u",
		    c->session);
	maybe_dead(c);
}

static void
out_free(struct fs_conn *c)
{
	while (c->outq != NULL) {
		struct fs_out *o = c->outq;

		c->outq = o->next;
		if (o->m != NULL)
			nng_msg_free(o->m);
		free(o);
	}
	c->outq_tail = NULL;
}

/* Outside the lock: nng's callbacks of `c` are over, or end in
 * nng_aio_free. */
static void
conn_free(struct fs_conn *c)
{
	struct face_stream *fs = c->fs;

	nng_aio_free(c->rx);
	nng_aio_free(c->tx);
	c->rx = c->tx = NULL;
	pthread_mutex_lock(&fs->lock);
	if (c->eprev != NULL)
		c->eprev->enext = c->enext;
	else
		fs->every = c->enext;
	if (c->enext != NULL)
		c->enext->eprev = c->eprev;
	pthread_mutex_unlock(&fs->lock);
	nng_aio_free(c->tx);
	nng_stream_free(c->s);
	out_free(c);
	if (c->body != NULL)
		nng_msg_free(c->body);
	if (c->held != NULL)
		nng_msg_free(c->held);
	while (c->reqs != NULL) { /* the core stopped holding them */
		struct fs_req *r = c->reqs;

		c->reqs = r->next;
		free(r);
	}
	free(c);
}

/* ---- the requests, answered on the core thread ------------------------- */

static struct fs_req *
req_of(const struct net_ctx *ctx)
{
	return (struct fs_req *)((char *)ctx - offsetof(struct fs_req, ctx));
}

static bool
room(const struct fs_conn *c)
{
	const struct conns_limits *lim = &c->fs->lim;

	return (lim->out_bytes == 0 || c->out_bytes < lim->out_bytes) &&
	    (lim->out_msgs == 0 ||
	        c->out_msgs + (c->inflight - c->parked) < lim->out_msgs);
}

static bool
over(const struct fs_conn *c)
{
	const struct conns_limits *lim = &c->fs->lim;

	return (lim->out_bytes != 0 && c->out_bytes >= lim->out_bytes) ||
	    (lim->out_msgs != 0 && c->out_msgs >= lim->out_msgs);
}

static void
authed_now(struct fs_conn *c)
{
	const struct face_sp_config *cfg = c->fs->cfg;

	if (c->authed || cfg->session_authed == NULL ||
	    !cfg->session_authed(cfg->arg, c->session))
		return;
	c->authed = true;
	if (c->shaken)
		unready_done(c);
}

/* The request is over (under the lock). */
static void
req_end(struct fs_req *r)
{
	struct fs_conn *c = r->c;

	c->inflight--;
	if (r->parked)
		c->parked--;
	if (r->bulky)
		c->bulky--;
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		c->reqs = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	free(r);
	rx_next(c);
	maybe_dead(c);
}

static void
queue_out(struct fs_conn *c, struct fs_out *o)
{
	o->next = NULL;
	if (c->outq_tail != NULL)
		c->outq_tail->next = o;
	else
		c->outq = o;
	c->outq_tail = o;
	c->out_bytes += o->total;
	if (o->reply)
		c->out_msgs++;
	if (c->over_ms == 0 && over(c))
		c->over_ms = clock_mono_ms();
	tx_next(c);
}

/* Puts the length (ipc://: after the type byte; ws://: none) and the
 * backtrace before a reply's body. Returns 0 or an nng error. */
static int
frame(const struct face_stream *fs, nng_msg *msg, const struct fs_req *r)
{
	uint8_t hdr[1 + SP_LEN];
	size_t hlen = 0;
	int rv;

	if ((rv = nng_msg_insert(msg, r->bt, r->btlen)) != 0)
		return rv;
	if (fs->mode == FS_WS) /* one WebSocket message, no length */
		return 0;
	if (fs->mode == FS_IPC)
		hdr[hlen++] = 1;
	sp_store_len(hdr + hlen, nng_msg_len(msg));
	return nng_msg_insert(msg, hdr, hlen + SP_LEN);
}

static void
fs_reply(struct net_ctx *ctx, nng_msg *msg)
{
	struct fs_req *r = req_of(ctx);
	struct fs_conn *c = r->c;
	struct face_stream *fs = c->fs;
	struct fs_out *o;

	pthread_mutex_lock(&fs->lock);
	authed_now(c);
	if (!c->closed && (o = calloc(1, sizeof(*o))) != NULL &&
	    frame(fs, msg, r) == 0) {
		/* one buffer: nng's TLS stream writes one iov per call, and
		 * a header alone in a segment waits for the peer's ack */
		o->m = msg;
		o->reply = true;
		o->total = nng_msg_len(msg);
		queue_out(c, o);
	} else {
		if (!c->closed) {
			free(o);
			log_warn("sp",
			    "out of memory for a reply; closing the "
			    "connection peer=%s",
			    c->peer);
			close_locked(c, NULL);
		}
		nng_msg_free(msg);
	}
	req_end(r);
	pthread_mutex_unlock(&fs->lock);
}

static void
fs_drop(struct net_ctx *ctx)
{
	struct face_stream *fs = req_of(ctx)->c->fs;

	pthread_mutex_lock(&fs->lock);
	req_end(req_of(ctx));
	pthread_mutex_unlock(&fs->lock);
}

static const char *
fs_peer(const struct net_ctx *ctx)
{
	return req_of(ctx)->c->peer;
}

static bool
fs_alive(const struct net_ctx *ctx)
{
	struct fs_conn *c = req_of(ctx)->c;
	bool alive;

	pthread_mutex_lock(&c->fs->lock);
	alive = !c->closed;
	pthread_mutex_unlock(&c->fs->lock);
	return alive;
}

static void
fs_close(struct net_ctx *ctx)
{
	struct fs_req *r = req_of(ctx);
	struct face_stream *fs = r->c->fs;

	pthread_mutex_lock(&fs->lock);
	close_locked(r->c, NULL);
	req_end(r);
	pthread_mutex_unlock(&fs->lock);
}

static void
fs_waiting(struct net_ctx *ctx)
{
	struct fs_req *r = req_of(ctx);
	struct face_stream *fs = r->c->fs;

	pthread_mutex_lock(&fs->lock);
	if (!r->parked) {
		r->parked = true;
		r->c->parked++;
		if (r->bulky) {
			r->bulky = false;
			r->c->bulky--;
		}
		rx_next(r->c);
	}
	pthread_mutex_unlock(&fs->lock);
}

static const struct net_face fs_net_face = { fs_reply, fs_drop, fs_peer,
	fs_alive, fs_close, fs_waiting };

/* ---- reading (nng's threads, under the lock) --------------------------- */

/* Posts a whole message ([backtrace][request]); false when out of
 * memory. */
static bool
post(struct fs_conn *c, nng_msg *m)
{
	size_t bt = sp_backtrace_len(nng_msg_body(m), nng_msg_len(m));
	struct fs_req *r = malloc(sizeof(*r));

	if (r == NULL)
		return false;
	r->ctx.face = &fs_net_face;
	r->c = c;
	r->btlen = bt;
	r->parked = false;
	memcpy(r->bt, nng_msg_body(m), bt);
	nng_msg_trim(m, bt);
	r->bulky = face_sp_bulky(nng_msg_body(m), nng_msg_len(m));
	c->bulky += r->bulky;
	r->prev = NULL;
	r->next = c->reqs;
	if (c->reqs != NULL)
		c->reqs->prev = r;
	c->reqs = r;
	r->ev = (struct net_ev) { .kind = NET_REQUEST,
		.session = c->session,
		.ctx = &r->ctx,
		.msg = m };
	c->inflight++;
	net_post(c->fs->cfg->net, &r->ev);
	return true;
}

static bool
may_read(const struct fs_conn *c)
{
	return !c->closed && !c->rx_busy && c->inflight < INFLIGHT_MAX &&
	    room(c);
}

/* Starts the next read if the connection may read; a message held for a
 * bulky request's end goes first. */
static void
rx_next(struct fs_conn *c)
{
	nng_iov iov;

	if (c->held != NULL && !c->closed && c->bulky < BULKY_MAX &&
	    c->inflight < INFLIGHT_MAX && room(c)) {
		nng_msg *m = c->held;

		c->held = NULL;
		if (!post(c, m)) {
			nng_msg_free(m);
			close_locked(c, NULL);
			return;
		}
	}
	if (c->held != NULL || !may_read(c))
		return; /* rx_next runs again when that changes */
	if (c->fs->mode == FS_WS) {
		/* message mode: a read ends with one whole message */
		nng_aio_set_msg(c->rx, NULL);
		c->rx_busy = true;
		nng_stream_recv(c->s, c->rx);
		return;
	}
	switch (c->rstate) {
	case RX_HS:
		iov.iov_buf = c->hdr + c->hgot;
		iov.iov_len = SP_HANDSHAKE - c->hgot;
		break;
	case RX_LEN:
		iov.iov_buf = c->hdr + c->hgot;
		iov.iov_len = len_bytes(c->fs) - c->hgot;
		break;
	default:
		iov.iov_buf = (uint8_t *)nng_msg_body(c->body) + c->got;
		iov.iov_len = nng_msg_len(c->body) - c->got;
		break;
	}
	nng_aio_set_iov(c->rx, 1, &iov);
	c->rx_busy = true;
	nng_stream_recv(c->s, c->rx);
}

/* The length arrived: checked, then the body's first part allocated. */
static bool
begin_body(struct fs_conn *c)
{
	const struct face_sp_config *cfg = c->fs->cfg;
	const uint8_t *p = c->hdr;
	size_t limit =
	    c->authed ? cfg->max_msg + SP_BACKTRACE_MAX : FACE_SP_PREAUTH_MAX;
	uint64_t len;

	if (c->fs->mode == FS_IPC) {
		if (p[0] != 1) {
			log_info("sp",
			    "a message of an unknown type; closing the "
			    "connection peer=%s type=%u",
			    c->peer, p[0]);
			close_locked(c, &c->fs->st.closed_refused);
			return false;
		}
		p++;
	}
	len = sp_load_len(p);
	if (len > limit || len < 4) {
		log_info("sp",
		    "a message over the size limit or too short for a "
		    "request id; closing the connection peer=%s bytes=%llu "
		    "limit=%zu%s",
		    c->peer, (unsigned long long)len, limit,
		    c->authed ? "" : " (not authenticated yet)");
		close_locked(c, &c->fs->st.closed_refused);
		return false;
	}
	if (nng_msg_alloc(&c->body, len < BODY_FIRST ? len : BODY_FIRST) != 0) {
		log_warn("sp",
		    "out of memory for a request; closing the connection "
		    "peer=%s",
		    c->peer);
		close_locked(c, NULL);
		return false;
	}
	c->want = (size_t)len;
	c->got = 0;
	c->rstate = RX_BODY;
	return true;
}

/* The body is complete: post it, or hold it for a bulky one's end. */
static void
end_body(struct fs_conn *c)
{
	nng_msg *m = c->body;

	c->body = NULL;
	c->rstate = RX_LEN;
	c->hgot = 0;
	c->part_ms = 0;
	if (sp_backtrace_len(nng_msg_body(m), nng_msg_len(m)) == 0) {
		log_info("sp",
		    "a message without a request id (no backtrace word "
		    "with the top bit set); closing the connection peer=%s",
		    c->peer);
		nng_msg_free(m);
		close_locked(c, &c->fs->st.closed_refused);
		return;
	}
	if (c->bulky >= BULKY_MAX) {
		size_t bt = sp_backtrace_len(nng_msg_body(m), nng_msg_len(m));

		if (face_sp_bulky(
		        (uint8_t *)nng_msg_body(m) + bt, nng_msg_len(m) - bt)) {
			c->held = m;
			return;
		}
	}
	if (!post(c, m)) {
		nng_msg_free(m);
		log_warn("sp",
		    "out of memory for a request; closing the connection "
		    "peer=%s",
		    c->peer);
		close_locked(c, NULL);
	}
}

/* ws://: a whole message arrived (nng's listener bounded its frames and
 * its length, face_stream_open); checked against the connection's limit
 * as a length is. */
static void
ws_message(struct fs_conn *c, nng_msg *m)
{
	const struct face_sp_config *cfg = c->fs->cfg;
	size_t limit =
	    c->authed ? cfg->max_msg + SP_BACKTRACE_MAX : FACE_SP_PREAUTH_MAX;
	size_t len = nng_msg_len(m);

	if (len > limit || len < 4) {
		log_info("sp",
		    "a message over the size limit or too short for a "
		    "request id; closing the connection peer=%s bytes=%zu "
		    "limit=%zu%s",
		    c->peer, len, limit,
		    c->authed ? "" : " (not authenticated yet)");
		nng_msg_free(m);
		close_locked(c, &c->fs->st.closed_refused);
		return;
	}
	c->body = m;
	end_body(c);
}

/* `n` more bytes of a unit begun: the frame timeout starts on its first
 * byte and again after each FRAME_PROGRESS bytes. */
static void
progress(struct fs_conn *c, size_t total, int64_t now)
{
	if (c->part_ms == 0 || total - c->part_got >= FRAME_PROGRESS) {
		c->part_ms = now;
		c->part_got = total;
	}
}

/* tcp://, tls+tcp://, ipc://: `n` more bytes of the unit being read. */
static void
rx_bytes(struct fs_conn *c, size_t n, int64_t now)
{
	struct face_stream *fs = c->fs;

	switch (c->rstate) {
	case RX_HS:
		c->hgot += n;
		if (c->hgot < SP_HANDSHAKE)
			break;
		if (!sp_handshake_ok(c->hdr, SP_PROTO_REQ0)) {
			const char *what = sp_guess_peer(c->hdr, c->hgot);

			log_debug("sp",
			    "a peer that is not an SP requester; closing "
			    "peer=%s speaks=\"%s\"",
			    c->peer, what != NULL ? what : "unknown");
			close_locked(c, &fs->st.closed_refused);
			break;
		}
		c->shaken = true;
		if (c->authed)
			unready_done(c);
		c->rstate = RX_LEN;
		c->hgot = 0;
		break;
	case RX_LEN:
		c->hgot += n;
		progress(c, c->hgot, now);
		if (c->hgot == len_bytes(fs))
			begin_body(c);
		break;
	case RX_BODY:
		c->got += n;
		progress(c, len_bytes(fs) + c->got, now);
		if (c->got == c->want) {
			end_body(c);
		} else if (c->got == nng_msg_len(c->body)) {
			size_t grow = 2 * nng_msg_len(c->body);

			if (grow > c->want)
				grow = c->want;
			if (nng_msg_realloc(c->body, grow) != 0) {
				log_warn("sp",
				    "out of memory for a request; closing "
				    "the connection peer=%s",
				    c->peer);
				close_locked(c, NULL);
			}
		}
		break;
	}
}

static void
rx_cb(void *arg)
{
	struct fs_conn *c = arg;
	struct face_stream *fs = c->fs;
	int rv = nng_aio_result(c->rx);
	size_t n = nng_aio_count(c->rx);
	int64_t now = clock_mono_ms();
	nng_msg *m = NULL;

	if (fs->mode == FS_WS) {
		m = nng_aio_get_msg(c->rx);
		nng_aio_set_msg(c->rx, NULL);
		if (m == NULL && rv == 0)
			rv = NNG_EINTERNAL;
	}
	pthread_mutex_lock(&fs->lock);
	c->rx_busy = false;
	if (rv != 0 || c->closed) {
		if (m != NULL)
			nng_msg_free(m);
		close_locked(c, NULL);
		maybe_dead(c);
		pthread_mutex_unlock(&fs->lock);
		return;
	}
	if (n > 0 || m != NULL)
		c->active_ms = now;
	if (fs->mode == FS_WS)
		ws_message(c, m);
	else
		rx_bytes(c, n, now);
	rx_next(c);
	maybe_dead(c);
	pthread_mutex_unlock(&fs->lock);
}

/* ---- writing ----------------------------------------------------------- */

static void
tx_next(struct fs_conn *c)
{
	struct fs_out *o = c->outq;
	nng_iov iov;

	if (c->tx_busy || c->closed || o == NULL)
		return;
	if (c->fs->mode == FS_WS) {
		/* one WebSocket message; nng frees it once sent */
		nng_aio_set_msg(c->tx, o->m);
		c->tx_busy = true;
		nng_stream_send(c->s, c->tx);
		return;
	}
	iov.iov_buf = (uint8_t *)nng_msg_body(o->m) + c->tx_off;
	iov.iov_len = nng_msg_len(o->m) - c->tx_off;
	nng_aio_set_iov(c->tx, 1, &iov);
	c->tx_busy = true;
	nng_stream_send(c->s, c->tx);
}

static void
tx_cb(void *arg)
{
	struct fs_conn *c = arg;
	struct face_stream *fs = c->fs;
	int rv = nng_aio_result(c->tx);
	size_t n = nng_aio_count(c->tx);
	int64_t now = clock_mono_ms();

	pthread_mutex_lock(&fs->lock);
	c->tx_busy = false;
	if (fs->mode == FS_WS && c->outq != NULL) {
		/* sent: nng freed the message; not sent: it is ours again */
		nng_aio_set_msg(c->tx, NULL);
		if (rv == 0) {
			c->outq->m = NULL;
			n = c->outq->total - c->tx_off;
		}
	}
	if (rv != 0 || c->closed) {
		close_locked(c, NULL);
		maybe_dead(c);
		pthread_mutex_unlock(&fs->lock);
		return;
	}
	if (n > 0)
		c->active_ms = now;
	c->tx_off += n;
	if (c->outq != NULL && c->tx_off >= c->outq->total) {
		struct fs_out *o = c->outq;

		c->outq = o->next;
		if (c->outq == NULL)
			c->outq_tail = NULL;
		c->out_bytes -= o->total;
		if (o->reply)
			c->out_msgs--;
		if (o->m != NULL)
			nng_msg_free(o->m);
		free(o);
		c->tx_off = 0;
	}
	/* progress: the stall counts again from now */
	c->over_ms = over(c) ? now : 0;
	tx_next(c);
	rx_next(c);
	maybe_dead(c);
	pthread_mutex_unlock(&fs->lock);
}

/* ---- accepting --------------------------------------------------------- */

static void
note_full(struct face_stream *fs, const char *what)
{
	int64_t now = clock_mono_ms();

	fs->note_since++;
	if (fs->note_ms != 0 && now - fs->note_ms < NOTE_EVERY_MS)
		return;
	log_warn(
	    "sp", "%s count=%llu", what, (unsigned long long)fs->note_since);
	fs->note_since = 0;
	fs->note_ms = now;
}

static void
stream_peer(nng_stream *s, char *out, size_t len)
{
	nng_sockaddr sa;
	char host[INET6_ADDRSTRLEN], tmp[256];
	size_t n;

	out[0] = tmp[0] = '\0';
	if (nng_stream_get_addr(s, NNG_OPT_REMADDR, &sa) != 0)
		return;
	switch (sa.s_family) {
	case NNG_AF_INET:
		if (inet_ntop(AF_INET, &sa.s_in.sa_addr, host, sizeof(host)))
			snprintf(tmp, sizeof(tmp), "%s:%u", host,
			    (unsigned)ntohs(sa.s_in.sa_port));
		break;
	case NNG_AF_INET6:
		if (inet_ntop(AF_INET6, sa.s_in6.sa_addr, host, sizeof(host)))
			snprintf(tmp, sizeof(tmp), "[%s]:%u", host,
			    (unsigned)ntohs(sa.s_in6.sa_port));
		break;
	case NNG_AF_IPC:
		snprintf(tmp, sizeof(tmp), "ipc:%.200s", sa.s_ipc.sa_path);
		break;
	default:
		break;
	}
	n = strnlen(tmp, len - 1);
	memcpy(out, tmp, n);
	out[n] = '\0';
}

/* Under the lock: a new connection, or NULL (refused; `s` freed). */
static struct fs_conn *
conn_new(struct face_stream *fs, nng_stream *s)
{
	struct fs_conn *c;
	struct fs_out *o;
	int64_t now = clock_mono_ms();

	if (fs->lim.max_conns != 0 && fs->nconns >= fs->lim.max_conns) {
		fs->st.refused_full++;
		note_full(fs, "connection refused: --max-conns reached");
		nng_stream_free(s);
		return NULL;
	}
	if (fs->lim.max_unready != 0 && fs->nunready >= fs->lim.max_unready)
		for (struct fs_conn *v = fs->head; v != NULL; v = v->next)
			if (!v->ready) {
				close_locked(v, &fs->st.evicted_unready);
				note_full(fs,
				    "the oldest unauthenticated connection "
				    "closed for a new one: "
				    "--max-unauth-conns reached");
				break;
			}
	c = calloc(1, sizeof(*c));
	o = calloc(1, sizeof(*o));
	if (c == NULL || o == NULL || nng_aio_alloc(&c->rx, rx_cb, c) != 0 ||
	    nng_aio_alloc(&c->tx, tx_cb, c) != 0 ||
	    nng_msg_alloc(&o->m, SP_HANDSHAKE) != 0) {
		if (c != NULL) {
			nng_aio_free(c->rx);
			nng_aio_free(c->tx);
		}
		free(c);
		free(o);
		nng_stream_free(s);
		log_warn("sp", "out of memory for a connection");
		return NULL;
	}
	c->fs = fs;
	c->s = s;
	c->session = net_face_session(fs->cfg->net);
	stream_peer(s, c->peer, sizeof(c->peer));
	if (net_post_session(
	        fs->cfg->net, NET_SESSION_OPEN, c->session, c->peer) != 0) {
		nng_msg_free(o->m);
		free(o);
		nng_aio_free(c->rx);
		nng_aio_free(c->tx);
		nng_stream_free(s);
		free(c);
		return NULL;
	}
	c->authed = !fs->cfg->auth_on;
	c->enext = fs->every;
	if (fs->every != NULL)
		fs->every->eprev = c;
	fs->every = c;
	c->born_ms = c->active_ms = now;
	c->prev = fs->tail;
	if (fs->tail != NULL)
		fs->tail->next = c;
	else
		fs->head = c;
	fs->tail = c;
	fs->nconns++;
	fs->nunready++;
	if (fs->mode == FS_WS) {
		/* no SP header: the upgrade agreed on the subprotocol */
		nng_msg_free(o->m);
		free(o);
		c->shaken = true;
		if (c->authed)
			unready_done(c);
	} else {
		sp_handshake(nng_msg_body(o->m), SP_PROTO_REP0);
		o->total = SP_HANDSHAKE;
		queue_out(c, o);
	}
	rx_next(c);
	return c;
}

static void
acc_cb(void *arg)
{
	struct face_stream *fs = arg;
	int rv = nng_aio_result(fs->acc);

	pthread_mutex_lock(&fs->lock);
	if (fs->stopping) {
		if (rv == 0)
			nng_stream_free(nng_aio_get_output(fs->acc, 0));
		pthread_mutex_unlock(&fs->lock);
		return;
	}
	if (fs->acc_sleeping) {
		fs->acc_sleeping = false;
	} else if (rv == 0) {
		conn_new(fs, nng_aio_get_output(fs->acc, 0));
	} else if (rv == NNG_ECLOSED) {
		pthread_mutex_unlock(&fs->lock);
		return;
	} else if (rv == NNG_ENOFILES || rv == NNG_ENOMEM) {
		/* out of descriptors or memory: rest, then accept again */
		fs->st.accept_exhausted++;
		note_full(fs, "cannot accept a connection; pausing");
		fs->acc_sleeping = true;
		pthread_mutex_unlock(&fs->lock);
		nng_sleep_aio(ACCEPT_PAUSE_MS, fs->acc);
		return;
	}
	pthread_mutex_unlock(&fs->lock);
	nng_stream_listener_accept(fs->l, fs->acc);
}

/* ---- the face ---------------------------------------------------------- */

int
face_stream_open(struct face_stream **out, const char *url,
    const struct tlsfile *tls, const struct face_sp_config *cfg,
    const struct conns_limits *lim)
{
	struct face_stream *fs;
	nng_tls_config *tcfg = NULL;
	int rv;

	if (!face_stream_serves(url))
		return -EINVAL;
	if ((fs = calloc(1, sizeof(*fs))) == NULL)
		return -ENOMEM;
	fs->cfg = cfg;
	fs->lim = *lim;
	fs->mode = strncmp(url, "ipc://", 6) == 0 ? FS_IPC
	    : ws_url(url)                         ? FS_WS
	                                          : FS_SP;
	pthread_mutex_init(&fs->lock, NULL);
	if ((rv = nng_aio_alloc(&fs->acc, acc_cb, fs)) != 0 ||
	    (rv = nng_stream_listener_alloc(&fs->l, url)) != 0)
		goto fail;
	if (tlsfile_url(url)) {
		if (tls == NULL) {
			rv = NNG_EINVAL;
			goto fail;
		}
		if ((rv = tlsfile_server(tls, &tcfg)) != 0)
			goto fail;
		rv = nng_stream_listener_set_ptr(
		    fs->l, NNG_OPT_TLS_CONFIG, tcfg);
		nng_tls_config_free(tcfg); /* the listener holds its own */
		if (rv != 0)
			goto fail;
	}
	/* ws://: SP over WebSocket as nng's ws transport speaks it (the
	 * subprotocol its REQ dialers ask for, one SP message per WebSocket
	 * message); no frame over WS_FRAME_MAX (refused from its header,
	 * before a byte is allocated) and no message over the authenticated
	 * limit. nng's limits are the listener's, for every connection: a
	 * message is seen whole, so an unauthenticated connection may have
	 * nng hold the frames it sent of one message (its limit at most)
	 * until the handshake timeout closes it. */
	if (fs->mode == FS_WS &&
	    ((rv = nng_stream_listener_set_bool(fs->l, WS_MSGMODE, true)) !=
	            0 ||
	        (rv = nng_stream_listener_set_string(
	             fs->l, NNG_OPT_WS_PROTOCOL, WS_PROTOCOL)) != 0 ||
	        (rv = nng_stream_listener_set_size(
	             fs->l, NNG_OPT_WS_RECVMAXFRAME, WS_FRAME_MAX)) != 0 ||
	        (rv = nng_stream_listener_set_size(fs->l, NNG_OPT_RECVMAXSZ,
	             cfg->max_msg + SP_BACKTRACE_MAX)) != 0))
		goto fail;
	/* replies are written whole; never held for an ack (nng's
	 * default; ipc:// has no such option) */
	(void)nng_stream_listener_set_bool(fs->l, NNG_OPT_TCP_NODELAY, true);
	if ((rv = nng_stream_listener_listen(fs->l)) != 0)
		goto fail;
	nng_stream_listener_accept(fs->l, fs->acc);
	*out = fs;
	return 0;
fail:
	if (fs->l != NULL)
		nng_stream_listener_free(fs->l);
	nng_aio_free(fs->acc);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
	return -(ERR_BASE + rv);
}

static struct fs_conn *
take_dead(struct face_stream *fs)
{
	struct fs_conn *d;

	pthread_mutex_lock(&fs->lock);
	d = fs->dead;
	fs->dead = NULL;
	pthread_mutex_unlock(&fs->lock);
	return d;
}

static void
free_dead(struct fs_conn *d)
{
	while (d != NULL) {
		struct fs_conn *next = d->dnext;

		conn_free(d);
		d = next;
	}
}

void
face_stream_tick(struct face_stream *fs, int64_t now)
{
	const struct conns_limits *lim;
	const struct face_sp_config *cfg;

	if (fs == NULL || now < fs->next_tick)
		return;
	fs->next_tick = now + TICK_MS;
	lim = &fs->lim;
	cfg = fs->cfg;
	pthread_mutex_lock(&fs->lock);
	for (struct fs_conn *c = fs->head, *next; c != NULL; c = next) {
		next = c->next;
		/* authenticated by a request not answered yet (the
		 * replication port's first fetch may wait for records) */
		if (!c->ready)
			authed_now(c);
		if (!c->ready && lim->handshake_ms != 0 &&
		    now - c->born_ms >= (int64_t)lim->handshake_ms) {
			log_debug("sp",
			    "closed a connection: not ready within the "
			    "handshake timeout peer=%s shaken=%d",
			    c->peer, c->shaken);
			close_locked(c, &fs->st.closed_handshake);
		} else if (c->part_ms != 0 && lim->frame_ms != 0 &&
		    now - c->part_ms >= (int64_t)lim->frame_ms) {
			log_debug("sp",
			    "closed a connection: a message not complete "
			    "within the frame timeout peer=%s",
			    c->peer);
			close_locked(c, &fs->st.closed_frame);
		} else if (c->over_ms != 0 && lim->stall_ms != 0 &&
		    now - c->over_ms >= (int64_t)lim->stall_ms) {
			log_debug("sp",
			    "closed a connection: its replies stayed unread "
			    "over the marks for the stall timeout peer=%s",
			    c->peer);
			close_locked(c, &fs->st.closed_stalled);
		} else if (lim->idle_ms != 0 && c->inflight == 0 &&
		    c->outq == NULL && c->held == NULL &&
		    now - c->active_ms >= (int64_t)lim->idle_ms &&
		    (cfg->session_holds == NULL ||
		        !cfg->session_holds(cfg->arg, c->session))) {
			close_locked(c, &fs->st.closed_idle);
		}
	}
	pthread_mutex_unlock(&fs->lock);
	free_dead(take_dead(fs));
}

void
face_stream_stats(const struct face_stream *fs, struct conns_stats *st)
{
	struct face_stream *m = (struct face_stream *)fs;

	if (fs == NULL)
		return;
	pthread_mutex_lock(&m->lock);
	st->open += fs->nconns;
	st->accept_exhausted += fs->st.accept_exhausted;
	st->refused_full += fs->st.refused_full;
	st->evicted_unready += fs->st.evicted_unready;
	st->closed_handshake += fs->st.closed_handshake;
	st->closed_frame += fs->st.closed_frame;
	st->closed_idle += fs->st.closed_idle;
	st->closed_stalled += fs->st.closed_stalled;
	st->closed_refused += fs->st.closed_refused;
	pthread_mutex_unlock(&m->lock);
}

/* Bytes queued on the open connections. */
static size_t
unsent(struct face_stream *fs)
{
	size_t n = 0;

	pthread_mutex_lock(&fs->lock);
	for (const struct fs_conn *c = fs->head; c != NULL; c = c->next)
		n += c->out_bytes;
	pthread_mutex_unlock(&fs->lock);
	return n;
}

void
face_stream_quiesce(struct face_stream *fs, int timeout_ms)
{
	struct timespec ts = { 0, 1000000 };

	if (fs == NULL)
		return;
	for (int i = 0; i < timeout_ms && unsent(fs) > 0; i++)
		nanosleep(&ts, NULL);
}

void
face_stream_stop(struct face_stream *fs)
{
	if (fs == NULL)
		return;
	pthread_mutex_lock(&fs->lock);
	fs->stopping = true;
	pthread_mutex_unlock(&fs->lock);
	nng_stream_listener_close(fs->l);
	nng_aio_stop(fs->acc);
	pthread_mutex_lock(&fs->lock);
	while (fs->head != NULL)
		close_locked(fs->head, NULL);
	pthread_mutex_unlock(&fs->lock);
	/* Their reads and writes end with ECLOSED; wait for the callbacks,
	 * outside the lock (nng_aio_stop waits for one that runs). Only
	 * this thread adds to or frees from `every`, and no more are
	 * accepted. */
	for (struct fs_conn *c = fs->every; c != NULL; c = c->enext) {
		nng_aio_stop(c->rx);
		nng_aio_stop(c->tx);
	}
}

void
face_stream_free(struct face_stream *fs)
{
	if (fs == NULL)
		return;
	free_dead(take_dead(fs));
	while (fs->every != NULL) /* closed, their requests never answered */
		conn_free(fs->every);
	nng_aio_free(fs->acc);
	nng_stream_listener_free(fs->l);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
}
