/* probe - after a failed connection to a tcp:// URL, a short look at what
 * is at the other end, so that "no connection" can say why: nothing
 * listens, or something that is not a sluice server answers there (an HTTP
 * server such as sluiced's --http face, a beanstalkd-protocol server such
 * as its --beanstalk face, an nng peer of another kind). */
#ifndef SLUICE_CLIENT_PROBE_H
#define SLUICE_CLIENT_PROBE_H

#include <stddef.h>

/* Connects to the host and port of `url` with a plain TCP socket, reads
 * what the peer says first (an nng peer sends its header at once), else
 * sends one HTTP request line and reads the answer; all within
 * `budget_ms`. Writes what it found to `out`, to follow the URL ("nothing
 * listens there", "an HTTP server answers there, not a sluice server; is
 * it sluiced's --http port?", ...). Returns 0, or -1
 * when it learned nothing to say (not a tcp:// URL, a name that does not
 * resolve, no answer either way): `out` is then untouched. */
int probe_peer(const char *url, int budget_ms, char *out, size_t n);

#endif
