/* The cluster as an operator reads it, through a real etcd: three sluiced
 * nodes n1, n2, n3 on 127.0.0.1 with --etcd, --sync-replicas 1 and
 * --http.
 *
 *   - `sluice cluster` (the library's sluice_cluster, and GET /v1/cluster)
 *     never contradicts itself, read over and over right after the start
 *     and right after a switchover: the member the header names leader is
 *     the one row that says leader;
 *   - the leader's stats name its followers by their --node names
 *     (follower_n2_acked_lsn), and so does /metrics (follower="n2"), not
 *     by a position;
 *   - a follower killed (-9) shows as down within a bounded time, and
 *     stays listed as down after its key is gone from etcd (a TTL later);
 *     `sluice cluster` prints it "down";
 *   - the dashboard's nodes view (headless Chromium, wd.h) lists every
 *     member with its role, epoch, lag, sync set membership and lease, the
 *     killed one as down; a screenshot of it is saved (docs/images).
 *
 * Exits 77 when etcd is not installed; the dashboard's part is skipped
 * (said so) without chromium and chromedriver. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_http.h"
#include "etcd/etcd.h"
#include "it_node.h"
#include "t_etcd.h"
#include "wd.h"

enum {
	NODES = 3,
	ELECT_MS = 30000, /* the longest an election may take here */
};

static struct t_etcd etcd;
static void *etcd_dir;

struct cluster {
	struct it_node n[NODES];
	char node[NODES][8];
	char http[NODES][32];
	int http_port[NODES];
};

static int64_t
scaled(int64_t ms)
{
	return ms * (it_sanitized() ? 3 : 1);
}

/* The nodes' --leader-ttl: 2 s, the default 3 s under the sanitizers; a
 * killed node's key goes a TTL after its last renewal. (At 1 s a node
 * has 333 ms for each etcd call, too few for etcd on a busy machine.) */
static const char *
ttl_arg(void)
{
	return it_sanitized() ? "3s" : "2s";
}

static void
cluster_start(void **state, struct cluster *cl, const char *name)
{
	memset(cl, 0, sizeof(*cl));
	for (int i = 0; i < NODES; i++) {
		struct it_node *n = &cl->n[i];

		snprintf(cl->node[i], sizeof(cl->node[i]), "n%d", i + 1);
		cl->http_port[i] = it_free_port();
		snprintf(cl->http[i], sizeof(cl->http[i]), "127.0.0.1:%d",
		    cl->http_port[i]);
		it_node_init(state, n, cl->node[i]);
		it_node_arg(n, "--etcd", etcd.url);
		it_node_arg(n, "--cluster", name);
		it_node_arg(n, "--node", cl->node[i]);
		it_node_arg(n, "--sync-replicas", "1");
		it_node_arg(n, "--leader-ttl", ttl_arg());
		it_node_arg(n, "--http", cl->http[i]);
	}
	{
		struct it_node *ns[NODES];

		for (int i = 0; i < NODES; i++)
			ns[i] = &cl->n[i];
		it_node_start_all(ns, NODES); /* at once */
	}
}

/* Whether `cv` contradicts itself: a leader named in the header whose row
 * says another role, or a row saying leader that the header does not
 * name. Says which into why. */
static bool
contradicts(const struct sluice_cluster *cv, char *why, size_t cap)
{
	for (size_t i = 0; i < cv->n; i++) {
		const struct sluice_member *m = &cv->members[i];
		bool named = cv->leader[0] && strcmp(m->name, cv->leader) == 0;

		if (named != (m->role == SLUICE_NODE_LEADER)) {
			snprintf(why, cap,
			    "leader %s in the header, but %s's row says %s",
			    cv->leader[0] ? cv->leader : "(none)", m->name,
			    sluice_node_role_name(m->role));
			return true;
		}
	}
	return false;
}

/* Reads the cluster from every node, over and over, asserting it never
 * contradicts itself: for at most `ms`, and no longer than until every
 * node has named the same leader (`want`, unless -1) in every pass for
 * AGREED_MS (scaled): the change is over then, and the reads after it
 * would all read the same settled view. Returns the index of the leader
 * the last reads agreed on (-1: none yet). */
enum { AGREED_MS = 1000 };

static int
consistent_for(struct cluster *cl, int64_t ms, int want, int *reads)
{
	int64_t end = it_mono_ms() + ms, agreed = 0;
	int leader = -1;
	char why[256];

	while (it_mono_ms() < end) {
		int named[NODES], same = 0;

		for (int i = 0; i < NODES; i++) {
			struct sluice_cluster *cv = NULL;

			named[i] = -1;
			if (cl->n[i].c == NULL ||
			    sluice_cluster(cl->n[i].c, &cv) != 0)
				continue;
			(*reads)++;
			if (contradicts(cv, why, sizeof(why)))
				fail_msg("node %s: %s", cl->node[i], why);
			for (int k = 0; k < NODES; k++)
				if (strcmp(cv->leader, cl->node[k]) == 0)
					leader = named[i] = k;
			sluice_cluster_free(cv);
		}
		for (int i = 0; i < NODES; i++)
			same += named[i] >= 0 && named[i] == named[0] &&
			    (want < 0 || named[i] == want);
		if (same < NODES)
			agreed = 0;
		else if (agreed == 0)
			agreed = it_mono_ms();
		else if (it_mono_ms() - agreed >= scaled(AGREED_MS))
			break;
		it_sleep_ms(5);
	}
	return leader;
}

/* The member `name` as node `i` sees it; NULL when not listed (`cv` to
 * free). */
static const struct sluice_member *
member(struct cluster *cl, int i, const char *name, struct sluice_cluster **cv)
{
	*cv = NULL;
	if (sluice_cluster(cl->n[i].c, cv) != 0)
		return NULL;
	for (size_t k = 0; k < (*cv)->n; k++)
		if (strcmp((*cv)->members[k].name, name) == 0)
			return &(*cv)->members[k];
	return NULL;
}

static bool
down(const struct sluice_member *m)
{
	return m->client_url[0] == '\0' || m->age_ms > SLUICE_MEMBER_DOWN_MS;
}

/* Waits until node `name`'s member key of cluster "ops" is gone from
 * etcd (a TTL after its last renewal), then until the leader `l` has
 * read the keys since: its own row is settled at each of its reads
 * (every TICK_MS, 100 ms), so its age says when its view was made. A
 * view made after the key went may come of a read made before; the
 * next view after that one comes of a read made after. */
static void
key_gone_and_read(struct cluster *cl, int l, const char *name)
{
	int64_t end = it_mono_ms() + scaled(ELECT_MS), after;
	char key[128], err[256];
	struct etcd *e = etcd_new(etcd.url, 2000, err, sizeof(err));
	int views = 0;

	assert_non_null(e);
	snprintf(key, sizeof(key), "/sluice/ops/members/%s", name);
	for (;;) {
		struct etcd_kv kv;
		bool found = true;
		int rc = etcd_get(e, key, &found, &kv);

		if (rc == 0 && !found)
			break;
		if (rc == 0)
			etcd_kv_free(&kv);
		if (it_mono_ms() > end)
			fail_msg("the key %s is still in etcd", key);
		it_sleep_ms(50);
	}
	etcd_delete(e);
	after = it_wall_ms();
	while (views < 2) {
		const struct sluice_member *m;
		struct sluice_cluster *cv;
		int64_t t0 = it_wall_ms(), t1;

		m = member(cl, l, cl->node[l], &cv);
		t1 = it_wall_ms();
		/* the view was made at (reply's now) - age: after t0 - age,
		 * before t1 - age */
		if (m != NULL && t0 - (int64_t)m->age_ms > after) {
			views++;
			after = t1 - (int64_t)m->age_ms;
		}
		sluice_cluster_free(cv);
		if (views < 2 && it_mono_ms() > end)
			fail_msg("%s made no view since %s's key went",
			    cl->node[l], name);
		if (views < 2)
			it_sleep_ms(20);
	}
}

/* The leader: the node every read names, waited for. */
static int
leader_of(struct cluster *cl)
{
	int64_t end = it_mono_ms() + scaled(ELECT_MS);

	while (it_mono_ms() < end) {
		for (int i = 0; i < NODES; i++)
			if (cl->n[i].c != NULL &&
			    it_node_role(&cl->n[i]) == SLUICE_LEADER)
				return i;
		it_sleep_ms(20);
	}
	fail_msg("no leader within %" PRId64 " ms", scaled(ELECT_MS));
	return -1;
}

/* Waits (bounded) until the leader's stats name both followers. */
static void
followers_named(struct cluster *cl, int l)
{
	int64_t end = it_mono_ms() + scaled(ELECT_MS);
	char key[64];

	for (;;) {
		int named = 0;
		struct sluice_stats *s = NULL;

		if (sluice_stats(cl->n[l].c, NULL, &s) == 0) {
			for (int i = 0; i < NODES; i++) {
				snprintf(key, sizeof(key),
				    "follower_%s_acked_lsn", cl->node[i]);
				named += i != l &&
				    sluice_kv_get(s->kv, s->nkv, key, NULL) ==
				        0;
			}
			sluice_stats_free(s);
		}
		if (named == NODES - 1)
			return;
		if (it_mono_ms() > end)
			fail_msg("the leader %s does not name its followers",
			    cl->node[l]);
		it_sleep_ms(50);
	}
}

/* `sluice cluster`'s row of member `name` (marked `mark`: "*" for the
 * leader) holds `what`. */
static void
cluster_row(
    const char *out, const char *mark, const char *name, const char *what)
{
	char start[64], line[256];
	const char *p, *e;

	snprintf(start, sizeof(start), "\n%s %s ", mark, name);
	if ((p = strstr(out, start)) == NULL)
		fail_msg("sluice cluster has no row %s:\n%s", start + 1, out);
	p++;
	e = strchr(p, '\n');
	snprintf(line, sizeof(line), "%.*s", e ? (int)(e - p) : 200, p);
	if (strstr(line, what) == NULL)
		fail_msg("sluice cluster's row of %s does not say%s: %s\n%s",
		    name, what, line, out);
}

/* The browser of page_nodes, asked for at the test's start: it starts
 * (seconds) while the cluster is made, read and a node killed. */
static struct wd_pending browser;

static void
browser_begin(void **state)
{
	if (!wd_found())
		return;
	wd_start(((struct t_dir *)*state)->path);
	wd_session_begin(&browser);
}

/* The dashboard's nodes view on node `l`: every member, with `gone` as
 * down; a screenshot. */
static void
page_nodes(void **state, struct cluster *cl, int l, int gone)
{
	char sid[128], url[256], js[2048];

	if (!browser.started)
		return;
	wd_session_wait(&browser, sid, sizeof(sid));
	snprintf(url, sizeof(url), "http://%s/", cl->http[l]);
	wd_go(sid, url);
	snprintf(js, sizeof(js),
	    "const r = n => document.querySelector("
	    "'#nodes tbody tr[data-node^=' + n + ']');"
	    "const c = (n, k) => r(n)?.querySelector('td.' + k)?.textContent;"
	    "return document.querySelectorAll('#nodes tbody tr').length === 3 "
	    "&& c('%s', 'role') === 'leader' && r('%s').dataset.node"
	    ".endsWith('(this node)') && c('%s', 'lease').startsWith('until ') "
	    "&& c('%s', 'role') === 'down' && r('%s').className === 'down' "
	    "&& c('%s', 'seen').endsWith(' ago') && "
	    "['follower', 'down'].includes(c('%s', 'role')) && "
	    "/^[0-9]+$/.test(c('%s', 'epoch')) && "
	    "document.querySelector('#nodes-src').textContent"
	    ".startsWith('cluster ') && [...document.querySelectorAll("
	    "'#nodeinfo [data-k]')].some(e => e.dataset.k === 'follower %s "
	    "lag')",
	    cl->node[l], cl->node[l], cl->node[l], cl->node[gone],
	    cl->node[gone], cl->node[gone], cl->node[3 - l - gone],
	    cl->node[3 - l - gone], cl->node[3 - l - gone]);
	wd_until(sid, js);
	wd_shot(((struct t_dir *)*state)->path, sid, "dashboard-nodes");
	wd_end(sid);
	wd_stop();
}

static void
test_the_cluster_as_an_operator_reads_it(void **state)
{
	struct cluster cl;
	struct sluice_switchover_result res;
	const struct sluice_member *m;
	struct sluice_cluster *cv;
	char *body, want[128], out[8192], err[1024];
	int l, to, gone, reads = 0;
	int64_t t0, end;

	browser_begin(state);
	/* Right after the start, and until every node names the leader. */
	cluster_start(state, &cl, "ops");
	l = consistent_for(&cl, scaled(3000), -1, &reads);
	if (l < 0)
		l = leader_of(&cl);
	assert_int_equal(l, leader_of(&cl));

	/* The followers by name, in stats and /metrics. */
	followers_named(&cl, l);
	body = it_http_get(cl.http_port[l], "/metrics", 200);
	for (int i = 0; i < NODES; i++) {
		snprintf(want, sizeof(want),
		    "sluice_follower_acked_lsn{follower=\"%s\"}", cl.node[i]);
		if ((i != l) != (strstr(body, want) != NULL))
			fail_msg("/metrics of %s and %s:\n%s", cl.node[l], want,
			    body);
	}
	assert_null(strstr(body, "{follower=\"1\"}"));
	free(body);

	/* A switchover to a follower: read over and over right after. */
	to = (l + 1) % NODES;
	it_rc(cl.n[l].c,
	    sluice_switchover(
	        cl.n[l].c, cl.node[to], (uint32_t)scaled(ELECT_MS), &res),
	    0);
	assert_int_equal(consistent_for(&cl, scaled(2000), to, &reads), to);
	l = leader_of(&cl);
	assert_int_equal(l, to);
	printf("%d reads of the cluster, none contradicting itself\n", reads);

	/* A follower killed: down within a bounded time, and still listed,
	 * down, once its key is gone (a TTL after). */
	gone = (l + 1) % NODES;
	it_node_kill(&cl.n[gone]);
	t0 = it_mono_ms();
	end = t0 + scaled(ELECT_MS);
	for (;;) {
		m = member(&cl, l, cl.node[gone], &cv);
		if (m != NULL && down(m))
			break;
		sluice_cluster_free(cv);
		if (it_mono_ms() > end)
			fail_msg("%s killed is not down", cl.node[gone]);
		it_sleep_ms(50);
	}
	sluice_cluster_free(cv);
	printf("%s killed: down after %" PRId64 " ms\n", cl.node[gone],
	    it_mono_ms() - t0);
	key_gone_and_read(&cl, l, cl.node[gone]);
	printf("%s's key gone from etcd and read %" PRId64 " ms after its "
	       "kill\n",
	    cl.node[gone], it_mono_ms() - t0);
	m = member(&cl, l, cl.node[gone], &cv);
	assert_non_null(m);
	assert_true(down(m));
	assert_int_not_equal(m->role, SLUICE_NODE_LEADER);
	sluice_cluster_free(cv);

	/* The CLI says so; GET /v1/cluster too. */
	{
		char *argv[] = { (char *)t_bin("sluice"), "-s", cl.n[l].s->url,
			"cluster", NULL };
		assert_int_equal(
		    t_run(argv, NULL, out, sizeof(out), err, sizeof(err)), 0);
		cluster_row(out, " ", cl.node[gone], " down ");
		cluster_row(out, "*", cl.node[l], " leader ");
	}
	body = it_http_get(cl.http_port[l], "/v1/cluster", 200);
	snprintf(
	    want, sizeof(want), "{\"name\":\"%s\",\"role\":", cl.node[gone]);
	assert_non_null(strstr(body, want));
	assert_non_null(strstr(body, "\"down\":true"));
	free(body);

	page_nodes(state, &cl, l, gone);
}

/* Without --etcd GET /v1/cluster says automatic failover is off (409). */
static void
test_no_cluster_without_etcd(void **state)
{
	struct it_node n;
	char http[32], *body;
	int port = it_free_port();

	snprintf(http, sizeof(http), "127.0.0.1:%d", port);
	it_node_init(state, &n, "alone");
	it_node_arg(&n, "--http", http);
	it_node_start(&n);
	body = it_http_get(port, "/v1/cluster", 409);
	assert_non_null(strstr(body, "--etcd"));
	free(body);
}

static int
nodes_setup(void **state)
{
	if (etcd.pid == 0 && t_etcd_start(&etcd) != 0)
		return -1;
	return it_setup(state);
}

/* A test that failed between browser_begin and page_nodes leaves the
 * browser to stop here. */
static int
nodes_teardown(void **state)
{
	wd_stop();
	wd_session_join(&browser);
	return it_node_teardown(state);
}

static int
group_setup(void **state)
{
	(void)state;
	if (t_tmpdir_setup(&etcd_dir) != 0)
		return -1;
	t_etcd_init(&etcd, ((struct t_dir *)etcd_dir)->path, "etcd");
	return t_etcd_start(&etcd);
}

static int
group_teardown(void **state)
{
	(void)state;
	t_etcd_signal(&etcd, SIGTERM);
	return t_tmpdir_teardown(&etcd_dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_the_cluster_as_an_operator_reads_it, nodes_setup,
		    nodes_teardown),
		cmocka_unit_test_setup_teardown(
		    test_no_cluster_without_etcd, it_setup, it_node_teardown),
	};

	if (!t_etcd_available()) {
		fprintf(stderr,
		    "etcd is not installed: skipped (make "
		    "test-deps installs etcd-server)\n");
		return 77;
	}
	return cmocka_run_group_tests_name(
	    "nodes", tests, group_setup, group_teardown);
}
