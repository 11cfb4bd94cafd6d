/* it_http - a minimal HTTP/1.1 client for the tests of sluiced's HTTP
 * face (and of chromedriver's WebDriver API): one request per connection,
 * every wait bounded; and lookups in the texts that come back (Prometheus
 * samples, JSON numbers) good enough for the shapes sluice writes. */
#ifndef SLUICE_IT_HTTP_H
#define SLUICE_IT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { IT_HTTP_MS = 15000 };

/* Sends `method` `path` to 127.0.0.1:`port` with `headers` ("Name:
 * value\r\n" lines, or NULL) and `body` (NULL: none), and reads the whole
 * answer. Returns the HTTP status and `*out` (the body, NUL-ended, to
 * free), or -1 when nothing came within IT_HTTP_MS (*out NULL). */
int it_http(int port, const char *method, const char *path, const char *headers,
    const char *body, char **out);

/* The status line and headers ("Name: value\r\n" each) of the last
 * answer it_http read on this thread; "" when none came. */
const char *it_http_head(void);

/* GET, asserted to answer `want`; the body (to free). */
char *it_http_get(int port, const char *path, int want);

/* The value of the Prometheus sample whose name and labels are exactly
 * `series` (e.g. `sluice_tube_tasks{tube="a",state="ready"}`); asserted
 * to exist. */
double it_metric(const char *text, const char *series);

/* The number after the first `"key":` found after `"scope":` in `json`
 * (scope NULL: from the start); asserted to exist. */
double it_json_num(const char *json, const char *scope, const char *key);

/* The string after `"key":"`, copied into out (at most cap-1 bytes);
 * false when absent. */
bool it_json_str(const char *json, const char *key, char *out, size_t cap);

/* A free loopback port, for a second listener of the same server. */
int it_free_port(void);

/* The path of program `name` found in $PATH (or /usr/sbin, /usr/bin),
 * into out; false when it is nowhere. */
bool it_which(const char *name, char *out, size_t cap);

#endif
