/* stream_conn - face_stream's connections (stream_conn.h): how one is made
 * when nng accepts it (its session opened with the core, our SP header
 * queued, its first read started), how it becomes ready, and how it closes
 * (its session closed with the core) and is freed once nothing refers to
 * it: not its read, not its write, no request the core holds. Everything
 * here runs under the face's lock, but fs_conn_free, which nng_aio_free
 * makes wait for a callback still running.
 *
 * Bounds applied as a connection arrives: past --max-conns it is refused
 * (closed at once); past --max-unauth-conns the oldest not ready gives way
 * to it. Each is counted and logged at most every NOTE_EVERY_MS. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <nng/nng.h>

#include "proto/sp.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "server/face/nng.h"
#include "server/face/stream_conn.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	NOTE_EVERY_MS = 10000,
};

void
fs_maybe_dead(struct fs_conn *c)
{
	struct face_stream *fs = c->fs;

	if (!c->closed || c->dead || c->rx_busy || c->tx_busy ||
	    c->inflight > 0)
		return;
	c->dead = true;
	c->dnext = fs->dead;
	fs->dead = c;
}

void
fs_unready_done(struct fs_conn *c)
{
	if (!c->ready) {
		c->ready = true;
		c->fs->nunready--;
	}
}

void
fs_close_locked(struct fs_conn *c, uint64_t *counter)
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
	if (events_post_session(
	        fs->cfg->events, EVENT_SESSION_CLOSE, c->session, NULL) != 0)
		log_warn("sp",
		    "cannot tell the core that a session ended; its leases "
		    "end at their ttr session=%u",
		    c->session);
	fs_maybe_dead(c);
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
void
fs_conn_free(struct fs_conn *c)
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

void
fs_authed_now(struct fs_conn *c)
{
	const struct face_sp_config *cfg = c->fs->cfg;

	if (c->authed || cfg->session_authed == NULL ||
	    !cfg->session_authed(cfg->arg, c->session))
		return;
	c->authed = true;
	if (c->shaken)
		fs_unready_done(c);
}

void
fs_note_full(struct face_stream *fs, const char *what)
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

/* The other end's address, for log lines. */
static void
stream_peer(nng_stream *s, char *out, size_t len)
{
	nng_sockaddr sa;

	out[0] = '\0';
	if (nng_stream_get_addr(s, NNG_OPT_REMADDR, &sa) == 0)
		face_nng_addr(&sa, out, len);
}

/* Under the lock: a new connection, or NULL (refused; `s` freed). */
struct fs_conn *
fs_conn_new(struct face_stream *fs, nng_stream *s)
{
	struct fs_conn *c;
	struct fs_out *o;
	int64_t now = clock_mono_ms();

	if (fs->lim.max_conns != 0 && fs->nconns >= fs->lim.max_conns) {
		fs->st.refused_full++;
		fs_note_full(fs, "connection refused: --max-conns reached");
		nng_stream_free(s);
		return NULL;
	}
	if (fs->lim.max_unready != 0 && fs->nunready >= fs->lim.max_unready)
		for (struct fs_conn *v = fs->head; v != NULL; v = v->next)
			if (!v->ready) {
				fs_close_locked(v, &fs->st.evicted_unready);
				fs_note_full(fs,
				    "the oldest unauthenticated connection "
				    "closed for a new one: "
				    "--max-unauth-conns reached");
				break;
			}
	c = calloc(1, sizeof(*c));
	o = calloc(1, sizeof(*o));
	if (c == NULL || o == NULL || nng_aio_alloc(&c->rx, fs_rx_cb, c) != 0 ||
	    nng_aio_alloc(&c->tx, fs_tx_cb, c) != 0 ||
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
	c->session = events_session(fs->cfg->events);
	stream_peer(s, c->peer, sizeof(c->peer));
	if (events_post_session(fs->cfg->events, EVENT_SESSION_OPEN, c->session,
	        c->peer) != 0) {
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
			fs_unready_done(c);
	} else {
		sp_handshake(nng_msg_body(o->m), SP_PROTO_REP0);
		o->total = SP_HANDSHAKE;
		fs_queue_out(c, o);
	}
	fs_rx_next(c);
	return c;
}
