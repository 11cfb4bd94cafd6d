/* Tests of the queue's schedules (queue/sched.h): the records' decisions
 * and errors, a slot fired once (a second FIRE of it is refused by decide
 * and by apply), a taken key that skips its slot, replay and a snapshot
 * that give the same state, and the memory a schedule holds. A fixed
 * clock throughout. */
#include <stdlib.h>
#include <string.h>

#include "queue/sched.h"
#include "t_lib.h"
#include "t_queue.h"

static const int64_t T0 = 1790000000000; /* 2026-09-21 */

static struct queue_sched_req
req(const char *name, const char *cron)
{
	struct queue_sched_req r;

	memset(&r, 0, sizeof(r));
	r.name = name;
	r.name_len = strlen(name);
	r.tube = "jobs";
	r.tube_len = 4;
	r.cron = cron;
	r.cron_len = strlen(cron);
	r.tz = "Europe/Paris";
	r.tz_len = 12;
	r.pri = 7;
	r.payload = "hello";
	r.payload_len = 5;
	return r;
}

static int
setup(void **state)
{
	*state = tq_new(T0);
	return *state == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	return tq_end(*state);
}

/* Bad input gets its specific error and changes nothing. */
static void
test_sched_bad_input_is_refused(void **state)
{
	struct tq *h = *state;
	struct queue_sched_req r = req("nightly", "0 25 * * *");
	struct qrec rec;
	char err[160];

	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    SLUICE_ESCHED);
	assert_string_equal(err, "hour field: 25 is out of 0-23");
	r = req("bad name!", "* * * * *");
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    SLUICE_ESCHED);
	r = req("n", "* * * * *");
	r.tube = "bad tube";
	r.tube_len = 8;
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    SLUICE_ETUBE);
	r = req("n", "* * * * *");
	r.tz = "../x";
	r.tz_len = 4;
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    SLUICE_ESCHED);
	r = req("n", "* * * * *");
	r.catch_up = 3;
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    SLUICE_EINVAL);
	assert_int_equal(
	    queue_decide_sched_delete(h->q, "n", 1, &rec), SLUICE_ENOTFOUND);
	assert_int_equal(
	    queue_decide_sched_pause(h->q, h->now, "n", 1, true, &rec),
	    SLUICE_ENOTFOUND);
	assert_int_equal(queue_sched_count(h->q), 0);
}

/* A slot fires once: decide refuses it again, and so does apply. */
static void
test_sched_slot_fires_once(void **state)
{
	struct tq *h = *state;
	struct queue_sched_req r = req("every", "* * * * *");
	struct qrec rec, again;
	char err[160], key[QUEUE_SCHED_KEY_MAX], key2[QUEUE_SCHED_KEY_MAX];
	uint64_t id;
	int64_t slot = (T0 / 60000 + 1) * 60000;
	struct sched *s;
	struct queue_task_view t;

	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	h->now = slot + 10;
	assert_int_equal(queue_decide_sched_fire(h->q, h->now, "every", 5, slot,
	                     true, key, &rec, &id),
	    0);
	assert_true(rec.u.sched.has_put);
	assert_true(id != 0);
	/* decided from the same state twice: the second apply is refused */
	assert_int_equal(queue_decide_sched_fire(h->q, h->now, "every", 5, slot,
	                     true, key2, &again, &id),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(tq_commit(h, &again), SLUICE_ECORRUPT);
	assert_int_equal(queue_decide_sched_fire(h->q, h->now, "every", 5, slot,
	                     true, key, &rec, &id),
	    SLUICE_ESTATE);
	s = queue_sched_find(h->q, "every", 5);
	assert_non_null(s);
	assert_true(s->fired == 1 && s->last_slot == slot && s->from == slot);
	assert_int_equal(queue_peek(h->q, h->now, s->last_id, &t), 0);
	assert_int_equal(t.pri, 7);
	assert_int_equal(t.key_len, strlen("every@2026-09-21T14:14Z"));
	assert_memory_equal(t.key, "every@2026-09-21T14:14Z", t.key_len);
}

/* The slot's key taken in the tube: the slot is skipped. */
static void
test_sched_taken_key_skips_the_slot(void **state)
{
	struct tq *h = *state;
	struct queue_sched_req r = req("k", "* * * * *");
	struct queue_put_req p;
	struct queue_put_res res;
	struct qrec rec;
	char err[160], key[QUEUE_SCHED_KEY_MAX];
	int64_t slot = (T0 / 60000 + 1) * 60000;
	uint64_t id;

	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	queue_put_req_init(&p);
	p.tube = "jobs";
	p.tube_len = 4;
	p.key = key;
	p.key_len = queue_sched_key("k", 1, slot, key);
	assert_int_equal(queue_decide_put(h->q, h->now, &p, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	h->now = slot;
	assert_int_equal(queue_decide_sched_fire(
	                     h->q, h->now, "k", 1, slot, true, key, &rec, &id),
	    0);
	assert_false(rec.u.sched.has_put);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_sched_find(h->q, "k", 1)->skipped, 1);
	assert_int_equal(queue_sched_find(h->q, "k", 1)->fired, 0);
}

/* Pause, resume, replace and delete; replay and a snapshot agree. */
static void
test_sched_replay_and_snapshot_agree(void **state)
{
	struct tq *h = *state;
	struct queue_sched_req r = req("a", "*/5 * * * *");
	struct qrec rec;
	char err[160], key[QUEUE_SCHED_KEY_MAX];
	struct queue *replayed, *loaded;
	struct buf snap;
	uint64_t id;
	int64_t slot = (T0 / 300000 + 1) * 300000;

	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	r = req("b", "@daily");
	r.catch_up = QREC_CATCH_ALL;
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	r = req("c", "@hourly");
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	h->now = slot;
	assert_int_equal(queue_decide_sched_fire(
	                     h->q, h->now, "a", 1, slot, true, key, &rec, &id),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(
	    queue_decide_sched_pause(h->q, h->now, "b", 1, true, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(
	    queue_decide_sched_pause(h->q, h->now, "b", 1, true, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE); /* already paused */
	assert_int_equal(queue_decide_sched_fire(h->q, h->now, "b", 1, slot + 1,
	                     true, key, &rec, &id),
	    SLUICE_ESTATE); /* paused */
	assert_int_equal(queue_decide_sched_delete(h->q, "c", 1, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_sched_count(h->q), 2);

	replayed = queue_new(NULL);
	assert_int_equal(tq_replay(h, replayed, 0, h->nlog), 0);
	assert_true(tq_same(h->q, replayed, h->now));
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	loaded = queue_new(NULL);
	assert_int_equal(tq_snap_load(loaded, &snap), 0);
	assert_true(tq_same(h->q, loaded, h->now));
	assert_int_equal(queue_sched_find(loaded, "a", 1)->fired, 1);
	assert_true(queue_sched_find(loaded, "b", 1)->paused);
	buf_fini(&snap);
	queue_free(replayed);
	queue_free(loaded);
}

/* At most 512 bytes besides the payload, with every string at its
 * longest. */
static void
test_sched_memory_is_bounded(void **state)
{
	struct tq *h = *state;
	char name[QREC_SCHED_NAME_MAX + 1], tube[QREC_NAME_MAX + 1];
	char cron[CRON_EXPR_MAX + 1], tzn[TZ_NAME_MAX + 1];
	struct queue_sched_req r;
	struct qrec rec;
	char err[160];
	const struct sched *s;

	memset(name, 'n', QREC_SCHED_NAME_MAX);
	name[QREC_SCHED_NAME_MAX] = '\0';
	memset(tube, 't', QREC_NAME_MAX);
	tube[QREC_NAME_MAX] = '\0';
	memset(cron, ' ', CRON_EXPR_MAX);
	memcpy(cron, "* * * * *", 9);
	cron[CRON_EXPR_MAX] = '\0';
	memset(tzn, 'z', TZ_NAME_MAX);
	tzn[TZ_NAME_MAX] = '\0';
	r = req(name, cron);
	r.tube = tube;
	r.tube_len = QREC_NAME_MAX;
	r.tz = tzn;
	r.tz_len = TZ_NAME_MAX;
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	s = queue_sched_find(h->q, name, QREC_SCHED_NAME_MAX);
	assert_non_null(s);
	assert_true(queue_sched_mem(s) - s->payload_len <= 512);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_sched_bad_input_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_slot_fires_once, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_taken_key_skips_the_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_replay_and_snapshot_agree, setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_memory_is_bounded, setup, teardown),
	};
	return cmocka_run_group_tests_name("sched", tests, NULL, NULL);
}
