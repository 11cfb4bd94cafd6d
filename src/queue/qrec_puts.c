/* qrec_puts - the PUTS record: a batch put's plain PUTs of one tube in one
 * record (layout at the top of qrec.h); its check, encoding, decoding,
 * text, and the reading and writing of its items.
 *
 * Design: what N single PUTs of one batch repeat (the log's header of 40
 * bytes, the tube, the full id, fixed-width fields) is written once; each
 * item is its fields as varints (LEB128, in their shortest form, so that
 * a body has one encoding and decode(encode(r)) == r byte for byte) and
 * its key and payload. Ids are gaps from the previous item (1 when
 * nothing came between), run_at a zigzag difference from the first's.
 * An item is exactly a PUT's fields: it is valid when the PUT it reads
 * as would be (qrec.c's rules), with no version, group, window, parents
 * or batch: a put that has one is logged as its own record. Pure, like
 * qrec.c. */
#include <inttypes.h>
#include <string.h>

#include "queue/qrec.h"

/* ---- Varints ------------------------------------------------------- */

static inline uint8_t *
var_store(uint8_t *d, uint64_t v)
{
	while (v >= 0x80) {
		*d++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*d++ = (uint8_t)v;
	return d;
}

/* The shortest form only: a last byte 0 after others, or more than 64
 * bits, fails the reader. */
static uint64_t
var_get_long(struct rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t byte = rd_u8(r);

		if (rd_failed(r))
			return 0;
		if (shift == 63 && byte > 1)
			break;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if ((byte & 0x80) == 0) {
			if (byte == 0 && shift > 0)
				break;
			return v;
		}
	}
	rd_bytes(r, rd_left(r) + 1); /* fails it */
	return 0;
}

static inline uint64_t
var_get(struct rd *r)
{
	if (!r->bad && r->off < r->len && r->p[r->off] < 0x80)
		return r->p[r->off++];
	return var_get_long(r);
}

static uint64_t
zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t
unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static bool
time_ok(int64_t t)
{
	return t >= 0 && t <= QREC_TIME_MAX;
}

/* ---- Items --------------------------------------------------------- */

bool
qrec_puts_fits(const struct qrec *rec)
{
	const struct qrec_put *p = &rec->u.put;

	return rec->type == QREC_PUT && p->version == 0 &&
	    p->throttle_until == 0 && p->group_len == 0 && p->nafter == 0 &&
	    p->batch_len == 0;
}

bool
qrec_puts_add(struct buf *items, const struct qrec_put *p, uint64_t prev_id,
    int64_t run_at)
{
	uint8_t *d;

	if (!buf_reserve(
	        items, QREC_PUTS_ITEM_HEAD + p->key_len + p->payload_len))
		return false;
	d = items->data + items->len;
	d = var_store(d, prev_id == 0 ? 0 : p->id - prev_id);
	d = var_store(d, p->pri);
	d = var_store(d, zigzag(prev_id == 0 ? 0 : p->run_at - run_at));
	d = var_store(d, p->ttr);
	d = var_store(d, p->max_attempts);
	d = var_store(d, (uint64_t)p->period);
	d = var_store(d, p->key_len);
	if (p->key_len > 0)
		memcpy(d, p->key, p->key_len);
	d = var_store(d + p->key_len, p->payload_len);
	if (p->payload_len > 0)
		memcpy(d, p->payload, p->payload_len);
	items->len = (size_t)(d + p->payload_len - items->data);
	return true;
}

void
qrec_puts_begin(const struct qrec_puts *p, struct qrec_puts_it *it)
{
	rd_init(&it->r, p->items, p->items_len);
	it->p = p;
	it->id = 0;
	it->i = 0;
	it->bad = false;
}

bool
qrec_puts_next(struct qrec_puts_it *it, struct qrec_put *out)
{
	struct rd *r = &it->r;
	uint64_t gap, pri, ttr, max_attempts, period, klen, plen;
	int64_t delta;

	if (it->bad || it->i >= it->p->n)
		return false;
	gap = var_get(r);
	pri = var_get(r);
	delta = unzigzag(var_get(r));
	ttr = var_get(r);
	max_attempts = var_get(r);
	period = var_get(r);
	klen = var_get(r);
	memset(out, 0, sizeof(*out));
	out->key = klen > 0 && klen <= QREC_KEY_MAX
	    ? (const char *)rd_bytes(r, (size_t)klen)
	    : NULL;
	plen = var_get(r);
	out->payload = plen > 0 && plen <= QREC_PAYLOAD_MAX
	    ? rd_bytes(r, (size_t)plen)
	    : NULL;
	/* the first item is the record's id and run_at; the others follow */
	if (rd_failed(r) || (it->i == 0) != (gap == 0) || klen > QREC_KEY_MAX ||
	    plen > QREC_PAYLOAD_MAX || pri > UINT32_MAX || ttr == 0 ||
	    ttr > UINT32_MAX || max_attempts > UINT32_MAX ||
	    period > (uint64_t)QREC_TIME_MAX || delta < -QREC_TIME_MAX ||
	    delta > QREC_TIME_MAX || (it->i == 0 && delta != 0) ||
	    (it->i > 0 && gap >= UINT64_MAX - it->id)) {
		it->bad = true;
		return false;
	}
	out->id = it->i == 0 ? it->p->first_id : it->id + gap;
	out->run_at = it->p->run_at + delta;
	if (out->id == 0 || out->id == UINT64_MAX || !time_ok(out->run_at)) {
		it->bad = true;
		return false;
	}
	out->tube = it->p->tube;
	out->tube_len = it->p->tube_len;
	out->pri = (uint32_t)pri;
	out->ttr = (uint32_t)ttr;
	out->max_attempts = (uint32_t)max_attempts;
	out->period = (int64_t)period;
	out->key_len = (size_t)klen;
	out->payload_len = (size_t)plen;
	it->id = out->id;
	it->i++;
	return true;
}

/* ---- The record ---------------------------------------------------- */

bool
qrec_puts_valid(const struct qrec_puts *p)
{
	struct qrec_puts_it it;
	struct qrec_put put;

	if (!qrec_tube_valid(p->tube, p->tube_len) || p->n < 2 ||
	    p->n > QREC_PUTS_MAX || p->first_id == 0 || !time_ok(p->run_at) ||
	    (p->items == NULL && p->items_len > 0))
		return false;
	qrec_puts_begin(p, &it);
	while (qrec_puts_next(&it, &put))
		;
	return !it.bad && it.i == p->n && rd_left(&it.r) == 0;
}

void
qrec_puts_encode(const struct qrec_puts *p, struct buf *out)
{
	buf_put_str16(out, p->tube, p->tube_len);
	buf_put_u64(out, p->first_id);
	buf_put_i64(out, p->run_at);
	buf_put_u32(out, p->n);
	buf_put(out, p->items, p->items_len);
}

void
qrec_puts_decode(struct rd *r, struct qrec_puts *p)
{
	p->tube = rd_str16(r, QREC_NAME_MAX, &p->tube_len);
	p->first_id = rd_u64(r);
	p->run_at = rd_i64(r);
	p->n = rd_u32(r);
	p->items_len = rd_left(r);
	p->items = rd_bytes(r, p->items_len);
}

void
qrec_puts_format(const struct qrec_puts *p, struct buf *out)
{
	struct qrec_puts_it it;
	struct qrec_put put;

	buf_printf(out, " tube=");
	buf_put(out, p->tube, p->tube_len);
	buf_printf(out, " n=%" PRIu32, p->n);
	qrec_puts_begin(p, &it);
	while (qrec_puts_next(&it, &put)) {
		buf_printf(out,
		    " [id=%" PRIu64 " pri=%" PRIu32 " run_at=%" PRId64
		    " ttr=%" PRIu32 " max_attempts=%" PRIu32 " period=%" PRId64,
		    put.id, put.pri, put.run_at, put.ttr, put.max_attempts,
		    put.period);
		if (put.key_len > 0) {
			buf_printf(out, " key=");
			buf_put_escaped(out, put.key, put.key_len);
		}
		buf_printf(out, " payload=%zuB]", put.payload_len);
	}
}
