/* base64 - see base64.h. */
#include <stdint.h>

#include "util/base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "abcdefghijklmnopqrstuvwxyz0123456789+/";

void
base64_encode(char *dst, const void *src, size_t len)
{
	const unsigned char *s = src;

	for (size_t i = 0; i < len; i += 3) {
		size_t n = len - i < 3 ? len - i : 3;
		uint32_t v = (uint32_t)s[i] << 16;

		if (n > 1)
			v |= (uint32_t)s[i + 1] << 8;
		if (n > 2)
			v |= s[i + 2];
		*dst++ = alphabet[v >> 18];
		*dst++ = alphabet[(v >> 12) & 63];
		*dst++ = n > 1 ? alphabet[(v >> 6) & 63] : '=';
		*dst++ = n > 2 ? alphabet[v & 63] : '=';
	}
	*dst = '\0';
}

/* The 6-bit value of a base64 character, or -1. */
static int
sextet(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

bool
base64_decode(void *dst, const char *src, size_t len, size_t *out)
{
	unsigned char *d = dst;
	size_t n = 0;

	if (len % 4 != 0)
		return false;
	for (size_t i = 0; i < len; i += 4) {
		bool last = i + 4 == len;
		/* Padding: at most two '=', only at the very end. */
		int pad =
		    last && src[i + 3] == '=' ? (src[i + 2] == '=' ? 2 : 1) : 0;
		uint32_t v = 0;

		for (int k = 0; k < 4; k++) {
			int x = k >= 4 - pad ? 0 : sextet(src[i + k]);

			if (x < 0)
				return false;
			v = v << 6 | (uint32_t)x;
		}
		d[n++] = (unsigned char)(v >> 16);
		if (pad < 2)
			d[n++] = (unsigned char)(v >> 8);
		if (pad < 1)
			d[n++] = (unsigned char)v;
	}
	*out = n;
	return true;
}
