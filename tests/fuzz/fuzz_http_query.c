/* fuzz_http_query - what the HTTP face reads from a request past its head
 * (src/server/face/http/http_query.c, http_api_batch.c, http_api.c's
 * http_api_body_max) on arbitrary bytes. The first byte picks the
 * reader, and the second (for a query) its variant:
 *   0 a query string: percent-decoding, named values, the typed
 *     parameters and the task options of a put or an update, a route's
 *     body limit;
 *   1 a batch put's JSON body;
 *   2 an ack batch's, 3 a delete batch's.
 * Beyond "never crash, never read or write out of bounds, free what it
 * allocates":
 *  - a value decoded fits its buffer, holds no NUL byte, is no longer
 *    than its text, and decodes again to itself once percent-encoded,
 *    as a query value of its own;
 *  - a bad parameter is named first ("NAME: WHAT"), and task options read
 *    with no error read again the same from the query they make;
 *  - a route's body limit is one of the few it has (0 for GET);
 *  - a batch read has 1..1000 items, each accepted or refused with a
 *    code and a reason, the accepted ones in order; written back as JSON
 *    they read the same. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto/msg.h"
#include "server/face/http/http_api.h"
#include "server/face/http/http_api_batch.h"
#include "server/face/http/http_query.h"
#include "sluice.h"
#include "util/base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	/* a number dur_parse reads back whole (its digits stop past it) */
	DUR_ROUND_MAX = 1844674407370955160ULL,
	PAYLOAD_MAX = 3 << 20, /* --max-payload: apart from the other limits */
};

static void
check(int cond)
{
	if (!cond)
		abort();
}

/* `len` bytes of `s` percent-encoded, every byte, into out. */
static size_t
pct(char *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		out[n++] = '%';
		out[n++] = hex[(unsigned char)s[i] >> 4];
		out[n++] = hex[(unsigned char)s[i] & 15];
	}
	out[n] = '\0';
	return n;
}

/* A value decoded: within its buffer and its text, no NUL inside; and
 * percent-encoded, it is found again as the value of `name`. */
static void
value_round_trip(const char *name, const char *v, size_t cap, size_t text)
{
	size_t len = strnlen(v, cap);
	char *uri, *again;

	check(len < cap && len <= text);
	uri = malloc(strlen(name) + 3 * len + 8);
	again = malloc(len + 1);
	check(uri != NULL && again != NULL);
	sprintf(uri, "/?%s=", name);
	pct(uri + strlen(uri), v, len);
	check(http_query_get(uri, name, again, len + 1));
	check(strcmp(again, v) == 0);
	free(again);
	free(uri);
}

/* The noted error names its parameter first. */
static void
check_err(const struct http_query *q)
{
	static const char *const names[] = { "priority", "delay", "run_at",
		"ttr", "max_attempts", "every", "key", "replace", "batch" };
	size_t len = strnlen(q->err, sizeof(q->err));

	check(len < sizeof(q->err));
	if (len == 0)
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i]);

		if (strncmp(q->err, names[i], n) == 0 && q->err[n] == ':')
			return;
	}
	abort();
}

static void
opts_equal(const struct http_query_opts *a, const struct http_query_opts *b)
{
	check(a->set_priority == b->set_priority &&
	    a->set_delay == b->set_delay && a->set_run_at == b->set_run_at &&
	    a->set_ttr == b->set_ttr &&
	    a->set_max_attempts == b->set_max_attempts &&
	    a->run_now == b->run_now);
	check(!a->set_priority || a->priority == b->priority);
	check(!a->set_delay || a->delay == b->delay);
	check(!a->set_run_at || a->run_at == b->run_at);
	check(!a->set_ttr || a->ttr == b->ttr);
	check(!a->set_max_attempts || a->max_attempts == b->max_attempts);
}

/* Task options read with no error, written as a query, read the same. */
static void
opts_round_trip(const struct http_query_opts *o, bool now)
{
	char uri[512];
	size_t n = (size_t)snprintf(uri, sizeof(uri), "/v1/x?");
	struct http_query q = { .uri = uri };
	struct http_query_opts again;

	if ((o->set_delay && o->delay > DUR_ROUND_MAX) ||
	    (o->set_ttr && o->ttr > DUR_ROUND_MAX))
		return; /* a duration only a unit writes */
	if (o->set_priority)
		n += (size_t)snprintf(uri + n, sizeof(uri) - n,
		    "priority=%" PRIu32 "&", o->priority);
	if (o->set_delay)
		n += (size_t)snprintf(
		    uri + n, sizeof(uri) - n, "delay=%" PRIu64 "ms&", o->delay);
	if (o->set_run_at)
		n += (size_t)snprintf(
		    uri + n, sizeof(uri) - n, "run_at=%" PRIu64 "&", o->run_at);
	if (o->run_now)
		n += (size_t)snprintf(uri + n, sizeof(uri) - n, "run_at=now&");
	if (o->set_ttr)
		n += (size_t)snprintf(
		    uri + n, sizeof(uri) - n, "ttr=%" PRIu64 "ms&", o->ttr);
	if (o->set_max_attempts)
		snprintf(uri + n, sizeof(uri) - n, "max_attempts=%" PRIu32,
		    o->max_attempts);
	http_query_opts(&q, now, &again);
	check(q.err[0] == '\0');
	opts_equal(o, &again);
}

static void
query(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "tube", "priority", "delay",
		"run_at", "key", "state", "n" };
	static const char *const methods[] = { "GET", "POST", "PUT", "DELETE" };
	static const size_t caps[] = { 1, 8, 32, 256 };
	uint8_t variant = size > 0 ? data[0] : 0;
	const char *text = size > 0 ? (const char *)data + 1 : "";
	size_t tlen = size > 0 ? size - 1 : 0;
	char *uri = malloc(tlen + 1), *out = malloc(tlen + 1);
	struct http_query q;
	struct http_query_opts o;
	uint64_t v;
	size_t max, cap = caps[variant & 3];
	char val[256];

	check(uri != NULL && out != NULL);
	memcpy(uri, text, tlen);
	uri[tlen] = '\0';
	/* the whole text as one value, with and without '+' as a space */
	if (http_unescape(text, tlen, variant & 4, out, tlen + 1))
		value_round_trip("v", out, tlen + 1, tlen);
	/* named values, into buffers of a few sizes */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (http_query_get(uri, names[i], val, cap)) {
			check(http_query_has(uri, names[i]));
			value_round_trip(names[i], val, cap, tlen);
		}
		if (http_query_get_u64(uri, names[i], &v))
			check(http_query_get(uri, names[i], val, sizeof(val)));
	}
	/* the task options, as a put (run_at a number) or an update */
	q = (struct http_query) { .uri = uri };
	http_query_opts(&q, variant & 8, &o);
	check_err(&q);
	check(!o.run_now || (variant & 8));
	check(!(o.run_now && o.set_run_at));
	if (q.err[0] == '\0')
		opts_round_trip(&o, variant & 8);
	/* a put's own, after them: the first error stays */
	(void)http_query_dur(&q, "every", &v);
	(void)http_query_str(&q, "key", val,
	    MSG_KEY_MAX + 2 < sizeof(val) ? MSG_KEY_MAX + 2 : sizeof(val));
	(void)http_query_flag(&q, "replace");
	check_err(&q);
	/* the limit of a route's body, before it is read */
	max = http_api_body_max(methods[(variant >> 4) & 3], uri, PAYLOAD_MAX);
	check(max == 0 || max == 16 << 10 || max == 1 << 20 ||
	    max == PAYLOAD_MAX || max == MSG_SIZE_MAX ||
	    max == MSG_RESULT_MAX + 1); /* an ack's result */
	check(strcmp(methods[(variant >> 4) & 3], "GET") != 0 || max == 0);
	free(out);
	free(uri);
}

/* A duration or number as JSON: an integer when it fits one. */
static json_t *
jnum(uint64_t v)
{
	return v <= INT64_MAX ? json_integer((json_int_t)v) : NULL;
}

/* The accepted puts of `b`, written back as a batch body (each payload in
 * base64); NULL when one holds what JSON cannot say as it was read. */
static char *
puts_json(const struct http_api_batch *b, size_t *len)
{
	json_t *arr = json_array();
	char *text;

	check(arr != NULL);
	for (size_t i = 0; i < b->nputs; i++) {
		const struct msg_put *p = &b->puts[i];
		json_t *o = json_object(), *when = jnum(p->when);
		json_t *ttr = jnum(p->ttr), *every = jnum(p->period);
		char *b64 = malloc(base64_len(p->payload.len) + 1);

		check(o != NULL && b64 != NULL);
		base64_encode(b64, p->payload.p, p->payload.len);
		if (when == NULL || ttr == NULL || every == NULL) {
			json_decref(when);
			json_decref(ttr);
			json_decref(every);
			json_decref(o);
			json_decref(arr);
			free(b64);
			return NULL;
		}
		json_object_set_new(o, "payload_base64", json_string(b64));
		json_object_set_new(
		    o, "tube", json_stringn(p->tube.p, p->tube.len));
		json_object_set_new(o, "priority", json_integer(p->priority));
		json_object_set_new(o, p->at ? "run_at" : "delay", when);
		json_object_set_new(o, "ttr", ttr);
		json_object_set_new(
		    o, "max_attempts", json_integer(p->max_attempts));
		json_object_set_new(o, "every", every);
		if (p->key.p != NULL)
			json_object_set_new(
			    o, "key", json_stringn(p->key.p, p->key.len));
		json_object_set_new(o, "replace", json_boolean(p->replace));
		json_array_append_new(arr, o);
		free(b64);
	}
	text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	check(text != NULL);
	*len = strlen(text);
	return text;
}

static bool
str_equal(struct msg_str a, struct msg_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

static void
batch_puts(const uint8_t *data, size_t size)
{
	struct http_api_batch b, again;
	size_t ok = 0, len = 0;
	char *text;
	int rc = http_api_batch_puts(&b, data, size, "default");

	check(rc == 0 || rc == SLUICE_EINVAL || rc == SLUICE_ENOMEM);
	if (rc != 0) {
		http_api_batch_fini(&b);
		return;
	}
	check(b.n >= 1 && b.n <= MSG_BATCH_MAX && b.nputs <= b.n);
	for (size_t i = 0; i < b.n; i++) {
		const struct http_api_batch_err *e = &b.errs[i];
		size_t mlen = strnlen(e->msg, sizeof(e->msg));

		check(mlen < sizeof(e->msg));
		if (e->code == 0) {
			ok++;
			continue;
		}
		check(e->code == SLUICE_EINVAL && mlen > 0);
	}
	check(ok == b.nputs);
	/* written back, the accepted items read the same, all accepted */
	if (b.nputs > 0 && (text = puts_json(&b, &len)) != NULL) {
		check(http_api_batch_puts(&again, text, len, "other") == 0);
		check(again.n == b.nputs && again.nputs == b.nputs);
		for (size_t i = 0; i < b.nputs; i++) {
			const struct msg_put *p = &b.puts[i],
			                     *q = &again.puts[i];

			check(str_equal(p->tube, q->tube));
			check(str_equal(p->payload, q->payload));
			check(str_equal(p->key, q->key));
			check(p->priority == q->priority &&
			    p->when == q->when && p->at == q->at &&
			    p->ttr == q->ttr &&
			    p->max_attempts == q->max_attempts &&
			    p->period == q->period && p->replace == q->replace);
		}
		http_api_batch_fini(&again);
		free(text);
	}
	http_api_batch_fini(&b);
}

static void
batch_ids(const uint8_t *data, size_t size, bool ack)
{
	static struct msg_ack_item items[MSG_BATCH_MAX], again[MSG_BATCH_MAX];
	size_t n = http_api_batch_ids(data, size, ack, items);
	json_t *arr;
	char *text;

	check(n <= MSG_BATCH_MAX);
	if (n == 0)
		return;
	arr = json_array();
	check(arr != NULL);
	for (size_t i = 0; i < n; i++) {
		check(items[i].id >= 1 && items[i].id <= INT64_MAX);
		check(ack ? items[i].lease <= INT64_MAX : items[i].lease == 0);
		json_array_append_new(arr,
		    ack ? json_pack("{sIsI}", "id", (json_int_t)items[i].id,
		              "lease", (json_int_t)items[i].lease)
		        : json_integer((json_int_t)items[i].id));
	}
	text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	check(text != NULL);
	check(http_api_batch_ids(text, strlen(text), ack, again) == n);
	for (size_t i = 0; i < n; i++)
		check(again[i].id == items[i].id &&
		    again[i].lease == items[i].lease);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] & 3) {
	case 0:
		query(data + 1, size - 1);
		break;
	case 1:
		batch_puts(data + 1, size - 1);
		break;
	default:
		batch_ids(data + 1, size - 1, (data[0] & 3) == 2);
		break;
	}
	return 0;
}
