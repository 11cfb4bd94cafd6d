/* it_move - what the tests of a tube's move share (test_move.c,
 * test_move_carry.c, test_move_window.c; docs/scaling.md): nodes of named
 * clusters that read the map in it_etcd's etcd, a pair of one-node
 * clusters, a routing handle on that map, waits for a node to lead and
 * to take writes, the count of a tube's tasks at a node, and a mover
 * killed in the middle of a move. Every wait is bounded and fails the test when
 * it ends; timeouts are doubled under the sanitizers (it_move_scaled).
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
 * --node), with --sync-replicas 1 when `sync` and, in plain builds,
 * --leader-ttl 2s (a later --leader-ttl overrides it); not started. */
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

/* Two nodes on it_etcd, `a` of cluster `ca` and `b` of `cb`, each its
 * cluster's one node and named after it: it_move_pair_init makes them
 * (not started: a test may add arguments), it_move_pair_start starts
 * both, waits until both take writes and gives a routing handle on a map
 * that gives `tube` to `ca`. */
void it_move_pair_init(void **state, struct it_node *a, struct it_node *b,
    const char *ca, const char *cb);
struct sluice_router *it_move_pair_start(
    struct it_node *a, struct it_node *b, const char *ca, const char *tube);

/* A mover of `tube` to `to`, through its own routing handle, that dies at
 * `stage` (SLUICE_MOVE_KEYS_PENDING: right after the map change, the
 * target's keys pending; SLUICE_MOVE_KEYS_HELD: once the keys are
 * placeholders at the target, before it takes keyed puts): its thread
 * ends there, in the middle of the move, as a process killed -9 would.
 * Fails the test when the move ends before that stage. */
void it_move_killed_at(const char *tube, const char *to, int stage);

#endif
