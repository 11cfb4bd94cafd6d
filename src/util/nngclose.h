/* nngclose - nng_close with a bound on the wait, and a monotonic deadline
 * for pthread_cond_timedwait.
 *
 * nng 1.5.2 can block in nng_close for good when pipes are torn down
 * while the socket closes (peers connecting and disconnecting meanwhile):
 * the close waits for the reaper, and the reaper for a task that was
 * prepared but never started (nng's issue 1543; reported again against
 * 1.7.3 as issue 1813). Waiting for the pipes is normal; waiting for ever
 * is not.
 * Neither the server nor an application may hang on that, so the close
 * runs on a thread of its own and the caller waits at most `ms`. */
#ifndef SLUICE_UTIL_NNGCLOSE_H
#define SLUICE_UTIL_NNGCLOSE_H

#include <stdbool.h>
#include <time.h>

#include <nng/nng.h>

/* Closes `sock`, waiting up to `ms`. True when it closed in time: the
 * caller may free whatever the socket's callbacks use. False when the
 * close is still under way: the callbacks may still run, so the caller
 * frees nothing of theirs; `done(arg)` (optional) runs on the closing
 * thread once nng_close returns, to free it then. */
bool nngclose_within(nng_socket sock, int ms, void (*done)(void *), void *arg);

/* The CLOCK_MONOTONIC time `ms` from now, for a condition variable whose
 * clock was set to CLOCK_MONOTONIC. */
struct timespec nngclose_deadline(int ms);

#endif
