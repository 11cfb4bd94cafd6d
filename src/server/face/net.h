/* net - the client face of sluiced: an nng rep0 socket served through a
 * pool of contexts that grows with the number of requests in progress, so
 * hundreds of clients (blocked takes included) are served at once.
 *
 * nng's threads only receive, send and queue events; every decision is
 * made by the one thread that owns the queue. That thread polls net_fd(),
 * takes the waiting events with net_drain(), and answers each request with
 * net_reply() (or net_drop()), in any order and at any later time.
 *
 * A session is an nng pipe: NET_SESSION_OPEN arrives before any request
 * from that pipe, NET_SESSION_CLOSE after its last one. */
#ifndef SLUICE_SERVER_FACE_NET_H
#define SLUICE_SERVER_FACE_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

struct net;
struct net_ctx;
struct tlsfile;

/* Where a request is answered. net.c's own contexts have no face; another
 * face of the server (the beanstalk listener, the HTTP server) embeds a
 * net_ctx in its own request state, sets `face`, and posts its requests
 * to the core with net_post(): the core answers every face alike. */
struct net_face {
	/* The core's answer; the face takes `msg`. Called on the core
	 * thread. */
	void (*reply)(struct net_ctx *ctx, nng_msg *msg);
	/* The core gives up the request without an answer. */
	void (*drop)(struct net_ctx *ctx);
	/* The other end's address for log lines ("127.0.0.1:5000"), or
	 * NULL when the face cannot tell. Optional. */
	const char *(*peer)(const struct net_ctx *ctx);
	/* Whether an answer can still reach the other end (false once its
	 * connection closed). Optional: without it, an answer is deliverable
	 * while its session is open. */
	bool (*alive)(const struct net_ctx *ctx);
	/* The core gives up the request without an answer and closes its
	 * connection. Optional: without it, drop. */
	void (*close)(struct net_ctx *ctx);
	/* The request waits (a take with nothing to take yet): the face may
	 * watch its connection, say through `alive` once it closed, and
	 * wake the core (net_wake), which then drops it. Optional. Called
	 * on the core thread. */
	void (*waiting)(struct net_ctx *ctx);
};

struct net_ctx {
	const struct net_face *face; /* NULL: one of net.c's contexts */
};

enum net_ev_kind {
	NET_REQUEST,
	NET_SESSION_OPEN,
	NET_SESSION_CLOSE,
	NET_WAKE, /* nothing but a turn of the core's loop (net_wake) */
};

enum { NET_PEER_MAX = 64 };

struct net_ev {
	struct net_ev *next;
	enum net_ev_kind kind;
	uint32_t session;    /* the pipe's id */
	struct net_ctx *ctx; /* NET_REQUEST: where to answer */
	nng_msg *msg;        /* NET_REQUEST: the request, owned by the core */
	char *peer; /* NET_SESSION_OPEN: the other end's address ("" when
	             * unknown), in the same allocation as the event */
};

/* Listens on `url` ("tcp://127.0.0.1:7711", "ipc:///path", ...). Messages
 * longer than `max_msg` are refused by the transport (the connection is
 * closed); enforce the protocol's own limit below that. A TLS URL
 * (tls+tcp://) is served with `tls`'s certificate (util/tlsfile.h; NULL
 * only for other URLs). With `url` NULL, no socket: only the event queue,
 * for the other faces. Returns 0, -errno, or an nng error as -(1000 +
 * code) (see net_strerror). */
int net_open(struct net **out, const char *url, size_t max_msg,
    const struct tlsfile *tls);

/* At most `max` pipes (connections) at once (0: no limit): one more is
 * closed as it arrives, and counted (net_pipes_refused). Call right
 * after net_open. */
void net_set_max_pipes(struct net *n, unsigned max);
uint64_t net_pipes_refused(const struct net *n);

/* The unread replies' bounds of the pipes (docs/security.md): nng
 * cannot stop reading one pipe, so a pipe whose replies not yet sent
 * reach `bytes` (two replies or more) or `replies` and stay so, no reply
 * sent, for `stall_ms` is closed by net_check_stalled (call it once a
 * second from the core thread); one OUT_HARD times over is closed at
 * once. `replies` 0: no bound. Call right after net_open. */
void net_set_out_limits(
    struct net *n, size_t bytes, unsigned replies, uint32_t stall_ms);
void net_check_stalled(struct net *n, int64_t now);
uint64_t net_pipes_stalled(const struct net *n);

/* Closes the nng pipe of `session` (its NET_SESSION_CLOSE follows).
 * True when it was open; false when it is not one of net.c's or is
 * closed already. Any thread. */
bool net_close_pipe(struct net *n, uint32_t session);

/* Stops listening, aborts everything in flight and frees it all. Events
 * not yet drained are discarded (their messages freed). Waits at most 3 s
 * for nng to close the socket; after that it returns with the socket
 * (and the pool) left to the process's exit. */
void net_close(struct net *n);

/* Readable (eventfd) while events are waiting. */
int net_fd(const struct net *n);

/* Takes every waiting event, oldest first, as a list linked through
 * `next`. Each event belongs to the caller until net_ev_done(). */
struct net_ev *net_drain(struct net *n);

/* Queues an event from another face, from any thread. A NET_REQUEST
 * event stays the face's (embed it beside the context); its msg becomes
 * the core's. */
void net_post(struct net *n, struct net_ev *ev);

/* Queues a session event from another face (allocated here; the core
 * frees it), with the other end's address for an open (`peer` NULL: not
 * known). Returns 0 or -ENOMEM. */
int net_post_session(
    struct net *n, enum net_ev_kind kind, uint32_t session, const char *peer);

/* Wakes the core for a turn of its loop, from any thread: a face's
 * waiting request lost its client (net_face.waiting). Returns 0 or
 * -ENOMEM. */
int net_wake(struct net *n);

/* net_post and net_post_session for the faces that run on the core
 * thread itself (server/conn.h): no lock, no wake-up; net_drain returns
 * these after the others. One face posts all of its events one way, so
 * a session's events keep their order. Core thread only. */
void net_post_local(struct net *n, struct net_ev *ev);
int net_post_session_local(
    struct net *n, enum net_ev_kind kind, uint32_t session, const char *peer);

/* The remote address of an nng pipe ("127.0.0.1:5000", "[::1]:5000",
 * "ipc:/path") into out; "" when it cannot be told. */
void net_pipe_peer(nng_pipe p, char *out, size_t len);

/* Whether events posted locally wait: the loop must not sleep. */
bool net_has_local(const struct net *n);

/* A session id for another face's connection, distinct from every nng
 * pipe's id (those are below 2^31). Thread-safe. */
uint32_t net_face_session(struct net *n);

/* A request taken out of its event. */
struct net_req {
	struct net_ctx *ctx; /* where to answer */
	uint32_t session;
	nng_msg *msg; /* the caller's to free */
};

/* Takes a NET_REQUEST event apart and ends it. Handle the request from
 * the result, never from the event: its context (or another face) may
 * reuse the event as soon as the request is answered. */
struct net_req net_ev_take(struct net_ev *ev);

/* Frees an event (a request's msg too, unless the caller took it and set
 * ev->msg to NULL). A request's context stays busy until it is answered. */
void net_ev_done(struct net_ev *ev);

/* Answers the request held by `ctx` with `msg`; net takes `msg` in every
 * case. The context then receives again. */
void net_reply(struct net *n, struct net_ctx *ctx, nng_msg *msg);

/* Gives up a request without an answer (its session is gone). */
void net_drop(struct net *n, struct net_ctx *ctx);

/* Gives up a request without an answer and closes its connection (an
 * nng pipe, or its face's): the other end learns nothing more. Its
 * session's NET_SESSION_CLOSE follows. */
void net_close_conn(struct net *n, struct net_ctx *ctx);

/* Whether an answer to `ctx` can still reach the other end (face->alive;
 * an nng context's: true, nng drops an answer to a closed pipe). */
bool net_alive(const struct net_ctx *ctx);

/* Tells `ctx`'s face that its request waits (net_face.waiting). */
void net_waiting(struct net_ctx *ctx);

/* Waits up to `timeout_ms` until every answer given to net_reply has
 * been handed to the transport (shutdown). */
void net_quiesce(struct net *n, int timeout_ms);

/* Contexts in the pool, and how many are waiting for a request. */
void net_counts(const struct net *n, size_t *total, size_t *idle);

/* Names an error returned by net_open. */
const char *net_strerror(int rc);

#endif
