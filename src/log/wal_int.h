/* wal_int - what the files of the writer share (wal.c: opening,
 * appending, the event loop's side, closing; wal_batch.c: batches and
 * their commit; wal_alloc.c: spares and the preallocator thread;
 * wal_space.c: space reservation): the writer's state and the functions
 * one of them calls in another. Not for use outside src/log/wal*.c: the
 * writer's interface is wal.h. */
#ifndef SLUICE_LOG_WAL_INT_H
#define SLUICE_LOG_WAL_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "log/durable.h"
#include "log/iochain.h"
#include "log/logdir.h"
#include "log/wal.h"
#include "util/buf.h"

enum {
	RING_ENTRIES = 32,
	SPARE_SLACK = 64 << 10, /* room a segment's end may waste (at
	                         * most an eighth of a segment) */
	ALLOC_RETRY_MS = 1000,  /* after a failed preallocation; and new work
	                         * allocates nothing itself for as long */
	ALLOC_INLINE_MAX = 64,  /* spares one append may allocate itself */
	CLOSE_TIMEOUT_MS = 30000,
	BATCH_KEEP = 4,           /* idle batch buffers kept */
	BATCH_BUF_KEEP = 4 << 20, /* larger buffers are freed when idle */
	WAL_BLOCK = 4096, /* WAL_COMMIT_DIRECT: the unit written (a multiple
	                   * of the device's logical block size) */
	WAL_INFLIGHT_MAX = 16, /* cfg.inflight's largest */
};

/* ---------------------------------------------------------------------
 * Segments
 * ------------------------------------------------------------------- */

/* An open segment file: the one being written, one being left, or a
 * spare. Referenced by the writer and by the batches that write to it. */
struct wal_seg {
	int fd;
	int dfd; /* WAL_COMMIT_DIRECT: the same file opened O_DIRECT, for
	          * the batches' writes; -1 otherwise */
	int refs;
	uint64_t first_lsn; /* 0 while a spare */
	uint64_t size;
	char path[LOGDIR_PATH_MAX];       /* its name in the log */
	char spare_path[LOGDIR_PATH_MAX]; /* its name while a spare */
	struct wal_seg *next;             /* spare list */
	/* A spare's, under alloc.mu: */
	bool zeroed;  /* its zeros are written (or need not be) */
	bool zeroing; /* the preallocator writes them now: not to be taken */
};

/* ---------------------------------------------------------------------
 * Requests on the ring
 * ------------------------------------------------------------------- */

enum wal_req_kind { REQ_BATCH, REQ_SYNC, REQ_TIMER };

struct wal_req {
	struct iochain chain; /* first: the ring hands it back */
	enum wal_req_kind kind;
};

struct wal_batch {
	struct wal_req req;
	struct buf data;
	struct wal_seg *seg;  /* written to */
	struct wal_seg *prev; /* the segment it closes, when it opens one */
	uint64_t off;         /* file offset of data[0] */
	uint64_t first_lsn;   /* of its first record */
	uint64_t last_lsn;    /* of its last record */
	uint64_t nrec;
	bool opens; /* starts with the segment header */
	bool done;  /* in flight: its write completed (or failed) */
	/* WAL_COMMIT_DIRECT: what is written, aligned: the bytes of the
	 * block where `off` falls that are already on disk, then data, then
	 * zeros to the end of the last block (wal_batch.c). */
	uint8_t *dio;
	size_t dio_cap;
	struct wal_batch *next;
};

struct wal_sync {
	struct wal_req req;
	struct wal_seg *seg;
	uint64_t lsn; /* synced when it completes */
	bool busy;
};

struct wal_timer {
	struct wal_req req;
	bool armed;
};

/* ---------------------------------------------------------------------
 * The writer
 * ------------------------------------------------------------------- */

/* A removal of segments a snapshot made needless, handed by the caller's
 * thread to the preallocator (wal_remove.c). Under alloc.mu. */
struct wal_rm {
	bool pending;       /* asked, not yet begun */
	uint64_t lsn;       /* remove segments whose records are all below */
	unsigned keep;      /* except the newest `keep` of those */
	uint64_t cur_first; /* the segment being written when asked: it and
	                     * the ones after it stay */
	uint64_t asked;     /* requests handed over */
	uint64_t done;      /* requests finished; the last one's result: */
	int rc;             /* 0 or -errno */
	int removed;        /* segments it removed */
	uint64_t total;     /* segments removed by this writer */
	int64_t freed_ms;   /* mono ms of the last removal that freed room */
};

struct wal_alloc {
	pthread_t thr;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;   /* wakes the thread */
	pthread_cond_t done; /* wakes wal_prealloc_wait */
	/* Under mu: */
	unsigned want; /* spares wanted ready */
	struct wal_seg *ready;
	struct wal_seg *ready_tail;
	bool busy;
	bool stop;
	int err; /* the last attempt's error, 0 */
	int64_t retry_at;
	unsigned seq;
	uint64_t failures;
	uint64_t zeroed_late;  /* spares whose zeros came after them */
	uint64_t bytes;        /* segment and spare files in the directory */
	bool capped;           /* the last failure was cfg.max_bytes's */
	atomic_uint nready;    /* read without the lock by the writer */
	atomic_bool zero_stop; /* a spare's zeros are to stop: the writer
	                        * wants it, or the thread is stopping */
	struct wal_rm rm;
};

struct wal {
	struct wal_config cfg;
	char dir[LOGDIR_PATH_MAX];
	int dirfd;
	struct iochain_ring ring;

	struct wal_seg *cur; /* the segment records go into */
	uint64_t fill_off;   /* where the next record goes in it */
	uint64_t next_lsn;
	uint64_t epoch;
	uint64_t floor;  /* wal_set_reserved: WAL_RETRY leaves this much */
	uint64_t margin; /* and WAL_NEW_WORK this much more */
	bool refusing;   /* wal_refusing */
	uint64_t refused_size; /* the new record first refused: until it
	                        * would fit, new work waits */
	unsigned want;         /* the spares last asked of the preallocator */
	int64_t inline_failed_ms; /* mono ms of the last failed alloc_inline */

	bool direct; /* WAL_COMMIT_DIRECT runs (not refused) */
	/* WAL_COMMIT_DIRECT under `never` and `interval`: a batch is a
	 * plain write into the page cache on the caller's thread (a copy:
	 * no reply waits for the disk under these policies, and an
	 * O_DIRECT write would put a trip to the device on each), and only
	 * the chain that opens a segment (the old one's fdatasync, the
	 * rename, the directory's fsync, the first write) and the periodic
	 * fdatasync go through the ring, so the loop never waits for a
	 * flush. */
	bool cached;
	uint32_t adapt_avg; /* cfg.direct_adapt: records per batch lately,
	                     * in sixteenths (wal_batch.c's sync_op) */
	uint32_t dio_align; /* O_DIRECT's alignment on this file system */
	/* WAL_COMMIT_DIRECT: the last block written, as far as records
	 * fill it (tail_len bytes at tail_off of tail_seg): the next batch
	 * writes them again ahead of its own records. */
	uint8_t *tail;
	struct wal_seg *tail_seg;
	uint64_t tail_off;
	size_t tail_len;

	struct wal_batch *fill; /* the batch being filled, or NULL */
	struct wal_batch *q;    /* sealed, oldest first */
	struct wal_batch *q_tail;
	struct wal_batch *fly; /* in flight, in the order written */
	struct wal_batch *fly_tail;
	unsigned nfly;
	int64_t commit_ns; /* how long the last batch took, submit to done */
	bool waited;       /* since the last seal, records waited behind the
	                    * batches in flight (wal_pad_fill) */
	bool follower;     /* wal_set_follower: no REC_PAD of its own */
	wal_own_fn *own;   /* wal_set_own */
	void *own_arg;
	struct wal_batch *idle; /* recycled */
	unsigned nidle;

	struct wal_seg *wseg; /* segment of the last completed write */
	struct wal_sync sync;
	struct wal_timer timer;

	uint64_t written_lsn;
	uint64_t synced_lsn;
	uint64_t durable_lsn;
	struct durable mark; /* DURABLE: the synced LSN, for a later start */
	bool mark_late;      /* wal_mark_late: the mark waits for wal_mark */
	bool mark_due;       /* the synced LSN moved since the mark's write */
	bool poisoned;
	bool retry_logged; /* a refused WAL_RETRY was logged */

	struct wal_alloc alloc;
	struct wal_stats st;
};

/* ---- wal.c */

void wal_pad_fill(struct wal *w);
void wal_seg_unref(struct wal_seg *s);
struct wal_seg *wal_seg_ref(struct wal_seg *s);
int wal_seg_open_direct(struct wal *w, struct wal_seg *s, const char *path);

/* ---- wal_alloc.c: spares and the preallocator */

int wal_alloc_inline(struct wal *w);
uint64_t wal_alloc_segments_bytes(const char *dir, const struct logdir *ld);
void wal_alloc_update_want(struct wal *w);
uint64_t wal_alloc_spare_cap(const struct wal *w);
int wal_alloc_make_spare(
    struct wal *w, unsigned seq, bool zero_fill, struct wal_seg **out);
void wal_alloc_stop(struct wal *w);
struct wal_seg *wal_alloc_take(struct wal *w);
int wal_alloc_remove_stale(const char *dir);
void wal_alloc_files_sub(struct wal *w, uint64_t size);
void *wal_alloc_main(void *arg);

/* ---- wal_batch.c: batches, commits, completions, failure */

void wal_poison(struct wal *w, const char *what, const char *path, uint64_t off,
    uint64_t first_lsn, uint64_t last_lsn, int err);
struct wal_batch *wal_batch_new(
    struct wal *w, struct wal_seg *seg, uint64_t off);
void wal_submit_sync(struct wal *w);
int wal_pump(struct wal *w, bool take_fill);
void wal_batch_free(struct wal *w, struct wal_batch *b);
void wal_seal_fill(struct wal *w);
unsigned wal_fly_max(const struct wal *w);
void wal_on_done(struct iochain *c, void *arg);

/* ---- wal_remove.c: removing needless segments, on the preallocator */

void wal_remove_run(struct wal *w);

/* ---- wal_space.c: space reservation */

void wal_accepting_again(struct wal *w);
int wal_refuse(struct wal *w, unsigned flags, uint64_t size, const char *why);
bool wal_room_for(const struct wal *w, uint64_t size, uint64_t keep);
bool wal_may_alloc_inline(struct wal *w);

#endif
