/* cluster - automatic failover on the core thread (--etcd): the election
 * thread's commands carried out, the node's state told to it, and the
 * leader's lease enforced. Without --etcd every call here does
 * nothing (c->cluster is NULL). */
#ifndef SLUICE_SERVER_FAILOVER_CLUSTER_H
#define SLUICE_SERVER_FAILOVER_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "server/failover/elect.h"

struct core;
struct msg_switchover;
struct face_ctx;

/* Starts the election thread (with --etcd). Returns 0 or an error. */
int cluster_open(struct core *c);

/* Stops it, giving the lease up (a clean stop: a follower takes over at
 * once). */
void cluster_close(struct core *c);

/* Readable when the election thread has a command; -1 without --etcd. */
int cluster_fd(const struct core *c);

/* Carries out the thread's commands, fences a leader whose lease runs
 * out, and publishes the node's state. Call every turn. */
void cluster_turn(struct core *c);

/* MSG_OP_CLUSTER: the members as the election thread last read them. */
void cluster_op_view(struct core *c, struct face_ctx *ctx);

/* MSG_OP_SWITCHOVER: on the leader, writes stop; the election thread
 * waits until the named member holds every record, then hands the
 * leader key to it; answered once it leads, or with the reason it did
 * not (writes then resume). */
void cluster_op_switchover(
    struct core *c, struct face_ctx *ctx, const struct msg_switchover *req);

/* The cluster as the election thread last read it (with --etcd only:
 * c->cluster not NULL). */
void cluster_view(const struct core *c, struct elect_view *out);

/* The member a switchover hands the lead to, or was last asked to; "". */
const char *cluster_handover_to(const struct core *c);

/* When a leader's lease runs out (monotonic ms); INT64_MAX. */
int64_t cluster_next_deadline(const struct core *c);

#endif
