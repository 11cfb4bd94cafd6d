/* Recovery and the log scan beneath it. Recovery starts at the newest
 * sound snapshot, else at LSN 1: a log whose beginning was removed cannot
 * be replayed without a snapshot that covers what is gone. */
#include <errno.h>

#include "log/durable.h"
#include "log/recover.h"
#include "log/snap.h"
#include "t_log.h"

enum { SEG = 64 << 10 };

/* A snapshot at `lsn` holding one opaque entry. */
static void
write_snapshot(const char *dir, uint64_t lsn)
{
	static uint8_t buf[4096];
	struct snap_writer w;

	assert_int_equal(
	    snap_writer_open(&w, dir, lsn, 1, 1000, buf, sizeof(buf)), 0);
	assert_int_equal(snap_writer_add(&w, 7, "state", 5, NULL, 0), 0);
	assert_int_equal(snap_writer_commit(&w), 0);
}

struct seen {
	uint64_t first, last, n;
	uint64_t entries;
};

static int
count_rec(const struct rec_hdr *h, const void *body, void *arg)
{
	struct seen *s = arg;

	(void)body;
	if (s->n == 0)
		s->first = h->lsn;
	s->last = h->lsn;
	s->n++;
	return 0;
}

static int
count_entry(void *arg, uint16_t type, const void *data, size_t len)
{
	struct seen *s = arg;

	(void)type;
	(void)data;
	(void)len;
	s->entries++;
	return 0;
}

static const struct recover_ops ops = { count_entry, count_rec };

/* Without a snapshot, a log that starts at LSN 5 lost records 1..4. */
static void
test_a_log_that_lost_its_beginning_needs_a_snapshot(void **state)
{
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };

	t_seg_file(d->path, 5, 1, SEG, 3, NULL);
	assert_int_equal(
	    recover(d->path, 0, 0, &ops, &s, &res), SLUICE_ECORRUPT);
	assert_true(s.n == 0);
	assert_non_null(strstr(res.end.bad_path, "00000000000000000005.wal"));
	assert_non_null(res.end.bad_what);
}

/* A snapshot at LSN 4 covers them: the records after it are replayed. */
static void
test_a_snapshot_covers_the_removed_records(void **state)
{
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };

	t_seg_file(d->path, 5, 1, SEG, 3, NULL);
	write_snapshot(d->path, 4);
	assert_int_equal(recover(d->path, 0, 0, &ops, &s, &res), 0);
	assert_true(res.snap_lsn == 4);
	assert_true(s.entries == 1);
	assert_true(s.n == 3 && s.first == 5 && s.last == 7);
	assert_true(res.last_lsn == 7);
}

/* When that snapshot is damaged there is nothing left to start from. */
static void
test_a_damaged_snapshot_leaves_no_starting_point(void **state)
{
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };
	char path[512];

	t_seg_file(d->path, 5, 1, SEG, 3, NULL);
	write_snapshot(d->path, 4);
	assert_int_equal(snap_path(path, sizeof(path), d->path, 4), 0);
	t_flip(path, SNAP_HDR_SIZE + 20, 0x40);
	assert_int_equal(
	    recover(d->path, 0, 0, &ops, &s, &res), SLUICE_ECORRUPT);
	assert_true(res.snaps_skipped == 1);
	assert_true(s.n == 0 && s.entries == 0);
}

/* A state asked for below the first segment, with no snapshot at or
 * before it, cannot be rebuilt either. */
static void
test_upto_below_the_log_and_every_snapshot_is_refused(void **state)
{
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };

	t_seg_file(d->path, 5, 1, SEG, 3, NULL);
	write_snapshot(d->path, 4);
	assert_int_equal(
	    recover(d->path, 0, 3, &ops, &s, &res), SLUICE_ECORRUPT);
	assert_true(s.n == 0);
	assert_int_equal(recover(d->path, 0, 6, &ops, &s, &res), 0);
	assert_true(s.n == 2 && s.last == 6);
}

/* recover_live (a snapshot built beside a writer): the newest snapshot
 * at or below the LSN, then the records up to it and not one past it;
 * asked for more than the log holds, it says so instead of handing over
 * a state short of the LSN. */
static void
test_a_live_rebuild_stops_at_its_lsn_and_refuses_past_the_end(void **state)
{
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };

	t_seg_file(d->path, 5, 1, SEG, 6, NULL); /* LSNs 5..10 */
	write_snapshot(d->path, 4);
	write_snapshot(d->path, 7);
	assert_int_equal(recover_live(d->path, 9, &ops, &s, &res), 0);
	assert_true(res.snap_lsn == 7 && s.entries == 1);
	assert_true(s.n == 2 && s.first == 8 && s.last == 9);
	assert_true(res.last_lsn == 9 && res.records == 2);
	/* At a snapshot's own LSN: the snapshot alone. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(recover_live(d->path, 7, &ops, &s, &res), 0);
	assert_true(s.entries == 1 && s.n == 0 && res.last_lsn == 7);
	/* Between the two snapshots: the older one and the log. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(recover_live(d->path, 6, &ops, &s, &res), 0);
	assert_true(res.snap_lsn == 4 && s.n == 2 && s.last == 6);
	/* Past the end of the log. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(
	    recover_live(d->path, 12, &ops, &s, &res), SLUICE_ECORRUPT);
	assert_true(res.last_lsn == 10);
}

/* recover_live_after (the snapshot worker's state kept): no snapshot is
 * read, the records after the state's LSN up to the one asked for go out
 * and not one past it; LSNs out of order are refused, and a log short of
 * the LSN asked for is SLUICE_ECORRUPT as with recover_live. */
static void
test_a_rebuild_from_a_state_held_reads_the_log_after_it_alone(void **state)
{
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };

	t_seg_file(d->path, 5, 1, SEG, 6, NULL); /* LSNs 5..10 */
	write_snapshot(d->path, 7);
	assert_int_equal(recover_live_after(d->path, 5, 9, &ops, &s, &res), 0);
	assert_true(s.entries == 0 && res.snap_lsn == 5);
	assert_true(s.n == 4 && s.first == 6 && s.last == 9);
	assert_true(res.last_lsn == 9 && res.records == 4);
	memset(&s, 0, sizeof(s));
	assert_int_equal(
	    recover_live_after(d->path, 9, 9, &ops, &s, &res), -EINVAL);
	assert_int_equal(
	    recover_live_after(d->path, 0, 9, &ops, &s, &res), -EINVAL);
	assert_true(s.n == 0);
	assert_int_equal(recover_live_after(d->path, 8, 12, &ops, &s, &res),
	    SLUICE_ECORRUPT);
	assert_true(res.last_lsn == 10 && s.first == 9);
	/* The state's LSN is below the log's first record: the records it
	 * lacks are gone, which is not a state at 9 either. */
	memset(&s, 0, sizeof(s));
	assert_int_not_equal(
	    recover_live_after(d->path, 2, 9, &ops, &s, &res), 0);
}

/* A log that starts at LSN 1 needs no snapshot. */
static void
test_a_whole_log_needs_no_snapshot(void **state)
{
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };

	t_seg_file(d->path, 1, 1, SEG, 4, NULL);
	assert_int_equal(recover(d->path, 0, 0, &ops, &s, &res), 0);
	assert_true(s.n == 4 && s.first == 1 && res.last_lsn == 4);
	assert_true(res.snap_lsn == 0);
}

static int
refuse_second(const struct rec_hdr *h, const void *body, void *arg)
{
	(void)body;
	(void)arg;
	return h->lsn == 2 ? SLUICE_ECORRUPT : 0;
}

/* A record the caller refuses (one that does not apply to its state) stops
 * the scan with the caller's code; it is not damage at some offset, so the
 * end is not written as if it were. */
static void
test_a_refused_record_is_the_callers_verdict_not_damage(void **state)
{
	struct t_dir *d = *state;
	struct logdir_end end, before;

	t_seg_file(d->path, 1, 1, SEG, 4, NULL);
	memset(&end, 0xa5, sizeof(end));
	before = end;
	assert_int_equal(logdir_scan(d->path, 0, 0, refuse_second, NULL, &end),
	    SLUICE_ECORRUPT);
	assert_memory_equal(&end, &before, sizeof(end));
}

/* A log written before the DURABLE mark existed has none: it reads as it
 * did, and a torn tail (a prefix of the next record) is cut. */
static void
test_a_log_without_a_durable_mark_cuts_its_torn_tail(void **state)
{
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };
	uint64_t offs[5];
	const char *path = t_seg_file(d->path, 1, 1, SEG, 4, offs);

	t_zero(path, offs[3] + 20, offs[4] - offs[3] - 20);
	assert_int_equal(recover(d->path, RECOVER_CUT, 0, &ops, &s, &res), 0);
	assert_true(res.last_lsn == 3 && s.n == 3);
	assert_true(res.end.torn && res.end.cut);
	assert_true(res.durable.lsn == 0 && !res.durable.clean);
}

/* With the mark: the same torn bytes are cut only above it; at or below
 * it, after a clean stop, or a log that ends before it, recovery refuses
 * and nothing is cut. */
static void
test_the_durable_mark_decides_what_may_be_cut(void **state)
{
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };
	struct durable m;
	uint64_t offs[5];
	const char *path = t_seg_file(d->path, 1, 1, SEG, 4, offs);

	t_zero(path, offs[3] + 20, offs[4] - offs[3] - 20);
	/* record 4 was synced */
	assert_int_equal(durable_open(&m, d->path, 4), 0);
	durable_close(&m);
	assert_int_equal(
	    recover(d->path, RECOVER_CUT, 0, &ops, &s, &res), SLUICE_ECORRUPT);
	assert_true(res.end.bad_off == offs[3]);
	assert_true(res.durable.lsn == 4);
	/* a clean stop at 3: nothing torn may follow it */
	assert_int_equal(durable_open(&m, d->path, 0), 0);
	assert_int_equal(durable_note(&m, 3, true, true), 0);
	durable_close(&m);
	memset(&s, 0, sizeof(s));
	assert_int_equal(
	    recover(d->path, RECOVER_CUT, 0, &ops, &s, &res), SLUICE_ECORRUPT);
	/* a crash with 3 synced: record 4 was never acknowledged */
	assert_int_equal(durable_lower(d->path, 2), 0);
	assert_int_equal(durable_open(&m, d->path, 3), 0);
	durable_close(&m);
	memset(&s, 0, sizeof(s));
	assert_int_equal(recover(d->path, RECOVER_CUT, 0, &ops, &s, &res), 0);
	assert_true(res.last_lsn == 3 && res.end.cut);
	/* a mark above the end of the log: records known written are gone */
	assert_int_equal(durable_open(&m, d->path, 9), 0);
	durable_close(&m);
	memset(&s, 0, sizeof(s));
	assert_int_equal(
	    recover(d->path, RECOVER_CUT, 0, &ops, &s, &res), SLUICE_ECORRUPT);
	assert_true(res.end.bad_lsn == 3);
	/* lowered on purpose (a cut, a repair): it starts again */
	assert_int_equal(durable_lower(d->path, 3), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(recover(d->path, RECOVER_CUT, 0, &ops, &s, &res), 0);
}

static const char *
refuse_snap_4(void *arg, uint64_t name_lsn, const struct snap_info *si)
{
	(void)arg;
	(void)si;
	return name_lsn == 4 ? "not a state to start from" : NULL;
}

static int
no_reset(void *arg)
{
	memset(arg, 0, sizeof(struct seen));
	return 0;
}

/* A snapshot whose state the caller's rule refuses (snap_check) is
 * skipped like a damaged one: the one before it is used, and the log
 * after it replayed. */
static void
test_a_snapshot_the_rule_refuses_is_skipped(void **state)
{
	static const struct recover_ops checked = { count_entry, count_rec,
		no_reset, refuse_snap_4 };
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };

	t_seg_file(d->path, 1, 1, SEG, 6, NULL);
	write_snapshot(d->path, 2);
	write_snapshot(d->path, 4);
	assert_int_equal(recover(d->path, 0, 0, &checked, &s, &res), 0);
	assert_true(res.snap_lsn == 2 && res.snaps_skipped == 1);
	assert_true(s.first == 3 && s.last == 6);
}

static void
note_expected(void *arg, uint64_t records)
{
	struct seen *s = arg;

	s->entries = records; /* no snapshot entries here: reused */
}

/* Before the replay the caller is told how many records come: exactly,
 * for a log a writer closed cleanly over several segments, and from a
 * snapshot's LSN on. */
static void
test_the_caller_is_told_how_many_records_come(void **state)
{
	static const struct recover_ops told = { NULL, count_rec, NULL, NULL,
		note_expected };
	enum { N = 3000 };
	struct t_dir *d = *state;
	struct recover_result res;
	struct seen s = { 0 };
	struct logdir ld;
	struct wal *w;
	uint64_t lsn = 0;

	assert_int_equal(t_wal_open(d->path, WAL_FSYNC_ALWAYS, SEG, 1, &w), 0);
	for (int i = 0; i < N; i++)
		lsn = t_wal_append(w);
	assert_int_equal(wal_close(w), 0);
	assert_true(lsn == N);
	assert_int_equal(logdir_list(d->path, &ld), 0);
	assert_true(ld.n >= 3);
	logdir_fini(&ld);
	assert_int_equal(recover(d->path, 0, 0, &told, &s, &res), 0);
	assert_true(s.entries == N && s.n == N);

	memset(&s, 0, sizeof(s));
	write_snapshot(d->path, 1000);
	assert_int_equal(recover(d->path, 0, 0, &told, &s, &res), 0);
	assert_true(s.entries == N - 1000 && s.n == N - 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_the_caller_is_told_how_many_records_come,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_log_that_lost_its_beginning_needs_a_snapshot,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_snapshot_covers_the_removed_records, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_damaged_snapshot_leaves_no_starting_point,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_upto_below_the_log_and_every_snapshot_is_refused,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_live_rebuild_stops_at_its_lsn_and_refuses_past_the_end,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_rebuild_from_a_state_held_reads_the_log_after_it_alone,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_whole_log_needs_no_snapshot, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_refused_record_is_the_callers_verdict_not_damage,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_log_without_a_durable_mark_cuts_its_torn_tail,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_durable_mark_decides_what_may_be_cut,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_snapshot_the_rule_refuses_is_skipped, t_tmpdir_setup,
		    t_tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("recover", tests, NULL, NULL);
}
