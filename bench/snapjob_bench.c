/* snapjob_bench - what one job of the snapshot worker costs, both ways
 * (server/core/bgsnap.c): from the newest snapshot, loaded, plus the log
 * after it ("load", as every job did before --snapshot-reuse, and as the
 * first one still does), or from the state it was written from, kept by
 * the worker, plus the same log ("kept").
 *
 *   snapjob_bench --dir DIR --out OUT [--rounds R] [--mode load|kept|both]
 *
 * DIR is a data directory sluiced left (stopped): its newest snapshot at
 * L1 and its log up to L2 > L1. Each round, in a fresh queue:
 *   load  rebuilds the state at L2 (recover_live: the snapshot at L1, then
 *         the records after it), writes it as a snapshot in OUT, reads it
 *         back whole (snap_load), and frees the queue, as the worker did;
 *   kept  first rebuilds the state at L1 (not counted: the worker holds
 *         it), then applies the records after L1 to it (recover_live_after),
 *         writes and reads back as above (the queue is freed uncounted: a
 *         worker frees the state it keeps once, not every job).
 * Before each job the log's segments are dropped from the page cache
 * (posix_fadvise DONTNEED), as a log written with O_DIRECT never is in it.
 * Prints per round the counted part's CPU (user, system) and minor page
 * faults (fresh memory the kernel zeroed, mostly), all of this thread's
 * (getrusage RUSAGE_THREAD); the counted part is the function
 * snapjob_counted, for callgrind: valgrind --tool=callgrind
 * --toggle-collect=snapjob_counted build/bin/snapjob_bench ...
 * A benchmark, never a test. */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/recover.h"
#include "log/snap.h"
#include "queue/qrecover.h"
#include "queue/queue.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

enum { SNAP_BUF = 1 << 20 };

struct job {
	const char *dir, *out;
	uint64_t l1, l2;
	bool kept;
	struct queue *q;
	uint8_t *buf;
	uint64_t records, entries;
};

static int
emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	return snap_writer_add(arg, type, a, alen, b, blen);
}

/* The job's counted part (not inlined: callgrind's toggle names it). */
__attribute__((noinline)) static int
snapjob_counted(struct job *j)
{
	struct recover_result res;
	struct snap_writer w;
	int rc;

	if (j->kept)
		rc = recover_live_after(
		    j->dir, j->l1, j->l2, &queue_recover_ops, j->q, &res);
	else
		rc =
		    recover_live(j->dir, j->l2, &queue_recover_ops, j->q, &res);
	if (rc != 0)
		return rc;
	j->records = res.records;
	rc =
	    snap_writer_open(&w, j->out, j->l2, res.epoch, 0, j->buf, SNAP_BUF);
	if (rc != 0)
		return rc;
	if ((rc = queue_snapshot_write(j->q, emit, &w)) != 0) {
		snap_writer_abort(&w);
		return rc;
	}
	j->entries = w.entries;
	if ((rc = snap_writer_finish(&w)) != 0)
		return rc;
	rc = snap_load(w.tmp, NULL, NULL, NULL, NULL);
	unlink(w.tmp);
	if (!j->kept) {
		queue_free(j->q);
		j->q = NULL;
	}
	return rc;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: snapjob_bench --dir DIR --out OUT [--rounds R] "
	    "[--mode load|kept|both]\n");
	exit(2);
}

/* The newest snapshot's LSN (l1) and the log's last (l2). */
static int
ends(const char *dir, uint64_t *l1, uint64_t *l2)
{
	static const struct recover_ops none = { 0 };
	struct recover_result res;
	int rc = recover(dir, 0, 0, &none, NULL, &res);

	*l1 = res.snap_lsn;
	*l2 = res.last_lsn;
	return rc;
}

/* Drops DIR's segments from the page cache. */
static void
uncache(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		int fd;

		if (n < 4 || strcmp(e->d_name + n - 4, ".wal") != 0)
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
	}
	closedir(d);
}

static double
tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = { { "dir", 1, NULL, 'd' },
		{ "out", 1, NULL, 'o' }, { "rounds", 1, NULL, 'r' },
		{ "mode", 1, NULL, 'm' }, { NULL, 0, NULL, 0 } };
	struct job j = { 0 };
	const char *mode = "both";
	int rounds = 3, c, rc;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'd')
			j.dir = optarg;
		else if (c == 'o')
			j.out = optarg;
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'm')
			mode = optarg;
		else
			usage();
	}
	if (j.dir == NULL || j.out == NULL || rounds < 1 ||
	    (strcmp(mode, "load") != 0 && strcmp(mode, "kept") != 0 &&
	        strcmp(mode, "both") != 0))
		usage();
	log_set_level(LOG_WARN);
	if (mkdir(j.out, 0700) != 0 && access(j.out, W_OK) != 0) {
		perror(j.out);
		return 1;
	}
	if ((rc = ends(j.dir, &j.l1, &j.l2)) != 0 || j.l1 == 0 ||
	    j.l2 <= j.l1) {
		fprintf(stderr,
		    "snapjob_bench: %s needs a snapshot and records after it "
		    "(rc %d, snapshot %" PRIu64 ", last %" PRIu64 ")\n",
		    j.dir, rc, j.l1, j.l2);
		return 1;
	}
	j.buf = malloc(SNAP_BUF);
	if (j.buf == NULL)
		return 1;
	printf("snapshot at %" PRIu64 ", log to %" PRIu64 "\n", j.l1, j.l2);
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2; k++) {
			struct rusage a, b;
			struct recover_result res;

			j.kept = k == 1;
			if (strcmp(mode, j.kept ? "load" : "kept") == 0)
				continue;
			j.q = queue_new(NULL);
			if (j.q == NULL)
				return 1;
			if (j.kept &&
			    (rc = recover_live(j.dir, j.l1, &queue_recover_ops,
			         j.q, &res)) != 0) {
				fprintf(stderr, "state at %" PRIu64 ": %s\n",
				    j.l1, sluice_strerror(rc));
				return 1;
			}
			uncache(j.dir);
			getrusage(RUSAGE_THREAD, &a);
			rc = snapjob_counted(&j);
			getrusage(RUSAGE_THREAD, &b);
			if (rc != 0) {
				fprintf(
				    stderr, "job: %s\n", sluice_strerror(rc));
				return 1;
			}
			printf("%s: records %" PRIu64 " entries %" PRIu64
			       " user_ms %.0f sys_ms %.0f minflt %ld\n",
			    j.kept ? "kept" : "load", j.records, j.entries,
			    tv_ms(b.ru_utime) - tv_ms(a.ru_utime),
			    tv_ms(b.ru_stime) - tv_ms(a.ru_stime),
			    b.ru_minflt - a.ru_minflt);
			fflush(stdout);
			queue_free(j.q);
			j.q = NULL;
		}
	}
	free(j.buf);
	return 0;
}
