/* cron - the parser of five-field expressions and the search of the next
 * slot; cron.h holds the rules.
 *
 * A parsed expression is five bit sets. The next local time is found a
 * field at a time, coarsest first (month, day, hour, minute): a field
 * that does not match moves to its next matching value and resets the
 * finer ones, so a search crosses at most a few hundred steps even for a
 * February 29.
 *
 * From local to UTC (cron_next): every local minute L that matches is
 * mapped to an instant u with u + offset(u) = L. Two offsets are
 * candidates, those a day before and a day after L (a zone changes its
 * offset at most once or twice a day); one that holds at its own instant
 * gives u. Both hold: L happens twice, the earlier instant wins. Neither:
 * L falls in a gap, and the slot is the first minute after it (the
 * instant where local time first passes L, found by bisection). The
 * mapping never goes back as L grows, so the first L whose instant is
 * after `after` gives the answer; the search starts from after's local
 * time under the smaller of the nearby offsets. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sluice.h"
#include "util/cron.h"

enum { F_MIN, F_HOUR, F_DOM, F_MON, F_DOW, F_N };

static const struct field_def {
	const char *name;
	int lo, hi;
	const char *const *names; /* index 0 names the value lo */
	const char *what;         /* "a month (1-12 or jan-dec)" */
} fields[F_N] = {
	[F_MIN] = { "minute", 0, 59, NULL, "a number" },
	[F_HOUR] = { "hour", 0, 23, NULL, "a number" },
	[F_DOM] = { "day-of-month", 1, 31, NULL, "a number" },
	[F_MON] = { "month", 1, 12,
	    (const char *const[]) { "jan", "feb", "mar", "apr", "may", "jun",
	        "jul", "aug", "sep", "oct", "nov", "dec", NULL },
	    "a month (1-12 or jan-dec)" },
	[F_DOW] = { "day-of-week", 0, 7,
	    (const char *const[]) {
	        "sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL },
	    "a day of the week (0-7 or sun-sat)" },
};

static const struct {
	const char *name;
	const char *expr;
} macros[] = {
	{ "@yearly", "0 0 1 1 *" },
	{ "@annually", "0 0 1 1 *" },
	{ "@monthly", "0 0 1 * *" },
	{ "@weekly", "0 0 * * 0" },
	{ "@daily", "0 0 * * *" },
	{ "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return SLUICE_EINVAL;
}

/* One value of field f: a number or a name. -1 and an error when
 * neither, or out of range. */
static int
parse_value(int f, const char *p, size_t n, int *out, char *err, size_t errlen)
{
	const struct field_def *fd = &fields[f];
	long v = 0;
	size_t i;

	if (n == 0)
		return fail(
		    err, errlen, "%s field: a value is missing", fd->name);
	for (i = 0; i < n && p[i] >= '0' && p[i] <= '9'; i++)
		if (v < 1000000)
			v = v * 10 + (p[i] - '0');
	if (i == n) {
		if (v < fd->lo || v > fd->hi)
			return fail(err, errlen,
			    "%s field: %.*s is out of %d-%d", fd->name, (int)n,
			    p, fd->lo, fd->hi);
		*out = (int)v;
		return 0;
	}
	if (fd->names != NULL && n == 3)
		for (i = 0; fd->names[i] != NULL; i++)
			if (strncasecmp(p, fd->names[i], 3) == 0) {
				*out = fd->lo + (int)i;
				return 0;
			}
	return fail(err, errlen, "%s field: '%.*s' is not %s", fd->name,
	    (int)(n > 24 ? 24 : n), p, fd->what);
}

/* One field's text [p, p + n) into *bits. */
static int
parse_field(
    int f, const char *p, size_t n, uint64_t *bits, char *err, size_t errlen)
{
	const struct field_def *fd = &fields[f];
	const char *end = p + n;

	*bits = 0;
	while (p <= end) {
		const char *e = memchr(p, ',', (size_t)(end - p));
		const char *slash, *dash;
		int a, b, step = 1, rc;
		bool star = false, open_end = false;

		if (e == NULL)
			e = end;
		if (e == p)
			return fail(err, errlen,
			    "%s field: an empty element in '%.*s'", fd->name,
			    (int)n, end - n);
		slash = memchr(p, '/', (size_t)(e - p));
		const char *re = slash ? slash : e; /* end of the range */
		if (re - p == 1 && *p == '*') {
			star = true;
			a = fd->lo;
			b = fd->hi;
		} else {
			dash = memchr(p, '-', (size_t)(re - p));
			rc = parse_value(f, p, (size_t)((dash ? dash : re) - p),
			    &a, err, errlen);
			if (rc != 0)
				return rc;
			if (dash != NULL) {
				rc = parse_value(f, dash + 1,
				    (size_t)(re - dash - 1), &b, err, errlen);
				if (rc != 0)
					return rc;
				if (b < a)
					return fail(err, errlen,
					    "%s field: the range %.*s is "
					    "backwards",
					    fd->name, (int)(re - p), p);
			} else {
				b = a;
				open_end = slash != NULL;
			}
		}
		if (slash != NULL) {
			long s = 0;
			const char *q;

			for (q = slash + 1; q < e && *q >= '0' && *q <= '9';
			     q++)
				if (s < 1000000)
					s = s * 10 + (*q - '0');
			if (q == slash + 1 || q != e)
				return fail(err, errlen,
				    "%s field: the step '%.*s' is not a number",
				    fd->name, (int)(e - slash - 1), slash + 1);
			if (s < 1 || s > fd->hi - fd->lo + (f == F_DOW ? 0 : 1))
				return fail(err, errlen,
				    "%s field: the step %.*s is out of 1-%d",
				    fd->name, (int)(e - slash - 1), slash + 1,
				    fd->hi - fd->lo + (f == F_DOW ? 0 : 1));
			step = (int)s;
			if (open_end)
				b = f == F_DOW ? (a > 6 ? a : 6) : fd->hi;
			if (star && f == F_DOW)
				b = 6;
		}
		for (int v = a; v <= b; v += step)
			*bits |= (uint64_t)1 << (f == F_DOW && v == 7 ? 0 : v);
		p = e + 1;
	}
	return 0;
}

int
cron_parse(
    const char *expr, size_t len, struct cron *out, char *err, size_t errlen)
{
	const char *p = expr, *end = expr + len;
	const char *fp[F_N];
	size_t fl[F_N];
	uint64_t bits[F_N];
	int nf = 0, rc;
	struct cron c;

	if (errlen > 0)
		err[0] = '\0';
	if (len > CRON_EXPR_MAX)
		return fail(err, errlen,
		    "the expression is longer than %d bytes", CRON_EXPR_MAX);
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (p < end && *p == '@') {
		for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
			if ((size_t)(end - p) == strlen(macros[i].name) &&
			    strncasecmp(p, macros[i].name, (size_t)(end - p)) ==
			        0)
				return cron_parse(macros[i].expr,
				    strlen(macros[i].expr), out, err, errlen);
		return fail(err, errlen,
		    "'%.*s' is not a name cron knows (@yearly, @annually, "
		    "@monthly, @weekly, @daily, @midnight, @hourly)",
		    (int)(end - p > 24 ? 24 : end - p), p);
	}
	while (p < end) {
		const char *b = p;

		while (p < end && *p != ' ' && *p != '\t')
			p++;
		if (nf < F_N) {
			fp[nf] = b;
			fl[nf] = (size_t)(p - b);
		}
		nf++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
	}
	if (nf != F_N)
		return fail(err, errlen,
		    "expected 5 fields (minute hour day-of-month month "
		    "day-of-week), got %d",
		    nf);
	for (int f = 0; f < F_N; f++)
		if ((rc = parse_field(
		         f, fp[f], fl[f], &bits[f], err, errlen)) != 0)
			return rc;
	memset(&c, 0, sizeof(c));
	c.min = bits[F_MIN];
	c.hour = (uint32_t)bits[F_HOUR];
	c.dom = (uint32_t)bits[F_DOM];
	c.mon = (uint16_t)bits[F_MON];
	c.dow = (uint8_t)bits[F_DOW];
	if (fl[F_DOM] == 1 && fp[F_DOM][0] == '*')
		c.flags |= CRON_DOM_ANY;
	if (fl[F_DOW] == 1 && fp[F_DOW][0] == '*')
		c.flags |= CRON_DOW_ANY;
	if ((c.flags & CRON_DOW_ANY) && !(c.flags & CRON_DOM_ANY)) {
		/* the longest month among those given (a leap February) */
		unsigned longest = 0;

		for (unsigned m = 1; m <= 12; m++)
			if ((c.mon >> m & 1) &&
			    tz_month_days(2000, m) > longest)
				longest = tz_month_days(2000, m);
		if ((c.dom &
		        (uint32_t)((((uint64_t)1 << (longest + 1)) - 1))) == 0)
			return fail(err, errlen,
			    "day-of-month field: %.*s never falls in the "
			    "months given (%.*s)",
			    (int)fl[F_DOM], fp[F_DOM], (int)fl[F_MON],
			    fp[F_MON]);
	}
	*out = c;
	return 0;
}

/* The least set bit of `bits` at or above `from`, or -1. */
static int
next_bit(uint64_t bits, int from, int hi)
{
	for (int i = from; i <= hi; i++)
		if (bits >> i & 1)
			return i;
	return -1;
}

static bool
day_match(const struct cron *c, int64_t y, unsigned m, unsigned d)
{
	int64_t days = tz_days(y, m, d);
	int wd = (int)(((days + 4) % 7 + 7) % 7);
	bool dom = c->dom >> d & 1, dow = c->dow >> wd & 1;

	if (c->flags & CRON_DOM_ANY)
		return (c->flags & CRON_DOW_ANY) ? true : dow;
	if (c->flags & CRON_DOW_ANY)
		return dom;
	return dom || dow;
}

bool
cron_match(const struct cron *c, int64_t civil)
{
	int64_t days = tz_floor_div(civil, 86400), y;
	int64_t sec = civil - days * 86400;
	unsigned m, d;

	tz_civil(days, &y, &m, &d);
	return (c->mon >> m & 1) && day_match(c, y, m, d) &&
	    (c->hour >> (sec / 3600) & 1) && (c->min >> (sec / 60 % 60) & 1);
}

int64_t
cron_next_local(const struct cron *c, int64_t civil)
{
	int64_t t = tz_floor_div(civil, 60) + 1; /* minutes */
	int64_t days = tz_floor_div(t, 1440), y, y_end;
	int mins = (int)(t - days * 1440), H = mins / 60, M = mins % 60, v;
	unsigned m, d;

	tz_civil(days, &y, &m, &d);
	y_end = y + 50;
	for (int iter = 0; iter < 100000 && y <= y_end; iter++) {
		if (!(c->mon >> m & 1)) {
			v = next_bit(c->mon, (int)m + 1, 12);
			if (v < 0) {
				y++;
				v = next_bit(c->mon, 1, 12);
			}
			m = (unsigned)v;
			d = 1;
			H = M = 0;
			continue;
		}
		if (!day_match(c, y, m, d)) {
			if (++d > tz_month_days(y, m)) {
				d = 1;
				if (++m > 12) {
					m = 1;
					y++;
				}
			}
			H = M = 0;
			continue;
		}
		if (!(c->hour >> H & 1)) {
			v = next_bit(c->hour, H + 1, 23);
			M = 0;
			if (v < 0) { /* no later hour today */
				H = 24;
				goto next_day;
			}
			H = v;
		}
		v = next_bit(c->min, M, 59);
		if (v >= 0)
			return (tz_days(y, m, d) * 1440 + H * 60 + v) * 60;
		v = next_bit(c->hour, H + 1, 23);
		M = 0;
		if (v >= 0) {
			H = v;
			continue;
		}
	next_day:
		H = 0;
		if (++d > tz_month_days(y, m)) {
			d = 1;
			if (++m > 12) {
				m = 1;
				y++;
			}
		}
	}
	return -1;
}

/* The instant local minute L (civil seconds) stands for; see the top. */
static int64_t
resolve(const struct tz *z, int64_t L)
{
	int32_t oe = tz_offset(z, L - 86400), ol = tz_offset(z, L + 86400);
	int32_t o0 = tz_offset(z, L);
	int64_t u1 = L - oe, u2 = L - ol, u0 = L - o0;
	bool v1 = tz_offset(z, u1) == oe, v2 = tz_offset(z, u2) == ol;
	bool v0 = tz_offset(z, u0) == o0;
	int64_t lo, hi;

	if (v1 && v2)
		return u1 < u2 ? u1 : u2;
	if (v1)
		return v0 && u0 < u1 ? u0 : u1;
	if (v2)
		return v0 && u0 < u2 ? u0 : u2;
	if (v0)
		return u0;
	/* A gap: the first instant whose local time is past L. */
	lo = L - (oe > ol ? oe : ol) - 1;
	hi = L - (oe < ol ? oe : ol);
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (mid + tz_offset(z, mid) > L)
			hi = mid;
		else
			lo = mid;
	}
	return (tz_floor_div(hi + 59, 60)) * 60; /* its first whole minute */
}

int64_t
cron_next(const struct cron *c, const struct tz *z, int64_t after)
{
	int64_t after_s = tz_floor_div(after, 1000);
	int32_t a = tz_offset(z, after_s - 86400), b = tz_offset(z, after_s);
	int32_t e = tz_offset(z, after_s + 86400);
	int32_t mo = a < b ? a : b;
	int64_t x, L, u;

	if (e < mo)
		mo = e;
	x = after_s + mo - 60;
	for (int i = 0; i < 10000; i++) {
		if ((L = cron_next_local(c, x)) < 0)
			return -1;
		u = resolve(z, L);
		if (u > after_s)
			return u * 1000;
		x = L;
	}
	return -1;
}
