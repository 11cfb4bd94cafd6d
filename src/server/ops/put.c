/* put - put and put_batch: a task made from the request, decided by the
 * queue (a new task, or with a key a replacement of the live one) and
 * committed as new work (reserve.h: refused first when the disk fills),
 * within the quotas of the request's token (core/quota.h).
 *
 * A batch is taken item by item: one that breaks a limit of its own (the
 * decoder marked it) or that the queue refuses gets its code, and its
 * message when the request asked for them; the others are put, all in
 * one turn of the core, so one commit. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/core/core.h"
#include "server/core/core_puts.h"
#include "queue/batch.h"
#include "server/core/quota.h"
#include "server/ops/ops_int.h"
#include "sluice.h"

/* The deduplication modes (decide_dedup.c): a window past the longest
 * reads as one ms past it, which the queue refuses. */
static void
put_mode_from_msg(const struct msg_put *m, struct queue_put_req *r)
{
	uint64_t over = (uint64_t)QREC_WINDOW_MAX_MS + 1;

	r->debounce_ms = (int64_t)(m->debounce > over ? over : m->debounce);
	r->throttle_ms = (int64_t)(m->throttle > over ? over : m->throttle);
}

/* Why the queue refused a put with a deduplication mode (SLUICE_EINVAL),
 * or NULL when it has none or the reason is another. */
static const char *
put_mode_err(const struct msg_put *m)
{
	if (m->debounce == 0 && m->throttle == 0)
		return NULL;
	if (m->debounce != 0 && m->throttle != 0)
		return "debounce and throttle cannot be used together";
	if (m->key.len == 0)
		return m->debounce != 0 ? "debounce needs a key"
		                        : "throttle needs a key";
	if (m->replace)
		return m->debounce != 0
		    ? "debounce cannot be used with replace (it replaces)"
		    : "throttle cannot be used with replace";
	if (m->if_newer != 0)
		return "if-newer cannot be used with debounce or throttle";
	if (m->when != 0 || m->at)
		return m->debounce != 0
		    ? "debounce sets the run time: no delay or at with it"
		    : "throttle takes no delay or at";
	if ((m->debounce != 0 ? m->debounce : m->throttle) >
	    (uint64_t)QREC_WINDOW_MAX_MS)
		return m->debounce != 0
		    ? "debounce window out of range: 1 ms to 30 days"
		    : "throttle window out of range: 1 ms to 30 days";
	return NULL;
}

static void
put_req_from_msg(
    struct core *c, const struct msg_put *m, struct queue_put_req *r)
{
	queue_put_req_init(r);
	r->tube = m->tube.p;
	r->tube_len = m->tube.len;
	r->payload = m->payload.p;
	r->payload_len = m->payload.len;
	r->pri = m->priority;
	if (m->at)
		r->run_at = m->at && m->when == 0 ? c->now : (int64_t)m->when;
	else
		r->delay_ms = (int64_t)m->when;
	r->ttr_ms = (uint32_t)(m->ttr > UINT32_MAX ? UINT32_MAX : m->ttr);
	r->max_attempts = m->max_attempts;
	r->period_ms = (int64_t)m->period;
	r->key = m->key.p;
	r->key_len = m->key.len;
	r->replace = m->replace;
	r->if_newer = m->if_newer;
	put_mode_from_msg(m, r);
	r->group = m->group.p;
	r->group_len = m->group.len;
}

/* The parents a put names (its flag 0x10), into arrays of the caller's
 * (MSG_AFTER_MAX each) that the request borrows. */
static void
put_after_from_msg(const struct msg_put *m, uint64_t *ids,
    struct queue_str *keys, struct queue_put_req *r)
{
	struct msg_iter it;
	struct msg_str k;
	uint32_t n = 0;

	if (!m->ext)
		return;
	it = m->after_it;
	while (n < m->nafter && n < MSG_AFTER_MAX && msg_next_id(&it, &ids[n]))
		n++;
	r->after = ids;
	r->nafter = n;
	n = 0;
	it = m->after_keys_it;
	while (n < m->nafter_keys && n < MSG_AFTER_MAX && msg_next_key(&it, &k))
		keys[n++] = (struct queue_str) { k.p, k.len };
	r->after_keys = keys;
	r->nafter_keys = n;
	r->on_parent_failure = m->on_parent_failure;
	r->batch = m->batch.p; /* its batch (tag 3), if any */
	r->batch_len = m->batch.len;
}

/* One put: decide and commit; an item of a batch put (`run` not NULL)
 * goes into the run's PUTS record when it can (core_puts.h). Returns 0 or
 * an error code. */
static int
put_one(struct core *c, const struct tokens_entry *tok, const struct msg_put *m,
    struct msg_put_res *res, struct core_puts *run)
{
	uint64_t after[MSG_AFTER_MAX];
	struct queue_str keys[MSG_AFTER_MAX];
	struct queue_put_req req;
	struct queue_put_res qres;
	struct qrec r;
	uint64_t lsn;
	int rc;

	c->quota.why[0] = '\0';
	if (m->ttr > UINT32_MAX || m->when > (uint64_t)QREC_TIME_MAX ||
	    m->period > (uint64_t)QREC_TIME_MAX)
		return SLUICE_EINVAL;
	put_req_from_msg(c, m, &req);
	put_after_from_msg(m, after, keys, &req);
	rc = queue_decide_put(c->q, c->now, &req, &r, &qres);
	if (rc != 0)
		return rc;
	if (r.type != QREC_NONE) {
		if ((rc = quota_admit(c, tok, &r)) != 0)
			return rc;
		if (run == NULL || core_puts_add(c, run, &r) != 0) {
			if (run != NULL)
				core_puts_flush(c, run);
			rc = core_commit(c, &r, WAL_NEW_WORK, &lsn);
			if (rc != 0)
				return rc;
		}
	}
	res->status = 0;
	res->created = qres.created;
	res->stale = qres.stale;
	res->throttled = qres.throttled;
	res->id = qres.id;
	return 0;
}

/* A name the client sent, fit for a message: at most 64 bytes, bytes that
 * cannot be part of a tube name or a key shown as '?'. */
static void
show_name(struct msg_str s, char *out, size_t cap)
{
	size_t n = s.len < 64 ? s.len : 64, k = 0;

	for (size_t i = 0; i < n && k + 4 < cap; i++) {
		unsigned char ch = (unsigned char)s.p[i];

		out[k++] =
		    ch >= 0x20 && ch < 0x7f && ch != '\'' ? (char)ch : '?';
	}
	if (n < s.len && k + 4 < cap) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
}

/* Why a put, or one item of a batch put, was refused: `rc` in words that
 * name what is wrong with the request. */
static void
put_err_text(
    struct core *c, const struct msg_put *m, int rc, char *out, size_t len)
{
	char name[80];

	switch (rc) {
	case SLUICE_ETUBE:
		show_name(m->tube, name, sizeof(name));
		snprintf(out, len,
		    "bad tube name '%s' (%zu bytes): 1-200 bytes of A-Z a-z "
		    "0-9 _ . : / -",
		    name, m->tube.len);
		return;
	case SLUICE_EGROUP:
		show_name(m->group, name, sizeof(name));
		snprintf(out, len,
		    "bad group name '%s' (%zu bytes): 1-200 bytes of A-Z a-z "
		    "0-9 _ . : / -",
		    name, m->group.len);
		return;
	case SLUICE_EKEY:
		snprintf(out, len,
		    "bad key of %zu bytes: a key is 1-200 bytes, no NUL byte",
		    m->key.len);
		return;
	case SLUICE_EMOVING:
		show_name(m->tube, name, sizeof(name));
		snprintf(out, len,
		    "tube '%s' is moving in from another cluster and the key's "
		    "task may still be there: a keyed put (or a replace of a "
		    "key still there) waits until the mover has copied its "
		    "keys; nothing was done, try again",
		    name);
		return;
	case SLUICE_ETOOBIG:
		snprintf(out, len,
		    "payload of %zu bytes: over the server's limit of %zu "
		    "bytes",
		    m->payload.len, c->limits.payload_max);
		return;
	case SLUICE_ENOTFOUND:
		snprintf(out, len,
		    "a task it waits for (--after) is not one this server "
		    "knows: no such id, or no live task with that key in "
		    "the tube");
		return;
	case SLUICE_ESTATE:
		snprintf(out, len,
		    "the task with this key waits for its parents: it cannot "
		    "be replaced");
		return;
	case SLUICE_EBATCH:
		show_name(m->batch, name, sizeof(name));
		snprintf(out, len,
		    "batch '%s' is closed or ended: it takes no more tasks "
		    "(put them into a batch of another name)",
		    name);
		return;
	case SLUICE_EINVAL:
		if (m->batch.len > 0) {
			show_name(m->batch, name, sizeof(name));
			snprintf(out, len,
			    "a put into a batch ('%s': 1-200 bytes of A-Z a-z "
			    "0-9 _ . : / -) cannot replace, recur (period), "
			    "debounce or throttle%s",
			    name,
			    m->nafter + m->nafter_keys > 0
			        ? ", and names each parent once"
			        : "");
			return;
		}
		if (m->ext) {
			snprintf(out, len,
			    "a put with parents (--after) cannot replace, "
			    "recur (period), debounce or throttle, and names "
			    "each parent once");
			return;
		}
		if (put_mode_err(m) != NULL) {
			snprintf(out, len, "%s", put_mode_err(m));
			return;
		}
		snprintf(out, len, "%s",
		    m->replace && m->key.len == 0 ? "replace needs a key"
		        : m->error == SLUICE_EINVAL ||
		            (m->if_newer != 0 && !m->replace)
		        ? "if-newer needs replace, a key and a version of at "
		          "least 1"
		        : "a value out of range: ttr (up to 7 days), delay, "
		          "run_at or period");
		return;
	case SLUICE_ELIMIT:
		if (m->ext && m->nafter + m->nafter_keys > MSG_AFTER_MAX) {
			snprintf(out, len,
			    "%" PRIu32 " parents: a task waits for at most %d",
			    m->nafter + m->nafter_keys, MSG_AFTER_MAX);
			return;
		}
		if (m->batch.len > 0 &&
		    queue_batch_count(c->q) >= QUEUE_BATCHES_MAX) {
			snprintf(out, len,
			    "the server holds as many batches (%d) as it may",
			    QUEUE_BATCHES_MAX);
			return;
		}
		snprintf(out, len, "%s",
		    c->quota.why[0] != '\0' ? c->quota.why
		        : m->throttle != 0
		        ? "the server holds as many tasks, tubes or throttle "
		          "windows (1,000,000) as it may"
		        : "the server holds as many tasks or tubes as it may");
		return;
	default:
		break;
	}
	snprintf(out, len, "%s", sluice_strerror(rc));
}

void
ops_put(struct core *c, struct face_ctx *ctx, const struct tokens_entry *tok,
    const struct msg_req *req)
{
	struct msg_rep rep = { .op = MSG_OP_PUT };
	int rc = put_one(c, tok, &req->put, &rep.put, NULL);
	char text[MSG_TEXT_MAX / 2], name[80];

	if (rc != 0) {
		put_err_text(c, &req->put, rc, text, sizeof(text));
		show_name(req->put.tube, name, sizeof(name));
		if (rc == SLUICE_ETUBE)
			core_reply_err(c, ctx, MSG_OP_PUT, rc, "put: %s", text);
		else
			core_reply_err(c, ctx, MSG_OP_PUT, rc,
			    "put to tube '%s': %s", name, text);
		return;
	}
	ops_reply(c, ctx, &rep);
}

/* Each item on its own (put.c's opening says how), the plain puts of a
 * tube in a row logged as one record (core_puts.h) when there are two or
 * more. The texts of refused items are made only when one is: most
 * batches have none. */
void
ops_put_batch(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req)
{
	const struct msg_put_batch *b = &req->put_batch;
	struct msg_rep rep = { .op = MSG_OP_PUT_BATCH };
	struct msg_iter it = b->it;
	struct msg_put_res *res;
	char(*texts)[OPS_ITEM_TEXT] = NULL;
	struct core_puts run;
	struct msg_put m;
	uint32_t n = 0;

	memset(&run, 0, sizeof(run));
	res = calloc(b->n, sizeof(*res));
	if (res == NULL) {
		core_reply_err(c, ctx, MSG_OP_PUT_BATCH, SLUICE_ENOMEM, NULL);
		return;
	}
	while (n < b->n && msg_next_put(&it, &m)) {
		int rc = m.error != 0
		    ? m.error
		    : put_one(c, tok, &m, &res[n], b->n >= 2 ? &run : NULL);

		if (rc != 0) {
			res[n].status = (uint16_t)(rc > 0 ? rc : SLUICE_ENOMEM);
			res[n].id = 0;
			res[n].created = false;
			if (b->messages && texts == NULL)
				texts = malloc(b->n * sizeof(*texts));
			if (texts != NULL) {
				put_err_text(
				    c, &m, rc, texts[n], OPS_ITEM_TEXT);
				res[n].message = msg_cstr(texts[n]);
			}
		}
		n++;
	}
	core_puts_fini(c, &run);
	rep.put_batch.n = n;
	rep.put_batch.messages = b->messages;
	rep.put_batch.items = res;
	ops_reply(c, ctx, &rep);
	free(res);
	free(texts);
}
