/* outcome - the outcomes of finished tasks, and cancelling (design in
 * outcome.h and queue_outcome.h).
 *
 * Cancelling, as a state machine of one task (records in capitals):
 *   not taken -> (gone)          CANCEL, lease 0: outcome cancelled
 *   taken     -> taken, marked   CANCEL with its lease
 *   marked    -> (gone)          the lease ends in any way: the record
 *                                decide would write (ACK, RELEASE, FAIL,
 *                                BURY, SETBACK, UNTAKE) is a DELETE
 *                                instead (qs_cancel_decided): outcome
 *                                cancelled
 *   marked    -> marked          TOUCH is refused (SLUICE_ECANCELED)
 * A cancelled task fails for good: its removal, like any other one that
 * is not an ack's, makes its children follow their --on-parent-failure
 * rule (deps_task_gone, called by qs_task_remove). A child removed by
 * its rule `cancel` is cancelled too (qs_cancel_child), whatever record
 * ended its parent: a worker's fail, a bury, a lost lease, a delete. */
#include "queue/outcome.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/qsnap_fmt.h"
#include "queue/qstate.h"
#include "sluice.h"

static uint64_t
outcome_key(const void *item)
{
	return ((const struct outcome *)item)->id;
}

static uint64_t
cmark_key(const void *item)
{
	return ((const struct cmark *)item)->id;
}

void
qs_outcome_init(struct queue *q)
{
	idx_init(&q->oc.ids, outcome_key);
	idx_init(&q->oc.marks, cmark_key);
}

void
qs_outcome_fini(struct queue *q)
{
	struct outcome *o, *next;

	for (o = q->oc.head; o != NULL; o = next) {
		next = o->next;
		free(o);
	}
	for (uint32_t i = 0; i < q->oc.marks.cap; i++)
		free(idx_at(&q->oc.marks, i));
	idx_fini(&q->oc.ids);
	idx_fini(&q->oc.marks);
	q->oc.head = q->oc.tail = NULL;
	q->oc.bytes = 0;
}

void
queue_on_final(struct queue *q, queue_final_fn *fn, void *arg)
{
	q->oc.on_final = fn;
	q->oc.on_final_arg = arg;
}

static uint64_t
outcome_size(const struct outcome *o)
{
	return OUTCOME_COST + o->tube_len + o->text_len;
}

static void
outcome_drop(struct queue *q, struct outcome *o)
{
	if (o->prev != NULL)
		o->prev->next = o->next;
	else
		q->oc.head = o->next;
	if (o->next != NULL)
		o->next->prev = o->prev;
	else
		q->oc.tail = o->prev;
	idx_remove(&q->oc.ids, o);
	q->oc.bytes -= outcome_size(o);
	free(o);
}

void
qs_outcome_tick(struct queue *q, int64_t now)
{
	while (q->oc.head != NULL && q->oc.head->expires <= now)
		outcome_drop(q, q->oc.head);
}

static struct outcome *
outcome_find(const struct queue *q, uint64_t id)
{
	return q->oc.ids.len == 0 ? NULL : idx_find(&q->oc.ids, id);
}

/* Notes (or renotes) the outcome of task `id`, kept until `expires`.
 * Best effort: out of memory, the outcome is not kept (a waiter then
 * finds no task), which changes nothing else. */
static void
outcome_put(struct queue *q, uint64_t id, int kind, int64_t time,
    int64_t expires, const char *tube, size_t tube_len, const char *text,
    size_t text_len)
{
	struct outcome *o = outcome_find(q, id);

	if (o != NULL)
		outcome_drop(q, o);
	if (expires <= q->clock || q->cfg.max_outcome_bytes == 0)
		return;
	if (tube_len > QREC_NAME_MAX)
		tube_len = 0;
	if (text_len > QREC_RESULT_MAX)
		text_len = QREC_RESULT_MAX;
	if (idx_reserve(&q->oc.ids, 1) != 0 ||
	    (o = malloc(sizeof(*o) + tube_len + text_len)) == NULL)
		return;
	o->id = id;
	o->time = time;
	o->expires = expires;
	o->kind = (uint8_t)kind;
	o->tube_len = (uint8_t)tube_len;
	o->text_len = (uint16_t)text_len;
	if (tube_len > 0)
		memcpy(o->data, tube, tube_len);
	if (text_len > 0)
		memcpy(o->data + tube_len, text, text_len);
	o->next = NULL;
	o->prev = q->oc.tail;
	if (q->oc.tail != NULL)
		q->oc.tail->next = o;
	else
		q->oc.head = o;
	q->oc.tail = o;
	idx_insert(&q->oc.ids, o);
	q->oc.bytes += outcome_size(o);
	while (q->oc.bytes > q->cfg.max_outcome_bytes && q->oc.head != NULL)
		outcome_drop(q, q->oc.head);
}

static void
final(struct queue *q, uint64_t id)
{
	if (q->oc.on_final != NULL)
		q->oc.on_final(q->oc.on_final_arg, id);
}

static void
outcome_note(struct queue *q, uint64_t id, int kind, int64_t time,
    const struct tube *tb, const char *text, size_t text_len)
{
	if (q->cfg.dedup_ms > 0)
		outcome_put(q, id, kind, time, q->clock + q->cfg.dedup_ms,
		    tb != NULL ? tb->name : NULL, tb != NULL ? tb->name_len : 0,
		    text, text_len);
	final(q, id);
}

static struct cmark *
mark_find(const struct queue *q, uint64_t id)
{
	return q->oc.marks.len == 0 ? NULL : idx_find(&q->oc.marks, id);
}

static void
mark_drop(struct queue *q, struct cmark *m)
{
	idx_remove(&q->oc.marks, m);
	free(m);
}

bool
queue_cancelled(const struct queue *q, uint64_t id)
{
	return mark_find(q, id) != NULL;
}

int
qs_outcome_removed(struct queue *q, const struct task *t, int64_t time)
{
	struct cmark *m = mark_find(q, t->id);
	int kind = q->oc.why;

	if (m != NULL) {
		mark_drop(q, m);
		kind = QUEUE_END_CANCELLED;
	}
	/* A done task's outcome was noted when it was acked. */
	if (kind == 0 || t->state == QUEUE_DONE)
		return 0;
	outcome_note(q, t->id, kind, time, qs_tube_of(q, t),
	    t->ext != NULL ? t->ext->error : NULL,
	    t->ext != NULL ? t->ext->error_len : 0);
	return kind;
}

void
qs_outcome_final(struct queue *q, uint64_t id)
{
	final(q, id);
}

void
qs_cancel_child(struct queue *q, struct task *t, int64_t time)
{
	uint8_t why = q->oc.why;

	q->oc.why = QUEUE_END_CANCELLED; /* whatever the record's own */
	qs_task_remove(q, t, time, 0);
	q->oc.why = why;
}

static bool
ends_lease(uint16_t type)
{
	switch (type) {
	case QREC_ACK:
	case QREC_ACK_R:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_UNTAKE:
	case QREC_SETBACK:
		return true;
	default:
		return false;
	}
}

void
qs_outcome_before(struct queue *q, const struct qrec *rec)
{
	switch (rec->type) {
	case QREC_DELETE:
	case QREC_FLUSH:
	case QREC_DELETE_WHERE:
	case QREC_DELETE_AGED:
	case QREC_TUBE_DELETE:
		q->oc.why = QUEUE_END_DELETED;
		break;
	case QREC_CANCEL:
		q->oc.why = QUEUE_END_CANCELLED;
		break;
	default:
		q->oc.why = 0;
		break;
	}
	q->oc.tube = NULL;
	if (rec->type == QREC_ACK || rec->type == QREC_ACK_R) {
		const struct task *t = qs_task(q, rec->u.end.id);

		q->oc.tube = t != NULL ? qs_tube_of(q, t) : NULL;
	}
}

void
qs_outcome_after(struct queue *q, int64_t time, const struct qrec *rec, int rc)
{
	const struct qrec_end *e = &rec->u.end;
	struct task *t;
	struct cmark *m;

	q->oc.why = 0;
	if (rc != 0)
		return;
	switch (rec->type) {
	case QREC_ACK:
	case QREC_ACK_R:
		if (e->outcome != QREC_DELETED && e->outcome != QREC_DONE)
			break;
		/* the task is gone (or done): its tube as it was */
		outcome_note(q, e->id, QUEUE_END_DONE, time, q->oc.tube,
		    rec->type == QREC_ACK_R ? e->result : e->text,
		    rec->type == QREC_ACK_R ? e->result_len : e->text_len);
		break;
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_SETBACK:
		if ((t = qs_task(q, e->id)) == NULL)
			break;
		if (e->outcome == QREC_MOVED)
			outcome_note(q, e->id, QUEUE_END_DEAD, time,
			    qs_tube_of(q, t),
			    t->ext != NULL ? t->ext->error : NULL,
			    t->ext != NULL ? t->ext->error_len : 0);
		else if (e->outcome == QREC_BURIED)
			final(q, e->id);
		break;
	default:
		break;
	}
	/* A mark lives only while its lease does (decide sees to it; a
	 * record that ended the lease another way ends the mark too). */
	q->oc.tube = NULL;
	if (q->oc.marks.len > 0 && ends_lease(rec->type) &&
	    (m = mark_find(q, e->id)) != NULL &&
	    ((t = qs_task(q, m->id)) == NULL || t->state != QUEUE_TAKEN ||
	        t->ext->lease != m->lease))
		mark_drop(q, m);
}

int
qs_cancel_apply(struct queue *q, int64_t time, const struct qrec_cancel *r)
{
	struct task *t = qs_task(q, r->id);
	struct cmark *m;

	if (t == NULL)
		return SLUICE_ECORRUPT;
	if (r->lease == 0) {
		if (t->state == QUEUE_TAKEN)
			return SLUICE_ECORRUPT;
		QS_COUNT(q, qs_tube_of(q, t), del);
		qs_task_remove(q, t, time, 0);
		return 0;
	}
	if (t->state != QUEUE_TAKEN || t->ext->lease != r->lease ||
	    mark_find(q, r->id) != NULL)
		return SLUICE_ECORRUPT;
	if (idx_reserve(&q->oc.marks, 1) != 0 ||
	    (m = malloc(sizeof(*m))) == NULL)
		return SLUICE_ENOMEM;
	m->id = r->id;
	m->lease = r->lease;
	idx_insert(&q->oc.marks, m);
	return 0;
}

int
queue_decide_cancel(struct queue *q, int64_t now, uint64_t id, struct qrec *out)
{
	struct task *t;
	int rc;

	if ((rc = queue_tick(q, now)) != 0)
		return rc;
	if ((t = qs_task_seen(q, id)) == NULL)
		return SLUICE_ENOTFOUND;
	if (mark_find(q, id) != NULL)
		return SLUICE_ECANCELED;
	memset(out, 0, sizeof(*out));
	out->type = QREC_CANCEL;
	out->u.cancel.id = id;
	out->u.cancel.lease = t->state == QUEUE_TAKEN ? t->ext->lease : 0;
	return 0;
}

int
qs_cancel_decided(struct queue *q, struct qrec *rec)
{
	uint64_t id;

	if (q->oc.marks.len == 0)
		return 0;
	switch (rec->type) {
	case QREC_TOUCH:
		return mark_find(q, rec->u.touch.id) != NULL ? SLUICE_ECANCELED
		                                             : 0;
	default:
		if (!ends_lease(rec->type))
			return 0;
		id = rec->u.end.id;
		if (rec->u.end.lease == 0 || mark_find(q, id) == NULL)
			return 0;
		memset(rec, 0, sizeof(*rec));
		rec->type = QREC_DELETE;
		rec->u.del.id = id;
		return 0;
	}
}

uint64_t
queue_outcome_count(const struct queue *q)
{
	return q->oc.ids.len;
}

uint64_t
queue_outcome_bytes(const struct queue *q)
{
	return q->oc.bytes;
}

const char *
queue_end_name(int state)
{
	switch (state) {
	case QUEUE_END_DELETED:
		return "deleted";
	case QUEUE_END_CANCELLED:
		return "cancelled";
	case QUEUE_END_DEAD:
		return "dead_lettered";
	default:
		return queue_state_name(state);
	}
}

int
queue_result(
    struct queue *q, int64_t now, uint64_t id, struct queue_result *out)
{
	const struct outcome *o;
	const struct task *t;
	int rc;

	if (now < 0 || now > QREC_TIME_MAX)
		return SLUICE_EINVAL;
	if ((rc = queue_tick(q, now)) != 0)
		return rc;
	if (id == 0 || id == q->hidden)
		return SLUICE_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	out->id = id;
	if ((o = outcome_find(q, id)) != NULL && o->expires > q->clock) {
		out->final = true;
		out->state = o->kind;
		out->time = o->time;
		out->tube = o->tube_len > 0 ? o->data : NULL;
		out->tube_len = o->tube_len;
		out->text = o->text_len > 0 ? o->data + o->tube_len : NULL;
		out->text_len = o->text_len;
		return 0;
	}
	if ((t = qs_task_seen(q, id)) == NULL)
		return SLUICE_ENOTFOUND;
	out->state = t->state;
	out->tube = qs_tube_of(q, t)->name;
	out->tube_len = qs_tube_of(q, t)->name_len;
	out->cancelled = mark_find(q, id) != NULL;
	if (t->state == QUEUE_DONE) {
		out->final = true;
		out->time = t->updated_at;
		if (t->ext != NULL && t->ext->result != NULL) {
			out->text = t->ext->result;
			out->text_len = t->ext->result_len;
		}
		return 0;
	}
	if (t->state == QUEUE_BURIED) {
		out->final = true;
		out->time = t->updated_at;
	}
	if (t->ext != NULL && t->ext->error != NULL) {
		out->text = t->ext->error;
		out->text_len = t->ext->error_len;
	}
	return 0;
}

const char *
qs_outcome_check(const struct queue *q)
{
	uint64_t n = 0, bytes = 0;
	const struct outcome *prev = NULL;

	for (const struct outcome *o = q->oc.head; o != NULL; o = o->next) {
		if (o->prev != prev || o->id == 0 || o->id >= q->next_id)
			return "an outcome is out of its list or names no task";
		if (idx_find(&q->oc.ids, o->id) != o)
			return "an outcome is not found by its id";
		n++;
		bytes += outcome_size(o);
		prev = o;
	}
	if (prev != q->oc.tail || n != q->oc.ids.len || bytes != q->oc.bytes)
		return "the outcomes are miscounted";
	for (uint32_t i = 0; i < q->oc.marks.cap; i++) {
		const struct cmark *m = idx_at(&q->oc.marks, i);
		const struct task *t;

		if (m == NULL)
			continue;
		t = qs_task(q, m->id);
		if (t == NULL || t->state != QUEUE_TAKEN ||
		    t->ext->lease != m->lease)
			return "a cancelled task is not taken under its lease";
	}
	return NULL;
}

static int
by_id(const void *a, const void *b)
{
	uint64_t x = **(const uint64_t *const *)a;
	uint64_t y = **(const uint64_t *const *)b;

	return x < y ? -1 : x > y;
}

int
qs_outcome_dump(const struct queue *q, struct buf *out)
{
	size_t n = 0, nm = 0;
	const uint64_t **v;

	if (q->oc.ids.len + q->oc.marks.len == 0)
		return 0;
	v = malloc((q->oc.ids.len + q->oc.marks.len) * sizeof(*v));
	if (v == NULL)
		return SLUICE_ENOMEM;
	for (const struct outcome *o = q->oc.head; o != NULL; o = o->next)
		if (o->expires > q->clock)
			v[n++] = &o->id;
	qsort(v, n, sizeof(*v), by_id);
	for (size_t i = 0; i < n; i++) {
		/* id is the first field of an outcome and of a mark */
		const struct outcome *o = (const void *)v[i];

		/* not its expiry: the window is the node's own setting */
		buf_printf(out,
		    "outcome %" PRIu64 " %s time=%" PRId64 " tube=%.*s text=",
		    o->id, queue_end_name(o->kind), o->time, (int)o->tube_len,
		    o->data);
		buf_put_escaped(out, o->data + o->tube_len, o->text_len);
		buf_put_u8(out, '\n');
	}
	for (uint32_t i = 0; i < q->oc.marks.cap; i++)
		if (idx_at(&q->oc.marks, i) != NULL)
			v[nm++] = idx_at(&q->oc.marks, i);
	qsort(v, nm, sizeof(*v), by_id);
	for (size_t i = 0; i < nm; i++) {
		const struct cmark *m = (const void *)v[i];

		buf_printf(out, "cancelled %" PRIu64 " lease=%" PRIu64 "\n",
		    m->id, m->lease);
	}
	free(v);
	return 0;
}

static size_t
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return (size_t)n;
}

int
qs_outcome_snapshot_write(const struct queue *q, queue_emit_fn *emit, void *arg,
    uint64_t *nmarks, uint64_t *noutcomes)
{
	uint8_t mem[8 + 1 + 8 + 8 + 2 + QREC_NAME_MAX + 2];
	int rc;

	for (uint32_t i = 0; i < q->oc.marks.cap; i++) {
		const struct cmark *m = idx_at(&q->oc.marks, i);
		size_t n = 0;

		if (m == NULL)
			continue;
		n += put_le(mem + n, m->id, 8);
		n += put_le(mem + n, m->lease, 8);
		if ((rc = emit(arg, QSNAP_CANCEL, mem, n, NULL, 0)) != 0)
			return rc;
		(*nmarks)++;
	}
	for (const struct outcome *o = q->oc.head; o != NULL; o = o->next) {
		size_t n = 0;

		if (o->expires <= q->clock)
			continue;
		n += put_le(mem + n, o->id, 8);
		n += put_le(mem + n, o->kind, 1);
		n += put_le(mem + n, (uint64_t)o->time, 8);
		n += put_le(mem + n, (uint64_t)o->expires, 8);
		n += put_le(mem + n, o->tube_len, 2);
		memcpy(mem + n, o->data, o->tube_len);
		n += o->tube_len;
		n += put_le(mem + n, o->text_len, 2);
		if ((rc = emit(arg, QSNAP_OUTCOME, mem, n,
		         o->data + o->tube_len, o->text_len)) != 0)
			return rc;
		(*noutcomes)++;
	}
	return 0;
}

int
qs_cancel_load(struct queue *q, struct rd *r)
{
	struct qrec_cancel c;

	c.id = rd_u64(r);
	c.lease = rd_u64(r);
	if (rd_failed(r) || rd_left(r) != 0 || c.lease == 0)
		return SLUICE_ECORRUPT;
	return qs_cancel_apply(q, q->clock, &c);
}

static bool
kind_ok(uint8_t k)
{
	return k == QUEUE_END_DONE || k == QUEUE_END_DELETED ||
	    k == QUEUE_END_CANCELLED || k == QUEUE_END_DEAD;
}

int
qs_outcome_load(struct queue *q, struct rd *r)
{
	uint64_t id = rd_u64(r);
	uint8_t kind = rd_u8(r);
	int64_t time = rd_i64(r), expires = rd_i64(r);
	size_t tube_len, text_len;
	const char *tube = rd_str16(r, QREC_NAME_MAX, &tube_len);
	const char *text = rd_str16(r, QREC_RESULT_MAX, &text_len);

	if (rd_failed(r) || rd_left(r) != 0 || id == 0 || id >= q->next_id ||
	    !kind_ok(kind) || time < 0 || time > QREC_TIME_MAX ||
	    expires <= 0 || expires > QREC_TIME_MAX ||
	    (tube_len > 0 && !qrec_tube_valid(tube, tube_len)) ||
	    outcome_find(q, id) != NULL)
		return SLUICE_ECORRUPT;
	/* kept unless its window passed or the bound drops it */
	outcome_put(q, id, kind, time, expires, tube, tube_len, text, text_len);
	return 0;
}
