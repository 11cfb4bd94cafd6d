/* Model test of the queue's workflows (deps.h, batch.h, sched.h,
 * queue_outcome.h): random requests run both through the queue (decide,
 * encode, decode, apply, as the server does) and through a small
 * reference model that keeps tasks, the dependency graph, batches and
 * schedules in plain arrays and answers by linear scans. test_model.c
 * does the same for the rest of the queue (keys, groups, limits, hourly
 * statistics); this one adds what issue 29 brought:
 *
 * - puts with parents (ids named, one unknown: ENOTFOUND, one twice:
 *   EINVAL; now and then one more by key, a schedule's task, found only
 *   in the put's tube) under each on-parent-failure rule; the waiting state;
 * the parents' outcomes as the queue keeps them (a parent's node lives while
 *   its task does or a live child names it; forgotten, it reads as acked
 *   without a result); the cascade of a failure down the graph, breadth
 *   first as the queue settles it ("task N failed: ERROR");
 * - acks with results (a take of a child carries its parents' results),
 *   ack --to, acked tasks kept as done a while (half the seeds: a done
 *   parent's result comes from the task, then from its node once it is
 *   purged), fails (fatal, at max_attempts, to a dead-letter tube),
 *   buries (of taken tasks and, forced, of queued ones; a task waiting
 *   for its parents is parked by no one: ESTATE), kicks, updates,
 *   deletes, flushes (every task of a tube, by id), ttr expiry, a
 *   session's end (its leases that are not detached);
 * - cancel of ready, delayed, waiting, buried and taken tasks (a taken
 *   one is marked: its touch is ECANCELED, the end of its lease in any
 *   way a DELETE: a cancelled task is never handed out again), with
 *   the cascade to its children;
 * - the outcomes a waiter reads (queue_result: done with its result,
 *   dead-lettered, deleted, cancelled, kept the dedup window; else the
 *   live task) and the final callback, which must name exactly the tasks
 *   each record ends (acked, buried, dead-lettered, removed), children
 *   ended by their parent's failure included;
 * - batches: puts into a batch, callbacks set, close; when a batch ends
 *   the model (as the leader) fires what it owes, and the callbacks are
 *   put exactly once, with the counts; an ended batch is forgotten after
 *   the dedup window, and its name starts a new one;
 * - schedules (every minute or every five, catch-up none, one or all):
 *   set, pause, resume, delete; the model advances the clock and fires
 *   each due slot as the server's timer does (ops/sched.c); a slot's task
 *   is put once, and a FIRE of a slot already decided is refused.
 *
 * After every step: each tube's counts by state (waiting included) and
 * counters, the task the next take would get, one random task's fields,
 * the dependencies and parents' outcomes of random ids, every batch's
 * counts and every schedule, the outcomes of random ids, the tasks named
 * final, and the queue's next wake; every take is checked: a child is never
 * handed out before each of its parents is acked (or failed under
 * `ignore`, or an operator kicked the child), and it carries exactly
 * the results the model expects.
 *
 * Restarts: twice per seed the queue the decisions come from is replaced
 * by one rebuilt from the log (from the start, or from a snapshot taken
 * earlier plus the log after it), and the restart's lease ends follow,
 * as when a node starts; schedules then must not fire a slot again.
 * Every record also goes to a follower through apply alone, compared
 * along the way, and at the end a full replay and the snapshot plus the
 * rest of the log must give the same dump. The helpers and log checks
 * this shares with test_model.c are t_model.h's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/batch.h"
#include "queue/sched.h"
#include "t_lib.h"
#include "t_queue.h"

/* 2026-09-21 21:33 UTC, on a minute */
#define T0     1789999980000LL
#define MIN_MS 60000LL

enum {
	NTUBE = 3, /* t0, t1 (its dead letters go to dl), dl */
	TDL = 2,
	NBATCH = 3,
	NSCHED = 2,
	MAXLIVE = 1024,
	MAXID = 16384,
	MAXP = 5, /* parents: up to 4 by id, 1 by key */
	MAXFIRED = 8192,
	STEPS = 6000, /* per seed */
	NRES = 4,
	NERR = 3,
	PICK_OTHER = 6, /* t_model.h's pick_taken: 1 in 6 names any id */
};

enum { M_WAITING = 1, M_QUEUED = 2, M_TAKEN = 3, M_BURIED = 4, M_DONE = 5 };
enum { O_PENDING = 0, O_DONE = 1, O_FAILED = 2 }; /* queue_dep_outcome */

static const char *const tube_names[NTUBE] = { "t0", "t1", "dl" };
static const char *const batch_names[NBATCH] = { "b0", "b1", "b2" };
static const char *const sched_names[NSCHED] = { "s0", "s1" };
static const char *const results[NRES] = { "", "ok", "42 rows", "{\"sum\":7}" };
static const char *const errors[NERR] = { "oom", "timeout", "exit 3" };

struct mt {
	uint64_t id;
	int tube, state;
	uint32_t pri, ttr, attempts, maxa;
	int64_t run_at, deadline;
	uint64_t lease;
	bool cancelled;   /* taken and marked */
	uint64_t session; /* taken: its session (1..3) */
	bool detached;    /* taken: its lease outlives the session */
	bool kicked;      /* an operator kicked it: it may run before parents */
	bool has_err;
	char err[256];
	int batch;          /* a live member of it; -1: none */
	int sched;          /* put by schedule sched_names[sched - 1]; 0: not */
	int64_t slot;       /* ... for this slot (its key names both) */
	int res;            /* done: its result's index (-1: none) */
	int64_t kept_until; /* done: purged then */
	uint64_t parents[MAXP]; /* sorted */
	bool linked[MAXP];      /* the parent had a node (or got one) */
	int np, rule;
	uint32_t pending;
};

/* A node of the graph, by id, as deps.h keeps it. */
struct mnode {
	bool exists, gone;
	bool cancelled; /* failed by being cancelled: "task N failed:
	                   cancelled" */
	uint8_t outcome;
	int res; /* DONE with a result: its index; -1: none */
	uint32_t pending;
};

struct mbatch {
	bool exists, closed, ended;
	bool on[2]; /* success, complete callbacks set */
	uint8_t owed, fired;
	uint64_t total, acked, buried, failed;
	int64_t started, ended_at, expires;
};

struct msched {
	bool exists, paused;
	int period; /* minutes: 1 or 5 */
	uint8_t catch_up;
	int64_t from, last_slot;
	uint64_t fired, last_id;
};

struct model {
	struct queue_config cfg;
	struct mt t[MAXLIVE];
	size_t n;
	uint64_t next_id;
	struct mnode node[MAXID];
	uint64_t todo[MAXID]; /* nodes to settle, in order */
	size_t todo_head, todo_tail;
	struct queue_counters ctr[NTUBE];
	struct mbatch b[NBATCH];
	struct msched s[NSCHED];
	struct {
		int sched;
		int64_t slot;
	} fired[MAXFIRED];
	size_t nfired;
	/* outcomes (queue_outcome.h), by id, and the ids the queue must
	 * name to its final callback for the step's records */
	struct mout {
		uint8_t kind; /* enum queue_end; 0: none */
		int tube;
		int64_t time, expires;
		bool has_text;
		char text[256];
	} out[MAXID];
	uint8_t why;           /* the kind of the removals the record makes */
	bool cancelled[MAXID]; /* ids a CANCEL named: never handed out again */
	uint64_t final_want[4 * MAXLIVE], final_got[4 * MAXLIVE];
	size_t nfinal_want, nfinal_got;
};

struct run {
	struct tq h;
	struct model *m;
	struct queue *follower;
	size_t fed;
	uint64_t rnd;
	struct buf snap;
	size_t snap_at;
	/* what the seed did, so that the run shows it tested it */
	uint64_t results_seen;
	uint64_t cancel_taken, cancel_queued, callbacks, slots_put;
	uint64_t slots_skipped, stale_refused, restarts, children_taken;
	uint64_t flushed, key_parents, sessions_gone;
};

/* The helpers both model tests use, over the types above. */
#include "t_model.h"

/* ---- The model ------------------------------------------------------- */

static int
sorted_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Live tasks that name parent `id` through a node (its nlive). */
static uint32_t
m_nlive(const struct model *m, uint64_t id)
{
	uint32_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		for (int k = 0; k < m->t[i].np; k++)
			n += m->t[i].linked[k] && m->t[i].parents[k] == id;
	return n;
}

/* What a child learns of parent `id` (deps.c's parent_outcome). */
static int
m_outcome(struct model *m, uint64_t id)
{
	const struct mnode *n = &m->node[id];
	const struct mt *t;

	if (n->exists && n->outcome != O_PENDING)
		return n->outcome;
	if ((t = m_find(m, id)) == NULL)
		return n->exists ? O_FAILED : O_DONE;
	if (t->state == M_DONE)
		return O_DONE;
	return t->state == M_BURIED ? O_FAILED : O_PENDING;
}

/* The text a failed parent gives its children. */
static const char *
m_failure_text(struct model *m, uint64_t id)
{
	const struct mt *t = m_find(m, id);

	if (t != NULL && t->has_err)
		return t->err;
	if (t == NULL && m->node[id].exists && m->node[id].cancelled)
		return "cancelled";
	return t != NULL && t->state == M_BURIED ? "buried" : "deleted";
}

/* The result a child of `id` gets (queue_dep_result): its node's, else
 * the done task's own; -1: none. */
static int
m_dep_res(struct model *m, uint64_t id)
{
	const struct mt *t = m_find(m, id);

	if (m->node[id].exists && m->node[id].res > 0)
		return m->node[id].res;
	return t != NULL && t->state == M_DONE && t->res > 0 ? t->res : -1;
}

static void
m_push(struct model *m, uint64_t id)
{
	assert_true(m->todo_tail < MAXID);
	m->todo[m->todo_tail++] = id;
}

/* The queue names `id` to its final callback. */
static void
m_final(struct model *m, uint64_t id)
{
	assert_true(m->nfinal_want < 4 * MAXLIVE);
	m->final_want[m->nfinal_want++] = id;
}

/* Task t reached an outcome of `kind`, with `text` (NULL: none). */
static void
m_note(struct model *m, const struct mt *t, int kind, const char *text,
    int64_t now)
{
	struct mout *o = &m->out[t->id];

	o->kind = (uint8_t)kind;
	o->tube = t->tube;
	o->time = now;
	o->expires = now + m->cfg.dedup_ms;
	o->has_text = text != NULL && *text != '\0';
	snprintf(o->text, sizeof(o->text), "%s", o->has_text ? text : "");
	m_final(m, t->id);
}

/* Node `id` settles (if it has one and it is pending). */
static void
m_settle(struct model *m, uint64_t id, uint8_t outcome, int res)
{
	struct mnode *n = &m->node[id];

	if (!n->exists || n->outcome != O_PENDING)
		return;
	n->outcome = outcome;
	n->res = -1;
	if (outcome == O_DONE && res > 0 && m_nlive(m, id) > 0)
		n->res = res;
	m_push(m, id);
}

static void m_batch_end_member(
    struct model *m, struct mt *t, int how, int64_t now);

enum { HOW_ACKED, HOW_BURIED, HOW_FAILED };

/* Each rule applied (fail, ignore, cancel), over every seed: each must
 * happen, or the model did not test it. */
static uint64_t rules_applied[QUEUE_PARENT_END_];

/* Cancels, by the state of the task cancelled (enum queue_state). */
static uint64_t cancels[QUEUE_STATE_END_];

/* Task t leaves the queue: acked (with result res), or not (it failed
 * for good: its children follow their rule). */
static void
m_remove(struct model *m, struct mt *t, bool acked, int res, int64_t now)
{
	uint64_t id = t->id;
	int how = !acked && t->state != M_DONE
	    ? (t->cancelled ? QUEUE_END_CANCELLED : m->why)
	    : 0;

	m_batch_end_member(m, t, acked ? HOW_ACKED : HOW_FAILED, now);
	if (how != 0)
		m_note(m, t, how, t->has_err ? t->err : NULL, now);
	if (m->node[id].exists) {
		/* a done task purged: its children keep its result */
		if (t->state == M_DONE && m->node[id].outcome == O_DONE &&
		    m->node[id].res <= 0 && m_nlive(m, id) > 0 && t->res > 0)
			m->node[id].res = t->res;
		m->node[id].gone = true;
		if (m->node[id].outcome == O_PENDING) {
			m->node[id].cancelled =
			    !acked && how == QUEUE_END_CANCELLED;
			m_settle(m, id, acked ? O_DONE : O_FAILED, res);
		}
	}
	*t = m->t[--m->n];
}

static void
m_unlease(struct mt *t)
{
	t->lease = 0;
	t->deadline = 0;
	t->cancelled = false;
	t->session = 0;
	t->detached = false;
}

/* t is buried in place (its tube's bury counter). */
static void
m_bury(struct model *m, struct mt *t, int64_t now)
{
	t->state = M_BURIED;
	m_unlease(t);
	m->ctr[t->tube].bury++;
	m_final(m, t->id);
	m_batch_end_member(m, t, HOW_BURIED, now);
	m_settle(m, t->id, O_FAILED, -1);
}

/* A taken task failed for good: buried, or moved to the dead letters of
 * t1, ready. */
static void
m_bury_taken(struct model *m, struct mt *t, int64_t now)
{
	if (t->tube != 1) {
		m_bury(m, t, now);
		return;
	}
	t->tube = TDL;
	t->state = M_QUEUED;
	t->run_at = now;
	m_unlease(t);
	m_note(m, t, QUEUE_END_DEAD, t->has_err ? t->err : NULL, now);
	m_batch_end_member(m, t, HOW_FAILED, now);
	m_settle(m, t->id, O_FAILED, -1);
}

/* A waiting child with no parent left to wait for. */
static void
m_release_child(struct mt *t, int64_t now)
{
	if (t->run_at < now)
		t->run_at = now;
	t->state = M_QUEUED;
}

/* Child c is told that parent p settled (tell_child). */
static void
m_tell(struct model *m, uint64_t p, uint64_t cid, int64_t now)
{
	struct mnode *c = &m->node[cid];
	struct mt *t;
	char text[256];

	if (!c->exists || c->gone || c->pending == 0)
		return;
	c->pending--;
	if ((t = m_find(m, cid)) == NULL || t->state != M_WAITING)
		return;
	if (m_outcome(m, p) == O_FAILED)
		rules_applied[t->rule]++;
	if (m_outcome(m, p) == O_FAILED && t->rule != QUEUE_PARENT_IGNORE) {
		if (t->rule == QUEUE_PARENT_FAIL) {
			snprintf(text, sizeof(text),
			    "task %" PRIu64 " failed: %s", p,
			    m_failure_text(m, p));
			m_set_err(t, text);
			m_bury(m, t, now);
		} else {
			uint8_t why = m->why;

			m->ctr[t->tube].del++;
			m->why = QUEUE_END_CANCELLED; /* whatever the record */
			m_remove(m, t, false, -1, now);
			m->why = why;
		}
		return;
	}
	if (c->pending == 0)
		m_release_child(t, now);
}

/* Settles every node pushed, breadth first, then forgets the nodes no
 * one needs (gone, no live child). */
static void
m_settle_all(struct model *m, int64_t now)
{
	while (m->todo_head < m->todo_tail) {
		uint64_t p = m->todo[m->todo_head++], kids[MAXLIVE];
		size_t nk = 0;

		/* its live children, in the order they were put (by id) */
		for (size_t i = 0; i < m->n; i++)
			for (int k = 0; k < m->t[i].np; k++)
				if (m->t[i].linked[k] &&
				    m->t[i].parents[k] == p)
					kids[nk++] = m->t[i].id;
		qsort(kids, nk, sizeof(*kids), sorted_u64);
		for (size_t i = 0; i < nk; i++)
			m_tell(m, p, kids[i], now);
	}
	m->todo_head = m->todo_tail = 0;
	m->why = 0; /* the record is applied */
	for (uint64_t id = 1; id < m->next_id; id++) {
		struct mnode *n = &m->node[id];

		if (n->exists && n->gone && m_nlive(m, id) == 0)
			memset(n, 0, sizeof(*n));
	}
}

static void
m_batch_maybe_end(struct model *m, struct mbatch *b, int64_t now)
{
	if (b->ended || !b->closed)
		return;
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].batch == (int)(b - m->b))
			return;
	b->ended = true;
	b->ended_at = now;
	if (b->on[0] && b->acked == b->total)
		b->owed |= QREC_BATCH_ON_SUCCESS;
	if (b->on[1])
		b->owed |= QREC_BATCH_ON_COMPLETE;
	if (b->owed == 0)
		b->expires = now + m->cfg.dedup_ms;
}

static void
m_batch_end_member(struct model *m, struct mt *t, int how, int64_t now)
{
	struct mbatch *b;

	if (t->batch < 0)
		return;
	b = &m->b[t->batch];
	t->batch = -1;
	if (how == HOW_ACKED)
		b->acked++;
	else if (how == HOW_BURIED)
		b->buried++;
	else
		b->failed++;
	m_batch_maybe_end(m, b, now);
}

/* Done tasks past their kept_until are purged; ended batches that owe
 * nothing are forgotten at their expiry. */
static void
m_tick(struct model *m, int64_t now)
{
	struct mt *t;

	while ((t = m_first_done(m)) != NULL && t->kept_until <= now)
		m_remove(m, t, true, -1, now);
	m_settle_all(m, now);
	for (int i = 0; i < NBATCH; i++)
		if (m->b[i].exists && m->b[i].ended && m->b[i].owed == 0 &&
		    m->b[i].expires <= now)
			memset(&m->b[i], 0, sizeof(m->b[i]));
}

static struct mt *
m_new_task(struct model *m, int tube, int64_t run_at, int64_t now)
{
	struct mt *t;

	assert_true(m->n < MAXLIVE && m->next_id < MAXID);
	t = &m->t[m->n++];
	memset(t, 0, sizeof(*t));
	t->id = m->next_id++;
	t->tube = tube;
	t->state = M_QUEUED;
	t->run_at = run_at > now ? run_at : now;
	t->ttr = 1000;
	t->batch = -1;
	t->res = -1;
	m->ctr[tube].put++;
	return t;
}

/* A lease ends without its holder (ttr, restart). */
static void
m_lost(struct model *m, struct mt *t, int64_t now, bool ttr, const char *why)
{
	char text[64];

	if (ttr) {
		m->ctr[t->tube].ttr_expired++;
		m_ttr_text(text, sizeof(text), t->ttr);
	} else {
		m->ctr[t->tube].session_released++;
		snprintf(text, sizeof(text), "%s", why);
	}
	m_set_err(t, text);
	if (t->maxa > 0 && t->attempts >= t->maxa) {
		m_bury_taken(m, t, now);
		return;
	}
	t->state = M_QUEUED;
	t->run_at = now; /* the retry is immediate (cfg) */
	m_unlease(t);
}

static int
m_view_state(const struct mt *t, int64_t now)
{
	switch (t->state) {
	case M_WAITING:
		return QUEUE_WAITING;
	case M_TAKEN:
		return QUEUE_TAKEN;
	case M_BURIED:
		return QUEUE_BURIED;
	case M_DONE:
		return QUEUE_DONE;
	default:
		return t->run_at <= now ? QUEUE_READY : QUEUE_DELAYED;
	}
}

/* The task a take of the tubes of `mask` gets, or NULL. */
static struct mt *
m_best(struct model *m, unsigned mask, int64_t now)
{
	struct mt *best = NULL;

	for (size_t i = 0; i < m->n; i++) {
		struct mt *t = &m->t[i];

		if ((mask & (1u << t->tube)) && m_ready(t, now) &&
		    (best == NULL || m_less(t, best)))
			best = t;
	}
	return best;
}

/* ---- Both sides -------------------------------------------------------- */

/* The queue's final callback (queue_on_final): what a waiter is told. */
static void
on_final(void *arg, uint64_t id)
{
	struct model *m = arg;

	assert_true(m->nfinal_got < 4 * MAXLIVE);
	m->final_got[m->nfinal_got++] = id;
}

static void
commit(struct run *r, const struct qrec *rec)
{
	assert_int_equal(tq_commit(&r->h, rec), 0);
}

static uint64_t
pick_id(struct run *r)
{
	struct model *m = r->m;

	if (m->n > 0 && rnd(r, 6) != 0)
		return m->t[rnd(r, m->n)].id;
	return 1 + rnd(r, m->next_id);
}

/* The lease a worker sends: mostly the right one. */
static uint64_t
pick_lease(struct run *r, uint64_t id)
{
	struct mt *t = m_find(r->m, id);

	if (t != NULL && t->lease != 0 && rnd(r, 8) != 0)
		return t->lease;
	return 1 + rnd(r, r->h.lsn + 1);
}

/* A cancelled task's lease ended: the record is a DELETE. */
static void
m_cancelled_end(struct run *r, struct mt *t, const struct qrec *rec)
{
	assert_int_equal(rec->type, QREC_DELETE);
	assert_true(rec->u.del.id == t->id);
	commit(r, rec);
	r->m->ctr[t->tube].del++;
	r->m->why = QUEUE_END_DELETED; /* cancelled itself: it is marked */
	m_remove(r->m, t, false, -1, r->h.now);
}

static void
op_put(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	uint64_t after[MAXP], ids[MAXP];
	char kbuf[QUEUE_SCHED_KEY_MAX];
	struct queue_str key;
	size_t np = 0;
	int tube = (int)rnd(r, 2), bi = -1, want = 0, rc;
	struct mt *t;

	queue_put_req_init(&req);
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.payload = "p";
	req.payload_len = 1;
	req.pri = (uint32_t)rnd(r, 2) * 10;
	req.ttr_ms = rnd(r, 2) ? 1000 : 1500;
	req.max_attempts = (uint32_t)rnd(r, 3);
	if (rnd(r, 4) == 0)
		req.delay_ms = (int64_t)rnd(r, 2000);
	if (rnd(r, 5) < 3 && m->next_id > 1) {
		np = 1 + rnd(r, MAXP - 1);
		for (size_t i = 0; i < np; i++) {
			uint64_t lo = m->next_id > 16 ? m->next_id - 16 : 1;

			after[i] = lo + rnd(r, m->next_id - lo);
		}
		qsort(after, np, sizeof(*after), sorted_u64);
		for (size_t i = 1; i < np; i++)
			if (after[i] == after[i - 1])
				want = SLUICE_EINVAL; /* a parent named twice */
		if (want == 0 && rnd(r, 40) == 0) {
			after[np - 1] = m->next_id + rnd(r, 3);
			want = SLUICE_ENOTFOUND;
		}
		memcpy(ids, after, np * sizeof(*ids));
		req.after = ids;
		req.nafter = np;
		req.on_parent_failure = (uint8_t)rnd(r, 3);
		/* now and then one more by key: a schedule's task in the
		 * put's tube (else ENOTFOUND), maybe one named by id too */
		if (rnd(r, 4) == 0 && m->nfired > 0) {
			size_t f = m->nfired - 1 -
			    rnd(r, m->nfired < 8 ? m->nfired : 8);
			int si = m->fired[f].sched;
			struct mt *kp = NULL;

			key.p = kbuf;
			key.len = queue_sched_key(
			    sched_names[si], 2, m->fired[f].slot, kbuf);
			req.after_keys = &key;
			req.nafter_keys = 1;
			for (size_t i = 0; i < m->n; i++)
				if (m->t[i].sched == si + 1 &&
				    m->t[i].slot == m->fired[f].slot)
					kp = &m->t[i];
			/* keys are looked up before parents named twice */
			if (kp == NULL || kp->tube != tube)
				want = SLUICE_ENOTFOUND;
			if (want == 0) {
				for (size_t i = 0; i < np; i++)
					if (after[i] == kp->id)
						want = SLUICE_EINVAL;
				after[np++] = kp->id;
				qsort(after, np, sizeof(*after), sorted_u64);
				r->key_parents++;
			}
		}
	}
	if (want == 0 && rnd(r, 3) == 0) {
		bi = (int)rnd(r, NBATCH);
		req.batch = batch_names[bi];
		req.batch_len = 2;
		if (m->b[bi].exists && (m->b[bi].closed || m->b[bi].ended))
			want = SLUICE_EBATCH;
	}
	rc = queue_decide_put(r->h.q, now, &req, &rec, &res);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	assert_true(res.created && res.id == m->next_id);
	assert_int_equal(rec.type, np > 0 || bi >= 0 ? QREC_PUT_X : QREC_PUT);
	commit(r, &rec);
	t = m_new_task(m, tube, now + req.delay_ms, now);
	t->pri = req.pri;
	t->ttr = req.ttr_ms;
	t->maxa = req.max_attempts;
	if (bi >= 0) {
		struct mbatch *b = &m->b[bi];

		b->exists = true;
		if (b->started == 0)
			b->started = now;
		b->total++;
		t->batch = bi;
	}
	if (np == 0)
		return;
	/* its node, and each parent's when the queue holds or remembers
	 * it */
	t->np = (int)np;
	t->rule = req.on_parent_failure;
	t->state = M_WAITING;
	m->node[t->id].exists = true;
	m->node[t->id].res = -1;
	for (size_t i = 0; i < np; i++) {
		uint64_t p = after[i];
		struct mnode *n = &m->node[p];
		int o;

		t->parents[i] = p;
		if (m_find(m, p) == NULL && !n->exists)
			continue; /* forgotten: as acked */
		if (!n->exists) {
			memset(n, 0, sizeof(*n));
			n->exists = true;
			n->res = -1;
		}
		t->linked[i] = true;
		o = m_outcome(m, p);
		if (n->outcome == O_PENDING)
			n->outcome = (uint8_t)o;
		if (o == O_PENDING)
			m->node[t->id].pending++;
	}
	/* decided at once: the first failed parent's rule, or ready */
	for (size_t i = 0; i < np; i++) {
		if (m_outcome(m, after[i]) != O_FAILED ||
		    t->rule == QUEUE_PARENT_IGNORE)
			continue;
		m->node[t->id].pending++;
		m_tell(m, after[i], t->id, now);
		m_settle_all(m, now);
		return;
	}
	if (m->node[t->id].pending == 0)
		m_release_child(t, now);
	m_settle_all(m, now);
}

/* A take: the model's best task, and a child's parents' outcomes and
 * results as the model has them. */
static void
op_take(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_str ts[NTUBE];
	struct queue_take_req req = { ts, 0, 1 + rnd(r, 3), rnd(r, 4) == 0,
		false };
	struct queue_task_deps d;
	struct qrec rec;
	unsigned mask = 0;
	struct mt *best;
	int rc;

	for (int i = 0; i < NTUBE; i++) {
		if (rnd(r, 3) == 0 && i != 0)
			continue;
		ts[req.ntubes].p = tube_names[i];
		ts[req.ntubes].len = 2;
		req.ntubes++;
		mask |= 1u << i;
	}
	best = m_best(m, mask, now);
	rc = queue_decide_take(r->h.q, now, &req, &rec);
	if (best == NULL) {
		assert_int_equal(rc, SLUICE_ETIMEDOUT);
		return;
	}
	assert_int_equal(rc, 0);
	if (rec.u.take.id != best->id)
		fail_msg("take got %" PRIu64 ", the model %" PRIu64,
		    rec.u.take.id, best->id);
	if (m->cancelled[best->id])
		fail_msg("task %" PRIu64 " was cancelled, and taken", best->id);
	commit(r, &rec);
	best->state = M_TAKEN;
	best->session = req.session;
	best->detached = req.detached;
	best->lease = r->h.lsn;
	best->deadline = now + best->ttr;
	best->attempts++;
	m->ctr[best->tube].take++;
	/* the child's parents, each acked (or failed under ignore, or the
	 * child was kicked), with the results the model expects */
	assert_int_equal(queue_task_deps(r->h.q, best->id, &d), 0);
	assert_int_equal(d.nparents, (size_t)best->np);
	r->children_taken += best->np > 0;
	for (int k = 0; k < best->np; k++) {
		uint64_t p = best->parents[k];
		int o = m_outcome(m, p), qo, want;
		const char *res;
		size_t len;

		assert_true(d.parents[k] == p);
		if (!(o == O_DONE ||
		        (o == O_FAILED && best->rule == QUEUE_PARENT_IGNORE) ||
		        best->kicked))
			fail_msg("child %" PRIu64
			         " taken before parent %" PRIu64 " was acked",
			    best->id, p);
		queue_dep_result(r->h.q, p, &qo, &res, &len);
		assert_int_equal(qo, o);
		if ((want = m_dep_res(m, p)) > 0) {
			r->results_seen++;
			assert_int_equal(len, strlen(results[want]));
			assert_memory_equal(res, results[want], len);
		} else {
			assert_null(res);
		}
	}
}

static void
op_ack(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_ack_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int res = (int)rnd(r, NRES), to = -1, want;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.result = results[res];
	req.result_len = strlen(results[res]);
	if (rnd(r, 12) == 0) {
		to = rnd(r, 2) ? 0 : 1;
		req.to_tube = tube_names[to];
		req.to_tube_len = 2;
	}
	want = m_leased(m, req.id, req.lease, false, &t);
	assert_int_equal(queue_decide_ack(r->h.q, now, &req, &rec), want);
	if (want != 0)
		return;
	if (t->cancelled) {
		m_cancelled_end(r, t, &rec);
		m_settle_all(m, now);
		return;
	}
	commit(r, &rec);
	m->ctr[t->tube].ack++;
	if (to >= 0) {
		/* moved: acked for its children, live for its batch */
		t->tube = to;
		t->state = M_QUEUED;
		t->run_at = now;
		t->attempts = 0;
		t->has_err = false;
		m_unlease(t);
		m_settle(m, t->id, O_DONE, res);
	} else if (m->cfg.keep_done_ms > 0) {
		/* kept as done, with its result; past max_done the first
		 * done goes */
		size_t ndone = 0;

		m_note(m, t, QUEUE_END_DONE, results[res], now);
		m_batch_end_member(m, t, HOW_ACKED, now);
		m_settle(m, t->id, O_DONE, res);
		t->state = M_DONE;
		t->res = res > 0 ? res : -1;
		t->kept_until = now + m->cfg.keep_done_ms;
		m_unlease(t);
		for (size_t i = 0; i < m->n; i++)
			ndone += m->t[i].state == M_DONE;
		for (; ndone > m->cfg.max_done; ndone--)
			m_remove(m, m_first_done(m), true, -1, now);
	} else {
		m_note(m, t, QUEUE_END_DONE, results[res], now);
		m_remove(m, t, true, res, now);
	}
	m_settle_all(m, now);
}

static void
op_release(struct run *r)
{
	struct model *m = r->m;
	struct queue_release_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	if (rnd(r, 2) == 0)
		req.delay_ms = (int64_t)rnd(r, 1500);
	want = m_leased(m, req.id, req.lease, false, &t);
	assert_int_equal(
	    queue_decide_release(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (t->cancelled) {
		m_cancelled_end(r, t, &rec);
		m_settle_all(m, r->h.now);
		return;
	}
	commit(r, &rec);
	m->ctr[t->tube].release++;
	t->state = M_QUEUED;
	t->run_at = r->h.now + req.delay_ms;
	m_unlease(t);
}

static void
op_fail(struct run *r)
{
	struct model *m = r->m;
	struct queue_fail_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int e = (int)rnd(r, NERR), want;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.error = errors[e];
	req.error_len = strlen(errors[e]);
	req.fatal = rnd(r, 4) == 0;
	req.set_delay = true;
	req.delay_ms = (int64_t)rnd(r, 1000);
	want = m_leased(m, req.id, req.lease, false, &t);
	assert_int_equal(queue_decide_fail(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (t->cancelled) {
		m_cancelled_end(r, t, &rec);
		m_settle_all(m, r->h.now);
		return;
	}
	commit(r, &rec);
	m->ctr[t->tube].fail++;
	m_set_err(t, errors[e]);
	if (req.fatal || (t->maxa > 0 && t->attempts >= t->maxa)) {
		m_bury_taken(m, t, r->h.now);
	} else {
		t->state = M_QUEUED;
		t->run_at = r->h.now + req.delay_ms;
		m_unlease(t);
	}
	m_settle_all(m, r->h.now);
}

static void
op_touch(struct run *r)
{
	struct queue_touch_req req = { 0 };
	struct qrec rec;
	struct mt *t = NULL;
	int want;

	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	want = m_leased(r->m, req.id, req.lease, false, &t);
	if (want == 0 && t->cancelled)
		want = SLUICE_ECANCELED;
	assert_int_equal(
	    queue_decide_touch(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	t->deadline = r->h.now + t->ttr;
}

/* A worker's bury of its taken task, or an operator's (force) of a
 * queued one (one waiting for its parents is refused). */
static void
op_bury(struct run *r)
{
	struct model *m = r->m;
	struct queue_bury_req req;
	struct qrec rec;
	struct mt *t;
	int e = (int)rnd(r, NERR + 1) - 1, want;

	memset(&req, 0, sizeof(req));
	if (e >= 0) {
		req.error = errors[e];
		req.error_len = strlen(errors[e]);
	}
	if (rnd(r, 2) == 0) {
		req.id = pick_taken(r);
		req.lease = pick_lease(r, req.id);
		want = m_leased(m, req.id, req.lease, false, &t);
	} else {
		req.id = pick_id(r);
		req.force = true;
		t = m_find(m, req.id);
		want = t == NULL ? SLUICE_ENOTFOUND
		    : t->state == M_BURIED || t->state == M_WAITING ||
		        t->state == M_DONE
		    ? SLUICE_ESTATE
		    : t->state == M_TAKEN ? 1 /* not this way */
		                          : 0;
		if (want == 1)
			return;
	}
	assert_int_equal(queue_decide_bury(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (t->cancelled) {
		m_cancelled_end(r, t, &rec);
		m_settle_all(m, r->h.now);
		return;
	}
	commit(r, &rec);
	if (e >= 0)
		m_set_err(t, errors[e]);
	if (t->state == M_TAKEN)
		m_bury_taken(m, t, r->h.now);
	else
		m_bury(m, t, r->h.now); /* parked in place */
	m_settle_all(m, r->h.now);
}

static void
op_kick(struct run *r)
{
	struct model *m = r->m;
	struct queue_kick_req req;
	struct qrec rec;
	struct mt *t;
	int want;

	memset(&req, 0, sizeof(req));
	req.id = pick_id(r);
	t = m_find(m, req.id);
	if (t == NULL)
		want = SLUICE_ENOTFOUND;
	else if (t->state == M_BURIED ||
	    (t->state == M_QUEUED && t->run_at > r->h.now))
		want = 0;
	else
		want = SLUICE_ESTATE;
	assert_int_equal(queue_decide_kick(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	t->state = M_QUEUED;
	t->run_at = r->h.now;
	t->kicked = true;
	m->ctr[t->tube].kick++;
}

static void
op_delete(struct run *r)
{
	struct model *m = r->m;
	struct queue_delete_req req = { .id = pick_id(r) };
	struct qrec rec;
	struct mt *t = m_find(m, req.id);

	assert_int_equal(queue_decide_delete(r->h.q, r->h.now, &req, &rec),
	    t != NULL ? 0 : SLUICE_ENOTFOUND);
	if (t == NULL)
		return;
	commit(r, &rec);
	m->ctr[t->tube].del++;
	m->why = QUEUE_END_DELETED;
	m_remove(m, t, false, -1, r->h.now);
	m_settle_all(m, r->h.now);
}

/* An update of the priority, the run time or the ttr: of a queued
 * task anything, of a buried one all but the run time, of a taken one
 * the priority only; a task waiting for its parents, or done, none. */
static void
op_update(struct run *r)
{
	struct model *m = r->m;
	struct queue_update_req req;
	struct qrec rec;
	struct mt *t;
	int want = 0;

	memset(&req, 0, sizeof(req));
	req.id = pick_id(r);
	req.set_pri = rnd(r, 2) == 0;
	req.pri = (uint32_t)rnd(r, 3) * 10;
	req.set_run_at = rnd(r, 3) == 0;
	req.delay_ms = (int64_t)rnd(r, 2000);
	req.set_ttr = !req.set_pri && !req.set_run_at ? true : rnd(r, 4) == 0;
	req.ttr_ms = rnd(r, 2) ? 1000 : 1500;
	t = m_find(m, req.id);
	if (t == NULL)
		want = SLUICE_ENOTFOUND;
	else if (t->state == M_WAITING || t->state == M_DONE ||
	    (t->state == M_TAKEN && (req.set_run_at || req.set_ttr)) ||
	    (t->state == M_BURIED && req.set_run_at))
		want = SLUICE_ESTATE;
	assert_int_equal(
	    queue_decide_update(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	if (req.set_pri)
		t->pri = req.pri;
	if (req.set_run_at)
		t->run_at = r->h.now + req.delay_ms;
	if (req.set_ttr)
		t->ttr = req.ttr_ms;
}

/* Every task of a tube goes at once, by id (cancel_all): their children
 * follow their rules, breadth first from the first removed. */
static void
op_flush(struct run *r)
{
	struct model *m = r->m;
	int tube = (int)rnd(r, NTUBE);
	struct queue_flush_req req = { tube_names[tube], 2 };
	struct qrec rec;
	uint64_t ids[MAXLIVE];
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].tube == tube)
			ids[n++] = m->t[i].id;
	assert_int_equal(queue_decide_flush(r->h.q, r->h.now, &req, &rec), 0);
	assert_int_equal(rec.type == QREC_NONE, n == 0);
	if (n == 0)
		return;
	commit(r, &rec);
	qsort(ids, n, sizeof(*ids), sorted_u64);
	m->why = QUEUE_END_DELETED;
	for (size_t i = 0; i < n; i++) {
		struct mt *t = m_find(m, ids[i]);

		m->ctr[tube].del++;
		m_remove(m, t, false, -1, r->h.now);
	}
	r->flushed += n;
	m_settle_all(m, r->h.now);
}

static void
op_cancel(struct run *r)
{
	struct model *m = r->m;
	uint64_t id = rnd(r, 3) ? pick_taken(r) : pick_id(r);
	struct qrec rec;
	struct mt *t;
	int want;

	if (rnd(r, 4) == 0) { /* one of a state, now and then delayed */
		int st = rnd(r, 2) ? QUEUE_DELAYED : 1 + (int)rnd(r, 6);
		uint64_t k = 0;

		for (size_t i = 0; i < m->n; i++)
			if (m_view_state(&m->t[i], r->h.now) == st &&
			    rnd(r, ++k) == 0)
				id = m->t[i].id;
	}
	t = m_find(m, id);
	want = t == NULL   ? SLUICE_ENOTFOUND
	    : t->cancelled ? SLUICE_ECANCELED
	                   : 0;
	assert_int_equal(queue_decide_cancel(r->h.q, r->h.now, id, &rec), want);
	if (want != 0)
		return;
	assert_int_equal(rec.type, QREC_CANCEL);
	m->cancelled[id] = true;
	cancels[m_view_state(t, r->h.now)]++;
	commit(r, &rec);
	assert_int_equal(queue_cancelled(r->h.q, id), t->state == M_TAKEN);
	if (t->state == M_TAKEN) {
		assert_true(rec.u.cancel.lease == t->lease);
		t->cancelled = true;
		r->cancel_taken++;
		return;
	}
	assert_true(rec.u.cancel.lease == 0);
	r->cancel_queued++;
	m->ctr[t->tube].del++;
	m->why = QUEUE_END_CANCELLED;
	m_remove(m, t, false, -1, r->h.now);
	m_settle_all(m, r->h.now);
}

/* The server's ttr timer: every expired lease, earliest deadline first. */
static void
op_expire(struct run *r)
{
	struct model *m = r->m;
	struct qrec rec;

	for (size_t k = 0; k <= MAXLIVE; k++) {
		struct mt *due = expired_next(r, &rec);

		if (due == NULL)
			return;
		if (due->cancelled) {
			m_cancelled_end(r, due, &rec);
		} else {
			commit(r, &rec);
			m_lost(m, due, r->h.now, true, NULL);
		}
		m_settle_all(m, r->h.now);
	}
	fail_msg("expiry did not end");
}

/* ---- Batches ----------------------------------------------------------- */

static void
op_batch_set(struct run *r)
{
	struct model *m = r->m;
	int bi = (int)rnd(r, NBATCH), which = (int)rnd(r, 3), want = 0;
	struct mbatch *b = &m->b[bi];
	struct qrec rec;
	bool s = which != 1, c = which != 0;

	if (b->exists && b->ended)
		want = SLUICE_EBATCH;
	assert_int_equal(
	    queue_decide_batch_set(r->h.q, batch_names[bi], 2, s ? "t0" : NULL,
	        s ? 2 : 0, "s", 1, c ? "t0" : NULL, c ? 2 : 0, "c", 1, &rec),
	    want);
	if (want != 0)
		return;
	commit(r, &rec);
	b->exists = true;
	b->on[0] |= s;
	b->on[1] |= c;
}

static void
op_batch_close(struct run *r)
{
	struct model *m = r->m;
	int bi = (int)rnd(r, NBATCH);
	struct mbatch *b = &m->b[bi];
	struct qrec rec;

	assert_int_equal(
	    queue_decide_batch_close(r->h.q, batch_names[bi], 2, &rec),
	    b->exists ? 0 : SLUICE_ENOTFOUND);
	if (!b->exists)
		return;
	assert_int_equal(rec.type == QREC_NONE, b->closed);
	if (b->closed)
		return;
	commit(r, &rec);
	b->closed = true;
	m_batch_maybe_end(m, b, r->h.now);
}

/* The leader fires what ended batches owe: once each. */
static void
fire_batches(struct run *r)
{
	struct model *m = r->m;
	struct batch *qb;
	struct qrec rec;

	for (int k = 0; k <= NBATCH; k++) {
		struct mbatch *b = NULL;
		int n = 0;

		if ((qb = queue_batch_owed(r->h.q)) == NULL)
			break;
		for (int i = 0; i < NBATCH; i++)
			if (qb->name_len == 2 &&
			    memcmp(qb->name, batch_names[i], 2) == 0)
				b = &m->b[i];
		assert_non_null(b);
		assert_true(b->ended && b->owed == qb->owed);
		assert_int_equal(
		    queue_decide_batch_fire(r->h.q, r->h.now, qb, &rec), 0);
		assert_int_equal(rec.u.batch.which, b->owed);
		for (int i = 0; i < 2; i++) {
			const struct qrec_put *p;
			char want[64];

			if (!(b->owed & (1 << i)))
				continue;
			p = &rec.u.batch.puts[n++];
			assert_true(p->id == m->next_id + (uint64_t)(n - 1));
			snprintf(want, sizeof(want), "\"total\":%" PRIu64 ",",
			    b->total);
			assert_non_null(memmem(
			    p->payload, p->payload_len, want, strlen(want)));
			snprintf(want, sizeof(want),
			    "\"acked\":%" PRIu64 ",\"failed\":%" PRIu64,
			    b->acked, b->failed);
			assert_non_null(memmem(
			    p->payload, p->payload_len, want, strlen(want)));
		}
		commit(r, &rec);
		for (int i = 0; i < 2; i++)
			if (b->owed & (1 << i)) {
				m_new_task(m, 0, r->h.now, r->h.now)->pri =
				    QUEUE_DEFAULT_PRI;
				r->callbacks++;
			}
		b->fired |= b->owed;
		b->owed = 0;
		b->expires = r->h.now + m->cfg.dedup_ms;
	}
	for (int i = 0; i < NBATCH; i++)
		assert_int_equal(m->b[i].owed, 0);
}

/* ---- Schedules --------------------------------------------------------- */

static const char *const crons[2] = { "* * * * *", "*/5 * * * *" };

static void
op_sched_set(struct run *r)
{
	struct model *m = r->m;
	int si = (int)rnd(r, NSCHED), c = (int)rnd(r, 2);
	struct msched *s = &m->s[si];
	struct queue_sched_req req;
	struct qrec rec;
	char err[160];

	memset(&req, 0, sizeof(req));
	req.name = sched_names[si];
	req.name_len = 2;
	req.tube = "t0";
	req.tube_len = 2;
	req.cron = crons[c];
	req.cron_len = strlen(crons[c]);
	req.catch_up = (uint8_t)rnd(r, 3);
	req.pri = 5;
	req.ttr = 1000;
	req.max_attempts = 2;
	req.payload = "tick";
	req.payload_len = 4;
	assert_int_equal(queue_decide_sched_set(
	                     r->h.q, r->h.now, &req, &rec, err, sizeof(err)),
	    0);
	commit(r, &rec);
	if (!s->exists || s->from < r->h.now)
		s->from = r->h.now; /* a slot decided stays so */
	if (!s->exists) {
		s->fired = 0;
		s->last_slot = 0;
		s->last_id = 0;
	}
	s->exists = true;
	s->paused = false;
	s->period = c == 0 ? 1 : 5;
	s->catch_up = req.catch_up;
}

static void
op_sched_pause(struct run *r)
{
	struct model *m = r->m;
	int si = (int)rnd(r, NSCHED);
	struct msched *s = &m->s[si];
	bool paused = rnd(r, 2) == 0;
	struct qrec rec;
	int rc = queue_decide_sched_pause(
	    r->h.q, r->h.now, sched_names[si], 2, paused, &rec);

	if (!s->exists) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
		return;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(rec.type == QREC_NONE, s->paused == paused);
	if (rec.type == QREC_NONE)
		return;
	commit(r, &rec);
	s->paused = paused;
	if (!paused && r->h.now > s->from)
		s->from = r->h.now; /* the slots of the pause are skipped */
}

static void
op_sched_delete(struct run *r)
{
	struct model *m = r->m;
	int si = (int)rnd(r, NSCHED);
	struct qrec rec;
	int rc = queue_decide_sched_delete(r->h.q, sched_names[si], 2, &rec);

	if (!m->s[si].exists) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
		return;
	}
	assert_int_equal(rc, 0);
	commit(r, &rec);
	memset(&m->s[si], 0, sizeof(m->s[si]));
}

/* One SCHED_FIRE up to `slot`, with the slot's task when `put`. */
static void
fire_slot(struct run *r, int si, int64_t slot, bool put)
{
	struct model *m = r->m;
	struct msched *s = &m->s[si];
	char key[QUEUE_SCHED_KEY_MAX];
	struct qrec rec;
	uint64_t id;
	struct mt *t;

	assert_true(slot > s->from);
	assert_int_equal(queue_decide_sched_fire(r->h.q, r->h.now,
	                     sched_names[si], 2, slot, put, key, &rec, &id),
	    0);
	assert_int_equal(rec.u.sched.has_put, put);
	commit(r, &rec);
	s->from = slot;
	if (!put) {
		r->slots_skipped++;
		return;
	}
	assert_true(id == m->next_id);
	for (size_t i = 0; i < m->nfired; i++)
		if (m->fired[i].sched == si && m->fired[i].slot == slot)
			fail_msg("slot %" PRId64 " of %s fired twice", slot,
			    sched_names[si]);
	assert_true(m->nfired < MAXFIRED);
	m->fired[m->nfired].sched = si;
	m->fired[m->nfired].slot = slot;
	m->nfired++;
	t = m_new_task(m, 0, r->h.now, r->h.now);
	t->pri = 5;
	t->maxa = 2;
	t->sched = si + 1;
	t->slot = slot;
	s->fired++;
	s->last_slot = slot;
	s->last_id = t->id;
	r->slots_put++;
}

/* The server's timer (ops/sched.c, fire_due): each schedule's slots due
 * by now, by its catch-up mode. */
static void
fire_schedules(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;

	for (int si = 0; si < NSCHED; si++) {
		struct msched *s = &m->s[si];
		int64_t p, first, last, n, after, grace;
		bool on_time;

		if (!s->exists || s->paused)
			continue;
		p = s->period * MIN_MS;
		first = (s->from / p + 1) * p;
		if (first > now)
			continue;
		last = now / p * p;
		n = (last - first) / p + 1;
		after = last + p;
		grace = (after - last) / 2 < 60000 ? (after - last) / 2 : 60000;
		on_time = now - last <= grace;
		if (s->catch_up == QREC_CATCH_ALL) {
			int64_t keep =
			    n < QREC_CATCH_ALL_MAX ? n : QREC_CATCH_ALL_MAX;

			if (n > keep)
				fire_slot(
				    r, si, first + (n - keep) * p - 1, false);
			for (int64_t k = n - keep; k < n; k++)
				fire_slot(r, si, first + k * p, true);
		} else if (s->catch_up == QREC_CATCH_ONE || on_time) {
			if (n > 1)
				fire_slot(r, si, last - p, false);
			fire_slot(r, si, last, true);
		} else {
			fire_slot(r, si, last, false);
		}
	}
}

/* A FIRE of a slot already decided (a node that lost track, a second
 * leader) is refused. */
static void
op_sched_stale(struct run *r)
{
	struct model *m = r->m;
	int si = (int)rnd(r, NSCHED);
	struct msched *s = &m->s[si];
	char key[QUEUE_SCHED_KEY_MAX];
	struct qrec rec;
	uint64_t id;
	int64_t slot;
	int rc;

	if (!s->exists || s->from == 0)
		return;
	slot = s->last_slot != 0 && rnd(r, 2)
	    ? s->last_slot
	    : s->from - (int64_t)rnd(r, 3) * MIN_MS;
	rc = queue_decide_sched_fire(
	    r->h.q, r->h.now, sched_names[si], 2, slot, true, key, &rec, &id);
	assert_int_equal(rc, SLUICE_ESTATE);
	r->stale_refused++;
}

/* A worker's session ends: its leases that are not detached end with
 * it, each as a lost lease (a cancelled task's as a DELETE). */
static void
op_session_gone(struct run *r)
{
	struct model *m = r->m;
	uint64_t session = 1 + rnd(r, 3);
	struct qrec rec;
	char why[64];

	snprintf(why, sizeof(why), "worker disconnected (peer-%" PRIu64 ")",
	    session);
	for (size_t k = 0; k <= MAXLIVE; k++) {
		struct mt *t = lease_end_next(r, session, why, &rec);

		if (t == NULL)
			return;
		r->sessions_gone++;
		if (t->cancelled) {
			m_cancelled_end(r, t, &rec);
		} else {
			commit(r, &rec);
			m_lost(m, t, r->h.now, false, why);
		}
		m_settle_all(m, r->h.now);
	}
	fail_msg("session release did not end");
}

/* ---- Restarts ----------------------------------------------------------- */

/* The queue is rebuilt from the log (from the start, or from the
 * snapshot plus the log after it), then the leases of the old process
 * end as a node's start ends them. */
static void
restart(struct run *r, bool from_snap)
{
	struct model *m = r->m;
	struct queue *q =
	    tm_rebuilt(&r->h, &m->cfg, from_snap ? &r->snap : NULL, r->snap_at);
	struct qrec rec;
	static const char why[] = "server restarted";

	queue_free(r->h.q);
	r->h.q = q;
	queue_on_final(q, on_final, m);
	r->restarts++;
	for (size_t k = 0; k <= MAXLIVE; k++) {
		struct mt *t = lease_end_next(r, 0, why, &rec);

		if (t == NULL)
			return;
		if (t->cancelled) {
			m_cancelled_end(r, t, &rec);
		} else {
			commit(r, &rec);
			m_lost(m, t, r->h.now, false, why);
		}
		m_settle_all(m, r->h.now);
	}
	fail_msg("restart did not end");
}

/* ---- Comparing ----------------------------------------------------------- */

static void
compare_task(struct run *r, const struct mt *t)
{
	struct queue_task_view v;

	assert_int_equal(queue_peek(r->h.q, r->h.now, t->id, &v), 0);
	assert_int_equal(v.state, m_view_state(t, r->h.now));
	assert_memory_equal(v.tube, tube_names[t->tube], 2);
	assert_int_equal(v.attempts, t->attempts);
	assert_int_equal(v.pri, t->pri);
	if (t->state == M_DONE)
		assert_true(v.run_at == t->kept_until);
	else if (t->state != M_WAITING)
		assert_true(v.run_at == t->run_at);
	assert_true(v.lease == t->lease);
	assert_true(v.session == t->session);
	assert_int_equal(v.detached, t->detached);
	if (t->has_err) {
		assert_non_null(v.last_error);
		if (v.last_error_len != strlen(t->err) ||
		    memcmp(v.last_error, t->err, v.last_error_len) != 0)
			fail_msg("task %" PRIu64 ": last error \"%.*s\", the "
			         "model \"%s\"",
			    t->id, (int)v.last_error_len, v.last_error, t->err);
	} else {
		assert_null(v.last_error);
	}
	assert_int_equal(queue_cancelled(r->h.q, t->id), t->cancelled);
}

/* The graph around `id`: whether the queue knows it, its parents and
 * how many it still waits for, and its outcome as a child sees it. */
static void
compare_deps(struct run *r, uint64_t id)
{
	struct model *m = r->m;
	struct mt *t = m_find(m, id);
	struct queue_task_deps d;
	const char *res;
	size_t len;
	int o, want, rc = queue_task_deps(r->h.q, id, &d);

	if (t == NULL && !m->node[id].exists) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
	} else {
		assert_int_equal(rc, 0);
		if (t != NULL) {
			assert_int_equal(d.nparents, (size_t)t->np);
			for (int k = 0; k < t->np; k++)
				assert_true(d.parents[k] == t->parents[k]);
			if (t->np > 0)
				assert_int_equal(d.on_parent, t->rule);
		}
		if (m->node[id].exists && !m->node[id].gone)
			assert_int_equal(d.pending, m->node[id].pending);
	}
	queue_dep_result(r->h.q, id, &o, &res, &len);
	assert_int_equal(o, m_outcome(m, id));
	if ((want = m_dep_res(m, id)) > 0) {
		assert_int_equal(len, strlen(results[want]));
		assert_memory_equal(res, results[want], len);
	} else {
		assert_null(res);
	}
}

static void
compare_batches(struct run *r)
{
	struct model *m = r->m;

	for (int i = 0; i < NBATCH; i++) {
		const struct mbatch *b = &m->b[i];
		struct queue_batch_info q;
		uint64_t c[5] = { 0 };
		int rc = queue_batch_show(r->h.q, batch_names[i], 2, &q);

		if (!b->exists) {
			assert_int_equal(rc, SLUICE_ENOTFOUND);
			continue;
		}
		assert_int_equal(rc, 0);
		for (size_t k = 0; k < m->n; k++)
			if (m->t[k].batch == i)
				c[m_view_state(&m->t[k], r->h.now) ==
				            QUEUE_WAITING
				        ? 0
				        : m_view_state(&m->t[k], r->h.now)]++;
		assert_true(q.waiting == c[0] && q.ready == c[QUEUE_READY]);
		assert_true(q.delayed == c[QUEUE_DELAYED]);
		assert_true(q.taken == c[QUEUE_TAKEN]);
		assert_true(q.total == b->total && q.acked == b->acked);
		assert_true(q.buried == b->buried && q.failed == b->failed);
		assert_int_equal(q.closed, b->closed);
		assert_int_equal(q.ended, b->ended);
		assert_int_equal(q.owed, b->owed);
		assert_int_equal(q.fired, b->fired);
		assert_true(q.started_at == b->started);
		assert_true(q.ended_at == (b->ended ? b->ended_at : 0));
	}
	assert_int_equal(queue_batch_owed(r->h.q) != NULL,
	    m->b[0].owed || m->b[1].owed || m->b[2].owed);
}

static void
compare_scheds(struct run *r)
{
	struct model *m = r->m;

	for (int i = 0; i < NSCHED; i++) {
		const struct msched *s = &m->s[i];
		const struct sched *q =
		    queue_sched_find(r->h.q, sched_names[i], 2);

		if (!s->exists) {
			assert_null(q);
			continue;
		}
		assert_non_null(q);
		assert_int_equal(q->paused, s->paused);
		assert_true(q->from == s->from);
		assert_true(q->fired == s->fired);
		assert_true(q->last_slot == s->last_slot);
		assert_true(q->last_id == s->last_id);
		assert_int_equal(q->catch_up, s->catch_up);
	}
}

/* The ids named to the final callback are those the model expects,
 * each once. */
static void
compare_finals(struct run *r)
{
	struct model *m = r->m;

	qsort(m->final_want, m->nfinal_want, sizeof(uint64_t), sorted_u64);
	qsort(m->final_got, m->nfinal_got, sizeof(uint64_t), sorted_u64);
	for (size_t i = 0; i < m->nfinal_want || i < m->nfinal_got; i++) {
		uint64_t w = i < m->nfinal_want ? m->final_want[i] : 0;
		uint64_t g = i < m->nfinal_got ? m->final_got[i] : 0;

		if (w != g)
			fail_msg("final callback: the model wants %" PRIu64
			         ", the queue named %" PRIu64 " (%zu and %zu)",
			    w, g, m->nfinal_want, m->nfinal_got);
	}
	m->nfinal_want = m->nfinal_got = 0;
}

/* How task `id` stands for a waiter (queue_result): its outcome while
 * kept, else the live task, else not found. */
static void
compare_result(struct run *r, uint64_t id)
{
	struct model *m = r->m;
	const struct mout *o = &m->out[id];
	const struct mt *t = m_find(m, id);
	struct queue_result q;
	int rc = queue_result(r->h.q, r->h.now, id, &q);

	if (o->kind != 0 && o->expires > r->h.now) {
		assert_int_equal(rc, 0);
		if (!q.final || q.state != o->kind)
			fail_msg("task %" PRIu64 ": outcome %s, the model %s",
			    id, q.final ? queue_end_name(q.state) : "not final",
			    queue_end_name(o->kind));
		assert_true(q.time == o->time);
		assert_memory_equal(q.tube, tube_names[o->tube], 2);
		assert_int_equal(q.text_len, o->has_text ? strlen(o->text) : 0);
		if (o->has_text)
			assert_memory_equal(q.text, o->text, q.text_len);
		return;
	}
	if (t == NULL) {
		if (rc != SLUICE_ENOTFOUND)
			fail_msg("task %" PRIu64
			         ": a result (%s), the model none",
			    id, queue_end_name(q.state));
		return;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(q.state, m_view_state(t, r->h.now));
	assert_int_equal(q.final, t->state == M_BURIED || t->state == M_DONE);
	assert_int_equal(q.cancelled, t->cancelled);
}

static void
compare(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_str all[NTUBE];
	struct queue_take_req tr = { all, NTUBE, 1, false, false };
	struct qrec rec;
	struct mt *best;
	int rc;

	for (int i = 0; i < NTUBE; i++) {
		struct queue_tube_stats s;
		uint64_t c[QUEUE_STATE_END_] = { 0 };

		all[i].p = tube_names[i];
		all[i].len = 2;
		if (queue_tube_stats(r->h.q, now, tube_names[i], 2, &s) != 0)
			memset(&s, 0, sizeof(s)); /* never made yet */
		for (size_t k = 0; k < m->n; k++)
			if (m->t[k].tube == i)
				c[m_view_state(&m->t[k], now)]++;
		if (s.ready != c[QUEUE_READY] ||
		    s.delayed != c[QUEUE_DELAYED] ||
		    s.taken != c[QUEUE_TAKEN] || s.buried != c[QUEUE_BURIED] ||
		    s.waiting != c[QUEUE_WAITING] || s.done != c[QUEUE_DONE])
			fail_msg("tube %s: ready %" PRIu64 " delayed %" PRIu64
			         " taken %" PRIu64 " buried %" PRIu64
			         " waiting %" PRIu64 "; the model %" PRIu64
			         " %" PRIu64 " %" PRIu64 " %" PRIu64
			         " %" PRIu64,
			    tube_names[i], s.ready, s.delayed, s.taken,
			    s.buried, s.waiting, c[QUEUE_READY],
			    c[QUEUE_DELAYED], c[QUEUE_TAKEN], c[QUEUE_BURIED],
			    c[QUEUE_WAITING]);
		assert_memory_equal(&s.ctr, &m->ctr[i], sizeof(s.ctr));
	}
	best = m_best(m, (1u << NTUBE) - 1, now);
	rc = queue_decide_take(r->h.q, now, &tr, &rec);
	assert_int_equal(rc, best != NULL ? 0 : SLUICE_ETIMEDOUT);
	if (best != NULL)
		assert_true(rec.u.take.id == best->id);
	if (m->n > 0)
		compare_task(r, &m->t[rnd(r, m->n)]);
	for (int k = 0; k < 2; k++)
		compare_deps(r, 1 + rnd(r, m->next_id - 1 + 1));
	for (int k = 0; k < 2; k++)
		compare_result(r, 1 + rnd(r, m->next_id - 1 + 1));
	compare_finals(r);
	/* the model's own rule: a child out of waiting (queued, taken,
	 * done) has each parent acked, or failed under ignore, unless an
	 * operator kicked it */
	for (size_t k = 0; k < m->n; k++) {
		const struct mt *t = &m->t[k];

		if (t->np == 0 || t->kicked || t->state == M_WAITING ||
		    t->state == M_BURIED)
			continue;
		for (int j = 0; j < t->np; j++) {
			int o = m_outcome(m, t->parents[j]);

			assert_true(o == O_DONE ||
			    (o == O_FAILED && t->rule == QUEUE_PARENT_IGNORE));
		}
	}
	compare_batches(r);
	compare_scheds(r);
	/* the server sleeps until then: a child released delayed, a lease's
	 * deadline, a done task's purge */
	{
		int64_t wake = INT64_MAX;

		for (size_t k = 0; k < m->n; k++) {
			const struct mt *t = &m->t[k];
			int64_t at = t->state == M_QUEUED && t->run_at > now
			    ? t->run_at
			    : t->state == M_TAKEN ? t->deadline
			    : t->state == M_DONE  ? t->kept_until
			                          : INT64_MAX;

			wake = at < wake ? at : wake;
		}
		assert_true(queue_next_wake(r->h.q) == wake);
	}
	tq_check(&r->h);
}

/* ---- The run ------------------------------------------------------------- */

static void
step(struct run *r, size_t i)
{
	struct model *m = r->m;
	uint64_t c = rnd(r, 100);
	int64_t dt = rnd(r, 3) == 0 ? (int64_t)rnd(r, 400) : 0;

	if (rnd(r, 60) == 0)
		dt = (int64_t)rnd(r, 3 * MIN_MS);
	if (rnd(r, 700) == 0)
		dt = (int64_t)rnd(r, 120 * MIN_MS); /* a gap: catch-up */
	r->h.now += dt;
	m_tick(m, r->h.now);
	op_expire(r);
	fire_schedules(r);
	fire_batches(r);
	if (m->n > 250 && c < 40)
		c = 40 + c % 30; /* keep the live set small */
	if (c < 30)
		op_put(r);
	else if (c < 44)
		op_take(r);
	else if (c < 56)
		op_ack(r);
	else if (c < 59)
		op_release(r);
	else if (c < 64)
		op_fail(r);
	else if (c < 66)
		op_touch(r);
	else if (c < 70)
		op_bury(r);
	else if (c < 74)
		op_kick(r);
	else if (c < 77)
		op_delete(r);
	else if (c < 83)
		op_cancel(r);
	else if (c < 86)
		op_batch_set(r);
	else if (c < 89)
		op_batch_close(r);
	else if (c < 91)
		op_sched_set(r);
	else if (c < 93)
		op_sched_pause(r);
	else if (c < 94)
		rnd(r, 4) ? op_sched_stale(r) : op_sched_delete(r);
	else if (c < 97)
		op_update(r);
	else if (c < 98 && rnd(r, 4) == 0)
		op_flush(r);
	else if (c < 98)
		op_session_gone(r);
	else
		op_take(r);
	/* callbacks owed by this step's record are fired at once too */
	fire_batches(r);
	compare(r);
	feed_follower(r);
	if (i % 1000 == 0)
		assert_true(tq_same(r->h.q, r->follower, r->h.now));
	if (i == STEPS / 4)
		tm_snapshot(&r->h, &r->snap, &r->snap_at);
	if (i == STEPS / 2)
		restart(r, false);
	if (i == 3 * STEPS / 4)
		restart(r, true);
}

static void
run_seed(uint64_t seed, struct run *total)
{
	struct run *r = calloc(1, sizeof(*r));
	struct model *m = calloc(1, sizeof(*m));
	struct queue_tube_set_req ts;
	struct qrec rec;

	assert_true(r != NULL && m != NULL);
	r->m = m;
	queue_config_default(&m->cfg);
	m->cfg.dedup_ms = 5000;
	m->cfg.default_ttr_ms = 1000;
	/* half the seeds keep acked tasks as done a while, a few at most:
	 * a done parent's result comes from the task, then its node */
	if (seed % 2 == 1) {
		m->cfg.keep_done_ms = 3000;
		m->cfg.max_done = 30;
	}
	m->cfg.lost_lease_retry = QUEUE_RETRY_IMMEDIATE;
	m->next_id = 1;
	tq_init(&r->h, &m->cfg, T0);
	queue_on_final(r->h.q, on_final, m);
	r->follower = queue_new(&m->cfg);
	buf_init(&r->snap);
	r->rnd = seed;
	/* t1's failures go to dl */
	memset(&ts, 0, sizeof(ts));
	ts.tube = "t1";
	ts.tube_len = 2;
	ts.set = QREC_TS_DEAD_LETTER;
	ts.conf.dead_letter = "dl";
	ts.conf.dead_letter_len = 2;
	assert_int_equal(queue_decide_tube_set(r->h.q, r->h.now, &ts, &rec), 0);
	commit(r, &rec);
	for (size_t i = 1; i <= STEPS; i++)
		step(r, i);
	assert_true(tq_same(r->h.q, r->follower, r->h.now));
	queue_free(tm_rebuilt(&r->h, &m->cfg, NULL, 0));
	queue_free(tm_rebuilt(&r->h, &m->cfg, &r->snap, r->snap_at));
	fprintf(stderr,
	    "seed %" PRIu64 ": %" PRIu64 " ids; children taken %" PRIu64
	    ", results %" PRIu64 ", cancels taken %" PRIu64 " queued %" PRIu64
	    ", callbacks %" PRIu64 ", slots put %" PRIu64 " skipped %" PRIu64
	    ", stale fires refused %" PRIu64 ", restarts %" PRIu64 "\n",
	    seed, m->next_id - 1, r->children_taken, r->results_seen,
	    r->cancel_taken, r->cancel_queued, r->callbacks, r->slots_put,
	    r->slots_skipped, r->stale_refused, r->restarts);
	total->children_taken += r->children_taken;
	total->results_seen += r->results_seen;
	total->cancel_taken += r->cancel_taken;
	total->cancel_queued += r->cancel_queued;
	total->callbacks += r->callbacks;
	total->slots_put += r->slots_put;
	total->slots_skipped += r->slots_skipped;
	total->stale_refused += r->stale_refused;
	total->restarts += r->restarts;
	total->flushed += r->flushed;
	total->key_parents += r->key_parents;
	total->sessions_gone += r->sessions_gone;
	buf_fini(&r->snap);
	queue_free(r->follower);
	tq_fini(&r->h);
	free(m);
	free(r);
}

static void
test_workflows_agree_with_the_model(void **state)
{
	const uint64_t seeds[] = { 1, 2, 7, 0x5eed };
	uint64_t base = t_seed(0);
	struct run total;

	(void)state;
	memset(&total, 0, sizeof(total));
	memset(rules_applied, 0, sizeof(rules_applied));
	memset(cancels, 0, sizeof(cancels));
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		run_seed(seeds[i] + base, &total);
	/* each part was reached */
	assert_true(total.children_taken > 0 && total.results_seen > 0);
	assert_true(total.cancel_taken > 0 && total.cancel_queued > 0);
	assert_true(total.callbacks > 0 && total.slots_put > 0);
	assert_true(total.slots_skipped > 0 && total.stale_refused > 0);
	assert_true(total.restarts == 2 * 4);
	assert_true(total.flushed > 0 && total.key_parents > 0);
	assert_true(total.sessions_gone > 0);
	fprintf(stderr,
	    "rules applied: fail %" PRIu64 ", ignore %" PRIu64
	    ", cancel %" PRIu64 "\n",
	    rules_applied[QUEUE_PARENT_FAIL],
	    rules_applied[QUEUE_PARENT_IGNORE],
	    rules_applied[QUEUE_PARENT_CANCEL]);
	for (int k = 0; k < QUEUE_PARENT_END_; k++)
		assert_true(rules_applied[k] > 0);
	fprintf(stderr,
	    "cancelled: ready %" PRIu64 ", delayed %" PRIu64
	    ", waiting %" PRIu64 ", buried %" PRIu64 ", taken %" PRIu64 "\n",
	    cancels[QUEUE_READY], cancels[QUEUE_DELAYED],
	    cancels[QUEUE_WAITING], cancels[QUEUE_BURIED],
	    cancels[QUEUE_TAKEN]);
	assert_true(cancels[QUEUE_READY] > 0 && cancels[QUEUE_DELAYED] > 0);
	assert_true(cancels[QUEUE_WAITING] > 0 && cancels[QUEUE_BURIED] > 0);
	assert_true(cancels[QUEUE_TAKEN] > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workflows_agree_with_the_model),
	};

	return cmocka_run_group_tests_name("model_flow", tests, NULL, NULL);
}
