/* apply - changes the queue's state from a record. The task state machine,
 * by record (more in queue.h and docs/queue.md):
 *   PUT      (none) -> ready | delayed (by run_at); PUT_V also
 *            stores its version with the key, PUT_T opens its key's
 *            throttle window (throttle.h); PUT_X -> waiting (deps.c)
 *   ACK_R    as ACK; its result stays for the children (deps.c)
 *   TAKE     ready | delayed -> taken (attempts + 1, lease = the
 *            record's, or its lsn for the older form)
 *   TOUCH    taken -> taken (deadline = time + ttr)
 *   ACK      taken -> gone | delayed (recurring) | ready in another tube |
 *            the pending replacement | done (kept until time + keep_ms;
 *            then, past max_done, the done tasks whose keep ends first
 *            are purged)
 *   RELEASE  taken -> ready | delayed | the pending replacement
 *   FAIL     taken -> delayed (backoff) | buried | dead letter | the
 *            pending replacement
 *   BURY     taken -> buried | dead letter | the pending replacement;
 *            ready | delayed -> buried (lease 0, an operator)
 *   SETBACK  as RELEASE (ready | delayed) or BURY, with a last_error
 *   UNTAKE   taken -> ready | delayed as before the take (attempts - 1)
 *            | the pending replacement
 *   KICK     buried | delayed -> ready
 *   DELETE   any -> gone;  FLUSH  every task of a tube -> gone
 *   DELETE_WHERE  the tube's tasks in one state, old enough -> gone
 *   DELETE_AGED   the tube's tasks in any of its states (taken too: the
 *            lease ends), updated or created long enough ago -> gone
 *   REPLACE  ready | delayed | buried -> ready | delayed, new content;
 *            taken -> taken with a pending replacement. REPLACE_V the
 *            same, and the new content's version goes with it (to the
 *            key at once, or with the pending replacement)
 *   PAUSE    no task changes; the tube's pause is set or lifted
 *   UPDATE   ready | delayed -> ready | delayed (by run_at), buried ->
 *            buried, with new fields; taken -> taken, a new priority
 *   TUBE_SET no task changes; the tube's settings are replaced
 *   TUBE_DELETE  every task of the tube -> gone (force); the tube goes
 *   GROUP_SET   no task changes; one name's group settings are replaced
 *   TUBE_LIMIT  no task changes; the tube's flow limits are replaced
 *            (flow.c), its bucket full
 *   FAIL, BURY, SETBACK with outcome MOVED: taken -> ready in the
 *            dead-letter tube, attempts and last_error kept (a FAIL's or
 *            SETBACK's text becomes it)
 * and, with no record, delayed -> ready as the clock passes run_at, and
 * done -> gone as it passes a done task's run_at (its kept_until).
 *
 * The live server, recovery and followers all come here, so the result
 * depends only on the queue and (lsn, time, record): no clock, no
 * configuration (records carry every derived value: run_at, dedup_ms,
 * the outcome of a lease). Every function below first checks that the
 * record fits the state - the task exists, is in a state the record can
 * come from, holds the lease the record names, has or lacks a pending
 * replacement as the outcome says - and returns SLUICE_ECORRUPT when it
 * does not; then does every allocation (SLUICE_ENOMEM, undone); and only
 * then commits, which cannot fail. So a failed apply changes nothing but
 * the catch-up of the clock to the record's time, which only does what
 * time would do anyway. */
#include <stdlib.h>
#include <string.h>

#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/hourly.h"
#include "queue/qstate.h"
#include "queue/throttle.h"
#include "sluice.h"

/* A copy of `len` bytes in *out (NULL when len is 0). */
static int
dup_bytes(const void *p, size_t len, char **out)
{
	*out = NULL;
	if (len == 0)
		return 0;
	*out = malloc(len);
	if (*out == NULL)
		return SLUICE_ENOMEM;
	memcpy(*out, p, len);
	return 0;
}

/* A new task that takes the place of `t` with new content: same id, tube,
 * key and created_at; attempts 0, no error. Not placed, not indexed. */
static struct task *
rebuilt(struct queue *q, const struct task *t, const void *payload, size_t len,
    uint32_t pri, uint32_t ttr, uint32_t max_attempts, int64_t period,
    int64_t run_at, int64_t time)
{
	struct task *nt = task_new(&q->pool, payload, len);

	if (nt == NULL)
		return NULL;
	nt->id = t->id;
	nt->tslot = t->tslot;
	group_slot_set(nt, group_slot(t));
	nt->created_at = t->created_at;
	nt->updated_at = time;
	nt->pri = pri;
	nt->ttr = ttr;
	nt->max_attempts = max_attempts;
	nt->run_at = run_at;
	if (task_has_key(t) || period != 0) {
		if (task_ext_need(nt) != 0) {
			task_free(&q->pool, nt);
			return NULL;
		}
		nt->ext->period = period;
	}
	return nt;
}

/* Commits `nt` in place of `t` (leaving whatever state t was in), with
 * the version of its new content (0: none). */
static void
swap_in(struct queue *q, struct task *t, struct task *nt, int state,
    uint64_t version)
{
	qs_unplace(q, t);
	qs_task_swap(q, t, nt);
	if (task_has_key(nt))
		nt->ext->key->version = version;
	qs_place(q, nt, state);
	task_free(&q->pool, t);
}

int
qs_apply_put(struct queue *q, int64_t time, const struct qrec_put *p)
{
	struct keyent *ke = NULL, *newke = NULL;
	struct group *g = NULL;
	struct tube *tb;
	struct task *t;
	bool created;
	int state, rc;

	if (p->id < q->next_id)
		return SLUICE_ECORRUPT;
	if (p->key_len > 0) {
		ke = qs_key(q, p->tube, p->tube_len, p->key, p->key_len);
		if (ke != NULL && ke->task != NULL)
			return SLUICE_ECORRUPT;
	}
	t = task_new(&q->pool, p->payload, p->payload_len);
	if (t == NULL)
		return SLUICE_ENOMEM;
	rc = SLUICE_ENOMEM;
	if ((p->key_len > 0 || p->period != 0) && task_ext_need(t) != 0)
		goto fail_alloc;
	if (p->key_len > 0 && ke == NULL) {
		newke =
		    qs_keyent_new(q, p->tube, p->tube_len, p->key, p->key_len);
		if (newke == NULL || qs_reserve_key(q) != 0)
			goto fail_alloc;
	}
	if ((rc = qs_reserve_id(q)) != 0)
		goto fail_alloc;
	if ((rc = qs_tube_get(q, p->tube, p->tube_len, &tb, &created)) != 0)
		goto fail_alloc;
	if (p->group_len > 0 &&
	    (rc = groups_prepare(
	         &q->grouped, tb, p->group, p->group_len, &g)) != 0)
		goto fail_tube;
	state = p->nafter ? QUEUE_WAITING : qs_wait_state(q, p->run_at);
	if ((rc = qs_reserve(q, tb, state, false, 0)) != 0)
		goto fail_group;

	t->id = p->id;
	t->tslot = tb->slot;
	if (g != NULL)
		groups_join(tb, g, t);
	t->pri = p->pri;
	t->ttr = p->ttr;
	t->max_attempts = p->max_attempts;
	t->run_at = p->run_at;
	t->created_at = time;
	t->updated_at = time;
	tidx_insert(&q->ids, t);
	if (p->key_len > 0) {
		if (ke != NULL) {
			qs_dedup_reuse(q, ke);
		} else {
			ke = newke;
			qs_key_insert(q, ke);
		}
		ke->task = t;
		ke->id = t->id;
		ke->version = p->version; /* was expires: no longer reserved */
		t->ext->key = ke;
		q->nkeys++;
	}
	if (t->ext != NULL)
		t->ext->period = p->period;
	qs_place(q, t, state);
	q->ntasks++;
	q->next_id = p->id + 1;
	/* The next puts most likely have the next ids: the slot of the one
	 * QS_PREFETCH_IDS on is a cache miss that can be on its way. */
	tidx_prefetch(&q->ids, q->next_id + QS_PREFETCH_IDS);
	QS_COUNT(q, tb, put);
	return 0;

fail_group:
	groups_undo(tb, g);
fail_tube:
	if (created)
		qs_tube_undo(q, tb);
fail_alloc:
	free(newke);
	task_free(&q->pool, t);
	return rc;
}

static int
apply_take(
    struct queue *q, uint64_t lsn, int64_t time, const struct qrec_take *r)
{
	struct task *t = qs_task(q, r->id);
	struct task_ext *e;
	int rc;

	/* Delayed too: the node that decided may have caught up with a
	 * later clock than this one has. */
	if (t == NULL || !qs_queued(t))
		return SLUICE_ECORRUPT;
	if ((rc = hourly_reserve(q, qs_tube_of(q, t), time)) != 0 ||
	    (rc = task_ext_need(t)) != 0)
		return rc;
	rc = qs_reserve(
	    q, qs_tube_of(q, t), QUEUE_TAKEN, !r->detached, r->session);
	if (rc != 0) {
		task_ext_trim(t);
		return rc;
	}
	if (qs_tube_of(q, t)->groups != NULL && t->state == QUEUE_READY)
		groups_served(
		    qs_tube_of(q, t)->groups, t); /* its group's turn ends */
	qs_unplace(q, t);
	e = t->ext;
	e->lease = r->lease != 0 ? r->lease : lsn;
	e->session = r->session;
	e->detached = r->detached;
	e->taken_at = time;
	e->deadline = time + t->ttr;
	if (t->attempts < UINT32_MAX)
		t->attempts++;
	t->updated_at = time;
	qs_place(q, t, QUEUE_TAKEN);
	QS_COUNT(q, qs_tube_of(q, t), take);
	if (qs_tube_of(q, t)->flow != NULL)
		qs_flow_took(qs_tube_of(q, t), time);
	qs_glimit_took(q, qs_tube_of(q, t), t, time);
	hourly_take(q, qs_tube_of(q, t), time, t->run_at);
	return 0;
}

/* Counts a record that ends the lease of t (or buries it), before t leaves
 * its state: the lease's take time goes into the hourly statistics. */
static void
count_end(struct queue *q, const struct task *t, int64_t time, uint16_t type,
    const struct qrec_end *e)
{
	struct tube *tb = qs_tube_of(q, t);

	hourly_end(q, tb, time, type, e,
	    t->state == QUEUE_TAKEN ? t->ext->taken_at : time);
	switch (type) {
	case QREC_ACK:
		QS_COUNT(q, tb, ack);
		break;
	case QREC_FAIL:
		QS_COUNT(q, tb, fail);
		break;
	case QREC_RELEASE:
		if (e->reason == QREC_BY_CLIENT)
			QS_COUNT(q, tb, release);
		break;
	default:
		break;
	}
	if (e->outcome == QREC_BURIED)
		QS_COUNT(q, tb, bury);
	if (e->reason == QREC_BY_TTR)
		QS_COUNT(q, tb, ttr_expired);
	else if (e->reason == QREC_BY_SESSION || e->reason == QREC_BY_RESTART)
		QS_COUNT(q, tb, session_released);
}

/* ACK --to: ready in the next tube, a fresh start (attempts 0, no
 * error). FAIL, BURY or SETBACK to the dead-letter tube: ready there as
 * it was, attempts and last error kept (a FAIL's or SETBACK's text
 * becomes it), so whoever
 * reads the dead letters sees why the task got there. */
static int
apply_moved(struct queue *q, uint16_t type, int64_t time, struct task *t,
    const struct qrec_end *e)
{
	bool acked = type == QREC_ACK, created, drop_key = false;
	bool has_error = type == QREC_FAIL || type == QREC_SETBACK;
	struct keyent *ke = task_has_key(t) ? t->ext->key : NULL, *nke = NULL;
	struct group *g = NULL;
	struct tube *tb;
	char *err = NULL;
	int rc;

	rc = acked ? qs_tube_get(q, e->text, e->text_len, &tb, &created)
	           : qs_tube_get(q, e->to, e->to_len, &tb, &created);
	if (rc != 0)
		return rc;
	/* Its key goes with it into the new tube's keys, unless that tube
	 * has the key already (a live task or a reservation): then it
	 * arrives without one. */
	if (ke != NULL && tb != qs_tube_of(q, t)) {
		if (qs_key(q, tb->name, tb->name_len, ke->key, ke->len) != NULL)
			drop_key = true;
		else if ((nke = qs_keyent_new(q, tb->name, tb->name_len,
		              ke->key, ke->len)) == NULL)
			rc = SLUICE_ENOMEM;
	}
	if (rc == 0 && has_error)
		rc = dup_bytes(e->text, e->text_len, &err);
	/* Its group goes with it: the group of that name in the new tube. */
	if (rc == 0 && tb != qs_tube_of(q, t) && group_slot(t) != 0) {
		const struct group *og = groups_of(qs_tube_of(q, t), t);

		rc =
		    groups_prepare(&q->grouped, tb, og->name, og->name_len, &g);
	}
	if (rc != 0 || (rc = qs_reserve(q, tb, QUEUE_READY, false, 0)) != 0) {
		free(err);
		free(nke);
		groups_undo(tb, g);
		if (created)
			qs_tube_undo(q, tb);
		return rc;
	}
	count_end(q, t, time, type, e);
	qs_unplace(q, t);
	if (drop_key)
		qs_key_complete(q, t, time, 0);
	else if (nke != NULL)
		qs_key_rehome(q, ke, nke);
	if (g != NULL) {
		groups_leave(qs_tube_of(q, t), t);
		groups_join(tb, g, t);
	}
	t->tslot = tb->slot;
	t->run_at = time;
	t->updated_at = time;
	if (acked) {
		t->attempts = 0;
		task_put_error(t, NULL, 0);
	} else if (has_error) {
		task_put_error(t, err, e->text_len);
	}
	qs_place(q, t, QUEUE_READY);
	task_ext_trim(t);
	return 0;
}

/* Does the record's outcome fit the task? */
static bool
end_fits(uint16_t type, const struct task *t, const struct qrec_end *e)
{
	if (e->lease == 0) /* BURY of a task that is not taken */
		return qs_queued(t);
	if (t->state != QUEUE_TAKEN || t->ext->lease != e->lease)
		return false;
	if (task_has_repl(t) != (e->outcome == QREC_REPLACED))
		return false;
	if (type == QREC_ACK && e->outcome == QREC_WAIT)
		return task_period(t) > 0;
	return true;
}

/* ACK with outcome DONE: the task stays, done, with what it needs to be
 * shown (payload, take time, result, its key while reserved); its lease
 * is gone. One that would be purged at once (a record whose time is
 * behind the clock) goes as if deleted. */
static int
apply_done(
    struct queue *q, int64_t time, const struct qrec_end *e, struct task *t)
{
	int64_t until = time + e->keep_ms;
	struct keyent *ke = t->ext->key;
	char *res = NULL;
	int rc;

	if (until > QREC_TIME_MAX)
		until = QREC_TIME_MAX;
	if (until <= q->clock) {
		count_end(q, t, time, QREC_ACK, e);
		qs_task_remove(q, t, time, e->dedup_ms);
		return 0;
	}
	if ((rc = dup_bytes(e->text, e->text_len, &res)) != 0 ||
	    (rc = qs_reserve(q, qs_tube_of(q, t), QUEUE_DONE, false, 0)) != 0) {
		free(res);
		return rc;
	}
	count_end(q, t, time, QREC_ACK, e);
	qs_unplace(q, t);
	qs_key_complete(q, t, time, e->dedup_ms);
	if (ke != NULL && e->dedup_ms != 0)
		t->ext->key = ke; /* now a dedup entry naming this task */
	/* taken_at, the last take, stays: the duration starts there */
	t->ext->result = res;
	t->ext->result_len = (uint16_t)e->text_len;
	t->updated_at = time;
	t->run_at = until;
	qs_place(q, t, QUEUE_DONE);
	while (e->max_done != 0 && q->count[QUEUE_DONE] > e->max_done)
		qs_done_drop(q, heap_top(&q->done));
	return 0;
}

/* ACK, RELEASE, FAIL and BURY: a lease ends (or an operator buries a
 * waiting task), with the outcome the record names. */
static int
apply_end(
    struct queue *q, uint16_t type, int64_t time, const struct qrec_end *e)
{
	struct task *t = qs_task(q, e->id), *nt;
	bool has_error = type == QREC_FAIL || type == QREC_SETBACK;
	struct tube *tb;
	struct repl *rp;
	char *err = NULL;
	int64_t run_at;
	int state, rc;

	if (type == QREC_ACK_R)
		type = QREC_ACK; /* with a result its children keep */
	if (t == NULL || !end_fits(type, t, e))
		return SLUICE_ECORRUPT;
	tb = qs_tube_of(q, t);
	if ((rc = hourly_reserve(q, tb, time)) != 0)
		return rc;
	switch (e->outcome) {
	case QREC_DONE:
		return apply_done(q, time, e, t);

	case QREC_DELETED:
		count_end(q, t, time, type, e);
		qs_task_remove(q, t, time, e->dedup_ms);
		return 0;

	case QREC_WAIT:
	case QREC_BURIED:
		/* An undone take leaves the task where it waited. */
		run_at = type == QREC_UNTAKE ? t->run_at : e->run_at;
		state = e->outcome == QREC_BURIED ? QUEUE_BURIED
		                                  : qs_wait_state(q, run_at);
		if (has_error &&
		    (rc = dup_bytes(e->text, e->text_len, &err)) != 0)
			return rc;
		/* A waiting task an operator buries may have no ext yet. */
		if (err != NULL && (rc = task_ext_need(t)) != 0) {
			free(err);
			return rc;
		}
		if ((rc = qs_reserve(q, tb, state, false, 0)) != 0) {
			free(err);
			task_ext_trim(t);
			return rc;
		}
		count_end(q, t, time, type, e);
		qs_unplace(q, t);
		if (e->outcome == QREC_WAIT)
			t->run_at = run_at;
		if (type == QREC_RELEASE ||
		    (type == QREC_SETBACK && e->outcome == QREC_WAIT))
			t->pri = e->pri;
		if (has_error)
			task_put_error(t, err, e->text_len);
		if (type == QREC_UNTAKE && t->attempts > 0)
			t->attempts--;
		if (type == QREC_ACK) { /* a recurring task's next run */
			t->attempts = 0;
			task_put_error(t, NULL, 0);
		}
		t->updated_at = time;
		qs_place(q, t, state);
		task_ext_trim(t);
		return 0;

	case QREC_MOVED:
		return apply_moved(q, type, time, t, e);

	case QREC_REPLACED:
		rp = t->ext->repl;
		nt = rebuilt(q, t, rp->payload, rp->payload_len, rp->pri,
		    rp->ttr, rp->max_attempts, rp->period,
		    rp->run_at > time ? rp->run_at : time, time);
		if (nt == NULL)
			return SLUICE_ENOMEM;
		state = qs_wait_state(q, nt->run_at);
		if ((rc = qs_reserve(q, tb, state, false, 0)) != 0) {
			task_free(&q->pool, nt);
			return rc;
		}
		count_end(q, t, time, type, e);
		swap_in(q, t, nt, state, rp->version);
		return 0;
	}
	return SLUICE_ECORRUPT;
}

static int
apply_touch(struct queue *q, int64_t time, const struct qrec_touch *r)
{
	struct task *t = qs_task(q, r->id);

	if (t == NULL || t->state != QUEUE_TAKEN || t->ext->lease != r->lease)
		return SLUICE_ECORRUPT;
	t->ext->deadline = time + t->ttr;
	t->updated_at = time;
	heap_fix(&q->taken, t);
	return 0;
}

int64_t
queue_lease_restart(struct queue *q, uint64_t id, uint64_t lease, int64_t now)
{
	struct task *t = qs_task(q, id);

	if (t == NULL || t->state != QUEUE_TAKEN || t->ext->lease != lease)
		return 0;
	if (now + t->ttr > t->ext->deadline) {
		t->ext->deadline = now + t->ttr;
		heap_fix(&q->taken, t);
	}
	return t->ext->deadline;
}

static int
apply_kick(struct queue *q, int64_t time, const struct qrec_kick *r)
{
	struct task *t = qs_task(q, r->id);
	int rc;

	if (t == NULL || t->state == QUEUE_TAKEN || t->state == QUEUE_DONE)
		return SLUICE_ECORRUPT;
	if ((rc = qs_reserve(q, qs_tube_of(q, t), QUEUE_READY, false, 0)) != 0)
		return rc;
	/* Ready from now on; a task already ready keeps its earlier time. */
	if (t->state == QUEUE_BURIED || t->run_at > time)
		t->run_at = time;
	qs_unplace(q, t);
	t->updated_at = time;
	qs_place(q, t, QUEUE_READY);
	QS_COUNT(q, qs_tube_of(q, t), kick);
	return 0;
}

static int
apply_delete(struct queue *q, int64_t time, const struct qrec_delete *r)
{
	struct task *t = qs_task(q, r->id);

	if (t == NULL)
		return SLUICE_ECORRUPT;
	QS_COUNT(q, qs_tube_of(q, t), del);
	qs_task_remove(q, t, time, r->dedup_ms);
	return 0;
}

static int
by_id(const void *a, const void *b)
{
	const struct task *x = *(struct task *const *)a;
	const struct task *y = *(struct task *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Cancels n tasks of tube tb, in id order so that keys enter the dedup
 * list in a fixed order. */
static void
cancel_all(struct queue *q, struct tube *tb, struct task **all, size_t n,
    int64_t time, uint32_t dedup_ms)
{
	qsort(all, n, sizeof(*all), by_id);
	for (size_t i = 0; i < n; i++) {
		QS_COUNT(q, tb, del);
		qs_task_remove(q, all[i], time, dedup_ms);
	}
}

/* Cancels every task of the tube, done ones too (cancel_all). Returns 0
 * or SLUICE_ENOMEM (nothing changed). */
static int
flush_tube(struct queue *q, struct tube *tb, int64_t time, uint32_t dedup_ms)
{
	struct heap *hs[5] = { &tb->age, &tb->delayed, &tb->buried, &tb->done,
		&tb->waiting };
	size_t n = 0, total = tube_tasks(tb);
	struct task **all;

	if (total == 0)
		return 0;
	all = malloc(total * sizeof(*all));
	if (all == NULL)
		return SLUICE_ENOMEM;
	for (int h = 0; h < 5; h++)
		for (uint32_t i = 0; i < hs[h]->len; i++)
			all[n++] = hs[h]->item[i];
	for (uint32_t i = 0; i < q->taken.len && n < total; i++) {
		struct task *t = q->taken.item[i];

		if (qs_tube_of(q, t) == tb)
			all[n++] = t;
	}
	cancel_all(q, tb, all, n, time, dedup_ms);
	free(all);
	return 0;
}

/* The heap of a tube's tasks in `state`, and the time a DELETE_WHERE
 * measures their age by. */
static struct heap *
state_heap(struct tube *tb, int state)
{
	switch (state) {
	case QUEUE_READY:
		return &tb->age; /* every group's */
	case QUEUE_DELAYED:
		return &tb->delayed;
	case QUEUE_BURIED:
		return &tb->buried;
	case QUEUE_DONE:
		return &tb->done;
	default:
		return NULL;
	}
}

static bool
aged(const struct task *t, uint8_t by, int64_t before)
{
	int64_t at = by == QREC_BY_CREATED ? t->created_at
	    : by == QREC_BY_UPDATED        ? t->updated_at
	                                   : qs_age_time(t);

	return at <= before;
}

size_t
qs_aged(const struct queue *q, const struct tube *tb, uint8_t states,
    uint8_t by, int64_t before, struct task **out)
{
	size_t n = 0;

	for (int st = QUEUE_READY; st <= QUEUE_DONE; st++) {
		const struct heap *h;

		if (st == QUEUE_TAKEN || !(states & QREC_STATE_BIT(st)))
			continue;
		h = state_heap((struct tube *)tb, st);
		for (uint32_t i = 0; i < h->len; i++)
			if (aged(h->item[i], by, before)) {
				if (out != NULL)
					out[n] = h->item[i];
				n++;
			}
	}
	if (!(states & QREC_STATE_BIT(QUEUE_TAKEN)) || tb->ntaken == 0)
		return n;
	for (uint32_t i = 0; i < q->taken.len; i++) {
		struct task *t = q->taken.item[i];

		if (qs_tube_of(q, t) == tb && aged(t, by, before)) {
			if (out != NULL)
				out[n] = t;
			n++;
		}
	}
	return n;
}

/* DELETE_WHERE (one state, by qs_age_time) and DELETE_AGED (states, by
 * r->by): the tasks qs_aged finds are cancelled, keys free at once. */
static int
apply_delete_where(struct queue *q, int64_t time, uint16_t type,
    const struct qrec_delete_where *r)
{
	struct tube *tb = qs_tube(q, r->tube, r->tube_len);
	uint8_t states =
	    type == QREC_DELETE_AGED ? r->states : QREC_STATE_BIT(r->state);
	uint8_t by = type == QREC_DELETE_AGED ? r->by : 0;
	struct task **all;
	size_t n, cap;

	if (tb == NULL ||
	    (type == QREC_DELETE_WHERE && state_heap(tb, r->state) == NULL))
		return SLUICE_ECORRUPT;
	cap = tube_tasks(tb);
	if (cap == 0)
		return 0;
	all = malloc(cap * sizeof(*all));
	if (all == NULL)
		return SLUICE_ENOMEM;
	n = qs_aged(q, tb, states, by, r->before, all);
	cancel_all(q, tb, all, n, time, 0);
	free(all);
	return 0;
}

static int
apply_flush(struct queue *q, int64_t time, const struct qrec_flush *r)
{
	struct tube *tb = qs_tube(q, r->tube, r->tube_len);

	if (tb == NULL)
		return SLUICE_ECORRUPT;
	return flush_tube(q, tb, time, r->dedup_ms);
}

static int
apply_replace(struct queue *q, int64_t time, const struct qrec_replace *r)
{
	struct task *t = qs_task(q, r->id), *nt;
	struct repl *rp;
	int state, rc;

	if (t == NULL || t->state == QUEUE_DONE ||
	    r->pending != (t->state == QUEUE_TAKEN))
		return SLUICE_ECORRUPT;
	if (r->version != 0 && !task_has_key(t))
		return SLUICE_ECORRUPT; /* a version lives with the key */
	if (r->pending) {
		rp = repl_new(r->payload, r->payload_len);
		if (rp == NULL)
			return SLUICE_ENOMEM;
		rp->pri = r->pri;
		rp->ttr = r->ttr;
		rp->max_attempts = r->max_attempts;
		rp->run_at = r->run_at;
		rp->period = r->period;
		rp->version = r->version;
		free(t->ext->repl);
		t->ext->repl = rp;
		t->updated_at = time;
		QS_COUNT(q, qs_tube_of(q, t), replace);
		return 0;
	}
	nt = rebuilt(q, t, r->payload, r->payload_len, r->pri, r->ttr,
	    r->max_attempts, r->period, r->run_at, time);
	if (nt == NULL)
		return SLUICE_ENOMEM;
	state = qs_wait_state(q, nt->run_at);
	if ((rc = qs_reserve(q, qs_tube_of(q, t), state, false, 0)) != 0) {
		task_free(&q->pool, nt);
		return rc;
	}
	QS_COUNT(q, qs_tube_of(q, t), replace);
	swap_in(q, t, nt, state, r->version);
	return 0;
}

/* A copy of `t` with another payload, taking over its ext (key, error,
 * period); attempts, times and the rest kept. Not placed, not indexed:
 * swap_payload puts it where `t` was. NULL when out of memory. */
static struct task *
repayloaded(
    struct queue *q, const struct task *t, const void *payload, size_t len)
{
	struct task *nt = task_new(&q->pool, payload, len);

	if (nt == NULL)
		return NULL;
	nt->id = t->id;
	nt->tslot = t->tslot;
	group_slot_set(nt, group_slot(t));
	nt->run_at = t->run_at;
	nt->created_at = t->created_at;
	nt->updated_at = t->updated_at;
	nt->pri = t->pri;
	nt->ttr = t->ttr;
	nt->attempts = t->attempts;
	nt->max_attempts = t->max_attempts;
	return nt;
}

/* `nt` takes the place of the unplaced `t` in the id index, with its ext
 * (and so its key); `t` is freed. */
static void
swap_payload(struct queue *q, struct task *t, struct task *nt)
{
	tidx_swap(&q->ids, t, nt);
	nt->ext = t->ext;
	t->ext = NULL;
	if (task_has_key(nt))
		nt->ext->key->task = nt;
	task_free(&q->pool, t);
}

static int
apply_update(struct queue *q, int64_t time, const struct qrec_update *u)
{
	struct task *t = qs_task(q, u->id), *nt = NULL;
	int state, rc;

	if (t == NULL || t->state == QUEUE_DONE)
		return SLUICE_ECORRUPT;
	if (t->state == QUEUE_TAKEN) {
		if (u->run_at != t->run_at || u->ttr != t->ttr ||
		    u->max_attempts != t->max_attempts || u->has_payload)
			return SLUICE_ECORRUPT;
		t->pri = u->pri;
		if (task_has_repl(t))
			t->ext->repl->pri = u->pri;
		t->updated_at = time;
		return 0;
	}
	if (t->state == QUEUE_BURIED && u->run_at != t->run_at)
		return SLUICE_ECORRUPT;
	state = t->state == QUEUE_BURIED ? QUEUE_BURIED
	                                 : qs_wait_state(q, u->run_at);
	if (u->has_payload &&
	    (nt = repayloaded(q, t, u->payload, u->payload_len)) == NULL)
		return SLUICE_ENOMEM;
	if ((rc = qs_reserve(q, qs_tube_of(q, t), state, false, 0)) != 0) {
		task_free(&q->pool, nt);
		return rc;
	}
	qs_unplace(q, t);
	if (nt != NULL) {
		swap_payload(q, t, nt);
		t = nt;
	}
	t->pri = u->pri;
	t->run_at = u->run_at;
	t->ttr = u->ttr;
	t->max_attempts = u->max_attempts;
	t->updated_at = time;
	qs_place(q, t, state);
	return 0;
}

static int
apply_pause(struct queue *q, const struct qrec_pause *r)
{
	struct tube *tb;
	bool created;
	int rc;

	if ((rc = qs_tube_get(q, r->tube, r->tube_len, &tb, &created)) != 0)
		return rc;
	qs_pause(q, tb, r->until > q->clock ? r->until : 0);
	return 0;
}

static int
apply_tube_delete(
    struct queue *q, int64_t time, const struct qrec_tube_delete *r)
{
	struct tube *tb = qs_tube(q, r->tube, r->tube_len);
	int rc;

	if (tb == NULL || (!r->force && tube_tasks(tb) != 0))
		return SLUICE_ECORRUPT;
	if ((rc = flush_tube(q, tb, time, 0)) != 0)
		return rc;
	qs_tube_remove(q, tb);
	return 0;
}

/* Whether a record of this type changes a tube's takes only by placing
 * tasks (qs_place notes it): the others change what a tube gives
 * (pause, settings, flow and group limits, flushes, deletes by state)
 * and count for every tube: a take answered under a raised limit waits
 * for the record that raised it. */
static bool
places_only(uint16_t type)
{
	switch (type) {
	case QREC_PAUSE:
	case QREC_TUBE_SET:
	case QREC_TUBE_LIMIT:
	case QREC_GROUP_SET:
	case QREC_TUBE_DELETE:
	case QREC_FLUSH:
	case QREC_DELETE_WHERE:
	case QREC_DELETE_AGED:
		return false;
	default:
		return true;
	}
}

int
qs_apply(struct queue *q, uint64_t lsn, int64_t time, const struct qrec *rec,
    bool checked)
{
	int rc;

	if (lsn <= q->lsn || time < 0 || time > QREC_TIME_MAX)
		return SLUICE_ECORRUPT;
	if (q->load.phase != 0 && !q->load.done)
		return SLUICE_ECORRUPT; /* a snapshot is half loaded */
	if (!checked && !qrec_valid(rec))
		return SLUICE_ECORRUPT;
	if ((rc = queue_tick(q, time)) != 0)
		return rc;
	/* a take under a session lease is no dependency: a crash that loses
	 * it ends its session too (core_commit's hard_lsn) */
	q->apply_lsn =
	    (rec->type == QREC_TAKE || rec->type == QREC_TAKE_LEASE) &&
	        !rec->u.take.detached
	    ? 0
	    : lsn;
	batch_hooks_before(q, time, rec); /* outcome.h, deps.h, batch.h */
	switch (rec->type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_G:
		rc = qs_apply_put(q, time, &rec->u.put);
		break;
	case QREC_PUT_T:
		/* The window after the task: a put that fails opens none. */
		if ((rc = qs_apply_put(q, time, &rec->u.put)) == 0)
			rc = qs_throttle_set(q, rec->u.put.tube,
			    rec->u.put.tube_len, rec->u.put.key,
			    rec->u.put.key_len, rec->u.put.id,
			    rec->u.put.throttle_until);
		break;
	case QREC_PUT_X:
		rc = batch_apply_put(q, time, &rec->u.put); /* and deps' */
		break;
	case QREC_PUTS:
		rc = qs_apply_puts(q, time, &rec->u.puts); /* apply_puts.c */
		break;
	case QREC_TAKE:
	case QREC_TAKE_LEASE:
		rc = apply_take(q, lsn, time, &rec->u.take);
		break;
	case QREC_ACK_R:
	case QREC_ACK:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_UNTAKE:
	case QREC_SETBACK:
		rc = apply_end(q, rec->type, time, &rec->u.end);
		break;
	case QREC_CANCEL:
		rc = qs_cancel_apply(q, time, &rec->u.cancel);
		break;
	case QREC_TOUCH:
		rc = apply_touch(q, time, &rec->u.touch);
		break;
	case QREC_KICK:
		rc = apply_kick(q, time, &rec->u.kick);
		break;
	case QREC_DELETE:
		rc = apply_delete(q, time, &rec->u.del);
		break;
	case QREC_FLUSH:
		rc = apply_flush(q, time, &rec->u.flush);
		break;
	case QREC_REPLACE:
	case QREC_REPLACE_V:
		rc = apply_replace(q, time, &rec->u.replace);
		break;
	case QREC_PAUSE:
		rc = apply_pause(q, &rec->u.pause);
		break;
	case QREC_UPDATE:
		rc = apply_update(q, time, &rec->u.update);
		break;
	case QREC_DELETE_WHERE:
	case QREC_DELETE_AGED:
		rc = apply_delete_where(q, time, rec->type, &rec->u.where);
		break;
	case QREC_TUBE_SET:
		rc = qs_apply_tube_set(q, &rec->u.tube_set);
		break;
	case QREC_TUBE_DELETE:
		rc = apply_tube_delete(q, time, &rec->u.tube_delete);
		break;
	case QREC_TUBE_LIMIT:
		rc = qs_apply_tube_limit(q, time, &rec->u.tube_limit);
		break;
	case QREC_GROUP_SET:
		rc = qs_apply_group_set(q, time, &rec->u.group_set);
		break;
	default: /* moves' (move.c), batches', schedules' (sched.c), none */
		rc = move_apply(q, lsn, time, rec);
		break;
	}
	if (rc == 0 && (rc = deps_after(q, rec)) == 0) /* children, batches */
		batch_after(q, rec);
	if (rc == 0 && !places_only(rec->type))
		for (uint32_t i = 0; i < q->ntubes; i++)
			q->tubes[i]->dep_lsn = lsn; /* a tube's state: rare */
	q->apply_lsn = 0;
	qs_outcome_after(q, time, rec, rc);
	if (rc == 0)
		q->lsn = lsn;
	return rc;
}
