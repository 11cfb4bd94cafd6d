/* t_model_flow - the model of test_model_flow.c (t_model_flow.h): its
 * names, and its own rules over the tasks it keeps in a plain array and
 * the graph of their dependencies: a node's outcome and the results its
 * children get, the parent-failure rules (fail, ignore, cancel), the end
 * of a lease, a batch's end, and the task a take gets. */
#include "t_model_flow.h"

/* The names of test_model_flow.c (t_model_flow.h). */
const char *const tube_names[NTUBE] = { "t0", "t1", "dl" };
const char *const batch_names[NBATCH] = { "b0", "b1", "b2" };
const char *const sched_names[NSCHED] = { "s0", "s1" };
const char *const results[NRES] = { "", "ok", "42 rows", "{\"sum\":7}" };
const char *const errors[NERR] = { "oom", "timeout", "exit 3" };

/* ---- The model ------------------------------------------------------- */

int
sorted_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Live tasks that name parent `id` through a node (its nlive). */
uint32_t
m_nlive(const struct model *m, uint64_t id)
{
	uint32_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		for (int k = 0; k < m->t[i].np; k++)
			n += m->t[i].linked[k] && m->t[i].parents[k] == id;
	return n;
}

/* What a child learns of parent `id` (deps.c's parent_outcome). */
int
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
const char *
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
int
m_dep_res(struct model *m, uint64_t id)
{
	const struct mt *t = m_find(m, id);

	if (m->node[id].exists && m->node[id].res > 0)
		return m->node[id].res;
	return t != NULL && t->state == M_DONE && t->res > 0 ? t->res : -1;
}

void
m_push(struct model *m, uint64_t id)
{
	assert_true(m->todo_tail < MAXID);
	m->todo[m->todo_tail++] = id;
}

/* The queue names `id` to its final callback. */
void
m_final(struct model *m, uint64_t id)
{
	assert_true(m->nfinal_want < 4 * MAXLIVE);
	m->final_want[m->nfinal_want++] = id;
}

/* Task t reached an outcome of `kind`, with `text` (NULL: none). */
void
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
void
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

uint64_t rules_applied[QUEUE_PARENT_END_];

uint64_t cancels[QUEUE_STATE_END_];

/* Task t leaves the queue: acked (with result res), or not (it failed
 * for good: its children follow their rule). */
void
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

void
m_unlease(struct mt *t)
{
	t->lease = 0;
	t->deadline = 0;
	t->cancelled = false;
	t->session = 0;
	t->detached = false;
}

/* t is buried in place (its tube's bury counter). */
void
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
void
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
void
m_release_child(struct mt *t, int64_t now)
{
	if (t->run_at < now)
		t->run_at = now;
	t->state = M_QUEUED;
}

/* Child c is told that parent p settled (tell_child). */
void
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
void
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

void
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

void
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
void
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

struct mt *
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
void
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

int
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
struct mt *
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
