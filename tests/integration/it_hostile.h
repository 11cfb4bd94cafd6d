/* it_hostile - what the hardening tests (test_hostile_*.c) share: a token
 * file holding the server's own hash of a token, a CA and a certificate
 * for a tls+tcp:// server, a stats counter awaited, a raw socket the
 * server is expected to close, and a healthy client's look beside an
 * attack, judged against its twin's.
 *
 * Every wait is bounded by the milliseconds its caller gives. */
#ifndef SLUICE_IT_HOSTILE_H
#define SLUICE_IT_HOSTILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "it_probe.h"

enum {
	IT_HOSTILE_P99_MS = 50, /* a healthy client's p99 under an attack */
	IT_HOSTILE_P99_SAN_MS = 250, /* the same under the sanitizers */
};

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

/* A look at a healthy client beside an attack (an it_probe: put, take and
 * ack of one task at a time), and at its twin: the same client of a
 * second sluiced, started for the look with the same transport
 * (tcp://, tls+tcp:// or ws://) and nothing else, timed over the same
 * window on the same machine. The twin is the baseline: the suite runs
 * tests side by side, under the sanitizers too, and the machine's fsync
 * and scheduling stalls slow both clients alike, where the attack slows
 * only the one it is aimed at. (A calm look taken after the attack saw
 * another moment of the machine, and was the calmer one by chance often
 * enough to fail the suite: 85 ms against 24.) */
struct it_look {
	struct it_probe probe;      /* the client of the server attacked */
	struct it_probe twin_probe; /* the same client of the twin */
	struct t_srv *twin; /* for work to mount beside it, as the attack */
	struct it_probe_result r, twin_r; /* set by it_look_stop */
};

/* Starts the twin of `s` (its transport read from s->url; for
 * tls+tcp://, `ca` is it_hostile_tls_setup's, NULL otherwise) as a
 * server of the test `state`, and both clients on `tube`, the client of
 * `s` sending `tok` first (NULL: none); returns once both time their
 * calls. */
void it_look_start(struct it_look *l, void **state, const struct t_srv *s,
    const char *tube, const char *tok, const char *ca);

/* Stops both clients at once, then the twin; asserts that every call of
 * both was served and that each made over `min_calls`. Returns l->r. */
struct it_probe_result it_look_stop(
    struct it_look *l, const char *what, size_t min_calls);

/* The client's p99 beside the attack (after it_look_stop): under
 * it_hostile_p99_bound, or under three times its twin's. */
void it_look_p99_ok(const struct it_look *l, const char *what);

/* it_look_stop (over 20 calls each), then it_look_p99_ok. */
void it_look_ok(struct it_look *l, const char *what);

#endif
