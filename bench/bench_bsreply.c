/* bench_bsreply - see bench_bsreply.h. Replies are read by prefix; only
 * the ones the benchmark sends commands for are named, every other line
 * is BS_OTHER and its text is kept for the error message. */
#include <stdbool.h>
#include <string.h>

#include "bench_bsreply.h"

/* A decimal u64 at the start of [p, end): digits only. Sets *next past it. */
static bool
parse_u64(const char *p, const char *end, uint64_t *v, const char **next)
{
	uint64_t x = 0;
	const char *q = p;

	while (q < end && *q >= '0' && *q <= '9') {
		unsigned d = (unsigned)(*q - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
		q++;
	}
	if (q == p)
		return false;
	*v = x;
	*next = q;
	return true;
}

/* True when the line is `word` alone, or `word` and a space. */
static bool
starts(const char *line, size_t n, const char *word, bool arg)
{
	size_t w = strlen(word);

	if (!arg)
		return n == w && memcmp(line, word, w) == 0;
	return n > w + 1 && memcmp(line, word, w) == 0 && line[w] == ' ';
}

long
bench_bsreply_parse(const char *p, size_t len, struct bench_bsreply *out)
{
	const char *crlf, *end, *q;
	struct bench_bsreply r = { 0 };
	size_t n, total;
	uint64_t bytes;

	crlf = NULL;
	for (size_t i = 0; i + 1 < len && i < BENCH_BSREPLY_LINE_MAX; i++) {
		if (p[i] == '\r' && p[i + 1] == '\n') {
			crlf = p + i;
			break;
		}
	}
	if (crlf == NULL)
		return len >= BENCH_BSREPLY_LINE_MAX ? -1 : 0;
	n = (size_t)(crlf - p);
	end = crlf;
	r.line = p;
	r.line_len = n;
	total = n + 2;

	if (starts(p, n, "INSERTED", true) || starts(p, n, "BURIED", true)) {
		r.kind = p[0] == 'I' ? BS_INSERTED : BS_BURIED;
		if (!parse_u64(p + (p[0] == 'I' ? 9 : 7), end, &r.id, &q) ||
		    q != end)
			return -1;
	} else if (starts(p, n, "RESERVED", true) || starts(p, n, "OK", true)) {
		if (p[0] == 'R') {
			r.kind = BS_RESERVED;
			if (!parse_u64(p + 9, end, &r.id, &q) || q == end ||
			    *q != ' ')
				return -1;
			q++;
		} else {
			r.kind = BS_OK;
			q = p + 3;
		}
		if (!parse_u64(q, end, &bytes, &q) || q != end ||
		    bytes > (1u << 30))
			return -1;
		if (len - total < bytes + 2)
			return 0;
		r.body = p + total;
		r.body_len = (size_t)bytes;
		if (r.body[bytes] != '\r' || r.body[bytes + 1] != '\n')
			return -1;
		total += (size_t)bytes + 2;
	} else if (starts(p, n, "WATCHING", true)) {
		r.kind = BS_WATCHING;
		if (!parse_u64(p + 9, end, &r.id, &q) || q != end)
			return -1;
	} else if (starts(p, n, "USING", true)) {
		r.kind = BS_USING;
	} else if (starts(p, n, "TIMED_OUT", false)) {
		r.kind = BS_TIMED_OUT;
	} else if (starts(p, n, "DEADLINE_SOON", false)) {
		r.kind = BS_DEADLINE_SOON;
	} else if (starts(p, n, "DELETED", false)) {
		r.kind = BS_DELETED;
	} else if (starts(p, n, "NOT_FOUND", false)) {
		r.kind = BS_NOT_FOUND;
	} else {
		r.kind = BS_OTHER;
	}
	*out = r;
	return (long)total;
}

long long
bench_bsreply_stat(const char *body, size_t len, const char *key)
{
	size_t k = strlen(key);
	const char *p = body, *end = body + len, *q;
	uint64_t v;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		/* "key: value", the key at the start of the line */
		if ((size_t)(eol - p) > k + 1 && memcmp(p, key, k) == 0 &&
		    p[k] == ':') {
			q = p + k + 1;
			while (q < eol && *q == ' ')
				q++;
			if (parse_u64(q, eol, &v, &q) && v <= INT64_MAX)
				return (long long)v;
			return -1;
		}
		p = nl ? nl + 1 : end;
	}
	return -1;
}
