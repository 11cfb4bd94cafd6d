/* msg_lease - the wire codec of the messages that act on a task under
 * its lease: ack, release, fail, touch, bury, and the batches ack_batch,
 * delete_batch and cancel (delete_batch's layout); and the reply they share
 * with kick_id and update (the task as the op left it: msg_get_after /
 * msg_put_after). Decoders stand beside encoders; msg.c frames them and sends
 * each op here through msg_lease_family. */
#include <assert.h>
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

/* The task and lease a request acts on, first in its body. */
static void
get_lease(struct rd *r, uint64_t *id, uint64_t *lease)
{
	*id = rd_u64(r);
	*lease = rd_u64(r);
}

static void
put_lease(struct buf *b, uint64_t id, uint64_t lease)
{
	buf_put_u64(b, id);
	buf_put_u64(b, lease);
}

static int
get_ack_item(struct rd *r, struct msg_ack_item *out)
{
	out->id = rd_u64(r);
	out->lease = rd_u64(r);
	NEED(r);
	return 0;
}

static int
get_id(struct rd *r, uint64_t *out)
{
	*out = rd_u64(r);
	NEED(r);
	return 0;
}

/* An ack_batch or delete_batch result; with `message`, its text. */
static int
get_item_res(struct rd *r, bool message, struct msg_item_res *out)
{
	memset(out, 0, sizeof(*out));
	out->status = rd_u16(r);
	NEED(r);
	if (message)
		TRY(msg_get_text(r, MSG_TEXT_MAX, &out->message));
	return 0;
}

bool
msg_next_ack_item(struct msg_iter *it, struct msg_ack_item *out)
{
	NEXT(it, get_ack_item(&it->r, out));
}

bool
msg_next_id(struct msg_iter *it, uint64_t *out)
{
	NEXT(it, get_id(&it->r, out));
}

bool
msg_next_item_res(struct msg_iter *it, struct msg_item_res *out)
{
	NEXT(it, get_item_res(&it->r, it->flags & BATCH_F_MESSAGES, out));
}

/* The task as a lease op (ack ... bury), kick_id or update left it. */
int
msg_get_after(struct rd *r, uint8_t flags, struct msg_rep *m)
{
	m->after.id = rd_u64(r);
	m->after.state = rd_u8(r);
	m->after.run_at = rd_u64(r);
	m->after.deadline = rd_u64(r);
	m->after.replaced = flags & REP_F_REPLACED;
	NEED(r);
	if (m->after.state != MSG_ST_NONE && !msg_state_valid(m->after.state))
		return SLUICE_EPROTO;
	return 0;
}

int
msg_put_after(struct buf *b, const struct msg_rep *m)
{
	if (m->after.state != MSG_ST_NONE && !msg_state_valid(m->after.state))
		return SLUICE_EINVAL;
	buf_put_u64(b, m->after.id);
	buf_put_u8(b, m->after.state);
	buf_put_u64(b, m->after.run_at);
	buf_put_u64(b, m->after.deadline);
	return 0;
}

/* ---- requests ---------------------------------------------------------- */

/* Decodes the body of a request of this family (the head is checked). */
static int
msg_lease_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	struct msg_ack_item ack;
	uint64_t id;

	(void)pmax;

	switch (op) {
	case MSG_OP_ACK_BATCH:
		q->ack_batch.messages = flags & BATCH_F_MESSAGES;
		q->ack_batch.n = rd_u32(r);
		NEED(r);
		TRY(msg_check_count(q->ack_batch.n, MSG_BATCH_MAX));
		GET_EACH(&q->ack_batch.it, r, q->ack_batch.n, 0,
		    get_ack_item(r, &ack));
		return 0;
	case MSG_OP_DELETE_BATCH:
	case MSG_OP_CANCEL:
		q->delete_batch.messages = flags & BATCH_F_MESSAGES;
		q->delete_batch.n = rd_u32(r);
		NEED(r);
		TRY(msg_check_count(q->delete_batch.n, MSG_BATCH_MAX));
		GET_EACH(&q->delete_batch.it, r, q->delete_batch.n, 0,
		    get_id(r, &id));
		return 0;
	case MSG_OP_ACK:
		get_lease(r, &q->ack.id, &q->ack.lease);
		q->ack.force = flags & LEASE_F_FORCE;
		q->ack.report = flags & LEASE_F_REPORT;
		NEED(r);
		TRY(msg_get_tube(r, true, &q->ack.to));
		if (!(flags & ACK_F_RESULT))
			return 0;
		TRY(msg_get_text(r, MSG_RESULT_MAX, &q->ack.result));
		return q->ack.result.len == 0 ? SLUICE_EINVAL : 0;
	case MSG_OP_RELEASE:
		get_lease(r, &q->release.id, &q->release.lease);
		q->release.delay = rd_u64(r);
		q->release.priority = rd_u32(r);
		q->release.set_priority = flags & RELEASE_F_PRIORITY;
		q->release.front = flags & RELEASE_F_FRONT;
		q->release.untake = flags & RELEASE_F_UNTAKE;
		q->release.force = flags & LEASE_F_FORCE;
		q->release.report = flags & LEASE_F_REPORT;
		NEED(r);
		return 0;
	case MSG_OP_FAIL:
		get_lease(r, &q->fail.id, &q->fail.lease);
		q->fail.delay = rd_u64(r);
		q->fail.set_delay = flags & FAIL_F_DELAY;
		q->fail.fatal = flags & FAIL_F_FATAL;
		q->fail.force = flags & LEASE_F_FORCE;
		q->fail.report = flags & LEASE_F_REPORT;
		NEED(r);
		return msg_get_text(r, MSG_TEXT_MAX, &q->fail.error);
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		get_lease(r, &q->lease.id, &q->lease.lease);
		q->lease.force = flags & LEASE_F_FORCE;
		q->lease.report = flags & LEASE_F_REPORT;
		NEED(r);
		if (op != MSG_OP_BURY || !(flags & BURY_F_ERROR))
			return 0;
		TRY(msg_get_text(r, MSG_TEXT_MAX, &q->lease.error));
		/* the flag says a text follows: an empty one is not sent */
		return q->lease.error.len > 0 ? 0 : SLUICE_EINVAL;
	}
	return SLUICE_EUNKNOWNOP;
}

/* The header's flags byte for a request of this family. */
static uint8_t
msg_lease_req_flags(const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_ACK_BATCH:
		return q->ack_batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_DELETE_BATCH:
	case MSG_OP_CANCEL:
		return q->delete_batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_ACK:
		return (q->ack.force ? LEASE_F_FORCE : 0) |
		    (q->ack.report ? LEASE_F_REPORT : 0) |
		    (q->ack.result.len > 0 ? ACK_F_RESULT : 0);
	case MSG_OP_RELEASE:
		return (q->release.set_priority ? RELEASE_F_PRIORITY : 0) |
		    (q->release.front ? RELEASE_F_FRONT : 0) |
		    (q->release.untake ? RELEASE_F_UNTAKE : 0) |
		    (q->release.force ? LEASE_F_FORCE : 0) |
		    (q->release.report ? LEASE_F_REPORT : 0);
	case MSG_OP_FAIL:
		return (q->fail.set_delay ? FAIL_F_DELAY : 0) |
		    (q->fail.fatal ? FAIL_F_FATAL : 0) |
		    (q->fail.force ? LEASE_F_FORCE : 0) |
		    (q->fail.report ? LEASE_F_REPORT : 0);
	case MSG_OP_TOUCH:
		return q->lease.force ? LEASE_F_FORCE : 0;
	case MSG_OP_BURY:
		return (q->lease.error.len > 0 ? BURY_F_ERROR : 0) |
		    (q->lease.force ? LEASE_F_FORCE : 0) |
		    (q->lease.report ? LEASE_F_REPORT : 0);
	}
	return 0;
}

/* Encodes the body of a request of this family, checked as its decoder
 * checks it. */
static int
msg_lease_put_req(struct buf *b, const struct msg_req *q)
{
	const struct msg_ack_item *item;
	struct msg_ack_item one;
	const uint64_t *id;
	struct msg_iter it;
	uint64_t v;

	switch (q->op) {
	case MSG_OP_ACK_BATCH:
		TRY(msg_check_count(q->ack_batch.n, MSG_BATCH_MAX));
		buf_put_u32(b, q->ack_batch.n);
		it = q->ack_batch.it;
		for (uint32_t i = 0; i < q->ack_batch.n; i++) {
			item = LIST_AT(
			    q->ack_batch.items, i, it, msg_next_ack_item, one);
			if (item == NULL)
				return SLUICE_EINVAL;
			put_lease(b, item->id, item->lease);
		}
		return 0;
	case MSG_OP_DELETE_BATCH:
	case MSG_OP_CANCEL:
		TRY(msg_check_count(q->delete_batch.n, MSG_BATCH_MAX));
		buf_put_u32(b, q->delete_batch.n);
		it = q->delete_batch.it;
		for (uint32_t i = 0; i < q->delete_batch.n; i++) {
			id =
			    LIST_AT(q->delete_batch.ids, i, it, msg_next_id, v);
			if (id == NULL)
				return SLUICE_EINVAL;
			buf_put_u64(b, *id);
		}
		return 0;
	case MSG_OP_ACK:
		put_lease(b, q->ack.id, q->ack.lease);
		TRY(msg_put_tube(b, q->ack.to, true));
		if (q->ack.result.len > 0)
			return msg_put_text(b, q->ack.result, MSG_RESULT_MAX);
		return 0;
	case MSG_OP_RELEASE:
		put_lease(b, q->release.id, q->release.lease);
		buf_put_u64(b, q->release.delay);
		buf_put_u32(
		    b, q->release.set_priority ? q->release.priority : 0);
		return 0;
	case MSG_OP_FAIL:
		put_lease(b, q->fail.id, q->fail.lease);
		buf_put_u64(b, q->fail.set_delay ? q->fail.delay : 0);
		return msg_put_text(b, q->fail.error, MSG_TEXT_MAX);
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		put_lease(b, q->lease.id, q->lease.lease);
		if (q->op == MSG_OP_BURY && q->lease.error.len > 0)
			return msg_put_text(b, q->lease.error, MSG_TEXT_MAX);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* ---- replies ----------------------------------------------------------- */

/* Decodes the body of a reply (status 0) of this family. */
static int
msg_lease_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_item_res ir;

	(void)pmax;

	switch (op) {
	case MSG_OP_ACK_BATCH:
	case MSG_OP_DELETE_BATCH:
	case MSG_OP_CANCEL:
		m->batch.messages = flags & BATCH_F_MESSAGES;
		m->batch.n = rd_u32(r);
		NEED(r);
		if (m->batch.n > MSG_BATCH_MAX)
			return SLUICE_ELIMIT;
		GET_EACH(&m->batch.it, r, m->batch.n, 0,
		    get_item_res(r, m->batch.messages, &ir));
		m->batch.it.flags = flags;
		return 0;
	case MSG_OP_ACK:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		return msg_get_after(r, flags, m);
	}
	return SLUICE_EUNKNOWNOP;
}

/* The flags byte of a reply (status 0) of this family. */
static uint8_t
msg_lease_rep_flags(const struct msg_rep *m)
{
	switch (m->op) {
	case MSG_OP_ACK_BATCH:
	case MSG_OP_DELETE_BATCH:
	case MSG_OP_CANCEL:
		return m->batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_ACK:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_BURY:
		return m->after.replaced ? REP_F_REPLACED : 0;
	}
	return 0;
}

/* Encodes the body of a reply (status 0) of this family. */
static int
msg_lease_put_rep(struct buf *b, const struct msg_rep *m)
{
	const struct msg_item_res *e;
	struct msg_item_res one;
	struct msg_iter it;

	switch (m->op) {
	case MSG_OP_ACK_BATCH:
	case MSG_OP_DELETE_BATCH:
	case MSG_OP_CANCEL:
		if (m->batch.n > MSG_BATCH_MAX)
			return SLUICE_ELIMIT;
		buf_put_u32(b, m->batch.n);
		it = m->batch.it;
		for (uint32_t i = 0; i < m->batch.n; i++) {
			e = LIST_AT(
			    m->batch.items, i, it, msg_next_item_res, one);
			if (e == NULL)
				return SLUICE_EINVAL;
			buf_put_u16(b, e->status);
			if (m->batch.messages)
				TRY(msg_put_text(b, e->message, MSG_TEXT_MAX));
		}
		return 0;
	case MSG_OP_ACK:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		return msg_put_after(b, m);
	}
	return SLUICE_EUNKNOWNOP;
}

const struct msg_family msg_lease_family = {
	.get_req = msg_lease_get_req,
	.put_req = msg_lease_put_req,
	.req_flags = msg_lease_req_flags,
	.get_rep = msg_lease_get_rep,
	.put_rep = msg_lease_put_rep,
	.rep_flags = msg_lease_rep_flags,
};
