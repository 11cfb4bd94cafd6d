/* Tests of src/queue's queries and checks (test_queue.c has the task
 * state machine): peek, list, errors by text, stats, every limit's error,
 * apply's refusal of records that do not fit the state, the next wake,
 * and the hourly statistics. Requests go the server's way (decide,
 * encode, decode, apply: t_queue_ops.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"
#include "t_queue_ops.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

/* ---- queries ----------------------------------------------------------------
 */

/* Peek gives the next ready (the one a take gets), the next delayed and
 * the longest buried task of a tube. */
static void
test_peek_next_in_each_state(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_task_view v;
	uint64_t r1, r2, d1, d2, b1, b2;

	r1 = put_pri(h, "t", "r1", 9);
	r2 = put_pri(h, "t", "r2", 2);
	req_for(&req, "t", "d1");
	req.delay_ms = 500;
	d1 = put_req(h, &req);
	req.delay_ms = 200;
	d2 = put_req(h, &req);
	b1 = put(h, "t", "b1");
	b2 = put(h, "t", "b2");
	assert_int_equal(park(h, b2), 0);
	h->now++;
	assert_int_equal(park(h, b1), 0);
	assert_int_equal(
	    queue_peek_next(h->q, h->now, "t", 1, QUEUE_READY, &v), 0);
	assert_true(v.id == r2);
	assert_int_equal(
	    queue_peek_next(h->q, h->now, "t", 1, QUEUE_DELAYED, &v), 0);
	assert_true(v.id == d2);
	assert_int_equal(
	    queue_peek_next(h->q, h->now, "t", 1, QUEUE_BURIED, &v), 0);
	assert_true(v.id == b2);
	assert_int_equal(queue_peek_next(h->q, h->now, "t", 1, QUEUE_TAKEN, &v),
	    SLUICE_EINVAL);
	assert_int_equal(queue_peek_next(h->q, h->now, "x", 1, QUEUE_READY, &v),
	    SLUICE_ENOTFOUND);
	assert_int_equal(
	    queue_peek_next(h->q, h->now, "t!", 2, QUEUE_READY, &v),
	    SLUICE_ETUBE);
	(void)r1;
	(void)d1;
}

/* Takes and releases ids[who] `times` times while the others of the tube
 * are buried, then kicks them back. */
static void
take_times(struct tq *h, const uint64_t *ids, int n, int who, int times)
{
	uint64_t id, lease;

	for (int i = 0; i < n; i++)
		if (i != who)
			assert_int_equal(park(h, ids[i]), 0);
	for (int k = 0; k < times; k++) {
		assert_int_equal(take(h, "t", 1, &id, &lease), 0);
		assert_true(id == ids[who]);
		assert_int_equal(release(h, id, lease, 0, false, 0), 0);
	}
	assert_int_equal(kick_n(h, "t", n), n - 1);
}

/* List orders a tube's tasks by attempts (most first), age (oldest first)
 * or run_at, ties by id, and stops at the limit. */
static void
test_list_orders_and_limit(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_list_req lr = { "t", 1, QUEUE_ANY, QUEUE_BY_ATTEMPTS, 10 };
	struct queue_task_view v[10];
	struct queue_put_req req;
	uint64_t ids[5], id, lease;
	uint64_t by_attempts[5];
	size_t n;

	for (int i = 0; i < 5; i++) {
		req_for(&req, "t", "x");
		req.delay_ms = (5 - i) * 100;
		ids[i] = put_req(h, &req);
		h->now += 10;
	}
	h->now += 1000;
	take_times(h, ids, 5, 3, 3);
	take_times(h, ids, 5, 1, 2);
	assert_int_equal(queue_list(h->q, h->now, &lr, v, &n), 0);
	assert_int_equal(n, 5);
	by_attempts[0] = ids[3];
	by_attempts[1] = ids[1];
	by_attempts[2] = ids[0];
	by_attempts[3] = ids[2];
	by_attempts[4] = ids[4];
	for (size_t i = 0; i < n; i++)
		assert_true(v[i].id == by_attempts[i]);
	lr.order = QUEUE_BY_AGE;
	lr.limit = 3;
	assert_int_equal(queue_list(h->q, h->now, &lr, v, &n), 0);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_true(v[i].id == ids[i]);
	/* By run_at: all got ready at the last kick but ids[0], released
	 * later. */
	h->now += 50;
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == ids[0]);
	assert_int_equal(release(h, id, lease, 0, false, 0), 0);
	lr.order = QUEUE_BY_RUN_AT;
	lr.limit = 10;
	lr.state = QUEUE_READY;
	assert_int_equal(queue_list(h->q, h->now, &lr, v, &n), 0);
	assert_int_equal(n, 5);
	assert_true(v[0].id == ids[1] && v[4].id == ids[0]);
	for (size_t i = 1; i < n; i++)
		assert_true(v[i - 1].run_at < v[i].run_at ||
		    (v[i - 1].run_at == v[i].run_at && v[i - 1].id < v[i].id));
	/* By id after a cursor: pages of two reach every task once, in id
	 * order, though their run_at order is another. */
	lr.order = QUEUE_BY_ID;
	lr.limit = 2;
	for (int page = 0; page < 3; page++) {
		lr.after = page == 0 ? 0 : v[1].id;
		assert_int_equal(queue_list(h->q, h->now, &lr, v, &n), 0);
		assert_int_equal(n, page < 2 ? 2 : 1);
		for (size_t i = 0; i < n; i++)
			assert_true(v[i].id == ids[page * 2 + (int)i]);
	}
	lr.after = ids[4];
	assert_int_equal(queue_list(h->q, h->now, &lr, v, &n), 0);
	assert_int_equal(n, 0);
	lr.after = 0;
	lr.limit = 10;
	lr.state = QUEUE_BURIED;
	assert_int_equal(queue_list(h->q, h->now, &lr, v, &n), 0);
	assert_int_equal(n, 0);
	lr.tube = "nosuch";
	lr.tube_len = 6;
	assert_int_equal(queue_list(h->q, h->now, &lr, v, &n), 0);
	assert_int_equal(n, 0);
	lr.order = 9;
	assert_int_equal(queue_list(h->q, h->now, &lr, v, &n), SLUICE_EINVAL);
	/* Taken tasks are listed too. */
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	lr.tube = "t";
	lr.tube_len = 1;
	lr.order = QUEUE_BY_AGE;
	lr.state = QUEUE_TAKEN;
	assert_int_equal(queue_list(h->q, h->now, &lr, v, &n), 0);
	assert_int_equal(n, 1);
	assert_true(v[0].id == id && v[0].lease == lease);
}

/* Errors groups a tube's tasks by last_error, most frequent first. */
static void
test_errors_grouped_by_text(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_error_group g[4];
	const char *errs[] = { "timeout", "oom", "timeout", "disk", "timeout",
		"oom" };
	uint64_t id, lease;
	size_t n;

	for (int i = 0; i < 6; i++)
		put(h, "t", "x");
	put(h, "t", "never failed");
	for (int i = 0; i < 6; i++) {
		assert_int_equal(take(h, "t", 1, &id, &lease), 0);
		assert_int_equal(fail_task(h, id, lease, errs[i]), 0);
	}
	assert_int_equal(
	    queue_errors(h->q, h->now, "t", 1, QUEUE_ANY, g, 4, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(g[0].count, 3);
	assert_memory_equal(g[0].text, "timeout", 7);
	assert_int_equal(g[1].count, 2);
	assert_memory_equal(g[1].text, "oom", 3);
	assert_int_equal(g[2].count, 1);
	assert_memory_equal(g[2].text, "disk", 4);
	/* Example ids, the lowest first: timeouts are tasks 1, 3, 5. */
	assert_int_equal(g[0].nids, 3);
	assert_true(g[0].ids[0] == 1 && g[0].ids[1] == 3 && g[0].ids[2] == 5);
	assert_int_equal(g[1].nids, 2);
	assert_true(g[1].ids[0] == 2 && g[1].ids[1] == 6);
	assert_int_equal(g[2].nids, 1);
	assert_true(g[2].ids[0] == 4);
	assert_int_equal(
	    queue_errors(h->q, h->now, "t", 1, QUEUE_ANY, g, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(
	    queue_errors(h->q, h->now, "u", 1, QUEUE_ANY, g, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(queue_errors(h->q, h->now, "", 0, QUEUE_ANY, g, 4, &n),
	    SLUICE_ETUBE);
	/* by state: the failed tasks wait for their retry, none is buried */
	assert_int_equal(
	    queue_errors(h->q, h->now, "t", 1, QUEUE_DELAYED, g, 4, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(
	    queue_errors(h->q, h->now, "t", 1, QUEUE_BURIED, g, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(
	    queue_errors(h->q, h->now, "t", 1, QUEUE_DONE, g, 4, &n),
	    SLUICE_EINVAL);
}

/* Stats: counts by state per tube and in total, the oldest ready task's
 * age, counters, tube iteration. */
static void
test_stats(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_tube_stats ts;
	struct queue_stats st;
	uint64_t id, lease;

	put(h, "a", "1");
	h->now += 100;
	put(h, "a", "2");
	put(h, "b", "3");
	assert_int_equal(take(h, "a", 1, &id, &lease), 0);
	h->now += 50;
	ts = tstats(h, "a");
	assert_true(ts.ready == 1 && ts.taken == 1);
	assert_true(ts.oldest_ready_age == 50);
	assert_true(ts.ctr.put == 2 && ts.ctr.take == 1);
	assert_true(tstats(h, "b").oldest_ready_age == 150 - 100 + 0 ||
	    tstats(h, "b").oldest_ready_age == 50);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.ready == 2 && st.taken == 1 && st.tasks == 3);
	assert_true(st.tubes == 2 && st.next_id == 4 && st.lsn == h->lsn);
	assert_true(st.ctr.put == 3);
	assert_int_equal(queue_tube_count(h->q), 2);
	assert_int_equal(queue_tube_stats_at(h->q, h->now, 1, &ts), 0);
	assert_memory_equal(ts.name, "b", 1);
	assert_int_equal(
	    queue_tube_stats_at(h->q, h->now, 2, &ts), SLUICE_ENOTFOUND);
	assert_int_equal(
	    queue_tube_stats(h->q, h->now, "c", 1, &ts), SLUICE_ENOTFOUND);
	assert_int_equal(ack(h, id, lease), 0);
	ts = tstats(h, "a");
	assert_true(ts.ready == 1 && ts.taken == 0 && ts.ctr.ack == 1);
}

/* ---- limits
 * ------------------------------------------------------------------ */

/* Every limit has its own error. */
static void
test_every_limit_has_its_error(void **state)
{
	struct queue_config cfg;
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_str many[3] = { { "a", 1 }, { "b", 1 }, { "c", 1 } };
	struct tq h;
	char big[QREC_NAME_MAX + 2];
	static char payload[2048];
	uint64_t id, lease;

	(void)state;
	queue_config_default(&cfg);
	cfg.max_payload = 1024;
	cfg.max_error = 16;
	cfg.max_take_tubes = 2;
	cfg.max_tasks = 3;
	cfg.max_tubes = 2;
	cfg.max_ttr_ms = 10000;
	cfg.default_ttr_ms = 5000;
	tq_init(&h, &cfg, T0);
	memset(big, 'x', sizeof(big));

	req_for(&req, "t", "x");
	req.tube = big;
	req.tube_len = QREC_NAME_MAX + 1;
	assert_int_equal(try_put(&h, &req, &res), SLUICE_ETUBE);
	req.tube_len = QREC_NAME_MAX;
	assert_int_equal(try_put(&h, &req, &res), 0);
	req.tube = "bad tube";
	req.tube_len = 8;
	assert_int_equal(try_put(&h, &req, &res), SLUICE_ETUBE);
	req.tube_len = 0;
	assert_int_equal(try_put(&h, &req, &res), SLUICE_ETUBE);
	req_for(&req, "t", "x");
	req.payload = payload;
	req.payload_len = 1025;
	assert_int_equal(try_put(&h, &req, &res), SLUICE_ETOOBIG);
	req.payload_len = 1024;
	req.key = big;
	req.key_len = QREC_KEY_MAX + 1;
	assert_int_equal(try_put(&h, &req, &res), SLUICE_EKEY);
	req.key_len = 0;
	req.ttr_ms = 10001;
	assert_int_equal(try_put(&h, &req, &res), SLUICE_EINVAL);
	req.ttr_ms = 0;
	req.delay_ms = -1;
	assert_int_equal(try_put(&h, &req, &res), SLUICE_EINVAL);
	req.delay_ms = QREC_TIME_MAX;
	assert_int_equal(try_put(&h, &req, &res), SLUICE_EINVAL);
	req.delay_ms = 0;
	req.period_ms = -5;
	assert_int_equal(try_put(&h, &req, &res), SLUICE_EINVAL);
	req.period_ms = 0;
	assert_int_equal(try_put(&h, &req, &res), 0);
	/* Two tubes exist: a third is over max_tubes. */
	req.tube = "u";
	assert_int_equal(try_put(&h, &req, &res), SLUICE_ELIMIT);
	req.tube = "t";
	assert_int_equal(try_put(&h, &req, &res), 0);
	/* Three tasks: a fourth is over max_tasks. */
	assert_int_equal(try_put(&h, &req, &res), SLUICE_ELIMIT);
	assert_int_equal(
	    take_from(&h, many, 3, 1, false, &id, NULL), SLUICE_ELIMIT);
	assert_int_equal(take(&h, "t", 1, &id, &lease), 0);
	{
		char text[18];

		memset(text, 'e', sizeof(text));
		text[17] = '\0';
		assert_int_equal(fail_task(&h, id, lease, text), SLUICE_ELIMIT);
		text[16] = '\0';
		assert_int_equal(fail_task(&h, id, lease, text), 0);
	}
	assert_int_equal(ack_to(&h, id, 0, "third"), SLUICE_ESTATE);
	assert_int_equal(take(&h, "t", 1, &id, &lease), 0);
	assert_int_equal(ack_to(&h, id, lease, "third"), SLUICE_ELIMIT);
	assert_int_equal(release(&h, id, lease, -3, false, 0), SLUICE_EINVAL);
	assert_int_equal(pause_tube(&h, "third", h.now + 1), SLUICE_ENOTFOUND);
	{
		struct queue_pause_req pr = { "third", 5, h.now + 1, true };
		struct qrec rec;

		assert_int_equal(
		    queue_decide_pause(h.q, h.now, &pr, &rec), SLUICE_ELIMIT);
	}
	{
		struct queue_delete_req dr = { 0, big, QREC_KEY_MAX + 1 };
		struct qrec rec;

		assert_int_equal(
		    queue_decide_delete(h.q, h.now, &dr, &rec), SLUICE_EKEY);
		assert_int_equal(
		    queue_decide_expired(h.q, -1, &rec), SLUICE_EINVAL);
	}
	tq_fini(&h);
}

/* ---- apply's checks
 * ------------------------------------------------------------ */

/* Applies `rec` expecting SLUICE_ECORRUPT and no change to the dump. */
static void
refused(struct tq *h, uint64_t lsn, const struct qrec *rec)
{
	struct buf before, after;

	buf_init(&before);
	buf_init(&after);
	assert_int_equal(queue_dump(h->q, &before), 0);
	assert_int_equal(queue_apply(h->q, lsn, h->now, rec), SLUICE_ECORRUPT);
	assert_int_equal(queue_dump(h->q, &after), 0);
	assert_int_equal(before.len, after.len);
	assert_memory_equal(before.data, after.data, before.len);
	tq_check(h);
	buf_fini(&before);
	buf_fini(&after);
}

/* A record that does not fit the state (as from a damaged log or a buggy
 * peer) is refused and changes nothing. */
static void
test_apply_refuses_records_that_do_not_fit(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct qrec rec;
	uint64_t a, b, id, lease;
	uint64_t next = 1000;

	req_for(&req, "t", "a");
	req.key = "k";
	req.key_len = 1;
	a = put_req(h, &req);
	b = put(h, "t", "b");
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == a);

	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_TAKE;
	rec.u.take.id = 99; /* unknown */
	refused(h, next++, &rec);
	rec.u.take.id = a; /* already taken */
	refused(h, next++, &rec);
	rec.u.take.id = b;
	refused(h, h->lsn, &rec); /* lsn not increasing */
	h->now = -1;
	refused(h, next++, &rec); /* time out of range */
	h->now = T0;

	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_PUT;
	rec.u.put.id = b; /* an id already used */
	rec.u.put.tube = "t";
	rec.u.put.tube_len = 1;
	rec.u.put.ttr = 1;
	refused(h, next++, &rec);
	rec.u.put.id = 50;
	rec.u.put.key = "k"; /* a live key */
	rec.u.put.key_len = 1;
	refused(h, next++, &rec);
	rec.u.put.key_len = 0;
	rec.u.put.tube = "no good";
	rec.u.put.tube_len = 7;
	refused(h, next++, &rec); /* not a valid record */

	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_ACK;
	rec.u.end.id = a;
	rec.u.end.lease = lease + 1;
	refused(h, next++, &rec);
	rec.u.end.lease = lease;
	rec.u.end.outcome = QREC_WAIT; /* not recurring */
	rec.u.end.run_at = T0;
	refused(h, next++, &rec);
	rec.u.end.outcome = QREC_REPLACED; /* nothing pending */
	rec.u.end.run_at = 0;
	refused(h, next++, &rec);
	rec.type = QREC_RELEASE;
	rec.u.end.id = b; /* not taken */
	rec.u.end.outcome = QREC_WAIT;
	rec.u.end.run_at = T0;
	refused(h, next++, &rec);
	rec.type = QREC_BURY;
	rec.u.end.lease = 0;
	rec.u.end.id = a; /* taken: lease 0 is for waiting tasks */
	rec.u.end.outcome = QREC_BURIED;
	rec.u.end.run_at = 0;
	refused(h, next++, &rec);

	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_KICK;
	rec.u.kick.id = a; /* taken */
	refused(h, next++, &rec);
	rec.type = QREC_TOUCH;
	rec.u.touch.id = b;
	rec.u.touch.lease = 3;
	refused(h, next++, &rec);
	rec.type = QREC_DELETE;
	rec.u.del.id = 77;
	refused(h, next++, &rec);
	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_FLUSH;
	rec.u.flush.tube = "nosuch";
	rec.u.flush.tube_len = 6;
	refused(h, next++, &rec);
	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_REPLACE;
	rec.u.replace.id = b; /* not taken, yet pending */
	rec.u.replace.ttr = 1;
	rec.u.replace.pending = true;
	refused(h, next++, &rec);
	rec.u.replace.id = a; /* taken, yet not pending */
	rec.u.replace.pending = false;
	refused(h, next++, &rec);
	memset(&rec, 0, sizeof(rec));
	rec.type = 42;
	refused(h, next++, &rec);
	rec.type = 100;
	refused(h, next++, &rec);
	/* The queue still works. */
	assert_int_equal(ack(h, a, lease), 0);
}

/* next_wake is the earliest of a delayed run_at, a lease deadline and a
 * pause's end. */
static void
test_next_wake_is_the_earliest_event(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t id;

	assert_true(queue_next_wake(h->q) == INT64_MAX);
	req_for(&req, "t", "a");
	req.delay_ms = 3000;
	put_req(h, &req);
	assert_true(queue_next_wake(h->q) == T0 + 3000);
	req.delay_ms = 0;
	req.ttr_ms = 2000;
	put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(queue_next_wake(h->q) == T0 + 2000);
	assert_int_equal(pause_tube(h, "t", T0 + 1000), 0);
	assert_true(queue_next_wake(h->q) == T0 + 1000);
}

/* ---- hourly statistics
 * ------------------------------------------------------------ */

/* Bucket b holds (bound(b-1), bound(b)]: 1, 2, 3, 4, 6, 8, 12, ... 2^24; the
 * totals keep every fourth bound. */
static void
test_hourly_buckets_and_bounds(void **state)
{
	(void)state;
	assert_int_equal(queue_hist_bucket(0), 0);
	assert_int_equal(queue_hist_bucket(-5), 0);
	assert_int_equal(queue_hist_bucket(1), 1);
	for (int b = 1; b < QUEUE_HIST_BUCKETS - 1; b++) {
		int64_t hi = queue_hist_bound(b), lo = queue_hist_bound(b - 1);

		assert_true(hi > lo);
		assert_int_equal(queue_hist_bucket(hi), b);
		assert_int_equal(queue_hist_bucket(lo + 1), b);
		assert_int_equal(queue_hist_bucket(hi + 1), b + 1);
		/* the ratio that bounds the error of a percentile */
		assert_true(2 * hi <= 3 * (lo + 1) || hi - lo == 1);
	}
	assert_true(queue_hist_bound(QUEUE_HIST_BUCKETS - 2) == 1 << 24);
	assert_int_equal(
	    queue_hist_bucket(INT64_C(1) << 40), QUEUE_HIST_BUCKETS - 1);
	for (int c = 0; c < QUEUE_TOTAL_BUCKETS - 1; c++)
		assert_true(queue_total_bound(c) ==
		    queue_hist_bound(c == 0 ? 1 : 4 * c));
}

static struct queue_hour
one_hour(struct tq *h, const char *tube, size_t *n)
{
	struct queue_hour out[QUEUE_HOURS];

	assert_int_equal(
	    queue_hourly(h->q, h->now, tube, tube ? strlen(tube) : 0, out, n),
	    0);
	assert_true(*n >= 1);
	return out[0];
}

/* Acks, fails, buries and ttr expiries count in the hour of their record;
 * work is take -> ack, wait is ready -> take; hours leave after 48. */
static void
test_hourly_counts_durations_and_window(void **state)
{
	struct tq *h = tq_of(state);
	int64_t hb = (T0 / QUEUE_HOUR_MS + 1) * QUEUE_HOUR_MS;
	struct queue_hour out[QUEUE_HOURS], x;
	struct queue_total work, wait;
	struct queue_put_req req;
	struct queue *copy;
	uint64_t id, lease;
	size_t n;

	h->now = hb + 1000;
	assert_int_equal(
	    queue_hourly(h->q, h->now, "w", 1, out, &n), SLUICE_ENOTFOUND);
	assert_int_equal(
	    queue_hourly(h->q, h->now, "no good", 7, out, &n), SLUICE_ETUBE);
	put(h, "w", "a");
	h->now += 100;
	assert_int_equal(take(h, "w", 1, &id, &lease), 0); /* waited 100 */
	h->now += 250;
	assert_int_equal(ack(h, id, lease), 0); /* worked 250 */
	put(h, "w", "b");
	h->now += 3000;
	assert_int_equal(take(h, "w", 1, &id, &lease), 0); /* waited 3000 */
	assert_int_equal(fail_task(h, id, lease, "no"), 0);
	req_for(&req, "w", "c");
	req.max_attempts = 1;
	req.pri = req.pri + 1; /* after b, which is due later (ready order) */
	put_req(h, &req);
	h->now += 5000; /* b ready again 1 s after its fail, c since its put */
	assert_int_equal(take(h, "w", 1, &id, &lease), 0); /* b: waited 4000 */
	assert_memory_equal(view(h, id).payload, "b", 1);
	assert_int_equal(bury(h, id, lease), 0);
	assert_int_equal(take(h, "w", 1, &id, &lease), 0); /* c: 5000 */
	h->now += QUEUE_DEFAULT_TTR_MS;
	/* c's ttr expires at its max_attempts: an expiry and a bury */
	assert_int_equal(expire(h), 1);
	x = one_hour(h, "w", &n);
	assert_int_equal(n, 1);
	assert_true(x.start == hb);
	assert_true(
	    x.acks == 1 && x.fails == 1 && x.buries == 2 && x.ttr_expired == 1);
	assert_true(x.work.count == 1 && x.work.total_ms == 250 &&
	    x.work.max_ms == 250);
	assert_int_equal(
	    queue_hist_bucket((int64_t)x.work.p50_ms), queue_hist_bucket(250));
	assert_true(x.wait.count == 4 &&
	    x.wait.total_ms == 100 + 3000 + 5000 + 4000 &&
	    x.wait.max_ms == 5000);
	assert_true(
	    x.wait.p50_ms <= x.wait.p99_ms && x.wait.p99_ms <= x.wait.max_ms);

	/* A later hour, another tube: newest first; merged over tubes. */
	h->now = hb + QUEUE_HOUR_MS + 10;
	put(h, "v", "d");
	h->now += 7;
	assert_int_equal(take(h, "v", 1, &id, &lease), 0);
	assert_int_equal(ack(h, id, lease), 0);
	assert_int_equal(queue_hourly(h->q, h->now, NULL, 0, out, &n), 0);
	assert_int_equal(n, 2);
	assert_true(out[0].start == hb + QUEUE_HOUR_MS && out[0].acks == 1 &&
	    out[0].wait.total_ms == 7 && out[0].work.total_ms == 0);
	assert_true(out[1].start == hb && out[1].wait.count == 4);
	x = one_hour(h, "w", &n);
	assert_true(n == 1 && x.start == hb);

	/* 48 hours later the first hour is gone; the totals stay. */
	h->now = hb + (QUEUE_HOURS - 1) * (int64_t)QUEUE_HOUR_MS;
	assert_int_equal(queue_hourly(h->q, h->now, "w", 1, out, &n), 0);
	assert_int_equal(n, 1);
	h->now = hb + QUEUE_HOURS * (int64_t)QUEUE_HOUR_MS;
	assert_int_equal(queue_hourly(h->q, h->now, "w", 1, out, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(queue_hourly(h->q, h->now, NULL, 0, out, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(queue_tube_totals(h->q, 0, &work, &wait), 0);
	assert_true(work.count == 1 && work.total_ms == 250);
	assert_true(wait.count == 4 && wait.total_ms == 12100);
	assert_true(wait.bucket[6] == 2 && wait.bucket[4] == 1 &&
	    wait.bucket[7] == 1); /* 3000, 4000 | 100 | 5000 */
	assert_int_equal(
	    queue_tube_totals(h->q, 2, &work, &wait), SLUICE_ENOTFOUND);
	tq_check(h);

	/* A snapshot holds them: loaded, the same dump. */
	copy = queue_new(NULL);
	{
		struct buf snap;

		buf_init(&snap);
		assert_int_equal(
		    queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
		assert_int_equal(tq_snap_load(copy, &snap), 0);
		buf_fini(&snap);
	}
	assert_int_equal(queue_check(copy, NULL), 0);
	assert_true(tq_same(h->q, copy, h->now));
	queue_free(copy);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tq_setup, tq_teardown)
	const struct CMUnitTest tests[] = {
		T(test_peek_next_in_each_state),
		T(test_list_orders_and_limit),
		T(test_errors_grouped_by_text),
		T(test_stats),
		T(test_every_limit_has_its_error),
		T(test_apply_refuses_records_that_do_not_fit),
		T(test_next_wake_is_the_earliest_event),
		T(test_hourly_buckets_and_bounds),
		T(test_hourly_counts_durations_and_window),
	};
#undef T
	return cmocka_run_group_tests_name("queue_query", tests, NULL, NULL);
}
