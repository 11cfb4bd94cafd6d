/* read - the reads of tasks and of a tube's history: peek (by id, by key
 * and tube, the next of a state), list (a page of a tube's tasks),
 * errors (a tube's failures grouped by text), the hourly statistics,
 * the rolling history of events and the fair groups by backlog. Nothing is
 * written: the answers need the local log only, and a follower answers them
 * with what it applied. A reply is built within MSG_SIZE_MAX: what would not
 * fit is refused with the limit that would. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/batch.h"
#include "queue/group_list.h"
#include "server/core/core.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

enum { ERR_GROUPS_MAX = 1000 };

static void
reply_view(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
    int rc, const struct queue_task_view *v, const char *what)
{
	uint8_t op = req->op;
	struct msg_rep rep = { .op = op };
	const struct batch *b;

	if (rc != 0) {
		core_reply_err(
		    c, ctx, op, rc, "peek %s: %s", what, sluice_strerror(rc));
		return;
	}
	if (ops_task_wire_max(v, true) > OPS_REPLY_MAX - OPS_REPLY_HEAD_MAX) {
		core_reply_err(c, ctx, op, SLUICE_EMSGSIZE,
		    "peek %s: task %" PRIu64 " is over the reply limit of %d "
		    "bytes with its payloads; list it without payloads",
		    what, v->id, (int)OPS_REPLY_MAX);
		return;
	}
	ops_view_to_task(c, v, true, &rep.task);
	if (op == MSG_OP_PEEK && req->with_batch) {
		rep.task.with_batch = true;
		if ((b = queue_batch_of(c->q, v->id)) != NULL)
			rep.task.batch =
			    (struct msg_str) { b->name, b->name_len };
	}
	ops_reply_as(c, ctx, &rep,
	    &(struct core_reply_how) { .local = true,
	        .read = true,
	        .read_lsn = queue_task_dep_lsn(c->q, v->id) });
}

void
ops_peek(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	struct queue_task_view v;
	char what[200];
	int rc;

	switch (req->op) {
	case MSG_OP_PEEK:
		snprintf(what, sizeof(what), "%" PRIu64, req->id);
		rc = queue_peek(c->q, c->now, req->id, &v);
		break;
	case MSG_OP_PEEK_KEY:
		if (req->by_key.tube.len == 0) {
			ops_key_without_tube(c, ctx, req);
			return;
		}
		snprintf(what, sizeof(what), "key '%.*s' of tube '%.*s'",
		    (int)req->key.len, req->key.p, (int)req->by_key.tube.len,
		    req->by_key.tube.p);
		rc = queue_peek_key(c->q, c->now, req->by_key.tube.p,
		    req->by_key.tube.len, req->key.p, req->key.len, &v);
		break;
	default:
		snprintf(what, sizeof(what), "next %s of tube '%.*s'",
		    msg_state_name(req->peek_next.state),
		    (int)req->peek_next.tube.len, req->peek_next.tube.p);
		rc = queue_peek_next(c->q, c->now, req->peek_next.tube.p,
		    req->peek_next.tube.len, req->peek_next.state, &v);
		break;
	}
	reply_view(c, ctx, req, rc, &v, what);
}

/* How many of the n tasks fit in one reply of `budget` bytes, in order
 * (the first within OPS_REPLY_MAX). */
static size_t
list_fit(
    const struct queue_task_view *views, size_t n, bool payloads, size_t budget)
{
	size_t bytes = OPS_REPLY_HEAD_MAX, i;

	for (i = 0; i < n; i++) {
		size_t need = ops_task_wire_max(&views[i], payloads);

		if (need > OPS_REPLY_MAX - bytes ||
		    (i > 0 && bytes + need > budget))
			break;
		bytes += need;
	}
	return i;
}

void
ops_list(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct msg_req *req)
{
	size_t budget = ops_reply_budget(c, session);
	const struct msg_list *m = &req->list;
	struct queue_list_req lr = { m->tube.p, m->tube.len, m->state, 0,
		m->limit, m->after };
	struct msg_rep rep = { .op = MSG_OP_LIST };
	struct queue_task_view *views;
	struct msg_task *tasks;
	size_t n = 0, fit;
	int rc;

	lr.order = m->order == MSG_ORDER_ATTEMPTS ? QUEUE_BY_ATTEMPTS
	    : m->order == MSG_ORDER_AGE           ? QUEUE_BY_AGE
	    : m->order == MSG_ORDER_ID            ? QUEUE_BY_ID
	                                          : QUEUE_BY_RUN_AT;
	views = calloc(m->limit, sizeof(*views));
	tasks = calloc(m->limit, sizeof(*tasks));
	rc = views && tasks ? queue_list(c->q, c->now, &lr, views, &n)
	                    : SLUICE_ENOMEM;
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_LIST, rc, "list tube '%.*s': %s",
		    (int)m->tube.len, m->tube.p, sluice_strerror(rc));
	} else if ((fit = list_fit(views, n, m->payloads, budget)) < n) {
		core_reply_err(c, ctx, MSG_OP_LIST, SLUICE_EMSGSIZE,
		    "list tube '%.*s': %zu tasks%s are over the reply limit "
		    "of %zu bytes; the first %zu fit: ask for a limit of %zu%s",
		    (int)m->tube.len, m->tube.p, n,
		    m->payloads ? " with their payloads" : "", budget, fit,
		    fit > 0 ? fit : 1,
		    m->payloads ? ", or list without payloads" : "");
	} else {
		for (size_t i = 0; i < n; i++)
			ops_view_to_task(c, &views[i], m->payloads, &tasks[i]);
		struct core_reply_how how = { .local = true, .read = true };

		for (size_t i = 0; i < n; i++)
			if (queue_task_dep_lsn(c->q, views[i].id) >
			    how.read_lsn)
				how.read_lsn =
				    queue_task_dep_lsn(c->q, views[i].id);
		rep.tasks.n = (uint32_t)n;
		rep.tasks.tasks = tasks;
		ops_reply_as(c, ctx, &rep, &how);
	}
	free(views);
	free(tasks);
}

void
ops_errors(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	struct msg_rep rep = { .op = MSG_OP_ERRORS };
	struct queue_error_group *g;
	struct msg_error_count *e;
	size_t n = 0;
	int rc;

	/* Without a state, the buried tasks: a task keeps its last error
	 * when it is retried, so the others are not failures waiting for a
	 * person. MSG_ST_NONE is every live state, QUEUE_ANY. */
	int state = req->errors.set_state ? req->errors.state : MSG_ST_BURIED;

	g = calloc(ERR_GROUPS_MAX, sizeof(*g));
	e = calloc(ERR_GROUPS_MAX, sizeof(*e));
	rc = g && e ? queue_errors(c->q, c->now, req->tube.p, req->tube.len,
	                  state, g, ERR_GROUPS_MAX, &n)
	            : SLUICE_ENOMEM;
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_ERRORS, rc,
		    "errors of tube '%.*s': %s", (int)req->tube.len,
		    req->tube.p, sluice_strerror(rc));
	} else {
		for (size_t i = 0; i < n; i++) {
			e[i].text =
			    (struct msg_str) { g[i].text, g[i].text_len };
			e[i].count = g[i].count;
			e[i].nids = (uint8_t)g[i].nids;
			memcpy(e[i].ids, g[i].ids,
			    g[i].nids * sizeof(e[i].ids[0]));
		}
		rep.errors.ids = req->errors.ids;
		rep.errors.n = (uint32_t)n;
		rep.errors.errors = e;
		ops_reply(c, ctx, &rep);
	}
	free(g);
	free(e);
}

static void
dist_to_msg(const struct queue_dist *d, struct msg_dist *out)
{
	*out = (struct msg_dist) { d->count, d->total_ms, d->max_ms, d->p50_ms,
		d->p99_ms };
}

/* A tube's (or every tube's) statistics per hour: read-only, so followers
 * answer it with the same numbers (they come from the records applied). */
void
ops_stats_hourly(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	struct msg_rep rep = { .op = MSG_OP_STATS_HOURLY };
	struct queue_hour *hours = calloc(QUEUE_HOURS, sizeof(*hours));
	struct msg_hour *out = calloc(QUEUE_HOURS, sizeof(*out));
	size_t n = 0;
	int rc;

	rc = hours && out
	    ? queue_hourly(c->q, c->now, req->tube.p, req->tube.len, hours, &n)
	    : SLUICE_ENOMEM;
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_STATS_HOURLY, rc,
		    "hourly stats of tube '%.*s': %s", (int)req->tube.len,
		    req->tube.p,
		    rc == SLUICE_ENOTFOUND ? "no such tube"
		                           : sluice_strerror(rc));
	} else {
		for (size_t i = 0; i < n; i++) {
			out[i].start = (uint64_t)hours[i].start;
			out[i].acks = hours[i].acks;
			out[i].fails = hours[i].fails;
			out[i].buries = hours[i].buries;
			out[i].ttr_expired = hours[i].ttr_expired;
			dist_to_msg(&hours[i].work, &out[i].work);
			dist_to_msg(&hours[i].wait, &out[i].wait);
		}
		rep.hours.n = (uint32_t)n;
		rep.hours.hours = out;
		ops_reply(c, ctx, &rep);
	}
	free(hours);
	free(out);
}

_Static_assert((int)QUEUE_RATES == (int)MSG_HISTORY_KINDS &&
        (int)QUEUE_RATE_BURIED == (int)MSG_HK_BURIED,
    "history kinds");

/* The rolling history of events and depths (queue.h, "Rates"): what this
 * node applied, so a follower shows what it applied of the leader's. */
void
ops_history(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	static uint32_t v[QUEUE_RATES * QUEUE_RATE_SECS]; /* core thread */
	struct msg_rep rep = { .op = MSG_OP_HISTORY };
	uint32_t step = 1;
	int64_t start = 0;
	int n = queue_rates(c->q, c->now, req->history.tube.p,
	    req->history.tube.len, req->history.secs, &step, &start, v);

	if (n < 0) {
		core_reply_err(c, ctx, MSG_OP_HISTORY, -n,
		    "history of tube '%.*s': %s", (int)req->history.tube.len,
		    req->history.tube.p,
		    n == -SLUICE_ENOTFOUND ? "no such tube"
		                           : sluice_strerror(-n));
		return;
	}
	rep.history.start = (uint64_t)start;
	rep.history.step = step * 1000;
	rep.history.kinds = QUEUE_RATES;
	rep.history.n = (uint32_t)n;
	rep.history.values = v;
	ops_reply(c, ctx, &rep);
}

void
ops_groups(struct core *c, struct face_ctx *ctx, const struct msg_req *req)
{
	struct msg_rep rep = { .op = MSG_OP_GROUPS };
	const struct msg_groups_req *g = &req->groups;
	struct group_row *rows = calloc(g->limit, sizeof(*rows));
	struct msg_group_row *w = calloc(g->limit, sizeof(*w));
	uint64_t total = 0;
	size_t n = 0;
	int rc;

	rc = rows && w ? group_list(c->q, c->now, g->tube.p, g->tube.len, rows,
	                     g->limit, &n, &total)
	               : SLUICE_ENOMEM;
	if (rc == SLUICE_ENOTFOUND) {
		core_reply_err(c, ctx, MSG_OP_GROUPS, rc,
		    "groups of tube '%.*s': no such tube (a tube exists once a "
		    "task was put in it)",
		    (int)g->tube.len, g->tube.p);
	} else if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_GROUPS, rc,
		    "groups of %s%.*s%s: %s",
		    g->tube.len ? "tube '" : "every tube", (int)g->tube.len,
		    g->tube.p, g->tube.len ? "'" : "", sluice_strerror(rc));
	} else {
		for (size_t i = 0; i < n; i++)
			w[i] = (struct msg_group_row) {
				.tube = { rows[i].tube, rows[i].tube_len },
				.group = { rows[i].name, rows[i].name_len },
				.ready = rows[i].ready,
				.taken = rows[i].taken,
				.oldest_ready_age = rows[i].oldest_ready_age,
			};
		rep.groups.total = total;
		rep.groups.n = (uint32_t)n;
		rep.groups.rows = w;
		ops_reply(c, ctx, &rep);
	}
	free(rows);
	free(w);
}
