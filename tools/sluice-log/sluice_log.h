/* sluice_log - the insides of sluice-log, the offline tool for a data
 * directory: what each command shares.
 *
 *   sluice_log.c          main: arguments, commands, exit codes
 *   sluice_log_dir.c      the directory: its files, every segment walked,
 *                         every snapshot checked, the problems found,
 *                         and a replay of the records into a queue
 *   sluice_log_walk.c     one segment image walked end to end (pure)
 *   sluice_log_verify.c   verify, and repair (a plan, then its actions)
 *   sluice_log_dump.c     dump
 *   sluice_log_stats.c    stats and state
 *   sluice_log_out.c      JSON, base64, times, sizes, progress
 *
 * Nothing here changes a data directory except lt_repair_apply(). The
 * library's own log lines are held to errors (the tool says what it found
 * itself); --verbose shows them all. */
#ifndef SLUICE_TOOLS_LOG_H
#define SLUICE_TOOLS_LOG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "log/durable.h"
#include "log/rec.h"
#include "log/seg.h"
#include "log/snap.h"
#include "queue/queue.h"
#include "sluice_log_walk.h"
#include "util/buf.h"

/* Exit codes, the same for every command (docs/operations.md). */
enum lt_exit {
	LT_EXIT_OK = 0,      /* sound; or the command did what it was asked */
	LT_EXIT_DAMAGE = 1,  /* damage that stops sluiced, or a failed step */
	LT_EXIT_USAGE = 2,   /* bad arguments */
	LT_EXIT_TORN = 3,    /* verify: nothing but a torn tail */
	LT_EXIT_NOTDATA = 4, /* no such directory, or not a data directory */
	LT_EXIT_IO = 5,      /* a file could not be read */
};

/* ---- the directory ---------------------------------------------------- */

enum lt_kind {
	LT_TORN,   /* the end of the last segment: a write cut short */
	LT_DAMAGE, /* anything else that stops recovery */
	LT_IOERR,  /* a file that cannot be read */
};

enum { LT_NAME_MAX = 64, LT_WHAT_MAX = 320 };

/* A problem, named by file and byte offset with the LSNs around it. */
struct lt_problem {
	enum lt_kind kind;
	char file[LT_NAME_MAX]; /* a name in the directory */
	bool has_off;
	uint64_t off, end;   /* bytes [off, end) of the file */
	uint64_t lsn_before; /* the last good LSN before it; 0: none */
	uint64_t lsn_after;  /* the first LSN after it; 0: none */
	int seg;             /* the segment it is in or before; -1: none */
	bool boundary;       /* between segment `seg` and the one before */
	bool recovery;       /* in what recovery reads (not below the
	                      * snapshot it starts from) */
	bool fatal;          /* records recovery needs are gone: no repair
	                      * can bring them back */
	bool mark_only;      /* the log ends before the DURABLE mark: no
	                      * bytes to cut, the records are gone */
	char what[LT_WHAT_MAX];
};

struct lt_seg {
	char name[LT_NAME_MAX];
	uint64_t name_lsn;
	uint64_t size; /* file bytes */
	int err;       /* -errno when it cannot be read */
	struct walk_result w;
	int scan_rc; /* seg_scan's verdict on its own, and what it found */
	struct seg_scan scan;
	uint64_t rec_bytes; /* bytes of valid records, padding included */
	int64_t first_time, last_time;
	uint64_t first_epoch;
};

struct lt_snap {
	char name[LT_NAME_MAX];
	uint64_t name_lsn;
	uint64_t size;
	int rc;           /* 0, SLUICE_ECORRUPT, -errno: the file itself */
	uint64_t bad_off; /* where, when rc is SLUICE_ECORRUPT */
	int load_rc;      /* 0, or why its entries do not load as a queue */
	struct snap_info info;
	bool usable; /* sound and loads: recovery can start from it */
};

struct lt_dir {
	char path[PATH_MAX];
	struct lt_seg *segs; /* by first LSN (name) */
	size_t nsegs;
	struct lt_snap *snaps; /* by LSN */
	size_t nsnaps;
	size_t nentries;           /* entries of any kind */
	size_t nspares, nleft;     /* spare segments; unfinished files */
	size_t nunknown;           /* files sluice does not make */
	char unknown[LT_NAME_MAX]; /* one of them */
	bool has_lock, has_lost_found, running;
	uint64_t other_bytes; /* spares and leftovers */

	struct lt_problem *probs;
	size_t nprobs, probs_cap;
	char **notes; /* remarks that are not problems */
	size_t nnotes;

	/* Known after lt_dir_check(). */
	bool checked;
	int snap_used;   /* the snapshot recovery starts from; -1 */
	int snap_picked; /* the one sluiced would pick (newest whose file
	                  * checks); -1 */
	uint64_t start;  /* the first LSN recovery replays */
	uint64_t first_lsn, last_lsn; /* of the records present; 0: none */
	uint64_t nrec;
	struct durable_mark mark; /* DURABLE: what the log had synced */
};

/* One record in log order, for commands that look at every record. */
struct lt_visit {
	int (*rec)(void *arg, const struct lt_dir *d, size_t seg, uint64_t off,
	    const struct rec_view *v);
	int (*bad)(void *arg, const struct lt_dir *d, size_t seg,
	    const struct walk_bad *b);
};

/* Lists `path`: classifies its entries, reads nothing yet. Returns an
 * exit code: LT_EXIT_OK, LT_EXIT_NOTDATA (missing, not a directory, or
 * holding files but none of sluice's) or LT_EXIT_IO, with the reason in
 * err[0..errn). */
int lt_dir_open(const char *path, struct lt_dir *d, char *err, size_t errn);

void lt_dir_free(struct lt_dir *d);

/* Walks every segment (calling `v` on each record and bad stretch, in log
 * order, when not NULL), checks the continuity between segments and every
 * snapshot, and records each problem. Returns 0, or what a callback
 * returned. Shows progress on a terminal. */
int lt_dir_check(struct lt_dir *d, const struct lt_visit *v, void *arg);

/* Walks segment `i` alone. Returns 0, -errno, or a callback's value. */
int lt_seg_walk(
    const struct lt_dir *d, size_t i, const struct lt_visit *v, void *arg);

/* "DIR/name". */
void lt_path(const struct lt_dir *d, const char *name, char *out, size_t n);

/* The segment recovery starts reading: the last whose name is <= the
 * first LSN it replays; -1 when none. */
int lt_start_seg(const struct lt_dir *d);

/* The exit code of verify for what lt_dir_check() found. */
int lt_dir_exit(const struct lt_dir *d);

/* Counts of problems by kind. */
/* Copies the string `src` into `dst` of `n` bytes, cut to fit (a file
 * name only sluice does not make can be that long; a reason). */
void lt_scopy(char *dst, size_t n, const char *src);

/* Takes the directory's LOCK (fs_lock_dir) before repair changes it.
 * Returns 0, or says on stderr why nothing was changed (a sluiced holds
 * it, or the error) and returns the -errno. */
int lt_dir_lock(const struct lt_dir *d, int *lock);

/* A problem of the directory, added to its list (sluice_log_check.c's
 * findings): `kind`, in `file` (its segment `seg`, or -1), why
 * printf-style. Returns it, for the caller to add its offset and LSNs. */
struct lt_problem *lt_dir_problem(struct lt_dir *d, enum lt_kind kind,
    const char *file, int seg, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A note about the directory (not a problem), printed by verify. */
void lt_dir_note(struct lt_dir *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

size_t lt_dir_count(const struct lt_dir *d, enum lt_kind kind);

/* Loads snapshot `i` into `q` (a queue from queue_new). Returns 0,
 * SLUICE_ECORRUPT, -errno. */
int lt_snap_load(const struct lt_dir *d, size_t i, struct queue *q);

/* ---- replay ---------------------------------------------------------- */

/* The records from d->start on applied to a queue loaded from the
 * snapshot recovery uses, as recovery does, up to `stop_lsn` (0: as far
 * as the log is sound). */
struct lt_replay {
	struct queue *q; /* the caller's, after lt_replay */
	uint64_t snap_lsn;
	uint64_t records;
	uint64_t last_lsn;
	uint64_t epoch;
	int64_t last_time;
	bool broken; /* stopped at a bad stretch or a break in sequence */
	/* A record that does not apply. */
	bool failed;
	uint64_t fail_lsn;
	uint16_t fail_type;
	int fail_rc;
	size_t fail_seg;
	uint64_t fail_off;
};

/* Returns 0 (even when a record does not apply: see r->failed), or
 * SLUICE_ENOMEM, -errno. */
int lt_replay_run(
    const struct lt_dir *d, uint64_t stop_lsn, struct lt_replay *r);

/* Runs the replay over what recovery reads and records a record that does
 * not apply as a problem (sluiced would stop there). Fills *r (free it
 * with lt_replay_free). Returns 0, SLUICE_ENOMEM, -errno. */
int lt_dir_check_replay(struct lt_dir *d, struct lt_replay *r);

void lt_replay_free(struct lt_replay *r);

/* ---- repair ----------------------------------------------------------- */

enum lt_act_kind {
	LT_ACT_MOVE_SNAP, /* a damaged snapshot -> lost+found */
	LT_ACT_MOVE_SEG,  /* a whole segment -> lost+found */
	LT_ACT_CUT,       /* bytes [off, end) copied to lost+found (into a
	                   * file of the segment's name, at their offsets,
	                   * after its header), then zeroed in place */
	LT_ACT_SPLIT,     /* the records [off, end) of a segment are copied
	                   * into a new segment named after their first LSN,
	                   * written as "<name>.repair" (the old file goes to
	                   * lost+found by a MOVE_SEG) */
	LT_ACT_PUBLISH,   /* "<name>.repair" renamed to <name> */
};

struct lt_act {
	enum lt_act_kind kind;
	char file[LT_NAME_MAX];
	char to[LT_NAME_MAX]; /* SPLIT, PUBLISH: the new segment's name */
	uint64_t epoch;       /* SPLIT: the new segment header's epoch */
	uint64_t off, end;
	uint64_t first_lsn, last_lsn; /* valid records in what goes; 0 none */
	uint64_t nrec;
	bool lost; /* those records are not covered by a snapshot */
	char why[LT_WHAT_MAX];
};

struct lt_plan {
	struct lt_act *acts;
	size_t n, cap;
	bool possible; /* false: no repair can give a log to start */
	char impossible[2 * LT_WHAT_MAX];
	uint64_t keep_last;  /* the last LSN the log keeps */
	uint64_t lost_first; /* records lost: LSNs lost_first..lost_last */
	uint64_t lost_last;
	uint64_t lost_n;
	bool lower_mark; /* the DURABLE mark is above keep_last: lowered */
};

/* What repair would do to the checked directory. Returns 0, or -ENOMEM. */
int lt_repair_plan(const struct lt_dir *d, struct lt_plan *p);

/* Carries the plan out: lost+found/<time>/ gets what is cut and a NOTE.
 * `out` gets one line per step. Returns an exit code. */
int lt_repair_apply(const struct lt_dir *d, const struct lt_plan *p, FILE *out);

void lt_plan_free(struct lt_plan *p);

/* lost+found/<UTC time>[-k] under the directory, made and synced; its
 * path in `out`. Returns 0 or -errno. */
int lt_make_lost_found(const struct lt_dir *d, char *out, size_t n);

/* ---- salvage (sluice_log_salvage.c) ------------------------------------ */

enum { LT_LOST_IDS = 64 };

/* Every whole record after the snapshot recovery starts from, replayed in
 * LSN order past the holes damage left, as far as the queue's rules
 * allow; what could not be kept, named. */
struct lt_salvage {
	struct queue *q;     /* the state salvaged */
	uint64_t snap_lsn;   /* where it started (0: LSN 1) */
	uint64_t last_lsn;   /* the last record kept (the snapshot's LSN) */
	uint64_t last_epoch; /* its epoch */
	int64_t last_time;   /* its time */
	uint64_t kept;       /* records applied (or log records kept) */
	uint64_t refused;    /* whole records the queue refused */
	uint64_t gone;       /* LSNs no whole record holds */
	uint64_t gone_first; /* the lowest of them; 0: none */
	uint64_t gone_last;
	uint64_t lost_ids[LT_LOST_IDS]; /* tasks of refused records */
	size_t lost_ids_n;
	struct buf lost; /* one line per loss (the file LOST) */
};

/* Replays the checked directory into sv->q. Returns 0, SLUICE_ENOMEM,
 * -errno. Free with lt_salvage_free (also after a failure). */
int lt_salvage_run(const struct lt_dir *d, struct lt_salvage *sv);

/* What the salvage keeps and loses, for the output and the NOTE. */
void lt_salvage_describe(
    const struct lt_salvage *sv, bool dry, struct buf *out);

/* Writes the snapshot, moves the segments and the other snapshots to
 * lost+found with NOTE and LOST, starts a new segment after the snapshot
 * and sets the DURABLE mark to it. Returns an exit code. */
int lt_salvage_apply(const struct lt_dir *d, struct lt_salvage *sv, FILE *out);

void lt_salvage_free(struct lt_salvage *sv);

/* One line describing an action ("cut ...", "move ..."), with `verb`
 * ("would cut" / "cut"). */
/* The plan cannot be carried out: says `what` (p->impossible). */
void lt_plan_impossible(struct lt_plan *p, const char *what);

/* "LSN 7" or "LSN 7..9", in `out`; returns `out`. */
const char *lt_lsn_span(char *out, size_t n, uint64_t first, uint64_t last);

/* "1 record", "2 records", in `out`; returns `out`. */
const char *lt_records(char *out, size_t n, uint64_t count);

/* One problem as verify prints it: its kind, file, offset and why. */
void lt_print_problem(const struct lt_problem *p, struct buf *b);

void lt_act_describe(const struct lt_act *a, bool dry, struct buf *out);

/* ---- output helpers (sluice_log_out.c) -------------------------------- */

extern bool lt_verbose;

/* "2024-05-01T10:00:00.123Z" (at least 32 bytes). */
void lt_time(int64_t ms, char *out, size_t n);

/* "12.3 MiB" */
void lt_size(uint64_t bytes, char *out, size_t n);

/* "1.2s", "3m04s", "2h05m", "3d04h" */
void lt_age(int64_t ms, char *out, size_t n);

bool lt_utf8_valid(const void *p, size_t n);

/* A JSON string for `n` bytes that are valid UTF-8. */
void lt_json_str(struct buf *b, const void *p, size_t n);

/* "name":"..." when the bytes are UTF-8, else "name_base64":"...". */
void lt_json_bytes(struct buf *b, const char *name, const void *p, size_t n);

/* ,"ttr":N,"max_attempts":N,"backoff_base":N,"backoff_cap":N,
 * "keep_done":N,"lost_lease":"immediate"|"backoff","dead_letter":"t":
 * the settings `c` sets, null for the others (the server's defaults,
 * which the log does not know). */
void lt_json_tube_conf(struct buf *b, const struct qrec_tube_conf *c);

void lt_base64(struct buf *b, const void *p, size_t n);

/* Progress on stderr, only when it is a terminal and there is more than
 * one step; never when lt_progress_off (a dump whose records go to the
 * same terminal). */
extern bool lt_progress_off;
void lt_progress_start(const char *what, size_t total);
void lt_progress(size_t done, const char *name);
/* Progress by records: call for every record; draws now and then. */
void lt_progress_count(const char *what, uint64_t n, uint64_t lsn);
void lt_progress_end(void);

/* Writes the buffer to the stream; false on a write error. */
bool lt_flush(struct buf *b, FILE *f);

/* ---- commands --------------------------------------------------------- */

int lt_cmd_verify(int argc, char **argv);
int lt_cmd_dump(int argc, char **argv);
int lt_cmd_stats(int argc, char **argv);
int lt_cmd_state(int argc, char **argv);
int lt_cmd_repair(int argc, char **argv);

/* Parses a decimal u64 option; prints a usage error and returns false. */
bool lt_parse_u64(const char *opt, const char *s, uint64_t *out);

/* Opens and checks a directory for a command, printing why it cannot.
 * Returns LT_EXIT_OK or the exit code to return. */
int lt_open_checked(
    const char *path, struct lt_dir *d, const struct lt_visit *v, void *arg);

/* The name of a record type: "PUT", ..., "EPOCH", or NULL. */
const char *lt_type_name(uint16_t type);

/* The type named `s` (any case), or 0. */
uint16_t lt_type_parse(const char *s);

/* Whether `type` is a queue record type (1..99) this sluice-log does not
 * know: a newer sluiced wrote it (a PUTS, 69, is known). Such a record is
 * not damage, and repair must not drop it. */
bool lt_type_unknown(uint16_t type);

/* The task a queue record concerns; 0 for FLUSH and PAUSE. */
uint64_t lt_qrec_id(const struct qrec *r);

#endif
