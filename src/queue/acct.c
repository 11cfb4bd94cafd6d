/* acct - what each namespace of tubes holds: its tubes, its live tasks
 * (every state but done) and their payload bytes, counted exactly as the
 * state changes, for the quotas of the server's tokens (a token's tube
 * pattern is a namespace: a tube name, or a prefix).
 *
 * Design. The queue keeps, per tube, its live tasks and their bytes
 * (qs_place and qs_unplace, the one way a task enters or leaves a state,
 * adjust them). A namespace's usage is the sum over the tubes it covers;
 * rather than summing at each question, every tube carries the set of
 * namespaces that cover it (`aset`, an index into the queue's interned
 * sets: tubes covered alike share one set, and set 0 is the empty one),
 * computed once when the tube is made, and each change adds to the
 * namespaces of its tube's set. A put, an ack, a delete, an expiry, a
 * move between tubes (ack --to, a dead letter: unplaced from one tube,
 * placed in the other), a replace or a new payload all go through those
 * two functions, so nothing is missed; a restart rebuilds the counts from
 * the state (queue_acct_set, after recovery), and so does a new set of
 * namespaces (a reloaded token file). Nothing here is logged or
 * replicated: the counts follow from the state.
 *
 * Cost: a change costs one add per namespace covering its tube (usually
 * one or none); a new tube, one compare per namespace. */
#include <stdlib.h>
#include <string.h>

#include "queue/qstate.h"
#include "sluice.h"

/* Whether namespace `a` covers the tube named name[0..len). */
static bool
covers(const struct qacct *a, const char *name, size_t len)
{
	if (a->prefix)
		return len >= a->len && memcmp(name, a->name, a->len) == 0;
	return len == a->len && memcmp(name, a->name, len) == 0;
}

static void
sets_free(struct queue *q)
{
	for (uint32_t i = 0; i < q->nasets; i++)
		free(q->asets[i].v);
	free(q->asets);
	q->asets = NULL;
	q->nasets = 0;
}

static void
accts_free(struct queue *q)
{
	for (uint32_t i = 0; i < q->nacct; i++)
		free(q->acct[i].name);
	free(q->acct);
	q->acct = NULL;
	q->nacct = 0;
	sets_free(q);
}

void
qs_acct_fini(struct queue *q)
{
	accts_free(q);
}

/* The set of the namespaces that cover tube tb, interned: its index in
 * *out. Returns 0 or SLUICE_ENOMEM. */
static int
set_of(struct queue *q, const struct tube *tb, uint32_t *out)
{
	uint32_t n = 0, *v;
	struct qaset *p;

	for (uint32_t i = 0; i < q->nacct; i++)
		n += covers(&q->acct[i], tb->name, tb->name_len);
	if (n == 0) {
		*out = 0;
		return 0;
	}
	if ((v = malloc(n * sizeof(*v))) == NULL)
		return SLUICE_ENOMEM;
	n = 0;
	for (uint32_t i = 0; i < q->nacct; i++)
		if (covers(&q->acct[i], tb->name, tb->name_len))
			v[n++] = i;
	for (uint32_t s = 1; s < q->nasets; s++) {
		if (q->asets[s].n == n &&
		    memcmp(q->asets[s].v, v, n * sizeof(*v)) == 0) {
			free(v);
			*out = s;
			return 0;
		}
	}
	p = realloc(q->asets, (q->nasets + 1) * sizeof(*p));
	if (p == NULL) {
		free(v);
		return SLUICE_ENOMEM;
	}
	q->asets = p;
	q->asets[q->nasets] = (struct qaset) { n, v };
	*out = q->nasets++;
	return 0;
}

int
qs_acct_tube_join(struct queue *q, struct tube *tb)
{
	const struct qaset *s;
	int rc;

	tb->aset = 0;
	if (q->nacct == 0)
		return 0;
	if ((rc = set_of(q, tb, &tb->aset)) != 0)
		return rc;
	s = &q->asets[tb->aset];
	for (uint32_t i = 0; i < s->n; i++)
		q->acct[s->v[i]].use.tubes++;
	return 0;
}

void
qs_acct_tube_leave(struct queue *q, const struct tube *tb)
{
	const struct qaset *s;

	if (tb->aset == 0)
		return;
	s = &q->asets[tb->aset];
	for (uint32_t i = 0; i < s->n; i++)
		q->acct[s->v[i]].use.tubes--;
}

void
qs_acct_use(struct queue *q, struct tube *tb, int64_t tasks, int64_t bytes)
{
	const struct qaset *s;

	tb->live += (uint64_t)tasks;
	tb->bytes += (uint64_t)bytes;
	if (tb->aset == 0)
		return;
	s = &q->asets[tb->aset];
	for (uint32_t i = 0; i < s->n; i++) {
		q->acct[s->v[i]].use.tasks += (uint64_t)tasks;
		q->acct[s->v[i]].use.bytes += (uint64_t)bytes;
	}
}

int
queue_acct_set(struct queue *q, const struct queue_ns *ns, size_t n)
{
	int rc = SLUICE_ENOMEM;

	accts_free(q);
	for (uint32_t i = 0; i < q->ntubes; i++)
		q->tubes[i]->aset = 0;
	if (n == 0)
		return 0;
	if (n > UINT32_MAX / 2 ||
	    (q->acct = calloc(n, sizeof(*q->acct))) == NULL ||
	    (q->asets = calloc(1, sizeof(*q->asets))) == NULL)
		goto fail;
	q->nasets = 1; /* set 0: no namespace */
	for (size_t i = 0; i < n; i++) {
		struct qacct *a = &q->acct[i];

		if ((a->name = malloc(ns[i].len + 1)) == NULL)
			goto fail;
		q->nacct++;
		memcpy(a->name, ns[i].name, ns[i].len);
		a->name[ns[i].len] = '\0';
		a->len = ns[i].len;
		a->prefix = ns[i].prefix;
	}
	for (uint32_t i = 0; i < q->ntubes; i++) {
		struct tube *tb = q->tubes[i];

		if ((rc = qs_acct_tube_join(q, tb)) != 0)
			goto fail;
		if (tb->aset != 0) {
			const struct qaset *s = &q->asets[tb->aset];

			for (uint32_t k = 0; k < s->n; k++) {
				q->acct[s->v[k]].use.tasks += tb->live;
				q->acct[s->v[k]].use.bytes += tb->bytes;
			}
		}
	}
	return 0;

fail:
	for (uint32_t i = 0; i < q->ntubes; i++)
		q->tubes[i]->aset = 0;
	accts_free(q);
	return rc;
}

void
queue_acct_usage(const struct queue *q, size_t i, struct queue_usage *out)
{
	if (i < q->nacct)
		*out = q->acct[i].use;
	else
		memset(out, 0, sizeof(*out));
}

void
queue_tube_usage(const struct queue *q, const char *tube, size_t len,
    struct queue_usage *out)
{
	const struct tube *tb = qs_tube(q, tube, len);

	memset(out, 0, sizeof(*out));
	if (tb == NULL)
		return;
	out->tubes = 1;
	out->tasks = tb->live;
	out->bytes = tb->bytes;
}

bool
qs_acct_valid(const struct queue *q)
{
	for (uint32_t i = 0; i < q->nacct; i++) {
		const struct qacct *a = &q->acct[i];
		struct queue_usage u = { 0, 0, 0 };

		for (uint32_t k = 0; k < q->ntubes; k++) {
			const struct tube *tb = q->tubes[k];
			const struct qaset *s = &q->asets[tb->aset];
			bool in = false;

			for (uint32_t j = 0; tb->aset != 0 && j < s->n; j++)
				in = in || s->v[j] == i;
			if (in != covers(a, tb->name, tb->name_len))
				return false;
			if (!in)
				continue;
			u.tubes++;
			u.tasks += tb->live;
			u.bytes += tb->bytes;
		}
		if (memcmp(&u, &a->use, sizeof(u)) != 0)
			return false;
	}
	return true;
}
