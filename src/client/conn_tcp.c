/* conn_tcp - a connection for tcp:// URLs: SP over TCP (proto/sp.h),
 * spoken by the library itself on the caller's thread.
 *
 * Why: through nng a call crossed threads four times (the caller, nng's
 * poller and task threads, and back), which cost more than the server's
 * fdatasync at one client. Here a call is one sendmsg() and usually one
 * recv() that blocks until the reply comes (the socket blocks once
 * greeted; SO_RCVTIMEO, set again only when a call's timeout differs from
 * the last one's, bounds that recv by the call's deadline; every other
 * send and recv passes MSG_DONTWAIT and waits in poll()). The server
 * cannot tell: it is the framing nng's req0 speaks.
 *
 * Open, all of it within connect_ms:
 *  - resolve the host: a numeric address at once; a name on a helper
 *    thread, so that a slow resolver cannot hold the caller longer;
 *  - connect without blocking, each address in turn, waiting in poll();
 *    a refused connection is tried again after 50 ms, doubling up to
 *    500 ms, as nng's dialer does, so a server that is restarting is
 *    found once it listens: for as long as the handle allows
 *    (sluice_set_refused_retry; not at all when it has other URLs to
 *    try), after which the URL fails saying nothing listens there;
 *  - TCP_NODELAY (a request is one write and waits for its reply);
 *  - send our req0 header and read the peer's. A peer that answers
 *    something else is named (sp_guess_peer): it is not a sluice server,
 *    and trying again will not change that. sluiced's HTTP face answers
 *    our header at once with a 400; some HTTP servers (nng's) close
 *    without a word, so a peer that closes so is probed once, on a
 *    second connection, with an HTTP request. A peer that says nothing at
 *    all is reported as silent: a sluice server greets at once.
 *
 * Exchange: the request goes as [u64 BE length][u32 BE id][body] in one
 * sendmsg(); the id is the handle's sequence number with the top bit set
 * (sp.h). Then frames are read until the one carrying that id: another id
 * is a reply left over from a call that gave up waiting, and is skipped,
 * as nng's req0 does. Frames are read greedily, straight into the
 * caller's reply buffer, so the body is never copied; the bytes of a
 * next frame read along with the wanted one (a server sends them only
 * when it answers a request given up on) wait in `carry` for the next
 * exchange. A frame longer than RECV_MAX, or too short to hold an id, is
 * a protocol error.
 *
 * Every other wait is a poll() bounded by the deadline of the open or of
 * the exchange; EINTR is retried; every send passes MSG_NOSIGNAL, so a
 * closed connection is an error, never a SIGPIPE. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "client/conn.h"
#include "proto/msg.h"
#include "proto/sp.h"
#include "sluice.h"
#include "util/clock.h"

enum {
	RECV_MAX = MSG_SIZE_MAX + 1024, /* the longest frame accepted */
	FRAME_HDR = SP_LEN + 4,         /* the length, then the id */
	RECV_CHUNK = 64 * 1024,         /* room offered to each recv() */
	RETRY_MIN_MS = 50,              /* refused: try again after */
	RETRY_MAX_MS = 500,
	GREETING_MAX = 64, /* bytes of a peer's greeting kept to name it */
	HOST_MAX = 256,
	PORT_MAX = 32,
};

struct conn_tcp {
	struct conn base;
	int fd;
	struct buf carry; /* bytes read past the last reply */
	bool blocking;    /* greeted: the socket blocks (recv_reply) */
	int rcvtimeo_ms;  /* SO_RCVTIMEO as set: -1 none, 0 not set yet */
};

/* ---- time ------------------------------------------------------------ */

/* The deadline `ms` from now; -1 (none) for ms < 0. */
static int64_t
deadline_in(int ms)
{
	return ms < 0 ? -1 : clock_mono_ns() + (int64_t)ms * 1000000;
}

/* What is left until `dl`, in whole ms rounded up, for poll(); -1 for
 * no deadline. */
static int
ms_left(int64_t dl)
{
	int64_t ns;

	if (dl < 0)
		return -1;
	ns = dl - clock_mono_ns();
	if (ns <= 0)
		return 0;
	return ns / 1000000 >= INT_MAX ? INT_MAX
	                               : (int)((ns + 999999) / 1000000);
}

/* ---- waiting on the socket ------------------------------------------- */

/* Waits for `events` on `fd` until `dl`. Returns the events that came
 * (error and hang-up included), 0 when the deadline passed, -errno. */
static int
wait_fd(int fd, short events, int64_t dl)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int ms = ms_left(dl);
		int n = poll(&p, 1, ms);

		if (n > 0)
			return p.revents;
		if (n == 0 && ms == 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Sends all of `iov` by `dl`. Returns 0, SLUICE_ECONN, SLUICE_ETIMEDOUT.
 * Changes `iov`. */
static int
send_all(int fd, struct iovec *iov, int n, int64_t dl)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)n };

	for (;;) {
		ssize_t w;
		int ev;

		while (mh.msg_iovlen > 0 && mh.msg_iov[0].iov_len == 0) {
			mh.msg_iov++;
			mh.msg_iovlen--;
		}
		if (mh.msg_iovlen == 0)
			return 0;
		if ((w = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT)) >= 0) {
			for (size_t k = (size_t)w; k > 0;) {
				struct iovec *v = mh.msg_iov;
				size_t step = k < v->iov_len ? k : v->iov_len;

				v->iov_base = (char *)v->iov_base + step;
				v->iov_len -= step;
				k -= step;
				if (v->iov_len == 0) {
					mh.msg_iov++;
					mh.msg_iovlen--;
				}
			}
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return SLUICE_ECONN;
		if ((ev = wait_fd(fd, POLLOUT, dl)) == 0)
			return SLUICE_ETIMEDOUT;
		if (ev < 0)
			return SLUICE_ECONN;
	}
}

/* Receives what has come, up to `n` bytes, into `p`, waiting until `dl`
 * for something to come (poll() first when `wait`, else only once recv()
 * found nothing). Returns 0 and `*got` > 0; SLUICE_ECONN when the peer
 * closed or reset the connection; SLUICE_ETIMEDOUT. */
static int
recv_some(int fd, void *p, size_t n, int64_t dl, bool wait, size_t *got)
{
	for (;;) {
		ssize_t r;
		int ev;

		if (wait && (ev = wait_fd(fd, POLLIN, dl)) <= 0)
			return ev == 0 ? SLUICE_ETIMEDOUT : SLUICE_ECONN;
		if ((r = recv(fd, p, n, MSG_DONTWAIT)) > 0) {
			*got = (size_t)r;
			return 0;
		}
		if (r == 0)
			return SLUICE_ECONN;
		if (errno == EINTR) {
			wait = false;
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return SLUICE_ECONN;
		wait = true;
	}
}

/* The first wait of an exchange on a greeted socket: one recv() that
 * blocks for the time left until `dl` (SO_RCVTIMEO, set only when it
 * changes), no poll() ahead of it. A timeout that came early, EINTR, or
 * a socket still in non-blocking mode fall back to recv_some. Returns as
 * recv_some does. */
static int
recv_reply(struct conn_tcp *k, void *p, size_t n, int64_t dl, size_t *got)
{
	int ms = ms_left(dl);
	ssize_t r;

	if (!k->blocking || ms == 0)
		return recv_some(k->fd, p, n, dl, true, got);
	if (ms != k->rcvtimeo_ms) {
		struct timeval tv = { 0, 0 }; /* none: block until it comes */

		if (ms > 0) {
			tv.tv_sec = ms / 1000;
			tv.tv_usec = (ms % 1000) * 1000;
		}
		if (setsockopt(
		        k->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
			return recv_some(k->fd, p, n, dl, true, got);
		k->rcvtimeo_ms = ms;
	}
	if ((r = recv(k->fd, p, n, 0)) > 0) {
		*got = (size_t)r;
		return 0;
	}
	if (r == 0)
		return SLUICE_ECONN;
	if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
		return SLUICE_ECONN;
	return recv_some(k->fd, p, n, dl, true, got);
}

/* ---- resolving -------------------------------------------------------- */

/* A name lookup on a helper thread. Both the thread and the caller hold
 * a reference; the last one frees it, so a caller that stops waiting at
 * its deadline leaves the lookup to finish and clean up by itself. */
struct lookup {
	pthread_mutex_t mtx;
	pthread_cond_t cv;
	int refs;
	bool done;
	int rc; /* getaddrinfo's */
	struct addrinfo *res;
	char host[HOST_MAX], port[PORT_MAX];
};

static const struct addrinfo lookup_hints = {
	.ai_family = AF_UNSPEC,
	.ai_socktype = SOCK_STREAM,
};

static void
lookup_unref(struct lookup *l)
{
	bool last;

	pthread_mutex_lock(&l->mtx);
	last = --l->refs == 0;
	pthread_mutex_unlock(&l->mtx);
	if (!last)
		return;
	if (l->res != NULL)
		freeaddrinfo(l->res);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mtx);
	free(l);
}

static void *
lookup_run(void *arg)
{
	struct lookup *l = arg;
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(l->host, l->port, &lookup_hints, &res);

	pthread_mutex_lock(&l->mtx);
	l->rc = rc;
	l->res = res;
	l->done = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mtx);
	lookup_unref(l);
	return NULL;
}

/* Starts the lookup thread, detached and with every signal blocked (they
 * are the application's to handle). */
static bool
lookup_start(struct lookup *l)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t t;
	bool ok;

	sigfillset(&all);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ok = pthread_create(&t, &a, lookup_run, l) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	return ok;
}

/* Looks host:port up, giving up at `dl`. Returns 0 and `*res` (for
 * freeaddrinfo), or an EAI_* code of getaddrinfo (glibc's are negative);
 * `*late` says whether `dl` came first (the code is then EAI_AGAIN). */
static int
lookup(const char *host, const char *port, int64_t dl, struct addrinfo **res,
    bool *late)
{
	struct addrinfo hints = lookup_hints;
	pthread_condattr_t ca;
	struct timespec ts;
	struct lookup *l;
	int rc;

	*late = false;
	hints.ai_flags = AI_NUMERICHOST; /* an address needs no thread */
	if ((rc = getaddrinfo(host, port, &hints, res)) != EAI_NONAME)
		return rc;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return EAI_MEMORY;
	snprintf(l->host, sizeof(l->host), "%s", host);
	snprintf(l->port, sizeof(l->port), "%s", port);
	pthread_mutex_init(&l->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	l->refs = 2;
	if (!lookup_start(l)) { /* no thread to be had: look up here */
		l->refs = 1;
		lookup_unref(l);
		return getaddrinfo(host, port, &lookup_hints, res);
	}
	ts.tv_sec = (time_t)(dl / 1000000000);
	ts.tv_nsec = (long)(dl % 1000000000);
	pthread_mutex_lock(&l->mtx);
	while (!l->done)
		if (pthread_cond_timedwait(&l->cv, &l->mtx, &ts) == ETIMEDOUT)
			break;
	*late = !l->done;
	rc = l->done ? l->rc : EAI_AGAIN;
	if (rc == 0) {
		*res = l->res;
		l->res = NULL;
	}
	pthread_mutex_unlock(&l->mtx);
	lookup_unref(l);
	return rc;
}

/* ---- connecting ------------------------------------------------------- */

/* Splits tcp://HOST:PORT (HOST may be [v6]). False when it does not
 * parse. */
static bool
split_url(const char *url, char *host, char *port)
{
	const char *h = url + strlen("tcp://"), *hend, *p;

	if (*h == '[') {
		h++;
		if ((hend = strchr(h, ']')) == NULL || hend[1] != ':')
			return false;
		p = hend + 2;
	} else {
		if ((hend = strrchr(h, ':')) == NULL)
			return false;
		p = hend + 1;
	}
	if (hend == h || (size_t)(hend - h) >= HOST_MAX || *p == '\0' ||
	    strlen(p) >= PORT_MAX || strchr(p, '/') != NULL)
		return false;
	memcpy(host, h, (size_t)(hend - h));
	host[hend - h] = '\0';
	strcpy(port, p);
	return true;
}

/* Connects a non-blocking socket to `a` by `dl`. Returns the socket, or
 * -errno (-ETIMEDOUT when `dl` came first). */
/* A TCP "simultaneous open" with itself: the local and the remote end
 * are the same address and port. */
static bool
self_connected(int fd)
{
	struct sockaddr_storage l, r;
	socklen_t ll = sizeof(l), rl = sizeof(r);

	memset(&l, 0, sizeof(l));
	memset(&r, 0, sizeof(r));
	return getsockname(fd, (struct sockaddr *)&l, &ll) == 0 &&
	    getpeername(fd, (struct sockaddr *)&r, &rl) == 0 && ll == rl &&
	    memcmp(&l, &r, ll) == 0;
}

static int
connect_one(const struct addrinfo *a, int64_t dl)
{
	int fd, e, ev, one = 1;
	socklen_t len = sizeof(e);

	fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    a->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
		if (errno != EINPROGRESS && errno != EINTR) {
			e = errno;
			goto fail_close;
		}
		if ((ev = wait_fd(fd, POLLOUT, dl)) <= 0) {
			e = ev == 0 ? ETIMEDOUT : -ev;
			goto fail_close;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
			e = errno;
		if (e != 0)
			goto fail_close;
	}
	if (self_connected(fd)) {
		/* nothing listened, and the kernel gave the socket the very
		 * port it dialed: it would talk to itself */
		e = ECONNREFUSED;
		goto fail_close;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;

fail_close:
	close(fd);
	return -e;
}

/* Connects to one of `ai`, trying them again while they refuse, by `dl`.
 * Returns the socket, or SLUICE_ECONN's negation with the reason. */
static int
connect_any(const char *url, const struct addrinfo *ai, int connect_ms,
    int refused_ms, int64_t dl, char *err, size_t errlen)
{
	int pause_ms = RETRY_MIN_MS, e = ETIMEDOUT, waited_ms = 0;

	for (;;) {
		struct timespec ts;
		int fd, left;

		for (const struct addrinfo *a = ai; a != NULL; a = a->ai_next) {
			if ((fd = connect_one(a, dl)) >= 0)
				return fd;
			e = -fd;
			if (e == ETIMEDOUT)
				goto fail_timeout;
		}
		if ((left = ms_left(dl)) == 0 ||
		    (refused_ms >= 0 && waited_ms + pause_ms > refused_ms))
			break;
		if (left > pause_ms)
			left = pause_ms;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (long)(left % 1000) * 1000000;
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		waited_ms += left;
		pause_ms =
		    pause_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : pause_ms * 2;
	}
fail_timeout:
	if (e == ETIMEDOUT)
		snprintf(err, errlen, "%s: no connection within %d ms", url,
		    connect_ms);
	else if (e == ECONNREFUSED)
		snprintf(err, errlen,
		    "%s: connection refused: no server listens there", url);
	else
		snprintf(err, errlen, "%s: no connection within %d ms (%s)",
		    url, connect_ms, strerror(e));
	return -SLUICE_ECONN;
}

/* ---- the greeting ----------------------------------------------------- */

/* Writes into `err` what a peer that greeted with `in` (`n` > 0 bytes)
 * seems to be. */
static void
name_peer(
    const char *url, const uint8_t *in, size_t n, char *err, size_t errlen)
{
	const char *what = sp_guess_peer(in, n);
	const char *hint = "";
	char shown[4 * 16 + 1];
	size_t k = 0;

	if (what != NULL) {
		if (strcmp(what, "HTTP") == 0)
			hint = "; is this the --http port?";
		else if (strcmp(what, "TLS") == 0)
			hint =
			    ": use a tls+tcp:// URL, with the CA that signed "
			    "its certificate (--tls-ca, sluice_set_tls)";
		else if (strstr(what, "beanstalk") != NULL)
			hint = "; is this the --beanstalk port?";
		snprintf(err, errlen, "%s speaks %s, not the sluice protocol%s",
		    url, what, hint);
		return;
	}
	for (size_t i = 0; i < n && i < 16; i++) {
		if (in[i] >= 0x20 && in[i] < 0x7f && in[i] != '\\')
			shown[k++] = (char)in[i];
		else
			k += (size_t)snprintf(
			    shown + k, sizeof(shown) - k, "\\x%02x", in[i]);
	}
	shown[k] = '\0';
	snprintf(err, errlen,
	    "%s does not speak the sluice protocol: it greeted with \"%s%s\"",
	    url, shown, n > 16 ? "..." : "");
}

/* Reads into `in` until `want` bytes came (or `cap`, whatever came by
 * then), the peer closed, or `dl`. Returns what recv_some last returned,
 * with `*n` the bytes read. */
static int
read_greeting(
    int fd, uint8_t *in, size_t cap, size_t want, int64_t dl, size_t *n)
{
	int rc = 0;

	*n = 0;
	while (*n < want && rc == 0) {
		size_t got = 0;

		if ((rc = recv_some(fd, in + *n, cap - *n, dl, true, &got)) ==
		    0)
			*n += got;
	}
	return rc;
}

/* A TLS 1.2 ClientHello: a TLS server answers it (a ServerHello or an
 * alert) where it closes on our header without a word. */
static const uint8_t client_hello[] = { 22, 3, 1, 0, 47, 1, 0, 0, 43, 3,
	3, [43] = 0, 0, 4, 0xc0, 0x2f, 0x00, 0x9c, 1, 0 };

/* A peer that closed on our header: asks it, on a new connection, in
 * HTTP, then on another in TLS, and names it from the answer when that is
 * recognised. */
static bool
probe_peer(const char *url, const struct addrinfo *ai, int64_t dl, char *err,
    size_t errlen)
{
	static const char http_req[] = "GET / HTTP/1.0\r\n\r\n";
	static const struct iovec probes[] = {
		{ (void *)http_req, sizeof(http_req) - 1 },
		{ (void *)client_hello, sizeof(client_hello) },
	};

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		const struct addrinfo *a = ai;
		struct iovec iov = probes[i]; /* send_all changes it */
		uint8_t in[GREETING_MAX];
		size_t n = 0;
		int fd;

		for (fd = -1; a != NULL && fd < 0; a = a->ai_next)
			fd = connect_one(a, dl);
		if (fd < 0)
			return false;
		if (send_all(fd, &iov, 1, dl) == 0)
			read_greeting(fd, in, sizeof(in), 5, dl, &n);
		close(fd);
		if (n > 0 && sp_guess_peer(in, n) != NULL) {
			name_peer(url, in, n, err, errlen);
			return true;
		}
	}
	return false;
}

/* Sends our header and checks the peer's, by `dl`. Returns 0; else
 * SLUICE_ECONN, SLUICE_ENOMEM with the reason. */
static int
greet(struct conn_tcp *k, const char *url, const struct addrinfo *ai,
    int connect_ms, int64_t dl, char *err, size_t errlen)
{
	uint8_t hdr[SP_HANDSHAKE], in[GREETING_MAX];
	struct iovec iov = { hdr, sizeof(hdr) };
	size_t n;
	int rc;

	sp_handshake(hdr, SP_PROTO_REQ0);
	if ((rc = send_all(k->fd, &iov, 1, dl)) != 0) {
		snprintf(err, errlen, "%s: %s while greeting it", url,
		    rc == SLUICE_ETIMEDOUT ? "timed out" : "connection lost");
		return SLUICE_ECONN;
	}
	/* A sluice server greets at once. A text protocol (beanstalk's)
	 * waits for a line instead: after half the time, end one, and it
	 * answers with an error that names it. */
	rc = read_greeting(k->fd, in, sizeof(in), SP_HANDSHAKE,
	    dl < 0 ? dl : clock_mono_ns() + (dl - clock_mono_ns()) / 2, &n);
	if (n == 0 && rc == SLUICE_ETIMEDOUT) {
		struct iovec eol = { (void *)"\r\n", 2 };

		if ((rc = send_all(k->fd, &eol, 1, dl)) == 0)
			rc = read_greeting(
			    k->fd, in, sizeof(in), SP_HANDSHAKE, dl, &n);
	}
	if (n >= SP_HANDSHAKE && sp_handshake_ok(in, SP_PROTO_REP0)) {
		buf_put(&k->carry, in + SP_HANDSHAKE, n - SP_HANDSHAKE);
		return buf_failed(&k->carry) ? SLUICE_ENOMEM : 0;
	}
	if (n > 0 && n < SP_HANDSHAKE && memcmp(in, hdr, 4) == 0)
		snprintf(err, errlen,
		    "%s sent %zu bytes of its greeting, then nothing within "
		    "%d ms",
		    url, n, connect_ms);
	else if (n > 0)
		name_peer(url, in, n, err, errlen);
	else if (rc == SLUICE_ETIMEDOUT)
		snprintf(err, errlen,
		    "%s accepted the connection but sent nothing within %d "
		    "ms; a sluice server greets at once: is this its "
		    "--listen address?",
		    url, connect_ms);
	else if (!probe_peer(url, ai, dl, err, errlen))
		snprintf(err, errlen,
		    "%s closed the connection without a word: not a sluice "
		    "server's --listen address?",
		    url);
	return SLUICE_ECONN;
}

/* ---- the transport ---------------------------------------------------- */

static void
tcp_close(struct conn *base)
{
	struct conn_tcp *k = (struct conn_tcp *)base;

	if (k == NULL)
		return;
	if (k->fd >= 0)
		close(k->fd);
	buf_fini(&k->carry);
	free(k);
}

static int
tcp_open(const char *url, int connect_ms, int refused_ms,
    const struct tlsfile *tls, struct conn **out, char *err, size_t errlen)
{
	(void)tls; /* tcp:// is plain */
	int64_t dl = deadline_in(connect_ms);
	char host[HOST_MAX], port[PORT_MAX];
	struct addrinfo *ai = NULL;
	struct conn_tcp *k;
	bool late;
	int rc, fl;

	if (!split_url(url, host, port)) {
		snprintf(err, errlen, "%s: not tcp://HOST:PORT", url);
		return SLUICE_ECONN;
	}
	if ((rc = lookup(host, port, dl, &ai, &late)) != 0) {
		if (rc == EAI_MEMORY)
			return SLUICE_ENOMEM;
		if (late)
			snprintf(err, errlen,
			    "%s: no connection within %d ms (still resolving "
			    "%s)",
			    url, connect_ms, host);
		else
			snprintf(err, errlen,
			    "%s: the host %s could not be resolved (%s)", url,
			    host, gai_strerror(rc));
		return SLUICE_ECONN;
	}
	if ((k = calloc(1, sizeof(*k))) == NULL) {
		freeaddrinfo(ai);
		return SLUICE_ENOMEM;
	}
	k->base.ops = &conn_tcp_ops;
	buf_init(&k->carry);
	if ((k->fd = connect_any(
	         url, ai, connect_ms, refused_ms, dl, err, errlen)) < 0) {
		rc = -k->fd;
		goto fail_close;
	}
	if ((rc = greet(k, url, ai, connect_ms, dl, err, errlen)) != 0)
		goto fail_close;
	/* From now on a reply is waited for in recv() itself (recv_reply);
	 * a socket left non-blocking only costs the poll() saved. */
	fl = fcntl(k->fd, F_GETFL);
	k->blocking = fl >= 0 && fcntl(k->fd, F_SETFL, fl & ~O_NONBLOCK) == 0;
	freeaddrinfo(ai);
	*out = &k->base;
	return 0;

fail_close:
	freeaddrinfo(ai);
	tcp_close(&k->base);
	return rc;
}

/* Up unless the server closed its side (or the socket failed). */
static bool
tcp_up(struct conn *base)
{
	struct conn_tcp *k = (struct conn_tcp *)base;
	struct pollfd p = { .fd = k->fd, .events = POLLIN | POLLRDHUP };

	if (poll(&p, 1, 0) < 0)
		return errno == EINTR;
	return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0;
}

static int
tcp_exchange(struct conn *base, const void *req, size_t len, uint32_t seq,
    int tmo_ms, struct buf *reply, size_t *off, char *err, size_t errlen)
{
	struct conn_tcp *k = (struct conn_tcp *)base;
	int64_t dl = deadline_in(tmo_ms);
	uint32_t id = SP_ID_BIT | seq;
	uint8_t hdr[FRAME_HDR];
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)req, len } };
	bool wait = true;
	int rc;

	sp_store_len(hdr, (uint64_t)len + 4);
	sp_store_u32(hdr + SP_LEN, id);
	if ((rc = send_all(k->fd, iov, 2, dl)) != 0)
		return rc;

	/* Frames are parsed at the start of `reply`; the wanted one stays
	 * there, the others are cut out. */
	buf_reset(reply);
	if (k->carry.len > 0) {
		buf_put(reply, k->carry.data, k->carry.len);
		buf_reset(&k->carry);
		wait = false;
	}
	for (;;) {
		size_t need = FRAME_HDR, got = 0;

		if (reply->len >= FRAME_HDR) {
			uint64_t flen = sp_load_len(reply->data);
			size_t end;

			if (flen < 4 || flen > RECV_MAX) {
				snprintf(err, errlen,
				    "a frame of %llu bytes (the most is %d)",
				    (unsigned long long)flen, RECV_MAX);
				return SLUICE_EPROTO;
			}
			end = SP_LEN + (size_t)flen;
			if (reply->len >= end &&
			    sp_load_u32(reply->data + SP_LEN) == id) {
				buf_put(&k->carry, reply->data + end,
				    reply->len - end);
				reply->len = end;
				*off = FRAME_HDR;
				return buf_failed(&k->carry) ? SLUICE_ENOMEM
				                             : 0;
			}
			if (reply->len >= end) { /* an earlier call's reply */
				memmove(reply->data, reply->data + end,
				    reply->len - end);
				reply->len -= end;
				continue;
			}
			need = end;
		}
		need -= reply->len;
		if (!buf_reserve(reply, need > RECV_CHUNK ? need : RECV_CHUNK))
			return SLUICE_ENOMEM;
		if (wait)
			rc = recv_reply(k, reply->data + reply->len,
			    reply->cap - reply->len, dl, &got);
		else
			rc = recv_some(k->fd, reply->data + reply->len,
			    reply->cap - reply->len, dl, false, &got);
		if (rc != 0)
			return rc;
		reply->len += got;
		wait = false;
	}
}

const struct conn_ops conn_tcp_ops = {
	.open = tcp_open,
	.up = tcp_up,
	.exchange = tcp_exchange,
	.close = tcp_close,
};
