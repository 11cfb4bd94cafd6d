/* t_log - helpers shared by the tests of src/log: segment images built by
 * hand (without the writer), deterministic record bodies, raw file edits.
 * Everything is static inline so each test uses what it needs. */
#ifndef SLUICE_T_LOG_H
#define SLUICE_T_LOG_H

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/logdir.h"
#include "log/rec.h"
#include "log/seg.h"
#include "log/wal.h"
#include "sluice.h"
#include "t_lib.h"
#include "util/buf.h"
#include "util/clock.h"

/* The body of record `lsn`: 1..61 bytes derived from the lsn, so a reader
 * can check what it got. */
static inline size_t
t_body(uint64_t lsn, uint8_t *out)
{
	size_t len = (size_t)(lsn * 7 % 61) + 1;

	for (size_t i = 0; i < len; i++)
		out[i] = (uint8_t)(lsn * 31 + i);
	return len;
}

/* True when `body` is t_body(lsn). */
static inline bool
t_body_ok(uint64_t lsn, const void *body, size_t len)
{
	uint8_t want[64];

	return t_body(lsn, want) == len && memcmp(want, body, len) == 0;
}

/* Appends record `lsn` (type 1 + lsn % 99, the given epoch, t_body). */
static inline void
t_put_rec(struct buf *b, uint64_t lsn, uint64_t epoch)
{
	struct rec_hdr h = { .type = (uint16_t)(1 + lsn % 99),
		.lsn = lsn,
		.epoch = epoch,
		.time = 1700000000000 + (int64_t)lsn };
	uint8_t body[64];
	size_t len = t_body(lsn, body);

	assert_int_equal(rec_encode(b, &h, body, len), 0);
}

/* A segment image of `size` bytes: header (first, epoch), then records
 * first .. first + n - 1, then zeros. offs[i] (when not NULL, n + 1
 * entries) gets the offset of record i, offs[n] the end of the data. */
static inline void
t_seg_image(struct buf *b, uint64_t first, uint64_t epoch, size_t size,
    unsigned n, uint64_t *offs)
{
	struct seg_hdr h = { .version = SEG_VERSION,
		.hdr_size = SEG_HDR_SIZE,
		.first_lsn = first,
		.epoch = epoch,
		.created = 1700000000000,
		.size = size };
	uint8_t *p;

	buf_init(b);
	p = buf_extend(b, SEG_HDR_SIZE);
	assert_non_null(p);
	seg_hdr_encode(p, &h);
	for (unsigned i = 0; i < n; i++) {
		if (offs != NULL)
			offs[i] = b->len;
		t_put_rec(b, first + i, epoch);
	}
	if (offs != NULL)
		offs[n] = b->len;
	assert_true(b->len <= size);
	assert_non_null(buf_extend(b, size - b->len));
}

static inline void
t_write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* Writes `n` bytes at `off` of an existing file. */
static inline void
t_poke(const char *path, uint64_t off, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, p, n, (off_t)off), (ssize_t)n);
	close(fd);
}

/* Reads `n` bytes at `off`. */
static inline void
t_peek(const char *path, uint64_t off, void *p, size_t n)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, p, n, (off_t)off), (ssize_t)n);
	close(fd);
}

/* XORs one byte of a file with `mask`. */
static inline void
t_flip(const char *path, uint64_t off, uint8_t mask)
{
	uint8_t c;

	t_peek(path, off, &c, 1);
	c ^= mask;
	t_poke(path, off, &c, 1);
}

/* Zeroes [off, off + n) of a file. */
static inline void
t_zero(const char *path, uint64_t off, size_t n)
{
	uint8_t *z = calloc(1, n + 1);

	assert_non_null(z);
	t_poke(path, off, z, n);
	free(z);
}

/* Writes segment image `first` into `dir` under its proper name; returns
 * the path (static storage, valid until the next call). */
static inline const char *
t_seg_file(const char *dir, uint64_t first, uint64_t epoch, size_t size,
    unsigned n, uint64_t *offs)
{
	static char path[512];
	struct buf b;

	t_seg_image(&b, first, epoch, size, n, offs);
	assert_int_equal(seg_path(path, sizeof(path), dir, first), 0);
	t_write_file(path, b.data, b.len);
	buf_fini(&b);
	return path;
}

/* A visitor that checks each record is the next expected one (arg: the
 * expected lsn, advanced) and that its body is t_body(lsn), or that it is
 * a pad the writer added (wal_config.inflight). */
static inline int
t_visit_seq(const struct rec_hdr *h, const void *body, void *arg)
{
	uint64_t *want = arg;

	assert_true(h->lsn == *want);
	assert_true(h->type == REC_PAD ||
	    t_body_ok(h->lsn, body, h->len - REC_HDR_SIZE));
	(*want)++;
	return 0;
}

/* ---------------------------------------------------------------------
 * The writer
 * ------------------------------------------------------------------- */

/* How t_wal_open's writers commit: as the server does by default
 * (O_DIRECT through io_uring); a test that runs for several ways sets it
 * before each round. */
static enum wal_commit t_wal_commit = WAL_COMMIT_DIRECT;
/* What a test that sets t_wal_commit for one writer puts back. */
static enum wal_commit t_wal_commit_default __attribute__((unused)) =
    WAL_COMMIT_DIRECT;
/* With WAL_COMMIT_DIRECT: durable by a linked fdatasync op rather than
 * RWF_DSYNC (wal_config.direct_fsync_op). */
static bool t_wal_fsync_op __attribute__((unused));
/* With WAL_COMMIT_DIRECT: batches in flight at once
 * (wal_config.inflight; 0: one). */
static unsigned t_wal_inflight __attribute__((unused));
/* With WAL_COMMIT_DIRECT: each batch durable the way faster lately
 * (wal_config.direct_adapt). */
static bool t_wal_adapt __attribute__((unused));

/* Scans `dir` (cutting a torn tail) and opens a writer after its end. */
static inline int
t_wal_open(const char *dir, enum wal_fsync fsync, uint64_t seg_size,
    unsigned prealloc, struct wal **out)
{
	struct wal_config cfg = { .dir = dir,
		.fsync = fsync,
		.interval_ms = 5,
		.seg_size = seg_size,
		.prealloc = prealloc,
		.commit = t_wal_commit,
		.direct_fsync_op = t_wal_fsync_op,
		.inflight = t_wal_inflight,
		.direct_adapt = t_wal_adapt };
	struct logdir_end end;
	int rc;

	rc = logdir_scan(dir, 0, LOGDIR_CUT, NULL, NULL, &end);
	if (rc != 0)
		return rc;
	return wal_open(&cfg, &end, out);
}

/* Appends the next record (body t_body(lsn)); returns wal_append's code
 * and its LSN in *lsn. */
static inline int
t_wal_try_append(struct wal *w, unsigned flags, uint64_t *lsn)
{
	uint64_t want = wal_last_lsn(w) + 1;
	uint8_t body[64];
	size_t len = t_body(want, body);
	int rc;

	rc = wal_append(w, (uint16_t)(1 + want % 99), 1000 + (int64_t)want,
	    body, len, flags, lsn);
	if (rc == 0)
		assert_true(*lsn == want);
	return rc;
}

static inline uint64_t
t_wal_append(struct wal *w)
{
	uint64_t lsn = 0;

	assert_int_equal(t_wal_try_append(w, 0, &lsn), 0);
	return lsn;
}

/* One event-loop turn: wait (at most `ms`) for the writer's fd, reap,
 * submit. Returns wal_reap's code. */
static inline int
t_wal_turn(struct wal *w, int ms)
{
	struct pollfd p[2] = {
		{ .fd = wal_fd(w), .events = POLLIN },
		{ .fd = wal_wake_fd(w), .events = POLLIN },
	};
	int rc;

	poll(p, 2, ms);
	rc = wal_reap(w);
	if (rc == 0)
		rc = wal_submit(w);
	return rc;
}

/* Turns the loop until `lsn` is durable (at most 10 s). */
static inline void
t_wal_wait_durable(struct wal *w, uint64_t lsn)
{
	int64_t deadline = clock_mono_ns() + 10 * 1000000000LL;

	assert_int_equal(wal_submit(w), 0);
	while (wal_durable_lsn(w) < lsn) {
		assert_true(clock_mono_ns() < deadline);
		assert_int_equal(t_wal_turn(w, 100), 0);
	}
}

/* Scans `dir` from the start, checking records 1.. are in sequence with
 * t_body bodies; returns the end. */
static inline struct logdir_end
t_scan_all(const char *dir, uint64_t first)
{
	struct logdir_end end;
	uint64_t want = first;

	assert_int_equal(logdir_scan(dir, 0, 0, t_visit_seq, &want, &end), 0);
	assert_true(want == end.last_lsn + 1);
	return end;
}

#endif
