/* it_ops - see it_ops.h. */
#include <stdio.h>
#include <string.h>

#include "it.h"
#include "it_ops.h"

#include "client/client.h"
#include "proto/msg.h"

/* ---- what prep makes --------------------------------------------------- */

static void
p_none(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	(void)x;
}

/* Two ready tasks, "a" (with key `tube`) and "b". */
static void
p_ready(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = x->tube;
	o.key = x->tube;
	x->id[0] = it_put_o(adm, &o, "a");
	x->id[1] = it_put(adm, x->tube, "b");
}

/* Two tasks taken by the admin under detached leases. */
static void
p_taken(struct sluice_client *adm, struct it_opx *x)
{
	p_ready(adm, x);
	for (int i = 0; i < 2; i++) {
		struct sluice_task *t = it_take(adm, x->tube, 0, 1);

		assert_true(t->id == x->id[i]);
		x->lease[i] = t->lease;
		sluice_task_free(t);
	}
}

/* The first task buried with the error "boom". */
static void
p_buried(struct sluice_client *adm, struct it_opx *x)
{
	p_taken(adm, x);
	it_rc(adm, sluice_bury_error(adm, x->id[0], x->lease[0], "boom", NULL),
	    0);
}

/* One task acked (an hour of statistics) and one ready. */
static void
p_acked(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_task *t;

	x->id[0] = it_put(adm, x->tube, "a");
	t = it_take(adm, x->tube, 0, 0);
	it_rc(adm, sluice_ack(adm, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	x->id[0] = 0;
	x->id[1] = it_put(adm, x->tube, "b");
}

/* The tube's ttr set to 5 s, and one ready task. */
static void
p_conf(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_tube_conf set = { .set = SLUICE_TS_TTR, .ttr_ms = 5000 };

	it_rc(adm, sluice_tube_set(adm, x->tube, &set, 0, NULL), 0);
	x->id[0] = it_put(adm, x->tube, "a");
}

/* ---- reading the server ------------------------------------------------ */

static struct sluice_task *
must_peek(struct sluice_client *adm, uint64_t id)
{
	struct sluice_task *t = it_peek(adm, id);

	assert_non_null(t);
	return t;
}

static void
assert_state(struct sluice_client *adm, uint64_t id, int want)
{
	int st = it_state(adm, id);

	if (st != want)
		fail_msg("task %llu is %s, not %s", (unsigned long long)id,
		    sluice_state_name(st), sluice_state_name(want));
}

static void
assert_payload(const struct sluice_task *t, const char *want)
{
	assert_int_equal(t->payload_len, strlen(want));
	assert_memory_equal(t->payload, want, strlen(want));
}

static const struct sluice_tube_stats *
tube_of(const struct sluice_stats *st)
{
	assert_int_equal(st->ntubes, 1);
	return &st->tubes[0];
}

/* ---- the operations ---------------------------------------------------- */

static int
r_put(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = x->tube;
	return sluice_put(c, &o, "hello", 5, &x->id[0], NULL);
}

static void
c_put(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_task *t = must_peek(adm, x->id[0]);

	assert_string_equal(t->tube, x->tube);
	assert_int_equal(t->state, SLUICE_READY);
	assert_payload(t, "hello");
	sluice_task_free(t);
}

static int
r_put_batch(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_batch_item b[2];
	int rc;

	for (int i = 0; i < 2; i++) {
		sluice_put_opts_init(&b[i].opts);
		b[i].opts.tube = x->tube;
		b[i].payload = i == 0 ? "one" : "two";
		b[i].len = 3;
	}
	if ((rc = sluice_put_batch(c, b, 2)) == 0)
		for (int i = 0; i < 2; i++) {
			assert_int_equal(b[i].rc, 0);
			x->id[i] = b[i].id;
		}
	return rc;
}

static void
c_put_batch(struct sluice_client *adm, struct it_opx *x)
{
	for (int i = 0; i < 2; i++) {
		struct sluice_task *t = must_peek(adm, x->id[i]);

		assert_payload(t, i == 0 ? "one" : "two");
		sluice_task_free(t);
	}
	assert_int_equal(it_counts(adm, x->tube).ready, 2);
}

static int
r_take(struct sluice_client *c, struct it_opx *x)
{
	const char *tubes[] = { x->tube };
	struct sluice_take_opts o = { .tubes = tubes, .ntubes = 1 };

	return sluice_take(c, &o, &x->t, &x->nt);
}

static void
c_take(struct sluice_client *adm, struct it_opx *x)
{
	assert_int_equal(x->nt, 1);
	assert_true(x->t->id == x->id[0]);
	assert_true(x->t->lease != 0);
	assert_payload(x->t, "a");
	assert_state(adm, x->id[0], SLUICE_TAKEN);
	assert_state(adm, x->id[1], SLUICE_READY);
}

static int
r_ack(struct sluice_client *c, struct it_opx *x)
{
	return sluice_ack(c, x->id[0], x->lease[0], NULL, NULL);
}

/* The first task gone, the second still taken. */
static void
c_first_gone(struct sluice_client *adm, struct it_opx *x)
{
	assert_state(adm, x->id[0], 0);
	assert_int_equal(it_counts(adm, x->tube).taken, 1);
}

static int
r_ack_batch(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_lease l[2] = { { x->id[0], x->lease[0] },
		{ x->id[1], x->lease[1] } };
	struct sluice_result res[2];
	int rc = sluice_ack_batch(c, l, 2, res);

	if (rc == 0)
		x->n = (uint64_t)(res[0].rc == 0) + (res[1].rc == 0);
	return rc;
}

static void
c_both_gone(struct sluice_client *adm, struct it_opx *x)
{
	struct it_counts k = it_counts(adm, x->tube);

	assert_state(adm, x->id[0], 0);
	assert_state(adm, x->id[1], 0);
	assert_true(k.ready + k.delayed + k.taken + k.buried == 0);
}

/* Both tasks gone, and the answer counted them. */
static void
c_two_gone(struct sluice_client *adm, struct it_opx *x)
{
	assert_int_equal(x->n, 2);
	c_both_gone(adm, x);
}

static int
r_release(struct sluice_client *c, struct it_opx *x)
{
	return sluice_release(c, x->id[0], x->lease[0], 0, 7, NULL);
}

static void
c_release(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_task *t = must_peek(adm, x->id[0]);

	assert_int_equal(t->state, SLUICE_READY);
	assert_int_equal(t->priority, 7);
	sluice_task_free(t);
}

static int
r_fail(struct sluice_client *c, struct it_opx *x)
{
	return sluice_fail(c, x->id[0], x->lease[0], "bad", 600000, NULL);
}

static void
c_fail(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_task *t = must_peek(adm, x->id[0]);

	assert_int_equal(t->state, SLUICE_DELAYED);
	assert_non_null(t->last_error);
	assert_string_equal(t->last_error, "bad");
	sluice_task_free(t);
}

static int
r_touch(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_after a = { 0 };
	int rc = sluice_touch(c, x->id[0], x->lease[0], &a);

	x->v = a.deadline;
	return rc;
}

static void
c_touch(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_task *t = must_peek(adm, x->id[0]);

	assert_int_equal(t->state, SLUICE_TAKEN);
	assert_true(x->v != 0 && t->deadline == x->v);
	assert_true(t->lease == x->lease[0]);
	sluice_task_free(t);
}

static int
r_bury(struct sluice_client *c, struct it_opx *x)
{
	return sluice_bury(c, x->id[0], x->lease[0], NULL);
}

static void
c_bury(struct sluice_client *adm, struct it_opx *x)
{
	assert_state(adm, x->id[0], SLUICE_BURIED);
	assert_state(adm, x->id[1], SLUICE_TAKEN);
}

static int
r_kick(struct sluice_client *c, struct it_opx *x)
{
	return sluice_kick(c, x->tube, 5, &x->n);
}

static void
c_kick(struct sluice_client *adm, struct it_opx *x)
{
	assert_int_equal(x->n, 1);
	assert_state(adm, x->id[0], SLUICE_READY);
}

static int
r_kick_id(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_after a = { 0 };
	int rc = sluice_kick_id(c, x->id[0], &a);

	x->v = (uint64_t)a.state;
	return rc;
}

static void
c_kick_id(struct sluice_client *adm, struct it_opx *x)
{
	assert_int_equal(x->v, SLUICE_READY);
	assert_state(adm, x->id[0], SLUICE_READY);
}

static int
r_delete(struct sluice_client *c, struct it_opx *x)
{
	return sluice_delete(c, x->id[0]);
}

/* The first task gone, the second ready. */
static void
c_first_deleted(struct sluice_client *adm, struct it_opx *x)
{
	assert_state(adm, x->id[0], 0);
	assert_state(adm, x->id[1], SLUICE_READY);
}

static int
r_delete_key(struct sluice_client *c, struct it_opx *x)
{
	return sluice_delete_key(c, x->tube, x->tube, &x->v);
}

static void
c_delete_key(struct sluice_client *adm, struct it_opx *x)
{
	assert_true(x->v == x->id[0]);
	c_first_deleted(adm, x);
}

static int
r_delete_batch(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_result res[2];
	int rc = sluice_delete_batch(c, x->id, 2, res);

	if (rc == 0)
		x->n = (uint64_t)(res[0].rc == 0) + (res[1].rc == 0);
	return rc;
}

static int
r_delete_where(struct sluice_client *c, struct it_opx *x)
{
	return sluice_delete_where(c, x->tube, SLUICE_READY, 0, &x->n);
}

static int
r_flush(struct sluice_client *c, struct it_opx *x)
{
	return sluice_flush(c, x->tube, &x->n);
}

static int
r_peek(struct sluice_client *c, struct it_opx *x)
{
	return sluice_peek(c, x->id[1], &x->t);
}

static void
c_peek(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	assert_true(x->t->id == x->id[1]);
	assert_int_equal(x->t->state, SLUICE_READY);
	assert_payload(x->t, "b");
}

static int
r_peek_key(struct sluice_client *c, struct it_opx *x)
{
	return sluice_peek_key(c, x->tube, x->tube, &x->t);
}

/* The answer is the first task, ready. */
static void
c_peek_first(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	assert_true(x->t->id == x->id[0]);
	assert_int_equal(x->t->state, SLUICE_READY);
	assert_payload(x->t, "a");
}

static int
r_peek_next(struct sluice_client *c, struct it_opx *x)
{
	return sluice_peek_next(c, x->tube, SLUICE_READY, &x->t);
}

static int
r_stats(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_stats *st = NULL;
	int rc = sluice_stats(c, x->tube, &st);

	if (rc == 0) {
		assert_string_equal(tube_of(st)->name, x->tube);
		x->n = tube_of(st)->ready;
		x->v = st->role;
		sluice_stats_free(st);
	}
	return rc;
}

static void
c_stats(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	assert_int_equal(x->n, 2);
	assert_int_equal(x->v, SLUICE_LEADER);
}

static int
r_stats_hourly(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_hour *h = NULL;
	size_t n = 0;
	int rc = sluice_stats_hourly(c, x->tube, &h, &n);

	if (rc == 0) {
		x->n = n;
		x->v = n > 0 ? h[0].acks : 0;
		sluice_stats_hourly_free(h);
	}
	return rc;
}

static void
c_stats_hourly(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	assert_true(x->n >= 1);
	assert_int_equal(x->v, 1);
}

/* The tube's puts (n) and acks (v) over the last 15 minutes. */
static int
r_history(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_history *h = NULL;
	int rc = sluice_history(c, x->tube, 900, &h);

	if (rc == 0) {
		for (size_t i = 0; i < h->n; i++) {
			x->n += h->count[SLUICE_H_PUT][i];
			x->v += h->count[SLUICE_H_ACK][i];
		}
		sluice_history_free(h);
	}
	return rc;
}

static void
c_history(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	assert_int_equal(x->n, 2); /* p_acked's two puts and one ack */
	assert_int_equal(x->v, 1);
}

static int
r_list(struct sluice_client *c, struct it_opx *x)
{
	return sluice_list(
	    c, x->tube, SLUICE_READY, SLUICE_ORDER_AGE, 10, 1, &x->t, &x->nt);
}

static void
c_list(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	assert_int_equal(x->nt, 2);
	assert_true(x->t[0].id == x->id[0] && x->t[1].id == x->id[1]);
	assert_payload(&x->t[1], "b");
}

static int
r_errors(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_error_count *e = NULL;
	size_t n = 0;
	int rc = sluice_errors(c, x->tube, &e, &n);

	if (rc == 0) {
		/* the buried task's error, and the taken one without */
		for (size_t i = 0; i < n; i++)
			if (strcmp(e[i].text, "boom") == 0)
				x->v = e[i].count;
		x->n = n;
		sluice_errors_free(e);
	}
	return rc;
}

static void
c_errors(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	assert_true(x->n >= 1);
	assert_int_equal(x->v, 1);
}

static int
r_groups(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_group *g = NULL;
	uint64_t total = 0;
	size_t n = 0;
	int rc = sluice_groups(c, x->tube, 10, &g, &n, &total);

	if (rc == 0) {
		x->n = total;
		x->v = n > 0 ? g[0].ready : 0;
		sluice_groups_free(g);
	}
	return rc;
}

static void
c_groups(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	assert_int_equal(x->n, 1); /* the tasks put without a group */
	assert_int_equal(x->v, 2);
}

static int
r_pause(struct sluice_client *c, struct it_opx *x)
{
	return sluice_pause(c, x->tube, 600000, &x->v);
}

static void
c_pause(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_stats *st = NULL;

	it_rc(adm, sluice_stats(adm, x->tube, &st), 0);
	assert_true(x->v > 0 && tube_of(st)->paused_until == x->v);
	sluice_stats_free(st);
}

static int
r_update(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_update_opts o;

	sluice_update_opts_init(&o);
	o.priority = 9;
	return sluice_update(c, x->id[0], &o, NULL);
}

static void
c_update(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_task *t = must_peek(adm, x->id[0]);

	assert_int_equal(t->priority, 9);
	assert_payload(t, "a");
	sluice_task_free(t);
}

static int
r_tube_set(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_tube_conf set = { .set = SLUICE_TS_TTR, .ttr_ms = 7000 };

	return sluice_tube_set(c, x->tube, &set, 0, NULL);
}

static void
c_tube_set(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_tube_conf conf;

	it_rc(adm, sluice_tube_show(adm, x->tube, &conf), 0);
	assert_true(conf.set & SLUICE_TS_TTR);
	assert_int_equal(conf.ttr_ms, 7000);
}

static int
r_tube_show(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_tube_conf conf;
	int rc = sluice_tube_show(c, x->tube, &conf);

	x->v = rc == 0 && (conf.set & SLUICE_TS_TTR) ? conf.ttr_ms : 0;
	return rc;
}

static void
c_tube_show(struct sluice_client *adm, struct it_opx *x)
{
	(void)adm;
	assert_int_equal(x->v, 5000);
}

static int
r_tube_delete(struct sluice_client *c, struct it_opx *x)
{
	return sluice_tube_delete(c, x->tube, 1, &x->n);
}

static void
c_tube_delete(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_tube_conf conf;
	struct sluice_stats *st = NULL;

	assert_int_equal(x->n, 1);
	assert_state(adm, x->id[0], 0);
	it_rc(adm, sluice_tube_show(adm, x->tube, &conf), 0);
	assert_int_equal(conf.set, 0);
	it_rc(adm, sluice_stats(adm, x->tube, &st), SLUICE_ENOTFOUND);
}

static int
r_snapshot(struct sluice_client *c, struct it_opx *x)
{
	return sluice_snapshot(c, &x->v);
}

static void
c_snapshot(struct sluice_client *adm, struct it_opx *x)
{
	assert_true(x->v > 0);
	assert_true(it_node_kv(adm, "snapshot_lsn") >= x->v);
}

static int
r_release_all(struct sluice_client *c, struct it_opx *x)
{
	return sluice_release_all(c, x->tube, &x->n);
}

static void
c_release_all(struct sluice_client *adm, struct it_opx *x)
{
	assert_int_equal(x->n, 2);
	assert_state(adm, x->id[0], SLUICE_READY);
	assert_state(adm, x->id[1], SLUICE_READY);
}

/* The job op (beanstalk's verbs) has no call of its own in libsluice:
 * the request goes the way every call's does. */
static int
job(struct sluice_client *c, struct it_opx *x, uint8_t verb)
{
	struct msg_req q = { .op = MSG_OP_JOB };
	struct msg_rep rep;
	int rc;

	q.job.verb = verb;
	q.job.id = x->id[0];
	if ((rc = client_call(c, &q, 0, &rep)) == 0)
		x->n = rep.tasks.n;
	return rc;
}

static int
r_job_take(struct sluice_client *c, struct it_opx *x)
{
	return job(c, x, MSG_JOB_TAKE);
}

static void
c_job_take(struct sluice_client *adm, struct it_opx *x)
{
	assert_int_equal(x->n, 1);
	assert_state(adm, x->id[0], SLUICE_TAKEN);
	assert_state(adm, x->id[1], SLUICE_READY);
}

static int
r_job_delete(struct sluice_client *c, struct it_opx *x)
{
	return job(c, x, MSG_JOB_DELETE);
}

static void
c_job_delete(struct sluice_client *adm, struct it_opx *x)
{
	assert_int_equal(x->n, 0);
	c_first_deleted(adm, x);
}

static int
r_promote(struct sluice_client *c, struct it_opx *x)
{
	return sluice_promote(c, &x->v);
}

/* A refused node operation left the node leading. */
static void
c_still_leads(struct sluice_client *adm, struct it_opx *x)
{
	struct sluice_stats *st = NULL;

	(void)x;
	it_rc(adm, sluice_stats(adm, NULL, &st), 0);
	assert_int_equal(st->role, SLUICE_LEADER);
	assert_string_equal(st->leader, "");
	sluice_stats_free(st);
}

static int
r_follow(struct sluice_client *c, struct it_opx *x)
{
	(void)x;
	return sluice_follow(c, "tcp://127.0.0.1:1");
}

static int
r_cluster(struct sluice_client *c, struct it_opx *x)
{
	struct sluice_cluster *cl = NULL;
	int rc = sluice_cluster(c, &cl);

	(void)x;
	sluice_cluster_free(cl);
	return rc;
}

static int
r_switchover(struct sluice_client *c, struct it_opx *x)
{
	(void)x;
	return sluice_switchover(c, "b", 1000, NULL);
}

const struct it_op it_ops[] = {
	{ "put", MSG_OP_PUT, 0, p_none, r_put, c_put },
	{ "put_batch", MSG_OP_PUT_BATCH, 0, p_none, r_put_batch, c_put_batch },
	{ "take", MSG_OP_TAKE, 0, p_ready, r_take, c_take },
	{ "ack", MSG_OP_ACK, 0, p_taken, r_ack, c_first_gone },
	{ "ack_batch", MSG_OP_ACK_BATCH, 0, p_taken, r_ack_batch, c_two_gone },
	{ "release", MSG_OP_RELEASE, 0, p_taken, r_release, c_release },
	{ "fail", MSG_OP_FAIL, 0, p_taken, r_fail, c_fail },
	{ "touch", MSG_OP_TOUCH, 0, p_taken, r_touch, c_touch },
	{ "bury", MSG_OP_BURY, 0, p_taken, r_bury, c_bury },
	{ "kick", MSG_OP_KICK, 0, p_buried, r_kick, c_kick },
	{ "kick_id", MSG_OP_KICK_ID, 0, p_buried, r_kick_id, c_kick_id },
	{ "delete", MSG_OP_DELETE, 0, p_ready, r_delete, c_first_deleted },
	{ "delete_key", MSG_OP_DELETE_KEY, 0, p_ready, r_delete_key,
	    c_delete_key },
	{ "delete_batch", MSG_OP_DELETE_BATCH, 0, p_ready, r_delete_batch,
	    c_two_gone },
	{ "delete_where", MSG_OP_DELETE_WHERE, 0, p_ready, r_delete_where,
	    c_two_gone },
	{ "flush", MSG_OP_FLUSH, 0, p_ready, r_flush, c_two_gone },
	{ "peek", MSG_OP_PEEK, 0, p_ready, r_peek, c_peek },
	{ "peek_key", MSG_OP_PEEK_KEY, 0, p_ready, r_peek_key, c_peek_first },
	{ "peek_next", MSG_OP_PEEK_NEXT, 0, p_ready, r_peek_next,
	    c_peek_first },
	{ "stats", MSG_OP_STATS, 0, p_ready, r_stats, c_stats },
	{ "stats_hourly", MSG_OP_STATS_HOURLY, 0, p_acked, r_stats_hourly,
	    c_stats_hourly },
	{ "history", MSG_OP_HISTORY, 0, p_acked, r_history, c_history },
	{ "list", MSG_OP_LIST, 0, p_ready, r_list, c_list },
	{ "errors", MSG_OP_ERRORS, 0, p_buried, r_errors, c_errors },
	{ "groups", MSG_OP_GROUPS, 0, p_ready, r_groups, c_groups },
	{ "pause", MSG_OP_PAUSE, 0, p_ready, r_pause, c_pause },
	{ "update", MSG_OP_UPDATE, 0, p_ready, r_update, c_update },
	{ "tube_set", MSG_OP_TUBE_SET, 0, p_ready, r_tube_set, c_tube_set },
	{ "tube_show", MSG_OP_TUBE_SHOW, 0, p_conf, r_tube_show, c_tube_show },
	{ "tube_delete", MSG_OP_TUBE_DELETE, 0, p_conf, r_tube_delete,
	    c_tube_delete },
	{ "snapshot", MSG_OP_SNAPSHOT, 0, p_ready, r_snapshot, c_snapshot },
	{ "release_all", MSG_OP_RELEASE_ALL, 0, p_taken, r_release_all,
	    c_release_all },
	{ "job take", MSG_OP_JOB, 0, p_ready, r_job_take, c_job_take },
	{ "job delete", MSG_OP_JOB, 0, p_ready, r_job_delete, c_job_delete },
	{ "promote", MSG_OP_PROMOTE, SLUICE_ESTATE, p_ready, r_promote,
	    c_still_leads },
	{ "follow", MSG_OP_FOLLOW, SLUICE_EINVAL, p_ready, r_follow,
	    c_still_leads },
	{ "cluster", MSG_OP_CLUSTER, SLUICE_ESTATE, p_none, r_cluster,
	    c_still_leads },
	{ "switchover", MSG_OP_SWITCHOVER, SLUICE_ESTATE, p_ready, r_switchover,
	    c_still_leads },
};
const size_t it_nops = sizeof(it_ops) / sizeof(it_ops[0]);

void
it_opx_init(struct it_opx *x, struct sluice_client *adm, const struct it_op *op,
    const char *prefix, int n)
{
	memset(x, 0, sizeof(*x));
	snprintf(x->tube, sizeof(x->tube), "%s.%d", prefix, n);
	op->prep(adm, x);
}

void
it_opx_free(struct it_opx *x)
{
	sluice_task_free(x->t);
	x->t = NULL;
	x->nt = 0;
}

void
it_op_ok(const struct it_op *op, struct sluice_client *c,
    struct sluice_client *adm, const char *prefix, int n)
{
	struct it_opx x;
	int rc;

	it_opx_init(&x, adm, op, prefix, n);
	rc = op->run(c, &x);
	if (rc != op->want)
		fail_msg("%s: %s (%s), wanted %s", op->name,
		    sluice_strerror(rc), sluice_errmsg(c),
		    sluice_strerror(op->want));
	op->check(adm, &x);
	it_opx_free(&x);
}

void
it_op_state(
    struct sluice_client *adm, const struct it_opx *x, struct it_op_state *s)
{
	struct sluice_stats *st = NULL;
	int rc;

	memset(s, 0, sizeof(*s));
	it_rc(adm, sluice_stats(adm, NULL, &st), 0);
	s->role = st->role;
	s->epoch = st->epoch;
	(void)sluice_kv_get(st->kv, st->nkv, "snapshot_at", &s->snapshot_at);
	sluice_stats_free(st);
	if ((rc = sluice_stats(adm, x->tube, &st)) == 0) {
		const struct sluice_tube_stats *ts = tube_of(st);

		s->ready = ts->ready;
		s->delayed = ts->delayed;
		s->taken = ts->taken;
		s->buried = ts->buried;
		s->paused_until = ts->paused_until;
		sluice_stats_free(st);
	} else {
		it_rc(adm, rc, SLUICE_ENOTFOUND);
	}
	it_rc(adm, sluice_tube_show(adm, x->tube, &s->conf), 0);
	for (int i = 0; i < 2; i++) {
		struct sluice_task *t =
		    x->id[i] ? it_peek(adm, x->id[i]) : NULL;

		if (t == NULL)
			continue;
		s->task[i].state = t->state;
		s->task[i].priority = t->priority;
		s->task[i].attempts = t->attempts;
		s->task[i].deadline = t->deadline;
		s->task[i].run_at = t->run_at;
		sluice_task_free(t);
	}
}
