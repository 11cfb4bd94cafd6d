/* tz - time zones read from the system's zoneinfo (TZif files, RFC 8536):
 * the offset from UTC in effect at any instant, without the C library's
 * global TZ (setenv + localtime is neither thread-safe nor able to hold
 * two zones at once).
 *
 * A zone is its transitions (the 64-bit data of a version 2+ file) and,
 * for the instants after the last one, the footer's POSIX TZ string
 * ("CET-1CEST,M3.5.0,M10.5.0/3"), evaluated for any year. Version 1 files
 * (32-bit data only) are read too. "UTC" and "Etc/UTC" need no file.
 *
 * tz_parse() is pure (no I/O, fuzzable); tz_load() reads the file of a
 * name under $TZDIR or /usr/share/zoneinfo. Times are unix seconds;
 * offsets are seconds east of UTC (Paris in winter: +3600). */
#ifndef SLUICE_UTIL_TZ_H
#define SLUICE_UTIL_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	TZ_NAME_MAX = 48,         /* bytes of a zone's name */
	TZ_FILE_MAX = 512 * 1024, /* bytes of a TZif file read */
	TZ_TRANS_MAX = 4096,      /* transitions a zone may hold */
};

struct tz;

/* True when `name` may name a zone: 1-TZ_NAME_MAX bytes of
 * [A-Za-z0-9_+-/], no leading '/', no "." or ".." component. */
bool tz_name_valid(const char *name, size_t len);

/* Reads zone `name`. Returns 0 and the zone in *out (free with
 * tz_free); SLUICE_EINVAL for a name that is not valid; SLUICE_ENOTFOUND
 * when no such file exists; SLUICE_ECORRUPT when the file is not a TZif
 * file this reader accepts; SLUICE_ENOMEM; a -errno of the read. */
int tz_load(const char *name, size_t len, struct tz **out);

/* Decodes a TZif file held in memory. Returns 0 and *out, or
 * SLUICE_ECORRUPT / SLUICE_ENOMEM. */
int tz_parse(const void *data, size_t len, struct tz **out);

/* The zone UTC (offset 0 forever). */
int tz_utc(struct tz **out);

/* Frees a zone; accepts NULL. */
void tz_free(struct tz *z);

/* The offset east of UTC in seconds at unix time `t` (seconds). */
int32_t tz_offset(const struct tz *z, int64_t t);

/* Bytes the zone holds in memory (for accounting). */
size_t tz_mem(const struct tz *z);

/* The footer rule alone ("CET-1CEST,M3.5.0,M10.5.0/3"): parses it into
 * a zone with no transitions. Returns 0, SLUICE_EINVAL (not a rule this
 * reader knows) or SLUICE_ENOMEM. For tests, and for zones whose file has
 * no transitions. */
int tz_from_rule(const char *rule, size_t len, struct tz **out);

/* Civil dates (proleptic Gregorian): the day number (days since
 * 1970-01-01) of y-m-d, and back; the days of a month; a division that
 * rounds down. */
int64_t tz_days(int64_t y, unsigned m, unsigned d);
void tz_civil(int64_t days, int64_t *y, unsigned *m, unsigned *d);
unsigned tz_month_days(int64_t y, unsigned m);
int64_t tz_floor_div(int64_t a, int64_t b);

#endif
