/* Recovery and the log scan beneath it. */
#include "log/recover.h"
#include "log/snap.h"
#include "t_log.h"

enum { SEG = 64 << 10 };

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
	assert_int_equal(
	    logdir_scan(d->path, 0, 0, refuse_second, NULL, &end),
	    SLUICE_ECORRUPT);
	assert_memory_equal(&end, &before, sizeof(end));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_a_refused_record_is_the_callers_verdict_not_damage,
		    t_tmpdir_setup, t_tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("recover", tests, NULL, NULL);
}
