/* core_puts - a batch put's plain PUTs of one tube as one PUTS record.
 *
 * Design: decide of each item must see the items before it applied (ids,
 * keys, limits), so each is applied as it is decided, under the LSN the
 * record will have, and the record is appended when the run ends (a put
 * the record cannot carry, another tube, the batch's end). An append that
 * could fail after its items were applied would leave a state the log
 * does not hold; so before each item is applied, wal_prepare makes the
 * run's record with that item certain to fit: room that leaves the
 * reservation new work must leave (the floor as it will be with one more
 * waiting task, and the margin), its segment begun, its buffer grown.
 * Where it cannot promise that, the run is written as it is and the item
 * goes the usual way (core_commit), which refuses it or allocates as
 * every put does. Nothing else appends while a run is open: the run
 * lives within one request's handling on the core thread.
 *
 * A run of one is written as a PUT (the LSN and the state are the same);
 * its room is the larger of the two forms. The record's replies wait for
 * its LSN like any put's (ops_reply after the flush). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_puts.h"
#include "server/core/core.h"
#include "server/core/core_puts.h"
#include "sluice.h"
#include "util/log.h"

/* A run's record is at most this many body bytes: an item that would
 * make it bigger begins the next one. */
enum { CORE_PUTS_BYTES = 1 << 20 };

/* The body of a PUTS before its items, and of a lone PUT. */
static size_t
head_len(size_t tube_len)
{
	return 2 + tube_len + 8 + 8 + 4;
}

static size_t
put_len(const struct qrec_put *p)
{
	return 8 + 2 + p->tube_len + 4 + 8 + 4 + 4 + 8 + 2 + p->key_len + 4 +
	    p->payload_len;
}

/* What the PUTS needs of an item beyond what decide checked (the tube,
 * the sizes): a field that would make the record invalid sends the put
 * the usual way, where qrec_encode refuses it. */
static bool
item_ok(const struct core_puts *run, const struct qrec_put *p)
{
	return p->id != 0 && p->id != UINT64_MAX && p->ttr != 0 &&
	    (run->n == 0 || p->id > run->prev_id) && p->run_at >= 0 &&
	    p->run_at <= QREC_TIME_MAX && p->period >= 0 &&
	    p->period <= QREC_TIME_MAX && p->key_len <= QREC_KEY_MAX &&
	    (p->key != NULL || p->key_len == 0) &&
	    (p->payload != NULL || p->payload_len == 0);
}

static _Noreturn void
run_lost(const struct core_puts *run, const char *what, int rc)
{
	log_err("srv",
	    "a batch put's applied record was not logged; refusing further "
	    "writes lsn=%" PRIu64 " items=%" PRIu32 " step=%s error=\"%s\"",
	    run->lsn, run->n, what, sluice_strerror(rc));
	abort();
}

int
core_puts_add(struct core *c, struct core_puts *run, const struct qrec *rec)
{
	const struct qrec_put *p = &rec->u.put;
	struct reserve_counts n;
	uint64_t k[4], floor, waiting;
	size_t len;
	int rc;

	if (!qrec_puts_fits(rec))
		return 1;
	if (run->n > 0 &&
	    (run->n >= QREC_PUTS_MAX || p->tube_len != run->tube_len ||
	        memcmp(p->tube, run->tube, p->tube_len) != 0 ||
	        c->puts.len + QREC_PUTS_ITEM_HEAD + p->key_len +
	                p->payload_len >
	            CORE_PUTS_BYTES))
		core_puts_flush(c, run);
	if (!item_ok(run, p))
		return 1;
	len = (run->n > 0 ? c->puts.len : head_len(p->tube_len)) +
	    QREC_PUTS_ITEM_HEAD + p->key_len + p->payload_len;
	if (run->n == 0 && put_len(p) > len)
		len = put_len(p);
	if (len > CORE_PUTS_BYTES)
		return 1; /* a big payload: a record of its own */
	/* The floor once this task waits (ready or delayed: the same). In a
	 * run, the one before's plus a waiting task: decide's tick at the
	 * same c->now changed no state meanwhile. */
	if (run->n == 0) {
		queue_live_counts(c->q, k);
		n = (struct reserve_counts) { k[0] + 1, k[1], k[2], k[3] };
		floor = reserve_floor(&c->rsv, &n);
	} else {
		waiting = c->rsv.take + c->rsv.end;
		floor = run->floor > UINT64_MAX - waiting
		    ? UINT64_MAX
		    : run->floor + waiting;
	}
	if (wal_prepare(c->wal, len,
	        floor + reserve_margin(&c->rsv, c->rsv_pool)) != 0) {
		core_puts_flush(c, run);
		return 1;
	}
	if (run->n == 0) {
		buf_reset(&c->puts);
		buf_put_str16(&c->puts, p->tube, p->tube_len);
		buf_put_u64(&c->puts, p->id);
		buf_put_i64(&c->puts, p->run_at);
		buf_put_u32(&c->puts, 0); /* n, at the flush */
		if (buf_failed(&c->puts))
			return 1;
		run->lsn = wal_last_lsn(c->wal) + 1;
		run->tube = p->tube;
		run->tube_len = p->tube_len;
		run->first_id = p->id;
		run->run_at = p->run_at;
	}
	if (!qrec_puts_add(
	        &c->puts, p, run->n > 0 ? run->prev_id : 0, run->run_at)) {
		core_puts_flush(c, run);
		return 1;
	}
	rc = queue_apply_puts_item(c->q, run->lsn, c->now, rec);
	if (rc != 0)
		run_lost(run, "apply", rc);
	run->n++;
	run->prev_id = p->id;
	run->floor = floor;
	c->applied = true;
	wal_set_reserved(c->wal, floor, reserve_margin(&c->rsv, c->rsv_pool));
	return 0;
}

void
core_puts_flush(struct core *c, struct core_puts *run)
{
	size_t head = head_len(run->tube_len);
	struct qrec r = { .type = QREC_PUTS };
	const void *body = c->puts.data;
	size_t len = c->puts.len;
	uint64_t lsn = 0;
	int rc;

	if (run->n == 0)
		return;
	le_store_u32(c->puts.data + head - 4, run->n);
	r.u.puts = (struct qrec_puts) { .tube = run->tube,
		.tube_len = run->tube_len,
		.first_id = run->first_id,
		.run_at = run->run_at,
		.n = run->n,
		.items = c->puts.data + head,
		.items_len = c->puts.len - head };
	if (run->n == 1) {                       /* a lone PUT */
		struct qrec_puts one = r.u.puts; /* r.u.put shares its bytes */
		struct qrec_puts_it it;

		qrec_puts_begin(&one, &it);
		if (!qrec_puts_next(&it, &r.u.put))
			run_lost(run, "encode", SLUICE_ECORRUPT);
		r.type = QREC_PUT;
		buf_reset(&c->body);
		if ((rc = qrec_encode(&r, &c->body)) != 0)
			run_lost(run, "encode", rc);
		body = c->body.data;
		len = c->body.len;
	}
#ifndef __OPTIMIZE__
	else if (!qrec_valid(&r)) /* item_ok's promise, checked in Debug */
		run_lost(run, "check", SLUICE_ECORRUPT);
#endif
	rc = wal_append(c->wal, r.type, c->now, body, len, 0, &lsn);
	if (rc != 0 || lsn != run->lsn)
		run_lost(run, "append", rc != 0 ? rc : SLUICE_ECORRUPT);
	c->hard_lsn = lsn;
	if (run->n >= 2)
		c->puts_extra += run->n - 1; /* the snapshot cadence's */
	if (c->repl_hook != NULL) {
		struct rec_hdr h = { .type = r.type,
			.lsn = lsn,
			.epoch = wal_epoch(c->wal),
			.time = c->now };

		c->repl_hook->note(c, &h, body, len);
	}
	run->n = 0;
}

void
core_puts_fini(struct core *c, struct core_puts *run)
{
	core_puts_flush(c, run);
}
