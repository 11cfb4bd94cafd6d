/* conn_flush - the output of conn.c's connections: what the faces queued
 * with conn_write leaves at the end of the turn (conns_flush), every reply
 * of a turn to one connection in one write.
 *
 * When two connections or more have output, their first sends go out
 * together through conn_ring.c, one io_uring_enter for all of them; what
 * a short send leaves, and a lone connection's output, go by plain
 * `send`. A full socket arms EPOLLOUT, and conns_run writes the rest
 * when the socket has room. */
#include <errno.h>
#include <sys/socket.h>

#include "server/face/conn_int.h"
#include "server/face/conn_ring.h"
#include "util/clock.h"

enum {
	OUT_KEEP = 4096, /* larger written output buffers are freed */
};

/* One send's result: `n` bytes went, or -errno. False when the
 * connection stops writing for now (a full socket: EPOLLOUT armed) or
 * for good (closed). */
static bool
wrote(struct conn *c, ssize_t n, int64_t now)
{
	if (n == -EINTR)
		return true;
	if (n == -EAGAIN) {
		conn_set_events(c, c->reading, true);
		return false;
	}
	if (n < 0) {
		conn_close(c);
		return false;
	}
	c->out_off += (size_t)n;
	c->active_ms = c->sent_ms = now;
	return true;
}

/* Writes queued output; true when all of it went. */
bool
conn_write_some(struct conn *c)
{
	while (conn_unsent(c) > 0) {
		ssize_t n = send(c->fd, c->out.data + c->out_off,
		    conn_unsent(c), MSG_NOSIGNAL);

		if (!wrote(c, n < 0 ? -errno : n, clock_mono_ms()))
			return false;
	}
	c->out_off = 0;
	c->out_msgs = 0;
	if (c->out.cap > OUT_KEEP) {
		buf_fini(&c->out);
		buf_init(&c->out);
	} else {
		buf_reset(&c->out);
	}
	if (c->writing)
		conn_set_events(c, c->reading, false);
	if (c->close_sent)
		conn_close(c);
	return true;
}

/* Writes one connection's output the plain way, and lets its face read
 * again when that took it back under the mark. */
static void
flush_one(struct conn *c, bool was_over)
{
	if (conn_write_some(c) && was_over && !c->closed)
		c->face->input(c);
}

/* Sends the first bytes of every connection of `b` in one io_uring_enter
 * (conn_ring.c), then finishes each the plain way (what a short send
 * left, and what a finished write does). False when the ring failed and
 * nothing was sent. */
static bool
flush_ring(struct conns *cs, struct conn **b, size_t n)
{
	struct conn_ring_io io[CONN_RING_MAX];
	bool over[CONN_RING_MAX];
	int64_t now;

	for (size_t i = 0; i < n; i++) {
		io[i] = (struct conn_ring_io) { .fd = b[i]->fd,
			.p = b[i]->out.data + b[i]->out_off,
			.len = conn_unsent(b[i]) };
		over[i] = conn_over(b[i]);
	}
	if (conn_ring_send(cs->ring, io, n) != 0)
		return false;
	now = clock_mono_ms();
	for (size_t i = 0; i < n; i++) {
		struct conn *c = b[i];

		c->queued = false;
		if (!c->closed && wrote(c, io[i].res, now))
			flush_one(c, over[i]);
		if (c->closed)
			conn_maybe_free(c);
	}
	return true;
}

void
conns_flush(struct conns *cs)
{
	struct conn *b[CONN_RING_MAX], *c;

	while (cs->flush_head != NULL) {
		size_t n = 0;

		while ((c = cs->flush_head) != NULL && n < CONN_RING_MAX) {
			cs->flush_head = c->qnext;
			if (!c->closed && !c->writing && conn_unsent(c) > 0) {
				b[n++] = c; /* stays marked queued: never on
				             * the list twice, never freed */
				continue;
			}
			c->queued = false;
			if (!c->closed && !c->writing)
				flush_one(c, conn_over(c));
			if (c->closed)
				conn_maybe_free(c);
		}
		/* one reply goes by a plain send: the ring saves nothing */
		if (n >= 2 && cs->ring != NULL && flush_ring(cs, b, n))
			continue;
		for (size_t i = 0; i < n; i++) {
			c = b[i];
			c->queued = false;
			if (!c->closed)
				flush_one(c, conn_over(c));
			if (c->closed)
				conn_maybe_free(c);
		}
	}
	conn_free_dead(cs);
}

bool
conns_sending(const struct conns *cs)
{
	for (const struct conn *c = cs->all; c != NULL; c = c->next)
		if (!c->closed && conn_unsent(c) > 0)
			return true;
	return false;
}
