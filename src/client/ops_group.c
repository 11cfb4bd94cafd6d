/* ops_group - libsluice's calls on the limits of a tube's fair groups
 * (sluice_groups.h): op group (0x2a), set, pause, resume and show. */
#include <string.h>

#include "client/client.h"
#include "client/ops.h"
#include "sluice.h"

static void
limits_of(const struct msg_flow *f, struct sluice_limits *o)
{
	memset(o, 0, sizeof(*o));
	o->set = f->set;
	o->rate = f->rate;
	o->per_ms = f->per_ms;
	o->burst = f->burst;
	o->concurrency = f->concurrency;
}

static void
result(const struct msg_group_rep *g, struct sluice_group_info *o)
{
	memset(o, 0, sizeof(*o));
	limits_of(&g->every, &o->every);
	o->overrides = g->overrides;
	o->paused_groups = g->paused;
	o->held_groups = g->held;
	o->own = (g->gflags & MSG_GROUP_OWN) != 0;
	o->paused = (g->gflags & MSG_GROUP_PAUSED) != 0;
	o->live = (g->gflags & MSG_GROUP_LIVE) != 0;
	limits_of(&g->own, &o->own_limits);
	limits_of(&g->lim, &o->limits);
	o->limits.tokens = g->tokens;
	o->limits.taken = g->taken;
	o->limits.held = g->holding != 0 ? g->ready : 0;
	o->ready = g->ready;
	o->holding = g->holding;
}

static int
call(struct sluice_client *c, const char *tube, const char *group, uint8_t verb,
    const struct sluice_limits *set, unsigned unset,
    struct sluice_group_info *out)
{
	struct msg_req q = { .op = MSG_OP_GROUP };
	struct msg_flow *f = &q.group.flow;
	unsigned all = SLUICE_LIM_RATE | SLUICE_LIM_CONCURRENCY;
	struct msg_rep r;
	int rc;

	if (c == NULL)
		return SLUICE_EINVAL;
	if ((unset & ~all) != 0 || (set != NULL && (set->set & ~all) != 0))
		return ops_bad_arg(c, "group set: unknown limit");
	if (set != NULL && (set->set & unset) != 0)
		return ops_bad_arg(c, "group set: a limit both set and lifted");
	q.group.tube = ops_tube_or_default(tube);
	q.group.group = (struct msg_str) { group != NULL ? group : "",
		group != NULL ? strlen(group) : 0 };
	q.group.verb = verb;
	q.group.lunset = (uint8_t)unset;
	if (set != NULL) {
		f->set = (uint8_t)set->set;
		if (set->set & SLUICE_LIM_RATE) {
			f->rate = set->rate;
			f->per_ms = set->per_ms;
			f->burst = set->burst;
		}
		if (set->set & SLUICE_LIM_CONCURRENCY)
			f->concurrency = set->concurrency;
	}
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if (out != NULL)
		result(&r.group, out);
	return 0;
}

int
sluice_group_set(struct sluice_client *c, const char *tube, const char *group,
    const struct sluice_limits *set, unsigned unset,
    struct sluice_group_info *now)
{
	return call(c, tube, group, MSG_GROUP_SET, set, unset, now);
}

static int
need_group(struct sluice_client *c, const char *group, const char *what)
{
	if (group == NULL || group[0] == '\0')
		return ops_bad_arg(c, what);
	return 0;
}

int
sluice_group_pause(struct sluice_client *c, const char *tube, const char *group,
    struct sluice_group_info *now)
{
	int rc = need_group(c, group,
	    "group pause: name the group (a tube is paused with "
	    "sluice_pause)");

	return rc != 0 ? rc
	               : call(c, tube, group, MSG_GROUP_PAUSE, NULL, 0, now);
}

int
sluice_group_resume(struct sluice_client *c, const char *tube,
    const char *group, struct sluice_group_info *now)
{
	int rc = need_group(c, group, "group resume: name the group");

	return rc != 0 ? rc
	               : call(c, tube, group, MSG_GROUP_RESUME, NULL, 0, now);
}

int
sluice_group_show(struct sluice_client *c, const char *tube, const char *group,
    struct sluice_group_info *out)
{
	if (out == NULL)
		return ops_bad_arg(c, "group show: no place for the result");
	return call(c, tube, group, MSG_GROUP_SHOW, NULL, 0, out);
}
