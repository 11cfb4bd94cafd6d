/* Tests of src/queue's snapshots (test_queue.c has the task state
 * machine): a snapshot plus the log's tail equals a full replay; broken
 * snapshots, their counts and variable fields are refused; older
 * versions still load; tube settings and deleted tubes carry over; a
 * snapshot write allocates nothing and apply out of memory changes
 * nothing; a replay gives the same dump. Requests go the server's way
 * (decide, encode, decode, apply: t_queue_ops.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "t_lib.h"
#include "t_queue.h"
#include "t_queue_ops.h"

#define T0 TQ_T0 /* where tq_setup starts the clock */

/* The binary is linked with --wrap for malloc, calloc, realloc,
 * aligned_alloc and mmap (see queue.cmake), so a test can count the
 * allocations of a call: mmap is how the queue gets a slab of task memory
 * (tslab.h), aligned_alloc how it gets a task in a sanitized build. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void *__real_mmap(
    void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
void *__wrap_mmap(
    void *addr, size_t len, int prot, int flags, int fd, off_t off);

static unsigned long allocs;
static unsigned long fail_at; /* this allocation fails; 0: none does */

static bool
alloc_fails(void)
{
	return ++allocs == fail_at;
}

void *
__wrap_malloc(size_t n)
{
	return alloc_fails() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t n, size_t size)
{
	return alloc_fails() ? NULL : __real_calloc(n, size);
}

void *
__wrap_realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : __real_realloc(p, n);
}

void *
__wrap_aligned_alloc(size_t align, size_t n)
{
	return alloc_fails() ? NULL : __real_aligned_alloc(align, n);
}

void *
__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (alloc_fails()) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return __real_mmap(addr, len, prot, flags, fd, off);
}

/* ---- snapshots
 * ------------------------------------------------------------------ */

/* A queue with tasks in every state, keys, a dedup entry, a pending
 * replacement and a pause. */
static void
build_rich_state(struct tq *h)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_str s = { "t", 1 };
	uint64_t id, lease;

	for (int i = 0; i < 20; i++) {
		char key[16];

		req_for(&req, i % 3 ? "t" : "u", "payload");
		snprintf(key, sizeof(key), "key-%d", i);
		req.key = i % 2 ? key : NULL;
		req.key_len = i % 2 ? strlen(key) : 0;
		req.delay_ms = i % 4 == 0 ? 5000 : 0;
		req.period_ms = i == 5 ? 777 : 0;
		req.max_attempts = (uint32_t)i % 3;
		req.pri = (uint32_t)i % 5;
		put_req(h, &req);
		h->now += 3;
	}
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(fail_task(h, id, lease, "bad"), 0);
	assert_int_equal(take(h, "t", 2, &id, &lease), 0);
	assert_int_equal(bury(h, id, lease), 0);
	assert_int_equal(take_from(h, &s, 1, 3, true, &id, &lease), 0);
	assert_int_equal(take(h, "t", 4, &id, &lease), 0);
	if (view(h, id).key_len > 0) {
		req_for(&req, "t", "replacement");
		req.key = view(h, id).key;
		req.key_len = view(h, id).key_len;
		req.replace = true;
		assert_int_equal(try_put(h, &req, &res), 0);
		assert_true(res.replaced);
	}
	assert_int_equal(del_key_in(h, "t", "key-3"), SLUICE_ENOTFOUND);
	assert_int_equal(del_key_in(h, "u", "key-3"), 0);
	/* a completed keyed task: its key is kept for the dedup window */
	req_for(&req, "done", "did it");
	req.key = "done-key";
	req.key_len = 8;
	put_req(h, &req);
	assert_int_equal(take(h, "done", 5, &id, &lease), 0);
	assert_int_equal(ack(h, id, lease), 0);
	assert_int_equal(pause_tube(h, "u", h->now + 100000), 0);
}

/* Loading a snapshot and applying the records after it gives the state
 * that applying everything gives. */
static void
test_snapshot_then_tail_equals_full_replay(void **state)
{
	struct tq *h = tq_of(state);
	struct queue *copy, *full;
	struct buf snap;
	size_t cut;
	uint64_t id, lease;

	build_rich_state(h);
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	cut = h->nlog;
	/* More records after the snapshot. */
	h->now += 10000;
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_int_equal(ack(h, id, lease), 0);
	assert_int_equal(expire(h), 0);
	assert_int_equal(restart(h), 1); /* session 4's; 3's is detached */
	put(h, "v", "late");

	copy = queue_new(NULL);
	assert_int_equal(tq_snap_load(copy, &snap), 0);
	assert_int_equal(queue_check(copy, NULL), 0);
	assert_true(queue_lsn(copy) == h->log[cut - 1].lsn);
	assert_int_equal(tq_replay(h, copy, cut, h->nlog), 0);
	assert_int_equal(queue_check(copy, NULL), 0);
	full = queue_new(NULL);
	assert_int_equal(tq_replay(h, full, 0, h->nlog), 0);
	assert_true(tq_same(h->q, full, h->now));
	assert_true(tq_same(h->q, copy, h->now));
	queue_free(copy);
	queue_free(full);
	buf_fini(&snap);
}

/* Applies a decided record with the 1st, 2nd, ... allocation failing in
 * turn: each failure must be SLUICE_ENOMEM and leave the dump as it was,
 * until the apply gets all it needs. Returns how many failures. */
static int
apply_under_faults(struct tq *h, int rc, const struct qrec *decided)
{
	struct buf before, after, body;
	struct qrec rec;
	int failures = 0;

	assert_int_equal(rc, 0);
	buf_init(&before);
	buf_init(&after);
	buf_init(&body);
	assert_int_equal(qrec_encode(decided, &body), 0);
	assert_int_equal(
	    qrec_decode(decided->type, body.data, body.len, &rec), 0);
	assert_int_equal(queue_dump(h->q, &before), 0);
	for (unsigned long n = 1; n < 100; n++) {
		allocs = 0;
		fail_at = n;
		rc = queue_apply(h->q, h->lsn + 1, h->now, &rec);
		fail_at = 0;
		if (rc == 0)
			break;
		assert_int_equal(rc, SLUICE_ENOMEM);
		failures++;
		buf_reset(&after);
		assert_int_equal(queue_dump(h->q, &after), 0);
		assert_int_equal(before.len, after.len);
		assert_memory_equal(before.data, after.data, before.len);
		tq_check(h);
	}
	assert_int_equal(rc, 0);
	h->lsn++;
	tq_check(h);
	buf_fini(&before);
	buf_fini(&after);
	buf_fini(&body);
	return failures;
}

/* Out of memory in the middle of an apply changes nothing: every record
 * type that allocates, with each of its allocations failing in turn. */
static void
test_apply_out_of_memory_changes_nothing(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_str s = { "t", 1 };
	struct queue_take_req tr = { &s, 1, 8, false };
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_ack_req ar;
	struct queue_fail_req fr;
	struct queue_flush_req flr = { "u", 1 };
	struct queue_pause_req pr = { "new-tube", 8, T0 + 100, true };
	struct queue_task_view v;
	struct qrec rec;
	uint64_t a;
	int failures = 0;

	put(h, "u", "in u");
	req_for(&req, "t", "first");
	req.key = "k";
	req.key_len = 1;
	req.period_ms = 100;
	failures += apply_under_faults(
	    h, queue_decide_put(h->q, h->now, &req, &rec, &res), &rec);
	a = res.id;
	failures += apply_under_faults(
	    h, queue_decide_take(h->q, h->now, &tr, &rec), &rec);
	memset(&fr, 0, sizeof(fr));
	fr.id = a;
	fr.error = "it broke";
	fr.error_len = 8;
	fr.set_delay = true;
	fr.force = true;
	failures += apply_under_faults(
	    h, queue_decide_fail(h->q, h->now, &fr, &rec), &rec);
	failures += apply_under_faults(
	    h, queue_decide_take(h->q, h->now, &tr, &rec), &rec);
	req_for(&req, "t", "second version");
	req.key = "k";
	req.key_len = 1;
	req.replace = true;
	failures += apply_under_faults(
	    h, queue_decide_put(h->q, h->now, &req, &rec, &res), &rec);
	memset(&ar, 0, sizeof(ar));
	ar.id = a;
	ar.force = true;
	failures += apply_under_faults(
	    h, queue_decide_ack(h->q, h->now, &ar, &rec), &rec);
	v = view(h, a);
	assert_payload(&v, "second version");
	failures += apply_under_faults(
	    h, queue_decide_take(h->q, h->now, &tr, &rec), &rec);
	ar.to_tube = "elsewhere";
	ar.to_tube_len = 9;
	failures += apply_under_faults(
	    h, queue_decide_ack(h->q, h->now, &ar, &rec), &rec);
	req.tube = "elsewhere";
	req.tube_len = 9;
	req.payload = "third";
	req.payload_len = 5;
	failures += apply_under_faults(
	    h, queue_decide_put(h->q, h->now, &req, &rec, &res), &rec);
	failures += apply_under_faults(
	    h, queue_decide_pause(h->q, h->now, &pr, &rec), &rec);
	failures += apply_under_faults(
	    h, queue_decide_flush(h->q, h->now, &flr, &rec), &rec);
	v = view(h, a);
	assert_payload(&v, "third");
	fprintf(stderr, "allocations failed: %d\n", failures);
	assert_true(failures > 15);
}

struct fixed {
	uint8_t *p;
	size_t len;
	size_t cap;
	int entries;
	int stop_at; /* return an error from this entry on; 0: never */
};

static int
fixed_emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	struct fixed *f = arg;

	(void)type;
	if (++f->entries == f->stop_at)
		return -5;
	if (alen + blen > f->cap - f->len)
		return SLUICE_ELIMIT;
	memcpy(f->p + f->len, a, alen);
	if (blen > 0)
		memcpy(f->p + f->len + alen, b, blen);
	f->len += alen + blen;
	return 0;
}

/* The end of the var at `off` in d[0..len). */
static size_t
skip_var(const uint8_t *d, size_t len, size_t off)
{
	while (off < len && (d[off] & 0x80))
		off++;
	assert_true(off < len);
	return off + 1;
}

/* The var at `off` (at most 64 bits). */
static uint64_t
var_at(const uint8_t *d, size_t len, size_t off)
{
	uint64_t v = 0;

	for (unsigned shift = 0; off < len; shift += 7, off++) {
		v |= (uint64_t)(d[off] & 0x7f) << shift;
		if (!(d[off] & 0x80))
			break;
	}
	return v;
}

/* A DEDUP entry (str16 key, u64 id, i64 expires, str16 tube) as a
 * snapshot before keys per tube wrote it, without the tube; `empty`:
 * with an empty tube instead, the reservation of every tube such an
 * entry loads to when its task is gone. Returns its new length. */
static size_t
dedup_without_tube(uint8_t *d, size_t len, bool empty)
{
	size_t off = 2 + le_load_u16(d) + 16;

	assert_true(off + 2 + le_load_u16(d + off) == len);
	if (!empty)
		return off;
	le_store_u16(d + off, 0);
	return off + 2;
}

/* Rewrites one snapshot entry (version 3, as qsnap.c lays it out) in
 * place and returns its new length: with `v2`, as version 2 wrote it
 * (META's version, no done count in TUBE, no last take in a waiting or
 * buried TASK); else still version 3 but with every last take 0 (never
 * taken), the state a version 2 snapshot loads to. */
static size_t
entry_before_last_take(uint16_t type, uint8_t *d, size_t len, bool v2)
{
	size_t off = 1, end;
	uint8_t flags;

	if (v2 && type == QSNAP_META)
		le_store_u32(d, 2);
	if (type == QSNAP_DEDUP) /* v2 names no tube: every tube's then */
		return dedup_without_tube(d, len, !v2);
	if (v2 && type == QSNAP_TUBE) {
		assert_true(le_load_u64(d + len - 8) == 0); /* no done task */
		return len - 8;
	}
	if (type != QSNAP_TASK)
		return len;
	flags = d[0];
	assert_true((flags & 0x07) != QUEUE_DONE || !v2);
	if ((flags & 0x07) == QUEUE_TAKEN || (flags & 0x07) == QUEUE_DONE)
		return len;
	for (int i = 0; i < 9; i++) /* id .. updated_at */
		off = skip_var(d, len, off);
	if (flags & 0x20) /* period */
		off = skip_var(d, len, off);
	for (uint8_t f = 0x08; f <= 0x10; f <<= 1) /* key, error */
		if (flags & f)
			off = skip_var(d, len, off) + var_at(d, len, off);
	end = skip_var(d, len, off); /* the last take */
	if (!v2)
		d[off++] = 0;
	memmove(d + off, d + end, len - end);
	return len - (end - off);
}

/* A snapshot of the previous layout (version 2: no last take of waiting
 * tasks) still loads; one of the current layout keeps the last take of
 * a released task. */
static void
test_snapshot_of_version_2_loads_and_3_keeps_the_last_take(void **state)
{
	struct tq *h = tq_of(state);
	struct buf snap, old;
	struct queue *q;
	struct rd r;
	uint64_t a, b, id, lease;

	a = put(h, "t", "p");
	b = put(h, "t", "q");
	assert_int_equal(take(h, "t", 1, &id, &lease), 0);
	assert_true(id == a);
	h->now += 10;
	assert_int_equal(release(h, a, lease, 0, false, 0), 0);
	assert_true(view(h, a).taken_at == T0);
	assert_true(view(h, b).taken_at == 0);
	buf_init(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	q = queue_new(NULL);
	assert_int_equal(tq_snap_load(q, &snap), 0);
	assert_true(tq_same(h->q, q, h->now));
	queue_free(q);

	/* version 2: what its writer gave for the same queue */
	assert_int_equal(del_id(h, a), 0);
	buf_reset(&snap);
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, &snap), 0);
	buf_init(&old);
	rd_init(&r, snap.data, snap.len);
	while (rd_left(&r) > 0) {
		uint16_t type = rd_u16(&r);
		uint32_t len = rd_u32(&r);
		uint8_t e[1024]; /* the largest: an HOUR entry, 460 bytes */

		assert_false(rd_failed(&r) || len > sizeof(e));
		memcpy(e, rd_bytes(&r, len), len);
		if (type == QSNAP_TASK)
			assert_int_equal(e[len - 3], 0); /* never taken */
		len = (uint32_t)entry_before_last_take(type, e, len, true);
		buf_put_u16(&old, type);
		buf_put_u32(&old, len);
		buf_put(&old, e, len);
	}
	q = queue_new(NULL);
	assert_int_equal(tq_snap_load(q, &old), 0);
	assert_true(tq_same(h->q, q, h->now));
	queue_free(q);
	buf_fini(&old);
	buf_fini(&snap);
}

/* Writing a snapshot allocates nothing (it runs in a forked child) and
 * stops at the first error of its emitter. */
static void
test_snapshot_write_allocates_nothing(void **state)
{
	struct tq *h = tq_of(state);
	struct fixed f = { NULL, 0, 1 << 20, 0, 0 };
	unsigned long before;

	/* The count works: a put allocates. */
	before = allocs;
	build_rich_state(h);
	assert_true(allocs > before);
	f.p = malloc(f.cap);
	assert_non_null(f.p);
	before = allocs;
	assert_int_equal(queue_snapshot_write(h->q, fixed_emit, &f), 0);
	assert_true(allocs == before);
	assert_true(f.entries > 20 && f.len > 0);
	f.len = 0;
	f.entries = 0;
	f.stop_at = 7;
	assert_int_equal(queue_snapshot_write(h->q, fixed_emit, &f), -5);
	assert_int_equal(f.entries, 7);
	free(f.p);
}

struct entries {
	uint16_t type[256];
	struct buf data[256];
	size_t n;
};

static int
keep_entry(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	struct entries *e = arg;

	if (e->n == 256)
		return SLUICE_ELIMIT;
	e->type[e->n] = type;
	buf_init(&e->data[e->n]);
	buf_put(&e->data[e->n], a, alen);
	buf_put(&e->data[e->n], b, blen);
	e->n++;
	return 0;
}

/* Loads entries [0, n) except `skip` (n+1: none) with entry `bad` cut by
 * one byte; returns the first error. */
static int
load_entries(struct entries *e, size_t skip, size_t cut, bool dup)
{
	struct queue *q = queue_new(NULL);
	int rc = 0;

	for (size_t i = 0; i < e->n && rc == 0; i++) {
		size_t len = e->data[i].len;

		if (i == skip)
			continue;
		if (i == cut)
			len--;
		rc = queue_snapshot_load(q, e->type[i], e->data[i].data, len);
		if (rc == 0 && dup && i == skip + 1)
			rc = queue_snapshot_load(
			    q, e->type[i], e->data[i].data, len);
	}
	if (rc == 0 && !queue_snapshot_done(q))
		rc = SLUICE_ECORRUPT;
	queue_free(q);
	return rc;
}

/* A snapshot missing an entry, with an entry cut short, or with one
 * repeated, does not load. */
static void
test_snapshot_load_refuses_broken_snapshots(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	struct qrec rec;

	assert_non_null(e);
	build_rich_state(h);
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	assert_true(e->n > 20);
	assert_int_equal(load_entries(e, SIZE_MAX, SIZE_MAX, false), 0);
	for (size_t i = 0; i < e->n; i++) {
		assert_int_equal(
		    load_entries(e, i, SIZE_MAX, false), SLUICE_ECORRUPT);
		if (e->data[i].len > 0)
			assert_int_equal(load_entries(e, SIZE_MAX, i, false),
			    SLUICE_ECORRUPT);
		if (i + 1 < e->n && e->type[i + 1] != QSNAP_END)
			assert_int_equal(load_entries(e, i, SIZE_MAX, true),
			    SLUICE_ECORRUPT);
	}
	/* Apply is refused while a snapshot is half loaded. */
	{
		struct queue *q = queue_new(NULL);

		assert_int_equal(queue_snapshot_load(q, e->type[0],
		                     e->data[0].data, e->data[0].len),
		    0);
		memset(&rec, 0, sizeof(rec));
		rec.type = QREC_PAUSE;
		rec.u.pause.tube = "t";
		rec.u.pause.tube_len = 1;
		assert_int_equal(queue_apply(q, queue_lsn(q) + 1, T0, &rec),
		    SLUICE_ECORRUPT);
		queue_free(q);
	}
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* A snapshot of version 2 (written before done tasks and the last take:
 * no done count in TUBE entries, no last take in TASK entries, version 2
 * in META) still loads, to the same state but for the last takes. */
static void
test_snapshot_version_2_still_loads(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	struct queue *q = queue_new(NULL), *want = queue_new(NULL);
	int rc = 0;

	assert_non_null(e);
	build_rich_state(h);
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	/* The state version 3 holds without the last takes of waiting and
	 * buried tasks, which version 2 did not keep. */
	for (size_t i = 0; i < e->n && rc == 0; i++) {
		struct buf *d = &e->data[i];

		d->len =
		    entry_before_last_take(e->type[i], d->data, d->len, false);
		rc = queue_snapshot_load(want, e->type[i], d->data, d->len);
	}
	assert_int_equal(rc, 0);
	for (size_t i = 0; i < e->n && rc == 0; i++) {
		struct buf *d = &e->data[i];

		d->len =
		    entry_before_last_take(e->type[i], d->data, d->len, true);
		rc = queue_snapshot_load(q, e->type[i], d->data, d->len);
	}
	assert_int_equal(rc, 0);
	assert_true(queue_snapshot_done(q));
	assert_true(tq_same(want, q, h->now));
	queue_free(q);
	queue_free(want);
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* A snapshot of version 3 (keys were one namespace: DEDUP entries name
 * no tube) still loads with its keys: a live task's key in its tube, a
 * done task's reservation in the done task's tube, and a reservation
 * whose task is gone in every tube until it expires (as when it was made,
 * so a retried put still finds it), after which the key is free in
 * each tube. */
static void
test_snapshot_version_3_keeps_its_keys(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	struct queue *q = queue_new(NULL);
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_task_view v;
	struct queue_stats st;
	uint64_t live, gone, id, lease;
	int rc = 0;

	assert_non_null(e);
	req_for(&req, "a", "gone");
	req.key = "k-gone";
	req.key_len = 6;
	gone = put_req(h, &req);
	req_for(&req, "a", "live");
	req.key = "k-live";
	req.key_len = 6;
	live = put_req(h, &req);
	/* gone is acked: its key is reserved for the window, its task gone */
	assert_int_equal(take(h, "a", 1, &id, &lease), 0);
	assert_true(id == gone);
	assert_int_equal(ack(h, gone, lease), 0);
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	for (size_t i = 0; i < e->n && rc == 0; i++) {
		struct buf *d = &e->data[i];

		if (e->type[i] == QSNAP_META)
			le_store_u32(d->data, 3);
		if (e->type[i] == QSNAP_DEDUP)
			d->len = dedup_without_tube(d->data, d->len, false);
		rc = queue_snapshot_load(q, e->type[i], d->data, d->len);
	}
	assert_int_equal(rc, 0);
	assert_true(queue_snapshot_done(q));
	assert_int_equal(queue_stats(q, h->now, &st), 0);
	assert_true(st.keys == 1 && st.dedup == 1);
	/* the live task's key, in its tube only */
	assert_int_equal(queue_peek_key(q, h->now, "a", 1, "k-live", 6, &v), 0);
	assert_true(v.id == live);
	assert_int_equal(queue_peek_key(q, h->now, "b", 1, "k-live", 6, &v),
	    SLUICE_ENOTFOUND);
	req_for(&req, "b", "other");
	req.key = "k-live";
	req.key_len = 6;
	{
		struct qrec rec;

		assert_int_equal(
		    queue_decide_put(q, h->now, &req, &rec, &res), 0);
		assert_true(res.created);
		/* the reservation whose task is gone: every tube's */
		req.key = "k-gone";
		assert_int_equal(
		    queue_decide_put(q, h->now, &req, &rec, &res), 0);
		assert_true(!res.created && res.id == gone);
		req.tube = "a";
		assert_int_equal(
		    queue_decide_put(q, h->now, &req, &rec, &res), 0);
		assert_true(!res.created && res.id == gone);
		/* until it expires */
		assert_int_equal(
		    queue_decide_put(
		        q, h->now + QUEUE_DEFAULT_DEDUP_MS, &req, &rec, &res),
		    0);
		assert_true(res.created);
		assert_true(queue_check(q, NULL) == 0);
	}
	queue_free(q);
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* Loads every entry, with entry `which` replaced by `data`. */
static int
load_with(struct entries *e, size_t which, const uint8_t *data, size_t len)
{
	struct queue *q = queue_new(NULL);
	int rc = 0;

	for (size_t i = 0; i < e->n && rc == 0; i++)
		rc = i == which ? queue_snapshot_load(q, e->type[i], data, len)
		                : queue_snapshot_load(q, e->type[i],
		                      e->data[i].data, e->data[i].len);
	if (rc == 0 && !queue_snapshot_done(q))
		rc = SLUICE_ECORRUPT;
	queue_free(q);
	return rc;
}

/* Entry `which` with `delta` added to the u64 at `off`. */
static int
load_with_count(struct entries *e, size_t which, size_t off, int delta)
{
	uint8_t copy[1024];
	size_t len = e->data[which].len;

	assert_true(len <= sizeof(copy) && off + 8 <= len);
	memcpy(copy, e->data[which].data, len);
	le_store_u64(copy + off, le_load_u64(copy + off) + (uint64_t)delta);
	return load_with(e, which, copy, len);
}

/* A TUBE_SET of `tube` with ttr and a dead letter, through the harness. */
static void
set_tube(struct tq *h, const char *tube, const char *dead)
{
	struct queue_tube_set_req req;
	struct qrec rec;

	memset(&req, 0, sizeof(req));
	req.tube = tube;
	req.tube_len = strlen(tube);
	req.set = QREC_TS_TTR | QREC_TS_DEAD_LETTER;
	req.conf.ttr = 2500;
	req.conf.dead_letter = dead;
	req.conf.dead_letter_len = strlen(dead);
	assert_int_equal(queue_decide_tube_set(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
}

/* Tube settings in a snapshot: a TUBE_SET entry right after its TUBE
 * loads into the same state; one out of place, twice, empty or naming
 * the tube itself as its dead letter does not. A snapshot of tubes
 * without settings has no such entry (it reads as before they
 * existed). */
static void
test_snapshot_holds_tube_settings(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	struct queue *q;
	struct buf b;
	size_t at = SIZE_MAX;

	assert_non_null(e);
	put(h, "a", "x");
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	for (size_t i = 0; i < e->n; i++)
		assert_int_not_equal(e->type[i], QSNAP_TUBE_SET);
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	e->n = 0;
	set_tube(h, "a", "a.dead");
	put(h, "b", "y");
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	for (size_t i = 0; i < e->n; i++)
		if (e->type[i] == QSNAP_TUBE_SET)
			at = i;
	assert_true(at != SIZE_MAX && e->type[at - 1] == QSNAP_TUBE);
	assert_int_equal(load_entries(e, SIZE_MAX, SIZE_MAX, false), 0);
	buf_init(&b);
	for (size_t i = 0; i < e->n; i++)
		assert_int_equal(tq_snap_emit(&b, e->type[i], e->data[i].data,
		                     e->data[i].len, NULL, 0),
		    0);
	q = queue_new(NULL);
	assert_int_equal(tq_snap_load(q, &b), 0);
	assert_true(tq_same(h->q, q, h->now));
	queue_free(q);
	buf_fini(&b);
	/* twice in a row; cut short; in the place of the next TUBE */
	assert_int_equal(load_entries(e, SIZE_MAX, at, false), SLUICE_ECORRUPT);
	assert_int_equal(
	    load_entries(e, at - 1, SIZE_MAX, true), SLUICE_ECORRUPT);
	{
		uint8_t copy[512];
		size_t len = e->data[at].len;

		memcpy(copy, e->data[at].data, len);
		copy[0] = 0; /* sets nothing */
		assert_int_equal(load_with(e, at, copy, len), SLUICE_ECORRUPT);
		/* "a.dead" -> "a" with the length cut: the tube itself */
		copy[0] = e->data[at].data[0];
		copy[len - 8] = 1; /* the u16 length, low byte */
		assert_int_equal(
		    load_with(e, at, copy, len - 5), SLUICE_ECORRUPT);
	}
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* TUBE_DELETE: refused for a tube the queue does not have, and for one
 * with tasks without force; with force its tasks go, keys free at once,
 * its counters leave the totals, and the tubes after it move down. */
static void
test_tube_delete_removes_the_tube(void **state)
{
	struct tq *h = tq_of(state);
	struct queue_tube_delete_req req = { "a", 1, false };
	struct queue_put_req pr;
	struct queue_put_res res;
	struct queue_tube_stats ts;
	struct queue_stats st;
	struct qrec rec;

	queue_put_req_init(&pr);
	pr.tube = "a";
	pr.tube_len = 1;
	pr.key = "k";
	pr.key_len = 1;
	put_req(h, &pr);
	put(h, "b", "y");
	set_tube(h, "a", "b");
	assert_int_equal(queue_decide_tube_delete(h->q, h->now, &req, &rec),
	    SLUICE_ENOTEMPTY);
	req.tube = "zz";
	req.tube_len = 2;
	assert_int_equal(queue_decide_tube_delete(h->q, h->now, &req, &rec),
	    SLUICE_ENOTFOUND);
	/* a record that does not fit: no such tube; tasks without force */
	rec.type = QREC_TUBE_DELETE;
	rec.u.tube_delete = (struct qrec_tube_delete) { "zz", 2, true };
	assert_int_equal(queue_apply(h->q, queue_lsn(h->q) + 1, h->now, &rec),
	    SLUICE_ECORRUPT);
	rec.u.tube_delete = (struct qrec_tube_delete) { "a", 1, false };
	assert_int_equal(queue_apply(h->q, queue_lsn(h->q) + 1, h->now, &rec),
	    SLUICE_ECORRUPT);
	req = (struct queue_tube_delete_req) { "a", 1, true };
	assert_int_equal(queue_decide_tube_delete(h->q, h->now, &req, &rec), 0);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(
	    queue_tube_stats(h->q, h->now, "a", 1, &ts), SLUICE_ENOTFOUND);
	assert_int_equal(queue_tube_count(h->q), 1);
	assert_int_equal(queue_tube_stats_at(h->q, h->now, 0, &ts), 0);
	assert_memory_equal(ts.name, "b", 1);
	assert_int_equal(queue_stats(h->q, h->now, &st), 0);
	assert_true(st.ctr.put == 1 && st.tasks == 1);
	/* the key is free at once; the new "a" has no settings */
	assert_int_equal(queue_decide_put(h->q, h->now, &pr, &rec, &res), 0);
	assert_true(res.created && rec.u.put.ttr == QUEUE_DEFAULT_TTR_MS);
	assert_int_equal(queue_check(h->q, NULL), 0);
}

/* A queue without a tube can still hold what lives beside the tubes: the
 * key window of a move into a cluster that has none of its tubes yet, a
 * finished task's outcome kept after its tube was deleted. Its snapshot
 * is META, those entries, END: it loads (the loader took them only after
 * a TUBE, so such a node could not load its own snapshot). */
static void
test_snapshot_without_tubes_loads(void **state)
{
	struct tq *h = tq_of(state), r;
	struct qrec rec;

	assert_int_equal(
	    queue_decide_move_pend(h->q, "mail", 4, "c1", 2, true, &rec), 0);
	assert_int_equal(rec.type, QREC_MOVE_PEND);
	assert_int_equal(tq_commit(h, &rec), 0);
	assert_int_equal(queue_tube_count(h->q), 0);
	tq_loaded(h, &r);
	tq_fini(&r);
}

/* The counts that META and TUBE give ahead of the tasks (they size the
 * index and heaps) must be the counts the tasks make; a var written in
 * more bytes than it needs is refused. */
static void
test_snapshot_load_checks_counts_and_vars(void **state)
{
	struct tq *h = tq_of(state);
	struct entries *e = calloc(1, sizeof(*e));
	uint8_t copy[1024];
	size_t tube = SIZE_MAX, task = SIZE_MAX, len;

	assert_non_null(e);
	build_rich_state(h);
	assert_int_equal(queue_snapshot_write(h->q, keep_entry, e), 0);
	assert_int_equal(e->type[0], QSNAP_META);
	for (size_t i = 0; i < e->n; i++) {
		if (e->type[i] == QSNAP_TUBE && tube == SIZE_MAX)
			tube = i;
		if (e->type[i] == QSNAP_TASK && task == SIZE_MAX)
			task = i;
	}
	assert_true(tube != SIZE_MAX && task != SIZE_MAX);
	assert_int_equal(load_with(e, 0, e->data[0].data, e->data[0].len), 0);
	/* META: tasks at 28, taken at 36, keys at 44. */
	for (size_t off = 28; off <= 44; off += 8) {
		assert_int_equal(
		    load_with_count(e, 0, off, 1), SLUICE_ECORRUPT);
		assert_int_equal(
		    load_with_count(e, 0, off, -1), SLUICE_ECORRUPT);
	}
	/* TUBE: the ready, delayed and buried counts close the entry. */
	len = e->data[tube].len;
	for (size_t off = len - 24; off < len; off += 8)
		assert_int_equal(
		    load_with_count(e, tube, off, 1), SLUICE_ECORRUPT);
	/* TASK: its id (after the flags byte) in one byte more. */
	len = e->data[task].len;
	assert_true(e->data[task].data[1] < 0x80 && len < sizeof(copy));
	copy[0] = e->data[task].data[0];
	copy[1] = (uint8_t)(e->data[task].data[1] | 0x80);
	copy[2] = 0;
	memcpy(copy + 3, e->data[task].data + 2, len - 2);
	assert_int_equal(load_with(e, task, copy, len + 1), SLUICE_ECORRUPT);
	for (size_t i = 0; i < e->n; i++)
		buf_fini(&e->data[i]);
	free(e);
}

/* The record log replays into the same state, with and without ticks in
 * between, and the dump describes it. */
static void
test_replay_gives_the_same_dump(void **state)
{
	struct tq *h = tq_of(state);
	struct queue *r = queue_new(NULL);
	struct buf d;

	build_rich_state(h);
	assert_int_equal(tq_replay(h, r, 0, h->nlog), 0);
	assert_true(tq_same(h->q, r, h->now));
	buf_init(&d);
	assert_int_equal(queue_dump(r, &d), 0);
	buf_put_u8(&d, 0);
	assert_non_null(strstr((char *)d.data, "state=buried"));
	assert_non_null(strstr((char *)d.data, "error=\"bad\""));
	assert_non_null(strstr((char *)d.data, "  replace "));
	assert_non_null(strstr((char *)d.data, "dedup \"done-key\""));
	assert_null(strstr((char *)d.data, "dedup \"key-3\""));
	buf_fini(&d);
	queue_free(r);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, tq_setup, tq_teardown)
	const struct CMUnitTest tests[] = {
		T(test_snapshot_then_tail_equals_full_replay),
		T(test_snapshot_load_refuses_broken_snapshots),
		T(test_snapshot_load_checks_counts_and_vars),
		T(test_snapshot_version_2_still_loads),
		T(test_snapshot_version_3_keeps_its_keys),
		T(test_snapshot_holds_tube_settings),
		T(test_tube_delete_removes_the_tube),
		T(test_snapshot_without_tubes_loads),
		T(test_snapshot_write_allocates_nothing),
		T(test_snapshot_of_version_2_loads_and_3_keeps_the_last_take),
		T(test_apply_out_of_memory_changes_nothing),
		T(test_replay_gives_the_same_dump),
	};
#undef T
	return cmocka_run_group_tests_name("queue_snap", tests, NULL, NULL);
}
