/* it_node - the nodes of a replicated cluster in a test: a server with a
 * replication URL and a client of its own, killed and restarted, and the
 * comparisons every replication test makes over the wire: a node caught
 * up with another (same epoch, every record), and two nodes in the same
 * state (every task of every tube, in a canonical order, with its state,
 * attempts, priority, run_at and payload; the counts per state; each
 * tube's settings).
 *
 * The nodes live on the test's stack; their clients are also kept in a
 * table so that it_node_teardown closes those a failed test left open
 * (then calls it_teardown). */
#ifndef SLUICE_IT_NODE_H
#define SLUICE_IT_NODE_H

#include <stdint.h>

#include "it.h"

enum {
	IT_NODE_WAIT_MS = 20000, /* the longest a node may take to catch up
	                            (x2 sanitized) */
};

struct it_node {
	struct t_srv *s;
	char repl[64];           /* its --repl-listen URL */
	char follow[64];         /* what --follow names, when set */
	struct sluice_client *c; /* a client of this node alone; NULL
	                            while it is down */
	int slot;
};

/* A server named `name` with --repl-listen on a free port; not started. */
void it_node_init(void **state, struct it_node *n, const char *name);

/* Appends an argument pair (literals, or storage that outlives the
 * test). */
void it_node_arg(struct it_node *n, const char *k, const char *v);

/* Makes `n` start as a follower of `leader` (before it starts). */
void it_node_follows(struct it_node *n, const struct it_node *leader);

/* Starts it (asserted) and opens its client. */
void it_node_start(struct it_node *n);

/* it_node_start of `count` nodes at once: each process started, then
 * each waited for. */
void it_node_start_all(struct it_node *const *ns, int count);

/* Closes its client and kills it with SIGKILL. */
void it_node_kill(struct it_node *n);

/* Closes its client and stops it with `sig` (SIGTERM: a clean stop);
 * t_srv_stop's result. */
int it_node_stop(struct it_node *n, int sig);

/* Its last LSN, and its epoch into *epoch (may be NULL). */
uint64_t it_node_lsn(struct it_node *n, uint64_t *epoch);

/* SLUICE_LEADER or SLUICE_FOLLOWER, as its stats say. */
int it_node_role(struct it_node *n);

/* Waits until `f` holds every record `l` has, at `l`'s epoch (an old
 * leader back as a follower may hold a divergent tail as long as the new
 * leader's log, until it has cut it). Fails the test otherwise. */
void it_node_caught_up(struct it_node *l, struct it_node *f);

/* `b` converges on `a`'s state: it catches up and the two dumps match
 * within IT_NODE_WAIT_MS. A leader may still write after a first look (a
 * new leader releases the leases of sessions it never saw), so one
 * comparison is not enough; a difference that lasts is a failure. */
void it_node_same_state(struct it_node *a, struct it_node *b);

/* Teardown for tests that use nodes. */
int it_node_teardown(void **state);

#endif
