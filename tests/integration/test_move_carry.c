/* What a move of a tube carries besides the tasks it copies
 * (`sluice_router_move`, docs/scaling.md, "What a move carries"), against
 * real processes on 127.0.0.1: one etcd (it_etcd) and two clusters of one
 * node each (it_move).
 *
 *   - key reservations: the keys of tasks acked at the source before the
 *     move, and of a task taken there before the move and acked while it
 *     runs, answer a put at the target (created 0), during the move and
 *     after it, over a kill -9 of the source's node in the middle; a task
 *     released there while the move runs is copied with its key;
 *   - group settings: every group's limits, a group's own limits and a
 *     paused group with no task are the same at the target;
 *   - a workflow under way at the source (a parent, two children waiting
 *     for it, a child in the tube waiting for a parent in another tube)
 *     holds the move back: each task runs exactly once, each child after
 *     its parent with its result, taken through the map while the tube
 *     drains; then the rest moves and the move ends by itself.
 *
 * test_move.c moves a tube under load and kills, and checks a copy's
 * tasks, the refusals and a plain drain. Exits 77 when `etcd` is not
 * installed. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "it_etcd.h"
#include "it_move.h"

enum { CARRY_DONE = 50, CARRY_PLAIN = 20 };

static atomic_int carry_waits;

static void
carry_report(void *arg, const struct sluice_move_progress *p)
{
	(void)arg;
	if (p->waits > 0)
		atomic_store(&carry_waits, 1);
}

struct carry_move {
	struct sluice_move_progress p;
	int rc;
	char err[256];
};

static void *
carry_mover(void *arg)
{
	struct carry_move *cm = arg;
	struct sluice_move_opts o = { 0 };
	struct sluice_router *r = it_move_router();

	o.timeout_ms = it_move_scaled(60000);
	o.report = carry_report;
	cm->rc = sluice_router_move(r, "ck", "c4b", &o, &cm->p);
	snprintf(cm->err, sizeof(cm->err), "%s", sluice_router_errmsg(r));
	sluice_router_close(r);
	return NULL;
}

static uint64_t
carry_put(struct sluice_client *c, const char *tube, const char *pl,
    const char *key, uint32_t pri, const uint64_t *after)
{
	struct sluice_put_opts o;
	uint64_t id = 0;
	int created = 0;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.key = key;
	o.priority = pri;
	if (after != NULL) {
		o.after = after;
		o.nafter = 1;
	}
	it_rc(c, sluice_put(c, &o, pl, strlen(pl), &id, &created), 0);
	return id;
}

/* A put of `key` through the map: 1 when it made a task. A node that has
 * not yet read the map's last change refuses it (EMOVED) for up to a
 * poll of the map: it is sent again then, for a few seconds at most. */
static int
carry_reput(struct sluice_router *r, const char *key)
{
	struct sluice_put_opts o;
	struct sluice_put_result res;
	int64_t end = it_mono_ms() + it_move_scaled(5000);
	int rc;

	sluice_put_opts_init(&o);
	o.tube = "ck";
	o.key = key;
	while ((rc = sluice_router_put(r, &o, "again", 5, &res)) ==
	        SLUICE_EMOVED &&
	    it_mono_ms() < end)
		it_sleep_ms(50);
	if (rc != 0)
		fail_msg("put of key %s: %s: %s", key, sluice_strerror(rc),
		    sluice_router_errmsg(r));
	return res.created != 0;
}

static void
carry_groups(struct sluice_client *c)
{
	struct sluice_limits l;

	memset(&l, 0, sizeof(l));
	l.set = SLUICE_LIM_CONCURRENCY;
	l.concurrency = 5;
	it_rc(c, sluice_group_set(c, "ck", NULL, &l, 0, NULL), 0);
	l.concurrency = 2;
	it_rc(c, sluice_group_set(c, "ck", "gA", &l, 0, NULL), 0);
	it_rc(c, sluice_group_pause(c, "ck", "gB", NULL), 0);
}

/* The workflow's tasks, by payload: P, then C1 and C2 after it; Q in
 * tube "wq", C3 in "ck" after it. */
static const char *const carry_wf[] = { "P", "C1", "C2", "Q", "C3" };

static int
carry_wf_of(const struct sluice_task *t)
{
	for (int i = 0; i < 5; i++)
		if (t->payload_len == strlen(carry_wf[i]) &&
		    memcmp(t->payload, carry_wf[i], t->payload_len) == 0)
			return i;
	return -1;
}

/* Runs the workflow through the map (its takes ask the draining source
 * first): each task once, a child after its parent and with its result. */
static void
carry_run_workflow(struct sluice_router *r)
{
	const char *tubes[] = { "ck", "wq" };
	struct sluice_take_opts o = { tubes, 2, 200, 1, 0, 0, 0 };
	int taken[5] = { 0 }, acked[5] = { 0 }, left = 5;
	int64_t end = it_mono_ms() + it_move_scaled(30000);

	while (left > 0 && it_mono_ms() < end) {
		struct sluice_ack_opts ao = { NULL, NULL };
		struct sluice_task *t = NULL;
		size_t n = 0;
		int w;

		if (sluice_router_take(r, &o, &t, &n) != 0 || n == 0)
			continue;
		w = carry_wf_of(&t[0]);
		if (w < 0 || w >= 5) {
			fail_msg("a task of the tube came before the "
			         "workflow's: %.*s",
			    (int)t[0].payload_len, (const char *)t[0].payload);
			return;
		}
		taken[w]++;
		if (w == 1 || w == 2 || w == 4) {
			int parent = w == 4 ? 3 : 0;

			assert_int_equal(acked[parent], 1);
			assert_int_equal(t[0].nparents, 1);
			assert_non_null(t[0].parents[0].result);
			assert_string_equal(
			    t[0].parents[0].result, carry_wf[parent]);
		}
		ao.result = carry_wf[w];
		assert_int_equal(sluice_router_ack(r, &t[0], &ao, NULL), 0);
		acked[w]++;
		left--;
		sluice_task_free(t);
	}
	for (int i = 0; i < 5; i++) {
		if (taken[i] != 1)
			fail_msg("workflow task %s taken %d times", carry_wf[i],
			    taken[i]);
		assert_int_equal(acked[i], 1);
	}
}

static void
test_move_carries_keys_groups_workflows(void **state)
{
	struct it_node a, b;
	struct sluice_router *r;
	struct sluice_group_info gi;
	struct carry_move cm;
	struct sluice_task *ts = NULL, *live1 = NULL, *rel1 = NULL;
	const char *tubes[] = { "ck" };
	struct sluice_take_opts o = { tubes, 1, 0, 1, 0, 0, 0 };
	uint64_t rev, p, q;
	size_t n;
	int64_t end;
	pthread_t th;
	char key[32];
	int made = 0;

	memset(&cm, 0, sizeof(cm));
	atomic_store(&carry_waits, 0);
	it_move_node_init(state, &a, "ca4", "c4a", false);
	it_move_node_init(state, &b, "cb4", "c4b", false);
	it_node_start(&a);
	it_node_start(&b);
	it_move_wait_writes(&a);
	it_move_wait_writes(&b);
	r = it_move_router();
	assert_int_equal(
	    sluice_router_map_set(r, "ck", "c4a", NULL, 0, &rev), 0);
	assert_int_equal(
	    sluice_router_map_set(r, "wq", "c4a", NULL, 0, &rev), 0);
	for (int i = 0; i < CARRY_PLAIN; i++) {
		snprintf(key, sizeof(key), "p%d", i);
		carry_put(a.c, "ck", key, key, 1024, NULL);
	}
	carry_groups(a.c);
	/* keys acked before the move: reserved for the dedup window */
	for (int i = 0; i < CARRY_DONE; i++) {
		snprintf(key, sizeof(key), "done%d", i);
		carry_put(a.c, "ck", key, key, 10, NULL);
		it_rc(a.c, sluice_take(a.c, &o, &ts, &n), 0);
		it_rc(
		    a.c, sluice_ack(a.c, ts[0].id, ts[0].lease, NULL, NULL), 0);
		sluice_task_free(ts);
	}
	/* taken before the move: one acked, one released while it runs */
	carry_put(a.c, "ck", "live1", "live1", 10, NULL);
	carry_put(a.c, "ck", "rel1", "rel1", 10, NULL);
	it_rc(a.c, sluice_take(a.c, &o, &live1, &n), 0);
	it_rc(a.c, sluice_take(a.c, &o, &rel1, &n), 0);
	/* the workflow */
	p = carry_put(a.c, "ck", "P", NULL, 0, NULL);
	carry_put(a.c, "ck", "C1", NULL, 0, &p);
	carry_put(a.c, "ck", "C2", NULL, 0, &p);
	q = carry_put(a.c, "wq", "Q", NULL, 0, NULL);
	carry_put(a.c, "ck", "C3", NULL, 0, &q);

	assert_int_equal(pthread_create(&th, NULL, carry_mover, &cm), 0);
	end = it_mono_ms() + it_move_scaled(30000);
	while (!atomic_load(&carry_waits) && it_mono_ms() < end)
		it_sleep_ms(20);
	if (!atomic_load(&carry_waits)) {
		pthread_join(th, NULL);
		fail_msg("the move does not wait for the workflow: %s: %s "
		         "(%" PRIu64 " copied)",
		    sluice_strerror(cm.rc), cm.err, cm.p.copied);
	}
	/* the move waits for the workflow; its keys are reserved at the
	 * target already: a put there makes nothing */
	assert_int_equal(carry_reput(r, "done7"), 0);
	it_rc(a.c, sluice_ack(a.c, live1->id, live1->lease, NULL, NULL), 0);
	it_rc(a.c, sluice_release(a.c, rel1->id, rel1->lease, 0, -1, NULL), 0);
	/* the source's node dies and comes back: the move goes on */
	it_node_kill(&a);
	it_node_start(&a);
	it_move_wait_writes(&a);
	carry_run_workflow(r);
	pthread_join(th, NULL);
	if (cm.rc != 0)
		fail_msg("move: %s: %s", sluice_strerror(cm.rc), cm.err);
	printf("moved with the workflow: %" PRIu64 " tasks, %" PRIu64
	       " keys, %" PRIu64 " groups, %" PRIu64 " waits\n",
	    cm.p.copied, cm.p.keys, cm.p.groups, cm.p.waits);
	assert_int_equal(cm.p.done, 1);
	assert_int_equal(cm.p.groups, 2);
	assert_int_equal(cm.p.keys, CARRY_DONE + 1);
	assert_int_equal(it_move_live_in(a.c, "ck"), 0);
	assert_int_equal(it_move_live_in(b.c, "ck"), CARRY_PLAIN + 1);

	/* every key stays unique: acked before, acked during, released and
	 * copied, copied */
	for (int i = 0; i < CARRY_DONE; i++) {
		snprintf(key, sizeof(key), "done%d", i);
		made += carry_reput(r, key);
	}
	made += carry_reput(r, "live1");
	made += carry_reput(r, "rel1");
	for (int i = 0; i < CARRY_PLAIN; i++) {
		snprintf(key, sizeof(key), "p%d", i);
		made += carry_reput(r, key);
	}
	assert_int_equal(made, 0);
	assert_int_equal(it_move_live_in(b.c, "ck"), CARRY_PLAIN + 1);

	/* the groups' settings are the target's */
	it_rc(b.c, sluice_group_show(b.c, "ck", NULL, &gi), 0);
	assert_true((gi.every.set & SLUICE_LIM_CONCURRENCY) != 0);
	assert_int_equal(gi.every.concurrency, 5);
	assert_int_equal(gi.overrides, 2);
	assert_int_equal(gi.paused_groups, 1);
	it_rc(b.c, sluice_group_show(b.c, "ck", "gA", &gi), 0);
	assert_true(gi.own);
	assert_int_equal(gi.own_limits.concurrency, 2);
	it_rc(b.c, sluice_group_show(b.c, "ck", "gB", &gi), 0);
	assert_true(gi.paused);
	sluice_task_free(live1);
	sluice_task_free(rel1);
	sluice_router_close(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_move_carries_keys_groups_workflows, it_etcd_setup,
		    it_node_teardown),
	};

	return IT_ETCD_RUN("move_carry", tests);
}
