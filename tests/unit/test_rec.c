/* Tests of src/log/rec.c: one record's encoding, and each clause of the
 * valid-record rule. */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "log/rec.h"
#include "sluice.h"
#include "t_lib.h"
#include "util/buf.h"

static void
encode_one(
    struct buf *b, uint16_t type, uint64_t lsn, const void *body, size_t len)
{
	struct rec_hdr h = {
		.type = type, .lsn = lsn, .epoch = 3, .time = 1700000000123
	};

	assert_int_equal(rec_encode(b, &h, body, len), 0);
}

/* A record reads back as written, padded to 8 bytes. */
static void
test_rec_round_trips_header_and_body(void **state)
{
	struct rec_view v;
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_one(&b, 7, 42, "hello", 5);
	assert_int_equal(b.len, 48);
	assert_int_equal(rec_decode(b.data, b.len, &v), REC_VALID);
	assert_int_equal(v.hdr.len, 45);
	assert_int_equal(v.hdr.type, 7);
	assert_int_equal(v.hdr.version, REC_VERSION);
	assert_int_equal(v.hdr.flags, 0);
	assert_true(v.hdr.lsn == 42);
	assert_true(v.hdr.epoch == 3);
	assert_true(v.hdr.time == 1700000000123);
	assert_int_equal(v.body_len, 5);
	assert_memory_equal(v.body, "hello", 5);
	assert_int_equal(v.size, 48);
	assert_int_equal(v.why, REC_WHY_NONE);
	/* The padding is zeros. */
	for (size_t i = 45; i < 48; i++)
		assert_int_equal(b.data[i], 0);
	buf_fini(&b);
}

/* Bodies of every length up to a few words keep records aligned, and an
 * empty body is a valid 40-byte record. */
static void
test_rec_sizes_are_multiples_of_eight(void **state)
{
	uint8_t body[64];
	struct rec_view v;
	struct buf b;

	(void)state;
	memset(body, 0xa5, sizeof(body));
	for (size_t len = 0; len <= sizeof(body); len++) {
		buf_init(&b);
		encode_one(&b, 1, len + 1, body, len);
		assert_int_equal(b.len % 8, 0);
		assert_int_equal(b.len, rec_size(len));
		assert_int_equal(rec_decode(b.data, b.len, &v), REC_VALID);
		assert_int_equal(v.body_len, len);
		buf_fini(&b);
	}
	assert_int_equal(rec_size(0), 40);
}

/* Records back to back decode one after another. */
static void
test_rec_decodes_records_back_to_back(void **state)
{
	struct rec_view v;
	struct buf b;
	size_t off = 0;

	(void)state;
	buf_init(&b);
	for (int i = 1; i <= 10; i++)
		encode_one(
		    &b, (uint16_t)i, (uint64_t)i, "abcdefghijk", (size_t)i);
	for (int i = 1; i <= 10; i++) {
		assert_int_equal(
		    rec_decode(b.data + off, b.len - off, &v), REC_VALID);
		assert_true(v.hdr.lsn == (uint64_t)i);
		off += v.size;
	}
	assert_int_equal(off, b.len);
	assert_int_equal(rec_decode(b.data + off, 0, &v), REC_END);
	buf_fini(&b);
}

/* Zeros (preallocated space) are the end of the data, not an error. */
static void
test_rec_zero_length_is_end_of_data(void **state)
{
	uint8_t zeros[64] = { 0 };
	struct rec_view v;

	(void)state;
	assert_int_equal(rec_decode(zeros, sizeof(zeros), &v), REC_END);
	assert_int_equal(rec_decode(zeros, 3, &v), REC_END);
	assert_int_equal(rec_decode(zeros, 0, &v), REC_END);
}

static enum rec_why
why_after(uint8_t *p, size_t len)
{
	struct rec_view v;

	assert_int_equal(rec_decode(p, len, &v), REC_INVALID);
	return v.why;
}

/* Each field checked alone makes the record invalid, with its reason. */
static void
test_rec_rejects_each_bad_field(void **state)
{
	struct buf b;
	uint8_t *p;

	(void)state;
	buf_init(&b);
	encode_one(&b, 9, 1, "0123456789abcdef", 16);
	p = b.data;

	le_store_u32(p, 39); /* below the header */
	assert_int_equal(why_after(p, b.len), REC_WHY_LEN);
	le_store_u32(p, REC_MAX_LEN + 1u);
	assert_int_equal(why_after(p, b.len), REC_WHY_LEN);
	le_store_u32(p, 56);

	p[6] = REC_VERSION + 1;
	assert_int_equal(why_after(p, b.len), REC_WHY_VERSION);
	p[6] = 0;
	assert_int_equal(why_after(p, b.len), REC_WHY_VERSION);
	p[6] = REC_VERSION;

	p[7] = 1;
	assert_int_equal(why_after(p, b.len), REC_WHY_FLAGS);
	p[7] = 0;

	le_store_u16(p + 4, 0);
	assert_int_equal(why_after(p, b.len), REC_WHY_TYPE);
	le_store_u16(p + 4, 9);

	/* Back to valid once every field is restored. */
	{
		struct rec_view v;

		assert_int_equal(rec_decode(p, b.len, &v), REC_VALID);
	}
	buf_fini(&b);
}

/* A change to any checksummed byte - header or body - fails the
 * checksum; the checksum field itself too. */
static void
test_rec_checksum_covers_header_and_body(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_one(&b, 9, 77, "0123456789abcdef", 16);
	for (size_t i = 8; i < 56; i++) {
		b.data[i] ^= 0x10;
		assert_int_equal(why_after(b.data, b.len), REC_WHY_CHECKSUM);
		b.data[i] ^= 0x10;
	}
	buf_fini(&b);
}

/* Bytes that end inside the record (header or body) are a record cut
 * short, never a read past the end. */
static void
test_rec_rejects_records_cut_short(void **state)
{
	struct buf b;
	uint8_t *copy;

	(void)state;
	buf_init(&b);
	encode_one(&b, 9, 1, "0123456789abcdef0123", 20);
	for (size_t n = 4; n < b.len; n++) {
		/* An exact-size heap copy lets ASan catch an over-read. */
		copy = malloc(n);
		assert_non_null(copy);
		memcpy(copy, b.data, n);
		assert_int_equal(why_after(copy, n),
		    n < REC_HDR_SIZE ? REC_WHY_SHORT : REC_WHY_TRUNC);
		free(copy);
	}
	buf_fini(&b);
}

/* The encoder refuses what the decoder would refuse. */
static void
test_rec_encode_refuses_bad_input(void **state)
{
	struct rec_hdr h = { .type = 0, .lsn = 1 };
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(rec_encode(&b, &h, "x", 1), SLUICE_EINVAL);
	h.type = 1;
	h.flags = 1;
	assert_int_equal(rec_encode(&b, &h, "x", 1), SLUICE_EINVAL);
	h.flags = 0;
	assert_int_equal(
	    rec_encode(&b, &h, "x", (size_t)REC_MAX_BODY + 1), SLUICE_EINVAL);
	assert_int_equal(b.len, 0);
	buf_fini(&b);
}

/* The checksum is XXH3_64bits over header bytes [0, 32) then the body,
 * as if they were one buffer: what docs/log-format.md promises other
 * readers of the format. */
static void
test_rec_checksum_is_xxh3_of_header_then_body(void **state)
{
	uint8_t joined[32 + 11];
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_one(&b, 5, 9, "hello world", 11);
	memcpy(joined, b.data, 32);
	memcpy(joined + 32, b.data + REC_HDR_SIZE, 11);
	assert_true(
	    le_load_u64(b.data + 32) == XXH3_64bits(joined, sizeof(joined)));
	buf_fini(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rec_round_trips_header_and_body),
		cmocka_unit_test(test_rec_sizes_are_multiples_of_eight),
		cmocka_unit_test(test_rec_decodes_records_back_to_back),
		cmocka_unit_test(test_rec_zero_length_is_end_of_data),
		cmocka_unit_test(test_rec_rejects_each_bad_field),
		cmocka_unit_test(test_rec_checksum_covers_header_and_body),
		cmocka_unit_test(test_rec_rejects_records_cut_short),
		cmocka_unit_test(test_rec_encode_refuses_bad_input),
		cmocka_unit_test(test_rec_checksum_is_xxh3_of_header_then_body),
	};
	return cmocka_run_group_tests_name("rec", tests, NULL, NULL);
}
