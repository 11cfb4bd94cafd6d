/* face - what every face of sluiced implements, and how the core answers
 * through it. A face is a way in for clients: nng's rep socket
 * (face/nng.c), SP over TCP on the core thread (face/sp.c), SP over nng's
 * byte streams (face/stream.c), the beanstalk protocol (face/beanstalk/),
 * HTTP (face/http/). Each turns what its clients send into requests
 * posted to the core through the event queue (face/events.h), each with
 * a context (struct net_ctx) embedded in the face's own request state;
 * the core answers every request alike, through the context's face:
 * net_reply, net_drop, net_close_conn. No face is special to the core.
 *
 * Errors of the faces that open nng listeners (nng.c, stream.c, the HTTP
 * face) are -errno, or an nng error as -(NET_NNG_ERR_BASE + code):
 * net_strerror names both. */
#ifndef SLUICE_SERVER_FACE_FACE_H
#define SLUICE_SERVER_FACE_FACE_H

#include <stdbool.h>
#include <string.h>

#include <nng/nng.h>

struct net;
struct net_ctx;

/* A face's answers to the core, called on the core thread. */
struct net_face {
	/* The core's answer; the face takes `msg`. */
	void (*reply)(struct net_ctx *ctx, nng_msg *msg);
	/* The core gives up the request without an answer. */
	void (*drop)(struct net_ctx *ctx);
	/* The other end's address for log lines ("127.0.0.1:5000"), or
	 * NULL when the face cannot tell (then the core asks nng for the
	 * pipe of the request's message, face_nng_pipe_peer). Optional. */
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
	 * wake the core (net_wake), which then drops it. Optional. */
	void (*waiting)(struct net_ctx *ctx);
};

/* Where a request is answered: embedded in the face's request state. */
struct net_ctx {
	const struct net_face *face;
};

enum {
	/* a peer's address, for log lines */
	NET_PEER_MAX = 64,
	/* nng errors as -(NET_NNG_ERR_BASE + code) */
	NET_NNG_ERR_BASE = 1000,
};

/* Answers the request held by `ctx` with `msg`; the face takes `msg` in
 * every case. (`n` is not used.) */
static inline void
net_reply(struct net *n, struct net_ctx *ctx, nng_msg *msg)
{
	(void)n; /* face.h: the queue is not needed */
	ctx->face->reply(ctx, msg);
}

/* Gives up a request without an answer (its session is gone). */
static inline void
net_drop(struct net *n, struct net_ctx *ctx)
{
	(void)n; /* face.h: the queue is not needed */
	ctx->face->drop(ctx);
}

/* Gives up a request without an answer and closes its connection: the
 * other end learns nothing more. Its session's NET_SESSION_CLOSE
 * follows. */
static inline void
net_close_conn(struct net *n, struct net_ctx *ctx)
{
	(void)n; /* face.h: the queue is not needed */
	if (ctx->face->close != NULL)
		ctx->face->close(ctx);
	else
		ctx->face->drop(ctx);
}

/* Whether an answer to `ctx` can still reach the other end. */
static inline bool
net_alive(const struct net_ctx *ctx)
{
	return ctx->face->alive == NULL || ctx->face->alive(ctx);
}

/* Tells `ctx`'s face that its request waits (net_face.waiting). */
static inline void
net_waiting(struct net_ctx *ctx)
{
	if (ctx->face->waiting != NULL)
		ctx->face->waiting(ctx);
}

/* Names an error of a face's opening: -errno or an nng error. */
static inline const char *
net_strerror(int rc)
{
	if (rc <= -NET_NNG_ERR_BASE)
		return nng_strerror(-rc - NET_NNG_ERR_BASE);
	return strerror(-rc);
}

#endif
