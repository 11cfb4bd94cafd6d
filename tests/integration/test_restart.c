/* Restart after kill -9 on the same data directory: what was put is
 * there, what was acked is gone, tasks under a session lease are ready
 * again (their sessions died with the process), detached leases are
 * still valid (an ack with the lease works), and delayed, buried and
 * keyed tasks and paused tubes keep their state. Once from the log alone, once
 * from a snapshot plus the log after it, and once more after a restart
 * that itself wrote records (the release of session leases). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "it.h"

enum { N = 8 };

/* What was done to the tasks before the crash. */
struct before {
	uint64_t ready[N], acked[N], session[N], detached[N];
	uint64_t detached_lease[N];
	uint64_t delayed, buried, keyed, paused, paused_until;
	uint64_t max_id;
};

/* Each task's payload names its tube and index. */
static uint64_t
put_named(struct sluice_client *c, const char *tube, int i)
{
	char p[64];

	snprintf(p, sizeof(p), "%s-%d", tube, i);
	return it_put(c, tube, p);
}

static void
check_payload(const struct sluice_task *t, const char *tube, int i)
{
	char p[64];

	snprintf(p, sizeof(p), "%s-%d", tube, i);
	assert_string_equal(t->tube, tube);
	assert_int_equal(t->payload_len, strlen(p));
	assert_memory_equal(t->payload, p, strlen(p));
}

/* Puts, then (after a snapshot when `snapshot`) takes and acks, so that
 * recovery needs both the snapshot and the log after it. */
static void
work_before_crash(struct sluice_client *c, struct before *b, bool snapshot)
{
	struct sluice_put_opts o;
	struct sluice_task *t;

	for (int i = 0; i < N; i++) {
		b->ready[i] = put_named(c, "r", i);
		b->acked[i] = put_named(c, "a", i);
		b->session[i] = put_named(c, "s", i);
		b->detached[i] = put_named(c, "d", i);
	}
	if (snapshot) {
		uint64_t lsn = 0;

		it_rc(c, sluice_snapshot(c, &lsn), 0);
		assert_true(lsn >= 4 * N);
	}
	for (int i = 0; i < N; i++) {
		t = it_take(c, "a", 0, 0);
		assert_int_equal(t->id, b->acked[i]);
		it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
		sluice_task_free(t);
		t = it_take(c, "s", 0, 0);
		assert_int_equal(t->id, b->session[i]);
		sluice_task_free(t);
		t = it_take(c, "d", 0, 1);
		assert_int_equal(t->id, b->detached[i]);
		assert_int_equal(t->detached, 1);
		b->detached_lease[i] = t->lease;
		sluice_task_free(t);
	}
	sluice_put_opts_init(&o);
	o.tube = "later";
	o.delay_ms = 3600 * 1000;
	b->delayed = it_put_o(c, &o, "delayed");
	b->buried = it_put(c, "bur", "buried");
	t = it_take(c, "bur", 0, 0);
	it_rc(c, sluice_bury(c, t->id, t->lease, NULL), 0);
	sluice_task_free(t);
	o.tube = "keyed";
	o.delay_ms = 0;
	o.key = "unique";
	b->keyed = it_put_o(c, &o, "keyed");
	b->paused = it_put(c, "pz", "paused");
	it_rc(c, sluice_pause(c, "pz", 3600 * 1000, &b->paused_until), 0);
	b->max_id = b->paused;
}

/* The state after a restart, whichever the number of restarts. */
static void
check_after_restart(struct sluice_client *c, const struct before *b)
{
	struct sluice_task *t;
	uint64_t id;
	int created;

	for (int i = 0; i < N; i++) {
		t = it_peek(c, b->ready[i]);
		assert_non_null(t);
		assert_int_equal(t->state, SLUICE_READY);
		assert_int_equal(t->attempts, 0);
		check_payload(t, "r", i);
		sluice_task_free(t);

		assert_null(it_peek(c, b->acked[i]));

		t = it_peek(c, b->session[i]);
		assert_non_null(t);
		assert_int_equal(t->state, SLUICE_READY);
		assert_int_equal(t->attempts, 1);
		assert_int_equal(t->lease, 0);
		check_payload(t, "s", i);
		sluice_task_free(t);

		t = it_peek(c, b->detached[i]);
		assert_non_null(t);
		assert_int_equal(t->state, SLUICE_TAKEN);
		assert_int_equal(t->detached, 1);
		assert_int_equal(t->lease, b->detached_lease[i]);
		check_payload(t, "d", i);
		sluice_task_free(t);
	}
	assert_int_equal(it_state(c, b->delayed), SLUICE_DELAYED);
	assert_int_equal(it_state(c, b->buried), SLUICE_BURIED);
	{
		const char *pz[] = { "pz" };
		struct sluice_take_opts to = { pz, 1, 0, 1, 0 };
		struct sluice_stats *st;
		size_t n;

		it_rc(c, sluice_stats(c, "pz", &st), 0);
		assert_int_equal(st->tubes[0].paused_until, b->paused_until);
		assert_int_equal(st->tubes[0].ready, 1);
		sluice_stats_free(st);
		it_rc(c, sluice_take(c, &to, &t, &n), SLUICE_ETIMEDOUT);
	}
	/* keys survive: the put finds the live task */
	{
		struct sluice_put_opts o;

		sluice_put_opts_init(&o);
		o.tube = "keyed";
		o.key = "unique";
		it_rc(c, sluice_put(c, &o, "again", 5, &id, &created), 0);
		assert_int_equal(created, 0);
		assert_int_equal(id, b->keyed);
	}
	/* new ids continue after the old ones */
	id = it_put(c, "new", "new");
	assert_true(id > b->max_id);
	it_rc(c, sluice_delete(c, id), 0);
	{
		struct it_counts k = it_counts(c, NULL);

		assert_int_equal(k.ready, 2 * N + 2);
		assert_int_equal(k.taken, N);
		assert_int_equal(k.delayed, 1);
		assert_int_equal(k.buried, 1);
	}
}

/* Acks every detached lease from the session that never took them. */
static void
ack_detached(struct sluice_client *c, const struct before *b)
{
	for (int i = 0; i < N; i++) {
		struct sluice_after after;

		it_rc(c,
		    sluice_ack(
		        c, b->detached[i], b->detached_lease[i], NULL, &after),
		    0);
		assert_int_equal(after.state, 0);
		assert_null(it_peek(c, b->detached[i]));
	}
}

static void
restart_test(void **state, bool snapshot)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct before b;

	it_start(s);
	c = it_client(s);
	memset(&b, 0, sizeof(b));
	work_before_crash(c, &b, snapshot);
	/* the kill, not a disconnect, ends the session */
	it_crash_restart(s, &c);
	check_after_restart(c, &b);

	/* once more: recovery now also replays the releases it logged */
	it_crash_restart(s, &c);
	check_after_restart(c, &b);
	ack_detached(c, &b);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

static void
test_restart_from_the_log(void **state)
{
	restart_test(state, false);
}

static void
test_restart_from_a_snapshot_and_the_log(void **state)
{
	restart_test(state, true);
}

/* A detached lease taken before the crash still ends at its ttr after
 * the restart. The ttr outlasts the restart: 2 s, 6 s under the
 * sanitizers (a sanitized restart on a busy machine took over 2 s, and
 * the lease had ended before the first look). */
static void
test_detached_lease_expires_after_restart(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct sluice_task *t;
	int64_t ttr = it_sanitized() ? 6000 : 2000;
	int64_t t0;
	uint64_t id;

	it_start(s);
	c = it_client(s);
	sluice_put_opts_init(&o);
	o.tube = "ttr";
	o.ttr_ms = (uint64_t)ttr;
	id = it_put_o(c, &o, "x");
	t0 = it_mono_ms();
	t = it_take(c, "ttr", 0, 1);
	it_crash_restart(s, &c);
	assert_int_equal(it_state(c, id), SLUICE_TAKEN);
	assert_true(it_wait_state(c, id, SLUICE_READY, ttr + 3000) >= 0);
	assert_true(it_mono_ms() - t0 >= ttr - 10);
	it_rc(c, sluice_ack(c, id, t->lease, NULL, NULL), SLUICE_ESTATE);
	sluice_task_free(t);
	t = it_peek(c, id);
	assert_int_equal(t->attempts, 1);
	sluice_task_free(t);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A take's reply may leave before its record is durable, so a crash can
 * lose a take whose lease a worker holds, and the LSN it had is reused.
 * Leases name their epoch: the ones after a restart are higher and never
 * equal one from before, and the old one is refused. */
static void
test_leases_after_a_restart_never_repeat_old_ones(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	uint64_t id, before[3], after;

	it_start(s);
	c = it_client(s);
	id = it_put(c, "lease", "x");
	for (int i = 0; i < 3; i++) {
		t = it_take(c, "lease", 0, 0);
		assert_int_equal(t->id, id);
		before[i] = t->lease;
		assert_true(i == 0 || before[i] > before[i - 1]);
		if (i < 2)
			it_rc(
			    c, sluice_release(c, id, t->lease, 0, -1, NULL), 0);
		sluice_task_free(t);
	}
	it_crash_restart(s, &c);
	t = it_take(c, "lease", 0, 0);
	assert_int_equal(t->id, id);
	after = t->lease;
	sluice_task_free(t);
	assert_true(after > before[2]);
	assert_true(after >> 32 > before[2] >> 32); /* a later epoch */
	for (int i = 0; i < 3; i++)
		it_rc(
		    c, sluice_ack(c, id, before[i], NULL, NULL), SLUICE_ESTALE);
	it_rc(c, sluice_ack(c, id, after, NULL, NULL), 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A durable take is answered only once its own record is: killed right
 * after the reply, the node still counts the attempt (its session lease
 * ends with the crash: the task is ready again, attempts 1). */
static void
test_a_durable_take_survives_a_crash(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	const char *tubes[1] = { "dur" };
	struct sluice_take_opts o = { tubes, 1, 0, 1, 0, 0, 1 };
	struct sluice_client *c;
	struct sluice_task *t = NULL;
	size_t n = 0;
	uint64_t id;

	it_start(s);
	c = it_client(s);
	id = it_put(c, "dur", "x");
	it_rc(c, sluice_take(c, &o, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t->id, id);
	sluice_task_free(t);
	it_crash_restart(s, &c);
	t = it_peek(c, id);
	if (t->state != SLUICE_READY || t->attempts != 1) {
		t_srv_print_log(s);
		fail_msg("after the crash task %llu is %s, attempts %u, "
		         "last_error \"%s\": want ready, attempts 1",
		    (unsigned long long)id, sluice_state_name(t->state),
		    t->attempts, t->last_error ? t->last_error : "");
	}
	sluice_task_free(t);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_restart_from_the_log),
		T(test_restart_from_a_snapshot_and_the_log),
		T(test_detached_lease_expires_after_restart),
		T(test_leases_after_a_restart_never_repeat_old_ones),
		T(test_a_durable_take_survives_a_crash),
	};
#undef T
	return cmocka_run_group_tests_name("restart", tests, NULL, NULL);
}
