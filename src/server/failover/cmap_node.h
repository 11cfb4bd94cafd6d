/* cmap_node - the cluster map on the core thread (--etcd): the map the
 * map thread (mapwatch.c) last read, the check that refuses a request
 * for a tube another cluster owns (SLUICE_EMOVED), and the map, map_set
 * and map_delete operations. Without --etcd every call here does nothing
 * and every request is admitted (c->cmapn is NULL). */
#ifndef SLUICE_SERVER_FAILOVER_CMAP_NODE_H
#define SLUICE_SERVER_FAILOVER_CMAP_NODE_H

#include <stdbool.h>
#include <stdint.h>

struct core;
struct face_ctx;
struct msg_req;

/* Starts the map thread (with --etcd). Returns 0 or -1 (logged). */
int cmap_node_open(struct core *c);
void cmap_node_close(struct core *c);

/* Readable when the map thread has a new map or an answer; -1 without
 * --etcd. */
int cmap_node_fd(const struct core *c);

/* Takes a new map, answers the changes etcd made. Call every turn. */
void cmap_node_turn(struct core *c);

/* Whether `r` may run on this node by the map: true, or false once it
 * was answered SLUICE_EMOVED, the owner's name, revision and URLs in the
 * reply's detail (docs/protocol.md). Puts and takes are checked: a put
 * for a tube the map gives to another cluster, a take of one that this
 * cluster is not even draining. Before the first map is read, and for
 * tubes no entry matches, every request is admitted. */
bool cmap_node_admit(
    struct core *c, struct face_ctx *ctx, const struct msg_req *r);

/* The map's figures for stats: the revision this node knows (0: none
 * read), its entries, and the requests answered SLUICE_EMOVED since
 * start. False without --etcd. */
bool cmap_node_figures(const struct core *c, uint64_t *revision,
    uint64_t *entries, uint64_t *moved);

/* MSG_OP_MAP: the map and its clusters' members as last read. */
void cmap_node_op_map(struct core *c, struct face_ctx *ctx);

/* MSG_OP_MAP_SET, MSG_OP_MAP_DELETE: handed to the map thread, answered
 * once etcd has (the map's new revision), or with why not. */
void cmap_node_op_change(
    struct core *c, struct face_ctx *ctx, const struct msg_req *r);

#endif
