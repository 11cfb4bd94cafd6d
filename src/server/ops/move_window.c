/* move_window - the ops of a move's key window (queue/move_place.c,
 * docs/scaling.md "Keys"): on the source, move_out's live (the keys of
 * the tube's live tasks, a page at a time by id) and keep (its drain
 * waits for the mover until move_end there); on the target, move_in's
 * kinds in the header's flags: pend (keyed puts of the tube are refused
 * SLUICE_EMOVING), place (each live key of the source held under the id
 * its copy will get) and ready (keyed puts go on). Each change is one
 * commit; each is idempotent, so a mover run again after a kill -9
 * makes nothing twice. Admin's, like the rest of the move. */
#include <stdlib.h>
#include <string.h>

#include "queue/queue.h"
#include "server/core/core.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

void
ops_move_live(
    struct core *c, struct face_ctx *ctx, const struct msg_move_req *m)
{
	struct msg_task *t;
	struct queue_move_live *k = ops_move_room(c, ctx, m, sizeof(*k), &t);
	size_t n;

	if (k == NULL)
		return;
	n = queue_move_live(c->q, m->tube.p, m->tube.len, m->after, k, m->max);
	for (size_t i = 0; i < n && i < m->max; i++) {
		struct msg_task *x = &t[i];

		x->id = k[i].id;
		x->state = (uint8_t)k[i].state;
		x->tube = m->tube;
		x->key = (struct msg_str) { k[i].key, k[i].key_len };
		x->payload = (struct msg_str) { "", 0 };
	}
	ops_move_page(c, ctx, m, t, n, k);
}

/* Commits `r` unless it is QREC_NONE; answers the count (1: changed
 * now, 0: it was so already). */
static void
commit_count(struct core *c, struct face_ctx *ctx, uint8_t op, int rc,
    const struct qrec *r, const struct msg_move_req *m)
{
	struct msg_rep rep = { .op = op };
	uint64_t lsn;

	if (rc == 0 && r->type != QREC_NONE)
		rc = core_commit(c, r, 0, &lsn);
	if (rc != 0) {
		core_reply_err(c, ctx, op, rc, "%s: tube '%.*s': %s",
		    op == MSG_OP_MOVE_IN ? "move_in" : "move_out",
		    (int)m->tube.len, m->tube.p, sluice_strerror(rc));
		return;
	}
	rep.move.n = r->type != QREC_NONE;
	ops_reply(c, ctx, &rep);
}

void
ops_move_keep(
    struct core *c, struct face_ctx *ctx, const struct msg_move_req *m)
{
	struct qrec r;
	int rc = queue_decide_move_keep(c->q, m->tube.p, m->tube.len, &r);

	commit_count(c, ctx, MSG_OP_MOVE_OUT, rc, &r, m);
}

/* move_in's placeholder of one key: its id here, or why not. */
static int
place_one(struct core *c, const struct msg_move_req *m,
    const struct msg_task *t, uint64_t *id)
{
	uint64_t lsn;
	struct qrec r;
	int rc;

	if (t->tube.len < m->tube.len ||
	    memcmp(t->tube.p, m->tube.p, m->tube.len) != 0)
		return SLUICE_EINVAL; /* not a tube of this move */
	rc = queue_decide_move_place(c->q, c->now, m->source.p, m->source.len,
	    t->tube.p, t->tube.len, t->id, t->key.p, t->key.len, &r, id);
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, 0, &lsn);
	return rc;
}

void
ops_move_window_in(
    struct core *c, struct face_ctx *ctx, const struct msg_move_req *m)
{
	struct qrec r;
	int rc;

	if (m->kind == MSG_MOVE_IN_PLACE) {
		ops_move_each(c, ctx, m, place_one);
		return;
	}
	rc = queue_decide_move_pend(c->q, m->tube.p, m->tube.len, m->source.p,
	    m->source.len, m->kind == MSG_MOVE_IN_PEND, &r);
	commit_count(c, ctx, MSG_OP_MOVE_IN, rc, &r, m);
}
