/* Automatic failover through a real etcd: three sluiced nodes on
 * 127.0.0.1 with --etcd and --sync-replicas 1, under a load of puts,
 * takes and acks from several clients that know every node's URL.
 *
 *   - the leader killed (kill -9), round after round: a new leader is
 *     elected and serves writes, the killed node comes back as a
 *     follower, and every acknowledged put and ack is where it should be;
 *   - the leader frozen (SIGSTOP) past its lease: once resumed it
 *     acknowledges no write, neither one sent while it was frozen nor
 *     any after (sent over a plain connection, not through libsluice,
 *     which would follow its "not leader" to the new leader), then
 *     rejoins as a follower;
 *   - a follower killed and restarted under the load;
 *   - etcd itself killed for longer than the lease and restarted: the
 *     leader stops taking writes, and a leader exists again afterwards;
 *   - a node whose etcd answers badly (an HTTP error, malformed JSON, too
 *     late) stays a candidate that refuses writes, says why in its log,
 *     and stops cleanly.
 *
 * The checks, after each disturbance, on the leader the cluster ends
 * with: every put a client saw acknowledged is there with its payload
 * (unless a later ack removed it), no task whose ack was acknowledged is
 * there in any state, and every node converges on the leader's state.
 * The time from a kill to the first write that succeeds is printed, never
 * asserted (bench/failover.sh measures it). One etcd serves the whole run;
 * each test uses a cluster name of its own. In plain builds the nodes
 * run with a leader lease shorter than the default (ttl_arg()): every
 * kill, freeze and etcd outage waits for a lease to run out, and what
 * happens then does not depend on its length. Exits 77 when `etcd` is
 * not installed (make test installs etcd-server). */
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it_http.h"
#include "it_node.h"
#include "it_sp.h"
#include "proto/msg.h"
#include "t_etcd.h"
#include "util/buf.h"

enum {
	NODES = 3,
	LOADERS = 3,
	OPS_MAX = 20000,  /* a loader's operations per phase */
	ELECT_MS = 30000, /* the longest an election may take here (x2
	                     sanitized) */
	ROUNDS = 5,
};

static struct t_etcd etcd;
static void *etcd_dir;

static int64_t
scaled(int64_t ms)
{
	return ms * (it_sanitized() ? 2 : 1);
}

/* The nodes' --leader-ttl: 2 s, the default 3 s under the sanitizers.
 * Each failover waits for a lease to run out; a node must still get its
 * etcd calls answered within a third of the TTL on a busy machine (at
 * 1 s, 333 ms, etcd beside three other tests on 2 cores did not, and no
 * leader held). */
static const char *
ttl_arg(void)
{
	return it_sanitized() ? "3s" : "2s";
}

static int64_t
ttl_ms(void)
{
	return it_sanitized() ? 3000 : 2000;
}

/* ---- the cluster --------------------------------------------------------- */

struct cluster {
	struct it_node n[NODES];
	char name[32];
	char node[NODES][16];
	char http[NODES][32];
	int http_port[NODES];
	char urls[NODES * 64]; /* every client URL, comma-separated */
};

static void
cluster_init(void **state, struct cluster *cl, const char *name)
{
	memset(cl, 0, sizeof(*cl));
	snprintf(cl->name, sizeof(cl->name), "%s", name);
	for (int i = 0; i < NODES; i++) {
		struct it_node *n = &cl->n[i];

		snprintf(cl->node[i], sizeof(cl->node[i]), "node%d", i);
		cl->http_port[i] = it_free_port();
		snprintf(cl->http[i], sizeof(cl->http[i]), "127.0.0.1:%d",
		    cl->http_port[i]);
		it_node_init(state, n, cl->node[i]);
		it_node_arg(n, "--etcd", etcd.url);
		it_node_arg(n, "--cluster", cl->name);
		it_node_arg(n, "--node", cl->node[i]);
		it_node_arg(n, "--sync-replicas", "1");
		it_node_arg(n, "--leader-ttl", ttl_arg());
		it_node_arg(n, "--http", cl->http[i]);
		snprintf(cl->urls + strlen(cl->urls),
		    sizeof(cl->urls) - strlen(cl->urls), "%s%s",
		    i > 0 ? "," : "", n->s->url);
	}
}

/* The status of GET /health, -1 when it did not answer. */
static int
health(const struct cluster *cl, int i, char *why, size_t cap)
{
	char *body = NULL;
	int status =
	    it_http(cl->http_port[i], "GET", "/health", NULL, NULL, &body);

	if (why != NULL)
		snprintf(why, cap, "%s", body != NULL ? body : "");
	free(body);
	return status;
}

/* The node that leads: its stats say leader and its /health says it
 * takes writes (a leader that fenced itself answers 503). Waits until
 * exactly one node but `skip` (-1: none) is one. */
static int
find_leader(struct cluster *cl, int skip)
{
	int64_t end = it_mono_ms() + scaled(ELECT_MS);
	int found = -1;

	while (it_mono_ms() < end) {
		int n = 0;

		for (int i = 0; i < NODES; i++) {
			if (i == skip || cl->n[i].c == NULL)
				continue;
			if (it_node_role(&cl->n[i]) == SLUICE_LEADER &&
			    health(cl, i, NULL, 0) == 200) {
				found = i;
				n++;
			}
		}
		if (n == 1)
			return found;
		it_sleep_ms(50);
	}
	for (int i = 0; i < NODES; i++)
		if (cl->n[i].c != NULL)
			t_srv_print_log(cl->n[i].s);
	fail_msg("cluster %s: no single leader within %" PRId64 " ms", cl->name,
	    scaled(ELECT_MS));
	return -1;
}

static int
cluster_start(struct cluster *cl)
{
	struct it_node *ns[NODES];

	for (int i = 0; i < NODES; i++)
		ns[i] = &cl->n[i];
	it_node_start_all(ns, NODES); /* at once */
	return find_leader(cl, -1);
}

/* Every node but the leader `l` follows it and holds its state. */
static void
cluster_converges(struct cluster *cl, int l)
{
	for (int i = 0; i < NODES; i++) {
		if (i == l)
			continue;
		it_node_same_state(&cl->n[l], &cl->n[i]);
		assert_int_equal(it_node_role(&cl->n[i]), SLUICE_FOLLOWER);
	}
}

/* A client of the whole cluster, with time for an election per call. */
static struct sluice_client *
cluster_client(const struct cluster *cl)
{
	struct sluice_client *c = it_client_url(cl->urls);

	assert_non_null(c);
	sluice_set_timeout(c, (int)scaled(ELECT_MS));
	return c;
}

/* A put through every URL, sent after the disturbance at `t0`: prints
 * how long after t0 it succeeded; its id into *id. It carries a key, as a
 * client that must not lose it would, and is sent again while its
 * outcome is unknown: a leader elected just then may lose its lease
 * again before the write is confirmed (SLUICE_EREPLICA, on a loaded
 * machine), which refuses the write rightly; the key makes the retry
 * create at most one task. */
static int64_t
first_write(const struct cluster *cl, int64_t t0, uint64_t *id)
{
	enum { TRIES = 20 };
	struct sluice_client *c = cluster_client(cl);
	struct sluice_put_opts o;
	char key[48];
	int created, rc = -1;
	int64_t ms, end = it_mono_ms() + 3 * scaled(ELECT_MS);

	sluice_put_opts_init(&o);
	o.tube = "probe";
	snprintf(key, sizeof(key), "probe-%" PRId64, t0);
	o.key = key;
	for (int i = 0; i < TRIES && rc != 0 && it_mono_ms() < end; i++) {
		if (i > 0)
			it_sleep_ms(50);
		rc = sluice_put(c, &o, "the first write after a failover", 32,
		    id, &created);
		if (rc != 0 && rc != SLUICE_EREPLICA && rc != SLUICE_ECONN &&
		    rc != SLUICE_ETIMEDOUT && rc != SLUICE_ENOTLEADER)
			break;
		if (rc != 0)
			printf("the first write, try %d: %s (%s)\n", i + 1,
			    sluice_strerror(rc), sluice_errmsg(c));
	}
	it_rc(c, rc, 0);
	ms = it_mono_ms() - t0;
	sluice_close(c);
	return ms;
}

/* Asserts task `id` exists on `n`. */
static void
assert_exists(struct it_node *n, uint64_t id)
{
	struct sluice_task *t = it_peek(n->c, id);

	if (t == NULL)
		fail_msg("task %" PRIu64 " is missing on %s", id, n->s->data);
	sluice_task_free(t);
}

/* ---- the load ------------------------------------------------------------ */

/* One client thread: put a task, take one, ack it; again. It records
 * the puts and acks acknowledged, and the acks whose outcome is unknown
 * (the connection went or the reply came too late). */
struct loader {
	pthread_t th;
	const char *urls;
	char tube[32];
	atomic_bool *stop;
	atomic_size_t *done; /* the load's acknowledged puts and acks */
	int idx;
	struct it_errs *errs;
	uint64_t *puts; /* ids; the payload is named by the index */
	size_t nputs;
	uint64_t *acks, *maybe;
	size_t nacks, nmaybe;
	size_t put_fails, ack_fails;
};

static void
payload_of(const struct loader *ld, size_t k, char *out, size_t cap)
{
	snprintf(out, cap, "%s l%d-%zu", ld->tube, ld->idx, k);
}

static void
load_ack(struct loader *ld, struct sluice_client *c)
{
	const char *tubes[1] = { ld->tube };
	struct sluice_take_opts o = { tubes, 1, 0, 1, 1 };
	struct sluice_task *t = NULL;
	size_t n = 0;
	int rc;

	if (sluice_take(c, &o, &t, &n) != 0 || n != 1)
		return;
	rc = sluice_ack(c, t->id, t->lease, NULL, NULL);
	if (rc == 0) {
		ld->acks[ld->nacks++] = t->id;
		atomic_fetch_add(ld->done, 1);
	} else if (rc == SLUICE_ENOTLEADER || rc == SLUICE_ESTALE ||
	    rc == SLUICE_ESTATE || rc == SLUICE_ENOTFOUND)
		ld->ack_fails++; /* not done */
	else /* lost on the way, or a leader that stopped leading before
	        its followers confirmed it (SLUICE_EREPLICA) */
		ld->maybe[ld->nmaybe++] = t->id;
	sluice_task_free(t);
}

static void *
load_main(void *arg)
{
	struct loader *ld = arg;
	struct sluice_client *c = it_client_url(ld->urls);
	char payload[64];

	if (c == NULL) {
		it_errs_add(ld->errs, "loader %d: no client", ld->idx);
		return NULL;
	}
	sluice_set_timeout(c, (int)scaled(ELECT_MS));
	for (int i = 0; i < OPS_MAX && !atomic_load(ld->stop); i++) {
		struct sluice_put_opts o;
		uint64_t id;
		int created;

		sluice_put_opts_init(&o);
		o.tube = ld->tube;
		payload_of(ld, ld->nputs, payload, sizeof(payload));
		if (sluice_put(
		        c, &o, payload, strlen(payload), &id, &created) == 0) {
			ld->puts[ld->nputs++] = id;
			atomic_fetch_add(ld->done, 1);
		} else
			ld->put_fails++;
		load_ack(ld, c);
	}
	sluice_close(c);
	return NULL;
}

struct load {
	struct loader ld[LOADERS];
	atomic_bool stop;
	atomic_size_t done;
	struct it_errs errs;
	char tube[32];
};

static void
load_start(struct load *l, const struct cluster *cl, const char *tube)
{
	memset(l, 0, sizeof(*l));
	it_errs_init(&l->errs);
	snprintf(l->tube, sizeof(l->tube), "%s", tube);
	for (int i = 0; i < LOADERS; i++) {
		struct loader *ld = &l->ld[i];

		ld->urls = cl->urls;
		snprintf(ld->tube, sizeof(ld->tube), "%s", tube);
		ld->stop = &l->stop;
		ld->done = &l->done;
		ld->idx = i;
		ld->errs = &l->errs;
		ld->puts = calloc(OPS_MAX, sizeof(uint64_t));
		ld->acks = calloc(OPS_MAX, sizeof(uint64_t));
		ld->maybe = calloc(OPS_MAX, sizeof(uint64_t));
		assert_true(
		    ld->puts != NULL && ld->acks != NULL && ld->maybe != NULL);
		assert_int_equal(
		    pthread_create(&ld->th, NULL, load_main, ld), 0);
	}
}

/* Waits until the load has had `n` more puts and acks acknowledged from
 * now: it goes on (under whichever leader there is then). */
static void
load_goes_on(struct load *l, size_t n)
{
	size_t want = atomic_load(&l->done) + n;
	int64_t end = it_mono_ms() + scaled(ELECT_MS);

	while (atomic_load(&l->done) < want) {
		if (it_mono_ms() > end)
			fail_msg("the load of %s made %zu of %zu operations in "
			         "%" PRId64 " ms",
			    l->tube, atomic_load(&l->done) + n - want, n,
			    scaled(ELECT_MS));
		it_sleep_ms(10);
	}
}

static void
load_stop(struct load *l)
{
	atomic_store(&l->stop, true);
	for (int i = 0; i < LOADERS; i++)
		pthread_join(l->ld[i].th, NULL);
	it_errs_check(&l->errs);
}

static void
load_free(struct load *l)
{
	for (int i = 0; i < LOADERS; i++) {
		free(l->ld[i].puts);
		free(l->ld[i].acks);
		free(l->ld[i].maybe);
	}
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_task(const void *a, const void *b)
{
	return cmp_u64(&((const struct sluice_task *)a)->id,
	    &((const struct sluice_task *)b)->id);
}

static bool
has(const uint64_t *set, size_t n, uint64_t id)
{
	return bsearch(&id, set, n, sizeof(id), cmp_u64) != NULL;
}

/* Every acknowledged ack (and, apart, those of unknown outcome) of the
 * load, sorted. */
static uint64_t *
gather(const struct load *l, bool maybe, size_t *n)
{
	uint64_t *set = calloc(LOADERS * OPS_MAX + 1, sizeof(uint64_t));

	assert_non_null(set);
	*n = 0;
	for (int i = 0; i < LOADERS; i++) {
		const struct loader *ld = &l->ld[i];
		size_t k = maybe ? ld->nmaybe : ld->nacks;

		memcpy(set + *n, maybe ? ld->maybe : ld->acks, k * 8);
		*n += k;
	}
	qsort(set, *n, sizeof(uint64_t), cmp_u64);
	return set;
}

/* The load's tube on the leader `n`: every acknowledged put is there
 * with its payload unless its ack may have gone through; no task whose
 * ack was acknowledged is there. */
static void
load_check(const struct load *l, struct it_node *n, const char *when)
{
	struct it_counts k = it_counts(n->c, l->tube);
	struct sluice_task *ts = NULL;
	size_t nt = 0, nacks, nmaybe, nputs = 0, present = 0;
	size_t put_fails = 0, ack_fails = 0;
	uint64_t *acks = gather(l, false, &nacks);
	uint64_t *maybe = gather(l, true, &nmaybe);
	char payload[64];

	/* the tube stays small (each loader acks what it puts), so one
	 * list holds every task */
	assert_true(k.ready + k.delayed + k.taken + k.buried < SLUICE_LIST_MAX);
	it_rc(n->c,
	    sluice_list(n->c, l->tube, 0, SLUICE_ORDER_AGE, SLUICE_LIST_MAX, 1,
	        &ts, &nt),
	    0);
	if (nt > 0) /* ts is NULL when the tube is empty */
		qsort(ts, nt, sizeof(*ts), cmp_task);
	for (size_t i = 0; i < nt; i++)
		if (has(acks, nacks, ts[i].id))
			fail_msg("%s: task %" PRIu64
			         " was acked (acknowledged) "
			         "but is back, in state %d",
			    when, ts[i].id, ts[i].state);
	for (int i = 0; i < LOADERS; i++) {
		const struct loader *ld = &l->ld[i];

		for (size_t p = 0; p < ld->nputs; p++) {
			struct sluice_task key = { .id = ld->puts[p] };
			const struct sluice_task *t = nt == 0
			    ? NULL
			    : bsearch(&key, ts, nt, sizeof(*ts), cmp_task);

			nputs++;
			if (t == NULL &&
			    (has(acks, nacks, key.id) ||
			        has(maybe, nmaybe, key.id)))
				continue;
			if (t == NULL)
				fail_msg("%s: put %" PRIu64
				         " (loader %d, #%zu) "
				         "was acknowledged but is missing",
				    when, key.id, i, p);
			payload_of(ld, p, payload, sizeof(payload));
			if (t->payload_len != strlen(payload) ||
			    memcmp(t->payload, payload, t->payload_len) != 0)
				fail_msg("%s: task %" PRIu64 " holds '%.*s', "
				         "not '%s'",
				    when, t->id, (int)t->payload_len,
				    (const char *)t->payload, payload);
			present++;
		}
	}
	for (int i = 0; i < LOADERS; i++) {
		put_fails += l->ld[i].put_fails;
		ack_fails += l->ld[i].ack_fails;
	}
	printf("%s: %zu puts and %zu acks acknowledged, %zu acks of unknown "
	       "outcome, %zu puts and %zu acks failed; %zu tasks left, all "
	       "there\n",
	    when, nputs, nacks, nmaybe, put_fails, ack_fails, present);
	assert_true(nputs > 0 && nacks > 0);
	sluice_task_free(ts);
	free(acks);
	free(maybe);
}

/* ---- set-up ------------------------------------------------------------- */

/* Each test finds etcd running (one that killed it restarts it, but a
 * test that failed half-way may not have). */
static int
fo_setup(void **state)
{
	if (etcd.pid == 0 && t_etcd_start(&etcd) != 0)
		return -1;
	return it_setup(state);
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

/* ---- the leader killed --------------------------------------------------- */

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
test_leader_killed_under_load(void **state)
{
	struct cluster cl;
	int rounds = (int)it_scale(ROUNDS, 2, 2);
	int64_t took[ROUNDS];
	uint64_t seed = t_seed(13);
	int l;

	cluster_init(state, &cl, "killed");
	l = cluster_start(&cl);
	for (int r = 0; r < rounds; r++) {
		struct load *load = calloc(1, sizeof(*load));
		char tube[32], when[64];
		uint64_t probe;
		int64_t t0;
		int old = l;

		assert_non_null(load);
		snprintf(tube, sizeof(tube), "killed-%d", r);
		load_start(load, &cl, tube);
		/* the kill at a point of the load the seed picks */
		load_goes_on(load, 5 + (size_t)t_below(&seed, 30));
		t0 = it_mono_ms();
		it_node_kill(&cl.n[old]);
		took[r] = first_write(&cl, t0, &probe);
		load_goes_on(load, 10); /* under the new leader */
		load_stop(load);
		l = find_leader(&cl, old);
		printf("round %d: %s killed, %s leads; the first write "
		       "succeeded %" PRId64 " ms after the kill\n",
		    r, cl.node[old], cl.node[l], took[r]);
		snprintf(when, sizeof(when), "round %d", r);
		load_check(load, &cl.n[l], when);
		assert_exists(&cl.n[l], probe);
		/* the killed node comes back as a follower */
		it_node_start(&cl.n[old]);
		cluster_converges(&cl, l);
		load_free(load);
		free(load);
	}
	qsort(took, (size_t)rounds, sizeof(took[0]), cmp_i64);
	printf("from kill -9 to the first write, %d rounds: p50 %" PRId64
	       " ms, max %" PRId64 " ms\n",
	    rounds, took[(rounds - 1) / 2], took[rounds - 1]);
}

/* ---- the leader frozen --------------------------------------------------- */

/* A put over a plain connection to one node: libsluice would follow a
 * "not leader" reply to the leader it names, and what counts here is the
 * node's own answer. `id` is the request's id (high bit set). */
static void
raw_put(int fd, uint32_t id)
{
	struct msg_req q = { .op = MSG_OP_PUT };
	struct buf b;

	q.put.tube = (struct msg_str) { "direct", 6 };
	q.put.payload = (struct msg_str) { "to the old leader", 17 };
	q.put.priority = 1024;
	buf_init(&b);
	assert_int_equal(msg_encode_req(&b, &q), 0);
	it_sp_send(fd, id, b.data, b.len);
	buf_fini(&b);
}

/* The status of the reply to raw_put `id`; -1 when none came. */
static int
raw_status(int fd, uint32_t id)
{
	struct msg_rep rep;
	struct buf body;
	uint32_t bt = 0;
	int status = -1;

	buf_init(&body);
	if (it_sp_recv(fd, &bt, 1, &body)) {
		assert_int_equal(bt, id);
		assert_int_equal(
		    msg_decode_rep(body.data, body.len, NULL, &rep), 0);
		status = rep.status;
	}
	buf_fini(&body);
	return status;
}

static const char *
status_name(int status)
{
	return status < 0 ? "no reply" : sluice_strerror(status);
}

static void
test_leader_frozen_past_its_lease(void **state)
{
	struct cluster cl;
	struct load *load = calloc(1, sizeof(*load));
	uint32_t id = 0x80000001u;
	uint64_t probe;
	int64_t t0, end;
	int old, l, fd, status, n = 0, refused = 0;

	assert_non_null(load);
	cluster_init(state, &cl, "frozen");
	old = cluster_start(&cl);
	fd = it_sp_open(cl.n[old].s->port);
	load_start(load, &cl, "frozen");
	load_goes_on(load, 20);
	t0 = it_mono_ms();
	kill(cl.n[old].s->pid, SIGSTOP);
	assert_int_equal(t_wait_stopped(cl.n[old].s->pid), 0);
	raw_put(fd, id); /* it reaches the old leader frozen */
	printf("the first write succeeded %" PRId64 " ms after the leader "
	       "froze\n",
	    first_write(&cl, t0, &probe));
	l = find_leader(&cl, old);
	/* past its lease for sure: another node holds the leader key */
	kill(cl.n[old].s->pid, SIGCONT);
	status = raw_status(fd, id);
	printf("the put sent to the old leader while it was frozen: %s\n",
	    status_name(status));
	assert_true(status != 0);
	/* and every put sent to it afterwards, under the load */
	end = it_mono_ms() + 1500;
	while (it_mono_ms() < end && n < 1000) {
		raw_put(fd, ++id);
		status = raw_status(fd, id);
		if (status == 0)
			fail_msg(
			    "the old leader acknowledged put #%d after its "
			    "lease ran out",
			    n);
		refused += status == SLUICE_ENOTLEADER;
		if (status < 0) { /* it closed the connection: dial again */
			close(fd);
			fd = it_sp_open(cl.n[old].s->port);
		}
		n++;
		it_sleep_ms(10);
	}
	close(fd);
	printf("puts sent to the old leader after it resumed: %d, %d refused "
	       "as not leader, the others failed\n",
	    n, refused);
	load_stop(load);
	load_check(load, &cl.n[l], "after the freeze");
	assert_exists(&cl.n[l], probe);
	cluster_converges(&cl, l);
	printf("the old leader's log: %d line(s) \"lease runs out\", %d "
	       "\"following the leader\"\n",
	    it_log_count(cl.n[old].s, "lease runs out"),
	    it_log_count(cl.n[old].s, "following the leader"));
	load_free(load);
	free(load);
}

/* ---- a switchover ---------------------------------------------------------
 */

/* A planned handover under load: the named follower leads, the old leader
 * follows it, nothing acknowledged is lost; a switchover to no member or
 * to the leader itself is refused, and the cluster shows who leads. */
static void
test_switchover_under_load(void **state)
{
	struct sluice_switchover_result res;
	struct load *load = calloc(1, sizeof(*load));
	struct sluice_cluster *view;
	struct sluice_client *c;
	struct cluster cl;
	int l, t;

	assert_non_null(load);
	cluster_init(state, &cl, "switch");
	l = cluster_start(&cl);
	t = (l + 1) % NODES;
	c = cluster_client(&cl);
	assert_int_equal(
	    sluice_switchover(c, "nobody", 0, NULL), SLUICE_ENOTFOUND);
	assert_non_null(strstr(sluice_errmsg(c), "nobody"));
	assert_int_equal(
	    sluice_switchover(c, cl.node[l], 0, NULL), SLUICE_ESTATE);

	load_start(load, &cl, "switch");
	load_goes_on(load, 20);
	if (sluice_switchover(c, cl.node[t], 0, &res) != 0)
		fail_msg("switchover: %s", sluice_errmsg(c));
	assert_string_equal(res.leader, cl.n[t].s->url);
	assert_true(res.epoch > 0);
	load_goes_on(load, 10); /* under the new leader */
	load_stop(load);
	assert_int_equal(find_leader(&cl, l), t);
	load_check(load, &cl.n[t], "a switchover");
	cluster_converges(&cl, t);

	assert_int_equal(sluice_cluster(c, &view), 0);
	assert_string_equal(view->leader, cl.node[t]);
	assert_int_equal((int)view->n, NODES);
	sluice_cluster_free(view);
	sluice_close(c);
	load_free(load);
	free(load);
}

/* ---- a follower killed --------------------------------------------------- */

static void
test_follower_killed_and_restarted(void **state)
{
	struct cluster cl;
	struct load *load = calloc(1, sizeof(*load));
	int l, f;

	assert_non_null(load);
	cluster_init(state, &cl, "follower");
	l = cluster_start(&cl);
	f = (l + 1) % NODES;
	load_start(load, &cl, "follower");
	load_goes_on(load, 20);
	it_node_kill(&cl.n[f]);
	/* the leader writes without it (the other follower confirms) */
	load_goes_on(load, 30);
	it_node_start(&cl.n[f]);
	/* it catches up under the load, which goes on */
	it_node_caught_up(&cl.n[l], &cl.n[f]);
	load_goes_on(load, 20);
	load_stop(load);
	l = find_leader(&cl, -1);
	load_check(load, &cl.n[l], "a follower killed");
	cluster_converges(&cl, l);
	load_free(load);
	free(load);
}

/* ---- etcd killed ----------------------------------------------------------
 */

static void
test_etcd_killed_and_restarted(void **state)
{
	struct cluster cl;
	struct load *load = calloc(1, sizeof(*load));
	struct sluice_client *alone;
	char why[256];
	uint64_t id, probe;
	int created, rc, l, old;
	int64_t t0;

	assert_non_null(load);
	cluster_init(state, &cl, "etcd-down");
	old = cluster_start(&cl);
	load_start(load, &cl, "etcd-down");
	load_goes_on(load, 20);
	assert_int_equal(t_etcd_signal(&etcd, SIGKILL), 0);
	t0 = it_mono_ms();
	/* Its last renewal came before etcd died: a TTL later the lease may
	 * be gone in etcd, so the leader must take no write by then. It
	 * says so on /health once it stops taking writes (within a second
	 * more, for the renewals' timeouts); the write goes then, at the
	 * TTL at the earliest. */
	while (it_mono_ms() < t0 + ttl_ms() + 1000 &&
	    health(&cl, old, NULL, 0) != 503)
		it_sleep_ms(20);
	if (it_mono_ms() < t0 + ttl_ms())
		it_sleep_ms(t0 + ttl_ms() - it_mono_ms());
	alone = it_client_url(cl.n[old].s->url);
	assert_non_null(alone);
	sluice_set_timeout(alone, 3000);
	rc = sluice_put(alone, NULL, "x", 1, &id, &created);
	sluice_close(alone);
	printf("a write to the leader %" PRId64 " ms after etcd died: %s\n",
	    it_mono_ms() - t0, rc == 0 ? "ok" : sluice_strerror(rc));
	assert_true(rc != 0);
	assert_int_equal(health(&cl, old, why, sizeof(why)), 503);
	printf("its /health: %s\n", why);
	assert_non_null(strstr(why, "no leader lease"));
	assert_int_equal(t_etcd_start(&etcd), 0);
	t0 = it_mono_ms();
	printf("the first write succeeded %" PRId64 " ms after etcd "
	       "restarted\n",
	    first_write(&cl, t0, &probe));
	load_goes_on(load, 10);
	load_stop(load);
	l = find_leader(&cl, -1);
	printf("%s led, %s leads\n", cl.node[old], cl.node[l]);
	load_check(load, &cl.n[l], "etcd killed");
	assert_exists(&cl.n[l], probe);
	cluster_converges(&cl, l);
	load_free(load);
	free(load);
}

/* ---- etcd answering badly ------------------------------------------------ */

/* A node whose etcd answers `status` `body` after `delay_ms`: it logs
 * the failure naming `says`, refuses writes as a candidate, and stops
 * cleanly on SIGTERM. */
static void
bad_etcd(void **state, const char *name, int status, const char *body,
    int delay_ms, const char *says)
{
	struct t_etcd_fake *f = t_etcd_fake_start();
	struct it_node n;
	uint64_t id;
	int created, wstatus, logged = 0;

	t_etcd_fake_set(f, status, body, delay_ms, false);
	it_node_init(state, &n, name);
	it_node_arg(&n, "--etcd", f->url);
	it_node_arg(&n, "--node", name);
	it_node_arg(&n, "--leader-ttl", ttl_arg());
	it_node_start(&n);
	for (int i = 0; i < 1000 && logged == 0; i++) {
		logged = it_log_count(n.s, says);
		it_sleep_ms(10);
	}
	if (logged == 0)
		t_srv_print_log(n.s);
	assert_true(logged > 0);
	assert_true(it_log_count(n.s, "etcd call failed") > 0);
	assert_true(atomic_load(&f->nreq) > 0);
	sluice_set_timeout(n.c, 3000);
	it_rc(n.c, sluice_put(n.c, NULL, "x", 1, &id, &created),
	    SLUICE_ENOTLEADER);
	assert_int_equal(it_node_role(&n), SLUICE_FOLLOWER);
	wstatus = it_node_stop(&n, SIGTERM);
	assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
	t_etcd_fake_stop(f);
}

static void
test_etcd_answers_badly(void **state)
{
	bad_etcd(state, "http-error", 500,
	    "{\"error\":\"boom\",\"message\":\"etcdserver: boom\",\"code\":2}",
	    0, "HTTP 500 Fake: etcdserver: boom");
	bad_etcd(state, "bad-json", 200, "{\"header\":", 0, "malformed JSON");
	/* sluiced gives a call a third of the TTL (ttl_arg) */
	bad_etcd(state, "too-late", 200, "{}", 10000, "no answer within");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_leader_killed_under_load, fo_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_leader_frozen_past_its_lease, fo_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_switchover_under_load, fo_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_follower_killed_and_restarted, fo_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_etcd_killed_and_restarted, fo_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_etcd_answers_badly, it_setup, it_node_teardown),
	};

	/* SLUICE_TEST_FILTER=test_etcd* runs the tests it matches */
	if (getenv("SLUICE_TEST_FILTER") != NULL)
		cmocka_set_test_filter(getenv("SLUICE_TEST_FILTER"));
	if (!t_etcd_available()) {
		fprintf(stderr,
		    "etcd is not installed: skipped (make "
		    "test-deps installs etcd-server)\n");
		return 77;
	}
	return cmocka_run_group_tests_name(
	    "failover", tests, group_setup, group_teardown);
}
