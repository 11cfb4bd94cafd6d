/* bench_bsreply - one reply of beanstalkd's text protocol, as the benchmark
 * sees it: a line ended by CRLF, and for RESERVED and OK a body of the
 * announced size, itself ended by CRLF. Pure: no I/O; the reply borrows
 * from the caller's bytes. */
#ifndef SLUICE_BENCH_BSREPLY_H
#define SLUICE_BENCH_BSREPLY_H

#include <stddef.h>
#include <stdint.h>

enum bench_bsreply_kind {
	BS_INSERTED = 1, /* put: INSERTED <id> */
	BS_BURIED,       /* put: BURIED <id> (the server ran out of memory) */
	BS_RESERVED,     /* RESERVED <id> <bytes>, then the job */
	BS_TIMED_OUT,    /* reserve-with-timeout: nothing ready */
	BS_DEADLINE_SOON,
	BS_DELETED,
	BS_NOT_FOUND,
	BS_USING,    /* use: USING <tube> */
	BS_WATCHING, /* watch, ignore: WATCHING <count> */
	BS_OK,       /* stats*: OK <bytes>, then YAML */
	BS_OTHER,    /* anything else: an error such as OUT_OF_MEMORY */
};

enum {
	BENCH_BSREPLY_LINE_MAX = 1024, /* longer without CRLF: malformed */
};

struct bench_bsreply {
	enum bench_bsreply_kind kind;
	uint64_t id;      /* INSERTED, BURIED, RESERVED; WATCHING's count */
	const char *body; /* RESERVED, OK: the bytes (without the CRLF) */
	size_t body_len;
	const char *line; /* the first line, without its CRLF */
	size_t line_len;
};

/* Parses the reply at the start of `len` bytes at `p`. Returns the bytes
 * it spans (> 0) and fills `*out`; 0 when more bytes are needed; -1 when
 * the bytes cannot be a reply (a line too long, a bad number, a body not
 * ended by CRLF). `*out` is written only when the result is > 0. */
long bench_bsreply_parse(const char *p, size_t len, struct bench_bsreply *out);

/* The number after `key:` in a stats YAML body ("current-jobs-ready"), or
 * -1 when the key is missing. */
long long bench_bsreply_stat(const char *body, size_t len, const char *key);

#endif
