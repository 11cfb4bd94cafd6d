/* sluice_log_dir - a data directory as sluice-log sees it: its files
 * listed and classified (segments, snapshots, the durable mark, the lock),
 * and the problems and notes its checks find, each named by file, byte
 * offset and the LSNs around it. The checks themselves are
 * sluice_log_check.c's; the replay of the records recovery would apply,
 * sluice_log_replay.c's. Nothing here writes.
 *
 * The judgement is the server's. A segment is walked by walk_seg() (which
 * goes on past damage to find every bad stretch) and scanned by seg_scan()
 * (what the server runs); the two must agree on the first problem. Between
 * segments the rules of logdir.c hold: each starts right after the one
 * before, epochs never go down, only the last may end torn. Recovery
 * starts from the newest snapshot whose file checks (snap.c) and whose
 * entries load (qsnap.c), else from LSN 1; the log must still hold the
 * records from there on. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "sluice_log.h"
#include "util/fsutil.h"

void
lt_path(const struct lt_dir *d, const char *name, char *out, size_t n)
{
	if (fs_join(out, n, d->path, name) != 0)
		snprintf(out, n, "%s", name);
}

void
lt_scopy(char *dst, size_t n, const char *src)
{
	size_t k = strlen(src);

	if (k > n - 1)
		k = n - 1;
	memcpy(dst, src, k);
	dst[k] = '\0';
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* "%020llu.snap" */
static bool
snap_name(const char *name, uint64_t *lsn)
{
	uint64_t v = 0;

	if (strlen(name) != 25 || strcmp(name + 20, ".snap") != 0)
		return false;
	for (int i = 0; i < 20; i++) {
		unsigned c = (unsigned)(name[i] - '0');

		if (c > 9 || v > (UINT64_MAX - c) / 10)
			return false;
		v = v * 10 + c;
	}
	*lsn = v;
	return true;
}

static int
cmp_seg(const void *a, const void *b)
{
	const struct lt_seg *x = a, *y = b;

	return x->name_lsn < y->name_lsn ? -1 : x->name_lsn > y->name_lsn;
}

static int
cmp_snap(const void *a, const void *b)
{
	const struct lt_snap *x = a, *y = b;

	return x->name_lsn < y->name_lsn ? -1 : x->name_lsn > y->name_lsn;
}

static bool
grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *np;
	size_t ncap;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 16;
	np = realloc(*p, ncap * size);
	if (np == NULL)
		return false;
	*p = np;
	*cap = ncap;
	return true;
}

/* Whether a sluiced holds the directory's lock now. */
static bool
lock_held(const struct lt_dir *d)
{
	char path[PATH_MAX];
	bool held = false;
	int fd;

	lt_path(d, "LOCK", path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		held = errno == EWOULDBLOCK;
	close(fd);
	return held;
}

int
lt_dir_open(const char *path, struct lt_dir *d, char *err, size_t errn)
{
	size_t seg_cap = 0, snap_cap = 0;
	struct dirent *e;
	struct stat st;
	DIR *dir;

	memset(d, 0, sizeof(*d));
	d->snap_used = d->snap_picked = -1;
	if (snprintf(d->path, sizeof(d->path), "%s", path) >=
	    (int)sizeof(d->path)) {
		snprintf(err, errn, "%s: path too long", path);
		return LT_EXIT_USAGE;
	}
	if (stat(path, &st) < 0) {
		int rc = errno;

		snprintf(err, errn, "%s: %s", path,
		    rc == ENOENT ? "no such directory" : strerror(rc));
		return rc == ENOENT || rc == ENOTDIR ? LT_EXIT_NOTDATA
		                                     : LT_EXIT_IO;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errn,
		    "%s: not a directory (give the data directory, the "
		    "--data of sluiced)",
		    path);
		return LT_EXIT_NOTDATA;
	}
	dir = opendir(path);
	if (dir == NULL) {
		snprintf(err, errn, "%s: cannot read the directory: %s", path,
		    strerror(errno));
		return LT_EXIT_IO;
	}
	while ((e = readdir(dir)) != NULL) {
		const char *n = e->d_name;
		uint64_t lsn;

		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
			continue;
		d->nentries++;
		if (seg_parse_name(n, &lsn)) {
			if (!grow((void **)&d->segs, &seg_cap, d->nsegs,
			        sizeof(*d->segs)))
				goto fail_nomem;
			memset(&d->segs[d->nsegs], 0, sizeof(*d->segs));
			lt_scopy(d->segs[d->nsegs].name, LT_NAME_MAX, n);
			d->segs[d->nsegs++].name_lsn = lsn;
		} else if (snap_name(n, &lsn)) {
			if (!grow((void **)&d->snaps, &snap_cap, d->nsnaps,
			        sizeof(*d->snaps)))
				goto fail_nomem;
			memset(&d->snaps[d->nsnaps], 0, sizeof(*d->snaps));
			lt_scopy(d->snaps[d->nsnaps].name, LT_NAME_MAX, n);
			d->snaps[d->nsnaps++].name_lsn = lsn;
		} else if (strcmp(n, "LOCK") == 0) {
			d->has_lock = true;
		} else if (strcmp(n, DURABLE_NAME) == 0) {
			/* what the log had synced (src/log/durable.h) */
		} else if (strcmp(n, "EPOCHS") == 0) {
			/* the epoch history (src/log/epochs.h) */
		} else if (strcmp(n, "EPOCHS.tmp") == 0) {
			d->nleft++; /* a rewrite of it that did not finish */
		} else if (strcmp(n, "lost+found") == 0) {
			d->has_lost_found = true;
		} else if (ends_with(n, ".spare")) {
			d->nspares++;
		} else if ((ends_with(n, ".inprogress") &&
		               strstr(n, ".snap") != NULL) ||
		    ends_with(n, ".wal.repair")) {
			d->nleft++;
		} else {
			if (d->nunknown++ == 0)
				lt_scopy(d->unknown, sizeof(d->unknown), n);
		}
	}
	closedir(dir);
	if (d->nunknown == d->nentries && d->nentries > 0) {
		snprintf(err, errn,
		    "%s is not a sluice data directory: it holds %zu "
		    "entr%s (such as '%s') but no log segment "
		    "(NNNNNNNNNNNNNNNNNNNN.wal), snapshot (.snap), EPOCHS "
		    "or LOCK",
		    path, d->nentries, d->nentries == 1 ? "y" : "ies",
		    d->unknown);
		lt_dir_free(d);
		return LT_EXIT_NOTDATA;
	}
	if (d->nsegs > 0)
		qsort(d->segs, d->nsegs, sizeof(*d->segs), cmp_seg);
	if (d->nsnaps > 0)
		qsort(d->snaps, d->nsnaps, sizeof(*d->snaps), cmp_snap);
	if (d->has_lock)
		d->running = lock_held(d);
	return LT_EXIT_OK;

fail_nomem:
	closedir(dir);
	lt_dir_free(d);
	snprintf(err, errn, "out of memory listing %s", path);
	return LT_EXIT_IO;
}

void
lt_dir_free(struct lt_dir *d)
{
	free(d->segs);
	free(d->snaps);
	free(d->probs);
	for (size_t i = 0; i < d->nnotes; i++)
		free(d->notes[i]);
	free(d->notes);
	d->segs = NULL;
	d->snaps = NULL;
	d->probs = NULL;
	d->notes = NULL;
	d->nsegs = d->nsnaps = d->nprobs = d->nnotes = 0;
}

struct lt_problem *
lt_dir_problem(struct lt_dir *d, enum lt_kind kind, const char *file, int seg,
    const char *fmt, ...)
{
	static struct lt_problem spare; /* when out of memory: not kept */
	struct lt_problem *p = &spare;
	va_list ap;

	if (grow((void **)&d->probs, &d->probs_cap, d->nprobs,
	        sizeof(*d->probs)))
		p = &d->probs[d->nprobs++];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->seg = seg;
	snprintf(p->file, sizeof(p->file), "%s", file);
	va_start(ap, fmt);
	vsnprintf(p->what, sizeof(p->what), fmt, ap);
	va_end(ap);
	return p;
}

void
lt_dir_note(struct lt_dir *d, const char *fmt, ...)
{
	char line[LT_WHAT_MAX + PATH_MAX];
	char **nn;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	nn = realloc(d->notes, (d->nnotes + 1) * sizeof(*nn));
	if (nn == NULL)
		return;
	d->notes = nn;
	if ((nn[d->nnotes] = strdup(line)) != NULL)
		d->nnotes++;
}

size_t
lt_dir_count(const struct lt_dir *d, enum lt_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nprobs; i++)
		n += d->probs[i].kind == kind;
	return n;
}

int
lt_dir_exit(const struct lt_dir *d)
{
	if (lt_dir_count(d, LT_DAMAGE) > 0)
		return LT_EXIT_DAMAGE;
	if (lt_dir_count(d, LT_IOERR) > 0)
		return LT_EXIT_IO;
	if (lt_dir_count(d, LT_TORN) > 0)
		return LT_EXIT_TORN;
	return LT_EXIT_OK;
}

int
lt_dir_lock(const struct lt_dir *d, int *lock)
{
	int rc = fs_lock_dir(d->path, lock);

	if (rc != 0)
		fprintf(stderr, "sluice-log: %s: %s; nothing was changed\n",
		    d->path,
		    rc == -EBUSY ? "a sluiced is running on it (it holds "
		                   "the LOCK): stop it first"
		                 : strerror(-rc));
	return rc;
}
