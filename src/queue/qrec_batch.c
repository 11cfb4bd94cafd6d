/* qrec_batch - the batch records (BATCH_SET, BATCH_CLOSE, BATCH_FIRE):
 * their check, encoding, decoding and text. Layouts at the top of
 * qrec.h; qrec.c calls here for these types.
 *
 * A valid record names a batch (1-QREC_BATCH_MAX bytes of the tube
 * alphabet). A SET's callbacks each name a valid tube or none (then its
 * payload is empty), payloads at most QREC_BATCH_PAYLOAD_MAX bytes. A
 * FIRE has a known `which` and for each bit a valid PUT with no period.
 * Pure, like qrec.c. */
#include <inttypes.h>
#include <string.h>

#include "queue/qrec.h"

static bool
name_ok(const char *p, size_t len)
{
	return len <= QREC_BATCH_MAX && qrec_tube_valid(p, len);
}

static bool
callback_ok(const char *tube, size_t tube_len, const void *pl, size_t len)
{
	if (tube_len == 0)
		return len == 0;
	return qrec_tube_valid(tube, tube_len) && (pl != NULL || len == 0) &&
	    len <= QREC_BATCH_PAYLOAD_MAX;
}

static bool
put_ok(const struct qrec_put *p)
{
	struct qrec put;

	memset(&put, 0, sizeof(put));
	put.type = QREC_PUT;
	put.u.put = *p;
	return p->period == 0 && qrec_valid(&put);
}

bool
qrec_batch_valid(const struct qrec_batch *b, uint16_t type)
{
	int n = 0;

	if (!name_ok(b->name, b->name_len))
		return false;
	switch (type) {
	case QREC_BATCH_SET:
		return callback_ok(b->success_tube, b->success_tube_len,
		           b->success_payload, b->success_payload_len) &&
		    callback_ok(b->complete_tube, b->complete_tube_len,
		        b->complete_payload, b->complete_payload_len);
	case QREC_BATCH_CLOSE:
		return true;
	case QREC_BATCH_FIRE:
		if (b->which == 0 ||
		    (b->which &
		        ~(QREC_BATCH_ON_SUCCESS | QREC_BATCH_ON_COMPLETE)) != 0)
			return false;
		for (int i = 0; i < 2; i++)
			if ((b->which & (1 << i)) != 0 &&
			    !put_ok(&b->puts[n++]))
				return false;
		/* two puts take two ids, one after the other */
		return n < 2 || b->puts[1].id == b->puts[0].id + 1;
	default:
		return false;
	}
}

void
qrec_put_body_encode(const struct qrec_put *p, struct buf *out)
{
	buf_put_u64(out, p->id);
	buf_put_str16(out, p->tube, p->tube_len);
	buf_put_u32(out, p->pri);
	buf_put_i64(out, p->run_at);
	buf_put_u32(out, p->ttr);
	buf_put_u32(out, p->max_attempts);
	buf_put_i64(out, p->period);
	buf_put_str16(out, p->key, p->key_len);
	buf_put_blob(out, p->payload, p->payload_len);
}

void
qrec_put_body_decode(struct rd *r, struct qrec_put *p)
{
	p->id = rd_u64(r);
	p->tube = rd_str16(r, QREC_NAME_MAX, &p->tube_len);
	p->pri = rd_u32(r);
	p->run_at = rd_i64(r);
	p->ttr = rd_u32(r);
	p->max_attempts = rd_u32(r);
	p->period = rd_i64(r);
	p->key = rd_str16(r, QREC_KEY_MAX, &p->key_len);
	p->payload = rd_blob(r, QREC_PAYLOAD_MAX, &p->payload_len);
}

void
qrec_batch_encode(const struct qrec_batch *b, uint16_t type, struct buf *out)
{
	int n = 0;

	buf_put_str16(out, b->name, b->name_len);
	switch (type) {
	case QREC_BATCH_SET:
		buf_put_str16(out, b->success_tube, b->success_tube_len);
		buf_put_blob(out, b->success_payload, b->success_payload_len);
		buf_put_str16(out, b->complete_tube, b->complete_tube_len);
		buf_put_blob(out, b->complete_payload, b->complete_payload_len);
		break;
	case QREC_BATCH_FIRE:
		buf_put_u8(out, b->which);
		for (int i = 0; i < 2; i++)
			if ((b->which & (1 << i)) != 0)
				qrec_put_body_encode(&b->puts[n++], out);
		break;
	default:
		break;
	}
}

void
qrec_batch_decode(struct rd *r, uint16_t type, struct qrec_batch *b)
{
	int n = 0;

	b->name = rd_str16(r, QREC_BATCH_MAX, &b->name_len);
	switch (type) {
	case QREC_BATCH_SET:
		b->success_tube =
		    rd_str16(r, QREC_NAME_MAX, &b->success_tube_len);
		b->success_payload =
		    rd_blob(r, QREC_BATCH_PAYLOAD_MAX, &b->success_payload_len);
		b->complete_tube =
		    rd_str16(r, QREC_NAME_MAX, &b->complete_tube_len);
		b->complete_payload = rd_blob(
		    r, QREC_BATCH_PAYLOAD_MAX, &b->complete_payload_len);
		break;
	case QREC_BATCH_FIRE:
		b->which = rd_u8(r);
		for (int i = 0; i < 2; i++)
			if ((b->which & (1 << i)) != 0)
				qrec_put_body_decode(r, &b->puts[n++]);
		break;
	default:
		break;
	}
}

void
qrec_batch_format(const struct qrec_batch *b, uint16_t type, struct buf *out)
{
	int n = 0;

	buf_printf(out, " name=");
	buf_put(out, b->name, b->name_len);
	switch (type) {
	case QREC_BATCH_SET:
		buf_printf(out, " on_success=%.*s payload=%zuB",
		    (int)b->success_tube_len, b->success_tube,
		    b->success_payload_len);
		buf_printf(out, " on_complete=%.*s payload=%zuB",
		    (int)b->complete_tube_len, b->complete_tube,
		    b->complete_payload_len);
		break;
	case QREC_BATCH_FIRE:
		for (int i = 0; i < 2; i++)
			if ((b->which & (1 << i)) != 0) {
				const struct qrec_put *p = &b->puts[n++];

				buf_printf(out, " %s=%" PRIu64 "@%.*s",
				    i == 0 ? "on_success" : "on_complete",
				    p->id, (int)p->tube_len, p->tube);
			}
		break;
	default:
		break;
	}
}
