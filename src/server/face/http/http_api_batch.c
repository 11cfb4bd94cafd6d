/* http_api_batch - the JSON bodies of the task API's batches
 * (http_api_batch.h), read with jansson after json_within has bounded
 * their size and depth: a body of more values than a full batch can
 * hold, or deeper, is refused unparsed.
 *
 * A batch put is judged item by item, as the wire's batch put is: an
 * item that is not an object, has no payload, a payload_base64 that does
 * not decode, or an option of the wrong type or range is refused alone
 * (its error goes in the results at its place, http_api_answer.c) and
 * the others go to the core. An ack or delete batch is all or nothing:
 * one bad item refuses the body. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json/json.h"
#include "proto/msg.h"
#include "server/face/http/http_api_batch.h"
#include "sluice.h"
#include "util/base64.h"
#include "util/dur.h"

static bool
j_u64(json_t *o, const char *name, uint64_t max, uint64_t *out,
    struct http_api_batch_err *e)
{
	json_t *v = json_object_get(o, name);

	if (v == NULL || json_is_null(v))
		return false;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max) {
		e->code = SLUICE_EINVAL;
		snprintf(e->msg, sizeof(e->msg),
		    "%s: a whole number 0..%" PRIu64, name, max);
		return false;
	}
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* A duration item field: a number of ms or a string ("10s"). */
static bool
j_dur(json_t *o, const char *name, uint64_t *out, struct http_api_batch_err *e)
{
	json_t *v = json_object_get(o, name);

	if (v != NULL && json_is_string(v)) {
		const char *s = json_string_value(v);
		char hint[128];
		int rc = dur_parse(s, out);

		if (rc == 0)
			return true;
		e->code = SLUICE_EINVAL;
		if (rc == DUR_EBARE) {
			dur_hint(hint, sizeof(hint), s);
			snprintf(e->msg, sizeof(e->msg),
			    "%s: \"%.24s\" needs a unit: %.80s", name, s, hint);
		} else {
			snprintf(
			    e->msg, sizeof(e->msg), "%s: %s", name, DUR_SYNTAX);
		}
		return false;
	}
	return j_u64(o, name, UINT64_MAX, out, e);
}

/* One item of a batch put; e->code set when it is refused here. A
 * payload decoded from base64 is put in `*blob` (freed by the caller). */
/* An item's parents: "after" (ids), "after_keys" (keys of tasks of its
 * tube), "on_parent_failure" ("fail", "ignore", "cancel"), 1..1000 in
 * all; the ids and keys in one allocation (*mem, freed with the batch). */
static void
batch_after(
    json_t *o, struct msg_put *p, struct http_api_batch_err *e, void **mem)
{
	json_t *ids = json_object_get(o, "after");
	json_t *keys = json_object_get(o, "after_keys");
	json_t *rule = json_object_get(o, "on_parent_failure");
	size_t ni = json_is_array(ids) ? json_array_size(ids) : 0;
	size_t nk = json_is_array(keys) ? json_array_size(keys) : 0;
	static const char *const rules[] = { "fail", "ignore", "cancel" };
	uint64_t *v;
	struct msg_str *k;

	if (ids == NULL && keys == NULL && rule == NULL)
		return;
	if ((ids != NULL && !json_is_array(ids)) ||
	    (keys != NULL && !json_is_array(keys)) || ni + nk == 0 ||
	    ni + nk > MSG_AFTER_MAX) {
		e->code =
		    ni + nk > MSG_AFTER_MAX ? SLUICE_ELIMIT : SLUICE_EINVAL;
		snprintf(e->msg, sizeof(e->msg),
		    "after, after_keys: arrays of 1..1000 parents in all");
		return;
	}
	if ((*mem = malloc(ni * sizeof(*v) + nk * sizeof(*k))) == NULL) {
		e->code = SLUICE_ENOMEM;
		snprintf(e->msg, sizeof(e->msg), "out of memory");
		return;
	}
	k = *mem;
	v = (uint64_t *)(k + nk);
	for (size_t i = 0; i < ni; i++) {
		json_t *x = json_array_get(ids, i);

		if (!json_is_integer(x) || json_integer_value(x) < 1) {
			e->code = SLUICE_EINVAL;
			snprintf(e->msg, sizeof(e->msg),
			    "after: task ids of at least 1");
			return;
		}
		v[i] = (uint64_t)json_integer_value(x);
	}
	for (size_t i = 0; i < nk; i++) {
		json_t *x = json_array_get(keys, i);

		if (!json_is_string(x)) {
			e->code = SLUICE_EKEY;
			snprintf(e->msg, sizeof(e->msg),
			    "after_keys: keys as strings");
			return;
		}
		k[i] = (struct msg_str) { json_string_value(x),
			json_string_length(x) };
	}
	p->on_parent_failure = MSG_PARENT_FAIL;
	if (rule != NULL) {
		int r = -1;

		for (int i = 0; i < 3 && json_is_string(rule); i++)
			if (strcmp(json_string_value(rule), rules[i]) == 0)
				r = i;
		if (r < 0) {
			e->code = SLUICE_EINVAL;
			snprintf(e->msg, sizeof(e->msg),
			    "on_parent_failure: fail, ignore or cancel");
			return;
		}
		p->on_parent_failure = (uint8_t)r;
	}
	p->ext = true;
	p->after = v;
	p->nafter = (uint32_t)ni;
	p->after_keys = k;
	p->nafter_keys = (uint32_t)nk;
}

static void
batch_item(json_t *o, const char *tube, struct msg_put *p,
    struct http_api_batch_err *e, void **blob, void **after)
{
	json_t *pl = json_object_get(o, "payload");
	json_t *b64 = json_object_get(o, "payload_base64");
	json_t *t = json_object_get(o, "tube"), *k = json_object_get(o, "key");
	uint64_t v;

	p->tube = msg_cstr(
	    t != NULL && json_is_string(t) ? json_string_value(t) : tube);
	p->priority = 1024;
	if (!json_is_object(o)) {
		e->code = SLUICE_EINVAL;
		snprintf(e->msg, sizeof(e->msg), "an item is a JSON object");
		return;
	}
	if (pl != NULL && json_is_string(pl)) {
		p->payload = (struct msg_str) { json_string_value(pl),
			json_string_length(pl) };
	} else if (b64 != NULL && json_is_string(b64)) {
		size_t n = 0;

		*blob = malloc(json_string_length(b64) / 4 * 3 + 3);
		if (*blob == NULL ||
		    !base64_decode(*blob, json_string_value(b64),
		        json_string_length(b64), &n)) {
			e->code = SLUICE_EINVAL;
			snprintf(e->msg, sizeof(e->msg),
			    "payload_base64: not standard base64");
			return;
		}
		p->payload = (struct msg_str) { *blob, n };
	} else {
		e->code = SLUICE_EINVAL;
		snprintf(e->msg, sizeof(e->msg),
		    "an item needs \"payload\" (text) or \"payload_base64\"");
		return;
	}
	if (j_u64(o, "priority", UINT32_MAX, &v, e))
		p->priority = (uint32_t)v;
	if (j_dur(o, "delay", &p->when, e))
		p->at = false;
	if (j_u64(o, "run_at", UINT64_MAX, &v, e)) {
		p->when = v;
		p->at = true;
	}
	j_dur(o, "ttr", &p->ttr, e);
	if (j_u64(o, "max_attempts", UINT32_MAX, &v, e))
		p->max_attempts = (uint32_t)v;
	j_dur(o, "every", &p->period, e);
	if (k != NULL && json_is_string(k))
		p->key = (struct msg_str) { json_string_value(k),
			json_string_length(k) };
	p->replace = json_is_true(json_object_get(o, "replace"));
	if (((j_dur(o, "debounce", &p->debounce, e) && p->debounce == 0) ||
	        (j_dur(o, "throttle", &p->throttle, e) && p->throttle == 0)) &&
	    e->code == 0) {
		e->code = SLUICE_EINVAL;
		snprintf(e->msg, sizeof(e->msg),
		    "debounce, throttle: a window of 1ms to 30d, not 0");
	}
	if ((k = json_object_get(o, "in_batch")) != NULL && json_is_string(k)) {
		p->batch = (struct msg_str) { json_string_value(k),
			json_string_length(k) }; /* the batch it joins */
		p->ext = true;
	}
	if ((k = json_object_get(o, "group")) != NULL && json_is_string(k))
		p->group = (struct msg_str) { json_string_value(k),
			json_string_length(k) };
	if (e->code == 0)
		batch_after(o, p, e, after);
}

int
http_api_batch_puts(
    struct http_api_batch *b, const void *body, size_t len, const char *tube)
{
	json_error_t jerr;

	*b = (struct http_api_batch) { 0 };
	b->arr = json_within(body, len, HTTP_API_BATCH_VALUES_MAX,
	             HTTP_API_BATCH_DEPTH_MAX)
	    ? json_loadb(body, len, 0, &jerr)
	    : NULL;
	b->n = json_is_array(b->arr) ? json_array_size(b->arr) : 0;
	if (b->n == 0 || b->n > MSG_BATCH_MAX)
		return SLUICE_EINVAL;
	b->puts = calloc(b->n, sizeof(*b->puts));
	b->errs = calloc(b->n, sizeof(*b->errs));
	b->blobs = calloc(2 * b->n, sizeof(*b->blobs)); /* and the afters */
	if (b->puts == NULL || b->errs == NULL || b->blobs == NULL)
		return SLUICE_ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		struct msg_put p = { 0 };

		batch_item(json_array_get(b->arr, i), tube, &p, &b->errs[i],
		    &b->blobs[i], &b->blobs[b->n + i]);
		if (b->errs[i].code == 0)
			b->puts[b->nputs++] = p;
	}
	return 0;
}

void
http_api_batch_fini(struct http_api_batch *b)
{
	for (size_t i = 0; b->blobs != NULL && i < 2 * b->n; i++)
		free(b->blobs[i]);
	free(b->blobs);
	free(b->errs);
	free(b->puts);
	json_decref(b->arr);
	*b = (struct http_api_batch) { 0 };
}

size_t
http_api_batch_ids(const void *body, size_t len, bool ack,
    struct msg_ack_item items[MSG_BATCH_MAX])
{
	json_error_t jerr;
	json_t *arr = json_within(body, len, HTTP_API_BATCH_VALUES_MAX,
	                  HTTP_API_BATCH_DEPTH_MAX)
	    ? json_loadb(body, len, 0, &jerr)
	    : NULL;
	size_t n = json_is_array(arr) ? json_array_size(arr) : 0;

	if (n > MSG_BATCH_MAX)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(arr, i);
		json_t *id = ack ? json_object_get(e, "id") : e;
		json_t *lease = json_object_get(e, "lease");

		if (!json_is_integer(id) || json_integer_value(id) < 1 ||
		    (ack &&
		        (!json_is_integer(lease) ||
		            json_integer_value(lease) < 0))) {
			n = 0;
			break;
		}
		items[i].id = (uint64_t)json_integer_value(id);
		items[i].lease = ack ? (uint64_t)json_integer_value(lease) : 0;
	}
	json_decref(arr);
	return n;
}
