/* Torn tails: a log written by the writer, then cut at every byte offset
 * inside its last records (zeros after the cut, or garbage), or with a
 * byte of its last record flipped. Each time the scan must yield exactly
 * the valid prefix, report the torn tail at the right offset, cut it, and
 * a writer reopened there must continue at the right LSN. A flipped byte
 * in the middle, followed by valid records, must be corruption naming
 * segment and offset. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/durable.h"
#include "log/logdir.h"
#include "log/seg.h"
#include "log/wal.h"
#include "sluice.h"
#include "t_lib.h"
#include "t_log.h"
#include "util/fsutil.h"
#include "util/log.h"

enum {
	SEG = 64 << 10,
	RECORDS = 1500, /* about two segments */
	LAST = 4,       /* records of the tail cut at every offset */
	FILES_MAX = 16,
};

/* The directory as the writer left it, to put back between cases. */
struct saved {
	int n;
	char name[FILES_MAX][256];
	uint8_t *data[FILES_MAX];
	size_t len[FILES_MAX];
	char last[512];          /* path of the last segment */
	uint64_t offs[LAST + 1]; /* its last records' offsets, and end */
	uint32_t lens[LAST];     /* their len fields */
	uint64_t first_of_last;  /* lsn of offs[0]'s record */
};

static void
rm_files(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	char path[512];

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		assert_int_equal(
		    fs_join(path, sizeof(path), dir, e->d_name), 0);
		assert_int_equal(unlink(path), 0);
	}
	closedir(d);
}

static void
restore(const char *dir, const struct saved *s)
{
	char path[512];

	rm_files(dir);
	for (int i = 0; i < s->n; i++) {
		assert_int_equal(
		    fs_join(path, sizeof(path), dir, s->name[i]), 0);
		t_write_file(path, s->data[i], s->len[i]);
	}
}

static void
saved_free(struct saved *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->data[i]);
}

/* Writes RECORDS records through the writer, closes, and remembers the
 * files and where the last LAST records lie. */
static void
write_log(const char *dir, struct saved *s)
{
	struct logdir_end end;
	struct seg_reader r;
	struct rec_view v;
	struct dirent *e;
	struct wal *w;
	uint64_t lsn = 0, ring_off[LAST];
	uint32_t ring_len[LAST];
	DIR *d;

	memset(s, 0, sizeof(*s));
	assert_int_equal(t_wal_open(dir, WAL_FSYNC_NEVER, SEG, 2, &w), 0);
	for (int i = 0; i < RECORDS; i++) {
		lsn = t_wal_append(w);
		if (i % 100 == 99)
			t_wal_wait_durable(w, lsn);
	}
	assert_int_equal(wal_close(w), 0);
	end = t_scan_all(dir, 1);
	assert_true(end.last_lsn == RECORDS && end.nsegs >= 2);

	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[512];

		if (e->d_name[0] == '.')
			continue;
		assert_true(s->n < FILES_MAX);
		snprintf(s->name[s->n], sizeof(s->name[0]), "%s", e->d_name);
		assert_int_equal(
		    fs_join(path, sizeof(path), dir, e->d_name), 0);
		assert_int_equal(
		    fs_read_all(path, &s->data[s->n], &s->len[s->n]), 0);
		s->n++;
	}
	closedir(d);

	/* Offsets of the last LAST records of the last segment. */
	assert_int_equal(
	    seg_path(s->last, sizeof(s->last), dir, end.seg_first_lsn), 0);
	assert_int_equal(seg_reader_open(&r, s->last), 0);
	assert_int_equal(seg_reader_hdr(&r), 0);
	for (;;) {
		uint64_t at = r.off;

		if (seg_reader_next(&r, &v) != REC_VALID)
			break;
		memmove(
		    ring_off, ring_off + 1, sizeof(ring_off[0]) * (LAST - 1));
		memmove(
		    ring_len, ring_len + 1, sizeof(ring_len[0]) * (LAST - 1));
		ring_off[LAST - 1] = at;
		ring_len[LAST - 1] = v.hdr.len;
	}
	assert_true(r.nrec >= LAST);
	memcpy(s->offs, ring_off, sizeof(ring_off[0]) * LAST);
	memcpy(s->lens, ring_len, sizeof(ring_len));
	s->offs[LAST] = r.off;
	assert_true(r.off == end.offset);
	s->first_of_last = RECORDS - LAST + 1;
	seg_reader_close(&r);
}

/* After a cut: reopen, append three, close; the log reads 1..last+3. */
static void
check_continues(const char *dir, uint64_t last)
{
	struct logdir_end end;
	struct wal *w;

	/* `never`: the close syncs once; the cases are many. */
	assert_int_equal(t_wal_open(dir, WAL_FSYNC_NEVER, SEG, 1, &w), 0);
	assert_true(wal_last_lsn(w) == last);
	for (int i = 1; i <= 3; i++)
		assert_true(t_wal_append(w) == last + (uint64_t)i);
	assert_int_equal(wal_close(w), 0);
	end = t_scan_all(dir, 1);
	assert_true(end.last_lsn == last + 3);
	assert_false(end.torn);
}

/* What the scan must find when bytes from `x` on (up to the old end)
 * are lost: the last record wholly before x, and a torn tail at the
 * start of the record x falls in (unless x falls in padding). */
static void
expect_after_cut(const struct saved *s, uint64_t x, uint64_t *last,
    uint64_t *torn_off, bool *torn)
{
	*last = s->first_of_last - 1;
	*torn_off = s->offs[0];
	*torn = false;
	for (int k = 0; k < LAST; k++) {
		if (x >= s->offs[k] + s->lens[k]) {
			/* Record k is whole (its padding is zeros anyway). */
			*last = s->first_of_last + (uint64_t)k;
			*torn_off = s->offs[k + 1];
			continue;
		}
		*torn = x > s->offs[k];
		break;
	}
}

/* Every cut inside the last records, zeros after it. */
static void
test_torn_cut_at_every_offset_with_zeros_after(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct saved s;
	int cases = 0;

	write_log(dir, &s);
	for (uint64_t x = s.offs[0]; x <= s.offs[LAST]; x++) {
		struct logdir_end end;
		uint64_t last, torn_off, want = 1;
		bool torn;

		restore(dir, &s);
		t_zero(s.last, x, (size_t)(s.offs[LAST] - x) + 8);
		expect_after_cut(&s, x, &last, &torn_off, &torn);
		assert_int_equal(
		    logdir_scan(dir, 0, LOGDIR_CUT, t_visit_seq, &want, &end),
		    0);
		assert_true(end.last_lsn == last);
		assert_true(want == last + 1);
		assert_true(end.torn == torn);
		if (torn) {
			assert_true(end.torn_off == torn_off);
			assert_true(end.cut);
			assert_true(end.torn_bytes <= x - torn_off);
		}
		assert_true(end.offset == torn_off);
		check_continues(dir, last);
		cases++;
	}
	assert_true(cases > LAST * REC_HDR_SIZE);
	saved_free(&s);
}

/* Every cut inside the last records, garbage after it: not what an
 * interrupted write leaves in a preallocated, zero-filled segment (the
 * garbage runs past the length of the record it starts in), so it is
 * damage, at the start of that record, and nothing is cut. */
static void
test_torn_cut_at_every_offset_with_garbage_after_is_damage(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	uint64_t seed = t_seed(0x5eed);
	uint8_t junk[256];
	struct saved s;

	write_log(dir, &s);
	for (uint64_t x = s.offs[0]; x <= s.offs[LAST]; x++) {
		struct logdir_end end;
		uint64_t last, torn_off, want = 1;
		size_t n = (size_t)(s.offs[LAST] - x) + 64;
		bool torn;

		assert_true(n <= sizeof(junk) * 4);
		restore(dir, &s);
		for (size_t done = 0; done < n;) {
			size_t m =
			    n - done < sizeof(junk) ? n - done : sizeof(junk);

			for (size_t i = 0; i < m; i++)
				junk[i] = (uint8_t)(1 + t_below(&seed, 255));
			t_poke(s.last, x + done, junk, m);
			done += m;
		}
		expect_after_cut(&s, x, &last, &torn_off, &torn);
		assert_int_equal(
		    logdir_scan(dir, 0, LOGDIR_CUT, t_visit_seq, &want, &end),
		    SLUICE_ECORRUPT);
		assert_string_equal(end.bad_path, s.last);
		assert_true(end.bad_off == torn_off);
		assert_true(end.bad_lsn == last);
		/* Nothing was cut: the same verdict again. */
		want = 1;
		assert_int_equal(
		    logdir_scan(dir, 0, 0, t_visit_seq, &want, &end),
		    SLUICE_ECORRUPT);
		assert_true(end.bad_off == torn_off);
	}
	saved_free(&s);
}

/* A flipped bit in any checksummed byte of the last record. The writer
 * stopped cleanly and its DURABLE mark says so: always damage at that
 * record, never cut. Without the mark (a log from before it), the
 * segment's own rules decide: a flip in the header's version, flags or
 * LSN, a lower epoch or a shorter length is not what a torn write leaves
 * (damage); elsewhere it reads as a torn write and is cut there. */
static void
test_torn_flipped_byte_in_last_record(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct durable_mark mark;
	uint64_t at, len;
	struct saved s;
	int cut = 0, refused = 0;

	write_log(dir, &s);
	at = s.offs[LAST - 1];
	len = s.lens[LAST - 1];
	for (uint64_t i = 0; i < len; i++) {
		struct logdir_end end;
		uint64_t want = 1;
		int rc;

		restore(dir, &s);
		t_flip(s.last, at + i, (uint8_t)(1u << (i % 8)));
		assert_int_equal(durable_read(dir, &mark), 0);
		assert_true(mark.clean && mark.lsn == RECORDS);
		assert_int_equal(logdir_scan_known(dir, 0, LOGDIR_CUT, &mark,
		                     t_visit_seq, &want, &end),
		    SLUICE_ECORRUPT);
		assert_true(end.bad_off == at);
		assert_true(end.bad_lsn == RECORDS - 1);

		assert_int_equal(durable_remove(dir), 0);
		want = 1;
		rc = logdir_scan(dir, 0, LOGDIR_CUT, t_visit_seq, &want, &end);
		if (rc == 0) {
			assert_true(i < 8 || i >= 16); /* never the LSN */
			assert_true(end.last_lsn == RECORDS - 1);
			assert_true(end.torn && end.cut);
			assert_true(end.torn_off == at);
			check_continues(dir, RECORDS - 1);
			cut++;
		} else {
			assert_int_equal(rc, SLUICE_ECORRUPT);
			assert_true(end.bad_off == at);
			refused++;
		}
	}
	assert_true(cut > 0 && refused >= 10);
	saved_free(&s);
}

/* The DURABLE mark of a crashed writer: a torn record above it is cut,
 * one at or below it is damage, and a log that ends before it (its tail
 * zeroed) is damage. */
static void
test_torn_below_the_durable_mark_is_damage(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct durable_mark mark = { 0 };
	struct logdir_end end;
	struct saved s;

	write_log(dir, &s);
	/* The last record half written. */
	restore(dir, &s);
	t_zero(s.last, s.offs[LAST - 1] + 30, s.lens[LAST - 1] - 30);
	mark.lsn = RECORDS - 1; /* the half-written one was never synced */
	assert_int_equal(
	    logdir_scan_known(dir, 0, 0, &mark, NULL, NULL, &end), 0);
	assert_true(end.torn && end.last_lsn == RECORDS - 1);
	mark.lsn = RECORDS; /* it was */
	assert_int_equal(
	    logdir_scan_known(dir, 0, LOGDIR_CUT, &mark, NULL, NULL, &end),
	    SLUICE_ECORRUPT);
	assert_true(end.bad_off == s.offs[LAST - 1]);
	assert_non_null(strstr(end.bad_what, "DURABLE"));
	/* The last two records zeroed whole: a clean end, but before the
	 * mark. */
	restore(dir, &s);
	t_zero(s.last, s.offs[LAST - 2], s.offs[LAST] - s.offs[LAST - 2]);
	mark.lsn = RECORDS - 2;
	assert_int_equal(
	    logdir_scan_known(dir, 0, 0, &mark, NULL, NULL, &end), 0);
	mark.lsn = RECORDS - 1;
	assert_int_equal(
	    logdir_scan_known(dir, 0, LOGDIR_CUT, &mark, NULL, NULL, &end),
	    SLUICE_ECORRUPT);
	assert_true(end.bad_lsn == RECORDS - 2);
	saved_free(&s);
}

/* A flipped byte in a record followed by valid ones is corruption, named
 * by segment and offset - in the last segment and in an earlier one - and
 * nothing is cut. */
static void
test_torn_flipped_byte_in_middle_is_corruption(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct logdir_end end;
	struct seg_reader r;
	struct rec_view v;
	struct saved s;
	char first[512];
	uint64_t at = 0;

	write_log(dir, &s);

	/* Last segment, two records before its end. */
	restore(dir, &s);
	t_flip(s.last, s.offs[1] + REC_HDR_SIZE, 0x08);
	assert_int_equal(
	    logdir_scan(dir, 0, LOGDIR_CUT, NULL, NULL, &end), SLUICE_ECORRUPT);
	assert_string_equal(end.bad_path, s.last);
	assert_true(end.bad_off == s.offs[1]);
	assert_true(end.bad_lsn == s.first_of_last);
	assert_int_equal(t_file_size(s.last), SEG);
	/* Undo: the log is whole again - nothing was cut. */
	t_flip(s.last, s.offs[1] + REC_HDR_SIZE, 0x08);
	assert_int_equal(logdir_scan(dir, 0, 0, NULL, NULL, &end), 0);
	assert_true(end.last_lsn == RECORDS);

	/* First segment, its 100th record. */
	assert_int_equal(seg_path(first, sizeof(first), dir, 1), 0);
	assert_int_equal(seg_reader_open(&r, first), 0);
	assert_int_equal(seg_reader_hdr(&r), 0);
	for (int i = 0; i < 100; i++) {
		at = r.off;
		assert_int_equal(seg_reader_next(&r, &v), REC_VALID);
	}
	seg_reader_close(&r);
	t_flip(first, at + REC_HDR_SIZE, 0x01);
	assert_int_equal(
	    logdir_scan(dir, 0, LOGDIR_CUT, NULL, NULL, &end), SLUICE_ECORRUPT);
	assert_string_equal(end.bad_path, first);
	assert_true(end.bad_off == at);
	assert_true(end.bad_lsn == 99);
	saved_free(&s);
}

/* With O_DIRECT a batch is one write of whole blocks that starts by
 * writing again the records of the partial block before it: a crash tears
 * it at a sector (512 bytes here, the smallest unit a disk writes), not at
 * any byte. For every sector boundary of such a write, the sectors before
 * it new and the rest old: the records committed before the write are all
 * there (the rewritten prefix is the same bytes), the new ones wholly
 * before the tear are kept, the record it cuts is a torn tail, and a
 * writer continues after it (reading the partial block back). */
static void
test_torn_direct_write_torn_at_every_sector(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	uint8_t *before, *after, *img;
	uint64_t lsn_a = 0, lsn_b = 0, prev_last = 0;
	size_t len, alen, end_a = 0, start, stop;
	struct logdir_end end;
	char path[512];
	struct wal *w;
	int cases = 0;

	t_wal_commit = WAL_COMMIT_DIRECT;
	assert_int_equal(t_wal_open(dir, WAL_FSYNC_ALWAYS, SEG, 1, &w), 0);
	assert_int_equal(wal_commit_mode(w), WAL_COMMIT_DIRECT);
	for (int i = 0; i < 7; i++) /* leaves a partial block */
		lsn_a = t_wal_append(w);
	assert_int_equal(wal_submit(w), 0);
	t_wal_wait_durable(w, lsn_a);
	assert_int_equal(seg_path(path, sizeof(path), dir, 1), 0);
	assert_int_equal(fs_read_all(path, &before, &len), 0);
	for (int i = 0; i < 60; i++) /* one write over several blocks */
		lsn_b = t_wal_append(w);
	assert_int_equal(wal_submit(w), 0);
	t_wal_wait_durable(w, lsn_b);
	assert_int_equal(fs_read_all(path, &after, &alen), 0);
	assert_int_equal(wal_close(w), 0);
	assert_true(len == alen && len == SEG);

	/* The second write's bytes: from the block where the first batch's
	 * records end to the end of the block where its own end. */
	while (end_a < len && before[end_a] == after[end_a])
		end_a++;
	end = t_scan_all(dir, 1);
	assert_true(end.last_lsn == lsn_b && end_a % 4096 != 0);
	start = end_a / 4096 * 4096;
	stop = (end.offset + 4095) / 4096 * 4096;
	assert_true(stop - start >= 2 * 4096);
	img = malloc(len);
	assert_non_null(img);
	for (size_t x = start; x <= stop; x += 512) {
		uint64_t want = 1;

		memcpy(img, after, x);
		memcpy(img + x, before + x, len - x);
		t_write_file(path, img, len);
		/* The crash came before the second write was synced. */
		assert_int_equal(durable_lower(dir, lsn_a), 0);
		assert_int_equal(
		    logdir_scan(dir, 0, LOGDIR_CUT, t_visit_seq, &want, &end),
		    0);
		assert_true(end.last_lsn >= lsn_a && end.last_lsn <= lsn_b);
		assert_true(want == end.last_lsn + 1);
		assert_true(end.last_lsn >= prev_last);
		if (x <= end_a)
			assert_true(end.last_lsn == lsn_a);
		if (x == stop)
			assert_true(end.last_lsn == lsn_b && !end.torn);
		prev_last = end.last_lsn;
		check_continues(dir, end.last_lsn);
		cases++;
	}
	assert_true(cases >= 2 * 4096 / 512);
	t_wal_commit = t_wal_commit_default;
	free(img);
	free(before);
	free(after);
}

int
main(void)
{
#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, t_tmpdir_setup, t_tmpdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_torn_cut_at_every_offset_with_zeros_after),
		T(test_torn_cut_at_every_offset_with_garbage_after_is_damage),
		T(test_torn_below_the_durable_mark_is_damage),
		T(test_torn_flipped_byte_in_last_record),
		T(test_torn_flipped_byte_in_middle_is_corruption),
		T(test_torn_direct_write_torn_at_every_sector),
	};
#undef T
	log_set_level(LOG_ERR);
	return cmocka_run_group_tests_name("torn", tests, NULL, NULL);
}
