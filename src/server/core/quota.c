/* quota - the quotas of --auth's tokens: how many tubes, live tasks and
 * payload bytes a token may fill, and how many of its takes may wait at
 * once, so that one tenant cannot use up what every tenant shares (the
 * node's --max-tubes, memory, the waiters' list).
 *
 * The model: a quota is per the token's tube pattern. A token may act
 * only on the tubes its pattern covers (`emails*`, or one tube), and that
 * namespace is what its tubes, tasks and bytes quotas bound: the tubes
 * there, the live tasks there (ready, delayed, taken, buried: a done task
 * is bounded by the node's --max-done), and their payloads, whoever put
 * them. So a task needs to remember nothing about who put it: what a
 * namespace holds follows from the queue's state, is counted exactly as
 * it changes (queue/acct.c: every put, ack, delete, expiry, move between
 * tubes, replace), and is rebuilt from the state after a restart or a
 * reload of the token file. Two tokens with one pattern (a producer and a
 * worker of `emails*`) look at one count, each against its own bounds.
 *
 * What is checked: a put (and each item of a batch put, on every face),
 * an ack --to, and a tube set or pause that makes a tube, before they are
 * committed, against the quotas of the token that sent them: a new tube
 * past `tubes`, a task past `tasks`, a payload past `bytes` (a replace,
 * by what it adds). A record the
 * server makes by itself (a ttr expiry, a dead letter) is not refused:
 * it is counted. A take that would wait past `parked` is refused at the
 * one place a take is parked; those waiting are counted per token, and
 * counted again from the waiters on a reload. A refusal is SLUICE_ELIMIT
 * with a message naming the token, the quota and its value. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/core/core.h"
#include "server/core/quota.h"
#include "sluice.h"
#include "util/log.h"

/* Whether token t bounds its namespace's tubes, tasks or bytes. */
static bool
counts(const struct tokens_entry *t)
{
	return t->quota[TOKENS_Q_TUBES] != TOKENS_UNLIMITED ||
	    t->quota[TOKENS_Q_TASKS] != TOKENS_UNLIMITED ||
	    t->quota[TOKENS_Q_BYTES] != TOKENS_UNLIMITED;
}

void
quota_fini(struct quota *q)
{
	free(q->nsof);
	free(q->parked);
	q->nsof = NULL;
	q->parked = NULL;
	q->n = 0;
}

/* The line of the token file a token pointer is, or SIZE_MAX. */
static size_t
line_of(const struct core *c, const struct tokens_entry *t)
{
	if (t == NULL || c->auth.n == 0 || t < c->auth.v ||
	    t >= c->auth.v + c->auth.n)
		return SIZE_MAX;
	return (size_t)(t - c->auth.v);
}

int
quota_apply(struct core *c)
{
	const struct tokens *a = &c->auth;
	struct queue_ns *ns = NULL;
	size_t nns = 0;
	int rc = 0;

	quota_fini(&c->quota);
	if (!c->auth_on || c->q == NULL)
		return 0;
	c->quota.nsof = malloc((a->n ? a->n : 1) * sizeof(*c->quota.nsof));
	c->quota.parked = calloc(a->n ? a->n : 1, sizeof(*c->quota.parked));
	ns = calloc(a->n ? a->n : 1, sizeof(*ns));
	if (c->quota.nsof == NULL || c->quota.parked == NULL || ns == NULL) {
		rc = SLUICE_ENOMEM;
		goto fail;
	}
	c->quota.n = a->n;
	/* One namespace per pattern that some token bounds. */
	for (size_t i = 0; i < a->n; i++) {
		const struct tokens_entry *t = &a->v[i];
		size_t len = t->prefix_len == SIZE_MAX ? strlen(t->tubes)
		                                       : t->prefix_len;
		size_t k;

		c->quota.nsof[i] = SIZE_MAX;
		if (!counts(t))
			continue;
		for (k = 0; k < nns; k++)
			if (ns[k].len == len &&
			    ns[k].prefix == (t->prefix_len != SIZE_MAX) &&
			    memcmp(ns[k].name, t->tubes, len) == 0)
				break;
		if (k == nns)
			ns[nns++] = (struct queue_ns) { t->tubes, len,
				t->prefix_len != SIZE_MAX };
		c->quota.nsof[i] = k;
	}
	if ((rc = queue_acct_set(c->q, ns, nns)) != 0)
		goto fail;
	free(ns);
	/* The takes waiting now, under the lines they are of now. */
	for (uint64_t j = 0; j < c->waits.n; j++) {
		struct waiter *w = waiters_at(&c->waits, j);
		const struct tokens_entry *t =
		    w->quota_tok ? tokens_find_hash(a, w->quota_hash) : NULL;
		size_t i = line_of(c, t);

		w->quota_tok = i != SIZE_MAX;
		w->quota_line = i;
		if (w->quota_tok)
			c->quota.parked[i]++;
	}
	return 0;

fail:
	free(ns);
	quota_fini(&c->quota);
	queue_acct_set(c->q, NULL, 0);
	for (uint64_t j = 0; j < c->waits.n; j++)
		waiters_at(&c->waits, j)->quota_tok = false;
	log_err("auth",
	    "no memory to count the tokens' quotas: tubes, tasks, bytes and "
	    "parked are not enforced until the token file is read again");
	return rc;
}

/* Refuses with c->quota.why naming the quota, the token and the use. */
static int
refuse(struct core *c, const struct tokens_entry *t, int kind, uint64_t have)
{
	static const char *const held[TOKENS_Q_END_] = {
		[TOKENS_Q_TUBES] = "tubes",
		[TOKENS_Q_TASKS] = "live tasks",
		[TOKENS_Q_BYTES] = "bytes of payload",
		[TOKENS_Q_PARKED] = "takes waiting",
	};

	snprintf(c->quota.why, sizeof(c->quota.why),
	    "quota %s=%" PRIu64 " of token '%s' reached: %s '%s' %s %" PRIu64
	    " %s",
	    tokens_quota_name(kind), t->quota[kind], t->name,
	    kind == TOKENS_Q_PARKED ? "its takes on" : "its tubes", t->tubes,
	    kind == TOKENS_Q_PARKED ? "have" : "hold", have, held[kind]);
	return SLUICE_ELIMIT;
}

/* Whether `tasks` more tasks of `bytes` bytes, and a new tube when
 * `new_tube`, fit token t's quotas over its namespace. */
static int
fits(struct core *c, const struct tokens_entry *t, size_t i, bool new_tube,
    uint64_t tasks, uint64_t bytes)
{
	struct queue_usage u;

	queue_acct_usage(c->q, c->quota.nsof[i], &u);
	if (new_tube && u.tubes >= t->quota[TOKENS_Q_TUBES])
		return refuse(c, t, TOKENS_Q_TUBES, u.tubes);
	if (tasks > 0 &&
	    (u.tasks >= t->quota[TOKENS_Q_TASKS] ||
	        t->quota[TOKENS_Q_TASKS] - u.tasks < tasks))
		return refuse(c, t, TOKENS_Q_TASKS, u.tasks);
	if (bytes > 0 &&
	    (u.bytes >= t->quota[TOKENS_Q_BYTES] ||
	        t->quota[TOKENS_Q_BYTES] - u.bytes < bytes))
		return refuse(c, t, TOKENS_Q_BYTES, u.bytes);
	return 0;
}

int
quota_admit(struct core *c, const struct tokens_entry *t, const struct qrec *r)
{
	size_t i = line_of(c, t);
	struct queue_task_view v;
	struct queue_usage tu;

	c->quota.why[0] = '\0';
	if (i == SIZE_MAX || i >= c->quota.n || c->quota.nsof[i] == SIZE_MAX)
		return 0;
	switch (r->type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_T:
	case QREC_PUT_G:
	case QREC_PUT_X:
		queue_tube_usage(c->q, r->u.put.tube, r->u.put.tube_len, &tu);
		return fits(c, t, i, tu.tubes == 0, 1, r->u.put.payload_len);
	case QREC_REPLACE:
	case QREC_REPLACE_V:
		if (queue_peek(c->q, c->now, r->u.replace.id, &v) != 0 ||
		    r->u.replace.payload_len <= v.payload_len)
			return 0;
		return fits(c, t, i, false, 0,
		    r->u.replace.payload_len - v.payload_len);
	case QREC_ACK:
	case QREC_ACK_R:
		if (r->u.end.outcome != QREC_MOVED ||
		    queue_peek(c->q, c->now, r->u.end.id, &v) != 0)
			return 0;
		queue_tube_usage(c->q, r->u.end.text, r->u.end.text_len, &tu);
		/* From a tube of its own namespace, the task only moves
		 * within it. */
		if (tokens_tube_ok(t, v.tube, v.tube_len))
			return fits(c, t, i, tu.tubes == 0, 0, 0);
		return fits(c, t, i, tu.tubes == 0, 1, v.payload_len);
	case QREC_TUBE_SET:
		queue_tube_usage(
		    c->q, r->u.tube_set.tube, r->u.tube_set.tube_len, &tu);
		return fits(c, t, i, tu.tubes == 0, 0, 0);
	case QREC_PAUSE:
		queue_tube_usage(
		    c->q, r->u.pause.tube, r->u.pause.tube_len, &tu);
		return fits(c, t, i, tu.tubes == 0, 0, 0);
	default:
		return 0;
	}
}

int
quota_park(struct core *c, const struct tokens_entry *t, struct waiter *w)
{
	size_t i = line_of(c, t);

	w->quota_tok = false;
	if (i == SIZE_MAX || i >= c->quota.n)
		return 0;
	if (c->quota.parked[i] >= t->quota[TOKENS_Q_PARKED])
		return refuse(c, t, TOKENS_Q_PARKED, c->quota.parked[i]);
	c->quota.parked[i]++;
	w->quota_tok = true;
	memcpy(w->quota_hash, t->hash, sizeof(w->quota_hash));
	w->quota_line = i;
	return 0;
}

void
quota_unpark(struct core *c, struct waiter *w)
{
	if (!w->quota_tok)
		return;
	w->quota_tok = false;
	if (w->quota_line < c->quota.n && c->quota.parked[w->quota_line] > 0)
		c->quota.parked[w->quota_line]--;
}
