/* follow - a follower's side of replication (follow.h): starting and
 * stopping the link, the turn that drives it, what stats show of it, and
 * the change of role: promotion (by hand or by election), re-pointing at
 * another leader, a leader stepping down.
 *
 * The cycle: fetch (from our last LSN + 1, naming the epoch of our last
 * record) → the leader answers with records, "load a snapshot", or "cut
 * after LSN X" (follow_stream.c) → we append and apply the records, and
 * fetch again at once, while our writer syncs the batch; each time our
 * durable LSN moves, an ack tells the leader. The link's exchanges
 * complete on nng's threads (follow_link.c); every decision is taken here,
 * on the core thread. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <nng/nng.h>

#include "server/core/core.h"
#include "server/repl/follow.h"
#include "server/repl/follow_int.h"
#include "server/repl/lead.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/tlsfile.h"

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
	rc = follow_link_open(f, url, c->cfg->tls);
	if (rc != 0) {
		close(f->efd);
		free(f);
		return rc;
	}
	c->fol = f;
	core_set_follower(c, true);
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
	follow_link_close(f);
	follow_snap_abandon(f);
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
			follow_exchange_free(f->faio, &f->fsent);
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
				follow_on_snap_rep(c, f, m, mono_ms);
			else if (f->fop == REPLMSG_OP_FETCH && !f->snap)
				follow_on_fetch_rep(c, f, m, mono_ms);
			nng_msg_free(m);
		}
	}
	if (atomic_exchange(&f->adone, false)) {
		int rv = nng_aio_result(f->aaio);

		f->abusy = false;
		follow_exchange_free(f->aaio, &f->asent);
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
			follow_send_snap(f);
		else
			follow_send_fetch(c, f);
	}
	if (!f->abusy && f->contact != 0 && wal_durable_lsn(c->wal) > f->acked)
		follow_send_ack(c, f);
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
	core_set_follower(c, false);
	c->fenced = false;
	c->fenced_by = 0;
	rc = core_new_epoch(c, e);
	if (rc != 0)
		return rc;
	core_release_sessions(
	    c, "leader changed (lease of a session of the previous leader)");
	log_info("follow",
	    "promoted: this node leads epoch=%" PRIu64 " lsn=%" PRIu64, e,
	    wal_last_lsn(c->wal));
	*epoch = e;
	return 0;
}

void
follow_promote(struct core *c, struct face_ctx *ctx)
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
	core_set_follower(c, true);
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
follow_repoint(
    struct core *c, struct face_ctx *ctx, const char *url, size_t len)
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
		    "follow: cannot dial %s: %s", u, face_strerror(rc));
		return;
	}
	buf_reset(&c->out);
	msg_encode_rep(&c->out, &rep);
	core_reply(c, ctx);
}
