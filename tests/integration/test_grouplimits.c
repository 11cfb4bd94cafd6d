/* Limits per fair group against real servers: a per-group cap is never
 * exceeded by 8 workers holding leases (one group with a cap of its own),
 * through a kill -9 and a restart in the middle, while every group keeps
 * flowing; a group's rate holds its tasks back while another group's
 * flow; a paused group is skipped and a take waiting on it wakes when it
 * is resumed; the limits hold after a restart from the log, from a
 * snapshot and after a failover (the cap counts the taken tasks that
 * survived; an override and a pause of a group without tasks survive
 * too); bad settings are refused with their reason through libsluice,
 * the CLI and HTTP and change nothing; and the beanstalk face's reserve
 * honours a group's cap. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"
#include "it_http.h"
#include "it_node.h"

enum {
	WORKERS = 8,
	GROUPS = 3, /* a, b (its own cap), c */
	CAP = 2,    /* every group's */
	CAP_B = 3,  /* b's own */
};

static const char *const gnames[GROUPS] = { "a", "b", "c" };

/* n tasks into each of the groups, in batches, with a ttr (0: the
 * tube's). */
static void
put_groups_ttr(struct sluice_client *c, const char *tube, int n, int ngroups,
    uint64_t ttr_ms)
{
	struct sluice_batch_item items[90];

	for (int done = 0; done < n;) {
		int k = 0;

		memset(items, 0, sizeof(items));
		for (; k < 90 && done < n; done++)
			for (int g = 0; g < ngroups; g++, k++) {
				sluice_put_opts_init(&items[k].opts);
				items[k].opts.tube = tube;
				items[k].opts.group = gnames[g];
				items[k].opts.ttr_ms = ttr_ms;
				items[k].payload = gnames[g];
				items[k].len = 1;
			}
		it_rc(c, sluice_put_batch(c, items, (size_t)k), 0);
	}
}

static void
put_groups(struct sluice_client *c, const char *tube, int n, int ngroups)
{
	put_groups_ttr(c, tube, n, ngroups, 0);
}

static void
group_set(struct sluice_client *c, const char *tube, const char *group,
    unsigned set, uint32_t rate, uint32_t burst, uint32_t conc)
{
	struct sluice_limits l = { set, rate, 1000, burst, conc, 0, 0, 0 };

	it_rc(c, sluice_group_set(c, tube, group, &l, 0, NULL), 0);
}

/* ---- the cap ------------------------------------------------------------ */

struct cap_run {
	const char *url;
	_Atomic int64_t end;        /* the run's end, moved after the restart */
	atomic_int holding[GROUPS]; /* leases the workers hold now */
	atomic_int most[GROUPS];    /* the most held at once */
	atomic_uint done[GROUPS];
	struct it_errs errs;
};

static int
gindex(const char *g)
{
	for (int i = 0; g != NULL && i < GROUPS; i++)
		if (strcmp(g, gnames[i]) == 0)
			return i;
	return -1;
}

/* Takes (detached: the lease outlives a restart), holds the task a few
 * ms counted in its group, then acks it until the server has it. */
static void *
holder(void *arg)
{
	struct cap_run *r = arg;
	struct sluice_client *c = it_client_url(r->url);
	const char *tubes[] = { "gcap" };
	struct sluice_take_opts o = { tubes, 1, 100, 1, 1, 0, 0 };

	if (c == NULL) {
		it_errs_add(&r->errs, "no client");
		return NULL;
	}
	while (it_mono_ms() < atomic_load(&r->end)) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int g, h, m, rc = 0;

		if (sluice_take(c, &o, &t, &n) != 0 || n == 0) {
			sluice_task_free(t);
			it_sleep_ms(5); /* down, or nothing to take */
			continue;
		}
		if ((g = gindex(t[0].group)) < 0) {
			it_errs_add(&r->errs, "a task without its group");
			sluice_task_free(t);
			break;
		}
		h = atomic_fetch_add(&r->holding[g], 1) + 1;
		m = atomic_load(&r->most[g]);
		while (
		    h > m && !atomic_compare_exchange_weak(&r->most[g], &m, h))
			;
		it_sleep_ms(3 + rand() % 5);
		atomic_fetch_sub(&r->holding[g], 1);
		for (int i = 0; i < 400; i++) {
			rc = sluice_ack(c, t[0].id, t[0].lease, NULL, NULL);
			if (rc == 0 || rc == SLUICE_ENOTFOUND ||
			    rc == SLUICE_ESTATE || rc == SLUICE_ESTALE)
				break;
			it_sleep_ms(25);
		}
		/* gone: the ack was applied before the kill; not taken or a
		 * stale lease: its ttr ran out while the server restarted */
		if (rc != 0 && rc != SLUICE_ENOTFOUND && rc != SLUICE_ESTATE &&
		    rc != SLUICE_ESTALE)
			it_errs_add(&r->errs, "ack: %s", sluice_strerror(rc));
		atomic_fetch_add(&r->done[g], 1);
		sluice_task_free(t);
	}
	sluice_close(c);
	return NULL;
}

/* Every group a cap of 2, b one of 3 of its own, 8 workers: no group
 * ever has more than its cap held, by the workers' count and by the
 * server's, through a kill -9 and a restart in the middle; each cap is
 * reached (it is what held them), every group flows, before the kill
 * and after (the run goes on after the restart, however long that took,
 * until every task is done, at most 4 s: a task whose take's answer the
 * kill lost holds its slot until its 2 s ttr frees it, and is done
 * after). */
static void
test_group_cap_never_exceeded_across_kill(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct cap_run *r = calloc(1, sizeof(*r));
	pthread_t th[WORKERS];
	struct sluice_client *c;
	struct sluice_group_info gi;
	unsigned before[GROUPS];
	uint64_t most_server[GROUPS] = { 0 };
	const int cap[GROUPS] = { CAP, CAP_B, CAP };

	assert_non_null(r);
	it_start(s);
	c = it_client(s);
	/* a ttr of 2 s: a take whose answer the kill lost leaves its task
	 * taken until then, and its group's slot with it */
	put_groups_ttr(c, "gcap", 1000, GROUPS, 2000);
	group_set(c, "gcap", NULL, SLUICE_LIM_CONCURRENCY, 0, 0, CAP);
	group_set(c, "gcap", "b", SLUICE_LIM_CONCURRENCY, 0, 0, CAP_B);
	it_errs_init(&r->errs);
	r->url = s->url;
	atomic_store(&r->end, it_mono_ms() + 60000); /* set after the kill */
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, holder, r), 0);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 40; i++) { /* the server's counts, 1 s */
			for (int g = 0; g < GROUPS; g++) {
				if (sluice_group_show(
				        c, "gcap", gnames[g], &gi))
					continue; /* down for the restart */
				if (gi.limits.taken > most_server[g])
					most_server[g] = gi.limits.taken;
			}
			it_sleep_ms(25);
		}
		if (round == 1)
			break;
		for (int g = 0; g < GROUPS; g++)
			before[g] = atomic_load(&r->done[g]);
		it_crash_restart(s, &c);
		/* the run goes on for a while after the restart, however long
		 * the restart took */
		atomic_store(&r->end, it_mono_ms() + it_scale(4000, 1, 4000));
		/* the settings came back with the log, and the cap counts
		 * the detached leases that survived */
		it_rc(c, sluice_group_show(c, "gcap", "b", &gi), 0);
		assert_int_equal(gi.limits.concurrency, CAP_B);
		assert_true(gi.own && gi.limits.taken <= CAP_B);
		assert_int_equal(gi.every.concurrency, CAP);
	}
	/* then until the workers have done every task (none ready,
	 * delayed or taken is left), at most to the run's end */
	while (it_mono_ms() < atomic_load(&r->end)) {
		struct it_counts k = it_counts(c, "gcap");

		if (k.ready + k.delayed + k.taken == 0)
			break;
		it_sleep_ms(25);
	}
	atomic_store(&r->end, it_mono_ms());
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	it_errs_check(&r->errs);
	for (int g = 0; g < GROUPS; g++) {
		print_message("group %s: most held %d by the workers, %llu by "
		              "the server; %u done, %u before the kill\n",
		    gnames[g], atomic_load(&r->most[g]),
		    (unsigned long long)most_server[g],
		    atomic_load(&r->done[g]), before[g]);
		assert_true(atomic_load(&r->most[g]) <= cap[g]);
		assert_true(most_server[g] <= (uint64_t)cap[g]);
		assert_int_equal(atomic_load(&r->most[g]), cap[g]);
		assert_true(
		    before[g] > 0 && atomic_load(&r->done[g]) > before[g] + 5);
	}
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	free(r);
}

/* ---- the rate and the pause ---------------------------------------------- */

/* Takes (and acks) from tube `tube` for `ms`, counting by group. */
static void
drain_for(struct sluice_client *c, const char *tube, int64_t ms, unsigned *per)
{
	const char *tubes[] = { tube };
	struct sluice_take_opts o = { tubes, 1, 50, 10, 1, 0, 0 };
	int64_t end = it_mono_ms() + ms;

	while (it_mono_ms() < end) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int rc = sluice_take(c, &o, &t, &n);

		if (rc != 0 && rc != SLUICE_ETIMEDOUT)
			fail_msg("take: %s", sluice_errmsg(c));
		for (size_t i = 0; i < n; i++) {
			int g = gindex(t[i].group);

			assert_true(g >= 0);
			per[g]++;
			it_rc(c, sluice_ack(c, t[i].id, t[i].lease, NULL, NULL),
			    0);
		}
		sluice_task_free(t);
	}
}

/* Group a at 10/s (burst 2) hands out about its rate while b and c, of
 * no limit, flow at the workers' speed: a's count is within the bucket's
 * bound, the others far above it. A take -w 0 when only a has tasks and
 * no token returns nothing; one that waits is answered by a's next
 * token, well before its wait ends (a timer, not a poll). */
static void
test_group_rate(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	const char *tubes[] = { "grate" };
	struct sluice_take_opts now = { tubes, 1, 0, 1, 1, 0, 0 };
	struct sluice_take_opts wait = { tubes, 1, 5000, 1, 1, 0, 0 };
	struct sluice_client *c;
	struct sluice_task *t = NULL;
	unsigned per[GROUPS] = { 0 };
	size_t n = 0;
	int64_t run = 2000, t0, took;

	it_start(s);
	c = it_client(s);
	put_groups(c, "grate", 300, GROUPS);
	group_set(c, "grate", "a", SLUICE_LIM_RATE, 10, 2, 0);
	drain_for(c, "grate", run, per);
	print_message("in %lld ms: a %u (10/s, burst 2), b %u, c %u\n",
	    (long long)run, per[0], per[1], per[2]);
	assert_true(per[0] >= 5 && per[0] <= 2 + 10 * (run + 500) / 1000);
	assert_true(per[1] > per[0] * 3 && per[2] > per[0] * 3);
	/* only a's tasks left (b's and c's deleted) */
	it_rc(c,
	    sluice_group_set(c, "grate", "a",
	        &(struct sluice_limits) {
	            SLUICE_LIM_RATE, 2, 1000, 1, 0, 0, 0, 0 },
	        0, NULL),
	    0);
	for (int i = 0; i < 100; i++) { /* the rest of b and c */
		struct sluice_take_opts all = { tubes, 1, 0, 100, 1, 0, 0 };
		int rc = sluice_take(c, &all, &t, &n);

		if (rc != 0 && rc != SLUICE_ETIMEDOUT)
			fail_msg("take: %s", sluice_errmsg(c));
		if (rc != 0 || n == 0) {
			sluice_task_free(t);
			t = NULL;
			break;
		}
		for (size_t i = 0; i < n; i++)
			it_rc(c, sluice_ack(c, t[i].id, t[i].lease, NULL, NULL),
			    0);
		sluice_task_free(t);
		t = NULL;
	}
	it_sleep_ms(600); /* a's bucket holds its burst of 1 again */
	it_rc(c, sluice_take(c, &now, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(t[0].group, "a");
	sluice_task_free(t);
	it_rc(c, sluice_take(c, &now, &t, &n), SLUICE_ETIMEDOUT);
	t0 = it_mono_ms();
	it_rc(c, sluice_take(c, &wait, &t, &n), 0);
	took = it_mono_ms() - t0;
	assert_int_equal(n, 1);
	sluice_task_free(t);
	print_message("a take waited %lld ms for a's token\n", (long long)took);
	assert_true(took >= 200 && took < 2500);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

struct waiter {
	pthread_t th;
	const char *url;
	int rc;
	size_t n;
	char group[8];
	int64_t done_ms;
};

static void *
wait_take(void *arg)
{
	struct waiter *w = arg;
	const char *tubes[] = { "gpause" };
	struct sluice_take_opts o = { tubes, 1, 10000, 1, 1, 0, 0 };
	struct sluice_client *c = it_client_url(w->url);
	struct sluice_task *t = NULL;

	w->rc = -1;
	if (c == NULL)
		return NULL;
	w->rc = sluice_take(c, &o, &t, &w->n);
	w->done_ms = it_mono_ms();
	if (w->n == 1 && t[0].group != NULL)
		snprintf(w->group, sizeof(w->group), "%s", t[0].group);
	sluice_task_free(t);
	sluice_close(c);
	return NULL;
}

/* A paused group is skipped while the others flow; its settings show
 * it; a take waiting when only the paused group has tasks is answered
 * when it is resumed, at once. Through the CLI. */
static void
test_pause_resume(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_group_info gi;
	struct waiter w = { 0 };
	unsigned per[GROUPS] = { 0 };
	int64_t t0;

	it_start(s);
	c = it_client(s);
	put_groups(c, "gpause", 20, GROUPS);
	assert_int_equal(
	    it_sluice(s, "group", "pause", "gpause", "a", NULL), 0);
	assert_non_null(strstr(it_out, "paused        yes"));
	drain_for(c, "gpause", 500, per);
	assert_int_equal(per[0], 0);
	assert_int_equal(per[1], 20);
	assert_int_equal(per[2], 20);
	it_rc(c, sluice_group_show(c, "gpause", "a", &gi), 0);
	assert_true(gi.paused && gi.live && gi.ready == 20);
	assert_int_equal(gi.holding, 3);
	assert_int_equal(it_sluice(s, "stats", "-t", "gpause", NULL), 0);
	assert_non_null(strstr(it_out, "groups_paused"));
	assert_int_equal(
	    it_sluice(s, "tube", "show", "gpause", "--json", NULL), 0);
	assert_non_null(strstr(it_out,
	    "\"group_limits\":{\"overrides\":1,\"paused\":1,\"held\":1}}"));
	assert_int_equal(it_sluice(s, "tube", "show", "gpause", NULL), 0);
	assert_non_null(strstr(it_out, "1 with their own settings (1 paused)"));
	w.url = s->url;
	assert_int_equal(pthread_create(&w.th, NULL, wait_take, &w), 0);
	for (int i = 0; i < 400 && it_node_kv(c, "waiting_takes") != 1; i++)
		it_sleep_ms(5);
	assert_int_equal(it_node_kv(c, "waiting_takes"), 1);
	t0 = it_mono_ms();
	assert_int_equal(
	    it_sluice(s, "group", "resume", "gpause", "a", "--json", NULL), 0);
	assert_non_null(strstr(it_out, "\"paused\":false"));
	assert_int_equal(pthread_join(w.th, NULL), 0);
	assert_int_equal(w.rc, 0);
	assert_int_equal(w.n, 1);
	assert_string_equal(w.group, "a");
	print_message(
	    "woken %lld ms after the resume\n", (long long)(w.done_ms - t0));
	assert_true(w.done_ms - t0 < 2000);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- restart, snapshot, failover ----------------------------------------- */

/* How many tasks a take of up to 10 gets now, by group. */
static void
take_now(struct sluice_client *c, unsigned *per)
{
	const char *tubes[] = { "gkeep" };
	struct sluice_take_opts o = { tubes, 1, 0, 10, 1, 0, 0 };
	struct sluice_task *t = NULL;
	size_t n = 0;
	int rc = sluice_take(c, &o, &t, &n);

	memset(per, 0, GROUPS * sizeof(*per));
	if (rc != 0 && rc != SLUICE_ETIMEDOUT)
		fail_msg("take: %s", sluice_errmsg(c));
	for (size_t i = 0; i < n; i++)
		per[gindex(t[i].group)]++;
	sluice_task_free(t);
}

/* The settings are records: after a restart from the log, one from a
 * snapshot and a failover to a follower, every group's cap counts the
 * taken tasks that survived (nothing more of a full group), a rate
 * starts with its burst, and a pause and an override of a group without
 * tasks hold. */
static void
test_limits_survive_restart_and_failover(void **state)
{
	struct it_node a, b;
	struct sluice_group_info gi;
	unsigned per[GROUPS];
	uint64_t lsn;

	it_node_init(state, &a, "a");
	it_node_init(state, &b, "b");
	it_node_follows(&b, &a);
	it_node_start(&a);
	it_node_start(&b);
	put_groups(a.c, "gkeep", 20, 2); /* a and b */
	/* every group: 2 at once; a: 1 an hour, burst 3 (the cap holds
	 * first); c (no task yet): paused; b: a cap of 3 of its own */
	group_set(a.c, "gkeep", NULL, SLUICE_LIM_CONCURRENCY, 0, 0, 2);
	it_rc(a.c,
	    sluice_group_set(a.c, "gkeep", "a",
	        &(struct sluice_limits) {
	            SLUICE_LIM_RATE, 1, 3600000, 3, 0, 0, 0, 0 },
	        0, NULL),
	    0);
	group_set(a.c, "gkeep", "b", SLUICE_LIM_CONCURRENCY, 0, 0, 3);
	it_rc(a.c, sluice_group_pause(a.c, "gkeep", "c", NULL), 0);
	take_now(a.c, per);
	assert_int_equal(per[0], 2);
	assert_int_equal(per[1], 3);
	/* a restart from the log: nothing more of a or b */
	it_node_kill(&a);
	it_node_start(&a);
	take_now(a.c, per);
	assert_int_equal(per[0] + per[1], 0);
	it_rc(a.c, sluice_group_show(a.c, "gkeep", "a", &gi), 0);
	assert_int_equal(gi.limits.taken, 2);
	assert_int_equal(gi.limits.concurrency, 2);
	/* a's cap of 2: lift every group's cap; a's bucket had 3, spent
	 * 2: one more of a, then none for an hour; b's own cap of 3 holds */
	it_rc(a.c,
	    sluice_group_set(
	        a.c, "gkeep", NULL, NULL, SLUICE_LIM_CONCURRENCY, NULL),
	    0);
	take_now(a.c, per);
	assert_int_equal(per[0], 1);
	assert_int_equal(per[1], 0);
	/* from a snapshot: the bucket starts full (3 more of a), b's cap
	 * counts its 3 taken; c's pause and b's cap came back */
	it_rc(a.c, sluice_snapshot(a.c, &lsn), 0);
	it_node_kill(&a);
	it_node_start(&a);
	it_rc(a.c, sluice_group_show(a.c, "gkeep", "c", &gi), 0);
	assert_true(gi.paused && gi.own && !gi.live);
	it_rc(a.c, sluice_group_show(a.c, "gkeep", "b", &gi), 0);
	assert_int_equal(gi.limits.taken, 3);
	take_now(a.c, per);
	assert_int_equal(per[0], 3);
	assert_int_equal(per[1], 0);
	/* c gets tasks: paused, none handed out */
	put_groups(a.c, "gkeep", 2, 3);
	take_now(a.c, per);
	assert_int_equal(per[0] + per[1] + per[2], 0);
	/* a failover: the promoted follower holds the same */
	it_node_caught_up(&a, &b);
	it_node_kill(&a);
	it_rc(b.c, sluice_promote(b.c, &lsn), 0);
	it_rc(b.c, sluice_group_show(b.c, "gkeep", "b", &gi), 0);
	assert_int_equal(gi.limits.taken, 3);
	assert_int_equal(gi.limits.concurrency, 3);
	take_now(b.c, per);
	assert_int_equal(per[1] + per[2], 0);
	assert_true(per[0] <= 3); /* a's bucket: full on the follower's
	                             rebuilt state at most */
	it_rc(b.c, sluice_group_resume(b.c, "gkeep", "c", &gi), 0);
	take_now(b.c, per);
	assert_int_equal(per[2], 2);
	it_node_stop(&b, SIGTERM);
}

/* ---- bad input, HTTP, beanstalk ------------------------------------------ */

/* Each bad setting is refused with its reason and changes nothing;
 * a tube that does not exist is not made; a bad group name is EGROUP;
 * the CLI and HTTP say the same. */
static void
test_bad_input_changes_nothing(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_group_info gi;
	static char port[32];
	char *body = NULL;
	int hport = it_free_port();
	static const struct {
		struct sluice_limits l;
		const char *why;
	} bad[] = {
		{ { SLUICE_LIM_RATE, 0, 1000, 1, 0, 0, 0, 0 }, "rate of 0" },
		{ { SLUICE_LIM_RATE, 1000001, 1000, 2000, 0, 0, 0, 0 },
		    "over 1000000/s" },
		{ { SLUICE_LIM_RATE, 10, 1000, 1000001, 0, 0, 0, 0 },
		    "burst over 1000000" },
		{ { SLUICE_LIM_CONCURRENCY, 0, 0, 0, 0, 0, 0, 0 },
		    "concurrency of 0" },
	};

	snprintf(port, sizeof(port), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = port;
	s->args[2] = "--http-admin";
	s->args[3] = NULL;
	it_start(s);
	c = it_client(s);
	put_groups(c, "gbad", 1, 1);
	group_set(c, "gbad", "a", SLUICE_LIM_CONCURRENCY, 0, 0, 7);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		it_rc(c, sluice_group_set(c, "gbad", "a", &bad[i].l, 0, NULL),
		    SLUICE_EINVAL);
		if (strstr(sluice_errmsg(c), bad[i].why) == NULL)
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i,
			    sluice_errmsg(c), bad[i].why);
		it_rc(c, sluice_group_set(c, "gbad", NULL, &bad[i].l, 0, NULL),
		    SLUICE_EINVAL);
	}
	it_rc(c, sluice_group_set(c, "gbad", "a b", &bad[0].l, 0, NULL),
	    SLUICE_EGROUP);
	it_rc(c, sluice_group_pause(c, "gbad", NULL, NULL), SLUICE_EINVAL);
	it_rc(c,
	    sluice_group_set(c, "ghost", "a",
	        &(struct sluice_limits) {
	            SLUICE_LIM_CONCURRENCY, 0, 0, 0, 1, 0, 0, 0 },
	        0, NULL),
	    SLUICE_ENOTFOUND);
	assert_non_null(strstr(sluice_errmsg(c), "no such tube"));
	it_rc(c, sluice_group_show(c, "gbad", "a", &gi), 0);
	assert_int_equal(gi.limits.set, SLUICE_LIM_CONCURRENCY);
	assert_int_equal(gi.limits.concurrency, 7);
	assert_int_equal(gi.every.set, 0);
	assert_int_equal(gi.overrides, 1);
	/* the CLI */
	assert_int_equal(
	    it_sluice(s, "group", "set", "gbad", "a", "--rate", "0/s", NULL),
	    1);
	assert_non_null(strstr(it_err, "rate of 0"));
	assert_int_equal(
	    it_sluice(s, "group", "set", "gbad", "a", "--rate", "10", NULL), 2);
	assert_int_equal(it_sluice(s, "tube", "set", "gbad",
	                     "--group-concurrency", "0", NULL),
	    2);
	assert_int_equal(it_sluice(s, "tube", "set", "ghost",
	                     "--group-concurrency", "2", NULL),
	    1);
	assert_non_null(strstr(it_err, "no such tube"));
	/* HTTP */
	assert_int_equal(
	    it_http(hport, "PUT", "/v1/tubes/gbad/groups/a?rate=0/s", NULL,
	        NULL, &body),
	    400);
	assert_non_null(strstr(body, "rate of 0"));
	free(body);
	assert_int_equal(
	    it_http(hport, "PUT", "/v1/tubes/gbad/groups/a%20b?concurrency=1",
	        NULL, NULL, &body),
	    400);
	assert_non_null(strstr(body, "bad_group"));
	free(body);
	assert_int_equal(
	    it_http(hport, "PUT", "/v1/tubes/ghost/group_limits?concurrency=1",
	        NULL, NULL, &body),
	    404);
	free(body);
	body = it_http_get(hport, "/v1/tubes/gbad/groups/a", 200);
	assert_non_null(strstr(body, "\"limits\":{\"concurrency\":7}"));
	free(body);
	/* and a good one, through HTTP: every group's rate */
	assert_int_equal(it_http(hport, "PUT",
	                     "/v1/tubes/gbad/group_limits?rate=5/s&burst=2",
	                     NULL, NULL, &body),
	    200);
	assert_non_null(strstr(
	    body, "\"every_group\":{\"rate\":5,\"per_ms\":1000,\"burst\":2}"));
	free(body);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* The beanstalk face: a reserve goes through the same take: with every
 * group at a cap of 1, a watcher of the tube gets one task of each group
 * and then times out; a delete frees its group's slot. */
static void
test_beanstalk_reserve_honours_group_cap(void **state)
{
	struct bsc_node n;
	struct bsc b;
	char *r;

	bsc_node_up(state, &n);
	put_groups(n.c, "bg", 3, 2); /* ids 1 a, 2 b, 3 a, 4 b, ... */
	group_set(n.c, "bg", NULL, SLUICE_LIM_CONCURRENCY, 0, 0, 1);
	assert_int_equal(bsc_open(&b, n.port), 0);
	free(bsc_cmd(&b, "watch bg\r\n"));
	r = bsc_cmd(&b, "reserve-with-timeout 0\r\n");
	assert_true(strncmp(r, "RESERVED 1 ", 11) == 0);
	free(r);
	r = bsc_cmd(&b, "reserve-with-timeout 0\r\n");
	assert_true(strncmp(r, "RESERVED 2 ", 11) == 0);
	free(r);
	r = bsc_cmd(&b, "reserve-with-timeout 0\r\n");
	assert_string_equal(r, "TIMED_OUT\r\n");
	free(r);
	r = bsc_cmd(&b, "delete 1\r\n");
	assert_string_equal(r, "DELETED\r\n");
	free(r);
	r = bsc_cmd(&b, "reserve-with-timeout 1\r\n");
	assert_true(strncmp(r, "RESERVED 3 ", 11) == 0);
	free(r);
	bsc_close(&b);
	bsc_node_down(&n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_group_cap_never_exceeded_across_kill, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_group_rate, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_pause_resume, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_limits_survive_restart_and_failover, it_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_input_changes_nothing, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_beanstalk_reserve_honours_group_cap, it_setup,
		    it_teardown),
	};
	return cmocka_run_group_tests_name("grouplimits", tests, NULL, NULL);
}
