/* A batch put across a move's key window (docs/scaling.md, "Keys";
 * docs/client.md), against real processes on 127.0.0.1: one etcd
 * (it_etcd) and two clusters of one node each (it_move).
 *
 * While a tube's keys are pending at its new owner, a batch's unkeyed
 * items are made at once and its keyed ones refused SLUICE_EMOVING, which
 * libsluice sends again, those items alone. When such a sending again
 * fails as a whole (the owner killed -9 and back as a node that does not
 * lead yet: "not leader", or a lost connection), the batch was still
 * answered: the call returns 0, the items made carry their ids, and the
 * items sent again carry that failure. On the old code the call failed
 * with the sending again's error, and a routed batch gave it to every
 * item: tasks made were reported "not leader" (nothing was done), as the
 * chaos test's history showed.
 *
 * test_move_carry.c tests the window itself. Exits 77 when `etcd` is not
 * installed. */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_etcd.h"
#include "it_move.h"

enum { WB_ITEMS = 3 }; /* a keyed item, an unkeyed one, a keyed one */

struct wb_put {
	struct sluice_router *r;
	int rc;
	char err[256];
	struct sluice_batch_item it[WB_ITEMS];
	atomic_int done;
};

static void *
wb_putter(void *arg)
{
	struct wb_put *w = arg;
	static const char *const keys[WB_ITEMS] = { "b1", NULL, "b2" };

	for (int i = 0; i < WB_ITEMS; i++) {
		sluice_put_opts_init(&w->it[i].opts);
		w->it[i].opts.tube = "bw";
		w->it[i].opts.key = keys[i];
		w->it[i].payload = keys[i] != NULL ? keys[i] : "u";
		w->it[i].len = strlen(w->it[i].payload);
	}
	w->rc = sluice_router_put_batch(w->r, w->it, WB_ITEMS);
	snprintf(w->err, sizeof(w->err), "%s", sluice_router_errmsg(w->r));
	atomic_store(&w->done, 1);
	return NULL;
}

/* The window is open at the target b (its keys pending) when a routed
 * batch of a keyed, an unkeyed and a keyed task comes: the unkeyed one is
 * made there, the keyed ones refused and sent again while b is killed -9
 * and started again (with a leader lease long enough that it does not
 * lead again before a sending reaches it). The batch answers 0: the
 * unkeyed item made, with its id, which b holds after it leads again;
 * the keyed ones with the failure of their sending again, made nowhere. */
static void
test_batch_sent_again_fails_alone(void **state)
{
	struct it_node a, b;
	struct sluice_router *r;
	struct wb_put w = { 0 };
	struct sluice_task *t = NULL;
	struct sluice_put_opts o;
	pthread_t th;
	int64_t end;

	it_move_pair_init(state, &a, &b, "wb1a", "wb1b");
	it_node_arg(&b, "--leader-ttl", it_sanitized() ? "12s" : "6s");
	r = it_move_pair_start(&a, &b, "wb1a", "bw");
	sluice_put_opts_init(&o);
	o.tube = "bw";
	o.key = "b0"; /* a key at the source, to be brought over */
	it_rc(a.c, sluice_put(a.c, &o, "w", 1, NULL, NULL), 0);
	/* a mover dies right after the map change: the target owns the tube
	 * and its keys stay pending there */
	it_move_killed_at("bw", "wb1b", SLUICE_MOVE_KEYS_PENDING);

	w.r = it_move_router();
	sluice_router_set_timeout(w.r, (int)it_move_scaled(15000));
	assert_int_equal(pthread_create(&th, NULL, wb_putter, &w), 0);
	/* the first sending answered: the unkeyed item is at b, the keyed
	 * ones go again every 200 ms at most */
	end = it_mono_ms() + it_move_scaled(10000);
	while (it_move_live_in(b.c, "bw") == 0 && it_mono_ms() < end &&
	    !atomic_load(&w.done))
		it_sleep_ms(10);
	if (atomic_load(&w.done) || it_move_live_in(b.c, "bw") != 1) {
		pthread_join(th, NULL);
		fail_msg("the batch's unkeyed item is not at the target while "
		         "its keyed ones wait: %s: %s",
		    sluice_strerror(w.rc), w.err);
	}
	it_sleep_ms(100); /* its answer reaches the client */
	it_node_kill(&b);
	it_node_start(&b);
	pthread_join(th, NULL);
	if (w.rc != 0)
		fail_msg("the batch, made in part, failed as a whole: %s: %s "
		         "(items: %s, %s, %s)",
		    sluice_strerror(w.rc), w.err, sluice_strerror(w.it[0].rc),
		    sluice_strerror(w.it[1].rc), sluice_strerror(w.it[2].rc));
	print_message("the keyed items sent again: %s (%s)\n",
	    sluice_strerror(w.it[0].rc), w.it[0].errmsg);
	assert_int_equal(w.it[1].rc, 0);
	assert_int_equal(w.it[1].created, 1);
	assert_true(w.it[1].id != 0);
	assert_string_equal(w.it[1].errmsg, "");
	for (int i = 0; i < WB_ITEMS; i += 2) {
		/* not done (refused before, and now not leader), or unknown
		 * (the connection lost): never made, never still "moving" */
		if (w.it[i].rc != SLUICE_ENOTLEADER &&
		    w.it[i].rc != SLUICE_ECONN)
			fail_msg("keyed item %d: %s (%s)", i,
			    sluice_strerror(w.it[i].rc), w.it[i].errmsg);
		assert_true(w.it[i].errmsg != NULL && w.it[i].errmsg[0] != 0);
	}
	/* b leads again: it holds the unkeyed task, and no keyed one */
	it_move_wait_writes(&b);
	it_rc(b.c, sluice_peek(b.c, w.it[1].id, &t), 0);
	assert_int_equal(t->payload_len, 1);
	assert_memory_equal(t->payload, "u", 1);
	sluice_task_free(t);
	assert_int_equal(it_move_live_in(b.c, "bw"), 1);
	sluice_router_close(w.r);
	sluice_router_close(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_batch_sent_again_fails_alone, it_etcd_setup,
		    it_node_teardown),
	};

	return IT_ETCD_RUN("move_window", tests);
}
