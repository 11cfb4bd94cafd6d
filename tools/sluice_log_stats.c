/* sluice_log_stats - `stats` (what the directory holds and why it is as
 * big as it is) and `state` (the queue rebuilt up to an LSN).
 *
 * stats. Per segment: its records, bytes, LSNs and times; how many of its
 * records are live (the task it concerns is still live at the end of the
 * log; a PAUSE whose pause still runs; the EPOCH record of the current
 * epoch) and dead; and what keeps the file: recovery (it holds records
 * after the newest snapshot) or retention (older than that snapshot, kept
 * for an older snapshot sluiced keeps, --keep-snapshots, or by
 * --keep-segments for followers). The end state comes from the same
 * replay verify runs; on a damaged log the live counts are unknown.
 *
 * state. recover() from the log library, exactly as sluiced starts, with
 * upto_lsn = --at, then the queue's counts as of its clock, which is the
 * time of the last record applied: delayed tasks due by then are ready.
 * The JSON has the shape of `sluice stats --json` (keys, order, counter
 * names; role "offline", leader null, durable_lsn = lsn, now = the queue's
 * clock), so the two can be compared, plus what only the log knows
 * (snapshot_lsn, records_replayed, next_id, the oldest task). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log/recover.h"
#include "sluice.h"
#include "sluice_log.h"
#include "util/fsutil.h"

/* ---- stats ------------------------------------------------------------ */

struct seg_live {
	uint64_t live, dead;
};

struct live_ctx {
	struct queue *q; /* the end state; NULL when unknown */
	uint64_t epoch;  /* of the end */
	struct seg_live *segs;
};

static bool
rec_live(struct live_ctx *c, const struct rec_view *v)
{
	struct queue_tube_stats ts;
	struct queue_task_view tv;
	struct qrec_tube_conf conf;
	struct qrec r;
	uint64_t id;

	if (v->hdr.type == REC_EPOCH)
		return v->body_len == REC_EPOCH_BODY &&
		    le_load_u64(v->body) == c->epoch;
	if (qrec_decode(v->hdr.type, v->body, v->body_len, &r) != 0)
		return false;
	if (r.type == QREC_PAUSE)
		return queue_tube_stats(c->q, 0, r.u.pause.tube,
		           r.u.pause.tube_len, &ts) == 0 &&
		    ts.paused_until == r.u.pause.until && ts.paused_until != 0;
	if (r.type == QREC_TUBE_SET) /* the tube still has these settings */
		return queue_tube_settings(c->q, r.u.tube_set.tube,
		           r.u.tube_set.tube_len, &conf) == 0 &&
		    conf.set == r.u.tube_set.conf.set && conf.set != 0;
	id = lt_qrec_id(&r);
	return id != 0 && queue_peek(c->q, 0, id, &tv) == 0;
}

static int
live_rec(void *arg, const struct lt_dir *d, size_t seg, uint64_t off,
    const struct rec_view *v)
{
	struct live_ctx *c = arg;

	(void)d;
	(void)off;
	if (rec_live(c, v))
		c->segs[seg].live++;
	else
		c->segs[seg].dead++;
	return 0;
}

/* Bytes under lost+found (two levels: one directory per repair). */
static uint64_t
lost_found_bytes(const struct lt_dir *d)
{
	char lf[PATH_MAX];
	uint64_t total = 0;
	struct dirent *e;
	DIR *top;

	lt_path(d, "lost+found", lf, sizeof(lf));
	top = opendir(lf);
	if (top == NULL)
		return 0;
	while ((e = readdir(top)) != NULL) {
		char sub[PATH_MAX * 2];
		struct dirent *f;
		struct stat st;
		DIR *in;

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", lf, e->d_name);
		if (stat(sub, &st) != 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			total += (uint64_t)st.st_size;
			continue;
		}
		if ((in = opendir(sub)) == NULL)
			continue;
		while ((f = readdir(in)) != NULL) {
			char path[PATH_MAX * 3];

			snprintf(path, sizeof(path), "%s/%s", sub, f->d_name);
			if (f->d_name[0] != '.' && stat(path, &st) == 0 &&
			    S_ISREG(st.st_mode))
				total += (uint64_t)st.st_size;
		}
		closedir(in);
	}
	closedir(top);
	return total;
}

enum keep_reason {
	KEPT_RECOVERY,
	KEPT_NO_SNAPSHOT,
	KEPT_RETENTION,
	KEPT_EXTRA
};

static const char *const keep_names[] = { "recovery", "recovery", "retention",
	"retention" };

static enum keep_reason
kept_by(const struct lt_dir *d, size_t i, unsigned keep)
{
	int k = lt_start_seg(d);

	if (d->snap_used < 0)
		return KEPT_NO_SNAPSHOT;
	if (k < 0 || (int)i >= k)
		return KEPT_RECOVERY;
	/* Records after an older snapshot sluiced keeps (--keep-snapshots):
	 * recovery falls back to it and needs them. */
	for (size_t j = 0; j < d->nsnaps; j++) {
		if (!d->snaps[j].usable)
			continue;
		if (d->segs[i].w.nrec > 0 &&
		    d->segs[i].w.last_lsn > d->snaps[j].info.lsn)
			return KEPT_RETENTION;
		break; /* the oldest usable one decides */
	}
	/* Older than the snapshot: sluiced keeps the newest `keep` of
	 * these after each snapshot. */
	return (size_t)k - i <= keep ? KEPT_RETENTION : KEPT_EXTRA;
}

static const char *
kept_text(const struct lt_dir *d, enum keep_reason r, unsigned keep)
{
	static char text[160];

	switch (r) {
	case KEPT_NO_SNAPSHOT:
		return "recovery (no snapshot yet: the whole log is replayed)";
	case KEPT_RECOVERY:
		snprintf(text, sizeof(text),
		    "recovery (records after the snapshot at LSN %" PRIu64 ")",
		    d->snaps[d->snap_used].info.lsn);
		return text;
	case KEPT_RETENTION:
		snprintf(text, sizeof(text),
		    "retention (older than the snapshot; kept for an older "
		    "snapshot, --keep-snapshots, or for followers, "
		    "--keep-segments %u)",
		    keep);
		return text;
	case KEPT_EXTRA:
		snprintf(text, sizeof(text),
		    "nothing (beyond --keep-segments %u: sluiced removes it "
		    "at its next snapshot)",
		    keep);
		return text;
	}
	return "?";
}

static void
stats_usage(FILE *f)
{
	fputs("usage: sluice-log stats DIR [--json] [--keep-segments N]\n"
	      "Per segment: records, bytes, first/last LSN and time, live and "
	      "dead records,\n"
	      "and what keeps it (recovery or --keep-segments retention, "
	      "default 2).\n",
	    f);
}

int
lt_cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "keep-segments", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct lt_visit visit = { live_rec, NULL };
	struct live_ctx lc = { NULL, 0, NULL };
	uint64_t seg_bytes = 0, snap_bytes = 0, lf_bytes, keep64 = 2;
	uint64_t live = 0, dead = 0, rec_bytes = 0;
	uint64_t kept_bytes[4] = { 0 };
	size_t kept_n[4] = { 0 };
	bool json = false, known;
	struct lt_replay r;
	struct lt_dir d;
	unsigned keep;
	struct buf b;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'k':
			if (!lt_parse_u64("--keep-segments", optarg, &keep64))
				return LT_EXIT_USAGE;
			break;
		case 'h':
			stats_usage(stdout);
			return LT_EXIT_OK;
		default:
			stats_usage(stderr);
			return LT_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		stats_usage(stderr);
		return LT_EXIT_USAGE;
	}
	keep = keep64 > 100000 ? 100000 : (unsigned)keep64;
	rc = lt_open_checked(argv[optind], &d, NULL, NULL);
	if (rc != LT_EXIT_OK)
		return rc;
	rc = lt_dir_check_replay(&d, &r);
	known = rc == 0 && !r.failed && !r.broken &&
	    lt_dir_count(&d, LT_DAMAGE) == 0 && lt_dir_count(&d, LT_IOERR) == 0;
	lc.segs = calloc(d.nsegs + 1, sizeof(*lc.segs));
	if (known && lc.segs != NULL) {
		lc.q = r.q;
		lc.epoch = r.epoch;
		lt_progress_start("counting live records in segment", d.nsegs);
		for (size_t i = 0; i < d.nsegs && rc == 0; i++) {
			lt_progress(i, d.segs[i].name);
			rc = lt_seg_walk(&d, i, &visit, &lc);
		}
		lt_progress_end();
		if (rc != 0)
			known = false;
	}
	lf_bytes = lost_found_bytes(&d);
	buf_init(&b);
	if (json)
		buf_printf(&b, "{\"segments\":[");
	else if (d.nsegs > 0)
		buf_printf(&b,
		    "%-24s %10s %10s %9s %9s %9s %10s %10s  %-24s  "
		    "%-24s  %s\n",
		    "segment", "first_lsn", "last_lsn", "records", "live",
		    "dead", "bytes", "file", "first record", "last record",
		    "kept by");
	for (size_t i = 0; i < d.nsegs; i++) {
		const struct lt_seg *s = &d.segs[i];
		enum keep_reason kr = kept_by(&d, i, keep);
		char t0[40] = "-", t1[40] = "-", sz[32], fsz[32];
		char nl[24] = "-", nd[24] = "-";

		seg_bytes += s->size;
		rec_bytes += s->rec_bytes;
		kept_n[kr]++;
		kept_bytes[kr] += s->size;
		if (known) {
			live += lc.segs[i].live;
			dead += lc.segs[i].dead;
			snprintf(nl, sizeof(nl), "%" PRIu64, lc.segs[i].live);
			snprintf(nd, sizeof(nd), "%" PRIu64, lc.segs[i].dead);
		}
		if (s->w.nrec > 0) {
			lt_time(s->first_time, t0, sizeof(t0));
			lt_time(s->last_time, t1, sizeof(t1));
		}
		if (json) {
			buf_printf(&b,
			    "%s{\"name\":\"%s\",\"first_lsn\":%" PRIu64
			    ",\"last_lsn\":%" PRIu64 ",\"records\":%" PRIu64
			    ",\"bytes\":%" PRIu64 ",\"file_bytes\":%" PRIu64
			    ",\"first_time\":%" PRId64 ",\"last_time\":%" PRId64
			    ",\"epoch\":%" PRIu64 ",",
			    i ? "," : "", s->name,
			    s->w.nrec ? s->w.first_lsn : 0,
			    s->w.nrec ? s->w.last_lsn : 0, s->w.nrec,
			    s->rec_bytes, s->size, s->first_time, s->last_time,
			    s->w.last_epoch);
			if (known)
				buf_printf(&b,
				    "\"live\":%" PRIu64 ",\"dead\":%" PRIu64
				    ",",
				    lc.segs[i].live, lc.segs[i].dead);
			else
				buf_printf(&b, "\"live\":null,\"dead\":null,");
			buf_printf(&b, "\"kept_by\":\"%s\",\"why\":",
			    kr == KEPT_EXTRA ? "none" : keep_names[kr]);
			{
				const char *w = kept_text(&d, kr, keep);

				lt_json_str(&b, w, strlen(w));
			}
			buf_printf(&b, "}");
			continue;
		}
		lt_size(s->rec_bytes, sz, sizeof(sz));
		lt_size(s->size, fsz, sizeof(fsz));
		buf_printf(&b,
		    "%-24s %10" PRIu64 " %10" PRIu64 " %9" PRIu64
		    " %9s %9s %10s %10s  %-24s  %-24s  %s\n",
		    s->name, s->w.nrec ? s->w.first_lsn : 0,
		    s->w.nrec ? s->w.last_lsn : 0, s->w.nrec, nl, nd, sz, fsz,
		    t0, t1, kept_text(&d, kr, keep));
	}
	if (json)
		buf_printf(&b, "],\"snapshots\":[");
	else if (d.nsnaps > 0)
		buf_printf(&b, "\n");
	for (size_t i = 0; i < d.nsnaps; i++) {
		const struct lt_snap *s = &d.snaps[i];
		char sz[32];

		snap_bytes += s->size;
		if (json) {
			buf_printf(&b,
			    "%s{\"name\":\"%s\",\"lsn\":%" PRIu64
			    ",\"epoch\":%" PRIu64 ",\"entries\":%" PRIu64
			    ",\"bytes\":%" PRIu64 ",\"usable\":%s,\"used\":%s}",
			    i ? "," : "", s->name, s->name_lsn, s->info.epoch,
			    s->info.entries, s->size,
			    s->usable ? "true" : "false",
			    (int)i == d.snap_used ? "true" : "false");
			continue;
		}
		lt_size(s->size, sz, sizeof(sz));
		buf_printf(&b,
		    "snapshot %s  LSN %" PRIu64 "  %" PRIu64
		    " entries  %s  %s\n",
		    s->name, s->name_lsn, s->info.entries, sz,
		    !s->usable                  ? "DAMAGED"
		        : (int)i == d.snap_used ? "recovery starts here"
		                                : "older (removed at the next "
		                                  "snapshot)");
	}
	if (json) {
		buf_printf(&b,
		    "],\"totals\":{\"segments\":%zu,\"segment_bytes\":%" PRIu64
		    ",\"record_bytes\":%" PRIu64 ",\"records\":%" PRIu64
		    ",\"snapshots\":%zu,\"snapshot_bytes\":%" PRIu64
		    ",\"other_bytes\":%" PRIu64 ",\"lost_found_bytes\":%" PRIu64
		    ",\"recovery_segments\":%zu,\"retention_segments\":%zu,"
		    "\"removable_segments\":%zu,",
		    d.nsegs, seg_bytes, rec_bytes, d.nrec, d.nsnaps, snap_bytes,
		    d.other_bytes, lf_bytes,
		    kept_n[KEPT_RECOVERY] + kept_n[KEPT_NO_SNAPSHOT],
		    kept_n[KEPT_RETENTION], kept_n[KEPT_EXTRA]);
		if (known)
			buf_printf(&b, "\"live\":%" PRIu64 ",\"dead\":%" PRIu64,
			    live, dead);
		else
			buf_printf(&b, "\"live\":null,\"dead\":null");
		buf_printf(&b,
		    "},\"snapshot_lsn\":%" PRIu64 ",\"last_lsn\":%" PRIu64
		    ",\"problems\":%zu}\n",
		    d.snap_used >= 0 ? d.snaps[d.snap_used].info.lsn : 0,
		    d.last_lsn, d.nprobs);
	} else {
		char a[32], s1[32], s2[32], s3[32];

		lt_size(seg_bytes, a, sizeof(a));
		lt_size(
		    kept_bytes[KEPT_RECOVERY] + kept_bytes[KEPT_NO_SNAPSHOT],
		    s1, sizeof(s1));
		lt_size(kept_bytes[KEPT_RETENTION] + kept_bytes[KEPT_EXTRA], s2,
		    sizeof(s2));
		lt_size(snap_bytes, s3, sizeof(s3));
		buf_printf(&b,
		    "\ntotal: %zu segments (%s on disk, %" PRIu64
		    " records), %zu snapshot%s (%s)",
		    d.nsegs, a, d.nrec, d.nsnaps, d.nsnaps == 1 ? "" : "s", s3);
		if (lf_bytes > 0) {
			lt_size(lf_bytes, a, sizeof(a));
			buf_printf(&b, ", lost+found %s", a);
		}
		buf_printf(&b, "\n");
		if (known && live + dead > 0)
			buf_printf(&b,
			    "records: %" PRIu64 " live, %" PRIu64
			    " dead (%.0f%% of the log no longer matters to "
			    "the queue)\n",
			    live, dead,
			    100.0 * (double)dead / (double)(live + dead));
		else if (!known && d.nsegs > 0)
			buf_printf(&b,
			    "records: live and dead unknown: the log is "
			    "damaged (run `sluice-log verify %s`)\n",
			    d.path);
		if (d.snap_used < 0 && d.nsegs > 0)
			buf_printf(&b,
			    "why this size: no snapshot yet, so every segment "
			    "(%s) is needed to rebuild the queue; sluiced "
			    "snapshots after --snapshot-records or "
			    "--snapshot-bytes, or on `sluice snapshot`\n",
			    s1);
		else if (d.nsegs > 0)
			buf_printf(&b,
			    "why this size: %zu segment(s) (%s) hold records "
			    "after the snapshot at LSN %" PRIu64
			    " (recovery needs them); %zu older segment(s) (%s) "
			    "are kept for followers, %zu of them beyond "
			    "--keep-segments %u\n",
			    kept_n[KEPT_RECOVERY], s1,
			    d.snaps[d.snap_used].info.lsn,
			    kept_n[KEPT_RETENTION] + kept_n[KEPT_EXTRA], s2,
			    kept_n[KEPT_EXTRA], keep);
		if (d.nprobs > 0)
			buf_printf(&b,
			    "problems: %zu (run `sluice-log verify %s`)\n",
			    d.nprobs, d.path);
	}
	lt_flush(&b, stdout);
	buf_fini(&b);
	free(lc.segs);
	lt_replay_free(&r);
	rc = lt_dir_count(&d, LT_DAMAGE) > 0 ? LT_EXIT_DAMAGE
	    : lt_dir_count(&d, LT_IOERR) > 0 ? LT_EXIT_IO
	                                     : LT_EXIT_OK;
	lt_dir_free(&d);
	return rc;
}

/* ---- state ------------------------------------------------------------ */

struct state_ctx {
	struct queue *q;
	uint64_t n;
	int rc; /* the first record that did not apply */
	uint64_t bad_lsn;
	uint16_t bad_type;
};

static int
state_entry(void *arg, uint16_t type, const void *data, size_t len)
{
	struct state_ctx *c = arg;

	return queue_snapshot_load(c->q, type, data, len);
}

static int
state_rec(const struct rec_hdr *h, const void *body, void *arg)
{
	struct state_ctx *c = arg;
	struct qrec r;
	int rc;

	lt_progress_count("replayed", ++c->n, h->lsn);
	if (h->type >= REC_TYPE_LOG_MIN)
		return 0;
	rc = qrec_decode(h->type, body, h->len - REC_HDR_SIZE, &r);
	if (rc == 0)
		rc = queue_apply(c->q, h->lsn, h->time, &r);
	if (rc != 0) {
		c->rc = rc;
		c->bad_lsn = h->lsn;
		c->bad_type = h->type;
	}
	return rc;
}

struct oldest {
	bool have;
	struct queue_task_view v;
	char tube[QREC_NAME_MAX + 1];
};

static void
find_oldest(struct queue *q, int64_t now, struct oldest *o)
{
	uint32_t n = queue_tube_count(q);

	memset(o, 0, sizeof(*o));
	for (uint32_t i = 0; i < n; i++) {
		struct queue_tube_stats ts;
		struct queue_list_req req = { 0 };
		struct queue_task_view v;
		size_t got = 0;

		if (queue_tube_stats_at(q, now, i, &ts) != 0)
			continue;
		req.tube = ts.name;
		req.tube_len = ts.name_len;
		req.state = QUEUE_ANY;
		req.order = QUEUE_BY_AGE;
		req.limit = 1;
		if (queue_list(q, now, &req, &v, &got) != 0 || got == 0)
			continue;
		if (!o->have || v.created_at < o->v.created_at ||
		    (v.created_at == o->v.created_at && v.id < o->v.id)) {
			o->have = true;
			o->v = v;
			snprintf(o->tube, sizeof(o->tube), "%.*s",
			    (int)ts.name_len, ts.name);
		}
	}
}

static void
state_usage(FILE *f)
{
	fputs("usage: sluice-log state DIR [--at LSN] [--json]\n"
	      "The queue rebuilt up to LSN (default: the end), as sluiced "
	      "would rebuild it;\n"
	      "delayed tasks are counted as of that record's time.\n",
	    f);
}

/* A tube's counts as `sluice stats --json` prints them: states, pause,
 * the oldest ready task's age, and the counters by the server's names. */
static void
counts_json(struct buf *b, uint64_t ready, uint64_t delayed, uint64_t taken,
    uint64_t buried, uint64_t done, int64_t paused_until, int64_t oldest_age,
    const struct queue_counters *c)
{
	buf_printf(b,
	    "{\"ready\":%" PRIu64 ",\"delayed\":%" PRIu64 ",\"taken\":%" PRIu64
	    ",\"buried\":%" PRIu64 ",\"paused\":%s,\"paused_until\":%" PRId64
	    ",\"oldest_ready_age_ms\":%" PRId64 ",\"done\":%" PRIu64
	    ",\"counters\":",
	    ready, delayed, taken, buried, paused_until ? "true" : "false",
	    paused_until, oldest_age, done);
	buf_printf(b,
	    "{\"puts\":%" PRIu64 ",\"takes\":%" PRIu64 ",\"acks\":%" PRIu64
	    ",\"releases\":%" PRIu64 ",\"fails\":%" PRIu64
	    ",\"buries\":%" PRIu64 ",\"kicks\":%" PRIu64 ",\"deletes\":%" PRIu64
	    ",\"timeouts\":%" PRIu64 ",\"ttr_expired\":%" PRIu64
	    ",\"session_released\":%" PRIu64 ",\"replaces\":%" PRIu64 "}}",
	    c->put, c->take, c->ack, c->release, c->fail, c->bury, c->kick,
	    c->del, c->ttr_expired + c->session_released, c->ttr_expired,
	    c->session_released, c->replace);
}

/* After a tube's counts: "settings":{...} the tube sets itself (in the
 * counts' object, as `sluice stats --json` puts them), when it has any. */
static void
state_settings_json(
    struct buf *b, struct queue *q, const struct queue_tube_stats *ts)
{
	struct qrec_tube_conf c;

	if (ts->settings == 0 ||
	    queue_tube_settings(q, ts->name, ts->name_len, &c) != 0)
		return;
	b->len--; /* the counts' closing brace */
	buf_printf(b, ",\"settings\":{\"tube\":");
	lt_json_str(b, ts->name, ts->name_len);
	lt_json_tube_conf(b, &c);
	buf_printf(b, "}}");
}

/* The settings tubes set themselves, a line a tube. */
static void
state_settings_text(struct buf *b, struct queue *q, int64_t now)
{
	bool any = false;

	for (uint32_t i = 0; i < queue_tube_count(q); i++) {
		struct queue_tube_stats ts;
		struct qrec_tube_conf c;

		if (queue_tube_stats_at(q, now, i, &ts) != 0 ||
		    ts.settings == 0 ||
		    queue_tube_settings(q, ts.name, ts.name_len, &c) != 0)
			continue;
		if (!any)
			buf_printf(b, "\nsettings of their own:\n");
		any = true;
		buf_printf(b, "  %-22.*s", (int)ts.name_len, ts.name);
		qrec_tube_conf_format(&c, b);
		buf_printf(b, "\n");
	}
}

/* Checks `--at` against what the directory still holds, by file names:
 * rebuilding a state starts from a snapshot at or before it, or from
 * LSN 1. */
static bool
at_reachable(const struct lt_dir *d, uint64_t at)
{
	uint64_t oldest = 0;

	for (size_t i = 0; i < d->nsnaps; i++) {
		if (d->snaps[i].name_lsn <= at)
			return true;
		if (oldest == 0)
			oldest = d->snaps[i].name_lsn;
	}
	if (d->nsegs == 0 || d->segs[0].name_lsn <= 1)
		return true;
	fprintf(stderr,
	    "sluice-log: the state at LSN %" PRIu64 " cannot be rebuilt "
	    "from %s: it needs a snapshot at or before that LSN, or the log "
	    "from LSN 1, and the log now starts at LSN %" PRIu64,
	    at, d->path, d->segs[0].name_lsn);
	if (oldest != 0)
		fprintf(stderr,
		    "; the oldest snapshot is at LSN %" PRIu64
		    ", the earliest state it can give",
		    oldest);
	fputs("\n", stderr);
	return false;
}

int
lt_cmd_state(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "at", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct recover_ops ops = { state_entry, state_rec };
	struct state_ctx sc = { NULL, 0, 0, 0, 0 };
	struct recover_result res;
	struct queue_stats st;
	struct oldest old;
	char err[PATH_MAX + 256], when[40];
	uint64_t at = 0;
	bool json = false, have_at = false;
	struct lt_dir d;
	struct buf b;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!lt_parse_u64("--at", optarg, &at))
				return LT_EXIT_USAGE;
			if (at == 0) {
				fprintf(stderr,
				    "sluice-log: --at wants an LSN >= 1\n");
				return LT_EXIT_USAGE;
			}
			have_at = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			state_usage(stdout);
			return LT_EXIT_OK;
		default:
			state_usage(stderr);
			return LT_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		state_usage(stderr);
		return LT_EXIT_USAGE;
	}
	rc = lt_dir_open(argv[optind], &d, err, sizeof(err));
	if (rc != LT_EXIT_OK) {
		fprintf(stderr, "sluice-log: %s\n", err);
		return rc;
	}
	if (have_at && !at_reachable(&d, at)) {
		lt_dir_free(&d);
		return LT_EXIT_DAMAGE;
	}
	sc.q = queue_new(NULL);
	if (sc.q == NULL) {
		lt_dir_free(&d);
		return LT_EXIT_IO;
	}
	rc = recover(d.path, 0, at, &ops, &sc, &res);
	lt_progress_end();
	if (rc != 0) {
		if (sc.rc != 0)
			fprintf(stderr,
			    "sluice-log: record LSN %" PRIu64
			    " (%s) does not apply to the queue rebuilt before "
			    "it: %s\n",
			    sc.bad_lsn,
			    lt_type_name(sc.bad_type)
			        ? lt_type_name(sc.bad_type)
			        : "?",
			    sluice_strerror(sc.rc));
		fprintf(stderr,
		    "sluice-log: cannot rebuild the queue of %s%s: %s; run "
		    "`sluice-log verify %s`\n",
		    d.path, have_at ? " up to that LSN" : "",
		    sluice_strerror(rc), d.path);
		rc = rc < 0 && rc != -ENOMEM ? LT_EXIT_IO : LT_EXIT_DAMAGE;
		goto out;
	}
	if (have_at && res.last_lsn < at) {
		fprintf(stderr,
		    "sluice-log: LSN %" PRIu64 " is past the end of the log "
		    "(its last LSN is %" PRIu64 ")\n",
		    at, res.last_lsn);
		rc = LT_EXIT_DAMAGE;
		goto out;
	}
	/* As of the queue's clock: the time of the last record applied. */
	queue_stats(sc.q, 0, &st);
	queue_stats(sc.q, st.clock, &st);
	find_oldest(sc.q, st.clock, &old);
	lt_time(st.clock, when, sizeof(when));
	buf_init(&b);
	if (json) {
		int64_t oldest_age = 0;

		buf_printf(&b,
		    "{\"role\":\"offline\",\"epoch\":%" PRIu64
		    ",\"lsn\":%" PRIu64 ",\"durable_lsn\":%" PRIu64
		    ",\"now\":%" PRId64 ",\"leader\":null,\"tubes\":{",
		    res.epoch, res.last_lsn, res.last_lsn, st.clock);
		for (uint32_t i = 0; i < queue_tube_count(sc.q); i++) {
			struct queue_tube_stats ts;

			if (queue_tube_stats_at(sc.q, st.clock, i, &ts) != 0)
				break;
			buf_printf(&b, "%s", i ? "," : "");
			lt_json_str(&b, ts.name, ts.name_len);
			buf_printf(&b, ":");
			counts_json(&b, ts.ready, ts.delayed, ts.taken,
			    ts.buried, ts.done, ts.paused_until,
			    ts.oldest_ready_age, &ts.ctr);
			state_settings_json(&b, sc.q, &ts);
			if (ts.oldest_ready_age > oldest_age)
				oldest_age = ts.oldest_ready_age;
		}
		buf_printf(&b, "},\"totals\":");
		counts_json(&b, st.ready, st.delayed, st.taken, st.buried,
		    st.done, 0, oldest_age, &st.ctr);
		buf_printf(&b,
		    ",\"node\":{\"tubes\":%" PRIu64 ",\"tasks\":%" PRIu64
		    ",\"keys\":%" PRIu64 ",\"snapshot_lsn\":%" PRIu64
		    "},\"snapshot_lsn\":%" PRIu64
		    ",\"records_replayed\":%" PRIu64 ",\"next_id\":%" PRIu64,
		    st.tubes, st.tasks, st.keys, res.snap_lsn, res.snap_lsn,
		    res.records, st.next_id);
		buf_printf(&b, ",\"oldest\":");
		if (old.have) {
			buf_printf(
			    &b, "{\"id\":%" PRIu64 ",\"tube\":", old.v.id);
			lt_json_str(&b, old.tube, strlen(old.tube));
			buf_printf(&b,
			    ",\"state\":\"%s\",\"created_at\":%" PRId64
			    ",\"age_ms\":%" PRId64 "}",
			    queue_state_name(old.v.state), old.v.created_at,
			    st.clock - old.v.created_at);
		} else {
			buf_printf(&b, "null");
		}
		buf_printf(&b, "}\n");
	} else {
		buf_printf(&b,
		    "state of %s at LSN %" PRIu64 " (epoch %" PRIu64
		    "), as of %s\n",
		    d.path, res.last_lsn, res.epoch, when);
		if (res.snap_lsn != 0)
			buf_printf(&b,
			    "rebuilt from the snapshot at LSN %" PRIu64
			    " and %" PRIu64 " records after it\n",
			    res.snap_lsn, res.records);
		else
			buf_printf(&b, "rebuilt from %" PRIu64 " records\n",
			    res.records);
		buf_printf(&b, "\n%-24s %9s %9s %9s %9s %9s  %-12s %s\n",
		    "tube", "ready", "delayed", "taken", "buried", "done",
		    "oldest ready", "paused until");
		for (uint32_t i = 0; i < queue_tube_count(sc.q); i++) {
			struct queue_tube_stats ts;
			char age[24] = "-", until[40] = "-";

			if (queue_tube_stats_at(sc.q, st.clock, i, &ts) != 0)
				break;
			if (ts.ready > 0)
				lt_age(ts.oldest_ready_age, age, sizeof(age));
			if (ts.paused_until != 0)
				lt_time(ts.paused_until, until, sizeof(until));
			buf_printf(&b,
			    "%-24.*s %9" PRIu64 " %9" PRIu64 " %9" PRIu64
			    " %9" PRIu64 " %9" PRIu64 "  %-12s %s\n",
			    (int)ts.name_len, ts.name, ts.ready, ts.delayed,
			    ts.taken, ts.buried, ts.done, age, until);
		}
		buf_printf(&b,
		    "%-24s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
		    " %9" PRIu64 "\n",
		    "(total)", st.ready, st.delayed, st.taken, st.buried,
		    st.done);
		state_settings_text(&b, sc.q, st.clock);
		if (old.have) {
			char created[40], age[24];

			lt_time(old.v.created_at, created, sizeof(created));
			lt_age(st.clock - old.v.created_at, age, sizeof(age));
			buf_printf(&b,
			    "\noldest task: id %" PRIu64
			    " in %s (%s), created %s, %s before\n",
			    old.v.id, old.tube, queue_state_name(old.v.state),
			    created, age);
		}
	}
	rc = lt_flush(&b, stdout) ? LT_EXIT_OK : LT_EXIT_IO;
	buf_fini(&b);
out:
	queue_free(sc.q);
	lt_dir_free(&d);
	return rc;
}
