/* qsnap - the queue's snapshot: the whole state as a sequence of typed
 * entries, written without allocating (it runs in a forked child) and
 * loaded back with every field checked (it may come from a damaged disk;
 * fuzzed by tests/fuzz/fuzz_qrec.c).
 *
 * Entries, in this order (fixed integers little-endian; str16 = u16 length
 * + bytes; var = unsigned LEB128, at most 10 bytes, no needless trailing
 * zero byte; zvar = a signed value zigzag-coded into a var):
 *   META   u32 version (4; 3 and 2 are read too), u64 lsn, u64 next_id,
 *          i64 clock, u64 tasks, u64 taken tasks, u64 keys (of live
 *          tasks, plus the DEDUP entries that follow)
 *   TUBE   str16 name, i64 paused_until, 11 x u64 counters (put, take,
 *          ack, release, fail, bury, kick, delete, ttr_expired,
 *          session_released, replace), u64 ready, u64 delayed, u64 buried,
 *          u64 done (version 3) (its tasks in those states) - each tube, in
 *          creation order (a task names its tube by that position)
 *   TUBE_SET (18) the settings of the TUBE just before, only when it has
 *          any: the settings part of a TUBE_SET record body (qrec.h:
 *          u8 set, u32 ttr, u32 max_attempts, u32 backoff_base,
 *          u32 backoff_cap, i64 keep_done, u8 lost_lease_immediate,
 *          str16 dead_letter). A snapshot of tubes without settings has
 *          none, and reads as before they existed.
 *   TASK   u8 flags (bits 0-2 state, 3 key, 4 error, 5 period, 6 a REPL
 *          follows, 7 detached), var id, var tube, var pri, var ttr,
 *          var attempts, var max_attempts, zvar clock - created_at,
 *          zvar run_at - created_at, zvar updated_at - created_at,
 *          then each only when its flag or state says so: var period,
 *          var length + key, var length + error, taken: var lease,
 *          var session, zvar taken_at - created_at, zvar deadline -
 *          taken_at; done (state 5): zvar taken_at - created_at,
 *          var length + result (0: none), and no key (a done task's key
 *          is the DEDUP entry naming its id); ready, delayed, buried:
 *          var last take (0: never taken, else zigzag(taken_at -
 *          created_at) + 1); then var payload length, the payload
 *                                                         - each task
 *          (version 2 has neither done tasks nor the last take)
 *   REPL   u64 id, u32 pri, u32 ttr, u32 max_attempts, i64 run_at,
 *          i64 period, u32 payload length, the payload  - right after a
 *          TASK with flag 6
 *   TASKVER u64 id, u64 version, u64 pending version  - right after the
 *          TASK (and its REPL) of a task with a version or whose pending
 *          replacement has one (0: none; not both 0), so a task without
 *          costs no byte, and a snapshot of a queue without versions is
 *          one that loaders older than this entry read too
 *   DEDUP  str16 key, u64 id, i64 expires, str16 tube (version 4)  -
 *          each unexpired dedup entry, oldest first; one whose id is a
 *          done task's is its key (and names that task's tube). Keys are
 *          per tube since version 4; a version 3 entry names no tube: it
 *          is its done task's tube's, or, when its task is gone, a
 *          reservation of its key in every tube (written back with an
 *          empty tube) until it expires, as it was when it was made
 *   HOURLY, HOUR  the statistics per hour of each tube that has them
 *          (layout in hourly.c)
 *   END    u32 tubes, u64 tasks, u64 dedup entries, and when there are
 *          HOURLY entries, u32 their number
 * A TASK or REPL entry is emitted as its fixed part from a stack buffer
 * plus the payload where it lies, so nothing is copied or allocated. A
 * TASK is about 16 bytes besides its payload: most fields are small, and
 * the times are near each other and near the clock.
 *
 * The counts in META and TUBE let the loader size the id index and the
 * heaps once, before the first task, instead of growing them (and
 * rehashing the index) all along; END checks that they were right.
 *
 * Loading checks what apply guarantees: ids below next_id and unique,
 * keys unique, a ready task's run_at <= clock and a delayed one's later,
 * leases >= 1 (a lease names its epoch: qrec_lease), pauses after the clock,
 * the counts in META, TUBE and END. To change a layout, bump QSNAP_VERSION
 * and keep reading the version before it (a data directory of the last
 * release must load). */
#include <stdlib.h>
#include <string.h>

#include "queue/hourly.h"
#include "queue/qstate.h"
#include "sluice.h"

enum {
	QSNAP_VERSION = 4,
	QSNAP_VERSION_MIN = 2, /* no done tasks, no last take */
	/* 3: DEDUP entries name no tube (keys were one namespace) */
	/* The largest fixed part: a TASK with a 200-byte key and the
	 * longest error. */
	QSNAP_HDR_MAX = 192 + QREC_KEY_MAX + QREC_ERROR_MAX + QREC_RESULT_MAX,
	/* Tasks ahead of the one being written whose memory is fetched. */
	QSNAP_PREFETCH = 8,
	/* The most the key count and the TUBE counts reserve up front: a
	 * damaged count cannot ask for more (past it the key index and the
	 * heaps grow as entries come). The id index is sized for META's
	 * count, whatever it is (see load_meta). */
	QSNAP_RESERVE_MAX = 1 << 24,
};

enum {
	TF_STATE = 0x07,
	TF_KEY = 0x08,
	TF_ERROR = 0x10,
	TF_PERIOD = 0x20,
	TF_REPL = 0x40,
	TF_DETACHED = 0x80,
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

static uint8_t *
put_var(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* a - b, zigzag-coded: small either way round. */
static uint64_t
zz_diff(int64_t a, int64_t b)
{
	uint64_t d = (uint64_t)a - (uint64_t)b;

	return (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);
}

static uint8_t *
put_bytes(uint8_t *p, const void *s, size_t n)
{
	p = put_var(p, n);
	if (n > 0)
		memcpy(p, s, n);
	return p + n;
}

/* A waiting or buried task's last take as the snapshot holds it: 0 for
 * none, else the zigzag of taken_at - created_at, plus 1. */
static uint64_t
last_take(const struct task *t)
{
	if (t->ext == NULL || t->ext->taken_at == 0)
		return 0;
	return zz_diff(t->ext->taken_at, t->created_at) + 1;
}

static int
emit_task(
    const struct queue *q, const struct task *t, queue_emit_fn *emit, void *arg)
{
	const struct task_ext *e = t->ext;
	uint8_t mem[QSNAP_HDR_MAX];
	struct sw w = { mem, 0, sizeof(mem), false };
	uint8_t *p = mem + 1;
	uint8_t flags = t->state;
	int rc;

	p = put_var(p, t->id);
	p = put_var(p, t->tube->index);
	p = put_var(p, t->pri);
	p = put_var(p, t->ttr);
	p = put_var(p, t->attempts);
	p = put_var(p, t->max_attempts);
	p = put_var(p, zz_diff(q->clock, t->created_at));
	p = put_var(p, zz_diff(t->run_at, t->created_at));
	p = put_var(p, zz_diff(t->updated_at, t->created_at));
	if (e != NULL) {
		if (e->period != 0) {
			flags |= TF_PERIOD;
			p = put_var(p, (uint64_t)e->period);
		}
		if (e->key != NULL && t->state != QUEUE_DONE) {
			flags |= TF_KEY;
			p = put_bytes(p, e->key->key, e->key->len);
		}
		if (e->error != NULL) {
			flags |= TF_ERROR;
			p = put_bytes(p, e->error, e->error_len);
		}
		if (t->state == QUEUE_TAKEN) {
			p = put_var(p, e->lease);
			p = put_var(p, e->session);
			p = put_var(p, zz_diff(e->taken_at, t->created_at));
			p = put_var(p, zz_diff(e->deadline, e->taken_at));
			if (e->detached)
				flags |= TF_DETACHED;
		}
		if (t->state == QUEUE_DONE) {
			p = put_var(p, zz_diff(e->taken_at, t->created_at));
			p = put_bytes(p, e->result, e->result_len);
		}
		if (e->repl != NULL)
			flags |= TF_REPL;
	}
	/* The last take of a waiting or buried task (a taken one has its
	 * lease fields, a done one its own taken_at). */
	if (t->state != QUEUE_TAKEN && t->state != QUEUE_DONE)
		p = put_var(p, last_take(t));
	p = put_var(p, t->payload_len);
	mem[0] = flags;
	rc = emit(arg, QSNAP_TASK, mem, (size_t)(p - mem), t->payload,
	    t->payload_len);
	if (rc != 0 || e == NULL || e->repl == NULL)
		return rc;
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

/* The TASKVER entry of a task that has a version, or whose pending
 * replacement has one. */
static int
emit_versions(const struct task *t, queue_emit_fn *emit, void *arg)
{
	uint64_t v = task_version(t);
	uint64_t pv = task_has_repl(t) ? t->ext->repl->version : 0;
	uint8_t mem[24];
	struct sw w = { mem, 0, sizeof(mem), false };

	if (v == 0 && pv == 0)
		return 0;
	sw_u64(&w, t->id);
	sw_u64(&w, v);
	sw_u64(&w, pv);
	return emit(arg, QSNAP_TASKVER, mem, w.len, NULL, 0);
}

/* The layout of qrec_tube_conf_put(), without allocating. */
static int
emit_tube_set(const struct qrec_tube_conf *c, queue_emit_fn *emit, void *arg)
{
	uint8_t mem[64 + QREC_NAME_MAX];
	struct sw w = { mem, 0, sizeof(mem), false };

	sw_u8(&w, c->set);
	sw_u32(&w, c->ttr);
	sw_u32(&w, c->max_attempts);
	sw_u32(&w, c->backoff_base);
	sw_u32(&w, c->backoff_cap);
	sw_i64(&w, c->keep_done);
	sw_u8(&w, c->lost_lease_immediate ? 1 : 0);
	sw_str16(&w, c->dead_letter, c->dead_letter_len);
	return emit(arg, QSNAP_TUBE_SET, mem, w.len, NULL, 0);
}

/* Dedup entries a snapshot holds: those not yet expired. */
static uint64_t
live_dedup(const struct queue *q)
{
	uint64_t n = 0;

	for (const struct keyent *ke = q->dedup_head; ke; ke = ke->next)
		n += ke->expires > q->clock;
	return n;
}

int
queue_snapshot_write(const struct queue *q, queue_emit_fn *emit, void *arg)
{
	uint8_t mem[512];
	struct sw w = { mem, 0, sizeof(mem), false };
	uint64_t ndedup = 0;
	uint32_t nhourly;
	int rc;

	sw_u32(&w, QSNAP_VERSION);
	sw_u64(&w, q->lsn);
	sw_u64(&w, q->next_id);
	sw_i64(&w, q->clock);
	sw_u64(&w, q->ntasks);
	sw_u64(&w, q->count[QUEUE_TAKEN]);
	sw_u64(&w, q->nkeys + live_dedup(q));
	if ((rc = emit(arg, QSNAP_META, mem, w.len, NULL, 0)) != 0)
		return rc;
	for (uint32_t i = 0; i < q->ntubes; i++) {
		const struct tube *tb = q->tubes[i];

		w.len = 0;
		sw_str16(&w, tb->name, tb->name_len);
		sw_i64(&w, tb->paused_until);
		sw_counters(&w, &tb->ctr);
		sw_u64(&w, tb->ready.len);
		sw_u64(&w, tb->delayed.len);
		sw_u64(&w, tb->buried.len);
		sw_u64(&w, tb->done.len);
		if ((rc = emit(arg, QSNAP_TUBE, mem, w.len, NULL, 0)) != 0)
			return rc;
		if (tb->conf != NULL &&
		    (rc = emit_tube_set(&tb->conf->v, emit, arg)) != 0)
			return rc;
	}
	/* In slot order: a loader whose index has the same size puts each
	 * task near the one before. The tasks themselves lie all over the
	 * heap, so their memory is asked for a few slots ahead. */
	for (uint32_t i = 0; i < q->ids.cap; i++) {
		const struct task *t = idx_at(&q->ids, i);

		if (i + QSNAP_PREFETCH < q->ids.cap &&
		    idx_at(&q->ids, i + QSNAP_PREFETCH) != NULL)
			__builtin_prefetch(idx_at(&q->ids, i + QSNAP_PREFETCH));
		if (t != NULL &&
		    ((rc = emit_task(q, t, emit, arg)) != 0 ||
		        (rc = emit_versions(t, emit, arg)) != 0))
			return rc;
	}
	for (const struct keyent *ke = q->dedup_head; ke; ke = ke->next) {
		if (ke->expires <= q->clock)
			continue; /* expired, not yet reclaimed */
		w.len = 0;
		sw_str16(&w, ke->key, ke->len);
		sw_u64(&w, ke->id);
		sw_i64(&w, ke->expires);
		sw_str16(&w, keyent_tube(ke), ke->tube_len);
		if ((rc = emit(arg, QSNAP_DEDUP, mem, w.len, NULL, 0)) != 0)
			return rc;
		ndedup++;
	}
	if ((rc = hourly_snapshot_write(q, emit, arg, &nhourly)) != 0)
		return rc;
	w.len = 0;
	sw_u32(&w, q->ntubes);
	sw_u64(&w, q->ntasks);
	sw_u64(&w, ndedup);
	if (nhourly != 0)
		sw_u32(&w, nhourly);
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

/* Room for `n` more, as counted in a snapshot: at most
 * QSNAP_RESERVE_MAX at once, so a damaged count cannot ask for the moon. */
static uint32_t
reserve_count(uint64_t n)
{
	return n > QSNAP_RESERVE_MAX ? QSNAP_RESERVE_MAX : (uint32_t)n;
}

static int
load_meta(struct queue *q, struct rd *r)
{
	uint32_t version = rd_u32(r);
	uint64_t lsn = rd_u64(r);
	uint64_t next_id = rd_u64(r);
	int64_t clock = rd_i64(r);
	uint64_t ntasks = rd_u64(r);
	uint64_t ntaken = rd_u64(r);
	uint64_t nkeys = rd_u64(r);
	int rc;

	if (rd_failed(r) || rd_left(r) != 0 || version < QSNAP_VERSION_MIN ||
	    version > QSNAP_VERSION || next_id == 0 || next_id == UINT64_MAX ||
	    !time_ok(clock) || ntasks >= next_id || ntaken > ntasks)
		return SLUICE_ECORRUPT;
	if (q->lsn != 0 || q->ntasks != 0 || q->ntubes != 0 ||
	    q->next_id != 1 || q->clock != 0)
		return SLUICE_ECORRUPT; /* not a fresh queue */
	/* The index as it is just after growing (3/5 full), so the first
	 * puts after a restart do not move every task again. Not capped as
	 * the heaps are: tasks come in the order of the writer's index, and
	 * in a table too small for all of them, items in that order would
	 * pile up at its front. A state at LSN n holds at most n tasks. */
	if (ntasks > lsn || ntasks > UINT32_MAX / 2)
		return SLUICE_ECORRUPT;
	if ((rc = idx_reserve(&q->ids, (uint32_t)(ntasks + ntasks / 4))) != 0 ||
	    (rc = idx_reserve(&q->keys, reserve_count(nkeys))) != 0 ||
	    (rc = heap_reserve(&q->taken, reserve_count(ntaken))) != 0)
		return rc;
	q->lsn = lsn;
	q->next_id = next_id;
	q->clock = clock;
	q->load.ntasks = ntasks;
	q->load.ntaken = ntaken;
	q->load.nkeys = nkeys;
	q->load.nplaced = ntasks - ntaken;
	q->load.version = version;
	return 0;
}

static int
load_tube(struct queue *q, struct rd *r)
{
	struct queue_counters c;
	struct qsnap_want *want;
	struct tube *tb;
	const char *name;
	size_t len;
	int64_t paused;
	uint64_t n[4];
	bool created;
	int rc;

	name = rd_str16(r, QREC_NAME_MAX, &len);
	paused = rd_i64(r);
	rd_counters(r, &c);
	n[0] = rd_u64(r);
	n[1] = rd_u64(r);
	n[2] = rd_u64(r);
	n[3] = q->load.version >= 3 ? rd_u64(r) : 0;
	if (rd_failed(r) || rd_left(r) != 0 || !qrec_tube_valid(name, len))
		return SLUICE_ECORRUPT;
	if (paused != 0 && (paused <= q->clock || !time_ok(paused)))
		return SLUICE_ECORRUPT;
	/* Tubes count no more tasks than META did, all told. */
	if (n[0] > q->load.nplaced || n[1] > q->load.nplaced - n[0] ||
	    n[2] > q->load.nplaced - n[0] - n[1] ||
	    n[3] > q->load.nplaced - n[0] - n[1] - n[2])
		return SLUICE_ECORRUPT;
	if (qs_tube(q, name, len) != NULL || q->ntubes == UINT32_MAX)
		return SLUICE_ECORRUPT;
	want = realloc(q->load.want, (q->ntubes + 1) * sizeof(*want));
	if (want == NULL)
		return SLUICE_ENOMEM;
	q->load.want = want;
	if ((rc = qs_tube_get(q, name, len, &tb, &created)) != 0)
		return rc;
	want[tb->index].ready = n[0];
	want[tb->index].delayed = n[1];
	want[tb->index].buried = n[2];
	want[tb->index].done = n[3];
	q->load.nplaced -= n[0] + n[1] + n[2] + n[3];
	tb->ctr = c;
	tube_counters_add(&q->ctr, &c);
	qs_pause(q, tb, paused);
	/* A failed reservation leaves the tube: the load stops there. */
	if ((rc = heap_reserve(&tb->ready, reserve_count(n[0]))) != 0 ||
	    (rc = heap_reserve(&tb->age, reserve_count(n[0]))) != 0 ||
	    (rc = heap_reserve(&tb->delayed, reserve_count(n[1]))) != 0 ||
	    (rc = heap_reserve(&tb->buried, reserve_count(n[2]))) != 0 ||
	    (rc = heap_reserve(&tb->done, reserve_count(n[3]))) != 0 ||
	    (rc = heap_reserve(&q->done, reserve_count(n[3]))) != 0)
		return rc;
	return 0;
}

/* The settings of the tube loaded last, which has none yet. */
static int
load_tube_set(struct queue *q, struct rd *r)
{
	struct tube *tb = q->ntubes > 0 ? q->tubes[q->ntubes - 1] : NULL;
	struct qrec_tube_conf c;

	qrec_tube_conf_get(r, &c);
	if (rd_failed(r) || rd_left(r) != 0 || tb == NULL || tb->conf != NULL ||
	    c.set == 0 || !qrec_tube_conf_valid(&c, tb->name, tb->name_len))
		return SLUICE_ECORRUPT;
	return tube_conf_new(&c, &tb->conf);
}

/* A var (see the top): its value, or 0 with the reader failed when the
 * bytes end first, it is longer than 10 bytes or does not fit in 64 bits,
 * or its last byte is a needless zero. */
static inline uint64_t
rd_var(struct rd *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (r->off >= r->len)
			break;
		b = r->p[r->off++];
		if (shift == 63 && b > 1)
			break;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			if (b == 0 && shift > 0)
				break;
			return v;
		}
	}
	r->bad = true;
	return 0;
}

/* `base` plus a zigzag-coded difference, as a time (an invalid sum
 * fails time_ok). */
static inline int64_t
zz_add(int64_t base, uint64_t z)
{
	uint64_t d = (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);

	return (int64_t)((uint64_t)base + d);
}

/* `base` plus a zvar, as a time. */
static inline int64_t
rd_time(struct rd *r, int64_t base)
{
	return zz_add(base, rd_var(r));
}

/* A var length, then that many bytes (at most max). */
static inline const char *
rd_var_bytes(struct rd *r, size_t max, size_t *n)
{
	uint64_t len = rd_var(r);

	if (len > max || len > rd_left(r)) {
		r->bad = true;
		*n = 0;
		return NULL;
	}
	*n = (size_t)len;
	return (const char *)rd_bytes(r, (size_t)len);
}

/* A TASK entry, parsed. */
struct task_fields {
	uint64_t id;
	uint64_t tube;
	uint8_t state;
	uint8_t flags;
	uint64_t pri;
	uint64_t ttr;
	uint64_t attempts;
	uint64_t max_attempts;
	int64_t run_at;
	int64_t created_at;
	int64_t updated_at;
	uint64_t period;
	const char *key;
	size_t key_len;
	const char *error;
	size_t error_len;
	uint64_t lease;
	uint64_t session;
	int64_t taken_at;
	int64_t deadline;
	const char *result;
	size_t result_len;
	uint64_t payload_len;
	const uint8_t *payload;
};

static int
read_task(const struct queue *q, struct rd *r, struct task_fields *f)
{
	uint64_t ago;

	f->flags = rd_u8(r);
	f->state = f->flags & TF_STATE;
	f->id = rd_var(r);
	f->tube = rd_var(r);
	f->pri = rd_var(r);
	f->ttr = rd_var(r);
	f->attempts = rd_var(r);
	f->max_attempts = rd_var(r);
	ago = rd_var(r);
	ago = (ago >> 1) ^ (uint64_t) - (int64_t)(ago & 1);
	f->created_at = (int64_t)((uint64_t)q->clock - ago);
	f->run_at = rd_time(r, f->created_at);
	f->updated_at = rd_time(r, f->created_at);
	f->period = (f->flags & TF_PERIOD) ? rd_var(r) : 0;
	f->key = NULL;
	f->key_len = 0;
	f->error = NULL;
	f->error_len = 0;
	if (f->flags & TF_KEY)
		f->key = rd_var_bytes(r, QREC_KEY_MAX, &f->key_len);
	if (f->flags & TF_ERROR)
		f->error = rd_var_bytes(r, QREC_ERROR_MAX, &f->error_len);
	f->lease = 0;
	f->session = 0;
	f->taken_at = 0;
	f->deadline = 0;
	if (f->state == QUEUE_TAKEN) {
		f->lease = rd_var(r);
		f->session = rd_var(r);
		f->taken_at = rd_time(r, f->created_at);
		f->deadline = rd_time(r, f->taken_at);
	} else if (f->state != QUEUE_DONE && q->load.version >= 3) {
		uint64_t last = rd_var(r); /* see last_take() */

		if (last > 0) {
			f->taken_at = zz_add(f->created_at, last - 1);
			if (!time_ok(f->taken_at) || f->taken_at == 0)
				return SLUICE_ECORRUPT;
		}
	}
	f->result = NULL;
	f->result_len = 0;
	if (f->state == QUEUE_DONE) {
		f->taken_at = rd_time(r, f->created_at);
		f->result = rd_var_bytes(r, QREC_RESULT_MAX, &f->result_len);
	}
	f->payload_len = rd_var(r);
	if (rd_failed(r) || rd_left(r) != f->payload_len ||
	    f->payload_len > QREC_PAYLOAD_MAX)
		return SLUICE_ECORRUPT;
	f->payload = rd_bytes(r, f->payload_len);
	if (f->id == 0 || f->id >= q->next_id || qs_task(q, f->id) != NULL)
		return SLUICE_ECORRUPT;
	if (f->tube >= q->ntubes || f->ttr == 0 || f->ttr > UINT32_MAX ||
	    f->pri > UINT32_MAX || f->attempts > UINT32_MAX ||
	    f->max_attempts > UINT32_MAX)
		return SLUICE_ECORRUPT;
	if (!time_ok(f->run_at) || !time_ok(f->created_at) ||
	    !time_ok(f->updated_at) || f->period > (uint64_t)QREC_TIME_MAX)
		return SLUICE_ECORRUPT;
	/* Flags stand for something present: no empty key or error, no
	 * zero period. */
	if (((f->flags & TF_KEY) && f->key_len == 0) ||
	    ((f->flags & TF_ERROR) && f->error_len == 0) ||
	    ((f->flags & TF_PERIOD) && f->period == 0))
		return SLUICE_ECORRUPT;
	if (f->key_len > 0 &&
	    qs_key(q, q->tubes[f->tube]->name, q->tubes[f->tube]->name_len,
	        f->key, f->key_len) != NULL)
		return SLUICE_ECORRUPT;
	if ((f->flags & (TF_REPL | TF_DETACHED)) && f->state != QUEUE_TAKEN)
		return SLUICE_ECORRUPT;
	switch (f->state) {
	case QUEUE_READY:
		return f->run_at <= q->clock ? 0 : SLUICE_ECORRUPT;
	case QUEUE_DELAYED:
		return f->run_at > q->clock ? 0 : SLUICE_ECORRUPT;
	case QUEUE_TAKEN:
		if (f->lease == 0 || !time_ok(f->taken_at) ||
		    !time_ok(f->deadline) || f->deadline < f->taken_at)
			return SLUICE_ECORRUPT;
		return 0;
	case QUEUE_BURIED:
		return 0;
	case QUEUE_DONE:
		if (q->load.version < 3 || (f->flags & TF_KEY) ||
		    f->run_at <= q->clock || !time_ok(f->taken_at) ||
		    f->taken_at > f->updated_at)
			return SLUICE_ECORRUPT;
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
	char *err = NULL, *res = NULL;
	struct task *t;
	bool detached;
	int rc;

	if ((rc = read_task(q, r, &f)) != 0)
		return rc;
	detached = (f.flags & TF_DETACHED) != 0;
	t = task_new(f.payload, f.payload_len);
	if (t == NULL)
		return SLUICE_ENOMEM;
	t->id = f.id;
	t->tube = q->tubes[f.tube];
	t->pri = (uint32_t)f.pri;
	t->ttr = (uint32_t)f.ttr;
	t->attempts = (uint32_t)f.attempts;
	t->max_attempts = (uint32_t)f.max_attempts;
	t->run_at = f.run_at;
	t->created_at = f.created_at;
	t->updated_at = f.updated_at;
	rc = SLUICE_ENOMEM;
	if ((f.period != 0 || f.key_len > 0 || f.error_len > 0 ||
	        f.state == QUEUE_TAKEN || f.state == QUEUE_DONE ||
	        f.taken_at != 0) &&
	    task_ext_need(t) != 0)
		goto fail;
	if (f.result_len > 0) {
		if ((res = malloc(f.result_len)) == NULL)
			goto fail;
		memcpy(res, f.result, f.result_len);
	}
	if (f.error_len > 0) {
		if ((err = malloc(f.error_len)) == NULL)
			goto fail;
		memcpy(err, f.error, f.error_len);
	}
	if (f.key_len > 0 &&
	    ((ke = qs_keyent_new(q, t->tube->name, t->tube->name_len, f.key,
	          f.key_len)) == NULL ||
	        qs_reserve_key(q) != 0))
		goto fail;
	if ((rc = qs_reserve_id(q)) != 0 ||
	    (rc = qs_reserve(q, t->tube, f.state, !detached, f.session)) != 0)
		goto fail;

	idx_insert(&q->ids, t);
	if (t->ext != NULL) {
		t->ext->period = (int64_t)f.period;
		task_put_error(t, err, f.error_len);
		t->ext->taken_at = f.taken_at;
		if (f.state == QUEUE_TAKEN) {
			t->ext->lease = f.lease;
			t->ext->session = f.session;
			t->ext->deadline = f.deadline;
			t->ext->detached = detached;
		}
		if (f.state == QUEUE_DONE) {
			t->ext->result = res;
			t->ext->result_len = (uint16_t)f.result_len;
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
	q->load.last = (f.flags & TF_REPL) ? t : NULL;
	return 0;

fail:
	free(err);
	free(res);
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

/* The versions of a task loaded before: it has a key for the first, a
 * pending replacement for the second, and none set yet. */
static int
load_taskver(struct queue *q, struct rd *r)
{
	uint64_t id = rd_u64(r);
	uint64_t v = rd_u64(r);
	uint64_t pv = rd_u64(r);
	struct task *t;

	if (rd_failed(r) || rd_left(r) != 0 || (v == 0 && pv == 0))
		return SLUICE_ECORRUPT;
	if ((t = qs_task(q, id)) == NULL || !task_has_key(t) ||
	    t->ext->key->version != 0)
		return SLUICE_ECORRUPT;
	if (pv != 0 && (!task_has_repl(t) || t->ext->repl->version != 0))
		return SLUICE_ECORRUPT;
	t->ext->key->version = v;
	if (pv != 0)
		t->ext->repl->version = pv;
	return 0;
}

static int
load_dedup(struct queue *q, struct rd *r)
{
	struct keyent *ke;
	struct task *t;
	const char *key, *tube = "";
	size_t len, tube_len = 0;
	uint64_t id;
	int64_t expires;

	key = rd_str16(r, QREC_KEY_MAX, &len);
	id = rd_u64(r);
	expires = rd_i64(r);
	if (q->load.version >= 4)
		tube = rd_str16(r, QREC_NAME_MAX, &tube_len);
	if (rd_failed(r) || rd_left(r) != 0 || len == 0 ||
	    (tube_len > 0 && !qrec_tube_valid(tube, tube_len)))
		return SLUICE_ECORRUPT;
	/* expires = a record's time + a u32 of milliseconds. */
	if (expires <= q->clock ||
	    expires > QREC_TIME_MAX + (int64_t)UINT32_MAX)
		return SLUICE_ECORRUPT;
	/* The task it names, if any, is a done task whose key this is. An
	 * entry of a version 3 snapshot names no tube: it is the tube of the
	 * done task it names, else every tube (keys were one namespace
	 * then), until it expires. */
	t = qs_task(q, id);
	if (q->load.version < 4 && t != NULL) {
		tube = t->tube->name;
		tube_len = t->tube->name_len;
	}
	if (id == 0 || id >= q->next_id ||
	    qs_key(q, tube, tube_len, key, len) != NULL ||
	    (t != NULL &&
	        (t->state != QUEUE_DONE || t->ext->key != NULL ||
	            t->tube->name_len != tube_len ||
	            memcmp(t->tube->name, tube, tube_len) != 0)))
		return SLUICE_ECORRUPT;
	if ((ke = qs_keyent_new(q, tube, tube_len, key, len)) == NULL)
		return SLUICE_ENOMEM;
	if (qs_reserve_key(q) != 0) {
		free(ke);
		return SLUICE_ENOMEM;
	}
	ke->id = id;
	ke->expires = expires;
	if (t != NULL)
		t->ext->key = ke;
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
	uint32_t nhourly = rd_left(r) != 0 ? rd_u32(r) : 0;

	if (rd_failed(r) || rd_left(r) != 0 || ntubes != q->ntubes ||
	    ntasks != q->ntasks || ndedup != q->load.ndedup)
		return SLUICE_ECORRUPT;
	/* Every HOURLY entry END counts, each with the HOUR entries it
	 * announced. */
	if (nhourly != q->load.nhourly || q->load.hours_left != 0)
		return SLUICE_ECORRUPT;
	/* The counts META and TUBE announced. */
	if (ntasks != q->load.ntasks ||
	    q->count[QUEUE_TAKEN] != q->load.ntaken ||
	    q->nkeys + ndedup != q->load.nkeys)
		return SLUICE_ECORRUPT;
	for (uint32_t i = 0; i < q->ntubes; i++) {
		const struct tube *tb = q->tubes[i];
		const struct qsnap_want *w = &q->load.want[i];

		if (tb->ready.len != w->ready ||
		    tb->delayed.len != w->delayed ||
		    tb->buried.len != w->buried || tb->done.len != w->done)
			return SLUICE_ECORRUPT;
	}
	free(q->load.want);
	q->load.want = NULL;
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
	case QSNAP_TUBE_SET: /* load_tube_set checks it follows its TUBE */
		return l->phase == QSNAP_TUBE;
	case QSNAP_TASK:
		return (l->phase >= QSNAP_META && l->phase <= QSNAP_REPL) ||
		    l->phase == QSNAP_TASKVER;
	case QSNAP_REPL:
		return false;
	case QSNAP_TASKVER:
		return l->phase == QSNAP_TASK || l->phase == QSNAP_REPL ||
		    l->phase == QSNAP_TASKVER;
	case QSNAP_DEDUP:
	case QSNAP_END:
	case QSNAP_HOURLY:
		return l->phase != 0 && l->hours_left == 0;
	case QSNAP_HOUR:
		return l->phase == QSNAP_HOURLY || l->phase == QSNAP_HOUR;
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
	case QSNAP_TASKVER:
		rc = load_taskver(q, &r);
		break;
	case QSNAP_TUBE_SET:
		rc = load_tube_set(q, &r);
		type = QSNAP_TUBE; /* what may follow is what follows a TUBE */
		break;
	case QSNAP_HOURLY:
		rc = hourly_load_tube(q, &r);
		break;
	case QSNAP_HOUR:
		rc = hourly_load_hour(q, &r);
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

const char *
queue_snapshot_unusable(
    const struct queue *q, uint64_t name_lsn, uint64_t snap_lsn)
{
	if (!q->load.done)
		return "the snapshot holds no END entry: its queue state is "
		       "incomplete";
	if (snap_lsn != name_lsn)
		return "the snapshot's header names another LSN than its file "
		       "name";
	if (q->lsn > snap_lsn)
		return "the snapshot's queue state is past the LSN it is "
		       "named after";
	return NULL;
}
