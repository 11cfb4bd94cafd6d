/* chaos_mvload - the clients of tube "mv", the tube the nemesis moves
 * between the two clusters (chaos_move.c): threads that each hold a
 * routing handle on etcd (sluice_open_map) and put, take, ack, fail,
 * release, touch and delete through it, so that every request goes to
 * the cluster the map gives the tube, a take asks the cluster still
 * draining it too, and a lease call goes back to the cluster the task
 * came from. See chaos.h.
 *
 * The history names these tasks by payload (face HIST_MV, id
 * HIST_MV_ID(key)): a move gives a task a new id on its target, and the
 * payload is what stays. A lease is recorded with bit 61 set when the
 * task came from cluster "cb", so that two clusters' leases are never
 * the same number; they are ordered by real time only. Half the puts
 * are batches of up to MV_BATCH (split by the router: one commit at the
 * owner), so that the tube grows and a move has thousands of tasks to
 * copy while its clients work. Half the tasks
 * carry the payload's key as the task's key too: a key is live once
 * across the clusters, and a put the library sends again after a lost
 * connection names the task the first made.
 *
 * Like chaos_load.c's, an outcome is unknown when no reply came or the
 * reply leaves the change's fate open; any other error is a refusal. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chaos.h"

enum {
	MV_TAKE_MAX = 3,
	MV_BATCH = 8,
	MV_LIVE_MAX = 3000, /* about this many tasks in the tube at most */
	MV_PACE_US = 10000,
	MV_HELD = 8,
	MV_LOOP_MAX = 50000000,
};

static const char *const MV_TUBE = "mv";

struct mv_held {
	struct sluice_task t; /* id, lease, tube, cluster (the handle's) */
	uint64_t key;
};

struct mv_th {
	pthread_t th;
	struct chaos *c;
	atomic_long *live; /* the tube's tasks, as the clients count them */
	uint32_t id;
	uint64_t rng;
	uint64_t seq;
	struct sluice_router *r;
	struct mv_held held[MV_HELD];
	size_t nheld;
};

struct chaos_mv {
	struct chaos *c;
	struct chaos_watch *watch;
	atomic_long live; /* puts acknowledged less acks and deletes */
	struct mv_th th[CHAOS_MV_MAX];
	int n;
};

static bool
mv_running(struct chaos *c)
{
	return !atomic_load(&c->stop) && it_mono_ms() < c->end_ms;
}

static void
mv_op(struct mv_th *t, struct hist_op *op, enum hist_type type, int64_t t0)
{
	hist_op_init(op, type);
	op->invoke = t0;
	op->complete = hist_now(t->c->h);
	op->client = t->id;
	op->face = HIST_MV;
}

static void
mv_done(struct mv_th *t, struct hist_op *op, int rc)
{
	op->outcome = (uint8_t)chaos_lib_outcome(rc);
	if (op->outcome == HIST_ERR)
		op->err = (int16_t)rc;
	chaos_add(t->c, op);
}

/* The history's lease of a task: its own, bit 61 when from "cb". */
static uint64_t
mv_lease(const struct sluice_task *t)
{
	bool b = t->cluster != NULL &&
	    strcmp(t->cluster, chaos_cluster_name(1)) == 0;

	return t->lease | (b ? UINT64_C(1) << 61 : 0);
}

static struct sluice_router *
mv_open(struct chaos *c)
{
	struct sluice_router *r;

	if (sluice_open_map(c->etcd_map, &r) != 0)
		return NULL;
	sluice_router_set_timeout(r, c->call_ms);
	return r;
}

/* One put, or a batch of up to MV_BATCH (the router's, one commit at the
 * owner): more tasks come in than go out, so that a move has some to
 * copy while its clients work. */
static void
mv_put(struct mv_th *t)
{
	static const uint32_t max[] = { 0, 0, 1, 2, 3 };
	struct sluice_batch_item items[MV_BATCH];
	char payload[MV_BATCH][HIST_PAYLOAD_MAX], key[MV_BATCH][20];
	uint64_t keys[MV_BATCH];
	size_t n = t_below(&t->rng, 2) ? 1 : 1 + t_below(&t->rng, MV_BATCH);
	int64_t t0;
	int rc;

	memset(items, 0, sizeof(items));
	for (size_t i = 0; i < n; i++) {
		struct sluice_put_opts *o = &items[i].opts;

		sluice_put_opts_init(o);
		o->tube = MV_TUBE;
		o->priority = (uint32_t)t_below(&t->rng, 4);
		o->ttr_ms = 1000 + t_below(&t->rng, CHAOS_TTR_MAX_MS - 1000);
		o->max_attempts = max[t_below(&t->rng, 5)];
		if (t_below(&t->rng, 20) == 0)
			o->delay_ms = 50 + t_below(&t->rng, 250);
		keys[i] = ((uint64_t)t->id << 40) | ++t->seq;
		if (t_below(&t->rng, 2) == 0) {
			snprintf(
			    key[i], sizeof(key[i]), "%016" PRIx64, keys[i]);
			o->key = key[i];
		}
		items[i].payload = payload[i];
		items[i].len = hist_payload(keys[i], payload[i]);
	}
	t0 = hist_now(t->c->h);
	if (n == 1) {
		struct sluice_put_result res;

		rc = sluice_router_put(
		    t->r, &items[0].opts, items[0].payload, items[0].len, &res);
	} else {
		rc = sluice_router_put_batch(t->r, items, n);
	}
	for (size_t i = 0; i < n; i++) {
		struct hist_op op;
		int irc = n > 1 ? items[i].rc : rc;

		/* a batch the router could not send leaves its items' rc
		 * as the request's error */
		if (n > 1 && rc != 0 && irc == 0)
			irc = rc;
		mv_op(t, &op, HIST_PUT, t0);
		op.key = keys[i];
		op.max = items[i].opts.max_attempts;
		if (irc == 0) {
			op.id = HIST_MV_ID(keys[i]);
			atomic_fetch_add(t->live, 1);
		}
		mv_done(t, &op, irc);
	}
}

static void
mv_lease_op(struct mv_th *t, const struct sluice_task *tk, uint64_t key,
    enum hist_type type)
{
	struct sluice_after after = { 0 };
	struct sluice_release_opts ro = { 0 };
	struct hist_op op;
	int64_t t0 = hist_now(t->c->h);
	int rc;

	switch (type) {
	case HIST_ACK:
		rc = sluice_router_ack(t->r, tk, NULL, &after);
		break;
	case HIST_FAIL:
		rc = sluice_router_fail(t->r, tk, "chaos",
		    t_below(&t->rng, 10) < 7 ? (int64_t)t_below(&t->rng, 200)
		                             : -1,
		    &after);
		break;
	case HIST_RELEASE:
		ro.delay_ms = t_below(&t->rng, 2) ? t_below(&t->rng, 200) : 0;
		ro.priority = -1;
		rc = sluice_router_release(t->r, tk, &ro, &after);
		break;
	case HIST_TOUCH:
		rc = sluice_router_touch(t->r, tk, &after);
		break;
	default:
		return;
	}
	mv_op(t, &op, type, t0);
	op.id = HIST_MV_ID(key);
	op.lease = mv_lease(tk);
	if (rc == 0)
		op.state = (int8_t)after.state;
	if (rc == 0 && type == HIST_ACK)
		atomic_fetch_sub(t->live, 1);
	mv_done(t, &op, rc);
}

/* Deletes task `tk` at the cluster it came from. */
static void
mv_delete(struct mv_th *t, const struct sluice_task *tk, uint64_t key)
{
	struct sluice_client *cl = NULL;
	struct hist_op op;
	int64_t t0 = hist_now(t->c->h);
	int rc = tk->cluster != NULL
	    ? sluice_router_cluster(t->r, tk->cluster, &cl)
	    : sluice_router_client(t->r, MV_TUBE, &cl, NULL);

	if (rc == 0)
		rc = sluice_delete(cl, tk->id);
	mv_op(t, &op, HIST_DELETE, t0);
	op.id = HIST_MV_ID(key);
	if (rc == 0)
		atomic_fetch_sub(t->live, 1);
	mv_done(t, &op, rc);
}

/* Deletes the oldest buried task at the tube's owner, as an operator
 * clears a dead letter. */
static void
mv_clear_buried(struct mv_th *t)
{
	struct sluice_client *cl = NULL;
	struct sluice_task *tk = NULL;

	if (sluice_router_client(t->r, MV_TUBE, &cl, NULL) == 0 &&
	    sluice_peek_next(cl, MV_TUBE, SLUICE_BURIED, &tk) == 0) {
		struct hist_op op;
		uint64_t key = hist_payload_key(tk->payload, tk->payload_len);
		int64_t t0 = hist_now(t->c->h);
		int rc = sluice_delete(cl, tk->id);

		mv_op(t, &op, HIST_DELETE, t0);
		op.id = key != 0 ? HIST_MV_ID(key) : tk->id;
		if (rc == 0)
			atomic_fetch_sub(t->live, 1);
		mv_done(t, &op, rc);
	}
	sluice_task_free(tk);
}

static void
mv_hold(struct mv_th *t, const struct sluice_task *tk, uint64_t key)
{
	size_t i = t->nheld < MV_HELD ? t->nheld++ : t_below(&t->rng, MV_HELD);

	memset(&t->held[i], 0, sizeof(t->held[i]));
	t->held[i].t.id = tk->id;
	t->held[i].t.lease = tk->lease;
	t->held[i].t.tube = MV_TUBE;
	/* a name the handle keeps while it is open; held tasks are
	 * forgotten with it */
	t->held[i].t.cluster = tk->cluster;
	t->held[i].key = key;
}

static void
mv_work(struct mv_th *t, const struct sluice_task *tk, uint64_t key)
{
	uint64_t r = t_below(&t->rng, 100);

	if (r < 50) {
		mv_lease_op(t, tk, key, HIST_ACK);
	} else if (r < 62) {
		mv_lease_op(t, tk, key, HIST_FAIL);
	} else if (r < 74) {
		mv_lease_op(t, tk, key, HIST_RELEASE);
	} else if (r < 82) {
		mv_lease_op(t, tk, key, HIST_TOUCH);
		mv_lease_op(t, tk, key, HIST_ACK);
	} else if (r < 87) {
		mv_lease_op(t, tk, key, HIST_TOUCH);
		mv_lease_op(t, tk, key, HIST_RELEASE);
	} else if (r < 92) {
		mv_delete(t, tk, key);
	} else {
		mv_hold(t, tk, key);
	}
}

/* A lease call on a task held a while: the task may have moved since. */
static void
mv_late(struct mv_th *t)
{
	struct mv_held h;
	size_t i;
	uint64_t r;

	if (t->nheld == 0)
		return;
	i = t_below(&t->rng, t->nheld);
	h = t->held[i];
	r = t_below(&t->rng, 100);
	if (r < 20) {
		mv_lease_op(t, &h.t, h.key, HIST_TOUCH);
		return;
	}
	t->held[i] = t->held[--t->nheld];
	if (r < 60)
		mv_lease_op(t, &h.t, h.key, HIST_ACK);
	else if (r < 80)
		mv_lease_op(t, &h.t, h.key, HIST_RELEASE);
	else
		mv_lease_op(t, &h.t, h.key, HIST_FAIL);
}

static void
mv_take(struct mv_th *t)
{
	const char *tubes[1] = { MV_TUBE };
	struct sluice_take_opts o = { tubes, 1, 0, 1, 0, 0, 0 };
	struct sluice_task *tasks = NULL;
	uint64_t keys[MV_TAKE_MAX];
	size_t n = 0;
	int64_t t0;
	int rc;

	o.wait_ms = t_below(&t->rng, 3) == 0 ? t_below(&t->rng, 50) : 0;
	o.max = 1 + (uint32_t)t_below(&t->rng, MV_TAKE_MAX);
	o.detach = (int)t_below(&t->rng, 2);
	t0 = hist_now(t->c->h);
	rc = sluice_router_take(t->r, &o, &tasks, &n);
	if (rc != 0) {
		struct hist_op op;

		mv_op(t, &op, HIST_TAKE, t0);
		if (rc == SLUICE_ETIMEDOUT &&
		    strstr(sluice_router_errmsg(t->r), "nothing to take") !=
		        NULL)
			rc = SLUICE_ENOTFOUND;
		mv_done(t, &op, rc);
		return;
	}
	for (size_t i = 0; i < n && i < MV_TAKE_MAX; i++) {
		struct hist_op op;

		keys[i] =
		    hist_payload_key(tasks[i].payload, tasks[i].payload_len);
		mv_op(t, &op, HIST_TAKE, t0);
		op.id = keys[i] != 0 ? HIST_MV_ID(keys[i]) : tasks[i].id;
		op.lease = mv_lease(&tasks[i]);
		op.key = keys[i];
		op.attempts = tasks[i].attempts;
		op.max = tasks[i].max_attempts;
		op.ttr = (uint32_t)tasks[i].ttr_ms;
		mv_done(t, &op, 0);
	}
	for (size_t i = 0; i < n && i < MV_TAKE_MAX && mv_running(t->c); i++)
		mv_work(t, &tasks[i], keys[i]);
	sluice_task_free(tasks);
}

static void *
mv_main(void *arg)
{
	struct mv_th *t = arg;
	struct chaos *c = t->c;

	t->r = mv_open(c);
	for (long i = 0; i < MV_LOOP_MAX && t->r != NULL && mv_running(c);
	     i++) {
		uint64_t r = t_below(&t->rng, 100);

		/* the tube kept near MV_LIVE_MAX: a move's copies and drops
		 * of it must fit the nodes' disks (CHAOS_TMPFS_MOVES_MB) */
		if (r < 35 && atomic_load(t->live) > MV_LIVE_MAX)
			r = 35 + t_below(&t->rng, 53);
		if (r < 35) {
			mv_put(t);
		} else if (r < 88) {
			mv_take(t);
		} else if (r < 95) {
			mv_late(t);
		} else if (r < 97) {
			mv_clear_buried(t);
		} else {
			/* a new handle: its sessions' leases end, and the
			 * tasks it held are forgotten */
			struct hist_op op;
			int64_t t0 = hist_now(c->h);

			sluice_router_close(t->r);
			t->nheld = 0;
			t->r = mv_open(c);
			mv_op(t, &op, HIST_SESSION, t0);
			hist_add(c->h, &op);
		}
		{
			struct timespec ts = { 0,
				(long)t_below(&t->rng, MV_PACE_US) * 1000L };

			nanosleep(&ts, NULL);
		}
	}
	if (t->r == NULL)
		chaos_fail(c, "mv client %u: no routing handle", t->id);
	sluice_router_close(t->r);
	return NULL;
}

struct chaos_mv *
chaos_mv_start(struct chaos *c, int n)
{
	struct chaos_mv *m = calloc(1, sizeof(*m));
	uint64_t rng = c->seed ^ 0x307eULL;

	if (m == NULL)
		return NULL;
	m->c = c;
	m->watch = chaos_watch_start(c);
	n = n < CHAOS_MV_MAX ? n : CHAOS_MV_MAX;
	for (int i = 0; i < n; i++) {
		struct mv_th *t = &m->th[i];

		t->c = c;
		t->live = &m->live;
		t->id = (uint32_t)(201 + i);
		t->rng = t_rand(&rng);
		if (pthread_create(&t->th, NULL, mv_main, t) != 0) {
			chaos_fail(c, "no thread");
			break;
		}
		m->n++;
	}
	return m;
}

void
chaos_mv_stop(struct chaos_mv *m)
{
	if (m == NULL)
		return;
	atomic_store(&m->c->stop, true);
	for (int i = 0; i < m->n; i++)
		pthread_join(m->th[i].th, NULL);
	chaos_watch_stop(m->watch);
	free(m);
}
