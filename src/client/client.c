/* client - the libsluice handle: connecting, one request at a time, and
 * the retry rules of sluice.h.
 *
 * Connection. One connection (conn.h) to one URL at a time (several would
 * spread requests over leader and followers): SP over TCP spoken here, on
 * the caller's thread, for tcp://; an nng REQ socket for the other
 * schemes. Connecting to one URL takes at most connect_ms, the call's timeout
 * never extends it; a URL that does not answer makes the handle try the
 * next one. A connection the server closed while the handle was idle is
 * noticed before the next request goes out, and replaced.
 *
 * No resend. A request is sent once. When the connection goes away while
 * it is under way, or no reply comes in time, the connection is closed
 * and the call fails (SLUICE_ECONN, SLUICE_ETIMEDOUT: the outcome is
 * unknown), except that a request msg_req_idempotent() calls harmless to
 * repeat is sent once more after a lost connection. A "not leader" reply
 * sends the request to the leader it names: the follower ran nothing.
 * A change sent once more and then refused (a keyed put answered "not
 * leader" until the timeout, while its first sending may have been
 * committed by the leader that died) is SLUICE_ECONN, unknown: the
 * refusal speaks only for the second sending.
 *
 * Failover. With several URLs, while no leader answers (none reachable,
 * or followers that know no leader or name one that is gone), the call
 * keeps looking, with a short growing pause, until its timeout: a
 * cluster electing a new leader is found again without the caller's
 * help.
 *
 * The reply. Its bytes stay in c->reply until the next call (decoded
 * replies point into them); a reply larger than REPLY_KEEP gives its
 * memory back at the start of the next call. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "util/clock.h"

enum {
	REPLY_KEEP = 1 << 20,    /* reply memory kept between calls */
	ELECTION_MAX_MS = 30000, /* a call with no timeout looks for a
	                          * leader this long at most */
	BACKOFF_MAX_MS = 200,
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

/* ---- connection --------------------------------------------------------- */

static const struct conn_ops *
transport_of(const char *url)
{
	return strncmp(url, "tcp://", 6) == 0 ? &conn_tcp_ops : &conn_nng_ops;
}

static void
conn_drop(struct sluice_client *c)
{
	if (c->conn != NULL) {
		c->conn->ops->close(c->conn);
		c->conn = NULL;
	}
}

/* Connected, or connects to the current URL, then the others in turn. */
static int
conn_ensure(struct sluice_client *c)
{
	int rc = SLUICE_ECONN;

	if (c->conn != NULL) {
		if (c->conn->ops->up(c->conn))
			return 0;
		conn_drop(c); /* the session is gone: start clean */
	}
	for (size_t k = 0; k < c->urls.n; k++) {
		size_t idx = (c->urls.cur + k) % c->urls.n;
		const char *url = c->urls.v[idx];

		rc = transport_of(url)->open(url, c->connect_ms,
		    c->urls.n == 1 ? c->refused_ms : 0,
		    c->tls.ca != NULL ? &c->tls : NULL, &c->conn, c->errmsg,
		    sizeof(c->errmsg));
		if (rc == 0) {
			c->urls.cur = idx;
			c->need_auth = c->token != NULL;
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

/* A cluster without a reachable leader (one died, the others elect the
 * next): with several URLs, waits a little before the call looks again,
 * doubling the wait each time, while the call's time lasts. False when
 * there is one URL or no time left. Nothing was executed: no server
 * answered, or a follower said it is not the leader. */
static bool
await_leader(struct sluice_client *c, int64_t deadline, int *backoff_ms)
{
	struct timespec ts;

	if (c->urls.n < 2 || clock_mono_ms() + *backoff_ms > deadline)
		return false;
	ts.tv_sec = *backoff_ms / 1000;
	ts.tv_nsec = (long)(*backoff_ms % 1000) * 1000000;
	nanosleep(&ts, NULL);
	*backoff_ms =
	    *backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : *backoff_ms * 2;
	return true;
}

/* The call's timeout in ms; -1: none. */
static int
call_timeout(const struct sluice_client *c, int64_t extra_ms)
{
	int64_t ms;

	if (c->timeout_ms < 0)
		return -1;
	ms = (int64_t)c->timeout_ms + (extra_ms > 0 ? extra_ms : 0);
	return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

/* Sends c->out and receives the reply into c->reply. Returns as the
 * transport's exchange; after an error the connection is closed, with
 * errmsg set for every error but SLUICE_ECONN and SLUICE_ETIMEDOUT, whose
 * message the caller writes. */
static int
exchange(struct sluice_client *c, const char *op, int tmo)
{
	char why[256] = "";
	int rc;

	rc = c->conn->ops->exchange(c->conn, c->out.data, c->out.len, c->seq++,
	    tmo, &c->reply, &c->reply_off, why, sizeof(why));
	if (rc == 0)
		return 0;
	conn_drop(c);
	if (rc == SLUICE_EPROTO)
		client_errmsg(
		    c, "bad reply from %s to %s: %s", cur_url(c), op, why);
	else if (rc == SLUICE_ENOMEM)
		client_errmsg(c, "%s", sluice_strerror(rc));
	return rc;
}

static int client_call_once(struct sluice_client *c, const struct msg_req *req,
    int64_t extra_ms, struct msg_rep *rep);

/* The handle's token, as the first request of a connection. */
static int
send_auth(struct sluice_client *c)
{
	const struct msg_req q = { .op = MSG_OP_AUTH,
		.token = { c->token, strlen(c->token) } };
	struct msg_rep rep;

	c->need_auth = false;
	return client_call_once(c, &q, 0, &rep);
}

/* A request refused SLUICE_EAUTH was not done: after a reconnect the
 * server may have seen a new session (nng redials by itself), so the
 * token is sent again and the request once more. */
int
client_call(struct sluice_client *c, const struct msg_req *req,
    int64_t extra_ms, struct msg_rep *rep)
{
	int rc = client_call_once(c, req, extra_ms, rep);

	if (rc != SLUICE_EAUTH || c->token == NULL || req->op == MSG_OP_AUTH)
		return rc;
	c->need_auth = true;
	return client_call_once(c, req, extra_ms, rep);
}

/* The requests among msg_req_idempotent()'s that change something. */
static bool
changes(const struct msg_req *q)
{
	switch (q->op) {
	case MSG_OP_PUT:
	case MSG_OP_PUT_BATCH:
	case MSG_OP_TUBE_SET:
	case MSG_OP_SCHED_SET:
	case MSG_OP_CANCEL:
	case MSG_OP_MAP_SET:
	case MSG_OP_MOVE_OUT:
	case MSG_OP_MOVE_IN:
	case MSG_OP_MOVE_END:
		return true;
	default:
		return false;
	}
}

static int
client_call_once(struct sluice_client *c, const struct msg_req *req,
    int64_t extra_ms, struct msg_rep *rep)
{
	const struct msg_limits lim = { MSG_SIZE_MAX, MSG_SIZE_MAX };
	const char *op = msg_op_name(req->op);
	int tmo = call_timeout(c, extra_ms);
	bool idem = msg_req_idempotent(req);
	bool retried = false;
	int64_t deadline = clock_mono_ms() + (tmo < 0 ? ELECTION_MAX_MS : tmo);
	int backoff_ms = 10;
	size_t hops = 0;
	int rc;

	c->errmsg[0] = '\0';
	if (c->reply.cap > REPLY_KEEP)
		buf_fini(&c->reply);
	buf_reset(&c->reply);
	buf_reset(&c->out);
	if ((rc = msg_encode_req(&c->out, req)) != 0) {
		struct msg_str bad;

		rc = rc == -ENOMEM ? SLUICE_ENOMEM : rc;
		if (rc == SLUICE_ETUBE && msg_req_bad_tube(req, &bad))
			msg_tube_why(bad, c->errmsg, sizeof(c->errmsg));
		else
			client_errmsg(c, "%s", sluice_strerror(rc));
		return rc;
	}
	for (;;) {
		if ((rc = conn_ensure(c)) != 0) {
			if (rc == SLUICE_ECONN &&
			    await_leader(c, deadline, &backoff_ms))
				continue;
			return rc;
		}
		if (c->need_auth && req->op != MSG_OP_AUTH) {
			/* a new connection: its token first, then this */
			struct buf keep = c->out;

			buf_init(&c->out);
			rc = send_auth(c);
			buf_fini(&c->out);
			c->out = keep;
			if (rc != 0)
				return rc;
		}
		rc = exchange(c, op, tmo);
		if (rc == SLUICE_ECONN && idem && !retried) {
			retried = true;
			continue;
		}
		if (rc == SLUICE_ECONN) {
			client_errmsg(c,
			    "connection to %s lost before the reply: the "
			    "request may or may not have been done",
			    cur_url(c));
			return rc;
		}
		if (rc == SLUICE_ETIMEDOUT) {
			client_errmsg(c,
			    "no reply from %s within %d ms: the request may "
			    "or may not have been done",
			    cur_url(c), tmo);
			return rc;
		}
		if (rc != 0)
			return rc;
		rc = msg_decode_rep(c->reply.data + c->reply_off,
		    c->reply.len - c->reply_off, &lim, rep);
		if (rc == 0 && rep->op != req->op)
			rc = SLUICE_EPROTO;
		if (rc != 0) {
			client_errmsg(c, "bad reply from %s to %s: %s",
			    cur_url(c), op, sluice_strerror(rc));
			conn_drop(c);
			return rc == SLUICE_EVERSION ? rc : SLUICE_EPROTO;
		}
		if (rep->status == SLUICE_ENOTLEADER && hops < 2 * c->urls.n &&
		    follow_leader(c, rep)) {
			hops++;
			conn_drop(c);
			continue;
		}
		if (rep->status == SLUICE_ENOTLEADER &&
		    await_leader(c, deadline, &backoff_ms)) {
			hops = 0;
			c->urls.cur = (c->urls.cur + 1) % c->urls.n;
			conn_drop(c);
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
			if (retried && changes(req)) {
				char why[sizeof(c->errmsg)];

				snprintf(why, sizeof(why), "%s", c->errmsg);
				client_errmsg(c,
				    "connection lost before the reply, and "
				    "sent again: %s: the request may or may "
				    "not have been done",
				    why);
				return SLUICE_ECONN;
			}
			return rep->status;
		}
		return 0;
	}
}

/* ---- the handle --------------------------------------------------------- */

/* A start for the request numbers that differs between handles and runs,
 * so a stray reply from an earlier connection never matches by chance. */
static uint32_t
seq_start(const void *salt)
{
	struct timespec ts;
	uint32_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u ^
	    (uint32_t)getpid() << 16 ^ (uint32_t)(uintptr_t)salt;
}

int
sluice_open(const char *urls, struct sluice_client **out)
{
	struct sluice_client *c;
	int rc;

	if (out == NULL)
		return SLUICE_EINVAL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return SLUICE_ENOMEM;
	if ((rc = urls_parse(urls, &c->urls)) != 0) {
		free(c);
		return rc;
	}
	buf_init(&c->out);
	buf_init(&c->reply);
	c->seq = seq_start(c);
	buf_init(&c->texts);
	c->timeout_ms = SLUICE_TIMEOUT_DEFAULT;
	c->connect_ms = SLUICE_CONNECT_DEFAULT;
	c->refused_ms = -1;
	*out = c;
	return 0;
}

void
sluice_close(struct sluice_client *c)
{
	if (c == NULL)
		return;
	conn_drop(c);
	free(c->token);
	buf_fini(&c->reply);
	buf_fini(&c->out);
	buf_fini(&c->texts);
	urls_fini(&c->urls);
	tlsfile_fini(&c->tls);
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

void
sluice_set_refused_retry(struct sluice_client *c, int ms)
{
	if (c != NULL)
		c->refused_ms = ms < 0 ? -1 : ms;
}

int
sluice_set_tls(struct sluice_client *c, const char *ca_file,
    const char *cert_file, const char *key_file)
{
	static const char *const names[3] = { "CA", "certificate", "key" };
	struct tlsfile t;

	if (c == NULL)
		return SLUICE_EINVAL;
	if (ca_file == NULL) {
		client_errmsg(c,
		    "TLS needs the CA that signed the server's "
		    "certificate");
		return SLUICE_EINVAL;
	}
	if (tlsfile_load(&t, ca_file, cert_file, key_file, names, c->errmsg,
	        sizeof(c->errmsg)) != 0)
		return SLUICE_EINVAL;
	conn_drop(c); /* the next call connects with these */
	tlsfile_fini(&c->tls);
	c->tls = t;
	c->errmsg[0] = '\0';
	return 0;
}

int
sluice_set_token(struct sluice_client *c, const char *token)
{
	char *copy = NULL;

	if (c == NULL || (token != NULL && strlen(token) > MSG_TOKEN_MAX))
		return SLUICE_EINVAL;
	if (token != NULL && token[0] != '\0' && (copy = strdup(token)) == NULL)
		return SLUICE_ENOMEM;
	free(c->token);
	c->token = copy;
	c->need_auth = copy != NULL && c->conn != NULL;
	return 0;
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
