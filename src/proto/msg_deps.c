/* msg_deps - dependencies on the wire: a put's tagged fields (flag 0x10)
 * and a task record's dependencies (flag 0x40). docs/protocol.md has the
 * layouts and hex examples.
 *
 * A put's tagged fields come last, after the group: u32 length of all
 * of them, then each u8 tag, u32 length, that many bytes; tags
 * increasing, each at most once:
 *   1 AFTER       u8 on_parent_failure (0 fail, 1 ignore, 2 cancel),
 *                 then n u64 parent ids (n >= 0)
 *   2 AFTER_KEYS  u16 n, then n str16 keys of tasks in the put's tube
 *   3 BATCH       the batch's name, 1..MSG_BATCH_NAME_MAX bytes (the
 *                 whole field)
 * A tag this version does not know is EPROTO: a newer client learns that
 * this server would not do what it asked. Later fields are new tags.
 * The parents, ids and keys together, are at most MSG_AFTER_MAX (else
 * ELIMIT), and a put has parents or a batch or both; without AFTER the
 * rule is fail.
 *
 * A task record's dependencies come last, after its group: u8
 * on_parent_failure, u32 pending, u16 nparents, each parent as u64 id,
 * u8 outcome, u32 result length and its bytes; then u32 nchildren (all),
 * u16 nshown, nshown u64 child ids (the first MSG_CHILDREN_MAX). */
#include <string.h>

#include "proto/msg.h"
#include "proto/msg_wire.h"
#include "sluice.h"

enum { TAG_AFTER = 1, TAG_AFTER_KEYS = 2, TAG_BATCH = 3 };

/* Little-endian loads and stores of the ids and lengths of a list: one
 * instruction each (swapped on a big-endian host). */
static inline uint64_t
load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline void
store64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, sizeof(v));
}

static inline void
store32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, sizeof(v));
}

static int
get_after(struct rd *r, uint32_t len, struct msg_put *p)
{
	const uint8_t *ids;
	struct rd s;

	if (len < 1 || (len - 1) % 8 != 0)
		return SLUICE_EPROTO;
	rd_init(&s, rd_bytes(r, len), len);
	p->on_parent_failure = rd_u8(&s);
	if (p->on_parent_failure > MSG_PARENT_CANCEL)
		return SLUICE_EINVAL;
	p->nafter = (len - 1) / 8;
	if (p->nafter > MSG_AFTER_MAX)
		return SLUICE_ELIMIT;
	/* Each id non-zero: checked in place, the iterator left at them. */
	ids = rd_bytes(&s, 0);
	for (uint32_t i = 0; i < p->nafter; i++)
		if (load64(ids + 8 * (size_t)i) == 0)
			return SLUICE_EINVAL;
	msg_iter_start(&p->after_it, &s, p->nafter, 0);
	return 0;
}

static int
get_after_keys(struct rd *r, uint32_t len, struct msg_put *p)
{
	struct msg_str key;
	struct rd s;

	rd_init(&s, rd_bytes(r, len), len);
	p->nafter_keys = rd_u16(&s);
	NEED(&s);
	if (p->nafter_keys > MSG_AFTER_MAX)
		return SLUICE_ELIMIT;
	GET_EACH(&p->after_keys_it, &s, p->nafter_keys, 0,
	    msg_get_key(&s, true, &key));
	return rd_left(&s) == 0 ? 0 : SLUICE_EPROTO;
}

int
msg_get_put_ext(struct rd *r, uint8_t flags, struct msg_put *p)
{
	uint32_t total;
	int last = 0;
	struct rd s;

	if (!(flags & PUT_F_EXT))
		return 0;
	p->ext = true;
	total = rd_u32(r);
	NEED(r);
	if (total > rd_left(r))
		return SLUICE_ETRUNC;
	rd_init(&s, rd_bytes(r, total), total);
	while (rd_left(&s) > 0) {
		uint8_t tag = rd_u8(&s);
		uint32_t len = rd_u32(&s);

		if (rd_failed(&s) || len > rd_left(&s) || tag <= last)
			return SLUICE_EPROTO;
		last = tag;
		switch (tag) {
		case TAG_AFTER:
			TRY(get_after(&s, len, p));
			break;
		case TAG_AFTER_KEYS:
			TRY(get_after_keys(&s, len, p));
			break;
		case TAG_BATCH:
			if (len == 0 || len > MSG_BATCH_NAME_MAX)
				return len == 0 ? SLUICE_EINVAL : SLUICE_ELIMIT;
			p->batch.p = (const char *)rd_bytes(&s, len);
			p->batch.len = len;
			break;
		default:
			return SLUICE_EPROTO;
		}
	}
	if (p->nafter + p->nafter_keys == 0 && p->batch.len == 0)
		return SLUICE_EINVAL;
	if (p->nafter + p->nafter_keys > MSG_AFTER_MAX)
		return SLUICE_ELIMIT;
	return 0;
}

int
msg_put_put_ext(struct buf *b, const struct msg_put *p)
{
	const struct msg_str *key;
	const uint64_t *id;
	struct msg_iter it;
	struct msg_str k;
	size_t at;
	uint64_t v;

	if (!p->ext)
		return 0;
	if ((p->nafter + p->nafter_keys == 0 && p->batch.len == 0) ||
	    p->on_parent_failure > MSG_PARENT_CANCEL)
		return SLUICE_EINVAL;
	if (p->batch.len > MSG_BATCH_NAME_MAX)
		return SLUICE_ELIMIT;
	if (p->nafter + p->nafter_keys > MSG_AFTER_MAX)
		return SLUICE_ELIMIT;
	at = b->len;
	buf_put_u32(b, 0); /* set below */
	if (p->nafter > 0 || p->nafter_keys > 0) {
		buf_put_u8(b, TAG_AFTER);
		buf_put_u32(b, 1 + 8 * p->nafter);
		buf_put_u8(b, p->on_parent_failure);
	}
	it = p->after_it;
	for (uint32_t i = 0; i < p->nafter; i++) {
		id = LIST_AT(p->after, i, it, msg_next_id, v);
		if (id == NULL || *id == 0)
			return SLUICE_EINVAL;
		buf_put_u64(b, *id);
	}
	if (p->nafter_keys > 0) {
		size_t kat;

		buf_put_u8(b, TAG_AFTER_KEYS);
		kat = b->len;
		buf_put_u32(b, 0);
		buf_put_u16(b, (uint16_t)p->nafter_keys);
		it = p->after_keys_it;
		for (uint32_t i = 0; i < p->nafter_keys; i++) {
			key = LIST_AT(p->after_keys, i, it, msg_next_key, k);
			if (key == NULL)
				return SLUICE_EINVAL;
			TRY(msg_put_key(b, *key, true));
		}
		if (!buf_failed(b))
			le_store_u32(
			    b->data + kat, (uint32_t)(b->len - kat - 4));
	}
	if (p->batch.len > 0) {
		buf_put_u8(b, TAG_BATCH);
		buf_put_u32(b, (uint32_t)p->batch.len);
		buf_put(b, p->batch.p, p->batch.len);
	}
	if (!buf_failed(b))
		le_store_u32(b->data + at, (uint32_t)(b->len - at - 4));
	return 0;
}

bool
msg_next_key(struct msg_iter *it, struct msg_str *out)
{
	NEXT(it, msg_get_key(&it->r, true, out));
}

static int
get_parent(struct rd *r, struct msg_parent *p)
{
	uint32_t len;

	p->id = rd_u64(r);
	p->outcome = rd_u8(r);
	len = rd_u32(r);
	NEED(r);
	if (p->id == 0 || p->outcome > 2)
		return SLUICE_EPROTO;
	return msg_get_bytes(r, len, MSG_RESULT_MAX, SLUICE_EPROTO, &p->result);
}

bool
msg_next_parent(struct msg_iter *it, struct msg_parent *out)
{
	NEXT(it, get_parent(&it->r, out));
}

int
msg_get_task_deps(struct rd *r, uint8_t flags, struct msg_task *t)
{
	struct msg_parent p;

	if (!(flags & TASK_F_DEPS))
		return 0;
	t->has_deps = true;
	t->deps.results = true; /* the results sent, if any, are sent on */
	t->deps.on_parent_failure = rd_u8(r);
	t->deps.pending = rd_u32(r);
	t->deps.nparents = rd_u16(r);
	NEED(r);
	if (t->deps.on_parent_failure > MSG_PARENT_CANCEL ||
	    t->deps.nparents > MSG_AFTER_MAX ||
	    t->deps.pending > t->deps.nparents)
		return SLUICE_EPROTO;
	GET_EACH(
	    &t->deps.parents_it, r, t->deps.nparents, 0, get_parent(r, &p));
	t->deps.nchildren = rd_u32(r);
	t->deps.nshown = rd_u16(r);
	NEED(r);
	if (t->deps.nshown > MSG_CHILDREN_MAX ||
	    t->deps.nshown > t->deps.nchildren)
		return SLUICE_EPROTO;
	GET_EACH(&t->deps.children_it, r, t->deps.nshown, 0,
	    (rd_u64(r) == 0 ? SLUICE_EPROTO : 0));
	return 0;
}

int
msg_put_task_deps(struct buf *b, const struct msg_task *t)
{
	struct msg_iter it = t->deps.parents_it;
	const uint64_t *id;
	uint8_t *w;
	uint64_t v;

	if (!t->has_deps)
		return 0;
	if (t->deps.nparents > MSG_AFTER_MAX ||
	    t->deps.nshown > MSG_CHILDREN_MAX ||
	    t->deps.nshown > t->deps.nchildren ||
	    t->deps.on_parent_failure > MSG_PARENT_CANCEL)
		return SLUICE_EINVAL;
	if (!buf_reserve(b, 7))
		return 0; /* the buffer is failed: its owner sees it */
	w = b->data + b->len;
	w[0] = t->deps.on_parent_failure;
	store32(w + 1, t->deps.pending);
	le_store_u16(w + 5, (uint16_t)t->deps.nparents);
	b->len += 7;
	for (uint32_t i = 0; i < t->deps.nparents; i++) {
		struct msg_parent p;

		if (t->deps.parents != NULL) {
			p = t->deps.parents[i];
		} else if (t->deps.parent_ids == NULL) {
			/* a decoded task sent on */
			if (!msg_next_parent(&it, &p))
				return SLUICE_EINVAL;
		} else {
			memset(&p, 0, sizeof(p));
			t->deps.parent_get(
			    t->deps.parent_arg, t->deps.parent_ids[i], &p);
			p.id = t->deps.parent_ids[i];
		}
		if (!t->deps.results)
			p.result.len = 0;
		if (p.result.len > MSG_RESULT_MAX || p.id == 0 || p.outcome > 2)
			return SLUICE_EINVAL;
		/* id, outcome, length and result: one reservation */
		if (!buf_reserve(b, 13 + p.result.len))
			return 0; /* the buffer is failed: its owner sees it */
		w = b->data + b->len;
		store64(w, p.id);
		w[8] = p.outcome;
		store32(w + 9, (uint32_t)p.result.len);
		if (p.result.len > 0)
			memcpy(w + 13, p.result.p, p.result.len);
		b->len += 13 + p.result.len;
	}
	if (!buf_reserve(b, 6 + 8 * (size_t)t->deps.nshown))
		return 0;
	w = b->data + b->len;
	store32(w, t->deps.nchildren);
	le_store_u16(w + 4, (uint16_t)t->deps.nshown);
	it = t->deps.children_it;
	for (uint32_t i = 0; i < t->deps.nshown; i++) {
		if ((id = LIST_AT(t->deps.children, i, it, msg_next_id, v)) ==
		    NULL)
			return SLUICE_EINVAL;
		store64(w + 6 + 8 * (size_t)i, *id);
	}
	b->len += 6 + 8 * (size_t)t->deps.nshown;
	return 0;
}
