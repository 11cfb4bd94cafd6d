/* The epoch history: what is appended survives a reload, a torn last line
 * is ignored, damage before it is refused, a cut forgets later epochs,
 * an epoch without records is replaced by the next, and the lookups. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log/epochs.h"
#include "sluice.h"
#include "t_lib.h"

static const char *
dir_of(void **state)
{
	return ((struct t_dir *)*state)->path;
}

static void
write_file(void **state, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/EPOCHS", dir_of(state));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
test_a_new_history_holds_epoch_one(void **state)
{
	struct epochs e;

	assert_int_equal(epochs_load(&e, dir_of(state)), 0);
	assert_int_equal(e.n, 1);
	assert_true(epochs_last(&e)->epoch == 1 && epochs_last(&e)->start == 1);
	epochs_fini(&e);
}

static void
test_added_epochs_survive_a_reload(void **state)
{
	struct epochs e;

	assert_int_equal(epochs_load(&e, dir_of(state)), 0);
	assert_int_equal(epochs_add(&e, 2, 0xabc, 10), 0);
	assert_int_equal(epochs_add(&e, 5, 0xdef, 40), 0);
	/* the same again: nothing to do; lower or earlier: refused */
	assert_int_equal(epochs_add(&e, 2, 0xabc, 10), 0);
	assert_int_equal(epochs_add(&e, 4, 1, 50), SLUICE_EEPOCH);
	assert_int_equal(epochs_add(&e, 6, 1, 30), SLUICE_EEPOCH);
	epochs_fini(&e);

	assert_int_equal(epochs_load(&e, dir_of(state)), 0);
	assert_int_equal(e.n, 3);
	assert_true(epochs_find(&e, 5)->nonce == 0xdef);
	assert_null(epochs_find(&e, 3));
	assert_true(epochs_at(&e, 9)->epoch == 1);
	assert_true(epochs_at(&e, 10)->epoch == 2);
	assert_true(epochs_at(&e, 39)->epoch == 2);
	assert_true(epochs_at(&e, 1000)->epoch == 5);
	assert_true(epochs_end(&e, 0, 99) == 9);
	assert_true(epochs_end(&e, 1, 99) == 39);
	assert_true(epochs_end(&e, 2, 99) == 99);

	/* a cut forgets what began after it, in the file too */
	assert_int_equal(epochs_cut(&e, 39), 0);
	assert_int_equal(e.n, 2);
	epochs_fini(&e);
	assert_int_equal(epochs_load(&e, dir_of(state)), 0);
	assert_int_equal(e.n, 2);
	assert_true(epochs_last(&e)->epoch == 2);
	epochs_fini(&e);
}

static void
test_an_epoch_without_records_is_replaced(void **state)
{
	struct epochs e;

	assert_int_equal(epochs_load(&e, dir_of(state)), 0);
	/* a fresh log: the leader's start begins epoch 2 at LSN 1 */
	assert_int_equal(epochs_add(&e, 2, 7, 1), 0);
	assert_int_equal(e.n, 1);
	assert_true(epochs_at(&e, 1)->epoch == 2);
	epochs_fini(&e);
	assert_int_equal(epochs_load(&e, dir_of(state)), 0);
	assert_int_equal(e.n, 1);
	assert_true(epochs_last(&e)->nonce == 7);
	epochs_fini(&e);
}

static void
test_a_torn_last_line_is_ignored_damage_is_not(void **state)
{
	struct epochs e;

	write_file(state, "2 00000000000000aa 10\n3 00000000000000bb 2");
	assert_int_equal(epochs_load(&e, dir_of(state)), 0);
	assert_int_equal(e.n, 2);
	assert_true(epochs_last(&e)->epoch == 2);
	epochs_fini(&e);

	write_file(state, "2 00000000000000aa 10\nnonsense\n3 0 20\n");
	assert_int_equal(epochs_load(&e, dir_of(state)), SLUICE_ECORRUPT);
	write_file(state, "3 00000000000000aa 10\n2 0 20\n");
	assert_int_equal(epochs_load(&e, dir_of(state)), SLUICE_ECORRUPT);
}

static void
test_set_replaces_the_history(void **state)
{
	struct epochs e;
	struct epoch_ent v[] = { { 1, 0, 1 }, { 3, 9, 100 }, { 4, 8, 200 } };
	struct epoch_ent bad[] = { { 3, 9, 100 }, { 2, 8, 200 } };

	assert_int_equal(epochs_load(&e, dir_of(state)), 0);
	assert_int_equal(epochs_add(&e, 2, 1, 5), 0);
	assert_int_equal(epochs_set(&e, v, 3), 0);
	assert_int_equal(e.n, 3);
	assert_int_equal(epochs_set(&e, bad, 2), SLUICE_EEPOCH);
	assert_int_equal(e.n, 3);
	epochs_fini(&e);
	assert_int_equal(epochs_load(&e, dir_of(state)), 0);
	assert_int_equal(e.n, 3);
	assert_true(epochs_find(&e, 4)->start == 200);
	assert_int_equal(epochs_set(&e, NULL, 0), 0);
	assert_int_equal(e.n, 1);
	epochs_fini(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_a_new_history_holds_epoch_one, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_added_epochs_survive_a_reload, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_an_epoch_without_records_is_replaced, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_torn_last_line_is_ignored_damage_is_not,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_set_replaces_the_history,
		    t_tmpdir_setup, t_tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
