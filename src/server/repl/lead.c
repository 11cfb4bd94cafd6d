/* lead - a leader's side of replication (lead.h): its interface to the
 * loop and the operations, and the hook through which the core, below
 * it, tells it of every record appended and asks what its followers hold
 * (core_repl_hook, registered by lead_open and removed by lead_close).
 *
 * The replication port is read by face/stream.c where it can, else by
 * nng's own socket; its events come here each turn (lead_handle): a
 * connection's open and close (lead_link.c), a request (lead_peer.c).
 * Everything here runs on the core thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/replmsg.h"
#include "server/core/core.h"
#include "server/core/gate.h"
#include "server/face/nng.h"
#include "server/face/stream.h"
#include "server/repl/catchup.h"
#include "server/repl/lead.h"
#include "server/repl/lead_int.h"
#include "sluice.h"
#include "util/clock.h"

/* The hook's functions run only while lead_open's registration holds:
 * c->repl is there. */

/* core_repl_hook.replicated_lsn */
static uint64_t
hook_replicated_lsn(const struct core *c, unsigned k)
{
	uint64_t top[PEERS_MAX];
	size_t n = 0;

	if (k == 0 || c->repl->npeers < k)
		return 0;
	for (const struct lead_peer *p = c->repl->peers; p != NULL; p = p->next)
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

/* core_repl_hook.needed_lsn */
static uint64_t
hook_needed_lsn(const struct core *c)
{
	uint64_t need = UINT64_MAX;

	for (const struct lead_peer *p = c->repl->peers; p != NULL; p = p->next)
		if (p->acked + 1 < need)
			need = p->acked + 1;
	return need;
}

static const struct core_repl_hook lead_hook = {
	.note = lead_recent_note,
	.replicated_lsn = hook_replicated_lsn,
	.needed_lsn = hook_needed_lsn,
};

/* ---- the interface ---------------------------------------------------- */

static bool
repl_session_authed(void *arg, uint32_t session)
{
	return lead_link_authed(arg, session);
}

/* The port: read by face/stream.c where it can (every bound of a client
 * connection, with REPL_PIPES_MAX connections, REPL_UNAUTH_MAX of them
 * not authenticated, no idle timeout: a follower may be quiet), else by
 * nng's socket with REPL_PIPES_MAX pipes and lead_link_sweep. Either way no
 * message over REPL_REQ_MAX is taken. */
static int
lead_listen(struct core *c, struct lead *rp, const char *url)
{
	const struct config *cfg = c->cfg;
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

	rc = events_new(&rp->events);
	if (rc != 0)
		return rc;
	if (!face_stream_serves(url)) {
		rc = face_nng_open(
		    &rp->nng, rp->events, url, REPL_REQ_MAX, cfg->tls);
		if (rc == 0)
			face_nng_set_max_pipes(rp->nng, REPL_PIPES_MAX);
		else
			events_free(rp->events);
		return rc;
	}
	rp->spc = (struct face_sp_config) { .events = rp->events,
		.max_msg = REPL_REQ_MAX,
		.auth_on = c->auth_on,
		.session_authed = repl_session_authed,
		.arg = c };
	rc = face_stream_open(&rp->fs, url, cfg->tls, &rp->spc, &lim);
	if (rc != 0) {
		events_free(rp->events);
		rp->events = NULL;
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
	rp->recent.cap = RECENT_CAP;
	rp->recent.data = malloc(RECENT_CAP);
	if (rp->recent.data == NULL) {
		catchup_io_close(rp->io);
		free(rp);
		return -ENOMEM;
	}
	lead_recent_clear(&rp->recent, wal_last_lsn(c->wal) + 1);
	buf_init(&rp->recs);
	buf_init(&rp->out);
	rc = lead_listen(c, rp, url);
	if (rc != 0) {
		catchup_io_close(rp->io);
		free(rp->recent.data);
		free(rp);
		return rc;
	}
	c->repl = rp;
	c->repl_hook = &lead_hook;
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
		lead_peer_drop(rp, rp->peers->session);
	while (rp->links != NULL) {
		gate_drop(c, rp->links->session, lead_answer_unknown);
		lead_link_close(rp, rp->links->session);
	}
	face_nng_stop(rp->nng);
	events_free(rp->events);
	face_nng_free(rp->nng);   /* after events_free: its events may be */
	face_stream_free(rp->fs); /* theirs */
	catchup_io_close(rp->io);
	free(rp->recent.data);
	free(rp->recent.off);
	buf_fini(&rp->recs);
	buf_fini(&rp->out);
	free(rp);
	c->repl = NULL;
	c->repl_hook = NULL;
}

int
lead_fd(const struct core *c)
{
	return c->repl != NULL ? events_fd(c->repl->events) : -1;
}

int
lead_io_fd(const struct core *c)
{
	return c->repl != NULL ? catchup_io_fd(c->repl->io) : -1;
}

void
lead_handle(struct core *c)
{
	struct event *ev, *next;

	if (c->repl == NULL)
		return;
	catchup_io_reap(c->repl->io, lead_peer_read_done, c);
	for (ev = events_drain(c->repl->events); ev != NULL; ev = next) {
		next = ev->next;
		switch (ev->kind) {
		case EVENT_REQUEST: {
			struct event_req q = event_take(ev);

			lead_peer_request(c, q.ctx, q.session, q.msg);
			nng_msg_free(q.msg);
			continue;
		}
		case EVENT_SESSION_OPEN:
			lead_link_open(c->repl, ev->session, ev->peer);
			break;
		case EVENT_SESSION_CLOSE:
			gate_drop(c, ev->session, lead_answer_unknown);
			lead_peer_drop(c->repl, ev->session);
			lead_link_close(c->repl, ev->session);
			break;
		case EVENT_WAKE: /* the HTTP face's; not posted here */
			break;
		}
		event_done(ev);
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
	lead_link_sweep(c, mono_ms);
	for (struct lead_peer *p = c->repl->peers; p != NULL; p = p->next) {
		if (p->ctx == NULL || lead_peer_send(c, p))
			continue;
		if (mono_ms >= p->deadline) {
			lead_fetch_rep_init(c, &r, REPLMSG_FETCH_RECORDS);
			buf_reset(&c->repl->out);
			replmsg_encode_fetch_rep(&c->repl->out, &r);
			lead_send(c->repl, p->ctx);
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
	for (const struct lead_peer *p = c->repl->peers; p != NULL; p = p->next)
		if (p->ctx != NULL && p->deadline < dl)
			dl = p->deadline;
	return dl;
}

size_t
lead_peers(const struct core *c, struct lead_peer_info *out, size_t max)
{
	uint64_t last = c->wal != NULL ? wal_last_lsn(c->wal) : 0;
	size_t n = 0;

	if (c->repl == NULL)
		return 0;
	for (const struct lead_peer *p = c->repl->peers; p != NULL && n < max;
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
		    lead_recent_time(&c->repl->recent, p->acked + 1, &t) &&
		    c->now > t)
			i->lag_ms = (uint64_t)(c->now - t);
	}
	return n;
}

void
lead_demote(struct core *c)
{
	if (c->repl == NULL)
		return;
	for (struct lead_peer *p = c->repl->peers; p != NULL; p = p->next) {
		if (p->ctx != NULL) {
			lead_send_err(c, p->ctx, REPLMSG_OP_FETCH,
			    SLUICE_ENOTLEADER, "this node stopped leading");
			p->ctx = NULL;
		}
		p->acked = 0;
	}
	lead_recent_clear(&c->repl->recent, wal_last_lsn(c->wal) + 1);
}
