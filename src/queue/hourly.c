/* hourly - completion statistics per tube and hour (hourly.h, queue.h).
 *
 * The window: the hours h with hc - QUEUE_HOURS < h <= hc, hc the hour of
 * the queue's clock. Records come in with a time <= the clock (apply
 * catches up first), so an event's hour is never after hc; one before the
 * window (a record far behind the clock) counts in the totals only. Slot
 * h % QUEUE_HOURS can hold an hour other than h only when that hour left
 * the window: it is then reset for h. Queries, the dump and the snapshot
 * look only at the window, so whether an old hour is freed yet (the prune
 * runs when the clock enters a new hour) never shows.
 *
 * Snapshot entries (fixed integers little-endian, str16 = u16 length +
 * bytes):
 *   HOURLY  str16 tube, u8 HOUR entries that follow, then the totals of
 *           work and of wait, each u64 count, u64 total_ms,
 *           QUEUE_TOTAL_BUCKETS x u64 - each tube with statistics, in
 *           creation order, after the DEDUP entries
 *   HOUR    i64 hour, u32 fails, u32 buries, u32 ttr_expired, then work
 *           and wait, each u32 count, u64 total_ms, u64 max_ms,
 *           QUEUE_HIST_BUCKETS x u32 - each hour of the window with an
 *           event, of the tube of the HOURLY entry before, oldest first
 * END then carries a u32 more: the number of HOURLY entries. A queue
 * without statistics writes neither entry nor that field, so its snapshot
 * is one that loaders older than these entries read too. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "queue/hourly.h"
#include "queue/qstate.h"
#include "sluice.h"

/* ---- Buckets ---------------------------------------------------------- */

int64_t
queue_hist_bound(int b)
{
	if (b <= 1)
		return b;
	return b % 2 == 0 ? INT64_C(1) << (b / 2) : INT64_C(3) << (b / 2 - 1);
}

int
queue_hist_bucket(int64_t ms)
{
	uint64_t e;
	int k, b;

	if (ms <= 1)
		return ms <= 0 ? 0 : 1;
	/* (2^k, 3 * 2^(k-1)] and (3 * 2^(k-1), 2^(k+1)]: ms - 1 has k as
	 * its top bit and the bit below says which half. */
	e = (uint64_t)ms - 1;
	k = 63 - __builtin_clzll(e);
	b = k == 0 ? 2 : 2 * k + 1 + (int)((e >> (k - 1)) & 1);
	return b < QUEUE_HIST_BUCKETS ? b : QUEUE_HIST_BUCKETS - 1;
}

int64_t
queue_total_bound(int c)
{
	return INT64_C(1) << (2 * c);
}

/* The total bucket of fine bucket b: the bounds 4^c are queue_hist_bound(4c)
 * (and 1 = queue_hist_bound(1)). */
static int
total_bucket(int b)
{
	return b <= 1 ? 0 : (b + 3) / 4;
}

/* ---- Events ----------------------------------------------------------- */

unsigned
hourly_kinds(uint16_t type, const struct qrec_end *e)
{
	unsigned k = 0;

	/* An undone take's wait stays counted, as the tube's take counter
	 * keeps it; the undo itself is nothing more. */
	if (type == QREC_UNTAKE)
		return 0;
	if (type == QREC_ACK)
		k |= HOURLY_ACK;
	if (type == QREC_FAIL)
		k |= HOURLY_FAIL;
	/* A move to the dead-letter tube (FAIL, BURY, SETBACK) stands for a
	 * bury; an ACK's move to the next tube is an ack. */
	if (e->outcome == QREC_BURIED ||
	    (e->outcome == QREC_MOVED && type != QREC_ACK))
		k |= HOURLY_BURY;
	/* A ttr expiry is a SETBACK with reason TTR (older logs: a RELEASE,
	 * or a BURY at max_attempts); one of SESSION is a lost session. */
	if (e->reason == QREC_BY_TTR &&
	    (type == QREC_SETBACK || type == QREC_RELEASE || type == QREC_BURY))
		k |= HOURLY_TTR;
	return k;
}

static int64_t
clock_hour(const struct queue *q)
{
	return q->clock / QUEUE_HOUR_MS;
}

static bool
in_window(const struct queue *q, int64_t hour)
{
	return hour >= 0 && hour <= clock_hour(q) &&
	    hour > clock_hour(q) - QUEUE_HOURS;
}

/* The slot of `hour` if it holds that hour (in the window), else NULL. */
static struct hourly_hour *
hour_at(const struct queue *q, const struct hourly *h, int64_t hour)
{
	struct hourly_hour *s;

	if (h == NULL || !in_window(q, hour))
		return NULL;
	s = h->slot[hour % QUEUE_HOURS];
	return s != NULL && s->hour == hour ? s : NULL;
}

int
hourly_reserve(struct queue *q, struct tube *tb, int64_t time)
{
	int64_t hour = time / QUEUE_HOUR_MS;
	struct hourly_hour **s;

	if (tb->hourly == NULL &&
	    (tb->hourly = calloc(1, sizeof(*tb->hourly))) == NULL)
		return SLUICE_ENOMEM;
	if (!in_window(q, hour))
		return 0; /* the totals only */
	s = &tb->hourly->slot[hour % QUEUE_HOURS];
	if (*s == NULL) {
		if ((*s = calloc(1, sizeof(**s))) == NULL)
			return SLUICE_ENOMEM;
		(*s)->hour = hour;
	} else if ((*s)->hour != hour) {
		memset(*s, 0, sizeof(**s)); /* an hour the window left */
		(*s)->hour = hour;
	}
	return 0;
}

static void
inc(uint32_t *n)
{
	if (*n < UINT32_MAX)
		(*n)++;
}

/* Adds a duration to an hour's distribution (s may be NULL: outside the
 * window) and to the totals. */
static void
add_duration(struct hourly_dist *d, struct queue_total *t, int64_t ms)
{
	int b;

	if (ms < 0)
		ms = 0; /* a record decided on a clock ahead of this one */
	b = queue_hist_bucket(ms);
	t->count++;
	t->total_ms += (uint64_t)ms;
	t->bucket[total_bucket(b)]++;
	if (d == NULL || d->count == UINT32_MAX)
		return;
	d->count++;
	d->bucket[b]++;
	d->total_ms += (uint64_t)ms;
	if ((uint64_t)ms > d->max_ms)
		d->max_ms = (uint64_t)ms;
}

void
hourly_take(struct queue *q, struct tube *tb, int64_t time, int64_t ready_at)
{
	struct hourly_hour *s = hour_at(q, tb->hourly, time / QUEUE_HOUR_MS);

	add_duration(s ? &s->wait : NULL, &tb->hourly->wait, time - ready_at);
}

void
hourly_end(struct queue *q, struct tube *tb, int64_t time, uint16_t type,
    const struct qrec_end *e, int64_t taken_at)
{
	struct hourly_hour *s = hour_at(q, tb->hourly, time / QUEUE_HOUR_MS);
	unsigned k = hourly_kinds(type, e);

	if (k & HOURLY_ACK)
		add_duration(
		    s ? &s->work : NULL, &tb->hourly->work, time - taken_at);
	if (s == NULL)
		return;
	if (k & HOURLY_FAIL)
		inc(&s->fails);
	if (k & HOURLY_BURY)
		inc(&s->buries);
	if (k & HOURLY_TTR)
		inc(&s->ttr_expired);
}

void
hourly_prune(struct queue *q)
{
	for (uint32_t i = 0; i < q->ntubes; i++) {
		struct hourly *h = q->tubes[i]->hourly;

		if (h == NULL)
			continue;
		for (int j = 0; j < QUEUE_HOURS; j++) {
			if (h->slot[j] != NULL &&
			    !in_window(q, h->slot[j]->hour)) {
				free(h->slot[j]);
				h->slot[j] = NULL;
			}
		}
	}
}

void
hourly_free(struct hourly *h)
{
	if (h == NULL)
		return;
	for (int j = 0; j < QUEUE_HOURS; j++)
		free(h->slot[j]);
	free(h);
}

/* ---- Queries ---------------------------------------------------------- */

static bool
hour_empty(const struct hourly_hour *s)
{
	return s->fails == 0 && s->buries == 0 && s->ttr_expired == 0 &&
	    s->work.count == 0 && s->wait.count == 0;
}

/* A distribution summed over tubes. */
struct acc_dist {
	uint64_t count;
	uint64_t total_ms;
	uint64_t max_ms;
	uint64_t bucket[QUEUE_HIST_BUCKETS];
};

struct acc {
	uint64_t fails;
	uint64_t buries;
	uint64_t ttr_expired;
	struct acc_dist work;
	struct acc_dist wait;
};

static void
acc_dist_add(struct acc_dist *a, const struct hourly_dist *d)
{
	a->count += d->count;
	a->total_ms += d->total_ms;
	if (d->max_ms > a->max_ms)
		a->max_ms = d->max_ms;
	for (int b = 0; b < QUEUE_HIST_BUCKETS; b++)
		a->bucket[b] += d->bucket[b];
}

static void
acc_add(struct acc *a, const struct hourly_hour *s)
{
	a->fails += s->fails;
	a->buries += s->buries;
	a->ttr_expired += s->ttr_expired;
	acc_dist_add(&a->work, &s->work);
	acc_dist_add(&a->wait, &s->wait);
}

static uint64_t
isqrt(uint64_t x)
{
	uint64_t r = 0, bit = UINT64_C(1) << 62;

	while (bit > x)
		bit >>= 2;
	while (bit != 0) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

/* The estimate of the value of rank `pct`% (rounded up): the geometric
 * middle of the bucket it falls in, at most the maximum. */
static uint64_t
percentile(const struct acc_dist *a, unsigned pct)
{
	uint64_t rank = (a->count * pct + 99) / 100, seen = 0, lo, hi, v;
	int b;

	if (a->count == 0)
		return 0;
	for (b = 0; b < QUEUE_HIST_BUCKETS - 1; b++) {
		seen += a->bucket[b];
		if (seen >= rank)
			break;
	}
	if (b == 0)
		return 0;
	if (b == QUEUE_HIST_BUCKETS - 1)
		return a->max_ms;
	lo = (uint64_t)queue_hist_bound(b - 1) + 1;
	hi = (uint64_t)queue_hist_bound(b);
	v = isqrt(lo * hi);
	return v < a->max_ms ? v : a->max_ms;
}

static void
summarize(const struct acc_dist *a, struct queue_dist *out)
{
	out->count = a->count;
	out->total_ms = a->total_ms;
	out->max_ms = a->max_ms;
	out->p50_ms = percentile(a, 50);
	out->p99_ms = percentile(a, 99);
}

/* Adds the window's hours of h into acc[] (index: hours before the clock's
 * hour). */
static void
collect_tube(const struct queue *q, const struct hourly *h, struct acc *acc)
{
	if (h == NULL)
		return;
	for (int j = 0; j < QUEUE_HOURS; j++) {
		const struct hourly_hour *s = h->slot[j];

		if (s != NULL && in_window(q, s->hour))
			acc_add(&acc[clock_hour(q) - s->hour], s);
	}
}

int
hourly_collect(const struct queue *q, const struct tube *tb,
    struct queue_hour out[QUEUE_HOURS], size_t *n)
{
	struct acc *acc = calloc(QUEUE_HOURS, sizeof(*acc));

	if (acc == NULL)
		return SLUICE_ENOMEM;
	if (tb != NULL)
		collect_tube(q, tb->hourly, acc);
	else
		for (uint32_t i = 0; i < q->ntubes; i++)
			collect_tube(q, q->tubes[i]->hourly, acc);
	*n = 0;
	for (int i = 0; i < QUEUE_HOURS; i++) {
		const struct acc *a = &acc[i];
		struct queue_hour *o = &out[*n];

		if (a->fails == 0 && a->buries == 0 && a->ttr_expired == 0 &&
		    a->work.count == 0 && a->wait.count == 0)
			continue;
		memset(o, 0, sizeof(*o));
		o->start = (clock_hour(q) - i) * QUEUE_HOUR_MS;
		o->acks = a->work.count;
		o->fails = a->fails;
		o->buries = a->buries;
		o->ttr_expired = a->ttr_expired;
		summarize(&a->work, &o->work);
		summarize(&a->wait, &o->wait);
		(*n)++;
	}
	free(acc);
	return 0;
}

int
queue_tube_totals(const struct queue *q, uint32_t i, struct queue_total *work,
    struct queue_total *wait)
{
	const struct hourly *h;

	if (i >= q->ntubes)
		return SLUICE_ENOTFOUND;
	h = q->tubes[i]->hourly;
	memset(work, 0, sizeof(*work));
	memset(wait, 0, sizeof(*wait));
	if (h != NULL) {
		*work = h->work;
		*wait = h->wait;
	}
	return 0;
}

/* ---- Dump and check --------------------------------------------------- */

static bool
totals_empty(const struct hourly *h)
{
	return h->work.count == 0 && h->wait.count == 0;
}

/* Does the tube have anything a dump or a snapshot shows? */
static bool
shows(const struct queue *q, const struct hourly *h)
{
	if (h == NULL)
		return false;
	if (!totals_empty(h))
		return true;
	for (int j = 0; j < QUEUE_HOURS; j++)
		if (h->slot[j] != NULL && in_window(q, h->slot[j]->hour) &&
		    !hour_empty(h->slot[j]))
			return true;
	return false;
}

static void
dump_total(struct buf *out, const char *name, const struct queue_total *t)
{
	buf_printf(
	    out, " %s=%" PRIu64 "/%" PRIu64 "/", name, t->count, t->total_ms);
	for (int c = 0; c < QUEUE_TOTAL_BUCKETS; c++)
		buf_printf(out, "%s%" PRIu64, c ? "," : "", t->bucket[c]);
}

/* count/total/max/bucket:n,... with only the buckets that hold any. */
static void
dump_dist(struct buf *out, const char *name, const struct hourly_dist *d)
{
	bool first = true;

	buf_printf(out, " %s=%" PRIu32 "/%" PRIu64 "/%" PRIu64 "/", name,
	    d->count, d->total_ms, d->max_ms);
	for (int b = 0; b < QUEUE_HIST_BUCKETS; b++) {
		if (d->bucket[b] == 0)
			continue;
		buf_printf(
		    out, "%s%d:%" PRIu32, first ? "" : ",", b, d->bucket[b]);
		first = false;
	}
}

void
hourly_dump(const struct queue *q, const struct tube *tb, struct buf *out)
{
	const struct hourly *h = tb->hourly;

	if (!shows(q, h))
		return;
	buf_printf(out, "hourly %s", tb->name);
	dump_total(out, "work", &h->work);
	dump_total(out, "wait", &h->wait);
	buf_put_u8(out, '\n');
	for (int64_t i = QUEUE_HOURS - 1; i >= 0; i--) {
		const struct hourly_hour *s = hour_at(q, h, clock_hour(q) - i);

		if (s == NULL || hour_empty(s))
			continue;
		buf_printf(out,
		    "hour %s %" PRId64 " fails=%" PRIu32 " buries=%" PRIu32
		    " ttr_expired=%" PRIu32,
		    tb->name, s->hour, s->fails, s->buries, s->ttr_expired);
		dump_dist(out, "work", &s->work);
		dump_dist(out, "wait", &s->wait);
		buf_put_u8(out, '\n');
	}
}

/* A distribution whose parts agree: the buckets add up to the count, the
 * maximum falls in the last bucket used, the total lies between max and
 * count * max. */
static bool
dist_ok(const struct hourly_dist *d)
{
	uint64_t sum = 0;
	int top = -1;

	for (int b = 0; b < QUEUE_HIST_BUCKETS; b++) {
		sum += d->bucket[b];
		if (d->bucket[b] != 0)
			top = b;
	}
	if (sum != d->count)
		return false;
	if (d->count == 0)
		return d->total_ms == 0 && d->max_ms == 0;
	if (d->max_ms > (uint64_t)QREC_TIME_MAX ||
	    queue_hist_bucket((int64_t)d->max_ms) != top)
		return false;
	return d->total_ms >= d->max_ms && d->total_ms <= d->count * d->max_ms;
}

static bool
total_ok(const struct queue_total *t)
{
	uint64_t sum = 0;

	for (int c = 0; c < QUEUE_TOTAL_BUCKETS; c++)
		sum += t->bucket[c];
	return sum == t->count;
}

int
hourly_check(const struct queue *q, const struct tube *tb, const char **why)
{
	const struct hourly *h = tb->hourly;
	const char *bad = NULL;

	if (h == NULL)
		return 0;
	/* Every take and ack counts once in the totals; the tube's counters
	 * may hold more, from before a snapshot that had no statistics. */
	if (!total_ok(&h->work) || !total_ok(&h->wait) ||
	    h->work.count > tb->ctr.ack || h->wait.count > tb->ctr.take)
		bad = "hourly totals add up";
	for (int j = 0; j < QUEUE_HOURS && bad == NULL; j++) {
		const struct hourly_hour *s = h->slot[j];

		if (s == NULL || !in_window(q, s->hour))
			continue;
		if (s->hour % QUEUE_HOURS != j)
			bad = "hourly hour in its slot";
		else if (!dist_ok(&s->work) || !dist_ok(&s->wait))
			bad = "hourly distribution adds up";
	}
	if (bad == NULL)
		return 0;
	if (why != NULL)
		*why = bad;
	return SLUICE_ECORRUPT;
}

/* ---- Snapshot --------------------------------------------------------- */

enum {
	HOURLY_ENTRY_MAX =
	    2 + QREC_NAME_MAX + 1 + 2 * 8 * (2 + QUEUE_TOTAL_BUCKETS),
	HOUR_ENTRY_MAX = 8 + 3 * 4 + 2 * (4 + 8 + 8 + 4 * QUEUE_HIST_BUCKETS)
};

static uint8_t *
put_u32(uint8_t *p, uint32_t v)
{
	le_store_u32(p, v);
	return p + 4;
}

static uint8_t *
put_u64(uint8_t *p, uint64_t v)
{
	le_store_u64(p, v);
	return p + 8;
}

static uint8_t *
put_total(uint8_t *p, const struct queue_total *t)
{
	p = put_u64(p, t->count);
	p = put_u64(p, t->total_ms);
	for (int c = 0; c < QUEUE_TOTAL_BUCKETS; c++)
		p = put_u64(p, t->bucket[c]);
	return p;
}

static uint8_t *
put_dist(uint8_t *p, const struct hourly_dist *d)
{
	p = put_u32(p, d->count);
	p = put_u64(p, d->total_ms);
	p = put_u64(p, d->max_ms);
	for (int b = 0; b < QUEUE_HIST_BUCKETS; b++)
		p = put_u32(p, d->bucket[b]);
	return p;
}

static int
emit_tube(const struct queue *q, const struct tube *tb, queue_emit_fn *emit,
    void *arg)
{
	const struct hourly *h = tb->hourly;
	uint8_t mem[HOURLY_ENTRY_MAX > HOUR_ENTRY_MAX ? HOURLY_ENTRY_MAX
	                                              : HOUR_ENTRY_MAX];
	uint8_t *p = mem, nhours = 0;
	int rc;

	for (int64_t i = 0; i < QUEUE_HOURS; i++) {
		const struct hourly_hour *s = hour_at(q, h, clock_hour(q) - i);

		nhours += s != NULL && !hour_empty(s);
	}
	le_store_u16(p, tb->name_len);
	memcpy(p + 2, tb->name, tb->name_len);
	p += 2 + tb->name_len;
	*p++ = nhours;
	p = put_total(p, &h->work);
	p = put_total(p, &h->wait);
	if ((rc = emit(arg, QSNAP_HOURLY, mem, (size_t)(p - mem), NULL, 0)))
		return rc;
	for (int64_t i = QUEUE_HOURS - 1; i >= 0; i--) {
		const struct hourly_hour *s = hour_at(q, h, clock_hour(q) - i);

		if (s == NULL || hour_empty(s))
			continue;
		p = put_u64(mem, (uint64_t)s->hour);
		p = put_u32(p, s->fails);
		p = put_u32(p, s->buries);
		p = put_u32(p, s->ttr_expired);
		p = put_dist(p, &s->work);
		p = put_dist(p, &s->wait);
		rc = emit(arg, QSNAP_HOUR, mem, (size_t)(p - mem), NULL, 0);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int
hourly_snapshot_write(
    const struct queue *q, queue_emit_fn *emit, void *arg, uint32_t *ntubes)
{
	int rc;

	*ntubes = 0;
	for (uint32_t i = 0; i < q->ntubes; i++) {
		if (!shows(q, q->tubes[i]->hourly))
			continue;
		if ((rc = emit_tube(q, q->tubes[i], emit, arg)) != 0)
			return rc;
		(*ntubes)++;
	}
	return 0;
}

static void
rd_total(struct rd *r, struct queue_total *t)
{
	t->count = rd_u64(r);
	t->total_ms = rd_u64(r);
	for (int c = 0; c < QUEUE_TOTAL_BUCKETS; c++)
		t->bucket[c] = rd_u64(r);
}

static void
rd_dist(struct rd *r, struct hourly_dist *d)
{
	d->count = rd_u32(r);
	d->total_ms = rd_u64(r);
	d->max_ms = rd_u64(r);
	for (int b = 0; b < QUEUE_HIST_BUCKETS; b++)
		d->bucket[b] = rd_u32(r);
}

int
hourly_load_tube(struct queue *q, struct rd *r)
{
	struct queue_total work, wait;
	struct tube *tb;
	const char *name;
	size_t len;
	uint8_t nhours;

	name = rd_str16(r, QREC_NAME_MAX, &len);
	nhours = rd_u8(r);
	rd_total(r, &work);
	rd_total(r, &wait);
	if (rd_failed(r) || rd_left(r) != 0 || !total_ok(&work) ||
	    !total_ok(&wait) || nhours > QUEUE_HOURS || q->load.hours_left != 0)
		return SLUICE_ECORRUPT;
	if ((tb = qs_tube(q, name, len)) == NULL || tb->hourly != NULL)
		return SLUICE_ECORRUPT;
	if ((tb->hourly = calloc(1, sizeof(*tb->hourly))) == NULL)
		return SLUICE_ENOMEM;
	tb->hourly->work = work;
	tb->hourly->wait = wait;
	q->load.hourly = tb;
	q->load.hours_left = nhours;
	q->load.nhourly++;
	return 0;
}

int
hourly_load_hour(struct queue *q, struct rd *r)
{
	struct tube *cur = q->load.hourly;
	struct hourly_hour s, **slot;

	s.hour = rd_i64(r);
	s.fails = rd_u32(r);
	s.buries = rd_u32(r);
	s.ttr_expired = rd_u32(r);
	rd_dist(r, &s.work);
	rd_dist(r, &s.wait);
	if (rd_failed(r) || rd_left(r) != 0 || q->load.hours_left == 0 ||
	    !in_window(q, s.hour) || hour_empty(&s) || !dist_ok(&s.work) ||
	    !dist_ok(&s.wait))
		return SLUICE_ECORRUPT;
	slot = &cur->hourly->slot[s.hour % QUEUE_HOURS];
	if (*slot != NULL)
		return SLUICE_ECORRUPT; /* that hour twice */
	if ((*slot = malloc(sizeof(**slot))) == NULL)
		return SLUICE_ENOMEM;
	**slot = s;
	q->load.hours_left--;
	return 0;
}
