/* conn - the stream sockets of the faces that run on the core thread (the
 * SP-over-TCP face for nng clients, the beanstalk face): listeners and
 * connections on one epoll instance that the core's loop polls, read and
 * written with non-blocking system calls on that same thread (a turn's
 * replies to many connections through one io_uring_enter). No
 * other thread touches them, so a request crosses no thread between its
 * bytes arriving and its reply leaving.
 *
 * The loop's part: poll conns_fd(); conns_run() accepts and reads, and
 * hands the bytes to each connection's face (face->input); at the end of
 * the turn conns_flush() writes what the faces queued with conn_write().
 *
 * A connection's life: accepted → face->open → input ... → closed (the
 * peer went away, a read or write failed, or conn_close) → face->closed
 * once → freed (face->free) once it is closed and the face holds no
 * reference (conn_hold/conn_release: requests the core still holds). A
 * connection is never freed inside a call into its face.
 *
 * Bounds (struct conns_limits; docs/security.md): connections per face
 * and, of those, not yet ready (the face's handshake, and under --auth
 * the token, not done: the oldest gives way to a new one); time to get
 * ready, to complete a unit of input once begun, to stay idle, and to
 * take output back below the high-water mark; the output a connection
 * may have unsent, in bytes and replies, past which its face stops
 * reading its requests. Input buffers exist only while a unit is
 * incomplete: a read lands in one buffer shared by every connection, and
 * only what the face leaves unparsed is copied to the connection's own.
 * When accept() runs out of descriptors (EMFILE, ENFILE), a descriptor
 * kept in reserve is given up to accept and close what waits, and the
 * listener pauses for a moment instead of spinning; each refusal is
 * counted (conns_stats) and logged at most once per interval. */
#ifndef SLUICE_SERVER_FACE_CONN_H
#define SLUICE_SERVER_FACE_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

struct conns;
struct conn;

struct conn_face {
	const char *name; /* for log lines: "sp", "beanstalk" */
	/* A connection was accepted: set c->data; it may queue a greeting
	 * (conn_write) once nothing can fail any more. Returns 0, or -errno
	 * to close it at once (face->free is then not called). */
	int (*open)(struct conn *c, void *arg);
	/* Bytes arrived (conn_in), or output drained below the high mark:
	 * parse what can be, conn_consume() what was parsed. */
	void (*input)(struct conn *c);
	/* The connection closed; called once. Output is dropped from now. */
	void (*closed)(struct conn *c);
	/* The last call: free c->data. */
	void (*free)(struct conn *c);
	/* Whether the connection is busy although nothing moves on it (a
	 * request in the core, a parked take, a lease its session holds):
	 * the idle timeout spares it. Optional: without it, never busy. */
	bool (*busy)(const struct conn *c);
};

/* The bounds every connection of a set obeys; 0 means none. */
struct conns_limits {
	unsigned max_conns;    /* open connections per face */
	unsigned max_unready;  /* of those, not yet ready (conn_ready) */
	uint32_t handshake_ms; /* accepted → ready */
	uint32_t frame_ms;     /* a unit of input begun → complete */
	uint32_t idle_ms;      /* nothing in or out, not busy */
	uint32_t stall_ms;     /* over the output mark with nothing taken */
	size_t out_bytes;      /* output mark: unsent bytes */
	unsigned out_msgs;     /* output mark: unsent replies */
};

/* Why connections were refused or closed by the bounds, since start. */
struct conns_stats {
	uint64_t open;             /* connections open now */
	uint64_t accept_exhausted; /* accept() out of descriptors */
	uint64_t refused_fds;      /* accepted and closed at once for it */
	uint64_t refused_full;     /* accepted and closed: max_conns */
	uint64_t evicted_unready;  /* oldest not ready, for a new one */
	uint64_t closed_handshake; /* handshake_ms passed */
	uint64_t closed_frame;     /* frame_ms passed */
	uint64_t closed_idle;      /* idle_ms passed */
	uint64_t closed_stalled;   /* stall_ms passed over the mark */
	uint64_t closed_refused;   /* input the protocol does not allow at
	                            * that point (conn_refuse) */
};

struct conn {
	struct conns *cs;
	const struct conn_face *face;
	void *data; /* the face's */
	int fd;
	char peer[64]; /* "ADDR:PORT" of the other end, for log lines */

	/* Input: bytes [in_off, in_len) of `in` wait to be parsed. Reading
	 * stops while in_len - in_off >= in_max (the face sets in_max to
	 * the largest unit it must see whole). */
	uint8_t *in;
	size_t in_off, in_len, in_cap, in_max;

	/* Output: bytes [out_off, out.len) of `out` wait to be written. */
	struct buf out;
	size_t out_off;

	bool in_shared;             /* `in` is the set's read buffer */
	int64_t born_ms;            /* accepted (monotonic ms) */
	int64_t active_ms;          /* a byte read or written */
	int64_t sent_ms;            /* a byte written, or the mark crossed */
	int64_t part_ms;            /* a unit began and is incomplete; 0 */
	size_t part_len;            /* unparsed bytes when part_ms was set */
	unsigned out_msgs;          /* replies queued since output was empty */
	bool ready;                 /* conn_ready */
	struct conn *unext, *uprev; /* the listener's not-ready list */

	unsigned holds;           /* references the face keeps (conn_hold) */
	bool closed;              /* no more input; output dropped */
	bool close_sent;          /* close once the output is written */
	bool queued;              /* on the flush list */
	bool reading;             /* EPOLLIN is armed */
	bool writing;             /* EPOLLOUT is armed */
	bool freed_later;         /* on the free list */
	struct conn *next, *prev; /* every connection */
	struct conn *qnext;       /* the flush list */
	struct conn *fnext;       /* the free list */
	struct conn_listener *listen; /* accepted on */
};

/* Opens an empty set. Returns 0 or -errno. */
int conns_open(struct conns **out);

/* Closes every listener and connection and frees the set, the faces'
 * free included; face->closed is not called (the core is gone). Call
 * after the core stopped. Accepts NULL. */
void conns_close(struct conns *cs);

/* Sets the bounds (all 0 until then). */
void conns_set_limits(struct conns *cs, const struct conns_limits *lim);

/* Reads the counters. */
void conns_stats(const struct conns *cs, struct conns_stats *out);

/* The timeouts and the paused listeners: call every turn with the
 * monotonic clock; conns_next_ms says by when (INT64_MAX: nothing). */
void conns_tick(struct conns *cs, int64_t now_ms);
int64_t conns_next_ms(const struct conns *cs);

/* Readable when conns_run has something to do. */
int conns_fd(const struct conns *cs);

/* Listens on "HOST:PORT" ("[::1]:7711", "*:7711" or ":7711" for every
 * address) for connections of `face`; `arg` goes to face->open. Returns
 * 0; -EINVAL for an address without a port; -EADDRNOTAVAIL when HOST
 * does not resolve; -errno from socket, bind or listen (-EADDRINUSE). */
int conns_listen(struct conns *cs, const char *addr,
    const struct conn_face *face, void *arg);

/* Stops accepting (shutdown); connections stay. */
void conns_stop_listening(struct conns *cs);

/* Accepts, reads, and hands input to the faces, without blocking. */
void conns_run(struct conns *cs);

/* Writes what every connection queued, without blocking (the rest goes
 * when the socket takes it), and frees closed connections nothing holds.
 */
void conns_flush(struct conns *cs);

/* Whether anything is still to be written (shutdown waits for it). */
bool conns_sending(const struct conns *cs);

/* Queues `len` bytes for the peer, written by the next conns_flush. Does
 * nothing once the connection is closed. Out of memory closes it. */
void conn_write(struct conn *c, const void *p, size_t len);

/* Bytes queued and not yet written. */
size_t conn_unsent(const struct conn *c);

/* The face queued one whole reply (counted against out_msgs). */
void conn_msg_queued(struct conn *c);

/* Whether the unsent output is at or over the mark: the face stops
 * reading requests until it drains (face->input is called then). */
bool conn_over(const struct conn *c);

/* Whether `more` replies still to come would keep it under the mark
 * (the face's requests in the core that will be answered soon). */
bool conn_room(const struct conn *c, unsigned more);

/* The face's handshake (and authentication, where needed) is done: the
 * handshake timeout and the not-ready cap stop applying. */
void conn_ready(struct conn *c);

/* The face waits for the rest of a unit it began (a frame, a line, a
 * job's body): the frame timeout runs until the next conn_consume, and
 * starts again each time FRAME_PROGRESS more bytes of it arrived (a
 * slow link's large message is not a slowloris). */
void conn_want_more(struct conn *c);

/* Closes for input the protocol does not allow at this point (a length
 * over the limit, a malformed frame); counted as closed_refused. */
void conn_refuse(struct conn *c);

/* The face parsed `n` bytes from the start of the input. */
void conn_consume(struct conn *c, size_t n);

/* Closes now: no more input, queued output dropped, face->closed. */
void conn_close(struct conn *c);

/* Closes once the queued output is written (beanstalk's quit). */
void conn_close_when_sent(struct conn *c);

/* A reference the face keeps past face->closed (a request the core
 * holds); the connection is freed after the last conn_release. */
void conn_hold(struct conn *c);
void conn_release(struct conn *c);

#endif
