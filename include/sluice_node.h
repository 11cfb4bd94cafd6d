/* sluice_node.h - the calls of libsluice that act on a node and its
 * cluster: a snapshot, a promotion, following a leader, and automatic
 * failover's view of the cluster and switchover.
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_NODE_H
#define SLUICE_NODE_H

/* ---- operations on the node ---------------------------------------- */

/* Writes a snapshot now; `*lsn` (optional) is the last LSN it covers.
 * SLUICE_ELOG when the server could not write it. */
SLUICE_API int sluice_snapshot(struct sluice_client *c, uint64_t *lsn);

/* Turns the follower this handle is connected to into a leader with a new
 * epoch (`*epoch`, optional). Connect with the follower's URL alone:
 * with several URLs the call goes to whichever answered first.
 * SLUICE_ESTATE when the node already leads. */
SLUICE_API int sluice_promote(struct sluice_client *c, uint64_t *epoch);

/* Makes the node this handle is connected to follow the leader whose
 * replication URL is `url`. SLUICE_EINVAL (empty), SLUICE_ELIMIT (over
 * 512 bytes), SLUICE_EEPOCH. */
SLUICE_API int sluice_follow(struct sluice_client *c, const char *url);

/* ---- automatic failover (etcd) -------------------------------------- */

/* A cluster member's role in sluice_cluster(). (Numbered apart from
 * enum sluice_role, which is stats'.) */
enum sluice_node_role {
	SLUICE_NODE_FOLLOWER = 0,
	SLUICE_NODE_LEADER = 1,
	SLUICE_NODE_CANDIDATE = 2, /* no leader known yet */
	SLUICE_NODE_FENCED = 3,    /* a leader that stopped writing */
};

/* One member of the cluster, as it last published itself in etcd. */
struct sluice_member {
	const char *name;       /* its --node */
	const char *client_url; /* its client URL (--advertise); "" if none */
	const char *repl_url;   /* its replication URL; "" if none */
	int role;               /* SLUICE_NODE_*; sluice_node_role_name() */
	int sync;  /* 1: counted by the leader for --sync-replicas, so it may
	              take over */
	int lease; /* 1: holds the leader lease */
	uint64_t epoch;
	uint64_t durable_lsn;
	uint64_t lag_records; /* a follower's, by its own count; 0 on a
	                         leader */
	int64_t lease_until;  /* unix ms the leader's lease lasts until by its
	                         last renewal; 0 for the others */
	uint64_t age_ms;      /* since the member last published its key */
};

/* A running member refreshes its key every second: one not refreshed for
 * this long is down (`sluice cluster` says so). A member whose key is gone
 * stays in the cluster's view, down, until it is removed (docs/
 * replication.md); one the node never saw has no URL. */
enum { SLUICE_MEMBER_DOWN_MS = 3000 };

/* The cluster as the node this handle is connected to sees it, from its
 * latest read of etcd. Every pointer points into the same allocation. */
struct sluice_cluster {
	const char *cluster;    /* its name (--cluster) */
	const char *node;       /* the name of the node that answered */
	const char *leader;     /* the leader's name; "" when none is known */
	const char *etcd_error; /* the node's last failed etcd call; "" when
	                           its last call succeeded */
	uint32_t ttl_ms;        /* the leader lease's TTL (--leader-ttl) */
	size_t n;
	const struct sluice_member *members; /* n members (NULL when 0) */
};

/* The cluster as the node this handle is connected to sees it: any node
 * answers, leader or follower. Returns 0 and `*out` (free it with
 * sluice_cluster_free()); SLUICE_ESTATE when the node runs without --etcd
 * (automatic failover is off); SLUICE_EUNKNOWNOP from a server older than
 * automatic failover. Retried after a lost connection. */
SLUICE_API int sluice_cluster(
    struct sluice_client *c, struct sluice_cluster **out);
SLUICE_API void sluice_cluster_free(struct sluice_cluster *cluster);

/* What a switchover did. */
struct sluice_switchover_result {
	uint64_t epoch;                  /* the new leader's epoch */
	char leader[SLUICE_URL_MAX + 1]; /* its client URL */
};

/* Hands the leadership to the member named `node` (1..SLUICE_NODE_MAX
 * bytes, else SLUICE_EINVAL): the leader stops taking writes, waits until
 * `node` holds everything it wrote (at most `timeout_ms`; 0: the server's
 * default), then releases its lease so that only `node` may take it. The
 * call returns once `node` leads, with `*res` (optional). Sent to a
 * follower, it goes to the leader the follower names (as every write
 * does). The call's own timeout (sluice_set_timeout) is extended by
 * `timeout_ms`.
 *
 * Errors: SLUICE_ENOTFOUND (no member of that name), SLUICE_ESTATE (the
 * node runs without --etcd, `node` is the leader already, or a switchover
 * is under way), SLUICE_ETIMEDOUT (`node` did not catch up in time: the
 * old leader keeps leading; or no reply in time, the outcome unknown),
 * SLUICE_ENOTLEADER (no leader reachable), SLUICE_EUNKNOWNOP (a server
 * older than automatic failover). Never retried. */
SLUICE_API int sluice_switchover(struct sluice_client *c, const char *node,
    uint32_t timeout_ms, struct sluice_switchover_result *res);

#endif
