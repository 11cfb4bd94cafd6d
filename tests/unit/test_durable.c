/* The DURABLE mark: two slots written in turn, the newer that checks is
 * current, so a torn write of the file leaves the mark before it; a
 * missing or unreadable file knows nothing; lowering and removing; and
 * durable_judge, the rule recovery and sluice-log verify share. */
#include <fcntl.h>
#include <unistd.h>

#include "log/durable.h"
#include "sluice.h"
#include "t_lib.h"
#include "t_log.h"

static const char *
mark_path(void **state)
{
	static char p[600];

	snprintf(p, sizeof(p), "%s/DURABLE", ((struct t_dir *)*state)->path);
	return p;
}

/* No file: nothing known. */
static void
test_a_missing_mark_knows_nothing(void **state)
{
	struct durable_mark m;

	m.lsn = 7;
	assert_int_equal(durable_read(((struct t_dir *)*state)->path, &m), 0);
	assert_true(m.lsn == 0 && !m.clean);
}

/* Each write goes to the other slot; the newest is read; a clean stop
 * says so, the next open clears it. */
static void
test_writes_alternate_and_the_newest_is_read(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct durable_mark m;
	struct durable d;

	assert_int_equal(durable_open(&d, dir, 5), 0);
	assert_int_equal(durable_read(dir, &m), 0);
	assert_true(m.lsn == 5 && !m.clean);
	for (uint64_t lsn = 6; lsn < 20; lsn++) {
		assert_int_equal(durable_note(&d, lsn, false, false), 0);
		assert_int_equal(durable_read(dir, &m), 0);
		assert_true(m.lsn == lsn);
	}
	assert_int_equal(durable_note(&d, 20, true, true), 0);
	durable_close(&d);
	assert_int_equal(durable_read(dir, &m), 0);
	assert_true(m.lsn == 20 && m.clean);
	assert_int_equal(durable_open(&d, dir, 20), 0);
	durable_close(&d);
	assert_int_equal(durable_read(dir, &m), 0);
	assert_true(m.lsn == 20 && !m.clean);
}

/* A torn write of the current slot leaves the previous one; both torn,
 * nothing is known (never something false). */
static void
test_a_torn_slot_leaves_the_one_before(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct durable_mark m;
	struct durable d;
	uint64_t cur;

	assert_int_equal(durable_open(&d, dir, 1), 0);
	assert_int_equal(durable_note(&d, 2, false, false), 0);
	assert_int_equal(durable_note(&d, 3, false, false), 0);
	cur = d.seq;
	durable_close(&d);
	/* the slot of seq `cur` holds LSN 3 */
	t_flip(mark_path(state), (cur & 1) ? DURABLE_SLOT2_OFF + 30 : 30, 1);
	assert_int_equal(durable_read(dir, &m), 0);
	assert_true(m.lsn == 2);
	t_flip(mark_path(state), (cur & 1) ? 30 : DURABLE_SLOT2_OFF + 30, 1);
	assert_int_equal(durable_read(dir, &m), 0);
	assert_true(m.lsn == 0);
}

/* Lowering only lowers; removing forgets. */
static void
test_lower_and_remove(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct durable_mark m;
	struct durable d;

	assert_int_equal(durable_open(&d, dir, 10), 0);
	assert_int_equal(durable_note(&d, 10, true, true), 0);
	durable_close(&d);
	assert_int_equal(durable_lower(dir, 12), 0);
	assert_int_equal(durable_read(dir, &m), 0);
	assert_true(m.lsn == 10 && m.clean);
	assert_int_equal(durable_lower(dir, 4), 0);
	assert_int_equal(durable_read(dir, &m), 0);
	assert_true(m.lsn == 4 && !m.clean);
	assert_int_equal(durable_remove(dir), 0);
	assert_int_equal(durable_read(dir, &m), 0);
	assert_true(m.lsn == 0);
	assert_int_equal(durable_lower(dir, 1), 0); /* none: nothing */
}

/* The rule: what may be cut as a torn write. */
static void
test_the_rule(void **state)
{
	struct durable_mark none = { 0 }, crash = { 0 }, clean = { 0 };

	(void)state;
	crash.lsn = 100;
	clean.lsn = 100;
	clean.clean = true;
	assert_null(durable_judge(&none, true, 5));
	assert_null(durable_judge(&none, false, 0));
	assert_null(durable_judge(&crash, true, 100));    /* 101 never synced */
	assert_non_null(durable_judge(&crash, true, 99)); /* 100 was */
	assert_null(durable_judge(&crash, false, 100));
	assert_null(durable_judge(&crash, false, 150));
	assert_non_null(durable_judge(&crash, false, 99));
	assert_non_null(durable_judge(&clean, true, 100));
	assert_null(durable_judge(&clean, false, 100));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_a_missing_mark_knows_nothing, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_writes_alternate_and_the_newest_is_read,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_torn_slot_leaves_the_one_before, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_lower_and_remove, t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_rule, t_tmpdir_setup, t_tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("durable", tests, NULL, NULL);
}
