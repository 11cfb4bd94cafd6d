/* sluice_log_verify - `verify` (every problem, and a verdict) and
 * `repair` (cut where the log stops being sound, keep what is cut).
 *
 * The repair plan. Recovery starts at record R (the record after the
 * newest usable snapshot, or LSN 1) and needs every record from R on, in
 * one unbroken sequence. So:
 *   - a damaged snapshot goes to lost+found (recovery then starts from an
 *     older one, or from the log);
 *   - problems before R are in segments recovery does not need: those
 *     segments go (they serve only followers). When the problem lies in
 *     the segment that holds R itself, the records from R on are copied
 *     into a new segment named R and the old file goes;
 *   - the first problem at or after R (a bad stretch, a break between
 *     segments, a torn tail, a record that does not apply) is where the
 *     log is cut: the bytes from there to the end of that segment are
 *     copied to lost+found and zeroed in place, as sluiced cuts a torn
 *     tail, and every later segment goes to lost+found;
 *   - records recovery needs that no file holds any more (the log starts
 *     after R) cannot be brought back: repair refuses.
 * Nothing is deleted. lost+found/<time>/NOTE says what each file was and
 * why it was cut; the NOTE is written before the first change, so an
 * interrupted repair can be finished by hand, and running repair again
 * continues from what is on disk. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sluice.h"
#include "sluice_log.h"
#include "util/clock.h"
#include "util/fsutil.h"

/* ---- plan ------------------------------------------------------------- */

/* Where something lies in the log: segment, then offset; a boundary sorts
 * before everything in its segment. */
struct pos {
	size_t seg;
	uint64_t off;
	bool boundary;
};

static int
pos_cmp(struct pos a, struct pos b)
{
	if (a.seg != b.seg)
		return a.seg < b.seg ? -1 : 1;
	if (a.boundary != b.boundary)
		return a.boundary ? -1 : 1;
	return a.off < b.off ? -1 : a.off > b.off;
}

/* Copies a string, cut to fit. */
static void
scopy(char *dst, size_t n, const char *src)
{
	size_t k = strlen(src);

	if (k > n - 1)
		k = n - 1;
	memcpy(dst, src, k);
	dst[k] = '\0';
}

static struct lt_act *
act(struct lt_plan *p, enum lt_act_kind kind, const char *file)
{
	struct lt_act *a;

	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 16;
		struct lt_act *na = realloc(p->acts, ncap * sizeof(*na));

		if (na == NULL)
			return NULL;
		p->acts = na;
		p->cap = ncap;
	}
	a = &p->acts[p->n++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	snprintf(a->file, sizeof(a->file), "%s", file);
	return a;
}

/* Valid records of segment `seg` with offsets in [off, end): how many, the
 * LSNs, how many are above `keep` (lost), and (find) where LSN `want`
 * lies. */
struct range {
	uint64_t off, end;
	uint64_t keep;
	uint64_t want;
	uint64_t first, last, n, lost;
	bool found;
	uint64_t found_off, found_epoch;
};

static int
range_rec(void *arg, const struct lt_dir *d, size_t seg, uint64_t off,
    const struct rec_view *v)
{
	struct range *r = arg;

	(void)d;
	(void)seg;
	if (r->want != 0 && v->hdr.lsn == r->want && !r->found) {
		r->found = true;
		r->found_off = off;
		r->found_epoch = v->hdr.epoch;
	}
	if (off < r->off || off >= r->end)
		return 0;
	if (r->n++ == 0)
		r->first = v->hdr.lsn;
	r->last = v->hdr.lsn;
	r->lost += v->hdr.lsn > r->keep;
	return 0;
}

static int
range_of(const struct lt_dir *d, size_t seg, struct range *r)
{
	static const struct lt_visit v = { range_rec, NULL };

	return lt_seg_walk(d, seg, &v, r);
}

static bool
snap_damaged(const struct lt_snap *s)
{
	return s->rc == SLUICE_ECORRUPT || (s->rc == 0 && !s->usable);
}

/* Adds a MOVE_SEG of segment i, counting what it holds. */
static int
plan_move(const struct lt_dir *d, struct lt_plan *p, size_t i, uint64_t keep,
    const char *why)
{
	struct range r = { 0, UINT64_MAX, keep, 0, 0, 0, 0, 0, false, 0, 0 };
	struct lt_act *a;
	int rc = range_of(d, i, &r);

	if (rc < 0)
		return rc;
	if ((a = act(p, LT_ACT_MOVE_SEG, d->segs[i].name)) == NULL)
		return -ENOMEM;
	a->off = 0;
	a->end = d->segs[i].size;
	a->first_lsn = r.first;
	a->last_lsn = r.last;
	a->nrec = r.n;
	a->lost = r.lost > 0;
	scopy(a->why, sizeof(a->why), why);
	if (r.lost > 0) {
		if (p->lost_first == 0 || r.first < p->lost_first)
			p->lost_first = r.first > keep ? r.first : keep + 1;
		if (r.last > p->lost_last)
			p->lost_last = r.last;
		p->lost_n += r.lost;
	}
	return 0;
}

static void
impossible(struct lt_plan *p, const char *what)
{
	p->possible = false;
	scopy(p->impossible, sizeof(p->impossible), what);
}

/* The last LSN of the nearest segment before i that holds records. */
static uint64_t
last_before(const struct lt_dir *d, size_t i, uint64_t dflt)
{
	while (i-- > 0)
		if (d->segs[i].err == 0 && d->segs[i].w.nrec > 0)
			return d->segs[i].w.last_lsn;
	return dflt;
}

/* Adds the CUT of segment `seg` from `off` to the end of its data. */
static int
plan_cut(const struct lt_dir *d, struct lt_plan *p, size_t seg, uint64_t off,
    uint64_t keep, const char *why)
{
	const struct lt_seg *s = &d->segs[seg];
	struct range r = { off, UINT64_MAX, keep, 0, 0, 0, 0, 0, false, 0, 0 };
	struct lt_act *a;
	int rc = range_of(d, seg, &r);

	if (rc < 0)
		return rc;
	if ((a = act(p, LT_ACT_CUT, s->name)) == NULL)
		return -ENOMEM;
	a->off = off;
	a->end = s->w.data_end > off ? s->w.data_end : off;
	a->first_lsn = r.first;
	a->last_lsn = r.last;
	a->nrec = r.n;
	a->lost = r.lost > 0;
	scopy(a->why, sizeof(a->why), why);
	if (r.lost > 0) {
		if (p->lost_first == 0 || r.first < p->lost_first)
			p->lost_first = r.first;
		if (r.last > p->lost_last)
			p->lost_last = r.last;
		p->lost_n += r.lost;
	}
	return 0;
}

enum fate { KEEP, PRE, POST };

/* Problems that concern the log's order (not snapshots). */
static struct pos
prob_pos(const struct lt_problem *q)
{
	return (struct pos) { (size_t)q->seg, q->off, q->boundary };
}

int
lt_repair_plan(const struct lt_dir *d, struct lt_plan *p)
{
	uint64_t S = d->snap_used >= 0 ? d->snaps[d->snap_used].info.lsn : 0;
	const struct lt_problem *P = NULL, *Q = NULL;
	struct pos startpos = { SIZE_MAX, 0, false }, qpos = { 0, 0, false };
	bool split = false, start_found = false, cut = false, header = false;
	uint64_t keep, start_epoch = 0, split_end = 0;
	struct lt_replay rp;
	enum fate *fate = NULL;
	char why[2 * LT_WHAT_MAX] = "";
	struct lt_act *a;
	size_t iR = 0;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	p->possible = true;
	for (size_t i = 0; i < d->nsnaps; i++) {
		if (!snap_damaged(&d->snaps[i]))
			continue;
		if ((a = act(p, LT_ACT_MOVE_SNAP, d->snaps[i].name)) == NULL)
			return -ENOMEM;
		a->end = d->snaps[i].size;
		snprintf(a->why, sizeof(a->why),
		    "damaged snapshot at LSN %" PRIu64
		    "; recovery starts from %s",
		    d->snaps[i].name_lsn,
		    d->snap_used >= 0 ? d->snaps[d->snap_used].name
		                      : "the log");
	}
	for (size_t i = 0; i < d->nprobs; i++) {
		const struct lt_problem *q = &d->probs[i];

		if (q->kind == LT_IOERR) {
			snprintf(why, sizeof(why),
			    "%s cannot be read; make it readable (or copy "
			    "the directory to a sound disk) and run repair "
			    "again",
			    q->file);
			impossible(p, why);
			return 0;
		}
		if (q->fatal) {
			snprintf(why, sizeof(why),
			    "%s: %s. No repair brings those records back: "
			    "restore the missing files from a backup, or "
			    "rebuild this node from its leader",
			    q->file, q->what);
			impossible(p, why);
			return 0;
		}
	}
	p->keep_last = d->start <= d->last_lsn ? d->last_lsn : S;
	if (d->nsegs == 0)
		return 0;
	fate = calloc(d->nsegs, sizeof(*fate));
	if (fate == NULL)
		return -ENOMEM;

	/* Where record R, the first recovery replays, lies. */
	for (size_t i = 0; d->start <= d->last_lsn && i < d->nsegs; i++) {
		struct range r = { 0, 0, 0, d->start, 0, 0, 0, 0, false, 0, 0 };
		const struct lt_seg *s = &d->segs[i];

		if (s->err != 0 || s->w.nrec == 0 || s->w.last_lsn < d->start)
			continue;
		rc = range_of(d, i, &r);
		if (rc < 0)
			goto out;
		if (r.found) {
			start_found = true;
			iR = i;
			startpos = (struct pos) { i, r.found_off, false };
			start_epoch = r.found_epoch;
			break;
		}
	}
	if (d->start <= d->last_lsn && !start_found) {
		/* R itself is lost in damage: nothing after the snapshot
		 * can be replayed in sequence. Every segment goes. */
		p->keep_last = S;
		snprintf(why, sizeof(why),
		    "LSN %" PRIu64 ", where recovery starts, is lost in damage",
		    d->start);
		for (size_t i = d->nsegs; i-- > 0 && rc == 0;)
			rc = plan_move(d, p, i, S, why);
		goto out;
	}

	/* Problems before R: the segments up to the last of them go. */
	for (size_t i = 0; i < d->nprobs; i++) {
		const struct lt_problem *q = &d->probs[i];

		if (q->seg < 0 || q->kind == LT_TORN || q->mark_only ||
		    pos_cmp(prob_pos(q), startpos) >= 0)
			continue;
		if (P == NULL || pos_cmp(prob_pos(q), prob_pos(P)) > 0)
			P = q;
	}
	if (P != NULL) {
		size_t lim = P->boundary ? (size_t)P->seg : (size_t)P->seg + 1;

		if (start_found && !P->boundary && (size_t)P->seg == iR) {
			split = true; /* the records from R on move */
			lim = iR;
		}
		for (size_t i = 0; i < lim && i < d->nsegs; i++)
			fate[i] = PRE;
	}

	/* The first problem from R on, or the first record that does not
	 * apply, is where the log is cut. */
	for (size_t i = 0; i < d->nprobs; i++) {
		const struct lt_problem *q = &d->probs[i];

		if (q->seg < 0 || fate[q->seg] != KEEP || q->mark_only)
			continue;
		if (q->kind != LT_TORN && pos_cmp(prob_pos(q), startpos) < 0)
			continue;
		if (Q == NULL || pos_cmp(prob_pos(q), qpos) < 0) {
			Q = q;
			qpos = prob_pos(q);
		}
	}
	if (Q != NULL) {
		cut = true;
		header = Q->boundary || qpos.off <= SEG_HDR_SIZE;
		keep = header ? last_before(d, qpos.seg, S) : Q->lsn_before;
		scopy(why, sizeof(why), Q->what);
	} else {
		keep = p->keep_last;
	}
	rc = lt_replay_run(d, 0, &rp);
	if (rc == 0 && rp.failed &&
	    (!cut ||
	        pos_cmp((struct pos) { rp.fail_seg, rp.fail_off, false },
	            qpos) < 0)) {
		cut = true;
		header = false;
		qpos = (struct pos) { rp.fail_seg, rp.fail_off, false };
		keep = rp.fail_lsn - 1;
		snprintf(why, sizeof(why),
		    "record LSN %" PRIu64 " is whole but does not apply (%s)",
		    rp.fail_lsn, sluice_strerror(rp.fail_rc));
	}
	lt_replay_free(&rp);
	if (rc != 0)
		goto out;
	if (keep < S)
		keep = S;
	p->keep_last = keep;
	if (split)
		split_end = cut && qpos.seg == iR && !header
		    ? qpos.off
		    : d->segs[iR].w.end;

	/* The actions, in the order they run: the new segment first, then
	 * what is cut from the end (newest first), then what goes from the
	 * front (oldest first), then the new segment takes its place. */
	if (split) {
		const struct lt_seg *s = &d->segs[iR];

		if ((a = act(p, LT_ACT_SPLIT, s->name)) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		a->off = startpos.off;
		a->end = split_end;
		seg_name(a->to, d->start);
		a->epoch = start_epoch;
		a->first_lsn = d->start;
		a->last_lsn = keep;
		snprintf(a->why, sizeof(a->why),
		    "damage lies before LSN %" PRIu64
		    " in the same segment; the records from there on are "
		    "sound",
		    d->start);
	}
	if (cut) {
		size_t from = header ? qpos.seg : qpos.seg + 1;

		for (size_t i = d->nsegs; i-- > from && rc == 0;) {
			if (fate[i] != KEEP)
				continue;
			fate[i] = POST;
			rc = plan_move(d, p, i, keep,
			    i == qpos.seg ? why
			                  : "after the point where the log is "
			                    "cut");
		}
		if (rc == 0 && !header && !(split && qpos.seg == iR))
			rc = plan_cut(d, p, qpos.seg, qpos.off, keep, why);
		if (rc != 0)
			goto out;
	}
	if (split)
		fate[iR] = PRE;
	for (size_t i = 0; i < d->nsegs && rc == 0; i++) {
		if (fate[i] != PRE)
			continue;
		if (split && i == iR)
			snprintf(why, sizeof(why),
			    "replaced by the new segment that holds its "
			    "records from LSN %" PRIu64 " on",
			    d->start);
		else if (P != NULL && i == (size_t)P->seg && !P->boundary)
			snprintf(why, sizeof(why),
			    "damaged, and older than the snapshot at LSN "
			    "%" PRIu64 ", which covers its records",
			    S);
		else
			snprintf(why, sizeof(why),
			    "older than the snapshot at LSN %" PRIu64
			    " (which covers its records) and cut off from the "
			    "log by the problem after it",
			    S);
		rc = plan_move(d, p, i, keep, why);
	}
	if (rc == 0 && split) {
		if ((a = act(p, LT_ACT_PUBLISH, d->segs[iR].name)) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		seg_name(a->to, d->start);
		snprintf(a->why, sizeof(a->why),
		    "the new segment takes its place in the log");
	}
out:
	/* Records the log had synced that no file holds any more are lost
	 * too (the DURABLE mark; repair lowers it to what it keeps). */
	if (rc == 0 && d->mark.lsn > p->keep_last) {
		if (d->mark.lsn > p->lost_last)
			p->lost_last = d->mark.lsn;
		if (p->lost_n == 0)
			p->lost_first = p->keep_last + 1;
		p->lower_mark = true;
	}
	/* Whatever lies past what is kept is lost, readable or not. */
	if (rc == 0 && p->lost_n > 0)
		p->lost_first = p->keep_last + 1;
	free(fate);
	return rc;
}

void
lt_plan_free(struct lt_plan *p)
{
	free(p->acts);
	p->acts = NULL;
	p->n = p->cap = 0;
}

/* "LSN 7" or "LSN 7..9". */
static const char *
lsn_span(char *out, size_t n, uint64_t first, uint64_t last)
{
	if (first == last)
		snprintf(out, n, "LSN %" PRIu64, first);
	else
		snprintf(out, n, "LSN %" PRIu64 "..%" PRIu64, first, last);
	return out;
}

/* "1 record", "2 records" */
static const char *
records(char *out, size_t n, uint64_t count)
{
	snprintf(out, n, "%" PRIu64 " record%s", count, count == 1 ? "" : "s");
	return out;
}

void
lt_act_describe(const struct lt_act *a, bool dry, struct buf *out)
{
	char lsns[128] = "", span[64], nr[40];

	if (a->nrec > 0)
		snprintf(lsns, sizeof(lsns), ", %s (%s%s)",
		    lsn_span(span, sizeof(span), a->first_lsn, a->last_lsn),
		    records(nr, sizeof(nr), a->nrec),
		    a->lost ? ", LOST to the queue" : "");
	switch (a->kind) {
	case LT_ACT_MOVE_SNAP:
		buf_printf(out, "%s %s to lost+found: %s\n",
		    dry ? "would move" : "moved", a->file, a->why);
		break;
	case LT_ACT_MOVE_SEG:
		buf_printf(out, "%s %s to lost+found%s: %s\n",
		    dry ? "would move" : "moved", a->file, lsns, a->why);
		break;
	case LT_ACT_CUT:
		buf_printf(out,
		    "%s %s at offset %" PRIu64 ": %" PRIu64
		    " bytes copied to lost+found, then zeroed%s: %s\n",
		    dry ? "would cut" : "cut", a->file, a->off, a->end - a->off,
		    lsns, a->why);
		break;
	case LT_ACT_SPLIT:
		buf_printf(out,
		    "%s %s from %s bytes %" PRIu64 "..%" PRIu64 " (LSN %" PRIu64
		    " on): %s\n",
		    dry ? "would write" : "wrote", a->to, a->file, a->off,
		    a->end, a->first_lsn, a->why);
		break;
	case LT_ACT_PUBLISH:
		buf_printf(out, "%s %s into place: %s\n",
		    dry ? "would put" : "put", a->to, a->why);
		break;
	}
}

/* ---- apply ------------------------------------------------------------ */

enum { COPY_CHUNK = 1 << 20 };

/* Copies the header of segment `src` and its bytes [off, end) into a new
 * file `dst` at the same offsets, the bytes between left a hole, and syncs
 * it: a segment file that `sluice-log dump` reads like any other (it
 * sees zeros, then the records that were cut). */
static int
copy_range(const char *src, uint64_t off, uint64_t end, const char *dst)
{
	uint8_t *buf = malloc(COPY_CHUNK);
	int in = -1, out = -1, rc = 0;

	if (buf == NULL)
		return -ENOMEM;
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (in < 0 || out < 0) {
		rc = -errno;
		goto done;
	}
	if (off > SEG_HDR_SIZE) {
		rc = fs_pread_all(in, buf, SEG_HDR_SIZE, 0);
		if (rc == 0)
			rc = fs_pwrite_all(out, buf, SEG_HDR_SIZE, 0);
	}
	for (uint64_t at = off; at < end && rc == 0;) {
		size_t n =
		    end - at < COPY_CHUNK ? (size_t)(end - at) : COPY_CHUNK;

		rc = fs_pread_all(in, buf, n, (int64_t)at);
		if (rc == 0)
			rc = fs_pwrite_all(out, buf, n, (int64_t)at);
		at += n;
	}
	if (rc == 0 && ftruncate(out, (off_t)end) < 0)
		rc = -errno;
	if (rc == 0 && fsync(out) < 0)
		rc = -errno;
done:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	free(buf);
	if (rc != 0 && out >= 0)
		unlink(dst);
	return rc;
}

/* The new segment of a split: a header for `first` and the records copied
 * from `src` [off, end), in a file preallocated to the old one's size. */
static int
write_split(const char *src, const struct lt_seg *old, const struct lt_act *a,
    const char *dst)
{
	uint64_t bytes = a->end - a->off;
	uint64_t size = old->w.hdr_ok ? old->w.hdr.size : old->size;
	struct seg_hdr h = { 0 };
	uint8_t hdr[SEG_HDR_SIZE];
	uint8_t *buf = NULL;
	int in, fd = -1, rc;

	if (size < SEG_HDR_SIZE + bytes)
		size = SEG_HDR_SIZE + bytes;
	size = (size + SEG_ALIGN - 1) / SEG_ALIGN * SEG_ALIGN;
	if (size < SEG_SIZE_MIN)
		size = SEG_SIZE_MIN;
	unlink(dst); /* a leftover of an interrupted repair */
	rc = seg_prealloc(dst, size, true, &fd);
	if (rc != 0)
		return rc;
	h.version = SEG_VERSION;
	h.hdr_size = SEG_HDR_SIZE;
	h.first_lsn = a->first_lsn;
	h.epoch = a->epoch;
	h.created = clock_now_ms();
	h.size = size;
	seg_hdr_encode(hdr, &h);
	rc = fs_pwrite_all(fd, hdr, sizeof(hdr), 0);
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && (buf = malloc(COPY_CHUNK)) == NULL)
		rc = -ENOMEM;
	for (uint64_t at = a->off; rc == 0 && at < a->end;) {
		size_t n = a->end - at < COPY_CHUNK ? (size_t)(a->end - at)
		                                    : COPY_CHUNK;

		rc = fs_pread_all(in, buf, n, (int64_t)at);
		if (rc == 0)
			rc = fs_pwrite_all(
			    fd, buf, n, (int64_t)(SEG_HDR_SIZE + at - a->off));
		at += n;
	}
	if (rc == 0 && fdatasync(fd) < 0)
		rc = -errno;
	free(buf);
	if (in >= 0)
		close(in);
	close(fd);
	if (rc != 0)
		unlink(dst);
	return rc;
}

int
lt_make_lost_found(const struct lt_dir *d, char *out, size_t n)
{
	char lf[PATH_MAX], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	lt_path(d, "lost+found", lf, sizeof(lf));
	if (mkdir(lf, 0755) < 0 && errno != EEXIST)
		return -errno;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (int k = 1; k <= 100; k++) {
		if (k == 1)
			rc = snprintf(out, n, "%s/%s", lf, stamp);
		else
			rc = snprintf(out, n, "%s/%s-%d", lf, stamp, k);
		if (rc < 0 || (size_t)rc >= n)
			return -ENAMETOOLONG;
		if (mkdir(out, 0755) == 0) {
			rc = fs_sync_dir(lf);
			return rc == 0 ? fs_sync_dir(d->path) : rc;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int
move_file(const struct lt_dir *d, const char *name, const char *lf)
{
	char from[PATH_MAX], to[PATH_MAX];

	lt_path(d, name, from, sizeof(from));
	if (fs_join(to, sizeof(to), lf, name) != 0)
		return -ENAMETOOLONG;
	if (rename(from, to) < 0)
		return -errno;
	return 0;
}

static int
write_note(const char *path, const struct lt_dir *d, const struct lt_plan *p,
    const char *status)
{
	char now[40], full[PATH_MAX], span[64], nr[40];
	struct buf b;
	FILE *f;
	int rc = 0;

	buf_init(&b);
	lt_time(clock_now_ms(), now, sizeof(now));
	if (realpath(d->path, full) == NULL)
		snprintf(full, sizeof(full), "%s", d->path);
	buf_printf(&b,
	    "sluice-log repair of %s\n%s at %s\n"
	    "the log keeps records up to LSN %" PRIu64 "\n",
	    full, status, now, p->keep_last);
	if (p->lost_n > 0 || p->lower_mark)
		buf_printf(&b,
		    "lost to the queue: %s (whole among them: %s; their bytes "
		    "are here)\n",
		    lsn_span(span, sizeof(span), p->lost_first, p->lost_last),
		    records(nr, sizeof(nr), p->lost_n));
	else
		buf_printf(&b, "no record the queue needs is lost\n");
	buf_printf(&b,
	    "\n`sluice-log dump` on this directory prints every record kept "
	    "here.\n\nfiles here:\n");
	for (size_t i = 0; i < p->n; i++) {
		const struct lt_act *a = &p->acts[i];

		switch (a->kind) {
		case LT_ACT_MOVE_SEG:
		case LT_ACT_MOVE_SNAP:
			buf_printf(&b, "%s  the whole %s (%" PRIu64 " bytes)",
			    a->file,
			    a->kind == LT_ACT_MOVE_SEG ? "segment" : "snapshot",
			    a->end);
			break;
		case LT_ACT_CUT:
			buf_printf(&b,
			    "%s  bytes %" PRIu64 "..%" PRIu64
			    " cut from the segment, at their offsets (its "
			    "header is copied, the bytes between are a hole)",
			    a->file, a->off, a->end);
			break;
		default:
			continue;
		}
		if (a->nrec > 0)
			buf_printf(&b, ", %s (%s)",
			    lsn_span(
			        span, sizeof(span), a->first_lsn, a->last_lsn),
			    records(nr, sizeof(nr), a->nrec));
		buf_printf(&b, "\n    why: %s\n", a->why);
	}
	buf_printf(&b, "\nsteps:\n");
	for (size_t i = 0; i < p->n; i++)
		lt_act_describe(&p->acts[i], false, &b);
	f = fopen(path, "w");
	if (f == NULL) {
		buf_fini(&b);
		return -errno;
	}
	if (!lt_flush(&b, f) || fflush(f) != 0 || fsync(fileno(f)) < 0)
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	buf_fini(&b);
	return rc;
}

/* A segment cut short by something other than the writer gets its
 * preallocated size back (zeros past its data), as sluiced expects. */
static int
restore_size(const char *path)
{
	uint8_t hdr[SEG_HDR_SIZE];
	struct seg_hdr h;
	struct stat st;
	int fd, rc = 0;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (fs_pread_all(fd, hdr, sizeof(hdr), 0) == 0 &&
	    seg_hdr_decode(hdr, sizeof(hdr), &h) == 0 &&
	    (uint64_t)st.st_size < h.size) {
		if (fallocate(fd, 0, 0, (off_t)h.size) < 0 &&
		    ftruncate(fd, (off_t)h.size) < 0)
			rc = -errno;
		if (rc == 0 && fdatasync(fd) < 0)
			rc = -errno;
	}
	close(fd);
	return rc;
}

static const struct lt_seg *
seg_named(const struct lt_dir *d, const char *name)
{
	for (size_t i = 0; i < d->nsegs; i++)
		if (strcmp(d->segs[i].name, name) == 0)
			return &d->segs[i];
	return NULL;
}

static int
do_act(const struct lt_dir *d, const struct lt_act *a, const char *lf)
{
	char src[PATH_MAX], dst[2 * PATH_MAX];
	int rc;

	lt_path(d, a->file, src, sizeof(src));
	switch (a->kind) {
	case LT_ACT_MOVE_SNAP:
	case LT_ACT_MOVE_SEG:
		rc = move_file(d, a->file, lf);
		if (rc == 0)
			rc = fs_sync_dir(lf);
		return rc == 0 ? fs_sync_dir(d->path) : rc;
	case LT_ACT_CUT:
		snprintf(dst, sizeof(dst), "%s/%s", lf, a->file);
		rc = copy_range(src, a->off, a->end, dst);
		if (rc == 0)
			rc = fs_sync_dir(lf);
		if (rc == 0)
			rc = seg_cut(src, a->off, a->end - a->off);
		return rc == 0 ? restore_size(src) : rc;
	case LT_ACT_SPLIT:
		lt_path(d, a->to, dst, sizeof(dst));
		strncat(dst, ".repair", sizeof(dst) - strlen(dst) - 1);
		return write_split(src, seg_named(d, a->file), a, dst);
	case LT_ACT_PUBLISH:
		lt_path(d, a->to, src, sizeof(src));
		snprintf(dst, sizeof(dst), "%s.repair", src);
		if (rename(dst, src) < 0)
			return -errno;
		return fs_sync_dir(d->path);
	}
	return -EINVAL;
}

int
lt_repair_apply(const struct lt_dir *d, const struct lt_plan *p, FILE *out)
{
	char lf[PATH_MAX], notep[PATH_MAX + 8];
	struct buf b;
	int lock = -1, rc;

	rc = fs_lock_dir(d->path, &lock);
	if (rc != 0) {
		fprintf(stderr, "sluice-log: %s: %s; nothing was changed\n",
		    d->path,
		    rc == -EBUSY ? "a sluiced is running on it (it holds "
		                   "the LOCK): stop it first"
		                 : strerror(-rc));
		return LT_EXIT_DAMAGE;
	}
	rc = lt_make_lost_found(d, lf, sizeof(lf));
	if (rc == 0) {
		snprintf(notep, sizeof(notep), "%s/NOTE", lf);
		rc = write_note(notep, d, p, "started");
	}
	if (rc != 0) {
		fprintf(stderr,
		    "sluice-log: cannot make %s/lost+found: %s; nothing was "
		    "changed\n",
		    d->path, strerror(-rc));
		close(lock);
		return LT_EXIT_IO;
	}
	if (p->lower_mark) {
		/* What the log keeps is all it has synced from now on. */
		rc = durable_lower(d->path, p->keep_last);
		if (rc != 0) {
			fprintf(stderr,
			    "sluice-log: cannot lower the DURABLE mark of %s: "
			    "%s; nothing was changed\n",
			    d->path, strerror(-rc));
			close(lock);
			return LT_EXIT_IO;
		}
		fprintf(out,
		    "lowered the DURABLE mark from LSN %" PRIu64
		    " to LSN %" PRIu64 ": the records after it are gone\n",
		    d->mark.lsn, p->keep_last);
	}
	buf_init(&b);
	for (size_t i = 0; i < p->n; i++) {
		rc = do_act(d, &p->acts[i], lf);
		if (rc != 0) {
			buf_printf(&b, "FAILED: ");
			lt_act_describe(&p->acts[i], true, &b);
			lt_flush(&b, out);
			fprintf(stderr,
			    "sluice-log: step %zu of %zu failed: %s; %s says "
			    "what was planned, the steps before this one "
			    "are done\n",
			    i + 1, p->n, sluice_strerror(rc), notep);
			buf_fini(&b);
			close(lock);
			return rc < 0 && rc != -ENOMEM ? LT_EXIT_IO
			                               : LT_EXIT_DAMAGE;
		}
		lt_act_describe(&p->acts[i], false, &b);
		lt_flush(&b, out);
	}
	rc = write_note(notep, d, p, "done");
	buf_printf(&b, "lost+found: %s (NOTE says what each file was)\n", lf);
	lt_flush(&b, out);
	buf_fini(&b);
	close(lock);
	return rc == 0 ? LT_EXIT_OK : LT_EXIT_IO;
}

/* ---- verify ----------------------------------------------------------- */

static const char *
kind_label(enum lt_kind k)
{
	switch (k) {
	case LT_TORN:
		return "torn";
	case LT_DAMAGE:
		return "DAMAGE";
	case LT_IOERR:
		return "UNREADABLE";
	}
	return "?";
}

static const char *
seg_status(const struct lt_dir *d, size_t i)
{
	const char *st = "ok";

	for (size_t k = 0; k < d->nprobs; k++) {
		const struct lt_problem *p = &d->probs[k];

		if (p->seg != (int)i || p->boundary)
			continue;
		if (p->kind == LT_IOERR)
			return "UNREADABLE";
		if (p->kind == LT_DAMAGE)
			st = "DAMAGED";
		else if (strcmp(st, "ok") == 0)
			st = "torn tail";
	}
	return st;
}

static void
print_files(const struct lt_dir *d, struct buf *b)
{
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct lt_seg *s = &d->segs[i];
		char sz[32];

		lt_size(s->size, sz, sizeof(sz));
		if (s->err != 0) {
			buf_printf(b, "  %s  %s\n", s->name, seg_status(d, i));
			continue;
		}
		if (s->w.nrec > 0)
			buf_printf(b,
			    "  %s  LSN %" PRIu64 "..%" PRIu64 "  epoch %" PRIu64
			    "  %" PRIu64 " records  %s  %s\n",
			    s->name, s->w.first_lsn, s->w.last_lsn,
			    s->w.last_epoch, s->w.nrec, sz, seg_status(d, i));
		else
			buf_printf(b, "  %s  no records  %s  %s\n", s->name, sz,
			    seg_status(d, i));
	}
	for (size_t i = 0; i < d->nsnaps; i++) {
		const struct lt_snap *s = &d->snaps[i];
		const char *st = s->usable ? "ok" : "DAMAGED";
		char sz[32];

		if (s->rc < 0)
			st = "UNREADABLE";
		lt_size(s->size, sz, sizeof(sz));
		if (s->rc == 0)
			buf_printf(b,
			    "  %s  snapshot LSN %" PRIu64 "  epoch %" PRIu64
			    "  %" PRIu64 " entries  %s  %s%s\n",
			    s->name, s->info.lsn, s->info.epoch,
			    s->info.entries, sz, st,
			    (int)i == d->snap_used ? " (recovery starts here)"
			                           : "");
		else
			buf_printf(
			    b, "  %s  snapshot  %s  %s\n", s->name, sz, st);
	}
}

static void
print_problem(const struct lt_problem *p, struct buf *b)
{
	buf_printf(b, "%-10s %s", kind_label(p->kind), p->file);
	if (p->has_off)
		buf_printf(b, " offset %" PRIu64, p->off);
	else if (p->boundary)
		buf_printf(b, " (its start)");
	buf_printf(b, ": %s\n", p->what);
}

static void
print_verdict(const struct lt_dir *d, const struct lt_replay *r,
    const struct lt_plan *plan, const struct lt_salvage *sv, struct buf *b)
{
	size_t damage = lt_dir_count(d, LT_DAMAGE);
	size_t io = lt_dir_count(d, LT_IOERR);
	size_t torn = lt_dir_count(d, LT_TORN);
	char span[64], nr[40];
	bool stops = false, seg_damage = false;

	for (size_t i = 0; i < d->nprobs; i++)
		if (d->probs[i].recovery && d->probs[i].kind != LT_TORN)
			stops = true;
	if (damage + io + torn == 0) {
		buf_printf(b, "verdict: sound. ");
		if (r->snap_lsn != 0)
			buf_printf(b,
			    "sluiced starts from the snapshot at LSN %" PRIu64
			    " and replays %" PRIu64 " records to LSN %" PRIu64
			    ".\n",
			    r->snap_lsn, r->records, r->last_lsn);
		else if (d->nsegs == 0 && d->nsnaps == 0)
			buf_printf(b,
			    "An empty log: sluiced begins a new "
			    "one here.\n");
		else
			buf_printf(b,
			    "sluiced replays %" PRIu64
			    " records to LSN %" PRIu64 ".\n",
			    r->records, r->last_lsn);
		return;
	}
	if (damage + io == 0) {
		if (d->mark.lsn != 0)
			buf_printf(b,
			    "verdict: a torn tail only: the last write before "
			    "a crash, cut short, after LSN %" PRIu64
			    ", the last the log had synced (its DURABLE "
			    "mark): under --fsync always no record in it was "
			    "acknowledged. ",
			    d->mark.lsn);
		else
			buf_printf(b,
			    "verdict: a torn tail only, by the segment's own "
			    "rules (a prefix of the next record, then zeros). "
			    "This directory has no DURABLE mark, so whether "
			    "that record was acknowledged cannot be told from "
			    "the files. ");
		buf_printf(b,
		    "sluiced cuts it at start (and logs segment, offset and "
		    "bytes). `sluice-log repair %s` cuts it now and keeps a "
		    "copy in lost+found.\n",
		    d->path);
		return;
	}
	if (io > 0 && damage == 0) {
		buf_printf(b,
		    "verdict: some files cannot be read; fix that first (see "
		    "above).\n");
		return;
	}
	for (size_t i = 0; i < d->nprobs; i++)
		if (d->probs[i].kind == LT_DAMAGE && d->probs[i].seg >= 0)
			seg_damage = true;
	buf_printf(b, "verdict: DAMAGED%s. %s\n",
	    stops ? " where recovery reads" : " outside what recovery reads",
	    stops ? "sluiced will not start on this directory."
	        : seg_damage
	        ? "sluiced starts; followers that need those records "
	          "cannot get them from this node until it is repaired."
	        : d->snap_used >= 0
	        ? "sluiced starts from an older snapshot (and logs "
	          "DAMAGED SNAPSHOT); repair moves the damaged one to "
	          "lost+found."
	        : "sluiced starts from the log alone (and logs DAMAGED "
	          "SNAPSHOT); repair moves the damaged one to lost+found.");
	if (!plan->possible) {
		buf_printf(b, "repair cannot fix it: %s\n", plan->impossible);
		return;
	}
	if (sv != NULL) {
		buf_printf(b,
		    "`sluice-log repair %s` would salvage: keep %" PRIu64
		    " whole record%s after the snapshot at LSN %" PRIu64
		    " (the log to LSN %" PRIu64
		    ", in a new snapshot), and lose %" PRIu64
		    " LSN%s no whole record holds and %" PRIu64
		    " record%s the queue refuses (`repair --dry-run` names "
		    "each). `repair --cut-at-damage` would instead keep the "
		    "log up to LSN %" PRIu64 ".\n",
		    d->path, sv->kept, sv->kept == 1 ? "" : "s", sv->snap_lsn,
		    sv->last_lsn, sv->gone, sv->gone == 1 ? "" : "s",
		    sv->refused, sv->refused == 1 ? "" : "s", plan->keep_last);
		buf_printf(b,
		    "run `sluice-log repair --dry-run %s` for what is lost.\n",
		    d->path);
		return;
	}
	buf_printf(b,
	    "`sluice-log repair %s` would keep the log up to LSN %" PRIu64,
	    d->path, plan->keep_last);
	if (plan->lost_n > 0 || plan->lower_mark)
		buf_printf(b,
		    " and lose %s to the queue (whole among them: %s; their "
		    "bytes go to lost+found).\n",
		    lsn_span(
		        span, sizeof(span), plan->lost_first, plan->lost_last),
		    records(nr, sizeof(nr), plan->lost_n));
	else
		buf_printf(b,
		    "; no record the queue needs is lost (what it moves goes "
		    "to lost+found).\n");
	buf_printf(b, "run `sluice-log repair --dry-run %s` for each step.\n",
	    d->path);
}

static void
verify_usage(FILE *f)
{
	fputs("usage: sluice-log verify DIR\n"
	      "Checks every checksum, LSN continuity, segment and snapshot "
	      "headers.\n"
	      "Exit: 0 sound, 1 damage, 2 usage, 3 torn tail only, 4 not a "
	      "data directory, 5 unreadable.\n",
	    f);
}

int
lt_cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lt_replay r;
	struct lt_plan plan;
	struct lt_salvage sv;
	struct lt_dir d;
	bool have_sv = false;
	struct buf b;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			verify_usage(stdout);
			return LT_EXIT_OK;
		}
		verify_usage(stderr);
		return LT_EXIT_USAGE;
	}
	if (optind + 1 != argc) {
		verify_usage(stderr);
		return LT_EXIT_USAGE;
	}
	rc = lt_open_checked(argv[optind], &d, NULL, NULL);
	if (rc != LT_EXIT_OK)
		return rc;
	rc = lt_dir_check_replay(&d, &r);
	if (rc != 0) {
		fprintf(stderr, "sluice-log: replaying %s: %s\n", d.path,
		    sluice_strerror(rc));
		lt_replay_free(&r);
		lt_dir_free(&d);
		return LT_EXIT_IO;
	}
	rc = lt_repair_plan(&d, &plan);
	memset(&sv, 0, sizeof(sv));
	if (rc == 0 && plan.possible && (plan.lost_n > 0 || plan.lower_mark))
		have_sv = lt_salvage_run(&d, &sv) == 0;
	buf_init(&b);
	if (d.nentries == 0) {
		buf_printf(&b,
		    "%s: empty: a valid empty log (sluiced begins a new one "
		    "here)\n",
		    d.path);
	} else {
		buf_printf(&b, "%s: %zu segment%s", d.path, d.nsegs,
		    d.nsegs == 1 ? "" : "s");
		if (d.nrec > 0)
			buf_printf(&b,
			    ", LSN %" PRIu64 "..%" PRIu64 " (%" PRIu64
			    " records)",
			    d.first_lsn, d.last_lsn, d.nrec);
		buf_printf(&b, ", %zu snapshot%s\n", d.nsnaps,
		    d.nsnaps == 1 ? "" : "s");
		print_files(&d, &b);
	}
	if (d.nprobs > 0)
		buf_printf(&b, "\n");
	for (size_t i = 0; i < d.nprobs; i++)
		print_problem(&d.probs[i], &b);
	for (size_t i = 0; i < d.nnotes; i++)
		buf_printf(&b, "note       %s\n", d.notes[i]);
	buf_printf(&b, "\n");
	if (rc == 0)
		print_verdict(&d, &r, &plan, have_sv ? &sv : NULL, &b);
	lt_flush(&b, stdout);
	buf_fini(&b);
	rc = lt_dir_exit(&d);
	lt_salvage_free(&sv);
	lt_plan_free(&plan);
	lt_replay_free(&r);
	lt_dir_free(&d);
	return rc;
}

/* ---- repair ----------------------------------------------------------- */

static void
repair_usage(FILE *f)
{
	fputs("usage: sluice-log repair [--dry-run] [--cut-at-damage] DIR\n"
	      "Makes a damaged directory one sluiced starts on. A torn tail "
	      "is cut. When\n"
	      "cutting would lose records, it salvages: every whole record "
	      "that applies\n"
	      "is kept (in a new snapshot), and what is lost is named "
	      "(lost+found/<time>/LOST).\n"
	      "--cut-at-damage: cut the log at the first damage instead "
	      "(keeps the log a\n"
	      "prefix of itself, LSN for LSN). Nothing is deleted: what "
	      "goes is moved to\n"
	      "DIR/lost+found/<time>/ with a NOTE. --dry-run changes "
	      "nothing.\n"
	      "Exit: 0 the directory is sound (after the repair), 1 it "
	      "cannot be repaired,\n"
	      "2 usage, 4 not a data directory, 5 unreadable.\n",
	    f);
}

int
lt_cmd_repair(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "cut-at-damage", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lt_replay r;
	struct lt_plan plan;
	struct lt_salvage sv;
	struct lt_dir d;
	char span[64], nr[40];
	bool dry = false, cut_only = false;
	struct buf b;
	int c, rc;

	memset(&sv, 0, sizeof(sv));
	while ((c = getopt_long(argc, argv, "nh", opts, NULL)) != -1) {
		if (c == 'n') {
			dry = true;
		} else if (c == 'c') {
			cut_only = true;
		} else if (c == 'h') {
			repair_usage(stdout);
			return LT_EXIT_OK;
		} else {
			repair_usage(stderr);
			return LT_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		repair_usage(stderr);
		return LT_EXIT_USAGE;
	}
	rc = lt_open_checked(argv[optind], &d, NULL, NULL);
	if (rc != LT_EXIT_OK)
		return rc;
	if (d.running && !dry) {
		fprintf(stderr,
		    "sluice-log: %s: a sluiced is running on it (it holds the "
		    "LOCK): stop it first; nothing was changed\n",
		    d.path);
		lt_dir_free(&d);
		return LT_EXIT_DAMAGE;
	}
	rc = lt_dir_check_replay(&d, &r);
	lt_replay_free(&r);
	if (rc == 0)
		rc = lt_repair_plan(&d, &plan);
	if (rc != 0) {
		fprintf(stderr, "sluice-log: %s: %s\n", d.path,
		    sluice_strerror(rc));
		lt_dir_free(&d);
		return LT_EXIT_IO;
	}
	buf_init(&b);
	if (!plan.possible) {
		for (size_t i = 0; i < d.nprobs; i++)
			print_problem(&d.probs[i], &b);
		lt_flush(&b, stdout);
		fprintf(stderr, "sluice-log: cannot repair %s: %s\n", d.path,
		    plan.impossible);
		rc = LT_EXIT_DAMAGE;
		goto out;
	}
	if (plan.n == 0 && !plan.lower_mark) {
		buf_printf(&b, "%s: nothing to repair\n", d.path);
		lt_flush(&b, stdout);
		rc = LT_EXIT_OK;
		goto out;
	}
	if (!cut_only && (plan.lost_n > 0 || plan.lower_mark)) {
		/* Cutting would lose records the log had synced: salvage
		 * every whole one, and name what is lost. */
		rc = lt_salvage_run(&d, &sv);
		if (rc != 0) {
			fprintf(stderr, "sluice-log: %s: salvage: %s\n", d.path,
			    sluice_strerror(rc));
			rc = LT_EXIT_IO;
			goto out;
		}
		if (dry)
			buf_printf(&b,
			    "%s: repair would salvage (nothing changed; "
			    "--cut-at-damage would keep the log only up to LSN "
			    "%" PRIu64 "):\n",
			    d.path, plan.keep_last);
		lt_salvage_describe(&sv, dry, &b);
		lt_flush(&b, stdout);
		if (dry) {
			rc = LT_EXIT_OK;
			goto out;
		}
		rc = lt_salvage_apply(&d, &sv, stdout);
		if (rc == LT_EXIT_OK)
			goto check;
		goto out;
	}
	if (dry) {
		buf_printf(&b, "%s: repair would do this (nothing changed):\n",
		    d.path);
		for (size_t i = 0; i < plan.n; i++)
			lt_act_describe(&plan.acts[i], true, &b);
	}
	buf_printf(&b, "the log %s records up to LSN %" PRIu64 "; ",
	    dry ? "would keep" : "keeps", plan.keep_last);
	if (plan.lost_n > 0 || plan.lower_mark)
		buf_printf(&b,
		    "%slost to the queue: %s (whole among them: %s, kept in "
		    "lost+found)\n",
		    dry ? "would be " : "",
		    lsn_span(
		        span, sizeof(span), plan.lost_first, plan.lost_last),
		    records(nr, sizeof(nr), plan.lost_n));
	else
		buf_printf(&b, "no record the queue needs is lost\n");
	lt_flush(&b, stdout);
	if (dry) {
		rc = LT_EXIT_OK;
		goto out;
	}
	rc = lt_repair_apply(&d, &plan, stdout);
check:
	if (rc == LT_EXIT_OK) {
		/* Check what is left, as verify would. */
		struct lt_dir after;
		int vr;

		vr = lt_open_checked(d.path, &after, NULL, NULL);
		if (vr == LT_EXIT_OK) {
			vr = lt_dir_check_replay(&after, &r);
			lt_replay_free(&r);
			if (vr == 0)
				vr = lt_dir_exit(&after);
			for (size_t i = 0; i < after.nprobs; i++)
				print_problem(&after.probs[i], &b);
			lt_dir_free(&after);
		}
		if (vr == LT_EXIT_OK)
			buf_printf(
			    &b, "%s: sound now; sluiced can start\n", d.path);
		else
			buf_printf(&b,
			    "%s: still not sound after the repair (see "
			    "above); run `sluice-log verify %s`\n",
			    d.path, d.path);
		lt_flush(&b, stdout);
		rc = vr == LT_EXIT_OK ? LT_EXIT_OK : LT_EXIT_DAMAGE;
	}
out:
	buf_fini(&b);
	lt_salvage_free(&sv);
	lt_plan_free(&plan);
	lt_dir_free(&d);
	return rc;
}
