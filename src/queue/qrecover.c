/* qrecover - the recover() callbacks that rebuild a bare queue (for the
 * tools and the tests; sluiced has its own): snapshot entries go to
 * queue_snapshot_load, queue records to queue_apply, and a snapshot that
 * turns out damaged half-way empties the queue before an older one is
 * tried. */
#include "queue/qrecover.h"
#include "queue/qrec.h"
#include "queue/qstate.h"
#include "queue/queue.h"

enum {
	EXPECT_MAX = 1u << 30, /* tasks an index is sized for in advance */
};

void
queue_expect_tasks(struct queue *q, uint64_t tasks)
{
	tidx_expect(&q->ids, tasks < EXPECT_MAX ? tasks : EXPECT_MAX);
	tslab_expect(&q->pool, tasks);
}

void
queue_expect_done(struct queue *q)
{
	tidx_expect(&q->ids, 0); /* the load is over, as announced or not */
	tslab_settle(&q->pool);
}

static int
load_entry(void *arg, uint16_t type, const void *data, size_t len)
{
	return queue_snapshot_load(arg, type, data, len);
}

/* A damaged snapshot was loaded in part: start over, empty. */
static int
reset_queue(void *arg)
{
	queue_clear(arg);
	return 0;
}

static int
apply_rec(const struct rec_hdr *h, const void *body, void *arg)
{
	struct qrec r;
	int rc;

	if (h->type >= REC_TYPE_LOG_MIN)
		return 0;
	rc = qrec_decode(h->type, body, h->len - REC_HDR_SIZE, &r);
	return rc ? rc : queue_apply_decoded(arg, h->lsn, h->time, &r);
}

static const char *
check_snap(void *arg, uint64_t name_lsn, const struct snap_info *si)
{
	return queue_snapshot_unusable(arg, name_lsn, si->lsn);
}

/* The records to come: room for as many new tasks in the id index. */
static void
expect_records(void *arg, uint64_t records)
{
	queue_expect_tasks(arg, records);
}

const struct recover_ops queue_recover_ops = { load_entry, apply_rec,
	reset_queue, check_snap, expect_records };
