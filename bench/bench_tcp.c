/* bench_tcp - see bench_tcp.h. One thread drives every connection with
 * epoll: beanstalkd and Redis are one thread each, so on two cores one
 * client thread leaves the server the other core.
 *
 * Buffers. A connection queues what it sends in `out` and sends what the
 * socket takes; epoll watches EPOLLOUT only while bytes remain. It reads
 * into `in` and hands every complete reply to the dialect's parser, so a
 * pipelined request (a batch, Redis's XACK + XDEL) is answered reply by
 * reply. Set-up (hello, prepare, count, preload) uses the same buffers
 * with blocking waits.
 *
 * Time. Replies are checked against --timeout on every wake-up of the
 * loop (at least every BT_TIMEOUT_CHECK_MS), and the whole run against
 * --limit. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_tcp.h"
#include "util/clock.h"

enum {
	BT_IN_MIN = 64 * 1024,    /* read buffer, at least */
	BT_PRELOAD_CHUNK = 500,   /* puts pipelined per write in the preload */
	BT_TIMEOUT_CHECK_MS = 100 /* how often idle loops look at timeouts */
};

struct bench_tdrv;

struct bench_tconn {
	struct bench_tdrv *d;
	unsigned idx;
	int fd;
	enum bench_role role;
	enum bench_tphase phase;
	bool put_next; /* BENCH_BOTH: the next op is a put */
	bool done;
	bool want_out;   /* EPOLLOUT is registered */
	unsigned expect; /* replies still due for the request in flight */
	unsigned batch;  /* tasks in the put in flight */
	int64_t t_req;   /* ns: the request in flight was sent */
	int64_t t_op;    /* ns: the op (take + ack) began */
	char *out;       /* bytes to send: out[out_off, out_len) */
	size_t out_len, out_off, out_cap;
	char *in; /* received, unparsed: in[in_off, in_len) */
	size_t in_len, in_off, in_cap;
	struct bench_tally t;
};

struct bench_tdrv {
	const struct bench_dialect *dl;
	const struct bench_opts *o;
	unsigned n;
	struct bench_tconn *conns;
	char *put_cmd; /* one complete put command */
	size_t put_len;
	uint64_t remaining; /* put: tasks not claimed yet */
	int64_t deadline;   /* ns; 0 = none */
	int ep;
	unsigned active;
	bool failed;
	char err[512];
};

static void tdrv_fail(struct bench_tdrv *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void tdrv_vfail(struct bench_tdrv *d, const char *prefix,
    const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

static void
tdrv_vfail(
    struct bench_tdrv *d, const char *prefix, const char *fmt, va_list ap)
{
	size_t n;

	if (d->failed)
		return;
	d->failed = true;
	n = (size_t)snprintf(d->err, sizeof(d->err), "%s", prefix);
	if (n < sizeof(d->err))
		vsnprintf(d->err + n, sizeof(d->err) - n, fmt, ap);
}

static void
tdrv_fail(struct bench_tdrv *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tdrv_vfail(d, "", fmt, ap);
	va_end(ap);
}

void
bench_tconn_fail(struct bench_tconn *c, const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "connection %u: ", c->idx);
	va_start(ap, fmt);
	tdrv_vfail(c->d, prefix, fmt, ap);
	va_end(ap);
}

unsigned
bench_tconn_idx(const struct bench_tconn *c)
{
	return c->idx;
}

const struct bench_opts *
bench_tconn_opts(const struct bench_tconn *c)
{
	return c->d->o;
}

/* ---- connections ----------------------------------------------------- */

/* tcp://HOST:PORT into a connected, TCP_NODELAY socket; -1 after
 * tdrv_fail. */
static int
tcp_connect(struct bench_tdrv *d, const char *url)
{
	struct addrinfo hints = { 0 }, *ai, *p;
	char host[256];
	const char *h = url + 6, *colon;
	int fd = -1, one = 1, rc;

	colon = strrchr(h, ':');
	if (strncmp(url, "tcp://", 6) != 0 || colon == NULL || colon == h ||
	    (size_t)(colon - h) >= sizeof(host) || colon[1] == '\0') {
		tdrv_fail(d, "--url: '%s' is not tcp://HOST:PORT", url);
		return -1;
	}
	memcpy(host, h, (size_t)(colon - h));
	host[colon - h] = '\0';
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, colon + 1, &hints, &ai)) != 0) {
		tdrv_fail(d, "%s: %s", url, gai_strerror(rc));
		return -1;
	}
	for (p = ai; p != NULL; p = p->ai_next) {
		fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC,
		    p->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, p->ai_addr, p->ai_addrlen) == 0)
			break;
		rc = errno;
		close(fd);
		fd = -1;
		errno = rc;
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		tdrv_fail(d, "cannot connect to %s: %s (is %s running?)", url,
		    strerror(errno), d->dl->server);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static bool
out_reserve(struct bench_tconn *c, size_t more)
{
	if (c->out_len + more <= c->out_cap)
		return true;
	size_t cap = c->out_cap ? c->out_cap : 4096;
	while (cap < c->out_len + more)
		cap *= 2;
	char *p = realloc(c->out, cap);
	if (p == NULL)
		return false;
	c->out = p;
	c->out_cap = cap;
	return true;
}

int
bench_tconn_append(struct bench_tconn *c, const void *p, size_t n)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (!out_reserve(c, n)) {
		tdrv_fail(c->d, "out of memory");
		return -1;
	}
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
	return 0;
}

/* Waits until `deadline` (ns) for `events` on the connection's socket. */
static int
tconn_poll(struct bench_tconn *c, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = c->fd, .events = events };
	int64_t left = (deadline - clock_mono_ns()) / 1000000;
	int rc;

	if (left <= 0)
		return 0;
	do
		rc = poll(&pfd, 1, left > 1000000 ? 1000000 : (int)left);
	while (rc < 0 && errno == EINTR);
	return rc;
}

/* Sends what is queued. Blocking mode (set-up): waits until `deadline`.
 * Non-blocking (the run): sends what the socket takes now. Returns 0, or
 * -1 after tdrv_fail. */
static int
out_flush(struct bench_tconn *c, bool block, int64_t deadline)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off,
		    c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			c->out_off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!block)
				return 0;
			if (tconn_poll(c, POLLOUT, deadline) <= 0) {
				bench_tconn_fail(c,
				    "%s takes no more bytes (timeout)",
				    c->d->dl->server);
				return -1;
			}
			continue;
		}
		bench_tconn_fail(c, "send: %s", strerror(errno));
		return -1;
	}
	c->out_off = c->out_len = 0;
	return 0;
}

int
bench_tconn_flush(struct bench_tconn *c, int64_t deadline)
{
	return out_flush(c, true, deadline);
}

/* Reads what is there into the input buffer. Returns the bytes read, 0
 * when nothing was ready, or -1 after tdrv_fail (closed, error, full). */
static long
in_fill(struct bench_tconn *c)
{
	ssize_t r;

	if (c->in_off > 0) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	if (c->in_len == c->in_cap) {
		bench_tconn_fail(c, "a reply larger than %zu bytes", c->in_cap);
		return -1;
	}
	do
		r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len,
		    MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (r <= 0) {
		bench_tconn_fail(c, "%s %s", c->d->dl->server,
		    r == 0 ? "closed the connection" : strerror(errno));
		return -1;
	}
	c->in_len += (size_t)r;
	return r;
}

/* Takes the reply a parser found at the front of the input: `k` bytes
 * (1), none yet (0), or a malformed one (-1 after tdrv_fail). */
static int
in_consume(struct bench_tconn *c, long k)
{
	if (k < 0) {
		bench_tconn_fail(c, "malformed reply from %s: '%.40s'",
		    c->d->dl->server, c->in + c->in_off);
		return -1;
	}
	if (k == 0)
		return 0;
	c->in_off += (size_t)k;
	return 1;
}

/* Blocking: waits until more bytes came, at most until `deadline`. */
static int
in_more(struct bench_tconn *c, int64_t deadline)
{
	if (tconn_poll(c, POLLIN, deadline) <= 0) {
		bench_tconn_fail(
		    c, "no reply from %s in time", c->d->dl->server);
		return -1;
	}
	return in_fill(c) < 0 ? -1 : 0;
}

int
bench_tconn_wait(
    struct bench_tconn *c, bench_tparse_fn *parse, void *out, int64_t deadline)
{
	for (;;) {
		int rc = in_consume(
		    c, parse(c->in + c->in_off, c->in_len - c->in_off, out));
		if (rc != 0)
			return rc > 0 ? 0 : -1;
		if (in_more(c, deadline) != 0)
			return -1;
	}
}

/* The next reply to a request of `phase`, read by the dialect: 1 and
 * `*r` (valid until the next read), 0 when more bytes are needed, -1 after
 * tdrv_fail. With a `deadline` (set-up), waits for it until then. */
static int
reply_next(struct bench_tconn *c, enum bench_tphase phase,
    struct bench_treply *r, int64_t deadline)
{
	for (;;) {
		int rc = in_consume(c,
		    c->d->dl->reply(
		        phase, c->in + c->in_off, c->in_len - c->in_off, r));
		if (rc != 0 || deadline == 0)
			return rc;
		if (in_more(c, deadline) != 0)
			return -1;
	}
}

static int
expect(struct bench_tconn *c, const struct bench_treply *r,
    enum bench_tkind kind, const char *cmd)
{
	if (r->kind == kind)
		return 0;
	bench_tconn_fail(c, "%s: %s answered '%.*s'", cmd, c->d->dl->server,
	    (int)r->text_len, r->text);
	return -1;
}

/* Connects and says hello. */
static int
tconn_open(struct bench_tdrv *d, struct bench_tconn *c, int64_t deadline)
{
	bench_tally_init(&c->t);
	c->in_cap =
	    d->o->bytes + 2048 > BT_IN_MIN ? d->o->bytes + 2048 : BT_IN_MIN;
	c->in = malloc(c->in_cap);
	if (c->in == NULL) {
		tdrv_fail(d, "out of memory");
		return -1;
	}
	if ((c->fd = tcp_connect(d, d->o->url)) < 0)
		return -1;
	if (d->dl->hello != NULL && d->dl->hello(c, deadline) != 0)
		return -1;
	return 0;
}

/* Puts `n` tasks on `c`, BT_PRELOAD_CHUNK pipelined per write (or the
 * dialect's pipeline_max). */
static int
preload(
    struct bench_tdrv *d, struct bench_tconn *c, uint64_t n, int64_t deadline)
{
	unsigned chunk =
	    d->dl->pipeline_max > 0 && d->dl->pipeline_max < BT_PRELOAD_CHUNK
	    ? d->dl->pipeline_max
	    : BT_PRELOAD_CHUNK;
	struct bench_treply r;

	while (n > 0) {
		unsigned k = n < chunk ? (unsigned)n : chunk;
		for (unsigned i = 0; i < k; i++)
			if (bench_tconn_append(c, d->put_cmd, d->put_len) != 0)
				return -1;
		if (out_flush(c, true, deadline) != 0)
			return -1;
		for (unsigned i = 0; i < k; i++)
			if (reply_next(c, BT_PUT, &r, deadline) != 1 ||
			    expect(c, &r, BT_DONE, "put (preload)") != 0)
				return -1;
		n -= k;
	}
	return 0;
}

/* ---- the event loop -------------------------------------------------- */

static void
tconn_stop(struct bench_tconn *c)
{
	if (c->done)
		return;
	c->done = true;
	c->phase = BT_IDLE;
	c->d->active--;
}

/* Sends what is queued, and asks epoll for EPOLLOUT only while bytes
 * remain. */
static int
tconn_push(struct bench_tconn *c)
{
	struct epoll_event ev = { .data.ptr = c };
	bool want;

	if (out_flush(c, false, 0) != 0)
		return -1;
	want = c->out_off < c->out_len;
	if (want != c->want_out) {
		ev.events = EPOLLIN | (want ? EPOLLOUT : 0);
		if (epoll_ctl(c->d->ep, EPOLL_CTL_MOD, c->fd, &ev) != 0) {
			tdrv_fail(c->d, "epoll_ctl: %s", strerror(errno));
			return -1;
		}
		c->want_out = want;
	}
	return 0;
}

/* Starts the next op of `c`, or stops it. */
static int
tconn_next(struct bench_tconn *c, int64_t now)
{
	struct bench_tdrv *d = c->d;
	bool put;

	if (d->failed || (d->deadline && now >= d->deadline)) {
		tconn_stop(c);
		return 0;
	}
	put =
	    c->role == BENCH_PRODUCER || (c->role == BENCH_BOTH && c->put_next);
	if (c->role == BENCH_BOTH)
		c->put_next = !c->put_next;
	c->t_req = now;
	if (put) {
		unsigned k = 1;
		if (d->o->workload == BENCH_PUT) {
			k = d->remaining < d->o->batch ? (unsigned)d->remaining
			                               : d->o->batch;
			if (k == 0) {
				tconn_stop(c);
				return 0;
			}
			d->remaining -= k;
		}
		for (unsigned i = 0; i < k; i++)
			if (bench_tconn_append(c, d->put_cmd, d->put_len) != 0)
				return -1;
		c->phase = BT_PUT;
		c->batch = c->expect = k;
	} else {
		c->t_op = now;
		c->phase = BT_TAKE;
		c->expect = 1;
		if (d->dl->take(c) != 0)
			return -1;
	}
	return tconn_push(c);
}

static int
tconn_reply(struct bench_tconn *c, const struct bench_treply *r, int64_t now)
{
	struct bench_tdrv *d = c->d;
	int k;

	switch (c->phase) {
	case BT_PUT:
		if (expect(c, r, BT_DONE, "put") != 0)
			return -1;
		if (--c->expect > 0)
			return 0;
		bench_hist_record(&c->t.lat_put, (uint64_t)(now - c->t_req));
		c->t.puts += c->batch;
		c->t.requests++;
		return tconn_next(c, now);
	case BT_TAKE:
		if (r->kind == BT_EMPTY) {
			if (d->o->workload == BENCH_DRAIN) {
				tconn_stop(c);
				return 0;
			}
			c->t.empty++;
			return tconn_next(c, now);
		}
		if (expect(c, r, BT_TASK, d->dl->take_name) != 0)
			return -1;
		if (r->body_len != d->o->bytes) {
			bench_tconn_fail(c,
			    "task %s has %zu bytes, not %zu (a tube with "
			    "other tasks?)",
			    r->id, r->body_len, d->o->bytes);
			return -1;
		}
		c->phase = BT_ACK;
		c->t_req = now;
		if ((k = d->dl->ack(c, r->id)) <= 0)
			return -1;
		c->expect = (unsigned)k;
		return tconn_push(c);
	case BT_ACK:
		if (expect(c, r, BT_DONE, d->dl->ack_name) != 0)
			return -1;
		if (--c->expect > 0)
			return 0;
		bench_hist_record(&c->t.lat_take, (uint64_t)(now - c->t_op));
		c->t.take_acks++;
		return tconn_next(c, now);
	case BT_IDLE:
		break;
	}
	bench_tconn_fail(
	    c, "a reply nothing asked for: '%.*s'", (int)r->text_len, r->text);
	return -1;
}

/* Reads and handles every complete reply on `c`. */
static int
tconn_readable(struct bench_tconn *c)
{
	struct bench_treply r;
	long got;
	int rc = 0;

	do {
		if ((got = in_fill(c)) < 0)
			return -1;
		while (!c->done && (rc = reply_next(c, c->phase, &r, 0)) == 1)
			if (tconn_reply(c, &r, clock_mono_ns()) != 0)
				return -1;
		if (!c->done && rc < 0)
			return -1;
	} while (got > 0 && !c->done);
	return 0;
}

/* A connection whose request has waited longer than --timeout fails. */
static void
check_timeouts(struct bench_tdrv *d, int64_t now)
{
	int64_t tmo = (int64_t)d->o->timeout_ms * 1000000;

	for (unsigned i = 0; i < d->n; i++) {
		struct bench_tconn *c = &d->conns[i];
		if (!c->done && c->phase != BT_IDLE && now - c->t_req > tmo) {
			bench_tconn_fail(c,
			    "no reply from %s to a %s after %llu ms",
			    d->dl->server,
			    c->phase == BT_PUT        ? "put"
			        : c->phase == BT_TAKE ? d->dl->take_name
			                              : d->dl->ack_name,
			    (unsigned long long)d->o->timeout_ms);
			return;
		}
	}
}

static int
tdrv_loop(struct bench_tdrv *d, int64_t t0, int64_t limit, int64_t *t_end)
{
	struct epoll_event evs[64];
	int64_t now = t0, last_check = t0;

	for (unsigned i = 0; i < d->n && !d->failed; i++)
		if (tconn_next(&d->conns[i], t0) != 0)
			break;
	while (d->active > 0 && !d->failed) {
		int n = epoll_wait(d->ep, evs, 64, BT_TIMEOUT_CHECK_MS);
		if (n < 0 && errno != EINTR) {
			tdrv_fail(d, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n && !d->failed; i++) {
			struct bench_tconn *c = evs[i].data.ptr;
			if (c->done)
				continue;
			if (evs[i].events & EPOLLOUT)
				if (tconn_push(c) != 0)
					break;
			if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				if (tconn_readable(c) != 0)
					break;
		}
		now = clock_mono_ns();
		*t_end = now;
		if (now - last_check >= BT_TIMEOUT_CHECK_MS * 1000000LL) {
			check_timeouts(d, now);
			last_check = now;
		}
		if (now > limit && d->active > 0) {
			tdrv_fail(d,
			    "the run did not end within --limit %llu ms: %u "
			    "of %u connections still busy",
			    (unsigned long long)d->o->limit_ms, d->active,
			    d->n);
		}
	}
	return d->failed ? -1 : 0;
}

/* ---- set-up and the run -------------------------------------------- */

static void
tdrv_destroy(struct bench_tdrv *d)
{
	for (unsigned i = 0; d->conns != NULL && i < d->n; i++) {
		struct bench_tconn *c = &d->conns[i];
		if (c->fd >= 0)
			close(c->fd);
		free(c->in);
		free(c->out);
	}
	if (d->ep >= 0)
		close(d->ep);
	free(d->conns);
	free(d->put_cmd);
}

int
bench_tcp_run(const struct bench_dialect *dl, const struct bench_opts *o,
    struct bench_result *r)
{
	struct bench_tdrv d = { .dl = dl, .o = o, .ep = -1 };
	int64_t t0, t_end, limit, cpu0, self0;
	long long before;
	int rc = -1;

	if (dl->pipeline_max > 0 && o->batch > dl->pipeline_max) {
		bench_error("--batch %u: %s takes at most %u requests "
		            "pipelined",
		    o->batch, dl->server, dl->pipeline_max);
		return -1;
	}
	limit = clock_mono_ns() + (int64_t)o->limit_ms * 1000000;
	d.n = o->conns;
	d.conns = calloc(d.n, sizeof(*d.conns));
	d.put_cmd = dl->put_cmd(o, &d.put_len);
	if (d.conns == NULL || d.put_cmd == NULL) {
		bench_error("out of memory");
		goto out;
	}
	for (unsigned i = 0; i < d.n; i++)
		d.conns[i].fd = -1;
	if ((d.ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		bench_error("epoll_create1: %s", strerror(errno));
		goto out;
	}
	for (unsigned i = 0; i < d.n; i++) {
		struct bench_tconn *c = &d.conns[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

		c->d = &d;
		c->idx = i;
		c->role = bench_role_of(o->workload, i, d.n);
		c->put_next = true;
		if (tconn_open(&d, c, limit) != 0)
			goto fail_said;
		if (epoll_ctl(d.ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
			bench_error("epoll_ctl: %s", strerror(errno));
			goto out;
		}
	}

	/* Untimed: an empty tube for drain, then the preload. */
	if (dl->prepare != NULL && dl->prepare(&d.conns[0], limit) != 0)
		goto fail_said;
	if ((before = dl->count(&d.conns[0], limit)) < 0)
		goto fail_said;
	if (bench_check_start(o, before, r) != 0)
		goto out;
	t0 = clock_mono_ns();
	if (r->preloaded && preload(&d, &d.conns[0], r->preloaded, limit) != 0)
		goto fail_said;
	r->preload_s = (double)(clock_mono_ns() - t0) / 1e9;

	/* The run. */
	d.remaining = o->tasks;
	d.active = d.n;
	cpu0 = bench_server_cpu_ns(o);
	self0 = bench_self_cpu_ns();
	t0 = clock_mono_ns();
	t_end = t0;
	if (o->duration_ms)
		d.deadline = t0 + (int64_t)o->duration_ms * 1000000;
	if (tdrv_loop(&d, t0, limit, &t_end) != 0)
		goto fail_said;
	bench_result_cpu(r, o, cpu0, self0);

	r->seconds = (double)(t_end - t0) / 1e9;
	for (unsigned i = 0; i < d.n; i++)
		bench_result_add(r, &d.conns[i].t);

	if (bench_check_puts(o, r) != 0)
		goto out;
	if (o->workload == BENCH_DRAIN) {
		/* The sockets are idle now: back to blocking calls. */
		if ((r->left = dl->count(&d.conns[0], limit)) < 0)
			goto fail_said;
		if (bench_check_drain(o, r, "tasks") != 0)
			goto out;
	}
	rc = 0;
	goto out;
fail_said:
	bench_error("%s", d.err);
out:
	tdrv_destroy(&d);
	return rc;
}
