/* sluice_move.h - a tube moved between clusters (docs/scaling.md,
 * "Move a tube"): its tasks copied from the clusters that hold them to the
 * one the map gives it, nothing lost, nothing run twice, resumable.
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_MOVE_H
#define SLUICE_MOVE_H

/* How a move stands, as sluice_router_move reports it. */
struct sluice_move_progress {
	char tube[SLUICE_TUBE_MAX + 1]; /* the tube being copied now */
	char source[65];                /* the cluster it is copied from */
	char target[65];                /* the cluster the map gives it */
	uint64_t copied;   /* tasks copied so far (made, or folded into a
	                      task of their key the target had: one task
	                      per key) */
	uint64_t dropped;  /* tasks removed at their source after the copy */
	uint64_t batches;  /* hold, copy, drop rounds */
	uint64_t waits;    /* rounds that found only taken tasks at the
	                      source, waited for their end */
	uint64_t revision; /* the map's revision after the last change */
	int done;          /* 1: the map names the target alone */
	uint64_t keys;     /* key reservations the target holds for the
	                      sources' (keys of tasks completed there,
	                      within their dedup window), as of the last
	                      pass, after the tasks */
	uint64_t groups;   /* groups whose own settings were copied */
	int stage;         /* the key window (docs/scaling.md, "Keys"):
	                      SLUICE_MOVE_KEYS_PENDING after the map change,
	                      before the source's live keys are held at the
	                      target (a keyed put there is tried again);
	                      SLUICE_MOVE_KEYS_HELD once they are, just before
	                      the target takes keyed puts; 0 otherwise */
};

enum { SLUICE_MOVE_KEYS_PENDING = 1, SLUICE_MOVE_KEYS_HELD = 2 };

typedef void sluice_move_report_fn(
    void *arg, const struct sluice_move_progress *p);

struct sluice_move_opts {
	uint32_t batch;     /* tasks per round, 1..1000; 0: 500 */
	int64_t timeout_ms; /* how long a node may stay unreachable (a
	                       failover) before the move gives up; 0: 60 s */
	int64_t wait_ms;    /* how long to wait for the source's taken tasks
	                       to end (finish or expire), and a workflow
	                       under way there to run; 0: as long as it
	                       takes */
	sluice_move_report_fn *report; /* after each round; NULL: none */
	void *report_arg;
};

/* Moves `tube` to cluster `target` (sluice tube move; docs/scaling.md):
 *  1. the map's entry of `tube` (its exact name as a prefix) becomes
 *     {"cluster": target, "draining": [sources]}: new puts go to the
 *     target, the sources hand out no new task of it once copied, and
 *     their nodes learn it before anything is copied;
 *  2. each source holds a batch of the tube's ready, delayed and buried
 *     tasks for the move (no worker takes them), the target copies them
 *     (ids mapped, with their keys, attempts, last errors, run and
 *     creation times, priorities, ttrs, groups) in one commit, then the
 *     source drops them in one commit; until the source has none left,
 *     and none taken: a taken task finishes or expires at its source (an
 *     expired one is copied in a later round);
 *     A tube with a workflow under way at the source (tasks waiting for
 *     parents, parents a child waits for, children given their parents'
 *     results) is not held until it has run there: the source hands
 *     out the tube's tasks meanwhile (as a drain), the move waits;
 *  3. the tube's settings and its groups' settings (every group's and
 *     each group's own limits and pause) are copied first, and the
 *     reservations of the keys of tasks completed at the source (their
 *     dedup window) before the tasks and again after the last taken task
 *     ended there; at the end the target forgets the source ids, and the
 *     map names the target alone.
 * Every tube of the source whose name `tube` starts and that the entry
 * governs moves with it. Re-running a move interrupted anywhere (a kill
 * -9 of the mover or of any node) resumes it: the map's draining mark
 * says where the tasks still are, a batch held before is copied again
 * (the target makes nothing twice for one source id) and dropped.
 * Returns 0 and `*out` (optional); SLUICE_EINVAL (no target, or a
 * handle opened with neither etcd nor a node), SLUICE_ETUBE,
 * SLUICE_ESTATE (the tube moves to another cluster already: finish that
 * move first; sluice_router_errmsg says which), SLUICE_ETIMEDOUT (a node
 * did not answer within timeout_ms, or taken tasks did not end within
 * wait_ms: run it again), or the error a node answered. */
SLUICE_API int sluice_router_move(struct sluice_router *r, const char *tube,
    const char *target, const struct sluice_move_opts *o,
    struct sluice_move_progress *out);

#endif
