/* ops_put - put and put_batch of sluice.h: the options checked as the
 * server would check them (the deduplication modes, the parents of a
 * put), the request built, the results copied out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client.h"
#include "client/ops.h"
#include "client/result.h"
#include "util/clock.h"

/* ---- put -------------------------------------------------------------- */

/* A put refused SLUICE_EMOVING (its tube is moving in from another
 * cluster and its key is not here yet: nothing was done) goes again after
 * a pause of 10 ms, doubled up to 200 ms, while the call's timeout since
 * `start` allows: true after the pause, false when the time is up. */
static bool
moving_again(const struct sluice_client *c, int64_t start, int *pause_ms)
{
	struct timespec ts;

	if (c->timeout_ms >= 0 &&
	    clock_mono_ms() - start + *pause_ms > c->timeout_ms)
		return false;
	ts.tv_sec = *pause_ms / 1000;
	ts.tv_nsec = (long)(*pause_ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	*pause_ms = *pause_ms * 2 > 200 ? 200 : *pause_ms * 2;
	return true;
}

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
	int64_t start = clock_mono_ms();
	int pause = 10;
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
	while (rc == SLUICE_EMOVING && moving_again(c, start, &pause))
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

/* One put_batch of v[0..n): item i's results into items[at[i]] (at
 * NULL: items[i]), its message's offset in c->texts into off[] (SIZE_MAX:
 * none, the code's text). An error returned is the request's: no item's
 * result was written. The texts' memory running out is not one (the
 * results are in; sluice_put_batch gives the codes' texts then). */
static int
batch_once(struct sluice_client *c, const struct msg_put *v, uint32_t n,
    struct sluice_batch_item *items, const size_t *at, size_t *off)
{
	struct msg_req q = { .op = MSG_OP_PUT_BATCH };
	struct msg_put_res res;
	struct msg_rep r;
	int rc;

	q.put_batch.n = n;
	q.put_batch.messages = true;
	q.put_batch.items = v;
	if ((rc = client_call(c, &q, 0, &r)) != 0)
		return rc;
	if (r.put_batch.n != n) {
		client_errmsg(
		    c, "put batch: %u results for %u tasks", r.put_batch.n, n);
		return SLUICE_EPROTO;
	}
	for (size_t i = 0; i < n && msg_next_put_res(&r.put_batch.it, &res);
	     i++) {
		size_t k = at != NULL ? at[i] : i;
		struct sluice_batch_item *it = &items[k];

		it->rc = res.status;
		it->id = res.id;
		it->created = res.created;
		it->stale_version = res.stale;
		it->throttled = res.throttled;
		off[k] = c->texts.len;
		buf_put(&c->texts, res.message.p, res.message.len);
		buf_put_u8(&c->texts, 0);
		if (it->rc != 0 && res.message.len == 0)
			off[k] = SIZE_MAX;
	}
	return 0;
}

/* The k items sent again (items[at[0..k)]), when that sending failed as
 * a whole with `rc`: each carries the error, with the handle's message. */
static void
batch_again_failed(struct sluice_client *c, const size_t *at, size_t k,
    struct sluice_batch_item *items, size_t *off, int rc)
{
	size_t o = c->texts.len;

	buf_put(&c->texts, c->errmsg, strlen(c->errmsg));
	buf_put_u8(&c->texts, 0);
	for (size_t j = 0; j < k; j++) {
		items[at[j]].rc = rc;
		off[at[j]] = c->errmsg[0] != '\0' ? o : SIZE_MAX;
	}
}

/* The items refused SLUICE_EMOVING go again (batch_once), while the call's
 * timeout allows; the others keep their results. A sending again that
 * fails as a whole (a lost connection, no leader, the timeout) speaks
 * for the items it carried alone: the batch was answered, some of its
 * items done, so the call does not fail; those items carry the error
 * (SLUICE_ECONN, SLUICE_ETIMEDOUT: their fate unknown; a refusal: not
 * done, the sending before was refused too): a routed batch would
 * otherwise give every item, the ones made too, a refusal's "nothing was
 * done". Out of memory here, the items stay refused (not done). */
static void
batch_moving(struct sluice_client *c, const struct msg_put *v, size_t n,
    struct sluice_batch_item *items, size_t *off)
{
	int64_t start = clock_mono_ms();
	struct msg_put *w = malloc(n * sizeof(*w));
	size_t *at = malloc(n * sizeof(*at));
	int pause = 10, rc;

	if (w == NULL || at == NULL) {
		free(w);
		free(at);
		return;
	}
	for (;;) {
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (items[i].rc == SLUICE_EMOVING) {
				w[k] = v[i];
				at[k++] = i;
			}
		if (k == 0 || !moving_again(c, start, &pause))
			break;
		if ((rc = batch_once(c, w, (uint32_t)k, items, at, off)) != 0) {
			batch_again_failed(c, at, k, items, off, rc);
			break;
		}
	}
	free(w);
	free(at);
}

int
sluice_put_batch(
    struct sluice_client *c, struct sluice_batch_item *items, size_t n)
{
	struct msg_str **keys;
	struct msg_put *v;
	size_t *off = NULL;
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
	if ((keys = calloc(n, sizeof(*keys))) == NULL ||
	    (off = malloc(n * sizeof(*off))) == NULL) {
		free(keys);
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
	/* The texts, each with its NUL, are kept by offset while the items
	 * refused SLUICE_EMOVING go again; pointed to once all are in. */
	buf_reset(&c->texts);
	if (rc == 0 &&
	    (rc = batch_once(c, v, (uint32_t)n, items, NULL, off)) == 0)
		batch_moving(c, v, n, items, off);
	for (size_t i = 0; rc == 0 && i < n; i++)
		items[i].errmsg = items[i].rc == 0 ? ""
		    : off[i] == SIZE_MAX || buf_failed(&c->texts)
		    ? sluice_strerror(items[i].rc)
		    : (const char *)c->texts.data + off[i];
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	free(v);
	free(off);
	return rc;
}
