/* cli_util - the pure helpers of the sluice tool (cli_util.h): whole
 * numbers, UTF-8, JSON strings and base64 (through the JSON of results it
 * shares with the server, proto/json.h), times and sizes for people. No
 * I/O but the FILE each is given; the unit test drives them directly. */
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "json/json.h"

/* ---- numbers --------------------------------------------- */

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
	long off;

	if (unix_ms == 0 || localtime_r(&t, &tm) == NULL) {
		snprintf(out, n, "-");
		return;
	}
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	off = tm.tm_gmtoff / 60;
	snprintf(out, n, "%s.%03u%c%02ld:%02ld", s, (unsigned)(unix_ms % 1000),
	    off < 0 ? '-' : '+', (off < 0 ? -off : off) / 60,
	    (off < 0 ? -off : off) % 60);
}

void
cli_fmt_size(char *out, size_t n, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB",
		"PiB" };
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(out, n, "%llu B", (unsigned long long)bytes);
		return;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(out, n, "%.1f %s", v, units[u]);
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

unsigned
cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];

	if (la > 63 || lb > 63)
		return 64;
	/* one row of the table at a time: row[j] is the distance of a's
	 * prefix so far to b's first j bytes */
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}
