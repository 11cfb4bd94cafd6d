/* logdir - the log directory: its segments in LSN order, read as one
 * sequence of records. What recovery, `sluice-log` and replication read
 * the log with.
 *
 * The rules across segments: each segment's first LSN is the previous
 * segment's last LSN + 1 (a gap or a missing segment is corruption),
 * epochs never go down, and only the LAST segment may end in a torn tail
 * (a torn record inside an earlier one is corruption). Files that are not
 * named "%020llu.wal" (preallocated spares, snapshots) are ignored. */
#ifndef SLUICE_LOG_LOGDIR_H
#define SLUICE_LOG_LOGDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/rec.h"
#include "util/buf.h"

enum {
	LOGDIR_PATH_MAX = 512,
};

/* The segments of a directory, by first LSN, ascending. */
struct logdir {
	uint64_t *first; /* first LSN of each segment */
	size_t n;
};

/* Lists the segments of `dir` into `*out` (the caller's memory; release
 * with logdir_fini). An empty or missing directory lists none (0).
 * Returns 0, -errno or -ENOMEM. */
int logdir_list(const char *dir, struct logdir *out);

/* Frees what logdir_list allocated. Accepts a zeroed struct. */
void logdir_fini(struct logdir *ld);

/* Where the valid log ends: what a writer continues after (wal_open). */
struct logdir_end {
	uint64_t last_lsn;      /* the last valid record; 0 when none */
	uint64_t epoch;         /* its epoch (or the last header's); 0 if
	                         * the directory holds no segment */
	uint64_t seg_first_lsn; /* the last segment; 0 when there is none */
	uint64_t seg_size;      /* its size, from its header */
	uint64_t offset;        /* where its next record goes */
	size_t nsegs;           /* segments in the directory */
	uint64_t nrec;          /* records read (visited or skipped) */

	/* A torn tail in the last segment. */
	bool torn;
	uint64_t torn_off;   /* offset of the first torn byte */
	uint64_t torn_bytes; /* how many (up to the last non-zero one) */
	bool cut;            /* zeroed and synced (LOGDIR_CUT) */
	bool dropped;        /* the last segment's header was torn (its
	                      * creation was cut short) and it was removed */
	bool gap;            /* the torn bytes are batches that landed after
	                      * one that did not (seg.h) */
	uint64_t gap_last;   /* gap: the highest LSN cut */

	/* On SLUICE_ECORRUPT (and -ENOENT): where, and what. */
	char bad_path[LOGDIR_PATH_MAX];
	uint64_t bad_off;     /* offset in bad_path */
	uint64_t bad_lsn;     /* the last good LSN before it; 0 if none */
	const char *bad_what; /* static text: why */
};

enum {
	LOGDIR_CUT = 1 << 0, /* cut a torn tail (zero + fdatasync); drop a
	                      * last segment whose header is torn */
};

/* Reads the log of `dir` from `from_lsn` (0 or 1: from the first record
 * present) to its end, calling `visit` (may be NULL) on every record with
 * lsn >= from_lsn. Segments that hold only lower LSNs are not read. Logs
 * a torn tail (warn) and corruption (err), naming segment and offset.
 *
 * Returns 0 and fills `*end`; a non-zero value returned by `visit` (the
 * scan stops, *end is not written); SLUICE_ECORRUPT (bad record followed
 * by a valid one, torn record or header in a segment that is not the
 * last, a gap in LSNs, a lower epoch); -ENOENT when from_lsn > 1 and the
 * first segment present starts above it (records were removed); -errno
 * on I/O failure. On SLUICE_ECORRUPT and -ENOENT, `end->bad_*` say
 * where. An empty directory is an empty log (0, end->last_lsn == 0). */
int logdir_scan(const char *dir, uint64_t from_lsn, unsigned flags,
    rec_visit_fn *visit, void *arg, struct logdir_end *end);

struct durable_mark;

/* logdir_scan, knowing what the log had synced (durable.h; NULL: nothing
 * known). The last segment's torn tail is damage (SLUICE_ECORRUPT, not
 * cut) when durable_judge says so, and so is a log that ends before the
 * mark. logdir_scan() is this with NULL. */
int logdir_scan_known(const char *dir, uint64_t from_lsn, unsigned flags,
    const struct durable_mark *known, rec_visit_fn *visit, void *arg,
    struct logdir_end *end);

/* Drops every record after `last_lsn`: segments that start after it are
 * removed (newest first), the one holding it is zeroed after it, and the
 * directory is synced. For an old leader cutting what it wrote after a
 * fork, and for `sluice-log repair` (cut at corruption). The log must be
 * valid up to last_lsn. The DURABLE mark drops to last_lsn first. Returns 0,
 * SLUICE_ECORRUPT, -ENOENT (last_lsn is below the first segment present),
 * -errno. Offline: no writer open. */
int logdir_truncate(const char *dir, uint64_t last_lsn);

/* A forward reader over a live log (replication): yields records from an
 * LSN on, across segments, never past a limit the caller knows durable,
 * so it never mistakes an unfinished write for a torn one. */
struct logdir_cursor;

/* Positions a cursor at the record `from_lsn` (>= 1). Returns 0; -ENOENT
 * when the segment holding from_lsn was removed (send a snapshot);
 * -ENOMEM; -errno. */
int logdir_cursor_open(
    const char *dir, uint64_t from_lsn, struct logdir_cursor **out);

/* The same, reading the segments with O_DIRECT in windows of 1 MiB (see
 * seg_reader_open_direct): for a reader that goes through the log once
 * (the snapshot worker), where a copy through the page cache is the
 * larger part of the reading's cost. */
int logdir_cursor_open_direct(
    const char *dir, uint64_t from_lsn, struct logdir_cursor **out);

/* The next record with lsn <= upto_lsn. Returns 0 with `*out` (its body
 * borrowed until the next call); 1 when there is none yet (upto_lsn
 * reached, or the log ends there); SLUICE_ECORRUPT; -ENOENT (the next
 * segment was removed); -errno. */
int logdir_cursor_next(
    struct logdir_cursor *c, uint64_t upto_lsn, struct rec_view *out);

/* Appends whole records, as stored (padding included), with
 * lsn <= upto_lsn, to `out` until it grew by at least `max_bytes` (at
 * least one record when there is one). *last_lsn gets the last LSN
 * appended (unchanged when none). Returns the count of records appended
 * (>= 0), or an error as logdir_cursor_next. */
int logdir_cursor_read(struct logdir_cursor *c, uint64_t upto_lsn,
    size_t max_bytes, struct buf *out, uint64_t *last_lsn);

/* The LSN the next record will carry. */
uint64_t logdir_cursor_lsn(const struct logdir_cursor *c);

/* Accepts NULL. */
void logdir_cursor_close(struct logdir_cursor *c);

#endif
