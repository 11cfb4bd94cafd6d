/* sluice_log_salvage - `repair`'s salvage: every whole record around the
 * damage is kept, as far as the queue's rules allow, and what is lost is
 * named.
 *
 * Why a snapshot. Recovery replays one unbroken sequence of LSNs; a log
 * with a hole in it (a bad stretch swallowed LSNs 5001..5001) cannot be
 * replayed past the hole, which is why cutting there (the old repair, now
 * `repair --cut-at-damage`) loses every record after it. The salvage
 * replays instead what the walk finds, in LSN order, into a queue: the
 * snapshot recovery starts from, then every whole record after it,
 * skipping the LSNs no whole record holds. queue_apply() is the judge of
 * what may follow a hole: a record that does not apply to the state
 * rebuilt before it (an ack of a task whose put was lost, a take whose
 * task is gone) is refused and listed with its reason; one that applies
 * is kept. The state is then written as a snapshot at the last LSN kept,
 * the old segments and snapshots go to lost+found (their bytes are kept
 * there, whole), a new, empty segment starts the log right after the
 * snapshot, and the DURABLE mark is set to the snapshot's LSN: the next
 * start reads the snapshot and appends after it.
 *
 * What is lost, said exactly (the file LOST in lost+found, and the
 * output):
 *   - each run of LSNs no whole record holds, with the bytes it was in;
 *     a record there whose header and body still decode (its checksum
 *     fails) is named as what it probably was, "content not trusted";
 *   - each whole record refused, with its type, task id, the task's tube
 *     when the queue knows it, and queue_apply()'s reason;
 *   - task ids that puts in the lost LSNs must have had (ids are given in
 *     order, so a put after a hole whose id jumps names the ids between);
 *   - LSNs the log had synced (the DURABLE mark) that no file holds.
 * A record in a hole whose effect was lost leaves its task as the last
 * whole record left it: a lost ack leaves a task to be delivered again
 * (at least once), never a task lost.
 *
 * Followers of a salvaged node must load a snapshot from it: its log
 * starts again after the salvaged snapshot. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/durable.h"
#include "queue/qrec.h"
#include "sluice.h"
#include "sluice_log.h"
#include "util/clock.h"
#include "util/fsutil.h"

enum {
	SNAP_BUF = 1 << 20,
	PROBE_MAX = 4 << 20, /* bytes of a bad stretch probed for records */
};

struct salv_ctx {
	const struct lt_dir *d;
	struct lt_salvage *sv;
	bool started;       /* past the snapshot's LSN */
	uint64_t gap_next;  /* queue_next_id before the last hole, or 0 */
	uint64_t gap_first; /* LSNs of that hole */
	uint64_t gap_last;
	int oom;
};

static void lost_line(struct lt_salvage *sv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
lost_line(struct lt_salvage *sv, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	buf_printf(&sv->lost, "%s\n", line);
}

/* " tube=NAME" of task `id` when the queue knows it, else "". */
static void
tube_of(struct lt_salvage *sv, uint64_t id, char *out, size_t n)
{
	struct queue_task_view t;

	out[0] = '\0';
	if (id != 0 && queue_peek(sv->q, sv->last_time, id, &t) == 0)
		snprintf(out, n, " tube=%.*s", (int)t.tube_len, t.tube);
}

/* A hole closed by the record at `lsn`: the LSNs between are lost. */
static void
note_hole(struct salv_ctx *c, uint64_t first, uint64_t last)
{
	struct lt_salvage *sv = c->sv;

	sv->gone += last - first + 1;
	if (sv->gone_first == 0 || first < sv->gone_first)
		sv->gone_first = first;
	if (last > sv->gone_last)
		sv->gone_last = last;
	if (first == last)
		lost_line(
		    sv, "LSN %" PRIu64 ": no whole record holds it", first);
	else
		lost_line(sv,
		    "LSNs %" PRIu64 "..%" PRIu64 ": no whole record holds them",
		    first, last);
	if (c->gap_next == 0) {
		c->gap_next = queue_next_id(sv->q);
		c->gap_first = first;
	}
	c->gap_last = last;
}

/* Names the ids the puts in the last hole had: ids are given in order,
 * so those between the queue's next id before the hole and the id of the
 * first put after it. */
static void
lost_ids(struct lt_salvage *sv, const struct salv_ctx *c, uint64_t next_put)
{
	char ids[64], lsns[64];

	if (next_put - c->gap_next == 1)
		snprintf(ids, sizeof(ids), "task %" PRIu64, c->gap_next);
	else
		snprintf(ids, sizeof(ids), "tasks %" PRIu64 "..%" PRIu64,
		    c->gap_next, next_put - 1);
	if (c->gap_first == c->gap_last)
		snprintf(lsns, sizeof(lsns), "LSN %" PRIu64, c->gap_first);
	else
		snprintf(lsns, sizeof(lsns), "LSNs %" PRIu64 "..%" PRIu64,
		    c->gap_first, c->gap_last);
	lost_line(sv,
	    "%s: put in the lost %s (ids come in order; the next put has "
	    "id %" PRIu64 "): lost",
	    ids, lsns, next_put);
}

static int
salv_rec(void *arg, const struct lt_dir *d, size_t seg, uint64_t off,
    const struct rec_view *v)
{
	struct salv_ctx *c = arg;
	struct lt_salvage *sv = c->sv;
	char line[512], tube[256];
	struct buf fmt;
	struct qrec q;
	uint64_t id;
	int rc;

	if (v->hdr.lsn <= sv->snap_lsn && !c->started)
		return 0; /* the snapshot covers it */
	c->started = true;
	if (v->hdr.lsn <= sv->last_lsn) {
		sv->refused++;
		lost_line(sv,
		    "LSN %" PRIu64 " in %s offset %" PRIu64
		    ": out of sequence (after LSN %" PRIu64 "); not applied",
		    v->hdr.lsn, d->segs[seg].name, off, sv->last_lsn);
		return 0;
	}
	if (v->hdr.lsn > sv->last_lsn + 1)
		note_hole(c, sv->last_lsn + 1, v->hdr.lsn - 1);
	if (v->hdr.epoch < sv->last_epoch) {
		sv->refused++;
		lost_line(sv,
		    "LSN %" PRIu64 " in %s offset %" PRIu64 ": epoch %" PRIu64
		    " is below %" PRIu64 "; not applied",
		    v->hdr.lsn, d->segs[seg].name, off, v->hdr.epoch,
		    sv->last_epoch);
		sv->last_lsn = v->hdr.lsn;
		return 0;
	}
	rc = 0;
	id = 0;
	if (v->hdr.type < REC_TYPE_LOG_MIN) {
		rc = qrec_decode(v->hdr.type, v->body, v->body_len, &q);
		if (rc == 0) {
			/* a kick is not counted as its task's: a refused one
			 * is named by its type alone, as salvage always has */
			id = q.type == QREC_KICK ? 0 : lt_qrec_id(&q);
			tube_of(sv, id, tube, sizeof(tube));
			if ((q.type == QREC_PUT || q.type == QREC_PUT_V ||
			        q.type == QREC_PUT_G || q.type == QREC_PUT_T ||
			        q.type == QREC_PUT_X || q.type == QREC_PUTS) &&
			    c->gap_next != 0) {
				uint64_t first = q.type == QREC_PUTS
				    ? q.u.puts.first_id
				    : q.u.put.id;

				if (first > c->gap_next)
					lost_ids(sv, c, first);
				c->gap_next = 0;
			}
			rc = queue_apply(sv->q, v->hdr.lsn, v->hdr.time, &q);
		}
		if (rc == SLUICE_ENOMEM) {
			c->oom = rc;
			return -ENOMEM;
		}
	}
	sv->last_lsn = v->hdr.lsn;
	sv->last_epoch = v->hdr.epoch;
	sv->last_time = v->hdr.time;
	if (rc == 0) {
		sv->kept++;
		return 0;
	}
	sv->refused++;
	buf_init(&fmt);
	if (id != 0)
		qrec_format(&q, &fmt);
	snprintf(line, sizeof(line), "%.*s", (int)fmt.len,
	    fmt.len ? (const char *)fmt.data : "");
	buf_fini(&fmt);
	if (id == 0)
		snprintf(line, sizeof(line), "%s",
		    lt_type_name(v->hdr.type) ? lt_type_name(v->hdr.type)
		                              : "?");
	lost_line(sv,
	    "LSN %" PRIu64 " in %s offset %" PRIu64 ": %s%s: does not apply "
	    "to the state before it (%s); not applied",
	    v->hdr.lsn, d->segs[seg].name, off, line, id != 0 ? tube : "",
	    sluice_strerror(rc));
	if (id != 0) {
		if (sv->lost_ids_n < LT_LOST_IDS)
			sv->lost_ids[sv->lost_ids_n] = id;
		sv->lost_ids_n++;
	}
	return 0;
}

/* Names what the records in a bad stretch probably were: a record whose
 * header and body still decode, its checksum failing. */
static void
probe_stretch(struct salv_ctx *c, size_t seg, const struct walk_bad *b)
{
	struct lt_salvage *sv = c->sv;
	char path[PATH_MAX];
	uint64_t len = b->end - b->off;
	uint8_t *p;
	int fd;

	ssize_t got;

	if (b->header)
		return;
	/* A stretch ends at its last non-zero byte: the padding of its
	 * last record may lie past it. */
	len += REC_ALIGN;
	if (len > PROBE_MAX)
		len = PROBE_MAX;
	lt_path(c->d, c->d->segs[seg].name, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	p = malloc((size_t)len);
	got = p == NULL ? -1 : pread(fd, p, (size_t)len, (off_t)b->off);
	close(fd);
	if (got < REC_HDR_SIZE) {
		free(p);
		return;
	}
	len = (uint64_t)got;
	for (uint64_t at = 0; at + REC_HDR_SIZE <= len; at += 8) {
		uint32_t rlen = le_load_u32(p + at);
		uint16_t type = le_load_u16(p + at + 4);
		uint64_t lsn = le_load_u64(p + at + 8);
		struct qrec q;
		struct buf fmt;

		if (rlen < REC_HDR_SIZE || rlen > len - at || type == 0 ||
		    type >= REC_TYPE_LOG_MIN || p[at + 6] != REC_VERSION ||
		    p[at + 7] != 0 || lsn <= b->lsn_before ||
		    (b->lsn_after != 0 && lsn >= b->lsn_after))
			continue;
		if (qrec_decode(type, p + at + REC_HDR_SIZE,
		        rlen - REC_HDR_SIZE, &q) != 0)
			continue;
		buf_init(&fmt);
		qrec_format(&q, &fmt);
		lost_line(sv,
		    "LSN %" PRIu64 " in %s offset %" PRIu64
		    " (damaged: its checksum fails, content not trusted) was "
		    "probably: %.*s",
		    lsn, c->d->segs[seg].name, b->off + at, (int)fmt.len,
		    fmt.len ? (const char *)fmt.data : "");
		buf_fini(&fmt);
		at += ((rlen + 7) & ~7u) - 8;
	}
	free(p);
}

static int
salv_bad(
    void *arg, const struct lt_dir *d, size_t seg, const struct walk_bad *b)
{
	struct salv_ctx *c = arg;

	(void)d;
	if (!c->started && b->lsn_after != 0 && b->lsn_after <= c->sv->snap_lsn)
		return 0;
	lost_line(c->sv,
	    "bad bytes in %s offset %" PRIu64 "..%" PRIu64 " after LSN %" PRIu64
	    " (%s)",
	    c->d->segs[seg].name, b->off, b->end, b->lsn_before,
	    b->header                       ? "segment header"
	        : b->damage != SEG_BAD_NONE ? seg_bad_str(b->damage)
	                                    : rec_why_str(b->why));
	probe_stretch(c, seg, b);
	return 0;
}

int
lt_salvage_run(const struct lt_dir *d, struct lt_salvage *sv)
{
	static const struct lt_visit visit = { salv_rec, salv_bad };
	struct salv_ctx c = { d, sv, false, 0, 0, 0, 0 };
	int rc = 0;

	memset(sv, 0, sizeof(*sv));
	buf_init(&sv->lost);
	sv->q = queue_new(NULL);
	if (sv->q == NULL)
		return SLUICE_ENOMEM;
	if (d->snap_used >= 0) {
		const struct lt_snap *s = &d->snaps[d->snap_used];

		rc = lt_snap_load(d, (size_t)d->snap_used, sv->q);
		if (rc != 0)
			return rc;
		sv->snap_lsn = s->info.lsn;
		sv->last_epoch = s->info.epoch;
		sv->last_time = s->info.time;
	}
	sv->last_lsn = sv->snap_lsn;
	for (size_t i = 0; i < d->nsegs && rc == 0; i++) {
		if (d->segs[i].err != 0) {
			lost_line(sv, "%s cannot be read: %s", d->segs[i].name,
			    strerror(-d->segs[i].err));
			continue;
		}
		if (d->segs[i].w.nrec > 0 &&
		    d->segs[i].w.last_lsn <= sv->snap_lsn && i + 1 < d->nsegs)
			continue; /* covered by the snapshot */
		rc = lt_seg_walk(d, i, &visit, &c);
	}
	if (c.oom != 0)
		return c.oom;
	if (rc != 0)
		return rc;
	if (d->mark.lsn > sv->last_lsn) {
		uint64_t first = sv->last_lsn + 1;
		char span[64];

		sv->gone += d->mark.lsn - first + 1;
		if (sv->gone_first == 0 || first < sv->gone_first)
			sv->gone_first = first;
		sv->gone_last = d->mark.lsn;

		if (d->mark.lsn > first)
			snprintf(span, sizeof(span),
			    "LSNs %" PRIu64 "..%" PRIu64, first, d->mark.lsn);
		else
			snprintf(span, sizeof(span), "LSN %" PRIu64, first);
		lost_line(sv,
		    "%s: the log had synced up to LSN %" PRIu64
		    " (its DURABLE mark) and no whole record after LSN %" PRIu64
		    " is left; tasks from id %" PRIu64
		    " on, if any, were put there",
		    span, d->mark.lsn, first - 1, queue_next_id(sv->q));
	} else if (c.gap_next != 0 && sv->gone > 0) {
		lost_line(sv,
		    "no put follows the last hole: tasks put in it, if any, "
		    "had ids from %" PRIu64 " on",
		    c.gap_next);
	}
	return 0;
}

void
lt_salvage_free(struct lt_salvage *sv)
{
	queue_free(sv->q);
	sv->q = NULL;
	buf_fini(&sv->lost);
}

void
lt_salvage_describe(const struct lt_salvage *sv, bool dry, struct buf *out)
{
	buf_printf(out,
	    "salvage %s every whole record after the snapshot at LSN %" PRIu64
	    " that applies: %" PRIu64 " record%s kept, to LSN %" PRIu64
	    "; %" PRIu64 " LSN%s with no whole record, %" PRIu64
	    " whole record%s refused by the queue\n",
	    dry ? "would keep" : "kept", sv->snap_lsn, sv->kept,
	    sv->kept == 1 ? "" : "s", sv->last_lsn, sv->gone,
	    sv->gone == 1 ? "" : "s", sv->refused, sv->refused == 1 ? "" : "s");
	if (sv->lost.len > 0) {
		buf_printf(out, "lost:\n");
		buf_put(out, sv->lost.data, sv->lost.len);
	}
}

/* A new empty segment named last + 1, of `size` bytes, for the log to
 * continue after the salvaged snapshot. */
static int
new_segment(const char *dir, uint64_t first, uint64_t epoch, uint64_t size)
{
	char path[PATH_MAX];
	struct seg_hdr h = { 0 };
	uint8_t hdr[SEG_HDR_SIZE];
	int fd, rc;

	rc = seg_path(path, sizeof(path), dir, first);
	if (rc != 0)
		return rc;
	rc = seg_prealloc(path, size, true, &fd, NULL);
	if (rc != 0)
		return rc;
	h.version = SEG_VERSION;
	h.hdr_size = SEG_HDR_SIZE;
	h.first_lsn = first;
	h.epoch = epoch;
	h.created = clock_now_ms();
	h.size = size;
	seg_hdr_encode(hdr, &h);
	rc = fs_pwrite_all(fd, hdr, sizeof(hdr), 0);
	if (rc == 0 && fdatasync(fd) < 0)
		rc = -errno;
	close(fd);
	if (rc != 0)
		unlink(path);
	return rc == 0 ? fs_sync_dir(dir) : rc;
}

static int
emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	return snap_writer_add(arg, type, a, alen, b, blen);
}

static int
write_text(const char *path, const struct buf *b)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc;

	if (fd < 0)
		return -errno;
	rc = fs_pwrite_all(fd, b->data, b->len, 0);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int
lt_salvage_apply(const struct lt_dir *d, struct lt_salvage *sv, FILE *out)
{
	char lf[PATH_MAX], path[PATH_MAX + 16], from[PATH_MAX], to[PATH_MAX];
	uint64_t seg_size = SEG_SIZE_DEFAULT;
	struct snap_writer w;
	struct buf note;
	void *sbuf = NULL;
	int lock = -1, rc;

	if (lt_dir_lock(d, &lock) != 0)
		return LT_EXIT_DAMAGE;
	rc = lt_make_lost_found(d, lf, sizeof(lf));
	buf_init(&note);
	if (rc == 0) {
		char now[40];

		lt_time(clock_now_ms(), now, sizeof(now));
		buf_printf(&note,
		    "sluice-log repair (salvage) of %s, started at %s\n"
		    "steps: write the snapshot %020" PRIu64
		    ".snap (the state after every whole record that "
		    "applies), move every segment and older snapshot here, "
		    "start a new empty segment %020" PRIu64
		    ".wal, set DURABLE to the snapshot's LSN.\n"
		    "If this stops half-way: the snapshot, once it exists, "
		    "holds everything kept; the segments here are the "
		    "originals, whole.\n\n",
		    d->path, now, sv->last_lsn, sv->last_lsn + 1);
		lt_salvage_describe(sv, false, &note);
		snprintf(path, sizeof(path), "%s/NOTE", lf);
		rc = write_text(path, &note);
		if (rc == 0) {
			snprintf(path, sizeof(path), "%s/LOST", lf);
			rc = write_text(path, &sv->lost);
		}
	}
	if (rc != 0) {
		fprintf(stderr,
		    "sluice-log: cannot make %s/lost+found: %s; nothing was "
		    "changed\n",
		    d->path, strerror(-rc));
		goto fail;
	}

	/* 1. The snapshot: everything kept is in it from here on. */
	if (sv->last_lsn != sv->snap_lsn) {
		sbuf = malloc(SNAP_BUF);
		rc = sbuf == NULL
		    ? -ENOMEM
		    : snap_writer_open(&w, d->path, sv->last_lsn,
		          sv->last_epoch, sv->last_time, sbuf, SNAP_BUF);
		if (rc == 0) {
			rc = queue_snapshot_write(sv->q, emit, &w);
			if (rc == 0)
				rc = snap_writer_commit(&w);
			else
				snap_writer_abort(&w);
		}
		if (rc != 0) {
			fprintf(stderr,
			    "sluice-log: cannot write the snapshot at LSN "
			    "%" PRIu64 ": %s; nothing else was changed\n",
			    sv->last_lsn, sluice_strerror(rc));
			goto fail;
		}
		fprintf(out,
		    "wrote %020" PRIu64 ".snap: %" PRIu64
		    " records kept after LSN %" PRIu64 "\n",
		    sv->last_lsn, sv->kept, sv->snap_lsn);
	}
	/* 2. The old segments, and damaged snapshots, to lost+found. */
	for (size_t i = 0; i < d->nsegs; i++) {
		const struct lt_seg *s = &d->segs[i];

		if (s->w.hdr_ok && s->w.hdr.size > SEG_HDR_SIZE)
			seg_size = s->w.hdr.size;
		lt_path(d, s->name, from, sizeof(from));
		if (fs_join(to, sizeof(to), lf, s->name) != 0 ||
		    rename(from, to) < 0) {
			rc = -errno;
			fprintf(stderr, "sluice-log: cannot move %s: %s\n",
			    s->name, strerror(errno));
			goto fail;
		}
		fprintf(out, "moved %s to lost+found\n", s->name);
	}
	for (size_t i = 0; i < d->nsnaps; i++) {
		const struct lt_snap *s = &d->snaps[i];

		if (s->name_lsn == sv->last_lsn)
			continue; /* the salvaged one (nothing was after it) */
		lt_path(d, s->name, from, sizeof(from));
		if (fs_join(to, sizeof(to), lf, s->name) == 0 &&
		    rename(from, to) == 0)
			fprintf(out, "moved %s to lost+found (%s)\n", s->name,
			    s->usable ? "an older snapshot: the log after it "
			                "is there too"
			              : "a damaged snapshot");
	}
	rc = fs_sync_dir(lf);
	if (rc == 0)
		rc = fs_sync_dir(d->path);
	/* 3. The log starts again after the snapshot, which is synced: the
	 * mark says so. */
	if (rc == 0)
		rc = new_segment(
		    d->path, sv->last_lsn + 1, sv->last_epoch, seg_size);
	if (rc == 0) {
		struct durable m;

		rc = durable_open(&m, d->path, sv->last_lsn);
		durable_close(&m);
	}
	if (rc != 0) {
		fprintf(stderr,
		    "sluice-log: the salvage did not finish: %s; %s/NOTE "
		    "says what was planned\n",
		    sluice_strerror(rc), lf);
		goto fail;
	}
	fprintf(out, "started %020" PRIu64 ".wal: the log continues there\n",
	    sv->last_lsn + 1);
	buf_reset(&note);
	buf_printf(&note, "salvage done; LOST lists what was lost\n");
	snprintf(path, sizeof(path), "%s/NOTE.done", lf);
	write_text(path, &note);
	fprintf(out,
	    "lost+found: %s (NOTE says what was done, LOST what was "
	    "lost)\n",
	    lf);
	buf_fini(&note);
	free(sbuf);
	close(lock);
	return LT_EXIT_OK;

fail:
	buf_fini(&note);
	free(sbuf);
	close(lock);
	return rc < 0 && rc != -ENOMEM ? LT_EXIT_IO : LT_EXIT_DAMAGE;
}
