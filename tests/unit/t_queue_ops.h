/* t_queue_ops - the requests of the queue's tests (test_queue.c,
 * test_queue_ends.c, test_queue_query.c, test_queue_snap.c): each goes
 * the server's way (decide, then the record committed through the
 * t_queue.h harness: encode, decode, apply, and the queue checked) and
 * returns decide's code; with a few reads (a task's view, a tube's stats
 * and counts). Static, marked unused: a test file may leave some unused. */
#ifndef SLUICE_T_QUEUE_OPS_H
#define SLUICE_T_QUEUE_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"

#define T_QO_UNUSED __attribute__((unused))

/* Commits the record when decide succeeded; returns decide's code. */
static T_QO_UNUSED int
run(struct tq *h, int rc, const struct qrec *rec)
{
	if (rc == 0)
		assert_int_equal(tq_commit(h, rec), 0);
	tq_check(h);
	return rc;
}

static T_QO_UNUSED int
try_put(
    struct tq *h, const struct queue_put_req *req, struct queue_put_res *res)
{
	struct qrec rec;

	return run(h, queue_decide_put(h->q, h->now, req, &rec, res), &rec);
}

static T_QO_UNUSED void
req_for(struct queue_put_req *req, const char *tube, const char *payload)
{
	queue_put_req_init(req);
	req->tube = tube;
	req->tube_len = strlen(tube);
	req->payload = payload;
	req->payload_len = strlen(payload);
}

static T_QO_UNUSED uint64_t
put_req(struct tq *h, const struct queue_put_req *req)
{
	struct queue_put_res res;

	assert_int_equal(try_put(h, req, &res), 0);
	assert_true(res.created);
	return res.id;
}

static T_QO_UNUSED uint64_t
put(struct tq *h, const char *tube, const char *payload)
{
	struct queue_put_req req;

	req_for(&req, tube, payload);
	return put_req(h, &req);
}

static T_QO_UNUSED uint64_t
put_pri(struct tq *h, const char *tube, const char *payload, uint32_t pri)
{
	struct queue_put_req req;

	req_for(&req, tube, payload);
	req.pri = pri;
	return put_req(h, &req);
}

static T_QO_UNUSED int
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

static T_QO_UNUSED int
take(struct tq *h, const char *tube, uint64_t session, uint64_t *id,
    uint64_t *lease)
{
	struct queue_str s = { tube, strlen(tube) };

	return take_from(h, &s, 1, session, false, id, lease);
}

static T_QO_UNUSED int
ack(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_ack_req req = { id, lease, NULL, 0 };
	struct qrec rec;

	return run(h, queue_decide_ack(h->q, h->now, &req, &rec), &rec);
}

static T_QO_UNUSED int
ack_to(struct tq *h, uint64_t id, uint64_t lease, const char *tube)
{
	struct queue_ack_req req = { id, lease, tube, strlen(tube) };
	struct qrec rec;

	return run(h, queue_decide_ack(h->q, h->now, &req, &rec), &rec);
}

static T_QO_UNUSED int
release(struct tq *h, uint64_t id, uint64_t lease, int64_t delay, bool set_pri,
    uint32_t pri)
{
	struct queue_release_req req = { id, lease, delay, 0, set_pri, pri };
	struct qrec rec;

	return run(h, queue_decide_release(h->q, h->now, &req, &rec), &rec);
}

static T_QO_UNUSED int
fail_task(struct tq *h, uint64_t id, uint64_t lease, const char *err)
{
	struct queue_fail_req req = { id, lease, err, strlen(err), false, 0 };
	struct qrec rec;

	return run(h, queue_decide_fail(h->q, h->now, &req, &rec), &rec);
}

static T_QO_UNUSED int
touch(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_touch_req req = { id, lease };
	struct qrec rec;

	return run(h, queue_decide_touch(h->q, h->now, &req, &rec), &rec);
}

static T_QO_UNUSED int
bury(struct tq *h, uint64_t id, uint64_t lease)
{
	struct queue_bury_req req = { id, lease };
	struct qrec rec;

	return run(h, queue_decide_bury(h->q, h->now, &req, &rec), &rec);
}

/* An operator's bury: force, no lease. */
static T_QO_UNUSED int
park(struct tq *h, uint64_t id)
{
	struct queue_bury_req req = { id, 0, true };
	struct qrec rec;

	return run(h, queue_decide_bury(h->q, h->now, &req, &rec), &rec);
}

/* ack, release, fail, touch or bury, by name, with force and `lease`. */
static T_QO_UNUSED int
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

static T_QO_UNUSED int
kick_id(struct tq *h, uint64_t id)
{
	struct queue_kick_req req = { id, NULL, 0 };
	struct qrec rec;

	return run(h, queue_decide_kick(h->q, h->now, &req, &rec), &rec);
}

/* Kicks up to n buried tasks of a tube; returns how many. */
static T_QO_UNUSED int
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

static T_QO_UNUSED int
del_id(struct tq *h, uint64_t id)
{
	struct queue_delete_req req = { id, NULL, 0 };
	struct qrec rec;

	return run(h, queue_decide_delete(h->q, h->now, &req, &rec), &rec);
}

static T_QO_UNUSED int
del_key_in(struct tq *h, const char *tube, const char *key)
{
	struct queue_delete_req req = { 0, key, strlen(key), tube,
		strlen(tube) };
	struct qrec rec;

	return run(h, queue_decide_delete(h->q, h->now, &req, &rec), &rec);
}

static T_QO_UNUSED int
pause_tube(struct tq *h, const char *tube, int64_t until)
{
	struct queue_pause_req req = { tube, strlen(tube), until };
	struct qrec rec;

	return run(h, queue_decide_pause(h->q, h->now, &req, &rec), &rec);
}

/* Runs the server's ttr timer: every expired lease. Returns how many. */
static T_QO_UNUSED int
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

static T_QO_UNUSED int
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

static T_QO_UNUSED int
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

static T_QO_UNUSED struct queue_task_view
view(struct tq *h, uint64_t id)
{
	struct queue_task_view v;

	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	return v;
}

static T_QO_UNUSED struct queue_tube_stats
tstats(struct tq *h, const char *tube)
{
	struct queue_tube_stats s;

	assert_int_equal(
	    queue_tube_stats(h->q, h->now, tube, strlen(tube), &s), 0);
	return s;
}

static T_QO_UNUSED void
assert_counts(struct tq *h, const char *tube, uint64_t ready, uint64_t delayed,
    uint64_t taken, uint64_t buried)
{
	struct queue_tube_stats s = tstats(h, tube);

	assert_true(s.ready == ready);
	assert_true(s.delayed == delayed);
	assert_true(s.taken == taken);
	assert_true(s.buried == buried);
}

static T_QO_UNUSED void
assert_payload(const struct queue_task_view *v, const char *payload)
{
	assert_int_equal(v->payload_len, strlen(payload));
	assert_memory_equal(v->payload, payload, v->payload_len);
}

#endif
