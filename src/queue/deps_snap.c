/* deps_snap - the dependency graph (deps.h) in snapshots, dumps and the
 * checks of queue_check.
 *
 * Entries, after the THROTTLE entries and before END, one set per node
 * in the order of the node table:
 *   DEP   u64 id, u8 on_parent_failure, u8 outcome, u8 gone, u32 pending,
 *         u32 nlive, u32 nchildren, u32 nparents, nparents x u64 parent
 *         ids, then the kept result (the rest of the entry; may be empty)
 *   DEPC  u64 id (the DEP's), then 1..DEPC_IDS u64 child ids: the
 *         children, in order, until the DEP's nchildren have come
 * Loading checks each field; END checks the whole graph (deps_check). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/deps.h"
#include "queue/qstate.h"
#include "sluice.h"

enum { DEPC_IDS = 1024, DEP_HDR = 8 + 3 + 4 * 4 };

static void
le64(uint8_t *p, uint64_t v)
{
	for (int b = 0; b < 8; b++, v >>= 8)
		p[b] = (uint8_t)v;
}

static void
le32(uint8_t *p, uint32_t v)
{
	for (int b = 0; b < 4; b++, v >>= 8)
		p[b] = (uint8_t)v;
}

static int
emit_node(const struct dnode *n, queue_emit_fn *emit, void *arg)
{
	uint8_t mem[DEP_HDR + 8 * QREC_AFTER_MAX + 8];
	uint8_t *p = mem;
	int rc;

	le64(p, n->id);
	p[8] = n->on_parent;
	p[9] = n->outcome;
	p[10] = n->gone ? 1 : 0;
	le32(p + 11, n->pending);
	le32(p + 15, n->nlive);
	le32(p + 19, n->nchildren);
	le32(p + 23, n->nparents);
	for (uint32_t i = 0; i < n->nparents; i++)
		le64(mem + DEP_HDR + 8 * i, n->parents[i]);
	rc = emit(arg, QSNAP_DEP, mem, DEP_HDR + 8 * (size_t)n->nparents,
	    n->result, n->result_len);
	for (uint32_t i = 0; rc == 0 && i < n->nchildren; i += DEPC_IDS) {
		uint32_t k =
		    n->nchildren - i < DEPC_IDS ? n->nchildren - i : DEPC_IDS;
		uint8_t ids[8 + 8 * DEPC_IDS];

		le64(ids, n->id);
		for (uint32_t j = 0; j < k; j++)
			le64(ids + 8 + 8 * j, n->children[i + j]);
		rc = emit(arg, QSNAP_DEPC, ids, 8 + 8 * (size_t)k, NULL, 0);
	}
	return rc;
}

int
deps_snapshot_write(const struct queue *q, queue_emit_fn *emit, void *arg)
{
	for (uint32_t i = 0; i < q->deps.nodes.cap; i++) {
		const struct dnode *n = idx_at(&q->deps.nodes, i);
		int rc;

		if (n != NULL && (rc = emit_node(n, emit, arg)) != 0)
			return rc;
	}
	return 0;
}

int
deps_snapshot_load(struct queue *q, uint16_t type, struct rd *r)
{
	struct qsnap_load *l = &q->load;
	struct dnode *n;
	uint64_t id = rd_u64(r);

	if (type == QSNAP_DEPC) {
		size_t k = rd_left(r) / 8;

		n = l->dep;
		if (rd_failed(r) || n == NULL || n->id != id || k == 0 ||
		    rd_left(r) % 8 != 0 || k > l->dep_left)
			return SLUICE_ECORRUPT;
		for (size_t j = 0; j < k; j++) {
			uint64_t c = rd_u64(r);

			if (c == 0 || c >= q->next_id || c <= id)
				return SLUICE_ECORRUPT;
			n->children[n->nchildren++] = c;
		}
		l->dep_left -= (uint32_t)k;
		return 0;
	}
	if (rd_failed(r) || rd_left(r) < DEP_HDR - 8 || id == 0 ||
	    id >= q->next_id || deps_node(q, id) != NULL)
		return SLUICE_ECORRUPT;
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return SLUICE_ENOMEM;
	n->id = id;
	n->on_parent = rd_u8(r);
	n->outcome = rd_u8(r);
	n->gone = rd_u8(r) != 0;
	n->pending = rd_u32(r);
	n->nlive = rd_u32(r);
	n->children_cap = rd_u32(r);
	n->nparents = rd_u32(r);
	if (n->on_parent >= QUEUE_PARENT_END_ || n->outcome > 2 ||
	    n->nparents > QREC_AFTER_MAX ||
	    rd_left(r) < 8 * (size_t)n->nparents ||
	    n->gone != (qs_task(q, id) == NULL) ||
	    (n->gone && n->nparents != 0) || n->nlive > n->children_cap ||
	    n->pending > n->nparents)
		goto corrupt;
	if (n->nparents == 1)
		n->parents = &n->one;
	else if (n->nparents > 0 &&
	    (n->parents = malloc(8 * (size_t)n->nparents)) == NULL)
		goto nomem;
	for (uint32_t i = 0; i < n->nparents; i++)
		if ((n->parents[i] = rd_u64(r)) == 0 || n->parents[i] >= id ||
		    (i > 0 && n->parents[i] <= n->parents[i - 1]))
			goto corrupt;
	n->result_len = (uint32_t)rd_left(r);
	if (n->result_len > QREC_RESULT_MAX)
		goto corrupt;
	if (n->result_len > 0) {
		if ((n->result = malloc(n->result_len)) == NULL)
			goto nomem;
		memcpy(n->result, rd_bytes(r, n->result_len), n->result_len);
	}
	if (n->children_cap == 1)
		n->children = &n->first; /* in the node, as deps.c keeps it */
	else if (n->children_cap > 0 &&
	    (n->children = malloc(8 * (size_t)n->children_cap)) == NULL)
		goto nomem;
	if (idx_reserve(&q->deps.nodes, 1) != 0)
		goto nomem;
	idx_insert(&q->deps.nodes, n);
	q->deps.nedges += n->nparents;
	l->dep = n;
	l->dep_left = n->children_cap;
	return 0;
corrupt:
	deps_parents_free(n);
	free(n->result);
	free(n);
	return SLUICE_ECORRUPT;
nomem:
	deps_parents_free(n);
	free(n->result);
	if (n->children != &n->first)
		free(n->children);
	free(n);
	return SLUICE_ENOMEM;
}

/* ---- Checks ----------------------------------------------------------- */

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			if (why != NULL)                                       \
				*why = "deps: " #cond;                         \
			return SLUICE_ECORRUPT;                                \
		}                                                              \
	} while (0)

static bool
names(const struct dnode *c, uint64_t pid)
{
	for (uint32_t i = 0; i < c->nparents; i++)
		if (c->parents[i] == pid)
			return true;
	return false;
}

/* What a child's pending counts: its parent p is not finished. */
static bool
pending_parent(const struct queue *q, uint64_t pid)
{
	const struct dnode *p = deps_node(q, pid);
	const struct task *t = qs_task(q, pid);

	if (p != NULL && p->outcome != QUEUE_DEP_PENDING)
		return false;
	return t != NULL && t->state != QUEUE_DONE && t->state != QUEUE_BURIED;
}

int
deps_check(const struct queue *q, const char **why)
{
	uint64_t nodes = 0, edges = 0, waiting = 0;

	for (uint32_t i = 0; i < q->deps.nodes.cap; i++) {
		const struct dnode *n = idx_at(&q->deps.nodes, i);
		const struct task *t;
		uint32_t live = 0, pend = 0;

		if (n == NULL)
			continue;
		nodes++;
		t = qs_task(q, n->id);
		CHECK(n->id >= 1 && n->id < q->next_id);
		CHECK(n->gone == (t == NULL));
		CHECK(!n->queued && n->next == NULL);
		CHECK(n->on_parent < QUEUE_PARENT_END_ && n->outcome <= 2);
		CHECK(n->nchildren <= n->children_cap);
		CHECK(!n->gone || n->nparents == 0);
		CHECK(!n->gone || n->nlive > 0); /* else it would go */
		CHECK(n->outcome != QUEUE_DEP_PENDING || !n->gone);
		CHECK(n->result == NULL || n->outcome == QUEUE_DEP_DONE);
		edges += n->nparents;
		for (uint32_t j = 0; j < n->nparents; j++) {
			CHECK(n->parents[j] < n->id);
			pend += pending_parent(q, n->parents[j]);
		}
		CHECK(n->pending == pend);
		CHECK(t == NULL || t->state != QUEUE_WAITING ||
		    (n->nparents > 0 && n->pending > 0));
		for (uint32_t j = 0; j < n->nchildren; j++) {
			const struct dnode *c = deps_node(q, n->children[j]);

			CHECK(n->children[j] > n->id);
			live += c != NULL && !c->gone && names(c, n->id);
		}
		CHECK(n->nlive == live);
	}
	CHECK(nodes == q->deps.nodes.len && edges == q->deps.nedges);
	for (uint64_t i = 0; i < tidx_slots(&q->ids); i++) {
		const struct task *t = tidx_at(&q->ids, i);

		if (t != NULL && t->state == QUEUE_WAITING) {
			CHECK(deps_node(q, t->id) != NULL);
			waiting++;
		}
	}
	CHECK(waiting == q->count[QUEUE_WAITING]);
	return 0;
}

/* ---- Dump ------------------------------------------------------------- */

static int
by_id(const void *a, const void *b)
{
	const struct dnode *x = *(struct dnode *const *)a;
	const struct dnode *y = *(struct dnode *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static const char *const outcome_names[] = { "pending", "done", "failed" };
static const char *const rule_names[] = { "fail", "ignore", "cancel" };

int
deps_dump(const struct queue *q, struct buf *out)
{
	size_t k = 0, n = q->deps.nodes.len;
	struct dnode **all;

	if (n == 0)
		return 0;
	if ((all = malloc(n * sizeof(*all))) == NULL)
		return SLUICE_ENOMEM;
	for (uint32_t i = 0; i < q->deps.nodes.cap; i++)
		if (idx_at(&q->deps.nodes, i) != NULL)
			all[k++] = idx_at(&q->deps.nodes, i);
	qsort(all, k, sizeof(*all), by_id);
	for (size_t i = 0; i < k; i++) {
		const struct dnode *d = all[i];

		buf_printf(out,
		    "dep %" PRIu64 " on_parent_failure=%s outcome=%s%s"
		    " pending=%" PRIu32 " live_children=%" PRIu32,
		    d->id, rule_names[d->on_parent], outcome_names[d->outcome],
		    d->gone ? " gone" : "", d->pending, d->nlive);
		for (uint32_t j = 0; j < d->nparents; j++)
			buf_printf(out, "%s%" PRIu64,
			    j ? "," : " parents=", d->parents[j]);
		for (uint32_t j = 0; j < d->nchildren; j++)
			buf_printf(out, "%s%" PRIu64,
			    j ? "," : " children=", d->children[j]);
		if (d->result != NULL) {
			buf_printf(out, " result=");
			buf_put_escaped(out, d->result, d->result_len);
		}
		buf_put_u8(out, '\n');
	}
	free(all);
	return 0;
}
