/* bs_proto - beanstalkd's text protocol (1.12), the pure part: splitting
 * a byte stream into commands, checking their arguments as beanstalkd
 * does, and the mapping of beanstalk tube names onto sluice's.
 *
 * Pure: no I/O, no allocation, no logging; fuzzed (tests/fuzz). The
 * face that serves the protocol is beanstalk.c. */
#ifndef SLUICE_SERVER_FACE_BEANSTALK_BS_PROTO_H
#define SLUICE_SERVER_FACE_BEANSTALK_BS_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	BS_LINE_MAX = 224,      /* a command line, "\r\n" included */
	BS_NAME_MAX = 200,      /* a tube name */
	BS_DEFAULT_JOB = 65535, /* beanstalkd's default max-job-size */
};

enum bs_kind {
	BS_NONE = 0,
	BS_PUT,
	BS_USE,
	BS_RESERVE,
	BS_RESERVE_TIMEOUT,
	BS_RESERVE_JOB,
	BS_DELETE,
	BS_RELEASE,
	BS_BURY,
	BS_TOUCH,
	BS_WATCH,
	BS_IGNORE,
	BS_PEEK,
	BS_PEEK_READY,
	BS_PEEK_DELAYED,
	BS_PEEK_BURIED,
	BS_KICK,
	BS_KICK_JOB,
	BS_STATS_JOB,
	BS_STATS_TUBE,
	BS_STATS,
	BS_LIST_TUBES,
	BS_LIST_TUBE_USED,
	BS_LIST_TUBES_WATCHED,
	BS_PAUSE_TUBE,
	BS_QUIT,
	BS_KIND_END_
};

/* What a command line or body was, when it was not a command. */
enum bs_err {
	BS_OK = 0,
	BS_BAD_FORMAT,
	BS_UNKNOWN_COMMAND,
	BS_EXPECTED_CRLF,
	BS_JOB_TOO_BIG,
};

/* One command. Strings borrow from the parsed bytes. */
struct bs_cmd {
	enum bs_kind kind;
	/* What beanstalkd's cmd-* counters count this as, error or not
	 * (BS_NONE: nothing). */
	enum bs_kind count_as;
	uint64_t id;      /* the job commands */
	uint32_t pri;     /* put, release, bury */
	uint32_t delay;   /* put, release, pause-tube: seconds */
	uint32_t ttr;     /* put: seconds, at least 1 */
	int64_t timeout;  /* reserve-with-timeout: seconds; < 0: forever */
	uint64_t bound;   /* kick */
	const char *tube; /* use, watch, ignore, stats-tube, pause-tube */
	size_t tube_len;
	const char *body; /* put */
	size_t body_len;
};

/* The state a connection keeps between calls. Zero it to start. */
struct bs_parser {
	uint64_t skip;  /* body bytes of a too big job still to discard */
	bool skip_line; /* discarding the rest of a too long line */
};

/* Reads the next command from the `len` bytes at `p`. Returns how many
 * bytes it used (0: more are needed; nothing used). When it used some,
 * *err is BS_OK and *out is the command, or *err names the error reply
 * (and out->kind is BS_NONE); *err may also be BS_OK with out->kind ==
 * BS_NONE when the bytes were only discarded. A put needs its whole body
 * in the buffer; `max_job` is max-job-size. */
size_t bs_parse(struct bs_parser *ps, const char *p, size_t len, size_t max_job,
    struct bs_cmd *out, enum bs_err *err);

/* The reply line of an error, "BAD_FORMAT\r\n" and the like. */
const char *bs_err_line(enum bs_err err);

/* The beanstalkd version whose protocol the face speaks, as its `stats`
 * reports it (a quoted YAML string). */
#define BS_VERSION "\"1.12\""

/* beanstalkd's rule for names: 1-200 bytes of letters, digits and
 * -+/;.$_() not starting with '-'. */
bool bs_name_valid(const char *p, size_t len);

/* A beanstalk tube name as a sluice tube name (1-200 bytes of
 * [A-Za-z0-9_.:/-]): the five characters sluice does not allow become
 * two-byte escapes (':' cannot appear in a beanstalk name): + ":p",
 * ; ":s", $ ":d", ( ":o", ) ":c". Writes at most BS_NAME_MAX bytes to
 * `out`; returns the length, or 0 when the escaped name is too long. */
size_t bs_tube_to_sluice(const char *p, size_t len, char *out);

/* The reverse: a sluice tube name as beanstalk clients see it (escapes
 * decoded; any other ':' is kept). Writes at most len bytes; returns the
 * length. */
size_t bs_tube_from_sluice(const char *p, size_t len, char *out);

/* True when beanstalk clients can name the sluice tube `p`: its beanstalk
 * form is a valid beanstalk name that maps back to `p` (a tube such as
 * "x:zz" has none: ':' is not a beanstalk character). */
bool bs_tube_reachable(const char *p, size_t len);

/* Sub-commands' names ("put", "reserve-with-timeout", ...). */
const char *bs_kind_name(enum bs_kind kind);

#endif
