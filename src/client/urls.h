/* urls - the server URLs a client handle may connect to, in order, and
 * which one is current. Parsed from "URL[,URL...]"; leaders named by
 * "not leader" replies are added at the end. */
#ifndef SLUICE_CLIENT_URLS_H
#define SLUICE_CLIENT_URLS_H

#include <stddef.h>

struct urls {
	char **v;   /* n NUL-terminated URLs, heap */
	size_t n;   /* >= 1 once parsed */
	size_t cur; /* the one to try first */
};

/* Parses a comma-separated list; spaces around each URL are dropped. NULL
 * or "" gives the one default URL. Returns 0; SLUICE_EINVAL when an entry
 * is empty or has no "scheme://"; SLUICE_ENOMEM. `*out` is written only
 * on success and released with urls_fini(). */
int urls_parse(const char *s, struct urls *out);

/* Frees the URLs; `u` may be reused after urls_parse(). */
void urls_fini(struct urls *u);

/* The index of `url` (`len` bytes) in the list, appending it when absent.
 * Returns 0 and `*idx`; SLUICE_EINVAL for an empty URL; SLUICE_ENOMEM. */
int urls_find_or_add(struct urls *u, const char *url, size_t len, size_t *idx);

#endif
