/* sluice_log_stats - `sluice-log stats DIR`: what the directory holds and
 * why it is as big as it is. (`state`, the queue rebuilt up to an LSN, is
 * sluice_log_state.c.)
 *
 * Per segment: its records, bytes, LSNs and times; how many of its
 * records are live (the task it concerns is still live at the end of the
 * log; a PAUSE whose pause still runs; the EPOCH record of the current
 * epoch) and dead; and what keeps the file: recovery (it holds records
 * after the newest snapshot) or retention (older than that snapshot, kept
 * for an older snapshot sluiced keeps, --keep-snapshots, or by
 * --keep-segments for followers). The end state comes from the same
 * replay verify runs; on a damaged log the live counts are unknown. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log/recover.h"
#include "queue/limits.h"
#include "queue/sched.h"
#include "sluice.h"
#include "sluice_log.h"
#include "util/fsutil.h"

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
	if (r.type == QREC_TUBE_LIMIT) { /* the tube still has these limits */
		struct queue_flow_view fv;

		return queue_tube_flow(c->q, r.u.tube_limit.tube,
		           r.u.tube_limit.tube_len, 0, &fv) == 0 &&
		    fv.lim.set != 0 &&
		    qrec_limits_equal(&fv.lim, &r.u.tube_limit.lim);
	}
	if (r.type == QREC_SCHED_SET || r.type == QREC_SCHED_PAUSE)
		return queue_sched_find(c->q, r.u.sched.name,
		           r.u.sched.name_len) != NULL; /* still there */
	if (r.type == QREC_GROUP_SET) { /* the name still has these */
		struct queue_group_view gv;

		if (queue_group_limits(c->q, r.u.group_set.tube,
		        r.u.group_set.tube_len, r.u.group_set.group,
		        r.u.group_set.group_len, 0, &gv) != 0)
			return false;
		return r.u.group_set.group_len == 0
		    ? qrec_limits_equal(&gv.def, &r.u.group_set.lim) &&
		        gv.def.set != 0
		    : gv.has_own && gv.paused == r.u.group_set.paused &&
		        qrec_limits_equal(&gv.own, &r.u.group_set.lim);
	}
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
