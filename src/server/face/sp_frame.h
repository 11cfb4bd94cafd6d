/* sp_frame - the SP-over-TCP framing as the tcp:// face reads it (sp.c):
 * what the bytes a connection sent so far hold, given whether the peer's
 * header was read and the longest message it may send now. Pure: no I/O,
 * no allocation, no logging; fuzzed (tests/fuzz/fuzz_spframe.c).
 *
 * The stream, after the peer's 8-byte header (proto/sp.h), is messages
 * back to back, each a u64 big-endian length and that many bytes, which
 * begin with the backtrace (4-byte words up to the one with the top bit
 * set, the request id). The limit is checked on the length alone, before
 * the body arrived: a peer cannot make the face hold more than that. */
#ifndef SLUICE_SERVER_FACE_SP_FRAME_H
#define SLUICE_SERVER_FACE_SP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sp_frame_status {
	SP_FRAME_MORE,      /* incomplete: wait for more bytes */
	SP_FRAME_HANDSHAKE, /* the peer's header, a requester's */
	SP_FRAME_MSG,       /* one whole message */
	SP_FRAME_NOT_SP,    /* the header is not a requester's: close */
	SP_FRAME_TOO_LONG,  /* the length is over the limit: close */
	SP_FRAME_NO_ID,     /* the message has no request id: close */
};

struct sp_frame {
	size_t used;  /* HANDSHAKE, MSG: the bytes it took from the start */
	size_t want;  /* MORE: the bytes the whole message takes, length
	               * included, once its length is known; else 0 */
	uint64_t len; /* MSG, TOO_LONG, MORE with want: the length read */
	const uint8_t *bt;   /* MSG: the backtrace, inside the input */
	size_t btlen;        /* MSG: 4 to SP_BACKTRACE_MAX */
	const uint8_t *body; /* MSG: the request after the backtrace */
	size_t body_len;
};

/* Reads the first unit of the `have` bytes at `p`: the peer's header
 * when `shaken` is false, else a message of at most `limit` bytes.
 * `*out` is filled for every status (zeroes where it says nothing). */
enum sp_frame_status sp_frame_parse(const uint8_t *p, size_t have, bool shaken,
    size_t limit, struct sp_frame *out);

#endif
