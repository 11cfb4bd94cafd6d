/* fsync_probe - what one small durable write costs on this disk now: the
 * yardstick printed beside bench/compare.sh's figures, taken before and
 * after its runs (a shared virtual disk changes speed within minutes).
 *
 * It writes --bytes at increasing offsets of a file preallocated and
 * zero-filled first (as sluice's log segments are, so no write changes
 * the file's extents), each write followed by fdatasync, --count times or
 * until --max-time passed, and prints the latency of one write + sync:
 * p50, p99, mean. The file is made in --dir and removed after.
 *
 * --mode chooses how each write is made durable, to compare the ways the
 * log could commit on this kernel and disk:
 *   sync         pwrite + fdatasync (the default; the yardstick)
 *   odirect      pwrite on an O_DIRECT | O_DSYNC descriptor of the 4 KiB
 *                block that holds the new bytes (rewritten while it fills)
 *   uring-dsync  io_uring IORING_OP_WRITE of that block with RWF_DSYNC on
 *                an O_DIRECT descriptor, one wait for its completion
 *   uring-fsync  io_uring IORING_OP_WRITE of that block (O_DIRECT) linked to
 *                IORING_OP_FSYNC with IORING_FSYNC_DATASYNC
 *   uring-buffered  io_uring write (page cache) linked to the fsync: the
 *                log's old ring commit
 *   pwritev2-dsync  pwritev2 of that block with RWF_DSYNC on an O_DIRECT
 *                descriptor: the write a thread of the server's own
 *                would make synchronously
 * --wait chooses how a uring mode waits for its completions:
 *   enter        io_uring_submit_and_wait (the default)
 *   eventfd      submit, poll(2) an eventfd registered with the ring, read
 *                it, then reap: the server's loop
 *   ringfd       submit, poll(2) the ring's own descriptor, then reap: the
 *                loop without the eventfd
 * --depth D (uring-dsync only) keeps D writes in flight at once, each a
 * whole 4 KiB block of its own (as sluiced --wal-inflight writes batches
 * ended on a block), a new one submitted as each completes: the disk's
 * durable writes a second at that depth, and each write's latency from
 * its submission to its completion.
 * --thread hands every write to a thread of the probe's own, which runs
 * it (any mode) and signals an eventfd the main thread polls and reads:
 * the hand-off a commit thread adds, on top of the mode's own cost.
 * After the writes it counts the process's threads named iou-wrk-*: an
 * io_uring request the kernel could not complete inline was handed to such
 * a worker (a hand-off and two wake-ups per commit).
 *
 * A benchmark, never a test. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench_hist.h"
#include "bench_opts.h"
#include "util/clock.h"
#include "util/fsutil.h"

enum {
	PROBE_COUNT = 2000,
	PROBE_BYTES = 100,
	PROBE_BYTES_MAX = 1 << 20,
	PROBE_COUNT_MAX = 1000000,
	PROBE_ZERO_CHUNK = 1 << 20,
	PROBE_BLOCK = 4096,
	PROBE_DEPTH_MAX = 16,
};

enum probe_mode {
	MODE_SYNC,
	MODE_ODIRECT,
	MODE_URING_DSYNC,
	MODE_URING_FSYNC,
	MODE_URING_BUFFERED,
	MODE_PWRITEV2_DSYNC,
};

enum probe_wait { WAIT_ENTER, WAIT_EVENTFD, WAIT_RINGFD };

static const char *const mode_names[] = { "sync", "odirect", "uring-dsync",
	"uring-fsync", "uring-buffered", "pwritev2-dsync" };
static const char *const wait_names[] = { "enter", "eventfd", "ringfd" };

struct probe_opts {
	const char *dir;
	uint64_t count;
	uint64_t bytes;
	uint64_t max_ms;
	enum probe_mode mode;
	enum probe_wait wait;
	bool thread;
	bool json;
	unsigned depth; /* --depth: writes in flight (uring-dsync) */
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: fsync_probe --dir DIR [--count N] [--bytes B] "
	    "[--max-time DUR] [--mode M] [--wait W] [--thread] [--depth D] "
	    "[--json]\n"
	    "  pwrite of B bytes (default %d) + fdatasync, N times (default "
	    "%d),\n"
	    "  at increasing offsets of a preallocated, zero-filled file in "
	    "DIR;\n"
	    "  stops early after DUR (default 30s). Prints p50, p99 and the "
	    "mean.\n"
	    "  --mode sync (default) | odirect | uring-dsync | uring-fsync | "
	    "uring-buffered | pwritev2-dsync:\n"
	    "  how each write is made durable; --wait enter (default) | "
	    "eventfd | ringfd:\n"
	    "  how a uring mode waits; --thread: each write made by a thread "
	    "of its own;\n"
	    "  --depth D (uring-dsync): D whole-block writes in flight at "
	    "once (1..16)\n"
	    "  (see the top of bench/fsync_probe.c).\n",
	    PROBE_BYTES, PROBE_COUNT);
}

static int
parse(int argc, char **argv, struct probe_opts *o)
{
	static const struct option lo[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "max-time", required_argument, NULL, 't' },
		{ "mode", required_argument, NULL, 'm' },
		{ "wait", required_argument, NULL, 'w' },
		{ "thread", no_argument, NULL, 'T' },
		{ "depth", required_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->count = PROBE_COUNT;
	o->bytes = PROBE_BYTES;
	o->max_ms = 30000;
	o->depth = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dir = optarg;
			break;
		case 'n':
			if (bench_parse_count(optarg, &o->count) != 0 ||
			    o->count == 0 || o->count > PROBE_COUNT_MAX)
				return -1;
			break;
		case 'b':
			if (bench_parse_count(optarg, &o->bytes) != 0 ||
			    o->bytes == 0 || o->bytes > PROBE_BYTES_MAX)
				return -1;
			break;
		case 't':
			if (bench_parse_duration(optarg, &o->max_ms) != 0 ||
			    o->max_ms == 0)
				return -1;
			break;
		case 'm': {
			size_t i = 0;

			while (i < sizeof(mode_names) / sizeof(mode_names[0]) &&
			    strcmp(optarg, mode_names[i]) != 0)
				i++;
			if (i == sizeof(mode_names) / sizeof(mode_names[0]))
				return -1;
			o->mode = (enum probe_mode)i;
			break;
		}
		case 'w': {
			size_t i = 0;

			while (i < sizeof(wait_names) / sizeof(wait_names[0]) &&
			    strcmp(optarg, wait_names[i]) != 0)
				i++;
			if (i == sizeof(wait_names) / sizeof(wait_names[0]))
				return -1;
			o->wait = (enum probe_wait)i;
			break;
		}
		case 'T':
			o->thread = true;
			break;
		case 'D': {
			uint64_t d;

			if (bench_parse_count(optarg, &d) != 0 || d == 0 ||
			    d > PROBE_DEPTH_MAX)
				return -1;
			o->depth = (unsigned)d;
			break;
		}
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (o->depth > 1 && (o->mode != MODE_URING_DSYNC || o->thread))
		return -1;
	return optind == argc && o->dir != NULL ? 0 : -1;
}

/* The file, `size` bytes of zeros on disk, synced with its directory. */
static int
zero_file(const char *dir, char *path, size_t n, uint64_t size, int *fd_out)
{
	static const char zeros[PROBE_ZERO_CHUNK];
	uint64_t off = 0;
	int fd, rc;

	if (fs_join(path, n, dir, "fsync-probe.XXXXXX") != 0)
		return -ENAMETOOLONG;
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
		return -errno;
	if ((rc = posix_fallocate(fd, 0, (off_t)size)) != 0) {
		rc = -rc;
		goto fail;
	}
	while (off < size) {
		uint64_t k =
		    size - off < sizeof(zeros) ? size - off : sizeof(zeros);
		if ((rc = fs_pwrite_all(fd, zeros, k, (int64_t)off)) != 0)
			goto fail;
		off += k;
	}
	if (fdatasync(fd) != 0) {
		rc = -errno;
		goto fail;
	}
	if ((rc = fs_sync_dir(dir)) != 0)
		goto fail;
	*fd_out = fd;
	return 0;
fail:
	close(fd);
	unlink(path);
	return rc;
}

/* Threads of this process named iou-wrk-*: io_uring's workers. */
static int
count_workers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[300], comm[64] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(
		    path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL &&
		    strncmp(comm, "iou-wrk", 7) == 0)
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

struct probe {
	struct probe_opts *o;
	int fd;         /* buffered: MODE_SYNC, MODE_URING_BUFFERED */
	int dfd;        /* O_DIRECT (| O_DSYNC for MODE_ODIRECT) */
	uint8_t *image; /* aligned copy of the file's written part */
	struct io_uring ring;
	bool ring_open;
	int efd; /* --wait eventfd: registered with the ring */
	/* --thread: the hand-off */
	pthread_t thr;
	int go_fd, done_fd;
	uint64_t next_i;
	const char *next_buf;
	int next_rc;
};

/* --wait eventfd and ringfd: poll(2) the descriptor, as an event loop
 * would, then take every completion there is. */
static int
uring_poll(struct probe *p, unsigned n)
{
	unsigned got = 0;
	int err = 0;

	while (got < n) {
		struct io_uring_cqe *cqe;
		struct pollfd pfd = {
			.fd = p->o->wait == WAIT_EVENTFD ? p->efd
			                                 : p->ring.ring_fd,
			.events = POLLIN,
		};
		uint64_t ev;

		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return -errno;
		if (p->o->wait == WAIT_EVENTFD &&
		    read(p->efd, &ev, sizeof(ev)) < 0 && errno != EAGAIN)
			return -errno;
		while (io_uring_peek_cqe(&p->ring, &cqe) == 0) {
			if (cqe->res < 0 && err == 0)
				err = cqe->res;
			io_uring_cqe_seen(&p->ring, cqe);
			got++;
		}
	}
	return err;
}

static int
uring_wait(struct probe *p, unsigned n)
{
	int rc, err = 0;

	if (p->o->wait != WAIT_ENTER) {
		rc = io_uring_submit(&p->ring);
		return rc < 0 ? rc : uring_poll(p, n);
	}
	rc = io_uring_submit_and_wait(&p->ring, n);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		rc = io_uring_wait_cqe(&p->ring, &cqe);
		if (rc < 0)
			return rc;
		if (cqe->res < 0 && err == 0)
			err = cqe->res;
		io_uring_cqe_seen(&p->ring, cqe);
	}
	return err;
}

/* Write i, made durable the way the mode says. */
static int
one(struct probe *p, uint64_t i, const char *buf)
{
	uint64_t off = i * p->o->bytes, end = off + p->o->bytes;
	uint64_t b0 = off / PROBE_BLOCK * PROBE_BLOCK;
	uint64_t b1 = (end + PROBE_BLOCK - 1) / PROBE_BLOCK * PROBE_BLOCK;
	struct io_uring_sqe *sqe;
	struct iovec v;
	ssize_t n;

	memcpy(p->image + off, buf, p->o->bytes);
	switch (p->o->mode) {
	case MODE_PWRITEV2_DSYNC:
		v = (struct iovec) { p->image + b0, b1 - b0 };
		n = pwritev2(p->dfd, &v, 1, (off_t)b0, RWF_DSYNC);
		return n < 0 ? -errno : n != (ssize_t)(b1 - b0) ? -EIO : 0;
	case MODE_SYNC:
		if (fs_pwrite_all(p->fd, buf, p->o->bytes, (int64_t)off) != 0)
			return -errno;
		return fdatasync(p->fd) != 0 ? -errno : 0;
	case MODE_ODIRECT:
		n = pwrite(p->dfd, p->image + b0, b1 - b0, (off_t)b0);
		return n < 0 ? -errno : n != (ssize_t)(b1 - b0) ? -EIO : 0;
	case MODE_URING_DSYNC:
		sqe = io_uring_get_sqe(&p->ring);
		io_uring_prep_write(
		    sqe, p->dfd, p->image + b0, (unsigned)(b1 - b0), b0);
		sqe->rw_flags = RWF_DSYNC;
		return uring_wait(p, 1);
	case MODE_URING_FSYNC:
	case MODE_URING_BUFFERED:
		sqe = io_uring_get_sqe(&p->ring);
		if (p->o->mode == MODE_URING_FSYNC)
			io_uring_prep_write(sqe, p->dfd, p->image + b0,
			    (unsigned)(b1 - b0), b0);
		else
			io_uring_prep_write(
			    sqe, p->fd, buf, (unsigned)p->o->bytes, off);
		sqe->flags |= IOSQE_IO_LINK;
		sqe = io_uring_get_sqe(&p->ring);
		io_uring_prep_fsync(sqe,
		    p->o->mode == MODE_URING_FSYNC ? p->dfd : p->fd,
		    IORING_FSYNC_DATASYNC);
		return uring_wait(p, 2);
	}
	return -EINVAL;
}

/* --depth: o.count whole-block writes, p->o->depth of them in flight,
 * each timed from its submission to its completion into `h`. */
static int
deep(struct probe *p, struct bench_hist *h, int64_t end)
{
	int64_t at[PROBE_DEPTH_MAX];
	uint64_t next = 0, done = 0;
	unsigned busy = 0;

	while (done < next || (next < p->o->count && clock_mono_ns() < end)) {
		struct io_uring_cqe *cqe;
		int rc;

		while (busy < p->o->depth && next < p->o->count &&
		    clock_mono_ns() < end) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);
			unsigned slot = (unsigned)(next % p->o->depth);

			memset(p->image + next * PROBE_BLOCK, 'x', PROBE_BLOCK);
			io_uring_prep_write(sqe, p->dfd,
			    p->image + next * PROBE_BLOCK, PROBE_BLOCK,
			    next * PROBE_BLOCK);
			sqe->rw_flags = RWF_DSYNC;
			sqe->user_data = slot;
			at[slot] = clock_mono_ns();
			next++;
			busy++;
		}
		rc = io_uring_submit_and_wait(&p->ring, 1);
		if (rc < 0)
			return rc;
		while (io_uring_peek_cqe(&p->ring, &cqe) == 0) {
			if (cqe->res < 0)
				return cqe->res;
			bench_hist_record(h,
			    (uint64_t)(clock_mono_ns() - at[cqe->user_data]));
			io_uring_cqe_seen(&p->ring, cqe);
			busy--;
			done++;
		}
	}
	return 0;
}

/* --thread: the writer thread, one write per wake-up of go_fd; stops at
 * UINT64_MAX. */
static void *
writer(void *arg)
{
	struct probe *p = arg;
	uint64_t ev;

	for (;;) {
		if (read(p->go_fd, &ev, sizeof(ev)) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p->next_i == UINT64_MAX)
			break;
		p->next_rc = one(p, p->next_i, p->next_buf);
		ev = 1;
		if (write(p->done_fd, &ev, sizeof(ev)) < 0)
			break;
	}
	return NULL;
}

/* --thread: hands write i to the writer, polls and reads its answer, as
 * an event loop would. (The eventfds order the fields: a write to one
 * and the read that sees it are a release and an acquire.) */
static int
handoff(struct probe *p, uint64_t i, const char *buf)
{
	struct pollfd pfd = { .fd = p->done_fd, .events = POLLIN };
	uint64_t ev = 1;

	p->next_i = i;
	p->next_buf = buf;
	if (write(p->go_fd, &ev, sizeof(ev)) < 0)
		return -errno;
	for (;;) {
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return -errno;
		if (read(p->done_fd, &ev, sizeof(ev)) == sizeof(ev))
			return p->next_rc;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
	}
}

int
main(int argc, char **argv)
{
	struct probe_opts o = { 0 };
	struct probe p = { .o = &o,
		.fd = -1,
		.dfd = -1,
		.efd = -1,
		.go_fd = -1,
		.done_fd = -1 };
	struct bench_hist *h;
	char path[4096], *buf;
	int64_t start, end;
	double secs;
	uint64_t size;
	int rc = 0, workers = 0;

	if (parse(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	size =
	    (o.count * o.bytes + PROBE_BLOCK - 1) / PROBE_BLOCK * PROBE_BLOCK;
	if (o.depth > 1)
		size = o.count * PROBE_BLOCK; /* a block a write */
	h = malloc(sizeof(*h));
	buf = malloc(o.bytes);
	if (h == NULL || buf == NULL ||
	    posix_memalign((void **)&p.image, PROBE_BLOCK, size) != 0) {
		fprintf(stderr, "fsync_probe: out of memory\n");
		return 1;
	}
	memset(p.image, 0, size);
	bench_hist_init(h);
	memset(buf, 'x', o.bytes);
	rc = zero_file(o.dir, path, sizeof(path), size, &p.fd);
	if (rc != 0) {
		fprintf(stderr, "fsync_probe: a file in %s: %s\n", o.dir,
		    strerror(-rc));
		return 1;
	}
	if (o.mode == MODE_ODIRECT || o.mode == MODE_URING_DSYNC ||
	    o.mode == MODE_URING_FSYNC || o.mode == MODE_PWRITEV2_DSYNC) {
		p.dfd = open(path,
		    O_RDWR | O_DIRECT | O_CLOEXEC |
		        (o.mode == MODE_ODIRECT ? O_DSYNC : 0));
		if (p.dfd < 0)
			rc = -errno;
	}
	if (rc == 0 && o.mode >= MODE_URING_DSYNC &&
	    o.mode <= MODE_URING_BUFFERED) {
		rc = io_uring_queue_init(2 * PROBE_DEPTH_MAX, &p.ring, 0);
		p.ring_open = rc == 0;
		if (rc == 0 && o.wait == WAIT_EVENTFD) {
			p.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
			rc = p.efd < 0
			    ? -errno
			    : io_uring_register_eventfd(&p.ring, p.efd);
		}
	}
	if (rc == 0 && o.thread) {
		p.go_fd = eventfd(0, EFD_CLOEXEC);
		p.done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (p.go_fd < 0 || p.done_fd < 0)
			rc = -errno;
		else
			rc = -pthread_create(&p.thr, NULL, writer, &p);
		if (rc != 0)
			o.thread = false;
	}
	if (rc != 0) {
		fprintf(stderr, "fsync_probe: %s (mode %s): %s\n", path,
		    mode_names[o.mode], strerror(-rc));
		unlink(path);
		return 1;
	}
	start = clock_mono_ns();
	end = start + (int64_t)o.max_ms * 1000000;
	if (o.depth > 1) {
		rc = deep(&p, h, end);
		if (rc != 0)
			fprintf(stderr, "fsync_probe: %s: %s\n", path,
			    strerror(-rc));
	}
	for (uint64_t i = 0; i < o.count && o.depth == 1; i++) {
		int64_t t0 = clock_mono_ns();

		if (t0 >= end)
			break;
		rc = o.thread ? handoff(&p, i, buf) : one(&p, i, buf);
		if (rc != 0) {
			fprintf(stderr, "fsync_probe: %s: %s\n", path,
			    strerror(-rc));
			break;
		}
		bench_hist_record(h, (uint64_t)(clock_mono_ns() - t0));
		if (i % 64 == 63) {
			int k = count_workers();

			if (k > workers)
				workers = k;
		}
	}
	if (o.thread) {
		uint64_t ev = 1;

		p.next_i = UINT64_MAX;
		if (write(p.go_fd, &ev, sizeof(ev)) < 0)
			pthread_cancel(p.thr);
		pthread_join(p.thr, NULL);
	}
	if (p.go_fd >= 0)
		close(p.go_fd);
	if (p.done_fd >= 0)
		close(p.done_fd);
	if (p.ring_open)
		io_uring_queue_exit(&p.ring);
	if (p.efd >= 0)
		close(p.efd);
	if (p.dfd >= 0)
		close(p.dfd);
	close(p.fd);
	unlink(path);
	if (rc != 0)
		return 1;
	secs = (double)(clock_mono_ns() - start) / 1e9;
	if (o.depth > 1)
		o.bytes = PROBE_BLOCK;
	printf("%s%s%s%s: write %llu B, durable, %llu times in %.2f s (%.0f "
	       "a second, %u at once): p50 %.0f us, p99 %.0f us, mean %.0f "
	       "us; iou-wrk threads seen: %d\n",
	    mode_names[o.mode], p.ring_open ? " wait " : "",
	    p.ring_open ? wait_names[o.wait] : "", o.thread ? " thread" : "",
	    (unsigned long long)o.bytes, (unsigned long long)h->count, secs,
	    (double)h->count / secs, o.depth,
	    (double)bench_hist_percentile(h, 50) / 1000.0,
	    (double)bench_hist_percentile(h, 99) / 1000.0,
	    bench_hist_mean(h) / 1000.0, workers);
	if (o.json)
		printf("{\"mode\":\"%s\",\"wait\":\"%s\",\"thread\":%s,"
		       "\"depth\":%u,\"bytes\":%llu,\"count\":%llu,"
		       "\"per_sec\":%.1f,"
		       "\"p50_us\":%.1f,\"p99_us\":%.1f,\"mean_us\":%.1f,"
		       "\"iou_wrk\":%d}\n",
		    mode_names[o.mode], wait_names[o.wait],
		    o.thread ? "true" : "false", o.depth,
		    (unsigned long long)o.bytes, (unsigned long long)h->count,
		    (double)h->count / secs,
		    (double)bench_hist_percentile(h, 50) / 1000.0,
		    (double)bench_hist_percentile(h, 99) / 1000.0,
		    bench_hist_mean(h) / 1000.0, workers);
	free(h);
	free(buf);
	free(p.image);
	return 0;
}
