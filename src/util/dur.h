/* dur - durations as people type and read them. One parser for every
 * duration sluiced's flags and the sluice tool accept, so `--ttr 5s` means
 * the same to both: milliseconds ("250"), or a number with a unit, ms, s,
 * m, h or d ("250ms", "2s", "1.5m", "1h", "30d"). Pure. */
#ifndef SLUICE_UTIL_DUR_H
#define SLUICE_UTIL_DUR_H

#include <stddef.h>
#include <stdint.h>

/* What dur_parse() accepts, for messages. */
#define DUR_SYNTAX                                                             \
	"milliseconds, or a number with ms, s, m, h or d (500, 2s, 1.5m, 1h, " \
	"30d)"

/* Parses a duration. Returns 0 and `*ms`; -1 when `s` is not a duration
 * (empty, a sign, spaces, an unknown unit, a fraction of a millisecond) or
 * does not fit in 64 bits. `*ms` is written only on success. */
int dur_parse(const char *s, uint64_t *ms);

/* Writes `ms` for people: "250ms", "1.500s", "3m20s", "2h5m", "3d4h"; "0"
 * for 0. */
void dur_fmt(char *out, size_t n, uint64_t ms);

#endif
