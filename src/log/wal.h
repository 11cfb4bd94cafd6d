/* wal - the log writer: group commit, rotation into preallocated
 * segments, the fsync policies, space reservation.
 *
 * How a batch reaches the disk (wal_config.commit). With WAL_COMMIT_DIRECT
 * (the server's default) it is one O_DIRECT write of aligned blocks with
 * RWF_DSYNC, submitted to io_uring and finished by wal_reap; with
 * WAL_COMMIT_INLINE its write and fdatasync are plain system calls made
 * in wal_submit, on the caller's thread, when nothing else is in flight;
 * with WAL_COMMIT_RING a page-cache write and an fdatasync are submitted
 * to io_uring. The `interval` policy's timer and timed fdatasync always go
 * through io_uring.
 *
 * Used by ONE thread (the server's queue thread); nothing here blocks
 * except wal_open, wal_sync, wal_prealloc_wait, wal_close, and (inline)
 * wal_submit. The cycle of an event-loop turn with WAL_COMMIT_DIRECT or
 * WAL_COMMIT_RING (inline, wal_submit returns with the batch durable):
 *
 *	poll(wal_fd(w),           -> wal_reap(w)   completions; durable LSN
 *	  wal_wake_fd(w)) readable
 *	                                          moves; reply to clients up
 *	                                          to wal_durable_lsn(w)
 *	requests                  -> wal_append()  copies the record into the
 *	                                          batch being filled, assigns
 *	                                          its LSN
 *	end of turn               -> wal_submit(w) one write (+ fdatasync) of
 *	                                          the whole batch, when none
 *	                                          is in flight
 *
 * While one batch is in flight the next one fills. A spare segment is
 * preallocated ahead of time by a background thread, so rotation does not
 * wait for the disk; when that thread falls behind, the writer fallocates
 * a spare itself (a short stall) rather than refuse a record. Any failed
 * write or fdatasync poisons the writer: nothing more is reported durable,
 * appends fail with SLUICE_ELOG, and the node must restart (recovery cuts
 * whatever was not durable). */
#ifndef SLUICE_LOG_WAL_H
#define SLUICE_LOG_WAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/logdir.h"
#include "log/rec.h"

enum wal_fsync {
	WAL_FSYNC_ALWAYS,   /* fdatasync before a record is durable */
	WAL_FSYNC_INTERVAL, /* written is durable; fdatasync at most every
	                     * interval_ms, so that much is at risk */
	WAL_FSYNC_NEVER,    /* written is durable; the OS syncs when it
	                     * likes */
};

/* How a batch is committed. */
enum wal_commit {
	WAL_COMMIT_INLINE, /* write (+ fdatasync) on the caller's thread
	                    * when nothing else is in flight: the disk's
	                    * latency and no thread hand-off; the caller's
	                    * loop waits meanwhile, and the requests that
	                    * arrive are the next batch (a zeroed config's;
	                    * the server asks for WAL_COMMIT_DIRECT) */
	WAL_COMMIT_RING,   /* through io_uring, reaped by the event loop:
	                    * the loop goes on while the disk works, at the
	                    * cost of the kernel worker that runs the
	                    * fdatasync and two wake-ups per batch */
	WAL_COMMIT_DIRECT, /* through io_uring on O_DIRECT descriptors: one
	                    * write of whole aligned blocks per batch (the
	                    * partial last block written again by the next
	                    * batch), durable by itself (RWF_DSYNC), which
	                    * io_uring completes without a worker thread;
	                    * the loop goes on while the disk works. Where
	                    * the file system refuses O_DIRECT, wal_open
	                    * falls back to WAL_COMMIT_INLINE, with a log
	                    * line (wal_commit_mode says which runs). Under
	                    * `interval` and `never`, no O_DIRECT: a batch
	                    * is a write into the page cache on the caller's
	                    * thread, the flushes go through the ring */
};

struct wal_config {
	const char *dir; /* created when missing */
	enum wal_fsync fsync;
	uint32_t interval_ms; /* WAL_FSYNC_INTERVAL; 0 means 1 */
	uint64_t seg_size;    /* 0: SEG_SIZE_DEFAULT; else a multiple of
	                       * SEG_ALIGN >= SEG_SIZE_MIN */
	unsigned prealloc;    /* spare segments kept ready; 0: 1 */
	bool no_zero_fill;    /* preallocate with fallocate only (slower
	                       * fdatasync; see docs/benchmarks.md) */
	enum wal_commit commit;
	uint64_t max_bytes; /* 0: no limit; else the segment and spare files
	                     * together never take more (a spare that would
	                     * pass it fails as the disk would, -ENOSPC) */
	/* WAL_COMMIT_DIRECT under WAL_FSYNC_ALWAYS: the O_DIRECT write is
	 * made durable by an fdatasync linked after it, which io_uring runs
	 * on its own worker thread (iou-wrk), instead of RWF_DSYNC, which on
	 * a disk without FUA ext4 completes on a kernel worker bound to the
	 * CPU that took the interrupt (docs/benchmarks.md: which is faster
	 * depends on the machine's load). */
	bool direct_fsync_op;
	/* WAL_COMMIT_DIRECT under WAL_FSYNC_ALWAYS: while batches hold
	 * WAL_ADAPT_SMALL records or fewer on average (one client waiting,
	 * or two), each is made durable by the linked fdatasync op, else by
	 * RWF_DSYNC: on a busy machine whose disk lacks FUA the op halved
	 * the median commit of one client, and under many clients it cost
	 * CPU and puts (docs/benchmarks.md). direct_fsync_op is ignored. */
	bool direct_adapt;
	/* WAL_COMMIT_DIRECT under WAL_FSYNC_ALWAYS, without the fdatasync
	 * op: up to this many batches in flight at once (0 or 1: one). A
	 * batch goes beside those in flight only when it starts on a block
	 * boundary of the same segment: while commits are contended (one
	 * in flight as a batch is sealed, or records waited behind one
	 * since the last), the writer ends each batch with a REC_PAD record
	 * up to the next block (never on a follower: wal_set_follower). The
	 * durable LSN moves over the batches in the order they were written,
	 * whatever order the disk completes them in. */
	unsigned inflight;
};

/* wal_append's flags: how much of the reserved space a record may use
 * (wal_set_reserved). Without either, a record may use all of it: the
 * records that finish work already accepted (a take, an ack, a fail...). */
enum {
	WAL_NEW_WORK = 1 << 0, /* creates work (a put): refused with
	                        * SLUICE_ENOSPC unless floor + margin stay
	                        * available after it */
	WAL_RETRY = 1 << 1,    /* churn (a retake, a touch, a kick): refused
	                        * unless the floor stays available */
	WAL_HIST_BUCKETS = 16, /* commit latency histogram */
	WAL_ADAPT_SMALL = 2,   /* direct_adapt: the records per batch, on
	                        * average, up to which batches are made
	                        * durable by the fdatasync op */
};

struct wal;

/* Opens the writer on cfg->dir, continuing after `end` (from logdir_scan
 * with LOGDIR_CUT; NULL or an end without a segment: a new segment starts
 * at end->last_lsn + 1, or LSN 1). Spare files of an earlier run are
 * removed. Epoch: end->epoch, or 1 for a new log. Returns 0, SLUICE_EINVAL
 * (bad config or end), -errno (e.g. -ENOSPC creating the first segment,
 * or io_uring unavailable). On success the caller owns *out. */
int wal_open(const struct wal_config *cfg, const struct logdir_end *end,
    struct wal **out);

/* Finishes what is in flight, fdatasyncs what was written (unless
 * poisoned), stops the preallocator, closes. Returns 0, SLUICE_ELOG when
 * the writer is (or became) poisoned, SLUICE_ETIMEDOUT when the disk did
 * not answer within 30 s. Accepts NULL. */
int wal_close(struct wal *w);

/* Copies a record of `type` (1..99 or >= 100 for log records), `time`
 * (unix ms) and `len` body bytes into the batch being filled; *lsn gets
 * its LSN. `flags`: WAL_NEW_WORK or WAL_RETRY. Blocks only to fallocate a
 * spare when the preallocator is behind (not again for new work within a
 * second of a failed allocation). Returns 0; SLUICE_EINVAL (type 0,
 * unknown flags); SLUICE_ETOOBIG (the record cannot fit in a segment);
 * SLUICE_ENOSPC (the space left would not cover what `flags` must leave,
 * even after allocating; or the disk has no room for the next segment);
 * SLUICE_ELOG (poisoned); -ENOMEM. Nothing is appended on failure. */
int wal_append(struct wal *w, uint16_t type, int64_t time, const void *body,
    size_t len, unsigned flags, uint64_t *lsn);

/* Makes the next wal_append of at most `len` body bytes, with flags 0,
 * certain to succeed while nothing else is appended first: the space
 * available takes it and leaves `keep` (what new work must leave: the
 * floor it will have, plus the margin), the current segment has room for
 * it (else the next begins now), the batch's buffer too. For a record
 * written after what it holds was applied (a batch put's PUTS record).
 * Returns 0; SLUICE_ENOSPC when refusing new work or short of room (the
 * caller appends as usual instead, which refuses or allocates as it
 * must); SLUICE_ETOOBIG; SLUICE_ELOG; -ENOMEM. */
int wal_prepare(struct wal *w, size_t len, uint64_t keep);

/* A follower's append: the record exactly as the leader wrote it. hdr->lsn
 * must be the next LSN and hdr->epoch >= the current epoch (which becomes
 * hdr->epoch). Returns as wal_append, or SLUICE_EINVAL for a wrong lsn,
 * SLUICE_EEPOCH for a lower epoch. */
int wal_append_rec(
    struct wal *w, const struct rec_hdr *hdr, const void *body, unsigned flags);

/* Starts epoch `epoch` (> the current one): appends a REC_EPOCH record
 * carrying it and `nonce` (*lsn); every later record carries it. Returns
 * as wal_append, or SLUICE_EEPOCH when `epoch` is not higher. */
int wal_set_epoch(
    struct wal *w, uint64_t epoch, uint64_t nonce, int64_t time, uint64_t *lsn);

uint64_t wal_epoch(const struct wal *w);

/* The reservation, in bytes of preallocated log space: `floor`, what the
 * records of work already accepted still need (appends with WAL_RETRY
 * must leave it), and `margin` on top of it (appends with WAL_NEW_WORK
 * must leave floor + margin). Other appends may use all of it. The
 * preallocator keeps enough spare segments to cover floor + margin when
 * the disk allows. */
void wal_set_reserved(struct wal *w, uint64_t floor, uint64_t margin);

/* True while new work is refused: since an append with WAL_NEW_WORK was
 * refused, until the space available would take that record with floor +
 * margin left. Meanwhile smaller new work is refused too. */
bool wal_refusing(struct wal *w);

/* True while the preallocator cannot make the spares it wants (its last
 * attempt failed: the disk, or max_bytes, is full). */
bool wal_space_short(const struct wal *w);

/* Starts the write of the batch being filled when no batch is in flight
 * (or when cfg.inflight allows one more beside them).
 * Call at the end of every event-loop turn. With WAL_COMMIT_INLINE the
 * write (and fdatasync) happen here: wal_durable_lsn has moved when it
 * returns, and wal_fd says nothing of it. Returns 0, SLUICE_ELOG. */
int wal_submit(struct wal *w);

/* Readable when wal_reap has completions to take: the ring's own
 * descriptor. Owned by the writer. An event loop polls it and
 * wal_wake_fd. */
int wal_fd(const struct wal *w);

/* Readable when the preallocator has a spare ready or finished a removal
 * (wal_reap clears it). Owned by the writer. */
int wal_wake_fd(const struct wal *w);

/* Processes every completion waiting, without blocking: moves the durable
 * LSN and submits a batch that a rotation sealed. The filling batch waits
 * for wal_submit, so that records appended in the same turn join it. Also
 * clears the preallocator's wake-ups. Returns 0, or SLUICE_ELOG when the
 * writer is poisoned. */
int wal_reap(struct wal *w);

/* Where the durable mark (durable.h) is written after a completion that
 * moved the synced LSN: by wal_reap and the inline commit themselves
 * (the default), or, with `late`, by wal_mark, which an event loop calls
 * once the replies that completion allowed are sent. The mark's 64-byte
 * pwrite then no longer sits between the disk's answer and the clients'.
 * It only ever names what is synced already, so writing it a few
 * microseconds later costs a start after a crash nothing it could have
 * counted on (a crash between the two knows the LSN before, as a lost
 * write of the mark would). wal_sync and wal_close write a mark that is
 * due. */
void wal_mark_late(struct wal *w, bool late);

/* Writes the durable mark if the synced LSN moved since its last write. */
void wal_mark(struct wal *w);

/* The highest LSN that may be reported to clients: written and synced
 * under WAL_FSYNC_ALWAYS, written otherwise. Never moves after a failure.
 */
uint64_t wal_durable_lsn(const struct wal *w);

/* A follower's log holds its leader's records, LSN for LSN: while
 * `follower`, the writer adds no REC_PAD record of its own. */
void wal_set_follower(struct wal *w, bool follower);

/* Called with each record the writer appends by itself (a REC_PAD), as
 * it is appended, so that a leader streams it with the others. */
typedef void wal_own_fn(
    void *arg, const struct rec_hdr *h, const void *body, size_t len);
void wal_set_own(struct wal *w, wal_own_fn *fn, void *arg);

/* The LSN of the last record appended (0 when none). */
uint64_t wal_last_lsn(const struct wal *w);

bool wal_poisoned(const struct wal *w);

/* True while a batch is in flight or sealed and waiting to go. */
bool wal_busy(const struct wal *w);

/* How long the last batch that completed took, from its submission to
 * its completion seen by wal_reap (ns); 0 before the first. */
int64_t wal_commit_ns(const struct wal *w);

/* How batches are committed: the configured way, or WAL_COMMIT_INLINE
 * where WAL_COMMIT_DIRECT was refused by the file system. */
enum wal_commit wal_commit_mode(const struct wal *w);

/* Blocks until everything appended is written and fdatasynced (whatever
 * the policy), or `timeout_ms` passed. Returns 0, SLUICE_ELOG,
 * SLUICE_ETIMEDOUT. For shutdown, snapshots and tests. */
int wal_sync(struct wal *w, int64_t timeout_ms);

/* Blocks until the preallocator has as many spare segments as it wants,
 * has failed, or `timeout_ms` passed. Returns 0 when it has them, the
 * preallocator's error (-ENOSPC...), SLUICE_ETIMEDOUT. For tests and
 * benchmarks. */
int wal_prealloc_wait(struct wal *w, int64_t timeout_ms);

/* Hands the preallocator thread the removal of the segments whose
 * records all have lsn < `lsn` (the oldest kept snapshot's LSN + 1),
 * except the newest `keep` of them (followers may still need them) and
 * the segment being written now and every later one. Returns at once:
 * the thread unlinks them and syncs the directory, logs it, and counts
 * them in wal_stats; a request not yet begun is replaced by a later one,
 * and wal_close finishes one handed over. Call after a snapshot is
 * published, not per request. Returns 0, or -ESRCH when the thread is
 * not running. */
int wal_remove_later(struct wal *w, uint64_t lsn, unsigned keep);

/* True from wal_remove_later until that removal is done. */
bool wal_removing(struct wal *w);

/* As wal_remove_later, then waits until the thread has done it (at most
 * a minute). Returns the number of segments removed (>= 0), or -errno
 * (-ETIMEDOUT). For tests and tools. */
int wal_remove_before(struct wal *w, uint64_t lsn, unsigned keep);

/* Counters for metrics. */
struct wal_stats {
	uint64_t records;        /* appended */
	uint64_t bytes;          /* written to segments, headers included */
	uint64_t batches;        /* writes submitted (one per batch) */
	uint64_t batch_max;      /* most records in one batch */
	uint64_t fsyncs;         /* fdatasyncs completed */
	uint64_t segments;       /* segments in the directory */
	uint64_t rotations;      /* segments started by rotation */
	uint64_t removed;        /* segments removed */
	uint64_t spares;         /* preallocated segments ready */
	uint64_t alloc_failures; /* preallocations that failed */
	uint64_t inline_allocs;  /* spares made by the writer itself */
	uint64_t zeroed_late;    /* spares made without their zeros that
	                          * got them at the front of the line */
	bool zeroing;            /* a spare is getting its zeros now */
	uint64_t enospc;         /* appends refused with SLUICE_ENOSPC */
	uint64_t last_lsn;
	uint64_t durable_lsn;
	uint64_t synced_lsn; /* written and fdatasynced */
	uint64_t epoch;
	uint64_t reserved;       /* floor + margin (wal_set_reserved) */
	uint64_t reserved_floor; /* floor */
	uint64_t avail;       /* bytes left in the current and spare segments */
	uint64_t files_bytes; /* segment and spare files in the directory */
	bool refusing;        /* wal_refusing */
	bool space_short;     /* wal_space_short */
	bool poisoned;
	/* Commit latency (submit to fdatasync done, or to write done when
	 * there is no fdatasync): bucket i counts latencies below
	 * 2^i * 16 us; the last bucket counts all longer ones. */
	uint64_t commit_hist[WAL_HIST_BUCKETS];
	uint64_t commit_us_sum; /* of every latency counted there */
	/* Records per submitted batch: bucket i counts batches of at most
	 * 2^i records; the last bucket counts all larger ones. */
	uint64_t batch_hist[WAL_HIST_BUCKETS];
	uint64_t batch_records;    /* records in submitted batches */
	uint64_t fsync_op_commits; /* batches made durable by an fdatasync
	                            * op (WAL_COMMIT_DIRECT): all of them
	                            * with direct_fsync_op, those while
	                            * batches were small with direct_adapt */
	uint64_t pads;             /* REC_PAD records written (cfg.inflight) */
	uint64_t fly_beside;       /* batches submitted while another was in
	                            * flight (cfg.inflight) */
	uint64_t fly_max_seen;     /* the most in flight at once */
};

void wal_stats(const struct wal *w, struct wal_stats *out);

#endif
