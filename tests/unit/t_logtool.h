/* t_logtool - helpers for the tests of sluice-log: data directories
 * written by the real writer with real queue records, hand-built segments
 * for what no writer makes (an older epoch after a newer one), the
 * records' offsets, and running the tool. Static inline, like t_log.h. */
#ifndef SLUICE_T_LOGTOOL_H
#define SLUICE_T_LOGTOOL_H

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "log/durable.h"
#include "log/snap.h"
#include "queue/queue.h"
#include "sluice_log_walk.h"
#include "t_log.h"
#include "t_srv.h"
#include "util/fsutil.h"

enum {
	TL_SEG = 64 << 10, /* small segments: a few hundred records each */
	TL_OUT = 1 << 20,
	TL_SNAP_BUF = 64 << 10,
	TL_RECS = 4096,
};

/* ---- a log written by the real writer --------------------------------- */

struct tl_log {
	char dir[1024];
	struct queue *q;
	struct wal *w;
	struct buf body;
	int64_t now;
};

static inline void
tl_open(struct tl_log *l, const char *dir)
{
	memset(l, 0, sizeof(*l));
	snprintf(l->dir, sizeof(l->dir), "%s", dir);
	assert_int_equal(fs_mkdir_p(dir), 0);
	l->q = queue_new(NULL);
	assert_non_null(l->q);
	buf_init(&l->body);
	l->now = 1700000000000;
	assert_int_equal(t_wal_open(dir, WAL_FSYNC_NEVER, TL_SEG, 1, &l->w), 0);
}

/* Appends and applies one record; returns its LSN. */
static inline uint64_t
tl_commit(struct tl_log *l, const struct qrec *r)
{
	uint64_t lsn = 0;
	int rc;

	buf_reset(&l->body);
	assert_int_equal(qrec_encode(r, &l->body), 0);
	rc = wal_append(
	    l->w, r->type, l->now, l->body.data, l->body.len, 0, &lsn);
	if (rc == SLUICE_ENOSPC && wal_prealloc_wait(l->w, 10000) == 0)
		rc = wal_append(
		    l->w, r->type, l->now, l->body.data, l->body.len, 0, &lsn);
	assert_int_equal(rc, 0);
	assert_int_equal(queue_apply(l->q, lsn, l->now, r), 0);
	assert_int_equal(t_wal_turn(l->w, 0), 0);
	l->now += 7;
	return lsn;
}

/* A put of `payload` (n bytes) into `tube`, ready at once unless
 * delay_ms; returns the task id. */
static inline uint64_t
tl_put_n(struct tl_log *l, const char *tube, const void *payload, size_t n,
    int64_t delay_ms)
{
	struct queue_put_req p;
	struct queue_put_res res;
	struct qrec r;

	queue_put_req_init(&p);
	p.tube = tube;
	p.tube_len = strlen(tube);
	p.payload = payload;
	p.payload_len = n;
	p.delay_ms = delay_ms;
	assert_int_equal(queue_decide_put(l->q, l->now, &p, &r, &res), 0);
	tl_commit(l, &r);
	return res.id;
}

static inline uint64_t
tl_put(struct tl_log *l, const char *tube, const char *payload)
{
	return tl_put_n(l, tube, payload, strlen(payload), 0);
}

/* Takes the next task of `tube`; returns its id, *lease its lease. */
static inline uint64_t
tl_take(struct tl_log *l, const char *tube, uint64_t *lease)
{
	struct queue_str ts = { tube, strlen(tube) };
	struct queue_take_req t = { &ts, 1, 1, false };
	struct qrec r;

	assert_int_equal(queue_decide_take(l->q, l->now, &t, &r), 0);
	*lease = tl_commit(l, &r);
	return r.u.take.id;
}

static inline void
tl_ack(struct tl_log *l, uint64_t id, uint64_t lease)
{
	struct queue_ack_req a = { id, lease, NULL, 0 };
	struct qrec r;

	assert_int_equal(queue_decide_ack(l->q, l->now, &a, &r), 0);
	tl_commit(l, &r);
}

static inline void
tl_ack_to(struct tl_log *l, uint64_t id, uint64_t lease, const char *tube)
{
	struct queue_ack_req a = { id, lease, tube, strlen(tube) };
	struct qrec r;

	assert_int_equal(queue_decide_ack(l->q, l->now, &a, &r), 0);
	tl_commit(l, &r);
}

static inline void
tl_bury(struct tl_log *l, uint64_t id, uint64_t lease)
{
	struct queue_bury_req a = { id, lease };
	struct qrec r;

	assert_int_equal(queue_decide_bury(l->q, l->now, &a, &r), 0);
	tl_commit(l, &r);
}

static int
tl_emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	return snap_writer_add(arg, type, a, alen, b, blen);
}

/* Writes a snapshot of the state at the last LSN, as the server does;
 * with remove, also removes the segments it covers but `keep` of them.
 * Returns its LSN. */
static inline uint64_t
tl_snapshot(struct tl_log *l, bool remove, unsigned keep)
{
	static uint8_t buf[TL_SNAP_BUF];
	struct snap_writer sw;
	uint64_t lsn = wal_last_lsn(l->w);

	assert_int_equal(wal_sync(l->w, 10000), 0);
	assert_int_equal(snap_writer_open(&sw, l->dir, lsn, wal_epoch(l->w),
	                     l->now, buf, sizeof(buf)),
	    0);
	assert_int_equal(queue_snapshot_write(l->q, tl_emit, &sw), 0);
	assert_int_equal(snap_writer_commit(&sw), 0);
	if (remove)
		assert_true(wal_remove_before(l->w, lsn + 1, keep) >= 0);
	return lsn;
}

static inline void
tl_close(struct tl_log *l)
{
	assert_int_equal(wal_sync(l->w, 10000), 0);
	assert_int_equal(wal_close(l->w), 0);
	queue_free(l->q);
	buf_fini(&l->body);
}

/* The DURABLE mark as a writer killed before it synced past `lsn` leaves
 * it: the records after it were never acknowledged under --fsync always,
 * so a torn write of them may be cut. */
static inline void
tl_crashed(const char *dir, uint64_t lsn)
{
	struct durable m;

	assert_int_equal(durable_open(&m, dir, lsn), 0);
	durable_close(&m);
}

/* A log of `n` puts (payload "task N", tubes a and b in turn) with some
 * takes, acks and a bury among them, over several segments. Returns the
 * last LSN. */
static inline uint64_t
tl_history(struct tl_log *l, unsigned n)
{
	char payload[128];
	uint64_t lease, id;

	for (unsigned i = 0; i < n; i++) {
		snprintf(payload, sizeof(payload),
		    "task %u with a payload long enough to fill segments "
		    "at a good pace",
		    i);
		tl_put(l, i % 2 ? "b" : "a", payload);
		if (i % 5 == 4) {
			id = tl_take(l, "a", &lease);
			if (i % 15 == 4)
				tl_bury(l, id, lease);
			else
				tl_ack(l, id, lease);
		}
	}
	return wal_last_lsn(l->w);
}

/* ---- hand-built segments with queue records --------------------------- */

/* A segment image (size TL_SEG) whose records first..first+n-1 are PUTs of
 * task id = lsn into tube "t", with `epoch`. */
static inline const char *
tl_seg_file(const char *dir, uint64_t first, uint64_t epoch, unsigned n)
{
	static char path[512];
	struct seg_hdr h = { .version = SEG_VERSION,
		.hdr_size = SEG_HDR_SIZE,
		.first_lsn = first,
		.epoch = epoch,
		.created = 1700000000000,
		.size = TL_SEG };
	struct buf b, body;
	uint8_t *p;

	buf_init(&b);
	buf_init(&body);
	p = buf_extend(&b, SEG_HDR_SIZE);
	assert_non_null(p);
	seg_hdr_encode(p, &h);
	for (unsigned i = 0; i < n; i++) {
		struct qrec r = { .type = QREC_PUT };
		struct rec_hdr rh = { .type = QREC_PUT,
			.lsn = first + i,
			.epoch = epoch,
			.time = 1700000000000 + (int64_t)(first + i) };

		r.u.put.id = first + i;
		r.u.put.tube = "t";
		r.u.put.tube_len = 1;
		r.u.put.payload = "x";
		r.u.put.payload_len = 1;
		r.u.put.pri = 1024;
		r.u.put.ttr = 1000;
		r.u.put.run_at = rh.time;
		buf_reset(&body);
		assert_int_equal(qrec_encode(&r, &body), 0);
		assert_int_equal(rec_encode(&b, &rh, body.data, body.len), 0);
	}
	assert_non_null(buf_extend(&b, TL_SEG - b.len));
	assert_int_equal(seg_path(path, sizeof(path), dir, first), 0);
	t_write_file(path, b.data, b.len);
	buf_fini(&b);
	buf_fini(&body);
	return path;
}

/* ---- reading back ----------------------------------------------------- */

struct tl_recs {
	size_t n;
	uint64_t off[TL_RECS];
	uint64_t lsn[TL_RECS];
	uint64_t size[TL_RECS];
	uint64_t end; /* past the last valid record */
};

static int
tl_recs_visit(void *arg, uint64_t off, const struct rec_view *v)
{
	struct tl_recs *r = arg;

	if (r->n < TL_RECS) {
		r->off[r->n] = off;
		r->lsn[r->n] = v->hdr.lsn;
		r->size[r->n] = v->size;
		r->n++;
	}
	return 0;
}

/* The valid records of a segment file, in order. */
static inline void
tl_recs(const char *path, struct tl_recs *out)
{
	static const struct walk_ops ops = { tl_recs_visit, NULL };
	struct walk_result w;
	uint8_t *data;
	size_t len;

	memset(out, 0, sizeof(*out));
	assert_int_equal(fs_read_all(path, &data, &len), 0);
	assert_int_equal(walk_seg(data, len, 0, &ops, out, &w), 0);
	out->end = w.end;
	free(data);
}

/* The path of the i-th segment of `dir` (by name), or NULL. */
static inline const char *
tl_seg_at(const char *dir, size_t i)
{
	static char path[512];
	struct logdir ld;
	const char *rc = NULL;

	assert_int_equal(logdir_list(dir, &ld), 0);
	if (i < ld.n) {
		assert_int_equal(
		    seg_path(path, sizeof(path), dir, ld.first[i]), 0);
		rc = path;
	}
	logdir_fini(&ld);
	return rc;
}

static inline size_t
tl_nsegs(const char *dir)
{
	struct logdir ld;
	size_t n;

	assert_int_equal(logdir_list(dir, &ld), 0);
	n = ld.n;
	logdir_fini(&ld);
	return n;
}

/* ---- running the tool ------------------------------------------------- */

struct tl_run {
	int rc;
	char out[TL_OUT];
	char err[64 << 10];
};

/* Runs `sluice-log ARGS...` (NULL-ended); prints what it said when the
 * environment sets SLUICE_TEST_VERBOSE. */
static inline int
tl_tool(struct tl_run *r, ...)
{
	char *argv[16];
	const char *a;
	int n = 0;
	va_list ap;

	argv[n++] = (char *)t_bin("sluice-log");
	argv[0] = strdup(argv[0]);
	va_start(ap, r);
	while ((a = va_arg(ap, const char *)) != NULL && n < 15)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	r->rc =
	    t_run(argv, NULL, r->out, sizeof(r->out), r->err, sizeof(r->err));
	if (getenv("SLUICE_TEST_VERBOSE") != NULL)
		fprintf(stderr, "--- sluice-log %s %s -> %d\n%s%s",
		    n > 1 ? argv[1] : "", n > 2 ? argv[2] : "", r->rc, r->out,
		    r->err);
	free(argv[0]);
	return r->rc;
}

/* Asserts that `hay` contains `needle`, printing both when it does not. */
#define tl_has(hay, needle)                                                    \
	do {                                                                   \
		if (strstr((hay), (needle)) == NULL) {                         \
			fprintf(stderr, "missing: %s\nin:\n%s\n", (needle),    \
			    (hay));                                            \
			fail();                                                \
		}                                                              \
	} while (0)

/* The name of the only entry of `dir` (lost+found/<time>), or NULL. */
static inline const char *
tl_only_entry(const char *dir)
{
	static char name[256];
	struct dirent *e;
	const char *rc = NULL;
	int n = 0;
	DIR *d = opendir(dir);

	if (d == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "%s", e->d_name);
		n++;
	}
	closedir(d);
	if (n == 1)
		rc = name;
	return rc;
}

/* A checksum of every file's name, size and bytes in `dir` (one level),
 * to see that nothing changed. */
static inline uint64_t
tl_dir_sum(const char *dir)
{
	uint64_t sum = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[1024];
		uint8_t *data;
		size_t len;
		uint64_t h = 1469598103934665603ULL;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		for (const char *c = e->d_name; *c; c++)
			h = (h ^ (uint8_t)*c) * 1099511628211ULL;
		if (fs_read_all(path, &data, &len) == 0) {
			for (size_t i = 0; i < len; i++)
				h = (h ^ data[i]) * 1099511628211ULL;
			h ^= len;
			free(data);
		}
		sum += h; /* order-free */
	}
	closedir(d);
	return sum;
}

#endif
