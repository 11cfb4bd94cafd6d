/* rec - one log record: its byte layout, encoder and decoder (layout and
 * validity rule at the top of rec.c and in docs/log-format.md).
 *
 * Pure: no I/O, no logging, no allocation except through `struct buf`.
 * The decoder never reads outside the bytes it is given; it is fuzzed. A
 * record body is opaque here: the queue (types 1..99) and the log itself
 * (types 100 and up) give it meaning. */
#ifndef SLUICE_LOG_REC_H
#define SLUICE_LOG_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

enum {
	REC_HDR_SIZE = 40,      /* fixed header, then the body */
	REC_ALIGN = 8,          /* every record starts 8-byte aligned */
	REC_VERSION = 1,        /* the header's version byte */
	REC_MAX_LEN = 64 << 20, /* header + body, bytes */
	REC_MAX_BODY = REC_MAX_LEN - REC_HDR_SIZE,
	REC_TYPE_QUEUE_MIN = 1, /* 1..99: queue records, opaque here */
	REC_TYPE_QUEUE_MAX = 99,
	REC_TYPE_LOG_MIN = 100, /* 100..: records of the log itself */
	REC_EPOCH = 100,        /* a new epoch begins (a leader's start or
	                         * a promotion); body u64 new epoch, u64
	                         * previous epoch, u64 nonce (random: two
	                         * nodes that start the same epoch number
	                         * still differ) */
	REC_EPOCH_BODY = 24,
	REC_PAD = 101, /* nothing: zeros that end a batch on a block
	                * boundary, so that the next batch's write shares
	                * no block with it and may be in flight beside it
	                * (wal.h, cfg.inflight); every reader skips it */
};

/* The decoded header. `len` counts header + body, not the padding. */
struct rec_hdr {
	uint32_t len;
	uint16_t type;
	uint8_t version;
	uint8_t flags;
	uint64_t lsn;
	uint64_t epoch;
	int64_t time; /* unix ms, the appending server's clock */
	uint64_t checksum;
};

/* Called once per record by every reader of the log (seg_scan,
 * logdir_scan). `body` is hdr->len - REC_HDR_SIZE bytes, borrowed until
 * the callback returns. Return 0 to go on; any other value stops the scan
 * and is returned by it. */
typedef int rec_visit_fn(
    const struct rec_hdr *hdr, const void *body, void *arg);

/* What rec_decode() found at a record boundary. */
enum rec_result {
	REC_VALID = 0, /* a whole record that passes every check */
	REC_END = 1,   /* len == 0, or no bytes: preallocated zeros, the end */
	REC_INVALID = 2,
};

/* Why a record is invalid. */
enum rec_why {
	REC_WHY_NONE = 0,
	REC_WHY_SHORT,    /* fewer than REC_HDR_SIZE bytes left */
	REC_WHY_LEN,      /* len < REC_HDR_SIZE or len > REC_MAX_LEN */
	REC_WHY_VERSION,  /* version != REC_VERSION */
	REC_WHY_FLAGS,    /* flags != 0 */
	REC_WHY_TYPE,     /* type == 0 */
	REC_WHY_TRUNC,    /* the bytes end before len rounded up to 8 */
	REC_WHY_CHECKSUM, /* checksum does not match header and body */
	REC_WHY_LSN,      /* (readers) lsn breaks the +1 sequence */
	REC_WHY_EPOCH,    /* (readers) epoch lower than the one before */
};

/* A decoded record: views into the bytes given to rec_decode(). */
struct rec_view {
	struct rec_hdr hdr;
	const uint8_t *body;
	size_t body_len;
	size_t size;      /* bytes taken, padding included: rec_size() */
	enum rec_why why; /* REC_WHY_NONE unless REC_INVALID */
};

/* Bytes a record with a body of `body_len` takes, padding included. */
static inline size_t
rec_size(size_t body_len)
{
	return (REC_HDR_SIZE + body_len + (REC_ALIGN - 1)) &
	    ~(size_t)(REC_ALIGN - 1);
}

/* XXH3_64bits over header bytes [0, 32) then the body. */
uint64_t rec_checksum(const uint8_t *hdr32, const void *body, size_t len);

/* Writes one record into `dst` (rec_size(len) bytes): the header from
 * `h` (len, version and checksum are computed; h->flags must be 0), the
 * body, zero padding. The caller checked `len` <= REC_MAX_BODY and
 * h->type != 0. Returns the checksum written. */
uint64_t rec_write(
    uint8_t *dst, const struct rec_hdr *h, const void *body, size_t len);

/* Appends one record to `b`. Returns 0; SLUICE_EINVAL when `len` exceeds
 * REC_MAX_BODY, the type is 0 or the flags are not 0; -ENOMEM. */
int rec_encode(
    struct buf *b, const struct rec_hdr *h, const void *body, size_t len);

/* Decodes the record at `p` (`avail` bytes readable). Always fills `*out`:
 * on REC_VALID the header, the body (borrowed from `p`) and the size; on
 * REC_INVALID the reason in out->why. Checks everything a record can check
 * alone; LSN and epoch continuity are the reader's (seg.c). */
enum rec_result rec_decode(const void *p, size_t avail, struct rec_view *out);

/* A short static description of `why`. */
const char *rec_why_str(enum rec_why why);

#endif
