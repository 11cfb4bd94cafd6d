/* sp_frame - the SP-over-TCP framing, read from a connection's bytes
 * (sp_frame.h). The order of the checks is the face's promise: the
 * header first (nothing but a requester's is taken); then a message's
 * length against the limit as soon as its 8 bytes are in, so a length
 * over it closes the connection before its body is waited for; then,
 * once the message is whole, its backtrace. A message is handed on only
 * whole, and only within the limit. */
#include <string.h>

#include "proto/sp.h"
#include "server/face/sp_frame.h"

enum sp_frame_status
sp_frame_parse(const uint8_t *p, size_t have, bool shaken, size_t limit,
    struct sp_frame *out)
{
	uint64_t len;

	memset(out, 0, sizeof(*out));
	if (!shaken) {
		if (have < SP_HANDSHAKE)
			return SP_FRAME_MORE;
		if (!sp_handshake_ok(p, SP_PROTO_REQ0))
			return SP_FRAME_NOT_SP;
		out->used = SP_HANDSHAKE;
		return SP_FRAME_HANDSHAKE;
	}
	if (have < SP_LEN)
		return SP_FRAME_MORE;
	len = sp_load_len(p);
	out->len = len;
	if (len > limit)
		return SP_FRAME_TOO_LONG;
	if (have - SP_LEN < len) {
		out->want = SP_LEN + (size_t)len;
		return SP_FRAME_MORE;
	}
	out->btlen = sp_backtrace_len(p + SP_LEN, (size_t)len);
	if (out->btlen == 0)
		return SP_FRAME_NO_ID;
	out->bt = p + SP_LEN;
	out->body = out->bt + out->btlen;
	out->body_len = (size_t)len - out->btlen;
	out->used = SP_LEN + (size_t)len;
	return SP_FRAME_MSG;
}
