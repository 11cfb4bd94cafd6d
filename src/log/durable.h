/* durable - the highest LSN known to be on disk, kept in the file DURABLE
 * of the data directory so that a later start can tell a torn write from
 * damage.
 *
 * Why a file of its own. A start must know which records were once whole
 * on disk: a bad record at or below such an LSN is damage, never a torn
 * write, and must not be cut. Three places could say it:
 *   - the next segment's header: a segment that has a successor was
 *     fdatasynced before the successor was named (rotation), so logdir
 *     already calls any tear in it damage; but the LAST segment, where
 *     tails are cut, has no successor;
 *   - the snapshot: published only once its LSN is durable by the fsync
 *     policy, which under `never` and `interval` means written, not
 *     synced, so it may be ahead of the disk; and recovery does not read
 *     the records it covers;
 *   - a small file written by the writer itself: chosen. It says what
 *     the last segment alone cannot.
 * The writer writes the LSN it has fdatasynced after each sync that moved
 * it (one 64-byte pwrite, no fsync of its own: it only ever states what
 * was already synced, so if the file survives a crash the records it
 * names survived too; if its write was lost, a start knows less, never
 * something false). At a clean stop, after the last sync, it writes the
 * last LSN with the CLEAN flag and fdatasyncs the file: a log that was
 * stopped cleanly has no torn write at all. When a writer opens, it
 * clears CLEAN (synced before its first record).
 *
 * Layout: two 64-byte slots, at offsets 0 and 512 (separate sectors), the
 * one with the higher sequence number that checks is current; a write
 * goes to the other slot, so a torn write of the file leaves the previous
 * slot:
 *
 *	 0  u64 magic    "SLUICEDU"
 *	 8  u32 version  DURABLE_VERSION (1)
 *	12  u32 flags    DURABLE_CLEAN: written by a clean stop
 *	16  u64 seq      ascending
 *	24  u64 lsn      every record up to it was fdatasynced
 *	32  i64 time     unix ms of the write
 *	40  u64 reserved 0
 *	48  u64 reserved 0
 *	56  u64 checksum XXH3_64bits over bytes [0, 56)
 *
 * A directory without the file (a log written before it existed, or one
 * wiped) knows nothing durable: the rules of seg.c alone apply. Anything
 * that removes records on purpose (a follower's cut, a wipe, sluice-log
 * repair) lowers or removes the mark first. */
#ifndef SLUICE_LOG_DURABLE_H
#define SLUICE_LOG_DURABLE_H

#include <stdbool.h>
#include <stdint.h>

enum {
	DURABLE_VERSION = 1,
	DURABLE_SLOT = 64,
	DURABLE_SLOT2_OFF = 512,
	DURABLE_CLEAN = 1u << 0,
};

#define DURABLE_NAME "DURABLE"

/* What the file says. lsn == 0: nothing known. */
struct durable_mark {
	uint64_t lsn;
	bool clean;   /* the last writer stopped cleanly at lsn */
	uint64_t seq; /* of the current slot */
	int64_t time;
};

/* Reads `dir`/DURABLE. A missing file, or one whose slots both fail their
 * check, is a zero mark (returns 0). Returns 0 or -errno. */
int durable_read(const char *dir, struct durable_mark *out);

/* An open mark file, for the writer. */
struct durable {
	int fd;
	uint64_t seq;
	uint64_t lsn; /* last written */
	bool failed;  /* a write failed: said once */
};

/* Opens (creating) `dir`/DURABLE and writes `lsn`, not clean, synced.
 * Returns 0 or -errno. */
int durable_open(struct durable *d, const char *dir, uint64_t lsn);

/* Writes `lsn` (with DURABLE_CLEAN when `clean`); fdatasyncs the file when
 * `sync`. Returns 0 or -errno. */
int durable_note(struct durable *d, uint64_t lsn, bool clean, bool sync);

/* Closes. Accepts a zeroed or closed struct (fd 0 is never ours: callers
 * set fd = -1 before durable_open). */
void durable_close(struct durable *d);

/* Offline (no writer open): the mark drops to `lsn` when it is above it
 * (a cut on purpose), synced. Returns 0 or -errno. */
int durable_lower(const char *dir, uint64_t lsn);

/* Removes the mark (the log is wiped). Returns 0 or -errno. */
int durable_remove(const char *dir);

/* The rule, shared by recovery (logdir.c) and sluice-log verify: given
 * the mark, whether the end of the last segment may be cut as a torn
 * write. `torn`: the last segment ends in a torn write after `last_lsn`
 * (its last whole record; a torn segment header: the record before the
 * segment). Also checks that the log reaches the mark. Returns NULL when
 * the end is sound (or a torn tail that may be cut), else a static text
 * saying why this is damage. */
const char *durable_judge(
    const struct durable_mark *m, bool torn, uint64_t last_lsn);

#endif
