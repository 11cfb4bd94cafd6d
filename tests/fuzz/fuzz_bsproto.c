/* fuzz_bsproto - beanstalk's command parser on arbitrary bytes, fed in
 * pieces whose sizes come from the input, so every split of the stream
 * is tried. Beyond "never crash, never read out of bounds": a call never
 * uses more bytes than it was given, a put's body lies inside them, a
 * parsed tube name is valid and maps to sluice and back unchanged, and
 * the parser always makes progress on a stream that is complete. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/face/beanstalk/bs_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
check_cmd(const char *p, size_t len, const struct bs_cmd *c)
{
	char s[BS_NAME_MAX], b[BS_NAME_MAX];
	size_t n;

	if (c->kind == BS_PUT) {
		check(c->body >= p && c->body + c->body_len <= p + len);
		check(c->body_len <= 64);
		check(c->ttr >= 1);
	}
	if (c->tube != NULL) {
		check(c->tube >= p && c->tube + c->tube_len <= p + len);
		check(bs_name_valid(c->tube, c->tube_len));
		n = bs_tube_to_sluice(c->tube, c->tube_len, s);
		if (n > 0) {
			check(bs_tube_from_sluice(s, n, b) == c->tube_len);
			check(memcmp(b, c->tube, c->tube_len) == 0);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bs_parser ps = { 0 };
	const char *p;
	size_t off = 0, avail, step;
	struct bs_cmd c;
	enum bs_err err;

	if (size < 1)
		return 0;
	step = (size_t)data[0] % 32 + 1;
	p = (const char *)data + 1;
	size--;
	for (avail = step < size ? step : size; off < size;) {
		size_t n = bs_parse(&ps, p + off, avail - off, 64, &c, &err);

		check(n <= avail - off);
		if (n > 0) {
			check_cmd(p + off, avail - off, &c);
			off += n;
			continue;
		}
		if (avail == size)
			break; /* a partial command at the end */
		avail = avail + step < size ? avail + step : size;
	}
	return 0;
}
