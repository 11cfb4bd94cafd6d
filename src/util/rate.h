/* rate - rates as people type and read them ("100/s", "20/m", "3/h"):
 * a whole count per second, minute or hour, with its unit always written
 * (a bare number is refused, as durations without a unit are where they
 * could be misread). One parser for the CLI and the HTTP face, so
 * `--rate 100/s` and `"rate": "100/s"` mean the same. Pure. */
#ifndef SLUICE_UTIL_RATE_H
#define SLUICE_UTIL_RATE_H

#include <stddef.h>
#include <stdint.h>

/* What rate_parse() accepts, for messages. */
#define RATE_SYNTAX "a whole count per s, m or h (100/s, 20/m, 3/h)"

/* Parses a rate. Returns 0 with `*n` tasks per `*per_ms` (1000, 60000 or
 * 3600000); -1 when `s` is not one (no unit, an unknown unit, a sign, a
 * fraction, spaces, over 2^32 - 1). 0 is parsed: the caller refuses it
 * with its own words. Outputs are written only on success. */
int rate_parse(const char *s, uint32_t *n, uint32_t *per_ms);

/* Writes "100/s", "20/m" or "3/h". */
void rate_fmt(char *out, size_t len, uint32_t n, uint32_t per_ms);

#endif
