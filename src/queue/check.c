/* check - verifies every invariant of the queue's structures (qstate.h):
 * each task is where its state says and nowhere else, heaps are heaps,
 * counts add up, keys, sessions and dedup entries point at each other.
 * O(n); for tests and fuzzing, after every step if they like. */
#include <string.h>

#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/hourly.h"
#include "queue/qstate.h"
#include "queue/throttle.h"
#include "sluice.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			if (why != NULL)                                       \
				*why = #cond;                                  \
			return SLUICE_ECORRUPT;                                \
		}                                                              \
	} while (0)

static bool
in_heap(const struct heap *h, const struct task *t, uint32_t pos)
{
	return pos < h->len && h->item[pos] == t;
}

/* Whether key entry ke is indexed as a key of tube tb. */
static bool
keyent_in(const struct queue *q, const struct keyent *ke, const struct tube *tb)
{
	return ke->tube_len == tb->name_len &&
	    memcmp(keyent_tube(ke), tb->name, tb->name_len) == 0 &&
	    qs_key(q, tb->name, tb->name_len, ke->key, ke->len) == ke;
}

static int
check_task(const struct queue *q, const struct task *t, const char **why)
{
	const struct tube *tb = qs_tube_of(q, t);
	const struct task_ext *e = t->ext;

	CHECK(t->id >= 1 && t->id < q->next_id);
	CHECK(tb != NULL && tb->index < q->ntubes && q->tubes[tb->index] == tb);
	CHECK(t->ttr >= 1);
	CHECK(group_slot(t) == 0 ||
	    (tb->groups != NULL && group_slot(t) < tb->groups->cap &&
	        groups_of(tb, t)->slot == group_slot(t)));
	switch (t->state) {
	case QUEUE_READY:
		if (group_slot(t) == 0) {
			CHECK(in_heap(&tb->ready, t, t->hpos));
		} else {
			const struct group *g = groups_of(tb, t);

			CHECK(t->hpos < g->len && group_items(g)[t->hpos] == t);
		}
		CHECK(in_heap(&tb->age, t, t->apos));
		CHECK(t->run_at <= q->clock);
		break;
	case QUEUE_DELAYED:
		CHECK(in_heap(&tb->delayed, t, t->hpos));
		CHECK(t->run_at > q->clock);
		break;
	case QUEUE_TAKEN:
		CHECK(in_heap(&q->taken, t, t->hpos));
		CHECK(e != NULL && e->taken);
		CHECK(e->lease >= 1); /* qrec_lease: not bounded by lsn */
		CHECK(e->deadline >= e->taken_at);
		break;
	case QUEUE_BURIED:
		CHECK(in_heap(&tb->buried, t, t->hpos));
		break;
	case QUEUE_WAITING:
		CHECK(in_heap(&tb->waiting, t, t->hpos));
		break;
	case QUEUE_DONE:
		CHECK(in_heap(&tb->done, t, t->hpos));
		CHECK(in_heap(&q->done, t, t->apos));
		CHECK(t->run_at > q->clock);
		CHECK(e != NULL && e->repl == NULL &&
		    e->taken_at <= t->updated_at);
		CHECK(e->result == NULL ||
		    (e->result_len > 0 && e->result_len <= QREC_RESULT_MAX));
		break;
	default:
		CHECK(!"a known state");
	}
	if (t->state != QUEUE_READY && t->state != QUEUE_DONE)
		CHECK(t->apos == HEAP_NONE);
	if (e == NULL)
		return 0;
	CHECK(e->taken == (t->state == QUEUE_TAKEN));
	CHECK(e->taken || e->error != NULL || e->period != 0 ||
	    e->key != NULL || e->repl != NULL || e->taken_at != 0 ||
	    t->state == QUEUE_DONE);
	CHECK(t->state == QUEUE_DONE || e->result == NULL);
	CHECK(e->repl == NULL || e->taken);
	CHECK(e->error == NULL ||
	    (e->error_len > 0 && e->error_len <= QREC_ERROR_MAX));
	if (!e->taken)
		CHECK(e->lease == 0 && e->sprev == NULL && e->snext == NULL);
	if (e->key != NULL && t->state == QUEUE_DONE) {
		/* A dedup entry that still names this done task. */
		CHECK(e->key->task == NULL && e->key->id == t->id);
		CHECK(keyent_in(q, e->key, qs_tube_of(q, t)));
	} else if (e->key != NULL) {
		CHECK(e->key->task == t && e->key->id == t->id);
		CHECK(keyent_in(q, e->key, qs_tube_of(q, t)));
	}
	if (e->taken && !e->detached) {
		/* In its session's list: walk back to the head. */
		const struct task *x = t;
		uint64_t steps = 0;

		while (x->ext->sprev != NULL && steps++ <= q->ntasks) {
			CHECK(x->ext->sprev->ext->snext == x);
			x = x->ext->sprev;
			CHECK(x->ext->taken && !x->ext->detached);
			CHECK(x->ext->session == e->session);
		}
		CHECK(idx_find(&q->sessions, e->session) == x);
	}
	if (e->taken && e->detached)
		CHECK(e->sprev == NULL && e->snext == NULL);
	return 0;
}

int
queue_check(const struct queue *q, const char **why)
{
	uint64_t count[QUEUE_STATE_END_] = { 0 };
	uint64_t nkeys = 0, ndedup = 0, tasks = 0, linked = 0, taken_free = 0;
	uint32_t nflows = 0, ngrouped = 0, glisted = 0;
	uint64_t nany = 0, bytes = 0, tube_bytes = 0, nheld = 0;
	struct queue_counters sum;
	const char *tw;
	int rc;

	memset(&sum, 0, sizeof(sum));
	CHECK(q->next_id >= 1);
	CHECK(q->ids.len == q->ntasks);
	for (uint64_t i = 0; i < tidx_slots(&q->ids); i++) {
		const struct task *t = tidx_at(&q->ids, i);

		if (t == NULL)
			continue;
		CHECK(qs_task(q, t->id) == t);
		if ((rc = check_task(q, t, why)) != 0)
			return rc;
		count[t->state]++;
		tasks++;
		if (t->state != QUEUE_DONE)
			bytes += t->payload_len;
		if (t->state == QUEUE_TAKEN && t->ext->detached)
			taken_free++;
	}
	CHECK(tasks == q->ntasks);
	for (int s = QUEUE_READY; s < QUEUE_STATE_END_; s++)
		CHECK(count[s] == q->count[s]);

	/* Tubes: heaps, counts, wake and pause membership, counters. */
	memset(count, 0, sizeof(count));
	/* the list of tubes with groups: each one's, each once */
	for (const struct groups *gs = q->grouped.head; gs != NULL;
	     gs = gs->lnext) {
		CHECK(glisted < q->grouped.n && gs->tube->groups == gs);
		CHECK(gs->lnext == NULL || gs->lnext->lprev == gs);
		glisted++;
	}
	CHECK(glisted == q->grouped.n);
	CHECK(q->names.len == q->ntubes);
	CHECK(q->wake.cap >= q->ntubes && q->pauses.cap >= q->ntubes);
	for (uint32_t i = 0; i < q->ntubes; i++) {
		const struct tube *tb = q->tubes[i];

		CHECK(tb->index == i);
		CHECK(qs_tube(q, tb->name, tb->name_len) == tb);
		CHECK(heap_valid(&tb->ready) && heap_valid(&tb->age));
		CHECK(heap_valid(&tb->delayed) && heap_valid(&tb->buried));
		if (tb->groups == NULL) {
			CHECK(tb->ready.len == tb->age.len);
		} else {
			uint64_t n = tb->ready.len;

			CHECK(
			    tb->groups->tube == tb && groups_valid(tb->groups));
			CHECK(tb->groups->all == &q->grouped);
			ngrouped++;
			for (uint32_t s = 1; s < tb->groups->cap; s++) {
				const struct group *g = tb->groups->table[s];

				if (((uintptr_t)g & 1) == 0)
					n += g->len;
			}
			CHECK(n == tb->age.len);
		}
		CHECK((tb->wpos != HEAP_NONE) == (tb->delayed.len > 0));
		CHECK(tb->wpos == HEAP_NONE ||
		    (tb->wpos < q->wake.len && q->wake.item[tb->wpos] == tb));
		CHECK((tb->ppos != HEAP_NONE) == (tb->paused_until != 0));
		CHECK(tb->ppos == HEAP_NONE ||
		    (tb->ppos < q->pauses.len &&
		        q->pauses.item[tb->ppos] == tb));
		CHECK(tb->paused_until == 0 || tb->paused_until > q->clock);
		CHECK(tb->conf == NULL ||
		    (tb->conf->v.set != 0 &&
		        tb->conf->v.dead_letter == tb->conf->dead_letter &&
		        qrec_tube_conf_valid(
		            &tb->conf->v, tb->name, tb->name_len)));
		/* flow limits: valid, set, and on the flows heap where it
		 * says (a bucket never fuller than its burst) */
		CHECK(tb->flow == NULL ||
		    (tb->flow->tube == tb && tb->flow->lim.set != 0 &&
		        qrec_limits_valid(&tb->flow->lim) &&
		        tb->flow->credit <= (uint64_t)tb->flow->lim.burst *
		                tb->flow->lim.per_ms &&
		        (tb->flow->hpos == HEAP_NONE ||
		            (tb->flow->hpos < q->flows.len &&
		                q->flows.item[tb->flow->hpos] == tb->flow))));
		nflows += tb->flow != NULL && tb->flow->hpos != HEAP_NONE;
		CHECK(qs_glimit_valid(q, tb));
		count[QUEUE_READY] += tube_nready(tb);
		count[QUEUE_DELAYED] += tb->delayed.len;
		count[QUEUE_BURIED] += tb->buried.len;
		count[QUEUE_DONE] += tb->done.len;
		count[QUEUE_WAITING] += tb->waiting.len;
		CHECK(heap_valid(&tb->done) && heap_valid(&tb->waiting));
		count[QUEUE_TAKEN] += tb->ntaken;
		CHECK(tb->live ==
		    tube_nready(tb) + tb->delayed.len + tb->buried.len +
		        tb->ntaken + tb->waiting.len);
		tube_bytes += tb->bytes;
		CHECK(tb->aset < (q->nasets ? q->nasets : 1));
		tube_counters_add(&sum, &tb->ctr);
		if ((rc = hourly_check(q, tb, why)) != 0)
			return rc;
	}
	for (int s = QUEUE_READY; s < QUEUE_STATE_END_; s++)
		CHECK(count[s] == q->count[s]);
	CHECK(memcmp(&sum, &q->ctr, sizeof(sum)) == 0);
	CHECK(bytes == tube_bytes && qs_acct_valid(q));
	CHECK(heap_valid(&q->taken) && q->taken.len == q->count[QUEUE_TAKEN]);
	CHECK(heap_valid(&q->wake) && heap_valid(&q->pauses));
	CHECK(heap_valid(&q->flows) && q->flows.len == nflows);
	CHECK(ngrouped == q->grouped.n);
	CHECK(q->flows.cap >= q->nflows);
	CHECK(heap_valid(&q->done) && q->done.len == q->count[QUEUE_DONE]);

	/* Keys and the dedup list. */
	for (uint32_t i = 0; i < q->keys.cap; i++) {
		const struct keyent *ke = idx_at(&q->keys, i);

		if (ke == NULL)
			continue;
		CHECK(ke->len >= 1 && ke->len <= QREC_KEY_MAX);
		if (ke->task != NULL) {
			CHECK(ke->task->ext && ke->task->ext->key == ke);
			nkeys++;
		} else if (ke->expires == QUEUE_MOVE_PLACED) {
			CHECK(
			    ke->id >= 1 && ke->id < q->next_id); /* a move's */
		} else {
			const struct task *t = qs_task(q, ke->id);

			CHECK(ke->id >= 1 && ke->id < q->next_id);
			/* A task with its id is the done task it belongs to. */
			CHECK(t == NULL ||
			    (t->state == QUEUE_DONE && t->ext->key == ke));
			/* A held one has its done task, and a version. */
			CHECK(!ke->held || (t != NULL && ke->version != 0));
			if (ke->held)
				nheld++;
			else
				ndedup++;
		}
	}
	CHECK(nkeys == q->nkeys && ndedup == q->ndedup && nheld == q->nheld);
	ndedup = 0;
	for (const struct keyent *ke = q->dedup_head; ke; ke = ke->next) {
		CHECK(ke->task == NULL && !ke->held && ++ndedup <= q->ndedup);
		CHECK(ke->next == NULL ? q->dedup_tail == ke
		                       : ke->next->prev == ke);
		CHECK(qs_key(q, keyent_tube(ke), ke->tube_len, ke->key,
		          ke->len) == ke);
		nany += ke->tube_len == 0;
	}
	CHECK(ndedup == q->ndedup && nany == q->nanykeys);

	/* Sessions: each head starts a list of that session's tasks. */
	for (uint32_t i = 0; i < q->sessions.cap; i++) {
		const struct task *t = idx_at(&q->sessions, i);
		uint64_t session;

		if (t == NULL)
			continue;
		CHECK(t->state == QUEUE_TAKEN && t->ext->sprev == NULL);
		session = t->ext->session;
		for (; t != NULL; t = t->ext->snext) {
			CHECK(++linked <= q->count[QUEUE_TAKEN]);
			CHECK(t->state == QUEUE_TAKEN && !t->ext->detached);
			CHECK(t->ext->session == session);
		}
	}
	CHECK(linked + taken_free == q->count[QUEUE_TAKEN]);
	if ((rc = deps_check(q, why)) != 0)
		return rc;
	tw = qs_throttle_check(q);
	if (tw == NULL)
		tw = qs_sched_check(q);
	if (tw == NULL)
		tw = qs_outcome_check(q);
	if (tw == NULL)
		tw = batch_check(q);
	if (tw == NULL)
		tw = move_check(q);
	if (tw != NULL && why != NULL)
		*why = tw;
	return tw != NULL ? SLUICE_ECORRUPT : 0;
}
