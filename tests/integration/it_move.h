/* it_move - what the tests of a tube's move share (test_move.c,
 * test_move_carry.c; docs/scaling.md): nodes of named clusters that read
 * the map in it_etcd's etcd, a routing handle on that map, waits for a
 * node to lead and to take writes, and the count of a tube's tasks at a
 * node. Every wait is bounded and fails the test when it ends; timeouts
 * are doubled under the sanitizers (it_move_scaled).
 *
 * Compiled only into the move tests (tests/integration/CMakeLists.txt),
 * which run their tests with IT_ETCD_RUN. */
#ifndef SLUICE_IT_MOVE_H
#define SLUICE_IT_MOVE_H

#include <stdbool.h>
#include <stdint.h>

#include "it_node.h"

enum {
	IT_MOVE_ELECT_MS = 30000, /* the longest a node may take to lead or
	                             to take writes, and a routing handle's
	                             calls (x2 sanitized) */
};

/* `ms`, doubled under the sanitizers. */
int64_t it_move_scaled(int64_t ms);

/* A node `name` of cluster `cluster` on it_etcd (--etcd, --cluster,
 * --node), with --sync-replicas 1 when `sync`; not started. */
void it_move_node_init(void **state, struct it_node *n, const char *name,
    const char *cluster, bool sync);

/* A routing handle on it_etcd's map (asserted), its calls' timeout
 * IT_MOVE_ELECT_MS. */
struct sluice_router *it_move_router(void);

/* Waits until `n`'s stats say `role` (SLUICE_LEADER, SLUICE_FOLLOWER). */
void it_move_wait_role(struct it_node *n, int role);

/* Waits until `n` serves writes: its stats say leader and a put into
 * `tube` (one its cluster owns) succeeds. */
void it_move_wait_writes_to(struct it_node *n, const char *tube);

/* it_move_wait_writes_to of tube "probe". */
void it_move_wait_writes(struct it_node *n);

/* The tasks of `tube` at node `c`: every state. */
uint64_t it_move_live_in(struct sluice_client *c, const char *tube);

#endif
