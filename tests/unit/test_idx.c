/* The id index (src/queue/idx.c): what it finds, and how often it has to
 * read an item to do so. Reads are counted through the key callback, so
 * the costs checked here are exact, not timed: a lookup reads the items
 * whose hash tag matches, and a table filled in the order of another
 * table's slots (a snapshot loaded as it was written) does not pile its
 * items up into long runs. */
#include <stdio.h>
#include <stdlib.h>

#include "queue/idx.h"
#include "t_lib.h"

enum { N = 200000 };

struct item {
	uint64_t id;
	uint64_t pad; /* malloc's alignment, as for tasks */
};

static unsigned long reads;

static uint64_t
key_of(const void *p)
{
	reads++;
	return ((const struct item *)p)->id;
}

static struct item *
items_new(uint64_t n)
{
	struct item *v = aligned_alloc(16, n * sizeof(*v));

	assert_non_null(v);
	for (uint64_t i = 0; i < n; i++)
		v[i].id = i + 1;
	return v;
}

/* Every item is found, a missing key is not, and lookups read about one
 * item each: the one they look for, rarely another whose tag matches. */
static void
test_idx_finds_reading_few_items(void **state)
{
	struct item *v = items_new(N);
	struct idx x;

	(void)state;
	idx_init(&x, key_of);
	for (uint64_t i = 0; i < N; i++) {
		assert_int_equal(idx_reserve(&x, 1), 0);
		idx_insert(&x, &v[i]);
	}
	assert_true((uint64_t)x.len * 4 <= (uint64_t)x.cap * 3);
	assert_true((uint64_t)x.len * 2 >= (uint64_t)x.cap);
	reads = 0;
	for (uint64_t i = 0; i < N; i++)
		assert_ptr_equal(idx_find(&x, i + 1), &v[i]);
	assert_true(reads < N + N / 2);
	reads = 0;
	for (uint64_t i = 0; i < N; i++)
		assert_null(idx_find(&x, N + 1 + i));
	assert_true(reads < N);
	for (uint64_t i = 0; i < N; i += 2)
		idx_remove(&x, &v[i]);
	for (uint64_t i = 0; i < N; i++)
		assert_ptr_equal(idx_find(&x, i + 1), i % 2 ? &v[i] : NULL);
	idx_fini(&x);
	free(v);
}

/* A table sized for all, filled in the slot order of a larger one (a
 * snapshot load: tasks come in the writer's index order, and a failed
 * lookup checks each id first): each insert probes a short run, however
 * the two capacities relate. Growing from empty, in id order (a replay),
 * each item is read again about twice by the rehashes and no more. */
static void
test_idx_fills_in_another_tables_order(void **state)
{
	struct item *v = items_new(N);
	struct idx big, x;

	(void)state;
	idx_init(&big, key_of);
	assert_int_equal(idx_reserve(&big, N * 2), 0);
	for (uint64_t i = 0; i < N; i++)
		idx_insert(&big, &v[i]);
	for (int sized = 1; sized >= 0; sized--) {
		idx_init(&x, key_of);
		if (sized)
			assert_int_equal(idx_reserve(&x, N), 0);
		reads = 0;
		for (uint32_t i = 0; i < (sized ? big.cap : N); i++) {
			struct item *it = sized ? idx_at(&big, i) : &v[i];

			if (it == NULL)
				continue;
			assert_null(idx_find(&x, it->id));
			assert_int_equal(idx_reserve(&x, 1), 0);
			idx_insert(&x, it);
		}
		assert_int_equal(x.len, N);
		/* One read per insert, a rehash reads each item it moves
		 * (about twice over, growing), lookups read almost nothing.
		 * A pile-up would read thousands per insert. */
		fprintf(stderr, "%s: %.2f reads per item\n",
		    sized ? "sized" : "growing", (double)reads / N);
		assert_true(reads < (sized ? N + N / 4 : 5 * N));
		for (uint64_t i = 0; i < N; i++)
			assert_ptr_equal(idx_find(&x, i + 1), &v[i]);
		idx_fini(&x);
	}
	idx_fini(&big);
	free(v);
}

/* idx_insert_new adds an item whose key is new, as idx_insert does, and
 * with a key already there returns the item that has it and adds
 * nothing (a snapshot naming an id twice): one probe, reading only the
 * items whose tag matches. */
static void
test_idx_insert_new_finds_a_key_already_there(void **state)
{
	struct item *v = items_new(N), *dup = items_new(N);
	struct idx x;

	(void)state;
	idx_init(&x, key_of);
	assert_int_equal(idx_reserve(&x, N + 1), 0); /* room for one more */
	reads = 0;
	for (uint64_t i = 0; i < N; i++)
		assert_null(idx_insert_new(&x, &v[i]));
	assert_int_equal(x.len, N);
	/* each item's own key, and about one other's a tenth of the time */
	assert_true(reads < N + N / 4);
	for (uint64_t i = 0; i < N; i++)
		assert_ptr_equal(idx_insert_new(&x, &dup[i]), &v[i]);
	assert_int_equal(x.len, N);
	for (uint64_t i = 0; i < N; i++)
		assert_ptr_equal(idx_find(&x, i + 1), &v[i]);
	idx_remove(&x, &v[7]);
	assert_null(idx_insert_new(&x, &dup[7]));
	assert_ptr_equal(idx_find(&x, 8), &dup[7]);
	assert_int_equal(x.len, N);
	idx_fini(&x);
	free(dup);
	free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idx_finds_reading_few_items),
		cmocka_unit_test(test_idx_fills_in_another_tables_order),
		cmocka_unit_test(test_idx_insert_new_finds_a_key_already_there),
	};

	return cmocka_run_group_tests_name("idx", tests, NULL, NULL);
}
