/* snap - snapshot files: the whole queue state at one LSN, so recovery
 * reads the snapshot and only the records after it.
 *
 * A snapshot is named by its LSN, "%020llu.snap" (the state after every
 * record up to and including that LSN). It is written as
 * "<name>.inprogress", fdatasync'd, renamed into place and the directory
 * fsync'd, so a snapshot that exists under its final name is complete.
 * The byte layout is at the top of snap.c and in docs/log-format.md.
 *
 * The writer allocates nothing after snap_writer_open(): it writes from a
 * buffer the caller provides, so it runs anywhere (a worker thread). The
 * contents are opaque typed entries; the queue decides what they mean. */
#ifndef SLUICE_LOG_SNAP_H
#define SLUICE_LOG_SNAP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

enum {
	SNAP_HDR_SIZE = 64,
	SNAP_ENTRY_HDR_SIZE = 16,
	SNAP_VERSION = 1,
	SNAP_ENTRY_END = 0,        /* entry type 0 closes the file */
	SNAP_ENTRY_MAX = 1u << 30, /* longest entry data */
};

struct snap_info {
	uint64_t lsn;
	uint64_t epoch;
	int64_t time;     /* unix ms when the snapshot was started */
	uint64_t entries; /* not counting the end entry */
	uint64_t bytes;   /* file size */
};

struct snap_writer {
	int fd;
	int err;      /* first error; later calls do nothing */
	uint8_t *buf; /* caller's memory */
	size_t cap;
	size_t len;
	int64_t off;            /* file offset of buf[0] */
	int64_t wb_off, wb_len; /* the bytes last written, on their way to
	                         * the disk (snap.c: write-behind) */
	uint64_t entries;
	char dir[PATH_MAX];
	char tmp[PATH_MAX];
	char path[PATH_MAX];
};

/* Starts "<dir>/<lsn>.snap.inprogress". `buf` (at least 4 KiB; 1 MiB is a
 * good size) stays the caller's and must outlive the writer. Returns 0 or
 * -errno; on failure nothing is left behind. */
int snap_writer_open(struct snap_writer *w, const char *dir, uint64_t lsn,
    uint64_t epoch, int64_t time, void *buf, size_t cap);

/* Appends one entry of type `type` (1..65535) whose data is `a` followed by
 * `b` (either may be empty). Returns 0, -errno, or SLUICE_ELIMIT when the
 * data is longer than SNAP_ENTRY_MAX. After a failure every later call
 * returns the same code. */
int snap_writer_add(struct snap_writer *w, uint16_t type, const void *a,
    size_t alen, const void *b, size_t blen);

/* Writes the end entry, syncs, renames into place and syncs the directory.
 * On failure the temporary file is removed. Either way the writer is
 * closed. Returns 0 or the first error. */
int snap_writer_commit(struct snap_writer *w);

/* The first half of commit: writes the end entry, syncs and closes, but
 * leaves the file under its temporary name, for a writer (the snapshot worker)
 * whose snapshot may be published only later, by snap_publish(), once the
 * log holds every record it covers. On failure the file is removed. */
int snap_writer_finish(struct snap_writer *w);

/* Renames the finished "<dir>/<lsn>.snap.inprogress" into place and syncs
 * the directory. Returns 0 or -errno. */
int snap_publish(const char *dir, uint64_t lsn);

/* Closes the writer and removes the temporary file. */
void snap_writer_abort(struct snap_writer *w);

/* Called for each entry in file order; `data` is valid only during the
 * call. A non-zero return stops the load and is returned by snap_load. */
typedef int snap_visit_fn(
    void *arg, uint16_t type, const void *data, size_t len);

/* Reads and checks a whole snapshot, visiting every entry. Returns 0;
 * -errno when it cannot be read; SLUICE_ECORRUPT when any check fails, with
 * the byte offset of the damage in *bad_off (when not NULL); or what `fn`
 * returned. With fn == NULL it only verifies. `*info` is written on
 * success. */
int snap_load(const char *path, snap_visit_fn *fn, void *arg,
    struct snap_info *info, uint64_t *bad_off);

/* snap_load over bytes in memory (the file's whole contents). `*bad_off` is
 * always written. */
int snap_parse(const uint8_t *p, size_t size, snap_visit_fn *fn, void *arg,
    struct snap_info *info, uint64_t *bad_off);

/* The LSNs of the snapshots in `dir` (final names only), ascending, in a
 * malloc'd array the caller frees. Returns 0 or -errno. */
int snap_list(const char *dir, uint64_t **lsns, size_t *n);

/* "<dir>/<lsn>.snap" into out. Returns 0 or -ENAMETOOLONG. */
int snap_path(char *out, size_t n, const char *dir, uint64_t lsn);

/* Removes every snapshot below `lsn`, and any leftover ".inprogress" file,
 * then syncs the directory. Returns 0 or the first -errno. */
int snap_remove_before(const char *dir, uint64_t lsn);

/* Removes the ".snap.inprogress" files a killed snapshot left (at start,
 * before anything writes one), then syncs the directory. *n and *bytes get
 * how many and their size. Returns 0 or the first -errno. */
int snap_remove_unfinished(const char *dir, size_t *n, uint64_t *bytes);

#endif
