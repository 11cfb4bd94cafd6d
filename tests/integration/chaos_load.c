/* chaos_load - the clients: threads that put, take, ack, fail, release,
 * touch and delete, and record each call in the history with its times
 * and outcome. See chaos.h.
 *
 * Two tubes: "lib" holds libsluice's tasks, some with max_attempts, each
 * in one of CHAOS_GROUPS fair groups, and has a concurrency cap and one
 * for each group (chaos_cap): its takes carry the caps, the group and
 * their ttr into the history;
 * "bs" holds tasks put by both faces (beanstalk's put has no
 * max_attempts), and both faces take from it, so leases of the two
 * faces meet on the same tasks. One "lib" put in six or so names a task
 * the thread put before as its parent (the history's rule "after"). Every
 * put's payload names it
 * (hist_payload). Puts carry no key, so the library never sends one
 * twice behind the client's back.
 *
 * An outcome is unknown when no reply came (a lost connection, a call's
 * timeout) or the reply says the fate of the change is unknown
 * (EREPLICA, ELOG, ESHUTDOWN; beanstalk's INTERNAL_ERROR and DRAINING).
 * Every other error is a refusal: the request did nothing.
 *
 * One more thread takes the tasks the schedules put (chaos_sched) from
 * tube "sched", records each as a HIST_FIRE with the schedule and the
 * slot its key names ("chaos-sN@YYYY-MM-DDTHH:MMZ"), and acks it: the
 * history's rule slot judges that no slot put two tasks. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bsc.h"
#include "chaos.h"

enum {
	LIB_MAX_TAKE = 3,
	PACE_US = 10000, /* each thread sleeps up to this between calls */
	BS_TTR_S = 2,
	LOOP_MAX = 50000000, /* iterations, a bound beside the clock */
};

static const char *const TUBES[2] = { "lib", "bs" };
static const char *const GROUPS[CHAOS_GROUPS] = { "g1", "g2", "g3", "g4" };

/* A group's number in the history (1..), or 0. */
static uint8_t
group_no(const char *g)
{
	for (int i = 0; g != NULL && i < CHAOS_GROUPS; i++)
		if (strcmp(g, GROUPS[i]) == 0)
			return (uint8_t)(i + 1);
	return 0;
}

struct lib_th {
	pthread_t th;
	struct chaos *c;
	uint32_t id;
	uint64_t rng;
	uint64_t seq;
	struct sluice_client *cl;
	char urls[CHAOS_NODES * 64];
	uint64_t recent[32]; /* ids this thread put, for deletes */
	size_t nrecent;
	struct sluice_task held[16]; /* taken and left alone (id, lease) */
	size_t nheld;
};

struct bs_th {
	pthread_t th;
	struct chaos *c;
	uint32_t id;
	uint64_t rng;
	uint64_t seq;
	struct bsc b;
	bool open;
	int node; /* the node it speaks to */
};

/* The taker of the schedules' tasks. */
struct sched_th {
	pthread_t th;
	struct chaos *c;
	uint32_t id;
	bool started;
};

struct chaos_load {
	struct chaos *c;
	struct sched_th sched;
	struct lib_th lib[CHAOS_LIB_MAX];
	struct bs_th bs[CHAOS_BS_MAX];
	int nlib, nbs;
	struct chaos_mv *mv; /* tube "mv"'s, with moves */
};

static bool
running(struct chaos *c)
{
	return !atomic_load(&c->stop) && it_mono_ms() < c->end_ms;
}

static void
pace(uint64_t *rng)
{
	struct timespec ts = { 0, (long)t_below(rng, PACE_US) * 1000L };

	nanosleep(&ts, NULL);
}

void
chaos_add(struct chaos *c, struct hist_op *op)
{
	hist_add(c->h, op);
	atomic_fetch_add(&c->fig.ops, 1);
	if (op->outcome == HIST_UNKNOWN)
		atomic_fetch_add(&c->fig.unknown, 1);
}

/* ---- libsluice ------------------------------------------------------ */

int
chaos_lib_outcome(int rc)
{
	switch (rc) {
	case 0:
		return HIST_OK;
	case SLUICE_ECONN:
	case SLUICE_ETIMEDOUT:
	case SLUICE_EREPLICA:
	case SLUICE_ELOG:
	case SLUICE_ESHUTDOWN:
	case SLUICE_EPROTO:
	case SLUICE_ENOMEM:
		return HIST_UNKNOWN;
	default:
		return HIST_ERR;
	}
}

static void
lib_op(struct lib_th *t, struct hist_op *op, enum hist_type type, int64_t t0)
{
	hist_op_init(op, type);
	op->invoke = t0;
	op->complete = hist_now(t->c->h);
	op->client = t->id;
	op->face = HIST_LIB;
}

static void
lib_done(struct lib_th *t, struct hist_op *op, int rc)
{
	op->outcome = (uint8_t)chaos_lib_outcome(rc);
	if (op->outcome == HIST_ERR)
		op->err = (int16_t)rc;
	chaos_add(t->c, op);
}

static uint64_t
lib_key(struct lib_th *t)
{
	return ((uint64_t)t->id << 40) | ++t->seq;
}

static void
lib_remember(struct lib_th *t, uint64_t id)
{
	t->recent[t->nrecent++ % 32] = id;
}

static void
lib_put(struct lib_th *t)
{
	struct sluice_batch_item items[3];
	char payload[3][HIST_PAYLOAD_MAX];
	uint64_t keys[3], parents[3] = { 0, 0, 0 };
	size_t n = 1 + (size_t)t_below(&t->rng, 3);
	int64_t t0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		struct sluice_put_opts *o = &items[i].opts;
		bool bs = t_below(&t->rng, 5) == 0;

		sluice_put_opts_init(o);
		o->tube = TUBES[bs];
		o->priority = (uint32_t)t_below(&t->rng, 4);
		o->ttr_ms = 1000 + t_below(&t->rng, CHAOS_TTR_MAX_MS - 1000);
		if (!bs) {
			static const uint32_t max[] = { 0, 0, 1, 2, 3 };

			o->max_attempts = max[t_below(&t->rng, 5)];
			o->group = GROUPS[t_below(&t->rng, CHAOS_GROUPS)];
		}
		if (t_below(&t->rng, 20) == 0)
			o->delay_ms = 50 + t_below(&t->rng, 250);
		/* after a task this thread put, of either tube: it waits
		 * until that one is acked or deleted (or is buried when it
		 * fails for good; unknown by now: ENOTFOUND) */
		if (!bs && t->nrecent > 0 && t_below(&t->rng, 6) == 0) {
			size_t k = t->nrecent < 32 ? t->nrecent : 32;

			parents[i] = t->recent[t_below(&t->rng, k)];
			o->after = &parents[i];
			o->nafter = 1;
		}
		keys[i] = lib_key(t);
		items[i].payload = payload[i];
		items[i].len = hist_payload(keys[i], payload[i]);
	}
	t0 = hist_now(t->c->h);
	if (n == 1)
		rc = sluice_put(t->cl, &items[0].opts, items[0].payload,
		    items[0].len, &items[0].id, NULL);
	else
		rc = sluice_put_batch(t->cl, items, n);
	for (size_t i = 0; i < n; i++) {
		struct hist_op op;
		int irc = rc == 0 && n > 1 ? items[i].rc : rc;

		lib_op(t, &op, HIST_PUT, t0);
		op.key = keys[i];
		op.max = items[i].opts.max_attempts;
		op.after = parents[i];
		if (irc == 0) {
			op.id = items[i].id;
			lib_remember(t, op.id);
		}
		lib_done(t, &op, irc);
	}
}

/* A lease operation on a task this thread took. */
static void
lib_lease_op(
    struct lib_th *t, const struct sluice_task *tk, enum hist_type type)
{
	struct sluice_after after = { 0 };
	struct hist_op op;
	int64_t t0 = hist_now(t->c->h);
	int rc;

	switch (type) {
	case HIST_ACK:
		rc = sluice_ack(t->cl, tk->id, tk->lease, NULL, &after);
		break;
	case HIST_FAIL:
		rc = sluice_fail(t->cl, tk->id, tk->lease, "chaos",
		    t_below(&t->rng, 10) < 7 ? (int64_t)t_below(&t->rng, 200)
		                             : -1,
		    &after);
		break;
	case HIST_RELEASE:
		rc = sluice_release(t->cl, tk->id, tk->lease,
		    t_below(&t->rng, 2) ? t_below(&t->rng, 200) : 0, -1,
		    &after);
		break;
	case HIST_TOUCH:
		rc = sluice_touch(t->cl, tk->id, tk->lease, &after);
		break;
	default:
		return;
	}
	lib_op(t, &op, type, t0);
	op.id = tk->id;
	op.lease = tk->lease;
	if (rc == 0)
		op.state = (int8_t)after.state;
	lib_done(t, &op, rc);
}

static void
lib_delete(struct lib_th *t, uint64_t id)
{
	struct hist_op op;
	int64_t t0 = hist_now(t->c->h);
	int rc = sluice_delete(t->cl, id);

	lib_op(t, &op, HIST_DELETE, t0);
	op.id = id;
	lib_done(t, &op, rc);
}

/* Deletes the oldest buried task of "lib", as an operator clears a
 * dead letter: buried tasks would pile up otherwise. */
static void
lib_clear_buried(struct lib_th *t)
{
	struct sluice_task *tk = NULL;

	if (sluice_peek_next(t->cl, TUBES[0], SLUICE_BURIED, &tk) == 0)
		lib_delete(t, tk->id);
	sluice_task_free(tk);
}

/* What a worker does with a task it took. */
static void
lib_work(struct lib_th *t, const struct sluice_task *tk)
{
	uint64_t r = t_below(&t->rng, 100);

	if (r < 50) {
		lib_lease_op(t, tk, HIST_ACK);
	} else if (r < 62) {
		lib_lease_op(t, tk, HIST_FAIL);
	} else if (r < 74) {
		lib_lease_op(t, tk, HIST_RELEASE);
	} else if (r < 82) {
		lib_lease_op(t, tk, HIST_TOUCH);
		lib_lease_op(t, tk, HIST_ACK);
	} else if (r < 87) {
		lib_lease_op(t, tk, HIST_TOUCH);
		lib_lease_op(t, tk, HIST_RELEASE);
	} else if (r < 92) {
		lib_delete(t, tk->id);
	} else {
		/* hold it: the lease ends by ttr, or with the session, or
		 * lib_late acts on it, perhaps too late */
		size_t i = t->nheld < 16 ? t->nheld++ : t_below(&t->rng, 16);

		memset(&t->held[i], 0, sizeof(t->held[i]));
		t->held[i].id = tk->id;
		t->held[i].lease = tk->lease;
	}
}

/* A lease operation on a task held a while: its lease may have run out,
 * and the task may be someone else's by now. The lease must fence. */
static void
lib_late(struct lib_th *t)
{
	struct sluice_task tk;
	size_t i;
	uint64_t r;

	if (t->nheld == 0)
		return;
	i = t_below(&t->rng, t->nheld);
	tk = t->held[i];
	r = t_below(&t->rng, 100);
	if (r < 20) {
		lib_lease_op(t, &tk, HIST_TOUCH); /* and keep holding it */
		return;
	}
	t->held[i] = t->held[--t->nheld];
	if (r < 60)
		lib_lease_op(t, &tk, HIST_ACK);
	else if (r < 80)
		lib_lease_op(t, &tk, HIST_RELEASE);
	else
		lib_lease_op(t, &tk, HIST_FAIL);
}

static void
lib_take(struct lib_th *t)
{
	const char *tubes[2];
	struct sluice_take_opts o = { tubes, 2, 0, 1, 0, 0 };
	struct sluice_task *tasks = NULL;
	size_t n = 0;
	int64_t t0;
	int rc;

	tubes[0] = TUBES[t_below(&t->rng, 2)];
	tubes[1] = TUBES[tubes[0] == TUBES[0]];
	o.wait_ms = t_below(&t->rng, 3) == 0 ? t_below(&t->rng, 50) : 0;
	o.max = 1 + (uint32_t)t_below(&t->rng, LIB_MAX_TAKE);
	o.detach = (int)t_below(&t->rng, 2);
	t0 = hist_now(t->c->h);
	rc = sluice_take(t->cl, &o, &tasks, &n);
	if (rc != 0) {
		struct hist_op op;

		lib_op(t, &op, HIST_TAKE, t0);
		/* "nothing to take" is an answer; a take without a reply
		 * is unknown */
		if (rc == SLUICE_ETIMEDOUT &&
		    strncmp(sluice_errmsg(t->cl), "nothing to take", 15) == 0)
			rc = SLUICE_ENOTFOUND;
		lib_done(t, &op, rc);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct hist_op op;

		lib_op(t, &op, HIST_TAKE, t0);
		op.id = tasks[i].id;
		op.lease = tasks[i].lease;
		op.key =
		    hist_payload_key(tasks[i].payload, tasks[i].payload_len);
		op.attempts = tasks[i].attempts;
		op.max = tasks[i].max_attempts;
		op.ttr = (uint32_t)tasks[i].ttr_ms;
		if (tasks[i].tube != NULL &&
		    strcmp(tasks[i].tube, TUBES[0]) == 0) {
			op.cap = CHAOS_CAP;
			op.group = group_no(tasks[i].group);
			op.gcap = op.group != 0 ? CHAOS_GCAP : 0;
		}
		lib_done(t, &op, 0);
	}
	for (size_t i = 0; i < n && running(t->c); i++)
		lib_work(t, &tasks[i]);
	sluice_task_free(tasks);
}

static void *
lib_main(void *arg)
{
	struct lib_th *t = arg;
	struct chaos *c = t->c;

	t->cl = chaos_client(c, t->urls);
	for (long i = 0; i < LOOP_MAX && t->cl != NULL && running(c); i++) {
		uint64_t r = t_below(&t->rng, 100);

		if (r < 35) {
			lib_put(t);
		} else if (r < 88) {
			lib_take(t);
		} else if (r < 93) {
			lib_late(t);
		} else if (r < 95) {
			if (t->nrecent > 0)
				lib_delete(t,
				    t->recent[t_below(&t->rng,
				        t->nrecent < 32 ? t->nrecent : 32)]);
		} else if (r < 97) {
			lib_clear_buried(t);
		} else {
			/* a new session: its session leases end (held
			 * tasks stay held: their detached leases live on) */
			struct hist_op op;
			int64_t t0 = hist_now(c->h);

			sluice_close(t->cl);
			t->cl = chaos_client(c, t->urls);
			lib_op(t, &op, HIST_SESSION, t0);
			chaos_add(c, &op);
		}
		pace(&t->rng);
	}
	if (t->cl == NULL)
		chaos_fail(c, "client %u: no handle", t->id);
	sluice_close(t->cl);
	return NULL;
}

/* ---- beanstalk ------------------------------------------------------- */

static void
bs_close(struct bs_th *t)
{
	if (t->open)
		bsc_close(&t->b);
	t->open = false;
}

/* One reply within the call timeout, NUL-ended in `out` (the caller
 * frees out->data). False when none came. */
static bool
bs_reply(struct bs_th *t, struct buf *out)
{
	buf_init(out);
	if (bsc_replies(&t->b, 1, t->c->call_ms, out) == 1)
		buf_put(out, "", 1);
	if (out->len == 0 || buf_failed(out)) {
		buf_fini(out);
		return false;
	}
	return true;
}

static bool
bs_open(struct bs_th *t)
{
	static const char *const setup =
	    "use bs\r\nwatch bs\r\nignore default\r\n";
	struct chaos_node *n;
	struct buf r;
	bool ok = true;

	if (t->open)
		return true;
	n = &t->c->node[t->node];
	if (bsc_open_within(&t->b, n->bs_port, t->c->connect_ms) != 0) {
		t->node = (t->node + 1) % CHAOS_NODES;
		it_sleep_ms(20);
		return false;
	}
	t->open = true;
	if (bsc_sends(&t->b, setup) != 0)
		ok = false;
	for (int i = 0; ok && i < 3; i++) {
		if (!bs_reply(t, &r))
			ok = false;
		else
			buf_fini(&r);
	}
	if (!ok)
		bs_close(t);
	return ok;
}

/* After an answer that names no change: a follower, or a connection to
 * drop. The next call goes to the leader the nemesis last made. */
static void
bs_redirect(struct bs_th *t)
{
	bs_close(t);
	t->node = atomic_load(&t->c->leader);
}

static void
bs_op(struct bs_th *t, struct hist_op *op, enum hist_type type, int64_t t0)
{
	hist_op_init(op, type);
	op->invoke = t0;
	op->complete = hist_now(t->c->h);
	op->client = t->id;
	op->face = HIST_BS;
}

/* The outcome of a beanstalk error line; unknown ones close the
 * connection. */
static int
bs_err(struct bs_th *t, const char *line, struct hist_op *op)
{
	if (strncmp(line, "NOT_FOUND", 9) == 0) {
		op->err = SLUICE_ENOTFOUND;
		return HIST_ERR;
	}
	if (strncmp(line, "NOT_LEADER", 10) == 0) {
		op->err = SLUICE_ENOTLEADER;
		bs_redirect(t);
		return HIST_ERR;
	}
	if (strncmp(line, "OUT_OF_MEMORY", 13) == 0) {
		op->err = SLUICE_ENOSPC;
		return HIST_ERR;
	}
	if (strncmp(line, "INTERNAL_ERROR", 14) != 0 &&
	    strncmp(line, "DRAINING", 8) != 0)
		chaos_fail(t->c, "beanstalk client %u: unexpected reply %.60s",
		    t->id, line);
	bs_redirect(t);
	return HIST_UNKNOWN;
}

static void
bs_put(struct bs_th *t)
{
	char payload[HIST_PAYLOAD_MAX], cmd[64];
	uint64_t key = ((uint64_t)t->id << 40) | ++t->seq;
	size_t len = hist_payload(key, payload);
	struct hist_op op;
	struct buf r;
	int64_t t0 = hist_now(t->c->h);
	bool sent, got = false;
	uint64_t id;

	snprintf(cmd, sizeof(cmd), "put %u 0 %d %zu\r\n",
	    (unsigned)t_below(&t->rng, 4), BS_TTR_S, len);
	sent = bsc_sends(&t->b, cmd) == 0 &&
	    bsc_send(&t->b, payload, len) == 0 && bsc_sends(&t->b, "\r\n") == 0;
	if (sent)
		got = bs_reply(t, &r);
	bs_op(t, &op, HIST_PUT, t0);
	op.key = key;
	if (!got) {
		op.outcome = HIST_UNKNOWN;
		bs_redirect(t);
	} else {
		if (sscanf((char *)r.data, "INSERTED %" SCNu64, &id) == 1)
			op.id = id;
		else
			op.outcome = (uint8_t)bs_err(t, (char *)r.data, &op);
		buf_fini(&r);
	}
	chaos_add(t->c, &op);
}

/* delete or release of the job this connection reserved as `lease`. */
static void
bs_job(struct bs_th *t, uint64_t id, uint64_t lease, bool del)
{
	char cmd[80];
	const char *want = del ? "DELETED" : "RELEASED";
	struct hist_op op;
	struct buf r;
	int64_t t0 = hist_now(t->c->h);
	bool got = false;

	if (del)
		snprintf(cmd, sizeof(cmd), "delete %" PRIu64 "\r\n", id);
	else
		snprintf(cmd, sizeof(cmd), "release %" PRIu64 " %u 0\r\n", id,
		    (unsigned)t_below(&t->rng, 4));
	if (bsc_sends(&t->b, cmd) == 0)
		got = bs_reply(t, &r);
	bs_op(t, &op, del ? HIST_DELETE : HIST_RELEASE, t0);
	op.id = id;
	if (!del)
		op.lease = lease;
	if (!got) {
		op.outcome = HIST_UNKNOWN;
		bs_redirect(t);
	} else {
		if (strncmp((char *)r.data, want, strlen(want)) != 0)
			op.outcome = (uint8_t)bs_err(t, (char *)r.data, &op);
		buf_fini(&r);
	}
	chaos_add(t->c, &op);
}

static void
bs_reserve(struct bs_th *t)
{
	struct hist_op op;
	struct buf r;
	int64_t t0 = hist_now(t->c->h);
	bool got = false;
	uint64_t id, lease;
	size_t len, at = 0;
	const char *eol;

	if (bsc_sends(&t->b, "reserve-with-timeout 0\r\n") == 0)
		got = bs_reply(t, &r);
	bs_op(t, &op, HIST_TAKE, t0);
	if (!got) {
		op.outcome = HIST_UNKNOWN;
		bs_redirect(t);
		chaos_add(t->c, &op);
		return;
	}
	eol = strstr((char *)r.data, "\r\n");
	if (eol != NULL)
		at = (size_t)(eol - (char *)r.data) + 2;
	if (sscanf((char *)r.data, "RESERVED %" SCNu64 " %zu", &id, &len) !=
	        2 ||
	    at == 0 || at + len + 2 + 1 != r.len) {
		if (strncmp((char *)r.data, "TIMED_OUT", 9) == 0 ||
		    strncmp((char *)r.data, "DEADLINE_SOON", 13) == 0) {
			op.outcome = HIST_ERR;
			op.err = SLUICE_ETIMEDOUT;
		} else {
			op.outcome = (uint8_t)bs_err(t, (char *)r.data, &op);
		}
		buf_fini(&r);
		chaos_add(t->c, &op);
		return;
	}
	lease = (UINT64_C(1) << 62) | ((uint64_t)t->id << 32) | ++t->seq;
	op.id = id;
	op.lease = lease;
	op.key = hist_payload_key(r.data + at, len);
	buf_fini(&r);
	chaos_add(t->c, &op);
	switch (t_below(&t->rng, 10)) {
	case 0:
		break; /* hold it: ttr, or the connection's end */
	case 1:
	case 2:
	case 3:
		bs_job(t, id, lease, false);
		break;
	default:
		bs_job(t, id, lease, true);
		break;
	}
}

static void *
bs_main(void *arg)
{
	struct bs_th *t = arg;
	struct chaos *c = t->c;

	t->node = atomic_load(&c->leader);
	for (long i = 0; i < LOOP_MAX && running(c); i++) {
		uint64_t r = t_below(&t->rng, 100);

		if (!bs_open(t))
			continue;
		if (r < 35)
			bs_put(t);
		else if (r < 97)
			bs_reserve(t);
		else
			bs_close(t); /* a new connection */
		pace(&t->rng);
	}
	bs_close(t);
	return NULL;
}

/* ---- the schedules' tasks ------------------------------------------- */

/* The schedule and the slot (unix ms) of a key "chaos-sN@YYYY-MM-DDT
 * HH:MMZ". False when the key is not such. */
static bool
slot_of(const char *key, uint32_t *sched, int64_t *slot)
{
	struct tm tm;
	unsigned n;
	int y, mo, d, h, mi;
	char z;

	memset(&tm, 0, sizeof(tm));
	if (key == NULL ||
	    sscanf(key, "chaos-s%u@%d-%d-%dT%d:%d%c", &n, &y, &mo, &d, &h, &mi,
	        &z) != 7 ||
	    z != 'Z' || n == 0 || n > CHAOS_SCHEDS)
		return false;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	*sched = n;
	*slot = (int64_t)timegm(&tm) * 1000;
	return true;
}

static void *
sched_main(void *arg)
{
	struct sched_th *t = arg;
	struct chaos *c = t->c;
	struct sluice_client *cl = chaos_client(c, c->urls);
	const char *tube = "sched";

	for (long i = 0; i < LOOP_MAX && cl != NULL && running(c); i++) {
		struct sluice_take_opts o = { &tube, 1, 200, 4, 0, 0 };
		struct sluice_task *tasks = NULL;
		size_t n = 0;
		int64_t t0 = hist_now(c->h);

		if (sluice_take(cl, &o, &tasks, &n) != 0) {
			it_sleep_ms(20);
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			struct hist_op op;

			hist_op_init(&op, HIST_FIRE);
			op.invoke = t0;
			op.complete = hist_now(c->h);
			op.client = t->id;
			op.face = HIST_LIB;
			op.id = tasks[k].id;
			op.lease = tasks[k].lease;
			if (!slot_of(tasks[k].key, &op.sched, &op.slot)) {
				chaos_fail(c,
				    "a task of tube sched with key %s",
				    tasks[k].key ? tasks[k].key : "(none)");
				break;
			}
			hist_add(c->h, &op);
			/* its ack may be lost: then it is taken again, the
			 * same id */
			(void)sluice_ack(
			    cl, tasks[k].id, tasks[k].lease, NULL, NULL);
		}
		sluice_task_free(tasks);
	}
	if (cl == NULL)
		chaos_fail(c, "the schedules' taker: no handle");
	sluice_close(cl);
	return NULL;
}

/* ---- start and stop -------------------------------------------------- */

struct chaos_load *
chaos_load_start(struct chaos *c, int nlib, int nbs, int nmv)
{
	struct chaos_load *l = calloc(1, sizeof(*l));
	uint64_t rng = c->seed ^ 0x10adULL;

	if (l == NULL)
		return NULL;
	l->c = c;
	nlib = nlib < CHAOS_LIB_MAX ? nlib : CHAOS_LIB_MAX;
	nbs = nbs < CHAOS_BS_MAX ? nbs : CHAOS_BS_MAX;
	for (int i = 0; i < nlib; i++) {
		struct lib_th *t = &l->lib[i];
		size_t len = 0;

		t->c = c;
		t->id = (uint32_t)(1 + i);
		t->rng = t_rand(&rng);
		/* each its own order of the nodes, so a dead first node
		 * does not slow every client */
		for (int k = 0; k < CHAOS_NODES; k++)
			len += (size_t)snprintf(t->urls + len,
			    sizeof(t->urls) - len, "%s%s", k ? "," : "",
			    c->node[(i + k) % CHAOS_NODES].s->url);
		if (pthread_create(&t->th, NULL, lib_main, t) != 0) {
			chaos_fail(c, "no thread");
			break;
		}
		l->nlib++;
	}
	for (int i = 0; i < nbs; i++) {
		struct bs_th *t = &l->bs[i];

		t->c = c;
		t->id = (uint32_t)(101 + i);
		t->rng = t_rand(&rng);
		if (pthread_create(&t->th, NULL, bs_main, t) != 0) {
			chaos_fail(c, "no thread");
			break;
		}
		l->nbs++;
	}
	if (c->moves && nmv > 0)
		l->mv = chaos_mv_start(c, nmv);
	l->sched.c = c;
	l->sched.id = 900;
	if (pthread_create(&l->sched.th, NULL, sched_main, &l->sched) != 0)
		chaos_fail(c, "no thread");
	else
		l->sched.started = true;
	return l;
}

void
chaos_load_stop(struct chaos_load *l)
{
	if (l == NULL)
		return;
	atomic_store(&l->c->stop, true);
	for (int i = 0; i < l->nlib; i++)
		pthread_join(l->lib[i].th, NULL);
	for (int i = 0; i < l->nbs; i++)
		pthread_join(l->bs[i].th, NULL);
	if (l->sched.started)
		pthread_join(l->sched.th, NULL);
	chaos_mv_stop(l->mv);
	free(l);
}
