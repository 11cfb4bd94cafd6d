/* t_model - what the two model tests share (test_model.c: the queue's
 * tasks, keys, groups and limits; test_model_flow.c: its workflows). Each
 * runs random requests both through the queue, by the t_queue.h harness,
 * and through a reference model of its own that keeps tasks in a plain
 * array and answers by linear scans.
 *
 * Two parts:
 * - the log's checks, in t_model.c (linked into both): a queue rebuilt
 *   from the harness's log, from the start or from a snapshot, must end
 *   in the harness's state;
 * - the model's helpers that both need, over the tasks of the model: the
 *   random stream, finding a task, its order in a take, the lease rule,
 *   the picks of a worker's lease request, the next lease the ttr timer
 *   or a session's end (or a node's start) ends, the follower fed. Their
 *   models differ, so these are static functions over the including
 *   file's types: it defines, before including this header,
 *   - M_QUEUED, M_TAKEN and M_DONE (a task's state in the model), MAXLIVE
 *     (at most that many tasks) and PICK_OTHER (1 in PICK_OTHER lease
 *     requests names any id, else a taken task's);
 *   - struct mt, a task, with at least: uint64_t id, lease, session; int
 *     state; uint32_t pri, ttr; int64_t run_at, deadline, kept_until;
 *     bool detached, has_err; char err[];
 *   - struct model with struct mt t[], size_t n (the first n are live)
 *     and uint64_t next_id (the next id the queue gives);
 *   - struct run with struct tq h (the harness), struct model *m, struct
 *     queue *follower (applies every record, nothing else), size_t fed
 *     (the log entries given to it) and uint64_t rnd (the stream);
 *   and, anywhere in the file, pick_id(r): an id for a request.
 * Static inline: a test may leave some unused. t_model.c, which has no
 * model, defines T_MODEL_LOG_ONLY for the first part alone. */
#ifndef SLUICE_T_MODEL_H
#define SLUICE_T_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"

/* ---- The log's checks (t_model.c) --------------------------------------- */

/* A queue with the settings cfg rebuilt from h's log: from the start
 * (snap NULL), or from snapshot `snap` (a tq_snap_emit one, loaded and
 * checked: queue_check) plus the log from entry `snap_at` on. Fails the
 * test unless it ends with h's dump at h's time; the caller frees it. */
struct queue *tm_rebuilt(const struct tq *h, const struct queue_config *cfg,
    const struct buf *snap, size_t snap_at);

/* Writes h's snapshot into `snap` (initialised, empty) and the log entry
 * it stands for into *at: the rest of the log follows it. */
void tm_snapshot(const struct tq *h, struct buf *snap, size_t *at);

#ifndef T_MODEL_LOG_ONLY

/* ---- The model's helpers (the including file's types) ------------------- */

static uint64_t pick_id(struct run *r);

static inline uint64_t
rnd(struct run *r, uint64_t n)
{
	return t_below(&r->rnd, n);
}

/* Gives the follower the log entries it has not applied yet. */
static inline void
feed_follower(struct run *r)
{
	assert_int_equal(tq_replay(&r->h, r->follower, r->fed, r->h.nlog), 0);
	r->fed = r->h.nlog;
}

static inline struct mt *
m_find(struct model *m, uint64_t id)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].id == id)
			return &m->t[i];
	return NULL;
}

static inline void
m_set_err(struct mt *t, const char *text)
{
	snprintf(t->err, sizeof(t->err), "%s", text);
	t->has_err = true;
}

/* The text a lease lost to its ttr leaves as the task's last error. */
static inline void
m_ttr_text(char *text, size_t size, uint32_t ttr)
{
	if (ttr % 1000 == 0)
		snprintf(text, size, "ttr expired after %us",
		    (unsigned)(ttr / 1000));
	else
		snprintf(text, size, "ttr expired after %ums", (unsigned)ttr);
}

static inline bool
m_ready(const struct mt *t, int64_t now)
{
	return t->state == M_QUEUED && t->run_at <= now;
}

/* A take's order: priority, then ready since, then id. */
static inline bool
m_less(const struct mt *a, const struct mt *b)
{
	if (a->pri != b->pri)
		return a->pri < b->pri;
	if (a->run_at != b->run_at)
		return a->run_at < b->run_at;
	return a->id < b->id;
}

/* The done task purged first: the earliest kept_until, then id. */
static inline struct mt *
m_first_done(struct model *m)
{
	struct mt *first = NULL;

	for (size_t i = 0; i < m->n; i++) {
		struct mt *t = &m->t[i];

		if (t->state == M_DONE &&
		    (first == NULL || t->kept_until < first->kept_until ||
		        (t->kept_until == first->kept_until &&
		            t->id < first->id)))
			first = t;
	}
	return first;
}

/* The lease rule: 0 and the task in *out, or the error. force (an
 * operator's) passes over the lease; a taken task's lease is >= 1, so 0
 * never matches. */
static inline int
m_leased(
    struct model *m, uint64_t id, uint64_t lease, bool force, struct mt **out)
{
	struct mt *t = m_find(m, id);

	if (t == NULL)
		return SLUICE_ENOTFOUND;
	if (t->state != M_TAKEN)
		return SLUICE_ESTATE;
	if (!force && lease != t->lease)
		return SLUICE_ESTALE;
	*out = t;
	return 0;
}

/* An id for a lease request: mostly of a taken task, as a worker's. */
static inline uint64_t
pick_taken(struct run *r)
{
	struct model *m = r->m;
	size_t n = 0, k;

	for (size_t i = 0; i < m->n; i++)
		n += m->t[i].state == M_TAKEN;
	if (n == 0 || rnd(r, PICK_OTHER) == 0)
		return pick_id(r);
	k = rnd(r, n);
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].state == M_TAKEN && k-- == 0)
			return m->t[i].id;
	return pick_id(r);
}

/* The task whose lease the server's ttr timer ends next (the earliest
 * deadline passed, then the lowest id), which the queue must decide in
 * *rec; NULL, and the queue must find none, when no deadline passed. */
static inline struct mt *
expired_next(struct run *r, struct qrec *rec)
{
	struct model *m = r->m;
	struct mt *due = NULL;

	for (size_t i = 0; i < m->n; i++) {
		struct mt *t = &m->t[i];

		if (t->state != M_TAKEN || t->deadline > r->h.now)
			continue;
		if (due == NULL || t->deadline < due->deadline ||
		    (t->deadline == due->deadline && t->id < due->id))
			due = t;
	}
	if (due == NULL) {
		assert_int_equal(queue_decide_expired(r->h.q, r->h.now, rec),
		    SLUICE_ENOTFOUND);
		return NULL;
	}
	assert_int_equal(queue_decide_expired(r->h.q, r->h.now, rec), 0);
	assert_true(rec->u.end.id == due->id);
	return due;
}

/* The next lease that session's end (session != 0) or a node's start
 * (0: every lease) ends, saying `why`, as the queue decides it in *rec:
 * the task, taken and not detached. NULL when the queue ends none, and
 * then the model holds no such lease either. */
static inline struct mt *
lease_end_next(
    struct run *r, uint64_t session, const char *why, struct qrec *rec)
{
	struct model *m = r->m;
	size_t len = strlen(why);
	int rc = session != 0
	    ? queue_decide_session_gone(
	          r->h.q, r->h.now, session, why, len, rec)
	    : queue_decide_restart(r->h.q, r->h.now, why, len, rec);
	struct mt *t;

	if (rc != 0) {
		assert_int_equal(rc, SLUICE_ENOTFOUND);
		for (size_t i = 0; i < m->n; i++)
			assert_false(m->t[i].state == M_TAKEN &&
			    !m->t[i].detached &&
			    (session == 0 || m->t[i].session == session));
		return NULL;
	}
	t = m_find(m, rec->u.end.id);
	assert_non_null(t);
	assert_true(t->state == M_TAKEN && !t->detached);
	assert_true(session == 0 || t->session == session);
	return t;
}

#endif /* T_MODEL_LOG_ONLY */
#endif
