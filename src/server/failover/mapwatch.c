/* mapwatch - the map thread (mapwatch.h): polls the marker key, reads
 * the map and the members of its clusters, carries out the changes the
 * core asks for, and publishes both. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "etcd/cmap_etcd.h"
#include "server/failover/mapwatch.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/log.h"

struct ask {
	uint64_t id;
	bool del;
	struct cmap_entry en;
	bool guard; /* only over `old` (mapwatch_ask_if) */
	struct cmap_entry old;
};

struct mapwatch {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	int efd;
	bool stop;
	struct etcd *etcd; /* the thread's alone */

	/* under mu */
	struct cmap pub; /* the last map published */
	uint64_t gen;    /* bumped with each */
	struct ask asks[MAPWATCH_ASKS_MAX];
	size_t nasks;
	struct mapwatch_answer answers[MAPWATCH_ASKS_MAX];
	size_t nanswers;
	char error[MAPWATCH_TEXT_MAX];

	/* the thread's */
	struct cmap cur;
	bool have;
	int64_t full_ms; /* --map-reread */
	int64_t next_full, next_members;
	size_t bad; /* entries left out at the last full read */
	char logged[MAPWATCH_TEXT_MAX]; /* the last error logged */
};

static void
wake_core(struct mapwatch *w)
{
	uint64_t one = 1;

	if (write(w->efd, &one, sizeof(one)) < 0)
		log_warn("map", "cannot wake the core error=\"%s\"",
		    strerror(errno));
}

/* Notes a failed call (logged when its text changes) or a success. */
static void
note(struct mapwatch *w, int rc, const char *what)
{
	char text[MAPWATCH_TEXT_MAX] = "";

	if (rc != 0)
		snprintf(
		    text, sizeof(text), "%s: %s", what, etcd_errmsg(w->etcd));
	if (strcmp(text, w->logged) != 0) {
		if (rc != 0)
			log_warn("map", "etcd call failed error=\"%s\"", text);
		else
			log_info("map", "etcd answers again");
		snprintf(w->logged, sizeof(w->logged), "%s", text);
	}
	pthread_mutex_lock(&w->mu);
	snprintf(w->error, sizeof(w->error), "%s", text);
	pthread_mutex_unlock(&w->mu);
}

static bool
same_clusters(const struct cmap *a, const struct cmap *b)
{
	if (a->nclusters != b->nclusters)
		return false;
	for (size_t i = 0; i < a->nclusters; i++)
		if (strcmp(a->c[i].name, b->c[i].name) != 0 ||
		    strcmp(a->c[i].leader, b->c[i].leader) != 0 ||
		    strcmp(a->c[i].urls, b->c[i].urls) != 0 ||
		    strcmp(a->c[i].http != NULL ? a->c[i].http : "",
		        b->c[i].http != NULL ? b->c[i].http : "") != 0)
			return false;
	return true;
}

static void
publish(struct mapwatch *w)
{
	struct cmap copy;

	if (cmap_copy(&copy, &w->cur) != 0)
		return; /* the next turn tries again */
	pthread_mutex_lock(&w->mu);
	cmap_free(&w->pub);
	w->pub = copy;
	w->gen++;
	pthread_mutex_unlock(&w->mu);
	wake_core(w);
}

/* Reads the map when its revision moved (or a full read is due), and
 * the members when due; publishes what changed. A poll's change of the
 * entries of a map the node had waits FAULT_PAUSE_MAPWATCH first (fault
 * builds: a node behind the map; not its first read, nor members alone,
 * nor a change it made itself). */
static void
refresh(struct mapwatch *w, bool force)
{
	bool polled = !force, had = w->have, behind = false;
	int64_t now = clock_mono_ms(), rev = 0;
	struct cmap next;
	bool changed = false;
	size_t bad = 0;
	char why[200];
	int rc;

	if (!force && w->have && now < w->next_full) {
		if ((rc = cmap_etcd_revision(w->etcd, &rev)) != 0) {
			note(w, rc, "map revision");
			return;
		}
		force = (uint64_t)rev > w->cur.revision;
	} else {
		force = true;
	}
	if (force) {
		if ((rc = cmap_etcd_read(
		         w->etcd, &next, &bad, why, sizeof(why))) != 0) {
			note(w, rc, "map read");
			return;
		}
		w->next_full = now + w->full_ms;
		if (bad > 0 && bad != w->bad) /* said once, not each read */
			log_warn("map",
			    "entries left out of the map n=%zu first=\"%s\"",
			    bad, why);
		w->bad = bad;
		if (!w->have || next.revision != w->cur.revision ||
		    next.n != w->cur.n ||
		    (next.n > 0 &&
		        memcmp(next.e, w->cur.e, next.n * sizeof(*next.e)) !=
		            0)) {
			changed = true;
			behind = polled && had;
			log_info("map",
			    "map read revision=%" PRIu64 " entries=%zu",
			    next.revision, next.n);
			/* keep the addresses known until they are read */
			next.c = w->cur.c;
			next.nclusters = w->cur.nclusters;
			w->cur.c = NULL;
			w->cur.nclusters = 0;
			cmap_free(&w->cur);
			w->cur = next;
			w->have = true;
			w->next_members = 0;
		} else {
			cmap_free(&next);
		}
	}
	if (now >= w->next_members) {
		struct cmap with;

		if (cmap_copy(&with, &w->cur) == 0) {
			/* the entries alone: the members are read anew (their
			 * HTTP URLs too, which a copy holds since
			 * --advertise-http came: left here, they leaked at
			 * every read) */
			for (size_t i = 0; i < with.nclusters; i++) {
				free(with.c[i].urls);
				free(with.c[i].http);
			}
			free(with.c);
			with.c = NULL;
			with.nclusters = 0;
			if ((rc = cmap_etcd_members(w->etcd, &with)) != 0) {
				note(w, rc, "cluster members");
				cmap_free(&with);
			} else {
				w->next_members = now + MAPWATCH_MEMBERS_MS;
				if (!same_clusters(&with, &w->cur))
					changed = true;
				cmap_free(&w->cur);
				w->cur = with;
			}
		}
	}
	note(w, 0, "");
	if (behind)
		FAULT_PAUSE(FAULT_PAUSE_MAPWATCH);
	if (changed)
		publish(w);
}

/* Carries out one change the core asked for. */
static void
carry_out(struct mapwatch *w, const struct ask *a)
{
	struct mapwatch_answer ans = { .id = a->id };
	bool found = true;
	int64_t rev = 0;
	int rc;

	if (a->del)
		rc = cmap_etcd_delete(w->etcd, a->en.prefix, &found, &rev);
	else if (a->guard)
		rc = cmap_etcd_set_if(w->etcd, &a->en, &a->old, &found, &rev);
	else
		rc = cmap_etcd_set(w->etcd, &a->en, &rev);
	if (rc != 0) {
		ans.rc = rc == ETCD_ETIMEDOUT || rc == ETCD_EIO
		    ? SLUICE_ETIMEDOUT
		    : SLUICE_ESTATE;
		snprintf(ans.text, sizeof(ans.text), "map %s: %s%s",
		    a->del ? "delete" : "set", etcd_errmsg(w->etcd),
		    ans.rc == SLUICE_ETIMEDOUT
		        ? " (the change may or may not have been made)"
		        : "");
		note(w, rc, "map change");
	} else if (!found && a->guard) {
		ans.rc = SLUICE_ESTATE;
		snprintf(ans.text, sizeof(ans.text),
		    "map set: the entry of prefix '%.160s' changed "
		    "meanwhile: left as it is",
		    a->en.prefix);
	} else if (!found) {
		ans.rc = SLUICE_ENOTFOUND;
		snprintf(ans.text, sizeof(ans.text),
		    "map delete: no entry for prefix '%s'%s", a->en.prefix,
		    a->en.prefix[0] == '\0' ? " (the default)" : "");
	} else {
		ans.revision = (uint64_t)rev;
		log_info("map",
		    "map %s prefix='%s' cluster=%s revision=%" PRId64,
		    a->del ? "delete" : "set", a->en.prefix,
		    a->del ? "-" : a->en.cluster, rev);
		refresh(w, true);
	}
	pthread_mutex_lock(&w->mu);
	if (w->nanswers < MAPWATCH_ASKS_MAX)
		w->answers[w->nanswers++] = ans;
	pthread_mutex_unlock(&w->mu);
	wake_core(w);
}

static void *
run(void *arg)
{
	struct mapwatch *w = arg;
	struct timespec ts;

	for (;;) {
		struct ask a;
		bool got = false;

		pthread_mutex_lock(&w->mu);
		if (w->stop) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		if (w->nasks > 0) {
			a = w->asks[0];
			memmove(&w->asks[0], &w->asks[1],
			    (w->nasks - 1) * sizeof(w->asks[0]));
			w->nasks--;
			got = true;
		}
		pthread_mutex_unlock(&w->mu);
		if (got) {
			carry_out(w, &a);
			continue;
		}
		refresh(w, false);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)MAPWATCH_POLL_MS * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&w->mu);
		if (!w->stop && w->nasks == 0)
			pthread_cond_timedwait(&w->wake, &w->mu, &ts);
		pthread_mutex_unlock(&w->mu);
	}
	return NULL;
}

int
mapwatch_start(struct mapwatch **out, const char *endpoints, int timeout_ms,
    int full_ms, char *err, size_t errlen)
{
	struct mapwatch *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;

	if (w == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((w->etcd = etcd_new(endpoints, timeout_ms, err, errlen)) == NULL) {
		free(w);
		return -1;
	}
	w->full_ms = full_ms;
	cmap_init(&w->pub);
	cmap_init(&w->cur);
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (w->efd < 0 || pthread_create(&w->thread, NULL, run, w) != 0) {
		snprintf(err, errlen, "cannot start the map thread: %s",
		    strerror(errno));
		if (w->efd >= 0)
			close(w->efd);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->wake);
		etcd_delete(w->etcd);
		free(w);
		return -1;
	}
	*out = w;
	return 0;
}

void
mapwatch_stop(struct mapwatch *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	etcd_delete(w->etcd);
	close(w->efd);
	cmap_free(&w->pub);
	cmap_free(&w->cur);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->wake);
	free(w);
}

int
mapwatch_fd(const struct mapwatch *w)
{
	return w != NULL ? w->efd : -1;
}

bool
mapwatch_take(struct mapwatch *w, uint64_t *gen, struct cmap *out)
{
	uint64_t v;
	bool got = false;

	if (read(w->efd, &v, sizeof(v)) < 0) {
		/* nothing signalled; a map may still wait */
	}
	pthread_mutex_lock(&w->mu);
	if (w->gen != *gen && cmap_copy(out, &w->pub) == 0) {
		*gen = w->gen;
		got = true;
	}
	pthread_mutex_unlock(&w->mu);
	return got;
}

bool
mapwatch_ask(
    struct mapwatch *w, uint64_t id, bool del, const struct cmap_entry *en)
{
	bool ok = false;

	pthread_mutex_lock(&w->mu);
	if (w->nasks < MAPWATCH_ASKS_MAX) {
		w->asks[w->nasks++] =
		    (struct ask) { .id = id, .del = del, .en = *en };
		pthread_cond_signal(&w->wake);
		ok = true;
	}
	pthread_mutex_unlock(&w->mu);
	return ok;
}

bool
mapwatch_ask_if(struct mapwatch *w, uint64_t id, const struct cmap_entry *en,
    const struct cmap_entry *old)
{
	bool ok = false;

	pthread_mutex_lock(&w->mu);
	if (w->nasks < MAPWATCH_ASKS_MAX) {
		w->asks[w->nasks++] = (struct ask) {
			.id = id, .en = *en, .guard = true, .old = *old
		};
		pthread_cond_signal(&w->wake);
		ok = true;
	}
	pthread_mutex_unlock(&w->mu);
	return ok;
}

bool
mapwatch_answer(struct mapwatch *w, struct mapwatch_answer *out)
{
	bool got = false;

	pthread_mutex_lock(&w->mu);
	if (w->nanswers > 0) {
		*out = w->answers[0];
		memmove(&w->answers[0], &w->answers[1],
		    (w->nanswers - 1) * sizeof(w->answers[0]));
		w->nanswers--;
		got = true;
	}
	pthread_mutex_unlock(&w->mu);
	return got;
}

void
mapwatch_error(struct mapwatch *w, char *out, size_t len)
{
	pthread_mutex_lock(&w->mu);
	snprintf(out, len, "%s", w->error);
	pthread_mutex_unlock(&w->mu);
}
