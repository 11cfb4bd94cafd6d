/* move_place - the key window of a move (docs/scaling.md, "Keys"): a key
 * stays unique across a tube's move, though puts reach the target while
 * the source still holds tasks of the tube.
 *
 * The mover, before the map change, marks the target: the keys of the
 * tube moving in from the source are pending (MOVE_PEND 1). While they
 * are, a keyed put of the tube (or of a tube the name is a prefix of: a
 * map entry governs those too) is refused SLUICE_EMOVING, which clients
 * try again; an unkeyed put is accepted. Once the source knows the map
 * (it takes no more puts of the tube), the mover copies every key of the
 * tube's live tasks there (ready, delayed, buried, taken, waiting) as
 * placeholders (MOVE_PLACE), then clears the mark (MOVE_PEND 0).
 *
 * A placeholder is a key entry with no task, expiring never
 * (QUEUE_MOVE_PLACED), off the dedup list, under an id given now; the
 * move's table pairs the source id with that id, with the key (struct
 * move_pair). So a put of its key answers created false with that id,
 * as the source would; the copy of the task, when the source lets it go,
 * gets that id (MOVE_IN fold 2, move.c); a task acked at the source
 * instead leaves its reservation, which takes the placeholder's entry
 * (MOVE_KEY fold 2, move_key.c); a task deleted there leaves the
 * placeholder until the move's end (MOVE_END removes what is left). A
 * put that would replace the key's content (replace, if_newer, debounce,
 * throttle) is refused SLUICE_EMOVING too while the key's task is at the
 * source: the content to replace is there.
 *
 * The source, before the map change, is marked too (MOVE_KEEP): its drain
 * of the tube does not end by itself (cmap_node.c's plain drain) while a
 * mover's move is under way, even once it holds nothing: a mover killed
 * after the map change and run again still finds its reservations there.
 * The source's MOVE_END lifts it, as it lifts the moving-out mark.
 *
 * The marks are a short array (a move or two at a time), scanned. Every
 * step is idempotent: a mark made again, a placeholder sent again (its
 * pair answers) make nothing. Snapshot entries MOVEPEND, MOVEPLACE and
 * MOVEKEEP (move.h) carry them over a restart. Pure, like the queue. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/move.h"
#include "queue/qstate.h"
#include "sluice.h"

static bool
name_is(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && memcmp(a, b, alen) == 0;
}

/* The mark of (keep, tube, source), or NULL. */
static struct move_mark *
mark_find(const struct queue *q, bool keep, const char *tube, size_t len,
    const char *source, size_t slen)
{
	for (uint32_t i = 0; i < q->mv.nmarks; i++) {
		struct move_mark *k = &q->mv.marks[i];

		if (k->keep == keep &&
		    name_is(k->tube, k->tube_len, tube, len) &&
		    (keep || name_is(k->source, k->source_len, source, slen)))
			return k;
	}
	return NULL;
}

static int
mark_add(struct queue *q, bool keep, const char *tube, size_t len,
    const char *source, size_t slen)
{
	struct move_mark *grown, *k;

	if (mark_find(q, keep, tube, len, source, slen) != NULL)
		return SLUICE_ECORRUPT;
	grown = realloc(q->mv.marks, (q->mv.nmarks + 1) * sizeof(*grown));
	if (grown == NULL)
		return SLUICE_ENOMEM;
	q->mv.marks = grown;
	k = &grown[q->mv.nmarks++];
	memset(k, 0, sizeof(*k));
	k->keep = keep;
	memcpy(k->tube, tube, len);
	k->tube_len = (uint16_t)len;
	if (!keep) {
		memcpy(k->source, source, slen);
		k->source_len = (uint16_t)slen;
	}
	return 0;
}

static void
mark_remove(struct queue *q, struct move_mark *k)
{
	*k = q->mv.marks[--q->mv.nmarks];
	if (q->mv.nmarks == 0) {
		free(q->mv.marks);
		q->mv.marks = NULL;
	}
}

void
move_marks_fini(struct moves *m)
{
	free(m->marks);
	m->marks = NULL;
	m->nmarks = 0;
}

bool
move_marked(const struct queue *q, const char *tube, size_t len)
{
	for (uint32_t i = 0; i < q->mv.nmarks; i++)
		if (name_is(q->mv.marks[i].tube, q->mv.marks[i].tube_len, tube,
		        len))
			return true;
	return false;
}

bool
move_keep_governed(const struct queue *q,
    bool (*governs)(void *arg, const char *name, size_t len), void *arg)
{
	for (uint32_t i = 0; i < q->mv.nmarks; i++)
		if (q->mv.marks[i].keep &&
		    governs(arg, q->mv.marks[i].tube, q->mv.marks[i].tube_len))
			return true;
	return false;
}

bool
queue_move_keys_pending(const struct queue *q, const char *tube, size_t len)
{
	for (uint32_t i = 0; i < q->mv.nmarks; i++) {
		const struct move_mark *k = &q->mv.marks[i];

		if (!k->keep && k->tube_len <= len &&
		    memcmp(k->tube, tube, k->tube_len) == 0)
			return true;
	}
	return false;
}

/* ---- Decide ------------------------------------------------------------ */

int
queue_decide_move_pend(struct queue *q, const char *tube, size_t len,
    const char *source, size_t source_len, bool on, struct qrec *out)
{
	bool have;

	memset(out, 0, sizeof(*out));
	if (!qrec_tube_valid(tube, len))
		return SLUICE_ETUBE;
	if (!qrec_cluster_valid(source, source_len))
		return SLUICE_EINVAL;
	have = mark_find(q, false, tube, len, source, source_len) != NULL;
	out->type = have == on ? QREC_NONE : QREC_MOVE_PEND;
	out->u.move.tube = tube;
	out->u.move.tube_len = len;
	out->u.move.source = source;
	out->u.move.source_len = source_len;
	out->u.move.state = on ? 1 : 0;
	return 0;
}

int
queue_decide_move_keep(
    struct queue *q, const char *tube, size_t len, struct qrec *out)
{
	memset(out, 0, sizeof(*out));
	if (!qrec_tube_valid(tube, len))
		return SLUICE_ETUBE;
	out->type = mark_find(q, true, tube, len, NULL, 0) != NULL
	    ? QREC_NONE
	    : QREC_MOVE_KEEP;
	out->u.move.tube = tube;
	out->u.move.tube_len = len;
	return 0;
}

size_t
queue_move_live(const struct queue *q, const char *tube, size_t len,
    uint64_t after, struct queue_move_live *out, size_t max)
{
	size_t n = 0, kept = 0;

	/* the `max` lowest ids above `after`, kept sorted in out[0..kept) */
	for (uint32_t i = 0; i < q->keys.cap; i++) {
		const struct keyent *ke = idx_at(&q->keys, i);
		const struct task *t;
		size_t at;

		if (ke == NULL || (t = ke->task) == NULL ||
		    t->state == QUEUE_DONE || t->id <= after ||
		    !name_is(keyent_tube(ke), ke->tube_len, tube, len))
			continue;
		n++;
		at = move_lowest(out, sizeof(*out), &kept, max, t->id);
		if (at == max)
			continue;
		out[at].id = t->id;
		out[at].key = ke->key;
		out[at].key_len = ke->len;
		out[at].state = t->state;
	}
	return n;
}

int
queue_decide_move_place(struct queue *q, int64_t now, const char *source,
    size_t source_len, const char *tube, size_t tube_len, uint64_t src_id,
    const char *key, size_t key_len, struct qrec *out, uint64_t *id)
{
	const struct move_in *mi;
	const struct keyent *ke;
	int rc;

	if ((rc = queue_tick(q, now)) != 0)
		return rc;
	if (!qrec_cluster_valid(source, source_len) || src_id == 0)
		return SLUICE_EINVAL;
	if (key == NULL || key_len < 1 || key_len > QREC_KEY_MAX)
		return SLUICE_EKEY;
	if (!qrec_tube_valid(tube, tube_len))
		return SLUICE_ETUBE;
	memset(out, 0, sizeof(*out));
	out->type = QREC_NONE;
	if ((rc = move_table_from(
	         q, tube, tube_len, source, source_len, &mi)) != 0)
		return rc;
	if (mi != NULL && (*id = move_pair_id(mi, src_id)) != 0)
		return 0;
	move_rec_key(out, QREC_MOVE_PLACE, src_id, source, source_len, tube,
	    tube_len, key, key_len);
	ke = qs_key_for_put(q, tube, tube_len, key, key_len);
	if (ke != NULL && (ke->task != NULL || ke->expires > q->clock)) {
		/* the key names a task or a reservation here already */
		out->u.move.fold = 1;
		out->u.move.id = ke->task != NULL ? ke->task->id : ke->id;
	} else {
		out->u.move.id = q->next_id;
	}
	*id = out->u.move.id;
	return 0;
}

/* ---- Apply ------------------------------------------------------------- */

/* A placeholder of `key` in the table's tube under `id`, paired with
 * source id `src`: its entry (an expired entry of the key gives its
 * place, as to a put) and its pair. */
static int
place(struct queue *q, struct move_in *mi, uint64_t src, uint64_t id,
    const char *key, size_t key_len)
{
	struct keyent *ke = qs_key(q, mi->tube, mi->tube_len, key, key_len);
	bool made = ke == NULL;
	int rc;

	if (id == 0 || key_len < 1 || key_len > QREC_KEY_MAX ||
	    move_pair_find(mi, src) != NULL ||
	    (ke != NULL &&
	        (ke->task != NULL || ke->expires == QUEUE_MOVE_PLACED)))
		return SLUICE_ECORRUPT;
	if (made) {
		ke = qs_keyent_new(q, mi->tube, mi->tube_len, key, key_len);
		if (ke == NULL || qs_reserve_key(q) != 0) {
			free(ke);
			return SLUICE_ENOMEM;
		}
	}
	if ((rc = move_pair_add_key(mi, src, id, key, key_len)) != 0) {
		if (made)
			free(ke);
		return rc;
	}
	if (made)
		qs_key_insert(q, ke);
	else
		qs_dedup_reuse(q, ke);
	ke->task = NULL;
	ke->id = id;
	ke->expires = QUEUE_MOVE_PLACED;
	ke->version = 0;
	if (id >= q->next_id)
		q->next_id = id + 1;
	return 0;
}

int
move_place_apply(struct queue *q, const struct qrec *rec)
{
	const struct qrec_move *m = &rec->u.move;
	struct move_mark *k;
	struct move_in *mi;
	int rc;

	switch (rec->type) {
	case QREC_MOVE_PEND:
		k = mark_find(
		    q, false, m->tube, m->tube_len, m->source, m->source_len);
		if ((k != NULL) == (m->state != 0))
			return SLUICE_ECORRUPT;
		if (k != NULL) {
			mark_remove(q, k);
			return 0;
		}
		return mark_add(
		    q, false, m->tube, m->tube_len, m->source, m->source_len);
	case QREC_MOVE_KEEP:
		return mark_add(q, true, m->tube, m->tube_len, NULL, 0);
	default: /* QREC_MOVE_PLACE */
		mi = move_table(
		    q, m->tube, m->tube_len, m->source, m->source_len, &rc);
		if (mi == NULL)
			return rc;
		if (m->fold)
			return m->id < q->next_id &&
			        move_pair_find(mi, m->src_id) == NULL
			    ? move_pair_add(mi, m->src_id, m->id)
			    : SLUICE_ECORRUPT;
		if (m->id != q->next_id)
			return SLUICE_ECORRUPT;
		return place(q, mi, m->src_id, m->id, m->key, m->key_len);
	}
}

struct keyent *
move_placeholder(
    const struct queue *q, const struct move_in *mi, const struct move_pair *p)
{
	struct keyent *ke;

	if (p->key_len == 0)
		return NULL;
	ke = qs_key(q, mi->tube, mi->tube_len, p->key, p->key_len);
	return ke != NULL && ke->task == NULL &&
	        ke->expires == QUEUE_MOVE_PLACED && ke->id == p->id
	    ? ke
	    : NULL;
}

void
move_place_end(
    struct queue *q, const char *tube, size_t len, struct move_in *mi)
{
	for (uint32_t i = 0; mi != NULL && i < mi->pairs.cap; i++) {
		const struct move_pair *p = idx_at(&mi->pairs, i);
		struct keyent *ke;

		if (p == NULL || (ke = move_placeholder(q, mi, p)) == NULL)
			continue;
		idx_remove(&q->keys, ke); /* its task was deleted there */
		free(ke);
	}
	for (uint32_t i = 0; i < q->mv.nmarks;) {
		struct move_mark *k = &q->mv.marks[i];

		if (name_is(k->tube, k->tube_len, tube, len))
			mark_remove(q, k);
		else
			i++;
	}
}

/* ---- Snapshot, check, dump --------------------------------------------- */

int
move_place_snapshot_write(const struct queue *q,
    int (*emit)(void *, uint16_t, const void *, size_t, const void *, size_t),
    void *arg)
{
	struct buf w;
	int rc = 0;

	buf_init(&w);
	for (uint32_t i = 0; i < q->mv.nmarks && rc == 0; i++) {
		const struct move_mark *k = &q->mv.marks[i];

		buf_reset(&w);
		buf_put_str16(&w, k->tube, k->tube_len);
		if (!k->keep)
			buf_put_str16(&w, k->source, k->source_len);
		rc = buf_failed(&w)
		    ? SLUICE_ENOMEM
		    : emit(arg, k->keep ? QSNAP_MOVEKEEP : QSNAP_MOVEPEND,
		          w.data, w.len, NULL, 0);
	}
	for (uint32_t i = 0; i < q->mv.n && rc == 0; i++) {
		const struct move_in *mi = q->mv.in[i];

		for (uint32_t k = 0; k < mi->pairs.cap && rc == 0; k++) {
			const struct move_pair *p = idx_at(&mi->pairs, k);

			if (p == NULL || p->key_len == 0)
				continue;
			buf_reset(&w);
			buf_put_str16(&w, mi->tube, mi->tube_len);
			buf_put_str16(&w, mi->source, mi->source_len);
			buf_put_u64(&w, p->src);
			buf_put_u64(&w, p->id);
			buf_put_str16(&w, p->key, p->key_len);
			rc = buf_failed(&w) ? SLUICE_ENOMEM
			                    : emit(arg, QSNAP_MOVEPLACE, w.data,
			                          w.len, NULL, 0);
		}
	}
	buf_fini(&w);
	return rc;
}

int
move_place_snapshot_load(struct queue *q, uint16_t type, struct rd *r)
{
	const char *tube, *source = NULL, *key;
	size_t len, slen = 0, klen;
	struct move_in *mi;
	uint64_t src, id;
	int rc;

	tube = rd_str16(r, QREC_NAME_MAX, &len);
	if (type != QSNAP_MOVEKEEP)
		source = rd_str16(r, QREC_CLUSTER_MAX, &slen);
	if (type != QSNAP_MOVEPLACE) {
		if (rd_failed(r) || rd_left(r) != 0 ||
		    !qrec_tube_valid(tube, len) ||
		    (type == QSNAP_MOVEPEND &&
		        !qrec_cluster_valid(source, slen)))
			return SLUICE_ECORRUPT;
		return mark_add(
		    q, type == QSNAP_MOVEKEEP, tube, len, source, slen);
	}
	src = rd_u64(r);
	id = rd_u64(r);
	key = rd_str16(r, QREC_KEY_MAX, &klen);
	if (rd_failed(r) || rd_left(r) != 0 || !qrec_tube_valid(tube, len) ||
	    !qrec_cluster_valid(source, slen) || src == 0 || id == 0 ||
	    id >= q->next_id || klen == 0)
		return SLUICE_ECORRUPT;
	if ((mi = move_table(q, tube, len, source, slen, &rc)) == NULL)
		return rc;
	return place(q, mi, src, id, key, klen);
}

const char *
move_place_check(const struct queue *q)
{
	for (uint32_t i = 0; i < q->mv.nmarks; i++) {
		const struct move_mark *k = &q->mv.marks[i];

		if (!qrec_tube_valid(k->tube, k->tube_len) ||
		    (!k->keep && !qrec_cluster_valid(k->source, k->source_len)))
			return "a move's mark names a bad tube or source";
		if (mark_find(q, k->keep, k->tube, k->tube_len, k->source,
		        k->source_len) != k)
			return "a move's mark is there twice";
	}
	for (uint32_t i = 0; i < q->mv.n; i++) {
		const struct move_in *mi = q->mv.in[i];

		for (uint32_t k = 0; k < mi->pairs.cap; k++) {
			const struct move_pair *p = idx_at(&mi->pairs, k);

			if (p != NULL && p->key_len > 0 &&
			    move_placeholder(q, mi, p) == NULL)
				return "a placeholder has no key entry";
		}
	}
	return NULL;
}

void
move_place_dump(const struct queue *q, struct buf *out)
{
	for (uint32_t i = 0; i < q->mv.nmarks; i++) {
		const struct move_mark *k = &q->mv.marks[i];

		if (k->keep)
			buf_printf(out, "move keep tube=%.*s\n",
			    (int)k->tube_len, k->tube);
		else
			buf_printf(out,
			    "move keys pending tube=%.*s from=%.*s\n",
			    (int)k->tube_len, k->tube, (int)k->source_len,
			    k->source);
	}
	/* the placeholders of each table: their count and sums (in no
	 * order: the table is a hash) */
	for (uint32_t i = 0; i < q->mv.n; i++) {
		const struct move_in *mi = q->mv.in[i];
		uint64_t n = 0, ids = 0, srcs = 0, keys = 0;

		for (uint32_t k = 0; k < mi->pairs.cap; k++) {
			const struct move_pair *p = idx_at(&mi->pairs, k);

			if (p == NULL || p->key_len == 0)
				continue;
			n++;
			ids += p->id;
			srcs += p->src;
			for (uint16_t b = 0; b < p->key_len; b++)
				keys += (uint8_t)p->key[b] * (uint64_t)(b + 1);
		}
		if (n > 0)
			buf_printf(out,
			    "move placeholders tube=%.*s n=%" PRIu64
			    " ids=%" PRIu64 " srcs=%" PRIu64 " keys=%" PRIu64
			    "\n",
			    (int)mi->tube_len, mi->tube, n, ids, srcs, keys);
	}
}
