/* http_query - the query string of a request of the HTTP face (the
 * declarations and their contracts are in http_query.h).
 *
 * A query is read where it stands, in the request's URI: a value is
 * found by its name (the first `name=` between '?' or '&' and the next
 * '&'), percent-decoded ('+' as a space) into the caller's buffer, and
 * refused when it does not fit or decodes to a NUL byte. Nothing is
 * allocated.
 *
 * The face's own pages (http_pages.c) read a few values and answer a
 * fixed text when one is wrong. The task API (http_api*.c) reads many:
 * struct http_query notes the first malformed one ("NAME: WHAT"), the
 * request goes on reading the others, and its 400 names that first
 * one. A put and an update read the same task options
 * (http_query_opts), each judging how delay and run_at combine. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/face/http/http_query.h"
#include "util/dur.h"

int
http_query_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool
http_unescape(const char *p, size_t len, bool plus, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *q = p, *end = p + len; q < end; q++) {
		int c = (unsigned char)*q;

		if (c == '+' && plus) {
			c = ' ';
		} else if (c == '%' && end - q >= 3 &&
		    http_query_hexval(q[1]) >= 0 &&
		    http_query_hexval(q[2]) >= 0) {
			c = http_query_hexval(q[1]) * 16 +
			    http_query_hexval(q[2]);
			q += 2;
		}
		if (c == 0 || n + 1 >= cap)
			return false;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return true;
}

bool
http_query_get(const char *uri, const char *name, char *out, size_t cap)
{
	const char *p = strchr(uri, '?');
	size_t nlen = strlen(name);

	if (p == NULL)
		return false;
	for (p++; *p != '\0';) {
		const char *end = p + strcspn(p, "&");

		if ((size_t)(end - p) > nlen && strncmp(p, name, nlen) == 0 &&
		    p[nlen] == '=')
			return http_unescape(p + nlen + 1,
			    (size_t)(end - p - nlen - 1), true, out, cap);
		p = *end ? end + 1 : end;
	}
	return false;
}

bool
http_query_get_u64(const char *uri, const char *name, uint64_t *out)
{
	char v[32], *end;

	if (!http_query_get(uri, name, v, sizeof(v)) || v[0] < '0' ||
	    v[0] > '9')
		return false;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno == 0 && *end == '\0';
}

bool
http_query_has(const char *uri, const char *name)
{
	const char *p = strchr(uri, '?');
	size_t n = strlen(name);

	for (; p != NULL; p = strchr(p + 1, '&'))
		if (strncmp(p + 1, name, n) == 0 && p[1 + n] == '=')
			return true;
	return false;
}

/* ---- typed parameters, the first bad one noted ------------------------ */

void
http_query_bad(struct http_query *q, const char *name, const char *what)
{
	if (q->err[0] == '\0')
		snprintf(q->err, sizeof(q->err), "%s: %s", name, what);
}

bool
http_query_str(struct http_query *q, const char *name, char *out, size_t cap)
{
	if (http_query_get(q->uri, name, out, cap))
		return true;
	if (http_query_has(q->uri, name))
		http_query_bad(q, name, "too long, or holds a NUL byte");
	return false;
}

bool
http_query_u64(
    struct http_query *q, const char *name, uint64_t max, uint64_t *out)
{
	char v[32], *end;
	unsigned long long x;

	if (!http_query_str(q, name, v, sizeof(v)))
		return false;
	x = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
	if (v[0] < '0' || v[0] > '9' || *end != '\0' || x > max) {
		char what[64];

		snprintf(what, sizeof(what), "a whole number 0..%" PRIu64, max);
		http_query_bad(q, name, what);
		return false;
	}
	*out = x;
	return true;
}

bool
http_query_dur(struct http_query *q, const char *name, uint64_t *out)
{
	char v[32], what[160];
	int rc;

	if (!http_query_str(q, name, v, sizeof(v)))
		return false;
	if ((rc = dur_parse(v, out)) == DUR_EBARE) {
		char hint[112];

		dur_hint(hint, sizeof(hint), v);
		snprintf(what, sizeof(what), "%s needs a unit: %s", v, hint);
		http_query_bad(q, name, what);
		return false;
	}
	if (rc != 0) {
		http_query_bad(q, name, DUR_SYNTAX);
		return false;
	}
	return true;
}

bool
http_query_flag(struct http_query *q, const char *name)
{
	char v[8];

	if (!http_query_str(q, name, v, sizeof(v)))
		return false;
	if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 ||
	    strcmp(v, "yes") == 0 || v[0] == '\0')
		return true;
	if (strcmp(v, "0") != 0 && strcmp(v, "false") != 0 &&
	    strcmp(v, "no") != 0)
		http_query_bad(q, name, "1 or 0 (true or false)");
	return false;
}

/* ---- the task options ------------------------------------------------- */

void
http_query_opts(struct http_query *q, bool now, struct http_query_opts *o)
{
	char at[32];
	uint64_t v;

	*o = (struct http_query_opts) { 0 };
	if ((o->set_priority = http_query_u64(q, "priority", UINT32_MAX, &v)))
		o->priority = (uint32_t)v;
	o->set_delay = http_query_dur(q, "delay", &o->delay);
	if (http_query_str(q, "run_at", at, sizeof(at))) {
		if (now && strcmp(at, "now") == 0)
			o->run_now = true;
		else
			o->set_run_at =
			    http_query_u64(q, "run_at", UINT64_MAX, &o->run_at);
	}
	o->set_ttr = http_query_dur(q, "ttr", &o->ttr);
	if ((o->set_max_attempts =
	            http_query_u64(q, "max_attempts", UINT32_MAX, &v)))
		o->max_attempts = (uint32_t)v;
}
