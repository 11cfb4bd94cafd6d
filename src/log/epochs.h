/* epochs - a node's epoch history: which epoch began at which LSN, and
 * with which nonce. Replication compares histories to find where two logs
 * part (docs/replication.md).
 *
 * The history lives in the file EPOCHS of the data directory, one line
 * "epoch nonce start_lsn" per epoch, appended and fdatasync'd when an
 * epoch begins, so it survives the removal of the segments that held the
 * REC_EPOCH records. A history starts with epoch 1 at LSN 1, nonce 0,
 * written or not; an epoch that holds no record (a new one begins at the
 * same LSN) is replaced by the next. The log stays the authority: at start-up
 * the history drops what begins after the log's end (a crash between the two
 * writes) and learns every REC_EPOCH record recovery replays. */
#ifndef SLUICE_LOG_EPOCHS_H
#define SLUICE_LOG_EPOCHS_H

#include <stddef.h>
#include <stdint.h>

#include "log/logdir.h"

enum {
	EPOCHS_MAX = 4096, /* entries kept; the oldest are forgotten */
};

struct epoch_ent {
	uint64_t epoch;
	uint64_t nonce;
	uint64_t start; /* LSN of its first record (its REC_EPOCH record) */
};

struct epochs {
	struct epoch_ent *v; /* ascending epoch and start */
	size_t n, cap;
	char path[LOGDIR_PATH_MAX];
};

/* Reads `dir`/EPOCHS (missing: only epoch 1). Lines past a torn end are
 * ignored. Returns 0, SLUICE_ECORRUPT (a line out of order or unreadable
 * before the last), -errno, -ENOMEM. Free with epochs_fini. */
int epochs_load(struct epochs *e, const char *dir);

void epochs_fini(struct epochs *e);

/* Records that `epoch` began at `start` with `nonce`: in memory, and in
 * the file (appended and synced). An entry with the same epoch and start
 * is already there: nothing to do. Returns 0, SLUICE_EEPOCH (epoch not
 * above the last entry's, or start below it), -errno. */
int epochs_add(
    struct epochs *e, uint64_t epoch, uint64_t nonce, uint64_t start);

/* Forgets every epoch that began after `last_lsn` (the log was cut
 * there), rewriting the file. Returns 0 or -errno. */
int epochs_cut(struct epochs *e, uint64_t last_lsn);

/* Replaces the whole history (a snapshot installed from a leader) and
 * rewrites the file. Returns 0, SLUICE_EEPOCH (not ascending), -errno. */
int epochs_set(struct epochs *e, const struct epoch_ent *v, size_t n);

/* The entry of `epoch`, or NULL. */
const struct epoch_ent *epochs_find(const struct epochs *e, uint64_t epoch);

/* The entry in force at `lsn` (the last one starting at or before it). */
const struct epoch_ent *epochs_at(const struct epochs *e, uint64_t lsn);

/* The last LSN of the epoch at v[i] in a log whose last LSN is `last`:
 * the next epoch's start - 1, or `last` for the newest. */
uint64_t epochs_end(const struct epochs *e, size_t i, uint64_t last);

/* The current (last) entry. */
static inline const struct epoch_ent *
epochs_last(const struct epochs *e)
{
	return &e->v[e->n - 1];
}

#endif
