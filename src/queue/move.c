/* move - a tube's tasks held, dropped and copied in for a move between
 * clusters: the records' decide and apply, the target's table of source
 * ids, its snapshot entries and its check. move.h says how it works.
 *
 * The table of a tube is found by a scan of the moving tubes (a handful
 * at a time); its pairs by the source id, in an idx. QSNAP_MOVEIN
 * entries, one per pair, after the tasks: str16 tube, str16 source, u64
 * source id, u64 id. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/batch.h"
#include "queue/decide.h"
#include "queue/move.h"
#include "queue/qstate.h"
#include "sluice.h"

static uint64_t
pair_key(const void *item)
{
	return ((const struct move_pair *)item)->src;
}

void
moves_init(struct moves *m)
{
	m->in = NULL;
	m->n = 0;
	m->marks = NULL;
	m->nmarks = 0;
}

static void
in_free(struct move_in *mi)
{
	for (uint32_t i = 0; i < mi->pairs.cap; i++)
		free(idx_at(&mi->pairs, i));
	idx_fini(&mi->pairs);
	free(mi);
}

void
moves_fini(struct moves *m)
{
	for (uint32_t i = 0; i < m->n; i++)
		in_free(m->in[i]);
	free(m->in);
	move_marks_fini(m);
	moves_init(m);
}

static struct move_in *
in_find(const struct queue *q, const char *tube, size_t len, uint32_t *at)
{
	for (uint32_t i = 0; i < q->mv.n; i++) {
		struct move_in *mi = q->mv.in[i];

		if (mi->tube_len == len && memcmp(mi->tube, tube, len) == 0) {
			if (at != NULL)
				*at = i;
			return mi;
		}
	}
	return NULL;
}

/* The table of `tube` from `source`, made when there is none. NULL:
 * out of memory, or the tube's table names another source. */
static struct move_in *
in_get(struct queue *q, const char *tube, size_t len, const char *source,
    size_t slen, int *rc)
{
	struct move_in *mi = in_find(q, tube, len, NULL), **in;

	if (mi != NULL) {
		*rc = mi->source_len == slen &&
		        memcmp(mi->source, source, slen) == 0
		    ? 0
		    : SLUICE_ECORRUPT;
		return *rc == 0 ? mi : NULL;
	}
	*rc = SLUICE_ENOMEM;
	in = realloc(q->mv.in, (q->mv.n + 1) * sizeof(*in));
	if (in == NULL)
		return NULL;
	q->mv.in = in;
	if ((mi = calloc(1, sizeof(*mi))) == NULL)
		return NULL;
	idx_init(&mi->pairs, pair_key);
	memcpy(mi->tube, tube, len);
	mi->tube_len = (uint16_t)len;
	memcpy(mi->source, source, slen);
	mi->source_len = (uint16_t)slen;
	q->mv.in[q->mv.n++] = mi;
	*rc = 0;
	return mi;
}

/* The pair (src, id), with the key of a placeholder (key_len > 0). */
static int
pair_add_key(struct move_in *mi, uint64_t src, uint64_t id, const char *key,
    size_t key_len)
{
	struct move_pair *p;

	if (idx_find(&mi->pairs, src) != NULL)
		return SLUICE_ECORRUPT;
	if ((p = malloc(sizeof(*p) + key_len)) == NULL)
		return SLUICE_ENOMEM;
	if (idx_reserve(&mi->pairs, 1) != 0) {
		free(p);
		return SLUICE_ENOMEM;
	}
	p->src = src;
	p->id = id;
	p->key_len = (uint16_t)key_len;
	if (key_len > 0)
		memcpy(p->key, key, key_len);
	idx_insert(&mi->pairs, p);
	return 0;
}

static int
pair_add(struct move_in *mi, uint64_t src, uint64_t id)
{
	return pair_add_key(mi, src, id, NULL, 0);
}

static bool
held(const struct task *t)
{
	return t->state == QUEUE_TAKEN && t->ext->detached &&
	    t->ext->deadline == QUEUE_MOVE_HELD;
}

/* ---- Source ----------------------------------------------------------- */

int
queue_decide_move_hold(struct queue *q, int64_t now, const char *tube,
    size_t len, uint64_t lease, struct qrec *out)
{
	struct task *t = NULL;
	struct tube *tb;
	int rc;

	if ((rc = queue_tick(q, now)) != 0)
		return rc;
	if (!qrec_tube_valid(tube, len))
		return SLUICE_ETUBE;
	if (lease == 0)
		return SLUICE_EINVAL;
	if ((tb = qs_tube(q, tube, len)) == NULL)
		return SLUICE_ENOTFOUND;
	if ((t = heap_top(&tb->age)) == NULL &&
	    (t = heap_top(&tb->delayed)) == NULL &&
	    (t = heap_top(&tb->buried)) == NULL)
		return SLUICE_ENOTFOUND;
	memset(out, 0, sizeof(*out));
	out->type = QREC_MOVE_HOLD;
	out->u.move.id = t->id;
	out->u.move.lease = lease;
	return 0;
}

size_t
queue_move_held(const struct queue *q, const char *tube, size_t len,
    uint64_t *ids, size_t max)
{
	const struct tube *tb = qs_tube(q, tube, len);
	size_t n = 0;

	if (tb == NULL || tb->ntaken == 0)
		return 0;
	for (uint32_t i = 0; i < q->taken.len; i++) {
		const struct task *t = q->taken.item[i];

		if (qs_tube_of(q, t) != tb || !held(t))
			continue;
		if (n < max)
			ids[n] = t->id;
		n++;
	}
	return n;
}

int
queue_move_was(const struct queue *q, uint64_t id, uint64_t *lease)
{
	const struct task *t = qs_task(q, id);

	if (t == NULL || !held(t))
		return 0;
	if (lease != NULL)
		*lease = t->ext->lease;
	return (int)t->ext->session;
}

int
queue_decide_move_drop(
    struct queue *q, uint64_t id, uint64_t lease, struct qrec *out)
{
	const struct task *t = qs_task(q, id);

	memset(out, 0, sizeof(*out));
	if (t == NULL || !held(t) || t->ext->lease != lease) {
		out->type = QREC_NONE;
		return 0;
	}
	out->type = QREC_MOVE_DROP;
	out->u.move.id = id;
	out->u.move.lease = lease;
	return 0;
}

static int
apply_hold(struct queue *q, int64_t time, const struct qrec_move *m)
{
	struct task *t = qs_task(q, m->id);
	int was, rc;

	if (t == NULL ||
	    (t->state != QUEUE_READY && t->state != QUEUE_DELAYED &&
	        t->state != QUEUE_BURIED))
		return SLUICE_ECORRUPT;
	was = t->state;
	if ((rc = task_ext_need(t)) != 0)
		return rc;
	if ((rc = qs_reserve(q, qs_tube_of(q, t), QUEUE_TAKEN, false, 0)) !=
	    0) {
		task_ext_trim(t);
		return rc;
	}
	qs_unplace(q, t);
	t->ext->lease = m->lease;
	t->ext->session = (uint64_t)was;
	t->ext->detached = true;
	t->ext->taken_at = time;
	t->ext->deadline = QUEUE_MOVE_HELD;
	qs_place(q, t, QUEUE_TAKEN);
	return 0;
}

static int
apply_drop(struct queue *q, int64_t time, const struct qrec_move *m)
{
	struct task *t = qs_task(q, m->id);

	if (t == NULL || !held(t) || t->ext->lease != m->lease)
		return SLUICE_ECORRUPT;
	qs_task_remove(q, t, time, 0);
	return 0;
}

/* ---- Target ----------------------------------------------------------- */

int
queue_decide_move_in(struct queue *q, int64_t now, const char *source,
    size_t source_len, const struct queue_move_item *it, struct qrec *out,
    uint64_t *id)
{
	struct move_in *mi;
	struct queue_put_req req;
	struct queue_put_res res;
	struct move_pair *p;
	struct qrec put;
	int rc;

	if ((rc = queue_tick(q, now)) != 0)
		return rc;
	if (!qrec_cluster_valid(source, source_len) || it->src_id == 0 ||
	    it->ttr == 0 || it->created_at < 0 ||
	    it->created_at > QREC_TIME_MAX || it->run_at < 0 ||
	    it->run_at > QREC_TIME_MAX || it->error_len > QREC_ERROR_MAX ||
	    (it->state != QUEUE_READY && it->state != QUEUE_DELAYED &&
	        it->state != QUEUE_BURIED))
		return SLUICE_EINVAL;
	if (!qrec_tube_valid(it->tube, it->tube_len))
		return SLUICE_ETUBE;
	mi = in_find(q, it->tube, it->tube_len, NULL);
	if (mi != NULL &&
	    (mi->source_len != source_len ||
	        memcmp(mi->source, source, source_len) != 0))
		return SLUICE_ESTATE;
	p = mi != NULL ? idx_find(&mi->pairs, it->src_id) : NULL;
	if (p != NULL && p->key_len == 0) {
		memset(out, 0, sizeof(*out));
		out->type = QREC_NONE;
		*id = p->id;
		return 0;
	}
	queue_put_req_init(&req);
	req.tube = it->tube;
	req.tube_len = it->tube_len;
	req.payload = it->payload;
	req.payload_len = it->payload_len;
	req.pri = it->pri;
	req.run_at =
	    it->state == QUEUE_DELAYED && it->run_at > now ? it->run_at : 0;
	req.ttr_ms = it->ttr;
	req.max_attempts = it->max_attempts;
	req.period_ms = it->period;
	/* a placeholder's copy: its key is the placeholder's, made the
	 * task's (move_place.c), so it is not asked of the put */
	req.key = p != NULL ? NULL : it->key;
	req.key_len = p != NULL ? 0 : it->key_len;
	req.group = it->group;
	req.group_len = it->group_len;
	if ((rc = queue_decide_put_copy(q, now, &req, &put, &res)) != 0)
		return rc;
	memset(out, 0, sizeof(*out));
	out->type = QREC_MOVE_IN;
	out->u.move.src_id = it->src_id;
	out->u.move.source = source;
	out->u.move.source_len = source_len;
	if (p != NULL && (put.type == QREC_PUT || put.type == QREC_PUT_G)) {
		if (it->key_len != p->key_len ||
		    memcmp(it->key, p->key, p->key_len) != 0)
			return SLUICE_EINVAL; /* not the key it held */
		out->u.move.fold = 2;
		put.u.put.id = p->id;
		put.u.put.key = it->key;
		put.u.put.key_len = it->key_len;
	}
	if (put.type == QREC_NONE) {
		/* its key names a task here already: one task */
		out->u.move.fold = 1;
		out->u.move.id = res.id;
		out->u.move.tube = it->tube;
		out->u.move.tube_len = it->tube_len;
		*id = res.id;
		return 0;
	}
	if (put.type != QREC_PUT && put.type != QREC_PUT_G)
		return SLUICE_EINVAL;
	out->u.move.put = put.u.put;
	out->u.move.put.ttr = it->ttr;
	out->u.move.put.max_attempts = it->max_attempts;
	/* a ready task keeps its place (ready since), a delayed one its
	 * time; a task due meanwhile is ready */
	if (it->state != QUEUE_DELAYED || it->run_at <= now)
		out->u.move.put.run_at =
		    it->run_at <= q->clock ? it->run_at : q->clock;
	out->u.move.state = it->state == QUEUE_BURIED ? QUEUE_BURIED : 1;
	out->u.move.attempts = it->attempts;
	out->u.move.created_at = it->created_at;
	out->u.move.error = it->error;
	out->u.move.error_len = it->error_len;
	*id = put.u.put.id;
	return 0;
}

/* A MOVE_IN with fold 2: the copy takes its placeholder's id and key. The
 * placeholder's entry goes first (the put makes the task's), and the id
 * index's next id stays where it was (the put's id is below it). */
static int
in_placed(struct queue *q, int64_t time, struct move_in *mi,
    const struct qrec_move *m)
{
	struct move_pair *p = idx_find(&mi->pairs, m->src_id);
	struct keyent *ke;
	uint64_t next = q->next_id;
	int rc;

	if (p == NULL || p->key_len == 0 || p->id != m->put.id ||
	    (ke = move_placeholder(q, mi, p)) == NULL ||
	    m->put.key_len != p->key_len ||
	    memcmp(m->put.key, p->key, p->key_len) != 0)
		return SLUICE_ECORRUPT;
	idx_remove(&q->keys, ke);
	q->next_id = m->put.id;
	rc = qs_apply_put(q, time, &m->put);
	q->next_id = next;
	if (rc != 0) {
		idx_insert(&q->keys, ke); /* its slot is still free */
		return rc;
	}
	free(ke);
	p->key_len = 0;
	return 0;
}

int
queue_decide_move_mark(
    struct queue *q, const char *tube, size_t len, struct qrec *out)
{
	const struct tube *tb;

	memset(out, 0, sizeof(*out));
	if (!qrec_tube_valid(tube, len))
		return SLUICE_ETUBE;
	tb = qs_tube(q, tube, len);
	if (tb == NULL || tb->moving_out) {
		out->type = QREC_NONE;
		return 0;
	}
	out->type = QREC_MOVE_MARK;
	out->u.move.tube = tube;
	out->u.move.tube_len = len;
	return 0;
}

int
queue_decide_move_end(
    struct queue *q, const char *tube, size_t len, struct qrec *out)
{
	const struct tube *tb;

	memset(out, 0, sizeof(*out));
	if (!qrec_tube_valid(tube, len))
		return SLUICE_ETUBE;
	tb = qs_tube(q, tube, len);
	if (in_find(q, tube, len, NULL) == NULL &&
	    (tb == NULL || !tb->moving_out) && !move_marked(q, tube, len)) {
		out->type = QREC_NONE;
		return 0;
	}
	out->type = QREC_MOVE_END;
	out->u.move.tube = tube;
	out->u.move.tube_len = len;
	return 0;
}

size_t
queue_move_pairs(
    const struct queue *q, const char *tube, size_t len, const char **source)
{
	const struct move_in *mi = in_find(q, tube, len, NULL);

	if (source != NULL)
		*source = mi != NULL ? mi->source : NULL;
	return mi != NULL ? mi->pairs.len : 0;
}

static int
apply_in(struct queue *q, int64_t time, const struct qrec_move *m)
{
	const char *tube = m->fold == 1 ? m->tube : m->put.tube;
	size_t len = m->fold == 1 ? m->tube_len : m->put.tube_len;
	struct move_in *mi;
	struct task *t;
	char *err = NULL;
	int rc;

	mi = in_get(q, tube, len, m->source, m->source_len, &rc);
	if (mi == NULL)
		return rc;
	if (m->fold != 2 && idx_find(&mi->pairs, m->src_id) != NULL)
		return SLUICE_ECORRUPT;
	if (m->fold == 1)
		return pair_add(mi, m->src_id, m->id);
	if (m->error_len > 0) {
		if ((err = malloc(m->error_len)) == NULL)
			return SLUICE_ENOMEM;
		memcpy(err, m->error, m->error_len);
	}
	/* fold 2: the copy takes its placeholder's id (paired already) */
	rc = m->fold == 2 ? in_placed(q, time, mi, m)
	                  : pair_add(mi, m->src_id, m->put.id);
	if (rc != 0 ||
	    (m->fold != 2 && (rc = qs_apply_put(q, time, &m->put)) != 0)) {
		free(err);
		return rc;
	}
	t = qs_task(q, m->put.id);
	t->created_at = m->created_at;
	t->attempts = m->attempts;
	if (err != NULL) {
		if (task_ext_need(t) != 0) {
			free(err);
			return SLUICE_ENOMEM;
		}
		task_put_error(t, err, m->error_len);
	}
	if (m->state == QUEUE_BURIED) {
		if ((rc = qs_reserve(
		         q, qs_tube_of(q, t), QUEUE_BURIED, false, 0)) != 0)
			return rc;
		qs_unplace(q, t);
		qs_place(q, t, QUEUE_BURIED);
	}
	return 0;
}

static int
apply_end(struct queue *q, const struct qrec_move *m)
{
	uint32_t at;
	struct move_in *mi = in_find(q, m->tube, m->tube_len, &at);
	struct tube *tb = qs_tube(q, m->tube, m->tube_len);

	if (mi == NULL && (tb == NULL || !tb->moving_out) &&
	    !move_marked(q, m->tube, m->tube_len))
		return SLUICE_ECORRUPT;
	move_place_end(q, m->tube, m->tube_len, mi);
	if (tb != NULL && tb->moving_out) {
		tb->moving_out = 0;
		if (heap_top(&tb->age) != NULL && q->on_ready != NULL)
			q->on_ready(q->on_ready_arg, tb->name, tb->name_len);
	}
	if (mi != NULL) {
		in_free(mi);
		q->mv.in[at] = q->mv.in[--q->mv.n];
	}
	return 0;
}

static int
apply_mark(struct queue *q, const struct qrec_move *m)
{
	struct tube *tb = qs_tube(q, m->tube, m->tube_len);

	if (tb == NULL || tb->moving_out)
		return SLUICE_ECORRUPT;
	tb->moving_out = 1;
	return 0;
}

int
move_apply(struct queue *q, uint64_t lsn, int64_t time, const struct qrec *rec)
{
	(void)lsn;
	switch (rec->type) {
	case QREC_MOVE_HOLD:
		return apply_hold(q, time, &rec->u.move);
	case QREC_MOVE_DROP:
		return apply_drop(q, time, &rec->u.move);
	case QREC_MOVE_IN:
		return apply_in(q, time, &rec->u.move);
	case QREC_MOVE_END:
		return apply_end(q, &rec->u.move);
	case QREC_MOVE_MARK:
		return apply_mark(q, &rec->u.move);
	case QREC_MOVE_KEY:
		return move_key_apply(q, &rec->u.move);
	case QREC_MOVE_PEND:
	case QREC_MOVE_PLACE:
	case QREC_MOVE_KEEP:
		return move_place_apply(q, rec);
	default:
		return batch_apply(q, time, rec);
	}
}

/* ---- For move_key.c ---------------------------------------------------- */

struct move_in *
move_table(struct queue *q, const char *tube, size_t len, const char *source,
    size_t source_len, int *rc)
{
	return in_get(q, tube, len, source, source_len, rc);
}

struct move_in *
move_table_find(const struct queue *q, const char *tube, size_t len)
{
	return in_find(q, tube, len, NULL);
}

int
move_pair_add(struct move_in *mi, uint64_t src, uint64_t id)
{
	return pair_add(mi, src, id);
}

int
move_pair_add_key(struct move_in *mi, uint64_t src, uint64_t id,
    const char *key, size_t key_len)
{
	return pair_add_key(mi, src, id, key, key_len);
}

struct move_pair *
move_pair_find(const struct move_in *mi, uint64_t src)
{
	return idx_find(&mi->pairs, src);
}

uint64_t
move_pair_id(const struct move_in *mi, uint64_t src)
{
	const struct move_pair *p = idx_find(&mi->pairs, src);

	return p != NULL ? p->id : 0;
}

int
move_table_from(const struct queue *q, const char *tube, size_t len,
    const char *source, size_t source_len, const struct move_in **mi)
{
	*mi = in_find(q, tube, len, NULL);
	if (*mi != NULL &&
	    ((*mi)->source_len != source_len ||
	        memcmp((*mi)->source, source, source_len) != 0))
		return SLUICE_ESTATE;
	return 0;
}

void
move_rec_key(struct qrec *out, int type, uint64_t src_id, const char *source,
    size_t source_len, const char *tube, size_t tube_len, const char *key,
    size_t key_len)
{
	out->type = type;
	out->u.move.src_id = src_id;
	out->u.move.source = source;
	out->u.move.source_len = source_len;
	out->u.move.tube = tube;
	out->u.move.tube_len = tube_len;
	out->u.move.key = key;
	out->u.move.key_len = key_len;
}

size_t
move_lowest(void *out, size_t size, size_t *kept, size_t max, uint64_t id)
{
	char *o = out;
	uint64_t v;
	size_t at;

	if (max == 0)
		return max;
	if (*kept == max) {
		memcpy(&v, o + (max - 1) * size, sizeof(v));
		if (id > v)
			return max;
	}
	/* the list is roughly in id order: most land at the end or past it */
	for (at = *kept; at > 0; at--) {
		memcpy(&v, o + (at - 1) * size, sizeof(v));
		if (v <= id)
			break;
	}
	if (*kept < max)
		(*kept)++;
	memmove(o + (at + 1) * size, o + at * size, (*kept - 1 - at) * size);
	return at;
}

/* ---- Snapshot, check, dump -------------------------------------------- */

int
move_snapshot_write(const struct queue *q,
    int (*emit)(void *, uint16_t, const void *, size_t, const void *, size_t),
    void *arg)
{
	struct buf w;
	int rc = 0;

	buf_init(&w);
	for (uint32_t i = 0; i < q->ntubes && rc == 0; i++) {
		const struct tube *tb = q->tubes[i];

		if (!tb->moving_out)
			continue;
		buf_reset(&w);
		buf_put_str16(&w, tb->name, tb->name_len);
		rc = buf_failed(&w)
		    ? SLUICE_ENOMEM
		    : emit(arg, QSNAP_MOVEOUT, w.data, w.len, NULL, 0);
	}
	for (uint32_t i = 0; i < q->mv.n && rc == 0; i++) {
		const struct move_in *mi = q->mv.in[i];

		for (uint32_t k = 0; k < mi->pairs.cap && rc == 0; k++) {
			const struct move_pair *p = idx_at(&mi->pairs, k);

			if (p == NULL || p->key_len > 0)
				continue; /* a placeholder: MOVEPLACE */
			buf_reset(&w);
			buf_put_str16(&w, mi->tube, mi->tube_len);
			buf_put_str16(&w, mi->source, mi->source_len);
			buf_put_u64(&w, p->src);
			buf_put_u64(&w, p->id);
			rc = buf_failed(&w)
			    ? SLUICE_ENOMEM
			    : emit(arg, QSNAP_MOVEIN, w.data, w.len, NULL, 0);
		}
	}
	buf_fini(&w);
	return rc != 0 ? rc : move_place_snapshot_write(q, emit, arg);
}

int
move_snapshot_load(struct queue *q, uint16_t type, struct rd *r)
{
	const char *tube, *source;
	size_t len, slen;
	struct move_in *mi;
	struct tube *tb;
	uint64_t src, id;
	int rc;

	if (type != QSNAP_MOVEOUT && type != QSNAP_MOVEIN)
		return move_place_snapshot_load(q, type, r);
	tube = rd_str16(r, QREC_NAME_MAX, &len);
	if (type == QSNAP_MOVEOUT) {
		if (rd_failed(r) || rd_left(r) != 0 ||
		    (tb = qs_tube(q, tube, len)) == NULL || tb->moving_out)
			return SLUICE_ECORRUPT;
		tb->moving_out = 1;
		return 0;
	}
	source = rd_str16(r, QREC_CLUSTER_MAX, &slen);
	src = rd_u64(r);
	id = rd_u64(r);
	if (rd_failed(r) || rd_left(r) != 0 || !qrec_tube_valid(tube, len) ||
	    !qrec_cluster_valid(source, slen) || src == 0 || id == 0 ||
	    id >= q->next_id)
		return SLUICE_ECORRUPT;
	if ((mi = in_get(q, tube, len, source, slen, &rc)) == NULL)
		return rc;
	return pair_add(mi, src, id);
}

const char *
move_check(const struct queue *q)
{
	for (uint32_t i = 0; i < q->mv.n; i++) {
		const struct move_in *mi = q->mv.in[i];

		if (!qrec_tube_valid(mi->tube, mi->tube_len) ||
		    !qrec_cluster_valid(mi->source, mi->source_len))
			return "a move's table names a bad tube or source";
		for (uint32_t k = 0; k < i; k++)
			if (q->mv.in[k]->tube_len == mi->tube_len &&
			    memcmp(q->mv.in[k]->tube, mi->tube, mi->tube_len) ==
			        0)
				return "two move tables for one tube";
		for (uint32_t k = 0; k < mi->pairs.cap; k++) {
			const struct move_pair *p = idx_at(&mi->pairs, k);

			if (p != NULL && (p->id == 0 || p->id >= q->next_id))
				return "a move's pair names an id never given";
		}
	}
	return move_place_check(q);
}

void
move_dump(const struct queue *q, struct buf *out)
{
	for (uint32_t i = 0; i < q->ntubes; i++)
		if (q->tubes[i]->moving_out)
			buf_printf(
			    out, "moving out tube=%s\n", q->tubes[i]->name);
	for (uint32_t i = 0; i < q->mv.n; i++)
		buf_printf(out,
		    "move in tube=%.*s from=%.*s pairs=%" PRIu32 "\n",
		    (int)q->mv.in[i]->tube_len, q->mv.in[i]->tube,
		    (int)q->mv.in[i]->source_len, q->mv.in[i]->source,
		    q->mv.in[i]->pairs.len);
	move_place_dump(q, out);
}
