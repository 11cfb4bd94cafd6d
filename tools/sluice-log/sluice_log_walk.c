/* sluice_log_walk - one segment image walked from end to end, going on
 * past damage to report every bad stretch (sluice_log_walk.h); what
 * sluice-log's checks, dump and salvage read a segment with, and what the
 * segwalk fuzz target holds against the server's segment reader.
 *
 * The walk, from offset 64 (after a header that parses):
 *
 *	record valid, lsn = expected, epoch >= current   -> a record
 *	record valid, lsn > expected, epoch >= current   -> an empty bad
 *	    stretch (the LSNs between were lost), then the record
 *	anything else at X (invalid, zeros, an lsn that goes back, a lower
 *	epoch) -> look at every 8-byte aligned offset Y > X for a record
 *	    that could follow the last good one (seg.c's rule: lsn above
 *	    it by no more than the records that fit in between, epoch not
 *	    lower):
 *	      found   -> bad stretch [X, Y), and the walk goes on at Y
 *	      none    -> a tail [X, last non-zero byte], the walk ends
 *	                 (nothing non-zero: the clean end); a torn write
 *	                 only when seg_tail_rule says its bytes may be one
 *	  and at the end, a file shorter than its header's size is a
 *	  damaged tail wherever its records end (segments are preallocated)
 *
 * A header that does not parse is a bad stretch from 0: followed by a
 * record that could be this segment's (any lsn when the name is unknown),
 * or a tail (a creation cut short). Every step moves forward by at least
 * 8 bytes, so a walk ends. */
#include <string.h>

#include "sluice_log_walk.h"
#include "util/buf.h"

/* What lies after a bad record at `start`. */
struct tail {
	bool found;
	uint64_t valid_off;
	struct rec_view v; /* the record at valid_off */
	uint64_t nz_end;   /* past the last non-zero byte seen; `start` if
	                    * none */
};

/* The quick test seg.c makes before a full decode. */
static bool
plausible_start(const uint8_t *p)
{
	uint32_t len = le_load_u32(p);

	return len >= REC_HDR_SIZE && len <= REC_MAX_LEN &&
	    le_load_u16(p + 4) != 0 && p[6] == REC_VERSION && p[7] == 0;
}

/* seg.c's scan_tail over memory: the first record at an aligned offset
 * >= start that could follow `last_lsn` with an epoch >= `epoch` (any lsn
 * with `any_lsn`), and where the non-zero bytes end when there is none. */
static void
tail_search(const uint8_t *p, size_t size, uint64_t start, uint64_t last_lsn,
    uint64_t epoch, bool any_lsn, struct tail *t)
{
	uint64_t at;

	memset(t, 0, sizeof(*t));
	t->nz_end = start;
	for (at = start; at + 8 <= size; at += 8) {
		uint64_t w = le_load_u64(p + at), most;
		struct rec_view v;

		if (w == 0)
			continue;
		t->nz_end = at + (uint64_t)(63 - __builtin_clzll(w)) / 8 + 1;
		if (!plausible_start(p + at))
			continue;
		if (rec_decode(p + at, size - at, &v) != REC_VALID ||
		    v.hdr.epoch < epoch)
			continue;
		most = last_lsn + 1 + (at - start) / REC_HDR_SIZE;
		if (any_lsn || (v.hdr.lsn > last_lsn && v.hdr.lsn <= most)) {
			t->found = true;
			t->valid_off = at;
			t->v = v;
			return;
		}
	}
	for (; at < size; at++)
		if (p[at] != 0)
			t->nz_end = at + 1;
	if (t->nz_end > size)
		t->nz_end = size;
}

static int
report(const struct walk_ops *ops, void *arg, struct walk_result *res,
    const struct walk_bad *b)
{
	res->nbad++;
	if (b->end > res->data_end)
		res->data_end = b->end;
	return ops != NULL && ops->bad != NULL ? ops->bad(arg, b) : 0;
}

int
walk_seg(const uint8_t *p, size_t size, uint64_t name_lsn,
    const struct walk_ops *ops, void *arg, struct walk_result *out)
{
	struct walk_result res;
	struct walk_bad b;
	struct rec_view v;
	struct tail t;
	uint64_t off, expect, epoch, last;
	int rc;

	memset(&res, 0, sizeof(res));
	if (seg_hdr_decode(p, size, &res.hdr) == 0) {
		res.hdr_ok = true;
		off = SEG_HDR_SIZE;
		expect = res.hdr.first_lsn;
		epoch = res.hdr.epoch;
	} else {
		/* Where records would start; a file shorter than a header
		 * holds none. */
		uint64_t start = size < SEG_HDR_SIZE ? size : SEG_HDR_SIZE;

		memset(&b, 0, sizeof(b));
		b.header = true;
		b.lsn_before = name_lsn ? name_lsn - 1 : 0;
		tail_search(p, size, start, b.lsn_before, 0, name_lsn == 0, &t);
		if (!t.found) {
			/* A creation cut short: the whole file goes. */
			b.tail = true;
			b.end = size;
			rc = report(ops, arg, &res, &b);
			if (rc != 0)
				return rc;
			*out = res;
			return 0;
		}
		b.end = t.valid_off;
		b.lsn_after = t.v.hdr.lsn;
		rc = report(ops, arg, &res, &b);
		if (rc != 0)
			return rc;
		off = t.valid_off;
		expect = t.v.hdr.lsn;
		epoch = t.v.hdr.epoch;
	}
	last = expect - 1;
	res.end = off;
	res.last_epoch = epoch;
	for (;;) {
		enum rec_result rr = rec_decode(p + off, size - off, &v);
		bool in_epoch = rr == REC_VALID && v.hdr.epoch >= epoch;

		if (rr == REC_VALID && in_epoch && v.hdr.lsn == expect) {
			if (ops != NULL && ops->rec != NULL &&
			    (rc = ops->rec(arg, off, &v)) != 0)
				return rc;
			if (res.nrec++ == 0)
				res.first_lsn = v.hdr.lsn;
			res.last_lsn = last = v.hdr.lsn;
			res.last_epoch = epoch = v.hdr.epoch;
			expect++;
			off += v.size;
			res.end = off;
			if (off > res.data_end)
				res.data_end = off;
			continue;
		}
		memset(&b, 0, sizeof(b));
		b.off = off;
		b.lsn_before = last;
		b.why = rr == REC_VALID ? REC_WHY_LSN : v.why;
		if (rr == REC_VALID && !in_epoch)
			b.why = REC_WHY_EPOCH;
		b.whole = rr == REC_VALID;
		if (rr == REC_VALID && in_epoch && v.hdr.lsn > expect) {
			/* Records are missing before this one. */
			b.end = off;
			b.lsn_after = v.hdr.lsn;
			rc = report(ops, arg, &res, &b);
			if (rc != 0)
				return rc;
			expect = v.hdr.lsn;
			continue;
		}
		tail_search(p, size, off, last, epoch, false, &t);
		if (t.found && !b.whole &&
		    seg_gap_mem(p, size, off, last, epoch, &t.nz_end,
		        &b.gap_last) == 1) {
			/* Batches that landed beside a lost one: torn,
			 * whatever valid records they hold. */
			b.gap = true;
			t.found = false;
		}
		if (t.found) {
			b.end = t.valid_off;
			b.lsn_after = t.v.hdr.lsn;
			rc = report(ops, arg, &res, &b);
			if (rc != 0)
				return rc;
			off = t.valid_off;
			expect = t.v.hdr.lsn;
			continue;
		}
		if (t.nz_end > off) {
			b.tail = true;
			b.end = t.nz_end;
			if (!b.whole && !b.gap)
				b.damage = seg_tail_rule(p + off, size - off,
				    t.nz_end - off, expect, epoch);
		}
		if (res.hdr_ok && size < res.hdr.size && !b.whole &&
		    b.damage == SEG_BAD_NONE) {
			/* Cut by something other than the writer. */
			b.tail = true;
			b.damage = SEG_BAD_SHORT;
			if (b.end < off)
				b.end = off;
		}
		if (b.tail) {
			rc = report(ops, arg, &res, &b);
			if (rc != 0)
				return rc;
		}
		break;
	}
	if (res.data_end < res.end)
		res.data_end = res.end;
	*out = res;
	return 0;
}
