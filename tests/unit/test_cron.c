/* Tests of util/cron and util/tz: every error text of the parser, the
 * next slot over month ends, leap years and the day-of-month /
 * day-of-week rule, and the daylight-saving rule (a spring-forward and
 * a fall-back day in Europe/Paris and America/New_York), with a fixed
 * clock: every `after` is written out. The zones come from the system's
 * zoneinfo (tzdata); far-future instants test the footer's rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sluice.h"
#include "t_lib.h"
#include "util/cron.h"
#include "util/tz.h"

/* unix ms of a UTC date and time */
static int64_t
utc(int y, int mo, int d, int h, int mi)
{
	return (tz_days(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
	           mi * 60) *
	    1000;
}

static struct cron
parse_ok(const char *expr)
{
	struct cron c;
	char err[CRON_ERR_MAX];
	int rc = cron_parse(expr, strlen(expr), &c, err, sizeof(err));

	if (rc != 0)
		fail_msg("'%s': %s", expr, err);
	return c;
}

static struct tz *
zone(const char *name)
{
	struct tz *z = NULL;
	int rc = tz_load(name, strlen(name), &z);

	if (rc != 0)
		fail_msg("zone %s: %s", name, sluice_strerror(rc));
	return z;
}

static void
expect_error(const char *expr, const char *want)
{
	struct cron c;
	char err[CRON_ERR_MAX];

	assert_int_equal(cron_parse(expr, strlen(expr), &c, err, sizeof(err)),
	    SLUICE_EINVAL);
	if (strcmp(err, want) != 0)
		fail_msg("'%s': got \"%s\", want \"%s\"", expr, err, want);
}

/* Each bad field is named with its value. */
static void
test_cron_errors_name_the_field_and_the_value(void **state)
{
	(void)state;
	expect_error("0 25 * * *", "hour field: 25 is out of 0-23");
	expect_error("60 * * * *", "minute field: 60 is out of 0-59");
	expect_error("* * 0 * *", "day-of-month field: 0 is out of 1-31");
	expect_error("* * 32 * *", "day-of-month field: 32 is out of 1-31");
	expect_error("* * * 13 *", "month field: 13 is out of 1-12");
	expect_error("* * * * 8", "day-of-week field: 8 is out of 0-7");
	expect_error("* * * foo *",
	    "month field: 'foo' is not a month (1-12 or jan-dec)");
	expect_error("* * * * funday",
	    "day-of-week field: 'funday' is not a day of the week (0-7 or "
	    "sun-sat)");
	expect_error("x * * * *", "minute field: 'x' is not a number");
	expect_error(
	    "* 20-10 * * *", "hour field: the range 20-10 is backwards");
	expect_error("*/0 * * * *", "minute field: the step 0 is out of 1-60");
	expect_error("* */25 * * *", "hour field: the step 25 is out of 1-24");
	expect_error(
	    "* * * * */x", "day-of-week field: the step 'x' is not a number");
	expect_error(
	    "1,,2 * * * *", "minute field: an empty element in '1,,2'");
	expect_error("* 1- * * *", "hour field: a value is missing");
	expect_error("* * * *",
	    "expected 5 fields (minute hour day-of-month month day-of-week), "
	    "got 4");
	expect_error("* * * * * *",
	    "expected 5 fields (minute hour day-of-month month day-of-week), "
	    "got 6");
	expect_error("",
	    "expected 5 fields (minute hour day-of-month month day-of-week), "
	    "got 0");
	expect_error("@fortnightly",
	    "'@fortnightly' is not a name cron knows (@yearly, @annually, "
	    "@monthly, @weekly, @daily, @midnight, @hourly)");
	expect_error("0 0 30 2 *",
	    "day-of-month field: 30 never falls in the months given (2)");
	expect_error("0 0 31 apr,jun *",
	    "day-of-month field: 31 never falls in the months given "
	    "(apr,jun)");
	expect_error("0 0 1 1 * 0000000000000000000000000000000000000000000000"
	             "000000000000000000000000000000000000000000000000000000",
	    "the expression is longer than 64 bytes");
	expect_error(
	    "99999999999 * * * *", "minute field: 99999999999 is out of 0-59");
}

/* Lists, ranges, steps, names and the @ names give the expected sets. */
static void
test_cron_fields_parse_to_their_sets(void **state)
{
	struct cron c;

	(void)state;
	c = parse_ok("*/15 9-17/4 1,15 JAN-mar,dec mon-fri");
	assert_true(
	    c.min == (1ull << 0 | 1ull << 15 | 1ull << 30 | 1ull << 45));
	assert_int_equal(c.hour, 1u << 9 | 1u << 13 | 1u << 17);
	assert_int_equal(c.dom, 1u << 1 | 1u << 15);
	assert_int_equal(c.mon, 1u << 1 | 1u << 2 | 1u << 3 | 1u << 12);
	assert_int_equal(c.dow, 0x3e);
	assert_int_equal(c.flags, 0);
	c = parse_ok("5/20 * * * 7");
	assert_true(c.min == (1ull << 5 | 1ull << 25 | 1ull << 45));
	assert_int_equal(c.dow, 1); /* 7 is Sunday */
	assert_int_equal(c.flags, CRON_DOM_ANY);
	c = parse_ok("  @Hourly ");
	assert_true(c.min == 1);
	assert_int_equal(c.hour, 0xffffff);
	assert_int_equal(c.flags, CRON_DOM_ANY | CRON_DOW_ANY);
	c = parse_ok("@weekly");
	assert_int_equal(c.dow, 1);
	c = parse_ok("@yearly");
	assert_int_equal(c.mon, 2);
	assert_int_equal(c.dom, 2);
	c = parse_ok("0 0 * * */2");
	assert_int_equal(c.dow, 1 | 4 | 16 | 64);
	assert_int_equal(c.flags, CRON_DOM_ANY); /* a step on * restricts */
	parse_ok("0 0 29 2 *");                  /* a leap day exists */
	parse_ok("0\t0\t1\t*\t*");
}

/* Month ends and leap years in UTC. */
static void
test_cron_month_ends_and_leap_years(void **state)
{
	struct tz *z;
	struct cron c;

	(void)state;
	assert_int_equal(tz_utc(&z), 0);
	c = parse_ok("0 0 31 * *");
	assert_true(
	    cron_next(&c, z, utc(2026, 1, 31, 0, 0)) == utc(2026, 3, 31, 0, 0));
	assert_true(cron_next(&c, z, utc(2026, 1, 30, 23, 59)) ==
	    utc(2026, 1, 31, 0, 0));
	c = parse_ok("0 12 29 2 *");
	assert_true(
	    cron_next(&c, z, utc(2025, 3, 1, 0, 0)) == utc(2028, 2, 29, 12, 0));
	/* 2100 is no leap year: from 2096 to 2104 */
	assert_true(
	    cron_next(&c, z, utc(2096, 3, 1, 0, 0)) == utc(2104, 2, 29, 12, 0));
	c = parse_ok("59 23 31 12 *");
	assert_true(cron_next(&c, z, utc(2026, 12, 31, 23, 59)) ==
	    utc(2027, 12, 31, 23, 59));
	c = parse_ok("* * * * *"); /* strictly after, a whole minute */
	assert_true(
	    cron_next(&c, z, utc(2026, 6, 1, 10, 0)) == utc(2026, 6, 1, 10, 1));
	assert_true(cron_next(&c, z, utc(2026, 6, 1, 10, 0) - 1) ==
	    utc(2026, 6, 1, 10, 0));
	assert_true(cron_next(&c, z, utc(2026, 6, 1, 10, 0) + 59999) ==
	    utc(2026, 6, 1, 10, 1));
	c = parse_ok("0 0 1 * *"); /* the last day of a month, then the 1st */
	assert_true(
	    cron_next(&c, z, utc(2024, 2, 29, 12, 0)) == utc(2024, 3, 1, 0, 0));
	tz_free(z);
}

/* Day-of-month and day-of-week: either when both are restricted. */
static void
test_cron_dom_and_dow(void **state)
{
	struct tz *z;
	struct cron c;

	(void)state;
	assert_int_equal(tz_utc(&z), 0);
	/* 2026-02-13 is a Friday; 2026-03-13 too; 2026-01-16 a Friday */
	c = parse_ok("0 0 13 * fri"); /* the 13th, or any Friday */
	assert_true(
	    cron_next(&c, z, utc(2026, 1, 10, 0, 0)) == utc(2026, 1, 13, 0, 0));
	assert_true(
	    cron_next(&c, z, utc(2026, 1, 13, 0, 0)) == utc(2026, 1, 16, 0, 0));
	c = parse_ok("0 0 * * fri"); /* Fridays only */
	assert_true(
	    cron_next(&c, z, utc(2026, 1, 10, 0, 0)) == utc(2026, 1, 16, 0, 0));
	c = parse_ok("0 0 13 * *"); /* the 13th only */
	assert_true(
	    cron_next(&c, z, utc(2026, 1, 13, 0, 0)) == utc(2026, 2, 13, 0, 0));
	c = parse_ok("0 0 */10 * mon"); /* 1, 11, 21, 31, or a Monday */
	assert_true(cron_next(&c, z, utc(2026, 1, 1, 0, 0)) ==
	    utc(2026, 1, 5, 0, 0)); /* Monday the 5th */
	assert_true(
	    cron_next(&c, z, utc(2026, 1, 5, 0, 0)) == utc(2026, 1, 11, 0, 0));
	c = parse_ok("30 8 * 2 sun"); /* Sundays in February */
	assert_true(
	    cron_next(&c, z, utc(2026, 3, 1, 0, 0)) == utc(2027, 2, 7, 8, 30));
	c = parse_ok("0 9-17 * * 1-5"); /* office hours */
	assert_true(cron_next(&c, z, utc(2026, 1, 9, 17, 0)) ==
	    utc(2026, 1, 12, 9, 0)); /* Friday 17:00 -> Monday 9:00 */
	tz_free(z);
}

/* Paris, spring forward on 2026-03-29 (02:00 CET -> 03:00 CEST at 01:00
 * UTC): 02:30 does not exist and fires at 03:00; an hourly schedule
 * fires once for 02:00 and 03:00. */
static void
test_cron_paris_spring_forward(void **state)
{
	struct tz *z = zone("Europe/Paris");
	struct cron c;

	(void)state;
	c = parse_ok("30 2 * * *");
	assert_true(cron_next(&c, z, utc(2026, 3, 28, 12, 0)) ==
	    utc(2026, 3, 29, 1, 0));
	assert_true(cron_next(&c, z, utc(2026, 3, 29, 1, 0)) ==
	    utc(2026, 3, 30, 0, 30));
	c = parse_ok("0 * * * *");
	assert_true(cron_next(&c, z, utc(2026, 3, 28, 23, 30)) ==
	    utc(2026, 3, 29, 0, 0)); /* 01:00 CET */
	assert_true(cron_next(&c, z, utc(2026, 3, 29, 0, 0)) ==
	    utc(2026, 3, 29, 1, 0)); /* 03:00 CEST, for 02:00 and 03:00 */
	assert_true(cron_next(&c, z, utc(2026, 3, 29, 1, 0)) ==
	    utc(2026, 3, 29, 2, 0)); /* 04:00 CEST */
	c = parse_ok("0 9 * * *");
	assert_true(cron_next(&c, z, utc(2026, 3, 28, 12, 0)) ==
	    utc(2026, 3, 29, 7, 0)); /* 09:00 CEST */
	tz_free(z);
}

/* Paris, fall back on 2026-10-25 (03:00 CEST -> 02:00 CET at 01:00
 * UTC): 02:30 happens twice and fires once, in CEST. */
static void
test_cron_paris_fall_back(void **state)
{
	struct tz *z = zone("Europe/Paris");
	struct cron c;

	(void)state;
	c = parse_ok("30 2 * * *");
	assert_true(cron_next(&c, z, utc(2026, 10, 24, 12, 0)) ==
	    utc(2026, 10, 25, 0, 30));
	assert_true(cron_next(&c, z, utc(2026, 10, 25, 0, 30)) ==
	    utc(2026, 10, 26, 1, 30)); /* not 01:30 UTC, the second 02:30 */
	c = parse_ok("0 * * * *");
	assert_true(cron_next(&c, z, utc(2026, 10, 25, 0, 0)) ==
	    utc(2026, 10, 25, 2, 0)); /* 02:00 CEST at 00:00; then 03:00 CET */
	/* after the second 02:30 began: 03:00 CET */
	assert_true(cron_next(&c, z, utc(2026, 10, 25, 1, 30)) ==
	    utc(2026, 10, 25, 2, 0));
	tz_free(z);
}

/* New York, spring forward on 2026-03-08 (02:00 EST -> 03:00 EDT at
 * 07:00 UTC) and fall back on 2026-11-01 (02:00 EDT -> 01:00 EST at
 * 06:00 UTC). */
static void
test_cron_new_york_both_changes(void **state)
{
	struct tz *z = zone("America/New_York");
	struct cron c;

	(void)state;
	c = parse_ok("30 2 * * *");
	assert_true(cron_next(&c, z, utc(2026, 3, 7, 12, 0)) ==
	    utc(2026, 3, 8, 7, 0)); /* 03:00 EDT */
	assert_true(cron_next(&c, z, utc(2026, 3, 8, 7, 0)) ==
	    utc(2026, 3, 9, 6, 30)); /* 02:30 EDT */
	c = parse_ok("59 2 8 3 *");  /* the gap's last minute: 03:00 too */
	assert_true(
	    cron_next(&c, z, utc(2026, 3, 1, 0, 0)) == utc(2026, 3, 8, 7, 0));
	c = parse_ok("30 1 * * *");
	assert_true(cron_next(&c, z, utc(2026, 10, 31, 12, 0)) ==
	    utc(2026, 11, 1, 5, 30)); /* 01:30 EDT */
	assert_true(cron_next(&c, z, utc(2026, 11, 1, 5, 30)) ==
	    utc(2026, 11, 2, 6, 30)); /* 01:30 EST the next day */
	c = parse_ok("0 12 * * *");
	assert_true(cron_next(&c, z, utc(2026, 11, 1, 5, 30)) ==
	    utc(2026, 11, 1, 17, 0)); /* noon EST */
	tz_free(z);
}

/* Offsets from the transitions and, far ahead, the footer's rule; a
 * southern zone; rules alone. */
static void
test_tz_offsets_and_rules(void **state)
{
	struct cron c;
	struct tz *z;

	(void)state;
	z = zone("Europe/Paris");
	assert_int_equal(tz_offset(z, utc(2026, 1, 15, 0, 0) / 1000), 3600);
	assert_int_equal(tz_offset(z, utc(2026, 7, 15, 0, 0) / 1000), 7200);
	assert_int_equal(tz_offset(z, utc(2026, 3, 29, 1, 0) / 1000), 7200);
	assert_int_equal(tz_offset(z, utc(2026, 3, 29, 1, 0) / 1000 - 1), 3600);
	assert_int_equal(tz_offset(z, utc(2150, 7, 1, 0, 0) / 1000), 7200);
	assert_int_equal(tz_offset(z, utc(2150, 12, 1, 0, 0) / 1000), 3600);
	tz_free(z);
	z = zone("Australia/Sydney");
	assert_int_equal(tz_offset(z, utc(2150, 1, 10, 0, 0) / 1000), 39600);
	assert_int_equal(tz_offset(z, utc(2150, 7, 10, 0, 0) / 1000), 36000);
	tz_free(z);
	assert_int_equal(tz_from_rule("EST5EDT", 7, &z), 0);
	assert_int_equal(tz_offset(z, utc(2026, 7, 1, 0, 0) / 1000), -4 * 3600);
	assert_int_equal(tz_offset(z, utc(2026, 1, 1, 0, 0) / 1000), -5 * 3600);
	tz_free(z);
	assert_int_equal(
	    tz_from_rule("<+0330>-3:30", strlen("<+0330>-3:30"), &z), 0);
	assert_int_equal(tz_offset(z, 0), 12600);
	tz_free(z);
	assert_int_equal(tz_from_rule("CET-1CEST,M3.5.0,M10.5.0/3",
	                     strlen("CET-1CEST,M3.5.0,M10.5.0/3"), &z),
	    0);
	assert_int_equal(tz_offset(z, utc(2026, 3, 29, 1, 0) / 1000), 7200);
	assert_int_equal(tz_offset(z, utc(2026, 10, 25, 1, 0) / 1000), 3600);
	assert_int_equal(
	    tz_offset(z, utc(2026, 10, 25, 1, 0) / 1000 - 1), 7200);
	tz_free(z);
	/* A day and more from UTC, as POSIX's hours (0-24) allow: the
	 * offset is the rule's, and 02:30 there is 02:30 UTC a day off. */
	assert_int_equal(tz_from_rule("UTC24", 5, &z), 0);
	assert_int_equal(tz_offset(z, 0), -86400);
	assert_int_equal(cron_parse("30 2 * * *", 10, &c, NULL, 0), 0);
	assert_int_equal(
	    cron_next(&c, z, utc(2026, 1, 1, 0, 0)), utc(2026, 1, 1, 2, 30));
	tz_free(z);
	assert_int_equal(tz_from_rule("<+24>-24", 8, &z), 0);
	assert_int_equal(tz_offset(z, 0), 86400);
	assert_int_equal(
	    cron_next(&c, z, utc(2026, 1, 1, 0, 0)), utc(2026, 1, 1, 2, 30));
	tz_free(z);
	assert_int_equal(tz_from_rule("AAA-24:59:59BBB", 15, &z), 0);
	assert_int_equal(tz_offset(z, utc(2026, 7, 1, 0, 0) / 1000), 93599);
	tz_free(z);
	assert_int_equal(tz_from_rule("UTC25", 5, &z), SLUICE_EINVAL);
	assert_int_equal(tz_from_rule("X1", 2, &z), SLUICE_EINVAL);
	assert_int_equal(
	    tz_from_rule("CET-1CEST,M13.5.0,M10.5.0", 25, &z), SLUICE_EINVAL);
	assert_int_equal(tz_load("UTC", 3, &z), 0);
	assert_int_equal(tz_offset(z, 123456789), 0);
	tz_free(z);
}

/* Names: bad ones refused before any file is opened; unknown ones and
 * directories are not found; a file that is not TZif is corrupt. */
static void
test_tz_names_and_bad_files(void **state)
{
	struct tz *z = NULL;
	static const uint8_t junk[64] = "TZif9 not really";

	(void)state;
	assert_false(tz_name_valid("../etc/passwd", 13));
	assert_false(tz_name_valid("/etc/passwd", 11));
	assert_false(tz_name_valid("Europe/../x", 11));
	assert_false(tz_name_valid("Europe//Paris", 13));
	assert_false(tz_name_valid("Europe/Paris/", 13));
	assert_false(tz_name_valid("Europe/Pa ris", 13));
	assert_false(tz_name_valid("", 0));
	assert_true(tz_name_valid("America/Argentina/Buenos_Aires", 30));
	assert_true(tz_name_valid("Etc/GMT+5", 9));
	assert_int_equal(tz_load("../etc/passwd", 13, &z), SLUICE_EINVAL);
	assert_int_equal(tz_load("Mars/Olympus", 12, &z), SLUICE_ENOTFOUND);
	assert_int_equal(tz_load("Europe", 6, &z), SLUICE_ENOTFOUND);
	assert_int_equal(tz_parse(junk, sizeof(junk), &z), SLUICE_ECORRUPT);
	assert_int_equal(tz_parse("TZif", 4, &z), SLUICE_ECORRUPT);
	assert_null(z);
}

/* The same local civil minute matched and found by both functions. */
static void
test_cron_next_local_matches(void **state)
{
	struct cron c = parse_ok("7 3 * * *");
	int64_t t = tz_days(2026, 5, 5) * 86400;
	int64_t n = cron_next_local(&c, t);

	(void)state;
	assert_true(n == t + 3 * 3600 + 7 * 60);
	assert_true(cron_match(&c, n));
	assert_false(cron_match(&c, n + 60));
}

/* The offsets agree with the C library's for random instants from 1900
 * to 2200 in zones east and west, north and south (the library is asked
 * through TZ here only: this test is one thread). */
static void
test_tz_agrees_with_the_c_library(void **state)
{
	static const char *const names[] = { "Europe/Paris", "America/New_York",
		"Australia/Sydney", "Asia/Kolkata", "America/Sao_Paulo",
		"Pacific/Chatham", "Africa/Casablanca", "Europe/Dublin",
		"America/St_Johns", "Asia/Tehran" };
	uint64_t seed = 12345;
	char *old = getenv("TZ") ? strdup(getenv("TZ")) : NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct tz *z = zone(names[i]);

		setenv("TZ", names[i], 1);
		tzset();
		for (int k = 0; k < 4000; k++) {
			struct tm tm;
			time_t t;

			seed = seed * 6364136223846793005ULL + 1;
			t = (time_t)((int64_t)(seed >> 20) %
			        (int64_t)9467280000 -
			    (int64_t)2208988800); /* 1900 .. 2200 */
			localtime_r(&t, &tm);
			if (tz_offset(z, (int64_t)t) != tm.tm_gmtoff)
				fail_msg("%s at %lld: %d, the library says %ld",
				    names[i], (long long)t,
				    tz_offset(z, (int64_t)t), tm.tm_gmtoff);
		}
		tz_free(z);
	}
	if (old != NULL) {
		setenv("TZ", old, 1);
		free(old);
	} else {
		unsetenv("TZ");
	}
	tzset();
}

/* cron_next in UTC agrees with a walk minute by minute for random
 * expressions. */
static void
test_cron_next_agrees_with_a_walk(void **state)
{
	static const char *const exprs[] = { "*/13 * * * *",
		"5 */5 * * mon,wed", "0 0 29 2 *", "0 12 1-7 * fri",
		"15 3 */3 jan-mar *", "59 23 31 * *", "0 0 13 * fri",
		"0,30 9-17/2 * * 1-5", "@weekly", "7 7 7 7 *" };
	struct tz *z;
	uint64_t seed = 99;

	(void)state;
	assert_int_equal(tz_utc(&z), 0);
	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		struct cron c = parse_ok(exprs[i]);

		for (int k = 0; k < 20; k++) {
			int64_t after, want = -1, got;

			seed = seed * 6364136223846793005ULL + 1;
			after = utc(2024, 1, 1, 0, 0) +
			    (int64_t)((seed >> 20) %
			        ((int64_t)4 * 365 * 86400)) *
			        1000;
			/* the walk: the first minute after `after` matching */
			for (int64_t m = after / 60000 + 1;
			     m < after / 60000 + 1 + 2 * 366 * 1440; m++)
				if (cron_match(&c, m * 60)) {
					want = m * 60000;
					break;
				}
			if (want < 0)
				continue; /* beyond two years: 7 7 7 7 needs one
				           */
			got = cron_next(&c, z, after);
			if (got != want)
				fail_msg("'%s' after %lld: %lld, the walk says "
				         "%lld",
				    exprs[i], (long long)after, (long long)got,
				    (long long)want);
		}
	}
	tz_free(z);
}

/* The slot a local minute L stands for, found the slow way: the first
 * minute whose local time is L, or (a gap) the first whose local time is
 * past L. */
static int64_t
slow_slot(const struct tz *z, int64_t L)
{
	for (int64_t u = L - 15 * 3600; u <= L + 15 * 3600; u += 60)
		if (u + tz_offset(z, u) == L)
			return u;
	for (int64_t u = L - 15 * 3600; u <= L + 15 * 3600; u += 60)
		if (u + tz_offset(z, u) > L)
			return u;
	return -1;
}

/* Over the daylight-saving changes of 2026 in six zones (one that moves
 * by 30 minutes, one with winter time as the "daylight" one, a southern
 * one), cron_next gives the slots the rule names: the local minutes that
 * match, in order, each at its first occurrence or after its gap, each
 * instant once. */
static void
test_cron_dst_agrees_with_the_slow_way(void **state)
{
	static const struct {
		const char *zone;
		int y, m, d; /* a day before a change */
	} days[] = {
		{ "Europe/Paris", 2026, 3, 28 },
		{ "Europe/Paris", 2026, 10, 24 },
		{ "America/New_York", 2026, 3, 7 },
		{ "America/New_York", 2026, 10, 31 },
		{ "Australia/Sydney", 2026, 4, 4 },
		{ "Australia/Sydney", 2026, 10, 3 },
		{ "Australia/Lord_Howe", 2026, 4, 4 },
		{ "Australia/Lord_Howe", 2026, 10, 3 },
		{ "Europe/Dublin", 2026, 3, 28 },
		{ "Pacific/Chatham", 2026, 4, 4 },
	};
	static const char *const exprs[] = { "*/15 * * * *", "30 2 * * *",
		"0 * * * *", "45 1,2,3 * * *", "10,50 0-4 * * *" };

	(void)state;
	for (size_t i = 0; i < sizeof(days) / sizeof(days[0]); i++) {
		struct tz *z = zone(days[i].zone);
		int64_t from = utc(days[i].y, days[i].m, days[i].d, 0, 0);

		for (size_t e = 0; e < sizeof(exprs) / sizeof(exprs[0]); e++) {
			struct cron c = parse_ok(exprs[e]);
			int64_t L =
			    (from / 1000 + tz_offset(z, from / 1000)) / 60 * 60;
			int64_t at = from, want = -1, got;

			/* three days of local minutes, the slow way */
			for (int k = 0; k < 3 * 1440; k++, L += 60) {
				int64_t u;

				if (!cron_match(&c, L))
					continue;
				u = slow_slot(z, L) * 1000;
				if (u <= at || u == want)
					continue;
				want = u;
				got = cron_next(&c, z, at);
				if (got != want)
					fail_msg(
					    "%s '%s' after %lld: %lld, the "
					    "slow way says %lld",
					    days[i].zone, exprs[e],
					    (long long)at, (long long)got,
					    (long long)want);
				at = got;
			}
		}
		tz_free(z);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cron_errors_name_the_field_and_the_value),
		cmocka_unit_test(test_cron_fields_parse_to_their_sets),
		cmocka_unit_test(test_cron_month_ends_and_leap_years),
		cmocka_unit_test(test_cron_dom_and_dow),
		cmocka_unit_test(test_cron_paris_spring_forward),
		cmocka_unit_test(test_cron_paris_fall_back),
		cmocka_unit_test(test_cron_new_york_both_changes),
		cmocka_unit_test(test_tz_offsets_and_rules),
		cmocka_unit_test(test_tz_names_and_bad_files),
		cmocka_unit_test(test_cron_next_local_matches),
		cmocka_unit_test(test_tz_agrees_with_the_c_library),
		cmocka_unit_test(test_cron_next_agrees_with_a_walk),
		cmocka_unit_test(test_cron_dst_agrees_with_the_slow_way),
	};
	return cmocka_run_group_tests_name("cron", tests, NULL, NULL);
}
