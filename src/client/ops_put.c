/* ops_put - put and put_batch of sluice.h: the options checked as the
 * server would check them (the deduplication modes, the parents of a
 * put), the request built, the results copied out. */
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "client/ops.h"
#include "client/result.h"

/* ---- put -------------------------------------------------------------- */

void
sluice_put_opts_init(struct sluice_put_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->priority = SLUICE_PRI_DEFAULT;
}

static void
put_fields(const struct sluice_put_opts *o, const void *payload, size_t len,
    struct msg_put *p)
{
	struct sluice_put_opts dflt;

	if (o == NULL) {
		sluice_put_opts_init(&dflt);
		o = &dflt;
	}
	memset(p, 0, sizeof(*p));
	p->tube = ops_tube_or_default(o->tube);
	p->priority = o->priority;
	p->at = o->run_at != 0;
	p->when = p->at ? o->run_at : o->delay_ms;
	p->ttr = o->ttr_ms;
	p->max_attempts = o->max_attempts;
	p->period = o->period_ms;
	p->key = msg_cstr(o->key);
	p->replace = o->replace != 0;
	p->if_newer = o->if_newer;
	p->debounce = o->debounce_ms;
	p->throttle = o->throttle_ms;
	p->group = msg_cstr(o->group);
	p->payload.p = len ? payload : "";
	p->payload.len = len;
}

/* The deduplication modes' rules, in the words the server would use. */
static int
put_mode_check(struct sluice_client *c, const struct msg_put *p)
{
	const char *m = p->debounce != 0 ? "debounce" : "throttle";
	uint64_t w = p->debounce != 0 ? p->debounce : p->throttle;

	if (w == 0)
		return 0;
	if (p->debounce != 0 && p->throttle != 0)
		return ops_bad_arg(
		    c, "put: debounce and throttle cannot be used together");
	if (p->key.len == 0) {
		client_errmsg(c, "put: %s needs a key", m);
		return SLUICE_EINVAL;
	}
	if (p->replace || p->if_newer != 0 || p->when != 0 || p->at) {
		client_errmsg(c,
		    "put: %s cannot be used with replace, if_newer, a delay "
		    "or run_at",
		    m);
		return SLUICE_EINVAL;
	}
	if (w > 30ull * 24 * 3600 * 1000) {
		client_errmsg(
		    c, "put: %s window out of range: 1 ms to 30 days", m);
		return SLUICE_EINVAL;
	}
	return 0;
}

/* The parents of a put (its tagged fields): checked here as the server
 * would, the keys into *keys (malloc'd; the caller frees it). */
static int
put_after(struct sluice_client *c, const struct sluice_put_opts *o,
    struct msg_put *p, struct msg_str **keys)
{
	*keys = NULL;
	if (o != NULL && o->batch != NULL) {
		size_t n = strlen(o->batch);

		if (n == 0 || n > MSG_BATCH_NAME_MAX)
			return ops_bad_arg(
			    c, "put: a batch name is 1-200 bytes");
		p->ext = true;
		p->batch = (struct msg_str) { o->batch, n };
	}
	if (o == NULL || (o->nafter == 0 && o->nafter_keys == 0))
		return 0;
	if ((o->nafter > 0 && o->after == NULL) ||
	    (o->nafter_keys > 0 && o->after_keys == NULL))
		return ops_bad_arg(c, "put: after or after_keys missing");
	if (o->nafter + o->nafter_keys > MSG_AFTER_MAX) {
		client_errmsg(c,
		    "put: %zu parents: a task waits for at most %d",
		    o->nafter + o->nafter_keys, MSG_AFTER_MAX);
		return SLUICE_ELIMIT;
	}
	if (o->on_parent_failure < 0 ||
	    o->on_parent_failure > SLUICE_ON_PARENT_CANCEL)
		return ops_bad_arg(c,
		    "put: on_parent_failure is fail (0), ignore (1) or "
		    "cancel (2)");
	for (size_t i = 0; i < o->nafter; i++)
		if (o->after[i] == 0)
			return ops_bad_arg(c, "put: a parent's id is 0");
	if (o->nafter_keys > 0 &&
	    (*keys = calloc(o->nafter_keys, sizeof(**keys))) == NULL)
		return SLUICE_ENOMEM;
	for (size_t i = 0; i < o->nafter_keys; i++) {
		(*keys)[i] = msg_cstr(o->after_keys[i]);
		if ((*keys)[i].len == 0 || (*keys)[i].len > MSG_KEY_MAX) {
			free(*keys);
			*keys = NULL;
			client_errmsg(
			    c, "put: parent key %zu: 1-200 bytes", i + 1);
			return SLUICE_EKEY;
		}
	}
	p->ext = true;
	p->after = o->after;
	p->nafter = (uint32_t)o->nafter;
	p->after_keys = *keys;
	p->nafter_keys = (uint32_t)o->nafter_keys;
	p->on_parent_failure = (uint8_t)o->on_parent_failure;
	return 0;
}

int
sluice_put_ex(struct sluice_client *c, const struct sluice_put_opts *o,
    const void *payload, size_t len, struct sluice_put_result *res)
{
	struct msg_req q = { .op = MSG_OP_PUT };
	struct msg_str *keys;
	struct msg_rep r;
	int rc;

	if (c == NULL || (payload == NULL && len > 0))
		return ops_bad_arg(c, "put: payload missing");
	put_fields(o, payload, len, &q.put);
	if (q.put.if_newer != 0 && (!q.put.replace || q.put.key.len == 0))
		return ops_bad_arg(c, "put: if_newer needs a key and replace");
	if ((rc = put_mode_check(c, &q.put)) != 0)
		return rc;
	if ((rc = put_after(c, o, &q.put, &keys)) != 0)
		return rc;
	rc = client_call(c, &q, 0, &r);
	free(keys);
	if (rc != 0)
		return rc;
	if (res != NULL) {
		res->id = r.put.id;
		res->created = r.put.created;
		res->stale_version = r.put.stale;
		res->replaced = (q.put.replace || q.put.debounce != 0) &&
		    !r.put.created && !r.put.stale;
		res->throttled = r.put.throttled;
	}
	return 0;
}

int
sluice_put(struct sluice_client *c, const struct sluice_put_opts *o,
    const void *payload, size_t len, uint64_t *id, int *created)
{
	struct sluice_put_result res;
	int rc = sluice_put_ex(c, o, payload, len, &res);

	if (rc != 0)
		return rc;
	if (id != NULL)
		*id = res.id;
	if (created != NULL)
		*created = res.created;
	return 0;
}

int
sluice_put_batch(
    struct sluice_client *c, struct sluice_batch_item *items, size_t n)
{
	struct msg_req q = { .op = MSG_OP_PUT_BATCH };
	struct msg_str **keys;
	struct msg_put *v;
	struct msg_put_res res;
	struct msg_rep r;
	int rc;

	if (c == NULL || items == NULL || n == 0)
		return ops_bad_arg(c, "put batch: no tasks");
	if (n > SLUICE_BATCH_MAX) {
		client_errmsg(
		    c, "put batch: %zu tasks, at most %d", n, SLUICE_BATCH_MAX);
		return SLUICE_ELIMIT;
	}
	for (size_t i = 0; i < n; i++)
		if (items[i].payload == NULL && items[i].len > 0)
			return ops_bad_arg(c, "put batch: payload missing");
	/* put_fields sets every field of its item */
	if ((v = malloc(n * sizeof(*v))) == NULL)
		return SLUICE_ENOMEM;
	if ((keys = calloc(n, sizeof(*keys))) == NULL) {
		free(v);
		return SLUICE_ENOMEM;
	}
	rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		put_fields(
		    &items[i].opts, items[i].payload, items[i].len, &v[i]);
		/* each item's parents, checked as a single put's are: a bad
		 * one refuses the whole batch before it is sent */
		rc = put_after(c, &items[i].opts, &v[i], &keys[i]);
	}
	if (rc == 0) {
		q.put_batch.n = (uint32_t)n;
		q.put_batch.messages = true;
		q.put_batch.items = v;
		rc = client_call(c, &q, 0, &r);
	}
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	free(v);
	if (rc != 0)
		return rc;
	if (r.put_batch.n != n) {
		client_errmsg(
		    c, "put batch: %u results for %zu tasks", r.put_batch.n, n);
		return SLUICE_EPROTO;
	}
	/* The texts, each with its NUL, fit in the reply's bytes left plus
	 * one byte an item: reserved first, the buffer does not move while
	 * the results point into it, in one pass. */
	buf_reset(&c->texts);
	if (!buf_reserve(&c->texts, rd_left(&r.put_batch.it.r) + n + 1))
		return SLUICE_ENOMEM;
	for (size_t i = 0; msg_next_put_res(&r.put_batch.it, &res); i++) {
		items[i].rc = res.status;
		items[i].id = res.id;
		items[i].created = res.created;
		items[i].stale_version = res.stale;
		items[i].throttled = res.throttled;
		items[i].errmsg = (const char *)c->texts.data + c->texts.len;
		buf_put(&c->texts, res.message.p, res.message.len);
		buf_put_u8(&c->texts, 0);
		if (items[i].rc != 0 && res.message.len == 0)
			items[i].errmsg = sluice_strerror(items[i].rc);
	}
	return 0;
}
