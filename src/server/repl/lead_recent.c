/* lead_recent - the records a leader keeps in memory for its followers:
 * the recent end of its log, so that followers that keep up are served
 * without a read of the disk (older records come from the segments,
 * lead_peer.c and catchup.c). The core hands each record over as it is
 * appended (core_repl_hook.note, lead_recent_note).
 *
 * Memory: the records are kept encoded, exactly as in segments, in one
 * buffer with the offset of each record. When it fills, the older half is
 * dropped at once, so each byte is copied at most twice. */
#include <stdlib.h>
#include <string.h>

#include "log/rec.h"
#include "server/core/core.h"
#include "server/repl/lead_int.h"

void
lead_recent_clear(struct lead_recent *r, uint64_t next)
{
	r->len = 0;
	r->n = 0;
	r->first = next;
}

/* Drops the older records until at most half the buffer is used. */
static void
recent_halve(struct lead_recent *r)
{
	size_t k = 0, base;

	while (k < r->n &&
	    (r->len - r->off[k] > r->cap / 2 || r->n - k > RECENT_RECS_MAX / 2))
		k++;
	if (k == r->n) {
		lead_recent_clear(r, r->first + r->n);
		return;
	}
	base = r->off[k];
	memmove(r->data, r->data + base, r->len - base);
	r->len -= base;
	for (size_t i = k; i < r->n; i++)
		r->off[i - k] = r->off[i] - (uint32_t)base;
	r->n -= k;
	r->first += k;
}

static void
recent_add(struct lead_recent *r, const struct rec_hdr *h, const void *body,
    size_t len)
{
	size_t size = rec_size(len);

	if (r->n == 0 || h->lsn != r->first + r->n)
		lead_recent_clear(r, h->lsn);
	if (size > r->cap / 2) {
		lead_recent_clear(r, h->lsn + 1);
		return;
	}
	if (r->len + size > r->cap || r->n == RECENT_RECS_MAX)
		recent_halve(r);
	if (r->n == r->ncap) {
		size_t ncap = r->ncap ? r->ncap * 2 : 4096;
		uint32_t *off = realloc(r->off, ncap * sizeof(*off));

		if (off == NULL) {
			lead_recent_clear(r, h->lsn + 1);
			return;
		}
		r->off = off;
		r->ncap = ncap;
	}
	if (r->n == 0)
		r->first = h->lsn;
	r->off[r->n++] = (uint32_t)r->len;
	rec_write(r->data + r->len, h, body, len);
	r->len += size;
}

static size_t
recent_size_at(const struct lead_recent *r, size_t i)
{
	return (i + 1 < r->n ? r->off[i + 1] : r->len) - r->off[i];
}

/* Appends records from `from` up to `upto` (at most `max` bytes, at least
 * one record) to `out`. False when `from` is not kept. */
bool
lead_recent_get(const struct lead_recent *r, uint64_t from, uint64_t upto,
    size_t max, struct buf *out, uint32_t *count)
{
	size_t i, j, bytes = 0;

	if (r->n == 0 || from < r->first || from >= r->first + r->n)
		return false;
	i = from - r->first;
	for (j = i; j < r->n && r->first + j <= upto; j++) {
		size_t s = recent_size_at(r, j);

		if (j > i && bytes + s > max)
			break;
		bytes += s;
	}
	buf_put(out, r->data + r->off[i], bytes);
	*count = (uint32_t)(j - i);
	return true;
}

/* The time of the record `lsn`, when it is kept. */
bool
lead_recent_time(const struct lead_recent *r, uint64_t lsn, int64_t *time)
{
	if (r->n == 0 || lsn < r->first || lsn >= r->first + r->n)
		return false;
	*time = (int64_t)le_load_u64(r->data + r->off[lsn - r->first] + 24);
	return true;
}

/* core_repl_hook.note */
void
lead_recent_note(
    struct core *c, const struct rec_hdr *h, const void *body, size_t len)
{
	recent_add(&c->repl->recent, h, body, len);
}
