/* decide_dedup - the deduplication modes of a keyed put, beside the key's
 * own rule (one live task per key, a dedup window after it) and replace:
 *
 *   debounce DUR  each put of the key replaces the waiting task's content
 *                 and settings and moves its run_at to now + DUR, so only
 *                 the last of a burst runs, DUR after it. A taken task
 *                 gets the content as its pending replacement (as replace
 *                 does): when its lease ends it waits again, until DUR
 *                 after the put. With no live task: a new task, due DUR
 *                 from now, whatever the key's dedup window says.
 *   throttle DUR  a put of the key less than DUR after the last accepted
 *                 throttled put of the key is ignored, whatever became of
 *                 that put's task; the answer names that task with
 *                 throttled set. Past the window a live task of the key
 *                 answers as the key does (created false); with none, the
 *                 put is a new task (ignoring the dedup window) and opens
 *                 the next window (a PUT_T record; throttle.h keeps it).
 *
 * Design: both reuse queue_decide_put with replace set, so every check and
 * the record it would write stay in one place: debounce is a replace due
 * DUR from now; throttle takes its decision and keeps only a new task,
 * which becomes a PUT_T. Windows outlive their tasks, so their number
 * has a bound of its own (QREC_THROTTLE_WINDOWS_MAX: past it, a put that
 * would open one more is SLUICE_ELIMIT). Deciding is pure, so a decision set
 * aside changes nothing. */
#include <string.h>

#include "queue/decide.h"
#include "queue/qstate.h"
#include "queue/throttle.h"
#include "sluice.h"

static int
mode_check(const struct queue_put_req *req)
{
	int64_t w = req->debounce_ms != 0 ? req->debounce_ms : req->throttle_ms;

	if (req->key_len == 0 ||
	    (req->debounce_ms != 0 && req->throttle_ms != 0))
		return SLUICE_EINVAL;
	if (req->replace || req->if_newer != 0 || req->delay_ms != 0 ||
	    req->run_at != 0)
		return SLUICE_EINVAL;
	if (w < 1 || w > QREC_WINDOW_MAX_MS)
		return SLUICE_EINVAL;
	return 0;
}

static int
not_created(struct queue_put_res *res, uint64_t id, bool throttled)
{
	memset(res, 0, sizeof(*res));
	res->id = id;
	res->throttled = throttled;
	return 0;
}

int
queue_decide_put_mode(struct queue *q, int64_t now,
    const struct queue_put_req *req, struct qrec *out,
    struct queue_put_res *res)
{
	struct queue_put_req r = *req;
	const struct throttle *th;
	struct qrec rec;
	int rc;

	if ((rc = mode_check(req)) != 0)
		return rc;
	r.debounce_ms = 0;
	r.throttle_ms = 0;
	r.replace = true;
	if (req->debounce_ms != 0) {
		r.delay_ms = req->debounce_ms;
		return queue_decide_put(q, now, &r, out, res);
	}
	rc = queue_decide_put(q, now, &r, &rec, res);
	if (rc == SLUICE_ESTATE) { /* the key's task waits for parents */
		const struct keyent *ke = qs_key_for_put(
		    q, req->tube, req->tube_len, req->key, req->key_len);

		if (ke == NULL || ke->task == NULL)
			return rc;
		th = qs_throttle_find(
		    q, now, req->tube, req->tube_len, req->key, req->key_len);
		out->type = QREC_NONE;
		return not_created(res, th ? th->id : ke->task->id, th != NULL);
	}
	if (rc != 0)
		return rc;
	th = qs_throttle_find(
	    q, now, req->tube, req->tube_len, req->key, req->key_len);
	if (th != NULL) {
		out->type = QREC_NONE;
		return not_created(res, th->id, true);
	}
	if (!res->created) { /* a live task of the key: untouched */
		out->type = QREC_NONE;
		return not_created(res, res->id, false);
	}
	/* PUT_T is a PUT's body, the window and the group: a new task
	 * whose record is another kind of put cannot open one (a PUT_G is a
	 * PUT with a group; a version cannot come with a throttle). */
	if (rec.type != QREC_PUT && rec.type != QREC_PUT_G)
		return SLUICE_EINVAL;
	/* Windows outlive their tasks: their number has a bound of its own
	 * (one whose window ended is swept within a second). */
	if (!qs_throttle_room(
	        q, req->tube, req->tube_len, req->key, req->key_len))
		return SLUICE_ELIMIT;
	rec.type = QREC_PUT_T;
	rec.u.put.throttle_until = now + req->throttle_ms;
	if (rec.u.put.throttle_until > QREC_TIME_MAX)
		rec.u.put.throttle_until = QREC_TIME_MAX;
	*out = rec;
	return 0;
}
