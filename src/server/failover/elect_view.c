/* elect_view - the cluster as a person reads it (`sluice cluster`, the
 * dashboard's nodes, GET /v1/cluster), settled from one read of the keys
 * so that it never contradicts itself:
 *   - the leader key says who leads: its holder's row says leader even
 *     while its member key is one publish behind (right after an election
 *     or a switchover), with the key's epoch when newer; another row that
 *     still says leader says fenced (a leader that stopped writing: it
 *     follows once it reads the key), and so does every row that says
 *     leader when no one holds the key;
 *   - this node's own row is what it is now, not what it last published;
 *   - a member whose key is gone (its lease ran out: the node died, or
 *     was cut off from etcd) stays in the view with what it last
 *     published (a member of the sync set this node never saw: its name
 *     alone), down, until it is removed: it leaves the sync set (the
 *     leader replaces it) and KEEP_GONE_MS pass, or it comes back. The
 *     readers say down (SLUICE_MEMBER_DOWN_MS) of a member whose key was
 *     not refreshed for that long (a running member refreshes it every
 *     REFRESH_MS) or that has no URL (never seen).
 * The election reads the keys themselves, never this view. */
#include <string.h>

#include "server/failover/elect_int.h"
#include "util/clock.h"

enum { KEEP_GONE_MS = 300000 }; /* a member gone, out of the sync set */

static bool
in_sync(const struct elect_keys *ck, const char *name)
{
	for (size_t s = 0; s < ck->nsync; s++)
		if (strcmp(ck->sync[s], name) == 0)
			return true;
	return false;
}

/* Remembers what each member last published, by name, and when it was
 * last in a key (known_at); forgets one removed. */
static void
remember(struct elect *e, const struct elect_keys *ck, int64_t now)
{
	size_t k = 0;

	for (size_t i = 0; i < ck->n; i++) {
		size_t j = 0;

		while (j < e->nknown && strcmp(e->known[j].name, ck->m[i].name))
			j++;
		if (j == e->nknown && e->nknown < ELECT_MEMBERS_MAX)
			e->nknown++;
		if (j < e->nknown) {
			e->known[j] = ck->m[i];
			e->known_at[j] = now;
		}
	}
	for (size_t j = 0; j < e->nknown; j++) {
		if (!in_sync(ck, e->known[j].name) &&
		    now - e->known_at[j] > KEEP_GONE_MS)
			continue; /* removed */
		e->known_at[k] = e->known_at[j];
		e->known[k++] = e->known[j];
	}
	e->nknown = k;
}

/* Appends `m` to the view (a member whose key is gone), down. */
static void
add_gone(struct elect_view *v, const struct elect_member *m)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->m[i].name, m->name) == 0)
			return;
	if (v->n == ELECT_MEMBERS_MAX)
		return;
	v->m[v->n] = *m;
	v->m[v->n].lease = false;
	if (v->m[v->n].role == ELECT_LEADER)
		v->m[v->n].role = ELECT_FENCED;
	v->n++;
}

void
elect_view_settle(struct elect *e, const struct elect_keys *ck)
{
	struct elect_view *v = &e->view;
	int64_t now = clock_now_ms();

	remember(e, ck, now);
	for (size_t i = 0; i < v->n; i++) {
		struct elect_member *m = &v->m[i];
		bool holds =
		    v->leader[0] != '\0' && strcmp(m->name, v->leader) == 0;

		if (strcmp(m->name, e->node) == 0) {
			m->role = e->now.role;
			m->epoch = e->now.epoch;
			m->lsn = e->now.durable_lsn;
			m->lag = e->now.lag_records;
			m->at = now;
		}
		if (holds) {
			m->role = ELECT_LEADER;
			m->lease = true;
			if (ck->leader_epoch > m->epoch)
				m->epoch = ck->leader_epoch;
		} else if (m->role == ELECT_LEADER) {
			/* not the key's holder (or no key at all: its lease
			 * ran out, or the key is not written yet) */
			m->role = ELECT_FENCED;
		}
	}
	/* the members whose key is gone: down, until removed */
	for (size_t j = 0; j < e->nknown; j++) {
		struct elect_member m = e->known[j];

		m.sync = in_sync(ck, m.name);
		add_gone(v, &m);
	}
	for (size_t s = 0; s < ck->nsync; s++) { /* never seen here */
		struct elect_member m;

		memset(&m, 0, sizeof(m));
		elect_copy(m.name, sizeof(m.name), ck->sync[s]);
		m.sync = true;
		add_gone(v, &m);
	}
}
