/* Snapshot files: what is written is read back entry for entry; any damage
 * is found and located; only complete snapshots carry a final name. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/snap.h"
#include "sluice.h"
#include "t_lib.h"
#include "util/fsutil.h"

enum { BUF_CAP = 4096, BIG = 100000 };

struct seen {
	int n;
	uint16_t types[64];
	size_t lens[64];
	uint64_t sum;
};

static int
collect(void *arg, uint16_t type, const void *data, size_t len)
{
	struct seen *s = arg;
	const uint8_t *p = data;

	if (s->n < 64) {
		s->types[s->n] = type;
		s->lens[s->n] = len;
	}
	s->n++;
	for (size_t i = 0; i < len; i++)
		s->sum = s->sum * 31 + p[i];
	return 0;
}

/* Writes entries of assorted sizes (one larger than the buffer) at lsn. */
static uint64_t
write_sample(const char *dir, uint64_t lsn)
{
	static uint8_t big[BIG];
	static uint8_t buf[BUF_CAP];
	struct snap_writer w;
	uint64_t sum = 0;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	assert_int_equal(
	    snap_writer_open(&w, dir, lsn, 3, 1700000000000, buf, sizeof(buf)),
	    0);
	assert_int_equal(snap_writer_add(&w, 1, "meta", 4, NULL, 0), 0);
	assert_int_equal(snap_writer_add(&w, 2, "abc", 3, "defgh", 5), 0);
	assert_int_equal(snap_writer_add(&w, 3, NULL, 0, NULL, 0), 0);
	assert_int_equal(snap_writer_add(&w, 2, "hdr", 3, big, sizeof(big)), 0);
	assert_int_equal(snap_writer_commit(&w), 0);
	(void)sum;
	return lsn;
}

static void
test_snapshot_round_trips_every_entry(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct snap_info info;
	struct seen s = { 0 };
	char path[512];

	write_sample(dir, 42);
	snap_path(path, sizeof(path), dir, 42);
	assert_int_equal(snap_load(path, collect, &s, &info, NULL), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.types[0], 1);
	assert_int_equal(s.lens[0], 4);
	assert_int_equal(s.types[1], 2);
	assert_int_equal(s.lens[1], 8);
	assert_int_equal(s.lens[2], 0);
	assert_int_equal(s.lens[3], 3 + BIG);
	assert_int_equal(info.lsn, 42);
	assert_int_equal(info.epoch, 3);
	assert_true(info.time == 1700000000000);
	assert_int_equal(info.entries, 4);
	assert_int_equal(info.bytes, t_file_size(path));
	/* No temporary file is left behind. */
	assert_int_equal(
	    access(
	        t_path(*state, "00000000000000000042.snap.inprogress"), F_OK),
	    -1);
}

/* A flipped bit anywhere in the file is found, and located at or before
 * the damaged byte. */
static void
test_every_flipped_byte_is_found(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	uint8_t *data;
	size_t len;
	char path[512];

	write_sample(dir, 7);
	snap_path(path, sizeof(path), dir, 7);
	assert_int_equal(fs_read_all(path, &data, &len), 0);
	for (size_t i = 0; i < len; i += (i < 200 ? 1 : 997)) {
		struct snap_info info;
		uint64_t bad = 0;

		data[i] ^= 0x10;
		assert_int_equal(snap_parse(data, len, NULL, NULL, &info, &bad),
		    SLUICE_ECORRUPT);
		assert_true(bad <= i);
		data[i] ^= 0x10;
	}
	free(data);
}

/* A snapshot cut short at any length is refused. */
static void
test_a_truncated_snapshot_is_refused(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	struct snap_info info;
	uint8_t *data;
	size_t len;
	char path[512];
	uint64_t bad;

	write_sample(dir, 9);
	snap_path(path, sizeof(path), dir, 9);
	assert_int_equal(fs_read_all(path, &data, &len), 0);
	assert_int_equal(snap_parse(data, len, NULL, NULL, &info, &bad), 0);
	for (size_t cut = 0; cut < len; cut += (cut < 300 ? 1 : 1013))
		assert_int_equal(snap_parse(data, cut, NULL, NULL, &info, &bad),
		    SLUICE_ECORRUPT);
	free(data);
}

/* An aborted writer leaves nothing; only committed snapshots are listed,
 * in order; remove_before keeps the newest. */
static void
test_list_and_remove_see_only_complete_snapshots(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	static uint8_t buf[BUF_CAP];
	struct snap_writer w;
	uint64_t *lsns;
	size_t n;

	write_sample(dir, 300);
	write_sample(dir, 20);
	write_sample(dir, 1000);
	assert_int_equal(
	    snap_writer_open(&w, dir, 2000, 1, 0, buf, BUF_CAP), 0);
	assert_int_equal(snap_writer_add(&w, 1, "x", 1, NULL, 0), 0);
	snap_writer_abort(&w);

	assert_int_equal(snap_list(dir, &lsns, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(lsns[0], 20);
	assert_int_equal(lsns[1], 300);
	assert_int_equal(lsns[2], 1000);
	free(lsns);

	assert_int_equal(snap_remove_before(dir, 1000), 0);
	assert_int_equal(snap_list(dir, &lsns, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(lsns[0], 1000);
	free(lsns);
}

/* A finished but unpublished snapshot is invisible until published. */
static void
test_a_finished_snapshot_appears_only_when_published(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	static uint8_t buf[BUF_CAP];
	struct snap_writer w;
	struct snap_info info;
	uint64_t *lsns;
	size_t n;
	char path[512];

	assert_int_equal(snap_writer_open(&w, dir, 77, 2, 5, buf, BUF_CAP), 0);
	assert_int_equal(snap_writer_add(&w, 4, "task", 4, "body", 4), 0);
	assert_int_equal(snap_writer_finish(&w), 0);
	assert_int_equal(snap_list(dir, &lsns, &n), 0);
	assert_int_equal(n, 0);
	free(lsns);
	assert_int_equal(snap_publish(dir, 77), 0);
	snap_path(path, sizeof(path), dir, 77);
	assert_int_equal(snap_load(path, NULL, NULL, &info, NULL), 0);
	assert_int_equal(info.entries, 1);
	assert_int_equal(snap_publish(dir, 78), -ENOENT);
}

/* A visitor's error stops the load and is returned as it is. */
static int
stop_at_second(void *arg, uint16_t type, const void *data, size_t len)
{
	int *n = arg;

	(void)type;
	(void)data;
	(void)len;
	return ++*n == 2 ? SLUICE_EINVAL : 0;
}

static void
test_a_visitor_error_stops_the_load(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	char path[512];
	int n = 0;

	write_sample(dir, 5);
	snap_path(path, sizeof(path), dir, 5);
	assert_int_equal(
	    snap_load(path, stop_at_second, &n, NULL, NULL), SLUICE_EINVAL);
	assert_int_equal(n, 2);
	assert_int_equal(
	    snap_load(t_path(*state, "none.snap"), NULL, NULL, NULL, NULL),
	    -ENOENT);
}

/* Replaces the file at path with len bytes of data. */
static void
put_file(const char *path, const uint8_t *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_true(write(fd, data, len) == (ssize_t)len);
	close(fd);
}

/* snap_load and snap_parse on the file's bytes: the same answer, the
 * same offset of damage and, when sound, the same entries. */
static void
same_answer(const char *path, const uint8_t *data, size_t len)
{
	struct seen a = { 0 }, b = { 0 };
	struct snap_info ia, ib;
	uint64_t bad_a = 0, bad_b = 0;
	int rc;

	put_file(path, data, len);
	rc = snap_load(path, collect, &a, &ia, &bad_a);
	assert_int_equal(rc, snap_parse(data, len, collect, &b, &ib, &bad_b));
	if (rc == SLUICE_ECORRUPT)
		assert_true(bad_a == bad_b);
	assert_int_equal(a.n, b.n);
	assert_true(a.sum == b.sum);
}

/* A snapshot larger than the buffer snap_load reads it through (4 MiB),
 * with an entry larger than that buffer and entries across each of its
 * ends: read back as parsed from memory, damage found at the same
 * offset wherever it is, and a file cut anywhere refused alike. */
static void
test_a_snapshot_read_in_pieces_is_read_whole(void **state)
{
	const char *dir = ((struct t_dir *)*state)->path;
	enum { HUGE = 9u << 20, ENTRIES = 400 };
	static uint8_t buf[BUF_CAP];
	uint8_t *big = malloc(HUGE), *data;
	struct snap_writer w;
	struct seen s = { 0 };
	struct snap_info info;
	size_t len,
	    cuts[] = { 0, 63, 64, 65, 79, 80, 4u << 20, (4u << 20) + 5,
		    (8u << 20) - 3, 10u << 20 };
	char path[512];

	assert_non_null(big);
	for (size_t i = 0; i < HUGE; i++)
		big[i] = (uint8_t)(i * 13 + i / 4096);
	assert_int_equal(
	    snap_writer_open(&w, dir, 11, 1, 1700000000000, buf, sizeof(buf)),
	    0);
	for (int i = 0; i < ENTRIES; i++) {
		size_t n = (size_t)(i * 7919 % 40000) + (size_t)(i % 3);

		assert_int_equal(snap_writer_add(&w, (uint16_t)(1 + i % 9), "e",
		                     1, big + i, n),
		    0);
		if (i == ENTRIES / 2)
			assert_int_equal(
			    snap_writer_add(&w, 2, NULL, 0, big, HUGE), 0);
	}
	assert_int_equal(snap_writer_commit(&w), 0);
	snap_path(path, sizeof(path), dir, 11);
	assert_int_equal(snap_load(path, collect, &s, &info, NULL), 0);
	assert_int_equal(s.n, ENTRIES + 1);
	assert_int_equal(info.entries, ENTRIES + 1);
	assert_int_equal(fs_read_all(path, &data, &len), 0);
	assert_true(len > 3 * (4u << 20));
	same_answer(path, data, len);

	/* a flipped byte, at 61 places over the file and at the buffer's
	 * ends */
	for (size_t k = 0; k <= 60 + 4; k++) {
		size_t at =
		    k <= 60 ? len / 61 * k + k : (4u << 20) * (k - 60) - 1;

		if (at >= len)
			continue;
		data[at] ^= 0x20;
		same_answer(path, data, len);
		data[at] ^= 0x20;
	}
	/* cut short */
	for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++)
		same_answer(path, data, cuts[k] < len ? cuts[k] : len - 1);
	same_answer(path, data, len - 8);
	free(data);
	free(big);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_snapshot_round_trips_every_entry, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_every_flipped_byte_is_found, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_truncated_snapshot_is_refused, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_list_and_remove_see_only_complete_snapshots,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_finished_snapshot_appears_only_when_published,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_visitor_error_stops_the_load, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_snapshot_read_in_pieces_is_read_whole,
		    t_tmpdir_setup, t_tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("snap", tests, NULL, NULL);
}
