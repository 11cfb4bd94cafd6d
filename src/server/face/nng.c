/* face_nng - nng's rep0 socket as a face (nng.h).
 *
 * A context goes round one cycle: RECV (nng waits for a request) → CORE
 * (the core thread holds the request) → SEND (nng sends the answer) →
 * RECV. Its aio's callback runs on an nng thread at the end of RECV and of
 * SEND; the core thread moves it from CORE to SEND (rep_reply). The state
 * shared between threads is the event queue (face/events.c), the idle and
 * sending counts (atomic), the unread replies of each pipe (out_lock), and
 * whether the face stopped (post_lock: nothing is posted after the stop,
 * even when nng's close is abandoned and its callbacks still run).
 *
 * The pool starts with POOL_START contexts. When the core drains
 * events and fewer than POOL_LOW contexts are idle, it opens
 * POOL_STEP more, so a request never waits for a free context while
 * others are parked in blocked takes. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "server/face/events.h"
#include "server/face/face.h"
#include "server/face/nng.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/nngclose.h"
#include "util/tlsfile.h"

enum {
	POOL_START = 64,
	POOL_LOW = 16,
	POOL_STEP = 64,
	POOL_MAX = 1 << 16,
	CLOSE_MS = 3000, /* the longest face_nng_stop waits for nng */
};

enum ctx_state { CTX_RECV, CTX_CORE, CTX_SEND };

struct rep_ctx {
	struct face_ctx base; /* face = &rep_face */
	struct face_nng *f;
	nng_ctx ctx;
	nng_aio *aio;
	enum ctx_state state;
	nng_pipe pipe;   /* CTX_CORE: the request's */
	size_t sent_len; /* CTX_SEND: the reply's bytes, when counted */
	bool counted;    /* CTX_SEND: in its pipe's pipe_out */
	struct event ev; /* the request event; one per context */
	struct rep_ctx *all_next;
};

/* The replies of one pipe handed to nng and not sent yet (nng sends a
 * pipe's replies one at a time; a peer that does not read keeps them). */
struct pipe_out {
	struct pipe_out *next;
	uint32_t id;
	unsigned replies;
	size_t bytes;
	int64_t over_ms; /* over the marks, with no reply sent since; 0 */
};

enum {
	OUT_BUCKETS = 1024,
	OUT_HARD = 4, /* this many times a mark: closed at once */
};

struct face_nng {
	nng_socket sock;
	struct events *events;
	pthread_mutex_t post_lock; /* guards stopped against posting */
	bool stopped;              /* nothing more is posted */
	bool abandoned;            /* nng's close did not end in time */
	struct rep_ctx *all;       /* every context, for face_nng_free */
	size_t total;
	atomic_size_t idle;
	atomic_size_t sending;
	atomic_bool closing;
	atomic_uint pipes;     /* open now */
	atomic_uint max_pipes; /* 0: no limit */
	atomic_uint_fast64_t pipes_refused;
	/* --max-queued-bytes, --max-queued-replies, --stall-timeout for
	 * nng's pipes (face_nng_set_out_limits); out_lock guards outs */
	pthread_mutex_t out_lock;
	struct pipe_out *outs[OUT_BUCKETS];
	size_t out_bytes_max;
	unsigned out_msgs_max;
	uint32_t stall_ms;
	atomic_uint_fast64_t pipes_stalled;
};

static const struct face rep_face;

/* ---- the unread replies of each pipe ---------------------------------- */

static bool
out_over(const struct face_nng *f, const struct pipe_out *o, unsigned times)
{
	/* one reply, however large, may take its time */
	return (o->replies >= 2 && o->bytes >= times * f->out_bytes_max) ||
	    o->replies >= times * f->out_msgs_max;
}

/* Counts a reply of `len` bytes for pipe `id`; true when the pipe is
 * now far over the marks (close it). */
static bool
out_add(struct face_nng *f, uint32_t id, size_t len)
{
	struct pipe_out **b = &f->outs[id % OUT_BUCKETS], *o;
	bool hard;

	pthread_mutex_lock(&f->out_lock);
	for (o = *b; o != NULL && o->id != id; o = o->next)
		;
	if (o == NULL && (o = calloc(1, sizeof(*o))) != NULL) {
		o->id = id;
		o->next = *b;
		*b = o;
	}
	if (o == NULL) {
		pthread_mutex_unlock(&f->out_lock);
		return false;
	}
	o->replies++;
	o->bytes += len;
	if (o->over_ms == 0 && out_over(f, o, 1))
		o->over_ms = clock_mono_ms();
	hard = out_over(f, o, OUT_HARD);
	pthread_mutex_unlock(&f->out_lock);
	return hard;
}

/* A reply of pipe `id` left (sent, or dropped with its pipe). */
static void
out_sub(struct face_nng *f, uint32_t id, size_t len)
{
	struct pipe_out **p = &f->outs[id % OUT_BUCKETS], *o;

	pthread_mutex_lock(&f->out_lock);
	while ((o = *p) != NULL && o->id != id)
		p = &o->next;
	if (o != NULL) {
		o->replies--;
		o->bytes -= len;
		if (o->replies == 0) {
			*p = o->next;
			free(o);
		} else {
			/* progress: the stall counts again from now */
			o->over_ms = out_over(f, o, 1) ? clock_mono_ms() : 0;
		}
	}
	pthread_mutex_unlock(&f->out_lock);
}

/* ---- the contexts (nng's threads) -------------------------------------- */

static void
ctx_recv(struct rep_ctx *c)
{
	c->state = CTX_RECV;
	atomic_fetch_add(&c->f->idle, 1);
	nng_ctx_recv(c->ctx, c->aio);
}

static void
ctx_cb(void *arg)
{
	struct rep_ctx *c = arg;
	struct face_nng *f = c->f;
	int rv = nng_aio_result(c->aio);

	if (c->state == CTX_SEND) {
		atomic_fetch_sub(&f->sending, 1);
		if (c->counted) {
			c->counted = false;
			out_sub(f, nng_pipe_id(c->pipe), c->sent_len);
		}
		if (rv != 0)
			nng_msg_free(nng_aio_get_msg(c->aio));
		if (rv == NNG_ECLOSED || atomic_load(&f->closing))
			return;
		ctx_recv(c);
		return;
	}
	/* CTX_RECV */
	atomic_fetch_sub(&f->idle, 1);
	if (rv != 0) {
		if (rv == NNG_ECLOSED || atomic_load(&f->closing))
			return;
		/* A failed receive (e.g. a pipe closed mid-message): retry. */
		ctx_recv(c);
		return;
	}
	c->state = CTX_CORE;
	c->ev.kind = EVENT_REQUEST;
	c->ev.ctx = &c->base;
	c->ev.msg = nng_aio_get_msg(c->aio);
	c->pipe = nng_msg_get_pipe(c->ev.msg);
	c->ev.session = nng_pipe_id(c->pipe);
	pthread_mutex_lock(&f->post_lock);
	if (!f->stopped)
		events_post(f->events, &c->ev);
	else
		event_done(&c->ev);
	pthread_mutex_unlock(&f->post_lock);
}

/* A session opens at NNG_PIPE_EV_ADD_PRE, not _ADD_POST: nng starts a
 * pipe's receiving between the two, so a request could reach the core
 * before the open of its session (a valid token then found no session
 * to bind to). Once ADD_PRE ran, nng always runs REM_POST too, even for
 * a pipe it rejects: every open is closed. */
static void
pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct face_nng *f = arg;
	char peer[FACE_PEER_MAX];
	int rc = 0;

	if (atomic_load(&f->closing))
		return;
	if (ev == NNG_PIPE_EV_ADD_PRE) {
		unsigned now = atomic_fetch_add(&f->pipes, 1) + 1;
		unsigned max = atomic_load(&f->max_pipes);

		/* over the cap: refused here; REM_POST still follows */
		if (max != 0 && now > max) {
			atomic_fetch_add(&f->pipes_refused, 1);
			nng_pipe_close(p);
		}
	} else {
		atomic_fetch_sub(&f->pipes, 1);
	}
	peer[0] = '\0';
	if (ev == NNG_PIPE_EV_ADD_PRE)
		face_nng_pipe_peer(p, peer, sizeof(peer));
	pthread_mutex_lock(&f->post_lock);
	if (!f->stopped)
		rc = events_post_session(f->events,
		    ev == NNG_PIPE_EV_ADD_PRE ? EVENT_SESSION_OPEN
		                              : EVENT_SESSION_CLOSE,
		    nng_pipe_id(p), peer);
	pthread_mutex_unlock(&f->post_lock);
	if (rc != 0) {
		/* Without the event a closed session would keep its leases
		 * until their ttr: close the pipe so the client reconnects
		 * rather than run unaccounted. */
		log_err("net", "out of memory for a session event");
	}
}

static int
pool_grow(struct face_nng *f, size_t count)
{
	for (size_t i = 0; i < count && f->total < POOL_MAX; i++) {
		struct rep_ctx *c = calloc(1, sizeof(*c));
		int rv;

		if (c == NULL)
			return -ENOMEM;
		c->base.face = &rep_face;
		c->f = f;
		rv = nng_aio_alloc(&c->aio, ctx_cb, c);
		if (rv == 0) {
			rv = nng_ctx_open(&c->ctx, f->sock);
			if (rv != 0)
				nng_aio_free(c->aio);
		}
		if (rv != 0) {
			free(c);
			return -(FACE_NNG_ERR_BASE + rv);
		}
		c->all_next = f->all;
		f->all = c;
		f->total++;
		ctx_recv(c);
	}
	return 0;
}

/* The queue's drain hook, on the core thread: more contexts when few
 * wait for a request. */
static void
on_drain(void *arg)
{
	struct face_nng *f = arg;

	if (!atomic_load(&f->closing) && atomic_load(&f->idle) < POOL_LOW) {
		int rc = pool_grow(f, POOL_STEP);

		if (rc != 0)
			log_warn("net", "cannot add contexts error=\"%s\"",
			    face_strerror(rc));
	}
}

/* ---- the core's answers (the core thread) ------------------------------ */

static void
rep_reply(struct face_ctx *base, nng_msg *msg)
{
	struct rep_ctx *c = (struct rep_ctx *)base;
	struct face_nng *f = c->f;

	atomic_fetch_add(&f->sending, 1);
	c->state = CTX_SEND;
	c->counted = f->out_msgs_max != 0;
	c->sent_len = nng_msg_len(msg);
	if (c->counted && out_add(f, nng_pipe_id(c->pipe), c->sent_len)) {
		atomic_fetch_add(&f->pipes_stalled, 1);
		log_debug("net",
		    "closing a connection: far over its unread replies' "
		    "limits session=%u",
		    nng_pipe_id(c->pipe));
		nng_pipe_close(c->pipe);
	}
	nng_aio_set_msg(c->aio, msg);
	nng_ctx_send(c->ctx, c->aio);
}

static void
rep_drop(struct face_ctx *base)
{
	ctx_recv((struct rep_ctx *)base);
}

static void
rep_close(struct face_ctx *base)
{
	nng_pipe_close(((struct rep_ctx *)base)->pipe);
	rep_drop(base);
}

/* No peer (the core asks the request's pipe, face_nng_pipe_peer), and
 * no alive: nng drops an answer to a closed pipe. */
static const struct face rep_face = {
	.reply = rep_reply,
	.drop = rep_drop,
	.close = rep_close,
};

/* ---- the face ---------------------------------------------------------- */

/* Starts listening on `url`, with TLS when the URL asks for it. */
static int
listen_on(nng_socket sock, const char *url, const struct tlsfile *tls)
{
	nng_tls_config *cfg = NULL;
	nng_listener l;
	int rv;

	if (!tlsfile_url(url))
		return nng_listen(sock, url, NULL, 0);
	if (tls == NULL)
		return NNG_EINVAL;
	if ((rv = tlsfile_server(tls, &cfg)) != 0)
		return rv;
	if ((rv = nng_listener_create(&l, sock, url)) == 0 &&
	    (rv = nng_listener_set_ptr(l, NNG_OPT_TLS_CONFIG, cfg)) == 0)
		rv = nng_listener_start(l, 0);
	nng_tls_config_free(cfg); /* the listener holds its own reference */
	return rv;
}

int
face_nng_open(struct face_nng **out, struct events *events, const char *url,
    size_t max_msg, const struct tlsfile *tls)
{
	struct face_nng *f;
	int rv, rc;

	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->events = events;
	pthread_mutex_init(&f->post_lock, NULL);
	pthread_mutex_init(&f->out_lock, NULL);
	rv = nng_rep0_open(&f->sock);
	if (rv != 0) {
		pthread_mutex_destroy(&f->out_lock);
		pthread_mutex_destroy(&f->post_lock);
		free(f);
		return -(FACE_NNG_ERR_BASE + rv);
	}
	if ((rv = nng_socket_set_size(f->sock, NNG_OPT_RECVMAXSZ, max_msg)) ||
	    (rv = nng_pipe_notify(f->sock, NNG_PIPE_EV_ADD_PRE, pipe_cb, f)) ||
	    (rv = nng_pipe_notify(f->sock, NNG_PIPE_EV_REM_POST, pipe_cb, f))) {
		rc = -(FACE_NNG_ERR_BASE + rv);
		goto fail_sock;
	}
	rc = pool_grow(f, POOL_START);
	if (rc != 0)
		goto fail_sock;
	rv = listen_on(f->sock, url, tls);
	if (rv != 0) {
		rc = -(FACE_NNG_ERR_BASE + rv);
		goto fail_sock;
	}
	events_on_drain(events, on_drain, f);
	*out = f;
	return 0;

fail_sock:
	face_nng_stop(f);
	face_nng_free(f);
	return rc;
}

void
face_nng_set_out_limits(
    struct face_nng *f, size_t bytes, unsigned replies, uint32_t stall_ms)
{
	f->out_bytes_max = bytes != 0 ? bytes : SIZE_MAX / OUT_HARD;
	f->out_msgs_max = replies;
	f->stall_ms = stall_ms;
}

void
face_nng_check_stalled(struct face_nng *f, int64_t now)
{
	uint32_t ids[64];
	size_t nids = 0;

	if (f == NULL || f->out_msgs_max == 0 || f->stall_ms == 0)
		return;
	pthread_mutex_lock(&f->out_lock);
	for (size_t i = 0; i < OUT_BUCKETS && nids < 64; i++)
		for (struct pipe_out *o = f->outs[i]; o != NULL && nids < 64;
		     o = o->next)
			if (o->over_ms != 0 &&
			    now - o->over_ms >= (int64_t)f->stall_ms) {
				ids[nids++] = o->id;
				o->over_ms = 0; /* closed once */
			}
	pthread_mutex_unlock(&f->out_lock);
	for (size_t i = 0; i < nids; i++)
		if (face_nng_close_pipe(f, ids[i]))
			atomic_fetch_add(&f->pipes_stalled, 1);
}

uint64_t
face_nng_pipes_stalled(const struct face_nng *f)
{
	return f != NULL ? atomic_load(&f->pipes_stalled) : 0;
}

void
face_nng_set_max_pipes(struct face_nng *f, unsigned max)
{
	atomic_store(&f->max_pipes, max);
}

uint64_t
face_nng_pipes_refused(const struct face_nng *f)
{
	return f != NULL ? atomic_load(&f->pipes_refused) : 0;
}

bool
face_nng_close_pipe(struct face_nng *f, uint32_t session)
{
	nng_pipe p = NNG_PIPE_INITIALIZER;

	if (f == NULL || session >= 1u << 31)
		return false;
	p.id = session;
	return nng_pipe_close(p) == 0;
}

void
face_nng_stop(struct face_nng *f)
{
	if (f == NULL)
		return;
	atomic_store(&f->closing, true);
	pthread_mutex_lock(&f->post_lock);
	f->stopped = true;
	pthread_mutex_unlock(&f->post_lock);
	events_on_drain(f->events, NULL, NULL);
	/* If the close is abandoned, `f` stays allocated: what the close
	 * still runs (the contexts' callbacks) may reach it until the exit;
	 * they post nothing more. */
	if (!nngclose_within(f->sock, CLOSE_MS, NULL, NULL)) {
		log_debug("net",
		    "the socket did not close in time; leaving it to the "
		    "exit wait_ms=%d",
		    CLOSE_MS);
		f->abandoned = true;
		return;
	}
	/* nng_aio_stop waits for a running callback to finish. */
	for (struct rep_ctx *c = f->all; c != NULL; c = c->all_next)
		nng_aio_stop(c->aio);
}

void
face_nng_free(struct face_nng *f)
{
	struct rep_ctx *c;

	if (f == NULL || f->abandoned)
		return;
	while ((c = f->all) != NULL) {
		f->all = c->all_next;
		nng_aio_free(c->aio);
		nng_ctx_close(c->ctx);
		free(c);
	}
	for (size_t i = 0; i < OUT_BUCKETS; i++)
		while (f->outs[i] != NULL) {
			struct pipe_out *o = f->outs[i];

			f->outs[i] = o->next;
			free(o);
		}
	pthread_mutex_destroy(&f->out_lock);
	pthread_mutex_destroy(&f->post_lock);
	free(f);
}

void
face_nng_addr(const nng_sockaddr *sa, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	out[0] = '\0';
	switch (sa->s_family) {
	case NNG_AF_INET:
		if (inet_ntop(AF_INET, &sa->s_in.sa_addr, host, sizeof(host)))
			snprintf(out, len, "%s:%u", host,
			    (unsigned)ntohs(sa->s_in.sa_port));
		break;
	case NNG_AF_INET6:
		if (inet_ntop(AF_INET6, sa->s_in6.sa_addr, host, sizeof(host)))
			snprintf(out, len, "[%s]:%u", host,
			    (unsigned)ntohs(sa->s_in6.sa_port));
		break;
	case NNG_AF_IPC:
		snprintf(out, len, "ipc:%s", sa->s_ipc.sa_path);
		break;
	default:
		break;
	}
}

void
face_nng_pipe_peer(nng_pipe p, char *out, size_t len)
{
	nng_sockaddr sa;

	out[0] = '\0';
	if (nng_pipe_id(p) > 0 &&
	    nng_pipe_get_addr(p, NNG_OPT_REMADDR, &sa) == 0)
		face_nng_addr(&sa, out, len);
}

void
face_nng_quiesce(struct face_nng *f, int timeout_ms)
{
	struct timespec ts = { 0, 1000000 };

	if (f == NULL)
		return;
	for (int i = 0; i < timeout_ms && atomic_load(&f->sending) > 0; i++)
		nanosleep(&ts, NULL);
}

void
face_nng_counts(const struct face_nng *f, size_t *total, size_t *idle)
{
	*total = f != NULL ? f->total : 0;
	*idle = f != NULL ? atomic_load(&f->idle) : 0;
}
