/* ops_batch - the public functions of sluice_batch.h: a batch shown, the
 * batches listed, a batch's callbacks set, closed (wire ops batch_show,
 * with its flag 0x01 for the list, and batch_set). As in
 * ops.c: check the arguments, build the request, client_call(), copy
 * the result out. */
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "client/ops.h"

static void
copy_str(char *dst, size_t cap, struct msg_str s)
{
	size_t n = s.len < cap - 1 ? s.len : cap - 1;

	if (n > 0)
		memcpy(dst, s.p, n);
	dst[n] = '\0';
}

static void
from_msg(const struct msg_batch *m, struct sluice_batch *out)
{
	memset(out, 0, sizeof(*out));
	copy_str(out->name, sizeof(out->name), m->name);
	out->total = m->total;
	out->waiting = m->waiting;
	out->ready = m->ready;
	out->delayed = m->delayed;
	out->taken = m->taken;
	out->buried = m->buried;
	out->acked = m->acked;
	out->failed = m->failed;
	out->started_at = m->started_at;
	out->ended_at = m->ended_at;
	out->closed = m->closed;
	out->ended = m->ended;
	copy_str(out->success_tube, sizeof(out->success_tube), m->success_tube);
	copy_str(
	    out->complete_tube, sizeof(out->complete_tube), m->complete_tube);
	out->success_id = m->success_id;
	out->complete_id = m->complete_id;
}

static int
name_ok(struct sluice_client *c, const char *what, const char *name)
{
	size_t n = name != NULL ? strlen(name) : 0;

	if (n == 0 || n > MSG_BATCH_NAME_MAX) {
		client_errmsg(c, "%s: a batch name is 1-200 bytes", what);
		return SLUICE_EINVAL;
	}
	return 0;
}

/* A callback's tube: "" (none) or a valid name, else SLUICE_ETUBE naming
 * the callback and the tube. */
static int
callback_ok(struct sluice_client *c, const char *which,
    const struct sluice_batch_callback *cb)
{
	const char *t = cb->tube != NULL ? cb->tube : "";

	if (t[0] == '\0' || msg_tube_valid(t, strlen(t)))
		return 0;
	client_errmsg(c,
	    "batch set: %s: bad callback tube name '%.200s': 1-200 bytes of "
	    "A-Z a-z 0-9 _ . : / -; nothing was changed",
	    which, t);
	return SLUICE_ETUBE;
}

int
sluice_batch_show(
    struct sluice_client *c, const char *name, struct sluice_batch *out)
{
	struct msg_req q = { .op = MSG_OP_BATCH_SHOW };
	struct msg_rep r;
	int rc;

	if (c == NULL || out == NULL)
		return ops_bad_arg(c, "batch show: no result");
	if ((rc = name_ok(c, "batch show", name)) != 0)
		return rc;
	q.batch.name = msg_cstr(name);
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	from_msg(&r.batch_info.one, out);
	return 0;
}

int
sluice_batch_list(struct sluice_client *c, uint32_t limit,
    struct sluice_batch **out, size_t *n, uint64_t *total)
{
	struct msg_req q = { .op = MSG_OP_BATCH_SHOW };
	struct sluice_batch *v = NULL;
	struct msg_batch m;
	struct msg_rep r;
	size_t k = 0;
	int rc;

	if (c == NULL || out == NULL || n == NULL)
		return ops_bad_arg(c, "batch list: no result");
	*out = NULL;
	*n = 0;
	if (limit < 1 || limit > MSG_BATCHES_MAX) {
		client_errmsg(
		    c, "batch list: a limit of 1..%d", MSG_BATCHES_MAX);
		return SLUICE_EINVAL;
	}
	q.batch.list = true;
	q.batch.limit = limit;
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if (!r.batch_info.list) {
		client_errmsg(c, "batch list: the server answered one batch");
		return SLUICE_EPROTO;
	}
	if (r.batch_info.n > 0 &&
	    (v = calloc(r.batch_info.n, sizeof(*v))) == NULL)
		return SLUICE_ENOMEM;
	while (k < r.batch_info.n && msg_next_batch(&r.batch_info.it, &m))
		from_msg(&m, &v[k++]);
	*out = v;
	*n = k;
	if (total != NULL)
		*total = r.batch_info.total;
	return 0;
}

int
sluice_batch_cancel(
    struct sluice_client *c, const char *name, struct sluice_batch *out)
{
	struct msg_req q = { .op = MSG_OP_BATCH_SET };
	struct msg_rep r;
	int rc;

	if (c == NULL)
		return ops_bad_arg(c, "batch cancel: no client");
	if ((rc = name_ok(c, "batch cancel", name)) != 0)
		return rc;
	q.batch.name = msg_cstr(name);
	q.batch.what = MSG_BATCH_CANCEL;
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if (out != NULL)
		from_msg(&r.batch_info.one, out);
	return 0;
}

int
sluice_batch_set(struct sluice_client *c, const char *name,
    const struct sluice_batch_callback *on_success,
    const struct sluice_batch_callback *on_complete, int close,
    struct sluice_batch *out)
{
	struct msg_req q = { .op = MSG_OP_BATCH_SET };
	struct msg_batch_req *s = &q.batch;
	struct msg_rep r;
	int rc;

	if (c == NULL)
		return ops_bad_arg(c, "batch set: no client");
	if ((rc = name_ok(c, "batch set", name)) != 0)
		return rc;
	if (on_success == NULL && on_complete == NULL && !close)
		return ops_bad_arg(
		    c, "batch set: nothing to do (a callback, or close)");
	s->name = msg_cstr(name);
	if ((on_success != NULL &&
	        (rc = callback_ok(c, "on_success", on_success)) != 0) ||
	    (on_complete != NULL &&
	        (rc = callback_ok(c, "on_complete", on_complete)) != 0))
		return rc;
	if (on_success != NULL) {
		if (on_success->payload == NULL && on_success->len > 0)
			return ops_bad_arg(c, "batch set: no payload");
		s->what |= MSG_BATCH_SUCCESS;
		s->success_tube = msg_cstr(on_success->tube);
		s->success_payload =
		    (struct msg_str) { on_success->payload, on_success->len };
	}
	if (on_complete != NULL) {
		if (on_complete->payload == NULL && on_complete->len > 0)
			return ops_bad_arg(c, "batch set: no payload");
		s->what |= MSG_BATCH_COMPLETE;
		s->complete_tube = msg_cstr(on_complete->tube);
		s->complete_payload =
		    (struct msg_str) { on_complete->payload, on_complete->len };
	}
	if (close)
		s->what |= MSG_BATCH_CLOSE;
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if (out != NULL)
		from_msg(&r.batch_info.one, out);
	return 0;
}
