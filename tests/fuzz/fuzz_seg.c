/* fuzz_seg - the segment scanner over arbitrary bytes: header, records,
 * sequence rules, and the torn-tail-or-corruption search.
 *
 * Random bytes almost never carry a matching XXH3 checksum, which would
 * keep the fuzzer at the first record. So when the first input byte is
 * odd, the rest is copied and every checksum in it repaired (the
 * header's, and each record's found walking from offset 64 by its length)
 * before scanning: the fuzzer then explores lengths, LSNs, epochs and
 * tails. The results must be self-consistent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "log/rec.h"
#include "log/seg.h"
#include "sluice.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct count {
	uint64_t n;
	uint64_t last;
};

static int
visit(const struct rec_hdr *h, const void *body, void *arg)
{
	struct count *c = arg;

	(void)body;
	if (c->n > 0 && h->lsn != c->last + 1)
		abort();
	c->last = h->lsn;
	c->n++;
	return 0;
}

static void
repair(uint8_t *p, size_t size)
{
	size_t off = SEG_HDR_SIZE;

	if (size < SEG_HDR_SIZE)
		return;
	le_store_u64(p + 56, XXH3_64bits(p, 56));
	while (off + REC_HDR_SIZE <= size) {
		uint32_t len = le_load_u32(p + off);
		size_t sz;

		if (len < REC_HDR_SIZE || len > size - off)
			break;
		le_store_u64(p + off + 32,
		    rec_checksum(
		        p + off, p + off + REC_HDR_SIZE, len - REC_HDR_SIZE));
		sz = rec_size(len - REC_HDR_SIZE);
		if (sz > size - off)
			break;
		off += sz;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct count c = { 0, 0 };
	struct seg_scan s;
	uint8_t *copy;
	int rc;

	if (size < 1)
		return 0;
	copy = malloc(size);
	if (copy == NULL)
		return 0;
	memcpy(copy, data + 1, size - 1);
	if (data[0] & 1)
		repair(copy, size - 1);
	rc = seg_scan_mem(copy, size - 1, 0, visit, &c, &s);
	if (rc == 0) {
		if (s.hdr_bad) {
			if (c.n != 0)
				abort();
		} else if (s.nrec != c.n || s.end > size - 1 ||
		    s.end % REC_ALIGN != 0 || s.end < SEG_HDR_SIZE ||
		    s.end + s.torn_bytes > size - 1 ||
		    (c.n > 0 && s.last_lsn != c.last) ||
		    (s.torn != (s.torn_bytes > 0)))
			abort();
	} else if (rc == SLUICE_ECORRUPT) {
		if (s.good_off < s.bad_off || s.good_off > size - 1)
			abort();
	} else {
		abort();
	}
	free(copy);
	return 0;
}
