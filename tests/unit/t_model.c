/* t_model - the log's checks of the model tests (t_model.h): a queue
 * rebuilt from the harness's log, from the start or from a snapshot plus
 * the rest of the log, must end in the harness's state, as a node's does
 * after a restart or a follower's after it loads a snapshot. */
#define T_MODEL_LOG_ONLY
#include "t_model.h"

struct queue *
tm_rebuilt(const struct tq *h, const struct queue_config *cfg,
    const struct buf *snap, size_t snap_at)
{
	struct queue *q = queue_new(cfg);

	assert_non_null(q);
	if (snap != NULL) {
		assert_int_equal(tq_snap_load(q, snap), 0);
		assert_int_equal(queue_check(q, NULL), 0);
		assert_int_equal(tq_replay(h, q, snap_at, h->nlog), 0);
	} else {
		assert_int_equal(tq_replay(h, q, 0, h->nlog), 0);
	}
	assert_true(tq_same(h->q, q, h->now));
	return q;
}

void
tm_snapshot(const struct tq *h, struct buf *snap, size_t *at)
{
	assert_int_equal(queue_snapshot_write(h->q, tq_snap_emit, snap), 0);
	*at = h->nlog;
}
