/* certdates - the validity dates of sluiced's own certificate (--tls-cert),
 * checked at start. An expired certificate, or one not valid yet, stops
 * the start with the date and what to do: every client and follower
 * would refuse it at each handshake, and the node would serve nobody
 * while looking up. One that ends within CERTDATES_WARN_DAYS is logged as
 * a warning at each start. */
#ifndef SLUICE_SERVER_CERTDATES_H
#define SLUICE_SERVER_CERTDATES_H

#include <stdint.h>

enum { CERTDATES_WARN_DAYS = 30 };

/* The first certificate of `pem` (a chain): not before and not after, as
 * Unix seconds. Returns 0, or -1 when the TLS engine cannot parse one. */
int certdates_read(const char *pem, int64_t *not_before, int64_t *not_after);

/* Checks `pem` (the text of --tls-cert `path`) against `now` (Unix
 * seconds): 0, a warning logged when it ends soon; -1, logged, when it
 * has expired or is not valid yet. A text without a certificate the
 * engine parses passes (the handshake judges it). */
int certdates_check(const char *path, const char *pem, int64_t now);

#endif
