/* preflight - what sluiced checks before it touches the disk. A start
 * that is bound to fail for an address (taken, not this machine's, two
 * flags on one port) must fail before it creates the data directory, a
 * segment or an epoch: so every address sluiced is to listen on is bound
 * here first, all at once, then released. */
#ifndef SLUICE_SERVER_PREFLIGHT_H
#define SLUICE_SERVER_PREFLIGHT_H

#include "server/config.h"

/* Binds --listen, --repl-listen, --http and --beanstalk together, then
 * releases them. Returns 0; or logs which flag's address cannot be
 * listened on and why, and returns 1 (sluiced's exit code for a failed
 * start). The URLs' syntax was checked with the flags. */
int preflight_check(const struct config *cfg);

#endif
