/* face_stream - the face for tls+tcp://, ipc:// and ws:// clients and the
 * replication port (stream.h): its listener, its accepting, its timeouts,
 * its counters, its stop. Its connections are stream_conn.c's, their
 * reading stream_read.c's, the core's answers and their writing
 * stream_write.c's; stream_conn.h holds what they share.
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
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>

#include "proto/sp.h"
#include "server/face/face.h"
#include "server/face/stream.h"
#include "server/face/stream_conn.h"
#include "util/log.h"
#include "util/tlsfile.h"

enum {
	TICK_MS = 250,
	ACCEPT_PAUSE_MS = 100,
	/* ws://: the largest WebSocket frame read, nng's default: its
	 * dialers send frames of up to 1 MiB (its listeners 64 KiB) */
	WS_FRAME_MAX = 1 << 20,
};

/* nng's option for whole messages on a WebSocket stream (internal to
 * nng, named here), and the subprotocol of SP's REP over WebSocket */
#define WS_MSGMODE  "ws:msgmode"
#define WS_PROTOCOL "rep.sp.nanomsg.org"

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

/* ---- accepting (nng's thread) ------------------------------------------ */

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
		fs_conn_new(fs, nng_aio_get_output(fs->acc, 0));
	} else if (rv == NNG_ECLOSED) {
		pthread_mutex_unlock(&fs->lock);
		return;
	} else if (rv == NNG_ENOFILES || rv == NNG_ENOMEM) {
		/* out of descriptors or memory: rest, then accept again */
		fs->st.accept_exhausted++;
		fs_note_full(fs, "cannot accept a connection; pausing");
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
	return -(FACE_NNG_ERR_BASE + rv);
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

		fs_conn_free(d);
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
			fs_authed_now(c);
		if (!c->ready && lim->handshake_ms != 0 &&
		    now - c->born_ms >= (int64_t)lim->handshake_ms) {
			log_debug("sp",
			    "closed a connection: not ready within the "
			    "handshake timeout peer=%s shaken=%d",
			    c->peer, c->shaken);
			fs_close_locked(c, &fs->st.closed_handshake);
		} else if (c->part_ms != 0 && lim->frame_ms != 0 &&
		    now - c->part_ms >= (int64_t)lim->frame_ms) {
			log_debug("sp",
			    "closed a connection: a message not complete "
			    "within the frame timeout peer=%s",
			    c->peer);
			fs_close_locked(c, &fs->st.closed_frame);
		} else if (c->over_ms != 0 && lim->stall_ms != 0 &&
		    now - c->over_ms >= (int64_t)lim->stall_ms) {
			log_debug("sp",
			    "closed a connection: its replies stayed unread "
			    "over the marks for the stall timeout peer=%s",
			    c->peer);
			fs_close_locked(c, &fs->st.closed_stalled);
		} else if (lim->idle_ms != 0 && c->inflight == 0 &&
		    c->outq == NULL && c->held == NULL &&
		    now - c->active_ms >= (int64_t)lim->idle_ms &&
		    (cfg->session_holds == NULL ||
		        !cfg->session_holds(cfg->arg, c->session))) {
			fs_close_locked(c, &fs->st.closed_idle);
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
		fs_close_locked(fs->head, NULL);
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
		fs_conn_free(fs->every);
	nng_aio_free(fs->acc);
	nng_stream_listener_free(fs->l);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
}
