/* ops_sched - the public functions of sluice_sched.h: schedules set,
 * listed, shown, paused, resumed and deleted (wire ops sched_set,
 * sched_list, sched_ctl). As in ops.c: check the arguments, build the
 * request, client_call(), copy the results out (result.c). */
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "client/ops.h"
#include "client/result.h"

/* One schedule from a reply into *out (optional). */
static int
one(const struct msg_rep *r, struct sluice_schedule **out)
{
	struct sluice_schedule *v;
	size_t n;
	int rc;

	if (out == NULL)
		return 0;
	if ((rc = result_scheds(&r->scheds, true, &v, &n)) != 0)
		return rc;
	if (n == 0)
		return SLUICE_EPROTO; /* the server sent none */
	*out = v;
	return 0;
}

int
sluice_schedule_set(struct sluice_client *c, const char *name, const char *tube,
    const char *cron, const void *payload, size_t len,
    const struct sluice_schedule_opts *opts, struct sluice_schedule **out)
{
	struct msg_req q = { .op = MSG_OP_SCHED_SET };
	struct msg_sched_set *s = &q.sched_set;
	struct msg_rep r;
	const char *mode = opts != NULL ? opts->catch_up : NULL;
	int rc;

	if (c == NULL || name == NULL || cron == NULL)
		return ops_bad_arg(c,
		    "schedule set: a name and a cron "
		    "expression are needed");
	if (payload == NULL && len > 0)
		return ops_bad_arg(c, "schedule set: no payload of that size");
	s->name = msg_cstr(name);
	s->tube = ops_tube_or_default(tube);
	s->cron = msg_cstr(cron);
	s->catch_up = MSG_CATCH_ONE;
	s->priority = SLUICE_PRI_DEFAULT; /* without options */
	if (mode != NULL && strcmp(mode, "none") == 0)
		s->catch_up = MSG_CATCH_NONE;
	else if (mode != NULL && strcmp(mode, "all") == 0)
		s->catch_up = MSG_CATCH_ALL;
	else if (mode != NULL && strcmp(mode, "one") != 0)
		return ops_bad_arg(
		    c, "schedule set: catch-up is none, one or all");
	if (opts != NULL) {
		s->tz = msg_cstr(opts->tz);
		s->priority = opts->priority;
		s->ttr = opts->ttr_ms;
		s->max_attempts = opts->max_attempts;
		s->paused = opts->paused != 0;
	}
	s->payload = (struct msg_str) { payload, len };
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	return one(&r, out);
}

int
sluice_schedule_list(
    struct sluice_client *c, struct sluice_schedule **out, size_t *n)
{
	struct msg_req q = { .op = MSG_OP_SCHED_LIST };
	struct msg_rep r;
	int rc;

	if (c == NULL || out == NULL || n == NULL)
		return ops_bad_arg(c, "schedule list: no place for the result");
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	return result_scheds(&r.scheds, false, out, n);
}

int
sluice_schedule_show(
    struct sluice_client *c, const char *name, struct sluice_schedule **out)
{
	struct msg_req q = { .op = MSG_OP_SCHED_LIST };
	struct msg_rep r;
	int rc;

	if (c == NULL || out == NULL || name == NULL || name[0] == '\0')
		return ops_bad_arg(c, "schedule show: a name is needed");
	q.sched.name = msg_cstr(name);
	q.sched.payloads = true;
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	return one(&r, out);
}

static int
ctl(struct sluice_client *c, const char *name, uint8_t action)
{
	struct msg_req q = { .op = MSG_OP_SCHED_CTL };
	struct msg_rep r;

	if (c == NULL || name == NULL || name[0] == '\0')
		return ops_bad_arg(c, "schedule: a name is needed");
	q.sched.name = msg_cstr(name);
	q.sched.action = action;
	return client_call(c, &q, 0, &r);
}

int
sluice_schedule_pause(struct sluice_client *c, const char *name)
{
	return ctl(c, name, MSG_SCHED_PAUSE);
}

int
sluice_schedule_resume(struct sluice_client *c, const char *name)
{
	return ctl(c, name, MSG_SCHED_RESUME);
}

int
sluice_schedule_delete(struct sluice_client *c, const char *name)
{
	return ctl(c, name, MSG_SCHED_DELETE);
}

void
sluice_schedule_free(struct sluice_schedule *s)
{
	free(s);
}
