/* router_wait - a take over tubes of several clusters that waits on all
 * of them at once (sluice_router_take, sluice_map.h).
 *
 * One thread per cluster, each on a connection of its own for such waits
 * (struct router_waiter: never the connection acks go through, which
 * the caller may use as soon as the take returns), takes with waits of
 * at most SLICE_MS, again and again until the take's wait is over or
 * another cluster has answered. The first task that comes wins: the
 * call returns it at once. The other threads are cancelled: each ends
 * after its current slice, and a task its slice took after the winner is
 * given back at once, its take undone (release with untake: back at its
 * place, its attempt uncounted, as if never taken), never returned. So no
 * task is returned twice, none counts an attempt nobody made, and the
 * cost of a cancelled wait is at most one slice of a thread that nobody
 * waits for. A thread still finishing its slice is joined before its
 * connection serves the next take, or when the handle closes. A wait
 * refused SLUICE_EMOVED (a node that no longer has, or not yet has, the
 * tube) ends the take as a winner would, the others cancelled, so that
 * the caller routes it again by the map read then (router_moved) without
 * waiting for them.
 *
 * What the threads share (struct wait_set) is freed by the last of them
 * and the caller to let go of it; it copies the tubes' names, since the
 * caller's may be gone when a cancelled thread ends. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client.h"
#include "client/map_int.h"
#include "util/clock.h"

enum { SLICE_MS = 200 };

struct wait_one {
	struct wait_set *set;
	struct sluice_client *c;
	const char *cluster; /* stable: the routing handle's */
	char tubes[MSG_TAKE_TUBES_MAX][MSG_TUBE_MAX + 1];
	const char *names[MSG_TAKE_TUBES_MAX];
	struct sluice_take_opts o;
};

struct wait_set {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	bool cancel;
	int winner; /* -1: none yet */
	struct sluice_task *got;
	size_t ngot;
	size_t ended;
	int err;    /* the first error other than a wait that ended */
	bool moved; /* a wait was refused SLUICE_EMOVED */
	char errmsg[512];
	int64_t deadline;
	size_t n;
	struct wait_one one[];
};

static void
set_unref(struct wait_set *s)
{
	bool last;

	pthread_mutex_lock(&s->mu);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (!last)
		return;
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

/* Gives back what a cancelled wait took, as if it had never been taken
 * (untake: at its place, its attempt uncounted); to a server older than
 * untake, released at its place (its attempt stays counted). */
static void
give_back(struct sluice_client *c, struct sluice_task *t, size_t n)
{
	const struct sluice_release_opts front = { .priority = -1, .front = 1 };

	for (size_t i = 0; i < n; i++) {
		int rc = sluice_untake(c, t[i].id, t[i].lease, NULL);

		if (rc == SLUICE_EPROTO) /* a server older than untake */
			sluice_release_opts(
			    c, t[i].id, t[i].lease, &front, NULL);
	}
	sluice_task_free(t);
}

static void *
wait_run(void *arg)
{
	struct wait_one *w = arg;
	struct wait_set *s = w->set;
	int me = (int)(w - s->one);

	for (;;) {
		struct sluice_task *t = NULL;
		int64_t left = s->deadline - clock_mono_ms();
		bool cancel;
		size_t n = 0;
		int rc;

		pthread_mutex_lock(&s->mu);
		cancel = s->cancel;
		pthread_mutex_unlock(&s->mu);
		if (cancel || left <= 0)
			break;
		w->o.wait_ms = (uint64_t)(left < SLICE_MS ? left : SLICE_MS);
		rc = sluice_take(w->c, &w->o, &t, &n);
		pthread_mutex_lock(&s->mu);
		if (rc == 0 && s->winner < 0 && !s->cancel) {
			s->winner = me;
			s->got = t;
			s->ngot = n;
			pthread_cond_broadcast(&s->cv);
			pthread_mutex_unlock(&s->mu);
			break;
		}
		if (rc != 0 && rc != SLUICE_ETIMEDOUT && s->err == 0) {
			s->err = rc;
			snprintf(s->errmsg, sizeof(s->errmsg), "cluster %s: %s",
			    w->cluster, sluice_errmsg(w->c));
		}
		if (rc == SLUICE_EMOVED && !s->moved) {
			s->moved = true;
			s->err = rc; /* routed again: it comes first */
			snprintf(s->errmsg, sizeof(s->errmsg), "cluster %s: %s",
			    w->cluster, sluice_errmsg(w->c));
		}
		pthread_mutex_unlock(&s->mu);
		if (rc == 0) {
			give_back(w->c, t, n); /* another cluster won */
			break;
		}
		if (rc != SLUICE_ETIMEDOUT)
			break;
	}
	pthread_mutex_lock(&s->mu);
	s->ended++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	set_unref(s);
	return NULL;
}

/* The waiter of cluster `name`, its connection opened at need, its last
 * thread joined. */
static struct router_waiter *
waiter(struct sluice_router *r, const char *name)
{
	struct router_waiter *w = NULL, *grown;
	const char *urls;

	for (size_t i = 0; i < r->nwaiters && w == NULL; i++)
		if (strcmp(r->waiters[i].name, name) == 0)
			w = &r->waiters[i];
	if (w == NULL) {
		if ((urls = router_urls(r, name)) == NULL)
			return NULL;
		grown = realloc(
		    r->waiters, (r->nwaiters + 1) * sizeof(*r->waiters));
		if (grown == NULL)
			return NULL;
		r->waiters = grown;
		w = &r->waiters[r->nwaiters];
		memset(w, 0, sizeof(*w));
		if ((w->name = strdup(name)) == NULL)
			return NULL;
		if (sluice_open(urls, &w->c) != 0) {
			free(w->name);
			return NULL;
		}
		sluice_set_timeout(w->c, r->timeout_ms);
		if (r->token != NULL)
			sluice_set_token(w->c, r->token);
		r->nwaiters++;
	}
	if (w->running) {
		pthread_join(w->th, NULL);
		w->running = false;
	}
	return w;
}

int
router_wait_take(struct sluice_router *r, const struct sluice_take_opts *o,
    const struct take_group *g, size_t ng, int64_t deadline,
    struct sluice_task **tasks, size_t *n)
{
	struct wait_set *s = calloc(1, sizeof(*s) + ng * sizeof(s->one[0]));
	size_t started = 0;
	int rc;

	if (s == NULL)
		return SLUICE_ENOMEM;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->winner = -1;
	s->deadline = deadline;
	s->n = ng;
	s->refs = 1;
	for (size_t k = 0; k < ng; k++) {
		struct wait_one *w = &s->one[k];
		struct router_waiter *rw = waiter(r, g[k].name);

		if (rw == NULL) {
			router_errmsg(r,
			    "cluster %s: cannot open a connection "
			    "for its waits",
			    g[k].name);
			continue;
		}
		w->set = s;
		w->c = rw->c;
		w->cluster = g[k].name;
		w->o = *o;
		w->o.tubes = w->names;
		w->o.ntubes = g[k].n;
		for (size_t i = 0; i < g[k].n; i++) {
			snprintf(w->tubes[i], sizeof(w->tubes[i]), "%s",
			    g[k].tubes[i]);
			w->names[i] = w->tubes[i];
		}
		pthread_mutex_lock(&s->mu);
		s->refs++;
		pthread_mutex_unlock(&s->mu);
		if (pthread_create(&rw->th, NULL, wait_run, w) != 0) {
			pthread_mutex_lock(&s->mu);
			s->refs--;
			pthread_mutex_unlock(&s->mu);
			continue;
		}
		rw->running = true;
		started++;
	}
	pthread_mutex_lock(&s->mu);
	while (s->winner < 0 && s->ended < started && !s->moved)
		pthread_cond_wait(&s->cv, &s->mu);
	s->cancel = true; /* the others end after their slice */
	if (s->winner >= 0) {
		*tasks = s->got;
		*n = s->ngot;
		for (size_t i = 0; i < s->ngot; i++)
			s->got[i].cluster = s->one[s->winner].cluster;
		rc = 0;
	} else if (s->err != 0) {
		rc = s->err;
		router_errmsg(r, "%s", s->errmsg);
	} else {
		rc = started == 0 ? SLUICE_ECONN : SLUICE_ETIMEDOUT;
		if (started > 0)
			router_errmsg(r, "nothing to take within %llu ms",
			    (unsigned long long)o->wait_ms);
	}
	pthread_mutex_unlock(&s->mu);
	set_unref(s);
	return rc;
}

void
router_wait_close(struct sluice_router *r)
{
	for (size_t i = 0; i < r->nwaiters; i++) {
		if (r->waiters[i].running)
			pthread_join(r->waiters[i].th, NULL);
		sluice_close(r->waiters[i].c);
		free(r->waiters[i].name);
	}
	free(r->waiters);
	r->waiters = NULL;
	r->nwaiters = 0;
}
