/* log - the server's diagnostic log: one line per event on stderr,
 * "TIME LEVEL subsystem: message", or one JSON object per line. The level is
 * tested before anything is formatted, so a disabled debug line costs one
 * comparison. Pure modules (rec, qrec, msg, heap) never log: they return codes.
 */
#ifndef SLUICE_UTIL_LOG_H
#define SLUICE_UTIL_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern enum log_level log_threshold;

void log_set_level(enum log_level level);

/* JSON lines instead of text: {"time":"...","level":"info",
 * "subsys":"srv","msg":"...", ...} (--log-format json). Words of the
 * message of the form key=value (or key="several words") also become
 * fields "key":"value", so a message written as
 * "kick id=42 result=ok" is searchable by id and result. */
void log_set_json(bool json);

/* Parses "err", "warn", "info" or "debug". Returns 0, or -1 when unknown. */
int log_parse_level(const char *name, enum log_level *out);

void log_msg(enum log_level level, const char *subsys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define log_at_(lvl, subsys, ...)                                              \
	do {                                                                   \
		if ((lvl) <= log_threshold)                                    \
			log_msg((lvl), (subsys), __VA_ARGS__);                 \
	} while (0)
#define log_err(subsys, ...)   log_at_(LOG_ERR, subsys, __VA_ARGS__)
#define log_warn(subsys, ...)  log_at_(LOG_WARN, subsys, __VA_ARGS__)
#define log_info(subsys, ...)  log_at_(LOG_INFO, subsys, __VA_ARGS__)
#define log_debug(subsys, ...) log_at_(LOG_DEBUG, subsys, __VA_ARGS__)

#endif
