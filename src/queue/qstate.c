/* qstate - the queue's life cycle, the primitives that move tasks between
 * the structures of their states (see qstate.h for where each state
 * lives), and the time-driven changes (tick).
 *
 * Reserve, then commit: qs_reserve*() and qs_tube_get() do every
 * allocation and may fail; qs_place(), qs_unplace(), qs_key_*() and the
 * rest never fail, because the heaps and indexes keep the room that was
 * reserved (a removal never takes it away). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "queue/glimit.h"
#include "queue/deps.h"
#include "queue/group.h"
#include "queue/hourly.h"
#include "queue/qstate.h"
#include "queue/throttle.h"
#include "sluice.h"

/* ---- Index keys ------------------------------------------------------ */

static uint64_t
id_key(const void *item)
{
	return ((const struct task *)item)->id;
}

static uint64_t
session_key(const void *item)
{
	return ((const struct task *)item)->ext->session;
}

static uint64_t
keyent_key(const void *item)
{
	return ((const struct keyent *)item)->hash;
}

static uint64_t
tube_key(const void *item)
{
	return ((const struct tube *)item)->hash;
}

struct bytes {
	const char *p;
	size_t len;
};

/* A key of a tube, as keyent_eq compares it. */
struct tkey {
	struct bytes tube;
	struct bytes key;
};

static bool
keyent_eq(const void *item, const void *arg)
{
	const struct keyent *ke = item;
	const struct tkey *k = arg;

	return ke->len == k->key.len && ke->tube_len == k->tube.len &&
	    memcmp(ke->key, k->key.p, k->key.len) == 0 &&
	    memcmp(keyent_tube(ke), k->tube.p, k->tube.len) == 0;
}

/* The hash of a key of a tube: the tube's name seeds the key's, so the
 * same key in two tubes lands apart. */
static uint64_t
tkey_hash(const struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t len)
{
	uint64_t seed = idx_hash_bytes(q->cfg.hash_seed ^ 2, tube, tube_len);

	return idx_hash_bytes(q->cfg.hash_seed ^ 1 ^ seed, key, len);
}

static bool
tube_eq(const void *item, const void *arg)
{
	const struct tube *tb = item;
	const struct bytes *b = arg;

	return tb->name_len == b->len && memcmp(tb->name, b->p, b->len) == 0;
}

/* ---- Life cycle ------------------------------------------------------ */

void
queue_config_default(struct queue_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_payload = QUEUE_DEFAULT_MAX_PAYLOAD;
	cfg->max_error = QUEUE_DEFAULT_MAX_ERROR;
	cfg->dedup_ms = QUEUE_DEFAULT_DEDUP_MS;
	cfg->backoff_base_ms = QUEUE_DEFAULT_BACKOFF_BASE_MS;
	cfg->backoff_cap_ms = QUEUE_DEFAULT_BACKOFF_CAP_MS;
	cfg->default_ttr_ms = QUEUE_DEFAULT_TTR_MS;
	cfg->max_ttr_ms = QUEUE_DEFAULT_MAX_TTR_MS;
	cfg->max_take_tubes = QUEUE_DEFAULT_MAX_TAKE_TUBES;
	cfg->max_tubes = QUEUE_DEFAULT_MAX_TUBES;
	cfg->max_tasks = 0;
	cfg->keep_done_ms = 0;
	cfg->max_done = QUEUE_DEFAULT_MAX_DONE;
	cfg->max_outcome_bytes = QUEUE_DEFAULT_OUTCOME_BYTES;
	cfg->hash_seed = 0x736c75696365ULL;
}

/* A queue with no tasks, tubes or keys, over the memory *q. */
static void
queue_init(struct queue *q, const struct queue_config *cfg)
{
	memset(q, 0, sizeof(*q));
	if (cfg != NULL)
		q->cfg = *cfg;
	else
		queue_config_default(&q->cfg);
	if (q->cfg.max_payload > QREC_PAYLOAD_MAX)
		q->cfg.max_payload = QREC_PAYLOAD_MAX;
	if (q->cfg.max_error > QREC_ERROR_MAX)
		q->cfg.max_error = QREC_ERROR_MAX;
	tslab_init(&q->pool);
	tidx_init(&q->ids, id_key);
	idx_init(&q->keys, keyent_key);
	idx_init(&q->names, tube_key);
	idx_init(&q->sessions, session_key);
	qs_throttle_init(q);
	qs_outcome_init(q);
	deps_init(&q->deps);
	batches_init(&q->bt);
	moves_init(&q->mv);
	heap_init(&q->taken, tube_deadline_less, offsetof(struct task, hpos));
	heap_init(&q->wake, tube_wake_less, offsetof(struct tube, wpos));
	heap_init(&q->pauses, tube_pause_less, offsetof(struct tube, ppos));
	heap_init(&q->done, tube_run_at_less, offsetof(struct task, apos));
	heap_init(&q->flows, flow_due_less, offsetof(struct flow, hpos));
	q->flows.noshrink = true; /* qs_flow_set reserves a place each */
	qs_glimit_init(q);
	q->wake.noshrink = true;
	q->pauses.noshrink = true;
	q->next_id = 1;
}

/* Frees everything the queue holds, not the queue itself. */
static void
queue_fini(struct queue *q)
{
	/* A task in a slab goes with its slab: only its ext, or a task
	 * from malloc, is freed one by one. */
	for (uint64_t i = 0; i < tidx_slots(&q->ids); i++) {
		struct task *t = tidx_at(&q->ids, i);

		if (t != NULL &&
		    (t->ext != NULL ||
		        !tslab_in_slab(task_size(t->payload_len))))
			task_free(&q->pool, t);
	}
	for (uint32_t i = 0; i < q->keys.cap; i++)
		free(idx_at(&q->keys, i));
	for (uint32_t i = 0; i < q->ntubes; i++)
		tube_free(q->tubes[i]);
	free(q->tubes);
	free(q->tslots);
	free(q->tslot_free);
	tidx_fini(&q->ids);
	tslab_fini(&q->pool);
	idx_fini(&q->keys);
	idx_fini(&q->names);
	idx_fini(&q->sessions);
	qs_throttle_fini(q);
	qs_sched_fini(q);
	qs_outcome_fini(q);
	deps_fini(&q->deps);
	batches_fini(&q->bt);
	moves_fini(&q->mv);
	heap_fini(&q->taken);
	heap_fini(&q->wake);
	heap_fini(&q->pauses);
	heap_fini(&q->done);
	heap_fini(&q->flows);
	qs_glimit_fini(q);
	free(q->load.want);
	free(q->rates);
	qs_acct_fini(q);
}

struct queue *
queue_new(const struct queue_config *cfg)
{
	struct queue *q = malloc(sizeof(*q));

	if (q == NULL)
		return NULL;
	queue_init(q, cfg);
	return q;
}

void
queue_free(struct queue *q)
{
	if (q == NULL)
		return;
	queue_fini(q);
	free(q);
}

void
queue_clear(struct queue *q)
{
	struct queue_config cfg = q->cfg;
	struct rates *rates = q->rates; /* observation: it goes on */
	queue_ready_fn *on_ready = q->on_ready;
	void *on_ready_arg = q->on_ready_arg;
	queue_lost_ready_fn *lost_ready = q->lost_ready;
	void *lost_ready_arg = q->lost_ready_arg;
	queue_final_fn *on_final = q->oc.on_final;
	void *on_final_arg = q->oc.on_final_arg;

	q->rates = NULL;
	queue_fini(q);
	queue_init(q, &cfg);
	q->rates = rates;
	q->on_ready = on_ready;
	q->on_ready_arg = on_ready_arg;
	q->lost_ready = lost_ready;
	q->lost_ready_arg = lost_ready_arg;
	q->oc.on_final = on_final;
	q->oc.on_final_arg = on_final_arg;
}

uint64_t
queue_lsn(const struct queue *q)
{
	return q->lsn;
}

uint64_t
queue_next_id(const struct queue *q)
{
	return q->next_id;
}

int
queue_apply(struct queue *q, uint64_t lsn, int64_t time, const struct qrec *rec)
{
	return qs_apply(q, lsn, time, rec, false);
}

int
queue_apply_decoded(
    struct queue *q, uint64_t lsn, int64_t time, const struct qrec *rec)
{
	return qs_apply(q, lsn, time, rec, true);
}

/* ---- Lookups --------------------------------------------------------- */

struct task *
qs_task(const struct queue *q, uint64_t id)
{
	return tidx_find(&q->ids, id);
}

struct task *
qs_task_seen(const struct queue *q, uint64_t id)
{
	return id == q->hidden && id != 0 ? NULL : qs_task(q, id);
}

void
queue_hide(struct queue *q, uint64_t id)
{
	q->hidden = id;
}

struct tube *
qs_tube(const struct queue *q, const char *name, size_t len)
{
	const struct tube *last = q->last_tube;
	struct bytes b = { name, len };

	if (last != NULL && tube_eq(last, &b))
		return q->last_tube;
	return idx_find_eq(&q->names,
	    idx_hash_bytes(q->cfg.hash_seed, name, len), tube_eq, &b);
}

struct keyent *
qs_key(const struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t len)
{
	struct tkey k = { { tube, tube_len }, { key, len } };

	return idx_find_eq(
	    &q->keys, tkey_hash(q, tube, tube_len, key, len), keyent_eq, &k);
}

struct keyent *
qs_key_for_put(const struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t len)
{
	struct keyent *ke = qs_key(q, tube, tube_len, key, len);

	if (ke == NULL && q->nanykeys > 0)
		ke = qs_key(q, "", 0, key, len);
	return ke;
}

static void
wake_update(struct queue *q, struct tube *tb)
{
	if (tb->delayed.len == 0) {
		if (tb->wpos != HEAP_NONE)
			heap_remove(&q->wake, tb);
	} else if (tb->wpos == HEAP_NONE) {
		heap_push(&q->wake, tb);
	} else {
		heap_fix(&q->wake, tb);
	}
}

void
queue_on_ready(struct queue *q, queue_ready_fn *fn, void *arg)
{
	q->on_ready = fn;
	q->on_ready_arg = arg;
}

void
queue_on_lost_lease(struct queue *q, queue_lost_ready_fn *fn, void *arg)
{
	q->lost_ready = fn;
	q->lost_ready_arg = arg;
}

void
qs_pause(struct queue *q, struct tube *tb, int64_t until)
{
	if (until == 0) {
		if (tb->ppos != HEAP_NONE)
			heap_remove(&q->pauses, tb);
		if (tb->paused_until != 0 && tube_nready(tb) > 0 &&
		    q->on_ready != NULL)
			q->on_ready(q->on_ready_arg, tb->name, tb->name_len);
		tb->paused_until = 0;
		return;
	}
	tb->paused_until = until;
	if (tb->ppos == HEAP_NONE)
		heap_push(&q->pauses, tb);
	else
		heap_fix(&q->pauses, tb);
}

/* ---- Placing tasks --------------------------------------------------- */

int
qs_reserve(struct queue *q, struct tube *tb, int state, bool session_lease,
    uint64_t session)
{
	int rc;

	switch (state) {
	case QUEUE_READY:
		/* a named group has room for each of its tasks already */
		if ((rc = heap_reserve(&tb->ready, 1)) != 0)
			return rc;
		return heap_reserve(&tb->age, 1);
	case QUEUE_DELAYED:
		return heap_reserve(&tb->delayed, 1);
	case QUEUE_TAKEN:
		if ((rc = heap_reserve(&q->taken, 1)) != 0)
			return rc;
		if (session_lease && idx_find(&q->sessions, session) == NULL)
			return idx_reserve(&q->sessions, 1);
		return 0;
	case QUEUE_BURIED:
		return heap_reserve(&tb->buried, 1);
	case QUEUE_WAITING:
		return heap_reserve(&tb->waiting, 1);
	case QUEUE_DONE:
		if ((rc = heap_reserve(&tb->done, 1)) != 0)
			return rc;
		return heap_reserve(&q->done, 1);
	default:
		assert(!"bad state");
		return SLUICE_EINVAL;
	}
}

int
qs_reserve_id(struct queue *q)
{
	return tidx_reserve(&q->ids, 1);
}

int
qs_reserve_key(struct queue *q)
{
	return idx_reserve(&q->keys, 1);
}

static void
session_link(struct queue *q, struct task *t)
{
	struct task_ext *e = t->ext;
	struct task *head = idx_find(&q->sessions, e->session);

	if (head == NULL) {
		e->sprev = NULL;
		e->snext = NULL;
		idx_insert(&q->sessions, t);
		return;
	}
	/* After the head, so the index keeps pointing at it. */
	e->sprev = head;
	e->snext = head->ext->snext;
	if (e->snext != NULL)
		e->snext->ext->sprev = t;
	head->ext->snext = t;
}

static void
session_unlink(struct queue *q, struct task *t)
{
	struct task_ext *e = t->ext;

	if (e->sprev != NULL) {
		e->sprev->ext->snext = e->snext;
		if (e->snext != NULL)
			e->snext->ext->sprev = e->sprev;
	} else if (e->snext != NULL) {
		e->snext->ext->sprev = NULL;
		idx_swap(&q->sessions, t, e->snext);
	} else {
		idx_remove(&q->sessions, t);
	}
	e->sprev = NULL;
	e->snext = NULL;
}

void
qs_place(struct queue *q, struct task *t, int state)
{
	struct tube *tb = qs_tube_of(q, t);

	if (q->apply_lsn != 0)
		tb->dep_lsn = q->apply_lsn;
	t->state = (uint8_t)state;
	if (state == QUEUE_BURIED && q->bt.members.len != 0)
		batch_task_buried(q, t); /* failed, for its batch */
	switch (state) {
	case QUEUE_READY:
		assert(t->run_at <= q->clock);
		if (tb->groups == NULL)
			heap_push(&tb->ready, t);
		else
			groups_push(tb->groups, t);
		heap_push(&tb->age, t);
		if (q->on_ready != NULL)
			q->on_ready(q->on_ready_arg, tb->name, tb->name_len);
		break;
	case QUEUE_DELAYED:
		assert(t->run_at > q->clock);
		heap_push(&tb->delayed, t);
		wake_update(q, tb);
		break;
	case QUEUE_TAKEN:
		t->ext->taken = true;
		heap_push(&q->taken, t);
		tb->ntaken++;
		if (tb->groups != NULL)
			qs_glimit_taken(q, tb, t);
		if (!t->ext->detached)
			session_link(q, t);
		break;
	case QUEUE_BURIED:
		heap_push(&tb->buried, t);
		break;
	case QUEUE_WAITING:
		heap_push(&tb->waiting, t);
		break;
	case QUEUE_DONE:
		assert(t->run_at > q->clock);
		heap_push(&tb->done, t);
		heap_push(&q->done, t);
		break;
	default:
		assert(!"bad state");
	}
	q->count[state]++;
	if (state != QUEUE_DONE)
		qs_acct_use(q, tb, 1, t->payload_len);
	if (q->rates != NULL)
		qs_depth(q, tb, state, 1);
}

void
qs_unplace(struct queue *q, struct task *t)
{
	struct tube *tb = qs_tube_of(q, t);
	struct task_ext *e = t->ext;

	switch (t->state) {
	case QUEUE_READY:
		if (tb->groups == NULL)
			heap_remove(&tb->ready, t);
		else
			groups_remove(tb->groups, t);
		heap_remove(&tb->age, t);
		break;
	case QUEUE_DELAYED:
		heap_remove(&tb->delayed, t);
		wake_update(q, tb);
		break;
	case QUEUE_TAKEN:
		heap_remove(&q->taken, t);
		tb->ntaken--;
		if (tb->groups != NULL)
			qs_glimit_untaken(q, tb, t);
		if (tb->flow != NULL) /* a slot is free */
			qs_flow_freed(q, tb);
		if (!e->detached)
			session_unlink(q, t);
		e->taken = false;
		e->detached = false;
		e->lease = 0;
		e->session = 0;
		e->deadline = 0; /* taken_at stays: the last take */
		break;
	case QUEUE_BURIED:
		heap_remove(&tb->buried, t);
		break;
	case QUEUE_WAITING:
		heap_remove(&tb->waiting, t);
		break;
	case QUEUE_DONE:
		heap_remove(&tb->done, t);
		heap_remove(&q->done, t);
		break;
	default:
		assert(!"bad state");
	}
	q->count[t->state]--;
	if (t->state != QUEUE_DONE)
		qs_acct_use(q, tb, -1, -(int64_t)t->payload_len);
	if (q->rates != NULL)
		qs_depth(q, tb, t->state, -1);
	t->state = 0;
}

/* ---- Keys ------------------------------------------------------------ */

struct keyent *
qs_keyent_new(const struct queue *q, const char *tube, size_t tube_len,
    const char *key, size_t len)
{
	struct keyent *ke = calloc(1, sizeof(*ke) + len + tube_len);

	if (ke == NULL)
		return NULL;
	memcpy(ke->key, key, len);
	if (tube_len > 0)
		memcpy(ke->key + len, tube, tube_len);
	ke->len = (uint16_t)len;
	ke->tube_len = (uint16_t)tube_len;
	ke->hash = tkey_hash(q, tube, tube_len, key, len);
	return ke;
}

void
qs_key_insert(struct queue *q, struct keyent *ke)
{
	idx_insert(&q->keys, ke);
	if (ke->tube_len == 0)
		q->nanykeys++;
}

/* Takes a key entry out of the index (not freed). */
static void
key_remove(struct queue *q, struct keyent *ke)
{
	idx_remove(&q->keys, ke);
	if (ke->tube_len == 0)
		q->nanykeys--;
}

void
qs_dedup_unlink(struct queue *q, struct keyent *ke)
{
	if (ke->prev != NULL)
		ke->prev->next = ke->next;
	else
		q->dedup_head = ke->next;
	if (ke->next != NULL)
		ke->next->prev = ke->prev;
	else
		q->dedup_tail = ke->prev;
	ke->prev = NULL;
	ke->next = NULL;
	q->ndedup--;
}

void
qs_dedup_append(struct queue *q, struct keyent *ke)
{
	ke->next = NULL;
	ke->prev = q->dedup_tail;
	if (q->dedup_tail != NULL)
		q->dedup_tail->next = ke;
	else
		q->dedup_head = ke;
	q->dedup_tail = ke;
	q->ndedup++;
}

void
qs_key_rehome(struct queue *q, struct keyent *ke, struct keyent *nke)
{
	nke->task = ke->task;
	nke->id = ke->id;
	nke->version = ke->version;
	key_remove(q, ke);
	qs_key_insert(q, nke);
	nke->task->ext->key = nke;
	free(ke);
}

void
qs_key_complete(
    struct queue *q, struct task *t, int64_t time, uint32_t dedup_ms)
{
	struct keyent *ke = t->ext ? t->ext->key : NULL;

	if (ke == NULL)
		return;
	t->ext->key = NULL;
	if (ke->task == NULL) {
		/* A done task's key, already reserved since its ack (or
		 * held since): a cancel frees it, anything else leaves it to
		 * expire. */
		if (dedup_ms == 0) {
			if (ke->held)
				q->nheld--;
			else
				qs_dedup_unlink(q, ke);
			key_remove(q, ke);
			free(ke);
		}
		return;
	}
	q->nkeys--;
	ke->task = NULL;
	ke->id = t->id;
	if (dedup_ms == 0) {
		key_remove(q, ke);
		free(ke);
		return;
	}
	ke->expires = time + dedup_ms;
	qs_dedup_append(q, ke);
}

void
qs_task_remove(struct queue *q, struct task *t, int64_t time, uint32_t dedup_ms)
{
	int how = qs_outcome_removed(q, t, time);

	if (q->deps.nodes.len != 0)
		deps_task_gone(q, t, how); /* its children hear (deps.h) */
	if (q->bt.members.len != 0)
		batch_task_gone(q, t); /* its batch counts it (batch.h) */
	qs_unplace(q, t);
	if (group_slot(t) != 0)
		groups_leave(qs_tube_of(q, t), t);
	tidx_remove(&q->ids, t);
	qs_key_complete(q, t, time, dedup_ms);
	q->ntasks--;
	task_free(&q->pool, t);
}

int64_t
qs_age_time(const struct task *t)
{
	return t->state == QUEUE_DONE ? t->updated_at : t->created_at;
}

struct task *
qs_key_task(const struct queue *q, const struct keyent *ke)
{
	struct task *t;

	if (ke == NULL)
		return NULL;
	if (ke->task != NULL)
		return ke->task;
	t = qs_task(q, ke->id);
	return t != NULL && t->ext != NULL && t->ext->key == ke ? t : NULL;
}

void
qs_done_drop(struct queue *q, struct task *t)
{
	/* The reservation outlives the task; a held entry goes with it. */
	if (task_has_key(t) && !t->ext->key->held)
		t->ext->key = NULL;
	qs_task_remove(q, t, 0, 0);
}

/* A dedup entry's reservation ends: the done task it still names loses
 * its key, unless that task had a version, which the entry keeps (held)
 * as long as the task is kept. */
static void
dedup_free(struct queue *q, struct keyent *ke)
{
	struct task *t = qs_key_task(q, ke);

	qs_dedup_unlink(q, ke);
	if (t != NULL && ke->version != 0) {
		ke->held = 1;
		q->nheld++;
		return;
	}
	if (t != NULL)
		t->ext->key = NULL;
	key_remove(q, ke);
	free(ke);
}

void
qs_dedup_reuse(struct queue *q, struct keyent *ke)
{
	struct task *t = qs_key_task(q, ke);

	if (t != NULL)
		t->ext->key = NULL;
	if (ke->held) {
		ke->held = 0;
		q->nheld--;
	} else {
		qs_dedup_unlink(q, ke);
	}
}

void
qs_task_swap(struct queue *q, struct task *t, struct task *nt)
{
	tidx_swap(&q->ids, t, nt);
	if (task_has_key(t)) {
		assert(nt->ext != NULL);
		nt->ext->key = t->ext->key;
		nt->ext->key->task = nt;
		t->ext->key = NULL;
	}
}

/* ---- Views ----------------------------------------------------------- */

void
qs_view(
    const struct queue *q, const struct task *t, struct queue_task_view *out)
{
	const struct task_ext *e = t->ext;

	memset(out, 0, sizeof(*out));
	out->id = t->id;
	out->tube = qs_tube_of(q, t)->name;
	out->tube_len = qs_tube_of(q, t)->name_len;
	out->state = t->state;
	out->payload = t->payload;
	out->payload_len = t->payload_len;
	out->pri = t->pri;
	out->ttr = t->ttr;
	out->attempts = t->attempts;
	out->max_attempts = t->max_attempts;
	out->run_at = t->run_at;
	out->created_at = t->created_at;
	out->updated_at = t->updated_at;
	if (group_slot(t) != 0) {
		const struct group *g = groups_of(qs_tube_of(q, t), t);

		out->group = g->name;
		out->group_len = g->name_len;
	}
	if (e == NULL)
		return;
	out->period = e->period;
	if (e->key != NULL) {
		out->key = e->key->key;
		out->key_len = e->key->len;
		/* a done task's: its dedup entry keeps it */
		out->version = e->key->version;
		if (e->key->held) { /* the reservation ended: no key */
			out->key = NULL;
			out->key_len = 0;
		}
	}
	if (e->error != NULL) {
		out->last_error = e->error;
		out->last_error_len = e->error_len;
	}
	out->taken_at = e->taken_at; /* the last take, taken or not */
	if (e->taken) {
		out->lease = e->lease;
		out->session = e->session;
		out->deadline = e->deadline;
		out->detached = e->detached;
	}
	if (t->state == QUEUE_DONE) {
		out->finished_at = t->updated_at;
		out->kept_until = t->run_at;
		out->duration = t->updated_at - e->taken_at;
		out->taken_at = e->taken_at;
		out->result = e->result;
		out->result_len = e->result_len;
	}
	out->replace_pending = e->repl != NULL;
	if (e->repl != NULL) {
		out->repl.payload = e->repl->payload;
		out->repl.payload_len = e->repl->payload_len;
		out->repl.pri = e->repl->pri;
		out->repl.ttr = e->repl->ttr;
		out->repl.max_attempts = e->repl->max_attempts;
		out->repl.run_at = e->repl->run_at;
		out->repl.period = e->repl->period;
		out->repl.version = e->repl->version;
	}
}

/* ---- Time ------------------------------------------------------------ */

int
queue_tick(struct queue *q, int64_t now)
{
	int64_t hour = q->clock / QUEUE_HOUR_MS;
	struct tube *tb;
	struct task *x;

	if (now <= q->clock)
		return 0;
	/* Delayed tasks whose time has come, earliest first. */
	while ((tb = heap_top(&q->wake)) != NULL) {
		struct task *t = heap_top(&tb->delayed);
		int rc;

		if (t->run_at > now)
			break;
		if ((rc = qs_reserve(q, tb, QUEUE_READY, false, 0)) != 0) {
			/* Stop the clock just before this task. */
			if (t->run_at - 1 > q->clock)
				q->clock = t->run_at - 1;
			return rc;
		}
		if (t->run_at > q->clock)
			q->clock = t->run_at;
		qs_unplace(q, t);
		t->updated_at = t->run_at; /* a transition, at its time */
		qs_place(q, t, QUEUE_READY);
	}
	q->clock = now;
	qs_flow_tick(q, now);
	qs_glimit_tick(q, now);
	while ((tb = heap_top(&q->pauses)) != NULL && tb->paused_until <= now)
		qs_pause(q, tb, 0);
	/* Dedup entries in completion order; one whose time went backwards
	 * waits behind the head, and lookups check expires themselves. */
	while (q->dedup_head != NULL && q->dedup_head->expires <= now)
		dedup_free(q, q->dedup_head);
	/* Done tasks whose retention ended, in the order it ends. */
	while ((x = heap_top(&q->done)) != NULL && x->run_at <= now)
		qs_done_drop(q, x);
	/* Hours of statistics the window left, once per hour of the clock. */
	if (now / QUEUE_HOUR_MS != hour)
		hourly_prune(q);
	qs_rates_sweep(q, now);
	qs_throttle_sweep(q, now);
	qs_outcome_tick(q, now);
	batch_tick(q, now);
	return 0;
}

int64_t
queue_next_wake(const struct queue *q)
{
	int64_t t = INT64_MAX;
	const struct tube *tb;
	const struct task *x;

	if ((tb = heap_top(&q->wake)) != NULL)
		t = ((const struct task *)heap_top(&tb->delayed))->run_at;
	if ((x = heap_top(&q->taken)) != NULL && x->ext->deadline < t)
		t = x->ext->deadline;
	if ((tb = heap_top(&q->pauses)) != NULL && tb->paused_until < t)
		t = tb->paused_until;
	if ((x = heap_top(&q->done)) != NULL && x->run_at < t)
		t = x->run_at;
	if (qs_flow_next(q) < t)
		t = qs_flow_next(q);
	if (qs_glimit_next(q) < t)
		t = qs_glimit_next(q);
	return t;
}

const char *
queue_state_name(int state)
{
	switch (state) {
	case QUEUE_READY:
		return "ready";
	case QUEUE_DELAYED:
		return "delayed";
	case QUEUE_TAKEN:
		return "taken";
	case QUEUE_BURIED:
		return "buried";
	case QUEUE_DONE:
		return "done";
	case QUEUE_WAITING:
		return "waiting";
	case QUEUE_ANY:
		return "any";
	default:
		return "?";
	}
}
