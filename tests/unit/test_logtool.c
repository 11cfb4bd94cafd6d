/* sluice-log on data directories built here: with the real writer and
 * real queue records, by hand for what no writer makes, and by a real
 * sluiced. Each damage gives its own message and exit code; repair leaves
 * a directory that verify passes and sluiced starts on, with what it cut
 * in lost+found; `state --at` agrees with what a live server said at that
 * LSN. And sluiced itself, started on a damaged directory, says where and
 * what to run.
 *
 * Run with `--corpus DIR` it writes the seed corpus of fuzz_segwalk instead. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <termios.h>

#include "sluice.h"
#include "sluice_log.h"
#include "t_logtool.h"

/* ---- verify on sound directories --------------------------------------- */

static void
test_a_clean_log_over_several_segments_is_sound(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	struct tl_log l;
	uint64_t last;

	tl_open(&l, t_path(d, "data"));
	last = tl_history(&l, 900);
	tl_close(&l);
	assert_true(tl_nsegs(t_path(d, "data")) >= 3);
	assert_int_equal(tl_tool(r, "verify", t_path(d, "data"), NULL), 0);
	tl_has(r->out, "verdict: sound");
	{
		char want[64];

		snprintf(want, sizeof(want), "LSN 1..%llu",
		    (unsigned long long)last);
		tl_has(r->out, want);
	}
	assert_string_equal(r->err, "");
	free(r);
}

static void
test_an_empty_directory_is_a_valid_empty_log(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));

	assert_int_equal(fs_mkdir_p(t_path(d, "empty")), 0);
	assert_int_equal(tl_tool(r, "verify", t_path(d, "empty"), NULL), 0);
	tl_has(r->out, "empty: a valid empty log");
	assert_int_equal(
	    tl_tool(r, "state", t_path(d, "empty"), "--json", NULL), 0);
	tl_has(r->out, "\"lsn\":0");
	tl_has(r->out,
	    "\"totals\":{\"ready\":0,\"delayed\":0,\"taken\":0,"
	    "\"buried\":0,\"waiting\":0,\"paused\":false,");
	assert_int_equal(tl_tool(r, "dump", t_path(d, "empty"), NULL), 0);
	assert_string_equal(r->out, "");
	free(r);
}

static void
test_what_is_not_a_data_directory_is_named(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char path[600];

	assert_int_equal(tl_tool(r, "verify", t_path(d, "nope"), NULL), 4);
	tl_has(r->err, "no such directory");

	assert_int_equal(fs_mkdir_p(t_path(d, "photos")), 0);
	snprintf(path, sizeof(path), "%s/holiday.jpg", t_path(d, "photos"));
	t_write_file(path, "jpeg", 4);
	assert_int_equal(tl_tool(r, "verify", t_path(d, "photos"), NULL), 4);
	tl_has(r->err, "is not a sluice data directory");
	tl_has(r->err, "holiday.jpg");
	assert_int_equal(tl_tool(r, "dump", t_path(d, "photos"), NULL), 4);
	assert_int_equal(tl_tool(r, "stats", t_path(d, "photos"), NULL), 4);
	assert_int_equal(tl_tool(r, "state", t_path(d, "photos"), NULL), 4);
	assert_int_equal(tl_tool(r, "repair", t_path(d, "photos"), NULL), 4);

	assert_int_equal(tl_tool(r, "verify", path, NULL), 4);
	tl_has(r->err, "not a directory");
	free(r);
}

static void
test_usage_errors_exit_2(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));

	(void)d;
	assert_int_equal(tl_tool(r, NULL), 2);
	assert_int_equal(tl_tool(r, "frobnicate", "x", NULL), 2);
	tl_has(r->err, "unknown command 'frobnicate'");
	assert_int_equal(tl_tool(r, "verify", NULL), 2);
	assert_int_equal(tl_tool(r, "dump", "x", "--from", "ten", NULL), 2);
	tl_has(r->err, "--from wants a number");
	assert_int_equal(tl_tool(r, "dump", "x", "--type", "PUTT", NULL), 2);
	tl_has(r->err, "unknown type 'PUTT'");
	assert_int_equal(tl_tool(r, "state", "x", "--at", "0", NULL), 2);
	assert_int_equal(tl_tool(r, "--help", NULL), 0);
	tl_has(r->out, "usage: sluice-log");
	free(r);
}

/* A segment that cannot be read (here a directory under a segment's
 * name) is named, with exit 5. */
static void
test_an_unreadable_segment_is_named(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];
	char path[700];

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	assert_int_equal(fs_mkdir_p(data), 0);
	tl_seg_file(data, 1, 1, 5);
	snprintf(path, sizeof(path), "%s/00000000000000000006.wal", data);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 5);
	tl_has(r->out, "UNREADABLE 00000000000000000006.wal");
	tl_has(r->out, "cannot read");
	assert_int_equal(tl_tool(r, "repair", data, NULL), 1);
	tl_has(r->err, "cannot be read");
	free(r);
}

/* ---- a torn tail --------------------------------------------------------- */

/* The last record cut short at every byte: a torn tail (exit 3) named by
 * file, offset and LSN; repair cuts it, keeps the bytes, and verify then
 * passes; --dry-run changes nothing. */
static void
test_a_tail_torn_at_every_offset_is_a_torn_tail(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	struct tl_recs *recs = malloc(sizeof(*recs));
	char base[600], work[600], want[2048], seg[600];
	uint8_t *orig;
	struct tl_log l;
	uint64_t off, size, lsn;
	size_t nsegs;

	snprintf(base, sizeof(base), "%s", t_path(d, "base"));
	tl_open(&l, base);
	tl_history(&l, 500);
	tl_close(&l);
	nsegs = tl_nsegs(base);
	snprintf(seg, sizeof(seg), "%s", tl_seg_at(base, nsegs - 1));
	tl_recs(seg, recs);
	assert_true(recs->n >= 2);
	off = recs->off[recs->n - 1];
	{
		uint8_t len[4];

		/* Its length without the padding: zeros in the padding are
		 * what a whole record has. */
		t_peek(seg, off, len, 4);
		size = le_load_u32(len);
	}
	lsn = recs->lsn[recs->n - 1];
	tl_crashed(base, lsn - 1); /* the last record was never synced */
	snprintf(work, sizeof(work), "%s", t_path(d, "work"));
	orig = malloc(size);
	assert_non_null(orig);
	t_peek(seg, off, orig, (size_t)size);
	for (uint64_t keep = 1; keep < size; keep++) {
		char cmd[4096], wseg[1024];
		struct lt_dir ld;
		char err[256];
		uint64_t before;

		/* Only the first `keep` bytes of the last record made it. */
		t_poke(seg, off, orig, (size_t)size);
		t_zero(seg, off + keep, (size_t)(size - keep));
		{
			/* Nothing but zeros kept reads as the clean end. */
			size_t nz = 0;

			for (size_t i = 0; i < keep; i++)
				nz += orig[i] != 0;
			if (nz == 0)
				continue;
		}
		/* Every offset through the tool's own checks... */
		assert_int_equal(lt_dir_open(base, &ld, err, sizeof(err)), 0);
		assert_int_equal(lt_dir_check(&ld, NULL, NULL), 0);
		assert_int_equal(lt_dir_exit(&ld), 3);
		assert_int_equal(ld.nprobs, 1);
		assert_true(ld.probs[0].kind == LT_TORN);
		assert_true(ld.probs[0].off == off);
		assert_true(ld.probs[0].lsn_before == lsn - 1);
		lt_dir_free(&ld);
		/* ...and some through the command. */
		if (keep % 8 != 1)
			continue;
		assert_int_equal(tl_tool(r, "verify", base, NULL), 3);
		snprintf(want, sizeof(want),
		    "torn       %s offset %llu:", strrchr(seg, '/') + 1,
		    (unsigned long long)off);
		tl_has(r->out, want);
		snprintf(want, sizeof(want), "after LSN %llu",
		    (unsigned long long)(lsn - 1));
		tl_has(r->out, want);
		tl_has(r->out, "verdict: a torn tail only");
		if (keep % 32 != 1)
			continue;
		snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s'",
		    work, base, work);
		assert_int_equal(system(cmd), 0);
		snprintf(
		    wseg, sizeof(wseg), "%s/%s", work, strrchr(seg, '/') + 1);
		before = tl_dir_sum(work);
		assert_int_equal(
		    tl_tool(r, "repair", "--dry-run", work, NULL), 0);
		tl_has(r->out, "would cut");
		assert_true(tl_dir_sum(work) == before);
		assert_int_equal(tl_tool(r, "repair", work, NULL), 0);
		tl_has(r->out, "sound now");
		assert_int_equal(tl_tool(r, "verify", work, NULL), 0);
		{
			char lf[1024], cut[2048];
			const char *stamp;
			uint8_t a[8];
			size_t k = keep < 8 ? (size_t)keep : 8;

			snprintf(lf, sizeof(lf), "%s/lost+found", work);
			stamp = tl_only_entry(lf);
			assert_non_null(stamp);
			snprintf(cut, sizeof(cut), "%s/%s/%s", lf, stamp,
			    strrchr(seg, '/') + 1);
			/* The bytes cut, at their offsets (trailing zeros of
			 * the torn record are not data). */
			assert_true(t_file_size(cut) > (long)off &&
			    t_file_size(cut) <= (long)(off + keep));
			t_peek(cut, off, a, k);
			assert_memory_equal(a, orig, k);
			/* The segment itself: zeros from the cut on. */
			t_peek(wseg, off, a, k);
			for (size_t i = 0; i < k; i++)
				assert_int_equal(a[i], 0);
		}
	}
	free(orig);
	free(recs);
	free(r);
}

/* ---- damage in the middle -------------------------------------------- */

/* One flipped byte in a record of a segment that is not the last: damage
 * (exit 1) named by file, offset and the LSNs around it; repair cuts the
 * log there and keeps everything after it in lost+found. */
static void
test_a_flipped_byte_in_the_middle_of_a_segment_is_damage(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	struct tl_recs *recs = malloc(sizeof(*recs));
	char data[600];
	char seg[600], want[2048], lf[1024], later[8][32];
	struct tl_log l;
	uint64_t off, lsn;
	size_t mid, nsegs;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_history(&l, 900);
	tl_close(&l);
	nsegs = tl_nsegs(data);
	assert_true(nsegs >= 3 && nsegs <= 8);
	for (size_t i = 0; i < nsegs; i++)
		snprintf(later[i], sizeof(later[i]), "%s",
		    strrchr(tl_seg_at(data, i), '/') + 1);
	snprintf(seg, sizeof(seg), "%s", tl_seg_at(data, 1));
	tl_recs(seg, recs);
	mid = recs->n / 2;
	off = recs->off[mid];
	lsn = recs->lsn[mid];
	t_flip(seg, off + REC_HDR_SIZE + 3, 0x10); /* in the body */

	assert_int_equal(tl_tool(r, "verify", data, NULL), 1);
	snprintf(want, sizeof(want),
	    "DAMAGE     %s offset %llu: bad record "
	    "(checksum mismatch) after LSN %llu",
	    strrchr(seg, '/') + 1, (unsigned long long)off,
	    (unsigned long long)(lsn - 1));
	tl_has(r->out, want);
	snprintf(want, sizeof(want),
	    "valid records resume at offset %llu "
	    "with LSN %llu",
	    (unsigned long long)recs->off[mid + 1],
	    (unsigned long long)(lsn + 1));
	tl_has(r->out, want);
	tl_has(r->out, "sluiced will not start");
	/* repair salvages by default; cutting is --cut-at-damage's */
	tl_has(r->out, "would salvage");
	snprintf(want, sizeof(want),
	    "--cut-at-damage` would instead keep the log up to LSN %llu",
	    (unsigned long long)(lsn - 1));
	tl_has(r->out, want);

	/* dump goes on past it and says where it was. */
	assert_int_equal(tl_tool(r, "dump", data, NULL), 1);
	snprintf(want, sizeof(want), "offset %llu: damage after LSN %llu",
	    (unsigned long long)off, (unsigned long long)(lsn - 1));
	tl_has(r->err, want);
	snprintf(
	    want, sizeof(want), "\n%10llu  ", (unsigned long long)(lsn + 1));
	tl_has(r->out, want);

	assert_int_equal(
	    tl_tool(r, "repair", data, "--cut-at-damage", NULL), 0);
	tl_has(r->out, "LOST to the queue");
	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	assert_true(tl_nsegs(data) == 2);
	{
		char lfd[700], p[2048];
		const char *stamp;
		uint8_t *note;
		size_t len;

		snprintf(lfd, sizeof(lfd), "%s/lost+found", data);
		stamp = tl_only_entry(lfd);
		assert_non_null(stamp);
		snprintf(lf, sizeof(lf), "%s/%s", lfd, stamp);
		/* Every later segment, whole, and the bytes cut. */
		for (size_t i = 2; i < nsegs; i++) {
			snprintf(p, sizeof(p), "%s/%s", lf, later[i]);
			assert_true(t_file_size(p) == TL_SEG);
		}
		snprintf(p, sizeof(p), "%s/NOTE", lf);
		assert_int_equal(fs_read_all(p, &note, &len), 0);
		note = realloc(note, len + 1);
		note[len] = 0;
		tl_has((char *)note, "checksum mismatch");
		tl_has((char *)note, strrchr(seg, '/') + 1);
		tl_has((char *)note, "\ndone at ");
		free(note);
		/* What was cut reads back with dump: the records after the
		 * bad one, and every later segment's. */
		assert_int_equal(tl_tool(r, "dump", lf, NULL), 1);
		snprintf(want, sizeof(want), "%10llu  e1 ",
		    (unsigned long long)(lsn + 1));
		assert_memory_equal(r->out, want, strlen(want));
		assert_null(strstr(r->out, "PUT      a                id=1 "));
	}
	free(recs);
	free(r);
}

/* A snapshot with one flipped byte is damaged (exit 1); sluiced would
 * skip it, and repair moves it out: the log from LSN 1 is still whole. */
static void
test_a_flipped_byte_in_a_snapshot_is_damage(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];
	char snap[600], want[2048];
	struct tl_log l;
	uint64_t s;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_history(&l, 300);
	s = tl_snapshot(&l, false, 0);
	tl_history(&l, 50);
	tl_close(&l);
	assert_int_equal(snap_path(snap, sizeof(snap), data, s), 0);
	t_flip(snap, (uint64_t)t_file_size(snap) / 2, 0x01);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 1);
	snprintf(want, sizeof(want), "DAMAGE     %020llu.snap offset ",
	    (unsigned long long)s);
	tl_has(r->out, want);
	tl_has(r->out, "snapshot damaged: an entry's checksum");
	tl_has(r->out, "outside what recovery reads");
	assert_int_equal(tl_tool(r, "repair", data, NULL), 0);
	tl_has(r->out, "no record the queue needs is lost");
	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	assert_true(t_file_size(snap) < 0);
	free(r);
}

/* A segment removed from the middle: the LSNs it held are named. */
static void
test_a_missing_segment_is_named(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];
	struct tl_recs *recs = malloc(sizeof(*recs));
	char gone[600], want[2048];
	uint64_t first, last;
	struct tl_log l;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_history(&l, 900);
	tl_close(&l);
	snprintf(gone, sizeof(gone), "%s", tl_seg_at(data, 1));
	tl_recs(gone, recs);
	first = recs->lsn[0];
	last = recs->lsn[recs->n - 1];
	assert_int_equal(unlink(gone), 0);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 1);
	snprintf(want, sizeof(want), "LSNs %llu..%llu are missing",
	    (unsigned long long)first, (unsigned long long)last);
	tl_has(r->out, want);
	tl_has(r->out, "(a segment is missing)");
	assert_int_equal(tl_tool(r, "repair", data, NULL), 0);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	assert_true(tl_nsegs(data) == 1);
	free(recs);
	free(r);
}

/* A queue record of a type this sluice-log does not know (a newer
 * sluiced's) is named as such: verify says so, dump shows its type, and
 * repair refuses rather than drop it; the log is left as it was. A PUTS
 * (69) is known: dump names it. */
static void
test_a_record_type_from_a_newer_sluiced_is_named(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	static const uint8_t body[10] = { 1, 2, 3 };
	char data[600];
	struct tl_log l;
	uint64_t lsn = 0;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_put(&l, "mail", "before");
	assert_int_equal(
	    wal_append(l.w, QREC_TYPE_END_, l.now, body, sizeof(body), 0, &lsn),
	    0);
	assert_int_equal(t_wal_turn(l.w, 0), 0);
	tl_close(&l);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 1);
	tl_has(r->out,
	    "which this sluice-log does not know: a newer sluiced "
	    "wrote this log");
	tl_has(r->out, "repair cannot fix it");
	assert_int_equal(tl_tool(r, "repair", data, NULL), 1);
	tl_has(r->err, "cannot repair");
	assert_int_equal(tl_tool(r, "dump", data, NULL), 0);
	tl_has(r->out, "of a type");
	assert_true(tl_nsegs(data) == 1);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 1);
	free(r);
}

/* The pads a writer of several batches at once adds (REC_PAD, sluiced
 * --wal-inflight) are part of a sound log: verify says so, dump names
 * them with their size, and the queue they sit in reads the same. */
static void
test_pad_records_are_named_and_sound(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	static const uint8_t zeros[600];
	char data[600];
	struct tl_log l;
	uint64_t lsn = 0;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_put(&l, "mail", "before");
	assert_int_equal(
	    wal_append(l.w, REC_PAD, l.now, zeros, sizeof(zeros), 0, &lsn), 0);
	tl_put(&l, "mail", "after");
	assert_int_equal(t_wal_turn(l.w, 0), 0);
	tl_close(&l);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	tl_has(r->out, "verdict: sound");
	assert_int_equal(tl_tool(r, "dump", data, NULL), 0);
	tl_has(r->out, "PAD");
	tl_has(r->out, "600 bytes of zeros");
	tl_has(r->out, "id=2 tube=mail");
	assert_int_equal(tl_tool(r, "dump", "--json", data, NULL), 0);
	tl_has(r->out, "\"type\":\"PAD\"");
	tl_has(r->out, "\"pad_bytes\":600");
	free(r);
}

/* A batch lost while the batches written beside it landed (sluiced
 * --wal-inflight, then a power cut): zeros where it should be, then their
 * records from a block boundary. verify calls it a torn tail and names the
 * LSNs it holds; sluiced cuts it, says so, starts, and the log is sound;
 * with a DURABLE mark above it, it is damage. */
static void
test_a_gap_of_batches_in_flight_is_a_torn_tail(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	struct tl_recs *recs = malloc(sizeof(*recs));
	static const uint8_t zeros[2 * 4096];
	char data[600], seg[600], want[1024];
	uint64_t rem, pad, x, last;
	struct tl_log l;
	struct t_srv s;
	uint8_t *log;
	size_t len, k = 0;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_put(&l, "mail", "kept");
	tl_put(&l, "mail", "lost");
	tl_close(&l);
	snprintf(seg, sizeof(seg), "%s", tl_seg_at(data, 0));
	tl_recs(seg, recs);
	rem = (4096 - recs->end % 4096) % 4096;
	if (rem < REC_HDR_SIZE)
		rem += 4096;
	/* the lost batch ends with a pad; two batches follow, on blocks
	 * (the writer's queue starts again: the records are cut anyway) */
	tl_open(&l, data);
	assert_int_equal(
	    wal_append(l.w, REC_PAD, l.now, zeros, rem - REC_HDR_SIZE, 0, &pad),
	    0);
	tl_put(&l, "mail", "beside");
	tl_put(&l, "mail", "beside too");
	tl_close(&l);
	tl_recs(seg, recs);
	for (size_t i = 1; i < recs->n; i++)
		if (recs->lsn[i] == pad)
			k = i;
	assert_true(k > 0 && k + 2 == recs->n - 1);
	assert_true(recs->off[k + 1] % 4096 == 0);
	x = recs->off[k - 1];
	last = recs->lsn[recs->n - 1];
	t_zero(seg, x, (size_t)(recs->off[k] + recs->size[k] - x));

	tl_crashed(data, recs->lsn[k - 1]); /* the mark says it was synced */
	assert_int_equal(tl_tool(r, "verify", data, NULL), 1);
	tl_has(r->out, "look like a torn write, but the log had synced");
	tl_crashed(data, recs->lsn[k - 1] - 1);
	assert_int_equal(tl_tool(r, "verify", data, NULL), LT_EXIT_TORN);
	snprintf(want, sizeof(want),
	    "after LSN %llu are zeros where a batch should be, then batches "
	    "written beside it up to LSN %llu: a torn tail",
	    (unsigned long long)(recs->lsn[k - 1] - 1),
	    (unsigned long long)last);
	tl_has(r->out, want);

	t_srv_init(&s, d->path, "data");
	assert_int_equal(t_srv_start(&s), 0);
	assert_true(WIFEXITED(t_srv_stop(&s, SIGTERM)));
	assert_int_equal(fs_read_all(s.log, &log, &len), 0);
	log = realloc(log, len + 1);
	log[len] = 0;
	snprintf(want, sizeof(want),
	    "torn tail cut segment=%s offset=%llu bytes=", seg,
	    (unsigned long long)x);
	tl_has((char *)log, want);
	snprintf(want, sizeof(want), " cut_lsns=%llu..%llu ",
	    (unsigned long long)recs->lsn[k - 1], (unsigned long long)last);
	tl_has((char *)log, want);
	free(log);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	tl_has(r->out, "verdict: sound");
	free(recs);
	free(r);
}

/* A segment of an older epoch after a newer one. */
static void
test_a_segment_from_an_older_epoch_is_damage(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	assert_int_equal(fs_mkdir_p(data), 0);
	tl_seg_file(data, 1, 2, 10);
	tl_seg_file(data, 11, 1, 10);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 1);
	tl_has(r->out,
	    "DAMAGE     00000000000000000011.wal (its start): "
	    "epoch 1 after epoch 2");
	tl_has(r->out, "older epoch");
	assert_int_equal(
	    tl_tool(r, "repair", data, "--cut-at-damage", NULL), 0);
	tl_has(r->out, "LSN 11..20 (10 records, LOST to the queue)");
	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	free(r);
}

/* A record that is whole and in sequence but does not apply to the queue
 * (an ACK of a task nobody put): sluiced would stop at it. */
static void
test_a_record_that_does_not_apply_is_damage(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];
	struct qrec q = { .type = QREC_ACK };
	struct tl_log l;
	uint64_t bad;
	char want[2048];

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_history(&l, 40);
	q.u.end.id = 999999;
	q.u.end.lease = 1;
	q.u.end.outcome = QREC_DELETED;
	buf_reset(&l.body);
	assert_int_equal(qrec_encode(&q, &l.body), 0);
	assert_int_equal(
	    wal_append(l.w, q.type, l.now, l.body.data, l.body.len, 0, &bad),
	    0);
	tl_put(&l, "a", "after");
	tl_close(&l);
	{
		/* sluiced names the record and what to run. */
		const char *argv[] = { t_bin("sluiced"), "--data", data,
			"--listen", "tcp://127.0.0.1:1", NULL };

		argv[0] = strdup(argv[0]);
		assert_int_equal(t_run((char *const *)argv, NULL, NULL, 0,
		                     r->err, sizeof(r->err)),
		    1);
		free((char *)argv[0]);
		snprintf(want, sizeof(want),
		    "a record does not apply lsn=%llu type=ACK",
		    (unsigned long long)bad);
		tl_has(r->err, want);
		snprintf(want, sizeof(want),
		    "run 'sluice-log verify %s', then "
		    "'sluice-log repair %s'",
		    data, data);
		tl_has(r->err, want);
		assert_null(strstr(r->err, "damaged log "));
	}
	assert_int_equal(tl_tool(r, "verify", data, NULL), 1);
	snprintf(want, sizeof(want),
	    "record LSN %llu (ACK) is whole but does "
	    "not apply",
	    (unsigned long long)bad);
	tl_has(r->out, want);
	/* The salvage keeps the put after it and names the ack refused. */
	assert_int_equal(tl_tool(r, "repair", data, NULL), 0);
	snprintf(want, sizeof(want), "LSN %llu in ", (unsigned long long)bad);
	tl_has(r->out, want);
	tl_has(r->out, "ACK id=999999");
	tl_has(r->out, "does not apply to the state before it");
	tl_has(r->out, "0 LSNs with no whole record, 1 whole record refused");
	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	snprintf(
	    want, sizeof(want), "\"lsn\":%llu,", (unsigned long long)(bad + 1));
	assert_int_equal(tl_tool(r, "state", data, "--json", NULL), 0);
	tl_has(r->out, want);
	free(r);
}

/* Damage before the snapshot, in the segment that holds the records
 * after it: the records recovery needs are sound, so repair moves them
 * into a new segment and nothing is lost. */
static void
test_damage_before_the_snapshot_loses_nothing(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r)), *before = malloc(sizeof(*r));
	struct tl_recs *recs = malloc(sizeof(*recs));
	char data[600];
	char seg[600];
	struct tl_log l;
	uint64_t s;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_history(&l, 40);
	s = tl_snapshot(&l, false, 0);
	tl_history(&l, 20);
	tl_close(&l);
	assert_true(tl_nsegs(data) == 1);
	assert_int_equal(tl_tool(before, "state", data, "--json", NULL), 0);
	snprintf(seg, sizeof(seg), "%s", tl_seg_at(data, 0));
	tl_recs(seg, recs);
	t_flip(seg, recs->off[3] + REC_HDR_SIZE, 0x80);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 1);
	tl_has(r->out, "sluiced will not start");
	tl_has(r->out, "no record the queue needs is lost");
	assert_int_equal(tl_tool(r, "repair", data, NULL), 0);
	{
		char want[2048];

		snprintf(want, sizeof(want), "wrote %020llu.wal",
		    (unsigned long long)(s + 1));
		tl_has(r->out, want);
	}
	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	assert_int_equal(tl_tool(r, "state", data, "--json", NULL), 0);
	assert_string_equal(r->out, before->out);
	free(recs);
	free(before);
	free(r);
}

/* ---- dump ----------------------------------------------------------- */

static void
test_dump_json_prints_every_field_and_escapes(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];
	static const uint8_t bin[] = { 0xff, 0x00, 0x41 };
	struct tl_log l;
	uint64_t id, lease;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_put(&l, "mail", "say \"hi\"\n\x01");
	tl_put_n(&l, "img", bin, sizeof(bin), 0);
	id = tl_take(&l, "mail", &lease);
	tl_ack_to(&l, id, lease, "sent");
	{
		/* A promotion: an EPOCH record, and epoch 2 from then on. */
		uint64_t lsn;

		assert_int_equal(wal_set_epoch(l.w, 2, 99, l.now, &lsn), 0);
		assert_true(lsn == 5);
	}
	tl_put(&l, "mail", "after the promotion");
	tl_close(&l);

	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	assert_int_equal(tl_tool(r, "state", data, "--json", NULL), 0);
	tl_has(r->out, "\"epoch\":2,\"lsn\":6,");
	assert_int_equal(
	    tl_tool(r, "dump", data, "--from", "5", "--json", NULL), 0);
	tl_has(r->out, "{\"lsn\":5,\"epoch\":2,\"type\":\"EPOCH\"");
	tl_has(r->out,
	    "\"id\":null,\"tube\":null,\"new_epoch\":2,"
	    "\"previous_epoch\":1,\"nonce\":99}");
	tl_has(r->out, "{\"lsn\":6,\"epoch\":2,\"type\":\"PUT\"");
	assert_int_equal(
	    tl_tool(r, "dump", data, "--to", "4", "--json", NULL), 0);
	tl_has(r->out, "{\"lsn\":1,\"epoch\":1,\"type\":\"PUT\"");
	tl_has(r->out, "\"id\":1,\"tube\":\"mail\",\"pri\":1024");
	tl_has(r->out, "\"payload\":\"say \\\"hi\\\"\\n\\u0001\"");
	tl_has(r->out, "\"payload_base64\":\"/wBB\"");
	tl_has(r->out, "\"type\":\"TAKE\"");
	tl_has(r->out, "\"lease\":3,\"session\":1,\"detached\":false");
	tl_has(r->out, "\"type\":\"ACK\"");
	tl_has(r->out, "\"outcome\":\"moved\",\"to_tube\":\"sent\"");
	/* One object per line. */
	{
		int lines = 0;

		for (const char *p = r->out; *p; p++)
			lines += *p == '\n';
		assert_int_equal(lines, 4);
	}
	/* The plain form: one aligned line per record. */
	assert_int_equal(tl_tool(r, "dump", data, NULL), 0);
	tl_has(r->out, "         1  e1   ");
	tl_has(r->out, "PUT      mail             id=1 tube=mail");
	tl_has(r->out, "ACK      mail             id=1 lease=3");
	free(r);
}

/* --tube follows a task by its id: its TAKE and ACK belong to the tube it
 * was put in, and after a move to the tube it moved to. Tasks put before
 * the oldest segment are found in the snapshot. */
static void
test_dump_tube_follows_ids_through_the_log_and_snapshot(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];
	struct tl_log l;
	uint64_t id, lease, old, old_lease;
	char want[2048];

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	old = tl_put(&l, "early", "put long ago");
	tl_history(&l, 900);
	tl_snapshot(&l, true, 0);
	old = tl_take(&l, "early", &old_lease);
	id = tl_put(&l, "mail", "m");
	tl_put(&l, "other", "o");
	id = tl_take(&l, "mail", &lease);
	tl_ack_to(&l, id, lease, "sent");
	tl_close(&l);
	assert_true(tl_seg_at(data, 0) != NULL);

	assert_int_equal(
	    tl_tool(r, "dump", data, "--tube", "mail", "--json", NULL), 0);
	tl_has(r->out, "\"type\":\"PUT\"");
	tl_has(r->out, "\"type\":\"TAKE\"");
	tl_has(r->out, "\"type\":\"ACK\"");
	assert_null(strstr(r->out, "\"tube\":\"other\""));
	assert_int_equal(tl_tool(r, "dump", data, "--tube", "sent", NULL), 0);
	tl_has(r->out, "ACK ");
	assert_null(strstr(r->out, "PUT "));
	/* The task put before the first segment left: its tube comes from
	 * the snapshot. */
	assert_int_equal(
	    tl_tool(r, "dump", data, "--tube", "early", "--json", NULL), 0);
	snprintf(want, sizeof(want), "\"type\":\"TAKE\",\"type_num\":2");
	tl_has(r->out, want);
	snprintf(want, sizeof(want), "\"id\":%llu,\"tube\":\"early\"",
	    (unsigned long long)old);
	tl_has(r->out, want);
	/* --type and --from/--to, over what the log still holds. */
	{
		struct tl_recs *recs = malloc(sizeof(*recs));
		char from[32], to[32];

		tl_recs(tl_seg_at(data, 0), recs);
		snprintf(from, sizeof(from), "%llu",
		    (unsigned long long)recs->lsn[0]);
		snprintf(to, sizeof(to), "%llu",
		    (unsigned long long)recs->lsn[0] + 100);
		free(recs);
		assert_int_equal(tl_tool(r, "dump", data, "--type", "ack,take",
		                     "--from", from, "--to", to, NULL),
		    0);
	}
	assert_null(strstr(r->out, "PUT "));
	tl_has(r->out, "TAKE ");
	free(r);
}

/* ---- stats -------------------------------------------------------------- */

static void
test_stats_counts_live_and_dead_records(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];
	struct tl_log l;
	uint64_t id, lease;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_put(&l, "a", "1");
	tl_put(&l, "a", "2");
	tl_put(&l, "a", "3");
	id = tl_take(&l, "a", &lease);
	tl_ack(&l, id, lease);
	tl_close(&l);
	assert_int_equal(tl_tool(r, "stats", data, "--json", NULL), 0);
	/* PUT, TAKE and ACK of task 1 are dead; the PUTs of 2 and 3 live. */
	tl_has(r->out, "\"records\":5,");
	tl_has(r->out, "\"live\":2,\"dead\":3");
	tl_has(r->out, "\"kept_by\":\"recovery\"");
	assert_int_equal(tl_tool(r, "stats", data, NULL), 0);
	tl_has(r->out, "records: 2 live, 3 dead");
	tl_has(r->out, "no snapshot yet");
	free(r);
}

/* After a snapshot, older segments are kept only for followers, and those
 * beyond --keep-segments are said to go at the next snapshot. */
static void
test_stats_says_what_keeps_each_segment(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];
	struct tl_log l;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_history(&l, 1500);
	tl_snapshot(&l, false, 0);
	tl_history(&l, 10);
	tl_close(&l);
	assert_true(tl_nsegs(data) >= 4);
	assert_int_equal(tl_tool(r, "stats", data, NULL), 0);
	tl_has(r->out, "recovery (records after the snapshot at LSN");
	tl_has(r->out,
	    "retention (older than the snapshot; kept for an older "
	    "snapshot, --keep-snapshots, or for followers, --keep-segments "
	    "2)");
	tl_has(r->out,
	    "nothing (beyond --keep-segments 2: sluiced removes it "
	    "at its next snapshot)");
	tl_has(r->out, "why this size:");
	assert_int_equal(tl_tool(r, "stats", data, "--json", NULL), 0);
	tl_has(r->out, "\"kept_by\":\"retention\"");
	tl_has(r->out, "\"kept_by\":\"none\"");
	free(r);
}

/* ---- progress --------------------------------------------------------- */

/* Progress shows on a terminal and never in a pipe. */
static void
test_progress_shows_on_a_terminal_only(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	char data[600];
	char buf[8192];
	size_t got = 0;
	struct tl_log l;
	int master, status;
	pid_t pid;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_history(&l, 900);
	tl_close(&l);
	assert_int_equal(tl_tool(r, "verify", data, NULL), 0);
	assert_null(strstr(r->err, "checking segment"));

	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
		free(r);
		skip();
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int slave = open(ptsname(master), O_RDWR);
		int null = open("/dev/null", O_WRONLY);

		dup2(slave, 2);
		dup2(null, 1);
		execl(t_bin("sluice-log"), "sluice-log", "verify", data,
		    (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && got < sizeof(buf) - 1; i++) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 20) <= 0) {
			if (waitpid(pid, &status, WNOHANG) == pid) {
				pid = 0;
				break;
			}
			continue;
		}
		n = read(master, buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (pid > 0)
		waitpid(pid, &status, 0);
	close(master);
	tl_has(buf, "checking segment 1/");
	free(r);
}

/* ---- state against a live server ------------------------------------- */

struct point {
	uint64_t lsn, epoch;
	char json[4][200]; /* the tubes' and the totals' counts */
	char ctr[4][200];  /* and their counters */
	int n;
};

static void
point_add(struct point *p, const char *name, const struct sluice_tube_stats *t)
{
	uint64_t v[4] = { 0 };
	static const char *const names[4] = { "puts", "takes", "acks",
		"releases" };

	for (int i = 0; i < 4; i++)
		sluice_kv_get(t->kv, t->nkv, names[i], &v[i]);
	snprintf(p->json[p->n], sizeof(p->json[0]),
	    "\"%s\":{\"ready\":%llu,\"delayed\":%llu,\"taken\":%llu,"
	    "\"buried\":%llu,",
	    name, (unsigned long long)t->ready, (unsigned long long)t->delayed,
	    (unsigned long long)t->taken, (unsigned long long)t->buried);
	snprintf(p->ctr[p->n], sizeof(p->ctr[0]),
	    "\"counters\":{\"puts\":%llu,\"takes\":%llu,\"acks\":%llu,"
	    "\"releases\":%llu,",
	    (unsigned long long)v[0], (unsigned long long)v[1],
	    (unsigned long long)v[2], (unsigned long long)v[3]);
	p->n++;
}

static void
record_point(struct sluice_client *c, struct point *p)
{
	struct sluice_stats *st;

	assert_int_equal(sluice_stats(c, NULL, &st), 0);
	p->lsn = st->lsn;
	p->epoch = st->epoch;
	p->n = 0;
	for (size_t i = 0; i < st->ntubes && p->n < 3; i++)
		point_add(p, st->tubes[i].name, &st->tubes[i]);
	point_add(p, "totals", &st->totals);
	sluice_stats_free(st);
}

/* `out` holds the point's counts, each tube's counters inside its own
 * object. */
static void
point_check(const struct point *p, const char *out)
{
	for (int k = 0; k < p->n; k++) {
		const char *at = strstr(out, p->json[k]), *ctr, *end;

		if (at == NULL) {
			fprintf(
			    stderr, "missing: %s\nin: %s\n", p->json[k], out);
			fail();
		}
		ctr = strstr(at, p->ctr[k]);
		end = strstr(at, "}}");
		if (ctr == NULL || end == NULL || ctr > end) {
			fprintf(stderr, "missing: %s after %s\nin: %s\n",
			    p->ctr[k], p->json[k], out);
			fail();
		}
	}
}

static void
put_n(struct sluice_client *c, const char *tube, int n, uint64_t delay)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.delay_ms = delay;
	for (int i = 0; i < n; i++)
		assert_int_equal(sluice_put(c, &o, "job", 3, NULL, NULL), 0);
}

static void
take_one(
    struct sluice_client *c, const char *tube, uint64_t *id, uint64_t *lease)
{
	const char *tubes[1] = { tube };
	struct sluice_take_opts o = { tubes, 1, 0, 1, 0 };
	struct sluice_task *t;
	size_t n;

	assert_int_equal(sluice_take(c, &o, &t, &n), 0);
	assert_int_equal(n, 1);
	*id = t->id;
	*lease = t->lease;
	sluice_task_free(t);
}

/* Run sluiced, do work, record its stats at a few points; stop it; the
 * state rebuilt from its directory at each recorded LSN says the same. */
static void
test_state_at_agrees_with_a_live_server(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	struct point pts[4];
	struct sluice_client *c;
	struct t_srv s;
	uint64_t id, lease;
	char at[32];

	t_srv_init(&s, d->path, "data");
	assert_int_equal(t_srv_start(&s), 0);
	assert_int_equal(sluice_open(s.url, &c), 0);
	put_n(c, "mail", 5, 0);
	put_n(c, "img", 3, 0);
	record_point(c, &pts[0]);
	take_one(c, "mail", &id, &lease);
	assert_int_equal(sluice_ack(c, id, lease, NULL, NULL), 0);
	take_one(c, "mail", &id, &lease);
	take_one(c, "img", &id, &lease);
	assert_int_equal(sluice_bury(c, id, lease, NULL), 0);
	put_n(c, "later", 2, 3600 * 1000);
	record_point(c, &pts[1]);
	take_one(c, "mail", &id, &lease);
	assert_int_equal(sluice_snapshot(c, NULL), 0);
	put_n(c, "img", 4, 0);
	record_point(c, &pts[2]);
	sluice_close(c); /* its taken tasks are released: more records */
	assert_int_equal(sluice_open(s.url, &c), 0);
	record_point(c, &pts[3]);
	sluice_close(c);
	/* repair never touches a directory a sluiced holds. */
	assert_int_equal(tl_tool(r, "repair", s.data, NULL), 1);
	tl_has(r->err, "a sluiced is running on it");
	assert_int_equal(tl_tool(r, "verify", s.data, NULL), 0);
	tl_has(r->out, "note       a sluiced is running on this directory");
	/* every file sluiced writes is one sluice-log knows (EPOCHS too) */
	assert_null(strstr(r->out, "does not know"));
	assert_true(WIFEXITED(t_srv_stop(&s, SIGTERM)));

	for (int i = 0; i < 4; i++) {
		char lsn[64];

		snprintf(
		    at, sizeof(at), "%llu", (unsigned long long)pts[i].lsn);
		assert_int_equal(
		    tl_tool(r, "state", s.data, "--at", at, "--json", NULL), 0);
		snprintf(lsn, sizeof(lsn), "\"epoch\":%llu,\"lsn\":%llu,",
		    (unsigned long long)pts[i].epoch,
		    (unsigned long long)pts[i].lsn);
		tl_has(r->out, lsn);
		point_check(&pts[i], r->out);
	}
	/* Past the end: refused. */
	snprintf(at, sizeof(at), "%llu", (unsigned long long)pts[3].lsn + 5);
	assert_int_equal(tl_tool(r, "state", s.data, "--at", at, NULL), 1);
	tl_has(r->err, "past the end of the log");
	free(r);
}

/* ---- the server on damaged directories -------------------------------- */

/* A torn tail: sluiced cuts it and says so, naming segment, offset and
 * bytes; it starts. */
static void
test_sluiced_cuts_a_torn_tail_and_says_where(void **state)
{
	struct t_dir *d = *state;
	struct tl_recs *recs = malloc(sizeof(*recs));
	char data[600];
	char seg[600], want[2048];
	uint8_t *log;
	size_t len;
	struct tl_log l;
	struct t_srv s;
	uint64_t off;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_history(&l, 30);
	tl_close(&l);
	snprintf(seg, sizeof(seg), "%s", tl_seg_at(data, 0));
	tl_recs(seg, recs);
	off = recs->off[recs->n - 1];
	t_zero(seg, off + 20, (size_t)(recs->size[recs->n - 1] - 20));
	tl_crashed(data, recs->lsn[recs->n - 1] - 1); /* never synced */
	t_srv_init(&s, d->path, "data");
	assert_int_equal(t_srv_start(&s), 0);
	assert_true(WIFEXITED(t_srv_stop(&s, SIGTERM)));
	assert_int_equal(fs_read_all(s.log, &log, &len), 0);
	log = realloc(log, len + 1);
	log[len] = 0;
	/* The bytes run to the last non-zero one of the 20 left. */
	snprintf(want, sizeof(want), "torn tail cut segment=%s offset=%llu ",
	    seg, (unsigned long long)off);
	tl_has((char *)log, want);
	snprintf(want, sizeof(want), " after_lsn=%llu ",
	    (unsigned long long)(recs->lsn[recs->n - 1] - 1));
	tl_has((char *)log, want);
	snprintf(want, sizeof(want), " torn_tail=cut segment=%s offset=%llu ",
	    seg, (unsigned long long)off);
	tl_has((char *)log, want);
	free(log);
	free(recs);
}

/* Damage followed by valid records stops the start, naming segment and
 * offset and the commands to run; after repair it starts. */
static void
test_sluiced_refuses_damage_and_starts_after_repair(void **state)
{
	struct t_dir *d = *state;
	struct tl_run *r = malloc(sizeof(*r));
	struct tl_recs *recs = malloc(sizeof(*recs));
	char data[600];
	char seg[600], want[2048];
	const char *argv[] = { t_bin("sluiced"), "--data", data, "--listen",
		"tcp://127.0.0.1:1", NULL };
	struct sluice_client *c;
	struct sluice_stats *st;
	struct tl_log l;
	struct t_srv s;
	uint64_t off, last;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	last = tl_history(&l, 60);
	tl_close(&l);
	snprintf(seg, sizeof(seg), "%s", tl_seg_at(data, 0));
	tl_recs(seg, recs);
	off = recs->off[10];
	t_flip(seg, off + 8, 0x01); /* its LSN */
	argv[0] = strdup(argv[0]);
	assert_int_equal(
	    t_run((char *const *)argv, NULL, NULL, 0, r->err, sizeof(r->err)),
	    1);
	free((char *)argv[0]);
	snprintf(want, sizeof(want), "damaged log segment=%s offset=%llu", seg,
	    (unsigned long long)off);
	tl_has(r->err, want);
	snprintf(want, sizeof(want),
	    "run 'sluice-log verify %s', then "
	    "'sluice-log repair %s'",
	    data, data);
	tl_has(r->err, want);

	assert_int_equal(tl_tool(r, "repair", data, NULL), 0);
	t_srv_init(&s, d->path, "data");
	assert_int_equal(t_srv_start(&s), 0);
	assert_int_equal(sluice_open(s.url, &c), 0);
	assert_int_equal(sluice_stats(c, NULL, &st), 0);
	/* every record but the damaged one, salvaged; then the epoch the
	 * restarted leader began */
	assert_true(st->lsn == last + 1);
	sluice_stats_free(st);
	sluice_close(c);
	assert_true(WIFEXITED(t_srv_stop(&s, SIGTERM)));
	free(recs);
	free(r);
}

/* ---- the walk against the segment reader ------------------------------ */

/* fuzz_segwalk's check, linked in: seg_scan_mem and sluice-log's walk agree on
 * the first problem of the bytes, and the walk stays inside them. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A segment of 12 KiB as a writer of batches in flight at once leaves it
 * after a crash: records, a pad up to the block, records, a pad, records;
 * the first batch's last record and its pad never reached the disk
 * (zeros). Its record count goes to *n. */
static void
gap_image(struct buf *b, unsigned *n)
{
	static const uint8_t zeros[4096];
	struct seg_hdr h = { .version = SEG_VERSION,
		.hdr_size = SEG_HDR_SIZE,
		.first_lsn = 1,
		.epoch = 1,
		.created = 1700000000000,
		.size = 3 * 4096 };
	uint64_t lsn = 1;
	size_t lost = 0;

	buf_init(b);
	seg_hdr_encode(buf_extend(b, SEG_HDR_SIZE), &h);
	for (size_t blk = 1; blk <= 3; blk++) {
		for (int i = 0; i < 3; i++) {
			if (blk == 1 && i == 2)
				lost = b->len;
			t_put_rec(b, lsn++, 1);
		}
		if (blk < 3) {
			struct rec_hdr ph = { .type = REC_PAD,
				.lsn = lsn++,
				.epoch = 1,
				.time = 1700000000000 };

			assert_int_equal(
			    rec_encode(b, &ph, zeros,
			        blk * 4096 - b->len - REC_HDR_SIZE),
			    0);
		}
	}
	*n = (unsigned)lsn - 1;
	assert_non_null(buf_extend(b, 3 * 4096 - b->len));
	memset(b->data + lost, 0, 4096 - lost);
}

/* `img` (`len` bytes, its data up to `end`) damaged at random `rounds`
 * times in every way a disk or a crash can: flipped bits, zeroed runs, a
 * record copied over another (an LSN out of sequence), the file cut
 * short, garbage after the end; the walk and the reader agree on each. */
static void
damage_and_compare(
    const uint8_t *img, size_t len, size_t end, uint64_t *seed, int rounds)
{
	uint8_t *buf = malloc(len);

	assert_non_null(buf);
	for (int i = 0; i < rounds; i++) {
		size_t n = len;

		memcpy(buf, img, len);
		for (int k = 0; k < 1 + (int)t_below(seed, 3); k++) {
			size_t at = (size_t)t_below(seed, end);
			size_t run = 1 + (size_t)t_below(seed, 64);

			switch (t_below(seed, 5)) {
			case 0:
				buf[at] ^= (uint8_t)(1u << t_below(seed, 8));
				break;
			case 1:
				if (at + run > len)
					run = len - at;
				memset(buf + at, 0, run);
				break;
			case 2: {
				/* A record's first 8-aligned bytes copied to
				 * another aligned place. */
				size_t from = SEG_HDR_SIZE +
				    (size_t)t_below(seed, end - SEG_HDR_SIZE);
				size_t to = SEG_HDR_SIZE +
				    (size_t)t_below(seed, end - SEG_HDR_SIZE);

				from &= ~(size_t)7;
				to &= ~(size_t)7;
				run = 8 * (1 + (size_t)t_below(seed, 24));
				if (from + run > len || to + run > len)
					break;
				memmove(buf + to, img + from, run);
				break;
			}
			case 3:
				n = at;
				break;
			case 4:
				if (end + run <= len)
					for (size_t j = 0; j < run; j++)
						buf[end + j] =
						    (uint8_t)t_rand(seed);
				break;
			}
		}
		LLVMFuzzerTestOneInput(buf, n);
	}
	free(buf);
}

/* A real segment, and one with the gap batches in flight leave after a
 * crash (a torn tail as it is), each damaged at random. */
static void
test_the_walk_agrees_with_the_segment_reader(void **state)
{
	struct t_dir *d = *state;
	uint64_t seed = t_seed(7);
	struct seg_scan sc;
	char data[600];
	uint8_t *img;
	size_t len, end;
	struct tl_log l;
	struct buf b;
	unsigned n;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	tl_open(&l, data);
	tl_history(&l, 40);
	tl_close(&l);
	assert_int_equal(fs_read_all(tl_seg_at(data, 0), &img, &len), 0);
	for (end = len; end > SEG_HDR_SIZE && img[end - 1] == 0; end--)
		;
	len = end + 512 < len ? end + 512 : len; /* enough of the zeros */
	damage_and_compare(img, len, end, &seed, 3000);
	free(img);

	gap_image(&b, &n);
	assert_int_equal(seg_scan_mem(b.data, b.len, 0, NULL, NULL, &sc), 0);
	assert_true(sc.torn && sc.gap && sc.last_lsn == 2 && sc.gap_last == n);
	LLVMFuzzerTestOneInput(b.data, b.len);
	for (end = b.len; end > SEG_HDR_SIZE && b.data[end - 1] == 0; end--)
		;
	damage_and_compare(b.data, b.len, end, &seed, 3000);
	buf_fini(&b);
}

/* ---- the seed corpus of fuzz_segwalk ------------------------------- */

static int
write_corpus(const char *dir)
{
	struct buf b;
	char path[600];
	uint64_t offs[9];
	int n = 0;

	if (fs_mkdir_p(dir) != 0)
		return 1;
	/* A clean segment, one torn, one damaged in the middle, one with a
	 * torn header, one out of sequence: 4 KiB each; then one with a gap. */
	for (int kind = 0; kind < 5; kind++) {
		t_seg_image(&b, 1, 1, 4096, 8, offs);
		switch (kind) {
		case 1:
			memset(b.data + offs[7] + 20, 0, 4096 - offs[7] - 20);
			break;
		case 2:
			b.data[offs[3] + 45] ^= 0x20;
			break;
		case 3:
			memset(b.data, 0, SEG_HDR_SIZE);
			memset(b.data + SEG_HDR_SIZE, 0, 4096 - SEG_HDR_SIZE);
			b.data[10] = 7;
			break;
		case 4:
			le_store_u64(b.data + offs[5] + 8, 77);
			break;
		}
		snprintf(path, sizeof(path), "%s/seg-%d", dir, kind);
		t_write_file(path, b.data, b.len);
		buf_fini(&b);
		n++;
	}
	/* The gap batches in flight leave (12 KiB). */
	{
		unsigned recs;

		gap_image(&b, &recs);
		snprintf(path, sizeof(path), "%s/seg-gap", dir);
		t_write_file(path, b.data, b.len);
		buf_fini(&b);
		n++;
	}
	printf("wrote %d inputs to %s\n", n, dir);
	return 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_a_clean_log_over_several_segments_is_sound,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_an_empty_directory_is_a_valid_empty_log,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_what_is_not_a_data_directory_is_named, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_usage_errors_exit_2,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_an_unreadable_segment_is_named, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_tail_torn_at_every_offset_is_a_torn_tail,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_flipped_byte_in_the_middle_of_a_segment_is_damage,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_flipped_byte_in_a_snapshot_is_damage, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_a_missing_segment_is_named,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_record_type_from_a_newer_sluiced_is_named,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_pad_records_are_named_and_sound, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_gap_of_batches_in_flight_is_a_torn_tail,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_segment_from_an_older_epoch_is_damage,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_record_that_does_not_apply_is_damage, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_damage_before_the_snapshot_loses_nothing,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_dump_json_prints_every_field_and_escapes,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_dump_tube_follows_ids_through_the_log_and_snapshot,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_stats_counts_live_and_dead_records, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_stats_says_what_keeps_each_segment, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_progress_shows_on_a_terminal_only, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_state_at_agrees_with_a_live_server, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sluiced_cuts_a_torn_tail_and_says_where,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sluiced_refuses_damage_and_starts_after_repair,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_walk_agrees_with_the_segment_reader,
		    t_tmpdir_setup, t_tmpdir_teardown),
	};

	if (argc == 3 && strcmp(argv[1], "--corpus") == 0)
		return write_corpus(argv[2]);
	if (access(t_bin("sluice-log"), X_OK) != 0) {
		fprintf(stderr, "sluice-log is not built next to this test\n");
		return 77;
	}
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("logtool", tests, NULL, NULL);
}
