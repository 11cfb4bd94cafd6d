/* cmap_etcd - the cluster map as it lives in etcd (docs/scaling.md): read
 * it, with each cluster's leader and members, and change it. Blocking,
 * as etcd.h is: the server calls it on its map thread (mapwatch.c),
 * libsluice on the caller's thread when it was given etcd's URLs.
 *
 * Keys, none bound to a lease:
 *   /sluice-map/tubes/PREFIX  {"cluster":"c1"} or
 *                             {"cluster":"c2","draining":["c1"]}
 *                             (PREFIX "" is the default)
 *   /sluice-map/revision      rewritten in the transaction of every
 *                             change: its mod revision is the map's
 *                             revision, so a reader of this one key
 *                             learns of every change, deletes included.
 * A cluster's addresses are in its own keys: /sluice/NAME/leader and
 * /sluice/NAME/members/NODE (docs/replication.md). */
#ifndef SLUICE_ETCD_CMAP_ETCD_H
#define SLUICE_ETCD_CMAP_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/cmap.h"
#include "etcd/etcd.h"

#define CMAP_ETCD_ROOT   "/sluice-map/"
#define CMAP_ETCD_TUBES  "/sluice-map/tubes/"
#define CMAP_ETCD_MARKER "/sluice-map/revision"

/* The mod revision of the marker key (0: the map was never written).
 * An ETCD_E* code. */
int cmap_etcd_revision(struct etcd *e, int64_t *rev);

/* Reads the map's entries and revision into *out (initialised here).
 * An entry whose value is not one (written by hand) is left out and
 * counted in *bad (optional), with the first one's reason in `why`. */
int cmap_etcd_read(
    struct etcd *e, struct cmap *out, size_t *bad, char *why, size_t whylen);

/* Reads the leader and members of every cluster the entries of `m` name
 * (one range per cluster) into its clusters: their client URLs and the
 * HTTP URLs they publish (--advertise-http). */
int cmap_etcd_members(struct etcd *e, struct cmap *m);

/* Reads the leader and members of cluster `name` into `m`'s clusters, as
 * cmap_etcd_members does, whether an entry names it or not (a move's
 * target before the map gives it a tube). */
int cmap_etcd_cluster(struct etcd *e, struct cmap *m, const char *name);

/* Sets an entry; *rev: the map's revision after. */
int cmap_etcd_set(struct etcd *e, const struct cmap_entry *en, int64_t *rev);

/* Sets an entry only if its value still says what `old` says (its
 * cluster and draining list, whatever the value's spacing), in one
 * transaction over the bytes read: a node drops itself from an entry's
 * draining list so, never over a change made since it read the map.
 * *done false when it was not (changed, gone, or not an entry). */
int cmap_etcd_set_if(struct etcd *e, const struct cmap_entry *en,
    const struct cmap_entry *old, bool *done, int64_t *rev);

/* Deletes the entry of `prefix`; *found false when there was none (then
 * nothing changed); *rev: the store's revision. */
int cmap_etcd_delete(
    struct etcd *e, const char *prefix, bool *found, int64_t *rev);

/* Parses an entry's value (`len` bytes of JSON) for `prefix` into *out.
 * False with the reason in `why` when it is not one. */
bool cmap_etcd_parse(const char *prefix, const void *value, size_t len,
    struct cmap_entry *out, char *why, size_t whylen);

#endif
