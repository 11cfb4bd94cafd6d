/* map_ops - the cluster map's calls on a plain handle (sluice_map.h):
 * read it from a node (op map), set and delete its entries through a
 * node (ops map_set, map_delete), and the public view of a struct cmap
 * that sluice_map_read and sluice_router_map return. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "client/map_int.h"
#include "client/ops.h"
#include "proto/cmap.h"

/* The public map and what it points into. `pub` first: the caller's
 * pointer is the block's. */
struct map_block {
	struct sluice_cluster_map pub;
	struct cmap cm;
	char self[MSG_NODE_MAX + 1];
	struct sluice_map_entry *e;
	struct sluice_map_cluster *c;
	const char **draining;
};

void
sluice_cluster_map_free(struct sluice_cluster_map *m)
{
	struct map_block *b = (struct map_block *)m;

	if (b == NULL)
		return;
	cmap_free(&b->cm);
	free(b->e);
	free(b->c);
	free(b->draining);
	free(b);
}

int
map_public(
    const struct cmap *cm, const char *self, struct sluice_cluster_map **out)
{
	struct map_block *b = calloc(1, sizeof(*b));
	size_t nd = 0, k = 0;

	if (b == NULL)
		return SLUICE_ENOMEM;
	if (cmap_copy(&b->cm, cm) != 0)
		goto fail;
	for (size_t i = 0; i < cm->n; i++)
		nd += cm->e[i].ndraining;
	if ((cm->n > 0 && (b->e = calloc(cm->n, sizeof(*b->e))) == NULL) ||
	    (cm->nclusters > 0 &&
	        (b->c = calloc(cm->nclusters, sizeof(*b->c))) == NULL) ||
	    (nd > 0 && (b->draining = calloc(nd, sizeof(char *))) == NULL))
		goto fail;
	for (size_t i = 0; i < b->cm.n; i++) {
		const struct cmap_entry *ce = &b->cm.e[i];

		b->e[i].prefix = ce->prefix;
		b->e[i].cluster = ce->cluster;
		b->e[i].ndraining = ce->ndraining;
		b->e[i].draining = b->draining != NULL ? &b->draining[k] : NULL;
		for (uint8_t d = 0; d < ce->ndraining; d++)
			b->draining[k++] = ce->draining[d];
	}
	for (size_t i = 0; i < b->cm.nclusters; i++) {
		b->c[i].name = b->cm.c[i].name;
		b->c[i].leader = b->cm.c[i].leader;
		b->c[i].urls = b->cm.c[i].urls;
	}
	snprintf(b->self, sizeof(b->self), "%s", self != NULL ? self : "");
	b->pub.revision = b->cm.revision;
	b->pub.self = b->self;
	b->pub.n = b->cm.n;
	b->pub.entries = b->e;
	b->pub.nclusters = b->cm.nclusters;
	b->pub.clusters = b->c;
	*out = &b->pub;
	return 0;
fail:
	sluice_cluster_map_free(&b->pub);
	return SLUICE_ENOMEM;
}

int
map_fetch(struct sluice_client *c, struct cmap *out, char *self, size_t cap)
{
	struct msg_req q = { .op = MSG_OP_MAP };
	struct msg_rep r;
	int rc;

	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if ((rc = cmap_from_msg(out, &r.map)) != 0) {
		client_errmsg(c, "map: the reply does not make a map");
		return rc == -ENOMEM ? SLUICE_ENOMEM : SLUICE_EPROTO;
	}
	if (self != NULL)
		snprintf(
		    self, cap, "%.*s", (int)r.map.cluster.len, r.map.cluster.p);
	return 0;
}

int
sluice_map_read(struct sluice_client *c, struct sluice_cluster_map **out)
{
	char self[MSG_NODE_MAX + 1];
	struct cmap cm;
	int rc;

	if (c == NULL || out == NULL)
		return ops_bad_arg(c, "map: no place for the map");
	if ((rc = map_fetch(c, &cm, self, sizeof(self))) != 0)
		return rc;
	rc = map_public(&cm, self, out);
	cmap_free(&cm);
	return rc;
}

int
sluice_map_set(struct sluice_client *c, const char *prefix, const char *cluster,
    const char *const *draining, size_t ndraining, uint64_t *revision)
{
	struct msg_req q = { .op = MSG_OP_MAP_SET };
	struct msg_rep r;
	int rc;

	if (c == NULL || cluster == NULL)
		return ops_bad_arg(c, "map set: no cluster");
	if (ndraining > MSG_MAP_DRAINING_MAX) {
		client_errmsg(c, "map set: %zu draining clusters, at most %d",
		    ndraining, MSG_MAP_DRAINING_MAX);
		return SLUICE_ELIMIT;
	}
	q.map_set.prefix = msg_cstr(prefix);
	q.map_set.cluster = msg_cstr(cluster);
	q.map_set.ndraining = (uint8_t)ndraining;
	for (size_t i = 0; i < ndraining; i++)
		q.map_set.draining[i] = msg_cstr(draining[i]);
	if (!msg_cluster_name_valid(q.map_set.cluster)) {
		client_errmsg(c,
		    "map set: cluster '%s' is not a cluster's name (1-64 "
		    "bytes of A-Z a-z 0-9 _ . : -)",
		    cluster);
		return SLUICE_EINVAL;
	}
	for (size_t i = 0; i < ndraining; i++)
		if (!msg_cluster_name_valid(q.map_set.draining[i])) {
			client_errmsg(c,
			    "map set: draining cluster '%s' is not a "
			    "cluster's name (1-64 bytes of A-Z a-z 0-9 _ . : "
			    "-)",
			    draining[i] != NULL ? draining[i] : "");
			return SLUICE_EINVAL;
		}
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if (revision != NULL)
		*revision = r.revision;
	return 0;
}

int
sluice_map_delete(
    struct sluice_client *c, const char *prefix, uint64_t *revision)
{
	struct msg_req q = { .op = MSG_OP_MAP_DELETE };
	struct msg_rep r;
	int rc;

	if (c == NULL)
		return SLUICE_EINVAL;
	q.map_prefix = msg_cstr(prefix);
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if (revision != NULL)
		*revision = r.revision;
	return 0;
}
