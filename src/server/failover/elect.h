/* elect - automatic failover: the election of a leader through etcd, on a
 * thread of its own (a slow or absent etcd never stalls the core).
 *
 * Keys, under /sluice/CLUSTER/ (docs/replication.md, "Automatic
 * failover"):
 *   members/NODE  each node's URLs, role, epoch, durable LSN and lag, bound
 *                 to the node's lease (gone TTL after the node);
 *   leader        the leader's name, URLs and epoch, bound to its lease:
 *                 whoever created it leads while the lease lives;
 *   sync          the followers the leader counts for --sync-replicas (no
 *                 lease: it outlives the leader, so that the election
 *                 knows who holds every acknowledged write);
 *   switchover    a planned handover: only the named node may take the
 *                 leader key until the deadline.
 *
 * The thread and the core meet here and nowhere else: the core publishes
 * its state each turn (elect_publish) and carries out the commands the
 * thread leaves (elect_next_cmd; elect_fd is readable when one waits);
 * the thread publishes the lease's deadline (elect_lease_until), past
 * which the core fences itself, and the cluster as last read from etcd
 * (elect_view). A mutex guards what they share; neither waits for the
 * other. */
#ifndef SLUICE_SERVER_FAILOVER_ELECT_H
#define SLUICE_SERVER_FAILOVER_ELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

enum {
	ELECT_NAME_MAX = 64,    /* --cluster, --node */
	ELECT_MEMBERS_MAX = 64, /* members shown and counted */
	ELECT_PEERS_MAX = 32,   /* followers a leader reports */
	ELECT_ERR_MAX = 256,
};

struct elect_config {
	const char *endpoints; /* --etcd */
	const char *cluster;   /* --cluster */
	const char *node;      /* --node */
	const char *client;    /* --advertise: the client URL */
	const char *repl;      /* the replication URL followers dial */
	const char *http;      /* --advertise-http; NULL: none */
	uint32_t ttl_ms;       /* --leader-ttl */
	unsigned sync_replicas;
};

/* The node's roles, as the member key and the cluster op say them. */
enum elect_role {
	ELECT_FOLLOWER = 0,
	ELECT_LEADER = 1,
	ELECT_CANDIDATE = 2, /* no leader known yet */
	ELECT_FENCED = 3,    /* a leader that stopped writing */
};

/* What the core tells the thread each turn. */
struct elect_state {
	uint8_t role; /* enum elect_role */
	uint64_t epoch;
	uint64_t last_lsn, durable_lsn;
	uint64_t commit_lsn;             /* replies may go out up to here */
	uint64_t lag_records;            /* a follower's */
	char following[MSG_URL_MAX + 1]; /* the repl URL it follows; "" */
	uint64_t count_gen;              /* the counted set it applies */
	size_t npeers;                   /* a leader's followers */
	struct {
		char url[MSG_URL_MAX + 1]; /* its client URL */
		uint64_t acked_lsn;
	} peers[ELECT_PEERS_MAX];
	bool handover;        /* a switchover was asked of this leader */
	uint64_t handover_id; /* which: one per request */
	char handover_to[ELECT_NAME_MAX + 1];
	uint32_t handover_ms;
};

enum elect_cmd_kind {
	ELECT_CMD_LEAD = 1, /* this node won: begin epoch >= min_epoch */
	ELECT_CMD_FOLLOW,   /* follow the leader whose repl URL is url */
	ELECT_CMD_COUNT,    /* count only these followers (client URLs) */
	ELECT_CMD_HANDED,   /* a switchover is done or failed: answer it */
};

struct elect_cmd {
	enum elect_cmd_kind kind;
	uint64_t min_epoch;        /* LEAD */
	char url[MSG_URL_MAX + 1]; /* FOLLOW; HANDED: new leader */
	uint64_t gen;              /* COUNT */
	size_t nurls;              /* COUNT */
	char urls[ELECT_MEMBERS_MAX][MSG_URL_MAX + 1];
	int rc;                   /* HANDED: 0 or SLUICE_E* */
	char text[ELECT_ERR_MAX]; /* HANDED: what failed */
	uint64_t epoch;           /* HANDED: the new epoch */
};

/* One member as last read from etcd. */
struct elect_member {
	char name[ELECT_NAME_MAX + 1];
	char client[MSG_URL_MAX + 1];
	char repl[MSG_URL_MAX + 1];
	uint8_t role;
	bool sync;  /* in the sync set */
	bool lease; /* holds the leader key */
	uint64_t epoch, lsn, lag;
	int64_t lease_until; /* the leader's: unix ms */
	int64_t at;          /* unix ms it published this */
};

/* The cluster as the thread last saw it. */
struct elect_view {
	char cluster[ELECT_NAME_MAX + 1];
	char node[ELECT_NAME_MAX + 1];
	char leader[ELECT_NAME_MAX + 1]; /* "" when none */
	char leader_client[MSG_URL_MAX + 1];
	uint32_t ttl_ms;
	bool holding;                   /* this node holds the leader key */
	int64_t lease_until;            /* this node's lease: unix ms; 0 */
	int64_t renewed_at;             /* unix ms of its last renewal; 0 */
	char etcd_error[ELECT_ERR_MAX]; /* the last failed call; "" */
	int64_t etcd_error_at;          /* unix ms; 0 */
	uint64_t etcd_errors;           /* failed calls since start */
	uint64_t elections;             /* leader keys this node won */
	size_t n;
	struct elect_member m[ELECT_MEMBERS_MAX];
};

struct elect;

/* Starts the thread. Returns 0, or -1 with a message in `err`. */
int elect_start(struct elect **out, const struct elect_config *cfg, char *err,
    size_t errlen);

/* Stops the thread. `resign`: give the leader key up (a clean stop), so
 * that a follower takes over at once instead of after the TTL. */
void elect_stop(struct elect *e, bool resign);

/* Readable when a command waits. */
int elect_fd(const struct elect *e);

/* The core's state, each turn. */
void elect_publish(struct elect *e, const struct elect_state *s);

/* The next command for the core; false when none waits. */
bool elect_next_cmd(struct elect *e, struct elect_cmd *out);

/* The core reports that a LEAD was carried out (epoch) or failed (0). */
void elect_led(struct elect *e, uint64_t epoch);

/* Until when (monotonic ms) this node may take writes as the leader: its
 * lease's last renewal, sent at T, holds until T + TTL in etcd; this is
 * that less a margin. 0 when it holds no leader key. */
int64_t elect_lease_until(const struct elect *e);

/* The cluster as last read. */
void elect_view(const struct elect *e, struct elect_view *out);

#endif
