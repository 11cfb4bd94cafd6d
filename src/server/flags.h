/* flags - sluiced's command line: the flags (their table, --help's text,
 * parsing into struct config) and the checks of their values, each
 * complaint one line on stderr with exit code 2, before anything starts.
 * main.c calls flags_parse, then flags_load_tls; the other functions are
 * flags.c's, shared with flags_value.c where they live. */
#ifndef SLUICE_SERVER_FLAGS_H
#define SLUICE_SERVER_FLAGS_H

#include <stdbool.h>
#include <stdint.h>

#include "server/config.h"

struct tlsfile;

/* Fills cfg with the defaults of SPEC section 6. */
void flags_defaults(struct config *cfg);

/* Parses argv into cfg (its defaults already filled) and checks the
 * values together. Returns 0, or the exit code of a bad command line (2,
 * said on stderr with a hint); --help and --version print and exit. */
int flags_parse(int argc, char **argv, struct config *cfg);

/* Every complaint about the command line: one line, exit code 2. */
int flags_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A decimal integer in [lo, hi], the whole string. */
int flags_u64(
    const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* A duration (util/dur.h, as the sluice tool reads them) in [lo, hi] ms. */
int flags_ms(
    const char *flag, const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

/* --http-host NAME: a DNS name or an IP literal, without a port. */
int flags_http_host(struct config *cfg, const char *name);

/* A byte count: a whole number with an optional k, M or G (binary
 * multiples), the whole string, at least 1. */
int flags_size(const char *flag, const char *s, uint64_t *out);

/* --fsync always|DUR|never. */
int flags_fsync(const char *s, struct config *cfg);
int flags_wal_commit(const char *s, struct config *cfg);

/* An nng URL (--listen, --repl-listen, --follow): a scheme nng knows,
 * and for the TCP ones a host (for --follow) and a port. `example` is the
 * flag's default port, for the message. */
int flags_check_url(const char *flag, const char *s, const char *example);

/* An http:// or https:// URL with a host and a port (--advertise-http).
 * 0 or 2 (the error printed). */
int flags_check_http_url(const char *flag, const char *s);

/* HOST:PORT (--http, --beanstalk; --http also http:// or
 * https://HOST:PORT). */
int flags_check_addr(const char *flag, const char *s, const char *example);
/* --beanstalk: HOST:PORT, or unix:PATH (a Unix socket, as beanstalkd's
 * -l unix:PATH). */
int flags_check_beanstalk_addr(const char *s);

/* The beanstalk face has no way to authenticate: beside --auth it
 * listens on loopback only, unless --beanstalk-insecure says otherwise. */
int flags_check_beanstalk(const struct config *cfg);

/* --etcd: comma-separated http:// URLs with a port. */
int flags_check_endpoints(const char *s);

/* --cluster and --node: 1 to 64 bytes of [A-Za-z0-9_.:-], which go into
 * etcd keys as they are. */
int flags_check_name(const char *flag, const char *s);

/* The flags of automatic failover, with their defaults. */
int flags_check_failover(struct config *cfg);

/* The TLS flags against the URLs that need them. */
int flags_check_tls(const struct config *cfg);

/* Reads and checks the TLS files, before anything is written. */
int flags_load_tls(struct config *cfg, struct tlsfile *tls);

#endif
