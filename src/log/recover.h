/* recover - rebuilds a node's state from its data directory: the newest
 * valid snapshot, then every log record after it. The same path serves
 * the server at start, `sluice-log state` and a follower that restarts.
 *
 * The state itself is the caller's: recovery hands it snapshot entries and
 * then records through callbacks, and knows nothing of what they mean. */
#ifndef SLUICE_LOG_RECOVER_H
#define SLUICE_LOG_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "log/durable.h"
#include "log/logdir.h"
#include "log/rec.h"
#include "log/snap.h"

/* Empties the caller's state: recovery starts over with an older
 * snapshot. Returns 0, or a non-zero value that stops recovery. */
typedef int recover_reset_fn(void *arg);

struct recover_ops {
	/* Each entry of the chosen snapshot, in order. May be NULL. */
	snap_visit_fn *snap_entry;
	/* Each record after the snapshot (or from the first one), in
	 * order, up to `upto_lsn`. May be NULL. */
	rec_visit_fn *apply;
	/* Called when a snapshot turns out damaged after some of its
	 * entries went to snap_entry, before an older one is tried. With
	 * reset, a snapshot is read once; without it, every snapshot is
	 * checked whole before its first entry goes out (twice the reading),
	 * so a damaged one never leaves half a state behind. May be NULL. */
	recover_reset_fn *reset;
	/* Called after a snapshot's last entry: whether the state it gave
	 * may be started from (queue_snapshot_unusable). Returns NULL, or a
	 * static text saying why not: the snapshot is then treated as
	 * damaged (reset, an older one is tried). May be NULL. */
	const char *(*snap_check)(
	    void *arg, uint64_t name_lsn, const struct snap_info *si);
	/* Called once before the log's records are applied, with about how
	 * many there are (counted from the segments' names and the durable
	 * mark: exact for a log that was synced to its end), so that the
	 * caller sizes its tables once rather than growing them during the
	 * replay. May be NULL; its result is not checked (a table not sized
	 * grows as it would have). */
	void (*expect)(void *arg, uint64_t records);
};

enum {
	RECOVER_CUT = 1 << 0, /* cut a torn tail (the server does; the
	                       * offline tool only when repairing) */
};

struct recover_result {
	struct logdir_end end; /* where the log ends: for wal_open */
	bool fresh_log;        /* the log must start anew at end.last_lsn
	                        * + 1 (wal_open with this end) */
	uint64_t snap_lsn;     /* the snapshot used; 0 when none */
	uint64_t snap_epoch;
	uint64_t snap_entries;
	uint64_t snaps_skipped; /* newer snapshots that failed their check */
	uint64_t records;       /* records applied after the snapshot */
	uint64_t last_lsn;      /* the state's LSN: the last record applied, or
	                         * the snapshot's */
	uint64_t epoch;         /* the state's epoch */
	int64_t elapsed_ms;
	struct durable_mark durable; /* what the log had synced (DURABLE) */
};

/* Rebuilds state from `dir`: the newest snapshot that passes its check
 * (older ones are tried when a newer one is damaged, as long as the log
 * still holds the records after them), then the log from there up to
 * `upto_lsn` (0: to the end). With RECOVER_CUT a torn tail is cut. Logs
 * what it did in one line, and any damage with its file and offset.
 *
 * Returns 0 and fills *out; SLUICE_ECORRUPT (damage in the log, or no
 * usable snapshot although the log no longer starts at LSN 1); -errno;
 * or a non-zero value returned by a callback. `*out` is written in every
 * case, so the caller can name the damage (out->end.bad_*). */
int recover(const char *dir, unsigned flags, uint64_t upto_lsn,
    const struct recover_ops *ops, void *arg, struct recover_result *out);

/* The state at `upto_lsn` (>= 1) of a data directory that a writer is
 * still appending to, for a snapshot built beside it: the newest snapshot
 * at or below upto_lsn (older ones when it is damaged, as recover()
 * does), then the log's records after it up to upto_lsn, read with a
 * cursor that never reads past it. The caller knows the log written up to
 * upto_lsn (wal_durable_lsn); nothing is cut, removed or logged but
 * damage. `ops->apply` may return non-zero to stop (a cancel).
 *
 * Returns 0 with out->last_lsn == upto_lsn (out->end is not filled);
 * SLUICE_ECORRUPT when the log does not reach upto_lsn or is damaged
 * before it; -ENOENT when a segment it needs was removed; -errno; or a
 * callback's value. */
int recover_live(const char *dir, uint64_t upto_lsn,
    const struct recover_ops *ops, void *arg, struct recover_result *out);

/* The same, from a state the caller already holds at `from_lsn` (>= 1,
 * below upto_lsn): no snapshot is read, only the log's records after
 * from_lsn up to upto_lsn go to ops->apply. out->snap_lsn is from_lsn
 * (the state started from), out->snap_entries 0. Returns as
 * recover_live; -EINVAL for LSNs out of order. */
int recover_live_after(const char *dir, uint64_t from_lsn, uint64_t upto_lsn,
    const struct recover_ops *ops, void *arg, struct recover_result *out);

#endif
