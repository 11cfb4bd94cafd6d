/* buf - a growable byte buffer with little-endian writers, and `rd`, a
 * bounds-checked reader over borrowed bytes. Every codec (log records,
 * queue record bodies, snapshots, wire messages) is built on these two, so
 * the byte order and the bounds checks live in one place.
 *
 * Writers: a failed allocation sets `b->oom` and later writes do nothing;
 * check it once at the end (buf_failed()). Readers: reading past the end
 * sets `r->bad` and yields zeros; check it once at the end (rd_failed()).
 * Neither ever reads or writes out of bounds. */
#ifndef SLUICE_UTIL_BUF_H
#define SLUICE_UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool oom;
};

void buf_init(struct buf *b);
void buf_fini(struct buf *b);  /* frees the bytes; b may be reused */
void buf_reset(struct buf *b); /* len = 0, keeps the memory */
bool buf_reserve(struct buf *b, size_t more); /* false (and oom) on ENOMEM */
/* Appends `n` zero bytes and returns where they start, or NULL on ENOMEM. */
uint8_t *buf_extend(struct buf *b, size_t n);
/* The slow path of the writers below: grows the buffer, then appends. */
void buf_put_grow(struct buf *b, const void *p, size_t n);

/* printf into the buffer (any length). */
void buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A quoted string: printable ASCII as is ('"' and '\\' excepted), every
 * other byte as \xHH. */
void buf_put_escaped(struct buf *b, const void *p, size_t n);

static inline bool
buf_failed(const struct buf *b)
{
	return b->oom;
}

/* Little-endian loads and stores on raw memory (no bounds checks). One
 * unaligned access each (memcpy), byte-swapped on a big-endian host: every
 * codec's hot loop is made of these. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BUF_LE16(v) __builtin_bswap16(v)
#define BUF_LE32(v) __builtin_bswap32(v)
#define BUF_LE64(v) __builtin_bswap64(v)
#else
#define BUF_LE16(v) (v)
#define BUF_LE32(v) (v)
#define BUF_LE64(v) (v)
#endif
static inline void
le_store_u16(uint8_t *p, uint16_t v)
{
	v = BUF_LE16(v);
	memcpy(p, &v, sizeof(v));
}
static inline void
le_store_u32(uint8_t *p, uint32_t v)
{
	v = BUF_LE32(v);
	memcpy(p, &v, sizeof(v));
}
static inline void
le_store_u64(uint8_t *p, uint64_t v)
{
	v = BUF_LE64(v);
	memcpy(p, &v, sizeof(v));
}
static inline uint16_t
le_load_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return BUF_LE16(v);
}
static inline uint32_t
le_load_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return BUF_LE32(v);
}
static inline uint64_t
le_load_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return BUF_LE64(v);
}

/* Where `n` more bytes go when they fit without growing, else NULL (and
 * NULL once a write failed, so that later writes do nothing). */
static inline uint8_t *
buf_room(struct buf *b, size_t n)
{
	return !b->oom && b->data != NULL && n <= b->cap - b->len
	    ? b->data + b->len
	    : NULL;
}

static inline void
buf_put(struct buf *b, const void *p, size_t n)
{
	uint8_t *d = buf_room(b, n);

	if (d == NULL) {
		buf_put_grow(b, p, n);
		return;
	}
	if (n > 0)
		memcpy(d, p, n);
	b->len += n;
}

static inline void
buf_put_u8(struct buf *b, uint8_t v)
{
	uint8_t *d = buf_room(b, 1);

	if (d == NULL) {
		buf_put_grow(b, &v, 1);
		return;
	}
	*d = v;
	b->len++;
}

static inline void
buf_put_u16(struct buf *b, uint16_t v)
{
	uint8_t *d = buf_room(b, 2);

	if (d == NULL) {
		uint8_t t[2];

		le_store_u16(t, v);
		buf_put_grow(b, t, sizeof(t));
		return;
	}
	le_store_u16(d, v);
	b->len += 2;
}

static inline void
buf_put_u32(struct buf *b, uint32_t v)
{
	uint8_t *d = buf_room(b, 4);

	if (d == NULL) {
		uint8_t t[4];

		le_store_u32(t, v);
		buf_put_grow(b, t, sizeof(t));
		return;
	}
	le_store_u32(d, v);
	b->len += 4;
}

static inline void
buf_put_u64(struct buf *b, uint64_t v)
{
	uint8_t *d = buf_room(b, 8);

	if (d == NULL) {
		uint8_t t[8];

		le_store_u64(t, v);
		buf_put_grow(b, t, sizeof(t));
		return;
	}
	le_store_u64(d, v);
	b->len += 8;
}

static inline void
buf_put_i64(struct buf *b, int64_t v)
{
	buf_put_u64(b, (uint64_t)v);
}

/* A u32 length followed by the bytes. */
static inline void
buf_put_blob(struct buf *b, const void *p, size_t n)
{
	buf_put_u32(b, (uint32_t)n);
	buf_put(b, p, n);
}

/* A u16 length followed by the bytes (n must be < 65536). */
static inline void
buf_put_str16(struct buf *b, const char *s, size_t n)
{
	buf_put_u16(b, (uint16_t)n);
	buf_put(b, s, n);
}

struct rd {
	const uint8_t *p;
	size_t len;
	size_t off;
	bool bad;
};

static inline void
rd_init(struct rd *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->off = 0;
	r->bad = false;
}

static inline size_t
rd_left(const struct rd *r)
{
	return r->len - r->off;
}

static inline bool
rd_failed(const struct rd *r)
{
	return r->bad;
}

/* Borrows `n` bytes; NULL (and bad) when fewer are left, and NULL once
 * bad. */
static inline const uint8_t *
rd_bytes(struct rd *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || n > rd_left(r)) {
		r->bad = true;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

static inline uint8_t
rd_u8(struct rd *r)
{
	const uint8_t *p = rd_bytes(r, 1);

	return p ? p[0] : 0;
}

static inline uint16_t
rd_u16(struct rd *r)
{
	const uint8_t *p = rd_bytes(r, 2);

	return p ? le_load_u16(p) : 0;
}

static inline uint32_t
rd_u32(struct rd *r)
{
	const uint8_t *p = rd_bytes(r, 4);

	return p ? le_load_u32(p) : 0;
}

static inline uint64_t
rd_u64(struct rd *r)
{
	const uint8_t *p = rd_bytes(r, 8);

	return p ? le_load_u64(p) : 0;
}

static inline int64_t
rd_i64(struct rd *r)
{
	return (int64_t)rd_u64(r);
}

/* A u32 length then the bytes; the length is checked against what is left
 * and against `max`. The result borrows from the reader's memory. */
const uint8_t *rd_blob(struct rd *r, size_t max, size_t *n);
/* A u16 length then the bytes, as buf_put_str16 wrote them. */
const char *rd_str16(struct rd *r, size_t max, size_t *n);

#endif
