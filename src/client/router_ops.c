/* router_ops - the calls a routing handle routes (sluice_map.h): each
 * request goes to the connection of the cluster its tube (or its task)
 * belongs to; a SLUICE_EMOVED answer reads the map again and sends the
 * request again, by the rule of router_moved (router.c): at once by a
 * newer map, after a backoff to a node behind the map, within the
 * call's timeout. A batch put is split by cluster; a take over tubes
 * of several clusters asks each at once, then waits on all of them
 * (router_wait.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "client/map_int.h"
#include "util/clock.h"

/* The connection of the owner of `tube`, and its stable name. */
static int
route(struct sluice_router *r, const char *tube, bool put,
    struct sluice_client **c, const char **name)
{
	const char *owner;
	int rc;

	if ((rc = router_owner(r, tube, put, &owner)) != 0)
		return rc;
	return router_conn(r, owner, c, name);
}

int
sluice_router_put(struct sluice_router *r, const struct sluice_put_opts *o,
    const void *payload, size_t len, struct sluice_put_result *res)
{
	const char *tube = o != NULL ? o->tube : NULL;
	struct router_retry t;

	if (r == NULL)
		return SLUICE_EINVAL;
	router_retry_init(r, &t);
	for (;;) {
		struct sluice_client *c;
		const char *name;
		int rc;

		if ((rc = route(r, tube, true, &c, &name)) != 0)
			return rc;
		rc = sluice_put_ex(c, o, payload, len, res);
		if (rc == SLUICE_EMOVED && router_moved(r, &t))
			continue;
		if (rc != 0)
			router_err(r, name, c);
		return rc;
	}
}

/* Puts items[0..k) by their owners, one request per cluster; a part
 * refused SLUICE_EMOVED is routed again, with the items not sent yet,
 * while router_moved says so. Returns the first request's error (its
 * items carry it). */
static int
put_group(struct sluice_router *r, struct sluice_batch_item *items, size_t k)
{
	struct sluice_batch_item *part = calloc(k, sizeof(*part));
	size_t *pidx = calloc(k, sizeof(*pidx));
	bool *done = calloc(k, sizeof(*done));
	struct router_retry t;
	int first = 0;

	if (part == NULL || pidx == NULL || done == NULL) {
		free(part);
		free(pidx);
		free(done);
		return SLUICE_ENOMEM;
	}
	router_retry_init(r, &t);
	for (size_t i = 0; i < k;) {
		struct sluice_client *c = NULL;
		const char *name = NULL;
		size_t np = 0;
		int rc;

		if (done[i]) {
			i++;
			continue;
		}
		rc = route(r, items[i].opts.tube, true, &c, &name);
		for (size_t j = i; j < k; j++) {
			struct sluice_client *cj;
			const char *nj;

			if (done[j])
				continue;
			if (j != i &&
			    (rc != 0 ||
			        route(r, items[j].opts.tube, true, &cj, &nj) !=
			            0 ||
			        cj != c))
				continue;
			done[j] = true;
			pidx[np] = j;
			part[np++] = items[j];
		}
		if (rc == 0)
			rc = sluice_put_batch(c, part, np);
		if (rc == SLUICE_EMOVED && c != NULL && router_moved(r, &t)) {
			for (size_t j = 0; j < np; j++)
				done[pidx[j]] = false;
			continue; /* item i again, by the map read now */
		}
		for (size_t j = 0; j < np; j++) {
			if (rc == 0) {
				items[pidx[j]] = part[j];
			} else {
				items[pidx[j]].rc = rc;
				items[pidx[j]].errmsg = "";
			}
		}
		if (rc != 0 && first == 0) {
			first = rc;
			if (c != NULL && rc != SLUICE_EMOVED)
				router_err(r, name, c);
		}
		i++;
	}
	free(part);
	free(pidx);
	free(done);
	return first;
}

int
sluice_router_put_batch(
    struct sluice_router *r, struct sluice_batch_item *items, size_t n)
{
	if (r == NULL || items == NULL || n == 0)
		return SLUICE_EINVAL;
	return put_group(r, items, n);
}

/* Adds `tube` to the group of connection `c` (cluster `name`). */
static void
group_add(struct take_group *g, size_t *ng, struct sluice_client *c,
    const char *name, const char *tube)
{
	size_t k;

	for (k = 0; k < *ng && g[k].c != c; k++)
		;
	if (k == *ng) {
		if (*ng == MSG_TAKE_TUBES_MAX)
			return;
		g[k].c = c;
		g[k].name = name;
		g[k].n = 0;
		(*ng)++;
	}
	g[k].tubes[g[k].n++] = tube;
}

/* The tubes of a take by cluster: each tube's draining clusters first
 * (their old tasks are not starved; a cluster whose members are not
 * known is left out), then its owner. */
static int
group_tubes(struct sluice_router *r, const char *const *tubes, size_t n,
    struct take_group *g, size_t *ng)
{
	*ng = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cmap_entry *e;
		struct sluice_client *c;
		const char *name;
		int rc;

		if ((rc = route(r, tubes[i], false, &c, &name)) != 0)
			return rc;
		e = cmap_lookup(&r->map, tubes[i], strlen(tubes[i]));
		for (uint8_t d = 0; e != NULL && d < e->ndraining; d++) {
			struct sluice_client *dc;
			const char *dname;

			if (router_conn(r, e->draining[d], &dc, &dname) == 0)
				group_add(g, ng, dc, dname, tubes[i]);
		}
		group_add(g, ng, c, name, tubes[i]);
	}
	return 0;
}

static void
mark(struct sluice_task *t, size_t n, const char *cluster)
{
	for (size_t i = 0; i < n; i++)
		t[i].cluster = cluster;
}

int
sluice_router_take(struct sluice_router *r, const struct sluice_take_opts *o,
    struct sluice_task **tasks, size_t *n)
{
	static const char *const dflt[] = { SLUICE_DEFAULT_TUBE };
	struct sluice_take_opts one = { 0 }, base = { 0 };
	struct take_group *g;
	size_t ng;
	struct router_retry t;
	int64_t deadline;
	int rc;

	if (r == NULL || tasks == NULL || n == NULL)
		return SLUICE_EINVAL;
	if (o != NULL)
		base = *o;
	if (base.tubes == NULL) {
		base.tubes = dflt;
		base.ntubes = 1;
	}
	if (base.ntubes == 0 || base.ntubes > MSG_TAKE_TUBES_MAX) {
		router_errmsg(r, "take: %zu tubes, 1 to %d", base.ntubes,
		    MSG_TAKE_TUBES_MAX);
		return base.ntubes == 0 ? SLUICE_EINVAL : SLUICE_ELIMIT;
	}
	if ((g = calloc(MSG_TAKE_TUBES_MAX, sizeof(*g))) == NULL)
		return SLUICE_ENOMEM;
	deadline = clock_mono_ms() + (int64_t)base.wait_ms;
	router_retry_init(r, &t);
regroup:
	if ((rc = group_tubes(r, base.tubes, base.ntubes, g, &ng)) != 0)
		goto out;
	if (ng == 1) {
		int64_t left = deadline - clock_mono_ms();

		one = base;
		one.tubes = g[0].tubes;
		one.ntubes = g[0].n;
		one.wait_ms = left > 0 ? (uint64_t)left : 0;
		rc = sluice_take(g[0].c, &one, tasks, n);
		if (rc == 0)
			mark(*tasks, *n, g[0].name);
		else if (rc == SLUICE_EMOVED && router_moved(r, &t))
			goto regroup;
		else if (rc != SLUICE_ETIMEDOUT)
			router_err(r, g[0].name, g[0].c);
		else
			router_errmsg(r, "%s", sluice_errmsg(g[0].c));
		goto out;
	}
	/* several clusters: each at once, without a wait... */
	for (size_t k = 0; k < ng; k++) {
		one = base;
		one.tubes = g[k].tubes;
		one.ntubes = g[k].n;
		one.wait_ms = 0;
		rc = sluice_take(g[k].c, &one, tasks, n);
		if (rc == 0) {
			mark(*tasks, *n, g[k].name);
			goto out;
		}
		if (rc == SLUICE_EMOVED && router_moved(r, &t))
			goto regroup;
		if (rc != SLUICE_ETIMEDOUT) {
			router_err(r, g[k].name, g[k].c);
			goto out;
		}
	}
	/* ...then waiting on all of them at once */
	if (base.wait_ms == 0 || clock_mono_ms() >= deadline) {
		router_errmsg(r, "nothing to take within %llu ms",
		    (unsigned long long)base.wait_ms);
		rc = SLUICE_ETIMEDOUT;
		goto out;
	}
	rc = router_wait_take(r, &base, g, ng, deadline, tasks, n);
	if (rc == SLUICE_EMOVED && router_moved(r, &t))
		goto regroup; /* a wait refused: the others are cancelled */
out:
	free(g);
	return rc;
}

/* The connection a task came from. */
static int
task_conn(struct sluice_router *r, const struct sluice_task *t,
    struct sluice_client **c, const char **name)
{
	if (r == NULL || t == NULL)
		return SLUICE_EINVAL;
	if (t->cluster != NULL)
		return router_conn(r, t->cluster, c, name);
	return route(r, t->tube, false, c, name);
}

#define LEASE_CALL(call)                                                       \
	do {                                                                   \
		struct sluice_client *c;                                       \
		const char *name;                                              \
		int rc;                                                        \
		if ((rc = task_conn(r, t, &c, &name)) != 0)                    \
			return rc;                                             \
		if ((rc = (call)) != 0)                                        \
			router_err(r, name, c);                                \
		return rc;                                                     \
	} while (0)

int
sluice_router_ack(struct sluice_router *r, const struct sluice_task *t,
    const struct sluice_ack_opts *o, struct sluice_after *after)
{
	LEASE_CALL(sluice_ack_opts(c, t->id, t->lease, o, after));
}

int
sluice_router_release(struct sluice_router *r, const struct sluice_task *t,
    const struct sluice_release_opts *o, struct sluice_after *after)
{
	static const struct sluice_release_opts dflt = { .priority = -1 };

	LEASE_CALL(sluice_release_opts(
	    c, t->id, t->lease, o != NULL ? o : &dflt, after));
}

int
sluice_router_fail(struct sluice_router *r, const struct sluice_task *t,
    const char *error, int64_t delay_ms, struct sluice_after *after)
{
	LEASE_CALL(sluice_fail(c, t->id, t->lease, error, delay_ms, after));
}

int
sluice_router_touch(struct sluice_router *r, const struct sluice_task *t,
    struct sluice_after *after)
{
	LEASE_CALL(sluice_touch(c, t->id, t->lease, after));
}

int
sluice_router_bury(struct sluice_router *r, const struct sluice_task *t,
    const char *error, struct sluice_after *after)
{
	LEASE_CALL(sluice_bury_error(c, t->id, t->lease, error, after));
}

void
sluice_router_stats_free(struct sluice_router_stats *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		sluice_stats_free(s->per[i].stats);
	free(s->per);
	free(s);
}

int
sluice_router_stats(
    struct sluice_router *r, const char *tube, struct sluice_router_stats **out)
{
	char(*names)[MSG_NODE_MAX + 1] = NULL;
	struct sluice_router_stats *s;
	size_t n;
	int rc;

	if (r == NULL || out == NULL)
		return SLUICE_EINVAL;
	if ((rc = router_refresh(r, false)) != 0)
		return rc;
	s = calloc(1, sizeof(*s));
	names = calloc(MSG_MAP_CLUSTERS_MAX + 1, sizeof(*names));
	if (s == NULL || names == NULL ||
	    (s->per = calloc(MSG_MAP_CLUSTERS_MAX + 1, sizeof(*s->per))) ==
	        NULL) {
		free(names);
		sluice_router_stats_free(s);
		return SLUICE_ENOMEM;
	}
	n = cmap_cluster_names(&r->map, names, MSG_MAP_CLUSTERS_MAX);
	/* the given node's cluster holds the tubes no entry maps */
	if (r->seed != NULL && r->self[0] != '\0') {
		size_t k;

		for (k = 0; k < n && strcmp(names[k], r->self) != 0; k++)
			;
		if (k == n)
			snprintf(names[n++], sizeof(names[0]), "%s", r->self);
	}
	for (size_t i = 0; i < n; i++) {
		struct sluice_client *c;
		const char *name = NULL;

		rc = router_conn(r, names[i], &c, &name);
		s->per[s->n].cluster = name;
		if (rc == 0)
			rc = sluice_stats(c, tube, &s->per[s->n].stats);
		if (rc == SLUICE_ENOTFOUND && tube != NULL)
			rc = 0; /* the tube is not there: nothing to add */
		s->per[s->n].rc = rc;
		if (name == NULL)
			s->per[s->n].cluster = "?";
		if (s->per[s->n].stats != NULL) {
			const struct sluice_tube_stats *t =
			    &s->per[s->n].stats->totals;

			s->ready += t->ready;
			s->delayed += t->delayed;
			s->taken += t->taken;
			s->buried += t->buried;
		}
		s->n++;
	}
	free(names);
	*out = s;
	return 0;
}
