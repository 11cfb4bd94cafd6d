/* glimit_ops - the queue's interface to group limits (limits.h): the
 * decision of a GROUP_SET (the whole settings of one name from a change
 * to them) and the view stats and `sluice group show` read. The state
 * and its rules are glimit.c's. */
#include <string.h>

#include "queue/decide.h"
#include "queue/flow.h"
#include "queue/glimit.h"
#include "queue/group.h"
#include "queue/limits.h"
#include "queue/qstate.h"
#include "sluice.h"

static int
group_set_rec(struct queue *q, int64_t now, const void *arg, struct qrec *out)
{
	const struct queue_group_set_req *req = arg;
	const struct tube *tb;
	const struct gover *o = NULL;
	struct qrec_limits l = { 0 };
	bool paused = false;

	(void)now;
	if (!qrec_tube_valid(req->tube, req->tube_len))
		return SLUICE_ETUBE;
	if (req->group_len > 0 &&
	    (req->group == NULL ||
	        !qrec_group_valid(req->group, req->group_len)))
		return SLUICE_EGROUP;
	if (((req->set | req->unset) & ~QREC_LIM_ALL) != 0 ||
	    (req->set & req->unset) != 0 || req->pause > QUEUE_GROUP_RESUME ||
	    (req->group_len == 0 && req->pause != QUEUE_GROUP_KEEP))
		return SLUICE_EINVAL;
	if ((tb = qs_tube(q, req->tube, req->tube_len)) == NULL)
		return SLUICE_ENOTFOUND;
	if (req->group_len == 0) {
		if (tb->gconf != NULL)
			l = tb->gconf->def;
	} else if ((o = gconf_find(tb->gconf, req->group, req->group_len)) !=
	    NULL) {
		l = o->lim;
		paused = o->paused;
	}
	queue_limits_change(&l, &req->lim, req->set, req->unset);
	if (req->pause == QUEUE_GROUP_PAUSE)
		paused = true;
	else if (req->pause == QUEUE_GROUP_RESUME)
		paused = false;
	if (!qrec_limits_valid(&l))
		return SLUICE_EINVAL;
	if (req->group_len == 0) {
		if (tb->gconf != NULL ? qrec_limits_equal(&l, &tb->gconf->def)
		                      : l.set == 0)
			return 0; /* QREC_NONE: nothing changes */
	} else if (o != NULL
	        ? qrec_limits_equal(&l, &o->lim) && paused == o->paused
	        : l.set == 0 && !paused) {
		return 0;
	} else if (o == NULL && tb->gconf != NULL &&
	    tb->gconf->over.len >= GLIMIT_OVERRIDES_MAX) {
		return SLUICE_ELIMIT;
	}
	out->type = QREC_GROUP_SET;
	out->u.group_set.tube = req->tube;
	out->u.group_set.tube_len = req->tube_len;
	out->u.group_set.group = req->group_len > 0 ? req->group : "";
	out->u.group_set.group_len = req->group_len;
	out->u.group_set.lim = l;
	out->u.group_set.paused = paused;
	return 0;
}

int
queue_decide_group_set(struct queue *q, int64_t now,
    const struct queue_group_set_req *req, struct qrec *out)
{
	return decide_run(q, now, group_set_rec, req, out);
}

int
queue_group_limits(struct queue *q, const char *tube, size_t tube_len,
    const char *group, size_t group_len, int64_t now,
    struct queue_group_view *out)
{
	const struct tube *tb;
	const struct gconf *gc;
	const struct groups *gs;
	struct queue_group_view v = { 0 };

	if (!qrec_tube_valid(tube, tube_len))
		return SLUICE_ETUBE;
	if (group_len > 0 &&
	    (group == NULL || !qrec_group_valid(group, group_len)))
		return SLUICE_EGROUP;
	if ((tb = qs_tube(q, tube, tube_len)) == NULL)
		return SLUICE_ENOTFOUND;
	if (now < q->clock)
		now = q->clock;
	gc = tb->gconf;
	gs = tb->groups;
	if (gc != NULL) {
		v.def = gc->def;
		v.noverrides = gc->over.len;
		v.npaused = gc->npaused;
	}
	if (gs != NULL)
		v.nheld = glimit_held_count(gs);
	if (group_len > 0) {
		const struct gover *o = gconf_find(gc, group, group_len);
		const struct group *g = groups_find(tb, group, group_len);

		if (o != NULL) {
			v.has_own = true;
			v.own = o->lim;
		}
		gconf_resolve(gc, group, group_len, &v.lim, &v.paused);
		if (g != NULL) {
			const struct glive *lv =
			    gs->lv != NULL && g->slot < gs->lv_cap
			    ? gs->lv[g->slot]
			    : NULL;

			v.live = true;
			v.ready = g->len;
			v.taken = g->taken;
			v.tokens = glive_tokens(lv, now);
			if (lv == NULL && (v.lim.set & QREC_LIM_RATE))
				v.tokens = v.lim.burst;
			if (v.paused)
				v.holding = 3;
			else if ((v.lim.set & QREC_LIM_CONCURRENCY) &&
			    g->taken >= v.lim.concurrency)
				v.holding = QUEUE_FLOW_CONCURRENCY;
			else if (lv != NULL && lv->hpos != HEAP_NONE)
				v.holding = QUEUE_FLOW_RATE;
		} else if (v.lim.set & QREC_LIM_RATE) {
			v.tokens =
			    v.lim.burst; /* a new group's bucket is full */
		}
	}
	*out = v;
	return 0;
}
