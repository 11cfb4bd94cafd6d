/* rate - see rate.h. */
#include <stdio.h>
#include <string.h>

#include "util/rate.h"

int
rate_parse(const char *s, uint32_t *n, uint32_t *per_ms)
{
	uint64_t v = 0;
	const char *p = s;
	uint32_t per;

	if (s == NULL || *p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return -1;
	}
	if (*p++ != '/')
		return -1;
	if (strcmp(p, "s") == 0 || strcmp(p, "sec") == 0)
		per = 1000;
	else if (strcmp(p, "m") == 0 || strcmp(p, "min") == 0)
		per = 60000;
	else if (strcmp(p, "h") == 0 || strcmp(p, "hour") == 0)
		per = 3600000;
	else
		return -1;
	*n = (uint32_t)v;
	*per_ms = per;
	return 0;
}

void
rate_fmt(char *out, size_t len, uint32_t n, uint32_t per_ms)
{
	const char *u = per_ms == 3600000 ? "h" : per_ms == 60000 ? "m" : "s";

	snprintf(out, len, "%u/%s", (unsigned)n, u);
}
