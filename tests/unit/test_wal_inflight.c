/* Tests of the writer with several batches in flight (wal_config.inflight,
 * O_DIRECT through io_uring under `always`): batches go beside each other
 * only where they share no block, ended by REC_PAD records that every
 * reader skips; the durable LSN moves in the order the batches were
 * written and never past one still in flight; a follower's writer adds no
 * record of its own; a log so written reopens, continues and reads back
 * whole. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
	SMALL = 128 << 10,
	BLOCK = 4096,
	ROUNDS = 300,
};

static const char *
dir_of(void **state)
{
	return ((struct t_dir *)*state)->path;
}

/* What a scan of the log found. */
struct seen {
	uint64_t want;     /* the next LSN expected */
	uint64_t records;  /* other than pads */
	uint64_t pads;     /* REC_PAD records, each of zeros */
	uint64_t last_pad; /* LSN of the last one */
};

/* Every record in LSN order; the t_body of its LSN, or a pad of zeros. A
 * record's file offset is not given to a visitor: a pad's length is what
 * ends its batch on a block, checked by the scan of offsets below. */
static int
visit(const struct rec_hdr *h, const void *body, void *arg)
{
	struct seen *s = arg;
	size_t len = h->len - REC_HDR_SIZE;

	assert_true(h->lsn == s->want);
	s->want++;
	if (h->type == REC_PAD) {
		static const uint8_t zeros[BLOCK];

		assert_true(len < BLOCK && memcmp(body, zeros, len) == 0);
		s->pads++;
		s->last_pad = h->lsn;
		return 0;
	}
	assert_true(t_body_ok(h->lsn, body, len));
	s->records++;
	return 0;
}

/* Walks segment file `path` record by record from its header: each
 * record that follows a pad starts on a block boundary. Returns how many
 * did. */
static uint64_t
pads_end_on_blocks(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t hdr[REC_HDR_SIZE];
	uint64_t off = 64, n = 0;
	bool after_pad = false;

	assert_non_null(f);
	for (;;) {
		uint32_t len;
		uint16_t type;

		if (fseek(f, (long)off, SEEK_SET) != 0 ||
		    fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr))
			break;
		memcpy(&len, hdr, 4);
		memcpy(&type, hdr + 4, 2);
		if (len == 0)
			break;
		if (after_pad) {
			assert_true(off % BLOCK == 0);
			n++;
		}
		after_pad = type == REC_PAD;
		off += (len + REC_ALIGN - 1) / REC_ALIGN * REC_ALIGN;
	}
	fclose(f);
	return n;
}

/* wal_set_own: the pads the writer appends, as it appends them. */
struct own {
	uint64_t n, last;
	bool in_order;
};

static void
own_note(void *arg, const struct rec_hdr *h, const void *body, size_t len)
{
	struct own *o = arg;
	static const uint8_t zeros[BLOCK];

	o->in_order = o->in_order && h->lsn > o->last && h->type == REC_PAD &&
	    h->len == REC_HDR_SIZE + len && memcmp(body, zeros, len) == 0;
	o->last = h->lsn;
	o->n++;
}

static struct seen
scan(const char *dir)
{
	struct seen s = { .want = 1 };
	struct logdir_end end;

	assert_int_equal(logdir_scan(dir, 0, 0, visit, &s, &end), 0);
	assert_true(s.want == end.last_lsn + 1);
	assert_false(end.torn);
	return s;
}

/* A writer of `inflight` batches at once, on O_DIRECT through io_uring. */
static struct wal *
open_writer(void **state, unsigned inflight)
{
	struct wal_config cfg = { .dir = dir_of(state),
		.fsync = WAL_FSYNC_ALWAYS,
		.seg_size = SMALL,
		.prealloc = 1,
		.commit = WAL_COMMIT_DIRECT,
		.inflight = inflight };
	struct logdir_end end;
	struct wal *w;

	assert_int_equal(
	    logdir_scan(dir_of(state), 0, LOGDIR_CUT, NULL, NULL, &end), 0);
	assert_int_equal(wal_open(&cfg, &end, &w), 0);
	assert_int_equal(wal_commit_mode(w), WAL_COMMIT_DIRECT);
	return w;
}

/* Turns the loop until the oldest batch in flight is done, if any is (at
 * most 10 s). */
static void
turn_until_some_done(struct wal *w)
{
	int64_t deadline = clock_mono_ns() + 10 * 1000000000LL;
	uint64_t was = wal_durable_lsn(w);

	assert_int_equal(t_wal_turn(w, 0), 0);
	while (wal_busy(w) && wal_durable_lsn(w) == was) {
		assert_true(clock_mono_ns() < deadline);
		assert_int_equal(t_wal_turn(w, 100), 0);
	}
}

/* Many turns of a few records each, each submitted at once whatever is in
 * flight, completions reaped every third: batches go beside others,
 * behind pads; the durable LSN only
 * grows and never passes what was appended; everything is durable in the
 * end and reads back in order, pads included, each batch after a pad on a
 * block boundary. Every pad is handed to wal_set_own's function as it is
 * appended (a leader streams it with the records around it): with the
 * test's own records, every LSN is accounted for. */
static void
test_batches_go_beside_others(void **state)
{
	struct wal_stats st;
	struct wal *w = open_writer(state, 4);
	uint64_t lsn = 0, durable = 0, appended = 0;
	struct own own = { .in_order = true };

	wal_set_own(w, own_note, &own);
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < 1 + round % 5; i++) {
			lsn = t_wal_append(w);
			appended++;
		}
		assert_int_equal(wal_submit(w), 0);
		/* completions are seen every third round only: between, a
		 * batch in flight stays so for the writer, however fast the
		 * disk (a reap each round found it done under a loaded
		 * machine, and nothing went beside). That round waits for
		 * the oldest to be done, however slow the disk (a turn of
		 * 5 ms found none done, on a busy machine whose first batch
		 * was the segment's rename and directory fsync, and every
		 * later record joined one batch behind it). */
		if (round % 3 == 2)
			turn_until_some_done(w);
		assert_true(wal_durable_lsn(w) >= durable);
		durable = wal_durable_lsn(w);
		assert_true(durable <= wal_last_lsn(w));
	}
	/* the last batch may end with a pad when it is submitted: the last
	 * LSN is known once everything is */
	assert_int_equal(wal_sync(w, 10000), 0);
	lsn = wal_last_lsn(w);
	wal_stats(w, &st);
	print_message("%" PRIu64 " batches, %" PRIu64 " beside others "
	              "(at most %" PRIu64 " in flight), %" PRIu64 " pads\n",
	    st.batches, st.fly_beside, st.fly_max_seen, st.pads);
	assert_true(st.fly_beside > 0 && st.fly_max_seen >= 2);
	assert_true(st.fly_max_seen <= 4);
	assert_true(st.pads > 0);
	assert_true(own.in_order && own.n == st.pads);
	assert_true(appended + own.n == lsn);
	assert_true(st.durable_lsn == lsn && st.synced_lsn == lsn);
	assert_int_equal(wal_close(w), 0);

	struct seen s = scan(dir_of(state));
	char path[512];

	assert_true(s.records == appended);
	assert_true(s.pads == st.pads);
	assert_int_equal(seg_path(path, sizeof(path), dir_of(state), 1), 0);
	assert_true(pads_end_on_blocks(path) > 0);
}

/* One record a batch, each waited for: no pads (one client's commits stay
 * as small as the records), and never two in flight. */
static void
test_one_client_writes_no_pads(void **state)
{
	struct wal_stats st;
	struct wal *w = open_writer(state, 4);

	for (int i = 0; i < 50; i++)
		t_wal_wait_durable(w, t_wal_append(w));
	wal_stats(w, &st);
	assert_true(st.pads == 0 && st.fly_beside == 0);
	assert_int_equal(wal_close(w), 0);
	assert_true(scan(dir_of(state)).records == 50);
}

/* A follower's writer takes its leader's LSNs: it adds no pad, however
 * busy, and the records it copies keep their numbers. */
static void
test_follower_adds_no_pads(void **state)
{
	struct rec_hdr h = { .type = 3, .epoch = 2, .time = 99 };
	struct wal_stats st;
	struct wal *w = open_writer(state, 4);
	uint8_t body[64];
	uint64_t lsn = 0;

	wal_set_follower(w, true);
	for (int round = 0; round < 100; round++) {
		for (int i = 0; i < 6; i++) {
			h.lsn = ++lsn;
			h.len = (uint32_t)(REC_HDR_SIZE + t_body(lsn, body));
			assert_int_equal(wal_append_rec(w, &h, body, 0), 0);
		}
		assert_int_equal(wal_submit(w), 0);
		assert_int_equal(wal_reap(w), 0);
	}
	t_wal_wait_durable(w, lsn);
	wal_stats(w, &st);
	assert_true(st.pads == 0);
	assert_true(wal_last_lsn(w) == lsn);
	assert_int_equal(wal_close(w), 0);
	assert_true(scan(dir_of(state)).records == lsn);
}

/* Closed with batches in flight, reopened (with one in flight, then with
 * four), continued: the log reads back whole each time, across rotations
 * of its small segments. */
static void
test_reopen_continues_after_pads(void **state)
{
	uint64_t appended = 0, rotations = 0;
	struct seen s;

	for (int run = 0; run < 3; run++) {
		struct wal *w = open_writer(state, run == 1 ? 1 : 4);
		struct wal_stats st;

		for (int round = 0; round < 200; round++) {
			for (int i = 0; i < 3 + round % 4; i++) {
				t_wal_append(w);
				appended++;
			}
			assert_int_equal(wal_submit(w), 0);
			assert_int_equal(
			    round % 3 == 2 ? t_wal_turn(w, 5) : wal_reap(w), 0);
		}
		wal_stats(w, &st);
		rotations += st.rotations;
		assert_int_equal(wal_close(w), 0);
		s = scan(dir_of(state));
		assert_true(s.records == appended);
	}
	assert_true(rotations >= 1);
}

/* The records of a segment file, in file order. */
struct layout {
	size_t n;
	uint64_t off[4096], size[4096], lsn[4096];
	uint32_t len[4096];
	uint16_t type[4096];
};

/* The offset of a byte record `i` of `l` checksums: the middle of its
 * body, or its LSN when it has none. Never REC_HDR_SIZE + 1 blindly: a
 * body of one byte is followed by padding up to REC_ALIGN that no
 * checksum covers, and a byte flipped there is no damage. */
static uint64_t
checked_byte(const struct layout *l, size_t i)
{
	uint32_t body = l->len[i] - REC_HDR_SIZE;

	return l->off[i] + (body > 0 ? REC_HDR_SIZE + body / 2 : 8);
}

static void
layout_of(const char *path, struct layout *l)
{
	FILE *f = fopen(path, "rb");
	uint8_t hdr[REC_HDR_SIZE];
	uint64_t off = 64;

	assert_non_null(f);
	l->n = 0;
	while (l->n < 4096 && fseek(f, (long)off, SEEK_SET) == 0 &&
	    fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr)) {
		uint32_t len;

		memcpy(&len, hdr, 4);
		if (len == 0)
			break;
		l->off[l->n] = off;
		l->len[l->n] = len;
		l->size[l->n] = (len + REC_ALIGN - 1) / REC_ALIGN * REC_ALIGN;
		memcpy(&l->type[l->n], hdr + 4, 2);
		memcpy(&l->lsn[l->n], hdr + 8, 8);
		off += l->size[l->n];
		l->n++;
	}
	fclose(f);
}

/* The path of the last segment of `dir`. */
static void
last_seg(const char *dir, char *path, size_t n)
{
	struct logdir ld;

	assert_int_equal(logdir_list(dir, &ld), 0);
	assert_true(ld.n > 0);
	assert_int_equal(seg_path(path, n, dir, ld.first[ld.n - 1]), 0);
	logdir_fini(&ld);
}

static int
scan_rc(
    const char *dir, const struct durable_mark *known, struct logdir_end *end)
{
	return logdir_scan_known(dir, 0, 0, known, NULL, NULL, end);
}

/* A batch lost while those written beside it landed (a power cut, or a
 * write that failed: zeros where it should be, then their records on
 * block boundaries, each batch ended by a pad) is a torn tail: the scan
 * reports it with what it cuts, a start cuts it, and the writer
 * continues right after the records before it. None of the cut records
 * could have been acknowledged. The same bytes are damage when the
 * DURABLE mark says the lost batch was synced, and any other damage near
 * them (a flipped byte where the batch was, a run after the zeros that
 * does not start on a block, a flipped byte among the batches after) is
 * still damage, never cut. */
static void
test_a_lost_batch_is_cut_with_those_beside_it(void **state)
{
	struct layout *l = malloc(sizeof(*l));
	struct wal *w = open_writer(state, 4);
	struct durable_mark mark = { 0 };
	struct logdir_end end;
	uint8_t *orig;
	size_t len, k = 0;
	uint64_t x, gap_end, after;
	char path[512];
	struct seen s;

	assert_non_null(l);
	/* Batches until the last segment holds the lost batch wanted: the
	 * record before a pad that ends on a block (the pad itself not on
	 * one), a record that is not a pad, and three records after. */
	for (int round = 0; round < 1200 && k == 0; round++) {
		for (int i = 0; i < 1 + round % 5; i++)
			t_wal_append(w);
		assert_int_equal(wal_submit(w), 0);
		if (round % 3 == 2)
			turn_until_some_done(w);
		if (round % 40 != 39)
			continue;
		assert_int_equal(wal_sync(w, 10000), 0);
		last_seg(dir_of(state), path, sizeof(path));
		layout_of(path, l);
		for (size_t i = 2; i + 3 < l->n; i++)
			if (l->type[i] == REC_PAD &&
			    l->type[i - 1] != REC_PAD &&
			    (l->off[i] + l->size[i]) % BLOCK == 0 &&
			    l->off[i] % BLOCK != 0)
				k = i;
	}
	assert_true(k > 0);
	assert_int_equal(wal_sync(w, 10000), 0);
	assert_int_equal(wal_close(w), 0);
	assert_int_equal(scan_rc(dir_of(state), NULL, &end), 0);
	last_seg(dir_of(state), path, sizeof(path));
	layout_of(path, l);
	x = l->off[k - 1];
	gap_end = l->off[k] + l->size[k];
	assert_int_equal(fs_read_all(path, &orig, &len), 0);

	/* a flipped byte where the batch was: damage */
	t_flip(path, checked_byte(l, k - 1), 0x40);
	assert_int_equal(scan_rc(dir_of(state), NULL, &end), SLUICE_ECORRUPT);
	t_poke(path, 0, orig, len);
	/* zeros, then a record that is not on a block: damage */
	t_zero(path, x, (size_t)(l->off[k] - x));
	assert_int_equal(scan_rc(dir_of(state), NULL, &end), SLUICE_ECORRUPT);
	t_poke(path, 0, orig, len);
	/* the gap, and a flipped byte in a record after it: damage */
	t_zero(path, x, (size_t)(gap_end - x));
	t_flip(path, checked_byte(l, k + 2), 0x40);
	assert_int_equal(scan_rc(dir_of(state), NULL, &end), SLUICE_ECORRUPT);
	t_poke(path, 0, orig, len);

	/* the gap alone: a torn tail, unless the mark says it was synced */
	t_zero(path, x, (size_t)(gap_end - x));
	mark.lsn = l->lsn[k - 1];
	assert_int_equal(scan_rc(dir_of(state), &mark, &end), SLUICE_ECORRUPT);
	mark.lsn = l->lsn[k - 1] - 1;
	assert_int_equal(scan_rc(dir_of(state), &mark, &end), 0);
	assert_true(end.torn && end.gap && !end.cut);
	assert_true(end.last_lsn == l->lsn[k - 1] - 1);
	assert_true(end.torn_off == x && end.gap_last == l->lsn[l->n - 1]);
	assert_true(end.torn_off + end.torn_bytes > l->off[l->n - 1] &&
	    end.torn_off + end.torn_bytes <=
	        l->off[l->n - 1] + l->size[l->n - 1]);

	/* a start cuts it and continues after the records before it */
	after = l->lsn[k - 1] - 1;
	w = open_writer(state, 4);
	assert_true(wal_last_lsn(w) == after);
	for (int i = 0; i < 20; i++)
		t_wal_append(w);
	assert_int_equal(wal_sync(w, 10000), 0);
	assert_int_equal(wal_close(w), 0);
	s = scan(dir_of(state));
	assert_true(s.want == after + 21);
	free(orig);
	free(l);
}

int
main(void)
{
#define T(fn)                                                                  \
	cmocka_unit_test_setup_teardown(fn, t_tmpdir_setup, t_tmpdir_teardown)
	const struct CMUnitTest tests[] = {
		T(test_batches_go_beside_others),
		T(test_one_client_writes_no_pads),
		T(test_follower_adds_no_pads),
		T(test_reopen_continues_after_pads),
		T(test_a_lost_batch_is_cut_with_those_beside_it),
	};
#undef T
	log_set_level(LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
