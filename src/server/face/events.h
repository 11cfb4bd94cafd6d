/* events - the queue between the faces and the core: every face posts
 * its clients' requests and its sessions' opening and closing here, and
 * the core's loop, the one thread that makes decisions, drains it.
 *
 * Faces that run on other threads (nng's, face/nng.c and face/stream.c;
 * the HTTP server's) post under a lock and wake the core through an
 * eventfd; faces that run on the core thread itself (face/sp.c, the
 * beanstalk face, over face/conn.c) post locally, without either. The
 * core polls events_fd(), takes the waiting events with events_drain(), and
 * answers each request through its context's face (face/face.h), in any
 * order and at any later time.
 *
 * A session is one client connection: EVENT_SESSION_OPEN arrives before
 * any request of it, EVENT_SESSION_CLOSE after its last one. */
#ifndef SLUICE_SERVER_FACE_EVENTS_H
#define SLUICE_SERVER_FACE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

struct events;
struct face_ctx;

enum event_kind {
	EVENT_REQUEST,
	EVENT_SESSION_OPEN,
	EVENT_SESSION_CLOSE,
	EVENT_WAKE, /* nothing but a turn of the core's loop (events_wake) */
};

struct event {
	struct event *next;
	enum event_kind kind;
	uint32_t session;     /* the connection's */
	struct face_ctx *ctx; /* EVENT_REQUEST: where to answer */
	nng_msg *msg; /* EVENT_REQUEST: the request, owned by the core */
	char *peer;   /* EVENT_SESSION_OPEN: the other end's address ("" when
	               * unknown), in the same allocation as the event */
};

/* An empty queue. Returns 0 or -errno. */
int events_new(struct events **out);

/* Frees the queue; events not yet drained are discarded (their messages
 * freed). Call once no face posts any more, and before the faces whose
 * requests it may hold are freed (their request events are theirs).
 * Accepts NULL. */
void events_free(struct events *n);

/* Calls `fn(arg)` on the core thread at each events_drain (the nng face
 * grows its pool of contexts there). One hook; NULL removes it. */
void events_on_drain(struct events *n, void (*fn)(void *arg), void *arg);

/* Readable (eventfd) while events are waiting. */
int events_fd(const struct events *n);

/* Takes every waiting event, oldest first, as a list linked through
 * `next`. Each event belongs to the caller until event_done(). */
struct event *events_drain(struct events *n);

/* Tells the next events_drain what the loop's poll saw of events_fd():
 * not readable, the drain does not read the eventfd (a system call that
 * would find nothing); it still takes what was posted since, and an
 * eventfd signalled after the poll wakes the next one. Core thread. */
void events_polled(struct events *n, bool readable);

/* Queues an event from a face, from any thread. An EVENT_REQUEST event
 * stays the face's (embed it beside the context); its msg becomes the
 * core's. */
void events_post(struct events *n, struct event *ev);

/* Queues a session event from a face (allocated here; the core frees
 * it), with the other end's address for an open (`peer` NULL: not
 * known). Returns 0 or -ENOMEM. */
int events_post_session(
    struct events *n, enum event_kind kind, uint32_t session, const char *peer);

/* Wakes the core for a turn of its loop, from any thread: a face's
 * waiting request lost its client (face.waiting). Returns 0 or
 * -ENOMEM. */
int events_wake(struct events *n);

/* events_post and events_post_session for the faces that run on the core
 * thread itself (face/conn.h): no lock, no wake-up; events_drain returns
 * these after the others. One face posts all of its events one way, so
 * a session's events keep their order. Core thread only. */
void events_post_local(struct events *n, struct event *ev);
int events_post_session_local(
    struct events *n, enum event_kind kind, uint32_t session, const char *peer);

/* Whether events posted locally wait: the loop must not sleep. */
bool events_has_local(const struct events *n);

/* A session id for a face's connection, distinct from every nng pipe's
 * id (those are below 2^31; the nng face's sessions are its pipes).
 * Thread-safe. */
uint32_t events_session(struct events *n);

/* A request taken out of its event. */
struct event_req {
	struct face_ctx *ctx; /* where to answer */
	uint32_t session;
	nng_msg *msg; /* the caller's to free */
};

/* Takes a EVENT_REQUEST event apart and ends it. Handle the request from
 * the result, never from the event: its face may reuse the event as
 * soon as the request is answered. */
struct event_req event_take(struct event *ev);

/* Frees an event (a request's msg too, unless the caller took it and set
 * ev->msg to NULL). A request's context stays busy until it is answered. */
void event_done(struct event *ev);

#endif
