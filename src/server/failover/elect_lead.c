/* elect_lead - who takes the leader key. By election: when nobody holds
 * it, the node that may lead (in the sync set, or no set restricts) and
 * is the most advanced of those that may (highest epoch, then LSN, then
 * the smallest name) creates it in a transaction that fails if it
 * exists; the others try only if the key stays absent for a whole TTL.
 * The winner's core begins a new epoch (ELECT_CMD_LEAD), which the key
 * then names. By switchover: the leader waits until the named member
 * holds every record, names it in the switchover key (only it may take
 * the leader key until that key's deadline), and gives the leader key up. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/failover/elect_int.h"
#include "etcd/etcd.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/log.h"

/* Whether `name`, whose log is durable up to `lsn`, may take the leader
 * key now. A member of the sync set whose log holds less than the set
 * held when it was formed lost its data (restarted empty under its old
 * name): it must catch up as a follower first. */
static bool
may_lead(const struct elect *e, const struct elect_keys *ck, const char *name,
    uint64_t lsn)
{
	if (ck->switch_found && ck->switch_until > clock_now_ms())
		return strcmp(ck->switch_to, name) == 0;
	if (e->k == 0 || !ck->sync_found || ck->nsync == 0)
		return true;
	return lsn >= ck->sync_lsn &&
	    elect_in_set(
	        (char(*)[ELECT_NAME_MAX + 1]) ck->sync, ck->nsync, name);
}

/* Whether this node is the most advanced of those that may lead: the
 * highest epoch, then LSN, then the smallest name. */
static bool
most_advanced(const struct elect *e, const struct elect_keys *ck)
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

/* The leader key was made under our lease: the core is asked to lead. */
static void
won(struct elect *e, bool switched)
{
	struct elect_cmd cmd = { .kind = ELECT_CMD_LEAD };

	e->holding = true;
	e->nsync = 0;
	e->shrinking = false;
	elect_set_lease_until(e);
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
	elect_push_cmd(e, &cmd);
}

void
elect_try_lead(struct elect *e, const struct elect_keys *ck)
{
	int64_t t = clock_mono_ms();
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
	j = elect_leader_value(e);
	s = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (s == NULL)
		return;
	rc = etcd_create(
	    e->etcd, e->k_leader, s, strlen(s), e->lease, &created, NULL);
	free(s);
	if (rc == 0 && created && FAULT_HIT(FAULT_ELECT_LOST) != 0)
		rc = ETCD_ETIMEDOUT; /* made, and its answer lost */
	if (rc != 0) {
		elect_etcd_failed(e, "create the leader key", rc);
		e->create_unsure = true;
		return;
	}
	if (!created)
		return; /* another node was quicker: follow it next turn */
	won(e, switched);
}

void
elect_adopt_key(struct elect *e, const struct elect_keys *ck)
{
	bool ours = e->create_unsure && e->lease != 0 &&
	    ck->leader_lease == e->lease && strcmp(ck->leader, e->node) == 0;

	e->create_unsure = false;
	if (!ours || e->holding || e->now.role == ELECT_LEADER || e->lead_wait)
		return;
	log_warn("elect",
	    "the leader key was made by a create whose answer was lost: "
	    "it is ours");
	won(e, false);
}

/* The core fenced itself, its lease deadline passed, yet the key is
 * still ours (a renewal came late, or etcd came back and extended every
 * lease): nobody else can have led, so it leads again, in a new epoch.
 * (Fenced at the epoch it leads: a state from before the core answered
 * LEAD says an older one.) */
void
elect_lead_again(struct elect *e)
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
	elect_push_cmd(e, &cmd);
}

/* The core answered LEAD: the key names our epoch from now on, and a
 * switchover that chose us is over. */
void
elect_lead_answered(struct elect *e)
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
		elect_lose_key(e, "the node could not begin its epoch");
		return;
	}
	if (epoch > e->max_epoch)
		e->max_epoch = epoch;
	if (!e->holding)
		return; /* lost meanwhile: the core fences itself */
	e->epoch = epoch;
	j = elect_leader_value(e);
	s = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (s == NULL)
		return;
	rc = etcd_put_if_lease(e->etcd, e->k_leader, s, strlen(s), e->lease,
	    e->k_leader, e->lease, &ok);
	free(s);
	if (rc != 0)
		elect_etcd_failed(e, "name the epoch in the leader key", rc);
	else if (!ok)
		elect_lose_key(e, "another lease holds it");
	else
		etcd_del(e->etcd, e->k_switch, NULL);
}

void
elect_handed(
    struct elect *e, int rc, const char *text, const char *url, uint64_t epoch)
{
	struct elect_cmd *cmd = calloc(1, sizeof(*cmd));

	e->ho = HO_NONE;
	if (cmd == NULL)
		return;
	cmd->kind = ELECT_CMD_HANDED;
	cmd->rc = rc;
	cmd->epoch = epoch;
	elect_copy(cmd->text, sizeof(cmd->text), text);
	elect_copy(cmd->url, sizeof(cmd->url), url);
	elect_push_cmd(e, cmd);
	free(cmd);
}

static void
handover_start(struct elect *e, const struct elect_keys *ck)
{
	char text[ELECT_ERR_MAX];
	bool found = false;

	for (size_t i = 0; i < ck->n; i++)
		found = found || strcmp(ck->m[i].name, e->now.handover_to) == 0;
	if (!found) {
		snprintf(text, sizeof(text),
		    "switchover: no member named '%s' in cluster %s",
		    e->now.handover_to, e->cluster);
		elect_handed(e, SLUICE_ENOTFOUND, text, "", 0);
		return;
	}
	elect_copy(e->ho_to, sizeof(e->ho_to), e->now.handover_to);
	e->ho_deadline = clock_mono_ms() + e->now.handover_ms;
	e->ho = HO_CATCHUP;
	log_info("elect", "switchover: waiting for %s to catch up", e->ho_to);
}

/* A switchover the core was asked for: started if this node holds the
 * leader key, else refused. */
void
elect_handover_new(struct elect *e, const struct elect_keys *ck)
{
	if (e->ho != HO_NONE || !e->now.handover ||
	    e->now.handover_id == e->ho_id)
		return;
	e->ho_id = e->now.handover_id;
	if (e->holding && e->epoch != 0 && ck->leader_found)
		handover_start(e, ck);
	else
		elect_handed(e, SLUICE_ESTATE,
		    "switchover: this node does not hold the leader key (yet); "
		    "try again",
		    "", 0);
}

/* Once the target holds every record, name it in the switchover key and
 * give the leader key up. */
void
elect_handover_turn(struct elect *e, const struct elect_keys *ck)
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
		elect_handed(e, SLUICE_ETIMEDOUT, text, "", 0);
		return;
	}
	/* every write answered first: none fails when the key is given up */
	if (!elect_peer_acked(e, ck, e->ho_to, &acked) ||
	    acked < e->now.last_lsn || e->now.commit_lsn < e->now.last_lsn)
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
			elect_etcd_failed(e, "write the switchover key", rc);
		return;
	}
	rc = etcd_del(e->etcd, e->k_leader, NULL);
	if (rc != 0) {
		elect_etcd_failed(e, "give the leader key up", rc);
		return;
	}
	elect_lose_key(e, "handed over");
	e->ho = HO_RELEASED;
	e->ho_deadline = clock_mono_ms() + 4 * (int64_t)e->ttl_ms;
	log_info("elect", "switchover: leader key given up for %s lsn=%" PRIu64,
	    e->ho_to, e->now.last_lsn);
}
