/* dump - the canonical text form of the whole state, for replay tests and
 * `sluice-log state`. Everything is sorted (tubes by name, tasks by id,
 * dedup entries by key) and described as of the queue's clock, so the
 * bytes depend only on the state and not on how it was built: by the
 * live server, by replay, or from a snapshot. Dedup entries that expired
 * but were not yet reclaimed are left out, as are the sizes of tables and
 * heaps. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/hourly.h"
#include "queue/qstate.h"
#include "queue/throttle.h"
#include "sluice.h"

static void
out_hex(struct buf *out, const void *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *s = p;
	uint8_t *d = buf_extend(out, 2 * n);

	if (d == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		d[2 * i] = (uint8_t)digits[s[i] >> 4];
		d[2 * i + 1] = (uint8_t)digits[s[i] & 15];
	}
}

static void
out_counters(struct buf *out, const struct queue_counters *c)
{
	buf_printf(out,
	    " put=%" PRIu64 " take=%" PRIu64 " ack=%" PRIu64 " release=%" PRIu64
	    " fail=%" PRIu64 " bury=%" PRIu64 " kick=%" PRIu64
	    " delete=%" PRIu64 " ttr_expired=%" PRIu64
	    " session_released=%" PRIu64 " replace=%" PRIu64,
	    c->put, c->take, c->ack, c->release, c->fail, c->bury, c->kick,
	    c->del, c->ttr_expired, c->session_released, c->replace);
}

static int
cmp_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen;
}

static int
tube_cmp(const void *a, const void *b)
{
	const struct tube *x = *(struct tube *const *)a;
	const struct tube *y = *(struct tube *const *)b;

	return cmp_bytes(x->name, x->name_len, y->name, y->name_len);
}

static int
task_cmp(const void *a, const void *b)
{
	const struct task *x = *(struct task *const *)a;
	const struct task *y = *(struct task *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int
key_cmp(const void *a, const void *b)
{
	const struct keyent *x = *(struct keyent *const *)a;
	const struct keyent *y = *(struct keyent *const *)b;

	int c =
	    cmp_bytes(keyent_tube(x), x->tube_len, keyent_tube(y), y->tube_len);

	return c != 0 ? c : cmp_bytes(x->key, x->len, y->key, y->len);
}

/* A done task's key shows while its reservation lasts (one that expired
 * but was not yet reclaimed is left out, as its dedup entry is). */
static bool
key_shown(const struct queue *q, const struct task *t)
{
	const struct keyent *ke = t->ext ? t->ext->key : NULL;

	return ke != NULL && (ke->task != NULL || ke->expires > q->clock);
}

static void
dump_task(struct buf *out, const struct queue *q, const struct task *t)
{
	const struct task_ext *e = t->ext;

	buf_printf(out, "task %" PRIu64 " tube=%s state=%s", t->id,
	    qs_tube_of(q, t)->name, queue_state_name(t->state));
	buf_printf(out,
	    " pri=%" PRIu32 " ttr=%" PRIu32 " attempts=%" PRIu32
	    " max_attempts=%" PRIu32 " run_at=%" PRId64 " period=%" PRId64
	    " created_at=%" PRId64 " updated_at=%" PRId64,
	    t->pri, t->ttr, t->attempts, t->max_attempts, t->run_at,
	    e ? e->period : 0, t->created_at, t->updated_at);
	if (group_slot(t) != 0) {
		const struct group *g = groups_of(qs_tube_of(q, t), t);

		buf_printf(out, " group=%.*s", (int)g->name_len, g->name);
	}
	if (key_shown(q, t)) {
		buf_printf(out, " key=");
		buf_put_escaped(out, e->key->key, e->key->len);
		if (e->key->version != 0)
			buf_printf(out, " version=%" PRIu64, e->key->version);
	} else if (e != NULL && e->key != NULL && e->key->held) {
		/* its reservation ended; the version stays with the task */
		buf_printf(out, " held_key=");
		buf_put_escaped(out, e->key->key, e->key->len);
		buf_printf(out, " version=%" PRIu64, e->key->version);
	}
	if (e != NULL && e->error != NULL) {
		buf_printf(out, " error=");
		buf_put_escaped(out, e->error, e->error_len);
	}
	if (e != NULL && e->taken)
		buf_printf(out,
		    " lease=%" PRIu64 " session=%" PRIu64 " taken_at=%" PRId64
		    " deadline=%" PRId64 " detached=%d",
		    e->lease, e->session, e->taken_at, e->deadline,
		    e->detached ? 1 : 0);
	if (t->state == QUEUE_DONE) {
		buf_printf(out, " taken_at=%" PRId64 " result=", e->taken_at);
		buf_put_escaped(out, e->result, e->result_len);
	} else if (e != NULL && !e->taken && e->taken_at != 0) {
		buf_printf(out, " taken_at=%" PRId64, e->taken_at);
	}
	buf_printf(out, " payload=");
	out_hex(out, t->payload, t->payload_len);
	buf_put_u8(out, '\n');
	if (e != NULL && e->repl != NULL) {
		const struct repl *r = e->repl;

		buf_printf(out,
		    "  replace pri=%" PRIu32 " ttr=%" PRIu32
		    " max_attempts=%" PRIu32 " run_at=%" PRId64
		    " period=%" PRId64 " payload=",
		    r->pri, r->ttr, r->max_attempts, r->run_at, r->period);
		out_hex(out, r->payload, r->payload_len);
		if (r->version != 0)
			buf_printf(out, " version=%" PRIu64, r->version);
		buf_put_u8(out, '\n');
	}
}

int
queue_dump(const struct queue *q, struct buf *out)
{
	struct tube **tubes = NULL;
	struct task **tasks = NULL;
	struct keyent **keys = NULL;
	size_t nt = 0, nk = 0;
	int rc = SLUICE_ENOMEM;

	tubes = malloc((q->ntubes + 1) * sizeof(*tubes));
	tasks = malloc((q->ids.len + 1) * sizeof(*tasks));
	keys = malloc((q->ndedup + 1) * sizeof(*keys));
	if (tubes == NULL || tasks == NULL || keys == NULL)
		goto done;
	if (q->ntubes > 0) /* q->tubes is NULL until the first tube */
		memcpy(tubes, q->tubes, q->ntubes * sizeof(*tubes));
	qsort(tubes, q->ntubes, sizeof(*tubes), tube_cmp);
	for (uint64_t i = 0; i < tidx_slots(&q->ids); i++)
		if (tidx_at(&q->ids, i) != NULL)
			tasks[nt++] = tidx_at(&q->ids, i);
	qsort(tasks, nt, sizeof(*tasks), task_cmp);
	for (const struct keyent *ke = q->dedup_head; ke; ke = ke->next)
		if (ke->expires > q->clock)
			keys[nk++] = (struct keyent *)ke;
	qsort(keys, nk, sizeof(*keys), key_cmp);

	buf_printf(out,
	    "queue lsn=%" PRIu64 " next_id=%" PRIu64 " clock=%" PRId64
	    " tasks=%" PRIu64 " tubes=%" PRIu32 " keys=%" PRIu64 " dedup=%zu\n",
	    q->lsn, q->next_id, q->clock, q->ntasks, q->ntubes, q->nkeys, nk);
	buf_printf(out,
	    "totals ready=%" PRIu64 " delayed=%" PRIu64 " taken=%" PRIu64
	    " buried=%" PRIu64 " done=%" PRIu64 " waiting=%" PRIu64,
	    q->count[QUEUE_READY], q->count[QUEUE_DELAYED],
	    q->count[QUEUE_TAKEN], q->count[QUEUE_BURIED], q->count[QUEUE_DONE],
	    q->count[QUEUE_WAITING]);
	out_counters(out, &q->ctr);
	buf_put_u8(out, '\n');
	for (uint32_t i = 0; i < q->ntubes; i++) {
		const struct tube *tb = tubes[i];

		buf_printf(out,
		    "tube %s paused_until=%" PRId64 " ready=%" PRIu32
		    " delayed=%" PRIu32 " taken=%" PRIu64 " buried=%" PRIu32
		    " done=%" PRIu32,
		    tb->name, tb->paused_until, tube_nready(tb),
		    tb->delayed.len, tb->ntaken, tb->buried.len, tb->done.len);
		out_counters(out, &tb->ctr);
		if (tb->conf != NULL) {
			buf_printf(out, " settings:");
			qrec_tube_conf_format(&tb->conf->v, out);
		}
		if (tb->flow !=
		    NULL) { /* the limits; the bucket is not state */
			buf_printf(out, " limits:");
			qrec_limits_format(&tb->flow->lim, out);
		}
		if ((rc = glimit_dump(tb, out)) != 0)
			goto done;
		buf_put_u8(out, '\n');
		hourly_dump(q, tb, out);
	}
	for (size_t i = 0; i < nt; i++)
		dump_task(out, q, tasks[i]);
	for (size_t i = 0; i < nk; i++) {
		buf_printf(out, "dedup ");
		buf_put_escaped(out, keys[i]->key, keys[i]->len);
		buf_printf(out, " tube=%.*s id=%" PRIu64 " expires=%" PRId64,
		    keys[i]->tube_len > 0 ? (int)keys[i]->tube_len : 1,
		    keys[i]->tube_len > 0 ? keyent_tube(keys[i]) : "*",
		    keys[i]->id, keys[i]->expires);
		if (keys[i]->version != 0)
			buf_printf(out, " version=%" PRIu64, keys[i]->version);
		buf_put_u8(out, '\n');
	}
	if ((rc = qs_throttle_dump(q, out)) != 0 ||
	    (rc = qs_outcome_dump(q, out)) != 0 ||
	    (rc = deps_dump(q, out)) != 0)
		goto done;
	qs_sched_dump(q, out);
	batch_dump(q, out);
	move_dump(q, out);
	rc = buf_failed(out) ? SLUICE_ENOMEM : 0;
done:
	free(tubes);
	free(tasks);
	free(keys);
	return rc;
}
