/* Tests of src/queue: every transition of the task state machine and every
 * error of every request, through the same path as the server (decide,
 * encode, decode, apply), plus apply's refusal of records that do not fit
 * the state, snapshots, and the queries. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "t_lib.h"
#include "t_queue.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

/* The binary is linked with --wrap for malloc, calloc, realloc,
 * aligned_alloc and mmap (see queue.cmake), so a test can count the
 * allocations of a call: mmap is how the queue gets a slab of task memory
 * (tslab.h), aligned_alloc how it gets a task in a sanitized build. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void *__real_mmap(
    void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
void *__wrap_mmap(
    void *addr, size_t len, int prot, int flags, int fd, off_t off);

static unsigned long allocs;
static unsigned long fail_at; /* this allocation fails; 0: none does */

static bool
alloc_fails(void)
{
	return ++allocs == fail_at;
}

void *
__wrap_malloc(size_t n)
{
	return alloc_fails() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : __real_realloc(p, n);
}

void *
__wrap_aligned_alloc(size_t align, size_t n)
{
	return alloc_fails() ? NULL : __real_aligned_alloc(align, n);
}

void *
__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (alloc_fails()) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return __real_mmap(addr, len, prot, flags, fd, off);
}

/* Commits the record when decide succeeded; returns decide's code. */
static int
run(struct tq *h, int rc, const struct qrec *rec)
{
	if (rc == 0)
		assert_int_equal(tq_commit(h, rec), 0);
	tq_check(h);
	return rc;
}

static int
try_put(
    struct tq *h, const struct queue_put_req *req, struct queue_put_res *res)
{
	struct qrec rec;

	return run(h, queue_decide_put(h->q, h->now, req, &rec, res), &rec);
}

static void
req_for(struct queue_put_req *req, const char *tube, const char *payload)
{
	queue_put_req_init(req);
	req->tube = tube;
	req->tube_len = strlen(tube);
	req->payload = payload;
	req->payload_len = strlen(payload);
}

static uint64_t
put_req(struct tq *h, const struct queue_put_req *req)
{
	struct queue_put_res res;

	assert_int_equal(try_put(h, req, &res), 0);
	assert_true(res.created);
	return res.id;
}

static uint64_t
put(struct tq *h, const char *tube, const char *payload)
{
	struct queue_put_req req;

	req_for(&req, tube, payload);
	return put_req(h, &req);
}

static uint64_t
put_pri(struct tq *h, const char *tube, const char *payload, uint32_t pri)
{
	struct queue_put_req req;

	req_for(&req, tube, payload);
	req.pri = pri;
	return put_req(h, &req);
}

static int
take_from(struct tq *h, const struct queue_str *tubes, size_t n,
    uint64_t session, bool detached, uint64_t *id, uint64_t *lease)
{
	struct queue_take_req req = { tubes, n, session, detached };
	struct queue_task_view v;
	struct qrec rec;
	int rc;

	rc = run(h, queue_decide_take(h->q, h->now, &req, &rec), &rec);
	if (rc != 0)
		return rc;
	assert_int_equal(queue_peek(h->q, h->now, rec.u.take.id, &v), 0);
	assert_int_equal(v.state, QUEUE_TAKEN);
	assert_true(v.lease == h->lsn); /* the lease is the TAKE's lsn */
	*id = v.id;
	if (lease != NULL)
		*lease = v.lease;
	return 0;
}

static int
take(struct tq *h, const char *tube, uint64_t session, uint64_t *id,
    uint64_t *lease)
{
	struct queue_str s = { tube, strlen(tube) };

	return take_from(h, &s, 1, session, false, id, lease);
}

static int
ack(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_ack_req req = { id, lease, NULL, 0 };
	struct qrec rec;

	return run(h, queue_decide_ack(h->q, h->now, &req, &rec), &rec);
}

static int
ack_to(struct tq *h, uint64_t id, uint64_t lease, const char *tube)
{
	struct queue_ack_req req = { id, lease, tube, strlen(tube) };
	struct qrec rec;

	return run(h, queue_decide_ack(h->q, h->now, &req, &rec), &rec);
}

static int
release(struct tq *h, uint64_t id, uint64_t lease, int64_t delay, bool set_pri,
    uint32_t pri)
{
	struct queue_release_req req = { id, lease, delay, 0, set_pri, pri };
	struct qrec rec;

	return run(h, queue_decide_release(h->q, h->now, &req, &rec), &rec);
}

static int
fail_task(struct tq *h, uint64_t id, uint64_t lease, const char *err)
{
	struct queue_fail_req req = { id, lease, err, strlen(err), false, 0 };
	struct qrec rec;

	return run(h, queue_decide_fail(h->q, h->now, &req, &rec), &rec);
}

static int
touch(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_touch_req req = { id, lease };
	struct qrec rec;

	return run(h, queue_decide_touch(h->q, h->now, &req, &rec), &rec);
}

static int
bury(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_bury_req req = { id, lease };
	struct qrec rec;

	return run(h, queue_decide_bury(h->q, h->now, &req, &rec), &rec);
}

/* An operator's bury: force, no lease. */
static int
park(struct tq *h, uint64_t id)
{
	struct queue_bury_req req = { id, 0, true };
	struct qrec rec;

	return run(h, queue_decide_bury(h->q, h->now, &req, &rec), &rec);
}

/* ack, release, fail, touch or bury, by name, with force and `lease`. */
static int
forced(struct tq *h, const char *op, uint64_t id, uint64_t lease)
{
	struct qrec rec;
	int rc;

	if (strcmp(op, "ack") == 0) {
		struct queue_ack_req req = { id, lease, NULL, 0, true };

		rc = queue_decide_ack(h->q, h->now, &req, &rec);
	} else if (strcmp(op, "release") == 0) {
		struct queue_release_req req = { id, lease, 0, 0, false, 0,
			true };

		rc = queue_decide_release(h->q, h->now, &req, &rec);
	} else if (strcmp(op, "fail") == 0) {
		struct queue_fail_req req = { id, lease, "x", 1, false, 0,
			true };

		rc = queue_decide_fail(h->q, h->now, &req, &rec);
	} else if (strcmp(op, "touch") == 0) {
		struct queue_touch_req req = { id, lease, true };

		rc = queue_decide_touch(h->q, h->now, &req, &rec);
	} else {
		struct queue_bury_req req = { id, lease, true };

		rc = queue_decide_bury(h->q, h->now, &req, &rec);
	}
	return run(h, rc, &rec);
}

static int
kick_id(struct tq *h, uint64_t id)
{
	struct queue_kick_req req = { id, NULL, 0 };
	struct qrec rec;

	return run(h, queue_decide_kick(h->q, h->now, &req, &rec), &rec);
}

/* Kicks up to n buried tasks of a tube; returns how many. */
static int
kick_n(struct tq *h, const char *tube, int n)
{
	struct queue_kick_req req = { 0, tube, strlen(tube) };
	struct qrec rec;
	int k = 0;

	while (k < n &&
	    run(h, queue_decide_kick(h->q, h->now, &req, &rec), &rec) == 0)
		k++;
	return k;
}

static int
del_id(struct tq *h, uint64_t id)
{
	struct queue_delete_req req = { id, NULL, 0 };
	struct qrec rec;

	return run(h, queue_decide_delete(h->q, h->now, &req, &rec), &rec);
}

static int
del_key_in(struct tq *h, const char *tube, const char *key)
{
	struct queue_delete_req req = { 0, key, strlen(key), tube,
		strlen(tube) };
	struct qrec rec;

	return run(h, queue_decide_delete(h->q, h->now, &req, &rec), &rec);
}

static int
pause_tube(struct tq *h, const char *tube, int64_t until)
{
	struct queue_pause_req req = { tube, strlen(tube), until };
	struct qrec rec;

	return run(h, queue_decide_pause(h->q, h->now, &req, &rec), &rec);
}

/* Runs the server's ttr timer: every expired lease. Returns how many. */
static int
expire(struct tq *h)
{
	struct qrec rec;
	int n = 0;

	while (n < 100000 && queue_decide_expired(h->q, h->now, &rec) == 0) {
		assert_int_equal(run(h, 0, &rec), 0);
		n++;
	}
	return n;
}

static int
session_gone(struct tq *h, uint64_t session)
{
	struct qrec rec;
	int n = 0;

	while (n < 100000 &&
	    queue_decide_session_gone(
	        h->q, h->now, session, "worker disconnected", 19, &rec) == 0) {
		assert_int_equal(run(h, 0, &rec), 0);
		n++;
	}
	return n;
}

static int
restart(struct tq *h)
{
	struct qrec rec;
	int n = 0;

	while (n < 100000 &&
	    queue_decide_restart(h->q, h->now, "server restarted", 16, &rec) ==
	        0) {
		assert_int_equal(run(h, 0, &rec), 0);
		n++;
	}
	return n;
}

static struct queue_task_view
view(struct tq *h, uint64_t id)
{
	struct queue_task_view v;

	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	return v;
}

static struct queue_tube_stats
tstats(struct tq *h, const char *tube)
{
	struct queue_tube_stats s;

	assert_int_equal(
	    queue_tube_stats(h->q, h->now, tube, strlen(tube), &s), 0);
	return s;
}

static void
assert_counts(struct tq *h, const char *tube, uint64_t ready, uint64_t delayed,
    uint64_t taken, uint64_t buried)
{
	struct queue_tube_stats s = tstats(h, tube);

	assert_true(s.ready == ready);
	assert_true(s.delayed == delayed);
	assert_true(s.taken == taken);
	assert_true(s.buried == buried);
}

static void
assert_payload(const struct queue_task_view *v, const char *payload)
{
	assert_int_equal(v->payload_len, strlen(payload));
	assert_memory_equal(v->payload, payload, v->payload_len);
}

/* ---- put and take ------------------------------------------------------ */

/* A put gives increasing ids; a take returns the task with a lease that is
 * the LSN of its TAKE record, one attempt, and the ttr deadline. */
static void
test_put_then_take_gives_a_lease_and_a_deadline(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	uint64_t a, b, id, lease;

	a = put(h, "jobs", "one");
	b = put(h, "jobs", "two");
	assert_true(a == 1 && b == 2);
	assert_counts(h, "jobs", 2, 0, 0, 0);
	h->now += 5;
	assert_int_equal(take(h, "jobs", 7, &id, &lease), 0);
	assert_true(id == a && lease == 3);
	v = view(h, id);
	assert_int_equal(v.attempts, 1);
	assert_true(v.taken_at == h->now);
	assert_true(v.deadline == h->now + QUEUE_DEFAULT_TTR_MS);
	assert_true(v.session == 7 && !v.detached);
	assert_true(v.created_at == T0 && v.updated_at == h->now);
	assert_int_equal(v.pri, QUEUE_DEFAULT_PRI);
	assert_payload(&v, "one");
	assert_counts(h, "jobs", 1, 0, 1, 0);
	assert_int_equal(ack(h, id, lease), 0);
	assert_int_equal(queue_peek(h->q, h->now, id, &v), SLUICE_ENOTFOUND);
	assert_counts(h, "jobs", 1, 0, 0, 0);
	assert_true(tstats(h, "jobs").ctr.ack == 1);
}

/* queue_task_dep_lsn: a take depends on the last record that placed a
 * task of its tube, not on a take under a session lease, nor on records
 * of other tubes; a detached take, and a record that changes a tube's
 * state, count. */
static void
test_a_takes_dependency_is_its_tubes_last_placing_record(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str b = { "b", 1 };
	uint64_t a1, b1, id, lease;

	a1 = put(h, "a", "one"); /* lsn 1 */
	b1 = put(h, "b", "two"); /* lsn 2 */
	assert_true(queue_task_dep_lsn(h->q, a1) == 1);
	assert_true(queue_task_dep_lsn(h->q, b1) == 2);
	(void)put(h, "a", "three");                        /* lsn 3 */
	assert_int_equal(take(h, "a", 7, &id, &lease), 0); /* lsn 4 */
	assert_true(id == a1);
	assert_true(queue_task_dep_lsn(h->q, a1) == 3);
	assert_true(queue_task_dep_lsn(h->q, b1) == 2);
	assert_int_equal(take_from(h, &b, 1, 7, true, &id, &lease), 0);
	assert_true(id == b1);
	assert_true(queue_task_dep_lsn(h->q, b1) == h->lsn);  /* detached */
	assert_true(queue_task_dep_lsn(h->q, 999) == h->lsn); /* no task */
}

/* queue_lease_restart counts a lease's ttr from a later moment, never
 * from an earlier one, and only for the lease the task holds. */
static void
test_a_lease_restarts_from_its_answer(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	uint64_t id, lease;

	(void)put(h, "jobs", "one");
	assert_int_equal(take(h, "jobs", 7, &id, &lease), 0);
	v = view(h, id);
	assert_true(v.deadline == h->now + QUEUE_DEFAULT_TTR_MS);
	assert_true(queue_lease_restart(h->q, id, lease, h->now + 40) ==
	    h->now + 40 + QUEUE_DEFAULT_TTR_MS);
	assert_true(view(h, id).deadline == h->now + 40 + QUEUE_DEFAULT_TTR_MS);
	assert_true(queue_lease_restart(h->q, id, lease, h->now) ==
	    h->now + 40 + QUEUE_DEFAULT_TTR_MS);
	assert_true(queue_lease_restart(h->q, id, lease + 1, h->now + 90) == 0);
	assert_true(view(h, id).deadline == h->now + 40 + QUEUE_DEFAULT_TTR_MS);
	tq_check(h);
}

/* Ready order is priority first, then id (FIFO among equals). */
static void
test_take_order_is_priority_then_id(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, b, c, d, id;

	a = put_pri(h, "t", "a", 10);
	b = put_pri(h, "t", "b", 5);
	c = put_pri(h, "t", "c", 10);
	d = put_pri(h, "t", "d", 0);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == d);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == b);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == a);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == c);
	assert_int_equal(take(h, "t", 1, &id, NULL), SLUICE_ETIMEDOUT);
}

/* Tasks due at one priority come out in the order they became due, not
 * in id order: a later put that was due first is taken first, and a
 * plain put made after both waits behind them (priority, run_at, id). */
static void
test_take_order_is_priority_then_due_time_then_id(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t late, early, plain, urgent, id;

	req_for(&req, "t", "due at +200");
	req.delay_ms = 200;
	late = put_req(h, &req);
	req_for(&req, "t", "due at +100");
	req.delay_ms = 100;
	early = put_req(h, &req);
	h->now = T0 + 300;
	plain = put(h, "t", "plain");
	urgent = put_pri(h, "t", "urgent", 1);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == urgent);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == early);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == late);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == plain);
}

/* A delayed task is not taken before its run_at, and is ready from then
 * on; a run_at in the past means now. */
static void
test_delayed_task_gets_ready_at_run_at(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, b, id;

	req_for(&req, "t", "later");
	req.delay_ms = 1000;
	a = put_req(h, &req);
	assert_counts(h, "t", 0, 1, 0, 0);
	assert_true(view(h, a).run_at == T0 + 1000);
	assert_true(queue_next_wake(h->q) == T0 + 1000);
	assert_int_equal(take(h, "t", 1, &id, NULL), SLUICE_ETIMEDOUT);
	h->now = T0 + 999;
	assert_int_equal(take(h, "t", 1, &id, NULL), SLUICE_ETIMEDOUT);
	h->now = T0 + 1000;
	assert_counts(h, "t", 1, 0, 0, 0);
	assert_true(queue_next_wake(h->q) == INT64_MAX);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == a);

	req_for(&req, "t", "past");
	req.run_at = T0 - 5000;
	b = put_req(h, &req);
	assert_int_equal(view(h, b).state, QUEUE_READY);
	assert_true(view(h, b).run_at == h->now);
}

/* ---- leases -------------------------------------------------------------- */

/* Release puts the task back with the delay and priority asked, attempts
 * kept. */
static void
test_release_with_delay_and_new_priority(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	uint64_t a, b, id, lease;

	a = put_pri(h, "t", "a", 100);
	b = put_pri(h, "t", "b", 50);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == b);
	assert_int_equal(release(h, b, lease, 2000, true, 1), 0);
	v = view(h, b);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_int_equal(v.pri, 1);
	assert_int_equal(v.attempts, 1);
	assert_true(v.run_at == h->now + 2000);
	assert_true(v.lease == 0);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == a);
	h->now += 2000;
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == b);
	assert_int_equal(view(h, b).attempts, 2);
	/* Without a delay or priority: ready at once, priority kept. */
	assert_int_equal(release(h, b, lease, 0, false, 0), 0);
	v = view(h, b);
	assert_int_equal(v.state, QUEUE_READY);
	assert_int_equal(v.pri, 1);
	assert_true(tstats(h, "t").ctr.release == 2);
}

/* A lease that is not the task's current one is refused; an unknown id is
 * not found; a task that is not taken is ESTATE whatever the lease. */
static void
test_stale_leases(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, id, l1, l2;

	a = put(h, "t", "a");
	assert_int_equal(ack(h, a, 0), SLUICE_ESTATE);
	assert_int_equal(ack(h, a, 12345), SLUICE_ESTATE);
	assert_int_equal(take(h, "t", 1, &id, &l1), 0);
	assert_int_equal(ack(h, a, l1 + 1), SLUICE_ESTALE);
	assert_int_equal(touch(h, a, l1 + 1), SLUICE_ESTALE);
	assert_int_equal(bury(h, a, l1 + 1), SLUICE_ESTALE);
	assert_int_equal(fail_task(h, a, l1 + 1, "x"), SLUICE_ESTALE);
	assert_int_equal(release(h, a, l1 + 1, 0, false, 0), SLUICE_ESTALE);
	assert_int_equal(release(h, a, l1, 0, false, 0), 0);
	/* Released: the task is not taken, whatever lease comes. */
	assert_int_equal(ack(h, a, l1), SLUICE_ESTATE);
	assert_int_equal(take(h, "t", 1, &id, &l2), 0);
	assert_true(l2 > l1);
	/* Taken again: the old lease is stale. */
	assert_int_equal(ack(h, a, l1), SLUICE_ESTALE);
	assert_int_equal(ack(h, 999, l2), SLUICE_ENOTFOUND);
	{
		/* A refused request leaves the record untouched. */
		struct queue_ack_req req = { a, l1, NULL, 0 };
		struct qrec rec;

		memset(&rec, 0xa5, sizeof(rec));
		assert_int_equal(
		    queue_decide_ack(h->q, h->now, &req, &rec), SLUICE_ESTALE);
		assert_int_equal(rec.type, 0xa5a5);
	}
	assert_int_equal(ack(h, a, l2), 0);
	assert_int_equal(ack(h, a, l2), SLUICE_ENOTFOUND);
}

/* Lease 0 is no wildcard: on a task another worker holds, every lease
 * operation is refused as stale, and the holder's lease still works. */
static void
test_lease_zero_is_refused(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t a, id, lease;

	a = put(h, "t", "a");
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(ack(h, a, 0), SLUICE_ESTALE);
	assert_int_equal(touch(h, a, 0), SLUICE_ESTALE);
	assert_int_equal(bury(h, a, 0), SLUICE_ESTALE);
	assert_int_equal(fail_task(h, a, 0, "x"), SLUICE_ESTALE);
	assert_int_equal(release(h, a, 0, 0, false, 0), SLUICE_ESTALE);
	assert_int_equal(view(h, a).state, QUEUE_TAKEN);
	assert_true(view(h, a).lease == lease);
	assert_int_equal(ack(h, a, lease), 0);
}

/* force skips the lease check (any lease, 0 too) but not the state: on a
 * task that is not taken it is still ESTATE (bury aside: it parks a
 * waiting task by force). */
static void
test_force_overrides_the_lease_only(void **state)
{
	static const char *const ops[] = { "touch", "release", "fail", "ack" };
	struct tq *h = tq_of(state);
	uint64_t a, id, lease;

	a = put(h, "t", "a");
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(forced(h, ops[i], a, 0), SLUICE_ESTATE);
		assert_int_equal(forced(h, ops[i], 99, 0), SLUICE_ENOTFOUND);
	}
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(forced(h, "touch", a, lease + 7), 0);
	assert_int_equal(forced(h, "touch", a, 0), 0);
	assert_int_equal(view(h, a).state, QUEUE_TAKEN);
	assert_int_equal(forced(h, "release", a, 0), 0);
	assert_int_equal(view(h, a).state, QUEUE_READY);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(forced(h, "fail", a, lease + 1), 0);
	assert_int_equal(view(h, a).state, QUEUE_DELAYED);
	h->now = view(h, a).run_at;
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(forced(h, "bury", a, 0), 0);
	assert_int_equal(view(h, a).state, QUEUE_BURIED);
	assert_int_equal(kick_id(h, a), 0);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(forced(h, "ack", a, 0), 0);
	assert_int_equal(forced(h, "ack", a, 0), SLUICE_ENOTFOUND);
}

static void
assert_error(const struct queue_task_view *v, const char *text)
{
	assert_int_equal(v->last_error_len, strlen(text));
	assert_memory_equal(v->last_error, text, v->last_error_len);
}

/* An expired lease puts the task back with its attempts, delayed by the
 * backoff of a fail and with why in last_error; the old lease is then
 * stale. */
static void
test_ttr_expiry_releases_and_keeps_attempts(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_task_view v;
	uint64_t a, id, lease;

	req_for(&req, "t", "a");
	req.ttr_ms = 500;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(queue_next_wake(h->q) == h->now + 500);
	h->now += 499;
	assert_int_equal(expire(h), 0);
	h->now += 1;
	assert_int_equal(expire(h), 1);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_true(v.run_at == h->now + QUEUE_DEFAULT_BACKOFF_BASE_MS);
	assert_int_equal(v.attempts, 1);
	assert_error(&v, "ttr expired after 500ms");
	assert_int_equal(ack(h, a, lease), SLUICE_ESTATE);
	assert_true(tstats(h, "t").ctr.ttr_expired == 1);
	assert_true(tstats(h, "t").ctr.release == 0);
}

/* With max_attempts, the lease that expires at the last attempt buries
 * the task instead. */
static void
test_ttr_expiry_buries_at_max_attempts(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, id;

	req_for(&req, "t", "a");
	req.ttr_ms = 100;
	req.max_attempts = 2;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	h->now += 100;
	assert_int_equal(expire(h), 1);
	assert_int_equal(view(h, a).state, QUEUE_DELAYED);
	h->now += QUEUE_DEFAULT_BACKOFF_BASE_MS;
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	h->now += 100;
	assert_int_equal(expire(h), 1);
	assert_int_equal(view(h, a).state, QUEUE_BURIED);
	assert_int_equal(view(h, a).attempts, 2);
	{
		struct queue_task_view v = view(h, a);

		assert_error(&v, "ttr expired after 100ms");
	}
	assert_true(tstats(h, "t").ctr.bury == 1);
	assert_true(tstats(h, "t").ctr.ttr_expired == 2);
}

/* Touch moves the deadline to now + ttr. */
static void
test_touch_extends_the_deadline(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, id, lease;

	req_for(&req, "t", "a");
	req.ttr_ms = 1000;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	h->now += 800;
	assert_int_equal(touch(h, a, lease), 0);
	assert_true(view(h, a).deadline == h->now + 1000);
	assert_true(queue_next_wake(h->q) == h->now + 1000);
	h->now += 900;
	assert_int_equal(expire(h), 0);
	assert_int_equal(view(h, a).lease, lease);
	h->now += 100;
	assert_int_equal(expire(h), 1);
	assert_int_equal(touch(h, a, lease), SLUICE_ESTATE);
}

/* A session going away releases the tasks it holds under session leases,
 * and only those: detached leases and other sessions keep theirs. */
static void
test_session_gone_releases_only_its_session_leases(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str s = { "t", 1 };
	struct queue_task_view v;
	uint64_t a, b, c, d, id;

	a = put(h, "t", "a");
	b = put(h, "t", "b");
	c = put(h, "t", "c");
	d = put(h, "t", "d");
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_int_equal(take_from(h, &s, 1, 1, true, &id, NULL), 0);
	assert_int_equal(take(h, "t", 2, &id, NULL), 0);
	assert_true(id == d);
	assert_int_equal(session_gone(h, 1), 2);
	assert_int_equal(view(h, a).state, QUEUE_DELAYED);
	assert_int_equal(view(h, b).state, QUEUE_DELAYED);
	assert_int_equal(view(h, c).state, QUEUE_TAKEN);
	assert_int_equal(view(h, d).state, QUEUE_TAKEN);
	assert_int_equal(view(h, a).attempts, 1);
	v = view(h, a);
	assert_error(&v, "worker disconnected");
	assert_int_equal(session_gone(h, 1), 0);
	assert_true(tstats(h, "t").ctr.session_released == 2);
	/* The detached lease ends by its ttr only. */
	h->now += QUEUE_DEFAULT_TTR_MS;
	assert_int_equal(expire(h), 2);
	v = view(h, c);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_error(&v, "ttr expired after 60s");
}

/* Under QUEUE_RETRY_IMMEDIATE a lost lease makes the task ready at once,
 * still recording why. */
static void
test_lost_lease_can_retry_at_once(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_config cfg;
	struct queue_task_view v;
	uint64_t a, id;

	tq_fini(h);
	queue_config_default(&cfg);
	cfg.lost_lease_retry = QUEUE_RETRY_IMMEDIATE;
	tq_init(h, &cfg, T0);
	a = put(h, "t", "a");
	assert_int_equal(take(h, "t", 3, &id, NULL), 0);
	assert_int_equal(session_gone(h, 3), 1);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_READY);
	assert_int_equal(v.attempts, 1);
	assert_error(&v, "worker disconnected");
}

/* queue_on_lost_lease: session 7 asks for ready at once. */
static bool
ready_for_7(void *arg, uint64_t session)
{
	(*(int *)arg)++;
	return session == 7;
}

/* A lease's holder may ask for ready at once (the beanstalk face's
 * sessions): its tasks come back ready on a disconnect and a ttr expiry
 * under the default backoff; other sessions' and detached leases keep
 * the backoff, and a restart does not ask. */
static void
test_lost_lease_holder_may_ask_for_ready_at_once(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str s = { "t", 1 };
	struct queue_put_req req;
	struct queue_task_view v;
	uint64_t a, b, c, d, id;
	int asked = 0;

	queue_on_lost_lease(h->q, ready_for_7, &asked);
	a = put(h, "t", "a");
	b = put(h, "t", "b");
	c = put(h, "t", "c");
	req_for(&req, "t", "d");
	req.ttr_ms = 10;
	d = put_req(h, &req);
	assert_int_equal(take(h, "t", 7, &id, NULL), 0);
	assert_true(id == a);
	assert_int_equal(take(h, "t", 8, &id, NULL), 0);
	assert_true(id == b);
	assert_int_equal(take_from(h, &s, 1, 7, true, &id, NULL), 0);
	assert_true(id == c);
	assert_int_equal(session_gone(h, 7), 1);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_READY);
	assert_int_equal(v.attempts, 1);
	assert_error(&v, "worker disconnected");
	assert_int_equal(session_gone(h, 8), 1);
	assert_int_equal(view(h, b).state, QUEUE_DELAYED);
	assert_int_equal(asked, 2);

	/* a ttr expiry of session 7's lease: ready at once */
	assert_int_equal(take(h, "t", 7, &id, NULL), 0);
	assert_true(id == a || id == d);
	if (id == a)
		assert_int_equal(take(h, "t", 7, &id, NULL), 0);
	assert_true(id == d);
	h->now += 10;
	assert_int_equal(expire(h), 1);
	v = view(h, d);
	assert_int_equal(v.state, QUEUE_READY);
	assert_error(&v, "ttr expired after 10ms");
	/* the detached lease (session 7 took it) is not asked about */
	h->now += QUEUE_DEFAULT_TTR_MS;
	assert_true(expire(h) >= 1);
	assert_int_equal(view(h, c).state, QUEUE_DELAYED);
}

/* The backoff of lost leases doubles per attempt up to its cap, as a
 * fail's does. */
static void
test_lost_lease_backoff_doubles(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	int64_t want = QUEUE_DEFAULT_BACKOFF_BASE_MS;
	uint64_t a, id;

	req_for(&req, "t", "a");
	req.ttr_ms = 10;
	a = put_req(h, &req);
	for (int i = 0; i < 14; i++) {
		assert_int_equal(take(h, "t", 1, &id, NULL), 0);
		h->now += 10;
		assert_int_equal(expire(h), 1);
		assert_true(view(h, a).run_at == h->now + want);
		h->now = view(h, a).run_at;
		want = want * 2 > QUEUE_DEFAULT_BACKOFF_CAP_MS
		    ? QUEUE_DEFAULT_BACKOFF_CAP_MS
		    : want * 2;
	}
	assert_int_equal(view(h, a).attempts, 14);
}

/* A take whose reply went nowhere is undone: the task waits where it
 * did (ahead of later puts), its attempt uncounted; its lease is gone. */
static void
test_untake_puts_the_task_back_in_its_place(void **state)
{
	struct tq *h = tq_of(state);
	struct qrec rec;
	uint64_t a, b, id, lease;

	a = put(h, "t", "a");
	h->now += 5;
	b = put(h, "t", "b");
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == a);
	assert_int_equal(
	    run(h, queue_decide_untake(h->q, h->now, a, lease + 1, &rec), &rec),
	    SLUICE_ESTALE);
	assert_int_equal(
	    run(h, queue_decide_untake(h->q, h->now, a, lease, &rec), &rec), 0);
	assert_int_equal(rec.type, QREC_UNTAKE);
	assert_int_equal(view(h, a).state, QUEUE_READY);
	assert_int_equal(view(h, a).attempts, 0);
	assert_int_equal(ack(h, a, lease), SLUICE_ESTATE);
	assert_int_equal(
	    run(h, queue_decide_untake(h->q, h->now, a, lease, &rec), &rec),
	    SLUICE_ESTATE);
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_true(id == a);
	assert_int_equal(view(h, a).attempts, 1);
	(void)b;
}

/* fail --fatal buries at once whatever the attempts; bury takes a text
 * that becomes last_error, for a taken task and an operator's park. */
static void
test_fatal_fail_and_bury_with_a_text(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_fail_req f = { 0 };
	struct queue_bury_req br = { 0 };
	struct queue_task_view v;
	struct qrec rec;
	uint64_t a, b, id, lease;

	a = put(h, "t", "a");
	b = put(h, "t", "b");
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	f.id = a;
	f.lease = lease;
	f.error = "bad input";
	f.error_len = 9;
	f.fatal = true;
	assert_int_equal(
	    run(h, queue_decide_fail(h->q, h->now, &f, &rec), &rec), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_BURIED);
	assert_error(&v, "bad input");

	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	br.id = b;
	br.lease = lease;
	br.error = "poison";
	br.error_len = 6;
	assert_int_equal(
	    run(h, queue_decide_bury(h->q, h->now, &br, &rec), &rec), 0);
	assert_int_equal(rec.type, QREC_SETBACK);
	v = view(h, b);
	assert_int_equal(v.state, QUEUE_BURIED);
	assert_error(&v, "poison");
	assert_true(tstats(h, "t").ctr.bury == 2);

	/* an operator parks a ready task with a text */
	assert_int_equal(kick_id(h, b), 0);
	br.lease = 0;
	br.force = true;
	br.error = "parked by hand";
	br.error_len = 14;
	assert_int_equal(
	    run(h, queue_decide_bury(h->q, h->now, &br, &rec), &rec), 0);
	v = view(h, b);
	assert_int_equal(v.state, QUEUE_BURIED);
	assert_error(&v, "parked by hand");
	br.error_len = QUEUE_DEFAULT_MAX_ERROR + 1;
	assert_int_equal(
	    queue_decide_bury(h->q, h->now, &br, &rec), SLUICE_ELIMIT);
}

/* A disconnect at the last attempt buries, as a ttr expiry does. */
static void
test_session_gone_buries_at_max_attempts(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, id;

	req_for(&req, "t", "a");
	req.max_attempts = 1;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 9, &id, NULL), 0);
	assert_int_equal(session_gone(h, 9), 1);
	assert_int_equal(view(h, a).state, QUEUE_BURIED);
}

/* After a restart every session lease is released: ready at once (no
 * backoff: the node failed), attempts kept, and why as the last error;
 * detached leases stay until their ttr. */
static void
test_restart_releases_session_leases_only(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str s = { "t", 1 };
	uint64_t ids[6], id;

	for (int i = 0; i < 6; i++)
		ids[i] = put(h, "t", "x");
	for (int i = 0; i < 6; i++)
		assert_int_equal(
		    take_from(h, &s, 1, (uint64_t)i % 3, i == 5, &id, NULL), 0);
	assert_int_equal(restart(h), 5);
	for (int i = 0; i < 5; i++) {
		struct queue_task_view v = view(h, ids[i]);

		assert_int_equal(v.state, QUEUE_READY);
		assert_int_equal(v.attempts, 1);
		assert_int_equal(v.last_error_len, 16);
		assert_memory_equal(v.last_error, "server restarted", 16);
	}
	assert_int_equal(view(h, ids[5]).state, QUEUE_TAKEN);
	assert_true(tstats(h, "t").ctr.session_released == 5);
}

/* ---- fail, bury, kick -----------------------------------------------------
 */

/* Fail delays by the backoff (1 s, 2 s, 4 s ...), records the error, and
 * buries once attempts reach max_attempts. */
static void
test_fail_backs_off_then_buries(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_task_view v;
	uint64_t a, id, lease;
	int64_t delay = 1000;

	req_for(&req, "t", "a");
	req.max_attempts = 4;
	a = put_req(h, &req);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(take(h, "t", 1, &id, &lease), 0);
		assert_int_equal(fail_task(h, a, lease, "boom"), 0);
		v = view(h, a);
		assert_int_equal(v.state, QUEUE_DELAYED);
		assert_true(v.run_at == h->now + delay);
		assert_int_equal(v.last_error_len, 4);
		assert_memory_equal(v.last_error, "boom", 4);
		assert_int_equal(take(h, "t", 1, &id, NULL), SLUICE_ETIMEDOUT);
		h->now += delay;
		delay *= 2;
	}
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(fail_task(h, a, lease, "last"), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_BURIED);
	assert_int_equal(v.attempts, 4);
	assert_memory_equal(v.last_error, "last", 4);
	assert_true(tstats(h, "t").ctr.fail == 4);
	assert_true(tstats(h, "t").ctr.bury == 1);
}

/* The backoff stops doubling at its cap; a fail may give its own delay. */
static void
test_fail_backoff_is_capped_and_can_be_explicit(void **state)
{
	struct queue_config cfg;
	struct queue_fail_req fr;
	struct qrec rec;
	struct tq h;
	uint64_t a, id, lease;
	int64_t want[] = { 100, 200, 400, 500, 500 };

	(void)state;
	queue_config_default(&cfg);
	cfg.backoff_base_ms = 100;
	cfg.backoff_cap_ms = 500;
	tq_init(&h, &cfg, T0);
	a = put(&h, "t", "a");
	for (int i = 0; i < 5; i++) {
		assert_int_equal(take(&h, "t", 1, &id, &lease), 0);
		assert_int_equal(fail_task(&h, a, lease, ""), 0);
		assert_true(view(&h, a).run_at == h.now + want[i]);
		assert_null(view(&h, a).last_error);
		h.now += want[i];
	}
	assert_int_equal(take(&h, "t", 1, &id, &lease), 0);
	memset(&fr, 0, sizeof(fr));
	fr.id = a;
	fr.lease = lease;
	fr.set_delay = true;
	fr.delay_ms = 7;
	assert_int_equal(
	    run(&h, queue_decide_fail(h.q, h.now, &fr, &rec), &rec), 0);
	assert_true(view(&h, a).run_at == h.now + 7);
	fr.delay_ms = -1;
	assert_int_equal(
	    queue_decide_fail(h.q, h.now, &fr, &rec), SLUICE_EINVAL);
	tq_fini(&h);
}

/* Bury parks a taken task; kick by id brings buried and delayed tasks
 * back; ready and taken ones cannot be kicked. */
static void
test_bury_and_kick_by_id(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a, b, id, lease;

	a = put(h, "t", "a");
	req_for(&req, "t", "b");
	req.delay_ms = 60000;
	b = put_req(h, &req);
	assert_int_equal(kick_id(h, a), SLUICE_ESTATE);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(kick_id(h, a), SLUICE_ESTATE);
	assert_int_equal(bury(h, a, lease), 0);
	assert_counts(h, "t", 0, 1, 0, 1);
	assert_int_equal(park(h, a), SLUICE_ESTATE);
	assert_int_equal(bury(h, a, lease), SLUICE_ESTATE);
	h->now += 10;
	assert_int_equal(kick_id(h, a), 0);
	assert_int_equal(view(h, a).state, QUEUE_READY);
	assert_true(view(h, a).run_at == h->now);
	assert_int_equal(kick_id(h, b), 0);
	assert_int_equal(view(h, b).state, QUEUE_READY);
	assert_true(view(h, b).run_at == h->now);
	assert_int_equal(kick_id(h, 77), SLUICE_ENOTFOUND);
	assert_true(tstats(h, "t").ctr.kick == 2);
}

/* A ready or delayed task is parked by force only: without it, bury
 * says the task is not taken, whatever the lease. */
static void
test_bury_of_a_waiting_task_needs_force(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t a = put(h, "t", "a"), b;

	req_for(&req, "t", "b");
	req.delay_ms = 60000;
	b = put_req(h, &req);
	assert_int_equal(bury(h, a, 5), SLUICE_ESTATE);
	assert_int_equal(bury(h, a, 0), SLUICE_ESTATE);
	assert_int_equal(bury(h, b, 0), SLUICE_ESTATE);
	assert_int_equal(view(h, a).state, QUEUE_READY);
	assert_int_equal(park(h, a), 0);
	assert_int_equal(view(h, a).state, QUEUE_BURIED);
	assert_int_equal(park(h, b), 0);
	assert_int_equal(view(h, b).state, QUEUE_BURIED);
	assert_int_equal(park(h, a), SLUICE_ESTATE);
	assert_int_equal(park(h, 99), SLUICE_ENOTFOUND);
}

/* Kick N brings back up to N buried tasks, the longest buried first. */
static void
test_kick_n_oldest_buried_first(void **state)
{
	struct tq *h = tq_of(state);
	uint64_t ids[4];

	for (int i = 0; i < 4; i++)
		ids[i] = put(h, "t", "x");
	/* Bury in the order 2, 0, 3, 1 at increasing times. */
	assert_int_equal(park(h, ids[2]), 0);
	h->now++;
	assert_int_equal(park(h, ids[0]), 0);
	h->now++;
	assert_int_equal(park(h, ids[3]), 0);
	h->now++;
	assert_int_equal(park(h, ids[1]), 0);
	assert_int_equal(kick_n(h, "t", 2), 2);
	assert_int_equal(view(h, ids[2]).state, QUEUE_READY);
	assert_int_equal(view(h, ids[0]).state, QUEUE_READY);
	assert_int_equal(view(h, ids[3]).state, QUEUE_BURIED);
	assert_int_equal(kick_n(h, "t", 10), 2);
	assert_int_equal(kick_n(h, "t", 10), 0);
	assert_int_equal(kick_n(h, "nosuch", 1), 0);
}

/* ---- keys ------------------------------------------------------------------
 */

/* A key is unique among the live tasks of its tube, then reserved there
 * for the dedup window after its task completes, then free again. */
static void
test_key_dedup_window(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_stats st;
	uint64_t a, b, id, lease;

	req_for(&req, "t", "a");
	req.key = "order-42";
	req.key_len = 8;
	a = put_req(h, &req);
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_false(res.created);
	assert_true(res.id == a);
	/* Keys are per tube: in another tube the key is another task's,
	 * and nothing of the first shows. */
	req.tube = "u";
	req.tube_len = 1;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	assert_true(res.id != a);
	assert_int_equal(del_key_in(h, "u", "order-42"), 0);
	assert_int_equal(del_key_in(h, "u", "order-42"), SLUICE_ENOTFOUND);
	req.tube = "t";
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(ack(h, a, lease), 0);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.keys == 0 && st.dedup == 1);
	h->now += QUEUE_DEFAULT_DEDUP_MS - 1;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_false(res.created);
	assert_true(res.id == a);
	h->now += 1;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	b = res.id;
	assert_true(b > a);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.keys == 1 && st.dedup == 0);
	assert_int_equal(view(h, b).key_len, 8);
}

/* Delete by key cancels the live task and frees its key at once (the
 * dedup window is for completed work); peek by key sees only live tasks.
 * The same for a delete by id and a flush. */
static void
test_delete_frees_the_key_at_once(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_task_view v;
	struct queue_stats st;
	uint64_t a, b, c;

	req_for(&req, "t", "a");
	req.key = "k";
	req.key_len = 1;
	a = put_req(h, &req);
	assert_int_equal(queue_peek_key(h->q, h->now, "t", 1, "k", 1, &v), 0);
	assert_true(v.id == a);
	assert_int_equal(del_key_in(h, "t", "k"), 0);
	assert_int_equal(del_key_in(h, "t", "k"), SLUICE_ENOTFOUND);
	assert_int_equal(
	    queue_peek_key(h->q, h->now, "t", 1, "k", 1, &v), SLUICE_ENOTFOUND);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.keys == 0 && st.dedup == 0);
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	b = res.id;
	assert_true(b > a);
	assert_int_equal(del_id(h, b), 0);
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	c = res.id;
	assert_true(c > b);
	{
		struct queue_flush_req fr = { "t", 1 };
		struct qrec rec;

		assert_int_equal(
		    run(h, queue_decide_flush(h->q, h->now, &fr, &rec), &rec),
		    0);
	}
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created && res.id > c);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.keys == 1 && st.dedup == 0);
}

/* ---- recurring, replace, ack --to ------------------------------------------
 */

/* Acking a recurring task schedules it at the first run_at + k * period
 * after the ack, with attempts reset. */
static void
test_ack_of_a_recurring_task_reschedules_it(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_task_view v;
	uint64_t a, id, lease;

	req_for(&req, "cron", "tick");
	req.period_ms = 1000;
	a = put_req(h, &req);
	assert_int_equal(take(h, "cron", 1, &id, &lease), 0);
	h->now += 300;
	assert_int_equal(ack(h, a, lease), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_true(v.run_at == T0 + 1000);
	assert_int_equal(v.attempts, 0);
	assert_true(v.period == 1000);
	/* Runs that were missed are skipped. */
	h->now = T0 + 1000;
	assert_int_equal(take(h, "cron", 1, &id, &lease), 0);
	h->now = T0 + 3500;
	assert_int_equal(ack(h, a, lease), 0);
	assert_true(view(h, a).run_at == T0 + 4000);
	assert_true(tstats(h, "cron").ctr.ack == 2);
	assert_true(tstats(h, "cron").ctr.del == 0);
}

/* Replace of a ready task changes its content at once, same id. */
static void
test_replace_of_a_ready_task(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_task_view v;
	uint64_t a;

	req_for(&req, "t", "old");
	req.key = "k";
	req.key_len = 1;
	a = put_req(h, &req);
	req_for(&req, "t", "new!");
	req.key = "k";
	req.key_len = 1;
	req.replace = true;
	req.pri = 3;
	req.delay_ms = 50;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.id == a && !res.created && res.replaced);
	v = view(h, a);
	assert_payload(&v, "new!");
	assert_int_equal(v.pri, 3);
	assert_int_equal(v.state, QUEUE_DELAYED);
	assert_true(v.created_at == T0);
	assert_int_equal(v.key_len, 1);
	assert_true(tstats(h, "t").ctr.replace == 1);
	assert_true(tstats(h, "t").ctr.put == 1);
	/* A buried task is replaced too, and waits again. */
	assert_int_equal(park(h, a), 0);
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_int_equal(view(h, a).state, QUEUE_DELAYED);
}

/* Replace of a taken task waits for its lease to end: the holder still
 * sees the old content; its ack re-queues the task with the new one. */
static void
test_replace_of_a_taken_task_waits_for_the_ack(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_task_view v;
	uint64_t a, id, lease;

	req_for(&req, "t", "v1");
	req.key = "k";
	req.key_len = 1;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	req_for(&req, "t", "v2");
	req.key = "k";
	req.key_len = 1;
	req.replace = true;
	req.pri = 9;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.replaced && res.id == a);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_TAKEN);
	assert_true(v.replace_pending);
	assert_payload(&v, "v1");
	/* The view shows what is pending. */
	assert_int_equal(v.repl.payload_len, 2);
	assert_memory_equal(v.repl.payload, "v2", 2);
	assert_int_equal(v.repl.pri, 9);
	assert_int_equal(v.repl.ttr, QUEUE_DEFAULT_TTR_MS);
	/* A second replace wins over the first. */
	req.payload = "v3";
	assert_int_equal(try_put(h, &req, &res), 0);
	v = view(h, a);
	assert_memory_equal(v.repl.payload, "v3", 2);
	h->now += 10;
	assert_int_equal(ack(h, a, lease), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_READY);
	assert_payload(&v, "v3");
	assert_int_equal(v.pri, 9);
	assert_int_equal(v.attempts, 0);
	assert_false(v.replace_pending);
	assert_int_equal(ack(h, a, lease), SLUICE_ESTATE);
}

/* The replacement also takes effect when the lease ends otherwise: by ttr
 * expiry, release, fail or bury. */
static void
test_replace_of_a_taken_task_applies_when_the_lease_ends(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	uint64_t a, id, lease;

	for (int way = 0; way < 4; way++) {
		char key[8];

		snprintf(key, sizeof(key), "k%d", way);
		req_for(&req, "t", "old");
		req.key = key;
		req.key_len = strlen(key);
		req.ttr_ms = 100;
		req.max_attempts = 1;
		a = put_req(h, &req);
		assert_int_equal(take(h, "t", 1, &id, &lease), 0);
		assert_true(id == a);
		req.payload = "new";
		req.replace = true;
		assert_int_equal(try_put(h, &req, &res), 0);
		if (way == 0) {
			h->now += 100;
			assert_int_equal(expire(h), 1);
		} else if (way == 1) {
			assert_int_equal(release(h, a, lease, 0, false, 0), 0);
		} else if (way == 2) {
			assert_int_equal(fail_task(h, a, lease, "e"), 0);
		} else {
			assert_int_equal(bury(h, a, lease), 0);
		}
		/* Not buried despite max_attempts 1: new content, new start. */
		assert_int_equal(view(h, a).state, QUEUE_READY);
		assert_int_equal(view(h, a).payload_len, 3);
		assert_memory_equal(view(h, a).payload, "new", 3);
		assert_int_equal(view(h, a).attempts, 0);
		assert_int_equal(del_id(h, a), 0);
	}
}

/* Replace with no live task is an ordinary put, even inside the dedup
 * window; replace needs a key; in another tube the key is another's. */
static void
test_replace_edge_cases(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	struct queue_put_res res;
	uint64_t a, id, lease;

	req_for(&req, "t", "a");
	req.key = "k";
	req.key_len = 1;
	req.replace = true;
	a = put_req(h, &req);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(ack(h, a, lease), 0); /* the key's window begins */
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created && res.id != a);
	id = res.id;
	req.tube = "other";
	req.tube_len = 5;
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created && !res.replaced && res.id != id);
	req.key_len = 0;
	assert_int_equal(try_put(h, &req, &res), SLUICE_EINVAL);
}

/* ack --to moves the task, same id, ready in the other tube, attempts 0. */
static void
test_ack_to_tube_moves_the_task(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_task_view v;
	uint64_t a, id, lease;

	a = put(h, "stage1", "data");
	assert_int_equal(take(h, "stage1", 1, &id, &lease), 0);
	assert_int_equal(ack_to(h, a, lease, "bad name!"), SLUICE_ETUBE);
	h->now += 20;
	assert_int_equal(ack_to(h, a, lease, "stage2"), 0);
	v = view(h, a);
	assert_int_equal(v.state, QUEUE_READY);
	assert_int_equal(v.tube_len, 6);
	assert_memory_equal(v.tube, "stage2", 6);
	assert_int_equal(v.attempts, 0);
	assert_true(v.run_at == h->now);
	assert_counts(h, "stage1", 0, 0, 0, 0);
	assert_counts(h, "stage2", 1, 0, 0, 0);
	assert_true(tstats(h, "stage1").ctr.ack == 1);
	assert_int_equal(take(h, "stage2", 1, &id, &lease), 0);
	assert_true(id == a);
	assert_int_equal(ack(h, a, lease), 0);
}

/* ---- delete, flush, pause -------------------------------------------------
 */

/* Delete works in every state; a deleted taken task's lease is gone. */
static void
test_delete_in_each_state(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_put_req req;
	uint64_t r, d, t, b, id, lease;

	r = put(h, "t", "r");
	req_for(&req, "t", "d");
	req.delay_ms = 1000;
	d = put_req(h, &req);
	t = put(h, "t", "t");
	b = put(h, "t", "b");
	assert_int_equal(park(h, b), 0);
	assert_int_equal(del_id(h, r), 0);
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == t);
	assert_int_equal(del_id(h, d), 0);
	assert_int_equal(del_id(h, t), 0);
	assert_int_equal(del_id(h, b), 0);
	assert_int_equal(ack(h, t, lease), SLUICE_ENOTFOUND);
	assert_int_equal(del_id(h, t), SLUICE_ENOTFOUND);
	assert_counts(h, "t", 0, 0, 0, 0);
	assert_true(tstats(h, "t").ctr.del == 4);
	assert_true(queue_next_wake(h->q) == INT64_MAX);
	{
		struct queue_delete_req dr = { 0, NULL, 0 };
		struct qrec rec;

		assert_int_equal(queue_decide_delete(h->q, h->now, &dr, &rec),
		    SLUICE_EINVAL);
	}
}

/* Flush cancels every task of one tube, in every state. */
static void
test_flush_cancels_a_whole_tube(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_flush_req fr = { "t", 1 };
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	uint64_t other, id;

	for (int i = 0; i < 5; i++)
		put(h, "t", "x");
	req_for(&req, "t", "keyed");
	req.key = "k";
	req.key_len = 1;
	req.delay_ms = 10;
	put_req(h, &req);
	other = put(h, "u", "y");
	assert_int_equal(take(h, "t", 1, &id, NULL), 0);
	assert_int_equal(park(h, id + 1), 0);
	assert_int_equal(
	    run(h, queue_decide_flush(h->q, h->now, &fr, &rec), &rec), 0);
	assert_counts(h, "t", 0, 0, 0, 0);
	assert_true(tstats(h, "t").ctr.del == 6);
	assert_int_equal(view(h, other).state, QUEUE_READY);
	/* cancelled, not done: the key is free at once */
	assert_int_equal(try_put(h, &req, &res), 0);
	assert_true(res.created);
	assert_int_equal(
	    run(h, queue_decide_flush(h->q, h->now, &fr, &rec), &rec), 0);
	/* Flushing an empty or unknown tube logs nothing. */
	assert_int_equal(queue_decide_flush(h->q, h->now, &fr, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	fr.tube = "nosuch";
	fr.tube_len = 6;
	assert_int_equal(queue_decide_flush(h->q, h->now, &fr, &rec), 0);
	assert_int_equal(rec.type, QREC_NONE);
	fr.tube = "";
	fr.tube_len = 0;
	assert_int_equal(
	    queue_decide_flush(h->q, h->now, &fr, &rec), SLUICE_ETUBE);
}

/* A paused tube hands out nothing until the pause ends or is lifted;
 * takes over several tubes skip it. */
static void
test_pause_and_unpause(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str both[2] = { { "p", 1 }, { "q", 1 } };
	uint64_t a, b, id;

	a = put_pri(h, "p", "a", 0);
	b = put_pri(h, "q", "b", 100);
	assert_int_equal(pause_tube(h, "p", h->now + 1000), 0);
	assert_true(tstats(h, "p").paused_until == h->now + 1000);
	assert_true(queue_next_wake(h->q) == h->now + 1000);
	assert_int_equal(take(h, "p", 1, &id, NULL), SLUICE_EPAUSED);
	assert_int_equal(take_from(h, both, 2, 1, false, &id, NULL), 0);
	assert_true(id == b);
	h->now += 1000;
	assert_true(tstats(h, "p").paused_until == 0);
	assert_int_equal(take(h, "p", 1, &id, NULL), 0);
	assert_true(id == a);
	/* Pause, then lift it early; lifting twice logs nothing. */
	put(h, "p", "c");
	assert_int_equal(pause_tube(h, "p", h->now + 5000), 0);
	assert_int_equal(take(h, "p", 1, &id, NULL), SLUICE_EPAUSED);
	assert_int_equal(pause_tube(h, "p", 0), 0);
	assert_int_equal(take(h, "p", 1, &id, NULL), 0);
	{
		struct queue_pause_req pr = { "p", 1, 0 };
		struct qrec rec;

		assert_int_equal(
		    queue_decide_pause(h->q, h->now, &pr, &rec), 0);
		assert_int_equal(rec.type, QREC_NONE);
		pr.until = -1;
		assert_int_equal(
		    queue_decide_pause(h->q, h->now, &pr, &rec), SLUICE_EINVAL);
	}
	/* A tube the queue never had is not made by a pause (nor lifted),
	 * unless the caller asks for it (the beanstalk face, whose watched
	 * tubes exist before their first task). */
	assert_int_equal(pause_tube(h, "fresh", h->now + 10), SLUICE_ENOTFOUND);
	assert_int_equal(pause_tube(h, "fresh", 0), SLUICE_ENOTFOUND);
	assert_int_equal(queue_tube_count(h->q), 2);
	{
		struct queue_pause_req pr = { "fresh", 5, h->now + 10, true };
		struct qrec rec;

		assert_int_equal(
		    run(h, queue_decide_pause(h->q, h->now, &pr, &rec), &rec),
		    0);
	}
	assert_int_equal(queue_tube_count(h->q), 3);
	assert_true(tstats(h, "fresh").paused_until == h->now + 10);
}

/* A take over several tubes picks the best priority across them, then the
 * smallest id; tubes that do not exist are skipped. */
static void
test_take_over_several_tubes(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str ts[3] = { { "a", 1 }, { "b", 1 }, { "none", 4 } };
	uint64_t a1, b1, a2, b2, id;

	a1 = put_pri(h, "a", "a1", 5);
	b1 = put_pri(h, "b", "b1", 5);
	a2 = put_pri(h, "a", "a2", 7);
	b2 = put_pri(h, "b", "b2", 1);
	assert_int_equal(take_from(h, ts, 3, 1, false, &id, NULL), 0);
	assert_true(id == b2);
	assert_int_equal(take_from(h, ts, 3, 1, false, &id, NULL), 0);
	assert_true(id == a1);
	assert_int_equal(take_from(h, ts, 3, 1, false, &id, NULL), 0);
	assert_true(id == b1);
	assert_int_equal(take_from(h, ts, 3, 1, false, &id, NULL), 0);
	assert_true(id == a2);
	assert_int_equal(
	    take_from(h, ts, 3, 1, false, &id, NULL), SLUICE_ETIMEDOUT);
	assert_int_equal(
	    take_from(h, ts, 0, 1, false, &id, NULL), SLUICE_EINVAL);
}

/* A strict take tries the tubes in the order given: the first (not
 * paused) with a ready task gives its best, however urgent the others'. */
static void
test_strict_take_follows_the_order_given(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str ts[3] = { { "none", 4 }, { "a", 1 }, { "b", 1 } };
	struct queue_take_req req = { ts, 3, 1, false, true };
	struct qrec rec;
	uint64_t a1, a2, b1;

	a1 = put_pri(h, "a", "a1", 9);
	a2 = put_pri(h, "a", "a2", 5);
	b1 = put_pri(h, "b", "b1", 0);
	assert_int_equal(
	    run(h, queue_decide_take(h->q, h->now, &req, &rec), &rec), 0);
	assert_true(rec.u.take.id == a2);
	/* a paused tube is passed over */
	assert_int_equal(pause_tube(h, "a", h->now + 1000), 0);
	assert_int_equal(
	    run(h, queue_decide_take(h->q, h->now, &req, &rec), &rec), 0);
	assert_true(rec.u.take.id == b1);
	assert_int_equal(
	    queue_decide_take(h->q, h->now, &req, &rec), SLUICE_EPAUSED);
	assert_int_equal(pause_tube(h, "a", 0), 0);
	assert_int_equal(
	    run(h, queue_decide_take(h->q, h->now, &req, &rec), &rec), 0);
	assert_true(rec.u.take.id == a1);
	assert_int_equal(
	    queue_decide_take(h->q, h->now, &req, &rec), SLUICE_ETIMEDOUT);
}

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

/* ---- snapshots
 * ------------------------------------------------------------------ */

/* A queue with tasks in every state, keys, a dedup entry, a pending
 * replacement and a pause. */
static void
build_rich_state(struct tq *h)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_str s = { "t", 1 };
	uint64_t id, lease;

	for (int i = 0; i < 20; i++) {
		char key[16];

		req_for(&req, i % 3 ? "t" : "u", "payload");
		snprintf(key, sizeof(key), "key-%d", i);
		req.key = i % 2 ? key : NULL;
		req.key_len = i % 2 ? strlen(key) : 0;
		req.delay_ms = i % 4 == 0 ? 5000 : 0;
		req.period_ms = i == 5 ? 777 : 0;
		req.max_attempts = (uint32_t)i % 3;
		req.pri = (uint32_t)i % 5;
		put_req(h, &req);
		h->now += 3;
	}
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(fail_task(h, id, lease, "bad"), 0);
	assert_int_equal(take(h, "t", 2, &id, &lease), 0);
	assert_int_equal(bury(h, id, lease), 0);
	assert_int_equal(take_from(h, &s, 1, 3, true, &id, &lease), 0);
	assert_int_equal(take(h, "t", 4, &id, &lease), 0);
	if (view(h, id).key_len > 0) {
		req_for(&req, "t", "replacement");
		req.key = view(h, id).key;
		req.key_len = view(h, id).key_len;
		req.replace = true;
		assert_int_equal(try_put(h, &req, &res), 0);
		assert_true(res.replaced);
	}
	assert_int_equal(del_key_in(h, "t", "key-3"), SLUICE_ENOTFOUND);
	assert_int_equal(del_key_in(h, "u", "key-3"), 0);
	/* a completed keyed task: its key is kept for the dedup window */
	req_for(&req, "done", "did it");
	req.key = "done-key";
	req.key_len = 8;
	put_req(h, &req);
	assert_int_equal(take(h, "done", 5, &id, &lease), 0);
	assert_int_equal(ack(h, id, lease), 0);
	assert_int_equal(pause_tube(h, "u", h->now + 100000), 0);
}

/* Loading a snapshot and applying the records after it gives the state
 * that applying everything gives. */
static void
test_snapshot_then_tail_equals_full_replay(void **state)
{
	struct tq *h = tq_of(state);
	struct queue *copy, *full;
	struct buf snap;
	size_t cut;
	uint64_t id, lease;

	build_rich_state(h);
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	cut = h->nlog;
	/* More records after the snapshot. */
	h->now += 10000;
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(ack(h, id, lease), 0);
	assert_int_equal(expire(h), 0);
	assert_int_equal(restart(h), 1); /* session 4's; 3's is detached */
	put(h, "v", "late");

	copy = queue_new(NULL);
	assert_int_equal(tq_snap_load(copy, &snap), 0);
	assert_int_equal(queue_check(copy, NULL), 0);
	assert_true(queue_lsn(copy) == h->log[cut - 1].lsn);
	assert_int_equal(tq_replay(h, copy, cut, h->nlog), 0);
	assert_int_equal(queue_check(copy, NULL), 0);
	full = queue_new(NULL);
	assert_int_equal(tq_replay(h, full, 0, h->nlog), 0);
	assert_true(tq_same(h->q, full, h->now));
	assert_true(tq_same(h->q, copy, h->now));
	queue_free(copy);
	queue_free(full);
	buf_fini(&snap);
}

/* Applies a decided record with the 1st, 2nd, ... allocation failing in
 * turn: each failure must be SLUICE_ENOMEM and leave the dump as it was,
 * until the apply gets all it needs. Returns how many failures. */
static int
apply_under_faults(struct tq *h, int rc, const struct qrec *decided)
{
	struct buf before, after, body;
	struct qrec rec;
	int failures = 0;

	assert_int_equal(rc, 0);
	buf_init(&before);
	buf_init(&after);
	buf_init(&body);
	assert_int_equal(qrec_encode(decided, &body), 0);
	assert_int_equal(
	    qrec_decode(decided->type, body.data, body.len, &rec), 0);
	assert_int_equal(queue_dump(h->q, &before), 0);
	for (unsigned long n = 1; n < 100; n++) {
		allocs = 0;
		fail_at = n;
		rc = queue_apply(h->q, h->lsn + 1, h->now, &rec);
		fail_at = 0;
		if (rc == 0)
			break;
		assert_int_equal(rc, SLUICE_ENOMEM);
		failures++;
		buf_reset(&after);
		assert_int_equal(queue_dump(h->q, &after), 0);
		assert_int_equal(before.len, after.len);
		assert_memory_equal(before.data, after.data, before.len);
		tq_check(h);
	}
	assert_int_equal(rc, 0);
	h->lsn++;
	tq_check(h);
	buf_fini(&before);
	buf_fini(&after);
	buf_fini(&body);
	return failures;
}

/* Out of memory in the middle of an apply changes nothing: every record
 * type that allocates, with each of its allocations failing in turn. */
static void
test_apply_out_of_memory_changes_nothing(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str s = { "t", 1 };
	struct queue_take_req tr = { &s, 1, 8, false };
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_ack_req ar;
	struct queue_fail_req fr;
	struct queue_flush_req flr = { "u", 1 };
	struct queue_pause_req pr = { "new-tube", 8, T0 + 100, true };
	struct queue_task_view v;
	struct qrec rec;
	uint64_t a;
	int failures = 0;

	put(h, "u", "in u");
	req_for(&req, "t", "first");
	req.key = "k";
	req.key_len = 1;
	req.period_ms = 100;
	failures += apply_under_faults(
	    h, queue_decide_put(h->q, h->now, &req, &rec, &res), &rec);
	a = res.id;
	failures += apply_under_faults(
	    h, queue_decide_take(h->q, h->now, &tr, &rec), &rec);
	memset(&fr, 0, sizeof(fr));
	fr.id = a;
	fr.error = "it broke";
	fr.error_len = 8;
	fr.set_delay = true;
	fr.force = true;
	failures += apply_under_faults(
	    h, queue_decide_fail(h->q, h->now, &fr, &rec), &rec);
	failures += apply_under_faults(
	    h, queue_decide_take(h->q, h->now, &tr, &rec), &rec);
	req_for(&req, "t", "second version");
	req.key = "k";
	req.key_len = 1;
	req.replace = true;
	failures += apply_under_faults(
	    h, queue_decide_put(h->q, h->now, &req, &rec, &res), &rec);
	memset(&ar, 0, sizeof(ar));
	ar.id = a;
	ar.force = true;
	failures += apply_under_faults(
	    h, queue_decide_ack(h->q, h->now, &ar, &rec), &rec);
	v = view(h, a);
	assert_payload(&v, "second version");
	failures += apply_under_faults(
	    h, queue_decide_take(h->q, h->now, &tr, &rec), &rec);
	ar.to_tube = "elsewhere";
	ar.to_tube_len = 9;
	failures += apply_under_faults(
	    h, queue_decide_ack(h->q, h->now, &ar, &rec), &rec);
	req.tube = "elsewhere";
	req.tube_len = 9;
	req.payload = "third";
	req.payload_len = 5;
	failures += apply_under_faults(
	    h, queue_decide_put(h->q, h->now, &req, &rec, &res), &rec);
	failures += apply_under_faults(
	    h, queue_decide_pause(h->q, h->now, &pr, &rec), &rec);
	failures += apply_under_faults(
	    h, queue_decide_flush(h->q, h->now, &flr, &rec), &rec);
	v = view(h, a);
	assert_payload(&v, "third");
	fprintf(stderr, "allocations failed: %d\n", failures);
	assert_true(failures > 15);
}

struct fixed {
	uint8_t *p;
	size_t len;
	size_t cap;
	int entries;
	int stop_at; /* return an error from this entry on; 0: never */
};

static int
fixed_emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	struct fixed *f = arg;

	(void)type;
	if (++f->entries == f->stop_at)
		return -5;
	if (alen + blen > f->cap - f->len)
		return SLUICE_ELIMIT;
	memcpy(f->p + f->len, a, alen);
	if (blen > 0)
		memcpy(f->p + f->len + alen, b, blen);
	f->len += alen + blen;
	return 0;
}

/* The end of the var at `off` in d[0..len). */
static size_t
skip_var(const uint8_t *d, size_t len, size_t off)
{
	while (off < len && (d[off] & 0x80))
		off++;
	assert_true(off < len);
	return off + 1;
}

/* The var at `off` (at most 64 bits). */
static uint64_t
var_at(const uint8_t *d, size_t len, size_t off)
{
	uint64_t v = 0;

	for (unsigned shift = 0; off < len; shift += 7, off++) {
		v |= (uint64_t)(d[off] & 0x7f) << shift;
		if (!(d[off] & 0x80))
			break;
	}
	return v;
}

/* A DEDUP entry (str16 key, u64 id, i64 expires, str16 tube) as a
 * snapshot before keys per tube wrote it, without the tube; `empty`:
 * with an empty tube instead, the reservation of every tube such an
 * entry loads to when its task is gone. Returns its new length. */
static size_t
dedup_without_tube(uint8_t *d, size_t len, bool empty)
{
	size_t off = 2 + le_load_u16(d) + 16;

	assert_true(off + 2 + le_load_u16(d + off) == len);
	if (!empty)
		return off;
	le_store_u16(d + off, 0);
	return off + 2;
}

/* Rewrites one snapshot entry (version 3, as qsnap.c lays it out) in
 * place and returns its new length: with `v2`, as version 2 wrote it
 * (META's version, no done count in TUBE, no last take in a waiting or
 * buried TASK); else still version 3 but with every last take 0 (never
 * taken), the state a version 2 snapshot loads to. */
static size_t
entry_before_last_take(uint16_t type, uint8_t *d, size_t len, bool v2)
{
	size_t off = 1, end;
	uint8_t flags;

	if (v2 && type == QSNAP_META)
		le_store_u32(d, 2);
	if (type == QSNAP_DEDUP) /* v2 names no tube: every tube's then */
		return dedup_without_tube(d, len, !v2);
	if (v2 && type == QSNAP_TUBE) {
		assert_true(le_load_u64(d + len - 8) == 0); /* no done task */
		return len - 8;
	}
	if (type != QSNAP_TASK)
		return len;
	flags = d[0];
	assert_true((flags & 0x07) != QUEUE_DONE || !v2);
	if ((flags & 0x07) == QUEUE_TAKEN || (flags & 0x07) == QUEUE_DONE)
		return len;
	for (int i = 0; i < 9; i++) /* id .. updated_at */
		off = skip_var(d, len, off);
	if (flags & 0x20) /* period */
		off = skip_var(d, len, off);
	for (uint8_t f = 0x08; f <= 0x10; f <<= 1) /* key, error */
		if (flags & f)
			off = skip_var(d, len, off) + var_at(d, len, off);
	end = skip_var(d, len, off); /* the last take */
	if (!v2)
		d[off++] = 0;
	memmove(d + off, d + end, len - end);
	return len - (end - off);
}

/* A snapshot of the previous layout (version 2: no last take of waiting
 * tasks) still loads; one of the current layout keeps the last take of
 * a released task. */
static void
test_snapshot_of_version_2_loads_and_3_keeps_the_last_take(void **state)
{
	struct tq *h = tq_of(state);
	struct buf snap, old;
	struct queue *q;
	struct rd r;
	uint64_t a, b, id, lease;

	a = put(h, "t", "p");
	b = put(h, "t", "q");
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == a);
	h->now += 10;
	assert_int_equal(release(h, a, lease, 0, false, 0), 0);
	assert_true(view(h, a).taken_at == T0);
	assert_true(view(h, b).taken_at == 0);
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	q = queue_new(NULL);
	assert_int_equal(tq_snap_load(q, &snap), 0);
	assert_true(tq_same(h->q, q, h->now));
	queue_free(q);

	/* version 2: what its writer gave for the same queue */
	assert_int_equal(del_id(h, a), 0);
	buf_reset(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	buf_init(&old);
	rd_init(&r, snap.data, snap.len);
	while (rd_left(&r) > 0) {
		uint16_t type = rd_u16(&r);
		uint32_t len = rd_u32(&r);
		uint8_t e[1024]; /* the largest: an HOUR entry, 460 bytes */

		assert_false(rd_failed(&r) || len > sizeof(e));
		memcpy(e, rd_bytes(&r, len), len);
		if (type == QSNAP_TASK)
			assert_int_equal(e[len - 3], 0); /* never taken */
		len = (uint32_t)entry_before_last_take(type, e, len, true);
		buf_put_u16(&old, type);
		buf_put_u32(&old, len);
		buf_put(&old, e, len);
	}
	q = queue_new(NULL);
	assert_int_equal(tq_snap_load(q, &old), 0);
	assert_true(tq_same(h->q, q, h->now));
	queue_free(q);
	buf_fini(&old);
	buf_fini(&snap);
}

/* Writing a snapshot allocates nothing (it runs in a forked child) and
 * stops at the first error of its emitter. */
static void
test_snapshot_write_allocates_nothing(void **state)
{
	struct tq *h = tq_of(state);
	struct fixed f = { NULL, 0, 1 << 20, 0, 0 };
	unsigned long before;

	/* The count works: a put allocates. */
	before = allocs;
	build_rich_state(h);
	assert_true(allocs > before);
	f.p = malloc(f.cap);
	assert_non_null(f.p);
	before = allocs;
	assert_int_equal(queue_snapshot_write(h->q, fixed_emit, &f), 0);
	assert_true(allocs == before);
	assert_true(f.entries > 20 && f.len > 0);
	f.len = 0;
	f.entries = 0;
	f.stop_at = 7;
	assert_int_equal(queue_snapshot_write(h->q, fixed_emit, &f), -5);
	assert_int_equal(f.entries, 7);
	free(f.p);
}

struct entries {
	uint16_t type[256];
	struct buf data[256];
	size_t n;
};

static int
keep_entry(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	struct entries *e = arg;

	if (e->n == 256)
		return SLUICE_ELIMIT;
	e->type[e->n] = type;
	buf_init(&e->data[e->n]);
	buf_put(&e->data[e->n], a, alen);
	buf_put(&e->data[e->n], b, blen);
	e->n++;
	return 0;
}

/* Loads entries [0, n) except `skip` (n+1: none) with entry `bad` cut by
 * one byte; returns the first error. */
static int
load_entries(struct entries *e, size_t skip, size_t cut, bool dup)
{
	struct queue *q = queue_new(NULL);
	int rc = 0;

	for (size_t i = 0; i < e->n && rc == 0; i++) {
		size_t len = e->data[i].len;

		if (i == skip)
			continue;
		if (i == cut)
			len--;
		rc = queue_snapshot_load(q, e->type[i], e->data[i].data, len);
		if (rc == 0 && dup && i == skip + 1)
			rc = queue_snapshot_load(
			    q, e->type[i], e->data[i].data, len);
	}
	if (rc == 0 && !queue_snapshot_done(q))
		rc = SLUICE_ECORRUPT;
	queue_free(q);
	return rc;
}

/* A snapshot missing an entry, with an entry cut short, or with one
 * repeated, does not load. */
static void
test_snapshot_load_refuses_broken_snapshots(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	struct qrec rec;

	assert_non_null(e);
	build_rich_state(h);
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	assert_true(e->n > 20);
	assert_int_equal(load_entries(e, SIZE_MAX, SIZE_MAX, false), 0);
	for (size_t i = 0; i < e->n; i++) {
		assert_int_equal(
		    load_entries(e, i, SIZE_MAX, false), SLUICE_ECORRUPT);
		if (e->data[i].len > 0)
			assert_int_equal(load_entries(e, SIZE_MAX, i, false),
			    SLUICE_ECORRUPT);
		if (i + 1 < e->n && e->type[i + 1] != QSNAP_END)
			assert_int_equal(load_entries(e, i, SIZE_MAX, true),
			    SLUICE_ECORRUPT);
	}
	/* Apply is refused while a snapshot is half loaded. */
	{
		struct queue *q = queue_new(NULL);

		assert_int_equal(queue_snapshot_load(q, e->type[0],
		                     e->data[0].data, e->data[0].len),
		    0);
		memset(&rec, 0, sizeof(rec));
		rec.type = QREC_PAUSE;
		rec.u.pause.tube = "t";
		rec.u.pause.tube_len = 1;
		assert_int_equal(queue_apply(q, queue_lsn(q) + 1, T0, &rec),
		    SLUICE_ECORRUPT);
		queue_free(q);
	}
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* A snapshot of version 2 (written before done tasks and the last take:
 * no done count in TUBE entries, no last take in TASK entries, version 2
 * in META) still loads, to the same state but for the last takes. */
static void
test_snapshot_version_2_still_loads(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	struct queue *q = queue_new(NULL), *want = queue_new(NULL);
	int rc = 0;

	assert_non_null(e);
	build_rich_state(h);
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	/* The state version 3 holds without the last takes of waiting and
	 * buried tasks, which version 2 did not keep. */
	for (size_t i = 0; i < e->n && rc == 0; i++) {
		struct buf *d = &e->data[i];

		d->len =
		    entry_before_last_take(e->type[i], d->data, d->len, false);
		rc = queue_snapshot_load(want, e->type[i], d->data, d->len);
	}
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < e->n && rc == 0; i++) {
		struct buf *d = &e->data[i];

		d->len =
		    entry_before_last_take(e->type[i], d->data, d->len, true);
		rc = queue_snapshot_load(q, e->type[i], d->data, d->len);
	}
	assert_int_equal(rc, 0);
	assert_true(queue_snapshot_done(q));
	assert_true(tq_same(want, q, h->now));
	queue_free(q);
	queue_free(want);
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* A snapshot of version 3 (keys were one namespace: DEDUP entries name
 * no tube) still loads with its keys: a live task's key in its tube, a
 * done task's reservation in the done task's tube, and a reservation
 * whose task is gone in every tube until it expires (as when it was made,
 * so a retried put still finds it), after which the key is free in
 * each tube. */
static void
test_snapshot_version_3_keeps_its_keys(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	struct queue *q = queue_new(NULL);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_task_view v;
	struct queue_stats st;
	uint64_t live, gone, id, lease;
	int rc = 0;

	assert_non_null(e);
	req_for(&req, "a", "gone");
	req.key = "k-gone";
	req.key_len = 6;
	gone = put_req(h, &req);
	req_for(&req, "a", "live");
	req.key = "k-live";
	req.key_len = 6;
	live = put_req(h, &req);
	/* gone is acked: its key is reserved for the window, its task gone */
	assert_int_equal(take(h, "a", 1, &id, &lease), 0);
	assert_true(id == gone);
	assert_int_equal(ack(h, gone, lease), 0);
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	for (size_t i = 0; i < e->n && rc == 0; i++) {
		struct buf *d = &e->data[i];

		if (e->type[i] == QSNAP_META)
			le_store_u32(d->data, 3);
		if (e->type[i] == QSNAP_DEDUP)
			d->len = dedup_without_tube(d->data, d->len, false);
		rc = queue_snapshot_load(q, e->type[i], d->data, d->len);
	}
	assert_int_equal(rc, 0);
	assert_true(queue_snapshot_done(q));
	assert_int_equal(queue_stats(q, h->now, &st), 0);
	assert_true(st.keys == 1 && st.dedup == 1);
	/* the live task's key, in its tube only */
	assert_int_equal(queue_peek_key(q, h->now, "a", 1, "k-live", 6, &v), 0);
	assert_true(v.id == live);
	assert_int_equal(queue_peek_key(q, h->now, "b", 1, "k-live", 6, &v),
	    SLUICE_ENOTFOUND);
	req_for(&req, "b", "other");
	req.key = "k-live";
	req.key_len = 6;
	{
		struct qrec rec;

		assert_int_equal(
		    queue_decide_put(q, h->now, &req, &rec, &res), 0);
		assert_true(res.created);
		/* the reservation whose task is gone: every tube's */
		req.key = "k-gone";
		assert_int_equal(
		    queue_decide_put(q, h->now, &req, &rec, &res), 0);
		assert_true(!res.created && res.id == gone);
		req.tube = "a";
		assert_int_equal(
		    queue_decide_put(q, h->now, &req, &rec, &res), 0);
		assert_true(!res.created && res.id == gone);
		/* until it expires */
		assert_int_equal(
		    queue_decide_put(
		        q, h->now + QUEUE_DEFAULT_DEDUP_MS, &req, &rec, &res),
		    0);
		assert_true(res.created);
		assert_true(queue_check(q, NULL) == 0);
	}
	queue_free(q);
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* Loads every entry, with entry `which` replaced by `data`. */
static int
load_with(struct entries *e, size_t which, const uint8_t *data, size_t len)
{
	struct queue *q = queue_new(NULL);
	int rc = 0;

	for (size_t i = 0; i < e->n && rc == 0; i++)
		rc = i == which ? queue_snapshot_load(q, e->type[i], data, len)
		                : queue_snapshot_load(q, e->type[i],
		                      e->data[i].data, e->data[i].len);
	if (rc == 0 && !queue_snapshot_done(q))
		rc = SLUICE_ECORRUPT;
	queue_free(q);
	return rc;
}

/* Entry `which` with `delta` added to the u64 at `off`. */
static int
load_with_count(struct entries *e, size_t which, size_t off, int delta)
{
	uint8_t copy[1024];
	size_t len = e->data[which].len;

	assert_true(len <= sizeof(copy) && off + 8 <= len);
	memcpy(copy, e->data[which].data, len);
	le_store_u64(copy + off, le_load_u64(copy + off) + (uint64_t)delta);
	return load_with(e, which, copy, len);
}

/* A TUBE_SET of `tube` with ttr and a dead letter, through the harness. */
static void
set_tube(struct tq *h, const char *tube, const char *dead)
{
	struct queue_tube_set_req req;
	struct qrec rec;

	memset(&req, 0, sizeof(req));
	req.tube = tube;
	req.tube_len = strlen(tube);
	req.set = QREC_TS_TTR | QREC_TS_DEAD_LETTER;
	req.conf.ttr = 2500;
	req.conf.dead_letter = dead;
	req.conf.dead_letter_len = strlen(dead);
	assert_int_equal(queue_decide_tube_set(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

/* Tube settings in a snapshot: a TUBE_SET entry right after its TUBE
 * loads into the same state; one out of place, twice, empty or naming
 * the tube itself as its dead letter does not. A snapshot of tubes
 * without settings has no such entry (it reads as before they
 * existed). */
static void
test_snapshot_holds_tube_settings(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	struct queue *q;
	struct buf b;
	size_t at = SIZE_MAX;

	assert_non_null(e);
	put(h, "a", "x");
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	for (size_t i = 0; i < e->n; i++)
		assert_int_not_equal(e->type[i], QSNAP_TUBE_SET);
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	e->n = 0;
	set_tube(h, "a", "a.dead");
	put(h, "b", "y");
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	for (size_t i = 0; i < e->n; i++)
		if (e->type[i] == QSNAP_TUBE_SET)
			at = i;
	assert_true(at != SIZE_MAX && e->type[at - 1] == QSNAP_TUBE);
	assert_int_equal(load_entries(e, SIZE_MAX, SIZE_MAX, false), 0);
	buf_init(&b);
	for (size_t i = 0; i < e->n; i++)
		assert_int_equal(tq_snap_emit(&b, e->type[i], e->data[i].data,
		                     e->data[i].len, NULL, 0),
		    0);
	q = queue_new(NULL);
	assert_int_equal(tq_snap_load(q, &b), 0);
	assert_true(tq_same(h->q, q, h->now));
	queue_free(q);
	buf_fini(&b);
	/* twice in a row; cut short; in the place of the next TUBE */
	assert_int_equal(load_entries(e, SIZE_MAX, at, false), SLUICE_ECORRUPT);
	assert_int_equal(
	    load_entries(e, at - 1, SIZE_MAX, true), SLUICE_ECORRUPT);
	{
		uint8_t copy[512];
		size_t len = e->data[at].len;

		memcpy(copy, e->data[at].data, len);
		copy[0] = 0; /* sets nothing */
		assert_int_equal(load_with(e, at, copy, len), SLUICE_ECORRUPT);
		/* "a.dead" -> "a" with the length cut: the tube itself */
		copy[0] = e->data[at].data[0];
		copy[len - 8] = 1; /* the u16 length, low byte */
		assert_int_equal(
		    load_with(e, at, copy, len - 5), SLUICE_ECORRUPT);
	}
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* TUBE_DELETE: refused for a tube the queue does not have, and for one
 * with tasks without force; with force its tasks go, keys free at once,
 * its counters leave the totals, and the tubes after it move down. */
static void
test_tube_delete_removes_the_tube(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_tube_delete_req req = { "a", 1, false };
	struct queue_put_req pr;
	struct queue_put_res res;
	struct queue_tube_stats ts;
	struct queue_stats st;
	struct qrec rec;

	queue_put_req_init(&pr);
	pr.tube = "a";
	pr.tube_len = 1;
	pr.key = "k";
	pr.key_len = 1;
	put_req(h, &pr);
	put(h, "b", "y");
	set_tube(h, "a", "b");
	assert_int_equal(queue_decide_tube_delete(h->q, h->now, &req, &rec),
	    SLUICE_ENOTEMPTY);
	req.tube = "zz";
	req.tube_len = 2;
	assert_int_equal(queue_decide_tube_delete(h->q, h->now, &req, &rec),
	    SLUICE_ENOTFOUND);
	/* a record that does not fit: no such tube; tasks without force */
	rec.type = QREC_TUBE_DELETE;
	rec.u.tube_delete = (struct qrec_tube_delete) { "zz", 2, true };
	assert_int_equal(queue_apply(h->q, queue_lsn(h->q) + 1, h->now, &rec),
	    SLUICE_ECORRUPT);
	rec.u.tube_delete = (struct qrec_tube_delete) { "a", 1, false };
	assert_int_equal(queue_apply(h->q, queue_lsn(h->q) + 1, h->now, &rec),
	    SLUICE_ECORRUPT);
	req = (struct queue_tube_delete_req) { "a", 1, true };
	assert_int_equal(queue_decide_tube_delete(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(
	    queue_tube_stats(h->q, h->now, "a", 1, &ts), SLUICE_ENOTFOUND);
	assert_int_equal(queue_tube_count(h->q), 1);
	assert_int_equal(queue_tube_stats_at(h->q, h->now, 0, &ts), 0);
	assert_memory_equal(ts.name, "b", 1);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.ctr.put == 1 && st.tasks == 1);
	/* the key is free at once; the new "a" has no settings */
	assert_int_equal(queue_decide_put(h->q, h->now, &pr, &rec, &res), 0);
	assert_true(res.created && rec.u.put.ttr == QUEUE_DEFAULT_TTR_MS);
	assert_int_equal(queue_check(h->q, NULL), 0);
}

/* The counts that META and TUBE give ahead of the tasks (they size the
 * index and heaps) must be the counts the tasks make; a var written in
 * more bytes than it needs is refused. */
static void
test_snapshot_load_checks_counts_and_vars(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	uint8_t copy[1024];
	size_t tube = SIZE_MAX, task = SIZE_MAX, len;

	assert_non_null(e);
	build_rich_state(h);
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	assert_int_equal(e->type[0], QSNAP_META);
	for (size_t i = 0; i < e->n; i++) {
		if (e->type[i] == QSNAP_TUBE && tube == SIZE_MAX)
			tube = i;
		if (e->type[i] == QSNAP_TASK && task == SIZE_MAX)
			task = i;
	}
	assert_true(tube != SIZE_MAX && task != SIZE_MAX);
	assert_int_equal(load_with(e, 0, e->data[0].data, e->data[0].len), 0);
	/* META: tasks at 28, taken at 36, keys at 44. */
	for (size_t off = 28; off <= 44; off += 8) {
		assert_int_equal(
		    load_with_count(e, 0, off, 1), SLUICE_ECORRUPT);
		assert_int_equal(
		    load_with_count(e, 0, off, -1), SLUICE_ECORRUPT);
	}
	/* TUBE: the ready, delayed and buried counts close the entry. */
	len = e->data[tube].len;
	for (size_t off = len - 24; off < len; off += 8)
		assert_int_equal(
		    load_with_count(e, tube, off, 1), SLUICE_ECORRUPT);
	/* TASK: its id (after the flags byte) in one byte more. */
	len = e->data[task].len;
	assert_true(e->data[task].data[1] < 0x80 && len < sizeof(copy));
	copy[0] = e->data[task].data[0];
	copy[1] = (uint8_t)(e->data[task].data[1] | 0x80);
	copy[2] = 0;
	memcpy(copy + 3, e->data[task].data + 2, len - 2);
	assert_int_equal(load_with(e, task, copy, len + 1), SLUICE_ECORRUPT);
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* The record log replays into the same state, with and without ticks in
 * between, and the dump describes it. */
static void
test_replay_gives_the_same_dump(void **state)
{
	struct tq *h = tq_of(state);
	struct queue *r = queue_new(NULL);
	struct buf d;

	build_rich_state(h);
	assert_int_equal(tq_replay(h, r, 0, h->nlog), 0);
	assert_true(tq_same(h->q, r, h->now));
	buf_init(&d);
	assert_int_equal(queue_dump(r, &d), 0);
	buf_put_u8(&d, 0);
	assert_non_null(strstr((char *)d.data, "state=buried"));
	assert_non_null(strstr((char *)d.data, "error=\"bad\""));
	assert_non_null(strstr((char *)d.data, "  replace "));
	assert_non_null(strstr((char *)d.data, "dedup \"done-key\""));
	assert_null(strstr((char *)d.data, "dedup \"key-3\""));
	buf_fini(&d);
	queue_free(r);
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
		T(test_put_then_take_gives_a_lease_and_a_deadline),
		T(test_a_takes_dependency_is_its_tubes_last_placing_record),
		T(test_a_lease_restarts_from_its_answer),
		T(test_take_order_is_priority_then_id),
		T(test_take_order_is_priority_then_due_time_then_id),
		T(test_delayed_task_gets_ready_at_run_at),
		T(test_release_with_delay_and_new_priority),
		T(test_stale_leases),
		T(test_lease_zero_is_refused),
		T(test_force_overrides_the_lease_only),
		T(test_ttr_expiry_releases_and_keeps_attempts),
		T(test_ttr_expiry_buries_at_max_attempts),
		T(test_touch_extends_the_deadline),
		T(test_session_gone_releases_only_its_session_leases),
		T(test_session_gone_buries_at_max_attempts),
		T(test_lost_lease_can_retry_at_once),
		T(test_lost_lease_holder_may_ask_for_ready_at_once),
		T(test_lost_lease_backoff_doubles),
		T(test_untake_puts_the_task_back_in_its_place),
		T(test_fatal_fail_and_bury_with_a_text),
		T(test_restart_releases_session_leases_only),
		T(test_fail_backs_off_then_buries),
		T(test_fail_backoff_is_capped_and_can_be_explicit),
		T(test_bury_and_kick_by_id),
		T(test_bury_of_a_waiting_task_needs_force),
		T(test_kick_n_oldest_buried_first),
		T(test_key_dedup_window),
		T(test_delete_frees_the_key_at_once),
		T(test_ack_of_a_recurring_task_reschedules_it),
		T(test_replace_of_a_ready_task),
		T(test_replace_of_a_taken_task_waits_for_the_ack),
		T(test_replace_of_a_taken_task_applies_when_the_lease_ends),
		T(test_replace_edge_cases),
		T(test_ack_to_tube_moves_the_task),
		T(test_delete_in_each_state),
		T(test_flush_cancels_a_whole_tube),
		T(test_pause_and_unpause),
		T(test_take_over_several_tubes),
		T(test_strict_take_follows_the_order_given),
		T(test_peek_next_in_each_state),
		T(test_list_orders_and_limit),
		T(test_errors_grouped_by_text),
		T(test_stats),
		T(test_every_limit_has_its_error),
		T(test_apply_refuses_records_that_do_not_fit),
		T(test_next_wake_is_the_earliest_event),
		T(test_snapshot_then_tail_equals_full_replay),
		T(test_snapshot_load_refuses_broken_snapshots),
		T(test_snapshot_load_checks_counts_and_vars),
		T(test_snapshot_version_2_still_loads),
		T(test_snapshot_version_3_keeps_its_keys),
		T(test_snapshot_holds_tube_settings),
		T(test_tube_delete_removes_the_tube),
		T(test_snapshot_write_allocates_nothing),
		T(test_snapshot_of_version_2_loads_and_3_keeps_the_last_take),
		T(test_apply_out_of_memory_changes_nothing),
		T(test_replay_gives_the_same_dump),
		T(test_hourly_buckets_and_bounds),
		T(test_hourly_counts_durations_and_window),
	};
#undef T
	return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
