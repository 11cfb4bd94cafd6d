/* http_query - a request's query string as the HTTP face reads it:
 * percent-decoding, a named value, the task API's typed parameters (each
 * malformed one noted, the first kept for the 400 that answers it), and
 * the task options a put sets and an update changes. Pure: no I/O, no
 * nng; fuzzed (tests/fuzz/fuzz_http_query.c). */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_QUERY_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	HTTP_QUERY_ERR_MAX = 256, /* the first bad parameter's text */
};

/* The value of the hex digit `c` (0-9, a-f, A-F), or -1 (a chunk's size
 * is written in them too, http_body.c). */
int http_query_hexval(int c);

/* Percent-decodes `len` bytes at `p` into out (NUL-ended); `plus`: a `+`
 * is a space (a query, not a path). False when it does not fit or holds
 * a NUL byte. */
bool http_unescape(const char *p, size_t len, bool plus, char *out, size_t cap);

/* The decoded value of `name` in the query of `uri` into out
 * (NUL-ended): true when present and it fits (no NUL byte inside). */
bool http_query_get(const char *uri, const char *name, char *out, size_t cap);

/* The value of `name` as a decimal number (digits only, within 64 bits):
 * true and `*out` when it is one. */
bool http_query_get_u64(const char *uri, const char *name, uint64_t *out);

/* Whether the query of `uri` names `name` at all (with a value that may
 * not decode). */
bool http_query_has(const char *uri, const char *name);

/* A query read parameter by parameter, with the first bad one noted. */
struct http_query {
	const char *uri;              /* path and query, as sent */
	char err[HTTP_QUERY_ERR_MAX]; /* "NAME: WHAT"; empty while all good */
};

/* Notes a bad parameter ("NAME: WHAT") unless one is noted already. */
void http_query_bad(struct http_query *q, const char *name, const char *what);

/* The typed parameters. Each returns whether `name` is present and good
 * (`*out` written then only); a malformed one is noted (and counts as
 * absent). */
bool http_query_str(
    struct http_query *q, const char *name, char *out, size_t cap);
/* A decimal number 0..max. */
bool http_query_u64(
    struct http_query *q, const char *name, uint64_t max, uint64_t *out);
/* A duration (util/dur.h): ms, or "10s", "1.5h", ... */
bool http_query_dur(struct http_query *q, const char *name, uint64_t *out);
/* 1/true/yes/empty is true; 0/false/no, absent or malformed is false. */
bool http_query_flag(struct http_query *q, const char *name);

/* The options of a task a put sets and an update changes, as given: each
 * with whether it is (its value written only then). */
struct http_query_opts {
	bool set_priority, set_delay, set_run_at, set_ttr, set_max_attempts;
	bool run_now; /* run_at=now (an update's only) */
	uint32_t priority;
	uint64_t delay;  /* ms */
	uint64_t run_at; /* unix ms */
	uint64_t ttr;    /* ms */
	uint32_t max_attempts;
};

/* Reads priority, delay, run_at, ttr and max_attempts from `q`, in that
 * order, into `o` (zeroed first); with `now`, run_at may be "now". Each
 * caller judges how delay and run_at go together. */
void http_query_opts(struct http_query *q, bool now, struct http_query_opts *o);

#endif
