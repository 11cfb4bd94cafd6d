/* bench_resp - see bench_resp.h. A reply is read in two steps: the header
 * of one element (bench_resp_head), and around it the walk over nested
 * arrays (bench_resp_parse spans a whole reply, bench_resp_stream_entry
 * walks the one shape XREADGROUP answers with). Every length is checked
 * against the bytes there before it is used. */
#include <stdio.h>
#include <string.h>

#include "bench_resp.h"

/* Appends `k` bytes at `src` to out[*n..] when they fit in `cap`; counts
 * them either way. */
static void
put(char *out, size_t cap, size_t *n, const void *src, size_t k)
{
	if (*n + k <= cap)
		memcpy(out + *n, src, k);
	*n += k;
}

size_t
bench_resp_cmd(char *out, size_t cap, unsigned argc, const char *const *argv,
    const size_t *lens)
{
	char hdr[32];
	size_t n = 0;
	int h;

	h = snprintf(hdr, sizeof(hdr), "*%u\r\n", argc);
	put(out, cap, &n, hdr, (size_t)h);
	for (unsigned i = 0; i < argc; i++) {
		h = snprintf(hdr, sizeof(hdr), "$%zu\r\n", lens[i]);
		put(out, cap, &n, hdr, (size_t)h);
		put(out, cap, &n, argv[i], lens[i]);
		put(out, cap, &n, "\r\n", 2);
	}
	return n;
}

/* A whole line of [p, end) as a signed integer: an optional '-', then
 * 1-19 digits. */
static bool
parse_ll(const char *p, const char *end, long long *v)
{
	bool neg = false;
	long long x = 0;

	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (p == end || end - p > 18)
		return false;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return false;
		x = x * 10 + (*p - '0');
	}
	*v = neg ? -x : x;
	return true;
}

long
bench_resp_head(const char *p, size_t len, struct bench_resp *out)
{
	struct bench_resp r = { 0 };
	const char *crlf = NULL;
	size_t hdr, total;

	for (size_t i = 0; i + 1 < len && i < BENCH_RESP_LINE_MAX; i++) {
		if (p[i] == '\r' && p[i + 1] == '\n') {
			crlf = p + i;
			break;
		}
	}
	if (crlf == NULL)
		return len >= BENCH_RESP_LINE_MAX ? -1 : 0;
	hdr = (size_t)(crlf - p) + 2;
	r.type = (enum bench_resp_type)p[0];
	switch (p[0]) {
	case BENCH_RESP_SIMPLE:
	case BENCH_RESP_ERROR:
		r.str = p + 1;
		r.len = (size_t)(crlf - p) - 1;
		break;
	case BENCH_RESP_INT:
		if (!parse_ll(p + 1, crlf, &r.n))
			return -1;
		break;
	case BENCH_RESP_BULK:
		if (!parse_ll(p + 1, crlf, &r.n) || r.n < -1 ||
		    r.n > BENCH_RESP_BULK_MAX)
			return -1;
		if (r.n == -1) {
			r.nil = true;
			r.n = 0;
			break;
		}
		total = hdr + (size_t)r.n + 2;
		if (len < total)
			return 0;
		if (p[total - 2] != '\r' || p[total - 1] != '\n')
			return -1;
		r.str = p + hdr;
		r.len = (size_t)r.n;
		hdr = total;
		break;
	case BENCH_RESP_ARRAY:
		if (!parse_ll(p + 1, crlf, &r.n) || r.n < -1)
			return -1;
		if (r.n == -1) {
			r.nil = true;
			r.n = 0;
		}
		r.elems = p + hdr;
		break;
	default:
		return -1;
	}
	*out = r;
	return (long)hdr;
}

static long
span(const char *p, size_t len, int depth, struct bench_resp *out)
{
	struct bench_resp r;
	long h = bench_resp_head(p, len, &r);
	size_t off;

	if (h <= 0)
		return h;
	off = (size_t)h;
	if (r.type == BENCH_RESP_ARRAY && r.n > 0) {
		if (depth >= BENCH_RESP_DEPTH_MAX)
			return -1;
		for (long long i = 0; i < r.n; i++) {
			long k = span(p + off, len - off, depth + 1, NULL);
			if (k <= 0)
				return k;
			off += (size_t)k;
		}
	}
	if (out != NULL)
		*out = r;
	return (long)off;
}

long
bench_resp_parse(const char *p, size_t len, struct bench_resp *out)
{
	return span(p, len, 0, out);
}

/* The next element's header at *p, moving *p past it; false when there is
 * none or it is not of `type`. */
static bool
next(const char **p, const char *end, enum bench_resp_type type,
    struct bench_resp *r)
{
	long h = bench_resp_head(*p, (size_t)(end - *p), r);

	if (h <= 0 || r->type != type)
		return false;
	*p += h;
	return true;
}

int
bench_resp_stream_entry(const char *p, size_t len, const char *field,
    const char **id, size_t *id_len, size_t *value_len)
{
	const char *q = p, *end = p + len;
	size_t flen = strlen(field);
	struct bench_resp r, eid, f, v;

	if (!next(&q, end, BENCH_RESP_ARRAY, &r))
		return len > 0 && p[0] == BENCH_RESP_BULK && len >= 5 &&
		        memcmp(p, "$-1\r\n", 5) == 0
		    ? 0
		    : -1;
	if (r.nil || r.n == 0)
		return 0;
	/* one stream: [name, entries] */
	if (r.n != 1 || !next(&q, end, BENCH_RESP_ARRAY, &r) || r.n != 2 ||
	    !next(&q, end, BENCH_RESP_BULK, &r) ||
	    !next(&q, end, BENCH_RESP_ARRAY, &r))
		return -1;
	if (r.nil || r.n == 0)
		return 0;
	/* its first entry: [id, [field, value, ...]] */
	if (!next(&q, end, BENCH_RESP_ARRAY, &r) || r.n != 2 ||
	    !next(&q, end, BENCH_RESP_BULK, &eid) || eid.nil ||
	    !next(&q, end, BENCH_RESP_ARRAY, &r) || r.n % 2 != 0)
		return -1;
	for (long long i = 0; i < r.n; i += 2) {
		if (!next(&q, end, BENCH_RESP_BULK, &f) ||
		    !next(&q, end, BENCH_RESP_BULK, &v))
			return -1;
		if (!f.nil && f.len == flen &&
		    memcmp(f.str, field, flen) == 0) {
			*id = eid.str;
			*id_len = eid.len;
			*value_len = v.len;
			return 1;
		}
	}
	return -1;
}
