/* sluice_log_dump - `dump`: every record of the log in order, one aligned
 * line each or one JSON object each, filtered by LSN, type and tube.
 *
 * A record names its tube only when it is a PUT, FLUSH or PAUSE (and an
 * ACK that moves a task names the tube it moves to); every other record
 * names a task id. So the tube of each id is learnt as the log is read:
 * from PUT records, from an ACK that moves the task, and, for tasks put
 * before the oldest segment present, from the newest usable snapshot. A
 * record whose task appears in neither shows tube null ("?").
 *
 * Damage does not stop a dump: it goes on with the records after each bad
 * stretch (named on stderr as it is met), and exits 1 at the end. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "queue/deps.h"
#include "sluice.h"
#include "sluice_log.h"

enum { FLUSH_AT = 64 << 10, MAX_TYPES = 16 };

/* ---- id -> tube ------------------------------------------------------- */

/* Tube names, each stored once; a task's tube is an index into them. */
struct names {
	char **name;
	size_t n, cap;
	uint32_t *slot; /* open addressing: index + 1, 0 empty */
	size_t nslot;
};

/* Task id -> tube index + 1 (0: unknown), open addressing. */
struct idmap {
	uint64_t *key;
	uint32_t *val;
	size_t n, cap; /* cap a power of two */
};

static uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 1099511628211ULL;
	return h;
}

static uint64_t
hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static int names_grow(struct names *t);

/* The index + 1 of `name`, added when new; 0 when out of memory. */
static uint32_t
names_get(struct names *t, const char *p, size_t n)
{
	size_t mask, at;
	char *copy;

	if (t->n * 2 >= t->nslot && names_grow(t) != 0)
		return 0;
	mask = t->nslot - 1;
	for (at = hash_bytes(p, n) & mask;; at = (at + 1) & mask) {
		uint32_t s = t->slot[at];

		if (s == 0)
			break;
		if (strlen(t->name[s - 1]) == n &&
		    memcmp(t->name[s - 1], p, n) == 0)
			return s;
	}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 16;
		char **nn = realloc(t->name, ncap * sizeof(*nn));

		if (nn == NULL)
			return 0;
		t->name = nn;
		t->cap = ncap;
	}
	copy = strndup(p, n);
	if (copy == NULL)
		return 0;
	t->name[t->n++] = copy;
	t->slot[at] = (uint32_t)t->n;
	return (uint32_t)t->n;
}

static int
names_grow(struct names *t)
{
	size_t nslot = t->nslot ? t->nslot * 2 : 64;
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (slot == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t at =
		    hash_bytes(t->name[i], strlen(t->name[i])) & (nslot - 1);

		while (slot[at] != 0)
			at = (at + 1) & (nslot - 1);
		slot[at] = (uint32_t)i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

static void
names_free(struct names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->name[i]);
	free(t->name);
	free(t->slot);
}

static int
idmap_grow(struct idmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	uint64_t *key = calloc(cap, sizeof(*key));
	uint32_t *val = calloc(cap, sizeof(*val));

	if (key == NULL || val == NULL) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t at;

		if (m->key[i] == 0)
			continue;
		for (at = hash_u64(m->key[i]) & (cap - 1); key[at] != 0;
		     at = (at + 1) & (cap - 1))
			;
		key[at] = m->key[i];
		val[at] = m->val[i];
	}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->cap = cap;
	return 0;
}

/* Finds the slot of `id` (its key is 0 when absent), growing the table
 * first. False when out of memory. */
static bool
idmap_find(struct idmap *m, uint64_t id, size_t *at)
{
	if ((m->n + 1) * 2 > m->cap && idmap_grow(m) != 0)
		return false;
	for (*at = hash_u64(id) & (m->cap - 1);
	     m->key[*at] != 0 && m->key[*at] != id;
	     *at = (*at + 1) & (m->cap - 1))
		;
	return true;
}

static void
idmap_set(struct idmap *m, uint64_t id, uint32_t tube)
{
	size_t at;

	if (id == 0 || tube == 0 || !idmap_find(m, id, &at))
		return;
	if (m->key[at] == 0) {
		m->key[at] = id;
		m->n++;
	}
	m->val[at] = tube;
}

static uint32_t
idmap_get(struct idmap *m, uint64_t id)
{
	size_t at;

	if (m->cap == 0 || id == 0)
		return 0;
	for (at = hash_u64(id) & (m->cap - 1); m->key[at] != 0;
	     at = (at + 1) & (m->cap - 1))
		if (m->key[at] == id)
			return m->val[at];
	return 0;
}

/* ---- the dump --------------------------------------------------------- */

struct dump {
	uint64_t from, to;
	uint16_t types[MAX_TYPES];
	size_t ntypes;
	const char *tube; /* NULL: every tube */
	uint32_t tube_ix; /* its index + 1 once seen */
	bool json;
	struct names names;
	struct idmap ids;
	struct queue *snapq; /* the snapshot's tasks, loaded when needed */
	bool snap_tried;
	struct buf out, line;
	uint64_t shown;
	int err; /* a write error */
};

/* The tube (index + 1) of a task not seen in the log so far: the
 * snapshot's. */
static uint32_t
tube_from_snapshot(struct dump *dm, const struct lt_dir *d, uint64_t id)
{
	struct queue_task_view v;

	if (!dm->snap_tried) {
		dm->snap_tried = true;
		if (d->snap_used >= 0 &&
		    (dm->snapq = queue_new(NULL)) != NULL &&
		    lt_snap_load(d, (size_t)d->snap_used, dm->snapq) != 0) {
			queue_free(dm->snapq);
			dm->snapq = NULL;
		}
	}
	if (dm->snapq == NULL || queue_peek(dm->snapq, 0, id, &v) != 0)
		return 0;
	return names_get(&dm->names, v.tube, v.tube_len);
}

static bool
type_wanted(const struct dump *dm, uint16_t type)
{
	if (dm->ntypes == 0)
		return true;
	for (size_t i = 0; i < dm->ntypes; i++)
		if (dm->types[i] == type)
			return true;
	return false;
}

static const char *const reasons[] = { "client", "ttr", "session", "restart" };
static const char *const outcomes[] = { "deleted", "wait", "buried", "moved",
	"replaced", "done" };
static const char *const where_states[] = { "?", "ready", "delayed", "?",
	"buried", "done" };

static void
json_fields(struct buf *b, const struct rec_view *v, const struct qrec *r)
{
	const struct qrec_end *e = &r->u.end;

	switch (r->type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_G:
	case QREC_PUT_T:
	case QREC_PUT_X: {
		const struct qrec_put *p = &r->u.put;

		buf_printf(b,
		    ",\"pri\":%" PRIu32 ",\"run_at\":%" PRId64
		    ",\"ttr\":%" PRIu32 ",\"max_attempts\":%" PRIu32
		    ",\"period\":%" PRId64 ",",
		    p->pri, p->run_at, p->ttr, p->max_attempts, p->period);
		if (p->key_len > 0)
			lt_json_bytes(b, "key", p->key, p->key_len);
		else
			buf_printf(b, "\"key\":null");
		if (p->version != 0)
			buf_printf(b, ",\"version\":%" PRIu64, p->version);
		if (p->throttle_until != 0)
			buf_printf(b, ",\"throttle_until\":%" PRId64,
			    p->throttle_until);
		if (p->group_len > 0) {
			buf_printf(b, ",");
			lt_json_bytes(b, "group", p->group, p->group_len);
		}
		for (uint32_t i = 0; i < p->nafter; i++)
			buf_printf(b, "%s%" PRIu64, i ? "," : ",\"after\":[",
			    deps_after_id(p, i));
		if (p->nafter > 0)
			buf_printf(b, "],\"on_parent_failure\":%u",
			    (unsigned)p->on_parent);
		buf_printf(b, ",\"payload_len\":%zu,", p->payload_len);
		lt_json_bytes(b, "payload", p->payload, p->payload_len);
		break;
	}
	case QREC_PUTS: {
		struct qrec_puts_it it;
		struct qrec_put p;

		buf_printf(b, ",\"n\":%" PRIu32 ",\"items\":[", r->u.puts.n);
		qrec_puts_begin(&r->u.puts, &it);
		while (qrec_puts_next(&it, &p)) {
			buf_printf(b,
			    "%s{\"id\":%" PRIu64 ",\"pri\":%" PRIu32
			    ",\"run_at\":%" PRId64 ",\"ttr\":%" PRIu32
			    ",\"max_attempts\":%" PRIu32 ",\"period\":%" PRId64
			    ",",
			    it.i > 1 ? "," : "", p.id, p.pri, p.run_at, p.ttr,
			    p.max_attempts, p.period);
			if (p.key_len > 0)
				lt_json_bytes(b, "key", p.key, p.key_len);
			else
				buf_printf(b, "\"key\":null");
			buf_printf(b, ",\"payload_len\":%zu,", p.payload_len);
			lt_json_bytes(b, "payload", p.payload, p.payload_len);
			buf_printf(b, "}");
		}
		buf_printf(b, "]");
		break;
	}
	case QREC_TAKE:
	case QREC_TAKE_LEASE:
		buf_printf(b,
		    ",\"lease\":%" PRIu64 ",\"session\":%" PRIu64
		    ",\"detached\":%s",
		    r->u.take.lease != 0 ? r->u.take.lease : v->hdr.lsn,
		    r->u.take.session, r->u.take.detached ? "true" : "false");
		break;
	case QREC_ACK:
	case QREC_ACK_R:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_UNTAKE:
	case QREC_SETBACK:
		buf_printf(b, ",\"lease\":%" PRIu64 ",\"by\":\"%s\"", e->lease,
		    e->reason < 4 ? reasons[e->reason] : "?");
		buf_printf(b, ",\"outcome\":\"%s\"",
		    e->outcome < 6 ? outcomes[e->outcome] : "?");
		if (e->outcome == QREC_WAIT && r->type != QREC_UNTAKE)
			buf_printf(b, ",\"run_at\":%" PRId64, e->run_at);
		if (e->outcome == QREC_WAIT &&
		    (r->type == QREC_RELEASE || r->type == QREC_SETBACK))
			buf_printf(b, ",\"pri\":%" PRIu32, e->pri);
		if ((r->type == QREC_ACK || r->type == QREC_ACK_R) &&
		    (e->outcome == QREC_DELETED || e->outcome == QREC_DONE))
			buf_printf(b, ",\"dedup_ms\":%" PRIu32, e->dedup_ms);
		if (e->outcome == QREC_DONE) {
			buf_printf(b,
			    ",\"keep_ms\":%" PRId64 ",\"max_done\":%" PRIu64
			    ",",
			    e->keep_ms, e->max_done);
			lt_json_bytes(b, "result", e->text, e->text_len);
		}
		if ((r->type == QREC_ACK || r->type == QREC_ACK_R) &&
		    e->outcome == QREC_MOVED) {
			buf_printf(b, ",\"to_tube\":");
			lt_json_str(b, e->text, e->text_len);
		}
		if (r->type != QREC_ACK && r->type != QREC_ACK_R &&
		    e->outcome == QREC_MOVED) {
			buf_printf(b, ",\"to_tube\":");
			lt_json_str(b, e->to, e->to_len);
		}
		if (r->type == QREC_FAIL || r->type == QREC_SETBACK) {
			buf_printf(b, ",");
			lt_json_bytes(b, "error", e->text, e->text_len);
		}
		if (r->type == QREC_ACK_R) {
			buf_printf(b, ",");
			lt_json_bytes(b, "result", e->result, e->result_len);
		}
		break;
	case QREC_TOUCH:
		buf_printf(b, ",\"lease\":%" PRIu64, r->u.touch.lease);
		break;
	case QREC_CANCEL:
		buf_printf(b, ",\"lease\":%" PRIu64, r->u.cancel.lease);
		break;
	case QREC_DELETE:
		buf_printf(b, ",\"dedup_ms\":%" PRIu32, r->u.del.dedup_ms);
		break;
	case QREC_FLUSH:
		buf_printf(b, ",\"dedup_ms\":%" PRIu32, r->u.flush.dedup_ms);
		break;
	case QREC_REPLACE:
	case QREC_REPLACE_V: {
		const struct qrec_replace *p = &r->u.replace;

		buf_printf(b,
		    ",\"pending\":%s,\"pri\":%" PRIu32 ",\"run_at\":%" PRId64
		    ",\"ttr\":%" PRIu32 ",\"max_attempts\":%" PRIu32
		    ",\"period\":%" PRId64 ",\"payload_len\":%zu,",
		    p->pending ? "true" : "false", p->pri, p->run_at, p->ttr,
		    p->max_attempts, p->period, p->payload_len);
		lt_json_bytes(b, "payload", p->payload, p->payload_len);
		if (p->version != 0)
			buf_printf(b, ",\"version\":%" PRIu64, p->version);
		break;
	}
	case QREC_PAUSE:
		buf_printf(b, ",\"until\":%" PRId64, r->u.pause.until);
		break;
	case QREC_UPDATE: {
		const struct qrec_update *u = &r->u.update;

		buf_printf(b,
		    ",\"pri\":%" PRIu32 ",\"run_at\":%" PRId64
		    ",\"ttr\":%" PRIu32 ",\"max_attempts\":%" PRIu32,
		    u->pri, u->run_at, u->ttr, u->max_attempts);
		if (u->has_payload) {
			buf_printf(b, ",\"payload_len\":%zu,", u->payload_len);
			lt_json_bytes(b, "payload", u->payload, u->payload_len);
		}
		break;
	}
	case QREC_DELETE_WHERE:
		buf_printf(b, ",\"state\":\"%s\",\"before\":%" PRId64,
		    r->u.where.state < 6 ? where_states[r->u.where.state] : "?",
		    r->u.where.before);
		break;
	case QREC_DELETE_AGED: {
		const char *sep = "";

		buf_printf(b, ",\"states\":[");
		for (int st = 1; st < 6; st++)
			if (r->u.where.states & QREC_STATE_BIT(st)) {
				buf_printf(b, "%s\"%s\"", sep,
				    st == 3 ? "taken" : where_states[st]);
				sep = ",";
			}
		buf_printf(b, "],\"by\":\"%s\",\"before\":%" PRId64,
		    r->u.where.by == QREC_BY_UPDATED ? "updated" : "created",
		    r->u.where.before);
		break;
	}
	case QREC_TUBE_SET:
		lt_json_tube_conf(b, &r->u.tube_set.conf);
		break;
	case QREC_TUBE_DELETE:
		buf_printf(b, ",\"force\":%s",
		    r->u.tube_delete.force ? "true" : "false");
		break;
	case QREC_TUBE_LIMIT: {
		const struct qrec_limits *l = &r->u.tube_limit.lim;

		buf_printf(b,
		    ",\"rate\":%" PRIu32 ",\"per_ms\":%" PRIu32
		    ",\"burst\":%" PRIu32 ",\"concurrency\":%" PRIu32,
		    l->rate, l->per_ms, l->burst, l->concurrency);
		break;
	}
	case QREC_GROUP_SET: {
		const struct qrec_limits *l = &r->u.group_set.lim;

		buf_printf(b, ",\"group\":\"%.*s\"",
		    (int)r->u.group_set.group_len, r->u.group_set.group);
		buf_printf(b,
		    ",\"rate\":%" PRIu32 ",\"per_ms\":%" PRIu32
		    ",\"burst\":%" PRIu32 ",\"concurrency\":%" PRIu32
		    ",\"paused\":%s",
		    l->rate, l->per_ms, l->burst, l->concurrency,
		    r->u.group_set.paused ? "true" : "false");
		break;
	}
	case QREC_MOVE_KEY: {
		const struct qrec_move *m = &r->u.move;

		buf_printf(b, ",\"source\":\"%.*s\",\"src_id\":%" PRIu64,
		    (int)m->source_len, m->source, m->src_id);
		lt_json_bytes(b, "key", m->key, m->key_len);
		buf_printf(b,
		    ",\"folded\":%s,\"expires\":%" PRId64
		    ",\"version\":%" PRIu64,
		    m->fold == 1 ? "true" : "false", m->expires, m->version);
		if (m->fold == 2)
			buf_printf(b, ",\"placeholder\":true");
		break;
	}
	case QREC_MOVE_PLACE: {
		const struct qrec_move *m = &r->u.move;

		buf_printf(b, ",\"source\":\"%.*s\",\"src_id\":%" PRIu64,
		    (int)m->source_len, m->source, m->src_id);
		lt_json_bytes(b, "key", m->key, m->key_len);
		buf_printf(b, ",\"folded\":%s", m->fold ? "true" : "false");
		break;
	}
	case QREC_MOVE_PEND:
		buf_printf(b, ",\"source\":\"%.*s\",\"keys\":\"%s\"",
		    (int)r->u.move.source_len, r->u.move.source,
		    r->u.move.state ? "pending" : "here");
		break;
	}
}

/* The tube a record names itself, if any. */
static bool
own_tube(const struct qrec *r, const char **p, size_t *n)
{
	switch (r->type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_G:
	case QREC_PUT_T:
	case QREC_PUT_X:
		*p = r->u.put.tube;
		*n = r->u.put.tube_len;
		return true;
	case QREC_PUTS:
		*p = r->u.puts.tube;
		*n = r->u.puts.tube_len;
		return true;
	case QREC_FLUSH:
		*p = r->u.flush.tube;
		*n = r->u.flush.tube_len;
		return true;
	case QREC_PAUSE:
		*p = r->u.pause.tube;
		*n = r->u.pause.tube_len;
		return true;
	case QREC_DELETE_WHERE:
	case QREC_DELETE_AGED:
		*p = r->u.where.tube;
		*n = r->u.where.tube_len;
		return true;
	case QREC_TUBE_SET:
		*p = r->u.tube_set.tube;
		*n = r->u.tube_set.tube_len;
		return true;
	case QREC_TUBE_DELETE:
		*p = r->u.tube_delete.tube;
		*n = r->u.tube_delete.tube_len;
		return true;
	case QREC_TUBE_LIMIT:
		*p = r->u.tube_limit.tube;
		*n = r->u.tube_limit.tube_len;
		return true;
	case QREC_GROUP_SET:
		*p = r->u.group_set.tube;
		*n = r->u.group_set.tube_len;
		return true;
	case QREC_SCHED_SET:
		*p = r->u.sched.tube;
		*n = r->u.sched.tube_len;
		return true;
	case QREC_SCHED_FIRE:
		*p = r->u.sched.put.tube;
		*n = r->u.sched.put.tube_len;
		return r->u.sched.has_put;
	case QREC_MOVE_KEY:
	case QREC_MOVE_PLACE:
	case QREC_MOVE_PEND:
	case QREC_MOVE_KEEP:
		*p = r->u.move.tube;
		*n = r->u.move.tube_len;
		return true;
	}
	return false;
}

static int
dump_rec(void *arg, const struct lt_dir *d, size_t seg, uint64_t off,
    const struct rec_view *v)
{
	struct dump *dm = arg;
	struct buf *b = &dm->out;
	const char *tp = NULL;
	struct qrec r;
	uint32_t tube = 0, to = 0;
	uint64_t id = 0;
	bool queue = v->hdr.type <= QREC_TYPE_MAX, ok = false;
	char when[40];

	if (queue && qrec_decode(v->hdr.type, v->body, v->body_len, &r) == 0) {
		size_t tn;

		ok = true;
		id = lt_qrec_id(&r);
		if (own_tube(&r, &tp, &tn))
			tube = names_get(&dm->names, tp, tn);
		else if (id != 0 && (tube = idmap_get(&dm->ids, id)) == 0)
			tube = tube_from_snapshot(dm, d, id);
		if (r.type == QREC_PUT || r.type == QREC_PUT_V ||
		    r.type == QREC_PUT_G || r.type == QREC_PUT_T ||
		    r.type == QREC_PUT_X || (id != 0 && tube != 0))
			idmap_set(&dm->ids, id, tube);
		if (r.type == QREC_PUTS) { /* every item's id */
			struct qrec_puts_it it;
			struct qrec_put p;

			qrec_puts_begin(&r.u.puts, &it);
			while (qrec_puts_next(&it, &p))
				idmap_set(&dm->ids, p.id, tube);
		}
		if ((r.type == QREC_ACK || r.type == QREC_ACK_R) &&
		    r.u.end.outcome == QREC_MOVED) {
			to = names_get(
			    &dm->names, r.u.end.text, r.u.end.text_len);
			idmap_set(&dm->ids, id, to);
		} else if (r.u.end.outcome == QREC_MOVED &&
		    (r.type == QREC_FAIL || r.type == QREC_BURY)) {
			to = names_get(&dm->names, r.u.end.to, r.u.end.to_len);
			idmap_set(&dm->ids, id, to);
		}
	}
	if (dm->tube != NULL && dm->tube_ix == 0)
		dm->tube_ix = names_get(&dm->names, dm->tube, strlen(dm->tube));
	if (v->hdr.lsn < dm->from || (dm->to != 0 && v->hdr.lsn > dm->to) ||
	    !type_wanted(dm, v->hdr.type))
		return 0;
	if (dm->tube != NULL && tube != dm->tube_ix && to != dm->tube_ix)
		return 0;
	dm->shown++;
	lt_time(v->hdr.time, when, sizeof(when));
	if (dm->json) {
		buf_printf(b,
		    "{\"lsn\":%" PRIu64 ",\"epoch\":%" PRIu64
		    ",\"type\":\"%s\",\"type_num\":%u,\"time\":%" PRId64
		    ",\"time_utc\":\"%s\",\"segment\":\"%s\",\"offset\":"
		    "%" PRIu64 ",",
		    v->hdr.lsn, v->hdr.epoch,
		    lt_type_name(v->hdr.type) ? lt_type_name(v->hdr.type) : "?",
		    v->hdr.type, v->hdr.time, when, d->segs[seg].name, off);
		if (id != 0)
			buf_printf(b, "\"id\":%" PRIu64 ",", id);
		else
			buf_printf(b, "\"id\":null,");
		buf_printf(b, "\"tube\":");
		if (tube != 0)
			lt_json_str(b, dm->names.name[tube - 1],
			    strlen(dm->names.name[tube - 1]));
		else
			buf_printf(b, "null");
		if (ok) {
			json_fields(b, v, &r);
		} else if (v->hdr.type == REC_EPOCH &&
		    v->body_len == REC_EPOCH_BODY) {
			buf_printf(b,
			    ",\"new_epoch\":%" PRIu64
			    ",\"previous_epoch\":%" PRIu64
			    ",\"nonce\":%" PRIu64,
			    le_load_u64(v->body), le_load_u64(v->body + 8),
			    le_load_u64(v->body + 16));
		} else if (v->hdr.type == REC_PAD) {
			buf_printf(b, ",\"pad_bytes\":%zu", v->body_len);
		} else {
			buf_printf(b,
			    ",\"error\":\"%s\",\"body_len\":%zu,\"body_"
			    "base64\":"
			    "\"",
			    lt_type_unknown(v->hdr.type)
			        ? "a record type this sluice-log does not "
			          "know (a newer sluiced's)"
			        : queue ? "body does not decode"
			                : "not a record type sluice knows",
			    v->body_len);
			lt_base64(b, v->body, v->body_len);
			buf_printf(b, "\"");
		}
		buf_printf(b, "}\n");
	} else {
		const char *name = lt_type_name(v->hdr.type);

		buf_reset(&dm->line);
		if (ok) {
			const char *sp;

			qrec_format(&r, &dm->line);
			buf_put_u8(&dm->line, 0);
			sp = strchr((const char *)dm->line.data, ' ');
			tp = sp != NULL ? sp + 1 : "";
		} else if (v->hdr.type == REC_EPOCH &&
		    v->body_len == REC_EPOCH_BODY) {
			buf_printf(&dm->line,
			    "new=%" PRIu64 " previous=%" PRIu64
			    " nonce=%016" PRIx64 "%c",
			    le_load_u64(v->body), le_load_u64(v->body + 8),
			    le_load_u64(v->body + 16), 0);
			tp = (const char *)dm->line.data;
		} else if (v->hdr.type == REC_PAD) {
			buf_printf(&dm->line,
			    "%zu bytes of zeros: the batch ends on a block%c",
			    v->body_len, 0);
			tp = (const char *)dm->line.data;
		} else {
			buf_printf(&dm->line, "%zu-byte body %s%c", v->body_len,
			    lt_type_unknown(v->hdr.type)
			        ? "of a type this sluice-log does not know (a "
			          "newer sluiced's)"
			        : queue ? "that does not decode"
			                : "of a type sluice does not know",
			    0);
			tp = (const char *)dm->line.data;
		}
		buf_printf(b, "%10" PRIu64 "  e%-3" PRIu64 " %s  %-7s  ",
		    v->hdr.lsn, v->hdr.epoch, when, name ? name : "?");
		if (name == NULL)
			buf_printf(b, "(type %u) ", v->hdr.type);
		if (id != 0)
			buf_printf(b, "%-16s ",
			    tube != 0 ? dm->names.name[tube - 1] : "?");
		else
			buf_printf(b, "%-16s ", "-");
		buf_printf(b, "%s\n", tp != NULL ? tp : "");
	}
	if (b->len >= FLUSH_AT && !lt_flush(b, stdout)) {
		dm->err = -EPIPE;
		return -EPIPE;
	}
	return 0;
}

static int
dump_bad(
    void *arg, const struct lt_dir *d, size_t seg, const struct walk_bad *b)
{
	struct dump *dm = arg;

	if (!lt_flush(&dm->out, stdout)) {
		dm->err = -EPIPE;
		return -EPIPE;
	}
	fflush(stdout);
	if (walk_bad_is_torn(b) && seg + 1 == d->nsegs)
		fprintf(stderr,
		    "sluice-log: %s/%s offset %" PRIu64
		    ": torn tail of %" PRIu64 " bytes after LSN %" PRIu64
		    " (sluiced cuts it at start)\n",
		    d->path, d->segs[seg].name, b->off, b->end - b->off,
		    b->lsn_before);
	else
		fprintf(stderr,
		    "sluice-log: %s/%s offset %" PRIu64
		    ": damage after LSN %" PRIu64
		    "%s; the dump goes on after it\n",
		    d->path, d->segs[seg].name, b->off, b->lsn_before,
		    b->tail ? "" : " (valid records resume)");
	return 0;
}

static void
dump_usage(FILE *f)
{
	fputs("usage: sluice-log dump DIR [--from LSN] [--to LSN] "
	      "[--type T[,T...]] [--tube TUBE] [--json]\n"
	      "Types: PUT TAKE ACK RELEASE FAIL TOUCH BURY KICK DELETE FLUSH "
	      "REPLACE PAUSE DELETE_WHERE EPOCH.\n",
	    f);
}

static bool
parse_types(struct dump *dm, const char *s)
{
	char copy[256], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", s);
	for (char *t = strtok_r(copy, ",", &save); t != NULL;
	     t = strtok_r(NULL, ",", &save)) {
		uint16_t ty = lt_type_parse(t);

		if (ty == 0 || dm->ntypes == MAX_TYPES) {
			fprintf(stderr,
			    "sluice-log: --type: unknown type '%s'\n", t);
			dump_usage(stderr);
			return false;
		}
		dm->types[dm->ntypes++] = ty;
		/* both forms of a take are TAKE to the reader */
		if (ty == QREC_TAKE && dm->ntypes < MAX_TYPES)
			dm->types[dm->ntypes++] = QREC_TAKE_LEASE;
	}
	return dm->ntypes > 0;
}

int
lt_cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "type", required_argument, NULL, 'y' },
		{ "tube", required_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct lt_visit visit = { dump_rec, dump_bad };
	struct dump dm;
	struct lt_dir d;
	int c, rc;

	memset(&dm, 0, sizeof(dm));
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!lt_parse_u64("--from", optarg, &dm.from))
				return LT_EXIT_USAGE;
			break;
		case 't':
			if (!lt_parse_u64("--to", optarg, &dm.to))
				return LT_EXIT_USAGE;
			break;
		case 'y':
			if (!parse_types(&dm, optarg))
				return LT_EXIT_USAGE;
			break;
		case 'u':
			if (!qrec_tube_valid(optarg, strlen(optarg))) {
				fprintf(stderr,
				    "sluice-log: --tube: '%s' is not a tube "
				    "name (1-200 bytes of [A-Za-z0-9_.:/-])\n",
				    optarg);
				return LT_EXIT_USAGE;
			}
			dm.tube = optarg;
			break;
		case 'j':
			dm.json = true;
			break;
		case 'h':
			dump_usage(stdout);
			return LT_EXIT_OK;
		default:
			dump_usage(stderr);
			return LT_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		dump_usage(stderr);
		return LT_EXIT_USAGE;
	}
	if (dm.to != 0 && dm.to < dm.from) {
		fprintf(stderr,
		    "sluice-log: --to %" PRIu64 " is before --from %" PRIu64
		    "\n",
		    dm.to, dm.from);
		return LT_EXIT_USAGE;
	}
	buf_init(&dm.out);
	buf_init(&dm.line);
	/* Records scrolling past on the terminal are progress enough. */
	lt_progress_off = isatty(STDOUT_FILENO);
	rc = lt_open_checked(argv[optind], &d, &visit, &dm);
	if (rc == LT_EXIT_OK) {
		if (!lt_flush(&dm.out, stdout) || fflush(stdout) != 0)
			rc = LT_EXIT_IO;
		else if (lt_dir_count(&d, LT_DAMAGE) > 0)
			rc = LT_EXIT_DAMAGE;
		else if (lt_dir_count(&d, LT_IOERR) > 0)
			rc = LT_EXIT_IO;
		for (size_t i = 0; i < d.nprobs; i++)
			if (d.probs[i].kind == LT_IOERR ||
			    (d.probs[i].kind == LT_DAMAGE &&
			        !d.probs[i].has_off))
				fprintf(stderr, "sluice-log: %s: %s\n",
				    d.probs[i].file, d.probs[i].what);
		if (rc == LT_EXIT_DAMAGE)
			fprintf(stderr,
			    "sluice-log: the log is damaged; run `sluice-log "
			    "verify %s` for every problem\n",
			    d.path);
		lt_dir_free(&d);
	}
	queue_free(dm.snapq);
	names_free(&dm.names);
	free(dm.ids.key);
	free(dm.ids.val);
	buf_fini(&dm.out);
	buf_fini(&dm.line);
	return rc;
}
