/* core - the bottom of the server: what every part of it does to the
 * queue, the log and the replies, on the core thread. The loop (srv.c),
 * the operations (ops/), replication (repl/) and failover (failover/)
 * call down to it; it calls only the libraries and the faces below it
 * (face_ctx_reply). What it needs of the layers above it is handed to it:
 * the leader's side of replication registers a hook (core_repl_hook)
 * the core tells of every record appended and asks what followers hold;
 * failover gives it the leader lease's deadline (c->lease_until) and the
 * followers that count (c->sync).
 *
 * Commit: decide happened above; core_commit appends the record to the
 * log and applies it with the one queue_apply every path shares.
 *
 * Replies: an answer is sent once the log (and, with --sync-replicas,
 * enough followers) holds what it depends on; until then it waits in the
 * pending FIFO with that LSN. The FIFO is in LSN order because appends
 * are, except for takes that got tasks and reads: those wait only for
 * what the tasks they hand out or show depend on (core_reply_how's
 * take_lsn, read_lsn: their tubes' last placing records), not for their
 * own record nor for others' writes, so that they are answered while a
 * commit is in flight (docs/protocol.md). A take waits for its epoch's
 * record as well (epoch_lsn): its lease names the epoch, which a crash
 * that lost that record would begin again, handing out the same token.
 *
 * A take whose client is gone takes nothing: when a reply that hands out
 * tasks is about to be sent and its connection closed (the face says so),
 * or its session ends while the reply waits, each take is undone
 * (UNTAKE, in the same commit window) instead of leaving the task taken
 * until its ttr. A reply handed to a live connection whose peer dies
 * later is an ordinary lost lease. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "log/recover.h"
#include "queue/qrecover.h"
#include "server/core/core.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

int
core_commit(
    struct core *c, const struct qrec *rec, unsigned flags, uint64_t *lsn)
{
	struct qrec take;
	int rc;

	if (rec->type == QREC_TAKE) {
		/* The lease names the epoch: the reply leaves before the
		 * record is durable (core_reply_how.take), and a crash may lose
		 * the record, and with it its LSN, which the next epoch
		 * reuses (qrec_lease). */
		take = *rec;
		take.type = QREC_TAKE_LEASE;
		take.u.take.lease =
		    qrec_lease(wal_epoch(c->wal), wal_last_lsn(c->wal) + 1);
		rec = &take;
	}
	buf_reset(&c->body);
	rc = qrec_encode(rec, &c->body);
	if (rc != 0)
		return rc;
	rc = wal_append(
	    c->wal, rec->type, c->now, c->body.data, c->body.len, flags, lsn);
	if (rc != 0)
		return rc;
	/* A session lease ends with its session, which a crash ends too: a
	 * lost take of one changes nothing but an uncounted attempt. A
	 * detached lease outlives both, so its take is waited for. */
	if (rec->type != QREC_TAKE_LEASE || rec->u.take.detached)
		c->hard_lsn = *lsn;
	if (c->repl_hook != NULL) {
		struct rec_hdr h = { .type = rec->type,
			.lsn = *lsn,
			.epoch = wal_epoch(c->wal),
			.time = c->now };

		c->repl_hook->note(c, &h, c->body.data, c->body.len);
	}
	rc = queue_apply(c->q, *lsn, c->now, rec);
	if (rc != 0) {
		/* decide just accepted this record against the same state:
		 * the log now holds a record the state refuses. Stop
		 * acknowledging anything rather than diverge from the log. */
		log_err("srv",
		    "a decided record was not applied; refusing further "
		    "writes lsn=%" PRIu64 " type=%s error=\"%s\"",
		    *lsn, qrec_type_name(rec->type), sluice_strerror(rc));
		abort();
	}
	c->applied = true;
	/* The next append is checked against this state's needs, even in
	 * the same turn (a batch of puts): the counts as the apply left
	 * them, caught up with c->now. */
	{
		uint64_t k[4];
		struct reserve_counts n;

		queue_live_counts(c->q, k);
		n = (struct reserve_counts) { k[0], k[1], k[2], k[3] };
		wal_set_reserved(c->wal, reserve_floor(&c->rsv, &n),
		    reserve_margin(&c->rsv, c->rsv_pool));
	}
	return 0;
}

/* Undoes the takes of a reply that cannot be delivered; returns how many
 * were (a task whose lease already ended is left as it is). */
static uint32_t
undo_takes(struct core *c, const struct core_take *takes, uint32_t n)
{
	uint32_t undone = 0;
	struct qrec r;
	uint64_t lsn;

	for (uint32_t i = 0; i < n; i++) {
		if (queue_decide_untake(
		        c->q, c->now, takes[i].id, takes[i].lease, &r) != 0)
			continue;
		if (core_commit(c, &r, 0, &lsn) != 0) {
			log_warn("srv",
			    "cannot log the undoing of a take whose reply "
			    "was not delivered; the task returns at its ttr "
			    "id=%" PRIu64,
			    takes[i].id);
			continue;
		}
		undone++;
	}
	return undone;
}

static void
pending_push(struct core *c, struct face_ctx *ctx, nng_msg *msg, uint64_t lsn,
    const struct core_reply_how *how)
{
	uint32_t n = how->ntakes;
	struct pending *p = malloc(sizeof(*p) + n * sizeof(p->takes[0]));

	if (p == NULL) {
		nng_msg_free(msg);
		face_ctx_drop(ctx);
		return;
	}
	p->next = NULL;
	p->ctx = ctx;
	p->msg = msg;
	p->lsn = lsn;
	p->at = clock_mono_ms();
	p->local = how->local;
	p->undone = false;
	p->loose = how->take || how->read;
	c->pend_loose += p->loose;
	c->pend_n++;
	p->session = how->session;
	p->lease_id = how->lease_id;
	p->lease = how->lease;
	p->ntakes = n;
	if (n > 0)
		memcpy(p->takes, how->takes, n * sizeof(p->takes[0]));
	if (c->pend_tail != NULL)
		c->pend_tail->next = p;
	else
		c->pend_head = p;
	c->pend_tail = p;
}

/* The answer that hands out or touches these leases leaves now: when its
 * face keeps beanstalkd's rule (restart_leases), their ttr counts from
 * here, not from the decision, which may have waited for the log's
 * commit or for followers. */
static void
restart_leases(struct core *c, struct face_ctx *ctx,
    const struct core_take *takes, uint32_t n, uint64_t id, uint64_t lease)
{
	int64_t now;

	if ((n == 0 && id == 0) || !ctx->face->restart_leases)
		return;
	now = clock_now_ms();
	for (uint32_t i = 0; i < n; i++)
		queue_lease_restart(c->q, takes[i].id, takes[i].lease, now);
	if (id != 0)
		queue_lease_restart(c->q, id, lease, now);
}

static nng_msg *
msg_from_out(struct core *c)
{
	nng_msg *m;

	if (buf_failed(&c->out) || nng_msg_alloc(&m, 0) != 0)
		return NULL;
	if (nng_msg_append(m, c->out.data, c->out.len) != 0) {
		nng_msg_free(m);
		return NULL;
	}
	return m;
}

void
core_reply_as(
    struct core *c, struct face_ctx *ctx, const struct core_reply_how *how)
{
	uint64_t lsn = how->read           ? how->read_lsn
	    : !how->take                   ? wal_last_lsn(c->wal)
	    : how->take_lsn > c->epoch_lsn ? how->take_lsn
	                                   : c->epoch_lsn;
	nng_msg *m = msg_from_out(c);

	if (m == NULL) {
		log_warn("srv", "out of memory for a reply; dropping it");
		undo_takes(c, how->takes, how->ntakes);
		face_ctx_drop(ctx);
		return;
	}
	if (how->ntakes > 0 && !face_ctx_alive(ctx)) {
		undo_takes(c, how->takes, how->ntakes);
		nng_msg_free(m);
		face_ctx_drop(ctx);
		return;
	}
	if (how->now ||
	    (lsn <= (how->local ? wal_durable_lsn(c->wal)
	                        : core_commit_lsn(c)) &&
	        (c->pend_head == NULL || how->take || how->read))) {
		restart_leases(
		    c, ctx, how->takes, how->ntakes, how->lease_id, how->lease);
		face_ctx_reply(ctx, m);
	} else {
		pending_push(c, ctx, m, lsn, how);
	}
}

bool
core_op_writes(uint8_t op)
{
	switch (op) {
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
	case MSG_OP_STATS:
	case MSG_OP_LIST:
	case MSG_OP_ERRORS:
	case MSG_OP_STATS_HOURLY:
	case MSG_OP_HISTORY:
	case MSG_OP_GROUPS:
	case MSG_OP_SNAPSHOT:
	case MSG_OP_PROMOTE:
	case MSG_OP_FOLLOW:
	case MSG_OP_TUBE_SHOW:
	case MSG_OP_CLUSTER:
	case MSG_OP_AUTH:
	case MSG_OP_SCHED_LIST:
	case MSG_OP_BATCH_SHOW:
	case MSG_OP_WAIT:
	case MSG_OP_MAP:
		return false;
	default:
		return true;
	}
}

void
core_reply(struct core *c, struct face_ctx *ctx)
{
	uint8_t op = msg_req_op(c->out.data, c->out.len); /* a reply's too */
	struct core_reply_how how = { .local = !core_op_writes(op),
		.read = !core_op_writes(op) };

	core_reply_as(c, ctx, &how);
}

void
core_reply_local(struct core *c, struct face_ctx *ctx)
{
	core_reply_as(c, ctx, &(struct core_reply_how) { .local = true });
}

/* Encodes the error reply into c->out. */
static void
encode_err(struct core *c, uint8_t op, int rc, const char *fmt, va_list ap)
{
	char text[MSG_TEXT_MAX];

	if (fmt != NULL)
		vsnprintf(text, sizeof(text), fmt, ap);
	else
		snprintf(text, sizeof(text), "%s", sluice_strerror(rc));
	if (rc <= 0 || rc > 65535)
		rc = SLUICE_EINVAL;
	buf_reset(&c->out);
	msg_encode_err(&c->out, op, rc, text, NULL);
}

void
core_reply_err(struct core *c, struct face_ctx *ctx, uint8_t op, int rc,
    const char *fmt, ...)
{
	struct core_reply_how how = { .local = !core_op_writes(op) };
	va_list ap;

	va_start(ap, fmt);
	encode_err(c, op, rc, fmt, ap);
	va_end(ap);
	core_reply_as(c, ctx, &how);
}

void
core_reply_err_as(struct core *c, struct face_ctx *ctx,
    const struct core_reply_how *how, uint8_t op, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	encode_err(c, op, rc, fmt, ap);
	va_end(ap);
	core_reply_as(c, ctx, how);
}

uint64_t
core_commit_lsn(const struct core *c)
{
	uint64_t durable = wal_durable_lsn(c->wal), repl;

	if (c->cfg->sync_replicas == 0 || c->follower)
		return durable;
	repl = c->repl_hook != NULL
	    ? c->repl_hook->replicated_lsn(c, c->cfg->sync_replicas)
	    : 0;
	return repl < durable ? repl : durable;
}

/* Turns the pending reply `p` into the error `rc`, `text`, and sends it. */
static void
pending_fail(struct core *c, struct pending *p, int rc, const char *text)
{
	uint8_t op = msg_req_op(nng_msg_body(p->msg), nng_msg_len(p->msg));

	nng_msg_free(p->msg);
	buf_reset(&c->out);
	msg_encode_err(&c->out, op, rc, text, NULL);
	p->msg = msg_from_out(c);
	if (p->msg != NULL)
		face_ctx_reply(p->ctx, p->msg);
	else
		face_ctx_drop(p->ctx);
}

/* Sends the takes' and reads' replies further down the FIFO that the log
 * (and enough followers) now covers: they wait only for what their tasks
 * depend on, which may precede the writes queued before them (a take of a
 * task whose put was in the commit that just completed, behind puts that
 * gathered meanwhile), and leave without waiting for those. */
static void
flush_loose(struct core *c, uint64_t durable, uint64_t commit)
{
	struct pending **pp = &c->pend_head, *p, *prev = NULL;

	while (c->pend_loose > 0 && (p = *pp) != NULL) {
		if (!p->loose || p->lsn > (p->local ? durable : commit)) {
			prev = p;
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		if (c->pend_tail == p)
			c->pend_tail = prev;
		c->pend_loose--;
		c->pend_n--;
		if (p->undone || (p->ntakes > 0 && !face_ctx_alive(p->ctx))) {
			undo_takes(c, p->takes, p->ntakes);
			nng_msg_free(p->msg);
			face_ctx_drop(p->ctx);
		} else {
			restart_leases(c, p->ctx, p->takes, p->ntakes,
			    p->lease_id, p->lease);
			face_ctx_reply(p->ctx, p->msg);
		}
		free(p);
	}
}

/* Sends every pending reply the log (and, with --sync-replicas, enough
 * followers) now covers. After the writer failed, nothing more becomes
 * durable: the waiting replies become errors. A reply that waited longer
 * than --sync-timeout for followers becomes an error too: its change is
 * durable here, on fewer followers than asked. */
void
core_flush_replies(struct core *c)
{
	uint64_t durable, commit;
	bool failed = wal_poisoned(c->wal);
	int64_t too_old = clock_mono_ms() - (int64_t)c->cfg->sync_timeout_ms;
	struct pending *p;
	char text[200];

	core_check_lease(c); /* no reply of a write once the lease ran out */
	durable = wal_durable_lsn(c->wal);
	commit = core_commit_lsn(c);

	while ((p = c->pend_head) != NULL &&
	    (p->lsn <= (p->local ? durable : commit) || failed ||
	        (p->lsn <= durable && p->at <= too_old))) {
		c->pend_head = p->next;
		if (c->pend_head == NULL)
			c->pend_tail = NULL;
		c->pend_loose -= p->loose;
		c->pend_n--;
		if (p->undone ||
		    (p->ntakes > 0 && !failed && !face_ctx_alive(p->ctx))) {
			undo_takes(c, p->takes, p->ntakes);
			nng_msg_free(p->msg);
			face_ctx_drop(p->ctx);
		} else if (p->lsn <= (p->local ? durable : commit)) {
			restart_leases(c, p->ctx, p->takes, p->ntakes,
			    p->lease_id, p->lease);
			face_ctx_reply(p->ctx, p->msg);
		} else if (p->lsn <= durable) {
			snprintf(text, sizeof(text),
			    "written on the leader, but fewer than %u "
			    "followers held it within %u ms; it may or may "
			    "not survive a failover",
			    c->cfg->sync_replicas, c->cfg->sync_timeout_ms);
			pending_fail(c, p, SLUICE_EREPLICA, text);
		} else {
			pending_fail(c, p, SLUICE_ELOG,
			    "the log failed before this change was durable; "
			    "it may or may not survive a restart");
		}
		free(p);
	}
	if (!failed)
		flush_loose(c, durable, commit);
}

bool
core_counts(const struct core *c, const char *url)
{
	if (!c->sync.on)
		return true;
	for (size_t i = 0; i < c->sync.n; i++)
		if (strcmp(c->sync.urls[i], url) == 0)
			return true;
	return false;
}

void
core_check_lease(struct core *c)
{
	if (c->lease_until == NULL || c->follower || c->fenced)
		return;
	if (clock_mono_ms() < c->lease_until(c))
		return;
	c->fenced = true;
	c->fenced_by = 0;
	log_warn("srv",
	    "the leader lease runs out: no writes from now on epoch=%" PRIu64
	    " lsn=%" PRIu64,
	    wal_epoch(c->wal), wal_last_lsn(c->wal));
	core_fail_pending(c);
}

void
core_fail_pending(struct core *c)
{
	struct pending *p;

	while ((p = c->pend_head) != NULL) {
		c->pend_head = p->next;
		if (c->pend_head == NULL)
			c->pend_tail = NULL;
		pending_fail(c, p, SLUICE_EREPLICA,
		    "this node stopped leading before the change was "
		    "confirmed; it may or may not survive");
		free(p);
	}
	c->pend_loose = 0;
	c->pend_n = 0;
}

void
core_session_open(struct core *c, uint32_t session, const char *peer)
{
	if (sess_open(&c->sess, session, peer) != 0)
		log_warn("srv",
		    "out of memory for a session's entry; its leases are "
		    "lost unnamed session=%u",
		    session);
	log_debug("srv", "session opened session=%u peer=%s", session,
	    peer != NULL && peer[0] != '\0' ? peer : "-");
}

/* Undoes the takes of the session's replies that still wait for the log:
 * they will not be delivered. Returns how many takes were undone. */
static uint32_t
undo_pending_takes(struct core *c, uint32_t session)
{
	uint32_t undone = 0;

	for (struct pending *p = c->pend_head; p != NULL; p = p->next) {
		if (p->ntakes == 0 || p->session != session)
			continue;
		undone += undo_takes(c, p->takes, p->ntakes);
		p->undone = true;
		p->ntakes = 0;
	}
	return undone;
}

/* Ends the leases a gone session held (records), each recording why.
 * Returns how many. */
static uint32_t
lose_session_leases(struct core *c, uint32_t session, const char *why)
{
	uint32_t n = 0;
	struct qrec r;
	uint64_t lsn;
	int rc;

	for (int i = 0; i < 1000000; i++) {
		rc = queue_decide_session_gone(
		    c->q, c->now, session, why, strlen(why), &r);
		if (rc != 0)
			break;
		rc = core_commit(c, &r, 0, &lsn);
		if (rc != 0) {
			log_warn("srv",
			    "cannot log the release of a session's tasks; "
			    "they return at their ttr session=%u error=\"%s\"",
			    session, sluice_strerror(rc));
			break;
		}
		n++;
	}
	return n;
}

bool
core_session_lost_ready(void *arg, uint64_t session)
{
	const struct core *c = arg;
	const struct sess *s;

	if (session > UINT32_MAX)
		return false;
	s = sess_find(&c->sess, (uint32_t)session);
	return s != NULL && s->lost_ready;
}

void
core_session_gone(struct core *c, uint32_t session)
{
	const struct sess *s = sess_find(&c->sess, session);
	char peer[FACE_PEER_MAX + 16], why[FACE_PEER_MAX + 40];

	/* The reserve holds a lost lease's reason of this length at most. */
	_Static_assert(sizeof(why) <= RESERVE_WHY_MAX,
	    "a reason the reserve "
	    "holds");
	uint32_t undone = 0, released = 0;

	if (s != NULL && s->peer[0] != '\0')
		snprintf(peer, sizeof(peer), "%s", s->peer);
	else
		snprintf(peer, sizeof(peer), "session-%u", session);
	/* the leader logs it; a follower holds no lease */
	if (!c->follower && !c->fenced) {
		snprintf(why, sizeof(why), "worker disconnected (%s)", peer);
		undone = undo_pending_takes(c, session);
		released = lose_session_leases(c, session, why);
	}
	log_debug("srv",
	    "session closed session=%u peer=%s leases_released=%u "
	    "takes_undone=%u",
	    session, peer, released, undone);
	sess_close(&c->sess, session);
}

struct stop_args {
	struct core *c;
	uint32_t released, undone;
};

static void
stop_session(struct sess *s, void *arg)
{
	struct stop_args *a = arg;
	char why[FACE_PEER_MAX + 40];

	_Static_assert(
	    sizeof(why) <= RESERVE_WHY_MAX, "a reason the reserve holds");
	snprintf(why, sizeof(why), "server stopped (lease of %s)",
	    s->peer[0] != '\0' ? s->peer : "an unnamed session");
	a->undone += undo_pending_takes(a->c, s->id);
	a->released += lose_session_leases(a->c, s->id, why);
}

void
core_stop_sessions(struct core *c)
{
	struct stop_args a = { c, 0, 0 };

	if (c->follower || c->fenced)
		return; /* the leader logs it; a follower holds no lease */
	sess_each(&c->sess, stop_session, &a);
	if (a.released > 0 || a.undone > 0)
		log_info("srv",
		    "the stop ends the session leases, as a disconnect "
		    "would leases_released=%u takes_undone=%u",
		    a.released, a.undone);
}

void
core_update_reservation(struct core *c)
{
	struct queue_stats st;
	struct reserve_counts n;

	if (queue_stats(c->q, c->now, &st) != 0)
		return;
	n.ready = st.ready;
	n.delayed = st.delayed;
	n.taken = st.taken;
	n.buried = st.buried;
	wal_set_reserved(c->wal, reserve_floor(&c->rsv, &n),
	    reserve_margin(&c->rsv, c->rsv_pool));
}

static int
recover_entry(void *arg, uint16_t type, const void *data, size_t len)
{
	struct core *c = arg;

	return queue_snapshot_load(c->q, type, data, len);
}

/* The rule sluice-log verify applies too (queue.h). */
static const char *
recover_snap_check(void *arg, uint64_t name_lsn, const struct snap_info *si)
{
	struct core *c = arg;

	return queue_snapshot_unusable(c->q, name_lsn, si->lsn);
}

/* The log's records to come: the id index sized once for them. */
static void
recover_expect(void *arg, uint64_t records)
{
	struct core *c = arg;

	queue_expect_tasks(c->q, records);
}

/* A damaged snapshot was loaded in part: start over, empty. */
static int
recover_reset(void *arg)
{
	struct core *c = arg;

	queue_clear(c->q);
	return 0;
}

static int
recover_record(const struct rec_hdr *h, const void *body, void *arg)
{
	struct core *c = arg;
	struct queue *q = c->q;
	struct qrec r;
	int rc;

	if (h->type == REC_EPOCH) {
		uint64_t nonce = h->len - REC_HDR_SIZE >= REC_EPOCH_BODY
		    ? le_load_u64((const uint8_t *)body + 16)
		    : 0;

		rc = epochs_add(&c->epochs, h->epoch, nonce, h->lsn);
		if (rc != 0)
			log_warn("recover",
			    "an epoch does not follow the epoch history "
			    "epoch=%" PRIu64 " lsn=%" PRIu64 " error=\"%s\"",
			    h->epoch, h->lsn, sluice_strerror(rc));
		return 0;
	}
	if (h->type >= REC_TYPE_LOG_MIN)
		return 0; /* the log's own records */
	rc = qrec_decode(h->type, body, h->len - REC_HDR_SIZE, &r);
	if (rc == 0)
		rc = queue_apply_decoded(q, h->lsn, h->time, &r);
	if (rc == 0 && r.type == QREC_PUTS)
		c->puts_extra += r.u.puts.n - 1;
	if (rc != 0)
		log_err("recover",
		    "a record does not apply lsn=%" PRIu64 " type=%s "
		    "error=\"%s\"; run 'sluice-log verify' on the data "
		    "directory",
		    h->lsn, qrec_type_name(h->type), sluice_strerror(rc));
	return rc;
}

void
core_release_sessions(struct core *c, const char *why)
{
	uint64_t lsn, n = 0;
	struct qrec r;

	while (queue_decide_restart(c->q, c->now, why, strlen(why), &r) == 0) {
		if (core_commit(c, &r, 0, &lsn) != 0)
			break;
		n++;
	}
	if (n > 0)
		log_info("srv",
		    "released the tasks of ended sessions (a restart or a "
		    "promotion ends them) tasks=%" PRIu64 " why=\"%s\"",
		    n, why);
}

/* Rebuilds the queue from the data directory (newest snapshot, then the
 * log) and opens the writer where the log ends. */
/* wal_set_own: a pad the log added goes to the followers with the
 * records around it. */
static void
note_own(void *arg, const struct rec_hdr *h, const void *body, size_t len)
{
	struct core *c = arg;

	if (c->repl_hook != NULL)
		c->repl_hook->note(c, h, body, len);
}

int
core_open_log(struct core *c, struct recover_result *res)
{
	const struct config *cfg = c->cfg;
	struct recover_ops ops = { recover_entry, recover_record, recover_reset,
		recover_snap_check, recover_expect };
	struct wal_config wc = { 0 };
	int rc;

	/* A snapshot killed with its server (or by it) left its file: no
	 * one will finish it. */
	{
		uint64_t bytes;
		size_t n;

		rc = snap_remove_unfinished(cfg->data_dir, &n, &bytes);
		if (rc != 0)
			log_warn("srv",
			    "cannot remove unfinished snapshots data=%s "
			    "error=\"%s\"",
			    cfg->data_dir, sluice_strerror(rc));
		else if (n > 0)
			log_info("srv",
			    "removed unfinished snapshots (a snapshot that "
			    "was stopped before it was written whole) "
			    "files=%zu bytes=%" PRIu64,
			    n, bytes);
	}
	rc = recover(cfg->data_dir, RECOVER_CUT, 0, &ops, c, res);
	if (rc == SLUICE_ECORRUPT) {
		log_err("srv",
		    "cannot start data=%s error=\"%s\"; run 'sluice-log "
		    "verify %s', then 'sluice-log repair %s' "
		    "(docs/operations.md)",
		    cfg->data_dir, sluice_strerror(rc), cfg->data_dir,
		    cfg->data_dir);
		return rc;
	}
	if (rc != 0) {
		log_err("srv", "cannot start data=%s error=\"%s\"",
		    cfg->data_dir, sluice_strerror(rc));
		return rc;
	}
	queue_expect_done(c->q); /* spares made ahead for it go */
	/* An epoch the history names but the log never got (a crash
	 * between the two writes) is forgotten. */
	rc = epochs_cut(&c->epochs, res->end.last_lsn);
	if (rc != 0)
		log_warn("srv", "cannot rewrite the epoch history error=\"%s\"",
		    sluice_strerror(rc));
	wc.dir = cfg->data_dir;
	wc.fsync = cfg->fsync;
	wc.interval_ms = cfg->fsync_ms;
	wc.commit = cfg->wal_commit;
	wc.direct_fsync_op = cfg->wal_fsync_op;
	wc.direct_adapt = cfg->wal_adapt;
	wc.inflight = cfg->wal_inflight;
	wc.seg_size = cfg->seg_size;
	wc.max_bytes = cfg->max_log_bytes;
	rc = wal_open(&wc, &res->end, &c->wal);
	if (rc != 0) {
		log_err("srv", "cannot open the log data=%s error=\"%s\"",
		    cfg->data_dir, sluice_strerror(rc));
		return rc;
	}
	/* the loop writes the durable mark after its replies (srv.c) */
	wal_mark_late(c->wal, true);
	wal_set_follower(c->wal, c->follower);
	wal_set_own(c->wal, note_own, c);
	bgsnap_recovered(c, res);
	c->recovery_ms = res->elapsed_ms;
	return 0;
}

int
core_reload(struct core *c)
{
	struct recover_result res;
	int rc;

	queue_clear(c->q);
	rc = core_open_log(c, &res);
	if (rc != 0)
		return rc;
	core_update_reservation(c);
	/* The outcomes a snapshot brought came with no queue_on_final: the
	 * waits for a result whose task ended meanwhile are answered now. */
	for (struct rwaiter *w = c->rwaits.all; w != NULL; w = w->anext) {
		struct queue_result r;

		if (queue_result(c->q, c->now, w->task->id, &r) != 0 || r.final)
			rwaits_wake(&c->rwaits, w->task->id);
	}
	log_info("srv", "state rebuilt data=%s lsn=%" PRIu64 " epoch=%" PRIu64,
	    c->cfg->data_dir, wal_last_lsn(c->wal), wal_epoch(c->wal));
	return 0;
}

static uint64_t
random_nonce(void)
{
	uint64_t n = 0;

	if (getrandom(&n, sizeof(n), 0) != sizeof(n))
		n = (uint64_t)clock_mono_ns() ^ ((uint64_t)getpid() << 32);
	return n;
}

void
core_set_follower(struct core *c, bool follower)
{
	c->follower = follower;
	if (c->wal != NULL)
		wal_set_follower(c->wal, follower);
}

int
core_new_epoch(struct core *c, uint64_t epoch)
{
	uint64_t nonce = random_nonce(), lsn = wal_last_lsn(c->wal) + 1;
	uint64_t prev = wal_epoch(c->wal);
	int rc;

	rc = epochs_add(&c->epochs, epoch, nonce, lsn);
	if (rc != 0)
		return rc;
	rc = wal_set_epoch(c->wal, epoch, nonce, c->now, &lsn);
	if (rc != 0) {
		epochs_cut(&c->epochs, lsn - 1);
		return rc;
	}
	c->hard_lsn = lsn;
	c->epoch_lsn = lsn;
	if (c->repl_hook != NULL) {
		uint8_t body[REC_EPOCH_BODY];
		struct rec_hdr h = { .type = REC_EPOCH,
			.lsn = lsn,
			.epoch = epoch,
			.time = c->now };

		le_store_u64(body, epoch);
		le_store_u64(body + 8, prev);
		le_store_u64(body + 16, nonce);
		c->repl_hook->note(c, &h, body, sizeof(body));
	}
	return 0;
}
