/* router - the routing handle of libsluice (sluice_map.h): the map, read
 * from etcd or from a node and read again when over a second old or when
 * a node answers SLUICE_EMOVED, and one struct sluice_client per cluster,
 * opened with the members the map names. The routed calls are in
 * router_ops.c.
 *
 * Why a second: a node learns a change of the map within its poll
 * (server/failover/mapwatch.h), and refuses what its cluster no longer
 * owns; the handle need not be quicker than that, since a request it
 * sends by an old map is refused, not misplaced, and sent again.
 *
 * The other way round, a node can be behind the handle: right after a
 * change (a move's first step gives the tube to its target), a handle
 * that read the map from etcd sends to the new owner before that owner's
 * poll has seen the change, and is refused. When the map read again
 * after a refusal is the one the request was sent by, the node is the
 * one behind: the request goes again after a backoff (BEHIND_MS, doubled
 * up to BEHIND_MAX_MS), not at once to be refused again, and again until
 * the node has caught up or the call's timeout (the handle's) has
 * passed: a node's poll is late on a loaded machine or with a slow etcd,
 * and the map is right meanwhile. A map read newer than the request's
 * routes it again at once; the same deadline bounds that too, so that
 * two nodes that disagree for good end the call with SLUICE_EMOVED. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client.h"
#include "client/map_int.h"
#include "etcd/cmap_etcd.h"
#include "util/clock.h"

enum {
	REFRESH_MS = 1000,
	ETCD_CALL_MS = 2000,
	BEHIND_MS = 50,      /* the first wait for a node behind the map */
	BEHIND_MAX_MS = 400, /* the longest: about two of its polls */
};

void
router_errmsg(struct sluice_router *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
}

void
router_err(
    struct sluice_router *r, const char *cluster, const struct sluice_client *c)
{
	router_errmsg(r, "cluster %s: %s", cluster, sluice_errmsg(c));
}

/* "etcd://H:P,H:P" (or each with etcd://) as etcd.c's endpoints,
 * "http://H:P,...". NULL when out of memory. */
static char *
etcd_endpoints(const char *where)
{
	size_t cap = strlen(where) * 2 + 16;
	char *out = malloc(cap), *list = strdup(where), *save = NULL;

	if (out == NULL || list == NULL) {
		free(out);
		free(list);
		return NULL;
	}
	out[0] = '\0';
	for (char *s = strtok_r(list, ",", &save); s != NULL;
	     s = strtok_r(NULL, ",", &save)) {
		if (strncmp(s, "etcd://", 7) == 0)
			s += 7;
		if (out[0] != '\0')
			strcat(out, ",");
		strcat(out, "http://");
		strcat(out, s);
	}
	free(list);
	return out;
}

int
sluice_open_map(const char *where, struct sluice_router **out)
{
	struct sluice_router *r;
	char err[256];
	int rc;

	if (where == NULL || out == NULL || where[0] == '\0')
		return SLUICE_EINVAL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return SLUICE_ENOMEM;
	cmap_init(&r->map);
	r->timeout_ms = SLUICE_TIMEOUT_DEFAULT;
	r->refresh_ms = REFRESH_MS;
	if ((r->where = strdup(where)) == NULL)
		goto nomem;
	if (strncmp(where, "etcd://", 7) == 0) {
		char *eps = etcd_endpoints(where);

		if (eps == NULL)
			goto nomem;
		r->etcd = etcd_new(eps, ETCD_CALL_MS, err, sizeof(err));
		free(eps);
		if (r->etcd == NULL) {
			sluice_router_close(r);
			return SLUICE_EINVAL;
		}
	} else if ((rc = sluice_open(where, &r->seed)) != 0) {
		sluice_router_close(r);
		return rc;
	}
	*out = r;
	return 0;
nomem:
	sluice_router_close(r);
	return SLUICE_ENOMEM;
}

void
sluice_router_close(struct sluice_router *r)
{
	if (r == NULL)
		return;
	router_wait_close(r);
	for (size_t i = 0; i < r->nconns; i++) {
		sluice_close(r->conns[i].c);
		free(r->conns[i].name);
		free(r->conns[i].urls);
	}
	free(r->conns);
	sluice_close(r->seed);
	etcd_delete(r->etcd);
	cmap_free(&r->map);
	free(r->token);
	free(r->where);
	free(r);
}

void
sluice_router_set_timeout(struct sluice_router *r, int ms)
{
	if (r == NULL)
		return;
	r->timeout_ms = ms;
	sluice_set_timeout(r->seed, ms);
	for (size_t i = 0; i < r->nconns; i++)
		sluice_set_timeout(r->conns[i].c, ms);
	for (size_t i = 0; i < r->nwaiters; i++)
		sluice_set_timeout(r->waiters[i].c, ms);
}

void
sluice_router_set_refresh(struct sluice_router *r, int ms)
{
	if (r != NULL)
		r->refresh_ms = ms < 0 ? 0 : ms;
}

int
sluice_router_set_token(struct sluice_router *r, const char *token)
{
	char *copy = NULL;
	int rc;

	if (r == NULL || (token != NULL && strlen(token) > MSG_TOKEN_MAX))
		return SLUICE_EINVAL;
	if (token != NULL && token[0] != '\0' && (copy = strdup(token)) == NULL)
		return SLUICE_ENOMEM;
	free(r->token);
	r->token = copy;
	if (r->seed != NULL && (rc = sluice_set_token(r->seed, token)) != 0)
		return rc;
	for (size_t i = 0; i < r->nconns; i++)
		if ((rc = sluice_set_token(r->conns[i].c, token)) != 0)
			return rc;
	for (size_t i = 0; i < r->nwaiters; i++)
		if ((rc = sluice_set_token(r->waiters[i].c, token)) != 0)
			return rc;
	return 0;
}

const char *
sluice_router_errmsg(const struct sluice_router *r)
{
	return r != NULL ? r->errmsg : "";
}

/* The map from etcd: the revision first, the whole map (and the
 * members) when it moved. */
static int
read_etcd(struct sluice_router *r, bool force)
{
	struct cmap next;
	int64_t rev;
	int rc;

	if (!force && r->have) {
		if ((rc = cmap_etcd_revision(r->etcd, &rev)) != 0)
			goto fail;
		if ((uint64_t)rev <= r->map.revision)
			return 0;
	}
	if ((rc = cmap_etcd_read(r->etcd, &next, NULL, NULL, 0)) != 0)
		goto fail;
	if ((rc = cmap_etcd_members(r->etcd, &next)) != 0) {
		cmap_free(&next);
		goto fail;
	}
	cmap_free(&r->map);
	r->map = next;
	return 0;
fail:
	router_errmsg(r, "%s", etcd_errmsg(r->etcd));
	return rc == ETCD_ETIMEDOUT ? SLUICE_ETIMEDOUT
	    : rc == ETCD_ENOMEM     ? SLUICE_ENOMEM
	                            : SLUICE_ECONN;
}

static int
read_node(struct sluice_router *r)
{
	struct cmap next;
	int rc;

	rc = map_fetch(r->seed, &next, r->self, sizeof(r->self));
	if (rc != 0) {
		router_errmsg(r, "map from %s: %s", sluice_url(r->seed),
		    sluice_errmsg(r->seed));
		return rc;
	}
	cmap_free(&r->map);
	r->map = next;
	return 0;
}

int
router_refresh(struct sluice_router *r, bool force)
{
	int64_t now = clock_mono_ms();
	int rc;

	if (!force && r->have &&
	    (r->refresh_ms == 0 || now - r->checked_ms < r->refresh_ms))
		return 0;
	rc = r->etcd != NULL ? read_etcd(r, force) : read_node(r);
	if (rc != 0)
		return r->have ? 0 : rc; /* an old map serves meanwhile */
	r->have = true;
	r->checked_ms = now;
	return 0;
}

int
router_owner(
    struct sluice_router *r, const char *tube, bool put, const char **name)
{
	const struct cmap_entry *e;
	int rc;

	(void)put; /* a draining cluster serves takes: the owner too */
	if (tube == NULL)
		tube = SLUICE_DEFAULT_TUBE;
	if ((rc = router_refresh(r, false)) != 0)
		return rc;
	e = cmap_lookup(&r->map, tube, strlen(tube));
	if (e != NULL) {
		*name = e->cluster;
		return 0;
	}
	if (r->seed != NULL) {
		*name = r->self;
		return 0;
	}
	router_errmsg(r,
	    "tube '%s' is in no cluster: no entry of the map (revision %llu) "
	    "matches it, and there is no default",
	    tube, (unsigned long long)r->map.revision);
	return SLUICE_EMOVED;
}

int
router_conn(struct sluice_router *r, const char *name,
    struct sluice_client **out, const char **stable)
{
	const struct cmap_cluster *cl;
	struct router_conn *grown, *rc_;
	int rc;

	for (size_t i = 0; i < r->nconns; i++)
		if (strcmp(r->conns[i].name, name) == 0) {
			*out = r->conns[i].c;
			if (stable != NULL)
				*stable = r->conns[i].name;
			return 0;
		}
	if (r->seed != NULL && strcmp(name, r->self) == 0 &&
	    cmap_cluster(&r->map, name) == NULL) {
		*out = r->seed; /* unmapped tubes: the given node's cluster */
		if (stable != NULL)
			*stable = r->self;
		return 0;
	}
	cl = cmap_cluster(&r->map, name);
	if (cl == NULL && r->etcd != NULL &&
	    msg_cluster_name_valid(msg_cstr(name)) &&
	    cmap_etcd_cluster(r->etcd, &r->map, name) == 0)
		cl = cmap_cluster(&r->map, name); /* a cluster no entry names
		                                     yet: a move's target */
	if (cl == NULL || cl->urls[0] == '\0') {
		router_errmsg(r,
		    "cluster %s: no member known (none in etcd under "
		    "/sluice/%s/members/)",
		    name, name);
		return SLUICE_ECONN;
	}
	grown = realloc(r->conns, (r->nconns + 1) * sizeof(*r->conns));
	if (grown == NULL)
		return SLUICE_ENOMEM;
	r->conns = grown;
	rc_ = &r->conns[r->nconns];
	memset(rc_, 0, sizeof(*rc_));
	if ((rc_->name = strdup(name)) == NULL ||
	    (rc_->urls = strdup(cl->urls)) == NULL) {
		free(rc_->name);
		return SLUICE_ENOMEM;
	}
	if ((rc = sluice_open(cl->urls, &rc_->c)) != 0) {
		free(rc_->name);
		free(rc_->urls);
		router_errmsg(r, "cluster %s: bad URLs '%s'", name, cl->urls);
		return rc;
	}
	sluice_set_timeout(rc_->c, r->timeout_ms);
	if (r->token != NULL)
		sluice_set_token(rc_->c, r->token);
	r->nconns++;
	*out = rc_->c;
	if (stable != NULL)
		*stable = rc_->name;
	return 0;
}

const char *
router_urls(const struct sluice_router *r, const char *name)
{
	for (size_t i = 0; i < r->nconns; i++)
		if (strcmp(r->conns[i].name, name) == 0)
			return r->conns[i].urls;
	if (r->seed != NULL && strcmp(name, r->self) == 0)
		return r->where;
	return NULL;
}

void
router_retry_init(const struct sluice_router *r, struct router_retry *t)
{
	int ms = r->timeout_ms < 0 ? SLUICE_TIMEOUT_DEFAULT : r->timeout_ms;

	t->deadline = clock_mono_ms() + ms;
	t->backoff_ms = BEHIND_MS;
	t->refused = false;
}

bool
router_moved(struct sluice_router *r, struct router_retry *t)
{
	uint64_t sent_by = r->map.revision;
	bool first = !t->refused;
	int64_t left;

	t->refused = true;
	if (!first && clock_mono_ms() >= t->deadline)
		return false;
	if (router_refresh(r, true) != 0)
		return false;
	if (r->map.revision != sent_by)
		return true; /* a newer map: routed again at once */
	/* the node is behind the map: it is sent again after a while */
	left = t->deadline - clock_mono_ms();
	if (left > t->backoff_ms)
		left = t->backoff_ms;
	if (left > 0) {
		struct timespec ts = { (time_t)(left / 1000),
			(long)(left % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
			/* the rest of the wait */
		}
	}
	t->backoff_ms = t->backoff_ms * 2 > BEHIND_MAX_MS ? BEHIND_MAX_MS
	                                                  : t->backoff_ms * 2;
	return true;
}

int
sluice_router_map(struct sluice_router *r, struct sluice_cluster_map **out)
{
	int rc;

	if (r == NULL)
		return SLUICE_EINVAL;
	if ((rc = router_refresh(r, true)) != 0)
		return rc;
	return out != NULL ? map_public(&r->map, r->self, out) : 0;
}

int
sluice_router_client(struct sluice_router *r, const char *tube,
    struct sluice_client **c, const char **cluster)
{
	const char *name;
	int rc;

	if (r == NULL || c == NULL)
		return SLUICE_EINVAL;
	if ((rc = router_owner(r, tube, true, &name)) != 0 ||
	    (rc = router_conn(r, name, c, cluster)) != 0)
		return rc;
	return 0;
}

int
sluice_router_cluster(
    struct sluice_router *r, const char *name, struct sluice_client **c)
{
	int rc;

	if (r == NULL || name == NULL || c == NULL)
		return SLUICE_EINVAL;
	if ((rc = router_refresh(r, false)) != 0)
		return rc;
	return router_conn(r, name, c, NULL);
}

/* An etcd failure as the handle's error. */
static int
etcd_failed(struct sluice_router *r, int rc, const char *what)
{
	router_errmsg(r, "map %s: %s", what, etcd_errmsg(r->etcd));
	return rc == ETCD_ETIMEDOUT || rc == ETCD_EIO ? SLUICE_ETIMEDOUT
	    : rc == ETCD_ENOMEM                       ? SLUICE_ENOMEM
	                                              : SLUICE_ECONN;
}

int
sluice_router_map_set(struct sluice_router *r, const char *prefix,
    const char *cluster, const char *const *draining, size_t ndraining,
    uint64_t *revision)
{
	struct cmap_entry e;
	struct cmap check;
	int64_t rev;
	int rc;

	if (r == NULL)
		return SLUICE_EINVAL;
	if (r->seed != NULL) {
		rc = sluice_map_set(
		    r->seed, prefix, cluster, draining, ndraining, revision);
		if (rc != 0)
			router_errmsg(r, "%s", sluice_errmsg(r->seed));
		return rc;
	}
	if (cluster == NULL || ndraining > MSG_MAP_DRAINING_MAX)
		return SLUICE_EINVAL;
	memset(&e, 0, sizeof(e));
	snprintf(e.prefix, sizeof(e.prefix), "%s", prefix ? prefix : "");
	snprintf(e.cluster, sizeof(e.cluster), "%s", cluster);
	e.ndraining = (uint8_t)ndraining;
	for (size_t i = 0; i < ndraining; i++)
		snprintf(e.draining[i], sizeof(e.draining[i]), "%s",
		    draining[i] ? draining[i] : "");
	cmap_init(&check);
	rc = prefix != NULL && strlen(prefix) > MSG_TUBE_MAX ? SLUICE_ETUBE
	    : strlen(cluster) > MSG_NODE_MAX                 ? SLUICE_EINVAL
	                                     : cmap_put(&check, &e);
	cmap_free(&check);
	if (rc != 0) {
		router_errmsg(r, "map set: %s", sluice_strerror(rc));
		return rc < 0 ? SLUICE_ENOMEM : rc;
	}
	if ((rc = cmap_etcd_set(r->etcd, &e, &rev)) != 0)
		return etcd_failed(r, rc, "set");
	if (revision != NULL)
		*revision = (uint64_t)rev;
	router_refresh(r, true);
	return 0;
}

int
sluice_router_map_delete(
    struct sluice_router *r, const char *prefix, uint64_t *revision)
{
	bool found;
	int64_t rev;
	int rc;

	if (r == NULL)
		return SLUICE_EINVAL;
	if (r->seed != NULL) {
		rc = sluice_map_delete(r->seed, prefix, revision);
		if (rc != 0)
			router_errmsg(r, "%s", sluice_errmsg(r->seed));
		return rc;
	}
	if (prefix == NULL)
		prefix = "";
	if (strlen(prefix) > MSG_TUBE_MAX ||
	    (prefix[0] != '\0' && !msg_tube_valid(prefix, strlen(prefix)))) {
		router_errmsg(r, "map delete: bad prefix '%s'", prefix);
		return SLUICE_ETUBE;
	}
	if ((rc = cmap_etcd_delete(r->etcd, prefix, &found, &rev)) != 0)
		return etcd_failed(r, rc, "delete");
	if (!found) {
		router_errmsg(
		    r, "map delete: no entry for prefix '%s'", prefix);
		return SLUICE_ENOTFOUND;
	}
	if (revision != NULL)
		*revision = (uint64_t)rev;
	router_refresh(r, true);
	return 0;
}
