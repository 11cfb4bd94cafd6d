/* events - the queue the faces fill and the core drains (events.h).
 *
 * Two lists: one shared with the faces' threads (a mutex-protected FIFO
 * whose first event writes the eventfd the core polls), and one of the
 * core thread's own faces (no lock, no wake-up: the loop does not sleep
 * while it holds anything, events_has_local). A drain returns the shared
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

struct events {
	int efd;
	pthread_mutex_t lock; /* guards head, tail */
	struct event *head, *tail;
	struct event *local, *local_tail; /* the core thread's own */
	atomic_uint_fast32_t face_sessions;
	void (*on_drain)(void *arg);
	void *on_drain_arg;
	bool quiet; /* events_polled: the eventfd was not readable */
};

int
events_new(struct events **out)
{
	struct events *n = calloc(1, sizeof(*n));
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
events_free(struct events *n)
{
	struct event *ev, *next;

	if (n == NULL)
		return;
	n->on_drain = NULL;
	for (ev = events_drain(n); ev != NULL; ev = next) {
		next = ev->next;
		event_done(ev);
	}
	close(n->efd);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

void
events_on_drain(struct events *n, void (*fn)(void *arg), void *arg)
{
	n->on_drain = fn;
	n->on_drain_arg = arg;
}

int
events_fd(const struct events *n)
{
	return n->efd;
}

static void
push(struct events *n, struct event *ev)
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

struct event *
events_drain(struct events *n)
{
	struct event *list, *tail;
	uint64_t v;

	if (!n->quiet && read(n->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was signalled; the list may still hold
		 * events pushed between a read and the lock. */
	}
	n->quiet = false;
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

void
events_polled(struct events *n, bool readable)
{
	n->quiet = !readable;
}

struct event_req
event_take(struct event *ev)
{
	struct event_req r = { ev->ctx, ev->session, ev->msg };

	ev->msg = NULL;
	event_done(ev);
	return r;
}

void
event_done(struct event *ev)
{
	if (ev->kind == EVENT_REQUEST) {
		if (ev->msg != NULL)
			nng_msg_free(ev->msg);
		ev->msg = NULL;
		return; /* embedded in its face's request */
	}
	free(ev);
}

void
events_post(struct events *n, struct event *ev)
{
	push(n, ev);
}

/* A session event, posted from any thread or (`local`) the core's. */
static int
post_session(struct events *n, enum event_kind kind, uint32_t session,
    const char *peer, bool local)
{
	struct event *e = calloc(1, sizeof(*e) + FACE_PEER_MAX);

	if (e == NULL)
		return -ENOMEM;
	e->kind = kind;
	e->session = session;
	e->peer = (char *)(e + 1); /* room for the peer's address after it */
	if (peer != NULL)
		snprintf(e->peer, FACE_PEER_MAX, "%s", peer);
	if (local)
		events_post_local(n, e);
	else
		push(n, e);
	return 0;
}

int
events_post_session(
    struct events *n, enum event_kind kind, uint32_t session, const char *peer)
{
	return post_session(n, kind, session, peer, false);
}

int
events_wake(struct events *n)
{
	return events_post_session(n, EVENT_WAKE, 0, NULL);
}

void
events_post_local(struct events *n, struct event *ev)
{
	ev->next = NULL;
	if (n->local_tail != NULL)
		n->local_tail->next = ev;
	else
		n->local = ev;
	n->local_tail = ev;
}

int
events_post_session_local(
    struct events *n, enum event_kind kind, uint32_t session, const char *peer)
{
	return post_session(n, kind, session, peer, true);
}

bool
events_has_local(const struct events *n)
{
	return n->local != NULL;
}

uint32_t
events_session(struct events *n)
{
	uint32_t id = (uint32_t)atomic_fetch_add(&n->face_sessions, 1);

	return 0x80000000u | (id & 0x7fffffffu);
}
