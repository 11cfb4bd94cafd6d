/* t_queue - what the queue tests share: a miniature server around a
 * queue. Each decided record is encoded, decoded back (so every test also
 * runs the codec) and applied at the next LSN with the harness's time, as
 * the server does after its log append; the bodies are kept so a test can
 * replay them into another queue. Included by the queue tests only. */
#ifndef SLUICE_T_QUEUE_H
#define SLUICE_T_QUEUE_H

#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "queue/qrec.h"
#include "queue/queue.h"
#include "queue/tslab.h"
#include "sluice.h"
#include "util/buf.h"

struct tq_entry {
	uint16_t type;
	uint64_t lsn;
	int64_t time;
	size_t off; /* of the body in tq.bodies */
	size_t len;
};

struct tq {
	struct queue *q;
	uint64_t lsn;
	int64_t now;
	struct buf body;   /* scratch */
	struct buf bodies; /* every body applied, back to back */
	struct tq_entry *log;
	size_t nlog;
	size_t caplog;
	bool keep; /* keep the log */
};

static inline void
tq_init(struct tq *h, const struct queue_config *cfg, int64_t now)
{
	memset(h, 0, sizeof(*h));
	h->q = queue_new(cfg);
	h->now = now;
	h->keep = true;
	buf_init(&h->body);
	buf_init(&h->bodies);
}

static inline void
tq_fini(struct tq *h)
{
	queue_free(h->q);
	buf_fini(&h->body);
	buf_fini(&h->bodies);
	free(h->log);
	memset(h, 0, sizeof(*h));
}

/* A harness of its own (allocated) at `now` with the settings cfg (NULL:
 * the defaults), for a cmocka setup; NULL without memory (for it or its
 * queue). */
static inline struct tq *
tq_new_with(const struct queue_config *cfg, int64_t now)
{
	struct tq *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	tq_init(h, cfg, now);
	if (h->q == NULL) {
		tq_fini(h);
		free(h);
		return NULL;
	}
	return h;
}

static inline struct tq *
tq_new(int64_t now)
{
	return tq_new_with(NULL, now);
}

/* Ends a harness from tq_new, for a cmocka teardown: 0, or -1 (the test
 * fails) when the queue's invariants do not hold (queue_check), saying
 * which on stderr. */
static inline int
tq_end(struct tq *h)
{
	const char *why = NULL;
	int rc = 0;

	if (queue_check(h->q, &why) != 0) {
		fprintf(stderr, "queue_check: %s\n", why);
		rc = -1;
	}
	tq_fini(h);
	free(h);
	return rc;
}

/* The bytes the process holds on its heap (malloc's, mapped blocks
 * included) and in the task slabs (tslab.h): a memory test's measure.
 * Malloc's counts mean nothing under the sanitizers. */
static inline size_t
tq_heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd + tslab_bytes();
}

/* A unix time in ms for a test's clock to start at. */
#define TQ_T0 1700000000000LL

/* cmocka's setup and teardown of a test with a harness of its own at
 * TQ_T0, which the test reads with tq_of(state). */
static inline int
tq_setup(void **state)
{
	return (*state = tq_new(TQ_T0)) != NULL ? 0 : -1;
}

static inline int
tq_teardown(void **state)
{
	return tq_end(*state);
}

static inline struct tq *
tq_of(void **state)
{
	return *state;
}

/* Fails the test when the queue's invariants do not hold. */
static inline void
tq_check(struct tq *h)
{
	const char *why = NULL;

	if (queue_check(h->q, &why) != 0)
		fail_msg("queue_check: %s", why);
}

/* Encodes, decodes and applies a decided record; returns apply's result
 * (0 expected) or -1 when the codec failed. QREC_NONE is a no-op. */
static inline int
tq_commit(struct tq *h, const struct qrec *rec)
{
	struct qrec dec;
	int rc;

	if (rec->type == QREC_NONE)
		return 0;
	buf_reset(&h->body);
	if (qrec_encode(rec, &h->body) != 0)
		return -1;
	if (qrec_decode(rec->type, h->body.data, h->body.len, &dec) != 0)
		return -1;
	rc = queue_apply(h->q, h->lsn + 1, h->now, &dec);
	if (rc != 0)
		return rc;
	h->lsn++;
	if (!h->keep)
		return 0;
	if (h->nlog == h->caplog) {
		size_t cap = h->caplog ? 2 * h->caplog : 256;
		struct tq_entry *p = realloc(h->log, cap * sizeof(*p));

		if (p == NULL)
			abort();
		h->log = p;
		h->caplog = cap;
	}
	h->log[h->nlog].type = rec->type;
	h->log[h->nlog].lsn = h->lsn;
	h->log[h->nlog].time = h->now;
	h->log[h->nlog].off = h->bodies.len;
	h->log[h->nlog].len = h->body.len;
	h->nlog++;
	buf_put(&h->bodies, h->body.data, h->body.len);
	if (buf_failed(&h->bodies))
		abort();
	return 0;
}

/* Acks task id, taken, with its lease and `result` (NULL: none): decided
 * and committed, or the test fails. */
static inline void
tq_ack_result(struct tq *h, uint64_t id, const char *result)
{
	struct queue_task_view v;
	struct queue_ack_req req;
	struct qrec rec;

	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	memset(&req, 0, sizeof(req));
	req.id = id;
	req.lease = v.lease;
	req.result = result;
	req.result_len = result ? strlen(result) : 0;
	assert_int_equal(queue_decide_ack(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

static inline void
tq_ack(struct tq *h, uint64_t id)
{
	tq_ack_result(h, id, NULL);
}

/* Fails task id, taken, with its lease, for good (fatal) with `error`:
 * decided and committed, or the test fails. */
static inline void
tq_fail_fatal(struct tq *h, uint64_t id, const char *error)
{
	struct queue_task_view v;
	struct queue_fail_req req;
	struct qrec rec;

	assert_int_equal(queue_peek(h->q, h->now, id, &v), 0);
	memset(&req, 0, sizeof(req));
	req.id = id;
	req.lease = v.lease;
	req.error = error;
	req.error_len = strlen(error);
	req.fatal = true;
	assert_int_equal(queue_decide_fail(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

/* Deletes task id: decided and committed, or the test fails. */
static inline void
tq_delete(struct tq *h, uint64_t id)
{
	struct queue_delete_req req = { .id = id };
	struct qrec rec;

	assert_int_equal(queue_decide_delete(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

/* Applies log entries [from, to) of h to q. Returns 0 or the first error. */
static inline int
tq_replay(const struct tq *h, struct queue *q, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		const struct tq_entry *e = &h->log[i];
		struct qrec rec;
		int rc;

		rc =
		    qrec_decode(e->type, h->bodies.data + e->off, e->len, &rec);
		if (rc != 0)
			return rc;
		if ((rc = queue_apply(q, e->lsn, e->time, &rec)) != 0)
			return rc;
	}
	return 0;
}

/* A snapshot kept in memory: entries back to back as (u16 type, u32 len,
 * bytes). */
static inline int
tq_snap_emit(void *arg, uint16_t type, const void *a, size_t alen,
    const void *b, size_t blen)
{
	struct buf *out = arg;

	buf_put_u16(out, type);
	buf_put_u32(out, (uint32_t)(alen + blen));
	buf_put(out, a, alen);
	buf_put(out, b, blen);
	return buf_failed(out) ? SLUICE_ENOMEM : 0;
}

/* Loads a snapshot made with tq_snap_emit into a fresh queue. An entry
 * that sluice-log could not name is SLUICE_EPROTO: every type the queue
 * writes has a name (queue_snap_entry_name). */
static inline int
tq_snap_load(struct queue *q, const struct buf *snap)
{
	struct rd r;

	rd_init(&r, snap->data, snap->len);
	while (rd_left(&r) > 0) {
		uint16_t type = rd_u16(&r);
		uint32_t len = rd_u32(&r);
		const uint8_t *p = rd_bytes(&r, len);
		int rc;

		if (rd_failed(&r))
			return SLUICE_ECORRUPT;
		if (strcmp(queue_snap_entry_name(type), "unknown") == 0)
			return SLUICE_EPROTO;
		if ((rc = queue_snapshot_load(q, type, p, len)) != 0)
			return rc;
	}
	return queue_snapshot_done(q) ? 0 : SLUICE_ECORRUPT;
}

/* Dumps of two queues after ticking both to `now`; true when equal. */
static inline bool
tq_same(struct queue *a, struct queue *b, int64_t now)
{
	struct buf x, y;
	bool same;

	buf_init(&x);
	buf_init(&y);
	if (queue_tick(a, now) != 0 || queue_tick(b, now) != 0 ||
	    queue_dump(a, &x) != 0 || queue_dump(b, &y) != 0)
		abort();
	same = x.len == y.len && memcmp(x.data, y.data, x.len) == 0;
	buf_fini(&x);
	buf_fini(&y);
	return same;
}

/* A queue with the default settings that applies h's log from the start
 * must be in h's state. */
static inline void
tq_replayed(struct tq *h)
{
	struct queue *q = queue_new(NULL);

	assert_non_null(q);
	assert_int_equal(tq_replay(h, q, 0, h->nlog), 0);
	assert_true(tq_same(h->q, q, h->now));
	queue_free(q);
}

/* Harness r, made here at h's time and LSN (default settings), loaded
 * from h's snapshot, must be in h's state; the test may go on with it,
 * then tq_fini(r). */
static inline void
tq_loaded(struct tq *h, struct tq *r)
{
	struct buf snap;

	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	tq_init(r, NULL, h->now);
	assert_int_equal(tq_snap_load(r->q, &snap), 0);
	buf_fini(&snap);
	assert_true(tq_same(h->q, r->q, h->now));
	r->lsn = h->lsn;
}

#endif
