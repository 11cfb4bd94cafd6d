/* rates - see rates.h. */
#include <stdlib.h>
#include <string.h>

#include "queue/qstate.h"
#include "queue/rates.h"
#include "sluice.h"

struct rates *
rates_new(uint32_t nslots, uint32_t step)
{
	struct rates *r;

	if (nslots == 0 || step == 0)
		return NULL;
	r = calloc(1, sizeof(*r) + (size_t)nslots * sizeof(r->v[0]));
	if (r == NULL)
		return NULL;
	r->head = -1;
	r->nslots = nslots;
	r->step = step;
	return r;
}

static int64_t
slot_of(const struct rates *r, int64_t ms)
{
	return ms / 1000 / r->step;
}

static uint32_t *
slot_at(struct rates *r, int64_t n)
{
	return r->v[n % r->nslots];
}

void
rates_count(struct rates *r, int64_t ms, unsigned kind)
{
	int64_t n = slot_of(r, ms);
	uint32_t *c;

	if (ms < 0 || kind >= QUEUE_RATES)
		return;
	if (n > r->head) {
		/* Advance: the slots skipped since the newest are empty. */
		int64_t from = r->head + 1;

		if (r->head < 0 || n - from >= (int64_t)r->nslots)
			from = n - r->nslots + 1;
		for (int64_t s = from; s <= n; s++)
			memset(slot_at(r, s), 0, sizeof(r->v[0]));
		r->head = n;
	} else if (n <= r->head - (int64_t)r->nslots) {
		return; /* older than the window */
	}
	c = &slot_at(r, n)[kind];
	if (*c < UINT32_MAX)
		(*c)++;
}

uint32_t
rates_read(const struct rates *r, int64_t now, uint32_t secs, int64_t *start,
    uint32_t *out)
{
	uint32_t n = (secs + r->step - 1) / r->step;
	int64_t last = slot_of(r, now < 0 ? 0 : now), first;

	if (n == 0)
		n = 1;
	if (n > r->nslots)
		n = r->nslots;
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

		for (unsigned k = 0; k < QUEUE_RATES; k++)
			out[k * n + i] = live ? r->v[s % r->nslots][k] : 0;
	}
	return n;
}

/* ---- the queue's rates (queue.h) ---------------------------------------- */

void
qs_rate(struct queue *q, struct tube *tb, int kind)
{
	rates_count(q->rates, q->clock, (unsigned)kind);
	if (tb->rates == NULL)
		tb->rates = rates_new(QUEUE_RATE_SECS / QUEUE_RATE_TUBE_STEP,
		    QUEUE_RATE_TUBE_STEP);
	if (tb->rates != NULL)
		rates_count(tb->rates, q->clock, (unsigned)kind);
}

int
queue_rates_enable(struct queue *q, bool on)
{
	if (on && q->rates == NULL) {
		q->rates = rates_new(QUEUE_RATE_SECS, 1);
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
	static const struct rates none = { .head = -1, .nslots = 1, .step = 1 };
	const struct rates *r = q->rates;

	if (secs < 1 || secs > QUEUE_RATE_SECS)
		return -SLUICE_EINVAL;
	if (tube_len > 0) {
		const struct tube *tb;

		if (!qrec_tube_valid(tube, tube_len))
			return -SLUICE_ETUBE;
		if ((tb = qs_tube(q, tube, tube_len)) == NULL)
			return -SLUICE_ENOTFOUND;
		r = tb->rates;
		if (r == NULL) {
			/* nothing counted yet: zeros in the tube's steps */
			static const struct rates empty = { .head = -1,
				.nslots =
				    QUEUE_RATE_SECS / QUEUE_RATE_TUBE_STEP,
				.step = QUEUE_RATE_TUBE_STEP };

			r = &empty;
		}
	}
	if (r == NULL)
		r = &none; /* off */
	*step_s = r->step;
	return (int)rates_read(r, now, secs, start, out);
}
