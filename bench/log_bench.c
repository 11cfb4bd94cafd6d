/* log_bench - the write-ahead log against the raw disk it writes to.
 *
 * Writer: 100-byte records through the WAL with fsync `always`, from P
 * producers emulated as closed loops on one thread (the server's shape):
 * each producer appends its next record when its previous one became
 * durable; one event-loop turn reaps completions, lets the producers whose
 * records are durable append again, and submits. Measured: records/s,
 * fdatasyncs/s, records per fdatasync, p50 and p99 time from append to
 * durable.
 *
 * Raw disk: pwrite + fdatasync of the same batch (records per fdatasync
 * measured above, rounded) in a loop, into a file preallocated the way
 * the writer's segments are, in the same directory. The ratio writer/raw
 * (records/s) at equal batch sizes says what the writer costs.
 *
 * --prealloc compares, for fdatasync latency, appending to a file that
 * grows, writing into fallocated (unwritten) extents, and writing into
 * extents already zero-filled - the choice seg_prealloc makes.
 *
 * Prints a table, then one JSON line. A benchmark, never a test. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/logdir.h"
#include "log/rec.h"
#include "log/seg.h"
#include "log/wal.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/fsutil.h"
#include "util/log.h"

enum {
	RECORD = 100,
	MAX_RUNS = 8,
	RAW_FILE = 64 << 20,
	PREALLOC_FILE = 256 << 20, /* no wrap in a --prealloc run */
};

#define SLICE_S 0.5 /* writer and raw disk alternate in slices this long */

struct opts {
	const char *dir;
	double seconds;
	int producers[MAX_RUNS];
	int nruns;
	bool prealloc;
	bool no_zero_fill;
	enum wal_commit commit;
};

struct result {
	int producers;
	double writer_rps;
	double fsyncs_ps;
	double recs_per_fsync;
	double p50_us;
	double p99_us;
	int raw_batch;
	double raw_rps;
	double raw_p50_us;
	double raw_p99_us;
	double ratio;
};

static void
die(const char *what, int rc)
{
	fprintf(stderr, "log_bench: %s: %s\n", what, sluice_strerror(rc));
	exit(1);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double
pct(int64_t *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(p * (double)(n - 1));
	return (double)v[i] / 1000.0;
}

static void
rm_dir_files(const char *dir)
{
	struct logdir ld;
	char path[512];

	if (logdir_list(dir, &ld) == 0) {
		for (size_t i = 0; i < ld.n; i++)
			if (seg_path(path, sizeof(path), dir, ld.first[i]) == 0)
				unlink(path);
		logdir_fini(&ld);
	}
}

/* ---------------------------------------------------------------------
 * The writer, closed loop
 * ------------------------------------------------------------------- */

struct waiting {
	uint64_t lsn;
	int64_t t0;
};

/* The writer's side of one producer count, accumulated over slices. */
struct writer {
	struct wal *w;
	int producers;
	struct waiting *fifo;
	size_t cap;
	int64_t *lat;
	size_t nlat, latcap;
	uint64_t recs;
	uint64_t fsyncs;
	int64_t ns;
};

static void
writer_open(const struct opts *o, int producers, struct writer *wr)
{
	struct wal_config cfg = { .dir = o->dir,
		.fsync = WAL_FSYNC_ALWAYS,
		.no_zero_fill = o->no_zero_fill,
		.commit = o->commit };
	int rc;

	memset(wr, 0, sizeof(*wr));
	wr->producers = producers;
	wr->cap = (size_t)producers + 1;
	wr->fifo = calloc(wr->cap, sizeof(*wr->fifo));
	if (wr->fifo == NULL)
		die("calloc", -ENOMEM);
	rm_dir_files(o->dir);
	rc = wal_open(&cfg, NULL, &wr->w);
	if (rc != 0)
		die("wal_open", rc);
	rc = wal_prealloc_wait(wr->w, 60000);
	if (rc != 0)
		die("preallocating", rc);
}

static void
writer_close(const struct opts *o, struct writer *wr)
{
	int rc = wal_close(wr->w);

	if (rc != 0)
		die("wal_close", rc);
	free(wr->fifo);
	free(wr->lat);
	rm_dir_files(o->dir);
}

/* Runs the producers for `secs`, then lets them finish their last record;
 * `measure` adds what happened to the totals. */
static void
writer_slice(struct writer *wr, double secs, bool measure)
{
	static uint8_t body[RECORD];
	struct wal *w = wr->w;
	size_t head = 0, tail = 0;
	int64_t t_start = clock_mono_ns();
	int64_t t_end = t_start + (int64_t)(secs * 1e9);
	struct wal_stats s0, s1;
	bool stopping = false;
	int rc;

	memset(body, 'x', sizeof(body));
	wal_stats(w, &s0);
	for (int p = 0; p < wr->producers; p++) {
		rc = wal_append(w, 1, clock_now_ms(), body, sizeof(body), 0,
		    &wr->fifo[tail].lsn);
		if (rc != 0)
			die("wal_append", rc);
		wr->fifo[tail].t0 = clock_mono_ns();
		tail = (tail + 1) % wr->cap;
	}
	wal_submit(w);
	while (head != tail) {
		struct pollfd pfd[2] = {
			{ .fd = wal_fd(w), .events = POLLIN },
			{ .fd = wal_wake_fd(w), .events = POLLIN },
		};
		int64_t now;
		uint64_t d;

		/* an inline commit made them durable in wal_submit */
		if (wal_durable_lsn(w) < wr->fifo[head].lsn)
			poll(pfd, 2, 1000);
		rc = wal_reap(w);
		if (rc != 0)
			die("wal_reap", rc);
		now = clock_mono_ns();
		stopping = stopping || now >= t_end;
		d = wal_durable_lsn(w);
		while (head != tail && wr->fifo[head].lsn <= d) {
			if (measure) {
				if (wr->nlat == wr->latcap) {
					wr->latcap = wr->latcap ? wr->latcap * 2
					                        : 1 << 16;
					wr->lat = realloc(wr->lat,
					    wr->latcap * sizeof(*wr->lat));
					if (wr->lat == NULL)
						die("realloc", -ENOMEM);
				}
				wr->lat[wr->nlat++] = now - wr->fifo[head].t0;
				wr->recs++;
			}
			head = (head + 1) % wr->cap;
			if (stopping)
				continue;
			rc = wal_append(w, 1, clock_now_ms(), body,
			    sizeof(body), 0, &wr->fifo[tail].lsn);
			if (rc != 0)
				die("wal_append", rc);
			wr->fifo[tail].t0 = now;
			tail = (tail + 1) % wr->cap;
		}
		rc = wal_submit(w);
		if (rc != 0)
			die("wal_submit", rc);
	}
	wal_stats(w, &s1);
	if (measure) {
		wr->fsyncs += s1.fsyncs - s0.fsyncs;
		wr->ns += clock_mono_ns() - t_start;
	}
}

/* ---------------------------------------------------------------------
 * The raw disk
 * ------------------------------------------------------------------- */

/* A file like a segment: allocated and zero-filled (or as asked). */
static int
raw_file(const char *dir, const char *name, int how, uint64_t size, char *path,
    size_t n)
{
	int fd, rc;

	rc = fs_join(path, n, dir, name);
	if (rc != 0)
		die("path", rc);
	unlink(path);
	if (how == 0) { /* grows as written */
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			die("open", -errno);
		return fd;
	}
	rc = seg_prealloc(path, size, how == 2, &fd, NULL);
	if (rc != 0)
		die("preallocating", rc);
	return fd;
}

/* Latencies of raw pwrite + fdatasync, accumulated over slices. */
struct raw {
	int fd;
	uint64_t limit; /* wrap to the start here; 0: the file grows */
	char path[512];
	uint64_t off;
	int64_t *lat;
	size_t n, cap;
	int64_t ns;
};

/* pwrite + fdatasync of `bytes` at increasing offsets for `secs`. */
static void
raw_slice(struct raw *rw, size_t bytes, double secs)
{
	static uint8_t buf[1 << 20];
	int64_t start = clock_mono_ns(), end = start + (int64_t)(secs * 1e9);

	if (bytes > sizeof(buf))
		die("batch too large", -EINVAL);
	memset(buf, 'x', bytes);
	for (;;) {
		int64_t t0 = clock_mono_ns();
		int rc;

		if (t0 >= end)
			break;
		if (rw->limit != 0 && rw->off + bytes > rw->limit)
			rw->off = SEG_HDR_SIZE;
		rc = fs_pwrite_all(rw->fd, buf, bytes, (int64_t)rw->off);
		if (rc == 0 && fdatasync(rw->fd) < 0)
			rc = -errno;
		if (rc != 0)
			die("pwrite/fdatasync", rc);
		rw->off += bytes;
		if (rw->n == rw->cap) {
			rw->cap = rw->cap ? rw->cap * 2 : 1 << 14;
			rw->lat = realloc(rw->lat, rw->cap * sizeof(*rw->lat));
			if (rw->lat == NULL)
				die("realloc", -ENOMEM);
		}
		rw->lat[rw->n++] = clock_mono_ns() - t0;
	}
	rw->ns += clock_mono_ns() - start;
}

/* One producer count: writer and raw disk in alternating slices, so that
 * both see the same machine (other load comes and goes). The raw batch is
 * the writer's records per fdatasync, measured in a first slice. */
static void
run(const struct opts *o, int producers, struct result *r)
{
	int slices = (int)(o->seconds / SLICE_S + 0.5);
	struct writer wr;
	struct raw rw = { 0 };
	size_t bytes;

	if (slices < 1)
		slices = 1;
	writer_open(o, producers, &wr);
	writer_slice(&wr, SLICE_S, true); /* warm-up, and the batch size */
	r->raw_batch = wr.fsyncs ? (int)((double)wr.recs / wr.fsyncs + 0.5) : 1;
	if (r->raw_batch < 1)
		r->raw_batch = 1;
	bytes = (size_t)r->raw_batch * rec_size(RECORD);
	wr.recs = wr.fsyncs = 0;
	wr.nlat = 0;
	wr.ns = 0;
	rw.off = SEG_HDR_SIZE;
	rw.limit = RAW_FILE; /* zero-filled: a wrap finds written extents */
	rw.fd = raw_file(
	    o->dir, "raw.bench", 2, RAW_FILE, rw.path, sizeof(rw.path));
	for (int i = 0; i < slices; i++) {
		writer_slice(&wr, SLICE_S, true);
		raw_slice(&rw, bytes, SLICE_S);
	}
	close(rw.fd);
	unlink(rw.path);

	r->producers = producers;
	r->writer_rps = (double)wr.recs / ((double)wr.ns / 1e9);
	r->fsyncs_ps = (double)wr.fsyncs / ((double)wr.ns / 1e9);
	r->recs_per_fsync = wr.fsyncs ? (double)wr.recs / wr.fsyncs : 0;
	qsort(wr.lat, wr.nlat, sizeof(*wr.lat), cmp_i64);
	r->p50_us = pct(wr.lat, wr.nlat, 0.50);
	r->p99_us = pct(wr.lat, wr.nlat, 0.99);
	r->raw_rps = (double)rw.n * r->raw_batch / ((double)rw.ns / 1e9);
	qsort(rw.lat, rw.n, sizeof(*rw.lat), cmp_i64);
	r->raw_p50_us = pct(rw.lat, rw.n, 0.50);
	r->raw_p99_us = pct(rw.lat, rw.n, 0.99);
	r->ratio = r->raw_rps > 0 ? r->writer_rps / r->raw_rps : 0;
	free(rw.lat);
	writer_close(o, &wr);
}

/* ---------------------------------------------------------------------
 * Preallocation choices
 * ------------------------------------------------------------------- */

static void
prealloc_compare(const struct opts *o)
{
	static const char *const names[] = { "append (file grows)",
		"fallocate only", "fallocate + zero-fill" };
	static const size_t sizes[] = { 144, 4608, 36864 };
	int slices = (int)(o->seconds / SLICE_S + 0.5);

	if (slices < 1)
		slices = 1;
	printf("\nfdatasync latency by preallocation: pwrite + fdatasync at "
	       "increasing offsets,\nthe three files in alternating %.1f s "
	       "slices, %.1f s each\n",
	    SLICE_S, slices * SLICE_S);
	printf("%-24s %8s %10s %10s %10s %14s\n", "file", "bytes", "p50 us",
	    "p99 us", "syncs/s", "prealloc ms/64M");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct raw rw[3];
		double ms[3];

		for (int how = 0; how < 3; how++) {
			char name[32];
			int64_t t0 = clock_mono_ns();

			memset(&rw[how], 0, sizeof(rw[how]));
			snprintf(name, sizeof(name), "prealloc%d.bench", how);
			rw[how].fd = raw_file(o->dir, name, how, PREALLOC_FILE,
			    rw[how].path, sizeof(rw[how].path));
			rw[how].off = SEG_HDR_SIZE;
			rw[how].limit = how == 0 ? 0 : PREALLOC_FILE;
			ms[how] = (double)(clock_mono_ns() - t0) / 1e6 *
			    (64 << 20) / PREALLOC_FILE;
		}
		for (int i = 0; i < slices; i++)
			for (int how = 0; how < 3; how++)
				raw_slice(&rw[how], sizes[s], SLICE_S);
		for (int how = 0; how < 3; how++) {
			double p50, p99, rate;

			qsort(rw[how].lat, rw[how].n, sizeof(int64_t), cmp_i64);
			p50 = pct(rw[how].lat, rw[how].n, 0.5);
			p99 = pct(rw[how].lat, rw[how].n, 0.99);
			rate = (double)rw[how].n / ((double)rw[how].ns / 1e9);
			if (rw[how].limit != 0 &&
			    rw[how].n * sizes[s] > PREALLOC_FILE)
				printf("(wrapped: later writes found written "
				       "extents)\n");
			printf("%-24s %8zu %10.0f %10.0f %10.0f %14.1f\n",
			    names[how], sizes[s], p50, p99, rate, ms[how]);
			printf(
			    "{\"bench\":\"log_prealloc\",\"file\":\"%s\","
			    "\"bytes\":%zu,\"p50_us\":%.1f,\"p99_us\":%.1f,"
			    "\"syncs_per_s\":%.0f,\"prealloc_ms_per_64m\":%.1f}"
			    "\n",
			    names[how], sizes[s], p50, p99, rate, ms[how]);
			free(rw[how].lat);
			close(rw[how].fd);
			unlink(rw[how].path);
		}
	}
}

/* ---------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr,
	    "usage: log_bench [--dir DIR] [--seconds S] [--producers "
	    "1,32,256] [--prealloc]\n"
	    "  --dir DIR       where to write (default ./log-bench.tmp, "
	    "removed after)\n"
	    "  --seconds S     per measurement (default 3)\n"
	    "  --producers L   closed-loop producer counts (default "
	    "1,32,256)\n"
	    "  --prealloc      also compare preallocation methods\n"
	    "  --no-zero-fill  the writer's spares: fallocate only\n"
	    "  --commit M      inline (the default: write + fdatasync on "
	    "the loop's\n"
	    "                  thread), ring (page-cache write + fdatasync\n"
	    "                  through io_uring) or direct (one O_DIRECT\n"
	    "                  RWF_DSYNC write through io_uring)\n");
	exit(2);
}

static void
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "seconds", required_argument, NULL, 's' },
		{ "producers", required_argument, NULL, 'p' },
		{ "prealloc", no_argument, NULL, 'a' },
		{ "no-zero-fill", no_argument, NULL, 'z' },
		{ "commit", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->dir = "log-bench.tmp";
	o->seconds = 3;
	o->producers[0] = 1;
	o->producers[1] = 32;
	o->producers[2] = 256;
	o->nruns = 3;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dir = optarg;
			break;
		case 's':
			o->seconds = atof(optarg);
			if (o->seconds <= 0)
				usage();
			break;
		case 'p': {
			char *s = optarg, *end;

			o->nruns = 0;
			while (*s != '\0' && o->nruns < MAX_RUNS) {
				long v = strtol(s, &end, 10);

				if (end == s || v < 1 || v > 100000)
					usage();
				o->producers[o->nruns++] = (int)v;
				s = *end == ',' ? end + 1 : end;
				if (end == s && *s != '\0')
					usage();
			}
			break;
		}
		case 'a':
			o->prealloc = true;
			break;
		case 'z':
			o->no_zero_fill = true;
			break;
		case 'c':
			if (strcmp(optarg, "inline") == 0)
				o->commit = WAL_COMMIT_INLINE;
			else if (strcmp(optarg, "ring") == 0)
				o->commit = WAL_COMMIT_RING;
			else if (strcmp(optarg, "direct") == 0)
				o->commit = WAL_COMMIT_DIRECT;
			else
				usage();
			break;
		default:
			usage();
		}
	}
}

int
main(int argc, char **argv)
{
	struct result res[MAX_RUNS];
	struct opts o = { 0 };
	int rc;

	parse(argc, argv, &o);
	log_set_level(LOG_WARN);
	rc = fs_mkdir_p(o.dir);
	if (rc != 0)
		die(o.dir, rc);
	printf("write-ahead log, %d-byte records (%zu on disk), fsync "
	       "always, commit %s, spares %s, %.1f s per side per producer "
	       "count (alternating %.1f s slices), dir %s\n",
	    RECORD, rec_size(RECORD),
	    o.commit == WAL_COMMIT_RING         ? "ring"
	        : o.commit == WAL_COMMIT_DIRECT ? "direct"
	                                        : "inline",
	    o.no_zero_fill ? "fallocated" : "zero-filled", o.seconds, SLICE_S,
	    o.dir);
	printf("%9s %12s %10s %9s %9s %9s | %6s %12s %9s %9s %7s\n",
	    "producers", "records/s", "fsyncs/s", "rec/fsync", "p50 us",
	    "p99 us", "batch", "raw rec/s", "raw p50", "raw p99", "ratio");
	for (int i = 0; i < o.nruns; i++) {
		struct result *r = &res[i];

		run(&o, o.producers[i], r);
		printf("%9d %12.0f %10.0f %9.1f %9.0f %9.0f | %6d %12.0f "
		       "%9.0f %9.0f %6.0f%%\n",
		    r->producers, r->writer_rps, r->fsyncs_ps,
		    r->recs_per_fsync, r->p50_us, r->p99_us, r->raw_batch,
		    r->raw_rps, r->raw_p50_us, r->raw_p99_us, r->ratio * 100);
		fflush(stdout);
	}
	if (o.prealloc)
		prealloc_compare(&o);
	printf("{\"bench\":\"log\",\"record_bytes\":%d,\"fsync\":\"always\","
	       "\"runs\":[",
	    RECORD);
	for (int i = 0; i < o.nruns; i++) {
		const struct result *r = &res[i];

		printf("%s{\"producers\":%d,\"records_per_s\":%.0f,"
		       "\"fsyncs_per_s\":%.0f,\"records_per_fsync\":%.1f,"
		       "\"p50_us\":%.0f,\"p99_us\":%.0f,\"raw_batch\":%d,"
		       "\"raw_records_per_s\":%.0f,\"raw_p50_us\":%.0f,"
		       "\"raw_p99_us\":%.0f,\"ratio\":%.3f}",
		    i ? "," : "", r->producers, r->writer_rps, r->fsyncs_ps,
		    r->recs_per_fsync, r->p50_us, r->p99_us, r->raw_batch,
		    r->raw_rps, r->raw_p50_us, r->raw_p99_us, r->ratio);
	}
	printf("]}\n");
	rmdir(o.dir);
	return 0;
}
