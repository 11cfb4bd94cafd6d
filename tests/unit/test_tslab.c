/* Tests of the task slabs (src/queue/tslab.c): objects of every class are
 * 16-byte aligned and keep their bytes while others come and go (a random
 * run checked against a copy of what each holds); freed objects are
 * reused; objects over TSLAB_MAX come from malloc; a pool that grows past
 * the size where spares are faulted in ahead, then empties, gives its
 * memory back; during a load (tslab_expect) a class keeps several spares
 * ahead, which the worker faults in (the caller's thread takes no page
 * fault on them), and tslab_settle gives all but one back; a load whose
 * worker is behind does not wait for it; a load's slabs are small pages,
 * marked for huge ones once it settles; a large range is faulted in ahead
 * during a load (tslab_prefault). Under the sanitizers
 * (SLUICE_SANITIZED=1) the pool is malloc, so the byte counts are not
 * checked and the large run is smaller. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "queue/tslab.h"
#include "t_lib.h"

static bool
sanitized(void)
{
	const char *s = getenv("SLUICE_SANITIZED");

	return s != NULL && strcmp(s, "1") == 0;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct obj {
	uint8_t *p;
	size_t size;
	uint8_t fill;
};

static void
fill(struct obj *o)
{
	memset(o->p, o->fill, o->size);
}

static bool
intact(const struct obj *o)
{
	for (size_t i = 0; i < o->size; i++)
		if (o->p[i] != o->fill)
			return false;
	return true;
}

/* o[from..to) made objects of `size` bytes from `p`, each filled with
 * the byte of its index (i & 0xff). */
static void
alloc_marked(
    struct tslab_pool *p, void **o, size_t from, size_t to, size_t size)
{
	for (size_t i = from; i < to; i++) {
		o[i] = tslab_alloc(p, size);
		assert_non_null(o[i]);
		memset(o[i], (int)(i & 0xff), size);
	}
}

/* Each of o[0..n) (alloc_marked's) still holds its byte at both ends;
 * then freed. */
static void
free_marked(struct tslab_pool *p, void **o, size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(((uint8_t *)o[i])[0], (uint8_t)(i & 0xff));
		assert_int_equal(
		    ((uint8_t *)o[i])[size - 1], (uint8_t)(i & 0xff));
		tslab_free(p, o[i], size);
	}
}

/* Settled, the pool keeps at most one spare a class. */
static void
settle_to_one_spare(struct tslab_pool *p)
{
	tslab_settle(p);
	for (int i = 0; i < TSLAB_CLASSES; i++)
		assert_true(p->nspare[i] <= 1);
}

/* 200,000 random allocations and frees of sizes in every class (and a
 * few over TSLAB_MAX), each object filled with its own byte and checked
 * whole when it is freed and at the end. */
static void
test_objects_keep_their_bytes(void **state)
{
	enum { LIVE = 4096, STEPS = 200000 };
	struct obj *live = calloc(LIVE, sizeof(*live));
	struct tslab_pool p;

	(void)state;
	assert_non_null(live);
	tslab_init(&p);
	for (int step = 0; step < STEPS; step++) {
		struct obj *o = &live[rnd() % LIVE];

		if (o->p != NULL) {
			assert_true(intact(o));
			tslab_free(&p, o->p, o->size);
			o->p = NULL;
			continue;
		}
		o->size = rnd() % 50 == 0 ? TSLAB_MAX + 1 + rnd() % 5000
		                          : 1 + rnd() % TSLAB_MAX;
		o->fill = (uint8_t)(1 + rnd() % 255);
		o->p = tslab_alloc(&p, o->size);
		assert_non_null(o->p);
		assert_int_equal((uintptr_t)o->p % TSLAB_ALIGN, 0);
		fill(o);
	}
	for (int i = 0; i < LIVE; i++) {
		if (live[i].p == NULL)
			continue;
		assert_true(intact(&live[i]));
		tslab_free(&p, live[i].p, live[i].size);
	}
	/* Emptied: one kept slab per class that was used, 16 KiB each. */
	if (!sanitized())
		assert_true(p.touched <= (size_t)TSLAB_CLASSES * (16u << 10));
	tslab_fini(&p);
	assert_int_equal(p.touched, 0);
	free(live);
}

/* An object freed is the next one of its class handed out. */
static void
test_freed_objects_are_reused(void **state)
{
	struct tslab_pool p;
	void *a, *b, *c;

	(void)state;
	if (sanitized())
		skip();
	tslab_init(&p);
	a = tslab_alloc(&p, 100);
	b = tslab_alloc(&p, 100);
	assert_ptr_not_equal(a, b);
	tslab_free(&p, a, 100);
	c = tslab_alloc(&p, 112); /* the same class: 97 to 112 bytes */
	assert_ptr_equal(c, a);
	tslab_free(&p, b, 100);
	tslab_free(&p, c, 112);
	tslab_fini(&p);
}

/* A class past 64 slabs (128 MiB) has a spare faulted in ahead; once
 * every object is freed the slabs and the spare go, and the process-wide
 * count is back where it was. */
static void
test_a_large_pool_gives_its_memory_back(void **state)
{
	enum { SIZE = 176 };
	size_t n = sanitized() ? 20000 : (size_t)(150u << 20) / SIZE;
	void **o = malloc(n * sizeof(*o));
	size_t before = tslab_bytes(), full;
	struct tslab_pool p;

	(void)state;
	assert_non_null(o);
	tslab_init(&p);
	alloc_marked(&p, o, 0, n, SIZE);
	full = tslab_bytes() - before;
	fprintf(stderr,
	    "%zu objects of %d bytes: %zu bytes of slabs (%.2f a byte)\n", n,
	    SIZE, full, (double)full / (double)(n * SIZE));
	if (!sanitized()) {
		int spares = 0;

		for (int i = 0; i < TSLAB_CLASSES; i++)
			spares += p.nspare[i];
		assert_int_equal(spares, 1); /* the next slab, ahead */
		/* The objects, the slabs' headers and at most one spare. */
		assert_true(full >= n * SIZE);
		assert_true(full <= n * SIZE + (n * SIZE) / 100 + (4u << 20));
	}
	free_marked(&p, o, n, SIZE);
	if (!sanitized())
		assert_true(tslab_bytes() - before <= (16u << 10));
	tslab_fini(&p);
	assert_int_equal(tslab_bytes(), before);
	free(o);
}

/* Are all of the 2 MiB at s in memory? */
static bool
resident(const void *s)
{
	static unsigned char v[(2u << 20) / 4096];

	if (mincore((void *)s, 2u << 20, v) != 0)
		return false;
	for (size_t i = 0; i < sizeof(v); i++)
		if (!(v[i] & 1))
			return false;
	return true;
}

static long
thread_faults(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_THREAD, &ru), 0);
	return ru.ru_minflt + ru.ru_majflt;
}

/* A load of many objects keeps up to TSLAB_AHEAD_LOAD spares ahead; the
 * worker faults them in, so the thread that allocates takes no page
 * fault when it moves into one and asks for the next (the slab's header
 * was once written as the spare was made, which faulted its huge page
 * in on the caller's thread and left the worker nothing to do); settling
 * keeps one spare a class, and everything goes back at the end. */
static void
test_a_load_keeps_spares_ahead_faulted_in_by_the_worker(void **state)
{
	enum { SIZE = 176, CLS = (SIZE - 1) / TSLAB_ALIGN };
	size_t per = (size_t)(2u << 20) / SIZE;
	size_t n = sanitized() ? 20000 : 12 * per, extra = per + 1;
	void **o = calloc(n + extra, sizeof(*o));
	size_t before = tslab_bytes();
	struct tslab_pool p;
	long f0;

	(void)state;
	assert_non_null(o);
	memset(o, 0, (n + extra) * sizeof(*o));
	tslab_init(&p);
	tslab_expect(&p, TSLAB_EXPECT_MANY);
	alloc_marked(&p, o, 0, n, SIZE);
	if (!sanitized()) {
		struct timespec t0, t;
		int left;

		assert_int_equal(p.nspare[CLS], TSLAB_AHEAD_LOAD);
		/* The worker maps them and faults them in. Bounded wait. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			left = 0;
			for (int i = 0; i < TSLAB_AHEAD_LOAD; i++) {
				/* written by the worker */
				struct tslab *v = __atomic_load_n(
				    &p.spare[CLS][i], __ATOMIC_ACQUIRE);

				left += v == NULL || !resident(v);
			}
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (left)
				usleep(1000);
		} while (left && t.tv_sec - t0.tv_sec < 30);
		assert_int_equal(left, 0);
		for (int i = 0; i < TSLAB_AHEAD_LOAD; i++)
			assert_true(resident(p.spare[CLS][i]));
	}
	f0 = thread_faults();
	alloc_marked(&p, o, n, n + extra, SIZE);
	if (!sanitized()) {
		assert_int_equal(thread_faults() - f0, 0);
		assert_int_equal(p.nspare[CLS], TSLAB_AHEAD_LOAD);
	}
	settle_to_one_spare(&p);
	if (!sanitized())
		assert_true(tslab_bytes() - before <=
		    (n + extra) * SIZE + (n + extra) * SIZE / 100 + (6u << 20));
	free_marked(&p, o, n + extra, SIZE);
	tslab_fini(&p);
	assert_int_equal(tslab_bytes(), before);
	free(o);
}

/* A load whose worker is behind (held: a host slow to back memory) does
 * not wait for it: the caller maps and faults its own slabs, its objects
 * keep their bytes, the spares it asked for stay queued, settling takes
 * back those the worker has not started, and the pool ends with nothing
 * held, all while the worker does nothing. Before, the caller waited for
 * the oldest spare: with the worker held it never returned (the alarm
 * below ends the test then). */
static void
test_a_load_does_not_wait_for_a_worker_behind(void **state)
{
	enum { SIZE = 176, CLS = (SIZE - 1) / TSLAB_ALIGN };
	size_t per = (size_t)(2u << 20) / SIZE;
	size_t n = sanitized() ? 20000 : 12 * per;
	void **o = calloc(n, sizeof(*o));
	size_t before = tslab_bytes();
	struct tslab_pool p;
	long f0;

	(void)state;
	assert_non_null(o);
	alarm(120);
	tslab_fill_hold(true);
	tslab_init(&p);
	tslab_expect(&p, TSLAB_EXPECT_MANY);
	f0 = thread_faults();
	alloc_marked(&p, o, 0, n, SIZE);
	if (!sanitized()) {
		/* Asked for, never made: the caller faulted its own. */
		assert_int_equal(p.nspare[CLS], TSLAB_AHEAD_LOAD);
		for (int i = 0; i < TSLAB_AHEAD_LOAD; i++)
			assert_null(p.spare[CLS][i]);
		assert_true(thread_faults() - f0 >= 12);
	}
	settle_to_one_spare(&p);
	free_marked(&p, o, n, SIZE);
	tslab_fini(&p);
	assert_int_equal(tslab_bytes(), before);
	tslab_fill_hold(false);
	alarm(0);
	free(o);
}

/* Does the mapping that holds `addr` carry VmFlag `flag` ("hg": huge
 * pages asked for, MADV_HUGEPAGE), as /proc/self/smaps says? */
static bool
vma_has(const void *addr, const char *flag)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t a = (uintptr_t)addr;
	bool in = false, has = false;
	char line[512];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;

		/* A mapping's first line starts with its range in lower-case
		 * hex; its fields ("Rss:", "VmFlags:") with a capital. */
		if (!isupper((unsigned char)line[0]) &&
		    sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			char needle[8];

			snprintf(needle, sizeof(needle), " %s", flag);
			has = strstr(line + 8, needle) != NULL;
			break;
		}
	}
	fclose(f);
	return has;
}

/* On a VM that gives free memory back to its host (tslab_load_small: a
 * virtio-balloon device with free page reporting, as on the machine
 * these figures come from), a load's slabs are mapped in small pages: a
 * huge page comes from free memory the guest gave back, which the host
 * backs again at each fault, at times several times slower than small
 * pages from what the guest still holds. Once the load settles, they are
 * marked for huge pages (khugepaged gathers them later), and slabs made
 * after it are huge from the start. Elsewhere a load's slabs are huge
 * from the start too. Objects keep their bytes throughout. */
static void
test_a_load_maps_small_pages_and_marks_them_huge_once_settled(void **state)
{
	enum { SIZE = 176 };
	size_t per = (size_t)(2u << 20) / SIZE;
	size_t n = 6 * per, more = 3 * per;
	void **o = calloc(n + more, sizeof(*o));
	size_t before = tslab_bytes();
	struct tslab_pool p;

	(void)state;
	assert_non_null(o);
	tslab_init(&p);
	tslab_expect(&p, TSLAB_EXPECT_MANY);
	alloc_marked(&p, o, 0, n, SIZE);
	/* The second slab on would have been huge outside a load. Under
	 * the sanitizers the pool is malloc: no slab to look at. */
	for (size_t i = per + 1; i < n && !sanitized(); i += per)
		assert_true(vma_has(o[i], "hg") == !tslab_load_small());
	tslab_settle(&p);
	for (size_t i = per + 1; i < n && !sanitized(); i += per)
		assert_true(vma_has(o[i], "hg"));
	alloc_marked(&p, o, n, n + more, SIZE);
	for (size_t i = n; i < n + more && !sanitized(); i += per / 2)
		assert_true(vma_has(o[i], "hg"));
	free_marked(&p, o, n + more, SIZE);
	tslab_fini(&p);
	assert_int_equal(tslab_bytes(), before);
	free(o);
}

/* During a load, tslab_prefault has the worker fault in a large range
 * ahead of its first touch (a heap's array): its pages become resident
 * without the caller touching them, and what the range held before is
 * kept. Under the sanitizers there is no worker: nothing is checked but
 * the bytes. */
static void
test_a_load_has_a_large_range_faulted_in_ahead(void **state)
{
	size_t len = 8u << 20;
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct tslab_pool p;
	struct timespec t0, t;
	bool all = false;

	(void)state;
	assert_true(m != MAP_FAILED);
	madvise(m, len, MADV_NOHUGEPAGE); /* page by page, below */
	memset(m, 0x5a, 4096);            /* its first page holds something */
	tslab_init(&p);
	tslab_expect(&p, TSLAB_EXPECT_MANY);
	tslab_prefault(&p, m, len);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!sanitized()) { /* bounded: 30 s */
		static unsigned char v[(8u << 20) / 4096];

		assert_int_equal(mincore(m, len, v), 0);
		all = true;
		for (size_t i = 0; i < sizeof(v); i++)
			all = all && (v[i] & 1);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (all || t.tv_sec - t0.tv_sec >= 30)
			break;
		usleep(1000);
	}
	if (!sanitized())
		assert_true(all);
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(m[i], 0x5a);
	for (size_t i = 4096; i < len; i += 4096)
		assert_int_equal(m[i], 0);
	tslab_settle(&p);
	tslab_fini(&p);
	munmap(m, len);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_objects_keep_their_bytes),
		cmocka_unit_test(test_freed_objects_are_reused),
		cmocka_unit_test(test_a_large_pool_gives_its_memory_back),
		cmocka_unit_test(
		    test_a_load_keeps_spares_ahead_faulted_in_by_the_worker),
		cmocka_unit_test(test_a_load_does_not_wait_for_a_worker_behind),
		cmocka_unit_test(
		    test_a_load_maps_small_pages_and_marks_them_huge_once_settled),
		cmocka_unit_test(
		    test_a_load_has_a_large_range_faulted_in_ahead),
	};

	return cmocka_run_group_tests_name("tslab", tests, NULL, NULL);
}
