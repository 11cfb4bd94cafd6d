/* move_key - a tube's key reservations carried by a move (move.h): the
 * keys of tasks completed at the source, reserved there for the dedup
 * window, are reserved at the target until the same time, so that a put
 * of such a key there is answered as the source would have answered it
 * (created false) and a key stays unique across the move.
 *
 * Design. A reservation travels as MOVE_KEY (one per key), and lands as
 * an ordinary dedup entry (struct keyent with no task): it expires, is
 * written to snapshots (DEDUP) and is taken by a put once expired like
 * any other. Its id is a new id of the target (the source's id names
 * another task here, or none yet), naming no task: what a reservation
 * whose done task was purged names. The pair (source id, that id) goes in
 * the tube's table of the move (move.c), so a reservation sent again
 * makes nothing twice. A key already live or reserved at the target is
 * folded: one key, one task. The dedup list stays sorted by expiry (its
 * sweep takes from the head): an entry goes in after the last one that
 * expires no later, searched from the tail (reservations come roughly
 * in the order they end). The reservation of a task whose key has a
 * placeholder here (move_place.c: it was live at the source when the
 * move began, and was acked there since) is that placeholder's entry,
 * under its id (fold 2). */
#include <stdlib.h>
#include <string.h>

#include "queue/qstate.h"
#include "sluice.h"

static bool
of_tube(const struct keyent *ke, const char *tube, size_t len)
{
	return ke->tube_len == len && memcmp(keyent_tube(ke), tube, len) == 0;
}

size_t
queue_move_keys(const struct queue *q, const char *tube, size_t len,
    uint64_t after, struct queue_move_key *out, size_t max)
{
	size_t n = 0, kept = 0;

	if (len == 0)
		return 0;
	/* the `max` lowest ids above `after`, kept sorted in out[0..kept) */
	for (const struct keyent *ke = q->dedup_head; ke; ke = ke->next) {
		size_t at;

		if (ke->expires <= q->clock || ke->id <= after ||
		    !of_tube(ke, tube, len))
			continue;
		n++;
		at = move_lowest(out, sizeof(*out), &kept, max, ke->id);
		if (at == max)
			continue;
		out[at].id = ke->id;
		out[at].key = ke->key;
		out[at].key_len = ke->len;
		out[at].expires = ke->expires;
		out[at].version = ke->version;
	}
	return n;
}

int
queue_decide_move_key(struct queue *q, int64_t now, const char *source,
    size_t source_len, const char *tube, size_t tube_len,
    const struct queue_move_key *k, struct qrec *out, uint64_t *id)
{
	const struct move_in *mi;
	const struct move_pair *p;
	const struct keyent *ke;
	int rc;

	if ((rc = queue_tick(q, now)) != 0)
		return rc;
	if (!qrec_cluster_valid(source, source_len) || k->id == 0 ||
	    k->key == NULL || k->key_len < 1 || k->key_len > QREC_KEY_MAX ||
	    k->expires < 0 || k->expires > QREC_TIME_MAX)
		return SLUICE_EINVAL;
	if (!qrec_tube_valid(tube, tube_len))
		return SLUICE_ETUBE;
	memset(out, 0, sizeof(*out));
	out->type = QREC_NONE;
	*id = 0;
	if ((rc = move_table_from(
	         q, tube, tube_len, source, source_len, &mi)) != 0)
		return rc;
	p = mi != NULL ? move_pair_find(mi, k->id) : NULL;
	if (p != NULL && (p->key_len == 0 || k->expires <= q->clock)) {
		*id = p->id; /* copied before; or its placeholder stays, and
		                goes at the move's end */
		return 0;
	}
	if (k->expires <= q->clock)
		return 0; /* over: nothing to carry */
	move_rec_key(out, QREC_MOVE_KEY, k->id, source, source_len, tube,
	    tube_len, k->key, k->key_len);
	out->u.move.expires = k->expires;
	out->u.move.version = k->version;
	ke = qs_key_for_put(q, tube, tube_len, k->key, k->key_len);
	if (p != NULL) {
		/* the task of its placeholder was acked at the source: the
		 * placeholder becomes the reservation */
		if (p->key_len != k->key_len ||
		    memcmp(p->key, k->key, k->key_len) != 0)
			return SLUICE_EINVAL;
		out->u.move.fold = 2;
		out->u.move.id = p->id;
	} else if (ke != NULL) {
		out->u.move.fold = 1;
		out->u.move.id = ke->task != NULL ? ke->task->id : ke->id;
	} else {
		out->u.move.id = q->next_id;
	}
	*id = out->u.move.id;
	return 0;
}

/* Puts `ke` on the dedup list after the last entry expiring no later. */
static void
dedup_insert(struct queue *q, struct keyent *ke)
{
	struct keyent *at = q->dedup_tail;

	while (at != NULL && at->expires > ke->expires)
		at = at->prev;
	if (at == q->dedup_tail) {
		qs_dedup_append(q, ke);
		return;
	}
	ke->prev = at;
	ke->next = at != NULL ? at->next : q->dedup_head;
	ke->next->prev = ke;
	if (at != NULL)
		at->next = ke;
	else
		q->dedup_head = ke;
	q->ndedup++;
}

int
move_key_apply(struct queue *q, const struct qrec_move *m)
{
	struct move_in *mi;
	struct keyent *ke;
	int rc;

	mi = move_table(q, m->tube, m->tube_len, m->source, m->source_len, &rc);
	if (mi == NULL)
		return rc;
	if (m->fold == 2) {
		struct move_pair *p = move_pair_find(mi, m->src_id);

		if (p == NULL || p->key_len == 0 || p->id != m->id ||
		    (ke = move_placeholder(q, mi, p)) == NULL)
			return SLUICE_ECORRUPT;
		ke->expires = m->expires;
		ke->version = m->version;
		dedup_insert(q, ke);
		p->key_len = 0;
		return 0;
	}
	if (move_pair_id(mi, m->src_id) != 0)
		return SLUICE_ECORRUPT;
	if (m->fold)
		return m->id < q->next_id ? move_pair_add(mi, m->src_id, m->id)
		                          : SLUICE_ECORRUPT;
	if (m->id < q->next_id ||
	    qs_key(q, m->tube, m->tube_len, m->key, m->key_len) != NULL)
		return SLUICE_ECORRUPT;
	ke = qs_keyent_new(q, m->tube, m->tube_len, m->key, m->key_len);
	if (ke == NULL || idx_reserve(&q->keys, 1) != 0) {
		free(ke);
		return SLUICE_ENOMEM;
	}
	if ((rc = move_pair_add(mi, m->src_id, m->id)) != 0) {
		free(ke);
		return rc;
	}
	ke->id = m->id;
	ke->expires = m->expires;
	ke->version = m->version;
	qs_key_insert(q, ke);
	dedup_insert(q, ke);
	q->next_id = m->id + 1;
	return 0;
}
