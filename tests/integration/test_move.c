/* A tube moved between clusters (`sluice tube move`, docs/scaling.md)
 * against real processes on 127.0.0.1: one etcd, a source cluster of a
 * leader and a follower (--etcd, --sync-replicas 1) and a target cluster
 * of one node.
 *
 *   - a tube of 20,000 tasks (10,000 sanitized), a thousand of them
 *     delayed and all keyed, moved while three clients put, take and ack
 *     through the map (sluice_open_map on etcd); the mover (the real
 *     `sluice tube move`) is killed with kill -9 in the middle and run
 *     again, then the target's node is killed with kill -9 and
 *     restarted, then the source's leader is killed with kill -9 and the
 *     follower takes over while the mover goes on; the move ends with
 *     the map naming the target alone and the source holding nothing of
 *     the tube;
 *   - with SLUICE_MOVE_ROUNDS=N (0 in make test), N more moves back and
 *     forth under the same load, each with a kill -9 in its middle (the
 *     mover, the source cluster's leader, or the target's node);
 *   - then everything left is drained at the target, and every put a
 *     client saw acknowledged was acked exactly once (each task's key is
 *     its identity: a key is never live twice, so no task is there twice
 *     and none was lost), no acked task came back, the delayed tasks
 *     kept their run time (none was handed out early), the keyed puts
 *     sent again during the move named one task each, the tube's
 *     settings came along, and a put of the key of any task acked (at
 *     the source before or during the move, or at the target) makes
 *     nothing: its reservation came along;
 *   - a move refuses bad input, a target with no node, and a second
 *     target while one move is on; a tube already on its target moves
 *     nothing; a plain drain (the map names a cluster draining, nobody
 *     moves) ends by itself once the draining cluster holds nothing of
 *     it;
 *   - a copy carries keys, priorities, run times, groups, attempts and a
 *     buried task's error, through the tool and back by the library;
 *   - a put and a take routed right after the map gave their tube to
 *     another cluster (a move's first step), by a handle that read the
 *     new map before the new owner's node did, are served, not refused
 *     SLUICE_EMOVED (the chaos run with moves found them refused for the
 *     first 200 ms of every move).
 *
 * test_move_carry.c checks more of what a move carries (key
 * reservations, group settings, a workflow under way); the helpers both
 * use are it_move's, their etcd it_etcd's. Exits 77 when `etcd` is not
 * installed. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "etcd/etcd.h"
#include "it_etcd.h"
#include "it_move.h"
#include "it_node.h"

enum {
	LOADERS = 3,
	LOAD_MAX = 200000, /* a loader's puts at most */
	DELAYED = 1000,    /* of the first tasks, delayed by DELAY_MS */
	DELAY_MS = 8000,
	BATCH = 1000, /* tasks per batch put */
};

/* What the clients saw, by a task's identity (its key "k<N>", its
 * payload "<N>"): the first ntasks are put before the move, the loaders'
 * after, LOAD_MAX apart. */
struct book {
	size_t ninit;
	size_t n;
	_Atomic uint8_t *put_ok; /* the put was acknowledged */
	_Atomic uint32_t *acked; /* acks acknowledged */
	_Atomic uint8_t *unsure; /* an ack whose reply was lost: it may
	                            have been done */
	_Atomic uint64_t bad;    /* an ack of a task acked before */
	_Atomic uint64_t early;  /* a delayed task handed out early */
	_Atomic uint64_t puts, acks, errs;
	int64_t due_ms; /* wall ms the delayed ones are due */
	atomic_bool stop;
	char why[256];
};

static struct book bk;

static uint64_t
ident_of(const struct sluice_task *t)
{
	char buf[32];
	size_t n =
	    t->payload_len < sizeof(buf) - 1 ? t->payload_len : sizeof(buf) - 1;

	memcpy(buf, t->payload, n);
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

/* Notes the ack of task `t` that the server acknowledged. */
static void
note_ack(const struct sluice_task *t)
{
	uint64_t id = ident_of(t);

	if (id >= bk.n)
		return;
	if (atomic_fetch_add(&bk.acked[id], 1) > 0 &&
	    atomic_fetch_add(&bk.bad, 1) == 0)
		snprintf(bk.why, sizeof(bk.why),
		    "task k%" PRIu64 " (id %" PRIu64 ") acked twice", id,
		    t->id);
	atomic_fetch_add(&bk.acks, 1);
}

static void
note_take(const struct sluice_task *t)
{
	uint64_t id = ident_of(t);

	/* the delayed ones: due at due_ms; 200 ms of clock reading apart */
	if (id < DELAYED && it_wall_ms() + 200 < bk.due_ms)
		atomic_fetch_add(&bk.early, 1);
}

static int
put_one(struct sluice_router *r, uint64_t id, int64_t delay_ms, int *created)
{
	struct sluice_put_opts o;
	struct sluice_put_result res;
	char key[32], pl[32];
	int rc;

	sluice_put_opts_init(&o);
	o.tube = "mv";
	snprintf(key, sizeof(key), "k%" PRIu64, id);
	snprintf(pl, sizeof(pl), "%" PRIu64, id);
	o.key = key;
	o.delay_ms = delay_ms > 0 ? delay_ms : 0;
	rc = sluice_router_put(r, &o, pl, strlen(pl), &res);
	if (rc == 0) {
		atomic_store(&bk.put_ok[id], 1);
		atomic_fetch_add(&bk.puts, 1);
		if (created != NULL)
			*created = res.created;
	}
	return rc;
}

/* Takes up to `max` tasks of "mv" and acks each; the number taken. */
static size_t
take_ack(struct sluice_router *r, uint32_t max, uint64_t wait_ms)
{
	const char *tubes[] = { "mv" };
	struct sluice_take_opts o = { tubes, 1, wait_ms, max, 0, 0, 0 };
	struct sluice_task *ts = NULL;
	size_t n = 0;

	int rc = sluice_router_take(r, &o, &ts, &n);

	if (rc != 0) {
		if (rc != SLUICE_ETIMEDOUT && atomic_load(&bk.stop))
			printf("take: %s: %s\n", sluice_strerror(rc),
			    sluice_router_errmsg(r));
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		note_take(&ts[i]);
		if (sluice_router_ack(r, &ts[i], NULL, NULL) == 0) {
			note_ack(&ts[i]);
		} else {
			atomic_fetch_add(&bk.errs, 1);
			if (ident_of(&ts[i]) < bk.n)
				atomic_store(&bk.unsure[ident_of(&ts[i])], 1);
		}
	}
	sluice_task_free(ts);
	return n;
}

/* Takes up to 1000 tasks of "mv" at node `c` and acks them in one
 * request; the number taken. */
static size_t
drain_some(struct sluice_client *c)
{
	static struct sluice_lease ls[1000];
	static struct sluice_result rs[1000];
	const char *tubes[] = { "mv" };
	struct sluice_take_opts o = { tubes, 1, 200, 1000, 0, 0, 0 };
	struct sluice_task *ts = NULL;
	size_t n = 0;

	if (sluice_take(c, &o, &ts, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		note_take(&ts[i]);
		ls[i].id = ts[i].id;
		ls[i].lease = ts[i].lease;
	}
	if (sluice_ack_batch(c, ls, n, rs) == 0)
		for (size_t i = 0; i < n; i++)
			if (rs[i].rc == 0)
				note_ack(&ts[i]);
	sluice_task_free(ts);
	return n;
}

static void *
loader(void *arg)
{
	uint64_t base = bk.ninit + (uint64_t)(uintptr_t)arg * LOAD_MAX;
	struct sluice_router *r;
	uint64_t seq = 0;

	if (sluice_open_map(it_etcd_map_url, &r) != 0)
		return NULL;
	sluice_router_set_timeout(r, (int)it_move_scaled(IT_MOVE_ELECT_MS));
	while (!atomic_load(&bk.stop) && seq < LOAD_MAX) {
		if (put_one(r, base + seq++, 0, NULL) != 0)
			atomic_fetch_add(&bk.errs, 1);
		take_ack(r, 4, 20);
	}
	sluice_router_close(r);
	return NULL;
}

/* `sluice -s etcd://... tube move mv dst --batch N --quiet`, in the
 * background. */
static pid_t
mover_start_to(const char *to, const char *batch)
{
	static const char *args[] = { "tube", "move", "mv", NULL, "--batch",
		NULL, "--quiet", NULL };
	char *argv[16];
	pid_t pid;
	int i = 0;

	args[3] = to;
	args[5] = batch;
	argv[i++] = (char *)t_bin("sluice");
	argv[i++] = "-s";
	argv[i++] = it_etcd_map_url;
	for (int k = 0; args[k] != NULL; k++)
		argv[i++] = (char *)args[k];
	argv[i] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	it_track_pid(pid);
	return pid;
}

static pid_t
mover_start(const char *batch)
{
	return mover_start_to("dst", batch);
}

static uint64_t
live(struct sluice_client *c)
{
	return it_move_live_in(c, "mv");
}

/* Waits until the target holds `n` tasks of "mv" (copies, and puts the
 * clients sent it), while the mover `pid` runs. False when the mover
 * ended first. */
static bool
target_reaches(struct it_node *dst, uint64_t n, pid_t pid)
{
	int64_t end = it_mono_ms() + it_move_scaled(120000);
	int status;

	while (it_mono_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return false;
		if (live(dst->c) >= n)
			return true;
		it_sleep_ms(5);
	}
	fail_msg("the target did not reach %" PRIu64 " tasks", n);
	return false;
}

static int
mover_wait(pid_t pid, int64_t ms)
{
	int64_t end = it_mono_ms() + ms;
	int status;

	while (it_mono_ms() < end) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		it_sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail_msg("the mover did not end within %" PRId64 " ms", ms);
	return -1;
}

/* The node of the source cluster that leads (s0 or s1). */
static struct it_node *
src_leader(struct it_node *s0, struct it_node *s1)
{
	it_move_wait_role(
	    it_node_role(s0) == SLUICE_LEADER ? s0 : s1, SLUICE_LEADER);
	return it_node_role(s0) == SLUICE_LEADER ? s0 : s1;
}

/* SLUICE_MOVE_ROUNDS more moves under the load (0 in make test; made
 * even: the tube ends on dst), back and forth, each with a kill -9 in
 * its middle: of the mover (then run again), of the source cluster's
 * leader (its follower takes over, it comes back), or of the target's
 * node (restarted). */
static void
more_rounds(struct it_node *s0, struct it_node *s1, struct it_node *d)
{
	const char *env = getenv("SLUICE_MOVE_ROUNDS");
	int rounds = env != NULL ? atoi(env) : 0;

	rounds += rounds % 2;
	for (int k = 0; k < rounds; k++) {
		bool back = k % 2 == 0; /* to src */
		struct it_node *from = back ? d : src_leader(s0, s1);
		uint64_t here = live(from->c);
		int64_t t0 = it_mono_ms(), end = t0 + it_move_scaled(120000);
		pid_t pid = mover_start_to(back ? "src" : "dst", "200");
		int kind = k % 3, status;
		bool ended = false;

		while (
		    it_mono_ms() < end && !ended && live(from->c) > here / 2) {
			ended = waitpid(pid, &status, WNOHANG) == pid;
			it_sleep_ms(5);
		}
		if (!ended && kind == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			pid = mover_start_to(back ? "src" : "dst", "200");
		} else if (!ended && kind == 1) {
			struct it_node *l = src_leader(s0, s1);
			struct it_node *f = l == s0 ? s1 : s0;

			it_node_kill(l);
			it_move_wait_role(f, SLUICE_LEADER);
			it_node_start(l);
		} else if (!ended) {
			it_node_kill(d);
			it_node_start(d);
		}
		if (!ended)
			assert_int_equal(
			    mover_wait(pid, it_move_scaled(180000)), 0);
		else
			assert_true(
			    WIFEXITED(status) && WEXITSTATUS(status) == 0);
		printf("round %d: to %s, %" PRIu64 " tasks, kill %s, %" PRId64
		       " ms\n",
		    k + 1, back ? "src" : "dst", here,
		    ended           ? "none (it ended first)"
		        : kind == 0 ? "of the mover"
		        : kind == 1 ? "of src's leader"
		                    : "of dst's node",
		    it_mono_ms() - t0);
	}
	if (rounds > 0)
		it_move_wait_writes(src_leader(s0, s1));
}

/* The first tasks: all keyed, DELAYED of them delayed, in batch puts
 * through the map (to the source). */
static void
put_initial(struct sluice_router *r)
{
	static struct sluice_batch_item items[BATCH];
	static char keys[BATCH][24], pls[BATCH][24];

	for (size_t at = 0; at < bk.ninit; at += BATCH) {
		size_t n = bk.ninit - at < BATCH ? bk.ninit - at : BATCH;

		for (size_t i = 0; i < n; i++) {
			uint64_t id = at + i;

			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = "mv";
			snprintf(keys[i], sizeof(keys[i]), "k%" PRIu64, id);
			snprintf(pls[i], sizeof(pls[i]), "%" PRIu64, id);
			items[i].opts.key = keys[i];
			if (id < DELAYED)
				items[i].opts.delay_ms = DELAY_MS;
			items[i].payload = pls[i];
			items[i].len = strlen(pls[i]);
		}
		assert_int_equal(sluice_router_put_batch(r, items, n), 0);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(items[i].rc, 0);
			atomic_store(&bk.put_ok[at + i], 1);
		}
	}
}

/* Puts again, through the map, the key of every task whose ack was
 * acknowledged: the number of puts that made a task (0: every key is
 * still reserved where the tube is now). */
static uint64_t
reput_acked(struct sluice_router *r)
{
	static struct sluice_batch_item items[BATCH];
	static char keys[BATCH][24];
	uint64_t made = 0;
	size_t k = 0;

	for (size_t id = 0; id <= bk.n; id++) {
		if (k == BATCH || (id == bk.n && k > 0)) {
			assert_int_equal(
			    sluice_router_put_batch(r, items, k), 0);
			for (size_t i = 0; i < k; i++) {
				assert_int_equal(items[i].rc, 0);
				made += items[i].created != 0;
			}
			k = 0;
		}
		if (id == bk.n || atomic_load(&bk.acked[id]) == 0)
			continue;
		sluice_put_opts_init(&items[k].opts);
		items[k].opts.tube = "mv";
		snprintf(keys[k], sizeof(keys[k]), "k%zu", id);
		items[k].opts.key = keys[k];
		items[k].payload = "again";
		items[k].len = 5;
		k++;
	}
	return made;
}

static void
book_init(size_t ninit)
{
	memset(&bk, 0, sizeof(bk));
	bk.ninit = ninit;
	bk.n = ninit + LOADERS * (size_t)LOAD_MAX;
	bk.put_ok = calloc(bk.n, sizeof(*bk.put_ok));
	bk.acked = calloc(bk.n, sizeof(*bk.acked));
	bk.unsure = calloc(bk.n, sizeof(*bk.unsure));
	assert_non_null(bk.unsure);
	assert_non_null(bk.put_ok);
	assert_non_null(bk.acked);
}

static void
book_free(void)
{
	free((void *)bk.put_ok);
	free((void *)bk.acked);
	free((void *)bk.unsure);
}

static void
test_move_under_load_and_kills(void **state)
{
	struct it_node s0, s1, d;
	struct it_node *leader, *follower;
	struct sluice_router *r;
	struct sluice_cluster_map *m;
	struct sluice_tube_conf conf;
	pthread_t th[LOADERS];
	size_t ninit = (size_t)it_scale(20000, 2, 10000);
	uint64_t rev = 0, lost = 0, missing = 0, unsure = 0, reput_new = 0;
	int64_t t0, t_move;
	pid_t pid;
	int rc;

	book_init(ninit);
	it_move_node_init(state, &s0, "s0", "src", true);
	it_move_node_init(state, &s1, "s1", "src", true);
	it_move_node_init(state, &d, "d0", "dst", false);
	it_node_start(&s0);
	it_move_wait_role(&s0, SLUICE_LEADER);
	it_node_start(&s1);
	it_move_wait_role(&s1, SLUICE_FOLLOWER);
	it_move_wait_writes(&s0); /* its follower holds what it writes */
	it_node_start(&d);
	it_move_wait_writes(&d);

	r = it_move_router();
	assert_int_equal(sluice_router_map_set(r, "", "src", NULL, 0, &rev), 0);
	/* a short ttr, a tube setting the move carries along: a lease lost
	 * in the leader's kill ends soon */
	memset(&conf, 0, sizeof(conf));
	conf.set = SLUICE_TS_TTR;
	conf.ttr_ms = 3000;
	it_rc(s0.c, sluice_tube_set(s0.c, "mv", &conf, 0, NULL), 0);
	t0 = it_mono_ms();
	bk.due_ms = it_wall_ms() + DELAY_MS;
	put_initial(r);
	printf("%zu tasks put in %" PRId64 " ms\n", ninit, it_mono_ms() - t0);

	for (int i = 0; i < LOADERS; i++)
		assert_int_equal(
		    pthread_create(&th[i], NULL, loader, (void *)(uintptr_t)i),
		    0);
	it_sleep_ms(300);

	/* the mover, killed once the target holds a tenth */
	t_move = it_mono_ms();
	pid = mover_start("200");
	if (!target_reaches(&d, ninit / 10, pid))
		fail_msg("the move ended before its kill");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("mover killed at %" PRIu64 " tasks on the target\n", live(d.c));
	/* the keyed delayed tasks put again, due when they are: to the
	 * target, one task each with the copy to come */
	for (uint64_t id = 0; id < DELAYED; id++) {
		int created = 0;

		assert_int_equal(
		    put_one(r, id, bk.due_ms - it_wall_ms(), &created), 0);
		reput_new += created != 0;
	}

	/* run again; the target's node killed and restarted when it holds
	 * a third, the source's leader killed when it holds half */
	pid = mover_start("200");
	if (!target_reaches(&d, ninit / 3, pid))
		fail_msg("the move ended before the target's kill");
	it_node_kill(&d);
	printf("target node killed and restarted\n");
	it_node_start(&d);
	it_move_wait_writes_to(&d, "mv.probe"); /* a tube of the moving entry */
	if (!target_reaches(&d, ninit / 2, pid))
		fail_msg("the move ended before the leader's kill");
	leader = it_node_role(&s0) == SLUICE_LEADER ? &s0 : &s1;
	follower = leader == &s0 ? &s1 : &s0;
	it_node_kill(leader);
	printf("source leader %s killed at %" PRIu64 " tasks on the target\n",
	    leader->s->url, live(d.c));
	/* the follower takes over; the killed node comes back as its
	 * follower (with --sync-replicas 1 a leader alone takes no write) */
	it_move_wait_role(follower, SLUICE_LEADER);
	it_node_start(leader);
	rc = mover_wait(pid, it_move_scaled(180000));
	assert_int_equal(rc, 0);
	printf("move done in %" PRId64 " ms (three kills)\n",
	    it_mono_ms() - t_move);
	it_move_wait_writes(follower);

	more_rounds(&s0, &s1, &d);

	atomic_store(&bk.stop, true);
	for (int i = 0; i < LOADERS; i++)
		pthread_join(th[i], NULL);

	/* the map names the target alone; the source holds nothing */
	assert_int_equal(sluice_router_map(r, &m), 0);
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->entries[i].prefix, "mv") == 0) {
			assert_string_equal(m->entries[i].cluster, "dst");
			assert_int_equal(m->entries[i].ndraining, 0);
			rev = 1;
		}
	sluice_cluster_map_free(m);
	assert_int_equal(rev, 1);
	assert_int_equal(live(follower->c), 0);
	it_rc(d.c, sluice_tube_show(d.c, "mv", &conf), 0);
	assert_true((conf.set & SLUICE_TS_TTR) != 0);
	assert_int_equal(conf.ttr_ms, 3000);

	/* drain the target: every task acked once */
	{
		int64_t end = it_mono_ms() + it_move_scaled(60000);

		while (it_mono_ms() < end) {
			if (drain_some(d.c) == 0 && live(d.c) == 0)
				break;
		}
		if (live(d.c) != 0) {
			struct it_counts k = it_counts(d.c, "mv");

			fail_msg("the target still holds ready %" PRIu64
			         " delayed %" PRIu64 " taken %" PRIu64
			         " buried %" PRIu64,
			    k.ready, k.delayed, k.taken, k.buried);
		}
	}
	for (size_t id = 0; id < bk.n; id++) {
		if (atomic_load(&bk.put_ok[id]) &&
		    atomic_load(&bk.acked[id]) == 0) {
			if (atomic_load(&bk.unsure[id]))
				unsure++; /* its ack may have been done */
			else if (missing++ < 5)
				printf("missing: k%zu\n", id);
		}
		if (atomic_load(&bk.acked[id]) > 1)
			lost++; /* counted in bad too */
	}
	printf("puts %" PRIu64 " acks %" PRIu64 " errors %" PRIu64
	       " missing %" PRIu64
	       " (gone after an ack whose reply was lost %" PRIu64
	       ") acked twice %" PRIu64 " early %" PRIu64
	       " re-puts that made a task %" PRIu64 "\n",
	    atomic_load(&bk.puts), atomic_load(&bk.acks), atomic_load(&bk.errs),
	    missing, unsure, atomic_load(&bk.bad), atomic_load(&bk.early),
	    reput_new);
	if (atomic_load(&bk.bad) > 0)
		fail_msg("%s", bk.why);
	assert_int_equal(missing, 0);
	assert_int_equal(lost, 0);
	assert_int_equal(atomic_load(&bk.early), 0);
	reput_new = reput_acked(r);
	printf("puts again of the %" PRIu64 " keys acked: %" PRIu64
	       " made a task\n",
	    atomic_load(&bk.acks), reput_new);
	assert_int_equal(reput_new, 0);
	sluice_router_close(r);
	book_free();
}

/* How many clusters the map's entry of `prefix` drains (-1: none). */
static int
drains(struct sluice_router *r, const char *prefix)
{
	struct sluice_cluster_map *m;
	int k = -1;

	assert_int_equal(sluice_router_map(r, &m), 0);
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->entries[i].prefix, prefix) == 0)
			k = (int)m->entries[i].ndraining;
	sluice_cluster_map_free(m);
	return k;
}

/* A plain drain ends by itself: cluster src2 (node `a`) drains r.d
 * while it holds tasks of it, and leaves the draining list once they are
 * acked, though an operator wrote the entry by hand (test_move_refusals'
 * clusters). */
static void
drain_ends_by_itself(
    struct it_node *a, struct sluice_router *r, struct sluice_put_opts *po)
{
	uint64_t id;
	int code;

	po->tube = "r.d";
	for (int i = 0; i < 3; i++)
		it_rc(a->c, sluice_put(a->c, po, "d", 1, &id, &code), 0);
	/* the entry written by hand, spaced as the map never writes it,
	 * with the marker moved so that the nodes read it at once */
	{
		static const char hand[] =
		    "{ \"cluster\": \"dst2\", \"draining\": [ \"src2\" ] }";
		char err[256];
		struct etcd *e = etcd_new(it_etcd.url, 2000, err, sizeof(err));

		assert_non_null(e);
		assert_int_equal(etcd_put(e, "/sluice-map/tubes/r.d", hand,
		                     sizeof(hand) - 1, 0),
		    0);
		assert_int_equal(
		    etcd_put(e, "/sluice-map/revision", "r.d", 3, 0), 0);
		etcd_delete(e);
	}
	it_sleep_ms(1500); /* a look or more of src2's: not over yet */
	assert_int_equal(drains(r, "r.d"), 1);
	for (int i = 0; i < 3; i++) {
		const char *tubes[] = { "r.d" };
		struct sluice_take_opts o = { tubes, 1, 1000, 1, 0, 0, 0 };
		struct sluice_task *t = NULL;
		size_t n = 0;

		assert_int_equal(sluice_router_take(r, &o, &t, &n), 0);
		assert_int_equal(n, 1);
		assert_string_equal(t[0].cluster, "src2");
		assert_int_equal(sluice_router_ack(r, &t[0], NULL, NULL), 0);
		sluice_task_free(t);
	}
	{
		int64_t end = it_mono_ms() + it_move_scaled(10000);

		while (drains(r, "r.d") != 0 && it_mono_ms() < end)
			it_sleep_ms(50);
	}
	assert_int_equal(drains(r, "r.d"), 0);
	printf("a drain ended by itself\n");
}

/* Bad input; a second target while a move is on; nothing to move; a
 * plain drain that ends by itself. */
static void
test_move_refusals(void **state)
{
	struct it_node a, b;
	struct sluice_router *r;
	struct sluice_move_progress p;
	uint64_t rev;
	const char *draining[] = { "src2" };
	struct sluice_put_opts po;
	uint64_t id;
	int code;

	sluice_put_opts_init(&po);
	po.tube = "r.y";

	it_move_node_init(state, &a, "a", "src2", false);
	it_move_node_init(state, &b, "b", "dst2", false);
	it_node_start_all((struct it_node *const[]) { &a, &b }, 2);
	it_move_wait_writes(&a);
	it_move_wait_writes(&b);
	r = it_move_router();
	assert_int_equal(
	    sluice_router_map_set(r, "r.", "src2", NULL, 0, &rev), 0);
	assert_int_equal(
	    sluice_router_move(r, "", "dst2", NULL, NULL), SLUICE_ETUBE);
	assert_int_equal(sluice_router_move(r, "r.x", "bad name", NULL, NULL),
	    SLUICE_EINVAL);
	/* a cluster with no node: refused, the map as it was */
	assert_int_equal(
	    sluice_router_move(r, "r.x", "nosuch", NULL, NULL), SLUICE_ECONN);
	assert_non_null(strstr(sluice_router_errmsg(r), "no leader"));
	{
		struct sluice_cluster_map *m;

		assert_int_equal(sluice_router_map(r, &m), 0);
		for (size_t i = 0; i < m->n; i++)
			assert_string_not_equal(m->entries[i].prefix, "r.x");
		sluice_cluster_map_free(m);
	}
	/* a move under way to dst2 (the map drains src2, which holds a
	 * task of it: its drain does not end by itself) */
	it_rc(a.c, sluice_put(a.c, &po, "y", 1, &id, &code), 0);
	assert_int_equal(
	    sluice_router_map_set(r, "r.y", "dst2", draining, 1, &rev), 0);
	assert_int_equal(
	    sluice_router_move(r, "r.y", "src2", NULL, NULL), SLUICE_ESTATE);
	assert_non_null(strstr(sluice_router_errmsg(r), "moving to dst2"));
	/* the same target resumes it: its task is copied, the mark goes */
	assert_int_equal(sluice_router_move(r, "r.y", "dst2", NULL, &p), 0);
	assert_int_equal(p.done, 1);
	assert_int_equal(p.copied, 1);
	/* already there: nothing moves */
	assert_int_equal(sluice_router_move(r, "r.y", "dst2", NULL, &p), 0);
	assert_int_equal(p.done, 1);
	/* the CLI says what is wrong */
	code = it_cli(it_etcd_map_url, NULL, NULL, 0, it_err, sizeof(it_err),
	    "tube", "move", "r.z", NULL);
	assert_int_equal(code, 2);
	assert_non_null(strstr(it_err, "TUBE and CLUSTER"));
	code = it_cli(it_etcd_map_url, NULL, it_out, sizeof(it_out), it_err,
	    sizeof(it_err), "tube", "move", "r.q", "dst2", "--quiet", NULL);
	assert_int_equal(code, 0);
	assert_non_null(strstr(it_out, "moved 'r.q' to dst2: 0 tasks copied"));

	drain_ends_by_itself(&a, r, &po);
	sluice_router_close(r);
}

/* Puts `n` tasks into tube "cr" at node `c` in batches: keyed k<i>,
 * priority i % 7, every tenth delayed an hour, every fifth in group g<i%3>. */
static void
put_carried(struct sluice_client *c, size_t n)
{
	static struct sluice_batch_item items[BATCH];
	static char keys[BATCH][24], groups[BATCH][8];

	for (size_t at = 0; at < n; at += BATCH) {
		size_t k = n - at < BATCH ? n - at : BATCH;

		for (size_t i = 0; i < k; i++) {
			size_t id = at + i;

			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = "cr";
			snprintf(keys[i], sizeof(keys[i]), "k%zu", id);
			items[i].opts.key = keys[i];
			items[i].opts.priority = (uint32_t)(id % 7);
			if (id % 10 == 0)
				items[i].opts.delay_ms = 3600 * 1000;
			if (id % 5 == 1) {
				snprintf(groups[i], sizeof(groups[i]), "g%zu",
				    id % 3);
				items[i].opts.group = groups[i];
			}
			items[i].payload = keys[i];
			items[i].len = strlen(keys[i]);
		}
		it_rc(c, sluice_put_batch(c, items, k), 0);
		for (size_t i = 0; i < k; i++)
			assert_int_equal(items[i].rc, 0);
	}
}

/* What the copy carries, through the real tool and back by the library:
 * keys, priorities, delays (run times), groups, attempts, a buried task
 * with its last error; a move back to where the tube was; the figure of
 * a move without load. */
static void
test_move_carries(void **state)
{
	struct it_node a, b;
	struct sluice_router *r;
	struct sluice_move_progress p;
	struct sluice_task *t, *held, *before_k10;
	const char *tubes[] = { "cr" };
	struct sluice_take_opts o = { tubes, 1, 0, 1, 0, 0, 0 };
	size_t n = (size_t)it_scale(20000, 5, 2000), got;
	uint64_t rev, bury_id = 0;
	int64_t t0;
	int code;

	it_move_node_init(state, &a, "ca3", "c3a", false);
	it_move_node_init(state, &b, "cb3", "c3b", false);
	it_node_start_all((struct it_node *const[]) { &a, &b }, 2);
	it_move_wait_writes(&a);
	it_move_wait_writes(&b);
	r = it_move_router();
	assert_int_equal(
	    sluice_router_map_set(r, "cr", "c3a", NULL, 0, &rev), 0);
	put_carried(a.c, n);
	/* a task taken and released, then one taken and buried with an
	 * error (the same one, or the next in line) */
	for (int i = 0; i < 2; i++) {
		it_rc(a.c, sluice_take(a.c, &o, &t, &got), 0);
		if (i == 0)
			it_rc(a.c,
			    sluice_release(
			        a.c, t[0].id, t[0].lease, 0, -1, NULL),
			    0);
		else
			it_rc(a.c,
			    sluice_bury_error(a.c, t[0].id, t[0].lease,
			        "the printer is on fire", NULL),
			    0);
		bury_id = t[0].id;
		sluice_task_free(t);
	}
	it_rc(a.c, sluice_peek(a.c, bury_id, &held), 0);
	it_rc(a.c, sluice_peek_key(a.c, "cr", "k10", &before_k10), 0);

	t0 = it_mono_ms();
	code = it_cli(it_etcd_map_url, NULL, it_out, sizeof(it_out), it_err,
	    sizeof(it_err), "tube", "move", "cr", "c3b", "--quiet", "--json",
	    NULL);
	if (code != 0)
		fail_msg("tube move: %s", it_err);
	printf("%zu tasks moved by the tool in %" PRId64 " ms, no load: %s", n,
	    it_mono_ms() - t0, it_out);
	assert_non_null(strstr(it_out, "\"copied\":"));
	assert_non_null(strstr(it_out, "\"keys\":0,\"groups\":0"));
	assert_int_equal(it_move_live_in(a.c, "cr"), 0);
	{
		struct it_counts k = it_counts(b.c, "cr");
		struct sluice_task *x;

		assert_int_equal(k.ready + k.delayed + k.buried, n);
		assert_int_equal(k.delayed, (n + 9) / 10);
		assert_int_equal(k.buried, 1);
		it_rc(b.c, sluice_peek_key(b.c, "cr", held->key, &x), 0);
		assert_int_equal(x->state, SLUICE_BURIED);
		assert_int_equal(x->attempts, held->attempts);
		assert_true(x->attempts >= 1);
		assert_string_equal(x->last_error, "the printer is on fire");
		assert_int_equal(x->created_at, held->created_at);
		sluice_task_free(x);
		it_rc(b.c, sluice_peek_key(b.c, "cr", "k10", &x), 0);
		assert_int_equal(x->state, SLUICE_DELAYED);
		assert_int_equal(x->run_at, before_k10->run_at);
		assert_int_equal(x->priority, before_k10->priority);
		sluice_task_free(x);
		it_rc(b.c, sluice_peek_key(b.c, "cr", "k6", &x), 0);
		assert_string_equal(x->group, "g0");
		assert_int_equal(x->priority, 6);
		sluice_task_free(x);
	}
	/* and back, by the library */
	t0 = it_mono_ms();
	assert_int_equal(sluice_router_move(r, "cr", "c3a", NULL, &p), 0);
	printf(
	    "%zu tasks moved back in %" PRId64 " ms\n", n, it_mono_ms() - t0);
	assert_int_equal(p.done, 1);
	assert_int_equal(p.copied, n);
	assert_int_equal(it_move_live_in(b.c, "cr"), 0);
	assert_int_equal(it_move_live_in(a.c, "cr"), n);
	/* the tube is a's again: takes there hand its tasks out */
	it_rc(a.c, sluice_take(a.c, &o, &t, &got), 0);
	assert_int_equal(t[0].priority, 0);
	sluice_task_free(t);
	sluice_task_free(held);
	sluice_task_free(before_k10);
	sluice_router_close(r);
}

/* A handle that has the new map before the new owner does: the owner's
 * refusal (SLUICE_EMOVED, its map is older) is not the caller's. */
static void
test_routed_right_after_a_map_change(void **state)
{
	struct it_node a, b;
	struct sluice_router *r;
	const char *tubes[] = { "w.x" };
	struct sluice_take_opts o = { tubes, 1, 0, 1, 0, 0, 0 };
	uint64_t rev;

	it_move_node_init(state, &a, "wa", "c5a", false);
	it_move_node_init(state, &b, "wb", "c5b", false);
	it_node_start_all((struct it_node *const[]) { &a, &b }, 2);
	it_move_wait_writes(&a);
	it_move_wait_writes(&b);
	r = it_move_router();
	for (int i = 0; i < 6; i++) {
		const char *to = i % 2 == 0 ? "c5b" : "c5a";
		struct sluice_put_opts po;
		struct sluice_put_result res;
		struct sluice_task *ts = NULL;
		size_t n = 0;
		int rc;

		assert_int_equal(
		    sluice_router_map_set(r, "w.", to, NULL, 0, &rev), 0);
		/* the handle reads it at once; the nodes within their poll */
		assert_int_equal(sluice_router_map(r, NULL), 0);
		rc = sluice_router_take(r, &o, &ts, &n);
		if (rc != 0 && rc != SLUICE_ETIMEDOUT && rc != SLUICE_ENOTFOUND)
			fail_msg("round %d: take at %s: %s (%s)", i, to,
			    sluice_strerror(rc), sluice_router_errmsg(r));
		sluice_task_free(ts);
		assert_int_equal(sluice_router_map_set(r, "w.",
		                     i % 2 ? "c5b" : "c5a", NULL, 0, &rev),
		    0);
		assert_int_equal(sluice_router_map(r, NULL), 0);
		sluice_put_opts_init(&po);
		po.tube = "w.x";
		rc = sluice_router_put(r, &po, "p", 1, &res);
		if (rc != 0)
			fail_msg("round %d: put: %s (%s)", i,
			    sluice_strerror(rc), sluice_router_errmsg(r));
	}
	sluice_router_close(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_move_refusals, it_etcd_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_move_carries, it_etcd_setup, it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_routed_right_after_a_map_change, it_etcd_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(test_move_under_load_and_kills,
		    it_etcd_setup, it_node_teardown),
	};

	return IT_ETCD_RUN("move", tests);
}
