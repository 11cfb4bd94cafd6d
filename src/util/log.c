/* log - the server's diagnostic log (log.h): levels, text or JSON lines
 * on stderr. A line is formatted into one buffer and written with a
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

/* Appends `len` bytes of `p` to line[*n..cap) escaped for a JSON string
 * (quotes not included); stops short rather than overflow. */
static void
json_put(char *line, size_t *n, size_t cap, const char *p, size_t len)
{
	for (size_t i = 0; i < len && *n + 7 < cap; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '"' || c == '\\') {
			line[(*n)++] = '\\';
			line[(*n)++] = (char)c;
		} else if (c < 0x20) {
			*n +=
			    (size_t)snprintf(line + *n, cap - *n, "\\u%04x", c);
		} else {
			line[(*n)++] = (char)c;
		}
	}
}

static bool
key_char(char c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') ||
	    (!first && c >= '0' && c <= '9');
}

/* The message's key=value words as JSON fields ,"key":"value": a key is
 * [a-z_][a-z0-9_]* at the start or after a space; a value runs to the
 * next space, or is "quoted". */
static void
json_fields(char *line, size_t *n, size_t cap, const char *msg)
{
	for (const char *p = msg; *p != '\0'; p++) {
		const char *k = p, *v, *end;

		if ((p != msg && p[-1] != ' ') || !key_char(*p, true))
			continue;
		while (key_char(*p, false))
			p++;
		if (*p == '\0')
			break;
		if (*p != '=' || p[1] == ' ' || p[1] == '\0')
			continue;
		v = p + 1;
		if (*v == '"' && (end = strchr(v + 1, '"')) != NULL)
			v++;
		else
			end = v + strcspn(v, " ");
		if (*n + (size_t)(p - k) + 8 >= cap)
			return;
		line[(*n)++] = ',';
		line[(*n)++] = '"';
		json_put(line, n, cap, k, (size_t)(p - k));
		line[(*n)++] = '"';
		line[(*n)++] = ':';
		line[(*n)++] = '"';
		json_put(line, n, cap, v, (size_t)(end - v));
		if (*n + 2 < cap)
			line[(*n)++] = '"';
		p = *end == '"' ? end : end - 1;
		if (*p == '\0')
			break;
	}
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
	char msg[1536], line[4096], stamp[32];
	struct timespec ts;
	struct tm tm;
	size_t n = 0, cap = sizeof(line) - 2;
	va_list ap;
	int rc;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_json) {
		rc = snprintf(line, cap,
		    "{\"time\":\"%s.%03ldZ\",\"level\":\"%s\","
		    "\"subsys\":\"%s\",\"msg\":\"",
		    stamp, ts.tv_nsec / 1000000, level_names[level], subsys);
		n = rc > 0 ? (size_t)rc : 0;
		json_put(line, &n, cap - 2, msg, strlen(msg));
		line[n++] = '"';
		json_fields(line, &n, cap - 1, msg);
		line[n++] = '}';
	} else {
		rc = snprintf(line, cap, "%s.%03ldZ %s %s: %s", stamp,
		    ts.tv_nsec / 1000000, level_names[level], subsys, msg);
		n = rc < 0 ? 0 : (size_t)rc < cap ? (size_t)rc : cap - 1;
	}
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0) {
		/* Nowhere left to report it. */
	}
}
