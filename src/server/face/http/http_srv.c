/* http_srv - the HTTP face's own HTTP/1.1 server: connections accepted
 * from an nng stream listener, each request's head read and parsed
 * (http_head.c), handed to the face (the gate, http_gate.c), and its
 * response written; its bounds (connections, head size and deadlines)
 * are in http_srv.h.
 *
 * A connection's life is a loop of three phases, one at a time:
 *   head:    reads (rx) into its buffer until a blank line ends a head,
 *            each read bounded by the idle deadline (no byte of a head
 *            yet) or the head's (from its first byte);
 *   handler: the head is parsed into an nng_http_req and the handler is
 *            called (cb); it may read the body (http_conn_read: the
 *            buffer's bytes first, then the stream) and finishes cb with
 *            a response;
 *   write:   the response is written (tx), then the next head: from the
 *            buffer when the client pipelined it, else read.
 * A refused head is answered (400, 431, 505) and closes the connection.
 *
 * Memory: a connection holds one buffer of HTTP_SRV_HEAD_MAX bytes and
 * its aios; what a request costs beyond that is its handler's.
 *
 * Lifetime: `refs` counts the connection's own reference (dropped when
 * it is closed) and each operation outstanding (a read, a write, the
 * handler, a handler's read). The last one schedules `fini`, whose
 * callback frees everything on a thread that runs none of the others. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/face/http/http_head.h"
#include "server/face/http/http_srv.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	CLOSE_WAIT_MS = 3000, /* http_srv_close's bound */
	LOG_EVERY_MS = 10000, /* accept failures, logged at most so often */
	TXHEAD_MAX = 256,     /* status line, Connection, Content-Length */
	/* After an answer that refuses a request whose body was not read
	 * (413, 401, a bad framing), what the client still sends is read
	 * and dropped for a moment before the connection closes: closed
	 * with unread input, the socket would send a reset, and a client
	 * still sending its body would lose the answer with it. */
	LINGER_MS = 2000,
	LINGER_BYTES = 1 << 20,
};

static const char CONTINUE[] = "HTTP/1.1 100 Continue\r\n\r\n";

struct http_conn {
	struct http_srv *srv;
	nng_stream *s;
	nng_aio *rx, *tx, *cb, *urx, *fini;
	nng_aio *cont; /* a 100 Continue's write */
	pthread_mutex_t mu;
	unsigned refs;
	bool closed;
	bool close_after;      /* http_conn_close_after, or the request's own */
	bool head_only;        /* HEAD: the response's body is left out */
	int64_t head_deadline; /* 0: no byte of the next head yet */
	nng_http_req *req;
	struct http_res *res;
	char txhead[TXHEAD_MAX];
	nng_iov txiov[4];
	unsigned ntx;
	bool tx_close;
	bool res_close;     /* the answer refused the request: linger */
	bool lingering;     /* reading only to drop it, then closing */
	size_t linger_left; /* bytes it may still drop */
	int64_t linger_end; /* monotonic ms it closes at the latest */
	/* a handler's read */
	http_conn_fn ufn;
	void *uarg;
	size_t ucount; /* served from the buffer */
	bool ubuffered;
	struct http_conn *prev, *next;
	char peer[64]; /* the client's address, "ADDR:PORT" */
	size_t get, put;
	uint8_t buf[HTTP_SRV_HEAD_MAX];
};

struct http_srv {
	nng_stream_listener *l;
	nng_aio *acc, *pause;
	struct http_srv_conf conf;
	http_srv_fn fn;
	void *arg;
	pthread_mutex_t mu; /* conns, closing, st */
	struct http_conn *conns;
	bool closing;
	struct http_srv_stats st;
	int64_t logged;        /* the last accept failure logged */
	uint64_t unlogged;     /* accept failures since */
	int64_t cap_logged;    /* the last closing at the cap logged */
	uint64_t cap_unlogged; /* connections closed at the cap since */
};

/* ---- responses ----------------------------------------------------------- */

struct http_res *
http_res_new(uint16_t status, const char *reason, const char *ctype,
    const void *body, size_t len, const char *hname, const char *hval,
    bool close)
{
	struct http_res *r = calloc(1, sizeof(*r));
	int n;

	if (r == NULL)
		return NULL;
	n = snprintf(NULL, 0,
	    "Content-Type: %s\r\nCache-Control: no-store\r\n%s%s%s%s", ctype,
	    hname != NULL ? hname : "", hname != NULL ? ": " : "",
	    hname != NULL ? hval : "", hname != NULL ? "\r\n" : "");
	if (n < 0 || (r->head = malloc((size_t)n + 1)) == NULL ||
	    (len > 0 && (r->body = malloc(len)) == NULL)) {
		http_res_free(r);
		return NULL;
	}
	snprintf(r->head, (size_t)n + 1,
	    "Content-Type: %s\r\nCache-Control: no-store\r\n%s%s%s%s", ctype,
	    hname != NULL ? hname : "", hname != NULL ? ": " : "",
	    hname != NULL ? hval : "", hname != NULL ? "\r\n" : "");
	r->head_len = (size_t)n;
	if (len > 0)
		memcpy(r->body, body, len);
	r->len = len;
	r->status = status;
	r->reason = reason;
	r->close = close;
	return r;
}

void
http_res_free(struct http_res *r)
{
	if (r == NULL)
		return;
	free(r->head);
	free(r->body);
	free(r);
}

/* ---- a connection's end -------------------------------------------------- */

static void
conn_unref(struct http_conn *c)
{
	bool last;

	pthread_mutex_lock(&c->mu);
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->mu);
	if (last && nng_aio_begin(c->fini))
		nng_aio_finish(c->fini, 0);
}

static void
fini_cb(void *arg)
{
	struct http_conn *c = arg;
	struct http_srv *s = c->srv;

	pthread_mutex_lock(&s->mu);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	s->st.open--;
	pthread_mutex_unlock(&s->mu);
	nng_aio_free(c->rx);
	nng_aio_free(c->tx);
	nng_aio_free(c->cb);
	nng_aio_free(c->urx);
	nng_aio_free(c->cont);
	nng_stream_free(c->s);
	if (c->req != NULL)
		nng_http_req_free(c->req);
	http_res_free(c->res);
	pthread_mutex_destroy(&c->mu);
	nng_aio_reap(c->fini);
	free(c);
}

void
http_conn_close(struct http_conn *c)
{
	bool drop;

	pthread_mutex_lock(&c->mu);
	drop = !c->closed;
	c->closed = true;
	pthread_mutex_unlock(&c->mu);
	if (drop) {
		nng_stream_close(c->s); /* ends what is outstanding */
		conn_unref(c);
	}
}

/* Takes a reference for an operation; false when the connection is
 * closed (the operation is not started). Locked. */
static bool
conn_op(struct http_conn *c)
{
	if (c->closed)
		return false;
	c->refs++;
	return true;
}

/* ---- writing a response -------------------------------------------------- */

static void head_next(struct http_conn *c);

static void
tx_send(struct http_conn *c)
{
	pthread_mutex_lock(&c->mu);
	if (!conn_op(c)) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	nng_aio_set_iov(c->tx, c->ntx, c->txiov);
	/* a client that reads nothing of its answer for this long is gone:
	 * the connection is closed (the answer is never held for ever) */
	nng_aio_set_timeout(c->tx, (nng_duration)c->srv->conf.idle_timeout_ms);
	nng_stream_send(c->s, c->tx);
	pthread_mutex_unlock(&c->mu);
}

/* Writes `res` (owned from now on) for the request in progress: the
 * status line, the response's headers, its length, its body. */
static void
write_res(struct http_conn *c, struct http_res *res)
{
	int n, m;

	c->res = res;
	c->tx_close = res->close || c->close_after;
	c->res_close = res->close;
	n = snprintf(c->txhead, sizeof(c->txhead), "HTTP/1.1 %u %s\r\n%s",
	    res->status, res->reason != NULL ? res->reason : "Unknown",
	    c->tx_close ? "Connection: close\r\n" : "");
	m = snprintf(c->txhead + n, sizeof(c->txhead) - (size_t)n,
	    "Content-Length: %zu\r\n\r\n", res->len);
	c->ntx = 0;
	c->txiov[c->ntx++] = (nng_iov) { c->txhead, (size_t)n };
	c->txiov[c->ntx++] = (nng_iov) { res->head, res->head_len };
	c->txiov[c->ntx++] = (nng_iov) { c->txhead + n, (size_t)m };
	if (!c->head_only && res->len > 0)
		c->txiov[c->ntx++] = (nng_iov) { res->body, res->len };
	tx_send(c);
}

/* Reads what the client still sends after a refusal, to drop it; the
 * connection closes at its end, at LINGER_BYTES or at linger_end. */
static void
linger_read(struct http_conn *c)
{
	int64_t left = c->linger_end - clock_mono_ms();
	nng_iov iov;

	pthread_mutex_lock(&c->mu);
	if (left <= 0 || c->linger_left == 0 || !conn_op(c)) {
		pthread_mutex_unlock(&c->mu);
		http_conn_close(c);
		return;
	}
	c->get = c->put = 0;
	iov.iov_buf = c->buf;
	iov.iov_len =
	    sizeof(c->buf) < c->linger_left ? sizeof(c->buf) : c->linger_left;
	nng_aio_set_iov(c->rx, 1, &iov);
	nng_aio_set_timeout(c->rx, (nng_duration)left);
	nng_stream_recv(c->s, c->rx);
	pthread_mutex_unlock(&c->mu);
}

static void
tx_cb(void *arg)
{
	struct http_conn *c = arg;
	size_t n = nng_aio_count(c->tx);
	bool close;

	if (nng_aio_result(c->tx) != 0) {
		http_conn_close(c);
		conn_unref(c);
		return;
	}
	while (c->ntx > 0 && n >= c->txiov[0].iov_len) {
		n -= c->txiov[0].iov_len;
		memmove(&c->txiov[0], &c->txiov[1],
		    (c->ntx - 1) * sizeof(c->txiov[0]));
		c->ntx--;
	}
	if (c->ntx > 0) { /* a short write: the rest */
		c->txiov[0].iov_buf = (uint8_t *)c->txiov[0].iov_buf + n;
		c->txiov[0].iov_len -= n;
		tx_send(c);
		conn_unref(c);
		return;
	}
	http_res_free(c->res);
	c->res = NULL;
	if (c->req != NULL)
		nng_http_req_free(c->req);
	c->req = NULL;
	pthread_mutex_lock(&c->mu);
	/* a handler's read still out (a take's watch): the connection
	 * cannot serve another request */
	close = c->tx_close || c->ufn != NULL;
	c->close_after = false;
	if (close && c->res_close && c->ufn == NULL && !c->lingering) {
		c->lingering = true;
		c->linger_left = LINGER_BYTES;
		c->linger_end = clock_mono_ms() + LINGER_MS;
	}
	pthread_mutex_unlock(&c->mu);
	if (c->lingering)
		linger_read(c);
	else if (close)
		http_conn_close(c);
	else
		head_next(c);
	conn_unref(c);
}

/* The handler finished its aio. */
static void
cb_done(void *arg)
{
	struct http_conn *c = arg;
	struct http_res *res = nng_aio_get_output(c->cb, 0);

	nng_aio_set_output(c->cb, 0, NULL);
	if (nng_aio_result(c->cb) != 0 || res == NULL) {
		http_res_free(res);
		http_conn_close(c);
	} else {
		write_res(c, res);
	}
	conn_unref(c);
}

/* ---- reading a head ------------------------------------------------------ */

/* A head refused: answered, and the connection closed after. */
static void
refuse_head(
    struct http_conn *c, uint16_t status, const char *reason, const char *text)
{
	struct http_res *res = http_res_new(status, reason,
	    "text/plain; charset=utf-8", text, strlen(text), NULL, NULL, true);

	pthread_mutex_lock(&c->srv->mu);
	c->srv->st.bad_heads++;
	pthread_mutex_unlock(&c->srv->mu);
	if (res == NULL) {
		http_conn_close(c);
		return;
	}
	c->head_only = false;
	write_res(c, res);
}

static void head_read(struct http_conn *c);

/* A head is complete in the buffer: the handler is called; or it is not
 * yet: more is read. */
static void
head_next(struct http_conn *c)
{
	struct http_srv *s = c->srv;
	const char *reason, *text;
	struct http_head hd = { 0 };
	nng_http_req *req = NULL;
	uint8_t *end;
	int st;

	pthread_mutex_lock(&c->mu);
	/* blank lines before a request line are ignored (RFC 9112 2.2) */
	while (c->put - c->get >= 2 && c->buf[c->get] == '\r' &&
	    c->buf[c->get + 1] == '\n')
		c->get += 2;
	if (c->get > 0) { /* what is left to the front */
		memmove(c->buf, c->buf + c->get, c->put - c->get);
		c->put -= c->get;
		c->get = 0;
	}
	end = c->put >= 4 ? memmem(c->buf, c->put, "\r\n\r\n", 4) : NULL;
	if (end == NULL) {
		bool full = c->put == sizeof(c->buf);
		bool garbage = false;

		/* a request line holds no control byte: a client that speaks
		 * something else (a sluice client's binary greeting at the
		 * wrong port) is answered at once, not at the deadline */
		for (size_t i = 0; i < c->put && c->buf[i] != '\r'; i++)
			if (c->buf[i] < 0x20 || c->buf[i] == 0x7f) {
				garbage = true;
				break;
			}
		if (garbage) {
			pthread_mutex_unlock(&c->mu);
			refuse_head(
			    c, 400, "Bad Request", "not an HTTP request\n");
			return;
		}

		if (c->put > 0 && c->head_deadline == 0)
			c->head_deadline =
			    clock_mono_ms() + s->conf.header_timeout_ms;
		pthread_mutex_unlock(&c->mu);
		if (full)
			refuse_head(c, 431, "Request Header Fields Too Large",
			    "the request's head is over 16 KiB\n");
		else
			head_read(c);
		return;
	}
	end += 4;
	end[-2] = '\0'; /* the head, NUL-ended (its last CRLF is not needed) */
	pthread_mutex_unlock(&c->mu);
	st = http_head_parse((char *)c->buf + c->get,
	    (size_t)(end - 2 - (c->buf + c->get)), &hd, &reason, &text);
	req = hd.req;
	c->close_after = hd.close;
	c->head_only = hd.head_only;
	pthread_mutex_lock(&c->mu);
	c->get = (size_t)(end - c->buf);
	c->head_deadline = 0;
	pthread_mutex_unlock(&c->mu);
	if (st != 0) {
		refuse_head(c, (uint16_t)st, reason, text);
		return;
	}
	c->req = req;
	pthread_mutex_lock(&c->mu);
	if (!conn_op(c)) {
		pthread_mutex_unlock(&c->mu);
		return; /* req freed with c */
	}
	pthread_mutex_unlock(&c->mu);
	nng_aio_set_output(c->cb, 0, NULL);
	nng_aio_set_input(c->cb, 0, req);
	nng_aio_set_input(c->cb, 1, NULL);
	nng_aio_set_input(c->cb, 2, c);
	if (!nng_aio_begin(c->cb)) { /* stopped: the server ends */
		http_conn_close(c);
		conn_unref(c);
		return;
	}
	s->fn(c->cb, s->arg);
}

static void
head_read(struct http_conn *c)
{
	struct http_srv *s = c->srv;
	int64_t now = clock_mono_ms();
	nng_duration t;
	nng_iov iov;

	pthread_mutex_lock(&c->mu);
	if (c->head_deadline != 0)
		t = c->head_deadline > now
		    ? (nng_duration)(c->head_deadline - now)
		    : 1;
	else
		t = (nng_duration)s->conf.idle_timeout_ms;
	if (!conn_op(c)) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	iov.iov_buf = c->buf + c->put;
	iov.iov_len = sizeof(c->buf) - c->put;
	nng_aio_set_iov(c->rx, 1, &iov);
	nng_aio_set_timeout(c->rx, t);
	nng_stream_recv(c->s, c->rx);
	pthread_mutex_unlock(&c->mu);
}

static void
rx_cb(void *arg)
{
	struct http_conn *c = arg;
	struct http_srv *s = c->srv;
	int rv = nng_aio_result(c->rx);

	if (c->lingering) { /* dropped; closed at the end of it */
		if (rv != 0) {
			http_conn_close(c);
		} else {
			size_t n = nng_aio_count(c->rx);

			c->linger_left -=
			    n < c->linger_left ? n : c->linger_left;
			linger_read(c);
		}
		conn_unref(c);
		return;
	}
	if (rv != 0) {
		if (rv == NNG_ETIMEDOUT) {
			pthread_mutex_lock(&s->mu);
			if (c->head_deadline != 0)
				s->st.head_timeouts++;
			else
				s->st.idle_timeouts++;
			pthread_mutex_unlock(&s->mu);
		}
		http_conn_close(c);
		conn_unref(c);
		return;
	}
	pthread_mutex_lock(&c->mu);
	c->put += nng_aio_count(c->rx);
	/* a head's deadline runs from its first byte, blank lines before
	 * it included: CRLFs sent now and then keep nothing open */
	if (c->head_deadline == 0)
		c->head_deadline = clock_mono_ms() + s->conf.header_timeout_ms;
	pthread_mutex_unlock(&c->mu);
	head_next(c);
	conn_unref(c);
}

/* ---- a handler's reads --------------------------------------------------- */

size_t
http_conn_take(struct http_conn *c, void *buf, size_t n)
{
	size_t k;

	pthread_mutex_lock(&c->mu);
	k = c->put - c->get < n ? c->put - c->get : n;
	memcpy(buf, c->buf + c->get, k);
	c->get += k;
	pthread_mutex_unlock(&c->mu);
	return k;
}

void
http_conn_read(struct http_conn *c, void *buf, size_t n, nng_duration timeout,
    http_conn_fn fn, void *arg)
{
	nng_iov iov = { buf, n };

	pthread_mutex_lock(&c->mu);
	if (!conn_op(c)) {
		pthread_mutex_unlock(&c->mu);
		fn(arg, NNG_ECLOSED, 0);
		return;
	}
	c->ufn = fn;
	c->uarg = arg;
	if (c->put > c->get) { /* answered from the buffer, on a thread */
		c->ucount = c->put - c->get < n ? c->put - c->get : n;
		memcpy(buf, c->buf + c->get, c->ucount);
		c->get += c->ucount;
		c->ubuffered = true;
		pthread_mutex_unlock(&c->mu);
		if (nng_aio_begin(c->urx))
			nng_aio_finish(c->urx, 0);
		return;
	}
	c->ubuffered = false;
	nng_aio_set_iov(c->urx, 1, &iov);
	nng_aio_set_timeout(c->urx, timeout);
	nng_stream_recv(c->s, c->urx);
	pthread_mutex_unlock(&c->mu);
}

static void
urx_cb(void *arg)
{
	struct http_conn *c = arg;
	int rv = nng_aio_result(c->urx);
	http_conn_fn fn;
	void *uarg;
	size_t n;

	pthread_mutex_lock(&c->mu);
	n = c->ubuffered ? c->ucount : nng_aio_count(c->urx);
	fn = c->ufn;
	uarg = c->uarg;
	c->ufn = NULL;
	c->ubuffered = false;
	pthread_mutex_unlock(&c->mu);
	if (rv == 0 && n == 0)
		rv = NNG_ECLOSED;
	fn(uarg, rv, n);
	conn_unref(c);
}

static void
cont_cb(void *arg)
{
	struct http_conn *c = arg;

	if (nng_aio_result(c->cont) != 0 ||
	    nng_aio_count(c->cont) != sizeof(CONTINUE) - 1)
		http_conn_close(c); /* not all of it: nothing after can be */
	conn_unref(c);
}

void
http_conn_continue(struct http_conn *c)
{
	nng_iov iov = { (void *)CONTINUE, sizeof(CONTINUE) - 1 };

	pthread_mutex_lock(&c->mu);
	if (!conn_op(c)) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	/* the stream writes in order: before the response */
	nng_aio_set_iov(c->cont, 1, &iov);
	nng_stream_send(c->s, c->cont);
	pthread_mutex_unlock(&c->mu);
}

void
http_conn_close_after(struct http_conn *c)
{
	pthread_mutex_lock(&c->mu);
	c->close_after = true;
	pthread_mutex_unlock(&c->mu);
}

/* ---- accepting ----------------------------------------------------------- */

/* The stream's remote address as "1.2.3.4:5" or "[::1]:5"; "http" when
 * unknown. */
static void
peer_of(nng_stream *stream, char *out, size_t cap)
{
	nng_sockaddr sa;
	char a[INET6_ADDRSTRLEN];

	snprintf(out, cap, "http");
	if (nng_stream_get_addr(stream, NNG_OPT_REMADDR, &sa) != 0)
		return;
	if (sa.s_family == NNG_AF_INET &&
	    inet_ntop(AF_INET, &sa.s_in.sa_addr, a, sizeof(a)) != NULL)
		snprintf(out, cap, "%s:%u", a, ntohs(sa.s_in.sa_port));
	else if (sa.s_family == NNG_AF_INET6 &&
	    inet_ntop(AF_INET6, sa.s_in6.sa_addr, a, sizeof(a)) != NULL)
		snprintf(out, cap, "[%s]:%u", a, ntohs(sa.s_in6.sa_port));
}

const char *
http_conn_peer(const struct http_conn *c)
{
	return c->peer;
}

static void
conn_new(struct http_srv *s, nng_stream *stream)
{
	struct http_conn *c = calloc(1, sizeof(*c));

	if (c == NULL || nng_aio_alloc(&c->rx, rx_cb, c) != 0 ||
	    nng_aio_alloc(&c->tx, tx_cb, c) != 0 ||
	    nng_aio_alloc(&c->cb, cb_done, c) != 0 ||
	    nng_aio_alloc(&c->urx, urx_cb, c) != 0 ||
	    nng_aio_alloc(&c->cont, cont_cb, c) != 0 ||
	    nng_aio_alloc(&c->fini, fini_cb, c) != 0) {
		if (c != NULL) {
			nng_aio_free(c->rx);
			nng_aio_free(c->tx);
			nng_aio_free(c->cb);
			nng_aio_free(c->urx);
			nng_aio_free(c->cont);
			free(c);
		}
		nng_stream_close(stream);
		nng_stream_free(stream);
		return;
	}
	(void)nng_stream_set_bool(stream, NNG_OPT_TCP_NODELAY, true);
	peer_of(stream, c->peer, sizeof(c->peer));
	pthread_mutex_init(&c->mu, NULL);
	c->srv = s;
	c->s = stream;
	c->refs = 1;
	pthread_mutex_lock(&s->mu);
	c->next = s->conns;
	if (s->conns != NULL)
		s->conns->prev = c;
	s->conns = c;
	s->st.open++;
	s->st.accepted++;
	pthread_mutex_unlock(&s->mu);
	head_read(c);
}

static void
accept_next(struct http_srv *s)
{
	nng_stream_listener_accept(s->l, s->acc);
}

static void
acc_cb(void *arg)
{
	struct http_srv *s = arg;
	int rv = nng_aio_result(s->acc);
	nng_stream *stream;
	bool refuse, closing, log = false;
	uint64_t n = 0;

	pthread_mutex_lock(&s->mu);
	closing = s->closing;
	pthread_mutex_unlock(&s->mu);
	if (closing || rv == NNG_ECLOSED || rv == NNG_ECANCELED)
		return;
	if (rv != 0) {
		/* out of descriptors (or memory): a pause, not a spin */
		int64_t now = clock_mono_ms();

		pthread_mutex_lock(&s->mu);
		s->st.accept_errors++;
		s->unlogged++;
		if (now - s->logged >= LOG_EVERY_MS) {
			log = true;
			n = s->unlogged;
			s->unlogged = 0;
			s->logged = now;
		}
		pthread_mutex_unlock(&s->mu);
		if (log)
			log_warn("http",
			    "accept failed error=\"%s\" failures=%" PRIu64
			    " (pausing %d ms each)",
			    nng_strerror(rv), n, HTTP_SRV_ACCEPT_PAUSE_MS);
		nng_sleep_aio(HTTP_SRV_ACCEPT_PAUSE_MS, s->pause);
		return;
	}
	stream = nng_aio_get_output(s->acc, 0);
	pthread_mutex_lock(&s->mu);
	refuse = s->st.open >= s->conf.max_conns;
	if (refuse) {
		int64_t now = clock_mono_ms();

		s->st.over_cap++;
		s->cap_unlogged++;
		if (now - s->cap_logged >= LOG_EVERY_MS) {
			log = true;
			n = s->cap_unlogged;
			s->cap_unlogged = 0;
			s->cap_logged = now;
		}
	}
	pthread_mutex_unlock(&s->mu);
	accept_next(s);
	if (refuse) {
		if (log)
			log_warn("http",
			    "connections closed as they came: the "
			    "--http-max-conns limit is reached max=%u "
			    "closed=%" PRIu64,
			    s->conf.max_conns, n);
		nng_stream_close(stream);
		nng_stream_free(stream);
		return;
	}
	conn_new(s, stream);
}

static void
pause_cb(void *arg)
{
	struct http_srv *s = arg;
	bool closing;

	pthread_mutex_lock(&s->mu);
	closing = s->closing;
	pthread_mutex_unlock(&s->mu);
	if (!closing && nng_aio_result(s->pause) == 0)
		accept_next(s);
}

int
http_srv_open(struct http_srv **out, const char *url, nng_tls_config *tls,
    const struct http_srv_conf *conf, http_srv_fn fn, void *arg)
{
	struct http_srv *s = calloc(1, sizeof(*s));
	int rv;

	if (s == NULL)
		return NNG_ENOMEM;
	pthread_mutex_init(&s->mu, NULL);
	s->conf = *conf;
	s->fn = fn;
	s->arg = arg;
	if ((rv = nng_aio_alloc(&s->acc, acc_cb, s)) != 0 ||
	    (rv = nng_aio_alloc(&s->pause, pause_cb, s)) != 0 ||
	    (rv = nng_stream_listener_alloc(&s->l, url)) != 0 ||
	    (tls != NULL &&
	        (rv = nng_stream_listener_set_ptr(
	             s->l, NNG_OPT_TLS_CONFIG, tls)) != 0) ||
	    (rv = nng_stream_listener_listen(s->l)) != 0) {
		nng_stream_listener_free(s->l);
		nng_aio_free(s->acc);
		nng_aio_free(s->pause);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return rv;
	}
	accept_next(s);
	*out = s;
	return 0;
}

void
http_srv_close(struct http_srv *s)
{
	struct timespec ts = { 0, 1000000 };
	uint64_t open = 0;

	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->closing = true;
	pthread_mutex_unlock(&s->mu);
	nng_stream_listener_close(s->l);
	nng_aio_stop(s->acc);
	nng_aio_stop(s->pause);
	for (int i = 0; i < CLOSE_WAIT_MS; i++) {
		struct http_conn *c;

		pthread_mutex_lock(&s->mu);
		for (c = s->conns; c != NULL; c = c->next) {
			pthread_mutex_lock(&c->mu);
			if (!c->closed) {
				c->closed = true;
				c->refs++; /* dropped below, unlocked */
				pthread_mutex_unlock(&c->mu);
				break;
			}
			pthread_mutex_unlock(&c->mu);
		}
		open = s->st.open;
		pthread_mutex_unlock(&s->mu);
		if (c != NULL) { /* closed here: its own reference goes */
			nng_stream_close(c->s);
			conn_unref(c);
			conn_unref(c);
			continue;
		}
		if (open == 0)
			break;
		nanosleep(&ts, NULL);
	}
	if (open > 0) {
		/* a handler never finished: its memory would be used after
		 * the free; left to the process's end */
		log_warn(
		    "http", "connections still open at exit: %" PRIu64, open);
		return;
	}
	nng_stream_listener_free(s->l);
	nng_aio_free(s->acc);
	nng_aio_free(s->pause);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void
http_srv_stats(struct http_srv *s, struct http_srv_stats *out)
{
	pthread_mutex_lock(&s->mu);
	*out = s->st;
	pthread_mutex_unlock(&s->mu);
}
