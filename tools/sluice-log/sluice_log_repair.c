/* sluice_log_repair - `sluice-log repair`: the plan of sluice_log_plan.c
 * carried out (lt_repair_apply), or, where cutting would lose records,
 * the directory salvaged (sluice_log_salvage.c). Nothing is deleted: what
 * goes is moved to lost+found/<time>/ beside a NOTE written before the
 * first change, so an interrupted repair can be finished by hand and
 * running repair again continues from what is on disk. */
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
	rc = seg_prealloc(dst, size, true, &fd, NULL);
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
		    lt_lsn_span(
		        span, sizeof(span), p->lost_first, p->lost_last),
		    lt_records(nr, sizeof(nr), p->lost_n));
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
			    lt_lsn_span(
			        span, sizeof(span), a->first_lsn, a->last_lsn),
			    lt_records(nr, sizeof(nr), a->nrec));
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

	if (lt_dir_lock(d, &lock) != 0)
		return LT_EXIT_DAMAGE;
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
			lt_print_problem(&d.probs[i], &b);
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
		    lt_lsn_span(
		        span, sizeof(span), plan.lost_first, plan.lost_last),
		    lt_records(nr, sizeof(nr), plan.lost_n));
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
				lt_print_problem(&after.probs[i], &b);
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
