/* base64 - standard base64 (RFC 4648, with padding) into and out of
 * caller's buffers. etcd's JSON gateway carries every key and value this
 * way. Pure: no allocation, no logging. */
#ifndef SLUICE_UTIL_BASE64_H
#define SLUICE_UTIL_BASE64_H

#include <stdbool.h>
#include <stddef.h>

/* Characters that base64_encode writes for `len` bytes (without the NUL). */
static inline size_t
base64_len(size_t len)
{
	return (len + 2) / 3 * 4;
}

/* Writes the base64 of `len` bytes of `src` and a NUL to `dst`, which holds
 * at least base64_len(len) + 1 bytes. */
void base64_encode(char *dst, const void *src, size_t len);

/* Decodes `len` characters of `src` into `dst`, which holds at least
 * len / 4 * 3 bytes, and stores the byte count in *out. Returns false
 * (and leaves *out alone) when `src` is not padded base64: a length that
 * is not a multiple of 4, a character outside the alphabet, or '=' other
 * than at the end. */
bool base64_decode(void *dst, const char *src, size_t len, size_t *out);

#endif
