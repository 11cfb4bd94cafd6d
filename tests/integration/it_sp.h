/* it_sp - the SP-over-TCP framing by hand, for tests that talk to
 * sluiced's tcp:// face through plain sockets: exactly the bytes
 * docs/protocol.md describes, with no SP library whose own behaviour
 * (its close under churn, its redials) could stand between the test and
 * the server. Every wait is bounded by IT_SP_MS. */
#ifndef SLUICE_IT_SP_H
#define SLUICE_IT_SP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

enum { IT_SP_MS = 5000 };

/* A TCP connection to 127.0.0.1:port (asserted), nothing sent yet. */
int it_sp_dial(int port);

/* it_sp_dial, then the req0 header out and the rep0 header back
 * (asserted). */
int it_sp_open(int port);

/* Sends all of `p` (asserted). */
void it_sp_send_all(int fd, const void *p, size_t n);

/* Appends a frame to `out`: the length, `nbt` backtrace words, `len`
 * bytes of `body`. */
void it_sp_frame(struct buf *out, const uint32_t *bt, size_t nbt,
    const void *body, size_t len);

/* Sends one request with a one-word backtrace `id`. */
void it_sp_send(int fd, uint32_t id, const void *body, size_t len);

/* Reads one reply frame: its `nbt` backtrace words into `bt`, the rest
 * into `body`. False when the server closed the connection first (or
 * IT_SP_MS passed). */
bool it_sp_recv(int fd, uint32_t *bt, size_t nbt, struct buf *body);

/* True when the server closes the connection within IT_SP_MS. */
bool it_sp_closed_by_peer(int fd);

#endif
