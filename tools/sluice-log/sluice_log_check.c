/* sluice_log_check - the checks of a data directory (lt_dir_check): the
 * snapshots first, as files and as queues (they decide where recovery
 * starts), then each segment walked to its end and scanned as the server
 * would, then the joins between segments, where the log must start, and
 * the durable mark. Each finding is a problem of the directory
 * (sluice_log_dir.c). Nothing here writes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "sluice_log.h"
#include "util/fsutil.h"

/* ---- snapshots -------------------------------------------------------- */

struct snap_ctx {
	struct queue *q;
	uint64_t entry;
	uint16_t type;
	int rc; /* what the queue said */
};

static int
snap_entry(void *arg, uint16_t type, const void *data, size_t len)
{
	struct snap_ctx *c = arg;

	c->type = type;
	c->rc = queue_snapshot_load(c->q, type, data, len);
	if (c->rc == 0)
		c->entry++;
	return c->rc;
}

int
lt_snap_load(const struct lt_dir *d, size_t i, struct queue *q)
{
	struct snap_ctx c = { q, 0, 0, 0 };
	char path[PATH_MAX];
	int rc;

	lt_path(d, d->snaps[i].name, path, sizeof(path));
	rc = snap_load(path, snap_entry, &c, NULL, NULL);
	if (rc == 0 && !queue_snapshot_done(q))
		rc = SLUICE_ECORRUPT;
	return rc;
}

static void
check_snap(struct lt_dir *d, size_t i)
{
	struct lt_snap *s = &d->snaps[i];
	struct snap_ctx c = { NULL, 0, 0, 0 };
	char path[PATH_MAX];
	struct stat st;
	struct lt_problem *p;
	const char *why;

	lt_path(d, s->name, path, sizeof(path));
	if (stat(path, &st) == 0)
		s->size = (uint64_t)st.st_size;
	c.q = queue_new(NULL);
	if (c.q == NULL) {
		s->rc = -ENOMEM;
		lt_dir_problem(
		    d, LT_IOERR, s->name, -1, "out of memory loading it");
		return;
	}
	s->rc = snap_load(path, snap_entry, &c, &s->info, &s->bad_off);
	if (s->rc != 0 && c.rc != 0) {
		/* The file checks as far as it goes; the queue refused an
		 * entry. */
		s->load_rc = c.rc;
		s->rc = 0;
		lt_dir_problem(d, LT_DAMAGE, s->name, -1,
		    "snapshot entry %" PRIu64 " (%s) does not load into a "
		    "queue (%s): recovery cannot start from it",
		    c.entry + 1, queue_snap_entry_name(c.type),
		    sluice_strerror(c.rc));
	} else if (s->rc == SLUICE_ECORRUPT) {
		p = lt_dir_problem(d, LT_DAMAGE, s->name, -1,
		    "snapshot damaged: an entry's checksum, length or the end "
		    "entry does not check here");
		p->has_off = true;
		p->off = s->bad_off;
		p->end = s->size;
	} else if (s->rc < 0) {
		lt_dir_problem(d, LT_IOERR, s->name, -1, "cannot read: %s",
		    strerror(-s->rc));
	} else if ((why = queue_snapshot_unusable(
	                c.q, s->name_lsn, s->info.lsn)) != NULL) {
		/* sluiced's own rule (queue.h): it skips this one as it
		 * skips a damaged file. */
		s->load_rc = s->rc = SLUICE_ECORRUPT;
		lt_dir_problem(d, LT_DAMAGE, s->name, -1,
		    "%s (header LSN %" PRIu64 ", name %" PRIu64
		    ", queue state at LSN %" PRIu64 ")",
		    why, s->info.lsn, s->name_lsn, queue_lsn(c.q));
	} else {
		s->usable = true;
	}
	queue_free(c.q);
}

/* ---- segments --------------------------------------------------------- */

/* A segment mapped read-only. */
struct map {
	const uint8_t *p;
	size_t size;
	void *addr;
};

static int
map_open(const char *path, struct map *m)
{
	static const uint8_t none[1];
	struct stat st;
	int fd, rc = 0;

	memset(m, 0, sizeof(*m));
	m->p = none;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
	} else if (st.st_size > 0) {
		m->addr = mmap(
		    NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m->addr == MAP_FAILED) {
			m->addr = NULL;
			rc = -errno;
		} else {
			m->p = m->addr;
			m->size = (size_t)st.st_size;
			madvise(m->addr, m->size, MADV_SEQUENTIAL);
		}
	}
	close(fd);
	return rc;
}

static void
map_close(struct map *m)
{
	if (m->addr != NULL)
		munmap(m->addr, m->size);
	m->addr = NULL;
}

struct walk_ctx {
	struct lt_dir *dm; /* when checking: the directory to fill */
	const struct lt_dir *d;
	size_t seg;
	const struct lt_visit *v;
	void *arg;
	bool have_first; /* when checking: the first bad stretch */
	struct walk_bad first;
};

static void
seg_first_rec(struct lt_seg *s, const struct rec_view *v)
{
	if (s->first_time == 0 && s->rec_bytes == 0) {
		s->first_time = v->hdr.time;
		s->first_epoch = v->hdr.epoch;
	}
	s->last_time = v->hdr.time;
	s->rec_bytes += v->size;
}

static int
on_rec(void *arg, uint64_t off, const struct rec_view *v)
{
	struct walk_ctx *c = arg;

	if (c->dm != NULL)
		seg_first_rec(&c->dm->segs[c->seg], v);
	if (c->v != NULL && c->v->rec != NULL)
		return c->v->rec(c->arg, c->d, c->seg, off, v);
	return 0;
}

static const char *
why_text(const struct walk_bad *b)
{
	if (b->why == REC_WHY_NONE)
		return "zeros where a record should be";
	return rec_why_str(b->why);
}

/* "LSN 7 is" or "LSNs 7..9 are". */
static void
lsn_range(char *out, size_t n, uint64_t first, uint64_t last)
{
	if (first == last)
		snprintf(out, n, "LSN %" PRIu64 " is", first);
	else
		snprintf(
		    out, n, "LSNs %" PRIu64 "..%" PRIu64 " are", first, last);
}

/* Records one bad stretch of segment c->seg as a problem. */
static void
bad_problem(struct lt_dir *d, size_t i, const struct walk_bad *b)
{
	struct lt_seg *s = &d->segs[i];
	bool last = i + 1 == d->nsegs;
	struct lt_problem *p;

	if (b->header && b->tail) {
		p = lt_dir_problem(d, last ? LT_TORN : LT_DAMAGE, s->name,
		    (int)i,
		    "segment header does not parse and no record follows "
		    "(%" PRIu64 " bytes): a segment %s",
		    b->end,
		    last ? "created as the node stopped; sluiced removes it"
		         : "that is not the last, so the log is broken here");
	} else if (b->header) {
		p = lt_dir_problem(d, LT_DAMAGE, s->name, (int)i,
		    "segment header does not parse; valid records follow at "
		    "offset %" PRIu64 " (LSN %" PRIu64 ")",
		    b->end, b->lsn_after);
	} else if (b->tail && !b->whole && b->damage != SEG_BAD_NONE) {
		p = lt_dir_problem(d, LT_DAMAGE, s->name, (int)i,
		    "%" PRIu64 " bytes after LSN %" PRIu64
		    " are not a record (%s) and are not what a torn write "
		    "leaves: %s",
		    b->end - b->off, b->lsn_before, why_text(b),
		    seg_bad_str(b->damage));
	} else if (b->gap) {
		p = lt_dir_problem(d, last ? LT_TORN : LT_DAMAGE, s->name,
		    (int)i,
		    "%" PRIu64 " bytes after LSN %" PRIu64
		    " are zeros where a batch should be, then batches written "
		    "beside it up to LSN %" PRIu64 ": %s",
		    b->end - b->off, b->lsn_before, b->gap_last,
		    last ? "a torn tail (writes in flight at once that the "
		           "stop cut short; none was acknowledged)"
		         : "a torn record in a segment that is not the last");
	} else if (walk_bad_is_torn(b)) {
		p = lt_dir_problem(d, last ? LT_TORN : LT_DAMAGE, s->name,
		    (int)i,
		    "%" PRIu64 " bytes after LSN %" PRIu64
		    " are not a record (%s) and nothing valid follows: %s",
		    b->end - b->off, b->lsn_before, why_text(b),
		    last ? "a torn tail (a write the stop cut short)"
		         : "a torn record in a segment that is not the last");
	} else if (b->tail) {
		p = lt_dir_problem(d, LT_DAMAGE, s->name, (int)i,
		    "a whole record after LSN %" PRIu64
		    " breaks the sequence (%s); nothing valid follows",
		    b->lsn_before, rec_why_str(b->why));
	} else if (b->off == b->end) {
		char lost[96];

		lsn_range(
		    lost, sizeof(lost), b->lsn_before + 1, b->lsn_after - 1);
		p = lt_dir_problem(d, LT_DAMAGE, s->name, (int)i,
		    "record LSN %" PRIu64 " follows LSN %" PRIu64
		    ": %s missing",
		    b->lsn_after, b->lsn_before, lost);
	} else {
		char lost[128] = "", range[96];

		if (b->lsn_after > b->lsn_before + 1) {
			lsn_range(range, sizeof(range), b->lsn_before + 1,
			    b->lsn_after - 1);
			snprintf(lost, sizeof(lost), "; %s lost in it", range);
		}
		p = lt_dir_problem(d, LT_DAMAGE, s->name, (int)i,
		    "bad record (%s) after LSN %" PRIu64
		    "; valid records resume at offset %" PRIu64
		    " with LSN %" PRIu64 "%s",
		    why_text(b), b->lsn_before, b->end, b->lsn_after, lost);
	}
	p->has_off = true;
	p->off = b->off;
	p->end = b->end;
	p->lsn_before = b->lsn_before;
	p->lsn_after = b->lsn_after;
}

static int
on_bad(void *arg, const struct walk_bad *b)
{
	struct walk_ctx *c = arg;

	if (c->dm != NULL) {
		bad_problem(c->dm, c->seg, b);
		if (!c->have_first) {
			c->have_first = true;
			c->first = *b;
		}
	}
	if (c->v != NULL && c->v->bad != NULL)
		return c->v->bad(c->arg, c->d, c->seg, b);
	return 0;
}

static const struct walk_ops walk_ops = { on_rec, on_bad };

int
lt_seg_walk(
    const struct lt_dir *d, size_t i, const struct lt_visit *v, void *arg)
{
	struct walk_ctx c = { NULL, d, i, v, arg, false, { 0 } };
	char path[PATH_MAX];
	struct walk_result w;
	struct map m;
	int rc;

	lt_path(d, d->segs[i].name, path, sizeof(path));
	rc = map_open(path, &m);
	if (rc != 0)
		return rc;
	rc = walk_seg(m.p, m.size, d->segs[i].name_lsn, &walk_ops, &c, &w);
	map_close(&m);
	return rc;
}

/* True when seg_scan's verdict and the walk's first report agree. */
static bool
agree(const struct lt_seg *s, const struct walk_bad *first)
{
	if (s->scan_rc == SLUICE_ECORRUPT)
		return first != NULL && !walk_bad_is_torn(first) &&
		    first->off == s->scan.bad_off;
	if (s->scan_rc != 0)
		return true; /* an I/O error: said elsewhere */
	if (s->scan.hdr_bad)
		return first != NULL && first->header && first->tail;
	if (s->scan.torn)
		return first != NULL && walk_bad_is_torn(first) &&
		    first->off == s->scan.end &&
		    first->end - first->off == s->scan.torn_bytes;
	return first == NULL && s->scan.nrec == s->w.nrec;
}

static int
check_seg(struct lt_dir *d, size_t i, const struct lt_visit *v, void *arg)
{
	struct lt_seg *s = &d->segs[i];
	struct walk_ctx c = { d, d, i, v, arg, false, { 0 } };
	char path[PATH_MAX];
	struct map m;
	int rc;

	lt_path(d, s->name, path, sizeof(path));
	rc = map_open(path, &m);
	if (rc != 0) {
		s->err = rc;
		lt_dir_problem(d, LT_IOERR, s->name, (int)i, "cannot read: %s",
		    strerror(-rc));
		return 0;
	}
	s->size = m.size;
	rc = walk_seg(m.p, m.size, s->name_lsn, &walk_ops, &c, &s->w);
	map_close(&m);
	if (rc != 0)
		return rc;
	s->scan_rc = seg_scan(path, UINT64_MAX, 0, NULL, NULL, &s->scan);
	if (s->scan_rc < 0) {
		s->err = s->scan_rc;
		lt_dir_problem(d, LT_IOERR, s->name, (int)i, "cannot read: %s",
		    strerror(-s->scan_rc));
		return 0;
	}
	if (!agree(s, c.have_first ? &c.first : NULL))
		lt_dir_problem(d, LT_DAMAGE, s->name, (int)i,
		    "sluice-log and the segment reader disagree about this "
		    "segment (seg_scan: %s at offset %" PRIu64
		    "); please report it",
		    sluice_strerror(s->scan_rc), s->scan.bad_off);
	if (s->w.hdr_ok && s->w.hdr.first_lsn != s->name_lsn) {
		struct lt_problem *p =
		    lt_dir_problem(d, LT_DAMAGE, s->name, (int)i,
		        "segment header says its first LSN is %" PRIu64
		        " but its name says %" PRIu64,
		        s->w.hdr.first_lsn, s->name_lsn);

		p->has_off = true;
		p->off = 16;
		p->end = 24;
	}
	return 0;
}

/* The first LSN a segment holds (or would hold) and its last. */
static uint64_t
seg_first(const struct lt_seg *s)
{
	if (s->w.hdr_ok)
		return s->w.hdr.first_lsn;
	return s->w.nrec > 0 ? s->w.first_lsn : s->name_lsn;
}

static uint64_t
seg_last(const struct lt_seg *s)
{
	return s->w.nrec > 0 ? s->w.last_lsn : seg_first(s) - 1;
}

/* A segment that holds nothing: unreadable, or a creation cut short. */
static bool
seg_void(const struct lt_seg *s)
{
	return s->err != 0 || (!s->w.hdr_ok && s->w.nrec == 0);
}

static void
check_joins(struct lt_dir *d)
{
	int prev = -1;

	for (size_t i = 0; i < d->nsegs; i++) {
		struct lt_seg *s = &d->segs[i];
		struct lt_problem *p = NULL;
		uint64_t first, last, epoch;

		if (seg_void(s))
			continue;
		first = seg_first(s);
		epoch = s->w.hdr_ok ? s->w.hdr.epoch : s->first_epoch;
		if (prev >= 0) {
			struct lt_seg *q = &d->segs[prev];

			last = seg_last(q);
			if (first > last + 1) {
				char gone[96];

				lsn_range(
				    gone, sizeof(gone), last + 1, first - 1);
				p = lt_dir_problem(d, LT_DAMAGE, s->name,
				    (int)i,
				    "%s missing: %s ends at LSN %" PRIu64
				    " and this segment starts at %" PRIu64
				    " (a segment is missing)",
				    gone, q->name, last, first);
			} else if (first <= last)
				p = lt_dir_problem(d, LT_DAMAGE, s->name,
				    (int)i,
				    "this segment starts at LSN %" PRIu64
				    " but %s already ends at %" PRIu64
				    " (segments overlap)",
				    first, q->name, last);
			else if (epoch < q->w.last_epoch)
				p = lt_dir_problem(d, LT_DAMAGE, s->name,
				    (int)i,
				    "epoch %" PRIu64 " after epoch %" PRIu64
				    " of %s: a segment from an older epoch "
				    "follows a newer one",
				    epoch, q->w.last_epoch, q->name);
			if (p != NULL) {
				p->boundary = true;
				p->lsn_before = last;
				p->lsn_after = first;
			}
		}
		prev = (int)i;
	}
}

int
lt_start_seg(const struct lt_dir *d)
{
	int k = -1;

	for (size_t i = 0; i < d->nsegs; i++)
		if (d->segs[i].name_lsn <= d->start)
			k = (int)i;
	return k;
}

/* Where the log ends: its last record, or an empty segment's first LSN
 * less one (as logdir.c reads it). */
static uint64_t
log_end(const struct lt_dir *d)
{
	uint64_t end = d->last_lsn;

	for (size_t i = 0; i < d->nsegs; i++)
		if (!seg_void(&d->segs[i]) && seg_last(&d->segs[i]) > end)
			end = seg_last(&d->segs[i]);
	return end;
}

static void
check_start(struct lt_dir *d)
{
	const struct lt_snap *sn =
	    d->snap_used >= 0 ? &d->snaps[d->snap_used] : NULL;
	struct lt_problem *p;
	uint64_t end = log_end(d);
	int k = -1;

	for (size_t i = 0; i < d->nsegs && k < 0; i++)
		if (!seg_void(&d->segs[i]))
			k = (int)i;
	if (k < 0)
		return;
	if (seg_first(&d->segs[k]) > d->start) {
		uint64_t f = seg_first(&d->segs[k]);

		if (sn == NULL)
			p = lt_dir_problem(d, LT_DAMAGE, d->segs[k].name, k,
			    "the log starts at LSN %" PRIu64
			    ": records 1..%" PRIu64
			    " are gone and no usable snapshot covers them",
			    f, f - 1);
		else
			p = lt_dir_problem(d, LT_DAMAGE, d->segs[k].name, k,
			    "recovery starts from %s and needs LSN %" PRIu64
			    " on, but the log starts at %" PRIu64
			    ": LSNs %" PRIu64 "..%" PRIu64 " are gone",
			    sn->name, d->start, f, d->start, f - 1);
		p->boundary = true;
		p->recovery = true;
		p->fatal = true;
		p->lsn_before = d->start - 1;
		p->lsn_after = f;
	}
	if (sn != NULL && end < sn->info.lsn)
		lt_dir_note(d,
		    "the log ends at LSN %" PRIu64 ", before %s: sluiced "
		    "starts from the snapshot and begins a new log after it "
		    "(every segment is covered by the snapshot)",
		    end, sn->name);
}

/* The DURABLE mark's rule (durable_judge, as logdir_scan_known applies
 * it at start): a torn tail of the last segment at or below the mark, or
 * after a clean stop, is damage; so is a log that ends before the mark. */
static void
check_durable(struct lt_dir *d)
{
	const char *judged = NULL;
	struct lt_problem *p, *torn = NULL;
	uint64_t end;
	size_t last;

	if (d->mark.lsn == 0 && !d->mark.clean)
		return;
	if (d->nsegs == 0) {
		judged = durable_judge(&d->mark, false, 0);
		if (judged != NULL) {
			p = lt_dir_problem(d, LT_DAMAGE, DURABLE_NAME, -1,
			    "no segment, but the log had synced up to LSN "
			    "%" PRIu64 ": %s",
			    d->mark.lsn, judged);
			p->recovery = true;
		}
		return;
	}
	last = d->nsegs - 1;
	for (size_t i = 0; i < d->nprobs; i++)
		if (d->probs[i].seg == (int)last && d->probs[i].kind == LT_TORN)
			torn = &d->probs[i];
	if (torn != NULL) {
		judged = durable_judge(&d->mark, true, torn->lsn_before);
		if (judged != NULL) {
			torn->kind = LT_DAMAGE;
			torn->recovery = true;
			snprintf(torn->what, sizeof(torn->what),
			    "%" PRIu64 " bad bytes after LSN %" PRIu64
			    " look like a torn write, but the log had synced "
			    "up to LSN %" PRIu64 "%s (its DURABLE mark): "
			    "damage on disk, not a torn write",
			    torn->end - torn->off, torn->lsn_before,
			    d->mark.lsn,
			    d->mark.clean ? " and was stopped cleanly" : "");
			return;
		}
	}
	end = log_end(d);
	judged = durable_judge(&d->mark, false, end);
	if (judged == NULL)
		return;
	p = lt_dir_problem(d, LT_DAMAGE, d->segs[last].name, (int)last,
	    "the log ends at LSN %" PRIu64 " but had synced up to LSN %" PRIu64
	    " (its DURABLE mark): LSNs %" PRIu64 "..%" PRIu64
	    " are gone, records known written",
	    end, d->mark.lsn, end + 1, d->mark.lsn);
	p->has_off = true;
	p->off = p->end = d->segs[last].w.end;
	p->lsn_before = end;
	p->lsn_after = d->mark.lsn + 1;
	p->mark_only = true;
	p->recovery = true;
}

/* Marks the problems that lie in what recovery reads. */
static void
mark_recovery(struct lt_dir *d)
{
	int k = lt_start_seg(d);

	for (size_t i = 0; i < d->nprobs; i++) {
		struct lt_problem *p = &d->probs[i];

		if (p->recovery)
			continue; /* known already (the DURABLE mark's) */
		if (p->seg < 0) {
			/* A snapshot: only the one sluiced picks matters,
			 * when its entries do not load. */
			p->recovery = d->snap_picked >= 0 &&
			    strcmp(p->file, d->snaps[d->snap_picked].name) ==
			        0 &&
			    !d->snaps[d->snap_picked].usable;
			continue;
		}
		if (p->recovery)
			continue;
		if (d->snap_used >= 0 && d->last_lsn < d->start) {
			/* Every segment is covered: recovery drops them
			 * (a torn tail is still cut first). */
			p->recovery = p->kind == LT_TORN;
			continue;
		}
		p->recovery = p->boundary ? p->seg - 1 >= k : p->seg >= k;
	}
}

int
lt_dir_check(struct lt_dir *d, const struct lt_visit *v, void *arg)
{
	int rc = 0;

	/* sluiced picks the newest snapshot whose file checks (even when
	 * its entries then fail to load); recovery after a repair starts
	 * from the newest that also loads. */
	for (size_t i = 0; i < d->nsnaps; i++) {
		check_snap(d, i);
		if (d->snaps[i].rc == 0)
			d->snap_picked = (int)i;
		if (d->snaps[i].usable)
			d->snap_used = (int)i;
	}
	d->start = d->snap_used >= 0 ? d->snaps[d->snap_used].info.lsn + 1 : 1;
	rc = durable_read(d->path, &d->mark);
	if (rc != 0) {
		lt_dir_problem(d, LT_IOERR, DURABLE_NAME, -1, "cannot read: %s",
		    strerror(-rc));
		rc = 0;
	}
	lt_progress_start("checking segment", d->nsegs);
	for (size_t i = 0; i < d->nsegs && rc == 0; i++) {
		struct lt_seg *s = &d->segs[i];

		lt_progress(i, s->name);
		rc = check_seg(d, i, v, arg);
		if (rc == 0 && s->w.nrec > 0) {
			if (d->first_lsn == 0)
				d->first_lsn = s->w.first_lsn;
			if (s->w.last_lsn > d->last_lsn)
				d->last_lsn = s->w.last_lsn;
			d->nrec += s->w.nrec;
		}
	}
	lt_progress_end();
	if (rc != 0)
		return rc;
	check_joins(d);
	check_start(d);
	check_durable(d);
	mark_recovery(d);
	for (size_t i = 0; i < d->nsnaps; i++) {
		const struct lt_snap *s = &d->snaps[i];

		if ((int)i != d->snap_used && s->usable)
			lt_dir_note(d,
			    "%s: an older snapshot, kept with the segments it "
			    "needs (--keep-snapshots): recovery falls back to "
			    "it when a newer one is damaged",
			    s->name);
	}
	if (d->nleft > 0)
		lt_dir_note(d,
		    "%zu unfinished file(s) (*.snap.inprogress, "
		    "*.wal.repair, EPOCHS.tmp): left by a stop during a "
		    "snapshot, a repair or a new epoch; sluiced ignores them",
		    d->nleft);
	if (d->nspares > 0)
		lt_dir_note(d,
		    "%zu spare segment file(s) (*.spare): preallocated "
		    "space; sluiced removes them at start",
		    d->nspares);
	if (d->nunknown > 0)
		lt_dir_note(d, "%zu file(s) sluice does not know, such as '%s'",
		    d->nunknown, d->unknown);
	if (d->mark.lsn != 0 || d->mark.clean)
		lt_dir_note(d,
		    "DURABLE: the log had synced up to LSN %" PRIu64 "%s; a "
		    "bad record at or below it is damage, not a torn write",
		    d->mark.lsn,
		    d->mark.clean ? ", and its writer stopped cleanly there"
		                  : "");
	else if (d->nsegs > 0)
		lt_dir_note(d,
		    "no DURABLE mark (a log written before sluiced kept one, "
		    "or wiped): whether a torn tail held acknowledged records "
		    "cannot be told from the files");
	if (d->running)
		lt_dir_note(d,
		    "a sluiced is running on this directory (it holds the "
		    "LOCK): the newest segment may be changing as it is "
		    "read");
	d->checked = true;
	return 0;
}

int
lt_open_checked(
    const char *path, struct lt_dir *d, const struct lt_visit *v, void *arg)
{
	char err[PATH_MAX + 256];
	int rc;

	rc = lt_dir_open(path, d, err, sizeof(err));
	if (rc != LT_EXIT_OK) {
		fprintf(stderr, "sluice-log: %s\n", err);
		return rc;
	}
	rc = lt_dir_check(d, v, arg);
	if (rc != 0 && rc != -EPIPE) {
		fprintf(
		    stderr, "sluice-log: %s: %s\n", path, sluice_strerror(rc));
		lt_dir_free(d);
		return LT_EXIT_IO;
	}
	if (rc == -EPIPE) {
		lt_dir_free(d);
		return LT_EXIT_IO;
	}
	return LT_EXIT_OK;
}
