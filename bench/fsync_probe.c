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
 * A benchmark, never a test. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
};

struct probe_opts {
	const char *dir;
	uint64_t count;
	uint64_t bytes;
	uint64_t max_ms;
	bool json;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: fsync_probe --dir DIR [--count N] [--bytes B] "
	    "[--max-time DUR] [--json]\n"
	    "  pwrite of B bytes (default %d) + fdatasync, N times (default "
	    "%d),\n"
	    "  at increasing offsets of a preallocated, zero-filled file in "
	    "DIR;\n"
	    "  stops early after DUR (default 30s). Prints p50, p99 and the "
	    "mean.\n",
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
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->count = PROBE_COUNT;
	o->bytes = PROBE_BYTES;
	o->max_ms = 30000;
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

int
main(int argc, char **argv)
{
	struct probe_opts o = { 0 };
	struct bench_hist *h;
	char path[4096], *buf;
	int64_t start, end;
	int fd = -1, rc = 0;

	if (parse(argc, argv, &o) != 0) {
		usage(stderr);
		return 2;
	}
	h = malloc(sizeof(*h));
	buf = malloc(o.bytes);
	if (h == NULL || buf == NULL) {
		fprintf(stderr, "fsync_probe: out of memory\n");
		return 1;
	}
	bench_hist_init(h);
	memset(buf, 'x', o.bytes);
	rc = zero_file(o.dir, path, sizeof(path), o.count * o.bytes, &fd);
	if (rc != 0) {
		fprintf(stderr, "fsync_probe: a file in %s: %s\n", o.dir,
		    strerror(-rc));
		return 1;
	}
	start = clock_mono_ns();
	end = start + (int64_t)o.max_ms * 1000000;
	for (uint64_t i = 0; i < o.count; i++) {
		int64_t t0 = clock_mono_ns();

		if (t0 >= end)
			break;
		rc = fs_pwrite_all(fd, buf, o.bytes, (int64_t)(i * o.bytes));
		if (rc == 0 && fdatasync(fd) != 0)
			rc = -errno;
		if (rc != 0) {
			fprintf(stderr, "fsync_probe: %s: %s\n", path,
			    strerror(-rc));
			break;
		}
		bench_hist_record(h, (uint64_t)(clock_mono_ns() - t0));
	}
	close(fd);
	unlink(path);
	if (rc != 0)
		return 1;
	printf("pwrite %llu B + fdatasync, %llu times in %.2f s: p50 %.0f us, "
	       "p99 %.0f us, mean %.0f us\n",
	    (unsigned long long)o.bytes, (unsigned long long)h->count,
	    (double)(clock_mono_ns() - start) / 1e9,
	    (double)bench_hist_percentile(h, 50) / 1000.0,
	    (double)bench_hist_percentile(h, 99) / 1000.0,
	    bench_hist_mean(h) / 1000.0);
	if (o.json)
		printf("{\"bytes\":%llu,\"count\":%llu,\"p50_us\":%.1f,"
		       "\"p99_us\":%.1f,\"mean_us\":%.1f}\n",
		    (unsigned long long)o.bytes, (unsigned long long)h->count,
		    (double)bench_hist_percentile(h, 50) / 1000.0,
		    (double)bench_hist_percentile(h, 99) / 1000.0,
		    bench_hist_mean(h) / 1000.0);
	free(h);
	free(buf);
	return 0;
}
