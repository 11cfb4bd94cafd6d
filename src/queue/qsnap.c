/* qsnap - the queue's snapshot: the whole state as a sequence of typed
 * entries, written without allocating (it runs in a forked child) and
 * loaded back with every field checked (it may come from a damaged disk;
 * fuzzed by tests/fuzz/fuzz_qrec.c). This file holds the layout and the
 * writer; the loader is qsnap_load.c, the constants both use qsnap_fmt.h.
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
 *   TUBE_LIMIT (22) the flow limits of the TUBE just before (after its
 *          TUBE_SET), only when it has any: the limits part of a
 *          TUBE_LIMIT record body (qrec.h: u8 set, u32 rate, u32 per_ms,
 *          u32 burst, u32 concurrency). A snapshot without limits is one
 *          that loaders older than the entry read too; the bucket loads
 *          full, the cap counts the TASK entries that are taken.
 *   GROUP_SET (25) the group settings of the TUBE just before (after its
 *          TUBE_LIMIT), one entry for each name that has any: str16
 *          group (empty: the limits of every named group), the limits
 *          part of a TUBE_LIMIT body, u8 paused. Buckets load full, caps
 *          count the TASK entries that are taken; a snapshot without
 *          group settings has none, and older loaders refuse one that has
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
 *   KEYHELD (9) u64 id, u64 version, str16 key, str16 tube  - right
 *          after the TASK (and TASKVER) of a done task whose key's
 *          reservation ended while the task is kept: the key stays with
 *          it for its version (held, task.h), not reserved; a snapshot
 *          without such tasks has none, and older loaders refuse one
 *          that has
 *   DEDUP  str16 key, u64 id, i64 expires, str16 tube (version 4)  -
 *          each unexpired dedup entry, oldest first; one whose id is a
 *          done task's is its key (and names that task's tube). Keys are
 *          per tube since version 4; a version 3 entry names no tube: it
 *          is its done task's tube's, or, when its task is gone, a
 *          reservation of its key in every tube (written back with an
 *          empty tube) until it expires, as it was when it was made
 *   DEDUPVER (8) u64 version  - right after the DEDUP entry of a key
 *          whose completed task had a version (a put with if_newer), so
 *          a late put of older content stays stale for the dedup window
 *          after a restart; one without costs no byte, and a snapshot
 *          without versions is one older loaders read too (a loader that
 *          does not know the entry refuses the snapshot, as it refuses a
 *          TASKVER: it could not keep the version)
 *   HOURLY, HOUR  the statistics per hour of each tube that has them
 *          (layout in hourly.c)
 *   THROTTLE (30) str16 tube, str16 key, u64 id, i64 until  - each open
 *          throttle window of a key (throttle.h): the task of the last
 *          accepted throttled put and the window's end; a snapshot
 *          without any has none, and older loaders refuse one that has
 *          (they could not keep a throttled key ignored)
 *   CANCEL (46) u64 id, u64 lease - a taken task that is cancelled;
 *   OUTCOME (47) u64 id, u8 kind, i64 time, i64 expires, str16 tube,
 *          str16 text - the outcome of a finished task (outcome.h),
 *          oldest first; older loaders refuse a snapshot that has any
 *   END    u32 tubes, u64 tasks, u64 dedup entries, and when there are
 *          HOURLY, CANCEL or OUTCOME entries, u32 the HOURLY entries;
 *          when there are CANCEL or OUTCOME entries, u64 the CANCEL
 *          entries and u64 the OUTCOME entries
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

#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/hourly.h"
#include "queue/qstate.h"
#include "queue/qsnap_fmt.h"
#include "queue/throttle.h"
#include "sluice.h"

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
	p = put_var(p, qs_tube_of(q, t)->index);
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

/* The GROUP entry before the TASK of a task in a group. */
static int
emit_group(
    const struct queue *q, const struct task *t, queue_emit_fn *emit, void *arg)
{
	const struct group *g;
	uint8_t mem[16 + QREC_GROUP_MAX];
	struct sw w = { mem, 0, sizeof(mem), false };

	if (group_slot(t) == 0)
		return 0;
	g = groups_of(qs_tube_of(q, t), t);
	sw_u64(&w, t->id);
	sw_str16(&w, g->name, g->name_len);
	return emit(arg, QSNAP_GROUP, mem, w.len, NULL, 0);
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

/* The KEYHELD entry of a done task whose key's reservation ended but
 * whose version the key still holds. */
static int
emit_held(const struct task *t, queue_emit_fn *emit, void *arg)
{
	const struct keyent *ke = task_has_key(t) ? t->ext->key : NULL;
	uint8_t mem[32 + QREC_KEY_MAX + QREC_NAME_MAX];
	struct sw w = { mem, 0, sizeof(mem), false };

	if (ke == NULL || !ke->held)
		return 0;
	sw_u64(&w, t->id);
	sw_u64(&w, ke->version);
	sw_str16(&w, ke->key, ke->len);
	sw_str16(&w, keyent_tube(ke), ke->tube_len);
	return emit(arg, QSNAP_KEYHELD, mem, w.len, NULL, 0);
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

/* The layout of qrec_limits_put(), without allocating. */
static int
emit_tube_limit(const struct qrec_limits *l, queue_emit_fn *emit, void *arg)
{
	uint8_t mem[32];
	struct sw w = { mem, 0, sizeof(mem), false };

	sw_u8(&w, l->set);
	sw_u32(&w, l->rate);
	sw_u32(&w, l->per_ms);
	sw_u32(&w, l->burst);
	sw_u32(&w, l->concurrency);
	return emit(arg, QSNAP_TUBE_LIMIT, mem, w.len, NULL, 0);
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
	uint64_t ndedup = 0, nmarks = 0, noutcomes = 0;
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
		sw_u64(&w, tube_nready(tb));
		sw_u64(&w, tb->delayed.len);
		sw_u64(&w, tb->buried.len);
		sw_u64(&w, tb->done.len);
		if ((rc = emit(arg, QSNAP_TUBE, mem, w.len, NULL, 0)) != 0)
			return rc;
		if (tb->conf != NULL &&
		    (rc = emit_tube_set(&tb->conf->v, emit, arg)) != 0)
			return rc;
		if (tb->flow != NULL &&
		    (rc = emit_tube_limit(&tb->flow->lim, emit, arg)) != 0)
			return rc;
		if ((rc = glimit_snapshot(tb, emit, arg)) != 0)
			return rc;
	}
	/* In the index's order: by id for most (tidx.h), so a loader puts
	 * each task next to the one before. The tasks themselves may lie
	 * anywhere, so their memory is asked for a few slots ahead. */
	for (uint64_t i = 0, n = tidx_slots(&q->ids); i < n; i++) {
		const struct task *t = tidx_at(&q->ids, i);

		if (i + QSNAP_PREFETCH < n &&
		    tidx_at(&q->ids, i + QSNAP_PREFETCH) != NULL)
			__builtin_prefetch(
			    tidx_at(&q->ids, i + QSNAP_PREFETCH));
		if (t != NULL &&
		    ((rc = emit_group(q, t, emit, arg)) != 0 ||
		        (rc = emit_task(q, t, emit, arg)) != 0 ||
		        (rc = emit_versions(t, emit, arg)) != 0 ||
		        (rc = emit_held(t, emit, arg)) != 0))
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
		if (ke->version == 0)
			continue;
		w.len = 0;
		sw_u64(&w, ke->version);
		if ((rc = emit(arg, QSNAP_DEDUPVER, mem, w.len, NULL, 0)) != 0)
			return rc;
	}
	if ((rc = hourly_snapshot_write(q, emit, arg, &nhourly)) != 0)
		return rc;
	if ((rc = deps_snapshot_write(q, emit, arg)) != 0)
		return rc;
	if ((rc = qs_throttle_snapshot_write(q, emit, arg)) != 0 ||
	    (rc = qs_outcome_snapshot_write(
	         q, emit, arg, &nmarks, &noutcomes)) != 0)
		return rc;
	if ((rc = qs_sched_snapshot_write(q, emit, arg)) != 0 ||
	    (rc = batch_snapshot_write(q, emit, arg)) != 0 ||
	    (rc = move_snapshot_write(q, emit, arg)) != 0)
		return rc;
	w.len = 0;
	sw_u32(&w, q->ntubes);
	sw_u64(&w, q->ntasks);
	sw_u64(&w, ndedup);
	if (nhourly != 0 || nmarks != 0 || noutcomes != 0)
		sw_u32(&w, nhourly);
	if (nmarks != 0 || noutcomes != 0) {
		sw_u64(&w, nmarks);
		sw_u64(&w, noutcomes);
	}
	return emit(arg, QSNAP_END, mem, w.len, NULL, 0);
}

const char *
queue_snap_entry_name(uint16_t type)
{
	static const char *const names[] = {
		[QSNAP_META] = "META",
		[QSNAP_TUBE] = "TUBE",
		[QSNAP_TASK] = "TASK",
		[QSNAP_REPL] = "REPL",
		[QSNAP_DEDUP] = "DEDUP",
		[QSNAP_END] = "END",
		[QSNAP_TASKVER] = "TASKVER",
		[QSNAP_DEDUPVER] = "DEDUPVER",
		[QSNAP_KEYHELD] = "KEYHELD",
		[QSNAP_GROUP] = "GROUP",
		[QSNAP_TUBE_SET] = "TUBE_SET",
		[QSNAP_HOURLY] = "HOURLY",
		[QSNAP_HOUR] = "HOUR",
		[QSNAP_TUBE_LIMIT] = "TUBE_LIMIT",
		[QSNAP_GROUP_SET] = "GROUP_SET",
		[QSNAP_THROTTLE] = "THROTTLE",
		[QSNAP_DEP] = "DEP",
		[QSNAP_DEPC] = "DEPC",
		[QSNAP_CANCEL] = "CANCEL",
		[QSNAP_OUTCOME] = "OUTCOME",
		[QSNAP_SCHED] = "SCHED",
		[QSNAP_BATCH] = "BATCH",
		[QSNAP_BMEMBER] = "BMEMBER",
		[QSNAP_MOVEIN] = "MOVEIN",
		[QSNAP_MOVEOUT] = "MOVEOUT",
		[QSNAP_MOVEPEND] = "MOVEPEND",
		[QSNAP_MOVEPLACE] = "MOVEPLACE",
		[QSNAP_MOVEKEEP] = "MOVEKEEP",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type] != NULL)
		return names[type];
	return "unknown";
}
