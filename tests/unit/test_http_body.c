/* http_body's pure parts: the chunked coding decoded byte by byte (what
 * comes out, where it stops, every malformed form refused with a reason)
 * and a request's framing (Content-Length, Transfer-Encoding, both). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/face/http/http_body.h"

/* Decodes `in` (its first `n` bytes) as the chunked coding; the data
 * into out. Returns the bytes consumed up to DONE, or -1 when refused
 * (why in *why), or -2 when it needs more. */
static long
decode(const char *in, size_t n, char *out, size_t *out_len, const char **why)
{
	struct http_chunks c;
	size_t i = 0, o = 0;

	http_chunks_init(&c);
	while (i < n) {
		enum http_chunks_step st =
		    http_chunks_byte(&c, (uint8_t)in[i++]);

		if (st == HTTP_CHUNKS_BAD) {
			*why = c.why;
			return -1;
		}
		if (st == HTTP_CHUNKS_DONE) {
			*out_len = o;
			return (long)i;
		}
		if (st == HTTP_CHUNKS_DATA) {
			if (c.size > n - i)
				return -2;
			memcpy(out + o, in + i, c.size);
			o += c.size;
			i += c.size;
		}
	}
	return -2;
}

static void
test_chunks_decode(void **state)
{
	static const char in[] = "5\r\nhello\r\n1;ext=\"a b\"\r\n \r\n"
	                         "A\r\n0123456789\r\n0\r\nTrailer: x\r\n"
	                         "Another: y\r\n\r\nGET / HTTP/1.1\r\n";
	char out[64];
	size_t len = 0;
	const char *why = NULL;
	long used;

	(void)state;
	used = decode(in, sizeof(in) - 1, out, &len, &why);
	assert_int_equal(len, 16);
	assert_memory_equal(out, "hello 0123456789", 16);
	/* it stops at the end of the coding: the next request stays */
	assert_string_equal(in + used, "GET / HTTP/1.1\r\n");
	/* the last chunk alone, upper-case hex, leading zeros */
	assert_int_equal(decode("0\r\n\r\n", 5, out, &len, &why), 5);
	assert_int_equal(len, 0);
	assert_int_equal(decode("00Ff\r\n", 6, out, &len, &why), -2);
}

static void
test_chunks_refused(void **state)
{
	static const char *const bad[] = {
		"zz\r\n",                 /* not hex */
		"\r\n",                   /* no size */
		"-1\r\n",                 /* a sign */
		"3\nabc\r\n0\r\n\r\n",    /* LF without CR */
		"3\r\nabcd\r\n0\r\n\r\n", /* longer than its size */
		"3\r\nabc\n0\r\n\r\n",    /* no CRLF after the data */
		"11111111111111111\r\n",  /* 17 hex digits */
		"0\r\nTrailer: x\rX",     /* a trailer's CR without LF */
		"0\r\n\rX",               /* the end's CR without LF */
		"5;\n",                   /* an extension ended by LF */
	};
	char out[64];
	size_t len;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		if (decode(bad[i], strlen(bad[i]), out, &len, &why) != -1)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(why);
		assert_non_null(strstr(why, "chunked body"));
	}
}

static void
test_chunks_bounded(void **state)
{
	struct http_chunks c;
	enum http_chunks_step st = HTTP_CHUNKS_MORE;
	size_t i;

	(void)state;
	/* extensions past HTTP_CHUNK_EXT_MAX */
	http_chunks_init(&c);
	http_chunks_byte(&c, '1');
	http_chunks_byte(&c, ';');
	for (i = 0; i < HTTP_CHUNK_EXT_MAX + 1 && st != HTTP_CHUNKS_BAD; i++)
		st = http_chunks_byte(&c, 'e');
	assert_int_equal(st, HTTP_CHUNKS_BAD);
	/* trailers past HTTP_TRAILERS_MAX */
	http_chunks_init(&c);
	http_chunks_byte(&c, '0');
	http_chunks_byte(&c, '\r');
	http_chunks_byte(&c, '\n');
	st = HTTP_CHUNKS_MORE;
	for (i = 0; i < HTTP_TRAILERS_MAX * 2 && st != HTTP_CHUNKS_BAD; i++)
		st = http_chunks_byte(&c,
		    i % 40 == 38       ? '\r'
		        : i % 40 == 39 ? '\n'
		                       : 't');
	assert_int_equal(st, HTTP_CHUNKS_BAD);
	assert_true(i <= HTTP_TRAILERS_MAX + 2);
}

static void
test_framing(void **state)
{
	static const struct {
		const char *cl, *te;
		int status;
		bool chunked;
		uint64_t length;
	} cases[] = {
		{ NULL, NULL, 0, false, 0 },
		{ "12", NULL, 0, false, 12 },
		{ " 7 ", NULL, 0, false, 7 },
		{ NULL, "chunked", 0, true, 0 },
		{ NULL, "Chunked ", 0, true, 0 },
		{ "5", "chunked", 400, false, 0 },
		{ NULL, "gzip, chunked", 501, false, 0 },
		{ NULL, "identity", 501, false, 0 },
		{ "1x", NULL, 400, false, 0 },
		{ "-1", NULL, 400, false, 0 },
		{ "5, 5", NULL, 400, false, 0 },
		{ "", NULL, 400, false, 0 },
		{ "99999999999999999999", NULL, 400, false, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		nng_http_req *req;
		struct http_framing f;
		const char *why = NULL;
		int st;

		assert_int_equal(nng_http_req_alloc(&req, NULL), 0);
		if (cases[i].cl != NULL)
			assert_int_equal(nng_http_req_set_header(req,
			                     "Content-Length", cases[i].cl),
			    0);
		if (cases[i].te != NULL)
			assert_int_equal(nng_http_req_set_header(req,
			                     "Transfer-Encoding", cases[i].te),
			    0);
		st = http_body_framing(req, &f, &why);
		if (st != cases[i].status)
			fail_msg(
			    "case %zu: %d, not %d", i, st, cases[i].status);
		if (st == 0) {
			assert_int_equal(f.chunked, cases[i].chunked);
			assert_int_equal(f.length, cases[i].length);
			assert_int_equal(http_body_pending(&f),
			    cases[i].chunked || cases[i].length > 0);
		} else {
			assert_non_null(why);
		}
		nng_http_req_free(req);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chunks_decode),
		cmocka_unit_test(test_chunks_refused),
		cmocka_unit_test(test_chunks_bounded),
		cmocka_unit_test(test_framing),
	};
	return cmocka_run_group_tests_name("http_body", tests, NULL, NULL);
}
