/* events - the queue the faces fill and the core drains (events.h).
 *
 * Two lists: one shared with the faces' threads (a mutex-protected FIFO
 * whose first event writes the eventfd the core polls), and one of the
 * core thread's own faces (no lock, no wake-up: the loop does not sleep
 * while it holds anything, net_has_local). A drain returns the shared
 * list, then the local one. A request's event is embedded in its face's
 * request state and only its message is freed here; a session's event is
 * allocated here with room for the peer's address after it. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "server/face/events.h"
#include "server/face/face.h"

struct net {
	int efd;
	pthread_mutex_t lock; /* guards head, tail */
	struct net_ev *head, *tail;
	struct net_ev *local, *local_tail; /* the core thread's own */
	atomic_uint_fast32_t face_sessions;
	void (*on_drain)(void *arg);
	void *on_drain_arg;
};

int
net_new(struct net **out)
{
	struct net *n = calloc(1, sizeof(*n));
	int rc;

	if (n == NULL)
		return -ENOMEM;
	n->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n->efd < 0) {
		rc = -errno;
		free(n);
		return rc;
	}
	pthread_mutex_init(&n->lock, NULL);
	*out = n;
	return 0;
}

void
net_free(struct net *n)
{
	struct net_ev *ev, *next;

	if (n == NULL)
		return;
	n->on_drain = NULL;
	for (ev = net_drain(n); ev != NULL; ev = next) {
		next = ev->next;
		net_ev_done(ev);
	}
	close(n->efd);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

void
net_on_drain(struct net *n, void (*fn)(void *arg), void *arg)
{
	n->on_drain = fn;
	n->on_drain_arg = arg;
}

int
net_fd(const struct net *n)
{
	return n->efd;
}

static void
push(struct net *n, struct net_ev *ev)
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
	if (n->on_drain != NULL)
		n->on_drain(n->on_drain_arg);
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
		return; /* embedded in its face's request */
	}
	free(ev);
}

void
net_post(struct net *n, struct net_ev *ev)
{
	push(n, ev);
}

/* A session event, posted from any thread or (`local`) the core's. */
static int
post_session(struct net *n, enum net_ev_kind kind, uint32_t session,
    const char *peer, bool local)
{
	struct net_ev *e = calloc(1, sizeof(*e) + NET_PEER_MAX);

	if (e == NULL)
		return -ENOMEM;
	e->kind = kind;
	e->session = session;
	e->peer = (char *)(e + 1); /* room for the peer's address after it */
	if (peer != NULL)
		snprintf(e->peer, NET_PEER_MAX, "%s", peer);
	if (local)
		net_post_local(n, e);
	else
		push(n, e);
	return 0;
}

int
net_post_session(
    struct net *n, enum net_ev_kind kind, uint32_t session, const char *peer)
{
	return post_session(n, kind, session, peer, false);
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
	return post_session(n, kind, session, peer, true);
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
