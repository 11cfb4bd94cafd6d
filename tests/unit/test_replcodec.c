/* Tests of src/proto/replmsg: the fetch request with and without its
 * replication token (flag 0x01 of the head), byte for byte as
 * docs/replication.md describes it, and what the decoder refuses. */
#include <string.h>

#include "proto/replmsg.h"
#include "sluice.h"
#include "t_lib.h"

#define S(lit) ((struct msg_str) { lit, sizeof(lit) - 1 })

static struct replmsg_fetch_req
sample(struct msg_str token)
{
	return (struct replmsg_fetch_req) {
		.from_lsn = 5,
		.last_epoch = 2,
		.last_nonce = 0x1234,
		.epoch_start = 1,
		.durable_lsn = 4,
		.max_bytes = 1 << 20,
		.wait_ms = 500,
		.url = S("tcp://n2"),
		.token = token,
	};
}

static void
assert_same(
    const struct replmsg_fetch_req *a, const struct replmsg_fetch_req *b)
{
	assert_int_equal(a->from_lsn, b->from_lsn);
	assert_int_equal(a->last_epoch, b->last_epoch);
	assert_int_equal(a->last_nonce, b->last_nonce);
	assert_int_equal(a->epoch_start, b->epoch_start);
	assert_int_equal(a->durable_lsn, b->durable_lsn);
	assert_int_equal(a->max_bytes, b->max_bytes);
	assert_int_equal(a->wait_ms, b->wait_ms);
	assert_int_equal(a->url.len, b->url.len);
	assert_memory_equal(a->url.p, b->url.p, a->url.len);
	assert_int_equal(a->token.len, b->token.len);
	if (a->token.len > 0)
		assert_memory_equal(a->token.p, b->token.p, a->token.len);
}

/* Without a token the request is what every release sent: flags 0,
 * nothing after the URL. A leader without --auth reads it as before. */
static void
test_fetch_without_a_token_is_unchanged(void **state)
{
	struct replmsg_fetch_req q = sample(S("")), d;
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(replmsg_encode_fetch(&b, &q), 0);
	assert_int_equal(b.len, 4 + 5 * 8 + 2 * 4 + 2 + 8);
	assert_memory_equal(b.data, "\x53\x01\x18\x00", 4);
	assert_int_equal(replmsg_decode_fetch(b.data, b.len, &d), 0);
	assert_same(&q, &d);
	assert_int_equal(d.token.len, 0);
	buf_fini(&b);
}

/* The example of docs/replication.md ("Flags"), byte for byte. */
static const uint8_t doc_example[] = { 0x53, 0x01, 0x18, 0x01, /* head */
	0x05, 0, 0, 0, 0, 0, 0, 0,                             /* from */
	0x02, 0, 0, 0, 0, 0, 0, 0,                             /* epoch */
	0x34, 0x12, 0, 0, 0, 0, 0, 0,                          /* nonce */
	0x01, 0, 0, 0, 0, 0, 0, 0,                             /* start */
	0x04, 0, 0, 0, 0, 0, 0, 0,                             /* durable */
	0x00, 0x00, 0x10, 0x00,                                /* max */
	0xf4, 0x01, 0x00, 0x00,                                /* wait */
	0x08, 0x00, 't', 'c', 'p', ':', '/', '/', 'n', '2',    /* url */
	0x06, 0x00, 's', '3', 'c', 'r', 'e', 't' };            /* token */

static void
test_fetch_with_a_token_round_trips(void **state)
{
	struct replmsg_fetch_req q = sample(S("s3cret")), d;
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(replmsg_encode_fetch(&b, &q), 0);
	assert_int_equal(b.len, sizeof(doc_example));
	assert_memory_equal(b.data, doc_example, sizeof(doc_example));
	assert_int_equal(replmsg_decode_fetch(b.data, b.len, &d), 0);
	assert_same(&q, &d);
	buf_fini(&b);
}

static void
test_fetch_token_errors(void **state)
{
	char big[MSG_TOKEN_MAX + 1];
	struct replmsg_fetch_req q, d;
	struct buf b;
	size_t url_end = 4 + 5 * 8 + 2 * 4 + 2 + 8;

	(void)state;
	memset(big, 't', sizeof(big));
	buf_init(&b);

	/* longer than MSG_TOKEN_MAX: not encoded */
	q = sample((struct msg_str) { big, sizeof(big) });
	assert_int_equal(replmsg_encode_fetch(&b, &q), SLUICE_ELIMIT);

	/* the longest token passes */
	buf_reset(&b);
	q = sample((struct msg_str) { big, MSG_TOKEN_MAX });
	assert_int_equal(replmsg_encode_fetch(&b, &q), 0);
	assert_int_equal(replmsg_decode_fetch(b.data, b.len, &d), 0);
	assert_int_equal(d.token.len, MSG_TOKEN_MAX);

	/* the flag without the token's bytes: truncated */
	buf_reset(&b);
	q = sample(S(""));
	assert_int_equal(replmsg_encode_fetch(&b, &q), 0);
	b.data[3] = REPLMSG_FETCH_F_TOKEN;
	assert_int_equal(
	    replmsg_decode_fetch(b.data, b.len, &d), SLUICE_ETRUNC);

	/* the flag with an empty token: refused (no token is no flag) */
	buf_put_u16(&b, 0);
	assert_int_equal(
	    replmsg_decode_fetch(b.data, b.len, &d), SLUICE_EINVAL);

	/* a token without the flag: trailing bytes */
	buf_reset(&b);
	q = sample(S("s3cret"));
	assert_int_equal(replmsg_encode_fetch(&b, &q), 0);
	b.data[3] = 0;
	assert_int_equal(
	    replmsg_decode_fetch(b.data, b.len, &d), SLUICE_EPROTO);

	/* an unknown flag */
	b.data[3] = REPLMSG_FETCH_F_TOKEN | 0x02;
	assert_int_equal(
	    replmsg_decode_fetch(b.data, b.len, &d), SLUICE_EPROTO);

	/* cut anywhere in the token: truncated */
	b.data[3] = REPLMSG_FETCH_F_TOKEN;
	for (size_t n = url_end; n < b.len; n++)
		assert_int_equal(
		    replmsg_decode_fetch(b.data, n, &d), SLUICE_ETRUNC);
	buf_fini(&b);
}

/* The other requests carry no flags: a set bit is refused. */
static void
test_other_requests_refuse_flags(void **state)
{
	struct replmsg_ack_req a = { 9 };
	struct replmsg_snap_req s = { 7, 0, 4096 };
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(replmsg_encode_ack(&b, &a), 0);
	b.data[3] = REPLMSG_FETCH_F_TOKEN;
	assert_int_equal(replmsg_decode_ack(b.data, b.len, &a), SLUICE_EPROTO);
	buf_reset(&b);
	assert_int_equal(replmsg_encode_snap(&b, &s), 0);
	b.data[3] = REPLMSG_FETCH_F_TOKEN;
	assert_int_equal(replmsg_decode_snap(b.data, b.len, &s), SLUICE_EPROTO);
	buf_fini(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fetch_without_a_token_is_unchanged),
		cmocka_unit_test(test_fetch_with_a_token_round_trips),
		cmocka_unit_test(test_fetch_token_errors),
		cmocka_unit_test(test_other_requests_refuse_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
