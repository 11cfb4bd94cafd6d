/* repl - see repl.h.
 *
 * Memory: the recent records are kept encoded, exactly as in segments,
 * in one buffer (`ring`) with the offset of each record. When it fills,
 * the older half is dropped at once, so each byte is copied at most twice.
 * A follower that asks for an LSN older than the buffer reads the
 * segments through a cursor of its own (logdir_cursor), which stays open
 * and positioned between fetches; one that asks for an LSN older than the
 * segments is told to load the newest snapshot first.
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

#include "log/logdir.h"
#include "log/rec.h"
#include "log/snap.h"
#include "proto/replmsg.h"
#include "server/repl/catchup.h"
#include "server/core/core.h"
#include "server/face/nng.h"
#include "server/face/stream.h"
#include "server/repl/lead.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/fsutil.h"
#include "util/log.h"

enum {
	RING_CAP = 32 << 20,     /* bytes of recent records kept */
	RING_RECS_MAX = 1 << 20, /* records kept */
	FETCH_WAIT_MAX = 10000,  /* ms a fetch may park */
	PEERS_MAX = 64,
	/* How far ahead of this node's epoch a follower may say its own
	 * is: one promotion after another while this node still leads. */
	REPL_EPOCH_AHEAD_MAX = 1000,
	/* The largest request a follower sends (a fetch: its URL and its
	 * token, a few fixed fields): anything longer closes its connection
	 * before a byte of it is kept, authenticated or not. */
	REPL_REQ_MAX = 4096,
	/* Connections to the replication port at once; of those not ready
	 * (under --auth: no replica token accepted yet), the oldest past
	 * REPL_UNAUTH_MAX is closed for a new one. */
	REPL_PIPES_MAX = 4 * PEERS_MAX,
	REPL_UNAUTH_MAX = PEERS_MAX,
	REPL_CHECK_MS = 1000,
};

struct ring {
	uint8_t *data;
	size_t len, cap;
	uint64_t first; /* LSN of the record at off[0] */
	uint32_t *off;
	size_t n, ncap;
};

struct peer {
	struct peer *next;
	uint32_t session;
	char url[MSG_URL_MAX + 1];
	uint64_t acked;      /* durable on the follower */
	uint64_t ack_ms;     /* from the append of the record acked last to
	                      * the ack saying it is durable there */
	uint64_t ack_ms_max; /* the most that took since it came */
	uint64_t joined;     /* our last LSN when it came: catching up to
	                      * there is not lag */
	uint64_t want;       /* the LSN it asked for last */
	/* a parked fetch */
	struct net_ctx *ctx;
	uint32_t max_bytes;
	int64_t deadline;
	struct catchup *cu;  /* reads its segments; NULL until needed */
	uint64_t cu_none_at; /* durable LSN when a read found nothing */
};

/* One connection to the replication port, known from its open: where it
 * comes from, and with --auth the token it showed (checked at its first
 * fetch; its acks and snapshot reads need that fetch to have passed). */
struct link {
	struct link *next;
	uint32_t session;
	bool authed;
	bool closing;      /* closed by the bounds; its close follows */
	int64_t opened_ms; /* monotonic */
	int refused;       /* the last refusal logged, not to repeat it */
	uint8_t hash[TOKENS_HASH_LEN];
	char token[TOKENS_NAME_MAX + 1]; /* the token's name once authed */
	char addr[NET_PEER_MAX];
};

struct lead {
	struct net *net;
	struct face_nng *nng; /* the URLs face_stream does not serve */
	/* tcp://, tls+tcp://, ipc://, ws:// (face_stream.c: the bounds of
	 * every connection); NULL: nng's socket serves the URL
	 * (abstract://, wss://) */
	struct face_stream *fs;
	struct face_sp_config spc;
	struct link *links;
	struct peer *peers;
	size_t npeers;
	struct ring ring;
	struct catchup_io *io;
	struct buf recs;
	struct buf out;
	/* fetches refused for an epoch no leader can have begun: logged
	 * once a second at most, with the count since the last line */
	uint64_t bad_epochs;
	int64_t bad_epoch_logged; /* monotonic ms */
	int64_t check_ms;         /* the bounds' next check */
	uint64_t closed_handshake, evicted_unauth;
};

/* ---- the ring of recent records ------------------------------------ */

static void
ring_clear(struct ring *r, uint64_t next)
{
	r->len = 0;
	r->n = 0;
	r->first = next;
}

/* Drops the older records until at most half the buffer is used. */
static void
ring_halve(struct ring *r)
{
	size_t k = 0, base;

	while (k < r->n &&
	    (r->len - r->off[k] > r->cap / 2 || r->n - k > RING_RECS_MAX / 2))
		k++;
	if (k == r->n) {
		ring_clear(r, r->first + r->n);
		return;
	}
	base = r->off[k];
	memmove(r->data, r->data + base, r->len - base);
	r->len -= base;
	for (size_t i = k; i < r->n; i++)
		r->off[i - k] = r->off[i] - (uint32_t)base;
	r->n -= k;
	r->first += k;
}

static void
ring_add(struct ring *r, const struct rec_hdr *h, const void *body, size_t len)
{
	size_t size = rec_size(len);

	if (r->n == 0 || h->lsn != r->first + r->n)
		ring_clear(r, h->lsn);
	if (size > r->cap / 2) {
		ring_clear(r, h->lsn + 1);
		return;
	}
	if (r->len + size > r->cap || r->n == RING_RECS_MAX)
		ring_halve(r);
	if (r->n == r->ncap) {
		size_t ncap = r->ncap ? r->ncap * 2 : 4096;
		uint32_t *off = realloc(r->off, ncap * sizeof(*off));

		if (off == NULL) {
			ring_clear(r, h->lsn + 1);
			return;
		}
		r->off = off;
		r->ncap = ncap;
	}
	if (r->n == 0)
		r->first = h->lsn;
	r->off[r->n++] = (uint32_t)r->len;
	rec_write(r->data + r->len, h, body, len);
	r->len += size;
}

static size_t
ring_size_at(const struct ring *r, size_t i)
{
	return (i + 1 < r->n ? r->off[i + 1] : r->len) - r->off[i];
}

/* Appends records from `from` up to `upto` (at most `max` bytes, at least
 * one record) to `out`. False when `from` is not in the ring. */
static bool
ring_get(const struct ring *r, uint64_t from, uint64_t upto, size_t max,
    struct buf *out, uint32_t *count)
{
	size_t i, j, bytes = 0;

	if (r->n == 0 || from < r->first || from >= r->first + r->n)
		return false;
	i = from - r->first;
	for (j = i; j < r->n && r->first + j <= upto; j++) {
		size_t s = ring_size_at(r, j);

		if (j > i && bytes + s > max)
			break;
		bytes += s;
	}
	buf_put(out, r->data + r->off[i], bytes);
	*count = (uint32_t)(j - i);
	return true;
}

/* The time of the record `lsn`, when the ring has it. */
static bool
ring_time(const struct ring *r, uint64_t lsn, int64_t *time)
{
	if (r->n == 0 || lsn < r->first || lsn >= r->first + r->n)
		return false;
	*time = (int64_t)le_load_u64(r->data + r->off[lsn - r->first] + 24);
	return true;
}

/* ---- connections and their tokens ------------------------------------ */

static struct link *
link_find(struct lead *rp, uint32_t session)
{
	for (struct link *l = rp->links; l != NULL; l = l->next)
		if (l->session == session)
			return l;
	return NULL;
}

static void
link_open(struct lead *rp, uint32_t session, const char *addr)
{
	struct link *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return; /* its fetches are refused: no place for its token */
	l->session = session;
	l->opened_ms = clock_mono_ms();
	snprintf(l->addr, sizeof(l->addr), "%s",
	    addr != NULL && addr[0] != '\0' ? addr : "-");
	l->next = rp->links;
	rp->links = l;
}

static void
link_close(struct lead *rp, uint32_t session)
{
	for (struct link **pl = &rp->links; *pl != NULL; pl = &(*pl)->next) {
		struct link *l = *pl;

		if (l->session == session) {
			*pl = l->next;
			free(l);
			return;
		}
	}
}

/* Whether the connection may replicate: always without --auth; with it,
 * once a fetch showed a replica (or admin) token for every tube. */
static bool
link_authed(struct core *c, uint32_t session)
{
	const struct link *l;

	if (!c->auth_on)
		return true;
	l = link_find(c->repl, session);
	return l != NULL && l->authed;
}

static bool
role_replicates(const struct tokens_entry *t)
{
	return (t->role == TOKENS_REPLICA || t->role == TOKENS_ADMIN) &&
	    tokens_all_tubes(t);
}

/* Checks the token of a connection's first fetch. Returns 0, or the
 * error to refuse it with (logged: the peer, the token's name if known);
 * a refusal says no more than the client port's. */
/* Logs a refusal of link `l` (NULL: its open was not recorded) once,
 * until another one comes: a refused follower asks again and again. */
static void
link_refused(struct link *l, int rc, const char *why,
    const struct tokens_entry *t, struct msg_str url)
{
	if (l != NULL && l->refused == rc)
		return;
	if (l != NULL)
		l->refused = rc;
	log_warn("repl",
	    "refused a follower: %s token=%s role=%s peer=%s follower=%.*s",
	    why, t != NULL ? t->name : "-",
	    t != NULL ? tokens_role_name(t->role) : "-",
	    l != NULL ? l->addr : "-", url.len > 0 ? (int)url.len : 4,
	    url.len > 0 ? url.p : "none");
}

/* Checks the token of a connection's fetch. Returns 0, the error to
 * refuse it with (logged: the peer, the token's name if known; a refusal
 * says no more than the client port's), or LINK_UNKNOWN for a token that
 * is not in the file: that one goes through the client port's limit on
 * failed attempts (ops_auth_unknown), which logs it. */
enum { LINK_UNKNOWN = -1 };

static int
link_check(struct core *c, uint32_t session, struct msg_str token,
    struct msg_str url, const char **text)
{
	struct link *l = link_find(c->repl, session);
	const struct tokens_entry *t = NULL;
	uint8_t hash[TOKENS_HASH_LEN];

	if (token.len > 0) {
		tokens_sha256(token.p, token.len, hash);
		t = tokens_find_hash(&c->auth, hash);
	}
	if (token.len == 0) {
		link_refused(l, SLUICE_EAUTH, "it sent no token", NULL, url);
		*text = "unauthenticated: send a replication token";
		return SLUICE_EAUTH;
	}
	if (t == NULL || l == NULL) {
		*text = "unauthenticated: not a known token";
		return LINK_UNKNOWN; /* answered after a pause: ops_auth */
	}
	if (!role_replicates(t)) {
		link_refused(l, SLUICE_EPERM,
		    "its token may not replicate (role replica or admin, "
		    "tubes *)",
		    t, url);
		*text = "not allowed";
		return SLUICE_EPERM;
	}
	l->authed = true;
	l->refused = 0;
	memcpy(l->hash, hash, sizeof(hash));
	snprintf(l->token, sizeof(l->token), "%s", t->name);
	log_info("repl", "follower authenticated token=%s peer=%s", t->name,
	    l->addr);
	return 0;
}

/* ---- followers ------------------------------------------------------ */

static struct peer *
peer_get(struct core *c, uint32_t session, bool create)
{
	struct lead *rp = c->repl;
	struct peer *p;

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

static void
peer_drop(struct lead *rp, uint32_t session)
{
	for (struct peer **pp = &rp->peers; *pp != NULL; pp = &(*pp)->next) {
		struct peer *p = *pp;

		if (p->session != session)
			continue;
		*pp = p->next;
		if (p->ctx != NULL)
			net_drop(rp->net, p->ctx);
		catchup_free(rp->io, p->cu);
		log_info("repl", "follower left follower=%s acked_lsn=%" PRIu64,
		    p->url[0] ? p->url : "none", p->acked);
		free(p);
		rp->npeers--;
		return;
	}
}

/* ---- replies -------------------------------------------------------- */

static void
send_out(struct lead *rp, struct net_ctx *ctx)
{
	nng_msg *m;

	if (buf_failed(&rp->out) || nng_msg_alloc(&m, 0) != 0) {
		net_drop(rp->net, ctx);
		return;
	}
	if (nng_msg_append(m, rp->out.data, rp->out.len) != 0) {
		nng_msg_free(m);
		net_drop(rp->net, ctx);
		return;
	}
	net_reply(rp->net, ctx, m);
}

static void
reply_err(
    struct core *c, struct net_ctx *ctx, uint8_t op, int rc, const char *text)
{
	struct lead *rp = c->repl;

	buf_reset(&rp->out);
	msg_encode_err(
	    &rp->out, op, rc, text, c->follower ? c->leader_url : NULL);
	send_out(rp, ctx);
}

static void
fetch_rep_init(struct core *c, struct replmsg_fetch_rep *r, uint8_t kind)
{
	uint64_t last = wal_last_lsn(c->wal);
	int64_t t = 0;

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->epoch = wal_epoch(c->wal);
	r->last_lsn = last;
	if (ring_time(&c->repl->ring, last, &t))
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
reply_snapshot(struct core *c, struct net_ctx *ctx)
{
	struct replmsg_fetch_rep r;
	uint64_t lsn = newest_snapshot(c);

	if (lsn == 0) {
		reply_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_ECORRUPT,
		    "the records asked for are gone and there is no snapshot");
		return;
	}
	fetch_rep_init(c, &r, REPLMSG_FETCH_SNAPSHOT);
	r.snap_lsn = lsn;
	buf_reset(&c->repl->out);
	replmsg_encode_fetch_rep(&c->repl->out, &r);
	send_out(c->repl, ctx);
}

/* Answers p's parked fetch with `count` records in `recs`. */
static void
send_records(
    struct core *c, struct peer *p, const struct buf *recs, uint32_t count)
{
	struct lead *rp = c->repl;
	struct replmsg_fetch_rep r;

	fetch_rep_init(c, &r, REPLMSG_FETCH_RECORDS);
	r.count = count;
	r.records = recs->data;
	r.records_len = recs->len;
	buf_reset(&rp->out);
	if (replmsg_encode_fetch_rep(&rp->out, &r) != 0)
		reply_err(c, p->ctx, REPLMSG_OP_FETCH, SLUICE_ENOMEM, NULL);
	else
		send_out(rp, p->ctx);
	p->ctx = NULL;
}

/* The segments could not give p what it asked for. */
static void
segments_failed(struct core *c, struct peer *p, int rc)
{
	if (rc == -ENOENT) {
		reply_snapshot(c, p->ctx);
	} else {
		log_err("repl",
		    "cannot read the log for a follower follower=%s "
		    "lsn=%" PRIu64 " error=\"%s\"",
		    p->url[0] ? p->url : "none", p->want, sluice_strerror(rc));
		reply_err(c, p->ctx, REPLMSG_OP_FETCH,
		    rc > 0 ? rc : SLUICE_ELOG,
		    "the leader cannot read its log there");
	}
	p->ctx = NULL;
}

static size_t
budget(const struct peer *p)
{
	return p->max_bytes == 0 || p->max_bytes > REPLMSG_BATCH_MAX
	    ? REPLMSG_BATCH_MAX
	    : p->max_bytes;
}

/* Answers p's fetch with records when there are some: from memory, or
 * by starting a read of the segments (answered when it completes). False
 * while there is nothing to send yet. */
static bool
try_send(struct core *c, struct peer *p)
{
	struct lead *rp = c->repl;
	uint64_t last = wal_last_lsn(c->wal);
	uint64_t durable = wal_durable_lsn(c->wal);
	uint32_t count = 0;
	int rc;

	if (p->want > last)
		return false;
	buf_reset(&rp->recs);
	if (ring_get(&rp->ring, p->want, last, budget(p), &rp->recs, &count)) {
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
static void
catchup_done(struct catchup *r, int rc, void *arg)
{
	struct core *c = arg;
	struct peer *p = r->owner;
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
peer_acked(struct core *c, struct peer *p, uint64_t lsn)
{
	int64_t t;

	if (lsn > p->acked && lsn > p->joined &&
	    ring_time(&c->repl->ring, lsn, &t)) {
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
on_fetch(struct core *c, struct net_ctx *ctx, uint32_t session,
    const struct replmsg_fetch_req *q)
{
	struct lead *rp = c->repl;
	struct replmsg_fetch_rep r;
	struct peer *p;
	uint64_t cut;

	/* First: a fetch that is not allowed must not fence this node
	 * either (a higher epoch, below). */
	if (!link_authed(c, session)) {
		const char *text = NULL;
		int rc = link_check(c, session, q->token, q->url, &text);
		const struct link *l = link_find(rp, session);

		if (rc == LINK_UNKNOWN) {
			ops_auth_unknown(c, ctx, session, REPLMSG_OP_FETCH,
			    l != NULL ? l->addr : "-", true);
			return;
		}
		if (rc != 0) {
			reply_err(c, ctx, REPLMSG_OP_FETCH, rc, text);
			return;
		}
	}
	if (c->follower) {
		reply_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_ENOTLEADER,
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
		reply_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_EINVAL,
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
		reply_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_EEPOCH,
		    "this node's epoch is older than the follower's");
		return;
	}
	p = peer_get(c, session, true);
	if (p == NULL) {
		reply_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_ELIMIT,
		    "too many followers");
		return;
	}
	if (p->ctx != NULL) /* a newer fetch replaces a parked one */
		net_drop(rp->net, p->ctx);
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
		fetch_rep_init(c, &r, REPLMSG_FETCH_DIVERGED);
		r.truncate_to = cut;
		buf_reset(&rp->out);
		replmsg_encode_fetch_rep(&rp->out, &r);
		send_out(rp, ctx);
		p->ctx = NULL;
		p->acked = 0;
		return;
	}
	try_send(c, p);
}

static void
on_ack(struct core *c, struct net_ctx *ctx, uint32_t session,
    const struct replmsg_ack_req *q)
{
	struct peer *p;

	if (!link_authed(c, session)) {
		reply_err(c, ctx, REPLMSG_OP_ACK, SLUICE_EAUTH,
		    "unauthenticated: fetch with a replication token first");
		return;
	}
	p = peer_get(c, session, true);
	if (p != NULL && q->durable_lsn <= wal_last_lsn(c->wal))
		peer_acked(c, p, q->durable_lsn);
	buf_reset(&c->repl->out);
	replmsg_encode_ack_rep(&c->repl->out, wal_epoch(c->wal));
	send_out(c->repl, ctx);
}

static void
on_snap(struct core *c, struct net_ctx *ctx, uint32_t session,
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

	if (!link_authed(c, session)) {
		reply_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_EAUTH,
		    "unauthenticated: fetch with a replication token first");
		return;
	}
	if (snap_path(path, sizeof(path), c->cfg->data_dir, q->snap_lsn) != 0 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		reply_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_ENOTFOUND,
		    "that snapshot is gone; fetch again");
		return;
	}
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < q->offset) {
		close(fd);
		reply_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_EINVAL,
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
		reply_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_ELOG,
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
		reply_err(c, ctx, REPLMSG_OP_SNAP, SLUICE_ENOMEM, NULL);
		return;
	}
	send_out(rp, ctx);
}

static void
on_request(struct core *c, struct net_ctx *ctx, uint32_t session, nng_msg *msg)
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
		reply_err(c, ctx, op, rc,
		    rc == SLUICE_EUNKNOWNOP
		        ? "this is the replication port; clients connect to "
		          "--listen"
		        : "bad replication request");
}

/* ---- the interface ---------------------------------------------------- */

static bool
repl_session_authed(void *arg, uint32_t session)
{
	return link_authed(arg, session);
}

/* The port: read by face_stream.c where it can (every bound of a client
 * connection, with REPL_PIPES_MAX connections, REPL_UNAUTH_MAX of them
 * not authenticated, no idle timeout: a follower may be quiet), else by
 * nng's socket with REPL_PIPES_MAX pipes and check_links. Either way no
 * message over REPL_REQ_MAX is taken. */
static int
lead_listen(struct core *c, struct lead *rp, const char *url)
{
	const struct srv_config *cfg = c->cfg;
	struct conns_limits lim = {
		.max_conns = REPL_PIPES_MAX,
		.max_unready = REPL_UNAUTH_MAX,
		.handshake_ms = cfg->handshake_ms,
		.frame_ms = cfg->frame_ms,
		.idle_ms = 0,
		.stall_ms = cfg->stall_ms,
		.out_bytes = (size_t)cfg->max_queued_bytes,
		.out_msgs = cfg->max_queued_replies,
	};
	int rc;

	rc = net_new(&rp->net);
	if (rc != 0)
		return rc;
	if (!face_stream_serves(url)) {
		rc = face_nng_open(
		    &rp->nng, rp->net, url, REPL_REQ_MAX, cfg->tls);
		if (rc == 0)
			face_nng_set_max_pipes(rp->nng, REPL_PIPES_MAX);
		else
			net_free(rp->net);
		return rc;
	}
	rp->spc = (struct face_sp_config) { .net = rp->net,
		.max_msg = REPL_REQ_MAX,
		.auth_on = c->auth_on,
		.session_authed = repl_session_authed,
		.arg = c };
	rc = face_stream_open(&rp->fs, url, cfg->tls, &rp->spc, &lim);
	if (rc != 0) {
		net_free(rp->net);
		rp->net = NULL;
	}
	return rc;
}

int
lead_open(struct core *c, const char *url)
{
	struct lead *rp = calloc(1, sizeof(*rp));
	int rc;

	if (rp == NULL)
		return -ENOMEM;
	rc = catchup_io_open(&rp->io, c->cfg->data_dir);
	if (rc != 0) {
		free(rp);
		return rc;
	}
	rp->ring.cap = RING_CAP;
	rp->ring.data = malloc(RING_CAP);
	if (rp->ring.data == NULL) {
		catchup_io_close(rp->io);
		free(rp);
		return -ENOMEM;
	}
	ring_clear(&rp->ring, wal_last_lsn(c->wal) + 1);
	buf_init(&rp->recs);
	buf_init(&rp->out);
	rc = lead_listen(c, rp, url);
	if (rc != 0) {
		catchup_io_close(rp->io);
		free(rp->ring.data);
		free(rp);
		return rc;
	}
	c->repl = rp;
	return 0;
}

void
lead_close(struct core *c)
{
	struct lead *rp = c->repl;

	if (rp == NULL)
		return;
	face_stream_stop(rp->fs);
	while (rp->peers != NULL)
		peer_drop(rp, rp->peers->session);
	while (rp->links != NULL) {
		ops_auth_drop(c, rp->links->session, true);
		link_close(rp, rp->links->session);
	}
	face_nng_stop(rp->nng);
	net_free(rp->net);
	face_nng_free(rp->nng);   /* after net_free: its events may be */
	face_stream_free(rp->fs); /* theirs */
	catchup_io_close(rp->io);
	free(rp->ring.data);
	free(rp->ring.off);
	buf_fini(&rp->recs);
	buf_fini(&rp->out);
	free(rp);
	c->repl = NULL;
}

int
lead_fd(const struct core *c)
{
	return c->repl != NULL ? net_fd(c->repl->net) : -1;
}

int
lead_io_fd(const struct core *c)
{
	return c->repl != NULL ? catchup_io_fd(c->repl->io) : -1;
}

void
lead_handle(struct core *c)
{
	struct net_ev *ev, *next;

	if (c->repl == NULL)
		return;
	catchup_io_reap(c->repl->io, catchup_done, c);
	for (ev = net_drain(c->repl->net); ev != NULL; ev = next) {
		next = ev->next;
		switch (ev->kind) {
		case NET_REQUEST: {
			struct net_req q = net_ev_take(ev);

			on_request(c, q.ctx, q.session, q.msg);
			nng_msg_free(q.msg);
			continue;
		}
		case NET_SESSION_OPEN:
			link_open(c->repl, ev->session, ev->peer);
			break;
		case NET_SESSION_CLOSE:
			ops_auth_drop(c, ev->session, true);
			peer_drop(c->repl, ev->session);
			link_close(c->repl, ev->session);
			break;
		case NET_WAKE: /* the HTTP face's; not posted here */
			break;
		}
		net_ev_done(ev);
	}
}

void
lead_note(struct core *c, const struct rec_hdr *h, const void *body, size_t len)
{
	if (c->repl != NULL)
		ring_add(&c->repl->ring, h, body, len);
}

/* nng's socket (abstract://, wss://; face_stream.c bounds the others),
 * under
 * --auth, once a second: a connection that has not shown a
 * replication token within --handshake-timeout is closed, and past
 * REPL_UNAUTH_MAX such connections the oldest are (the list is newest
 * first). */
static void
check_links(struct core *c, int64_t now)
{
	struct lead *rp = c->repl;
	uint32_t handshake_ms = c->cfg->handshake_ms;
	unsigned unauth = 0;

	if (!c->auth_on || now < rp->check_ms || rp->fs != NULL)
		return;
	rp->check_ms = now + REPL_CHECK_MS;
	for (struct link *l = rp->links; l != NULL; l = l->next) {
		if (l->authed || l->closing)
			continue;
		if (handshake_ms != 0 &&
		    now - l->opened_ms >= (int64_t)handshake_ms) {
			log_debug("repl",
			    "closed a connection: no replication token within "
			    "the handshake timeout peer=%s",
			    l->addr);
			l->closing = true;
			if (face_nng_close_pipe(rp->nng, l->session))
				rp->closed_handshake++;
			continue;
		}
		if (++unauth > REPL_UNAUTH_MAX) {
			l->closing = true;
			if (face_nng_close_pipe(rp->nng, l->session))
				rp->evicted_unauth++;
		}
	}
}

void
lead_conn_stats(const struct core *c, struct lead_conn_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (c->repl == NULL)
		return;
	if (c->repl->fs != NULL) {
		struct conns_stats st;

		memset(&st, 0, sizeof(st));
		face_stream_stats(c->repl->fs, &st);
		out->refused_full = st.refused_full;
		out->closed_handshake = st.closed_handshake;
		out->evicted_unauth = st.evicted_unready;
		out->closed_other = st.closed_frame + st.closed_idle +
		    st.closed_stalled + st.closed_refused;
		return;
	}
	out->refused_full = face_nng_pipes_refused(c->repl->nng);
	out->closed_handshake = c->repl->closed_handshake;
	out->evicted_unauth = c->repl->evicted_unauth;
}

void
lead_serve(struct core *c, int64_t mono_ms)
{
	struct replmsg_fetch_rep r;

	if (c->repl == NULL)
		return;
	face_stream_tick(c->repl->fs, mono_ms);
	check_links(c, mono_ms);
	for (struct peer *p = c->repl->peers; p != NULL; p = p->next) {
		if (p->ctx == NULL || try_send(c, p))
			continue;
		if (mono_ms >= p->deadline) {
			fetch_rep_init(c, &r, REPLMSG_FETCH_RECORDS);
			buf_reset(&c->repl->out);
			replmsg_encode_fetch_rep(&c->repl->out, &r);
			send_out(c->repl, p->ctx);
			p->ctx = NULL;
		}
	}
}

int64_t
lead_next_deadline(const struct core *c)
{
	int64_t dl = INT64_MAX;

	if (c->repl == NULL)
		return dl;
	for (const struct peer *p = c->repl->peers; p != NULL; p = p->next)
		if (p->ctx != NULL && p->deadline < dl)
			dl = p->deadline;
	return dl;
}

uint64_t
lead_replicated_lsn(const struct core *c, unsigned k)
{
	uint64_t top[PEERS_MAX];
	size_t n = 0;

	if (c->repl == NULL || k == 0 || c->repl->npeers < k)
		return 0;
	for (const struct peer *p = c->repl->peers; p != NULL; p = p->next)
		if (core_counts(c, p->url))
			top[n++] = p->acked;
	if (n < k)
		return 0;
	/* the k-th highest: a partial selection, n is small */
	for (size_t i = 0; i < k; i++)
		for (size_t j = i + 1; j < n; j++)
			if (top[j] > top[i]) {
				uint64_t t = top[i];

				top[i] = top[j];
				top[j] = t;
			}
	return top[k - 1];
}

uint64_t
lead_needed_lsn(const struct core *c)
{
	uint64_t need = UINT64_MAX;

	if (c->repl == NULL)
		return need;
	for (const struct peer *p = c->repl->peers; p != NULL; p = p->next)
		if (p->acked + 1 < need)
			need = p->acked + 1;
	return need;
}

size_t
lead_peers(const struct core *c, struct lead_peer_info *out, size_t max)
{
	uint64_t last = c->wal != NULL ? wal_last_lsn(c->wal) : 0;
	size_t n = 0;

	if (c->repl == NULL)
		return 0;
	for (const struct peer *p = c->repl->peers; p != NULL && n < max;
	     p = p->next) {
		struct lead_peer_info *i = &out[n++];
		int64_t t;

		i->url = p->url;
		i->acked_lsn = p->acked;
		i->lag_records = last > p->acked ? last - p->acked : 0;
		i->lag_ms = 0;
		i->ack_ms = p->ack_ms;
		i->ack_ms_max = p->ack_ms_max;
		if (i->lag_records > 0 &&
		    ring_time(&c->repl->ring, p->acked + 1, &t) && c->now > t)
			i->lag_ms = (uint64_t)(c->now - t);
	}
	return n;
}

void
lead_demote(struct core *c)
{
	if (c->repl == NULL)
		return;
	for (struct peer *p = c->repl->peers; p != NULL; p = p->next) {
		if (p->ctx != NULL) {
			reply_err(c, p->ctx, REPLMSG_OP_FETCH,
			    SLUICE_ENOTLEADER, "this node stopped leading");
			p->ctx = NULL;
		}
		p->acked = 0;
	}
	ring_clear(&c->repl->ring, wal_last_lsn(c->wal) + 1);
}

/* A parked fetch of a follower whose token went is answered at once:
 * its follower learns why now, not when its request times out. */
static void
refuse_parked(struct core *c, uint32_t session)
{
	struct peer *p = peer_get(c, session, false);

	if (p == NULL || p->ctx == NULL)
		return;
	reply_err(c, p->ctx, REPLMSG_OP_FETCH, SLUICE_EAUTH,
	    "unauthenticated: the token is no longer valid");
	p->ctx = NULL;
}

void
lead_answer_unknown(struct core *c, struct net_ctx *ctx, enum tokens_end how)
{
	if (c->repl == NULL)
		return; /* closed: its contexts went with its socket */
	if (how == TOKENS_END_DROP)
		net_drop(c->repl->net, ctx);
	else if (how == TOKENS_END_CLOSE)
		net_close_conn(c->repl->net, ctx);
	else
		reply_err(c, ctx, REPLMSG_OP_FETCH, SLUICE_EAUTH,
		    "unauthenticated: not a known token");
}

void
lead_auth_reload(struct core *c)
{
	if (c->repl == NULL)
		return;
	for (struct link *l = c->repl->links; l != NULL; l = l->next) {
		const struct tokens_entry *t;

		if (!l->authed)
			continue;
		t = tokens_find_hash(&c->auth, l->hash);
		if (t != NULL && role_replicates(t))
			continue;
		/* Its next fetch shows the token again, and is refused; its
		 * follower state goes (stats, --sync-replicas). */
		log_warn("repl",
		    "a follower's token was removed or may no longer "
		    "replicate token=%s peer=%s",
		    l->token, l->addr);
		l->authed = false;
		refuse_parked(c, l->session);
		peer_drop(c->repl, l->session);
	}
}
