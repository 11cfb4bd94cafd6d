/* sluice_log_plan - what `repair` would do to a checked directory, as a
 * list of acts (lt_repair_plan), and how each is said to the user
 * (lt_act_describe); sluice_log_repair.c carries them out.
 *
 * The plan. Recovery starts at record R (the record after the
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
	lt_scopy(a->why, sizeof(a->why), why);
	if (r.lost > 0) {
		if (p->lost_first == 0 || r.first < p->lost_first)
			p->lost_first = r.first > keep ? r.first : keep + 1;
		if (r.last > p->lost_last)
			p->lost_last = r.last;
		p->lost_n += r.lost;
	}
	return 0;
}

void
lt_plan_impossible(struct lt_plan *p, const char *what)
{
	p->possible = false;
	lt_scopy(p->impossible, sizeof(p->impossible), what);
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
	lt_scopy(a->why, sizeof(a->why), why);
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
			lt_plan_impossible(p, why);
			return 0;
		}
		if (q->fatal) {
			snprintf(why, sizeof(why),
			    "%s: %s. No repair brings those records back: "
			    "restore the missing files from a backup, or "
			    "rebuild this node from its leader",
			    q->file, q->what);
			lt_plan_impossible(p, why);
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
		lt_scopy(why, sizeof(why), Q->what);
	} else {
		keep = p->keep_last;
	}
	rc = lt_replay_run(d, 0, &rp);
	if (rc == 0 && rp.failed && lt_type_unknown(rp.fail_type)) {
		snprintf(why, sizeof(why),
		    "record LSN %" PRIu64 " is of type %u, which this "
		    "sluice-log does not know (a newer sluiced wrote it): "
		    "repair this log with that sluiced's sluice-log",
		    rp.fail_lsn, (unsigned)rp.fail_type);
		lt_plan_impossible(p, why);
	}
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
const char *
lt_lsn_span(char *out, size_t n, uint64_t first, uint64_t last)
{
	if (first == last)
		snprintf(out, n, "LSN %" PRIu64, first);
	else
		snprintf(out, n, "LSN %" PRIu64 "..%" PRIu64, first, last);
	return out;
}

/* "1 record", "2 records" */
const char *
lt_records(char *out, size_t n, uint64_t count)
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
		    lt_lsn_span(span, sizeof(span), a->first_lsn, a->last_lsn),
		    lt_records(nr, sizeof(nr), a->nrec),
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
