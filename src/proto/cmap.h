/* cmap - the cluster map in memory (docs/scaling.md): which cluster owns
 * which tube, and where each cluster's nodes are. Shared by the server
 * (which refuses what its cluster does not own) and libsluice (which
 * routes by it).
 *
 * An entry maps a tube prefix to a cluster; a tube belongs to the entry
 * of the longest prefix that starts its name, the empty prefix being
 * the default. With no entry that matches (no default), a tube is
 * unmapped: every cluster takes it, as before there was a map. An
 * entry may name clusters that still hold tasks of its tubes
 * ("draining"), for a move to come; a node of a draining cluster still
 * takes, acks and serves what it holds, and refuses only new puts.
 *
 * The revision is etcd's: the mod revision of the map's marker key,
 * which every change of the map rewrites in the same transaction. Two
 * maps with the same revision are the same map; 0 is "never written".
 *
 * Each cluster's URLs are one string, "LEADER,MEMBER,...", the leader
 * first when one is known, the form sluice_open() takes. Pure: memory
 * only; the etcd side is server/failover/cmap_etcd.c. */
#ifndef SLUICE_PROTO_CMAP_H
#define SLUICE_PROTO_CMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

struct cmap_entry {
	char prefix[MSG_TUBE_MAX + 1];
	char cluster[MSG_NODE_MAX + 1];
	uint8_t ndraining;
	char draining[MSG_MAP_DRAINING_MAX][MSG_NODE_MAX + 1];
};

struct cmap_cluster {
	char name[MSG_NODE_MAX + 1];
	char leader[MSG_URL_MAX + 1]; /* "" when none is known */
	char *urls;                   /* "LEADER,MEMBER,..."; "" when none */
	char *http; /* their HTTP faces' URLs, the same way; NULL or "" when
	               none is known (read from etcd, not on the wire) */
};

struct cmap {
	uint64_t revision;
	size_t n;
	struct cmap_entry *e; /* sorted by prefix */
	size_t nclusters;
	struct cmap_cluster *c; /* sorted by name */
};

void cmap_init(struct cmap *m);
void cmap_free(struct cmap *m);

/* A deep copy of `src` into `dst` (initialised or freed). -ENOMEM. */
int cmap_copy(struct cmap *dst, const struct cmap *src);

/* Adds an entry (a copy) and keeps them sorted; an entry of the same
 * prefix is replaced. SLUICE_ETUBE for a prefix that is not empty and
 * not of the tube alphabet, SLUICE_EINVAL for a cluster name that is not
 * one (msg_cluster_name_valid) or draining that names the cluster
 * itself, SLUICE_ELIMIT past MSG_MAP_ENTRIES_MAX, -ENOMEM. */
int cmap_put(struct cmap *m, const struct cmap_entry *e);

/* The entry that owns `tube` (`len` bytes), or NULL when none matches. */
const struct cmap_entry *cmap_lookup(
    const struct cmap *m, const char *tube, size_t len);

/* The cluster named `name`, or NULL. */
const struct cmap_cluster *cmap_cluster(const struct cmap *m, const char *name);

/* Adds (or replaces) a cluster's addresses: `leader` ("" or NULL: none
 * known) and the members' client URLs. -ENOMEM, SLUICE_ELIMIT past
 * MSG_MAP_CLUSTERS_MAX. */
int cmap_set_cluster(struct cmap *m, const char *name, const char *leader,
    const char *const *members, size_t n);

/* Sets a cluster's (added first) HTTP URLs: its leader's and its
 * members' --advertise-http, each "" when it publishes none.
 * SLUICE_ENOTFOUND, -ENOMEM. */
int cmap_set_http(struct cmap *m, const char *name, const char *leader,
    const char *const *members, size_t n);

/* The names of every cluster the entries name (owners and draining),
 * each once, sorted, into `out` (up to `max`); returns how many. */
size_t cmap_cluster_names(
    const struct cmap *m, char (*out)[MSG_NODE_MAX + 1], size_t max);

/* The detail of a SLUICE_EMOVED reply, where a "not leader" reply has
 * its leader's URL: "CLUSTER REVISION URL,URL,..." (the URL list may be
 * empty), at most MSG_URL_MAX bytes (URLs that do not fit are left
 * out). Written to `out` (cap bytes). */
void cmap_moved_detail(char *out, size_t cap, const char *cluster,
    uint64_t revision, const char *urls);

/* Parses such a detail: the cluster's name, the revision and the URL
 * list (pointers into `s`: `*urls` is NUL-ended where `s` is). False
 * when `len` bytes at `s` are not one. */
bool cmap_moved_parse(const char *s, size_t len, char cluster[MSG_NODE_MAX + 1],
    uint64_t *revision, char *urls, size_t urls_cap);

/* The map of a decoded map reply. SLUICE_E* or -ENOMEM. */
int cmap_from_msg(struct cmap *m, const struct msg_map *mm);

/* The map as a reply's body: `mm` points into `m` and into arrays
 * allocated here, which cmap_msg_free releases (after the encoding). */
int cmap_to_msg(const struct cmap *m, const char *self, struct msg_map *mm);
void cmap_msg_free(struct msg_map *mm);

#endif
