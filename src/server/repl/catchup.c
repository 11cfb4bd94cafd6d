/* catchup - a leader's reads of its segments for followers behind its
 * memory of recent records (catchup.h), through an io_uring of its own,
 * so the core thread never waits for the disk on their behalf: each
 * reader keeps its place between fetches, fills a window of the segment
 * with one read, and yields the whole, checked records in it; the
 * completions are reaped on the core thread (catchup_io_reap) and handed
 * to the leader (lead_peer.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <liburing.h>

#include "log/rec.h"
#include "log/seg.h"
#include "server/repl/catchup.h"
#include "sluice.h"

enum {
	IO_ENTRIES = 64,
	WINDOW = 1 << 20,
	CLOSE_WAIT_MS = 5000,
};

struct catchup_io {
	struct io_uring ring;
	int efd;
	unsigned inflight;
	struct catchup *dead; /* readers freed when their read ends */
	char dir[LOGDIR_PATH_MAX];
};

int
catchup_io_open(struct catchup_io **out, const char *dir)
{
	struct catchup_io *io = calloc(1, sizeof(*io));
	int rc;

	if (io == NULL)
		return -ENOMEM;
	snprintf(io->dir, sizeof(io->dir), "%s", dir);
	io->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (io->efd < 0) {
		rc = -errno;
		free(io);
		return rc;
	}
	rc = io_uring_queue_init(IO_ENTRIES, &io->ring, 0);
	if (rc == 0) {
		rc = io_uring_register_eventfd(&io->ring, io->efd);
		if (rc != 0)
			io_uring_queue_exit(&io->ring);
	}
	if (rc != 0) {
		close(io->efd);
		free(io);
		return rc;
	}
	*out = io;
	return 0;
}

static void
reader_free(struct catchup *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	buf_fini(&r->out);
	free(r);
}

void
catchup_io_close(struct catchup_io *io)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { 0, 10 * 1000000L };

	if (io == NULL)
		return;
	for (int i = 0; io->inflight > 0 && i < CLOSE_WAIT_MS / 10; i++) {
		if (io_uring_wait_cqe_timeout(&io->ring, &cqe, &ts) != 0)
			continue;
		io->inflight--;
		io_uring_cqe_seen(&io->ring, cqe);
	}
	if (io->inflight > 0)
		return; /* the kernel still writes into the buffers: leave
		         * them (and the ring) to the process's exit */
	while (io->dead != NULL) {
		struct catchup *r = io->dead;

		io->dead = r->dead_next;
		reader_free(r);
	}
	io_uring_queue_exit(&io->ring);
	close(io->efd);
	free(io);
}

int
catchup_io_fd(const struct catchup_io *io)
{
	return io->efd;
}

struct catchup *
catchup_new(void *owner)
{
	struct catchup *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->owner = owner;
	r->fd = -1;
	buf_init(&r->out);
	return r;
}

void
catchup_free(struct catchup_io *io, struct catchup *r)
{
	if (r == NULL)
		return;
	if (r->busy) {
		r->dead = true;
		r->dead_next = io->dead;
		io->dead = r;
		return;
	}
	reader_free(r);
}

/* Drops the window and reads it again from the next record on. */
static void
slide(struct catchup *r)
{
	memmove(r->buf, r->buf + r->pos, r->len - r->pos);
	r->off += r->pos;
	r->len -= r->pos;
	r->pos = 0;
}

static int
submit_read(struct catchup_io *io, struct catchup *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);
	int rc;

	if (sqe == NULL)
		return -EBUSY;
	io_uring_prep_read(sqe, r->fd, r->buf + r->len,
	    (unsigned)(r->cap - r->len), r->off + r->len);
	io_uring_sqe_set_data(sqe, r);
	rc = io_uring_submit(&io->ring);
	if (rc < 0)
		return rc;
	r->busy = true;
	io->inflight++;
	return 0;
}

/* Opens the segment that starts at `first`. */
static int
open_seg(struct catchup_io *io, struct catchup *r, uint64_t first)
{
	char path[LOGDIR_PATH_MAX + SEG_NAME_MAX];
	int fd;

	if (seg_path(path, sizeof(path), io->dir, first) != 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = fd;
	r->seg = first;
	r->off = 0;
	r->len = 0;
	r->pos = SEG_HDR_SIZE; /* checked when the first window arrives */
	return 0;
}

/* Finds the segment holding `from` and opens it. */
static int
locate(struct catchup_io *io, struct catchup *r, uint64_t from)
{
	struct logdir ld = { 0 };
	uint64_t first = 0;
	bool found = false;
	int rc = logdir_list(io->dir, &ld);

	if (rc != 0)
		return rc;
	for (size_t i = 0; i < ld.n; i++)
		if (ld.first[i] <= from) {
			first = ld.first[i];
			found = true;
		}
	if (ld.n == 0 || ld.first[0] > from)
		found = false;
	logdir_fini(&ld);
	if (!found)
		return -ENOENT;
	return open_seg(io, r, first);
}

/* Whether the segment that would start at `lsn` was removed (after a
 * snapshot, while this reader read the one before it): a later one is
 * there. Else it is not written yet. */
static bool
removed(struct catchup_io *io, uint64_t lsn)
{
	struct logdir ld = { 0 };
	bool later = false;

	if (logdir_list(io->dir, &ld) != 0)
		return false;
	for (size_t i = 0; i < ld.n; i++)
		later = later || ld.first[i] > lsn;
	logdir_fini(&ld);
	return later;
}

int
catchup_start(struct catchup_io *io, struct catchup *r, uint64_t from,
    uint64_t upto, size_t max)
{
	int rc;

	if (r->busy)
		return -EBUSY;
	if (r->buf == NULL) {
		r->buf = malloc(WINDOW);
		if (r->buf == NULL)
			return -ENOMEM;
		r->cap = WINDOW;
	}
	buf_reset(&r->out);
	r->count = 0;
	r->upto = upto;
	r->max = max;
	if (r->fd < 0 || r->next != from) {
		rc = locate(io, r, from);
		if (rc != 0)
			return rc;
		r->next = from;
	} else {
		/* Keep the place; what the window held after it may have
		 * been zeros that records have filled since: read again. */
		r->len = r->pos;
		slide(r);
	}
	return submit_read(io, r);
}

/* Takes whole records from the window. Returns 1 when the read is
 * complete (budget, upto, or the end of the data), 0 when more bytes are
 * needed (r->len grew or the window slid), or an error. */
static int
take_records(struct catchup_io *io, struct catchup *r, bool eof)
{
	for (;;) {
		struct rec_view v;
		enum rec_result res;

		if (r->next > r->upto || (r->count > 0 && r->out.len >= r->max))
			return 1;
		res = rec_decode(r->buf + r->pos, r->len - r->pos, &v);
		if (res == REC_VALID) {
			if (v.hdr.lsn < r->next) {
				r->pos += v.size;
				continue; /* before `from` */
			}
			if (v.hdr.lsn != r->next)
				return SLUICE_ECORRUPT;
			buf_put(&r->out, r->buf + r->pos, v.size);
			if (buf_failed(&r->out))
				return -ENOMEM;
			r->pos += v.size;
			r->next++;
			r->count++;
			continue;
		}
		if (res == REC_END && r->len - r->pos >= 4) {
			/* zeros: the segment's data ends; the next one may
			 * start at r->next */
			int rc = open_seg(io, r, r->next);

			if (rc == -ENOENT && removed(io, r->next))
				return -ENOENT; /* the leader's snapshot */
			if (rc == -ENOENT)
				return 1; /* nothing more in the files yet */
			return rc < 0 ? rc : 0;
		}
		if (eof && r->len - r->pos < REC_HDR_SIZE)
			return 1;
		/* A record cut by the window's end (or a header not all
		 * there): read further. */
		if (v.why == REC_WHY_SHORT || v.why == REC_WHY_TRUNC ||
		    res == REC_END) {
			size_t need = r->len - r->pos >= 4
			    ? rec_size(
			          le_load_u32(r->buf + r->pos) - REC_HDR_SIZE)
			    : REC_HDR_SIZE;

			if (eof)
				return 1;
			slide(r);
			if (need > r->cap) {
				uint8_t *b = realloc(r->buf, need);

				if (b == NULL)
					return -ENOMEM;
				r->buf = b;
				r->cap = need;
			}
			return 0;
		}
		return SLUICE_ECORRUPT;
	}
}

void
catchup_io_reap(struct catchup_io *io, catchup_done_fn *done, void *arg)
{
	struct io_uring_cqe *cqe;
	uint64_t v;

	if (read(io->efd, &v, sizeof(v)) < 0) {
		/* nothing signalled */
	}
	while (io_uring_peek_cqe(&io->ring, &cqe) == 0) {
		struct catchup *r = io_uring_cqe_get_data(cqe);
		int res = cqe->res, rc;

		io_uring_cqe_seen(&io->ring, cqe);
		io->inflight--;
		r->busy = false;
		if (r->dead) {
			for (struct catchup **pp = &io->dead; *pp != NULL;
			     pp = &(*pp)->dead_next)
				if (*pp == r) {
					*pp = r->dead_next;
					break;
				}
			reader_free(r);
			continue;
		}
		if (res < 0) {
			done(r, res, arg);
			continue;
		}
		r->len += (size_t)res;
		if (r->off == 0 && r->pos == SEG_HDR_SIZE) {
			struct seg_hdr h;

			if (r->len < SEG_HDR_SIZE && res > 0) {
				rc = submit_read(io, r);
				if (rc != 0)
					done(r, rc, arg);
				continue;
			}
			if (seg_hdr_decode(r->buf, r->len, &h) != 0 ||
			    h.first_lsn != r->seg) {
				done(r, SLUICE_ECORRUPT, arg);
				continue;
			}
		}
		rc = take_records(io, r, res == 0 && r->len - r->pos < r->cap);
		if (rc == 0 && r->count > 0 && r->out.len >= r->max)
			rc = 1;
		if (rc == 0) {
			rc = submit_read(io, r);
			if (rc == 0)
				continue;
		}
		if (rc == 1)
			rc = r->count > 0 ? CATCHUP_MORE : CATCHUP_NONE;
		done(r, rc, arg);
	}
}
