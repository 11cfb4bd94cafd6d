/* seg - one segment file: header, preallocation, reader, scan, cut.
 *
 * Header layout (64 bytes, little-endian):
 *
 *	 0  u64 magic      "SLUICEWL"
 *	 8  u32 version    SEG_VERSION (1)
 *	12  u32 hdr_size   64
 *	16  u64 first_lsn  LSN of the first record; also the file name
 *	24  u64 epoch      the writer's epoch when the segment was started
 *	32  i64 created    unix ms
 *	40  u64 size       bytes preallocated, header included
 *	48  u64 reserved   0
 *	56  u64 checksum   XXH3_64bits over bytes [0, 56)
 *
 * Records follow from offset 64, back to back, each 8-byte aligned; the
 * space after the last one holds zeros (preallocation).
 *
 * Reading. The reader keeps a window of the file (1 MiB, more for a larger
 * record) and decodes records in place. When a record fails the rule at
 * offset X, the scan decides between a torn tail and corruption by
 * looking at every 8-byte aligned offset after X for a record that
 * validates AND could follow the last good one (its lsn is above the last
 * good lsn by no more than the records that fit in between, its epoch is
 * not lower). Without that second condition a task payload that happens to
 * hold an encoded record, torn with its put, would stop start-up as
 * "corruption". A record that validates but breaks the sequence at X
 * itself (wrong lsn, lower epoch) is always corruption: no crash writes a
 * whole, checksummed record with the wrong number.
 *
 *	- nothing but zeros after X: the clean end of the data;
 *	- such a record at Y > X: corruption at X (SLUICE_ECORRUPT), unless
 *	  it is the gap below;
 *	- non-zero bytes but no such record: a torn tail only when they are
 *	  what an interrupted write leaves (seg_tail_rule: a prefix of the
 *	  next record, its header that of the record expected, zeros past
 *	  its length), else corruption. A torn tail is cut by zeroing
 *	  X .. the last non-zero byte, then fdatasync (the space stays
 *	  allocated and the file keeps its size).
 *
 * The gap. A writer with several batches in flight at once (wal.h,
 * cfg.inflight) starts a batch beside others only on a block boundary,
 * and ends a batch sealed while another flies with a REC_PAD up to the
 * next block. A crash (a power cut, a write that failed) can leave a
 * later batch on disk without an earlier one; none of their records was
 * acknowledged, as the durable LSN moves over batches in the order they
 * were written. That is what lies after X when all of these hold, and
 * the scan reports it as a torn tail (`gap`), cut from X to its last
 * non-zero byte:
 *	- nothing but zeros from X to Y (the lost batch never wrote its
 *	  blocks: the one it shared kept its zeros past X);
 *	- Y is on a block boundary, and so is the start of every later run
 *	  of records (a run: records in sequence), each preceded by zeros;
 *	- every run but the last ends with a REC_PAD on a block boundary;
 *	- at most SEG_GAP_RUNS_MAX runs, each starting above the LSNs
 *	  before it (scan_tail's rule);
 *	- after the last run, zeros or what a torn write leaves.
 * A batch torn across its own blocks (some landed, an earlier one not)
 * breaks these and stays corruption, for sluice-log to salvage.
 *
 * Segments are preallocated: a file shorter than the size its header
 * gives was cut by something other than the writer, which is damage
 * wherever its records end. Whether a torn tail that passes these rules
 * may really be cut depends on what the log had synced: that is the
 * directory's business (logdir.c, durable.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "log/seg.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/fault.h"
#include "util/fsutil.h"

enum {
	WINDOW = 1 << 20, /* bytes read at a time */
	ZERO_CHUNK = 1 << 20,
	ZERO_ALIGN = 4096, /* O_DIRECT's block: offsets, lengths, memory */
	HDR_SUMMED = 56,
};

/* What new segments and cut tails are written from. Zero as all static
 * storage is, so it costs no allocation and no memset: a preallocator
 * that allocated and cleared a chunk for each segment spent more on that
 * than on the writes where segments are small. Nothing writes to it. */
static uint8_t zero_chunk[ZERO_CHUNK] __attribute__((aligned(ZERO_ALIGN)));

/* ---------------------------------------------------------------------
 * Header and names
 * ------------------------------------------------------------------- */

void
seg_hdr_encode(uint8_t *out, const struct seg_hdr *h)
{
	memset(out, 0, SEG_HDR_SIZE);
	le_store_u64(out + 0, SEG_MAGIC);
	le_store_u32(out + 8, h->version);
	le_store_u32(out + 12, h->hdr_size);
	le_store_u64(out + 16, h->first_lsn);
	le_store_u64(out + 24, h->epoch);
	le_store_u64(out + 32, (uint64_t)h->created);
	le_store_u64(out + 40, h->size);
	le_store_u64(out + 56, XXH3_64bits(out, HDR_SUMMED));
}

int
seg_hdr_decode(const void *p, size_t avail, struct seg_hdr *out)
{
	const uint8_t *b = p;
	struct seg_hdr h;

	if (avail < SEG_HDR_SIZE || le_load_u64(b) != SEG_MAGIC)
		return SLUICE_ECORRUPT;
	h.version = le_load_u32(b + 8);
	h.hdr_size = le_load_u32(b + 12);
	h.first_lsn = le_load_u64(b + 16);
	h.epoch = le_load_u64(b + 24);
	h.created = (int64_t)le_load_u64(b + 32);
	h.size = le_load_u64(b + 40);
	h.checksum = le_load_u64(b + 56);
	if (h.checksum != XXH3_64bits(b, HDR_SUMMED))
		return SLUICE_ECORRUPT;
	if (h.version != SEG_VERSION || h.hdr_size != SEG_HDR_SIZE ||
	    h.first_lsn == 0 || h.size < SEG_HDR_SIZE)
		return SLUICE_ECORRUPT;
	*out = h;
	return 0;
}

void
seg_name(char *out, uint64_t first_lsn)
{
	snprintf(
	    out, SEG_NAME_MAX, "%020llu.wal", (unsigned long long)first_lsn);
}

bool
seg_parse_name(const char *name, uint64_t *first_lsn)
{
	uint64_t v = 0;

	if (strlen(name) != 24 || strcmp(name + 20, ".wal") != 0)
		return false;
	for (int i = 0; i < 20; i++) {
		unsigned d = (unsigned)(name[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*first_lsn = v;
	return true;
}

int
seg_path(char *out, size_t n, const char *dir, uint64_t first_lsn)
{
	char name[SEG_NAME_MAX];

	seg_name(name, first_lsn);
	return fs_join(out, n, dir, name);
}

/* ---------------------------------------------------------------------
 * Creating and cutting
 * ------------------------------------------------------------------- */

/* Whether a late zero fill is to stop, read before each MiB of it (after
 * the fault build's slow disk, FAULT_PAUSE_ZERO). */
static bool
stopped(const atomic_bool *stop)
{
	FAULT_PAUSE(FAULT_PAUSE_ZERO);
	return atomic_load(stop);
}

/* Writes zeros over [off, off + len). With `paced`, each chunk is
 * written back before the next is dirtied (sync_file_range), so a
 * segment's worth of zeros never queues in front of the writer's
 * fdatasyncs as one 64 MiB burst. Gives up with -ECANCELED between two
 * chunks once `*stop` (when not NULL) is set. */
static int
write_zeros(
    int fd, uint64_t off, uint64_t len, bool paced, const atomic_bool *stop)
{
	int rc = 0;

	while (len > 0 && rc == 0) {
		size_t n = len < ZERO_CHUNK ? (size_t)len : ZERO_CHUNK;

		if (stop != NULL && stopped(stop))
			return -ECANCELED;
		rc = fs_pwrite_all(fd, zero_chunk, n, (int64_t)off);
		if (rc == 0 && paced &&
		    sync_file_range(fd, (off64_t)off, (off64_t)n,
		        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
		            SYNC_FILE_RANGE_WAIT_AFTER) < 0)
			rc = -errno;
		off += n;
		len -= n;
	}
	return rc;
}

/* Zeros over a new segment's [0, size) written with O_DIRECT from one
 * aligned block of zeros: no copy into the page cache and no pages left
 * there for the writer's own O_DIRECT writes to invalidate; each write
 * waits for the device, so they are paced by themselves. Returns 0,
 * -EINVAL when the file system refuses O_DIRECT or the size is not whole
 * blocks (the caller writes them through the page cache then),
 * -ECANCELED when `*stop` was set, or -errno. */
static int
write_zeros_direct(const char *path, uint64_t size, const atomic_bool *stop)
{
	uint64_t off = 0;
	int fd, rc = 0;

	if (size % ZERO_ALIGN != 0)
		return -EINVAL;
	fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return errno == EINVAL ? -EINVAL : -errno;
	while (off < size && rc == 0) {
		size_t n =
		    size - off < ZERO_CHUNK ? (size_t)(size - off) : ZERO_CHUNK;

		if (stop != NULL && stopped(stop)) {
			rc = -ECANCELED;
			break;
		}
		rc = fs_pwrite_all(fd, zero_chunk, n, (int64_t)off);
		off += n;
	}
	close(fd);
	return rc;
}

static int
fault_rc(int effect)
{
	return effect < 0 ? effect : -EIO;
}

int
seg_zero_fill(const char *path, int fd, uint64_t size, const atomic_bool *stop)
{
	int rc = write_zeros_direct(path, size, stop);

	if (rc == -EINVAL)
		rc = write_zeros(fd, 0, size, true, stop);
	if (rc == 0 && fdatasync(fd) < 0)
		rc = -errno;
	return rc;
}

int
seg_prealloc(
    const char *path, uint64_t size, bool zero_fill, int *fd_out, bool *zeroed)
{
	int fd, rc, f;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	f = FAULT_HIT(FAULT_SEG_ALLOC);
	if (f != 0) {
		rc = fault_rc(f);
		goto fail_alloc;
	}
	if (fallocate(fd, 0, 0, (off_t)size) < 0) {
		rc = -errno;
		if (rc != -EOPNOTSUPP)
			goto fail_alloc;
		/* No fallocate here (tmpfs of old, some FUSE): zeros
		 * written below allocate the space just as well. */
		zero_fill = true;
	}
	rc = zero_fill ? seg_zero_fill(path, fd, size, NULL) : 0;
	if (rc == 0 && !zero_fill && fdatasync(fd) < 0)
		rc = -errno;
	if (rc != 0)
		goto fail_alloc;
	*fd_out = fd;
	if (zeroed != NULL)
		*zeroed = zero_fill;
	return 0;

fail_alloc:
	close(fd);
	unlink(path);
	return rc;
}

int
seg_cut(const char *path, uint64_t off, uint64_t len)
{
	int fd, rc, f;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = FAULT_HIT(FAULT_SEG_CUT);
	if (f != 0) {
		rc = fault_rc(f);
		goto out;
	}
	rc = write_zeros(fd, off, len, false, NULL);
	if (rc == 0 && fdatasync(fd) < 0)
		rc = -errno;
out:
	close(fd);
	return rc;
}

/* ---------------------------------------------------------------------
 * Reader
 * ------------------------------------------------------------------- */

static int
reader_open(struct seg_reader *r, const char *path, int flags)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	if (r->fd < 0)
		return -errno;
	if (fstat(r->fd, &st) < 0) {
		int rc = -errno;

		close(r->fd);
		r->fd = -1;
		return rc;
	}
	r->size = (uint64_t)st.st_size;
	return 0;
}

int
seg_reader_open(struct seg_reader *r, const char *path)
{
	return reader_open(r, path, 0);
}

int
seg_reader_open_direct(struct seg_reader *r, const char *path)
{
	int rc = reader_open(r, path, O_DIRECT);

	if (rc == -EINVAL)
		return reader_open(r, path, 0); /* tmpfs and the like */
	r->direct = rc == 0;
	return rc;
}

void
seg_reader_init_mem(struct seg_reader *r, const void *data, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->path = "(memory)";
	r->fd = -1;
	r->mem = data;
	r->size = len;
}

void
seg_reader_close(struct seg_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	free(r->buf);
	r->buf = NULL;
	r->cap = 0;
	r->buf_len = 0;
}

void
seg_reader_refresh(struct seg_reader *r)
{
	struct stat st;

	r->buf_len = 0;
	if (r->fd >= 0 && fstat(r->fd, &st) == 0)
		r->size = (uint64_t)st.st_size;
}

/* peek's read for a reader opened with O_DIRECT: whole aligned blocks
 * from the block holding `off` into an aligned window, straight from the
 * disk (no copy through the page cache); the file's last block may come
 * short. -EINVAL: the file system refuses such a read (peek then reads
 * plainly). */
static int
peek_direct(struct seg_reader *r, uint64_t off, size_t need, const uint8_t **p,
    size_t *got)
{
	uint64_t base = off & ~(uint64_t)(ZERO_ALIGN - 1);
	uint64_t end = (r->size + ZERO_ALIGN - 1) & ~(uint64_t)(ZERO_ALIGN - 1);
	size_t lead = (size_t)(off - base), n = r->window ? r->window : WINDOW;
	size_t have = 0;

	if (need + lead > n)
		n = (need + lead + ZERO_ALIGN - 1) & ~(size_t)(ZERO_ALIGN - 1);
	if (n > end - base)
		n = (size_t)(end - base);
	if (n > r->cap) {
		void *nb;

		if (posix_memalign(&nb, ZERO_ALIGN, n) != 0)
			return -ENOMEM;
		free(r->buf);
		r->buf = nb;
		r->cap = n;
	}
	r->buf_len = 0;
	while (have < n) {
		ssize_t k =
		    pread(r->fd, r->buf + have, n - have, (off_t)(base + have));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0 || (size_t)k % ZERO_ALIGN != 0) {
			have += (size_t)k;
			break; /* the end of the file */
		}
		have += (size_t)k;
	}
	if (base + have > r->size)
		have = (size_t)(r->size - base);
	if (have < lead + (need < r->size - off ? need : r->size - off))
		return -EIO; /* the file shrank under the reader */
	r->buf_pos = base;
	r->buf_len = have;
	*p = r->buf + lead;
	*got = have - lead;
	return 0;
}

/* Points *p at offset `off`, with *got >= min(need, bytes left) bytes
 * readable there (0 at or past the end). */
static int
peek(struct seg_reader *r, uint64_t off, size_t need, const uint8_t **p,
    size_t *got)
{
	uint64_t left;
	size_t n;
	int rc;

	if (off >= r->size) {
		*p = NULL;
		*got = 0;
		return 0;
	}
	left = r->size - off;
	if (r->mem != NULL) {
		*p = r->mem + off;
		*got = left > SIZE_MAX ? SIZE_MAX : (size_t)left;
		return 0;
	}
	if (need > left)
		need = (size_t)left;
	if (r->buf_len > 0 && off >= r->buf_pos &&
	    off + need <= r->buf_pos + r->buf_len) {
		*p = r->buf + (off - r->buf_pos);
		*got = (size_t)(r->buf_pos + r->buf_len - off);
		return 0;
	}
	if (r->direct) {
		int fl;

		if ((rc = peek_direct(r, off, need, p, got)) != -EINVAL)
			return rc;
		/* The file system took O_DIRECT at open but refuses its
		 * reads (a block larger than ours): read it plainly. */
		fl = fcntl(r->fd, F_GETFL);
		if (fl < 0 || fcntl(r->fd, F_SETFL, fl & ~O_DIRECT) < 0)
			return -errno;
		r->direct = false;
	}
	n = r->window ? r->window : WINDOW;
	if (need > n)
		n = need;
	if (n > left)
		n = (size_t)left;
	if (n > r->cap) {
		uint8_t *nb = realloc(r->buf, n);

		if (nb == NULL)
			return -ENOMEM;
		r->buf = nb;
		r->cap = n;
	}
	r->buf_len = 0;
	rc = fs_pread_all(r->fd, r->buf, n, (int64_t)off);
	if (rc != 0)
		return rc;
	r->buf_pos = off;
	r->buf_len = n;
	*p = r->buf;
	*got = n;
	return 0;
}

/* Decodes the record at `off`, reading as much of it as the file has. */
static int
decode_at(struct seg_reader *r, uint64_t off, struct rec_view *v)
{
	const uint8_t *p;
	size_t got, need = REC_HDR_SIZE;
	int rc;

	rc = peek(r, off, need, &p, &got);
	if (rc != 0)
		return rc;
	if (got >= sizeof(uint32_t)) {
		uint32_t len = le_load_u32(p);

		if (len >= REC_HDR_SIZE && len <= REC_MAX_LEN)
			need = rec_size(len - REC_HDR_SIZE);
		if (got < need) {
			rc = peek(r, off, need, &p, &got);
			if (rc != 0)
				return rc;
		}
	}
	return (int)rec_decode(p, got, v);
}

int
seg_reader_hdr(struct seg_reader *r)
{
	const uint8_t *p;
	size_t got;
	int rc;

	rc = peek(r, 0, SEG_HDR_SIZE, &p, &got);
	if (rc != 0)
		return rc;
	rc = seg_hdr_decode(p, got, &r->hdr);
	if (rc != 0)
		return rc;
	r->hdr_ok = true;
	r->off = SEG_HDR_SIZE;
	r->next_lsn = r->hdr.first_lsn;
	r->epoch = r->hdr.epoch;
	return 0;
}

int
seg_reader_next(struct seg_reader *r, struct rec_view *out)
{
	int rc = decode_at(r, r->off, out);

	if (rc != REC_VALID)
		return rc;
	if (out->hdr.lsn != r->next_lsn) {
		out->why = REC_WHY_LSN;
		return REC_INVALID;
	}
	if (out->hdr.epoch < r->epoch) {
		out->why = REC_WHY_EPOCH;
		return REC_INVALID;
	}
	r->off += out->size;
	r->next_lsn++;
	r->epoch = out->hdr.epoch;
	r->nrec++;
	return REC_VALID;
}

/* ---------------------------------------------------------------------
 * Scan
 * ------------------------------------------------------------------- */

const char *
seg_bad_str(enum seg_bad b)
{
	switch (b) {
	case SEG_BAD_NONE:
		return "a torn write";
	case SEG_BAD_FOLLOWED:
		return "bad record followed by a valid one";
	case SEG_BAD_SEQUENCE:
		return "a whole record out of sequence (wrong LSN or a lower "
		       "epoch)";
	case SEG_BAD_AFTER:
		return "bad record followed by non-zero bytes past its length "
		       "(a torn write leaves zeros there)";
	case SEG_BAD_HEADER:
		return "bad record whose header is not the next record's (a "
		       "torn write leaves a prefix of the next record)";
	case SEG_BAD_SHORT:
		return "segment file shorter than its preallocated size (cut "
		       "by something other than the writer)";
	case SEG_BAD_HDR:
		return "segment header does not parse, records follow it";
	}
	return "?";
}

enum seg_bad
seg_tail_rule(const uint8_t *at, size_t avail, uint64_t nz, uint64_t expect_lsn,
    uint64_t epoch)
{
	uint8_t p[REC_HDR_SIZE] = { 0 }; /* bytes past the file read as 0 */
	uint32_t len;

	memcpy(p, at, avail < sizeof(p) ? avail : sizeof(p));
	if (nz <= 4)
		return SEG_BAD_NONE; /* nothing, or part of the length */
	len = le_load_u32(p);
	if (len < REC_HDR_SIZE || len > REC_MAX_LEN)
		return SEG_BAD_HEADER;
	if (nz > (((uint64_t)len + 7) & ~(uint64_t)7))
		return SEG_BAD_AFTER;
	if (nz > 8 &&
	    (le_load_u16(p + 4) == 0 || p[6] != REC_VERSION || p[7] != 0))
		return SEG_BAD_HEADER;
	if (nz > 16 && le_load_u64(p + 8) != expect_lsn)
		return SEG_BAD_HEADER;
	if (nz > 24 && le_load_u64(p + 16) < epoch)
		return SEG_BAD_HEADER;
	return SEG_BAD_NONE;
}

/* What lies after a bad record at `start`. */
struct tail {
	uint64_t valid_off; /* a record that could follow; 0 if none */
	uint64_t nz_end;    /* past the last non-zero byte (before valid_off
	                     * when there is one); `start` if none */
	uint64_t nz_first;  /* the first 8-byte word not zero (valid_off
	                     * itself when only zeros come before it); 0 if
	                     * none */
};

/* True when the 8 bytes at `p` could start a record: checked before the
 * full decode so that zeros and most garbage cost one load. */
static bool
plausible_start(const uint8_t *p)
{
	uint32_t len = le_load_u32(p);

	return len >= REC_HDR_SIZE && len <= REC_MAX_LEN &&
	    le_load_u16(p + 4) != 0 && p[6] == REC_VERSION && p[7] == 0;
}

/* The first 8-byte word at or after `i` (a multiple of 8) in p[0, got)
 * that may be non-zero: zeros, most of a preallocated segment's tail, are
 * passed 64 bytes at a time. */
static size_t
skip_zeros(const uint8_t *p, size_t i, size_t got)
{
	enum { BLOCK = 4096 };

	/* Whole blocks by the C library's memcmp (a zero byte, then each
	 * byte equal to the one before it), then words. */
	while (i + BLOCK <= got && p[i] == 0 &&
	    memcmp(p + i, p + i + 1, BLOCK - 1) == 0)
		i += BLOCK;
	while (i + 64 <= got) {
		uint64_t w[8], any = 0;

		memcpy(w, p + i, sizeof(w));
		for (int k = 0; k < 8; k++)
			any |= w[k];
		if (any != 0)
			break;
		i += 64;
	}
	return i;
}

/* Looks at every 8-byte aligned offset from `start` to the end. A record
 * found at `off` counts only if it could follow `last_lsn` (0: any lsn)
 * with epoch >= `epoch`: at most one record per REC_HDR_SIZE bytes lies
 * between. */
static int
scan_tail(struct seg_reader *r, uint64_t start, uint64_t last_lsn,
    uint64_t epoch, bool any_lsn, struct tail *t)
{
	uint64_t off = start;

	t->valid_off = 0;
	t->nz_end = start;
	t->nz_first = 0;
	while (off < r->size) {
		const uint8_t *p;
		size_t got, i;
		int rc;

		rc = peek(r, off, 8, &p, &got);
		if (rc != 0)
			return rc;
		for (i = 0; i + 8 <= got; i += 8) {
			struct rec_view v;
			uint64_t at, most, nz;
			uint64_t w;

			i = skip_zeros(p, i, got);
			if (i + 8 > got)
				break;
			at = off + i;
			w = le_load_u64(p + i);
			if (w == 0)
				continue;
			if (t->nz_first == 0)
				t->nz_first = at;
			/* Past the highest non-zero byte of the word. */
			nz = at + (uint64_t)(63 - __builtin_clzll(w)) / 8 + 1;
			if (!plausible_start(p + i)) {
				t->nz_end = nz;
				continue;
			}
			rc = decode_at(r, at, &v);
			if (rc < 0)
				return rc;
			/* decode_at may have moved the window. */
			rc = peek(r, at, 8, &p, &got);
			if (rc != 0)
				return rc;
			off = at;
			i = 0;
			most = last_lsn + 1 + (at - start) / REC_HDR_SIZE;
			if (v.why == REC_WHY_NONE && v.hdr.epoch >= epoch &&
			    (any_lsn ||
			        (v.hdr.lsn > last_lsn && v.hdr.lsn <= most))) {
				t->valid_off = at;
				return 0;
			}
			t->nz_end = nz;
		}
		if (i < got) {
			/* Fewer than 8 bytes left at the very end. */
			for (size_t j = i; j < got; j++)
				if (p[j] != 0)
					t->nz_end = off + j + 1;
			i = got;
		}
		off += i;
	}
	if (t->nz_end > r->size)
		t->nz_end = r->size;
	return 0;
}

/* What lies after the records read (they end at `start`) when scan_tail
 * found one that could follow them (`first`): the gap a crash leaves
 * among batches in flight at once (the rules at the top), or damage.
 * Returns 1 for the gap, with *end past its last non-zero byte and *last
 * the highest LSN in it; 0 for damage; -errno. */
static int
scan_gap(struct seg_reader *r, uint64_t start, const struct tail *first,
    uint64_t *end, uint64_t *last)
{
	struct tail t = *first;
	uint64_t prev = start, lsn = r->next_lsn - 1, epoch = r->epoch;
	bool padded = true; /* the batch before the first run was lost */
	unsigned runs = 0;
	const uint8_t *p;
	size_t got;
	int rc;

	while (t.valid_off != 0) {
		uint64_t off = t.valid_off;
		struct rec_view v;

		if (t.nz_first != off || off % SEG_BLOCK != 0 || !padded ||
		    ++runs > SEG_GAP_RUNS_MAX)
			return 0;
		/* scan_tail checked the run's first record; the rest follow
		 * it in sequence. */
		rc = decode_at(r, off, &v);
		while (rc == REC_VALID &&
		    (off == t.valid_off ||
		        (v.hdr.lsn == lsn + 1 && v.hdr.epoch >= epoch))) {
			padded = v.hdr.type == REC_PAD;
			lsn = v.hdr.lsn;
			epoch = v.hdr.epoch;
			off += v.size;
			rc = decode_at(r, off, &v);
		}
		if (rc < 0)
			return rc;
		padded = padded && off % SEG_BLOCK == 0;
		prev = off;
		rc = scan_tail(r, off, lsn, epoch, false, &t);
		if (rc != 0)
			return rc;
	}
	if (t.nz_end > prev) {
		rc = peek(r, prev, REC_HDR_SIZE, &p, &got);
		if (rc != 0)
			return rc;
		if (seg_tail_rule(p, got, t.nz_end - prev, lsn + 1, epoch) !=
		    SEG_BAD_NONE)
			return 0;
		prev = t.nz_end;
	}
	*end = prev;
	*last = lsn;
	return 1;
}

static int
scan(struct seg_reader *r, uint64_t name_lsn, uint64_t from_lsn, unsigned flags,
    rec_visit_fn *visit, void *arg, struct seg_scan *out)
{
	struct seg_scan s;
	struct rec_view v;
	struct tail t;
	int rc;

	memset(&s, 0, sizeof(s));
	s.size = r->size;
	rc = seg_reader_hdr(r);
	if (rc < 0)
		return rc;
	if (rc == SLUICE_ECORRUPT) {
		/* A header that does not parse: a creation cut short if
		 * nothing that could be a record of it follows. */
		rc = scan_tail(r, SEG_HDR_SIZE, name_lsn ? name_lsn - 1 : 0, 0,
		    name_lsn == 0, &t);
		if (rc != 0)
			return rc;
		if (t.valid_off != 0) {
			s.bad_off = 0;
			s.good_off = t.valid_off;
			s.bad = SEG_BAD_HDR;
			*out = s;
			return SLUICE_ECORRUPT;
		}
		s.hdr_bad = true;
		s.last_lsn = name_lsn ? name_lsn - 1 : 0;
		*out = s;
		return 0;
	}
	s.hdr = r->hdr;
	for (;;) {
		rc = seg_reader_next(r, &v);
		if (rc < 0)
			return rc;
		if (rc != REC_VALID)
			break;
		if (visit != NULL && v.hdr.lsn >= from_lsn) {
			rc = visit(&v.hdr, v.body, arg);
			if (rc != 0)
				return rc;
		}
	}
	s.end = r->off;
	s.nrec = r->nrec;
	s.last_lsn = r->next_lsn - 1;
	s.last_epoch = r->epoch;
	s.why = v.why;
	if (v.why == REC_WHY_LSN || v.why == REC_WHY_EPOCH) {
		s.bad_off = s.good_off = r->off;
		s.bad = SEG_BAD_SEQUENCE;
		*out = s;
		return SLUICE_ECORRUPT;
	}
	rc = scan_tail(r, r->off, s.last_lsn, r->epoch, false, &t);
	if (rc != 0)
		return rc;
	if (t.valid_off != 0) {
		uint64_t end = 0;

		rc = scan_gap(r, s.end, &t, &end, &s.gap_last);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			s.bad_off = r->off;
			s.good_off = t.valid_off;
			s.bad = SEG_BAD_FOLLOWED;
			*out = s;
			return SLUICE_ECORRUPT;
		}
		s.torn = s.gap = true;
		s.torn_bytes = end - s.end;
	} else if (t.nz_end > s.end) {
		const uint8_t *p;
		size_t got;

		rc = peek(r, s.end, REC_HDR_SIZE, &p, &got);
		if (rc != 0)
			return rc;
		s.bad = seg_tail_rule(
		    p, got, t.nz_end - s.end, r->next_lsn, r->epoch);
		s.torn = s.bad == SEG_BAD_NONE;
		s.torn_bytes = t.nz_end - s.end;
	} else {
		s.why = REC_WHY_NONE;
	}
	if (s.bad == SEG_BAD_NONE && r->size < r->hdr.size)
		s.bad = SEG_BAD_SHORT;
	if (s.bad != SEG_BAD_NONE) {
		s.torn = s.gap = false;
		s.bad_off = s.good_off = s.end;
		*out = s;
		return SLUICE_ECORRUPT;
	}
	if (s.torn && (flags & SEG_SCAN_CUT) && r->mem == NULL) {
		rc = seg_cut(r->path, s.end, s.torn_bytes);
		if (rc != 0)
			return rc;
		s.cut = true;
	}
	*out = s;
	return 0;
}

int
seg_scan(const char *path, uint64_t from_lsn, unsigned flags,
    rec_visit_fn *visit, void *arg, struct seg_scan *out)
{
	struct seg_reader r;
	const char *base = strrchr(path, '/');
	uint64_t name_lsn = 0;
	int rc;

	if (!seg_parse_name(base ? base + 1 : path, &name_lsn))
		name_lsn = 0;
	rc = seg_reader_open(&r, path);
	if (rc != 0)
		return rc;
	rc = scan(&r, name_lsn, from_lsn, flags, visit, arg, out);
	seg_reader_close(&r);
	return rc;
}

int
seg_gap_mem(const void *data, size_t len, uint64_t start, uint64_t last_lsn,
    uint64_t epoch, uint64_t *end, uint64_t *last)
{
	struct seg_reader r;
	struct tail t;
	int rc;

	if (start >= len)
		return 0;
	seg_reader_init_mem(&r, data, len);
	r.next_lsn = last_lsn + 1;
	r.epoch = epoch;
	rc = scan_tail(&r, start, last_lsn, epoch, false, &t);
	if (rc == 0 && t.valid_off != 0)
		rc = scan_gap(&r, start, &t, end, last);
	seg_reader_close(&r);
	return rc == 1 ? 1 : 0;
}

int
seg_scan_mem(const void *data, size_t len, uint64_t from_lsn,
    rec_visit_fn *visit, void *arg, struct seg_scan *out)
{
	struct seg_reader r;
	int rc;

	seg_reader_init_mem(&r, data, len);
	rc = scan(&r, 0, from_lsn, 0, visit, arg, out);
	seg_reader_close(&r);
	return rc;
}
