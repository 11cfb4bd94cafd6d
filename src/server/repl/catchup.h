/* catchup - a leader's reads of its own segments for followers that are
 * behind its memory of recent records, through io_uring, so the core
 * thread never waits for the disk on their behalf.
 *
 * One reader per follower keeps its place (segment, offset, next LSN)
 * between fetches, so a follower catching up reads each segment once, in
 * order. A read fills a window of the segment; the records in it (whole,
 * checked, in LSN order) are appended to the reader's output until the
 * fetch's byte budget or the durable LSN is reached; a record cut by the
 * window's end is read again with the next window. */
#ifndef SLUICE_SERVER_REPL_CATCHUP_H
#define SLUICE_SERVER_REPL_CATCHUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/logdir.h"
#include "util/buf.h"

struct catchup_io;

struct catchup {
	void *owner;     /* the follower, for the completion callback */
	bool busy;       /* a read is in flight */
	bool dead;       /* the owner left: free it when the read ends */
	int fd;          /* the segment being read; -1 */
	uint64_t seg;    /* its first LSN */
	uint64_t off;    /* file offset of buf[0] */
	uint64_t next;   /* LSN of the next record to yield */
	uint8_t *buf;    /* the window */
	size_t cap, len; /* its size, the bytes in it */
	size_t pos;      /* the next record's offset in buf */
	/* the read asked for */
	uint64_t upto;
	size_t max;
	struct buf out; /* the records read: whole, as in segments */
	uint32_t count;
	struct catchup *dead_next;
};

/* The result a completed read reports (besides out/count). */
enum {
	CATCHUP_MORE = 0, /* records in out (count > 0) */
	CATCHUP_NONE = 1, /* no record after next up to upto in the files */
};

typedef void catchup_done_fn(struct catchup *r, int rc, void *arg);

/* Opens the io_uring. Returns 0 or -errno. */
int catchup_io_open(struct catchup_io **out, const char *dir);

/* Waits for reads in flight (bounded), frees the readers that died, and
 * closes the ring. Accepts NULL. */
void catchup_io_close(struct catchup_io *io);

/* Readable when reads completed. */
int catchup_io_fd(const struct catchup_io *io);

/* A reader for `owner`; NULL without memory. */
struct catchup *catchup_new(void *owner);

/* Frees the reader now, or when its read ends. */
void catchup_free(struct catchup_io *io, struct catchup *r);

/* Starts reading records from `from` (lsn <= upto, about `max` bytes, at
 * least one record) into r->out (reset). Returns 0 (done() follows), or
 * -ENOENT when no segment holds `from` any more, or -errno. */
int catchup_start(struct catchup_io *io, struct catchup *r, uint64_t from,
    uint64_t upto, size_t max);

/* Handles completed reads: continues those that need more bytes and calls
 * done(r, rc) for the others: CATCHUP_MORE, CATCHUP_NONE, -ENOENT (the
 * next segment was removed), SLUICE_ECORRUPT, -errno. */
void catchup_io_reap(struct catchup_io *io, catchup_done_fn *done, void *arg);

#endif
