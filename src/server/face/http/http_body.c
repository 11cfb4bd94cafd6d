/* http_body - a request's body read from its connection by the HTTP
 * face, once the gate (http_gate.c) let the request through: its framing
 * (Content-Length or chunked), its limit and its deadline are in
 * http_body.h.
 *
 * A read is a small state machine: data runs (the Content-Length, or one
 * chunk's data) are read exactly, a step at a time into a buffer grown as
 * they arrive; the chunked coding's own bytes (size lines, the CRLF after
 * a chunk, trailers) one byte at a time, so that nothing past the body is
 * ever taken from the connection (the server reads the next request from
 * what is left). What the connection holds already (read with the head)
 * is taken at once, in a loop; only the rest waits for a read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/face/http/http_body.h"
#include "server/face/http/http_query.h"
#include "server/face/http/http_srv.h"
#include "util/clock.h"

/* ---- framing ------------------------------------------------------------- */

/* `s` without leading and trailing blanks: its start, and its length. */
static const char *
trim(const char *s, size_t *len)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	*len = n;
	return s;
}

int
http_body_framing(nng_http_req *req, struct http_framing *out, const char **why)
{
	const char *te = nng_http_req_get_header(req, "Transfer-Encoding");
	const char *cl = nng_http_req_get_header(req, "Content-Length");
	size_t n;

	*out = (struct http_framing) { 0 };
	if (te != NULL && cl != NULL) {
		*why = "a request may not carry both Content-Length and "
		       "Transfer-Encoding";
		return 400;
	}
	if (te != NULL) {
		te = trim(te, &n);
		if (n != 7 || strncasecmp(te, "chunked", 7) != 0) {
			*why = "the only transfer coding served is chunked";
			return 501;
		}
		out->chunked = true;
		return 0;
	}
	if (cl != NULL) {
		uint64_t v = 0;

		cl = trim(cl, &n);
		if (n == 0 || n > 19) {
			*why = "Content-Length is not a number";
			return 400;
		}
		for (size_t i = 0; i < n; i++) {
			if (cl[i] < '0' || cl[i] > '9') {
				*why = "Content-Length is not a number";
				return 400;
			}
			v = v * 10 + (uint64_t)(cl[i] - '0');
		}
		out->length = v;
	}
	return 0;
}

/* ---- the chunked coding -------------------------------------------------- */

enum {
	CS_SIZE0,      /* a size line's first digit */
	CS_SIZE,       /* more digits */
	CS_EXT,        /* extensions, up to the CR */
	CS_SIZE_LF,    /* the size line's LF */
	CS_DATA_CR,    /* the CRLF after a chunk's data */
	CS_DATA_LF,    /* */
	CS_TRAILER,    /* the start of a trailer line (or the final CRLF) */
	CS_TRAILER_LN, /* within one */
	CS_TRAILER_LF, /* its LF */
	CS_END_LF,     /* the final LF */
	CS_DONE,
};

void
http_chunks_init(struct http_chunks *c)
{
	*c = (struct http_chunks) { .state = CS_SIZE0 };
}

static enum http_chunks_step
bad(struct http_chunks *c, const char *why)
{
	c->why = why;
	return HTTP_CHUNKS_BAD;
}

static enum http_chunks_step
trailer_byte(struct http_chunks *c)
{
	if (++c->trailer > HTTP_TRAILERS_MAX)
		return bad(c, "chunked body: trailers too long");
	return HTTP_CHUNKS_MORE;
}

enum http_chunks_step
http_chunks_byte(struct http_chunks *c, uint8_t b)
{
	int d = http_query_hexval(b);

	switch (c->state) {
	case CS_SIZE0:
		if (d < 0)
			return bad(c, "chunked body: a chunk size is not hex");
		c->size = (uint64_t)d;
		c->digits = 1;
		c->ext = 0;
		c->state = CS_SIZE;
		return HTTP_CHUNKS_MORE;
	case CS_SIZE:
		if (d >= 0) {
			if (++c->digits > HTTP_CHUNK_DIGITS_MAX)
				return bad(c,
				    "chunked body: a chunk size too "
				    "large");
			c->size = c->size * 16 + (uint64_t)d;
			return HTTP_CHUNKS_MORE;
		}
		if (b == '\r') {
			c->state = CS_SIZE_LF;
			return HTTP_CHUNKS_MORE;
		}
		if (b != ';' && b != ' ' && b != '\t')
			return bad(c, "chunked body: a chunk size is not hex");
		c->state = CS_EXT;
		c->ext = 1; /* the byte is an extension's */
		return HTTP_CHUNKS_MORE;
	case CS_EXT:
		if (b == '\r') {
			c->state = CS_SIZE_LF;
			return HTTP_CHUNKS_MORE;
		}
		if (b == '\n')
			return bad(c, "chunked body: a size line without CR");
		if (++c->ext > HTTP_CHUNK_EXT_MAX)
			return bad(
			    c, "chunked body: chunk extensions too long");
		return HTTP_CHUNKS_MORE;
	case CS_SIZE_LF:
		if (b != '\n')
			return bad(c, "chunked body: a size line without LF");
		if (c->size == 0) {
			c->state = CS_TRAILER;
			return HTTP_CHUNKS_MORE;
		}
		c->state = CS_DATA_CR;
		return HTTP_CHUNKS_DATA;
	case CS_DATA_CR:
		if (b != '\r')
			return bad(c,
			    "chunked body: a chunk longer than its "
			    "size");
		c->state = CS_DATA_LF;
		return HTTP_CHUNKS_MORE;
	case CS_DATA_LF:
		if (b != '\n')
			return bad(c, "chunked body: a chunk without its CRLF");
		c->state = CS_SIZE0;
		return HTTP_CHUNKS_MORE;
	case CS_TRAILER:
		if (b == '\r') {
			c->state = CS_END_LF;
			return HTTP_CHUNKS_MORE;
		}
		c->state = CS_TRAILER_LN;
		return trailer_byte(c);
	case CS_TRAILER_LN:
		if (b == '\r')
			c->state = CS_TRAILER_LF;
		return trailer_byte(c);
	case CS_TRAILER_LF:
		if (b != '\n')
			return bad(c, "chunked body: a trailer without LF");
		c->state = CS_TRAILER;
		return trailer_byte(c);
	case CS_END_LF:
		if (b != '\n')
			return bad(c, "chunked body: no LF at its end");
		c->state = CS_DONE;
		return HTTP_CHUNKS_DONE;
	default:
		return bad(c, "chunked body: bytes after its end");
	}
}

/* ---- reading ------------------------------------------------------------- */

struct rd {
	struct http_conn *conn;
	struct http_framing f;
	size_t limit;
	int64_t deadline; /* monotonic ms */
	http_body_fn fn;
	void *arg;
	uint8_t *buf;
	size_t len, cap;
	uint64_t want; /* data bytes of the current run still to read */
	bool step;     /* the read out is data (else a control byte) */
	bool in_data;
	struct http_chunks ch;
	uint8_t byte;
};

static void
rd_end(struct rd *r, int status, const char *why)
{
	uint8_t *buf = r->buf;
	size_t len = r->len;

	if (status != 0 || len == 0) {
		free(buf);
		buf = NULL;
		len = status != 0 ? 0 : len;
	}
	r->fn(r->arg, status, why, buf, len);
	free(r);
}

/* Room for `n` more bytes, grown geometrically but never past `max`. */
static bool
rd_room(struct rd *r, size_t n, size_t max)
{
	size_t cap;
	uint8_t *p;

	if (r->cap - r->len >= n)
		return true;
	cap = r->cap * 2 > r->len + n ? r->cap * 2 : r->len + n;
	if (cap > max)
		cap = max;
	if ((p = realloc(r->buf, cap)) == NULL)
		return false;
	r->buf = p;
	r->cap = cap;
	return true;
}

/* One byte of the chunked coding: false when the read ended. */
static bool
rd_byte(struct rd *r)
{
	switch (http_chunks_byte(&r->ch, r->byte)) {
	case HTTP_CHUNKS_MORE:
		return true;
	case HTTP_CHUNKS_DATA:
		if (r->ch.size > r->limit - r->len) {
			rd_end(r, 413, "the body is over this route's limit");
			return false;
		}
		r->want = r->ch.size;
		r->in_data = true;
		return true;
	case HTTP_CHUNKS_DONE:
		rd_end(r, 0, NULL);
		return false;
	default:
		rd_end(r, 400, r->ch.why);
		return false;
	}
}

static void rd_cb(void *arg, int rv, size_t n);

/* Reads on: what the connection holds already at once, the rest by a
 * read that calls rd_cb. */
static void
rd_run(struct rd *r)
{
	for (;;) {
		int64_t left = r->deadline - clock_mono_ms();
		size_t k;

		if (r->in_data && r->want == 0) {
			r->in_data = false;
			if (!r->f.chunked) {
				rd_end(r, 0, NULL);
				return;
			}
		}
		if (left <= 0) {
			rd_end(r, 408, "the body did not arrive in time");
			return;
		}
		if (r->in_data) {
			size_t n = r->want < HTTP_BODY_STEP ? (size_t)r->want
			                                    : HTTP_BODY_STEP;

			if (!rd_room(
			        r, n, r->f.chunked ? r->limit : r->f.length)) {
				rd_end(r, 500, "out of memory");
				return;
			}
			if ((k = http_conn_take(r->conn, r->buf + r->len, n)) ==
			    0) {
				r->step = true;
				http_conn_read(r->conn, r->buf + r->len, n,
				    (nng_duration)left, rd_cb, r);
				return;
			}
			r->len += k;
			r->want -= k;
			continue;
		}
		if (http_conn_take(r->conn, &r->byte, 1) == 0) {
			r->step = false;
			http_conn_read(
			    r->conn, &r->byte, 1, (nng_duration)left, rd_cb, r);
			return;
		}
		if (!rd_byte(r))
			return;
	}
}

static void
rd_cb(void *arg, int rv, size_t n)
{
	struct rd *r = arg;

	if (rv == NNG_ETIMEDOUT) {
		rd_end(r, 408, "the body did not arrive in time");
		return;
	}
	if (rv != 0) {
		rd_end(r, -1, "the connection failed");
		return;
	}
	if (r->step) {
		r->len += n;
		r->want -= n;
	} else if (!rd_byte(r)) {
		return;
	}
	rd_run(r);
}

void
http_body_read(struct http_conn *conn, const struct http_framing *f,
    size_t limit, uint32_t timeout_ms, http_body_fn fn, void *arg)
{
	struct rd *r;

	if (!f->chunked && f->length > limit) { /* the caller checks */
		fn(arg, 413, "the body is over this route's limit", NULL, 0);
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		fn(arg, 500, "out of memory", NULL, 0);
		return;
	}
	r->conn = conn;
	r->f = *f;
	r->limit = limit;
	r->deadline = clock_mono_ms() + timeout_ms;
	r->fn = fn;
	r->arg = arg;
	http_chunks_init(&r->ch);
	if (!f->chunked) {
		r->in_data = true;
		r->want = f->length;
	}
	rd_run(r);
}
