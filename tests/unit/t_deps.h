/* t_deps - the steps the dependency tests share (test_deps.c,
 * test_deps_order.c): a harness queue per test (t_queue.h) at T0, puts
 * into tube "t" with parents and a rule, and takes, through decide,
 * encode, decode and apply (t_queue.h acks). Static inline: each test
 * uses some. */
#ifndef SLUICE_TESTS_UNIT_T_DEPS_H
#define SLUICE_TESTS_UNIT_T_DEPS_H

#include <string.h>

#include "t_lib.h"
#include "t_queue.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

/* Puts `p` into tube "t" after parents[0..n) with `rule`; decide's
 * result, the id in *id (0 when refused). */
static inline int
put_after(struct tq *h, const char *p, const uint64_t *parents, size_t n,
    int rule, uint64_t *id)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	int rc;

	if (id != NULL)
		*id = 0;
	queue_put_req_init(&req);
	req.tube = "t";
	req.tube_len = 1;
	req.payload = p;
	req.payload_len = strlen(p);
	req.after = parents;
	req.nafter = n;
	req.on_parent_failure = (uint8_t)rule;
	if ((rc = queue_decide_put(h->q, h->now, &req, &rec, &res)) != 0)
		return rc;
	assert_int_equal(rec.type, n > 0 ? QREC_PUT_X : QREC_PUT);
	assert_int_equal(tq_commit(h, &rec), 0);
	if (id != NULL)
		*id = res.id;
	return 0;
}

static inline uint64_t
put0(struct tq *h, const char *p)
{
	uint64_t id;

	assert_int_equal(put_after(h, p, NULL, 0, 0, &id), 0);
	return id;
}

static inline int
state_of(struct tq *h, uint64_t id)
{
	struct queue_task_view v;

	if (queue_peek(h->q, h->now, id, &v) != 0)
		return 0;
	return v.state;
}

/* Takes from "t": the id (0: none). */
static inline uint64_t
take(struct tq *h)
{
	struct queue_str tube = { "t", 1 };
	struct queue_take_req req = { &tube, 1, 1, false, false };
	struct qrec rec;

	if (queue_decide_take(h->q, h->now, &req, &rec) != 0)
		return 0;
	assert_int_equal(tq_commit(h, &rec), 0);
	return rec.u.take.id;
}

#endif
