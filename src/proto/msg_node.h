/* msg_node - the messages about the node and its cluster: the members
 * as the answering node read them from etcd (cluster's reply). Part of
 * msg.h, which includes it where its types are needed: include msg.h.
 * Encoded and decoded by msg_node.c. */
#ifndef SLUICE_PROTO_MSG_NODE_H
#define SLUICE_PROTO_MSG_NODE_H

enum {
	MSG_NODE_MAX = 64, /* a node's or a cluster's name (--node, --cluster):
	                      1-64 bytes, no NUL byte */
	MSG_CLUSTER_MEMBERS_MAX = 64, /* members in a cluster reply */
};

/* One member of a cluster, by the key it keeps in etcd. */
struct msg_member {
	struct msg_str name;   /* --node, 1..MSG_NODE_MAX bytes */
	struct msg_str client; /* its client URL (--advertise),
	                          0..MSG_URL_MAX */
	struct msg_str repl;   /* its replication URL, 0..MSG_URL_MAX */
	uint8_t role;          /* enum msg_node_role */
	uint8_t flags;         /* MSG_MEMBER_* */
	uint64_t epoch;
	uint64_t durable_lsn;
	uint64_t lag_records; /* a follower's, by its own count; 0 on a
	                         leader */
	int64_t lease_until;  /* unix ms the leader's lease lasts until by its
	                         last renewal; 0 for others */
	uint64_t age_ms;      /* since the member last published its key */
};

/* cluster: what the answering node read from etcd last. */
struct msg_cluster {
	struct msg_str cluster;    /* --cluster, 1..MSG_NODE_MAX */
	struct msg_str node;       /* the answering node's name, 1..NODE_MAX */
	struct msg_str leader;     /* the leader's name, "" when none */
	uint32_t ttl_ms;           /* the leader lease's TTL (--leader-ttl) */
	struct msg_str etcd_error; /* the node's last failed etcd call, ""
	                              when the last call succeeded;
	                              0..MSG_TEXT_MAX */
	uint32_t n;                /* 0..MSG_CLUSTER_MEMBERS_MAX */
	const struct msg_member *members; /* encode */
	struct msg_iter it;               /* decode: msg_next_member() */
};

#endif
