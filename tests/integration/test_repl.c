/* Replication with real nodes on 127.0.0.1: followers that catch up from
 * the log and from a snapshot, writes refused by a follower and a client
 * redirected to the leader, a follower stopped and resumed, a follower
 * restarted, a leader killed under load with --sync-replicas 1 and every
 * acknowledged put found on the promoted follower, the old leader coming
 * back with a divergent tail, a stream from a lower epoch refused, and a
 * batch put's PUTS record on a follower and across a kill.
 * The leader's stats name each follower by its address.
 * Nodes are promoted and re-pointed by hand here; test_failover.c lets
 * etcd elect them. "Same state" is compared over the wire (it_node.h). */
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_node.h"

enum {
	LOADERS = 4,
};

static const char *const TUBES[] = { "alpha", "beta" };

/* A mixed workload: puts, some taken and acked, some buried, some
 * delayed far in the future. */
static void
workload_pad(struct it_node *l, int n, int seed, size_t pad)
{
	char payload[2048];

	srand((unsigned)seed);
	for (int i = 0; i < n; i++) {
		struct sluice_put_opts o;
		uint64_t id;
		int created;

		sluice_put_opts_init(&o);
		o.tube = TUBES[i % 2];
		o.priority = (uint32_t)(rand() % 100);
		if (i % 7 == 0)
			o.delay_ms = 3600000;
		snprintf(payload, sizeof(payload), "task %d of seed %d %0*d", i,
		    seed, (int)pad, 0);
		it_rc(l->c,
		    sluice_put(
		        l->c, &o, payload, strlen(payload), &id, &created),
		    0);
		if (i % 5 == 4) {
			struct sluice_task *t = it_take(l->c, o.tube, 0, 1);

			if (i % 3 == 0)
				it_rc(l->c,
				    sluice_bury(l->c, t->id, t->lease, NULL),
				    0);
			else
				it_rc(l->c,
				    sluice_ack(
				        l->c, t->id, t->lease, NULL, NULL),
				    0);
			sluice_task_free(t);
		}
	}
}

/* Settings and tube removal: `seed` sets TUBES[0]'s, with a dead
 * letter into TUBES[1], fills a tube of its own and force-deletes the
 * one the seed before filled. */
static void
tube_churn(struct it_node *l, int seed)
{
	struct sluice_tube_conf conf;
	char mine[32], before[32];
	int rc;

	memset(&conf, 0, sizeof(conf));
	conf.set = SLUICE_TS_TTR | SLUICE_TS_MAX_ATTEMPTS |
	    SLUICE_TS_DEAD_LETTER | (seed % 2 ? SLUICE_TS_BACKOFF : 0);
	conf.ttr_ms = 1000 + (uint64_t)seed;
	conf.max_attempts = (uint32_t)seed;
	conf.backoff_base_ms = 10;
	conf.backoff_cap_ms = 20 * (uint64_t)seed;
	snprintf(conf.dead_letter, sizeof(conf.dead_letter), "%s", TUBES[1]);
	it_rc(l->c,
	    sluice_tube_set(
	        l->c, TUBES[0], &conf, seed % 2 ? 0 : SLUICE_TS_BACKOFF, NULL),
	    0);
	snprintf(mine, sizeof(mine), "churn-%d", seed);
	snprintf(before, sizeof(before), "churn-%d", seed - 1);
	it_put(l->c, mine, "short-lived");
	rc = sluice_tube_delete(l->c, before, 1, NULL);
	if (rc != 0 && rc != SLUICE_ENOTFOUND) /* a seed may run alone */
		it_rc(l->c, rc, 0);
}

static void
workload(struct it_node *l, int n, int seed)
{
	tube_churn(l, seed);
	workload_pad(l, n, seed, 1);
}

/* ---- catching up --------------------------------------------------------- */

static void
test_late_follower_catches_up_and_refuses_writes(void **state)
{
	struct it_node l, f;
	struct sluice_client *both;
	char urls[200];
	uint64_t id;
	int created;

	it_node_init(state, &l, "leader");
	it_node_init(state, &f, "follower");
	it_node_arg(&l, "--segment-size", "1048576");
	it_node_start(&l);
	workload_pad(&l, (int)it_scale(800, 3, 200), 1, 1800);
	/* A restart empties the leader's memory of recent records: the
	 * follower's records come from the segments (several of them). */
	it_node_kill(&l);
	it_node_start(&l);
	it_node_follows(&f, &l);
	it_node_start(&f);
	it_node_caught_up(&l, &f);
	it_node_same_state(&l, &f);
	assert_int_equal(it_node_role(&f), SLUICE_FOLLOWER);
	assert_true(it_node_kv(l.c, "followers") == 1);
	/* The follower is named in the leader's stats by its address, not
	 * by a position: follower_127_0_0_1_PORT_lag_records. */
	{
		char key[96];

		snprintf(key, sizeof(key), "follower_127_0_0_1_%d_lag_records",
		    f.s->port);
		assert_true(it_node_kv(l.c, key) == 0);
		snprintf(key, sizeof(key), "follower_127_0_0_1_%d_acked_lsn",
		    f.s->port);
		assert_true(it_node_kv(l.c, key) > 0);
	}

	/* A write sent to the follower: it answers "not leader" with the
	 * leader's URL, and the library sends it there. */
	{
		struct sluice_put_opts o;
		struct sluice_task *t;

		sluice_put_opts_init(&o);
		o.tube = "beta";
		it_rc(f.c, sluice_put(f.c, &o, "redirected", 10, &id, &created),
		    0);
		t = it_peek(l.c, id);
		assert_non_null(t);
		assert_memory_equal(t->payload, "redirected", 10);
		sluice_task_free(t);
	}
	/* A client given both URLs, follower first, lands on the leader. */
	snprintf(urls, sizeof(urls), "%s,%s", f.s->url, l.s->url);
	both = it_client_url(urls);
	assert_non_null(both);
	id = it_put(both, "alpha", "through the follower's URL");
	sluice_close(both);
	it_node_caught_up(&l, &f);
	assert_true(it_state(f.c, id) == SLUICE_READY);
	it_node_same_state(&l, &f);

	/* The follower restarts (kill -9) and goes on from its own log. */
	it_node_kill(&f);
	workload(&l, (int)it_scale(200, 3, 50), 2);
	it_node_start(&f);
	it_node_caught_up(&l, &f);
	it_node_same_state(&l, &f);

	/* Stopped (SIGSTOP) while the leader writes, then resumed. */
	kill(f.s->pid, SIGSTOP);
	workload(&l, (int)it_scale(200, 3, 50), 3);
	kill(f.s->pid, SIGCONT);
	it_node_caught_up(&l, &f);
	it_node_same_state(&l, &f);
	assert_true(it_node_kv(f.c, "lag_records") == 0);
}

static void
test_follower_after_compaction_loads_a_snapshot(void **state)
{
	struct it_node l, f;
	struct sluice_stats *st = NULL;

	it_node_init(state, &l, "leader");
	it_node_init(state, &f, "follower");
	it_node_arg(&l, "--segment-size", "1048576");
	it_node_arg(&l, "--keep-segments", "0");
	it_node_arg(&l, "--fsync", "never");
	it_node_start(&l);
	/* Enough records for several segments; then a snapshot removes the
	 * segments it covers. */
	for (int round = 0; round < 3; round++) {
		tube_churn(&l, 10 + round); /* settings in the snapshot */
		workload_pad(&l, 800, 10 + round, 1024);
		it_rc(l.c, sluice_snapshot(l.c, NULL), 0);
	}
	it_rc(l.c, sluice_stats(l.c, NULL, &st), 0);
	sluice_stats_free(st);
	/* The segments a snapshot covers are removed after its reply, off
	 * the loop: the kill below waits for that, or the follower could
	 * still stream from the first record. */
	for (int64_t end = it_mono_ms() + 20000;
	     it_log_count(l.s, "segments removed") < 1 && it_mono_ms() < end;)
		it_sleep_ms(20);
	assert_true(it_log_count(l.s, "segments removed") >= 1);
	/* A restart empties the leader's memory of recent records: what the
	 * follower needs is in no segment and in no memory. */
	it_node_kill(&l);
	it_node_start(&l);
	it_node_follows(&f, &l);
	it_node_start(&f);
	it_node_caught_up(&l, &f);
	it_node_same_state(&l, &f);
	assert_true(it_log_count(f.s, "loading its snapshot") >= 1);
	/* and it keeps streaming after the snapshot */
	workload(&l, 100, 20);
	it_node_caught_up(&l, &f);
	it_node_same_state(&l, &f);
}

/* ---- failover under load ------------------------------------------------ */

struct loader {
	pthread_t th;
	const char *urls;
	atomic_bool *stop;
	int idx;
	uint64_t acked[20000];
	size_t nacked;
	struct it_errs *errs;
};

static void *
loader_main(void *arg)
{
	struct loader *ld = arg;
	struct sluice_client *c = it_client_url(ld->urls);
	char payload[64];

	if (c == NULL) {
		it_errs_add(ld->errs, "loader %d: no client", ld->idx);
		return NULL;
	}
	sluice_set_timeout(c, 3000);
	/* once the leader is killed each put tries to connect again: the
	 * round waits for the one under way when it stops the loaders */
	sluice_set_connect_timeout(c, 500);
	for (int i = 0; i < 20000 && !atomic_load(ld->stop); i++) {
		struct sluice_put_opts o;
		uint64_t id;
		int created;

		sluice_put_opts_init(&o);
		o.tube = "alpha";
		snprintf(payload, sizeof(payload), "l%d-%d", ld->idx, i);
		if (sluice_put(
		        c, &o, payload, strlen(payload), &id, &created) == 0)
			ld->acked[ld->nacked++] = id;
		else
			it_sleep_ms(5); /* the leader is gone: no spin */
	}
	sluice_close(c);
	return NULL;
}

static void
test_failover_loses_no_acknowledged_put(void **state)
{
	struct it_node n[3];
	int leader = 0, rounds = (int)it_scale(3, 2, 2);
	struct it_errs errs;

	it_errs_init(&errs);
	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "node%d", i);
		it_node_init(state, &n[i], name);
		it_node_arg(&n[i], "--sync-replicas", "1");
		/* a leader's pads reach its followers with its records */
		it_node_arg(&n[i], "--wal-inflight", "3");
	}
	it_node_start(&n[0]);
	it_node_follows(&n[1], &n[0]);
	it_node_follows(&n[2], &n[0]);
	it_node_start(&n[1]);
	it_node_start(&n[2]);

	for (int round = 0; round < rounds; round++) {
		struct loader *ld = calloc(LOADERS, sizeof(*ld));
		atomic_bool stop = false;
		char urls[100];
		int best = -1;
		uint64_t best_lsn = 0;

		assert_non_null(ld);
		snprintf(urls, sizeof(urls), "%s", n[leader].s->url);
		for (int i = 0; i < LOADERS; i++) {
			ld[i].urls = urls;
			ld[i].stop = &stop;
			ld[i].idx = i;
			ld[i].errs = &errs;
			assert_int_equal(pthread_create(&ld[i].th, NULL,
			                     loader_main, &ld[i]),
			    0);
		}
		/* kill -9 at a random moment under load */
		it_sleep_ms(200 + rand() % 600);
		it_node_kill(&n[leader]);
		it_sleep_ms(300);
		atomic_store(&stop, true);
		for (int i = 0; i < LOADERS; i++)
			pthread_join(ld[i].th, NULL);

		/* Promote the most advanced follower. */
		for (int i = 0; i < 3; i++) {
			uint64_t lsn;

			if (i == leader)
				continue;
			lsn = it_node_lsn(&n[i], NULL);
			if (best < 0 || lsn > best_lsn) {
				best = i;
				best_lsn = lsn;
			}
		}
		it_rc(n[best].c, sluice_promote(n[best].c, NULL), 0);
		assert_int_equal(it_node_role(&n[best]), SLUICE_LEADER);
		for (int i = 0; i < LOADERS; i++)
			for (size_t k = 0; k < ld[i].nacked; k++)
				if (it_state(n[best].c, ld[i].acked[k]) == 0)
					fail_msg("round %d: put %" PRIu64
					         " was acknowledged but is not "
					         "on the promoted follower",
					    round, ld[i].acked[k]);
		/* Re-point the other follower; bring the old leader back as
		 * a follower (it may have a tail to cut). */
		for (int i = 0; i < 3; i++) {
			if (i == best || i == leader)
				continue;
			it_rc(n[i].c, sluice_follow(n[i].c, n[best].repl), 0);
		}
		it_node_follows(&n[leader], &n[best]);
		it_node_start(&n[leader]);
		for (int i = 0; i < 3; i++)
			if (i != best)
				it_node_caught_up(&n[best], &n[i]);
		for (int i = 0; i < 3; i++)
			if (i != best)
				it_node_same_state(&n[best], &n[i]);
		leader = best;
		free(ld);
	}
	it_errs_check(&errs);
}

/* ---- epochs ---------------------------------------------------------------
 */

static void
test_lower_epoch_is_refused(void **state)
{
	struct it_node a, b, c;
	uint64_t before;

	it_node_init(state, &a, "a");
	it_node_init(state, &b, "b");
	it_node_init(state, &c, "c");
	it_node_start(&a);
	it_node_follows(&b, &a);
	it_node_start(&b);
	it_put(a.c, "alpha", "one");
	it_node_caught_up(&a, &b);
	/* b leads now, at a higher epoch than a; a, which does not know,
	 * still thinks it leads. c follows b. */
	it_rc(b.c, sluice_promote(b.c, NULL), 0);
	it_put(b.c, "alpha", "two");
	it_node_follows(&c, &b);
	it_node_start(&c);
	it_node_caught_up(&b, &c);
	before = it_node_lsn(&c, NULL);
	/* A leader may not be re-pointed; a follower may. */
	it_rc(b.c, sluice_follow(b.c, a.repl), SLUICE_EINVAL);
	/* Pointing c at a's lower epoch: the stream is refused, and a,
	 * which learns of the higher epoch, stops taking writes. */
	it_rc(c.c, sluice_follow(c.c, a.repl), 0);
	{
		int64_t end = it_mono_ms() + IT_NODE_WAIT_MS;
		struct sluice_put_opts o;
		uint64_t id;
		int created, rc = 0;

		sluice_put_opts_init(&o);
		while (it_mono_ms() < end) {
			rc = sluice_put(a.c, &o, "x", 1, &id, &created);
			if (rc == SLUICE_ENOTLEADER)
				break;
			it_sleep_ms(20);
		}
		assert_int_equal(rc, SLUICE_ENOTLEADER);
	}
	/* c logs the refusal when the answer reaches it */
	for (int i = 0; i < 1000 &&
	     it_log_count(c.s,
	         "older than the "
	         "follower") == 0;
	     i++)
		it_sleep_ms(10);
	assert_true(it_log_count(c.s, "older than the follower") >= 1);
	assert_true(it_log_count(a.s, "another node leads") >= 1);
	assert_true(it_node_lsn(&c, NULL) == before);
	/* a fenced leader may follow the new one, and catches up */
	it_rc(a.c, sluice_follow(a.c, b.repl), 0);
	it_node_caught_up(&b, &a);
	it_node_same_state(&b, &a);
}

/* The leader writes records its followers never get (they are stopped),
 * dies, and comes back as a follower of the promoted one: it cuts those
 * records (into lost+found) and ends with the new leader's state. */
static void
test_old_leader_cuts_its_divergent_tail(void **state)
{
	struct it_node a, b;

	it_node_init(state, &a, "a");
	it_node_init(state, &b, "b");
	it_node_start(&a);
	it_node_follows(&b, &a);
	it_node_start(&b);
	workload(&a, 50, 30);
	it_node_caught_up(&a, &b);
	kill(b.s->pid, SIGSTOP);
	for (int i = 0; i < 20; i++)
		it_put(a.c, "alpha", "only on the old leader");
	it_node_kill(&a);
	kill(b.s->pid, SIGCONT);
	it_rc(b.c, sluice_promote(b.c, NULL), 0);
	it_put(b.c, "beta", "on the new leader");
	it_node_follows(&a, &b);
	it_node_start(&a);
	it_node_caught_up(&b, &a);
	it_node_same_state(&b, &a);
	assert_true(it_log_count(a.s, "saved to") >= 1);
	assert_int_equal(it_node_role(&a), SLUICE_FOLLOWER);
}

/* Promotion follows the restart rule: a session lease (its session was
 * the old leader's) returns to ready; a detached lease stays valid, and
 * its holder acks on the new leader. */
static void
test_leases_across_a_promotion(void **state)
{
	struct it_node a, b;
	struct sluice_task *det, *ses;
	uint64_t det_id, ses_id;

	it_node_init(state, &a, "a");
	it_node_init(state, &b, "b");
	it_node_start(&a);
	it_node_follows(&b, &a);
	it_node_start(&b);
	det_id = it_put(a.c, "alpha", "detached");
	ses_id = it_put(a.c, "beta", "session");
	det = it_take(a.c, "alpha", 0, 1);
	ses = it_take(a.c, "beta", 0, 0);
	assert_true(det->id == det_id && ses->id == ses_id);
	it_node_caught_up(&a, &b);
	assert_int_equal(it_state(b.c, det_id), SLUICE_TAKEN);
	it_node_kill(&a);
	it_rc(b.c, sluice_promote(b.c, NULL), 0);
	assert_int_equal(it_state(b.c, ses_id), SLUICE_READY);
	assert_int_equal(it_state(b.c, det_id), SLUICE_TAKEN);
	it_rc(b.c, sluice_ack(b.c, det->id, det->lease, NULL, NULL), 0);
	assert_int_equal(it_state(b.c, det_id), 0);
	sluice_task_free(det);
	sluice_task_free(ses);
}

/* ---- a batch put's record ------------------------------------------------ */

/* Counts the lines of `sluice-log dump DATA --type TYPE`. */
static int
dump_count(const char *data, const char *type)
{
	static char out[1 << 20];
	int n = 0;

	assert_int_equal(
	    it_log_tool(out, sizeof(out), "dump", data, "--type", type, NULL),
	    0);
	for (const char *p = out; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	return n;
}

/* A batch put's plain puts of a tube in a row are one PUTS record; a
 * follower applies it into the leader's state, and after kill -9 (from
 * a snapshot that holds more tasks than LSNs) every acknowledged item is
 * there under its id, its key still deduplicating.
 * Between the runs: an item of another tube (a run of one: a PUT), a
 * key already put in the batch (nothing new), one with a group (its own
 * PUT_G). */
static void
test_batch_put_record_on_a_follower_and_after_a_kill(void **state)
{
	enum { N = 300 };
	static struct sluice_batch_item items[N];
	static char payloads[N][32], keys[N][16];
	struct it_node l, f;
	struct sluice_put_opts o;
	uint64_t id, lsn = 0;
	int created;

	it_node_init(state, &l, "leader");
	it_node_init(state, &f, "follower");
	it_node_start(&l);
	it_node_follows(&f, &l);
	it_node_start(&f);
	for (int i = 0; i < N; i++) {
		struct sluice_put_opts *io = &items[i].opts;

		sluice_put_opts_init(io);
		io->tube = i == 150 ? "beta" : "alpha";
		io->priority = (uint32_t)(i % 5);
		if (i % 7 == 0)
			io->delay_ms = 3600000;
		if (i % 10 == 3) {
			snprintf(keys[i], sizeof(keys[i]), "k%d", i);
			io->key = keys[i];
		}
		if (i == 200)
			io->key = keys[13];
		if (i == 250)
			io->group = "g1";
		snprintf(payloads[i], sizeof(payloads[i]), "batch item %d", i);
		items[i].payload = payloads[i];
		items[i].len = strlen(payloads[i]);
	}
	it_rc(l.c, sluice_put_batch(l.c, items, N), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(items[i].rc, 0);
		assert_int_equal(items[i].created, i != 200);
	}
	assert_true(items[200].id == items[13].id);
	it_node_caught_up(&l, &f);
	it_node_same_state(&l, &f);
	/* the restart loads a snapshot of 299 tasks at LSN 6 */
	it_rc(l.c, sluice_snapshot(l.c, &lsn), 0);
	assert_true(lsn < N);

	it_node_kill(&l);
	it_verify_startable(l.s->data);
	assert_int_equal(dump_count(l.s->data, "PUTS"), 3);
	assert_int_equal(dump_count(l.s->data, "PUT"), 1);
	it_node_start(&l);
	for (int i = 0; i < N; i++) {
		struct sluice_task *t = it_peek(l.c, items[i].id);

		assert_non_null(t);
		if (i != 200)
			assert_memory_equal(
			    t->payload, payloads[i], strlen(payloads[i]));
		sluice_task_free(t);
	}
	sluice_put_opts_init(&o);
	o.tube = "alpha";
	o.key = keys[23];
	it_rc(l.c, sluice_put(l.c, &o, "again", 5, &id, &created), 0);
	assert_true(id == items[23].id && !created);
	it_node_caught_up(&l, &f);
	it_node_same_state(&l, &f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_late_follower_catches_up_and_refuses_writes, it_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_follower_after_compaction_loads_a_snapshot, it_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_failover_loses_no_acknowledged_put, it_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_old_leader_cuts_its_divergent_tail, it_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_leases_across_a_promotion, it_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_lower_epoch_is_refused, it_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_batch_put_record_on_a_follower_and_after_a_kill,
		    it_setup, it_node_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
