/* Tests of src/log/seg.c: the segment header, names, preallocation, and
 * the scan that tells a torn tail from corruption. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "log/seg.h"
#include "sluice.h"
#include "t_lib.h"
#include "t_log.h"

enum { SIZE = 64 << 10 };

/* The header round-trips; any changed byte is refused. */
static void
test_seg_header_round_trips_and_detects_damage(void **state)
{
	struct seg_hdr h = { .version = SEG_VERSION,
		.hdr_size = SEG_HDR_SIZE,
		.first_lsn = 123,
		.epoch = 4,
		.created = 1700000000000,
		.size = SIZE },
	               got;
	uint8_t b[SEG_HDR_SIZE];

	(void)state;
	seg_hdr_encode(b, &h);
	assert_int_equal(seg_hdr_decode(b, sizeof(b), &got), 0);
	assert_true(got.first_lsn == 123 && got.epoch == 4);
	assert_true(got.size == SIZE && got.created == h.created);
	for (size_t i = 0; i < sizeof(b); i++) {
		b[i] ^= 1;
		assert_int_equal(
		    seg_hdr_decode(b, sizeof(b), &got), SLUICE_ECORRUPT);
		b[i] ^= 1;
	}
	assert_int_equal(seg_hdr_decode(b, 63, &got), SLUICE_ECORRUPT);
}

/* Names are 20 digits and ".wal", and nothing else parses. */
static void
test_seg_names_parse_only_exact_form(void **state)
{
	char name[SEG_NAME_MAX];
	uint64_t lsn;

	(void)state;
	seg_name(name, 42);
	assert_string_equal(name, "00000000000000000042.wal");
	assert_true(seg_parse_name(name, &lsn));
	assert_true(lsn == 42);
	seg_name(name, UINT64_MAX);
	assert_true(seg_parse_name(name, &lsn));
	assert_true(lsn == UINT64_MAX);
	assert_false(seg_parse_name("0000000000000000042.wal", &lsn));
	assert_false(seg_parse_name("00000000000000000042.wa", &lsn));
	assert_false(seg_parse_name("0000000000000000004x.wal", &lsn));
	assert_false(seg_parse_name("99999999999999999999.wal", &lsn));
	assert_false(seg_parse_name("00000000000000000042.wal.tmp", &lsn));
	assert_false(seg_parse_name("000001.prealloc", &lsn));
}

/* A preallocated segment has its full size, reads as zeros, and refuses
 * to replace an existing file; with the zero fill (then, or later by
 * seg_zero_fill) no extent of it is left unwritten. */
static void
test_seg_prealloc_makes_zeroed_file_of_full_size(void **state)
{
	const char *path = t_path(*state, "spare");
	uint8_t chunk[4096], zeros[4096] = { 0 };
	bool zeroed;
	int fd;

	for (int zero_fill = 0; zero_fill < 2; zero_fill++) {
		assert_int_equal(
		    seg_prealloc(path, SIZE, zero_fill, &fd, &zeroed), 0);
		if (zero_fill)
			assert_true(zeroed);
		/* without it, zeros are written only where nothing else
		 * allocates the space */
		if (!zeroed) {
			atomic_bool stop = true;

			assert_int_not_equal(t_has_unwritten(path), 0);
			/* asked to stop, it writes nothing */
			assert_int_equal(
			    seg_zero_fill(path, fd, SIZE, &stop), -ECANCELED);
			assert_int_not_equal(t_has_unwritten(path), 0);
			atomic_store(&stop, false);
			assert_int_equal(
			    seg_zero_fill(path, fd, SIZE, &stop), 0);
		}
		assert_int_not_equal(t_has_unwritten(path), 1);
		close(fd);
		assert_int_equal(t_file_size(path), SIZE);
		for (uint64_t off = 0; off < SIZE; off += sizeof(chunk)) {
			t_peek(path, off, chunk, sizeof(chunk));
			assert_memory_equal(chunk, zeros, sizeof(chunk));
		}
		assert_int_equal(
		    seg_prealloc(path, SIZE, true, &fd, NULL), -EEXIST);
		assert_int_equal(unlink(path), 0);
	}
}

/* A clean segment visits every record in order and ends after the last
 * one, not torn. */
static void
test_seg_scan_visits_every_record(void **state)
{
	uint64_t offs[51], want = 10;
	const char *path;
	struct seg_scan s;

	path =
	    t_seg_file(((struct t_dir *)*state)->path, 10, 2, SIZE, 50, offs);
	assert_int_equal(seg_scan(path, 0, 0, t_visit_seq, &want, &s), 0);
	assert_true(want == 60);
	assert_true(s.nrec == 50);
	assert_true(s.last_lsn == 59);
	assert_true(s.last_epoch == 2);
	assert_true(s.end == offs[50]);
	assert_false(s.torn);
	assert_false(s.hdr_bad);
	assert_true(s.hdr.first_lsn == 10);
}

/* from_lsn skips the visits, not the checks. */
static void
test_seg_scan_from_lsn_visits_only_the_rest(void **state)
{
	const char *path;
	struct seg_scan s;
	uint64_t want = 30;

	path =
	    t_seg_file(((struct t_dir *)*state)->path, 10, 2, SIZE, 50, NULL);
	assert_int_equal(seg_scan(path, 30, 0, t_visit_seq, &want, &s), 0);
	assert_true(want == 60);
	assert_true(s.nrec == 50);
}

/* An empty segment (header only) ends at the header, holding nothing. */
static void
test_seg_scan_of_empty_segment(void **state)
{
	const char *path;
	struct seg_scan s;

	path = t_seg_file(((struct t_dir *)*state)->path, 7, 1, SIZE, 0, NULL);
	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), 0);
	assert_true(s.nrec == 0);
	assert_true(s.last_lsn == 6);
	assert_true(s.end == SEG_HDR_SIZE);
	assert_false(s.torn);
}

/* The visitor's non-zero return stops the scan and is returned. */
static int
stop_at_five(const struct rec_hdr *h, const void *body, void *arg)
{
	(void)body;
	(void)arg;
	return h->lsn == 5 ? 1234 : 0;
}

static void
test_seg_scan_stops_when_visitor_says(void **state)
{
	const char *path;
	struct seg_scan s;

	path = t_seg_file(((struct t_dir *)*state)->path, 1, 1, SIZE, 10, NULL);
	assert_int_equal(seg_scan(path, 0, 0, stop_at_five, NULL, &s), 1234);
}

/* A file whose last record was cut short (a prefix of it, zeros after)
 * is a torn tail: reported with its offset and size, zeroed on request,
 * and clean afterwards. */
static void
test_seg_scan_cuts_torn_tail(void **state)
{
	uint64_t offs[11];
	struct seg_scan s;
	const char *path;

	path = t_seg_file(((struct t_dir *)*state)->path, 1, 1, SIZE, 10, offs);
	/* Only the first 20 bytes of record 10 made it. */
	t_zero(path, offs[9] + 20, offs[10] - offs[9] - 20);
	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), 0);
	assert_true(s.torn);
	assert_true(s.last_lsn == 9);
	assert_true(s.end == offs[9]);
	assert_true(s.torn_bytes > 16 && s.torn_bytes <= 20);
	assert_false(s.cut);
	assert_int_equal(t_file_size(path), SIZE);

	assert_int_equal(seg_scan(path, 0, SEG_SCAN_CUT, NULL, NULL, &s), 0);
	assert_true(s.torn && s.cut);
	assert_int_equal(t_file_size(path), SIZE); /* space stays */

	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), 0);
	assert_false(s.torn);
	assert_true(s.last_lsn == 9 && s.end == offs[9]);
}

/* Bytes after a cut-short record, past its length: a write interrupted
 * leaves zeros there (segments are preallocated with zeros), so this is
 * damage at that record, and nothing is cut. */
static void
test_seg_scan_garbage_after_a_torn_record_is_damage(void **state)
{
	uint64_t offs[11];
	struct seg_scan s;
	const char *path;
	uint8_t junk[7] = { 1, 2, 3, 4, 5, 6, 7 };

	path = t_seg_file(((struct t_dir *)*state)->path, 1, 1, SIZE, 10, offs);
	t_zero(path, offs[9] + 20, offs[10] - offs[9] - 20);
	t_poke(path, offs[10] + 100, junk, sizeof(junk));
	assert_int_equal(
	    seg_scan(path, 0, SEG_SCAN_CUT, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_int_equal(s.bad, SEG_BAD_AFTER);
	assert_true(s.bad_off == offs[9] && s.last_lsn == 9);
	assert_false(s.cut);
	/* Zeros where the record should start, bytes after: the same. */
	t_zero(path, offs[9], 20);
	assert_int_equal(
	    seg_scan(path, 0, SEG_SCAN_CUT, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_true(s.bad_off == offs[9]);
	/* A prefix whose LSN is not the next one: damage. */
	t_zero(path, offs[10] + 100, sizeof(junk));
	{
		uint8_t hdr[24];

		t_peek(path, offs[8], hdr, sizeof(hdr));
		t_poke(path, offs[9], hdr, sizeof(hdr)); /* LSN 9 again */
	}
	assert_int_equal(
	    seg_scan(path, 0, SEG_SCAN_CUT, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_int_equal(s.bad, SEG_BAD_HEADER);
}

/* A segment file shorter than its preallocated size was cut by something
 * other than the writer: damage, wherever its records end. */
static void
test_seg_scan_truncated_file_is_damage(void **state)
{
	uint64_t offs[6];
	struct seg_scan s;
	const char *path;

	path = t_seg_file(((struct t_dir *)*state)->path, 1, 1, SIZE, 5, offs);
	assert_int_equal(truncate(path, (off_t)offs[4] + 7), 0);
	assert_int_equal(
	    seg_scan(path, 0, SEG_SCAN_CUT, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_int_equal(s.bad, SEG_BAD_SHORT);
	assert_true(s.last_lsn == 4);
	assert_true(s.bad_off == offs[4]);
	assert_int_equal(t_file_size(path), offs[4] + 7); /* not touched */
	/* At a record boundary too. */
	assert_int_equal(truncate(path, (off_t)offs[3]), 0);
	assert_int_equal(
	    seg_scan(path, 0, SEG_SCAN_CUT, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_int_equal(s.bad, SEG_BAD_SHORT);
	assert_true(s.last_lsn == 3);
}

/* A flipped byte in a record followed by valid ones is corruption, named
 * by offset; the records before it were good. */
static void
test_seg_scan_flipped_byte_in_middle_is_corruption(void **state)
{
	uint64_t offs[21];
	struct seg_scan s;
	const char *path;

	path = t_seg_file(((struct t_dir *)*state)->path, 1, 1, SIZE, 20, offs);
	t_flip(path, offs[7] + 45, 0x40);
	assert_int_equal(
	    seg_scan(path, 0, SEG_SCAN_CUT, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_true(s.bad_off == offs[7]);
	assert_true(s.good_off == offs[8]);
	assert_true(s.last_lsn == 7);
	/* Nothing was cut. */
	t_flip(path, offs[7] + 45, 0x40);
	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), 0);
	assert_true(s.last_lsn == 20);
}

/* A flipped byte in the length field is corruption too, even when the
 * new length swallows every later record. */
static void
test_seg_scan_damaged_length_is_corruption(void **state)
{
	uint64_t offs[21];
	struct seg_scan s;
	const char *path;

	path = t_seg_file(((struct t_dir *)*state)->path, 1, 1, SIZE, 20, offs);
	t_flip(path, offs[3] + 1, 0x10); /* len += 4096 */
	assert_int_equal(
	    seg_scan(path, 0, SEG_SCAN_CUT, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_true(s.bad_off == offs[3]);
}

/* Whole valid records that break the sequence (wrong lsn, lower epoch)
 * are corruption: no crash writes them. */
static void
test_seg_scan_sequence_breaks_are_corruption(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	uint64_t offs[6];
	struct seg_scan s;
	struct buf b;
	char path[512];

	/* lsn 4 missing: 1 2 3 5 */
	buf_init(&b);
	t_seg_image(&b, 1, 1, SIZE, 3, offs);
	b.len = offs[3];
	t_put_rec(&b, 5, 1);
	assert_non_null(buf_extend(&b, SIZE - b.len));
	assert_int_equal(seg_path(path, sizeof(path), dir, 1), 0);
	t_write_file(path, b.data, b.len);
	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_int_equal(s.why, REC_WHY_LSN);
	assert_true(s.bad_off == offs[3] && s.last_lsn == 3);
	buf_fini(&b);

	/* epoch 5 then 4 */
	buf_init(&b);
	t_seg_image(&b, 1, 5, SIZE, 3, offs);
	b.len = offs[3];
	t_put_rec(&b, 4, 4);
	assert_non_null(buf_extend(&b, SIZE - b.len));
	t_write_file(path, b.data, b.len);
	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_int_equal(s.why, REC_WHY_EPOCH);
	buf_fini(&b);

	/* The first record must carry the header's first_lsn. */
	buf_init(&b);
	t_seg_image(&b, 1, 1, SIZE, 0, offs);
	b.len = offs[0];
	t_put_rec(&b, 2, 1);
	assert_non_null(buf_extend(&b, SIZE - b.len));
	t_write_file(path, b.data, b.len);
	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_int_equal(s.why, REC_WHY_LSN);
	buf_fini(&b);
}

/* A torn put whose payload holds a whole encoded record is still a torn
 * tail: that record cannot follow the last good one. */
static void
test_seg_scan_record_inside_torn_payload_is_not_corruption(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct rec_hdr h = { .type = 3, .lsn = 6, .epoch = 1 };
	struct buf b, inner;
	uint64_t offs[6], torn_at;
	struct seg_scan s;
	char path[512];

	buf_init(&inner);
	t_put_rec(&inner, 999, 1); /* a record with an unrelated lsn */
	t_seg_image(&b, 1, 1, SIZE, 5, offs);
	b.len = offs[5];
	torn_at = b.len;
	assert_int_equal(rec_encode(&b, &h, inner.data, inner.len), 0);
	b.data[torn_at + 32] ^= 1; /* its checksum no longer matches */
	assert_non_null(buf_extend(&b, SIZE - b.len));
	assert_int_equal(seg_path(path, sizeof(path), dir, 1), 0);
	t_write_file(path, b.data, b.len);
	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), 0);
	assert_true(s.torn);
	assert_true(s.end == torn_at && s.last_lsn == 5);
	buf_fini(&b);
	buf_fini(&inner);
}

/* A header of zeros with nothing after it is a creation cut short; a bad
 * header with records after it is corruption. */
static void
test_seg_scan_torn_header(void **state)
{
	uint64_t offs[4];
	struct seg_scan s;
	const char *path;

	path = t_seg_file(((struct t_dir *)*state)->path, 9, 1, SIZE, 0, NULL);
	t_zero(path, 0, SEG_HDR_SIZE);
	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), 0);
	assert_true(s.hdr_bad);
	assert_true(s.last_lsn == 8);
	assert_true(s.nrec == 0);

	path = t_seg_file(((struct t_dir *)*state)->path, 9, 1, SIZE, 3, offs);
	t_flip(path, 20, 0xff);
	assert_int_equal(seg_scan(path, 0, 0, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_true(s.bad_off == 0 && s.good_off == offs[0]);
}

/* The in-memory scan agrees with the file scan. */
static void
test_seg_scan_mem_matches_file(void **state)
{
	uint64_t offs[31], want = 100;
	struct seg_scan s;
	struct buf b;

	(void)state;
	t_seg_image(&b, 100, 3, SIZE, 30, offs);
	assert_int_equal(
	    seg_scan_mem(b.data, b.len, 0, t_visit_seq, &want, &s), 0);
	assert_true(want == 130 && s.end == offs[30] && !s.torn);
	b.data[offs[29] + 50] ^= 2;
	assert_int_equal(seg_scan_mem(b.data, b.len, 0, NULL, NULL, &s), 0);
	assert_true(s.torn && s.last_lsn == 128 && s.end == offs[29]);
	b.data[offs[10] + 50] ^= 2;
	assert_int_equal(
	    seg_scan_mem(b.data, b.len, 0, NULL, NULL, &s), SLUICE_ECORRUPT);
	assert_true(s.bad_off == offs[10]);
	buf_fini(&b);
}

/* seg_cut zeroes exactly the range and keeps the size. */
static void
test_seg_cut_zeroes_range_only(void **state)
{
	uint64_t offs[4];
	const char *path;
	uint8_t got[8];

	path = t_seg_file(((struct t_dir *)*state)->path, 1, 1, SIZE, 3, offs);
	assert_int_equal(seg_cut(path, offs[1], offs[3] - offs[1]), 0);
	assert_int_equal(t_file_size(path), SIZE);
	for (uint64_t off = offs[1]; off < offs[3]; off += 8) {
		t_peek(path, off, got, 8);
		assert_true(le_load_u64(got) == 0);
	}
	{
		struct seg_scan s;
		uint64_t want = 1;

		assert_int_equal(
		    seg_scan(path, 0, 0, t_visit_seq, &want, &s), 0);
		assert_true(s.last_lsn == 1 && !s.torn && want == 2);
	}
}

int
main(void)
{
#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, t_tmpdir_setup, t_tmpdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_seg_header_round_trips_and_detects_damage),
		T(test_seg_names_parse_only_exact_form),
		T(test_seg_prealloc_makes_zeroed_file_of_full_size),
		T(test_seg_scan_visits_every_record),
		T(test_seg_scan_from_lsn_visits_only_the_rest),
		T(test_seg_scan_of_empty_segment),
		T(test_seg_scan_stops_when_visitor_says),
		T(test_seg_scan_cuts_torn_tail),
		T(test_seg_scan_garbage_after_a_torn_record_is_damage),
		T(test_seg_scan_truncated_file_is_damage),
		T(test_seg_scan_flipped_byte_in_middle_is_corruption),
		T(test_seg_scan_damaged_length_is_corruption),
		T(test_seg_scan_sequence_breaks_are_corruption),
		T(test_seg_scan_record_inside_torn_payload_is_not_corruption),
		T(test_seg_scan_torn_header),
		T(test_seg_scan_mem_matches_file),
		T(test_seg_cut_zeroes_range_only),
	};
#undef T
	return cmocka_run_group_tests_name("seg", tests, NULL, NULL);
}
