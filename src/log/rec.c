/* rec - one log record: layout, encoder, decoder.
 *
 * Byte layout, little-endian; every record starts at an 8-byte aligned
 * offset of its segment:
 *
 *	 0  u32 len       header + body bytes (padding not counted)
 *	 4  u16 type      1..99 queue records; 100.. log records (REC_EPOCH)
 *	 6  u8  version   REC_VERSION (1)
 *	 7  u8  flags     0
 *	 8  u64 lsn       log sequence number: +1 per record, from 1
 *	16  u64 epoch     the leader's term; never decreases along the log
 *	24  i64 time      unix ms, the appending server's clock
 *	32  u64 checksum  XXH3_64bits over bytes [0, 32), then the body
 *	40  ...           body: len - 40 bytes
 *	    ...           zero padding up to a multiple of 8 (not checksummed)
 *
 * The valid-record rule. At a record boundary, the bytes hold a valid
 * record when all of these hold:
 *	- at least 40 bytes are there;
 *	- 40 <= len <= REC_MAX_LEN;
 *	- version == REC_VERSION, flags == 0, type != 0;
 *	- len rounded up to 8 bytes are there;
 *	- the checksum matches XXH3_64bits(bytes [0, 32) || body).
 * len == 0 (or no bytes at all) is the end of the data: segments are
 * preallocated with zeros. Anything else is invalid. The reader of a
 * segment adds the sequence rules (seg.c): lsn is the previous one + 1 (the
 * first is the segment header's first_lsn) and epoch >= the previous one.
 * Padding is not checked; a writer always writes zeros there.
 *
 * Bumping REC_VERSION. The version byte is per record, so a log may hold
 * several versions: a new writer writes the new version only; a reader
 * accepts every version it knows and decodes each by its own layout. To
 * change the layout: add the new version beside the old in rec_decode
 * (never change the meaning of an existing version), keep bytes [0, 8)
 * (len, type, version, flags) where they are so every version can be
 * sized and skipped, bump REC_VERSION, describe both in
 * docs/log-format.md, and add the old version's records to the fuzz
 * corpus and test_rec. A change of a queue record's body is the queue's
 * business (its own version inside the body), not this one's. */
#include <errno.h>
#include <string.h>
/* The streaming state lives on the stack: its layout is the header's. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "log/rec.h"
#include "sluice.h"

enum {
	OFF_LEN = 0,
	OFF_TYPE = 4,
	OFF_VERSION = 6,
	OFF_FLAGS = 7,
	OFF_LSN = 8,
	OFF_EPOCH = 16,
	OFF_TIME = 24,
	OFF_CHECKSUM = 32,
	SUMMED_HDR = 32,  /* header bytes covered by the checksum */
	SMALL_BODY = 480, /* bodies hashed in one call from the stack */
};

uint64_t
rec_checksum(const uint8_t *hdr32, const void *body, size_t len)
{
	uint8_t joined[SUMMED_HDR + SMALL_BODY];
	XXH3_state_t st;

	/* The checksum field sits between the two parts. A small record is
	 * joined on the stack and hashed in one call, about three times
	 * faster than the streaming API; the result is the same. */
	if (len <= SMALL_BODY) {
		memcpy(joined, hdr32, SUMMED_HDR);
		if (len > 0)
			memcpy(joined + SUMMED_HDR, body, len);
		return XXH3_64bits(joined, SUMMED_HDR + len);
	}
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, hdr32, SUMMED_HDR);
	XXH3_64bits_update(&st, body, len);
	return XXH3_64bits_digest(&st);
}

uint64_t
rec_write(uint8_t *dst, const struct rec_hdr *h, const void *body, size_t len)
{
	size_t size = rec_size(len);
	uint64_t sum;

	le_store_u32(dst + OFF_LEN, (uint32_t)(REC_HDR_SIZE + len));
	le_store_u16(dst + OFF_TYPE, h->type);
	dst[OFF_VERSION] = REC_VERSION;
	dst[OFF_FLAGS] = h->flags;
	le_store_u64(dst + OFF_LSN, h->lsn);
	le_store_u64(dst + OFF_EPOCH, h->epoch);
	le_store_u64(dst + OFF_TIME, (uint64_t)h->time);
	if (len > 0)
		memcpy(dst + REC_HDR_SIZE, body, len);
	memset(dst + REC_HDR_SIZE + len, 0, size - REC_HDR_SIZE - len);
	sum = rec_checksum(dst, dst + REC_HDR_SIZE, len);
	le_store_u64(dst + OFF_CHECKSUM, sum);
	return sum;
}

int
rec_encode(struct buf *b, const struct rec_hdr *h, const void *body, size_t len)
{
	uint8_t *dst;

	if (len > REC_MAX_BODY || h->type == 0 || h->flags != 0)
		return SLUICE_EINVAL;
	dst = buf_extend(b, rec_size(len));
	if (dst == NULL)
		return -ENOMEM;
	rec_write(dst, h, body, len);
	return 0;
}

static enum rec_result
invalid(struct rec_view *out, enum rec_why why)
{
	out->why = why;
	return REC_INVALID;
}

enum rec_result
rec_decode(const void *p, size_t avail, struct rec_view *out)
{
	const uint8_t *b = p;
	struct rec_hdr *h = &out->hdr;

	memset(out, 0, sizeof(*out));
	if (avail == 0)
		return REC_END;
	if (avail < sizeof(uint32_t)) {
		/* Fewer bytes than a length: zeros end the data, anything
		 * else is a record cut short. */
		for (size_t i = 0; i < avail; i++)
			if (b[i] != 0)
				return invalid(out, REC_WHY_SHORT);
		return REC_END;
	}
	h->len = le_load_u32(b + OFF_LEN);
	if (h->len == 0)
		return REC_END;
	if (avail < REC_HDR_SIZE)
		return invalid(out, REC_WHY_SHORT);
	h->type = le_load_u16(b + OFF_TYPE);
	h->version = b[OFF_VERSION];
	h->flags = b[OFF_FLAGS];
	h->lsn = le_load_u64(b + OFF_LSN);
	h->epoch = le_load_u64(b + OFF_EPOCH);
	h->time = (int64_t)le_load_u64(b + OFF_TIME);
	h->checksum = le_load_u64(b + OFF_CHECKSUM);
	if (h->len < REC_HDR_SIZE || h->len > REC_MAX_LEN)
		return invalid(out, REC_WHY_LEN);
	if (h->version != REC_VERSION)
		return invalid(out, REC_WHY_VERSION);
	if (h->flags != 0)
		return invalid(out, REC_WHY_FLAGS);
	if (h->type == 0)
		return invalid(out, REC_WHY_TYPE);
	out->body_len = h->len - REC_HDR_SIZE;
	out->size = rec_size(out->body_len);
	if (avail < out->size)
		return invalid(out, REC_WHY_TRUNC);
	if (rec_checksum(b, b + REC_HDR_SIZE, out->body_len) != h->checksum)
		return invalid(out, REC_WHY_CHECKSUM);
	out->body = b + REC_HDR_SIZE;
	return REC_VALID;
}

const char *
rec_why_str(enum rec_why why)
{
	switch (why) {
	case REC_WHY_NONE:
		return "valid";
	case REC_WHY_SHORT:
		return "fewer bytes than a record header";
	case REC_WHY_LEN:
		return "record length out of range";
	case REC_WHY_VERSION:
		return "unknown record version";
	case REC_WHY_FLAGS:
		return "unknown record flags";
	case REC_WHY_TYPE:
		return "record type 0";
	case REC_WHY_TRUNC:
		return "record cut short";
	case REC_WHY_CHECKSUM:
		return "checksum mismatch";
	case REC_WHY_LSN:
		return "LSN out of sequence";
	case REC_WHY_EPOCH:
		return "epoch lower than the record before";
	}
	return "unknown";
}
