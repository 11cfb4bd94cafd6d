/* dur - parses and prints durations ("250ms", "1.5m", "30d", "0"; the
 * rules are in dur.h): a number, an optional fraction, a unit (none only
 * for zero), and nothing else. Printing is for people: at most two units
 * ("2m30s", "1d3h"), so a long duration is shown rounded down. */
#include <stdio.h>
#include <string.h>

#include "util/dur.h"

int
dur_parse(const char *s, uint64_t *ms)
{
	static const struct {
		const char *name;
		uint64_t ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 },
		{ "h", 3600000 }, { "d", 86400000 } };
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
	if (*p == '\0') {
		if (whole != 0 || frac != 0)
			return DUR_EBARE;
		*ms = 0;
		return 0;
	}
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

void
dur_hint(char *out, size_t n, const char *s)
{
	char secs[48];
	uint64_t ms;

	if (strlen(s) > 24) {
		snprintf(out, n, "say it with ms, s, m, h or d");
		return;
	}
	snprintf(secs, sizeof(secs), "%ss", s);
	if (dur_parse(secs, &ms) != 0 || ms == 0)
		snprintf(out, n, "say %s", secs);
	else if (strchr(s, '.') != NULL)
		snprintf(
		    out, n, "say %s or %llums", secs, (unsigned long long)ms);
	else
		snprintf(out, n,
		    "say %s or %llums (%sms if milliseconds were meant)", secs,
		    (unsigned long long)ms, s);
}

void
dur_fmt(char *out, size_t n, uint64_t ms)
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
