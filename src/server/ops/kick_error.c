/* kick_error - an operator's bulk kicks and their counts: a kick of the
 * buried tasks of a tube whose last error is one text (an error group
 * retried, kick with KICK_F_ERROR), and the dry runs of a kick and of a
 * delete_where (KICK_F_DRY, WHERE_F_DRY): the number of tasks the request
 * would act on, so that a person is asked "kick 37 buried tasks?" with
 * the number that is so.
 *
 * An error group is walked in id order, a page of the tube's buried tasks
 * at a time (queue_list after a cursor), the ids of a page that match
 * collected before any is kicked (a kick ends the views' borrow); each
 * kick is its own record, as ops_kick's are. A dry run decides as the
 * request would and commits nothing: a delete_where's count is the one
 * its decision would log. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "server/core/core.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

enum { PAGE = 256 }; /* buried tasks read at a time */

/* Whether task view `v` is buried with last error `e`. */
static bool
matches(const struct queue_task_view *v, const struct msg_str *e)
{
	return v->state == QUEUE_BURIED && v->last_error != NULL &&
	    v->last_error_len == e->len &&
	    memcmp(v->last_error, e->p, e->len) == 0;
}

/* Kicks (or with `dry` counts) up to k->n buried tasks of the tube whose
 * last error is k->error, lowest ids first; *count says how many. */
static int
kick_group(struct core *c, const struct msg_kick *k, uint64_t *count)
{
	struct queue_list_req lr = { k->tube.p, k->tube.len, QUEUE_BURIED,
		QUEUE_BY_ID, PAGE, 0 };
	struct queue_task_view *v = malloc(PAGE * sizeof(*v));
	uint64_t ids[PAGE];
	size_t n = 0, nids;
	int rc = 0;

	if (v == NULL)
		return SLUICE_ENOMEM;
	*count = 0;
	do {
		if ((rc = queue_list(c->q, c->now, &lr, v, &n)) != 0)
			break;
		nids = 0;
		for (size_t i = 0; i < n && *count + nids < k->n; i++)
			if (matches(&v[i], &k->error))
				ids[nids++] = v[i].id;
		if (n > 0)
			lr.after = v[n - 1].id;
		for (size_t i = 0; i < nids && rc == 0; i++) {
			struct queue_kick_req a = { ids[i], NULL, 0 };
			struct qrec r;
			uint64_t lsn;

			if (!k->dry &&
			    (rc = queue_decide_kick(c->q, c->now, &a, &r)) == 0)
				rc = core_commit(c, &r, WAL_RETRY, &lsn);
			if (rc == 0)
				(*count)++;
		}
	} while (rc == 0 && n == PAGE && *count < k->n);
	free(v);
	return rc;
}

/* A plain kick's dry run: min(n, buried), or with `delayed` and none
 * buried, min(n, delayed), as ops_kick would kick. */
static uint64_t
kick_dry(struct core *c, const struct msg_kick *k)
{
	struct queue_tube_stats ts;
	uint64_t have;

	if (queue_tube_stats(c->q, c->now, k->tube.p, k->tube.len, &ts) != 0)
		return 0;
	have = ts.buried == 0 && k->delayed ? ts.delayed : ts.buried;
	return have < k->n ? have : k->n;
}

bool
ops_kick_bulk(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	const struct msg_kick *k = &req->kick;
	struct msg_rep rep = { .op = MSG_OP_KICK };
	int rc;

	if (k->error.len == 0 && !k->dry)
		return false; /* a plain kick: ops_kick's */
	if (!msg_tube_valid(k->tube.p, k->tube.len)) {
		core_reply_err(
		    c, ctx, MSG_OP_KICK, SLUICE_ETUBE, "kick: bad tube name");
		return true;
	}
	if (k->error.len == 0) {
		rep.count = kick_dry(c, k);
		ops_reply(c, ctx, &rep);
		return true;
	}
	rc = kick_group(c, k, &rep.count);
	if (rc != 0 && rep.count == 0) {
		core_reply_err(c, ctx, MSG_OP_KICK, rc,
		    "kick the buried tasks of tube '%.*s' whose last error is "
		    "'%.*s': %s",
		    (int)k->tube.len, k->tube.p, (int)k->error.len, k->error.p,
		    sluice_strerror(rc));
		return true;
	}
	ops_reply(c, ctx, &rep);
	return true;
}
