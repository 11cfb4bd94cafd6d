/* sluice_log_walk - one segment image walked from end to end, for
 * sluice-log.
 *
 * seg_scan() stops at the first problem: that is all the server needs to
 * decide between cutting a torn tail and refusing to start. An operator
 * needs more: every bad stretch of a segment, where valid records resume
 * after it, and which LSNs it swallowed. walk_seg() applies the rules of
 * seg.c (the valid-record rule of rec.c, the sequence rule, and the
 * torn-or-corrupt test that looks for a record that could follow the last
 * good one), reports the bad stretch, and carries on from the record it
 * found. Its first report always agrees with seg_scan_mem() on the same
 * bytes; tests/fuzz/fuzz_segwalk.c checks that.
 *
 * Pure: no I/O, no allocation, never reads outside the bytes given. */
#ifndef SLUICE_TOOLS_LOG_WALK_H
#define SLUICE_TOOLS_LOG_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/rec.h"
#include "log/seg.h"

/* A bad stretch of a segment. */
struct walk_bad {
	uint64_t off;        /* first bad byte: a record boundary, or 0 for
	                      * the header */
	uint64_t end;        /* where valid records resume; for a tail, past
	                      * the last non-zero byte */
	enum rec_why why;    /* why the record at `off` failed; REC_WHY_NONE:
	                      * zeros where a record should be, or the
	                      * header */
	bool header;         /* the segment header does not parse */
	bool tail;           /* nothing that could follow comes after it */
	bool whole;          /* the record at `off` is whole and checksummed
	                      * but out of sequence: never a torn write */
	enum seg_bad damage; /* a tail: why it is not a torn write
	                      * (seg_tail_rule, or a file shorter than its
	                      * size); SEG_BAD_NONE when it may be one */
	uint64_t lsn_before; /* the last valid LSN before it (first - 1 when
	                      * none) */
	uint64_t lsn_after;  /* the LSN of the record at `end`; 0 for a tail */
	bool gap;            /* a tail that holds the records of batches
	                      * written beside one that never reached the
	                      * disk (seg.h): torn, and they go with it */
	uint64_t gap_last;   /* gap: the highest LSN in it */
};

/* True when `b` is a torn write: a tail that is not a whole record. What
 * seg_scan() reports as `torn` (or `hdr_bad`) rather than
 * SLUICE_ECORRUPT. */
static inline bool
walk_bad_is_torn(const struct walk_bad *b)
{
	return b->tail && !b->whole && b->damage == SEG_BAD_NONE;
}

struct walk_ops {
	/* Each valid record in file order; `off` is its offset. May be
	 * NULL. */
	int (*rec)(void *arg, uint64_t off, const struct rec_view *v);
	/* Each bad stretch, in file order. May be NULL. */
	int (*bad)(void *arg, const struct walk_bad *b);
};

struct walk_result {
	bool hdr_ok;
	struct seg_hdr hdr;  /* valid when hdr_ok */
	uint64_t nrec;       /* valid records */
	uint64_t nbad;       /* bad stretches */
	uint64_t end;        /* past the last valid record */
	uint64_t data_end;   /* past the last non-zero byte after the header
	                      * (at least `end`) */
	uint64_t first_lsn;  /* of the first valid record; 0 when none */
	uint64_t last_lsn;   /* of the last valid record; 0 when none */
	uint64_t last_epoch; /* of the last valid record, else the header's */
};

/* Walks the segment image p[0..size) whose file name gives `name_lsn`
 * (0: unknown). Calls `ops` for every valid record and bad stretch.
 * Returns 0 and fills *out, or the non-zero value a callback returned. */
int walk_seg(const uint8_t *p, size_t size, uint64_t name_lsn,
    const struct walk_ops *ops, void *arg, struct walk_result *out);

#endif
