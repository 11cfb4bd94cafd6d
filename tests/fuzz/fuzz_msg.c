/* fuzz_msg - the wire decoders on arbitrary bytes.
 *
 * The first byte picks the decoder (odd: request, as 'q' in the corpus;
 * even: reply, as 'r'), the rest is the message. Beyond "never crash, never
 * read out of bounds", whatever decodes must encode again, that encoding
 * must decode, and encoding it once more gives the same bytes: the decoder
 * accepts nothing the encoder would refuse. The decoded message is also
 * encoded as it is, its lists iterators (a message sent on): the same
 * bytes as with its lists made arrays. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/t_msg.h"
#include "proto/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
req_round(const uint8_t *p, size_t len)
{
	struct t_mat mat = { 0 };
	struct buf a, b, c;
	struct msg_req q;

	if (msg_decode_req(p, len, NULL, &q) != 0)
		return;
	buf_init(&a);
	buf_init(&b);
	buf_init(&c);
	check(msg_encode_req(&c, &q) == 0);
	if (!t_mat_req(&q, &mat))
		goto out;
	check(msg_encode_req(&a, &q) == 0);
	check(a.len == c.len && memcmp(a.data, c.data, a.len) == 0);
	t_mat_free(&mat);
	check(msg_decode_req(a.data, a.len, NULL, &q) == 0);
	if (!t_mat_req(&q, &mat))
		goto out;
	check(msg_encode_req(&b, &q) == 0);
	check(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
out:
	t_mat_free(&mat);
	buf_fini(&a);
	buf_fini(&b);
	buf_fini(&c);
}

static void
rep_round(const uint8_t *p, size_t len)
{
	struct t_mat mat = { 0 };
	struct buf a, b, c;
	struct msg_rep m;

	if (msg_decode_rep(p, len, NULL, &m) != 0)
		return;
	buf_init(&a);
	buf_init(&b);
	buf_init(&c);
	check(msg_encode_rep(&c, &m) == 0);
	if (!t_mat_rep(&m, &mat))
		goto out;
	check(msg_encode_rep(&a, &m) == 0);
	check(a.len == c.len && memcmp(a.data, c.data, a.len) == 0);
	t_mat_free(&mat);
	check(msg_decode_rep(a.data, a.len, NULL, &m) == 0);
	if (!t_mat_rep(&m, &mat))
		goto out;
	check(msg_encode_rep(&b, &m) == 0);
	check(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
out:
	t_mat_free(&mat);
	buf_fini(&a);
	buf_fini(&b);
	buf_fini(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msg_limits small = { .msg_max = 512, .payload_max = 16 };
	struct msg_req q;
	struct msg_rep m;

	if (size == 0)
		return 0;
	if (data[0] & 1) {
		req_round(data + 1, size - 1);
		(void)msg_decode_req(data + 1, size - 1, &small, &q);
		(void)msg_req_op(data + 1, size - 1);
	} else {
		rep_round(data + 1, size - 1);
		(void)msg_decode_rep(data + 1, size - 1, &small, &m);
	}
	return 0;
}
