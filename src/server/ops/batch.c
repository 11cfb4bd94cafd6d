/* batch - ack_batch and delete_batch: each item on its own, as a plain
 * ack (without force or a move: the lease rule per item) or delete, one
 * bad item refusing only itself. The answer carries a status per item,
 * and a text per refused item when the request asked for them; every
 * record is appended in this turn, so the batch is one commit. Under
 * --auth a task of a tube the token may not see is answered as an
 * unknown one, item by item. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/core/core.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

/* The results of a batch being answered: a status per item, and a text
 * per refused item when the request asked for them. */
struct batch_out {
	struct msg_item_res *res;
	char (*texts)[OPS_ITEM_TEXT];
	uint32_t n;
};

static int
batch_out_new(struct batch_out *o, uint32_t n, bool messages)
{
	o->n = n;
	o->res = calloc(n, sizeof(*o->res));
	o->texts = messages ? calloc(n, sizeof(*o->texts)) : NULL;
	if (o->res == NULL || (messages && o->texts == NULL)) {
		free(o->res);
		free(o->texts);
		return SLUICE_ENOMEM;
	}
	return 0;
}

/* Sets item i's result to `rc`; returns where its text goes when it was
 * refused and the request asked for texts, else NULL. */
static char *
batch_item(struct batch_out *o, uint32_t i, int rc)
{
	o->res[i].status = (uint16_t)(rc == 0 ? 0
	        : rc > 0                      ? rc
	                                      : SLUICE_ENOMEM);
	return rc == 0 || o->texts == NULL ? NULL : o->texts[i];
}

/* Answers with every item's result once the log holds the batch (all its
 * records were appended in this turn: one commit), and frees them. */
static void
batch_reply(
    struct core *c, struct face_ctx *ctx, uint8_t op, struct batch_out *o)
{
	struct msg_rep rep = { .op = op };

	for (uint32_t i = 0; o->texts != NULL && i < o->n; i++)
		o->res[i].message = msg_cstr(o->texts[i]);
	rep.batch.n = o->n;
	rep.batch.messages = o->texts != NULL;
	rep.batch.items = o->res;
	ops_reply(c, ctx, &rep);
	free(o->res);
	free(o->texts);
}

/* Each (id, lease) acked on its own, as a plain ack without force or a
 * move: the lease rule per item, one bad item refusing only itself. */
void
ops_ack_batch(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req)
{
	const struct msg_ack_batch *b = &req->ack_batch;
	struct msg_iter it = b->it;
	struct msg_ack_item m;
	struct batch_out o;
	uint32_t i = 0;

	if (batch_out_new(&o, b->n, b->messages) != 0) {
		core_reply_err(c, ctx, req->op, SLUICE_ENOMEM, NULL);
		return;
	}
	for (; i < b->n && msg_next_ack_item(&it, &m); i++) {
		struct queue_ack_req a = { m.id, m.lease, NULL, 0, false };
		struct qrec r;
		uint64_t lsn;
		char *why;
		int rc = ops_auth_hidden(c, tok, m.id)
		    ? SLUICE_ENOTFOUND
		    : queue_decide_ack(c->q, c->now, &a, &r);

		if (rc == 0)
			rc = core_commit(c, &r, ops_ack_flags(rc, &r), &lsn);
		if ((why = batch_item(&o, i, rc)) != NULL)
			ops_lease_err_text(
			    c, req->op, m.id, m.lease, rc, why, OPS_ITEM_TEXT);
	}
	batch_reply(c, ctx, req->op, &o);
}

void
ops_delete_batch(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req)
{
	const struct msg_delete_batch *b = &req->delete_batch;
	struct msg_iter it = b->it;
	struct batch_out o;
	uint64_t id;
	uint32_t i = 0;

	if (batch_out_new(&o, b->n, b->messages) != 0) {
		core_reply_err(c, ctx, req->op, SLUICE_ENOMEM, NULL);
		return;
	}
	for (; i < b->n && msg_next_id(&it, &id); i++) {
		struct queue_delete_req a = { id, NULL, 0 };
		struct qrec r;
		uint64_t lsn;
		char *why;
		int rc = ops_auth_hidden(c, tok, id)
		    ? SLUICE_ENOTFOUND
		    : queue_decide_delete(c->q, c->now, &a, &r);

		if (rc == 0)
			rc = core_commit(c, &r, 0, &lsn);
		if ((why = batch_item(&o, i, rc)) != NULL)
			snprintf(why, OPS_ITEM_TEXT, "delete %" PRIu64 ": %s",
			    id,
			    rc == SLUICE_ENOTFOUND ? "no such task"
			                           : sluice_strerror(rc));
	}
	batch_reply(c, ctx, req->op, &o);
}
