/* mapwatch - the cluster map, read from etcd on a thread of its own
 * (with --etcd), and its changes written there (docs/scaling.md).
 *
 * How a node learns a change: a bounded poll, not etcd's watch. The
 * thread reads the map's marker key every MAPWATCH_POLL_MS (one small
 * range request) and the whole map when its revision moved, and every
 * `full_ms` anyway (--map-reread: an edit by hand that left the marker
 * alone is found then). etcd's v3 watch over the JSON gateway is one HTTP
 * answer that never ends, streamed in chunks, while the etcd client
 * (etcd.c) reads an answer whole through nng's HTTP client: a watch would
 * need an HTTP reader of its own, for a map that changes when an
 * operator moves a tube. The poll bounds the delay (a change is known
 * within MAPWATCH_POLL_MS plus one call) at the cost of five small reads
 * a second per node. The members of every cluster the map names are read
 * every MAPWATCH_MEMBERS_MS, so a refused request names the owner's
 * current leader.
 *
 * The core and the thread meet here: the thread publishes each new map
 * (mapwatch_take) and the answers of the changes the core asked for
 * (mapwatch_ask, mapwatch_answer); mapwatch_fd is readable when either
 * waits. A mutex guards what they share; neither waits for the other. */
#ifndef SLUICE_SERVER_FAILOVER_MAPWATCH_H
#define SLUICE_SERVER_FAILOVER_MAPWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/cmap.h"

enum {
	MAPWATCH_POLL_MS = 200,
	MAPWATCH_MEMBERS_MS = 1000,
	MAPWATCH_ASKS_MAX = 16, /* changes waiting for etcd */
	MAPWATCH_TEXT_MAX = 256,
};

struct mapwatch;

/* The answer to a change. */
struct mapwatch_answer {
	uint64_t id;
	int rc;            /* 0 or SLUICE_E* */
	uint64_t revision; /* the map's after it */
	char text[MAPWATCH_TEXT_MAX];
};

/* Starts the thread for etcd `endpoints`, each call bounded by
 * `timeout_ms`, the whole map read at least every `full_ms`. Returns 0,
 * or -1 with a message in `err`. */
int mapwatch_start(struct mapwatch **out, const char *endpoints, int timeout_ms,
    int full_ms, char *err, size_t errlen);
void mapwatch_stop(struct mapwatch *w);

/* Readable when a new map or an answer waits. */
int mapwatch_fd(const struct mapwatch *w);

/* When a map newer than the one of `*gen` was published: true, a copy of
 * it in *out (the caller frees the one it had first), and *gen moved. */
bool mapwatch_take(struct mapwatch *w, uint64_t *gen, struct cmap *out);

/* Asks the thread to set `en` (del false) or delete the entry of its
 * prefix (del true). False when MAPWATCH_ASKS_MAX wait already. */
bool mapwatch_ask(
    struct mapwatch *w, uint64_t id, bool del, const struct cmap_entry *en);

/* Asks the thread to set `en` only if the entry is still `old` in etcd
 * (answered SLUICE_ESTATE when it changed). False as mapwatch_ask. */
bool mapwatch_ask_if(struct mapwatch *w, uint64_t id,
    const struct cmap_entry *en, const struct cmap_entry *old);

/* The next answer; false when none waits. */
bool mapwatch_answer(struct mapwatch *w, struct mapwatch_answer *out);

/* The last failed etcd call's text, "" after a success. */
void mapwatch_error(struct mapwatch *w, char *out, size_t len);

#endif
