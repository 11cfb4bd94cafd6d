/* The cluster map (docs/scaling.md) against real processes on 127.0.0.1:
 * one etcd and two clusters of one node each (--etcd, --cluster).
 *
 *   - a routing handle (sluice_open_map, given etcd's URLs or a node's)
 *     sends puts and takes of each tube to the cluster the map gives it,
 *     and acks each task where it came from; a node refuses a put of
 *     another cluster's tube with SLUICE_EMOVED naming the owner and its
 *     members, and so do its HTTP (421) and its beanstalk face;
 *   - a handle with a stale map (it never reads the map by age) is
 *     corrected by the moved error: its put lands on the new owner;
 *   - takes over tubes of both clusters, by two workers at once, get
 *     every task exactly once, and a waiting take over both gets a task
 *     put later into either; a batch spanning both is split by cluster;
 *   - a task the cancelled wait of such a take took is given back as if
 *     never taken: its attempts unchanged, its next take attempt 1;
 *   - map set and delete refuse bad input with specific errors, through
 *     the library and the CLI, and a node without --etcd has no map;
 *   - with --auth, changing the map is the admin's, reading it any
 *     role's.
 *
 * Every test clears the map first (one etcd serves the run) and stops
 * its nodes with SIGTERM at its end (two_stop). Exits 77 when `etcd` is
 * not installed. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bsc.h"
#include "etcd/etcd.h"
#include "it_etcd.h"
#include "it_hostile.h"
#include "it_http.h"
#include "it_node.h"

enum {
	WAIT_MS = 10000, /* the longest a node may take to lead, or to
	                    learn the map (x2 sanitized) */
	TASKS = 40,      /* per cluster */
	WORKERS = 2,
};

static int64_t
scaled(int64_t ms)
{
	return ms * (it_sanitized() ? 2 : 1);
}

/* Two clusters of one node: A in cluster "ca", B in "cb"; A reads the
 * whole map every `reread` (--map-reread) when not NULL. */
struct two {
	struct it_node a, b;
	int http_a, http_b;
	char http[32], http_bs[32];
	int bs_b;
	char bs[32];
};

static void
wait_leads(struct it_node *n)
{
	int64_t end = it_mono_ms() + scaled(WAIT_MS);

	while (it_mono_ms() < end) {
		if (it_node_role(n) == SLUICE_LEADER &&
		    it_put(n->c, "probe-lead", "x") != 0)
			return;
		it_sleep_ms(50);
	}
	t_srv_print_log(n->s);
	fail_msg("%s does not lead within %" PRId64 " ms", n->s->url,
	    scaled(WAIT_MS));
}

static void
two_start_reread(void **state, struct two *t, const char *reread)
{
	memset(t, 0, sizeof(*t));
	it_node_init(state, &t->a, "a");
	it_node_arg(&t->a, "--etcd", it_etcd.url);
	it_node_arg(&t->a, "--cluster", "ca");
	it_node_arg(&t->a, "--node", "a");
	if (reread != NULL)
		it_node_arg(&t->a, "--map-reread", reread);
	t->http_a = it_free_port();
	snprintf(t->http, sizeof(t->http), "127.0.0.1:%d", t->http_a);
	it_node_arg(&t->a, "--http", t->http);
	it_node_init(state, &t->b, "b");
	it_node_arg(&t->b, "--etcd", it_etcd.url);
	it_node_arg(&t->b, "--cluster", "cb");
	it_node_arg(&t->b, "--node", "b");
	t->bs_b = it_free_port();
	snprintf(t->bs, sizeof(t->bs), "127.0.0.1:%d", t->bs_b);
	it_node_arg(&t->b, "--beanstalk", t->bs);
	t->http_b = it_free_port();
	snprintf(t->http_bs, sizeof(t->http_bs), "127.0.0.1:%d", t->http_b);
	it_node_arg(&t->b, "--http", t->http_bs);
	it_node_start(&t->a);
	it_node_start(&t->b);
	wait_leads(&t->a);
	wait_leads(&t->b);
}

static void
two_start(void **state, struct two *t)
{
	two_start_reread(state, t, NULL);
}

/* Stops both nodes with SIGTERM, as an operator would: each gives up its
 * lease and leader key in etcd and exits 0. The next test's nodes of
 * "ca" and "cb" then lead at once; after a kill -9 (the teardown's) they
 * waited for the old leases to run out, seconds per test. */
static void
two_stop(struct two *t)
{
	int st = it_node_stop(&t->a, SIGTERM);

	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = it_node_stop(&t->b, SIGTERM);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Deletes every entry of the map, through etcd. */
static void
map_clear(void)
{
	struct sluice_router *r;
	struct sluice_cluster_map *m;

	assert_int_equal(sluice_open_map(it_etcd_map_url, &r), 0);
	assert_int_equal(sluice_router_map(r, &m), 0);
	for (size_t i = 0; i < m->n; i++)
		assert_int_equal(
		    sluice_router_map_delete(r, m->entries[i].prefix, NULL), 0);
	sluice_cluster_map_free(m);
	sluice_router_close(r);
}

/* Waits until node `n` serves the map at `rev` or later, with every
 * cluster it names known by its leader. */
static void
node_knows(struct it_node *n, uint64_t rev)
{
	int64_t end = it_mono_ms() + scaled(WAIT_MS);

	while (it_mono_ms() < end) {
		struct sluice_cluster_map *m = NULL;
		bool ok = false;

		if (sluice_map_read(n->c, &m) == 0 && m->revision >= rev) {
			ok = true;
			for (size_t i = 0; i < m->nclusters; i++)
				ok = ok && m->clusters[i].leader[0] != '\0';
		}
		sluice_cluster_map_free(m);
		if (ok)
			return;
		it_sleep_ms(20);
	}
	fail_msg("%s does not know map revision %" PRIu64 " within %" PRId64
	         " ms",
	    n->s->url, rev, scaled(WAIT_MS));
}

/* Sets `prefix` -> `cluster` through node `via`; both nodes then know
 * it. Returns the revision. */
static uint64_t
map_set(
    struct two *t, struct it_node *via, const char *prefix, const char *cluster)
{
	uint64_t rev = 0;
	int rc = sluice_map_set(via->c, prefix, cluster, NULL, 0, &rev);

	int64_t t0 = it_mono_ms();

	it_rc(via->c, rc, 0);
	assert_true(rev > 0);
	node_knows(&t->a, rev);
	node_knows(&t->b, rev);
	printf("map revision %" PRIu64 " known by both nodes %" PRId64
	       " ms after map_set answered\n",
	    rev, it_mono_ms() - t0);
	return rev;
}

static struct sluice_router *
router(const char *where)
{
	struct sluice_router *r;

	assert_int_equal(sluice_open_map(where, &r), 0);
	sluice_router_set_timeout(r, (int)scaled(10000));
	return r;
}

static uint64_t
router_put(struct sluice_router *r, const char *tube, const char *payload)
{
	struct sluice_put_opts o;
	struct sluice_put_result res;
	int rc;

	sluice_put_opts_init(&o);
	o.tube = tube;
	rc = sluice_router_put(r, &o, payload, strlen(payload), &res);
	if (rc != 0)
		fail_msg("put to %s: %s: %s", tube, sluice_strerror(rc),
		    sluice_router_errmsg(r));
	return res.id;
}

/* ---- routing ------------------------------------------------------------- */

static void
test_routes_by_tube(void **state)
{
	struct sluice_router *re, *rn;
	struct two t;
	char *body = NULL;
	int status, rc;
	uint64_t id;

	map_clear();
	two_start(state, &t);
	map_set(&t, &t.a, "", "ca");
	map_set(&t, &t.b, "b.", "cb");

	/* through etcd, and through a node of the other cluster */
	re = router(it_etcd_map_url);
	rn = router(t.b.s->url);
	for (int i = 0; i < TASKS / 2; i++) {
		router_put(re, "a.x", "to a");
		router_put(rn, "a.x", "to a");
		router_put(re, "b.y", "to b");
		router_put(rn, "b.y", "to b");
	}
	assert_int_equal(it_counts(t.a.c, "a.x").ready, TASKS);
	assert_int_equal(it_counts(t.b.c, "b.y").ready, TASKS);
	assert_int_equal(it_counts(t.a.c, "b.y").ready, 0);
	assert_int_equal(it_counts(t.b.c, "a.x").ready, 0);

	/* a node refuses another cluster's tube, naming the owner */
	{
		struct sluice_put_opts o;

		sluice_put_opts_init(&o);
		o.tube = "b.y";
		rc = sluice_put(t.a.c, &o, "x", 1, &id, NULL);
		assert_int_equal(rc, SLUICE_EMOVED);
		assert_non_null(strstr(sluice_errmsg(t.a.c), "cluster cb"));
	}
	/* so does its HTTP face: 421 and the owner, whose HTTP face it
	 * names (B publishes --http in etcd) in the body and in Location,
	 * which a client follows */
	{
		char want[128], loc[160];
		int64_t end = it_mono_ms() + scaled(WAIT_MS);

		snprintf(
		    want, sizeof(want), "\"http\":[\"http://%s\"]", t.http_bs);
		snprintf(loc, sizeof(loc),
		    "Location: http://%s/v1/tubes/b.h/tasks?priority=5\r\n",
		    t.http_bs);
		for (;;) {
			status = it_http(t.http_a, "POST",
			    "/v1/tubes/b.h/tasks?priority=5", NULL, "x", &body);
			assert_int_equal(status, 421);
			assert_non_null(strstr(body, "\"error\":\"moved\""));
			assert_non_null(strstr(body, "\"cluster\":\"cb\""));
			assert_non_null(strstr(body, t.b.s->url));
			if (strstr(body, want) != NULL || it_mono_ms() > end)
				break;
			free(body); /* B's member key not read by A yet */
			it_sleep_ms(50);
		}
		assert_non_null(strstr(body, want));
		assert_non_null(strstr(it_http_head(), loc));
		free(body);
		status = it_http(t.http_b, "POST",
		    "/v1/tubes/b.h/tasks?priority=5", NULL, "x", &body);
		assert_int_equal(status, 201);
		assert_non_null(strstr(body, "\"created\":true"));
		free(body);
	}
	/* and the beanstalk face of B, for a tube of A */
	{
		struct bsc bs;
		char *line;

		assert_int_equal(bsc_open(&bs, t.bs_b), 0);
		line = bsc_cmd(&bs, "use a.x\r\n");
		assert_string_equal(line, "USING a.x\r\n");
		free(line);
		line = bsc_cmd(&bs, "put 0 0 60 1\r\nx\r\n");
		assert_true(strncmp(line, "MOVED ca ", 9) == 0);
		assert_non_null(strstr(line, t.a.s->url));
		free(line);
		bsc_close(&bs);
	}

	/* takes go by tube, acks go where the task came from */
	for (int i = 0; i < 2 * TASKS; i++) {
		const char *tube = i % 2 ? "b.y" : "a.x";
		struct sluice_take_opts o = { .tubes = &tube, .ntubes = 1 };
		struct sluice_router *r = i % 3 ? re : rn;
		struct sluice_task *task;
		size_t n;

		rc = sluice_router_take(r, &o, &task, &n);
		if (rc != 0)
			fail_msg("take %d of %s: %s", i, tube,
			    sluice_router_errmsg(r));
		assert_int_equal(n, 1);
		assert_string_equal(task->cluster, i % 2 ? "cb" : "ca");
		assert_string_equal(
		    (const char *)task->payload, i % 2 ? "to b" : "to a");
		rc = sluice_router_ack(r, task, NULL, NULL);
		if (rc != 0)
			fail_msg("ack: %s", sluice_router_errmsg(r));
		sluice_task_free(task);
	}
	assert_int_equal(it_counts(t.a.c, "a.x").ready, 0);
	assert_int_equal(it_counts(t.a.c, "a.x").taken, 0);
	assert_int_equal(it_counts(t.b.c, "b.y").ready, 0);
	assert_int_equal(it_counts(t.b.c, "b.y").taken, 0);

	/* stats of both, summed */
	{
		struct sluice_router_stats *s;

		router_put(re, "a.x", "1");
		router_put(re, "b.y", "2");
		router_put(re, "b.y", "3");
		assert_int_equal(sluice_router_stats(re, NULL, &s), 0);
		assert_int_equal(s->n, 2);
		assert_int_equal(s->per[0].rc, 0);
		assert_int_equal(s->per[1].rc, 0);
		/* the probes of wait_leads count too, one per node, and
		 * the put that followed the 421's Location */
		assert_int_equal(s->ready, 3 + 2 + 1);
		sluice_router_stats_free(s);
	}
	/* the CLI by etcd: stats summed, cluster of each, take and ack */
	{
		static char out[64 << 10], err[4096];

		assert_int_equal(it_cli(it_etcd_map_url, NULL, out, sizeof(out),
		                     err, sizeof(err), "stats", "--json", NULL),
		    0);
		assert_non_null(strstr(out, "{\"ready\":6,"));
		assert_int_equal(
		    it_cli(it_etcd_map_url, NULL, out, sizeof(out), err,
		        sizeof(err), "cluster", "--json", NULL),
		    0);
		assert_non_null(strstr(out, "\"cluster\":\"ca\""));
		assert_non_null(strstr(out, "\"cluster\":\"cb\""));
		assert_int_equal(
		    it_cli(it_etcd_map_url, NULL, out, sizeof(out), err,
		        sizeof(err), "take", "-t", "b.y", "--json", NULL),
		    0);
		assert_non_null(strstr(out, "\"cluster\":\"cb\""));
		/* ack needs the cluster: ids are per cluster */
		assert_int_equal(
		    it_cli(it_etcd_map_url, NULL, out, sizeof(out), err,
		        sizeof(err), "ack", "1", "--lease", "1", NULL),
		    2);
		assert_non_null(strstr(err, "--cluster NAME"));
	}
	sluice_router_close(re);
	sluice_router_close(rn);
	two_stop(&t);
}

static void settles(struct sluice_client *c, const char *tube, uint64_t ready);

/* A handle that never reads the map by age learns of a change from the
 * moved error and puts where the map now says; with the old cluster
 * draining the tube, its old task is still handed out, first. */
static void
test_stale_map_corrected(void **state)
{
	struct sluice_router *stale, *other;
	struct sluice_cluster_map *m;
	struct two t;
	uint64_t rev;

	map_clear();
	two_start(state, &t);
	map_set(&t, &t.a, "", "ca");
	stale = router(it_etcd_map_url);
	sluice_router_set_refresh(stale, 0);
	router_put(stale, "m.t", "before");
	assert_int_equal(it_counts(t.a.c, "m.t").ready, 1);

	/* the map moves m. to cb behind the stale handle's back */
	other = router(it_etcd_map_url);
	assert_int_equal(
	    sluice_router_map_set(other, "m.", "cb", NULL, 0, &rev), 0);
	node_knows(&t.a, rev);
	node_knows(&t.b, rev);

	assert_int_equal(it_node_kv(t.a.c, "map_moved"), 0);
	router_put(stale, "m.t", "after");
	assert_int_equal(it_counts(t.a.c, "m.t").ready, 1);
	assert_int_equal(it_counts(t.b.c, "m.t").ready, 1);
	/* A refused it: the handle learned from the moved error */
	assert_int_equal(it_node_kv(t.a.c, "map_moved"), 1);
	assert_int_equal(it_node_kv(t.a.c, "map_revision"), rev);
	assert_int_equal(it_node_kv(t.a.c, "map_entries"), 2);
	assert_int_equal(sluice_router_map(stale, &m), 0);
	assert_int_equal(m->revision, rev);
	sluice_cluster_map_free(m);
	/* the old task stays where it is: A still hands it out by id... */
	{
		struct sluice_task *task = it_peek(t.a.c, 1);

		assert_non_null(task);
		sluice_task_free(task);
	}
	/* ...but takes of m.t on A are refused: it is cb's now */
	{
		const char *tube = "m.t";
		struct sluice_take_opts o = { .tubes = &tube, .ntubes = 1 };
		struct sluice_task *task;
		size_t n;

		assert_int_equal(
		    sluice_take(t.a.c, &o, &task, &n), SLUICE_EMOVED);
	}
	/* with A draining m., A hands its task out again (a routing take
	 * asks the draining cluster first), and puts go to B */
	{
		const char *dr[] = { "ca" };
		const char *tube = "m.t";
		struct sluice_take_opts o = { .tubes = &tube,
			.ntubes = 1,
			.wait_ms = (uint64_t)scaled(5000) };
		struct sluice_task *task;
		const char *want[][2] = { { "ca", "before" }, { "cb", "after" },
			{ "cb", "later" } };
		size_t n;

		assert_int_equal(
		    sluice_router_map_set(other, "m.", "cb", dr, 1, &rev), 0);
		node_knows(&t.a, rev);
		node_knows(&t.b, rev);
		router_put(stale, "m.t", "later");
		assert_int_equal(it_counts(t.b.c, "m.t").ready, 2);
		assert_int_equal(it_counts(t.a.c, "m.t").ready, 1);
		for (size_t i = 0; i < 3; i++) {
			it_rc(
			    NULL, sluice_router_take(other, &o, &task, &n), 0);
			assert_string_equal(task->cluster, want[i][0]);
			assert_string_equal(
			    (const char *)task->payload, want[i][1]);
			assert_int_equal(
			    sluice_router_ack(other, task, NULL, NULL), 0);
			sluice_task_free(task);
		}
		settles(t.a.c, "m.t", 0);
		settles(t.b.c, "m.t", 0);
	}
	sluice_router_close(other);
	sluice_router_close(stale);
	two_stop(&t);
}

/* ---- a take over both clusters ------------------------------------------- */

struct worker {
	struct sluice_router *r;
	uint64_t got[2 * TASKS]; /* (cluster b ? 1<<32 : 0) | id */
	size_t n;
	char err[256];
};

static void *
work(void *arg)
{
	struct worker *w = arg;
	const char *tubes[] = { "x.q", "y.q" };
	struct sluice_take_opts o = {
		.tubes = tubes, .ntubes = 2, .wait_ms = 200, .max = 3
	};
	int empty = 0;

	for (int round = 0; round < 1000 && empty < 3; round++) {
		struct sluice_task *t;
		size_t n;
		int rc = sluice_router_take(w->r, &o, &t, &n);

		if (rc == SLUICE_ETIMEDOUT) {
			empty++;
			continue;
		}
		if (rc != 0) {
			snprintf(w->err, sizeof(w->err), "take: %s",
			    sluice_router_errmsg(w->r));
			return NULL;
		}
		empty = 0;
		for (size_t i = 0; i < n; i++) {
			bool b = strcmp(t[i].cluster, "cb") == 0;

			if (w->n < 2 * TASKS)
				w->got[w->n++] = (b ? 1ull << 32 : 0) | t[i].id;
			if (strcmp(t[i].tube, b ? "y.q" : "x.q") != 0 ||
			    sluice_router_ack(w->r, &t[i], NULL, NULL) != 0) {
				snprintf(w->err, sizeof(w->err),
				    "task %s/%" PRIu64 " of %s: %s",
				    t[i].cluster, t[i].id, t[i].tube,
				    sluice_router_errmsg(w->r));
				sluice_task_free(t);
				return NULL;
			}
		}
		sluice_task_free(t);
	}
	return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct later {
	struct sluice_router *r;
	int64_t delay_ms;
	bool both; /* into x.q too, right before */
};

static void *
put_later(void *arg)
{
	struct later *l = arg;

	it_sleep_ms(l->delay_ms);
	if (l->both)
		router_put(l->r, "x.q", "late");
	router_put(l->r, "y.q", "late");
	return NULL;
}

/* Waits until `tube` on `c` holds `ready` ready tasks and none taken. */
static void
settles(struct sluice_client *c, const char *tube, uint64_t ready)
{
	int64_t end = it_mono_ms() + scaled(WAIT_MS);
	struct it_counts k;

	do {
		k = it_counts(c, tube);
		if (k.ready == ready && k.taken == 0)
			return;
		it_sleep_ms(20);
	} while (it_mono_ms() < end);
	fail_msg("%s: %" PRIu64 " ready, %" PRIu64 " taken; want %" PRIu64
	         " ready, none taken",
	    tube, k.ready, k.taken, ready);
}

static void
test_take_across_clusters(void **state)
{
	struct sluice_batch_item items[2 * TASKS];
	struct worker w[WORKERS];
	pthread_t th[WORKERS];
	struct sluice_router *r;
	uint64_t all[2 * TASKS];
	size_t total = 0;
	struct two t;

	map_clear();
	two_start(state, &t);
	map_set(&t, &t.a, "x.", "ca");
	map_set(&t, &t.b, "y.", "cb");
	r = router(t.a.s->url);

	/* one batch over both clusters: one commit on each */
	for (int i = 0; i < 2 * TASKS; i++) {
		sluice_put_opts_init(&items[i].opts);
		items[i].opts.tube = i % 2 ? "y.q" : "x.q";
		items[i].payload = "p";
		items[i].len = 1;
	}
	assert_int_equal(sluice_router_put_batch(r, items, 2 * TASKS), 0);
	for (int i = 0; i < 2 * TASKS; i++) {
		assert_int_equal(items[i].rc, 0);
		assert_true(items[i].id > 0);
	}
	assert_int_equal(it_counts(t.a.c, "x.q").ready, TASKS);
	assert_int_equal(it_counts(t.b.c, "y.q").ready, TASKS);

	memset(w, 0, sizeof(w));
	for (int i = 0; i < WORKERS; i++) {
		w[i].r = router(i ? it_etcd_map_url : t.b.s->url);
		assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(th[i], NULL);
		if (w[i].err[0])
			fail_msg("worker %d: %s", i, w[i].err);
		memcpy(all + total, w[i].got, w[i].n * sizeof(all[0]));
		total += w[i].n;
		sluice_router_close(w[i].r);
	}
	/* every task once: ids per cluster, none twice, none missing */
	assert_int_equal(total, 2 * TASKS);
	qsort(all, total, sizeof(all[0]), cmp_u64);
	for (size_t i = 1; i < total; i++)
		assert_true(all[i] != all[i - 1]);
	for (int c = 0; c < 2; c++) {
		size_t n = 0;

		for (size_t i = 0; i < total; i++)
			n += (all[i] >> 32) == (uint64_t)c;
		assert_int_equal(n, TASKS);
	}
	assert_int_equal(it_counts(t.a.c, "x.q").ready, 0);
	assert_int_equal(it_counts(t.a.c, "x.q").taken, 0);
	assert_int_equal(it_counts(t.b.c, "y.q").ready, 0);
	assert_int_equal(it_counts(t.b.c, "y.q").taken, 0);

	/* a waiting take over both gets a task put later into either */
	{
		const char *tubes[] = { "x.q", "y.q" };
		struct sluice_take_opts o = { .tubes = tubes,
			.ntubes = 2,
			.wait_ms = (uint64_t)scaled(5000) };
		struct later l = { router(it_etcd_map_url), 300, false };
		struct sluice_task *task;
		int64_t t0 = it_mono_ms();
		pthread_t p;
		size_t n;
		int rc;

		assert_int_equal(pthread_create(&p, NULL, put_later, &l), 0);
		rc = sluice_router_take(r, &o, &task, &n);
		pthread_join(p, NULL);
		if (rc != 0)
			fail_msg("waiting take: %s", sluice_router_errmsg(r));
		assert_string_equal(task->cluster, "cb");
		assert_string_equal((const char *)task->payload, "late");
		assert_int_equal(sluice_router_ack(r, task, NULL, NULL), 0);
		sluice_task_free(task);
		printf("a take waiting on both clusters got a task put 300 ms "
		       "later after %" PRId64 " ms\n",
		    it_mono_ms() - t0);

		/* both at once: one is returned, the other wait's task (if it
		 * took one) is released at once, never returned */
		for (int round = 0; round < 5; round++) {
			struct sluice_task *second;
			const char *other;

			l.both = true;
			l.delay_ms = 100;
			assert_int_equal(
			    pthread_create(&p, NULL, put_later, &l), 0);
			rc = sluice_router_take(r, &o, &task, &n);
			pthread_join(p, NULL);
			if (rc != 0)
				fail_msg("waiting take: %s",
				    sluice_router_errmsg(r));
			assert_int_equal(n, 1);
			assert_int_equal(
			    sluice_router_ack(r, task, NULL, NULL), 0);
			other =
			    strcmp(task->cluster, "ca") == 0 ? "y.q" : "x.q";
			sluice_task_free(task);
			settles(strcmp(other, "x.q") == 0 ? t.a.c : t.b.c,
			    other, 1);
			o.wait_ms = 0;
			rc = sluice_router_take(r, &o, &second, &n);
			if (rc != 0)
				fail_msg("the other task: %s",
				    sluice_router_errmsg(r));
			assert_string_equal(second->tube, other);
			assert_int_equal(
			    sluice_router_ack(r, second, NULL, NULL), 0);
			sluice_task_free(second);
			o.wait_ms = (uint64_t)scaled(5000);
			settles(t.a.c, "x.q", 0);
			settles(t.b.c, "y.q", 0);
		}
		sluice_router_close(l.r);
	}
	sluice_router_close(r);
	two_stop(&t);
}

/* The tube's take counter on `c`. */
static uint64_t
takes_of(struct sluice_client *c, const char *tube)
{
	struct sluice_stats *st = NULL;
	uint64_t v = 0;

	it_rc(c, sluice_stats(c, tube, &st), 0);
	assert_int_equal(st->ntubes, 1);
	assert_int_equal(
	    sluice_kv_get(st->tubes[0].kv, st->tubes[0].nkv, "takes", &v), 0);
	sluice_stats_free(st);
	return v;
}

static void
test_cancelled_wait_untakes(void **state)
{
	struct sluice_router *r;
	int loser_took = 0;
	struct two t;

	map_clear();
	two_start(state, &t);
	map_set(&t, &t.a, "x.", "ca");
	map_set(&t, &t.b, "y.", "cb");
	/* A task due on each cluster at the same time, after the take began
	 * to wait on both: the first one comes back, and the other wait most
	 * often takes the other one before it is cancelled. That one is given
	 * back as if never taken: attempts 0, and the next take is attempt 1
	 * (the history of the task shows no attempt nobody made). The
	 * cancelled wait may still be in its last slice when the winner
	 * returns (the other node can make its task ready a little later),
	 * so each round closes its routing handle, which joins that wait,
	 * before it looks at the other task. */
	for (int round = 0; round < 5; round++) {
		char tx[16], ty[16];
		const char *tubes[] = { tx, ty };
		struct sluice_take_opts o = { .tubes = tubes,
			.ntubes = 2,
			.wait_ms = (uint64_t)scaled(5000) };
		struct sluice_task *task, *peek, *second;
		struct sluice_put_opts po;
		struct sluice_client *oc;
		const char *other;
		uint64_t ids[2];
		size_t n;
		int rc;

		r = router(t.a.s->url);
		snprintf(tx, sizeof(tx), "x.u%d", round);
		snprintf(ty, sizeof(ty), "y.u%d", round);
		sluice_put_opts_init(&po);
		po.delay_ms = (uint64_t)scaled(300);
		po.tube = tx;
		ids[0] = it_put_o(t.a.c, &po, "x");
		po.tube = ty;
		ids[1] = it_put_o(t.b.c, &po, "y");
		rc = sluice_router_take(r, &o, &task, &n);
		if (rc != 0)
			fail_msg("waiting take: %s", sluice_router_errmsg(r));
		assert_int_equal(n, 1);
		assert_int_equal(task->attempts, 1);
		assert_int_equal(sluice_router_ack(r, task, NULL, NULL), 0);
		other = strcmp(task->cluster, "ca") == 0 ? ty : tx;
		oc = other == tx ? t.a.c : t.b.c;
		sluice_task_free(task);
		sluice_router_close(r); /* the cancelled wait is over */
		settles(oc, other, 1);
		loser_took += takes_of(oc, other) > 0;
		it_rc(oc, sluice_peek(oc, ids[other == ty], &peek), 0);
		if (peek->attempts != 0)
			fail_msg(
			    "round %d: the task a cancelled wait took on %s "
			    "came back with %" PRIu32 " attempts, not 0",
			    round, other, peek->attempts);
		sluice_task_free(peek);
		o.wait_ms = 0;
		r = router(t.a.s->url);
		rc = sluice_router_take(r, &o, &second, &n);
		if (rc != 0)
			fail_msg("the other task: %s", sluice_router_errmsg(r));
		assert_string_equal(second->tube, other);
		assert_int_equal(second->attempts, 1);
		assert_int_equal(sluice_router_ack(r, second, NULL, NULL), 0);
		sluice_task_free(second);
		sluice_router_close(r);
	}
	printf("the cancelled wait took the other task in %d of 5 rounds\n",
	    loser_took);
	/* else this test tells nothing: the race it needs never happened */
	assert_true(loser_took > 0);
	two_stop(&t);
}

/* ---- bad input ----------------------------------------------------------- */

static void
test_map_bad_input(void **state)
{
	const char *nine[9] = { "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8",
		"d9" };
	const char *twice[2] = { "d1", "d1" };
	const char *self[1] = { "c2" };
	struct sluice_router *re;
	struct t_srv *plain;
	struct sluice_client *pc;
	struct sluice_cluster_map *m;
	struct two t;
	int rc;

	map_clear();
	two_start_reread(state, &t, "1s"); /* the edit by hand, below */
	rc = sluice_map_set(t.a.c, "bad tube", "c2", NULL, 0, NULL);
	it_rc(t.a.c, rc, SLUICE_ETUBE);
	rc = sluice_map_set(t.a.c, "ok", "bad name", NULL, 0, NULL);
	it_rc(t.a.c, rc, SLUICE_EINVAL);
	assert_non_null(strstr(sluice_errmsg(t.a.c), "not a cluster's name"));
	rc = sluice_map_set(t.a.c, "ok", "c2", self, 1, NULL);
	it_rc(t.a.c, rc, SLUICE_EINVAL);
	assert_non_null(strstr(sluice_errmsg(t.a.c), "both the owner"));
	rc = sluice_map_set(t.a.c, "ok", "c2", twice, 2, NULL);
	it_rc(t.a.c, rc, SLUICE_EINVAL);
	assert_non_null(strstr(sluice_errmsg(t.a.c), "named twice"));
	rc = sluice_map_set(t.a.c, "ok", "c2", nine, 9, NULL);
	it_rc(t.a.c, rc, SLUICE_ELIMIT);
	rc = sluice_map_delete(t.a.c, "nothere", NULL);
	it_rc(t.a.c, rc, SLUICE_ENOTFOUND);
	assert_non_null(
	    strstr(sluice_errmsg(t.a.c), "no entry for prefix 'nothere'"));
	/* nothing of it reached the map */
	assert_int_equal(sluice_map_read(t.a.c, &m), 0);
	assert_int_equal(m->n, 0);
	sluice_cluster_map_free(m);

	/* through etcd directly, the same checks */
	re = router(it_etcd_map_url);
	assert_int_equal(
	    sluice_router_map_set(re, "bad tube", "c2", NULL, 0, NULL),
	    SLUICE_ETUBE);
	assert_int_equal(sluice_router_map_set(re, "ok", "c 2", NULL, 0, NULL),
	    SLUICE_EINVAL);
	assert_int_equal(
	    sluice_router_map_delete(re, "nothere", NULL), SLUICE_ENOTFOUND);
	/* a tube no entry maps: with etcd's URLs there is no default */
	{
		struct sluice_put_opts o;

		sluice_put_opts_init(&o);
		o.tube = "orphan";
		assert_int_equal(
		    sluice_router_put(re, &o, "x", 1, NULL), SLUICE_EMOVED);
		assert_non_null(strstr(sluice_router_errmsg(re), "no default"));
	}
	sluice_router_close(re);

	/* the CLI says which */
	assert_int_equal(
	    it_sluice(t.a.s, "map", "set", "bad tube", "c2", NULL), 1);
	assert_non_null(strstr(it_err, "bad tube name"));
	assert_int_equal(
	    it_sluice(t.a.s, "map", "set", "x", "c2", "extra", NULL), 2);
	assert_int_equal(it_sluice(t.a.s, "map", "delete", "nothere", NULL), 1);
	assert_non_null(strstr(it_err, "no entry for prefix 'nothere'"));
	assert_int_equal(it_sluice(t.a.s, "map", "set", "''", "ca", NULL), 1);
	assert_int_equal(it_sluice(t.a.s, "map", "set", "", "ca", NULL), 0);
	assert_non_null(strstr(it_out, "mapped '' to ca, revision "));
	assert_int_equal(it_sluice(t.a.s, "map", "show", "--json", NULL), 0);
	assert_non_null(strstr(it_out,
	    "{\"prefix\":\"\",\"cluster\":\"ca\",\"draining\""
	    ":[]}"));

	/* an edit by hand, without the marker, is read within a full read
	 * (--map-reread: 5 s by default, 1 s here); a value that is not an
	 * entry is left out, and logged once, not at each full read */
	{
		static const char good[] = "{\"cluster\":\"cb\"}";
		char err[256];
		struct etcd *e = etcd_new(it_etcd.url, 2000, err, sizeof(err));
		int64_t end = it_mono_ms() + scaled(WAIT_MS);
		bool seen = false;

		assert_non_null(e);
		assert_int_equal(
		    etcd_put(e, "/sluice-map/tubes/hand.", "not json", 8, 0),
		    0);
		assert_int_equal(etcd_put(e, "/sluice-map/tubes/good.", good,
		                     sizeof(good) - 1, 0),
		    0);
		while (!seen && it_mono_ms() < end) {
			it_sleep_ms(50);
			assert_int_equal(sluice_map_read(t.a.c, &m), 0);
			for (size_t i = 0; i < m->n; i++) {
				assert_string_not_equal(
				    m->entries[i].prefix, "hand.");
				seen = seen ||
				    strcmp(m->entries[i].prefix, "good.") == 0;
			}
			sluice_cluster_map_free(m);
		}
		assert_true(seen);
		assert_int_equal(it_log_count(t.a.s,
		                     "entries left out of the "
		                     "map n=1"),
		    1);
		assert_int_equal(
		    etcd_del(e, "/sluice-map/tubes/hand.", NULL), 0);
		etcd_delete(e);
	}

	/* a node without --etcd has no map */
	plain = it_srv(*state, "plain");
	it_start(plain);
	pc = it_client(plain);
	rc = sluice_map_read(pc, &m);
	it_rc(pc, rc, SLUICE_ESTATE);
	assert_non_null(strstr(sluice_errmsg(pc), "without --etcd"));
	rc = sluice_map_set(pc, "", "ca", NULL, 0, NULL);
	it_rc(pc, rc, SLUICE_ESTATE);
	sluice_close(pc);
	two_stop(&t);
}

/* With --auth, changing the map is the admin's; reading it, any role's,
 * whatever its tubes. */
static void
test_map_needs_admin(void **state)
{
	static const char *const lines[][2] = {
		{ "adm-secret", "ops admin *" },
		{ "work-secret", "mailworker worker emails*" },
		{ "mon-secret", "prom monitor *" },
	};
	struct it_node n;
	struct sluice_cluster_map *m;
	char file[600];
	uint64_t rev;
	FILE *f;
	int rc;

	map_clear();
	snprintf(file, sizeof(file), "%s", t_path(*state, "tokens"));
	assert_non_null(f = fopen(file, "w"));
	for (size_t i = 0; i < 3; i++) {
		fprintf(f, "%s ", lines[i][1]);
		it_hostile_hash(f, lines[i][0]);
		fputc('\n', f);
	}
	assert_int_equal(fclose(f), 0);
	it_node_init(state, &n, "auth");
	it_node_arg(&n, "--etcd", it_etcd.url);
	it_node_arg(&n, "--cluster", "ca");
	it_node_arg(&n, "--node", "auth");
	it_node_arg(&n, "--auth", file);
	it_node_start(&n);
	it_rc(n.c, sluice_set_token(n.c, "adm-secret"), 0);
	wait_leads(&n);
	it_rc(n.c, sluice_set_token(n.c, "work-secret"), 0);
	rc = sluice_map_set(n.c, "", "ca", NULL, 0, NULL);
	it_rc(n.c, rc, SLUICE_EPERM);
	it_rc(n.c, sluice_set_token(n.c, "mon-secret"), 0);
	rc = sluice_map_delete(n.c, "x", NULL);
	it_rc(n.c, rc, SLUICE_EPERM);
	it_rc(n.c, sluice_set_token(n.c, "adm-secret"), 0);
	rc = sluice_map_set(n.c, "", "ca", NULL, 0, &rev);
	it_rc(n.c, rc, 0);
	node_knows(&n, rev);
	/* a worker limited to emails* reads the whole map */
	it_rc(n.c, sluice_set_token(n.c, "work-secret"), 0);
	it_rc(n.c, sluice_map_read(n.c, &m), 0);
	assert_int_equal(m->revision, rev);
	assert_int_equal(m->n, 1);
	sluice_cluster_map_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_routes_by_tube, it_etcd_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_stale_map_corrected, it_etcd_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_take_across_clusters, it_etcd_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(test_cancelled_wait_untakes,
		    it_etcd_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_map_bad_input, it_etcd_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_map_needs_admin, it_etcd_setup, it_node_teardown),
	};

	return IT_ETCD_RUN("clustermap", tests);
}
