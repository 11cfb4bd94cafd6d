/* map_int - what the cluster map's files of libsluice share (map_ops.c,
 * router.c, router_ops.c). Internal. */
#ifndef SLUICE_CLIENT_MAP_INT_H
#define SLUICE_CLIENT_MAP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/cmap.h"
#include "sluice.h"

/* `cm` as the public map (a copy). SLUICE_ENOMEM. */
int map_public(
    const struct cmap *cm, const char *self, struct sluice_cluster_map **out);

/* The map a node serves, into *out; its own cluster into `self`
 * (optional). The call's error. */
int map_fetch(
    struct sluice_client *c, struct cmap *out, char *self, size_t cap);

struct etcd;

/* One connection per cluster the handle used. */
struct router_conn {
	char *name; /* stable while the handle lives: tasks point to it */
	char *urls; /* what it was opened with */
	struct sluice_client *c;
};

/* A connection of its own per cluster for the waits of a take over
 * several clusters (router_wait.c), each used by one thread at a time:
 * `th` while `running`. */
struct router_waiter {
	char *name;
	struct sluice_client *c;
	pthread_t th;
	bool running;
};

struct sluice_router {
	char *where;                 /* as given */
	struct etcd *etcd;           /* opened with etcd://; else NULL */
	struct sluice_client *seed;  /* opened with nodes: the map's source */
	char self[MSG_NODE_MAX + 1]; /* the seed's cluster: unmapped tubes */
	struct cmap map;
	bool have;
	int64_t checked_ms; /* monotonic ms of the last read */
	struct router_conn *conns;
	size_t nconns;
	struct router_waiter *waiters;
	size_t nwaiters;
	int timeout_ms;
	int refresh_ms; /* sluice_router_set_refresh; 0: on EMOVED only */
	char *token;
	char errmsg[1600];
};

/* Reads the map when over a second old (`force`: now). */
int router_refresh(struct sluice_router *r, bool force);

/* The cluster that owns `tube` (NULL: the default tube), for a put
 * (`put`) or a take: its name in *name. SLUICE_EMOVED when no cluster
 * does (opened with etcd, no entry matches). */
int router_owner(
    struct sluice_router *r, const char *tube, bool put, const char **name);

/* The connection to cluster `name`, opened at need; `*stable`
 * (optional): its name, valid while the handle lives. */
int router_conn(struct sluice_router *r, const char *name,
    struct sluice_client **out, const char **stable);

/* The refusals of one routed call (router_moved): its deadline, the
 * router's timeout from the call's start, and the next wait for a node
 * behind the map. */
struct router_retry {
	int64_t deadline; /* monotonic ms */
	int backoff_ms;
	bool refused; /* a refusal came already */
};

/* The start of a routed call. */
void router_retry_init(const struct sluice_router *r, struct router_retry *t);

/* A SLUICE_EMOVED answer to a call: the map is read again; true when the
 * request is to be routed and sent again. At once when the map read is
 * newer than the one the request went by; after a backoff (50 ms, doubled
 * up to 400 ms) when it is the same one: the node is behind the map (it
 * has not polled it since the change). False once the call's deadline
 * has passed (the first refusal is always routed again), or when the map
 * cannot be read and none is known. */
bool router_moved(struct sluice_router *r, struct router_retry *t);

/* Sets errmsg: "cluster NAME: " and the connection's message. */
void router_err(struct sluice_router *r, const char *cluster,
    const struct sluice_client *c);

/* The URLs cluster `name` is reached at (its connection's, or the given
 * node's for its own cluster); NULL when it has no connection yet. */
const char *router_urls(const struct sluice_router *r, const char *name);

/* A take over the groups of tubes of several clusters, waiting on all of
 * them at once (router_wait.c). */
struct take_group;
int router_wait_take(struct sluice_router *r, const struct sluice_take_opts *o,
    const struct take_group *g, size_t ng, int64_t deadline,
    struct sluice_task **tasks, size_t *n);

/* Ends the waits still under way and frees the waiters' connections. */
void router_wait_close(struct sluice_router *r);

/* The tubes of a take grouped by cluster. */
struct take_group {
	struct sluice_client *c;
	const char *name;
	const char *tubes[MSG_TAKE_TUBES_MAX];
	size_t n;
};

void router_errmsg(struct sluice_router *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
