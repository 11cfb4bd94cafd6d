/* node - what a request asks of the node rather than of its queue: a
 * snapshot on demand (core/bgsnap.h), and the refusal of a write on a
 * node that does not take writes (a follower, a leader fenced by a
 * higher epoch or by its lapsed lease, a leader handing over), which
 * says why and, from a follower, where the leader is. (Promotion,
 * following and the cluster's ops are repl/'s and failover/'s.) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/core/bgsnap.h"
#include "server/core/core.h"
#include "server/failover/cluster.h"
#include "server/ops/ops_int.h"
#include "server/repl/follow.h"
#include "sluice.h"

void
ops_snapshot(struct core *c, struct face_ctx *ctx)
{
	struct snap_waiter *w = malloc(sizeof(*w));
	int rc;

	if (w == NULL) {
		core_reply_err(c, ctx, MSG_OP_SNAPSHOT, SLUICE_ENOMEM, NULL);
		return;
	}
	/* Waiting before the start: a start with nothing new since the
	 * last snapshot answers the waiters at once. */
	w->ctx = ctx;
	w->next = c->snap.waiters;
	c->snap.waiters = w;
	rc = bgsnap_busy(&c->snap) ? 0 : bgsnap_start(c);
	if (rc != 0 && c->snap.waiters == w) {
		/* A start that fails answers no waiter: still ours. */
		c->snap.waiters = w->next;
		free(w);
		core_reply_err(c, ctx, MSG_OP_SNAPSHOT, bgsnap_error(rc),
		    "snapshot: %s%s", sluice_strerror(rc),
		    bgsnap_error(rc) == SLUICE_ENOSPC
		        ? " (no room for it on the disk; the log is fine "
		          "and the node takes writes)"
		        : "");
	}
}

void
ops_refuse_write(struct core *c, struct face_ctx *ctx, uint8_t op)
{
	const char *leader = follow_leader_url(c);

	buf_reset(&c->out);
	if (c->follower) {
		char text[MSG_URL_MAX + 64];

		snprintf(text, sizeof(text), "not leader; the leader is %s",
		    leader[0] ? leader : "not known yet");
		msg_encode_err(&c->out, op, SLUICE_ENOTLEADER, text,
		    leader[0] ? leader : NULL);
	} else if (c->handing) {
		char text[160];

		snprintf(text, sizeof(text),
		    "not leader: handing the lead over to %s",
		    cluster_handover_to(c));
		msg_encode_err(&c->out, op, SLUICE_ENOTLEADER, text, NULL);
	} else if (c->fenced_by == 0) {
		msg_encode_err(&c->out, op, SLUICE_ENOTLEADER,
		    "not leader: this node's leader lease ran out; it takes "
		    "no writes until the election decides",
		    NULL);
	} else {
		char text[160];

		snprintf(text, sizeof(text),
		    "not leader: epoch %" PRIu64 " began on another node; "
		    "this one (epoch %" PRIu64 ") takes no writes",
		    c->fenced_by, wal_epoch(c->wal));
		msg_encode_err(&c->out, op, SLUICE_ENOTLEADER, text, NULL);
	}
	core_reply_local(c, ctx); /* a refusal writes nothing */
}
