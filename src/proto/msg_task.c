/* msg_task - the wire codec of the messages that carry tasks: put and
 * put_batch, take, update, peek (by id, key or next), list, job, delete
 * (by id or key) and kick_id; and the task record, the put result and the
 * take's tube list they are made of. Each element's decoder stands beside
 * its encoder, and each request's decoding beside its encoding; msg.c
 * frames them and sends each op here through msg_task_family. */
#include <assert.h>
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "util/name.h"
#include "sluice.h"

/* The states peek_next can look into. */
static bool
peek_state_valid(uint8_t st)
{
	return st == MSG_ST_READY || st == MSG_ST_DELAYED ||
	    st == MSG_ST_BURIED || st == MSG_ST_DONE || st == MSG_ST_WAITING;
}

static bool
order_valid(uint8_t order)
{
	return msg_order_name(order) != NULL;
}

/* A cursor pages in id order only: another order's position moves as
 * tasks are taken and retried, id never does. */
static int
list_cursor_valid(const struct msg_list *l)
{
	return l->after == 0 || l->order == MSG_ORDER_ID ? 0 : SLUICE_EINVAL;
}

static bool
job_verb_valid(uint8_t verb)
{
	return verb >= MSG_JOB_DELETE && verb < MSG_JOB_END_;
}

/* update: at least one field, and a delay or a time, not both. */
static int
check_update_flags(uint8_t flags)
{
	if (flags == 0 || (flags & UPD_F_DELAY && flags & UPD_F_AT))
		return SLUICE_EINVAL;
	return 0;
}

/* With flag 0x04, the version after the payload: at least 1, and only
 * with replace (which has a key). EINVAL otherwise. */
static int
get_if_newer(struct rd *r, uint8_t flags, struct msg_put *p)
{
	if (!(flags & PUT_F_IF_NEWER))
		return 0;
	p->if_newer = rd_u64(r);
	NEED(r);
	return p->if_newer == 0 || !p->replace ? SLUICE_EINVAL : 0;
}

/* With flag 0x80, then flag 0x40, after the version: the debounce and the
 * throttle window in ms, each at least 1 (EINVAL otherwise; the server
 * checks the rest). */
static int
get_mode(struct rd *r, uint8_t flags, struct msg_put *p)
{
	if (flags & PUT_F_DEBOUNCE) {
		p->debounce = rd_u64(r);
		NEED(r);
		if (p->debounce == 0)
			return SLUICE_EINVAL;
	}
	if (flags & PUT_F_THROTTLE) {
		p->throttle = rd_u64(r);
		NEED(r);
		if (p->throttle == 0)
			return SLUICE_EINVAL;
	}
	return 0;
}

/* With flag 0x08, the group, last: 1-200 bytes of the tube alphabet. A
 * bad one is EGROUP (its bytes read). */
static int
get_group(struct rd *r, uint8_t flags, struct msg_str *g)
{
	if (!(flags & PUT_F_GROUP))
		return 0;
	TRY(msg_get_str(r, MSG_TUBE_MAX, SLUICE_EGROUP, g));
	return msg_tube_valid(g->p, g->len) ? 0 : SLUICE_EGROUP;
}

static uint8_t
put_flags(const struct msg_put *p)
{
	return (p->replace ? PUT_F_REPLACE : 0) | (p->at ? PUT_F_AT : 0) |
	    (p->if_newer != 0 ? PUT_F_IF_NEWER : 0) |
	    (p->debounce != 0 ? PUT_F_DEBOUNCE : 0) |
	    (p->throttle != 0 ? PUT_F_THROTTLE : 0) |
	    (p->group.len != 0 ? PUT_F_GROUP : 0) | (p->ext ? PUT_F_EXT : 0);
}

/* After the payload: the version, with flag 0x04, then the modes' windows,
 * then the group, with flag 0x08, then the tagged fields, with flag 0x10,
 * last (put_flags). */
static int
put_if_newer(struct buf *b, const struct msg_put *p)
{
	if (p->if_newer != 0)
		buf_put_u64(b, p->if_newer);
	if (p->debounce != 0)
		buf_put_u64(b, p->debounce);
	if (p->throttle != 0)
		buf_put_u64(b, p->throttle);
	if (p->group.len != 0)
		msg_put_str(b, p->group);
	return msg_put_put_ext(b, p);
}

/* The put fields, after the flags that came with them. */
static int
get_put(struct rd *r, uint8_t flags, size_t payload_max, struct msg_put *p)
{
	memset(p, 0, sizeof(*p));
	if (flags & ~PUT_F_ALL)
		return SLUICE_EPROTO;
	p->replace = flags & PUT_F_REPLACE;
	p->at = flags & PUT_F_AT;
	TRY(msg_get_tube(r, false, &p->tube));
	p->priority = rd_u32(r);
	p->when = rd_u64(r);
	p->ttr = rd_u64(r);
	p->max_attempts = rd_u32(r);
	p->period = rd_u64(r);
	TRY(msg_get_key(r, false, &p->key));
	if (p->replace && p->key.len == 0)
		return SLUICE_EINVAL;
	TRY(msg_get_payload(r, payload_max, &p->payload));
	TRY(get_if_newer(r, flags, p));
	TRY(get_mode(r, flags, p));
	TRY(get_group(r, flags, &p->group));
	return msg_get_put_ext(r, flags, p);
}

static int
enc_put(struct buf *b, const struct msg_put *p)
{
	TRY(msg_put_tube(b, p->tube, false));
	buf_put_u32(b, p->priority);
	buf_put_u64(b, p->when);
	buf_put_u64(b, p->ttr);
	buf_put_u32(b, p->max_attempts);
	buf_put_u64(b, p->period);
	TRY(msg_put_key(b, p->key, false));
	if ((p->replace || p->if_newer != 0) && p->key.len == 0)
		return SLUICE_EINVAL;
	if (p->if_newer != 0 && !p->replace)
		return SLUICE_EINVAL;
	if (p->group.len != 0 && !msg_tube_valid(p->group.p, p->group.len))
		return SLUICE_EGROUP;
	TRY(msg_put_payload(b, p->payload));
	return put_if_newer(b, p);
}

/* A field of a batch item: a length (just read) and its bytes. A length
 * over `max` whose bytes are all there is the item's error `err` (kept in
 * *item_err when it is the first); over `max` with bytes missing, the
 * request's (section 2 of the protocol: a limit before a truncation). */
static int
get_item_bytes(struct rd *r, size_t len, size_t max, int err,
    struct msg_str *out, int *item_err)
{
	const uint8_t *p;

	NEED(r);
	if (len > max && rd_left(r) < len)
		return err;
	p = rd_bytes(r, len);
	NEED(r);
	out->p = len ? (const char *)p : "";
	out->len = len;
	if (len > max && *item_err == 0)
		*item_err = err;
	return 0;
}

/* One batch item: its flags byte, then the put fields. What breaks only
 * this item (a bad tube, a bad key, a replace without a key, a payload
 * over the limit) is read whole and kept in p->error. */
static int
get_put_item(struct rd *r, size_t payload_max, struct msg_put *p)
{
	uint8_t flags = rd_u8(r);
	const uint8_t *fixed;
	int err = 0, rc;

	NEED(r);
	memset(p, 0, sizeof(*p));
	if (flags & ~PUT_F_ALL)
		return SLUICE_EPROTO;
	p->replace = flags & PUT_F_REPLACE;
	p->at = flags & PUT_F_AT;
	TRY(get_item_bytes(
	    r, rd_u16(r), MSG_TUBE_MAX, SLUICE_ETUBE, &p->tube, &err));
	if (err == 0 && !name_valid(p->tube.p, p->tube.len, MSG_TUBE_MAX))
		err = SLUICE_ETUBE;
	/* priority, when, ttr, max_attempts, period: one bounds check */
	if ((fixed = rd_bytes(r, 32)) != NULL) {
		p->priority = le_load_u32(fixed);
		p->when = le_load_u64(fixed + 4);
		p->ttr = le_load_u64(fixed + 12);
		p->max_attempts = le_load_u32(fixed + 20);
		p->period = le_load_u64(fixed + 24);
	}
	TRY(get_item_bytes(
	    r, rd_u16(r), MSG_KEY_MAX, SLUICE_EKEY, &p->key, &err));
	if (err == 0 && msg_check_key(p->key, false) != 0)
		err = SLUICE_EKEY;
	if (err == 0 && p->replace && p->key.len == 0)
		err = SLUICE_EINVAL;
	TRY(get_item_bytes(
	    r, rd_u32(r), payload_max, SLUICE_ETOOBIG, &p->payload, &err));
	if ((rc = get_if_newer(r, flags, p)) == SLUICE_EINVAL) {
		if (err == 0)
			err = rc;
	} else if (rc != 0) {
		return rc;
	}
	if ((rc = get_mode(r, flags, p)) == SLUICE_EINVAL) {
		if (err == 0)
			err = rc;
	} else if (rc != 0) {
		return rc;
	}
	if ((rc = get_group(r, flags, &p->group)) == SLUICE_EGROUP) {
		if (err == 0)
			err = rc;
	} else if (rc != 0) {
		return rc;
	}
	TRY(msg_get_put_ext(r, flags, p));
	p->error = (uint16_t)err;
	return 0;
}

/* The decoder's first pass over a batch (msg_task_get_req): whether an
 * item is laid out whole, with the error get_put_item would return, and
 * nothing more. An item without the optional fields (most) is walked, not
 * decoded: its fields are neither stored nor checked (what breaks only the
 * item is get_put_item's, in the pass that puts it); any other item is
 * read by get_put_item itself. */
static int
check_put_item(struct rd *r, size_t payload_max)
{
	struct rd at = *r;
	uint8_t flags = rd_u8(r);
	struct msg_str s;
	int err = 0;

	NEED(r);
	if (flags & ~(PUT_F_REPLACE | PUT_F_AT)) {
		struct msg_put p;

		*r = at;
		return get_put_item(r, payload_max, &p);
	}
	TRY(get_item_bytes(r, rd_u16(r), MSG_TUBE_MAX, SLUICE_ETUBE, &s, &err));
	(void)rd_bytes(r, 32); /* priority, when, ttr, max_attempts, period */
	TRY(get_item_bytes(r, rd_u16(r), MSG_KEY_MAX, SLUICE_EKEY, &s, &err));
	return get_item_bytes(
	    r, rd_u32(r), payload_max, SLUICE_ETOOBIG, &s, &err);
}

/* A batch item, as lenient as get_put_item: a bad tube, key or payload is
 * the server's to refuse (alone); only what the layout cannot hold is an
 * error here. */
static int
enc_put_item(struct buf *b, const struct msg_put *p)
{
	uint8_t *d;
	size_t n;

	if (p->tube.len > UINT16_MAX)
		return SLUICE_ETUBE;
	if (p->key.len > UINT16_MAX)
		return SLUICE_EKEY;
	if (p->group.len > UINT16_MAX)
		return SLUICE_EGROUP;
	if (p->payload.len > MSG_SIZE_MAX)
		return SLUICE_ETOOBIG;
	n = 1 + 2 + p->tube.len + 32 + 2 + p->key.len + 4 + p->payload.len;
	if (!buf_reserve(b, n))
		return 0; /* the caller sees the buffer failed */
	d = b->data + b->len;
	d[0] = put_flags(p);
	le_store_u16(d + 1, (uint16_t)p->tube.len);
	d += 3;
	if (p->tube.len > 0)
		memcpy(d, p->tube.p, p->tube.len);
	d += p->tube.len;
	le_store_u32(d, p->priority);
	le_store_u64(d + 4, p->when);
	le_store_u64(d + 12, p->ttr);
	le_store_u32(d + 20, p->max_attempts);
	le_store_u64(d + 24, p->period);
	le_store_u16(d + 32, (uint16_t)p->key.len);
	d += 34;
	if (p->key.len > 0)
		memcpy(d, p->key.p, p->key.len);
	d += p->key.len;
	le_store_u32(d, (uint32_t)p->payload.len);
	if (p->payload.len > 0)
		memcpy(d + 4, p->payload.p, p->payload.len);
	b->len += n;
	return put_if_newer(b, p);
}

static int
get_take(struct rd *r, uint8_t flags, struct msg_take *t)
{
	struct msg_str tube;

	t->detach = flags & TAKE_F_DETACH;
	t->strict = flags & TAKE_F_STRICT;
	t->durable = flags & TAKE_F_DURABLE;
	t->wait = rd_u64(r);
	t->max = rd_u32(r);
	NEED(r);
	TRY(msg_check_count(t->max, MSG_TAKE_MAX));
	t->ntubes = rd_u16(r);
	NEED(r);
	TRY(msg_check_count(t->ntubes, MSG_TAKE_TUBES_MAX));
	GET_EACH(&t->it, r, t->ntubes, 0, msg_get_tube(r, false, &tube));
	return 0;
}

static int
get_update(struct rd *r, uint8_t flags, size_t pmax, struct msg_update *u)
{
	u->set_priority = flags & UPD_F_PRIORITY;
	u->set_delay = flags & UPD_F_DELAY;
	u->set_at = flags & UPD_F_AT;
	u->set_ttr = flags & UPD_F_TTR;
	u->set_max_attempts = flags & UPD_F_MAX_ATTEMPTS;
	u->set_payload = flags & UPD_F_PAYLOAD;
	u->id = rd_u64(r);
	u->priority = rd_u32(r);
	u->when = rd_u64(r);
	u->ttr = rd_u64(r);
	u->max_attempts = rd_u32(r);
	NEED(r);
	TRY(msg_get_payload(r, pmax, &u->payload));
	if (!u->set_payload && u->payload.len != 0)
		return SLUICE_EINVAL;
	return check_update_flags(flags);
}

/* A task's pending replacement, after its payload (flag 0x02). */
static int
get_pending(struct rd *s, size_t payload_max, struct msg_task *t)
{
	t->replace_pending = true;
	t->pending.priority = rd_u32(s);
	t->pending.max_attempts = rd_u32(s);
	t->pending.ttr = rd_u64(s);
	t->pending.run_at = rd_u64(s);
	t->pending.period = rd_u64(s);
	t->pending.size = rd_u32(s);
	TRY(msg_get_payload(s, payload_max, &t->pending.payload));
	if (t->pending.payload.len != 0 &&
	    t->pending.payload.len != t->pending.size)
		return SLUICE_EPROTO;
	return 0;
}

/* A record without versions has the layout it had before them. */
static bool
has_version(const struct msg_task *t)
{
	return t->version != 0 || (t->replace_pending && t->pending.version);
}

/* One task record. Its own length bounds a sub-reader; fields it lacks are
 * EPROTO (the record lies about its size), bytes it has beyond the fields
 * of version 1 are skipped. */
static int
get_task(struct rd *r, size_t payload_max, struct msg_task *t)
{
	uint32_t len = rd_u32(r);
	const uint8_t *rec;
	struct rd s;
	uint8_t flags;
	int rc;

	NEED(r);
	rec = rd_bytes(r, len);
	NEED(r);
	rd_init(&s, rec, len);
	memset(t, 0, sizeof(*t));
	t->id = rd_u64(&s);
	t->lease = rd_u64(&s);
	t->state = rd_u8(&s);
	flags = rd_u8(&s);
	t->detached = flags & TASK_F_DETACHED;
	t->cancelled = flags & TASK_F_CANCELLED;
	t->priority = rd_u32(&s);
	t->attempts = rd_u32(&s);
	t->max_attempts = rd_u32(&s);
	t->ttr = rd_u64(&s);
	t->run_at = rd_u64(&s);
	t->period = rd_u64(&s);
	t->created_at = rd_u64(&s);
	t->updated_at = rd_u64(&s);
	t->taken_at = rd_u64(&s);
	t->deadline = rd_u64(&s);
	t->size = rd_u32(&s);
	if (!rd_failed(&s) && !msg_state_valid(t->state))
		return SLUICE_EPROTO;
	if ((rc = msg_get_tube(&s, false, &t->tube)) == 0 &&
	    (rc = msg_get_key(&s, false, &t->key)) == 0 &&
	    (rc = msg_get_text(&s, MSG_TEXT_MAX, &t->last_error)) == 0)
		rc = msg_get_payload(&s, payload_max, &t->payload);
	if (rc == 0 && (flags & TASK_F_PENDING))
		rc = get_pending(&s, payload_max, t);
	if (rc == 0 && (flags & TASK_F_DONE)) {
		t->done.finished_at = rd_u64(&s);
		t->done.kept_until = rd_u64(&s);
		t->done.duration = rd_u64(&s);
		rc = msg_get_text(&s, MSG_RESULT_MAX, &t->done.result);
	}
	if (rc == 0 && (flags & TASK_F_VERSION)) {
		t->version = rd_u64(&s);
		t->pending.version = rd_u64(&s);
		if (rd_failed(&s))
			rc = SLUICE_ETRUNC;
	}
	if (rc == 0 && (flags & TASK_F_HOLDER)) {
		t->holder.session = rd_u32(&s);
		rc = msg_get_text(&s, MSG_PEER_MAX, &t->holder.peer);
	}
	if (rc == 0 && (flags & TASK_F_GROUP) &&
	    (rc = get_group(&s, PUT_F_GROUP, &t->group)) == SLUICE_EGROUP)
		rc = SLUICE_EPROTO; /* a server sends only good names */
	if (rc == 0)
		rc = msg_get_task_deps(&s, flags, t);
	if (rc == SLUICE_ETRUNC)
		return SLUICE_EPROTO; /* the record, not the message, is short
		                       */
	if (rc != 0)
		return rc;
	if (t->payload.len != 0 && t->payload.len != t->size)
		return SLUICE_EPROTO;
	return 0;
}

static int
enc_task(struct buf *b, const struct msg_task *t)
{
	size_t at = b->len;

	if (!msg_state_valid(t->state))
		return SLUICE_EINVAL;
	if (t->payload.len != 0 && t->payload.len != t->size)
		return SLUICE_EINVAL;
	buf_put_u32(b, 0); /* the record's length, set below */
	buf_put_u64(b, t->id);
	buf_put_u64(b, t->lease);
	buf_put_u8(b, t->state);
	buf_put_u8(b,
	    (t->detached ? TASK_F_DETACHED : 0) |
	        (t->replace_pending ? TASK_F_PENDING : 0) |
	        (t->state == MSG_ST_DONE ? TASK_F_DONE : 0) |
	        (has_version(t) ? TASK_F_VERSION : 0) |
	        (t->holder.session != 0 ? TASK_F_HOLDER : 0) |
	        (t->group.len != 0 ? TASK_F_GROUP : 0) |
	        (t->has_deps ? TASK_F_DEPS : 0) |
	        (t->cancelled ? TASK_F_CANCELLED : 0));
	buf_put_u32(b, t->priority);
	buf_put_u32(b, t->attempts);
	buf_put_u32(b, t->max_attempts);
	buf_put_u64(b, t->ttr);
	buf_put_u64(b, t->run_at);
	buf_put_u64(b, t->period);
	buf_put_u64(b, t->created_at);
	buf_put_u64(b, t->updated_at);
	buf_put_u64(b, t->taken_at);
	buf_put_u64(b, t->deadline);
	buf_put_u32(b, t->size);
	TRY(msg_put_tube(b, t->tube, false));
	TRY(msg_put_key(b, t->key, false));
	TRY(msg_put_text(b, t->last_error, MSG_TEXT_MAX));
	TRY(msg_put_payload(b, t->payload));
	if (t->replace_pending) {
		if (t->pending.payload.len != 0 &&
		    t->pending.payload.len != t->pending.size)
			return SLUICE_EINVAL;
		buf_put_u32(b, t->pending.priority);
		buf_put_u32(b, t->pending.max_attempts);
		buf_put_u64(b, t->pending.ttr);
		buf_put_u64(b, t->pending.run_at);
		buf_put_u64(b, t->pending.period);
		buf_put_u32(b, t->pending.size);
		TRY(msg_put_payload(b, t->pending.payload));
	}
	if (t->state == MSG_ST_DONE) {
		buf_put_u64(b, t->done.finished_at);
		buf_put_u64(b, t->done.kept_until);
		buf_put_u64(b, t->done.duration);
		TRY(msg_put_text(b, t->done.result, MSG_RESULT_MAX));
	}
	if (has_version(t)) {
		buf_put_u64(b, t->version);
		buf_put_u64(b, t->pending.version);
	}
	if (t->holder.session != 0) {
		buf_put_u32(b, t->holder.session);
		TRY(msg_put_text(b, t->holder.peer, MSG_PEER_MAX));
	}
	if (t->group.len != 0) {
		if (!msg_tube_valid(t->group.p, t->group.len))
			return SLUICE_EGROUP;
		msg_put_str(b, t->group);
	}
	TRY(msg_put_task_deps(b, t));
	if (!buf_failed(b))
		le_store_u32(b->data + at, (uint32_t)(b->len - at - 4));
	return 0;
}

int
msg_get_tasks(struct rd *r, size_t pmax, struct msg_tasks *t)
{
	struct msg_task task;

	t->n = rd_u32(r);
	NEED(r);
	if (t->n > MSG_TAKE_MAX)
		return SLUICE_ELIMIT;
	GET_EACH(&t->it, r, t->n, pmax, get_task(r, pmax, &task));
	return 0;
}

int
msg_put_tasks(struct buf *b, const struct msg_tasks *t)
{
	if (t->n > MSG_TAKE_MAX)
		return SLUICE_ELIMIT;
	struct msg_iter it = t->it;
	const struct msg_task *e;
	struct msg_task one;

	buf_put_u32(b, t->n);
	for (uint32_t i = 0; i < t->n; i++) {
		if ((e = LIST_AT(t->tasks, i, it, msg_next_task, one)) == NULL)
			return SLUICE_EINVAL;
		TRY(enc_task(b, e));
	}
	return 0;
}

/* A put result; with `message`, a batch item's text follows. */
static int
get_put_res(struct rd *r, bool message, struct msg_put_res *out)
{
	const uint8_t *d = rd_bytes(r, 11); /* status, created, id */
	uint8_t created;

	memset(out, 0, sizeof(*out));
	NEED(r);
	out->status = le_load_u16(d);
	created = d[2];
	out->id = le_load_u64(d + 3);
	if (created > PUT_RES_THROTTLED)
		return SLUICE_EPROTO;
	out->created = created == 1;
	out->stale = created == PUT_RES_STALE;
	out->throttled = created == PUT_RES_THROTTLED;
	if (message)
		TRY(msg_get_text(r, MSG_TEXT_MAX, &out->message));
	return 0;
}

static int
enc_put_res(struct buf *b, const struct msg_put_res *r, bool message)
{
	uint8_t created = r->created ? 1
	    : r->stale               ? PUT_RES_STALE
	    : r->throttled           ? PUT_RES_THROTTLED
	                             : 0;
	uint8_t *d;

	if (message && r->message.len == 0 && (d = buf_room(b, 13)) != NULL) {
		/* a batch item put: its result and an empty text, at once */
		le_store_u16(d, r->status);
		d[2] = created;
		le_store_u64(d + 3, r->id);
		le_store_u16(d + 11, 0);
		b->len += 13;
		return 0;
	}
	buf_put_u16(b, r->status);
	buf_put_u8(b, created);
	buf_put_u64(b, r->id);
	return message ? msg_put_text(b, r->message, MSG_TEXT_MAX) : 0;
}

bool
msg_next_put(struct msg_iter *it, struct msg_put *out)
{
	NEXT(it, get_put_item(&it->r, it->payload_max, out));
}

bool
msg_next_task(struct msg_iter *it, struct msg_task *out)
{
	NEXT(it, get_task(&it->r, it->payload_max, out));
}

bool
msg_next_put_res(struct msg_iter *it, struct msg_put_res *out)
{
	NEXT(it, get_put_res(&it->r, it->flags & BATCH_F_MESSAGES, out));
}

/* ---- requests ---------------------------------------------------------- */

/* Decodes the body of a request of this family (the head is checked). */
static int
msg_task_get_req(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_req *q)
{
	switch (op) {
	case MSG_OP_PUT:
		return get_put(r, flags, pmax, &q->put);
	case MSG_OP_PUT_BATCH:
		q->put_batch.messages = flags & BATCH_F_MESSAGES;
		q->put_batch.n = rd_u32(r);
		NEED(r);
		TRY(msg_check_count(q->put_batch.n, MSG_BATCH_MAX));
		GET_EACH(&q->put_batch.it, r, q->put_batch.n, pmax,
		    check_put_item(r, pmax));
		return 0;
	case MSG_OP_TAKE:
		return get_take(r, flags, &q->take);
	case MSG_OP_UPDATE:
		return get_update(r, flags, pmax, &q->update);
	case MSG_OP_KICK_ID:
	case MSG_OP_DELETE:
	case MSG_OP_PEEK:
		q->id = rd_u64(r);
		q->with_batch = op == MSG_OP_PEEK && (flags & PEEK_F_BATCH);
		NEED(r);
		return 0;
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PEEK_KEY:
		TRY(msg_get_key(r, true, &q->by_key.key));
		if (flags & KEY_F_TUBE)
			return msg_get_tube(r, false, &q->by_key.tube);
		return 0;
	case MSG_OP_PEEK_NEXT:
		TRY(msg_get_tube(r, false, &q->peek_next.tube));
		q->peek_next.state = rd_u8(r);
		NEED(r);
		/* ready, delayed or buried; any other value (taken, none, or
		 * none at all) is out of range for this op */
		return peek_state_valid(q->peek_next.state) ? 0 : SLUICE_EINVAL;
	case MSG_OP_LIST:
		TRY(msg_get_tube(r, false, &q->list.tube));
		q->list.state = rd_u8(r);
		q->list.order = rd_u8(r);
		q->list.limit = rd_u32(r);
		q->list.payloads = flags & LIST_F_PAYLOADS;
		q->list.after = flags & LIST_F_AFTER ? rd_u64(r) : 0;
		NEED(r);
		if ((q->list.state != MSG_ST_NONE &&
		        !msg_state_valid(q->list.state)) ||
		    !order_valid(q->list.order))
			return SLUICE_EPROTO;
		TRY(list_cursor_valid(&q->list));
		return msg_check_count(q->list.limit, MSG_LIST_MAX);
	case MSG_OP_JOB:
		q->job.verb = rd_u8(r);
		q->job.id = rd_u64(r);
		q->job.priority = rd_u32(r);
		q->job.delay = rd_u64(r);
		NEED(r);
		return job_verb_valid(q->job.verb) ? 0 : SLUICE_EPROTO;
	}
	return SLUICE_EUNKNOWNOP;
}

/* The header's flags byte for a request of this family. */
static uint8_t
msg_task_req_flags(const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_PUT:
		return put_flags(&q->put);
	case MSG_OP_PUT_BATCH:
		return q->put_batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_UPDATE:
		return (q->update.set_priority ? UPD_F_PRIORITY : 0) |
		    (q->update.set_delay ? UPD_F_DELAY : 0) |
		    (q->update.set_at ? UPD_F_AT : 0) |
		    (q->update.set_ttr ? UPD_F_TTR : 0) |
		    (q->update.set_max_attempts ? UPD_F_MAX_ATTEMPTS : 0) |
		    (q->update.set_payload ? UPD_F_PAYLOAD : 0);
	case MSG_OP_TAKE:
		return (q->take.detach ? TAKE_F_DETACH : 0) |
		    (q->take.strict ? TAKE_F_STRICT : 0) |
		    (q->take.durable ? TAKE_F_DURABLE : 0);
	case MSG_OP_LIST:
		return (q->list.payloads ? LIST_F_PAYLOADS : 0) |
		    (q->list.after > 0 ? LIST_F_AFTER : 0);
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PEEK_KEY:
		return q->by_key.tube.len > 0 ? KEY_F_TUBE : 0;
	case MSG_OP_PEEK:
		return q->with_batch ? PEEK_F_BATCH : 0;
	}
	return 0;
}

/* Encodes the body of a request of this family, checked as its decoder
 * checks it. */
static int
msg_task_put_req(struct buf *b, const struct msg_req *q)
{
	const struct msg_str *tube;
	const struct msg_put *e;
	struct msg_iter it;
	struct msg_str s;
	struct msg_put p;

	switch (q->op) {
	case MSG_OP_PUT:
		return enc_put(b, &q->put);
	case MSG_OP_PUT_BATCH:
		TRY(msg_check_count(q->put_batch.n, MSG_BATCH_MAX));
		buf_put_u32(b, q->put_batch.n);
		it = q->put_batch.it;
		for (uint32_t i = 0; i < q->put_batch.n; i++) {
			e = LIST_AT(q->put_batch.items, i, it, msg_next_put, p);
			if (e == NULL)
				return SLUICE_EINVAL;
			TRY(enc_put_item(b, e));
		}
		return 0;
	case MSG_OP_UPDATE: {
		const struct msg_update *u = &q->update;

		TRY(check_update_flags(msg_task_req_flags(q)));
		if (!u->set_payload && u->payload.len != 0)
			return SLUICE_EINVAL;
		buf_put_u64(b, u->id);
		buf_put_u32(b, u->set_priority ? u->priority : 0);
		buf_put_u64(b, u->set_delay || u->set_at ? u->when : 0);
		buf_put_u64(b, u->set_ttr ? u->ttr : 0);
		buf_put_u32(b, u->set_max_attempts ? u->max_attempts : 0);
		return msg_put_payload(b, u->payload);
	}
	case MSG_OP_TAKE:
		TRY(msg_check_count(q->take.max, MSG_TAKE_MAX));
		TRY(msg_check_count(q->take.ntubes, MSG_TAKE_TUBES_MAX));
		buf_put_u64(b, q->take.wait);
		buf_put_u32(b, q->take.max);
		buf_put_u16(b, (uint16_t)q->take.ntubes);
		it = q->take.it;
		for (uint32_t i = 0; i < q->take.ntubes; i++) {
			tube = LIST_AT(q->take.tubes, i, it, msg_next_str, s);
			if (tube == NULL)
				return SLUICE_EINVAL;
			TRY(msg_put_tube(b, *tube, false));
		}
		return 0;
	case MSG_OP_KICK_ID:
	case MSG_OP_DELETE:
	case MSG_OP_PEEK:
		buf_put_u64(b, q->id);
		return 0;
	case MSG_OP_DELETE_KEY:
	case MSG_OP_PEEK_KEY:
		TRY(msg_put_key(b, q->by_key.key, true));
		if (q->by_key.tube.len > 0)
			return msg_put_tube(b, q->by_key.tube, false);
		return 0;
	case MSG_OP_PEEK_NEXT:
		if (!peek_state_valid(q->peek_next.state))
			return SLUICE_EINVAL;
		TRY(msg_put_tube(b, q->peek_next.tube, false));
		buf_put_u8(b, q->peek_next.state);
		return 0;
	case MSG_OP_LIST:
		if ((q->list.state != MSG_ST_NONE &&
		        !msg_state_valid(q->list.state)) ||
		    !order_valid(q->list.order))
			return SLUICE_EINVAL;
		TRY(list_cursor_valid(&q->list));
		TRY(msg_check_count(q->list.limit, MSG_LIST_MAX));
		TRY(msg_put_tube(b, q->list.tube, false));
		buf_put_u8(b, q->list.state);
		buf_put_u8(b, q->list.order);
		buf_put_u32(b, q->list.limit);
		if (q->list.after > 0)
			buf_put_u64(b, q->list.after);
		return 0;
	case MSG_OP_JOB:
		if (!job_verb_valid(q->job.verb))
			return SLUICE_EINVAL;
		buf_put_u8(b, q->job.verb);
		buf_put_u64(b, q->job.id);
		buf_put_u32(b, q->job.priority);
		buf_put_u64(b, q->job.delay);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

/* ---- replies ----------------------------------------------------------- */

/* Decodes the body of a reply (status 0) of this family. */
static int
msg_task_get_rep(
    struct rd *r, uint8_t op, uint8_t flags, size_t pmax, struct msg_rep *m)
{
	struct msg_put_res pr;

	switch (op) {
	case MSG_OP_PUT:
		TRY(get_put_res(r, false, &m->put));
		return m->put.status != 0 ? SLUICE_EPROTO : 0;
	case MSG_OP_PUT_BATCH:
		m->put_batch.messages = flags & BATCH_F_MESSAGES;
		m->put_batch.n = rd_u32(r);
		NEED(r);
		if (m->put_batch.n > MSG_BATCH_MAX)
			return SLUICE_ELIMIT;
		GET_EACH(&m->put_batch.it, r, m->put_batch.n, 0,
		    get_put_res(r, m->put_batch.messages, &pr));
		m->put_batch.it.flags = flags;
		return 0;
	case MSG_OP_TAKE:
	case MSG_OP_LIST:
	case MSG_OP_JOB:
		return msg_get_tasks(r, pmax, &m->tasks);
	case MSG_OP_KICK_ID:
	case MSG_OP_UPDATE:
		return msg_get_after(r, flags, m);
	case MSG_OP_DELETE_KEY:
		return msg_get_count(r, m);
	case MSG_OP_DELETE:
		return 0;
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
		TRY(get_task(r, pmax, &m->task));
		if (op != MSG_OP_PEEK || !(flags & PEEK_F_BATCH))
			return 0;
		m->task.with_batch = true;
		return msg_get_str(
		    r, MSG_BATCH_NAME_MAX, SLUICE_EPROTO, &m->task.batch);
	}
	return SLUICE_EUNKNOWNOP;
}

/* The flags byte of a reply (status 0) of this family. */
static uint8_t
msg_task_rep_flags(const struct msg_rep *m)
{
	switch (m->op) {
	case MSG_OP_PUT_BATCH:
		return m->put_batch.messages ? BATCH_F_MESSAGES : 0;
	case MSG_OP_PEEK:
		return m->task.with_batch ? PEEK_F_BATCH : 0;
	}
	return 0;
}

/* Encodes the body of a reply (status 0) of this family. */
static int
msg_task_put_rep(struct buf *b, const struct msg_rep *m)
{
	const struct msg_put_res *e;
	struct msg_iter it;
	struct msg_put_res one;

	switch (m->op) {
	case MSG_OP_PUT:
		if (m->put.status != 0)
			return SLUICE_EINVAL;
		return enc_put_res(b, &m->put, false);
	case MSG_OP_PUT_BATCH:
		if (m->put_batch.n > MSG_BATCH_MAX)
			return SLUICE_ELIMIT;
		/* room for every item put (enc_put_res's fast way) */
		(void)buf_reserve(b, 4 + 13 * (size_t)m->put_batch.n);
		buf_put_u32(b, m->put_batch.n);
		it = m->put_batch.it;
		for (uint32_t i = 0; i < m->put_batch.n; i++) {
			e = LIST_AT(
			    m->put_batch.items, i, it, msg_next_put_res, one);
			if (e == NULL)
				return SLUICE_EINVAL;
			TRY(enc_put_res(b, e, m->put_batch.messages));
		}
		return 0;
	case MSG_OP_TAKE:
	case MSG_OP_LIST:
	case MSG_OP_JOB:
		return msg_put_tasks(b, &m->tasks);
	case MSG_OP_KICK_ID:
	case MSG_OP_UPDATE:
		return msg_put_after(b, m);
	case MSG_OP_DELETE_KEY:
		return msg_put_count(b, m);
	case MSG_OP_DELETE:
		return 0;
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
		TRY(enc_task(b, &m->task));
		if (m->op != MSG_OP_PEEK || !m->task.with_batch)
			return 0;
		if (m->task.batch.len > MSG_BATCH_NAME_MAX)
			return SLUICE_EINVAL;
		msg_put_str(b, m->task.batch);
		return 0;
	}
	return SLUICE_EUNKNOWNOP;
}

const struct msg_family msg_task_family = {
	.get_req = msg_task_get_req,
	.put_req = msg_task_put_req,
	.req_flags = msg_task_req_flags,
	.get_rep = msg_task_get_rep,
	.put_rep = msg_task_put_rep,
	.rep_flags = msg_task_rep_flags,
};
