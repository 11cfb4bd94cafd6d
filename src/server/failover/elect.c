/* elect - the election thread (elect.h): its turn, the thread that runs
 * it, and the calls through which the core and the thread meet. The rest
 * of the thread's work is in elect_keys.c (its lease and the cluster's
 * keys in etcd), elect_lead.c (taking the leader key, by election or by
 * switchover) and elect_sync.c (the sync set a leader keeps).
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
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "server/failover/elect.h"
#include "server/failover/elect_int.h"
#include "etcd/etcd.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

void
elect_copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src != NULL ? src : "");
}

bool
elect_in_set(char (*set)[ELECT_NAME_MAX + 1], size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(set[i], name) == 0)
			return true;
	return false;
}

/* Remembers a failed etcd call for the view, and logs it once per
 * change of text. */
void
elect_etcd_failed(struct elect *e, const char *what, int rc)
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
	elect_copy(e->last_err, sizeof(e->last_err), text);
	pthread_mutex_lock(&e->mu);
	elect_copy(e->view.etcd_error, sizeof(e->view.etcd_error), text);
	e->view.etcd_error_at = clock_now_ms();
	e->view.etcd_errors++;
	pthread_mutex_unlock(&e->mu);
}

void
elect_wake_core(struct elect *e)
{
	uint64_t one = 1;

	if (write(e->efd, &one, sizeof(one)) < 0)
		log_warn("elect", "cannot wake the core error=\"%s\"",
		    strerror(errno));
}

void
elect_push_cmd(struct elect *e, const struct elect_cmd *cmd)
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
		elect_wake_core(e);
	else
		log_warn("elect",
		    "the core has not taken its commands; "
		    "dropped one kind=%d",
		    (int)cmd->kind);
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

/* ---- one turn ----------------------------------------------------------- */

static void
follow_leader(struct elect *e, const struct elect_keys *ck)
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
	elect_copy(cmd->url, sizeof(cmd->url), ck->leader_repl);
	log_info("elect", "following the leader leader=%s repl=%s", ck->leader,
	    ck->leader_repl);
	elect_push_cmd(e, cmd);
	free(cmd);
}

static void
turn(struct elect *e)
{
	struct elect_keys *ck = calloc(1, sizeof(*ck));

	if (ck == NULL)
		return;
	pthread_mutex_lock(&e->mu);
	e->now = e->st;
	pthread_mutex_unlock(&e->mu);
	elect_lead_answered(e);
	if (!elect_keep_lease(e))
		goto out;
	if (elect_read_cluster(e, ck) != 0)
		goto out;
	etcd_ok(e);
	if (ck->leader_found && e->holding && ck->leader_lease != e->lease)
		elect_lose_key(e, "another lease holds it");
	if (!ck->leader_found && e->holding)
		elect_lose_key(e, "the key is gone");
	elect_publish_member(e);
	elect_handover_new(e, ck);
	if (e->ho == HO_RELEASED) {
		if (ck->leader_found && strcmp(ck->leader, e->ho_to) == 0 &&
		    ck->leader_epoch != 0)
			elect_handed(
			    e, 0, "", ck->leader_client, ck->leader_epoch);
		else if (clock_mono_ms() > e->ho_deadline)
			elect_handed(e, SLUICE_ETIMEDOUT,
			    "switchover: the leader key was given up, but the "
			    "target did not take it in time",
			    "", 0);
	}
	if (ck->leader_found) {
		e->absent_since = 0;
		if (e->holding && !e->lead_wait &&
		    e->now.role == ELECT_FENCED && e->now.epoch == e->epoch) {
			elect_lead_again(e);
		} else if (e->holding) {
			elect_keep_sync_set(e, ck);
			elect_handover_turn(e, ck);
		} else {
			elect_adopt_key(e, ck);
			if (!e->holding)
				follow_leader(e, ck);
		}
	} else {
		e->create_unsure = false;
		if (e->absent_since == 0)
			e->absent_since = clock_mono_ms();
		elect_try_lead(e, ck);
	}
	elect_publish_view(e, ck);
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
	elect_copy(e->cluster, sizeof(e->cluster), cfg->cluster);
	elect_copy(e->node, sizeof(e->node), cfg->node);
	elect_copy(e->client, sizeof(e->client), cfg->client);
	elect_copy(e->repl, sizeof(e->repl), cfg->repl);
	elect_copy(
	    e->http, sizeof(e->http), cfg->http != NULL ? cfg->http : "");
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
	elect_copy(e->view.cluster, sizeof(e->view.cluster), e->cluster);
	elect_copy(e->view.node, sizeof(e->view.node), e->node);
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
