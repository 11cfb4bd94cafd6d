/* seg - one log segment file: a 64-byte header, then records back to back
 * (layout in docs/log-format.md). Named "%020llu.wal" after the LSN of its
 * first record and preallocated to its full size, so unused space reads
 * as zeros. Append-only; only recovery shortens it, by zeroing a torn tail
 * at a record boundary (seg_cut).
 *
 * The reader checks every record with rec_decode() and the sequence rules:
 * the first record carries the header's first_lsn, each next one lsn + 1,
 * and epochs never go down. When a record fails, every later 8-byte
 * aligned offset is tried: a valid record means corruption. Otherwise the
 * bytes must look like what an interrupted write leaves (seg_tail_rule):
 * a prefix of the next record, zeros after it, in a file of its full
 * preallocated size; anything else is damage too. */
#ifndef SLUICE_LOG_SEG_H
#define SLUICE_LOG_SEG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/rec.h"

enum {
	SEG_HDR_SIZE = 64,
	SEG_VERSION = 1,
	SEG_NAME_MAX = 32,           /* "%020llu.wal" and its NUL fit */
	SEG_ALIGN = 4096,            /* segment sizes are multiples of it */
	SEG_SIZE_MIN = 64 << 10,     /* 64 KiB */
	SEG_SIZE_DEFAULT = 64 << 20, /* 64 MiB */
};

/* "SLUICEWL" as a little-endian u64. */
#define SEG_MAGIC 0x4c57454349554c53ULL

/* The decoded segment header. */
struct seg_hdr {
	uint32_t version;   /* SEG_VERSION */
	uint32_t hdr_size;  /* SEG_HDR_SIZE */
	uint64_t first_lsn; /* the LSN of the first record, also the name */
	uint64_t epoch;     /* the writer's epoch when it was created */
	int64_t created;    /* unix ms */
	uint64_t size;      /* bytes preallocated, header included */
	uint64_t checksum;  /* XXH3_64bits over bytes [0, 56) */
};

/* Writes the header's 64 bytes (computing the checksum) into `out`. */
void seg_hdr_encode(uint8_t *out, const struct seg_hdr *h);

/* Decodes a header. Returns 0, or SLUICE_ECORRUPT when fewer than 64
 * bytes are given or magic, version, size or checksum are wrong. */
int seg_hdr_decode(const void *p, size_t avail, struct seg_hdr *out);

/* "%020llu.wal" into `out` (at least SEG_NAME_MAX bytes). */
void seg_name(char *out, uint64_t first_lsn);

/* True when `name` is exactly a segment name; *first_lsn gets its LSN. */
bool seg_parse_name(const char *name, uint64_t *first_lsn);

/* "dir/%020llu.wal". Returns 0 or -ENAMETOOLONG. */
int seg_path(char *out, size_t n, const char *dir, uint64_t first_lsn);

/* Creates `path` (which must not exist), allocates `size` bytes and, with
 * `zero_fill`, writes zeros over them, then fdatasyncs it (the directory
 * is the caller's to sync). Writing the zeros once turns the extents into
 * written ones, so later fdatasyncs need not update metadata
 * (docs/benchmarks.md). Where the file system cannot allocate without
 * writing (no fallocate), the zeros are written whatever `zero_fill`
 * says. On success *fd is open read-write and *zeroed (when not NULL)
 * tells whether the zeros were written; on failure the file is removed.
 * Returns 0 or -errno (-ENOSPC when the disk is full). Fault point
 * FAULT_SEG_ALLOC. */
int seg_prealloc(
    const char *path, uint64_t size, bool zero_fill, int *fd, bool *zeroed);

/* Writes zeros over [0, size) of the allocated file `path`, open as `fd`,
 * and fdatasyncs it: seg_prealloc's zero fill, for a file allocated
 * without it. Gives up between two MiB of zeros once `*stop` (when not
 * NULL) is set: -ECANCELED, the file as good as before but for some of
 * its zeros. Returns 0 or -errno. */
int seg_zero_fill(
    const char *path, int fd, uint64_t size, const atomic_bool *stop);

/* Zeroes `len` bytes at `off` and fdatasyncs: how a torn tail is cut
 * while the preallocated space stays. Returns 0 or -errno. Fault point
 * FAULT_SEG_CUT. */
int seg_cut(const char *path, uint64_t off, uint64_t len);

/* Reads a segment record by record, from a file or from memory. */
struct seg_reader {
	const char *path; /* borrowed, for messages; "(memory)" */
	int fd;           /* -1 when reading memory */
	const uint8_t *mem;
	uint64_t size; /* bytes in the file (or memory) */
	uint8_t *buf;  /* window over the file: [buf_pos, buf_pos+buf_len) */
	size_t cap;
	size_t window; /* bytes read at a time; 0: 1 MiB */
	uint64_t buf_pos;
	size_t buf_len;
	struct seg_hdr hdr;
	uint64_t off;      /* offset of the next record */
	uint64_t next_lsn; /* the LSN the next record must carry */
	uint64_t epoch;    /* the lowest epoch it may carry */
	uint64_t nrec;     /* records read */
	bool hdr_ok;
	bool direct; /* opened with O_DIRECT: aligned reads, buf aligned */
};

/* Opens `path` read-only (the reader borrows `path`). Returns 0 or -errno.
 * The header is read by seg_reader_hdr(). */
int seg_reader_open(struct seg_reader *r, const char *path);

/* The same, reading with O_DIRECT (plain reads where the file system
 * refuses it): for a segment its writer wrote with O_DIRECT, whose bytes
 * are not in the page cache; each window comes from the disk into the
 * reader's buffer without a copy through the cache. */
int seg_reader_open_direct(struct seg_reader *r, const char *path);

/* A reader over `len` borrowed bytes holding a whole segment. */
void seg_reader_init_mem(struct seg_reader *r, const void *data, size_t len);

/* Reads and checks the header; positions at the first record. Returns 0,
 * SLUICE_ECORRUPT (bad header), or -errno. */
int seg_reader_hdr(struct seg_reader *r);

/* Reads the record at r->off. Returns REC_VALID (and advances), REC_END,
 * REC_INVALID (out->why says why, including REC_WHY_LSN and REC_WHY_EPOCH
 * for a valid record out of sequence), or -errno. `*out`'s body is
 * borrowed until the next call. */
int seg_reader_next(struct seg_reader *r, struct rec_view *out);

/* Forgets the buffered window, so bytes appended since are seen. */
void seg_reader_refresh(struct seg_reader *r);

/* Closes the file and frees the window. Accepts a reader already closed
 * or whose open failed. */
void seg_reader_close(struct seg_reader *r);

enum {
	SEG_SCAN_CUT = 1 << 0, /* zero a torn tail and fdatasync */
	SEG_BLOCK = 4096,      /* the block an O_DIRECT writer writes whole
	                        * (WAL_BLOCK) */
	SEG_GAP_RUNS_MAX = 15, /* batches that may have landed after one
	                        * that did not: one less than the most a
	                        * writer has in flight (WAL_INFLIGHT_MAX) */
};

/* Why the bytes at a bad record are damage rather than a torn write. */
enum seg_bad {
	SEG_BAD_NONE = 0, /* not damage: the clean end, or a torn write */
	SEG_BAD_FOLLOWED, /* a record that could follow comes after it */
	SEG_BAD_SEQUENCE, /* a whole record with the wrong LSN or epoch */
	SEG_BAD_AFTER,    /* non-zero bytes past the bad record's length */
	SEG_BAD_HEADER,   /* its header is not the next record's */
	SEG_BAD_SHORT,    /* the file is shorter than its header's size */
	SEG_BAD_HDR,      /* the segment header does not parse, records
	                   * follow it */
};

/* A text for `b`, for messages. */
const char *seg_bad_str(enum seg_bad b);

/* The torn-write rule. A write interrupted by a crash leaves a prefix of
 * what it wrote; segments are preallocated with zeros, so at the first bad
 * record X the bytes from X to the end of the file must be a prefix of the
 * next record followed by zeros only. `at` holds the bytes at X (`avail`
 * of them, at least min(nz, REC_HDR_SIZE)); the non-zero ones end at
 * X + `nz`. Whatever part of the record's header is present must be that
 * of the record expected (`expect_lsn`, an epoch >= `epoch`, a length in
 * range, this version) and nothing non-zero may lie past its length.
 * Returns SEG_BAD_NONE when the bytes may be a torn write (or are all
 * zeros), else why not. Pure. */
enum seg_bad seg_tail_rule(const uint8_t *at, size_t avail, uint64_t nz,
    uint64_t expect_lsn, uint64_t epoch);

/* What seg_scan() found. */
struct seg_scan {
	struct seg_hdr hdr;  /* valid unless hdr_bad */
	bool hdr_bad;        /* the header does not parse and nothing valid
	                      * follows it: a creation the crash cut short */
	uint64_t last_lsn;   /* hdr.first_lsn - 1 when there is no record */
	uint64_t last_epoch; /* of the last record, else the header's */
	uint64_t nrec;       /* valid records (visited or not) */
	uint64_t end;        /* offset after the last valid record */
	uint64_t size;       /* bytes in the file */
	bool torn;           /* non-zero bytes after `end`, none valid;
	                      * or a gap (below) */
	uint64_t torn_bytes; /* from `end` to past the last non-zero byte */
	bool gap;            /* torn: zeros at `end`, then the records of
	                      * batches that were in flight beside the one
	                      * that never reached the disk (seg.c) */
	uint64_t gap_last;   /* gap: the highest LSN after it */
	enum rec_why why;    /* why the record at `end` failed, or NONE */
	bool cut;            /* the torn bytes were zeroed and synced */
	uint64_t bad_off;    /* SLUICE_ECORRUPT: the first bad record */
	uint64_t good_off;   /* SLUICE_ECORRUPT: a valid record after it
	                      * (SEG_BAD_FOLLOWED), else bad_off */
	enum seg_bad bad;    /* SLUICE_ECORRUPT: why it is not torn */
};

/* Visits, in order, every record of `path` whose lsn >= `from_lsn`, and
 * checks all of them. Returns 0; a non-zero value returned by `visit`;
 * -errno on I/O failure; SLUICE_ECORRUPT when a bad record (or a bad
 * header) is followed by a valid record, unless what lies between and
 * after is the gap a crash leaves among batches in flight at once (seg.c;
 * reported as a torn tail with `gap`), or its bytes are not what a torn
 * write leaves (seg_tail_rule), or the file is shorter than its size. `*out` is
 * written on success and on SLUICE_ECORRUPT (it then says where: bad_off,
 * good_off, last_lsn). With SEG_SCAN_CUT a torn tail is zeroed (seg_cut). Does
 * not log. */
int seg_scan(const char *path, uint64_t from_lsn, unsigned flags,
    rec_visit_fn *visit, void *arg, struct seg_scan *out);

/* The gap rule of seg.c over a segment held in memory, for a reader that
 * walks on past damage (sluice-log): whether the bytes from `start`, after
 * records that end with `last_lsn` of epoch `epoch`, are the gap a crash
 * leaves among batches in flight at once. Returns 1 with *end past its
 * last non-zero byte and *last the highest LSN in it, else 0. Pure. */
int seg_gap_mem(const void *data, size_t len, uint64_t start, uint64_t last_lsn,
    uint64_t epoch, uint64_t *end, uint64_t *last);

/* seg_scan() over a segment held in memory (never cuts). */
int seg_scan_mem(const void *data, size_t len, uint64_t from_lsn,
    rec_visit_fn *visit, void *arg, struct seg_scan *out);

#endif
