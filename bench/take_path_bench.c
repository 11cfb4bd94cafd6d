/* take-path-bench - the queue's own cost of a take and its ack, with no
 * server around it (no log, no network, no fsync): puts N tasks in one
 * tube, then decides and applies a take and an ack of each, and prints
 * the nanoseconds per take + ack. Built against the queue of this tree
 * and, by bench/limits.sh --baseline-src, against a tree from before the
 * flow limits, it measures what a take from a tube without limits pays
 * for them (one test of a pointer at a take, one at each lease's end),
 * free of the noise of a shared machine's disk. With `--limited` the tube
 * has limits that never hold (a concurrency of 1000000). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue/qrec.h"
#include "queue/queue.h"
#ifdef TAKE_PATH_LIMITS
#include "queue/limits.h"
#endif

static uint64_t lsn;

static void
commit(struct queue *q, int64_t now, const struct qrec *r)
{
	if (r->type == QREC_NONE)
		return;
	if (queue_apply(q, ++lsn, now, r) != 0) {
		fprintf(stderr, "take-path-bench: apply failed\n");
		exit(1);
	}
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	bool limited = argc > 2 && strcmp(argv[2], "--limited") == 0;
	struct queue *q = queue_new(NULL);
	struct queue_str tube = { "t", 1 };
	struct queue_take_req tr = { &tube, 1, 1, true, false };
	int64_t now = 1700000000000LL;
	double t0;
	struct qrec r;

	for (uint64_t i = 0; i < n; i++) {
		struct queue_put_req p;
		struct queue_put_res res;

		queue_put_req_init(&p);
		p.tube = "t";
		p.tube_len = 1;
		p.payload = "0123456789";
		p.payload_len = 10;
		if (queue_decide_put(q, now, &p, &r, &res) != 0)
			return 1;
		commit(q, now, &r);
	}
	if (limited) {
#ifdef TAKE_PATH_LIMITS
		struct queue_tube_limit_req l = { "t", 1, QREC_LIM_CONCURRENCY,
			0, { 0, 0, 0, 0, 1000000 } };

		if (queue_decide_tube_limit(q, now, &l, &r) != 0)
			return 1;
		commit(q, now, &r);
#else
		fprintf(stderr, "take-path-bench: no limits in this build\n");
		return 2;
#endif
	}
	t0 = now_s();
	for (uint64_t i = 0; i < n; i++) {
		struct queue_ack_req a;
		uint64_t id;

		if (queue_decide_take(q, now, &tr, &r) != 0)
			return 1;
		id = r.u.take.id;
		commit(q, now, &r);
		memset(&a, 0, sizeof(a));
		a.id = id;
		a.lease = lsn;
		if (queue_decide_ack(q, now, &a, &r) != 0)
			return 1;
		commit(q, now, &r);
	}
	printf("%.1f ns per take + ack (%s)\n",
	    (now_s() - t0) * 1e9 / (double)n,
	    limited ? "limits that never hold" : "no limits");
	queue_free(q);
	return 0;
}
