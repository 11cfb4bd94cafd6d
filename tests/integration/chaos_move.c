/* chaos_move - the second cluster, etcd and the map, and the nemesis's
 * fault "move": tube "mv" moved from the cluster that owns it to the
 * other by the real `sluice tube move`, run as a child process. See
 * chaos.h.
 *
 * A move is done when a run of the mover exits 0 (the map names the
 * target alone). Drawn from the seed, one thing happens in its middle (a
 * random 30-430 ms after it starts, if it still runs): nothing; the
 * mover killed -9, then run again, which resumes it; the source's
 * leader killed -9 (cluster "ca": etcd elects another; "cb": its node
 * restarted) while the mover goes on; or the target's node killed the
 * same way. A run that fails (a node it needed stayed unreachable past
 * its timeout) is run again, up to MOVER_RUNS; a move that never ends
 * is a harness failure, since nothing should be able to stop one. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chaos.h"

enum {
	MOVER_RUNS = 60,
	MOVER_PAUSE_MS = 500, /* after a run that failed (a log full while a
	                         snapshot is written, a node gone) */
	WATCH_MS = 100,
	FIND_CALL_MS = 1500,
	ELECT_MS = 30000,
};

static const char *const CLUSTERS[2] = { "ca", "cb" };

const char *
chaos_cluster_name(int owner)
{
	return CLUSTERS[owner != 0];
}

int
chaos_move_args(struct chaos *c, struct chaos_node *n, int k)
{
	const char **a = n->s->args;

	a[k++] = "--etcd";
	a[k++] = c->etcd.url;
	a[k++] = "--cluster";
	a[k++] = CLUSTERS[n == &c->b];
	a[k++] = "--node";
	a[k++] = n->name;
	a[k++] = "--leader-ttl";
	a[k++] = it_sanitized() ? "3s" : "2s";
	return k;
}

/* The role and epoch of node `n`; -1 when it does not answer. */
static int
role_of(struct chaos *c, struct chaos_node *n, uint64_t *epoch)
{
	struct sluice_client *cl;
	struct sluice_stats *st = NULL;
	int role = -1;

	if (!t_srv_alive(n->s) || sluice_open(n->s->url, &cl) != 0)
		return -1;
	sluice_set_timeout(cl, FIND_CALL_MS);
	sluice_set_connect_timeout(cl, c->connect_ms);
	if (sluice_stats(cl, NULL, &st) == 0) {
		role = st->role;
		*epoch = st->epoch;
		sluice_stats_free(st);
	}
	sluice_close(cl);
	return role;
}

struct chaos_node *
chaos_find_leader(struct chaos *c)
{
	struct chaos_node *best = NULL;
	uint64_t best_epoch = 0;

	for (int i = 0; i < CHAOS_NODES; i++) {
		uint64_t epoch = 0;

		if (role_of(c, &c->node[i], &epoch) == SLUICE_LEADER &&
		    (best == NULL || epoch > best_epoch)) {
			best = &c->node[i];
			best_epoch = epoch;
		}
	}
	if (best != NULL)
		atomic_store(&c->leader, best->idx);
	return best;
}

int
chaos_init_moves(struct chaos *c, void **state)
{
	struct t_dir *d = *state;
	struct chaos_node *b = &c->b;

	c->moves = true;
	for (int i = 0; i < CHAOS_NODES; i++)
		snprintf(c->node[i].name, sizeof(c->node[i].name), "a%d", i);
	t_etcd_init(&c->etcd, d->path, "etcd");
	snprintf(c->etcd_map, sizeof(c->etcd_map), "etcd://127.0.0.1:%d",
	    c->etcd.client_port);
	if (t_etcd_start(&c->etcd) != 0) {
		chaos_fail(c, "etcd did not start");
		return -1;
	}
	b->idx = CHAOS_B_NODE;
	b->s = it_srv(*state, "b0");
	b->s->prog = "sluiced-fault"; /* the clock the others read: run
	                                 times move between them */
	snprintf(b->name, sizeof(b->name), "b0");
	snprintf(b->repl, sizeof(b->repl), "tcp://127.0.0.1:%d", t_free_port());
	b->bs_port = t_free_port();
	snprintf(b->bs, sizeof(b->bs), "127.0.0.1:%d", b->bs_port);
	atomic_store(&c->mv_owner, 0);
	return 0;
}

void
chaos_stop_moves(struct chaos *c)
{
	if (!c->moves)
		return;
	if (c->b.s != NULL && c->b.s->pid > 0)
		t_srv_stop(c->b.s, SIGKILL);
	if (c->etcd.pid > 0)
		t_etcd_signal(&c->etcd, SIGKILL);
}

int
chaos_start_moves(struct chaos *c)
{
	struct sluice_router *r = NULL;
	int64_t end = it_mono_ms() + ELECT_MS;
	uint64_t epoch, rev;
	int rc = -1;

	if (chaos_node_start(c, &c->b) != 0)
		return -1;
	while (it_mono_ms() < end && role_of(c, &c->b, &epoch) != SLUICE_LEADER)
		it_sleep_ms(50);
	if (sluice_open_map(c->etcd_map, &r) != 0) {
		chaos_fail(c, "no routing handle on %s", c->etcd_map);
		return -1;
	}
	sluice_router_set_timeout(r, ELECT_MS);
	if (sluice_router_map_set(r, "", CLUSTERS[0], NULL, 0, &rev) != 0 ||
	    sluice_router_map_set(r, "mv", CLUSTERS[0], NULL, 0, &rev) != 0)
		chaos_fail(c, "map: %s", sluice_router_errmsg(r));
	else
		rc = 0;
	sluice_router_close(r);
	return rc;
}

/* `sluice -s etcd://... tube move mv TARGET --batch 50 --quiet`. */
static pid_t
mover_start(struct chaos *c, const char *target)
{
	const char *argv[] = { t_bin("sluice"), "-s", c->etcd_map, "tube",
		"move", "mv", target, "--batch", "50", "--quiet", NULL };
	pid_t pid = fork();

	if (pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid > 0)
		it_track_pid(pid);
	return pid;
}

/* Waits for the mover until `end`: its exit status, or -1 (killed, or
 * still running at `end`: then killed). */
static int
mover_wait(pid_t pid, int64_t end)
{
	int status;

	while (it_mono_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		it_sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* Why cluster `owner`'s leader may refuse a copy: its disk's free room
 * and the last lines of its log that speak of space. */
static void
space_report(struct chaos *c, int owner)
{
	struct chaos_node *n = owner == 0 ? chaos_find_leader(c) : &c->b;
	char line[512], keep[4][512];
	size_t nk = 0;
	struct statvfs v;
	FILE *f;

	if (n == NULL)
		return;
	if (statvfs(n->s->data, &v) == 0)
		fprintf(stderr,
		    "chaos: node %d's disk: %.1f MB free of %.1f MB\n", n->idx,
		    (double)v.f_bavail * (double)v.f_frsize / 1e6,
		    (double)v.f_blocks * (double)v.f_frsize / 1e6);
	if ((f = fopen(n->s->log, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "refusing") != NULL ||
		    strstr(line, "preallocat") != NULL ||
		    strstr(line, "snapshot") != NULL)
			memcpy(keep[nk++ % 4], line, sizeof(line));
	fclose(f);
	for (size_t i = nk > 4 ? nk - 4 : 0; i < nk; i++)
		fprintf(stderr, "chaos: node %d: %s", n->idx, keep[i % 4]);
}

/* kill -9 of a node of cluster `owner` in a move's middle: "ca"'s
 * leader (etcd elects another, it comes back as a follower), or "cb"'s
 * node (restarted at once). A crash in the history. */
static int
kill_in_move(struct chaos *c, int owner, uint64_t *rng)
{
	struct chaos_node *n = owner == 0 ? chaos_find_leader(c) : &c->b;
	int64_t t0 = hist_now(c->h), t1;

	if (n == NULL)
		return 0; /* none leads: a fault is under way already */
	if (n->s->pid <= 0 || t_srv_stop(n->s, SIGKILL) < 0) {
		chaos_fail(c, "node %d could not be killed", n->idx);
		return -1;
	}
	t1 = hist_now(c->h);
	chaos_record(c, HIST_CRASH, owner == 0 ? HIST_F_FAILOVER : HIST_F_KILL,
	    n->idx, t0, t1);
	c->fig.move_crashes++;
	if (owner == 0) { /* another elected first, or a while gone by */
		int64_t end = it_mono_ms() + ELECT_MS;
		struct chaos_node *l;

		while (it_mono_ms() < end &&
		    ((l = chaos_find_leader(c)) == NULL || l == n))
			it_sleep_ms(50);
	} else {
		it_sleep_ms((int64_t)t_below(rng, 300));
	}
	return chaos_node_start(c, n);
}

int
chaos_move(struct chaos *c, uint64_t *rng)
{
	int from = atomic_load(&c->mv_owner), to = !from;
	int what = (int)t_below(rng, 4); /* 0 nothing, 1 the mover killed,
	                                    2 the source's, 3 the target's */
	int64_t t0 = hist_now(c->h);
	int64_t end = it_mono_ms() + (it_sanitized() ? 240000 : 120000);
	int64_t mid = 30 + (int64_t)t_below(rng, 400);
	bool done = false;
	int runs = 0, rc = 0;

	fprintf(stderr, "chaos: moving mv from %s to %s%s\n", CLUSTERS[from],
	    CLUSTERS[to],
	    what == 1       ? ", the mover killed in the middle"
	        : what == 2 ? ", the source's leader killed in the middle"
	        : what == 3 ? ", the target's leader killed in the middle"
	                    : "");
	while (!done && rc == 0 && runs < MOVER_RUNS && it_mono_ms() < end) {
		pid_t pid = mover_start(c, CLUSTERS[to]);
		int status;

		if (pid < 0) {
			chaos_fail(c, "no mover process");
			return -1;
		}
		runs++;
		if (what != 0) {
			it_sleep_ms(mid);
			if (waitpid(pid, &status, WNOHANG) == pid) {
				done = WIFEXITED(status) &&
				    WEXITSTATUS(status) == 0;
				what = 0; /* it ended first */
				continue;
			}
			if (what == 1) {
				kill(pid, SIGKILL);
				waitpid(pid, NULL, 0);
				c->fig.mover_kills++;
				what = 0;
				continue; /* run again: it resumes */
			}
			rc = kill_in_move(c, what == 2 ? from : to, rng);
			what = 0;
		}
		status = mover_wait(pid, end);
		done = status == 0;
		if (!done && it_mono_ms() < end) {
			fprintf(stderr,
			    "chaos: the mover to %s ended with %d; run "
			    "again\n",
			    CLUSTERS[to], status);
			space_report(c, to);
			it_sleep_ms(MOVER_PAUSE_MS);
		}
	}
	chaos_record(c, HIST_FAULT, HIST_F_MOVE, to ? CHAOS_B_NODE : 0, t0,
	    hist_now(c->h));
	if (rc != 0)
		return -1;
	if (!done) {
		chaos_fail(c, "the move of mv to %s did not end (%d runs)",
		    CLUSTERS[to], runs);
		return -1;
	}
	atomic_store(&c->mv_owner, to);
	c->fig.moves++;
	fprintf(stderr, "chaos: mv on %s after %.1f s (%d runs of the mover)\n",
	    CLUSTERS[to], (double)(hist_now(c->h) - t0) / 1e6, runs);
	return 0;
}

/* ---- the watch of the clusters' epochs ------------------------------ */

struct chaos_watch {
	pthread_t th;
	struct chaos *c;
	bool started;
};

/* Each cluster's epoch, looked at every WATCH_MS: a higher one than the
 * last look's is a leader elected since (HIST_F_ELECT, a crash from the
 * look before). The nemesis's kills are seen too; what it cannot see is
 * a leader whose lease in etcd ran out by itself (a slow etcd on a busy
 * machine), which ends its sessions' leases and may lose its newest take
 * all the same. */
static void *
watch_main(void *arg)
{
	struct chaos_watch *w = arg;
	struct chaos *c = w->c;
	const char *where[2] = { c->urls, c->b.s->url };
	struct sluice_client *cl[2] = { NULL, NULL };
	uint64_t epoch[2] = { 0, 0 };
	int64_t seen[2] = { 0, 0 }; /* the last look that answered */

	for (long i = 0; i < 10000000 && !atomic_load(&c->stop); i++) {
		for (int k = 0; k < 2; k++) {
			struct sluice_stats *st = NULL;
			int64_t t0 = hist_now(c->h);

			if (cl[k] == NULL && sluice_open(where[k], &cl[k]) != 0)
				continue;
			sluice_set_timeout(cl[k], FIND_CALL_MS);
			sluice_set_connect_timeout(cl[k], c->connect_ms);
			if (sluice_stats(cl[k], NULL, &st) != 0)
				continue;
			if (epoch[k] != 0 && st->epoch > epoch[k])
				chaos_record(c, HIST_CRASH, HIST_F_ELECT,
				    k == 0 ? atomic_load(&c->leader)
				           : CHAOS_B_NODE,
				    seen[k], hist_now(c->h));
			if (st->epoch >= epoch[k]) {
				epoch[k] = st->epoch;
				seen[k] = t0;
			}
			sluice_stats_free(st);
		}
		it_sleep_ms(WATCH_MS);
	}
	sluice_close(cl[0]);
	sluice_close(cl[1]);
	return NULL;
}

struct chaos_watch *
chaos_watch_start(struct chaos *c)
{
	struct chaos_watch *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->c = c;
	w->started = pthread_create(&w->th, NULL, watch_main, w) == 0;
	if (!w->started)
		chaos_fail(c, "no thread");
	return w;
}

void
chaos_watch_stop(struct chaos_watch *w)
{
	if (w == NULL)
		return;
	atomic_store(&w->c->stop, true);
	if (w->started)
		pthread_join(w->th, NULL);
	free(w);
}
