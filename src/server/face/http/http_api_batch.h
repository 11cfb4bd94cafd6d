/* http_api_batch - the JSON bodies of the task API's batches: a batch
 * put's items (POST /v1/tubes/T/tasks?batch=1) and the ids of an ack or
 * delete batch (POST /v1/tasks/ack, /v1/tasks/delete), read into the
 * wire request's items. Pure: no I/O, no nng; fuzzed
 * (tests/fuzz/fuzz_http_query.c). */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_API_BATCH_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_API_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "proto/msg.h"

enum {
	/* A batch body's JSON: 1..MSG_BATCH_MAX items, each an object of a
	 * dozen fields at most; a body of more values (or deeper) is
	 * refused before it is parsed (json_within): the parse's memory
	 * stays about the body's size plus a few MB. */
	HTTP_API_BATCH_VALUES_MAX = MSG_BATCH_MAX * 32 + 1,
	HTTP_API_BATCH_DEPTH_MAX = 4,
	HTTP_API_BATCH_ERR_MAX = 128,
};

/* An item of a batch refused here, before the core saw it. */
struct http_api_batch_err {
	int code; /* 0: sent to the core */
	char msg[HTTP_API_BATCH_ERR_MAX];
};

/* A batch put's body, read: its `n` items in order, each accepted (then
 * one of `puts`, in order) or refused (`errs[i].code`). The puts borrow
 * from the parse, from `blobs` (payloads decoded from base64) and from
 * the tube given; all live until http_api_batch_fini. */
struct http_api_batch {
	json_t *arr;
	size_t n;
	size_t nputs;
	struct msg_put *puts;
	struct http_api_batch_err *errs;
	void **blobs; /* [0, n): decoded payloads; [n, 2n): parents */
};

/* Reads a batch put's `len` bytes at `body`: a JSON array of
 * 1..MSG_BATCH_MAX objects {"payload":TEXT | "payload_base64":B64,
 * "tube", "priority", "delay", "run_at", "ttr", "max_attempts", "every",
 * "key", "replace", "group", "after", "after_keys",
 * "on_parent_failure"} (durations in ms or as text, "10s"), each item of
 * `tube` unless it names its own. Returns 0 and `*b` (even when every
 * item is refused: see errs), SLUICE_EINVAL when the body is not such an
 * array, SLUICE_ENOMEM; `*b` needs http_api_batch_fini whatever the
 * result. */
int http_api_batch_puts(
    struct http_api_batch *b, const void *body, size_t len, const char *tube);

/* Frees what `b` holds (not `b`); accepts a zeroed or half-read one. */
void http_api_batch_fini(struct http_api_batch *b);

/* Reads an ack batch [{"id":N,"lease":L},...] (`ack`) or a delete batch
 * [N,...] of `len` bytes at `body` into items (lease 0 for a delete):
 * 1..MSG_BATCH_MAX items, every id >= 1 and lease >= 0. Returns how many,
 * or 0 when the body is not such an array. */
size_t http_api_batch_ids(const void *body, size_t len, bool ack,
    struct msg_ack_item items[MSG_BATCH_MAX]);

#endif
