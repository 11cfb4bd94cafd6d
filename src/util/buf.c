/* buf - the growable byte buffer with little-endian writers, and the
 * bounds-checked reader (buf.h). Growth doubles, starting at 256 bytes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

void
buf_init(struct buf *b)
{
	memset(b, 0, sizeof(*b));
}

void
buf_fini(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	b->oom = false;
}

bool
buf_reserve(struct buf *b, size_t more)
{
	size_t cap;
	uint8_t *p;

	if (b->oom)
		return false;
	if (more <= b->cap - b->len)
		return true;
	if (more > SIZE_MAX / 2 - b->len)
		goto fail_nomem;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < more)
		cap *= 2;
	p = realloc(b->data, cap);
	if (p == NULL)
		goto fail_nomem;
	b->data = p;
	b->cap = cap;
	return true;

fail_nomem:
	b->oom = true;
	return false;
}

uint8_t *
buf_extend(struct buf *b, size_t n)
{
	uint8_t *p;

	if (!buf_reserve(b, n))
		return NULL;
	p = b->data + b->len;
	memset(p, 0, n);
	b->len += n;
	return p;
}

void
buf_put_grow(struct buf *b, const void *p, size_t n)
{
	if (n == 0 || !buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

const uint8_t *
rd_blob(struct rd *r, size_t max, size_t *n)
{
	uint32_t len = rd_u32(r);

	if (r->bad || len > max) {
		r->bad = true;
		*n = 0;
		return NULL;
	}
	*n = len;
	/* A zero-length blob is valid: return a non-NULL pointer. */
	return len ? rd_bytes(r, len) : (const uint8_t *)"";
}

const char *
rd_str16(struct rd *r, size_t max, size_t *n)
{
	uint16_t len = rd_u16(r);

	if (r->bad || len > max) {
		r->bad = true;
		*n = 0;
		return NULL;
	}
	*n = len;
	return len ? (const char *)rd_bytes(r, len) : "";
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		buf_put(b, small, (size_t)n);
		return;
	}
	if (!buf_reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
buf_put_escaped(struct buf *b, const void *p, size_t n)
{
	const uint8_t *s = p;

	buf_put_u8(b, '"');
	for (size_t i = 0; i < n; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\')
			buf_put_u8(b, s[i]);
		else
			buf_printf(b, "\\x%02x", s[i]);
	}
	buf_put_u8(b, '"');
}
