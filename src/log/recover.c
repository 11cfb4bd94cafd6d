/* recover - rebuilds a node's state from its data directory (the
 * contract is recover.h's): the newest snapshot that loads, then the
 * records of the log after it, handed to the caller's callbacks.
 *
 * Order of work:
 *   1. list the snapshots; from the newest down, load the first whose
 *      file checks out. The entries go to the caller as they are
 *      checked, in one pass; when a snapshot turns out damaged half-way
 *      the caller's reset empties its state before an older one is
 *      tried, so a damaged snapshot never leaves half a state behind.
 *      (A caller without reset gets a checking pass first, then the
 *      loading pass: the file is read twice.)
 *   2. scan the log from snapshot LSN + 1 with logdir_scan, feeding each
 *      record to the caller, stopping after `upto_lsn`;
 *   3. when the log ends below the snapshot (possible only under the
 *      interval and never fsync policies, whose unsynced tail a crash can
 *      take while the snapshot was synced), the segments are all covered
 *      by the snapshot: they are removed and the log starts anew after
 *      the snapshot's LSN.
 *
 * A snapshot whose successor records the log no longer holds (segments
 * removed after a newer snapshot, which is now damaged) cannot be used:
 * that is SLUICE_ECORRUPT naming both. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/durable.h"
#include "log/recover.h"
#include "log/seg.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/fsutil.h"
#include "util/log.h"

struct tail_ctx {
	const struct recover_ops *ops;
	void *arg;
	uint64_t upto;
	uint64_t applied;
	uint64_t last_lsn;
	uint64_t epoch;
};

/* A visitor's value that means "reached upto_lsn", not an error: positive
 * (readers take negative values for -errno) and above every SLUICE_E*. */
enum { RECOVER_STOP_ = 1000000 };

static int
tail_visit(const struct rec_hdr *h, const void *body, void *arg)
{
	struct tail_ctx *t = arg;
	int rc;

	if (t->upto != 0 && h->lsn > t->upto)
		return RECOVER_STOP_;
	if (t->ops->apply != NULL) {
		rc = t->ops->apply(h, body, t->arg);
		if (rc != 0)
			return rc;
	}
	t->applied++;
	t->last_lsn = h->lsn;
	t->epoch = h->epoch;
	return 0;
}

/* Forwards snapshot entries to the caller, remembering whether it was the
 * caller that stopped the load (its verdict stands) or the file (damage:
 * an older snapshot may do). */
struct snap_ctx {
	const struct recover_ops *ops;
	void *arg;
	int cb_rc;
};

static int
snap_visit(void *arg, uint16_t type, const void *data, size_t len)
{
	struct snap_ctx *c = arg;

	c->cb_rc = c->ops->snap_entry(c->arg, type, data, len);
	return c->cb_rc;
}

/* Loads the newest snapshot with a sound file, at or below `upto` (when
 * set), into the caller's state. With a reset callback each snapshot is
 * read once: entries go out while it is checked, and a damaged one is
 * followed by a reset. Without it, a snapshot is checked whole first.
 * Returns 0 with *lsn (the name's) and *si, both 0 when there is none; a
 * callback's value; -errno when the directory cannot be listed. */
static int
load_snapshot(const char *dir, uint64_t upto, const struct recover_ops *ops,
    void *arg, uint64_t *lsn, struct snap_info *si, uint64_t *skipped)
{
	struct snap_ctx c = { ops, arg, 0 };
	bool once = ops->reset != NULL || ops->snap_entry == NULL;
	uint64_t *lsns = NULL;
	size_t n = 0;
	int rc;

	memset(si, 0, sizeof(*si));
	*lsn = 0;
	*skipped = 0;
	rc = snap_list(dir, &lsns, &n);
	if (rc == -ENOENT)
		return 0;
	if (rc != 0)
		return rc;
	for (size_t i = n; i-- > 0;) {
		char path[LOGDIR_PATH_MAX];
		uint64_t bad = 0;

		if (upto != 0 && lsns[i] > upto)
			continue;
		if (snap_path(path, sizeof(path), dir, lsns[i]) != 0)
			continue;
		c.cb_rc = 0;
		if (once)
			rc = snap_load(path,
			    ops->snap_entry ? snap_visit : NULL, &c, si, &bad);
		else if ((rc = snap_load(path, NULL, NULL, NULL, &bad)) == 0)
			rc = snap_load(path, snap_visit, &c, si, &bad);
		if (rc == 0 && ops->snap_check != NULL) {
			const char *why = ops->snap_check(arg, lsns[i], si);

			if (why != NULL) {
				log_err("recover",
				    "a snapshot does not hold a state to start "
				    "from; trying an older one snapshot=%s "
				    "why=\"%s\"",
				    path, why);
				(*skipped)++;
				memset(si, 0, sizeof(*si));
				if (ops->reset == NULL) {
					rc = SLUICE_ECORRUPT;
					goto fail;
				}
				if ((rc = ops->reset(arg)) != 0)
					goto fail;
				continue;
			}
		}
		if (rc == 0) {
			*lsn = lsns[i];
			break;
		}
		if (c.cb_rc != 0) {
			log_err("recover",
			    "cannot load a snapshot snapshot=%s error=\"%s\"",
			    path, sluice_strerror(rc));
			goto fail;
		}
		log_err("recover",
		    "a snapshot is damaged; trying an older one snapshot=%s "
		    "offset=%" PRIu64 " error=\"%s\"",
		    path, bad, sluice_strerror(rc));
		(*skipped)++;
		memset(si, 0, sizeof(*si));
		if (ops->reset != NULL && (rc = ops->reset(arg)) != 0)
			goto fail;
		rc = 0;
	}
fail:
	free(lsns);
	return rc;
}

/* Without a snapshot the state is rebuilt from LSN 1, so the log must
 * still start there: a first segment that starts later means the records
 * before it were removed (after a snapshot that is now damaged or gone),
 * and replaying what is left would build a wrong state. */
static int
check_log_start(const char *dir, uint64_t skipped, struct recover_result *out)
{
	struct logdir ld = { 0 };
	int rc = logdir_list(dir, &ld);

	if (rc == 0 && ld.n > 0 && ld.first[0] > 1) {
		seg_path(out->end.bad_path, sizeof(out->end.bad_path), dir,
		    ld.first[0]);
		out->end.bad_off = 0;
		out->end.bad_lsn = 0;
		out->end.bad_what = "the log starts after LSN 1 and no "
		                    "snapshot covers the records before it";
		log_err("recover",
		    "the log starts late and no usable snapshot covers the "
		    "records before it segment=%s first_lsn=%" PRIu64
		    " missing_to=%" PRIu64 " snapshots_skipped=%" PRIu64
		    "; run 'sluice-log verify %s'",
		    out->end.bad_path, ld.first[0], ld.first[0] - 1, skipped,
		    dir);
		rc = SLUICE_ECORRUPT;
	}
	logdir_fini(&ld);
	return rc;
}

/* "; cut a torn tail of N bytes at offset X of SEG" for the summary line,
 * or "" when the log ended cleanly. */
static void
torn_note(const char *dir, const struct logdir_end *e, char *out, size_t n)
{
	char path[LOGDIR_PATH_MAX];

	out[0] = '\0';
	if (!e->torn)
		return;
	if (e->torn_off == 0) {
		/* Only a header can be torn at offset 0. */
		snprintf(out, n, " torn_header=%s torn_bytes=%" PRIu64,
		    e->dropped ? "removed" : "found", e->torn_bytes);
		return;
	}
	if (seg_path(path, sizeof(path), dir, e->seg_first_lsn) != 0)
		snprintf(path, sizeof(path), "last");
	snprintf(out, n,
	    " torn_tail=%s segment=%s offset=%" PRIu64 " torn_bytes=%" PRIu64,
	    e->cut ? "cut" : "found", path, e->torn_off, e->torn_bytes);
}

/* Removes every segment: all of them hold only records the snapshot
 * covers. */
static int
drop_covered_segments(const char *dir)
{
	struct logdir ld = { 0 };
	int rc = logdir_list(dir, &ld);

	for (size_t i = 0; rc == 0 && i < ld.n; i++) {
		char path[LOGDIR_PATH_MAX];

		if (seg_path(path, sizeof(path), dir, ld.first[i]) == 0 &&
		    unlink(path) < 0)
			rc = -errno;
	}
	logdir_fini(&ld);
	return rc == 0 ? fs_sync_dir(dir) : rc;
}

/* About how many records the log holds from `from` on: every segment
 * but the last ends where the next begins, and the last at least at the
 * LSN the durable mark names. */
static uint64_t
expected_records(
    const char *dir, uint64_t from, const struct durable_mark *mark)
{
	struct logdir ld = { 0 };
	uint64_t end = 0; /* the LSN after the last one counted */

	if (logdir_list(dir, &ld) == 0 && ld.n > 0)
		end = ld.first[ld.n - 1];
	logdir_fini(&ld);
	if (mark->lsn + 1 > end)
		end = mark->lsn + 1;
	return end > from ? end - from : 0;
}

int
recover(const char *dir, unsigned flags, uint64_t upto_lsn,
    const struct recover_ops *ops, void *arg, struct recover_result *out)
{
	struct tail_ctx t = { ops, arg, upto_lsn, 0, 0, 0 };
	int64_t t0 = clock_mono_ns();
	struct snap_info si;
	uint64_t snap_lsn, from;
	char torn[LOGDIR_PATH_MAX + 128];
	int rc;

	memset(out, 0, sizeof(*out));
	rc = load_snapshot(
	    dir, upto_lsn, ops, arg, &snap_lsn, &si, &out->snaps_skipped);
	if (rc != 0)
		return rc;
	if (out->snaps_skipped > 0)
		log_err("recover",
		    "DAMAGED SNAPSHOT: the newest %" PRIu64 " snapshot(s) "
		    "could not be used; starting from %s%s and replaying the "
		    "log after it; run 'sluice-log verify %s', then "
		    "'sluice-log repair %s' to move the damaged one(s) to "
		    "lost+found (docs/operations.md)",
		    out->snaps_skipped,
		    snap_lsn != 0 ? "an older snapshot" : "the log alone",
		    snap_lsn != 0 ? "" : " (no snapshot is usable)", dir, dir);
	if (snap_lsn != 0) {
		out->snap_lsn = si.lsn;
		out->snap_epoch = si.epoch;
		out->snap_entries = si.entries;
		t.last_lsn = si.lsn;
		t.epoch = si.epoch;
	} else {
		rc = check_log_start(dir, out->snaps_skipped, out);
		if (rc != 0)
			return rc;
	}

	/* What the log had synced decides whether a bad tail may be cut
	 * (durable.h). */
	rc = durable_read(dir, &out->durable);
	if (rc != 0) {
		log_err("recover",
		    "cannot read the durable mark dir=%s error=\"%s\"", dir,
		    sluice_strerror(rc));
		return rc;
	}

	/* Test builds only: a test holds recovery open here. */
	FAULT_PAUSE(FAULT_PAUSE_RECOVER);
	from = snap_lsn + 1;
	if (ops->expect != NULL)
		ops->expect(arg, expected_records(dir, from, &out->durable));
	rc =
	    logdir_scan_known(dir, from, (flags & RECOVER_CUT) ? LOGDIR_CUT : 0,
	        &out->durable, tail_visit, &t, &out->end);
	if (rc == RECOVER_STOP_) {
		rc = 0;
	} else if (rc == -ENOENT) {
		log_err("recover",
		    "the log no longer holds a record (it starts later) and "
		    "no snapshot covers it lsn=%" PRIu64
		    "; run 'sluice-log verify %s'",
		    from, dir);
		rc = SLUICE_ECORRUPT;
	} else if (rc == SLUICE_ECORRUPT && out->end.bad_what != NULL) {
		/* The log itself; a record the caller refused (bad_what
		 * unset) is the caller's to name. */
		log_err("recover",
		    "damaged log segment=%s offset=%" PRIu64
		    " after_lsn=%" PRIu64
		    " why=\"%s\"; run 'sluice-log verify %s', then "
		    "'sluice-log repair %s'",
		    out->end.bad_path, out->end.bad_off, out->end.bad_lsn,
		    out->end.bad_what, dir, dir);
	}
	if (rc != 0)
		return rc;

	if (upto_lsn == 0 && snap_lsn != 0 && out->end.last_lsn < snap_lsn) {
		log_warn("recover",
		    "the log ends before the snapshot (an unsynced tail was "
		    "lost); the log restarts after the snapshot lsn=%" PRIu64
		    " snap_lsn=%" PRIu64,
		    out->end.last_lsn, snap_lsn);
		if (flags & RECOVER_CUT) {
			rc = drop_covered_segments(dir);
			if (rc != 0)
				return rc;
		}
		memset(&out->end, 0, sizeof(out->end));
		out->end.last_lsn = snap_lsn;
		out->end.epoch = si.epoch;
		out->fresh_log = true;
	}

	out->records = t.applied;
	out->last_lsn = t.last_lsn;
	out->epoch = t.epoch != 0 ? t.epoch : out->end.epoch;
	out->elapsed_ms = (clock_mono_ns() - t0) / 1000000;
	torn_note(dir, &out->end, torn, sizeof(torn));
	if (out->snap_lsn != 0)
		log_info("recover",
		    "recovered from a snapshot and the log snap_lsn=%" PRIu64
		    " snap_entries=%" PRIu64 " records=%" PRIu64 " lsn=%" PRIu64
		    " epoch=%" PRIu64 " ms=%" PRId64 "%s",
		    out->snap_lsn, out->snap_entries, out->records,
		    out->last_lsn, out->epoch, out->elapsed_ms, torn);
	else
		log_info("recover",
		    "recovered from the log alone records=%" PRIu64
		    " lsn=%" PRIu64 " epoch=%" PRIu64 " ms=%" PRId64 "%s",
		    out->records, out->last_lsn, out->epoch, out->elapsed_ms,
		    torn);
	return 0;
}

/* ---- A live directory, up to a durable LSN ---------------------------- */

/* Applies the log's records after `from_lsn` up to `upto_lsn` through
 * ops->apply, counting them in *out (whose last_lsn and epoch start as the
 * caller's state). */
static int
replay_live(const char *dir, uint64_t from_lsn, uint64_t upto_lsn,
    const struct recover_ops *ops, void *arg, struct recover_result *out)
{
	struct logdir_cursor *cur = NULL;
	struct rec_view v;
	int rc = 0;

	if (from_lsn < upto_lsn) {
		rc = logdir_cursor_open_direct(dir, from_lsn + 1, &cur);
		while (rc == 0 &&
		    (rc = logdir_cursor_next(cur, upto_lsn, &v)) == 0) {
			if (ops->apply != NULL &&
			    (rc = ops->apply(&v.hdr, v.body, arg)) != 0)
				break;
			out->records++;
			out->last_lsn = v.hdr.lsn;
			out->epoch = v.hdr.epoch;
		}
		logdir_cursor_close(cur);
		if (rc == 1)
			rc = 0;
	}
	if (rc == 0 && out->last_lsn != upto_lsn) {
		log_err("recover",
		    "the log ends before the LSN asked for dir=%s "
		    "last_lsn=%" PRIu64 " upto_lsn=%" PRIu64,
		    dir, out->last_lsn, upto_lsn);
		rc = SLUICE_ECORRUPT;
	}
	return rc;
}

int
recover_live(const char *dir, uint64_t upto_lsn, const struct recover_ops *ops,
    void *arg, struct recover_result *out)
{
	int64_t t0 = clock_mono_ns();
	struct snap_info si;
	uint64_t snap_lsn;
	int rc;

	memset(out, 0, sizeof(*out));
	if (upto_lsn == 0)
		return -EINVAL;
	rc = load_snapshot(
	    dir, upto_lsn, ops, arg, &snap_lsn, &si, &out->snaps_skipped);
	if (rc != 0)
		return rc;
	out->snap_lsn = si.lsn;
	out->snap_epoch = si.epoch;
	out->snap_entries = si.entries;
	out->last_lsn = si.lsn;
	out->epoch = si.epoch;
	rc = replay_live(dir, snap_lsn, upto_lsn, ops, arg, out);
	out->elapsed_ms = (clock_mono_ns() - t0) / 1000000;
	return rc;
}

int
recover_live_after(const char *dir, uint64_t from_lsn, uint64_t upto_lsn,
    const struct recover_ops *ops, void *arg, struct recover_result *out)
{
	int64_t t0 = clock_mono_ns();
	int rc;

	memset(out, 0, sizeof(*out));
	if (from_lsn == 0 || upto_lsn <= from_lsn)
		return -EINVAL;
	out->snap_lsn = from_lsn;
	out->last_lsn = from_lsn;
	rc = replay_live(dir, from_lsn, upto_lsn, ops, arg, out);
	out->elapsed_ms = (clock_mono_ns() - t0) / 1000000;
	return rc;
}
