/* Tests of the PUTS record (src/queue/qrec_puts.c, apply_puts.c): its
 * items read back as written; a body that breaks a rule of its layout (a
 * count below 2, gaps, the first item's run_at, a varint longer than its
 * shortest form, a field out of range, bytes left over) is refused; every
 * mutation of a valid body decodes to its own bytes or not at all; and a
 * PUTS replays into exactly the state of the PUT records it stands for,
 * whether applied whole or item by item as the core writes it, with its
 * keys deduplicating and its snapshot loading the same (at LSN 1 too,
 * with more tasks than LSNs). test_qrec holds
 * its round trip beside every other type's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue_puts.h"
#include "t_lib.h"
#include "t_queue.h"

/* A body: tube, first_id, run_at, n, then the raw item bytes. */
static void
body_of(struct buf *b, const char *tube, uint64_t first_id, int64_t run_at,
    uint32_t n, const uint8_t *items, size_t len)
{
	buf_reset(b);
	buf_put_str16(b, tube, strlen(tube));
	buf_put_u64(b, first_id);
	buf_put_i64(b, run_at);
	buf_put_u32(b, n);
	buf_put(b, items, len);
}

static int
decode(const struct buf *b, struct qrec *out)
{
	return qrec_decode(QREC_PUTS, b->data, b->len, out);
}

/* Items written with qrec_puts_add read back field by field, the
 * record's tube and ids included; two of them make a valid record. */
static void
test_items_read_back(void **state)
{
	struct qrec_put in[4] = {
		{ .id = 5,
		    .pri = 7,
		    .ttr = 1000,
		    .max_attempts = 2,
		    .run_at = TQ_T0,
		    .key = "k",
		    .key_len = 1,
		    .payload = "abc",
		    .payload_len = 3 },
		{ .id = 6, .ttr = 1, .run_at = TQ_T0 - 1000 },
		{ .id = 1000000,
		    .pri = UINT32_MAX,
		    .ttr = 70000,
		    .run_at = TQ_T0 + 3600000,
		    .period = 60000 },
		{ .id = 1000001, .ttr = 9, .run_at = 0 },
	};
	struct buf items, b, again;
	struct qrec_puts_it it;
	struct qrec rec;
	struct qrec_put out;
	uint32_t i = 0;

	(void)state;
	buf_init(&items);
	buf_init(&b);
	buf_init(&again);
	for (int k = 0; k < 4; k++) {
		in[k].tube = "t";
		in[k].tube_len = 1;
		assert_true(
		    qrec_puts_add(&items, &in[k], k ? in[k - 1].id : 0, TQ_T0));
	}
	body_of(&b, "t", 5, TQ_T0, 4, items.data, items.len);
	assert_int_equal(decode(&b, &rec), 0);
	assert_int_equal(qrec_encode(&rec, &again), 0);
	assert_int_equal(again.len, b.len);
	assert_memory_equal(again.data, b.data, b.len);
	qrec_puts_begin(&rec.u.puts, &it);
	while (qrec_puts_next(&it, &out)) {
		assert_true(out.id == in[i].id && out.pri == in[i].pri &&
		    out.ttr == in[i].ttr &&
		    out.max_attempts == in[i].max_attempts &&
		    out.run_at == in[i].run_at && out.period == in[i].period);
		assert_int_equal(out.key_len, in[i].key_len);
		assert_int_equal(out.payload_len, in[i].payload_len);
		if (out.payload_len > 0)
			assert_memory_equal(
			    out.payload, in[i].payload, out.payload_len);
		assert_true(out.tube_len == 1 && out.tube[0] == 't');
		assert_true(out.version == 0 && out.group_len == 0 &&
		    out.nafter == 0 && out.throttle_until == 0);
		i++;
	}
	assert_false(it.bad);
	assert_int_equal(i, 4);
	/* Plain PUTs fit; a version, a group, a window, parents do not. */
	rec.type = QREC_PUT;
	rec.u.put = in[0];
	assert_true(qrec_puts_fits(&rec));
	rec.u.put.group = "g";
	rec.u.put.group_len = 1;
	assert_false(qrec_puts_fits(&rec));
	rec.u.put = in[0];
	rec.type = QREC_PUT_V;
	rec.u.put.version = 3;
	assert_false(qrec_puts_fits(&rec));
	buf_fini(&items);
	buf_fini(&b);
	buf_fini(&again);
}

/* One rule broken at a time, each refused; the same body with the rule
 * kept decodes (so the case tests what it names). */
static void
test_broken_bodies_are_refused(void **state)
{
	/* items: gap pri delta ttr max_attempts period klen [key] plen */
	static const struct {
		const char *why;
		uint64_t first_id;
		int64_t run_at;
		uint32_t n;
		uint8_t items[24];
		size_t len;
		bool ok;
	} cases[] = {
		{ "two items", 1, 5, 2,
		    { 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0 }, 16,
		    true },
		{ "one item", 1, 5, 1, { 0, 0, 0, 1, 0, 0, 0, 0 }, 8, false },
		{ "no item", 1, 5, 0, { 0 }, 0, false },
		{ "first gap", 1, 5, 2,
		    { 1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0 }, 16,
		    false },
		{ "later gap 0", 1, 5, 2,
		    { 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0 }, 16,
		    false },
		{ "first run_at", 1, 5, 2,
		    { 0, 0, 2, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0 }, 16,
		    false },
		{ "ttr 0", 1, 5, 2,
		    { 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 }, 16,
		    false },
		{ "long varint", 1, 5, 2,
		    { 0, 0, 0, 0x81, 0x00, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0 },
		    17, false },
		{ "pri over 32 bits", 1, 5, 2,
		    { 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 1, 0, 0, 0, 0, 1, 0,
		        0, 1, 0, 0, 0, 0 },
		    20, false },
		{ "run_at below 0", 1, 5, 2,
		    { 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 11, 1, 0, 0, 0, 0 }, 16,
		    false },
		{ "id past the last", UINT64_MAX - 1, 5, 2,
		    { 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0 }, 16,
		    false },
		{ "id 0", 0, 5, 2,
		    { 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0 }, 16,
		    false },
		{ "payload cut", 1, 5, 2,
		    { 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 3, 'a' }, 17,
		    false },
		{ "a byte more", 1, 5, 2,
		    { 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0 }, 17,
		    false },
		{ "fewer than n", 1, 5, 3,
		    { 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0 }, 16,
		    false },
	};
	struct qrec rec;
	struct buf b;

	(void)state;
	buf_init(&b);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		body_of(&b, "t", cases[i].first_id, cases[i].run_at, cases[i].n,
		    cases[i].items, cases[i].len);
		if (decode(&b, &rec) != (cases[i].ok ? 0 : SLUICE_ECORRUPT))
			fail_msg("case '%s'", cases[i].why);
	}
	/* the tube of a valid body, broken */
	body_of(&b, "a b", 1, 5, 2, cases[0].items, cases[0].len);
	assert_int_equal(decode(&b, &rec), SLUICE_ECORRUPT);
	/* a period past QREC_TIME_MAX: 2^53 + 1 as a varint */
	{
		uint8_t items[32] = { 0, 0, 0, 1, 0 }, *d = items + 5;
		uint64_t v = ((uint64_t)1 << 53) + 1;

		while (v >= 0x80) {
			*d++ = (uint8_t)(v | 0x80);
			v >>= 7;
		}
		*d++ = (uint8_t)v;
		memcpy(
		    d, (const uint8_t[]) { 0, 0, 1, 0, 0, 1, 0, 0, 0, 0 }, 10);
		body_of(&b, "t", 1, 5, 2, items, (size_t)(d + 10 - items));
		assert_int_equal(decode(&b, &rec), SLUICE_ECORRUPT);
	}
	buf_fini(&b);
}

/* Every single-byte change and every cut of a valid body: refused, or a
 * body that encodes back to exactly its bytes. */
static void
test_mutations_decode_canonically_or_not_at_all(void **state)
{
	struct qrec_put p[3] = {
		{ .id = 9,
		    .ttr = 300,
		    .run_at = TQ_T0,
		    .key = "key",
		    .key_len = 3,
		    .payload = "payload",
		    .payload_len = 7 },
		{ .id = 10, .pri = 200, .ttr = 1, .run_at = TQ_T0 + 200 },
		{ .id = 400,
		    .ttr = 5,
		    .max_attempts = 3,
		    .period = 1000,
		    .run_at = TQ_T0 - 200 },
	};
	struct buf items, b, again;
	struct qrec rec;
	int decoded = 0, refused = 0;

	(void)state;
	buf_init(&items);
	buf_init(&b);
	buf_init(&again);
	for (int k = 0; k < 3; k++)
		assert_true(
		    qrec_puts_add(&items, &p[k], k ? p[k - 1].id : 0, TQ_T0));
	body_of(&b, "tube", 9, TQ_T0, 3, items.data, items.len);
	assert_int_equal(decode(&b, &rec), 0);
	for (size_t at = 0; at < b.len; at++)
		for (int v = 0; v < 256; v++) {
			uint8_t was = b.data[at];

			if (v == was)
				continue;
			b.data[at] = (uint8_t)v;
			if (decode(&b, &rec) == 0) {
				buf_reset(&again);
				assert_int_equal(qrec_encode(&rec, &again), 0);
				assert_int_equal(again.len, b.len);
				assert_memory_equal(again.data, b.data, b.len);
				decoded++;
			} else {
				refused++;
			}
			b.data[at] = was;
		}
	for (size_t len = 0; len < b.len; len++)
		assert_int_equal(
		    qrec_decode(QREC_PUTS, b.data, len, &rec), SLUICE_ECORRUPT);
	assert_true(decoded > 0 && refused > 0);
	buf_fini(&items);
	buf_fini(&b);
	buf_fini(&again);
}

/* The puts of a batch as the server sees them: keys (one repeated, which
 * makes nothing), delays, priorities, ttrs. Each decided and committed
 * as a PUT into h. */
static void
put_all(struct tq *h, int n)
{
	for (int i = 0; i < n; i++) {
		struct queue_put_req req;
		struct queue_put_res res;
		char key[16], payload[32];
		struct qrec rec;

		queue_put_req_init(&req);
		req.tube = "mail";
		req.tube_len = 4;
		snprintf(payload, sizeof(payload), "payload %d", i);
		req.payload = payload;
		req.payload_len = strlen(payload);
		req.pri = (uint32_t)(i % 4) * 1000;
		req.delay_ms = i % 5 == 0 ? 60000 : 0;
		req.ttr_ms = i % 3 == 0 ? 5000 : 0;
		if (i % 4 == 1 || i == n - 1) {
			snprintf(key, sizeof(key), "k%d", i == n - 1 ? 1 : i);
			req.key = key;
			req.key_len = strlen(key);
		}
		assert_int_equal(
		    queue_decide_put(h->q, h->now, &req, &rec, &res), 0);
		assert_int_equal(
		    rec.type, i == n - 1 ? QREC_NONE : QREC_PUT); /* k1: live */
		assert_int_equal(tq_commit(h, &rec), 0);
	}
}

/* A PUTS of h's PUT records, into `items`. */
static struct qrec
puts_of(const struct tq *h, struct buf *items)
{
	struct qrec r = { .type = QREC_PUTS };
	uint64_t prev = 0;

	buf_reset(items);
	for (size_t i = 0; i < h->nlog; i++) {
		struct qrec put;

		assert_int_equal(
		    qrec_decode(h->log[i].type, h->bodies.data + h->log[i].off,
		        h->log[i].len, &put),
		    0);
		assert_true(qrec_puts_fits(&put));
		if (i == 0)
			r.u.puts = (struct qrec_puts) { .tube = put.u.put.tube,
				.tube_len = put.u.put.tube_len,
				.first_id = put.u.put.id,
				.run_at = put.u.put.run_at };
		assert_true(
		    qrec_puts_add(items, &put.u.put, prev, r.u.puts.run_at));
		prev = put.u.put.id;
		r.u.puts.n++;
	}
	r.u.puts.items = items->data;
	r.u.puts.items_len = items->len;
	return r;
}

/* N single PUTs, one PUTS at the last one's LSN, and the same items
 * applied one by one at that LSN (as the core does): the same state,
 * dump for dump (tasks, keys, next id, lsn); the same snapshot; a key
 * of the PUTS still deduplicates; and the same PUTS again is refused. */
static void
test_puts_replays_as_its_puts(void **state)
{
	enum { N = 50 };
	struct tq h, w, one;
	struct buf items, body, snap;
	struct queue *q;
	struct qrec puts, dec;

	(void)state;
	tq_init(&h, NULL, TQ_T0);
	put_all(&h, N);
	assert_int_equal(h.nlog, N - 1);
	buf_init(&items);
	buf_init(&body);
	buf_init(&snap);
	puts = puts_of(&h, &items);
	assert_int_equal(qrec_encode(&puts, &body), 0);
	assert_int_equal(qrec_decode(QREC_PUTS, body.data, body.len, &dec), 0);

	/* whole */
	tq_init(&w, NULL, TQ_T0);
	assert_int_equal(queue_apply(w.q, h.lsn, TQ_T0, &dec), 0);
	assert_true(tq_same(h.q, w.q, TQ_T0));
	assert_int_equal(queue_apply(w.q, h.lsn + 1, TQ_T0, &dec),
	    SLUICE_ECORRUPT); /* its ids are taken */
	assert_true(tq_same(h.q, w.q, TQ_T0));

	/* item by item, at one LSN */
	tq_init(&one, NULL, TQ_T0);
	for (size_t i = 0; i < h.nlog; i++) {
		struct qrec put;

		assert_int_equal(
		    qrec_decode(h.log[i].type, h.bodies.data + h.log[i].off,
		        h.log[i].len, &put),
		    0);
		assert_int_equal(
		    queue_apply_puts_item(one.q, h.lsn, TQ_T0, &put), 0);
		assert_int_equal(queue_lsn(one.q), h.lsn);
	}
	assert_true(tq_same(h.q, one.q, TQ_T0));
	{
		struct qrec put;

		assert_int_equal(qrec_decode(h.log[0].type, h.bodies.data,
		                     h.log[0].len, &put),
		    0);
		assert_int_equal(
		    queue_apply_puts_item(one.q, h.lsn - 1, TQ_T0, &put),
		    SLUICE_EINVAL);
		put.type = QREC_PUT_V;
		assert_int_equal(
		    queue_apply_puts_item(one.q, h.lsn + 1, TQ_T0, &put),
		    SLUICE_EINVAL);
	}

	/* the snapshot of the PUTS's state loads into the same */
	assert_int_equal(queue_snapshot_write(w.q, tq_snap_emit, &snap), 0);
	q = queue_new(NULL);
	assert_non_null(q);
	assert_int_equal(tq_snap_load(q, &snap), 0);
	assert_true(tq_same(h.q, q, TQ_T0));
	queue_free(q);

	/* at LSN 1, more tasks than LSNs: its snapshot loads */
	q = queue_new(NULL);
	assert_non_null(q);
	assert_int_equal(queue_apply(q, 1, TQ_T0, &dec), 0);
	buf_reset(&snap);
	assert_int_equal(queue_snapshot_write(q, tq_snap_emit, &snap), 0);
	queue_free(q);
	q = queue_new(NULL);
	assert_non_null(q);
	assert_int_equal(tq_snap_load(q, &snap), 0);
	assert_int_equal(queue_lsn(q), 1);
	queue_free(q);

	/* a key the PUTS made is live: a put of it makes nothing */
	{
		struct queue_put_req req;
		struct queue_put_res a, b;
		struct qrec ra, rb;

		queue_put_req_init(&req);
		req.tube = "mail";
		req.tube_len = 4;
		req.key = "k5";
		req.key_len = 2;
		assert_int_equal(
		    queue_decide_put(h.q, TQ_T0, &req, &ra, &a), 0);
		assert_int_equal(
		    queue_decide_put(w.q, TQ_T0, &req, &rb, &b), 0);
		assert_true(ra.type == QREC_NONE && rb.type == QREC_NONE);
		assert_true(a.id == b.id && a.id != 0 && !b.created);
	}
	{
		const char *why = NULL;

		assert_int_equal(queue_check(w.q, &why), 0);
		assert_int_equal(queue_check(one.q, &why), 0);
	}
	buf_fini(&items);
	buf_fini(&body);
	buf_fini(&snap);
	tq_fini(&h);
	tq_fini(&w);
	tq_fini(&one);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_items_read_back),
		cmocka_unit_test(test_broken_bodies_are_refused),
		cmocka_unit_test(
		    test_mutations_decode_canonically_or_not_at_all),
		cmocka_unit_test(test_puts_replays_as_its_puts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
