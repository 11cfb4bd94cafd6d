/* bench_beanstalk - the beanstalkd side of sluice-bench: C plain TCP
 * connections speaking beanstalkd's text protocol (doc/protocol.txt of
 * beanstalkd), driven by one thread with epoll. beanstalkd itself is one
 * thread, so on two cores one client thread leaves it the other core.
 *
 * Each connection first says `use T`, `watch T`, `ignore default`, so its
 * puts and reserves both go to the tube T. Then, one request in flight
 * per connection (closed loop):
 *
 *   put:   `put 1024 0 60 S` + payload  ->  INSERTED <id>
 *          (--batch N: N puts in one write, N INSERTED back; beanstalkd
 *          has no batch put, so this is pipelining, timed per batch)
 *   take:  `reserve-with-timeout 0`  ->  RESERVED <id> <bytes> + job
 *                                    |   TIMED_OUT (the tube is empty)
 *          `delete <id>`             ->  DELETED
 *
 * A take + delete pair is one op, timed from the reserve to DELETED. Any
 * other reply (OUT_OF_MEMORY, BURIED, DRAINING, ...) stops the run with
 * the server's words. Replies are checked against --timeout on every
 * wake-up of the loop, and the whole run against --limit. */
#include <errno.h>
#include <fcntl.h>
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

#include "bench_bsreply.h"
#include "bench_run.h"
#include "util/clock.h"

enum {
	BS_IN_MIN = 64 * 1024,    /* read buffer, at least */
	BS_PRELOAD_CHUNK = 500,   /* puts pipelined per write in the preload */
	BS_TIMEOUT_CHECK_MS = 100 /* how often idle loops look at timeouts */
};

enum bphase {
	BP_IDLE = 0,
	BP_PUT,
	BP_RESERVE,
	BP_DELETE,
};

struct bdrv;

struct bconn {
	struct bdrv *d;
	unsigned idx;
	int fd;
	enum bench_role role;
	enum bphase phase;
	bool put_next; /* BENCH_BOTH: the next op is a put */
	bool done;
	bool want_out;   /* EPOLLOUT is registered */
	unsigned expect; /* INSERTED replies still due for the put in flight */
	unsigned batch;  /* tasks in the put in flight */
	int64_t t_req;   /* ns: the request in flight was sent */
	int64_t t_op;    /* ns: the op (reserve + delete) began */
	char *out;       /* bytes to send: out[out_off, out_len) */
	size_t out_len, out_off, out_cap;
	char *in; /* received, unparsed: in[in_off, in_len) */
	size_t in_len, in_off, in_cap;
	struct bench_tally t;
};

struct bdrv {
	const struct bench_opts *o;
	unsigned n;
	struct bconn *conns;
	char *put_cmd; /* one complete put command, payload and CRLF */
	size_t put_len;
	uint64_t remaining; /* put: tasks not claimed yet */
	int64_t deadline;   /* ns; 0 = none */
	int ep;
	unsigned active;
	bool failed;
	char err[512];
};

static void bdrv_fail(struct bdrv *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
bdrv_fail(struct bdrv *d, const char *fmt, ...)
{
	va_list ap;

	if (d->failed)
		return;
	d->failed = true;
	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
}

/* ---- connections ----------------------------------------------------- */

/* tcp://HOST:PORT into a connected, TCP_NODELAY socket; -1 on error. */
static int
bs_connect(const char *url)
{
	struct addrinfo hints = { 0 }, *ai, *p;
	char host[256];
	const char *h = url + 6, *colon;
	int fd = -1, one = 1, rc;

	colon = strrchr(h, ':');
	if (strncmp(url, "tcp://", 6) != 0 || colon == NULL || colon == h ||
	    (size_t)(colon - h) >= sizeof(host) || colon[1] == '\0') {
		bench_error("--url: '%s' is not tcp://HOST:PORT", url);
		return -1;
	}
	memcpy(host, h, (size_t)(colon - h));
	host[colon - h] = '\0';
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, colon + 1, &hints, &ai)) != 0) {
		bench_error("%s: %s", url, gai_strerror(rc));
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
		bench_error("cannot connect to %s: %s (is beanstalkd running?)",
		    url, strerror(errno));
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static bool
out_reserve(struct bconn *c, size_t more)
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

static int
out_append(struct bconn *c, const char *p, size_t n)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (!out_reserve(c, n)) {
		bdrv_fail(c->d, "out of memory");
		return -1;
	}
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
	return 0;
}

/* Waits up to `ms` for `events` on the connection's socket. */
static int
bs_poll(struct bconn *c, short events, int64_t deadline)
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

/* Sends what is queued. Blocking mode (setup): waits until `deadline`.
 * Non-blocking (the run): sends what the socket takes now. Returns 0, or
 * -1 after bdrv_fail. */
static int
out_flush(struct bconn *c, bool block, int64_t deadline)
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
			if (bs_poll(c, POLLOUT, deadline) <= 0) {
				bdrv_fail(c->d,
				    "connection %u: beanstalkd takes no more "
				    "bytes (timeout)",
				    c->idx);
				return -1;
			}
			continue;
		}
		bdrv_fail(
		    c->d, "connection %u: send: %s", c->idx, strerror(errno));
		return -1;
	}
	c->out_off = c->out_len = 0;
	return 0;
}

/* Reads what is there into the input buffer. Returns the bytes read, 0
 * when nothing was ready, or -1 after bdrv_fail (closed, error, full). */
static long
in_fill(struct bconn *c)
{
	ssize_t r;

	if (c->in_off > 0) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	if (c->in_len == c->in_cap) {
		bdrv_fail(c->d, "connection %u: a reply larger than %zu bytes",
		    c->idx, c->in_cap);
		return -1;
	}
	do
		r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len,
		    MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (r <= 0) {
		bdrv_fail(c->d, "connection %u: beanstalkd %s", c->idx,
		    r == 0 ? "closed the connection" : strerror(errno));
		return -1;
	}
	c->in_len += (size_t)r;
	return r;
}

/* The next complete reply, if one is buffered: 1 and `*rep` (valid until
 * the next read), 0 when more bytes are needed, -1 after bdrv_fail. */
static int
in_next(struct bconn *c, struct bench_bsreply *rep)
{
	long k =
	    bench_bsreply_parse(c->in + c->in_off, c->in_len - c->in_off, rep);

	if (k < 0) {
		bdrv_fail(c->d,
		    "connection %u: malformed reply from "
		    "beanstalkd: '%.40s'",
		    c->idx, c->in + c->in_off);
		return -1;
	}
	if (k == 0)
		return 0;
	c->in_off += (size_t)k;
	return 1;
}

/* Blocking: the next reply, waiting until `deadline`. */
static int
in_wait(struct bconn *c, struct bench_bsreply *rep, int64_t deadline)
{
	for (;;) {
		int rc = in_next(c, rep);
		if (rc != 0)
			return rc;
		if (bs_poll(c, POLLIN, deadline) <= 0) {
			bdrv_fail(c->d,
			    "connection %u: no reply from "
			    "beanstalkd in time",
			    c->idx);
			return -1;
		}
		if (in_fill(c) < 0)
			return -1;
	}
}

static int
expect(struct bconn *c, const struct bench_bsreply *rep,
    enum bench_bsreply_kind kind, const char *cmd)
{
	if (rep->kind == kind)
		return 0;
	bdrv_fail(c->d, "connection %u: %s: beanstalkd answered '%.*s'", c->idx,
	    cmd, (int)rep->line_len, rep->line);
	return -1;
}

/* Connects and points the connection at the tube: use, watch, ignore
 * default. */
static int
bconn_open(struct bdrv *d, struct bconn *c, int64_t deadline)
{
	struct bench_bsreply rep;
	char cmd[3 * (BENCH_TUBE_MAX + 32)];
	int n;

	bench_tally_init(&c->t);
	c->in_cap =
	    d->o->bytes + 2048 > BS_IN_MIN ? d->o->bytes + 2048 : BS_IN_MIN;
	c->in = malloc(c->in_cap);
	if (c->in == NULL) {
		bdrv_fail(d, "out of memory");
		return -1;
	}
	if ((c->fd = bs_connect(d->o->url)) < 0)
		return -2; /* already said */
	n = snprintf(cmd, sizeof(cmd),
	    "use %s\r\nwatch %s\r\nignore default\r\n", d->o->tube, d->o->tube);
	if (out_append(c, cmd, (size_t)n) != 0 ||
	    out_flush(c, true, deadline) != 0)
		return -1;
	if (in_wait(c, &rep, deadline) != 1 ||
	    expect(c, &rep, BS_USING, "use") != 0 ||
	    in_wait(c, &rep, deadline) != 1 ||
	    expect(c, &rep, BS_WATCHING, "watch") != 0 ||
	    in_wait(c, &rep, deadline) != 1 ||
	    expect(c, &rep, BS_WATCHING, "ignore default") != 0)
		return -1;
	return 0;
}

/* Tasks of the tube in any state (stats-tube); -1 on error. */
static long long
tube_count(struct bdrv *d, struct bconn *c, int64_t deadline)
{
	static const char *const keys[] = { "current-jobs-ready",
		"current-jobs-reserved", "current-jobs-delayed",
		"current-jobs-buried" };
	struct bench_bsreply rep;
	char cmd[BENCH_TUBE_MAX + 32];
	long long sum = 0;
	int n;

	n = snprintf(cmd, sizeof(cmd), "stats-tube %s\r\n", d->o->tube);
	if (out_append(c, cmd, (size_t)n) != 0 ||
	    out_flush(c, true, deadline) != 0 ||
	    in_wait(c, &rep, deadline) != 1)
		return -1;
	if (rep.kind == BS_NOT_FOUND)
		return 0;
	if (expect(c, &rep, BS_OK, "stats-tube") != 0)
		return -1;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		long long v =
		    bench_bsreply_stat(rep.body, rep.body_len, keys[i]);
		if (v < 0) {
			bdrv_fail(d, "stats-tube: no %s in the reply", keys[i]);
			return -1;
		}
		sum += v;
	}
	return sum;
}

/* Puts `n` tasks on `c`, BS_PRELOAD_CHUNK pipelined per write. */
static int
preload(struct bdrv *d, struct bconn *c, uint64_t n, int64_t deadline)
{
	struct bench_bsreply rep;

	while (n > 0) {
		unsigned k =
		    n < BS_PRELOAD_CHUNK ? (unsigned)n : BS_PRELOAD_CHUNK;
		for (unsigned i = 0; i < k; i++)
			if (out_append(c, d->put_cmd, d->put_len) != 0)
				return -1;
		if (out_flush(c, true, deadline) != 0)
			return -1;
		for (unsigned i = 0; i < k; i++)
			if (in_wait(c, &rep, deadline) != 1 ||
			    expect(c, &rep, BS_INSERTED, "put (preload)") != 0)
				return -1;
		n -= k;
	}
	return 0;
}

/* ---- the event loop -------------------------------------------------- */

static void
bconn_stop(struct bconn *c)
{
	if (c->done)
		return;
	c->done = true;
	c->phase = BP_IDLE;
	c->d->active--;
}

/* Sends what is queued, and asks epoll for EPOLLOUT only while bytes
 * remain. */
static int
bconn_push(struct bconn *c)
{
	struct epoll_event ev = { .data.ptr = c };
	bool want;

	if (out_flush(c, false, 0) != 0)
		return -1;
	want = c->out_off < c->out_len;
	if (want != c->want_out) {
		ev.events = EPOLLIN | (want ? EPOLLOUT : 0);
		if (epoll_ctl(c->d->ep, EPOLL_CTL_MOD, c->fd, &ev) != 0) {
			bdrv_fail(c->d, "epoll_ctl: %s", strerror(errno));
			return -1;
		}
		c->want_out = want;
	}
	return 0;
}

/* Starts the next op of `c`, or stops it. */
static int
bconn_next(struct bconn *c, int64_t now)
{
	static const char reserve[] = "reserve-with-timeout 0\r\n";
	struct bdrv *d = c->d;
	bool put;

	if (d->failed || (d->deadline && now >= d->deadline)) {
		bconn_stop(c);
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
				bconn_stop(c);
				return 0;
			}
			d->remaining -= k;
		}
		for (unsigned i = 0; i < k; i++)
			if (out_append(c, d->put_cmd, d->put_len) != 0)
				return -1;
		c->phase = BP_PUT;
		c->batch = c->expect = k;
	} else {
		c->t_op = now;
		c->phase = BP_RESERVE;
		if (out_append(c, reserve, sizeof(reserve) - 1) != 0)
			return -1;
	}
	return bconn_push(c);
}

static int
bconn_reply(struct bconn *c, const struct bench_bsreply *rep, int64_t now)
{
	struct bdrv *d = c->d;
	char cmd[48];
	int n;

	switch (c->phase) {
	case BP_PUT:
		if (expect(c, rep, BS_INSERTED, "put") != 0)
			return -1;
		if (--c->expect > 0)
			return 0;
		bench_hist_record(&c->t.lat_put, (uint64_t)(now - c->t_req));
		c->t.puts += c->batch;
		c->t.requests++;
		return bconn_next(c, now);
	case BP_RESERVE:
		if (rep->kind == BS_TIMED_OUT) {
			if (d->o->workload == BENCH_DRAIN) {
				bconn_stop(c);
				return 0;
			}
			c->t.empty++;
			return bconn_next(c, now);
		}
		if (expect(c, rep, BS_RESERVED, "reserve-with-timeout 0") != 0)
			return -1;
		if (rep->body_len != d->o->bytes) {
			bdrv_fail(d,
			    "connection %u: job %llu has %zu bytes, not %zu "
			    "(a tube with other jobs?)",
			    c->idx, (unsigned long long)rep->id, rep->body_len,
			    d->o->bytes);
			return -1;
		}
		n = snprintf(cmd, sizeof(cmd), "delete %llu\r\n",
		    (unsigned long long)rep->id);
		c->phase = BP_DELETE;
		c->t_req = now;
		if (out_append(c, cmd, (size_t)n) != 0)
			return -1;
		return bconn_push(c);
	case BP_DELETE:
		if (expect(c, rep, BS_DELETED, "delete") != 0)
			return -1;
		bench_hist_record(&c->t.lat_take, (uint64_t)(now - c->t_op));
		c->t.take_acks++;
		return bconn_next(c, now);
	case BP_IDLE:
		break;
	}
	bdrv_fail(d, "connection %u: a reply nothing asked for: '%.*s'", c->idx,
	    (int)rep->line_len, rep->line);
	return -1;
}

/* Reads and handles every complete reply on `c`. */
static int
bconn_readable(struct bconn *c)
{
	struct bench_bsreply rep;
	long got;
	int rc;

	do {
		if ((got = in_fill(c)) < 0)
			return -1;
		while ((rc = in_next(c, &rep)) == 1)
			if (bconn_reply(c, &rep, clock_mono_ns()) != 0)
				return -1;
		if (rc < 0)
			return -1;
	} while (got > 0 && !c->done);
	return 0;
}

/* A connection whose request has waited longer than --timeout fails. */
static void
check_timeouts(struct bdrv *d, int64_t now)
{
	int64_t tmo = (int64_t)d->o->timeout_ms * 1000000;

	for (unsigned i = 0; i < d->n; i++) {
		struct bconn *c = &d->conns[i];
		if (!c->done && c->phase != BP_IDLE && now - c->t_req > tmo) {
			bdrv_fail(d,
			    "connection %u: no reply from beanstalkd to a %s "
			    "after %llu ms",
			    i,
			    c->phase == BP_PUT ? "put"
			        : c->phase == BP_RESERVE
			        ? "reserve-with-timeout"
			        : "delete",
			    (unsigned long long)d->o->timeout_ms);
			return;
		}
	}
}

static int
bdrv_loop(struct bdrv *d, int64_t t0, int64_t limit, int64_t *t_end)
{
	struct epoll_event evs[64];
	int64_t now = t0, last_check = t0;

	for (unsigned i = 0; i < d->n && !d->failed; i++)
		if (bconn_next(&d->conns[i], t0) != 0)
			break;
	while (d->active > 0 && !d->failed) {
		int n = epoll_wait(d->ep, evs, 64, BS_TIMEOUT_CHECK_MS);
		if (n < 0 && errno != EINTR) {
			bdrv_fail(d, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n && !d->failed; i++) {
			struct bconn *c = evs[i].data.ptr;
			if (c->done)
				continue;
			if (evs[i].events & EPOLLOUT)
				if (bconn_push(c) != 0)
					break;
			if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				if (bconn_readable(c) != 0)
					break;
		}
		now = clock_mono_ns();
		*t_end = now;
		if (now - last_check >= BS_TIMEOUT_CHECK_MS * 1000000LL) {
			check_timeouts(d, now);
			last_check = now;
		}
		if (now > limit && d->active > 0) {
			bdrv_fail(d,
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
bdrv_destroy(struct bdrv *d)
{
	for (unsigned i = 0; d->conns != NULL && i < d->n; i++) {
		struct bconn *c = &d->conns[i];
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
bench_beanstalk_run(const struct bench_opts *o, struct bench_result *r)
{
	struct bdrv d = { .o = o, .ep = -1 };
	int64_t t0, t_end, limit;
	long long before;
	char head[64];
	int hn, rc = -1;

	limit = clock_mono_ns() + (int64_t)o->limit_ms * 1000000;
	d.n = o->conns;
	d.conns = calloc(d.n, sizeof(*d.conns));
	hn = snprintf(head, sizeof(head), "put 1024 0 60 %zu\r\n", o->bytes);
	d.put_len = (size_t)hn + o->bytes + 2;
	d.put_cmd = malloc(d.put_len);
	if (d.conns == NULL || d.put_cmd == NULL) {
		bench_error("out of memory");
		goto out;
	}
	memcpy(d.put_cmd, head, (size_t)hn);
	memset(d.put_cmd + hn, 'x', o->bytes);
	memcpy(d.put_cmd + hn + o->bytes, "\r\n", 2);
	for (unsigned i = 0; i < d.n; i++)
		d.conns[i].fd = -1;
	if ((d.ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		bench_error("epoll_create1: %s", strerror(errno));
		goto out;
	}
	for (unsigned i = 0; i < d.n; i++) {
		struct bconn *c = &d.conns[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		int orc;

		c->d = &d;
		c->idx = i;
		c->role = bench_role_of(o->workload, i, d.n);
		c->put_next = true;
		if ((orc = bconn_open(&d, c, limit)) != 0) {
			if (orc == -1)
				bench_error("%s", d.err);
			goto out;
		}
		if (epoll_ctl(d.ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
			bench_error("epoll_ctl: %s", strerror(errno));
			goto out;
		}
	}

	/* Untimed: an empty tube for drain, then the preload. */
	if ((before = tube_count(&d, &d.conns[0], limit)) < 0)
		goto fail_said;
	if (o->workload == BENCH_DRAIN && before != 0) {
		bench_error("tube %s already holds %lld jobs: drain needs an "
		            "empty tube (use another --tube)",
		    o->tube, before);
		goto out;
	}
	r->preloaded = o->workload == BENCH_DRAIN ? o->tasks
	    : o->workload == BENCH_MIXED          ? o->preload
	                                          : 0;
	t0 = clock_mono_ns();
	if (r->preloaded && preload(&d, &d.conns[0], r->preloaded, limit) != 0)
		goto fail_said;
	r->preload_s = (double)(clock_mono_ns() - t0) / 1e9;

	/* The run. */
	d.remaining = o->tasks;
	d.active = d.n;
	t0 = clock_mono_ns();
	t_end = t0;
	if (o->duration_ms)
		d.deadline = t0 + (int64_t)o->duration_ms * 1000000;
	if (bdrv_loop(&d, t0, limit, &t_end) != 0)
		goto fail_said;

	r->seconds = (double)(t_end - t0) / 1e9;
	for (unsigned i = 0; i < d.n; i++)
		bench_result_add(r, &d.conns[i].t);

	if (bench_check_puts(o, r) != 0)
		goto out;
	if (o->workload == BENCH_DRAIN) {
		/* The sockets are idle now: back to blocking calls. */
		if ((r->left = tube_count(&d, &d.conns[0], limit)) < 0)
			goto fail_said;
		if (bench_check_drain(o, r, "jobs") != 0)
			goto out;
	}
	rc = 0;
	goto out;
fail_said:
	bench_error("%s", d.err);
out:
	bdrv_destroy(&d);
	return rc;
}
