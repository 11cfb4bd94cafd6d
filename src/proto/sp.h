/* sp - the framing nng's TCP transport speaks (the "SP over TCP" mapping
 * of the scalability protocols), as far as a REQ client and a REP server
 * of sluice need it. Pure: no I/O, no allocation.
 *
 * A connection opens with an 8-byte header from each side, sent at once
 * and without waiting for the peer's:
 *
 *	00 'S' 'P' 00  proto (u16, big-endian)  00 00
 *
 * where proto is the sender's protocol (req0 0x0030, rep0 0x0031). Then
 * messages follow back to back, each a u64 big-endian length and that
 * many bytes. A REQ message starts with its backtrace: 4-byte big-endian
 * words, the last of which has its top bit set (the request id). A
 * client's own request carries only the id; a device in between pushes a
 * word per hop. A REP answers with the backtrace it received, unchanged,
 * followed by its body. docs/protocol.md describes it for clients written
 * without nng.
 *
 * These integers are big-endian; sluice's own (in the body) are
 * little-endian. */
#ifndef SLUICE_PROTO_SP_H
#define SLUICE_PROTO_SP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	SP_HANDSHAKE = 8,
	SP_LEN = 8,             /* the length before each message */
	SP_PROTO_REQ0 = 0x0030, /* a requester */
	SP_PROTO_REP0 = 0x0031, /* a replier */
	SP_HOPS_MAX = 8,        /* backtrace words a server accepts */
	SP_BACKTRACE_MAX = 4 * SP_HOPS_MAX,
	SP_ID_BIT = 0x80000000u, /* marks the last word of a backtrace */
};

/* The 8 header bytes for `proto`. */
void sp_handshake(uint8_t out[SP_HANDSHAKE], uint16_t proto);

/* Whether `in` is a header of protocol `proto`. */
bool sp_handshake_ok(const uint8_t in[SP_HANDSHAKE], uint16_t proto);

/* Names, for an error message, what a peer that sent `in` instead of an
 * SP header seems to speak: "HTTP", "the beanstalk protocol", "an SP
 * protocol other than rep0", or NULL when nothing is recognised. `n` is
 * how many bytes of `in` arrived (the peer may have sent fewer than 8, or
 * nothing until it saw a request). */
const char *sp_guess_peer(const uint8_t *in, size_t n);

void sp_store_len(uint8_t out[SP_LEN], uint64_t len);
uint64_t sp_load_len(const uint8_t in[SP_LEN]);

void sp_store_u32(uint8_t out[4], uint32_t v);
uint32_t sp_load_u32(const uint8_t in[4]);

/* The length of the backtrace at the start of a REQ message `msg` of
 * `len` bytes: 4 to SP_BACKTRACE_MAX. 0 when the message ends before a
 * word with the top bit set, or has more than SP_HOPS_MAX words (the
 * message is malformed: a server drops it, as nng's rep0 does). */
size_t sp_backtrace_len(const uint8_t *msg, size_t len);

#endif
