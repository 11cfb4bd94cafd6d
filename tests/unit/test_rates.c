/* The rolling history of events (queue/rates.h): the ring alone (slot
 * advance, skipped seconds cleared, wrap-around, the window's edges,
 * saturation), then the queue's counting through decide + apply (totals
 * per second, a tube's per 5 s, off until enabled, not in the dump; the
 * depth by state at the end of each slot). */
#include <stdlib.h>
#include <string.h>

#include "queue/rates.h"
#include "t_lib.h"
#include "t_queue.h"

enum { T0 = 1700000000000LL / 1000 * 1000 }; /* a whole second, unix ms */

static uint32_t out[QUEUE_RATES * QUEUE_RATE_SECS];

/* The count of `kind` in slot i of a read of n slots. */
static uint32_t
at(uint32_t n, unsigned kind, uint32_t i)
{
	return out[kind * n + i];
}

static void
test_a_count_lands_in_the_slot_of_its_second(void **state)
{
	struct rates *r = rates_new(10, 1, NULL);
	int64_t start;
	uint32_t n;

	(void)state;
	assert_non_null(r);
	rates_count(r, T0, QUEUE_RATE_PUT);
	rates_count(r, T0 + 999, QUEUE_RATE_PUT);
	rates_count(r, T0 + 1000, QUEUE_RATE_PUT);
	rates_count(r, T0 + 1000, QUEUE_RATE_ACK);
	n = rates_read(r, T0 + 1500, 3, &start, out);
	assert_int_equal(n, 3);
	assert_int_equal(start, T0 - 1000);
	assert_int_equal(at(n, QUEUE_RATE_PUT, 0), 0);
	assert_int_equal(at(n, QUEUE_RATE_PUT, 1), 2);
	assert_int_equal(at(n, QUEUE_RATE_PUT, 2), 1);
	assert_int_equal(at(n, QUEUE_RATE_ACK, 2), 1);
	assert_int_equal(at(n, QUEUE_RATE_TAKE, 2), 0);
	/* secs beyond the window: the window; 0: one slot */
	assert_int_equal(rates_read(r, T0 + 1500, 1000, &start, out), 10);
	assert_int_equal(rates_read(r, T0 + 1500, 0, &start, out), 1);
	free(r);
}

/* Seconds with no event between two events are zero, though their slots
 * held counts of a lap of the ring before. */
static void
test_skipped_seconds_are_cleared(void **state)
{
	struct rates *r = rates_new(10, 1, NULL);
	int64_t start;
	uint32_t n;

	(void)state;
	for (int s = 0; s < 10; s++)
		rates_count(r, T0 + s * 1000, QUEUE_RATE_TAKE);
	/* 13 s later: slots 10..12 were skipped over 1..2 laps's slots */
	rates_count(r, T0 + 13 * 1000, QUEUE_RATE_TAKE);
	n = rates_read(r, T0 + 13 * 1000, 10, &start, out);
	assert_int_equal(n, 10);
	assert_int_equal(start, T0 + 4 * 1000);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(
		    at(n, QUEUE_RATE_TAKE, i), i < 6 || i == 9 ? 1 : 0);
	/* A read later than the newest slot sees zeros after it, and
	 * changes nothing. */
	n = rates_read(r, T0 + 15 * 1000, 3, &start, out);
	assert_int_equal(at(n, QUEUE_RATE_TAKE, 0), 1);
	assert_int_equal(at(n, QUEUE_RATE_TAKE, 1), 0);
	assert_int_equal(at(n, QUEUE_RATE_TAKE, 2), 0);
	n = rates_read(r, T0 + 13 * 1000, 1, &start, out);
	assert_int_equal(at(n, QUEUE_RATE_TAKE, 0), 1);
	free(r);
}

/* Around the ring many times, and a jump of more than its length: only
 * the window's seconds count; an event older than the window is
 * dropped; one inside it, but not the newest, still counts. */
static void
test_the_ring_wraps_around(void **state)
{
	struct rates *r = rates_new(4, 1, NULL);
	int64_t start;
	uint32_t n;

	(void)state;
	for (int s = 0; s < 41; s++)
		for (int k = 0; k <= s % 3; k++)
			rates_count(r, T0 + s * 1000, QUEUE_RATE_FAIL);
	n = rates_read(r, T0 + 40 * 1000, 4, &start, out);
	/* seconds 37..40: 37%3=1 -> 2, 38 -> 3, 39 -> 1, 40 -> 2 */
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 0), 2);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 1), 3);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 2), 1);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 3), 2);
	rates_count(r, T0 + 36 * 1000, QUEUE_RATE_FAIL); /* too old */
	rates_count(r, T0 + 38 * 1000, QUEUE_RATE_FAIL); /* inside */
	n = rates_read(r, T0 + 40 * 1000, 4, &start, out);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 0), 2);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 1), 4);
	/* A jump of 100 s clears the whole ring. */
	rates_count(r, T0 + 140 * 1000, QUEUE_RATE_FAIL);
	n = rates_read(r, T0 + 140 * 1000, 4, &start, out);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 0), 0);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 1), 0);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 2), 0);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 3), 1);
	free(r);
}

/* Slots of several seconds: a read rounds its seconds up to slots, and
 * the first slot starts on a multiple of the step. */
static void
test_slots_of_five_seconds(void **state)
{
	struct rates *r = rates_new(180, 5, NULL);
	int64_t start;
	uint32_t n;

	(void)state;
	rates_count(r, T0 + 1000, QUEUE_RATE_BURY);
	rates_count(r, T0 + 4000, QUEUE_RATE_BURY);
	rates_count(r, T0 + 5000, QUEUE_RATE_BURY);
	n = rates_read(r, T0 + 6000, 11, &start, out);
	assert_int_equal(n, 3);
	assert_int_equal(start % 5000, 0);
	assert_int_equal(start + 3 * 5000, (T0 + 6000) / 5000 * 5000 + 5000);
	assert_int_equal(at(n, QUEUE_RATE_BURY, 2), 1);
	assert_int_equal(at(n, QUEUE_RATE_BURY, 1) + at(n, QUEUE_RATE_BURY, 2),
	    3); /* T0 is not a multiple of 5 s: the first two may split */
	free(r);
}

static void
test_a_counter_saturates(void **state)
{
	struct rates *r = rates_new(2, 1, NULL);
	int64_t start;
	uint32_t n;

	(void)state;
	rates_count(r, T0, QUEUE_RATE_PUT);
	r->v[T0 / 1000 % 2][QUEUE_RATE_PUT] = UINT32_MAX - 1;
	rates_count(r, T0, QUEUE_RATE_PUT);
	rates_count(r, T0, QUEUE_RATE_PUT);
	n = rates_read(r, T0, 1, &start, out);
	assert_int_equal(at(n, QUEUE_RATE_PUT, 0), UINT32_MAX);
	free(r);
}

/* ---- through the queue ---------------------------------------------- */

static uint64_t
put(struct tq *h, const char *tube)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;

	queue_put_req_init(&req);
	req.tube = tube;
	req.tube_len = strlen(tube);
	req.payload = "x";
	req.payload_len = 1;
	assert_int_equal(queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	return res.id;
}

/* Takes the next task of the tube; returns its id (its lease is h->lsn). */
static uint64_t
take(struct tq *h, const char *tube)
{
	struct queue_str s = { tube, strlen(tube) };
	struct queue_take_req req = { &s, 1, 1, false };
	struct qrec rec;

	assert_int_equal(queue_decide_take(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	return rec.u.take.id;
}

static void
take_ack(struct tq *h, const char *tube, bool ack)
{
	struct qrec rec;
	uint64_t id = take(h, tube), lease = h->lsn;
	if (ack) {
		struct queue_ack_req a = { id, lease, NULL, 0 };

		assert_int_equal(queue_decide_ack(h->q, h->now, &a, &rec), 0);
	} else {
		struct queue_fail_req f = { 0 };

		f.id = id;
		f.lease = lease;
		f.error = "boom";
		f.error_len = 4;
		f.fatal = true;
		assert_int_equal(queue_decide_fail(h->q, h->now, &f, &rec), 0);
	}
	assert_int_equal(tq_commit(h, &rec), 0);
}

static void
test_the_queue_counts_what_it_applies(void **state)
{
	struct tq h;
	uint32_t step, n;
	int64_t start;
	int got;

	(void)state;
	tq_init(&h, NULL, T0);
	put(&h, "a"); /* off: not counted */
	assert_int_equal(queue_rates_enable(h.q, true), 0);
	h.now = T0 + 1000;
	put(&h, "a");
	put(&h, "b");
	take_ack(&h, "a", true);
	h.now = T0 + 3000;
	put(&h, "a");
	take_ack(&h, "a", false); /* fatal: a fail and a bury */

	got = queue_rates(h.q, T0 + 3000, "", 0, 4, &step, &start, out);
	assert_int_equal(got, 4);
	n = (uint32_t)got;
	assert_int_equal(step, 1);
	assert_int_equal(start, T0);
	assert_int_equal(at(n, QUEUE_RATE_PUT, 0), 0);
	assert_int_equal(at(n, QUEUE_RATE_PUT, 1), 2);
	assert_int_equal(at(n, QUEUE_RATE_TAKE, 1), 1);
	assert_int_equal(at(n, QUEUE_RATE_ACK, 1), 1);
	assert_int_equal(at(n, QUEUE_RATE_PUT, 2), 0);
	assert_int_equal(at(n, QUEUE_RATE_PUT, 3), 1);
	assert_int_equal(at(n, QUEUE_RATE_FAIL, 3), 1);
	assert_int_equal(at(n, QUEUE_RATE_BURY, 3), 1);

	/* Tube b, in 5 s slots: its one put. */
	got = queue_rates(h.q, T0 + 3000, "b", 1, 900, &step, &start, out);
	assert_int_equal(got, 180);
	n = (uint32_t)got;
	assert_int_equal(step, 5);
	{
		uint32_t sum = 0;

		for (uint32_t i = 0; i < n; i++)
			sum += at(n, QUEUE_RATE_PUT, i);
		assert_int_equal(sum, 1);
	}
	assert_int_equal(queue_rates(h.q, T0, "zz", 2, 10, &step, &start, out),
	    -SLUICE_ENOTFOUND);
	assert_int_equal(queue_rates(h.q, T0, "a b", 3, 10, &step, &start, out),
	    -SLUICE_ETUBE);
	assert_int_equal(
	    queue_rates(h.q, T0, "", 0, 0, &step, &start, out), -SLUICE_EINVAL);
	assert_int_equal(queue_rates(h.q, T0, "", 0, 3601, &step, &start, out),
	    -SLUICE_EINVAL);

	/* Observation: a replay of the same records into a queue with
	 * rates off has the same dump. */
	{
		struct queue *q = queue_new(NULL);

		assert_int_equal(tq_replay(&h, q, 0, h.nlog), 0);
		assert_true(tq_same(h.q, q, h.now));
		queue_free(q);
	}
	/* Off frees them; reads are zeros. */
	assert_int_equal(queue_rates_enable(h.q, false), 0);
	got = queue_rates(h.q, T0 + 3000, "", 0, 4, &step, &start, out);
	assert_int_equal(at((uint32_t)got, QUEUE_RATE_PUT, 1), 0);
	tq_fini(&h);
}

/* The depth of slot i by state (ready, delayed, taken, buried), as "r t b"
 * (delayed is 0 in these tests). */
static void
assert_depth(
    uint32_t n, uint32_t i, uint32_t ready, uint32_t taken, uint32_t buried)
{
	assert_int_equal(at(n, QUEUE_RATE_READY, i), ready);
	assert_int_equal(at(n, QUEUE_RATE_DELAYED, i), 0);
	assert_int_equal(at(n, QUEUE_RATE_TAKEN, i), taken);
	assert_int_equal(at(n, QUEUE_RATE_BURIED, i), buried);
}

/* The depth by state at the end of each slot: written by every change,
 * carried over slots without one, the depth of when counting began before
 * that; a tube's ring goes with the tube. */
static void
test_the_depth_at_the_end_of_each_slot(void **state)
{
	struct tq h;
	struct qrec rec;
	struct queue_tube_delete_req del = { "a", 1, true };
	uint32_t step, n;
	int64_t start;

	(void)state;
	tq_init(&h, NULL, T0);
	put(&h, "a");
	put(&h, "a"); /* before counting: the depth it begins with */
	assert_int_equal(queue_rates_enable(h.q, true), 0);
	/* No change yet: the depth of now, in the tube's slots of 5 s. */
	n = (uint32_t)queue_rates(h.q, T0, "a", 1, 900, &step, &start, out);
	assert_int_equal(step, 5);
	assert_depth(n, 0, 2, 0, 0);
	assert_depth(n, n - 1, 2, 0, 0);

	h.now = T0 + 1000; /* slot 0 */
	take(&h, "a");
	h.now = T0 + 10000; /* slot 2; slot 1 has no change */
	put(&h, "a");
	take_ack(&h, "a", true);
	h.now = T0 + 15000;       /* slot 3; slot 4 has none */
	take_ack(&h, "a", false); /* fatal: buried */

	n = (uint32_t)queue_rates(
	    h.q, T0 + 20000, "a", 1, 30, &step, &start, out);
	assert_int_equal(n, 6);
	assert_int_equal(start, T0 - 5000);
	assert_depth(n, 0, 2, 0, 0); /* before the first change */
	assert_depth(n, 1, 1, 1, 0);
	assert_depth(n, 2, 1, 1, 0); /* carried forward */
	assert_depth(n, 3, 1, 1, 0);
	assert_depth(n, 4, 0, 1, 1);
	assert_depth(n, 5, 0, 1, 1);
	/* The whole queue, per second. */
	n = (uint32_t)queue_rates(
	    h.q, T0 + 20000, "", 0, 21, &step, &start, out);
	assert_int_equal(step, 1);
	assert_depth(n, 0, 2, 0, 0);
	assert_depth(n, 1, 1, 1, 0);
	assert_depth(n, 9, 1, 1, 0);
	assert_depth(n, 10, 1, 1, 0);
	assert_depth(n, 15, 0, 1, 1);
	assert_depth(n, 20, 0, 1, 1);

	/* Past the window: still the newest depth. */
	n = (uint32_t)queue_rates(
	    h.q, T0 + 2000000, "a", 1, 10, &step, &start, out);
	assert_depth(n, 0, 0, 1, 1);
	assert_int_equal(at(n, QUEUE_RATE_BURY, n - 1), 0);

	/* Deleted, its ring goes with it; a new tube of the name begins at
	 * 0. */
	h.now = T0 + 21000;
	assert_int_equal(queue_decide_tube_delete(h.q, h.now, &del, &rec), 0);
	assert_int_equal(tq_commit(&h, &rec), 0);
	assert_int_equal(
	    queue_rates(h.q, h.now, "a", 1, 10, &step, &start, out),
	    -SLUICE_ENOTFOUND);
	h.now = T0 + 26000;
	put(&h, "a");
	n = (uint32_t)queue_rates(h.q, h.now, "a", 1, 10, &step, &start, out);
	assert_depth(n, 0, 0, 0, 0);
	assert_depth(n, 1, 1, 0, 0);
	n = (uint32_t)queue_rates(h.q, h.now, "", 0, 6, &step, &start, out);
	assert_depth(n, 0, 0, 0, 0); /* the queue's: all cancelled */
	assert_depth(n, 5, 1, 0, 0);
	tq_fini(&h);
}

static uint32_t out2[QUEUE_RATES * QUEUE_RATE_SECS];

/* A ring that starts small and grows reads as a full one, whatever
 * events and depths come, in bursts and gaps; it stays small while what
 * it would push out holds nothing, and a ring whose newest slot left the
 * window is stale. */
static void
test_a_small_ring_reads_as_a_full_one(void **state)
{
	enum { WINDOW = 180, STEP = 5 };
	struct rates *full = rates_new(WINDOW, STEP, NULL);
	struct rates *small = rates_new_small(WINDOW, STEP, NULL);
	uint32_t d[QUEUE_RATE_DEPTHS] = { 0 };
	int64_t t = T0, s1, s2;
	unsigned seed = 7;

	(void)state;
	assert_non_null(full);
	assert_non_null(small);
	assert_int_equal(small->nslots, RATES_FIRST_SLOTS);
	/* one burst, then a constant depth: the small ring stays small */
	for (int i = 0; i < 20; i++) {
		rates_count(full, t, QUEUE_RATE_PUT);
		assert_int_equal(rates_fit(&small, t), 0);
		rates_count(small, t, QUEUE_RATE_PUT);
	}
	t += 2000 * 1000; /* past the window: the burst is gone */
	assert_true(rates_stale(small, t));
	d[0] = 3;
	rates_depth(full, t, d);
	assert_int_equal(rates_fit(&small, t), 0);
	rates_depth(small, t, d);
	assert_int_equal(small->nslots, RATES_FIRST_SLOTS);
	assert_false(rates_stale(small, t));
	/* events spread over the window: it grows, and reads the same */
	for (int i = 0; i < 3000; i++) {
		seed = seed * 1103515245 + 12345;
		t += (seed >> 8) % 2000;
		if ((seed >> 4) % 7 == 0) {
			d[(seed >> 12) % QUEUE_RATE_DEPTHS] = (seed >> 16) % 50;
			rates_depth(full, t, d);
			assert_int_equal(rates_fit(&small, t), 0);
			rates_depth(small, t, d);
		} else {
			unsigned k = (seed >> 12) % QUEUE_RATE_EVENTS;

			rates_count(full, t, k);
			assert_int_equal(rates_fit(&small, t), 0);
			rates_count(small, t, k);
		}
		if (i % 97 == 0) {
			uint32_t n1 = rates_read(full, t, 900, &s1, out);
			uint32_t n2 = rates_read(small, t, 900, &s2, out2);

			assert_int_equal(n1, n2);
			assert_int_equal(s1, s2);
			assert_memory_equal(
			    out, out2, QUEUE_RATES * n1 * sizeof(out[0]));
		}
	}
	assert_true(small->nslots > RATES_FIRST_SLOTS);
	assert_true(small->nslots <= WINDOW);
	free(full);
	free(small);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_count_lands_in_the_slot_of_its_second),
		cmocka_unit_test(test_skipped_seconds_are_cleared),
		cmocka_unit_test(test_the_ring_wraps_around),
		cmocka_unit_test(test_slots_of_five_seconds),
		cmocka_unit_test(test_a_counter_saturates),
		cmocka_unit_test(test_the_queue_counts_what_it_applies),
		cmocka_unit_test(test_the_depth_at_the_end_of_each_slot),
		cmocka_unit_test(test_a_small_ring_reads_as_a_full_one),
	};

	return cmocka_run_group_tests_name("rates", tests, NULL, NULL);
}
