/* sluice_map.h - the cluster map and the routing handle of libsluice
 * (docs/scaling.md): several clusters share the tubes, a map in etcd says
 * which cluster owns which tube, and a routing handle sends each request
 * to the cluster that owns its tube.
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_MAP_H
#define SLUICE_MAP_H

/* ---- the map -------------------------------------------------------- */

/* An entry: the tubes whose names start with `prefix` ("" the default)
 * belong to `cluster`; `draining` clusters still hold tasks of them. A
 * tube belongs to the entry of the longest prefix that starts it. */
struct sluice_map_entry {
	const char *prefix;
	const char *cluster;
	size_t ndraining;
	const char *const *draining;
};

/* A cluster the map names, as its keys in etcd say: its leader's client
 * URL ("" when none is known) and "LEADER,MEMBER,..." (the leader
 * first), the form sluice_open takes ("" when no member is known). */
struct sluice_map_cluster {
	const char *name;
	const char *leader;
	const char *urls;
};

struct sluice_cluster_map {
	uint64_t revision; /* etcd's; 0: the map was never written */
	const char *self;  /* the cluster of the node that answered; "" when
	                      read from etcd */
	size_t n;
	const struct sluice_map_entry *entries; /* sorted by prefix */
	size_t nclusters;
	const struct sluice_map_cluster *clusters; /* sorted by name */
};

SLUICE_API void sluice_cluster_map_free(struct sluice_cluster_map *m);

/* The map as the node `c` is connected to last read it (op map: any
 * node of any cluster with --etcd serves it; every role may read it).
 * Returns 0 and `*out` (free with sluice_cluster_map_free);
 * SLUICE_ESTATE (a node without --etcd, or one that has not read the
 * map yet: sluice_errmsg says which). Retried after a lost connection. */
SLUICE_API int sluice_map_read(
    struct sluice_client *c, struct sluice_cluster_map **out);

/* Maps the tubes of `prefix` ("" or NULL: the default) to `cluster`,
 * with `ndraining` clusters still draining them (0..8), in etcd, through
 * the node `c` is connected to (the leader of its cluster; the admin's
 * role with --auth). `*revision` (optional): the map's after. Errors:
 * SLUICE_ETUBE (a prefix not of the tube alphabet), SLUICE_EINVAL (a
 * cluster name not 1-64 bytes of [A-Za-z0-9_.:-], the owner also
 * draining, a name twice), SLUICE_ELIMIT, SLUICE_ESTATE (no --etcd, or
 * etcd refused), SLUICE_ETIMEDOUT (etcd did not answer: the change may
 * or may not be made), SLUICE_EPERM. */
SLUICE_API int sluice_map_set(struct sluice_client *c, const char *prefix,
    const char *cluster, const char *const *draining, size_t ndraining,
    uint64_t *revision);

/* Removes the entry of `prefix` ("" or NULL: the default).
 * SLUICE_ENOTFOUND when there is none; else as sluice_map_set. */
SLUICE_API int sluice_map_delete(
    struct sluice_client *c, const char *prefix, uint64_t *revision);

/* ---- the routing handle --------------------------------------------- */

struct sluice_router;

/* Opens a routing handle. `where` is either etcd's client URLs,
 * "etcd://HOST:PORT[,HOST:PORT...]" (the handle reads the map and the
 * clusters' members from etcd itself), or sluice nodes, "tcp://...[,...]"
 * as sluice_open takes them: any node of any cluster, which serves the
 * map (op map), so that the client needs no access to etcd. Nothing is
 * read yet: the first call reads the map. Returns 0 and `*out` (close
 * with sluice_router_close); SLUICE_EINVAL (a bad URL), SLUICE_ENOMEM.
 *
 * The handle keeps one connection (a struct sluice_client) per cluster
 * it uses, opened with that cluster's members: each follows its
 * cluster's failover as sluice_open's handles do. Before a call it reads
 * the map again when it last did over a second ago
 * (sluice_router_set_refresh; its revision first, from etcd; the whole
 * map, from a node). A node that answers
 * SLUICE_EMOVED (the map moved the tube; the handle's map was older)
 * makes it read the map at once and send the request again, to the
 * owner: the refused request was done nowhere. When the map read is the
 * one the request went by, the node is the one behind (it has not yet
 * polled the change): the request goes to it again after 50 ms, then
 * after waits doubled up to 400 ms, until it catches up. Either way the
 * call's timeout (sluice_router_set_timeout; the default when < 0),
 * counted from the call's start, bounds these retries: past it the call
 * returns SLUICE_EMOVED. A tube no entry matches
 * goes to the cluster of the node the handle was given (opened with
 * nodes), or is refused SLUICE_EMOVED (opened with etcd: there is no
 * default to send it to).
 *
 * Threads: as a struct sluice_client, one thread at a time. */
SLUICE_API int sluice_open_map(const char *where, struct sluice_router **out);
SLUICE_API void sluice_router_close(struct sluice_router *r);

/* Sets every connection's call timeout (sluice_set_timeout), now and
 * for those opened later; it also bounds a call's retries after
 * SLUICE_EMOVED (sluice_open_map). */
SLUICE_API void sluice_router_set_timeout(struct sluice_router *r, int ms);

/* How old the handle's map may grow before a call reads it again, in ms
 * (default 1000); 0: never by age, only when a node answers
 * SLUICE_EMOVED (or sluice_router_map is called). */
SLUICE_API void sluice_router_set_refresh(struct sluice_router *r, int ms);

/* The token every connection sends (sluice_set_token). */
SLUICE_API int sluice_router_set_token(
    struct sluice_router *r, const char *token);

/* The detail of the last failed call, naming the cluster. Never NULL. */
SLUICE_API const char *sluice_router_errmsg(const struct sluice_router *r);

/* Reads the map now; `*out` (optional): a copy of it (free with
 * sluice_cluster_map_free). */
SLUICE_API int sluice_router_map(
    struct sluice_router *r, struct sluice_cluster_map **out);

/* The connection to the cluster that owns `tube`, for the calls the
 * handle does not route itself (peek, list, tube settings, ...): owned
 * by the handle, valid until it is closed. `*cluster` (optional): its
 * name. */
SLUICE_API int sluice_router_client(struct sluice_router *r, const char *tube,
    struct sluice_client **c, const char **cluster);

/* The connection to cluster `name` (one the map names, or the given
 * node's own), as sluice_router_client. SLUICE_ECONN when no member of
 * it is known. */
SLUICE_API int sluice_router_cluster(
    struct sluice_router *r, const char *name, struct sluice_client **c);

/* sluice_map_set and sluice_map_delete through the handle: written to
 * etcd directly when it was opened with etcd's URLs (anyone who reaches
 * etcd may: --auth does not guard etcd), else through the node it was
 * given. Errors as theirs; through etcd, SLUICE_ECONN or
 * SLUICE_ETIMEDOUT when etcd does not answer. */
SLUICE_API int sluice_router_map_set(struct sluice_router *r,
    const char *prefix, const char *cluster, const char *const *draining,
    size_t ndraining, uint64_t *revision);
SLUICE_API int sluice_router_map_delete(
    struct sluice_router *r, const char *prefix, uint64_t *revision);

/* sluice_put_ex routed by o->tube. */
SLUICE_API int sluice_router_put(struct sluice_router *r,
    const struct sluice_put_opts *o, const void *payload, size_t len,
    struct sluice_put_result *res);

/* sluice_put_batch routed by each item's tube: the items of each cluster
 * go in one request, one commit on that cluster, so the whole is not
 * atomic across clusters. Returns 0 when every cluster answered for its
 * items (each item's rc says its own fate); else the first failing
 * request's error, and the items of a cluster that did not answer have
 * that error as their rc (those of the others are set as answered). */
SLUICE_API int sluice_router_put_batch(
    struct sluice_router *r, struct sluice_batch_item *items, size_t n);

/* sluice_take routed by the tubes: to each tube's owner, and to the
 * clusters the map says still drain it, asked first (their old tasks are
 * not starved). Tubes of one cluster: one take there.
 * Tubes of several: each cluster is asked at once without waiting; then,
 * with o->wait_ms, the handle waits on all of them at once (a thread and
 * a connection of its own per cluster, each taking with waits of at most
 * 200 ms until the wait is over) and returns the first tasks that come.
 * The other waits are cancelled: each ends after its current 200 ms, and
 * a task one of them took meanwhile is released at once, back at its
 * place, never returned; so no task is returned twice. No priority order
 * holds across clusters. Each task's `cluster` names the cluster it came
 * from (valid while the handle is open): the lease calls below send its
 * ack there. */
SLUICE_API int sluice_router_take(struct sluice_router *r,
    const struct sluice_take_opts *o, struct sluice_task **tasks, size_t *n);

/* The lease calls, sent to the cluster the task came from (t->cluster;
 * a task without one, to the owner of t->tube). As sluice_ack_opts,
 * sluice_release_opts, sluice_fail, sluice_touch, sluice_bury_error. */
SLUICE_API int sluice_router_ack(struct sluice_router *r,
    const struct sluice_task *t, const struct sluice_ack_opts *o,
    struct sluice_after *after);
SLUICE_API int sluice_router_release(struct sluice_router *r,
    const struct sluice_task *t, const struct sluice_release_opts *o,
    struct sluice_after *after);
SLUICE_API int sluice_router_fail(struct sluice_router *r,
    const struct sluice_task *t, const char *error, int64_t delay_ms,
    struct sluice_after *after);
SLUICE_API int sluice_router_touch(struct sluice_router *r,
    const struct sluice_task *t, struct sluice_after *after);
SLUICE_API int sluice_router_bury(struct sluice_router *r,
    const struct sluice_task *t, const char *error, struct sluice_after *after);

/* The stats of every cluster the map names (tube NULL: every tube), and
 * their sum. */
struct sluice_router_stats {
	uint64_t ready, delayed, taken, buried; /* summed */
	size_t n;
	struct {
		const char *cluster;
		int rc;                     /* 0, or why it did not answer */
		struct sluice_stats *stats; /* NULL unless rc is 0 */
	} * per;
};
SLUICE_API int sluice_router_stats(struct sluice_router *r, const char *tube,
    struct sluice_router_stats **out);
SLUICE_API void sluice_router_stats_free(struct sluice_router_stats *s);

#endif
