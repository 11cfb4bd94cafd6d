/* it_hostile - what the hardening tests (test_hostile_*.c) share: a token
 * file holding the server's own hash of a token, a CA and a certificate
 * for a tls+tcp:// server, a stats counter awaited, and a raw socket the
 * server is expected to close.
 *
 * Every wait is bounded by the milliseconds its caller gives. */
#ifndef SLUICE_IT_HOSTILE_H
#define SLUICE_IT_HOSTILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum {
	IT_HOSTILE_P99_MS = 50, /* a healthy client's p99 under an attack */
	IT_HOSTILE_P99_SAN_MS = 250, /* the same under the sanitizers */
};

struct it_probe;
struct it_probe_result;
struct sluice_client;
struct t_srv;

/* Writes to `f` the server's hash of the token `secret` (tokens_sha256),
 * as a token file holds it: hex, no newline. */
void it_hostile_hash(FILE *f, const char *secret);

/* Writes the test's file "tokens" with one admin token, `token`, hashed
 * as the server hashes it ("ops admin * <hex>"); its path is returned
 * (static storage, rewritten by the next call). */
const char *it_hostile_tokens(void **state, const char *token);

/* A CA and a certificate for 127.0.0.1, made at the first call of the
 * process (in a directory of their own, removed at exit); the server `s`
 * gets them on a tls+tcp:// client port (its url, args 0..3). The CA's
 * path is returned. */
const char *it_hostile_tls_setup(struct t_srv *s);

/* Waits up to `ms` for the stats counter `name`, read by `c`, to reach
 * `want`; its last value is returned. */
uint64_t it_hostile_wait_kv(
    struct sluice_client *c, const char *name, uint64_t want, int ms);

/* True when the peer closes `fd` within `ms` (what it sends is read and
 * dropped). */
bool it_hostile_closed_within(int fd, int ms);

/* How many of fds[0..n) the peer closes within `ms`, all watched at
 * once (each for the whole `ms`, as it_hostile_closed_within watches
 * one); closed[i] (when not NULL) says which. */
int it_hostile_closed_count(const int *fds, int n, int ms, bool *closed);

/* The bound of a healthy client's p99 beside an attack, in ms:
 * IT_HOSTILE_P99_MS, or IT_HOSTILE_P99_SAN_MS under the sanitizers. */
double it_hostile_p99_bound(void);

/* A healthy client's p99 beside an attack, `r` (from a probe of `url`, a
 * tcp:// server, on `tube` with the token `tok` or NULL; the attack
 * over): under the bound; or, on a machine busy with other work (the
 * suite runs two tests at a time, under the sanitizers too), under three
 * times the p99 the same client (same token, same tube, every call
 * served) sees without the attack (measured for a second). */
void it_hostile_p99_ok(const struct it_probe_result *r, const char *what,
    const char *url, const char *tube, const char *tok);

/* Stops the probe `p` (of a tls+tcp:// server at `url` whose certificate
 * `ca` signs; `tok` its token or NULL) and checks it beside an attack:
 * every call served, and its p99 under the bound; or, on a machine busy
 * with other work, under three times the p99 of the same client without
 * the attack (measured for a second). */
void it_hostile_probe_tls_ok(struct it_probe *p, const char *what,
    const char *url, const char *tok, const char *ca);

/* Work beside a calm look, as the attack had it, so that the look is a
 * baseline for what the attack itself cost: an attack mounted by client
 * processes (openssl s_client: each start and handshake is tens of ms
 * of CPU on two shared cores) is compared with the same processes doing
 * no harm. `start` runs as the calm look begins, `stop` when it ends. */
struct it_hostile_beside {
	void (*start)(void *arg);
	void (*stop)(void *arg);
	void *arg;
};

/* it_hostile_probe_tls_ok, its calm look run beside `b`. */
void it_hostile_probe_tls_ok_beside(struct it_probe *p, const char *what,
    const char *url, const char *tok, const char *ca,
    const struct it_hostile_beside *b);

#endif
