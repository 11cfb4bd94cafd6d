/* cron - five-field cron expressions and the next time they name in a
 * time zone. Pure: no clock, no I/O (the zone comes in, util/tz.h).
 *
 * An expression is "M H DOM MON DOW" (minute 0-59, hour 0-23,
 * day-of-month 1-31, month 1-12 or jan-dec, day-of-week 0-7 or sun-sat,
 * 7 being Sunday too), each field a comma list of `*`, a value, a range
 * `a-b`, each with an optional step `/n` (`*` + step: from the field's
 * first value; `a/n`: from a to the field's last value); or one of
 * @yearly (@annually), @monthly, @weekly, @daily (@midnight), @hourly.
 * Names are case-insensitive.
 *
 * Day-of-month and day-of-week: when both are restricted (neither is
 * `*`), a day matches when either matches (cron's usual rule); when one
 * is `*`, the other alone decides. A `*` with a step is restricted.
 * A day-of-month list that no month given ever has (`30 2` with month 2
 * only) is refused: such a schedule would never fire.
 *
 * Slots in a zone: the expression names local times; each becomes the
 * instant that local time happens. A local time that does not exist that
 * day (skipped by a daylight-saving change) fires at the first minute
 * after the gap; one that happens twice fires once, at its first
 * occurrence. */
#ifndef SLUICE_UTIL_CRON_H
#define SLUICE_UTIL_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/tz.h"

enum {
	CRON_EXPR_MAX = 64, /* bytes of an expression */
	CRON_ERR_MAX = 160, /* bytes of an error text, with its NUL */
};

enum cron_flag {
	CRON_DOM_ANY = 0x01, /* day-of-month is `*` */
	CRON_DOW_ANY = 0x02, /* day-of-week is `*` */
};

struct cron {
	uint64_t min;  /* bit m: minute m (0-59) */
	uint32_t hour; /* bit h (0-23) */
	uint32_t dom;  /* bit d (1-31) */
	uint16_t mon;  /* bit m (1-12) */
	uint8_t dow;   /* bit d (0-6, Sunday 0) */
	uint8_t flags; /* enum cron_flag */
};

/* Parses `expr` (len bytes, no NUL needed). Returns 0 and *out, or
 * SLUICE_EINVAL with a text in err (when errlen > 0) naming the field and
 * the value: "hour field: 25 is out of 0-23". */
int cron_parse(
    const char *expr, size_t len, struct cron *out, char *err, size_t errlen);

/* Whether the local civil minute `civil` (seconds since 1970-01-01 as if
 * local time were UTC, a multiple of 60) matches. */
bool cron_match(const struct cron *c, int64_t civil);

/* The first local civil minute strictly after `civil` (seconds) that
 * matches, or -1 when none comes within 50 years. */
int64_t cron_next_local(const struct cron *c, int64_t civil);

/* The first slot strictly after `after` (unix ms), in unix ms (a whole
 * second; a whole minute of local time), the zone's daylight-saving rule
 * applied as above; -1 when none comes within 50 years. */
int64_t cron_next(const struct cron *c, const struct tz *z, int64_t after);

#endif
