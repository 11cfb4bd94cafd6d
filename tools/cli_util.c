/* cli_util - see cli_util.h. */
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "proto/json.h"

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

bool
cli_utf8_valid(const void *p, size_t len)
{
	return json_utf8_valid(p, len);
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
	json_str(f, p, len);
}

void
cli_json_cstr(FILE *f, const char *s)
{
	json_cstr(f, s);
}

void
cli_base64(FILE *f, const void *p, size_t len)
{
	json_base64(f, p, len);
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
		size_t n = json_utf8_seq(s + i, len - i);

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
