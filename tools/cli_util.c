/* cli_util - see cli_util.h. */
#include <string.h>
#include <time.h>

#include "cli_util.h"

/* ---- numbers and durations --------------------------------------------- */

int
cli_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

int
cli_parse_dur(const char *s, uint64_t *ms)
{
	static const struct {
		const char *name;
		uint64_t ms;
	} units[] = { { "", 1 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 },
		{ "h", 3600000 } };
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = s;
	int digits = 0;

	if (s == NULL)
		return -1;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			if (scale <
			    1000000000ULL) { /* ns precision is plenty */
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
	}
	if (digits == 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t u = units[i].ms;

		if (strcmp(p, units[i].name) != 0)
			continue;
		if (u == 1 && scale > 1)
			return -1; /* fractions of a millisecond */
		if (whole > UINT64_MAX / u ||
		    whole * u > UINT64_MAX - frac * u / scale)
			return -1;
		*ms = whole * u + frac * u / scale;
		return 0;
	}
	return -1;
}

/* ---- UTF-8 ------------------------------------------------------------------
 */

/* The length of the valid UTF-8 sequence at p (of at most `left` bytes), or
 * 0 when it is not one. */
static size_t
utf8_seq(const unsigned char *p, size_t left)
{
	unsigned c = p[0];
	size_t n;
	unsigned cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool
cli_utf8_valid(const void *p, size_t len)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(s + i, len - i);

		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

size_t
cli_utf8_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* ---- JSON and base64 -------------------------------------------------------
 */

void
cli_json_str(FILE *f, const void *p, size_t len)
{
	const unsigned char *s = p;

	fputc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned c = s[i];
		size_t n = utf8_seq(s + i, len - i);

		if (n == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		if (n > 1) {
			fwrite(s + i, 1, n, f);
			i += n;
			continue;
		}
		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc((int)c, f);
		}
		i++;
	}
	fputc('"', f);
}

void
cli_json_cstr(FILE *f, const char *s)
{
	if (s == NULL)
		fputs("null", f);
	else
		cli_json_str(f, s, strlen(s));
}

void
cli_base64(FILE *f, const void *p, size_t len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                          "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = p;
	size_t i = 0;

	for (; i + 3 <= len; i += 3) {
		uint32_t v =
		    (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];

		fputc(tab[v >> 18], f);
		fputc(tab[(v >> 12) & 63], f);
		fputc(tab[(v >> 6) & 63], f);
		fputc(tab[v & 63], f);
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)s[i] << 16;

		fputc(tab[v >> 18], f);
		fputc(tab[(v >> 12) & 63], f);
		fputs("==", f);
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;

		fputc(tab[v >> 18], f);
		fputc(tab[(v >> 12) & 63], f);
		fputc(tab[(v >> 6) & 63], f);
		fputc('=', f);
	}
}

/* ---- for humans ---------------------------------------------------------- */

void
cli_fmt_time(char *out, size_t n, uint64_t unix_ms)
{
	time_t t = (time_t)(unix_ms / 1000);
	struct tm tm;
	char s[32];

	if (unix_ms == 0 || localtime_r(&t, &tm) == NULL) {
		snprintf(out, n, "-");
		return;
	}
	strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(out, n, "%s.%03u", s, (unsigned)(unix_ms % 1000));
}

void
cli_fmt_dur(char *out, size_t n, uint64_t ms)
{
	unsigned long long h = ms / 3600000, m = ms / 60000 % 60;
	unsigned long long s = ms / 1000 % 60, rest = ms % 1000;

	if (ms == 0)
		snprintf(out, n, "0");
	else if (ms < 1000)
		snprintf(out, n, "%llums", (unsigned long long)ms);
	else if (ms < 60000 && rest == 0)
		snprintf(out, n, "%llus", s);
	else if (ms < 60000)
		snprintf(out, n, "%llu.%03llus", s, rest);
	else if (ms < 3600000)
		snprintf(out, n, s ? "%llum%llus" : "%llum", m, s);
	else if (ms < 86400000)
		snprintf(out, n, m ? "%lluh%llum" : "%lluh", h, m);
	else
		snprintf(
		    out, n, h % 24 ? "%llud%lluh" : "%llud", h / 24, h % 24);
}

void
cli_print_bytes(FILE *f, const void *p, size_t len)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(s + i, len - i);

		if (n == 0 ||
		    (n == 1 &&
		        ((s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') ||
		            s[i] == 0x7f))) {
			fprintf(f, "\\x%02x", s[i]);
			i++;
		} else if (n == 1 && s[i] == '\\') {
			fputs("\\\\", f);
			i++;
		} else {
			fwrite(s + i, 1, n, f);
			i += n;
		}
	}
}
