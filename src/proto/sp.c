/* sp - the SP-over-TCP framing's bytes (layout in sp.h): the 8-byte
 * connection header each side sends, the 8-byte big-endian length before
 * each message, the REQ/REP backtrace (request ids) at a message's start,
 * and a guess at what spoke when the header is not SP (an HTTP request, a
 * beanstalk command, TLS), for a clear refusal. Pure: the callers
 * (sluiced's tcp:// face, libsluice's tcp:// connection) do the I/O. */
#include <string.h>

#include "proto/sp.h"

void
sp_handshake(uint8_t out[SP_HANDSHAKE], uint16_t proto)
{
	out[0] = 0;
	out[1] = 'S';
	out[2] = 'P';
	out[3] = 0;
	out[4] = (uint8_t)(proto >> 8);
	out[5] = (uint8_t)proto;
	out[6] = 0;
	out[7] = 0;
}

bool
sp_handshake_ok(const uint8_t in[SP_HANDSHAKE], uint16_t proto)
{
	uint8_t want[SP_HANDSHAKE];

	sp_handshake(want, proto);
	return memcmp(in, want, SP_HANDSHAKE) == 0;
}

const char *
sp_guess_peer(const uint8_t *in, size_t n)
{
	if (n >= 4 && in[0] == 0 && in[1] == 'S' && in[2] == 'P' && in[3] == 0)
		return "an SP protocol other than rep0";
	if (n >= 5 && memcmp(in, "HTTP/", 5) == 0)
		return "HTTP";
	/* a TLS record: an alert (21) or a handshake (22), version 3.x */
	if (n >= 3 && (in[0] == 21 || in[0] == 22) && in[1] == 3)
		return "TLS";
	if ((n >= 9 && memcmp(in, "BAD_FORMAT", n < 10 ? n : 10) == 0) ||
	    (n >= 9 && memcmp(in, "UNKNOWN_C", 9) == 0))
		return "the beanstalk protocol";
	return NULL;
}

void
sp_store_len(uint8_t out[SP_LEN], uint64_t len)
{
	for (int i = SP_LEN - 1; i >= 0; i--) {
		out[i] = (uint8_t)len;
		len >>= 8;
	}
}

uint64_t
sp_load_len(const uint8_t in[SP_LEN])
{
	uint64_t v = 0;

	for (int i = 0; i < SP_LEN; i++)
		v = v << 8 | in[i];
	return v;
}

void
sp_store_u32(uint8_t out[4], uint32_t v)
{
	out[0] = (uint8_t)(v >> 24);
	out[1] = (uint8_t)(v >> 16);
	out[2] = (uint8_t)(v >> 8);
	out[3] = (uint8_t)v;
}

uint32_t
sp_load_u32(const uint8_t in[4])
{
	return (uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 |
	    (uint32_t)in[2] << 8 | in[3];
}

size_t
sp_backtrace_len(const uint8_t *msg, size_t len)
{
	for (size_t off = 0; off + 4 <= len && off < SP_BACKTRACE_MAX; off += 4)
		if (sp_load_u32(msg + off) & SP_ID_BIT)
			return off + 4;
	return 0;
}
