/* elect - the election thread (elect.h).
 *
 * One turn every TICK_MS (FAST_TICK_MS while something changes hands):
 * renew the node's lease when 40 % of its TTL has passed; read every key of the
 * cluster in one range; publish the member key; then decide:
 *   - the leader key is ours: keep the sync set, carry out a switchover;
 *   - another node holds it: follow that node;
 *   - nobody holds it: if this node may lead (it is in the sync set, or
 *     no set restricts), and it is the most advanced of those that may
 *     (highest epoch, then LSN, then the smallest name), create the key
 *     in a transaction that fails if it exists; the others try only if
 *     the key stays absent for a whole TTL.
 *
 * Safety rests on two rules (docs/replication.md): the core stops taking
 * writes at elect_lease_until, before etcd can have let the lease go; and
 * with --sync-replicas K the leader counts only the followers named in
 * the sync key, which it writes before it counts a new one, and a new
 * follower joins only once it holds every record the leader had when the
 * set shrank, so every acknowledged write is on each member of the set. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "server/failover/elect.h"
#include "server/failover/etcd.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	TICK_MS = 100,     /* a turn, in steady state */
	FAST_TICK_MS = 20, /* while something changes hands */
	CMDS_MAX = 8,
	KEY_MAX = 3 * ELECT_NAME_MAX + 32,
	PUBLISH_MS = 250,  /* the member key at most this often... */
	REFRESH_MS = 1000, /* ...and at least this often */
};

/* A switchover under way on this leader. */
enum handover_phase { HO_NONE, HO_CATCHUP, HO_RELEASED };

struct elect {
	/* set at start, read-only after */
	char cluster[ELECT_NAME_MAX + 1], node[ELECT_NAME_MAX + 1];
	char client[MSG_URL_MAX + 1], repl[MSG_URL_MAX + 1];
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
	enum handover_phase ho;
	uint64_t ho_id; /* the core's request it is, or was last */
	int64_t ho_deadline;
	char ho_to[ELECT_NAME_MAX + 1];
};

/* What one range of the cluster's keys says. */
struct cluster_keys {
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

/* ---- small helpers ------------------------------------------------------ */

static void
copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src != NULL ? src : "");
}

static const char *
json_str(json_t *o, const char *name)
{
	const char *s = json_string_value(json_object_get(o, name));

	return s != NULL ? s : "";
}

static uint64_t
json_u64(json_t *o, const char *name)
{
	json_int_t v = json_integer_value(json_object_get(o, name));

	return v > 0 ? (uint64_t)v : 0;
}

static bool
in_set(char (*set)[ELECT_NAME_MAX + 1], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(set[i], name) == 0)
			return true;
	return false;
}

/* Remembers a failed etcd call for the view, and logs it once per
 * change of text. */
static void
etcd_failed(struct elect *e, const char *what, int rc)
{
	char text[ELECT_ERR_MAX];

	snprintf(text, sizeof(text), "%s: %s", what, etcd_errmsg(e->etcd));
	/* said when it starts and when it changes, at most once a second
	 * (while etcd is away, the calls of a turn fail each their way) */
	if (e->last_err[0] == '\0' ||
	    (strcmp(text, e->last_err) != 0 &&
	        clock_mono_ms() - e->logged_at >= 1000)) {
		e->logged_at = clock_mono_ms();
		log_warn("elect", "etcd call failed what=%s error=\"%s\" rc=%s",
		    what, etcd_errmsg(e->etcd), etcd_strerror(rc));
	}
	copy(e->last_err, sizeof(e->last_err), text);
	pthread_mutex_lock(&e->mu);
	copy(e->view.etcd_error, sizeof(e->view.etcd_error), text);
	e->view.etcd_error_at = clock_now_ms();
	e->view.etcd_errors++;
	pthread_mutex_unlock(&e->mu);
}

static void
etcd_ok(struct elect *e)
{
	if (e->last_err[0] == '\0')
		return;
	log_info("elect", "etcd answers again");
	e->last_err[0] = '\0';
	pthread_mutex_lock(&e->mu);
	e->view.etcd_error[0] = '\0';
	pthread_mutex_unlock(&e->mu);
}

static void
wake_core(struct elect *e)
{
	uint64_t one = 1;

	if (write(e->efd, &one, sizeof(one)) < 0)
		log_warn("elect", "cannot wake the core error=\"%s\"",
		    strerror(errno));
}

static void
push_cmd(struct elect *e, const struct elect_cmd *cmd)
{
	bool sent = false;

	pthread_mutex_lock(&e->mu);
	if (e->ncmds < CMDS_MAX) {
		e->cmds[(e->cmd_head + e->ncmds) % CMDS_MAX] = *cmd;
		e->ncmds++;
		sent = true;
	}
	pthread_mutex_unlock(&e->mu);
	if (sent)
		wake_core(e);
	else
		log_warn("elect",
		    "the core has not taken its commands; "
		    "dropped one kind=%d",
		    (int)cmd->kind);
}

static void
set_lease_until(struct elect *e)
{
	/* etcd lets the lease go no sooner than TTL after it received the
	 * renewal, which we sent at `renewed`: the core checks the deadline
	 * right before every reply of a write, so the margin only has to
	 * cover the clocks' rates and a send; a sixth of the TTL is ample. */
	int64_t until = 0;

	if (e->holding && e->lease != 0)
		until = e->renewed + e->granted_ms - e->granted_ms / 6;
	atomic_store(&e->lease_until, until);
}

/* ---- the lease ---------------------------------------------------------- */

static void
lose_leader_key(struct elect *e, const char *why)
{
	if (!e->holding)
		return;
	log_warn("elect", "no longer holds the leader key: %s", why);
	e->holding = false;
	e->epoch = 0;
	e->nsync = 0;
	e->shrinking = false;
	set_lease_until(e);
	wake_core(e); /* it fences itself now, not at its next timer */
}

/* Grants or renews the node's lease. False while it has none. */
static bool
keep_lease(struct elect *e)
{
	int64_t t = clock_mono_ms(), ttl = 0, id;
	int64_t unix_t = clock_now_ms();
	int rc;

	if (e->lease == 0) {
		rc = etcd_lease_grant(
		    e->etcd, (e->ttl_ms + 999) / 1000, &id, &ttl);
		if (rc != 0) {
			etcd_failed(e, "lease grant", rc);
			return false;
		}
		e->lease = id;
	} else if (t - e->renewed >= e->granted_ms * 2 / 5) {
		/* renewed at 40 % of the TTL: a call may take its whole
		 * timeout (a third) and still land before the deadline */
		rc = etcd_lease_keepalive(e->etcd, e->lease, &ttl);
		if (rc == ETCD_ENOLEASE) {
			log_warn("elect",
			    "the lease expired in etcd lease=%" PRIx64,
			    (uint64_t)e->lease);
			e->lease = 0;
			lose_leader_key(e, "its lease expired");
			return false;
		}
		if (rc != 0) {
			etcd_failed(e, "lease keepalive", rc);
			return true; /* still ours until it runs out */
		}
	} else {
		return true;
	}
	e->granted_ms = ttl * 1000;
	e->renewed = t;
	e->renewed_unix = unix_t;
	set_lease_until(e);
	return true;
}

/* ---- reading the cluster ------------------------------------------------ */

static void
parse_member(json_t *j, const struct etcd_kv *kv, struct elect_member *m)
{
	copy(m->name, sizeof(m->name), json_str(j, "name"));
	copy(m->client, sizeof(m->client), json_str(j, "client"));
	copy(m->repl, sizeof(m->repl), json_str(j, "repl"));
	m->role = (uint8_t)json_u64(j, "role");
	m->epoch = json_u64(j, "epoch");
	m->lsn = json_u64(j, "lsn");
	m->lag = json_u64(j, "lag");
	m->lease_until = (int64_t)json_u64(j, "lease_until");
	m->at = (int64_t)json_u64(j, "at");
	(void)kv;
}

static void
parse_key(struct elect *e, const struct etcd_kv *kv, struct cluster_keys *ck)
{
	json_t *j = json_loadb((const char *)kv->value, kv->len, 0, NULL);
	json_t *a;

	if (j == NULL || !json_is_object(j)) {
		log_warn(
		    "elect", "a key that is not a JSON object key=%s", kv->key);
		json_decref(j);
		return;
	}
	if (strcmp(kv->key, e->k_leader) == 0) {
		ck->leader_found = true;
		ck->leader_lease = kv->lease;
		copy(ck->leader, sizeof(ck->leader), json_str(j, "name"));
		copy(ck->leader_client, sizeof(ck->leader_client),
		    json_str(j, "client"));
		copy(ck->leader_repl, sizeof(ck->leader_repl),
		    json_str(j, "repl"));
		ck->leader_epoch = json_u64(j, "epoch");
	} else if (strcmp(kv->key, e->k_sync) == 0) {
		ck->sync_found = true;
		a = json_object_get(j, "members");
		for (size_t i = 0;
		     i < json_array_size(a) && ck->nsync < ELECT_MEMBERS_MAX;
		     i++)
			copy(ck->sync[ck->nsync++], ELECT_NAME_MAX + 1,
			    json_string_value(json_array_get(a, i)));
		ck->sync_lsn = json_u64(j, "lsn");
		if (json_u64(j, "epoch") > e->max_epoch)
			e->max_epoch = json_u64(j, "epoch");
	} else if (strcmp(kv->key, e->k_switch) == 0) {
		ck->switch_found = true;
		copy(ck->switch_to, sizeof(ck->switch_to), json_str(j, "to"));
		ck->switch_until = (int64_t)json_u64(j, "until");
	} else if (strncmp(kv->key, e->k_members, strlen(e->k_members)) == 0 &&
	    ck->n < ELECT_MEMBERS_MAX) {
		parse_member(j, kv, &ck->m[ck->n++]);
	}
	json_decref(j);
}

static int
read_cluster(struct elect *e, struct cluster_keys *ck)
{
	struct etcd_kvs kvs;
	int rc;

	memset(ck, 0, sizeof(*ck));
	rc = etcd_get_prefix(e->etcd, e->k_prefix, &kvs);
	if (rc != 0) {
		etcd_failed(e, "read the cluster", rc);
		return rc;
	}
	for (size_t i = 0; i < kvs.n; i++)
		parse_key(e, &kvs.kv[i], ck);
	etcd_kvs_free(&kvs);
	for (size_t i = 0; i < ck->n; i++) {
		ck->m[i].sync = in_set(ck->sync, ck->nsync, ck->m[i].name);
		ck->m[i].lease =
		    ck->leader_found && strcmp(ck->m[i].name, ck->leader) == 0;
		if (ck->m[i].epoch > e->max_epoch)
			e->max_epoch = ck->m[i].epoch;
	}
	if (ck->leader_epoch > e->max_epoch)
		e->max_epoch = ck->leader_epoch;
	return 0;
}

/* Publishes what this turn read, for the cluster op and the metrics. */
static void
publish_view(struct elect *e, const struct cluster_keys *ck)
{
	bool mine = e->holding; /* maybe created after the read */

	pthread_mutex_lock(&e->mu);
	copy(e->view.leader, sizeof(e->view.leader),
	    mine                   ? e->node
	        : ck->leader_found ? ck->leader
	                           : "");
	copy(e->view.leader_client, sizeof(e->view.leader_client),
	    mine                   ? e->client
	        : ck->leader_found ? ck->leader_client
	                           : "");
	e->view.holding = e->holding;
	e->view.lease_until = e->holding ? e->renewed_unix + e->granted_ms : 0;
	e->view.renewed_at = e->lease != 0 ? e->renewed_unix : 0;
	e->view.n = ck->n;
	memcpy(e->view.m, ck->m, ck->n * sizeof(ck->m[0]));
	pthread_mutex_unlock(&e->mu);
}

/* ---- writing ------------------------------------------------------------ */

static void
put_json(struct elect *e, const char *what, const char *key, json_t *j,
    int64_t lease)
{
	char *s = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	int rc;

	if (s == NULL) {
		log_warn("elect", "out of memory for a key key=%s", key);
		json_decref(j);
		return;
	}
	rc = etcd_put(e->etcd, key, s, strlen(s), lease);
	if (rc != 0)
		etcd_failed(e, what, rc);
	free(s);
	json_decref(j);
}

static void
publish_member(struct elect *e)
{
	int64_t t = clock_mono_ms();
	const struct elect_state *s = &e->now;
	json_t *j;

	if (e->lease == 0)
		return;
	if (t - e->published < PUBLISH_MS ||
	    (t - e->published < REFRESH_MS && s->role == e->published_role &&
	        s->durable_lsn == e->published_lsn))
		return;
	j = json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:I}", "name",
	    e->node, "client", e->client, "repl", e->repl, "role", (int)s->role,
	    "epoch", (json_int_t)s->epoch, "lsn", (json_int_t)s->durable_lsn,
	    "lag", (json_int_t)s->lag_records, "lease_until",
	    (json_int_t)(e->holding ? e->renewed_unix + e->granted_ms : 0),
	    "at", (json_int_t)clock_now_ms());
	put_json(e, "publish the member key", e->k_member, j, e->lease);
	e->published = t;
	e->published_lsn = s->durable_lsn;
	e->published_role = s->role;
}

static json_t *
leader_value(struct elect *e)
{
	return json_pack("{s:s, s:s, s:s, s:I}", "name", e->node, "client",
	    e->client, "repl", e->repl, "epoch", (json_int_t)e->epoch);
}

/* ---- the election ------------------------------------------------------- */

/* Whether `name`, whose log is durable up to `lsn`, may take the leader
 * key now. A member of the sync set whose log holds less than the set
 * held when it was formed lost its data (restarted empty under its old
 * name): it must catch up as a follower first. */
static bool
may_lead(const struct elect *e, const struct cluster_keys *ck, const char *name,
    uint64_t lsn)
{
	if (ck->switch_found && ck->switch_until > clock_now_ms())
		return strcmp(ck->switch_to, name) == 0;
	if (e->k == 0 || !ck->sync_found || ck->nsync == 0)
		return true;
	return lsn >= ck->sync_lsn &&
	    in_set((char(*)[ELECT_NAME_MAX + 1]) ck->sync, ck->nsync, name);
}

/* Whether this node is the most advanced of those that may lead: the
 * highest epoch, then LSN, then the smallest name. */
static bool
most_advanced(const struct elect *e, const struct cluster_keys *ck)
{
	for (size_t i = 0; i < ck->n; i++) {
		const struct elect_member *m = &ck->m[i];

		if (strcmp(m->name, e->node) == 0 ||
		    !may_lead(e, ck, m->name, m->lsn))
			continue;
		if (m->epoch != e->now.epoch) {
			if (m->epoch > e->now.epoch)
				return false;
			continue;
		}
		if (m->lsn > e->now.durable_lsn ||
		    (m->lsn == e->now.durable_lsn &&
		        strcmp(m->name, e->node) < 0))
			return false;
	}
	return true;
}

static void
try_to_lead(struct elect *e, const struct cluster_keys *ck)
{
	int64_t t = clock_mono_ms();
	struct elect_cmd cmd = { .kind = ELECT_CMD_LEAD };
	bool created = false, switched;
	json_t *j;
	char *s;
	int rc;

	if (e->lease == 0 || e->now.role == ELECT_LEADER || e->lead_wait ||
	    !may_lead(e, ck, e->node, e->now.durable_lsn))
		return;
	switched = ck->switch_found && ck->switch_until > clock_now_ms();
	if (!switched && !most_advanced(e, ck) &&
	    t - e->absent_since < (int64_t)e->ttl_ms)
		return;
	e->epoch = 0;
	j = leader_value(e);
	s = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (s == NULL)
		return;
	rc = etcd_create(
	    e->etcd, e->k_leader, s, strlen(s), e->lease, &created, NULL);
	free(s);
	if (rc != 0) {
		etcd_failed(e, "create the leader key", rc);
		return;
	}
	if (!created)
		return; /* another node was quicker: follow it next turn */
	e->holding = true;
	e->nsync = 0;
	e->shrinking = false;
	set_lease_until(e);
	pthread_mutex_lock(&e->mu);
	e->view.elections++;
	e->led = false;
	pthread_mutex_unlock(&e->mu);
	log_info("elect",
	    "won the leader key cluster=%s node=%s lsn=%" PRIu64
	    " epoch=%" PRIu64 "%s",
	    e->cluster, e->node, e->now.durable_lsn, e->now.epoch,
	    switched ? " (switchover)" : "");
	cmd.min_epoch = e->max_epoch + 1;
	e->lead_wait = true;
	push_cmd(e, &cmd);
}

/* The core fenced itself, its lease deadline passed, yet the key is
 * still ours (a renewal came late, or etcd came back and extended every
 * lease): nobody else can have led, so it leads again, in a new epoch.
 * (Fenced at the epoch it leads: a state from before the core answered
 * LEAD says an older one.) */
static void
lead_again(struct elect *e)
{
	struct elect_cmd cmd = { .kind = ELECT_CMD_LEAD };

	log_warn("elect",
	    "the node fenced itself but still holds the leader key: "
	    "leading again");
	e->nsync = 0;
	e->shrinking = false;
	e->epoch = 0;
	cmd.min_epoch = e->max_epoch + 1;
	pthread_mutex_lock(&e->mu);
	e->led = false;
	pthread_mutex_unlock(&e->mu);
	e->lead_wait = true;
	push_cmd(e, &cmd);
}

/* The core answered LEAD: the key names our epoch from now on, and a
 * switchover that chose us is over. */
static void
led(struct elect *e)
{
	uint64_t epoch;
	bool done, ok = false;
	json_t *j;
	char *s;
	int rc;

	if (!e->lead_wait)
		return;
	pthread_mutex_lock(&e->mu);
	done = e->led;
	epoch = e->led_epoch;
	pthread_mutex_unlock(&e->mu);
	if (!done)
		return;
	e->lead_wait = false;
	if (epoch == 0) {
		/* the core could not begin an epoch: give the key up */
		etcd_del(e->etcd, e->k_leader, NULL);
		lose_leader_key(e, "the node could not begin its epoch");
		return;
	}
	if (epoch > e->max_epoch)
		e->max_epoch = epoch;
	if (!e->holding)
		return; /* lost meanwhile: the core fences itself */
	e->epoch = epoch;
	j = leader_value(e);
	s = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (s == NULL)
		return;
	rc = etcd_put_if_lease(e->etcd, e->k_leader, s, strlen(s), e->lease,
	    e->k_leader, e->lease, &ok);
	free(s);
	if (rc != 0)
		etcd_failed(e, "name the epoch in the leader key", rc);
	else if (!ok)
		lose_leader_key(e, "another lease holds it");
	else
		etcd_del(e->etcd, e->k_switch, NULL);
}

/* ---- the sync set (a leader with --sync-replicas K) --------------------- */

/* The member whose client URL is `url`; NULL. */
static const struct elect_member *
member_by_client(const struct cluster_keys *ck, const char *url)
{
	for (size_t i = 0; i < ck->n; i++)
		if (strcmp(ck->m[i].client, url) == 0)
			return &ck->m[i];
	return NULL;
}

/* A connected follower's acked LSN by member name; false if it is not
 * connected. */
static bool
peer_acked(const struct elect *e, const struct cluster_keys *ck,
    const char *name, uint64_t *acked)
{
	for (size_t i = 0; i < e->now.npeers; i++) {
		const struct elect_member *m =
		    member_by_client(ck, e->now.peers[i].url);

		if (m != NULL && strcmp(m->name, name) == 0) {
			*acked = e->now.peers[i].acked_lsn;
			return true;
		}
	}
	return false;
}

static void
send_count(struct elect *e, const struct cluster_keys *ck,
    char (*names)[ELECT_NAME_MAX + 1], size_t n)
{
	struct elect_cmd *cmd = calloc(1, sizeof(*cmd));

	if (cmd == NULL)
		return;
	cmd->kind = ELECT_CMD_COUNT;
	cmd->gen = ++e->gen;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < ck->n; j++)
			if (strcmp(ck->m[j].name, names[i]) == 0)
				copy(cmd->urls[cmd->nurls++], MSG_URL_MAX + 1,
				    ck->m[j].client);
	push_cmd(e, cmd);
	free(cmd);
}

/* The set the leader should count: the members it counts that are still
 * connected, then the most caught-up other followers, up to K. */
static size_t
wanted_set(const struct elect *e, const struct cluster_keys *ck,
    char (*out)[ELECT_NAME_MAX + 1])
{
	size_t n = 0;
	uint64_t acked;

	for (size_t i = 0; i < e->nsync && n < e->k; i++)
		if (peer_acked(e, ck, e->sync[i], &acked))
			copy(out[n++], ELECT_NAME_MAX + 1, e->sync[i]);
	while (n < e->k) {
		const char *best = NULL;
		uint64_t best_acked = 0;

		for (size_t i = 0; i < e->now.npeers; i++) {
			const struct elect_member *m =
			    member_by_client(ck, e->now.peers[i].url);

			if (m == NULL || in_set(out, n, m->name))
				continue;
			if (best == NULL ||
			    e->now.peers[i].acked_lsn > best_acked) {
				best = m->name;
				best_acked = e->now.peers[i].acked_lsn;
			}
		}
		if (best == NULL)
			break;
		copy(out[n++], ELECT_NAME_MAX + 1, best);
	}
	return n;
}

static bool
same_set(char (*a)[ELECT_NAME_MAX + 1], size_t na,
    char (*b)[ELECT_NAME_MAX + 1], size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!in_set(b, nb, a[i]))
			return false;
	return true;
}

/* Moves the counted set towards the wanted one, a step per turn: count
 * the intersection; once the core does, wait until every newcomer holds
 * the core's last LSN of then; write the sync key; count the new set. */
static void
keep_sync_set(struct elect *e, const struct cluster_keys *ck)
{
	char want[ELECT_MEMBERS_MAX][ELECT_NAME_MAX + 1];
	char both[ELECT_MEMBERS_MAX][ELECT_NAME_MAX + 1];
	size_t nwant, nboth = 0;
	uint64_t acked;
	json_t *j, *a;
	bool done = false;
	char *s;
	int rc;

	if (e->k == 0 || e->epoch == 0 || e->now.role != ELECT_LEADER)
		return;
	if (!e->shrinking) {
		nwant = wanted_set(e, ck, want);
		if (nwant < e->k || same_set(want, nwant, e->sync, e->nsync))
			return;
		for (size_t i = 0; i < e->nsync; i++)
			if (in_set(want, nwant, e->sync[i]))
				copy(both[nboth++], ELECT_NAME_MAX + 1,
				    e->sync[i]);
		memcpy(e->next, want, sizeof(want[0]) * nwant);
		e->nnext = nwant;
		send_count(e, ck, both, nboth);
		e->shrinking = true;
		e->target_lsn = 0;
		return;
	}
	if (e->now.count_gen != e->gen)
		return; /* the core has not counted the intersection yet */
	if (e->target_lsn == 0)
		e->target_lsn = e->now.last_lsn;
	for (size_t i = 0; i < e->nnext; i++) {
		if (in_set(e->sync, e->nsync, e->next[i]))
			continue;
		if (!peer_acked(e, ck, e->next[i], &acked)) {
			e->shrinking = false; /* gone: choose again */
			return;
		}
		if (acked < e->target_lsn)
			return;
	}
	a = json_array();
	for (size_t i = 0; i < e->nnext && a != NULL; i++)
		json_array_append_new(a, json_string(e->next[i]));
	j = json_pack("{s:I, s:s, s:i, s:I, s:o}", "epoch",
	    (json_int_t)e->epoch, "leader", e->node, "k", (int)e->k, "lsn",
	    (json_int_t)e->target_lsn, "members", a);
	s = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (s == NULL)
		return;
	rc = etcd_put_if_lease(
	    e->etcd, e->k_sync, s, strlen(s), 0, e->k_leader, e->lease, &done);
	free(s);
	if (rc != 0) {
		etcd_failed(e, "write the sync set", rc);
		return;
	}
	if (!done) {
		lose_leader_key(e, "the key is bound to another lease");
		return;
	}
	memcpy(e->sync, e->next, sizeof(e->next[0]) * e->nnext);
	e->nsync = e->nnext;
	e->shrinking = false;
	send_count(e, ck, e->sync, e->nsync);
	log_info("elect", "sync set members=%zu first=%s lsn=%" PRIu64,
	    e->nsync, e->nsync > 0 ? e->sync[0] : "-", e->target_lsn);
}

/* ---- a switchover ------------------------------------------------------- */

static void
handed(
    struct elect *e, int rc, const char *text, const char *url, uint64_t epoch)
{
	struct elect_cmd *cmd = calloc(1, sizeof(*cmd));

	e->ho = HO_NONE;
	if (cmd == NULL)
		return;
	cmd->kind = ELECT_CMD_HANDED;
	cmd->rc = rc;
	cmd->epoch = epoch;
	copy(cmd->text, sizeof(cmd->text), text);
	copy(cmd->url, sizeof(cmd->url), url);
	push_cmd(e, cmd);
	free(cmd);
}

static void
handover_start(struct elect *e, const struct cluster_keys *ck)
{
	char text[ELECT_ERR_MAX];
	bool found = false;

	for (size_t i = 0; i < ck->n; i++)
		found = found || strcmp(ck->m[i].name, e->now.handover_to) == 0;
	if (!found) {
		snprintf(text, sizeof(text),
		    "switchover: no member named '%s' in cluster %s",
		    e->now.handover_to, e->cluster);
		handed(e, SLUICE_ENOTFOUND, text, "", 0);
		return;
	}
	copy(e->ho_to, sizeof(e->ho_to), e->now.handover_to);
	e->ho_deadline = clock_mono_ms() + e->now.handover_ms;
	e->ho = HO_CATCHUP;
	log_info("elect", "switchover: waiting for %s to catch up", e->ho_to);
}

/* A switchover the core was asked for: started if this node holds the
 * leader key, else refused. */
static void
handover_new(struct elect *e, const struct cluster_keys *ck)
{
	if (e->ho != HO_NONE || !e->now.handover ||
	    e->now.handover_id == e->ho_id)
		return;
	e->ho_id = e->now.handover_id;
	if (e->holding && e->epoch != 0 && ck->leader_found)
		handover_start(e, ck);
	else
		handed(e, SLUICE_ESTATE,
		    "switchover: this node does not hold the leader key (yet); "
		    "try again",
		    "", 0);
}

/* Once the target holds every record, name it in the switchover key and
 * give the leader key up. */
static void
handover_turn(struct elect *e, const struct cluster_keys *ck)
{
	char text[ELECT_ERR_MAX];
	uint64_t acked = 0;
	json_t *j;
	bool done = false;
	char *s;
	int rc;

	if (e->ho != HO_CATCHUP)
		return;
	if (clock_mono_ms() > e->ho_deadline) {
		snprintf(text, sizeof(text),
		    "switchover: %s did not catch up in time; this node "
		    "keeps leading",
		    e->ho_to);
		handed(e, SLUICE_ETIMEDOUT, text, "", 0);
		return;
	}
	/* every write answered first: none fails when the key is given up */
	if (!peer_acked(e, ck, e->ho_to, &acked) || acked < e->now.last_lsn ||
	    e->now.commit_lsn < e->now.last_lsn)
		return;
	j = json_pack("{s:s, s:s, s:I}", "from", e->node, "to", e->ho_to,
	    "until", (json_int_t)(clock_now_ms() + 2 * (int64_t)e->ttl_ms));
	s = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (s == NULL)
		return;
	rc = etcd_put_if_lease(e->etcd, e->k_switch, s, strlen(s), 0,
	    e->k_leader, e->lease, &done);
	free(s);
	if (rc != 0 || !done) {
		if (rc != 0)
			etcd_failed(e, "write the switchover key", rc);
		return;
	}
	rc = etcd_del(e->etcd, e->k_leader, NULL);
	if (rc != 0) {
		etcd_failed(e, "give the leader key up", rc);
		return;
	}
	lose_leader_key(e, "handed over");
	e->ho = HO_RELEASED;
	e->ho_deadline = clock_mono_ms() + 4 * (int64_t)e->ttl_ms;
	log_info("elect", "switchover: leader key given up for %s lsn=%" PRIu64,
	    e->ho_to, e->now.last_lsn);
}

/* ---- one turn ----------------------------------------------------------- */

static void
follow_leader(struct elect *e, const struct cluster_keys *ck)
{
	struct elect_cmd *cmd;

	if (strcmp(ck->leader, e->node) == 0 || ck->leader_repl[0] == '\0')
		return; /* our own key from before a restart: it expires */
	if (e->now.role != ELECT_LEADER &&
	    strcmp(e->now.following, ck->leader_repl) == 0)
		return;
	if (e->now.role == ELECT_LEADER)
		return; /* the core fences itself first (lease_until) */
	cmd = calloc(1, sizeof(*cmd));
	if (cmd == NULL)
		return;
	cmd->kind = ELECT_CMD_FOLLOW;
	copy(cmd->url, sizeof(cmd->url), ck->leader_repl);
	log_info("elect", "following the leader leader=%s repl=%s", ck->leader,
	    ck->leader_repl);
	push_cmd(e, cmd);
	free(cmd);
}

static void
turn(struct elect *e)
{
	struct cluster_keys *ck = calloc(1, sizeof(*ck));

	if (ck == NULL)
		return;
	pthread_mutex_lock(&e->mu);
	e->now = e->st;
	pthread_mutex_unlock(&e->mu);
	led(e);
	if (!keep_lease(e))
		goto out;
	if (read_cluster(e, ck) != 0)
		goto out;
	etcd_ok(e);
	if (ck->leader_found && e->holding && ck->leader_lease != e->lease)
		lose_leader_key(e, "another lease holds it");
	if (!ck->leader_found && e->holding)
		lose_leader_key(e, "the key is gone");
	publish_member(e);
	handover_new(e, ck);
	if (e->ho == HO_RELEASED) {
		if (ck->leader_found && strcmp(ck->leader, e->ho_to) == 0 &&
		    ck->leader_epoch != 0)
			handed(e, 0, "", ck->leader_client, ck->leader_epoch);
		else if (clock_mono_ms() > e->ho_deadline)
			handed(e, SLUICE_ETIMEDOUT,
			    "switchover: the leader key was given up, but the "
			    "target did not take it in time",
			    "", 0);
	}
	if (ck->leader_found) {
		e->absent_since = 0;
		if (e->holding && !e->lead_wait &&
		    e->now.role == ELECT_FENCED && e->now.epoch == e->epoch) {
			lead_again(e);
		} else if (e->holding) {
			keep_sync_set(e, ck);
			handover_turn(e, ck);
		} else {
			follow_leader(e, ck);
		}
	} else {
		if (e->absent_since == 0)
			e->absent_since = clock_mono_ms();
		try_to_lead(e, ck);
	}
	publish_view(e, ck);
out:
	free(ck);
}

/* Whether a change is under way that the next turn should see soon: no
 * leader, a promotion, a new sync set, a switchover. */
static bool
busy(const struct elect *e)
{
	return e->absent_since != 0 || e->lead_wait || e->shrinking ||
	    e->ho != HO_NONE;
}

static void *
run(void *arg)
{
	struct elect *e = arg;
	struct timespec ts;
	bool stop = false, resign;

	while (!stop) {
		turn(e);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec +=
		    (long)(busy(e) ? FAST_TICK_MS : TICK_MS) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&e->mu);
		if (!e->stop)
			pthread_cond_timedwait(&e->wake, &e->mu, &ts);
		stop = e->stop;
		pthread_mutex_unlock(&e->mu);
	}
	pthread_mutex_lock(&e->mu);
	resign = e->resign;
	pthread_mutex_unlock(&e->mu);
	if (resign && e->lease != 0) {
		/* the member key and, if ours, the leader key go with it */
		if (etcd_lease_revoke(e->etcd, e->lease) == 0)
			log_info("elect", "lease given up%s",
			    e->holding ? ", with the leader key" : "");
		else
			log_warn("elect",
			    "cannot give the lease up; it expires by itself "
			    "error=\"%s\"",
			    etcd_errmsg(e->etcd));
	}
	return NULL;
}

/* ---- the interface ------------------------------------------------------ */

int
elect_start(struct elect **out, const struct elect_config *cfg, char *err,
    size_t errlen)
{
	struct elect *e = calloc(1, sizeof(*e));
	pthread_condattr_t ca;

	if (e == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	copy(e->cluster, sizeof(e->cluster), cfg->cluster);
	copy(e->node, sizeof(e->node), cfg->node);
	copy(e->client, sizeof(e->client), cfg->client);
	copy(e->repl, sizeof(e->repl), cfg->repl);
	e->ttl_ms = cfg->ttl_ms;
	e->granted_ms = cfg->ttl_ms;
	e->k = cfg->sync_replicas;
	snprintf(e->k_prefix, KEY_MAX, "/sluice/%s/", e->cluster);
	snprintf(e->k_leader, KEY_MAX, "/sluice/%s/leader", e->cluster);
	snprintf(e->k_sync, KEY_MAX, "/sluice/%s/sync", e->cluster);
	snprintf(e->k_switch, KEY_MAX, "/sluice/%s/switchover", e->cluster);
	snprintf(e->k_members, KEY_MAX, "/sluice/%s/members/", e->cluster);
	snprintf(
	    e->k_member, KEY_MAX, "/sluice/%s/members/%s", e->cluster, e->node);
	copy(e->view.cluster, sizeof(e->view.cluster), e->cluster);
	copy(e->view.node, sizeof(e->view.node), e->node);
	e->view.ttl_ms = e->ttl_ms;
	e->st.role = ELECT_CANDIDATE;
	/* a call may take a third of the TTL: the turn after a slow one
	 * still renews in time */
	e->etcd = etcd_new(cfg->endpoints, (int)(cfg->ttl_ms / 3), err, errlen);
	if (e->etcd == NULL) {
		free(e);
		return -1;
	}
	e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&e->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (e->efd < 0 || pthread_create(&e->thread, NULL, run, e) != 0) {
		snprintf(err, errlen, "cannot start the election thread: %s",
		    strerror(errno));
		if (e->efd >= 0)
			close(e->efd);
		etcd_delete(e->etcd);
		free(e);
		return -1;
	}
	*out = e;
	return 0;
}

void
elect_stop(struct elect *e, bool resign)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&e->mu);
	e->stop = true;
	e->resign = resign;
	pthread_cond_signal(&e->wake);
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->thread, NULL);
	etcd_delete(e->etcd);
	close(e->efd);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->wake);
	free(e);
}

int
elect_fd(const struct elect *e)
{
	return e != NULL ? e->efd : -1;
}

void
elect_publish(struct elect *e, const struct elect_state *s)
{
	pthread_mutex_lock(&e->mu);
	e->st = *s;
	pthread_mutex_unlock(&e->mu);
}

bool
elect_next_cmd(struct elect *e, struct elect_cmd *out)
{
	uint64_t v;
	bool got = false;

	if (read(e->efd, &v, sizeof(v)) < 0) {
		/* nothing signalled; a command may still wait */
	}
	pthread_mutex_lock(&e->mu);
	if (e->ncmds > 0) {
		*out = e->cmds[e->cmd_head];
		e->cmd_head = (e->cmd_head + 1) % CMDS_MAX;
		e->ncmds--;
		got = true;
	}
	pthread_mutex_unlock(&e->mu);
	return got;
}

void
elect_led(struct elect *e, uint64_t epoch)
{
	pthread_mutex_lock(&e->mu);
	e->led = true;
	e->led_epoch = epoch;
	pthread_cond_signal(&e->wake);
	pthread_mutex_unlock(&e->mu);
}

int64_t
elect_lease_until(const struct elect *e)
{
	return atomic_load(&((struct elect *)e)->lease_until);
}

void
elect_view(const struct elect *e, struct elect_view *out)
{
	struct elect *m = (struct elect *)e;

	pthread_mutex_lock(&m->mu);
	*out = e->view;
	pthread_mutex_unlock(&m->mu);
}
