/* sluice_log_replay - the records recovery would apply, replayed into a
 * queue from the snapshot it would start from (lt_replay_run): what
 * verify reports of a record that does not apply, and what state and
 * stats read. Nothing here writes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluice.h"
#include "sluice_log.h"
#include "util/fsutil.h"

enum { STOP_ = 0x51ce };

/* ---- replay ----------------------------------------------------------- */

struct replay_ctx {
	const struct lt_dir *d;
	struct lt_replay *r;
	uint64_t stop;
	uint64_t expect;
	uint64_t epoch;
	bool started;
	int oom;
};

static int
replay_rec(void *arg, const struct lt_dir *d, size_t seg, uint64_t off,
    const struct rec_view *v)
{
	struct replay_ctx *c = arg;
	struct lt_replay *r = c->r;
	struct qrec q;
	int rc;

	(void)d;
	if (v->hdr.lsn < c->expect && !c->started)
		return 0; /* before the snapshot */
	if (c->stop != 0 && v->hdr.lsn > c->stop)
		return STOP_;
	if (v->hdr.lsn != c->expect || v->hdr.epoch < c->epoch) {
		r->broken = true;
		return STOP_;
	}
	c->started = true;
	c->expect++;
	c->epoch = v->hdr.epoch;
	if (v->hdr.type < REC_TYPE_LOG_MIN) {
		rc = qrec_decode(v->hdr.type, v->body, v->body_len, &q);
		if (rc == 0)
			rc = queue_apply(r->q, v->hdr.lsn, v->hdr.time, &q);
		if (rc == SLUICE_ENOMEM) {
			c->oom = rc;
			return STOP_;
		}
		if (rc != 0) {
			r->failed = true;
			r->fail_lsn = v->hdr.lsn;
			r->fail_type = v->hdr.type;
			r->fail_rc = rc;
			r->fail_seg = seg;
			r->fail_off = off;
			return STOP_;
		}
	}
	r->records++;
	r->last_lsn = v->hdr.lsn;
	r->last_time = v->hdr.time;
	r->epoch = v->hdr.epoch;
	return 0;
}

static int
replay_bad(
    void *arg, const struct lt_dir *d, size_t seg, const struct walk_bad *b)
{
	struct replay_ctx *c = arg;

	if (!c->started)
		return 0;
	/* A torn tail is the end of the log, as recovery sees it. */
	if (!(walk_bad_is_torn(b) && seg + 1 == d->nsegs))
		c->r->broken = true;
	return STOP_;
}

int
lt_replay_run(const struct lt_dir *d, uint64_t stop_lsn, struct lt_replay *r)
{
	static const struct lt_visit visit = { replay_rec, replay_bad };
	struct replay_ctx c = { d, r, stop_lsn, d->start, 0, false, 0 };
	int k = lt_start_seg(d), rc = 0;

	memset(r, 0, sizeof(*r));
	r->q = queue_new(NULL);
	if (r->q == NULL)
		return SLUICE_ENOMEM;
	if (d->snap_used >= 0) {
		const struct lt_snap *s = &d->snaps[d->snap_used];

		rc = lt_snap_load(d, (size_t)d->snap_used, r->q);
		if (rc != 0)
			return rc;
		r->snap_lsn = s->info.lsn;
		r->last_lsn = s->info.lsn;
		r->epoch = s->info.epoch;
		r->last_time = s->info.time;
		c.epoch = s->info.epoch;
	}
	for (size_t i = k < 0 ? 0 : (size_t)k; i < d->nsegs && rc == 0; i++) {
		if (d->segs[i].err != 0) {
			r->broken = true;
			break;
		}
		rc = lt_seg_walk(d, i, &visit, &c);
	}
	if (rc == STOP_)
		rc = 0;
	return c.oom != 0 ? c.oom : rc;
}

void
lt_replay_free(struct lt_replay *r)
{
	queue_free(r->q);
	r->q = NULL;
}

int
lt_dir_check_replay(struct lt_dir *d, struct lt_replay *r)
{
	struct lt_problem *p;
	int rc = lt_replay_run(d, 0, r);

	if (rc != 0 || !r->failed)
		return rc;
	if (lt_type_unknown(r->fail_type))
		p = lt_dir_problem(d, LT_DAMAGE, d->segs[r->fail_seg].name,
		    (int)r->fail_seg,
		    "record LSN %" PRIu64 " is of type %u, which this "
		    "sluice-log does not know: a newer sluiced wrote this log; "
		    "read and repair it with that sluiced's sluice-log",
		    r->fail_lsn, (unsigned)r->fail_type);
	else
		p = lt_dir_problem(d, LT_DAMAGE, d->segs[r->fail_seg].name,
		    (int)r->fail_seg,
		    "record LSN %" PRIu64 " (%s) is whole but does not apply "
		    "to the queue rebuilt before it (%s): sluiced stops at it",
		    r->fail_lsn,
		    lt_type_name(r->fail_type) ? lt_type_name(r->fail_type)
		                               : "?",
		    sluice_strerror(r->fail_rc));
	p->has_off = true;
	p->off = r->fail_off;
	p->lsn_before = r->fail_lsn - 1;
	p->lsn_after = r->fail_lsn;
	p->recovery = true;
	return 0;
}
