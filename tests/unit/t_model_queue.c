/* t_model_queue - the model of test_model.c (t_model_queue.h): its names
 * and payloads, and its own rules over the tasks it keeps in a plain
 * array, answering by linear scans: the events the hourly statistics
 * count, keys and their dedup and throttle windows, the end of a lease
 * (kept as done, buried, moved to a dead letter, backed off), a tube's
 * settings, its flow limits and its groups' limits with their token
 * buckets, and the tops a take may get; commit sends a record to the
 * queue and counts the seams it crosses. */
#include "t_model_queue.h"

/* The names of test_model.c (t_model_queue.h says what each is). */
const char *const grp_names[NGRP] = { "g0", "g1", "g2" };
const char *const tube_names[NTUBE] = { "t0", "t1", "t2", "t3" };
const struct queue_ns ns[] = { { "t0", 2, false }, { "t", 1, true },
	{ "t1", 2, true }, { "u", 1, true } };
const char *const key_names[NKEY] = { "k0", "k1", "k2", "k3", "k4", "k5" };
const char *const err_texts[NERR] = { "timeout", "oom", "connection refused",
	"exit 1" };
const char *const results[NERR] = { "ok", "sent 3 mails", "", "done in 12 ms" };

/* Payload p: "payload-p" cut or repeated to a length that depends on p. */
size_t
payload(int p, char *out)
{
	size_t len = (size_t)(p * 13) % 60;
	char word[16];
	size_t w = (size_t)snprintf(word, sizeof(word), "payload-%d/", p);

	for (size_t i = 0; i < len; i++)
		out[i] = word[i % w];
	return len;
}

void
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
void
m_forget_events(struct model *m, int tube)
{
	size_t k = 0;

	for (size_t i = 0; i < m->nev; i++)
		if (m->ev[i].tube != tube)
			m->ev[k++] = m->ev[i];
	m->nev = k;
}

struct mt *
m_by_key(struct model *m, int key)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].key == key)
			return &m->t[i];
	return NULL;
}

/* The done task whose key is still reserved. */
struct mt *
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
struct mt *
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
bool
m_held(struct model *m, int key, int64_t now)
{
	return m->dedup_exp[key] <= now && m->dedup_ver[key] != 0 &&
	    m_done_of_key(m, key) != NULL;
}

/* Removes a task. The key of a completed (acked) one is reserved for the
 * dedup window; that of a cancelled (deleted) one is free at once. */
void
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

void
m_unlease(struct mt *t)
{
	t->lease = 0;
	t->session = 0;
	t->detached = false;
	t->deadline = 0;
}

void
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

void
m_bury(struct model *m, struct mt *t, int64_t now)
{
	t->state = M_BURIED;
	t->buried_at = now;
	m_unlease(t);
	m->ctr[t->tube].bury++;
	m_event(m, t->tube, now, EV_BURY, 0);
}

/* Done tasks whose retention ended go (their reserved keys stay). */
void
m_purge(struct model *m, int64_t now)
{
	struct mt *t;

	while ((t = m_first_done(m)) != NULL && t->kept_until <= now) {
		t->dkey = -1;
		m_gone(m, t, now, true);
	}
}

size_t
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
void
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
void
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

uint32_t
m_ttr(const struct model *m, int tube, uint32_t asked)
{
	if (asked != 0)
		return asked;
	return (m->conf[tube].set & QREC_TS_TTR) ? m->conf[tube].ttr
	                                         : m->cfg.default_ttr_ms;
}

uint32_t
m_maxa(const struct model *m, int tube, uint32_t asked)
{
	if (asked != 0 || !(m->conf[tube].set & QREC_TS_MAX_ATTEMPTS))
		return asked;
	return m->conf[tube].maxa;
}

int64_t
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
bool
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
void
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
uint64_t
m_credit(const struct model *m, int tube, int64_t now)
{
	const struct mlim *l = &m->lim[tube];
	uint64_t full = (uint64_t)l->burst * 1000, c = l->credit;

	if (now > l->stamp)
		c += (uint64_t)(now - l->stamp) * l->rate;
	return c < full ? c : full;
}

/* Whether a limit of the tube holds its ready tasks back now. */
bool
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
uint64_t
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
void
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

bool
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

/* Fills `o` for the tubes of mask; returns what a take of them answers
 * (0, SLUICE_EPAUSED or SLUICE_ETIMEDOUT). A paused tube counts only
 * with a task to hand out; a tube a limit of its own holds is empty. */
int
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
bool
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

struct seams seams;

/* Counts the seams a record is about to cross (the model has not
 * applied it yet: its task is as it was). */
void
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

struct hseams hseams;

void
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

void
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
