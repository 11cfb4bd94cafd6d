/* Tests of src/server/core/snapdue.c: the thresholds are the floors for a
 * small state and grow with the last snapshot's size; a queue that grows
 * under a long load is rebuilt a few times its final size in all (every
 * --snapshot-records records, it was rebuilt N^2 / (2 x floor) times),
 * while what a restart replays after a snapshot stays within growth % of
 * that snapshot's entries; growth 0 keeps the old cadence; nothing
 * overflows. */
#include <stdint.h>

#include "t_lib.h"

#include "server/core/snapdue.h"

static void
test_snapdue_limit_is_the_floor_or_growth_of_the_base(void **state)
{
	(void)state;
	assert_int_equal(snapdue_limit(1000, 0, 100), 1000);
	assert_int_equal(snapdue_limit(1000, 999, 100), 1000);
	assert_int_equal(snapdue_limit(1000, 5000, 100), 5000);
	assert_int_equal(snapdue_limit(1000, 5000, 50), 2500);
	assert_int_equal(snapdue_limit(1000, 5000, 250), 12500);
	assert_int_equal(snapdue_limit(1000, 5000, 0), 1000);
	/* the remainder's share counts: 12345 x 37 % = 4567.65 */
	assert_int_equal(snapdue_limit(1, 12345, 37), 4567);
	/* saturates instead of wrapping */
	assert_true(snapdue_limit(1, UINT64_MAX, 10000) == UINT64_MAX);
	assert_true(snapdue_limit(1, UINT64_MAX - 1, 100) == UINT64_MAX - 1);
	assert_true(snapdue_limit(1, UINT64_MAX / 2, 300) == UINT64_MAX);
}

static void
test_snapdue_records_or_bytes(void **state)
{
	struct snapdue_cfg cfg = { 1000, 1 << 20, 100 };
	struct snapdue_base none = { 0, 0 };
	struct snapdue_base big = { 10000, 8 << 20 };

	(void)state;
	assert_false(snapdue(&cfg, &none, 999, 0));
	assert_true(snapdue(&cfg, &none, 1000, 0));
	assert_true(snapdue(&cfg, &none, 0, 1 << 20));
	/* a larger state waits for as much log as it holds */
	assert_false(snapdue(&cfg, &big, 9999, (8 << 20) - 1));
	assert_true(snapdue(&cfg, &big, 10000, 0));
	assert_true(snapdue(&cfg, &big, 0, 8 << 20));
	/* growth 0: the floors alone, as before */
	cfg.growth = 0;
	assert_true(snapdue(&cfg, &big, 1000, 0));
	assert_true(snapdue(&cfg, &big, 0, 1 << 20));
}

/* A load that puts `n` tasks one record each, snapshotting whenever due
 * (at once, as if the worker took no time): the entries rebuilt over all
 * snapshots, and the longest log after a snapshot seen before the next
 * one started, against that snapshot's entries. */
struct run {
	uint64_t rebuilt;
	uint64_t snapshots;
	uint64_t worst_tail; /* records after a snapshot, at most */
	uint64_t worst_base; /* the entries of that snapshot */
};

static struct run
grow(uint64_t n, const struct snapdue_cfg *cfg)
{
	struct snapdue_base base = { 0, 0 };
	struct run r = { 0, 0, 0, 0 };
	uint64_t since = 0;

	for (uint64_t tasks = 1; tasks <= n; tasks++) {
		since++;
		if (since > r.worst_tail) {
			r.worst_tail = since;
			r.worst_base = base.entries;
		}
		if (!snapdue(cfg, &base, since, since * 192))
			continue;
		base.entries = tasks;
		base.bytes = tasks * 150;
		r.rebuilt += tasks;
		r.snapshots++;
		since = 0;
	}
	return r;
}

static void
test_snapdue_a_growing_queue_is_rebuilt_a_few_times_its_size(void **state)
{
	const uint64_t n = 20000000, floor = 1000000;
	struct snapdue_cfg cfg = { floor, UINT64_MAX, SNAPDUE_GROWTH_DEFAULT };
	struct run r;

	(void)state;
	r = grow(n, &cfg);
	/* 1, 2, 4, 8, 16 M: 31 M entries rebuilt, under 2 x 20 M */
	assert_int_equal(r.snapshots, 5);
	assert_true(r.rebuilt < 2 * n);
	/* a restart replays at most growth % of the snapshot it loads, or
	 * the floor */
	assert_true(r.worst_tail <=
	    snapdue_limit(floor, r.worst_base, SNAPDUE_GROWTH_DEFAULT));
	assert_true(r.worst_tail <= r.worst_base || r.worst_tail <= floor);

	/* Every `floor` records (growth 0, the old cadence): 20 snapshots of
	 * 1..20 M, 210 M entries rebuilt, ten times the queue. */
	cfg.growth = 0;
	r = grow(n, &cfg);
	assert_int_equal(r.snapshots, 20);
	assert_true(r.rebuilt > 10 * n);
	assert_true(r.worst_tail <= floor);
}

static void
test_snapdue_growth_bounds_the_tail_to_its_share(void **state)
{
	struct snapdue_cfg cfg = { 1000, UINT64_MAX, 50 };
	struct run r;

	(void)state;
	r = grow(1000000, &cfg);
	assert_true(r.worst_base > 0);
	assert_true(r.worst_tail <= r.worst_base / 2 || r.worst_tail <= 1000);
	assert_true(r.rebuilt < 3 * 1000000 + 1000);
	/* the bytes' floor grows as well: a byte-bound cadence */
	cfg = (struct snapdue_cfg) { UINT64_MAX, 192 * 1000, 100 };
	r = grow(1000000, &cfg);
	assert_true(r.snapshots >= 2 && r.snapshots <= 12);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_snapdue_limit_is_the_floor_or_growth_of_the_base),
		cmocka_unit_test(test_snapdue_records_or_bytes),
		cmocka_unit_test(
		    test_snapdue_a_growing_queue_is_rebuilt_a_few_times_its_size),
		cmocka_unit_test(
		    test_snapdue_growth_bounds_the_tail_to_its_share),
	};
	return cmocka_run_group_tests_name("snapdue", tests, NULL, NULL);
}
