/* Tests of src/log/wal.c: the group-commit writer. Appends become durable
 * under each fsync policy, LSNs continue across batches, rotations and
 * reopenings, epochs start, old segments go, and a log limited to
 * max_bytes refuses new work, then retries, never what finishes work;
 * wal_prepare makes the append after it certain.
 * Faults and a disk that cannot preallocate are in test_fault.c (they
 * need the fault-injection build). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log/logdir.h"
#include "log/wal.h"
#include "sluice.h"
#include "t_lib.h"
#include "t_log.h"
#include "util/log.h"

enum { SMALL = 64 << 10 };

static const char *
dir_of(void **state)
{
	return ((struct t_dir *)*state)->path;
}

/* In an empty directory the first segment starts at LSN 1; appended
 * records become durable and read back in order. */
static void
test_wal_appends_become_durable(void **state)
{
	struct logdir_end end;
	struct wal *w;
	uint64_t lsn = 0;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	assert_true(wal_durable_lsn(w) == 0 && wal_last_lsn(w) == 0);
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 7; i++)
			lsn = t_wal_append(w);
		t_wal_wait_durable(w, lsn);
	}
	assert_true(lsn == 70);
	assert_true(wal_durable_lsn(w) == 70);
	assert_int_equal(wal_close(w), 0);
	end = t_scan_all(dir_of(state), 1);
	assert_true(end.last_lsn == 70 && end.seg_first_lsn == 1);
	assert_false(end.torn);
}

/* Nothing is durable before it was submitted and completed; the durable
 * LSN never passes the last appended one. */
static void
test_wal_durable_follows_submission(void **state)
{
	struct wal *w;
	uint64_t lsn;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	lsn = t_wal_append(w);
	assert_true(wal_durable_lsn(w) == 0);
	assert_int_equal(wal_reap(w), 0);
	assert_true(wal_durable_lsn(w) == 0);
	t_wal_wait_durable(w, lsn);
	assert_true(wal_durable_lsn(w) == 1);
	assert_int_equal(wal_close(w), 0);
}

/* Committed on the caller's thread, a submit returns with its batch
 * written and synced. */
static void
test_wal_inline_commit_is_durable_when_submit_returns(void **state)
{
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0;

	t_wal_commit = WAL_COMMIT_INLINE;
	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	t_wal_commit = t_wal_commit_default;
	for (int i = 0; i < 5; i++)
		lsn = t_wal_append(w);
	assert_true(wal_durable_lsn(w) == 0);
	assert_int_equal(wal_submit(w), 0);
	assert_true(wal_durable_lsn(w) == lsn);
	assert_int_equal(wal_reap(w), 0);
	wal_stats(w, &st);
	assert_true(st.batches == 1 && st.fsyncs == 1 && st.synced_lsn == 5);
	assert_int_equal(wal_close(w), 0);
	t_scan_all(dir_of(state), 1);
}

/* With O_DIRECT, batches of every size land in whole blocks, the partial
 * last block written again by the next batch: the records read back the
 * same as the page cache's writer leaves them, across reopenings (which
 * read the partial block back from the file) and rotations. wal_submit
 * returns with nothing durable: the write is the ring's until wal_reap. */
static void
test_wal_direct_commit_rewrites_the_partial_block(void **state)
{
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0, batches = 0, rotations = 0;

	for (int run = 0; run < 3; run++) {
		t_wal_commit = WAL_COMMIT_DIRECT;
		assert_int_equal(
		    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w),
		    0);
		t_wal_commit = t_wal_commit_default;
		/* /tmp of the tests is a disk file system: O_DIRECT runs */
		assert_int_equal(wal_commit_mode(w), WAL_COMMIT_DIRECT);
		batches = 0;
		for (int b = 1; b <= 100; b++) {
			uint64_t before = wal_durable_lsn(w);

			for (int i = 0; i < (b * 7) % 23 + 1; i++)
				lsn = t_wal_append(w);
			assert_int_equal(wal_submit(w), 0);
			batches++;
			assert_true(wal_durable_lsn(w) == before);
			t_wal_wait_durable(w, lsn);
		}
		wal_stats(w, &st);
		rotations += st.rotations;
		assert_true(st.fsyncs >= batches);
		assert_true(st.durable_lsn == lsn && st.synced_lsn == lsn);
		assert_int_equal(wal_close(w), 0);
		assert_true(t_scan_all(dir_of(state), 1).last_lsn == lsn);
	}
	assert_true(rotations >= 1);
}

/* Through io_uring, while a batch is in flight the next one fills: many
 * records, few writes, each an fdatasync under `always`. */
static void
test_wal_groups_records_into_batches(void **state)
{
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0;

	if (t_wal_commit_default == WAL_COMMIT_INLINE)
		t_wal_commit = WAL_COMMIT_RING;
	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	t_wal_commit = t_wal_commit_default;
	t_wal_append(w);
	assert_int_equal(wal_submit(w), 0); /* batch 1 in flight */
	for (int i = 0; i < 200; i++) {
		lsn = t_wal_append(w);
		assert_int_equal(wal_submit(w), 0);
	}
	t_wal_wait_durable(w, lsn);
	wal_stats(w, &st);
	assert_true(st.records == 201);
	assert_true(st.batches >= 2 && st.batches < 20);
	assert_true(st.batch_max >= 100);
	assert_true(st.fsyncs == st.batches);
	assert_true(st.durable_lsn == 201 && st.synced_lsn == 201);
	assert_int_equal(wal_close(w), 0);
	t_scan_all(dir_of(state), 1);
}

/* Closing and reopening continues at the next LSN, in the same segment. */
static void
test_wal_reopen_continues_at_next_lsn(void **state)
{
	struct logdir_end end;
	struct wal *w;

	for (int run = 0; run < 3; run++) {
		assert_int_equal(
		    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w),
		    0);
		assert_true(wal_last_lsn(w) == (uint64_t)run * 10);
		assert_true(wal_durable_lsn(w) == (uint64_t)run * 10);
		for (int i = 0; i < 10; i++)
			assert_true(
			    t_wal_append(w) == (uint64_t)run * 10 + i + 1);
		assert_int_equal(wal_close(w), 0);
	}
	end = t_scan_all(dir_of(state), 1);
	assert_true(end.last_lsn == 30 && end.nsegs == 1);
}

/* Small segments: records rotate through several, none spans two, and
 * the whole log reads back; spares never count as segments. */
static void
test_wal_rotates_across_segments(void **state)
{
	struct logdir_end end;
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 2, &w), 0);
	for (int i = 0; i < 3000; i++) {
		lsn = t_wal_append(w);
		if (i % 50 == 49)
			t_wal_wait_durable(w, lsn);
	}
	t_wal_wait_durable(w, lsn);
	wal_stats(w, &st);
	assert_true(st.rotations >= 3);
	assert_true(st.segments == st.rotations + 1);
	assert_int_equal(wal_close(w), 0);
	end = t_scan_all(dir_of(state), 1);
	assert_true(end.last_lsn == 3000);
	assert_true(end.nsegs == st.segments);
	assert_true(end.seg_first_lsn > 1);

	/* And continues after a reopen, still rotating. */
	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 2, &w), 0);
	for (int i = 0; i < 1000; i++)
		lsn = t_wal_append(w);
	t_wal_wait_durable(w, lsn);
	assert_int_equal(wal_close(w), 0);
	end = t_scan_all(dir_of(state), 1);
	assert_true(end.last_lsn == 4000);
}

/* `never`: written is durable; nothing is fdatasynced until wal_sync. */
static void
test_wal_fsync_never_reports_written_records(void **state)
{
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_NEVER, SMALL, 1, &w), 0);
	for (int i = 0; i < 50; i++)
		lsn = t_wal_append(w);
	t_wal_wait_durable(w, lsn);
	wal_stats(w, &st);
	assert_true(st.durable_lsn == 50);
	assert_true(st.fsyncs == 0);
	assert_true(st.synced_lsn == 0);
	assert_int_equal(wal_sync(w, 10000), 0);
	wal_stats(w, &st);
	assert_true(st.synced_lsn == 50 && st.fsyncs == 1);
	assert_int_equal(wal_close(w), 0);
	t_scan_all(dir_of(state), 1);
}

/* `never` and `interval` under the direct commit: a batch is a plain
 * write into the page cache on the caller's thread, done when wal_submit
 * returns; only a batch that opens a segment goes through the ring (the
 * old segment's fdatasync, the rename and the directory's fsync before
 * its write). Every record reads back. */
static void
test_wal_cached_policies_write_on_the_callers_thread(void **state)
{
	static const enum wal_fsync policy[] = { WAL_FSYNC_NEVER,
		WAL_FSYNC_INTERVAL };

	for (size_t p = 0; p < sizeof(policy) / sizeof(policy[0]); p++) {
		struct wal_stats st;
		struct wal *w;
		uint64_t lsn = 0, at_once = 0, later = 0;

		t_wal_commit = WAL_COMMIT_DIRECT;
		assert_int_equal(
		    t_wal_open(dir_of(state), policy[p], SMALL, 1, &w), 0);
		t_wal_commit = t_wal_commit_default;
		for (int b = 1; b <= 600; b++) {
			for (int i = 0; i < b % 7 + 1; i++)
				lsn = t_wal_append(w);
			assert_int_equal(wal_submit(w), 0);
			if (wal_durable_lsn(w) == lsn) {
				at_once++;
				continue;
			}
			later++;
			t_wal_wait_durable(w, lsn);
		}
		wal_stats(w, &st);
		assert_true(st.rotations >= 2);
		assert_true(later >= 1 && later <= st.rotations);
		assert_true(at_once + later == 600);
		assert_int_equal(wal_sync(w, 10000), 0);
		wal_stats(w, &st);
		assert_true(st.synced_lsn == lsn);
		assert_int_equal(wal_close(w), 0);
		assert_true(t_scan_all(dir_of(state), 1).last_lsn == lsn);
	}
}

/* `interval`: written is durable at once; an fdatasync follows within
 * about the interval (5 ms here), without being asked. */
static void
test_wal_fsync_interval_syncs_soon_after(void **state)
{
	int64_t deadline = clock_mono_ns() + 5 * 1000000000LL;
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_INTERVAL, SMALL, 1, &w), 0);
	for (int i = 0; i < 20; i++)
		lsn = t_wal_append(w);
	t_wal_wait_durable(w, lsn);
	for (;;) {
		wal_stats(w, &st);
		if (st.synced_lsn == lsn)
			break;
		assert_true(clock_mono_ns() < deadline);
		assert_int_equal(t_wal_turn(w, 50), 0);
	}
	assert_true(st.fsyncs >= 1);
	assert_int_equal(wal_close(w), 0);
	t_scan_all(dir_of(state), 1);
}

/* `always`: what is durable has been fdatasynced. */
static void
test_wal_fsync_always_syncs_before_durable(void **state)
{
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	for (int round = 0; round < 20; round++) {
		lsn = t_wal_append(w);
		assert_int_equal(wal_submit(w), 0);
		while (wal_durable_lsn(w) < lsn) {
			assert_int_equal(t_wal_turn(w, 100), 0);
			wal_stats(w, &st);
			assert_true(st.synced_lsn >= st.durable_lsn);
		}
	}
	wal_stats(w, &st);
	assert_true(st.fsyncs >= 20);
	assert_int_equal(wal_close(w), 0);
}

/* Appends `n` records, as one batch, and waits until they are durable;
 * returns the last one's LSN. */
static uint64_t
append_batch(struct wal *w, int n)
{
	uint64_t lsn = 0;

	for (int i = 0; i < n; i++)
		lsn = t_wal_append(w);
	t_wal_wait_durable(w, lsn);
	return lsn;
}

/* --wal-commit uring-auto: while batches hold WAL_ADAPT_SMALL records or
 * fewer lately, each is made durable by the fdatasync op; once they are
 * larger, by RWF_DSYNC, the small ones among them too; back to the op
 * when they are small again. Every record reported durable either way is
 * in the log. Runs in the direct round only (the others commit another
 * way). */
static void
test_wal_adapt_small_batches_take_the_op(void **state)
{
	struct wal_stats st;
	struct logdir_end end;
	struct wal *w;
	uint64_t lsn = 0, ops;
	int rc;

	if (t_wal_commit != WAL_COMMIT_DIRECT || t_wal_fsync_op)
		skip();
	t_wal_adapt = true;
	rc = t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w);
	t_wal_adapt = false;
	assert_int_equal(rc, 0);
	if (wal_commit_mode(w) != WAL_COMMIT_DIRECT) {
		assert_int_equal(wal_close(w), 0); /* no O_DIRECT here */
		skip();
	}
	for (int round = 0; round < 10; round++) /* one client */
		append_batch(w, 1);
	wal_stats(w, &st);
	assert_true(st.batches >= 10);
	assert_true(st.fsync_op_commits == st.batches);
	for (int round = 0; round < 10; round++)      /* many: the average */
		append_batch(w, WAL_ADAPT_SMALL + 3); /* rises */
	wal_stats(w, &st);
	ops = st.fsync_op_commits;
	for (int round = 0; round < 10; round++) {    /* many, and a small */
		append_batch(w, WAL_ADAPT_SMALL + 3); /* batch among them */
		if (round == 5)
			append_batch(w, 1);
	}
	wal_stats(w, &st);
	assert_true(st.fsync_op_commits == ops);
	for (int round = 0; round < 30; round++) /* one client again */
		lsn = append_batch(w, 1);
	wal_stats(w, &st);
	assert_true(st.fsync_op_commits >= ops + 10);
	assert_true(st.fsyncs >= 60);
	assert_int_equal(wal_close(w), 0);
	end = t_scan_all(dir_of(state), 1);
	assert_true(end.last_lsn == lsn);
}

/* Bad arguments are refused and consume no LSN. */
static void
test_wal_refuses_bad_appends(void **state)
{
	uint8_t *big;
	struct wal *w;
	uint64_t lsn = 0;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	assert_int_equal(wal_append(w, 0, 0, "x", 1, 0, &lsn), SLUICE_EINVAL);
	assert_int_equal(
	    wal_append(w, 1, 0, "x", 1, 0x80, &lsn), SLUICE_EINVAL);
	assert_int_equal(
	    wal_append(w, 1, 0, "x", 1, WAL_NEW_WORK | WAL_RETRY, &lsn),
	    SLUICE_EINVAL);
	big = calloc(1, SMALL);
	assert_non_null(big);
	assert_int_equal(
	    wal_append(w, 1, 0, big, SMALL - 100, 0, &lsn), SLUICE_ETOOBIG);
	free(big);
	assert_true(wal_last_lsn(w) == 0);
	assert_true(t_wal_append(w) == 1);
	assert_int_equal(wal_close(w), 0);
}

/* Bad configurations are refused. */
static void
test_wal_refuses_bad_config(void **state)
{
	struct wal_config cfg = { .dir = dir_of(state), .seg_size = 5000 };
	struct wal *w = NULL;

	assert_int_equal(wal_open(&cfg, NULL, &w), SLUICE_EINVAL);
	cfg.seg_size = SEG_ALIGN; /* below the minimum */
	assert_int_equal(wal_open(&cfg, NULL, &w), SLUICE_EINVAL);
	cfg.seg_size = 0;
	cfg.fsync = (enum wal_fsync)9;
	assert_int_equal(wal_open(&cfg, NULL, &w), SLUICE_EINVAL);
	cfg.dir = NULL;
	cfg.fsync = WAL_FSYNC_NEVER;
	assert_int_equal(wal_open(&cfg, NULL, &w), SLUICE_EINVAL);
	assert_null(w);
	assert_int_equal(wal_close(NULL), 0);
}

/* A new epoch is a REC_EPOCH record; later records carry it, it survives
 * a reopen, and it never goes back. */
static int
check_epochs(const struct rec_hdr *h, const void *body, void *arg)
{
	uint64_t *seen = arg;

	if (h->type == REC_EPOCH) {
		assert_int_equal(h->len - REC_HDR_SIZE, REC_EPOCH_BODY);
		assert_true(le_load_u64(body) == h->epoch);
		assert_true(le_load_u64((const uint8_t *)body + 8) == 1);
		assert_true(le_load_u64((const uint8_t *)body + 16) == 42);
		assert_true(h->lsn == 6);
	}
	assert_true(h->epoch == (h->lsn < 6 ? 1u : 7u));
	(*seen)++;
	return 0;
}

static void
test_wal_new_epoch_is_recorded(void **state)
{
	struct logdir_end end;
	struct wal *w;
	uint64_t lsn, seen = 0;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	assert_true(wal_epoch(w) == 1);
	for (int i = 0; i < 5; i++)
		t_wal_append(w);
	assert_int_equal(wal_set_epoch(w, 7, 42, 1234, &lsn), 0);
	assert_true(lsn == 6 && wal_epoch(w) == 7);
	assert_int_equal(wal_set_epoch(w, 7, 43, 1234, &lsn), SLUICE_EEPOCH);
	for (int i = 0; i < 5; i++)
		t_wal_append(w);
	assert_int_equal(wal_close(w), 0);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, 0, check_epochs, &seen, &end), 0);
	assert_true(seen == 11 && end.epoch == 7);
	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	assert_true(wal_epoch(w) == 7);
	assert_int_equal(wal_close(w), 0);
}

/* A follower writes the leader's records as they are: same LSN, epoch
 * and time; out of order or from a lower epoch they are refused. */
static void
test_wal_append_rec_copies_leader_records(void **state)
{
	struct rec_hdr h = { .type = 3, .lsn = 1, .epoch = 4, .time = 99 };
	struct logdir_end end;
	struct wal *w;
	uint8_t body[64];

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	for (uint64_t lsn = 1; lsn <= 5; lsn++) {
		h.lsn = lsn;
		h.len = (uint32_t)(REC_HDR_SIZE + t_body(lsn, body));
		assert_int_equal(wal_append_rec(w, &h, body, 0), 0);
	}
	h.lsn = 7;
	assert_int_equal(wal_append_rec(w, &h, body, 0), SLUICE_EINVAL);
	h.lsn = 6;
	h.epoch = 3;
	assert_int_equal(wal_append_rec(w, &h, body, 0), SLUICE_EEPOCH);
	assert_true(wal_epoch(w) == 4);
	assert_int_equal(wal_close(w), 0);
	end = t_scan_all(dir_of(state), 1);
	assert_true(end.last_lsn == 5 && end.epoch == 4);
}

/* A batch that holds nothing (wal_prepare made it, and the record it was
 * for went to the next segment) is not written when a rotation seals it,
 * even where it would start on a block boundary: a write of no bytes
 * fails (no progress), and the writer was poisoned by it. */
static void
test_wal_empty_batch_at_a_block_boundary_is_not_written(void **state)
{
	static uint8_t body[62 << 10];
	struct logdir_end end;
	struct wal *w;
	uint64_t lsn;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 2, &w), 0);
	assert_int_equal(wal_prealloc_wait(w, 10000), 0);
	/* the segment's header is 64 bytes: one record of 4,032 bytes
	 * ends the first block */
	assert_int_equal(
	    wal_append(w, 7, 1000, body, 4096 - 64 - REC_HDR_SIZE, 0, &lsn), 0);
	t_wal_wait_durable(w, lsn);
	/* an empty batch at offset 4096, then a record too big for the
	 * rest of the segment */
	assert_int_equal(wal_prepare(w, 100, 0), 0);
	assert_int_equal(
	    wal_append(w, 7, 1001, body, SMALL - 4096, 0, &lsn), 0);
	t_wal_wait_durable(w, lsn);
	assert_false(wal_poisoned(w));
	assert_int_equal(wal_close(w), 0);
	assert_int_equal(logdir_scan(dir_of(state), 0, 0, NULL, NULL, &end), 0);
	assert_true(end.last_lsn == lsn && !end.torn);
}

/* remove_before deletes segments wholly below the LSN, oldest first,
 * keeping the newest `keep` of them and never the current one. */
static void
test_wal_remove_before_keeps_what_is_asked(void **state)
{
	struct logdir ld;
	struct wal *w;
	uint64_t lsn = 0, cut;
	int rc;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_NEVER, SMALL, 2, &w), 0);
	for (int i = 0; i < 6000; i++)
		lsn = t_wal_append(w);
	t_wal_wait_durable(w, lsn);
	assert_int_equal(logdir_list(dir_of(state), &ld), 0);
	assert_true(ld.n >= 6);
	cut = ld.first[4]; /* segments 0..3 lie wholly below it */

	rc = wal_remove_before(w, cut, 1);
	assert_int_equal(rc, 3);
	logdir_fini(&ld);
	assert_int_equal(logdir_list(dir_of(state), &ld), 0);
	assert_true(ld.first[0] < cut && ld.first[1] == cut);

	/* Everything below the end, keep 0: all but the current one. */
	rc = wal_remove_before(w, UINT64_MAX, 0);
	assert_true(rc >= 1);
	logdir_fini(&ld);
	assert_int_equal(logdir_list(dir_of(state), &ld), 0);
	assert_int_equal(ld.n, 1);
	assert_int_equal(wal_remove_before(w, UINT64_MAX, 0), 0);
	logdir_fini(&ld);
	assert_int_equal(wal_close(w), 0);

	/* What is left still reads, from where it starts. */
	{
		struct logdir_end end;

		assert_int_equal(
		    logdir_scan(dir_of(state), 0, 0, NULL, NULL, &end), 0);
		assert_true(end.last_lsn == 6000);
	}
}

/* Spare files a crashed run left are removed at open; the preallocator
 * keeps the configured number ready. */
static void
test_wal_spares_are_made_and_stale_ones_removed(void **state)
{
	struct wal_stats st;
	struct wal *w;

	t_write_file(t_path(*state, "000009.spare"), "stale", 5);
	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 3, &w), 0);
	assert_int_equal(wal_prealloc_wait(w, 10000), 0);
	wal_stats(w, &st);
	assert_true(st.spares == 3);
	assert_true(st.avail >= 3 * (SMALL / 2));
	assert_int_equal(wal_close(w), 0);
	assert_true(t_file_size(t_path(*state, "000009.spare")) < 0);
	/* Unused spares are removed at close. */
	{
		struct logdir ld;

		assert_int_equal(logdir_list(dir_of(state), &ld), 0);
		assert_int_equal(ld.n, 1);
		logdir_fini(&ld);
	}
}

/* Counts the spare files of `dir` with extents left unwritten (no zeros
 * yet) and without; false where the file system cannot tell. */
static bool
count_spares(const char *dir, int *unwritten, int *zeroed)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	bool told = true;

	assert_non_null(d);
	*unwritten = *zeroed = 0;
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX];
		int u;

		if (strstr(e->d_name, ".spare") == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		u = t_has_unwritten(path);
		told = told && u >= 0;
		*(u == 1 ? unwritten : zeroed) += 1;
	}
	closedir(d);
	return told;
}

/* The spares made for the reservation are only allocated: the one next in
 * line has its zeros, and the next gets them when the writer moves into
 * that one. */
static void
test_wal_reserve_spares_get_their_zeros_at_the_front(void **state)
{
	const char *dir = dir_of(state);
	int64_t deadline = clock_mono_ns() + 10 * 1000000000LL;
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0;
	int unwritten, zeroed;

	assert_int_equal(t_wal_open(dir, WAL_FSYNC_ALWAYS, SMALL, 1, &w), 0);
	wal_set_reserved(w, 4 * SMALL, 0);
	assert_int_equal(wal_prealloc_wait(w, 10000), 0);
	wal_stats(w, &st);
	assert_true(st.spares >= 5);
	assert_true(st.zeroed_late == 0);
	if (count_spares(dir, &unwritten, &zeroed)) {
		assert_int_equal(zeroed, 1);
		assert_int_equal(unwritten, (int)st.spares - 1);
	}

	/* Into the zeroed spare: the next one in line gets its zeros. */
	for (int i = 0; i < 5000 && st.rotations == 0; i++) {
		lsn = t_wal_append(w);
		if (i % 64 == 63)
			t_wal_wait_durable(w, lsn);
		wal_stats(w, &st);
	}
	assert_true(st.rotations == 1);
	t_wal_wait_durable(w, lsn);
	while (wal_prealloc_wait(w, 10000) == 0 &&
	    (wal_stats(w, &st), st.zeroed_late == 0)) {
		assert_true(clock_mono_ns() < deadline);
		usleep(10000);
	}
	assert_true(st.zeroed_late == 1);
	if (count_spares(dir, &unwritten, &zeroed)) {
		assert_int_equal(zeroed, 1);
		assert_int_equal(unwritten, (int)st.spares - 1);
	}
	assert_int_equal(wal_close(w), 0);
	t_scan_all(dir, 1);
}

/* A writer whose files may take at most `max_bytes`. */
static int
open_capped(const char *dir, uint64_t max_bytes, struct wal **out)
{
	struct wal_config cfg = { .dir = dir,
		.fsync = WAL_FSYNC_NEVER,
		.seg_size = SMALL,
		.prealloc = 1,
		.max_bytes = max_bytes };
	struct logdir_end end;
	int rc;

	rc = logdir_scan(dir, 0, LOGDIR_CUT, NULL, NULL, &end);
	return rc != 0 ? rc : wal_open(&cfg, &end, out);
}

/* Appends with `flags` until one is refused (at most `max`); the number
 * that went in. */
static int
append_until_refused(struct wal *w, unsigned flags, int max)
{
	uint64_t lsn;
	int n = 0, rc = 0;

	while (n < max && (rc = t_wal_try_append(w, flags, &lsn)) == 0)
		n++;
	assert_int_equal(rc, SLUICE_ENOSPC);
	return n;
}

/* With max_bytes, the log's files never pass it. New work is refused
 * first, with floor + margin still available; retries then use the
 * margin down to the floor; the records that finish work use the floor.
 * Removing segments gives the room back: the preallocator makes spares
 * again and new work is accepted. */
static void
test_wal_max_bytes_refuses_new_work_then_retries_only(void **state)
{
	const uint64_t floor = 20000, margin = 30000, max = 6 * SMALL;
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0, removed_bytes;
	int64_t deadline;
	int n, rc;

	/* Less than one segment: the first cannot be made. */
	assert_int_equal(open_capped(dir_of(state), SMALL / 2, &w), -ENOSPC);

	assert_int_equal(open_capped(dir_of(state), max, &w), 0);
	wal_set_reserved(w, floor, margin);
	assert_false(wal_refusing(w));
	n = append_until_refused(w, WAL_NEW_WORK, 100000);
	/* A spare still being made is not room yet: once the preallocator
	 * has stopped at the limit, what it made is used too. */
	rc = wal_prealloc_wait(w, 10000);
	assert_true(rc == 0 || rc == -ENOSPC);
	n += append_until_refused(w, WAL_NEW_WORK, 100000);
	assert_true(n > 1000); /* five segments' worth, less the reserve */
	assert_true(wal_refusing(w));
	/* a smaller record waits too: the state does not flap */
	assert_int_equal(
	    wal_append(w, 1, 0, "x", 1, WAL_NEW_WORK, &lsn), SLUICE_ENOSPC);
	wal_stats(w, &st);
	assert_true(st.refusing);
	assert_true(st.files_bytes <= max);
	assert_true(st.avail >= floor + margin);
	assert_true(st.enospc >= 1);

	/* Retries go on into the margin, not the floor. */
	n = append_until_refused(w, WAL_RETRY, 100000);
	assert_true(n >= (int)(margin / 104) - 2);
	wal_stats(w, &st);
	assert_true(st.avail >= floor);
	assert_true(wal_refusing(w));

	/* What finishes work takes the floor. */
	for (uint64_t i = 0; i < floor / 104 - 2; i++)
		lsn = t_wal_append(w);
	t_wal_wait_durable(w, lsn);
	assert_int_equal(
	    t_wal_try_append(w, WAL_NEW_WORK, &lsn), SLUICE_ENOSPC);
	wal_stats(w, &st);
	assert_true(st.files_bytes <= max);

	/* Room comes back: every segment but the current one goes. */
	removed_bytes = st.files_bytes;
	assert_true(wal_remove_before(w, wal_last_lsn(w), 0) >= 4);
	wal_stats(w, &st);
	assert_true(st.files_bytes <= removed_bytes - 4 * SMALL);
	deadline = clock_mono_ns() + 10 * 1000000000LL;
	while (wal_refusing(w)) {
		assert_true(clock_mono_ns() < deadline);
		t_wal_turn(w, 50);
	}
	assert_int_equal(t_wal_try_append(w, WAL_NEW_WORK, &lsn), 0);
	t_wal_wait_durable(w, lsn);
	wal_stats(w, &st);
	assert_false(st.refusing);
	assert_true(st.files_bytes <= max);
	assert_int_equal(wal_close(w), 0);
}

/* wal_prepare makes the append after it certain: a record of up to the
 * length prepared, appended with flags 0, goes in at the next LSN, a
 * segment begun ahead when it would not fit in the current one; it is
 * refused (SLUICE_ENOSPC, nothing changed) once the room would not leave
 * `keep`, as new work is, and too big a record is SLUICE_ETOOBIG. The
 * records read back whole and in order. */
static void
test_wal_prepare_makes_the_next_append_certain(void **state)
{
	static uint8_t body[3000];
	const uint64_t keep = 50000, max = 4 * SMALL;
	struct logdir_end end;
	struct wal_stats st;
	struct wal *w;
	uint64_t lsn = 0, rotations = 0;
	int n = 0, rc = 0;

	assert_int_equal(open_capped(dir_of(state), max, &w), 0);
	assert_int_equal(wal_prepare(w, SMALL, 0), SLUICE_ETOOBIG);
	while (n < 1000) {
		size_t len = 1000 + (size_t)(n % 3) * 1000;
		uint64_t want = wal_last_lsn(w) + 1;

		wal_stats(w, &st);
		rotations = st.rotations;
		rc = wal_prepare(w, len, keep);
		if (rc == SLUICE_ENOSPC) {
			/* a spare still being made is not room yet; at the
			 * cap the preallocator stops */
			int wrc = wal_prealloc_wait(w, 10000);

			assert_true(wrc == 0 || wrc == -ENOSPC);
			rc = wal_prepare(w, len, keep);
		}
		if (rc != 0)
			break;
		assert_int_equal(wal_append(w, 7, 0, body, len, 0, &lsn), 0);
		assert_true(lsn == want);
		wal_stats(w, &st);
		assert_true(st.rotations - rotations <= 1);
		n++;
	}
	assert_int_equal(rc, SLUICE_ENOSPC);
	assert_true(n > 50 && st.rotations >= 2);
	assert_true(st.files_bytes <= max);
	/* refused while new work with that reservation would be */
	wal_set_reserved(w, keep, 0);
	assert_int_equal(
	    wal_append(w, 7, 0, body, 3000, WAL_NEW_WORK, &lsn), SLUICE_ENOSPC);
	assert_int_equal(wal_prepare(w, 10, keep), SLUICE_ENOSPC);
	assert_true(wal_last_lsn(w) == (uint64_t)n);
	t_wal_wait_durable(w, wal_last_lsn(w));
	assert_int_equal(wal_close(w), 0);
	assert_int_equal(
	    logdir_scan(dir_of(state), 0, LOGDIR_CUT, NULL, NULL, &end), 0);
	assert_true(end.last_lsn == (uint64_t)n);
}

/* A replication cursor follows the live log up to the durable LSN, across
 * rotations, while the writer appends. */
static void
test_wal_cursor_follows_live_log(void **state)
{
	struct logdir_cursor *c;
	struct rec_view v;
	struct wal *w;
	uint64_t want = 1, lsn = 0;

	assert_int_equal(
	    t_wal_open(dir_of(state), WAL_FSYNC_ALWAYS, SMALL, 2, &w), 0);
	assert_int_equal(logdir_cursor_open(dir_of(state), 1, &c), 0);
	for (int round = 0; round < 60; round++) {
		for (int i = 0; i < 50; i++)
			lsn = t_wal_append(w);
		t_wal_wait_durable(w, lsn);
		while (logdir_cursor_next(c, wal_durable_lsn(w), &v) == 0) {
			assert_true(v.hdr.lsn == want);
			assert_true(t_body_ok(want, v.body, v.body_len));
			want++;
		}
		assert_true(want == wal_durable_lsn(w) + 1);
	}
	assert_true(want == 3001);
	logdir_cursor_close(c);
	assert_int_equal(wal_close(w), 0);
}

int
main(void)
{
#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, t_tmpdir_setup, t_tmpdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_wal_appends_become_durable),
		T(test_wal_durable_follows_submission),
		T(test_wal_inline_commit_is_durable_when_submit_returns),
		T(test_wal_groups_records_into_batches),
		T(test_wal_direct_commit_rewrites_the_partial_block),
		T(test_wal_reopen_continues_at_next_lsn),
		T(test_wal_rotates_across_segments),
		T(test_wal_fsync_never_reports_written_records),
		T(test_wal_cached_policies_write_on_the_callers_thread),
		T(test_wal_fsync_interval_syncs_soon_after),
		T(test_wal_fsync_always_syncs_before_durable),
		T(test_wal_adapt_small_batches_take_the_op),
		T(test_wal_refuses_bad_appends),
		T(test_wal_refuses_bad_config),
		T(test_wal_new_epoch_is_recorded),
		T(test_wal_append_rec_copies_leader_records),
		T(test_wal_remove_before_keeps_what_is_asked),
		T(test_wal_spares_are_made_and_stale_ones_removed),
		T(test_wal_reserve_spares_get_their_zeros_at_the_front),
		T(test_wal_cursor_follows_live_log),
		T(test_wal_max_bytes_refuses_new_work_then_retries_only),
		T(test_wal_prepare_makes_the_next_append_certain),
		T(test_wal_empty_batch_at_a_block_boundary_is_not_written),
	};
#undef T
	log_set_level(LOG_WARN);
	int failed;

	/* Every case with the default writer of the tests (inline), then
	 * with the server's default (O_DIRECT through io_uring), then with
	 * its writes made durable by an fdatasync op. */
	t_wal_commit_default = WAL_COMMIT_INLINE;
	t_wal_commit = t_wal_commit_default;
	failed = cmocka_run_group_tests_name("wal, inline", tests, NULL, NULL);
	t_wal_commit_default = WAL_COMMIT_DIRECT;
	t_wal_commit = t_wal_commit_default;
	failed += cmocka_run_group_tests_name("wal, direct", tests, NULL, NULL);
	t_wal_fsync_op = true; /* --wal-commit uring-fsync */
	failed += cmocka_run_group_tests_name(
	    "wal, direct with an fdatasync op", tests, NULL, NULL);
	t_wal_fsync_op = false;
	return failed;
}
