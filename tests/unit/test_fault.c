/* Faults injected into the writer's I/O (built against sluice_log_fault):
 * a short write, EIO or ENOSPC at the Nth write, fdatasync or rename, for
 * every N in a range, under a workload that rotates through segments.
 * After each run the log is reopened and scanned: every LSN ever reported
 * durable is there and valid, nothing was reported durable after the
 * failure, and the writer continues at the right LSN. Also: the space
 * reservation with a disk that cannot preallocate, and a failing cut. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log/logdir.h"
#include "log/seg.h"
#include "log/wal.h"
#include "sluice.h"
#include "t_lib.h"
#include "t_log.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/fsutil.h"
#include "util/log.h"

enum {
	SEG = 64 << 10,
	ROUNDS = 40,    /* batches per run */
	PER_ROUND = 40, /* records per batch: ~2 rotations per run */
	N_MAX = 40,
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

/* What a run saw. */
struct run {
	uint64_t durable;  /* the highest LSN reported durable */
	uint64_t appended; /* the last LSN appended */
	bool poisoned;
};

/* Turns the loop until `lsn` is durable or the writer is poisoned, and
 * checks that the durable LSN never moves once it is. */
static void
drive(struct wal *w, uint64_t lsn, struct run *run)
{
	int64_t deadline = clock_mono_ns() + 10 * 1000000000LL;

	for (;;) {
		uint64_t d = wal_durable_lsn(w);

		assert_true(d >= run->durable);
		if (run->poisoned)
			assert_true(d == run->durable);
		run->durable = d;
		if (wal_poisoned(w))
			run->poisoned = true;
		if (run->poisoned || d >= lsn)
			return;
		assert_true(clock_mono_ns() < deadline);
		t_wal_turn(w, 100);
	}
}

/* One run with `point` armed to fail its Nth call with `effect`. */
static void
one_run(const char *dir, enum wal_fsync fsync, enum fault_point point,
    unsigned n, int effect)
{
	struct run run = { 0 };
	struct logdir_end end;
	struct wal *w;
	uint64_t want = 1;
	int rc;

	rm_files(dir);
	fault_reset();
	assert_int_equal(t_wal_open(dir, fsync, SEG, 2, &w), 0);
	assert_int_equal(wal_prealloc_wait(w, 10000), 0);
	fault_arm(point, n, effect, false);
	for (int round = 0; round < ROUNDS && !run.poisoned; round++) {
		for (int i = 0; i < PER_ROUND; i++) {
			uint64_t lsn;

			rc = t_wal_try_append(w, 0, &lsn);
			if (rc == SLUICE_ELOG) {
				run.poisoned = true;
				break;
			}
			assert_int_equal(rc, 0);
			run.appended = lsn;
		}
		wal_submit(w);
		drive(w, run.appended, &run);
	}
	drive(w, run.appended, &run);
	/* The close syncs: that may be where the fault fires. */
	rc = wal_close(w);
	if (run.poisoned)
		assert_int_equal(rc, SLUICE_ELOG);
	else
		assert_true(rc == 0 || rc == SLUICE_ELOG);
	run.poisoned = run.poisoned || rc != 0;
	/* Errors poison; a short write is only continued. */
	if (effect == FAULT_SHORT || fault_fired(point) == 0) {
		assert_false(run.poisoned);
		assert_true(run.durable == run.appended);
	} else {
		assert_true(run.poisoned);
	}
	fault_reset();

	/* Every durable LSN is there and valid; the tail, if torn, goes. */
	assert_int_equal(
	    logdir_scan(dir, 0, LOGDIR_CUT, t_visit_seq, &want, &end), 0);
	assert_true(end.last_lsn >= run.durable);
	assert_true(end.last_lsn <= run.appended);

	/* And the writer continues right after it. */
	assert_int_equal(t_wal_open(dir, WAL_FSYNC_ALWAYS, SEG, 1, &w), 0);
	assert_true(wal_last_lsn(w) == end.last_lsn);
	for (int i = 1; i <= 5; i++)
		assert_true(t_wal_append(w) == end.last_lsn + (uint64_t)i);
	assert_int_equal(wal_close(w), 0);
	end = t_scan_all(dir, 1);
	assert_false(end.torn);
}

/* With three batches in flight at once, the write that fails may be one
 * beside others: the writer is poisoned, the durable LSN never moves after
 * the failure, and everything it reported durable reads back in order.
 * Batches written beside the failed one may have reached the disk after
 * its gap: zeros, then records, which a scan reports as a torn tail (the
 * gap, seg.h) and cuts: none of them was reported durable. */
static void
test_fault_write_fails_beside_others(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	int gaps = 0, rc;

	if (t_wal_commit != WAL_COMMIT_DIRECT || t_wal_fsync_op)
		return; /* batches go beside others only there */
	for (unsigned n = 2; n <= 12; n += 2) {
		struct run run = { 0 };
		struct logdir_end end;
		struct wal_stats st;
		struct wal *w;
		uint64_t want = 1;

		rm_files(dir);
		fault_reset();
		t_wal_inflight = 3;
		assert_int_equal(
		    t_wal_open(dir, WAL_FSYNC_ALWAYS, SEG, 2, &w), 0);
		t_wal_inflight = 0;
		assert_int_equal(wal_prealloc_wait(w, 10000), 0);
		fault_arm(FAULT_WAL_WRITE, n, -EIO, false);
		for (int round = 0; round < 200 && !run.poisoned; round++) {
			for (int i = 0; i < 1 + round % 4; i++) {
				uint64_t lsn;
				int rc = t_wal_try_append(w, 0, &lsn);

				if (rc == SLUICE_ELOG)
					break;
				assert_int_equal(rc, 0);
				run.appended = lsn;
			}
			wal_submit(w);
			if (round % 3 == 2)
				t_wal_turn(w, 5);
			else
				wal_reap(w);
			assert_true(wal_durable_lsn(w) >= run.durable);
			run.durable = wal_durable_lsn(w);
			run.poisoned = wal_poisoned(w);
		}
		drive(w, run.appended, &run);
		wal_stats(w, &st);
		assert_true(fault_fired(FAULT_WAL_WRITE) == 1);
		assert_true(run.poisoned);
		assert_int_equal(wal_close(w), SLUICE_ELOG);
		fault_reset();
		rc = logdir_scan(dir, 0, LOGDIR_CUT, t_visit_seq, &want, &end);
		assert_int_equal(rc, 0);
		assert_true(end.last_lsn >= run.durable);
		assert_true(want - 1 >= run.durable);
		assert_true(!end.gap ||
		    (end.torn && end.cut && end.gap_last > end.last_lsn + 1));
		gaps += end.gap;
	}
	print_message("%d of 6 failed runs left a gap before batches written "
	              "beside the failed one\n",
	    gaps);
}

static void
every_n(const char *dir, enum wal_fsync fsync, enum fault_point point,
    unsigned n_max, int effect)
{
	for (unsigned n = 1; n <= n_max; n++)
		one_run(dir, fsync, point, n, effect);
}

static const char *
dir_of(void **state)
{
	return ((struct t_dir *)*state)->path;
}

/* A short write at the Nth write is continued: nothing is lost. */
static void
test_fault_short_write_at_every_n(void **state)
{
	every_n(dir_of(state), WAL_FSYNC_ALWAYS, FAULT_WAL_WRITE, N_MAX,
	    FAULT_SHORT);
	every_n(
	    dir_of(state), WAL_FSYNC_NEVER, FAULT_WAL_WRITE, 10, FAULT_SHORT);
}

/* EIO at the Nth write poisons; what was durable stays. */
static void
test_fault_eio_on_write_at_every_n(void **state)
{
	every_n(dir_of(state), WAL_FSYNC_ALWAYS, FAULT_WAL_WRITE, N_MAX, -EIO);
	every_n(dir_of(state), WAL_FSYNC_INTERVAL, FAULT_WAL_WRITE, 20, -EIO);
	every_n(dir_of(state), WAL_FSYNC_NEVER, FAULT_WAL_WRITE, 10, -EIO);
}

/* ENOSPC at the Nth write: the same. */
static void
test_fault_enospc_on_write_at_every_n(void **state)
{
	every_n(
	    dir_of(state), WAL_FSYNC_ALWAYS, FAULT_WAL_WRITE, N_MAX, -ENOSPC);
}

/* EIO at the Nth fdatasync (of a batch, of the segment being left, of
 * the directory): poisoned, never retried. */
static void
test_fault_eio_on_fsync_at_every_n(void **state)
{
	every_n(dir_of(state), WAL_FSYNC_ALWAYS, FAULT_WAL_FSYNC, N_MAX, -EIO);
	every_n(dir_of(state), WAL_FSYNC_INTERVAL, FAULT_WAL_FSYNC, 10, -EIO);
	every_n(dir_of(state), WAL_FSYNC_NEVER, FAULT_WAL_FSYNC, 3, -EIO);
}

static void
test_fault_enospc_on_fsync_at_every_n(void **state)
{
	every_n(
	    dir_of(state), WAL_FSYNC_ALWAYS, FAULT_WAL_FSYNC, N_MAX, -ENOSPC);
}

/* A spare that cannot be renamed into place poisons too. */
static void
test_fault_rename_at_every_n(void **state)
{
	every_n(dir_of(state), WAL_FSYNC_ALWAYS, FAULT_WAL_RENAME, 3, -EIO);
	every_n(dir_of(state), WAL_FSYNC_NEVER, FAULT_WAL_RENAME, 3, -ENOSPC);
}

/* With `interval`, a failed timed fdatasync poisons. */
static void
test_fault_interval_fsync_failure_poisons(void **state)
{
	int64_t deadline = clock_mono_ns() + 10 * 1000000000LL;
	struct wal *w;
	uint64_t lsn = 0;

	fault_reset();
	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_INTERVAL, SEG, 1, &w), 0);
	fault_arm(FAULT_WAL_FSYNC, 1, -EIO, false);
	for (int i = 0; i < 10; i++)
		lsn = t_wal_append(w);
	t_wal_wait_durable(w, lsn);
	while (!wal_poisoned(w)) {
		assert_true(clock_mono_ns() < deadline);
		t_wal_turn(w, 50);
	}
	assert_true(wal_durable_lsn(w) == lsn);
	assert_int_equal(wal_append(w, 1, 0, "x", 1, 0, &lsn), SLUICE_ELOG);
	assert_int_equal(wal_submit(w), SLUICE_ELOG);
	assert_int_equal(wal_sync(w, 1000), SLUICE_ELOG);
	assert_int_equal(wal_close(w), SLUICE_ELOG);
	fault_reset();
}

/* A disk that cannot preallocate: new work is refused when the space left
 * would not cover the reservation, while other records still go in and
 * become durable; when space comes back new work is accepted again. */
static void
test_fault_reservation_refuses_new_work_not_acks(void **state)
{
	const uint64_t reserved = 16 << 10;
	int64_t deadline;
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0, acked = 0;
	int rc = 0, puts = 0;

	fault_reset();
	/* Call 1: the first segment; 2: one spare; then the disk is full. */
	fault_arm(FAULT_SEG_ALLOC, 3, -ENOSPC, true);
	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SEG, 1, &w), 0);
	assert_int_equal(wal_prealloc_wait(w, 10000), 0);
	wal_set_reserved(w, 0, reserved);

	/* New work until refused: within the two segments. */
	for (int i = 0; i < 5000; i++) {
		rc = t_wal_try_append(w, WAL_NEW_WORK, &lsn);
		if (rc != 0)
			break;
		puts++;
	}
	assert_int_equal(rc, SLUICE_ENOSPC);
	assert_true(puts > 100);
	t_wal_wait_durable(w, lsn);
	wal_stats(w, &st);
	assert_true(st.enospc >= 1);
	assert_true(st.avail >= reserved);
	assert_true(st.avail < reserved + 200);
	assert_true(fault_fired(FAULT_SEG_ALLOC) >= 1);

	/* Acks (not new work) still fit in the reserve and become durable;
	 * new work stays refused. */
	for (uint64_t used = 0; used + 200 < reserved;) {
		acked = t_wal_append(w);
		used += 120;
		assert_int_equal(
		    t_wal_try_append(w, WAL_NEW_WORK, &lsn), SLUICE_ENOSPC);
	}
	t_wal_wait_durable(w, acked);

	/* Space comes back: after the preallocator's retry, new work is
	 * accepted again. */
	fault_reset();
	deadline = clock_mono_ns() + 10 * 1000000000LL;
	for (;;) {
		rc = t_wal_try_append(w, WAL_NEW_WORK, &lsn);
		if (rc == 0)
			break;
		assert_int_equal(rc, SLUICE_ENOSPC);
		assert_true(clock_mono_ns() < deadline);
		t_wal_turn(w, 50);
	}
	t_wal_wait_durable(w, lsn);
	assert_int_equal(wal_close(w), 0);
	t_scan_all(dir_of(state), 1);
}

/* A failing cut leaves the torn tail in place and says so; the next scan
 * cuts it. */
static void
test_fault_failed_cut_is_reported(void **state)
{
	struct logdir_end end;
	char path[512];
	struct wal *w;
	uint64_t lsn = 0;

	fault_reset();
	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SEG, 1, &w), 0);
	for (int i = 0; i < 10; i++)
		lsn = t_wal_append(w);
	assert_int_equal(wal_close(w), 0);
	assert_int_equal(seg_path(path, sizeof(path), dir_of(state), 1), 0);
	/* The first byte of a next record, cut short (logdir_scan knows
	 * no DURABLE mark: the segment's own rules decide). */
	assert_int_equal(logdir_scan(dir_of(state), 0, 0, NULL, NULL, &end), 0);
	t_poke(path, end.offset, "\x30", 1);
	fault_arm(FAULT_SEG_CUT, 1, -EIO, false);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, LOGDIR_CUT, NULL, NULL, &end), -EIO);
	fault_reset();
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, LOGDIR_CUT, NULL, NULL, &end), 0);
	assert_true(end.torn && end.cut && end.last_lsn == lsn);
}

/* A pause point armed from text (as sluiced-fault does) sleeps there;
 * malformed text arms nothing; reset disarms it. */
/* A file system that refuses O_DIRECT: the writer asked for it commits
 * inline instead, says so, and the log reads the same. */
static void
test_fault_odirect_refused_commits_inline(void **state)
{
	const char *dir = dir_of(state);
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0;
	enum wal_commit was = t_wal_commit;

	rm_files(dir);
	fault_reset();
	fault_arm(FAULT_WAL_ODIRECT, 1, -EINVAL, true);
	t_wal_commit = WAL_COMMIT_DIRECT;
	assert_int_equal(t_wal_open(dir, WAL_FSYNC_ALWAYS, SEG, 1, &w), 0);
	t_wal_commit = was;
	assert_int_equal(wal_commit_mode(w), WAL_COMMIT_INLINE);
	assert_true(fault_fired(FAULT_WAL_ODIRECT) >= 1);
	for (int i = 0; i < 1500; i++) { /* rotates: spares open plainly */
		lsn = t_wal_append(w);
		if (i == 49) {
			/* inline: durable when wal_submit returns */
			assert_int_equal(wal_submit(w), 0);
			assert_true(wal_durable_lsn(w) == lsn);
		}
		if (i % 50 == 49)
			t_wal_wait_durable(w, lsn);
	}
	t_wal_wait_durable(w, lsn);
	wal_stats(w, &st);
	assert_true(st.rotations >= 1);
	assert_int_equal(wal_close(w), 0);
	fault_reset();
	assert_true(t_scan_all(dir, 1).last_lsn == lsn);
}

static void
test_fault_pause_spec_holds_the_point(void **state)
{
	int64_t t0;

	(void)state;
	assert_int_equal(fault_arm_pause_spec(NULL), 0);
	assert_int_equal(fault_arm_pause_spec(""), 0);
	assert_int_equal(fault_arm_pause_spec("recover"), -1);
	assert_int_equal(fault_arm_pause_spec("recover:x"), -1);
	assert_int_equal(fault_arm_pause_spec("recover:50ms"), -1);
	assert_int_equal(fault_arm_pause_spec("replay:50"), -1);
	t0 = clock_mono_ns();
	FAULT_PAUSE(FAULT_PAUSE_RECOVER);
	assert_true(clock_mono_ns() - t0 < 150 * 1000000LL);

	assert_int_equal(fault_arm_pause_spec("recover:200"), 0);
	t0 = clock_mono_ns();
	FAULT_PAUSE(FAULT_PAUSE_RECOVER);
	assert_true(clock_mono_ns() - t0 >= 200 * 1000000LL);

	fault_reset();
	t0 = clock_mono_ns();
	FAULT_PAUSE(FAULT_PAUSE_RECOVER);
	assert_true(clock_mono_ns() - t0 < 150 * 1000000LL);
}

/* A removal handed over returns at once however slow the removal is (a
 * PAUSE_MS sleep before its unlinks, on the preallocator's thread): the
 * caller's thread goes on appending meanwhile, and the segments are gone
 * once the thread is done. */
static void
test_fault_slow_removal_runs_off_the_callers_thread(void **state)
{
	enum { PAUSE_MS = 1000 };
	struct wal_stats ws;
	struct logdir ld;
	struct wal *w;
	uint64_t lsn = 0, first;
	int64_t t0, end;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_NEVER, SEG, 1, &w), 0);
	for (int i = 0; i < ROUNDS * PER_ROUND * 3; i++)
		lsn = t_wal_append(w);
	t_wal_wait_durable(w, lsn);
	assert_int_equal(logdir_list(dir_of(state), &ld), 0);
	assert_true(ld.n >= 4);
	logdir_fini(&ld);

	fault_arm_pause(FAULT_PAUSE_REMOVE, PAUSE_MS);
	t0 = clock_mono_ns();
	assert_int_equal(wal_remove_later(w, lsn, 0), 0);
	assert_true(clock_mono_ns() - t0 < PAUSE_MS / 2 * 1000000LL);
	assert_true(wal_removing(w));
	/* The caller goes on while the thread sleeps. */
	lsn = t_wal_append(w);
	t_wal_wait_durable(w, lsn);
	end = clock_mono_ns() + 30 * 1000000000LL;
	while (wal_removing(w) && clock_mono_ns() < end)
		t_wal_turn(w, 10);
	assert_false(wal_removing(w));
	assert_true(clock_mono_ns() - t0 >= PAUSE_MS * 1000000LL);
	assert_int_equal(logdir_list(dir_of(state), &ld), 0);
	assert_int_equal(ld.n, 1); /* the segment being written */
	first = ld.first[0];
	wal_stats(w, &ws);
	assert_int_equal(ws.segments, 1);
	assert_true(ws.removed >= 3);
	logdir_fini(&ld);
	fault_reset();
	assert_int_equal(wal_close(w), 0);
	assert_true(t_scan_all(dir_of(state), first).last_lsn == lsn);
}

/* The spares kept for the reservation get their zeros when they come to
 * the front of the line. When the writer needs the one getting them and
 * has no other, the zeros stop (after the slow disk's pause, before the
 * next MiB) and the writer takes it as it is: no record is refused. */
static void
test_fault_the_last_spare_getting_its_zeros_is_taken_as_it_is(void **state)
{
	enum { PAUSE_MS = 2000 };
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0, spares;
	int64_t longest = 0;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_NEVER, SEG, 1, &w), 0);
	wal_set_reserved(w, 3 * SEG, 0);
	assert_int_equal(wal_prealloc_wait(w, 10000), 0);
	wal_stats(w, &st);
	spares = st.spares;
	assert_true(spares >= 4);  /* one with its zeros, the rest without */
	wal_set_reserved(w, 0, 0); /* no more are made */

	/* The first rotation takes the spare with its zeros; the next one's
	 * zeros begin and are held. The writer takes the others first,
	 * then that one. */
	fault_arm_pause(FAULT_PAUSE_ZERO, PAUSE_MS);
	for (int i = 0; i < 100000 && st.rotations < spares; i++) {
		int64_t t0 = clock_mono_ns(), took;

		lsn = t_wal_append(w);
		took = clock_mono_ns() - t0;
		if (took > longest)
			longest = took;
		if (i % 32 == 31)
			t_wal_wait_durable(w, lsn);
		wal_stats(w, &st);
		/* after the first rotation, until the zeros have begun */
		while (st.rotations == 1 && !st.zeroing) {
			assert_true(clock_mono_ns() - t0 < 10 * 1000000000LL);
			usleep(1000);
			wal_stats(w, &st);
		}
	}
	t_wal_wait_durable(w, lsn);
	wal_stats(w, &st);
	assert_true(st.rotations == spares);
	assert_true(st.enospc == 0);
	assert_true(st.zeroed_late == 0); /* its zeros were stopped */
	/* the append that took it waited for the pause to end, no longer */
	assert_true(longest >= 100 * 1000000LL);
	assert_true(longest < (PAUSE_MS + 2000) * 1000000LL);
	fault_reset();
	assert_int_equal(wal_close(w), 0);
	assert_true(t_scan_all(dir_of(state), 1).last_lsn == lsn);
}

int
main(void)
{
#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, t_tmpdir_setup, t_tmpdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_fault_short_write_at_every_n),
		T(test_fault_eio_on_write_at_every_n),
		T(test_fault_enospc_on_write_at_every_n),
		T(test_fault_eio_on_fsync_at_every_n),
		T(test_fault_enospc_on_fsync_at_every_n),
		T(test_fault_rename_at_every_n),
		T(test_fault_interval_fsync_failure_poisons),
		T(test_fault_reservation_refuses_new_work_not_acks),
		T(test_fault_failed_cut_is_reported),
		T(test_fault_pause_spec_holds_the_point),
		T(test_fault_odirect_refused_commits_inline),
		T(test_fault_slow_removal_runs_off_the_callers_thread),
		T(test_fault_the_last_spare_getting_its_zeros_is_taken_as_it_is),
		T(test_fault_write_fails_beside_others),
	};
#undef T
	/* Every fault, committed on the loop's thread, through io_uring,
	 * with O_DIRECT writes through io_uring, and with those writes made
	 * durable by an fdatasync op. */
	static const struct way {
		const char *name;
		enum wal_commit commit;
		bool fsync_op;
	} ways[] = {
		{ "fault, inline", WAL_COMMIT_INLINE, false },
		{ "fault, ring", WAL_COMMIT_RING, false },
		/* O_DIRECT: whole blocks, a short write in whole sectors,
		 * the write's flush as the fsync point. */
		{ "fault, direct", WAL_COMMIT_DIRECT, false },
		/* The same writes made durable by a linked fdatasync op
		 * (--wal-commit uring-fsync): its own fsync point. */
		{ "fault, direct with an fdatasync op", WAL_COMMIT_DIRECT,
		    true },
	};
	enum { WAYS = sizeof(ways) / sizeof(ways[0]) };
	pid_t pids[WAYS];
	int failed = 0;

	log_set_level(LOG_ERR);
	/* Each way in a process of its own, all at once: the faults armed
	 * (util/fault) are the process's, and a run mostly waits for its
	 * writer's I/O and threads, so the four overlap. */
	fflush(NULL);
	for (int i = 0; i < WAYS; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0) {
			/* not left running when the test is killed (ctest's
			 * timeout) */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			t_wal_commit = ways[i].commit;
			t_wal_fsync_op = ways[i].fsync_op;
			failed = cmocka_run_group_tests_name(
			    ways[i].name, tests, NULL, NULL);
			fflush(NULL);
			_exit(failed > 100 ? 100 : failed);
		}
	}
	for (int i = 0; i < WAYS; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status)) {
			fprintf(stderr, "%s: its process did not exit\n",
			    ways[i].name);
			failed++;
		} else {
			failed += WEXITSTATUS(status);
		}
	}
	return failed;
}
