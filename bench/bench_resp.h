/* bench_resp - the little of Redis's protocol (RESP2) the benchmark needs:
 * a command as an array of bulk strings, and a reply read back.
 *
 *   command   *<argc>\r\n then per argument $<len>\r\n<bytes>\r\n
 *   reply     +<line>\r\n          simple string (OK)
 *             -<line>\r\n          error (ERR ..., BUSYGROUP ...)
 *             :<integer>\r\n       integer (XLEN, XACK, XDEL)
 *             $<len>\r\n<bytes>\r\n, $-1\r\n      bulk string, or nil
 *             *<n>\r\n<n replies>, *-1\r\n         array, or nil
 *
 * Pure: no I/O; replies borrow from the caller's bytes. */
#ifndef SLUICE_BENCH_RESP_H
#define SLUICE_BENCH_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	BENCH_RESP_LINE_MAX = 1024, /* a header or simple line, CRLF included */
	BENCH_RESP_DEPTH_MAX = 8,   /* arrays nested deeper: malformed */
	BENCH_RESP_BULK_MAX = 512 * 1024 * 1024, /* Redis's own limit */
};

enum bench_resp_type {
	BENCH_RESP_SIMPLE = '+',
	BENCH_RESP_ERROR = '-',
	BENCH_RESP_INT = ':',
	BENCH_RESP_BULK = '$',
	BENCH_RESP_ARRAY = '*',
};

/* One reply (or, from bench_resp_head, one element's header). */
struct bench_resp {
	enum bench_resp_type type;
	bool nil;          /* $-1 or *-1 */
	long long n;       /* INT: the value; ARRAY: the element count */
	const char *str;   /* SIMPLE, ERROR: the line; BULK: the bytes */
	size_t len;        /* of str */
	const char *elems; /* ARRAY: where its first element starts */
};

/* Writes the command of `argc` arguments (argv[i], lens[i] bytes each) into
 * `out` when it fits in `cap` bytes. Returns the command's length either
 * way (as snprintf does), so a caller may size a buffer first. */
size_t bench_resp_cmd(char *out, size_t cap, unsigned argc,
    const char *const *argv, const size_t *lens);

/* Parses the whole reply at the start of `len` bytes at `p`, nested arrays
 * included. Returns the bytes it spans (> 0) and fills `*out` with the
 * outer reply; 0 when more bytes are needed; -1 when the bytes cannot be a
 * reply. `*out` is written only when the result is > 0. */
long bench_resp_parse(const char *p, size_t len, struct bench_resp *out);

/* Parses only the header of the element at `p` (for an array: its count,
 * not its elements). Returns the bytes of the header (for a bulk string,
 * with its bytes and CRLF), 0 for more, -1 when malformed. */
long bench_resp_head(const char *p, size_t len, struct bench_resp *out);

/* The first entry of an XREADGROUP reply of one stream (the whole reply,
 * as bench_resp_parse spanned it, at `p`):
 *   *1 [ *2 [ $stream, *k [ *2 [ $id, *2m [ $field, $value, ... ] ] ] ] ]
 * Returns 1 with `*id`, `*id_len` (borrowed) and `*value_len` (the length
 * of the value of the field `field`); 0 when the reply holds no entry
 * (nil, or an empty list); -1 when it has another shape or no such
 * field. */
int bench_resp_stream_entry(const char *p, size_t len, const char *field,
    const char **id, size_t *id_len, size_t *value_len);

#endif
