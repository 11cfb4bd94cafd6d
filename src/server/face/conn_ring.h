/* conn_ring - one io_uring_enter for the system calls of a turn that
 * go to many connections of conn.c at once (their replies, their
 * requests), instead of one send or one read each.
 *
 * Why: at many clients a turn answers a whole group commit, 15-30
 * replies. Sent one `send` at a time, each reply's wake-up of its client
 * (loopback runs the receiver's side in the sender's call) ends the
 * server's system call with a preemption, so the loop is switched out
 * and back once per reply. Submitted together, the same sends run in one
 * io_uring_enter and the loop is switched out at most once for all. The
 * requests that one epoll_wait found ready are read the same way.
 *
 * Every operation carries MSG_DONTWAIT and completes inside the
 * io_uring_enter that submits it (a full socket answers -EAGAIN, as a
 * plain send would): the caller's buffers are free again when
 * the call returns, and nothing of the ring is left in flight
 * between turns. Should a kernel ever leave one in flight, it is
 * cancelled before the call returns and answered -EAGAIN. */
#ifndef SLUICE_SERVER_FACE_CONN_RING_H
#define SLUICE_SERVER_FACE_CONN_RING_H

#include <stddef.h>
#include <sys/types.h>

struct conn_ring;

/* The most operations one call takes. */
#define CONN_RING_MAX 64

struct conn_ring_io {
	int fd;
	void *p;
	size_t len;
	ssize_t res; /* out: bytes sent, or -errno */
};

/* Opens a ring. Returns 0 or -errno (no io_uring here: the caller sends
 * plainly). */
int conn_ring_open(struct conn_ring **out);

/* Accepts NULL. */
void conn_ring_close(struct conn_ring *r);

/* Sends io[i].len bytes of io[i].p on io[i].fd for each i < n (n at most
 * CONN_RING_MAX), each as one non-blocking send with MSG_NOSIGNAL, and
 * sets io[i].res. Returns 0, or -errno when the ring failed and nothing
 * was sent (the caller then sends plainly). */
int conn_ring_send(struct conn_ring *r, struct conn_ring_io *io, size_t n);

/* Receives up to io[i].len bytes into io[i].p from io[i].fd for each
 * i < n, each as one non-blocking receive, and sets io[i].res: the bytes,
 * 0 at the end of the stream, or -errno (-EAGAIN: nothing there). Returns
 * 0, or -errno when the ring failed and nothing was received. */
int conn_ring_recv(struct conn_ring *r, struct conn_ring_io *io, size_t n);

#endif
