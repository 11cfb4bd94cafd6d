/* move_keys - a tube's key reservations in a move (queue/move_key.c):
 * move_out's keys on the source answers the reservations of the tube's
 * keys (tasks completed there, within their dedup window), a page at a
 * time by the id of their task; move_in on the target takes each as a
 * task in state done and reserves its key until the same time (one
 * commit each, as a copy's). The mover asks for them once the tube's
 * tasks are copied and the ones taken there have ended, and once before
 * (so a put of a key completed before the move is answered at the target
 * from early on); a reservation sent again makes nothing. */
#include <stdlib.h>

#include "queue/queue.h"
#include "server/core/core.h"
#include "server/ops/ops.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

void *
ops_move_room(struct core *c, struct face_ctx *ctx,
    const struct msg_move_req *m, size_t size, struct msg_task **t)
{
	void *k = calloc(m->max, size);

	*t = calloc(m->max, sizeof(**t));
	if (k == NULL || *t == NULL) {
		free(k);
		free(*t);
		core_reply_err(c, ctx, MSG_OP_MOVE_OUT, SLUICE_ENOMEM, NULL);
		return NULL;
	}
	return k;
}

void
ops_move_page(struct core *c, struct face_ctx *ctx,
    const struct msg_move_req *m, struct msg_task *t, size_t n, void *k)
{
	struct msg_rep rep = { .op = MSG_OP_MOVE_OUT };
	size_t bytes = OPS_REPLY_HEAD_MAX;
	uint32_t fit = 0;

	for (; fit < n && fit < m->max; fit++) {
		/* a task record's fixed and done fields, generously */
		size_t need = 256 + t[fit].tube.len + t[fit].key.len;

		if (need > OPS_REPLY_MAX - bytes)
			break; /* the rest in the next page */
		bytes += need;
	}
	rep.move.ntasks = fit;
	rep.move.tasks = t;
	ops_reply(c, ctx, &rep);
	free(k);
	free(t);
}

void
ops_move_keys(
    struct core *c, struct face_ctx *ctx, const struct msg_move_req *m)
{
	struct msg_task *t;
	struct queue_move_key *k = ops_move_room(c, ctx, m, sizeof(*k), &t);
	size_t n;

	if (k == NULL)
		return;
	n = queue_move_keys(c->q, m->tube.p, m->tube.len, m->after, k, m->max);
	for (size_t i = 0; i < n && i < m->max; i++) {
		struct msg_task *x = &t[i];

		x->id = k[i].id;
		x->state = MSG_ST_DONE;
		x->tube = m->tube;
		x->key = (struct msg_str) { k[i].key, k[i].key_len };
		x->run_at = (uint64_t)k[i].expires;
		x->done.kept_until = (uint64_t)k[i].expires;
		x->version = k[i].version;
	}
	ops_move_page(c, ctx, m, t, n, k);
}

int
ops_move_key_in(struct core *c, const struct msg_move_req *m,
    const struct msg_task *t, uint64_t *id)
{
	struct queue_move_key k = {
		.id = t->id,
		.key = t->key.p,
		.key_len = t->key.len,
		.expires = t->run_at > (uint64_t)QREC_TIME_MAX
		    ? -1
		    : (int64_t)t->run_at,
		.version = t->version,
	};
	struct qrec r;
	uint64_t lsn;
	int rc;

	rc = queue_decide_move_key(c->q, c->now, m->source.p, m->source.len,
	    t->tube.p, t->tube.len, &k, &r, id);
	if (rc == 0 && r.type != QREC_NONE)
		rc = core_commit(c, &r, 0, &lsn);
	return rc; /* *id 0: it had expired, nothing was carried */
}
