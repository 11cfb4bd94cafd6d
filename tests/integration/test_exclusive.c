/* Exclusivity, the classic check: 100,000 tasks (loaded with batch puts)
 * are taken and acked by 100 concurrent workers, each a thread with its
 * own client handle. Every id must be processed exactly once (a bitmap,
 * set with an atomic or: a bit found set already is a double delivery),
 * none may be lost, and stats must end at zero. The counts are the
 * acceptance's; they are not scaled down under sanitizers. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

enum {
	TASKS = 100000,
	WORKERS = 100,
	TAKE_WAIT_MS = 200,
};

struct shared {
	const char *url;
	uint64_t first_id;
	_Atomic uint64_t *bits; /* TASKS bits */
	atomic_long done;       /* acks that succeeded */
	atomic_long twice;      /* ids delivered more than once */
	int64_t deadline;       /* monotonic ms */
	struct it_errs errs;
};

struct worker {
	pthread_t th;
	struct shared *sh;
	long acked;
};

/* Marks `id` processed; false when it already was. */
static bool
mark(struct shared *sh, uint64_t id)
{
	uint64_t i = id - sh->first_id;
	uint64_t bit = UINT64_C(1) << (i % 64);

	return (atomic_fetch_or(&sh->bits[i / 64], bit) & bit) == 0;
}

static void *
worker_run(void *arg)
{
	static const char *const tubes[] = { "excl" };
	struct worker *w = arg;
	struct shared *sh = w->sh;
	struct sluice_take_opts o = { tubes, 1, TAKE_WAIT_MS, 1, 0 };
	struct sluice_client *c = it_client_url(sh->url);

	if (c == NULL) {
		it_errs_add(&sh->errs, "cannot open a client");
		return NULL;
	}
	for (;;) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int rc;

		if (it_mono_ms() > sh->deadline) {
			it_errs_add(&sh->errs, "not done in time");
			break;
		}
		rc = sluice_take(c, &o, &t, &n);
		if (rc == SLUICE_ETIMEDOUT) {
			if (atomic_load(&sh->done) >= TASKS)
				break;
			continue;
		}
		if (rc != 0) {
			it_errs_add(&sh->errs, "take: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
			break;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t id = t[i].id;

			if (id < sh->first_id || id >= sh->first_id + TASKS) {
				it_errs_add(&sh->errs, "unknown id %llu",
				    (unsigned long long)id);
				continue;
			}
			if (!mark(sh, id))
				atomic_fetch_add(&sh->twice, 1);
			rc = sluice_ack(c, id, t[i].lease, NULL, NULL);
			if (rc != 0) {
				it_errs_add(&sh->errs, "ack %llu: %s (%s)",
				    (unsigned long long)id, sluice_strerror(rc),
				    sluice_errmsg(c));
				continue;
			}
			w->acked++;
			atomic_fetch_add(&sh->done, 1);
		}
		sluice_task_free(t);
	}
	sluice_close(c);
	return NULL;
}

/* Loads TASKS tasks with batch puts; their ids must be consecutive. */
static uint64_t
load(struct sluice_client *c)
{
	struct sluice_batch_item *items =
	    calloc(SLUICE_BATCH_MAX, sizeof(*items));
	uint64_t first = 0, next = 0;
	char payload[16];

	assert_non_null(items);
	for (int b = 0; b < TASKS / SLUICE_BATCH_MAX; b++) {
		for (int i = 0; i < SLUICE_BATCH_MAX; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = "excl";
			items[i].payload = payload;
			items[i].len = sizeof(payload);
		}
		memset(payload, 'x', sizeof(payload));
		it_rc(c, sluice_put_batch(c, items, SLUICE_BATCH_MAX), 0);
		for (int i = 0; i < SLUICE_BATCH_MAX; i++) {
			assert_int_equal(items[i].rc, 0);
			if (first == 0)
				first = next = items[i].id;
			assert_int_equal(items[i].id, next);
			next++;
		}
	}
	free(items);
	return first;
}

/* Every task was acked once, yet some remain: says which, and how they
 * got there (their state, attempts and last error; the server's log). */
static void
explain_leftovers(const struct t_srv *s, struct sluice_client *c)
{
	struct sluice_task *ts = NULL;
	size_t n = 0;

	t_srv_print_log(s);
	if (sluice_list(c, "excl", 0, SLUICE_ORDER_AGE, 20, 0, &ts, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++)
		fprintf(stderr,
		    "left: task %llu %s attempts %u lease %llu taken_at "
		    "%llu updated_at %llu last_error \"%s\"\n",
		    (unsigned long long)ts[i].id,
		    sluice_state_name(ts[i].state), ts[i].attempts,
		    (unsigned long long)ts[i].lease,
		    (unsigned long long)ts[i].taken_at,
		    (unsigned long long)ts[i].updated_at,
		    ts[i].last_error ? ts[i].last_error : "");
	sluice_task_free(ts);
}

static void
test_every_task_is_processed_exactly_once(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct worker *w = calloc(WORKERS, sizeof(*w));
	struct shared sh;
	struct sluice_client *c;
	struct it_counts k;
	int64_t t0;
	long sum = 0, idle = 0;

	assert_non_null(w);
	memset(&sh, 0, sizeof(sh));
	it_errs_init(&sh.errs);
	sh.bits = calloc((TASKS + 63) / 64, sizeof(*sh.bits));
	assert_non_null(sh.bits);
	it_start(s);
	c = it_client(s);
	t0 = it_mono_ms();
	sh.first_id = load(c);
	print_message("loaded %d tasks in %lld ms\n", TASKS,
	    (long long)(it_mono_ms() - t0));
	assert_int_equal(it_counts(c, "excl").ready, TASKS);

	sh.url = s->url;
	t0 = it_mono_ms();
	sh.deadline = t0 + (it_sanitized() ? 240000 : 120000);
	for (int i = 0; i < WORKERS; i++) {
		w[i].sh = &sh;
		assert_int_equal(
		    pthread_create(&w[i].th, NULL, worker_run, &w[i]), 0);
	}
	for (int i = 0; i < WORKERS; i++) {
		assert_int_equal(pthread_join(w[i].th, NULL), 0);
		sum += w[i].acked;
		if (w[i].acked == 0)
			idle++;
	}
	print_message("%d workers took and acked %ld tasks in %lld ms "
	              "(%ld workers got none)\n",
	    WORKERS, sum, (long long)(it_mono_ms() - t0), idle);
	it_errs_check(&sh.errs);
	assert_int_equal(atomic_load(&sh.twice), 0);
	assert_int_equal(sum, TASKS);
	for (uint64_t i = 0; i < TASKS; i++)
		if ((sh.bits[i / 64] & (UINT64_C(1) << (i % 64))) == 0)
			fail_msg("task %llu was never processed",
			    (unsigned long long)(sh.first_id + i));

	k = it_counts(c, NULL);
	if (k.ready + k.delayed + k.taken + k.buried != 0)
		explain_leftovers(s, c);
	assert_int_equal(k.ready, 0);
	assert_int_equal(k.delayed, 0);
	assert_int_equal(k.taken, 0);
	assert_int_equal(k.buried, 0);
	assert_int_equal(it_node_kv(c, "tasks"), 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	free(sh.bits);
	free(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_every_task_is_processed_exactly_once, it_setup,
		    it_teardown),
	};
	return cmocka_run_group_tests_name("exclusive", tests, NULL, NULL);
}
