/* Tests of src/server/core/reserve.c: the sizes are those of the records as
 * the log frames them, the floor adds up what each state still needs, the
 * pool shrinks with a small --max-log-bytes, and a fail's text is cut
 * where the reserve can hold it without splitting a character. */
#include <stdint.h>
#include <string.h>

#include "t_lib.h"

#include "log/rec.h"
#include "queue/qrec.h"
#include "server/core/reserve.h"
#include "util/buf.h"

/* Bytes of the framed record `r` (it must encode). */
static uint64_t
framed(const struct qrec *r)
{
	struct buf b;
	uint64_t size;

	buf_init(&b);
	assert_int_equal(qrec_encode(r, &b), 0);
	size = rec_size(b.len);
	buf_fini(&b);
	return size;
}

static struct qrec
fail_with(const char *text, size_t len, uint8_t outcome)
{
	struct qrec r;

	memset(&r, 0, sizeof(r));
	r.type = QREC_FAIL;
	r.u.end.id = 42;
	r.u.end.lease = 7;
	r.u.end.outcome = outcome;
	r.u.end.run_at = outcome == QREC_WAIT ? 1700000000000LL : 0;
	r.u.end.text = text;
	r.u.end.text_len = len;
	return r;
}

/* The sizes are the framed records: a take with its lease (body 25
 * bytes), a kick (8), and for the end the largest that may come from the
 * reserve: a lost lease's move to a dead-letter tube. */
static void
test_reserve_sizes_are_the_framed_records(void **state)
{
	static char text[RESERVE_WHY_MAX + QREC_NAME_MAX + 2 * REC_ALIGN];
	struct reserve_sizes z;
	struct qrec r;
	(void)state;

	memset(text, 'e', sizeof(text));
	reserve_sizes_init(&z);
	assert_int_equal(z.take, rec_size(8 + 8 + 1 + 8));
	assert_int_equal(z.kick, rec_size(8));
	/* the widest end: a lost lease at max_attempts that moves its task
	 * to a dead-letter tube of the longest name, with the longest reason
	 * (8 + 8 + 1 + 1 + 2 + RESERVE_WHY_MAX + 2 + 200); more than an ack
	 * that keeps its task as done with a result of RESERVE_ERROR_MAX
	 * bytes (8 + 8 + 1 + 4 + 8 + 8 + 2 + RESERVE_ERROR_MAX) or
	 * beanstalk's release with a priority (8 + 8 + 1 + 1 + 4 + 8) and
	 * bury into a dead-letter tube (8 + 8 + 1 + 1 + 2 + 200) */
	assert_true(rec_size(8 + 8 + 1 + 4 + 8 + 8 + 2 + RESERVE_ERROR_MAX) <
	    rec_size(22 + RESERVE_WHY_MAX + QREC_NAME_MAX));
	assert_true(rec_size(30) + rec_size(20 + QREC_NAME_MAX) <
	    rec_size(22 + RESERVE_WHY_MAX + QREC_NAME_MAX));
	assert_int_equal(z.end, rec_size(22 + RESERVE_WHY_MAX + QREC_NAME_MAX));
	/* each with a header */
	assert_true(z.take > REC_HDR_SIZE && z.kick > REC_HDR_SIZE);

	/* Records of real values fit in them. */
	memset(&r, 0, sizeof(r));
	r.type = QREC_TAKE_LEASE;
	r.u.take.id = 1;
	r.u.take.session = 3;
	r.u.take.lease = (UINT64_C(5) << 32) + 9;
	assert_true(framed(&r) <= z.take);
	r = fail_with(text, RESERVE_ERROR_MAX, QREC_WAIT);
	assert_true(framed(&r) <= z.end);
	r = fail_with(text, RESERVE_ERROR_MAX, QREC_BURIED);
	assert_true(framed(&r) <= z.end);
	/* to a dead-letter tube: its name takes room from the text */
	{
		static char tube[QREC_NAME_MAX];

		memset(tube, 't', sizeof(tube));
		r = fail_with(
		    text, RESERVE_ERROR_MAX - QREC_NAME_MAX, QREC_MOVED);
		r.u.end.to = tube;
		r.u.end.to_len = sizeof(tube);
		assert_true(framed(&r) <= z.end);
		/* a lost lease's: its whole reason, which is never cut */
		r.type = QREC_SETBACK;
		r.u.end.reason = QREC_BY_SESSION;
		r.u.end.text_len = RESERVE_WHY_MAX;
		assert_true(framed(&r) <= z.end);
	}
	/* ... and a longer text (past the padding and the wider fields of
	 * the ends above) does not: that is why it is cut */
	r = fail_with(text, sizeof(text), QREC_WAIT);
	assert_true(framed(&r) > z.end);

	memset(&r, 0, sizeof(r));
	r.type = QREC_ACK;
	r.u.end.id = 42;
	r.u.end.lease = 7;
	r.u.end.outcome = QREC_DELETED;
	r.u.end.dedup_ms = 600000;
	assert_true(framed(&r) <= z.end);
	r.u.end.outcome = QREC_DONE;
	r.u.end.keep_ms = 86400000;
	r.u.end.max_done = 1000000;
	r.u.end.text = text;
	r.u.end.text_len = RESERVE_ERROR_MAX;
	assert_true(framed(&r) <= z.end);
	memset(&r, 0, sizeof(r));
	r.type = QREC_DELETE;
	r.u.del.id = 42;
	assert_true(framed(&r) <= z.end);
}

/* The floor: a take and an end per waiting task, an end per taken one, a
 * kick more per buried one. */
static void
test_reserve_floor_adds_what_each_state_needs(void **state)
{
	struct reserve_sizes z = { .take = 72, .end = 328, .kick = 48 };
	struct reserve_counts n = { 0 };
	(void)state;

	assert_int_equal(reserve_floor(&z, &n), 72);
	n.ready = 3;
	assert_int_equal(reserve_floor(&z, &n), 72 + 3 * 400);
	n.delayed = 2;
	assert_int_equal(reserve_floor(&z, &n), 72 + 5 * 400);
	n.taken = 4;
	assert_int_equal(reserve_floor(&z, &n), 72 + 5 * 400 + 4 * 328);
	n.buried = 1;
	assert_int_equal(reserve_floor(&z, &n), 72 + 5 * 400 + 4 * 328 + 448);
	/* taking a ready task hands its take's room to the record */
	n.ready--;
	n.taken++;
	assert_int_equal(reserve_floor(&z, &n), 72 + 4 * 400 + 5 * 328 + 448);

	/* far too many tasks saturate rather than wrap */
	n.ready = UINT64_MAX / 100;
	assert_true(reserve_floor(&z, &n) == UINT64_MAX);
	n.ready = 0;
	n.buried = UINT64_MAX;
	assert_true(reserve_floor(&z, &n) == UINT64_MAX);
}

/* The pool is 1 MiB, at most an eighth of --max-log-bytes; new work
 * must also leave a new task's take and end. */
static void
test_reserve_pool_and_margin(void **state)
{
	struct reserve_sizes z;
	(void)state;

	reserve_sizes_init(&z);
	assert_int_equal(reserve_pool(0), RESERVE_POOL);
	assert_int_equal(reserve_pool(UINT64_C(1) << 40), RESERVE_POOL);
	assert_int_equal(reserve_pool(8 << 20), 1 << 20);
	assert_int_equal(reserve_pool(4 << 20), 512 << 10);
	assert_int_equal(reserve_margin(&z, 1000), 1000 + z.take + z.end);
}

/* A fail's text is cut to RESERVE_ERROR_MAX bytes, before a character
 * that would not fit whole; shorter texts are kept. */
static void
test_reserve_error_len_cuts_between_characters(void **state)
{
	char text[RESERVE_ERROR_MAX + 16];
	(void)state;

	memset(text, 'a', sizeof(text));
	assert_int_equal(reserve_error_len(text, 10, RESERVE_ERROR_MAX), 10);
	assert_int_equal(
	    reserve_error_len(text, RESERVE_ERROR_MAX, RESERVE_ERROR_MAX),
	    RESERVE_ERROR_MAX);
	assert_int_equal(
	    reserve_error_len(text, sizeof(text), RESERVE_ERROR_MAX),
	    RESERVE_ERROR_MAX);

	/* "é" (2 bytes) across the limit: cut before it */
	memcpy(text + RESERVE_ERROR_MAX - 1, "\xc3\xa9", 2);
	assert_int_equal(
	    reserve_error_len(text, sizeof(text), RESERVE_ERROR_MAX),
	    RESERVE_ERROR_MAX - 1);
	/* "€" (3 bytes) ending exactly at the limit: kept */
	memset(text, 'a', sizeof(text));
	memcpy(text + RESERVE_ERROR_MAX - 3, "\xe2\x82\xac", 3);
	assert_int_equal(
	    reserve_error_len(text, sizeof(text), RESERVE_ERROR_MAX),
	    RESERVE_ERROR_MAX);
	/* a 4-byte character starting 2 bytes before it: cut before */
	memset(text, 'a', sizeof(text));
	memcpy(text + RESERVE_ERROR_MAX - 2, "\xf0\x9f\x98\x80", 4);
	assert_int_equal(
	    reserve_error_len(text, sizeof(text), RESERVE_ERROR_MAX),
	    RESERVE_ERROR_MAX - 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve_sizes_are_the_framed_records),
		cmocka_unit_test(test_reserve_floor_adds_what_each_state_needs),
		cmocka_unit_test(test_reserve_pool_and_margin),
		cmocka_unit_test(
		    test_reserve_error_len_cuts_between_characters),
	};
	return cmocka_run_group_tests_name("reserve", tests, NULL, NULL);
}
