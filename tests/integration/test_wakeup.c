/* Wake-up: a take blocked in one client is answered as soon as another
 * client puts a task it can have, not at its next poll or at the end of
 * its wait. The bound (< 200 ms from the put's start to the take's
 * return) is a correctness bound: a server that polled would miss it. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "it.h"

enum {
	WAIT_MS = 5000,
	BOUND_MS = 200,
	ROUNDS = 10,
};

struct taker {
	pthread_t th;
	const char *url;
	const char *tubes[2];
	size_t ntubes;
	uint32_t max;
	int rc;
	size_t n;
	uint64_t ids[8];
	int64_t done_ms; /* monotonic, when the take returned */
};

static void *
taker_run(void *arg)
{
	struct taker *k = arg;
	struct sluice_take_opts o = { k->tubes, k->ntubes, WAIT_MS, k->max, 0 };
	struct sluice_client *c = it_client_url(k->url);
	struct sluice_task *t = NULL;

	k->rc = -1;
	if (c == NULL)
		return NULL;
	k->rc = sluice_take(c, &o, &t, &k->n);
	k->done_ms = it_mono_ms();
	for (size_t i = 0; k->rc == 0 && i < k->n && i < 8; i++) {
		k->ids[i] = t[i].id;
		/* done with it, so the close does not put it back */
		if (sluice_ack(c, t[i].id, t[i].lease, NULL, NULL) != 0)
			k->rc = -2;
	}
	sluice_task_free(t);
	sluice_close(c);
	return NULL;
}

static void
taker_start(struct taker *k, const struct t_srv *s, const char *t1,
    const char *t2, uint32_t max)
{
	memset(k, 0, sizeof(*k));
	k->url = s->url;
	k->tubes[0] = t1;
	k->tubes[1] = t2;
	k->ntubes = t2 != NULL ? 2 : 1;
	k->max = max;
	assert_int_equal(pthread_create(&k->th, NULL, taker_run, k), 0);
}

/* Waits (bounded) until the server holds `n` waiting takes. */
static void
wait_for_waiters(struct sluice_client *c, uint64_t n)
{
	for (int i = 0; i < 400; i++) {
		if (it_node_kv(c, "waiting_takes") == n)
			return;
		it_sleep_ms(5);
	}
	fail_msg(
	    "the server never had %llu waiting takes", (unsigned long long)n);
}

/* One blocked take, one put from another client, ROUNDS times. */
static void
test_put_wakes_a_blocked_take(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	int64_t worst = 0;

	it_start(s);
	c = it_client(s);
	for (int r = 0; r < ROUNDS; r++) {
		struct taker k;
		int64_t t0, lat;
		uint64_t id;

		taker_start(&k, s, "wake", NULL, 1);
		wait_for_waiters(c, 1);
		t0 = it_mono_ms();
		id = it_put(c, "wake", "now");
		assert_int_equal(pthread_join(k.th, NULL), 0);
		assert_int_equal(k.rc, 0);
		assert_int_equal(k.n, 1);
		assert_int_equal(k.ids[0], id);
		lat = k.done_ms - t0;
		if (lat > worst)
			worst = lat;
		if (lat >= BOUND_MS)
			fail_msg(
			    "round %d: woken after %lld ms", r, (long long)lat);
	}
	print_message("worst wake-up: %lld ms\n", (long long)worst);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A take waiting on two tubes is woken by a put to the second; a batch
 * put wakes a take of several tasks; waiters are served first come,
 * first served. */
static void
test_wakeups_across_tubes_batches_and_order(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_batch_item items[3];
	struct sluice_client *c;
	struct taker k, k1, k2;
	int64_t t0;
	uint64_t id, id2;

	it_start(s);
	c = it_client(s);

	taker_start(&k, s, "ta", "tb", 1);
	wait_for_waiters(c, 1);
	t0 = it_mono_ms();
	id = it_put(c, "tb", "second tube");
	assert_int_equal(pthread_join(k.th, NULL), 0);
	assert_int_equal(k.rc, 0);
	assert_int_equal(k.ids[0], id);
	assert_true(k.done_ms - t0 < BOUND_MS);

	taker_start(&k, s, "batch", NULL, 3);
	wait_for_waiters(c, 1);
	memset(items, 0, sizeof(items));
	for (int i = 0; i < 3; i++) {
		sluice_put_opts_init(&items[i].opts);
		items[i].opts.tube = "batch";
		items[i].payload = "b";
		items[i].len = 1;
	}
	t0 = it_mono_ms();
	it_rc(c, sluice_put_batch(c, items, 3), 0);
	assert_int_equal(pthread_join(k.th, NULL), 0);
	assert_int_equal(k.rc, 0);
	assert_int_equal(k.n, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(k.ids[i], items[i].id);
	assert_true(k.done_ms - t0 < BOUND_MS);

	/* two waiters: the first to wait gets the first task */
	taker_start(&k1, s, "fifo", NULL, 1);
	wait_for_waiters(c, 1);
	taker_start(&k2, s, "fifo", NULL, 1);
	wait_for_waiters(c, 2);
	id = it_put(c, "fifo", "1");
	assert_int_equal(pthread_join(k1.th, NULL), 0);
	assert_int_equal(k1.rc, 0);
	assert_int_equal(k1.ids[0], id);
	id2 = it_put(c, "fifo", "2");
	assert_int_equal(pthread_join(k2.th, NULL), 0);
	assert_int_equal(k2.rc, 0);
	assert_int_equal(k2.ids[0], id2);

	assert_int_equal(it_node_kv(c, "waiting_takes"), 0);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_put_wakes_a_blocked_take, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_wakeups_across_tubes_batches_and_order, it_setup,
		    it_teardown),
	};
	return cmocka_run_group_tests_name("wakeup", tests, NULL, NULL);
}
