/* qsnap_load - loads the queue's snapshot (the layout of its entries is
 * in qsnap.c, which writes it) back into an empty queue, entry by entry,
 * with every field checked: it may come from a damaged disk, so nothing
 * is trusted that apply would not have allowed (ids below next_id and
 * unique, keys unique, a ready task due and a delayed one not, leases
 * >= 1, pauses after the clock, the counts in META, TUBE and END). The
 * counts in META and TUBE size the id index and the heaps once, capped by
 * QSNAP_RESERVE_MAX. Fuzzed by tests/fuzz/fuzz_qrec.c. */
#include <stdlib.h>
#include <string.h>

#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/hourly.h"
#include "queue/qstate.h"
#include "queue/throttle.h"
#include "sluice.h"
#include "queue/qsnap_fmt.h"

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

/* The room heap h has beyond its items, faulted in ahead by the task
 * memory's worker during a large load (tslab_prefault). */
static void
prefault_heap(struct queue *q, const struct heap *h)
{
	if (h->item != NULL && h->cap > h->len)
		tslab_prefault(&q->pool, h->item + h->len,
		    (size_t)(h->cap - h->len) * sizeof(*h->item));
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
	/* Room in the index's directory for all of them (tidx.h): they
	 * come mostly in the order of their ids, each next to the one
	 * before. A state at LSN n holds at most n records' tasks: one a
	 * record, QREC_PUTS_MAX a PUTS. */
	if ((lsn <= UINT64_MAX / QREC_PUTS_MAX &&
	        ntasks > lsn * QREC_PUTS_MAX) ||
	    ntasks > UINT32_MAX / 2)
		return SLUICE_ECORRUPT;
	tidx_expect(&q->ids, ntasks);
	if ((rc = idx_reserve(&q->keys, reserve_count(nkeys))) != 0 ||
	    (rc = heap_reserve(&q->taken, reserve_count(ntaken))) != 0)
		return rc;
	tslab_expect(&q->pool, ntasks); /* their memory faulted in ahead */
	prefault_heap(q, &q->taken);
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
	/* The arrays the load fills, faulted in beside it (a snapshot of a
	 * million tasks or more: tslab_prefault). */
	prefault_heap(q, &tb->ready);
	prefault_heap(q, &tb->age);
	prefault_heap(q, &tb->delayed);
	prefault_heap(q, &tb->buried);
	prefault_heap(q, &tb->done);
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

/* A var (see the top), byte by byte: its value, or 0 with the reader
 * failed when the bytes end first, it is longer than 10 bytes or does
 * not fit in 64 bits, or its last byte is a needless zero. */
static uint64_t
rd_var_slow(struct rd *r)
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

/* A var, as rd_var_slow reads it. With 10 bytes left (a var's most), the
 * bytes are read without a bound check each; a byte under 0x80, as most
 * of a task's numbers are, is its value at once. A snapshot holds about
 * 12 vars a task. */
static inline uint64_t
rd_var(struct rd *r)
{
	const uint8_t *p = r->p + r->off;
	uint64_t v;

	if (r->off > r->len || r->len - r->off < 10)
		return rd_var_slow(r);
	if (p[0] < 0x80) {
		r->off++;
		return p[0];
	}
	v = p[0] & 0x7f;
	for (unsigned i = 1; i < 10; i++) {
		uint64_t b = p[i];

		v |= (b & 0x7f) << (7 * i);
		if (b < 0x80) {
			if (b == 0 || (i == 9 && b > 1))
				break;
			r->off += i + 1;
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

static inline __attribute__((always_inline)) int
read_task_at(const struct queue *q, struct rd *r, struct task_fields *f)
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
	case QUEUE_WAITING: /* its DEP entry comes later (deps_check) */
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

/* read_task_at on a copy of the reader: the compiler keeps a local
 * reader's offset in a register, where it reloads the caller's after each
 * field stored (f's numbers may be the reader's, as far as it knows). */
static int
read_task(const struct queue *q, struct rd *r, struct task_fields *f)
{
	struct rd c = *r;
	int rc = read_task_at(q, &c, f);

	*r = c;
	return rc;
}

static int
load_task(struct queue *q, struct rd *r)
{
	struct task_fields f;
	struct keyent *ke = NULL;
	struct group *g = NULL;
	char *err = NULL, *res = NULL;
	struct task *t;
	bool detached;
	int rc;

	if ((rc = read_task(q, r, &f)) != 0)
		return rc;
	detached = (f.flags & TF_DETACHED) != 0;
	t = task_new(&q->pool, f.payload, f.payload_len);
	if (t == NULL)
		return SLUICE_ENOMEM;
	t->id = f.id;
	t->tslot = q->tubes[f.tube]->slot;
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
	    ((ke = qs_keyent_new(q, qs_tube_of(q, t)->name,
	          qs_tube_of(q, t)->name_len, f.key, f.key_len)) == NULL ||
	        qs_reserve_key(q) != 0))
		goto fail;
	if ((rc = qs_reserve_id(q)) != 0 ||
	    (rc = qs_reserve(
	         q, qs_tube_of(q, t), f.state, !detached, f.session)) != 0)
		goto fail;
	if (q->load.group_id != 0) {
		rc = SLUICE_ECORRUPT;
		if (q->load.group_id != t->id ||
		    (rc = groups_prepare(&q->grouped, qs_tube_of(q, t),
		         q->load.group, q->load.group_len, &g)) != 0)
			goto fail;
		groups_join(qs_tube_of(q, t), g, t);
		q->load.group_id = 0;
	}

	tidx_insert(&q->ids, t);
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
	task_free(&q->pool, t);
	return rc;
}

/* The group of the TASK entry that follows. */
static int
load_group(struct queue *q, struct rd *r)
{
	uint64_t id = rd_u64(r);
	size_t len;
	const char *name = rd_str16(r, QREC_GROUP_MAX, &len);

	if (rd_failed(r) || rd_left(r) != 0 || id == 0 ||
	    !qrec_group_valid(name, len) || qs_task(q, id) != NULL)
		return SLUICE_ECORRUPT;
	q->load.group_id = id;
	q->load.group_len = (uint16_t)len;
	memcpy(q->load.group, name, len);
	return 0;
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
		tube = qs_tube_of(q, t)->name;
		tube_len = qs_tube_of(q, t)->name_len;
	}
	if (id == 0 || id >= q->next_id ||
	    qs_key(q, tube, tube_len, key, len) != NULL ||
	    (t != NULL &&
	        (t->state != QUEUE_DONE || t->ext->key != NULL ||
	            qs_tube_of(q, t)->name_len != tube_len ||
	            memcmp(qs_tube_of(q, t)->name, tube, tube_len) != 0)))
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
	q->load.dedup = ke;
	return 0;
}

/* A done task loaded before keeps its key, held (no longer reserved), for
 * the version it had. */
static int
load_keyheld(struct queue *q, struct rd *r)
{
	uint64_t id = rd_u64(r), v = rd_u64(r);
	const char *key, *tube;
	size_t len, tube_len;
	struct keyent *ke;
	struct task *t;

	key = rd_str16(r, QREC_KEY_MAX, &len);
	tube = rd_str16(r, QREC_NAME_MAX, &tube_len);
	if (rd_failed(r) || rd_left(r) != 0 || len == 0 || v == 0 ||
	    !qrec_tube_valid(tube, tube_len))
		return SLUICE_ECORRUPT;
	t = qs_task(q, id);
	if (t == NULL || t->state != QUEUE_DONE || task_has_key(t) ||
	    qs_tube_of(q, t)->name_len != tube_len ||
	    memcmp(qs_tube_of(q, t)->name, tube, tube_len) != 0 ||
	    qs_key(q, tube, tube_len, key, len) != NULL)
		return SLUICE_ECORRUPT;
	if (task_ext_need(t) != 0 ||
	    (ke = qs_keyent_new(q, tube, tube_len, key, len)) == NULL)
		return SLUICE_ENOMEM;
	if (qs_reserve_key(q) != 0) {
		free(ke);
		return SLUICE_ENOMEM;
	}
	ke->id = id;
	ke->version = v;
	ke->held = 1;
	t->ext->key = ke;
	qs_key_insert(q, ke);
	q->nheld++;
	return 0;
}

/* The version of the key of the DEDUP entry just before. */
static int
load_dedupver(struct queue *q, struct rd *r)
{
	uint64_t v = rd_u64(r);

	if (rd_failed(r) || rd_left(r) != 0 || v == 0 ||
	    q->load.dedup == NULL || q->load.dedup->version != 0)
		return SLUICE_ECORRUPT;
	q->load.dedup->version = v;
	return 0;
}

static int
load_end(struct queue *q, struct rd *r)
{
	uint32_t ntubes = rd_u32(r);
	uint64_t ntasks = rd_u64(r);
	uint64_t ndedup = rd_u64(r);
	uint32_t nhourly = rd_left(r) != 0 ? rd_u32(r) : 0;
	/* the CANCEL and OUTCOME entries, when there were any */
	uint64_t nmarks = rd_left(r) != 0 ? rd_u64(r) : 0;
	uint64_t noutcomes = rd_left(r) != 0 ? rd_u64(r) : 0;

	if (rd_failed(r) || rd_left(r) != 0 || ntubes != q->ntubes ||
	    ntasks != q->ntasks || ndedup != q->load.ndedup ||
	    nmarks != q->load.nmarks || noutcomes != q->load.noutcomes)
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

		if (tube_nready(tb) != w->ready ||
		    tb->delayed.len != w->delayed ||
		    tb->buried.len != w->buried || tb->done.len != w->done)
			return SLUICE_ECORRUPT;
	}
	if (q->load.dep_left != 0 || deps_check(q, NULL) != 0)
		return SLUICE_ECORRUPT;
	free(q->load.want);
	q->load.want = NULL;
	q->load.done = true;
	tslab_settle(&q->pool); /* the spares made ahead for the load go */
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
	if (l->group_id != 0) /* a GROUP wants its TASK */
		return type == QSNAP_TASK;
	if (l->dep_left != 0) /* a DEP wants its children */
		return type == QSNAP_DEPC;
	switch (type) {
	case QSNAP_META:
		return l->phase == 0;
	case QSNAP_TUBE:
		return l->phase == QSNAP_META || l->phase == QSNAP_TUBE;
	case QSNAP_TUBE_SET:   /* load_tube_set checks it follows its TUBE */
	case QSNAP_TUBE_LIMIT: /* and qs_flow_load that it comes once */
	case QSNAP_GROUP_SET:  /* qs_glimit_load: each name once */
		return l->phase == QSNAP_TUBE;
	case QSNAP_GROUP:
	case QSNAP_TASK:
		return (l->phase >= QSNAP_META && l->phase <= QSNAP_REPL) ||
		    l->phase == QSNAP_TASKVER || l->phase == QSNAP_KEYHELD;
	case QSNAP_KEYHELD:
		return l->phase == QSNAP_TASK || l->phase == QSNAP_REPL ||
		    l->phase == QSNAP_TASKVER;
	case QSNAP_REPL:
		return false;
	case QSNAP_TASKVER:
		return l->phase == QSNAP_TASK || l->phase == QSNAP_REPL ||
		    l->phase == QSNAP_TASKVER;
	case QSNAP_DEDUPVER:
		return l->phase == QSNAP_DEDUP;
	case QSNAP_DEDUP:
	case QSNAP_END:
	case QSNAP_HOURLY:
		return l->phase != 0 && l->hours_left == 0;
	case QSNAP_HOUR:
		return l->phase == QSNAP_HOURLY || l->phase == QSNAP_HOUR;
	case QSNAP_DEP: /* after the DEDUP and HOURLY entries */
		return l->phase != 0 && l->phase != QSNAP_META &&
		    l->hours_left == 0 && l->dep_left == 0;
	case QSNAP_DEPC:
		return (l->phase == QSNAP_DEP || l->phase == QSNAP_DEPC) &&
		    l->dep_left > 0;
	case QSNAP_CANCEL: /* after the tasks */
	case QSNAP_OUTCOME:
	case QSNAP_THROTTLE: /* after the DEDUP and HOURLY entries */
	case QSNAP_SCHED:    /* and after those */
	case QSNAP_BATCH:    /* after the tasks, then their members */
	case QSNAP_BMEMBER:
	case QSNAP_MOVEIN:
	case QSNAP_MOVEOUT:
	case QSNAP_MOVEPEND:
	case QSNAP_MOVEPLACE:
	case QSNAP_MOVEKEEP:
		/* right after META too: a queue without a tube may hold
		 * these (END checks that no tube or task was left out) */
		return l->phase != 0 && l->hours_left == 0 && l->dep_left == 0;
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
	case QSNAP_GROUP:
		rc = load_group(q, &r);
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
	case QSNAP_DEDUPVER:
		rc = load_dedupver(q, &r);
		break;
	case QSNAP_KEYHELD:
		rc = load_keyheld(q, &r);
		break;
	case QSNAP_TUBE_SET:
		rc = load_tube_set(q, &r);
		type = QSNAP_TUBE; /* what may follow is what follows a TUBE */
		break;
	case QSNAP_TUBE_LIMIT:
		rc = qs_flow_load(q, &r);
		type = QSNAP_TUBE;
		break;
	case QSNAP_GROUP_SET:
		rc = qs_glimit_load(q, &r);
		type = QSNAP_TUBE;
		break;
	case QSNAP_HOURLY:
		rc = hourly_load_tube(q, &r);
		break;
	case QSNAP_HOUR:
		rc = hourly_load_hour(q, &r);
		break;
	case QSNAP_THROTTLE:
		rc = qs_throttle_load(q, &r);
		break;
	case QSNAP_SCHED:
		rc = qs_sched_load(q, &r);
		break;
	case QSNAP_CANCEL:
		rc = qs_cancel_load(q, &r);
		q->load.nmarks++;
		break;
	case QSNAP_OUTCOME:
		rc = qs_outcome_load(q, &r);
		q->load.noutcomes++;
		break;
	case QSNAP_DEP:
	case QSNAP_DEPC:
		rc = deps_snapshot_load(q, type, &r);
		break;
	case QSNAP_BATCH:
	case QSNAP_BMEMBER:
		rc = batch_snapshot_load(q, type, &r);
		break;
	case QSNAP_MOVEIN:
	case QSNAP_MOVEOUT:
	case QSNAP_MOVEPEND:
	case QSNAP_MOVEPLACE:
	case QSNAP_MOVEKEEP:
		rc = move_snapshot_load(q, type, &r);
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
