/* move - sluice_router_move (sluice_move.h): a tube's tasks copied from
 * the clusters that hold them to the one the map gives it.
 *
 * The move's state lives where it cannot be lost: the map entry's
 * draining mark (in etcd) says a move is under way and from where; the
 * source's log holds the batch held for the mover (MOVE_HOLD: taken under
 * a lease that never expires) until its drop; the target's log holds the
 * source ids it copied (MOVE_IN) until move_end. So the mover keeps
 * nothing of its own: started again after a kill -9, it reads the map,
 * asks the source for a batch (the one held before, if it was not
 * dropped), copies it (the target answers the copies it made before and
 * makes the others) and drops it. A node killed in the middle is another
 * of its cluster's members a moment later; each call is tried again
 * until timeout_ms.
 *
 * Rounds: hold up to `batch` tasks at the source (one commit) -> copy
 * them to the target (one commit) -> drop them at the source (one
 * commit). A round that holds nothing while the source still has taken
 * tasks of the tube waits for them (50 ms, again): an ack is honoured at
 * the source, an expired lease makes its task ready there, and the next
 * round copies it. A source with a workflow of the tube under way holds
 * nothing (queue/move_wait.c): the rounds wait the same way, while the
 * source hands the tube out, until it has run there.
 *
 * Around the rounds: the tube's settings and its groups' (every group's,
 * and each group's own, found by op group's verb next) are copied first;
 * the reservations of its keys at the source (keys of tasks completed
 * there, in their dedup window: move_out's keys, then move_in of each as
 * a task in state done) before the rounds and again after them, when the
 * source holds no task of the tube and no ack can make another.
 *
 * The key window (queue/move_place.c, docs/scaling.md "Keys"): before the
 * map change the source is marked keep (its drain ends only by the
 * mover's move_end) and the target pend (a keyed put of the tube is
 * refused SLUICE_EMOVING, which clients try again); once the source knows
 * the map, the keys of its live tasks of the tube go to the target as
 * placeholders (the id each copy will get), then the target takes keyed
 * puts (ready). A resumed move marks both again (nothing changes if they
 * are) and copies the keys again (those held answer their ids). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client.h"
#include "client/map_int.h"
#include "util/clock.h"

enum { MOVE_BATCH_DEFAULT = 500, MOVE_TIMEOUT_DEFAULT_MS = 60000 };

struct mover {
	struct sluice_router *r;
	const struct sluice_move_opts *o;
	struct sluice_move_progress *p;
	int64_t timeout_ms;
	uint32_t batch;
};

static void
nap(int ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* A failure that a moment may cure: a node gone, a failover. */
static bool
transient(int rc)
{
	return rc == SLUICE_ECONN || rc == SLUICE_ETIMEDOUT ||
	    rc == SLUICE_ENOTLEADER || rc == SLUICE_ESHUTDOWN ||
	    rc == SLUICE_EREPLICA || rc == SLUICE_EEPOCH || rc == SLUICE_ELOG;
}

/* client_call on cluster `name`, tried again while the failure is
 * transient, until the mover's timeout. */
static int
call(struct mover *m, const char *name, const struct msg_req *q,
    struct msg_rep *rep, struct sluice_client **used)
{
	int64_t until = clock_mono_ms() + m->timeout_ms;
	struct sluice_client *c = NULL;
	int rc;

	for (;;) {
		rc = router_conn(m->r, name, &c, NULL);
		if (rc == 0)
			rc = client_call(c, q, 0, rep);
		if (rc == 0 || !transient(rc) || clock_mono_ms() >= until)
			break;
		nap(100);
		router_refresh(m->r, true); /* members may have changed */
	}
	if (rc != 0) {
		if (c != NULL)
			router_err(m->r, name, c);
		else
			router_errmsg(
			    m->r, "cluster %s: %s", name, sluice_strerror(rc));
	}
	if (used != NULL)
		*used = c;
	return rc;
}

/* Writes the entry of `prefix`; tried again as call() is. */
static int
map_set(struct mover *m, const char *prefix, const char *cluster,
    const char *const *draining, size_t n)
{
	int64_t until = clock_mono_ms() + m->timeout_ms;
	uint64_t rev = 0;
	int rc;

	while ((rc = sluice_router_map_set(
	            m->r, prefix, cluster, draining, n, &rev)) != 0 &&
	    transient(rc) && clock_mono_ms() < until)
		nap(100);
	if (rc == 0) {
		m->p->revision = rev;
		rc = router_refresh(m->r, true);
	}
	return rc;
}

/* Waits until the leader of cluster `name` knows the map at `rev` or
 * later: from then on it refuses the tube's puts. */
static int
known(struct mover *m, const char *name, uint64_t rev)
{
	int64_t until = clock_mono_ms() + m->timeout_ms;

	for (;;) {
		struct sluice_cluster_map *cm = NULL;
		struct sluice_client *c = NULL;
		int rc = router_conn(m->r, name, &c, NULL);

		if (rc == 0)
			rc = sluice_map_read(c, &cm);
		if (rc == 0 && cm->revision >= rev) {
			sluice_cluster_map_free(cm);
			return 0;
		}
		sluice_cluster_map_free(cm);
		if (clock_mono_ms() >= until) {
			router_errmsg(m->r,
			    "cluster %s did not learn the map's revision "
			    "%" PRIu64 " within %" PRId64 " ms",
			    name, rev, m->timeout_ms);
			return SLUICE_ETIMEDOUT;
		}
		nap(50);
		if (rc != 0)
			router_refresh(m->r, true);
	}
}

/* The target has a leader the map knows of, and it answers: else the
 * move goes no further (a cluster name mistyped would send the tube's
 * puts nowhere). */
static int
target_ok(struct mover *m, const char *target)
{
	struct sluice_cluster_map *cm = NULL;
	const struct cmap_cluster *cl;
	struct sluice_client *c = NULL;
	int rc = router_conn(m->r, target, &c, NULL);

	cl = cmap_cluster(&m->r->map, target);
	if (cl == NULL || cl->leader[0] == '\0') {
		router_errmsg(m->r,
		    "cluster %s has no leader in etcd (/sluice/%s/leader): "
		    "start its nodes first; the map is left as it was",
		    target, target);
		return SLUICE_ECONN;
	}
	if (rc == 0 && (rc = sluice_map_read(c, &cm)) == 0)
		sluice_cluster_map_free(cm);
	else
		router_errmsg(m->r,
		    "cluster %s does not answer: %s; the map is left as it "
		    "was",
		    target, sluice_strerror(rc));
	return rc;
}

static void
limits_of(const struct msg_flow *f, struct sluice_limits *o)
{
	memset(o, 0, sizeof(*o));
	o->set = f->set;
	o->rate = f->rate;
	o->per_ms = f->per_ms;
	o->burst = f->burst;
	o->concurrency = f->concurrency;
}

/* Makes `tube` at `d` with the server's default settings: a setting
 * made and lifted (a change that sets nothing makes no tube). */
static int
make_tube(struct sluice_client *d, const char *tube)
{
	struct sluice_tube_conf c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.set = SLUICE_TS_TTR;
	c.ttr_ms = 1000;
	if ((rc = sluice_tube_set(d, tube, &c, 0, NULL)) != 0)
		return rc;
	return sluice_tube_set(d, tube, NULL, SLUICE_TS_TTR, NULL);
}

/* sluice_group_set on the target, the tube made first when it has none
 * there (its settings were all defaults: nothing made it before). */
static int
group_set(struct sluice_client *d, const char *tube, const char *group,
    const struct sluice_limits *lim)
{
	int rc = sluice_group_set(d, tube, group, lim, 0, NULL);

	if (rc == SLUICE_ENOTFOUND && (rc = make_tube(d, tube)) == 0)
		rc = sluice_group_set(d, tube, group, lim, 0, NULL);
	return rc;
}

/* The group settings of `tube` at the source made the target's: every
 * named group's limits, then each group's own limits and pause, found one
 * at a time in the order of their names (op group's verb next). A group
 * the target has settings for and the source not keeps them. */
static int
copy_groups(struct mover *m, const char *src, const char *dst, const char *tube)
{
	char after[SLUICE_TUBE_MAX + 1] = "";
	struct sluice_client *s, *d;
	bool first = true;
	int rc;

	if ((rc = router_conn(m->r, src, &s, NULL)) != 0 ||
	    (rc = router_conn(m->r, dst, &d, NULL)) != 0)
		return rc;
	for (;;) {
		struct msg_req q = { .op = MSG_OP_GROUP };
		const struct msg_group_rep *g;
		struct sluice_limits lim;
		char name[SLUICE_TUBE_MAX + 1];
		struct msg_rep rep;
		bool paused;

		q.group.tube = msg_cstr(tube);
		q.group.group = msg_cstr(after);
		q.group.verb = MSG_GROUP_NEXT;
		if ((rc = client_call(s, &q, 0, &rep)) != 0) {
			if (rc == SLUICE_ENOTFOUND)
				return 0; /* no such tube there: none */
			router_err(m->r, src, s);
			return rc;
		}
		g = &rep.group;
		if (first && g->every.set != 0) {
			limits_of(&g->every, &lim);
			if ((rc = group_set(d, tube, NULL, &lim)) != 0) {
				router_err(m->r, dst, d);
				return rc;
			}
		}
		first = false;
		if (g->group.len == 0 || g->group.len > SLUICE_TUBE_MAX)
			return 0;
		memcpy(name, g->group.p, g->group.len);
		name[g->group.len] = '\0';
		limits_of(&g->own, &lim);
		paused = (g->gflags & MSG_GROUP_PAUSED) != 0;
		if (lim.set != 0 &&
		    (rc = group_set(d, tube, name, &lim)) != 0) {
			router_err(m->r, dst, d);
			return rc;
		}
		if (paused &&
		    (rc = sluice_group_pause(d, tube, name, NULL)) ==
		        SLUICE_ENOTFOUND &&
		    (rc = make_tube(d, tube)) == 0)
			rc = sluice_group_pause(d, tube, name, NULL);
		if (rc != 0) {
			router_err(m->r, dst, d);
			return rc;
		}
		m->p->groups++;
		memcpy(after, name, g->group.len + 1);
	}
}

/* The settings of `tube` at the source, made the target's. */
static int
copy_settings(
    struct mover *m, const char *src, const char *dst, const char *tube)
{
	struct sluice_client *s, *d;
	struct sluice_tube_conf conf;
	struct sluice_limits lim;
	int rc;

	if ((rc = router_conn(m->r, src, &s, NULL)) != 0 ||
	    (rc = router_conn(m->r, dst, &d, NULL)) != 0)
		return rc;
	if ((rc = sluice_tube_show(s, tube, &conf)) != 0) {
		router_err(m->r, src, s);
		return rc;
	}
	if (conf.set != 0 &&
	    (rc = sluice_tube_set(d, tube, &conf, 0, NULL)) != 0) {
		router_err(m->r, dst, d);
		return rc;
	}
	rc = sluice_tube_limits(s, tube, &lim);
	if (rc == 0 && lim.set != 0 && conf.set == 0 &&
	    (rc = sluice_tube_set(d, tube, NULL, SLUICE_TS_TTR, NULL)) != 0) {
		router_err(m->r, dst, d); /* makes the tube, for its limits */
		return rc;
	}
	if (rc == 0 && lim.set != 0 &&
	    (rc = sluice_tube_limit(d, tube, &lim, 0, NULL)) != 0) {
		router_err(m->r, dst, d);
		return rc;
	}
	return copy_groups(m, src, dst, tube);
}

/* A task as the target copies it: the parts a copy carries, none that
 * would describe the source's lease, pending content or graph. */
static void
plain(struct msg_task *t)
{
	t->lease = 0;
	t->detached = false;
	t->taken_at = 0;
	t->deadline = 0;
	t->replace_pending = false;
	t->holder.session = 0;
	t->has_deps = false;
	t->cancelled = false;
	t->version = 0;
	memset(&t->pending, 0, sizeof(t->pending));
}

static bool
waiting(const struct sluice_tube_stats *t)
{
	uint64_t v = 0;

	return sluice_kv_get(t->kv, t->nkv, "waiting", &v) == 0 && v > 0;
}

/* One round for `tube` from `src`: 1 when tasks were copied, 0 when the
 * source holds none of the tube (taken ones too), 2 when it has only
 * taken ones; or -error. */
static int
round_once(struct mover *m, const char *src, const char *dst, const char *tube)
{
	struct msg_req q = { .op = MSG_OP_MOVE_OUT };
	struct msg_task *tasks = NULL;
	uint64_t *ids = NULL, *leases = NULL;
	struct msg_rep rep, rep2;
	struct sluice_stats *st = NULL;
	struct sluice_client *c;
	uint32_t n = 0;
	int rc;

	q.move.kind = MSG_MOVE_HOLD;
	q.move.tube = msg_cstr(tube);
	q.move.max = m->batch;
	if ((rc = call(m, src, &q, &rep, &c)) != 0)
		return -rc;
	if (rep.move.ntasks == 0) {
		/* nothing to hold: done, unless tasks are taken there */
		if ((rc = sluice_stats(c, tube, &st)) == SLUICE_ENOTFOUND)
			return 0; /* the source never had the tube */
		if (rc != 0) {
			router_err(m->r, src, c);
			return transient(rc) ? 2 : -rc;
		}
		/* ready ones too: a workflow under way there holds the
		 * move back (move_wait.c), and the tube's tasks are handed
		 * out there meanwhile */
		rc = st->ntubes > 0 &&
		        (st->tubes[0].taken > 0 || st->tubes[0].ready > 0 ||
		            st->tubes[0].delayed > 0 ||
		            st->tubes[0].buried > 0 || waiting(&st->tubes[0]))
		    ? 2
		    : 0;
		sluice_stats_free(st);
		return rc;
	}
	n = rep.move.ntasks;
	tasks = calloc(n, sizeof(*tasks));
	ids = calloc(n, sizeof(*ids));
	leases = calloc(n, sizeof(*leases));
	if (tasks == NULL || ids == NULL || leases == NULL) {
		rc = -SLUICE_ENOMEM;
		goto out;
	}
	/* the tasks borrow the source connection's reply: the copy goes
	 * out on the target's before that connection is used again */
	for (uint32_t i = 0; i < n; i++) {
		if (!msg_next_task(&rep.move.tasks_it, &tasks[i])) {
			rc = -SLUICE_EPROTO;
			goto out;
		}
		ids[i] = tasks[i].id;
		leases[i] = tasks[i].lease;
		plain(&tasks[i]);
	}
	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_MOVE_IN;
	q.move.tube = msg_cstr(tube);
	q.move.source = msg_cstr(src);
	q.move.n = n;
	q.move.tasks = tasks;
	if ((rc = call(m, dst, &q, &rep2, NULL)) != 0) {
		rc = -rc;
		goto out;
	}
	for (uint32_t i = 0; i < rep2.move.n; i++) {
		struct msg_move_res res;

		if (!msg_next_move_res(&rep2.move.it, &res)) {
			rc = -SLUICE_EPROTO;
			goto out;
		}
		if (res.status != 0) {
			router_errmsg(m->r,
			    "cluster %s refused the copy of task %" PRIu64
			    " of tube '%s' from %s: %s (nothing is lost: it "
			    "stays held at %s; fix the cause and run the move "
			    "again)",
			    dst, ids[i], tube, src, sluice_strerror(res.status),
			    src);
			rc = -(int)res.status;
			goto out;
		}
	}
	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_MOVE_OUT;
	q.move.kind = MSG_MOVE_DROP;
	q.move.tube = msg_cstr(tube);
	q.move.n = n;
	q.move.ids = ids;
	q.move.leases = leases;
	if ((rc = call(m, src, &q, &rep, NULL)) != 0) {
		rc = -rc;
		goto out;
	}
	m->p->copied += n;
	m->p->dropped += rep.move.n;
	m->p->batches++;
	rc = 1;
out:
	free(tasks);
	free(ids);
	free(leases);
	return rc;
}

static void
report(struct mover *m)
{
	if (m->o != NULL && m->o->report != NULL)
		m->o->report(m->o->report_arg, m->p);
}

/* The key window at the target: MSG_MOVE_IN_PEND, it refuses keyed puts
 * of `tube` from `src`; MSG_MOVE_IN_READY, it takes them again. */
static int
window_mark(struct mover *m, const char *src, const char *dst, const char *tube,
    uint8_t kind)
{
	struct msg_req q = { .op = MSG_OP_MOVE_IN };
	struct msg_rep rep;

	q.move.kind = kind;
	q.move.tube = msg_cstr(tube);
	q.move.source = msg_cstr(src);
	return call(m, dst, &q, &rep, NULL);
}

/* The key window opens for `tube` from `src`: the source keeps its drain
 * for the mover (`keep`), the target refuses keyed puts (`pend`); both
 * idempotent. */
static int
window_open(struct mover *m, const char *src, const char *dst, const char *tube,
    bool keep, bool pend)
{
	struct msg_req q = { .op = MSG_OP_MOVE_OUT };
	struct msg_rep rep;
	int rc;

	q.move.kind = MSG_MOVE_KEEP;
	q.move.tube = msg_cstr(tube);
	if (keep && (rc = call(m, src, &q, &rep, NULL)) != 0)
		return rc;
	return pend ? window_mark(m, src, dst, tube, MSG_MOVE_IN_PEND) : 0;
}

/* A list of `tube` at `src`, a page at a time by id, made at `dst`: the
 * keys of its live tasks (any state but done) held as placeholders
 * (MOVE_LIVE; sent again, a page answers the ids given before), or the
 * reservations of its keys (MOVE_KEYS: keys of tasks completed there,
 * within their dedup window) made until the same time (sent again, a
 * page makes nothing twice: the target's table of source ids). `count`:
 * the pass whose reservations the progress counts (the last). */
static int
copy_pages(struct mover *m, const char *src, const char *dst, const char *tube,
    uint8_t kind, bool count)
{
	bool keys = kind == MSG_MOVE_KEYS;
	uint64_t after = 0;

	for (;;) {
		struct msg_req q = { .op = MSG_OP_MOVE_OUT };
		struct msg_task *tasks;
		struct msg_rep rep, rep2;
		uint32_t n;
		int rc;

		q.move.kind = kind;
		q.move.tube = msg_cstr(tube);
		q.move.max = m->batch;
		q.move.after = after;
		if ((rc = call(m, src, &q, &rep, NULL)) != 0)
			return keys && rc == SLUICE_ENOTFOUND ? 0 : rc;
		if ((n = rep.move.ntasks) == 0)
			return 0;
		if ((tasks = calloc(n, sizeof(*tasks))) == NULL)
			return SLUICE_ENOMEM;
		for (uint32_t i = 0; i < n; i++) {
			if (!msg_next_task(&rep.move.tasks_it, &tasks[i])) {
				free(tasks);
				return SLUICE_EPROTO;
			}
			if (tasks[i].id > after)
				after = tasks[i].id;
		}
		memset(&q, 0, sizeof(q));
		q.op = MSG_OP_MOVE_IN;
		q.move.kind = keys ? 0 : MSG_MOVE_IN_PLACE;
		q.move.tube = msg_cstr(tube);
		q.move.source = msg_cstr(src);
		q.move.n = n;
		q.move.tasks = tasks;
		rc = call(m, dst, &q, &rep2, NULL);
		for (uint32_t i = 0; rc == 0 && i < rep2.move.n; i++) {
			struct msg_move_res res;

			if (!msg_next_move_res(&rep2.move.it, &res)) {
				rc = SLUICE_EPROTO;
			} else if (res.status != 0 && keys) {
				router_errmsg(m->r,
				    "cluster %s refused the reservation of a "
				    "key of tube '%s' from %s: %s (run the "
				    "move again once the cause is fixed)",
				    dst, tube, src,
				    sluice_strerror(res.status));
				rc = (int)res.status;
			} else if (res.status != 0) {
				router_errmsg(m->r,
				    "cluster %s refused to hold the key of "
				    "task %" PRIu64
				    " of tube '%s' from %s: %s (keyed "
				    "puts there wait; run the move again once "
				    "the cause is fixed)",
				    dst, tasks[i].id, tube, src,
				    sluice_strerror(res.status));
				rc = (int)res.status;
			} else if (res.id != 0 && count) {
				m->p->keys++;
			}
		}
		free(tasks);
		if (rc != 0)
			return rc;
	}
}

/* Every round of `tube` from `src`, to the end. */
static int
drain(struct mover *m, const char *src, const char *dst, const char *tube)
{
	int64_t wait_until = 0;

	snprintf(m->p->tube, sizeof(m->p->tube), "%s", tube);
	snprintf(m->p->source, sizeof(m->p->source), "%s", src);
	for (;;) {
		int rc = round_once(m, src, dst, tube);

		if (rc < 0)
			return -rc;
		if (rc == 0)
			return 0;
		if (rc == 1) {
			wait_until = 0;
			report(m);
			continue;
		}
		/* only taken tasks left: they end at the source */
		m->p->waits++;
		if (wait_until == 0 && m->o != NULL && m->o->wait_ms > 0)
			wait_until = clock_mono_ms() + m->o->wait_ms;
		if (wait_until != 0 && clock_mono_ms() >= wait_until) {
			router_errmsg(m->r,
			    "tube '%s' still has taken tasks, or a "
			    "workflow under way, at %s after %" PRId64
			    " ms; run the move again to go on",
			    tube, src, m->o->wait_ms);
			return SLUICE_ETIMEDOUT;
		}
		if (m->p->waits % 20 == 1)
			report(m);
		nap(50);
	}
}

/* The tubes of cluster `src` the entry of `prefix` governs, into a list
 * of names (free each and the list). */
static int
tubes_of(struct mover *m, const char *src, const char *prefix, char ***out,
    size_t *n)
{
	struct sluice_client *c;
	size_t plen = strlen(prefix), cap = 0;
	uint32_t after = 0, next = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = router_conn(m->r, src, &c, NULL)) != 0)
		return rc;
	do {
		struct sluice_stats *st = NULL;

		if ((rc = sluice_stats_page(c, after, 1000, &st, &next)) != 0) {
			router_err(m->r, src, c);
			return rc;
		}
		for (size_t i = 0; i < st->ntubes; i++) {
			const char *name = st->tubes[i].name;
			const struct cmap_entry *e;
			char **grown;

			if (strncmp(name, prefix, plen) != 0 ||
			    strcmp(name, prefix) == 0)
				continue;
			e = cmap_lookup(&m->r->map, name, strlen(name));
			if (e == NULL || strcmp(e->prefix, prefix) != 0)
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 8;
				grown = realloc(*out, cap * sizeof(*grown));
				if (grown == NULL) {
					sluice_stats_free(st);
					return SLUICE_ENOMEM;
				}
				*out = grown;
			}
			if (((*out)[*n] = strdup(name)) == NULL) {
				sluice_stats_free(st);
				return SLUICE_ENOMEM;
			}
			(*n)++;
		}
		sluice_stats_free(st);
		after = next;
	} while (next != 0);
	return 0;
}

/* move_end of `tube` on cluster `name`. */
static int
end_one(struct mover *m, const char *name, const char *tube)
{
	struct msg_req q = { .op = MSG_OP_MOVE_END };
	struct msg_rep rep;

	q.move.tube = msg_cstr(tube);
	return call(m, name, &q, &rep, NULL);
}

/* One tube from `src`: its settings, its keys' reservations (before the
 * tasks, so that a put at the target of a key completed at the source is
 * answered as there, and after, for the keys of the tasks acked there
 * meanwhile), its tasks, then the source's mark goes. */
static int
move_one(struct mover *m, const char *src, const char *dst, const char *tube)
{
	int rc;

	if ((rc = copy_settings(m, src, dst, tube)) == 0 &&
	    (rc = copy_pages(m, src, dst, tube, MSG_MOVE_KEYS, false)) == 0 &&
	    (rc = drain(m, src, dst, tube)) == 0 &&
	    (rc = copy_pages(m, src, dst, tube, MSG_MOVE_KEYS, true)) == 0)
		rc = end_one(m, src, tube); /* the source's mark goes */
	return rc;
}

static int
move_from(struct mover *m, const char *src, const char *dst, const char *tube)
{
	char **more = NULL;
	size_t nmore = 0;
	int rc;

	/* once src takes no more puts of the tube, the keys of its live
	 * tasks are held at dst, and dst takes keyed puts; then the
	 * reservations, so that a key completed at src is answered at dst
	 * as it would have been at src as soon as it can be */
	snprintf(m->p->tube, sizeof(m->p->tube), "%s", tube);
	snprintf(m->p->source, sizeof(m->p->source), "%.64s", src);
	m->p->stage = SLUICE_MOVE_KEYS_PENDING;
	report(m);
	if ((rc = known(m, src, m->p->revision)) != 0 ||
	    (rc = tubes_of(m, src, tube, &more, &nmore)) != 0 ||
	    (rc = copy_pages(m, src, dst, tube, MSG_MOVE_LIVE, false)) != 0)
		goto out;
	for (size_t i = 0; i < nmore && rc == 0; i++)
		rc = copy_pages(m, src, dst, more[i], MSG_MOVE_LIVE, false);
	if (rc != 0)
		goto out;
	m->p->stage = SLUICE_MOVE_KEYS_HELD;
	report(m);
	m->p->stage = 0;
	if ((rc = window_mark(m, src, dst, tube, MSG_MOVE_IN_READY)) != 0 ||
	    (rc = copy_pages(m, src, dst, tube, MSG_MOVE_KEYS, false)) != 0)
		goto out;
	/* the tube itself last: its move_end at src lifts the keep mark */
	for (size_t i = 0; i < nmore && rc == 0; i++)
		rc = move_one(m, src, dst, more[i]);
	if (rc == 0)
		rc = move_one(m, src, dst, tube);
	/* the tables (and placeholders left) of the tubes under it at dst
	 * go now: another source may move them next */
	for (size_t i = 0; i < nmore && rc == 0; i++)
		rc = end_one(m, dst, more[i]);
out:
	for (size_t i = 0; i < nmore; i++)
		free(more[i]);
	free(more);
	return rc;
}

/* The target's tables of source ids for the tube (and the tubes its
 * entry governs there) are no longer needed. */
static int
end_tables(struct mover *m, const char *dst, const char *tube)
{
	struct msg_req q = { .op = MSG_OP_MOVE_END };
	struct msg_rep rep;
	char **more = NULL;
	size_t nmore = 0;
	int rc;

	q.move.tube = msg_cstr(tube);
	if ((rc = call(m, dst, &q, &rep, NULL)) != 0)
		return rc;
	if ((rc = tubes_of(m, dst, tube, &more, &nmore)) != 0)
		return rc;
	for (size_t i = 0; i < nmore && rc == 0; i++) {
		q.move.tube = msg_cstr(more[i]);
		rc = call(m, dst, &q, &rep, NULL);
	}
	for (size_t i = 0; i < nmore; i++)
		free(more[i]);
	free(more);
	return rc;
}

/* A new move: the target must answer before anything changes (a cluster
 * name mistyped would send the tube's puts nowhere); then the key window
 * opens, then the map changes. A handle that reads the map from a node
 * (not etcd) knows only the clusters the map names: the target is
 * reached once the map names it, so the map changes first (and goes back
 * if the target does not answer) and its window opens right after: a
 * keyed put that reaches it in between is not held back. */
static int
open_and_map(struct mover *m, char (*sources)[MSG_NODE_MAX + 1], size_t ns,
    const char *target, const char *tube)
{
	const char *draining[MSG_MAP_DRAINING_MAX];
	const struct cmap_entry *e;
	char before[MSG_NODE_MAX + 1] = "";
	bool late =
	    m->r->etcd == NULL && cmap_cluster(&m->r->map, target) == NULL;
	int rc;

	for (size_t i = 0; i < ns; i++)
		draining[i] = sources[i];
	if (!late && (rc = target_ok(m, target)) != 0)
		return rc;
	for (size_t i = 0; i < ns; i++)
		if ((rc = window_open(
		         m, sources[i], target, tube, true, !late)) != 0)
			return rc;
	e = cmap_lookup(&m->r->map, tube, strlen(tube));
	if (e != NULL && strcmp(e->prefix, tube) == 0)
		snprintf(before, sizeof(before), "%s", e->cluster);
	if ((rc = map_set(m, tube, target, draining, ns)) != 0 || !late)
		return rc;
	/* the node that serves the map names the target once it has read
	 * the change (its next poll) */
	for (int64_t until = clock_mono_ms() + m->timeout_ms;
	     cmap_cluster(&m->r->map, target) == NULL &&
	     clock_mono_ms() < until;) {
		nap(50);
		router_refresh(m->r, true);
	}
	if ((rc = target_ok(m, target)) != 0) {
		/* nothing was copied: the map goes back as it was */
		if (before[0] != '\0')
			map_set(m, tube, before, NULL, 0);
		else
			sluice_router_map_delete(m->r, tube, NULL);
		return rc;
	}
	for (size_t i = 0; i < ns; i++)
		if ((rc = window_open(
		         m, sources[i], target, tube, false, true)) != 0)
			return rc;
	return 0;
}

int
sluice_router_move(struct sluice_router *r, const char *tube,
    const char *target, const struct sluice_move_opts *o,
    struct sluice_move_progress *out)
{
	char sources[MSG_MAP_DRAINING_MAX][MSG_NODE_MAX + 1];
	struct sluice_move_progress local;
	const struct cmap_entry *e;
	struct mover m;
	size_t ns = 0;
	int rc;

	if (r == NULL)
		return SLUICE_EINVAL;
	if (tube == NULL || *tube == '\0' || strlen(tube) > MSG_TUBE_MAX ||
	    !msg_tube_valid(tube, strlen(tube))) {
		router_errmsg(r,
		    "move: a tube name is 1-200 bytes of "
		    "A-Z a-z 0-9 _ . : / -");
		return SLUICE_ETUBE;
	}
	if (target == NULL || !msg_cluster_name_valid(msg_cstr(target))) {
		router_errmsg(r,
		    "move: a cluster name is 1-64 bytes of "
		    "A-Z a-z 0-9 _ . : -");
		return SLUICE_EINVAL;
	}
	memset(&m, 0, sizeof(m));
	m.r = r;
	m.o = o;
	m.p = out != NULL ? out : &local;
	memset(m.p, 0, sizeof(*m.p));
	snprintf(m.p->target, sizeof(m.p->target), "%s", target);
	m.timeout_ms = o != NULL && o->timeout_ms > 0 ? o->timeout_ms
	                                              : MOVE_TIMEOUT_DEFAULT_MS;
	m.batch = o != NULL && o->batch > 0 ? o->batch : MOVE_BATCH_DEFAULT;
	if (m.batch > MSG_MOVE_MAX)
		m.batch = MSG_MOVE_MAX;
	if ((rc = router_refresh(r, true)) != 0)
		return rc;
	m.p->revision = r->map.revision;
	e = cmap_lookup(&r->map, tube, strlen(tube));
	if (e != NULL && strcmp(e->prefix, tube) == 0 && e->ndraining > 0) {
		/* a move (or a drain) under way: resumed */
		if (strcmp(e->cluster, target) != 0) {
			router_errmsg(r,
			    "tube '%s' is moving to %s already (the map drains "
			    "it from %s): finish that move first",
			    tube, e->cluster, e->draining[0]);
			return SLUICE_ESTATE;
		}
		for (size_t i = 0; i < e->ndraining; i++)
			snprintf(sources[ns++], sizeof(sources[0]), "%s",
			    e->draining[i]);
		for (size_t i = 0; i < ns; i++)
			if ((rc = window_open(&m, sources[i], target, tube,
			         true, true)) != 0)
				return rc;
	} else {
		const char *owner;

		if ((rc = router_owner(r, tube, true, &owner)) != 0)
			return rc;
		if (strcmp(owner, target) == 0 &&
		    (e == NULL || strcmp(e->prefix, tube) == 0)) {
			/* nothing to move; a table the target may still
			 * have (its source ended the drain itself while the
			 * mover was away) goes */
			if ((rc = end_tables(&m, target, tube)) != 0)
				return rc;
			m.p->done = 1;
			return 0;
		}
		if (strcmp(owner, target) != 0)
			snprintf(
			    sources[ns++], sizeof(sources[0]), "%s", owner);
		if ((rc = open_and_map(&m, sources, ns, target, tube)) != 0)
			return rc;
	}
	for (size_t i = 0; i < ns; i++) {
		if ((rc = move_from(&m, sources[i], target, tube)) != 0)
			return rc;
		report(&m);
	}
	if ((rc = end_tables(&m, target, tube)) != 0 ||
	    (rc = map_set(&m, tube, target, NULL, 0)) != 0)
		return rc;
	m.p->done = 1;
	report(&m);
	return 0;
}
