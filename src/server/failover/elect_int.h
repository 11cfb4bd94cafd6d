/* elect_int - what the files of the election thread share (elect.c: the
 * turn, the thread and its interface; elect_keys.c: the node's lease and
 * the cluster's keys in etcd; elect_lead.c: who takes the leader key, by
 * election or by switchover; elect_sync.c: the sync set a leader keeps):
 * the thread's state and the functions one of them calls in another.
 * Everything here runs on the election thread, except what elect.h's
 * functions touch under e->mu. Not for use outside
 * src/server/failover/elect*.c: the interface is elect.h. */
#ifndef SLUICE_SERVER_FAILOVER_ELECT_INT_H
#define SLUICE_SERVER_FAILOVER_ELECT_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"
#include "server/failover/elect.h"

struct etcd;

enum {
	TICK_MS = 100,     /* a turn, in steady state */
	FAST_TICK_MS = 20, /* while something changes hands */
	CMDS_MAX = 8,
	KEY_MAX = 3 * ELECT_NAME_MAX + 32,
	PUBLISH_MS = 250,  /* the member key at most this often... */
	REFRESH_MS = 1000, /* ...and at least this often */
};

/* A switchover under way on this leader. */
enum elect_handover { HO_NONE, HO_CATCHUP, HO_RELEASED };

struct elect {
	/* set at start, read-only after */
	char cluster[ELECT_NAME_MAX + 1], node[ELECT_NAME_MAX + 1];
	char client[MSG_URL_MAX + 1], repl[MSG_URL_MAX + 1];
	char http[MSG_URL_MAX + 1]; /* "" when it publishes none */
	char k_prefix[KEY_MAX], k_leader[KEY_MAX], k_sync[KEY_MAX];
	char k_switch[KEY_MAX], k_member[KEY_MAX], k_members[KEY_MAX];
	uint32_t ttl_ms;
	unsigned k;
	int efd;
	pthread_t thread;

	/* shared with the core, under mu */
	pthread_mutex_t mu;
	pthread_cond_t wake;
	bool stop, resign;
	struct elect_state st;
	struct elect_cmd cmds[CMDS_MAX];
	size_t cmd_head, ncmds;
	bool led;           /* the core answered a LEAD */
	uint64_t led_epoch; /* 0: it failed */
	struct elect_view view;
	_Atomic int64_t lease_until;

	/* the thread's own */
	struct etcd *etcd;
	struct elect_state now; /* a copy of st for this turn */
	int64_t lease;          /* 0: none */
	int64_t granted_ms;
	int64_t renewed;      /* monotonic ms the last renewal was sent */
	int64_t renewed_unix; /* the same, unix ms */
	bool holding;         /* we created the leader key */
	bool create_unsure;   /* a create of the leader key got no answer:
	                         it may have been made (elect_adopt_key) */
	bool lead_wait;       /* a LEAD was sent, no answer yet */
	uint64_t epoch;       /* the epoch we lead, once known */
	uint64_t max_epoch;   /* the highest seen in the cluster */
	int64_t absent_since; /* monotonic ms the leader key went missing */
	int64_t published;    /* monotonic ms of the last member put */
	uint64_t published_lsn;
	uint8_t published_role;
	char last_err[ELECT_ERR_MAX];
	int64_t logged_at; /* monotonic ms a failure was last logged */
	/* the sync set */
	size_t nsync;
	char sync[ELECT_MEMBERS_MAX][ELECT_NAME_MAX + 1];
	uint64_t gen;        /* the last COUNT sent */
	bool shrinking;      /* a COUNT of the intersection was sent */
	uint64_t target_lsn; /* joiners must hold this */
	size_t nnext;
	char next[ELECT_MEMBERS_MAX][ELECT_NAME_MAX + 1];
	/* a switchover */
	enum elect_handover ho;
	uint64_t ho_id; /* the core's request it is, or was last */
	int64_t ho_deadline;
	char ho_to[ELECT_NAME_MAX + 1];
	/* what each member last published (elect_view.c) */
	size_t nknown;
	struct elect_member known[ELECT_MEMBERS_MAX];
	int64_t known_at[ELECT_MEMBERS_MAX]; /* unix ms last in a key */
};

/* What one range of the cluster's keys says. */
struct elect_keys {
	bool leader_found;
	int64_t leader_lease;
	char leader[ELECT_NAME_MAX + 1];
	char leader_client[MSG_URL_MAX + 1];
	char leader_repl[MSG_URL_MAX + 1];
	uint64_t leader_epoch;
	bool sync_found;
	uint64_t sync_lsn; /* every member of the set held this */
	size_t nsync;
	char sync[ELECT_MEMBERS_MAX][ELECT_NAME_MAX + 1];
	bool switch_found;
	char switch_to[ELECT_NAME_MAX + 1];
	int64_t switch_until;
	size_t n;
	struct elect_member m[ELECT_MEMBERS_MAX];
};

/* ---- elect.c: shared helpers -------------------------------------------- */

/* `src` (NULL: "") into dst[cap], cut to fit. */
void elect_copy(char *dst, size_t cap, const char *src);

/* Whether `name` is one of the `n` names of `set`. */
bool elect_in_set(char (*set)[ELECT_NAME_MAX + 1], size_t n, const char *name);

/* Remembers a failed etcd call for the view, and logs it once per
 * change of text. */
void elect_etcd_failed(struct elect *e, const char *what, int rc);

/* Makes elect_fd readable. */
void elect_wake_core(struct elect *e);

/* Leaves a command for the core (dropped, logged, when CMDS_MAX wait). */
void elect_push_cmd(struct elect *e, const struct elect_cmd *cmd);

/* ---- elect_keys.c: the lease and the keys ------------------------------- */

/* Publishes the deadline the core fences itself at (elect_lease_until). */
void elect_set_lease_until(struct elect *e);

/* The leader key is not ours any more (`why`, logged): the core fences
 * itself at once. */
void elect_lose_key(struct elect *e, const char *why);

/* Grants or renews the node's lease. False while it has none. */
bool elect_keep_lease(struct elect *e);

/* Reads every key of the cluster in one range. Returns 0 or etcd's
 * error (remembered). */
int elect_read_cluster(struct elect *e, struct elect_keys *ck);

/* Publishes what this turn read, for the cluster op and the metrics. */
void elect_publish_view(struct elect *e, const struct elect_keys *ck);

/* ---- elect_view.c: the view settled ------------------------------------- */

/* Settles e->view (just copied from `ck`, under e->mu) as a person reads
 * it: the leader key's holder leads, this node is as it is now, a member
 * of the sync set whose key is gone is kept, down. */
void elect_view_settle(struct elect *e, const struct elect_keys *ck);

/* Puts the member key, when it changed or is due. */
void elect_publish_member(struct elect *e);

/* The leader key's value: this node's name, URLs and epoch. */
json_t *elect_leader_value(struct elect *e);

/* ---- elect_lead.c: the election and a switchover ------------------------ */

/* Nobody holds the leader key: takes it when this node may and should. */
void elect_try_lead(struct elect *e, const struct elect_keys *ck);

/* The leader key is found under our own lease while we do not hold it:
 * a create whose answer was lost (a timeout) made it after all. Then it
 * is ours, and the node leads as if the answer had come; else the
 * doubt is forgotten. Without this, the node neither led nor let the key
 * lapse (its lease is kept alive), and the cluster had no leader. */
void elect_adopt_key(struct elect *e, const struct elect_keys *ck);

/* The core fenced itself but the key is still ours: lead again. */
void elect_lead_again(struct elect *e);

/* Takes the core's answer to a LEAD, if it came. */
void elect_lead_answered(struct elect *e);

/* A switchover is over: tells the core (rc 0: `url` leads at `epoch`). */
void elect_handed(
    struct elect *e, int rc, const char *text, const char *url, uint64_t epoch);

/* A switchover the core was asked for: started or refused. */
void elect_handover_new(struct elect *e, const struct elect_keys *ck);

/* Gives the leader key up once the switchover's target holds it all. */
void elect_handover_turn(struct elect *e, const struct elect_keys *ck);

/* ---- elect_sync.c: the sync set ----------------------------------------- */

/* A connected follower's acked LSN by member name; false if it is not
 * connected. */
bool elect_peer_acked(const struct elect *e, const struct elect_keys *ck,
    const char *name, uint64_t *acked);

/* Moves the counted set towards the wanted one, a step per turn. */
void elect_keep_sync_set(struct elect *e, const struct elect_keys *ck);

#endif
