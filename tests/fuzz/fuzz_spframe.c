/* fuzz_spframe - the SP-over-TCP framing of the tcp:// face
 * (face/sp_frame.c) on arbitrary bytes, fed in pieces whose size comes
 * from the input, the way a connection's reads hand them over. The
 * first byte also says whether the connection starts authenticated and
 * whether it authenticates after its first message (the limit then grows
 * from the 4 KiB pre-auth cap to the full one, as under --auth).
 *
 * Beyond "never crash, never read out of bounds": a call never takes
 * more bytes than it was given; the header is taken only whole and only
 * a requester's; a message is handed on only whole, within the limit of
 * the moment (never over FACE_SP_PREAUTH_MAX before authentication), its
 * backtrace ending at the first word with the top bit set and its body
 * lying inside the input; a length over the limit is refused from its
 * 8 bytes alone; and on a complete stream the parser always makes
 * progress or says why it stops. */
#include <stdint.h>
#include <stdlib.h>

#include "proto/sp.h"
#include "server/face/sp.h"
#include "server/face/sp_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FULL_MAX = 64 * 1024 }; /* the authenticated limit, here */

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
check_msg(const uint8_t *p, size_t have, size_t limit, bool authed,
    const struct sp_frame *f)
{
	check(f->used <= have);
	check(f->used == SP_LEN + f->len);
	check(f->len <= limit);
	check(authed || f->len <= FACE_SP_PREAUTH_MAX);
	check(f->btlen >= 4 && f->btlen <= SP_BACKTRACE_MAX);
	check(f->btlen % 4 == 0 && f->btlen <= f->len);
	check(f->bt == p + SP_LEN);
	for (size_t i = 0; i + 4 < f->btlen; i += 4)
		check((sp_load_u32(f->bt + i) & SP_ID_BIT) == 0);
	check((sp_load_u32(f->bt + f->btlen - 4) & SP_ID_BIT) != 0);
	check(f->body == f->bt + f->btlen);
	check(f->body + f->body_len == p + f->used);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, avail, step;
	bool shaken = false, authed, auth_later, stop = false;
	const uint8_t *p;

	if (size < 1)
		return 0;
	step = (size_t)(data[0] & 0x3f) * 7 + 1;
	authed = (data[0] & 0x40) != 0;
	auth_later = (data[0] & 0x80) != 0;
	p = data + 1;
	size--;
	for (avail = step < size ? step : size; off < size && !stop;) {
		size_t have = avail - off;
		size_t limit =
		    authed ? FULL_MAX + SP_BACKTRACE_MAX : FACE_SP_PREAUTH_MAX;
		struct sp_frame f;

		switch (sp_frame_parse(p + off, have, shaken, limit, &f)) {
		case SP_FRAME_HANDSHAKE:
			check(!shaken && f.used == SP_HANDSHAKE);
			check(f.used <= have);
			check(sp_handshake_ok(p + off, SP_PROTO_REQ0));
			shaken = true;
			off += f.used;
			continue;
		case SP_FRAME_MSG:
			check(shaken);
			check_msg(p + off, have, limit, authed, &f);
			off += f.used;
			authed = authed || auth_later;
			continue;
		case SP_FRAME_MORE:
			if (!shaken) {
				check(have < SP_HANDSHAKE && f.want == 0);
			} else if (f.want == 0) {
				check(have < SP_LEN);
			} else {
				check(f.len <= limit);
				check(
				    f.want == SP_LEN + f.len && f.want > have);
			}
			break;
		case SP_FRAME_NOT_SP:
			check(!shaken && have >= SP_HANDSHAKE);
			check(!sp_handshake_ok(p + off, SP_PROTO_REQ0));
			stop = true;
			break;
		case SP_FRAME_TOO_LONG:
			check(shaken && have >= SP_LEN && f.len > limit);
			stop = true;
			break;
		case SP_FRAME_NO_ID:
			check(shaken && have >= SP_LEN + f.len);
			check(sp_backtrace_len(p + off + SP_LEN, f.len) == 0);
			stop = true;
			break;
		default:
			check(0);
		}
		if (stop || avail == size)
			break; /* closed, or a partial unit at the end */
		avail = avail + step < size ? avail + step : size;
	}
	return 0;
}
