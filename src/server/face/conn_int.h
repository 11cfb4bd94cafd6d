/* conn_int - what conn.c (connections, reading, timeouts) and
 * conn_flush.c (their output) share, and nothing else includes: the
 * set's and the listener's structs and the helpers both call. */
#ifndef SLUICE_SERVER_FACE_CONN_INT_H
#define SLUICE_SERVER_FACE_CONN_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "server/face/conn.h"

enum {
	LISTENERS_MAX = 8,
};

struct conn_ring;

/* A kind of refusal, logged once per NOTE_EVERY_MS with a count. */
struct conn_note {
	int64_t last_ms;
	uint64_t since; /* not logged yet */
};

struct conn_listener {
	int fd;
	const struct conn_face *face;
	void *arg;
	unsigned nconns, nunready;
	struct conn *unready_head, *unready_tail; /* oldest first */
	int64_t paused_until;                     /* 0: accepting */
};

struct conns {
	int epfd;
	struct conn_listener *ls[LISTENERS_MAX];
	size_t nls;
	struct conn *all;
	struct conn *flush_head; /* connections with output queued */
	struct conn *free_head;  /* closed, held by nothing */
	size_t nconns;
	bool closing;           /* conns_close */
	uint8_t *rbuf;          /* the shared read buffer, READ_MAX bytes */
	struct conn_ring *ring; /* a turn's replies in one system call; NULL:
	                         * no io_uring here, one send each */
	int reserve_fd;         /* given up to accept when out of descriptors */
	struct conns_limits lim;
	struct conns_stats st;
	int64_t next_tick;
	bool any_paused;
	uint64_t freed;      /* connections freed since the last trim */
	uint64_t freed_tick; /* of those, freed before the last tick */
	int64_t trimmed_ms;  /* the last malloc_trim */
	struct conn_note note_fds, note_full, note_unready, note_timeout;
};

/* Arms EPOLLIN and EPOLLOUT as asked (epoll_ctl only on a change). */
void conn_set_events(struct conn *c, bool reading, bool writing);

/* Whether the connection may read: open, input below in_max. */
bool conn_may_read(const struct conn *c);

/* Puts a closed connection that nothing holds on the free list. */
void conn_maybe_free(struct conn *c);

/* Frees what the free list holds. */
void conn_free_dead(struct conns *cs);

/* Writes queued output with plain sends; true when all of it went
 * (conn_flush.c). */
bool conn_write_some(struct conn *c);

#endif
