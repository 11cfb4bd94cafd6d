/* follow - see follow.h.
 *
 * The cycle: fetch (from our last LSN + 1, naming the epoch of our last
 * record) → the leader answers with records, "load a snapshot", or "cut
 * after LSN X" → we append the records to our log at the same LSNs and
 * apply them, and fetch again at once, while our writer syncs the batch;
 * each time our durable LSN moves, an ack tells the leader. A fetch is
 * positional, so a reply that arrives late, or twice, is recognised by its
 * first LSN and dropped: nothing is applied twice and nothing skipped.
 *
 * Cutting and installing a snapshot both end the same way: the writer is
 * closed, the data directory is changed, and the node rebuilds its state
 * from it (core_reload), as a restart would. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "log/durable.h"
#include "log/logdir.h"
#include "log/rec.h"
#include "log/snap.h"
#include "proto/replmsg.h"
#include "queue/qrec.h"
#include "server/core/core.h"
#include "server/repl/follow.h"
#include "server/repl/lead.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/fsutil.h"
#include "util/log.h"
#include "util/nngclose.h"
#include "util/tlsfile.h"

enum {
	FETCH_BYTES = 4 << 20,   /* records asked for per fetch */
	FETCH_WAIT_MS = 1000,    /* how long the leader may hold a fetch */
	FETCH_TIMEOUT_MS = 5000, /* beyond the wait: the leader is lost */
	RETRY_MS = 200,          /* after a failed fetch */
	RETRY_SLOW_MS = 1000,    /* after a refusal */
	SNAP_CHUNK = 4 << 20,
	LOST_MS = 3000,           /* no answer this long: not connected */
	UNREACHED_LOG_MS = 30000, /* "cannot reach", at most this often */
	LINK_CLOSE_MS = 3000,     /* the longest a link close waits for nng */
};

struct follow {
	char url[MSG_URL_MAX + 1]; /* the leader's replication URL */
	nng_socket sock;
	nng_ctx fctx, actx;
	nng_aio *faio, *aaio;
	int efd;
	atomic_bool fdone, adone;
	atomic_bool fsent, asent; /* the request went out; a receive waits */
	bool fbusy, abusy;
	uint8_t fop;    /* the op in flight on fctx */
	uint64_t acked; /* the durable LSN last acked */
	uint64_t leader_last;
	uint64_t leader_last_time;
	uint64_t leader_epoch;
	int64_t contact;  /* monotonic ms of the last answer */
	int64_t started;  /* monotonic ms follow_start() ran */
	int64_t warn_at;  /* never answered: say so again at this time */
	int64_t retry_at; /* no fetch before this (monotonic ms) */
	int last_err;     /* the last refusal logged, not to repeat it */
	bool broken;      /* a record did not apply: stop */
	/* installing a snapshot */
	bool snap;
	uint64_t snap_lsn, snap_off, snap_size;
	int snap_fd;
	char snap_tmp[LOGDIR_PATH_MAX + 32];
	struct replmsg_epoch *hist;
	uint32_t nhist;
	struct buf out;
};

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

static void
snap_abandon(struct follow *f)
{
	if (f->snap_fd >= 0) {
		close(f->snap_fd);
		unlink(f->snap_tmp);
	}
	f->snap_fd = -1;
	f->snap = false;
	free(f->hist);
	f->hist = NULL;
	f->nhist = 0;
}

/* ---- the link ------------------------------------------------------- */

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

static int
link_open(struct follow *f, const char *url, const struct tlsfile *tls)
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
static void
exchange_free(nng_aio *aio, const atomic_bool *sent)
{
	if (nng_aio_result(aio) == 0 || !atomic_load(sent))
		nng_msg_free(nng_aio_get_msg(aio));
}

static void
link_close(struct follow *f)
{
	/* A stopped exchange has finished: a send waiting for a leader
	 * that never answered is cancelled, its request still ours. */
	nng_aio_stop(f->faio);
	nng_aio_stop(f->aaio);
	if (atomic_load(&f->fdone))
		exchange_free(f->faio, &f->fsent);
	if (atomic_load(&f->adone))
		exchange_free(f->aaio, &f->asent);
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

static void
send_fetch(struct core *c, struct follow *f)
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

static void
send_snap(struct follow *f)
{
	struct replmsg_snap_req q = { f->snap_lsn, f->snap_off, SNAP_CHUNK };

	buf_reset(&f->out);
	replmsg_encode_snap(&f->out, &q);
	f->fop = REPLMSG_OP_SNAP;
	f->fbusy = link_send(f, f->fctx, f->faio, FETCH_TIMEOUT_MS);
}

static void
send_ack(struct core *c, struct follow *f)
{
	struct replmsg_ack_req q = { wal_durable_lsn(c->wal) };

	buf_reset(&f->out);
	replmsg_encode_ack(&f->out, &q);
	f->abusy = link_send(f, f->actx, f->aaio, FETCH_TIMEOUT_MS);
	if (f->abusy)
		f->acked = q.durable_lsn;
}

/* ---- what the leader sends ------------------------------------------ */

/* Logs a refusal once (until another one comes). */
static void
refused(struct follow *f, int rc, const char *what, int64_t mono_ms)
{
	if (rc != f->last_err && (rc == SLUICE_EAUTH || rc == SLUICE_EPERM))
		log_err("follow",
		    "the leader refuses this node's replication token "
		    "leader=%s why=\"%s\"; give a token of role replica in "
		    "--repl-token-file or $SLUICE_REPL_TOKEN",
		    f->url, what);
	else if (rc != f->last_err)
		log_warn("follow", "the leader refuses leader=%s why=\"%s\"",
		    f->url, what);
	f->last_err = rc;
	f->retry_at = mono_ms + RETRY_SLOW_MS;
}

static int
apply_one(struct core *c, const struct rec_view *v)
{
	struct qrec r;
	int rc;

	rc = wal_append_rec(c->wal, &v->hdr, v->body, 0);
	if (rc != 0)
		return rc;
	if (v->hdr.type == REC_EPOCH) {
		uint64_t nonce = v->body_len >= REC_EPOCH_BODY
		    ? le_load_u64(v->body + 16)
		    : 0;

		rc = epochs_add(&c->epochs, v->hdr.epoch, nonce, v->hdr.lsn);
		if (rc != 0)
			log_warn("follow",
			    "cannot record an epoch epoch=%" PRIu64
			    " lsn=%" PRIu64 " error=\"%s\"",
			    v->hdr.epoch, v->hdr.lsn, sluice_strerror(rc));
		return 0;
	}
	if (v->hdr.type >= REC_TYPE_LOG_MIN)
		return 0;
	rc = qrec_decode(v->hdr.type, v->body, v->body_len, &r);
	if (rc == 0)
		rc = queue_apply(c->q, v->hdr.lsn, v->hdr.time, &r);
	if (rc != 0) {
		log_err("follow",
		    "a record from the leader does not apply here; this "
		    "follower stops (rebuild it from the leader) lsn=%" PRIu64
		    " type=%s error=\"%s\"",
		    v->hdr.lsn, qrec_type_name(v->hdr.type),
		    sluice_strerror(rc));
		c->fol->broken = true;
		return SLUICE_ECORRUPT;
	}
	c->applied = true;
	return 0;
}

static void
on_records(struct core *c, struct follow *f, const struct replmsg_fetch_rep *r,
    int64_t mono_ms)
{
	size_t off = 0;

	for (uint32_t i = 0; i < r->count; i++) {
		struct rec_view v;
		int rc;

		if (rec_decode(r->records + off, r->records_len - off, &v) !=
		    REC_VALID) {
			refused(f, SLUICE_EPROTO,
			    "a damaged record in the stream", mono_ms);
			return;
		}
		off += v.size;
		if (v.hdr.lsn <= wal_last_lsn(c->wal))
			continue; /* a late duplicate */
		if (v.hdr.lsn != wal_last_lsn(c->wal) + 1)
			return; /* not ours: fetch again from our end */
		rc = apply_one(c, &v);
		if (rc == SLUICE_EEPOCH) {
			refused(f, rc, "a record from a lower epoch", mono_ms);
			return;
		}
		if (rc != 0) {
			if (!f->broken)
				refused(f, rc, sluice_strerror(rc), mono_ms);
			return;
		}
	}
	f->last_err = 0;
}

/* Copies the records after `from` to lost+found before they are cut. */
static void
save_lost(struct core *c, uint64_t from, uint64_t last)
{
	char dir[LOGDIR_PATH_MAX], path[LOGDIR_PATH_MAX + 64];
	struct logdir_cursor *cur = NULL;
	struct buf b;
	uint64_t got = 0;
	int fd, rc;
	int64_t off = 0;

	if (fs_join(dir, sizeof(dir), c->cfg->data_dir, "lost+found") != 0 ||
	    fs_mkdir_p(dir) != 0)
		return;
	snprintf(path, sizeof(path), "%s/%020" PRIu64 "-%020" PRIu64 ".records",
	    dir, from, last);
	if (logdir_cursor_open(c->cfg->data_dir, from, &cur) != 0)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		logdir_cursor_close(cur);
		return;
	}
	buf_init(&b);
	for (int i = 0; i < 1000000; i++) {
		buf_reset(&b);
		rc = logdir_cursor_read(cur, last, 1 << 20, &b, &got);
		if (rc <= 0 || fs_pwrite_all(fd, b.data, b.len, off) != 0)
			break;
		off += (int64_t)b.len;
	}
	fdatasync(fd);
	close(fd);
	fs_sync_dir(dir);
	buf_fini(&b);
	logdir_cursor_close(cur);
	log_warn("follow",
	    "records that were never the leader's saved to path=%s "
	    "from_lsn=%" PRIu64 " to_lsn=%" PRIu64,
	    path, from, last);
}

/* Removes every segment and snapshot: the node starts over empty. */
static void
wipe(struct core *c)
{
	struct logdir ld = { 0 };
	uint64_t *lsns = NULL;
	size_t n = 0;
	char path[LOGDIR_PATH_MAX + 64];

	if (logdir_list(c->cfg->data_dir, &ld) == 0)
		for (size_t i = 0; i < ld.n; i++) {
			snprintf(path, sizeof(path), "%s/%020" PRIu64 ".wal",
			    c->cfg->data_dir, ld.first[i]);
			unlink(path);
		}
	logdir_fini(&ld);
	if (snap_list(c->cfg->data_dir, &lsns, &n) == 0)
		for (size_t i = 0; i < n; i++)
			if (snap_path(path, sizeof(path), c->cfg->data_dir,
			        lsns[i]) == 0)
				unlink(path);
	free(lsns);
	epochs_set(&c->epochs, NULL, 0);
	durable_remove(c->cfg->data_dir);
	fs_sync_dir(c->cfg->data_dir);
}

/* Stops the writer and any snapshot in progress, before the data
 * directory changes under them. */
static int
close_log(struct core *c)
{
	int rc;

	bgsnap_fini(c);
	c->snap.ready = false;
	rc = wal_close(c->wal);
	c->wal = NULL;
	return rc;
}

static void
cut_to(struct core *c, struct follow *f, uint64_t to, int64_t mono_ms)
{
	uint64_t last = wal_last_lsn(c->wal), *lsns = NULL;
	char path[LOGDIR_PATH_MAX + 64];
	size_t n = 0;
	int rc;

	if (to >= last) {
		f->retry_at = mono_ms;
		return;
	}
	log_warn("follow",
	    "our log parts from the leader's; cutting it cut_to=%" PRIu64
	    " lsn=%" PRIu64,
	    to, last);
	if ((rc = close_log(c)) != 0)
		log_warn("follow", "cannot close the log error=\"%s\"",
		    sluice_strerror(rc));
	save_lost(c, to + 1, last);
	rc = logdir_truncate(c->cfg->data_dir, to);
	if (rc == 0 && snap_list(c->cfg->data_dir, &lsns, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			if (lsns[i] > to &&
			    snap_path(path, sizeof(path), c->cfg->data_dir,
			        lsns[i]) == 0)
				unlink(path);
	}
	free(lsns);
	if (rc == 0)
		rc = epochs_cut(&c->epochs, to);
	if (rc == 0)
		rc = core_reload(c);
	if (rc != 0) {
		log_warn("follow",
		    "cannot keep the log; starting over from the leader "
		    "cut_to=%" PRIu64 " error=\"%s\"",
		    to, sluice_strerror(rc));
		if (c->wal != NULL)
			close_log(c);
		wipe(c);
		if (core_reload(c) != 0)
			abort(); /* an empty directory always recovers */
	}
	f->retry_at = mono_ms;
}

static void
on_fetch_rep(struct core *c, struct follow *f, nng_msg *m, int64_t mono_ms)
{
	const void *p = nng_msg_body(m);
	size_t len = nng_msg_len(m);
	struct replmsg_fetch_rep r;
	int rc = replmsg_rep_status(p, len, REPLMSG_OP_FETCH);

	if (rc != 0) {
		struct msg_rep e;
		char text[MSG_TEXT_MAX + 64];

		if (msg_decode_rep(p, len, NULL, &e) == 0 && e.status != 0)
			snprintf(text, sizeof(text), "%s (%.*s)",
			    sluice_strerror(e.status), (int)e.err.message.len,
			    e.err.message.p);
		else
			snprintf(text, sizeof(text), "%s", sluice_strerror(rc));
		refused(f, rc, text, mono_ms);
		return;
	}
	if ((rc = replmsg_decode_fetch_rep(p, len, &r)) != 0) {
		refused(f, rc, "a reply that does not decode", mono_ms);
		return;
	}
	if (r.epoch < wal_epoch(c->wal)) {
		char text[160];

		snprintf(text, sizeof(text),
		    "its epoch %" PRIu64 " is below ours (%" PRIu64
		    "); not following it",
		    r.epoch, wal_epoch(c->wal));
		refused(f, SLUICE_EEPOCH, text, mono_ms);
		return;
	}
	if (f->contact == 0 || f->last_err != 0)
		log_info("follow",
		    "following leader=%s epoch=%" PRIu64 " leader_lsn=%" PRIu64
		    " lsn=%" PRIu64,
		    f->url, r.epoch, r.last_lsn, wal_last_lsn(c->wal));
	f->contact = mono_ms;
	f->leader_epoch = r.epoch;
	f->leader_last = r.last_lsn;
	f->leader_last_time = r.last_time;
	memcpy(c->leader_url, r.url.p, r.url.len);
	c->leader_url[r.url.len] = '\0';
	switch (r.kind) {
	case REPLMSG_FETCH_RECORDS:
		on_records(c, f, &r, mono_ms);
		break;
	case REPLMSG_FETCH_SNAPSHOT:
		log_info("follow",
		    "the leader no longer has our next records; loading its "
		    "snapshot leader=%s lsn=%" PRIu64 " snap_lsn=%" PRIu64,
		    f->url, wal_last_lsn(c->wal), r.snap_lsn);
		snap_abandon(f);
		snprintf(f->snap_tmp, sizeof(f->snap_tmp), "%s/repl.snap.tmp",
		    c->cfg->data_dir);
		f->snap_fd = open(f->snap_tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (f->snap_fd < 0) {
			refused(f, -errno,
			    "cannot create a file for the snapshot", mono_ms);
			return;
		}
		f->snap = true;
		f->snap_lsn = r.snap_lsn;
		f->snap_off = 0;
		f->snap_size = 0;
		break;
	case REPLMSG_FETCH_DIVERGED:
		cut_to(c, f, r.truncate_to, mono_ms);
		break;
	}
}

static void
install_snapshot(struct core *c, struct follow *f, int64_t mono_ms)
{
	struct epoch_ent *hist = NULL;
	char path[LOGDIR_PATH_MAX + 64];
	int rc;

	rc = fdatasync(f->snap_fd) < 0 ? -errno : 0;
	close(f->snap_fd);
	f->snap_fd = -1;
	if (rc == 0)
		rc = snap_load(f->snap_tmp, NULL, NULL, NULL, NULL);
	if (rc != 0) {
		snap_abandon(f);
		refused(
		    f, rc, "the snapshot received does not verify", mono_ms);
		return;
	}
	hist = calloc(f->nhist ? f->nhist : 1, sizeof(*hist));
	if (hist == NULL) {
		snap_abandon(f);
		f->retry_at = mono_ms + RETRY_SLOW_MS;
		return;
	}
	for (uint32_t i = 0; i < f->nhist; i++)
		hist[i] = (struct epoch_ent) { f->hist[i].epoch,
			f->hist[i].nonce, f->hist[i].start };
	if ((rc = close_log(c)) != 0)
		log_warn("follow", "cannot close the log error=\"%s\"",
		    sluice_strerror(rc));
	wipe(c);
	rc = snap_path(path, sizeof(path), c->cfg->data_dir, f->snap_lsn);
	if (rc == 0 && rename(f->snap_tmp, path) < 0)
		rc = -errno;
	if (rc == 0)
		rc = fs_sync_dir(c->cfg->data_dir);
	if (rc == 0)
		rc = epochs_set(&c->epochs, hist, f->nhist);
	free(hist);
	snap_abandon(f);
	if (rc == 0)
		rc = core_reload(c);
	if (rc != 0) {
		log_err("follow",
		    "cannot install the leader's snapshot snap_lsn=%" PRIu64
		    " error=\"%s\"",
		    f->snap_lsn, sluice_strerror(rc));
		if (c->wal != NULL)
			close_log(c);
		wipe(c);
		if (core_reload(c) != 0)
			abort();
	} else {
		log_info("follow",
		    "loaded the leader's snapshot snap_lsn=%" PRIu64,
		    f->snap_lsn);
	}
	f->retry_at = mono_ms;
}

static void
on_snap_rep(struct core *c, struct follow *f, nng_msg *m, int64_t mono_ms)
{
	const void *p = nng_msg_body(m);
	size_t len = nng_msg_len(m);
	struct replmsg_snap_rep r;
	int rc = replmsg_decode_snap_rep(p, len, &r);

	if (rc != 0 || r.snap_lsn != f->snap_lsn || r.offset != f->snap_off) {
		/* gone (a newer one replaced it) or not ours: ask again */
		snap_abandon(f);
		f->retry_at = mono_ms + RETRY_MS;
		return;
	}
	f->contact = mono_ms;
	if (r.offset == 0) {
		free(f->hist);
		f->hist = calloc(r.nhist ? r.nhist : 1, sizeof(*f->hist));
		if (f->hist == NULL) {
			snap_abandon(f);
			return;
		}
		for (uint32_t i = 0; i < r.nhist; i++)
			f->hist[i] = replmsg_hist_at(&r, i);
		f->nhist = r.nhist;
	}
	f->snap_size = r.size;
	if (r.len > 0 &&
	    fs_pwrite_all(f->snap_fd, r.data, r.len, (int64_t)r.offset) != 0) {
		snap_abandon(f);
		refused(f, -EIO, "cannot write the snapshot", mono_ms);
		return;
	}
	f->snap_off += r.len;
	if (f->snap_off == f->snap_size)
		install_snapshot(c, f, mono_ms);
	else if (r.len == 0) {
		snap_abandon(f);
		f->retry_at = mono_ms + RETRY_MS;
	}
}

/* ---- the interface ---------------------------------------------------- */

int
follow_start(struct core *c, const char *url)
{
	struct follow *f = calloc(1, sizeof(*f));
	int rc;

	if (f == NULL)
		return -ENOMEM;
	f->snap_fd = -1;
	f->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f->efd < 0) {
		rc = -errno;
		free(f);
		return rc;
	}
	buf_init(&f->out);
	rc = link_open(f, url, c->cfg->tls);
	if (rc != 0) {
		close(f->efd);
		free(f);
		return rc;
	}
	c->fol = f;
	c->follower = true;
	f->started = clock_mono_ms();
	f->warn_at = f->started + LOST_MS;
	log_info("follow", "following the leader leader=%s", url);
	return 0;
}

void
follow_stop(struct core *c)
{
	struct follow *f = c->fol;

	if (f == NULL)
		return;
	link_close(f);
	snap_abandon(f);
	close(f->efd);
	buf_fini(&f->out);
	free(f);
	c->fol = NULL;
	c->leader_url[0] = '\0';
}

int
follow_fd(const struct core *c)
{
	return c->fol != NULL ? c->fol->efd : -1;
}

void
follow_turn(struct core *c, int64_t mono_ms)
{
	struct follow *f = c->fol;
	uint64_t v;

	if (f == NULL)
		return;
	if (read(f->efd, &v, sizeof(v)) < 0) {
		/* nothing signalled */
	}
	if (atomic_exchange(&f->fdone, false)) {
		int rv = nng_aio_result(f->faio);

		f->fbusy = false;
		if (rv != 0) {
			exchange_free(f->faio, &f->fsent);
			if (f->contact != 0 &&
			    mono_ms - f->contact >= LOST_MS &&
			    f->last_err != -ETIMEDOUT) {
				log_warn("follow",
				    "no answer from the leader leader=%s "
				    "error=\"%s\"",
				    f->url, nng_strerror(rv));
				f->last_err = -ETIMEDOUT;
			}
			f->retry_at = mono_ms + RETRY_MS;
		} else {
			nng_msg *m = nng_aio_get_msg(f->faio);

			if (f->fop == REPLMSG_OP_SNAP && f->snap)
				on_snap_rep(c, f, m, mono_ms);
			else if (f->fop == REPLMSG_OP_FETCH && !f->snap)
				on_fetch_rep(c, f, m, mono_ms);
			nng_msg_free(m);
		}
	}
	if (atomic_exchange(&f->adone, false)) {
		int rv = nng_aio_result(f->aaio);

		f->abusy = false;
		exchange_free(f->aaio, &f->asent);
		if (rv != 0)
			f->acked = 0; /* send it again */
	}
	if (c->fol != f || f->broken || c->wal == NULL)
		return;
	/* A leader never reached (a wrong URL, a leader not up): said
	 * after LOST_MS, then at most every UNREACHED_LOG_MS. */
	if (f->contact == 0 && mono_ms >= f->warn_at) {
		log_warn("follow",
		    "cannot reach the leader leader=%s waited_ms=%" PRId64
		    "; still trying%s",
		    f->url, mono_ms - f->started,
		    tlsfile_url(f->url)
		        ? " (over TLS: is its certificate signed by --tls-ca, "
		          "for the URL's host, and not expired?)"
		        : "");
		f->warn_at = mono_ms + UNREACHED_LOG_MS;
	}
	if (!f->fbusy && mono_ms >= f->retry_at) {
		if (f->snap)
			send_snap(f);
		else
			send_fetch(c, f);
	}
	if (!f->abusy && f->contact != 0 && wal_durable_lsn(c->wal) > f->acked)
		send_ack(c, f);
}

int64_t
follow_next_deadline(const struct core *c)
{
	const struct follow *f = c->fol;
	int64_t dl;

	if (f == NULL || f->broken)
		return INT64_MAX;
	dl = f->fbusy ? INT64_MAX : f->retry_at;
	if (f->contact == 0 && f->warn_at < dl)
		dl = f->warn_at;
	return dl;
}

const char *
follow_leader_url(const struct core *c)
{
	return c->leader_url;
}

bool
follow_connected(const struct core *c)
{
	const struct follow *f = c->fol;

	return f != NULL && f->contact != 0 && !f->broken &&
	    clock_mono_ms() - f->contact < LOST_MS + FETCH_WAIT_MS;
}

void
follow_lag(const struct core *c, uint64_t *records, uint64_t *ms)
{
	const struct follow *f = c->fol;
	uint64_t last = c->wal != NULL ? wal_last_lsn(c->wal) : 0;

	*records = 0;
	*ms = 0;
	if (f == NULL || f->leader_last <= last)
		return;
	*records = f->leader_last - last;
	if ((int64_t)f->leader_last_time > c->now)
		return;
	*ms = (uint64_t)(c->now - (int64_t)f->leader_last_time);
}

int
follow_lead(struct core *c, uint64_t min_epoch, uint64_t *epoch)
{
	uint64_t e = wal_epoch(c->wal);
	int rc;

	if (c->fol != NULL && c->fol->broken)
		return SLUICE_ECORRUPT;
	if (c->fol != NULL && c->fol->leader_epoch > e)
		e = c->fol->leader_epoch;
	/* Not c->fenced_by: a follower's word, unverified (an election's
	 * min_epoch carries the epochs the cluster saw). */
	e++;
	if (e < min_epoch)
		e = min_epoch;
	follow_stop(c);
	c->follower = false;
	c->fenced = false;
	c->fenced_by = 0;
	rc = core_new_epoch(c, e);
	if (rc != 0)
		return rc;
	core_release_sessions(c);
	log_info("follow",
	    "promoted: this node leads epoch=%" PRIu64 " lsn=%" PRIu64, e,
	    wal_last_lsn(c->wal));
	*epoch = e;
	return 0;
}

void
follow_promote(struct core *c, struct net_ctx *ctx)
{
	struct msg_rep rep = { .op = MSG_OP_PROMOTE };
	uint64_t epoch = 0;
	int rc;

	if (!c->follower) {
		core_reply_err(c, ctx, MSG_OP_PROMOTE, SLUICE_ESTATE,
		    c->fenced ? "promote: this node already leads, but a "
		                "newer epoch exists elsewhere; make it follow"
		              : "promote: this node is already the leader");
		return;
	}
	rc = follow_lead(c, 0, &epoch);
	if (rc == SLUICE_ECORRUPT) {
		core_reply_err(c, ctx, MSG_OP_PROMOTE, rc,
		    "promote: this follower stopped on a record it could not "
		    "apply");
		return;
	}
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_PROMOTE, rc,
		    "promote: cannot start a new epoch: %s",
		    sluice_strerror(rc));
		return;
	}
	rep.epoch = epoch;
	buf_reset(&c->out);
	msg_encode_rep(&c->out, &rep);
	core_reply_local(c, ctx);
}

int
follow_switch(struct core *c, const char *url)
{
	int rc;

	if (!c->follower) {
		log_warn("follow",
		    "stepping down: following another leader "
		    "leader=%s",
		    url);
		core_fail_pending(c); /* waiting takes: the loop ends them */
		lead_demote(c);
	}
	follow_stop(c);
	rc = follow_start(c, url);
	c->follower = true;
	if (rc == 0) {
		c->fenced = false;
		c->fenced_by = 0;
	}
	return rc;
}

const char *
follow_url(const struct core *c)
{
	return c->fol != NULL ? c->fol->url : "";
}

void
follow_repoint(struct core *c, struct net_ctx *ctx, const char *url, size_t len)
{
	struct msg_rep rep = { .op = MSG_OP_FOLLOW };
	char u[MSG_URL_MAX + 1];
	int rc;

	if (len == 0 || len > MSG_URL_MAX) {
		core_reply_err(c, ctx, MSG_OP_FOLLOW, SLUICE_EINVAL,
		    "follow: a leader's replication URL, please");
		return;
	}
	memcpy(u, url, len);
	u[len] = '\0';
	if (c->repl != NULL && strcmp(u, c->cfg->repl_listen) == 0) {
		core_reply_err(c, ctx, MSG_OP_FOLLOW, SLUICE_EINVAL,
		    "follow: %s is this node's own replication URL", u);
		return;
	}
	if (!c->follower && !c->fenced) {
		core_reply_err(c, ctx, MSG_OP_FOLLOW, SLUICE_EINVAL,
		    "follow: this node leads (epoch %" PRIu64 "); only a "
		    "follower, or a leader that learned of a newer epoch, "
		    "can follow: restart it with --follow URL",
		    wal_epoch(c->wal));
		return;
	}
	rc = follow_switch(c, u);
	if (rc != 0) {
		core_reply_err(c, ctx, MSG_OP_FOLLOW, SLUICE_EINVAL,
		    "follow: cannot dial %s: %s", u, net_strerror(rc));
		return;
	}
	buf_reset(&c->out);
	msg_encode_rep(&c->out, &rep);
	core_reply(c, ctx);
}
