/* bs_proto: beanstalk commands split from a byte stream however it
 * arrives, their arguments read as beanstalkd reads them, and tube names
 * mapped onto sluice's and back. (The replies of a real beanstalkd to the
 * same bytes are compared in tests/integration/test_bsdiff.c.) */
#include <string.h>

#include "server/face/beanstalk/bs_proto.h"
#include "t_lib.h"

/* Parses one command from a NUL-ended string; returns bytes used. */
static size_t
parse(const char *s, struct bs_cmd *c, enum bs_err *err)
{
	struct bs_parser ps = { 0 };

	return bs_parse(&ps, s, strlen(s), 100, c, err);
}

static void
test_a_put_needs_its_whole_body_and_its_crlf(void **state)
{
	const char *in = "put 1 2 3 5\r\nab\r\nc\r\nstats\r\n";
	struct bs_parser ps = { 0 };
	struct bs_cmd c;
	enum bs_err err;

	(void)state;
	/* every prefix short of the body's "\r\n" asks for more */
	for (size_t n = 0; n < 20; n++)
		assert_int_equal(bs_parse(&ps, in, n, 100, &c, &err), 0);
	assert_int_equal(bs_parse(&ps, in, 20, 100, &c, &err), 20);
	assert_int_equal(err, BS_OK);
	assert_int_equal(c.kind, BS_PUT);
	assert_int_equal(c.pri, 1);
	assert_int_equal(c.delay, 2);
	assert_int_equal(c.ttr, 3);
	assert_int_equal(c.body_len, 5);
	assert_memory_equal(c.body, "ab\r\nc", 5);
	assert_int_equal(bs_parse(&ps, in + 20, 7, 100, &c, &err), 7);
	assert_int_equal(c.kind, BS_STATS);
}

static void
test_a_body_without_crlf_is_expected_crlf(void **state)
{
	struct bs_cmd c;
	enum bs_err err;

	(void)state;
	assert_int_equal(parse("put 0 0 0 2\r\nabXY", &c, &err), 17);
	assert_int_equal(err, BS_EXPECTED_CRLF);
	assert_int_equal(c.kind, BS_NONE);
	/* a ttr of 0 is 1, silently */
	assert_int_equal(parse("put 0 0 0 0\r\n\r\n", &c, &err), 15);
	assert_int_equal(c.ttr, 1);
}

static void
test_a_body_too_big_is_skipped_then_refused(void **state)
{
	const char *in = "put 0 0 1 101\r\n";
	char body[103];
	struct bs_parser ps = { 0 };
	struct bs_cmd c;
	enum bs_err err;

	(void)state;
	memset(body, 'x', sizeof(body));
	assert_int_equal(
	    bs_parse(&ps, in, strlen(in), 100, &c, &err), strlen(in));
	assert_int_equal(err, BS_OK);
	assert_int_equal(c.kind, BS_NONE);
	assert_int_equal(c.count_as, BS_PUT);
	assert_int_equal(bs_parse(&ps, body, 50, 100, &c, &err), 50);
	assert_int_equal(err, BS_OK);
	assert_int_equal(bs_parse(&ps, body, 100, 100, &c, &err), 53);
	assert_int_equal(err, BS_JOB_TOO_BIG);
}

static void
test_a_line_too_long_is_one_bad_format(void **state)
{
	char in[400];
	struct bs_parser ps = { 0 };
	struct bs_cmd c;
	enum bs_err err;
	size_t off = 0, n, bad = 0;

	(void)state;
	memset(in, 'x', 300);
	memcpy(in + 300, "\r\nquit\r\n", 8);
	/* one byte at a time, as a slow client sends it */
	for (size_t len = 1; len <= 308 && off < 308; len++) {
		while ((n = bs_parse(&ps, in + off, len - off, 100, &c, &err)) >
		    0) {
			off += n;
			bad += err == BS_BAD_FORMAT;
			if (c.kind == BS_QUIT)
				break;
		}
	}
	assert_int_equal(off, 308);
	assert_int_equal(bad, 1);
	assert_int_equal(c.kind, BS_QUIT);
}

static void
test_arguments_are_read_as_beanstalkd_reads_them(void **state)
{
	static const struct {
		const char *line;
		enum bs_err err;
		enum bs_kind kind;
	} cases[] = {
		{ "delete 1\r\n", BS_OK, BS_DELETE },
		{ "delete  1\r\n", BS_OK, BS_DELETE },
		{ "delete 1 \r\n", BS_BAD_FORMAT, BS_NONE },
		{ "delete -1\r\n", BS_BAD_FORMAT, BS_NONE },
		{ "delete 18446744073709551616\r\n", BS_BAD_FORMAT, BS_NONE },
		{ "delete\r\n", BS_UNKNOWN_COMMAND, BS_NONE },
		{ "reserve-job\r\n", BS_BAD_FORMAT, BS_NONE },
		{ "reserve-with-timeout 1x\r\n", BS_OK, BS_RESERVE_TIMEOUT },
		{ "kick -1\r\n", BS_OK, BS_KICK },
		{ "kick x\r\n", BS_BAD_FORMAT, BS_NONE },
		{ "release 1 2 3\r\n", BS_OK, BS_RELEASE },
		{ "bury 1 2\r\n", BS_OK, BS_BURY },
		{ "pause-tube a 5\r\n", BS_OK, BS_PAUSE_TUBE },
		{ "pause-tube a\r\n", BS_BAD_FORMAT, BS_NONE },
		{ "use -a\r\n", BS_BAD_FORMAT, BS_NONE },
		{ "use a:b\r\n", BS_BAD_FORMAT, BS_NONE },
		{ "use (a);$+/.b_\r\n", BS_OK, BS_USE },
		{ "quitter\r\n", BS_OK, BS_QUIT },
		{ "stats-jobs\r\n", BS_BAD_FORMAT, BS_NONE },
		{ "\r\n", BS_UNKNOWN_COMMAND, BS_NONE },
	};
	struct bs_cmd c;
	enum bs_err err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(
		    parse(cases[i].line, &c, &err), strlen(cases[i].line));
		if (err != cases[i].err || c.kind != cases[i].kind)
			fail_msg(
			    "%s: err %d kind %d", cases[i].line, err, c.kind);
	}
	parse("release 7 4294967295 4294967295\r\n", &c, &err);
	assert_int_equal(c.id, 7);
	assert_int_equal(c.pri, UINT32_MAX);
	assert_int_equal(c.delay, UINT32_MAX);
	parse("reserve-with-timeout -1\r\n", &c, &err);
	assert_true(c.timeout < 0);
	parse("pause-tube t.x 9\r\n", &c, &err);
	assert_int_equal(c.tube_len, 3);
	assert_memory_equal(c.tube, "t.x", 3);
	assert_int_equal(c.delay, 9);
}

static void
test_tube_names_map_onto_sluice_names_and_back(void **state)
{
	const char *name = "a+b;c$d(e)-_./";
	char s[BS_NAME_MAX], b[BS_NAME_MAX];
	char longest[BS_NAME_MAX];
	size_t n;

	(void)state;
	n = bs_tube_to_sluice(name, strlen(name), s);
	assert_int_equal(n, strlen("a:pb:sc:dd:oe:c-_./"));
	assert_memory_equal(s, "a:pb:sc:dd:oe:c-_./", n);
	n = bs_tube_from_sluice(s, n, b);
	assert_int_equal(n, strlen(name));
	assert_memory_equal(b, name, n);
	/* a sluice name with other colons is shown as it is */
	n = bs_tube_from_sluice("x:y:", 4, b);
	assert_memory_equal(b, "x:y:", n);
	/* escapes make a name longer: over 200 bytes is refused */
	memset(longest, '+', sizeof(longest));
	assert_int_equal(bs_tube_to_sluice(longest, 100, s), 200);
	assert_int_equal(bs_tube_to_sluice(longest, 101, s), 0);
	assert_true(bs_name_valid("x", 1));
	assert_false(bs_name_valid("", 0));
	assert_false(bs_name_valid("-x", 2));
}

/* Only sluice tubes a beanstalk client can name are reachable: the list
 * of tubes shows no name `use` would refuse. */
static void
test_only_names_a_client_can_use_are_reachable(void **state)
{
	static const char *const yes[] = { "default", "a:pb", "jobs:o1:c:px",
		"x.y/z_1-2" };
	static const char *const no[] = { "x:zz", "x:", ":p:", "-lead", "a::p",
		"x:y:z" };

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(bs_tube_reachable(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(bs_tube_reachable(no[i], strlen(no[i])));
	assert_false(bs_tube_reachable("", 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_put_needs_its_whole_body_and_its_crlf),
		cmocka_unit_test(test_a_body_without_crlf_is_expected_crlf),
		cmocka_unit_test(test_a_body_too_big_is_skipped_then_refused),
		cmocka_unit_test(test_a_line_too_long_is_one_bad_format),
		cmocka_unit_test(
		    test_arguments_are_read_as_beanstalkd_reads_them),
		cmocka_unit_test(
		    test_tube_names_map_onto_sluice_names_and_back),
		cmocka_unit_test(
		    test_only_names_a_client_can_use_are_reachable),
	};
	return cmocka_run_group_tests_name("bs_proto", tests, NULL, NULL);
}
