/* rates - the rolling per-second history of events (rates.h): the ring
 * of slots itself (made, grown by doubling up to its window, advanced,
 * read), then the queue's side, which counts each event into the queue's
 * ring and its tube's, and keeps the depth of each state. Counting never
 * fails: a ring that cannot grow loses its oldest slot, an observation
 * only. */
#include <stdlib.h>
#include <string.h>

#include "queue/qstate.h"
#include "queue/rates.h"
#include "sluice.h"

struct rates *
rates_new(uint32_t nslots, uint32_t step, const uint32_t *depth)
{
	struct rates *r;

	if (nslots == 0 || step == 0)
		return NULL;
	r = calloc(1, sizeof(*r) + (size_t)nslots * sizeof(r->v[0]));
	if (r == NULL)
		return NULL;
	r->head = -1;
	r->nslots = nslots;
	r->window = nslots;
	r->step = step;
	if (depth != NULL)
		memcpy(r->depth, depth, sizeof(r->depth));
	return r;
}

struct rates *
rates_new_small(uint32_t window, uint32_t step, const uint32_t *depth)
{
	struct rates *r =
	    rates_new(window < RATES_FIRST_SLOTS ? window : RATES_FIRST_SLOTS,
	        step, depth);

	if (r != NULL)
		r->window = window;
	return r;
}

static int64_t
slot_of(const struct rates *r, int64_t ms)
{
	return (ms < 0 ? 0 : ms) / 1000 / r->step;
}

static uint32_t *
slot_at(struct rates *r, int64_t n)
{
	return r->v[n % r->nslots];
}

/* The slot numbered n, advancing the ring to it when it is newer than the
 * newest: the slots skipped hold no event and the newest depth. NULL when
 * n is older than the window. */
static uint32_t *
slot_get(struct rates *r, int64_t n)
{
	if (n > r->head) {
		int64_t from = r->head + 1;

		if (r->head < 0 || n - from >= (int64_t)r->nslots)
			from = n - r->nslots + 1;
		for (int64_t s = from; s <= n; s++) {
			uint32_t *v = slot_at(r, s);

			memset(v, 0, QUEUE_RATE_EVENTS * sizeof(v[0]));
			memcpy(
			    v + QUEUE_RATE_EVENTS, r->depth, sizeof(r->depth));
		}
		r->head = n;
	} else if (n <= r->head - (int64_t)r->nslots) {
		return NULL; /* older than the window */
	}
	if (n == r->head) {
		r->head_from = n * 1000 * (int64_t)r->step;
		r->head_to = r->head_from + 1000 * (int64_t)r->step;
		r->headv = slot_at(r, n);
	}
	return slot_at(r, n);
}

/* The newest slot when `ms` falls in it, else NULL (slot_get's way). */
static uint32_t *
slot_head(const struct rates *r, int64_t ms)
{
	return ms >= r->head_from && ms < r->head_to ? r->headv : NULL;
}

/* Whether slot s holds no event and depth `d`. */
static bool
slot_blank(const struct rates *r, int64_t s, const uint32_t *d)
{
	const uint32_t *v = r->v[s % r->nslots];

	for (unsigned k = 0; k < QUEUE_RATE_EVENTS; k++)
		if (v[k] != 0)
			return false;
	return memcmp(v + QUEUE_RATE_EVENTS, d, sizeof(r->depth)) == 0;
}

/* Whether advancing to slot n pushes out a slot of the window (the last
 * `window` slots up to n) that reads otherwise than it will once gone: a
 * slot older than those held reads no event and the depth of the oldest
 * held. */
static bool
would_lose(const struct rates *r, int64_t n)
{
	int64_t first, last, keep = n - r->nslots + 1;
	const uint32_t *d;

	if (r->head < 0 || n <= r->head || r->nslots >= r->window)
		return false;
	/* the oldest slot held after the advance: a new one carries the
	 * newest depth */
	d = keep <= r->head ? r->v[keep % r->nslots] + QUEUE_RATE_EVENTS
	                    : r->depth;
	/* pushed out: the slots held that are older than keep */
	first = r->head - r->nslots + 1;
	last = keep - 1 < r->head ? keep - 1 : r->head;
	if (first < n - (int64_t)r->window + 1)
		first = n - (int64_t)r->window + 1;
	if (first < 0)
		first = 0;
	for (int64_t s = first; s <= last; s++)
		if (!slot_blank(r, s, d))
			return true;
	return false;
}

int
rates_fit(struct rates **rp, int64_t ms)
{
	struct rates *r = *rp, *g;
	int64_t n, oldest = r->head - r->nslots + 1;
	uint32_t want = r->nslots;

	if (slot_head(r, ms) != NULL)
		return 0; /* in the newest slot: nothing to push out */
	n = slot_of(r, ms);
	if (!would_lose(r, n))
		return 0;
	while (want < r->window && n - want >= oldest)
		want = want * 2 > r->window ? r->window : want * 2;
	g = rates_new(want, r->step, r->depth);
	if (g == NULL)
		return SLUICE_ENOMEM;
	g->window = r->window;
	g->head = r->head;
	/* the slots held keep their numbers; those before them are blank,
	 * with the oldest held depth (as depth_at read them) */
	for (int64_t s = r->head - (int64_t)want + 1; s <= r->head; s++) {
		uint32_t *v;

		if (s < 0)
			continue;
		v = g->v[s % want];
		if (s >= oldest)
			memcpy(v, r->v[s % r->nslots], sizeof(g->v[0]));
		else
			memcpy(v + QUEUE_RATE_EVENTS,
			    r->v[(oldest < 0 ? 0 : oldest) % r->nslots] +
			        QUEUE_RATE_EVENTS,
			    sizeof(r->depth));
	}
	free(r);
	*rp = g;
	return 0;
}

bool
rates_stale(const struct rates *r, int64_t now)
{
	return r->head < slot_of(r, now) - (int64_t)r->window;
}

void
rates_count(struct rates *r, int64_t ms, unsigned kind)
{
	uint32_t *v;

	if (ms < 0 || kind >= QUEUE_RATE_EVENTS)
		return;
	if ((v = slot_head(r, ms)) == NULL)
		v = slot_get(r, slot_of(r, ms));
	if (v != NULL && v[kind] < UINT32_MAX)
		v[kind]++;
}

void
rates_depth(struct rates *r, int64_t ms, const uint32_t *depth)
{
	uint32_t *v = slot_head(r, ms);

	if (v == NULL) {
		int64_t n = slot_of(r, ms);

		/* A change of depth is as of the newest slot at least: it
		 * holds. */
		v = slot_get(r, n > r->head ? n : r->head);
	}
	memcpy(r->depth, depth, sizeof(r->depth));
	if (v != NULL)
		memcpy(v + QUEUE_RATE_EVENTS, depth, sizeof(r->depth));
}

/* The depth at the end of slot s: the newest after the ring's newest
 * slot, the oldest the window holds before it. */
static const uint32_t *
depth_at(const struct rates *r, int64_t s)
{
	int64_t oldest = r->head - r->nslots + 1;

	if (r->head < 0 || s > r->head)
		return r->depth;
	return r->v[(s < oldest ? oldest : s) % r->nslots] + QUEUE_RATE_EVENTS;
}

uint32_t
rates_read(const struct rates *r, int64_t now, uint32_t secs, int64_t *start,
    uint32_t *out)
{
	uint32_t n = (secs + r->step - 1) / r->step;
	int64_t last = slot_of(r, now), first;

	if (n == 0)
		n = 1;
	if (n > r->window)
		n = r->window;
	first = last - n + 1;
	if (first < 0) {
		first = 0;
		n = (uint32_t)(last + 1);
	}
	*start = first * r->step * 1000;
	for (uint32_t i = 0; i < n; i++) {
		int64_t s = first + i;
		bool live = r->head >= 0 && s <= r->head &&
		    s > r->head - (int64_t)r->nslots;
		const uint32_t *d = depth_at(r, s);

		for (unsigned k = 0; k < QUEUE_RATE_EVENTS; k++)
			out[k * n + i] = live ? r->v[s % r->nslots][k] : 0;
		for (unsigned k = 0; k < QUEUE_RATE_DEPTHS; k++)
			out[(QUEUE_RATE_EVENTS + k) * n + i] = d[k];
	}
	return n;
}

/* ---- the queue's rates (queue.h) ---------------------------------------- */

static uint32_t
clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The tube's depth by state, as a ring keeps it. */
static void
tube_depth(const struct tube *tb, uint32_t *d)
{
	d[QUEUE_RATE_READY - QUEUE_RATE_EVENTS] = tube_nready(tb);
	d[QUEUE_RATE_DELAYED - QUEUE_RATE_EVENTS] = tb->delayed.len;
	d[QUEUE_RATE_TAKEN - QUEUE_RATE_EVENTS] = clamp32(tb->ntaken);
	d[QUEUE_RATE_BURIED - QUEUE_RATE_EVENTS] = tb->buried.len;
}

static void
queue_depth(const struct queue *q, uint32_t *d)
{
	d[QUEUE_RATE_READY - QUEUE_RATE_EVENTS] =
	    clamp32(q->count[QUEUE_READY]);
	d[QUEUE_RATE_DELAYED - QUEUE_RATE_EVENTS] =
	    clamp32(q->count[QUEUE_DELAYED]);
	d[QUEUE_RATE_TAKEN - QUEUE_RATE_EVENTS] =
	    clamp32(q->count[QUEUE_TAKEN]);
	d[QUEUE_RATE_BURIED - QUEUE_RATE_EVENTS] =
	    clamp32(q->count[QUEUE_BURIED]);
}

/* The tube's ring, allocated with the depth `before` its first event or
 * change (NULL when out of memory). */
static struct rates *
tube_rates(struct tube *tb, const uint32_t *before, int64_t ms)
{
	if (tb->rates == NULL)
		tb->rates =
		    rates_new_small(QUEUE_RATE_TUBE_SECS / QUEUE_RATE_TUBE_STEP,
		        QUEUE_RATE_TUBE_STEP, before);
	else
		(void)rates_fit(&tb->rates, ms);
	return tb->rates;
}

void
qs_rate(struct queue *q, struct tube *tb, int kind)
{
	uint32_t d[QUEUE_RATE_DEPTHS];
	struct rates *r;

	rates_count(q->rates, q->clock, (unsigned)kind);
	tube_depth(tb, d);
	if ((r = tube_rates(tb, d, q->clock)) != NULL)
		rates_count(r, q->clock, (unsigned)kind);
}

void
qs_rates_sweep(struct queue *q, int64_t now)
{
	if (q->rates == NULL || now / 1000 == q->rates_swept / 1000)
		return;
	q->rates_swept = now;
	for (unsigned i = 0; i < RATES_SWEEP && q->ntubes > 0; i++) {
		struct tube *tb;

		if (q->rates_cursor >= q->ntubes)
			q->rates_cursor = 0;
		tb = q->tubes[q->rates_cursor++];
		if (tb->rates != NULL && rates_stale(tb->rates, now)) {
			free(tb->rates);
			tb->rates = NULL;
		}
	}
}

void
qs_depth(struct queue *q, struct tube *tb, int state, int delta)
{
	uint32_t d[QUEUE_RATE_DEPTHS];
	struct rates *r;

	if (state < QUEUE_READY || state > QUEUE_BURIED)
		return; /* done is not waiting work */
	queue_depth(q, d);
	rates_depth(q->rates, q->clock, d);
	tube_depth(tb, d);
	{
		uint32_t before[QUEUE_RATE_DEPTHS];

		/* states READY..BURIED are depths 0..3, in that order */
		memcpy(before, d, sizeof(before));
		before[state - QUEUE_READY] -= (uint32_t)delta;
		tube_rates(tb, before, q->clock);
	}
	if ((r = tb->rates) != NULL)
		rates_depth(r, q->clock, d);
}

int
queue_rates_enable(struct queue *q, bool on)
{
	if (on && q->rates == NULL) {
		uint32_t d[QUEUE_RATE_DEPTHS];

		queue_depth(q, d);
		q->rates = rates_new(QUEUE_RATE_SECS, 1, d);
		return q->rates != NULL ? 0 : SLUICE_ENOMEM;
	}
	if (!on) {
		free(q->rates);
		q->rates = NULL;
		for (uint32_t i = 0; i < q->ntubes; i++) {
			free(q->tubes[i]->rates);
			q->tubes[i]->rates = NULL;
		}
	}
	return 0;
}

int
queue_rates(const struct queue *q, int64_t now, const char *tube,
    size_t tube_len, uint32_t secs, uint32_t *step_s, int64_t *start,
    uint32_t *out)
{
	static const struct rates none = {
		.head = -1, .nslots = 1, .window = 1, .step = 1
	};
	/* a tube with nothing counted yet: no event, its depth of now */
	struct rates empty = { .head = -1,
		.nslots = QUEUE_RATE_TUBE_SECS / QUEUE_RATE_TUBE_STEP,
		.window = QUEUE_RATE_TUBE_SECS / QUEUE_RATE_TUBE_STEP,
		.step = QUEUE_RATE_TUBE_STEP };
	const struct rates *r = q->rates;

	if (secs < 1 || secs > QUEUE_RATE_SECS)
		return -SLUICE_EINVAL;
	if (tube_len > 0) {
		const struct tube *tb;

		if (!qrec_tube_valid(tube, tube_len))
			return -SLUICE_ETUBE;
		if ((tb = qs_tube(q, tube, tube_len)) == NULL)
			return -SLUICE_ENOTFOUND;
		if (tb->rates == NULL && r != NULL)
			tube_depth(tb, empty.depth);
		r = tb->rates != NULL ? tb->rates : &empty;
	}
	if (r == NULL)
		r = &none; /* off */
	*step_s = r->step;
	return (int)rates_read(r, now, secs, start, out);
}
