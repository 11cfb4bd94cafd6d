/* iochain - the WAL's chains of I/O operations, submitted to io_uring
 * (iochain_submit, reaped by iochain_reap: the default commit,
 * WAL_COMMIT_DIRECT, and WAL_COMMIT_RING, and the interval policy's
 * fdatasync and timer) or run with plain system calls on the caller's
 * thread (iochain_run: WAL_COMMIT_INLINE).
 *
 * The unit of work is a chain: up to IOCHAIN_OPS_MAX operations (rename,
 * fsync, write, fdatasync, timeout) run in order, linked when submitted,
 * so each starts when the one before it succeeded. The ring reaps without
 * blocking and calls back once per chain, when every operation completed
 * or one failed. A short write is not a failure: the kernel breaks the
 * link there (the operations after it complete -ECANCELED), and the ring
 * resubmits the rest of the write and the operations after it. An
 * operation that failed is never retried: after a failed fdatasync the
 * kernel may have dropped the dirty pages, so the only honest answer is
 * the error.
 *
 * A write may be made durable by itself (op->dsync: RWF_DSYNC, which the
 * kernel turns into a FUA write or a cache flush after it) and may go to
 * an O_DIRECT descriptor (op->align): the writer's default commit, one
 * write per batch with no fdatasync op, which io_uring completes without
 * handing it to a worker thread (docs/benchmarks.md).
 *
 * The chain's memory is the caller's (the WAL embeds one in each batch);
 * it must stay put until the callback. An event loop polls the ring's own
 * descriptor (iochain_ring_fd: readable while completions wait), so that
 * a completion costs it no read of an eventfd; other threads wake it
 * through a second descriptor (iochain_wake, iochain_wake_fd), which is
 * read only after they wrote it. */
#ifndef SLUICE_LOG_IOCHAIN_H
#define SLUICE_LOG_IOCHAIN_H

#include <liburing.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum iochain_kind {
	IOCHAIN_WRITE,     /* buf, len at off */
	IOCHAIN_FDATASYNC, /* fdatasync(fd) */
	IOCHAIN_FSYNC,     /* fsync(fd): a directory */
	IOCHAIN_RENAME,    /* rename(from, to) */
	IOCHAIN_TIMEOUT,   /* completes after ts */
};

enum {
	IOCHAIN_OPS_MAX = 5,
	IOCHAIN_ATTEMPTS_MAX = 64, /* resubmissions of one chain */
};

struct iochain;

struct iochain_op {
	enum iochain_kind kind;
	int fault; /* fault point hit when prepared (fault builds), or -1 */
	int fd;
	const uint8_t *buf; /* IOCHAIN_WRITE */
	size_t len;
	uint64_t off;
	bool dsync;       /* IOCHAIN_WRITE: durable when it completes
	                   * (RWF_DSYNC: FUA, or a flush after the write) */
	uint32_t align;   /* IOCHAIN_WRITE on an O_DIRECT descriptor: the
	                   * alignment every piece of it keeps (buf, len and
	                   * off are multiples of it), for a short write
	                   * injected; 0 for a write through the page cache */
	const char *from; /* IOCHAIN_RENAME; borrowed until completion */
	const char *to;
	struct __kernel_timespec ts; /* IOCHAIN_TIMEOUT */

	/* Progress, kept by the ring. */
	size_t done;   /* bytes written */
	bool complete; /* finished successfully */
	int res;       /* the error that failed it; 0 */
	int injected;  /* the fault chosen when it was prepared; 0 */
	struct iochain *chain;
};

struct iochain {
	struct iochain_op op[IOCHAIN_OPS_MAX];
	unsigned nop;
	unsigned pending;  /* completions not reaped yet */
	unsigned attempts; /* submissions */
	int err;           /* the first failure; 0 */
	int err_op;        /* the index of the op that failed */
	int64_t start_ns;  /* monotonic, at the first submission */
	/* Fault builds: a timer linked ahead of a chain that makes data
	 * durable while FAULT_PAUSE_FSYNC is armed (a slow disk that does
	 * not block the submitting thread). */
	struct iochain_op delay;
};

struct iochain_ring {
	struct io_uring uring;
	int efd;           /* iochain_wake's eventfd */
	atomic_bool woken; /* efd written and not read yet */
	unsigned pending;  /* completions not reaped yet, all chains */
	bool open;
};

/* Sets up a ring of `entries` SQEs and the eventfd of iochain_wake.
 * Returns 0 or -errno (-ENOSYS, -EPERM where io_uring is unavailable). */
int iochain_ring_open(struct iochain_ring *r, unsigned entries);

/* Tears down the ring; in-flight operations are cancelled (their chains
 * never called back). Accepts a zeroed or closed ring. */
void iochain_ring_close(struct iochain_ring *r);

/* The ring's descriptor, readable while completions wait (until
 * iochain_reap took them). */
int iochain_ring_fd(const struct iochain_ring *r);

/* An eventfd, readable after iochain_wake until iochain_reap. */
int iochain_wake_fd(const struct iochain_ring *r);

/* Makes iochain_wake_fd readable: another thread's wake-up of the loop
 * (the preallocator's). Any thread. */
void iochain_wake(struct iochain_ring *r);

/* Empties a chain. */
void iochain_init(struct iochain *c);

/* Adds an operation to a chain and returns it for its fields to be set
 * (fd is set; fault is -1). The chain must have room. */
struct iochain_op *iochain_add(
    struct iochain *c, enum iochain_kind kind, int fd);

/* Submits every operation of `c` not yet complete, linked in order.
 * Returns 0 or -errno (nothing was submitted). */
int iochain_submit(struct iochain_ring *r, struct iochain *c);

/* Runs every operation of `c` on the caller's thread with plain system
 * calls (pwrite, fdatasync, fsync, rename; no timeouts), in order, with
 * the rules of a submission: the same fault points, a short write
 * continued, the first failure ends the chain. Blocks for as long as the
 * disk takes. No callback: returns c->err (0 when every op completed).
 * For the writer's commit when nothing else is in flight: one thread,
 * no hand-off to the kernel's io workers. */
int iochain_run(struct iochain *c);

typedef void iochain_done_fn(struct iochain *c, void *arg);

/* Reads the wake-up eventfd when iochain_wake wrote it, then handles
 * every completion waiting, without blocking; calls `done` for each
 * chain that finished (c->err says whether it failed; a resubmission that
 * could not be made finishes its chain with that error). Returns the
 * number of chains finished, or -errno when the eventfd cannot be read. */
int iochain_reap(struct iochain_ring *r, iochain_done_fn *done, void *arg);

/* Blocks until a completion waits or `timeout_ns` passed. Returns 0,
 * -ETIME, or -errno. */
int iochain_wait(struct iochain_ring *r, int64_t timeout_ns);

#endif
