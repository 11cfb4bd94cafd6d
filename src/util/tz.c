/* tz - time zones from TZif files (RFC 8536), and the POSIX TZ rule of
 * their footer; tz.h says what it serves.
 *
 * The file: a 44-byte header ("TZif", a version byte, 15 unused bytes,
 * six big-endian u32 counts: isutcnt, isstdcnt, leapcnt, timecnt,
 * typecnt, charcnt), then the data block (timecnt transition times, as
 * many type indexes, typecnt types of i32 utoff + u8 isdst + u8 desigidx,
 * charcnt designation bytes, leapcnt leap records, isstdcnt + isutcnt
 * indicators). Version 1 files end there, with 32-bit times. Version 2
 * and later repeat header and block with 64-bit times (and 64-bit leap
 * times), then a footer: "\n", a POSIX TZ string, "\n". We read the
 * version 1 block only when the file has no other.
 *
 * What is kept: the transition times and the offset each begins, the
 * offset before the first (type 0, the RFC's rule for version 2+), and
 * the footer's rule, which decides every instant from the last
 * transition on. Files with leap-second records ("right/" zones) are
 * refused: their times are not unix times.
 *
 * The rule: std offset [dst [offset] [,start[/time],end[/time]]], names
 * alphabetic (3+) or quoted in <>, offsets [+-]hh[:mm[:ss]] west of UTC
 * (POSIX's sign), dates Jn (1-365, no Feb 29), n (0-365) or Mm.w.d (week
 * 5 = the last), times [+-]hhh[:mm[:ss]] (RFC 8536 allows -167..167
 * hours), 02:00:00 by default. A dst without dates uses the US rule
 * (M3.2.0,M11.1.0), as POSIX says. The start time is in standard time,
 * the end time in daylight time; a start after the end in the year is a
 * southern zone (daylight time spans the new year). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "util/tz.h"

enum { TZ_DATE_J = 1, TZ_DATE_N = 2, TZ_DATE_M = 3 };

struct tz_date {
	uint8_t kind;
	uint8_t m, w, d; /* M: month 1-12, week 1-5, weekday 0-6 */
	uint16_t n;      /* J: 1-365; N: 0-365 */
	int32_t time;    /* seconds after local midnight */
};

struct tz_rule {
	bool has_dst;
	int32_t std_off; /* east of UTC */
	int32_t dst_off;
	struct tz_date start, end;
};

struct tz {
	size_t n;          /* transitions */
	int64_t *at;       /* n times, increasing */
	int32_t *off;      /* the offset from at[i] on */
	int32_t first_off; /* before at[0] */
	bool has_rule;     /* the footer decides from at[n-1] on */
	struct tz_rule rule;
};

/* ---- civil dates (proleptic Gregorian) ------------------------------- */

int64_t
tz_days(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

void
tz_civil(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;

	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int64_t
year_of_days(int64_t z)
{
	int64_t y;
	unsigned m, d;

	tz_civil(z, &y, &m, &d);
	return y;
}

int64_t
tz_floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static bool
is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned
tz_month_days(int64_t y, unsigned m)
{
	static const unsigned d[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
		30, 31 };

	return m == 2 && is_leap(y) ? 29 : d[m - 1];
}

/* ---- the POSIX rule -------------------------------------------------- */

/* The day (days since 1970-01-01) a rule date falls on in year y. */
static int64_t
rule_day(const struct tz_date *dt, int64_t y)
{
	int64_t jan1 = tz_days(y, 1, 1);

	switch (dt->kind) {
	case TZ_DATE_J:
		return jan1 + dt->n - 1 + (is_leap(y) && dt->n >= 60);
	case TZ_DATE_N:
		return jan1 + dt->n;
	default: {
		int64_t first = tz_days(y, dt->m, 1);
		int64_t wd = ((first + 4) % 7 + 7) % 7; /* 1970-01-01: Thu */
		int64_t day = first + (dt->d - wd + 7) % 7 + (dt->w - 1) * 7;

		while (day >= first + tz_month_days(y, dt->m))
			day -= 7;
		return day;
	}
	}
}

static int32_t
rule_offset(const struct tz_rule *r, int64_t t)
{
	if (!r->has_dst)
		return r->std_off;
	int64_t y = year_of_days(tz_floor_div(t + r->std_off, 86400));
	int64_t s = rule_day(&r->start, y) * 86400 + r->start.time - r->std_off;
	int64_t e = rule_day(&r->end, y) * 86400 + r->end.time - r->dst_off;
	bool dst = s < e ? (s <= t && t < e) : !(e <= t && t < s);

	return dst ? r->dst_off : r->std_off;
}

struct scan {
	const char *p, *end;
};

static bool
sc_more(const struct scan *s)
{
	return s->p < s->end;
}

static bool
sc_is(const struct scan *s, char c)
{
	return s->p < s->end && *s->p == c;
}

static bool
sc_digit(const struct scan *s)
{
	return s->p < s->end && *s->p >= '0' && *s->p <= '9';
}

static int
sc_num(struct scan *s, int max_digits, long *out)
{
	long v = 0;
	int n = 0;

	while (sc_digit(s) && n < max_digits) {
		v = v * 10 + (*s->p++ - '0');
		n++;
	}
	if (n == 0)
		return -1;
	*out = v;
	return 0;
}

/* A zone abbreviation: 3+ letters, or <...> of [A-Za-z0-9+-]. */
static int
sc_name(struct scan *s)
{
	const char *b = s->p;

	if (sc_is(s, '<')) {
		s->p++;
		while (sc_more(s) && *s->p != '>') {
			char c = *s->p;
			if (!((c >= 'A' && c <= 'Z') ||
			        (c >= 'a' && c <= 'z') ||
			        (c >= '0' && c <= '9') || c == '+' || c == '-'))
				return -1;
			s->p++;
		}
		if (!sc_is(s, '>') || s->p - b < 4)
			return -1;
		s->p++;
		return 0;
	}
	while (sc_more(s) &&
	    ((*s->p >= 'A' && *s->p <= 'Z') || (*s->p >= 'a' && *s->p <= 'z')))
		s->p++;
	return s->p - b >= 3 ? 0 : -1;
}

/* [+-]h[h..][:mm[:ss]] as seconds, hours at most max_h. */
static int
sc_hms(struct scan *s, long max_h, int32_t *out)
{
	long h, m = 0, sec = 0;
	int sign = 1;

	if (sc_is(s, '+') || sc_is(s, '-'))
		sign = *s->p++ == '-' ? -1 : 1;
	if (sc_num(s, 3, &h) != 0 || h > max_h)
		return -1;
	if (sc_is(s, ':')) {
		s->p++;
		if (sc_num(s, 2, &m) != 0 || m > 59)
			return -1;
		if (sc_is(s, ':')) {
			s->p++;
			if (sc_num(s, 2, &sec) != 0 || sec > 59)
				return -1;
		}
	}
	*out = (int32_t)(sign * (h * 3600 + m * 60 + sec));
	return 0;
}

static int
sc_date(struct scan *s, struct tz_date *d)
{
	long a, b, c;

	memset(d, 0, sizeof(*d));
	if (sc_is(s, 'J')) {
		s->p++;
		if (sc_num(s, 3, &a) != 0 || a < 1 || a > 365)
			return -1;
		d->kind = TZ_DATE_J;
		d->n = (uint16_t)a;
	} else if (sc_is(s, 'M')) {
		s->p++;
		if (sc_num(s, 2, &a) != 0 || a < 1 || a > 12 || !sc_is(s, '.'))
			return -1;
		s->p++;
		if (sc_num(s, 1, &b) != 0 || b < 1 || b > 5 || !sc_is(s, '.'))
			return -1;
		s->p++;
		if (sc_num(s, 1, &c) != 0 || c > 6)
			return -1;
		d->kind = TZ_DATE_M;
		d->m = (uint8_t)a;
		d->w = (uint8_t)b;
		d->d = (uint8_t)c;
	} else {
		if (sc_num(s, 3, &a) != 0 || a > 365)
			return -1;
		d->kind = TZ_DATE_N;
		d->n = (uint16_t)a;
	}
	d->time = 7200;
	if (sc_is(s, '/')) {
		s->p++;
		if (sc_hms(s, 167, &d->time) != 0)
			return -1;
	}
	return 0;
}

static int
rule_parse(const char *str, size_t len, struct tz_rule *r)
{
	struct scan s = { str, str + len };
	int32_t off;

	memset(r, 0, sizeof(*r));
	if (sc_name(&s) != 0 || sc_hms(&s, 24, &off) != 0)
		return -1;
	r->std_off = -off;
	if (!sc_more(&s))
		return 0;
	if (sc_name(&s) != 0)
		return -1;
	r->has_dst = true;
	r->dst_off = r->std_off + 3600;
	if (sc_more(&s) && !sc_is(&s, ',')) {
		if (sc_hms(&s, 24, &off) != 0)
			return -1;
		r->dst_off = -off;
	}
	if (!sc_more(&s)) { /* POSIX's default: the US rule */
		r->start = (struct tz_date) { TZ_DATE_M, 3, 2, 0, 0, 7200 };
		r->end = (struct tz_date) { TZ_DATE_M, 11, 1, 0, 0, 7200 };
		return 0;
	}
	if (!sc_is(&s, ','))
		return -1;
	s.p++;
	if (sc_date(&s, &r->start) != 0 || !sc_is(&s, ','))
		return -1;
	s.p++;
	if (sc_date(&s, &r->end) != 0 || sc_more(&s))
		return -1;
	return 0;
}

/* ---- TZif ------------------------------------------------------------ */

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static int64_t
be64(const uint8_t *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

struct tzif_hdr {
	uint8_t version;
	uint32_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
};

static int
read_hdr(const uint8_t *p, size_t len, struct tzif_hdr *h)
{
	if (len < 44 || memcmp(p, "TZif", 4) != 0)
		return -1;
	h->version = p[4];
	h->isutcnt = be32(p + 20);
	h->isstdcnt = be32(p + 24);
	h->leapcnt = be32(p + 28);
	h->timecnt = be32(p + 32);
	h->typecnt = be32(p + 36);
	h->charcnt = be32(p + 40);
	if (h->typecnt == 0 || h->typecnt > 256 || h->timecnt > TZ_TRANS_MAX ||
	    h->charcnt > 65536 || h->leapcnt > 65536 ||
	    (h->isutcnt != 0 && h->isutcnt != h->typecnt) ||
	    (h->isstdcnt != 0 && h->isstdcnt != h->typecnt))
		return -1;
	return 0;
}

static size_t
block_len(const struct tzif_hdr *h, size_t tsize)
{
	return (size_t)h->timecnt * (tsize + 1) + (size_t)h->typecnt * 6 +
	    h->charcnt + (size_t)h->leapcnt * (tsize + 4) + h->isstdcnt +
	    h->isutcnt;
}

static struct tz *
tz_alloc(size_t n)
{
	struct tz *z = calloc(1, sizeof(*z));

	if (z == NULL)
		return NULL;
	if (n > 0) {
		z->at = malloc(n * sizeof(*z->at));
		z->off = malloc(n * sizeof(*z->off));
		if (z->at == NULL || z->off == NULL) {
			tz_free(z);
			return NULL;
		}
	}
	z->n = n;
	return z;
}

int
tz_parse(const void *data, size_t len, struct tz **out)
{
	const uint8_t *p = data;
	struct tzif_hdr h;
	size_t tsize = 4;
	struct tz *z;

	if (read_hdr(p, len, &h) != 0)
		return SLUICE_ECORRUPT;
	if (h.version >= '2') {
		size_t skip = 44 + block_len(&h, 4);

		if (skip > len || read_hdr(p + skip, len - skip, &h) != 0)
			return SLUICE_ECORRUPT;
		p += skip;
		len -= skip;
		tsize = 8;
	} else if (h.version != 0) {
		return SLUICE_ECORRUPT;
	}
	if (h.leapcnt != 0)
		return SLUICE_ECORRUPT; /* "right/" zones: not unix time */
	size_t blen = block_len(&h, tsize);
	if (44 + blen > len)
		return SLUICE_ECORRUPT;
	const uint8_t *times = p + 44;
	const uint8_t *idx = times + (size_t)h.timecnt * tsize;
	const uint8_t *types = idx + h.timecnt;

	if ((z = tz_alloc(h.timecnt)) == NULL)
		return SLUICE_ENOMEM;
	for (uint32_t i = 0; i < h.timecnt; i++) {
		int64_t t = tsize == 8 ? be64(times + (size_t)i * 8)
		                       : (int64_t)(int32_t)be32(times + i * 4);
		if (idx[i] >= h.typecnt || (i > 0 && t <= z->at[i - 1]))
			goto bad;
		z->at[i] = t;
		z->off[i] = (int32_t)be32(types + (size_t)idx[i] * 6);
	}
	for (uint32_t i = 0; i < h.typecnt; i++) {
		int32_t o = (int32_t)be32(types + (size_t)i * 6);
		if (o < -25 * 3600 || o > 26 * 3600 || types[i * 6 + 4] > 1)
			goto bad;
	}
	z->first_off = (int32_t)be32(types);
	if (tsize == 8) {
		const uint8_t *f = p + 44 + blen, *end = p + len, *nl;

		if (f >= end || *f != '\n')
			goto bad;
		f++;
		nl = memchr(f, '\n', (size_t)(end - f));
		if (nl == NULL)
			goto bad;
		if (nl > f) {
			if (rule_parse((const char *)f, (size_t)(nl - f),
			        &z->rule) != 0)
				goto bad;
			z->has_rule = true;
		}
	}
	*out = z;
	return 0;
bad:
	tz_free(z);
	return SLUICE_ECORRUPT;
}

int
tz_from_rule(const char *rule, size_t len, struct tz **out)
{
	struct tz *z;
	struct tz_rule r;

	if (rule_parse(rule, len, &r) != 0)
		return SLUICE_EINVAL;
	if ((z = tz_alloc(0)) == NULL)
		return SLUICE_ENOMEM;
	z->rule = r;
	z->has_rule = true;
	z->first_off = r.std_off;
	*out = z;
	return 0;
}

int
tz_utc(struct tz **out)
{
	struct tz *z = tz_alloc(0);

	if (z == NULL)
		return SLUICE_ENOMEM;
	*out = z;
	return 0;
}

bool
tz_name_valid(const char *name, size_t len)
{
	size_t comp = 0; /* start of the current component */

	if (len == 0 || len > TZ_NAME_MAX || name[0] == '/')
		return false;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? name[i] : '/';

		if (c == '/') {
			if (i == comp ||
			    (name[comp] == '.' &&
			        (i - comp == 1 ||
			            (i - comp == 2 && name[comp + 1] == '.'))))
				return false;
			comp = i + 1;
			continue;
		}
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		        (c >= '0' && c <= '9') || c == '_' || c == '+' ||
		        c == '-' || c == '.'))
			return false;
	}
	return true;
}

int
tz_load(const char *name, size_t len, struct tz **out)
{
	const char *dir = getenv("TZDIR");
	char path[512];
	uint8_t *data;
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, rc;

	if (!tz_name_valid(name, len))
		return SLUICE_EINVAL;
	if ((len == 3 && memcmp(name, "UTC", 3) == 0) ||
	    (len == 7 && memcmp(name, "Etc/UTC", 7) == 0))
		return tz_utc(out);
	if (dir == NULL || dir[0] == '\0')
		dir = "/usr/share/zoneinfo";
	if ((size_t)snprintf(path, sizeof(path), "%s/%.*s", dir, (int)len,
	        name) >= sizeof(path))
		return SLUICE_EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? SLUICE_ENOTFOUND
		                                           : -errno;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return SLUICE_ENOTFOUND; /* a directory: "Europe" */
	}
	if (st.st_size > TZ_FILE_MAX || st.st_size < 44) {
		close(fd);
		return SLUICE_ECORRUPT;
	}
	if ((data = malloc((size_t)st.st_size)) == NULL) {
		close(fd);
		return SLUICE_ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, data + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	rc = got == (size_t)st.st_size ? tz_parse(data, got, out)
	                               : SLUICE_ECORRUPT;
	free(data);
	return rc;
}

void
tz_free(struct tz *z)
{
	if (z == NULL)
		return;
	free(z->at);
	free(z->off);
	free(z);
}

size_t
tz_mem(const struct tz *z)
{
	return sizeof(*z) + z->n * (sizeof(*z->at) + sizeof(*z->off));
}

int32_t
tz_offset(const struct tz *z, int64_t t)
{
	size_t lo = 0, hi;

	if (z->n == 0)
		return z->has_rule ? rule_offset(&z->rule, t) : z->first_off;
	if (t < z->at[0])
		return z->first_off;
	if (t >= z->at[z->n - 1] && z->has_rule)
		return rule_offset(&z->rule, t);
	hi = z->n; /* the last i with at[i] <= t, in [lo, hi) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (z->at[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	return z->off[lo];
}
