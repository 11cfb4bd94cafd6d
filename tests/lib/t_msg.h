/* t_msg - turns a decoded message (whose lists are iterators) into one the
 * encoder takes (whose lists are arrays), so tests and the fuzzer can check
 * that whatever decodes encodes again, and to the same bytes the second
 * time. Header-only: the fuzz targets do not link t_lib.
 *
 * t_mat_req()/t_mat_rep() fill the array fields of `*m` in place; arrays
 * live in `mat` until t_mat_free(). They return false when out of memory. */
#ifndef SLUICE_T_MSG_H
#define SLUICE_T_MSG_H

#include <stdbool.h>
#include <stdlib.h>

#include "proto/msg.h"

struct t_mat {
	void *ptrs[64]; /* every allocation, to free */
	int n;
	bool failed;
};

static inline void *
t_mat_alloc(struct t_mat *mat, size_t n, size_t size)
{
	void *p;

	if (mat->n == (int)(sizeof(mat->ptrs) / sizeof(mat->ptrs[0]))) {
		mat->failed = true;
		return NULL;
	}
	p = calloc(n ? n : 1, size);
	if (p == NULL)
		mat->failed = true;
	else
		mat->ptrs[mat->n++] = p;
	return p;
}

static inline void
t_mat_free(struct t_mat *mat)
{
	for (int i = 0; i < mat->n; i++)
		free(mat->ptrs[i]);
	mat->n = 0;
	mat->failed = false;
}

static inline void
t_mat_kvs(struct msg_kvs *k, struct t_mat *mat)
{
	struct msg_kv *kvs = t_mat_alloc(mat, k->n, sizeof(*kvs));
	struct msg_iter it = k->it;

	if (kvs == NULL)
		return;
	for (uint32_t i = 0; msg_next_kv(&it, &kvs[i]); i++)
		;
	k->kvs = kvs;
}

static inline bool
t_mat_req(struct msg_req *q, struct t_mat *mat)
{
	if (q->op == MSG_OP_PUT_BATCH) {
		struct msg_put *v =
		    t_mat_alloc(mat, q->put_batch.n, sizeof(*v));
		struct msg_iter it = q->put_batch.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_put(&it, &v[i]); i++)
				;
			q->put_batch.items = v;
		}
	} else if (q->op == MSG_OP_ACK_BATCH) {
		struct msg_ack_item *v =
		    t_mat_alloc(mat, q->ack_batch.n, sizeof(*v));
		struct msg_iter it = q->ack_batch.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_ack_item(&it, &v[i]); i++)
				;
			q->ack_batch.items = v;
		}
	} else if (q->op == MSG_OP_DELETE_BATCH) {
		uint64_t *v = t_mat_alloc(mat, q->delete_batch.n, sizeof(*v));
		struct msg_iter it = q->delete_batch.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_id(&it, &v[i]); i++)
				;
			q->delete_batch.ids = v;
		}
	} else if (q->op == MSG_OP_TAKE) {
		struct msg_str *v =
		    t_mat_alloc(mat, q->take.ntubes, sizeof(*v));
		struct msg_iter it = q->take.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_str(&it, &v[i]); i++)
				;
			q->take.tubes = v;
		}
	} else if (q->op == MSG_OP_MOVE_OUT && q->move.kind == MSG_MOVE_DROP) {
		uint64_t *ids = t_mat_alloc(mat, q->move.n, sizeof(*ids));
		uint64_t *leases = t_mat_alloc(mat, q->move.n, sizeof(*leases));
		struct msg_iter it = q->move.it;

		if (ids != NULL && leases != NULL) {
			for (uint32_t i = 0;
			     msg_next_move_drop(&it, &ids[i], &leases[i]); i++)
				;
			q->move.ids = ids;
			q->move.leases = leases;
		}
	} else if (q->op == MSG_OP_MOVE_IN) {
		struct msg_task *v = t_mat_alloc(mat, q->move.n, sizeof(*v));
		struct msg_iter it = q->move.tasks_it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_task(&it, &v[i]); i++)
				;
			q->move.tasks = v;
		}
	}
	return !mat->failed;
}

static inline bool
t_mat_rep(struct msg_rep *m, struct t_mat *mat)
{
	if (m->status != 0)
		return true;
	switch (m->op) {
	case MSG_OP_PUT_BATCH: {
		struct msg_put_res *v =
		    t_mat_alloc(mat, m->put_batch.n, sizeof(*v));
		struct msg_iter it = m->put_batch.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_put_res(&it, &v[i]); i++)
				;
			m->put_batch.items = v;
		}
		break;
	}
	case MSG_OP_ACK_BATCH:
	case MSG_OP_DELETE_BATCH: {
		struct msg_item_res *v =
		    t_mat_alloc(mat, m->batch.n, sizeof(*v));
		struct msg_iter it = m->batch.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_item_res(&it, &v[i]); i++)
				;
			m->batch.items = v;
		}
		break;
	}
	case MSG_OP_TAKE:
	case MSG_OP_LIST:
	case MSG_OP_JOB: {
		struct msg_task *v = t_mat_alloc(mat, m->tasks.n, sizeof(*v));
		struct msg_iter it = m->tasks.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_task(&it, &v[i]); i++)
				;
			m->tasks.tasks = v;
		}
		break;
	}
	case MSG_OP_STATS: {
		struct msg_tube_stats *v =
		    t_mat_alloc(mat, m->stats.ntubes, sizeof(*v));
		struct msg_iter it = m->stats.it;

		t_mat_kvs(&m->stats.totals.more, mat);
		t_mat_kvs(&m->stats.more, mat);
		if (v == NULL)
			break;
		/* Tubes' key/values share one allocation per list; with
		 * more tubes than slots the fuzzer just skips the check. */
		for (uint32_t i = 0; msg_next_tube_stats(&it, &v[i]); i++)
			t_mat_kvs(&v[i].more, mat);
		m->stats.tubes = v;
		break;
	}
	case MSG_OP_STATS_HOURLY: {
		struct msg_hour *v = t_mat_alloc(mat, m->hours.n, sizeof(*v));
		struct msg_iter it = m->hours.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_hour(&it, &v[i]); i++)
				;
			m->hours.hours = v;
		}
		break;
	}
	case MSG_OP_CLUSTER: {
		struct msg_member *v =
		    t_mat_alloc(mat, m->cluster.n, sizeof(*v));
		struct msg_iter it = m->cluster.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_member(&it, &v[i]); i++)
				;
			m->cluster.members = v;
		}
		break;
	}
	case MSG_OP_ERRORS: {
		struct msg_error_count *v =
		    t_mat_alloc(mat, m->errors.n, sizeof(*v));
		struct msg_iter it = m->errors.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_error_count(&it, &v[i]);
			     i++)
				;
			m->errors.errors = v;
		}
		break;
	}
	case MSG_OP_GROUPS: {
		struct msg_group_row *v =
		    t_mat_alloc(mat, m->groups.n, sizeof(*v));
		struct msg_iter it = m->groups.it;

		if (v != NULL) {
			for (uint32_t i = 0; msg_next_group_row(&it, &v[i]);
			     i++)
				;
			m->groups.rows = v;
		}
		break;
	}
	case MSG_OP_MOVE_OUT:
	case MSG_OP_MOVE_IN:
	case MSG_OP_MOVE_END: {
		/* The reply's flags, not its op, shape it: a hold's tasks
		 * (ntasks > 0), or move_in's results (an iterator over n), or
		 * a count alone (nothing to turn into an array). */
		if (m->move.ntasks > 0) {
			struct msg_task *v =
			    t_mat_alloc(mat, m->move.ntasks, sizeof(*v));
			struct msg_iter it = m->move.tasks_it;

			if (v != NULL) {
				for (uint32_t i = 0; msg_next_task(&it, &v[i]);
				     i++)
					;
				m->move.tasks = v;
			}
		} else if (m->move.it.left > 0) {
			struct msg_move_res *v =
			    t_mat_alloc(mat, m->move.n, sizeof(*v));
			struct msg_iter it = m->move.it;

			if (v != NULL) {
				for (uint32_t i = 0;
				     msg_next_move_res(&it, &v[i]); i++)
					;
				m->move.res = v;
			}
		}
		break;
	}
	}
	return !mat->failed;
}

#endif
