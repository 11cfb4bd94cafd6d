/* The tasks by id (src/queue/tidx.c): dense increasing ids land in
 * chunks, one after the other, with nothing in the hash table; every id
 * is found, removed and swapped wherever it lies, under random orders,
 * gaps, jumps and removals checked against a plain model; a chunk left
 * sparse behind the newest ids goes to the table; the directory's span
 * stays bounded by what it holds when one old task stays while millions
 * of ids go by; ids far above the directory start it again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/tidx.h"
#include "t_lib.h"

struct item {
	uint64_t id;
	uint64_t pad; /* malloc's alignment, as for tasks */
};

static uint64_t
key_of(const void *p)
{
	return ((const struct item *)p)->id;
}

/* Every invariant tidx.c states, from the outside. */
static void
check(const struct tidx *x)
{
	uint64_t inchunks = 0, visited = 0;
	uint32_t nchunks = 0;

	for (uint32_t k = 0; k < x->ndir; k++) {
		const struct tidx_ent *e = &x->dir[x->off + k];
		uint32_t live = 0;

		if (e->slot == NULL)
			continue;
		nchunks++;
		for (uint32_t i = 0; i < TIDX_CHUNK; i++) {
			const struct item *it = e->slot[i];

			if (it == NULL)
				continue;
			live++;
			assert_true(it->id >> TIDX_CHUNK_BITS == x->base + k);
			assert_true((it->id & (TIDX_CHUNK - 1)) == i);
		}
		assert_int_equal(live, e->live);
		assert_true(live > 0);
		inchunks += live;
	}
	if (x->ndir > 0) {
		assert_non_null(x->dir[x->off].slot);
		assert_non_null(x->dir[x->off + x->ndir - 1].slot);
	}
	assert_int_equal(nchunks, x->nchunks);
	assert_int_equal(inchunks, x->inchunks);
	assert_int_equal(inchunks + x->hash.len, x->len);
	for (uint64_t i = 0; i < tidx_slots(x); i++)
		visited += tidx_at(x, i) != NULL;
	assert_int_equal(visited, x->len);
}

static void
put(struct tidx *x, struct item *it)
{
	assert_int_equal(tidx_reserve(x, 1), 0);
	assert_null(tidx_find(x, it->id));
	tidx_insert(x, it);
}

static void
test_dense_ids_land_in_chunks_one_after_the_other(void **state)
{
	enum { N = 100000 };
	struct item *v = calloc(N, sizeof(*v));
	struct tidx x;

	(void)state;
	tidx_init(&x, key_of);
	for (uint64_t i = 0; i < N; i++) {
		v[i].id = i + 1;
		put(&x, &v[i]);
	}
	check(&x);
	assert_int_equal(x.hash.len, 0);
	assert_int_equal(x.inchunks, N);
	assert_int_equal(x.nchunks, N / TIDX_CHUNK + 1);
	/* consecutive ids in consecutive memory */
	for (uint64_t i = 1; i < N; i++) {
		struct tidx_ent *e =
		    &x.dir[x.off + (v[i].id >> TIDX_CHUNK_BITS) - x.base];

		assert_ptr_equal(e->slot[v[i].id & (TIDX_CHUNK - 1)], &v[i]);
		assert_ptr_equal(tidx_find(&x, v[i].id), &v[i]);
	}
	assert_null(tidx_find(&x, 0));
	assert_null(tidx_find(&x, N + 1));
	assert_null(tidx_find(&x, UINT64_MAX));
	/* removed in id order (a drain), the chunks go as they empty */
	for (uint64_t i = 0; i < N; i++) {
		tidx_remove(&x, &v[i]);
		assert_null(tidx_find(&x, v[i].id));
		if (i % 9973 == 0)
			check(&x);
	}
	check(&x);
	assert_int_equal(x.len, 0);
	assert_int_equal(x.nchunks, 0);
	tidx_fini(&x);
	free(v);
}

/* Random inserts, removals and swaps against a model (present[i]: item i
 * is in), with ids of several shapes. */
static void
churn(uint64_t (*id_of)(uint64_t i, uint64_t *seed), uint64_t n, uint64_t seed)
{
	struct item *v = calloc(n, sizeof(*v));
	struct item *w = calloc(n, sizeof(*w)); /* swapped copies */
	bool *present = calloc(n, sizeof(*present));
	struct item **cur = calloc(n, sizeof(*cur));
	uint64_t *alive =
	    calloc(n, sizeof(*alive)); /* the present, any order */
	struct tidx x;
	uint64_t next = 0, live = 0;

	tidx_init(&x, key_of);
	for (uint64_t i = 0; i < n; i++) {
		v[i].id = id_of(i, &seed);
		w[i].id = v[i].id;
	}
	for (uint64_t step = 0; step < 4 * n; step++) {
		uint64_t r = t_rand(&seed);

		if (next < n && r % 3 != 0) {
			cur[next] = &v[next];
			put(&x, &v[next]);
			present[next] = true;
			alive[live++] = next++;
		} else if (live > 0) {
			uint64_t at = t_rand(&seed) % live, i = alive[at];

			if (r % 7 == 0) {
				struct item *o = cur[i];

				cur[i] = o == &v[i] ? &w[i] : &v[i];
				tidx_swap(&x, o, cur[i]);
			} else {
				tidx_remove(&x, cur[i]);
				present[i] = false;
				alive[at] = alive[--live];
			}
		}
		if (step % (n / 4 + 1) == 0)
			check(&x);
	}
	check(&x);
	assert_int_equal(x.len, live);
	for (uint64_t i = 0; i < n; i++)
		assert_ptr_equal(
		    tidx_find(&x, v[i].id), present[i] ? cur[i] : NULL);
	tidx_fini(&x);
	free(v);
	free(w);
	free(present);
	free(cur);
	free(alive);
}

static uint64_t
dense(uint64_t i, uint64_t *seed)
{
	(void)seed;
	return i + 1;
}

static uint64_t
gaps(uint64_t i, uint64_t *seed)
{
	static uint64_t last;

	if (i == 0)
		last = 0;
	last += 1 + t_rand(seed) % (t_rand(seed) % 50 == 0 ? 40000 : 3);
	return last;
}

static uint64_t
shuffled(uint64_t i, uint64_t *seed)
{
	/* dense ids, but inserted out of order in windows of 2,000 */
	uint64_t w = i / 2000, k = i % 2000;

	(void)seed;
	return w * 2000 + (k * 1237) % 2000 + 1;
}

static uint64_t
hashed(uint64_t i, uint64_t *seed)
{
	(void)seed;
	return idx_mix(i + 1) | 1; /* all over the range */
}

static uint64_t
jumps(uint64_t i, uint64_t *seed)
{
	(void)seed;
	/* runs of 3,000 dense ids, each a long way above the last */
	return (i / 3000) * (UINT64_C(1) << 40) + i % 3000 + 1;
}

static void
test_every_id_is_found_whatever_its_shape(void **state)
{
	(void)state;
	churn(dense, 60000, t_seed(1));
	churn(gaps, 60000, t_seed(2));
	churn(shuffled, 60000, t_seed(3));
	churn(hashed, 60000, t_seed(4));
	churn(jumps, 60000, t_seed(5));
}

/* One task in 16 kept once the ids have passed: those chunks would cost
 * 128 bytes a task; their tasks go to the table. */
static void
test_a_sparse_chunk_behind_the_ids_goes_to_the_table(void **state)
{
	enum { N = TIDX_CHUNK * 64 };
	struct item *v = calloc(N, sizeof(*v));
	struct tidx x;

	(void)state;
	tidx_init(&x, key_of);
	for (uint64_t i = 0; i < N; i++) {
		v[i].id = i + 1;
		put(&x, &v[i]);
	}
	for (uint64_t i = 0; i < N; i++)
		if (i % 16 != 0)
			tidx_remove(&x, &v[i]);
	check(&x);
	assert_int_equal(x.len, N / 16);
	assert_true(x.nchunks <= 8 + 1);
	for (uint64_t i = 0; i < N; i++)
		assert_ptr_equal(tidx_find(&x, v[i].id), i % 16 ? NULL : &v[i]);
	tidx_fini(&x);
	free(v);
}

/* An old task stays while 5 M ids go by (put, then removed): the
 * directory does not span them all, and the old task is still found. */
static void
test_the_directory_is_bounded_by_what_it_holds(void **state)
{
	enum { LIVE = 100, IDS = 5000000 };
	struct item old = { 1, 0 };
	struct item *ring = calloc(LIVE, sizeof(*ring));
	struct tidx x;
	uint32_t most = 0;

	(void)state;
	tidx_init(&x, key_of);
	put(&x, &old);
	for (uint64_t id = 2; id < IDS; id++) {
		struct item *it = &ring[id % LIVE];

		if (id >= 2 + LIVE)
			tidx_remove(&x, it);
		it->id = id;
		put(&x, it);
		if (x.ndir > most)
			most = x.ndir;
	}
	check(&x);
	assert_true(most <= 1024 + 16 + 1);
	assert_ptr_equal(tidx_find(&x, 1), &old);
	assert_int_equal(x.len, LIVE + 1);
	tidx_fini(&x);
	free(ring);
}

/* A few ids low, then a dense run far above (a snapshot of old buried
 * tasks and a new load): the run ends up in chunks. */
static void
test_ids_far_above_start_the_directory_again(void **state)
{
	enum { OLD = 1000, NEW = 200000 };
	struct item *v = calloc(OLD + NEW, sizeof(*v));
	struct tidx x;

	(void)state;
	tidx_init(&x, key_of);
	for (uint64_t i = 0; i < OLD; i++) {
		v[i].id = 1 + i * 7;
		put(&x, &v[i]);
	}
	for (uint64_t i = 0; i < NEW; i++) {
		v[OLD + i].id = UINT64_C(1) << 33 | i;
		put(&x, &v[OLD + i]);
	}
	check(&x);
	assert_true(x.inchunks >= NEW - 2 * OLD - TIDX_CHUNK);
	for (uint64_t i = 0; i < OLD + NEW; i++)
		assert_ptr_equal(tidx_find(&x, v[i].id), &v[i]);
	tidx_fini(&x);
	free(v);
}

/* The longest run of full slots in a table: spread, a few hundred at
 * most at 3/4 full; piled up, the items put since the table last grew
 * lie in one run (tens of thousands), each insert probing all of it. */
static uint64_t
longest_run(const struct idx *t)
{
	uint64_t most = 0, run = 0;

	for (uint32_t i = 0; i < t->cap; i++) {
		run = idx_at(t, i) != NULL ? run + 1 : 0;
		most = run > most ? run : most;
	}
	return most;
}

/* Tasks loaded in the order another index lists them (a snapshot written
 * from a table), one by one, each with only the room for itself
 * reserved: the tables' seeds differ, so that order is random to the
 * loading table and its runs stay short. Ids all over the range, so
 * that all of them go to the table. */
static void
test_a_table_filled_in_another_tables_order_stays_fast(void **state)
{
	enum { N = 400000 };
	struct item *v = calloc(N, sizeof(*v));
	struct tidx a, b;
	uint64_t n = 0;

	(void)state;
	tidx_init(&a, key_of);
	tidx_init(&b, key_of);
	for (uint64_t i = 0; i < N; i++) {
		v[i].id = idx_mix(i + 1) | 1;
		put(&a, &v[i]);
	}
	assert_true(a.hash.len >= N - 2); /* the directory may hold one */
	assert_int_not_equal(a.hash.seed, b.hash.seed);
	for (uint64_t i = 0; i < tidx_slots(&a); i++) {
		struct item *it = tidx_at(&a, i);

		if (it == NULL)
			continue;
		assert_int_equal(tidx_reserve(&b, 1), 0);
		tidx_insert(&b, it);
		if (++n % 10000 == 0)
			assert_true(longest_run(&b.hash) < 2000);
	}
	assert_int_equal(n, N);
	for (uint64_t i = 0; i < N; i += 97)
		assert_ptr_equal(tidx_find(&b, v[i].id), &v[i]);
	tidx_fini(&a);
	tidx_fini(&b);
	free(v);
}

/* A load announced (tidx_expect) whose dense ids come in no order (a
 * snapshot written from a hash table): chunks are made below and above
 * the first, and they end up holding the tasks. */
static void
test_an_announced_load_in_no_order_fills_chunks(void **state)
{
	enum { N = 200000 };
	struct item *v = calloc(N, sizeof(*v));
	struct tidx x;

	(void)state;
	tidx_init(&x, key_of);
	tidx_expect(&x, N);
	for (uint64_t i = 0; i < N; i++) {
		/* a bijection of 0 .. N-1 that jumps all over */
		v[i].id = (i * 7919) % N + 1000;
		put(&x, &v[i]);
		if (i % 50000 == 0)
			check(&x);
	}
	tidx_expect(&x, 0);
	check(&x);
	assert_true(x.inchunks >= N - N / 20);
	assert_true(x.ndir <= N / TIDX_CHUNK + 2);
	for (uint64_t i = 0; i < N; i++)
		assert_ptr_equal(tidx_find(&x, v[i].id), &v[i]);
	for (uint64_t i = 0; i < N; i += 2)
		tidx_remove(&x, &v[i]);
	check(&x);
	for (uint64_t i = 0; i < N; i++)
		assert_ptr_equal(tidx_find(&x, v[i].id), i % 2 ? &v[i] : NULL);
	tidx_fini(&x);
	free(v);
}

/* Ids given long ago come in among new ones (a move's copies take the
 * ids their placeholders were given): each goes to the table, while the
 * new ids pass chunks that are settled into the table too. A reserve
 * keeps its room for the old id whatever the settling took (it used to
 * leave the table full: the insert after it failed its assertion). */
/* A reserve keeps its room whatever it moves into the table first: ten
 * chunks, the eleventh just begun (its spare taken), the one before it
 * thinned to the table's room, so the next reserve settles its few into
 * the table, which they fill to its last place; the id reserved for (an
 * old one, below the chunks, as a move's copy that takes the id its
 * placeholder was given) still goes in. The old code left the table full
 * and the insert failed its assertion. */
static void
test_a_reserve_keeps_its_room_over_a_settling(void **state)
{
	enum { BASE = 5 * TIDX_CHUNK, N = 9 * TIDX_CHUNK, OLD = 400 };
	struct item *v = calloc(N + TIDX_CHUNK + 1 + OLD, sizeof(*v));
	struct item *old = &v[N + TIDX_CHUNK + 1];
	uint64_t room, o = 0, at = N;
	struct tidx x;

	(void)state;
	tidx_init(&x, key_of);
	for (uint64_t i = 0; i < OLD; i++)
		old[i].id = 1 + i;         /* below the chunks: the table */
	for (uint64_t i = 0; i < N; i++) { /* nine chunks, full */
		v[i].id = BASE + i;
		put(&x, &v[i]);
	}
	/* old ids until the table has less room than a sparse chunk holds */
	while (o < OLD - 1 &&
	    (uint64_t)x.hash.cap * 3 / 4 - x.hash.len >= TIDX_CHUNK / 8)
		put(&x, &old[o++]);
	room = (uint64_t)x.hash.cap * 3 / 4 - x.hash.len;
	assert_true(room >= 1 && room < TIDX_CHUNK / 4);
	/* the tenth gets that many ids (the others were given to tasks
	 * elsewhere: placeholders), then the eleventh begins */
	for (uint64_t i = 0; i < room; i++, at++) {
		v[at].id = BASE + N + i;
		put(&x, &v[at]);
	}
	v[at].id = BASE + N + TIDX_CHUNK;
	put(&x, &v[at++]);
	assert_null(x.spare);
	assert_int_equal(x.nchunks, 11);
	put(&x, &old[o++]); /* settles the tenth, then goes in */
	check(&x);
	for (uint64_t i = 0; i < o; i++)
		assert_ptr_equal(tidx_find(&x, old[i].id), &old[i]);
	tidx_fini(&x);
	free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_dense_ids_land_in_chunks_one_after_the_other),
		cmocka_unit_test(test_every_id_is_found_whatever_its_shape),
		cmocka_unit_test(
		    test_a_sparse_chunk_behind_the_ids_goes_to_the_table),
		cmocka_unit_test(
		    test_the_directory_is_bounded_by_what_it_holds),
		cmocka_unit_test(test_ids_far_above_start_the_directory_again),
		cmocka_unit_test(
		    test_a_table_filled_in_another_tables_order_stays_fast),
		cmocka_unit_test(
		    test_an_announced_load_in_no_order_fills_chunks),
		cmocka_unit_test(test_a_reserve_keeps_its_room_over_a_settling),
	};
	return cmocka_run_group_tests_name("tidx", tests, NULL, NULL);
}
