/* face - what every face of sluiced implements, and how the core answers
 * through it. A face is a way in for clients: nng's rep socket
 * (face/nng.c), SP over TCP on the core thread (face/sp.c), SP over nng's
 * byte streams (face/stream.c), the beanstalk protocol (face/beanstalk/),
 * HTTP (face/http/). Each turns what its clients send into requests
 * posted to the core through the event queue (face/events.h), each with
 * a context (struct face_ctx) embedded in the face's own request state;
 * the core answers every request alike, through the context's face:
 * face_ctx_reply, face_ctx_drop, face_ctx_close. No face is special to the
 * core.
 *
 * Errors of the faces that open nng listeners (nng.c, stream.c, the HTTP
 * face) are -errno, or an nng error as -(FACE_NNG_ERR_BASE + code):
 * face_strerror names both. */
#ifndef SLUICE_SERVER_FACE_FACE_H
#define SLUICE_SERVER_FACE_FACE_H

#include <stdbool.h>
#include <string.h>

#include <nng/nng.h>

struct events;
struct face_ctx;

/* A face's answers to the core, called on the core thread. */
struct face {
	/* The core's answer; the face takes `msg`. */
	void (*reply)(struct face_ctx *ctx, nng_msg *msg);
	/* The core gives up the request without an answer. */
	void (*drop)(struct face_ctx *ctx);
	/* The other end's address for log lines ("127.0.0.1:5000"), or
	 * NULL when the face cannot tell (then the core asks nng for the
	 * pipe of the request's message, face_nng_pipe_peer). Optional. */
	const char *(*peer)(const struct face_ctx *ctx);
	/* Whether an answer can still reach the other end (false once its
	 * connection closed). Optional: without it, an answer is deliverable
	 * while its session is open. */
	bool (*alive)(const struct face_ctx *ctx);
	/* The core gives up the request without an answer and closes its
	 * connection. Optional: without it, drop. */
	void (*close)(struct face_ctx *ctx);
	/* The request waits (a take with nothing to take yet): the face may
	 * watch its connection, say through `alive` once it closed, and
	 * wake the core (events_wake), which then drops it. Optional. */
	void (*waiting)(struct face_ctx *ctx);
	/* Leases taken through this face return their task ready at once
	 * when lost (ttr, the connection closed), unless the tube has its
	 * own lost-lease setting: beanstalkd's rule, which the beanstalk
	 * face keeps. false: the server's --lost-lease-retry. */
	bool lost_lease_ready;
	/* Leases handed out or touched through this face count their ttr
	 * from the moment the answer leaves (queue_lease_restart), not from
	 * the decision, as beanstalkd's do; the beanstalk face's. */
	bool restart_leases;
};

/* Where a request is answered: embedded in the face's request state. */
struct face_ctx {
	const struct face *face;
};

enum {
	/* a peer's address, for log lines */
	FACE_PEER_MAX = 64,
	/* nng errors as -(FACE_NNG_ERR_BASE + code) */
	FACE_NNG_ERR_BASE = 1000,
};

/* Answers the request held by `ctx` with `msg`; the face takes `msg` in
 * every case. */
static inline void
face_ctx_reply(struct face_ctx *ctx, nng_msg *msg)
{
	ctx->face->reply(ctx, msg);
}

/* Gives up a request without an answer (its session is gone). */
static inline void
face_ctx_drop(struct face_ctx *ctx)
{
	ctx->face->drop(ctx);
}

/* Gives up a request without an answer and closes its connection: the
 * other end learns nothing more. Its session's EVENT_SESSION_CLOSE
 * follows. */
static inline void
face_ctx_close(struct face_ctx *ctx)
{
	if (ctx->face->close != NULL)
		ctx->face->close(ctx);
	else
		ctx->face->drop(ctx);
}

/* Whether an answer to `ctx` can still reach the other end. */
static inline bool
face_ctx_alive(const struct face_ctx *ctx)
{
	return ctx->face->alive == NULL || ctx->face->alive(ctx);
}

/* Tells `ctx`'s face that its request waits (face.waiting). */
static inline void
face_ctx_waiting(struct face_ctx *ctx)
{
	if (ctx->face->waiting != NULL)
		ctx->face->waiting(ctx);
}

/* Names an error of a face's opening: -errno or an nng error. */
static inline const char *
face_strerror(int rc)
{
	if (rc <= -FACE_NNG_ERR_BASE)
		return nng_strerror(-rc - FACE_NNG_ERR_BASE);
	return strerror(-rc);
}

#endif
