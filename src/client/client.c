/* client - the libsluice handle: connecting, one request at a time, and
 * the retry rules of sluice.h.
 *
 * Connection. One REQ socket with one dialer, to one URL at a time
 * (several dialers would spread requests over leader and followers). The
 * dial is non-blocking and the handle waits for nng's "pipe added" event
 * up to connect_ms, so an unreachable host costs connect_ms, never a
 * kernel's TCP timeout. A URL that does not answer makes the handle try
 * the next one.
 *
 * No resend. nng's REQ protocol re-sends a request after
 * NNG_OPT_REQ_RESENDTIME and, in nng 1.5, also on a new pipe when the one
 * it went out on closes. Both are wrong for a queue (a take or a put would
 * run twice), so the resend time is infinite and the handle watches its
 * pipe: when the pipe goes away while a request is in flight, the pipe
 * callback aborts the receive (`lost`), the socket is closed, and the
 * request is reported as SLUICE_ECONN - or sent once more when
 * msg_req_idempotent() says that is harmless.
 *
 * The `lost` race: the pipe may go between the end of the send and the
 * start of the receive, when there is nothing to abort. So the callback
 * sets `lost` under the mutex, and the caller checks it under the mutex
 * right after starting each operation; one of the two always sees the
 * other. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "client/client.h"

enum {
	RECONNECT_MIN_MS = 50,
	RECONNECT_MAX_MS = 500,
	/* the largest reply, with room for nng's request-id header */
	RECV_MAX = MSG_SIZE_MAX + 1024,
};

void
client_errmsg(struct sluice_client *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
}

static const char *
cur_url(const struct sluice_client *c)
{
	return c->urls.v[c->urls.cur];
}

/* ---- pipes ----------------------------------------------------------- */

static void
pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct sluice_client *c = arg;
	uint32_t id = (uint32_t)nng_pipe_id(p);

	pthread_mutex_lock(&c->mtx);
	if (ev == NNG_PIPE_EV_ADD_POST) {
		c->pipe = id;
		pthread_cond_broadcast(&c->cv);
	} else if (ev == NNG_PIPE_EV_REM_POST && id == c->pipe) {
		c->pipe = 0;
		if (c->busy) {
			c->lost = true;
			nng_aio_abort(c->aio, NNG_ECONNRESET);
		}
	}
	pthread_mutex_unlock(&c->mtx);
}

/* ---- connection --------------------------------------------------------- */

/* Closes the socket, if open. Never called with mtx held: closing runs the
 * pipe callbacks, which take it. */
static void
conn_close(struct sluice_client *c)
{
	if (!c->open)
		return;
	nng_close(c->sock);
	c->open = false;
	pthread_mutex_lock(&c->mtx);
	c->pipe = 0;
	c->busy = false;
	c->lost = false;
	pthread_mutex_unlock(&c->mtx);
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

/* Waits until a pipe is up or connect_ms passed; true when up. */
static bool
wait_pipe(struct sluice_client *c)
{
	struct timespec dl;
	bool up;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += c->connect_ms / 1000;
	dl.tv_nsec += (long)(c->connect_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&c->mtx);
	while (c->pipe == 0) {
		if (pthread_cond_timedwait(&c->cv, &c->mtx, &dl) == ETIMEDOUT)
			break;
	}
	up = c->pipe != 0;
	pthread_mutex_unlock(&c->mtx);
	return up;
}

/* Opens a socket dialing urls.v[idx] and waits for the connection. */
static int
conn_open(struct sluice_client *c, size_t idx)
{
	const char *url = c->urls.v[idx];
	nng_dialer d;
	int rv;

	if ((rv = nng_req0_open(&c->sock)) != 0) {
		client_errmsg(c, "open socket: %s", nng_strerror(rv));
		return nng_to_sluice(rv);
	}
	c->open = true;
	pthread_mutex_lock(&c->mtx);
	c->pipe = 0;
	c->busy = false;
	c->lost = false;
	pthread_mutex_unlock(&c->mtx);
	if ((rv = nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME,
	         NNG_DURATION_INFINITE)) != 0 ||
	    (rv = nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, RECV_MAX)) !=
	        0 ||
	    (rv = nng_socket_set_ms(
	         c->sock, NNG_OPT_RECONNMINT, RECONNECT_MIN_MS)) != 0 ||
	    (rv = nng_socket_set_ms(
	         c->sock, NNG_OPT_RECONNMAXT, RECONNECT_MAX_MS)) != 0 ||
	    (rv = nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, pipe_cb, c)) !=
	        0 ||
	    (rv = nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, pipe_cb, c)) !=
	        0 ||
	    (rv = nng_ctx_open(&c->ctx, c->sock)) != 0 ||
	    (rv = nng_ctx_set_ms(
	         c->ctx, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE)) != 0) {
		client_errmsg(c, "set up socket: %s", nng_strerror(rv));
		goto fail_close;
	}
	if ((rv = nng_dialer_create(&d, c->sock, url)) != 0) {
		client_errmsg(c, "%s: %s", url, nng_strerror(rv));
		goto fail_close;
	}
	if ((rv = nng_dialer_start(d, NNG_FLAG_NONBLOCK)) != 0) {
		client_errmsg(c, "dial %s: %s", url, nng_strerror(rv));
		goto fail_close;
	}
	if (!wait_pipe(c)) {
		client_errmsg(
		    c, "%s: no connection within %d ms", url, c->connect_ms);
		rv = NNG_ETIMEDOUT;
		goto fail_close;
	}
	return 0;

fail_close:
	conn_close(c);
	return rv == NNG_ENOMEM ? SLUICE_ENOMEM : SLUICE_ECONN;
}

/* Connected, or connects to the current URL, then the others in turn. */
static int
conn_ensure(struct sluice_client *c)
{
	bool up;
	int rc = SLUICE_ECONN;

	if (c->open) {
		pthread_mutex_lock(&c->mtx);
		up = c->pipe != 0;
		pthread_mutex_unlock(&c->mtx);
		if (up)
			return 0;
		conn_close(c); /* the session is gone: start clean */
	}
	for (size_t k = 0; k < c->urls.n; k++) {
		size_t idx = (c->urls.cur + k) % c->urls.n;

		if ((rc = conn_open(c, idx)) == 0) {
			c->urls.cur = idx;
			return 0;
		}
		if (rc == SLUICE_ENOMEM)
			return rc;
	}
	if (c->urls.n > 1) {
		char last[sizeof(c->errmsg)];

		snprintf(last, sizeof(last), "%s", c->errmsg);
		client_errmsg(c, "none of %zu servers reachable (last: %s)",
		    c->urls.n, last);
	}
	return rc;
}

/* ---- one exchange ---------------------------------------------------------
 */

/* Starts nothing; checks, after an operation was started on aio, whether
 * the pipe went away before it could be aborted by the callback. */
static void
abort_if_lost(struct sluice_client *c)
{
	pthread_mutex_lock(&c->mtx);
	if (c->lost)
		nng_aio_abort(c->aio, NNG_ECONNRESET);
	pthread_mutex_unlock(&c->mtx);
}

/* Sends c->out and receives the reply into c->reply. Returns 0,
 * SLUICE_ECONN (the pipe went away: outcome unknown), SLUICE_ETIMEDOUT,
 * SLUICE_ENOMEM. */
static int
exchange(struct sluice_client *c, nng_duration tmo)
{
	nng_msg *m;
	bool lost;
	int rv;

	if ((rv = nng_msg_alloc(&m, c->out.len)) != 0)
		return SLUICE_ENOMEM;
	memcpy(nng_msg_body(m), c->out.data, c->out.len);
	pthread_mutex_lock(&c->mtx);
	c->busy = true;
	c->lost = c->pipe == 0;
	pthread_mutex_unlock(&c->mtx);

	nng_aio_set_msg(c->aio, m);
	nng_aio_set_timeout(c->aio, tmo);
	nng_ctx_send(c->ctx, c->aio);
	abort_if_lost(c);
	nng_aio_wait(c->aio);
	if ((rv = nng_aio_result(c->aio)) != 0) {
		nng_msg_free(nng_aio_get_msg(c->aio)); /* still ours */
		nng_aio_set_msg(c->aio, NULL);
		goto done;
	}
	nng_aio_set_timeout(c->aio, tmo);
	nng_ctx_recv(c->ctx, c->aio);
	abort_if_lost(c);
	nng_aio_wait(c->aio);
	if ((rv = nng_aio_result(c->aio)) == 0) {
		c->reply = nng_aio_get_msg(c->aio);
		nng_aio_set_msg(c->aio, NULL);
	}

done:
	pthread_mutex_lock(&c->mtx);
	c->busy = false;
	lost = c->lost;
	pthread_mutex_unlock(&c->mtx);
	if (rv == 0)
		return 0;
	if (lost)
		return SLUICE_ECONN;
	return nng_to_sluice(rv);
}

/* After "not leader": point the handle at the leader named in the reply,
 * or at the next URL. False when there is nowhere else to go. */
static bool
follow_leader(struct sluice_client *c, const struct msg_rep *rep)
{
	size_t idx;

	if (rep->err.leader.len > 0) {
		if (urls_find_or_add(&c->urls, rep->err.leader.p,
		        rep->err.leader.len, &idx) != 0)
			return false;
		if (idx == c->urls.cur)
			return false;
		c->urls.cur = idx;
		return true;
	}
	if (c->urls.n < 2)
		return false;
	c->urls.cur = (c->urls.cur + 1) % c->urls.n;
	return true;
}

static void
reply_free(struct sluice_client *c)
{
	if (c->reply != NULL) {
		nng_msg_free(c->reply);
		c->reply = NULL;
	}
}

static nng_duration
call_timeout(const struct sluice_client *c, int64_t extra_ms)
{
	int64_t ms;

	if (c->timeout_ms < 0)
		return NNG_DURATION_INFINITE;
	ms = (int64_t)c->timeout_ms + (extra_ms > 0 ? extra_ms : 0);
	return ms > INT32_MAX ? INT32_MAX : (nng_duration)ms;
}

int
client_call(struct sluice_client *c, const struct msg_req *req,
    int64_t extra_ms, struct msg_rep *rep)
{
	const struct msg_limits lim = { MSG_SIZE_MAX, MSG_SIZE_MAX };
	const char *op = msg_op_name(req->op);
	nng_duration tmo = call_timeout(c, extra_ms);
	bool idem = msg_req_idempotent(req);
	bool redirected = false, retried = false;
	int rc;

	c->errmsg[0] = '\0';
	buf_reset(&c->out);
	if ((rc = msg_encode_req(&c->out, req)) != 0) {
		rc = rc == -ENOMEM ? SLUICE_ENOMEM : rc;
		client_errmsg(c, "%s", sluice_strerror(rc));
		return rc;
	}
	for (;;) {
		if ((rc = conn_ensure(c)) != 0)
			return rc;
		reply_free(c); /* a redirected request's first reply */
		rc = exchange(c, tmo);
		if (rc == SLUICE_ECONN && idem && !retried) {
			conn_close(c);
			retried = true;
			continue;
		}
		if (rc == SLUICE_ECONN) {
			client_errmsg(c,
			    "connection to %s lost during %s: it may or may "
			    "not have been done",
			    cur_url(c), op);
			conn_close(c);
			return rc;
		}
		if (rc == SLUICE_ETIMEDOUT) {
			client_errmsg(c,
			    "no reply from %s to %s within %d ms: it may or "
			    "may not have been done",
			    cur_url(c), op, (int)tmo);
			conn_close(c);
			return rc;
		}
		if (rc != 0)
			return rc;
		rc = msg_decode_rep(
		    nng_msg_body(c->reply), nng_msg_len(c->reply), &lim, rep);
		if (rc == 0 && rep->op != req->op)
			rc = SLUICE_EPROTO;
		if (rc != 0) {
			client_errmsg(c, "bad reply from %s to %s: %s",
			    cur_url(c), op, sluice_strerror(rc));
			conn_close(c);
			return rc == SLUICE_EVERSION ? rc : SLUICE_EPROTO;
		}
		if (rep->status == SLUICE_ENOTLEADER && !redirected &&
		    follow_leader(c, rep)) {
			redirected = true;
			conn_close(c);
			continue;
		}
		if (rep->status != 0) {
			if (rep->err.message.len > 0)
				client_errmsg(c, "%.*s",
				    (int)rep->err.message.len,
				    rep->err.message.p);
			else
				client_errmsg(
				    c, "%s", sluice_strerror(rep->status));
			if (rep->status == SLUICE_ENOTLEADER &&
			    rep->err.leader.len > 0)
				client_errmsg(c,
				    "not leader; the leader is %.*s",
				    (int)rep->err.leader.len,
				    rep->err.leader.p);
			return rep->status;
		}
		return 0;
	}
}

/* ---- the handle --------------------------------------------------------- */

int
sluice_open(const char *urls, struct sluice_client **out)
{
	struct sluice_client *c;
	pthread_condattr_t ca;
	int rc;

	if (out == NULL)
		return SLUICE_EINVAL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return SLUICE_ENOMEM;
	if ((rc = urls_parse(urls, &c->urls)) != 0) {
		free(c);
		return rc;
	}
	if (nng_aio_alloc(&c->aio, NULL, NULL) != 0) {
		urls_free(&c->urls);
		free(c);
		return SLUICE_ENOMEM;
	}
	pthread_mutex_init(&c->mtx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	buf_init(&c->out);
	buf_init(&c->texts);
	c->timeout_ms = SLUICE_TIMEOUT_DEFAULT;
	c->connect_ms = SLUICE_CONNECT_DEFAULT;
	*out = c;
	return 0;
}

void
sluice_close(struct sluice_client *c)
{
	if (c == NULL)
		return;
	conn_close(c);
	reply_free(c);
	nng_aio_free(c->aio);
	buf_free(&c->out);
	buf_free(&c->texts);
	urls_free(&c->urls);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mtx);
	free(c);
}

void
sluice_set_timeout(struct sluice_client *c, int ms)
{
	if (c != NULL)
		c->timeout_ms = ms < 0 ? -1 : ms;
}

void
sluice_set_connect_timeout(struct sluice_client *c, int ms)
{
	if (c != NULL)
		c->connect_ms = ms < 1 ? 1 : ms;
}

const char *
sluice_errmsg(const struct sluice_client *c)
{
	return c != NULL ? c->errmsg : "";
}

const char *
sluice_url(const struct sluice_client *c)
{
	return c != NULL ? cur_url(c) : "";
}
