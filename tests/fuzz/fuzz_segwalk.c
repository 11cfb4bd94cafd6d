/* fuzz_segwalk - sluice-log's walk of a segment
 * (tools/sluice-log/sluice_log_walk.c), which goes on past damage, against the
 * segment reader over the same arbitrary bytes: seg_scan_mem() must return 0 or
 * SLUICE_ECORRUPT, and the walk must agree with it on the first problem (where
 * it is, and whether it is a torn tail, the gap batches in flight leave, or
 * corruption). Every record and bad
 * stretch the walk reports lies inside the input, in order. */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "log/seg.h"
#include "sluice.h"
#include "sluice_log_walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	size_t size;
	uint64_t next_off; /* everything reported starts at or after it */
	uint64_t nrec;     /* records before the first bad stretch */
	uint64_t visited;  /* records seg_scan visited */
	bool have_first;
	struct walk_bad first;
};

static int
on_rec(void *arg, uint64_t off, const struct rec_view *v)
{
	struct seen *s = arg;

	assert(off >= s->next_off && off % REC_ALIGN == 0);
	assert(off + v->size <= s->size);
	assert(v->body_len == v->hdr.len - REC_HDR_SIZE);
	s->next_off = off + v->size;
	if (!s->have_first)
		s->nrec++;
	return 0;
}

static int
on_bad(void *arg, const struct walk_bad *b)
{
	struct seen *s = arg;

	assert(b->off >= s->next_off || b->header);
	assert(b->off <= b->end && b->end <= s->size);
	s->next_off = b->end;
	if (!s->have_first) {
		s->have_first = true;
		s->first = *b;
	}
	return 0;
}

static int
count(const struct rec_hdr *h, const void *body, void *arg)
{
	(void)h;
	(void)body;
	((struct seen *)arg)->visited++;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct walk_ops ops = { on_rec, on_bad };
	struct seen seen = { size, 0, 0, 0, false, { 0 } };
	struct walk_result w;
	struct seg_scan s;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = seg_scan_mem(data, size, 0, count, &seen, &s);
	assert(rc == 0 || rc == SLUICE_ECORRUPT);
	assert(walk_seg(data, size, 0, &ops, &seen, &w) == 0);
	assert(w.end <= size && w.data_end <= size);
	if (rc == SLUICE_ECORRUPT) {
		assert(seen.have_first && !walk_bad_is_torn(&seen.first));
		assert(seen.first.off == s.bad_off);
		if (!seen.first.header)
			assert(seen.nrec == s.nrec && seen.visited == s.nrec);
		return 0;
	}
	assert(seen.visited == s.nrec && seen.nrec == s.nrec);
	if (s.hdr_bad) {
		assert(seen.have_first && seen.first.header && seen.first.tail);
	} else if (s.torn) {
		assert(seen.have_first && walk_bad_is_torn(&seen.first));
		assert(seen.first.off == s.end);
		assert(seen.first.end - seen.first.off == s.torn_bytes);
		assert(seen.first.gap == s.gap);
		assert(!s.gap || seen.first.gap_last == s.gap_last);
		assert(w.nbad == 1 && w.nrec == s.nrec);
	} else {
		assert(!seen.have_first && w.nbad == 0);
		assert(w.nrec == s.nrec && w.end == s.end);
		assert(s.nrec == 0 || w.last_lsn == s.last_lsn);
	}
	return 0;
}
