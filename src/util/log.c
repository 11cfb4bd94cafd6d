/* log - see log.h. A line is formatted into one buffer and written with a
 * single write(2), so lines from several threads never interleave. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

enum log_level log_threshold = LOG_INFO;

static const char *const level_names[] = { "err", "warn", "info", "debug" };

void
log_set_level(enum log_level level)
{
	log_threshold = level;
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
	size_t n;
	va_list ap;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	rc = snprintf(line + n, sizeof(line) - n,
	    ".%03ldZ %s %s: ", ts.tv_nsec / 1000000, level_names[level],
	    subsys);
	if (rc > 0)
		n += (size_t)rc;
	va_start(ap, fmt);
	rc = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (rc > 0)
		n += (size_t)rc;
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0) {
		/* Nowhere left to report it. */
	}
}
