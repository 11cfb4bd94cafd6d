/* Tests of src/log/logdir.c: a directory of segments read as one log -
 * order, the rules that join segments, the end position, truncation and
 * the replication cursor. Segments are built by hand (t_log.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log/logdir.h"
#include "log/seg.h"
#include "sluice.h"
#include "t_lib.h"
#include "t_log.h"
#include "util/log.h"

enum { SIZE = 64 << 10 };

static const char *
dir_of(void **state)
{
	return ((struct t_dir *)*state)->path;
}

/* Three segments: 1..20, 21..40, 41..45 (epoch 1, 1, 2). */
static void
three_segments(const char *dir, uint64_t *last_offs)
{
	t_seg_file(dir, 1, 1, SIZE, 20, NULL);
	t_seg_file(dir, 21, 1, SIZE, 20, NULL);
	t_seg_file(dir, 41, 2, SIZE, 5, last_offs);
}

/* Only segment names are listed, in LSN order. */
static void
test_logdir_lists_segments_in_order(void **state)
{
	struct logdir ld;

	three_segments(dir_of(state), NULL);
	t_write_file(t_path(*state, "000001.prealloc"), "x", 1);
	t_write_file(t_path(*state, "snap-1.snap"), "x", 1);
	assert_int_equal(logdir_list(dir_of(state), &ld), 0);
	assert_int_equal(ld.n, 3);
	assert_true(ld.first[0] == 1 && ld.first[1] == 21 && ld.first[2] == 41);
	logdir_fini(&ld);
	assert_int_equal(logdir_list(t_path(*state, "missing"), &ld), 0);
	assert_int_equal(ld.n, 0);
	logdir_fini(&ld);
}

/* The scan visits every record across segments and ends where the next
 * record goes. */
static void
test_logdir_scan_crosses_segments(void **state)
{
	struct logdir_end e;
	uint64_t offs[6], want = 1;

	three_segments(dir_of(state), offs);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, 0, t_visit_seq, &want, &e), 0);
	assert_true(want == 46);
	assert_true(e.last_lsn == 45);
	assert_true(e.epoch == 2);
	assert_true(e.seg_first_lsn == 41);
	assert_true(e.seg_size == SIZE);
	assert_true(e.offset == offs[5]);
	assert_true(e.nsegs == 3 && e.nrec == 45);
	assert_false(e.torn);
}

/* From an LSN, earlier segments are skipped and only later records are
 * visited; the end is the same. */
static void
test_logdir_scan_from_lsn(void **state)
{
	struct logdir_end e;
	uint64_t want = 30;

	three_segments(dir_of(state), NULL);
	assert_int_equal(
	    logdir_scan(dir_of(state), 30, 0, t_visit_seq, &want, &e), 0);
	assert_true(want == 46 && e.last_lsn == 45);
	assert_true(e.nrec == 25); /* the first segment was not read */
	want = 46;
	assert_int_equal(
	    logdir_scan(dir_of(state), 46, 0, t_visit_seq, &want, &e), 0);
	assert_true(want == 46 && e.last_lsn == 45);
}

/* An empty directory is an empty log. */
static void
test_logdir_scan_of_empty_dir(void **state)
{
	struct logdir_end e;

	assert_int_equal(logdir_scan(dir_of(state), 0, 0, NULL, NULL, &e), 0);
	assert_true(e.last_lsn == 0 && e.seg_first_lsn == 0 && e.nsegs == 0);
}

/* A missing middle segment is a gap: corruption naming the segment after
 * it and the last good LSN. */
static void
test_logdir_scan_gap_is_corruption(void **state)
{
	struct logdir_end e;
	char path[512];

	three_segments(dir_of(state), NULL);
	assert_int_equal(seg_path(path, sizeof(path), dir_of(state), 21), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, LOGDIR_CUT, NULL, NULL, &e),
	    SLUICE_ECORRUPT);
	assert_non_null(strstr(e.bad_path, "00000000000000000041.wal"));
	assert_true(e.bad_lsn == 20);
	assert_non_null(e.bad_what);
}

/* A torn tail is legal only in the last segment. */
static void
test_logdir_scan_torn_record_before_last_segment_is_corruption(void **state)
{
	struct logdir_end e;
	uint64_t offs[21];
	const char *p;

	t_seg_file(dir_of(state), 1, 1, SIZE, 20, NULL);
	t_seg_file(dir_of(state), 41, 1, SIZE, 5, NULL);
	p = t_seg_file(dir_of(state), 21, 1, SIZE, 20, offs);
	t_zero(p, offs[19] + 8, offs[20] - offs[19] - 8);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, LOGDIR_CUT, NULL, NULL, &e),
	    SLUICE_ECORRUPT);
	assert_non_null(strstr(e.bad_path, "00000000000000000021.wal"));
	assert_true(e.bad_off == offs[19] && e.bad_lsn == 39);
}

/* A torn tail of the last segment is reported, cut, and the end is
 * before it. */
static void
test_logdir_scan_cuts_torn_tail_of_last_segment(void **state)
{
	struct logdir_end e;
	uint64_t offs[6];
	char path[512];

	three_segments(dir_of(state), offs);
	assert_int_equal(seg_path(path, sizeof(path), dir_of(state), 41), 0);
	t_zero(path, offs[4] + 30, 8);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, LOGDIR_CUT, NULL, NULL, &e), 0);
	assert_true(e.torn && e.cut);
	assert_true(e.torn_off == offs[4]);
	assert_true(e.last_lsn == 44 && e.offset == offs[4]);
	assert_int_equal(logdir_scan(dir_of(state), 0, 0, NULL, NULL, &e), 0);
	assert_false(e.torn);
	assert_true(e.last_lsn == 44);
}

/* A last segment whose header never reached the disk is dropped; the log
 * ends in the segment before, even when the scan started past it. */
static void
test_logdir_scan_drops_last_segment_with_torn_header(void **state)
{
	struct logdir_end e;
	uint64_t offs[6];
	const char *p;
	struct logdir ld;

	t_seg_file(dir_of(state), 1, 1, SIZE, 20, NULL);
	t_seg_file(dir_of(state), 21, 1, SIZE, 5, offs);
	p = t_seg_file(dir_of(state), 26, 1, SIZE, 0, NULL);
	t_zero(p, 0, SEG_HDR_SIZE);
	assert_int_equal(logdir_scan(dir_of(state), 0, 0, NULL, NULL, &e), 0);
	assert_true(e.torn && !e.dropped);
	assert_true(e.last_lsn == 25 && e.seg_first_lsn == 21);
	assert_true(e.offset == offs[5]);

	assert_int_equal(
	    logdir_scan(dir_of(state), 100, LOGDIR_CUT, NULL, NULL, &e), 0);
	assert_true(e.dropped && e.cut);
	assert_true(e.last_lsn == 25 && e.seg_first_lsn == 21);
	assert_true(e.offset == offs[5] && e.nsegs == 2);
	assert_int_equal(logdir_list(dir_of(state), &ld), 0);
	assert_int_equal(ld.n, 2);
	logdir_fini(&ld);
}

/* The only segment, torn at creation: an empty log continuing at its
 * name's LSN. */
static void
test_logdir_scan_only_segment_torn_at_creation(void **state)
{
	struct logdir_end e;
	const char *p;

	p = t_seg_file(dir_of(state), 77, 1, SIZE, 0, NULL);
	t_zero(p, 0, SEG_HDR_SIZE);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, LOGDIR_CUT, NULL, NULL, &e), 0);
	assert_true(e.dropped);
	assert_true(e.last_lsn == 76 && e.seg_first_lsn == 0);
}

/* Asking for records that were removed says so. */
static void
test_logdir_scan_from_removed_lsn_is_enoent(void **state)
{
	struct logdir_end e;
	char path[512];

	three_segments(dir_of(state), NULL);
	assert_int_equal(seg_path(path, sizeof(path), dir_of(state), 1), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(
	    logdir_scan(dir_of(state), 5, 0, NULL, NULL, &e), -ENOENT);
	assert_int_equal(logdir_scan(dir_of(state), 21, 0, NULL, NULL, &e), 0);
	assert_true(e.last_lsn == 45);
	/* From the start: whatever is there. */
	assert_int_equal(logdir_scan(dir_of(state), 0, 0, NULL, NULL, &e), 0);
	assert_true(e.last_lsn == 45 && e.nrec == 25);
}

/* A segment whose name and header disagree, or whose epoch goes down, is
 * corruption. */
static void
test_logdir_scan_header_mismatches_are_corruption(void **state)
{
	struct logdir_end e;
	char path[512];
	struct buf b;

	t_seg_file(dir_of(state), 1, 3, SIZE, 20, NULL);
	t_seg_image(&b, 21, 2, SIZE, 3, NULL);
	assert_int_equal(seg_path(path, sizeof(path), dir_of(state), 21), 0);
	t_write_file(path, b.data, b.len);
	buf_fini(&b);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, 0, NULL, NULL, &e), SLUICE_ECORRUPT);

	t_seg_image(&b, 22, 3, SIZE, 3, NULL);
	t_write_file(path, b.data, b.len);
	buf_fini(&b);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, 0, NULL, NULL, &e), SLUICE_ECORRUPT);
}

/* Truncating drops later segments and the records after the LSN; the log
 * then ends there. */
static void
test_logdir_truncate_drops_records_after_lsn(void **state)
{
	struct logdir_end e;
	uint64_t want = 1;

	three_segments(dir_of(state), NULL);
	assert_int_equal(logdir_truncate(dir_of(state), 30), 0);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, 0, t_visit_seq, &want, &e), 0);
	assert_true(e.last_lsn == 30 && want == 31 && !e.torn);
	assert_true(e.nsegs == 2 && e.seg_first_lsn == 21);

	/* Exactly at a segment's end: the next segment goes. */
	assert_int_equal(logdir_truncate(dir_of(state), 20), 0);
	assert_int_equal(logdir_scan(dir_of(state), 0, 0, NULL, NULL, &e), 0);
	assert_true(e.last_lsn == 20 && !e.torn);

	/* Past the end: nothing changes. */
	assert_int_equal(logdir_truncate(dir_of(state), 1000), 0);
	assert_int_equal(logdir_scan(dir_of(state), 0, 0, NULL, NULL, &e), 0);
	assert_true(e.last_lsn == 20);

	/* To nothing: the segment stays, empty, so the next LSN is kept. */
	assert_int_equal(logdir_truncate(dir_of(state), 0), 0);
	assert_int_equal(logdir_scan(dir_of(state), 0, 0, NULL, NULL, &e), 0);
	assert_true(e.last_lsn == 0 && e.nsegs == 1 && e.seg_first_lsn == 1);
}

/* The cursor yields records in order across segments, never past the
 * limit, and picks up where it stopped. */
static void
test_logdir_cursor_reads_across_segments_up_to_limit(void **state)
{
	struct logdir_cursor *c;
	struct rec_view v;
	uint64_t want = 15;

	three_segments(dir_of(state), NULL);
	assert_int_equal(logdir_cursor_open(dir_of(state), 15, &c), 0);
	while (want <= 30) {
		assert_int_equal(logdir_cursor_next(c, 30, &v), 0);
		assert_true(v.hdr.lsn == want);
		assert_true(t_body_ok(want, v.body, v.body_len));
		want++;
	}
	assert_int_equal(logdir_cursor_next(c, 30, &v), 1);
	assert_true(logdir_cursor_lsn(c) == 31);
	while (want <= 45) {
		assert_int_equal(logdir_cursor_next(c, 100, &v), 0);
		assert_true(v.hdr.lsn == want);
		want++;
	}
	assert_int_equal(logdir_cursor_next(c, 100, &v), 1);
	logdir_cursor_close(c);
}

/* Records appended to the segment after the cursor reached the end are
 * found on the next call; so is a new segment. */
static void
test_logdir_cursor_sees_records_appended_later(void **state)
{
	struct logdir_cursor *c;
	struct rec_view v;
	uint64_t offs[4];
	const char *p;
	struct buf b;

	p = t_seg_file(dir_of(state), 1, 1, SIZE, 3, offs);
	assert_int_equal(logdir_cursor_open(dir_of(state), 1, &c), 0);
	for (int i = 1; i <= 3; i++)
		assert_int_equal(logdir_cursor_next(c, 3, &v), 0);
	assert_int_equal(logdir_cursor_next(c, 4, &v), 1);
	buf_init(&b);
	t_put_rec(&b, 4, 1);
	t_poke(p, offs[3], b.data, b.len);
	buf_fini(&b);
	assert_int_equal(logdir_cursor_next(c, 4, &v), 0);
	assert_true(v.hdr.lsn == 4);
	t_seg_file(dir_of(state), 5, 1, SIZE, 2, NULL);
	assert_int_equal(logdir_cursor_next(c, 6, &v), 0);
	assert_true(v.hdr.lsn == 5);
	assert_int_equal(logdir_cursor_next(c, 6, &v), 0);
	assert_true(v.hdr.lsn == 6);
	assert_int_equal(logdir_cursor_next(c, 6, &v), 1);
	logdir_cursor_close(c);
}

/* The cursor that reads with O_DIRECT (the snapshot worker's) yields
 * what the plain one does: across its 1 MiB windows (records cut by a
 * window's end are read again from their block), across segments, into
 * a last segment whose size is no multiple of a block, never past the
 * limit; and records appended later are found, as by the plain one. */
static void
test_logdir_direct_cursor_reads_what_the_plain_one_does(void **state)
{
	enum { N1 = 30000, N2 = 10, BIG = 4 << 20, ODD = (64 << 10) + 40 };
	struct logdir_cursor *c[2];
	struct rec_view v[2];
	uint64_t offs[N2 + 1];
	const char *p;
	struct buf b;

	t_seg_file(dir_of(state), 1, 1, BIG, N1, NULL);
	p = t_seg_file(dir_of(state), N1 + 1, 1, ODD, N2, offs);
	assert_int_equal(logdir_cursor_open(dir_of(state), 7, &c[0]), 0);
	assert_int_equal(logdir_cursor_open_direct(dir_of(state), 7, &c[1]), 0);
	for (uint64_t want = 7; want <= N1 + N2 - 1; want++) {
		for (int k = 0; k < 2; k++)
			assert_int_equal(
			    logdir_cursor_next(c[k], N1 + N2 - 1, &v[k]), 0);
		assert_true(v[0].hdr.lsn == want && v[1].hdr.lsn == want);
		assert_true(v[0].body_len == v[1].body_len);
		assert_memory_equal(v[0].body, v[1].body, v[0].body_len);
		assert_true(t_body_ok(want, v[1].body, v[1].body_len));
	}
	for (int k = 0; k < 2; k++)
		assert_int_equal(
		    logdir_cursor_next(c[k], N1 + N2 - 1, &v[k]), 1);
	assert_int_equal(logdir_cursor_next(c[1], N1 + N2, &v[1]), 0);
	assert_true(v[1].hdr.lsn == N1 + N2);
	assert_int_equal(logdir_cursor_next(c[1], N1 + N2 + 1, &v[1]), 1);
	buf_init(&b);
	t_put_rec(&b, N1 + N2 + 1, 1);
	t_poke(p, offs[N2], b.data, b.len);
	buf_fini(&b);
	assert_int_equal(logdir_cursor_next(c[1], N1 + N2 + 1, &v[1]), 0);
	assert_true(v[1].hdr.lsn == N1 + N2 + 1);
	assert_true(t_body_ok(N1 + N2 + 1, v[1].body, v[1].body_len));
	for (int k = 0; k < 2; k++)
		logdir_cursor_close(c[k]);
}

/* Bytes that do not decode below the limit are corruption. */
static void
test_logdir_cursor_reports_corruption_below_limit(void **state)
{
	struct logdir_cursor *c;
	struct rec_view v;
	uint64_t offs[11];
	const char *p;

	p = t_seg_file(dir_of(state), 1, 1, SIZE, 10, offs);
	t_flip(p, offs[5] + 44, 1);
	assert_int_equal(logdir_cursor_open(dir_of(state), 1, &c), 0);
	for (int i = 1; i <= 5; i++)
		assert_int_equal(logdir_cursor_next(c, 10, &v), 0);
	assert_int_equal(logdir_cursor_next(c, 10, &v), SLUICE_ECORRUPT);
	logdir_cursor_close(c);
}

/* A cursor from a removed LSN fails with -ENOENT (send a snapshot). */
static void
test_logdir_cursor_from_removed_lsn_is_enoent(void **state)
{
	struct logdir_cursor *c = NULL;

	t_seg_file(dir_of(state), 21, 1, SIZE, 5, NULL);
	assert_int_equal(logdir_cursor_open(dir_of(state), 3, &c), -ENOENT);
	assert_null(c);
}

/* cursor_read copies whole records as stored, about max_bytes at a time,
 * and they decode back. */
static void
test_logdir_cursor_read_copies_raw_records(void **state)
{
	struct logdir_cursor *c;
	uint64_t last = 0, want = 1;
	struct buf out;
	int n, total = 0;

	three_segments(dir_of(state), NULL);
	assert_int_equal(logdir_cursor_open(dir_of(state), 1, &c), 0);
	buf_init(&out);
	for (int round = 0; round < 100; round++) {
		n = logdir_cursor_read(c, 45, 200, &out, &last);
		assert_true(n >= 0);
		if (n == 0)
			break;
		total += n;
	}
	assert_int_equal(total, 45);
	assert_true(last == 45);
	for (size_t off = 0; off < out.len;) {
		struct rec_view v;

		assert_int_equal(
		    rec_decode(out.data + off, out.len - off, &v), REC_VALID);
		assert_true(v.hdr.lsn == want);
		want++;
		off += v.size;
	}
	assert_true(want == 46);
	buf_fini(&out);
	logdir_cursor_close(c);
}

int
main(void)
{
#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, t_tmpdir_setup, t_tmpdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_logdir_lists_segments_in_order),
		T(test_logdir_scan_crosses_segments),
		T(test_logdir_scan_from_lsn),
		T(test_logdir_scan_of_empty_dir),
		T(test_logdir_scan_gap_is_corruption),
		T(test_logdir_scan_torn_record_before_last_segment_is_corruption),
		T(test_logdir_scan_cuts_torn_tail_of_last_segment),
		T(test_logdir_scan_drops_last_segment_with_torn_header),
		T(test_logdir_scan_only_segment_torn_at_creation),
		T(test_logdir_scan_from_removed_lsn_is_enoent),
		T(test_logdir_scan_header_mismatches_are_corruption),
		T(test_logdir_truncate_drops_records_after_lsn),
		T(test_logdir_cursor_reads_across_segments_up_to_limit),
		T(test_logdir_cursor_sees_records_appended_later),
		T(test_logdir_direct_cursor_reads_what_the_plain_one_does),
		T(test_logdir_cursor_reports_corruption_below_limit),
		T(test_logdir_cursor_from_removed_lsn_is_enoent),
		T(test_logdir_cursor_read_copies_raw_records),
	};
#undef T
	log_set_level(LOG_ERR + 0);
	return cmocka_run_group_tests_name("logdir", tests, NULL, NULL);
}
