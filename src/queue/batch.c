/* batch - batches of tasks with callbacks (batch.h has the rules).
 *
 * Design: a table of batches by name and a table of members (task id ->
 * batch) beside the tasks; struct task carries nothing of it. A member
 * leaves the table when its task ends for the batch (acked, failed for
 * good), and the batch counts how: its live count falls, and at 0, once
 * closed, the batch ends (in apply, so on every node alike) and its
 * callbacks are owed until a BATCH_FIRE puts them. The live states'
 * counts (waiting, ready, delayed, taken) are not kept: `batch show`
 * counts its members' states, O(members).
 *
 * How a task ends is seen by hooks around each apply: batch_before
 * notes the task an ACK (deleted or kept as done) acks; batch_task_gone
 * (qs_task_remove) ends a member acked if it is that task, else failed;
 * batch_task_buried (qs_place into buried) ends it buried; batch_after
 * ends an ack kept as done, and a FAIL, BURY or SETBACK moved to a
 * dead-letter tube failed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/batch.h"
#include "queue/qstate.h"
#include "sluice.h"

/* ---- Tables ----------------------------------------------------------- */

static uint64_t
name_hash(const char *p, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)p[i]) * 1099511628211ULL;
	return idx_mix(h);
}

static uint64_t
batch_key(const void *item)
{
	const struct batch *b = item;

	return name_hash(b->name, b->name_len);
}

static uint64_t
member_key(const void *item)
{
	return idx_mix(((const struct bmember *)item)->id);
}

struct name_arg {
	const char *p;
	size_t len;
};

static bool
name_eq(const void *item, const void *arg)
{
	const struct batch *b = item;
	const struct name_arg *a = arg;

	return b->name_len == a->len && memcmp(b->name, a->p, a->len) == 0;
}

static void
batch_free(struct batch *b)
{
	if (b == NULL)
		return;
	for (int i = 0; i < 2; i++) {
		free(b->on_tube[i]);
		free(b->on_payload[i]);
	}
	free(b->name);
	free(b);
}

void
batches_init(struct batches *bs)
{
	memset(bs, 0, sizeof(*bs));
	idx_init(&bs->names, batch_key);
	idx_init(&bs->members, member_key);
	buf_init(&bs->cb[0]);
	buf_init(&bs->cb[1]);
}

void
batches_fini(struct batches *bs)
{
	for (uint32_t i = 0; i < bs->members.cap; i++)
		if (bs->members.slot[i] != 0)
			free(idx_at(&bs->members, i));
	for (uint32_t i = 0; i < bs->names.cap; i++)
		if (bs->names.slot[i] != 0)
			batch_free(idx_at(&bs->names, i));
	idx_fini(&bs->members);
	idx_fini(&bs->names);
	free(bs->spare);
	buf_fini(&bs->cb[0]);
	buf_fini(&bs->cb[1]);
}

bool
queue_batch_name_valid(const char *name, size_t len)
{
	return len >= 1 && len <= QREC_BATCH_MAX && name != NULL &&
	    qrec_tube_valid(name, len);
}

struct batch *
queue_batch_find(const struct queue *q, const char *name, size_t len)
{
	struct name_arg a = { name, len };

	return idx_find_eq(&q->bt.names, name_hash(name, len), name_eq, &a);
}

static struct bmember *
member_find(const struct queue *q, uint64_t id)
{
	return idx_find(&q->bt.members, idx_mix(id));
}

uint64_t
queue_batch_count(const struct queue *q)
{
	return q->bt.names.len;
}

static struct batch *
batch_new(const char *name, size_t len)
{
	struct batch *b = calloc(1, sizeof(*b));

	if (b == NULL || (b->name = malloc(len + 1)) == NULL) {
		free(b);
		return NULL;
	}
	memcpy(b->name, name, len);
	b->name[len] = '\0';
	b->name_len = (uint16_t)len;
	return b;
}

/* ---- Decide ----------------------------------------------------------- */

int
batch_decide_put(
    struct queue *q, const void *arg, struct qrec_put *p, uint16_t *type)
{
	const struct queue_put_req *req = arg;
	const struct batch *b;

	if (!queue_batch_name_valid(req->batch, req->batch_len))
		return SLUICE_EINVAL;
	if (req->replace || req->if_newer != 0 || req->period_ms != 0 ||
	    req->debounce_ms != 0 || req->throttle_ms != 0)
		return SLUICE_EINVAL;
	b = queue_batch_find(q, req->batch, req->batch_len);
	if (b != NULL && (b->closed || b->ended))
		return SLUICE_EBATCH;
	if (b == NULL && q->bt.names.len >= QUEUE_BATCHES_MAX)
		return SLUICE_ELIMIT;
	p->batch = req->batch;
	p->batch_len = req->batch_len;
	*type = QREC_PUT_X;
	return 0;
}

static int
callback_check(const char *tube, size_t tube_len, size_t payload_len)
{
	if (tube == NULL || tube_len == 0)
		return 0;
	if (!qrec_tube_valid(tube, tube_len))
		return SLUICE_ETUBE;
	return payload_len > QREC_BATCH_PAYLOAD_MAX ? SLUICE_ETOOBIG : 0;
}

int
queue_decide_batch_set(struct queue *q, const char *name, size_t len,
    const char *st, size_t st_len, const void *sp, size_t sp_len,
    const char *ct, size_t ct_len, const void *cp, size_t cp_len,
    struct qrec *out)
{
	const struct batch *b;
	struct qrec_batch *r = &out->u.batch;
	int rc;

	if (!queue_batch_name_valid(name, len))
		return SLUICE_EINVAL;
	if ((rc = callback_check(st, st_len, sp_len)) != 0 ||
	    (rc = callback_check(ct, ct_len, cp_len)) != 0)
		return rc;
	b = queue_batch_find(q, name, len);
	if (b != NULL && b->ended)
		return SLUICE_EBATCH;
	if (b == NULL && q->bt.names.len >= QUEUE_BATCHES_MAX)
		return SLUICE_ELIMIT;
	memset(out, 0, sizeof(*out));
	out->type = QREC_BATCH_SET;
	r->name = name;
	r->name_len = len;
	if (b != NULL) { /* what is not given stays */
		r->success_tube = b->on_tube[0];
		r->success_tube_len = b->on_tube_len[0];
		r->success_payload = b->on_payload[0];
		r->success_payload_len = b->on_payload_len[0];
		r->complete_tube = b->on_tube[1];
		r->complete_tube_len = b->on_tube_len[1];
		r->complete_payload = b->on_payload[1];
		r->complete_payload_len = b->on_payload_len[1];
	}
	if (st != NULL) {
		r->success_tube = st;
		r->success_tube_len = st_len;
		r->success_payload = st_len > 0 ? sp : NULL;
		r->success_payload_len = st_len > 0 ? sp_len : 0;
	}
	if (ct != NULL) {
		r->complete_tube = ct;
		r->complete_tube_len = ct_len;
		r->complete_payload = ct_len > 0 ? cp : NULL;
		r->complete_payload_len = ct_len > 0 ? cp_len : 0;
	}
	return 0;
}

int
queue_decide_batch_close(
    struct queue *q, const char *name, size_t len, struct qrec *out)
{
	const struct batch *b;

	if (!queue_batch_name_valid(name, len))
		return SLUICE_EINVAL;
	if ((b = queue_batch_find(q, name, len)) == NULL)
		return SLUICE_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	if (b->closed)
		return 0; /* QREC_NONE */
	out->type = QREC_BATCH_CLOSE;
	out->u.batch.name = name;
	out->u.batch.name_len = len;
	return 0;
}

struct batch *
queue_batch_owed(const struct queue *q)
{
	if (q->bt.nowed == 0)
		return NULL;
	for (uint32_t i = 0; i < q->bt.names.cap; i++) {
		struct batch *b;

		if (q->bt.names.slot[i] == 0)
			continue;
		b = idx_at(&q->bt.names, i);
		if (b->owed != 0)
			return b;
	}
	return NULL;
}

int
queue_decide_batch_fire(
    struct queue *q, int64_t now, const struct batch *b, struct qrec *out)
{
	struct queue_batch_info info;
	uint64_t next = q->next_id;
	int n = 0, rc;

	if (b == NULL || b->owed == 0)
		return SLUICE_ESTATE;
	if ((rc = queue_batch_show(q, b->name, b->name_len, &info)) != 0)
		return rc;
	memset(out, 0, sizeof(*out));
	out->type = QREC_BATCH_FIRE;
	out->u.batch.name = b->name;
	out->u.batch.name_len = b->name_len;
	out->u.batch.which = b->owed;
	for (int i = 0; i < 2; i++) {
		struct queue_put_req req;
		struct queue_put_res res;
		struct buf *pl = &q->bt.cb[i];
		struct qrec pr;

		if ((b->owed & (1 << i)) == 0)
			continue;
		buf_reset(pl);
		queue_batch_json(&info, i == 0 ? "success" : "complete",
		    b->on_payload[i], b->on_payload_len[i], pl);
		if (buf_failed(pl))
			return SLUICE_ENOMEM;
		queue_put_req_init(&req);
		req.tube = b->on_tube[i];
		req.tube_len = b->on_tube_len[i];
		req.payload = pl->data;
		req.payload_len = pl->len;
		if ((rc = queue_decide_put(q, now, &req, &pr, &res)) != 0)
			return rc;
		if (pr.type != QREC_PUT)
			return SLUICE_ESTATE;
		pr.u.put.id = next++;
		out->u.batch.puts[n++] = pr.u.put;
	}
	return 0;
}

/* ---- Counts ----------------------------------------------------------- */

/* Counts live task t in its state's count of `i` (waiting, ready,
 * delayed or taken; a buried task is counted by the batch itself). */
void
batch_count_live(struct queue_batch_info *i, const struct task *t)
{
	switch (t->state) {
	case QUEUE_WAITING:
		i->waiting++;
		break;
	case QUEUE_READY:
		i->ready++;
		break;
	case QUEUE_DELAYED:
		i->delayed++;
		break;
	case QUEUE_TAKEN:
		i->taken++;
		break;
	default:
		break;
	}
}

int
queue_batch_show(const struct queue *q, const char *name, size_t len,
    struct queue_batch_info *out)
{
	const struct batch *b = queue_batch_find(q, name, len);

	if (b == NULL)
		return SLUICE_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	out->b = b;
	out->total = b->total;
	out->acked = b->acked;
	out->buried = b->buried;
	out->failed = b->failed;
	out->started_at = b->started_at;
	out->ended_at = b->ended ? b->ended_at : 0;
	out->closed = b->closed;
	out->ended = b->ended;
	out->owed = b->owed;
	out->fired = b->fired;
	if (b->nlive == 0)
		return 0;
	for (uint32_t i = 0; i < q->bt.members.cap; i++) {
		const struct bmember *m;
		const struct task *t;

		if (q->bt.members.slot[i] == 0)
			continue;
		m = idx_at(&q->bt.members, i);
		if (m->b != b || (t = qs_task(q, m->id)) == NULL)
			continue;
		batch_count_live(out, t);
	}
	return 0;
}

static void
json_str(struct buf *out, const void *p, size_t n)
{
	const uint8_t *s = p;

	buf_put_u8(out, '"');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			buf_printf(out, "\\%c", s[i]);
		else if (s[i] < 0x20 || s[i] == 0x7f)
			buf_printf(out, "\\u%04x", s[i]);
		else
			buf_put_u8(out, s[i]);
	}
	buf_put_u8(out, '"');
}

void
queue_batch_json(const struct queue_batch_info *i, const char *event,
    const void *payload, size_t payload_len, struct buf *out)
{
	buf_printf(out, "{\"batch\":");
	json_str(out, i->b->name, i->b->name_len);
	if (event != NULL)
		buf_printf(out, ",\"event\":\"%s\"", event);
	buf_printf(out,
	    ",\"total\":%" PRIu64 ",\"waiting\":%" PRIu64 ",\"ready\":%" PRIu64
	    ",\"delayed\":%" PRIu64 ",\"taken\":%" PRIu64 ",\"buried\":%" PRIu64
	    ",\"acked\":%" PRIu64 ",\"failed\":%" PRIu64,
	    i->total, i->waiting, i->ready, i->delayed, i->taken, i->buried,
	    i->acked, i->failed);
	buf_printf(out,
	    ",\"started_at\":%" PRId64 ",\"ended_at\":%" PRId64
	    ",\"closed\":%s,\"ended\":%s",
	    i->started_at, i->ended_at, i->closed ? "true" : "false",
	    i->ended ? "true" : "false");
	if (event == NULL) {
		for (int k = 0; k < 2; k++) {
			const struct batch *b = i->b;

			buf_printf(out,
			    ",\"%s\":", k == 0 ? "on_success" : "on_complete");
			if (b->on_tube[k] == NULL) {
				buf_printf(out, "null");
				continue;
			}
			buf_printf(out, "{\"tube\":");
			json_str(out, b->on_tube[k], b->on_tube_len[k]);
			if ((b->fired & (1 << k)) != 0)
				buf_printf(
				    out, ",\"task\":%" PRIu64, b->fired_id[k]);
			buf_printf(out, "}");
		}
	}
	if (payload != NULL) {
		buf_printf(out, ",\"payload\":");
		json_str(out, payload, payload_len);
	}
	buf_put_u8(out, '}');
}

/* ---- Apply ------------------------------------------------------------ */

/* `b` ends now if it can: closed, nothing live. */
static void
maybe_end(struct queue *q, struct batch *b, int64_t time)
{
	if (b->ended || !b->closed || b->nlive != 0)
		return;
	b->ended = true;
	b->ended_at = time;
	if (b->on_tube[0] != NULL && b->acked == b->total)
		b->owed |= QREC_BATCH_ON_SUCCESS;
	if (b->on_tube[1] != NULL)
		b->owed |= QREC_BATCH_ON_COMPLETE;
	if (b->owed != 0) {
		q->bt.nowed++;
		return;
	}
	b->expires = time + q->cfg.dedup_ms;
	b->next = NULL;
	if (q->bt.old_tail != NULL)
		q->bt.old_tail->next = b;
	else
		q->bt.old_head = b;
	q->bt.old_tail = b;
}

enum how { HOW_ACKED, HOW_BURIED, HOW_FAILED };

static void
member_end(struct queue *q, struct bmember *m, enum how how)
{
	struct batch *b = m->b;

	idx_remove(&q->bt.members, m);
	free(m);
	b->nlive--;
	if (how == HOW_ACKED)
		b->acked++;
	else if (how == HOW_BURIED)
		b->buried++;
	else
		b->failed++;
	maybe_end(q, b, q->bt.time);
}

int
batch_apply_put(struct queue *q, int64_t time, const struct qrec_put *p)
{
	struct batches *bs = &q->bt;
	struct batch *b = NULL;
	int rc;

	if (p->batch_len > 0) {
		b = queue_batch_find(q, p->batch, p->batch_len);
		if (b != NULL && (b->closed || b->ended))
			return SLUICE_ECORRUPT;
		if (member_find(q, p->id) != NULL)
			return SLUICE_ECORRUPT;
		if ((bs->spare = calloc(1, sizeof(*bs->spare))) == NULL)
			return SLUICE_ENOMEM;
		if (b == NULL &&
		    ((bs->made = b = batch_new(p->batch, p->batch_len)) ==
		            NULL ||
		        idx_reserve(&bs->names, 1) != 0))
			goto nomem;
		if (idx_reserve(&bs->members, 1) != 0)
			goto nomem;
	}
	rc = p->nafter > 0 ? deps_apply_put(q, time, p)
	                   : qs_apply_put(q, time, p);
	if (rc != 0 || b == NULL) {
		if (b != NULL)
			goto undo;
		return rc;
	}
	if (bs->made != NULL)
		idx_insert(&bs->names, bs->made);
	bs->made = NULL;
	bs->spare->id = p->id;
	bs->spare->b = b;
	idx_insert(&bs->members, bs->spare);
	bs->spare = NULL;
	if (b->started_at == 0)
		b->started_at = time;
	b->total++;
	b->nlive++;
	return 0;
nomem:
	rc = SLUICE_ENOMEM;
undo:
	batch_free(bs->made);
	bs->made = NULL;
	free(bs->spare);
	bs->spare = NULL;
	return rc;
}

static int
dup_mem(const void *p, size_t n, void **out)
{
	*out = NULL;
	if (p == NULL)
		return 0;
	if ((*out = malloc(n + 1)) == NULL)
		return SLUICE_ENOMEM;
	if (n > 0)
		memcpy(*out, p, n);
	((char *)*out)[n] = '\0';
	return 0;
}

static int
apply_set(struct queue *q, const struct qrec_batch *r)
{
	struct batch *b = queue_batch_find(q, r->name, r->name_len);
	const char *tube[2] = { r->success_tube, r->complete_tube };
	size_t tlen[2] = { r->success_tube_len, r->complete_tube_len };
	const void *pl[2] = { r->success_payload, r->complete_payload };
	size_t plen[2] = { r->success_payload_len, r->complete_payload_len };
	void *nt[2] = { NULL, NULL }, *np[2] = { NULL, NULL };
	struct batch *made = NULL;

	if (b != NULL && b->ended)
		return SLUICE_ECORRUPT;
	for (int i = 0; i < 2; i++)
		if (tlen[i] > 0 &&
		    (dup_mem(tube[i], tlen[i], &nt[i]) != 0 ||
		        dup_mem(pl[i] != NULL ? pl[i] : "", plen[i], &np[i]) !=
		            0))
			goto nomem;
	if (b == NULL &&
	    ((made = b = batch_new(r->name, r->name_len)) == NULL ||
	        idx_reserve(&q->bt.names, 1) != 0))
		goto nomem;
	if (made != NULL)
		idx_insert(&q->bt.names, made);
	for (int i = 0; i < 2; i++) {
		free(b->on_tube[i]);
		free(b->on_payload[i]);
		b->on_tube[i] = nt[i];
		b->on_payload[i] = np[i];
		b->on_tube_len[i] = (uint32_t)(nt[i] != NULL ? tlen[i] : 0);
		b->on_payload_len[i] = (uint32_t)(nt[i] != NULL ? plen[i] : 0);
	}
	return 0;
nomem:
	batch_free(made);
	for (int i = 0; i < 2; i++) {
		free(nt[i]);
		free(np[i]);
	}
	return SLUICE_ENOMEM;
}

static int
apply_fire(struct queue *q, int64_t time, const struct qrec_batch *r)
{
	struct batch *b = queue_batch_find(q, r->name, r->name_len);
	int n = 0, rc;

	if (b == NULL || !b->ended || r->which != b->owed)
		return SLUICE_ECORRUPT;
	for (int i = 0; i < 2; i++) {
		const struct qrec_put *p;

		if ((r->which & (1 << i)) == 0)
			continue;
		p = &r->puts[n++];
		if (p->tube_len != b->on_tube_len[i] ||
		    memcmp(p->tube, b->on_tube[i], p->tube_len) != 0)
			return SLUICE_ECORRUPT;
	}
	/* Two puts: the first cannot be undone, so the second must not fail
	 * for want of memory after it. qs_apply_put fails only before it
	 * changes anything; a failure of the second stops the server (a
	 * failed apply), as for any record. */
	n = 0;
	for (int i = 0; i < 2; i++) {
		if ((r->which & (1 << i)) == 0)
			continue;
		if ((rc = qs_apply_put(q, time, &r->puts[n])) != 0)
			return rc;
		b->fired |= (uint8_t)(1 << i);
		b->fired_id[i] = r->puts[n++].id;
	}
	b->owed = 0;
	q->bt.nowed--;
	b->expires = time + q->cfg.dedup_ms;
	b->next = NULL;
	if (q->bt.old_tail != NULL)
		q->bt.old_tail->next = b;
	else
		q->bt.old_head = b;
	q->bt.old_tail = b;
	return 0;
}

int
batch_apply(struct queue *q, int64_t time, const struct qrec *rec)
{
	const struct qrec_batch *r = &rec->u.batch;
	struct batch *b;

	switch (rec->type) {
	case QREC_BATCH_SET:
		return apply_set(q, r);
	case QREC_BATCH_CLOSE:
		b = queue_batch_find(q, r->name, r->name_len);
		if (b == NULL || b->closed)
			return SLUICE_ECORRUPT;
		b->closed = true;
		maybe_end(q, b, time);
		return 0;
	case QREC_BATCH_FIRE:
		return apply_fire(q, time, r);
	default:
		return qs_sched_apply(q, time, rec);
	}
}

void
batch_hooks_before(struct queue *q, int64_t time, const struct qrec *rec)
{
	qs_outcome_before(q, rec);
	deps_before(q, rec);
	batch_before(q, time, rec);
}

void
batch_before(struct queue *q, int64_t time, const struct qrec *rec)
{
	q->bt.time = time;
	q->bt.acking = 0;
	if ((rec->type == QREC_ACK || rec->type == QREC_ACK_R) &&
	    (rec->u.end.outcome == QREC_DELETED ||
	        rec->u.end.outcome == QREC_DONE))
		q->bt.acking = rec->u.end.id;
}

void
batch_after(struct queue *q, const struct qrec *rec)
{
	struct bmember *m;
	uint64_t id = q->bt.acking;

	q->bt.acking = 0;
	if (q->bt.members.len == 0)
		return;
	if (id != 0 && (m = member_find(q, id)) != NULL) {
		member_end(q, m, HOW_ACKED); /* kept as done */
		return;
	}
	switch (rec->type) {
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_SETBACK:
		if (rec->u.end.outcome == QREC_MOVED &&
		    (m = member_find(q, rec->u.end.id)) != NULL)
			member_end(q, m, HOW_FAILED);
		break;
	default:
		break;
	}
}

void
batch_task_gone(struct queue *q, const struct task *t)
{
	struct bmember *m = member_find(q, t->id);

	if (m != NULL)
		member_end(
		    q, m, t->id == q->bt.acking ? HOW_ACKED : HOW_FAILED);
}

void
batch_task_buried(struct queue *q, const struct task *t)
{
	struct bmember *m = member_find(q, t->id);

	if (m != NULL)
		member_end(q, m, HOW_BURIED);
}

void
batch_tick(struct queue *q, int64_t now)
{
	struct batch *b;

	while ((b = q->bt.old_head) != NULL && b->expires <= now) {
		q->bt.old_head = b->next;
		if (q->bt.old_head == NULL)
			q->bt.old_tail = NULL;
		idx_remove(&q->bt.names, b);
		batch_free(b);
	}
}

/* ---- Snapshot, check, dump -------------------------------------------- */

int
batch_snapshot_write(const struct queue *q, queue_emit_fn *emit, void *arg)
{
	const struct batches *bs = &q->bt;
	struct buf w;
	int rc = 0;

	if (bs->names.len == 0)
		return 0;
	buf_init(&w);
	/* the kept ones in the order they are forgotten, then the others */
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		const struct batch *b = bs->old_head;

		for (uint32_t i = 0; rc == 0; i++) {
			struct qrec rec;

			if (pass == 0) {
				if (b == NULL)
					break;
			} else {
				if (i >= bs->names.cap)
					break;
				if (bs->names.slot[i] == 0)
					continue;
				b = idx_at(&bs->names, i);
				if (b->ended && b->owed == 0)
					continue;
			}
			buf_reset(&w);
			buf_put_i64(&w, b->started_at);
			buf_put_i64(&w, b->ended_at);
			buf_put_i64(&w, b->expires);
			buf_put_u64(&w, b->total);
			buf_put_u64(&w, b->nlive);
			buf_put_u64(&w, b->acked);
			buf_put_u64(&w, b->buried);
			buf_put_u64(&w, b->failed);
			buf_put_u64(&w, b->fired_id[0]);
			buf_put_u64(&w, b->fired_id[1]);
			buf_put_u8(&w, (uint8_t)(b->closed | b->ended << 1));
			buf_put_u8(&w, b->owed);
			buf_put_u8(&w, b->fired);
			memset(&rec, 0, sizeof(rec));
			rec.type = QREC_BATCH_SET;
			rec.u.batch.name = b->name;
			rec.u.batch.name_len = b->name_len;
			rec.u.batch.success_tube = b->on_tube[0];
			rec.u.batch.success_tube_len = b->on_tube_len[0];
			rec.u.batch.success_payload = b->on_payload[0];
			rec.u.batch.success_payload_len = b->on_payload_len[0];
			rec.u.batch.complete_tube = b->on_tube[1];
			rec.u.batch.complete_tube_len = b->on_tube_len[1];
			rec.u.batch.complete_payload = b->on_payload[1];
			rec.u.batch.complete_payload_len = b->on_payload_len[1];
			if ((rc = qrec_encode(&rec, &w)) != 0)
				break;
			if (buf_failed(&w)) {
				rc = SLUICE_ENOMEM;
				break;
			}
			rc = emit(arg, QSNAP_BATCH, w.data, w.len, NULL, 0);
			if (pass == 0)
				b = b->next;
		}
	}
	for (uint32_t i = 0; rc == 0 && i < bs->members.cap; i++) {
		const struct bmember *m;
		uint8_t mem[8 + 2 + QREC_BATCH_MAX];

		if (bs->members.slot[i] == 0)
			continue;
		m = idx_at(&bs->members, i);
		for (int k = 0; k < 8; k++)
			mem[k] = (uint8_t)(m->id >> (8 * k));
		mem[8] = (uint8_t)(m->b->name_len & 0xff);
		mem[9] = (uint8_t)(m->b->name_len >> 8);
		memcpy(mem + 10, m->b->name, m->b->name_len);
		rc = emit(
		    arg, QSNAP_BMEMBER, mem, 10u + m->b->name_len, NULL, 0);
	}
	buf_fini(&w);
	return rc;
}

static int
load_batch(struct queue *q, struct rd *r)
{
	int64_t started = rd_i64(r), ended_at = rd_i64(r), expires = rd_i64(r);
	uint64_t total = rd_u64(r), nlive = rd_u64(r), acked = rd_u64(r);
	uint64_t buried = rd_u64(r), failed = rd_u64(r);
	uint64_t f0 = rd_u64(r), f1 = rd_u64(r);
	uint8_t flags = rd_u8(r), owed = rd_u8(r), fired = rd_u8(r);
	struct qrec rec;
	struct batch *b;
	int rc;

	memset(&rec, 0, sizeof(rec));
	rec.type = QREC_BATCH_SET;
	qrec_batch_decode(r, QREC_BATCH_SET, &rec.u.batch);
	if (rd_failed(r) || rd_left(r) != 0 || !qrec_valid(&rec) || flags > 3 ||
	    owed > 3 || fired > 3 ||
	    queue_batch_find(q, rec.u.batch.name, rec.u.batch.name_len) !=
	        NULL ||
	    total != nlive + acked + buried + failed ||
	    ((flags & 2) != 0 && (nlive != 0 || (flags & 1) == 0)) ||
	    (owed != 0 && (flags & 2) == 0))
		return SLUICE_ECORRUPT; /* members count themselves in */
	if ((rc = apply_set(q, &rec.u.batch)) != 0)
		return rc;
	b = queue_batch_find(q, rec.u.batch.name, rec.u.batch.name_len);
	b->started_at = started;
	b->ended_at = ended_at;
	b->expires = expires;
	b->total = total;
	b->acked = acked;
	b->buried = buried;
	b->failed = failed;
	b->fired_id[0] = f0;
	b->fired_id[1] = f1;
	b->closed = (flags & 1) != 0;
	b->ended = (flags & 2) != 0;
	b->owed = owed;
	b->fired = fired;
	if (owed != 0)
		q->bt.nowed++;
	else if (b->ended) {
		if (q->bt.old_tail != NULL)
			q->bt.old_tail->next = b;
		else
			q->bt.old_head = b;
		q->bt.old_tail = b;
	}
	return 0;
}

int
batch_snapshot_load(struct queue *q, uint16_t type, struct rd *r)
{
	struct bmember *m;
	struct batch *b;
	const char *name;
	size_t len;
	uint64_t id;

	if (type == QSNAP_BATCH)
		return load_batch(q, r);
	id = rd_u64(r);
	name = rd_str16(r, QREC_BATCH_MAX, &len);
	if (rd_failed(r) || rd_left(r) != 0 || len == 0 ||
	    (b = queue_batch_find(q, name, len)) == NULL || b->ended ||
	    qs_task(q, id) == NULL || member_find(q, id) != NULL)
		return SLUICE_ECORRUPT;
	/* a member's total was counted with its batch: nlive comes back
	 * one member at a time */
	if (b->nlive + b->acked + b->buried + b->failed >= b->total)
		return SLUICE_ECORRUPT;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return SLUICE_ENOMEM;
	if (idx_reserve(&q->bt.members, 1) != 0) {
		free(m);
		return SLUICE_ENOMEM;
	}
	m->id = id;
	m->b = b;
	idx_insert(&q->bt.members, m);
	b->nlive++;
	return 0;
}

const char *
batch_check(const struct queue *q)
{
	const struct batches *bs = &q->bt;
	uint64_t live = 0;
	uint32_t owed = 0;

	for (uint32_t i = 0; i < bs->names.cap; i++) {
		const struct batch *b;

		if (bs->names.slot[i] == 0)
			continue;
		b = idx_at(&bs->names, i);
		if (b->total != b->nlive + b->acked + b->buried + b->failed)
			return "batch: counts do not add up";
		if (b->ended && (b->nlive != 0 || !b->closed))
			return "batch: ended with live tasks";
		if (!b->ended && b->closed && b->nlive == 0)
			return "batch: closed, empty, not ended";
		owed += b->owed != 0;
		live += b->nlive;
	}
	if (owed != bs->nowed)
		return "batch: owed count";
	if (live != bs->members.len)
		return "batch: members and live counts differ";
	for (uint32_t i = 0; i < bs->members.cap; i++) {
		const struct bmember *m;

		if (bs->members.slot[i] == 0)
			continue;
		m = idx_at(&bs->members, i);
		if (qs_task(q, m->id) == NULL)
			return "batch: a member with no task";
	}
	return NULL;
}

void
batch_dump(const struct queue *q, struct buf *out)
{
	const struct batches *bs = &q->bt;

	/* by name, so that two equal queues dump alike */
	const struct batch **v;
	uint32_t n = 0;

	if (bs->names.len == 0)
		return;
	if ((v = malloc(sizeof(*v) * bs->names.len)) == NULL) {
		buf_printf(out, "batches: out of memory\n");
		return;
	}
	for (uint32_t i = 0; i < bs->names.cap; i++)
		if (bs->names.slot[i] != 0)
			v[n++] = idx_at(&bs->names, i);
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i;
		     j > 0 && strcmp(v[j - 1]->name, v[j]->name) > 0; j--) {
			const struct batch *x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	for (uint32_t i = 0; i < n; i++) {
		const struct batch *b = v[i];

		buf_printf(out,
		    "batch %s total=%" PRIu64 " live=%" PRIu64 " acked=%" PRIu64
		    " buried=%" PRIu64 " failed=%" PRIu64 " started=%" PRId64
		    "%s%s ended=%" PRId64 " owed=%u fired=%u expires=%" PRId64
		    " on_success=%s "
		    "on_complete=%s\n",
		    b->name, b->total, b->nlive, b->acked, b->buried, b->failed,
		    b->started_at, b->closed ? " closed" : "",
		    b->ended ? " ended" : "", b->ended_at, b->owed, b->fired,
		    b->expires, b->on_tube[0] ? b->on_tube[0] : "-",
		    b->on_tube[1] ? b->on_tube[1] : "-");
	}
	free(v);
}
