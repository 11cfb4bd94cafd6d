/* query - stats, peek, list and errors: read-only views of the state
 * (each first catches up with `now`, as decide does).
 *
 * Stats are O(1) per tube: the counts are heap lengths and counters kept
 * up to date by qs_place/qs_unplace, and the oldest ready task is the top
 * of the tube's age heap. list and errors are admin requests that visit
 * every task of one tube (taken tasks through the queue's lease heap). */
#include <stdlib.h>
#include <string.h>

#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/hourly.h"
#include "queue/qstate.h"
#include "sluice.h"

static int
catch_up(struct queue *q, int64_t now)
{
	if (now < 0 || now > QREC_TIME_MAX)
		return SLUICE_EINVAL;
	return queue_tick(q, now);
}

int
queue_peek(
    struct queue *q, int64_t now, uint64_t id, struct queue_task_view *out)
{
	struct task *t;
	int rc;

	if ((rc = catch_up(q, now)) != 0)
		return rc;
	if ((t = qs_task_seen(q, id)) == NULL)
		return SLUICE_ENOTFOUND;
	qs_view(q, t, out);
	return 0;
}

int
queue_peek_key(struct queue *q, int64_t now, const char *tube, size_t tube_len,
    const char *key, size_t key_len, struct queue_task_view *out)
{
	struct keyent *ke;
	struct task *t;
	int rc;

	if ((rc = catch_up(q, now)) != 0)
		return rc;
	if (key_len == 0 || key_len > QREC_KEY_MAX || key == NULL)
		return SLUICE_EKEY;
	if (!qrec_tube_valid(tube, tube_len))
		return SLUICE_ETUBE;
	/* A live task, or a done one while its key is reserved. */
	ke = qs_key(q, tube, tube_len, key, key_len);
	if ((t = qs_key_task(q, ke)) == NULL ||
	    (ke->task == NULL && ke->expires <= q->clock))
		return SLUICE_ENOTFOUND;
	qs_view(q, t, out);
	return 0;
}

int
queue_peek_next(struct queue *q, int64_t now, const char *tube, size_t tube_len,
    int state, struct queue_task_view *out)
{
	struct tube *tb;
	struct task *t = NULL;
	int rc;

	if ((rc = catch_up(q, now)) != 0)
		return rc;
	if (!qrec_tube_valid(tube, tube_len))
		return SLUICE_ETUBE;
	if (state != QUEUE_READY && state != QUEUE_DELAYED &&
	    state != QUEUE_BURIED && state != QUEUE_DONE &&
	    state != QUEUE_WAITING)
		return SLUICE_EINVAL;
	if ((tb = qs_tube(q, tube, tube_len)) == NULL)
		return SLUICE_ENOTFOUND;
	if (state == QUEUE_READY)
		t = tb->groups == NULL ? heap_top(&tb->ready)
		                       : groups_top(tb->groups);
	else if (state == QUEUE_DELAYED)
		t = heap_top(&tb->delayed);
	else if (state == QUEUE_BURIED)
		t = heap_top(&tb->buried);
	else if (state == QUEUE_WAITING)
		t = heap_top(&tb->waiting); /* the lowest id */
	else
		t = heap_top(&tb->done);
	if (t == NULL)
		return SLUICE_ENOTFOUND;
	qs_view(q, t, out);
	return 0;
}

/* Calls fn on every task of tb in `state` (QUEUE_ANY: all). */
static void
visit(const struct queue *q, const struct tube *tb, int state,
    void (*fn)(struct task *, void *), void *arg)
{
	const struct heap *hs[5] = { &tb->age, &tb->delayed, &tb->buried,
		&tb->done, &tb->waiting };
	const int st[5] = { QUEUE_READY, QUEUE_DELAYED, QUEUE_BURIED,
		QUEUE_DONE, QUEUE_WAITING };

	for (int h = 0; h < 5; h++) {
		if (state != QUEUE_ANY && state != st[h])
			continue;
		for (uint32_t i = 0; i < hs[h]->len; i++)
			fn(hs[h]->item[i], arg);
	}
	if (state != QUEUE_ANY && state != QUEUE_TAKEN)
		return;
	if (tb->ntaken == 0)
		return;
	for (uint32_t i = 0; i < q->taken.len; i++) {
		struct task *t = q->taken.item[i];

		if (qs_tube_of(q, t) == tb)
			fn(t, arg);
	}
}

/* ---- list: the first `limit` tasks in an order ------------------------ */

/* A bounded selection: a max-heap (by `order`) of the best k so far. */
struct pick {
	struct task **t;
	size_t len;
	size_t k;
	int order;
	uint64_t after; /* a cursor: ids up to it are skipped */
};

/* True when a comes before b in the list. */
static bool
before(int order, const struct task *a, const struct task *b)
{
	switch (order) {
	case QUEUE_BY_ATTEMPTS:
		if (a->attempts != b->attempts)
			return a->attempts > b->attempts;
		break;
	case QUEUE_BY_AGE:
		if (a->created_at != b->created_at)
			return a->created_at < b->created_at;
		break;
	case QUEUE_BY_ID:
		break;
	default:
		if (a->run_at != b->run_at)
			return a->run_at < b->run_at;
		break;
	}
	return a->id < b->id;
}

static void
pick_down(struct pick *p, size_t i)
{
	struct task *x = p->t[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= p->len)
			break;
		if (c + 1 < p->len && before(p->order, p->t[c], p->t[c + 1]))
			c++;
		if (!before(p->order, x, p->t[c]))
			break;
		p->t[i] = p->t[c];
		i = c;
	}
	p->t[i] = x;
}

static void
pick_one(struct task *t, void *arg)
{
	struct pick *p = arg;
	size_t i;

	if (t->id <= p->after)
		return;
	if (p->len < p->k) {
		/* Sift up: the root is the last in order. */
		i = p->len++;
		while (i > 0 && before(p->order, p->t[(i - 1) / 2], t)) {
			p->t[i] = p->t[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		p->t[i] = t;
	} else if (before(p->order, t, p->t[0])) {
		p->t[0] = t;
		pick_down(p, 0);
	}
}

int
queue_list(struct queue *q, int64_t now, const struct queue_list_req *req,
    struct queue_task_view *out, size_t *n)
{
	struct pick p;
	struct tube *tb;
	uint64_t count;
	int rc;

	if ((rc = catch_up(q, now)) != 0)
		return rc;
	if (!qrec_tube_valid(req->tube, req->tube_len))
		return SLUICE_ETUBE;
	if (req->state < QUEUE_ANY || req->state >= QUEUE_STATE_END_ ||
	    req->order < 0 || req->order >= QUEUE_ORDER_END_)
		return SLUICE_EINVAL;
	tb = qs_tube(q, req->tube, req->tube_len);
	count = tb ? tube_tasks(tb) : 0;
	p.k = req->limit < count ? req->limit : (size_t)count;
	if (p.k == 0) {
		*n = 0;
		return 0;
	}
	p.t = malloc(p.k * sizeof(*p.t));
	if (p.t == NULL)
		return SLUICE_ENOMEM;
	p.len = 0;
	p.order = req->order;
	p.after = req->after;
	visit(q, tb, req->state, pick_one, &p);
	/* Pop the max-heap from the back: out[] ends up in order. */
	*n = p.len;
	while (p.len > 0) {
		struct task *last = p.t[0];

		p.t[0] = p.t[--p.len];
		if (p.len > 0)
			pick_down(&p, 0);
		qs_view(q, last, &out[p.len]);
	}
	free(p.t);
	return 0;
}

/* ---- errors: counts by last_error ------------------------------------ */

struct errs {
	struct task **t;
	size_t len;
};

/* A live task's last error: a done task keeps its own (peek shows how
 * its attempts went) but is no longer failing. */
static void
err_one(struct task *t, void *arg)
{
	struct errs *e = arg;

	if (t->state != QUEUE_DONE && t->ext != NULL && t->ext->error != NULL)
		e->t[e->len++] = t;
}

static int
cmp_text(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen;
}

static int
by_error(const void *a, const void *b)
{
	const struct task *x = *(struct task *const *)a;
	const struct task *y = *(struct task *const *)b;
	int c = cmp_text(
	    x->ext->error, x->ext->error_len, y->ext->error, y->ext->error_len);

	if (c != 0)
		return c;
	return x->id < y->id ? -1 : x->id > y->id; /* examples: lowest ids */
}

static int
by_count(const void *a, const void *b)
{
	const struct queue_error_group *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return cmp_text(x->text, x->text_len, y->text, y->text_len);
}

int
queue_errors(struct queue *q, int64_t now, const char *tube, size_t tube_len,
    int state, struct queue_error_group *out, size_t max, size_t *n)
{
	struct queue_error_group *g;
	struct errs e;
	struct tube *tb;
	size_t ng = 0, total;
	int rc;

	if ((rc = catch_up(q, now)) != 0)
		return rc;
	if (!qrec_tube_valid(tube, tube_len))
		return SLUICE_ETUBE;
	if (state != QUEUE_ANY && state != QUEUE_READY &&
	    state != QUEUE_DELAYED && state != QUEUE_TAKEN &&
	    state != QUEUE_BURIED)
		return SLUICE_EINVAL;
	tb = qs_tube(q, tube, tube_len);
	total = tb ? (size_t)tube_tasks(tb) : 0;
	if (total == 0) {
		*n = 0;
		return 0;
	}
	e.t = malloc(total * sizeof(*e.t));
	g = malloc(total * sizeof(*g));
	if (e.t == NULL || g == NULL) {
		free(e.t);
		free(g);
		return SLUICE_ENOMEM;
	}
	e.len = 0;
	visit(q, tb, state, err_one, &e);
	qsort(e.t, e.len, sizeof(*e.t), by_error);
	for (size_t i = 0; i < e.len; i++) {
		const struct task_ext *x = e.t[i]->ext;

		if (ng > 0 &&
		    cmp_text(g[ng - 1].text, g[ng - 1].text_len, x->error,
		        x->error_len) == 0) {
			g[ng - 1].count++;
			if (g[ng - 1].nids < QUEUE_ERROR_IDS)
				g[ng - 1].ids[g[ng - 1].nids++] = e.t[i]->id;
			continue;
		}
		g[ng].text = x->error;
		g[ng].text_len = x->error_len;
		g[ng].count = 1;
		g[ng].ids[0] = e.t[i]->id;
		g[ng].nids = 1;
		ng++;
	}
	qsort(g, ng, sizeof(*g), by_count);
	*n = ng < max ? ng : max;
	if (*n > 0)
		memcpy(out, g, *n * sizeof(*g));
	free(e.t);
	free(g);
	return 0;
}

/* ---- stats ------------------------------------------------------------ */

int
queue_stats(struct queue *q, int64_t now, struct queue_stats *out)
{
	int rc;

	if ((rc = catch_up(q, now)) != 0)
		return rc;
	memset(out, 0, sizeof(*out));
	out->ready = q->count[QUEUE_READY];
	out->delayed = q->count[QUEUE_DELAYED];
	out->taken = q->count[QUEUE_TAKEN];
	out->buried = q->count[QUEUE_BURIED];
	out->done = q->count[QUEUE_DONE];
	out->waiting = q->count[QUEUE_WAITING];
	out->tasks = q->ntasks;
	out->tubes = q->ntubes;
	out->keys = q->nkeys;
	out->dedup = q->ndedup;
	out->next_id = q->next_id;
	out->lsn = q->lsn;
	out->clock = q->clock;
	out->ctr = q->ctr;
	return 0;
}

void
queue_live_counts(const struct queue *q, uint64_t out[4])
{
	out[0] = q->count[QUEUE_READY];
	out[1] = q->count[QUEUE_DELAYED];
	out[2] = q->count[QUEUE_TAKEN];
	out[3] = q->count[QUEUE_BURIED];
}

bool
queue_session_holds(const struct queue *q, uint64_t session)
{
	return idx_find(&q->sessions, session) != NULL;
}

uint32_t
queue_tube_count(const struct queue *q)
{
	return q->ntubes;
}

static void
tube_stats(
    const struct queue *q, const struct tube *tb, struct queue_tube_stats *out)
{
	const struct task *oldest = heap_top(&tb->age);

	memset(out, 0, sizeof(*out));
	out->name = tb->name;
	out->name_len = tb->name_len;
	out->index = tb->index;
	out->ready = tube_nready(tb);
	out->delayed = tb->delayed.len;
	out->taken = tb->ntaken;
	out->buried = tb->buried.len;
	out->done = tb->done.len;
	out->waiting = tb->waiting.len;
	out->paused_until = tb->paused_until;
	out->settings = tb->conf != NULL ? tb->conf->v.set : 0;
	if (tb->groups != NULL) {
		out->groups = tb->groups->n;
		/* held groups (glimit.h) have ready tasks too */
		out->groups_ready =
		    tb->groups->rotation.len + glimit_held_count(tb->groups);
	}
	if (oldest != NULL && q->clock > oldest->run_at)
		out->oldest_ready_age = q->clock - oldest->run_at;
	out->ctr = tb->ctr;
}

int
queue_tube_stats_at(
    struct queue *q, int64_t now, uint32_t i, struct queue_tube_stats *out)
{
	int rc;

	if ((rc = catch_up(q, now)) != 0)
		return rc;
	if (i >= q->ntubes)
		return SLUICE_ENOTFOUND;
	tube_stats(q, q->tubes[i], out);
	return 0;
}

int
queue_tube_stats(struct queue *q, int64_t now, const char *name,
    size_t name_len, struct queue_tube_stats *out)
{
	struct tube *tb;
	int rc;

	if ((rc = catch_up(q, now)) != 0)
		return rc;
	if (!qrec_tube_valid(name, name_len))
		return SLUICE_ETUBE;
	if ((tb = qs_tube(q, name, name_len)) == NULL)
		return SLUICE_ENOTFOUND;
	tube_stats(q, tb, out);
	return 0;
}

int
queue_hourly(struct queue *q, int64_t now, const char *tube, size_t tube_len,
    struct queue_hour out[QUEUE_HOURS], size_t *n)
{
	struct tube *tb = NULL;
	int rc;

	if ((rc = catch_up(q, now)) != 0)
		return rc;
	if (tube_len > 0) {
		if (!qrec_tube_valid(tube, tube_len))
			return SLUICE_ETUBE;
		if ((tb = qs_tube(q, tube, tube_len)) == NULL)
			return SLUICE_ENOTFOUND;
	}
	return hourly_collect(q, tb, out, n);
}

/* The last write the task's tube depends on (its tube's dep_lsn; the
 * queue's last LSN for a task it does not have). */
uint64_t
queue_task_dep_lsn(const struct queue *q, uint64_t id)
{
	const struct task *t = qs_task(q, id);

	return t != NULL ? qs_tube_of(q, t)->dep_lsn : q->lsn;
}
