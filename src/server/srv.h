/* srv - sluiced itself: start-up (recovery), the core thread's event loop,
 * and shutdown. The loop owns the queue and the log writer; every request
 * is decided, logged and applied on it, and answered once the log holds
 * what the answer depends on. */
#ifndef SLUICE_SERVER_SRV_H
#define SLUICE_SERVER_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/config.h"

/* Recovers, serves until SIGTERM or SIGINT, then finishes what is in
 * flight and stops. Returns the process exit code: 0 after a clean stop,
 * 1 when start-up failed (the reason is logged). */
int srv_run(const struct config *cfg);

#endif
