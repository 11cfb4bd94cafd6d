/* Replay: the state rebuilt from the log alone, and from a snapshot plus
 * the records after it, equals the live state that wrote them — compared
 * as canonical dumps — for random histories over several seeds. Records go
 * through the real writer into real segment files (small segments, so
 * histories span several), snapshots through the real snapshot files, and
 * rebuilding goes through recover(), as the server does at start.
 * The snapshot the server builds in the background (recover_live: the
 * newest snapshot plus the log up to an LSN, read while the writer goes on
 * appending) is byte for byte the snapshot the live queue writes at that
 * LSN. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/recover.h"
#include "log/snap.h"
#include "log/wal.h"
#include "queue/qrecover.h"
#include "queue/queue.h"
#include "sluice.h"
#include "t_lib.h"

enum {
	OPS_PER_SEED = 20000,
	SNAPSHOTS = 3,
	SEG_SIZE = 256 << 10,
	SNAP_BUF = 64 << 10,
	CHECKPOINTS = 4,
	LIVE_BUILDS = 7, /* background snapshots checked in a history */
	LIVE_AHEAD = 50, /* operations appended before one is built */
};

static const char *const tubes[] = { "mail", "img.resize", "a/b:c-d_e" };

struct hist {
	struct queue *q;
	struct wal *wal;
	struct buf body;
	int64_t now;
	uint64_t rng;
	uint64_t ids[4096];
	size_t nids;
	/* dumps of the live state at a few LSNs */
	uint64_t check_lsn[CHECKPOINTS];
	int64_t check_now[CHECKPOINTS];
	char *check_dump[CHECKPOINTS];
	int nchecks;
};

static void
commit(struct hist *h, const struct qrec *r)
{
	uint64_t lsn;

	buf_reset(&h->body);
	assert_int_equal(qrec_encode(r, &h->body), 0);
	/* Never SLUICE_ENOSPC here: the writer allocates a spare itself when
	 * its preallocator is behind. */
	assert_int_equal(wal_append(h->wal, r->type, h->now, h->body.data,
	                     h->body.len, 0, &lsn),
	    0);
	assert_int_equal(queue_apply(h->q, lsn, h->now, r), 0);
	if (r->type == QREC_PUT && h->nids < 4096)
		h->ids[h->nids++] = r->u.put.id;
}

static uint64_t
some_id(struct hist *h)
{
	return h->nids ? h->ids[t_below(&h->rng, h->nids)] : 1;
}

/* The current lease of a task, or a wrong one now and then. */
static uint64_t
lease_of(struct hist *h, uint64_t id)
{
	struct queue_task_view v;

	if (queue_peek(h->q, h->now, id, &v) != 0)
		return 1;
	return t_below(&h->rng, 10) == 0 ? v.lease + 1 : v.lease;
}

static void
one_op(struct hist *h)
{
	const char *tube = tubes[t_below(&h->rng, 3)];
	struct queue_str ts = { tube, strlen(tube) };
	struct qrec r;
	/* The record borrows from these until it is committed, after the
	 * switch: they live as long as the function. */
	char key[16], text[32], payload[64];
	int rc = -1;

	switch (t_below(&h->rng, 14)) {
	case 0:
	case 1:
	case 2: {
		struct queue_put_req p;
		struct queue_put_res res;
		size_t n = t_below(&h->rng, sizeof(payload));

		for (size_t i = 0; i < n; i++)
			payload[i] = (char)t_rand(&h->rng);
		queue_put_req_init(&p);
		p.tube = tube;
		p.tube_len = strlen(tube);
		p.payload = payload;
		p.payload_len = n;
		p.pri = (uint32_t)t_below(&h->rng, 4);
		p.delay_ms = t_below(&h->rng, 3) == 0
		    ? (int64_t)t_below(&h->rng, 5000)
		    : 0;
		p.ttr_ms = 1000 + (uint32_t)t_below(&h->rng, 4000);
		p.max_attempts = (uint32_t)t_below(&h->rng, 4);
		if (t_below(&h->rng, 10) == 0)
			p.period_ms = 1000 + (int64_t)t_below(&h->rng, 5000);
		if (t_below(&h->rng, 4) == 0) {
			snprintf(
			    key, sizeof(key), "k%d", (int)t_below(&h->rng, 50));
			p.key = key;
			p.key_len = strlen(key);
			p.replace = t_below(&h->rng, 3) == 0;
		}
		rc = queue_decide_put(h->q, h->now, &p, &r, &res);
		break;
	}
	case 3:
	case 4: {
		struct queue_take_req t = { &ts, 1, 1 + t_below(&h->rng, 3),
			t_below(&h->rng, 2) == 0 };

		rc = queue_decide_take(h->q, h->now, &t, &r);
		break;
	}
	case 5: {
		uint64_t id = some_id(h);
		struct queue_ack_req a = { id, lease_of(h, id), NULL, 0 };

		if (t_below(&h->rng, 5) == 0) {
			a.to_tube = tubes[0];
			a.to_tube_len = strlen(tubes[0]);
		}
		rc = queue_decide_ack(h->q, h->now, &a, &r);
		break;
	}
	case 6: {
		uint64_t id = some_id(h);
		struct queue_release_req a = { id, lease_of(h, id),
			(int64_t)t_below(&h->rng, 3000), 0, true, 7 };

		rc = queue_decide_release(h->q, h->now, &a, &r);
		break;
	}
	case 7: {
		uint64_t id = some_id(h);
		struct queue_fail_req a = { id, lease_of(h, id), text, 0, false,
			0 };

		a.error_len = (size_t)snprintf(
		    text, sizeof(text), "error %d", (int)t_below(&h->rng, 4));
		rc = queue_decide_fail(h->q, h->now, &a, &r);
		break;
	}
	case 8: {
		uint64_t id = some_id(h);
		struct queue_touch_req a = { id, lease_of(h, id) };

		rc = queue_decide_touch(h->q, h->now, &a, &r);
		break;
	}
	case 9: {
		uint64_t id = some_id(h);
		struct queue_bury_req a = { id, lease_of(h, id),
			t_below(&h->rng, 3) == 0 };

		rc = queue_decide_bury(h->q, h->now, &a, &r);
		break;
	}
	case 10: {
		struct queue_kick_req a = { 0, tube, strlen(tube) };

		if (t_below(&h->rng, 2))
			a.id = some_id(h);
		rc = queue_decide_kick(h->q, h->now, &a, &r);
		break;
	}
	case 11: {
		struct queue_delete_req a = { some_id(h), NULL, 0 };

		rc = queue_decide_delete(h->q, h->now, &a, &r);
		break;
	}
	case 12: {
		struct queue_pause_req a = { tube, strlen(tube),
			h->now + (int64_t)t_below(&h->rng, 2000), true };

		rc = queue_decide_pause(h->q, h->now, &a, &r);
		break;
	}
	case 13:
		rc = queue_decide_session_gone(h->q, h->now,
		    1 + t_below(&h->rng, 3), "worker disconnected", 19, &r);
		break;
	}
	if (rc == 0 && r.type != QREC_NONE)
		commit(h, &r);
	while (queue_decide_expired(h->q, h->now, &r) == 0)
		commit(h, &r);
}

static int
emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	return snap_writer_add(arg, type, a, alen, b, blen);
}

static void
snapshot(struct hist *h, const char *dir)
{
	static uint8_t buf[SNAP_BUF];
	struct snap_writer w;

	assert_int_equal(wal_sync(h->wal, 10000), 0);
	assert_int_equal(snap_writer_open(&w, dir, wal_last_lsn(h->wal),
	                     wal_epoch(h->wal), h->now, buf, sizeof(buf)),
	    0);
	assert_int_equal(queue_snapshot_write(h->q, emit, &w), 0);
	assert_int_equal(snap_writer_commit(&w), 0);
}

static char *
dump_at(struct queue *q, int64_t now)
{
	struct buf b;
	char *s;

	buf_init(&b);
	assert_int_equal(queue_tick(q, now), 0);
	assert_int_equal(queue_dump(q, &b), 0);
	buf_put_u8(&b, 0);
	s = strdup((char *)b.data);
	buf_fini(&b);
	return s;
}

/* Equal dumps, or a failure that names the first line that differs. */
static void
same_dump(const char *got, const char *want, const char *what)
{
	size_t line = 1, i = 0, start = 0;

	if (strcmp(got, want) == 0)
		return;
	while (got[i] != '\0' && got[i] == want[i]) {
		if (got[i] == '\n') {
			line++;
			start = i + 1;
		}
		i++;
	}
	fail_msg("%s: dumps differ at line %zu:\n  got:  %.300s\n  want: "
	         "%.300s",
	    what, line, got + start, want + start);
}

static int
load_entry(void *arg, uint16_t type, const void *data, size_t len)
{
	return queue_snapshot_load(arg, type, data, len);
}

/* The background snapshot: built with recover_live from the newest
 * snapshot and the log up to `lsn` while the writer is open (and has
 * appended past it), it holds the live state of that moment (`want`, a
 * dump at `now`), and so does the snapshot file written from it. */
static void
live_rebuild_matches(
    const char *dir, uint64_t lsn, int64_t now, const char *want)
{
	static uint8_t buf[SNAP_BUF];
	struct recover_result res;
	struct queue *q = queue_new(NULL), *back = queue_new(NULL);
	struct snap_writer w;
	char sub[700], path[800];
	char *got;

	assert_non_null(q);
	assert_non_null(back);
	assert_int_equal(
	    recover_live(dir, lsn, &queue_recover_ops, q, &res), 0);
	assert_int_equal(res.last_lsn, lsn);
	assert_int_equal(queue_check(q, NULL), 0);

	/* Written as the worker writes it: at the clock of the last record
	 * it applied, untouched since. */
	snprintf(sub, sizeof(sub), "%s/built", dir);
	if (mkdir(sub, 0755) != 0)
		assert_int_equal(errno, EEXIST);
	assert_int_equal(
	    snap_writer_open(&w, sub, lsn, 1, now, buf, sizeof(buf)), 0);
	assert_int_equal(queue_snapshot_write(q, emit, &w), 0);
	assert_int_equal(snap_writer_commit(&w), 0);
	snap_path(path, sizeof(path), sub, lsn);
	assert_int_equal(snap_load(path, load_entry, back, NULL, NULL), 0);
	assert_true(queue_snapshot_done(back));
	assert_int_equal(queue_check(back, NULL), 0);
	unlink(path);

	got = dump_at(q, now);
	same_dump(got, want, "background snapshot's state");
	free(got);
	got = dump_at(back, now);
	same_dump(got, want, "background snapshot's file");
	free(got);
	queue_free(back);
	queue_free(q);
}

/* Rebuilds through recover(), up to `upto` (0: everything). */
static struct queue *
rebuild(const char *dir, uint64_t upto, struct recover_result *res)
{
	struct queue *q = queue_new(NULL);

	assert_non_null(q);
	assert_int_equal(recover(dir, 0, upto, &queue_recover_ops, q, res), 0);
	assert_int_equal(queue_check(q, NULL), 0);
	return q;
}

/* Flips the byte `back` bytes before the end of `path`. */
static void
flip_byte(const char *path, long back)
{
	FILE *f = fopen(path, "r+b");
	int c;

	assert_non_null(f);
	assert_int_equal(fseek(f, -back, SEEK_END), 0);
	c = fgetc(f);
	assert_int_equal(fseek(f, -back, SEEK_END), 0);
	fputc(c ^ 0x40, f);
	assert_int_equal(fclose(f), 0);
}

/* The newest snapshot damaged near its end, after most of its entries
 * were loaded: recovery starts over from the one before and still ends
 * in the live state. */
static void
damaged_newest(const char *dir, const char *live, int64_t now)
{
	struct recover_result res;
	char path[700];
	uint64_t *lsns;
	struct queue *q;
	size_t n;
	char *got;

	assert_int_equal(snap_list(dir, &lsns, &n), 0);
	assert_true(n >= 2);
	snap_path(path, sizeof(path), dir, lsns[n - 1]);
	flip_byte(path, 64);
	q = rebuild(dir, 0, &res);
	assert_int_equal(res.snaps_skipped, 1);
	assert_int_equal(res.snap_lsn, lsns[n - 2]);
	got = dump_at(q, now);
	same_dump(got, live, "older snapshot + tail");
	free(got);
	queue_free(q);
	flip_byte(path, 64);
	free(lsns);
}

static void
run_history(void **state, uint64_t seed)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct wal_config wc = { 0 };
	struct recover_result res;
	struct hist h = { 0 };
	struct queue *q;
	char *live, *got;
	char logonly[600];
	char *live_snap = NULL; /* a dump */
	uint64_t live_lsn = 0;
	int64_t live_now = 0;

	h.rng = seed;
	h.now = 1700000000000;
	h.q = queue_new(NULL);
	buf_init(&h.body);
	wc.dir = dir;
	wc.fsync = WAL_FSYNC_NEVER;
	wc.seg_size = SEG_SIZE;
	assert_int_equal(wal_open(&wc, NULL, &h.wal), 0);

	for (int i = 1; i <= OPS_PER_SEED; i++) {
		h.now += (int64_t)t_below(&h.rng, 200);
		one_op(&h);
		if (i % 64 == 0)
			wal_submit(h.wal);
		if (i % (OPS_PER_SEED / LIVE_BUILDS) == LIVE_AHEAD &&
		    live_snap != NULL) {
			/* LIVE_AHEAD operations after the state noted */
			wal_submit(h.wal);
			live_rebuild_matches(
			    dir, live_lsn, live_now, live_snap);
			free(live_snap);
			live_snap = NULL;
		}
		if (i % (OPS_PER_SEED / LIVE_BUILDS) == 0 && i < OPS_PER_SEED) {
			/* The state the loop notes; the log goes on. */
			wal_submit(h.wal);
			assert_int_equal(wal_sync(h.wal, 10000), 0);
			live_lsn = wal_last_lsn(h.wal);
			live_now = h.now;
			live_snap = dump_at(h.q, h.now);
		}
		if (i % (OPS_PER_SEED / (SNAPSHOTS + 1)) == 0 &&
		    i < OPS_PER_SEED)
			snapshot(&h, dir);
		/* Checkpoints fall between snapshots, where the log has
		 * records already. */
		if (i % (OPS_PER_SEED / CHECKPOINTS) ==
		        OPS_PER_SEED / CHECKPOINTS / 3 &&
		    h.nchecks < CHECKPOINTS) {
			assert_int_equal(wal_sync(h.wal, 10000), 0);
			h.check_lsn[h.nchecks] = wal_last_lsn(h.wal);
			assert_true(h.check_lsn[h.nchecks] > 0);
			h.check_now[h.nchecks] = h.now;
			h.check_dump[h.nchecks++] = dump_at(h.q, h.now);
		}
	}
	free(live_snap); /* noted too late to be built */
	assert_int_equal(wal_sync(h.wal, 10000), 0);
	assert_int_equal(wal_close(h.wal), 0);
	live = dump_at(h.q, h.now);

	/* Snapshot + tail. */
	q = rebuild(dir, 0, &res);
	assert_true(res.snap_lsn > 0);
	got = dump_at(q, h.now);
	same_dump(got, live, "snapshot + tail");
	free(got);
	queue_free(q);
	damaged_newest(dir, live, h.now);

	/* Earlier states: recovering up to an LSN (from the newest snapshot
	 * at or below it) gives the live state of that moment. */
	for (int i = 0; i < h.nchecks; i++) {
		q = rebuild(dir, h.check_lsn[i], &res);
		got = dump_at(q, h.check_now[i]);
		same_dump(got, h.check_dump[i], "snapshot + tail up to an LSN");
		free(got);
		queue_free(q);
	}

	/* The log alone: move the snapshots away. */
	snprintf(logonly, sizeof(logonly), "%s/snaps", dir);
	assert_int_equal(mkdir(logonly, 0755), 0);
	{
		uint64_t *lsns;
		size_t n;

		assert_int_equal(snap_list(dir, &lsns, &n), 0);
		assert_int_equal(n, SNAPSHOTS);
		for (size_t i = 0; i < n; i++) {
			char from[700], to[700];

			snap_path(from, sizeof(from), dir, lsns[i]);
			snap_path(to, sizeof(to), logonly, lsns[i]);
			assert_int_equal(rename(from, to), 0);
		}
		free(lsns);
	}
	q = rebuild(dir, 0, &res);
	assert_int_equal(res.snap_lsn, 0);
	got = dump_at(q, h.now);
	same_dump(got, live, "log alone");
	free(got);
	queue_free(q);

	for (int i = 0; i < h.nchecks; i++) {
		q = rebuild(dir, h.check_lsn[i], &res);
		assert_int_equal(res.snap_lsn, 0);
		got = dump_at(q, h.check_now[i]);
		same_dump(got, h.check_dump[i], "log alone up to an LSN");
		free(got);
		queue_free(q);
		free(h.check_dump[i]);
	}
	free(live);
	buf_fini(&h.body);
	queue_free(h.q);
}

static void
test_replay_seed_1(void **state)
{
	run_history(state, t_seed(1));
}

static void
test_replay_seed_2(void **state)
{
	run_history(state, 0x5eed2);
}

static void
test_replay_seed_3(void **state)
{
	run_history(state, 0xdecafbad);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_replay_seed_1, t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_replay_seed_2, t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_replay_seed_3, t_tmpdir_setup, t_tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("replay", tests, NULL, NULL);
}
