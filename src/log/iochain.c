/* iochain - runs the WAL's chains of I/O operations (rename, fsync,
 * write, fdatasync, timeout), each op starting when the one before it
 * succeeded. By default (WAL_COMMIT_DIRECT and WAL_COMMIT_RING, and for
 * the interval policy's fdatasync and timer) a chain is submitted to
 * io_uring, reaped without blocking, short writes continued; with
 * WAL_COMMIT_INLINE the writer runs it on its own thread with plain
 * system calls (iochain_run, at the end of this file). The contract is in
 * iochain.h.
 *
 * A submitted chain's life:
 *
 *	iochain_submit: SQEs for every op not complete, linked (IOSQE_IO_LINK
 *	             on all but the last); pending = their count
 *	iochain_reap:   one CQE per op; pending--. A write short of what was
 *	             asked records the progress; the kernel cancels what
 *	             follows it (-ECANCELED). An error that is not
 *	             -ECANCELED is the chain's error.
 *	pending 0:   error -> done(chain) with c->err
 *	             every op complete -> done(chain)
 *	             else (a short write, ops cancelled after it) ->
 *	             resubmit the rest, at most IOCHAIN_ATTEMPTS_MAX times
 *
 * Fault builds (SLUICE_FAULT): an op with a fault point asks FAULT_HIT as
 * it is prepared (a durable write, op->dsync, asks FAULT_WAL_FSYNC after
 * its own point: its flush). An error effect replaces the op by a NOP
 * whose completion reports the error (the data is not written);
 * FAULT_SHORT submits half of what is left of a write (rounded down to
 * op->align on an O_DIRECT descriptor, as a real short write there is),
 * which the kernel then writes short, exactly as a real short write.
 * FAULT_PAUSE_FSYNC, a slow disk: iochain_run sleeps before each
 * fdatasync or durable write; a submitted chain that makes data durable
 * starts with a timer of that length linked ahead of it
 * (IORING_TIMEOUT_ETIME_SUCCESS: its expiry does not break the link), so
 * the submitting thread goes on meanwhile as it would with a slow disk. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "log/iochain.h"
#include "util/clock.h"
#include "util/fault.h"

int
iochain_ring_open(struct iochain_ring *r, unsigned entries)
{
	int rc;

	memset(r, 0, sizeof(*r));
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->efd < 0)
		return -errno;
	rc = io_uring_queue_init(entries, &r->uring, 0);
	if (rc < 0)
		goto fail_init;
	atomic_init(&r->woken, false);
	r->open = true;
	return 0;

fail_init:
	close(r->efd);
	r->efd = -1;
	return rc;
}

void
iochain_ring_close(struct iochain_ring *r)
{
	if (!r->open)
		return;
	io_uring_queue_exit(&r->uring);
	close(r->efd);
	r->efd = -1;
	r->open = false;
}

int
iochain_ring_fd(const struct iochain_ring *r)
{
	return r->uring.ring_fd;
}

int
iochain_wake_fd(const struct iochain_ring *r)
{
	return r->efd;
}

void
iochain_wake(struct iochain_ring *r)
{
	uint64_t one = 1;

	/* The write before the flag: a reap that sees the flag then
	 * reads what was written. (The other order could let a reap take
	 * the flag, read nothing, and leave the eventfd readable with no
	 * flag: a loop polling it would spin.) */
	if (write(r->efd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow in practice; a failed
		 * wake-up only delays what it was for. */
	}
	atomic_store(&r->woken, true);
}

void
iochain_init(struct iochain *c)
{
	memset(c, 0, sizeof(*c));
}

struct iochain_op *
iochain_add(struct iochain *c, enum iochain_kind kind, int fd)
{
	struct iochain_op *op;

	if (c->nop == IOCHAIN_OPS_MAX)
		return NULL;
	op = &c->op[c->nop++];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->fd = fd;
	op->fault = -1;
	op->chain = c;
	return op;
}

/* The fault chosen for `op` as it is prepared (fault builds): its own
 * point's, then, for a durable write, its flush's. 0 for none. */
static int
hit(struct iochain_op *op)
{
	int f = 0;

	if (op->fault >= 0)
		f = FAULT_HIT((enum fault_point)op->fault);
	if (f == 0 && op->kind == IOCHAIN_WRITE && op->dsync &&
	    op->fault >= 0) {
		int g = FAULT_HIT(FAULT_WAL_FSYNC);

		if (g < 0)
			f = g;
	}
	return f;
}

/* What an injected short write writes of the `len` bytes left: about
 * half, in whole units of op->align on an O_DIRECT descriptor. */
static size_t
short_len(const struct iochain_op *op, size_t len)
{
	size_t a = op->align > 0 ? op->align : 1;
	size_t half = len / 2 / a * a;

	return half > 0 ? half : len;
}

/* Prepares `op` into `sqe`; a fault build may swap it for a NOP. */
static void
prep(struct io_uring_sqe *sqe, struct iochain_op *op)
{
	size_t len = op->len - op->done;
	int f = 0;

	op->injected = 0;
	f = hit(op);
	if (f < 0) {
		op->injected = f;
		io_uring_prep_nop(sqe);
		goto out;
	}
	switch (op->kind) {
	case IOCHAIN_WRITE:
		if (f == FAULT_SHORT)
			len = short_len(op, len);
		io_uring_prep_write(sqe, op->fd, op->buf + op->done,
		    (unsigned)len, op->off + op->done);
		if (op->dsync)
			sqe->rw_flags = RWF_DSYNC;
		break;
	case IOCHAIN_FDATASYNC:
		io_uring_prep_fsync(sqe, op->fd, IORING_FSYNC_DATASYNC);
		break;
	case IOCHAIN_FSYNC:
		io_uring_prep_fsync(sqe, op->fd, 0);
		break;
	case IOCHAIN_RENAME:
		io_uring_prep_renameat(
		    sqe, AT_FDCWD, op->from, AT_FDCWD, op->to, 0);
		break;
	case IOCHAIN_TIMEOUT:
		io_uring_prep_timeout(sqe, &op->ts, 0, 0);
		break;
	}
out:
	io_uring_sqe_set_data(sqe, op);
}

/* The slow disk of a fault build (FAULT_PAUSE_FSYNC): the delay in ms
 * before a chain that makes data durable; 0 otherwise. */
static unsigned
delay_ms(const struct iochain *c)
{
	unsigned ms = FAULT_PAUSE_MS(FAULT_PAUSE_FSYNC);

	if (ms == 0)
		return 0;
	for (unsigned i = 0; i < c->nop; i++)
		if (!c->op[i].complete &&
		    (c->op[i].kind == IOCHAIN_FDATASYNC ||
		        (c->op[i].kind == IOCHAIN_WRITE && c->op[i].dsync)))
			return ms;
	return 0;
}

int
iochain_submit(struct iochain_ring *r, struct iochain *c)
{
	struct io_uring_sqe *last = NULL;
	unsigned n = 0;
	int rc;

	if (io_uring_sq_space_left(&r->uring) < c->nop + 1)
		return -EBUSY;
	if (delay_ms(c) > 0) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r->uring);
		unsigned ms = delay_ms(c);

		memset(&c->delay, 0, sizeof(c->delay));
		c->delay.kind = IOCHAIN_TIMEOUT;
		c->delay.fault = -1;
		c->delay.chain = c;
		c->delay.ts.tv_sec = ms / 1000;
		c->delay.ts.tv_nsec = (long long)(ms % 1000) * 1000000;
		io_uring_prep_timeout(
		    sqe, &c->delay.ts, 0, IORING_TIMEOUT_ETIME_SUCCESS);
		io_uring_sqe_set_data(sqe, &c->delay);
		last = sqe;
		n++;
	}
	for (unsigned i = 0; i < c->nop; i++) {
		struct iochain_op *op = &c->op[i];
		struct io_uring_sqe *sqe;

		if (op->complete)
			continue;
		/* A write submitted in pieces never exceeds what one SQE
		 * can carry (unsigned length). */
		if (op->kind == IOCHAIN_WRITE && op->len - op->done > 1u << 30)
			return -EINVAL;
		sqe = io_uring_get_sqe(&r->uring);
		if (sqe == NULL)
			return -EBUSY; /* space was checked: not reached */
		prep(sqe, op);
		if (last != NULL)
			last->flags |= IOSQE_IO_LINK;
		last = sqe;
		n++;
	}
	if (n == 0)
		return 0;
	for (;;) {
		rc = io_uring_submit(&r->uring);
		if (rc != -EINTR && rc != -EAGAIN)
			break;
	}
	if (rc < 0)
		return rc;
	if (c->attempts == 0)
		c->start_ns = clock_mono_ns();
	c->attempts++;
	c->pending += n;
	r->pending += n;
	return 0;
}

/* Applies one completion to its op. */
static void
complete_op(struct iochain_op *op, int res)
{
	struct iochain *c = op->chain;

	if (op->injected < 0)
		res = op->injected;
	if (res == -ECANCELED && op->kind != IOCHAIN_TIMEOUT)
		return; /* an op before it failed or wrote short: retried */
	switch (op->kind) {
	case IOCHAIN_WRITE:
		if (res < 0)
			break;
		if (res == 0) {
			res = -EIO; /* no progress: never loop on it */
			break;
		}
		op->done += (size_t)res;
		if (op->done >= op->len)
			op->complete = true;
		return;
	case IOCHAIN_TIMEOUT:
		/* -ETIME is a timer that ran out: its purpose. */
		op->complete = true;
		op->res = res == -ETIME ? 0 : res;
		return;
	default:
		if (res < 0)
			break;
		op->complete = true;
		return;
	}
	op->res = res;
	if (c->err == 0) {
		c->err = res;
		c->err_op = (int)(op - c->op);
	}
}

/* A chain whose completions are all in: finished, or resubmitted. */
static bool
chain_settle(struct iochain_ring *r, struct iochain *c)
{
	int rc;

	if (c->err != 0)
		return true;
	for (unsigned i = 0; i < c->nop; i++) {
		if (c->op[i].complete)
			continue;
		if (c->attempts >= IOCHAIN_ATTEMPTS_MAX) {
			c->err = -EIO;
			c->err_op = (int)i;
			return true;
		}
		rc = iochain_submit(r, c);
		if (rc != 0) {
			c->err = rc;
			c->err_op = (int)i;
			return true;
		}
		return false;
	}
	return true;
}

int
iochain_reap(struct iochain_ring *r, iochain_done_fn *done, void *arg)
{
	struct io_uring_cqe *cqe;
	uint64_t ev;
	int finished = 0;

	/* Only after iochain_wake: a completion does not touch the
	 * eventfd (the loop polls the ring's own descriptor). */
	if (atomic_exchange(&r->woken, false) &&
	    read(r->efd, &ev, sizeof(ev)) < 0 && errno != EAGAIN)
		return -errno;
	while (io_uring_peek_cqe(&r->uring, &cqe) == 0) {
		struct iochain_op *op = io_uring_cqe_get_data(cqe);
		struct iochain *c = op->chain;
		int res = cqe->res;

		io_uring_cqe_seen(&r->uring, cqe);
		r->pending--;
		c->pending--;
		complete_op(op, res);
		if (c->pending > 0)
			continue;
		if (chain_settle(r, c)) {
			finished++;
			done(c, arg);
		}
	}
	return finished;
}

/* One operation of iochain_run, by its system call: the result as a CQE
 * would carry it. */
static int
run_op(struct iochain_op *op)
{
	size_t len = op->len - op->done;
	ssize_t n;
	int f = 0, rc;

	op->injected = 0;
	f = hit(op);
	if (f < 0) {
		op->injected = f;
		return 0;
	}
	if (f == FAULT_SHORT)
		len = short_len(op, len);
	if (op->kind == IOCHAIN_WRITE && op->dsync)
		FAULT_PAUSE(FAULT_PAUSE_FSYNC);
	do {
		switch (op->kind) {
		case IOCHAIN_WRITE: {
			struct iovec v = { (void *)(op->buf + op->done), len };

			n = pwritev2(op->fd, &v, 1, (off_t)(op->off + op->done),
			    op->dsync ? RWF_DSYNC : 0);
			rc = n < 0 ? -errno : (int)n;
			break;
		}
		case IOCHAIN_FDATASYNC:
			FAULT_PAUSE(FAULT_PAUSE_FSYNC);
			rc = fdatasync(op->fd) < 0 ? -errno : 0;
			break;
		case IOCHAIN_FSYNC:
			rc = fsync(op->fd) < 0 ? -errno : 0;
			break;
		case IOCHAIN_RENAME:
			rc = rename(op->from, op->to) < 0 ? -errno : 0;
			break;
		default:
			rc = -EINVAL; /* a timer has no inline form */
			break;
		}
	} while (rc == -EINTR);
	return rc;
}

int
iochain_run(struct iochain *c)
{
	c->start_ns = clock_mono_ns();
	for (unsigned i = 0; i < c->nop && c->err == 0; i++) {
		struct iochain_op *op = &c->op[i];

		while (!op->complete && c->err == 0) {
			if (op->kind == IOCHAIN_WRITE &&
			    op->len - op->done > 1u << 30) {
				c->err = -EINVAL;
				c->err_op = (int)i;
				break;
			}
			if (c->attempts++ >= IOCHAIN_ATTEMPTS_MAX) {
				c->err = -EIO;
				c->err_op = (int)i;
				break;
			}
			complete_op(op, run_op(op));
		}
	}
	return c->err;
}

int
iochain_wait(struct iochain_ring *r, int64_t timeout_ns)
{
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ns / 1000000000,
		.tv_nsec = timeout_ns % 1000000000,
	};
	struct io_uring_cqe *cqe;
	int rc;

	if (timeout_ns < 0)
		ts.tv_sec = ts.tv_nsec = 0;
	rc = io_uring_wait_cqe_timeout(&r->uring, &cqe, &ts);
	if (rc == -EINTR)
		return 0;
	return rc < 0 ? rc : 0;
}
