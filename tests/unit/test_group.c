/* Tests of a tube's fair groups (src/queue/group.c): takes go round the
 * groups that have ready tasks (priority first, then the groups in turn,
 * then due time, then id), the "" group takes its turn, a small group
 * waits no longer than one round behind a big one, an empty group is
 * freed (and with the last one the tube's groups), a live group costs
 * under 100 bytes, bad names are refused, and groups come back the same
 * through the record codec, replay and a snapshot. Every record goes
 * through the harness (decide, encode, decode, apply). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "queue/group.h"
#include "queue/qstate.h"
#include "queue/tube.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

/* Puts one task into tube t, group g (NULL: none), payload p. Returns
 * decide's result; the id in *id. */
static int
put(struct tq *h, const char *g, uint32_t pri, const char *p, uint64_t *id)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	int rc;

	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.payload = p;
	req.payload_len = strlen(p);
	req.pri = pri;
	req.group = g;
	req.group_len = g != NULL ? strlen(g) : 0;
	if ((rc = queue_decide_put(h->q, h->now, &req, &rec, &res)) != 0)
		return rc;
	assert_int_equal(rec.type, g != NULL ? QREC_PUT_G : QREC_PUT);
	assert_int_equal(tq_commit(h, &rec), 0);
	if (id != NULL)
		*id = res.id;
	return 0;
}

/* Takes from tube t; returns the task's id (0: none) and its view. */
static uint64_t
take(struct tq *h, struct queue_task_view *v)
{
	struct queue_str tube = { "t", 1 };
	struct queue_take_req req = { &tube, 1, 1, false, false };
	struct qrec rec;

	if (queue_decide_take(h->q, h->now, &req, &rec) != 0)
		return 0;
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_peek(h->q, h->now, rec.u.take.id, v), 0);
	return rec.u.take.id;
}

/* The payloads of the next n takes, acked, as one string "a1 b1 ...". */
static void
take_n(struct tq *h, int n, char *out, size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		struct queue_task_view v;
		uint64_t id = take(h, &v);

		assert_true(id != 0);
		len += (size_t)snprintf(out + len, cap - len, "%s%.*s",
		    i ? " " : "", (int)v.payload_len, (const char *)v.payload);
		tq_ack(h, id);
	}
}

/* The view's group (not NUL-terminated) is `name`. */
static void
assert_group(const struct queue_task_view *v, const char *name)
{
	assert_int_equal(v->group_len, strlen(name));
	assert_memory_equal(v->group, name, v->group_len);
}

static const struct tube *
tube_t(struct tq *h)
{
	return qs_tube(h->q, "t", 1);
}

/* Without groups a tube has none (its take path is the old one); the
 * first group splits it, the groups go round, the "" group among them. */
static void
test_round_robin(void **state)
{
	struct tq *h = tq_of(state);
	char got[256];

	assert_int_equal(put(h, NULL, 10, "n1", NULL), 0);
	assert_null(tube_t(h)->groups);
	assert_int_equal(put(h, NULL, 10, "n2", NULL), 0);
	for (int i = 1; i <= 4; i++) {
		char p[8];

		snprintf(p, sizeof(p), "a%d", i);
		assert_int_equal(put(h, "a", 10, p, NULL), 0);
	}
	assert_non_null(tube_t(h)->groups);
	assert_int_equal(put(h, "b", 10, "b1", NULL), 0);
	assert_int_equal(put(h, "b", 10, "b2", NULL), 0);
	/* "" had ready tasks when the groups began: its turn came first */
	take_n(h, 8, got, sizeof(got));
	assert_string_equal(got, "n1 a1 b1 n2 a2 b2 a3 a4");
	/* every group is empty now: the tube has no groups left */
	assert_null(tube_t(h)->groups);
}

/* Priority comes before the turns; equal priorities go round. */
static void
test_priority_first(void **state)
{
	struct tq *h = tq_of(state);
	char got[256];

	assert_int_equal(put(h, "a", 10, "a1", NULL), 0);
	assert_int_equal(put(h, "a", 10, "a2", NULL), 0);
	assert_int_equal(put(h, "b", 10, "b1", NULL), 0);
	assert_int_equal(put(h, "b", 5, "b2", NULL), 0);
	assert_int_equal(put(h, "c", 1, "c1", NULL), 0);
	take_n(h, 5, got, sizeof(got));
	assert_string_equal(got, "c1 b2 a1 b1 a2");
}

/* A group with 10,000 ready tasks and one that gets a task now and then:
 * each of the small group's tasks is the first or second take after its
 * put (one round of two groups). */
static void
test_small_group_waits_one_round(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;

	h->keep = false;
	for (int i = 0; i < 10000; i++)
		assert_int_equal(put(h, "big", 10, "x", NULL), 0);
	for (int round = 0; round < 100; round++) {
		uint64_t id, got;
		int waited = 0;

		assert_int_equal(put(h, "small", 10, "s", &id), 0);
		do {
			got = take(h, &v);
			assert_true(got != 0);
			tq_ack(h, got);
			waited++;
		} while (got != id && waited < 10);
		assert_true(waited <= 2);
		/* and a few more of the big one's between */
		for (int k = 0; k < round % 5; k++) {
			got = take(h, &v);
			assert_group(&v, "big");
			tq_ack(h, got);
		}
	}
	assert_null(groups_find(tube_t(h), "small", 5));
	assert_non_null(groups_find(tube_t(h), "big", 3));
}

/* A group lives while tasks name it, in any state: a taken or delayed
 * task keeps it; with its last task it is freed. */
static void
test_empty_group_freed(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	uint64_t a, b, id;

	assert_int_equal(put(h, "a", 10, "a1", &a), 0);
	assert_int_equal(put(h, "b", 10, "b1", &b), 0);
	assert_int_equal(tube_t(h)->groups->n, 2);
	id = take(h, &v);
	assert_int_equal(id, a);
	assert_group(&v, "a");
	/* taken: a has no ready task but lives */
	assert_non_null(groups_find(tube_t(h), "a", 1));
	tq_ack(h, a);
	assert_null(groups_find(tube_t(h), "a", 1));
	assert_int_equal(tube_t(h)->groups->n, 1);
	assert_int_equal(queue_peek(h->q, h->now, b, &v), 0);
	assert_int_equal(v.group_len, 1);
	id = take(h, &v);
	tq_ack(h, id);
	assert_null(tube_t(h)->groups);
}

/* Bad names: too long, a byte outside the alphabet, empty with a
 * pointer is no group; nothing is put. */
static void
test_bad_names(void **state)
{
	struct tq *h = tq_of(state);
	char longname[202];

	memset(longname, 'g', sizeof(longname) - 1);
	longname[201] = '\0';
	assert_int_equal(put(h, longname, 10, "x", NULL), SLUICE_EGROUP);
	longname[200] = '\0';
	assert_int_equal(put(h, longname, 10, "x", NULL), 0);
	assert_int_equal(put(h, "a b", 10, "x", NULL), SLUICE_EGROUP);
	assert_int_equal(put(h, "caf\xc3\xa9", 10, "x", NULL), SLUICE_EGROUP);
	assert_int_equal(put(h, "tenant-1/eu:x_y.z", 10, "x", NULL), 0);
	assert_string_equal(sluice_errname(SLUICE_EGROUP), "bad_group");
}

/* PUT_G through the codec: with and without a version; an invalid group
 * or a version without a key is refused by both directions. */
static void
test_record_codec(void **state)
{
	struct qrec r, d;
	struct buf b;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.type = QREC_PUT_G;
	r.u.put.id = 7;
	r.u.put.tube = "t";
	r.u.put.tube_len = 1;
	r.u.put.ttr = 1000;
	r.u.put.payload = "p";
	r.u.put.payload_len = 1;
	r.u.put.group = "g1";
	r.u.put.group_len = 2;
	buf_init(&b);
	assert_int_equal(qrec_encode(&r, &b), 0);
	assert_int_equal(qrec_decode(QREC_PUT_G, b.data, b.len, &d), 0);
	assert_int_equal(d.u.put.group_len, 2);
	assert_memory_equal(d.u.put.group, "g1", 2);
	assert_int_equal(d.u.put.version, 0);
	/* a PUT's bytes are the PUT_G's up to the version */
	buf_reset(&b);
	r.u.put.version = 3;
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL); /* no key */
	r.u.put.key = "k";
	r.u.put.key_len = 1;
	assert_int_equal(qrec_encode(&r, &b), 0);
	assert_int_equal(qrec_decode(QREC_PUT_G, b.data, b.len, &d), 0);
	assert_int_equal(d.u.put.version, 3);
	buf_reset(&b);
	r.u.put.group = "g 1";
	r.u.put.group_len = 3;
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	r.u.put.group_len = 0;
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	/* a PUT may not carry a group */
	r.type = QREC_PUT;
	r.u.put.version = 0;
	r.u.put.group = "g";
	r.u.put.group_len = 1;
	assert_int_equal(qrec_encode(&r, &b), SLUICE_EINVAL);
	buf_fini(&b);
}

/* Replay and a snapshot give the same state (the dump shows each task's
 * group), the groups are all there, and the loaded queue goes round
 * them. */
static void
test_replay_and_snapshot(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	struct queue *q;
	struct buf snap;
	struct tq r;
	char got[256];
	uint64_t id;

	for (int i = 0; i < 3; i++) {
		assert_int_equal(put(h, "a", 10, "a", NULL), 0);
		assert_int_equal(put(h, "b", 10, "b", NULL), 0);
		assert_int_equal(put(h, NULL, 10, "n", NULL), 0);
	}
	id = take(h, &v); /* a taken task keeps its group */
	assert_group(&v, "a");
	tq_replayed(h);
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	tq_init(&r, NULL, h->now);
	assert_int_equal(tq_snap_load(r.q, &snap), 0);
	assert_true(tq_same(h->q, r.q, h->now));
	assert_int_equal(qs_tube(r.q, "t", 1)->groups->n, 2);
	assert_int_equal(queue_peek(r.q, r.now, id, &v), 0);
	assert_group(&v, "a");
	r.lsn = h->lsn;
	/* the rotation restarts, but goes round all three */
	take_n(&r, 3, got, sizeof(got));
	assert_true(strchr(got, 'a') && strchr(got, 'b') && strchr(got, 'n'));
	take_n(&r, 5, got, sizeof(got));
	assert_int_equal(take(&r, &v), 0);
	tq_fini(&r);
	/* a GROUP entry must be followed by its task */
	q = queue_new(NULL);
	{
		struct rd rd;
		int rc = 0;

		rd_init(&rd, snap.data, snap.len);
		while (rd_left(&rd) > 0 && rc == 0) {
			uint16_t type = rd_u16(&rd);
			uint32_t len = rd_u32(&rd);
			const uint8_t *p = rd_bytes(&rd, len);

			if (type == QSNAP_TASK) /* drop every task */
				continue;
			rc = queue_snapshot_load(q, type, p, len);
		}
		assert_int_equal(rc, SLUICE_ECORRUPT);
	}
	queue_free(q);
	buf_fini(&snap);
}

/* Random puts (8 groups and none, 3 priorities, some delayed), takes,
 * acks, releases (some delayed, some with a new priority), buries, kicks
 * and deletes, with the clock moving: the queue's invariants (the
 * groups' among them) hold after every step; at the end replay and a
 * snapshot give the same state, and a tube whose tasks are all gone has
 * no groups left. */
static void
test_random_steps(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t seed = 0x9e3779b97f4a7c15ULL, live[512];
	size_t n = 0;
	struct tq r;

	for (int step = 0; step < 20000; step++) {
		struct queue_task_view v;
		struct qrec rec;
		const char *why = NULL;
		uint64_t x, id;
		int op;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		x = seed >> 33;
		op = (int)(x % 10);
		h->now += (int64_t)(x >> 8) % 7;
		if (op <= 2 && n < 512) { /* put */
			static const char *g[] = { "a", "b", "c", "d", "e", "f",
				"g", "h", NULL };
			struct queue_put_req req;
			struct queue_put_res res;

			queue_put_req_init(&req);
			req.tube = "t";
			req.tube_len = 1;
			req.payload = "p";
			req.payload_len = 1;
			req.pri = (uint32_t)((x >> 4) % 3);
			req.group = g[(x >> 6) % 9];
			req.group_len = req.group ? 1 : 0;
			req.delay_ms =
			    (x >> 10) % 4 == 0 ? (int64_t)(x % 20) : 0;
			assert_int_equal(
			    queue_decide_put(h->q, h->now, &req, &rec, &res),
			    0);
			assert_int_equal(tq_commit(h, &rec), 0);
			live[n++] = res.id;
		} else if (op <= 4) { /* take, then ack or release or bury */
			if ((id = take(h, &v)) == 0)
				continue;
			if ((x >> 12) % 3 == 0) {
				struct queue_release_req rr = { .id = id,
					.lease = v.lease,
					.delay_ms = (int64_t)((x >> 14) % 10),
					.set_pri = (x >> 16) % 2 == 0,
					.pri = (uint32_t)((x >> 17) % 3) };

				assert_int_equal(queue_decide_release(
				                     h->q, h->now, &rr, &rec),
				    0);
				assert_int_equal(tq_commit(h, &rec), 0);
			} else if ((x >> 12) % 3 == 1) {
				struct queue_bury_req br = { .id = id,
					.lease = v.lease };

				assert_int_equal(
				    queue_decide_bury(h->q, h->now, &br, &rec),
				    0);
				assert_int_equal(tq_commit(h, &rec), 0);
			} else {
				tq_ack(h, id);
			}
		} else if (op <= 6 && n > 0) { /* kick or delete one */
			size_t i = (size_t)(x >> 3) % n;
			struct queue_kick_req kr = { .id = live[i] };
			struct queue_delete_req dr = { .id = live[i] };

			if (op == 5 &&
			    queue_decide_kick(h->q, h->now, &kr, &rec) == 0) {
				assert_int_equal(tq_commit(h, &rec), 0);
			} else if (op == 6 &&
			    queue_decide_delete(h->q, h->now, &dr, &rec) == 0) {
				assert_int_equal(tq_commit(h, &rec), 0);
				live[i] = live[--n];
			}
		} else { /* a take and an ack */
			if ((id = take(h, &v)) != 0)
				tq_ack(h, id);
		}
		if (step % 97 == 0 && queue_check(h->q, &why) != 0)
			fail_msg("step %d: queue_check: %s", step, why);
	}
	tq_replayed(h);
	tq_loaded(h, &r);
	tq_fini(&r);
	/* every task gone: no groups */
	for (size_t i = 0; i < n; i++) {
		struct queue_delete_req dr = { .id = live[i] };
		struct qrec rec;

		if (queue_decide_delete(h->q, h->now, &dr, &rec) == 0)
			assert_int_equal(tq_commit(h, &rec), 0);
	}
	assert_int_equal(tube_tasks(tube_t(h)), 0);
	assert_null(tube_t(h)->groups);
}

/* 10,000 groups of one ready task each cost under 100 bytes a group more
 * than 10,000 tasks without a group; it goes with the tasks.
 * Malloc's counts mean nothing under the sanitizers: there the test
 * checks only that the groups come and go. */
static void
test_memory_per_group(void **state)
{
	const char *san = getenv("SLUICE_SANITIZED");
	bool sanitized = san != NULL && strcmp(san, "1") == 0;
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	size_t base, plain, grouped;
	enum { N = 10000 };

	h->keep = false;
	/* one task first, so the tube and its heaps exist in both runs */
	assert_int_equal(put(h, NULL, 10, "x", NULL), 0);
	base = tq_heap_bytes();
	for (int i = 0; i < N; i++)
		assert_int_equal(put(h, NULL, 10, "x", NULL), 0);
	plain = tq_heap_bytes() - base;
	for (int i = 0; i < N; i++)
		tq_ack(h, take(h, &v));
	base = tq_heap_bytes();
	for (int i = 0; i < N; i++) {
		char g[16];

		snprintf(g, sizeof(g), "tenant%05d", i);
		assert_int_equal(put(h, g, 10, "x", NULL), 0);
	}
	grouped = tq_heap_bytes() - base;
	assert_int_equal(tube_t(h)->groups->n, N);
	fprintf(stderr,
	    "%d tasks: %zu bytes without groups, %zu in %d groups: %.1f "
	    "bytes a group (struct group %zu)\n",
	    N, plain, grouped, N, (double)(grouped - plain) / N,
	    sizeof(struct group));
	if (!sanitized)
		assert_true(grouped < plain || (grouped - plain) / N < 100);
	for (int i = 0; i < N + 1; i++)
		tq_ack(h, take(h, &v));
	assert_null(tube_t(h)->groups);
	/* the acks' outcomes (outcome.h) go when their window ends */
	h->now += QUEUE_DEFAULT_DEDUP_MS;
	assert_int_equal(queue_tick(h->q, h->now), 0);
	assert_int_equal(queue_outcome_count(h->q), 0);
	fprintf(stderr, "drained: %zd bytes over the start\n",
	    (ssize_t)(tq_heap_bytes() - base));
	/* the groups' memory went back: what is left (the queue's own
	 * tables, shrunk by halves) is under 2 bytes of every group */
	if (!sanitized)
		assert_true(tq_heap_bytes() <= base + 2 * N);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tq_setup, tq_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_round_robin),
		T(test_priority_first),
		T(test_small_group_waits_one_round),
		T(test_empty_group_freed),
		T(test_bad_names),
		T(test_record_codec),
		T(test_replay_and_snapshot),
		T(test_random_steps),
		T(test_memory_per_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
