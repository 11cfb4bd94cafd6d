/* ops_read - the public functions of sluice.h that read and change
 * nothing: peek (by id, key or next), list, stats (whole, paged, by key),
 * errors, hourly statistics and history, and the functions that free what
 * they hand out. As in ops.c: check the arguments, build the request,
 * client_call(), copy the results out (result.c turns a decoded reply
 * into sluice.h's types). */
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "client/ops.h"
#include "client/result.h"

static int
call_task(
    struct sluice_client *c, const struct msg_req *q, struct sluice_task **task)
{
	struct msg_rep r;
	int rc;

	if (c == NULL || task == NULL)
		return ops_bad_arg(c, "peek: no place for the task");
	if ((rc = client_call(c, q, 0, &r)) != 0)
		return rc;
	return result_task(&r.task, task);
}

int
sluice_peek(struct sluice_client *c, uint64_t id, struct sluice_task **task)
{
	struct msg_req q = { .op = MSG_OP_PEEK, .id = id };

	return call_task(c, &q, task);
}

int
sluice_peek_key(struct sluice_client *c, const char *tube, const char *key,
    struct sluice_task **task)
{
	struct msg_req q = { .op = MSG_OP_PEEK_KEY,
		.by_key = { msg_cstr(key), ops_tube_or_default(tube) } };

	return call_task(c, &q, task);
}

int
sluice_peek_next(struct sluice_client *c, const char *tube, int state,
    struct sluice_task **task)
{
	struct msg_req q = { .op = MSG_OP_PEEK_NEXT,
		.peek_next = { .tube = ops_tube_or_default(tube) } };

	if (state != SLUICE_READY && state != SLUICE_DELAYED &&
	    state != SLUICE_BURIED && state != SLUICE_DONE &&
	    state != SLUICE_WAITING)
		return ops_bad_arg(c,
		    "peek: state must be ready, delayed, buried, done or "
		    "waiting");
	q.peek_next.state = (uint8_t)state;
	return call_task(c, &q, task);
}

int
sluice_stats(
    struct sluice_client *c, const char *tube, struct sluice_stats **stats)
{
	struct msg_req q = { .op = MSG_OP_STATS,
		.stats = { .tube = msg_cstr(tube), .settings = true } };
	struct msg_rep r;
	int rc;

	if (c == NULL || stats == NULL)
		return ops_bad_arg(c, "stats: no place for the result");
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	return result_stats(&r.stats, stats);
}

int
sluice_stats_page(struct sluice_client *c, uint32_t after, uint32_t limit,
    struct sluice_stats **stats, uint32_t *next)
{
	struct msg_req q = { .op = MSG_OP_STATS,
		.stats = { .settings = true,
		    .page = true,
		    .limit = limit,
		    .after = after } };
	struct msg_rep r;
	uint64_t v = 0;
	int rc;

	if (c == NULL || stats == NULL || next == NULL)
		return ops_bad_arg(c, "stats: no place for the result");
	if (limit == 0)
		return ops_bad_arg(c, "stats: a page of 1..10000 tubes");
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if ((rc = result_stats(&r.stats, stats)) != 0)
		return rc;
	(void)sluice_kv_get((*stats)->kv, (*stats)->nkv, "tubes_next", &v);
	*next = v > UINT32_MAX ? 0 : (uint32_t)v;
	return 0;
}

void
sluice_stats_free(struct sluice_stats *stats)
{
	free(stats);
}

int
sluice_list(struct sluice_client *c, const char *tube, int state, int order,
    uint32_t limit, int payloads, struct sluice_task **tasks, size_t *n)
{
	return sluice_list_after(
	    c, tube, state, order, 0, limit, payloads, tasks, n);
}

int
sluice_list_after(struct sluice_client *c, const char *tube, int state,
    int order, uint64_t after, uint32_t limit, int payloads,
    struct sluice_task **tasks, size_t *n)
{
	struct msg_req q = { .op = MSG_OP_LIST,
		.list = { .tube = ops_tube_or_default(tube),
		    .limit = limit,
		    .payloads = payloads != 0,
		    .after = after } };
	struct msg_rep r;
	int rc;

	if (c == NULL || tasks == NULL || n == NULL)
		return ops_bad_arg(c, "list: no place for the tasks");
	if (state < 0 || state > SLUICE_WAITING || order < 0 || order > 255)
		return ops_bad_arg(c, "list: unknown state or order");
	q.list.state = (uint8_t)state;
	q.list.order = (uint8_t)order;
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if ((rc = result_tasks(&r.tasks, tasks)) != 0)
		return rc;
	*n = r.tasks.n;
	return 0;
}

int
sluice_errors(struct sluice_client *c, const char *tube,
    struct sluice_error_count **errors, size_t *n)
{
	return sluice_errors_state(c, tube, SLUICE_BURIED, errors, n);
}

int
sluice_errors_state(struct sluice_client *c, const char *tube, int state,
    struct sluice_error_count **errors, size_t *n)
{
	struct msg_req q = { .op = MSG_OP_ERRORS,
		.errors = { ops_tube_or_default(tube), true } };
	struct msg_rep r;
	int rc;

	if (c == NULL || errors == NULL || n == NULL)
		return ops_bad_arg(c, "errors: no place for the result");
	if (state != 0 && state != SLUICE_READY && state != SLUICE_DELAYED &&
	    state != SLUICE_TAKEN && state != SLUICE_BURIED)
		return ops_bad_arg(c,
		    "errors: the state is none of ready, delayed, taken, "
		    "buried or 0 (every live state)");
	/* Buried is what a request without the flag counts: an older
	 * server then still answers. */
	q.errors.set_state = state != SLUICE_BURIED;
	q.errors.state = (uint8_t)state;
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	return result_errors(&r.errors, errors, n);
}

void
sluice_errors_free(struct sluice_error_count *errors)
{
	free(errors);
}

int
sluice_groups(struct sluice_client *c, const char *tube, uint32_t limit,
    struct sluice_group **groups, size_t *n, uint64_t *total)
{
	struct msg_req q = { .op = MSG_OP_GROUPS,
		.groups = { .limit = limit } };
	struct msg_rep r;
	int rc;

	if (c == NULL || groups == NULL || n == NULL)
		return ops_bad_arg(c, "groups: no place for the result");
	if (limit == 0)
		return ops_bad_arg(c, "groups: a limit of 0; it is 1..1000");
	if (limit > SLUICE_GROUPS_MAX) {
		client_errmsg(c, "groups: a limit of %u is over 1000", limit);
		return SLUICE_ELIMIT;
	}
	q.groups.tube = tube != NULL && strcmp(tube, "*") == 0
	    ? msg_cstr("")
	    : ops_tube_or_default(tube);
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if ((rc = result_groups(&r.groups, groups, n)) != 0)
		return rc;
	if (total != NULL)
		*total = r.groups.total;
	return 0;
}

void
sluice_groups_free(struct sluice_group *groups)
{
	free(groups);
}

static void
dist_from_msg(const struct msg_dist *d, struct sluice_dist *out)
{
	*out =
	    (struct sluice_dist) { d->count, d->total, d->max, d->p50, d->p99 };
}

int
sluice_stats_hourly(struct sluice_client *c, const char *tube,
    struct sluice_hour **hours, size_t *n)
{
	struct msg_req q = { .op = MSG_OP_STATS_HOURLY,
		.tube = msg_cstr(tube) };
	struct msg_rep r;
	struct msg_hour h;
	struct sluice_hour *out;
	size_t i = 0;
	int rc;

	if (c == NULL || hours == NULL || n == NULL)
		return ops_bad_arg(c, "stats_hourly: no place for the result");
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if ((out = calloc(r.hours.n + 1, sizeof(*out))) == NULL)
		return SLUICE_ENOMEM;
	while (msg_next_hour(&r.hours.it, &h)) {
		out[i].start = h.start;
		out[i].acks = h.acks;
		out[i].fails = h.fails;
		out[i].buries = h.buries;
		out[i].ttr_expired = h.ttr_expired;
		dist_from_msg(&h.work, &out[i].work);
		dist_from_msg(&h.wait, &out[i].wait);
		i++;
	}
	*hours = out;
	*n = i;
	return 0;
}

void
sluice_stats_hourly_free(struct sluice_hour *hours)
{
	free(hours);
}

int
sluice_history(struct sluice_client *c, const char *tube, uint32_t secs,
    struct sluice_history **out)
{
	struct msg_req q = { .op = MSG_OP_HISTORY,
		.history = { msg_cstr(tube), secs } };
	struct msg_rep r;
	int rc;

	if (c == NULL || out == NULL)
		return ops_bad_arg(c, "history: no place for the result");
	if (secs < 1 || secs > MSG_HISTORY_SECS)
		return ops_bad_arg(c, "history: secs is 1..3600");
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	return result_history(&r.history, out);
}

void
sluice_history_free(struct sluice_history *h)
{
	free(h);
}
