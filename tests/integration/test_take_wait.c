/* What a take's answer waits for, on a slow disk (sluiced-fault holding
 * every flush of the log).
 *
 * It waits for the record that began its node's epoch. The
 * lease it hands out is that epoch and the take record's LSN (qrec_lease):
 * were the answer to leave while the epoch's record is still in flight,
 * a crash then would lose the record, the next start would begin the same
 * epoch again at the same LSN, and a take there would hand out the same
 * token a second time. Takes otherwise wait only for their tubes'
 * records (docs/protocol.md), which know nothing of the epoch.
 *
 * sluiced-fault holds every flush of the log PAUSE_MS (the start's first
 * commit, the epoch's record among it, too): a take through libsluice and
 * a reserve through the beanstalk face, sent as soon as the node accepts
 * connections, of tasks put durably before, are not answered before
 * PAUSE_MS have passed since the start (an exact lower bound); and after
 * a kill -9 right after them, the same task taken again gets another
 * lease.
 *
 * It does not wait for writes queued before it that it does not depend
 * on: a take of a task whose put is in the commit in flight is answered
 * when that commit completes, not behind another client's put that
 * gathered meanwhile and waits for the next commit (the old FIFO held it
 * there, a whole flush more). */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"
#include "it_http.h"

enum {
	PAUSE_MS = 1000,     /* sluiced-fault's hold on each flush */
	FIFO_PAUSE_MS = 600, /* the same, in the FIFO's test */
};

static struct sluice_task *
take_one(struct sluice_client *c, const char *tube)
{
	struct sluice_take_opts o = { .tubes = &tube, .ntubes = 1 };
	struct sluice_task *t = NULL;
	size_t n = 0;

	it_rc(c, sluice_take(c, &o, &t, &n), 0);
	assert_int_equal(n, 1);
	return t;
}

struct putter {
	struct sluice_client *c;
	const char *tube;
	uint64_t id;
	int64_t answered; /* it_mono_ms */
	int rc;
};

static void *
putter_main(void *arg)
{
	struct putter *p = arg;
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = p->tube;
	p->rc = sluice_put(p->c, &o, "x", 1, &p->id, NULL);
	p->answered = it_mono_ms();
	return NULL;
}

static void
test_a_take_does_not_wait_behind_later_commits(void **state)
{
	static char pause[32];
	struct t_srv *s = it_srv(*state, "node");
	struct putter w = { .tube = "x" }, p = { .tube = "y" };
	pthread_t tw, tp;
	struct sluice_client *c;
	struct sluice_task *t;
	int64_t t0, took;

	snprintf(pause, sizeof(pause), "fsync:%d", FIFO_PAUSE_MS);
	setenv("SLUICE_FAULT_PAUSE", pause, 1);
	s->prog = "sluiced-fault";
	it_start(s);
	unsetenv("SLUICE_FAULT_PAUSE");
	c = it_client(s);
	w.c = it_client(s);
	p.c = it_client(s);
	(void)it_put(c, "warm", "w"); /* the start's commit is done */

	/* w's put goes into a commit (FIFO_PAUSE_MS); p's gathers into the
	 * next one meanwhile; then the take of w's task. */
	t0 = it_mono_ms();
	pthread_create(&tw, NULL, putter_main, &w);
	it_sleep_ms(FIFO_PAUSE_MS / 3);
	pthread_create(&tp, NULL, putter_main, &p);
	it_sleep_ms(FIFO_PAUSE_MS / 6);
	t = take_one(c, "x");
	took = it_mono_ms();
	pthread_join(tw, NULL);
	pthread_join(tp, NULL);
	assert_int_equal(w.rc, 0);
	assert_int_equal(p.rc, 0);
	assert_int_equal(t->id, w.id);
	sluice_task_free(t);
	print_message("w's put answered at %" PRId64 " ms, the take of its "
	              "task at %" PRId64 ", p's put at %" PRId64 "\n",
	    w.answered - t0, took - t0, p.answered - t0);
	/* p's put waits for the commit after w's: the take does not */
	assert_true(p.answered - took >= FIFO_PAUSE_MS / 2);
	sluice_close(w.c);
	sluice_close(p.c);
	sluice_close(c);
}

static void
test_a_take_waits_for_its_epoch_record(void **state)
{
	static char baddr[32], pause[32];
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *t;
	int bport = it_free_port();
	uint64_t id, lease;
	int64_t t0, took, reserved;
	struct bsc b;
	char *got;

	snprintf(baddr, sizeof(baddr), "127.0.0.1:%d", bport);
	s->prog = "sluiced-fault";
	s->args[0] = "--beanstalk";
	s->args[1] = baddr;
	it_start(s);
	c = it_client(s);
	id = it_put(c, "lib", "a"); /* durable: acknowledged */
	(void)it_put(c, "bs", "b");
	sluice_close(c);
	(void)t_srv_stop(s, SIGKILL);

	/* The start's commit, the new epoch's record in it, takes
	 * PAUSE_MS; the node serves meanwhile. */
	snprintf(pause, sizeof(pause), "fsync:%d", PAUSE_MS);
	setenv("SLUICE_FAULT_PAUSE", pause, 1);
	t0 = it_mono_ms();
	it_start(s);
	unsetenv("SLUICE_FAULT_PAUSE");
	print_message("accepting connections %" PRId64 " ms after the start\n",
	    it_mono_ms() - t0);
	c = it_client(s);
	assert_int_equal(bsc_open(&b, bport), 0);
	got = bsc_cmd(&b, "watch bs\r\n");
	assert_string_equal(got, "WATCHING 2\r\n");
	free(got);
	t = take_one(c, "lib");
	took = it_mono_ms() - t0;
	assert_int_equal(t->id, id);
	lease = t->lease;
	sluice_task_free(t);
	got = bsc_cmd(&b, "reserve-with-timeout 0\r\n");
	reserved = it_mono_ms() - t0;
	assert_true(strncmp(got, "RESERVED ", 9) == 0);
	free(got);
	print_message("take answered %" PRId64 " ms, reserve %" PRId64
	              " ms after the start (the epoch's commit: %d ms)\n",
	    took, reserved, PAUSE_MS);
	assert_true(took >= PAUSE_MS);
	assert_true(reserved >= PAUSE_MS);
	bsc_close(&b);
	sluice_close(c);

	/* Whatever the crash lost, the task's next lease is another. */
	(void)t_srv_stop(s, SIGKILL);
	it_start(s);
	c = it_client(s);
	t = take_one(c, "lib");
	assert_int_equal(t->id, id);
	print_message("lease before the crash %" PRIu64 ", after %" PRIu64 "\n",
	    lease, t->lease);
	assert_true(t->lease != lease);
	sluice_task_free(t);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_a_take_waits_for_its_epoch_record, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_take_does_not_wait_behind_later_commits, it_setup,
		    it_teardown),
	};

	return cmocka_run_group_tests_name("take_wait", tests, NULL, NULL);
}
