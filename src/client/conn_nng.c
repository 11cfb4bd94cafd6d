/* conn_nng - a connection through an nng REQ socket, for every URL scheme
 * but tcp:// (ipc://, inproc://, ws://, tls+tcp://: see conn.h).
 *
 * One REQ socket with one dialer, to one URL. The dial is non-blocking and
 * open waits for nng's "pipe added" event up to connect_ms, so an
 * unreachable host costs connect_ms, never a kernel's TCP timeout. nng's
 * dialer retries a refused connection quietly, for ever; so when the
 * handle bounds that (refused_ms), open waits that long, then dials once
 * itself as a plain stream (tls+tcp:// as tcp://, ipc:// as it is) and
 * fails at once when that is refused (or the host does not resolve). A
 * scheme nng does not know is named, with the ones it does (and http://
 * is told apart: that is the HTTP API's address, not the sluice
 * protocol's).
 *
 * No resend. nng's REQ protocol re-sends a request after
 * NNG_OPT_REQ_RESENDTIME and, in nng 1.5, also on a new pipe when the one
 * it went out on closes. Both are wrong for a queue (a take or a put would
 * run twice), so the resend time is infinite and the connection watches
 * its pipe: when the pipe goes away while a request is in flight, the
 * pipe callback aborts the receive (`lost`) and the exchange reports
 * SLUICE_ECONN; the caller then closes the socket.
 *
 * The `lost` race: the pipe may go between the end of the send and the
 * start of the receive, when there is nothing to abort. So the callback
 * sets `lost` under the mutex, and the exchange checks it under the mutex
 * right after starting each operation; one of the two always sees the
 * other.
 *
 * TLS (tls+tcp://): the dialer carries a configuration made from the
 * handle's CA (and certificate) for the URL's host. nng retries a failed
 * handshake quietly, so a TLS URL that gives no connection in time is
 * looked at once more to say why (diagnose): a plain sluice server there
 * (it greets at once, where a TLS server waits for a hello), or the
 * handshake's own error, such as a certificate the CA does not verify. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "client/conn.h"
#include "proto/msg.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/nngclose.h"
#include "util/tlsfile.h"
#include "proto/sp.h"

enum {
	RECONNECT_MIN_MS = 50,
	RECONNECT_MAX_MS = 500,
	CLOSE_MS = 2000, /* the longest sluice_close waits for nng_close */
	/* the largest reply, with room for nng's request-id header */
	RECV_MAX = MSG_SIZE_MAX + 1024,
	PROBE_MAX_MS = 1000, /* each step of a failed TLS URL's diagnosis */
};

struct conn_nng {
	struct conn base;
	nng_socket sock; /* REQ, dialing one URL */
	nng_ctx ctx;
	nng_aio *aio; /* the one send/recv in flight */

	/* Shared with nng's pipe callbacks, under mtx. */
	pthread_mutex_t mtx;
	pthread_cond_t cv; /* signalled when a pipe is added */
	uint32_t pipe;     /* id of the live pipe; 0: none */
	bool busy;         /* a request is in flight on aio */
	bool lost;         /* the pipe went away while busy */
};

static void
pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct conn_nng *k = arg;
	uint32_t id = (uint32_t)nng_pipe_id(p);

	pthread_mutex_lock(&k->mtx);
	if (ev == NNG_PIPE_EV_ADD_POST) {
		k->pipe = id;
		pthread_cond_broadcast(&k->cv);
	} else if (ev == NNG_PIPE_EV_REM_POST && id == k->pipe) {
		k->pipe = 0;
		if (k->busy) {
			k->lost = true;
			nng_aio_abort(k->aio, NNG_ECONNRESET);
		}
	}
	pthread_mutex_unlock(&k->mtx);
}

static int64_t
now_ms(void)
{
	return clock_mono_ns() / 1000000;
}

static int
nng_to_sluice(int rv)
{
	switch (rv) {
	case 0:
		return 0;
	case NNG_ENOMEM:
		return SLUICE_ENOMEM;
	case NNG_ETIMEDOUT:
		return SLUICE_ETIMEDOUT;
	}
	return SLUICE_ECONN;
}

/* Waits until a pipe is up or `ms` passed; true when up. */
static bool
wait_pipe(struct conn_nng *k, int ms)
{
	struct timespec dl = nngclose_deadline(ms);
	bool up;

	pthread_mutex_lock(&k->mtx);
	while (k->pipe == 0) {
		if (pthread_cond_timedwait(&k->cv, &k->mtx, &dl) == ETIMEDOUT)
			break;
	}
	up = k->pipe != 0;
	pthread_mutex_unlock(&k->mtx);
	return up;
}

static void
conn_nng_free(void *arg)
{
	struct conn_nng *k = arg;

	nng_aio_free(k->aio);
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mtx);
	free(k);
}

/* Closes the socket (which runs the pipe callbacks: never with mtx held)
 * and frees everything; `k` may be half built. The close is bounded (see
 * util/nngclose.h): an application's sluice_close never hangs. When nng
 * does not return in CLOSE_MS, its closing thread frees `k` later, since
 * the pipe callbacks may still reach it until then. */
static void
nng_conn_close(struct conn *base)
{
	struct conn_nng *k = (struct conn_nng *)base;

	if (k == NULL)
		return;
	if (nng_socket_id(k->sock) > 0 &&
	    !nngclose_within(k->sock, CLOSE_MS, conn_nng_free, k))
		return;
	conn_nng_free(k);
}

/* Runs one step of a stream on `aio` and waits for it. */
static int
stream_step(nng_aio *aio, void (*op)(nng_stream *, nng_aio *), nng_stream *s)
{
	op(s, aio);
	nng_aio_wait(aio);
	return nng_aio_result(aio);
}

/* Connects to `url` as a byte stream (with `cfg` for TLS), sends the SP
 * greeting of req0, and reads the peer's first bytes into `in`. Returns
 * 0 (with *n), or the first nng error. */
static int
stream_probe(
    const char *url, nng_tls_config *cfg, int ms, uint8_t *in, size_t *n)
{
	uint8_t hdr[SP_HANDSHAKE];
	nng_iov iov = { hdr, sizeof(hdr) };
	nng_stream_dialer *d = NULL;
	nng_stream *s = NULL;
	nng_aio *aio = NULL;
	int rv;

	*n = 0;
	sp_handshake(hdr, SP_PROTO_REQ0);
	if ((rv = nng_aio_alloc(&aio, NULL, NULL)) != 0 ||
	    (rv = nng_stream_dialer_alloc(&d, url)) != 0 ||
	    (cfg != NULL &&
	        (rv = nng_stream_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, cfg)) !=
	            0))
		goto out;
	nng_aio_set_timeout(aio, ms);
	nng_stream_dialer_dial(d, aio);
	nng_aio_wait(aio);
	if ((rv = nng_aio_result(aio)) != 0)
		goto out;
	s = nng_aio_get_output(aio, 0);
	if ((rv = nng_aio_set_iov(aio, 1, &iov)) != 0 ||
	    (rv = stream_step(aio, nng_stream_send, s)) != 0)
		goto out;
	iov.iov_buf = in;
	iov.iov_len = SP_HANDSHAKE;
	if ((rv = nng_aio_set_iov(aio, 1, &iov)) == 0 &&
	    (rv = stream_step(aio, nng_stream_recv, s)) == 0)
		*n = nng_aio_count(aio);
out:
	if (s != NULL)
		nng_stream_free(s);
	nng_stream_dialer_free(d);
	nng_aio_free(aio);
	return rv;
}

/* Whether a handshake with `url` succeeds when the server's certificate
 * is not verified (our own, if any, still shown). */
static bool
unverified_ok(const char *url, const struct tlsfile *tls, int ms)
{
	nng_tls_config *cfg = NULL;
	uint8_t in[SP_HANDSHAKE];
	size_t n;
	int rv;

	if (tlsfile_client(tls, url, &cfg) != 0)
		return false;
	rv = nng_tls_config_auth_mode(cfg, NNG_TLS_AUTH_MODE_NONE);
	if (rv == 0)
		rv = stream_probe(url, cfg, ms, in, &n);
	nng_tls_config_free(cfg);
	return rv == 0;
}

/* A TLS URL gave no connection within connect_ms: says why in `err`. */
static void
diagnose(const char *url, const struct tlsfile *tls, int connect_ms, char *err,
    size_t errlen)
{
	int ms = connect_ms < PROBE_MAX_MS ? connect_ms : PROBE_MAX_MS;
	nng_tls_config *cfg = NULL;
	uint8_t in[SP_HANDSHAKE];
	char plain[600];
	size_t n;
	int rv;

	/* tls+tcp://H:P -> tcp://H:P: a plain sluice server greets at once */
	snprintf(plain, sizeof(plain), "%s", url + strlen("tls+"));
	rv = stream_probe(plain, NULL, ms, in, &n);
	if (rv == 0 && n == SP_HANDSHAKE && in[0] == 0 && in[1] == 'S' &&
	    in[2] == 'P' && in[3] == 0) {
		snprintf(err, errlen,
		    "%s: the server speaks the sluice protocol without TLS: "
		    "use %s",
		    url, plain);
		return;
	}
	if (rv == NNG_ECONNREFUSED || rv == NNG_EADDRINVAL ||
	    rv == NNG_EUNREACHABLE) {
		snprintf(err, errlen, "%s: no connection within %d ms (%s)",
		    url, connect_ms, nng_strerror(rv));
		return;
	}
	if ((rv = tlsfile_client(tls, url, &cfg)) == 0) {
		rv = stream_probe(url, cfg, ms, in, &n);
		nng_tls_config_free(cfg);
	}
	/* Whose certificate failed: the same handshake without verifying
	 * the server's. If that fails too, the server refused ours (or
	 * wants one); if it succeeds, the server's is what we refused. */
	if (rv != 0 && rv != NNG_ETIMEDOUT && unverified_ok(url, tls, ms)) {
		snprintf(err, errlen,
		    "%s: the TLS handshake failed: the server's certificate is "
		    "not signed by the CA given, is not for this host, or has "
		    "expired (%s)",
		    url, nng_strerror(rv));
		return;
	}
	if (rv == NNG_ETIMEDOUT)
		snprintf(err, errlen,
		    "%s: the TLS handshake did not finish within %d ms", url,
		    ms);
	else if (rv != 0 && tls->cert != NULL)
		snprintf(err, errlen,
		    "%s: the TLS handshake failed: the server refused this "
		    "client's certificate (not signed by the CA the server "
		    "trusts, or expired) (%s)",
		    url, nng_strerror(rv));
	else if (rv != 0)
		snprintf(err, errlen,
		    "%s: the TLS handshake failed: the server requires a "
		    "client certificate (sluice_set_tls, --tls-cert) (%s)",
		    url, nng_strerror(rv));
	else
		snprintf(err, errlen, "%s: no connection within %d ms", url,
		    connect_ms);
}

/* Dials `url` once as a plain stream (tls+tcp:// as tcp://, ipc:// as it
 * is), waiting up to `ms`, and hangs up: nng's error, such as
 * NNG_ECONNREFUSED (nothing listens), NNG_ENOENT (no such ipc:// path)
 * or NNG_EADDRINVAL (the host does not resolve); 0 when it connected,
 * or for a scheme not looked at. */
static int
dial_plain(const char *url, int ms)
{
	nng_stream_dialer *d = NULL;
	nng_aio *aio = NULL;
	char plain[600];
	int rv;

	if (strncmp(url, "tls+tcp://", 10) == 0)
		snprintf(plain, sizeof(plain), "%s", url + strlen("tls+"));
	else if (strncmp(url, "ipc://", 6) == 0)
		snprintf(plain, sizeof(plain), "%s", url);
	else
		return 0;
	if (nng_aio_alloc(&aio, NULL, NULL) != 0)
		return 0;
	if ((rv = nng_stream_dialer_alloc(&d, plain)) == 0) {
		nng_aio_set_timeout(aio, ms);
		nng_stream_dialer_dial(d, aio);
		nng_aio_wait(aio);
		if ((rv = nng_aio_result(aio)) == 0)
			nng_stream_free(nng_aio_get_output(aio, 0));
		nng_stream_dialer_free(d);
	}
	nng_aio_free(aio);
	return rv;
}

/* A URL whose scheme nng does not know: says which ones the sluice
 * protocol has, and that http:// is the HTTP API's. */
static void
bad_scheme(const char *url, char *err, size_t errlen)
{
	const char *host = strstr(url, "://") + 3;
	int n = (int)strcspn(host, "/?#");
	bool tls = strncmp(url, "https://", 8) == 0;
	const char *colon = memrchr(host, ':', (size_t)n);

	if (colon != NULL &&
	    memchr(colon, ']', (size_t)(host + n - colon)) == NULL)
		n = (int)(colon - host); /* the host without the HTTP port */
	if (strncmp(url, "http://", 7) == 0 || tls)
		snprintf(err, errlen,
		    "%s is the HTTP API's address (sluiced --http); "
		    "libsluice and the sluice tool speak the sluice "
		    "protocol, at sluiced's --listen address: %s%.*s:PORT "
		    "(" SLUICE_DEFAULT_URL " by default; tls+tcp://HOST:PORT "
		    "with TLS, ipc://PATH)",
		    url, tls ? "tls+tcp://" : "tcp://", n, host);
	else
		snprintf(err, errlen,
		    "%s: not a URL of the sluice protocol: tcp://HOST:PORT, "
		    "tls+tcp://HOST:PORT, ipc://PATH or ws://HOST:PORT/PATH",
		    url);
}

/* Starts dialing `url` in the background, with TLS when the URL asks for
 * it. */
static int
dial(nng_socket sock, const char *url, const struct tlsfile *tls, char *err,
    size_t errlen)
{
	nng_tls_config *cfg = NULL;
	nng_dialer d;
	int rv;

	if (tlsfile_url(url) && tls == NULL) {
		snprintf(err, errlen,
		    "%s: a TLS URL needs the CA that signed the server's "
		    "certificate (sluice_set_tls, --tls-ca, $SLUICE_TLS_CA)",
		    url);
		return NNG_EINVAL;
	}
	if (tlsfile_url(url) && (rv = tlsfile_client(tls, url, &cfg)) != 0) {
		snprintf(err, errlen, "%s: TLS: %s", url, nng_strerror(rv));
		return rv;
	}
	if ((rv = nng_dialer_create(&d, sock, url)) == NNG_ENOTSUP)
		bad_scheme(url, err, errlen);
	else if (rv != 0)
		snprintf(err, errlen, "%s: %s", url, nng_strerror(rv));
	else if (cfg != NULL &&
	    (rv = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, cfg)) != 0)
		snprintf(err, errlen, "%s: TLS: %s", url, nng_strerror(rv));
	else if ((rv = nng_dialer_start(d, NNG_FLAG_NONBLOCK)) != 0)
		snprintf(err, errlen, "dial %s: %s", url, nng_strerror(rv));
	if (cfg != NULL)
		nng_tls_config_free(cfg); /* the dialer holds its own */
	return rv;
}

static int
nng_conn_open(const char *url, int connect_ms, int refused_ms,
    const struct tlsfile *tls, struct conn **out, char *err, size_t errlen)
{
	int first_ms = refused_ms >= 0 && refused_ms < connect_ms
	    ? (refused_ms > RECONNECT_MIN_MS ? refused_ms : RECONNECT_MIN_MS)
	    : connect_ms;
	int64_t start = now_ms();
	struct conn_nng *k;
	pthread_condattr_t ca;
	int rv;

	if ((k = calloc(1, sizeof(*k))) == NULL)
		return SLUICE_ENOMEM;
	k->base.ops = &conn_nng_ops;
	k->sock = (nng_socket)NNG_SOCKET_INITIALIZER;
	pthread_mutex_init(&k->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((rv = nng_aio_alloc(&k->aio, NULL, NULL)) != 0 ||
	    (rv = nng_req0_open(&k->sock)) != 0) {
		snprintf(err, errlen, "open socket: %s", nng_strerror(rv));
		goto fail_close;
	}
	if ((rv = nng_socket_set_ms(k->sock, NNG_OPT_REQ_RESENDTIME,
	         NNG_DURATION_INFINITE)) != 0 ||
	    (rv = nng_socket_set_size(k->sock, NNG_OPT_RECVMAXSZ, RECV_MAX)) !=
	        0 ||
	    (rv = nng_socket_set_ms(
	         k->sock, NNG_OPT_RECONNMINT, RECONNECT_MIN_MS)) != 0 ||
	    (rv = nng_socket_set_ms(
	         k->sock, NNG_OPT_RECONNMAXT, RECONNECT_MAX_MS)) != 0 ||
	    (rv = nng_pipe_notify(k->sock, NNG_PIPE_EV_ADD_POST, pipe_cb, k)) !=
	        0 ||
	    (rv = nng_pipe_notify(k->sock, NNG_PIPE_EV_REM_POST, pipe_cb, k)) !=
	        0 ||
	    (rv = nng_ctx_open(&k->ctx, k->sock)) != 0 ||
	    (rv = nng_ctx_set_ms(
	         k->ctx, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE)) != 0) {
		snprintf(err, errlen, "set up socket: %s", nng_strerror(rv));
		goto fail_close;
	}
	if ((rv = dial(k->sock, url, tls, err, errlen)) != 0)
		goto fail_close;
	if (first_ms < connect_ms && !wait_pipe(k, first_ms)) {
		int left = connect_ms - (int)(now_ms() - start);

		int why = left > 0 ? dial_plain(url, left) : 0;

		if (why == NNG_ECONNREFUSED || why == NNG_ENOENT) {
			snprintf(err, errlen,
			    "%s: connection refused: no server listens there",
			    url);
			rv = why;
			goto fail_close;
		}
		if (why == NNG_EADDRINVAL) {
			snprintf(err, errlen,
			    "%s: the host could not be resolved (%s)", url,
			    nng_strerror(why));
			rv = why;
			goto fail_close;
		}
	}
	if (!wait_pipe(k,
	        connect_ms - (int)(now_ms() - start) > 0
	            ? connect_ms - (int)(now_ms() - start)
	            : 0)) {
		if (tlsfile_url(url) && strncmp(url, "tls+", 4) == 0)
			diagnose(url, tls, connect_ms, err, errlen);
		else
			snprintf(err, errlen, "%s: no connection within %d ms",
			    url, connect_ms);
		rv = NNG_ETIMEDOUT;
		goto fail_close;
	}
	*out = &k->base;
	return 0;

fail_close:
	nng_conn_close(&k->base);
	return rv == NNG_ENOMEM ? SLUICE_ENOMEM : SLUICE_ECONN;
}

static bool
nng_conn_up(struct conn *base)
{
	struct conn_nng *k = (struct conn_nng *)base;
	bool up;

	pthread_mutex_lock(&k->mtx);
	up = k->pipe != 0;
	pthread_mutex_unlock(&k->mtx);
	return up;
}

/* Checks, after an operation was started on aio, whether the pipe went
 * away before the callback could abort it. */
static void
abort_if_lost(struct conn_nng *k)
{
	pthread_mutex_lock(&k->mtx);
	if (k->lost)
		nng_aio_abort(k->aio, NNG_ECONNRESET);
	pthread_mutex_unlock(&k->mtx);
}

static int
nng_conn_exchange(struct conn *base, const void *req, size_t len, uint32_t seq,
    int tmo_ms, struct buf *reply, size_t *off, char *err, size_t errlen)
{
	struct conn_nng *k = (struct conn_nng *)base;
	nng_duration tmo = tmo_ms < 0 ? NNG_DURATION_INFINITE : tmo_ms;
	nng_msg *m;
	bool lost;
	int rv;

	(void)seq; /* req0 numbers its requests itself */
	(void)err;
	(void)errlen;
	if ((rv = nng_msg_alloc(&m, len)) != 0)
		return SLUICE_ENOMEM;
	memcpy(nng_msg_body(m), req, len);
	pthread_mutex_lock(&k->mtx);
	k->busy = true;
	k->lost = k->pipe == 0;
	pthread_mutex_unlock(&k->mtx);

	nng_aio_set_msg(k->aio, m);
	nng_aio_set_timeout(k->aio, tmo);
	nng_ctx_send(k->ctx, k->aio);
	abort_if_lost(k);
	nng_aio_wait(k->aio);
	if ((rv = nng_aio_result(k->aio)) != 0) {
		nng_msg_free(nng_aio_get_msg(k->aio)); /* still ours */
		nng_aio_set_msg(k->aio, NULL);
		goto done;
	}
	nng_aio_set_timeout(k->aio, tmo);
	nng_ctx_recv(k->ctx, k->aio);
	abort_if_lost(k);
	nng_aio_wait(k->aio);
	if ((rv = nng_aio_result(k->aio)) == 0) {
		m = nng_aio_get_msg(k->aio);
		nng_aio_set_msg(k->aio, NULL);
		buf_reset(reply);
		buf_put(reply, nng_msg_body(m), nng_msg_len(m));
		nng_msg_free(m);
		if (buf_failed(reply))
			rv = NNG_ENOMEM;
		*off = 0;
	}

done:
	pthread_mutex_lock(&k->mtx);
	k->busy = false;
	lost = k->lost;
	pthread_mutex_unlock(&k->mtx);
	if (rv == 0)
		return 0;
	if (lost)
		return SLUICE_ECONN;
	return nng_to_sluice(rv);
}

void
conn_nng_sock(struct conn *base, nng_socket *sock, nng_ctx *ctx)
{
	struct conn_nng *k = (struct conn_nng *)base;

	*sock = k->sock;
	*ctx = k->ctx;
}

const struct conn_ops conn_nng_ops = {
	.open = nng_conn_open,
	.up = nng_conn_up,
	.exchange = nng_conn_exchange,
	.close = nng_conn_close,
};
