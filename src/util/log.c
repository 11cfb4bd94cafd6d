/* log - see log.h. A line is formatted into one buffer and written with a
 * single write(2), so lines from several threads never interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

enum log_level log_threshold = LOG_INFO;
static bool log_json;

static const char *const level_names[] = { "err", "warn", "info", "debug" };

void
log_set_level(enum log_level level)
{
	log_threshold = level;
}

void
log_set_json(bool json)
{
	log_json = json;
}

/* Rewrites the message at line[from..*n) as a JSON string body in place
 * (escaping what JSON needs), within `cap` bytes. */
static void
json_escape_tail(char *line, size_t from, size_t *n, size_t cap)
{
	char tmp[2048];
	size_t len = *n - from, out = from;

	memcpy(tmp, line + from, len);
	for (size_t i = 0; i < len && out + 7 < cap; i++) {
		unsigned char c = (unsigned char)tmp[i];

		if (c == '"' || c == '\\') {
			line[out++] = '\\';
			line[out++] = (char)c;
		} else if (c < 0x20) {
			out += (size_t)snprintf(
			    line + out, cap - out, "\\u%04x", c);
		} else {
			line[out++] = (char)c;
		}
	}
	*n = out;
}

int
log_parse_level(const char *name, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]);
	     i++) {
		if (strcmp(name, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

void
log_msg(enum log_level level, const char *subsys, const char *fmt, ...)
{
	char line[2048];
	struct timespec ts;
	struct tm tm;
	size_t n, start;
	va_list ap;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = log_json ? (size_t)snprintf(line, sizeof(line), "{\"time\":\"") : 0;
	n += strftime(line + n, sizeof(line) - n, "%Y-%m-%dT%H:%M:%S", &tm);
	if (log_json)
		rc = snprintf(line + n, sizeof(line) - n,
		    ".%03ldZ\",\"level\":\"%s\",\"subsys\":\"%s\","
		    "\"msg\":\"",
		    ts.tv_nsec / 1000000, level_names[level], subsys);
	else
		rc = snprintf(line + n, sizeof(line) - n,
		    ".%03ldZ %s %s: ", ts.tv_nsec / 1000000, level_names[level],
		    subsys);
	if (rc > 0)
		n += (size_t)rc;
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	start = n;
	va_start(ap, fmt);
	rc = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (rc > 0)
		n += (size_t)rc;
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	if (log_json) {
		json_escape_tail(line, start, &n, sizeof(line) - 3);
		line[n++] = '"';
		line[n++] = '}';
	}
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0) {
		/* Nowhere left to report it. */
	}
}
