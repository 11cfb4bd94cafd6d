/* ops_result - the public functions of sluice_result.h: wait for a
 * task's result, cancel tasks. As in ops.c: check the arguments, build
 * the request, client_call(), copy the results out. */
#include <string.h>

#include "client/client.h"
#include "client/ops.h"

int
sluice_wait(struct sluice_client *c, uint64_t id, uint64_t timeout_ms,
    struct sluice_outcome *out)
{
	struct msg_req q = { .op = MSG_OP_WAIT,
		.wait = { .id = id, .wait = timeout_ms } };
	struct msg_rep r;
	size_t n;
	int rc;

	if (c == NULL || out == NULL)
		return ops_bad_arg(c, "wait: no place for the outcome");
	if (id == 0)
		return ops_bad_arg(c, "wait: a task id is >= 1");
	if (timeout_ms > SLUICE_WAIT_MAX_MS)
		return ops_bad_arg(
		    c, "wait: the timeout is at most an hour (3600000 ms)");
	if ((rc = client_call(c, &q, (int64_t)timeout_ms, &r)) != 0)
		return rc;
	memset(out, 0, sizeof(*out));
	out->id = r.result.id;
	out->final = r.result.final;
	out->state = r.result.state;
	out->cancelled = r.result.cancelled;
	out->time = r.result.time;
	n = r.result.tube.len < sizeof(out->tube) - 1 ? r.result.tube.len
	                                              : sizeof(out->tube) - 1;
	memcpy(out->tube, r.result.tube.p, n);
	n = r.result.text.len < SLUICE_TEXT_MAX ? r.result.text.len
	                                        : SLUICE_TEXT_MAX;
	memcpy(out->text, r.result.text.p, n);
	out->text_len = n;
	return 0;
}

int
sluice_cancel_batch(struct sluice_client *c, const uint64_t *ids, size_t n,
    struct sluice_result *results)
{
	struct msg_req q = { .op = MSG_OP_CANCEL };
	int rc;

	if ((rc = ops_batch_args(c, "cancel", ids, n, results)) != 0)
		return rc;
	q.delete_batch.n = (uint32_t)n;
	q.delete_batch.messages = true;
	q.delete_batch.ids = ids;
	return ops_call_batch(c, &q, n, "cancel", results);
}

int
sluice_cancel(struct sluice_client *c, uint64_t id)
{
	struct sluice_result res;
	int rc = sluice_cancel_batch(c, &id, 1, &res);

	if (rc != 0)
		return rc;
	if (res.rc != 0)
		client_errmsg(c, "%s", res.errmsg);
	return res.rc;
}
