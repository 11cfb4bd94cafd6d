/* ring - a thin liburing wrapper for the WAL.
 *
 * The unit of work is a chain: up to RING_CHAIN_MAX operations (rename,
 * fsync, write, fdatasync, timeout) submitted together and linked, so
 * each starts when the one before it succeeded. The ring reaps without
 * blocking and calls back once per chain, when every operation completed
 * or one failed. A short write is not a failure: the kernel breaks the
 * link there (the operations after it complete -ECANCELED), and the ring
 * resubmits the rest of the write and the operations after it. An
 * operation that failed is never retried: after a failed fdatasync the
 * kernel may have dropped the dirty pages, so the only honest answer is
 * the error.
 *
 * The chain's memory is the caller's (the WAL embeds one in each batch);
 * it must stay put until the callback. Completions signal an eventfd
 * (ring_fd) that an event loop can poll. */
#ifndef SLUICE_LOG_RING_H
#define SLUICE_LOG_RING_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ring_kind {
	RING_WRITE,     /* buf, len at off */
	RING_FDATASYNC, /* fdatasync(fd) */
	RING_FSYNC,     /* fsync(fd): a directory */
	RING_RENAME,    /* rename(from, to) */
	RING_TIMEOUT,   /* completes after ts */
};

enum {
	RING_CHAIN_MAX = 5,
	RING_ATTEMPTS_MAX = 64, /* resubmissions of one chain */
};

struct ring_chain;

struct ring_op {
	enum ring_kind kind;
	int fault; /* fault point hit when prepared (fault builds), or -1 */
	int fd;
	const uint8_t *buf; /* RING_WRITE */
	size_t len;
	uint64_t off;
	const char *from; /* RING_RENAME; borrowed until completion */
	const char *to;
	struct __kernel_timespec ts; /* RING_TIMEOUT */

	/* Progress, kept by the ring. */
	size_t done;   /* bytes written */
	bool complete; /* finished successfully */
	int res;       /* the error that failed it; 0 */
	int injected;  /* the fault chosen when it was prepared; 0 */
	struct ring_chain *chain;
};

struct ring_chain {
	struct ring_op op[RING_CHAIN_MAX];
	unsigned nop;
	unsigned pending;  /* completions not reaped yet */
	unsigned attempts; /* submissions */
	int err;           /* the first failure; 0 */
	int err_op;        /* the index of the op that failed */
	int64_t start_ns;  /* monotonic, at the first submission */
};

struct ring {
	struct io_uring uring;
	int efd;
	unsigned pending; /* completions not reaped yet, all chains */
	bool open;
};

/* Sets up a ring of `entries` SQEs and an eventfd registered with it.
 * Returns 0 or -errno (-ENOSYS, -EPERM where io_uring is unavailable). */
int ring_open(struct ring *r, unsigned entries);

/* Tears down the ring; in-flight operations are cancelled (their chains
 * never called back). Accepts a zeroed or closed ring. */
void ring_close(struct ring *r);

/* The eventfd, readable when completions wait. */
int ring_fd(const struct ring *r);

/* Empties a chain. */
void ring_chain_init(struct ring_chain *c);

/* Adds an operation to a chain and returns it for its fields to be set
 * (fd is set; fault is -1). The chain must have room. */
struct ring_op *ring_chain_add(
    struct ring_chain *c, enum ring_kind kind, int fd);

/* Submits every operation of `c` not yet complete, linked in order.
 * Returns 0 or -errno (nothing was submitted). */
int ring_submit(struct ring *r, struct ring_chain *c);

/* Runs every operation of `c` on the caller's thread with plain system
 * calls (pwrite, fdatasync, fsync, rename; no timeouts), in order, with
 * the rules of a submission: the same fault points, a short write
 * continued, the first failure ends the chain. Blocks for as long as the
 * disk takes. No callback: returns c->err (0 when every op completed).
 * For the writer's commit when nothing else is in flight: one thread,
 * no hand-off to the kernel's io workers. */
int ring_run(struct ring_chain *c);

typedef void ring_done_fn(struct ring_chain *c, void *arg);

/* Drains the eventfd, then handles every completion waiting, without
 * blocking; calls `done` for each chain that finished (c->err says
 * whether it failed; a resubmission that could not be made finishes its
 * chain with that error). Returns the number of chains finished, or
 * -errno when the eventfd cannot be read. */
int ring_reap(struct ring *r, ring_done_fn *done, void *arg);

/* Blocks until a completion waits or `timeout_ns` passed. Returns 0,
 * -ETIME, or -errno. */
int ring_wait(struct ring *r, int64_t timeout_ns);

#endif
