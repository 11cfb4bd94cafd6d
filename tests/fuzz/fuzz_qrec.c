/* fuzz_qrec - fuzzes the queue's decoders and apply. The first byte of an
 * input picks what the rest is:
 *   0  one record body: u16 type, then the body. Decoded; a body that
 *      decodes must encode back to the same bytes.
 *   1  records to apply: repeated (u8 type, u16 len, u8 dt, body). Each
 *      body that decodes is applied to one queue at the next lsn, time
 *      advancing by dt * 97 ms; apply may refuse it but must keep every
 *      invariant (queue_check). At the end a snapshot of the queue must
 *      load into a fresh one with the same dump.
 *   2  snapshot entries: repeated (u8 type, u16 len, body), loaded in
 *      order until one is refused; a snapshot that loads completely must
 *      pass queue_check. A META counting more than FUZZ_TASKS_MAX tasks
 *      ends the input (the id index is sized for the count up front).
 *   3  operations: each byte picks a request with parameters from the
 *      bytes after it (acked tasks are kept as done, 2 s, 5 at most). What
 * decide accepts must encode, decode and apply without error; replaying those
 * records into a fresh queue must give the same dump. A broken invariant
 * aborts, which is what the fuzzer reports. The corpus in
 * tests/fuzz/corpus/qrec comes from `test_qrec --write-corpus DIR`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/qrec.h"
#include "queue/queue.h"
#include "sluice.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { T0 = 1000000, FUZZ_TASKS_MAX = 1 << 16 };

static void
must(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_qrec: %s\n", what);
		abort();
	}
}

static void
checked(const struct queue *q)
{
	const char *why = NULL;

	if (queue_check(q, &why) != 0) {
		fprintf(stderr, "fuzz_qrec: queue_check: %s\n", why);
		abort();
	}
}

static int
emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	struct buf *out = arg;

	buf_put_u16(out, type);
	buf_put_u32(out, (uint32_t)(alen + blen));
	buf_put(out, a, alen);
	buf_put(out, b, blen);
	return 0;
}

/* A snapshot of q loads into a fresh queue with the same dump. */
static void
snapshot_round_trip(struct queue *q, int64_t now)
{
	struct queue *copy = queue_new(NULL);
	struct buf snap, x, y;
	struct rd r;

	buf_init(&snap);
	buf_init(&x);
	buf_init(&y);
	must(queue_snapshot_write(q, emit, &snap) == 0, "snapshot write");
	rd_init(&r, snap.data, snap.len);
	while (rd_left(&r) > 0) {
		uint16_t type = rd_u16(&r);
		uint32_t len = rd_u32(&r);
		const uint8_t *p = rd_bytes(&r, len);

		must(queue_snapshot_load(copy, type, p, len) == 0,
		    "snapshot load");
	}
	must(queue_snapshot_done(copy), "snapshot complete");
	checked(copy);
	must(queue_tick(q, now) == 0 && queue_tick(copy, now) == 0, "tick");
	must(queue_dump(q, &x) == 0 && queue_dump(copy, &y) == 0, "dump");
	must(x.len == y.len && memcmp(x.data, y.data, x.len) == 0,
	    "snapshot gives the same dump");
	buf_fini(&snap);
	buf_fini(&x);
	buf_fini(&y);
	queue_free(copy);
}

static void
one_record(struct rd *in)
{
	uint16_t type = rd_u16(in);
	size_t len = rd_left(in);
	const uint8_t *body = rd_bytes(in, len);
	struct qrec rec;
	struct buf out;

	if (rd_failed(in) || qrec_decode(type, body, len, &rec) != 0)
		return;
	buf_init(&out);
	must(qrec_encode(&rec, &out) == 0, "encode what decoded");
	must(out.len == len && (len == 0 || memcmp(out.data, body, len) == 0),
	    "encode(decode(b)) == b");
	buf_reset(&out);
	must(qrec_format(&rec, &out) == 0, "format");
	buf_fini(&out);
}

static void
records(struct rd *in)
{
	struct queue *q = queue_new(NULL);
	uint64_t lsn = 0;
	int64_t time = T0;

	while (rd_left(in) > 0) {
		uint8_t type = rd_u8(in);
		uint16_t len = rd_u16(in);
		uint8_t dt = rd_u8(in);
		const uint8_t *body = rd_bytes(in, len);
		struct qrec rec;
		int rc;

		if (rd_failed(in))
			break;
		time += (int64_t)dt * 97;
		if (qrec_decode(type, body, len, &rec) != 0)
			continue;
		rc = queue_apply(q, ++lsn, time, &rec);
		must(rc == 0 || rc == SLUICE_ECORRUPT, "apply result");
		checked(q);
	}
	snapshot_round_trip(q, time);
	queue_free(q);
}

static void
snapshot(struct rd *in)
{
	struct queue *q = queue_new(NULL);

	while (rd_left(in) > 0) {
		uint8_t type = rd_u8(in);
		uint16_t len = rd_u16(in);
		const uint8_t *body = rd_bytes(in, len);

		if (rd_failed(in))
			break;
		/* META's task count sizes the id index up front: a made-up
		 * count would make the fuzzer report the allocation. */
		if (type == QSNAP_META && len >= 36 &&
		    le_load_u64(body + 28) > FUZZ_TASKS_MAX)
			break;
		if (queue_snapshot_load(q, type, body, len))
			break;
	}
	if (queue_snapshot_done(q)) {
		checked(q);
		snapshot_round_trip(q, T0);
	}
	queue_free(q);
}

/* ---- Operations -------------------------------------------------------- */

struct ops {
	struct rd *in;
	struct queue *q;
	int64_t now;
	uint64_t lsn;
	struct buf body;
	struct buf log; /* (u16 type, u64 lsn, i64 time, u32 len, body)... */
};

static const char *const tubes[] = { "a", "b", "c" };
static const char *const keys[] = { "k0", "k1", "k2", "k3" };
static const char *const errors[] = { "", "timeout", "oom" };

static void
commit(struct ops *o, int rc, const struct qrec *rec)
{
	struct qrec dec;

	if (rc != 0 || rec->type == QREC_NONE)
		return; /* refused, or nothing to log */
	buf_reset(&o->body);
	must(qrec_encode(rec, &o->body) == 0, "encode a decided record");
	must(qrec_decode(rec->type, o->body.data, o->body.len, &dec) == 0,
	    "decode an encoded record");
	must(queue_apply(o->q, o->lsn + 1, o->now, &dec) == 0,
	    "apply a decided record");
	o->lsn++;
	buf_put_u16(&o->log, rec->type);
	buf_put_u64(&o->log, o->lsn);
	buf_put_i64(&o->log, o->now);
	buf_put_blob(&o->log, o->body.data, o->body.len);
}

/* An id near the ones in use, and a lease that is right, 0 or wrong. */
static void
pick(struct ops *o, uint64_t *id, uint64_t *lease)
{
	struct queue_task_view v;
	uint8_t b = rd_u8(o->in);

	*id = b % (queue_next_id(o->q) + 1);
	*lease = 0;
	if (queue_peek(o->q, o->now, *id, &v) == 0) {
		if (b & 0x40)
			*lease = v.lease;
		else if (b & 0x80)
			*lease = v.lease + 1;
	}
}

static void
one_op(struct ops *o)
{
	uint8_t op = rd_u8(o->in), b = rd_u8(o->in);
	const char *tube = tubes[b % 3];
	struct qrec rec;
	uint64_t lease;
	int rc = -1; /* -1: nothing decided */

	memset(&rec, 0, sizeof(rec));
	switch (op % 17) {
	case 0: {
		struct queue_put_req r;
		struct queue_put_res res;

		queue_put_req_init(&r);
		r.tube = tube;
		r.tube_len = 1;
		r.payload = "payload";
		r.payload_len = b % 8;
		r.pri = b % 4;
		r.delay_ms = b & 8 ? (int64_t)b * 10 : 0;
		r.ttr_ms = 50 + b;
		r.max_attempts = b % 3;
		r.period_ms = b % 7 == 0 ? 300 : 0;
		if (b % 5 != 0) {
			r.key = keys[(b >> 2) % 4];
			r.key_len = 2;
			r.replace = b & 1;
		}
		rc = queue_decide_put(o->q, o->now, &r, &rec, &res);
		break;
	}
	case 1: {
		struct queue_str ts[3] = { { "a", 1 }, { "b", 1 }, { "c", 1 } };
		size_t first = b % 3, n = 1 + (b >> 2) % 3;
		struct queue_take_req r = { ts + first,
			n < 3 - first ? n : 3 - first, (uint64_t)(b >> 4) % 3,
			(b >> 6) & 1 };

		rc = queue_decide_take(o->q, o->now, &r, &rec);
		break;
	}
	case 2:
	case 3: {
		struct queue_ack_req r = { 0, 0, NULL, 0 };

		pick(o, &r.id, &r.lease);
		r.force = (b & 0x30) == 0x30;
		if (op % 17 == 3) {
			r.to_tube = tube;
			r.to_tube_len = 1;
		} else if (b & 8) { /* kept as done, with a result */
			r.result = errors[1 + b % 2];
			r.result_len = strlen(r.result);
		}
		rc = queue_decide_ack(o->q, o->now, &r, &rec);
		break;
	}
	case 4: {
		struct queue_release_req r;

		memset(&r, 0, sizeof(r));
		pick(o, &r.id, &r.lease);
		r.force = (b & 0x30) == 0x30;
		r.delay_ms = b & 1 ? b * 3 : 0;
		r.set_pri = b & 2;
		r.pri = b;
		rc = queue_decide_release(o->q, o->now, &r, &rec);
		break;
	}
	case 5: {
		struct queue_fail_req r;

		memset(&r, 0, sizeof(r));
		pick(o, &r.id, &r.lease);
		r.force = (b & 0x30) == 0x30;
		r.error = errors[b % 3];
		r.error_len = strlen(r.error);
		r.set_delay = b & 4;
		r.delay_ms = b;
		r.fatal = (b & 0xc0) == 0xc0;
		rc = queue_decide_fail(o->q, o->now, &r, &rec);
		break;
	}
	case 6: {
		struct queue_touch_req r = { 0, 0, (b & 0x30) == 0x30 };

		pick(o, &r.id, &r.lease);
		if (b & 0x40) /* a take whose reply went nowhere */
			rc = queue_decide_untake(
			    o->q, o->now, r.id, r.lease, &rec);
		else
			rc = queue_decide_touch(o->q, o->now, &r, &rec);
		break;
	}
	case 7: {
		struct queue_bury_req r = { 0, 0, (b & 0x30) == 0x30 };

		pick(o, &r.id, &r.lease);
		if (b & 1) {
			r.error = errors[b % 3];
			r.error_len = strlen(r.error);
		}
		rc = queue_decide_bury(o->q, o->now, &r, &rec);
		break;
	}
	case 8: {
		struct queue_kick_req r = { 0, tube, 1 };

		if (b & 1)
			pick(o, &r.id, &lease);
		rc = queue_decide_kick(o->q, o->now, &r, &rec);
		break;
	}
	case 9: {
		struct queue_delete_req r = { 0, keys[b % 4], 2 };

		if (b & 4)
			pick(o, &r.id, &lease);
		rc = queue_decide_delete(o->q, o->now, &r, &rec);
		break;
	}
	case 10: {
		struct queue_flush_req r = { tube, 1 };

		if (b % 8 == 0)
			rc = queue_decide_flush(o->q, o->now, &r, &rec);
		break;
	}
	case 11: {
		struct queue_pause_req r = { tube, 1, o->now + (b & 1) * b * 7,
			(b & 2) != 0 };

		rc = queue_decide_pause(o->q, o->now, &r, &rec);
		break;
	}
	case 14: {
		static const int states[] = { 1, 2, 4, 5 };
		struct queue_delete_where_req r = { tube, 1, states[b % 4],
			(int64_t)(b >> 2) * 50 };
		uint64_t n;

		rc = queue_decide_delete_where(o->q, o->now, &r, &rec, &n);
		break;
	}
	case 15: {
		struct queue_tube_set_req r;

		memset(&r, 0, sizeof(r));
		r.tube = tube;
		r.tube_len = 1;
		r.set = (uint8_t)(b >> 2);
		r.unset = (uint8_t)(b & 0x30 ? (~b >> 2) & QREC_TS_ALL : 0);
		r.conf.ttr = 20 + b;
		r.conf.max_attempts = b % 3;
		r.conf.backoff_base = b % 5;
		r.conf.backoff_cap = b;
		r.conf.keep_done = b * 100;
		r.conf.lost_lease_immediate = b & 1;
		r.conf.dead_letter = tubes[(b + 1) % 3];
		r.conf.dead_letter_len = 1;
		rc = queue_decide_tube_set(o->q, o->now, &r, &rec);
		break;
	}
	case 16: {
		struct queue_tube_delete_req r = { tube, 1, b & 1 };

		rc = queue_decide_tube_delete(o->q, o->now, &r, &rec);
		break;
	}
	case 12:
		o->now += (int64_t)b * 13;
		rc = queue_tick(o->q, o->now);
		must(rc == 0, "tick");
		rc = -1;
		break;
	default:
		/* The server's timers and events, each until done. */
		for (int i = 0; i < 64; i++) {
			if (b % 3 == 0)
				rc = queue_decide_expired(o->q, o->now, &rec);
			else if (b % 3 == 1)
				rc = queue_decide_session_gone(o->q, o->now,
				    (b >> 2) % 3, "gone", 4, &rec);
			else
				rc = queue_decide_restart(
				    o->q, o->now, "restarted", 9, &rec);
			if (rc != 0)
				break;
			commit(o, rc, &rec);
			checked(o->q);
		}
		rc = -1;
		break;
	}
	commit(o, rc, &rec);
	checked(o->q);
}

static void
operations(struct rd *in)
{
	struct ops o;
	struct queue *replay = queue_new(NULL);
	struct queue_config cfg;
	struct buf x, y;
	struct rd r;

	memset(&o, 0, sizeof(o));
	/* Acked tasks are kept a while, a few at most (replay needs no
	 * configuration: the records carry it). */
	queue_config_default(&cfg);
	cfg.keep_done_ms = 2000;
	cfg.max_done = 5;
	o.in = in;
	o.q = queue_new(&cfg);
	o.now = T0;
	buf_init(&o.body);
	buf_init(&o.log);
	while (rd_left(in) > 0)
		one_op(&o);
	/* Replay the log into another queue. */
	rd_init(&r, o.log.data, o.log.len);
	while (rd_left(&r) > 0) {
		uint16_t type = rd_u16(&r);
		uint64_t lsn = rd_u64(&r);
		int64_t time = rd_i64(&r);
		size_t len;
		const uint8_t *body = rd_blob(&r, SIZE_MAX, &len);
		struct qrec rec;

		must(!rd_failed(&r), "log");
		must(qrec_decode(type, body, len, &rec) == 0, "log decode");
		must(queue_apply(replay, lsn, time, &rec) == 0, "replay apply");
	}
	buf_init(&x);
	buf_init(&y);
	must(queue_tick(o.q, o.now) == 0 && queue_tick(replay, o.now) == 0,
	    "tick");
	must(queue_dump(o.q, &x) == 0 && queue_dump(replay, &y) == 0, "dump");
	must(x.len == y.len && memcmp(x.data, y.data, x.len) == 0,
	    "replay gives the same dump");
	snapshot_round_trip(o.q, o.now);
	buf_fini(&x);
	buf_fini(&y);
	buf_fini(&o.body);
	buf_fini(&o.log);
	queue_free(o.q);
	queue_free(replay);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd in;

	if (size < 1)
		return 0;
	rd_init(&in, data + 1, size - 1);
	switch (data[0] % 4) {
	case 0:
		one_record(&in);
		break;
	case 1:
		records(&in);
		break;
	case 2:
		snapshot(&in);
		break;
	default:
		operations(&in);
		break;
	}
	return 0;
}
