/* qsnap - the queue's snapshot: the whole state as a sequence of typed
 * entries, written without allocating (it runs in a forked child) and
 * loaded back with every field checked (it may come from a damaged disk;
 * fuzzed by tests/fuzz/fuzz_qrec.c).
 *
 * Entries, in this order (integers little-endian; str16 = u16 length +
 * bytes):
 *   META   u32 version (1), u64 lsn, u64 next_id, i64 clock
 *   TUBE   str16 name, i64 paused_until, 11 x u64 counters (put, take,
 *          ack, release, fail, bury, kick, delete, ttr_expired,
 *          session_released, replace)                     - each tube, in
 *          creation order (a task names its tube by that position)
 *   TASK   u64 id, u32 tube, u8 state, u32 pri, u32 ttr, u32 attempts,
 *          u32 max_attempts, i64 run_at, i64 created_at, i64 updated_at,
 *          i64 period, str16 key, str16 error, then if taken: u64 lease,
 *          u64 session, i64 taken_at, i64 deadline, u8 detached; then
 *          u8 has_repl, u32 payload length, the payload    - each task
 *   REPL   u64 id, u32 pri, u32 ttr, u32 max_attempts, i64 run_at,
 *          i64 period, u32 payload length, the payload  - right after a
 *          TASK with has_repl
 *   DEDUP  str16 key, u64 id, i64 expires  - each unexpired dedup entry,
 *          oldest first
 *   END    u32 tubes, u64 tasks, u64 dedup entries
 * A TASK or REPL entry is emitted as its fixed part from a stack buffer
 * plus the payload where it lies, so nothing is copied or allocated.
 *
 * Loading checks what apply guarantees: ids below next_id and unique,
 * keys unique, a ready task's run_at <= clock and a delayed one's later,
 * leases <= lsn, pauses after the clock, the counts in END. */
#include <stdlib.h>
#include <string.h>

#include "queue/qstate.h"
#include "sluice.h"

enum {
	QSNAP_VERSION = 1,
	/* The largest fixed part: a TASK with a 200-byte key and the
	 * longest error. */
	QSNAP_HDR_MAX = 128 + QREC_KEY_MAX + QREC_ERROR_MAX
};

/* ---- Writing ---------------------------------------------------------- */

/* A writer over a fixed stack buffer: no allocation. */
struct sw {
	uint8_t *p;
	size_t len;
	size_t cap;
	bool over;
};

static uint8_t *
sw_room(struct sw *w, size_t n)
{
	uint8_t *p;

	if (w->over || n > w->cap - w->len) {
		w->over = true;
		return NULL;
	}
	p = w->p + w->len;
	w->len += n;
	return p;
}

static void
sw_u8(struct sw *w, uint8_t v)
{
	uint8_t *p = sw_room(w, 1);

	if (p != NULL)
		*p = v;
}

static void
sw_u16(struct sw *w, uint16_t v)
{
	uint8_t *p = sw_room(w, 2);

	if (p != NULL)
		le_store_u16(p, v);
}

static void
sw_u32(struct sw *w, uint32_t v)
{
	uint8_t *p = sw_room(w, 4);

	if (p != NULL)
		le_store_u32(p, v);
}

static void
sw_u64(struct sw *w, uint64_t v)
{
	uint8_t *p = sw_room(w, 8);

	if (p != NULL)
		le_store_u64(p, v);
}

static void
sw_i64(struct sw *w, int64_t v)
{
	sw_u64(w, (uint64_t)v);
}

static void
sw_str16(struct sw *w, const char *s, size_t n)
{
	uint8_t *p;

	sw_u16(w, (uint16_t)n);
	if (n > 0 && (p = sw_room(w, n)) != NULL)
		memcpy(p, s, n);
}

static void
sw_counters(struct sw *w, const struct queue_counters *c)
{
	sw_u64(w, c->put);
	sw_u64(w, c->take);
	sw_u64(w, c->ack);
	sw_u64(w, c->release);
	sw_u64(w, c->fail);
	sw_u64(w, c->bury);
	sw_u64(w, c->kick);
	sw_u64(w, c->del);
	sw_u64(w, c->ttr_expired);
	sw_u64(w, c->session_released);
	sw_u64(w, c->replace);
}

static int
emit_task(const struct task *t, queue_emit_fn *emit, void *arg)
{
	const struct task_ext *e = t->ext;
	uint8_t mem[QSNAP_HDR_MAX];
	struct sw w = { mem, 0, sizeof(mem), false };
	int rc;

	sw_u64(&w, t->id);
	sw_u32(&w, t->tube->index);
	sw_u8(&w, t->state);
	sw_u32(&w, t->pri);
	sw_u32(&w, t->ttr);
	sw_u32(&w, t->attempts);
	sw_u32(&w, t->max_attempts);
	sw_i64(&w, t->run_at);
	sw_i64(&w, t->created_at);
	sw_i64(&w, t->updated_at);
	sw_i64(&w, e ? e->period : 0);
	if (e != NULL && e->key != NULL)
		sw_str16(&w, e->key->key, e->key->len);
	else
		sw_str16(&w, NULL, 0);
	if (e != NULL && e->error != NULL)
		sw_str16(&w, e->error, e->error_len);
	else
		sw_str16(&w, NULL, 0);
	if (t->state == QUEUE_TAKEN) {
		sw_u64(&w, e->lease);
		sw_u64(&w, e->session);
		sw_i64(&w, e->taken_at);
		sw_i64(&w, e->deadline);
		sw_u8(&w, e->detached ? 1 : 0);
	}
	sw_u8(&w, e != NULL && e->repl != NULL ? 1 : 0);
	sw_u32(&w, t->payload_len);
	if (w.over)
		return SLUICE_EINVAL; /* cannot happen: QSNAP_HDR_MAX */
	rc = emit(arg, QSNAP_TASK, mem, w.len, t->payload, t->payload_len);
	if (rc != 0 || e == NULL || e->repl == NULL)
		return rc;
	w.len = 0;
	sw_u64(&w, t->id);
	sw_u32(&w, e->repl->pri);
	sw_u32(&w, e->repl->ttr);
	sw_u32(&w, e->repl->max_attempts);
	sw_i64(&w, e->repl->run_at);
	sw_i64(&w, e->repl->period);
	sw_u32(&w, e->repl->payload_len);
	return emit(arg, QSNAP_REPL, mem, w.len, e->repl->payload,
	    e->repl->payload_len);
}

int
queue_snapshot_write(const struct queue *q, queue_emit_fn *emit, void *arg)
{
	uint8_t mem[512];
	struct sw w = { mem, 0, sizeof(mem), false };
	uint64_t ndedup = 0;
	int rc;

	sw_u32(&w, QSNAP_VERSION);
	sw_u64(&w, q->lsn);
	sw_u64(&w, q->next_id);
	sw_i64(&w, q->clock);
	if ((rc = emit(arg, QSNAP_META, mem, w.len, NULL, 0)) != 0)
		return rc;
	for (uint32_t i = 0; i < q->ntubes; i++) {
		const struct tube *tb = q->tubes[i];

		w.len = 0;
		sw_str16(&w, tb->name, tb->name_len);
		sw_i64(&w, tb->paused_until);
		sw_counters(&w, &tb->ctr);
		if ((rc = emit(arg, QSNAP_TUBE, mem, w.len, NULL, 0)) != 0)
			return rc;
	}
	for (uint32_t i = 0; i < q->ids.cap; i++)
		if (q->ids.slot[i] != NULL &&
		    (rc = emit_task(q->ids.slot[i], emit, arg)) != 0)
			return rc;
	for (const struct keyent *ke = q->dedup_head; ke; ke = ke->next) {
		if (ke->expires <= q->clock)
			continue; /* expired, not yet reclaimed */
		w.len = 0;
		sw_str16(&w, ke->key, ke->len);
		sw_u64(&w, ke->id);
		sw_i64(&w, ke->expires);
		if ((rc = emit(arg, QSNAP_DEDUP, mem, w.len, NULL, 0)) != 0)
			return rc;
		ndedup++;
	}
	w.len = 0;
	sw_u32(&w, q->ntubes);
	sw_u64(&w, q->ntasks);
	sw_u64(&w, ndedup);
	return emit(arg, QSNAP_END, mem, w.len, NULL, 0);
}

/* ---- Loading ---------------------------------------------------------- */

static bool
time_ok(int64_t t)
{
	return t >= 0 && t <= QREC_TIME_MAX;
}

static void
rd_counters(struct rd *r, struct queue_counters *c)
{
	c->put = rd_u64(r);
	c->take = rd_u64(r);
	c->ack = rd_u64(r);
	c->release = rd_u64(r);
	c->fail = rd_u64(r);
	c->bury = rd_u64(r);
	c->kick = rd_u64(r);
	c->del = rd_u64(r);
	c->ttr_expired = rd_u64(r);
	c->session_released = rd_u64(r);
	c->replace = rd_u64(r);
}

static int
load_meta(struct queue *q, struct rd *r)
{
	uint32_t version = rd_u32(r);
	uint64_t lsn = rd_u64(r);
	uint64_t next_id = rd_u64(r);
	int64_t clock = rd_i64(r);

	if (rd_failed(r) || rd_left(r) != 0 || version != QSNAP_VERSION ||
	    next_id == 0 || next_id == UINT64_MAX || !time_ok(clock))
		return SLUICE_ECORRUPT;
	if (q->lsn != 0 || q->ntasks != 0 || q->ntubes != 0 ||
	    q->next_id != 1 || q->clock != 0)
		return SLUICE_ECORRUPT; /* not a fresh queue */
	q->lsn = lsn;
	q->next_id = next_id;
	q->clock = clock;
	return 0;
}

static int
load_tube(struct queue *q, struct rd *r)
{
	struct queue_counters c;
	struct tube *tb;
	const char *name;
	size_t len;
	int64_t paused;
	bool created;
	int rc;

	name = rd_str16(r, QREC_NAME_MAX, &len);
	paused = rd_i64(r);
	rd_counters(r, &c);
	if (rd_failed(r) || rd_left(r) != 0 || !qrec_tube_valid(name, len))
		return SLUICE_ECORRUPT;
	if (paused != 0 && (paused <= q->clock || !time_ok(paused)))
		return SLUICE_ECORRUPT;
	if (qs_tube(q, name, len) != NULL || q->ntubes == UINT32_MAX)
		return SLUICE_ECORRUPT;
	if ((rc = qs_tube_get(q, name, len, &tb, &created)) != 0)
		return rc;
	tb->ctr = c;
	tube_counters_add(&q->ctr, &c);
	qs_pause(q, tb, paused);
	return 0;
}

/* A TASK entry, parsed. */
struct task_fields {
	uint64_t id;
	uint32_t tube;
	uint8_t state;
	uint32_t pri;
	uint32_t ttr;
	uint32_t attempts;
	uint32_t max_attempts;
	int64_t run_at;
	int64_t created_at;
	int64_t updated_at;
	int64_t period;
	const char *key;
	size_t key_len;
	const char *error;
	size_t error_len;
	uint64_t lease;
	uint64_t session;
	int64_t taken_at;
	int64_t deadline;
	uint8_t detached;
	uint8_t has_repl;
	uint32_t payload_len;
	const uint8_t *payload;
};

static int
read_task(const struct queue *q, struct rd *r, struct task_fields *f)
{
	memset(f, 0, sizeof(*f));
	f->id = rd_u64(r);
	f->tube = rd_u32(r);
	f->state = rd_u8(r);
	f->pri = rd_u32(r);
	f->ttr = rd_u32(r);
	f->attempts = rd_u32(r);
	f->max_attempts = rd_u32(r);
	f->run_at = rd_i64(r);
	f->created_at = rd_i64(r);
	f->updated_at = rd_i64(r);
	f->period = rd_i64(r);
	f->key = rd_str16(r, QREC_KEY_MAX, &f->key_len);
	f->error = rd_str16(r, QREC_ERROR_MAX, &f->error_len);
	if (f->state == QUEUE_TAKEN) {
		f->lease = rd_u64(r);
		f->session = rd_u64(r);
		f->taken_at = rd_i64(r);
		f->deadline = rd_i64(r);
		f->detached = rd_u8(r);
	}
	f->has_repl = rd_u8(r);
	f->payload_len = rd_u32(r);
	if (rd_failed(r) || rd_left(r) != f->payload_len ||
	    f->payload_len > QREC_PAYLOAD_MAX)
		return SLUICE_ECORRUPT;
	f->payload = rd_bytes(r, f->payload_len);
	if (f->id == 0 || f->id >= q->next_id || qs_task(q, f->id) != NULL)
		return SLUICE_ECORRUPT;
	if (f->tube >= q->ntubes || f->ttr == 0)
		return SLUICE_ECORRUPT;
	if (!time_ok(f->run_at) || !time_ok(f->created_at) ||
	    !time_ok(f->updated_at) || !time_ok(f->period))
		return SLUICE_ECORRUPT;
	if (f->key_len > 0 && qs_key(q, f->key, f->key_len) != NULL)
		return SLUICE_ECORRUPT;
	if (f->has_repl > 1 || (f->has_repl && f->state != QUEUE_TAKEN))
		return SLUICE_ECORRUPT;
	switch (f->state) {
	case QUEUE_READY:
		return f->run_at <= q->clock ? 0 : SLUICE_ECORRUPT;
	case QUEUE_DELAYED:
		return f->run_at > q->clock ? 0 : SLUICE_ECORRUPT;
	case QUEUE_TAKEN:
		if (f->lease == 0 || f->lease > q->lsn || f->detached > 1 ||
		    !time_ok(f->taken_at) || !time_ok(f->deadline) ||
		    f->deadline < f->taken_at)
			return SLUICE_ECORRUPT;
		return 0;
	case QUEUE_BURIED:
		return 0;
	default:
		return SLUICE_ECORRUPT;
	}
}

static int
load_task(struct queue *q, struct rd *r)
{
	struct task_fields f;
	struct keyent *ke = NULL;
	char *err = NULL;
	struct task *t;
	int rc;

	if ((rc = read_task(q, r, &f)) != 0)
		return rc;
	t = task_new(f.payload, f.payload_len);
	if (t == NULL)
		return SLUICE_ENOMEM;
	t->id = f.id;
	t->tube = q->tubes[f.tube];
	t->pri = f.pri;
	t->ttr = f.ttr;
	t->attempts = f.attempts;
	t->max_attempts = f.max_attempts;
	t->run_at = f.run_at;
	t->created_at = f.created_at;
	t->updated_at = f.updated_at;
	rc = SLUICE_ENOMEM;
	if ((f.period != 0 || f.key_len > 0 || f.error_len > 0 ||
	        f.state == QUEUE_TAKEN) &&
	    task_ext_need(t) != 0)
		goto fail;
	if (f.error_len > 0) {
		if ((err = malloc(f.error_len)) == NULL)
			goto fail;
		memcpy(err, f.error, f.error_len);
	}
	if (f.key_len > 0 &&
	    ((ke = qs_keyent_new(q, f.key, f.key_len)) == NULL ||
	        qs_reserve_key(q) != 0))
		goto fail;
	if ((rc = qs_reserve_id(q)) != 0 ||
	    (rc = qs_reserve(q, t->tube, f.state, !f.detached, f.session)) != 0)
		goto fail;

	idx_insert(&q->ids, t);
	if (t->ext != NULL) {
		t->ext->period = f.period;
		task_put_error(t, err, f.error_len);
		if (f.state == QUEUE_TAKEN) {
			t->ext->lease = f.lease;
			t->ext->session = f.session;
			t->ext->taken_at = f.taken_at;
			t->ext->deadline = f.deadline;
			t->ext->detached = f.detached;
		}
	}
	if (ke != NULL) {
		ke->task = t;
		ke->id = t->id;
		qs_key_insert(q, ke);
		t->ext->key = ke;
		q->nkeys++;
	}
	qs_place(q, t, f.state);
	q->ntasks++;
	q->load.last = f.has_repl ? t : NULL;
	return 0;

fail:
	free(err);
	free(ke);
	task_free(t);
	return rc;
}

static int
load_repl(struct queue *q, struct rd *r)
{
	struct task *t = q->load.last;
	struct repl *rp;
	uint64_t id = rd_u64(r);
	uint32_t pri = rd_u32(r);
	uint32_t ttr = rd_u32(r);
	uint32_t max_attempts = rd_u32(r);
	int64_t run_at = rd_i64(r);
	int64_t period = rd_i64(r);
	uint32_t len = rd_u32(r);
	const uint8_t *payload;

	if (rd_failed(r) || rd_left(r) != len || len > QREC_PAYLOAD_MAX)
		return SLUICE_ECORRUPT;
	payload = rd_bytes(r, len);
	if (t == NULL || id != t->id || ttr == 0 || !time_ok(run_at) ||
	    !time_ok(period))
		return SLUICE_ECORRUPT;
	if ((rp = repl_new(payload, len)) == NULL)
		return SLUICE_ENOMEM;
	rp->pri = pri;
	rp->ttr = ttr;
	rp->max_attempts = max_attempts;
	rp->run_at = run_at;
	rp->period = period;
	t->ext->repl = rp;
	q->load.last = NULL;
	return 0;
}

static int
load_dedup(struct queue *q, struct rd *r)
{
	struct keyent *ke;
	const char *key;
	size_t len;
	uint64_t id;
	int64_t expires;

	key = rd_str16(r, QREC_KEY_MAX, &len);
	id = rd_u64(r);
	expires = rd_i64(r);
	if (rd_failed(r) || rd_left(r) != 0 || len == 0)
		return SLUICE_ECORRUPT;
	/* expires = a record's time + a u32 of milliseconds. */
	if (expires <= q->clock ||
	    expires > QREC_TIME_MAX + (int64_t)UINT32_MAX)
		return SLUICE_ECORRUPT;
	if (id == 0 || id >= q->next_id || qs_task(q, id) != NULL ||
	    qs_key(q, key, len) != NULL)
		return SLUICE_ECORRUPT;
	if ((ke = qs_keyent_new(q, key, len)) == NULL)
		return SLUICE_ENOMEM;
	if (qs_reserve_key(q) != 0) {
		free(ke);
		return SLUICE_ENOMEM;
	}
	ke->id = id;
	ke->expires = expires;
	qs_key_insert(q, ke);
	qs_dedup_append(q, ke);
	q->load.ndedup++;
	return 0;
}

static int
load_end(struct queue *q, struct rd *r)
{
	uint32_t ntubes = rd_u32(r);
	uint64_t ntasks = rd_u64(r);
	uint64_t ndedup = rd_u64(r);

	if (rd_failed(r) || rd_left(r) != 0 || ntubes != q->ntubes ||
	    ntasks != q->ntasks || ndedup != q->load.ndedup)
		return SLUICE_ECORRUPT;
	q->load.done = true;
	return 0;
}

/* May an entry of `type` come after the entries loaded so far? */
static bool
in_order(const struct qsnap_load *l, uint16_t type)
{
	if (l->done)
		return false;
	if (l->last != NULL) /* a TASK with has_repl wants its REPL */
		return type == QSNAP_REPL;
	switch (type) {
	case QSNAP_META:
		return l->phase == 0;
	case QSNAP_TUBE:
		return l->phase == QSNAP_META || l->phase == QSNAP_TUBE;
	case QSNAP_TASK:
		return l->phase >= QSNAP_META && l->phase <= QSNAP_REPL;
	case QSNAP_REPL:
		return false;
	case QSNAP_DEDUP:
	case QSNAP_END:
		return l->phase != 0;
	default:
		return false;
	}
}

int
queue_snapshot_load(
    struct queue *q, uint16_t type, const void *data, size_t len)
{
	struct rd r;
	int rc;

	if (!in_order(&q->load, type))
		return SLUICE_ECORRUPT;
	rd_init(&r, data, len);
	switch (type) {
	case QSNAP_META:
		rc = load_meta(q, &r);
		break;
	case QSNAP_TUBE:
		rc = load_tube(q, &r);
		break;
	case QSNAP_TASK:
		rc = load_task(q, &r);
		break;
	case QSNAP_REPL:
		rc = load_repl(q, &r);
		break;
	case QSNAP_DEDUP:
		rc = load_dedup(q, &r);
		break;
	default:
		rc = load_end(q, &r);
		break;
	}
	if (rc == 0)
		q->load.phase = type;
	return rc;
}

bool
queue_snapshot_done(const struct queue *q)
{
	return q->load.done;
}
