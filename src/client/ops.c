/* ops - one public function per operation of sluice.h: check the
 * arguments, build the request, client_call(), copy the results out.
 * Nothing here touches the connection. The operations that read (peek,
 * list, stats, errors, hourly statistics, history) and the functions
 * that free what they return are in ops_read.c, put and put_batch in
 * ops_put.c. */
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "client/ops.h"
#include "client/result.h"

struct msg_str
ops_tube_or_default(const char *tube)
{
	return msg_cstr(tube ? tube : SLUICE_DEFAULT_TUBE);
}

int
ops_bad_arg(struct sluice_client *c, const char *what)
{
	if (c != NULL)
		client_errmsg(c, "%s", what);
	return SLUICE_EINVAL;
}

static void
copy_after(const struct msg_rep *r, struct sluice_after *after)
{
	if (after == NULL)
		return;
	after->id = r->after.id;
	after->state = r->after.state;
	after->run_at = r->after.run_at;
	after->deadline = r->after.deadline;
	after->replaced = r->after.replaced;
}

/* ---- take and the lease operations ------------------------------------ */

void
sluice_task_free(struct sluice_task *tasks)
{
	free(tasks);
}

int
sluice_take(struct sluice_client *c, const struct sluice_take_opts *o,
    struct sluice_task **tasks, size_t *n)
{
	static const char *const dflt_tubes[] = { SLUICE_DEFAULT_TUBE };
	struct sluice_take_opts dflt = { 0 };
	struct msg_str tubes[MSG_TAKE_TUBES_MAX];
	struct msg_req q = { .op = MSG_OP_TAKE };
	const char *const *names;
	size_t ntubes;
	struct msg_rep r;
	int rc;

	if (c == NULL || tasks == NULL || n == NULL)
		return ops_bad_arg(c, "take: no place for the tasks");
	if (o == NULL)
		o = &dflt;
	names = o->tubes ? o->tubes : dflt_tubes;
	ntubes = o->tubes ? o->ntubes : 1;
	if (ntubes == 0)
		return ops_bad_arg(c, "take: no tube");
	if (ntubes > MSG_TAKE_TUBES_MAX) {
		client_errmsg(c, "take: %zu tubes, at most %d", ntubes,
		    MSG_TAKE_TUBES_MAX);
		return SLUICE_ELIMIT;
	}
	for (size_t i = 0; i < ntubes; i++)
		tubes[i] = msg_cstr(names[i]);
	q.take.wait = o->wait_ms;
	q.take.max = o->max ? o->max : 1;
	q.take.detach = o->detach != 0;
	q.take.strict = o->strict_order != 0;
	q.take.durable = o->durable != 0;
	q.take.ntubes = (uint32_t)ntubes;
	q.take.tubes = tubes;
	if ((rc = client_call(c, &q,
	         (int64_t)(o->wait_ms > INT32_MAX ? INT32_MAX : o->wait_ms),
	         &r)) != 0)
		return rc;
	if (r.tasks.n == 0) {
		client_errmsg(c, "nothing to take within %llu ms",
		    (unsigned long long)o->wait_ms);
		return SLUICE_ETIMEDOUT;
	}
	if (r.tasks.n > q.take.max) {
		client_errmsg(
		    c, "take: %u tasks for a max of %u", r.tasks.n, q.take.max);
		return SLUICE_EPROTO;
	}
	if ((rc = result_tasks(&r.tasks, tasks)) != 0)
		return rc;
	*n = r.tasks.n;
	return 0;
}

/* The lease of a request: SLUICE_FORCE sends none, with the force flag. */
static uint64_t
lease_or_force(uint64_t lease, bool *force)
{
	*force = lease == SLUICE_FORCE;
	return *force ? 0 : lease;
}

/* ack, release, fail, touch, bury, kick_id: a request, then `after`. */
static int
call_after(struct sluice_client *c, const struct msg_req *q,
    struct sluice_after *after)
{
	struct msg_rep r;
	int rc;

	if (c == NULL)
		return SLUICE_EINVAL;
	if ((rc = client_call(c, q, 0, &r)) != 0)
		return rc;
	copy_after(&r, after);
	return 0;
}

int
sluice_ack(struct sluice_client *c, uint64_t id, uint64_t lease,
    const char *to_tube, struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_ACK,
		.ack = { .id = id, .to = msg_cstr(to_tube) } };

	q.ack.lease = lease_or_force(lease, &q.ack.force);
	q.ack.report = true;

	return call_after(c, &q, after);
}

int
sluice_ack_opts(struct sluice_client *c, uint64_t id, uint64_t lease,
    const struct sluice_ack_opts *o, struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_ACK, .ack = { .id = id } };

	if (o != NULL) {
		q.ack.to = msg_cstr(o->to_tube);
		q.ack.result = msg_cstr(o->result);
	}
	if (q.ack.result.len > MSG_RESULT_MAX) {
		client_errmsg(c,
		    "ack: a result of %zu bytes: at most %d (64 KiB less one)",
		    q.ack.result.len, MSG_RESULT_MAX);
		return SLUICE_ERESULT;
	}
	q.ack.lease = lease_or_force(lease, &q.ack.force);
	q.ack.report = true;

	return call_after(c, &q, after);
}

int
sluice_release(struct sluice_client *c, uint64_t id, uint64_t lease,
    uint64_t delay_ms, int64_t priority, struct sluice_after *after)
{
	struct sluice_release_opts o = { delay_ms, priority, 0 };

	return sluice_release_opts(c, id, lease, &o, after);
}

int
sluice_release_opts(struct sluice_client *c, uint64_t id, uint64_t lease,
    const struct sluice_release_opts *o, struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_RELEASE,
		.release = { .id = id, .delay = o->delay_ms } };

	q.release.lease = lease_or_force(lease, &q.release.force);
	q.release.report = true;
	q.release.front = o->front != 0;

	if (o->priority > (int64_t)UINT32_MAX)
		return ops_bad_arg(c, "release: priority above 4294967295");
	if (o->front && o->delay_ms != 0)
		return ops_bad_arg(c,
		    "release: front takes no delay (the task "
		    "goes back at its place at once)");
	if (o->priority >= 0) {
		q.release.set_priority = true;
		q.release.priority = (uint32_t)o->priority;
	}
	return call_after(c, &q, after);
}

int
sluice_untake(struct sluice_client *c, uint64_t id, uint64_t lease,
    struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_RELEASE, .release = { .id = id } };

	q.release.lease = lease_or_force(lease, &q.release.force);
	q.release.report = true;
	q.release.untake = true;
	return call_after(c, &q, after);
}

int
sluice_fail(struct sluice_client *c, uint64_t id, uint64_t lease,
    const char *error, int64_t delay_ms, struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_FAIL,
		.fail = { .id = id, .error = msg_cstr(error) } };

	q.fail.lease = lease_or_force(lease, &q.fail.force);
	q.fail.report = true;

	if (delay_ms >= 0) {
		q.fail.set_delay = true;
		q.fail.delay = (uint64_t)delay_ms;
	}
	return call_after(c, &q, after);
}

int
sluice_fail_fatal(struct sluice_client *c, uint64_t id, uint64_t lease,
    const char *error, struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_FAIL,
		.fail = { .id = id, .error = msg_cstr(error), .fatal = true } };

	q.fail.lease = lease_or_force(lease, &q.fail.force);
	q.fail.report = true;
	return call_after(c, &q, after);
}

int
sluice_touch(struct sluice_client *c, uint64_t id, uint64_t lease,
    struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_TOUCH, .lease = { .id = id } };

	q.lease.lease = lease_or_force(lease, &q.lease.force);

	return call_after(c, &q, after);
}

int
sluice_bury(struct sluice_client *c, uint64_t id, uint64_t lease,
    struct sluice_after *after)
{
	return sluice_bury_error(c, id, lease, NULL, after);
}

int
sluice_bury_error(struct sluice_client *c, uint64_t id, uint64_t lease,
    const char *error, struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_BURY,
		.lease = { .id = id, .error = msg_cstr(error) } };

	q.lease.lease = lease_or_force(lease, &q.lease.force);
	q.lease.report = true;

	return call_after(c, &q, after);
}

/* ---- update ------------------------------------------------------------ */

void
sluice_update_opts_init(struct sluice_update_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->priority = -1;
	o->delay_ms = -1;
	o->ttr_ms = -1;
	o->max_attempts = -1;
}

int
sluice_update(struct sluice_client *c, uint64_t id,
    const struct sluice_update_opts *o, struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_UPDATE, .update = { .id = id } };
	struct msg_update *u = &q.update;

	if (o == NULL)
		return ops_bad_arg(c, "update: nothing to change");
	if (o->priority > (int64_t)UINT32_MAX ||
	    o->max_attempts > (int64_t)UINT32_MAX)
		return ops_bad_arg(
		    c, "update: priority or max_attempts above 4294967295");
	if (o->run_at != 0 && o->delay_ms >= 0)
		return ops_bad_arg(c, "update: a delay or a run_at, not both");
	if (o->set_payload && o->payload == NULL && o->len > 0)
		return ops_bad_arg(c, "update: payload missing");
	u->set_priority = o->priority >= 0;
	u->priority = u->set_priority ? (uint32_t)o->priority : 0;
	u->set_delay = o->delay_ms >= 0;
	u->set_at = o->run_at != 0;
	u->when = u->set_at ? o->run_at
	    : u->set_delay  ? (uint64_t)o->delay_ms
	                    : 0;
	u->set_ttr = o->ttr_ms >= 0;
	u->ttr = u->set_ttr ? (uint64_t)o->ttr_ms : 0;
	u->set_max_attempts = o->max_attempts >= 0;
	u->max_attempts = u->set_max_attempts ? (uint32_t)o->max_attempts : 0;
	u->set_payload = o->set_payload != 0;
	if (u->set_payload) {
		u->payload.p = o->len ? o->payload : "";
		u->payload.len = o->len;
	}
	if (!u->set_priority && !u->set_delay && !u->set_at && !u->set_ttr &&
	    !u->set_max_attempts && !u->set_payload)
		return ops_bad_arg(c, "update: nothing to change");
	return call_after(c, &q, after);
}

/* ---- ack_batch and delete_batch ---------------------------------------- */

/* n within 1..SLUICE_BATCH_MAX and the arrays there: 0, or the error. */
int
ops_batch_args(struct sluice_client *c, const char *what, const void *in,
    size_t n, const void *out)
{
	if (c == NULL || in == NULL || out == NULL || n == 0) {
		client_errmsg(c, "%s: no tasks", what);
		return SLUICE_EINVAL;
	}
	if (n > SLUICE_BATCH_MAX) {
		client_errmsg(
		    c, "%s: %zu tasks, at most %d", what, n, SLUICE_BATCH_MAX);
		return SLUICE_ELIMIT;
	}
	return 0;
}

/* Sends a batch request of `n` items and copies each item's result out;
 * their texts live in c->texts until the next call. */
int
ops_call_batch(struct sluice_client *c, const struct msg_req *q, size_t n,
    const char *what, struct sluice_result *results)
{
	struct msg_item_res ir;
	struct msg_iter it;
	struct msg_rep r;
	size_t off = 0;
	int rc;

	if ((rc = client_call(c, q, 0, &r)) != 0)
		return rc;
	if (r.batch.n != n) {
		client_errmsg(
		    c, "%s: %u results for %zu tasks", what, r.batch.n, n);
		return SLUICE_EPROTO;
	}
	/* The texts first (the buffer may move as it grows), then the
	 * results pointing into it. */
	buf_reset(&c->texts);
	it = r.batch.it;
	while (msg_next_item_res(&it, &ir)) {
		buf_put(&c->texts, ir.message.p, ir.message.len);
		buf_put_u8(&c->texts, 0);
	}
	if (buf_failed(&c->texts))
		return SLUICE_ENOMEM;
	for (size_t i = 0; msg_next_item_res(&r.batch.it, &ir); i++) {
		results[i].rc = ir.status;
		results[i].errmsg = (const char *)c->texts.data + off;
		if (ir.status != 0 && ir.message.len == 0)
			results[i].errmsg = sluice_strerror(ir.status);
		off += ir.message.len + 1;
	}
	return 0;
}

int
sluice_ack_batch(struct sluice_client *c, const struct sluice_lease *items,
    size_t n, struct sluice_result *results)
{
	struct msg_req q = { .op = MSG_OP_ACK_BATCH };
	struct msg_ack_item *v;
	int rc;

	if ((rc = ops_batch_args(c, "ack batch", items, n, results)) != 0)
		return rc;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return SLUICE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i].id = items[i].id;
		v[i].lease = items[i].lease;
	}
	q.ack_batch.n = (uint32_t)n;
	q.ack_batch.messages = true;
	q.ack_batch.items = v;
	rc = ops_call_batch(c, &q, n, "ack batch", results);
	free(v);
	return rc;
}

int
sluice_delete_batch(struct sluice_client *c, const uint64_t *ids, size_t n,
    struct sluice_result *results)
{
	struct msg_req q = { .op = MSG_OP_DELETE_BATCH };
	int rc;

	if ((rc = ops_batch_args(c, "delete batch", ids, n, results)) != 0)
		return rc;
	q.delete_batch.n = (uint32_t)n;
	q.delete_batch.messages = true;
	q.delete_batch.ids = ids;
	return ops_call_batch(c, &q, n, "delete batch", results);
}

/* ---- admin -------------------------------------------------------------- */

/* Requests whose reply is one u64 (kick, flush, delete_key, pause,
 * snapshot, promote): `*out` is optional. */
static int
call_u64(struct sluice_client *c, const struct msg_req *q, uint64_t *out)
{
	struct msg_rep r;
	int rc;

	if (c == NULL)
		return SLUICE_EINVAL;
	if ((rc = client_call(c, q, 0, &r)) != 0)
		return rc;
	if (out != NULL)
		*out = r.count;
	return 0;
}

int
sluice_kick(
    struct sluice_client *c, const char *tube, uint32_t n, uint64_t *kicked)
{
	struct msg_req q = { .op = MSG_OP_KICK,
		.kick = { .tube = ops_tube_or_default(tube), .n = n } };

	return call_u64(c, &q, kicked);
}

int
sluice_kick_opts(struct sluice_client *c, const char *tube,
    const struct sluice_kick_opts *o, uint64_t *kicked)
{
	struct msg_req q = { .op = MSG_OP_KICK,
		.kick = { .tube = ops_tube_or_default(tube),
		    .n = o->n,
		    .delayed = o->delayed != 0,
		    .error = msg_cstr(o->error != NULL ? o->error : ""),
		    .dry = o->dry != 0 } };

	if (o->delayed && q.kick.error.len > 0)
		return ops_bad_arg(c,
		    "kick: an error group is of buried tasks, not delayed "
		    "ones");
	return call_u64(c, &q, kicked);
}

int
sluice_kick_id(struct sluice_client *c, uint64_t id, struct sluice_after *after)
{
	struct msg_req q = { .op = MSG_OP_KICK_ID, .id = id };

	return call_after(c, &q, after);
}

int
sluice_delete(struct sluice_client *c, uint64_t id)
{
	struct msg_req q = { .op = MSG_OP_DELETE, .id = id };
	struct msg_rep r;

	if (c == NULL)
		return SLUICE_EINVAL;
	return client_call(c, &q, 0, &r);
}

int
sluice_delete_key(
    struct sluice_client *c, const char *tube, const char *key, uint64_t *id)
{
	struct msg_req q = { .op = MSG_OP_DELETE_KEY,
		.by_key = { msg_cstr(key), ops_tube_or_default(tube) } };

	return call_u64(c, &q, id);
}

int
sluice_flush(struct sluice_client *c, const char *tube, uint64_t *deleted)
{
	struct msg_req q = { .op = MSG_OP_FLUSH,
		.tube = ops_tube_or_default(tube) };

	return call_u64(c, &q, deleted);
}

int
sluice_delete_where(struct sluice_client *c, const char *tube, int state,
    uint64_t older_ms, uint64_t *deleted)
{
	struct msg_req q = { .op = MSG_OP_DELETE_WHERE,
		.where = { .tube = ops_tube_or_default(tube),
		    .state = (uint8_t)state,
		    .older = older_ms } };

	if (state != SLUICE_READY && state != SLUICE_DELAYED &&
	    state != SLUICE_BURIED && state != SLUICE_DONE)
		return ops_bad_arg(c,
		    "delete_where: the state is ready, delayed, buried or "
		    "done");
	return call_u64(c, &q, deleted);
}

/* sluice_delete_where_opts, or with `dry` its count alone. */
static int
delete_where(struct sluice_client *c, const char *tube,
    const struct sluice_delete_where_opts *o, bool dry, uint64_t *deleted)
{
	struct msg_req q = { .op = MSG_OP_DELETE_WHERE,
		.where = { .tube = ops_tube_or_default(tube),
		    .older = o->older_ms,
		    .dry = dry,
		    .aged = true,
		    .states = (uint8_t)o->states,
		    .by = o->by_created ? MSG_AGE_CREATED : MSG_AGE_UPDATED,
		    .force = o->force != 0 } };

	if (o->states == 0 || (o->states & ~(unsigned)MSG_STATES_ALL) != 0)
		return ops_bad_arg(c,
		    "delete_where: the states are some of ready, delayed, "
		    "taken, buried and done (SLUICE_STATE_BIT)");
	if ((o->states & SLUICE_STATE_BIT(SLUICE_TAKEN)) && !o->force)
		return ops_bad_arg(c,
		    "delete_where: taken tasks are held by workers: force "
		    "deletes them (their leases end)");
	return call_u64(c, &q, deleted);
}

int
sluice_delete_where_opts(struct sluice_client *c, const char *tube,
    const struct sluice_delete_where_opts *o, uint64_t *deleted)
{
	return delete_where(c, tube, o, false, deleted);
}

int
sluice_delete_where_dry(struct sluice_client *c, const char *tube,
    const struct sluice_delete_where_opts *o, uint64_t *would)
{
	return delete_where(c, tube, o, true, would);
}

int
sluice_release_all(
    struct sluice_client *c, const char *tube, uint64_t *released)
{
	struct msg_req q = { .op = MSG_OP_RELEASE_ALL,
		.tube = ops_tube_or_default(tube) };

	return call_u64(c, &q, released);
}

int
sluice_pause(
    struct sluice_client *c, const char *tube, uint64_t ms, uint64_t *until)
{
	struct msg_req q = { .op = MSG_OP_PAUSE,
		.pause = {
		    .tube = ops_tube_or_default(tube), .duration = ms } };

	return call_u64(c, &q, until);
}

/* ---- tubes ------------------------------------------------------------- */

/* tube_set and tube_show: the settings the reply carries into `*out`
 * (optional). */
static int
call_conf(struct sluice_client *c, const struct msg_req *q,
    struct sluice_tube_conf *out)
{
	struct msg_rep r;
	int rc;

	if (c == NULL)
		return SLUICE_EINVAL;
	if ((rc = client_call(c, q, 0, &r)) != 0)
		return rc;
	if (out != NULL)
		result_tube_conf(&r.tube_conf.conf, out);
	return 0;
}

int
sluice_tube_set(struct sluice_client *c, const char *tube,
    const struct sluice_tube_conf *set, unsigned unset,
    struct sluice_tube_conf *now)
{
	struct msg_req q = { .op = MSG_OP_TUBE_SET };
	struct msg_tube_conf *m = &q.tube_set.conf;

	if ((unset & ~(unsigned)SLUICE_TS_ALL) != 0 ||
	    (set != NULL && (set->set & ~(unsigned)SLUICE_TS_ALL) != 0))
		return ops_bad_arg(c, "tube set: unknown setting");
	q.tube_set.tube = ops_tube_or_default(tube);
	q.tube_set.unset = (uint8_t)unset;
	if (set != NULL) {
		m->set = (uint8_t)set->set;
		m->ttr = set->ttr_ms;
		m->max_attempts = set->max_attempts;
		m->backoff_base = set->backoff_base_ms;
		m->backoff_cap = set->backoff_cap_ms;
		m->keep_done = set->keep_done_ms;
		m->lost_lease_immediate = set->lost_lease_immediate != 0;
		if (set->set & SLUICE_TS_DEAD_LETTER)
			m->dead_letter = msg_cstr(set->dead_letter);
	}
	return call_conf(c, &q, now);
}

int
sluice_tube_show(
    struct sluice_client *c, const char *tube, struct sluice_tube_conf *conf)
{
	struct msg_req q = { .op = MSG_OP_TUBE_SHOW,
		.tube_set = { .tube = ops_tube_or_default(tube) } };

	if (conf == NULL)
		return ops_bad_arg(c, "tube show: no place for the result");
	return call_conf(c, &q, conf);
}

/* tube_set and tube_show with flag 0x01: the limits in the reply. */
static int
call_limits(
    struct sluice_client *c, const struct msg_req *q, struct sluice_limits *o)
{
	struct msg_rep r;
	int rc;

	if (c == NULL)
		return SLUICE_EINVAL;
	if ((rc = client_call(c, q, 0, &r)) != 0)
		return rc;
	if (o != NULL)
		result_tube_limits(&r, o);
	return 0;
}

int
sluice_tube_limit(struct sluice_client *c, const char *tube,
    const struct sluice_limits *set, unsigned unset, struct sluice_limits *now)
{
	struct msg_req q = { .op = MSG_OP_TUBE_SET };
	struct msg_flow *f = &q.tube_set.flow;
	unsigned all = SLUICE_LIM_RATE | SLUICE_LIM_CONCURRENCY;

	if ((unset & ~all) != 0 || (set != NULL && (set->set & ~all) != 0))
		return ops_bad_arg(c, "tube limit: unknown limit");
	if (set != NULL && (set->set & unset) != 0)
		return ops_bad_arg(
		    c, "tube limit: a limit both set and lifted");
	q.tube_set.tube = ops_tube_or_default(tube);
	q.tube_set.limits = true;
	q.tube_set.lunset = (uint8_t)unset;
	if (set != NULL) {
		f->set = (uint8_t)set->set;
		if (set->set & SLUICE_LIM_RATE) {
			f->rate = set->rate;
			f->per_ms = set->per_ms;
			f->burst = set->burst;
		}
		if (set->set & SLUICE_LIM_CONCURRENCY)
			f->concurrency = set->concurrency;
	}
	return call_limits(c, &q, now);
}

int
sluice_tube_limits(
    struct sluice_client *c, const char *tube, struct sluice_limits *now)
{
	struct msg_req q = { .op = MSG_OP_TUBE_SHOW };

	if (now == NULL)
		return ops_bad_arg(c, "tube limits: no place for the result");
	q.tube_set.tube = ops_tube_or_default(tube);
	q.tube_set.limits = true;
	return call_limits(c, &q, now);
}

int
sluice_tube_delete(
    struct sluice_client *c, const char *tube, int force, uint64_t *deleted)
{
	struct msg_req q = { .op = MSG_OP_TUBE_DELETE,
		.tube_delete = {
		    .tube = ops_tube_or_default(tube), .force = force != 0 } };

	return call_u64(c, &q, deleted);
}

/* ---- the node -------------------------------------------------------------
 */

int
sluice_snapshot(struct sluice_client *c, uint64_t *lsn)
{
	struct msg_req q = { .op = MSG_OP_SNAPSHOT };

	return call_u64(c, &q, lsn);
}

int
sluice_promote(struct sluice_client *c, uint64_t *epoch)
{
	struct msg_req q = { .op = MSG_OP_PROMOTE };

	return call_u64(c, &q, epoch);
}

int
sluice_follow(struct sluice_client *c, const char *url)
{
	struct msg_req q = { .op = MSG_OP_FOLLOW, .url = msg_cstr(url) };
	struct msg_rep r;

	if (c == NULL)
		return SLUICE_EINVAL;
	return client_call(c, &q, 0, &r);
}

/* ---- automatic failover ------------------------------------------------ */

/* The wire's limits are the API's. */
_Static_assert(SLUICE_NODE_MAX == MSG_NODE_MAX, "node name limit");
_Static_assert((int)SLUICE_H_KINDS == (int)MSG_HISTORY_KINDS &&
        (int)SLUICE_H_BURIED == (int)MSG_HK_BURIED,
    "history kinds");
_Static_assert(SLUICE_URL_MAX == MSG_URL_MAX, "URL limit");

int
sluice_cluster(struct sluice_client *c, struct sluice_cluster **out)
{
	struct msg_req q = { .op = MSG_OP_CLUSTER };
	struct msg_rep r;
	int rc;

	if (c == NULL || out == NULL)
		return ops_bad_arg(c, "cluster: no place for the result");
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	return result_cluster(&r.cluster, out);
}

void
sluice_cluster_free(struct sluice_cluster *cluster)
{
	free(cluster);
}

int
sluice_switchover(struct sluice_client *c, const char *node,
    uint32_t timeout_ms, struct sluice_switchover_result *res)
{
	struct msg_req q = { .op = MSG_OP_SWITCHOVER,
		.switchover = {
		    .node = msg_cstr(node), .timeout_ms = timeout_ms } };
	struct msg_rep r;
	int rc;

	if (c == NULL)
		return SLUICE_EINVAL;
	if (q.switchover.node.len == 0 ||
	    q.switchover.node.len > SLUICE_NODE_MAX)
		return ops_bad_arg(c,
		    "switchover: the node's name is 1-64 bytes (its --node)");
	/* the leader waits up to timeout_ms for the node to catch up */
	if ((rc = client_call(c, &q, timeout_ms, &r)) != 0)
		return rc;
	if (res != NULL) {
		memset(res, 0, sizeof(*res));
		res->epoch = r.switchover.epoch;
		memcpy(res->leader, r.switchover.leader.p,
		    r.switchover.leader.len);
	}
	return 0;
}

const char *
sluice_node_role_name(int role)
{
	const char *name = role >= 0 && role <= UINT8_MAX
	    ? msg_node_role_name((uint8_t)role)
	    : NULL;

	return name ? name : "?";
}

const char *
sluice_state_name(int state)
{
	switch (state) {
	case 0:
		return "gone";
	case SLUICE_READY:
		return "ready";
	case SLUICE_DELAYED:
		return "delayed";
	case SLUICE_TAKEN:
		return "taken";
	case SLUICE_BURIED:
		return "buried";
	case SLUICE_DONE:
		return "done";
	case SLUICE_DELETED:
		return "deleted";
	case SLUICE_CANCELLED:
		return "cancelled";
	case SLUICE_DEAD_LETTERED:
		return "dead_lettered";
	case SLUICE_WAITING:
		return "waiting";
	}
	return "?";
}
