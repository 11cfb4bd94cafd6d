/* durable - reads and writes the durable mark, the file DURABLE (why it
 * exists, and its layout, are in durable.h). The mark is kept in two
 * slots written in turn, each with a sequence number and a checksum, so
 * a write torn by a crash leaves the other slot whole; a read takes the
 * newest slot that checks out, and no mark when neither does. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "log/durable.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fsutil.h"

/* "SLUICEDU" as a little-endian u64. */
#define DURABLE_MAGIC 0x5544454349554c53ULL

enum { SUMMED = 56 };

static void
encode(uint8_t *p, uint64_t seq, uint64_t lsn, bool clean)
{
	memset(p, 0, DURABLE_SLOT);
	le_store_u64(p, DURABLE_MAGIC);
	le_store_u32(p + 8, DURABLE_VERSION);
	le_store_u32(p + 12, clean ? DURABLE_CLEAN : 0);
	le_store_u64(p + 16, seq);
	le_store_u64(p + 24, lsn);
	le_store_u64(p + 32, (uint64_t)clock_now_ms());
	le_store_u64(p + 56, XXH3_64bits(p, SUMMED));
}

static bool
decode(const uint8_t *p, struct durable_mark *m)
{
	if (le_load_u64(p) != DURABLE_MAGIC ||
	    le_load_u32(p + 8) != DURABLE_VERSION ||
	    le_load_u64(p + 56) != XXH3_64bits(p, SUMMED))
		return false;
	m->clean = (le_load_u32(p + 12) & DURABLE_CLEAN) != 0;
	m->seq = le_load_u64(p + 16);
	m->lsn = le_load_u64(p + 24);
	m->time = (int64_t)le_load_u64(p + 32);
	return true;
}

static int
mark_path(char *out, size_t n, const char *dir)
{
	return fs_join(out, n, dir, DURABLE_NAME);
}

/* The current slot of an open file; a zero mark when none checks. */
static int
read_fd(int fd, struct durable_mark *out)
{
	uint8_t buf[DURABLE_SLOT2_OFF + DURABLE_SLOT];
	struct durable_mark a, b;
	bool ok_a, ok_b;
	ssize_t n;

	memset(out, 0, sizeof(*out));
	memset(buf, 0, sizeof(buf));
	n = pread(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	ok_a = n >= DURABLE_SLOT && decode(buf, &a);
	ok_b = n >= (ssize_t)sizeof(buf) && decode(buf + DURABLE_SLOT2_OFF, &b);
	if (ok_a && (!ok_b || a.seq >= b.seq))
		*out = a;
	else if (ok_b)
		*out = b;
	return 0;
}

int
durable_read(const char *dir, struct durable_mark *out)
{
	char path[4096];
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if (mark_path(path, sizeof(path), dir) != 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	rc = read_fd(fd, out);
	close(fd);
	return rc;
}

int
durable_note(struct durable *d, uint64_t lsn, bool clean, bool sync)
{
	uint8_t p[DURABLE_SLOT];
	uint64_t seq = d->seq + 1;
	int rc;

	if (d->fd < 0)
		return -EBADF;
	encode(p, seq, lsn, clean);
	rc = fs_pwrite_all(
	    d->fd, p, sizeof(p), (seq & 1) != 0 ? DURABLE_SLOT2_OFF : 0);
	if (rc == 0 && sync && fdatasync(d->fd) < 0)
		rc = -errno;
	if (rc != 0)
		return rc;
	d->seq = seq;
	d->lsn = lsn;
	return 0;
}

int
durable_open(struct durable *d, const char *dir, uint64_t lsn)
{
	struct durable_mark m;
	char path[4096];
	int rc;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (mark_path(path, sizeof(path), dir) != 0)
		return -ENAMETOOLONG;
	d->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (d->fd < 0)
		return -errno;
	rc = read_fd(d->fd, &m);
	if (rc == 0) {
		d->seq = m.seq;
		rc = durable_note(d, lsn, false, true);
	}
	if (rc == 0)
		rc = fs_sync_dir(dir);
	if (rc != 0) {
		close(d->fd);
		d->fd = -1;
	}
	return rc;
}

void
durable_close(struct durable *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

int
durable_lower(const char *dir, uint64_t lsn)
{
	struct durable_mark m;
	struct durable d;
	char path[4096];
	int rc;

	rc = durable_read(dir, &m);
	if (rc != 0 || m.lsn <= lsn)
		return rc;
	if (mark_path(path, sizeof(path), dir) != 0)
		return -ENAMETOOLONG;
	d.fd = open(path, O_RDWR | O_CLOEXEC);
	if (d.fd < 0)
		return -errno;
	d.seq = m.seq;
	rc = durable_note(&d, lsn, false, true);
	close(d.fd);
	return rc;
}

int
durable_remove(const char *dir)
{
	char path[4096];

	if (mark_path(path, sizeof(path), dir) != 0)
		return -ENAMETOOLONG;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return fs_sync_dir(dir);
}

const char *
durable_judge(const struct durable_mark *m, bool torn, uint64_t last_lsn)
{
	if (torn && m->clean)
		return "bad bytes after the last record of a log that was "
		       "stopped cleanly (a clean stop leaves no torn write): "
		       "damage on disk";
	if (torn && last_lsn < m->lsn)
		return "a bad record at or below the LSN the log had synced "
		       "(the DURABLE mark): damage on disk, not a torn write";
	if (last_lsn < m->lsn)
		return "the log ends before the LSN it had synced (the "
		       "DURABLE mark): records known written are gone";
	return NULL;
}
