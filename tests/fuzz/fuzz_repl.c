/* fuzz_repl - the replication protocol's decoders on arbitrary bytes.
 *
 * The first byte picks the decoder (0..5: fetch, fetch reply, ack, ack
 * reply, snap, snap reply), the rest is the message. Beyond "never crash,
 * never read out of bounds": whatever decodes encodes again to bytes that
 * decode to the same message, what a fetch reply's records claim stays
 * inside the message, and a fetch's token (flag 0x01) is present exactly
 * when the flag is set, 1..MSG_TOKEN_MAX bytes inside the message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/replmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
same(const struct buf *a, const uint8_t *p, size_t len)
{
	check(a->len == len && memcmp(a->data, p, len) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data + 1;
	size_t len = size - 1;
	struct buf b;

	if (size < 1)
		return 0;
	buf_init(&b);
	switch (data[0] % 6) {
	case 0: {
		struct replmsg_fetch_req q;

		if (replmsg_decode_fetch(p, len, &q) == 0) {
			check((q.token.len > 0) ==
			    ((p[3] & REPLMSG_FETCH_F_TOKEN) != 0));
			check(q.token.len <= MSG_TOKEN_MAX);
			check(q.token.len == 0 ||
			    ((const uint8_t *)q.token.p > p &&
			        (const uint8_t *)q.token.p + q.token.len ==
			            p + len));
			check(replmsg_encode_fetch(&b, &q) == 0);
			same(&b, p, len);
		}
		break;
	}
	case 1: {
		struct replmsg_fetch_rep r;

		if (replmsg_decode_fetch_rep(p, len, &r) == 0) {
			check(r.records_len <= len);
			check(replmsg_encode_fetch_rep(&b, &r) == 0);
			same(&b, p, len);
		}
		break;
	}
	case 2: {
		struct replmsg_ack_req q;

		if (replmsg_decode_ack(p, len, &q) == 0) {
			check(replmsg_encode_ack(&b, &q) == 0);
			same(&b, p, len);
		}
		break;
	}
	case 3: {
		uint64_t epoch;

		if (replmsg_decode_ack_rep(p, len, &epoch) == 0) {
			check(replmsg_encode_ack_rep(&b, epoch) == 0);
			same(&b, p, len);
		}
		break;
	}
	case 4: {
		struct replmsg_snap_req q;

		if (replmsg_decode_snap(p, len, &q) == 0) {
			check(replmsg_encode_snap(&b, &q) == 0);
			same(&b, p, len);
		}
		break;
	}
	default: {
		struct replmsg_snap_rep r;
		struct replmsg_epoch *h;

		if (replmsg_decode_snap_rep(p, len, &r) != 0)
			break;
		h = calloc(r.nhist ? r.nhist : 1, sizeof(*h));
		check(h != NULL);
		for (uint32_t i = 0; i < r.nhist; i++)
			h[i] = replmsg_hist_at(&r, i);
		r.hist = h;
		check(replmsg_encode_snap_rep(&b, &r) == 0);
		same(&b, p, len);
		free(h);
		break;
	}
	}
	buf_fini(&b);
	return 0;
}
