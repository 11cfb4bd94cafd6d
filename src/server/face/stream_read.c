/* stream_read - face_stream's reading, on nng's threads under the face's
 * lock: a connection's bytes become requests posted to the core. Over TCP,
 * TLS and ipc:// the reads follow the framing exactly (the peer's SP
 * header, then for each message its length, ipc://'s type byte first, then
 * its body): the length is checked against the connection's limit
 * (FACE_SP_PREAUTH_MAX until its session authenticated under --auth)
 * before a byte of the body is allocated, and the body grows as it
 * arrives. Over ws:// nng's stream, in message mode, ends each read with
 * one whole message, checked against the same limit. A message without a
 * request id, or over the limit, closes the connection.
 *
 * A connection reads its next message only while it has room: fewer than
 * FACE_SP_INFLIGHT_MAX requests in the core, and its replies queued plus
 * its requests in the core (parked takes aside) under the output marks. A
 * message that may have a large reply waits, complete, while
 * FACE_SP_BULKY_MAX such requests are in the core. The frame timeout runs
 * from a message's first byte, again after each FRAME_PROGRESS bytes of
 * it. */
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "proto/sp.h"
#include "server/face/sp.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "server/face/stream_conn.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	FRAME_PROGRESS = 16384,
	BODY_FIRST = 64 * 1024, /* a body's first allocation, at most */
};

static bool
room(const struct fs_conn *c)
{
	const struct conns_limits *lim = &c->fs->lim;

	return (lim->out_bytes == 0 || c->out_bytes < lim->out_bytes) &&
	    (lim->out_msgs == 0 ||
	        c->out_msgs + (c->inflight - c->parked) < lim->out_msgs);
}

static size_t
len_bytes(const struct face_stream *fs)
{
	return fs->mode == FS_IPC ? 1 + SP_LEN : SP_LEN;
}

/* Posts a whole message ([backtrace][request]); false when out of
 * memory. */
static bool
post(struct fs_conn *c, nng_msg *m)
{
	size_t bt = sp_backtrace_len(nng_msg_body(m), nng_msg_len(m));
	struct fs_req *r = malloc(sizeof(*r));

	if (r == NULL)
		return false;
	r->ctx.face = &fs_face;
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
	r->ev = (struct event) { .kind = EVENT_REQUEST,
		.session = c->session,
		.ctx = &r->ctx,
		.msg = m };
	c->inflight++;
	events_post(c->fs->cfg->events, &r->ev);
	return true;
}

static bool
may_read(const struct fs_conn *c)
{
	return !c->closed && !c->rx_busy &&
	    c->inflight < FACE_SP_INFLIGHT_MAX && room(c);
}

/* Starts the next read if the connection may read; a message held for a
 * bulky request's end goes first. */
void
fs_rx_next(struct fs_conn *c)
{
	nng_iov iov;

	if (c->held != NULL && !c->closed && c->bulky < FACE_SP_BULKY_MAX &&
	    c->inflight < FACE_SP_INFLIGHT_MAX && room(c)) {
		nng_msg *m = c->held;

		c->held = NULL;
		if (!post(c, m)) {
			nng_msg_free(m);
			fs_close_locked(c, NULL);
			return;
		}
	}
	if (c->held != NULL || !may_read(c))
		return; /* fs_rx_next runs again when that changes */
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
			fs_close_locked(c, &c->fs->st.closed_refused);
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
		fs_close_locked(c, &c->fs->st.closed_refused);
		return false;
	}
	if (nng_msg_alloc(&c->body, len < BODY_FIRST ? len : BODY_FIRST) != 0) {
		log_warn("sp",
		    "out of memory for a request; closing the connection "
		    "peer=%s",
		    c->peer);
		fs_close_locked(c, NULL);
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
		fs_close_locked(c, &c->fs->st.closed_refused);
		return;
	}
	if (c->bulky >= FACE_SP_BULKY_MAX) {
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
		fs_close_locked(c, NULL);
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
		fs_close_locked(c, &c->fs->st.closed_refused);
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
			fs_close_locked(c, &fs->st.closed_refused);
			break;
		}
		c->shaken = true;
		if (c->authed)
			fs_unready_done(c);
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
				fs_close_locked(c, NULL);
			}
		}
		break;
	}
}

void
fs_rx_cb(void *arg)
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
		fs_close_locked(c, NULL);
		fs_maybe_dead(c);
		pthread_mutex_unlock(&fs->lock);
		return;
	}
	if (n > 0 || m != NULL)
		c->active_ms = now;
	if (fs->mode == FS_WS)
		ws_message(c, m);
	else
		rx_bytes(c, n, now);
	fs_rx_next(c);
	fs_maybe_dead(c);
	pthread_mutex_unlock(&fs->lock);
}
