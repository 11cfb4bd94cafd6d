/* Behaviour in time, measured against a real server: ttr expiry, delays,
 * fail's backoff up to burial, the key dedup window, recurring tasks,
 * ack to another tube, and pauses. Times are measured on this side with
 * a monotonic clock taken before the request that starts the interval,
 * so a server that acts early is caught exactly; the upper bounds leave
 * room for a loaded machine but are far below what a polling server (or
 * one that waited a second too long) would give. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "it.h"

enum {
	SLACK_MS = 100, /* how early a client-side measure may start */
	/* How late a wake-up may come on a machine busy with other work
	 * (a parallel build, the sanitizers): a server that polls, or waits
	 * a second too long, is still far beyond it. */
	LATE_MS = 300,
};

static void
assert_between(int64_t v, int64_t lo, int64_t hi, const char *what)
{
	print_message("%s: %lld ms\n", what, (long long)v);
	if (v < lo || v > hi)
		fail_msg("%s took %lld ms, not within [%lld, %lld]", what,
		    (long long)v, (long long)lo, (long long)hi);
}

/* The server's clock, from stats. */
static int64_t
srv_now(struct sluice_client *c)
{
	struct sluice_stats *st = NULL;
	int64_t now;

	it_rc(c, sluice_stats(c, NULL, &st), 0);
	now = (int64_t)st->now;
	sluice_stats_free(st);
	return now;
}

static struct t_srv *
up(void **state, struct sluice_client **c, const char *const *args)
{
	struct t_srv *s = it_srv(*state, "node");

	for (int i = 0; args != NULL && args[i] != NULL; i++)
		s->args[i] = args[i];
	it_start(s);
	*c = it_client(s);
	return s;
}

static void
down(struct t_srv *s, struct sluice_client *c)
{
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A lease of 300 ms ends after 300 ms (not before), with the attempt
 * kept, and the task is taken again. The server retries lost leases at
 * once here, so that the expiry itself is timed (the backoff it follows
 * by default is the fail test's). */
static void
test_ttr_expiry_returns_the_task(void **state)
{
	static const char *const args[] = { "--lost-lease-retry", "immediate",
		NULL };
	struct sluice_client *c;
	struct t_srv *s = up(state, &c, args);
	struct sluice_put_opts o;
	struct sluice_task *t, *t2, *p;
	int64_t t0, took;
	uint64_t id;

	sluice_put_opts_init(&o);
	o.tube = "ttr";
	o.ttr_ms = 300;
	id = it_put_o(c, &o, "slow");
	for (int round = 1; round <= 2; round++) {
		t0 = it_mono_ms();
		t = it_take(c, "ttr", 0, 0);
		assert_int_equal(t->id, id);
		assert_int_equal(t->attempts, (uint32_t)round);
		assert_int_equal(t->deadline, t->taken_at + 300);
		it_sleep_ms(150);
		assert_int_equal(it_state(c, id), SLUICE_TAKEN);
		assert_true(it_wait_state(c, id, SLUICE_READY, 3000) >= 0);
		took = it_mono_ms() - t0;
		assert_between(took, 295, 300 + LATE_MS, "ttr expiry");
		p = it_peek(c, id);
		assert_int_equal(p->attempts, (uint32_t)round);
		assert_int_equal(p->lease, 0);
		sluice_task_free(p);
		it_rc(
		    c, sluice_ack(c, id, t->lease, NULL, NULL), SLUICE_ESTATE);
		sluice_task_free(t);
	}
	t2 = it_take(c, "ttr", 0, 0);
	assert_int_equal(t2->attempts, 3);
	it_rc(c, sluice_ack(c, id, t2->lease, NULL, NULL), 0);
	sluice_task_free(t2);
	down(s, c);
}

/* A task put with a delay of 500 ms reaches a blocked take after
 * 500 ± 100 ms: twice, the server's timer armed first on an idle tube,
 * then again after a delivery. */
static void
test_delay_is_accurate(void **state)
{
	struct sluice_client *c;
	struct t_srv *s = up(state, &c, NULL);
	struct sluice_put_opts o;
	struct sluice_task *t;
	int64_t t0, took;
	uint64_t id;

	sluice_put_opts_init(&o);
	o.tube = "delay";
	o.delay_ms = 500;
	for (int round = 0; round < 2; round++) {
		t0 = it_mono_ms();
		id = it_put_o(c, &o, "later");
		assert_int_equal(it_state(c, id), SLUICE_DELAYED);
		t = it_take(c, "delay", 3000, 0);
		took = it_mono_ms() - t0;
		assert_int_equal(t->id, id);
		/* by the server's clock: taken when due, not before */
		assert_between((int64_t)(t->taken_at - t->run_at), 0, LATE_MS,
		    "taken after run_at");
		assert_between(
		    took, 500 - SLACK_MS, 500 + LATE_MS, "delayed 500 ms");
		it_rc(c, sluice_ack(c, id, t->lease, NULL, NULL), 0);
		sluice_task_free(t);
	}
	down(s, c);
}

/* fail without a delay: the backoff (1 s, then 2 s) decides run_at; the
 * third failure of a task with max_attempts 3 buries it. fail with an
 * explicit delay of 200 ms: back after 200 ± 100 ms. */
static void
test_fail_backs_off_then_buries(void **state)
{
	struct sluice_client *c;
	struct t_srv *s = up(state, &c, NULL);
	struct sluice_error_count *e;
	struct sluice_put_opts o;
	struct sluice_after after;
	struct sluice_task *t;
	int64_t now, t0;
	uint64_t id;
	size_t n;

	sluice_put_opts_init(&o);
	o.tube = "flaky";
	o.max_attempts = 3;
	id = it_put_o(c, &o, "x");
	for (uint32_t a = 1; a <= 3; a++) {
		char err[32];

		t = it_take(c, "flaky", 0, 0);
		assert_int_equal(t->id, id);
		assert_int_equal(t->attempts, a);
		snprintf(err, sizeof(err), "failure %u", a);
		now = srv_now(c);
		it_rc(c, sluice_fail(c, id, t->lease, err, -1, &after), 0);
		sluice_task_free(t);
		if (a < 3) {
			/* base 1 s, doubling per attempt */
			int64_t backoff = 1000LL << (a - 1);

			assert_int_equal(after.state, SLUICE_DELAYED);
			assert_between((int64_t)after.run_at - now, backoff,
			    backoff + 500, "backoff");
			assert_int_equal(it_state(c, id), SLUICE_DELAYED);
			/* skip the wait: kick the delayed task */
			it_rc(c, sluice_kick_id(c, id, NULL), 0);
		} else {
			assert_int_equal(after.state, SLUICE_BURIED);
		}
	}
	t = it_peek(c, id);
	assert_int_equal(t->state, SLUICE_BURIED);
	assert_int_equal(t->attempts, 3);
	assert_string_equal(t->last_error, "failure 3");
	sluice_task_free(t);
	it_rc(c, sluice_errors(c, "flaky", &e, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(e[0].text, "failure 3");
	sluice_errors_free(e);

	/* an explicit delay */
	o.max_attempts = 0;
	o.tube = "flaky2";
	id = it_put_o(c, &o, "y");
	t = it_take(c, "flaky2", 0, 0);
	t0 = it_mono_ms();
	it_rc(c, sluice_fail(c, id, t->lease, "again", 200, &after), 0);
	assert_int_equal(after.state, SLUICE_DELAYED);
	sluice_task_free(t);
	t = it_take(c, "flaky2", 3000, 0);
	assert_int_equal(t->id, id);
	assert_between(it_mono_ms() - t0, 200 - SLACK_MS, 200 + LATE_MS,
	    "fail delay 200 ms");
	sluice_task_free(t);
	down(s, c);
}

/* A live key dedups; after the ack it stays reserved for the dedup
 * window (1 s here), then a put with it creates a new task. */
static void
test_key_dedup_window(void **state)
{
	static const char *const args[] = { "--dedup-window", "1s", NULL };
	struct sluice_client *c;
	struct t_srv *s = up(state, &c, args);
	struct sluice_put_opts o;
	struct sluice_task *t;
	uint64_t id, id2;
	int created;
	int64_t t_ack;

	sluice_put_opts_init(&o);
	o.tube = "dedup";
	o.key = "once";
	it_rc(c, sluice_put(c, &o, "a", 1, &id, &created), 0);
	assert_int_equal(created, 1);
	it_rc(c, sluice_put(c, &o, "b", 1, &id2, &created), 0);
	assert_int_equal(created, 0);
	assert_int_equal(id2, id);

	t = it_take(c, "dedup", 0, 0);
	it_rc(c, sluice_put(c, &o, "c", 1, &id2, &created), 0);
	assert_int_equal(created, 0); /* taken is live */
	assert_int_equal(id2, id);
	it_rc(c, sluice_ack(c, id, t->lease, NULL, NULL), 0);
	t_ack = it_mono_ms();
	sluice_task_free(t);

	it_rc(c, sluice_put(c, &o, "d", 1, &id2, &created), 0);
	/* (on a machine too slow to put within 0.8 s, only the end) */
	if (it_mono_ms() - t_ack < 800) {
		assert_int_equal(created, 0);
		assert_int_equal(id2, id);
		assert_null(it_peek(c, id));
		assert_int_equal(it_counts(c, "dedup").ready, 0);
		it_sleep_ms(1200);
		it_rc(c, sluice_put(c, &o, "e", 1, &id2, &created), 0);
	}
	assert_int_equal(created, 1);
	assert_true(id2 > id);
	t = it_peek(c, id2);
	assert_string_equal(t->key, "once");
	sluice_task_free(t);
	down(s, c);
}

/* A recurring task (period 300 ms) acked comes back delayed by the
 * period, to the same id, twice. */
static void
test_recurring_task_comes_back(void **state)
{
	struct sluice_client *c;
	struct t_srv *s = up(state, &c, NULL);
	struct sluice_put_opts o;
	struct sluice_after after;
	struct sluice_task *t;
	uint64_t id, run_at;
	int64_t t0;

	sluice_put_opts_init(&o);
	o.tube = "cron";
	o.period_ms = 300;
	t0 = it_mono_ms();
	id = it_put_o(c, &o, "tick");
	t = it_take(c, "cron", 0, 0);
	run_at = t->run_at;
	for (int k = 1; k <= 2; k++) {
		it_rc(c, sluice_ack(c, id, t->lease, NULL, &after), 0);
		sluice_task_free(t);
		assert_int_equal(after.state, SLUICE_DELAYED);
		assert_int_equal(after.run_at, run_at + 300 * (uint64_t)k);
		assert_int_equal(it_state(c, id), SLUICE_DELAYED);
		t = it_take(c, "cron", 3000, 0);
		assert_int_equal(t->id, id);
		assert_int_equal(t->run_at, after.run_at);
		assert_between(it_mono_ms() - t0, 300 * k - 5,
		    300 * k + LATE_MS, "period");
	}
	/* done with it for good */
	it_rc(c, sluice_delete(c, id), 0);
	sluice_task_free(t);
	assert_null(it_peek(c, id));
	down(s, c);
}

/* ack --to moves a task through a pipeline, keeping id, payload and
 * priority; only the last ack deletes it. */
static void
test_ack_to_tube_moves_through_a_pipeline(void **state)
{
	static const char *const stages[] = { "resize", "upload", "notify" };
	struct sluice_client *c;
	struct t_srv *s = up(state, &c, NULL);
	struct sluice_put_opts o;
	struct sluice_after after;
	struct sluice_task *t;
	uint64_t id;

	sluice_put_opts_init(&o);
	o.tube = stages[0];
	o.priority = 42;
	id = it_put_o(c, &o, "image-1");
	for (int i = 0; i < 3; i++) {
		const char *next = i < 2 ? stages[i + 1] : NULL;

		t = it_take(c, stages[i], 0, 0);
		assert_int_equal(t->id, id);
		assert_string_equal(t->tube, stages[i]);
		assert_int_equal(t->priority, 42);
		assert_int_equal(t->payload_len, 7);
		assert_memory_equal(t->payload, "image-1", 7);
		it_rc(c, sluice_ack(c, id, t->lease, next, &after), 0);
		sluice_task_free(t);
		if (next != NULL) {
			assert_int_equal(after.state, SLUICE_READY);
			assert_int_equal(it_counts(c, stages[i]).ready, 0);
			assert_int_equal(it_counts(c, next).ready, 1);
		} else {
			assert_int_equal(after.state, 0);
		}
	}
	assert_null(it_peek(c, id));
	down(s, c);
}

struct taker {
	pthread_t th;
	const char *url, *tube;
	int rc;
	uint64_t id;
	int64_t done_ms;
};

static void *
taker_run(void *arg)
{
	struct taker *k = arg;
	const char *tubes[1] = { k->tube };
	struct sluice_take_opts o = { tubes, 1, 5000, 1, 0 };
	struct sluice_client *c = it_client_url(k->url);
	struct sluice_task *t = NULL;
	size_t n;

	k->rc = -1;
	if (c == NULL)
		return NULL;
	k->rc = sluice_take(c, &o, &t, &n);
	k->done_ms = it_mono_ms();
	if (k->rc == 0) {
		k->id = t[0].id;
		k->rc = sluice_ack(c, t[0].id, t[0].lease, NULL, NULL);
	}
	sluice_task_free(t);
	sluice_close(c);
	return NULL;
}

/* A paused tube hands out nothing: a poll gets nothing, a blocked take
 * gets the task when the pause ends (600 ms), or as soon as the tube is
 * resumed. */
static void
test_pause_holds_tasks_until_it_ends(void **state)
{
	const char *tubes[1] = { "pz" };
	struct sluice_take_opts o = { tubes, 1, 0, 1, 0 };
	struct sluice_client *c;
	struct t_srv *s = up(state, &c, NULL);
	struct sluice_task *t;
	struct taker k;
	uint64_t until, id;
	int64_t t0;
	size_t n;

	id = it_put(c, "pz", "held");
	t0 = it_mono_ms();
	it_rc(c, sluice_pause(c, "pz", 600, &until), 0);
	assert_true(until > 0);
	it_rc(c, sluice_take(c, &o, &t, &n), SLUICE_ETIMEDOUT);
	o.wait_ms = 3000;
	it_rc(c, sluice_take(c, &o, &t, &n), 0);
	assert_int_equal(t[0].id, id);
	assert_between(
	    it_mono_ms() - t0, 600 - 5, 600 + LATE_MS, "pause of 600 ms");
	it_rc(c, sluice_ack(c, id, t[0].lease, NULL, NULL), 0);
	sluice_task_free(t);

	/* resumed by hand while a take waits */
	id = it_put(c, "pz", "held again");
	it_rc(c, sluice_pause(c, "pz", 60000, &until), 0);
	memset(&k, 0, sizeof(k));
	k.url = s->url;
	k.tube = "pz";
	assert_int_equal(pthread_create(&k.th, NULL, taker_run, &k), 0);
	for (int i = 0; i < 400 && it_node_kv(c, "waiting_takes") != 1; i++)
		it_sleep_ms(5);
	assert_int_equal(it_node_kv(c, "waiting_takes"), 1);
	it_sleep_ms(100);
	assert_int_equal(it_state(c, id), SLUICE_READY);
	t0 = it_mono_ms();
	it_rc(c, sluice_pause(c, "pz", 0, &until), 0);
	assert_int_equal(until, 0);
	assert_int_equal(pthread_join(k.th, NULL), 0);
	assert_int_equal(k.rc, 0);
	assert_int_equal(k.id, id);
	assert_between(k.done_ms - t0, 0, 200, "wake-up on resume");
	down(s, c);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_ttr_expiry_returns_the_task),
		T(test_delay_is_accurate),
		T(test_fail_backs_off_then_buries),
		T(test_key_dedup_window),
		T(test_recurring_task_comes_back),
		T(test_ack_to_tube_moves_through_a_pipeline),
		T(test_pause_holds_tasks_until_it_ends),
	};
#undef T
	return cmocka_run_group_tests_name("timing", tests, NULL, NULL);
}
