/* Memory and scale of src/queue: puts a million 100-byte tasks into one
 * tube, prints sizeof(struct task) and the heap bytes per task beyond the
 * payload (mallinfo2: everything malloc holds, chunk headers, indexes and
 * heap arrays included, plus the task slabs' touched pages, tslab.h), then
 * takes and acks them all and checks the memory comes back. The times printed
 * are for information; nothing here asserts a duration. Under the sanitizers
 * (SLUICE_SANITIZED=1) malloc is not glibc's: the run is smaller and the byte
 * count is not checked. The figure moves with the count, as the id index and
 * the heap arrays grow (by a quarter at a time): the worst case, just after
 * they grow, is sampled every 256 puts from 100,000 tasks on and checked too.
 * SLUICE_MEM_TASKS=N measures N tasks instead. */
#include <malloc.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue/qrec.h"
#include "queue/queue.h"
#include "queue/task.h"
#include "queue/tslab.h"
#include "sluice.h"
#include "t_lib.h"

#define T0 1700000000000LL

enum {
	PAYLOAD = 100,
	TARGET = 110,
	WORST = 115,
	SAMPLE_FROM = 100000,
	SAMPLE_EVERY = 256
};

static size_t
heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd + tslab_bytes();
}

static double
secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_memory_per_task(void **state)
{
	const char *san = getenv("SLUICE_SANITIZED");
	bool sanitized = san != NULL && strcmp(san, "1") == 0;
	const char *count = getenv("SLUICE_MEM_TASKS");
	uint64_t n = sanitized ? 100000 : 1000000;
	struct queue_str tube = { "bulk", 4 };
	struct queue_take_req tr = { &tube, 1, 1, false };
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_stats st;
	struct qrec rec;
	uint64_t lsn = 0;
	char payload[PAYLOAD];
	size_t before, full, after;
	double t0, t1, t2, per_task, worst = 0;
	uint64_t worst_n = 0;
	struct queue *q;

	(void)state;
	if (count != NULL && strtoull(count, NULL, 10) > 0)
		n = strtoull(count, NULL, 10);
	memset(payload, 'p', sizeof(payload));
	before = heap_bytes();
	q = queue_new(NULL);
	assert_non_null(q);
	queue_put_req_init(&req);
	req.tube = "bulk";
	req.tube_len = 4;
	req.payload = payload;
	req.payload_len = sizeof(payload);
	t0 = secs();
	for (uint64_t i = 0; i < n; i++) {
		req.pri = (uint32_t)(i % 7);
		assert_int_equal(queue_decide_put(q, T0, &req, &rec, &res), 0);
		assert_int_equal(queue_apply(q, ++lsn, T0, &rec), 0);
		if (i + 1 >= SAMPLE_FROM && (i + 1) % SAMPLE_EVERY == 0) {
			double b =
			    (double)(heap_bytes() - before) / (double)(i + 1);

			if (b > worst) {
				worst = b;
				worst_n = i + 1;
			}
		}
	}
	t1 = secs();
	full = heap_bytes();
	per_task = (double)(full - before) / (double)n;
	fprintf(stderr,
	    "struct task %zu bytes before its payload (sizeof %zu), "
	    "sizeof(struct "
	    "task_ext) %zu\n",
	    task_size(0), sizeof(struct task), sizeof(struct task_ext));
	fprintf(stderr,
	    "%llu tasks of %d bytes: %.1f bytes per task, %.1f beyond the "
	    "payload\n",
	    (unsigned long long)n, PAYLOAD, per_task, per_task - PAYLOAD);
	if (worst_n > 0)
		fprintf(stderr,
		    "worst sampled: %.1f beyond the payload at %llu tasks\n",
		    worst - PAYLOAD, (unsigned long long)worst_n);
	fprintf(stderr, "put: %.0f per second (with the sampling)\n",
	    (double)n / (t1 - t0));
	assert_int_equal(queue_stats(q, T0, &st), 0);
	assert_true(st.ready == n);
	for (uint64_t i = 0; i < n; i++) {
		struct queue_ack_req ar;

		assert_int_equal(queue_decide_take(q, T0 + 1, &tr, &rec), 0);
		assert_int_equal(queue_apply(q, ++lsn, T0 + 1, &rec), 0);
		memset(&ar, 0, sizeof(ar));
		ar.id = rec.u.take.id;
		ar.lease = lsn;
		assert_int_equal(queue_decide_ack(q, T0 + 1, &ar, &rec), 0);
		assert_int_equal(queue_apply(q, ++lsn, T0 + 1, &rec), 0);
	}
	t2 = secs();
	fprintf(stderr, "take + ack: %.0f pairs per second\n",
	    (double)n / (t2 - t1));
	assert_int_equal(queue_stats(q, T0 + 1, &st), 0);
	assert_true(st.tasks == 0 && st.ctr.ack == n);
	/* Each ack left its outcome for the dedup window (outcome.h): what
	 * they hold, then what is left once the window passed. */
	fprintf(stderr,
	    "outcomes of the acks: %.1f bytes each (%" PRIu64 " kept)\n",
	    (double)(heap_bytes() - before) / (double)queue_outcome_count(q),
	    queue_outcome_count(q));
	assert_true(queue_outcome_count(q) > 0 &&
	    queue_outcome_bytes(q) <= QUEUE_DEFAULT_OUTCOME_BYTES);
	assert_int_equal(queue_tick(q, T0 + 1 + QUEUE_DEFAULT_DEDUP_MS), 0);
	assert_int_equal(queue_outcome_count(q), 0);
	after = heap_bytes();
	fprintf(stderr, "after draining: %zu bytes held\n", after - before);
	assert_int_equal(queue_check(q, NULL), 0);
	queue_free(q);
	if (!sanitized)
		assert_true(after - before < 64 * 1024);
	/* Issue 30's target holds at the end; the worst case, just after
	 * the index grew by half, stays within WORST at every count sampled
	 * (below SAMPLE_FROM tasks the queue's fixed memory weighs in). */
	if (!sanitized && n >= SAMPLE_FROM) {
		assert_true(per_task - PAYLOAD <= TARGET);
		assert_true(worst_n == 0 || worst - PAYLOAD <= WORST);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_per_task),
	};

	return cmocka_run_group_tests_name("queue_mem", tests, NULL, NULL);
}
