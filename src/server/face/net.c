/* net - see net.h.
 *
 * A context goes round one cycle: RECV (nng waits for a request) → CORE
 * (the core thread holds the request) → SEND (nng sends the answer) →
 * RECV. Its aio's callback runs on an nng thread at the end of RECV and of
 * SEND; the core thread moves it from CORE to SEND. The only state shared
 * between threads is the event queue (a mutex-protected FIFO, signalled
 * through an eventfd) and the idle count (atomic).
 *
 * The pool starts with NET_POOL_START contexts. When the core drains
 * events and fewer than NET_POOL_LOW contexts are idle, it opens
 * NET_POOL_STEP more, so a request never waits for a free context while
 * others are parked in blocked takes. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "server/face/net.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/nngclose.h"
#include "util/tlsfile.h"

enum {
	NET_POOL_START = 64,
	NET_POOL_LOW = 16,
	NET_POOL_STEP = 64,
	NET_POOL_MAX = 1 << 16,
	NET_NNG_ERR_BASE = 1000,
	NET_CLOSE_MS = 3000, /* the longest net_close waits for nng_close */
};

enum ctx_state { CTX_RECV, CTX_CORE, CTX_SEND };

struct net_rep_ctx {
	struct net_ctx base; /* face NULL */
	struct net *net;
	nng_ctx ctx;
	nng_aio *aio;
	enum ctx_state state;
	nng_pipe pipe;    /* CTX_CORE: the request's */
	size_t sent_len;  /* CTX_SEND: the reply's bytes, when counted */
	bool counted;     /* CTX_SEND: in its pipe's pipe_out */
	struct net_ev ev; /* the request event; one per context */
	struct net_rep_ctx *all_next;
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

struct net {
	nng_socket sock;
	int efd;
	pthread_mutex_t lock; /* guards head, tail */
	struct net_ev *head, *tail;
	struct net_ev *local, *local_tail; /* the core thread's own */
	bool has_sock;
	struct net_rep_ctx *all; /* every context, for net_close */
	atomic_uint_fast32_t face_sessions;
	size_t total;
	atomic_size_t idle;
	atomic_size_t sending;
	atomic_bool closing;
	atomic_uint pipes;     /* open now */
	atomic_uint max_pipes; /* 0: no limit */
	atomic_uint_fast64_t pipes_refused;
	/* --max-queued-bytes, --max-queued-replies, --stall-timeout for
	 * nng's pipes (net_set_out_limits); out_lock guards outs */
	pthread_mutex_t out_lock;
	struct pipe_out *outs[OUT_BUCKETS];
	size_t out_bytes_max;
	unsigned out_msgs_max;
	uint32_t stall_ms;
	atomic_uint_fast64_t pipes_stalled;
};

static bool
out_over(const struct net *n, const struct pipe_out *o, unsigned times)
{
	/* one reply, however large, may take its time */
	return (o->replies >= 2 && o->bytes >= times * n->out_bytes_max) ||
	    o->replies >= times * n->out_msgs_max;
}

/* Counts a reply of `len` bytes for pipe `id`; true when the pipe is
 * now far over the marks (close it). */
static bool
out_add(struct net *n, uint32_t id, size_t len)
{
	struct pipe_out **b = &n->outs[id % OUT_BUCKETS], *o;
	bool hard;

	pthread_mutex_lock(&n->out_lock);
	for (o = *b; o != NULL && o->id != id; o = o->next)
		;
	if (o == NULL && (o = calloc(1, sizeof(*o))) != NULL) {
		o->id = id;
		o->next = *b;
		*b = o;
	}
	if (o == NULL) {
		pthread_mutex_unlock(&n->out_lock);
		return false;
	}
	o->replies++;
	o->bytes += len;
	if (o->over_ms == 0 && out_over(n, o, 1))
		o->over_ms = clock_mono_ms();
	hard = out_over(n, o, OUT_HARD);
	pthread_mutex_unlock(&n->out_lock);
	return hard;
}

/* A reply of pipe `id` left (sent, or dropped with its pipe). */
static void
out_sub(struct net *n, uint32_t id, size_t len)
{
	struct pipe_out **p = &n->outs[id % OUT_BUCKETS], *o;

	pthread_mutex_lock(&n->out_lock);
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
			o->over_ms = out_over(n, o, 1) ? clock_mono_ms() : 0;
		}
	}
	pthread_mutex_unlock(&n->out_lock);
}

const char *
net_strerror(int rc)
{
	if (rc <= -NET_NNG_ERR_BASE)
		return nng_strerror(-rc - NET_NNG_ERR_BASE);
	return strerror(-rc);
}

static void
ev_push(struct net *n, struct net_ev *ev)
{
	uint64_t one = 1;
	bool was_empty;

	ev->next = NULL;
	pthread_mutex_lock(&n->lock);
	was_empty = n->head == NULL;
	if (was_empty)
		n->head = ev;
	else
		n->tail->next = ev;
	n->tail = ev;
	pthread_mutex_unlock(&n->lock);
	if (was_empty && write(n->efd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow here; nothing to do. */
	}
}

static void
ctx_recv(struct net_rep_ctx *c)
{
	c->state = CTX_RECV;
	atomic_fetch_add(&c->net->idle, 1);
	nng_ctx_recv(c->ctx, c->aio);
}

static void
ctx_cb(void *arg)
{
	struct net_rep_ctx *c = arg;
	struct net *n = c->net;
	int rv = nng_aio_result(c->aio);

	if (c->state == CTX_SEND) {
		atomic_fetch_sub(&n->sending, 1);
		if (c->counted) {
			c->counted = false;
			out_sub(n, nng_pipe_id(c->pipe), c->sent_len);
		}
		if (rv != 0)
			nng_msg_free(nng_aio_get_msg(c->aio));
		if (rv == NNG_ECLOSED || atomic_load(&n->closing))
			return;
		ctx_recv(c);
		return;
	}
	/* CTX_RECV */
	atomic_fetch_sub(&n->idle, 1);
	if (rv != 0) {
		if (rv == NNG_ECLOSED || atomic_load(&n->closing))
			return;
		/* A failed receive (e.g. a pipe closed mid-message): retry. */
		ctx_recv(c);
		return;
	}
	c->state = CTX_CORE;
	c->ev.kind = NET_REQUEST;
	c->ev.ctx = &c->base;
	c->ev.msg = nng_aio_get_msg(c->aio);
	c->pipe = nng_msg_get_pipe(c->ev.msg);
	c->ev.session = nng_pipe_id(c->pipe);
	ev_push(n, &c->ev);
}

static struct net_ev *session_ev(
    enum net_ev_kind kind, uint32_t session, const char *peer);

/* A session opens at NNG_PIPE_EV_ADD_PRE, not _ADD_POST: nng starts a
 * pipe's receiving between the two, so a request could reach the core
 * before the open of its session (a valid token then found no session
 * to bind to). Once ADD_PRE ran, nng always runs REM_POST too, even for
 * a pipe it rejects: every open is closed. */
static void
pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct net *n = arg;
	struct net_ev *e;
	char peer[NET_PEER_MAX];

	if (atomic_load(&n->closing))
		return;
	if (ev == NNG_PIPE_EV_ADD_PRE) {
		unsigned now = atomic_fetch_add(&n->pipes, 1) + 1;
		unsigned max = atomic_load(&n->max_pipes);

		/* over the cap: refused here; REM_POST still follows */
		if (max != 0 && now > max) {
			atomic_fetch_add(&n->pipes_refused, 1);
			nng_pipe_close(p);
		}
	} else {
		atomic_fetch_sub(&n->pipes, 1);
	}
	peer[0] = '\0';
	if (ev == NNG_PIPE_EV_ADD_PRE)
		net_pipe_peer(p, peer, sizeof(peer));
	e = session_ev(
	    ev == NNG_PIPE_EV_ADD_PRE ? NET_SESSION_OPEN : NET_SESSION_CLOSE,
	    nng_pipe_id(p), peer);
	if (e == NULL) {
		/* Without the event a closed session would keep its leases
		 * until their ttr: close the pipe so the client reconnects
		 * rather than run unaccounted. */
		log_err("net", "out of memory for a session event");
		return;
	}
	ev_push(n, e);
}

static int
pool_grow(struct net *n, size_t count)
{
	for (size_t i = 0; i < count && n->total < NET_POOL_MAX; i++) {
		struct net_rep_ctx *c = calloc(1, sizeof(*c));
		int rv;

		if (c == NULL)
			return -ENOMEM;
		c->net = n;
		rv = nng_aio_alloc(&c->aio, ctx_cb, c);
		if (rv == 0) {
			rv = nng_ctx_open(&c->ctx, n->sock);
			if (rv != 0)
				nng_aio_free(c->aio);
		}
		if (rv != 0) {
			free(c);
			return -(NET_NNG_ERR_BASE + rv);
		}
		c->all_next = n->all;
		n->all = c;
		n->total++;
		ctx_recv(c);
	}
	return 0;
}

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
net_open(struct net **out, const char *url, size_t max_msg,
    const struct tlsfile *tls)
{
	struct net *n;
	int rv, rc;

	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	pthread_mutex_init(&n->lock, NULL);
	pthread_mutex_init(&n->out_lock, NULL);
	n->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n->efd < 0) {
		rc = -errno;
		goto fail_free;
	}
	if (url == NULL) {
		*out = n;
		return 0;
	}
	n->has_sock = true;
	rv = nng_rep0_open(&n->sock);
	if (rv != 0) {
		rc = -(NET_NNG_ERR_BASE + rv);
		goto fail_efd;
	}
	if ((rv = nng_socket_set_size(n->sock, NNG_OPT_RECVMAXSZ, max_msg)) ||
	    (rv = nng_pipe_notify(n->sock, NNG_PIPE_EV_ADD_PRE, pipe_cb, n)) ||
	    (rv = nng_pipe_notify(n->sock, NNG_PIPE_EV_REM_POST, pipe_cb, n))) {
		rc = -(NET_NNG_ERR_BASE + rv);
		goto fail_sock;
	}
	rc = pool_grow(n, NET_POOL_START);
	if (rc != 0)
		goto fail_sock;
	rv = listen_on(n->sock, url, tls);
	if (rv != 0) {
		rc = -(NET_NNG_ERR_BASE + rv);
		goto fail_sock;
	}
	*out = n;
	return 0;

fail_sock:
	net_close(n);
	return rc;
fail_efd:
	close(n->efd);
fail_free:
	pthread_mutex_destroy(&n->out_lock);
	pthread_mutex_destroy(&n->lock);
	free(n);
	return rc;
}

void
net_set_out_limits(
    struct net *n, size_t bytes, unsigned replies, uint32_t stall_ms)
{
	n->out_bytes_max = bytes != 0 ? bytes : SIZE_MAX / OUT_HARD;
	n->out_msgs_max = replies;
	n->stall_ms = stall_ms;
}

void
net_check_stalled(struct net *n, int64_t now)
{
	uint32_t ids[64];
	size_t nids = 0;

	if (n->out_msgs_max == 0 || n->stall_ms == 0)
		return;
	pthread_mutex_lock(&n->out_lock);
	for (size_t i = 0; i < OUT_BUCKETS && nids < 64; i++)
		for (struct pipe_out *o = n->outs[i]; o != NULL && nids < 64;
		     o = o->next)
			if (o->over_ms != 0 &&
			    now - o->over_ms >= (int64_t)n->stall_ms) {
				ids[nids++] = o->id;
				o->over_ms = 0; /* closed once */
			}
	pthread_mutex_unlock(&n->out_lock);
	for (size_t i = 0; i < nids; i++)
		if (net_close_pipe(n, ids[i]))
			atomic_fetch_add(&n->pipes_stalled, 1);
}

uint64_t
net_pipes_stalled(const struct net *n)
{
	return atomic_load(&n->pipes_stalled);
}

void
net_set_max_pipes(struct net *n, unsigned max)
{
	atomic_store(&n->max_pipes, max);
}

uint64_t
net_pipes_refused(const struct net *n)
{
	return atomic_load(&n->pipes_refused);
}

bool
net_close_pipe(struct net *n, uint32_t session)
{
	nng_pipe p = NNG_PIPE_INITIALIZER;

	if (!n->has_sock || session >= 1u << 31)
		return false;
	p.id = session;
	return nng_pipe_close(p) == 0;
}

void
net_close(struct net *n)
{
	struct net_ev *ev, *next;
	struct net_rep_ctx *c;

	if (n == NULL)
		return;
	atomic_store(&n->closing, true);
	/* If the close is abandoned, `n` stays allocated: what the close
	 * still runs (the contexts' callbacks) may reach it until the exit. */
	if (n->has_sock &&
	    !nngclose_within(n->sock, NET_CLOSE_MS, NULL, NULL)) {
		log_debug("net",
		    "the socket did not close in time; leaving it to the "
		    "exit wait_ms=%d",
		    NET_CLOSE_MS);
		return;
	}
	/* nng_aio_free waits for a running callback to finish. */
	for (c = n->all; c != NULL; c = c->all_next)
		nng_aio_stop(c->aio);
	for (ev = net_drain(n); ev != NULL; ev = next) {
		next = ev->next;
		net_ev_done(ev);
	}
	while ((c = n->all) != NULL) {
		n->all = c->all_next;
		nng_aio_free(c->aio);
		nng_ctx_close(c->ctx);
		free(c);
	}
	for (size_t i = 0; i < OUT_BUCKETS; i++)
		while (n->outs[i] != NULL) {
			struct pipe_out *o = n->outs[i];

			n->outs[i] = o->next;
			free(o);
		}
	close(n->efd);
	pthread_mutex_destroy(&n->out_lock);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

int
net_fd(const struct net *n)
{
	return n->efd;
}

struct net_ev *
net_drain(struct net *n)
{
	struct net_ev *list, *tail;
	uint64_t v;

	if (read(n->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was signalled; the list may still hold
		 * events pushed between a read and the lock. */
	}
	pthread_mutex_lock(&n->lock);
	list = n->head;
	tail = n->tail;
	n->head = n->tail = NULL;
	pthread_mutex_unlock(&n->lock);
	if (n->local != NULL) {
		if (tail != NULL)
			tail->next = n->local;
		else
			list = n->local;
		n->local = n->local_tail = NULL;
	}
	if (n->has_sock && !atomic_load(&n->closing) &&
	    atomic_load(&n->idle) < NET_POOL_LOW) {
		int rc = pool_grow(n, NET_POOL_STEP);

		if (rc != 0)
			log_warn("net", "cannot add contexts error=\"%s\"",
			    net_strerror(rc));
	}
	return list;
}

struct net_req
net_ev_take(struct net_ev *ev)
{
	struct net_req r = { ev->ctx, ev->session, ev->msg };

	ev->msg = NULL;
	net_ev_done(ev);
	return r;
}

void
net_ev_done(struct net_ev *ev)
{
	if (ev->kind == NET_REQUEST) {
		if (ev->msg != NULL)
			nng_msg_free(ev->msg);
		ev->msg = NULL;
		return; /* embedded in its context */
	}
	free(ev);
}

void
net_post(struct net *n, struct net_ev *ev)
{
	ev_push(n, ev);
}

/* A session event with room for the peer's address after it. */
static struct net_ev *
session_ev(enum net_ev_kind kind, uint32_t session, const char *peer)
{
	struct net_ev *e = calloc(1, sizeof(*e) + NET_PEER_MAX);

	if (e == NULL)
		return NULL;
	e->kind = kind;
	e->session = session;
	e->peer = (char *)(e + 1);
	if (peer != NULL)
		snprintf(e->peer, NET_PEER_MAX, "%s", peer);
	return e;
}

int
net_post_session(
    struct net *n, enum net_ev_kind kind, uint32_t session, const char *peer)
{
	struct net_ev *e = session_ev(kind, session, peer);

	if (e == NULL)
		return -ENOMEM;
	ev_push(n, e);
	return 0;
}

int
net_wake(struct net *n)
{
	return net_post_session(n, NET_WAKE, 0, NULL);
}

void
net_post_local(struct net *n, struct net_ev *ev)
{
	ev->next = NULL;
	if (n->local_tail != NULL)
		n->local_tail->next = ev;
	else
		n->local = ev;
	n->local_tail = ev;
}

int
net_post_session_local(
    struct net *n, enum net_ev_kind kind, uint32_t session, const char *peer)
{
	struct net_ev *e = session_ev(kind, session, peer);

	if (e == NULL)
		return -ENOMEM;
	net_post_local(n, e);
	return 0;
}

void
net_pipe_peer(nng_pipe p, char *out, size_t len)
{
	nng_sockaddr sa;
	char host[INET6_ADDRSTRLEN];

	out[0] = '\0';
	if (nng_pipe_id(p) <= 0 ||
	    nng_pipe_get_addr(p, NNG_OPT_REMADDR, &sa) != 0)
		return;
	switch (sa.s_family) {
	case NNG_AF_INET:
		if (inet_ntop(AF_INET, &sa.s_in.sa_addr, host, sizeof(host)))
			snprintf(out, len, "%s:%u", host,
			    (unsigned)ntohs(sa.s_in.sa_port));
		break;
	case NNG_AF_INET6:
		if (inet_ntop(AF_INET6, sa.s_in6.sa_addr, host, sizeof(host)))
			snprintf(out, len, "[%s]:%u", host,
			    (unsigned)ntohs(sa.s_in6.sa_port));
		break;
	case NNG_AF_IPC:
		snprintf(out, len, "ipc:%s", sa.s_ipc.sa_path);
		break;
	default:
		break;
	}
}

bool
net_has_local(const struct net *n)
{
	return n->local != NULL;
}

uint32_t
net_face_session(struct net *n)
{
	uint32_t id = (uint32_t)atomic_fetch_add(&n->face_sessions, 1);

	return 0x80000000u | (id & 0x7fffffffu);
}

void
net_reply(struct net *n, struct net_ctx *base, nng_msg *msg)
{
	struct net_rep_ctx *c = (struct net_rep_ctx *)base;

	if (base->face != NULL) {
		base->face->reply(base, msg);
		return;
	}
	atomic_fetch_add(&n->sending, 1);
	c->state = CTX_SEND;
	c->counted = n->out_msgs_max != 0;
	c->sent_len = nng_msg_len(msg);
	if (c->counted && out_add(n, nng_pipe_id(c->pipe), c->sent_len)) {
		atomic_fetch_add(&n->pipes_stalled, 1);
		log_debug("net",
		    "closing a connection: far over its unread replies' "
		    "limits session=%u",
		    nng_pipe_id(c->pipe));
		nng_pipe_close(c->pipe);
	}
	nng_aio_set_msg(c->aio, msg);
	nng_ctx_send(c->ctx, c->aio);
}

void
net_drop(struct net *n, struct net_ctx *base)
{
	(void)n;
	if (base->face != NULL) {
		base->face->drop(base);
		return;
	}
	ctx_recv((struct net_rep_ctx *)base);
}

void
net_close_conn(struct net *n, struct net_ctx *base)
{
	if (base->face != NULL && base->face->close != NULL) {
		base->face->close(base);
		return;
	}
	if (base->face == NULL)
		nng_pipe_close(((struct net_rep_ctx *)base)->pipe);
	net_drop(n, base);
}

bool
net_alive(const struct net_ctx *ctx)
{
	return ctx->face == NULL || ctx->face->alive == NULL ||
	    ctx->face->alive(ctx);
}

void
net_waiting(struct net_ctx *ctx)
{
	if (ctx->face != NULL && ctx->face->waiting != NULL)
		ctx->face->waiting(ctx);
}

void
net_quiesce(struct net *n, int timeout_ms)
{
	struct timespec ts = { 0, 1000000 };

	for (int i = 0; i < timeout_ms && atomic_load(&n->sending) > 0; i++)
		nanosleep(&ts, NULL);
}

void
net_counts(const struct net *n, size_t *total, size_t *idle)
{
	*total = n->total;
	*idle = atomic_load(&n->idle);
}
