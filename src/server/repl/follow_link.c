/* follow_link - a follower's link to its leader: an nng req0 socket
 * dialing the leader's --repl-listen URL (with TLS when the URL asks),
 * with two contexts, one for a fetch (or a snapshot chunk) and one for an
 * ack, each with one request in flight at most. nng's callbacks only
 * mark an exchange done and signal the core (f->efd); follow_turn takes
 * the answers on the core thread. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "server/core/core.h"
#include "server/repl/follow_int.h"
#include "util/log.h"
#include "util/nngclose.h"
#include "util/tlsfile.h"

static void
signal_core(struct follow *f)
{
	uint64_t one = 1;

	if (write(f->efd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow here */
	}
}

/* A req0 context's request completes in two steps: the send, then the
 * receive of the reply. Only the end of both reaches the core. */
static void
step(struct follow *f, nng_ctx ctx, nng_aio *aio, atomic_bool *sent,
    atomic_bool *done)
{
	if (!atomic_load(sent) && nng_aio_result(aio) == 0) {
		atomic_store(sent, true);
		nng_ctx_recv(ctx, aio);
		return;
	}
	atomic_store(done, true);
	signal_core(f);
}

static void
fetch_cb(void *arg)
{
	struct follow *f = arg;

	step(f, f->fctx, f->faio, &f->fsent, &f->fdone);
}

static void
ack_cb(void *arg)
{
	struct follow *f = arg;

	step(f, f->actx, f->aaio, &f->asent, &f->adone);
}

/* Dials `url` in the background, with TLS when the URL asks for it: the
 * leader's certificate must be signed by --tls-ca and name the URL's
 * host; ours is shown when the leader requires one. */
static int
dial(nng_socket sock, const char *url, const struct tlsfile *tls)
{
	nng_tls_config *cfg = NULL;
	nng_dialer d;
	int rv;

	if (!tlsfile_url(url))
		return nng_dial(sock, url, NULL, NNG_FLAG_NONBLOCK);
	if (tls == NULL)
		return NNG_EINVAL;
	if ((rv = tlsfile_client(tls, url, &cfg)) != 0)
		return rv;
	if ((rv = nng_dialer_create(&d, sock, url)) == 0 &&
	    (rv = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, cfg)) == 0)
		rv = nng_dialer_start(d, NNG_FLAG_NONBLOCK);
	nng_tls_config_free(cfg); /* the dialer holds its own reference */
	return rv;
}

int
follow_link_open(struct follow *f, const char *url, const struct tlsfile *tls)
{
	int rv;

	snprintf(f->url, sizeof(f->url), "%s", url);
	if ((rv = nng_req0_open(&f->sock)) != 0)
		return -(1000 + rv);
	if ((rv = nng_socket_set_size(f->sock, NNG_OPT_RECVMAXSZ,
	         REPLMSG_RECORDS_MAX + 4096)) != 0 ||
	    (rv = nng_socket_set_ms(f->sock, NNG_OPT_RECONNMINT, 100)) != 0 ||
	    (rv = nng_socket_set_ms(f->sock, NNG_OPT_RECONNMAXT, 1000)) != 0 ||
	    (rv = nng_ctx_open(&f->fctx, f->sock)) != 0 ||
	    (rv = nng_ctx_open(&f->actx, f->sock)) != 0 ||
	    (rv = nng_aio_alloc(&f->faio, fetch_cb, f)) != 0 ||
	    (rv = nng_aio_alloc(&f->aaio, ack_cb, f)) != 0 ||
	    (rv = dial(f->sock, url, tls)) != 0) {
		nng_close(f->sock);
		if (f->faio != NULL)
			nng_aio_free(f->faio);
		if (f->aaio != NULL)
			nng_aio_free(f->aaio);
		f->faio = f->aaio = NULL;
		return -(1000 + rv);
	}
	nng_ctx_set_ms(f->fctx, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	nng_ctx_set_ms(f->actx, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	return 0;
}

/* Frees what a finished exchange on `aio` still holds: the reply, when
 * one came; the request, when its send failed (a send that fails leaves
 * the message with the caller). */
void
follow_exchange_free(nng_aio *aio, const atomic_bool *sent)
{
	if (nng_aio_result(aio) == 0 || !atomic_load(sent))
		nng_msg_free(nng_aio_get_msg(aio));
}

void
follow_link_close(struct follow *f)
{
	/* A stopped exchange has finished: a send waiting for a leader
	 * that never answered is cancelled, its request still ours. */
	nng_aio_stop(f->faio);
	nng_aio_stop(f->aaio);
	if (atomic_load(&f->fdone))
		follow_exchange_free(f->faio, &f->fsent);
	if (atomic_load(&f->adone))
		follow_exchange_free(f->aaio, &f->asent);
	nng_ctx_close(f->fctx);
	nng_ctx_close(f->actx);
	/* Bounded (util/nngclose.h): a hung close must not stop the
	 * follower from re-pointing. The aios are stopped, so no callback
	 * runs again; if the close is abandoned they are left to it. */
	if (nngclose_within(f->sock, LINK_CLOSE_MS, NULL, NULL)) {
		nng_aio_free(f->faio);
		nng_aio_free(f->aaio);
	} else {
		log_warn("follow",
		    "the link to the leader did not close in time; going on "
		    "wait_ms=%d",
		    LINK_CLOSE_MS);
	}
	f->faio = f->aaio = NULL;
	f->fbusy = f->abusy = false;
	atomic_store(&f->fdone, false);
	atomic_store(&f->adone, false);
}

/* Sends f->out on ctx/aio. False when it could not be queued. */
static bool
link_send(struct follow *f, nng_ctx ctx, nng_aio *aio, int timeout_ms)
{
	atomic_bool *sent = aio == f->faio ? &f->fsent : &f->asent;
	nng_msg *m;

	if (buf_failed(&f->out) || nng_msg_alloc(&m, 0) != 0)
		return false;
	if (nng_msg_append(m, f->out.data, f->out.len) != 0) {
		nng_msg_free(m);
		return false;
	}
	atomic_store(sent, false);
	nng_aio_set_msg(aio, m);
	nng_aio_set_timeout(aio, timeout_ms);
	nng_ctx_send(ctx, aio);
	return true;
}

void
follow_send_fetch(struct core *c, struct follow *f)
{
	uint64_t last = wal_last_lsn(c->wal);
	const struct epoch_ent *e = epochs_at(&c->epochs, last ? last : 1);
	struct replmsg_fetch_req q = {
		.from_lsn = last + 1,
		.last_epoch = wal_epoch(c->wal),
		.last_nonce = e->nonce,
		.epoch_start = e->start,
		.durable_lsn = wal_durable_lsn(c->wal),
		.max_bytes = FETCH_BYTES,
		.wait_ms = FETCH_WAIT_MS,
		.url = msg_cstr(c->cfg->advertise != NULL ? c->cfg->advertise
		                                          : c->cfg->listen),
		.token = msg_cstr(
		    c->cfg->repl_token != NULL ? c->cfg->repl_token : ""),
	};

	/* The epoch of our last record is the history's, unless the log
	 * holds none yet of the epoch the writer carries. */
	if (e->epoch != q.last_epoch) {
		q.last_epoch = e->epoch;
	}
	buf_reset(&f->out);
	replmsg_encode_fetch(&f->out, &q);
	f->fop = REPLMSG_OP_FETCH;
	f->fbusy =
	    link_send(f, f->fctx, f->faio, FETCH_WAIT_MS + FETCH_TIMEOUT_MS);
	if (f->fbusy && q.durable_lsn > f->acked)
		f->acked = q.durable_lsn;
}

void
follow_send_snap(struct follow *f)
{
	struct replmsg_snap_req q = { f->snap_lsn, f->snap_off, SNAP_CHUNK };

	buf_reset(&f->out);
	replmsg_encode_snap(&f->out, &q);
	f->fop = REPLMSG_OP_SNAP;
	f->fbusy = link_send(f, f->fctx, f->faio, FETCH_TIMEOUT_MS);
}

void
follow_send_ack(struct core *c, struct follow *f)
{
	struct replmsg_ack_req q = { wal_durable_lsn(c->wal) };

	buf_reset(&f->out);
	replmsg_encode_ack(&f->out, &q);
	f->abusy = link_send(f, f->actx, f->aaio, FETCH_TIMEOUT_MS);
	if (f->abusy)
		f->acked = q.durable_lsn;
}
