/* snap - snapshot files; see snap.h for their life cycle.
 *
 * Byte layout (little-endian):
 *
 *   header, 64 bytes
 *     0  u8[8] magic "SLUICESN"
 *     8  u32   version (SNAP_VERSION)
 *     12 u32   header size (64)
 *     16 u64   lsn: the state after this record
 *     24 u64   epoch of that record
 *     32 i64   time (unix ms) the snapshot was started
 *     40 u64   reserved, 0
 *     48 u64   reserved, 0
 *     56 u64   XXH3_64bits of bytes [0,56)
 *   entries, each 8-byte aligned
 *     0  u64   XXH3_64bits of bytes [8, 16 + len)
 *     8  u32   len, bytes of data
 *     12 u16   type; SNAP_ENTRY_END closes the file
 *     14 u16   flags, 0
 *     16 u8[len] data, then zeros to a multiple of 8
 *   the end entry's data: u64 number of entries before it
 *
 * A snapshot is valid when the header checks, every entry's checksum
 * matches, an end entry comes last with the right count, and nothing
 * follows it, and padding is zero. Anything else is SLUICE_ECORRUPT at the
 * offset where the check failed. To change the layout, bump SNAP_VERSION and
 * teach snap_load the old version, or document that old snapshots must be
 * removed (the log still holds everything after the previous one).
 *
 * The writer lays each entry out in the caller's buffer and checksums it
 * there in one pass (an entry larger than the buffer goes through a
 * streaming XXH3 state on the stack, straight to the file): nothing is
 * allocated. The reader maps the file and checks it in place. */
#define XXH_STATIC_LINKING_ONLY
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "log/snap.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/fsutil.h"

static const char snap_magic[8] = { 'S', 'L', 'U', 'I', 'C', 'E', 'S', 'N' };

static size_t
pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int
snap_path(char *out, size_t n, const char *dir, uint64_t lsn)
{
	int rc = snprintf(out, n, "%s/%020" PRIu64 ".snap", dir, lsn);

	return rc < 0 || (size_t)rc >= n ? -ENAMETOOLONG : 0;
}

/* Writes [p, p + n) at w->off, then sends those bytes on their way to the
 * disk and waits for the bytes written before them to get there: the
 * write-behind of a file written once. Left to the end's fdatasync (or
 * to the kernel's flusher), a snapshot's hundreds of MB would reach the
 * disk in one burst, and every commit of the log made meanwhile, a
 * durable write of a few KB, would queue behind it (one client's slowest
 * put while a 3 M-task snapshot was written: 117-279 ms, 45-58 since,
 * docs/benchmarks.md). So at most two writes of the buffer's size are
 * between the page cache and the disk at once. Where the file system has
 * no use for it (sync_file_range does nothing there) nothing changes. */
static int
write_behind(struct snap_writer *w, const void *p, size_t n)
{
	unsigned wait = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
	    SYNC_FILE_RANGE_WAIT_AFTER;
	int rc = fs_pwrite_all(w->fd, p, n, w->off);

	if (rc != 0)
		return rc;
	if (sync_file_range(w->fd, w->off, (off64_t)n, SYNC_FILE_RANGE_WRITE) <
	        0 ||
	    (w->wb_len > 0 &&
	        sync_file_range(w->fd, w->wb_off, w->wb_len, wait) < 0)) {
		if (errno != EINVAL && errno != ENOSYS && errno != ESPIPE)
			return -errno; /* the disk failed: so would the sync */
	}
	w->wb_off = w->off;
	w->wb_len = (int64_t)n;
	w->off += (int64_t)n;
	return 0;
}

static int
writer_flush(struct snap_writer *w)
{
	int rc;

	if (w->len == 0)
		return 0;
	rc = write_behind(w, w->buf, w->len);
	if (rc != 0)
		return rc;
	w->len = 0;
	return 0;
}

/* Copies bytes through the buffer, flushing when it fills; data larger than
 * the buffer goes straight to the file. */
static int
writer_put(struct snap_writer *w, const void *p, size_t n)
{
	int rc;

	if (n == 0)
		return 0;
	if (n > w->cap - w->len) {
		rc = writer_flush(w);
		if (rc != 0)
			return rc;
	}
	if (n > w->cap)
		return write_behind(w, p, n);
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

int
snap_writer_open(struct snap_writer *w, const char *dir, uint64_t lsn,
    uint64_t epoch, int64_t time, void *buf, size_t cap)
{
	uint8_t hdr[SNAP_HDR_SIZE] = { 0 };
	int rc;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->buf = buf;
	w->cap = cap;
	if (cap < 4096)
		return -EINVAL;
	if (snprintf(w->dir, sizeof(w->dir), "%s", dir) >= (int)sizeof(w->dir))
		return -ENAMETOOLONG;
	rc = snap_path(w->path, sizeof(w->path), dir, lsn);
	if (rc != 0)
		return rc;
	if (snprintf(w->tmp, sizeof(w->tmp), "%s.inprogress", w->path) >=
	    (int)sizeof(w->tmp))
		return -ENAMETOOLONG;
	w->fd = open(w->tmp, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (w->fd < 0)
		return -errno;

	memcpy(hdr, snap_magic, sizeof(snap_magic));
	le_store_u32(hdr + 8, SNAP_VERSION);
	le_store_u32(hdr + 12, SNAP_HDR_SIZE);
	le_store_u64(hdr + 16, lsn);
	le_store_u64(hdr + 24, epoch);
	le_store_u64(hdr + 32, (uint64_t)time);
	le_store_u64(hdr + 56, XXH3_64bits(hdr, 56));
	rc = writer_put(w, hdr, sizeof(hdr));
	if (rc != 0) {
		snap_writer_abort(w);
		return rc;
	}
	return 0;
}

int
snap_writer_add(struct snap_writer *w, uint16_t type, const void *a,
    size_t alen, const void *b, size_t blen)
{
	static const uint8_t zeros[8];
	uint8_t hdr[SNAP_ENTRY_HDR_SIZE] = { 0 };
	XXH3_state_t st;
	size_t len = alen + blen;

	if (w->err != 0)
		return w->err;
	if (alen > SNAP_ENTRY_MAX || blen > SNAP_ENTRY_MAX - alen) {
		w->err = SLUICE_ELIMIT;
		return w->err;
	}
	if (SNAP_ENTRY_HDR_SIZE + pad8(len) <= w->cap) {
		/* The whole entry fits in the buffer: laid out in place and
		 * checksummed in one pass (the same XXH3 as the streaming
		 * one below, a fraction of its cost on small entries). */
		size_t total = SNAP_ENTRY_HDR_SIZE + pad8(len);
		uint8_t *e;

		if (total > w->cap - w->len && (w->err = writer_flush(w)) != 0)
			return w->err;
		e = w->buf + w->len;
		memset(e, 0, SNAP_ENTRY_HDR_SIZE);
		le_store_u32(e + 8, (uint32_t)len);
		le_store_u16(e + 12, type);
		if (alen)
			memcpy(e + SNAP_ENTRY_HDR_SIZE, a, alen);
		if (blen)
			memcpy(e + SNAP_ENTRY_HDR_SIZE + alen, b, blen);
		memset(e + SNAP_ENTRY_HDR_SIZE + len, 0, pad8(len) - len);
		le_store_u64(e, XXH3_64bits(e + 8, 8 + len));
		w->len += total;
		if (type != SNAP_ENTRY_END)
			w->entries++;
		return 0;
	}
	le_store_u32(hdr + 8, (uint32_t)len);
	le_store_u16(hdr + 12, type);
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, hdr + 8, 8);
	if (alen)
		XXH3_64bits_update(&st, a, alen);
	if (blen)
		XXH3_64bits_update(&st, b, blen);
	le_store_u64(hdr, XXH3_64bits_digest(&st));

	if ((w->err = writer_put(w, hdr, sizeof(hdr))) != 0 ||
	    (w->err = writer_put(w, a, alen)) != 0 ||
	    (w->err = writer_put(w, b, blen)) != 0 ||
	    (w->err = writer_put(w, zeros, pad8(len) - len)) != 0)
		return w->err;
	if (type != SNAP_ENTRY_END)
		w->entries++;
	return 0;
}

int
snap_writer_finish(struct snap_writer *w)
{
	uint8_t end[8];
	int rc;

	le_store_u64(end, w->entries);
	rc = snap_writer_add(w, SNAP_ENTRY_END, end, sizeof(end), NULL, 0);
	if (rc == 0)
		rc = writer_flush(w);
	if (rc == 0 && fdatasync(w->fd) < 0)
		rc = -errno;
	if (rc != 0)
		goto fail_abort;
	if (close(w->fd) < 0) {
		w->fd = -1;
		rc = -errno;
		goto fail_abort;
	}
	w->fd = -1;
	return 0;

fail_abort:
	snap_writer_abort(w);
	return rc;
}

int
snap_publish(const char *dir, uint64_t lsn)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	int rc = snap_path(path, sizeof(path), dir, lsn);

	if (rc != 0)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.inprogress", path);
	if (rename(tmp, path) < 0)
		return -errno;
	return fs_sync_dir(dir);
}

int
snap_writer_commit(struct snap_writer *w)
{
	int rc = snap_writer_finish(w);

	if (rc == 0 && rename(w->tmp, w->path) < 0) {
		rc = -errno;
		unlink(w->tmp);
	}
	return rc == 0 ? fs_sync_dir(w->dir) : rc;
}

void
snap_writer_abort(struct snap_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->tmp[0] != '\0')
		unlink(w->tmp);
	if (w->err == 0)
		w->err = -ECANCELED;
}

/* The file header at p (SNAP_HDR_SIZE bytes) of a snapshot of `size`
 * bytes: 0 and *info filled, or SLUICE_ECORRUPT. */
static int
hdr_check(const uint8_t *p, uint64_t size, struct snap_info *info)
{
	if (size < SNAP_HDR_SIZE || memcmp(p, snap_magic, 8) != 0 ||
	    le_load_u32(p + 8) != SNAP_VERSION ||
	    le_load_u32(p + 12) != SNAP_HDR_SIZE ||
	    le_load_u64(p + 56) != XXH3_64bits(p, 56))
		return SLUICE_ECORRUPT;
	info->lsn = le_load_u64(p + 16);
	info->epoch = le_load_u64(p + 24);
	info->time = (int64_t)le_load_u64(p + 32);
	info->bytes = size;
	return 0;
}

/* The length an entry's header at e claims for its data, or -1 when no
 * entry that long fits in the `left` bytes from e to the end of the file
 * (e holds SNAP_ENTRY_HDR_SIZE bytes when left does). */
static int64_t
entry_len(const uint8_t *e, uint64_t left)
{
	uint32_t len;

	if (left < SNAP_ENTRY_HDR_SIZE)
		return -1;
	len = le_load_u32(e + 8);
	if (len > SNAP_ENTRY_MAX || left - SNAP_ENTRY_HDR_SIZE < pad8(len))
		return -1;
	return len;
}

/* The whole entry at e, of data length len (entry_len), `left` bytes
 * before the end of the file, after `entries` others: its checksum, its
 * padding, and for the end entry the count and the file's end. Returns 1
 * for the end, 0 for any other sound entry, SLUICE_ECORRUPT. */
static int
entry_check(const uint8_t *e, uint32_t len, uint64_t left, uint64_t entries)
{
	if (le_load_u16(e + 14) != 0 ||
	    le_load_u64(e) != XXH3_64bits(e + 8, 8 + (size_t)len))
		return SLUICE_ECORRUPT;
	if (le_load_u16(e + 12) == SNAP_ENTRY_END)
		return len == 8 &&
		        le_load_u64(e + SNAP_ENTRY_HDR_SIZE) == entries &&
		        left == SNAP_ENTRY_HDR_SIZE + 8
		    ? 1
		    : SLUICE_ECORRUPT;
	for (size_t i = len; i < pad8(len); i++) {
		if (e[SNAP_ENTRY_HDR_SIZE + i] != 0)
			return SLUICE_ECORRUPT;
	}
	return 0;
}

/* A snapshot read front to back: [base, base + have) of it is at view.
 * A file (fd >= 0) is read through one buffer b, used again and again;
 * bytes in memory (fd < 0) are all in view from the start. */
struct snap_rd {
	int fd;
	uint64_t size;
	const uint8_t *view;
	uint8_t *b;
	size_t cap;
	uint64_t base;
	size_t have;
};

enum { SNAP_RD_CHUNK = 4u << 20 };

/* Makes [off, off + n) of the snapshot, which lies within it and starts
 * at or after base, readable at snap_rd_at(r, off): already so in memory,
 * read into the buffer for a file. Returns 0 or -errno; a file that ends
 * early (shortened since its size was read) is SLUICE_ECORRUPT. */
static int
snap_rd_want(struct snap_rd *r, uint64_t off, size_t n)
{
	size_t keep;

	if (off + n <= r->base + r->have)
		return 0;
	keep = off < r->base + r->have ? (size_t)(r->base + r->have - off) : 0;
	memmove(r->b, r->b + (r->have - keep), keep);
	r->base = off;
	r->have = keep;
	if (n > r->cap) {
		uint8_t *nb = realloc(r->b, n);

		if (nb == NULL)
			return -ENOMEM;
		r->b = nb;
		r->cap = n;
	}
	while (r->have < n) {
		uint64_t at = r->base + r->have;
		size_t room = r->cap - r->have;
		ssize_t got;

		if (room > r->size - at)
			room = (size_t)(r->size - at);
		got = pread(r->fd, r->b + r->have, room, (off_t)at);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return SLUICE_ECORRUPT;
		r->have += (size_t)got;
	}
	r->view = r->b;
	return 0;
}

static const uint8_t *
snap_rd_at(const struct snap_rd *r, uint64_t off)
{
	return r->view + (off - r->base);
}

/* Checks a whole snapshot and visits its entries (snap_load, snap_parse).
 * A file is read rather than mapped:
 * on a VM that backs a process's page at its first access from user mode
 * (docs/benchmarks.md, "A page's first touch from user mode"), each page
 * of a mapping costs that once, a 10 M-task snapshot about half a second
 * more than reading it through 4 MiB used again. */
static int
snap_read(struct snap_rd *r, snap_visit_fn *fn, void *arg,
    struct snap_info *info, uint64_t *bad_off)
{
	uint64_t off = SNAP_HDR_SIZE, entries = 0;
	int rc;

	*bad_off = 0;
	if (r->size < SNAP_HDR_SIZE)
		return SLUICE_ECORRUPT;
	if ((rc = snap_rd_want(r, 0, SNAP_HDR_SIZE)) != 0)
		return rc;
	if (hdr_check(snap_rd_at(r, 0), r->size, info) != 0)
		return SLUICE_ECORRUPT;
	for (;;) {
		size_t head = r->size - off < SNAP_ENTRY_HDR_SIZE
		    ? (size_t)(r->size - off)
		    : SNAP_ENTRY_HDR_SIZE;
		int64_t len;

		*bad_off = off;
		if ((rc = snap_rd_want(r, off, head)) != 0)
			return rc;
		if ((len = entry_len(snap_rd_at(r, off), r->size - off)) < 0)
			return SLUICE_ECORRUPT;
		if ((rc = snap_rd_want(
		         r, off, SNAP_ENTRY_HDR_SIZE + pad8((size_t)len))) != 0)
			return rc;
		rc = entry_check(
		    snap_rd_at(r, off), (uint32_t)len, r->size - off, entries);
		if (rc == 1) {
			info->entries = entries;
			return 0;
		}
		if (rc != 0)
			return rc;
		if (fn != NULL &&
		    (rc = fn(arg, le_load_u16(snap_rd_at(r, off) + 12),
		         snap_rd_at(r, off) + SNAP_ENTRY_HDR_SIZE,
		         (size_t)len)) != 0)
			return rc;
		entries++;
		off += SNAP_ENTRY_HDR_SIZE + pad8((size_t)len);
	}
}

int
snap_parse(const uint8_t *p, size_t size, snap_visit_fn *fn, void *arg,
    struct snap_info *info, uint64_t *bad_off)
{
	struct snap_rd r = { .fd = -1, .size = size, .view = p, .have = size };

	return snap_read(&r, fn, arg, info, bad_off);
}

int
snap_load(const char *path, snap_visit_fn *fn, void *arg,
    struct snap_info *info, uint64_t *bad_off)
{
	struct snap_info si = { 0 };
	struct snap_rd r = { .fd = -1 };
	uint64_t where = 0;
	struct stat st;
	int rc;

	r.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r.fd < 0)
		return -errno;
	if (fstat(r.fd, &st) < 0) {
		rc = -errno;
		close(r.fd);
		return rc;
	}
	r.size = (uint64_t)st.st_size;
	r.cap = r.size < SNAP_RD_CHUNK ? (size_t)r.size : SNAP_RD_CHUNK;
	r.b = malloc(r.cap > 0 ? r.cap : 1);
	if (r.b == NULL) {
		close(r.fd);
		return -ENOMEM;
	}
	(void)posix_fadvise(r.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	rc = snap_read(&r, fn, arg, &si, &where);
	free(r.b);
	close(r.fd);
	if (rc == SLUICE_ECORRUPT && bad_off != NULL)
		*bad_off = where;
	if (rc == 0 && info != NULL)
		*info = si;
	return rc;
}

/* Parses "%020llu.snap"; false for any other name. */
static bool
snap_name_lsn(const char *name, uint64_t *lsn)
{
	uint64_t v = 0;

	if (strlen(name) != 25 || strcmp(name + 20, ".snap") != 0)
		return false;
	for (int i = 0; i < 20; i++) {
		if (name[i] < '0' || name[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	*lsn = v;
	return true;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
snap_list(const char *dir, uint64_t **lsns, size_t *n)
{
	uint64_t *v = NULL, lsn;
	size_t len = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	d = opendir(dir);
	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (!snap_name_lsn(e->d_name, &lsn))
			continue;
		if (len == cap) {
			uint64_t *nv;

			cap = cap ? cap * 2 : 8;
			nv = realloc(v, cap * sizeof(*v));
			if (nv == NULL) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[len++] = lsn;
	}
	closedir(d);
	if (len > 0)
		qsort(v, len, sizeof(*v), cmp_u64);
	*lsns = v;
	*n = len;
	return 0;
}

int
snap_remove_before(const char *dir, uint64_t lsn)
{
	char path[PATH_MAX];
	struct dirent *e;
	uint64_t v;
	int rc = 0;
	DIR *d;

	d = opendir(dir);
	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		bool stale = n > 11 &&
		    strcmp(e->d_name + n - 11, ".inprogress") == 0 &&
		    strstr(e->d_name, ".snap") != NULL;

		if (!stale && !(snap_name_lsn(e->d_name, &v) && v < lsn))
			continue;
		if (fs_join(path, sizeof(path), dir, e->d_name) != 0)
			continue;
		if (unlink(path) < 0 && rc == 0)
			rc = -errno;
	}
	closedir(d);
	if (rc == 0)
		rc = fs_sync_dir(dir);
	return rc;
}

int
snap_remove_unfinished(const char *dir, size_t *n, uint64_t *bytes)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	int rc = 0;
	DIR *d;

	*n = 0;
	*bytes = 0;
	d = opendir(dir);
	if (d == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (len <= 16 ||
		    strcmp(e->d_name + len - 16, ".snap.inprogress") != 0)
			continue;
		if (fs_join(path, sizeof(path), dir, e->d_name) != 0)
			continue;
		if (stat(path, &st) == 0)
			*bytes += (uint64_t)st.st_size;
		if (unlink(path) < 0) {
			if (rc == 0)
				rc = -errno;
			continue;
		}
		(*n)++;
	}
	closedir(d);
	if (rc == 0 && *n > 0)
		rc = fs_sync_dir(dir);
	return rc;
}
