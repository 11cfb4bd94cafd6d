/* msg_map - the cluster map's messages (docs/scaling.md, docs/protocol.md
 * "The cluster map"): map, map_set, map_delete. Part of msg.h, which
 * includes it where struct msg_str and struct msg_iter are defined:
 * include "proto/msg.h", never this file alone. */
#ifndef SLUICE_PROTO_MSG_MAP_H
#define SLUICE_PROTO_MSG_MAP_H

/* The cluster map (docs/scaling.md): a tube prefix (0 bytes: the
 * default; else 1..MSG_TUBE_MAX bytes of the tube alphabet), the cluster
 * that owns its tubes, and the clusters that still hold tasks of them
 * (draining). Names are 1..MSG_NODE_MAX bytes of [A-Za-z0-9_.:-]. */
enum {
	MSG_MAP_DRAINING_MAX = 8,   /* clusters draining one prefix */
	MSG_MAP_ENTRIES_MAX = 4096, /* prefixes in a map reply */
	MSG_MAP_CLUSTERS_MAX = 64,  /* clusters in a map reply */
};

struct msg_map_entry {
	struct msg_str prefix;
	struct msg_str cluster;
	uint8_t ndraining; /* 0..MSG_MAP_DRAINING_MAX */
	struct msg_str draining[MSG_MAP_DRAINING_MAX];
};

/* One cluster of a map reply: its leader's client URL ("" when none is
 * known) and every member's client URL, as its keys in etcd say. */
struct msg_map_cluster {
	struct msg_str name;
	struct msg_str leader;         /* 0..MSG_URL_MAX */
	uint32_t n;                    /* 0..MSG_CLUSTER_MEMBERS_MAX */
	const struct msg_str *members; /* encode */
	struct msg_iter it;            /* decode: msg_next_url() */
};

/* map: the map at `revision` (etcd's mod revision of its marker key; 0:
 * no map was ever written), the answering node's own cluster, the
 * entries sorted by prefix, and each cluster they name. */
struct msg_map {
	uint64_t revision;
	struct msg_str cluster; /* the answering node's --cluster */
	uint32_t n;             /* 0..MSG_MAP_ENTRIES_MAX */
	const struct msg_map_entry *entries; /* encode */
	struct msg_iter it;                  /* decode: msg_next_map_entry() */
	uint32_t nclusters;                  /* 0..MSG_MAP_CLUSTERS_MAX */
	const struct msg_map_cluster *clusters; /* encode */
	struct msg_iter cit; /* decode: msg_next_map_cluster() */
};

bool msg_next_map_entry(struct msg_iter *it, struct msg_map_entry *out);
bool msg_next_map_cluster(struct msg_iter *it, struct msg_map_cluster *out);
bool msg_next_url(struct msg_iter *it, struct msg_str *out);

/* True when `s` is a cluster's name as the map may hold it: 1..
 * MSG_NODE_MAX bytes of [A-Za-z0-9_.:-]. */
bool msg_cluster_name_valid(struct msg_str s);

#endif
