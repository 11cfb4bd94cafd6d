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
static void
batch_item(json_t *o, const char *tube, struct msg_put *p,
    struct http_api_batch_err *e, void **blob)
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
	if ((k = json_object_get(o, "group")) != NULL && json_is_string(k))
		p->group = (struct msg_str) { json_string_value(k),
			json_string_length(k) };
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
	b->blobs = calloc(b->n, sizeof(*b->blobs));
	if (b->puts == NULL || b->errs == NULL || b->blobs == NULL)
		return SLUICE_ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		struct msg_put p = { 0 };

		batch_item(json_array_get(b->arr, i), tube, &p, &b->errs[i],
		    &b->blobs[i]);
		if (b->errs[i].code == 0)
			b->puts[b->nputs++] = p;
	}
	return 0;
}

void
http_api_batch_fini(struct http_api_batch *b)
{
	for (size_t i = 0; b->blobs != NULL && i < b->n; i++)
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
