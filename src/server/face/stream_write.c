/* stream_write - face_stream's replies: the core's answers to a
 * connection's requests (its face, struct face, called on the core
 * thread) and their writing on nng's threads. An answer is framed as its
 * request came (the length, after ipc://'s type byte; over ws:// none)
 * with the request's backtrace, in one buffer, and queued on its
 * connection; the queue is written one reply after the other. Its bytes
 * and replies count against the output marks (--max-queued-bytes,
 * --max-queued-replies): over them the stall timeout runs, and every write
 * that makes progress starts it again. A request answered, dropped or
 * parked may let its connection read its next message (stream_read.c). All
 * of it under the face's lock. */
#include <stdlib.h>

#include <nng/nng.h>

#include "proto/sp.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "server/face/stream_conn.h"
#include "util/clock.h"
#include "util/log.h"

static struct fs_req *
req_of(const struct face_ctx *ctx)
{
	return (struct fs_req *)((char *)ctx - offsetof(struct fs_req, ctx));
}

static bool
over(const struct fs_conn *c)
{
	const struct conns_limits *lim = &c->fs->lim;

	return (lim->out_bytes != 0 && c->out_bytes >= lim->out_bytes) ||
	    (lim->out_msgs != 0 && c->out_msgs >= lim->out_msgs);
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
	fs_rx_next(c);
	fs_maybe_dead(c);
}

void
fs_queue_out(struct fs_conn *c, struct fs_out *o)
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
	fs_tx_next(c);
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
fs_reply(struct face_ctx *ctx, nng_msg *msg)
{
	struct fs_req *r = req_of(ctx);
	struct fs_conn *c = r->c;
	struct face_stream *fs = c->fs;
	struct fs_out *o = NULL;

	pthread_mutex_lock(&fs->lock);
	fs_authed_now(c);
	if (!c->closed && (o = calloc(1, sizeof(*o))) != NULL &&
	    frame(fs, msg, r) == 0) {
		/* one buffer: nng's TLS stream writes one iov per call, and
		 * a header alone in a segment waits for the peer's ack */
		o->m = msg;
		o->reply = true;
		o->total = nng_msg_len(msg);
		fs_queue_out(c, o);
	} else {
		if (!c->closed) {
			free(o);
			log_warn("sp",
			    "out of memory for a reply; closing the "
			    "connection peer=%s",
			    c->peer);
			fs_close_locked(c, NULL);
		}
		nng_msg_free(msg);
	}
	req_end(r);
	pthread_mutex_unlock(&fs->lock);
}

static void
fs_drop(struct face_ctx *ctx)
{
	struct face_stream *fs = req_of(ctx)->c->fs;

	pthread_mutex_lock(&fs->lock);
	req_end(req_of(ctx));
	pthread_mutex_unlock(&fs->lock);
}

static const char *
fs_peer(const struct face_ctx *ctx)
{
	return req_of(ctx)->c->peer;
}

static bool
fs_alive(const struct face_ctx *ctx)
{
	struct fs_conn *c = req_of(ctx)->c;
	bool alive;

	pthread_mutex_lock(&c->fs->lock);
	alive = !c->closed;
	pthread_mutex_unlock(&c->fs->lock);
	return alive;
}

static void
fs_close(struct face_ctx *ctx)
{
	struct fs_req *r = req_of(ctx);
	struct face_stream *fs = r->c->fs;

	pthread_mutex_lock(&fs->lock);
	fs_close_locked(r->c, NULL);
	req_end(r);
	pthread_mutex_unlock(&fs->lock);
}

static void
fs_waiting(struct face_ctx *ctx)
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
		fs_rx_next(r->c);
	}
	pthread_mutex_unlock(&fs->lock);
}

const struct face fs_face = { fs_reply, fs_drop, fs_peer, fs_alive, fs_close,
	fs_waiting };

void
fs_tx_next(struct fs_conn *c)
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

void
fs_tx_cb(void *arg)
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
		fs_close_locked(c, NULL);
		fs_maybe_dead(c);
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
	fs_tx_next(c);
	fs_rx_next(c);
	fs_maybe_dead(c);
	pthread_mutex_unlock(&fs->lock);
}
