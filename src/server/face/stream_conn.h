/* stream_conn - what the files of face_stream share (stream.c the face,
 * stream_conn.c its connections, stream_read.c their reading,
 * stream_write.c the core's answers and their writing): the face, a
 * connection, a request in the core, a reply queued. Private to those
 * files; the face's users see stream.h.
 *
 * Threads: nng's callbacks (accept, each connection's read and write)
 * and the core thread (replies, drops, the tick) share one lock, the
 * face's; the fs_ functions below are called under it unless they say
 * otherwise. */
#ifndef SLUICE_SERVER_FACE_STREAM_CONN_H
#define SLUICE_SERVER_FACE_STREAM_CONN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "proto/sp.h"
#include "server/face/conn.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "server/face/sp.h"

enum rx_state { RX_HS, RX_LEN, RX_BODY };

/* The framing: SP over TCP or TLS, over ipc://, or over WebSocket. */
enum fs_mode { FS_SP, FS_IPC, FS_WS };

struct fs_out {
	struct fs_out *next;
	nng_msg *m;   /* the bytes to write: a whole frame, or our header */
	size_t total; /* nng_msg_len(m) */
	bool reply;   /* counted in out_msgs */
};

struct fs_req;

struct fs_conn {
	struct face_stream *fs;
	nng_stream *s;
	nng_aio *rx, *tx;
	uint32_t session;
	char peer[FACE_PEER_MAX];

	/* under fs->lock */
	enum rx_state rstate;
	uint8_t hdr[1 + SP_LEN];
	size_t hgot;
	nng_msg *body; /* RX_BODY: what arrived, grown as it comes */
	size_t want, got;
	nng_msg *held; /* complete, waiting for a bulky one to end */
	struct fs_out *outq, *outq_tail;
	size_t tx_off;          /* of outq's head, written */
	size_t out_bytes;       /* queued, not written */
	unsigned out_msgs;      /* replies queued, not written */
	unsigned inflight;      /* requests in the core */
	unsigned parked, bulky; /* of those */
	struct fs_req *reqs;    /* the requests in the core */
	bool rx_busy, tx_busy;
	bool shaken, authed, ready, closed, dead;
	int64_t born_ms, active_ms, part_ms, over_ms;
	size_t part_got;
	struct fs_conn *next, *prev;   /* all open ones, oldest first */
	struct fs_conn *dnext;         /* the dead list */
	struct fs_conn *enext, *eprev; /* every one not freed */
};

struct fs_req {
	struct face_ctx ctx; /* face = &fs_face */
	struct event ev;
	struct fs_conn *c;
	struct fs_req *next, *prev;
	size_t btlen;
	bool parked, bulky;
	uint8_t bt[SP_BACKTRACE_MAX];
};

struct face_stream {
	const struct face_sp_config *cfg;
	struct conns_limits lim;
	enum fs_mode mode;
	nng_stream_listener *l;
	nng_aio *acc;
	bool acc_sleeping;
	pthread_mutex_t lock;
	struct fs_conn *head, *tail; /* open, oldest first */
	struct fs_conn *dead;
	struct fs_conn *every; /* every connection not freed yet */
	unsigned nconns, nunready;
	bool stopping;
	int64_t next_tick;
	struct conns_stats st;
	int64_t note_ms;
	uint64_t note_since;
};

/* The face of its requests, for the core (stream_write.c). */
extern const struct face fs_face;

/* stream_conn.c. A new connection accepted as `s`, or NULL (refused;
 * `s` freed). */
struct fs_conn *fs_conn_new(struct face_stream *fs, nng_stream *s);

/* Closes `c` (its session's close posted to the core), counted in
 * `counter` unless NULL; freed later, once fs_maybe_dead finds nothing
 * refers to it. */
void fs_close_locked(struct fs_conn *c, uint64_t *counter);

/* Puts a closed connection nothing refers to on the dead list. */
void fs_maybe_dead(struct fs_conn *c);

/* The connection is ready (its SP header arrived and, under --auth,
 * its session authenticated): the handshake bounds stop applying. */
void fs_unready_done(struct fs_conn *c);

/* Asks the core whether `c`'s session authenticated (then its limit is
 * the full one, and it is ready once shaken). */
void fs_authed_now(struct fs_conn *c);

/* Counts a refusal and logs it at most every NOTE_EVERY_MS. */
void fs_note_full(struct face_stream *fs, const char *what);

/* Frees a connection, outside the lock: its callbacks are over, or end
 * in nng_aio_free. */
void fs_conn_free(struct fs_conn *c);

/* stream_read.c. Starts the next read if the connection may read; a
 * message held for a bulky request's end goes first. */
void fs_rx_next(struct fs_conn *c);
void fs_rx_cb(void *arg); /* a read ended (nng's thread) */

/* stream_write.c. Queues `o` on `c` and starts writing. */
void fs_queue_out(struct fs_conn *c, struct fs_out *o);
void fs_tx_next(struct fs_conn *c);
void fs_tx_cb(void *arg); /* a write ended (nng's thread) */

#endif
