/* dur - durations as people type and read them. One parser for every
 * duration sluiced's flags, the sluice tool and the HTTP face's query
 * strings accept, so `--ttr 5s` means the same to all: a number with a
 * unit, ms, s, m, h or d ("250ms", "2s", "1.5m", "1h", "30d"), or 0.
 *
 * A bare number other than 0 is refused: people read "30" as seconds as
 * often as milliseconds (beanstalkd, SQS and Sidekiq think in seconds), so
 * a duration says its unit, and the refusal says which two are meant
 * (dur_hint). Numbers a program sends (the wire protocol's and JSON's
 * millisecond fields) are not read here. Pure. */
#ifndef SLUICE_UTIL_DUR_H
#define SLUICE_UTIL_DUR_H

#include <stddef.h>
#include <stdint.h>

/* What dur_parse() accepts, for messages. */
#define DUR_SYNTAX                                                             \
	"a number with a unit, ms, s, m, h or d (500ms, 2s, 1.5m, 1h, 30d), "  \
	"or 0"

enum {
	DUR_EBARE = -2, /* a bare number other than 0: which unit is meant? */
};

/* Parses a duration. Returns 0 and `*ms`; DUR_EBARE when `s` is a number
 * without a unit and not 0 ("30", "1.5"); -1 when `s` is not a duration
 * (empty, a sign, spaces, an unknown unit, a fraction of a millisecond) or
 * does not fit in 64 bits. `*ms` is written only on success. */
int dur_parse(const char *s, uint64_t *ms);

/* Writes what a person who typed the bare number `s` (DUR_EBARE) should
 * say instead, both readings named: "say 30s or 30000ms (30ms if
 * milliseconds were meant)". Callers put it after "a duration needs a
 * unit: ". */
void dur_hint(char *out, size_t n, const char *s);

/* Writes `ms` for people: "250ms", "1.500s", "3m20s", "2h5m", "3d4h"; "0"
 * for 0. */
void dur_fmt(char *out, size_t n, uint64_t ms);

#endif
