/* sluice_log_verify - `sluice-log verify DIR`: every problem the checks
 * of sluice_log_check.c find, the files with their state, and a verdict
 * with its exit code (sound, damaged, a torn tail only, not a data
 * directory, unreadable). repair prints its problems the same way
 * (lt_print_problem). Nothing here writes. */
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

void
lt_print_problem(const struct lt_problem *p, struct buf *b)
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
		    lt_lsn_span(
		        span, sizeof(span), plan->lost_first, plan->lost_last),
		    lt_records(nr, sizeof(nr), plan->lost_n));
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
		lt_print_problem(&d.probs[i], &b);
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
