/* chaos - a replicated sluice cluster under faults, and clients that
 * record everything they ask of it in a history (tests/history), for
 * test_chaos.c to judge.
 *
 * The cluster: three real sluiced on 127.0.0.1, a leader and two
 * followers, every one with --sync-replicas 1 and a beanstalk port. The
 * clients: threads, each with its own libsluice handle given every node's
 * URL, and threads speaking beanstalk's protocol (bsc.c) to the leader's
 * beanstalk port. Tube "lib" has a concurrency cap (CHAOS_CAP), and its
 * tasks go into fair groups each capped at CHAOS_GCAP; the history's
 * takes carry the caps and the group with their ttr, so that the checker
 * can tell that each held at every moment. The nemesis (the test's own thread)
 * injects one fault
 * at a time: kill -9 of the leader or of a follower and a restart,
 * SIGSTOP then SIGCONT, a full disk on the leader (its data directory is
 * on a tmpfs of its own, which the nemesis fills with a ballast file),
 * and a failover: the leader killed, the most advanced follower promoted,
 * the other re-pointed, the old leader back as a follower.
 *
 * Nothing here asserts: client threads and the nemesis must not leave the
 * test through cmocka while others run. A harness failure (a node that
 * will not start, a promote refused) is written to chaos.err, ends the
 * load, and fails the test once every thread is joined. */
#ifndef SLUICE_CHAOS_H
#define SLUICE_CHAOS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "history.h"
#include "it.h"

enum {
	CHAOS_NODES = 3,
	CHAOS_LIB_MAX = 16,
	CHAOS_BS_MAX = 8,
	CHAOS_TMPFS_MB = 48,     /* each node's disk, when the test is root */
	CHAOS_TTR_MAX_MS = 4000, /* the longest ttr a client puts */
	CHAOS_CAP = 6,    /* "lib"'s concurrency cap (the history's rule cap) */
	CHAOS_GROUPS = 4, /* "lib"'s tasks go into fair groups g1..g4 */
	CHAOS_GCAP = 2,   /* each group's cap (the rule cap too) */
	CHAOS_SCHEDS = 4, /* schedules chaos-s1.. firing every minute into
	                     tube "sched" (the history's rule slot) */
	CHAOS_SLOT_LEAD_MS = 20000, /* the nodes' clock reads a minute this
	                               long after chaos_init */
};

struct chaos_node {
	struct t_srv *s;
	int idx;
	char repl[64]; /* its --repl-listen URL */
	char bs[40];   /* its --beanstalk address */
	int bs_port;
	char follow[64]; /* the leader it follows; "" when it leads */
	char mnt[400];   /* its tmpfs, "" when none */
	char ballast[440];
};

struct chaos_figures {
	atomic_ulong ops;
	atomic_ulong unknown;
	unsigned long faults;
	unsigned long unhealthy; /* faults after which the cluster did not
	                            heal within the wait */
};

struct chaos {
	struct hist *h;
	uint64_t seed;
	struct chaos_node node[CHAOS_NODES];
	atomic_int leader; /* index of the node that leads */
	char urls[CHAOS_NODES * 64];
	bool tmpfs;  /* data on tmpfs: the disk fault can run */
	int call_ms; /* a client call's timeout */
	int connect_ms;
	atomic_bool stop; /* the clients end */
	int64_t end_ms;   /* it_mono_ms() when the load ends */
	struct chaos_figures fig;
	pthread_mutex_t mu;
	char err[512];          /* the first harness failure, "" when none */
	int64_t clock_shift_ms; /* the nodes' wall clock minus ours */
};

/* Fills `c` for three nodes in the test's directory (on tmpfs mounts
 * when root: see chaos_private_mounts); starts none. The nodes run
 * sluiced-fault (no fault point armed) for its SLUICE_CLOCK_SHIFT_MS,
 * which chaos_init sets so that their clock reaches a minute
 * CHAOS_SLOT_LEAD_MS from now: a schedule's slot then comes within the
 * load (and every minute after). */
void chaos_init(struct chaos *c, void **state, struct hist *h, uint64_t seed);

/* Called once, before any thread exists: a mount namespace of the
 * process's own, so tmpfs mounts vanish with it even if it is killed.
 * True when mounts can be made (root). */
bool chaos_private_mounts(void);

/* Starts node 0 as the leader and the others as its followers, and
 * waits until both follow. 0 or -1 (chaos.err). */
int chaos_start(struct chaos *c);

/* Records a harness failure (the first one is kept) and ends the load. */
void chaos_fail(struct chaos *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

bool chaos_failed(struct chaos *c);

/* One fault of `kind` (enum hist_fault), its length drawn from `rng`,
 * recorded in the history. Every node runs again when it returns (0),
 * and with `settle` the followers have joined the leader too (or 15 s
 * went by); -1: the harness failed. */
int chaos_fault(struct chaos *c, int kind, uint64_t *rng, bool settle);

/* Undoes whatever is left of a fault (SIGCONT, the ballast, dead nodes
 * restarted as followers of the leader), then waits for the leader to
 * have both followers. 0 or -1. */
int chaos_heal(struct chaos *c);

/* Waits up to `ms` for the leader to lead with every follower connected.
 * True when it does. */
bool chaos_healthy(struct chaos *c, int ms);

/* Unmounts the tmpfs mounts (after the nodes are dead). */
void chaos_unmount(struct chaos *c);

/* A libsluice handle on `urls` with the chaos timeouts, or NULL. */
struct sluice_client *chaos_client(struct chaos *c, const char *urls);

/* Gives tube "lib" its concurrency cap, CHAOS_CAP, and every group of it
 * CHAOS_GCAP, on the leader (before
 * the load: the tube is made by a setting no put overrides, its ttr). 0
 * or -1 (chaos.err). */
int chaos_cap(struct chaos *c);

/* Sets CHAOS_SCHEDS schedules, chaos-s1.., every minute into tube
 * "sched" (catch-up one), on the leader. 0 or -1 (chaos.err). */
int chaos_sched(struct chaos *c);
/* ---- the load (chaos_load.c) ---- */

struct chaos_load;

/* Starts `nlib` libsluice and `nbs` beanstalk client threads, and one
 * that takes the schedules' tasks and records each (HIST_FIRE). */
struct chaos_load *chaos_load_start(struct chaos *c, int nlib, int nbs);

/* Sets chaos.stop, joins every thread (each ends within a few call
 * timeouts) and frees the load. */
void chaos_load_stop(struct chaos_load *l);

#endif
