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
 *   - the key window (docs/scaling.md, "Keys"): a key whose task the
 *     source holds taken answers a put at the target with the id its copy
 *     gets, and after the move one task has it and the work ran once;
 *     a keyed put while the keys are pending is refused SLUICE_EMOVING,
 *     and libsluice sends it again until it is done; a mover killed after
 *     the map change leaves the source's drain to it (a source holding
 *     only a task acked since does not end the drain itself), and run
 *     again ends the move with the key's reservation; the target's mark
 *     and placeholders outlive its kill -9 and restart, from the log and
 *     from a snapshot; a move through a handle that reads the map from
 *     a node (the window opens right after the map change) holds the
 *     keys too.
 *
 * And routing right after a map change to a node behind the map for
 * over a second (a slow poll, FAULT_PAUSE_MAPWATCH): libsluice sends
 * a put, a batch's part and a take again until the node has caught up.
 *
 * test_move.c moves a tube under load and kills, and checks a copy's
 * tasks, the refusals and a plain drain. Exits 77 when `etcd` is not
 * installed. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
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
	const char *tube, *to; /* NULL: ck to c4b */
};

static void *
carry_mover(void *arg)
{
	struct carry_move *cm = arg;
	struct sluice_move_opts o = { 0 };
	struct sluice_router *r = it_move_router();

	o.timeout_ms = it_move_scaled(60000);
	o.report = carry_report;
	cm->rc = sluice_router_move(
	    r, cm->tube ? cm->tube : "ck", cm->to ? cm->to : "c4b", &o, &cm->p);
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
carry_reput_in(
    struct sluice_router *r, const char *tube, const char *key, uint64_t *id)
{
	struct sluice_put_opts o;
	struct sluice_put_result res;
	int64_t end = it_mono_ms() + it_move_scaled(5000);
	int rc;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.key = key;
	while ((rc = sluice_router_put(r, &o, "again", 5, &res)) ==
	        SLUICE_EMOVED &&
	    it_mono_ms() < end)
		it_sleep_ms(50);
	if (rc != 0)
		fail_msg("put of key %s: %s: %s", key, sluice_strerror(rc),
		    sluice_router_errmsg(r));
	if (id != NULL)
		*id = res.id;
	return res.created != 0;
}

static int
carry_reput(struct sluice_router *r, const char *key)
{
	return carry_reput_in(r, "ck", key, NULL);
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
	it_move_pair_init(state, &a, &b, "c4a", "c4b");
	r = it_move_pair_start(&a, &b, "c4a", "ck");
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

/* ---- The key window --------------------------------------------------- */

/* A client of `n` alone whose calls give up after 400 ms: a keyed put of
 * `tube` while its keys are pending there is refused, named, alone or in
 * a batch (whose unkeyed item goes in, once). */
static void
win_refused(struct it_node *n, const char *tube)
{
	struct sluice_client *c;
	struct sluice_put_opts o;
	struct sluice_batch_item it[2];
	uint64_t id;
	int64_t end = it_mono_ms() + it_move_scaled(5000);
	int created, rc;

	assert_int_equal(sluice_open(n->s->url, &c), 0);
	sluice_set_timeout(c, 400);
	sluice_put_opts_init(&o);
	o.tube = tube;
	o.key = "while-pending";
	/* the mover stopped right after the map change, which the node
	 * may not have read yet: until it does, the tube is not its own */
	while (
	    (rc = sluice_put(c, &o, "x", 1, &id, &created)) == SLUICE_EMOVED &&
	    it_mono_ms() < end)
		it_sleep_ms(20);
	it_rc(c, rc, SLUICE_EMOVING);
	if (strstr(sluice_errmsg(c), "moving in") == NULL)
		fail_msg("the refusal does not say why: %s", sluice_errmsg(c));
	o.key = NULL; /* an unkeyed put goes in */
	it_rc(c, sluice_put(c, &o, "x", 1, &id, &created), 0);
	it_rc(c, sluice_delete(c, id), 0);
	for (int i = 0; i < 2; i++) {
		sluice_put_opts_init(&it[i].opts);
		it[i].opts.tube = tube;
		it[i].opts.key = i == 0 ? "in-a-batch" : NULL;
		it[i].payload = "y";
		it[i].len = 1;
	}
	it_rc(c, sluice_put_batch(c, it, 2), 0);
	assert_int_equal(it[0].rc, SLUICE_EMOVING);
	if (strstr(it[0].errmsg, "moving in") == NULL)
		fail_msg(
		    "the item's refusal does not say why: %s", it[0].errmsg);
	assert_int_equal(it[1].rc, 0);
	assert_int_equal(it[1].created, 1);
	it_rc(c, sluice_delete(c, it[1].id), 0);
	sluice_close(c);
}

static uint64_t
win_key_id(struct sluice_client *c, const char *tube, const char *key)
{
	struct sluice_task *t = NULL;
	uint64_t id;

	it_rc(c, sluice_peek_key(c, tube, key, &t), 0);
	id = t->id;
	sluice_task_free(t);
	return id;
}

/* Takes the task of `key` in `tube` at `c` (the only ready one). */
static struct sluice_task *
win_take(struct sluice_client *c, const char *tube, const char *key)
{
	const char *tubes[] = { tube };
	struct sluice_take_opts o = { tubes, 1, 0, 1, 0, 0, 0 };
	struct sluice_task *t = NULL;
	size_t n;

	it_rc(c, sluice_take(c, &o, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].key != NULL ? strcmp(t[0].key, key) : -1, 0);
	return t;
}

/* Runs the move in a thread until it waits for the source's taken task. */
static void
win_move_until_waits(pthread_t *th, struct carry_move *cm)
{
	int64_t end = it_mono_ms() + it_move_scaled(30000);

	atomic_store(&carry_waits, 0);
	assert_int_equal(pthread_create(th, NULL, carry_mover, cm), 0);
	while (!atomic_load(&carry_waits) && it_mono_ms() < end)
		it_sleep_ms(20);
	if (!atomic_load(&carry_waits)) {
		pthread_join(*th, NULL);
		fail_msg("the move does not wait for the taken task: %s: %s",
		    sluice_strerror(cm->rc), cm->err);
	}
}

static void
win_join(pthread_t th, struct carry_move *cm)
{
	pthread_join(th, NULL);
	if (cm->rc != 0)
		fail_msg("move: %s: %s", sluice_strerror(cm->rc), cm->err);
	assert_int_equal(cm->p.done, 1);
}

/* Two keys taken at the source when the move starts: a put of each at
 * the target (the map sends puts there) answers created 0 with the id
 * its copy gets; one is acked at the source (its work ran there, once),
 * one released (copied under that id, run at the target). After the move
 * each key names that one id, and the target holds one task: the
 * released one's. On the old code the puts made two new tasks there. */
static void
test_key_of_a_taken_task_stays_one(void **state)
{
	struct it_node a, b;
	struct sluice_router *r;
	struct sluice_task *t1, *t2, *t;
	struct carry_move cm = { .tube = "kt", .to = "k6b" };
	uint64_t id1, id2, id;
	pthread_t th;

	it_move_pair_init(state, &a, &b, "k6a", "k6b");
	r = it_move_pair_start(&a, &b, "k6a", "kt");
	carry_put(a.c, "kt", "one", "job1", 10, NULL);
	carry_put(a.c, "kt", "two", "job2", 10, NULL);
	t1 = win_take(a.c, "kt", "job1");
	t2 = win_take(a.c, "kt", "job2");
	win_move_until_waits(&th, &cm);
	assert_int_equal(carry_reput_in(r, "kt", "job1", &id1), 0);
	assert_int_equal(carry_reput_in(r, "kt", "job2", &id2), 0);
	assert_int_equal(it_move_live_in(b.c, "kt"), 0);
	it_rc(a.c, sluice_ack(a.c, t1->id, t1->lease, NULL, NULL), 0);
	it_rc(a.c, sluice_release(a.c, t2->id, t2->lease, 0, -1, NULL), 0);
	win_join(th, &cm);
	assert_int_equal(it_move_live_in(a.c, "kt"), 0);
	assert_int_equal(it_move_live_in(b.c, "kt"), 1);
	assert_int_equal(win_key_id(b.c, "kt", "job2"), id2);
	assert_int_equal(carry_reput_in(r, "kt", "job1", &id), 0);
	assert_int_equal(id, id1);
	assert_int_equal(carry_reput_in(r, "kt", "job2", &id), 0);
	assert_int_equal(id, id2);
	/* the released one runs at the target, the acked one nowhere */
	t = win_take(b.c, "kt", "job2");
	assert_int_equal(t->id, id2);
	it_rc(b.c, sluice_ack(b.c, t->id, t->lease, NULL, NULL), 0);
	assert_int_equal(it_move_live_in(b.c, "kt"), 0);
	sluice_task_free(t);
	sluice_task_free(t1);
	sluice_task_free(t2);
	sluice_router_close(r);
}

struct win_put {
	struct sluice_router *r;
	const char *key; /* NULL: the batch */
	int rc, brc;
	struct sluice_put_result res;
	struct sluice_batch_item it[2]; /* a keyed item, an unkeyed one */
	atomic_int done;
};

static void *
win_putter(void *arg)
{
	struct win_put *w = arg;
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = "kw";
	o.key = w->key;
	if (w->key != NULL) {
		w->rc = sluice_router_put(w->r, &o, "again", 5, &w->res);
		atomic_store(&w->done, 1);
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		sluice_put_opts_init(&w->it[i].opts);
		w->it[i].opts.tube = "kw";
		w->it[i].opts.key = i == 0 ? "w2" : NULL;
		w->it[i].payload = "b";
		w->it[i].len = 1;
	}
	w->brc = sluice_router_put_batch(w->r, w->it, 2);
	atomic_store(&w->done, 1);
	return NULL;
}

/* The window: the mover dies right after the map change, before the
 * keys are held at the target. A keyed put there is refused
 * SLUICE_EMOVING (named; an unkeyed one goes in), and a routed keyed put
 * waits, sent again by libsluice, until the mover run again holds the
 * keys: then it answers the key's task (created 0, the id its copy
 * gets); a routed batch then sends its keyed item again, and its
 * unkeyed one is made once. On the old code the put made a second task
 * at once. */
static void
test_keyed_put_waits_for_the_keys(void **state)
{
	struct it_node a, b;
	struct sluice_router *r, *r2;
	struct carry_move cm = { .tube = "kw", .to = "k7b" };
	struct win_put w = { .key = "w1" }, wb = { .key = NULL };
	pthread_t th, pt, pb;

	it_move_pair_init(state, &a, &b, "k7a", "k7b");
	r = it_move_pair_start(&a, &b, "k7a", "kw");
	carry_put(a.c, "kw", "w", "w1", 10, NULL);
	it_move_killed_at("kw", "k7b", SLUICE_MOVE_KEYS_PENDING);
	win_refused(&b, "kw");
	r2 = it_move_router();
	w.r = r2;
	wb.r = it_move_router();
	assert_int_equal(pthread_create(&pt, NULL, win_putter, &w), 0);
	assert_int_equal(pthread_create(&pb, NULL, win_putter, &wb), 0);
	it_sleep_ms(it_move_scaled(800));
	assert_int_equal(atomic_load(&w.done), 0); /* they wait */
	assert_int_equal(atomic_load(&wb.done), 0);
	assert_int_equal(pthread_create(&th, NULL, carry_mover, &cm), 0);
	win_join(th, &cm);
	pthread_join(pt, NULL);
	pthread_join(pb, NULL);
	if (w.rc != 0)
		fail_msg("the put waited, then: %s: %s", sluice_strerror(w.rc),
		    sluice_router_errmsg(r2));
	assert_int_equal(w.res.created, 0);
	if (wb.brc != 0)
		fail_msg("the batch: %s: %s", sluice_strerror(wb.brc),
		    sluice_router_errmsg(wb.r));
	assert_int_equal(wb.it[0].rc, 0);
	assert_int_equal(wb.it[0].created, 1); /* w2 was live nowhere */
	assert_int_equal(wb.it[1].rc, 0);
	assert_int_equal(wb.it[1].created, 1);
	/* w1's copy, w2, and the unkeyed item: once */
	assert_int_equal(it_move_live_in(b.c, "kw"), 3);
	assert_int_equal(win_key_id(b.c, "kw", "w1"), w.res.id);
	assert_int_equal(win_key_id(b.c, "kw", "w2"), wb.it[0].id);
	sluice_router_close(wb.r);
	sluice_router_close(r2);
	sluice_router_close(r);
}

/* The drain's end: the mover dies right after the map change, and the
 * source holds only a taken task of the tube, acked then. The source
 * does not end the drain itself (the old code did, within a second, and
 * the key's reservation was left behind); the mover run again ends the
 * move with it: a put of the key at the target creates nothing. */
static void
test_mover_killed_before_the_keys(void **state)
{
	struct it_node a, b;
	struct sluice_router *r;
	struct sluice_cluster_map *m = NULL;
	struct carry_move cm = { .tube = "kd", .to = "k8b" };
	struct sluice_task *t;
	pthread_t th;
	size_t draining = 0;

	it_move_pair_init(state, &a, &b, "k8a", "k8b");
	r = it_move_pair_start(&a, &b, "k8a", "kd");
	carry_put(a.c, "kd", "d", "d1", 10, NULL);
	t = win_take(a.c, "kd", "d1");
	it_move_killed_at("kd", "k8b", SLUICE_MOVE_KEYS_PENDING);
	it_rc(a.c, sluice_ack(a.c, t->id, t->lease, NULL, NULL), 0);
	/* two looks of the source at its drains (one a second): the old
	 * code ended the drain at the first */
	it_sleep_ms(2000);
	assert_int_equal(sluice_router_map(r, &m), 0);
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->entries[i].prefix, "kd") == 0)
			draining = m->entries[i].ndraining;
	sluice_cluster_map_free(m);
	assert_int_equal(draining, 1);
	assert_int_equal(pthread_create(&th, NULL, carry_mover, &cm), 0);
	win_join(th, &cm);
	assert_int_equal(cm.p.keys, 1);
	assert_int_equal(carry_reput_in(r, "kd", "d1", NULL), 0);
	assert_int_equal(it_move_live_in(b.c, "kd"), 0);
	sluice_task_free(t);
	sluice_router_close(r);
}

/* The id of the placeholder of `key` in the target's log (sluice-log
 * dump), which also shows its keys pending. */
static uint64_t
win_logged_placeholder(const struct it_node *n, const char *key)
{
	static char out[1 << 20];
	char needle[64];
	const char *p;

	it_log_tool(out, sizeof(out), "dump", n->s->data, NULL);
	if (strstr(out, "MOVE_PEND") == NULL ||
	    strstr(out, "keys=pending") == NULL)
		fail_msg("no MOVE_PEND in the target's log:\n%.2000s", out);
	snprintf(needle, sizeof(needle), "key=%s id=", key);
	if ((p = strstr(out, needle)) == NULL)
		fail_msg("no placeholder of %s in the target's log:\n%.2000s",
		    key, out);
	return strtoull(p + strlen(needle), NULL, 10);
}

/* The target dies (kill -9) while the keys are pending, the mover dead
 * too, after it held them: the mark and the placeholder come back from
 * the log, then from a snapshot; the mover run again answers a put of
 * the key with that placeholder's id, and the copy gets it. */
static void
test_window_over_a_target_restart(void **state)
{
	struct it_node a, b;
	struct sluice_router *r;
	struct carry_move cm = { .tube = "kr", .to = "k9b" };
	struct sluice_task *t;
	uint64_t ph, id, lsn;
	pthread_t th;

	it_move_pair_init(state, &a, &b, "k9a", "k9b");
	r = it_move_pair_start(&a, &b, "k9a", "kr");
	carry_put(a.c, "kr", "r", "r1", 10, NULL);
	t = win_take(a.c, "kr", "r1");
	it_move_killed_at("kr", "k9b", SLUICE_MOVE_KEYS_HELD);
	it_node_kill(&b);
	ph = win_logged_placeholder(&b, "r1");
	it_node_start(&b);
	it_move_wait_writes(&b);
	win_refused(&b, "kr");
	it_rc(b.c, sluice_snapshot(b.c, &lsn), 0);
	it_node_kill(&b);
	it_node_start(&b);
	it_move_wait_writes(&b);
	win_refused(&b, "kr");
	win_move_until_waits(&th, &cm);
	assert_int_equal(carry_reput_in(r, "kr", "r1", &id), 0);
	assert_int_equal(id, ph);
	it_rc(a.c, sluice_release(a.c, t->id, t->lease, 0, -1, NULL), 0);
	win_join(th, &cm);
	assert_int_equal(it_move_live_in(b.c, "kr"), 1);
	assert_int_equal(win_key_id(b.c, "kr", "r1"), ph);
	sluice_task_free(t);
	sluice_router_close(r);
}

/* A move through a handle that reads the map from a node (not etcd): it
 * knows the target once the map names it, so the map changes first and
 * the target's window opens right after; the move still holds the keys
 * of the source's live tasks under their copies' ids. */
static void
test_move_through_a_node_map(void **state)
{
	struct it_node a, b;
	struct sluice_router *r, *rn;
	struct sluice_move_progress p;
	struct sluice_task *t;
	uint64_t id;

	it_move_pair_init(state, &a, &b, "k10a", "k10b");
	r = it_move_pair_start(&a, &b, "k10a", "kn");
	carry_put(a.c, "kn", "n", "n1", 10, NULL);
	carry_put(a.c, "kn", "m", "n2", 10, NULL);
	t = win_take(a.c, "kn", "n1");
	assert_int_equal(sluice_open_map(a.s->url, &rn), 0);
	sluice_router_set_timeout(rn, (int)it_move_scaled(IT_MOVE_ELECT_MS));
	/* the taken task acked first: the move does not wait for it */
	it_rc(a.c, sluice_ack(a.c, t->id, t->lease, NULL, NULL), 0);
	if (sluice_router_move(rn, "kn", "k10b", NULL, &p) != 0)
		fail_msg(
		    "move through a node's map: %s", sluice_router_errmsg(rn));
	assert_int_equal(p.done, 1);
	assert_int_equal(p.keys, 1);
	assert_int_equal(it_move_live_in(a.c, "kn"), 0);
	assert_int_equal(it_move_live_in(b.c, "kn"), 1);
	assert_int_equal(carry_reput_in(r, "kn", "n1", NULL), 0);
	assert_int_equal(carry_reput_in(r, "kn", "n2", &id), 0);
	assert_int_equal(win_key_id(b.c, "kn", "n2"), id);
	sluice_task_free(t);
	sluice_router_close(rn);
	sluice_router_close(r);
}

/* Node `b` behind the map: prefix "v" (tubes "v1.x", "v2.x", "v3.x")
 * set to cluster `from` through `b` itself, which knows it at once and
 * refuses a put of "v3.probe", then to `b`'s own cluster in one change
 * through etcd, while `b` (sluiced-fault, FAULT_PAUSE_MAPWATCH) holds
 * each change its poll reads for BEHIND_PAUSE_MS before it serves by it:
 * `b` refuses the three tubes for well over a second after the change.
 * One wait for it to catch up serves the three calls, sent at once
 * (behind_call). */
enum { BEHIND_PAUSE_MS = 1500 };

static void
behind_prepare(struct it_node *b, const char *from)
{
	int64_t end = it_mono_ms() + it_move_scaled(IT_MOVE_ELECT_MS);
	uint64_t rev;

	it_rc(b->c, sluice_map_set(b->c, "v", from, NULL, 0, &rev), 0);
	for (;;) {
		struct sluice_put_opts o;
		uint64_t id;
		int created;

		sluice_put_opts_init(&o);
		o.tube = "v3.probe";
		if (sluice_put(b->c, &o, "x", 1, &id, &created) ==
		    SLUICE_EMOVED)
			break;
		if (it_mono_ms() >= end)
			fail_msg("%s never refuses v3.probe: its map stays old",
			    b->s->url);
		it_sleep_ms(50);
	}
}

/* One of the calls sent at once to the node behind the map, through a
 * routing handle of its own that read the changed map: a put into
 * "v1.x", a batch put into "v2.x" and "u.x", or a take over "v3.x" and
 * "u.x". Its thread only records what came back (cmocka asserts on the
 * test's own thread). */
enum { BEHIND_PUT, BEHIND_BATCH, BEHIND_TAKE, BEHIND_CALLS };

struct behind_call {
	pthread_t th;
	int kind;
	struct sluice_router *r;
	struct sluice_batch_item items[2];
	struct sluice_task *ts;
	size_t n;
	int rc;
	char err[256];
};

static void *
behind_run(void *arg)
{
	static const char *tubes[] = { "v3.x", "u.x" };
	struct behind_call *bc = arg;
	struct sluice_put_opts po;
	struct sluice_put_result res;
	struct sluice_take_opts o = { tubes, 2, 0, 1, 0, 0, 0 };

	switch (bc->kind) {
	case BEHIND_PUT:
		sluice_put_opts_init(&po);
		po.tube = "v1.x";
		bc->rc = sluice_router_put(bc->r, &po, "p", 1, &res);
		break;
	case BEHIND_BATCH:
		for (int i = 0; i < 2; i++) {
			memset(&bc->items[i], 0, sizeof(bc->items[i]));
			sluice_put_opts_init(&bc->items[i].opts);
			bc->items[i].opts.tube = i == 0 ? "v2.x" : "u.x";
			bc->items[i].payload = "b";
			bc->items[i].len = 1;
		}
		bc->rc = sluice_router_put_batch(bc->r, bc->items, 2);
		break;
	default:
		/* v3.x's cluster first: its refusals come before u.x's task */
		bc->rc = sluice_router_take(bc->r, &o, &bc->ts, &bc->n);
		break;
	}
	if (bc->rc != 0)
		snprintf(bc->err, sizeof(bc->err), "%s (%s)",
		    sluice_strerror(bc->rc), sluice_router_errmsg(bc->r));
	return NULL;
}

/* A node behind the handle's map for longer than one of its polls (a
 * loaded machine, a slow etcd): a routed put, a batch put whose parts go
 * to both clusters and a take over tubes of both are refused SLUICE_EMOVED
 * by it again and again, and libsluice sends each again, with a backoff,
 * until the node has caught up; each succeeds. Once more after 300 ms, as
 * before, was not enough. */
static void
test_routed_while_a_node_is_behind(void **state)
{
	static const char *const names[] = { "put", "batch put", "take" };
	struct it_node a, b;
	struct sluice_router *r;
	struct behind_call calls[BEHIND_CALLS];
	struct behind_call *bt = &calls[BEHIND_TAKE];
	char pause[32];
	uint64_t rev;

	it_move_node_init(state, &a, "va", "c11a", false);
	it_move_node_init(state, &b, "vb", "c11b", false);
	b.s->prog = "sluiced-fault";
	it_node_start(&a);
	snprintf(pause, sizeof(pause), "mapwatch:%d", BEHIND_PAUSE_MS);
	setenv("SLUICE_FAULT_PAUSE", pause, 1);
	it_node_start(&b);
	unsetenv("SLUICE_FAULT_PAUSE");
	it_move_wait_writes(&a);
	it_move_wait_writes(&b);
	/* the task the take gets, put while no entry of the map covers it */
	it_put(b.c, "v3.x", "t");
	r = it_move_router();
	it_rc(b.c, sluice_map_set(b.c, "u.", "c11a", NULL, 0, &rev), 0);
	behind_prepare(&b, "c11a");

	/* the three at b's cluster in one change, each call's handle
	 * reading that map */
	assert_int_equal(
	    sluice_router_map_set(r, "v", "c11b", NULL, 0, &rev), 0);
	memset(calls, 0, sizeof(calls));
	for (int k = 0; k < BEHIND_CALLS; k++) {
		calls[k].kind = k;
		calls[k].r = it_move_router();
		assert_int_equal(sluice_router_map(calls[k].r, NULL), 0);
	}
	for (int k = 0; k < BEHIND_CALLS; k++)
		assert_int_equal(
		    pthread_create(&calls[k].th, NULL, behind_run, &calls[k]),
		    0);
	for (int k = 0; k < BEHIND_CALLS; k++)
		pthread_join(calls[k].th, NULL);
	for (int k = 0; k < BEHIND_CALLS; k++)
		if (calls[k].rc != 0)
			fail_msg("%s: %s", names[k], calls[k].err);
	assert_int_equal(calls[BEHIND_BATCH].items[0].rc, 0);
	assert_int_equal(calls[BEHIND_BATCH].items[1].rc, 0);
	assert_int_equal(it_move_live_in(b.c, "v1.x"), 1);
	assert_int_equal(it_move_live_in(b.c, "v2.x"), 1);
	assert_int_equal(it_move_live_in(a.c, "u.x"), 1);
	assert_int_equal(bt->n, 1);
	assert_string_equal(bt->ts[0].tube, "v3.x");
	assert_string_equal(bt->ts[0].cluster, "c11b");
	assert_int_equal(sluice_router_ack(bt->r, &bt->ts[0], NULL, NULL), 0);
	sluice_task_free(bt->ts);
	for (int k = 0; k < BEHIND_CALLS; k++)
		sluice_router_close(calls[k].r);
	sluice_router_close(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_move_carries_keys_groups_workflows, it_etcd_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_key_of_a_taken_task_stays_one, it_etcd_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_keyed_put_waits_for_the_keys, it_etcd_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_mover_killed_before_the_keys, it_etcd_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_window_over_a_target_restart, it_etcd_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(test_move_through_a_node_map,
		    it_etcd_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_routed_while_a_node_is_behind, it_etcd_setup,
		    it_node_teardown),
	};

	return IT_ETCD_RUN("move_carry", tests);
}
