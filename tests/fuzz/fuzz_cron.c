/* fuzz_cron - what a schedule reads, on arbitrary bytes: the cron
 * expression of a client's sched_set, and the zone it names (a TZif file
 * of the system's zoneinfo, or a footer's POSIX rule).
 *
 * The first byte picks the input ('c': an expression; 'r': a rule; any
 * other: a TZif file), the rest is it.
 *
 * An expression that parses has every field's bits within the field's
 * range and at least one bit in each; its next slot from a few instants,
 * when there is one, is later, a whole minute, and matches; one that does
 * not parse says why in a NUL-terminated text that fits. A rule or a file
 * that parses gives offsets within the range the parser holds them to at
 * instants far apart (RFC 8536's, -25 h to +26 h: a file's types are
 * checked against it; a rule's hours go up to 24 as POSIX allows, its
 * daylight time an hour more), and its next slot of a matching expression
 * is later than the instant asked for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/cron.h"
#include "util/tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int cond)
{
	if (!cond)
		abort();
}

static const int64_t instants[] = { 0, 951782400, 1711846800, 1729990800,
	4102444800 };
enum { NINSTANTS = sizeof(instants) / sizeof(instants[0]) };

static void
expression(const char *p, size_t len)
{
	struct cron c;
	char err[CRON_ERR_MAX];

	memset(err, 'x', sizeof(err));
	if (cron_parse(p, len, &c, err, sizeof(err)) != 0) {
		check(memchr(err, '\0', sizeof(err)) != NULL && err[0] != '\0');
		return;
	}
	check(c.min != 0 && (c.min >> 60) == 0);
	check(c.hour != 0 && (c.hour >> 24) == 0);
	check(c.dom != 0 && (c.dom & 1) == 0);
	check(c.mon != 0 && (c.mon & 1) == 0 && (c.mon >> 13) == 0);
	check(c.dow != 0 && (c.dow >> 7) == 0);
	for (int i = 0; i < NINSTANTS; i++) {
		int64_t t = instants[i] - instants[i] % 60;
		int64_t n = cron_next_local(&c, t);

		check(n == -1 || (n > t && n % 60 == 0 && cron_match(&c, n)));
	}
}

static void
zone(struct tz *z)
{
	struct cron c;

	for (int i = 0; i < NINSTANTS; i++) {
		int32_t off = tz_offset(z, instants[i]);

		check(off >= -25 * 3600 && off <= 26 * 3600);
	}
	check(cron_parse("30 2 * * *", 10, &c, NULL, 0) == 0);
	for (int i = 0; i < NINSTANTS; i++) {
		int64_t ms = instants[i] * 1000;
		int64_t n = cron_next(&c, z, ms);

		check(n == -1 || (n > ms && n % 1000 == 0));
	}
	check(tz_mem(z) > 0);
	tz_free(z);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tz *z = NULL;

	if (size == 0)
		return 0;
	if (data[0] == 'c') {
		expression((const char *)data + 1, size - 1);
	} else if (data[0] == 'r') {
		if (tz_from_rule((const char *)data + 1, size - 1, &z) == 0)
			zone(z);
	} else if (tz_parse(data + 1, size - 1, &z) == 0) {
		zone(z);
	}
	return 0;
}
