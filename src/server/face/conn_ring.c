/* conn_ring - the sends or the receives of a turn in one io_uring_enter
 * (conn_ring.h).
 *
 * A ring of CONN_RING_MAX entries of its own, apart from the log's: the
 * log's completions wake the loop through an eventfd, these never do
 * (each is reaped by the call that submitted it), and the two share no
 * state. user_data is the operation's index in the caller's array. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <liburing.h>

#include "server/face/conn_ring.h"

struct conn_ring {
	struct io_uring uring;
	bool broken; /* a submit failed: closed, never used again */
};

int
conn_ring_open(struct conn_ring **out)
{
	struct conn_ring *r = calloc(1, sizeof(*r));
	int rc;

	if (r == NULL)
		return -ENOMEM;
	rc = io_uring_queue_init(CONN_RING_MAX, &r->uring, 0);
	if (rc < 0) {
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void
conn_ring_close(struct conn_ring *r)
{
	if (r == NULL)
		return;
	if (!r->broken)
		io_uring_queue_exit(&r->uring);
	free(r);
}

/* Closes the ring after a failed submit: what it may hold unsubmitted
 * must never run later, with buffers the caller has reused. */
static int
broken(struct conn_ring *r, int rc)
{
	io_uring_queue_exit(&r->uring);
	r->broken = true;
	return rc;
}

/* Reaps what completed; returns how many of the caller's operations. */
static size_t
reap(struct conn_ring *r, struct conn_ring_io *io, size_t n, char *done)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	size_t got = 0;

	io_uring_for_each_cqe(&r->uring, head, cqe)
	{
		uint64_t i = cqe->user_data;

		seen++;
		if (i < n && !done[i]) {
			io[i].res = cqe->res;
			done[i] = 1;
			got++;
		}
	}
	io_uring_cq_advance(&r->uring, seen);
	return got;
}

/* Cancels what is still in flight and waits for its completions (a
 * cancelled send or receive moved nothing: it was waiting for room or
 * for data). */
static void
cancel_rest(struct conn_ring *r, struct conn_ring_io *io, size_t n, char *done,
    size_t left)
{
	struct io_uring_sqe *sqe;

	for (size_t i = 0; i < n; i++) {
		if (done[i] || (sqe = io_uring_get_sqe(&r->uring)) == NULL)
			continue;
		io_uring_prep_cancel64(sqe, i, 0);
		io_uring_sqe_set_data64(sqe, UINT64_MAX);
	}
	while (left > 0) {
		if (io_uring_submit_and_wait(&r->uring, 1) < 0)
			break;
		left -= reap(r, io, n, done);
	}
	for (size_t i = 0; i < n; i++)
		if (!done[i])
			io[i].res = -EAGAIN;
}

/* Submits one operation per entry of `io`, each non-blocking, and reaps
 * them all. */
static int
run(struct conn_ring *r, struct conn_ring_io *io, size_t n, bool recv)
{
	char done[CONN_RING_MAX] = { 0 };
	size_t got;
	int rc;

	if (r->broken)
		return -EPIPE;
	if (n > CONN_RING_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r->uring);

		if (sqe == NULL) /* cannot be: nothing stays in the ring */
			return broken(r, -EBUSY);
		if (recv)
			io_uring_prep_recv(
			    sqe, io[i].fd, io[i].p, io[i].len, MSG_DONTWAIT);
		else
			io_uring_prep_send(sqe, io[i].fd, io[i].p, io[i].len,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
		io_uring_sqe_set_data64(sqe, i);
	}
	do
		rc = io_uring_submit(&r->uring);
	while (rc == -EINTR);
	if (rc < 0)
		return broken(r, rc);
	got = reap(r, io, n, done);
	if (got < n)
		cancel_rest(r, io, n, done, n - got);
	return 0;
}

int
conn_ring_send(struct conn_ring *r, struct conn_ring_io *io, size_t n)
{
	return run(r, io, n, false);
}

int
conn_ring_recv(struct conn_ring *r, struct conn_ring_io *io, size_t n)
{
	return run(r, io, n, true);
}
