/* glimit - limits per fair group (glimit.h has the design): the settings
 * table, each live group's bucket, cap and pause, the gdue heap, and the
 * apply, snapshot and check of GROUP_SET. The decision and the views are
 * in glimit_ops.c. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/qsnap_fmt.h"
#include "queue/qstate.h"
#include "sluice.h"

enum { GOVER_SEED = 0x676f766572 };

static uint64_t
gover_hash(const char *name, size_t len)
{
	return idx_hash_bytes(GOVER_SEED, name, len);
}

static uint64_t
gover_key(const void *item)
{
	const struct gover *o = item;

	return gover_hash(o->name, o->name_len);
}

struct gname {
	const char *p;
	size_t len;
};

static bool
gover_eq(const void *item, const void *arg)
{
	const struct gover *o = item;
	const struct gname *n = arg;

	return o->name_len == n->len && memcmp(o->name, n->p, n->len) == 0;
}

struct gover *
gconf_find(const struct gconf *gc, const char *name, size_t len)
{
	struct gname n = { name, len };

	if (gc == NULL || len == 0)
		return NULL;
	return idx_find_eq(&gc->over, gover_hash(name, len), gover_eq, &n);
}

void
gconf_free(struct gconf *gc)
{
	if (gc == NULL)
		return;
	for (uint32_t i = 0; i < gc->over.cap; i++)
		free(idx_at(&gc->over, i));
	idx_fini(&gc->over);
	free(gc);
}

/* The limits in force for group `name`: its own, limit by limit, else
 * the tube's default. */
void
gconf_resolve(const struct gconf *gc, const char *name, size_t len,
    struct qrec_limits *lim, bool *paused)
{
	const struct gover *o = gconf_find(gc, name, len);

	memset(lim, 0, sizeof(*lim));
	*paused = false;
	if (gc == NULL)
		return;
	*lim = gc->def;
	if (o == NULL)
		return;
	*paused = o->paused;
	if (o->lim.set & QREC_LIM_RATE) {
		lim->rate = o->lim.rate;
		lim->per_ms = o->lim.per_ms;
		lim->burst = o->lim.burst;
	}
	if (o->lim.set & QREC_LIM_CONCURRENCY)
		lim->concurrency = o->lim.concurrency;
	lim->set |= o->lim.set;
}

/* ---- the bucket (as flow.c's, per group) ----------------------------- */

static uint64_t
bucket_cap(const struct glive *v)
{
	return (uint64_t)v->lim.burst * v->lim.per_ms;
}

static uint64_t
credit_at(const struct glive *v, int64_t now)
{
	uint64_t cap = bucket_cap(v), el;

	if (now <= v->stamp)
		return v->credit < cap ? v->credit : cap;
	el = (uint64_t)(now - v->stamp);
	if (el > cap / v->lim.rate)
		return cap;
	return v->credit + el * v->lim.rate < cap ? v->credit + el * v->lim.rate
	                                          : cap;
}

uint64_t
glive_tokens(const struct glive *v, int64_t now)
{
	if (v == NULL || !(v->lim.set & QREC_LIM_RATE))
		return 0;
	return credit_at(v, now) / v->lim.per_ms;
}

/* ---- holding ------------------------------------------------------------ */

static struct glive *
live_of(const struct groups *gs, const struct group *g)
{
	if (gs->lv == NULL || g->slot == 0 || g->slot >= gs->lv_cap)
		return NULL;
	return gs->lv[g->slot];
}

bool
glimit_held(const struct groups *gs, const struct group *g)
{
	const struct glive *v = live_of(gs, g);

	if (v == NULL)
		return false;
	return v->paused || v->hpos != HEAP_NONE ||
	    ((v->lim.set & QREC_LIM_CONCURRENCY) &&
	        g->taken >= v->lim.concurrency);
}

uint32_t
glimit_held_count(const struct groups *gs)
{
	uint32_t n = 0;

	if (gs->lv == NULL)
		return 0;
	for (uint32_t s = 1; s < gs->cap; s++) {
		const struct group *g = gs->table[s];

		if (((uintptr_t)g & 1) == 0 && g->len > 0 && glimit_held(gs, g))
			n++;
	}
	return n;
}

int
glimit_room(struct groups *gs, uint32_t cap)
{
	struct glive **p;

	if (gs->lv == NULL || cap <= gs->lv_cap)
		return 0;
	if ((p = realloc(gs->lv, (size_t)cap * sizeof(*p))) == NULL)
		return SLUICE_ENOMEM;
	memset(p + gs->lv_cap, 0, (size_t)(cap - gs->lv_cap) * sizeof(*p));
	gs->lv = p;
	gs->lv_cap = cap;
	return 0;
}

static bool
due_less(const void *a, const void *b)
{
	const struct glive *x = a, *y = b;

	if (x->due != y->due)
		return x->due < y->due;
	if (x->gs->tube->index != y->gs->tube->index)
		return x->gs->tube->index < y->gs->tube->index;
	return x->slot < y->slot;
}

void
qs_glimit_init(struct queue *q)
{
	heap_init(&q->gdue, due_less, offsetof(struct glive, hpos));
	q->gdue.noshrink = true; /* room for every glive: glive_new */
}

void
qs_glimit_fini(struct queue *q)
{
	heap_fini(&q->gdue);
}

/* A blank glive for g (no limit, not held), the gdue heap's room with
 * it. 0 or SLUICE_ENOMEM. */
static int
glive_new(struct queue *q, struct groups *gs, struct group *g)
{
	struct glive *v;

	if (gs->lv[g->slot] != NULL)
		return 0;
	if (heap_reserve(&q->gdue, q->nglive + 1 - q->gdue.len) != 0 ||
	    (v = calloc(1, sizeof(*v))) == NULL)
		return SLUICE_ENOMEM;
	v->hpos = HEAP_NONE;
	v->slot = g->slot;
	v->gs = gs;
	gs->lv[g->slot] = v;
	q->nglive++;
	return 0;
}

static void
glive_free(struct groups *gs, uint32_t slot)
{
	struct glive *v = gs->lv[slot];

	if (v == NULL)
		return;
	if (v->hpos != HEAP_NONE)
		heap_remove(gs->due, v);
	gs->lv[slot] = NULL;
	(*gs->nlive)--;
	free(v);
}

/* Whether two sets of limits have the same rate (a bucket goes on). */
static bool
rate_equal(const struct qrec_limits *a, const struct qrec_limits *b)
{
	if ((a->set & QREC_LIM_RATE) != (b->set & QREC_LIM_RATE))
		return false;
	return !(a->set & QREC_LIM_RATE) ||
	    (a->rate == b->rate && a->per_ms == b->per_ms &&
	        a->burst == b->burst);
}

/* Gives g the limits its tube's settings say from `now` (a full bucket
 * when its rate changes; a change of its cap keeps the bucket), frees a glive
 * that none covers, and puts g where it belongs in the rotation. True when g
 * may hand out now and has ready tasks (a take may be woken). */
static bool
glive_update(struct groups *gs, struct group *g, int64_t now)
{
	const struct gconf *gc = gs->tube->gconf;
	struct glive *v = gs->lv != NULL ? gs->lv[g->slot] : NULL;
	struct qrec_limits lim;
	bool paused;

	if (v != NULL) {
		gconf_resolve(gc, g->name, g->name_len, &lim, &paused);
		if (lim.set == 0 && !paused) {
			glive_free(gs, g->slot);
		} else {
			if (!rate_equal(&lim, &v->lim)) { /* a new bucket */
				v->lim = lim;
				v->stamp = now;
				v->credit = (lim.set & QREC_LIM_RATE)
				    ? bucket_cap(v)
				    : 0;
				if (v->hpos != HEAP_NONE)
					heap_remove(gs->due, v);
			}
			v->lim = lim;
			v->paused = paused;
		}
	}
	groups_rotate(gs, g);
	return g->rpos != HEAP_NONE;
}

/* The glives tube tb's settings call for, blank (0 or SLUICE_ENOMEM):
 * for every live group when `all`, else for group `name`. */
static int
glive_prepare(
    struct queue *q, struct tube *tb, bool all, const char *name, size_t len)
{
	struct groups *gs = tb->groups;
	struct group *g;
	int rc;

	if (gs == NULL)
		return 0;
	if (gs->lv == NULL) {
		if ((gs->lv = calloc(
		         gs->cap > 0 ? gs->cap : 1, sizeof(*gs->lv))) == NULL)
			return SLUICE_ENOMEM;
		gs->lv_cap = gs->cap > 0 ? gs->cap : 1;
		gs->due = &q->gdue;
		gs->nlive = &q->nglive;
	}
	if (!all) {
		if ((g = groups_find(tb, name, len)) == NULL)
			return 0;
		return glive_new(q, gs, g);
	}
	for (uint32_t s = 1; s < gs->cap; s++) {
		g = gs->table[s];
		if (((uintptr_t)g & 1) != 0 || g == NULL)
			continue;
		if ((rc = glive_new(q, gs, g)) != 0)
			return rc;
	}
	return 0;
}

/* After the settings of tb changed (or a prepare failed): every live
 * group's limits from `now`; blank glives go, and the lv table with the
 * last of them. Wakes a take when a group may hand out. */
static void
glive_settle(struct queue *q, struct tube *tb, int64_t now)
{
	struct groups *gs = tb->groups;
	bool wake = false;

	if (gs == NULL || gs->lv == NULL)
		return;
	for (uint32_t s = 1; s < gs->cap; s++) {
		struct group *g = gs->table[s];

		if (((uintptr_t)g & 1) != 0 || g == NULL)
			continue;
		wake |= glive_update(gs, g, now);
	}
	if (tb->gconf == NULL) {
		free(gs->lv);
		gs->lv = NULL;
		gs->lv_cap = 0;
	}
	if (wake && q->on_ready != NULL)
		q->on_ready(q->on_ready_arg, tb->name, tb->name_len);
}

int
glimit_group_new(struct tube *tb, struct group *g)
{
	struct groups *gs = tb->groups;
	struct qrec_limits lim;
	struct glive *v;
	bool paused;

	if (gs == NULL || tb->gconf == NULL)
		return 0;
	if (gs->lv == NULL) { /* the tube's first group */
		if ((gs->lv = calloc(gs->cap, sizeof(*gs->lv))) == NULL)
			return SLUICE_ENOMEM;
		gs->lv_cap = gs->cap;
		gs->due = tb->gconf->due;
		gs->nlive = tb->gconf->nlive;
	}
	gconf_resolve(tb->gconf, g->name, g->name_len, &lim, &paused);
	if (lim.set == 0 && !paused)
		return 0;
	if (glimit_room(gs, g->slot + 1) != 0 ||
	    heap_reserve(gs->due, *gs->nlive + 1 - gs->due->len) != 0 ||
	    (v = calloc(1, sizeof(*v))) == NULL)
		return SLUICE_ENOMEM;
	v->hpos = HEAP_NONE;
	v->slot = g->slot;
	v->gs = gs;
	v->lim = lim;
	v->paused = paused;
	v->stamp = 0; /* full whatever the time */
	v->credit = (lim.set & QREC_LIM_RATE) ? bucket_cap(v) : 0;
	gs->lv[g->slot] = v;
	(*gs->nlive)++;
	return 0;
}

void
glimit_group_drop(struct groups *gs, struct group *g)
{
	if (gs->lv != NULL && g->slot < gs->lv_cap)
		glive_free(gs, g->slot);
}

void
glimit_groups_free(struct groups *gs)
{
	if (gs->lv == NULL)
		return;
	for (uint32_t s = 1; s < gs->lv_cap; s++)
		glive_free(gs, s);
	free(gs->lv);
	gs->lv = NULL;
	gs->lv_cap = 0;
}

/* ---- takes ------------------------------------------------------------ */

void
qs_glimit_taken(struct queue *q, struct tube *tb, struct task *t)
{
	struct group *g = groups_of(tb, t);

	(void)q;
	g->taken++;
	if (live_of(tb->groups, g) != NULL)
		groups_rotate(tb->groups, g); /* at its cap: held */
}

void
qs_glimit_spend(struct queue *q, struct tube *tb, struct task *t, int64_t time)
{
	struct group *g = groups_of(tb, t);
	struct glive *v = live_of(tb->groups, g);

	if (v == NULL || !(v->lim.set & QREC_LIM_RATE))
		return;
	v->credit = credit_at(v, time);
	if (time > v->stamp)
		v->stamp = time;
	/* a record decided on a clock ahead of this one may find less than
	 * a token: the bucket is empty */
	v->credit = v->credit >= v->lim.per_ms ? v->credit - v->lim.per_ms : 0;
	if (v->credit >= v->lim.per_ms)
		return;
	/* short of a token: held until one comes */
	v->due = v->stamp +
	    (int64_t)((v->lim.per_ms - v->credit + v->lim.rate - 1) /
	        v->lim.rate);
	if (v->hpos == HEAP_NONE)
		heap_push(&q->gdue, v);
	else
		heap_fix(&q->gdue, v);
	groups_rotate(tb->groups, g);
}

void
qs_glimit_untaken(struct queue *q, struct tube *tb, struct task *t)
{
	struct group *g = groups_of(tb, t);
	bool held;

	assert(g->taken > 0);
	if (live_of(tb->groups, g) == NULL) {
		g->taken--;
		return;
	}
	held = g->rpos == HEAP_NONE;
	g->taken--;
	groups_rotate(tb->groups, g);
	if (held && g->rpos != HEAP_NONE && q->on_ready != NULL)
		q->on_ready(q->on_ready_arg, tb->name, tb->name_len);
}

void
qs_glimit_tick(struct queue *q, int64_t now)
{
	struct glive *v;

	while ((v = heap_top(&q->gdue)) != NULL && v->due <= now) {
		struct groups *gs = v->gs;
		struct group *g = gs->table[v->slot];
		struct tube *tb = gs->tube;

		heap_remove(&q->gdue, v);
		groups_rotate(gs, g);
		if (g->rpos != HEAP_NONE && q->on_ready != NULL)
			q->on_ready(q->on_ready_arg, tb->name, tb->name_len);
	}
}

int64_t
qs_glimit_next(const struct queue *q)
{
	const struct glive *v = heap_top(&q->gdue);

	return v != NULL ? v->due : INT64_MAX;
}

/* ---- settings ---------------------------------------------------------- */

/* Sets the settings of `name` in tb's table (the empty name: the
 * defaults); the table goes with its last setting. 0 or SLUICE_ENOMEM,
 * nothing changed. */
static int
gconf_set(struct queue *q, struct tube *tb, const char *name, size_t len,
    const struct qrec_limits *lim, bool paused)
{
	struct gconf *gc = tb->gconf;
	struct gover *o = gconf_find(gc, name, len);
	bool none = lim->set == 0 && !paused;

	if (gc == NULL) {
		if (none)
			return 0;
		if ((gc = calloc(1, sizeof(*gc))) == NULL)
			return SLUICE_ENOMEM;
		idx_init(&gc->over, gover_key);
		gc->due = &q->gdue;
		gc->nlive = &q->nglive;
	}
	if (len == 0) {
		gc->def = *lim;
	} else if (o != NULL && none) {
		gc->npaused -= o->paused;
		idx_remove(&gc->over, o);
		free(o);
	} else if (o != NULL) {
		gc->npaused += (uint32_t)paused - o->paused;
		o->lim = *lim;
		o->paused = paused;
	} else if (!none) {
		if (idx_reserve(&gc->over, 1) != 0 ||
		    (o = calloc(1, offsetof(struct gover, name) + len)) ==
		        NULL) {
			if (tb->gconf == NULL)
				gconf_free(gc);
			return SLUICE_ENOMEM;
		}
		o->lim = *lim;
		o->paused = paused;
		o->name_len = (uint8_t)len;
		memcpy(o->name, name, len);
		idx_insert(&gc->over, o);
		gc->npaused += paused;
	}
	if (gc->def.set == 0 && gc->over.len == 0) {
		gconf_free(gc);
		gc = NULL;
	}
	tb->gconf = gc;
	return 0;
}

static int
group_set(struct queue *q, struct tube *tb, int64_t time,
    const struct qrec_group_set *r)
{
	int rc;

	if (r->group_len > 0 && tb->gconf != NULL &&
	    gconf_find(tb->gconf, r->group, r->group_len) == NULL &&
	    tb->gconf->over.len >= GLIMIT_OVERRIDES_MAX)
		return SLUICE_ELIMIT;
	rc = glive_prepare(q, tb, r->group_len == 0, r->group, r->group_len);
	if (rc == 0)
		rc = gconf_set(
		    q, tb, r->group, r->group_len, &r->lim, r->paused);
	glive_settle(q, tb, time); /* also after a failure: blanks go */
	return rc;
}

int
qs_apply_group_set(
    struct queue *q, int64_t time, const struct qrec_group_set *r)
{
	struct tube *tb = qs_tube(q, r->tube, r->tube_len);

	if (tb == NULL)
		return SLUICE_ECORRUPT;
	return group_set(q, tb, time, r);
}

/* ---- snapshot ------------------------------------------------------------ */

/* Little-endian bytes, as the snapshot's writer puts them. */
static size_t
put_le(uint8_t *p, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return n;
}

/* GROUP_SET entry: str16 group (empty: the defaults), the limits part of
 * a TUBE_LIMIT body, u8 paused. */
static int
emit_one(const char *name, size_t len, const struct qrec_limits *l, bool paused,
    queue_emit_fn *emit, void *arg)
{
	uint8_t mem[2 + QREC_GROUP_MAX + 18];
	size_t n = 0;

	n += put_le(mem + n, len, 2);
	memcpy(mem + n, name, len);
	n += len;
	n += put_le(mem + n, l->set, 1);
	n += put_le(mem + n, l->rate, 4);
	n += put_le(mem + n, l->per_ms, 4);
	n += put_le(mem + n, l->burst, 4);
	n += put_le(mem + n, l->concurrency, 4);
	n += put_le(mem + n, paused ? 1 : 0, 1);
	return emit(arg, QSNAP_GROUP_SET, mem, n, NULL, 0);
}

int
glimit_snapshot(const struct tube *tb, queue_emit_fn *emit, void *arg)
{
	const struct gconf *gc = tb->gconf;
	int rc;

	if (gc == NULL)
		return 0;
	if (gc->def.set != 0 &&
	    (rc = emit_one("", 0, &gc->def, false, emit, arg)) != 0)
		return rc;
	for (uint32_t i = 0; i < gc->over.cap; i++) {
		const struct gover *o = idx_at(&gc->over, i);

		if (o != NULL &&
		    (rc = emit_one(o->name, o->name_len, &o->lim, o->paused,
		         emit, arg)) != 0)
			return rc;
	}
	return 0;
}

int
qs_glimit_load(struct queue *q, struct rd *r)
{
	struct tube *tb = q->ntubes > 0 ? q->tubes[q->ntubes - 1] : NULL;
	struct qrec_group_set s = { 0 };
	uint8_t paused;

	s.group = rd_str16(r, QREC_GROUP_MAX, &s.group_len);
	qrec_limits_get(r, &s.lim);
	paused = rd_u8(r);
	s.paused = paused == 1;
	if (paused > 1 || rd_failed(r) || rd_left(r) != 0 || tb == NULL)
		return SLUICE_ECORRUPT;
	s.tube = tb->name;
	s.tube_len = tb->name_len;
	/* a valid record, naming settings not loaded yet, not empty */
	if ((s.lim.set == 0 && !s.paused) ||
	    !qrec_valid(
	        &(struct qrec) { .type = QREC_GROUP_SET, .u.group_set = s }) ||
	    (s.group_len == 0 && tb->gconf != NULL &&
	        tb->gconf->def.set != 0) ||
	    gconf_find(tb->gconf, s.group, s.group_len) != NULL)
		return SLUICE_ECORRUPT;
	return group_set(q, tb, q->clock, &s);
}

/* ---- dump ---------------------------------------------------------------- */

static int
by_name(const void *a, const void *b)
{
	const struct gover *x = *(const struct gover *const *)a;
	const struct gover *y = *(const struct gover *const *)b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);

	return c != 0 ? c : (int)x->name_len - (int)y->name_len;
}

int
glimit_dump(const struct tube *tb, struct buf *out)
{
	const struct gconf *gc = tb->gconf;
	const struct gover **v;
	uint32_t n = 0;

	if (gc == NULL)
		return 0;
	buf_printf(out, " group_limits:");
	qrec_limits_format(&gc->def, out);
	if (gc->over.len == 0)
		return 0;
	if ((v = malloc(gc->over.len * sizeof(*v))) == NULL)
		return SLUICE_ENOMEM;
	for (uint32_t i = 0; i < gc->over.cap; i++)
		if (idx_at(&gc->over, i) != NULL)
			v[n++] = idx_at(&gc->over, i);
	qsort(v, n, sizeof(*v), by_name);
	for (uint32_t i = 0; i < n; i++) {
		buf_printf(
		    out, " group %.*s:", (int)v[i]->name_len, v[i]->name);
		qrec_limits_format(&v[i]->lim, out);
		if (v[i]->paused)
			buf_printf(out, " paused");
	}
	free(v);
	return 0;
}

/* ---- invariants --------------------------------------------------------- */

bool
qs_glimit_valid(const struct queue *q, const struct tube *tb)
{
	const struct gconf *gc = tb->gconf;
	const struct groups *gs = tb->groups;
	uint32_t npaused = 0;
	uint64_t taken = 0;

	(void)q;
	if (gc != NULL) {
		if (gc->def.set == 0 && gc->over.len == 0)
			return false;
		if (gc->def.set != 0 && !qrec_limits_valid(&gc->def))
			return false;
		for (uint32_t i = 0; i < gc->over.cap; i++) {
			const struct gover *o = idx_at(&gc->over, i);

			if (o == NULL)
				continue;
			if ((o->lim.set == 0 && !o->paused) ||
			    !qrec_limits_valid(&o->lim) ||
			    gconf_find(gc, o->name, o->name_len) != o)
				return false;
			npaused += o->paused;
		}
		if (npaused != gc->npaused)
			return false;
	}
	if (gs == NULL)
		return true;
	if ((gs->lv != NULL) != (gc != NULL))
		return false;
	taken = gs->none.taken;
	for (uint32_t s = 1; s < gs->cap; s++) {
		const struct group *g = gs->table[s];
		const struct glive *v;
		struct qrec_limits lim;
		bool paused;

		if (((uintptr_t)g & 1) != 0)
			continue;
		taken += g->taken;
		if (g->taken > g->ntasks)
			return false;
		v = live_of(gs, g);
		gconf_resolve(gc, g->name, g->name_len, &lim, &paused);
		if ((v != NULL) != (lim.set != 0 || paused))
			return false;
		if (v == NULL)
			continue;
		if (!qrec_limits_equal(&v->lim, &lim) || v->paused != paused ||
		    v->slot != s || v->gs != gs ||
		    ((lim.set & QREC_LIM_RATE) && v->credit > bucket_cap(v)) ||
		    (v->hpos != HEAP_NONE &&
		        (v->hpos >= q->gdue.len || q->gdue.item[v->hpos] != v)))
			return false;
	}
	return taken == tb->ntaken;
}
