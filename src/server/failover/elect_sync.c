/* elect_sync - the sync set a leader with --sync-replicas K keeps: the
 * followers it counts, named in the sync key. The set changes a step per
 * turn: the core first counts only the members the old and new sets
 * share (ELECT_CMD_COUNT); once it does, every newcomer must hold the
 * leader's last LSN of then; then the sync key is written, and only then
 * does the core count the new set. So every acknowledged write is on each
 * member of the set, and the election (elect_lead.c) lets only a member
 * of the set lead. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/failover/elect_int.h"
#include "etcd/etcd.h"
#include "util/log.h"

/* The member whose client URL is `url`; NULL. */
static const struct elect_member *
member_by_client(const struct elect_keys *ck, const char *url)
{
	for (size_t i = 0; i < ck->n; i++)
		if (strcmp(ck->m[i].client, url) == 0)
			return &ck->m[i];
	return NULL;
}

/* A connected follower's acked LSN by member name; false if it is not
 * connected. */
bool
elect_peer_acked(const struct elect *e, const struct elect_keys *ck,
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
send_count(struct elect *e, const struct elect_keys *ck,
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
				elect_copy(cmd->urls[cmd->nurls++],
				    MSG_URL_MAX + 1, ck->m[j].client);
	elect_push_cmd(e, cmd);
	free(cmd);
}

/* The set the leader should count: the members it counts that are still
 * connected, then the most caught-up other followers, up to K. */
static size_t
wanted_set(const struct elect *e, const struct elect_keys *ck,
    char (*out)[ELECT_NAME_MAX + 1])
{
	size_t n = 0;
	uint64_t acked;

	for (size_t i = 0; i < e->nsync && n < e->k; i++)
		if (elect_peer_acked(e, ck, e->sync[i], &acked))
			elect_copy(out[n++], ELECT_NAME_MAX + 1, e->sync[i]);
	while (n < e->k) {
		const char *best = NULL;
		uint64_t best_acked = 0;

		for (size_t i = 0; i < e->now.npeers; i++) {
			const struct elect_member *m =
			    member_by_client(ck, e->now.peers[i].url);

			if (m == NULL || elect_in_set(out, n, m->name))
				continue;
			if (best == NULL ||
			    e->now.peers[i].acked_lsn > best_acked) {
				best = m->name;
				best_acked = e->now.peers[i].acked_lsn;
			}
		}
		if (best == NULL)
			break;
		elect_copy(out[n++], ELECT_NAME_MAX + 1, best);
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
		if (!elect_in_set(b, nb, a[i]))
			return false;
	return true;
}

/* Moves the counted set towards the wanted one, a step per turn: count
 * the intersection; once the core does, wait until every newcomer holds
 * the core's last LSN of then; write the sync key; count the new set. */
void
elect_keep_sync_set(struct elect *e, const struct elect_keys *ck)
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
			if (elect_in_set(want, nwant, e->sync[i]))
				elect_copy(both[nboth++], ELECT_NAME_MAX + 1,
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
		if (elect_in_set(e->sync, e->nsync, e->next[i]))
			continue;
		if (!elect_peer_acked(e, ck, e->next[i], &acked)) {
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
		elect_etcd_failed(e, "write the sync set", rc);
		return;
	}
	if (!done) {
		elect_lose_key(e, "the key is bound to another lease");
		return;
	}
	memcpy(e->sync, e->next, sizeof(e->next[0]) * e->nnext);
	e->nsync = e->nnext;
	e->shrinking = false;
	send_count(e, ck, e->sync, e->nsync);
	log_info("elect", "sync set members=%zu first=%s lsn=%" PRIu64,
	    e->nsync, e->nsync > 0 ? e->sync[0] : "-", e->target_lsn);
}
