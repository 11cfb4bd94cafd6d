/* deps - dependencies between tasks (the design is in deps.h): the side
 * table of nodes, the decision and the apply of a put with parents, and
 * the settling of parents that finish, told to their children in a loop.
 * The snapshot entries, the dump and the checks of the graph are in
 * deps_snap.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/deps.h"
#include "queue/outcome.h"
#include "queue/qstate.h"
#include "sluice.h"

static uint64_t
node_key(const void *item)
{
	return ((const struct dnode *)item)->id;
}

void
deps_init(struct deps *d)
{
	memset(d, 0, sizeof(*d));
	idx_init(&d->nodes, node_key);
}

void
deps_parents_free(struct dnode *n)
{
	if (n->parents != &n->one)
		free(n->parents);
	n->parents = NULL;
}

/* A node of nothing yet (zeroed in place: cheaper than calloc's). */
static struct dnode *
node_new(void)
{
	struct dnode *n = malloc(sizeof(*n));

	if (n != NULL)
		*n = (struct dnode) { 0 };
	return n;
}

static void
node_free(struct dnode *n)
{
	if (n == NULL)
		return;
	deps_parents_free(n);
	if (n->children != &n->first)
		free(n->children);
	free(n->result);
	free(n);
}

void
deps_fini(struct deps *d)
{
	for (uint32_t i = 0; i < d->nodes.cap; i++)
		node_free(idx_at(&d->nodes, i));
	idx_fini(&d->nodes);
	node_free(d->child);
	free(d->scratch);
	free(d->pnode);
	free(d->pout);
	memset(d, 0, sizeof(*d));
}

struct dnode *
deps_node(const struct queue *q, uint64_t id)
{
	return q->deps.nodes.len != 0 ? idx_find(&q->deps.nodes, id) : NULL;
}

/* A little-endian u64 at p, any alignment: one load (the records and
 * messages are little-endian, as is every host sluice runs on; a
 * big-endian one swaps). */
static inline uint64_t
get_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline void
set_le64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, sizeof(v));
}

static inline uint64_t
after_id(const struct qrec_put *p, size_t i)
{
	return get_le64(p->after + 8 * i);
}

uint64_t
deps_after_id(const struct qrec_put *p, size_t i)
{
	return after_id(p, i);
}

/* ---- Decide ----------------------------------------------------------- */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether a put may name `id`: a task the queue holds (or hides: then
 * not), one it remembers for a child, or one that finished (any id it
 * gave out). */
static bool
nameable(const struct queue *q, uint64_t id)
{
	if (id == 0 || id >= q->next_id || (id == q->hidden && id != 0))
		return false;
	return true;
}

int
deps_decide_put(
    struct queue *q, const void *arg, struct qrec_put *p, uint16_t *type)
{
	const struct queue_put_req *req = arg;
	size_t n = req->nafter + req->nafter_keys;
	struct deps *d = &q->deps;
	bool sorted = true;
	uint64_t *ids;

	if (n > QUEUE_AFTER_MAX)
		return SLUICE_ELIMIT;
	if (req->on_parent_failure >= QUEUE_PARENT_END_ ||
	    (req->nafter > 0 && req->after == NULL) ||
	    (req->nafter_keys > 0 && req->after_keys == NULL))
		return SLUICE_EINVAL;
	if (req->replace || req->if_newer != 0 || req->period_ms != 0 ||
	    req->debounce_ms != 0 || req->throttle_ms != 0)
		return SLUICE_EINVAL;
	if (d->scratch_cap < 8 * n) {
		uint8_t *s = realloc(d->scratch, 8 * n);

		if (s == NULL)
			return SLUICE_ENOMEM;
		d->scratch = s;
		d->scratch_cap = 8 * n;
	}
	ids = (uint64_t *)(void *)d->scratch; /* realloc aligns for u64 */
	for (size_t i = 0; i < req->nafter; i++) {
		if (!nameable(q, req->after[i]))
			return SLUICE_ENOTFOUND;
		ids[i] = req->after[i];
		sorted = sorted && (i == 0 || ids[i] > ids[i - 1]);
	}
	for (size_t i = 0; i < req->nafter_keys; i++) {
		const struct queue_str *k = &req->after_keys[i];
		struct keyent *ke;
		struct task *t;

		if (k->len == 0 || k->len > QREC_KEY_MAX || k->p == NULL)
			return SLUICE_EKEY;
		ke = qs_key(q, req->tube, req->tube_len, k->p, k->len);
		t = qs_key_task(q, ke);
		if (t == NULL || !nameable(q, t->id))
			return SLUICE_ENOTFOUND;
		ids[req->nafter + i] = t->id;
		sorted = false;
	}
	/* Clients name them in order (a fan-in's ids as they were put):
	 * sorted already, unique, is the common case. */
	if (!sorted) {
		qsort(ids, n, sizeof(*ids), cmp_u64);
		for (size_t i = 1; i < n; i++)
			if (ids[i] == ids[i - 1])
				return SLUICE_EINVAL; /* a parent named twice */
	}
	for (size_t i = 0; i < n; i++)
		set_le64(d->scratch + 8 * i, ids[i]);
	p->after = d->scratch;
	p->nafter = (uint32_t)n;
	p->on_parent = req->on_parent_failure;
	*type = QREC_PUT_X;
	return 0;
}

/* ---- The outcome of a parent ------------------------------------------ */

/* What a child put now learns of parent `id`: pending while its task is
 * live and not failed, DONE once acked (or forgotten), FAILED when it
 * failed for good (buried, moved to a dead letter, deleted). */
static int
parent_outcome(const struct queue *q, uint64_t id)
{
	struct dnode *n = deps_node(q, id);
	struct task *t;

	if (n != NULL && n->outcome != QUEUE_DEP_PENDING)
		return n->outcome;
	if ((t = qs_task(q, id)) == NULL)
		return n != NULL ? QUEUE_DEP_FAILED : QUEUE_DEP_DONE;
	switch (t->state) {
	case QUEUE_DONE:
		return QUEUE_DEP_DONE;
	case QUEUE_BURIED:
		return QUEUE_DEP_FAILED;
	default:
		return QUEUE_DEP_PENDING;
	}
}

/* The text a failed parent gives its children: its last error, else
 * what became of it: buried, cancelled, deleted. */
static void
failure_text(const struct queue *q, uint64_t id, const char **p, size_t *len)
{
	struct task *t = qs_task(q, id);
	struct dnode *n;

	if (t != NULL && t->ext != NULL && t->ext->error != NULL) {
		*p = t->ext->error;
		*len = t->ext->error_len;
		return;
	}
	if (t != NULL && t->state == QUEUE_BURIED)
		*p = "buried";
	else if (t == NULL && (n = deps_node(q, id)) != NULL &&
	    n->how == QUEUE_END_CANCELLED)
		*p = "cancelled";
	else
		*p = "deleted";
	*len = strlen(*p);
}

/* ---- The settle list -------------------------------------------------- */

static void
todo_push(struct deps *d, struct dnode *n)
{
	if (n->queued || n->nchildren == 0)
		return;
	n->queued = true;
	n->next = NULL;
	if (d->todo_tail != NULL)
		d->todo_tail->next = n;
	else
		d->todo = n;
	d->todo_tail = n;
}

static struct dnode *
todo_pop(struct deps *d)
{
	struct dnode *n = d->todo;

	if (n == NULL)
		return NULL;
	d->todo = n->next;
	if (d->todo == NULL)
		d->todo_tail = NULL;
	n->next = NULL;
	n->queued = false;
	return n;
}

/* A node goes once its task is gone, no live child names it and it has
 * nothing left to tell. */
static void
maybe_drop(struct queue *q, struct dnode *n)
{
	if (!n->gone || n->nlive != 0 || n->queued)
		return;
	idx_remove(&q->deps.nodes, n);
	q->deps.nedges -= n->nparents;
	node_free(n);
}

/* ---- Apply of a put with parents -------------------------------------- */

/* Room for one more child in node n (0 or SLUICE_ENOMEM). */
static int
room_for_child(struct dnode *n)
{
	uint32_t cap;
	uint64_t *c;

	if (n->nchildren < n->children_cap)
		return 0;
	if (n->children_cap == 0) {
		n->children = &n->first; /* the first child: in the node */
		n->children_cap = 1;
		return 0;
	}
	cap = n->children_cap < 2 ? 4 : n->children_cap * 2;
	if (n->children == &n->first) {
		if ((c = malloc(sizeof(*c) * cap)) == NULL)
			return SLUICE_ENOMEM;
		memcpy(c, n->children, sizeof(*c) * n->nchildren);
	} else if ((c = realloc(n->children, sizeof(*c) * cap)) == NULL) {
		return SLUICE_ENOMEM;
	}
	n->children = c;
	n->children_cap = cap;
	return 0;
}

/* Room in the scratch of a put's parents for n of them. */
static int
parents_scratch(struct deps *d, uint32_t n)
{
	struct dnode **pn;
	uint8_t *po;

	if (n <= d->pcap)
		return 0;
	if ((pn = realloc(d->pnode, sizeof(*pn) * n)) == NULL)
		return SLUICE_ENOMEM;
	d->pnode = pn;
	if ((po = realloc(d->pout, n)) == NULL)
		return SLUICE_ENOMEM;
	d->pout = po;
	d->pcap = n;
	return 0;
}

/* Each parent is looked up once, here: its node (made when missing and
 * its task is live) and its outcome go in the scratch, for the commit
 * (the apply of the put between them changes neither: it places the
 * child alone). */
int
deps_put_reserve(struct queue *q, const struct qrec_put *p)
{
	struct deps *d = &q->deps;
	struct dnode *c;
	uint32_t i;
	int rc;

	/* A new id (the put's apply checks it too): no node has it, as a
	 * node is made only for a task put already. */
	if (p->id < q->next_id)
		return SLUICE_ECORRUPT;
	for (i = 0; i < p->nafter; i++)
		if (after_id(p, i) >= q->next_id)
			return SLUICE_ECORRUPT;
	if (parents_scratch(d, p->nafter) != 0 || (c = node_new()) == NULL)
		return SLUICE_ENOMEM;
	c->parents = p->nafter == 1 ? &c->one : malloc(8 * (size_t)p->nafter);
	if (c->parents == NULL ||
	    (rc = idx_reserve(&d->nodes, p->nafter + 1)) != 0) {
		node_free(c);
		return SLUICE_ENOMEM;
	}
	/* Each parent's node with room for the child; those made here are
	 * indexed at once (empty, they change nothing a dump shows, and go
	 * on an undo). */
	for (i = 0; i < p->nafter; i++) {
		uint64_t id = after_id(p, i);
		struct dnode *n = deps_node(q, id);
		struct task *t = NULL;
		int o;

		c->parents[i] = id;
		if (n != NULL && n->outcome != QUEUE_DEP_PENDING) {
			o = n->outcome;
		} else if ((t = qs_task(q, id)) == NULL) {
			o = n != NULL ? QUEUE_DEP_FAILED : QUEUE_DEP_DONE;
		} else {
			o = t->state == QUEUE_DONE     ? QUEUE_DEP_DONE
			    : t->state == QUEUE_BURIED ? QUEUE_DEP_FAILED
			                               : QUEUE_DEP_PENDING;
		}
		d->pout[i] = (uint8_t)o;
		d->pnode[i] = n;
		if (n == NULL && t == NULL)
			continue; /* forgotten: done, nothing to keep */
		if (n == NULL) {
			if ((n = node_new()) == NULL) {
				rc = SLUICE_ENOMEM;
				goto fail;
			}
			n->id = id; /* its task is live: not gone */
			if ((rc = room_for_child(n)) != 0) {
				node_free(n);
				goto fail;
			}
			idx_insert(&d->nodes, n);
			d->pnode[i] = n;
		} else if ((rc = room_for_child(n)) != 0) {
			goto fail;
		}
	}
	c->id = p->id;
	c->nparents = p->nafter;
	c->on_parent = p->on_parent;
	d->child = c;
	return 0;

fail:
	d->child = c;
	c->nparents = i; /* undo looks at these */
	deps_put_undo(q);
	return rc;
}

void
deps_put_undo(struct queue *q)
{
	struct dnode *c = q->deps.child;

	if (c == NULL)
		return;
	for (uint32_t i = 0; i < c->nparents; i++) {
		struct dnode *n = deps_node(q, c->parents[i]);

		/* a node made for this put: no child, no outcome */
		if (n != NULL && n->nchildren == 0 &&
		    n->outcome == QUEUE_DEP_PENDING && n->nparents == 0 &&
		    !n->queued) {
			idx_remove(&q->deps.nodes, n);
			node_free(n);
		}
	}
	node_free(c);
	q->deps.child = NULL;
}

void
deps_put_commit(struct queue *q, const struct qrec_put *p)
{
	struct deps *d = &q->deps;
	struct dnode *c = d->child;

	(void)p;
	d->child = NULL;
	d->recheck_failed = false;
	for (uint32_t i = 0; i < c->nparents; i++) {
		struct dnode *n = d->pnode[i];
		uint8_t o = d->pout[i];

		d->recheck_failed |= o == QUEUE_DEP_FAILED;
		if (n != NULL) {
			/* A node made for this put takes the outcome its
			 * parent already has (buried, done). */
			if (n->outcome == QUEUE_DEP_PENDING)
				n->outcome = o;
			n->children[n->nchildren++] = c->id;
			n->nlive++;
		}
		if (o == QUEUE_DEP_PENDING)
			c->pending++;
	}
	idx_insert(&d->nodes, c);
	d->nedges += c->nparents;
	d->recheck = c->id; /* deps_after decides it if it can be now */
}

int
deps_apply_put(struct queue *q, int64_t time, const struct qrec_put *p)
{
	int rc;

	if ((rc = deps_put_reserve(q, p)) != 0)
		return rc;
	if ((rc = qs_apply_put(q, time, p)) != 0) {
		deps_put_undo(q);
		return rc;
	}
	deps_put_commit(q, p);
	return 0;
}

/* ---- Settling --------------------------------------------------------- */

void
deps_ack_result(
    const struct queue *q, const char *res, size_t len, struct qrec *out)
{
	struct dnode *n;

	if (out->type != QREC_ACK || len == 0 ||
	    (out->u.end.outcome != QREC_DELETED &&
	        out->u.end.outcome != QREC_MOVED))
		return;
	n = deps_node(q, out->u.end.id);
	if (n == NULL || n->nlive == 0 || n->outcome != QUEUE_DEP_PENDING)
		return;
	out->type = QREC_ACK_R;
	out->u.end.result = res;
	out->u.end.result_len = len;
}

void
deps_before(struct queue *q, const struct qrec *rec)
{
	const struct qrec_end *e = &rec->u.end;
	struct deps *d = &q->deps;

	d->acking = 0;
	d->ack_text = NULL;
	d->ack_text_len = 0;
	if ((rec->type == QREC_ACK || rec->type == QREC_ACK_R) &&
	    (e->outcome == QREC_DELETED || e->outcome == QREC_DONE ||
	        e->outcome == QREC_MOVED)) {
		d->acking = e->id;
		if (rec->type == QREC_ACK_R) {
			d->ack_text = e->result;
			d->ack_text_len = e->result_len;
		} else if (e->outcome == QREC_DONE) {
			d->ack_text = e->text;
			d->ack_text_len = e->text_len;
		}
	}
}

/* Parent n is acked: keeps a copy of its result while a child may want
 * it (a copy that cannot be made leaves the children without it). */
static void
settle_done(struct queue *q, struct dnode *n, const char *res, size_t len)
{
	n->outcome = QUEUE_DEP_DONE;
	if (len > 0 && n->nlive > 0 && n->result == NULL &&
	    (n->result = malloc(len)) != NULL) {
		memcpy(n->result, res, len);
		n->result_len = (uint32_t)len;
	}
	todo_push(&q->deps, n);
}

void
deps_task_gone(struct queue *q, struct task *t, int how)
{
	struct deps *d = &q->deps;
	struct dnode *n = deps_node(q, t->id);

	if (n == NULL)
		return;
	n->gone = true;
	if (n->outcome == QUEUE_DEP_PENDING) {
		if (t->id == d->acking) {
			settle_done(q, n, d->ack_text, d->ack_text_len);
		} else {
			n->outcome = QUEUE_DEP_FAILED;
			n->how = (uint8_t)how;
			todo_push(d, n);
		}
	} else if (n->outcome == QUEUE_DEP_DONE && n->result == NULL &&
	    n->nlive > 0 && t->ext != NULL && t->ext->result != NULL) {
		/* a done task purged: its children keep its result */
		if ((n->result = malloc(t->ext->result_len)) != NULL) {
			memcpy(n->result, t->ext->result, t->ext->result_len);
			n->result_len = t->ext->result_len;
		}
	}
	/* Its parents keep their results for one live child less. */
	for (uint32_t i = 0; i < n->nparents; i++) {
		struct dnode *p = deps_node(q, n->parents[i]);

		if (p != NULL && p->nlive > 0) {
			p->nlive--;
			maybe_drop(q, p);
		}
	}
	d->nedges -= n->nparents;
	deps_parents_free(n);
	n->nparents = 0;
	n->pending = 0;
	maybe_drop(q, n);
}

/* Waiting task t has no parent left to wait for: ready, or delayed
 * until its run_at; a ready task's run_at is when it became ready. */
static int
release(struct queue *q, struct task *t)
{
	int state;
	int rc;

	if (t->run_at < q->clock)
		t->run_at = q->clock;
	state = qs_wait_state(q, t->run_at);
	if ((rc = qs_reserve(q, qs_tube_of(q, t), state, false, 0)) != 0)
		return rc;
	qs_unplace(q, t);
	t->updated_at = q->clock;
	qs_place(q, t, state);
	return 0;
}

/* Waiting task t is buried because parent `pid` failed, with "task N
 * failed: ERROR" as its last error; then it has failed for good too. */
static int
bury_child(struct queue *q, struct task *t, struct dnode *c, uint64_t pid)
{
	const char *why;
	size_t why_len, n;
	char *msg;
	int rc;

	failure_text(q, pid, &why, &why_len);
	if ((rc = task_ext_need(t)) != 0 ||
	    (rc = qs_reserve(q, qs_tube_of(q, t), QUEUE_BURIED, false, 0)) != 0)
		return rc;
	n = 32 + why_len;
	if (n > QREC_ERROR_MAX)
		n = QREC_ERROR_MAX;
	if ((msg = malloc(n)) == NULL)
		return SLUICE_ENOMEM;
	n = (size_t)snprintf(msg, n, "task %" PRIu64 " failed: ", pid);
	if (n + why_len > QREC_ERROR_MAX - 1)
		why_len = QREC_ERROR_MAX - 1 - n;
	memcpy(msg + n, why, why_len);
	task_put_error(t, msg, n + why_len);
	qs_unplace(q, t);
	t->updated_at = q->clock;
	qs_place(q, t, QUEUE_BURIED);
	QS_COUNT(q, qs_tube_of(q, t), bury);
	qs_outcome_final(q, t->id); /* final where it is: waiters are told */
	c->outcome = QUEUE_DEP_FAILED;
	todo_push(&q->deps, c);
	return 0;
}

/* Tells child `cid` that parent p finished (p->outcome). */
static int
tell_child(struct queue *q, struct dnode *p, uint64_t cid)
{
	struct dnode *c = deps_node(q, cid);
	struct task *t;

	if (c == NULL || c->gone || c->pending == 0)
		return 0;
	c->pending--;
	if (p->outcome != QUEUE_DEP_FAILED && c->pending != 0)
		return 0; /* waits on: its task is not looked at */
	t = qs_task(q, cid);
	if (t == NULL || t->state != QUEUE_WAITING)
		return 0; /* decided already */
	if (p->outcome == QUEUE_DEP_FAILED) {
		switch (c->on_parent) {
		case QUEUE_PARENT_FAIL:
			return bury_child(q, t, c, p->id);
		case QUEUE_PARENT_CANCEL:
			QS_COUNT(q, qs_tube_of(q, t), del);
			qs_cancel_child(q, t, q->clock); /* settles c */
			return 0;
		default:
			break; /* ignore: as if acked */
		}
	}
	return c->pending == 0 ? release(q, t) : 0;
}

/* The put of child c, just applied: decided at once when a parent has
 * failed already (its rule) or none is pending. */
static int
recheck(struct queue *q, struct dnode *c, bool failed)
{
	struct task *t;
	struct dnode tmp;

	if (!failed && c->pending != 0)
		return 0; /* it waits: nothing to decide */
	t = qs_task(q, c->id);
	if (t == NULL || t->state != QUEUE_WAITING)
		return 0;
	for (uint32_t i = 0; failed && i < c->nparents; i++) {
		if (parent_outcome(q, c->parents[i]) != QUEUE_DEP_FAILED)
			continue;
		if (c->on_parent == QUEUE_PARENT_IGNORE)
			continue;
		/* as if this parent failed now: it is not pending */
		memset(&tmp, 0, sizeof(tmp));
		tmp.id = c->parents[i];
		tmp.outcome = QUEUE_DEP_FAILED;
		c->pending++;
		return tell_child(q, &tmp, c->id);
	}
	return c->pending == 0 ? release(q, t) : 0;
}

int
deps_after(struct queue *q, const struct qrec *rec)
{
	struct deps *d = &q->deps;
	const struct qrec_end *e = &rec->u.end;
	struct dnode *n;
	int rc = 0;

	d->acking = 0;
	d->ack_text = NULL;
	d->ack_text_len = 0;
	if (d->nodes.len == 0)
		return 0;
	switch (rec->type) {
	case QREC_ACK:
	case QREC_ACK_R:
		/* (a task deleted by its ack was settled as it went) */
		if (e->outcome != QREC_DONE && e->outcome != QREC_MOVED)
			break;
		n = deps_node(q, e->id);
		if (n != NULL && n->outcome == QUEUE_DEP_PENDING)
			settle_done(q, n,
			    rec->type == QREC_ACK_R       ? e->result
			        : e->outcome == QREC_DONE ? e->text
			                                  : NULL,
			    rec->type == QREC_ACK_R       ? e->result_len
			        : e->outcome == QREC_DONE ? e->text_len
			                                  : 0);
		break;
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_SETBACK:
		n = deps_node(q, e->id);
		if (n != NULL && n->outcome == QUEUE_DEP_PENDING &&
		    (e->outcome == QREC_BURIED || e->outcome == QREC_MOVED)) {
			n->outcome = QUEUE_DEP_FAILED;
			todo_push(d, n);
		}
		break;
	case QREC_PUT_X:
		if ((n = deps_node(q, d->recheck)) != NULL)
			rc = recheck(q, n, d->recheck_failed);
		d->recheck = 0;
		d->recheck_failed = false;
		break;
	default:
		break;
	}
	/* Tell the children of each settled node, breadth first: a child
	 * that fails in turn goes to the back of the list. */
	while (rc == 0 && (n = todo_pop(d)) != NULL) {
		n->queued = true; /* kept while its children are told */
		for (uint32_t i = 0; rc == 0 && i < n->nchildren; i++)
			rc = tell_child(q, n, n->children[i]);
		n->queued = false;
		maybe_drop(q, n);
	}
	return rc;
}

/* ---- Queries ---------------------------------------------------------- */

int
queue_task_deps(struct queue *q, uint64_t id, struct queue_task_deps *out)
{
	struct dnode *n = deps_node(q, id);

	memset(out, 0, sizeof(*out));
	if (id == q->hidden && id != 0)
		return SLUICE_ENOTFOUND;
	if (n == NULL)
		return qs_task(q, id) != NULL ? 0 : SLUICE_ENOTFOUND;
	out->parents = n->parents;
	out->nparents = n->nparents;
	out->pending = n->pending;
	out->on_parent = n->on_parent;
	out->children = n->children;
	out->nchildren = n->nchildren;
	return 0;
}

void
queue_dep_result(struct queue *q, uint64_t id, int *outcome,
    const char **result, size_t *len)
{
	struct dnode *n = deps_node(q, id);
	struct task *t = NULL;

	*result = NULL;
	*len = 0;
	/* parent_outcome's answer, each lookup made once */
	if (n != NULL && n->outcome != QUEUE_DEP_PENDING) {
		*outcome = n->outcome;
		if (n->result != NULL) {
			*result = n->result;
			*len = n->result_len;
			return;
		}
		if (n->gone)
			return; /* no task to read a result from */
		t = qs_task(q, id);
	} else if ((t = qs_task(q, id)) == NULL) {
		*outcome = n != NULL ? QUEUE_DEP_FAILED : QUEUE_DEP_DONE;
		if (n != NULL && n->result != NULL) {
			*result = n->result;
			*len = n->result_len;
		}
		return;
	} else {
		*outcome = t->state == QUEUE_DONE ? QUEUE_DEP_DONE
		    : t->state == QUEUE_BURIED    ? QUEUE_DEP_FAILED
		                                  : QUEUE_DEP_PENDING;
		if (n != NULL && n->result != NULL) {
			*result = n->result;
			*len = n->result_len;
			return;
		}
	}
	if (t != NULL && t->state == QUEUE_DONE && t->ext != NULL &&
	    t->ext->result != NULL) {
		*result = t->ext->result;
		*len = t->ext->result_len;
	}
}
