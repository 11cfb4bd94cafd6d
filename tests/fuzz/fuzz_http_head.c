/* fuzz_http_head - the HTTP face's head parser and chunked decoder on
 * arbitrary bytes (src/server/face/http/http_head.c, http_body.c). The first
 * byte picks the decoder. Beyond "never crash, never read out of bounds, free
 * what it allocates":
 *  - a head accepted has a token method, a target that starts with '/',
 *    an HTTP/1.x version and, in HTTP/1.1, a Host; a head refused has a
 *    status of 400, 431, 505 (or 500) with its reason and text;
 *  - the chunked decoder never announces a chunk past 16 hex digits,
 *    stops at its end (nothing after DONE is taken), and a refusal says
 *    why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/face/http/http_body.h"
#include "server/face/http/http_head.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
head(const uint8_t *data, size_t size)
{
	char *p = malloc(size + 1);
	struct http_head h;
	const char *reason = NULL, *text = NULL, *v;
	int st;

	check(p != NULL);
	memcpy(p, data, size);
	st = http_head_parse(p, size, &h, &reason, &text);
	if (st != 0) {
		check(st == 400 || st == 431 || st == 505 || st == 500);
		check(reason != NULL && text != NULL && h.req == NULL);
		free(p);
		return;
	}
	check(nng_http_req_get_method(h.req)[0] != '\0');
	check(nng_http_req_get_uri(h.req)[0] == '/');
	v = nng_http_req_get_version(h.req);
	check(strcmp(v, "HTTP/1.1") == 0 || strcmp(v, "HTTP/1.0") == 0);
	check(strcmp(v, "HTTP/1.0") == 0 ||
	    nng_http_req_get_header(h.req, "Host") != NULL);
	check(!h.head_only ||
	    strcmp(nng_http_req_get_method(h.req), "HEAD") == 0);
	nng_http_req_free(h.req);
	free(p);
}

static void
chunks(const uint8_t *data, size_t size)
{
	struct http_chunks c;

	http_chunks_init(&c);
	for (size_t i = 0; i < size;) {
		enum http_chunks_step st = http_chunks_byte(&c, data[i++]);

		if (st == HTTP_CHUNKS_BAD) {
			check(c.why != NULL);
			return;
		}
		if (st == HTTP_CHUNKS_DONE) {
			/* the end: another byte is refused, never taken */
			check(http_chunks_byte(&c, 'x') == HTTP_CHUNKS_BAD);
			return;
		}
		if (st == HTTP_CHUNKS_DATA) {
			check(c.size > 0 && c.digits <= HTTP_CHUNK_DIGITS_MAX);
			i += c.size < size - i ? (size_t)c.size : size - i;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		chunks(data + 1, size - 1);
	else
		head(data + 1, size - 1);
	return 0;
}
