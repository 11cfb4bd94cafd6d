/* events - the queue between the faces and the core: every face posts
 * its clients' requests and its sessions' opening and closing here, and
 * the core's loop, the one thread that makes decisions, drains it.
 *
 * Faces that run on other threads (nng's, face/nng.c and face/stream.c;
 * the HTTP server's) post under a lock and wake the core through an
 * eventfd; faces that run on the core thread itself (face/sp.c, the
 * beanstalk face, over face/conn.c) post locally, without either. The
 * core polls net_fd(), takes the waiting events with net_drain(), and
 * answers each request through its context's face (face/face.h), in any
 * order and at any later time.
 *
 * A session is one client connection: NET_SESSION_OPEN arrives before
 * any request of it, NET_SESSION_CLOSE after its last one. */
#ifndef SLUICE_SERVER_FACE_EVENTS_H
#define SLUICE_SERVER_FACE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

struct net;
struct net_ctx;

enum net_ev_kind {
	NET_REQUEST,
	NET_SESSION_OPEN,
	NET_SESSION_CLOSE,
	NET_WAKE, /* nothing but a turn of the core's loop (net_wake) */
};

struct net_ev {
	struct net_ev *next;
	enum net_ev_kind kind;
	uint32_t session;    /* the connection's */
	struct net_ctx *ctx; /* NET_REQUEST: where to answer */
	nng_msg *msg;        /* NET_REQUEST: the request, owned by the core */
	char *peer; /* NET_SESSION_OPEN: the other end's address ("" when
	             * unknown), in the same allocation as the event */
};

/* An empty queue. Returns 0 or -errno. */
int net_new(struct net **out);

/* Frees the queue; events not yet drained are discarded (their messages
 * freed). Call once no face posts any more, and before the faces whose
 * requests it may hold are freed (their request events are theirs).
 * Accepts NULL. */
void net_free(struct net *n);

/* Calls `fn(arg)` on the core thread at each net_drain (the nng face
 * grows its pool of contexts there). One hook; NULL removes it. */
void net_on_drain(struct net *n, void (*fn)(void *arg), void *arg);

/* Readable (eventfd) while events are waiting. */
int net_fd(const struct net *n);

/* Takes every waiting event, oldest first, as a list linked through
 * `next`. Each event belongs to the caller until net_ev_done(). */
struct net_ev *net_drain(struct net *n);

/* Queues an event from a face, from any thread. A NET_REQUEST event
 * stays the face's (embed it beside the context); its msg becomes the
 * core's. */
void net_post(struct net *n, struct net_ev *ev);

/* Queues a session event from a face (allocated here; the core frees
 * it), with the other end's address for an open (`peer` NULL: not
 * known). Returns 0 or -ENOMEM. */
int net_post_session(
    struct net *n, enum net_ev_kind kind, uint32_t session, const char *peer);

/* Wakes the core for a turn of its loop, from any thread: a face's
 * waiting request lost its client (net_face.waiting). Returns 0 or
 * -ENOMEM. */
int net_wake(struct net *n);

/* net_post and net_post_session for the faces that run on the core
 * thread itself (face/conn.h): no lock, no wake-up; net_drain returns
 * these after the others. One face posts all of its events one way, so
 * a session's events keep their order. Core thread only. */
void net_post_local(struct net *n, struct net_ev *ev);
int net_post_session_local(
    struct net *n, enum net_ev_kind kind, uint32_t session, const char *peer);

/* Whether events posted locally wait: the loop must not sleep. */
bool net_has_local(const struct net *n);

/* A session id for a face's connection, distinct from every nng pipe's
 * id (those are below 2^31; the nng face's sessions are its pipes).
 * Thread-safe. */
uint32_t net_face_session(struct net *n);

/* A request taken out of its event. */
struct net_req {
	struct net_ctx *ctx; /* where to answer */
	uint32_t session;
	nng_msg *msg; /* the caller's to free */
};

/* Takes a NET_REQUEST event apart and ends it. Handle the request from
 * the result, never from the event: its face may reuse the event as
 * soon as the request is answered. */
struct net_req net_ev_take(struct net_ev *ev);

/* Frees an event (a request's msg too, unless the caller took it and set
 * ev->msg to NULL). A request's context stays busy until it is answered. */
void net_ev_done(struct net_ev *ev);

#endif
