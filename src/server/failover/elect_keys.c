/* elect_keys - the election thread's dealings with etcd's keys: the
 * node's lease (granted, renewed at 40 % of its TTL, and the deadline the
 * core fences itself at), one range that reads the whole cluster, and the
 * keys this node writes: its member key, and the leader key's value.
 *
 * Keys, under /sluice/CLUSTER/ (elect.h lists them): members/NODE,
 * leader, sync and switchover, each a JSON object. The member and leader
 * keys carry the node's client, replication and HTTP URLs (the last ""
 * when it publishes none), which the cluster map's readers take. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/failover/elect_int.h"
#include "etcd/etcd.h"
#include "util/clock.h"
#include "util/log.h"

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

void
elect_set_lease_until(struct elect *e)
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

void
elect_lose_key(struct elect *e, const char *why)
{
	if (!e->holding)
		return;
	log_warn("elect", "no longer holds the leader key: %s", why);
	e->holding = false;
	e->epoch = 0;
	e->nsync = 0;
	e->shrinking = false;
	elect_set_lease_until(e);
	elect_wake_core(e); /* it fences itself now, not at its next timer */
}

/* Grants or renews the node's lease. False while it has none. */
bool
elect_keep_lease(struct elect *e)
{
	int64_t t = clock_mono_ms(), ttl = 0, id;
	int64_t unix_t = clock_now_ms();
	int rc;

	if (e->lease == 0) {
		rc = etcd_lease_grant(
		    e->etcd, (e->ttl_ms + 999) / 1000, &id, &ttl);
		if (rc != 0) {
			elect_etcd_failed(e, "lease grant", rc);
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
			elect_lose_key(e, "its lease expired");
			return false;
		}
		if (rc != 0) {
			elect_etcd_failed(e, "lease keepalive", rc);
			return true; /* still ours until it runs out */
		}
	} else {
		return true;
	}
	e->granted_ms = ttl * 1000;
	e->renewed = t;
	e->renewed_unix = unix_t;
	elect_set_lease_until(e);
	return true;
}

static void
parse_member(json_t *j, const struct etcd_kv *kv, struct elect_member *m)
{
	elect_copy(m->name, sizeof(m->name), json_str(j, "name"));
	elect_copy(m->client, sizeof(m->client), json_str(j, "client"));
	elect_copy(m->repl, sizeof(m->repl), json_str(j, "repl"));
	m->role = (uint8_t)json_u64(j, "role");
	m->epoch = json_u64(j, "epoch");
	m->lsn = json_u64(j, "lsn");
	m->lag = json_u64(j, "lag");
	m->lease_until = (int64_t)json_u64(j, "lease_until");
	m->at = (int64_t)json_u64(j, "at");
	(void)kv;
}

static void
parse_key(struct elect *e, const struct etcd_kv *kv, struct elect_keys *ck)
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
		elect_copy(ck->leader, sizeof(ck->leader), json_str(j, "name"));
		elect_copy(ck->leader_client, sizeof(ck->leader_client),
		    json_str(j, "client"));
		elect_copy(ck->leader_repl, sizeof(ck->leader_repl),
		    json_str(j, "repl"));
		ck->leader_epoch = json_u64(j, "epoch");
	} else if (strcmp(kv->key, e->k_sync) == 0) {
		ck->sync_found = true;
		a = json_object_get(j, "members");
		for (size_t i = 0;
		     i < json_array_size(a) && ck->nsync < ELECT_MEMBERS_MAX;
		     i++)
			elect_copy(ck->sync[ck->nsync++], ELECT_NAME_MAX + 1,
			    json_string_value(json_array_get(a, i)));
		ck->sync_lsn = json_u64(j, "lsn");
		if (json_u64(j, "epoch") > e->max_epoch)
			e->max_epoch = json_u64(j, "epoch");
	} else if (strcmp(kv->key, e->k_switch) == 0) {
		ck->switch_found = true;
		elect_copy(
		    ck->switch_to, sizeof(ck->switch_to), json_str(j, "to"));
		ck->switch_until = (int64_t)json_u64(j, "until");
	} else if (strncmp(kv->key, e->k_members, strlen(e->k_members)) == 0 &&
	    ck->n < ELECT_MEMBERS_MAX) {
		parse_member(j, kv, &ck->m[ck->n++]);
	}
	json_decref(j);
}

int
elect_read_cluster(struct elect *e, struct elect_keys *ck)
{
	struct etcd_kvs kvs;
	int rc;

	memset(ck, 0, sizeof(*ck));
	rc = etcd_get_prefix(e->etcd, e->k_prefix, &kvs);
	if (rc != 0) {
		elect_etcd_failed(e, "read the cluster", rc);
		return rc;
	}
	for (size_t i = 0; i < kvs.n; i++)
		parse_key(e, &kvs.kv[i], ck);
	etcd_kvs_free(&kvs);
	for (size_t i = 0; i < ck->n; i++) {
		ck->m[i].sync =
		    elect_in_set(ck->sync, ck->nsync, ck->m[i].name);
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
void
elect_publish_view(struct elect *e, const struct elect_keys *ck)
{
	bool mine = e->holding; /* maybe created after the read */

	pthread_mutex_lock(&e->mu);
	elect_copy(e->view.leader, sizeof(e->view.leader),
	    mine                   ? e->node
	        : ck->leader_found ? ck->leader
	                           : "");
	elect_copy(e->view.leader_client, sizeof(e->view.leader_client),
	    mine                   ? e->client
	        : ck->leader_found ? ck->leader_client
	                           : "");
	e->view.holding = e->holding;
	e->view.lease_until = e->holding ? e->renewed_unix + e->granted_ms : 0;
	e->view.renewed_at = e->lease != 0 ? e->renewed_unix : 0;
	e->view.n = ck->n;
	memcpy(e->view.m, ck->m, ck->n * sizeof(ck->m[0]));
	elect_view_settle(e, ck);
	pthread_mutex_unlock(&e->mu);
}

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
		elect_etcd_failed(e, what, rc);
	free(s);
	json_decref(j);
}

void
elect_publish_member(struct elect *e)
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
	j = json_pack("{s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:I}",
	    "name", e->node, "client", e->client, "repl", e->repl, "http",
	    e->http, "role", (int)s->role, "epoch", (json_int_t)s->epoch, "lsn",
	    (json_int_t)s->durable_lsn, "lag", (json_int_t)s->lag_records,
	    "lease_until",
	    (json_int_t)(e->holding ? e->renewed_unix + e->granted_ms : 0),
	    "at", (json_int_t)clock_now_ms());
	put_json(e, "publish the member key", e->k_member, j, e->lease);
	e->published = t;
	e->published_lsn = s->durable_lsn;
	e->published_role = s->role;
}

json_t *
elect_leader_value(struct elect *e)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:I}", "name", e->node, "client",
	    e->client, "repl", e->repl, "http", e->http, "epoch",
	    (json_int_t)e->epoch);
}
