/* logdir - the segments of a log directory read as one log.
 *
 * A log is the sequence of segments "%020llu.wal" in name order. Scanning
 * checks each segment (seg_scan) and what joins them: the name equals the
 * header's first_lsn, which equals the previous segment's last LSN + 1;
 * epochs never go down; only the last segment may end torn. The end of the
 * scan is where the writer continues (struct logdir_end).
 *
 * The last segment may also have a header that does not parse with
 * nothing valid after it: the writer renamed a spare into place and
 * crashed before its first write reached the disk. Nothing in it was ever
 * reported durable (the rename and the first write are synced before),
 * so it is removed, like a torn tail is cut.
 *
 * The cursor reads a log that is being written: it never reads past an
 * LSN the caller knows durable, so bytes it finds invalid or missing
 * below that LSN are corruption, not a write in progress. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/durable.h"
#include "log/logdir.h"
#include "log/seg.h"
#include "sluice.h"
#include "util/fsutil.h"
#include "util/log.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
logdir_list(const char *dir, struct logdir *out)
{
	struct logdir ld = { NULL, 0 };
	size_t cap = 0;
	struct dirent *e;
	DIR *d;

	d = opendir(dir);
	if (d == NULL) {
		if (errno == ENOENT) {
			*out = ld;
			return 0;
		}
		return -errno;
	}
	while ((e = readdir(d)) != NULL) {
		uint64_t lsn;

		if (!seg_parse_name(e->d_name, &lsn))
			continue;
		if (ld.n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			uint64_t *nf = realloc(ld.first, ncap * sizeof(*nf));

			if (nf == NULL) {
				closedir(d);
				free(ld.first);
				return -ENOMEM;
			}
			ld.first = nf;
			cap = ncap;
		}
		ld.first[ld.n++] = lsn;
	}
	closedir(d);
	if (ld.n > 0)
		qsort(ld.first, ld.n, sizeof(*ld.first), cmp_u64);
	*out = ld;
	return 0;
}

void
logdir_fini(struct logdir *ld)
{
	free(ld->first);
	ld->first = NULL;
	ld->n = 0;
}

/* ---------------------------------------------------------------------
 * Scan
 * ------------------------------------------------------------------- */

static int
corrupt(struct logdir_end *end, const char *path, uint64_t off, uint64_t lsn,
    const char *what)
{
	snprintf(end->bad_path, sizeof(end->bad_path), "%s", path);
	end->bad_off = off;
	end->bad_lsn = lsn;
	end->bad_what = what;
	log_err("log",
	    "the log is damaged segment=%s offset=%" PRIu64
	    " after_lsn=%" PRIu64 " why=\"%s\"; run `sluice-log verify` on "
	    "the directory",
	    path, off, lsn, what);
	return SLUICE_ECORRUPT;
}

static const char *
corrupt_what(const struct seg_scan *s)
{
	if (s->bad == SEG_BAD_SEQUENCE && s->why == REC_WHY_LSN)
		return "record LSN out of sequence";
	if (s->bad == SEG_BAD_SEQUENCE && s->why == REC_WHY_EPOCH)
		return "record epoch lower than the one before";
	return seg_bad_str(s->bad);
}

/* The caller's visitor, wrapped so that a value it returns to stop the
 * scan is never taken for seg_scan's own (-errno, SLUICE_ECORRUPT): a
 * record the caller refuses is not damage at some offset of the file. */
struct visit_ctx {
	rec_visit_fn *fn;
	void *arg;
	int rc; /* what fn returned to stop the scan, else 0 */
};

static int
visit_wrap(const struct rec_hdr *h, const void *body, void *arg)
{
	struct visit_ctx *v = arg;

	v->rc = v->fn(h, body, v->arg);
	return v->rc;
}

/* Scans segment `first` without visiting, to learn where it ends. */
static int
seg_end(const char *dir, uint64_t first, struct seg_scan *s)
{
	char path[LOGDIR_PATH_MAX];
	int rc;

	rc = seg_path(path, sizeof(path), dir, first);
	if (rc != 0)
		return rc;
	return seg_scan(path, UINT64_MAX, 0, NULL, NULL, s);
}

int
logdir_scan(const char *dir, uint64_t from_lsn, unsigned flags,
    rec_visit_fn *visit, void *arg, struct logdir_end *end)
{
	return logdir_scan_known(dir, from_lsn, flags, NULL, visit, arg, end);
}

int
logdir_scan_known(const char *dir, uint64_t from_lsn, unsigned flags,
    const struct durable_mark *known, rec_visit_fn *visit, void *arg,
    struct logdir_end *end)
{
	static const struct durable_mark none;
	struct visit_ctx vc = { visit, arg, 0 };
	const char *judged;
	struct logdir ld;
	struct logdir_end e;
	uint64_t prev_last = 0, prev_epoch = 0;
	bool have_prev = false;
	size_t start = 0;
	int rc;

	memset(&e, 0, sizeof(e));
	if (known == NULL)
		known = &none;
	rc = logdir_list(dir, &ld);
	if (rc != 0) {
		log_err("log", "cannot list the log dir=%s error=\"%s\"", dir,
		    sluice_strerror(rc));
		return rc;
	}
	e.nsegs = ld.n;
	if (ld.n == 0)
		goto done;
	if (from_lsn > 1 && ld.first[0] > from_lsn) {
		char path[LOGDIR_PATH_MAX];

		seg_path(path, sizeof(path), dir, ld.first[0]);
		snprintf(e.bad_path, sizeof(e.bad_path), "%s", path);
		e.bad_lsn = from_lsn - 1;
		e.bad_what = "records before the first segment were removed";
		*end = e;
		rc = -ENOENT;
		goto out;
	}
	for (size_t i = 0; i < ld.n; i++)
		if (ld.first[i] <= from_lsn)
			start = i;
	for (size_t i = start; i < ld.n; i++) {
		char path[LOGDIR_PATH_MAX];
		bool last = i + 1 == ld.n;
		struct seg_scan s;

		rc = seg_path(path, sizeof(path), dir, ld.first[i]);
		if (rc != 0)
			goto out;
		/* The last segment's torn tail is cut below, once the
		 * durable mark allows it. */
		rc = seg_scan(path, from_lsn, 0,
		    visit != NULL ? visit_wrap : NULL, &vc, &s);
		if (vc.rc != 0)
			goto out; /* the visitor stopped the scan */
		if (rc == SLUICE_ECORRUPT) {
			rc = corrupt(
			    &e, path, s.bad_off, s.last_lsn, corrupt_what(&s));
			*end = e;
			goto out;
		}
		if (rc < 0) {
			log_err("log",
			    "cannot read a segment segment=%s error=\"%s\"",
			    path, sluice_strerror(rc));
			goto out;
		}
		if (rc != 0)
			goto out;
		if (have_prev && ld.first[i] != prev_last + 1) {
			rc = corrupt(&e, path, 0, prev_last,
			    "gap in LSNs: this segment does not start right "
			    "after the previous one (a segment is missing)");
			*end = e;
			goto out;
		}
		if (s.hdr_bad) {
			if (!last) {
				rc = corrupt(&e, path, 0, prev_last,
				    "segment header does not parse");
				*end = e;
				goto out;
			}
			/* A creation cut short: the log ends before it,
			 * unless the log had synced records in it. */
			judged = durable_judge(known, true, ld.first[i] - 1);
			if (judged != NULL) {
				rc = corrupt(
				    &e, path, 0, ld.first[i] - 1, judged);
				*end = e;
				goto out;
			}
			log_warn("log",
			    "segment header torn, no record in it (a segment "
			    "created as the node stopped) segment=%s "
			    "removed=%s",
			    path, (flags & LOGDIR_CUT) ? "yes" : "no");
			e.torn = true;
			e.torn_off = 0;
			e.torn_bytes = s.size;
			if (flags & LOGDIR_CUT) {
				if (unlink(path) < 0 && errno != ENOENT) {
					rc = -errno;
					log_err("log",
					    "cannot remove a segment "
					    "segment=%s error=\"%s\"",
					    path, strerror(errno));
					goto out;
				}
				rc = fs_sync_dir(dir);
				if (rc != 0)
					goto out;
				e.cut = true;
				e.dropped = true;
				e.nsegs--;
			}
			if (!have_prev && i > 0) {
				/* The scan started here: learn where the
				 * previous segment ends. */
				rc = seg_end(dir, ld.first[i - 1], &s);
				if (rc != 0) {
					seg_path(path, sizeof(path), dir,
					    ld.first[i - 1]);
					if (rc == SLUICE_ECORRUPT)
						rc = corrupt(&e, path,
						    s.bad_off, s.last_lsn,
						    corrupt_what(&s));
					*end = e;
					goto out;
				}
				if (s.torn || s.hdr_bad ||
				    s.last_lsn + 1 != ld.first[i]) {
					rc = corrupt(&e, path, s.end,
					    s.last_lsn,
					    "segment before a torn one is not "
					    "complete");
					*end = e;
					goto out;
				}
				e.last_lsn = s.last_lsn;
				e.epoch = s.last_epoch;
				e.seg_first_lsn = ld.first[i - 1];
				e.seg_size = s.hdr.size;
				e.offset = s.end;
			} else if (!have_prev) {
				/* The only segment: the log is empty and
				 * its next LSN is the name's. */
				e.last_lsn = ld.first[i] - 1;
				e.seg_first_lsn = 0;
			}
			break;
		}
		if (s.hdr.first_lsn != ld.first[i]) {
			rc = corrupt(&e, path, 0, prev_last,
			    "segment header's first LSN differs from its "
			    "name");
			*end = e;
			goto out;
		}
		if (have_prev && s.hdr.epoch < prev_epoch) {
			rc = corrupt(&e, path, 0, prev_last,
			    "segment epoch lower than the previous one's");
			*end = e;
			goto out;
		}
		if (s.torn && !last) {
			rc = corrupt(&e, path, s.end, s.last_lsn,
			    "torn record in a segment that is not the last");
			*end = e;
			goto out;
		}
		if (s.torn) {
			judged = durable_judge(known, true, s.last_lsn);
			if (judged != NULL) {
				rc = corrupt(
				    &e, path, s.end, s.last_lsn, judged);
				*end = e;
				goto out;
			}
			if (flags & LOGDIR_CUT) {
				rc = seg_cut(path, s.end, s.torn_bytes);
				if (rc != 0) {
					log_err("log",
					    "cannot cut a torn tail "
					    "segment=%s error=\"%s\"",
					    path, sluice_strerror(rc));
					goto out;
				}
				s.cut = true;
			}
			e.torn = true;
			e.torn_off = s.end;
			e.torn_bytes = s.torn_bytes;
			e.cut = s.cut;
			e.gap = s.gap;
			e.gap_last = s.gap_last;
			if (s.gap)
				log_warn("log",
				    "torn tail %s segment=%s offset=%" PRIu64
				    " bytes=%" PRIu64 " after_lsn=%" PRIu64
				    " cut_lsns=%" PRIu64 "..%" PRIu64
				    " why=\"batches written beside one that "
				    "never reached the disk; none was "
				    "acknowledged\"",
				    s.cut ? "cut" : "found", path, s.end,
				    s.torn_bytes, s.last_lsn, s.last_lsn + 1,
				    s.gap_last);
			else
				log_warn("log",
				    "torn tail %s segment=%s offset=%" PRIu64
				    " bytes=%" PRIu64 " after_lsn=%" PRIu64
				    " why=\"%s\"",
				    s.cut ? "cut" : "found", path, s.end,
				    s.torn_bytes, s.last_lsn,
				    rec_why_str(s.why));
		}
		prev_last = s.last_lsn;
		prev_epoch = s.last_epoch;
		have_prev = true;
		e.last_lsn = s.last_lsn;
		e.epoch = s.last_epoch;
		e.seg_first_lsn = ld.first[i];
		e.seg_size = s.hdr.size;
		e.offset = s.end;
		e.nrec += s.nrec;
	}
done:
	judged = durable_judge(known, false, e.last_lsn);
	if (judged != NULL) {
		char path[LOGDIR_PATH_MAX];

		if (ld.n == 0 ||
		    seg_path(path, sizeof(path), dir,
		        e.seg_first_lsn ? e.seg_first_lsn
		                        : ld.first[ld.n - 1]) != 0)
			snprintf(path, sizeof(path), "%s", dir);
		rc = corrupt(&e, path, e.offset, e.last_lsn, judged);
		*end = e;
		goto out;
	}
	*end = e;
	rc = 0;
out:
	logdir_fini(&ld);
	return rc;
}

/* ---------------------------------------------------------------------
 * Truncate
 * ------------------------------------------------------------------- */

/* Offset just past the last non-zero byte at or after `off`. */
static int
data_end(const char *path, uint64_t off, uint64_t *out)
{
	struct seg_reader r;
	uint64_t end = off;
	int rc;

	rc = seg_reader_open(&r, path);
	if (rc != 0)
		return rc;
	r.buf = malloc(1 << 20);
	if (r.buf == NULL) {
		seg_reader_close(&r);
		return -ENOMEM;
	}
	while (off < r.size) {
		size_t n = r.size - off < (1 << 20) ? (size_t)(r.size - off)
		                                    : (1 << 20);

		rc = fs_pread_all(r.fd, r.buf, n, (int64_t)off);
		if (rc != 0)
			break;
		for (size_t i = 0; i < n; i++)
			if (r.buf[i] != 0)
				end = off + i + 1;
		off += n;
	}
	seg_reader_close(&r);
	if (rc == 0)
		*out = end;
	return rc;
}

int
logdir_truncate(const char *dir, uint64_t last_lsn)
{
	char path[LOGDIR_PATH_MAX];
	struct seg_reader r;
	struct logdir ld;
	struct rec_view v;
	uint64_t cut_off, stop;
	size_t k = 0;
	int rc;

	rc = logdir_list(dir, &ld);
	if (rc != 0)
		return rc;
	if (ld.n == 0)
		goto out;
	if (ld.first[0] > last_lsn + 1) {
		rc = -ENOENT;
		goto out;
	}
	/* The records cut were synced: the mark drops first, so a crash
	 * half-way never reads as damage. */
	rc = durable_lower(dir, last_lsn);
	if (rc != 0)
		goto out;
	for (size_t i = 0; i < ld.n; i++)
		if (ld.first[i] <= last_lsn + 1)
			k = i;
	/* Newest first: a crash in between leaves a shorter valid log. */
	for (size_t i = ld.n; i-- > k + 1;) {
		rc = seg_path(path, sizeof(path), dir, ld.first[i]);
		if (rc != 0)
			goto out;
		if (unlink(path) < 0 && errno != ENOENT) {
			rc = -errno;
			log_err("log",
			    "cannot remove a segment segment=%s error=\"%s\"",
			    path, strerror(errno));
			goto out;
		}
		log_info("log",
		    "segment removed (after the cut) segment=%s "
		    "cut_to=%" PRIu64,
		    path, last_lsn);
	}
	rc = seg_path(path, sizeof(path), dir, ld.first[k]);
	if (rc != 0)
		goto out;
	rc = seg_reader_open(&r, path);
	if (rc != 0)
		goto out;
	rc = seg_reader_hdr(&r);
	while (rc == 0 && r.next_lsn <= last_lsn) {
		rc = seg_reader_next(&r, &v);
		if (rc == REC_END || rc == REC_INVALID) {
			/* The log ends before last_lsn: nothing to cut. */
			rc = 1;
		}
	}
	cut_off = r.off;
	seg_reader_close(&r);
	if (rc == SLUICE_ECORRUPT) {
		log_err("log",
		    "segment header does not parse; cannot truncate "
		    "segment=%s",
		    path);
		goto out;
	}
	if (rc < 0)
		goto out;
	if (rc == 0) {
		rc = data_end(path, cut_off, &stop);
		if (rc == 0 && stop > cut_off) {
			rc = seg_cut(path, cut_off, stop - cut_off);
			if (rc == 0)
				log_info("log",
				    "segment cut segment=%s offset=%" PRIu64
				    " bytes=%" PRIu64 " cut_to=%" PRIu64,
				    path, cut_off, stop - cut_off, last_lsn);
		}
		if (rc != 0)
			goto out;
	}
	rc = fs_sync_dir(dir);
out:
	logdir_fini(&ld);
	return rc;
}

/* ---------------------------------------------------------------------
 * Cursor
 * ------------------------------------------------------------------- */

enum {
	CURSOR_WINDOW = 64 << 10, /* small: a follower re-reads at the end */
	DIRECT_WINDOW = 1 << 20,  /* O_DIRECT: no read-ahead but this */
};

struct logdir_cursor {
	char dir[LOGDIR_PATH_MAX];
	char path[LOGDIR_PATH_MAX]; /* the segment being read */
	struct seg_reader r;
	bool open;
	bool direct;       /* segments read with O_DIRECT */
	uint64_t next_lsn; /* the LSN of the next record to yield */
};

static void
cursor_drop(struct logdir_cursor *c)
{
	if (c->open)
		seg_reader_close(&c->r);
	c->open = false;
}

static int
cursor_open_seg(struct logdir_cursor *c, uint64_t first)
{
	int rc;

	rc = seg_path(c->path, sizeof(c->path), c->dir, first);
	if (rc != 0)
		return rc;
	rc = c->direct ? seg_reader_open_direct(&c->r, c->path)
	               : seg_reader_open(&c->r, c->path);
	if (rc != 0)
		return rc;
	c->r.window = c->r.direct ? DIRECT_WINDOW : CURSOR_WINDOW;
	rc = seg_reader_hdr(&c->r);
	if (rc == 0 && c->r.hdr.first_lsn != first)
		rc = SLUICE_ECORRUPT;
	if (rc != 0) {
		seg_reader_close(&c->r);
		return rc;
	}
	c->open = true;
	return 0;
}

/* Opens the segment that holds c->next_lsn. 1: the directory has none. */
static int
cursor_locate(struct logdir_cursor *c)
{
	struct logdir ld;
	uint64_t first = 0;
	int rc;

	rc = logdir_list(c->dir, &ld);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < ld.n; i++)
		if (ld.first[i] <= c->next_lsn)
			first = ld.first[i];
	if (ld.n == 0)
		rc = 1;
	else if (first == 0)
		rc = -ENOENT;
	else
		rc = cursor_open_seg(c, first);
	logdir_fini(&ld);
	return rc;
}

static int
cursor_open(
    const char *dir, uint64_t from_lsn, bool direct, struct logdir_cursor **out)
{
	struct logdir_cursor *c;
	int rc;

	if (from_lsn == 0)
		from_lsn = 1;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->r.fd = -1;
	c->direct = direct;
	c->next_lsn = from_lsn;
	if (snprintf(c->dir, sizeof(c->dir), "%s", dir) >=
	    (int)sizeof(c->dir)) {
		free(c);
		return -ENAMETOOLONG;
	}
	rc = cursor_locate(c);
	if (rc < 0 || rc == SLUICE_ECORRUPT) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int
logdir_cursor_open(
    const char *dir, uint64_t from_lsn, struct logdir_cursor **out)
{
	return cursor_open(dir, from_lsn, false, out);
}

int
logdir_cursor_open_direct(
    const char *dir, uint64_t from_lsn, struct logdir_cursor **out)
{
	return cursor_open(dir, from_lsn, true, out);
}

int
logdir_cursor_next(
    struct logdir_cursor *c, uint64_t upto_lsn, struct rec_view *out)
{
	bool refreshed = false;
	int rc;

	if (c->next_lsn > upto_lsn)
		return 1;
	if (!c->open) {
		rc = cursor_locate(c);
		if (rc != 0)
			return rc;
	}
	for (;;) {
		rc = seg_reader_next(&c->r, out);
		if (rc < 0)
			return rc;
		if (rc == REC_VALID) {
			if (out->hdr.lsn < c->next_lsn)
				continue; /* before from_lsn */
			c->next_lsn++;
			return 0;
		}
		if (!refreshed) {
			/* Bytes may have been written since the window was
			 * read. */
			seg_reader_refresh(&c->r);
			refreshed = true;
			continue;
		}
		/* The segment ends before c->r.next_lsn: is that the first
		 * record of the next segment? */
		{
			char next[LOGDIR_PATH_MAX];
			uint64_t first = c->r.next_lsn;
			int prc = seg_path(next, sizeof(next), c->dir, first);

			if (prc != 0)
				return prc;
			if (access(next, F_OK) == 0) {
				cursor_drop(c);
				prc = cursor_open_seg(c, first);
				if (prc != 0)
					return prc;
				refreshed = false;
				continue;
			}
		}
		if (rc == REC_INVALID && c->r.next_lsn <= upto_lsn)
			return SLUICE_ECORRUPT;
		return 1;
	}
}

int
logdir_cursor_read(struct logdir_cursor *c, uint64_t upto_lsn, size_t max_bytes,
    struct buf *out, uint64_t *last_lsn)
{
	size_t start = out->len;
	struct rec_view v;
	int n = 0, rc;

	while (n == 0 || out->len - start < max_bytes) {
		rc = logdir_cursor_next(c, upto_lsn, &v);
		if (rc == 1)
			break;
		if (rc != 0)
			return n > 0 ? n : rc;
		buf_put(out, v.body - REC_HDR_SIZE, v.size);
		if (buf_failed(out))
			return -ENOMEM;
		*last_lsn = v.hdr.lsn;
		n++;
	}
	return n;
}

uint64_t
logdir_cursor_lsn(const struct logdir_cursor *c)
{
	return c->next_lsn;
}

void
logdir_cursor_close(struct logdir_cursor *c)
{
	if (c == NULL)
		return;
	cursor_drop(c);
	free(c);
}
