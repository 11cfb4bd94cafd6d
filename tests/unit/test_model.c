/* Model test of src/queue: random request sequences, run both through the
 * queue (decide, encode, decode, apply, as the server does) and through a
 * small reference model that keeps live tasks in a plain array and answers
 * everything by linear scans. After every step the error codes, the per
 * tube stats (counts by state, oldest ready age, pause, every counter), the
 * task the next take would get, and every field of one random task must
 * agree. Time moves randomly, so delays, ttr expiry, backoff, dedup
 * windows and pauses all happen.
 *
 * Tubes carry settings (tube set: ttr, max_attempts, backoff, a dead
 * letter tube, and two the queue only keeps) that puts, fails and buries
 * follow, and go away (tube delete, with their tasks when forced). They
 * carry flow limits too (a rate per second with its burst, a cap on tasks
 * taken at once), which the model holds with a token bucket of its own:
 * a take the queue gives or refuses, the model must too.
 *
 * Puts into tubes t2 and t3 may name a fair group (g0..g2), and tubes
 * carry group limits (every group's cap, one group's own cap, a group's
 * pause, every group's rate or one group's own, with a bucket the model
 * keeps on the queue's clock: glimit.h). The model does not replay the
 * rotation's turns: a take must get the best ready task of a group that no
 * limit holds, of the best priority among those groups (any group's, in turn),
 * and the best across the tubes of some choice of those; the model then follows
 * the queue's choice. A group at its cap or paused never hands out a
 * task, and a take finds nothing exactly when the model finds nothing.
 *
 * Keyed puts may debounce (a replace due its window from now) or
 * throttle (ignored while the key's window from its last accepted
 * throttled put is open, whatever became of that task; the model keeps
 * the windows by key), and the windows go through replay and snapshots.
 *
 * Replay: every record also goes to a follower queue through apply alone;
 * their dumps are compared along the way. Snapshots taken at a few points
 * are loaded into fresh queues that then apply the rest of the log, and
 * must end with the same dump.
 *
 * Hourly statistics: the model logs every take, ack, fail, bury and ttr
 * expiry with its time and duration; now and then (and at the end) each
 * tube's hours and those of every tube merged must agree: counts, totals
 * and maxima exactly, each percentile in the bucket of the true one (the
 * nearest rank of the durations logged) and within the stated error.
 *
 * Workflows (dependencies and the waiting state, results, cancelling,
 * batches, schedules) have a model of their own: test_model_flow.c. The
 * helpers and log checks both use are t_model.h's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/limits.h"
#include "t_lib.h"
#include "t_queue.h"

#define T0 1700000000000LL

enum {
	NTUBE = 4,
	NKEY = 6,
	NERR = 4,
	NPAY = 9,
	NSESSION = 4,
	MAXLIVE = 2048,
	STEPS = 25000, /* per seed */
	NSNAP = 3,
	PICK_OTHER = 5 /* t_model.h's pick_taken: 1 in 5 names any id */
};

enum { M_QUEUED = 1, M_TAKEN = 2, M_BURIED = 3, M_DONE = 4 };

enum { NGRP = 3 };
static const char *const grp_names[NGRP] = { "g0", "g1", "g2" };

/* A tube's group limits: every group's cap (0: none), each group's own
 * (0: none) and pause. */
struct mgl {
	uint32_t def;
	uint32_t own[NGRP];
	bool paused[NGRP];
	uint32_t def_rate, def_burst; /* every group's rate (per second) */
	uint32_t own_rate[NGRP], own_burst[NGRP];
};

/* A live group's bucket (per second), as the queue keeps it: full when
 * the group is made or its rate changes, a token spent by each take. */
struct mgb {
	bool live;            /* tasks name the group */
	uint32_t rate, burst; /* its rate in force (0: none) */
	uint64_t credit;
	int64_t stamp;
};

/* A tube's settings: the QREC_TS_* it sets, and their values. */
struct mconf {
	uint8_t set;
	uint32_t ttr, maxa, base, cap;
	int64_t keep;
	bool immediate;
	int dl; /* the dead letter tube; -1: none */
};

/* A tube's flow limits (per second), and its bucket: credit in
 * token-milliseconds at stamp. */
struct mlim {
	uint8_t set; /* QREC_LIM_* */
	uint32_t rate, burst, conc;
	uint64_t credit;
	int64_t stamp;
};

static const char *const tube_names[NTUBE] = { "t0", "t1", "t2", "t3" };
/* Namespaces whose usage is counted: a tube, every tube, a prefix that
 * covers one, and one that covers none. */
static const struct queue_ns ns[] = { { "t0", 2, false }, { "t", 1, true },
	{ "t1", 2, true }, { "u", 1, true } };
static const char *const key_names[NKEY] = { "k0", "k1", "k2", "k3", "k4",
	"k5" };
static const char *const err_texts[NERR] = { "timeout", "oom",
	"connection refused", "exit 1" };
static const char *const results[NERR] = { "ok", "sent 3 mails", "",
	"done in 12 ms" };

/* Payload p: "payload-p" cut or repeated to a length that depends on p. */
static size_t
payload(int p, char *out)
{
	size_t len = (size_t)(p * 13) % 60;
	char word[16];
	size_t w = (size_t)snprintf(word, sizeof(word), "payload-%d/", p);

	for (size_t i = 0; i < len; i++)
		out[i] = word[i % w];
	return len;
}

/* ---- The model --------------------------------------------------------- */

struct mt {
	uint64_t id;
	int tube;
	int state;
	uint32_t pri, ttr, attempts, maxa;
	int64_t run_at, period, buried_at;
	int key, pay; /* -1: none; key: tube * NKEY + its name's index */
	bool has_err;
	char err[80]; /* last_error while has_err */
	uint64_t lease, session;
	bool detached;
	int64_t deadline;
	int64_t created, taken_at;
	/* done: when, until when it is kept, its key while reserved (in
	 * dedup_id), its result (-1: none) */
	int64_t finished, kept_until;
	int dkey, res;
	bool repl;
	uint32_t r_pri, r_ttr, r_maxa;
	int64_t r_run_at, r_period;
	int r_pay;
	uint64_t ver, r_ver; /* the client's versions; 0: none */
	int grp;             /* its fair group; -1: none */
};

struct model {
	struct queue_config cfg;
	struct mt t[MAXLIVE];
	size_t n;
	uint64_t next_id;
	bool exists[NTUBE];
	int64_t pause[NTUBE];
	/* by key of a tube, tube * NKEY + key (keys are per tube) */
	uint64_t dedup_id[NTUBE * NKEY]; /* 0: no entry */
	int64_t dedup_exp[NTUBE * NKEY];
	uint64_t dedup_ver[NTUBE * NKEY]; /* the finished task's version */
	/* the key's throttle window: the task that opened it, its end */
	uint64_t thr_id[NTUBE * NKEY];
	int64_t thr_until[NTUBE * NKEY];
	struct queue_counters ctr[NTUBE];
	struct mconf conf[NTUBE];
	struct mlim lim[NTUBE];
	struct mgl grpl[NTUBE];
	struct mgb gb[NTUBE][NGRP];
	struct mev *ev; /* every event the hourly statistics count */
	size_t nev, evcap;
};

enum { EV_WAIT, EV_WORK, EV_FAIL, EV_BURY, EV_TTR };

struct mev {
	int64_t time;
	int64_t dur; /* EV_WAIT, EV_WORK */
	int tube;
	int kind;
};

/* The run: the queue (t_queue.h) and the model, side by side. */
struct run {
	struct tq h;
	struct model *m;
	struct queue *follower;
	size_t fed; /* log entries given to the follower */
	uint64_t rnd;
	uint64_t ops, records;
	uint64_t tube_sets, tube_deletes, dead_letters;
	uint64_t tube_limits, held; /* TUBE_LIMITs; takes a limit held */
	uint64_t group_sets, gheld; /* GROUP_SETs; takes a group's held */
	uint64_t grate;             /* ... and of them by its rate */
	struct buf snap[NSNAP];
	size_t snap_at[NSNAP];
	int nsnap;
};

/* The helpers both model tests use, over the types above. */
#include "t_model.h"

static void
m_event(struct model *m, int tube, int64_t time, int kind, int64_t dur)
{
	if (m->nev == m->evcap) {
		m->evcap = m->evcap ? 2 * m->evcap : 4096;
		m->ev = realloc(m->ev, m->evcap * sizeof(*m->ev));
		assert_non_null(m->ev);
	}
	m->ev[m->nev++] = (struct mev) { time, dur, tube, kind };
}

/* A deleted tube's statistics go with it. */
static void
m_forget_events(struct model *m, int tube)
{
	size_t k = 0;

	for (size_t i = 0; i < m->nev; i++)
		if (m->ev[i].tube != tube)
			m->ev[k++] = m->ev[i];
	m->nev = k;
}

static struct mt *
m_by_key(struct model *m, int key)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].key == key)
			return &m->t[i];
	return NULL;
}

/* The done task whose key is still reserved. */
static struct mt *
m_done_by_key(struct model *m, int key, int64_t now)
{
	struct mt *t;

	if (m->dedup_id[key] == 0 || m->dedup_exp[key] <= now)
		return NULL;
	t = m_find(m, m->dedup_id[key]);
	return t != NULL && t->state == M_DONE ? t : NULL;
}

/* The done task a key's entry still names (reserved or not): its key stays
 * with it while it is kept. */
static struct mt *
m_done_of_key(struct model *m, int key)
{
	struct mt *t;

	if (m->dedup_id[key] == 0)
		return NULL;
	t = m_find(m, m->dedup_id[key]);
	return t != NULL && t->state == M_DONE && t->dkey == key ? t : NULL;
}

/* A key whose reservation ended while its done task, which had a
 * version, is still kept: held for that version, reserved no more. */
static bool
m_held(struct model *m, int key, int64_t now)
{
	return m->dedup_exp[key] <= now && m->dedup_ver[key] != 0 &&
	    m_done_of_key(m, key) != NULL;
}

/* Removes a task. The key of a completed (acked) one is reserved for the
 * dedup window; that of a cancelled (deleted) one is free at once. */
static void
m_gone(struct model *m, struct mt *t, int64_t now, bool completed)
{
	/* A cancelled done task frees its reserved key too. */
	if (t->state == M_DONE && t->dkey >= 0 && !completed &&
	    m->dedup_id[t->dkey] == t->id)
		m->dedup_id[t->dkey] = 0;
	if (t->key >= 0) {
		m->dedup_id[t->key] = completed ? t->id : 0;
		m->dedup_exp[t->key] = completed ? now + m->cfg.dedup_ms : 0;
		m->dedup_ver[t->key] = completed ? t->ver : 0;
	}
	*t = m->t[--m->n];
}

static void
m_unlease(struct mt *t)
{
	t->lease = 0;
	t->session = 0;
	t->detached = false;
	t->deadline = 0;
}

static void
m_apply_repl(struct mt *t, int64_t now)
{
	t->pay = t->r_pay;
	t->pri = t->r_pri;
	t->ttr = t->r_ttr;
	t->maxa = t->r_maxa;
	t->period = t->r_period;
	t->ver = t->r_ver;
	t->run_at = t->r_run_at > now ? t->r_run_at : now;
	t->attempts = 0;
	t->has_err = false;
	t->taken_at = 0; /* new content starts over: never taken */
	t->repl = false;
	t->state = M_QUEUED;
	m_unlease(t);
}

static void
m_bury(struct model *m, struct mt *t, int64_t now)
{
	t->state = M_BURIED;
	t->buried_at = now;
	m_unlease(t);
	m->ctr[t->tube].bury++;
	m_event(m, t->tube, now, EV_BURY, 0);
}

/* Done tasks whose retention ended go (their reserved keys stay). */
static void
m_purge(struct model *m, int64_t now)
{
	struct mt *t;

	while ((t = m_first_done(m)) != NULL && t->kept_until <= now) {
		t->dkey = -1;
		m_gone(m, t, now, true);
	}
}

static size_t
m_count_done(const struct model *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += m->t[i].state == M_DONE;
	return n;
}

/* A task moves to tube `to`: its key goes with it, unless that tube holds
 * the key (a live task, or a reservation not yet expired): then it
 * arrives without one, and without a version. */
static void
m_move_key(struct model *m, struct mt *t, int to, int64_t now)
{
	int nk;

	if (t->key < 0 || to == t->tube)
		return;
	nk = to * NKEY + t->key % NKEY;
	if (m_by_key(m, nk) != NULL ||
	    (m->dedup_id[nk] != 0 && m->dedup_exp[nk] > now) ||
	    m_held(m, nk, now)) {
		t->key = -1;
		t->ver = 0; /* a version is kept with the key */
	} else {
		t->key = nk;
	}
}

/* A taken task to be buried goes to its tube's dead letter tube, ready,
 * when the tube has one. */
static void
m_bury_taken(struct model *m, struct mt *t, int64_t now)
{
	int dl = m->conf[t->tube].dl;

	if (dl < 0) {
		m_bury(m, t, now);
		return;
	}
	/* Where the task would have been buried, the statistics count a
	 * bury, as the dead letter stands for one. */
	m_event(m, t->tube, now, EV_BURY, 0);
	m_move_key(m, t, dl, now);
	t->tube = dl;
	t->state = M_QUEUED;
	t->run_at = now;
	m_unlease(t);
	m->exists[dl] = true;
}

static uint32_t
m_ttr(const struct model *m, int tube, uint32_t asked)
{
	if (asked != 0)
		return asked;
	return (m->conf[tube].set & QREC_TS_TTR) ? m->conf[tube].ttr
	                                         : m->cfg.default_ttr_ms;
}

static uint32_t
m_maxa(const struct model *m, int tube, uint32_t asked)
{
	if (asked != 0 || !(m->conf[tube].set & QREC_TS_MAX_ATTEMPTS))
		return asked;
	return m->conf[tube].maxa;
}

static int64_t
m_backoff(const struct model *m, int tube, uint32_t attempts)
{
	const struct mconf *c = &m->conf[tube];
	bool own = (c->set & QREC_TS_BACKOFF) != 0;
	int64_t d = own ? c->base : m->cfg.backoff_base_ms;
	int64_t cap = own ? c->cap : m->cfg.backoff_cap_ms;

	for (uint32_t i = 1; i < attempts && d > 0 && d < cap; i++)
		d *= 2;
	return d < cap ? d : cap;
}

/* A lost lease is ready again at once: the tube's own setting, else the
 * server's --lost-lease-retry. */
static bool
m_lost_immediate(const struct model *m, int tube)
{
	const struct mconf *c = &m->conf[tube];

	if (c->set & QREC_TS_LOST_LEASE)
		return c->immediate;
	return m->cfg.lost_lease_retry == QUEUE_RETRY_IMMEDIATE;
}

/* A lease ends without its holder: ttr, session gone or a restart (with
 * `why`, and `at_once`). The first two follow the retry policy; a restart
 * makes the task ready at once. Each records why. */
static void
m_lost(struct model *m, struct mt *t, int64_t now, bool ttr, const char *why,
    bool at_once)
{
	char text[80];

	if (ttr) {
		m->ctr[t->tube].ttr_expired++;
		m_event(m, t->tube, now, EV_TTR, 0);
		m_ttr_text(text, sizeof(text), t->ttr);
		why = text;
	} else {
		m->ctr[t->tube].session_released++;
	}
	if (t->repl) {
		m_apply_repl(t, now);
		return;
	}
	if (why != NULL)
		m_set_err(t, why);
	if (t->maxa > 0 && t->attempts >= t->maxa) {
		m_bury_taken(m, t, now);
	} else {
		t->state = M_QUEUED;
		t->run_at = now;
		if (!at_once && !m_lost_immediate(m, t->tube))
			t->run_at += m_backoff(m, t->tube, t->attempts);
		m_unlease(t);
	}
}

/* The bucket of tube `tube` at `now`: what it held, and a token per
 * 1000 / rate ms since, at most the burst. */
static uint64_t
m_credit(const struct model *m, int tube, int64_t now)
{
	const struct mlim *l = &m->lim[tube];
	uint64_t full = (uint64_t)l->burst * 1000, c = l->credit;

	if (now > l->stamp)
		c += (uint64_t)(now - l->stamp) * l->rate;
	return c < full ? c : full;
}

/* Whether a limit of the tube holds its ready tasks back now. */
static bool
m_tube_held(const struct model *m, int tube, int64_t now)
{
	const struct mlim *l = &m->lim[tube];
	uint32_t taken = 0;

	if (l->set & QREC_LIM_CONCURRENCY) {
		for (size_t i = 0; i < m->n; i++)
			taken +=
			    m->t[i].tube == tube && m->t[i].state == M_TAKEN;
		if (taken >= l->conc)
			return true;
	}
	return (l->set & QREC_LIM_RATE) && m_credit(m, tube, now) < 1000;
}

/* Whether group g (>= 0) of tube is held back by its limits: paused,
 * or as many of its tasks taken as its cap (its own, else every
 * group's). */
/* The credit of group g's bucket at `now` (UINT64_MAX without a rate). */
static uint64_t
m_gcredit(const struct model *m, int tube, int g, int64_t now)
{
	const struct mgb *b = &m->gb[tube][g];
	uint64_t full = (uint64_t)b->burst * 1000, c = b->credit;

	if (b->rate == 0)
		return UINT64_MAX;
	if (now > b->stamp)
		c += (uint64_t)(now - b->stamp) * b->rate;
	return c < full ? c : full;
}

/* After anything that may make or end a group, or change its rate: each
 * group's bucket as the queue keeps it (a new one full). */
static void
m_gsync(struct model *m, int64_t now)
{
	for (int tube = 0; tube < NTUBE; tube++) {
		const struct mgl *l = &m->grpl[tube];

		for (int g = 0; g < NGRP; g++) {
			struct mgb *b = &m->gb[tube][g];
			bool live = false;
			uint32_t rate =
			    l->own_rate[g] ? l->own_rate[g] : l->def_rate;
			uint32_t burst =
			    l->own_rate[g] ? l->own_burst[g] : l->def_burst;

			for (size_t i = 0; i < m->n && !live; i++)
				live = m->t[i].tube == tube && m->t[i].grp == g;
			if (!live) {
				memset(b, 0, sizeof(*b));
				continue;
			}
			if (!b->live || rate != b->rate || burst != b->burst) {
				b->rate = rate;
				b->burst = burst;
				b->credit = (uint64_t)burst * 1000;
				b->stamp = now;
			}
			b->live = true;
		}
	}
}

static bool
m_group_held(const struct model *m, int tube, int g, int64_t now)
{
	const struct mgl *l = &m->grpl[tube];
	uint32_t cap = l->own[g] != 0 ? l->own[g] : l->def, taken = 0;

	if (l->paused[g])
		return true;
	if (m_gcredit(m, tube, g, now) < 1000)
		return true; /* out of tokens */
	if (cap == 0)
		return false;
	for (size_t i = 0; i < m->n; i++)
		taken += m->t[i].tube == tube && m->t[i].grp == g &&
		    m->t[i].state == M_TAKEN;
	return taken >= cap;
}

/* What a take may get of each tube of `mask`: the tops of its groups
 * (the best ready task of each group no limit holds, of the best
 * priority among them; one for a tube without groups). */
struct tops {
	struct mt *t[NTUBE][NGRP + 1];
	size_t n[NTUBE];
};

/* Fills `o` for the tubes of mask; returns what a take of them answers
 * (0, SLUICE_EPAUSED or SLUICE_ETIMEDOUT). A paused tube counts only
 * with a task to hand out; a tube a limit of its own holds is empty. */
static int
m_tops(const struct model *m, unsigned mask, int64_t now, bool strict,
    struct tops *o)
{
	bool paused = false;

	memset(o, 0, sizeof(*o));
	for (int tube = 0; tube < NTUBE; tube++) {
		struct mt *best[NGRP + 1] = { NULL };
		bool held[NGRP];
		uint32_t pri = UINT32_MAX;

		if (!(mask & (1u << tube)))
			continue;
		for (int g = 0; g < NGRP; g++)
			held[g] = m_group_held(m, tube, g, now);
		for (size_t i = 0; i < m->n; i++) {
			struct mt *t = (struct mt *)&m->t[i];
			int k = t->grp + 1;

			if (t->tube != tube || !m_ready(t, now) ||
			    (t->grp >= 0 && held[t->grp]))
				continue;
			if (best[k] == NULL || m_less(t, best[k]))
				best[k] = t;
		}
		for (int k = 0; k <= NGRP; k++)
			if (best[k] != NULL && best[k]->pri < pri)
				pri = best[k]->pri;
		if (pri == UINT32_MAX)
			continue; /* nothing to hand out */
		if (m->pause[tube] > now) {
			paused = true;
			continue;
		}
		if (m_tube_held(m, tube, now)) /* as if it were empty */
			continue;
		for (int k = 0; k <= NGRP; k++)
			if (best[k] != NULL && best[k]->pri == pri)
				o->t[tube][o->n[tube]++] = best[k];
		if (strict)
			return 0; /* the first tube in order with a task */
	}
	for (int tube = 0; tube < NTUBE; tube++)
		if (o->n[tube] > 0)
			return 0;
	return paused ? SLUICE_EPAUSED : SLUICE_ETIMEDOUT;
}

/* Whether a take of the tubes of `o` may have got p: one of its tube's
 * tops, better than some top of every other tube (the take gets the
 * best of the tubes' tops). */
static bool
m_pick_ok(const struct tops *o, const struct mt *p)
{
	bool mine = false;

	if (p == NULL)
		return false;
	for (size_t i = 0; i < o->n[p->tube]; i++)
		mine |= o->t[p->tube][i] == p;
	if (!mine)
		return false;
	for (int y = 0; y < NTUBE; y++) {
		bool beaten = o->n[y] == 0;

		if (y == p->tube)
			continue;
		for (size_t i = 0; i < o->n[y]; i++)
			beaten |= m_less(p, o->t[y][i]);
		if (!beaten)
			return false;
	}
	return true;
}

/* The seams between tube settings and the server's, over every seed: a
 * task kept as done by its tube's own keep_done where the server keeps
 * none, a lost lease under its tube's own retry where the server's
 * differs, a lost lease at max_attempts and a fatal fail moved to a dead
 * letter. Each must happen, or the model did not test it. */
static struct {
	uint64_t own_keep, own_retry, lost_moved, fatal_moved;
} seams;

/* Counts the seams a record is about to cross (the model has not
 * applied it yet: its task is as it was). */
static void
count_seams(struct run *r, const struct qrec *rec)
{
	const struct model *m = r->m;
	const struct qrec_end *e = &rec->u.end;
	const struct mt *t;
	const struct mconf *c;

	if (rec->type != QREC_ACK && rec->type != QREC_FAIL &&
	    rec->type != QREC_SETBACK)
		return;
	if ((t = m_find(r->m, e->id)) == NULL)
		return;
	c = &m->conf[t->tube];
	if (rec->type == QREC_ACK && e->outcome == QREC_DONE &&
	    (c->set & QREC_TS_KEEP_DONE) && m->cfg.keep_done_ms == 0)
		seams.own_keep++;
	if (rec->type == QREC_SETBACK && e->outcome == QREC_WAIT &&
	    (c->set & QREC_TS_LOST_LEASE) &&
	    c->immediate != (m->cfg.lost_lease_retry == QUEUE_RETRY_IMMEDIATE))
		seams.own_retry++;
	if (rec->type == QREC_SETBACK && e->outcome == QREC_MOVED &&
	    e->reason != QREC_BY_CLIENT)
		seams.lost_moved++;
	if (rec->type == QREC_FAIL && e->outcome == QREC_MOVED &&
	    (t->maxa == 0 || t->attempts < t->maxa))
		seams.fatal_moved++;
}

/* The records the hourly statistics classify since UNTAKE, SETBACK, dead
 * letters and tube removal, over every seed: a ttr expiry and a lost
 * session (SETBACK), a ttr expiry that buries or moves, a move to a dead
 * letter, an undone take, a tube deleted with statistics. Each must
 * happen, or compare_hourly did not check it. */
static struct {
	uint64_t ttr, session, ttr_bury, moved, untake, freed;
} hseams;

static void
count_hourly_seams(const struct qrec *rec)
{
	const struct qrec_end *e = &rec->u.end;

	if (rec->type == QREC_UNTAKE)
		hseams.untake++;
	if (rec->type == QREC_SETBACK && e->reason == QREC_BY_SESSION)
		hseams.session++;
	if (rec->type == QREC_SETBACK && e->reason == QREC_BY_TTR) {
		hseams.ttr++;
		hseams.ttr_bury +=
		    e->outcome == QREC_BURIED || e->outcome == QREC_MOVED;
	}
	if ((rec->type == QREC_FAIL || rec->type == QREC_BURY ||
	        rec->type == QREC_SETBACK) &&
	    e->outcome == QREC_MOVED)
		hseams.moved++;
}

static void
commit(struct run *r, const struct qrec *rec)
{
	count_seams(r, rec);
	count_hourly_seams(rec);
	assert_int_equal(tq_commit(&r->h, rec), 0);
	if (rec->type != QREC_NONE)
		r->records++;
	r->tube_sets += rec->type == QREC_TUBE_SET;
	r->tube_deletes += rec->type == QREC_TUBE_DELETE;
	r->dead_letters += (rec->type == QREC_FAIL || rec->type == QREC_BURY ||
	                       rec->type == QREC_SETBACK) &&
	    rec->u.end.outcome == QREC_MOVED;
}

/* An id: mostly of a live task, sometimes any id ever given or more. */
static uint64_t
pick_id(struct run *r)
{
	if (r->m->n > 0 && rnd(r, 8) != 0)
		return r->m->t[rnd(r, r->m->n)].id;
	return 1 + rnd(r, r->m->next_id + 1);
}

/* The lease a client would send for id: mostly right, else 0 or stale. */
static uint64_t
pick_lease(struct run *r, uint64_t id)
{
	struct mt *t = m_find(r->m, id);
	uint64_t lease = t ? t->lease : 0;
	uint64_t c = rnd(r, 10);

	if (c < 7 && lease != 0)
		return lease;
	if (c < 8)
		return 0;
	return lease + 1 + rnd(r, 3);
}

/* Now and then an operator's override. */
static bool
pick_force(struct run *r)
{
	return rnd(r, 10) == 0;
}

static int
pick_tube(struct run *r)
{
	return (int)rnd(r, NTUBE);
}

static void
op_put(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_put_req req;
	struct queue_put_res res;
	struct qrec rec;
	char pay[64];
	int tube = pick_tube(r), key = -1, p = (int)rnd(r, NPAY);
	int grp = tube >= 2 && rnd(r, 2) == 0 ? (int)rnd(r, NGRP) : -1;
	int want = 0, rc;
	int64_t run_at;
	struct mt *live;
	bool repl;

	queue_put_req_init(&req);
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.payload = pay;
	req.payload_len = payload(p, pay);
	req.pri = (uint32_t)rnd(r, 4) * 10;
	if (grp >= 0) {
		req.group = grp_names[grp];
		req.group_len = 2;
	}
	if (rnd(r, 3) == 0)
		req.delay_ms = (int64_t)rnd(r, 3000);
	if (rnd(r, 20) == 0)
		req.run_at = now + (int64_t)rnd(r, 4000) - 2000;
	req.ttr_ms = rnd(r, 4) ? 100 + (uint32_t)rnd(r, 2000) : 0;
	req.max_attempts = (uint32_t)rnd(r, 4);
	if (rnd(r, 12) == 0)
		req.period_ms = 500 + (int64_t)rnd(r, 2000);
	if (rnd(r, 2) == 0) {
		key = tube * NKEY + (int)rnd(r, NKEY);
		req.key = key_names[key % NKEY];
		req.key_len = 2;
		req.replace = rnd(r, 3) == 0;
		/* a few versions, so that stale ones come often */
		if (req.replace && rnd(r, 2) == 0)
			req.if_newer = 1 + rnd(r, 6);
		/* a deduplication mode, which sets the time itself */
		if (!req.replace && rnd(r, 4) == 0) {
			if (rnd(r, 2) == 0)
				req.debounce_ms = 1 + (int64_t)rnd(r, 3000);
			else
				req.throttle_ms = 1 + (int64_t)rnd(r, 3000);
			req.delay_ms = 0;
			req.run_at = 0;
		}
	}
	/* Now and then a request that breaks a rule. */
	switch (rnd(r, 60)) {
	case 0:
		req.tube = "bad tube";
		req.tube_len = 8;
		want = SLUICE_ETUBE;
		break;
	case 1:
		req.payload_len = m->cfg.max_payload + 1;
		want = SLUICE_ETOOBIG;
		break;
	case 2:
		req.ttr_ms = m->cfg.max_ttr_ms + 1;
		want = SLUICE_EINVAL;
		break;
	case 3:
		req.delay_ms = -1;
		req.run_at = 0;
		want = SLUICE_EINVAL;
		break;
	case 4:
		req.replace = true;
		req.key_len = 0;
		key = -1;
		want = SLUICE_EINVAL;
		break;
	case 5:
		req.replace = false;
		req.if_newer = 1 + rnd(r, 6);
		want = SLUICE_EINVAL;
		break;
	case 6: /* a mode without a key */
		req.key_len = 0;
		req.replace = false;
		req.if_newer = 0;
		req.debounce_ms = 1 + (int64_t)rnd(r, 100);
		key = -1;
		want = SLUICE_EINVAL;
		break;
	case 8: /* a bad group name */
		req.group = "a b";
		req.group_len = 3;
		req.replace = false;
		req.if_newer = 0;
		req.debounce_ms = req.throttle_ms = 0;
		want = SLUICE_EGROUP;
		break;
	case 7: /* both modes, or a window out of range */
		if (key >= 0) {
			req.debounce_ms = 1 + (int64_t)rnd(r, 100);
			req.throttle_ms = rnd(r, 2) ? 5 : 0;
			if (req.throttle_ms == 0)
				req.debounce_ms = QREC_WINDOW_MAX_MS + 1;
			want = SLUICE_EINVAL;
		}
		break;
	default:
		break;
	}
	rc = queue_decide_put(r->h.q, now, &req, &rec, &res);
	if (want != 0) {
		assert_int_equal(rc, want);
		return;
	}
	repl = req.replace;
	run_at = req.run_at ? req.run_at : now + req.delay_ms;
	if (run_at < now)
		run_at = now;
	if (req.debounce_ms != 0) {
		run_at = now + req.debounce_ms;
		repl = true; /* a replace due then */
	}
	live = key >= 0 ? m_by_key(m, key) : NULL;
	if (req.throttle_ms != 0) {
		assert_int_equal(rc, 0);
		if (m->thr_until[key] > now || live != NULL) {
			bool thr = m->thr_until[key] > now;

			assert_int_equal(rec.type, QREC_NONE);
			assert_true(!res.created && !res.replaced);
			assert_int_equal(res.throttled, thr);
			assert_true(
			    res.id == (thr ? m->thr_id[key] : live->id));
			return;
		}
		assert_int_equal(rec.type, QREC_PUT_T);
		assert_true(rec.u.put.throttle_until == now + req.throttle_ms);
		m->thr_id[key] = m->next_id;
		m->thr_until[key] = now + req.throttle_ms;
		repl = true; /* a new task, whatever the dedup window */
	}
	if (live != NULL && repl) {
		assert_int_equal(live->tube, tube);
		assert_int_equal(rc, 0);
		if (req.if_newer != 0 &&
		    (live->repl ? live->r_ver : live->ver) >= req.if_newer) {
			assert_int_equal(rec.type, QREC_NONE);
			assert_true(res.stale && !res.replaced && !res.created);
			assert_true(res.id == live->id);
			return;
		}
		assert_int_equal(
		    rec.type, req.if_newer ? QREC_REPLACE_V : QREC_REPLACE);
		assert_true(res.replaced && !res.created && res.id == live->id);
		assert_false(res.stale);
		commit(r, &rec);
		m->ctr[tube].replace++;
		live->r_pay = p;
		live->r_pri = req.pri;
		live->r_ttr = m_ttr(m, tube, req.ttr_ms);
		live->r_maxa = m_maxa(m, tube, req.max_attempts);
		live->r_run_at = run_at;
		live->r_period = req.period_ms;
		live->r_ver = req.if_newer;
		if (live->state == M_TAKEN) {
			live->repl = true;
		} else {
			live->repl = true;
			m_apply_repl(live, run_at);
			live->run_at = run_at;
		}
		return;
	}
	/* a versioned replace after the key's task finished, within the
	 * window: compared with the finished task's version */
	if (live == NULL && key >= 0 && req.if_newer != 0 &&
	    m->dedup_id[key] != 0 &&
	    (m->dedup_exp[key] > now || m_done_of_key(m, key) != NULL) &&
	    m->dedup_ver[key] >= req.if_newer) {
		assert_int_equal(rc, 0);
		assert_int_equal(rec.type, QREC_NONE);
		assert_true(res.stale && !res.replaced && !res.created);
		assert_true(res.id == m->dedup_id[key]);
		return;
	}
	if (live != NULL ||
	    (key >= 0 && !repl && m->dedup_id[key] != 0 &&
	        m->dedup_exp[key] > now)) {
		assert_int_equal(rc, 0);
		assert_int_equal(rec.type, QREC_NONE);
		assert_false(res.created);
		assert_true(res.id == (live ? live->id : m->dedup_id[key]));
		return;
	}
	assert_int_equal(rc, 0);
	assert_true(res.created && res.id == m->next_id && !res.stale);
	assert_false(res.throttled);
	assert_int_equal(rec.type,
	    req.throttle_ms    ? QREC_PUT_T
	        : grp >= 0     ? QREC_PUT_G
	        : req.if_newer ? QREC_PUT_V
	                       : QREC_PUT);
	commit(r, &rec);
	assert_true(m->n < MAXLIVE);
	{
		struct mt *t = &m->t[m->n++];

		memset(t, 0, sizeof(*t));
		t->id = m->next_id++;
		t->tube = tube;
		t->state = M_QUEUED;
		t->pri = req.pri;
		t->ttr = m_ttr(m, tube, req.ttr_ms);
		t->maxa = m_maxa(m, tube, req.max_attempts);
		t->run_at = run_at;
		t->period = req.period_ms;
		t->key = key;
		t->ver = req.if_newer;
		t->has_err = false;
		t->res = -1;
		t->dkey = -1;
		t->created = now;
		t->pay = p;
		t->grp = grp;
		if (key >= 0)
			m->dedup_id[key] = 0;
	}
	m->exists[tube] = true;
	m->ctr[tube].put++;
}

static void
op_take(struct run *r)
{
	struct model *m = r->m;
	struct queue_str ts[NTUBE + 1];
	struct queue_take_req req;
	struct qrec rec;
	unsigned mask = 0;
	size_t n = 0;
	int want, rc;
	struct mt *best;
	struct tops tops;

	for (int i = 0; i < NTUBE; i++) {
		if (rnd(r, 2) == 0)
			continue;
		ts[n].p = tube_names[i];
		ts[n].len = 2;
		n++;
		mask |= 1u << i;
	}
	if (n == 0) {
		ts[n].p = tube_names[0];
		ts[n].len = 2;
		n++;
		mask = 1;
	}
	req.tubes = ts;
	req.ntubes = n;
	req.session = 1 + rnd(r, NSESSION);
	req.detached = rnd(r, 8) == 0;
	req.strict = rnd(r, 4) == 0;
	if (rnd(r, 80) == 0) {
		ts[n].p = "no/good!";
		ts[n].len = 8;
		req.ntubes = n + 1;
		assert_int_equal(
		    queue_decide_take(r->h.q, r->h.now, &req, &rec),
		    SLUICE_ETUBE);
		return;
	}
	want = m_tops(m, mask, r->h.now, req.strict, &tops);
	for (int i = 0; i < NTUBE; i++)
		r->held += (mask & (1u << i)) && m->lim[i].set != 0 &&
		    m_tube_held(m, i, r->h.now);
	for (size_t i = 0; i < m->n; i++) /* a group held with work */
		if ((mask & (1u << m->t[i].tube)) && m->t[i].grp >= 0 &&
		    m_ready(&m->t[i], r->h.now) &&
		    m_group_held(m, m->t[i].tube, m->t[i].grp, r->h.now)) {
			r->gheld++;
			break;
		}
	for (size_t i = 0; i < m->n; i++) /* ... by its rate */
		if ((mask & (1u << m->t[i].tube)) && m->t[i].grp >= 0 &&
		    m_ready(&m->t[i], r->h.now) &&
		    m_gcredit(m, m->t[i].tube, m->t[i].grp, r->h.now) < 1000) {
			r->grate++;
			break;
		}
	rc = queue_decide_take(r->h.q, r->h.now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	best = m_find(m, rec.u.take.id);
	if (!m_pick_ok(&tops, best))
		fail_msg("take got %" PRIu64 ", which the model would not give",
		    rec.u.take.id);
	commit(r, &rec);
	if (best->grp >= 0 && m->gb[best->tube][best->grp].rate != 0) {
		struct mgb *b = &m->gb[best->tube][best->grp];
		uint64_t c = m_gcredit(m, best->tube, best->grp, r->h.now);

		b->credit = c >= 1000 ? c - 1000 : 0; /* its token */
		b->stamp = r->h.now;
	}
	if (m->lim[best->tube].set & QREC_LIM_RATE) { /* a token spent */
		struct mlim *l = &m->lim[best->tube];

		l->credit = m_credit(m, best->tube, r->h.now) - 1000;
		l->stamp = r->h.now;
	}
	best->state = M_TAKEN;
	best->lease = r->h.lsn;
	best->session = req.session;
	best->detached = req.detached;
	best->deadline = r->h.now + best->ttr;
	best->taken_at = r->h.now;
	best->attempts++;
	m->ctr[best->tube].take++;
	m_event(m, best->tube, r->h.now, EV_WAIT, r->h.now - best->run_at);
}

/* How long the tube keeps finished tasks: its own, else the server's. */
static int64_t
m_keep(const struct model *m, int tube)
{
	const struct mconf *c = &m->conf[tube];

	return (c->set & QREC_TS_KEEP_DONE) ? c->keep : m->cfg.keep_done_ms;
}

/* Acked in a tube that keeps finished tasks. */
static void
m_done(struct model *m, struct mt *t, int64_t now, int res)
{
	t->state = M_DONE;
	t->finished = now;
	t->kept_until = now + m_keep(m, t->tube);
	t->res = res;
	t->repl = false;
	m_unlease(t);
	t->dkey = t->key;
	if (t->key >= 0) {
		m->dedup_id[t->key] = t->id;
		m->dedup_exp[t->key] = now + m->cfg.dedup_ms;
		m->dedup_ver[t->key] = t->ver;
		t->key = -1;
	}
	while (m_count_done(m) > m->cfg.max_done) {
		struct mt *x = m_first_done(m);

		x->dkey = -1;
		m_gone(m, x, now, true);
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
	int to = -1, res = -1, want, rc;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.force = pick_force(r);
	if (rnd(r, 5) == 0) {
		to = pick_tube(r);
		req.to_tube = tube_names[to];
		req.to_tube_len = 2;
	}
	if (rnd(r, 2) == 0) {
		res = (int)rnd(r, NERR);
		req.result = results[res];
		req.result_len = strlen(results[res]);
		if (req.result_len == 0)
			res = -1;
	}
	want = m_leased(m, req.id, req.lease, req.force, &t);
	rc = queue_decide_ack(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	m->ctr[t->tube].ack++;
	m_event(m, t->tube, now, EV_WORK, now - t->taken_at);
	if (t->repl) {
		m_apply_repl(t, now);
	} else if (to >= 0) {
		m_move_key(m, t, to, now);
		t->tube = to;
		t->state = M_QUEUED;
		t->run_at = now;
		t->attempts = 0;
		t->has_err = false;
		m_unlease(t);
		m->exists[to] = true;
	} else if (t->period > 0) {
		int64_t k =
		    t->run_at < now ? (now - t->run_at) / t->period + 1 : 1;

		t->run_at += k * t->period;
		t->state = M_QUEUED;
		t->attempts = 0;
		t->has_err = false;
		m_unlease(t);
	} else if (m_keep(m, t->tube) > 0) {
		m_done(m, t, now, res);
	} else {
		m_gone(m, t, now, true);
	}
}

static void
op_release(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_release_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want, rc;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.force = pick_force(r);
	if (rnd(r, 2) == 0)
		req.delay_ms = (int64_t)rnd(r, 2000);
	if (rnd(r, 3) == 0) {
		req.set_pri = true;
		req.pri = (uint32_t)rnd(r, 40);
	}
	/* front: back where it waited before the take; with a delay the
	 * request is refused whatever the task */
	req.front = rnd(r, 4) == 0;
	want = req.front && req.delay_ms != 0
	    ? SLUICE_EINVAL
	    : m_leased(m, req.id, req.lease, req.force, &t);
	rc = queue_decide_release(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	m->ctr[t->tube].release++;
	if (t->repl) {
		m_apply_repl(t, now);
		return;
	}
	t->state = M_QUEUED;
	if (!req.front) /* front keeps the run_at it was ready from */
		t->run_at = now + req.delay_ms;
	if (req.set_pri)
		t->pri = req.pri;
	m_unlease(t);
}

static void
op_fail(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_fail_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int e = (int)rnd(r, NERR), want, rc;

	memset(&req, 0, sizeof(req));
	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.force = pick_force(r);
	req.error = err_texts[e];
	req.error_len = strlen(err_texts[e]);
	req.fatal = rnd(r, 8) == 0;
	if (rnd(r, 4) == 0) {
		req.set_delay = true;
		req.delay_ms = (int64_t)rnd(r, 1500);
	}
	want = m_leased(m, req.id, req.lease, req.force, &t);
	rc = queue_decide_fail(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	m->ctr[t->tube].fail++;
	m_event(m, t->tube, now, EV_FAIL, 0);
	if (t->repl) {
		m_apply_repl(t, now);
		return;
	}
	m_set_err(t, err_texts[e]);
	if (req.fatal || (t->maxa > 0 && t->attempts >= t->maxa)) {
		m_bury_taken(m, t, now);
		return;
	}
	t->state = M_QUEUED;
	t->run_at = now +
	    (req.set_delay ? req.delay_ms : m_backoff(m, t->tube, t->attempts));
	m_unlease(t);
}

static void
op_touch(struct run *r)
{
	struct queue_touch_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want, rc;

	req.id = pick_taken(r);
	req.lease = pick_lease(r, req.id);
	req.force = pick_force(r);
	want = m_leased(r->m, req.id, req.lease, req.force, &t);
	rc = queue_decide_touch(r->h.q, r->h.now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	t->deadline = r->h.now + t->ttr;
}

static void
op_bury(struct run *r)
{
	struct model *m = r->m;
	struct queue_bury_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want, rc, e = -1;

	memset(&req, 0, sizeof(req));
	req.id = rnd(r, 2) ? pick_taken(r) : pick_id(r);
	req.lease = rnd(r, 3) ? pick_lease(r, req.id) : 0;
	req.force = rnd(r, 3) == 0;
	if (rnd(r, 2) == 0) {
		e = (int)rnd(r, NERR);
		req.error = err_texts[e];
		req.error_len = strlen(err_texts[e]);
	}
	t = m_find(m, req.id);
	if (t != NULL && t->state == M_QUEUED)
		want = req.force ? 0 : SLUICE_ESTATE;
	else
		want = m_leased(m, req.id, req.lease, req.force, &t);
	rc = queue_decide_bury(r->h.q, r->h.now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	if (t->repl) {
		m_apply_repl(t, r->h.now);
		return;
	}
	if (e >= 0)
		m_set_err(t, err_texts[e]);
	if (t->state == M_TAKEN)
		m_bury_taken(m, t, r->h.now);
	else /* an operator parks a waiting task in place */
		m_bury(m, t, r->h.now);
}

/* A take whose reply was not delivered is undone: the task waits where
 * it did, one attempt fewer. */
static void
op_untake(struct run *r)
{
	struct model *m = r->m;
	uint64_t id = pick_taken(r), lease = pick_lease(r, id);
	struct qrec rec;
	struct mt *t = NULL;
	int want, rc;

	want = m_leased(m, id, lease, false, &t);
	rc = queue_decide_untake(r->h.q, r->h.now, id, lease, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	if (t->repl) {
		m_apply_repl(t, r->h.now);
		return;
	}
	/* The take's wait stays counted (EV_WAIT of op_take), as the
	 * tube's take counter keeps the take. */
	t->state = M_QUEUED;
	if (t->attempts > 0)
		t->attempts--;
	m_unlease(t);
}

static void
op_kick(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_kick_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int want = 0, rc;

	memset(&req, 0, sizeof(req));
	if (rnd(r, 2) == 0) {
		req.id = pick_id(r);
		t = m_find(m, req.id);
		if (t == NULL)
			want = SLUICE_ENOTFOUND;
		else if (t->state != M_BURIED &&
		    !(t->state == M_QUEUED && t->run_at > now))
			want = SLUICE_ESTATE;
	} else {
		int tube = pick_tube(r);

		req.tube = tube_names[tube];
		req.tube_len = 2;
		for (size_t i = 0; i < m->n; i++) {
			struct mt *x = &m->t[i];

			if (x->tube != tube || x->state != M_BURIED)
				continue;
			if (t == NULL || x->buried_at < t->buried_at ||
			    (x->buried_at == t->buried_at && x->id < t->id))
				t = x;
		}
		if (t == NULL)
			want = SLUICE_ENOTFOUND;
	}
	rc = queue_decide_kick(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	assert_true(rec.u.kick.id == t->id);
	commit(r, &rec);
	t->state = M_QUEUED;
	t->run_at = now;
	m->ctr[t->tube].kick++;
}

/* An update: of a waiting task anything, of a buried one all but its
 * run time, of a taken one only its priority. */
static void
op_update(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_update_req req;
	struct qrec rec;
	struct mt *t;
	char pay[64];
	int p = (int)rnd(r, NPAY), want = 0, rc;
	int64_t run_at = 0;

	memset(&req, 0, sizeof(req));
	req.id = pick_id(r);
	t = m_find(m, req.id);
	req.set_pri = rnd(r, 2) == 0;
	req.pri = (uint32_t)rnd(r, 4) * 10;
	req.set_run_at = rnd(r, 3) == 0;
	req.delay_ms = (int64_t)rnd(r, 3000);
	req.set_ttr = rnd(r, 4) == 0;
	req.ttr_ms = 100 + (uint32_t)rnd(r, 2000);
	req.set_max_attempts = rnd(r, 4) == 0;
	req.max_attempts = (uint32_t)rnd(r, 4);
	req.set_payload = rnd(r, 4) == 0;
	req.payload = pay;
	req.payload_len = payload(p, pay);
	if (req.set_run_at)
		run_at = now + req.delay_ms;
	if (!req.set_pri && !req.set_run_at && !req.set_ttr &&
	    !req.set_max_attempts && !req.set_payload)
		want = SLUICE_EINVAL;
	else if (t == NULL)
		want = SLUICE_ENOTFOUND;
	else if (t->state == M_TAKEN &&
	    (req.set_run_at || req.set_ttr || req.set_max_attempts ||
	        req.set_payload))
		want = SLUICE_ESTATE;
	else if ((t->state == M_BURIED && req.set_run_at) || t->state == M_DONE)
		want = SLUICE_ESTATE;
	rc = queue_decide_update(r->h.q, now, &req, &rec);
	assert_int_equal(rc, want);
	if (rc != 0)
		return;
	commit(r, &rec);
	if (req.set_pri) {
		t->pri = req.pri;
		t->r_pri = req.pri; /* a pending replacement's too */
	}
	if (req.set_run_at)
		t->run_at = run_at;
	if (req.set_ttr)
		t->ttr = req.ttr_ms;
	if (req.set_max_attempts)
		t->maxa = req.max_attempts;
	if (req.set_payload)
		t->pay = p;
	if (t->state == M_BURIED)
		t->buried_at = now; /* the back of the kick order */
}

static void
op_delete(struct run *r)
{
	struct model *m = r->m;
	struct queue_delete_req req;
	struct qrec rec;
	struct mt *t = NULL;
	int key = -1, rc;

	memset(&req, 0, sizeof(req));
	if (rnd(r, 4) == 0) {
		int tube = pick_tube(r);

		key = tube * NKEY + (int)rnd(r, NKEY);
		req.key = key_names[key % NKEY];
		req.key_len = 2;
		req.tube = tube_names[tube];
		req.tube_len = 2;
		t = m_by_key(m, key);
		if (t == NULL)
			t = m_done_by_key(m, key, r->h.now);
	} else {
		req.id = pick_id(r);
		t = m_find(m, req.id);
	}
	rc = queue_decide_delete(r->h.q, r->h.now, &req, &rec);
	assert_int_equal(rc, t ? 0 : SLUICE_ENOTFOUND);
	if (rc != 0)
		return;
	commit(r, &rec);
	m->ctr[t->tube].del++;
	m_gone(m, t, r->h.now, false);
}

static void
op_flush(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r);
	struct queue_flush_req req = { tube_names[tube], 2 };
	struct qrec rec;

	assert_int_equal(queue_decide_flush(r->h.q, r->h.now, &req, &rec), 0);
	commit(r, &rec);
	for (size_t i = 0; i < m->n;) {
		if (m->t[i].tube == tube) {
			m->ctr[tube].del++;
			m_gone(m, &m->t[i], r->h.now, false);
		} else {
			i++;
		}
	}
}

/* The age a delete by state and age measures. */
static int64_t
m_age_time(const struct mt *t)
{
	return t->state == M_DONE ? t->finished : t->created;
}

static int
m_state(const struct mt *t, int64_t now)
{
	switch (t->state) {
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

/* Whether a DELETE_AGED of `states`, `by`, cut at `before` takes t. The
 * model keeps no updated_at: that one time comes from the queue (the rest
 * of the model checks every change that moves it). */
static bool
m_aged(struct run *r, const struct mt *t, int tube, uint8_t states, uint8_t by,
    int64_t before)
{
	struct queue_task_view v;
	int64_t at = t->created;

	if (t->tube != tube || !(states & QREC_STATE_BIT(m_state(t, r->h.now))))
		return false;
	if (by == QREC_BY_UPDATED) {
		assert_int_equal(queue_peek(r->h.q, r->h.now, t->id, &v), 0);
		at = v.updated_at;
	}
	return at <= before;
}

/* delete by states and the last change or the creation (DELETE_AGED):
 * taken tasks only with force; the tasks counted are those removed. */
static void
op_delete_aged(struct run *r, int tube, struct queue_delete_where_req *req)
{
	struct model *m = r->m;
	int64_t now = r->h.now, before = now - req->older;
	uint64_t count = 0, want = 0;
	struct qrec rec;
	bool *take = calloc(MAXLIVE, sizeof(*take));
	int rc;

	assert_non_null(take);
	req->state = 0;
	req->states = (uint8_t)(QREC_STATE_BIT(1 + rnd(r, 5)) |
	    (rnd(r, 2) ? QREC_STATE_BIT(1 + rnd(r, 5)) : 0));
	req->by = rnd(r, 2) ? QREC_BY_UPDATED : QREC_BY_CREATED;
	req->force = rnd(r, 2) == 0;
	for (size_t i = 0; i < m->n; i++)
		if ((take[i] = m_aged(
		         r, &m->t[i], tube, req->states, req->by, before)))
			want++;
	rc = queue_decide_delete_where(r->h.q, now, req, &rec, &count);
	if ((req->states & QREC_STATE_BIT(QUEUE_TAKEN)) && !req->force) {
		assert_int_equal(rc, SLUICE_EINVAL);
		free(take);
		return;
	}
	assert_int_equal(rc, 0);
	assert_true(count == want);
	assert_true((rec.type == QREC_NONE) == (want == 0));
	commit(r, &rec);
	for (size_t i = m->n; i-- > 0;) {
		if (!take[i])
			continue;
		m->ctr[tube].del++;
		m_gone(m, &m->t[i], now, false);
	}
	free(take);
}

static void
op_delete_where(struct run *r)
{
	static const int states[] = { QUEUE_READY, QUEUE_DELAYED, QUEUE_BURIED,
		QUEUE_DONE };
	struct model *m = r->m;
	int64_t now = r->h.now;
	int tube = pick_tube(r);
	struct queue_delete_where_req req = { tube_names[tube], 2,
		states[rnd(r, 4)], (int64_t)rnd(r, 6000) };
	uint64_t count = 0, want = 0;
	struct qrec rec;

	if (rnd(r, 2) == 0) {
		op_delete_aged(r, tube, &req);
		return;
	}
	for (size_t i = 0; i < m->n; i++)
		want += m->t[i].tube == tube &&
		    m_state(&m->t[i], now) == req.state &&
		    m_age_time(&m->t[i]) <= now - req.older;
	assert_int_equal(
	    queue_decide_delete_where(r->h.q, now, &req, &rec, &count), 0);
	assert_true(count == want);
	assert_true((rec.type == QREC_NONE) == (want == 0));
	commit(r, &rec);
	for (size_t i = 0; i < m->n;) {
		struct mt *t = &m->t[i];

		if (t->tube == tube && m_state(t, now) == req.state &&
		    m_age_time(t) <= now - req.older) {
			m->ctr[tube].del++;
			m_gone(m, t, now, false);
		} else {
			i++;
		}
	}
}

static void
op_pause(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r);
	int64_t until = rnd(r, 3) ? r->h.now + (int64_t)rnd(r, 3000) : 0;
	struct queue_pause_req req = { tube_names[tube], 2, until,
		rnd(r, 2) == 0 };
	struct qrec rec;
	int want = m->exists[tube] || req.create ? 0 : SLUICE_ENOTFOUND;

	assert_int_equal(
	    queue_decide_pause(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	if (until > r->h.now) {
		m->pause[tube] = until;
		m->exists[tube] = true;
	} else {
		m->pause[tube] = 0;
	}
}

/* Random settings for a tube: some fields set, some back to default,
 * now and then a request that breaks a rule. */
static void
op_tube_set(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r), want = 0, dl = (int)rnd(r, NTUBE);
	struct queue_tube_set_req req;
	struct mconf c = m->conf[tube];
	struct qrec rec;

	memset(&req, 0, sizeof(req));
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.set = (uint8_t)rnd(r, QREC_TS_ALL + 1);
	req.unset = (uint8_t)(rnd(r, QREC_TS_ALL + 1) & ~req.set);
	req.conf.ttr = 100 + (uint32_t)rnd(r, 2000);
	req.conf.max_attempts = (uint32_t)rnd(r, 4);
	req.conf.backoff_base = (uint32_t)rnd(r, 300);
	req.conf.backoff_cap = req.conf.backoff_base + (uint32_t)rnd(r, 3000);
	req.conf.keep_done = (int64_t)rnd(r, 100000);
	req.conf.lost_lease_immediate = rnd(r, 2) == 0;
	req.conf.dead_letter = tube_names[dl];
	req.conf.dead_letter_len = 2;
	if (rnd(r, 3) != 0)
		req.unset &= (uint8_t)rnd(r, QREC_TS_ALL + 1);
	switch (rnd(r, 30)) {
	case 0:
		req.set |= QREC_TS_TTR;
		req.conf.ttr = rnd(r, 2) ? 0 : m->cfg.max_ttr_ms + 1;
		want = SLUICE_EINVAL;
		break;
	case 1:
		req.set |= QREC_TS_BACKOFF;
		req.conf.backoff_cap = req.conf.backoff_base = 10;
		req.conf.backoff_base = 11;
		want = SLUICE_EINVAL;
		break;
	case 2:
		req.set |= QREC_TS_DEAD_LETTER;
		req.conf.dead_letter = "no such!";
		req.conf.dead_letter_len = 8;
		req.unset &= (uint8_t)~QREC_TS_DEAD_LETTER;
		want = SLUICE_ETUBE;
		break;
	case 3:
		req.unset |= req.set | QREC_TS_TTR;
		req.set |= QREC_TS_TTR;
		want = SLUICE_EINVAL;
		break;
	default:
		break;
	}
	if (want == 0 && (req.set & QREC_TS_DEAD_LETTER) && dl == tube)
		want = SLUICE_EINVAL; /* never the tube itself */
	assert_int_equal(
	    queue_decide_tube_set(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (req.set & QREC_TS_TTR)
		c.ttr = req.conf.ttr;
	if (req.set & QREC_TS_MAX_ATTEMPTS)
		c.maxa = req.conf.max_attempts;
	if (req.set & QREC_TS_BACKOFF) {
		c.base = req.conf.backoff_base;
		c.cap = req.conf.backoff_cap;
	}
	if (req.set & QREC_TS_KEEP_DONE)
		c.keep = req.conf.keep_done;
	if (req.set & QREC_TS_LOST_LEASE)
		c.immediate = req.conf.lost_lease_immediate;
	if (req.set & QREC_TS_DEAD_LETTER)
		c.dl = dl;
	if (req.unset & QREC_TS_DEAD_LETTER)
		c.dl = -1;
	c.set = (uint8_t)((c.set | req.set) & ~req.unset);
	/* A record exactly when something changed. */
	assert_int_equal(rec.type == QREC_NONE,
	    c.set == m->conf[tube].set &&
	        (c.set == 0 || memcmp(&c, &m->conf[tube], sizeof(c)) == 0));
	if (rec.type == QREC_NONE)
		return;
	commit(r, &rec);
	m->conf[tube] = c;
	m->exists[tube] = true;
}

static void
m_conf_clear(struct mconf *c)
{
	memset(c, 0, sizeof(*c));
	c->dl = -1;
}

static void
op_tube_delete(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r), want = 0;
	struct queue_tube_delete_req req = { tube_names[tube], 2,
		rnd(r, 2) == 0 };
	struct qrec rec;
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += m->t[i].tube == tube;
	if (!m->exists[tube])
		want = SLUICE_ENOTFOUND;
	else if (n > 0 && !req.force)
		want = SLUICE_ENOTEMPTY;
	assert_int_equal(
	    queue_decide_tube_delete(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	commit(r, &rec);
	for (size_t i = 0; i < m->n;) {
		if (m->t[i].tube == tube)
			m_gone(m, &m->t[i], r->h.now, false);
		else
			i++;
	}
	m->exists[tube] = false;
	m->pause[tube] = 0;
	memset(&m->ctr[tube], 0, sizeof(m->ctr[tube]));
	for (size_t i = 0; i < m->nev; i++) {
		if (m->ev[i].tube == tube) {
			hseams.freed++;
			break;
		}
	}
	m_forget_events(m, tube);
	m_conf_clear(&m->conf[tube]);
	memset(&m->lim[tube], 0, sizeof(m->lim[tube]));
	memset(&m->grpl[tube], 0, sizeof(m->grpl[tube]));
}

/* Random flow limits for a tube: a rate of 1 to 40 a second with a burst
 * of 1 to 4, a cap of 1 to 4, either lifted; now and then a rule broken
 * (a rate or cap of 0, a limit both set and lifted) or a tube the queue
 * does not have: refused, nothing changed. */
static void
op_tube_limit(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r), want = 0;
	struct queue_tube_limit_req req;
	struct mlim l = m->lim[tube];
	struct qrec rec;

	memset(&req, 0, sizeof(req));
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.set = (uint8_t)rnd(r, QREC_LIM_ALL + 1);
	req.unset =
	    (uint8_t)(rnd(r, 3) == 0 ? rnd(r, QREC_LIM_ALL + 1) & ~req.set : 0);
	req.lim.rate = 1 + (uint32_t)rnd(r, 40);
	req.lim.per_ms = 1000;
	req.lim.burst = 1 + (uint32_t)rnd(r, 4);
	req.lim.concurrency = 1 + (uint32_t)rnd(r, 4);
	switch (rnd(r, 20)) {
	case 0:
		req.set |= QREC_LIM_RATE;
		req.lim.rate = 0;
		want = SLUICE_EINVAL;
		break;
	case 1:
		req.set |= QREC_LIM_CONCURRENCY;
		req.lim.concurrency = 0;
		want = SLUICE_EINVAL;
		break;
	case 2:
		req.set |= QREC_LIM_RATE;
		req.unset |= QREC_LIM_RATE;
		want = SLUICE_EINVAL;
		break;
	default:
		break;
	}
	/* a limit both set and lifted is refused first, then a tube the
	 * queue does not have, then values out of range */
	if (!m->exists[tube] && (req.set & req.unset) == 0)
		want = SLUICE_ENOTFOUND;
	assert_int_equal(
	    queue_decide_tube_limit(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (req.set & QREC_LIM_RATE) {
		l.rate = req.lim.rate;
		l.burst = req.lim.burst;
	}
	if (req.unset & QREC_LIM_RATE)
		l.rate = l.burst = 0;
	if (req.set & QREC_LIM_CONCURRENCY)
		l.conc = req.lim.concurrency;
	if (req.unset & QREC_LIM_CONCURRENCY)
		l.conc = 0;
	l.set = (uint8_t)((l.set | req.set) & ~req.unset);
	/* a record exactly when the limits change; the bucket then full */
	assert_int_equal(rec.type == QREC_NONE,
	    l.set == m->lim[tube].set && l.rate == m->lim[tube].rate &&
	        l.burst == m->lim[tube].burst && l.conc == m->lim[tube].conc);
	if (rec.type == QREC_NONE)
		return;
	commit(r, &rec);
	r->tube_limits++;
	l.credit = (l.set & QREC_LIM_RATE) ? (uint64_t)l.burst * 1000 : 0;
	l.stamp = r->h.now;
	m->lim[tube] = l;
}

/* Group limits: every group's cap or one group's own (set or lifted), a
 * group's pause or resume; now and then a request that breaks a rule.
 * A record exactly when the settings change. */
static void
op_group_set(struct run *r)
{
	struct model *m = r->m;
	int tube = pick_tube(r), g = (int)rnd(r, NGRP + 1) - 1, want = 0;
	struct mgl l = m->grpl[tube];
	struct queue_group_set_req req;
	struct qrec rec;
	bool same;

	memset(&req, 0, sizeof(req));
	req.tube = tube_names[tube];
	req.tube_len = 2;
	req.group = g >= 0 ? grp_names[g] : "";
	req.group_len = g >= 0 ? 2 : 0;
	req.lim.concurrency = 1 + (uint32_t)rnd(r, 3);
	req.lim.rate = 1 + (uint32_t)rnd(r, 4);
	req.lim.per_ms = 1000;
	req.lim.burst = 1 + (uint32_t)rnd(r, 2);
	switch (rnd(r, 8)) {
	case 0:
	case 1:
		req.set = QREC_LIM_CONCURRENCY;
		break;
	case 2:
		req.unset = QREC_LIM_CONCURRENCY;
		break;
	case 3:
		req.pause = QUEUE_GROUP_PAUSE;
		break;
	case 4:
		req.pause = QUEUE_GROUP_RESUME;
		break;
	case 5:
	case 6:
		req.set = QREC_LIM_RATE;
		break;
	default:
		req.unset = QREC_LIM_RATE;
		break;
	}
	if (g < 0 && req.pause != QUEUE_GROUP_KEEP)
		want = SLUICE_EINVAL; /* every group is never paused */
	switch (rnd(r, 20)) {
	case 0:
		req.set = QREC_LIM_CONCURRENCY;
		req.lim.concurrency = 0;
		want = want != 0 ? want : SLUICE_EINVAL;
		break;
	case 1:
		req.group = "a b";
		req.group_len = 3;
		want = SLUICE_EGROUP;
		break;
	default:
		break;
	}
	/* a bad name first, then a request broken in itself, then a tube
	 * the queue does not have, then a value out of range */
	if (want != SLUICE_EGROUP && !m->exists[tube] &&
	    !(g < 0 && req.pause != QUEUE_GROUP_KEEP))
		want = SLUICE_ENOTFOUND;
	assert_int_equal(
	    queue_decide_group_set(r->h.q, r->h.now, &req, &rec), want);
	if (want != 0)
		return;
	if (g < 0) {
		if (req.set & QREC_LIM_CONCURRENCY)
			l.def = req.lim.concurrency;
		if (req.unset & QREC_LIM_CONCURRENCY)
			l.def = 0;
		if (req.set & QREC_LIM_RATE) {
			l.def_rate = req.lim.rate;
			l.def_burst = req.lim.burst;
		}
		if (req.unset & QREC_LIM_RATE)
			l.def_rate = l.def_burst = 0;
	} else {
		if (req.set & QREC_LIM_CONCURRENCY)
			l.own[g] = req.lim.concurrency;
		if (req.unset & QREC_LIM_CONCURRENCY)
			l.own[g] = 0;
		if (req.set & QREC_LIM_RATE) {
			l.own_rate[g] = req.lim.rate;
			l.own_burst[g] = req.lim.burst;
		}
		if (req.unset & QREC_LIM_RATE)
			l.own_rate[g] = l.own_burst[g] = 0;
		if (req.pause != QUEUE_GROUP_KEEP)
			l.paused[g] = req.pause == QUEUE_GROUP_PAUSE;
	}
	same = memcmp(&l, &m->grpl[tube], sizeof(l)) == 0;
	assert_int_equal(rec.type == QREC_NONE, same);
	if (same)
		return;
	commit(r, &rec);
	r->group_sets++;
	m->grpl[tube] = l;
	m_gsync(m, r->h.now); /* a rate that changed: a full bucket */
}

/* The queue's view of a tube's group limits, and of one group's, is the
 * model's. */
static void
compare_groups(struct run *r, int tube)
{
	const struct model *m = r->m;
	const struct mgl *l = &m->grpl[tube];
	struct queue_group_view v;
	int g = (int)rnd(r, NGRP);
	uint32_t nover = 0, npaused = 0, taken = 0, ready = 0;
	int rc = queue_group_limits(
	    r->h.q, tube_names[tube], 2, grp_names[g], 2, r->h.now, &v);

	if (!m->exists[tube]) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
		return;
	}
	assert_int_equal(rc, 0);
	for (int k = 0; k < NGRP; k++) {
		nover += l->own[k] != 0 || l->paused[k] || l->own_rate[k] != 0;
		npaused += l->paused[k];
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct mt *t = &m->t[i];

		if (t->tube != tube || t->grp != g)
			continue;
		taken += t->state == M_TAKEN;
		ready += m_ready(t, r->h.now);
	}
	assert_int_equal(v.def.concurrency, l->def);
	assert_int_equal(v.noverrides, nover);
	assert_int_equal(v.npaused, npaused);
	assert_int_equal(v.paused, l->paused[g]);
	assert_int_equal(v.lim.concurrency, l->own[g] ? l->own[g] : l->def);
	assert_int_equal(v.taken, taken);
	assert_int_equal(v.ready, ready);
	assert_int_equal(v.holding != 0 && ready > 0,
	    m_group_held(m, tube, g, r->h.now) && ready > 0);
	if (m->gb[tube][g].live && m->gb[tube][g].rate != 0)
		assert_true(v.tokens == m_gcredit(m, tube, g, r->h.now) / 1000);
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
		commit(r, &rec);
		m_lost(m, due, r->h.now, true, NULL, false);
	}
	fail_msg("expiry did not end");
}

/* A session goes away (session != 0), or the node restarts (0). */
static void
op_sessions(struct run *r, uint64_t session)
{
	struct model *m = r->m;
	struct qrec rec;
	char why[64];

	if (session != 0)
		snprintf(why, sizeof(why),
		    "worker disconnected (peer-%" PRIu64 ")", session);
	else
		snprintf(why, sizeof(why), "server restarted");
	for (size_t k = 0; k <= MAXLIVE; k++) {
		struct mt *t = lease_end_next(r, session, why, &rec);

		if (t == NULL)
			return;
		commit(r, &rec);
		m_lost(m, t, r->h.now, false, why, session == 0);
	}
	fail_msg("session release did not end");
}

/* ---- Comparing ------------------------------------------------------------
 */

static void
compare_task(struct run *r, const struct mt *t)
{
	struct queue_task_view v;
	char pay[64];
	size_t plen = payload(t->pay, pay);
	int state = m_state(t, r->h.now);
	int key = t->key;

	assert_int_equal(queue_peek(r->h.q, r->h.now, t->id, &v), 0);
	assert_int_equal(v.state, state);
	assert_memory_equal(v.tube, tube_names[t->tube], 2);
	assert_int_equal(v.pri, t->pri);
	assert_int_equal(v.ttr, t->ttr);
	assert_int_equal(v.attempts, t->attempts);
	assert_int_equal(v.max_attempts, t->maxa);
	if (state == QUEUE_DONE) {
		assert_true(
		    v.run_at == t->kept_until && v.kept_until == t->kept_until);
		assert_true(v.finished_at == t->finished);
		assert_true(v.duration == t->finished - t->taken_at);
		if (t->res >= 0) {
			assert_int_equal(v.result_len, strlen(results[t->res]));
			assert_memory_equal(
			    v.result, results[t->res], v.result_len);
		} else {
			assert_null(v.result);
		}
		if (t->dkey >= 0 && m_done_by_key(r->m, t->dkey, r->h.now) == t)
			key = t->dkey;
	} else {
		assert_true(v.run_at == t->run_at);
	}
	assert_true(v.period == t->period);
	assert_int_equal(v.payload_len, plen);
	if (plen > 0)
		assert_memory_equal(v.payload, pay, plen);
	if (key >= 0) {
		assert_int_equal(v.key_len, 2);
		assert_memory_equal(v.key, key_names[key % NKEY], 2);
	} else {
		assert_null(v.key);
	}
	if (t->has_err) {
		assert_int_equal(v.last_error_len, strlen(t->err));
		assert_memory_equal(v.last_error, t->err, v.last_error_len);
	} else {
		assert_null(v.last_error);
	}
	/* the last take outlives its lease: a done task's duration starts
	 * there, a waiting one shows when it was last tried */
	assert_true(v.taken_at == t->taken_at);
	assert_true(v.lease == t->lease && v.session == t->session);
	assert_true(v.deadline == t->deadline && v.detached == t->detached);
	assert_int_equal(v.replace_pending, t->repl && t->state == M_TAKEN);
	/* a done task shows its version while its key is reserved, or
	 * held for it */
	assert_true(v.version ==
	    (t->state != M_DONE ? t->ver
	            : key >= 0  ? t->ver
	            : t->dkey >= 0 && m_held(r->m, t->dkey, r->h.now) &&
	                m_done_of_key(r->m, t->dkey) == t
	            ? t->ver
	            : 0));
	if (v.replace_pending)
		assert_true(v.repl.version == t->r_ver);
}

static int
by_err(const void *a, const void *b)
{
	return strcmp((*(const struct mt *const *)a)->err,
	    (*(const struct mt *const *)b)->err);
}

/* errors groups the last_error of a tube's live tasks: a done task keeps
 * its last error (peek shows how its attempts went) but is no longer
 * failing, so a lost lease or a fail it got over does not count. */
static void
compare_errors(struct run *r, int tube)
{
	static const struct mt *with[MAXLIVE];
	static struct queue_error_group g[MAXLIVE];
	static const int states[] = { QUEUE_ANY, QUEUE_READY, QUEUE_DELAYED,
		QUEUE_TAKEN, QUEUE_BURIED };
	int state = states[rnd(r, 5)];
	struct model *m = r->m;
	size_t n = 0, ng = 0, i, j;

	for (i = 0; i < m->n; i++)
		if (m->t[i].tube == tube && m->t[i].has_err &&
		    m->t[i].state != M_DONE &&
		    (state == QUEUE_ANY ||
		        m_state(&m->t[i], r->h.now) == state))
			with[n++] = &m->t[i];
	qsort(with, n, sizeof(with[0]), by_err);
	assert_int_equal(queue_errors(r->h.q, r->h.now, tube_names[tube], 2,
	                     state, g, MAXLIVE, &ng),
	    0);
	for (i = 0; i < n; i = j) {
		const char *text = with[i]->err;
		size_t k = 0;

		for (j = i; j < n && strcmp(with[j]->err, text) == 0; j++)
			;
		while (k < ng &&
		    (g[k].text_len != strlen(text) ||
		        memcmp(g[k].text, text, g[k].text_len) != 0))
			k++;
		assert_true(k < ng);
		assert_int_equal(g[k].count, j - i);
		ng--; /* each group once: move the last into its place */
		g[k] = g[ng];
	}
	assert_int_equal(ng, 0);
}

/* The settings in force: the tube's own, else the defaults. */
static void
compare_conf(struct run *r, int tube)
{
	const struct mconf *c = &r->m->conf[tube];
	struct qrec_tube_conf q;
	uint8_t set = c->set;

	assert_int_equal(
	    queue_tube_settings(r->h.q, tube_names[tube], 2, &q), 0);
	assert_int_equal(q.set, set);
	assert_int_equal(q.ttr, m_ttr(r->m, tube, 0));
	assert_int_equal(q.max_attempts, m_maxa(r->m, tube, 0));
	assert_int_equal(q.backoff_base,
	    set & QREC_TS_BACKOFF ? c->base : r->m->cfg.backoff_base_ms);
	assert_int_equal(q.backoff_cap,
	    set & QREC_TS_BACKOFF ? c->cap : r->m->cfg.backoff_cap_ms);
	assert_true(q.keep_done == m_keep(r->m, tube));
	assert_true(q.lost_lease_immediate == m_lost_immediate(r->m, tube));
	if (c->dl >= 0) {
		assert_int_equal(q.dead_letter_len, 2);
		assert_memory_equal(q.dead_letter, tube_names[c->dl], 2);
	} else {
		assert_int_equal(q.dead_letter_len, 0);
	}
}

static void
compare(struct run *r)
{
	struct model *m = r->m;
	int64_t now = r->h.now;
	struct queue_str all[NTUBE];
	struct queue_take_req tr = { all, NTUBE, 1, false };
	struct qrec rec;
	uint64_t total = 0;
	int want, rc;
	struct tops tops;

	for (int i = 0; i < NTUBE; i++) {
		struct queue_tube_stats s;
		uint64_t c[5] = { 0 };
		int64_t oldest = INT64_MAX;

		all[i].p = tube_names[i];
		all[i].len = 2;
		rc = queue_tube_stats(r->h.q, now, tube_names[i], 2, &s);
		if (!m->exists[i]) {
			assert_int_equal(rc, SLUICE_ENOTFOUND);
			continue;
		}
		assert_int_equal(rc, 0);
		for (size_t k = 0; k < m->n; k++) {
			const struct mt *t = &m->t[k];

			if (t->tube != i)
				continue;
			if (t->state == M_DONE)
				c[4]++;
			else if (t->state == M_TAKEN)
				c[2]++;
			else if (t->state == M_BURIED)
				c[3]++;
			else if (t->run_at <= now)
				c[0]++;
			else
				c[1]++;
			if (m_ready(t, now) && t->run_at < oldest)
				oldest = t->run_at;
		}
		assert_true(s.ready == c[0] && s.delayed == c[1]);
		assert_true(s.taken == c[2] && s.buried == c[3]);
		assert_true(s.done == c[4]);
		assert_true(s.oldest_ready_age ==
		    (oldest == INT64_MAX ? 0 : now - oldest));
		assert_true(
		    s.paused_until == (m->pause[i] > now ? m->pause[i] : 0));
		assert_memory_equal(&s.ctr, &m->ctr[i], sizeof(s.ctr));
		compare_conf(r, i);
		total += c[0] + c[1] + c[2] + c[3] + c[4];
	}
	assert_true(total == m->n);
	want = m_tops(m, (1u << NTUBE) - 1, now, false, &tops);
	rc = queue_decide_take(r->h.q, now, &tr, &rec);
	assert_int_equal(rc, want);
	if (rc == 0 && !m_pick_ok(&tops, m_find(m, rec.u.take.id)))
		fail_msg("a take would get %" PRIu64 ", which the model would "
		         "not give",
		    rec.u.take.id);
	compare_groups(r, (int)rnd(r, NTUBE));
	if (m->n > 0)
		compare_task(r, &m->t[rnd(r, m->n)]);
	if (rnd(r, 4) == 0)
		compare_errors(r, (int)rnd(r, NTUBE));
	tq_check(&r->h);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* One distribution of an hour against the durations the model logged. */
static void
compare_dist(const struct queue_dist *d, int64_t *durs, size_t n)
{
	static const unsigned pct[2] = { 50, 99 };
	uint64_t total = 0;

	assert_int_equal(d->count, n);
	qsort(durs, n, sizeof(*durs), cmp_i64);
	for (size_t i = 0; i < n; i++)
		total += (uint64_t)durs[i];
	assert_true(d->total_ms == total);
	assert_true(d->max_ms == (n ? (uint64_t)durs[n - 1] : 0));
	for (int k = 0; k < 2 && n > 0; k++) {
		uint64_t est = k == 0 ? d->p50_ms : d->p99_ms;
		int64_t v = durs[(n * pct[k] + 99) / 100 - 1];
		int b = queue_hist_bucket(v);

		if (b == QUEUE_HIST_BUCKETS - 1) {
			assert_true(est == d->max_ms);
			continue;
		}
		assert_int_equal(queue_hist_bucket((int64_t)est), b);
		assert_true((double)est <= 1.225 * (double)v + 1 &&
		    (double)est >= (double)v / 1.225 - 1);
	}
}

/* The hours of one tube (-1: every tube merged) against the model's log. */
static void
compare_hours(struct run *r, int tube)
{
	struct model *m = r->m;
	int64_t hc = r->h.now / QUEUE_HOUR_MS;
	struct queue_hour out[QUEUE_HOURS];
	int64_t *work = malloc((m->nev + 1) * sizeof(*work));
	int64_t *wait = malloc((m->nev + 1) * sizeof(*wait));
	size_t n = 0, k = 0;
	int rc;

	assert_true(work != NULL && wait != NULL);
	rc = queue_hourly(r->h.q, r->h.now, tube < 0 ? NULL : tube_names[tube],
	    tube < 0 ? 0 : 2, out, &n);
	if (tube >= 0 && !m->exists[tube]) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
		goto done;
	}
	assert_int_equal(rc, 0);
	for (int64_t h = hc; h > hc - QUEUE_HOURS; h--) {
		uint64_t c[5] = { 0 };
		size_t nwork = 0, nwait = 0;

		for (size_t i = 0; i < m->nev; i++) {
			const struct mev *e = &m->ev[i];

			if (e->time / QUEUE_HOUR_MS != h ||
			    (tube >= 0 && e->tube != tube))
				continue;
			c[e->kind]++;
			if (e->kind == EV_WORK)
				work[nwork++] = e->dur;
			if (e->kind == EV_WAIT)
				wait[nwait++] = e->dur;
		}
		if (c[0] + c[1] + c[2] + c[3] + c[4] == 0)
			continue;
		assert_true(k < n);
		assert_true(out[k].start == h * QUEUE_HOUR_MS);
		assert_int_equal(out[k].acks, c[EV_WORK]);
		assert_int_equal(out[k].fails, c[EV_FAIL]);
		assert_int_equal(out[k].buries, c[EV_BURY]);
		assert_int_equal(out[k].ttr_expired, c[EV_TTR]);
		compare_dist(&out[k].work, work, nwork);
		compare_dist(&out[k].wait, wait, nwait);
		k++;
	}
	assert_int_equal(k, n);
done:
	free(work);
	free(wait);
}

/* The total bucket of a duration: (4^(c-1), 4^c], 0 and 1 in bucket 0,
 * the last one everything longer. */
static int
total_bucket_of(int64_t ms)
{
	int c = 0;

	while (c < QUEUE_TOTAL_BUCKETS - 1 && ms > queue_total_bound(c))
		c++;
	return c;
}

/* A tube's totals since its first event (those of /metrics) against
 * every event the model logged for it. */
static void
compare_totals(struct run *r, int tube)
{
	struct model *m = r->m;
	struct queue_total got[2], want[2];
	struct queue_tube_stats st;

	if (!m->exists[tube])
		return;
	assert_int_equal(
	    queue_tube_stats(r->h.q, r->h.now, tube_names[tube], 2, &st), 0);
	assert_int_equal(
	    queue_tube_totals(r->h.q, st.index, &got[0], &got[1]), 0);
	memset(want, 0, sizeof(want));
	for (size_t i = 0; i < m->nev; i++) {
		const struct mev *e = &m->ev[i];
		struct queue_total *w = &want[e->kind == EV_WORK ? 0 : 1];

		if (e->tube != tube ||
		    (e->kind != EV_WORK && e->kind != EV_WAIT))
			continue;
		w->count++;
		w->total_ms += (uint64_t)e->dur;
		w->bucket[total_bucket_of(e->dur)]++;
	}
	for (int k = 0; k < 2; k++) {
		assert_true(got[k].count == want[k].count);
		assert_true(got[k].total_ms == want[k].total_ms);
		assert_memory_equal(
		    got[k].bucket, want[k].bucket, sizeof(want[k].bucket));
	}
}

static void
compare_hourly(struct run *r)
{
	for (int i = -1; i < NTUBE; i++)
		compare_hours(r, i);
	for (int i = 0; i < NTUBE; i++)
		compare_totals(r, i);
}

static void
step(struct run *r, size_t i)
{
	uint64_t c = rnd(r, 100);
	int64_t dt = 0;

	/* Time: usually a little, now and then a jump past windows. */
	if (rnd(r, 3) == 0)
		dt = (int64_t)rnd(r, 400);
	if (rnd(r, 200) == 0)
		dt = (int64_t)rnd(r, 12000);
	/* Rarely hours at once: the statistics' window moves on. */
	if (rnd(r, 1500) == 0)
		dt = (int64_t)rnd(r, 60) * QUEUE_HOUR_MS;
	r->h.now += dt;
	m_purge(r->m, r->h.now);
	m_gsync(r->m, r->h.now);
	if (rnd(r, 10) < 7) {
		op_expire(r);
		m_gsync(r->m, r->h.now);
	}
	/* Keep the live set small enough for linear scans. */
	if (r->m->n > 300 && c < 46)
		c = 85 + c % 4;
	if (c < 28)
		op_put(r);
	else if (c < 46)
		op_take(r);
	else if (c < 58)
		op_ack(r);
	else if (c < 63)
		op_release(r);
	else if (c < 70)
		op_fail(r);
	else if (c < 72)
		op_touch(r);
	else if (c < 73)
		op_untake(r);
	else if (c < 76)
		op_bury(r);
	else if (c < 83)
		op_kick(r);
	else if (c < 85)
		op_update(r);
	else if (c < 88)
		op_delete(r);
	else if (c < 89)
		rnd(r, 2) ? op_flush(r) : op_delete_where(r);
	else if (c < 91)
		op_pause(r);
	else if (c < 92)
		rnd(r, 8) ? op_tube_set(r) : op_tube_delete(r);
	else if (c < 93)
		rnd(r, 2) ? op_tube_limit(r) : op_group_set(r);
	else if (c < 96)
		op_sessions(r, 1 + rnd(r, NSESSION));
	else if (c < 97)
		op_sessions(r, 0);
	else
		op_expire(r);
	r->ops++;
	m_gsync(r->m, r->h.now);
	compare(r);
	feed_follower(r);
	if (i % 2500 == 0)
		assert_true(tq_same(r->h.q, r->follower, r->h.now));
	if (i % 500 == 0)
		compare_hourly(r);
	if (r->nsnap < NSNAP && i == (size_t)(r->nsnap + 1) * STEPS / 4) {
		buf_init(&r->snap[r->nsnap]);
		tm_snapshot(&r->h, &r->snap[r->nsnap], &r->snap_at[r->nsnap]);
		r->nsnap++;
	}
}

/* Takes that found a group held by its rate, over every seed. */
static uint64_t grate_total;

/* One seed: STEPS steps, then the follower, a full replay and each
 * snapshot plus the rest of the log must end in the primary's state. */
static void
run_seed(uint64_t seed, uint8_t retry, uint64_t *ops, uint64_t *records)
{
	struct run *r = calloc(1, sizeof(*r));
	struct queue *replay;

	assert_non_null(r);
	r->m = calloc(1, sizeof(*r->m));
	assert_non_null(r->m);
	queue_config_default(&r->m->cfg);
	r->m->cfg.dedup_ms = 5000;
	r->m->cfg.backoff_base_ms = 100;
	r->m->cfg.backoff_cap_ms = 1000;
	r->m->cfg.default_ttr_ms = 1000;
	r->m->cfg.max_ttr_ms = 10000;
	r->m->cfg.max_payload = 59;
	/* Half the seeds keep acked tasks as done, a few at most. */
	if (seed % 2 == 1) {
		r->m->cfg.keep_done_ms = 3000;
		r->m->cfg.max_done = 40;
	}
	r->m->cfg.lost_lease_retry = retry;
	r->m->next_id = 1;
	for (int i = 0; i < NTUBE; i++)
		m_conf_clear(&r->m->conf[i]);
	tq_init(&r->h, &r->m->cfg, T0);
	r->follower = queue_new(&r->m->cfg);
	r->rnd = seed;
	/* Usage per namespace is counted all along (queue_check compares it
	 * with the sums of the tubes at each step), and the namespaces
	 * change halfway, as a reloaded token file changes them. */
	assert_int_equal(queue_acct_set(r->h.q, ns, 3), 0);
	for (size_t i = 1; i <= STEPS; i++) {
		if (i == STEPS / 2)
			assert_int_equal(queue_acct_set(r->h.q, ns + 1, 3), 0);
		step(r, i);
	}
	assert_true(tq_same(r->h.q, r->follower, r->h.now));
	compare_hourly(r);
	/* apply needs no configuration but the window outcomes are kept
	 * (outcome.h: the node's own --dedup-window) */
	replay = tm_rebuilt(&r->h, &r->m->cfg, NULL, 0);
	/* Counted from the records as they came, or from the state after a
	 * restart: the same. */
	assert_int_equal(queue_acct_set(replay, ns + 1, 3), 0);
	assert_int_equal(queue_check(replay, NULL), 0);
	for (size_t i = 0; i < 3; i++) {
		struct queue_usage a, b;

		queue_acct_usage(r->h.q, i, &a);
		queue_acct_usage(replay, i, &b);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	queue_free(replay);
	for (int k = 0; k < r->nsnap; k++) {
		queue_free(
		    tm_rebuilt(&r->h, &r->m->cfg, &r->snap[k], r->snap_at[k]));
		buf_fini(&r->snap[k]);
	}
	{
		struct queue_stats st;
		const struct queue_counters *c = &st.ctr;

		assert_int_equal(queue_stats(r->h.q, r->h.now, &st), 0);
		fprintf(stderr,
		    "seed %" PRIu64 ": put %" PRIu64 " take %" PRIu64
		    " ack %" PRIu64 " release %" PRIu64 " fail %" PRIu64
		    " bury %" PRIu64 " kick %" PRIu64 " delete %" PRIu64
		    " ttr %" PRIu64 " session %" PRIu64 " replace %" PRIu64
		    ", %" PRIu64 " tasks, %" PRIu64 " done; tube set %" PRIu64
		    " delete %" PRIu64 ", dead letters %" PRIu64
		    "; limits %" PRIu64 ", held %" PRIu64
		    "; group sets %" PRIu64 ", held by a group %" PRIu64
		    " (by its rate %" PRIu64 ")\n",
		    seed, c->put, c->take, c->ack, c->release, c->fail, c->bury,
		    c->kick, c->del, c->ttr_expired, c->session_released,
		    c->replace, st.tasks, st.done, r->tube_sets,
		    r->tube_deletes, r->dead_letters, r->tube_limits, r->held,
		    r->group_sets, r->gheld, r->grate);
		assert_true(r->tube_sets > 0 && r->tube_deletes > 0 &&
		    r->dead_letters > 0 && r->tube_limits > 0 && r->held > 0);
		assert_true(r->group_sets > 0 && r->gheld > 0);
		grate_total += r->grate;
	}
	*ops += r->ops;
	*records += r->records;
	queue_free(r->follower);
	tq_fini(&r->h);
	free(r->m->ev);
	free(r->m);
	free(r);
}

static void
test_queue_agrees_with_the_model(void **state)
{
	grate_total = 0;
	const uint64_t seeds[] = { 1, 2, 3, 0x5eed, 20240601 };
	uint64_t base = t_seed(0), ops = 0, records = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		run_seed(seeds[i] + base,
		    i == 0 ? QUEUE_RETRY_IMMEDIATE : QUEUE_RETRY_BACKOFF, &ops,
		    &records);
	fprintf(stderr,
	    "model: %" PRIu64 " operations, %" PRIu64 " records; kept by "
	    "a tube %" PRIu64 ", lost leases by a tube's retry %" PRIu64
	    ", lost leases moved %" PRIu64 ", fatal fails moved %" PRIu64 "\n",
	    ops, records, seams.own_keep, seams.own_retry, seams.lost_moved,
	    seams.fatal_moved);
	assert_true(ops >= 100000);
	assert_true(grate_total > 0); /* a group's rate held a take */
	assert_true(seams.own_keep > 0 && seams.own_retry > 0);
	assert_true(seams.lost_moved > 0 && seams.fatal_moved > 0);
	fprintf(stderr,
	    "hourly: ttr setbacks %" PRIu64 " (burying or moved %" PRIu64
	    "), session setbacks %" PRIu64 ", dead-letter moves %" PRIu64
	    ", untakes %" PRIu64 ", tubes deleted with statistics %" PRIu64
	    "\n",
	    hseams.ttr, hseams.ttr_bury, hseams.session, hseams.moved,
	    hseams.untake, hseams.freed);
	assert_true(hseams.ttr > 0 && hseams.ttr_bury > 0);
	assert_true(hseams.session > 0 && hseams.moved > 0);
	assert_true(hseams.untake > 0 && hseams.freed > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_agrees_with_the_model),
	};

	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
