/* Tests of limits per fair group (src/queue/glimit.c): a group at its cap,
 * out of tokens or paused is skipped by the rotation while the others
 * keep flowing, and rejoins when a lease ends, a token is due (the wake
 * time says when) or it is resumed; an override replaces the default
 * limit by limit and stays while its group has no task; bad settings are
 * refused and change nothing; replay and a snapshot give the same state,
 * and a loaded queue's cap counts the taken tasks. Every record goes
 * through the harness (decide, encode, decode, apply). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/limits.h"
#include "queue/qstate.h"
#include "queue/tube.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

static void
put(struct tq *h, const char *g, const char *p)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.payload = p;
	req.payload_len = strlen(p);
	req.group = g;
	req.group_len = g != NULL ? strlen(g) : 0;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

/* Takes from tube t: the task's id (0: none) and its payload's first
 * byte in *c. */
static uint64_t
take(struct tq *h, char *c)
{
	struct queue_str tube = { "t", 1 };
	struct queue_take_req req = { &tube, 1, 1, false, false };
	struct queue_task_view v;
	struct qrec rec;

	*c = 0;
	if (queue_decide_take(h->q, h->now, &req, &rec) != 0)
		return 0;
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_peek(h->q, h->now, rec.u.take.id, &v), 0);
	*c = ((const char *)v.payload)[0];
	return rec.u.take.id;
}

/* The first bytes of the next takes until none, at most n. */
static void
takes(struct tq *h, int n, char *out, uint64_t *ids)
{
	int i;

	for (i = 0; i < n; i++) {
		uint64_t id = take(h, &out[i]);

		if (id == 0)
			break;
		if (ids != NULL)
			ids[i] = id;
	}
	out[i] = '\0';
}

/* A GROUP_SET request; returns decide's result (committed). */
static int
gset(struct tq *h, const char *g, uint8_t set, uint8_t unset, uint32_t rate,
    uint32_t burst, uint32_t conc, uint8_t pause)
{
	struct queue_group_set_req req;
	struct qrec rec;
	int rc;

	memset(&req, 0, sizeof(req));
	req.tube = "t";
	req.tube_len = 1;
	req.group = g;
	req.group_len = strlen(g);
	req.set = set;
	req.unset = unset;
	req.lim.rate = rate;
	req.lim.per_ms = 1000;
	req.lim.burst = burst;
	req.lim.concurrency = conc;
	req.pause = pause;
	if ((rc = queue_decide_group_set(h->q, h->now, &req, &rec)) != 0)
		return rc;
	assert_int_equal(tq_commit(h, &rec), 0);
	return 0;
}

/* --group-concurrency 1: each group hands out one task at a time, the
 * "" group is not held, an ack lets its group go. */
static void
test_group_cap(void **state)
{
	struct tq *h = tq_of(state);
	char got[32];
	uint64_t ids[32];

	for (int i = 0; i < 3; i++) {
		put(h, "a", "a");
		put(h, "b", "b");
	}
	put(h, NULL, "n");
	put(h, NULL, "n");
	assert_int_equal(gset(h, "", QREC_LIM_CONCURRENCY, 0, 0, 0, 1, 0), 0);
	takes(h, 10, got, ids);
	assert_string_equal(got, "abnn");
	tq_check(h);
	tq_ack(h, ids[0]); /* a's slot frees: a goes again, b still held */
	takes(h, 10, got, NULL);
	assert_string_equal(got, "a");
	/* the tube's group settings hold without the cap lifted elsewhere */
	assert_int_equal(gset(h, "", 0, QREC_LIM_CONCURRENCY, 0, 0, 0, 0), 0);
	assert_null(qs_tube(h->q, "t", 1)->gconf);
	takes(h, 10, got, NULL);
	assert_string_equal(got, "abb");
	tq_check(h);
}

/* --group-rate 1/s burst 1: each group gets one take a second; the wake
 * time is the next token; the others keep flowing meanwhile. */
static void
test_group_rate(void **state)
{
	struct tq *h = tq_of(state);
	char got[32];

	for (int i = 0; i < 4; i++) {
		put(h, "a", "a");
		put(h, "b", "b");
	}
	assert_int_equal(gset(h, "", QREC_LIM_RATE, 0, 1, 1, 0, 0), 0);
	takes(h, 10, got, NULL);
	assert_string_equal(got, "ab");
	assert_int_equal(queue_next_wake(h->q), h->now + 1000);
	h->now += 999;
	takes(h, 10, got, NULL);
	assert_string_equal(got, "");
	h->now += 1;
	takes(h, 10, got, NULL);
	assert_string_equal(got, "ab");
	tq_check(h);
	/* an override for b: 3/s with a burst of 2 */
	h->now += 1000;
	assert_int_equal(gset(h, "b", QREC_LIM_RATE, 0, 3, 2, 0, 0), 0);
	takes(h, 10, got, NULL);
	assert_int_equal(strlen(got), 3); /* a once, b twice */
	assert_int_equal(strchr(got, 'a') - got >= 0, 1);
	tq_check(h);
}

/* An override with its own cap, a paused group skipped while the others
 * flow, resumed; the settings stay while the group has no task. */
static void
test_override_pause(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_group_view v;
	char got[32];
	uint64_t ids[32];

	assert_int_equal(gset(h, "", QREC_LIM_CONCURRENCY, 0, 0, 0, 1, 0),
	    SLUICE_ENOTFOUND); /* no tube yet */
	put(h, NULL, "n");
	assert_int_equal(gset(h, "", QREC_LIM_CONCURRENCY, 0, 0, 0, 1, 0), 0);
	assert_int_equal(gset(h, "a", QREC_LIM_CONCURRENCY, 0, 0, 0, 3, 0), 0);
	assert_int_equal(gset(h, "c", 0, 0, 0, 0, 0, QUEUE_GROUP_PAUSE), 0);
	for (int i = 0; i < 4; i++) {
		put(h, "a", "a");
		put(h, "b", "b");
		put(h, "c", "c");
	}
	tq_check(h);
	takes(h, 20, got, ids);
	tq_check(h);
	/* a three times, b once, n once, c never */
	assert_int_equal(strlen(got), 5);
	assert_null(strchr(got, 'c'));
	assert_int_equal(
	    queue_group_limits(h->q, "t", 1, "c", 1, h->now, &v), 0);
	assert_true(v.paused && v.has_own && v.live && v.ready == 4);
	assert_int_equal(v.holding, 3);
	assert_int_equal(
	    queue_group_limits(h->q, "t", 1, "a", 1, h->now, &v), 0);
	assert_int_equal(v.taken, 3);
	assert_int_equal(v.lim.concurrency, 3);
	assert_int_equal(v.holding, QUEUE_FLOW_CONCURRENCY);
	assert_int_equal(v.nheld, 3);
	{ /* held groups have ready tasks: stats counts them */
		struct queue_tube_stats ts;

		assert_int_equal(
		    queue_tube_stats(h->q, h->now, "t", 1, &ts), 0);
		assert_int_equal(ts.groups, 3);
		assert_int_equal(ts.groups_ready, 3); /* a 1, b 3, c 4 ready */
	}
	tq_check(h);
	assert_int_equal(gset(h, "c", 0, 0, 0, 0, 0, QUEUE_GROUP_RESUME), 0);
	takes(h, 20, got, NULL);
	assert_string_equal(got, "c"); /* c's default cap is 1 */
	tq_check(h);
	/* clearing a's own cap: the default again (1, and 3 taken) */
	assert_int_equal(gset(h, "a", 0, QREC_LIM_CONCURRENCY, 0, 0, 0, 0), 0);
	takes(h, 20, got, NULL);
	assert_string_equal(got, "");
	tq_ack(h, ids[0]);
	tq_ack(h, ids[1]);
	takes(h, 20, got, NULL);
	assert_string_equal(got, ""); /* a: still 1 taken of 1 */
	tq_check(h);
	/* a group without tasks keeps its settings */
	assert_int_equal(gset(h, "z", QREC_LIM_CONCURRENCY, 0, 0, 0, 2, 0), 0);
	assert_null(groups_find(qs_tube(h->q, "t", 1), "z", 1));
	assert_int_equal(
	    queue_group_limits(h->q, "t", 1, "z", 1, h->now, &v), 0);
	assert_true(v.has_own && !v.live && v.lim.concurrency == 2);
	tq_check(h);
}

/* Bad settings are refused with a specific error and change nothing. */
static void
test_bad_input(void **state)
{
	struct tq *h = tq_of(state);
	struct buf before, after;

	put(h, "a", "a");
	buf_init(&before);
	buf_init(&after);
	assert_int_equal(queue_dump(h->q, &before), 0);
	assert_int_equal(
	    gset(h, "", QREC_LIM_RATE, 0, 0, 1, 0, 0), SLUICE_EINVAL);
	assert_int_equal(gset(h, "a", QREC_LIM_RATE, 0, 1000001, 1000000, 0, 0),
	    SLUICE_EINVAL);
	assert_int_equal(
	    gset(h, "a", QREC_LIM_RATE, 0, 10, 1000001, 0, 0), SLUICE_EINVAL);
	assert_int_equal(
	    gset(h, "a", QREC_LIM_CONCURRENCY, 0, 0, 0, 0, 0), SLUICE_EINVAL);
	assert_int_equal(gset(h, "a", QREC_LIM_CONCURRENCY,
	                     QREC_LIM_CONCURRENCY, 0, 0, 1, 0),
	    SLUICE_EINVAL);
	assert_int_equal(
	    gset(h, "", 0, 0, 0, 0, 0, QUEUE_GROUP_PAUSE), SLUICE_EINVAL);
	assert_int_equal(
	    gset(h, "a b", QREC_LIM_CONCURRENCY, 0, 0, 0, 1, 0), SLUICE_EGROUP);
	{
		char long_name[202];

		memset(long_name, 'x', 201);
		long_name[201] = '\0';
		assert_int_equal(
		    gset(h, long_name, QREC_LIM_CONCURRENCY, 0, 0, 0, 1, 0),
		    SLUICE_EGROUP);
	}
	assert_int_equal(queue_dump(h->q, &after), 0);
	assert_int_equal(before.len, after.len);
	assert_memory_equal(before.data, after.data, before.len);
	buf_fini(&before);
	buf_fini(&after);
}

/* Replay and a snapshot give the same state; the loaded queue's cap
 * counts the taken tasks that survived, its bucket starts full, and a
 * paused group's settings come back though it has no task. */
static void
test_replay_and_snapshot(void **state)
{
	struct tq *h = tq_of(state);
	struct tq r;
	char got[32];

	put(h, NULL, "n");
	assert_int_equal(
	    gset(h, "", QREC_LIM_CONCURRENCY | QREC_LIM_RATE, 0, 5, 2, 2, 0),
	    0);
	assert_int_equal(gset(h, "z", 0, 0, 0, 0, 0, QUEUE_GROUP_PAUSE), 0);
	for (int i = 0; i < 4; i++) {
		put(h, "a", "a");
		put(h, "b", "b");
	}
	takes(h, 20, got, NULL);
	assert_string_equal(got, "nabab"); /* two each, their cap */
	tq_replayed(h);
	tq_loaded(h, &r);
	/* two of each group are taken: the cap holds at once */
	takes(&r, 20, got, NULL);
	assert_string_equal(got, "");
	tq_check(&r);
	tq_fini(&r);
}

/* A take that waits on group limits is woken when one lets go: by an
 * ack (the cap), by the clock (a token), by a resume. */
static int nready;

static void
on_ready(void *arg, const char *tube, size_t len)
{
	(void)arg;
	(void)tube;
	(void)len;
	nready++;
}

static void
test_wakes(void **state)
{
	struct tq *h = tq_of(state);
	char got[8];
	uint64_t ids[8] = { 0 };

	put(h, "a", "a");
	put(h, "a", "a");
	assert_int_equal(gset(h, "", QREC_LIM_CONCURRENCY, 0, 0, 0, 1, 0), 0);
	queue_on_ready(h->q, on_ready, NULL);
	takes(h, 4, got, ids);
	assert_string_equal(got, "a");
	nready = 0;
	tq_ack(h, ids[0]);
	assert_true(nready > 0);
	assert_int_equal(gset(h, "a", 0, 0, 0, 0, 0, QUEUE_GROUP_PAUSE), 0);
	nready = 0;
	assert_int_equal(gset(h, "a", 0, 0, 0, 0, 0, QUEUE_GROUP_RESUME), 0);
	assert_true(nready > 0);
	queue_on_ready(h->q, NULL, NULL);
}

/* A task taken before its tube had groups counts in the "" group when
 * the first group comes, and every group's cap counts from there. */
static void
test_taken_before_groups(void **state)
{
	struct tq *h = tq_of(state);
	char got[8];
	uint64_t ids[8] = { 0 };

	put(h, NULL, "n");
	put(h, NULL, "n");
	takes(h, 1, got, ids);
	assert_string_equal(got, "n");
	put(h, "a", "a");
	put(h, "a", "a");
	tq_check(h);
	assert_int_equal(gset(h, "", QREC_LIM_CONCURRENCY, 0, 0, 0, 1, 0), 0);
	takes(h, 8, got, NULL);
	assert_string_equal(got, "na"); /* the "" group is not held */
	tq_check(h);
	tq_ack(h, ids[0]);
	tq_check(h);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tq_setup, tq_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_group_cap),
		T(test_group_rate),
		T(test_override_pause),
		T(test_bad_input),
		T(test_replay_and_snapshot),
		T(test_wakes),
		T(test_taken_before_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
