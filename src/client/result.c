/* result - turns decoded replies into the public result types of
 * sluice.h, each in one allocation (result.h).
 *
 * Each builder runs twice over the decoded reply: once to size the block
 * (an `arena` with no memory only counts), once to fill it. The structs go
 * first, at the start of the block, so they are aligned by malloc; the
 * bytes (strings and payloads, each NUL-terminated) follow. */
#include <stdlib.h>
#include <string.h>

#include "client/result.h"

struct arena {
	char *base;  /* NULL while sizing */
	size_t used; /* bytes placed (or counted) so far */
};

/* Room for `n` bytes; NULL while sizing. */
static void *
arena_take(struct arena *a, size_t n)
{
	void *p = a->base ? a->base + a->used : NULL;

	a->used += n;
	return p;
}

/* A copy of `s` with a NUL after it. */
static const char *
arena_str(struct arena *a, struct msg_str s)
{
	char *p = arena_take(a, s.len + 1);

	if (p != NULL) {
		if (s.len)
			memcpy(p, s.p, s.len);
		p[s.len] = '\0';
	}
	return p;
}

/* NULL for an empty string, as the API documents for key and last_error. */
static const char *
arena_opt_str(struct arena *a, struct msg_str s)
{
	const char *p = arena_str(a, s);

	return s.len ? p : NULL;
}

/* Room for `n` bytes aligned for u64 (the block is malloc's). */
static void *
arena_take_aligned(struct arena *a, size_t n)
{
	a->used = (a->used + 7) & ~(size_t)7;
	return arena_take(a, n);
}

/* A task's dependencies, after its strings. */
static void
fill_deps(struct arena *a, const struct msg_task *t, struct sluice_task *o)
{
	struct sluice_parent *ps;
	struct msg_iter it = t->deps.parents_it;
	struct msg_parent p;
	uint64_t *cs;

	if (!t->has_deps)
		return;
	ps = arena_take_aligned(a, t->deps.nparents * sizeof(*ps));
	cs = arena_take_aligned(a, t->deps.nshown * sizeof(*cs));
	for (uint32_t i = 0; msg_next_parent(&it, &p); i++) {
		const char *r = arena_opt_str(a, p.result);

		if (ps != NULL) {
			ps[i].id = p.id;
			ps[i].outcome = p.outcome;
			ps[i].result = r;
			ps[i].result_len = p.result.len;
		}
	}
	it = t->deps.children_it;
	for (uint32_t i = 0; cs != NULL && msg_next_id(&it, &cs[i]); i++)
		;
	if (o == NULL)
		return;
	o->parents = t->deps.nparents ? ps : NULL;
	o->nparents = t->deps.nparents;
	o->parents_pending = t->deps.pending;
	o->on_parent_failure = t->deps.on_parent_failure;
	o->children = t->deps.nshown ? cs : NULL;
	o->nchildren_shown = t->deps.nshown;
	o->nchildren = t->deps.nchildren;
}

static void
fill_task(struct arena *a, const struct msg_task *t, struct sluice_task *o)
{
	const char *tube = arena_str(a, t->tube);
	const char *key = arena_opt_str(a, t->key);
	const char *err = arena_opt_str(a, t->last_error);
	const char *payload = arena_str(a, t->payload);
	const char *pending =
	    t->replace_pending ? arena_str(a, t->pending.payload) : NULL;
	const char *result = arena_opt_str(a, t->done.result);
	const char *peer = arena_opt_str(a, t->holder.peer);
	const char *group = arena_opt_str(a, t->group);

	if (o == NULL) {
		fill_deps(a, t, NULL);
		return;
	}
	memset(o, 0, sizeof(*o));
	o->id = t->id;
	o->lease = t->lease;
	o->state = t->state;
	o->detached = t->detached;
	o->cancelled = t->cancelled;
	o->priority = t->priority;
	o->attempts = t->attempts;
	o->max_attempts = t->max_attempts;
	o->ttr_ms = t->ttr;
	o->run_at = t->run_at;
	o->period_ms = t->period;
	o->created_at = t->created_at;
	o->updated_at = t->updated_at;
	o->taken_at = t->taken_at;
	o->deadline = t->deadline;
	o->tube = tube;
	o->key = key;
	o->last_error = err;
	o->payload = payload;
	o->payload_len = t->payload.len;
	o->size = t->size;
	o->version = t->version;
	if (t->replace_pending) {
		o->replace_pending = 1;
		o->pending.priority = t->pending.priority;
		o->pending.max_attempts = t->pending.max_attempts;
		o->pending.ttr_ms = t->pending.ttr;
		o->pending.run_at = t->pending.run_at;
		o->pending.period_ms = t->pending.period;
		o->pending.payload = pending;
		o->pending.payload_len = t->pending.payload.len;
		o->pending.size = t->pending.size;
		o->pending.version = t->pending.version;
	}
	o->finished_at = t->done.finished_at;
	o->kept_until = t->done.kept_until;
	o->duration_ms = t->done.duration;
	o->result = result;
	o->session = t->holder.session;
	o->peer = peer;
	o->group = group;
	fill_deps(a, t, o);
}

/* Lays out `n` tasks from `it` (or the single `one`). */
static void
build_tasks(
    struct arena *a, struct msg_iter it, uint32_t n, const struct msg_task *one)
{
	struct sluice_task *v = arena_take(a, n * sizeof(*v));
	struct msg_task t;

	if (one != NULL) {
		fill_task(a, one, v);
		return;
	}
	for (uint32_t i = 0; msg_next_task(&it, &t); i++)
		fill_task(a, &t, v ? &v[i] : NULL);
}

static int
tasks_alloc(struct msg_iter it, uint32_t n, const struct msg_task *one,
    struct sluice_task **out)
{
	struct arena a = { 0 };

	if (n == 0) {
		*out = NULL;
		return 0;
	}
	build_tasks(&a, it, n, one);
	if ((a.base = malloc(a.used)) == NULL)
		return SLUICE_ENOMEM;
	a.used = 0;
	build_tasks(&a, it, n, one);
	*out = (struct sluice_task *)a.base;
	return 0;
}

int
result_tasks(const struct msg_tasks *list, struct sluice_task **out)
{
	return tasks_alloc(list->it, list->n, NULL, out);
}

int
result_task(const struct msg_task *t, struct sluice_task **out)
{
	struct msg_iter none = { 0 };

	return tasks_alloc(none, 1, t, out);
}

/* ---- stats ----------------------------------------------------------- */

/* Stats need the kv arrays placed among the structs (aligned), before the
 * strings; so sizing happens in two parts: structs, then bytes. */
struct stats_layout {
	struct arena structs;
	struct arena bytes;
};

static void
fill_kvs(struct stats_layout *l, struct msg_kvs kvs, size_t *n,
    const struct sluice_kv **out)
{
	struct sluice_kv *v = arena_take(&l->structs, kvs.n * sizeof(*v));
	struct msg_kv kv;

	for (uint32_t i = 0; msg_next_kv(&kvs.it, &kv); i++) {
		const char *name = arena_str(&l->bytes, kv.name);

		if (v != NULL) {
			v[i].name = name;
			v[i].value = kv.value;
		}
	}
	*n = kvs.n;
	*out = v;
}

void
result_tube_limits(const struct msg_rep *m, struct sluice_limits *o)
{
	memset(o, 0, sizeof(*o));
	o->set = m->tube_conf.flow.set;
	o->rate = m->tube_conf.flow.rate;
	o->per_ms = m->tube_conf.flow.per_ms;
	o->burst = m->tube_conf.flow.burst;
	o->concurrency = m->tube_conf.flow.concurrency;
	o->tokens = m->tube_conf.state.tokens;
	o->taken = m->tube_conf.state.taken;
	o->held = m->tube_conf.state.held;
}

void
result_tube_conf(const struct msg_tube_conf *m, struct sluice_tube_conf *o)
{
	size_t n = m->dead_letter.len < SLUICE_TUBE_MAX ? m->dead_letter.len
	                                                : SLUICE_TUBE_MAX;

	memset(o, 0, sizeof(*o));
	o->set = m->set;
	o->ttr_ms = m->ttr;
	o->max_attempts = m->max_attempts;
	o->backoff_base_ms = m->backoff_base;
	o->backoff_cap_ms = m->backoff_cap;
	o->keep_done_ms = m->keep_done;
	o->lost_lease_immediate = m->lost_lease_immediate;
	if (n > 0)
		memcpy(o->dead_letter, m->dead_letter.p, n);
}

static void
fill_counts(struct stats_layout *l, const struct msg_tube_stats *s,
    struct sluice_tube_stats *o)
{
	struct sluice_tube_stats tmp;

	if (o == NULL)
		o = &tmp;
	memset(o, 0, sizeof(*o));
	o->name = arena_str(&l->bytes, s->name);
	o->ready = s->ready;
	o->delayed = s->delayed;
	o->taken = s->taken;
	o->buried = s->buried;
	o->paused_until = s->paused_until;
	o->oldest_ready_age_ms = s->oldest_ready_age;
	fill_kvs(l, s->more, &o->nkv, &o->kv);
	result_tube_conf(&s->conf, &o->conf);
}

static void
build_stats(struct stats_layout *l, const struct msg_stats *s)
{
	struct sluice_stats *o = arena_take(&l->structs, sizeof(*o));
	struct sluice_tube_stats *tubes =
	    arena_take(&l->structs, s->ntubes * sizeof(*tubes));
	struct sluice_stats tmp;
	struct msg_tube_stats ts;
	struct msg_iter it = s->it;

	if (o == NULL)
		o = &tmp;
	memset(o, 0, sizeof(*o));
	o->role = s->role;
	o->epoch = s->epoch;
	o->lsn = s->lsn;
	o->durable_lsn = s->durable_lsn;
	o->now = s->now;
	o->leader = arena_str(&l->bytes, s->leader);
	fill_counts(l, &s->totals, &o->totals);
	fill_kvs(l, s->more, &o->nkv, &o->kv);
	for (uint32_t i = 0; msg_next_tube_stats(&it, &ts); i++)
		fill_counts(l, &ts, tubes ? &tubes[i] : NULL);
	o->ntubes = s->ntubes;
	o->tubes = tubes;
}

int
result_stats(const struct msg_stats *s, struct sluice_stats **out)
{
	struct stats_layout l = { { 0 }, { 0 } };
	char *block;

	build_stats(&l, s);
	if ((block = malloc(l.structs.used + l.bytes.used)) == NULL)
		return SLUICE_ENOMEM;
	l.bytes.base = block + l.structs.used;
	l.structs.base = block;
	l.structs.used = 0;
	l.bytes.used = 0;
	build_stats(&l, s);
	*out = (struct sluice_stats *)block;
	return 0;
}

/* ---- errors ------------------------------------------------------------ */

static void
build_errors(struct arena *a, const struct msg_errors *e)
{
	struct sluice_error_count *v = arena_take(a, e->n * sizeof(*v));
	struct msg_iter it = e->it;
	struct msg_error_count ec;

	for (uint32_t i = 0; msg_next_error_count(&it, &ec); i++) {
		const char *text = arena_str(a, ec.text);

		if (v != NULL) {
			v[i].text = text;
			v[i].count = ec.count;
			v[i].nids = ec.nids;
			memcpy(v[i].ids, ec.ids, ec.nids * sizeof(v[i].ids[0]));
		}
	}
}

int
result_errors(
    const struct msg_errors *e, struct sluice_error_count **out, size_t *n)
{
	struct arena a = { 0 };

	if (e->n == 0) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	build_errors(&a, e);
	if ((a.base = malloc(a.used)) == NULL)
		return SLUICE_ENOMEM;
	a.used = 0;
	build_errors(&a, e);
	*out = (struct sluice_error_count *)a.base;
	*n = e->n;
	return 0;
}

/* ---- groups ------------------------------------------------------------ */

static void
build_groups(struct arena *a, const struct msg_groups *g)
{
	struct sluice_group *v = arena_take(a, g->n * sizeof(*v));
	struct msg_iter it = g->it;
	struct msg_group_row row;

	for (uint32_t i = 0; msg_next_group_row(&it, &row); i++) {
		const char *tube = arena_str(a, row.tube);
		const char *group = arena_opt_str(a, row.group);

		if (v != NULL)
			v[i] = (struct sluice_group) { tube, group, row.ready,
				row.taken, row.oldest_ready_age };
	}
}

int
result_groups(const struct msg_groups *g, struct sluice_group **out, size_t *n)
{
	struct arena a = { 0 };

	if (g->n == 0) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	build_groups(&a, g);
	if ((a.base = malloc(a.used)) == NULL)
		return SLUICE_ENOMEM;
	a.used = 0;
	build_groups(&a, g);
	*out = (struct sluice_group *)a.base;
	*n = g->n;
	return 0;
}

/* ---- history ----------------------------------------------------------- */

int
result_history(const struct msg_history *h, struct sluice_history **out)
{
	struct sluice_history *o = malloc(
	    sizeof(*o) + (size_t)SLUICE_H_KINDS * h->n * sizeof(uint32_t));
	uint32_t *v;

	if (o == NULL)
		return SLUICE_ENOMEM;
	o->start = h->start;
	o->step_ms = h->step;
	o->n = h->n;
	o->depth = h->kinds > MSG_HK_BURIED;
	v = (uint32_t *)(o + 1);
	for (unsigned k = 0; k < SLUICE_H_KINDS; k++) {
		o->count[k] = v + (size_t)k * h->n;
		for (uint32_t i = 0; i < h->n; i++)
			o->count[k][i] = msg_history_at(h, k, i);
	}
	*out = o;
	return 0;
}

/* ---- cluster ----------------------------------------------------------- */

static void
fill_member(
    struct arena *a, const struct msg_member *m, struct sluice_member *o)
{
	const char *name = arena_str(a, m->name);
	const char *client = arena_str(a, m->client);
	const char *repl = arena_str(a, m->repl);

	if (o == NULL)
		return;
	memset(o, 0, sizeof(*o));
	o->name = name;
	o->client_url = client;
	o->repl_url = repl;
	o->role = m->role;
	o->sync = (m->flags & MSG_MEMBER_SYNC) != 0;
	o->lease = (m->flags & MSG_MEMBER_LEASE) != 0;
	o->epoch = m->epoch;
	o->durable_lsn = m->durable_lsn;
	o->lag_records = m->lag_records;
	o->lease_until = m->lease_until;
	o->age_ms = m->age_ms;
}

/* The structs first (the cluster, then its members), then the strings. */
static void
build_cluster(struct arena *a, const struct msg_cluster *m)
{
	struct sluice_cluster *o = arena_take(a, sizeof(*o));
	struct sluice_member *v = arena_take(a, m->n * sizeof(*v));
	struct msg_iter it = m->it;
	struct msg_member mb;
	struct sluice_cluster tmp;

	if (o == NULL)
		o = &tmp;
	memset(o, 0, sizeof(*o));
	o->cluster = arena_str(a, m->cluster);
	o->node = arena_str(a, m->node);
	o->leader = arena_str(a, m->leader);
	o->etcd_error = arena_str(a, m->etcd_error);
	o->ttl_ms = m->ttl_ms;
	for (uint32_t i = 0; msg_next_member(&it, &mb); i++)
		fill_member(a, &mb, v ? &v[i] : NULL);
	o->n = m->n;
	o->members = m->n ? v : NULL;
}

int
result_cluster(const struct msg_cluster *m, struct sluice_cluster **out)
{
	struct arena a = { 0 };

	build_cluster(&a, m);
	if ((a.base = malloc(a.used)) == NULL)
		return SLUICE_ENOMEM;
	a.used = 0;
	build_cluster(&a, m);
	*out = (struct sluice_cluster *)a.base;
	return 0;
}

/* Read by the client's callers and by the server's /metrics alike (the
 * HTTP face links this file, not the client). */
int
sluice_kv_get(
    const struct sluice_kv *kv, size_t n, const char *name, uint64_t *value)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(kv[i].name, name) == 0) {
			if (value != NULL)
				*value = kv[i].value;
			return 0;
		}
	}
	return SLUICE_ENOTFOUND;
}

/* ---- schedules ------------------------------------------------------- */

static void
fill_sched(struct arena *a, const struct msg_sched *m, bool payload,
    struct sluice_schedule *o)
{
	static const char *const modes[] = { "none", "one", "all" };
	const char *name = arena_str(a, m->name);
	const char *tube = arena_str(a, m->tube);
	const char *cron = arena_str(a, m->cron);
	const char *tz = arena_str(a, m->tz.len ? m->tz : msg_cstr("UTC"));
	const char *p = payload ? arena_str(a, m->payload) : NULL;

	if (o == NULL)
		return;
	memset(o, 0, sizeof(*o));
	o->name = name;
	o->tube = tube;
	o->cron = cron;
	o->tz = tz;
	o->catch_up = m->catch_up <= MSG_CATCH_ALL ? modes[m->catch_up] : "?";
	o->paused = m->paused;
	o->priority = m->priority;
	o->ttr_ms = m->ttr;
	o->max_attempts = m->max_attempts;
	o->created_at = m->created_at;
	o->updated_at = m->updated_at;
	o->next_at = m->next_at;
	o->last_slot = m->last_slot;
	o->last_id = m->last_id;
	o->fired = m->fired;
	o->skipped = m->skipped;
	o->size = m->size;
	o->payload = p;
	o->payload_len = payload ? m->payload.len : 0;
}

static void
build_scheds(struct arena *a, const struct msg_scheds *l, bool payload)
{
	struct sluice_schedule *v = arena_take(a, l->n * sizeof(*v));
	struct msg_iter it = l->it;
	struct msg_sched m;

	for (uint32_t i = 0; msg_next_sched(&it, &m); i++)
		fill_sched(a, &m, payload, v ? &v[i] : NULL);
}

int
result_scheds(const struct msg_scheds *l, bool payload,
    struct sluice_schedule **out, size_t *n)
{
	struct arena a = { 0 };

	if (l->n == 0) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	build_scheds(&a, l, payload);
	if ((a.base = malloc(a.used)) == NULL)
		return SLUICE_ENOMEM;
	a.used = 0;
	build_scheds(&a, l, payload);
	*out = (struct sluice_schedule *)a.base;
	*n = l->n;
	return 0;
}
