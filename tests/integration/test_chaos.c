/* Chaos: many concurrent clients of a replicated sluice (libsluice
 * threads and beanstalk connections) record every call they make in a
 * history while a nemesis injects faults (chaos.h); then a final read,
 * once the faults have ended and every lease has run out, takes every
 * task's state, and the history checker (tests/history) judges the whole
 * history against sluice's rules, among them that tube "lib"'s
 * concurrency cap (CHAOS_CAP) held at every moment, that no task put
 * after a parent ran before its parent was acked, and that no slot of
 * the schedules (CHAOS_SCHEDS, every minute of a clock the nodes read
 * shifted so that a minute comes within the load) put two tasks. Any violation
 * fails the test, with the operations that broke the rule and the task's whole
 * history.
 *
 * In make test: 24 s of load and 3 faults (a failover and two of kill,
 * SIGSTOP and full disk), seed 0xc4a05 unless SLUICE_TEST_SEED says
 * otherwise, one cluster and no moves (two clusters and etcd take a core
 * for the whole run, and make test runs it beside the other tests). make
 * chaos runs it for 10 minutes with moves and a fault after every 0.3-1.3
 * s of calm, a quarter of them moves:
 *   SLUICE_CHAOS_SECS     seconds of load (default 24)
 *   SLUICE_CHAOS_FAULTS   faults, evenly spread; 0: one after every
 *                         0.3-1.3 s of calm
 *   SLUICE_CHAOS_KINDS    fault names to cycle through (kill,
 *                         kill-follower, stop, disk, failover, move)
 *   SLUICE_CHAOS_MOVES    1: two clusters sharing an etcd and a map, and
 *                         the fault "move" among the others (chaos.h):
 *                         tube "mv" moved from one cluster to the other
 *                         while its clients work it through the map, the
 *                         mover or a node of either cluster killed in a
 *                         move's middle; make chaos sets it (also on
 *                         when SLUICE_CHAOS_KINDS names "move"; needs
 *                         etcd)
 *   SLUICE_CHAOS_HISTORY  where to write the history (it is also written
 *                         to chaos-SEED.history when a rule is broken)
 *   SLUICE_CHAOS_CHECK    a history file to check again, with no cluster
 * The seed fixes the fault schedule and every client's choices, not the
 * threads' interleaving: a rerun with a seed replays the same faults.
 *
 * The full disk needs root (a tmpfs per node, in a mount namespace of the
 * test's own); without it that fault is left out, and said so. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos.h"

enum {
	SHORT_SECS = 24,
	SHORT_FAULTS = 3,
	FINAL_CALL_MS = 10000,
	LIST_MAX = SLUICE_LIST_MAX,
	PAGES_MAX = 1000, /* of a tube's tasks in one state, at the end */
};

static struct chaos *running_chaos; /* for the teardown */
static bool can_mount;

struct cfg {
	int secs;
	int faults; /* 0: one after every 0.3-1.3 s of calm, to the end */
	int nlib, nbs, nmv;
	bool moves;
};

static int
env_int(const char *name, int dflt)
{
	const char *s = getenv(name);

	return s != NULL && *s != '\0' ? atoi(s) : dflt;
}

static struct cfg
config(void)
{
	struct cfg k;

	k.secs = env_int("SLUICE_CHAOS_SECS", SHORT_SECS);
	k.faults = env_int("SLUICE_CHAOS_FAULTS", SHORT_FAULTS);
	k.nlib = (int)it_scale(6, 2, 3);
	k.nbs = (int)it_scale(2, 2, 1);
	k.nmv = (int)it_scale(3, 2, 2);
	k.moves = env_int("SLUICE_CHAOS_MOVES", 0) != 0 ||
	    (getenv("SLUICE_CHAOS_KINDS") != NULL &&
	        strstr(getenv("SLUICE_CHAOS_KINDS"), "move") != NULL);
	if (k.moves && !t_etcd_available()) {
		fprintf(stderr, "chaos: etcd is not installed: no moves\n");
		k.moves = false;
	}
	if (k.secs < 10)
		k.secs = 10;
	return k;
}

static int
chaos_teardown(void **state)
{
	if (running_chaos != NULL) {
		for (int i = 0; i < CHAOS_NODES; i++)
			if (running_chaos->node[i].s->pid > 0)
				t_srv_stop(running_chaos->node[i].s, SIGKILL);
		chaos_stop_moves(running_chaos);
		chaos_unmount(running_chaos);
		running_chaos = NULL;
	}
	return it_teardown(state);
}

/* SLUICE_CHAOS_KINDS, a comma-separated list of fault names to cycle
 * through; 0 when unset. */
static int
env_kind(int i)
{
	const char *s = getenv("SLUICE_CHAOS_KINDS");
	int kinds[32], n = 0;

	while (s != NULL && *s != '\0' && n < 32) {
		size_t len = strcspn(s, ",");

		for (int k = 1; k < HIST_FAULTS_; k++)
			if (strlen(hist_fault_name(k)) == len &&
			    strncmp(s, hist_fault_name(k), len) == 0)
				kinds[n++] = k;
		s += len + (s[len] == ',');
	}
	return n > 0 ? kinds[i % n] : 0;
}

/* The kind of fault number `i`. A short run (n faults) has a failover and
 * n - 1 others, all different while they last; a long run draws them
 * with weights. SLUICE_CHAOS_KINDS overrides both. */
static int
pick_fault(const struct chaos *c, int i, int n, uint64_t *rng)
{
	static int order[HIST_FAULTS_];
	static int norder;

	if (env_kind(i) != 0)
		return env_kind(i);
	/* with moves, every other fault of a short run, a quarter of a
	 * long run's */
	if (c->moves && (n > 0 ? i % 2 == 1 : t_below(rng, 4) == 0))
		return HIST_F_MOVE;
	if (n > 0) {
		i = c->moves ? i / 2 : i;
		if (i == 0) {
			int others[HIST_FAULTS_], nothers = 0;

			others[nothers++] = HIST_F_KILL;
			others[nothers++] = HIST_F_STOP;
			if (c->tmpfs)
				others[nothers++] = HIST_F_DISK;
			for (int k = nothers - 1; k > 0; k--) {
				int j = (int)t_below(rng, (uint64_t)k + 1);
				int tmp = others[k];

				others[k] = others[j];
				others[j] = tmp;
			}
			norder = 0;
			order[norder++] = HIST_F_FAILOVER;
			for (int k = 0; k < nothers; k++)
				order[norder++] = others[k];
			order[norder++] = HIST_F_KILL_FOLLOWER;
			/* the failover at a place the seed decides */
			{
				int j = (int)t_below(
				    rng, (uint64_t)(n < norder ? n : norder));
				int tmp = order[0];

				order[0] = order[j];
				order[j] = tmp;
			}
		}
		return order[i % norder];
	}
	{
		uint64_t r = t_below(rng, 100);

		if (r < 20)
			return HIST_F_KILL;
		if (r < 30)
			return HIST_F_KILL_FOLLOWER;
		if (r < 55)
			return HIST_F_STOP;
		if (r < 70)
			return c->tmpfs ? HIST_F_DISK : HIST_F_STOP;
		return HIST_F_FAILOVER;
	}
}

/* Prints how many of the schedules' slots due in the load (their
 * minutes from 3 s after its start to 15 s before its end, on the
 * nodes' clock: `server0` at `start`) a client took a task of: the rule
 * slot says none fired twice; this says how many fired at all. */
static void
slots_figure(const struct hist *h, int64_t start, int64_t end, int64_t server0)
{
	int64_t from = server0 + 3000, to = server0 + (end - start) - 15000;
	size_t due = 0, fired = 0;

	for (int64_t b = (from / 60000 + 1) * 60000; b <= to; b += 60000)
		for (uint32_t k = 1; k <= CHAOS_SCHEDS; k++) {
			bool got = false;

			due++;
			for (size_t i = 0; i < h->n && !got; i++)
				got = h->ops[i].type == HIST_FIRE &&
				    h->ops[i].sched == k && h->ops[i].slot == b;
			fired += got;
		}
	fprintf(stderr,
	    "chaos: %zu slots of the schedules due in the load, %zu of them "
	    "fired and taken\n",
	    due, fired);
}

/* ---- the final read ------------------------------------------------------ */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
add_final(struct hist *h, const struct sluice_task *t)
{
	struct hist_op op;

	hist_op_init(&op, HIST_FINAL);
	op.invoke = op.complete = hist_now(h);
	op.id = t->id;
	op.key = hist_payload_key(t->payload, t->payload_len);
	op.attempts = t->attempts;
	op.max = t->max_attempts;
	op.state = (int8_t)t->state;
	hist_add(h, &op);
}

/* A task of tube "mv" the final read found: named by its payload. */
static void
add_final_mv(struct hist *h, const struct sluice_task *t)
{
	struct hist_op op;

	hist_op_init(&op, HIST_FINAL);
	op.invoke = op.complete = hist_now(h);
	op.key = hist_payload_key(t->payload, t->payload_len);
	op.id = op.key != 0 ? HIST_MV_ID(op.key) : t->id;
	op.attempts = t->attempts;
	op.max = t->max_attempts;
	op.state = (int8_t)t->state;
	hist_add(h, &op);
}

/* Waits until no task is taken: every session is closed, every ttr ran
 * out. False if some still are after the longest ttr and a margin. */
static bool
wait_untaken(struct sluice_client *cl)
{
	int64_t end =
	    it_mono_ms() + CHAOS_TTR_MAX_MS + (it_sanitized() ? 30000 : 10000);

	while (it_mono_ms() < end) {
		struct sluice_stats *st = NULL;
		bool none;

		if (sluice_stats(cl, NULL, &st) != 0) {
			it_sleep_ms(100);
			continue;
		}
		none = st->totals.taken == 0;
		sluice_stats_free(st);
		if (none)
			return true;
		it_sleep_ms(100);
	}
	return false;
}

/* Every page of `tube` in `state` at `cl`: into the history by `add`
 * unless `skip` (sorted, nskip) holds its id. False when a page could not
 * be read. */
static bool
list_tube(struct sluice_client *cl, struct hist *h, const char *tube, int state,
    const uint64_t *skip, size_t nskip,
    void (*add)(struct hist *, const struct sluice_task *), uint64_t *found)
{
	uint64_t after = 0;

	/* every page, by cursor: a tube held back by its cap may keep more
	 * than a page of ready tasks */
	for (int page = 0; page < PAGES_MAX; page++) {
		struct sluice_task *ts = NULL;
		size_t n = 0;
		int rc = sluice_list_after(cl, tube, state, SLUICE_ORDER_ID,
		    after, LIST_MAX, 1, &ts, &n);

		if (rc != 0 && rc != SLUICE_ENOTFOUND)
			return false;
		for (size_t i = 0; i < n; i++)
			if (skip == NULL ||
			    bsearch(&ts[i].id, skip, nskip, sizeof(*skip),
			        cmp_u64) == NULL) {
				add(h, &ts[i]);
				(*found)++;
			}
		if (n > 0)
			after = ts[n - 1].id;
		sluice_task_free(ts);
		if (rc != 0 || n < LIST_MAX)
			break;
	}
	return true;
}

static const int STATES[] = { SLUICE_READY, SLUICE_DELAYED, SLUICE_TAKEN,
	SLUICE_BURIED, SLUICE_WAITING };

/* Tube "mv" on both clusters (the moves are over: one holds it, but a
 * copy made twice could be on either). False when a list failed. */
static bool
final_mv(struct chaos *c, struct hist *h)
{
	const char *where[2] = { c->urls, c->b.s->url };
	bool complete = true;
	uint64_t found = 0;

	for (int k = 0; k < 2; k++) {
		struct sluice_client *cl = chaos_client(c, where[k]);

		if (cl == NULL)
			return false;
		sluice_set_timeout(cl, FINAL_CALL_MS);
		if (k == 1 && !wait_untaken(cl))
			fprintf(stderr,
			    "chaos: tasks still taken on cluster cb after "
			    "every lease should have ended\n");
		for (size_t si = 0; si < sizeof(STATES) / sizeof(STATES[0]);
		     si++)
			if (!list_tube(cl, h, "mv", STATES[si], NULL, 0,
			        add_final_mv, &found))
				complete = false;
		sluice_close(cl);
	}
	fprintf(stderr,
	    "chaos: %" PRIu64 " tasks of tube mv at the end (on %s)\n", found,
	    chaos_cluster_name(atomic_load(&c->mv_owner)));
	return complete;
}

/* Every task the history names, by peek, and every task the lists show
 * (an unknown put's task no one took); the end of the history. */
static void
final_read(struct chaos *c, struct hist *h)
{
	struct chaos_node *l = &c->node[atomic_load(&c->leader)];
	struct sluice_client *cl = chaos_client(c, l->s->url);
	uint64_t *ids, found = 0, total = 0;
	size_t nids = 0, n0 = h->n;
	bool complete = true;
	struct sluice_stats *st = NULL;

	ids = malloc((n0 ? n0 : 1) * sizeof(*ids));
	if (cl == NULL || ids == NULL) {
		chaos_fail(c, "final read: no client");
		free(ids);
		sluice_close(cl);
		return;
	}
	sluice_set_timeout(cl, FINAL_CALL_MS);
	if (!wait_untaken(cl))
		fprintf(stderr,
		    "chaos: tasks still taken after every lease "
		    "should have ended\n");
	for (size_t i = 0; i < n0; i++)
		if (h->ops[i].id != 0 && h->ops[i].face != HIST_MV)
			ids[nids++] = h->ops[i].id;
	qsort(ids, nids, sizeof(*ids), cmp_u64);
	h->final_at = hist_now(h);
	for (size_t i = 0; i < nids; i++) {
		struct sluice_task *t = NULL;
		int rc = -1;

		if (i > 0 && ids[i] == ids[i - 1])
			continue;
		for (int k = 0; k < 5; k++) {
			rc = sluice_peek(cl, ids[i], &t);
			if (rc == 0 || rc == SLUICE_ENOTFOUND)
				break;
			it_sleep_ms(200);
		}
		if (rc == 0) {
			add_final(h, t);
			found++;
		} else if (rc != SLUICE_ENOTFOUND) {
			fprintf(stderr,
			    "chaos: final peek of %" PRIu64 ": %s\n", ids[i],
			    sluice_strerror(rc));
			complete = false;
		}
		sluice_task_free(t);
	}
	for (int tb = 0; tb < 2; tb++) {
		static const char *const tubes[2] = { "lib", "bs" };

		for (size_t si = 0; si < sizeof(STATES) / sizeof(STATES[0]);
		     si++)
			if (!list_tube(cl, h, tubes[tb], STATES[si], ids, nids,
			        add_final, &found))
				complete = false;
	}
	if (c->moves && !final_mv(c, h))
		complete = false;
	for (int tb = 0; tb < 2; tb++) {
		static const char *const tubes[2] = { "lib", "bs" };
		int rc = sluice_stats(cl, tubes[tb], &st);

		if (rc == 0) {
			total += st->tubes[0].ready + st->tubes[0].delayed +
			    st->tubes[0].taken + st->tubes[0].buried;
			for (size_t k = 0; k < st->tubes[0].nkv; k++)
				if (strcmp(st->tubes[0].kv[k].name,
				        "waiting") == 0)
					total += st->tubes[0].kv[k].value;
			sluice_stats_free(st);
		} else if (rc != SLUICE_ENOTFOUND) {
			complete = false;
		}
	}
	if (total != found)
		fprintf(stderr,
		    "chaos: the leader holds %" PRIu64
		    " tasks, the final read found %" PRIu64 "\n",
		    total, found);
	h->final_complete = complete;
	free(ids);
	sluice_close(cl);
}

/* ---- the test ------------------------------------------------------------ */

static void
report(const struct chaos *c, const struct cfg *k, const struct hist *h,
    const struct hist_report *r)
{
	fprintf(stderr,
	    "chaos: seed %" PRIu64 ", %d s of load, %d nodes with "
	    "--sync-replicas 1, %d libsluice and %d beanstalk clients, "
	    "data on %s%s\n",
	    c->seed, k->secs, CHAOS_NODES, k->nlib, k->nbs,
	    c->tmpfs ? "tmpfs" : "the test's disk",
	    c->tmpfs ? "" : " (not root: no full-disk fault)");
	hist_report_print(h, r, stderr, 10);
	if (c->moves)
		fprintf(stderr,
		    "chaos: tube mv moved %lu times between clusters ca and "
		    "cb (%lu movers killed -9 and run again, %lu nodes killed "
		    "in a move's middle), %d clients through the map\n",
		    c->fig.moves, c->fig.mover_kills, c->fig.move_crashes,
		    k->nmv);
	if (c->fig.unhealthy > 0)
		fprintf(stderr,
		    "chaos: %lu faults after which the cluster took more "
		    "than 15 s to be whole\n",
		    c->fig.unhealthy);
}

static void
save(const struct hist *h, const char *path)
{
	if (hist_save(h, path) == 0)
		fprintf(stderr, "chaos: history written to %s\n", path);
	else
		fprintf(stderr, "chaos: could not write %s\n", path);
}

static void
test_history_under_faults_keeps_the_rules(void **state)
{
	static struct chaos c;
	struct cfg k = config();
	uint64_t seed = t_seed(0xc4a05), rng = seed;
	struct hist h;
	struct hist_report r;
	struct chaos_load *load;
	int64_t start, slot_at, server0;
	const char *keep = getenv("SLUICE_CHAOS_HISTORY");
	char path[64];

	hist_init(&h);
	chaos_init(&c, state, &h, seed, k.moves);
	running_chaos = &c;
	if (k.moves && chaos_init_moves(&c, state) != 0)
		fail_msg("%s", c.err);
	if (!can_mount)
		fprintf(stderr,
		    "chaos: not root: the full-disk fault is left out\n");
	if (chaos_start(&c) != 0 || chaos_cap(&c) != 0 || chaos_sched(&c) != 0)
		fail_msg("%s", c.err);
	start = it_mono_ms();
	/* the first minute of the nodes' clock after the load began */
	server0 = it_wall_ms() + c.clock_shift_ms;
	slot_at =
	    start + (60000 - (it_wall_ms() + c.clock_shift_ms) % 60000) % 60000;
	c.end_ms = start + (int64_t)k.secs * 1000;
	load = chaos_load_start(&c, k.nlib, k.nbs, k.nmv);
	for (int i = 0; load != NULL && (k.faults == 0 || i < k.faults); i++) {
		int64_t at = k.faults > 0
		    ? start + (int64_t)(i + 1) * k.secs * 1000 / (k.faults + 1)
		    : it_mono_ms() + 300 + (int64_t)t_below(&rng, 1000);
		int kind = pick_fault(&c, i, k.faults, &rng);

		/* In a short run the failover comes within 0.3 s of the
		 * schedules' minute, when the leader fires its slots (once
		 * the faults before it are done). */
		if (k.faults > 0 && kind == HIST_F_FAILOVER &&
		    slot_at > start + 3000 && slot_at + 10000 < c.end_ms)
			at = slot_at - 300 + (int64_t)t_below(&rng, 600);
		while (it_mono_ms() < at && !chaos_failed(&c))
			it_sleep_ms(20);
		/* a fault needs a few seconds before the load ends */
		if (chaos_failed(&c) || it_mono_ms() > c.end_ms - 5000)
			break;
		fprintf(stderr,
		    "chaos: %.1f s: %s (fault %d; so far %lu operations, "
		    "%lu unknown)\n",
		    (double)(it_mono_ms() - start) / 1000,
		    hist_fault_name(kind), i + 1, atomic_load(&c.fig.ops),
		    atomic_load(&c.fig.unknown));
		/* In a long run a quarter of the faults come before the
		 * followers have caught up with the last one: a leader
		 * restarted, then failed over; two failovers in a row. */
		if (chaos_fault(&c, kind, &rng,
		        k.faults > 0 || t_below(&rng, 4) != 0) != 0)
			break;
	}
	while (it_mono_ms() < c.end_ms && !chaos_failed(&c))
		it_sleep_ms(50);
	chaos_load_stop(load);
	if (!chaos_failed(&c) && chaos_heal(&c) == 0)
		final_read(&c, &h);
	assert_int_equal(hist_check(&h, &r), 0);
	report(&c, &k, &h, &r);
	if (keep != NULL && *keep != '\0')
		save(&h, keep);
	if (r.violations > 0) {
		snprintf(path, sizeof(path), "chaos-%" PRIu64 ".history", seed);
		save(&h, path);
	}
	if (chaos_failed(&c))
		fail_msg("harness: %s", c.err);
	assert_true(h.final_complete);
	assert_int_equal(r.violations, 0);
	assert_true(r.children > 0); /* the rule "after" judged some */
	/* and the rule "slot", when a minute came early enough in the load
	 * for its tasks to be taken (chaos_init sees to it, unless the
	 * cluster took long to start) */
	slots_figure(&h, start, c.end_ms, server0);
	if (slot_at + 10000 < c.end_ms)
		assert_true(r.slots > 0);
	else
		fprintf(stderr, "chaos: no slot of a schedule came in time\n");
	hist_report_free(&r);
	hist_free(&h);
}

/* SLUICE_CHAOS_CHECK=FILE: the checker alone, on a saved history. */
static int
check_file(const char *path)
{
	struct hist h;
	struct hist_report r;
	int rc;

	hist_init(&h);
	if (hist_load(&h, path) != 0 || hist_check(&h, &r) != 0) {
		fprintf(stderr, "chaos: cannot check %s\n", path);
		hist_free(&h);
		return 2;
	}
	hist_report_print(&h, &r, stdout, 20);
	rc = r.violations > 0;
	hist_report_free(&r);
	hist_free(&h);
	return rc;
}

int
main(void)
{
	const char *check = getenv("SLUICE_CHAOS_CHECK");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_history_under_faults_keeps_the_rules, it_setup,
		    chaos_teardown),
	};

	if (check != NULL && *check != '\0')
		return check_file(check);
	/* before any thread: the tmpfs mounts live in our namespace */
	can_mount = chaos_private_mounts();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
