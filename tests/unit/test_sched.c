/* Tests of the queue's schedules (queue/sched.h): the records' decisions
 * and errors, a slot fired once (a second FIRE of it is refused by decide
 * and by apply), a taken key that skips its slot, replay and a snapshot
 * that give the same state, and the memory a schedule holds. A fixed
 * clock throughout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/sched.h"
#include "t_lib.h"
#include "t_queue.h"
#include "util/tz.h"

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

/* unix ms of a UTC date and time */
static int64_t
utc(int y, int mo, int d, int h, int mi)
{
	return (tz_days(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 +
	           mi * 60) *
	    1000;
}

/* What a leader does each turn (ops/sched.c, every slot due fired): for
 * each active schedule, the slots after its `from` up to now, each a
 * FIRE with its task. Returns the FIREs committed. */
static int
leader_turn(struct tq *h)
{
	char key[QUEUE_SCHED_KEY_MAX];
	struct qrec rec;
	uint64_t id;
	int n = 0;

	for (size_t i = 0; i < queue_sched_count(h->q); i++) {
		struct sched *s = queue_sched_at(h->q, i);
		struct tz *z = NULL;
		int64_t slot;

		if (s->paused)
			continue;
		assert_int_equal(tz_load(sched_tz(s), s->tz_len, &z), 0);
		while ((slot = cron_next(&s->cron, z, s->from)) > 0 &&
		    slot <= h->now) {
			assert_int_equal(
			    queue_decide_sched_fire(h->q, h->now, sched_name(s),
			        s->name_len, slot, true, key, &rec, &id),
			    0);
			assert_int_equal(tq_commit(h, &rec), 0);
			n++;
			s = queue_sched_at(h->q, i);
		}
		tz_free(z);
	}
	return n;
}

/* The keys of the tasks of `tube`, in id order, joined by spaces. */
static void
keys_of(struct tq *h, const char *tube, char *out, size_t cap)
{
	struct queue_task_view v;
	size_t n = 0;

	out[0] = '\0';
	for (uint64_t id = 1; id < queue_next_id(h->q); id++) {
		if (queue_peek(h->q, h->now, id, &v) != 0 ||
		    v.tube_len != strlen(tube) ||
		    memcmp(v.tube, tube, v.tube_len) != 0)
			continue;
		n += (size_t)snprintf(out + n, cap - n, "%s%.*s", n ? " " : "",
		    (int)v.key_len, v.key);
	}
}

/* A fixed clock walked minute by minute over Paris's spring-forward day
 * (2026-03-29, 02:00 CET -> 03:00 CEST at 01:00 UTC) and New York's
 * fall-back day (2026-11-01, 02:00 EDT -> 01:00 EST at 06:00 UTC): the
 * queue takes each slot once; the skipped local hour fires once at its
 * end, the repeated one once, at its first occurrence. */
static void
test_sched_dst_days_with_a_fixed_clock(void **state)
{
	struct tq *h = *state;
	struct queue_sched_req r;
	struct qrec rec;
	char err[160], keys[2048];

	h->now = utc(2026, 3, 28, 22, 0); /* 23:00 CET */
	r = req("paris-h", "0 1-4 * * *");
	r.tube = "paris";
	r.tube_len = 5;
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	r = req("paris-230", "30 2 * * *");
	r.tube = "paris";
	r.tube_len = 5;
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	for (int m = 0; m < 8 * 60; m++) {
		h->now += 60000;
		leader_turn(h);
	}
	keys_of(h, "paris", keys, sizeof(keys));
	/* 01:00 CET; at 03:00 CEST 02:30 (of the gap) and 03:00 (for 02:00
	 * and 03:00 at once; schedules fire in name order); 04:00 CEST */
	assert_string_equal(keys,
	    "paris-h@2026-03-29T00:00Z paris-230@2026-03-29T01:00Z "
	    "paris-h@2026-03-29T01:00Z paris-h@2026-03-29T02:00Z");

	h->now = utc(2026, 11, 1, 3, 0); /* 23:00 EDT */
	r = req("ny-130", "30 1 * * *");
	r.tube = "ny";
	r.tube_len = 2;
	r.tz = "America/New_York";
	r.tz_len = 16;
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	r = req("ny-h", "0 0-3 * * *");
	r.tube = "ny";
	r.tube_len = 2;
	r.tz = "America/New_York";
	r.tz_len = 16;
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
	for (int m = 0; m < 8 * 60; m++) {
		h->now += 60000;
		leader_turn(h);
	}
	keys_of(h, "ny", keys, sizeof(keys));
	/* 00:00 EDT, 01:00 EDT, 01:30 EDT (not again in EST), 02:00 EST,
	 * 03:00 EST: the repeated 01:00 fires once */
	assert_string_equal(keys,
	    "ny-h@2026-11-01T04:00Z ny-h@2026-11-01T05:00Z "
	    "ny-130@2026-11-01T05:30Z ny-h@2026-11-01T07:00Z "
	    "ny-h@2026-11-01T08:00Z");
}

/* Sets schedule `name` of tube `tube` in zone `tz`. */
static void
set_in(struct tq *h, const char *name, const char *cron, const char *tube,
    const char *tz)
{
	struct queue_sched_req r = req(name, cron);
	struct qrec rec;
	char err[160];

	r.tube = tube;
	r.tube_len = strlen(tube);
	r.tz = tz;
	r.tz_len = strlen(tz);
	assert_int_equal(
	    queue_decide_sched_set(h->q, h->now, &r, &rec, err, sizeof(err)),
	    0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

/* The other two days, the same way: Paris's fall-back day (2026-10-25,
 * 03:00 CEST -> 02:00 CET at 01:00 UTC) and New York's spring-forward day
 * (2026-03-08, 02:00 EST -> 03:00 EDT at 07:00 UTC). */
static void
test_sched_other_dst_days_with_a_fixed_clock(void **state)
{
	struct tq *h = *state;
	char keys[2048];

	h->now = utc(2026, 10, 24, 21, 0); /* 23:00 CEST */
	set_in(h, "pf-h", "0 1-4 * * *", "pf", "Europe/Paris");
	set_in(h, "pf-230", "30 2 * * *", "pf", "Europe/Paris");
	for (int m = 0; m < 8 * 60; m++) {
		h->now += 60000;
		leader_turn(h);
	}
	keys_of(h, "pf", keys, sizeof(keys));
	/* 01:00 CEST, 02:00 CEST, 02:30 CEST (neither again in CET),
	 * 03:00 CET, 04:00 CET */
	assert_string_equal(keys,
	    "pf-h@2026-10-24T23:00Z pf-h@2026-10-25T00:00Z "
	    "pf-230@2026-10-25T00:30Z pf-h@2026-10-25T02:00Z "
	    "pf-h@2026-10-25T03:00Z");

	h->now = utc(2026, 3, 8, 4, 0); /* 23:00 EST */
	set_in(h, "nys-h", "0 0-3 * * *", "nys", "America/New_York");
	set_in(h, "nys-230", "30 2 * * *", "nys", "America/New_York");
	for (int m = 0; m < 8 * 60; m++) {
		h->now += 60000;
		leader_turn(h);
	}
	keys_of(h, "nys", keys, sizeof(keys));
	/* 00:00 EST, 01:00 EST; at 03:00 EDT 02:30 (of the gap), and 03:00
	 * for 02:00 and 03:00 at once */
	assert_string_equal(keys,
	    "nys-h@2026-03-08T05:00Z nys-h@2026-03-08T06:00Z "
	    "nys-230@2026-03-08T07:00Z nys-h@2026-03-08T07:00Z");
}

/* Random sets, replacements, pauses, resumes, deletes and leader turns
 * at random times, and FIREs of random slots decided from old states: a
 * slot never puts two tasks (every key once), apply refuses what decide
 * would not, and replay and a snapshot give the same queue. */
static void
test_sched_random_steps_keep_each_slot_once(void **state)
{
	static const char *const crons[] = { "* * * * *", "*/7 * * * *",
		"0 * * * *", "30 2 * * *", "15,45 */2 * * *" };
	static const char *const names[] = { "a", "b", "c" };
	static const char *const zones[] = { "UTC", "Europe/Paris",
		"America/New_York", "Australia/Sydney" };
	struct tq *h = *state;
	uint64_t seed = 0x5eed5c4ed;
	char err[160], key[QUEUE_SCHED_KEY_MAX];
	struct queue *replayed, *loaded;
	struct buf snap;

	h->now = utc(2026, 3, 28, 20, 0);
	for (int step = 0; step < 3000; step++) {
		struct queue_sched_req r;
		struct qrec rec;
		uint64_t id;
		const char *name;
		int op;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		op = (int)(seed >> 33) % 10;
		name = names[(seed >> 40) % 3];
		h->now += (int64_t)((seed >> 20) % 600000);
		if (op == 0) {
			r = req(name, crons[(seed >> 44) % 5]);
			r.tz = zones[(seed >> 50) % 4];
			r.tz_len = strlen(r.tz);
			r.catch_up = (uint8_t)((seed >> 56) % 3);
			assert_int_equal(queue_decide_sched_set(h->q, h->now,
			                     &r, &rec, err, sizeof(err)),
			    0);
			assert_int_equal(tq_commit(h, &rec), 0);
		} else if (op == 1 || op == 2) {
			if (queue_decide_sched_pause(
			        h->q, h->now, name, 1, op == 1, &rec) == 0)
				assert_int_equal(tq_commit(h, &rec), 0);
		} else if (op == 3 && (seed >> 60) == 0) {
			if (queue_decide_sched_delete(h->q, name, 1, &rec) == 0)
				assert_int_equal(tq_commit(h, &rec), 0);
		} else if (op == 4) {
			/* a FIRE of any slot: decide and apply agree */
			const struct sched *s = queue_sched_find(h->q, name, 1);
			int64_t slot =
			    h->now - (int64_t)((seed >> 24) % 7200000);
			int rc = queue_decide_sched_fire(
			    h->q, h->now, name, 1, slot, true, key, &rec, &id);

			if (s == NULL)
				assert_int_equal(rc, SLUICE_ENOTFOUND);
			else if (s->paused || slot <= s->from)
				assert_int_equal(rc, SLUICE_ESTATE);
			else
				assert_int_equal(tq_commit(h, &rec), 0);
		} else {
			leader_turn(h);
		}
	}
	/* every key at most once: sorted keys of every task differ */
	{
		struct queue_task_view v;
		size_t n = 0;
		char(*k)[QUEUE_SCHED_KEY_MAX] =
		    calloc(queue_next_id(h->q), sizeof(*k));

		assert_non_null(k);
		for (uint64_t id = 1; id < queue_next_id(h->q); id++)
			if (queue_peek(h->q, h->now, id, &v) == 0 &&
			    v.key != NULL)
				snprintf(k[n++], sizeof(k[0]), "%.*s",
				    (int)v.key_len, v.key);
		assert_true(n > 50);
		qsort(k, n, sizeof(k[0]),
		    (int (*)(const void *, const void *))strcmp);
		for (size_t i = 1; i < n; i++)
			assert_string_not_equal(k[i - 1], k[i]);
		free(k);
	}
	replayed = queue_new(NULL);
	assert_int_equal(tq_replay(h, replayed, 0, h->nlog), 0);
	assert_true(tq_same(h->q, replayed, h->now));
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	loaded = queue_new(NULL);
	assert_int_equal(tq_snap_load(loaded, &snap), 0);
	assert_true(tq_same(h->q, loaded, h->now));
	buf_fini(&snap);
	queue_free(replayed);
	queue_free(loaded);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_sched_bad_input_is_refused, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_slot_fires_once, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_taken_key_skips_the_slot, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_replay_and_snapshot_agree, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_memory_is_bounded, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_dst_days_with_a_fixed_clock, setup, tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_other_dst_days_with_a_fixed_clock, setup,
		    tq_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sched_random_steps_keep_each_slot_once, setup,
		    tq_teardown),
	};
	return cmocka_run_group_tests_name("sched", tests, NULL, NULL);
}
