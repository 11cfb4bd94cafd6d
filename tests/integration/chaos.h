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
 * With moves (chaos.moves; SLUICE_CHAOS_MOVES=1, or the fault kind
 * "move"): one etcd, the three nodes a cluster "ca" that elects its
 * leader there (--etcd; a failover is the leader killed and another
 * elected, a SIGSTOP of the leader may end its lease, so it counts as a
 * crash), a second cluster "cb" of one node (CHAOS_B_NODE), and the map
 * giving every tube to "ca" but "mv", which the nemesis moves from one
 * cluster to the other and back (chaos_move.c): the real `sluice tube
 * move` in a child process, sometimes killed -9 and run again, or with
 * the source's leader or the target's node killed in the middle. More
 * client threads (chaos_mvload.c) put, take and work tube "mv" through
 * the map (sluice_open_map), so that each request follows the tube; the
 * history names their tasks by payload (HIST_MV).
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
#include "t_etcd.h"

enum {
	CHAOS_NODES = 3,
	CHAOS_LIB_MAX = 16,
	CHAOS_BS_MAX = 8,
	CHAOS_TMPFS_MB = 48, /* each node's disk, when the test is root */
	CHAOS_TMPFS_MOVES_MB = 192, /* with moves: a move must end, and a
	                               long run's tasks outgrow 48 MB in
	                               about five minutes (the log then
	                               refuses new work for good) */
	CHAOS_TTR_MAX_MS = 4000,    /* the longest ttr a client puts */
	CHAOS_CAP = 6,    /* "lib"'s concurrency cap (the history's rule cap) */
	CHAOS_GROUPS = 4, /* "lib"'s tasks go into fair groups g1..g4 */
	CHAOS_GCAP = 2,   /* each group's cap (the rule cap too) */
	CHAOS_SCHEDS = 4, /* schedules chaos-s1.. firing every minute into
	                     tube "sched" (the history's rule slot) */
	CHAOS_SLOT_LEAD_MS = 8000, /* the nodes' clock reads a minute this
	                              long after chaos_init */
	CHAOS_MV_MAX = 8,          /* client threads of tube "mv" */
	CHAOS_B_NODE = 3, /* cluster "cb"'s node, in the history's faults */
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
	char name[8]; /* --node, with moves */
};

struct chaos_figures {
	atomic_ulong ops;
	atomic_ulong unknown;
	unsigned long faults;
	unsigned long unhealthy;    /* faults after which the cluster did not
	                               heal within the wait */
	unsigned long moves;        /* moves of tube "mv" done */
	unsigned long mover_kills;  /* movers killed -9 and run again */
	unsigned long move_crashes; /* nodes killed in a move's middle */
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
	atomic_uint starts; /* node starts: every other one writes three
	                     * batches at once (--wal-inflight 3) */
	pthread_mutex_t mu;
	char err[512];          /* the first harness failure, "" when none */
	int64_t clock_shift_ms; /* the nodes' wall clock minus ours */
	/* with moves */
	bool moves;
	struct t_etcd etcd;
	char etcd_map[80];   /* etcd://127.0.0.1:PORT, for sluice_open_map */
	struct chaos_node b; /* cluster "cb"'s one node */
	atomic_int mv_owner; /* 0: "ca" owns tube "mv"; 1: "cb" */
};

/* Fills `c` for three nodes in the test's directory (on tmpfs mounts
 * when root: see chaos_private_mounts); starts none. The nodes run
 * sluiced-fault (no fault point armed) for its SLUICE_CLOCK_SHIFT_MS,
 * which chaos_init sets so that their clock reaches a minute
 * CHAOS_SLOT_LEAD_MS from now: a schedule's slot then comes within the
 * load (and every minute after). */
void chaos_init(
    struct chaos *c, void **state, struct hist *h, uint64_t seed, bool moves);

/* Makes `c` (after chaos_init, before chaos_start) run with moves: an
 * etcd in the test's directory is started, and the second cluster's
 * node made ready. 0 or -1 (chaos.err). */
int chaos_init_moves(struct chaos *c, void **state);

/* Kills cluster "cb"'s node and etcd (the teardown). */
void chaos_stop_moves(struct chaos *c);

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

/* ---- moves (chaos_move.c) ---- */

/* The cluster's name of chaos.mv_owner's value. */
const char *chaos_cluster_name(int owner);

/* Starts `n` with the cluster's flags of moves (--etcd, --cluster,
 * --node) after the `k` arguments already in its args; returns the new
 * count. */
int chaos_move_args(struct chaos *c, struct chaos_node *n, int k);

/* With moves, the node of cluster "ca" that leads now, looked up (and
 * set in chaos.leader); NULL when none answers as leader. */
struct chaos_node *chaos_find_leader(struct chaos *c);

/* Starts cluster "cb" and writes the map: the default and "mv" to "ca".
 * 0 or -1 (chaos.err). */
int chaos_start_moves(struct chaos *c);

/* The fault "move": tube "mv" moved to the cluster that does not own it,
 * with, drawn from `rng`, the mover killed -9 and run again, or the
 * source's leader or the target's node killed in the middle; recorded
 * in the history. 0 once the move is done, or -1 (chaos.err). */
int chaos_move(struct chaos *c, uint64_t *rng);

/* A thread that looks at both clusters' epochs every 100 ms and records
 * each new one as a crash (HIST_F_ELECT): a leader may lose its lease in
 * etcd with no fault of the nemesis. Stopped (and chaos.stop set) by
 * chaos_watch_stop. */
struct chaos_watch;
struct chaos_watch *chaos_watch_start(struct chaos *c);
void chaos_watch_stop(struct chaos_watch *w);

/* (Re)starts a node of either cluster: chaos_node.c's start. */
int chaos_node_start(struct chaos *c, struct chaos_node *n);

/* Records a fault in the history (chaos_node.c). */
void chaos_record(
    struct chaos *c, int type, int kind, int node, int64_t t0, int64_t t1);
/* ---- the load (chaos_load.c) ---- */

struct chaos_load;

/* Starts `nlib` libsluice and `nbs` beanstalk client threads, and one
 * that takes the schedules' tasks and records each (HIST_FIRE); with
 * moves, `nmv` threads of tube "mv" through the map too. */
struct chaos_load *chaos_load_start(
    struct chaos *c, int nlib, int nbs, int nmv);

/* What a libsluice call's result says of its change: HIST_OK, HIST_UNKNOWN
 * (no reply came, or the reply leaves its fate open) or HIST_ERR. */
int chaos_lib_outcome(int rc);

/* Adds a finished operation to the history and to the run's counts. */
void chaos_add(struct chaos *c, struct hist_op *op);

/* ---- the clients of tube "mv" (chaos_mvload.c) ---- */

struct chaos_mv;

/* Starts `n` threads putting into and working tube "mv" through the map. */
struct chaos_mv *chaos_mv_start(struct chaos *c, int n);

/* Joins them (chaos.stop is set) and frees them. */
void chaos_mv_stop(struct chaos_mv *m);

/* Sets chaos.stop, joins every thread (each ends within a few call
 * timeouts) and frees the load. */
void chaos_load_stop(struct chaos_load *l);

#endif
