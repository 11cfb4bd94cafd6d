/* lead_peer - a leader's followers: what each one acked and asked for,
 * and its requests on the replication port (a fetch, an ack, a chunk of
 * a snapshot) with their answers.
 *
 * A fetch is answered with whole records from memory when they are
 * recent (lead_recent.c), from the segments when older, through a reader
 * of its own (catchup.c) that stays positioned between fetches, or with
 * "load the newest snapshot first" when those segments are gone. With
 * nothing new, the fetch parks until a record comes or its wait is over
 * (lead_serve).
 *
 * Agreement: a fetch names the epoch of the follower's last record, that
 * epoch's nonce and the LSN where it began. When this node's history has
 * the same epoch (same nonce, same start), the logs agree up to the end
 * of that epoch here; a follower past that end wrote records this node
 * never had (a leader that crashed before they were durable, then began
 * a new epoch): it cuts back to that end. When the epoch is not in the
 * history (or differs), the follower cuts back before it began, and asks
 * again: each round removes at least one epoch, so it ends.
 *
 * Fencing: a follower whose last record is of an epoch newer than this
 * node's follows a leader promoted since; this node then takes no more
 * writes (c->fenced). The claim is a peer's word: one no promotion could
 * have made (epoch_claim_ok) is refused and fences nothing, and no epoch
 * this node begins later is taken from it. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/rec.h"
#include "log/snap.h"
#include "proto/replmsg.h"
#include "server/core/core.h"
#include "server/core/gate.h"
#include "server/repl/catchup.h"
#include "server/repl/lead.h"
#include "server/repl/lead_int.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/fsutil.h"
#include "util/log.h"

struct lead_peer *
lead_peer_get(struct core *c, uint32_t session, bool create)
{
	struct lead *rp = c->repl;
	struct lead_peer *p;

	for (p = rp->peers; p != NULL; p = p->next)
		if (p->session == session)
			return p;
	if (!create || rp->npeers >= PEERS_MAX)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->session = session;
	p->joined = wal_last_lsn(c->wal);
	p->next = rp->peers;
	rp->peers = p;
	rp->npeers++;
	return p;
}

void
lead_peer_drop(struct lead *rp, uint32_t session)
{
	for (struct lead_peer **pp = &rp->peers; *pp != NULL;
	     pp = &(*pp)->next) {
		struct lead_peer *p = *pp;

		if (p->session != session)
			continue;
		*pp = p->next;
		if (p->ctx != NULL)
			face_ctx_drop(p->ctx);
		catchup_free(rp->io, p->cu);
		log_info("repl", "follower left follower=%s acked_lsn=%" PRIu64,
		    p->url[0] ? p->url : "none", p->acked);
		free(p);
		rp->npeers--;
		return;
	}
}

/* ---- replies -------------------------------------------------------- */

void
lead_send(struct lead *rp, struct face_ctx *ctx)
{
	nng_msg *m;

	if (buf_failed(&rp->out) || nng_msg_alloc(&m, 0) != 0) {
		face_ctx_drop(ctx);
		return;
	}
	if (nng_msg_append(m, rp->out.data, rp->out.len) != 0) {
		nng_msg_free(m);
		face_ctx_drop(ctx);
		return;
	}
	face_ctx_reply(ctx, m);
}

void
lead_send_err(
    struct core *c, struct face_ctx *ctx, uint8_t op, int rc, const char *text)
{
	struct lead *rp = c->repl;

	buf_reset(&rp->out);
	msg_encode_err(
	    &rp->out, op, rc, text, c->follower ? c->leader_url : NULL);
	lead_send(rp, ctx);
}

void
lead_fetch_rep_init(struct core *c, struct replmsg_fetch_rep *r, uint8_t kind)
{
	uint64_t last = wal_last_lsn(c->wal);
	int64_t t = 0;

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->epoch = wal_epoch(c->wal);
	r->last_lsn = last;
	if (lead_recent_time(&c->repl->recent, last, &t))
		r->last_time = (uint64_t)t;
	else
		r->last_time = (uint64_t)c->now;
	r->now = c->now;
	r->url = msg_cstr(c->cfg->listen);
}

/* The newest snapshot's LSN, or 0. */
static uint64_t
newest_snapshot(struct core *c)
{
	uint64_t *lsns = NULL, lsn = 0;
	size_t n = 0;

	if (snap_list(c->cfg->data_dir, &lsns, &n) == 0 && n > 0)
		lsn = lsns[n - 1];
	free(lsns);
	return lsn;
}

static void
reply_snapshot(struct core *c, struct face_ctx *ctx)
{
	struct replmsg_fetch_rep r;
	uint64_t lsn = newest_snapshot(c);

	if (lsn == 0) {
		lead_send_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_ECORRUPT,
		    "the records asked for are gone and there is no snapshot");
		return;
	}
	lead_fetch_rep_init(c, &r, REPLMSG_FETCH_SNAPSHOT);
	r.snap_lsn = lsn;
	buf_reset(&c->repl->out);
	replmsg_encode_fetch_rep(&c->repl->out, &r);
	lead_send(c->repl, ctx);
}

/* Answers p's parked fetch with `count` records in `recs`. */
static void
send_records(
    struct core *c, struct lead_peer *p, const struct buf *recs, uint32_t count)
{
	struct lead *rp = c->repl;
	struct replmsg_fetch_rep r;

	lead_fetch_rep_init(c, &r, REPLMSG_FETCH_RECORDS);
	r.count = count;
	r.records = recs->data;
	r.records_len = recs->len;
	buf_reset(&rp->out);
	if (replmsg_encode_fetch_rep(&rp->out, &r) != 0)
		lead_send_err(c, p->ctx, REPLMSG_OP_FETCH, SLUICE_ENOMEM, NULL);
	else
		lead_send(rp, p->ctx);
	p->ctx = NULL;
}

/* The segments could not give p what it asked for. */
static void
segments_failed(struct core *c, struct lead_peer *p, int rc)
{
	if (rc == -ENOENT) {
		reply_snapshot(c, p->ctx);
	} else {
		log_err("repl",
		    "cannot read the log for a follower follower=%s "
		    "lsn=%" PRIu64 " error=\"%s\"",
		    p->url[0] ? p->url : "none", p->want, sluice_strerror(rc));
		lead_send_err(c, p->ctx, REPLMSG_OP_FETCH,
		    rc > 0 ? rc : SLUICE_ELOG,
		    "the leader cannot read its log there");
	}
	p->ctx = NULL;
}

static size_t
budget(const struct lead_peer *p)
{
	return p->max_bytes == 0 || p->max_bytes > REPLMSG_BATCH_MAX
	    ? REPLMSG_BATCH_MAX
	    : p->max_bytes;
}

/* Answers p's fetch with records when there are some: from memory, or
 * by starting a read of the segments (answered when it completes). False
 * while there is nothing to send yet. */
bool
lead_peer_send(struct core *c, struct lead_peer *p)
{
	struct lead *rp = c->repl;
	uint64_t last = wal_last_lsn(c->wal);
	uint64_t durable = wal_durable_lsn(c->wal);
	uint32_t count = 0;
	int rc;

	if (p->want > last)
		return false;
	buf_reset(&rp->recs);
	if (lead_recent_get(
	        &rp->recent, p->want, last, budget(p), &rp->recs, &count)) {
		send_records(c, p, &rp->recs, count);
		return true;
	}
	if (p->want > durable)
		return false; /* not in memory, not yet in a file */
	if (p->cu != NULL && p->cu->busy)
		return false; /* its read answers it */
	if (p->cu_none_at == durable)
		return false; /* read already; wait for more */
	if (p->cu == NULL && (p->cu = catchup_new(p)) == NULL)
		return false;
	rc = catchup_start(rp->io, p->cu, p->want, durable, budget(p));
	if (rc != 0) {
		segments_failed(c, p, rc);
		return true;
	}
	return false;
}

/* A segment read for a follower ended. */
void
lead_peer_read_done(struct catchup *r, int rc, void *arg)
{
	struct core *c = arg;
	struct lead_peer *p = r->owner;
	struct rec_view v;

	if (p->ctx == NULL)
		return; /* the fetch is gone; the next one starts over */
	if (rc == CATCHUP_NONE) {
		p->cu_none_at = r->upto;
		return;
	}
	if (rc != CATCHUP_MORE) {
		segments_failed(c, p, rc);
		return;
	}
	/* The read began at the LSN asked for then; a newer fetch may ask
	 * for another. */
	if (rec_decode(r->out.data, r->out.len, &v) != REC_VALID ||
	    v.hdr.lsn != p->want)
		return;
	send_records(c, p, &r->out, r->count);
}

/* Where the follower must cut its log, or UINT64_MAX when it agrees. */
static uint64_t
agreement(struct core *c, const struct replmsg_fetch_req *q)
{
	const struct epochs *e = &c->epochs;
	uint64_t have = q->from_lsn - 1, last = wal_last_lsn(c->wal);
	uint64_t cut = q->epoch_start > 0 ? q->epoch_start - 1 : 0;

	if (have == 0)
		return UINT64_MAX;
	for (size_t i = 0; i < e->n; i++) {
		const struct epoch_ent *x = &e->v[i];

		if (x->epoch < q->last_epoch)
			continue;
		if (x->epoch == q->last_epoch && x->nonce == q->last_nonce &&
		    x->start == q->epoch_start) {
			uint64_t end = epochs_end(e, i, last);

			return have <= end ? UINT64_MAX : end;
		}
		/* Epoch q->last_epoch is not ours: cut before it began,
		 * and before our next epoch began. */
		return x->start - 1 < cut ? x->start - 1 : cut;
	}
	/* Newer than every epoch here: the caller fenced us. */
	return UINT64_MAX;
}

/* The follower holds everything up to `lsn` durably. */
static void
peer_acked(struct core *c, struct lead_peer *p, uint64_t lsn)
{
	int64_t t;

	if (lsn > p->acked && lsn > p->joined &&
	    lead_recent_time(&c->repl->recent, lsn, &t)) {
		int64_t now = clock_now_ms();

		p->ack_ms = now > t ? (uint64_t)(now - t) : 0;
		if (p->ack_ms > p->ack_ms_max)
			p->ack_ms_max = p->ack_ms;
	}
	p->acked = lsn;
}

/* Whether a fetch's claim of an epoch newer than this node's can be
 * true. Such an epoch began on a node promoted since (each promotion, by
 * hand or by election, begins the highest epoch it knew of plus one), so
 * it is at most REPL_EPOCH_AHEAD_MAX ahead; and the follower's last
 * record is of it, so the epoch began at or before that record. A claim
 * that fails is refused and fences nothing: the fence lives in memory
 * (c->fenced_by), and no epoch a node begins is taken from it
 * (follow_lead). */
static bool
epoch_claim_ok(const struct core *c, const struct replmsg_fetch_req *q)
{
	uint64_t ours = wal_epoch(c->wal);

	return q->last_epoch - ours <= REPL_EPOCH_AHEAD_MAX &&
	    q->from_lsn > 1 && q->epoch_start >= 1 &&
	    q->epoch_start < q->from_lsn;
}

static void
on_fetch(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct replmsg_fetch_req *q)
{
	struct lead *rp = c->repl;
	struct replmsg_fetch_rep r;
	struct lead_peer *p;
	uint64_t cut;

	/* First: a fetch that is not allowed must not fence this node
	 * either (a higher epoch, below). */
	if (!lead_link_authed(c, session)) {
		const char *text = NULL;
		int rc = lead_link_token(c, session, q->token, q->url, &text);
		const struct lead_link *l = lead_link_find(rp, session);

		if (rc == LEAD_LINK_UNKNOWN) {
			gate_unknown(c, ctx, session, l != NULL ? l->addr : "-",
			    "a follower's token", lead_answer_unknown);
			return;
		}
		if (rc != 0) {
			lead_send_err(c, ctx, REPLMSG_OP_FETCH, rc, text);
			return;
		}
	}
	if (c->follower) {
		lead_send_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_ENOTLEADER,
		    "this node is a follower; follow its leader");
		return;
	}
	if (q->last_epoch > wal_epoch(c->wal) && !epoch_claim_ok(c, q)) {
		int64_t mono = clock_mono_ms();

		rp->bad_epochs++;
		if (mono - rp->bad_epoch_logged >= 1000) {
			log_warn("repl",
			    "a fetch claims an epoch no leader can have begun; "
			    "refused, this node keeps leading follower=%.*s "
			    "follower_epoch=%" PRIu64 " epoch_start=%" PRIu64
			    " from_lsn=%" PRIu64 " epoch=%" PRIu64
			    " refused=%" PRIu64,
			    q->url.len > 0 ? (int)q->url.len : 4,
			    q->url.len > 0 ? q->url.p : "none", q->last_epoch,
			    q->epoch_start, q->from_lsn, wal_epoch(c->wal),
			    rp->bad_epochs);
			rp->bad_epochs = 0;
			rp->bad_epoch_logged = mono;
		}
		lead_send_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_EINVAL,
		    "fetch: an epoch beyond any a leader could have begun "
		    "since this node's");
		return;
	}
	if (q->last_epoch > wal_epoch(c->wal)) {
		if (!c->fenced)
			log_warn("repl",
			    "a follower is at a higher epoch: another node "
			    "leads; refusing writes from now on "
			    "follower=%.*s follower_epoch=%" PRIu64
			    " epoch=%" PRIu64,
			    q->url.len > 0 ? (int)q->url.len : 4,
			    q->url.len > 0 ? q->url.p : "none", q->last_epoch,
			    wal_epoch(c->wal));
		c->fenced = true;
		if (q->last_epoch > c->fenced_by)
			c->fenced_by = q->last_epoch;
		lead_send_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_EEPOCH,
		    "this node's epoch is older than the follower's");
		return;
	}
	p = lead_peer_get(c, session, true);
	if (p == NULL) {
		lead_send_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_ELIMIT,
		    "too many followers");
		return;
	}
	if (p->ctx != NULL) /* a newer fetch replaces a parked one */
		face_ctx_drop(p->ctx);
	if (p->url[0] == '\0' && q->url.len > 0)
		log_info("repl", "follower joined follower=%.*s lsn=%" PRIu64,
		    (int)q->url.len, q->url.p, q->from_lsn - 1);
	memcpy(p->url, q->url.p, q->url.len);
	p->url[q->url.len] = '\0';
	peer_acked(c, p,
	    q->durable_lsn < q->from_lsn ? q->durable_lsn : q->from_lsn - 1);
	p->want = q->from_lsn;
	p->ctx = ctx;
	p->max_bytes = q->max_bytes;
	p->deadline = clock_mono_ms() +
	    (q->wait_ms > FETCH_WAIT_MAX ? FETCH_WAIT_MAX : q->wait_ms);

	cut = agreement(c, q);
	if (cut != UINT64_MAX) {
		log_info("repl",
		    "follower has records this node never had; it cuts them "
		    "follower=%s cut_to=%" PRIu64,
		    p->url[0] ? p->url : "none", cut);
		lead_fetch_rep_init(c, &r, REPLMSG_FETCH_DIVERGED);
		r.truncate_to = cut;
		buf_reset(&rp->out);
		replmsg_encode_fetch_rep(&rp->out, &r);
		lead_send(rp, ctx);
		p->ctx = NULL;
		p->acked = 0;
		return;
	}
	lead_peer_send(c, p);
}

static void
on_ack(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct replmsg_ack_req *q)
{
	struct lead_peer *p;

	if (!lead_link_authed(c, session)) {
		lead_send_err(c, ctx, REPLMSG_OP_ACK, SLUICE_EAUTH,
		    "unauthenticated: fetch with a replication token first");
		return;
	}
	p = lead_peer_get(c, session, true);
	if (p != NULL && q->durable_lsn <= wal_last_lsn(c->wal))
		peer_acked(c, p, q->durable_lsn);
	buf_reset(&c->repl->out);
	replmsg_encode_ack_rep(&c->repl->out, wal_epoch(c->wal));
	lead_send(c->repl, ctx);
}

static void
on_snap(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct replmsg_snap_req *q)
{
	struct lead *rp = c->repl;
	struct replmsg_snap_rep r = { 0 };
	struct replmsg_epoch hist[REPLMSG_HISTORY_MAX];
	char path[4096];
	struct stat st;
	uint8_t *data = NULL;
	size_t n;
	int fd, rc;

	if (!lead_link_authed(c, session)) {
		lead_send_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_EAUTH,
		    "unauthenticated: fetch with a replication token first");
		return;
	}
	if (snap_path(path, sizeof(path), c->cfg->data_dir, q->snap_lsn) != 0 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		lead_send_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_ENOTFOUND,
		    "that snapshot is gone; fetch again");
		return;
	}
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < q->offset) {
		close(fd);
		lead_send_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_EINVAL,
		    "offset past the snapshot's end");
		return;
	}
	n = (uint64_t)st.st_size - q->offset;
	if (n > q->max_bytes)
		n = q->max_bytes;
	if (n > REPLMSG_CHUNK_MAX)
		n = REPLMSG_CHUNK_MAX;
	data = malloc(n ? n : 1);
	rc = data == NULL ? -ENOMEM
	                  : fs_pread_all(fd, data, n, (int64_t)q->offset);
	close(fd);
	if (rc != 0) {
		free(data);
		lead_send_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_ELOG,
		    "cannot read the snapshot");
		return;
	}
	r.snap_lsn = q->snap_lsn;
	r.size = (uint64_t)st.st_size;
	r.offset = q->offset;
	r.data = data;
	r.len = n;
	if (q->offset == 0) {
		for (size_t i = 0;
		     i < c->epochs.n && r.nhist < REPLMSG_HISTORY_MAX; i++) {
			const struct epoch_ent *x = &c->epochs.v[i];

			if (x->start > q->snap_lsn)
				break;
			hist[r.nhist++] = (struct replmsg_epoch) { x->epoch,
				x->nonce, x->start };
		}
		r.hist = hist;
	}
	buf_reset(&rp->out);
	rc = replmsg_encode_snap_rep(&rp->out, &r);
	free(data);
	if (rc != 0) {
		lead_send_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_ENOMEM, NULL);
		return;
	}
	lead_send(rp, ctx);
}

void
lead_peer_request(
    struct core *c, struct face_ctx *ctx, uint32_t session, nng_msg *msg)
{
	const void *p = nng_msg_body(msg);
	size_t len = nng_msg_len(msg);
	uint8_t op = replmsg_req_op(p, len);
	struct replmsg_fetch_req f;
	struct replmsg_ack_req a;
	struct replmsg_snap_req s;
	int rc;

	switch (op) {
	case REPLMSG_OP_FETCH:
		if ((rc = replmsg_decode_fetch(p, len, &f)) == 0)
			on_fetch(c, ctx, session, &f);
		break;
	case REPLMSG_OP_ACK:
		if ((rc = replmsg_decode_ack(p, len, &a)) == 0)
			on_ack(c, ctx, session, &a);
		break;
	case REPLMSG_OP_SNAP:
		if ((rc = replmsg_decode_snap(p, len, &s)) == 0)
			on_snap(c, ctx, session, &s);
		break;
	default:
		op = msg_req_op(p, len);
		rc = SLUICE_EUNKNOWNOP;
		break;
	}
	if (rc != 0)
		lead_send_err(c, ctx, op, rc,
		    rc == SLUICE_EUNKNOWNOP
		        ? "this is the replication port; clients connect to "
		          "--listen"
		        : "bad replication request");
}
