/* Crash under load: client threads put, take and ack while sluiced is
 * killed with SIGKILL at a random moment; it is restarted on the same
 * data, five rounds. Only replies count: every put answered with an id
 * must survive every later crash unless it was acked; every ack answered
 * with success must never come back. A request under way at the kill has
 * an unknown outcome: a put without a reply is not counted, and a task
 * whose ack got no reply may or may not be there. Puts carry no key, so
 * the library never retries them behind our back.
 *
 * A third kind of client changes a tube's settings all along (its ttr
 * grows by one each time): the last change answered must be there after
 * every crash, or a later one.
 *
 * Small snapshot thresholds make the server snapshot during the load, so
 * kills also land during snapshots; a separate test kills the server
 * while a large snapshot is being written and restarts it at once. */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "it.h"

enum {
	ROUNDS = 5,
	PUTTERS = 3,
	WORKERS = 3,
	THREADS = PUTTERS + WORKERS + 1, /* and one that sets a tube */
	TTR_BASE = 10000,
	KILL_MIN_MS = 150,
	KILL_SPAN_MS = 600,
};

struct ids {
	uint64_t *v;
	size_t n, cap;
};

static void
ids_add(struct ids *s, uint64_t id)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (v == NULL)
			abort();
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = id;
}

static void
ids_merge(struct ids *dst, const struct ids *src)
{
	for (size_t i = 0; i < src->n; i++)
		ids_add(dst, src->v[i]);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool
ids_has(const struct ids *s, uint64_t id)
{
	return bsearch(&id, s->v, s->n, sizeof(id), cmp_u64) != NULL;
}

struct round {
	const char *url;
	atomic_bool stop;
	atomic_size_t answered; /* puts answered this round */
	struct it_errs *errs;
};

struct client_th {
	pthread_t th;
	struct round *r;
	uint64_t seed;
	struct ids put_ok, ack_ok, ack_unknown;
	uint64_t ttr; /* the setter: the last ttr it set and saw answered */
};

/* The outcome of a request the kill interrupted is unknown; anything
 * else is a failure. */
static bool
lost(int rc)
{
	return rc == SLUICE_ECONN || rc == SLUICE_ETIMEDOUT ||
	    rc == SLUICE_ESHUTDOWN;
}

static struct sluice_client *
th_client(struct round *r)
{
	struct sluice_client *c = it_client_url(r->url);

	if (c != NULL) {
		sluice_set_connect_timeout(c, 300);
		sluice_set_timeout(c, it_sanitized() ? 6000 : 3000);
	}
	return c;
}

static void *
putter_run(void *arg)
{
	struct client_th *t = arg;
	struct sluice_client *c = th_client(t->r);
	struct sluice_batch_item items[8];
	char payload[64];

	if (c == NULL)
		return NULL;
	memset(payload, 'p', sizeof(payload));
	while (!atomic_load(&t->r->stop)) {
		uint64_t id;
		int rc;

		if (t_below(&t->seed, 4) != 0) {
			size_t len = (size_t)t_below(&t->seed, sizeof(payload));

			rc = sluice_put(c, NULL, payload, len, &id, NULL);
			if (rc == 0) {
				ids_add(&t->put_ok, id);
				atomic_fetch_add(&t->r->answered, 1);
			}
		} else {
			for (int i = 0; i < 8; i++) {
				sluice_put_opts_init(&items[i].opts);
				items[i].payload = payload;
				items[i].len = (size_t)i;
			}
			rc = sluice_put_batch(c, items, 8);
			for (int i = 0; rc == 0 && i < 8; i++) {
				if (items[i].rc != 0)
					it_errs_add(t->r->errs,
					    "batch item: %s",
					    sluice_strerror(items[i].rc));
				else
					ids_add(&t->put_ok, items[i].id);
				atomic_fetch_add(&t->r->answered, 1);
			}
		}
		if (rc != 0 && !lost(rc))
			it_errs_add(t->r->errs, "put: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
	}
	sluice_close(c);
	return NULL;
}

static void *
worker_run(void *arg)
{
	struct client_th *t = arg;
	struct sluice_client *c = th_client(t->r);
	struct sluice_take_opts o = { NULL, 0, 50, 4, 0 };

	if (c == NULL)
		return NULL;
	while (!atomic_load(&t->r->stop)) {
		struct sluice_task *tasks = NULL;
		size_t n = 0;
		int rc;

		o.detach = (int)t_below(&t->seed, 2);
		rc = sluice_take(c, &o, &tasks, &n);
		if (rc == SLUICE_ETIMEDOUT || lost(rc))
			continue;
		if (rc != 0) {
			it_errs_add(t->r->errs, "take: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			/* leave some taken: they must come back */
			if (t_below(&t->seed, 8) == 0)
				continue;
			rc = sluice_ack(
			    c, tasks[i].id, tasks[i].lease, NULL, NULL);
			if (rc == 0) {
				ids_add(&t->ack_ok, tasks[i].id);
			} else {
				ids_add(&t->ack_unknown, tasks[i].id);
				if (!lost(rc))
					it_errs_add(t->r->errs, "ack: %s (%s)",
					    sluice_strerror(rc),
					    sluice_errmsg(c));
			}
		}
		sluice_task_free(tasks);
	}
	sluice_close(c);
	return NULL;
}

/* Sets tube "cfg"'s ttr to one more each time, from th->ttr on. */
static void *
setter_run(void *arg)
{
	struct client_th *t = arg;
	struct sluice_client *c = th_client(t->r);
	struct sluice_tube_conf conf;

	if (c == NULL)
		return NULL;
	memset(&conf, 0, sizeof(conf));
	conf.set = SLUICE_TS_TTR;
	conf.ttr_ms = t->ttr;
	while (!atomic_load(&t->r->stop)) {
		int rc;

		conf.ttr_ms++;
		rc = sluice_tube_set(c, "cfg", &conf, 0, NULL);
		if (rc == 0)
			t->ttr = conf.ttr_ms;
		else if (!lost(rc))
			it_errs_add(t->r->errs, "tube set: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
		it_sleep_ms(2);
	}
	sluice_close(c);
	return NULL;
}

/* After a restart: "cfg" has the ttr last answered, or a later one. */
static uint64_t
check_settings(const struct t_srv *s, uint64_t answered)
{
	struct sluice_client *c = it_client(s);
	struct sluice_tube_conf conf;

	it_rc(c, sluice_tube_show(c, "cfg", &conf), 0);
	sluice_close(c);
	if (answered > TTR_BASE && conf.ttr_ms < answered)
		fail_msg("tube cfg's ttr %llu was answered, but it is %llu "
		         "after the crash",
		    (unsigned long long)answered,
		    (unsigned long long)conf.ttr_ms);
	return conf.set ? conf.ttr_ms : TTR_BASE;
}

static void
test_crash_under_load(void **state)
{
	static const char *const args[] = { "--snapshot-records", "3000",
		NULL };
	struct t_srv *s = it_srv(*state, "node");
	struct client_th th[THREADS];
	uint64_t ttr = TTR_BASE;
	struct ids put_ok = { 0 }, ack_ok = { 0 }, ack_unknown = { 0 };
	struct it_errs errs;
	struct sluice_client *c;
	uint64_t seed = t_seed(0x5eed);
	size_t present = 0, gone_unknown = 0;

	for (int i = 0; args[i] != NULL; i++)
		s->args[i] = args[i];
	it_errs_init(&errs);
	it_start(s);
	for (int round = 0; round < ROUNDS; round++) {
		struct round r = { s->url, false, 0, &errs };
		int64_t kill_at =
		    KILL_MIN_MS + (int64_t)t_below(&seed, KILL_SPAN_MS);
		size_t puts = 0, acks = 0;
		int status;

		memset(th, 0, sizeof(th));
		for (int i = 0; i < THREADS; i++) {
			th[i].r = &r;
			th[i].seed = t_rand(&seed);
			th[i].ttr = ttr;
			assert_int_equal(pthread_create(&th[i].th, NULL,
			                     i < PUTTERS           ? putter_run
			                         : i < THREADS - 1 ? worker_run
			                                           : setter_run,
			                     &th[i]),
			    0);
		}
		it_sleep_ms(kill_at);
		/* A loaded machine may not have answered a put yet: the kill
		 * must land while answered puts exist (bounded wait). */
		for (int i = 0; i < 1000 && atomic_load(&r.answered) == 0; i++)
			it_sleep_ms(10);
		status = t_srv_stop(s, SIGKILL);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		/* the threads end before the restart: a request they send
		 * later must not reach the next server */
		atomic_store(&r.stop, true);
		for (int i = 0; i < THREADS; i++) {
			assert_int_equal(pthread_join(th[i].th, NULL), 0);
			puts += th[i].put_ok.n;
			acks += th[i].ack_ok.n;
			ids_merge(&put_ok, &th[i].put_ok);
			ids_merge(&ack_ok, &th[i].ack_ok);
			ids_merge(&ack_unknown, &th[i].ack_unknown);
			free(th[i].put_ok.v);
			free(th[i].ack_ok.v);
			free(th[i].ack_unknown.v);
		}
		print_message("round %d: killed after %lld ms; %zu puts and "
		              "%zu acks answered\n",
		    round, (long long)kill_at, puts, acks);
		assert_true(puts > 0);
		it_start(s);
		ttr = check_settings(s, th[THREADS - 1].ttr);
	}
	it_errs_check(&errs);
	assert_true(ack_ok.n > 0);
	qsort(ack_ok.v, ack_ok.n, sizeof(uint64_t), cmp_u64);
	qsort(ack_unknown.v, ack_unknown.n, sizeof(uint64_t), cmp_u64);

	/* the server was restarted after the last kill */
	c = it_client(s);
	for (size_t i = 0; i < put_ok.n; i++) {
		uint64_t id = put_ok.v[i];
		int st = it_state(c, id);

		if (ids_has(&ack_ok, id)) {
			if (st != 0)
				fail_msg("task %llu was acked but is %s",
				    (unsigned long long)id,
				    sluice_state_name(st));
		} else if (ids_has(&ack_unknown, id)) {
			gone_unknown += st == 0;
		} else if (st == 0) {
			fail_msg("task %llu was put (and never acked) but is "
			         "gone",
			    (unsigned long long)id);
		} else {
			present++;
		}
	}
	/* and nothing acked is there, whether or not its put was counted */
	for (size_t i = 0; i < ack_ok.n; i++)
		if (it_state(c, ack_ok.v[i]) != 0)
			fail_msg("acked task %llu is back",
			    (unsigned long long)ack_ok.v[i]);
	print_message("%zu puts answered, %zu acks answered (%zu with no "
	              "answer, %zu of those done); %zu tasks still there\n",
	    put_ok.n, ack_ok.n, ack_unknown.n, gone_unknown, present);
	/* what is still taken was taken detached (session leases ended
	 * with the server) */
	{
		struct sluice_task *l;
		uint64_t taken = it_counts(c, NULL).taken;
		size_t n;

		it_rc(c,
		    sluice_list(c, SLUICE_DEFAULT_TUBE, SLUICE_TAKEN,
		        SLUICE_ORDER_AGE, SLUICE_LIST_MAX, 0, &l, &n),
		    0);
		assert_int_equal(
		    n, taken < SLUICE_LIST_MAX ? taken : SLUICE_LIST_MAX);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(l[i].detached, 1);
		sluice_task_free(l);
	}
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	free(put_ok.v);
	free(ack_ok.v);
	free(ack_unknown.v);
}

/* Killed while its snapshot child writes a large snapshot, the server
 * can be restarted at once: the child must not outlive it holding the
 * data directory's lock or the listening port. */
static void
test_restart_while_a_snapshot_was_being_written(void **state)
{
	enum { TASKS = 20000, SIZE = 4096 };
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_batch_item *items = calloc(1000, sizeof(*items));
	char *payload = malloc(SIZE);
	struct sluice_client *c;
	uint64_t lsn;

	assert_non_null(items);
	assert_non_null(payload);
	memset(payload, 's', SIZE);
	it_start(s);
	c = it_client(s);
	for (int b = 0; b < TASKS / 1000; b++) {
		for (int i = 0; i < 1000; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].payload = payload;
			items[i].len = SIZE;
		}
		it_rc(c, sluice_put_batch(c, items, 1000), 0);
	}
	for (int round = 0; round < 3; round++) {
		/* a snapshot request, then the kill as soon as the child is
		 * at work: the reply never comes */
		sluice_set_timeout(c, 30);
		assert_int_not_equal(sluice_snapshot(c, &lsn), 0);
		it_crash_restart(s, &c);
		sluice_set_timeout(c, IT_CALL_MS * (it_sanitized() ? 3 : 1));
		assert_int_equal(it_counts(c, NULL).ready, TASKS);
	}
	it_rc(c, sluice_snapshot(c, &lsn), 0);
	assert_true(lsn > 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	free(items);
	free(payload);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_crash_under_load),
		T(test_restart_while_a_snapshot_was_being_written),
	};
#undef T
	return cmocka_run_group_tests_name("crash", tests, NULL, NULL);
}
