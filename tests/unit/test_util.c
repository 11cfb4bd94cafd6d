/* Tests of src/util: the byte buffer and reader every codec stands on, and
 * the names of error codes, and durations. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sluice.h"
#include "t_lib.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/dur.h"
#include "util/fsutil.h"

/* Values written with buf_put_* read back the same through rd_*. */
static void
test_buf_round_trips_every_width(void **state)
{
	struct buf b;
	struct rd r;
	size_t n;
	const uint8_t *blob;
	const char *s;

	(void)state;
	buf_init(&b);
	buf_put_u8(&b, 0xab);
	buf_put_u16(&b, 0xbeef);
	buf_put_u32(&b, 0xdeadbeef);
	buf_put_u64(&b, 0x0123456789abcdefULL);
	buf_put_i64(&b, -42);
	buf_put_blob(&b, "payload", 7);
	buf_put_str16(&b, "tube", 4);
	buf_put_blob(&b, NULL, 0);
	assert_false(buf_failed(&b));

	rd_init(&r, b.data, b.len);
	assert_int_equal(rd_u8(&r), 0xab);
	assert_int_equal(rd_u16(&r), 0xbeef);
	assert_int_equal(rd_u32(&r), 0xdeadbeef);
	assert_true(rd_u64(&r) == 0x0123456789abcdefULL);
	assert_true(rd_i64(&r) == -42);
	blob = rd_blob(&r, 100, &n);
	assert_int_equal(n, 7);
	assert_memory_equal(blob, "payload", 7);
	s = rd_str16(&r, 200, &n);
	assert_int_equal(n, 4);
	assert_memory_equal(s, "tube", 4);
	blob = rd_blob(&r, 100, &n);
	assert_non_null(blob);
	assert_int_equal(n, 0);
	assert_int_equal(rd_left(&r), 0);
	assert_false(rd_failed(&r));
	buf_fini(&b);
}

/* Reading past the end, or a length over its limit, fails without
 * touching memory beyond the input. */
static void
test_rd_refuses_lengths_past_the_end(void **state)
{
	uint8_t in[6] = { 10, 0, 0, 0, 'a', 'b' };
	struct rd r;
	size_t n;

	(void)state;
	rd_init(&r, in, sizeof(in));
	assert_null(rd_blob(&r, 100, &n));
	assert_true(rd_failed(&r));

	rd_init(&r, in, sizeof(in));
	in[0] = 2;
	assert_null(rd_blob(&r, 1, &n));
	assert_true(rd_failed(&r));

	rd_init(&r, in, 3);
	assert_int_equal(rd_u32(&r), 0);
	assert_true(rd_failed(&r));
	assert_int_equal(rd_u8(&r), 0);
}

/* Every code has a name, and negated errno values are named by the OS. */
static void
test_strerror_names_every_code(void **state)
{
	(void)state;
	for (int rc = 0; rc < SLUICE_ERRMAX_; rc++)
		if (rc != 26 && rc != 27 && /* not assigned */
		    (rc < 30 || rc > 32))   /* reserved, not yet assigned */
			assert_string_not_equal(
			    sluice_strerror(rc), "unknown error");
	assert_string_equal(sluice_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(
	    sluice_strerror(SLUICE_ERRMAX_ + 5), "unknown error");
}

/* fs_read_all returns what fs_pwrite_all wrote. */
static void
test_fs_write_then_read_back(void **state)
{
	const char *path = t_path(*state, "a/b/file");
	char dir[512];
	uint8_t *data;
	size_t len;
	int fd;

	snprintf(dir, sizeof(dir), "%s", t_path(*state, "a/b"));
	assert_int_equal(fs_mkdir_p(dir), 0);
	path = t_path(*state, "a/b/file");
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fs_pwrite_all(fd, "hello", 5, 3), 0);
	close(fd);
	assert_int_equal(fs_sync_dir(dir), 0);
	assert_int_equal(fs_read_all(path, &data, &len), 0);
	assert_int_equal(len, 8);
	assert_memory_equal(data + 3, "hello", 5);
	free(data);
	assert_int_equal(
	    fs_read_all(t_path(*state, "missing"), &data, &len), -ENOENT);
}

/* ---- durations (util/dur.h), shared by sluiced and the sluice tool */

static uint64_t
dur(const char *s)
{
	uint64_t ms = 12345;

	assert_int_equal(dur_parse(s, &ms), 0);
	return ms;
}

static void
test_dur_accepts_ms_and_units(void **state)
{
	(void)state;
	assert_true(dur("0") == 0);
	assert_true(dur("00") == 0);
	assert_true(dur("0.0") == 0);
	assert_true(dur("0s") == 0);
	assert_true(dur("250ms") == 250);
	assert_true(dur("2s") == 2000);
	assert_true(dur("1.5s") == 1500);
	assert_true(dur(".5s") == 500);
	assert_true(dur("0.001s") == 1);
	assert_true(dur("1.5m") == 90000);
	assert_true(dur("3m") == 180000);
	assert_true(dur("1h") == 3600000);
	assert_true(dur("24h") == 86400000);
	assert_true(dur("30d") == UINT64_C(2592000000));
	assert_true(dur("1.5d") == 129600000);
}

static void
test_dur_refuses_the_rest(void **state)
{
	static const char *const bad[] = { "", "s", "ms", "-1", "+1", "1.5ms",
		"2x", "1ms2", "1 s", " 1s", "1S", "1.2.3s", "1D", "1w",
		"99999999999999999999", "18446744073709551615h", "." };
	uint64_t ms = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (dur_parse(bad[i], &ms) == 0)
			fail_msg("\"%s\" parsed", bad[i]);
	}
	assert_int_equal(dur_parse(NULL, &ms), -1);
	assert_true(ms == 7); /* untouched on failure */
}

/* A bare number is refused, 0 aside: "30" is 30 seconds to some and 30
 * milliseconds to others, and the hint names both. */
static void
test_dur_refuses_a_bare_number(void **state)
{
	static const char *const bare[] = { "1", "30", "250", "1.5", ".5",
		"0.001", "0.5", "86400000" };
	uint64_t ms = 7;
	char h[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++) {
		if (dur_parse(bare[i], &ms) != DUR_EBARE)
			fail_msg("\"%s\" is not refused as bare", bare[i]);
	}
	assert_true(ms == 7);
	dur_hint(h, sizeof(h), "30");
	assert_string_equal(
	    h, "say 30s or 30000ms (30ms if milliseconds were meant)");
	dur_hint(h, sizeof(h), "1.5");
	assert_string_equal(h, "say 1.5s or 1500ms");
	dur_hint(h, sizeof(h), "18446744073709551615");
	assert_string_equal(h, "say 18446744073709551615s");
	dur_hint(h, sizeof(h), "1234567890123456789012345");
	assert_string_equal(h, "say it with ms, s, m, h or d");
}

/* Durations for people: the largest two units, no zero parts. */
static void
test_dur_fmt_for_people(void **state)
{
	char b[64];

	(void)state;
	dur_fmt(b, sizeof(b), 0);
	assert_string_equal(b, "0");
	dur_fmt(b, sizeof(b), 250);
	assert_string_equal(b, "250ms");
	dur_fmt(b, sizeof(b), 1500);
	assert_string_equal(b, "1.500s");
	dur_fmt(b, sizeof(b), 60000);
	assert_string_equal(b, "1m");
	dur_fmt(b, sizeof(b), 200000);
	assert_string_equal(b, "3m20s");
	dur_fmt(b, sizeof(b), 3600000 + 300000);
	assert_string_equal(b, "1h5m");
	dur_fmt(b, sizeof(b), 3 * 86400000ULL + 4 * 3600000);
	assert_string_equal(b, "3d4h");
}

/* RFC 4648's examples, and every length from 0 to 40 of every byte value
 * back and forth. */
static void
test_base64_round_trips(void **state)
{
	static const char *const rfc[][2] = { { "", "" }, { "f", "Zg==" },
		{ "fo", "Zm8=" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" } };
	uint8_t in[40], out[40];
	char enc[64];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		base64_encode(enc, rfc[i][0], strlen(rfc[i][0]));
		assert_string_equal(enc, rfc[i][1]);
	}
	for (size_t len = 0; len <= sizeof(in); len++) {
		for (size_t i = 0; i < len; i++)
			in[i] = (uint8_t)(len * 37 + i * 101);
		base64_encode(enc, in, len);
		assert_int_equal(strlen(enc), base64_len(len));
		assert_true(base64_decode(out, enc, strlen(enc), &n));
		assert_int_equal(n, len);
		assert_memory_equal(out, in, len);
	}
}

static void
test_base64_refuses_the_rest(void **state)
{
	static const char *const bad[] = { "Z", "Zg=", "Zg",
		"Z===", "====", "Zg==Zg==", "Zm9!", "Zm 9", "=Zm9", "Zm=v" };
	uint8_t out[16];
	size_t n = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (base64_decode(out, bad[i], strlen(bad[i]), &n))
			fail_msg("\"%s\" decoded", bad[i]);
	}
	assert_int_equal(n, 7); /* untouched on failure */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_round_trips_every_width),
		cmocka_unit_test(test_rd_refuses_lengths_past_the_end),
		cmocka_unit_test(test_strerror_names_every_code),
		cmocka_unit_test(test_dur_accepts_ms_and_units),
		cmocka_unit_test(test_dur_refuses_the_rest),
		cmocka_unit_test(test_dur_refuses_a_bare_number),
		cmocka_unit_test(test_dur_fmt_for_people),
		cmocka_unit_test(test_base64_round_trips),
		cmocka_unit_test(test_base64_refuses_the_rest),
		cmocka_unit_test_setup_teardown(test_fs_write_then_read_back,
		    t_tmpdir_setup, t_tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
